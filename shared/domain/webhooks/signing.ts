import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"): the
 * secret is `whsec_<base64 of 24–64 random bytes>`; the signed content is `<webhook-id>.<webhook-timestamp>.<body>`;
 * `webhook-signature` is a space-separated list of `v1,<base64 HMAC-SHA256>` (one entry per active
 * secret). Receivers verify with any Standard Webhooks library and reject timestamps older than
 * their tolerance (the libraries use 5 minutes), which defeats replays.
 */
export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** The three headers of one delivery attempt; `at` is the attempt's time (a retry signs anew). */
export function signDelivery(secret: string, messageId: string, at: Date, body: string): SignedHeaders {
  const timestamp = Math.floor(at.getTime() / 1000).toString();
  const signature = createHmac("sha256", secretKey(secret)).update(`${messageId}.${timestamp}.${body}`).digest("base64");
  return { "webhook-id": messageId, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

/** Our own check (the tests also verify with the `standardwebhooks` package): constant time, any v1 entry, ±tolerance. */
export function verifyDelivery(secret: string, headers: SignedHeaders, body: string, now: Date, toleranceSeconds = 300): boolean {
  const timestamp = Number(headers["webhook-timestamp"]);
  if (!Number.isInteger(timestamp) || Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(
    signDelivery(secret, headers["webhook-id"], new Date(timestamp * 1000), body)["webhook-signature"].slice(3),
    "base64",
  );
  return headers["webhook-signature"].split(" ").some((entry) => {
    const [version, value = ""] = entry.split(",");
    const sent = Buffer.from(value, "base64");
    return version === "v1" && sent.length === expected.length && timingSafeEqual(sent, expected);
  });
}
