import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Signing secrets at rest, never in clear: on AWS encrypted by the stack's KMS key
 * (shared/store/kms-sealer.ts), locally sealed with AES-256-GCM under a local key (below). Either
 * way the ciphertext is bound to the subscription (its organization and id are the encryption
 * context / additional authenticated data), so a sealed secret copied onto another item does not open.
 */
export interface SecretSealer {
  seal(plain: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
}

/** The local sealer: `v1.<iv>.<tag>.<ciphertext>` (base64url), AES-256-GCM under a 32-byte key the table never holds. */
export function aesGcmSealer(key: Buffer): SecretSealer {
  if (key.length !== 32) throw new Error("the webhook sealing key must be 32 bytes (base64 of 32 random bytes)");
  return {
    async seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v1", iv, cipher.getAuthTag(), body].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
    },
    async open(sealed, context) {
      const [version, iv = "", tag = "", body = ""] = sealed.split(".");
      if (version !== "v1") throw new Error("unknown sealed secret format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url")).setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}

export const sealingContext = (organizationId: string, webhookId: string) => `webhook:${organizationId}:${webhookId}`;
