import { AppError, ConflictError, type FieldIssue, ForbiddenError } from "#shared/domain/errors";

/** A uniqueness conflict names the fields, like a 400 does (`errors: [{ field, message }]`). */
export class RecordConflictError extends ConflictError {
  constructor(
    message: string,
    failedCode: string,
    readonly errors: FieldIssue[],
  ) {
    super(message, failedCode);
  }
  override details(): Record<string, unknown> {
    return { errors: this.errors };
  }
}

/** The external API of an external-api data type failed or answered something unusable. */
export class UpstreamError extends AppError {
  readonly statusCode = 502;
  constructor(message: string) {
    super(`The data type's external API could not be read: ${message}.`, "data-502");
  }
}

/** The records area's errors (failedCode `data-NNN`). */
export const recordErrors = {
  dataIdTaken: (dataId: string, commonData: boolean) =>
    new RecordConflictError(
      `A record with dataId "${dataId}" already exists ${commonData ? "in this data type" : "in this hub and data type"}.`,
      "data-001",
      [{ field: "dataId", message: "already used by another record" }],
    ),
  valuesTaken: (fields: string[]) =>
    new RecordConflictError(
      `Another record already has the same value for: ${fields.join(", ")}.`,
      "data-002",
      fields.map((field) => ({ field, message: "must be unique: another record has this value" })),
    ),
  dataTypeChanged: () =>
    new ConflictError("The data type was changed or is being deleted at the same time; read it again and retry.", "data-003"),
  dataTypeLocked: () =>
    new ConflictError("The data type is locked while an import from the earlier version runs; retry when the import is ready.", "data-004"),
  restrictedFields: (fields: string[]) =>
    new ForbiddenError(`You are not allowed to read these fields: ${fields.join(", ")}.`, "data-403", { restrictedFields: fields }),
};
