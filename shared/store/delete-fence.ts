/**
 * The data type delete fence, apart from the data type store so that record and entity writes
 * (which check it) do not load the data type schemas.
 */
/** Delete fence (shared/store/data-type-store.ts removeUnlessRecords): record writes made after it was set must fail. */
export const DELETE_FENCE_ATTRIBUTE = "deletingSince";
/** A fence older than this is stale (its delete crashed): record writes ignore it. */
export const DELETE_FENCE_TTL_MS = 60_000;
