import type { core } from "zod/mini";

type ZodType = core.$ZodType;

/**
 * One entry of the route table (functions/routes.ts). The same entry drives the CDK stack (one
 * function + REST method), the local gateway (dispatch) and the OpenAPI document (schemas).
 */
/** What a route's function may touch; the CDK stack turns each grant into the IAM actions below. */
export type RouteGrant =
  | "tableRead"
  | "tableWrite"
  | "bucketRead"
  | "bucketWrite"
  | "queueSend"
  // The legacy import (docs/api/legacy-import.md): only the uploaded exports (`org/*/imports/*`) and the import queue.
  | "importFileUpload"
  | "importFileRead"
  | "importFileDelete"
  | "importQueueSend"
  // Proof of delivery (docs/api/execution.md): only the proofs (`proofs/*`): sign an upload form, check a proof exists, sign a download.
  | "proofUpload"
  | "proofCheck"
  | "proofRead"
  // Webhooks (docs/api/webhooks.md): seal a new signing secret / open one to sign; send delivery attempts; put events on the stack's bus.
  | "webhookSecretSeal"
  | "webhookSecretOpen"
  | "webhookQueueSend"
  | "eventsPut"
  // Vehicle positions (docs/api/execution.md): a report's samples go to the history in one BatchWriteItem.
  | "positionHistoryWrite"
  // GET /v3/usage on AWS: the calls the usage plans counted for the caller's own key (GetUsagePlans by key, GetUsage).
  | "usagePlanRead";

const tableReadActions = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"] as const;

/**
 * The IAM actions of each grant: exactly the commands the stores send (GetCommand, BatchGetCommand,
 * QueryCommand; Put/Update/Delete and TransactWriteCommand, whose items need PutItem, UpdateItem,
 * DeleteItem and ConditionCheckItem; S3 Get/Put/DeleteObject, and Get/DeleteObjectVersion because
 * certificates are read and deleted by version id in the versioned bucket; SQS SendMessage and
 * SendMessageBatch, which is authorized as SendMessage). Never Scan; BatchWriteItem only through its
 * own grant (`positionHistoryWrite`: a position report's samples, unconditional puts keyed by the sample time). Writes include reads (a write reads the version it replaces); bucket writes include reads
 * (the response carries a presigned GET URL).
 */
export const routeGrantActions: Record<RouteGrant, readonly string[]> = {
  tableRead: tableReadActions,
  tableWrite: [...tableReadActions, "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"],
  bucketRead: ["s3:GetObject", "s3:GetObjectVersion"],
  bucketWrite: ["s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"],
  queueSend: ["sqs:SendMessage"],
  importFileUpload: ["s3:PutObject"],
  // ListBucket (on the bucket, never used to list) makes S3 answer a missing export 404 instead of 403
  // (HeadObject/GetObject "Permissions", S3 API reference), so an unknown uploadId is a client's 400.
  importFileRead: ["s3:GetObject", "s3:GetObjectVersion", "s3:ListBucket"],
  importFileDelete: ["s3:DeleteObject", "s3:DeleteObjectVersion"],
  importQueueSend: ["sqs:SendMessage"],
  proofUpload: ["s3:PutObject"],
  // HeadObject is authorized as GetObject; ListBucket (on the bucket, conditioned on the proofs/ prefix,
  // which S3 sets to the key for this check) makes a missing proof 404 instead of 403, so an unknown proofId is a client's 400.
  proofCheck: ["s3:GetObject", "s3:ListBucket"],
  proofRead: ["s3:GetObject"],
  webhookSecretSeal: ["kms:Encrypt"],
  webhookSecretOpen: ["kms:Decrypt"],
  webhookQueueSend: ["sqs:SendMessage"],
  eventsPut: ["events:PutEvents"],
  positionHistoryWrite: ["dynamodb:BatchWriteItem"],
  usagePlanRead: ["apigateway:GET"],
};

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteResponse {
  description: string;
  schema?: ZodType;
  /** Media type of this answer when it is not the JSON envelope (e.g. `text/html`); without `schema` the body is documented as a string. */
  contentType?: string;
  /** More media types the same status may answer, with their schemas (e.g. GeoJSON on `?format=geojson`). */
  alternatives?: Record<string, ZodType>;
  /**
   * The failedCodes this route's own logic answers with this status, beyond those every route of
   * its kind answers (shared/http/openapi.ts, `declaredFailures`). The OpenAPI document lists them
   * in the status's schema, and the HTTP suites fail on a (route, status, failedCode) not declared.
   */
  failedCodes?: readonly string[];
}

/** The modules a permission slug names; a slug is `<verb>/<module>`, like the spec's `view/routing-schedule`. */
export type PermissionModule =
  | "vehicle"
  | "vehicle-position"
  | "hub"
  | "visit"
  | "visit-progress"
  | "data-type"
  | "data"
  | "app-integration"
  | "routing-configuration"
  | "routing-result"
  | "routing-schedule"
  | "usage"
  | "extension"
  | "webhook";
export type PermissionVerb = "view" | "add" | "edit" | "delete";
export type PermissionSlug = `${PermissionVerb}/${PermissionModule}`;

/**
 * Who may call a route: the public OpenAPI document (`auth: "none"`, no permission), or a bearer
 * token that must list the route's permission slug — required by the type, so no route can be
 * added without one (a missing slug answers 403 `sys-035`).
 */
export type RouteAccess = { auth: "none"; permission?: never } | { auth?: "jwt"; permission: PermissionSlug };

interface RouteFields<TBody extends ZodType, TQuery extends ZodType, TParams extends ZodType> {
  /** Unique, camelCase; also the OpenAPI operationId and the CDK construct id. */
  operationId: string;
  method: HttpMethod;
  /** Path below the `/v3` stage, with `{param}` placeholders, e.g. `/vehicle/{vehicleId}`. */
  path: string;
  /** Handler module relative to the repository root; it must export `handler`. */
  handler: string;
  summary: string;
  description?: string;
  tag: string;
  /** Request body media type; `multipart/form-data` bodies arrive base64-encoded (binaryMediaTypes). */
  bodyType?: "application/json" | "multipart/form-data";
  /** Largest accepted body in bytes (413 beyond it). */
  maxBodyBytes?: number;
  body?: TBody;
  query?: TQuery;
  params?: TParams;
  /**
   * What each status answers, as a thunk: response schemas only document (the OpenAPI document is
   * rendered at bundle time), so a function never builds them at cold start.
   */
  responses: () => Record<number, RouteResponse>;
  /** Function settings that differ from the defaults. */
  function?: { timeoutSeconds?: number; memoryMb?: number };
  /** Resources the function may touch (least privilege): the table is read-only unless `tableWrite`. */
  grants?: RouteGrant[];
  /** Honours an `Idempotency-Key` header (shared/http/idempotency.ts); needs `tableWrite` for its records. */
  idempotent?: boolean;
  /** How long an Idempotency-Key's answer is kept (default 24 h): a driver app replays offline events for days. */
  idempotencyWindowSeconds?: number;
  /** GET answers the item's version as `ETag`; PUT/PATCH/DELETE honour `If-Match` (shared/domain/versions.ts). */
  versioned?: boolean;
}

export type RouteDefinition<
  TBody extends ZodType = ZodType,
  TQuery extends ZodType = ZodType,
  TParams extends ZodType = ZodType,
> = RouteFields<TBody, TQuery, TParams> & RouteAccess;

/** Identity helper that keeps the schema types of a route for handlers built from it. */
export function defineRoute<TBody extends ZodType, TQuery extends ZodType, TParams extends ZodType>(
  route: RouteDefinition<TBody, TQuery, TParams>,
): RouteDefinition<TBody, TQuery, TParams> {
  return route;
}

/** The binary media types of the REST API; the local gateway base64-encodes them like API Gateway. */
export const binaryMediaTypes = ["multipart/form-data"] as const;
