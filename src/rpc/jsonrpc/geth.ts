/**
 * The geth dialect of the JSON-RPC layer: go-ethereum's rules for messages, batches, positional
 * parameters and errors (ethereum/go-ethereum:rpc/json.go, rpc/handler.go, rpc/errors.go,
 * rpc/server.go; hex values as common/hexutil/json.go and rpc/types.go read them).
 *
 * - A message is a call when `jsonrpc` is exactly "2.0", `id` is present and not an object or an
 *   array (`"id":null` is a call), and `method` is a non-empty string; without `id` it is a
 *   notification: the method runs and nothing is answered. Anything else is -32600
 *   `invalid request` (with the id when it is a valid one, else `"id":null`).
 * - Unknown method: -32601 `the method <name> does not exist/is not available`.
 * - Parameters are positional: `params` absent or `null` is `[]`; an object is -32602
 *   `non-array args`; more than declared: `too many arguments, want at most N`; a value that does
 *   not decode: `invalid argument <i>: <error>`; a required one missing: `missing value for
 *   required argument <i>`.
 * - A method's error: its `rpcCode` (GethRpcError), else -32000, with the error's text as message.
 * - Batches: `[]` is one -32600 `empty batch` object; more than `batchItemLimit` items is an array
 *   of one -32600 `batch too large` error (with the id of the first call); once the answers pass
 *   `batchResponseMaxSize` bytes, the remaining calls get -32003 `response too large`.
 * - `*_subscribe` over HTTP: -32601 `notifications not supported`.
 * - A time limit (HTTP's `http-timeout`, less GETH_TIMEOUT_MARGIN_MS) that a call outruns answers
 *   -32002 `request timed out` and aborts the call's signal; in a batch, the calls answered by
 *   then keep their answers, the one running and those not started get the error, and no further
 *   call starts.
 * Ids are echoed as their JSON value re-serialised (geth echoes the raw bytes: `1.0` comes back
 * as `1` here).
 */
import type { Logger } from '../../log.js';
import { mayNestDeeperThan, RPC_JSON_MAX_DEPTH, scanJson } from '../server/gojson.js';
import type { Args, ArgValue } from './cometbft-params.js';
import { invoke, isThenable, recordRejected, UNKNOWN_METHOD, type RpcMetrics } from './dispatch.js';
import { tracing } from '../../profiling/spans.js';
import { RouteTable, type Route, type RouteContext, type Transport } from './methods.js';
import type { WsConnection } from './ws.js';
import { RawJson, type StreamScope } from '../../evm/tracers/raw-json.js';

/** ethereum/go-ethereum:rpc/errors.go and rpc/json.go codes. */
export const GETH_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** errcodeDefault: any error without a code of its own. */
  DEFAULT: -32000,
  /** errcodeTimeout: the request outran the HTTP server's write timeout. */
  TIMEOUT: -32002,
  /** errcodeResponseTooLarge. */
  RESPONSE_TOO_LARGE: -32003,
} as const;

/**
 * rpc/handler.go with an HTTP server's WriteTimeout (rpc/context.go ContextRequestTimeout): the
 * call is answered 100 ms before the server would cut the connection.
 */
export const GETH_TIMEOUT_MARGIN_MS = 100;

/** node/defaults.go: BatchRequestLimit and BatchResponseMaxSize. */
export const GETH_BATCH_ITEM_LIMIT = 1000;
export const GETH_BATCH_RESPONSE_MAX_SIZE = 25_000_000;
/** rpc/json.go maxMethodNameLength. */
export const GETH_MAX_METHOD_NAME_LENGTH = 2048;

/**
 * An error a geth-dialect method answers with its own code (and optional `data`), like geth's
 * rpc.Error / rpc.DataError (e.g. code 3 `execution reverted` with the revert bytes as data).
 */
export class GethRpcError extends Error {
  readonly code = 'RPC_GETH_ERROR';
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    // An answer to the client, not a fault of the node: no stack trace is captured (capturing one
    // was 1.3 % of the node's CPU under the EVM fuzzer, where most calls end in such an error).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'GethRpcError';
  }
}

// ----------------------------------------------------------------------------------------------
// Parameters (positional, geth's Go types)

/**
 * Parameter types of geth-dialect methods, by the Go type geth decodes into:
 * - `quantity`: *hexutil.Big → bigint; `uint64`: hexutil.Uint64 → bigint;
 * - `data`: hexutil.Bytes → Uint8Array; `address`: common.Address, `hash`: common.Hash → Uint8Array;
 * - `block`: rpc.BlockNumber → bigint, or the tag (`latest`, `earliest`, `pending`, `safe`, `finalized`);
 * - `bool`, `string`; `any`: the JSON value as parsed (a struct the method decodes itself).
 */
export type GethParamType = 'quantity' | 'uint64' | 'data' | 'address' | 'hash' | 'block' | 'bool' | 'string' | 'any';
export const GETH_PARAM_TYPES: readonly GethParamType[] = ['quantity', 'uint64', 'data', 'address', 'hash', 'block', 'bool', 'string', 'any'];

export interface GethParamValueMap {
  quantity: bigint;
  uint64: bigint;
  data: Uint8Array;
  address: Uint8Array;
  hash: Uint8Array;
  block: bigint | 'latest' | 'earliest' | 'pending' | 'safe' | 'finalized';
  bool: boolean;
  string: string;
  any: unknown;
}

/** One positional parameter; `optional` is a Go pointer parameter (may be left out). */
export interface GethParamSpec {
  readonly name: string;
  readonly type: GethParamType;
  readonly optional?: boolean;
}

export type GethArgsOf<P extends readonly GethParamSpec[]> = {
  [S in P[number] as S['name']]: S extends { optional: true } ? GethParamValueMap[S['type']] | undefined : GethParamValueMap[S['type']];
};

export interface GethMethodDef<P extends readonly GethParamSpec[]> {
  name: string;
  params?: P;
  handler: (args: GethArgsOf<P>, ctx: RouteContext) => unknown;
}

/** Declares a geth-dialect method (served over HTTP and websocket alike). */
export function gethMethod<const P extends readonly GethParamSpec[] = []>(def: GethMethodDef<P>): Route {
  return {
    name: def.name,
    params: (def.params ?? []) as unknown as Route['params'],
    cacheable: false,
    wsOnly: false,
    unsafe: false,
    handler: def.handler as unknown as Route['handler'],
  };
}

/** A geth method table: the shared RouteTable with geth's parameter types. */
export function gethTable(methods: readonly Route[]): RouteTable {
  return new RouteTable(methods, { unsafe: false, paramTypes: GETH_PARAM_TYPES });
}

/** A parameter that does not decode; the message is geth's text after `invalid argument <i>: `. */
class ArgError extends Error {}

/** common/hexutil errors. */
const HEX = {
  EMPTY: 'empty hex string',
  SYNTAX: 'invalid hex string',
  MISSING_PREFIX: 'hex string without 0x prefix',
  ODD_LENGTH: 'hex string of odd length',
  EMPTY_NUMBER: 'hex string "0x"',
  LEADING_ZERO: 'hex number with leading zero digits',
  UINT64_RANGE: 'hex number > 64 bits',
  BIG256_RANGE: 'hex number > 256 bits',
} as const;

const GO_TYPE: Record<GethParamType, string> = {
  quantity: '*hexutil.Big',
  uint64: 'hexutil.Uint64',
  data: 'hexutil.Bytes',
  address: 'common.Address',
  hash: 'common.Hash',
  block: 'rpc.BlockNumber',
  bool: 'bool',
  string: 'string',
  any: 'interface {}',
};

const has0x = (s: string) => s.length >= 2 && s[0] === '0' && (s[1] === 'x' || s[1] === 'X');
const HEX_DIGITS = /^[0-9a-fA-F]*$/;

/** json.UnmarshalTypeError's text, as hexutil's wrapTypeError and errNonString build it. */
const typeError = (what: string, t: GethParamType) => new ArgError(`json: cannot unmarshal ${what} into Go value of type ${GO_TYPE[t]}`);

/** hexutil checkNumberText + the range check; `max` hex digits. Empty input is zero. */
function hexNumber(s: string, maxDigits: number, rangeErr: string): bigint | string {
  if (s.length === 0) return 0n;
  if (!has0x(s)) return HEX.MISSING_PREFIX;
  const raw = s.slice(2);
  if (raw.length === 0) return HEX.EMPTY_NUMBER;
  if (raw.length > 1 && raw[0] === '0') return HEX.LEADING_ZERO;
  if (raw.length > maxDigits) return rangeErr;
  if (!HEX_DIGITS.test(raw)) return HEX.SYNTAX;
  return BigInt(`0x${raw}`);
}

/** A hex digit's value, or -1. */
function nibble(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x57 : -1;
}

/** Texts up to this length (a hash's 66) are decoded here; longer ones by Buffer's decoder. */
const HEX_LOOP_MAX_CHARS = 130;

/** hexutil checkText(input, wantPrefix=true) + decoding. Empty input is empty bytes. */
function hexBytes(s: string): Uint8Array | string {
  const n = s.length;
  if (n === 0) return new Uint8Array(0);
  if (!has0x(s)) return HEX.MISSING_PREFIX;
  if (n % 2 !== 0) return HEX.ODD_LENGTH;
  if (n <= HEX_LOOP_MAX_CHARS) {
    // Addresses and hashes, the common parameters: no slice, regex or intermediate Buffer.
    const out = new Uint8Array((n - 2) >> 1);
    for (let i = 2, j = 0; i < n; i += 2, j++) {
      const hi = nibble(s.charCodeAt(i));
      const lo = nibble(s.charCodeAt(i + 1));
      if (hi < 0 || lo < 0) return HEX.SYNTAX;
      out[j] = (hi << 4) | lo;
    }
    return out;
  }
  const raw = s.slice(2);
  // (Not Buffer's decoder alone as the check: it reads U+0130 as 0x30.)
  if (!HEX_DIGITS.test(raw)) return HEX.SYNTAX;
  return new Uint8Array(Buffer.from(raw, 'hex'));
}

const BLOCK_TAGS = new Set(['latest', 'earliest', 'pending', 'safe', 'finalized']);
const INT64_MAX = (1n << 63n) - 1n;

/** One argument as geth's json.Decoder would decode it into the parameter's Go type. */
export function decodeGethArg(t: GethParamType, v: unknown): unknown {
  switch (t) {
    case 'any':
      return v;
    case 'bool':
      if (v === null) return false;
      if (typeof v !== 'boolean') throw typeError(jsonKind(v), t);
      return v;
    case 'string':
      if (v === null) return '';
      if (typeof v !== 'string') throw typeError(jsonKind(v), t);
      return v;
    case 'quantity':
    case 'uint64': {
      if (typeof v !== 'string') throw typeError('non-string', t);
      const n = t === 'quantity' ? hexNumber(v, 64, HEX.BIG256_RANGE) : hexNumber(v, 16, HEX.UINT64_RANGE);
      if (typeof n === 'string') throw typeError(n, t);
      return n;
    }
    case 'data': {
      if (typeof v !== 'string') throw typeError('non-string', t);
      const b = hexBytes(v);
      if (typeof b === 'string') throw typeError(b, t);
      return b;
    }
    case 'address':
    case 'hash': {
      if (typeof v !== 'string') throw typeError('non-string', t);
      const b = hexBytes(v);
      if (typeof b === 'string') throw typeError(b, t);
      const want = t === 'address' ? 20 : 32;
      // hexutil UnmarshalFixedText: not a decoding error, so not wrapped as a type error.
      if (b.length !== want) throw new ArgError(`hex string has length ${v.length - 2}, want ${want * 2} for ${GO_TYPE[t]}`);
      return b;
    }
    case 'block': {
      // rpc/types.go BlockNumber.UnmarshalJSON: the text without its quotes, then a tag or hex.
      const text = typeof v === 'string' ? v : JSON.stringify(v);
      if (BLOCK_TAGS.has(text)) return text;
      // hexutil.DecodeUint64: unlike UnmarshalText, an empty string is an error.
      if (text.length === 0) throw new ArgError(HEX.EMPTY);
      const n = hexNumber(text, 16, HEX.UINT64_RANGE);
      if (typeof n === 'string') throw new ArgError(n);
      if (n > INT64_MAX) throw new ArgError('block number larger than int64');
      return n;
    }
  }
}

function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v; // string, number, object
}

/** rpc/json.go parsePositionalArguments; throws the -32602 message. */
export function decodeGethParams(specs: readonly GethParamSpec[], raw: unknown, hasParams: boolean): Args {
  const args: Args = {};
  let items: unknown[] = [];
  if (hasParams && raw !== null) {
    if (!Array.isArray(raw)) throw new ArgError('non-array args');
    items = raw;
  }
  for (let i = 0; i < items.length; i++) {
    if (i >= specs.length) throw new ArgError(`too many arguments, want at most ${specs.length}`);
    const spec = specs[i]!;
    const item = items[i];
    // A null for a pointer parameter leaves it nil: not given.
    if (item === null && spec.optional) continue;
    try {
      args[spec.name] = decodeGethArg(spec.type, item) as ArgValue;
    } catch (e) {
      if (e instanceof ArgError) throw new ArgError(`invalid argument ${i}: ${e.message}`);
      throw e;
    }
  }
  for (let i = items.length; i < specs.length; i++) {
    if (!specs[i]!.optional) throw new ArgError(`missing value for required argument ${i}`);
  }
  return args;
}

// ----------------------------------------------------------------------------------------------
// Messages

/** One decoded message of a body or websocket frame. */
export interface GethMessage {
  /** `jsonrpc` is exactly "2.0". */
  version: boolean;
  /** The `id` member: undefined when absent (null when `"id":null`). */
  id: unknown;
  method: string;
  params: unknown;
  hasParams: boolean;
  hasResult: boolean;
  /**
   * Members named `method` in any case: when 1, `method` is that member's text (or '' when it is
   * no string), so whether the message calls a private method is whether `method` is one.
   */
  methodKeys: number;
}

const hasValidId = (m: GethMessage) => m.id !== undefined && (m.id === null || typeof m.id !== 'object');
const isCall = (m: GethMessage) => m.version && hasValidId(m) && m.method !== '';
const isNotification = (m: GethMessage) => m.version && m.id === undefined && m.method !== '';
/** A response (sent to a server, it is dropped: geth's handleImmediate). */
const isResponse = (m: GethMessage) => m.version && hasValidId(m) && m.method === '' && !m.hasParams && m.hasResult;

/** encoding/json's decoding of a value into jsonrpcMessage: fields matched case-insensitively. */
export function toMessage(v: unknown): GethMessage {
  const m: GethMessage = { version: false, id: undefined, method: '', params: undefined, hasParams: false, hasResult: false, methodKeys: 0 };
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return m;
  const o = v as Record<string, unknown>;
  for (const key in o) {
    const x = o[key];
    // The members' usual spelling first: no toLowerCase for them.
    switch (key === 'jsonrpc' || key === 'id' || key === 'method' || key === 'params' ? key : key.toLowerCase()) {
      case 'jsonrpc':
        m.version = x === '2.0';
        break;
      case 'id':
        m.id = x;
        break;
      case 'method':
        m.method = typeof x === 'string' ? x : '';
        m.methodKeys++;
        break;
      case 'params':
        m.params = x;
        m.hasParams = x !== null;
        break;
      case 'result':
      case 'error':
        if (x !== null) m.hasResult = true;
        break;
    }
  }
  return m;
}

/** The `"id":…` member of an answer. */
function idJson(id: unknown): string {
  if (id === undefined || id === null) return 'null';
  // A finite number's JSON text is its Number#toString text (ECMA-262 SerializeJSONProperty).
  // JSON.parse gives no NaN, but it does give ±Infinity for an id too large for a double (1e400):
  // JSON has no text for it, and JSON.stringify writes null, as the answer did before this path.
  // Strings go through jsonString's no-escape check.
  if (typeof id === 'number') return Number.isFinite(id) ? `${id}` : 'null';
  return typeof id === 'string' ? jsonString(id) : JSON.stringify(id);
}

/**
 * JSON.stringify of a string, without its call when nothing needs escaping (printable ASCII
 * other than `"` and `\\`, e.g. every hex quantity): the common answer of the eth methods.
 */
function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}

export function gethErrorEnvelope(id: unknown, code: number, message: string, data?: unknown): string {
  const err = data === undefined ? { code, message } : { code, message, data };
  return `{"jsonrpc":"2.0","id":${idJson(id)},"error":${JSON.stringify(err)}}`;
}

function successEnvelope(id: unknown, result: unknown): string {
  let json: string | undefined;
  try {
    // A tracer's result arrives as JSON text already (src/evm/tracers/raw-json.ts): written as is.
    json = typeof result === 'string' ? jsonString(result) : result instanceof RawJson ? result.json : JSON.stringify(result === undefined ? null : result);
  } catch (e) {
    return gethErrorEnvelope(id, GETH_CODES.INTERNAL_ERROR, (e as Error).message);
  }
  return `{"jsonrpc":"2.0","id":${idJson(id)},"result":${json}}`;
}

/** What parsing a body or frame gave: the messages, whether it was a batch, or Go's syntax error. */
export type GethParsed = { ok: true; messages: unknown[]; batch: boolean } | { ok: false; error: string };

/** parseGethValue's answer for input with no value (only white space): Go's io.EOF. */
export const GETH_NO_VALUE: unique symbol = Symbol('no JSON value');

/** parseGethValue's answer for input that does not decode: Go's syntax error text. */
export class GethSyntaxError {
  constructor(readonly error: string) {}
}

/**
 * json.Decoder.Decode of the first JSON value (rpc/json.go): the value, GETH_NO_VALUE for empty
 * input, or a GethSyntaxError. A batch is exactly an array value (it begins with `[`).
 */
export function parseGethValue(buf: Uint8Array): unknown {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let first = -1;
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) {
      first = c;
      break;
    }
  }
  if (first === -1) return GETH_NO_VALUE;
  let value: unknown;
  let parsed = false;
  try {
    value = JSON.parse(b.toString());
    parsed = true;
  } catch {
    /* Go's decoder decides: the first value may be followed by more */
  }
  if (!parsed || mayNestDeeperThan(b, RPC_JSON_MAX_DEPTH)) {
    const r = scanJson(b, 'decode', RPC_JSON_MAX_DEPTH);
    if (!r.ok) return new GethSyntaxError(r.error);
    if (!parsed) value = JSON.parse(b.subarray(0, r.end).toString());
  }
  return value;
}

/** parseGethValue, then parseMessage (rpc/json.go): the messages and whether they were a batch. Empty input is EOF (null). */
export function parseGethBody(buf: Uint8Array): GethParsed | null {
  const value = parseGethValue(buf);
  if (value === GETH_NO_VALUE) return null;
  if (value instanceof GethSyntaxError) return { ok: false, error: value.error };
  if (Array.isArray(value)) return { ok: true, messages: value, batch: true };
  return { ok: true, messages: [value], batch: false };
}

export interface GethJsonRpcOptions {
  logger?: Logger;
  metrics?: RpcMetrics;
  /** Items per batch; 0 = no limit. Default 1000. */
  batchItemLimit?: number;
  /** Bytes of answers per batch before the rest get -32003; 0 = no limit. Default 25,000,000. */
  batchResponseMaxSize?: number;
}

/** What a call over a connection needs besides the message: its transport and context. */
export interface GethCallSite {
  readonly transport: Transport;
  readonly remoteAddr: string;
  readonly signal: AbortSignal;
  readonly ws: WsConnection | undefined;
  /** Set for a single HTTP request to a method that may stream its result. */
  readonly stream?: StreamScope;
}

class GethCallContext implements RouteContext {
  constructor(
    readonly id: string | number,
    private readonly site: GethCallSite,
  ) {}
  get transport(): Transport {
    return this.site.transport;
  }
  get ws(): WsConnection | undefined {
    return this.site.ws;
  }
  get remoteAddr(): string {
    return this.site.remoteAddr;
  }
  get signal(): AbortSignal {
    return this.site.signal;
  }
  get stream(): StreamScope | undefined {
    return this.site.stream;
  }
}

/** How long a call may run before it is answered -32002, and what to abort when it has. */
export interface CallTimeLimit {
  /** Milliseconds; 0 or less: no limit. */
  readonly ms: number;
  /** Called once at the timeout: cancels the request's signal (geth cancels its context). */
  readonly onTimeout: () => void;
}

interface BatchState {
  /** Bytes of the answers so far (batchResponseMaxSize). */
  bytes: number;
  /** The index of the call running or next to start. */
  next: number;
  timedOut: boolean;
}

/** rpc/errors.go errMsgTimeout with errcodeTimeout. */
const timeoutEnvelope = (id: unknown): string => gethErrorEnvelope(id, GETH_CODES.TIMEOUT, 'request timed out');

/** `answer`, or `onTimeout()`'s answer when `limit.ms` pass first (then `limit.onTimeout` runs). */
function withTimeLimit(answer: Promise<string | null>, limit: CallTimeLimit, onTimeout: () => string | null): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      limit.onTimeout();
      resolve(onTimeout());
    }, limit.ms);
    answer.then(
      (a) => {
        clearTimeout(timer);
        resolve(a);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** A notification's answer is none (handleMsg runs it and writes nothing). */
const answerOf = (notification: boolean, s: string): string | null => (notification ? null : s);

/** geth's JSON-RPC over one method table. */
export class GethJsonRpc {
  private readonly log: Logger | undefined;
  private readonly metrics: RpcMetrics | undefined;
  private readonly itemLimit: number;
  private readonly responseMax: number;

  constructor(
    readonly table: RouteTable,
    opts: GethJsonRpcOptions = {},
  ) {
    this.log = opts.logger;
    this.metrics = opts.metrics;
    this.itemLimit = opts.batchItemLimit ?? GETH_BATCH_ITEM_LIMIT;
    this.responseMax = opts.batchResponseMaxSize ?? GETH_BATCH_RESPONSE_MAX_SIZE;
  }

  /**
   * The answer to parsed messages (single or batch), or null when nothing is to be answered
   * (notifications, responses). Synchronous while every method is.
   */
  serve(parsed: { messages: unknown[]; batch: boolean }, site: GethCallSite, limit?: CallTimeLimit): string | null | Promise<string | null> {
    if (!parsed.batch) return this.single(toMessage(parsed.messages[0]), site, limit);
    const msgs = parsed.messages.map(toMessage);
    if (msgs.length === 0) return gethErrorEnvelope(null, GETH_CODES.INVALID_REQUEST, 'empty batch');
    if (this.itemLimit > 0 && msgs.length > this.itemLimit) {
      const first = msgs.find(isCall);
      return `[${gethErrorEnvelope(first?.id ?? null, GETH_CODES.INVALID_REQUEST, 'batch too large')}]`;
    }
    const out: string[] = [];
    const state: BatchState = { bytes: 0, next: 0, timedOut: false };
    const r = this.runBatch(msgs, 0, out, state, site);
    const finish = () => (out.length === 0 ? null : `[${out.join(',')}]`);
    if (r === undefined) return finish();
    if (limit === undefined || limit.ms <= 0) return r.then(finish);
    // rpc/handler.go batchCallBuffer.timeout: the answers so far, then the error for every call
    // not answered; the call running goes on (its signal aborted) but is answered no more.
    return withTimeLimit(r.then(finish), limit, () => {
      state.timedOut = true;
      for (let i = state.next; i < msgs.length; i++) if (isCall(msgs[i]!)) out.push(timeoutEnvelope(msgs[i]!.id));
      return finish();
    });
  }

  private runBatch(msgs: GethMessage[], from: number, out: string[], state: BatchState, site: GethCallSite): Promise<void> | undefined {
    for (let i = from; i < msgs.length; i++) {
      if (state.timedOut) return undefined;
      state.next = i;
      const m = msgs[i]!;
      if (this.responseMax > 0 && state.bytes > this.responseMax) {
        if (isCall(m)) out.push(gethErrorEnvelope(m.id, GETH_CODES.RESPONSE_TOO_LARGE, 'response too large'));
        continue;
      }
      const a = this.call(m, site);
      if (a instanceof Promise) {
        return a.then((answer) => {
          this.add(out, state, answer);
          return this.runBatch(msgs, i + 1, out, state, site);
        });
      }
      this.add(out, state, a);
    }
    state.next = msgs.length;
    return undefined;
  }

  private add(out: string[], state: BatchState, answer: string | null): void {
    if (answer === null || state.timedOut) return;
    out.push(answer);
    state.bytes += answer.length;
  }

  /**
   * handleMsg / handleCallMsg for one message (of a body or frame that is no batch: toMessage of
   * its value), within `limit` when one is given (rpc/handler.go handleNonBatchCall).
   */
  single(m: GethMessage, site: GethCallSite, limit?: CallTimeLimit): string | null | Promise<string | null> {
    const a = this.call(m, site);
    if (limit === undefined || limit.ms <= 0 || !(a instanceof Promise)) return a;
    // A notification that times out is answered with nothing, as it would have been.
    return withTimeLimit(a, limit, () => (isNotification(m) ? null : timeoutEnvelope(m.id)));
  }

  private call(m: GethMessage, site: GethCallSite): string | null | Promise<string | null> {
    const notification = isNotification(m);
    if (!notification && !isCall(m)) {
      if (isResponse(m)) return null;
      return gethErrorEnvelope(hasValidId(m) ? m.id : null, GETH_CODES.INVALID_REQUEST, 'invalid request');
    }
    if (m.method.length > GETH_MAX_METHOD_NAME_LENGTH) {
      recordRejected(this.metrics, UNKNOWN_METHOD, site.transport);
      return answerOf(notification, gethErrorEnvelope(m.id, GETH_CODES.INVALID_REQUEST, `method name too long: ${m.method.length} > ${GETH_MAX_METHOD_NAME_LENGTH}`));
    }
    if (site.transport !== 'websocket' && m.method.endsWith('_subscribe')) {
      recordRejected(this.metrics, this.table.get(m.method) ? m.method : UNKNOWN_METHOD, site.transport);
      return answerOf(notification, gethErrorEnvelope(m.id, GETH_CODES.METHOD_NOT_FOUND, 'notifications not supported'));
    }
    const route = this.table.get(m.method);
    if (!route) {
      recordRejected(this.metrics, UNKNOWN_METHOD, site.transport);
      return answerOf(notification, gethErrorEnvelope(m.id, GETH_CODES.METHOD_NOT_FOUND, `the method ${m.method} does not exist/is not available`));
    }
    let args: Args;
    try {
      args = decodeGethParams(route.params as unknown as readonly GethParamSpec[], m.params, m.hasParams);
    } catch (e) {
      if (!(e instanceof ArgError)) throw e;
      recordRejected(this.metrics, route.name, site.transport);
      return answerOf(notification, gethErrorEnvelope(m.id, GETH_CODES.INVALID_PARAMS, e.message));
    }
    const id = m.id as string | number;
    const ctx = new GethCallContext(id, site);
    if (this.metrics === undefined && !tracing()) {
      // invoke()'s plain path without its outcome object: the handler's result or throw as is.
      let r: unknown;
      try {
        r = route.handler(args, ctx);
      } catch (e) {
        return answerOf(notification, this.failed(route, m.id, e));
      }
      if (!isThenable(r)) return answerOf(notification, successEnvelope(m.id, r));
      return Promise.resolve(r).then(
        (result) => answerOf(notification, successEnvelope(m.id, result)),
        (e: unknown) => answerOf(notification, this.failed(route, m.id, e)),
      );
    }
    const o = invoke(route, args, ctx, this.metrics);
    if (o instanceof Promise) return o.then((done) => answerOf(notification, done.ok ? successEnvelope(m.id, done.result) : this.failed(route, m.id, done.thrown)));
    return answerOf(notification, o.ok ? successEnvelope(m.id, o.result) : this.failed(route, m.id, o.thrown));
  }

  /** rpc/json.go errorMessage: the error's own code (rpc.Error), else -32000; data when given. */
  private failed(route: Route, id: unknown, e: unknown): string {
    if (this.log?.enabled('debug')) this.log.debug('JSON-RPC method failed', { method: route.name, err: e as Error });
    if (e instanceof GethRpcError) return gethErrorEnvelope(id, e.rpcCode, e.message, e.data);
    const rpcCode = (e as { rpcCode?: unknown } | null)?.rpcCode;
    const message = e instanceof Error ? e.message : String(e);
    return gethErrorEnvelope(id, typeof rpcCode === 'number' ? rpcCode : GETH_CODES.DEFAULT, message);
  }
}
