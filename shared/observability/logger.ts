/**
 * One structured JSON logger for every function: one line per event, always carrying the request id
 * and organization id of the invocation in progress (set by the HTTP middleware / job handlers).
 */
type Level = "debug" | "info" | "warn" | "error";
const levelRank: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

type LogContext = Record<string, string | number | boolean | undefined>;

class JsonLogger {
  private context: LogContext = {};

  constructor(private readonly service: string) {}

  /** Replaces the per-invocation context (request id, organization id …). */
  setContext(context: LogContext): void {
    this.context = context;
  }

  appendContext(context: LogContext): void {
    this.context = { ...this.context, ...context };
  }

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write("debug", message, fields);
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.write("info", message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.write("warn", message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.write("error", message, fields);
  }

  private write(level: Level, message: string, fields?: Record<string, unknown>): void {
    const threshold = (process.env.LOG_LEVEL ?? "info") as Level | "silent";
    if (levelRank[level] < (levelRank[threshold] ?? levelRank.info)) return;
    const line = JSON.stringify({
      level,
      time: new Date().toISOString(),
      service: this.service,
      message,
      ...this.context,
      ...(fields ? serializeFields(fields) : {}),
    });
    process.stdout.write(`${line}\n`);
  }
}

function serializeFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}

export const logger = new JsonLogger(process.env.SERVICE_NAME ?? "field-operations-api");
