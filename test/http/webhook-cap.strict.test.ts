import { describe, expect, it } from "vitest";
import { defaultMaxWebhooks } from "#shared/domain/tenants/plans";
import { keys } from "#shared/store/keys";
import { newTenant } from "#test/support/local-api";
import { strictDynamoDb } from "#test/support/strict-dynamodb";
import { createsAtCapRace, storeInsertsAtCapRace } from "#test/support/webhook-cap";

/**
 * The webhook cap under production DynamoDB semantics (test/support/strict-dynamodb.ts): the
 * creates' transactions all name the organization's count item, so DynamoDB cancels the ones that
 * overlap (TransactionConflict); they are retried and re-evaluate the count's condition, and exactly
 * one create fits.
 */
describe("webhook cap (strict DynamoDB semantics)", () => {
  it("of 12 simultaneous creates at cap - 1 exactly one is 201; no two committed creates overlapped on the count item", async () => {
    const { organizationId, api } = newTenant();
    const race = await createsAtCapRace(api, organizationId, 12);
    expect(race).toMatchObject({ created: 1, refused: 11, listed: defaultMaxWebhooks, counted: defaultMaxWebhooks });

    // The transactions that named this organization's count item (the log names items by their key values).
    const countKey = keys.webhookCount(organizationId);
    const mine = strictDynamoDb()
      .transactionLog()
      .filter((record) =>
        record.items.some((item) => item.includes(JSON.stringify(countKey.PK)) && item.includes(JSON.stringify(countKey.SK))),
      );
    expect(mine.length).toBeGreaterThanOrEqual(defaultMaxWebhooks);
    const committed = mine.filter((record) => record.outcome === "committed");
    for (const [index, record] of committed.entries()) {
      for (const other of committed.slice(index + 1)) {
        const overlap =
          record.arrivedAt < (other.releasedAt ?? Number.POSITIVE_INFINITY) &&
          other.arrivedAt < (record.releasedAt ?? Number.POSITIVE_INFINITY);
        expect(overlap, `transactions ${record.id} and ${other.id} both committed while overlapping`).toBe(false);
      }
    }
  });

  it("with every create's read of the count before any write, the overlapping transactions conflict, are retried, and exactly one fits", async () => {
    const semantics = strictDynamoDb();
    semantics.resetCounters();
    const race = await storeInsertsAtCapRace(newTenant().organizationId, 12);
    expect(race).toEqual({ inserted: 1, listed: defaultMaxWebhooks, counted: defaultMaxWebhooks });
    // The race did reach DynamoDB's conflict rule (the transactions arrived together), and came out exact.
    expect(semantics.counters().transactionConflicts).toBeGreaterThan(0);
  });
});
