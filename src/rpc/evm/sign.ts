/**
 * Signing with the node's keystore (src/keys/keystore.ts): `eth_sign` (EIP-191), `eth_signTypedData`
 * / `_v4` (EIP-712), `eth_signTransaction`, `eth_sendTransaction`, and the shared pieces
 * personal.ts uses. All are private methods (spec §4.4 Public flag N): the server asks for a JWT
 * before any of them runs (geth-server.ts, status.ts isPrivateMethod).
 *
 * Behaviour follows geth's internal/ethapi (ethereum/go-ethereum:internal/ethapi/api.go Sign,
 * SignTransaction, SendTransaction; transaction_args.go setDefaults; accounts/accounts.go
 * TextHash) and EIP-712 as ethereum/go-ethereum:signer/core/apitypes/types.go hashes it. The spec
 * (§8) fixes the default gas of eth_sendTransaction at 90,000 where geth would estimate.
 */
import { createTx, type TypedTransaction } from '@ethereumjs/tx';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { recoverAddress, signDigest, type Keystore } from '../../keys/keystore.js';
import { gethMethod } from '../jsonrpc/geth.js';
import type { Route, RouteContext } from '../jsonrpc/methods.js';
import type { EvmRpcDeps } from './deps.js';
import { arg, argError, gethError, hex } from './format.js';
import { txJson } from './view.js';

/** Spec §8: eth_sendTransaction's gas when none is given. */
export const DEFAULT_SEND_GAS = 90_000n;

const utf8 = new TextEncoder();

/** accounts.TextHash: keccak256("\x19Ethereum Signed Message:\n" + len(data) + data) (EIP-191 version 0x45). */
export function textHash(data: Uint8Array): Uint8Array {
  const prefix = utf8.encode(`\x19Ethereum Signed Message:\n${data.length}`);
  const buf = new Uint8Array(prefix.length + data.length);
  buf.set(prefix);
  buf.set(data, prefix.length);
  return keccak_256(buf);
}

/** A 65-byte signature with v 27/28, as eth_sign and personal_sign answer (geth adds 27). */
export function signText(priv: Uint8Array, data: Uint8Array): Uint8Array {
  const sig = signDigest(priv, textHash(data));
  sig[64]! += 27;
  return sig;
}

/** personal_ecRecover's checks and recovery (geth PersonalAccountAPI.EcRecover). */
export function ecRecover(data: Uint8Array, sig: Uint8Array): Uint8Array {
  if (sig.length !== 65) throw gethError('signature must be 65 bytes long');
  if (sig[64] !== 27 && sig[64] !== 28) throw gethError('invalid Ethereum signature (V is not 27 or 28)');
  const s = Uint8Array.from(sig);
  s[64]! -= 27;
  try {
    return recoverAddress(textHash(data), s);
  } catch (e) {
    throw gethError(`invalid signature: ${(e as Error).message}`);
  }
}

// ----------------------------------------------------------------------------------------------
// EIP-712

interface TypedField {
  name: string;
  type: string;
}
type Types = Record<string, TypedField[]>;

export interface TypedData {
  types: Types;
  primaryType: string;
  domain: Record<string, unknown>;
  message: Record<string, unknown>;
}

/** The EIP712Domain fields, in the order EIP-712 lists them (used when `types` leaves it out). */
const DOMAIN_FIELDS: TypedField[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
  { name: 'salt', type: 'bytes32' },
];

const typedError = (m: string) => gethError(m);

/** Reads the typed-data argument (an object, or its JSON text as MetaMask's v4 sends it). */
export function parseTypedData(v: unknown): TypedData {
  let o = v;
  if (typeof o === 'string') {
    try {
      o = JSON.parse(o);
    } catch (e) {
      throw typedError(`invalid typed data: ${(e as Error).message}`);
    }
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw typedError('invalid typed data: want an object');
  const t = o as Record<string, unknown>;
  if (t.domain === undefined || t.domain === null) throw typedError('domain is undefined');
  if (typeof t.domain !== 'object' || Array.isArray(t.domain)) throw typedError('domain must be an object');
  if (t.types === null || typeof t.types !== 'object' || Array.isArray(t.types)) throw typedError('types is undefined');
  if (typeof t.primaryType !== 'string' || t.primaryType === '') throw typedError('primaryType is undefined');
  const types: Types = {};
  for (const [name, fields] of Object.entries(t.types as Record<string, unknown>)) {
    if (!Array.isArray(fields)) throw typedError(`type ${name}: want an array of fields`);
    types[name] = fields.map((f) => {
      const ff = f as Record<string, unknown>;
      if (ff === null || typeof ff !== 'object' || typeof ff.name !== 'string' || typeof ff.type !== 'string') throw typedError(`type ${name}: a field needs a name and a type`);
      return { name: ff.name, type: ff.type };
    });
  }
  const domain = t.domain as Record<string, unknown>;
  if (types.EIP712Domain === undefined) types.EIP712Domain = DOMAIN_FIELDS.filter((f) => domain[f.name] !== undefined && domain[f.name] !== null);
  const message = (t.message ?? {}) as Record<string, unknown>;
  if (t.primaryType !== 'EIP712Domain' && types[t.primaryType] === undefined) throw typedError(`primary type ${t.primaryType} is not defined`);
  return { types, primaryType: t.primaryType, domain, message };
}

const baseType = (t: string) => {
  const i = t.indexOf('[');
  return i === -1 ? t : t.slice(0, i);
};

function dependencies(types: Types, primary: string, found: Set<string>): void {
  const t = baseType(primary);
  if (found.has(t) || types[t] === undefined) return;
  found.add(t);
  for (const f of types[t]!) dependencies(types, f.type, found);
}

/** encodeType: the primary type, then its dependencies sorted by name. */
export function encodeType(types: Types, primary: string): string {
  const deps = new Set<string>();
  dependencies(types, primary, deps);
  deps.delete(primary);
  return [primary, ...[...deps].sort()].map((n) => `${n}(${types[n]!.map((f) => `${f.type} ${f.name}`).join(',')})`).join('');
}

function toBigInt(v: unknown, type: string): bigint {
  try {
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    if (typeof v === 'string' && v !== '') return v.startsWith('-') ? -BigInt(v.slice(1)) : BigInt(v);
  } catch {
    /* below */
  }
  throw typedError(`invalid integer value ${JSON.stringify(v)} for type ${type}`);
}

function bytesOf(v: unknown, type: string): Uint8Array {
  if (typeof v === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(v)) return new Uint8Array(Buffer.from(v.slice(2), 'hex'));
  if (Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0 && x < 256)) return Uint8Array.from(v as number[]);
  throw typedError(`invalid bytes value ${JSON.stringify(v)} for type ${type}`);
}

function word(n: bigint): Uint8Array {
  const w = new Uint8Array(32);
  let x = BigInt.asUintN(256, n);
  for (let i = 31; i >= 0 && x > 0n; i--) {
    w[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return w;
}

function encodeValue(types: Types, type: string, v: unknown): Uint8Array {
  if (type.endsWith(']')) {
    const inner = type.slice(0, type.lastIndexOf('['));
    if (!Array.isArray(v)) throw typedError(`${type}: want an array`);
    const want = type.slice(type.lastIndexOf('[') + 1, -1);
    if (want !== '' && Number(want) !== v.length) throw typedError(`${type}: want ${want} items, have ${v.length}`);
    const parts = v.map((x) => encodeValue(types, inner, x));
    return keccak_256(concat(parts));
  }
  if (types[type] !== undefined) {
    if (v === null || v === undefined) return new Uint8Array(32);
    return keccak_256(encodeData(types, type, v as Record<string, unknown>));
  }
  if (type === 'string') {
    if (typeof v !== 'string') throw typedError(`invalid string value ${JSON.stringify(v)}`);
    return keccak_256(utf8.encode(v));
  }
  if (type === 'bytes') return keccak_256(bytesOf(v, type));
  if (type === 'bool') {
    if (typeof v === 'boolean') return word(v ? 1n : 0n);
    if (v === 'true' || v === 'false') return word(v === 'true' ? 1n : 0n);
    throw typedError(`invalid bool value ${JSON.stringify(v)}`);
  }
  if (type === 'address') {
    const b = bytesOf(v, type);
    if (b.length !== 20) throw typedError(`invalid address value ${JSON.stringify(v)}`);
    const w = new Uint8Array(32);
    w.set(b, 12);
    return w;
  }
  let m = /^bytes([0-9]+)$/.exec(type);
  if (m) {
    const size = Number(m[1]);
    const b = bytesOf(v, type);
    if (size < 1 || size > 32 || b.length > size) throw typedError(`invalid ${type} value ${JSON.stringify(v)}`);
    const w = new Uint8Array(32);
    w.set(b);
    return w;
  }
  m = /^(u?)int([0-9]*)$/.exec(type);
  if (m) {
    const bits = m[2] === '' ? 256 : Number(m[2]);
    if (bits < 8 || bits > 256 || bits % 8 !== 0) throw typedError(`unknown type ${type}`);
    const n = toBigInt(v, type);
    const ok = m[1] === 'u' ? n >= 0n && n < 1n << BigInt(bits) : n >= -(1n << BigInt(bits - 1)) && n < 1n << BigInt(bits - 1);
    if (!ok) throw typedError(`integer ${n} out of range for ${type}`);
    return word(n);
  }
  throw typedError(`unknown type ${type}`);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** encodeData: typeHash ‖ each field's 32-byte encoding. */
export function encodeData(types: Types, type: string, data: Record<string, unknown>): Uint8Array {
  if (data === null || typeof data !== 'object') throw typedError(`${type}: want an object`);
  const parts: Uint8Array[] = [keccak_256(utf8.encode(encodeType(types, type)))];
  for (const f of types[type]!) parts.push(encodeValue(types, f.type, data[f.name]));
  return concat(parts);
}

/** The EIP-712 digest: keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message)). */
export function typedDataHash(td: TypedData): Uint8Array {
  const domainSeparator = keccak_256(encodeData(td.types, 'EIP712Domain', td.domain));
  if (td.primaryType === 'EIP712Domain') return keccak_256(concat([Uint8Array.of(0x19, 0x01), domainSeparator]));
  return keccak_256(concat([Uint8Array.of(0x19, 0x01), domainSeparator, keccak_256(encodeData(td.types, td.primaryType, td.message))]));
}

// ----------------------------------------------------------------------------------------------
// Transactions

/** TransactionArgs as eth_sendTransaction reads them. */
export interface SendArgs {
  from: Uint8Array;
  to?: Uint8Array;
  gas?: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  value?: bigint;
  nonce?: bigint;
  data: Uint8Array;
  accessList?: { address: Uint8Array; storageKeys: Uint8Array[] }[];
  chainId?: bigint;
}

export function parseSendArgs(i: number, v: unknown): SendArgs {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw argError(i, 'json: cannot unmarshal non-object into Go value of type ethapi.TransactionArgs');
  const o = v as Record<string, unknown>;
  const opt = <T>(k: string, t: Parameters<typeof arg>[1]) => (o[k] === undefined || o[k] === null ? undefined : arg<T>(i, t, o[k]));
  const input = opt<Uint8Array>('input', 'data');
  const data = opt<Uint8Array>('data', 'data');
  if (input && data && hex(input) !== hex(data)) throw gethError('both "data" and "input" are set and not equal. Please use "input" to pass transaction call data');
  // geth's args.from() is the zero address when absent: an account no keystore holds.
  const from = opt<Uint8Array>('from', 'address') ?? new Uint8Array(20);
  let accessList: SendArgs['accessList'];
  if (o.accessList !== undefined && o.accessList !== null) {
    if (!Array.isArray(o.accessList)) throw argError(i, 'json: cannot unmarshal non-array into Go struct field TransactionArgs.accessList of type types.AccessList');
    accessList = o.accessList.map((e) => {
      const ee = (e ?? {}) as Record<string, unknown>;
      return { address: arg<Uint8Array>(i, 'address', ee.address), storageKeys: ((ee.storageKeys ?? []) as unknown[]).map((k) => arg<Uint8Array>(i, 'hash', k)) };
    });
  }
  return {
    from,
    to: opt('to', 'address'),
    gas: opt('gas', 'uint64'),
    gasPrice: opt('gasPrice', 'quantity'),
    maxFeePerGas: opt('maxFeePerGas', 'quantity'),
    maxPriorityFeePerGas: opt('maxPriorityFeePerGas', 'quantity'),
    value: opt('value', 'quantity'),
    nonce: opt('nonce', 'uint64'),
    data: input ?? data ?? new Uint8Array(0),
    accessList,
    chainId: opt('chainId', 'quantity'),
  };
}

/** What signing needs from the rest of the EVM RPC. */
export interface SignerEnv {
  deps: EvmRpcDeps;
  keystore: Keystore | undefined;
  /** The `pending` nonce of an address (eth_getTransactionCount's). */
  pendingNonce(address: Uint8Array, ctx: RouteContext): Promise<bigint>;
  /** Default tip (eth_maxPriorityFeePerGas's). */
  suggestTip(ctx: RouteContext): Promise<bigint>;
  /** eth_sendRawTransaction: the hash, or geth's error. */
  submit(raw: Uint8Array, ctx: RouteContext): Promise<string>;
}

/**
 * Fills geth's defaults (transaction_args.go setDefaults, with the spec's 90,000 gas) and builds
 * the unsigned transaction: type 2 unless a gasPrice is given (type 1 with an access list, else
 * legacy). The base fee is 0 here, so the default fee cap is the tip.
 */
export async function buildTx(env: SignerEnv, a: SendArgs, ctx: RouteContext): Promise<TypedTransaction> {
  const k = env.deps.keeper;
  if (a.chainId !== undefined && a.chainId !== k.chainId) throw gethError(`chainId does not match node's (have=${a.chainId}, want=${k.chainId})`);
  if (a.gasPrice !== undefined && (a.maxFeePerGas !== undefined || a.maxPriorityFeePerGas !== undefined)) {
    throw gethError('both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
  }
  if (a.to === undefined && a.data.length === 0) throw gethError('contract creation without any data provided');
  const nonce = a.nonce ?? (await env.pendingNonce(a.from, ctx));
  const gasLimit = a.gas ?? DEFAULT_SEND_GAS;
  const base = {
    nonce,
    gasLimit,
    to: a.to === undefined ? undefined : hex(a.to),
    value: a.value ?? 0n,
    data: a.data,
    chainId: k.chainId,
  };
  const accessList = (a.accessList ?? []).map((e) => ({ address: hex(e.address), storageKeys: e.storageKeys.map(hex) }));
  let fields: Record<string, unknown>;
  if (a.gasPrice !== undefined) {
    fields = a.accessList !== undefined ? { ...base, type: 1, gasPrice: a.gasPrice, accessList } : { ...base, type: 0, gasPrice: a.gasPrice };
  } else {
    // geth: tip = the suggestion, cap = tip + 2 × base fee (0 here).
    const tip = a.maxPriorityFeePerGas ?? (await env.suggestTip(ctx));
    const cap = a.maxFeePerGas ?? tip;
    if (tip > cap) throw gethError(`maxFeePerGas (${cap}) < maxPriorityFeePerGas (${tip})`);
    fields = { ...base, type: 2, maxFeePerGas: cap, maxPriorityFeePerGas: tip, accessList };
  }
  return createTx(fields as Parameters<typeof createTx>[0], { common: k.common });
}

/** One signing flow per sender at a time, so two sends do not take the same pending nonce (geth's AddrLocker). */
export class AddrLocker {
  private readonly tails = new Map<string, Promise<unknown>>();
  run<T>(address: Uint8Array, f: () => Promise<T>): Promise<T> {
    const key = hex(address);
    const prev = this.tails.get(key) ?? Promise.resolve();
    const p = prev.then(f, f);
    const tail = p.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return p;
  }
}

function keyOf(env: SignerEnv, address: Uint8Array): Uint8Array {
  const ks = env.keystore;
  // geth: the account manager finds no wallet holding the address.
  if (ks === undefined || !ks.has(address)) throw gethError('unknown account');
  try {
    // A copy: lock() zeroes the stored key, possibly while a send is still signing.
    return Uint8Array.from(ks.unlockedKey(address));
  } catch (e) {
    throw gethError((e as Error).message);
  }
}

/** The signed tx's JSON as a pending transaction (geth NewRPCPendingTransaction). */
export function pendingTxJson(tx: TypedTransaction): Record<string, unknown> {
  return txJson(tx, undefined, undefined);
}

/** eth_sign, eth_signTypedData(_v4), eth_signTransaction, eth_sendTransaction and eth_accounts' source. */
export function signMethods(env: SignerEnv, locker: AddrLocker): Route[] {
  const signTyped = (name: string) =>
    gethMethod({
      name,
      params: [{ name: 'address', type: 'address' }, { name: 'typedData', type: 'any' }],
      handler: ({ address, typedData }) => {
        const td = parseTypedData(typedData);
        const priv = keyOf(env, address);
        const sig = signDigest(priv, typedDataHash(td));
        sig[64]! += 27;
        return hex(sig);
      },
    });
  return [
    gethMethod({
      name: 'eth_sign',
      params: [{ name: 'address', type: 'address' }, { name: 'data', type: 'data' }],
      handler: ({ address, data }) => hex(signText(keyOf(env, address), data)),
    }),
    signTyped('eth_signTypedData'),
    signTyped('eth_signTypedData_v4'),
    gethMethod({
      name: 'eth_signTransaction',
      params: [{ name: 'args', type: 'any' }],
      handler: async ({ args }, ctx) => {
        const a = parseSendArgs(0, args);
        // geth SignTransaction: the caller fixes gas, fees and nonce (nothing is looked up).
        if (a.gas === undefined) throw gethError('gas not specified');
        if (a.gasPrice === undefined && (a.maxPriorityFeePerGas === undefined || a.maxFeePerGas === undefined)) {
          throw gethError('missing gasPrice or maxFeePerGas/maxPriorityFeePerGas');
        }
        if (a.nonce === undefined) throw gethError('nonce not specified');
        const priv = keyOf(env, a.from);
        const signed = (await buildTx(env, a, ctx)).sign(priv);
        return { raw: hex(signed.serialize()), tx: pendingTxJson(signed) };
      },
    }),
    gethMethod({
      name: 'eth_sendTransaction',
      params: [{ name: 'args', type: 'any' }],
      handler: ({ args }, ctx) => {
        const a = parseSendArgs(0, args);
        const priv = keyOf(env, a.from);
        return locker.run(a.from, async () => env.submit((await buildTx(env, a, ctx)).sign(priv).serialize(), ctx));
      },
    }),
  ];
}
