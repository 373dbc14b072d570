/**
 * A stream record's image (DynamoDB's typed JSON: `{ "S": "…" }`, `{ "N": "1" }`, …) as plain
 * values, for the attribute types this table writes. Numbers become JS numbers (the stores write
 * none beyond 2^53), sets become arrays, binary stays base64 text.
 */
export type AttributeValue = Record<string, unknown>;

export function plainValue(value: AttributeValue): unknown {
  if ("S" in value) return value.S;
  if ("N" in value) return Number(value.N);
  if ("BOOL" in value) return value.BOOL;
  if ("NULL" in value) return null;
  if ("M" in value) return plainImage(value.M as Record<string, AttributeValue>);
  if ("L" in value) return (value.L as AttributeValue[]).map(plainValue);
  if ("SS" in value) return value.SS;
  if ("NS" in value) return (value.NS as string[]).map(Number);
  if ("B" in value) return value.B;
  return undefined;
}

export function plainImage(image: Record<string, AttributeValue> | undefined): Record<string, unknown> | undefined {
  if (!image) return undefined;
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, plainValue(value)]));
}
