/**
 * The EVM JSON-RPC surfaces (geth's dialect, src/rpc/jsonrpc/geth-server.ts): HTTP on
 * `[json-rpc] address` and websocket on `[json-rpc] ws-address`. Seeds are valid calls of the
 * served namespaces (eth, net, web3 and, over the websocket, eth_subscribe); the envelope, the
 * params, the bytes, batches and the HTTP framing are mutated as for node RPC.
 *
 * What an answer must be (ethereum/go-ethereum:rpc/json.go, rpc/http.go): a JSON-RPC 2.0 object
 * (or a batch of them) whose `id` is a JSON scalar (geth echoes any id that is not an object or
 * an array, and answers null where it could not read one), with exactly one of result/error and an integer error code; a subscription
 * notification over the websocket; or one of geth's own short HTTP refusals as text.
 */
import { header, type HttpAnswer } from './http-conn.js';
import type { HttpRequestSpec } from './http-surface.js';
import { JSON_MUTATORS, jsLeak, mutateBytes, mutateJson, mutatePath, pickMutator, enabled, toJson, type JsonValue } from './mutators.js';
import { httpMethods, httpSurface, jsonRpcWsSurface, randomHeaders, type WsCase } from './node-rpc.js';
import type { Rng } from './prng.js';
import { isFramingError, printable, type Surface } from './surface.js';
import type { HttpCase } from './http-surface.js';
import type { FuzzTarget } from './target.js';

interface EvmSeed {
  method: string;
  params: JsonValue[] | null;
}

const ADDR = `0x${'11'.repeat(20)}`;
const HASH = `0x${'ab'.repeat(32)}`;

/** Valid calls of the default namespaces (eth, net, web3); `ws` adds the subscription calls. */
export function evmSeeds(ws: boolean): EvmSeed[] {
  const seeds: EvmSeed[] = [
    { method: 'eth_blockNumber', params: [] },
    { method: 'eth_chainId', params: [] },
    { method: 'eth_syncing', params: null },
    { method: 'eth_gasPrice', params: [] },
    { method: 'eth_maxPriorityFeePerGas', params: [] },
    { method: 'eth_getBalance', params: [ADDR, 'latest'] },
    { method: 'eth_getTransactionCount', params: [ADDR, 'pending'] },
    { method: 'eth_getCode', params: [ADDR, '0x1'] },
    { method: 'eth_getStorageAt', params: [ADDR, '0x0', 'latest'] },
    { method: 'eth_getBlockByNumber', params: ['0x1', true] },
    { method: 'eth_getBlockByHash', params: [HASH, false] },
    { method: 'eth_getBlockTransactionCountByNumber', params: ['latest'] },
    { method: 'eth_getTransactionByHash', params: [HASH] },
    { method: 'eth_getTransactionReceipt', params: [HASH] },
    { method: 'eth_getBlockReceipts', params: ['latest'] },
    { method: 'eth_call', params: [{ to: ADDR, data: '0x70a08231', gas: '0x5208' }, 'latest'] },
    { method: 'eth_estimateGas', params: [{ from: ADDR, to: ADDR, value: '0x1' }] },
    { method: 'eth_createAccessList', params: [{ to: ADDR, data: '0x' }, 'latest'] },
    { method: 'eth_getLogs', params: [{ fromBlock: '0x1', toBlock: 'latest', address: ADDR, topics: [HASH] }] },
    { method: 'eth_feeHistory', params: ['0x4', 'latest', [25, 75]] },
    { method: 'eth_getProof', params: [ADDR, ['0x0'], 'latest'] },
    // An undecodable raw tx: refused, never sent.
    { method: 'eth_sendRawTransaction', params: ['0x02f86c0180843b9aca00'] },
    { method: 'eth_newBlockFilter', params: [] },
    { method: 'eth_newFilter', params: [{ fromBlock: 'latest', address: [ADDR] }] },
    { method: 'eth_getFilterChanges', params: ['0x1'] },
    { method: 'eth_uninstallFilter', params: ['0x1'] },
    { method: 'eth_accounts', params: [] },
    { method: 'net_version', params: [] },
    { method: 'net_listening', params: [] },
    { method: 'web3_clientVersion', params: [] },
    { method: 'web3_sha3', params: ['0x68656c6c6f'] },
  ];
  if (ws) {
    seeds.push(
      { method: 'eth_subscribe', params: ['newHeads'] },
      { method: 'eth_subscribe', params: ['logs', { address: ADDR, topics: [HASH] }] },
      { method: 'eth_subscribe', params: ['newPendingTransactions'] },
      { method: 'eth_unsubscribe', params: ['0x1'] },
    );
  }
  return seeds;
}

/** A mutated (possibly batched) geth JSON-RPC body. */
function evmBody(rng: Rng, seeds: EvmSeed[]): { seed: string; body: Buffer; applied: string[]; calls: number } {
  const applied: string[] = [];
  const one = (): { seed: string; v: JsonValue } => {
    const s = rng.pick(seeds);
    const o: { [k: string]: JsonValue } = { jsonrpc: '2.0', id: rng.chance(0.1) ? `id-${rng.int(1000)}` : rng.int(1_000_000), method: s.method };
    // A copy: mutators may change what they are given, and the seeds serve every case.
    if (s.params !== null) o.params = JSON.parse(JSON.stringify(s.params)) as JsonValue[];
    return { seed: s.method, v: o };
  };
  const first = one();
  let v: JsonValue = first.v;
  // Mutations of the envelope members and of the params tree alike.
  for (let n = rng.weighted([[3, 0], [5, 1], [2, 2], [1, 3]] as const); n > 0; n--) v = mutateJson(rng, v, applied);
  if (rng.chance(0.1)) {
    const m = pickMutator(rng, enabled(JSON_MUTATORS));
    applied.push(m.name);
    v = m.apply(rng, v);
  }
  if (rng.chance(0.15)) {
    const kind = rng.pick(['wrap', 'many', 'empty', 'nested', 'mixed', 'tooMany', 'notifications']);
    applied.push(`batch.${kind}`);
    if (kind === 'wrap') v = [v];
    else if (kind === 'many') v = [v, ...Array.from({ length: rng.range(1, 9) }, () => one().v)];
    else if (kind === 'empty') v = [];
    else if (kind === 'nested') v = [[v]];
    else if (kind === 'mixed') v = [v, 1, null, 'x', [], one().v];
    else if (kind === 'notifications') v = Array.from({ length: rng.range(1, 5) }, () => {
      const o = one().v as { [k: string]: JsonValue };
      delete o.id;
      return o;
    });
    else v = Array.from({ length: rng.range(101, 1200) }, () => one().v);
  }
  let body: Buffer = Buffer.from(toJson(v), 'utf8');
  if (rng.chance(0.15)) body = mutateBytes(rng, body, applied);
  return { seed: first.seed, body, applied, calls: Array.isArray(v) ? v.length : 1 };
}

/** Problem with one geth JSON-RPC message (an answer, or a subscription notification), or null. */
export function gethEnvelopeProblem(v: unknown, ws: boolean): string | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'message is not an object';
  const o = v as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') return `jsonrpc is ${JSON.stringify(o.jsonrpc)}`;
  if (ws && o.method === 'eth_subscription' && !('id' in o)) {
    const p = o.params as Record<string, unknown> | null;
    if (p === null || typeof p !== 'object' || typeof p.subscription !== 'string' || !('result' in p)) return 'notification without {subscription, result}';
    return null;
  }
  const hasResult = 'result' in o;
  const hasError = 'error' in o;
  if (hasResult === hasError) return 'not exactly one of result/error';
  if (!('id' in o)) return 'answer without id';
  // geth echoes any id that is not an object or an array (rpc/json.go hasValidID): true too.
  if (o.id !== null && typeof o.id !== 'string' && typeof o.id !== 'number' && typeof o.id !== 'boolean') return `id of type ${typeof o.id}`;
  if (hasError) {
    const e = o.error as Record<string, unknown> | null;
    if (e === null || typeof e !== 'object') return 'error is not an object';
    if (!Number.isInteger(e.code)) return `error.code ${JSON.stringify(e.code)}`;
    if (typeof e.message !== 'string') return 'error.message is not a string';
  }
  for (const k of Object.keys(o)) if (!['jsonrpc', 'id', 'result', 'error'].includes(k)) return `unexpected member ${k}`;
  return null;
}

/** geth's own refusals, written before any method runs (rpc/http.go validateRequest, node/rpcstack.go). */
const GETH_TEXT = [/^method not allowed\n$/, /^invalid content type, only application\/json is supported\n$/, /^content length too large \(\d+>\d+\)\n$/, /^400 Bad Request$/];
const GETH_STATUSES = new Set([200, 400, 405, 413, 415]);

function judgeEvmHttp(a: HttpAnswer, head: boolean): string | null {
  if (!GETH_STATUSES.has(a.status)) return `HTTP status ${a.status}`;
  const text = a.body.toString('utf8');
  const leak = jsLeak(text);
  if (leak) return `a JavaScript error leaks into the answer (${leak})`;
  if (head) return a.body.length === 0 ? null : 'body on a HEAD answer';
  const ct = (header(a, 'content-type') ?? '').toLowerCase();
  if (ct.startsWith('application/json')) {
    if (a.body.length === 0) return a.status === 200 ? null : `empty JSON body with status ${a.status}`;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return 'application/json body does not parse';
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return 'empty batch answer';
      for (const x of v) {
        const p = gethEnvelopeProblem(x, false);
        if (p) return `batch element: ${p}`;
      }
      return a.status === 200 ? null : `batch with status ${a.status}`;
    }
    return gethEnvelopeProblem(v, false);
  }
  if (ct.startsWith('text/plain')) return GETH_TEXT.some((re) => re.test(text)) || isFramingError(a) ? null : `unexpected text body ${printable(a.body, 200)}`;
  // geth answers an empty GET (a health check) and a notification-only body with 200 and nothing.
  if (a.body.length === 0 && a.status === 200) return null;
  return `unexpected content-type ${JSON.stringify(ct)} with status ${a.status}`;
}

export function evmHttpSurface(t: FuzzTarget): Surface<HttpCase> {
  const seeds = evmSeeds(false);
  return httpSurface('evm-http', t.ports.jsonRpc, seeds.map((s) => s.method), (rng) => {
    const { seed, body, applied, calls } = evmBody(rng, seeds);
    const headers: Array<[string, string]> = [['Host', '127.0.0.1']];
    headers.push(['Content-Type', rng.chance(0.9) ? 'application/json' : rng.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8', 'application/json-rpc'])]);
    const spec: HttpRequestSpec = { method: 'POST', path: '/', query: '', headers, body, applied, calls };
    if (rng.chance(0.08)) {
      spec.method = rng.pick(httpMethods(['GET', 'PUT', 'HEAD', 'DELETE', 'OPTIONS']));
      applied.push('rpc.httpMethod');
    }
    if (rng.chance(0.05)) spec.path = mutatePath(rng, '/', applied);
    if (rng.chance(0.1)) {
      headers.push(...randomHeaders(rng));
      applied.push('rpc.headers');
    }
    return { seed, spec };
  }, judgeEvmHttp);
}

/** The EVM websocket's read limit (geth's wsReadLimit, src/rpc/jsonrpc/geth-server.ts). */
const EVM_WS_READ_LIMIT = 32 * 1024 * 1024;

export function evmWsSurface(t: FuzzTarget): Surface<WsCase> {
  const seeds = evmSeeds(true);
  return jsonRpcWsSurface({
    name: 'evm-ws',
    url: `ws://127.0.0.1:${t.ports.jsonRpcWs}/`,
    seedNames: seeds.map((s) => s.method),
    message: (rng) => evmBody(rng, seeds),
    maxMessage: EVM_WS_READ_LIMIT,
    sentinelMethod: 'web3_clientVersion',
    judge: (v) => (Array.isArray(v) ? (v.length === 0 ? 'empty batch answer' : v.map((x) => gethEnvelopeProblem(x, true)).find((p) => p !== null) ?? null) : gethEnvelopeProblem(v, true)),
  });
}
