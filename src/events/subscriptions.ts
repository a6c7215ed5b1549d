/**
 * Event subscriptions: the pubsub server behind the websocket `subscribe` method, with CometBFT
 * 0.38's limits, errors and slow-client rules (cometbft: libs/pubsub/pubsub.go, rpc/core/events.go,
 * types/event_bus.go; cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go).
 *
 * A client is one websocket connection (its `WsConnection.id`; CometBFT keys clients by remote
 * `ip:port`, i.e. per connection too). Subscriptions are keyed per client by the query's canonical
 * form with `tm.event` spelled `node.event`, so the two spellings are the same subscription.
 *
 * Limits, checked in rpc/core/events.go's order:
 * 1. subscribed clients ≥ `max_subscription_clients` → `max_subscription_clients %d reached`
 *    (like CometBFT, this refuses a new query of an already subscribed client too). The event bus's
 *    other subscribers count too, as on CometBFT's one bus (`hold()`): the indexer service (one
 *    client with two subscriptions while tx indexing is on, state/txindex/indexer_service.go) and
 *    each broadcast_tx_commit waiting for its tx (rpc/core/mempool.go);
 * 2. the client's subscriptions ≥ `max_subscriptions_per_client` → `max_subscriptions_per_client %d reached`;
 * 3. the query is longer than 512 bytes → `maximum query length exceeded`;
 * 4. the query does not parse → `failed to parse query: <parser error>`;
 * 5. the same query twice → `already subscribed` (pubsub ErrAlreadySubscribed).
 *
 * Delivery never runs on the publisher's stack: the bus listener only appends the message to a
 * list that a setImmediate drains, so block execution and consensus pay one array push per event.
 * Matching and JSON rendering happen there, once per message (the rendering is shared by every
 * subscription through `Notification.rendered`).
 *
 * Slow clients. Each subscription has a buffer of `experimental_subscription_buffer_size` (≥ 100,
 * default 200) notifications, CometBFT's `sub.out` channel. Notifications go straight to the
 * connection while it has at most `highWaterBytes` unwritten (the websocket layer's
 * push high-water mark, ~200 messages as CometBFT's write queue, src/rpc/node/ws.ts); beyond it
 * they wait in the subscription's buffer, which is flushed every 10 ms as the client reads. When a
 * buffer is full:
 * - by default the subscription is cancelled, as pubsub does (`ErrOutOfCapacity`); the client gets
 *   `subscription was canceled (reason: internal subscription event buffer is out of capacity)` once
 *   its connection drains, and may subscribe again;
 * - with `experimental_close_on_slow_client` the client is dropped: the subscription is cancelled
 *   with `reason: slow client` (rpc/core/events.go closeIfSlow) and the connection closed.
 * Memory per client is therefore bounded by its subscriptions × buffer size × shared messages, and
 * nothing a client does (or fails to do) reaches the publisher.
 *
 * Other subscription dialects use the same registry through `add()`: a subscription is then a
 * `SubscriptionMatcher` (what to deliver of each message: nothing, the message, or several items,
 * one notification each) under a key of the caller's choosing. The EVM JSON-RPC's `eth_subscribe`
 * (src/rpc/evm/subscribe.ts) is one, with its own registry, limits and feed.
 */
import type { Logger } from '../log.js';
import { txHash } from '../types/hashing.js';
import { hexUpper } from '../types/json.js';
import type { BusMessage, EventBus } from './bus.js';
import { compile, QueryError, type Query } from './query.js';

/** rpc/core/events.go maxQueryLength. */
export const MAX_QUERY_LENGTH = 512;
/** How often buffered notifications of a backlogged client are retried. */
export const FLUSH_INTERVAL_MS = 10;

/** Cancellation reasons, as CometBFT words them after `subscription was canceled (reason: `. */
export const CANCEL_REASONS = {
  /** libs/pubsub ErrOutOfCapacity. */
  outOfCapacity: 'internal subscription event buffer is out of capacity',
  /** rpc/core/events.go, with close_on_slow_client. */
  slowClient: 'slow client',
  /** Shutdown (CometBFT says "CometBFT exited"; the brand word is not ours to emit). */
  exited: 'node exited',
} as const;

export type SubscriptionErrorCode =
  | 'MAX_CLIENTS'
  | 'MAX_SUBSCRIPTIONS_PER_CLIENT'
  | 'QUERY_TOO_LONG'
  | 'QUERY_INVALID'
  | 'ALREADY_SUBSCRIBED'
  | 'NOT_FOUND'
  | 'CLOSED';

/** A refused subscribe/unsubscribe; the message is CometBFT's error text. */
export class SubscriptionError extends Error {
  override readonly name = 'SubscriptionError';
  constructor(
    readonly code: SubscriptionErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type DeliverResult = 'sent' | 'buffered' | 'dropped' | 'closed';

/** One published message, prepared for matching and delivery. */
export interface Notification {
  /** Publication order. */
  readonly seq: number;
  readonly msg: BusMessage;
  /** CometBFT's event map of the message (composite key → values), without the event-type key. */
  readonly events: Record<string, string[]>;
  /** The transport's rendering of the message, made once and shared by every subscription. */
  rendered?: unknown;
}

export interface Subscription {
  readonly clientId: string;
  /** The JSON-RPC id of the subscribe request: every notification reuses it. */
  readonly requestId: string | number;
  /** The query exactly as sent (notifications echo it); other dialects: a label for logs. */
  readonly query: string;
  /** Canonical form, `tm.event` spelled `node.event`: the per-client key. */
  readonly key: string;
  readonly matcher: SubscriptionMatcher;
}

/**
 * What a subscription takes of each published message: `false` (or an empty list) nothing, `true`
 * the message as one notification, a list: one notification per item, in order (each item counts
 * against the subscription's buffer).
 */
export interface SubscriptionMatcher {
  select(n: Notification): boolean | readonly unknown[];
}

/** A subscription of another dialect, for Subscriptions.add(). */
export interface SubscriptionSpec {
  /** The per-client key; a second subscription under the same key is `already subscribed`. */
  key: string;
  /** For logs. */
  label: string;
  requestId: string | number;
  matcher: SubscriptionMatcher;
  /**
   * Inactive: notifications wait in the subscription's buffer until activate() (geth sends none
   * before the subscribe answer, rpc/subscription.go Notifier.activate).
   */
  inactive?: boolean;
}

/** Where a client's notifications go: the websocket connection, adapted by the RPC layer. */
export interface SubscriberSink {
  /** The client id that limits count. */
  readonly id: string;
  readonly closed: boolean;
  /**
   * Writes one notification (`item`: the matcher's item, for subscriptions whose matcher returns
   * a list). `dropped`: not taken now (it stays buffered and is retried).
   */
  deliver(sub: Subscription, n: Notification, item?: unknown): DeliverResult;
  /** Tells the client its subscription was cancelled. */
  canceled(sub: Subscription, reason: string): DeliverResult;
  /** Bytes accepted but not yet written. */
  bufferedAmount(): number;
  onClose(listener: () => void): () => void;
  close(): void;
}

/** Optional metric sinks (src/metrics/registry.ts Gauge/Counter fit). */
export interface SubscriptionMetrics {
  clients?: { set(v: number): void };
  subscriptions?: { set(v: number): void };
  /** Notifications discarded with a cancelled slow subscription. */
  droppedEvents?: { inc(by?: number): void };
  /** Subscriptions cancelled because their buffer was full. */
  canceledSubscriptions?: { inc(by?: number): void };
  /** Connections closed as slow (close_on_slow_client). */
  droppedClients?: { inc(by?: number): void };
}

export interface SubscriptionsOptions {
  bus: EventBus;
  /** `[rpc] max_subscription_clients` (0 refuses every subscription, as in CometBFT; Infinity: no cap). */
  maxClients: number;
  /** `[rpc] max_subscriptions_per_client` (0 refuses every subscription; Infinity: no cap). */
  maxSubscriptionsPerClient: number;
  /** `[rpc] experimental_subscription_buffer_size`. */
  bufferSize: number;
  /** `[rpc] experimental_close_on_slow_client`. */
  closeOnSlowClient: boolean;
  /** A client with more unwritten bytes than this is behind: its notifications wait in buffers. */
  highWaterBytes: number;
  flushIntervalMs?: number;
  /** The composite-key map of a message (default: CometBFT's, cometEventMap). */
  eventMap?: (msg: BusMessage) => Record<string, string[]>;
  metrics?: SubscriptionMetrics;
  logger?: Logger;
}

export interface SubscriptionStats {
  /** Clients with at least one subscription (what max_subscription_clients counts). */
  clients: number;
  subscriptions: number;
  /** Notifications waiting in subscription buffers now. */
  buffered: number;
  /** Notifications handed to connections so far. */
  delivered: number;
  /** Notifications discarded because their subscription was cancelled as slow. */
  dropped: number;
  /** Subscriptions cancelled as slow. */
  canceled: number;
  /** Connections closed as slow (close_on_slow_client). */
  droppedClients: number;
}

/** A query as a matcher: the message itself when the query matches its event map. */
class QueryMatcher implements SubscriptionMatcher {
  constructor(readonly compiled: Query) {}
  select(n: Notification): boolean {
    return this.compiled.matches(n.events, n.msg.type);
  }
}

interface Queued {
  n: Notification;
  item: unknown;
}

class Sub implements Subscription {
  readonly queue: Queued[] = [];
  active = true;
  constructor(
    readonly clientId: string,
    readonly requestId: string | number,
    readonly query: string,
    readonly key: string,
    readonly matcher: SubscriptionMatcher,
    /** Messages published up to this sequence number predate the subscription. */
    readonly afterSeq: number,
  ) {}
}

interface Client {
  readonly sink: SubscriberSink;
  readonly subs: Map<string, Sub>;
  /** Cancellation notices waiting for the connection to drain. */
  readonly notices: Array<{ sub: Sub; reason: string }>;
  timer: NodeJS.Timeout | null;
  offClose: () => void;
  gone: boolean;
}

// ---------------------------------------------------------------------------------------------
// The event map (types/event_bus.go)

function flattenInto(out: Record<string, string[]>, events: unknown): void {
  if (!Array.isArray(events)) return;
  for (const ev of events as Array<{ type?: string; attributes?: Array<{ key?: string; value?: string }> }>) {
    // validateAndStringifyEvents: events without a type and attributes without a key are skipped.
    if (!ev || !ev.type) continue;
    for (const a of ev.attributes ?? []) {
      if (!a.key) continue;
      (out[`${ev.type}.${a.key}`] ??= []).push(a.value ?? '');
    }
  }
}

/**
 * The composite-key map a subscription query matches, as CometBFT's EventBus builds it
 * (event_bus.go PublishEventNewBlock / PublishEventNewBlockEvents / PublishEventTx / Publish):
 * - NewBlock and NewBlockEvents: every attribute of the FinalizeBlock events, indexed or not;
 * - Tx: every attribute of the tx's events, plus `tx.hash` (upper-case hex) and `tx.height`;
 * - the other CometBFT events: nothing but the event type (in v0.38 there is no `block.height`).
 * The event-type key itself (`node.event` / `tm.event`) is not in the map: queries match it on the
 * message type, and the RPC layer adds it under the emitted spelling. Messages of types CometBFT
 * does not define keep the attributes their publisher gave.
 */
export function cometEventMap(msg: BusMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const data = msg.data as Record<string, unknown> | null | undefined;
  switch (msg.type) {
    case 'NewBlock':
      flattenInto(out, (data?.['resultFinalizeBlock'] as { events?: unknown } | undefined)?.events);
      return out;
    case 'NewBlockEvents':
      flattenInto(out, data?.['events']);
      return out;
    case 'Tx': {
      flattenInto(out, (data?.['result'] as { events?: unknown } | undefined)?.events);
      const given = msg.attributes?.['tx.hash']?.[0];
      const tx = data?.['tx'];
      const hash = given ?? (tx instanceof Uint8Array ? hexUpper(txHash(tx)) : undefined);
      if (hash !== undefined) (out['tx.hash'] ??= []).push(hash);
      (out['tx.height'] ??= []).push(String(data?.['height'] ?? ''));
      return out;
    }
    case 'NewBlockHeader':
    case 'NewEvidence':
    case 'ValidatorSetUpdates':
    case 'CompleteProposal':
    case 'Lock':
    case 'NewRound':
    case 'NewRoundStep':
    case 'Polka':
    case 'Relock':
    case 'TimeoutPropose':
    case 'TimeoutWait':
    case 'Unlock':
    case 'ValidBlock':
    case 'Vote':
      return out;
    default:
      return { ...msg.attributes };
  }
}

// ---------------------------------------------------------------------------------------------

/** The subscription registry of one node. */
export class Subscriptions {
  private readonly clients = new Map<string, Client>();
  /** Clients with at least one subscription. */
  private subscribedClients = 0;
  /** Subscribers that are not websocket clients (see hold()): id → subscriptions held. */
  private readonly held = new Map<string, number>();
  private numSubs = 0;
  private numBuffered = 0;
  private delivered = 0;
  private dropped = 0;
  private canceled = 0;
  private droppedClients = 0;
  private seq = 0;
  private pending: Array<{ seq: number; msg: BusMessage }> = [];
  private scheduled = false;
  private offBus: (() => void) | null = null;
  private closedReason: string | null = null;
  private readonly flushMs: number;

  private readonly eventMap: (msg: BusMessage) => Record<string, string[]>;

  constructor(private readonly opts: SubscriptionsOptions) {
    this.flushMs = opts.flushIntervalMs ?? FLUSH_INTERVAL_MS;
    this.eventMap = opts.eventMap ?? cometEventMap;
  }

  /** Subscribes `sink` to `query`; throws SubscriptionError with CometBFT's message. */
  subscribe(sink: SubscriberSink, query: string, requestId: string | number): Subscription {
    this.checkOpen();
    const limit = this.limitError(sink.id);
    if (limit) throw limit;
    // Go's len() counts bytes.
    if (Buffer.byteLength(query, 'utf8') > MAX_QUERY_LENGTH) throw new SubscriptionError('QUERY_TOO_LONG', 'maximum query length exceeded');
    const compiled = compileQuery(query);
    return this.insert(sink, { key: compiled.toNormalizedString(), label: query, requestId, matcher: new QueryMatcher(compiled) });
  }

  /**
   * Subscribes `sink` with a matcher of another dialect (limits as subscribe(): the caller may
   * word the SubscriptionError codes its own way).
   */
  add(sink: SubscriberSink, spec: SubscriptionSpec): Subscription {
    this.checkOpen();
    const limit = this.limitError(sink.id);
    if (limit) throw limit;
    return this.insert(sink, spec);
  }

  /** Lets an inactive subscription (SubscriptionSpec.inactive) deliver what it buffered, and more. */
  activate(sub: Subscription): void {
    const s = sub as Sub;
    if (s.active) return;
    s.active = true;
    const client = this.clients.get(s.clientId);
    if (client && client.subs.get(s.key) === s && s.queue.length > 0) this.flush(client);
  }

  /** Removes the client's subscription under `key` (add()'s key); false when there is none. */
  remove(clientId: string, key: string): boolean {
    const client = this.clients.get(clientId);
    const sub = client?.subs.get(key);
    if (!client || !sub) return false;
    this.removeSub(client, sub);
    this.forgetIfIdle(client);
    return true;
  }

  /**
   * Drops a client as slow by the caller's own rule (as a full buffer does with
   * `closeOnSlowClient`: counted once, subscriptions ended, connection closed); false when the
   * client is not (or no longer) here.
   */
  dropSlowClient(clientId: string): boolean {
    const client = this.clients.get(clientId);
    if (!client || client.gone) return false;
    this.droppedClients++;
    this.opts.metrics?.droppedClients?.inc();
    this.removeClient(client);
    client.sink.close();
    return true;
  }

  private checkOpen(): void {
    if (this.closedReason !== null) throw new SubscriptionError('CLOSED', `subscription server stopped (${this.closedReason})`);
  }

  private insert(sink: SubscriberSink, spec: SubscriptionSpec): Subscription {
    let client = this.clients.get(sink.id);
    if (client?.subs.has(spec.key)) throw new SubscriptionError('ALREADY_SUBSCRIBED', 'already subscribed');
    if (sink.closed) throw new SubscriptionError('CLOSED', 'connection closed');

    if (!client) {
      const c: Client = { sink, subs: new Map(), notices: [], timer: null, offClose: () => {}, gone: false };
      c.offClose = sink.onClose(() => this.removeClient(c));
      this.clients.set(sink.id, c);
      client = c;
    }
    const sub = new Sub(sink.id, spec.requestId, spec.label, spec.key, spec.matcher, this.seq);
    if (spec.inactive) sub.active = false;
    if (client.subs.size === 0) this.subscribedClients++;
    client.subs.set(spec.key, sub);
    this.numSubs++;
    this.attach();
    this.updateGauges();
    return sub;
  }

  /** Removes the client's subscription to `query` (either spelling of the event key). */
  unsubscribe(clientId: string, query: string): void {
    const key = compileQuery(query).toNormalizedString();
    const client = this.clients.get(clientId);
    const sub = client?.subs.get(key);
    if (!client || !sub) throw new SubscriptionError('NOT_FOUND', 'subscription not found');
    this.removeSub(client, sub);
    this.forgetIfIdle(client);
  }

  /** Removes all of the client's subscriptions; `subscription not found` when it has none. */
  unsubscribeAll(clientId: string): void {
    const client = this.clients.get(clientId);
    if (!client || client.subs.size === 0) throw new SubscriptionError('NOT_FOUND', 'subscription not found');
    for (const sub of [...client.subs.values()]) this.removeSub(client, sub);
    this.forgetIfIdle(client);
  }

  /**
   * The limit one more subscription of `clientId` would pass, as CometBFT checks it before
   * subscribing (EventBus NumClients and NumClientSubscriptions), or null when there is room.
   */
  limitError(clientId: string): SubscriptionError | null {
    const { maxClients, maxSubscriptionsPerClient } = this.opts;
    // 0: no limit (the EVM registry's caps; CometBFT's own are positive).
    if (this.numClients() >= maxClients) return new SubscriptionError('MAX_CLIENTS', `max_subscription_clients ${maxClients} reached`);
    if (this.numClientSubscriptions(clientId) >= maxSubscriptionsPerClient) {
      return new SubscriptionError('MAX_SUBSCRIPTIONS_PER_CLIENT', `max_subscriptions_per_client ${maxSubscriptionsPerClient} reached`);
    }
    return null;
  }

  /**
   * Counts `n` subscriptions of a subscriber that is not a websocket client (the indexer service,
   * a waiting broadcast_tx_commit) against the limits until the returned function is called. No
   * limit is checked here: callers check limitError() first, as CometBFT's do.
   */
  hold(clientId: string, n = 1): () => void {
    this.held.set(clientId, (this.held.get(clientId) ?? 0) + n);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(clientId) ?? 0) - n;
      if (left > 0) this.held.set(clientId, left);
      else this.held.delete(clientId);
    };
  }

  /** Subscribers with at least one subscription: websocket clients and holders. */
  numClients(): number {
    let n = this.subscribedClients;
    for (const id of this.held.keys()) if ((this.clients.get(id)?.subs.size ?? 0) === 0) n++;
    return n;
  }

  numClientSubscriptions(clientId: string): number {
    return (this.clients.get(clientId)?.subs.size ?? 0) + (this.held.get(clientId) ?? 0);
  }

  stats(): SubscriptionStats {
    return {
      clients: this.subscribedClients,
      subscriptions: this.numSubs,
      buffered: this.numBuffered,
      delivered: this.delivered,
      dropped: this.dropped,
      canceled: this.canceled,
      droppedClients: this.droppedClients,
    };
  }

  /**
   * Stops: every subscription is cancelled with `reason` (each client is told once, if its
   * connection takes it), and later subscribes are refused.
   */
  close(reason: string = CANCEL_REASONS.exited): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    for (const client of [...this.clients.values()]) {
      for (const sub of [...client.subs.values()]) {
        this.removeSub(client, sub);
        if (!client.sink.closed) client.sink.canceled(sub, reason);
      }
      this.removeClient(client);
    }
    this.pending = [];
    this.detach();
  }

  // -------------------------------------------------------------------------------------------
  // Publication

  /** The bus is listened to only while someone is subscribed, so idle publishers cost nothing. */
  private attach(): void {
    if (this.offBus === null && this.numSubs > 0) this.offBus = this.opts.bus.subscribe(this.onMessage);
  }

  private detach(): void {
    if (this.offBus !== null && this.numSubs === 0) {
      this.offBus();
      this.offBus = null;
    }
  }

  /** Runs on the publisher's stack: one push, no matching, no I/O. */
  private readonly onMessage = (msg: BusMessage): void => {
    if (this.numSubs === 0) return;
    this.pending.push({ seq: ++this.seq, msg });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.process);
    }
  };

  private readonly process = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (const p of batch) {
      if (this.numSubs === 0) break;
      let n: Notification | null = null;
      for (const client of this.clients.values()) {
        for (const sub of client.subs.values()) {
          if (sub.afterSeq >= p.seq) continue;
          try {
            n ??= { seq: p.seq, msg: p.msg, events: this.eventMap(p.msg) };
            const picked = sub.matcher.select(n);
            if (picked === true) this.offer(client, sub, n, undefined);
            else if (picked !== false) for (const item of picked) if (!client.gone && client.subs.get(sub.key) === sub) this.offer(client, sub, n, item);
          } catch (e) {
            this.opts.logger?.error('event delivery failed', { client: client.sink.id, query: sub.query, err: e as Error });
          }
        }
      }
    }
  };

  private offer(client: Client, sub: Sub, n: Notification, item: unknown): void {
    if (!sub.active || sub.queue.length > 0 || client.sink.bufferedAmount() > this.opts.highWaterBytes) {
      this.enqueue(client, sub, n, item);
      return;
    }
    const r = client.sink.deliver(sub, n, item);
    if (r === 'sent' || r === 'buffered') this.delivered++;
    else if (r === 'dropped') this.enqueue(client, sub, n, item);
    else this.removeClient(client);
  }

  private enqueue(client: Client, sub: Sub, n: Notification, item: unknown): void {
    if (sub.queue.length >= this.opts.bufferSize) {
      this.overflow(client, sub);
      return;
    }
    sub.queue.push({ n, item });
    this.numBuffered++;
    if (sub.active) this.scheduleFlush(client);
  }

  /** A full buffer: cancel the subscription (pubsub) or drop the client (close_on_slow_client). */
  private overflow(client: Client, sub: Sub): void {
    const lost = sub.queue.length + 1;
    this.dropped += lost;
    this.canceled++;
    this.opts.metrics?.droppedEvents?.inc(lost);
    this.opts.metrics?.canceledSubscriptions?.inc();
    if (this.opts.closeOnSlowClient) {
      this.opts.logger?.info('closing slow subscription client', { client: client.sink.id, query: sub.query, lost });
      this.removeSub(client, sub);
      // Told at once if the connection takes it (CometBFT's TryWriteRPCResponse), then closed.
      client.sink.canceled(sub, CANCEL_REASONS.slowClient);
      this.droppedClients++;
      this.opts.metrics?.droppedClients?.inc();
      this.removeClient(client);
      client.sink.close();
      return;
    }
    this.opts.logger?.info('cancelling slow subscription', { client: client.sink.id, query: sub.query, lost });
    this.removeSub(client, sub);
    client.notices.push({ sub, reason: CANCEL_REASONS.outOfCapacity });
    this.flush(client);
  }

  private scheduleFlush(client: Client): void {
    if (client.timer !== null || client.gone) return;
    client.timer = setTimeout(() => {
      client.timer = null;
      this.flush(client);
    }, this.flushMs);
    client.timer.unref?.();
  }

  /** Writes buffered notifications, oldest first, while the connection keeps up. */
  private flush(client: Client): void {
    if (client.gone) return;
    const sink = client.sink;
    const high = this.opts.highWaterBytes;
    for (;;) {
      if (sink.bufferedAmount() > high) break;
      let best: Sub | null = null;
      for (const s of client.subs.values()) {
        if (s.active && s.queue.length > 0 && (best === null || s.queue[0]!.n.seq < best.queue[0]!.n.seq)) best = s;
      }
      if (best === null) break;
      const head = best.queue[0]!;
      const r = sink.deliver(best, head.n, head.item);
      if (r === 'closed') {
        this.removeClient(client);
        return;
      }
      if (r === 'dropped') break;
      best.queue.shift();
      this.numBuffered--;
      this.delivered++;
    }
    while (client.notices.length > 0 && sink.bufferedAmount() <= high) {
      const { sub, reason } = client.notices[0]!;
      const r = sink.canceled(sub, reason);
      if (r === 'closed') {
        this.removeClient(client);
        return;
      }
      if (r === 'dropped') break;
      client.notices.shift();
    }
    let waiting = client.notices.length > 0;
    for (const s of client.subs.values()) if (s.active && s.queue.length > 0) waiting = true;
    if (waiting) this.scheduleFlush(client);
    else this.forgetIfIdle(client);
  }

  // -------------------------------------------------------------------------------------------
  // Bookkeeping

  private removeSub(client: Client, sub: Sub): void {
    if (client.subs.get(sub.key) !== sub) return;
    client.subs.delete(sub.key);
    this.numBuffered -= sub.queue.length;
    sub.queue.length = 0;
    this.numSubs--;
    if (client.subs.size === 0) this.subscribedClients--;
    this.detach();
    this.updateGauges();
  }

  /** The connection closed (or is being dropped): its subscriptions end silently. */
  private removeClient(client: Client): void {
    if (client.gone) return;
    for (const sub of [...client.subs.values()]) this.removeSub(client, sub);
    client.gone = true;
    client.notices.length = 0;
    if (client.timer !== null) clearTimeout(client.timer);
    client.timer = null;
    client.offClose();
    if (this.clients.get(client.sink.id) === client) this.clients.delete(client.sink.id);
  }

  /** A client with no subscriptions and nothing left to tell is forgotten (pubsub deletes it). */
  private forgetIfIdle(client: Client): void {
    if (client.subs.size === 0 && client.notices.length === 0) this.removeClient(client);
  }

  private updateGauges(): void {
    this.opts.metrics?.clients?.set(this.subscribedClients);
    this.opts.metrics?.subscriptions?.set(this.numSubs);
  }
}

function compileQuery(query: string): Query {
  try {
    return compile(query);
  } catch (e) {
    if (e instanceof QueryError) throw new SubscriptionError('QUERY_INVALID', `failed to parse query: ${e.message}`);
    throw e;
  }
}
