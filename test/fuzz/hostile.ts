import fc from "fast-check";
import { RawJson, withOwnKey } from "./json-text.ts";

/**
 * The hostile vocabulary: values a careless or malicious client sends where the schema expects
 * something else. Each entry carries a short label (the failure report's "input shape").
 */
export interface Labelled<T> {
  value: T;
  label: string;
}

const ONE_MB = 1_000_000;

/** Built once: the fuzzer sends them many times. */
const megabyteString = "a".repeat(ONE_MB);
const deepArrays = (depth: number) => new RawJson(`${"[".repeat(depth)}1${"]".repeat(depth)}`, `arrays nested ${depth} deep`);
const deepObjects = (depth: number) => new RawJson(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`, `objects nested ${depth} deep`);

const entry = <T>(label: string, value: T): Labelled<T> => ({ value, label });

/** Strings that break parsers, key builders, path handling and Unicode assumptions. */
export const hostileStrings: ReadonlyArray<Labelled<string>> = [
  entry("empty string", ""),
  entry("blank string", "   "),
  entry("../ traversal", "../../../etc/passwd"),
  entry("..", ".."),
  entry("%00", "%00"),
  entry("NUL character", "a\u0000b"),
  entry("percent signs", "%%25%zz"),
  entry("key separator #", "ORG#other#HUB#x"),
  entry("slash", "a/b"),
  entry("asterisk", "*"),
  entry("NaN string", "NaN"),
  entry("Infinity string", "Infinity"),
  entry("-Infinity string", "-Infinity"),
  entry("1e-200 string", "1e-200"),
  entry("5e-324 string", "5e-324"),
  entry("1e308 string", "1e308"),
  entry("1e400 string", "1e400"),
  entry("-0 string", "-0"),
  entry("hex number string", "0x1F"),
  entry("padded number string", " 12 "),
  entry("null string", "null"),
  entry("true string", "true"),
  entry("__proto__ string", "__proto__"),
  entry("constructor string", "constructor"),
  entry("24-hex unknown id", "ffffffffffffffffffffffff"),
  entry("uppercase hex id", "FFFFFFFFFFFFFFFFFFFFFFFF"),
  entry("mathematical letters", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"),
  entry("emoji ZWJ sequence", "👩‍👩‍👧‍👦"),
  entry("right-to-left override", "abc\u202edef"),
  entry("lone surrogate", "x\ud800y"),
  entry("zero-width space", "a\u200bb"),
  entry("byte order mark", "\ufeffname"),
  entry("control characters", "a\u0001\u001fb"),
  entry("newlines", "a\r\nb\nc"),
  entry("dotted capital I", "İstanbul"),
  entry("combining marks", "e\u0301\u0301\u0301"),
  entry("SQL/NoSQL-ish", "' OR 1=1; --"),
  // \u0024 is "$": a template-injection probe, written so it is not read as a (mistaken) placeholder.
  entry("template/HTML", "<script>\u0024{7*7}</script>"),
  entry("10,000 characters", "x".repeat(10_000)),
  entry("100,000 characters", "é".repeat(100_000)),
  entry("1 MB string", megabyteString),
];

/** JSON values of the wrong kind, or of the right kind at the edges. */
export const hostileJsonValues: ReadonlyArray<Labelled<unknown>> = [
  entry("null", null),
  entry("true", true),
  entry("false", false),
  entry("0", 0),
  entry("-1", -1),
  entry("1e-200", 1e-200),
  entry("5e-324", 5e-324),
  entry("-5e-324", -5e-324),
  entry("1e308", 1e308),
  entry("-1e308", -1e308),
  entry("Number.MAX_VALUE", Number.MAX_VALUE),
  entry("2^53 + 2", 2 ** 53 + 2),
  entry("-(2^53)", -(2 ** 53)),
  entry("-0", -0),
  entry("0.1 + 0.2", 0.1 + 0.2),
  entry("1.5", 1.5),
  entry("1e400 (Infinity when parsed)", new RawJson("1e400", "1e400 (Infinity when parsed)")),
  entry("-1e400", new RawJson("-1e400", "-1e400")),
  entry("1e-400 (0 when parsed)", new RawJson("1e-400", "1e-400")),
  entry("-0.0", new RawJson("-0.0", "-0.0")),
  entry("30-digit integer", new RawJson("123456789012345678901234567890", "30-digit integer")),
  entry("empty object", {}),
  entry("empty array", []),
  entry("array of nulls", [null, null]),
  entry("operator object", { $ne: null, $gt: "" }),
  entry("__proto__ object", withOwnKey({}, "__proto__", { polluted: true })),
  entry("constructor.prototype object", { constructor: { prototype: { polluted: true } } }),
  entry("10,000-element array", new RawJson(`[${Array.from({ length: 10_000 }, (_, i) => i).join(",")}]`, "10,000-element array")),
  entry("arrays nested 40 deep", deepArrays(40)),
  entry("arrays nested 5,000 deep", deepArrays(5_000)),
  entry("objects nested 40 deep", deepObjects(40)),
  entry("objects nested 5,000 deep", deepObjects(5_000)),
  ...hostileStrings.map((string) => entry(`string: ${string.label}`, string.value as unknown)),
];

/** Keys that poison objects built from client input. */
export const hostileKeys = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "",
  "a.b",
  "$where",
  "PK",
  "SK",
];

export const hostileStringArbitrary = fc.constantFrom(...hostileStrings);
export const hostileJsonArbitrary = fc.constantFrom(...hostileJsonValues);

/** `[value]`, `[]` or `[[value]]`: an array where a scalar goes. */
export const arrayWrapping = (value: unknown): Array<Labelled<unknown>> => [
  entry("wrapped in an array", [value]),
  entry("wrapped in two arrays", [[value]]),
];

/** Whole bodies that are not the JSON object a route wants. */
export const hostileBodyTexts: ReadonlyArray<Labelled<string>> = [
  entry("empty body", ""),
  entry("truncated JSON", '{"name":'),
  entry("not JSON", "name=x&y=z"),
  entry("JSON null", "null"),
  entry("JSON number", "42"),
  entry("JSON string", '"text"'),
  entry("JSON array", "[{}]"),
  entry("trailing garbage", "{}garbage"),
  entry("duplicate keys", '{"name":"a","name":{"nested":true}}'),
  entry("byte order mark + {}", "\ufeff{}"),
  entry("NaN literal", '{"lat":NaN}'),
  entry("single quotes", "{'name':'x'}"),
  entry("__proto__ only", '{"__proto__":{"isAdmin":true}}'),
  entry("body of 1.2 MB", `{"name":"${"b".repeat(1_200_000)}"}`),
];

/** Content types a JSON route may be sent with. */
export const contentTypes: ReadonlyArray<Labelled<string | undefined>> = [
  entry("no content-type", undefined),
  entry("text/plain", "text/plain"),
  entry("application/json;charset=latin1", "application/json; charset=latin1"),
  entry("application/merge-patch+json", "application/merge-patch+json"),
  entry("multipart/form-data on a JSON route", "multipart/form-data; boundary=x"),
  entry("APPLICATION/JSON", "APPLICATION/JSON"),
  entry("garbage content-type", ";;;=="),
];

/** Header names that are also Object.prototype members. */
export const hostileHeaderNames = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "x-amzn-requestid"];
