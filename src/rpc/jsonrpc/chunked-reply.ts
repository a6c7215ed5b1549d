/**
 * A JSON-RPC answer whose result is streamed (src/evm/tracers/raw-json.ts StreamScope): the
 * envelope's text before the result's placeholder, then the result's chunks as the source gives
 * them, then the envelope's rest, written with HTTP chunked transfer encoding (uWS res.write).
 * The next chunk is pulled only when the socket took the previous one (res.write true, or
 * onWritable once it drained): that is the back-pressure, so a slow client holds the producer
 * (a pool thread) a few chunks ahead, never the whole result in memory. A client that goes away
 * cancels the source.
 *
 * The hook in geth-server.ts sends here only a single HTTP request answered 200 on a keep-alive
 * connection; anything else (HEAD, a connection to close) gets the whole text (`whole`).
 */
import type { ChunkSource, StreamScope } from '../../evm/tracers/raw-json.js';
import { CONN_KEEP, send, type HttpResponse, type ResponseState } from '../server/uws.js';

const JSON_HEADERS: ReadonlyArray<readonly [string, string]> = [['Content-Type', 'application/json']];

/** The whole answer: the envelope with the source's chunks in place of the placeholder. */
async function whole(answer: string, i: number, placeholder: string, source: ChunkSource): Promise<string> {
  const parts = [answer.slice(0, i)];
  for (let c = await source.next(); c !== undefined; c = await source.next()) parts.push(c);
  parts.push(answer.slice(i + placeholder.length));
  return parts.join('');
}

export function replyChunked(res: HttpResponse, state: ResponseState & { head: boolean }, answer: string, scope: StreamScope, onError: (e: unknown) => void): void {
  const source = scope.source!;
  const i = answer.indexOf(scope.placeholder);
  if (state.aborted || state.done) {
    source.cancel();
    return;
  }
  if (i < 0) {
    source.cancel();
    send(res, state, '200 OK', JSON_HEADERS, answer, state.head ? { head: true } : undefined);
    return;
  }
  if (state.head || (state.connClose ?? CONN_KEEP) !== CONN_KEEP) {
    whole(answer, i, scope.placeholder, source).then((text) => send(res, state, '200 OK', JSON_HEADERS, text, state.head ? { head: true } : undefined), onError);
    return;
  }
  const tail = answer.slice(i + scope.placeholder.length);
  state.done = true;
  res.onAborted(() => {
    state.aborted = true;
    source.cancel();
  });
  let ok = true;
  res.cork(() => {
    if (state.paused) {
      state.paused = false;
      res.resume();
    }
    res.writeStatus('200 OK');
    for (const [k, v] of JSON_HEADERS) res.writeHeader(k, v);
    ok = res.write(answer.slice(0, i));
  });
  let waiting: (() => void) | undefined;
  res.onWritable(() => {
    const w = waiting;
    waiting = undefined;
    w?.();
    return true;
  });
  const pump = async (): Promise<void> => {
    for (;;) {
      if (!ok) await new Promise<void>((r) => (waiting = r));
      if (state.aborted) return;
      const c = await source.next();
      if (state.aborted) {
        source.cancel();
        return;
      }
      if (c === undefined) {
        res.cork(() => res.end(tail));
        return;
      }
      res.cork(() => (ok = res.write(c)));
    }
  };
  pump().catch((e: unknown) => {
    source.cancel();
    // Headers and part of the body are out: the connection is closed, so the client sees a
    // truncated answer, never a well-formed wrong one.
    if (!state.aborted) res.close();
    onError(e);
  });
}
