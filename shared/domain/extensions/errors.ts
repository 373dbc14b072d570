import type { StandardEntity } from "#shared/domain/data-types/schema";
import { ValidationError } from "#shared/domain/errors";
import { RecordConflictError } from "#shared/domain/records/errors";

/** Errors of entity custom values (failedCode `ext-NNN`); a changed extension type is the records' data-003. */
export const extensionErrors = {
  /** A unique field (or uniqueTogether combination) of the extension type already holds this value on another entity. */
  valuesTaken: (entity: StandardEntity, fields: string[]) =>
    new RecordConflictError(
      `Another ${entity} already has the same custom value for: ${fields.map((field) => `custom.${field}`).join(", ")}.`,
      "ext-001",
      fields.map((field) => ({ field: `custom.${field}`, message: `must be unique: another ${entity} has this value` })),
    ),
  noExtensionType: (entity: StandardEntity, field = "custom") =>
    ValidationError.single(
      field,
      `${field} cannot be used: this organization has no extension data type for ${entity} (create a data type with extends { entity: "${entity}" } first).`,
    ),
};
