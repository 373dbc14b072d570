import type { CachedMatrix, TravelMatrixCache } from "#shared/domain/travel/road-matrix";
import { bucketName, s3Sdk } from "#shared/blob/s3-sdk";
import { objectKeys } from "#shared/store/keys";

/**
 * The travel matrix cache of one hub and provider: one S3 object (`travelMatrixCache` key) holding the
 * last run's directed matrix. Binary, to stay small (1,650 points: 2 × 1,650² × 4 bytes ≈ 22 MB):
 * a little-endian u32 header length, the JSON header `{ version, keys, fetchedAt }`, padding to 4
 * bytes, then the Float32 durations (seconds) and distances (metres), row-major. Matrices are built
 * in Float32 too, so a cached run plans with exactly the numbers a fresh one did.
 */
const FORMAT_VERSION = 1;

export function encodeCachedMatrix(matrix: CachedMatrix): Uint8Array {
  const header = new TextEncoder().encode(JSON.stringify({ version: FORMAT_VERSION, keys: matrix.keys, fetchedAt: matrix.fetchedAt }));
  const offset = Math.ceil((4 + header.length) / 4) * 4;
  const cells = matrix.keys.length ** 2;
  const bytes = new Uint8Array(offset + 8 * cells);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 4);
  bytes.set(new Uint8Array(matrix.durationsSeconds.buffer, matrix.durationsSeconds.byteOffset, 4 * cells), offset);
  bytes.set(new Uint8Array(matrix.distancesMetres.buffer, matrix.distancesMetres.byteOffset, 4 * cells), offset + 4 * cells);
  return bytes;
}

/** The matrix, or undefined for anything this version did not write (another format, a truncated object). */
export function decodeCachedMatrix(bytes: Uint8Array): CachedMatrix | undefined {
  if (bytes.length < 4) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  if (4 + headerLength > bytes.length) return undefined;
  let header: { version?: number; keys?: string[]; fetchedAt?: number[] };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength)));
  } catch {
    return undefined;
  }
  if (
    header.version !== FORMAT_VERSION ||
    !Array.isArray(header.keys) ||
    !Array.isArray(header.fetchedAt) ||
    header.fetchedAt.length !== header.keys.length
  )
    return undefined;
  const offset = Math.ceil((4 + headerLength) / 4) * 4;
  const cells = header.keys.length ** 2;
  if (bytes.length !== offset + 8 * cells) return undefined;
  // Copied out, aligned, whatever buffer the SDK handed over.
  const copy = bytes.slice(offset);
  return {
    keys: header.keys,
    fetchedAt: header.fetchedAt,
    durationsSeconds: new Float32Array(copy.buffer, 0, cells),
    distancesMetres: new Float32Array(copy.buffer, 4 * cells, cells),
  };
}

export function s3MatrixCache(organizationId: string, hubId: string, provider: string): TravelMatrixCache {
  const key = objectKeys.travelMatrixCache(organizationId, hubId, provider);
  return {
    async read() {
      const { client, sdk } = await s3Sdk();
      try {
        const output = await client.send(new sdk.GetObjectCommand({ Bucket: bucketName(), Key: key }));
        const bytes = await output.Body?.transformToByteArray();
        return bytes ? decodeCachedMatrix(bytes) : undefined;
      } catch (error) {
        if (error instanceof Error && (error.name === "NoSuchKey" || error.name === "NotFound")) return undefined;
        throw error;
      }
    },
    async write(matrix) {
      const { client, sdk } = await s3Sdk();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: bucketName(),
          Key: key,
          Body: encodeCachedMatrix(matrix),
          ContentType: "application/octet-stream",
        }),
      );
    },
  };
}
