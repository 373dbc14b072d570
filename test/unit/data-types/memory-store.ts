import { dataTypeConflicts } from "#shared/domain/data-types/errors";
import type { DataType } from "#shared/domain/data-types/schema";
import type { DataTypeStore, ReadVersion } from "#shared/domain/data-types/service";
import { ConflictError, NotFoundError } from "#shared/domain/errors";

/**
 * An in-memory DataTypeStore with the same guarantees as the DynamoDB one (name and extension
 * guards, versions, related-version checks, all-or-nothing writes), for service unit tests.
 */
export function memoryDataTypeStore() {
  const types = new Map<string, { dataType: DataType; version: number }>();
  const names = new Map<string, string>();
  const extensions = new Map<string, string>();
  const recordCounts = new Map<string, number>();
  const key = (organizationId: string, part: string) => `${organizationId}|${part}`;
  const clone = <T>(value: T): T => structuredClone(value);

  function checkRelated(organizationId: string, related: readonly ReadVersion[]) {
    for (const { dataTypeId, version } of related) {
      if (types.get(key(organizationId, dataTypeId))?.version !== version) throw dataTypeConflicts.relatedChanged();
    }
  }

  function checkGuards(dataType: DataType) {
    const owner = names.get(key(dataType.organizationId, dataType.name.toLowerCase()));
    if (owner !== undefined && owner !== dataType._id) throw dataTypeConflicts.nameTaken(dataType.name);
    if (dataType.extends) {
      const extensionOwner = extensions.get(key(dataType.organizationId, dataType.extends.entity));
      if (extensionOwner !== undefined && extensionOwner !== dataType._id) throw dataTypeConflicts.extensionTaken(dataType.extends.entity);
    }
  }

  function unguard(dataType: DataType) {
    names.delete(key(dataType.organizationId, dataType.name.toLowerCase()));
    if (dataType.extends) extensions.delete(key(dataType.organizationId, dataType.extends.entity));
  }

  function guard(dataType: DataType) {
    names.set(key(dataType.organizationId, dataType.name.toLowerCase()), dataType._id);
    if (dataType.extends) extensions.set(key(dataType.organizationId, dataType.extends.entity), dataType._id);
  }

  const store: DataTypeStore = {
    async findById(organizationId, dataTypeId) {
      const found = types.get(key(organizationId, dataTypeId));
      return found && clone(found);
    },
    async findByName(organizationId, name) {
      const id = names.get(key(organizationId, name.toLowerCase()));
      return id === undefined ? undefined : store.findById(organizationId, id);
    },
    async create(dataType, related) {
      checkGuards(dataType);
      checkRelated(dataType.organizationId, related);
      types.set(key(dataType.organizationId, dataType._id), { dataType: clone(dataType), version: 1 });
      guard(dataType);
    },
    async replace(next, previous, expectedVersion, related) {
      const current = types.get(key(next.organizationId, next._id));
      if (!current) throw new NotFoundError();
      if (current.version !== expectedVersion) throw new ConflictError("changed", "sys-410");
      checkGuards(next);
      checkRelated(next.organizationId, related);
      unguard(previous);
      types.set(key(next.organizationId, next._id), { dataType: clone(next), version: expectedVersion + 1 });
      guard(next);
    },
    async removeUnlessRecords(dataType, expectedVersion) {
      const current = types.get(key(dataType.organizationId, dataType._id));
      if (!current || current.version !== expectedVersion) throw new NotFoundError();
      if ((recordCounts.get(key(dataType.organizationId, dataType._id)) ?? 0) > 0) return "has-records";
      types.delete(key(dataType.organizationId, dataType._id));
      unguard(dataType);
      return "deleted";
    },
    async list(organizationId, filter) {
      const items = [...types.values()]
        .map((entry) => entry.dataType)
        .filter((dataType) => dataType.organizationId === organizationId)
        .filter((dataType) => filter.namePrefix === undefined || dataType.name.toLowerCase().startsWith(filter.namePrefix.toLowerCase()))
        .sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
      return { items: items.slice(0, filter.limit).map(clone), nextCursor: null };
    },
  };

  return {
    store,
    /** Test hooks: what the import (locked, legacy flags) and the records area would change. */
    mutate(organizationId: string, dataTypeId: string, change: (dataType: DataType) => void) {
      const entry = types.get(key(organizationId, dataTypeId));
      if (!entry) throw new Error("no such data type");
      change(entry.dataType);
      entry.version += 1;
    },
    setRecordCount(organizationId: string, dataTypeId: string, count: number) {
      recordCounts.set(key(organizationId, dataTypeId), count);
    },
    raw(organizationId: string, dataTypeId: string) {
      return types.get(key(organizationId, dataTypeId));
    },
  };
}
