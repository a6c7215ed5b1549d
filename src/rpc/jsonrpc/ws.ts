/**
 * Websocket connections of the node RPC (`/websocket`; cometbft: rpc/jsonrpc/server/ws_handler.go).
 *
 * `WsConnection` is the small interface websocket-only methods get in `ctx.ws`: the event
 * subscription code keeps it, pushes each event with the subscribe request's id, and drops its
 * subscriptions when the connection closes (CometBFT's OnDisconnect → UnsubscribeAll).
 *
 * Back-pressure. CometBFT queues up to `experimental_websocket_write_buffer_size` (200) messages
 * per connection and silently drops events that do not fit (or cancels the subscription with
 * `experimental_close_on_slow_client`; cometbft/cometbft:rpc/jsonrpc/server/ws_handler.go). uWS buffers unsent bytes itself and reports
 * them through `send()`'s return code (1 sent, 0 buffered, 2 dropped) and `getBufferedAmount()`
 * (uNetworking/uWebSockets.js:index.d.ts), so the bounds here are in bytes:
 * - a push (event) is skipped, and reported `dropped`, while more than `pushHighWaterBytes` wait to
 *   be written; the caller applies its subscription policy (silent drop, or cancel with
 *   `experimental_close_on_slow_client`);
 * - a client is dropped (socket closed) when something more is to be sent and either more than
 *   `slowClientBytes` are unwritten, or the backlog has stayed above the high-water mark for
 *   `slowClientMs`: CometBFT's writer gives up on a write after 10 s (defaultWSWriteWait) and
 *   closes the connection. A client that does not read is dropped, not buffered without limit.
 * Replies to requests are never skipped, only subject to the slow-client bounds.
 *
 * Requests on one connection run one at a time, in order, as CometBFT's readRoutine does, so that
 * `subscribe` then `unsubscribe` sent back to back see each other.
 */
import type { RpcConfig } from '../../config/node-config.js';
import type { Logger } from '../../log.js';
import { loopSlice, type LoopSlice } from '../server/slice.js';
import { SEND_STATUS, type WebSocket } from '../server/uws.js';
import { errorEnvelope, successEnvelope, type JsonRpcId, type RpcErrorObject } from './envelope.js';

/** What became of a message handed to the connection. */
export type PushResult = 'sent' | 'buffered' | 'dropped' | 'closed';

/** A client's websocket connection, as route handlers see it. */
export interface WsConnection {
  /** Unique per connection (`<ip>#<n>`): the subscriber id that subscription limits count. */
  readonly id: string;
  /** The client's IP address as text. */
  readonly remoteAddr: string;
  readonly closed: boolean;
  /** Pushes `{"jsonrpc":"2.0","id":id,"result":result}`, e.g. an event for a subscription. */
  push(id: JsonRpcId, result: unknown): PushResult;
  /** Pushes an error response, e.g. -32000 `subscription was canceled (reason: …)`. */
  pushError(id: JsonRpcId, error: RpcErrorObject): PushResult;
  /** Pushes a message as given (JSON text), e.g. geth's `eth_subscription` notification. */
  pushRaw(json: string): PushResult;
  /**
   * Runs `fn` once the answer to the request being served has been handed to the socket (or the
   * request ended without one), e.g. to start a subscription's notifications only after its id.
   */
  afterReply(fn: () => void): void;
  /** Bytes accepted but not yet written to the socket. */
  bufferedAmount(): number;
  /** Runs `listener` once when the connection closes; returns a function that removes it. */
  onClose(listener: () => void): () => void;
  /** Closes the connection (close frame 1000). */
  close(): void;
}

export interface WsLimits {
  /** Pushes are skipped while more than this many bytes wait to be written. */
  pushHighWaterBytes: number;
  /** A connection with more than this many unwritten bytes is closed when more is to be sent. */
  slowClientBytes: number;
  /** A connection whose backlog stays above `pushHighWaterBytes` this long is closed. */
  slowClientMs: number;
  /** Requests waiting for their turn on one connection; more closes the connection. */
  maxQueuedRequests: number;
  /** Bytes of requests waiting on one connection; more closes the connection. */
  maxQueuedBytes: number;
}

/**
 * CometBFT bounds the write queue at 200 messages; at the 16 KiB a typical NewBlock event takes
 * that is ~3 MiB, rounded to 4 MiB. A client four times further behind (16 MiB) is closed.
 */
export const WS_AVG_MESSAGE_BYTES = 16 * 1024;
export const WS_MIN_PUSH_HIGH_WATER = 1 << 20;
/** ws_handler.go defaultWSWriteWait: a write not done in 10 s ends the connection. */
export const WS_WRITE_WAIT_MS = 10_000;
/** 128 queued requests: ws_handler.go reads the next request only after answering the last. */
export const WS_MAX_QUEUED_REQUESTS = 128;

export function wsLimitsFromConfig(c: RpcConfig): WsLimits {
  const pushHighWaterBytes = Math.max(WS_MIN_PUSH_HIGH_WATER, roundUpPow2(c.experimentalWebsocketWriteBufferSize * WS_AVG_MESSAGE_BYTES));
  return {
    pushHighWaterBytes,
    slowClientBytes: 4 * pushHighWaterBytes,
    slowClientMs: WS_WRITE_WAIT_MS,
    maxQueuedRequests: c.maxWebsocketQueuedRequests ?? WS_MAX_QUEUED_REQUESTS,
    // Each request is at most max_body_bytes (the websocket read limit); 16 of the largest.
    maxQueuedBytes: 16 * c.maxBodyBytes,
  };
}

function roundUpPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** uWS user data of each socket. */
export interface WsUserData {
  conn: UwsConnection;
}

/** The uWS-backed WsConnection; the server drives it from uWS's open/message/close callbacks. */
export class UwsConnection implements WsConnection {
  private ws: WebSocket<WsUserData> | null = null;
  private _closed = false;
  private readonly listeners = new Set<() => void>();
  private ac: AbortController | null = null;
  /** Requests received, not yet started (copies of the messages). */
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private running = false;
  /** Waiting in the loop slice's queue. */
  private deferred = false;
  /** Since when the backlog has been above the high-water mark (ms timestamp), or 0. */
  private stalledSince = 0;
  /** Pushes skipped under back-pressure (for metrics and tests). */
  droppedPushes = 0;
  /** afterReply callbacks of the request being served. */
  private replied: Array<() => void> = [];

  constructor(
    readonly id: string,
    readonly remoteAddr: string,
    private readonly limits: WsLimits,
    private readonly onRequest: (conn: UwsConnection, message: Buffer) => Promise<void>,
    private readonly log?: Logger,
    private readonly slice: LoopSlice = loopSlice,
  ) {}

  get closed(): boolean {
    return this._closed;
  }

  /** Aborted when the connection closes. */
  get signal(): AbortSignal {
    this.ac ??= new AbortController();
    if (this._closed) this.ac.abort();
    return this.ac.signal;
  }

  /** uWS `open`. */
  attach(ws: WebSocket<WsUserData>): void {
    this.ws = ws;
  }

  /**
   * uWS `message`: copies the message (uWS neuters it on return) and queues it. Requests run one
   * at a time, in order, each when the loop slice admits it (../server/slice.ts) and the socket is
   * not backed up: while more than `pushHighWaterBytes` of answers wait for the client to read
   * them, nothing more is served (uWS's `drain` resumes), so a client that sends without reading
   * fills its request queue and is closed instead of making us buffer answers.
   */
  enqueue(message: ArrayBuffer): void {
    if (this._closed) return;
    const buf = Buffer.from(new Uint8Array(message)); // copies
    if (this.queue.length >= this.limits.maxQueuedRequests || this.queuedBytes + buf.length > this.limits.maxQueuedBytes) {
      this.log?.info('closing websocket: too many queued requests', { conn: this.id, queued: this.queue.length });
      this.terminate();
      return;
    }
    this.queue.push(buf);
    this.queuedBytes += buf.length;
    this.pump();
  }

  /** Requests received and not yet started. */
  get queuedRequests(): number {
    return this.queue.length;
  }

  /**
   * Starts the next queued request if nothing stops it (one running, back-pressure, the slice).
   * `admitted`: called from the slice's own drain, which already gave this request its place; it
   * must not ask admit() again (while anything else waits, admit() says no, and a deferred
   * connection re-queued itself at the back on every drain: with two or more connections
   * deferred none ever ran, and their clients waited forever).
   */
  private pump(admitted = false): void {
    if (this.running || this.deferred || this._closed || this.queue.length === 0) return;
    const ws = this.ws;
    if (ws && ws.getBufferedAmount() > this.limits.pushHighWaterBytes) return; // handleDrain resumes
    if (!admitted && !this.slice.admit()) {
      this.deferred = true;
      this.slice.defer(this.resume);
      return;
    }
    const buf = this.queue.shift()!;
    this.queuedBytes -= buf.length;
    this.running = true;
    let p: Promise<void>;
    try {
      p = this.onRequest(this, buf);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(this.next, (e: unknown) => {
      this.log?.error('websocket request failed', { conn: this.id, err: e as Error });
      this.next();
    });
  }

  private readonly resume = (): void => {
    this.deferred = false;
    this.pump(true);
  };

  private readonly next = (): void => {
    this.running = false;
    if (this.replied.length > 0) {
      const fns = this.replied;
      this.replied = [];
      for (const fn of fns) {
        try {
          fn();
        } catch (e) {
          this.log?.error('websocket afterReply callback failed', { conn: this.id, err: e as Error });
        }
      }
    }
    this.pump();
  };

  afterReply(fn: () => void): void {
    if (this.running) this.replied.push(fn);
    else queueMicrotask(fn);
  }

  /** Sends a reply to a request (never skipped under back-pressure). */
  reply(json: string): PushResult {
    return this.write(json, false);
  }

  push(id: JsonRpcId, result: unknown): PushResult {
    if (this._closed) return 'closed';
    return this.write(successEnvelope(id, result), true);
  }

  pushError(id: JsonRpcId, error: RpcErrorObject): PushResult {
    if (this._closed) return 'closed';
    return this.write(errorEnvelope(id, error), true);
  }

  pushRaw(json: string): PushResult {
    if (this._closed) return 'closed';
    return this.write(json, true);
  }

  bufferedAmount(): number {
    return this.ws && !this._closed ? this.ws.getBufferedAmount() : 0;
  }

  onClose(listener: () => void): () => void {
    if (this._closed) {
      queueMicrotask(listener);
      return () => {};
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(code = 1000, reason = ''): void {
    if (this._closed || !this.ws) return;
    this.ws.end(code, reason); // uWS runs the close handler (handleClosed) synchronously
  }

  /** Closes without a close frame (a slow or abusive client). */
  terminate(): void {
    if (this._closed || !this.ws) return;
    this.ws.close();
  }

  /** uWS `drain`: the backlog shrank. */
  handleDrain(): void {
    if (this.ws && !this._closed && this.ws.getBufferedAmount() <= this.limits.pushHighWaterBytes) {
      this.stalledSince = 0;
      this.pump();
    }
  }

  /** uWS `close`: the socket is gone; it must not be used any more. */
  handleClosed(): void {
    if (this._closed) return;
    this._closed = true;
    this.ws = null;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.ac?.abort();
    for (const l of this.listeners) {
      try {
        l();
      } catch (e) {
        this.log?.error('websocket close listener failed', { conn: this.id, err: e as Error });
      }
    }
    this.listeners.clear();
  }

  private write(json: string, isPush: boolean): PushResult {
    const ws = this.ws;
    if (this._closed || !ws) return 'closed';
    const buffered = ws.getBufferedAmount();
    if (buffered > this.limits.pushHighWaterBytes) {
      const now = Date.now();
      if (this.stalledSince === 0) this.stalledSince = now;
      if (buffered > this.limits.slowClientBytes || now - this.stalledSince >= this.limits.slowClientMs) {
        this.log?.info('closing slow websocket client', { conn: this.id, buffered, stalledMs: now - this.stalledSince });
        this.terminate();
        return 'closed';
      }
      if (isPush) {
        this.droppedPushes++;
        return 'dropped';
      }
    } else this.stalledSince = 0;
    let status: number = SEND_STATUS.DROPPED;
    ws.cork(() => {
      status = ws.send(json, false);
    });
    if (status === SEND_STATUS.SUCCESS) return 'sent';
    if (status === SEND_STATUS.BACKPRESSURE) return 'buffered';
    if (isPush) this.droppedPushes++;
    return 'dropped';
  }
}
