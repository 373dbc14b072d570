import { describe, expect, it } from "vitest";
import { type DataType, type Field, fieldSchema } from "#shared/domain/data-types/schema";
import { checkFieldValue, checkRecordValues, decimalPlaces, defaultValueOf, titleProblem } from "#shared/domain/records/values";
import { significantDigits, storableNumberProblem } from "#shared/domain/schemas";

const field = (attributes: Partial<Field> & Pick<Field, "id" | "type">): Field =>
  fieldSchema.parse({ title: attributes.id, required: false, ...attributes });

function dataType(fields: Field[], extra: Partial<DataType> = {}): DataType {
  return {
    _id: "0123456789abcdef01234567",
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

const issuesOf = (type: DataType, sent: Record<string, unknown>) => checkRecordValues(type, sent).issues.map((issue) => issue.field);

describe("Records: title (dataId)", () => {
  it.each([
    ["Alpha", "words", undefined],
    ["Jl Sudirman 5", "words", undefined],
    ["a-b_c", "words", undefined],
    ["Café Ünïcode", "words", undefined],
    ["x".repeat(200), "words", undefined],
  ] as const)("accepts %j (%s)", (dataId, rule, expected) => {
    expect(titleProblem(dataId, rule)).toBe(expected);
  });

  it.each([
    [undefined, "words", "required"],
    ["", "words", "required"],
    [42, "words", "string"],
    [" lead", "words", "letters"],
    ["trail ", "words", "letters"],
    ["two  spaces", "words", "letters"],
    ["semi;colon", "words", "letters"],
    ["dot.", "words", "letters"],
    ["x".repeat(201), "words", "200"],
    ["has space", "no-space", "earlier version"],
  ] as const)("rejects %j (%s)", (dataId, rule, fragment) => {
    expect(titleProblem(dataId, rule)).toContain(fragment);
  });

  it("accepts a no-space title on a legacy type", () => {
    expect(titleProblem("LEGACY-1_a", "no-space")).toBeUndefined();
  });
});

describe("Records: value types", () => {
  const cases: Array<[string, Field, unknown, unknown]> = [
    ["text", field({ id: "f", type: "text" }), "hello", "hello"],
    ["number", field({ id: "f", type: "number" }), 1.5, 1.5],
    ["number with decimals", field({ id: "f", type: "number", validations: { decimals: 2 } }), 1.25, 1.25],
    ["number zero", field({ id: "f", type: "number" }), 0, 0],
    ["number at the largest safe integer", field({ id: "f", type: "number" }), -9007199254740991, -9007199254740991],
    ["number at DynamoDB's lower limit", field({ id: "f", type: "number" }), 1e-130, 1e-130],
    ["boolean", field({ id: "f", type: "boolean" }), false, false],
    ["option", field({ id: "f", type: "option", optionData: ["a", "b"] }), "b", "b"],
    ["multiOption", field({ id: "f", type: "multiOption", optionData: ["a", "b", "c"] }), ["c", "a"], ["c", "a"]],
    ["date", field({ id: "f", type: "date" }), "2026-02-28", "2026-02-28"],
    // dateTime values accept what validation bounds accept and are stored as YYYY-MM-DD HH:mm:ss UTC.
    ["dateTime", field({ id: "f", type: "dateTime" }), "2026-02-28 10:00:00", "2026-02-28 10:00:00"],
    ["dateTime ISO with offset", field({ id: "f", type: "dateTime" }), "2026-02-28T10:00:00+07:00", "2026-02-28 03:00:00"],
    ["dateTime ISO Z", field({ id: "f", type: "dateTime" }), "2026-02-28T10:00Z", "2026-02-28 10:00:00"],
    ["dateTime without seconds", field({ id: "f", type: "dateTime" }), "2026-02-28 10:00", "2026-02-28 10:00:00"],
    ["dateTime ISO without offset (UTC)", field({ id: "f", type: "dateTime" }), "2026-02-28T10:00:00", "2026-02-28 10:00:00"],
    ["dateTime with fractional seconds (dropped)", field({ id: "f", type: "dateTime" }), "2026-02-28T10:00:05.750Z", "2026-02-28 10:00:05"],
    [
      "dateTime range typed in two forms",
      field({ id: "f", type: "dateTime", inputType: "range" }),
      { from: "2026-12-01 08:00:00", to: "2026-12-01T10:00:00Z" },
      { from: "2026-12-01 08:00:00", to: "2026-12-01 10:00:00" },
    ],
    ["time H:i", field({ id: "f", type: "time" }), "07:30", "07:30"],
    ["time H:i:s", field({ id: "f", type: "time" }), "23:59:59", "23:59:59"],
    [
      "date range",
      field({ id: "f", type: "date", inputType: "range" }),
      { from: "2026-01-01", to: "2026-01-01" },
      { from: "2026-01-01", to: "2026-01-01" },
    ],
    ["single date on a range field", field({ id: "f", type: "date", inputType: "range" }), "2026-01-01", "2026-01-01"],
    ["time range", field({ id: "f", type: "time", inputType: "range" }), { from: "08:00", to: "17:00" }, { from: "08:00", to: "17:00" }],
    ["geolocation object", field({ id: "f", type: "geolocation" }), { lat: -6.2, lng: 106.8 }, { lat: -6.2, lng: 106.8 }],
    ["geolocation string", field({ id: "f", type: "geolocation" }), "-6.2, 106.8", { lat: -6.2, lng: 106.8 }],
    ["geolocation bounds", field({ id: "f", type: "geolocation" }), { lat: 90, lng: -180 }, { lat: 90, lng: -180 }],
    ["phone with spaces and dashes", field({ id: "f", type: "phoneNumber" }), "+62 812-3456-789", "+628123456789"],
    ["phone 7 digits", field({ id: "f", type: "phoneNumber" }), "+1234567", "+1234567"],
    [
      "belongsTo",
      field({ id: "f", type: "relation", relation: { kind: "belongsTo", targetKind: "dataType", target: "0123456789abcdef01234567" } }),
      "aaaaaaaaaaaaaaaaaaaaaaaa",
      "aaaaaaaaaaaaaaaaaaaaaaaa",
    ],
    [
      "belongsToMany",
      field({ id: "f", type: "relation", relation: { kind: "belongsToMany", targetKind: "dataType", target: "0123456789abcdef01234567" } }),
      ["aaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbb"],
      ["aaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbb"],
    ],
    [
      "standard user relation (any id)",
      field({ id: "f", type: "relation", relation: { kind: "belongsTo", targetKind: "standard", target: "user" } }),
      "user-7",
      "user-7",
    ],
  ];
  it.each(cases)("accepts %s", (_, f, value, stored) => {
    expect(checkFieldValue(f, value)).toEqual({ ok: true, value: stored });
  });

  const rejected: Array<[string, Field, unknown, string]> = [
    ["text not a string", field({ id: "f", type: "text" }), 5, "string"],
    ["text too long", field({ id: "f", type: "text" }), "x".repeat(10_001), "10000"],
    ["number as string", field({ id: "f", type: "number" }), "5", "number"],
    ["number NaN-like", field({ id: "f", type: "number" }), Number.POSITIVE_INFINITY, "finite"],
    ["number too large for DynamoDB", field({ id: "f", type: "number" }), 1e200, "9007199254740991"],
    ["number at DynamoDB's upper limit", field({ id: "f", type: "number" }), 1e126, "9007199254740991"],
    ["number beyond the document client's safe integers", field({ id: "f", type: "number" }), 9007199254740992, "9007199254740991"],
    ["negative number too large for DynamoDB", field({ id: "f", type: "number" }), -1.2345678901234567e300, "9007199254740991"],
    ["number too small for DynamoDB", field({ id: "f", type: "number" }), 1e-200, "1e-130"],
    ["negative number too small for DynamoDB", field({ id: "f", type: "number" }), -5e-131, "1e-130"],
    ["too many decimals", field({ id: "f", type: "number", validations: { decimals: 1 } }), 1.25, "decimal"],
    ["decimals 0", field({ id: "f", type: "number", validations: { decimals: 0 } }), 1.5, "decimal"],
    ["boolean as string", field({ id: "f", type: "boolean" }), "true", "true or false"],
    ["option not listed", field({ id: "f", type: "option", optionData: ["a"] }), "z", "one of"],
    ["multiOption not an array", field({ id: "f", type: "multiOption", optionData: ["a"] }), "a", "array"],
    ["multiOption unknown", field({ id: "f", type: "multiOption", optionData: ["a"] }), ["a", "z"], "not one of"],
    [
      "multiOption item nested 5,000 arrays deep",
      field({ id: "f", type: "multiOption", optionData: ["a"] }),
      [Array.from({ length: 5000 }).reduce<unknown>((inner) => [inner], "a")],
      "an array is not one of",
    ],
    ["multiOption duplicate", field({ id: "f", type: "multiOption", optionData: ["a", "b"] }), ["a", "a"], "distinct"],
    [
      "multiOption below minSelected",
      field({ id: "f", type: "multiOption", optionData: ["a", "b", "c"], validations: { minSelected: 2 } }),
      ["a"],
      "at least 2",
    ],
    [
      "multiOption above maxSelected",
      field({ id: "f", type: "multiOption", optionData: ["a", "b", "c"], validations: { maxSelected: 1 } }),
      ["a", "b"],
      "at most 1",
    ],
    ["date format", field({ id: "f", type: "date" }), "28/02/2026", "YYYY-MM-DD"],
    ["date impossible", field({ id: "f", type: "date" }), "2026-02-30", "YYYY-MM-DD"],
    ["dateTime as a date", field({ id: "f", type: "dateTime" }), "2026-02-28", "date-time"],
    ["dateTime impossible", field({ id: "f", type: "dateTime" }), "2026-02-30 10:00", "date-time"],
    ["time 24:00", field({ id: "f", type: "time" }), "24:00", "HH:mm"],
    ["time with letters", field({ id: "f", type: "time" }), "7am", "HH:mm"],
    ["range without inputType range", field({ id: "f", type: "date" }), { from: "2026-01-01", to: "2026-01-02" }, "inputType range"],
    [
      "range from after to",
      field({ id: "f", type: "date", inputType: "range" }),
      { from: "2026-01-02", to: "2026-01-01" },
      "from must not be after to",
    ],
    ["range bad end", field({ id: "f", type: "time", inputType: "range" }), { from: "08:00", to: "25:00" }, "to must be"],
    [
      "range extra key",
      field({ id: "f", type: "date", inputType: "range" }),
      { from: "2026-01-01", to: "2026-01-02", at: 1 },
      "{ from, to }",
    ],
    ["geolocation lat out of range", field({ id: "f", type: "geolocation" }), { lat: 91, lng: 0 }, "lat"],
    ["geolocation lng out of range", field({ id: "f", type: "geolocation" }), "0,181", "lng"],
    ["geolocation text", field({ id: "f", type: "geolocation" }), "north", "lat,lng"],
    ["geolocation extra key", field({ id: "f", type: "geolocation" }), { lat: 1, lng: 1, alt: 3 }, "lat, lng"],
    ["phone without +", field({ id: "f", type: "phoneNumber" }), "0812345678", "+"],
    ["phone too short", field({ id: "f", type: "phoneNumber" }), "+123456", "7 to 15"],
    ["phone too long", field({ id: "f", type: "phoneNumber" }), "+1234567890123456", "7 to 15"],
    ["phone letters", field({ id: "f", type: "phoneNumber" }), "+62abc45678", "7 to 15"],
    [
      "belongsTo not an ObjectId",
      field({ id: "f", type: "relation", relation: { kind: "belongsTo", targetKind: "dataType", target: "0123456789abcdef01234567" } }),
      "nope",
      "24-character",
    ],
    [
      "belongsToMany not an array",
      field({ id: "f", type: "relation", relation: { kind: "belongsToMany", targetKind: "dataType", target: "0123456789abcdef01234567" } }),
      "aaaaaaaaaaaaaaaaaaaaaaaa",
      "array",
    ],
    [
      "belongsToMany duplicates",
      field({ id: "f", type: "relation", relation: { kind: "belongsToMany", targetKind: "dataType", target: "0123456789abcdef01234567" } }),
      ["aaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaa"],
      "distinct",
    ],
    [
      "belongsToMany above 20 ids",
      field({ id: "f", type: "relation", relation: { kind: "belongsToMany", targetKind: "dataType", target: "0123456789abcdef01234567" } }),
      Array.from({ length: 21 }, (_, i) => i.toString(16).padStart(24, "0")),
      "at most 20",
    ],
    [
      "vehicle relation not an ObjectId",
      field({ id: "f", type: "relation", relation: { kind: "belongsTo", targetKind: "standard", target: "vehicle" } }),
      "van-1",
      "24-character",
    ],
  ];
  it.each(rejected)("rejects %s", (_, f, value, fragment) => {
    const checked = checkFieldValue(f, value);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? "" : checked.problem).toContain(fragment);
  });

  it("counts significant digits and rejects more than 38", () => {
    expect([
      significantDigits(0.0012),
      significantDigits(1.2345678901234567e300),
      significantDigits(120),
      significantDigits(-1e-7),
    ]).toEqual([2, 17, 2, 1]);
    // JSON numbers parse to doubles (≤ 17 significant digits), so this guards other number sources.
    expect(storableNumberProblem(Number("1.23456789012345678901234567890123456789"))).toBeUndefined();
  });

  it("counts decimal places of plain and exponent numbers", () => {
    expect([decimalPlaces(1), decimalPlaces(1.5), decimalPlaces(0.125), decimalPlaces(1e-7), decimalPlaces(1e21)]).toEqual([0, 1, 3, 7, 0]);
  });
});

describe("Records: required, default, unknown and read-only keys", () => {
  const type = dataType([
    field({ id: "name", type: "text", required: true }),
    field({ id: "count", type: "number", default: "3" }),
    field({ id: "active", type: "boolean", default: "true" }),
    field({ id: "tags", type: "multiOption", optionData: ["a", "b"], default: "a,b" }),
    field({ id: "kind", type: "option", optionData: ["x"], default: "bogus" }),
    field({
      id: "children",
      type: "relation",
      relation: { kind: "hasMany", targetKind: "dataType", target: "0123456789abcdef01234567", via: "parent" },
    }),
  ]);

  it("reports every rule a number breaks in one answer (decimals and max)", () => {
    const measured = dataType([field({ id: "n", type: "number", validations: { max: 10, decimals: 0 } })]);
    expect(checkRecordValues(measured, { n: 12.5 }).issues).toEqual([
      { field: "n", message: expect.stringContaining("decimal") },
      { field: "n", message: expect.stringContaining("at most 10") },
    ]);
  });

  it.each([
    [{ lat: 1e-200, lng: 1 }, "1e-130"],
    [{ lat: 1, lng: 5e-324 }, "1e-130"],
    [`0.${"0".repeat(199)}1,1`, "1e-130"],
  ])("refuses a geolocation the store cannot keep: %j", (value, fragment) => {
    const located = dataType([field({ id: "at", type: "geolocation" })]);
    expect(checkRecordValues(located, { at: value }).issues).toEqual([{ field: "at", message: expect.stringContaining(fragment) }]);
  });

  it("ignores a sent hasMany value (server-set: resolved on read), storing nothing for it", () => {
    const checked = checkRecordValues(type, { name: "n", kind: "x", children: ["aaaaaaaaaaaaaaaaaaaaaaaa"] });
    expect(checked.issues).toEqual([]);
    expect(checked.values).not.toHaveProperty("children");
  });

  it("applies defaults to absent values and names an invalid default", () => {
    const checked = checkRecordValues(type, { name: "n" });
    expect(checked.values).toEqual({ name: "n", count: 3, active: true, tags: ["a", "b"] });
    expect(checked.issues).toEqual([{ field: "kind", message: expect.stringContaining("default") }]);
  });

  it.each([
    ["missing required", {}, "name"],
    ["empty string required", { name: "" }, "name"],
    ["null required", { name: null }, "name"],
    ["unknown key", { name: "n", kind: "x", color: "red" }, "color"],
    ["title sent as a custom value", { name: "n", kind: "x", dataId: "x" }, "dataId"],
  ])("rejects %s", (_, sent, fieldId) => {
    expect(issuesOf(type, sent)).toContain(fieldId);
  });

  it.each([
    '{"name":"n","kind":"x","constructor":"c"}',
    '{"name":"n","kind":"x","toString":"t"}',
    '{"name":"n","kind":"x","__proto__":{"a":1}}',
  ])("reports prototype member names as unknown keys: %s", (json) => {
    const sent = JSON.parse(json) as Record<string, unknown>;
    const key = Object.keys(sent)[2] as string;
    expect(checkRecordValues(type, sent).issues).toEqual([{ field: key, message: expect.stringContaining("unknown field") }]);
  });

  it("never reads an inherited member for a field whose id is a prototype member name", () => {
    const odd = dataType([
      field({ id: "constructor", type: "text" }),
      field({ id: "toString", type: "number", validations: { min: { ref: "constructor" } } }),
    ]);
    expect(checkRecordValues(odd, {})).toEqual({ values: {}, issues: [] });
    expect(checkRecordValues(odd, { constructor: "c", toString: 2 })).toEqual({ values: { constructor: "c", toString: 2 }, issues: [] });
  });

  it("reads a multiOption default written as JSON", () => {
    expect(defaultValueOf(field({ id: "m", type: "multiOption", optionData: ["a"], default: '["a"]' }))).toEqual(["a"]);
  });
});

describe("Records: min/max validations", () => {
  const type = dataType([
    field({ id: "qty", type: "number", validations: { min: 1, max: 10 } }),
    field({ id: "start", type: "date", validations: { min: "2026-01-01", max: "2026-12-31", minInclusive: false } }),
    field({ id: "end", type: "date", validations: { min: { ref: "start" }, maxInclusive: false, max: "2027-01-01" } }),
    field({ id: "open", type: "time", inputType: "range", validations: { min: "06:00", max: "22:00" } }),
    field({ id: "at", type: "dateTime", validations: { min: "2026-01-01 00:00:00" } }),
  ]);

  it.each([
    ["number at bounds", { qty: 1 }],
    ["number at max", { qty: 10 }],
    ["date after an exclusive min", { start: "2026-01-02" }],
    ["ref bound equal (inclusive)", { start: "2026-03-01", end: "2026-03-01" }],
    ["ref bound with empty ref field", { end: "2026-01-01" }],
    ["range within bounds", { open: { from: "06:00", to: "22:00" } }],
    ["dateTime with offset after min", { at: "2026-01-01T08:00:00+07:00" }],
  ])("accepts %s", (_, sent) => {
    expect(issuesOf(type, sent)).toEqual([]);
  });

  it.each([
    ["number below min", { qty: 0 }, "qty", "at least 1"],
    ["number above max", { qty: 11 }, "qty", "at most 10"],
    ["date on an exclusive min", { start: "2026-01-01" }, "start", "after 2026-01-01"],
    ["date above max", { start: "2027-01-01" }, "start", "at most"],
    ["date before its ref", { start: "2026-03-02", end: "2026-03-01" }, "end", "the value of start"],
    ["date on an exclusive max", { end: "2027-01-01" }, "end", "before"],
    ["range end above max", { open: { from: "07:00", to: "23:00" } }, "open", "at most 22:00"],
    ["dateTime before min (offset moves it back)", { at: "2026-01-01T05:00:00+07:00" }, "at", "at least"],
  ])("rejects %s", (_, sent, fieldId, fragment) => {
    const issues = checkRecordValues(type, sent).issues;
    expect(issues).toEqual([{ field: fieldId, message: expect.stringContaining(fragment) }]);
  });
});
