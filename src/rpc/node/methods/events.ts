/**
 * Node RPC methods: subscribe, unsubscribe, unsubscribe_all (cometbft: rpc/core/events.go;
 * cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go). Websocket only: over HTTP JSON-RPC they are -32601 and over URI a
 * 404 with a -32601 body, which the route table's `wsOnly` flag gives (src/rpc/node/server.ts).
 *
 * Each matching event is pushed as a success response carrying the subscribe request's id:
 *
 *   {"jsonrpc":"2.0","id":<subscribe id>,"result":{"query":"<query as sent>",
 *     "data":{"type":"consensus/event/NewBlock","value":{…}},"events":{"node.event":["NewBlock"],…}}}
 *
 * (spec §6; fixtures `subscribe_newblock_0`, `subscribe_txs_0`). Type names and the event-type key
 * come from the names registry: `tendermint/event/…` and `tm.event` with
 * `[compat] upstream-names = true`. A cancelled subscription gets -32000 `Server error` with
 * `subscription was canceled (reason: …)`, under the same id. Limits, buffering and the slow-client
 * policy live in src/events/subscriptions.ts.
 */
import type { EventBus } from '../../../events/bus.js';
import { Subscriptions, type Notification, type SubscriberSink, type Subscription, type SubscriptionMetrics } from '../../../events/subscriptions.js';
import type { Names } from '../../../names/index.js';
import type { EventsRpc } from '../context.js';
import { rpcErrorObject } from '../../jsonrpc/envelope.js';
import { wsRoute, type Route } from '../../jsonrpc/methods.js';
import { wsLimitsFromConfig, type WsConnection } from '../../jsonrpc/ws.js';
import { eventDataJSON } from './events-json.js';

const registries = new WeakMap<EventBus, Subscriptions>();
/** The subscriber name of CometBFT's indexer service. */
const INDEXER_SUBSCRIBER = 'IndexerService';

/**
 * The node's subscription registry (one per event bus), made on first use from `[rpc]`: for
 * metrics (`stats()`) and shutdown (`close()`). `metrics` is used only by the call that creates it,
 * so the composition root passes it before `methodRoutes(context)`.
 */
export function subscriptionsFor(ctx: EventsRpc, opts: { metrics?: SubscriptionMetrics } = {}): Subscriptions {
  let subs = registries.get(ctx.bus);
  if (!subs) {
    const rpc = ctx.config.rpc;
    subs = new Subscriptions({
      bus: ctx.bus,
      maxClients: rpc.maxSubscriptionClients,
      maxSubscriptionsPerClient: rpc.maxSubscriptionsPerClient,
      bufferSize: rpc.experimentalSubscriptionBufferSize,
      closeOnSlowClient: rpc.experimentalCloseOnSlowClient,
      // The websocket layer skips pushes above this backlog (ws.ts); stay below it and buffer.
      highWaterBytes: wsLimitsFromConfig(rpc).pushHighWaterBytes,
      logger: ctx.logger.child({ module: 'events' }),
      metrics: opts.metrics,
    });
    registries.set(ctx.bus, subs);
    // CometBFT's IndexerService subscribes to the bus (NewBlockEvents and Tx) whenever an indexer
    // is on, so it takes one of max_subscription_clients (state/txindex/indexer_service.go).
    if (ctx.config.txIndex.indexer !== 'null') subs.hold(INDEXER_SUBSCRIBER, 2);
  }
  return subs;
}

/** The `data` and `events` of a notification, rendered once per message. */
interface Rendered {
  data: { type: string; value: unknown };
  events: Record<string, string[]>;
}

function render(n: Notification, names: Names): Rendered {
  if (n.rendered) return n.rendered as Rendered;
  // The flattened map plus the event-type key in the emitted spelling (event_bus.go appends
  // tm.event to whatever the events held under that key).
  const events: Record<string, string[]> = {};
  for (const k in n.events) events[k] = n.events[k]!;
  const key = names.eventKey();
  events[key] = [...(events[key] ?? []), n.msg.type];
  const r: Rendered = { data: eventDataJSON(n.msg.type, n.msg.data, names), events };
  n.rendered = r;
  return r;
}

/** A websocket connection as a subscriber. */
function wsSink(ws: WsConnection, names: Names): SubscriberSink {
  return {
    get id() {
      return ws.id;
    },
    get closed() {
      return ws.closed;
    },
    deliver(sub: Subscription, n: Notification) {
      const r = render(n, names);
      // ctypes.ResultEvent{Query, Data, Events}, in that order.
      return ws.push(sub.requestId, { query: sub.query, data: r.data, events: r.events });
    },
    canceled(sub: Subscription, reason: string) {
      return ws.pushError(sub.requestId, rpcErrorObject('SERVER_ERROR', `subscription was canceled (reason: ${reason})`));
    },
    bufferedAmount: () => ws.bufferedAmount(),
    onClose: (l) => ws.onClose(l),
    close: () => ws.close(),
  };
}

export function eventsRoutes(ctx: EventsRpc): Route[] {
  const subs = subscriptionsFor(ctx);
  const names = ctx.names;
  const sinks = new WeakMap<WsConnection, SubscriberSink>();
  const sinkOf = (ws: WsConnection) => {
    let s = sinks.get(ws);
    if (!s) {
      s = wsSink(ws, names);
      sinks.set(ws, s);
    }
    return s;
  };
  return [
    wsRoute({
      name: 'subscribe',
      params: [{ name: 'query', type: 'query' }],
      handler: ({ query }, c) => {
        subs.subscribe(sinkOf(c.ws), query, c.id);
        ctx.logger.debug('subscribed to query', { remote: c.ws.id, query });
        return {};
      },
    }),
    wsRoute({
      name: 'unsubscribe',
      params: [{ name: 'query', type: 'query' }],
      handler: ({ query }, c) => {
        subs.unsubscribe(c.ws.id, query);
        ctx.logger.debug('unsubscribed from query', { remote: c.ws.id, query });
        return {};
      },
    }),
    wsRoute({
      name: 'unsubscribe_all',
      handler: (_args, c) => {
        subs.unsubscribeAll(c.ws.id);
        ctx.logger.debug('unsubscribed from all queries', { remote: c.ws.id });
        return {};
      },
    }),
  ];
}
