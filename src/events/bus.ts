/**
 * The in-process event bus: consensus and the block executor publish, RPC subscribers listen.
 *
 * A message carries its event type (`NewBlock`, `Tx`, …; the wire name comes from the names
 * registry at the edge), its data, and the composite-key attributes (`tx.height`, `<type>.<key>`)
 * that subscription queries match against (types/event_bus.go in CometBFT).
 */

export interface BusMessage {
  type: string;
  data: unknown;
  /** Composite keys to their values, e.g. {"tx.hash": ["AB…"], "transfer.amount": ["10achain"]}. */
  attributes: Record<string, string[]>;
}

export type BusListener = (msg: BusMessage) => void;

export class EventBus {
  private listeners = new Set<BusListener>();

  subscribe(fn: BusListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Delivers synchronously; a listener that throws is isolated from the others and the publisher. */
  publish(msg: BusMessage): void {
    for (const fn of this.listeners) {
      try {
        fn(msg);
      } catch {
        // A broken subscriber must never stop block production.
      }
    }
  }

  get listenerCount(): number {
    return this.listeners.size;
  }
}
