import { toImportView } from "#shared/domain/data-types/import-state";
import type { DataType, DataTypeView } from "#shared/domain/data-types/schema";

/**
 * The provider key is a credential: responses carry `****` plus at most its last 4 characters
 * (none for keys shorter than 12, so short keys reveal nothing).
 */
export function maskProviderKey(key: string): string {
  return key.length >= 12 ? `****${key.slice(-4)}` : "****";
}

/** What a client sees of a stored data type: the key masked, internal flags left out. */
export function toDataTypeView(dataType: DataType): DataTypeView {
  const { titleRule: _internal, import: importState, ...rest } = dataType;
  const view: DataTypeView = importState ? { ...rest, import: toImportView(importState) } : rest;
  const providerConfig = dataType.providerConfig;
  // Same key order as stored; only the key is replaced.
  view.providerConfig =
    providerConfig === null
      ? null
      : { url: providerConfig.url, ...(providerConfig.key !== undefined ? { key: maskProviderKey(providerConfig.key) } : {}) };
  return view;
}
