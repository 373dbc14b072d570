import type { StoredEvent } from "#shared/domain/webhooks/events";

/**
 * Where every domain event goes for the operator: the stack's EventBridge bus (EVENT_BUS_NAME), or
 * without one (the local runtime) an in-process bus that keeps the events and tells listeners,
 * so tests and `npm start` see exactly what the stack would put on EventBridge.
 */
export interface EventBus {
  put(events: readonly StoredEvent[]): Promise<void>;
}

export const EVENT_SOURCE = "field-operations-api";

/** The EventBridge entry of an event: source, detail-type = event type, detail = `{ id, ...event }`. */
export function eventBridgeEntry(busName: string, stored: StoredEvent) {
  return {
    EventBusName: busName,
    Source: EVENT_SOURCE,
    DetailType: stored.event.type,
    Detail: JSON.stringify({ id: stored.id, ...stored.event }),
  };
}

type Listener = (event: StoredEvent) => void;

class InProcessBus implements EventBus {
  readonly published: StoredEvent[] = [];
  private readonly listeners = new Set<Listener>();
  async put(events: readonly StoredEvent[]): Promise<void> {
    for (const event of events) {
      // A replayed stream record yields the same event id: the bus keeps one.
      if (this.published.some((seen) => seen.id === event.id)) continue;
      this.published.push(event);
      if (this.published.length > 10_000) this.published.shift();
      for (const listener of this.listeners) listener(event);
    }
  }
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export const inProcessBus = new InProcessBus();

let eventBridge: EventBus | undefined;

export function eventBus(): EventBus {
  const busName = process.env.EVENT_BUS_NAME;
  if (!busName) return inProcessBus;
  eventBridge ??= {
    async put(events) {
      const { EventBridgeClient, PutEventsCommand } = await import("@aws-sdk/client-eventbridge");
      const client = new EventBridgeClient({});
      for (let i = 0; i < events.length; i += 10) {
        const output = await client.send(
          new PutEventsCommand({ Entries: events.slice(i, i + 10).map((event) => eventBridgeEntry(busName, event)) }),
        );
        // A failed entry fails the stream batch, which Lambda retries (at least once on the bus).
        if ((output.FailedEntryCount ?? 0) > 0) throw new Error(`EventBridge refused ${output.FailedEntryCount} events`);
      }
    },
  };
  return eventBridge;
}
