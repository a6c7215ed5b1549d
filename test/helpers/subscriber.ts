/**
 * A websocket JSON-RPC client for subscription tests: it reads every message into a list so that
 * replies and pushed events (which share the subscribe request's id) can be awaited by predicate.
 */
import { WsClient } from './ws.js';

/** A parsed JSON-RPC message as the node sent it. */
export type RpcMessage = { jsonrpc: string; id?: string | number; result?: any; error?: { code: number; message: string; data?: string } };

/** True for a pushed event (`result` = {query, data, events}). */
export function isEvent(m: RpcMessage): boolean {
  return m.result !== undefined && m.result !== null && typeof m.result.query === 'string' && m.result.data !== undefined;
}

export class EventClient {
  private readonly msgs: RpcMessage[] = [];
  private readonly waiters = new Set<{ pred: (m: RpcMessage) => boolean; resolve: (m: RpcMessage) => void }>();
  /** Every message received, in order (never consumed). */
  readonly all: RpcMessage[] = [];

  private constructor(readonly ws: WsClient) {
    void this.pump();
  }

  static async open(port: number): Promise<EventClient> {
    const { ws, head } = await WsClient.connect(port);
    if (!ws) throw new Error(`websocket not upgraded: ${head}`);
    return new EventClient(ws);
  }

  private async pump(): Promise<void> {
    for (;;) {
      const text = await this.ws.next(2 ** 31 - 1).catch(() => null);
      if (text === null) return;
      const m = JSON.parse(text) as RpcMessage;
      this.all.push(m);
      let taken = false;
      for (const w of this.waiters) {
        if (w.pred(m)) {
          this.waiters.delete(w);
          w.resolve(m);
          taken = true;
          break;
        }
      }
      if (!taken) this.msgs.push(m);
    }
  }

  /** Consumes the first message (received or to come) that satisfies `pred`. */
  next(pred: (m: RpcMessage) => boolean, timeoutMs = 30_000): Promise<RpcMessage> {
    const i = this.msgs.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.msgs.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (m: RpcMessage) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`no matching websocket message within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(w);
    });
  }

  /** Sends a request and resolves with its reply (not with events pushed under the same id). */
  call(id: string | number, method: string, params?: unknown, timeoutMs = 30_000): Promise<RpcMessage> {
    const req: Record<string, unknown> = { jsonrpc: '2.0', id, method };
    if (params !== undefined) req['params'] = params;
    const reply = this.next((m) => m.id === id && !isEvent(m) && !(m.error && m.error.code === -32000), timeoutMs);
    this.ws.call(req);
    return reply;
  }

  /** The next event pushed under `id`. */
  event(id: string | number, timeoutMs = 30_000): Promise<RpcMessage> {
    return this.next((m) => m.id === id && isEvent(m), timeoutMs);
  }

  /** Events received under `id` so far and not consumed. */
  pending(id: string | number): RpcMessage[] {
    return this.msgs.filter((m) => m.id === id && isEvent(m));
  }

  close(): void {
    if (!this.ws.ended) this.ws.close();
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
