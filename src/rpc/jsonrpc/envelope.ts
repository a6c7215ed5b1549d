/**
 * JSON-RPC error codes, error classes and response envelopes of the node RPC, as CometBFT 0.38
 * writes them (cometbft: rpc/jsonrpc/types/types.go).
 *
 * Envelopes are built as strings: `{"jsonrpc":"2.0","id":…,"result":…}` or `…,"error":{…}}`,
 * compact, with `id` omitted when it is unknown (parse errors, batch-size errors) and `data`
 * omitted when empty, exactly as Go's json.Marshal of RPCResponse does (`omitempty`).
 */
import { marshalJson } from '../server/gojson.js';

/**
 * A request id: CometBFT keeps strings as strings and truncates numbers to Go `int`
 * (types.go idFromInterface: `int(f)` of the float64). A numeric id is that int's value, which a
 * JS number always holds exactly: a float64 truncated within [-2^63, 2^63) is still a float64, and
 * amd64's answer for anything outside (CVTTSD2SQ's 0x8000000000000000 = -2^63) is one too.
 * Beyond 2^53 such numbers print inexactly with String(): see idJson.
 */
export type JsonRpcId = string | number;

/** The codes and fixed messages of rpc/jsonrpc/types/types.go (RPCParseError … RPCServerError). */
export const RPC_ERRORS = {
  PARSE_ERROR: { code: -32700, message: 'Parse error. Invalid JSON' },
  INVALID_REQUEST: { code: -32600, message: 'Invalid Request' },
  METHOD_NOT_FOUND: { code: -32601, message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, message: 'Invalid params' },
  INTERNAL_ERROR: { code: -32603, message: 'Internal error' },
  /** Pushed on a websocket when a subscription is cancelled (rpc/core/events.go). */
  SERVER_ERROR: { code: -32000, message: 'Server error' },
} as const;

export type RpcErrorKind = keyof typeof RPC_ERRORS;

/** The `error` member of a response. */
export interface RpcErrorObject {
  code: number;
  message: string;
  /** `err.Error()` of the Go error; omitted when empty. */
  data?: string;
}

/**
 * An error a route handler (or the transport) answers with a specific JSON-RPC code. Any other
 * thrown Error becomes -32603 `Internal error` with `data` = its message, which is what CometBFT
 * does for every error a method returns (unreflectResult → RPCInternalError).
 */
export class RpcError extends Error {
  /** Code string for callers (DEVELOPING.md: errors crossing modules carry a `code` string). */
  readonly code: RpcErrorKind;
  readonly rpcCode: number;
  /** The wire `data`; the Error's own message is the same text. */
  readonly data: string;
  constructor(kind: RpcErrorKind, data = '') {
    super(data || RPC_ERRORS[kind].message);
    this.name = 'RpcError';
    this.code = kind;
    this.rpcCode = RPC_ERRORS[kind].code;
    this.data = data;
  }
  toObject(): RpcErrorObject {
    return rpcErrorObject(this.code, this.data);
  }
}

export function rpcErrorObject(kind: RpcErrorKind, data = ''): RpcErrorObject {
  const e = RPC_ERRORS[kind];
  return data ? { code: e.code, message: e.message, data } : { code: e.code, message: e.message };
}

/** The error object for anything a handler threw (RpcError keeps its code; the rest is -32603). */
export function toRpcErrorObject(e: unknown): RpcErrorObject {
  if (e instanceof RpcError) return e.toObject();
  const msg = e instanceof Error ? e.message : String(e);
  return rpcErrorObject('INTERNAL_ERROR', msg);
}

/** HTTP status lines used by the node RPC. */
export const HTTP_STATUS = {
  OK: '200 OK',
  NO_CONTENT: '204 No Content',
  BAD_REQUEST: '400 Bad Request',
  NOT_FOUND: '404 Not Found',
  METHOD_NOT_ALLOWED: '405 Method Not Allowed',
  HEADERS_TOO_LARGE: '431 Request Header Fields Too Large',
  INTERNAL: '500 Internal Server Error',
  UNAVAILABLE: '503 Service Unavailable',
} as const;

function idJson(id: JsonRpcId | null): string {
  if (id === null) return '';
  if (typeof id === 'number') {
    // Integer ids (every URI request's -1) need no escaping.
    if (Number.isSafeInteger(id)) return `"id":${id},`;
    // Beyond 2^53 String() gives the shortest round-trip digits (2^63 → 9223372036854776000);
    // Go prints the int's exact digits.
    if (Number.isInteger(id)) return `"id":${BigInt(id)},`;
  }
  return `"id":${marshalJson(id)},`;
}

/**
 * A result a handler has already serialised (with marshalJson's rules). Hot, rarely changing
 * results (status at a height, a block by height) cache their JSON and skip serialisation.
 */
export class RawJson {
  private uri: Buffer | null = null;
  constructor(readonly json: string) {}

  /**
   * The whole URI response (`id` is always -1 there) as bytes, built once: the envelope's string
   * concatenation and UTF-8 encoding of a 1–2 KiB result otherwise cost more per request than the
   * rest of the transport.
   */
  uriEnvelope(): Buffer {
    return (this.uri ??= Buffer.from(`{"jsonrpc":"2.0","id":-1,"result":${this.json}}`));
  }
}

/** `{"jsonrpc":"2.0","id":…,"result":…}`; a result that cannot be encoded becomes Go's -32603. */
export function successEnvelope(id: JsonRpcId | null, result: unknown): string {
  let body: string;
  if (result instanceof RawJson) return `{"jsonrpc":"2.0",${idJson(id)}"result":${result.json}}`;
  try {
    body = marshalJson(result);
  } catch (e) {
    // types.go NewRPCSuccessResponse: "error marshaling response: %w".
    return errorEnvelope(id, rpcErrorObject('INTERNAL_ERROR', `error marshaling response: ${(e as Error).message}`));
  }
  return `{"jsonrpc":"2.0",${idJson(id)}"result":${body}}`;
}

/** `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…,"data":…}}`; null id is omitted. */
export function errorEnvelope(id: JsonRpcId | null, error: RpcErrorObject): string {
  const err = error.data ? { code: error.code, message: error.message, data: error.data } : { code: error.code, message: error.message };
  return `{"jsonrpc":"2.0",${idJson(id)}"error":${marshalJson(err)}}`;
}
