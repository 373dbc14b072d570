/**
 * The one module that builds DynamoDB keys. Every tenant partition key starts with the
 * organization id (`ORG#<org>`), so no key built here can reach another organization's items.
 *
 * Components that may contain user text are escaped (`%` → `%25`, `#` → `%23`) so a value can never
 * forge an extra key segment.
 *
 * | item                     | PK                       | SK                         | GSI1 (PK / SK)                              | GSI2 (PK / SK)                     |
 * |--------------------------|--------------------------|----------------------------|---------------------------------------------|------------------------------------|
 * | data type                | ORG#o                    | DT#id                      | ORG#o#DTNAME / <lowercased name>\u0001id   |                                    |
 * | data type name guard     | ORG#o                    | DTNAME#<lowercased name>   |                                             |                                    |
 * | extension guard          | ORG#o                    | DTEXT#<entity>             |                                             |                                    |
 * | record                   | ORG#o#DT#id              | REC#<hub or *>#<dataId>    | ORG#o#RECORDS / <record id>                 | ORG#o#DATAID#<dataId> / <dt>#<hub or *> |
 * | unique guard             | ORG#o#DT#id#UQ           | <field>#<scope>#<value>    |                                             |                                    |
 * | record ref (id → key)    | ORG#o#REC#<record id>    | REF                        |                                             |                                    |
 * | record search token      | ORG#o#TOK#<first char>   | <token>#<dt>#<hub or *>#<dataId> |                                       |                                    |
 * | search repair marker     | ORG#o#SEARCHREPAIR       | <record id>                |                                             |                                    |
 * | relation link            | ORG#o#REL#<target id>    | <source dt>#<field>#<source id> |                                        |                                    |
 * | entity custom values (user, role, flow) | ORG#o     | EXT#<entity>#<entity id>   |                                             |                                    |
 * | vehicle                  | ORG#o                    | VEH#id                     | ORG#o#HUB#h#VEH / VEH#id                    |                                    |
 * | hub (+ legacy counts)    | ORG#o                    | HUB#id                     |                                             |                                    |
 * | hub reference marker     | ORG#o#HUB#h              | VEHREF#id / CONFREF#id     |                                             |                                    |
 * | routing schedule         | ORG#o                    | SCHED#id                   | DUE#<shard> / <next run minute>#o#id        | ORG#o#CONF#c#SCHED / SCHED#id      |
 * | schedule run claim       | ORG#o#SCHED#id           | RUN#<slot>                 |                                             |                                    |
 * | active runs (cap leases) | ORG#o                    | ACTIVERUNS                 |                                             |                                    |
 * | worker slots (leases)    | ORG#o                    | WORKSLOTS#<pool>           |                                             |                                    |
 * | configuration profile    | ORG#o                    | CONF#id                    | ORG#o#HUB#h#CONF / CONF#id                  |                                    |
 * | profile schedule count   | ORG#o                    | CONFREFS#id                |                                             |                                    |
 * | visit                    | ORG#o#HUB#h              | VISIT#id                   | ORG#o#HUB#h#ACTIVE / <created id> (sparse)  | ORG#o#VISIT / VISIT#id             |
 * | visit lookup (id → hub)  | ORG#o                    | VISITREF#id                |                                             |                                    |
 * | visit status change      | ORG#o#VISIT#id#HIST      | H#<version, 10 digits>     |                                             |                                    |
 * | vehicle's current stop   | ORG#o#VEH#v              | CURRENTSTOP                |                                             |                                    |
 * | vehicle's live route     | ORG#o#VEH#v              | LIVEROUTE                  | ORG#o#HUB#h#LIVE / VEH#v                    |                                    |
 * | vehicle's position state | ORG#o#VEH#v              | POSITION                   |                                             |                                    |
 * | position sample (TTL)    | ORG#o#VEH#v              | POS#<at, ISO UTC ms>       |                                             |                                    |
 * | routing result           | ORG#o                    | RES#id                     | ORG#o#HUB#h#RES / RES#id                    |                                    |
 * | re-optimization lock     | ORG#o                    | REOPT#<hub id>             |                                             |                                    |
 * | app integration          | ORG#o                    | APPINT#id                  |                                             |                                    |
 * | webhook subscription     | ORG#o                    | WEBHOOK#id                 |                                             |                                    |
 * | webhook count            | ORG#o                    | WEBHOOKCOUNT               |                                             |                                    |
 * | webhook delivery (TTL)   | ORG#o#WEBHOOK#id         | DELIVERY#<delivery id>     |                                             |                                    |
 * | tenant                   | ORG#o                    | TENANT                     | TENANTS / o                                 |                                    |
 * | call counter (local)     | ORG#o#USAGE              | CALLS#<YYYY-MM-DD>         |                                             |                                    |
 * | run usage                | ORG#o#USAGE              | RUN#<YYYY-MM-DD>#<run id>  |                                             |                                    |
 * | run seconds of a month   | ORG#o#USAGE              | RUNSECONDS#<YYYY-MM>       |                                             |                                    |
 * | active imports (leases)  | ORG#o                    | ACTIVEIMPORTS              |                                             |                                    |
 * | import usage             | ORG#o#USAGE              | IMPORT#<YYYY-MM-DD>#<dt id>|                                             |                                    |
 * | import records of a month| ORG#o#USAGE              | IMPORTRECORDS#<YYYY-MM>    |                                             |                                    |
 * | position samples of month| ORG#o#USAGE              | POSITIONS#<YYYY-MM>        |                                             |                                    |
 * | webhook attempts of a day| ORG#o#USAGE              | WEBHOOKS#<YYYY-MM-DD>      |                                             |                                    |
 * | idempotency record       | ORG#o#IDEM               | <operationId>#<key digest> |                                             |                                    |
 */
export interface ItemKey {
  PK: string;
  SK: string;
}

export function keyPart(value: string): string {
  return value.replaceAll("%", "%25").replaceAll("#", "%23");
}

const org = (organizationId: string) => `ORG#${keyPart(organizationId)}`;

export const keys = {
  organizationPartition: org,

  // Data types
  dataType: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `DT#${id}` }),
  dataTypePrefix: "DT#",
  dataTypeNameGuard: (o: string, name: string): ItemKey => ({ PK: org(o), SK: `DTNAME#${keyPart(name.toLowerCase())}` }),
  dataTypeExtensionGuard: (o: string, entity: string): ItemKey => ({ PK: org(o), SK: `DTEXT#${keyPart(entity)}` }),
  /** GSI1 of data type items: the organization's types sorted by lowercased name. */
  dataTypesByName: (o: string) => `${org(o)}#DTNAME`,
  /** `<lowercased name>\u0001<id>`: the separator sorts below every name character, so "a" lists before "a b". */
  dataTypeNameSortKey: (name: string, id: string) => `${keyPart(name.toLowerCase())}\u0001${id}`,

  // Data source records
  recordPartition: (o: string, dataTypeId: string) => `${org(o)}#DT#${dataTypeId}`,
  record: (o: string, dataTypeId: string, hubScope: string, dataId: string): ItemKey => ({
    PK: `${org(o)}#DT#${dataTypeId}`,
    SK: `REC#${keyPart(hubScope)}#${keyPart(dataId)}`,
  }),
  uniqueGuard: (o: string, dataTypeId: string, field: string, scope: string, value: string): ItemKey => ({
    PK: `${org(o)}#DT#${dataTypeId}#UQ`,
    SK: `${keyPart(field)}#${keyPart(scope)}#${keyPart(value)}`,
  }),
  /** GSI2 of record items: every (type, hub) holding a dataId, so GET /data/{dataId} needs no scan. */
  recordsByDataId: (o: string, dataId: string) => `${org(o)}#DATAID#${keyPart(dataId)}`,
  recordsByDataIdSortKey: (dataTypeId: string, hubScope: string) => `${dataTypeId}#${keyPart(hubScope)}`,
  /** GSI1 partition of every stored record of the organization, sort key the record `_id` (time-ordered): GET /data without a type. */
  organizationRecordsPartition: (o: string) => `${org(o)}#RECORDS`,
  /** Lookup item: which type and key hold a record `_id` (relation targets), read consistently. */
  recordRef: (o: string, recordId: string): ItemKey => ({ PK: `${org(o)}#REC#${recordId}`, SK: "REF" }),
  /**
   * Search token items (shared/store/record-search.ts): ONE item per (word, record) in the
   * organization's partition of the word's first character, so `q` with or without a type is one
   * range read `begins_with(SK, <word>)` (a type filters on `dataTypeId`). The sort key names the
   * record's key (type, hub scope, dataId): a record moving key writes new token items and never
   * re-points one another writer may still rely on.
   */
  organizationTokenPartition: (o: string, token: string) => `${org(o)}#TOK#${keyPart(Array.from(token)[0] ?? "")}`,
  searchToken: (o: string, token: string, dataTypeId: string, hubScope: string, dataId: string): ItemKey => ({
    PK: `${org(o)}#TOK#${keyPart(Array.from(token)[0] ?? "")}`,
    SK: `${keyPart(token)}#${dataTypeId}#${keyPart(hubScope)}#${keyPart(dataId)}`,
  }),
  /**
   * Token items of the earlier layout (type partition, GSI1 entry per token): never written, only
   * deleted by a record's next write or by the re-index (docs/operations.md, "Search index layout").
   */
  legacyRecordToken: (o: string, dataTypeId: string, token: string, recordId: string): ItemKey => ({
    PK: `${org(o)}#DT#${dataTypeId}#TOK`,
    SK: `${keyPart(token)}#${recordId}`,
  }),
  /** A record whose token writes failed: the organization's next `q` re-indexes it (shared/store/record-tokens.ts). */
  searchRepairMarker: (o: string, recordId: string): ItemKey => ({ PK: `${org(o)}#SEARCHREPAIR`, SK: recordId }),
  /** Relation link items: records whose belongsTo/belongsToMany field names the target record (hasOne/hasMany reads). */
  relationLinkPartition: (o: string, targetRecordId: string) => `${org(o)}#REL#${targetRecordId}`,
  relationLinkPrefix: (sourceDataTypeId: string, fieldId: string) => `${sourceDataTypeId}#${keyPart(fieldId)}#`,
  relationLink: (o: string, targetRecordId: string, sourceDataTypeId: string, fieldId: string, sourceRecordId: string): ItemKey => ({
    PK: `${org(o)}#REL#${targetRecordId}`,
    SK: `${sourceDataTypeId}#${keyPart(fieldId)}#${sourceRecordId}`,
  }),

  // Custom values of identity-provider entities (vehicles and hubs keep theirs on their own item)
  entityExtension: (o: string, entity: string, entityId: string): ItemKey => ({
    PK: org(o),
    SK: `EXT#${keyPart(entity)}#${keyPart(entityId)}`,
  }),

  // Vehicles
  vehicle: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `VEH#${id}` }),
  vehiclePrefix: "VEH#",
  vehiclesByHub: (o: string, hubId: string) => `${org(o)}#HUB#${keyPart(hubId)}#VEH`,

  // Hubs
  hub: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `HUB#${id}` }),
  hubPrefix: "HUB#",
  /** The hub's own partition: its visits and one reference marker per vehicle and profile naming it. */
  hubPartition: (o: string, hubId: string) => `${org(o)}#HUB#${keyPart(hubId)}`,
  /** Marker of a vehicle (`VEHREF#`) or profile (`CONFREF#`) naming the hub; visits live in the partition themselves. */
  hubReferenceMarker: (o: string, hubId: string, prefix: string, childId: string): ItemKey => ({
    PK: `${org(o)}#HUB#${keyPart(hubId)}`,
    SK: `${prefix}${childId}`,
  }),

  // Routing schedules and their runs
  schedule: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `SCHED#${id}` }),
  schedulePrefix: "SCHED#",
  schedulesByConfiguration: (o: string, configurationId: string) => `${org(o)}#CONF#${keyPart(configurationId)}#SCHED`,
  /** Due index partition: schedules are spread over a few shards so one hot minute is not one hot partition. */
  dueShard: (shard: number) => `DUE#${shard}`,
  /** Due index sort key: the next run minute (ISO, UTC) first, so `<= now` is one range read per shard. */
  dueSortKey: (nextRunMinuteIso: string, o: string, scheduleId: string) => `${nextRunMinuteIso}#${keyPart(o)}#${scheduleId}`,
  scheduleRunClaim: (o: string, scheduleId: string, slot: string): ItemKey => ({ PK: `${org(o)}#SCHED#${scheduleId}`, SK: `RUN#${slot}` }),
  /** The organization's queued or running runs (a map run key → lease end), for the cap on active runs. */
  activeRuns: (o: string): ItemKey => ({ PK: org(o), SK: "ACTIVERUNS" }),
  /** The tenant's leases of one worker pool's slots (shared/queue/fair-worker.ts); `pool` names the SQS worker. */
  workerSlots: (o: string, pool: string): ItemKey => ({ PK: org(o), SK: `WORKSLOTS#${keyPart(pool)}` }),

  // Configuration profiles, visits, results, app integrations
  configuration: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `CONF#${id}` }),
  configurationPrefix: "CONF#",
  /** How many schedules name the profile (`scheduleRefs`); its own item, so replacing the profile keeps it. */
  configurationScheduleRefs: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `CONFREFS#${id}` }),
  configurationsByHub: (o: string, hubId: string) => `${org(o)}#HUB#${keyPart(hubId)}#CONF`,
  visit: (o: string, hubId: string, id: string): ItemKey => ({ PK: `${org(o)}#HUB#${keyPart(hubId)}`, SK: `VISIT#${id}` }),
  visitPrefix: "VISIT#",
  activeVisits: (o: string, hubId: string) => `${org(o)}#HUB#${keyPart(hubId)}#ACTIVE`,
  /** GSI2 of visit items: every visit of the organization, by id (= creation time). */
  visitsOfOrganization: (o: string) => `${org(o)}#VISIT`,
  /** Lookup item: which hub partition holds the visit, so GET /visit/{id} needs no hubId. */
  visitRef: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `VISITREF#${id}` }),
  /** A visit's status changes (its history): one partition per visit, ordered by the version each change produced. */
  visitHistoryPartition: (o: string, visitId: string) => `${org(o)}#VISIT#${visitId}#HIST`,
  visitHistory: (o: string, visitId: string, version: number): ItemKey => ({
    PK: `${org(o)}#VISIT#${visitId}#HIST`,
    SK: `H#${String(version).padStart(10, "0")}`,
  }),
  /** The vehicle's own partition (live execution): its current stop, live route and positions. */
  vehiclePartition: (o: string, vehicleId: string) => `${org(o)}#VEH#${keyPart(vehicleId)}`,
  /** The one visit the vehicle is heading to or at (EN_ROUTE/ARRIVED): at most one per vehicle. */
  vehicleCurrentStop: (o: string, vehicleId: string): ItemKey => ({ PK: `${org(o)}#VEH#${keyPart(vehicleId)}`, SK: "CURRENTSTOP" }),
  /** The visits the last dispatch gave the vehicle, in order; GSI1 lists a hub's live routes for runs. */
  vehicleLiveRoute: (o: string, vehicleId: string): ItemKey => ({ PK: `${org(o)}#VEH#${keyPart(vehicleId)}`, SK: "LIVEROUTE" }),
  liveRoutesOfHub: (o: string, hubId: string) => `${org(o)}#HUB#${keyPart(hubId)}#LIVE`,
  /** The vehicle's latest position, its report rate window and its prepaid sample allowance (one item, written once per report). */
  vehiclePositionState: (o: string, vehicleId: string): ItemKey => ({ PK: `${org(o)}#VEH#${keyPart(vehicleId)}`, SK: "POSITION" }),
  /** One position sample, keyed by its time (UTC, milliseconds): a sample sent again overwrites itself identically. */
  vehiclePositionSample: (o: string, vehicleId: string, atIso: string): ItemKey => ({
    PK: `${org(o)}#VEH#${keyPart(vehicleId)}`,
    SK: `POS#${atIso}`,
  }),
  vehiclePositionSamplePrefix: "POS#",
  /** Claim item of a pickup-and-delivery pair: the pickup's id → its one delivery (`deliveryVisitId`). */
  pickupClaim: (o: string, pickupId: string): ItemKey => ({ PK: org(o), SK: `PICKUP#${pickupId}` }),
  routingResult: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `RES#${id}` }),
  routingResultPrefix: "RES#",
  /** GSI1 of routing result items: a hub's results by id (= creation time). */
  routingResultsByHub: (o: string, hubId: string) => `${org(o)}#HUB#${keyPart(hubId)}#RES`,
  /** The hub's one re-optimization at a time: `resultId` holding it until `leaseUntil` (epoch ms). */
  reoptimizeLock: (o: string, hubId: string): ItemKey => ({ PK: org(o), SK: `REOPT#${keyPart(hubId)}` }),
  appIntegration: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `APPINT#${id}` }),
  appIntegrationPrefix: "APPINT#",
  webhook: (o: string, id: string): ItemKey => ({ PK: org(o), SK: `WEBHOOK#${keyPart(id)}` }),
  webhookPrefix: "WEBHOOK#",
  /** How many subscriptions the organization has (`count`): the plan cap's guard, written with every create and delete. */
  webhookCount: (o: string): ItemKey => ({ PK: org(o), SK: "WEBHOOKCOUNT" }),
  /** One item per (event, subscription): its status, attempts and last answer (GET /webhook/{id}/deliveries). */
  webhookDelivery: (o: string, webhookId: string, deliveryId: string): ItemKey => ({
    PK: `${org(o)}#WEBHOOK#${keyPart(webhookId)}`,
    SK: `DELIVERY#${keyPart(deliveryId)}`,
  }),
  webhookDeliveriesOf: (o: string, webhookId: string) => `${org(o)}#WEBHOOK#${keyPart(webhookId)}`,
  webhookDeliveryPrefix: "DELIVERY#",

  // Tenants (shared/domain/tenants/plans.ts) and metering
  /** The tenant record of an enrolled organization; GSI1 lists every tenant for the operator's CLI. */
  tenant: (o: string): ItemKey => ({ PK: org(o), SK: "TENANT" }),
  tenantsIndexPartition: "TENANTS",
  /** Usage partition of an organization: call counters, run usage items and run-seconds totals. */
  usagePartition: (o: string) => `${org(o)}#USAGE`,
  /** Calls counted on one UTC day (`YYYY-MM-DD`): attribute `calls` (local gateway; AWS counts in the usage plan). */
  callCounter: (o: string, day: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `CALLS#${day}` }),
  /** One item per routing run, by the UTC day it ended, so a date range is one range read. */
  runUsage: (o: string, day: string, runId: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `RUN#${day}#${runId}` }),
  runUsagePrefix: "RUN#",
  /** Webhook delivery attempts of one UTC day (a counter updated alone, never in a transaction). */
  webhookAttemptUsage: (o: string, day: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `WEBHOOKS#${day}` }),
  /** Optimizer seconds used in one UTC month (`YYYY-MM`): attribute `seconds`, for the run-seconds quota. */
  runSecondsTotal: (o: string, month: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `RUNSECONDS#${month}` }),
  /** Imports from the earlier version queued or running: attribute `imports`, a lease end (epoch ms) per imported data type id. */
  activeImports: (o: string): ItemKey => ({ PK: org(o), SK: "ACTIVEIMPORTS" }),
  /** One item per import, by the UTC day it started: the records it is charged. */
  importUsage: (o: string, day: string, dataTypeId: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `IMPORT#${day}#${dataTypeId}` }),
  importUsagePrefix: "IMPORT#",
  /** Records imports are charged in one UTC month (`YYYY-MM`): attribute `records`, for the import quota. */
  importRecordsTotal: (o: string, month: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `IMPORTRECORDS#${month}` }),
  /** Position samples vehicles reserved in one UTC month (`YYYY-MM`): attribute `samples`, in chunks, for the plan's cap. */
  positionSamplesTotal: (o: string, month: string): ItemKey => ({ PK: `${org(o)}#USAGE`, SK: `POSITIONS#${month}` }),

  // Idempotency records (shared/store/idempotency-store.ts); Powertools writes SK `<operationId>#<digest of the key>`.
  idempotencyPartition: (o: string) => `${org(o)}#IDEM`,
  idempotencySortKey: (operationId: string, keyDigest: string) => `${operationId}#${keyDigest}`,
} as const;

/** Attributes that belong to the storage layout, never to a resource returned to a client. */
export const storageAttributes = ["PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "expiresAt", "entity", "version"] as const;

export function withoutStorageAttributes<T extends Record<string, unknown>>(item: T): Omit<T, (typeof storageAttributes)[number]> {
  const copy: Record<string, unknown> = { ...item };
  for (const attribute of storageAttributes) delete copy[attribute];
  return copy as Omit<T, (typeof storageAttributes)[number]>;
}

/** S3 object keys: kind first, then the organization (`<kind>/<org>/…`, objectKinds below); result bodies and certificates of the earlier `org/<o>/<kind>/` layout are still read. */
export const objectKeys = {
  /** Stored in the integration's item (`objectKey`): certificates written under the earlier layout keep their key. */
  appIntegrationCertificate: (o: string, integrationId: string, objectId: string, fileName: string) =>
    `${objectKinds.certificates}${encodeURIComponent(o)}/${integrationId}/${objectId}/${encodeURIComponent(fileName)}`,
  routingResultBody: (o: string, resultId: string) => `${objectKinds.results}${encodeURIComponent(o)}/${resultId}.json`,
  /** Where result bodies written before the kind-first layout are (read when the new key has none; never written). */
  legacyRoutingResultBody: (o: string, resultId: string) => `org/${encodeURIComponent(o)}/routing-results/${resultId}.json`,
  /**
   * The road travel matrix cache of a hub and travel provider (shared/travel/matrix-cache.ts): kind
   * first like every object, so one lifecycle rule expires its old versions and IAM targets it.
   */
  travelMatrixCache: (o: string, hubId: string, provider: string) =>
    `${objectKinds.travelCache}${encodeURIComponent(o)}/${hubId}/${encodeURIComponent(provider)}.bin`,
  /** The bounded cache's index of blocks (shared/domain/travel/matrix-cache-index.ts); the `.bin` above is the format before it. */
  travelMatrixCacheIndex: (o: string, hubId: string, provider: string) =>
    `${objectKinds.travelCache}${encodeURIComponent(o)}/${hubId}/${encodeURIComponent(provider)}/index.json`,
  /** One block of the bounded cache: one run's matrix, in the `.bin` encoding. */
  travelMatrixCacheBlock: (o: string, hubId: string, provider: string, blockId: string) =>
    `${objectKinds.travelCache}${encodeURIComponent(o)}/${hubId}/${encodeURIComponent(provider)}/${blockId}.bin`,
  /** An export of the earlier version uploaded for an import (docs/api/legacy-import.md). */
  legacyExport: (o: string, uploadId: string) => `${objectKinds.imports}${encodeURIComponent(o)}/${uploadId}.jsonl`,
  /** IAM resource pattern of every organization's uploaded exports (the import functions' only objects). */
  legacyExportPattern: "imports/*",
  /**
   * A proof of delivery (docs/api/execution.md): derived from the organization, the visit and the
   * proof id only, never from a client's path; its kind and content type are on the object.
   */
  visitProof: (o: string, visitId: string, proofId: string) =>
    `${objectKinds.proofs}${encodeURIComponent(o)}/${encodeURIComponent(visitId)}/${proofId}`,
  /** IAM resource pattern (and ListBucket prefix) of every organization's proofs (the proof functions' only objects). */
  visitProofPattern: "proofs/*",
} as const;

/**
 * Object keys start with their kind, then the organization (`<kind>/<org>/…`), so lifecycle rules
 * (uploads expire, results may) and IAM (each function reaches only its kind) target a prefix.
 */
export const objectKinds = {
  imports: "imports/",
  certificates: "certificates/",
  results: "results/",
  travelCache: "travel-cache/",
  proofs: "proofs/",
} as const;
