import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { type DataType, type Field, fieldSchema } from "#shared/domain/data-types/schema";
import {
  hiddenFieldsFor,
  isReportedHit,
  MAX_TOKENS_PER_RECORD,
  parseSearch,
  relationLinks,
  searchTokens,
  uniqueGuards,
  wordsOf,
} from "#shared/domain/records/rules";
import type { StoredRecord } from "#shared/domain/records/schema";
import { buildView } from "#shared/domain/records/view";
import { keys } from "#shared/store/keys";

const field = (attributes: Partial<Field> & Pick<Field, "id" | "type">): Field =>
  fieldSchema.parse({ title: attributes.id, required: false, ...attributes });

const TYPE_ID = "0123456789abcdef01234567";
function dataType(fields: Field[], extra: Partial<DataType> = {}): DataType {
  return {
    _id: TYPE_ID,
    name: "T",
    fields: [field({ id: "dataId", type: "title", required: true, unique: true, searchable: true }), ...fields],
    limitUser: false,
    commonData: false,
    uniqueTogether: [],
    extends: null,
    provider: "internal",
    providerConfig: null,
    locked: false,
    titleRule: "words",
    createdBy: "u",
    organizationId: "o",
    createdTime: "2026-01-01 00:00:00",
    updatedTime: "2026-01-01 00:00:00",
    ...extra,
  };
}

const type = dataType(
  [
    field({ id: "email", type: "text", unique: true, searchable: true }),
    field({ id: "tags", type: "multiOption", optionData: ["a", "b", "c"] }),
    field({ id: "vip", type: "boolean" }),
    field({ id: "city", type: "text", searchable: true }),
    field({ id: "at", type: "dateTime", unique: true }),
    field({ id: "parent", type: "relation", relation: { kind: "belongsTo", targetKind: "dataType", target: TYPE_ID } }),
    field({ id: "owner", type: "relation", relation: { kind: "belongsTo", targetKind: "standard", target: "user" } }),
  ],
  {
    uniqueTogether: [
      ["tags", "vip"],
      ["city", "email"],
    ],
  },
);

describe("Records: uniqueness guards", () => {
  it("compares multi-value fields as sets, counts an absent boolean as false and scopes by hub", () => {
    const first = uniqueGuards(type, { tags: ["b", "a"] }, "hub1");
    const second = uniqueGuards(type, { tags: ["a", "b"], vip: false }, "hub1");
    expect(first).toEqual(second);
    expect(first).toEqual([{ name: "+tags+vip", scope: "hub1", value: JSON.stringify(['["a","b"]', "false"]) }]);
    expect(uniqueGuards(type, { tags: ["a", "b"], vip: true }, "hub1")).not.toEqual(first);
    expect(uniqueGuards(type, { tags: ["a", "b"] }, "hub2")[0]?.scope).toBe("hub2");
  });

  it("skips a combination with an empty member and empty unique fields", () => {
    expect(uniqueGuards(type, { city: "Jakarta" }, "*")).toEqual([]);
    expect(uniqueGuards(type, { tags: [] }, "*")).toEqual([]);
  });

  it("guards unique fields (dateTime by instant) and combinations, never the title", () => {
    const a = uniqueGuards(type, { email: "x@y.z", city: "Jakarta", at: "2026-01-01T07:00:00+07:00" }, "h");
    const b = uniqueGuards(type, { email: "x@y.z", city: "Jakarta", at: "2026-01-01 00:00:00" }, "h");
    expect(a).toEqual(b);
    expect(a.map((guard) => guard.name).sort()).toEqual(["+city+email", "at", "email"]);
  });

  it("hashes long values so the guard key stays small", () => {
    const [guard] = uniqueGuards(type, { email: "x".repeat(5000) }, "h");
    expect(guard?.value).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe("Records: search tokens and q semantics", () => {
  it("splits words on anything but letters and digits, ignoring case and accents", () => {
    expect(wordsOf("Café-Ünïcode  JL.Sudirman_5")).toEqual(["cafe", "unicode", "jl", "sudirman", "5"]);
  });

  it("indexes the title and searchable fields only, at most 20 distinct words", () => {
    const tokens = searchTokens(type, "Alpha Beta", { email: "a@b.c", city: "alpha town", owner: "zzz" });
    expect([...tokens.keys()]).toEqual(["alpha", "beta", "a", "b", "c", "town"]);
    expect([...(tokens.get("alpha") ?? [])]).toEqual(["dataId", "city"]);
    const many = searchTokens(type, Array.from({ length: 30 }, (_, i) => `w${i}`).join(" "), {});
    expect(many.size).toBe(MAX_TOKENS_PER_RECORD);
  });

  it("reads the index by the longest q word", () => {
    expect(parseSearch("jl SUDIRMAN")).toEqual({ words: ["jl", "sudirman"], indexWord: "sudirman" });
    expect(parseSearch(" -- ")).toBeUndefined();
  });

  it("reports a record once, at its first word starting with the index word", () => {
    const tokens = searchTokens(type, "Alpine Alpha", {});
    const search = parseSearch("alp");
    if (!search) throw new Error("no search");
    expect(isReportedHit(tokens, search, "alpha", new Set())).toBe(true);
    expect(isReportedHit(tokens, search, "alpine", new Set())).toBe(false);
  });

  it("needs every q word to start a word of the record", () => {
    const tokens = searchTokens(type, "Alpha Beta", {});
    const both = parseSearch("bet alp");
    const missing = parseSearch("alpha gamma");
    if (!both || !missing) throw new Error("no search");
    expect(both.indexWord).toBe("bet");
    expect(isReportedHit(tokens, both, "beta", new Set())).toBe(true);
    expect(isReportedHit(tokens, missing, "alpha", new Set())).toBe(false);
  });

  it("does not match through a field hidden from the caller", () => {
    const tokens = searchTokens(type, "Plain", { city: "Secretville" });
    const search = parseSearch("secret");
    if (!search) throw new Error("no search");
    expect(isReportedHit(tokens, search, "secretville", new Set())).toBe(true);
    expect(isReportedHit(tokens, search, "secretville", new Set(["city"]))).toBe(false);
  });
});

describe("Records: relation links, hidden fields, view", () => {
  it("links only relations to data type records", () => {
    expect(relationLinks(type, { parent: "aaaaaaaaaaaaaaaaaaaaaaaa", owner: "u1" })).toEqual([
      { fieldId: "parent", targetId: "aaaaaaaaaaaaaaaaaaaaaaaa" },
    ]);
  });

  const caller = (permissionDetails: Caller["permissionDetails"]): Caller => ({
    userId: "u",
    organizationId: "o",
    hubIds: [],
    permissions: new Set(),
    permissionDetails,
  });

  it("collects view/data hiddenFields of this type (or of every type) and never hides _id or dataId", () => {
    const hidden = hiddenFieldsFor(
      caller([
        { permissionName: "view/data", dataTypeId: TYPE_ID, hiddenFields: ["email", "dataId"] },
        { permissionName: "view/data", hiddenFields: ["city"] },
        { permissionName: "view/data", dataTypeId: "ffffffffffffffffffffffff", hiddenFields: ["vip"] },
        { permissionName: "edit/data", dataTypeId: TYPE_ID, hiddenFields: ["tags"] },
      ]),
      TYPE_ID,
    );
    expect([...hidden].sort()).toEqual(["city", "email"]);
  });

  const record: StoredRecord = {
    _id: "aaaaaaaaaaaaaaaaaaaaaaaa",
    dataId: "R1",
    dataTypeId: TYPE_ID,
    hubId: "h1",
    values: { city: "Jakarta", email: "x@y.z", gone: "field no longer in the type" },
    index: { guards: [], tokens: [], links: [] },
    organizationId: "o",
    createdBy: "u",
    updatedBy: "u",
    createdTime: "2026-01-01 00:00:00",
    updatedTime: "2026-01-01 00:00:00",
  };

  it("orders the view like the spec, in the type's field order, without values of removed fields", () => {
    const view = buildView(type, record, {}, { hidden: new Set() });
    expect(Object.keys(view)).toEqual([
      "_id",
      "dataId",
      "dataTypeId",
      "data_type",
      "hubId",
      "email",
      "city",
      "organizationId",
      "createdBy",
      "createdTime",
      "updatedTime",
    ]);
  });

  it("projects to fields plus _id and dataId, and leaves hidden fields out", () => {
    expect(buildView(type, record, {}, { hidden: new Set(), fields: ["city"] })).toEqual({
      _id: record._id,
      dataId: "R1",
      city: "Jakarta",
    });
    expect(buildView(type, record, {}, { hidden: new Set(["email"]) })).not.toHaveProperty("email");
  });
});

describe("Records: keys", () => {
  it("starts every record key with the organization and escapes user text", () => {
    const built = [
      keys.recordsByDataId("o1", "x"),
      keys.recordRef("o1", "r").PK,
      keys.organizationTokenPartition("o1", "t"),
      keys.searchToken("o1", "t", "d", "*", "x").PK,
      keys.searchRepairMarker("o1", "r").PK,
      keys.relationLinkPartition("o1", "r"),
    ];
    for (const key of built) expect(key.startsWith("ORG#o1#")).toBe(true);
    expect(keys.recordsByDataId("o", "a#b")).toBe("ORG#o#DATAID#a%23b");
    // Token items never share the record partition (the data type delete looks for records there).
    expect(keys.searchToken("o", "t", "d", "*", "x").PK).not.toBe(keys.recordPartition("o", "d"));
    // The token's key names the record's key with user text escaped: a dataId cannot forge a segment.
    expect(keys.searchToken("o", "t", "d", "h#1", "a#b").SK).toBe("t#d#h%231#a%23b");
  });
});
