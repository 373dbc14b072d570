import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importStatusOf, toImportView, type ImportState } from "#shared/domain/data-types/import-state";
import { cutPage, exportHeaderSchema, exportRecordSchema, headerOf, importRecordId } from "#shared/domain/data-types/legacy-import";
import { dataTypeIssues } from "#shared/domain/data-types/rules";
import { dataTypeInputSchema } from "#shared/domain/data-types/schema";
import { ID_PATTERN } from "#shared/domain/ids";

describe("Module: legacy import (pure rules)", () => {
  describe("Method: cutPage", () => {
    const text = Buffer.from('{"a":1}\n\n{"b":2}\r\n{"c":3}');
    it.each([
      ["whole file, no trailing newline", text, { line: 2, byteOffset: 0 }, text.length, 10, [2, 4, 5], true],
      ["at most maxRecords non-blank lines", text, { line: 2, byteOffset: 0 }, text.length, 2, [2, 4], false],
      [
        "a chunk cut mid-line stops at the last complete line",
        text.subarray(0, 12),
        { line: 2, byteOffset: 0 },
        text.length,
        10,
        [2],
        false,
      ],
    ] as const)("%s", (_name, chunk, start, size, max, lines, atEnd) => {
      // Prepare + Act
      const page = cutPage(Buffer.from(chunk), start, size, max);
      // Assess
      expect(page?.lines.map((line) => line.line)).toEqual(lines);
      expect(page?.atEnd).toBe(atEnd);
    });

    it("resumes at the byte offset and line it answered, so pages tile the file", () => {
      const first = cutPage(text, { line: 2, byteOffset: 0 }, text.length, 2);
      const rest = cutPage(
        text.subarray(first?.nextByteOffset),
        { line: first?.nextLine ?? 0, byteOffset: first?.nextByteOffset ?? 0 },
        text.length,
        10,
      );
      expect([...(first?.lines ?? []), ...(rest?.lines ?? [])].map((line) => JSON.parse(line.text))).toEqual([
        { a: 1 },
        { b: 2 },
        { c: 3 },
      ]);
      expect(rest).toMatchObject({ nextLine: 6, atEnd: true });
    });

    it("answers undefined when a line is longer than the chunk and the file goes on", () => {
      expect(cutPage(Buffer.from("x".repeat(10)), { line: 2, byteOffset: 0 }, 100)).toBeUndefined();
    });
  });

  describe("Method: headerOf", () => {
    it("splits the header line from the records", () => {
      expect(headerOf(Buffer.from('{"h":1}\r\n{"r":1}\n'))).toEqual({ text: '{"h":1}', recordsOffset: 9 });
      expect(headerOf(Buffer.from('{"h":1}'))).toBeUndefined();
    });
  });

  describe("Method: importRecordId", () => {
    it("is an id, the same for the same line, different across lines and types", () => {
      const type = "6743b2f0aabbccddeeff0011";
      expect(importRecordId(type, 2)).toMatch(ID_PATTERN);
      expect(importRecordId(type, 2)).toBe(importRecordId(type, 2));
      expect(importRecordId(type, 3)).not.toBe(importRecordId(type, 2));
      expect(importRecordId("6743b2f0aabbccddeeff0012", 2)).not.toBe(importRecordId(type, 2));
      expect(importRecordId(type, 2).slice(0, 8)).toBe(type.slice(0, 8));
    });
  });

  describe("Method: importStatusOf / toImportView", () => {
    it.each([
      ["importing", 0, "queued"],
      ["importing", 3, "running"],
      ["finishing", 11, "running"],
      ["rollingBack", 4, "running"],
      ["done", 12, "done"],
      ["failed", 9, "failed"],
    ] as const)("%s at step %i is %s", (phase, step, status) => {
      expect(importStatusOf({ phase, step })).toBe(status);
    });

    it("shows status, mode, counts and errors, never the cursor or the upload", () => {
      const state: ImportState = {
        mode: "copy",
        phase: "importing",
        step: 2,
        uploadId: "u",
        sizeBytes: 100,
        line: 1002,
        byteOffset: 50,
        processed: 1000,
        total: 5000,
        errors: [],
        startedTime: "2026-11-24 08:00:00",
      };
      expect(toImportView(state)).toEqual({
        status: "running",
        mode: "copy",
        processed: 1000,
        total: 5000,
        errors: [],
        startedTime: "2026-11-24 08:00:00",
      });
    });
  });

  describe("The example export (docs/examples/legacy-export.jsonl)", () => {
    const [headerLine = "", ...recordLines] = readFileSync("docs/examples/legacy-export.jsonl", "utf8").trimEnd().split("\n");

    it("has a header whose legacy data type passes the create rules (primaryKey allowed, string read as text)", () => {
      const header = exportHeaderSchema.parse(JSON.parse(headerLine));
      const input = dataTypeInputSchema.parse(header.dataType);
      expect(input.fields.map((field) => field.type)).toContain("text");
      expect(dataTypeIssues(input, { relationTargets: new Map(), legacyImport: true })).toEqual([]);
      expect(header.recordCount).toBe(recordLines.length);
    });

    it("has record lines of the documented shape", () => {
      for (const line of recordLines) expect(exportRecordSchema.safeParse(JSON.parse(line)).success).toBe(true);
    });
  });

  describe("Rule: primaryKey on an imported type", () => {
    const fields = (types: string[]) =>
      types.map((type, index) =>
        type === "title" ? { title: "Name", type } : { id: `f${index}`, title: `F${index}`, type, required: true },
      );
    const issuesOf = (types: string[], legacyImport: boolean) =>
      dataTypeIssues(dataTypeInputSchema.parse({ name: "T", fields: fields(types) }), { relationTargets: new Map(), legacyImport }).map(
        (issue) => issue.field,
      );

    it.each([
      [["primaryKey", "text"], true, []],
      [["primaryKey", "text"], false, ["fields.0.type"]],
      [["title", "primaryKey"], true, ["fields.0.type"]],
      [["primaryKey", "primaryKey"], true, ["fields.1.type"]],
      [["title", "text"], true, []],
    ])("%j (import %s) → %j", (types, legacyImport, expected) => {
      expect(issuesOf(types, legacyImport)).toEqual(expected);
    });
  });
});
