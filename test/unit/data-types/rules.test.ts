import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FieldIssue } from "#shared/domain/errors";
import { dataTypeIssues, normalizeFields, recordSystemKeys, relationTargetIds, type RuleContext } from "#shared/domain/data-types/rules";
import { type DataType, dataTypeInputSchema, fieldTypes } from "#shared/domain/data-types/schema";
import { storableNumberProblem } from "#shared/domain/schemas";
import { zodIssues } from "#shared/domain/validation";

/** Shape check (zod) then the domain rules: what a save of `body` reports, as it would reach the client. */
function issuesOf(body: Record<string, unknown>, context: Partial<RuleContext> = {}): FieldIssue[] {
  const parsed = dataTypeInputSchema.safeParse(body);
  if (!parsed.success) return zodIssues(parsed.error);
  return dataTypeIssues(parsed.data, { relationTargets: new Map(), ...context });
}
const fieldsOf = (issues: FieldIssue[]) => issues.map((issue) => issue.field);

const title = { type: "title", title: "Name" };
const text = (id: string, extra: Record<string, unknown> = {}) => ({ id, title: id, type: "text", required: false, ...extra });
const base = (fields: unknown[], extra: Record<string, unknown> = {}) => ({ name: "Customer", fields: [title, ...fields], ...extra });

const ids = { self: "aaaaaaaaaaaaaaaaaaaaaaaa", order: "bbbbbbbbbbbbbbbbbbbbbbbb", missing: "cccccccccccccccccccccccc" };

function storedType(overrides: Partial<DataType> = {}): DataType {
  return {
    _id: ids.self,
    name: "Customer",
    fields: normalizeFields([title as never]),
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
    ...overrides,
  };
}

/** [case, body, fields expected in the 400] — an empty list means the body is valid. */
type Case = [string, Record<string, unknown>, string[]];

function runCases(cases: Case[], context: Partial<RuleContext> = {}) {
  it.each(cases)("%s", (_case, body, expected) => {
    const found = fieldsOf(issuesOf(body, context));
    if (expected.length === 0) expect(found).toEqual([]);
    else for (const field of expected) expect(found).toContain(field);
  });
}

describe("Rules: data type", () => {
  describe("null on optional attributes is read as absent", () => {
    const relationTo = (via: unknown) => ({
      id: "owner",
      title: "Owner",
      type: "relation",
      required: false,
      relation: { kind: "belongsTo", targetKind: "standard", target: "user", via },
    });
    runCases([
      ["relation.via null", base([relationTo(null)]), []],
      [
        "null on every optional field attribute",
        base([
          text("note", {
            isRequired: null,
            description: null,
            inputType: null,
            default: null,
            optionData: null,
            unique: null,
            searchable: null,
            show: null,
            validations: null,
            relation: null,
            primaryKey: null,
            format: null,
          }),
          { id: "age", title: "Age", type: "number", required: false, validations: { min: null, max: 10, decimals: null } },
        ]),
        [],
      ],
      [
        "null on every optional top-level attribute",
        base([], { limitUser: null, commonData: null, uniqueTogether: null, extends: null, provider: null, providerConfig: null }),
        [],
      ],
      ["a null name is still required", base([], { name: null }), ["name"]],
      ["a null title is still required", base([{ id: "a", title: null, type: "text", required: true }]), ["fields.1.title"]],
    ]);

    it("stores dateTime bounds in the records' form (YYYY-MM-DD HH:mm:ss, UTC)", () => {
      const [, stored] = normalizeFields(
        dataTypeInputSchema.parse(
          base([
            {
              id: "at",
              title: "At",
              type: "dateTime",
              required: false,
              validations: { min: "2026-01-01T08:00:00+07:00", max: "2026-01-02 09:00" },
            },
          ]),
        ).fields,
      );
      expect(stored?.validations).toEqual({ min: "2026-01-01 01:00:00", max: "2026-01-02 09:00:00" });
    });

    it("stores the defaults in place of nulls", () => {
      const parsed = dataTypeInputSchema.parse(base([relationTo(null)], { limitUser: null, uniqueTogether: null, provider: null }));
      expect(parsed).toMatchObject({ limitUser: false, uniqueTogether: [], provider: "internal", extends: null, providerConfig: null });
      expect(parsed.fields[1]?.relation).toEqual({ kind: "belongsTo", targetKind: "standard", target: "user" });
    });
  });

  describe("Rule 1: name", () => {
    runCases([
      ["a trimmed name is valid", base([], { name: "  Customer  " }), []],
      ["a missing name", { fields: [title] }, ["name"]],
      ["a blank name", base([], { name: "   " }), ["name"]],
      ["a 100-character name is valid", base([], { name: "n".repeat(100) }), []],
      ["a 101-character name", base([], { name: "n".repeat(101) }), ["name"]],
      ["a non-string name", base([], { name: 42 }), ["name"]],
      ["a name with a control character", base([], { name: "Cus\ttomer" }), ["name"]],
    ]);

    it("trims the name", () => {
      expect(dataTypeInputSchema.parse(base([], { name: "  Customer  " })).name).toBe("Customer");
    });
  });

  describe("Rule 2: fields and field ids", () => {
    runCases([
      ["missing fields", { name: "X" }, ["fields"]],
      ["empty fields", { name: "X", fields: [] }, ["fields"]],
      ["200 fields are valid", base(Array.from({ length: 199 }, (_, i) => text(`f${i}`))), []],
      ["201 fields", base(Array.from({ length: 200 }, (_, i) => text(`f${i}`))), ["fields"]],
      ["a field without id", base([{ title: "A", type: "text", required: true }]), ["fields.1.id"]],
      ["an id starting with a digit", base([text("1a")]), ["fields.1.id"]],
      ["an id with a dash", base([text("a-b")]), ["fields.1.id"]],
      ["an id with a space", base([text("a b")]), ["fields.1.id"]],
      ["an id with underscores and digits is valid", base([text("a_1_B")]), []],
      ["a duplicate id", base([text("a"), text("a")]), ["fields.2.id"]],
      ["a non-title field with id dataId", base([text("dataId")]), ["fields.1.id"]],
      ["a field without title", base([{ id: "a", type: "text", required: true }]), ["fields.1.title"]],
      ["a field without type", base([{ id: "a", title: "A", required: true }]), ["fields.1.type"]],
      ["neither required nor isRequired", base([{ id: "a", title: "A", type: "text" }]), ["fields.1.required"]],
      ["isRequired alone is valid", base([{ id: "a", title: "A", type: "text", isRequired: true }]), []],
      [
        "required and isRequired disagree",
        base([{ id: "a", title: "A", type: "text", required: true, isRequired: false }]),
        ["fields.1.isRequired"],
      ],
      ["an unknown field attribute", base([text("a", { colour: "red" })]), ["fields.1.colour"]],
      ["show accepted as boolean", base([text("a", { show: false })]), []],
      ["show not boolean", base([text("a", { show: "yes" })]), ["fields.1.show"]],
      ["the primaryKey marker on the title field is accepted", { name: "X", fields: [{ ...title, primaryKey: true }] }, []],
      ["the primaryKey marker on another field", base([text("a", { primaryKey: true })]), ["fields.1.primaryKey"]],
      ...recordSystemKeys
        .filter((key) => /^[A-Za-z]/.test(key))
        .map((key): Case => [`system key ${key} as a field id`, base([text(key)]), ["fields.1.id"]]),
      ["a system key in another case", base([text("HUBID")]), ["fields.1.id"]],
    ]);

    it("maps isRequired onto required in the stored field", () => {
      const [, field] = normalizeFields(dataTypeInputSchema.parse(base([{ id: "a", title: "A", type: "text", isRequired: true }])).fields);
      expect(field).toMatchObject({ id: "a", required: true });
      expect(field).not.toHaveProperty("isRequired");
    });
  });

  describe("Rule 3: type and the title field", () => {
    runCases([
      ...fieldTypes
        .filter((type) => !["title", "primaryKey", "option", "multiOption", "relation"].includes(type))
        .map((type): Case => [`type ${type} is valid`, base([{ id: "a", title: "A", type, required: false }]), []]),
      ["the legacy response type string", base([{ id: "a", title: "A", type: "string", required: false }]), ["fields.1.type"]],
      ["no title field", { name: "X", fields: [text("a")] }, ["fields"]],
      ["two title fields", base([{ type: "title", title: "Other" }]), ["fields.1.type"]],
      [
        "a primaryKey field on a new type",
        { name: "X", fields: [{ id: "code", title: "Code", type: "primaryKey", required: true }] },
        ["fields.0.type"],
      ],
      ["title and primaryKey together", base([{ id: "code", title: "Code", type: "primaryKey", required: true }]), ["fields.1.type"]],
    ]);

    it("forces id dataId, required, unique, show and searchable on the title, whatever is sent", () => {
      const sent = { type: "title", title: "Name", id: "name", required: false, unique: false, show: false, searchable: false };
      const [field] = normalizeFields(dataTypeInputSchema.parse({ name: "X", fields: [sent] }).fields);
      expect(field).toEqual({
        id: "dataId",
        title: "Name",
        type: "title",
        required: true,
        unique: true,
        show: true,
        searchable: true,
        optionData: [],
      });
    });

    describe("a legacy primaryKey type", () => {
      const existing = storedType({ fields: normalizeFields([{ id: "code", title: "Code", type: "primaryKey", required: true }]) });
      runCases(
        [
          [
            "keeps its primaryKey field",
            { name: "X", fields: [{ id: "code", title: "Code", type: "primaryKey", required: true }, text("a")] },
            [],
          ],
          [
            "cannot add a title next to it",
            { name: "X", fields: [{ id: "code", title: "Code", type: "primaryKey", required: true }, title] },
            ["fields.1.type"],
          ],
          ["cannot drop its identifying field", { name: "X", fields: [text("a")] }, ["fields"]],
          ["cannot swap its primaryKey for a title", { name: "X", fields: [title, text("a")] }, ["fields.0.type"]],
        ],
        { existing },
      );
    });
  });

  describe("Rule 4: optionData", () => {
    runCases([
      ["option with options is valid", base([{ id: "o", title: "O", type: "option", required: false, optionData: ["a", "b"] }]), []],
      ["multiOption with options is valid", base([{ id: "o", title: "O", type: "multiOption", required: false, optionData: ["a"] }]), []],
      ["option without optionData", base([{ id: "o", title: "O", type: "option", required: false }]), ["fields.1.optionData"]],
      [
        "multiOption with empty optionData",
        base([{ id: "o", title: "O", type: "multiOption", required: false, optionData: [] }]),
        ["fields.1.optionData"],
      ],
      [
        "repeated options",
        base([{ id: "o", title: "O", type: "option", required: false, optionData: ["a", "a"] }]),
        ["fields.1.optionData"],
      ],
      ["a blank option", base([{ id: "o", title: "O", type: "option", required: false, optionData: [" "] }]), ["fields.1.optionData.0"]],
      ["text with empty optionData is valid", base([text("a", { optionData: [] })]), []],
      ["text with options", base([text("a", { optionData: ["x"] })]), ["fields.1.optionData"]],
      ["title with options", { name: "X", fields: [{ ...title, optionData: ["x"] }] }, ["fields.0.optionData"]],
    ]);
  });

  describe("Rule 5: validations", () => {
    const number = (validations: unknown, extra: Record<string, unknown> = {}) => ({
      id: "n",
      title: "N",
      type: "number",
      required: false,
      validations,
      ...extra,
    });
    const typed = (id: string, type: string, validations?: unknown) => ({
      id,
      title: id,
      type,
      required: false,
      ...(validations ? { validations } : {}),
    });
    const multi = (validations: unknown) => ({
      id: "m",
      title: "M",
      type: "multiOption",
      required: false,
      optionData: ["a", "b", "c"],
      validations,
    });
    runCases([
      ["number min/max/decimals is valid", base([number({ min: 0, max: 10, decimals: 2 })]), []],
      ["number min equal to max is valid", base([number({ min: 5, max: 5 })]), []],
      ["number min above max", base([number({ min: 11, max: 10 })]), ["fields.1.validations.min"]],
      ["number bound as text", base([number({ min: "5" })]), ["fields.1.validations.min"]],
      ["number bound the store cannot keep", base([number({ max: 1e300 })]), ["fields.1.validations.max"]],
      ["number with minInclusive", base([number({ minInclusive: true })]), ["fields.1.validations.minInclusive"]],
      ["negative decimals", base([number({ decimals: -1 })]), ["fields.1.validations.decimals"]],
      ["fractional decimals", base([number({ decimals: 1.5 })]), ["fields.1.validations.decimals"]],
      ["an unknown validation key", base([number({ pattern: "x" })]), ["fields.1.validations.pattern"]],
      ["text with min", base([typed("t", "text", { min: 1 })]), ["fields.1.validations.min"]],
      ["boolean with max", base([typed("b", "boolean", { max: 1 })]), ["fields.1.validations.max"]],
      ["title with validations", { name: "X", fields: [{ ...title, validations: { min: 1 } }] }, ["fields.0.validations.min"]],
      ["date bounds are valid", base([typed("d", "date", { min: "2026-01-01", max: "2026-12-31", minInclusive: false })]), []],
      ["date min after max", base([typed("d", "date", { min: "2026-12-31", max: "2026-01-01" })]), ["fields.1.validations.min"]],
      ["date bound that does not exist", base([typed("d", "date", { min: "2026-02-30" })]), ["fields.1.validations.min"]],
      ["date bound as number", base([typed("d", "date", { min: 20260101 })]), ["fields.1.validations.min"]],
      ["date with decimals", base([typed("d", "date", { decimals: 1 })]), ["fields.1.validations.decimals"]],
      ["dateTime bounds are valid", base([typed("dt", "dateTime", { min: "2026-01-01 08:00:00", max: "2026-01-01T09:00:00Z" })]), []],
      [
        "dateTime min after max across offsets",
        base([typed("dt", "dateTime", { min: "2026-01-01T10:00:00+00:00", max: "2026-01-01T10:30:00+01:00" })]),
        ["fields.1.validations.min"],
      ],
      ["dateTime bound not a date-time", base([typed("dt", "dateTime", { max: "tomorrow" })]), ["fields.1.validations.max"]],
      ["time bounds are valid", base([typed("t", "time", { min: "08:00", max: "17:30:00", maxInclusive: false })]), []],
      ["time bound 24:00", base([typed("t", "time", { max: "24:00" })]), ["fields.1.validations.max"]],
      ["time min after max", base([typed("t", "time", { min: "18:00", max: "08:00" })]), ["fields.1.validations.min"]],
      ["ref to a field of the same type is valid", base([typed("start", "date"), typed("end", "date", { min: { ref: "start" } })]), []],
      ["ref with a literal max is valid", base([typed("a", "number"), number({ min: { ref: "a" }, max: 3 })]), []],
      [
        "ref to a field of another type",
        base([typed("start", "time"), typed("end", "date", { min: { ref: "start" } })]),
        ["fields.2.validations.min.ref"],
      ],
      ["ref to an unknown field", base([typed("end", "date", { min: { ref: "nope" } })]), ["fields.1.validations.min.ref"]],
      ["ref to the field itself", base([typed("end", "date", { max: { ref: "end" } })]), ["fields.1.validations.max.ref"]],
      [
        "ref with an extra key",
        base([typed("a", "date"), typed("end", "date", { min: { ref: "a", x: 1 } })]),
        ["fields.2.validations.min.x"],
      ],
      ["multiOption selections are valid", base([multi({ minSelected: 1, maxSelected: 3 })]), []],
      ["minSelected above maxSelected", base([multi({ minSelected: 3, maxSelected: 2 })]), ["fields.1.validations.minSelected"]],
      ["maxSelected above the number of options", base([multi({ maxSelected: 4 })]), ["fields.1.validations.maxSelected"]],
      ["minSelected above the number of options", base([multi({ minSelected: 4 })]), ["fields.1.validations.minSelected"]],
      ["option (single) with maxSelected", base([{ ...multi({ maxSelected: 1 }), type: "option" }]), ["fields.1.validations.maxSelected"]],
      ["multiOption with min", base([multi({ min: 1 })]), ["fields.1.validations.min"]],
    ]);
  });

  describe("Rule 6: relation", () => {
    const orderType = storedType({ _id: ids.order, name: "Order" });
    const relation = (value: unknown, type = "relation") => ({ id: "r", title: "R", type, required: false, relation: value });
    const context = { relationTargets: new Map([[ids.order, orderType]]) };
    runCases(
      [
        [
          "belongsTo an existing data type is valid",
          base([relation({ kind: "belongsTo", targetKind: "dataType", target: ids.order })]),
          [],
        ],
        [
          "belongsToMany a standard entity is valid",
          base([relation({ kind: "belongsToMany", targetKind: "standard", target: "user" })]),
          [],
        ],
        ["type relation without relation", base([{ id: "r", title: "R", type: "relation", required: false }]), ["fields.1.relation"]],
        [
          "relation on a text field",
          base([relation({ kind: "belongsTo", targetKind: "standard", target: "hub" }, "text")]),
          ["fields.1.relation"],
        ],
        ["an unknown kind", base([relation({ kind: "owns", targetKind: "standard", target: "hub" })]), ["fields.1.relation.kind"]],
        [
          "an unknown targetKind",
          base([relation({ kind: "belongsTo", targetKind: "table", target: "hub" })]),
          ["fields.1.relation.targetKind"],
        ],
        ["a missing target", base([relation({ kind: "belongsTo", targetKind: "standard" })]), ["fields.1.relation.target"]],
        [
          "an unknown standard entity",
          base([relation({ kind: "belongsTo", targetKind: "standard", target: "invoice" })]),
          ["fields.1.relation.target"],
        ],
        [
          "a data type that does not exist",
          base([relation({ kind: "belongsTo", targetKind: "dataType", target: ids.missing })]),
          ["fields.1.relation.target"],
        ],
        [
          "a target that is not an id",
          base([relation({ kind: "belongsTo", targetKind: "dataType", target: "Order" })]),
          ["fields.1.relation.target"],
        ],
        [
          "via on belongsTo",
          base([relation({ kind: "belongsTo", targetKind: "dataType", target: ids.order, via: "x" })]),
          ["fields.1.relation.via"],
        ],
        [
          "hasMany without via",
          base([relation({ kind: "hasMany", targetKind: "dataType", target: ids.order })]),
          ["fields.1.relation.via"],
        ],
        [
          "hasOne on a standard entity",
          base([relation({ kind: "hasOne", targetKind: "standard", target: "user", via: "x" })]),
          ["fields.1.relation.targetKind"],
        ],
        [
          "hasMany on create (nothing can point back yet)",
          base([relation({ kind: "hasMany", targetKind: "dataType", target: ids.order, via: "customer" })]),
          ["fields.1.relation.via"],
        ],
      ],
      context,
    );

    describe("via on update", () => {
      const pointing = (target: string, kind = "belongsTo") =>
        storedType({
          _id: ids.order,
          name: "Order",
          fields: normalizeFields([
            title as never,
            { id: "customer", title: "C", type: "relation", required: false, relation: { kind, targetKind: "dataType", target } } as never,
          ]),
        });
      const hasMany = (via: string) => base([relation({ kind: "hasMany", targetKind: "dataType", target: ids.order, via })]);
      const existing = storedType();
      it.each([
        ["names the inverse belongsTo field", pointing(ids.self), "customer", true],
        ["names an inverse belongsToMany field", pointing(ids.self, "belongsToMany"), "customer", true],
        ["names a field that does not exist", pointing(ids.self), "nope", false],
        ["names a field that points elsewhere", pointing(ids.missing), "customer", false],
        ["names a hasMany field (stores nothing)", pointing(ids.self, "hasMany"), "customer", false],
        ["names the title field", pointing(ids.self), "dataId", false],
      ])("%s → valid=%s", (_case, target, via, valid) => {
        const found = fieldsOf(issuesOf(hasMany(via), { existing, relationTargets: new Map([[ids.order, target]]) }));
        expect(found.includes("fields.1.relation.via")).toBe(!valid);
      });

      it("accepts a self relation whose via is a field of the same save", () => {
        const body = base([
          relation({ kind: "belongsTo", targetKind: "dataType", target: ids.self }),
          {
            id: "children",
            title: "Children",
            type: "relation",
            required: false,
            relation: { kind: "hasMany", targetKind: "dataType", target: ids.self, via: "r" },
          },
        ]);
        expect(issuesOf(body, { existing })).toEqual([]);
      });
    });

    it("lists the other data types named by relation fields, once each, without the type itself", () => {
      const input = dataTypeInputSchema.parse(
        base([
          relation({ kind: "belongsTo", targetKind: "dataType", target: ids.order }),
          { ...relation({ kind: "belongsToMany", targetKind: "dataType", target: ids.order }), id: "r2" },
          { ...relation({ kind: "belongsTo", targetKind: "dataType", target: ids.self }), id: "r3" },
          { ...relation({ kind: "belongsTo", targetKind: "standard", target: "hub" }), id: "r4" },
        ]),
      );
      expect(relationTargetIds(input, ids.self)).toEqual([ids.order]);
    });
  });

  describe("Rule 7: uniqueTogether", () => {
    const fields = [
      text("a"),
      text("b"),
      text("c"),
      {
        id: "owner",
        title: "Owner",
        type: "relation",
        required: false,
        relation: { kind: "belongsTo", targetKind: "dataType", target: ids.order },
      },
      {
        id: "hub",
        title: "Hub",
        type: "relation",
        required: false,
        relation: { kind: "belongsTo", targetKind: "standard", target: "hub" },
      },
    ];
    const context = { relationTargets: new Map([[ids.order, storedType({ _id: ids.order })]]) };
    runCases(
      [
        ["two known fields are valid", base(fields, { uniqueTogether: [["a", "b"]] }), []],
        [
          "two combinations are valid",
          base(fields, {
            uniqueTogether: [
              ["a", "b"],
              ["b", "c"],
            ],
          }),
          [],
        ],
        ["a standard relation in a combination is valid", base(fields, { uniqueTogether: [["a", "hub"]] }), []],
        ["a single field", base(fields, { uniqueTogether: [["a"]] }), ["uniqueTogether.0"]],
        ["the same field twice", base(fields, { uniqueTogether: [["a", "a"]] }), ["uniqueTogether.0"]],
        ["an unknown field", base(fields, { uniqueTogether: [["a", "zz"]] }), ["uniqueTogether.0.1"]],
        ["the title field", base(fields, { uniqueTogether: [["dataId", "a"]] }), ["uniqueTogether.0.0"]],
        ["a relation filled from another data type", base(fields, { uniqueTogether: [["a", "owner"]] }), ["uniqueTogether.0.1"]],
        [
          "the same combination twice, reordered",
          base(fields, {
            uniqueTogether: [
              ["a", "b"],
              ["b", "a"],
            ],
          }),
          ["uniqueTogether.1"],
        ],
        ["not an array of arrays", base(fields, { uniqueTogether: ["a", "b"] }), ["uniqueTogether.0"]],
      ],
      context,
    );
  });

  describe("Rule 8: searchable fields", () => {
    const searchable = (n: number) => Array.from({ length: n }, (_, i) => text(`s${i}`, { searchable: true }));
    runCases([
      ["title plus 4 searchable is valid", base(searchable(4)), []],
      ["title plus 5 searchable", base(searchable(5)), ["fields"]],
    ]);

    describe("a legacy type already above the limit", () => {
      const existing = storedType({ fields: normalizeFields([title, ...searchable(6)] as never) });
      runCases(
        [
          ["may be saved with the same count", base(searchable(6)), []],
          ["may turn searchable fields off", base(searchable(3)), []],
          ["may not raise the count", base(searchable(7)), ["fields"]],
        ],
        { existing },
      );
    });
  });

  describe("Rule 9: commonData", () => {
    runCases([
      ["commonData true on create is valid", base([], { commonData: true }), []],
      ["commonData not boolean", base([], { commonData: "yes" }), ["commonData"]],
    ]);
    runCases(
      [
        ["unchanged on update is valid", base([], { commonData: false }), []],
        ["omitted on update is valid", base([]), []],
        ["changed on update", base([], { commonData: true }), ["commonData"]],
      ],
      { existing: storedType() },
    );
  });

  describe("Rule 10: extends", () => {
    const extension = (entity: unknown, extra: Record<string, unknown> = {}) => ({
      name: "User fields",
      fields: [text("badge")],
      extends: { entity },
      ...extra,
    });
    runCases([
      ...["user", "hub", "vehicle", "role", "flow"].map(
        (entity): Case => [`extends ${entity} without a title is valid`, extension(entity), []],
      ),
      ["an unknown entity", extension("invoice"), ["extends.entity"]],
      ["an extra key", { ...extension("user"), extends: { entity: "user", x: 1 } }, ["extends.x"]],
      ["a title field on an extension", { ...extension("user"), fields: [title, text("badge")] }, ["fields.0.type"]],
      ["commonData false on an extension is coerced (extends forces true)", extension("user", { commonData: false }), []],
      ["commonData true on an extension is valid", extension("user", { commonData: true }), []],
    ]);
    runCases([["commonData false on an existing extension is coerced", extension("user", { commonData: false }), []]], {
      existing: storedType({ extends: { entity: "user" }, commonData: true, fields: normalizeFields([text("badge")] as never) }),
    });
    runCases(
      [
        ["changing the entity on update is valid", extension("hub", {}), []],
        ["removing extends on update", { name: "User fields", fields: [title, text("badge")], extends: null }, ["extends"]],
      ],
      { existing: storedType({ extends: { entity: "user" }, commonData: true, fields: normalizeFields([text("badge")] as never) }) },
    );
    runCases(
      [["adding extends on update", extension("user")]].map(([c, b]) => [c, b, ["extends"]] as Case),
      {
        existing: storedType({ commonData: true }),
      },
    );
  });

  describe("Rule 11: provider", () => {
    const external = (providerConfig: unknown) => base([], { provider: "external-api", providerConfig });
    runCases([
      ["internal by default is valid", base([]), []],
      ["internal with null config is valid", base([], { provider: "internal", providerConfig: null }), []],
      [
        "internal with a config",
        base([], { provider: "internal", providerConfig: { url: "https://api.example.com" } }),
        ["providerConfig"],
      ],
      ["an unknown provider", base([], { provider: "ftp" }), ["provider"]],
      ["external-api with url and key is valid", external({ url: "https://api.example.com/items?x=1", key: "secret" }), []],
      ["external-api over http is valid", external({ url: "http://api.example.com" }), []],
      ["external-api without config", external(null), ["providerConfig"]],
      ["external-api without url", external({ key: "k" }), ["providerConfig.url"]],
      ["a relative url", external({ url: "/items" }), ["providerConfig.url"]],
      ["an ftp url", external({ url: "ftp://example.com/x" }), ["providerConfig.url"]],
      ["a loopback url", external({ url: "http://127.0.0.1:8080/x" }), ["providerConfig.url"]],
      ["a link-local url (metadata service)", external({ url: "http://169.254.169.254/latest/meta-data" }), ["providerConfig.url"]],
      ["a private url", external({ url: "https://10.0.0.5/x" }), ["providerConfig.url"]],
      ["an IPv6 loopback url", external({ url: "http://[::1]/x" }), ["providerConfig.url"]],
      ["an unknown config key", external({ url: "https://api.example.com", token: "x" }), ["providerConfig.token"]],
    ]);
    runCases([["a loopback url when loopback is allowed (tests only)", external({ url: "http://127.0.0.1:8080/x" }), []]], {
      allowLoopbackProviders: true,
    });
    runCases([["a private url even when loopback is allowed", external({ url: "http://192.168.1.1/x" }), ["providerConfig.url"]]], {
      allowLoopbackProviders: true,
    });
  });

  it("reports every violation of one body together", () => {
    const body = base([text("1x"), { id: "o", title: "O", type: "option", required: false }], { uniqueTogether: [["dataId"]] });
    expect(fieldsOf(issuesOf(body))).toEqual(
      expect.arrayContaining(["fields.1.id", "fields.2.optionData", "uniqueTogether.0", "uniqueTogether.0.0"]),
    );
  });
});

describe("Properties: rules that combine", () => {
  const fieldId = fc
    .stringMatching(/^[a-z][a-z0-9_]{0,8}$/)
    .filter((id) => !recordSystemKeys.some((key) => key.toLowerCase() === id.toLowerCase()));
  const plainField = fc.record({
    id: fieldId,
    type: fc.constantFrom("text", "number", "boolean", "date", "dateTime", "time", "geolocation", "phoneNumber"),
    searchable: fc.boolean(),
    required: fc.boolean(),
  });
  const validType = fc
    .uniqueArray(plainField, { selector: (field) => field.id, minLength: 0, maxLength: 12 })
    .map((fields) => ({ name: "Generated", fields: [title, ...fields.map((field) => ({ ...field, title: field.id }))] }));

  it("a type is accepted exactly when at most 5 fields are searchable (title included)", () => {
    fc.assert(
      fc.property(validType, (body) => {
        const searchable = 1 + body.fields.filter((field) => "searchable" in field && field.searchable).length;
        expect(issuesOf(body).length === 0).toBe(searchable <= 5);
      }),
    );
  });

  it("the order of the fields never changes whether a type is valid", () => {
    fc.assert(
      fc.property(validType, fc.integer({ min: 0, max: 1000 }), (body, seed) => {
        const shuffled = [...body.fields].sort(
          (a, b) => ((JSON.stringify(a).length * 31 + seed) % 7) - ((JSON.stringify(b).length * 31 + seed) % 7),
        );
        expect(issuesOf({ ...body, fields: shuffled }).length === 0).toBe(issuesOf(body).length === 0);
      }),
    );
  });

  it("a uniqueTogether list is rejected exactly when some combination repeats another in any order", () => {
    const ids = ["a", "b", "c", "d"];
    const combination = fc.uniqueArray(fc.constantFrom(...ids), { minLength: 2, maxLength: 4 });
    fc.assert(
      fc.property(fc.array(combination, { maxLength: 5 }), (combinations) => {
        const body = base(
          ids.map((id) => text(id)),
          { uniqueTogether: combinations },
        );
        const keys = combinations.map((c) => [...c].sort().join());
        expect(issuesOf(body).length === 0).toBe(new Set(keys).size === keys.length);
      }),
    );
  });

  it("normalising is idempotent and the title always ends up forced", () => {
    fc.assert(
      fc.property(validType, fc.boolean(), fc.boolean(), (body, required, searchable) => {
        const parsed = dataTypeInputSchema.parse({ ...body, fields: [{ ...title, required, searchable }, ...body.fields.slice(1)] });
        const once = normalizeFields(parsed.fields);
        expect(normalizeFields(dataTypeInputSchema.parse({ ...body, fields: once }).fields)).toEqual(once);
        expect(once[0]).toMatchObject({ id: "dataId", required: true, unique: true, show: true, searchable: true });
      }),
    );
  });

  it("a number field's literal bounds (any number the store can keep) are accepted exactly when min ≤ max", () => {
    const bound = fc
      .double({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER, noNaN: true })
      .filter((value) => storableNumberProblem(value) === undefined);
    fc.assert(
      fc.property(bound, bound, (min, max) => {
        const body = base([{ id: "n", title: "N", type: "number", required: false, validations: { min, max } }]);
        expect(issuesOf(body).length === 0).toBe(min <= max);
      }),
    );
  });
});
