import { describe, expect, it } from "vitest";
import { PROOF_MAX_BYTES, proofOf, proofUploadRequestSchema, unmetRequirements } from "#shared/domain/visits/proofs";

/** The pure rules of proof of delivery: what `complete` lacks, and when an uploaded object is a proof. */
describe("proof of delivery rules", () => {
  const all = { photo: true, signature: true, notes: true };

  it("names each unmet requirement, in a fixed order; none when nothing is required", () => {
    expect(unmetRequirements(all, { proofs: [], notes: undefined })).toEqual(["photo", "signature", "notes"]);
    expect(unmetRequirements(all, { proofs: [{ kind: "document" }], notes: "  " })).toEqual(["photo", "signature", "notes"]);
    expect(unmetRequirements(all, { proofs: [{ kind: "signature" }, { kind: "photo" }], notes: "ok" })).toEqual([]);
    expect(unmetRequirements({ photo: false, signature: false, notes: false }, { proofs: [], notes: null })).toEqual([]);
  });

  it("takes an object as a proof only with its kind, a type of that kind and 1 byte to 10 MB", () => {
    const at = "2026-11-27T09:00:00.000Z";
    expect(proofOf("p1", { kind: "photo", contentType: "image/png", sizeBytes: 10 }, at)).toEqual({
      proofId: "p1",
      kind: "photo",
      contentType: "image/png",
      sizeBytes: 10,
      recordedAt: at,
    });
    expect(proofOf("p1", { kind: undefined, contentType: "image/png", sizeBytes: 10 }, at)).toMatch(/no proof kind/);
    expect(proofOf("p1", { kind: "selfie", contentType: "image/png", sizeBytes: 10 }, at)).toMatch(/no proof kind/);
    expect(proofOf("p1", { kind: "signature", contentType: "application/pdf", sizeBytes: 10 }, at)).toMatch(/application\/pdf/);
    expect(proofOf("p1", { kind: "document", contentType: "application/pdf", sizeBytes: 10 }, at)).toMatchObject({ kind: "document" });
    expect(proofOf("p1", { kind: "photo", contentType: "image/jpeg", sizeBytes: PROOF_MAX_BYTES + 1 }, at)).toMatch(/10 MB/);
    expect(proofOf("p1", { kind: "photo", contentType: "image/jpeg", sizeBytes: 0 }, at)).toMatch(/empty/);
  });

  it("asks for a form only for a type the kind takes", () => {
    expect(proofUploadRequestSchema.safeParse({ kind: "photo", contentType: "application/pdf", sizeBytes: 1 }).success).toBe(false);
    expect(proofUploadRequestSchema.safeParse({ kind: "document", contentType: "application/pdf", sizeBytes: 1 }).success).toBe(true);
    expect(proofUploadRequestSchema.safeParse({ kind: "signature", contentType: "image/png", sizeBytes: PROOF_MAX_BYTES }).success).toBe(
      true,
    );
  });
});
