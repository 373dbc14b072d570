import * as z from "zod/mini";
import { ValidationError } from "#shared/domain/errors";
import { clientText, component, idSchema, storableNumber } from "#shared/domain/schemas";

/**
 * Proof of delivery (docs/api/execution.md, "Proof of delivery"): a driver uploads a photo, a
 * signature or a document straight to the file bucket through a presigned POST, then names it in
 * `proofIds` of a progress action; `complete` checks the visit's requirements against them.
 */
export const proofKinds = ["photo", "signature", "document"] as const;
export type ProofKind = (typeof proofKinds)[number];

export const proofContentTypes = ["image/jpeg", "image/png", "application/pdf"] as const;
export type ProofContentType = (typeof proofContentTypes)[number];

/** Photos and signatures are images; a document may also be a PDF. */
const contentTypesOfKind: Record<ProofKind, readonly ProofContentType[]> = {
  photo: ["image/jpeg", "image/png"],
  signature: ["image/jpeg", "image/png"],
  document: proofContentTypes,
};

/** The largest proof: a phone photo is a few MB; a signed PDF less. */
export const PROOF_MAX_BYTES = 10 * 1024 * 1024;
/** Proofs recorded on one visit (each progress action names at most 20 as well). */
export const MAX_PROOFS_PER_VISIT = 20;
/** How long a proof's download URL (GET /visit/{id}/proofs) works: long enough to open, short enough not to be a link to keep. */
export const PROOF_URL_TTL_SECONDS = 300;

/** What a visit requires before a driver may `complete` it; every one false by default. */
export const visitRequirementsInputSchema = z.strictObject({
  photo: z._default(
    z.boolean().check(z.describe("`complete` needs a `photo` proof (named in `proofIds`, or recorded on the visit before).")),
    false,
  ),
  signature: z._default(z.boolean().check(z.describe("`complete` needs a `signature` proof.")), false),
  notes: z._default(z.boolean().check(z.describe("`complete` needs non-empty `notes`.")), false),
});
export const noRequirements = { photo: false, signature: false, notes: false } as const;
export const visitRequirementsSchema = z.object({ photo: z.boolean(), signature: z.boolean(), notes: z.boolean() });
export type VisitRequirements = z.infer<typeof visitRequirementsSchema>;

/** A proof recorded on the visit by the progress action that named it. */
export const visitProofSchema = z.object({
  proofId: idSchema,
  kind: z.enum(proofKinds),
  contentType: z.enum(proofContentTypes),
  sizeBytes: z.number(),
  recordedAt: z.string().check(clientText, z.describe("When the action that named it happened (its `at`, ISO 8601, UTC).")),
});
export type VisitProof = z.infer<typeof visitProofSchema>;

/** POST /visit/{visitId}/proofs. */
export const proofUploadRequestSchema = z
  .strictObject({
    kind: z.enum(proofKinds),
    contentType: z
      .enum(proofContentTypes)
      .check(z.describe("photo and signature: image/jpeg or image/png; document: also application/pdf.")),
    sizeBytes: storableNumber().check(
      z.int(),
      z.minimum(1),
      z.maximum(PROOF_MAX_BYTES),
      z.describe("The file's size in bytes (at most 10 MB): the upload's policy takes no more."),
    ),
  })
  .check(
    z.superRefine((body, ctx) => {
      if (!contentTypesOfKind[body.kind].includes(body.contentType))
        ctx.addIssue({
          code: "custom",
          path: ["contentType"],
          message: `a ${body.kind} proof must be ${contentTypesOfKind[body.kind].join(" or ")}`,
        });
    }),
  );
export type ProofUploadRequest = z.infer<typeof proofUploadRequestSchema>;

export const proofUploadSchema = z.object({
  proofId: idSchema,
  visitId: z.string().check(clientText),
  kind: z.enum(proofKinds),
  contentType: z.enum(proofContentTypes),
  maxBytes: z.number().check(z.describe("The declared sizeBytes: the form takes 1 byte up to this.")),
  method: z.literal("POST").check(z.describe("A browser-style form upload (multipart/form-data) to `url`, no Authorization header.")),
  url: z.string().check(z.describe("Where to POST the form (the file bucket).")),
  fields: z
    .record(z.string(), z.string())
    .check(
      z.describe(
        "Form fields to send exactly as given (key, Content-Type, the proof's kind, Policy, signature…), then the file as the last field, `file`. S3 refuses (403) a file larger than `maxBytes` or empty, another Content-Type or kind, or a form sent after `expiresInSeconds`.",
      ),
    ),
  expiresInSeconds: z.number(),
});
export type ProofUpload = z.infer<typeof proofUploadSchema>;

export const proofDownloadSchema = z.extend(visitProofSchema, {
  url: z.string().check(z.describe("A presigned GET of the proof's object.")),
  expiresInSeconds: z.number(),
});
export type ProofDownload = z.infer<typeof proofDownloadSchema>;

/** The uploaded object as S3 describes it (HeadObject). */
export interface StoredProof {
  kind: string | undefined;
  contentType: string | undefined;
  sizeBytes: number;
}

/**
 * Persistence port of proof objects (S3 in shared/blob/proof-storage.ts). Keys are derived from the
 * organization, the visit and the proof id (shared/store/keys.ts `visitProof`), never from a client.
 */
export interface ProofStorage {
  /** A presigned POST that accepts only this key, 1 to `maxBytes` bytes, `contentType`, and the kind as metadata. */
  uploadTarget(
    organizationId: string,
    visitId: string,
    proofId: string,
    rules: { kind: ProofKind; contentType: ProofContentType; maxBytes: number },
  ): Promise<{ url: string; fields: Record<string, string>; expiresInSeconds: number }>;
  /** The object under the proof's key (HeadObject); undefined when nothing was uploaded there. */
  describe(organizationId: string, visitId: string, proofId: string): Promise<StoredProof | undefined>;
  /** A presigned GET of the proof's object. */
  downloadUrl(organizationId: string, visitId: string, proofId: string, expiresInSeconds: number): Promise<string>;
}

/** Wiring for the composition roots that never touch proofs: reaching it is a wiring mistake. */
export const noProofStorage: ProofStorage = {
  uploadTarget: () => Promise.reject(new Error("proof storage is not wired in this function")),
  describe: () => Promise.reject(new Error("proof storage is not wired in this function")),
  downloadUrl: () => Promise.reject(new Error("proof storage is not wired in this function")),
};

/** The stored object as a proof, or the reason it is not one (it was not uploaded through POST /visit/{id}/proofs as answered). */
export function proofOf(proofId: string, stored: StoredProof, recordedAt: string): VisitProof | string {
  const kind = proofKinds.find((each) => each === stored.kind);
  if (!kind) return `proof ${proofId} has no proof kind: upload it with the fields POST /visit/{visitId}/proofs answered`;
  const contentType = contentTypesOfKind[kind].find((each) => each === stored.contentType);
  if (!contentType) return `proof ${proofId} was uploaded as ${stored.contentType ?? "no content type"}, not a ${kind} type`;
  if (stored.sizeBytes < 1 || stored.sizeBytes > PROOF_MAX_BYTES) return `proof ${proofId} is empty or larger than 10 MB`;
  return { proofId, kind, contentType, sizeBytes: stored.sizeBytes, recordedAt };
}

/** The requirements a `complete` leaves unmet, given the visit's proofs (recorded and just named) and the action's notes. */
export function unmetRequirements(
  requirements: VisitRequirements,
  evidence: { proofs: readonly Pick<VisitProof, "kind">[]; notes: string | null | undefined },
): Array<keyof VisitRequirements> {
  const unmet: Array<keyof VisitRequirements> = [];
  if (requirements.photo && !evidence.proofs.some((proof) => proof.kind === "photo")) unmet.push("photo");
  if (requirements.signature && !evidence.proofs.some((proof) => proof.kind === "signature")) unmet.push("signature");
  if (requirements.notes && (evidence.notes ?? "").trim() === "") unmet.push("notes");
  return unmet;
}

const unmetMessages: Record<keyof VisitRequirements, string> = {
  photo: "this visit requires a photo proof: upload one (POST /visit/{visitId}/proofs) and name it in proofIds",
  signature: "this visit requires a signature proof: upload one (POST /visit/{visitId}/proofs) and name it in proofIds",
  notes: "this visit requires notes",
};

/** 400 naming each unmet requirement (`requirements.photo`, …). */
export function unmetRequirementsError(unmet: ReadonlyArray<keyof VisitRequirements>): ValidationError {
  return new ValidationError(unmet.map((name) => ({ field: `requirements.${name}`, message: unmetMessages[name] })));
}

// Named components of the OpenAPI document.
component("VisitProofUpload", proofUploadSchema);
component("VisitProof", proofDownloadSchema);
