import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { startDynamoDbLocal } from "#local/emulators";

/**
 * DynamoDB Local has no authentication and no bind option; the local runtime starts it through a
 * launcher that binds it to the loopback interface (local/dynamodb/LoopbackDynamoDbLocal.java), so
 * tenant records and every table stay out of reach of other hosts on the network.
 */
const externalAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((address) => address && !address.internal && address.family === "IPv4")?.address;

const answers = async (url: string) => {
  try {
    await fetch(url, { signal: AbortSignal.timeout(3000) });
    return true;
  } catch {
    return false;
  }
};

describe("DynamoDB Local of the local runtime", () => {
  it("answers on 127.0.0.1 and not on the machine's network address", async () => {
    const lan = externalAddress();
    expect(lan, "this check needs a non-loopback IPv4 interface").toBeDefined();
    const emulator = await startDynamoDbLocal();
    try {
      const port = new URL(emulator.endpoint).port;
      expect(await answers(`http://127.0.0.1:${port}/`)).toBe(true);
      expect(await answers(`http://${lan}:${port}/`)).toBe(false);
    } finally {
      await emulator.stop();
    }
  }, 120_000);
});
