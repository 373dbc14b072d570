import { ConflictError } from "#shared/domain/errors";

/** The data type area's 409s (failedCode `dt-NNN`); stores and the service throw these. */
export const dataTypeConflicts = {
  nameTaken: (name: string) => new ConflictError(`A data type named "${name}" already exists in this organization.`, "dt-001"),
  extensionTaken: (entity: string) => new ConflictError(`This organization already has an extension data type for ${entity}.`, "dt-002"),
  locked: () =>
    new ConflictError("This data type is locked while an import from the earlier version runs; retry when the import is ready.", "dt-003"),
  hasRecords: () => new ConflictError("This data type still has records; delete its records before deleting the data type.", "dt-004"),
  relatedChanged: () =>
    new ConflictError("A data type named by a relation field was changed or deleted at the same time; read it again and retry.", "dt-005"),
};
