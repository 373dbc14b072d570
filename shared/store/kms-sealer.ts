import type { SecretSealer } from "#shared/domain/webhooks/sealing";

/**
 * Webhook secrets encrypted by the stack's KMS key (Encrypt/Decrypt of the secret itself: it is
 * far below KMS's 4 KiB plaintext limit). The subscription is the encryption context, which KMS
 * requires again to decrypt and records in CloudTrail. The item keeps `kms.<base64 ciphertext>`.
 */
export function kmsSealer(keyId: string): SecretSealer {
  const load = async () => {
    const sdk = await import("@aws-sdk/client-kms");
    return { sdk, client: new sdk.KMSClient({}) };
  };
  let loaded: ReturnType<typeof load> | undefined;
  return {
    async seal(plain, context) {
      loaded ??= load();
      const { sdk, client } = await loaded;
      const output = await client.send(
        new sdk.EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plain, "utf8"), EncryptionContext: { subscription: context } }),
      );
      return `kms.${Buffer.from(output.CiphertextBlob as Uint8Array).toString("base64")}`;
    },
    async open(sealed, context) {
      if (!sealed.startsWith("kms.")) throw new Error("the secret was not sealed by KMS");
      loaded ??= load();
      const { sdk, client } = await loaded;
      const output = await client.send(
        new sdk.DecryptCommand({
          KeyId: keyId,
          CiphertextBlob: Buffer.from(sealed.slice(4), "base64"),
          EncryptionContext: { subscription: context },
        }),
      );
      return Buffer.from(output.Plaintext as Uint8Array).toString("utf8");
    },
  };
}
