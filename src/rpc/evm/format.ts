/** geth's JSON encodings (common/hexutil): QUANTITY minimal hex, DATA 0x lowercase hex. */
import { hex0x } from '../../crypto/bytes.js';
import { GethRpcError, GETH_CODES, decodeGethArg } from '../jsonrpc/geth.js';

export const qty = (n: bigint | number): string => `0x${BigInt(n).toString(16)}`;
export const hex = hex0x;
export const ZERO_HASH = `0x${'00'.repeat(32)}`;

/** A -32000 error (geth's errcodeDefault) with geth's text. */
export const gethError = (message: string, data?: unknown) => new GethRpcError(GETH_CODES.DEFAULT, message, data);
/** A -32602 error for argument `i`, worded as rpc/json.go parsePositionalArguments words it. */
export const argError = (i: number, message: string) => new GethRpcError(GETH_CODES.INVALID_PARAMS, `invalid argument ${i}: ${message}`);

/** Decodes a value as geth's Go type would, or throws -32602 for argument `i`. */
export function arg<T>(i: number, type: Parameters<typeof decodeGethArg>[0], v: unknown): T {
  try {
    return decodeGethArg(type, v) as T;
  } catch (e) {
    if (e instanceof GethRpcError) throw e;
    throw argError(i, (e as Error).message);
  }
}

/**
 * The block of a method that takes a block number or an EIP-1898 object (rpc/types.go
 * BlockNumberOrHash.UnmarshalJSON): a tag, a hex number, a 32-byte hash string, or
 * `{blockNumber}` / `{blockHash, requireCanonical}`.
 */
export type BlockRef = { tag: 'latest' | 'earliest' | 'pending' | 'safe' | 'finalized' } | { number: bigint } | { hash: Uint8Array };

export function parseBlockRef(i: number, v: unknown): BlockRef {
  if (v === undefined || v === null) return { tag: 'latest' };
  if (typeof v === 'string' && v.length === 66) return { hash: arg<Uint8Array>(i, 'hash', v) };
  if (typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const num = o.blockNumber;
    const h = o.blockHash;
    if (num !== undefined && h !== undefined) throw argError(i, 'cannot specify both BlockHash and BlockNumber, choose one or the other');
    if (h !== undefined) return { hash: arg<Uint8Array>(i, 'hash', h) };
    if (num !== undefined) return numberRef(arg(i, 'block', num));
    throw argError(i, 'must specify either BlockHash or BlockNumber');
  }
  return numberRef(arg(i, 'block', v));
}

function numberRef(b: bigint | string): BlockRef {
  return typeof b === 'bigint' ? { number: b } : { tag: b as 'latest' };
}
