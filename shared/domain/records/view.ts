import type { DataType } from "#shared/domain/data-types/schema";
import type { RecordView, StoredRecord } from "#shared/domain/records/schema";
import { isTitleField, ownValue } from "#shared/domain/records/values";

export interface Projection {
  /** Fields the caller's token hides (view/data permissionDetails): left out. */
  hidden: ReadonlySet<string>;
  /** `fields` query: only these keys (plus `_id` and `dataId`). */
  fields?: string[] | undefined;
}

/**
 * A stored record as returned: `{ _id, dataId, dataTypeId, data_type, hubId, <fields in the
 * type's order>, organizationId, createdBy, createdTime, updatedTime }`, hidden fields removed,
 * projected to `fields` when given. `resolved` holds the hasOne/hasMany values read for it.
 */
export function buildView(dataType: DataType, record: StoredRecord, resolved: Record<string, unknown>, projection: Projection): RecordView {
  const full: Record<string, unknown> = {
    _id: record._id,
    dataId: record.dataId,
    dataTypeId: record.dataTypeId,
    data_type: { _id: dataType._id, name: dataType.name },
    hubId: record.hubId,
  };
  for (const field of dataType.fields) {
    if (isTitleField(field)) continue;
    if (Object.hasOwn(resolved, field.id)) full[field.id] = resolved[field.id];
    else if (ownValue(record.values, field.id) !== undefined) full[field.id] = record.values[field.id];
  }
  Object.assign(full, {
    organizationId: record.organizationId,
    createdBy: record.createdBy,
    createdTime: record.createdTime,
    updatedTime: record.updatedTime,
  });
  const wanted = projection.fields ? new Set(["_id", "dataId", ...projection.fields]) : undefined;
  const view: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(full)) {
    if (projection.hidden.has(key) && key !== "_id" && key !== "dataId") continue;
    if (wanted && !wanted.has(key)) continue;
    view[key] = value;
  }
  return view as RecordView;
}
