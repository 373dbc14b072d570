/**
 * The OpenAPI document names its resources, error envelope and events in `components.schemas` and
 * refers to them by `$ref` (shared/http/openapi.ts). Tests that read a schema's properties, or
 * hand a schema to a JSON Schema reader that knows no OpenAPI document (`z.fromJSONSchema`),
 * read it with every `$ref` replaced by the component it names.
 */
type Json = unknown;

const PREFIX = "#/components/schemas/";

export function inlineRefs<T = Record<string, any>>(document: { components?: { schemas?: Record<string, Json> } }, schema: Json): T {
  const components = document.components?.schemas ?? {};
  const inline = (value: Json, trail: readonly string[]): Json => {
    if (Array.isArray(value)) return value.map((item) => inline(item, trail));
    if (value === null || typeof value !== "object") return value;
    const { $ref, ...rest } = value as Record<string, Json>;
    const entries = Object.entries(rest).map(([key, item]) => [key, inline(item, trail)] as const);
    if (typeof $ref !== "string") return Object.fromEntries(entries);
    if (!$ref.startsWith(PREFIX)) throw new Error(`unexpected $ref ${$ref}`);
    const name = $ref.slice(PREFIX.length);
    if (trail.includes(name)) throw new Error(`recursive component ${name}`);
    const target = components[name];
    if (target === undefined) throw new Error(`$ref to a missing component: ${$ref}`);
    return { ...(inline(target, [...trail, name]) as Record<string, Json>), ...Object.fromEntries(entries) };
  };
  return inline(schema, []) as T;
}
