/**
 * eth_subscribe / eth_unsubscribe over the websocket transport (ethereum/go-ethereum:
 * rpc/subscription.go, rpc/handler.go handleSubscribe, eth/filters/api.go NewHeads / Logs /
 * NewPendingTransactions, eth/downloader/api.go Syncing).
 *
 * - `newHeads`: the header of each committed block, as view.ts formats it (headerJson of
 *   blockJson), in core/types Header's key order (gen_header_json.go). geth takes no argument;
 *   as Nethermind (NethermindEth/nethermind:src/Nethermind/Nethermind.JsonRpc/Modules/Subscribe/
 *   NewHeadSubscription.cs, Modules/Eth/TransactionsOption.cs), an optional
 *   `{"includeTransactions": true}` adds `transactions`: the block's full tx objects, as
 *   eth_getBlockByNumber(n, true) has them; `false`, `{}` or no argument: the header alone.
 *   (Nethermind also takes a bare `true`/`false`; chaind asks for the object and refuses the rest
 *   with -32602.) The full form is rendered once per block, and only while such a subscription
 *   exists;
 * - `logs` with `{address, topics, fromBlock?, toBlock?}`: one notification per matching log, in
 *   logIndex order, matched by logs.ts (geth's filterLogs position/alternative rules); numeric
 *   fromBlock/toBlock bound the blocks whose logs are sent, as geth's filterLogs does;
 * - `newPendingTransactions`: the hash of each EVM tx the mempool admits (`true`: the pending tx
 *   object, txJson with null block fields); Cosmos txs are not EVM txs and are not reported;
 * - `syncing`: geth's SyncingResult `{"syncing":true,"status":{…}}` (ethereum.SyncProgress, whose
 *   Go field names and decimal numbers are its JSON) while block sync catches up, `false` when it
 *   is done. geth sends a status once a minute while syncing and `false` at the end; here, too,
 *   plus the current state right after the subscription id (geth sends nothing to a node that is
 *   not syncing, which leaves a client unable to tell "synced" from "not yet told").
 * Notifications: `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":id,
 * "result":…}}`, never before the subscribe answer (geth's Notifier.activate). Ids as geth's NewID
 * (filters.ts). Over HTTP `*_subscribe` is -32601 `notifications not supported` (geth.ts); an unknown
 * name is -32601 `no "x" subscription in eth namespace`; unsubscribing an unknown id is -32000
 * `subscription not found`.
 *
 * Machinery. The subscriptions live in the node's own registry class (src/events/subscriptions.ts,
 * the one behind the node RPC's `subscribe`), one instance for the EVM with its own limits,
 * over an EVM feed: an EventBus that listens to the node's bus (NewBlock) and the mempool only
 * while someone is subscribed, renders each block once (header, logs) off the publisher's stack,
 * and publishes in commit order. Each notification is rendered once and shared by every
 * subscription. Slow clients: every subscription buffers at most `[json-rpc]
 * subscription-buffer` notifications while its connection has over 1 MiB unwritten; a full buffer,
 * or a backlog above that mark for 10 s (geth's defaultWriteTimeout for a notification write,
 * rpc/json.go), closes the connection (geth ends a connection whose write fails). Block
 * production never waits for a client: the bus listener only appends to a list.
 */
import type { BusMessage } from '../../events/bus.js';
import { EventBus } from '../../events/bus.js';
import { Subscriptions, SubscriptionError, type Notification, type SubscriberSink, type Subscription, type SubscriptionMatcher } from '../../events/subscriptions.js';
import type { Logger } from '../../log.js';
import { GETH_CODES, GethRpcError, gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import { WS_MIN_PUSH_HIGH_WATER, WS_WRITE_WAIT_MS, type WsConnection } from '../jsonrpc/ws.js';
import type { EvmRpcDeps } from './deps.js';
import { newId } from './filters.js';
import { arg, gethError, hex } from './format.js';
import { blockLogViews, logMatches, parseAddressTopics, type AddressTopicFilter, type LogView } from './logs.js';
import { blockJson, headerJson, loadBlock, txJson } from './view.js';

/** `[json-rpc]` subscription-clients-cap, subscriptions-per-client-cap, subscription-buffer. */
export const SUBSCRIPTION_DEFAULTS = { clients: 100, perClient: 32, buffer: 1024 } as const;
/** eth/downloader/api.go: a syncing status every 60 s while syncing. */
const SYNC_STATUS_INTERVAL_MS = 60_000;
/** eth/filters/filter_system.go LogQueryLimit default (ethconfig: 1000). */
const LOG_QUERY_LIMIT = 1000;

const SUB_NAMES = ['newHeads', 'logs', 'newPendingTransactions', 'syncing'] as const;
type SubName = (typeof SUB_NAMES)[number];

/** core/types Header JSON order (gen_header_json.go); keys not listed keep their place before `hash`. */
const HEADER_ORDER = ['parentHash', 'sha3Uncles', 'miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom', 'difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', 'baseFeePerGas', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash'];

export function gethHeaderOrder(h: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of HEADER_ORDER) if (k in h) out[k] = h[k];
  for (const k of Object.keys(h)) if (k !== 'hash' && !(k in out)) out[k] = h[k];
  if ('hash' in h) out.hash = h.hash;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The feed

/** A committed block, rendered once for every subscription. */
interface BlockData {
  height: bigint;
  /** The header JSON text. */
  header: string;
  /** The header plus `transactions` (full tx objects), when a subscription asked for it. */
  full?: string;
  logs: LogView[];
}

interface PendingData {
  tx: Uint8Array;
}

interface SyncingData {
  /** The JSON text of the notification's result. */
  result: string;
  /** Only for this subscription (the state sent right after subscribing); undefined: all. */
  only?: string;
}

export const EVM_FEED_TYPES = { block: 'evm/block', pending: 'evm/pendingTx', syncing: 'evm/syncing' } as const;

/**
 * The EVM's event source: attaches to the node's bus and the mempool while it has a listener
 * (the registry listens only while someone is subscribed).
 */
export class EvmFeed extends EventBus {
  private off: Array<() => void> = [];
  private chain: Promise<void> = Promise.resolve();
  private syncing: boolean | null = null;
  private syncStart = 0n;
  private lastSyncStatus = 0;
  /** Blocks waiting to be rendered (a bound against a stalled renderer). */
  private backlog = 0;
  /** Live `newHeads` subscriptions with includeTransactions: the full form is rendered while any. */
  readonly fullHeads = new Set<object>();

  constructor(
    private readonly deps: EvmRpcDeps,
    private readonly log?: Logger,
  ) {
    super();
  }

  override subscribe(fn: (msg: BusMessage) => void): () => void {
    const off = super.subscribe(fn);
    if (this.listenerCount === 1) this.attach();
    return () => {
      off();
      if (this.listenerCount === 0) this.detach();
    };
  }

  private attach(): void {
    const { bus, mempool } = this.deps;
    if (bus) this.off.push(bus.subscribe((m) => m.type === 'NewBlock' && this.onBlock(m)));
    if (mempool.onTxAdded) this.off.push(mempool.onTxAdded((tx) => this.publish({ type: EVM_FEED_TYPES.pending, data: { tx } satisfies PendingData, attributes: {} })));
    this.syncing = this.deps.catchingUp();
  }

  private detach(): void {
    for (const f of this.off) f();
    this.off = [];
  }

  /** On the publisher's stack: queue the rendering, nothing else. */
  private onBlock(m: BusMessage): void {
    const height = (m.data as { block?: { header?: { height?: bigint } } }).block?.header?.height;
    if (typeof height !== 'bigint') return;
    this.backlog++;
    this.chain = this.chain.then(() => this.render(height)).catch((e: unknown) => this.log?.error('eth_subscribe: rendering a block failed', { height: height.toString(), err: e as Error })).finally(() => this.backlog--);
  }

  private async render(height: bigint): Promise<void> {
    if (this.listenerCount === 0) return;
    const b = loadBlock(this.deps, height);
    if (b !== undefined) {
      let withTxs = this.fullHeads.size > 0;
      let view = await blockJson(this.deps, b, withTxs);
      // Someone asked for the full form while the hashes-only view was being made.
      if (!withTxs && this.fullHeads.size > 0) view = await blockJson(this.deps, b, (withTxs = true));
      // From here to publish() nothing awaits: the subscriptions now are the ones served.
      const header = JSON.stringify(gethHeaderOrder(headerJson(view)));
      const full = withTxs ? `${header.slice(0, -1)},"transactions":${JSON.stringify(view.transactions)}}` : undefined;
      const data: BlockData = { height, header, ...(full !== undefined ? { full } : {}), logs: blockLogViews(this.deps, height, b) };
      this.publish({ type: EVM_FEED_TYPES.block, data, attributes: {} });
    }
    this.checkSyncing(height);
  }

  private checkSyncing(height: bigint): void {
    const now = this.deps.catchingUp();
    const changed = now !== this.syncing;
    if (now && this.syncing !== true) this.syncStart = height;
    this.syncing = now;
    if (!changed && !(now && Date.now() - this.lastSyncStatus >= SYNC_STATUS_INTERVAL_MS)) return;
    this.lastSyncStatus = Date.now();
    this.publish({ type: EVM_FEED_TYPES.syncing, data: { result: this.syncResult() } satisfies SyncingData, attributes: {} });
  }

  /** geth's SyncingResult, or false. */
  syncResult(): string {
    if (!this.deps.catchingUp()) return 'false';
    const start = this.syncStart > 0n ? this.syncStart : this.deps.blocks.base();
    return JSON.stringify({ syncing: true, status: syncProgress(start, this.deps.lastHeight(), this.deps.blocks.height()) });
  }

  /** The current sync state to one subscription (after its id went out). */
  tellSyncing(key: string): void {
    this.publish({ type: EVM_FEED_TYPES.syncing, data: { result: this.syncResult(), only: key } satisfies SyncingData, attributes: {} });
  }

  /** Blocks queued for rendering (tests, metrics). */
  get pendingRenders(): number {
    return this.backlog;
  }
}

/** ethereum.SyncProgress (interfaces.go): no JSON tags, so Go field names and decimal numbers. */
function syncProgress(start: bigint, current: bigint, highest: bigint): Record<string, unknown> {
  const n = (x: bigint) => Number(x);
  return {
    StartingBlock: n(start),
    CurrentBlock: n(current),
    HighestBlock: n(highest > current ? highest : current),
    PulledStates: 0,
    KnownStates: 0,
    SyncedAccounts: 0,
    SyncedAccountBytes: 0,
    SyncedBytecodes: 0,
    SyncedBytecodeBytes: 0,
    SyncedStorage: 0,
    SyncedStorageBytes: 0,
    HealedTrienodes: 0,
    HealedTrienodeBytes: 0,
    HealedBytecodes: 0,
    HealedBytecodeBytes: 0,
    HealingTrienodes: 0,
    HealingBytecode: 0,
    SyncedAccessLists: 0,
    TotalAccessLists: 0,
    TrieGenProgress: 0,
    TxIndexFinishedBlocks: 0,
    TxIndexRemainingBlocks: 0,
    StateIndexRemaining: 0,
    TrienodeIndexRemaining: 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Matchers: what each kind takes of a feed message, and its notification's JSON.

interface EvmMatcher extends SubscriptionMatcher {
  readonly kind: SubName;
  /** The result JSON text of a notification. */
  render(n: Notification, item: unknown): string;
}

const newHeadsMatcher: EvmMatcher = {
  kind: 'newHeads',
  select: (n) => n.msg.type === EVM_FEED_TYPES.block,
  render: (n) => (n.msg.data as BlockData).header,
};

/** `newHeads` with includeTransactions: one per subscription (the feed counts them). */
class FullHeadsMatcher implements EvmMatcher {
  readonly kind = 'newHeads';
  select(n: Notification): boolean {
    return n.msg.type === EVM_FEED_TYPES.block && (n.msg.data as BlockData).full !== undefined;
  }
  render(n: Notification): string {
    return (n.msg.data as BlockData).full!;
  }
}

/** The second argument of `newHeads`: Nethermind's TransactionsOption, as an object only. */
function includeTransactions(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  const bad = (why: string) => new GethRpcError(GETH_CODES.INVALID_PARAMS, `invalid argument 1: ${why}; want {"includeTransactions": true|false}`);
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(`expected an object, got ${Array.isArray(v) ? 'an array' : JSON.stringify(v)}`);
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => k !== 'includeTransactions');
  if (unknown !== undefined) throw bad(`unknown field ${JSON.stringify(unknown)}`);
  const inc = o.includeTransactions;
  if (inc === undefined) return false;
  if (typeof inc !== 'boolean') throw bad(`includeTransactions must be true or false, got ${JSON.stringify(inc)}`);
  return inc;
}

/** A log's JSON text, made once per log for every subscription. */
const logText = new WeakMap<LogView, string>();

class LogsMatcher implements EvmMatcher {
  readonly kind = 'logs';
  constructor(
    private readonly filter: AddressTopicFilter,
    private readonly from: bigint | undefined,
    private readonly to: bigint | undefined,
  ) {}
  select(n: Notification): boolean | readonly unknown[] {
    if (n.msg.type !== EVM_FEED_TYPES.block) return false;
    const d = n.msg.data as BlockData;
    if (d.logs.length === 0) return false;
    if ((this.from !== undefined && d.height < this.from) || (this.to !== undefined && d.height > this.to)) return false;
    return d.logs.filter((l) => logMatches(this.filter, l.address, l.topics));
  }
  render(_n: Notification, item: unknown): string {
    const l = item as LogView;
    let s = logText.get(l);
    if (s === undefined) {
      s = JSON.stringify(l.json);
      logText.set(l, s);
    }
    return s;
  }
}

/** A pending tx, decoded once: its hash and (made on demand) its pending tx object as JSON text. */
interface PendingRendered {
  hash: string;
  full: string | null;
  tx: ReturnType<EvmRpcDeps['keeper']['decode']>['tx'];
}

class PendingMatcher implements EvmMatcher {
  readonly kind = 'newPendingTransactions';
  constructor(
    private readonly deps: EvmRpcDeps,
    private readonly full: boolean,
  ) {}
  private decoded(n: Notification): PendingRendered | null {
    if (n.rendered !== undefined) return n.rendered as PendingRendered | null;
    let r: PendingRendered | null = null;
    try {
      const tx = this.deps.keeper.decode((n.msg.data as PendingData).tx).tx;
      r = { hash: JSON.stringify(hex(tx.hash())), full: null, tx };
    } catch {
      r = null; // not an EVM tx
    }
    n.rendered = r;
    return r;
  }
  select(n: Notification): boolean {
    return n.msg.type === EVM_FEED_TYPES.pending && this.decoded(n) !== null;
  }
  render(n: Notification): string {
    const r = this.decoded(n)!;
    if (!this.full) return r.hash;
    r.full ??= JSON.stringify(txJson(r.tx, undefined, undefined));
    return r.full;
  }
}

class SyncingMatcher implements EvmMatcher {
  readonly kind = 'syncing';
  key = '';
  select(n: Notification): boolean {
    if (n.msg.type !== EVM_FEED_TYPES.syncing) return false;
    const d = n.msg.data as SyncingData;
    return d.only === undefined || d.only === this.key;
  }
  render(n: Notification): string {
    return (n.msg.data as SyncingData).result;
  }
}

// ---------------------------------------------------------------------------------------------
// The registry

export interface EvmSubscriptions {
  readonly registry: Subscriptions;
  readonly feed: EvmFeed;
  /** Connections closed as slow (buffer full, or backlogged for 10 s). */
  droppedClients(): number;
  close(): void;
}

const registries = new WeakMap<EvmRpcDeps, EvmSubscriptions>();

/** The EVM subscription registry of these deps (one per node), made on first use. */
export function evmSubscriptionsFor(deps: EvmRpcDeps, log?: Logger): EvmSubscriptions {
  let r = registries.get(deps);
  if (r) return r;
  const limits = deps.subscriptionLimits ?? SUBSCRIPTION_DEFAULTS;
  const feed = new EvmFeed(deps, log);
  const registry = new Subscriptions({
    bus: feed,
    // app.toml's 0 is "no cap" here; the registry's 0 refuses (CometBFT's meaning for [rpc]).
    maxClients: limits.clients === 0 ? Infinity : limits.clients,
    maxSubscriptionsPerClient: limits.perClient === 0 ? Infinity : limits.perClient,
    bufferSize: Math.max(1, limits.buffer),
    // A full buffer closes the connection: geth has no cancellation message.
    closeOnSlowClient: true,
    highWaterBytes: WS_MIN_PUSH_HIGH_WATER,
    eventMap: () => ({}),
    metrics: deps.subscriptionMetrics,
    logger: log,
  });
  r = {
    registry,
    feed,
    droppedClients: () => registry.stats().droppedClients,
    close: () => registry.close(),
  };
  registries.set(deps, r);
  return r;
}

/** The registry if one was made (shutdown). */
export function peekEvmSubscriptions(deps: EvmRpcDeps): EvmSubscriptions | undefined {
  return registries.get(deps);
}

const ENVELOPE_HEAD = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":';

/** A websocket connection as a subscriber of the EVM registry. */
class EvmSink implements SubscriberSink {
  /** subscription id → its matcher, while subscribed. */
  readonly subs = new Map<string, EvmMatcher>();
  private stalledSince = 0;
  private dropping = false;

  constructor(
    private readonly ws: WsConnection,
    private readonly onSlow: () => unknown,
    private readonly log?: Logger,
  ) {}

  get id(): string {
    return this.ws.id;
  }
  get closed(): boolean {
    return this.ws.closed;
  }
  deliver(sub: Subscription, n: Notification, item?: unknown): 'sent' | 'buffered' | 'dropped' | 'closed' {
    const m = sub.matcher as EvmMatcher;
    return this.ws.pushRaw(`${ENVELOPE_HEAD}${JSON.stringify(sub.key)},"result":${m.render(n, item)}}}`);
  }
  canceled(): 'sent' {
    return 'sent'; // geth has no such message: the connection is closed instead
  }
  /** Also the slow-client clock: a backlog over the high-water mark for 10 s closes the connection. */
  bufferedAmount(): number {
    const b = this.ws.bufferedAmount();
    if (b <= WS_MIN_PUSH_HIGH_WATER) this.stalledSince = 0;
    else if (this.stalledSince === 0) this.stalledSince = Date.now();
    else if (Date.now() - this.stalledSince >= WS_WRITE_WAIT_MS && !this.ws.closed && !this.dropping) {
      this.dropping = true;
      this.log?.info('closing slow websocket subscriber', { conn: this.ws.id, buffered: b });
      // Not on the registry's stack (it is iterating this client); once, however it goes first.
      queueMicrotask(this.onSlow);
    }
    return b;
  }
  onClose(l: () => void): () => void {
    return this.ws.onClose(l);
  }
  close(): void {
    this.ws.close();
  }
}

function limitMessage(e: SubscriptionError, deps: EvmRpcDeps): GethRpcError {
  const limits = deps.subscriptionLimits ?? SUBSCRIPTION_DEFAULTS;
  if (e.code === 'MAX_CLIENTS') return gethError(`error creating subscription: max connections with subscriptions reached (${limits.clients})`);
  if (e.code === 'MAX_SUBSCRIPTIONS_PER_CLIENT') return gethError(`error creating subscription: max subscriptions per connection reached (${limits.perClient})`);
  return gethError(e.message);
}

/** The `logs` criteria: geth's FilterCriteria decoding and SubscribeLogs's block range rules. */
function logsMatcher(criteria: unknown): LogsMatcher {
  if (criteria === undefined || criteria === null) return new LogsMatcher({ addresses: undefined, topics: [] }, undefined, undefined);
  if (typeof criteria !== 'object' || Array.isArray(criteria)) {
    throw new GethRpcError(GETH_CODES.INVALID_PARAMS, 'invalid argument 1: json: cannot unmarshal non-object into Go value of type filters.FilterCriteria');
  }
  const o = criteria as Record<string, unknown>;
  const filter = parseAddressTopics(1, o);
  if ((filter.addresses?.size ?? 0) > LOG_QUERY_LIMIT || filter.topics.some((t) => (t?.size ?? 0) > LOG_QUERY_LIMIT)) {
    throw gethError('exceed max addresses or topics per search position');
  }
  // rpc.BlockNumber: latest -2, pending -1, earliest 0 (the history cutoff), safe/finalized < 0.
  const num = (v: unknown): bigint | 'latest' | 'pending' | 'other' => {
    if (v === undefined || v === null) return 'latest';
    const b = arg<bigint | string>(1, 'block', v);
    if (typeof b === 'bigint') return b;
    if (b === 'earliest') return 0n;
    if (b === 'latest' || b === 'pending') return b;
    return 'other';
  };
  const from = num(o.fromBlock);
  const to = num(o.toBlock);
  if (from === 'pending' || to === 'pending') throw new GethRpcError(GETH_CODES.INVALID_PARAMS, 'pending logs are not supported');
  const ok = (from === 'latest' && to === 'latest') || (typeof from === 'bigint' && ((typeof to === 'bigint' && to >= from) || to === 'latest'));
  if (!ok) throw new GethRpcError(GETH_CODES.INVALID_PARAMS, 'invalid block range params');
  return new LogsMatcher(filter, typeof from === 'bigint' ? from : undefined, typeof to === 'bigint' ? to : undefined);
}

export function subscribeMethods(deps: EvmRpcDeps, log?: Logger): Route[] {
  const sinks = new WeakMap<WsConnection, EvmSink>();
  const sinkOf = (ws: WsConnection, subs: EvmSubscriptions) => {
    let s = sinks.get(ws);
    if (!s) {
      const sink = new EvmSink(ws, () => subs.registry.dropSlowClient(ws.id), log);
      ws.onClose(() => {
        for (const m of sink.subs.values()) subs.feed.fullHeads.delete(m);
        sink.subs.clear();
      });
      sinks.set(ws, sink);
      s = sink;
    }
    return s;
  };
  const argSpec = (name: string) => ({ name, type: 'any', optional: true }) as const;
  return [
    gethMethod({
      name: 'eth_subscribe',
      params: [argSpec('name'), argSpec('arg1'), argSpec('arg2'), argSpec('arg3')],
      handler: ({ name, arg1, arg2, arg3 }, ctx) => {
        const ws = ctx.ws;
        if (ws === undefined) throw new GethRpcError(GETH_CODES.METHOD_NOT_FOUND, 'notifications not supported');
        // rpc/json.go parseSubscriptionName, then the callback's own arguments.
        if (typeof name !== 'string') throw new GethRpcError(GETH_CODES.INVALID_PARAMS, 'expected subscription name as first argument');
        if (!(SUB_NAMES as readonly string[]).includes(name)) throw new GethRpcError(GETH_CODES.METHOD_NOT_FOUND, `no ${JSON.stringify(name)} subscription in eth namespace`);
        const given = [arg1, arg2, arg3];
        const want = name === 'syncing' ? 1 : 2;
        let last = given.length;
        while (last > 0 && given[last - 1] === undefined) last--;
        if (last + 1 > want) throw new GethRpcError(GETH_CODES.INVALID_PARAMS, `too many arguments, want at most ${want}`);
        let matcher: EvmMatcher;
        const syncing = name === 'syncing' ? new SyncingMatcher() : null;
        if (name === 'newHeads') matcher = includeTransactions(arg1) ? new FullHeadsMatcher() : newHeadsMatcher;
        else if (name === 'logs') matcher = logsMatcher(arg1);
        else if (name === 'newPendingTransactions') matcher = new PendingMatcher(deps, arg1 === undefined ? false : arg<boolean>(1, 'bool', arg1));
        else matcher = syncing!;

        const subs = evmSubscriptionsFor(deps, log);
        const sink = sinkOf(ws, subs);
        const id = newId();
        if (syncing) syncing.key = id;
        let sub: Subscription;
        try {
          sub = subs.registry.add(sink, { key: id, label: name, requestId: ctx.id, matcher, inactive: true });
        } catch (e) {
          if (e instanceof SubscriptionError) throw limitMessage(e, deps);
          throw e;
        }
        sink.subs.set(id, matcher);
        if (matcher instanceof FullHeadsMatcher) subs.feed.fullHeads.add(matcher);
        ws.afterReply(() => {
          subs.registry.activate(sub);
          if (syncing) subs.feed.tellSyncing(id);
        });
        return id;
      },
    }),
    gethMethod({
      name: 'eth_unsubscribe',
      params: [{ name: 'id', type: 'string' }],
      handler: ({ id }, ctx) => {
        const ws = ctx.ws;
        const sink = ws ? sinks.get(ws) : undefined;
        if (ws === undefined || sink === undefined || !sink.subs.has(id)) throw gethError('subscription not found');
        evmSubscriptionsFor(deps, log).feed.fullHeads.delete(sink.subs.get(id)!);
        sink.subs.delete(id);
        evmSubscriptionsFor(deps, log).registry.remove(ws.id, id);
        return true;
      },
    }),
  ];
}
