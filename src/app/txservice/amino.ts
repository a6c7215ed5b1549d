/**
 * TxEncodeAmino / TxDecodeAmino: amino JSON ↔ go-amino binary of a legacy `StdTx`
 * (cosmos-sdk: x/auth/tx/service.go, which runs LegacyAmino.UnmarshalJSON then Marshal, and
 * Unmarshal then MarshalJSON, over x/auth/migrations/legacytx StdTx; cosmos/cosmos-sdk:proto/cosmos/tx/v1beta1/service.proto).
 *
 * This is a small go-amino model written for the types chaind has, not a general codec:
 *
 * - `StdTx{1 msg []Msg, 2 fee StdFee, 3 signatures []StdSignature, 4 memo string, 5 timeout_height uint64}`,
 *   `StdFee{1 amount Coins, 2 gas uint64, 3 payer string, 4 granter string}`,
 *   `StdSignature{1 pub_key PubKey, 2 signature []byte}` (legacytx/stdtx.go, stdsign.go: Go field order
 *   = amino field number, JSON keys from the struct tags; only `payer`/`granter` are omitempty).
 * - Messages are the gogoproto structs of proto/: Go field order is the .proto declaration order,
 *   so field i of `desc.fields` is amino field i+1 (not the proto number; for our messages they agree).
 * - A registered concrete type is `prefix ‖ fields`; its prefix is 4 bytes of sha256(amino name)
 *   after skipping leading 0x00 bytes, then 3 "disambiguation" bytes, then any 0x00 bytes again
 *   (go-amino codec.go nameToDisfix). Vectors: `tendermint/PubKeySecp256k1` → EB5AE987 and
 *   `tendermint/PubKeyEd25519` → 1624DE64 (CometBFT encoding spec), checked in the unit test.
 * - An interface value inside a struct (Msg, PubKey, an Any such as Grant.authorization or
 *   MsgExec.msgs, which the SDK's Any compat layer marshals as the bare bytes of the packed value)
 *   is a length-delimited field holding `prefix ‖ fields`. The top-level StdTx is `prefix ‖ fields`
 *   (MarshalBinaryBare).
 * - PubKeys (`(amino.message_encoding) = "key_field"`) marshal as their key bytes: binary
 *   `prefix ‖ uvarint(len) ‖ key`, JSON `{"type": name, "value": base64(key)}`.
 * - Binary: unsigned integers uvarint, signed ones zigzag varint (Go binary.PutVarint), strings and
 *   bytes length-delimited; zero scalars and empty lists are not written; non-nullable nested structs
 *   (`(amino.dont_omitempty)`, gogoproto `nullable = false` upstream) are always written, even empty;
 *   a `chain.Int` (math.Int, MarshalAmino → decimal text) is always written; time (Timestamp,
 *   `*time.Time` upstream) is `{1 seconds uvarint(uint64(s)), 2 nanos}` with zero fields left out.
 * - JSON: fields in Go order; 64-bit integers as strings, 32-bit as numbers, bytes base64, time
 *   RFC 3339 in UTC; a field without omitempty (`dont_omitempty` here, StdTx/StdFee/StdSignature fields)
 *   is written when empty (`null` for an empty list or an absent interface), others are left out.
 *
 * Amino names are accepted in both spellings (`chain-sdk/…`/`consensus/…` and `cosmos-sdk/…`/
 * `tendermint/…`); encoding uses the prefix of the spelling given in the JSON, and decoding writes the
 * spelling whose prefix the bytes carry, so a round trip keeps the spelling.
 *
 * Deliberate differences: malformed JSON or binary is InvalidArgument (upstream returns the raw
 * codec error, which gRPC reports as Unknown); types that this model does not cover (oneofs,
 * multisig keys, floats, maps) are refused as InvalidArgument rather than guessed.
 */
import { createHash } from 'node:crypto';
import { create, getOption, hasOption, ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { GrpcCode, GrpcStatusError } from '../errors.js';
import { dont_omitempty as dontOmitEmptyOption, message_encoding as messageEncodingOption } from '../../gen/amino/amino_pb.js';
import { accepts_interface as acceptsInterfaceOption, implements_interface as implementsInterfaceOption, scalar as scalarOption } from '../../gen/chain_proto/chain_pb.js';
import {
  TxDecodeAminoResponseSchema,
  TxEncodeAminoResponseSchema,
  type TxDecodeAminoRequest,
  type TxDecodeAminoResponse,
  type TxEncodeAminoRequest,
  type TxEncodeAminoResponse,
} from '../../gen/chain/tx/v1beta1/service_pb.js';
import { parseAminoName, type Names } from '../../names/index.js';
import { goJsonStringify } from '../../proto/json.js';
import { protoRegistry } from '../../proto/registry.js';
import { aminoNameOf, emitAminoName, formatRfc3339Nano } from '../../tx/amino.js';

// ---------------------------------------------------------------------------------------------
// Prefixes and the registry of concrete types

/** go-amino prefix bytes of a registered name (see the file comment for the rule). */
export function aminoPrefix(name: string): Uint8Array {
  const h = createHash('sha256').update(name, 'utf8').digest();
  let i = 0;
  while (h[i] === 0) i++;
  i += 3; // disambiguation bytes
  while (h[i] === 0) i++;
  return Uint8Array.from(h.subarray(i, i + 4));
}

/** The interface a concrete type is registered under. */
type Iface = 'msg' | 'pubkey' | 'authorization' | 'stdtx';

interface Concrete {
  /** The name as written (either spelling). */
  name: string;
  iface: Iface;
  /** Undefined for StdTx (hand-modelled). */
  desc: DescMessage | undefined;
  prefix: Uint8Array;
}

const STD_TX_SPEC = 'chain-sdk/StdTx';
const AUTHORIZATION = 'chain.authz.v1beta1.Authorization';
const MSG = 'chain.base.v1beta1.Msg';

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

function ifaceOf(desc: DescMessage): Iface | undefined {
  if (encodingOf(desc) === 'key_field' && desc.name === 'PubKey') return 'pubkey';
  if (hasOption(desc, implementsInterfaceOption) && getOption(desc, implementsInterfaceOption).includes(AUTHORIZATION)) return 'authorization';
  if (desc.name.startsWith('Msg') && !desc.name.endsWith('Response')) return 'msg';
  return undefined;
}

interface Registry {
  byName: Map<string, Concrete>;
  byPrefix: Map<string, Concrete>;
}

let registry: Registry | undefined;

function getRegistry(): Registry {
  if (registry !== undefined) return registry;
  const byName = new Map<string, Concrete>();
  const byPrefix = new Map<string, Concrete>();
  const collisions = new Set<string>();
  const add = (spec: string, iface: Iface, desc: DescMessage | undefined): void => {
    for (const name of new Set([spec, emitAminoName(spec, { upstreamNames: true })])) {
      const c: Concrete = { name, iface, desc, prefix: aminoPrefix(name) };
      byName.set(name, c);
      const key = hex(c.prefix);
      if (byPrefix.has(key)) collisions.add(key);
      byPrefix.set(key, c);
    }
  };
  add(STD_TX_SPEC, 'stdtx', undefined);
  for (const t of protoRegistry) {
    if (t.kind !== 'message') continue;
    const spec = aminoNameOf(t);
    if (spec === undefined) continue;
    const iface = ifaceOf(t);
    if (iface !== undefined) add(spec, iface, t);
  }
  // Two names with one prefix cannot be told apart in binary; go-amino refuses to register them.
  for (const k of collisions) byPrefix.delete(k);
  registry = { byName, byPrefix };
  return registry;
}

// ---------------------------------------------------------------------------------------------
// Field model

type Kind =
  | { k: 'string' }
  | { k: 'bytes' }
  | { k: 'bool' }
  | { k: 'uint'; bits: 32 | 64 }
  | { k: 'sint'; bits: 32 | 64 }
  | { k: 'int' } // math.Int
  | { k: 'time' }
  | { k: 'struct'; s: Struct }
  | { k: 'iface'; iface: Iface };

interface Field {
  json: string;
  kind: Kind;
  list: boolean;
  /** JSON: write even when empty (no omitempty in the Go tag). */
  keepJson: boolean;
  /** Binary: a non-nullable struct, written even when empty. */
  alwaysBinary: boolean;
}

interface Struct {
  name: string;
  fields: () => Field[];
}

class AminoError extends Error {}

function encodingOf(desc: DescMessage): string {
  return hasOption(desc, messageEncodingOption) ? getOption(desc, messageEncodingOption) : '';
}

const structs = new WeakMap<DescMessage, Struct>();

function structOf(desc: DescMessage): Struct {
  let s = structs.get(desc);
  if (s === undefined) {
    let cached: Field[] | undefined;
    s = { name: desc.typeName, fields: () => (cached ??= desc.fields.map((f) => fieldOf(desc, f))) };
    structs.set(desc, s);
  }
  return s;
}

function scalarKind(desc: DescMessage, f: DescField, t: ScalarType): Kind {
  switch (t) {
    case ScalarType.STRING:
      return hasOption(f, scalarOption) && getOption(f, scalarOption) === 'chain.Int' ? { k: 'int' } : { k: 'string' };
    case ScalarType.BYTES:
      return { k: 'bytes' };
    case ScalarType.BOOL:
      return { k: 'bool' };
    case ScalarType.UINT64:
      return { k: 'uint', bits: 64 };
    case ScalarType.UINT32:
      return { k: 'uint', bits: 32 };
    case ScalarType.INT64:
      return { k: 'sint', bits: 64 };
    case ScalarType.INT32:
      return { k: 'sint', bits: 32 };
    default:
      throw new AminoError(`${desc.typeName}.${f.name}: amino codec does not model ${ScalarType[t]}`);
  }
}

function messageKind(desc: DescMessage, f: DescField, m: DescMessage): Kind {
  if (m.typeName === 'google.protobuf.Timestamp') return { k: 'time' };
  if (m.typeName === 'google.protobuf.Any') {
    const accepts = hasOption(f, acceptsInterfaceOption) ? getOption(f, acceptsInterfaceOption) : '';
    if (accepts === AUTHORIZATION) return { k: 'iface', iface: 'authorization' };
    if (accepts === MSG) return { k: 'iface', iface: 'msg' };
    throw new AminoError(`${desc.typeName}.${f.name}: amino codec does not model interface ${accepts || '(none)'}`);
  }
  if (m.typeName.startsWith('google.protobuf.')) throw new AminoError(`${desc.typeName}.${f.name}: amino codec does not model ${m.typeName}`);
  return { k: 'struct', s: structOf(m) };
}

function fieldOf(desc: DescMessage, f: DescField): Field {
  if (f.oneof !== undefined) throw new AminoError(`${desc.typeName}: amino codec does not model oneofs`);
  const keep = hasOption(f, dontOmitEmptyOption) && getOption(f, dontOmitEmptyOption);
  let kind: Kind;
  let list = false;
  switch (f.fieldKind) {
    case 'scalar':
      kind = scalarKind(desc, f, f.scalar);
      break;
    case 'message':
      kind = messageKind(desc, f, f.message);
      break;
    case 'list':
      list = true;
      if (f.listKind === 'scalar') kind = scalarKind(desc, f, f.scalar);
      else if (f.listKind === 'message') kind = messageKind(desc, f, f.message);
      else throw new AminoError(`${desc.typeName}.${f.name}: amino codec does not model enum lists`);
      break;
    default:
      throw new AminoError(`${desc.typeName}.${f.name}: amino codec does not model ${f.fieldKind} fields`);
  }
  return { json: f.name, kind, list, keepJson: keep, alwaysBinary: keep && kind.k === 'struct' && !list };
}

/** legacy sdk.Coin (`chain.base.v1beta1.Coin`). */
function coinStruct(): Struct {
  const d = protoRegistry.getMessage('chain.base.v1beta1.Coin');
  if (d === undefined) throw new Error('chain.base.v1beta1.Coin is not registered');
  return structOf(d);
}

const F = (json: string, kind: Kind, list = false, keepJson = true): Field => ({ json, kind, list, keepJson, alwaysBinary: kind.k === 'struct' && !list });

const STD_FEE: Struct = {
  name: 'StdFee',
  fields: () => [F('amount', { k: 'struct', s: coinStruct() }, true), F('gas', { k: 'uint', bits: 64 }), F('payer', { k: 'string' }, false, false), F('granter', { k: 'string' }, false, false)],
};
const STD_SIGNATURE: Struct = {
  name: 'StdSignature',
  fields: () => [F('pub_key', { k: 'iface', iface: 'pubkey' }), F('signature', { k: 'bytes' })],
};
const STD_TX: Struct = {
  name: 'StdTx',
  fields: () => [
    F('msg', { k: 'iface', iface: 'msg' }, true),
    F('fee', { k: 'struct', s: STD_FEE }),
    F('signatures', { k: 'struct', s: STD_SIGNATURE }, true),
    F('memo', { k: 'string' }),
    F('timeout_height', { k: 'uint', bits: 64 }),
  ],
};

// ---------------------------------------------------------------------------------------------
// Binary writing

class Writer {
  private chunks: number[] = [];
  byte(b: number): void {
    this.chunks.push(b);
  }
  uvarint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.chunks.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.chunks.push(Number(x));
  }
  raw(b: Uint8Array): void {
    for (const x of b) this.chunks.push(x);
  }
  delimited(b: Uint8Array): void {
    this.uvarint(BigInt(b.length));
    this.raw(b);
  }
  key(num: number, wire: number): void {
    this.uvarint(BigInt((num << 3) | wire));
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function isObj(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const UTF8 = new TextEncoder();
const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true });

function parseU64(v: Json, what: string, bits: 32 | 64): bigint {
  if (bits === 64) {
    if (typeof v !== 'string' || !/^[0-9]+$/.test(v)) throw new AminoError(`${what}: expected an unsigned integer string`);
  } else if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new AminoError(`${what}: expected an unsigned integer`);
  const x = BigInt(v);
  if (x >= 1n << BigInt(bits)) throw new AminoError(`${what}: out of range`);
  return x;
}

function parseS64(v: Json, what: string, bits: 32 | 64): bigint {
  if (bits === 64) {
    if (typeof v !== 'string' || !/^-?[0-9]+$/.test(v)) throw new AminoError(`${what}: expected an integer string`);
  } else if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new AminoError(`${what}: expected an integer`);
  const x = BigInt(v);
  const lim = 1n << BigInt(bits - 1);
  if (x < -lim || x >= lim) throw new AminoError(`${what}: out of range`);
  return x;
}

/** math.Int text: at most 256 bits (cosmossdk.io/math MaxBitLen), normalised as big.Int prints it. */
function parseInt256(s: string, what: string): string {
  if (!/^-?[0-9]+$/.test(s)) throw new AminoError(`${what}: invalid integer ${JSON.stringify(s)}`);
  const x = BigInt(s);
  if ((x < 0n ? -x : x) >= 1n << 256n) throw new AminoError(`${what}: integer out of range`);
  return x.toString();
}

function base64Strict(s: Json, what: string): Uint8Array {
  if (typeof s !== 'string' || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) throw new AminoError(`${what}: expected base64`);
  return new Uint8Array(Buffer.from(s, 'base64'));
}

const MIN_SECONDS = -62135596800n; // 0001-01-01T00:00:00Z
const MAX_SECONDS = 253402300800n; // 10000-01-01T00:00:00Z (exclusive)

function parseTime(v: Json, what: string): { seconds: bigint; nanos: number } {
  const m = typeof v === 'string' ? /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/.exec(v) : null;
  if (m === null) throw new AminoError(`${what}: expected an RFC 3339 time`);
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > 31 || h! > 23 || mi! > 59 || s! > 59) throw new AminoError(`${what}: invalid time`);
  const date = new Date(0);
  date.setUTCFullYear(y!, mo! - 1, d!);
  date.setUTCHours(h!, mi!, s!, 0);
  if (date.getUTCDate() !== d) throw new AminoError(`${what}: invalid date`);
  let seconds = BigInt(Math.floor(date.getTime() / 1000));
  if (m[8] === undefined) {
    const off = (Number(m[10]) * 60 + Number(m[11])) * 60;
    seconds -= BigInt(m[9] === '+' ? off : -off);
  }
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0'));
  if (seconds < MIN_SECONDS || seconds >= MAX_SECONDS) throw new AminoError(`${what}: time out of range`);
  return { seconds, nanos };
}

function encodeTime(t: { seconds: bigint; nanos: number }): Uint8Array {
  const w = new Writer();
  if (t.seconds !== 0n) {
    w.key(1, 0);
    w.uvarint(t.seconds); // uint64(s): two's complement, not zigzag
  }
  if (t.nanos !== 0) {
    w.key(2, 0);
    w.uvarint(BigInt(t.nanos));
  }
  return w.bytes();
}

/** `{"type": name, "value": …}` → prefix ‖ fields. */
function encodeIface(v: Json, iface: Iface, what: string): Uint8Array {
  if (!isObj(v) || typeof v['type'] !== 'string') throw new AminoError(`${what}: expected {"type","value"}`);
  const c = getRegistry().byName.get(v['type']);
  if (c === undefined || c.iface !== iface) throw new AminoError(`${what}: unknown ${iface} type ${JSON.stringify(v['type'])}`);
  const w = new Writer();
  w.raw(c.prefix);
  const value = v['value'] ?? null;
  if (c.desc !== undefined && encodingOf(c.desc) === 'key_field') {
    w.delimited(base64Strict(value, `${what}.value`));
  } else {
    w.raw(encodeStruct(c.desc === undefined ? STD_TX : structOf(c.desc), value, `${what}(${c.name})`));
  }
  return w.bytes();
}

function encodeStruct(s: Struct, v: Json, what: string): Uint8Array {
  if (v === null) v = {};
  if (!isObj(v)) throw new AminoError(`${what}: expected an object`);
  const w = new Writer();
  s.fields().forEach((f, i) => {
    const num = i + 1;
    const fv = v[f.json];
    const path = `${what}.${f.json}`;
    if (f.list) {
      if (fv === undefined || fv === null) return;
      if (!Array.isArray(fv)) throw new AminoError(`${path}: expected a list`);
      fv.forEach((e, j) => encodeValue(w, num, f, e, `${path}[${j}]`));
      return;
    }
    if (fv === undefined || fv === null) {
      if (f.alwaysBinary || f.kind.k === 'int') encodeValue(w, num, f, f.kind.k === 'int' ? '0' : {}, path);
      return;
    }
    encodeValue(w, num, f, fv, path);
  });
  return w.bytes();
}

/** One field value; zero scalars are skipped (go-amino writes no default values outside lists). */
function encodeValue(w: Writer, num: number, f: Field, v: Json, what: string): void {
  const kind = f.kind;
  switch (kind.k) {
    case 'string': {
      if (typeof v !== 'string') throw new AminoError(`${what}: expected a string`);
      if (v === '' && !f.list) return;
      w.key(num, 2);
      w.delimited(UTF8.encode(v));
      return;
    }
    case 'int': {
      if (typeof v !== 'string') throw new AminoError(`${what}: expected an integer string`);
      w.key(num, 2);
      w.delimited(UTF8.encode(parseInt256(v, what)));
      return;
    }
    case 'bytes': {
      const b = base64Strict(v, what);
      if (b.length === 0 && !f.list) return;
      w.key(num, 2);
      w.delimited(b);
      return;
    }
    case 'bool':
      if (typeof v !== 'boolean') throw new AminoError(`${what}: expected a bool`);
      if (!v && !f.list) return;
      w.key(num, 0);
      w.uvarint(v ? 1n : 0n);
      return;
    case 'uint': {
      const x = parseU64(v, what, kind.bits);
      if (x === 0n && !f.list) return;
      w.key(num, 0);
      w.uvarint(x);
      return;
    }
    case 'sint': {
      const x = parseS64(v, what, kind.bits);
      if (x === 0n && !f.list) return;
      w.key(num, 0);
      w.uvarint(x >= 0n ? x << 1n : ((-x) << 1n) - 1n);
      return;
    }
    case 'time':
      w.key(num, 2);
      w.delimited(encodeTime(parseTime(v, what)));
      return;
    case 'struct':
      w.key(num, 2);
      w.delimited(encodeStruct(kind.s, v, what));
      return;
    case 'iface':
      w.key(num, 2);
      w.delimited(encodeIface(v, kind.iface, what));
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Binary reading

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  done(): boolean {
    return this.pos >= this.buf.length;
  }
  uvarint(what: string): bigint {
    let x = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new AminoError(`${what}: truncated varint`);
      const b = this.buf[this.pos++]!;
      if (i === 9 && b > 1) throw new AminoError(`${what}: varint overflows 64 bits`);
      x |= BigInt(b & 0x7f) << BigInt(7 * i);
      if (b < 0x80) {
        if (b === 0 && i > 0) throw new AminoError(`${what}: non-minimal varint`);
        return x;
      }
    }
    throw new AminoError(`${what}: varint too long`);
  }
  delimited(what: string): Uint8Array {
    const n = this.uvarint(what);
    if (n > BigInt(this.buf.length - this.pos)) throw new AminoError(`${what}: length ${n} past the end`);
    const out = this.buf.subarray(this.pos, this.pos + Number(n));
    this.pos += Number(n);
    return out;
  }
  peekKey(what: string): { num: number; wire: number; start: number } {
    const start = this.pos;
    const k = this.uvarint(what);
    if (k >> 3n > 1n << 29n) throw new AminoError(`${what}: field number out of range`);
    return { num: Number(k >> 3n), wire: Number(k & 7n), start };
  }
}

function base64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

function decodeIface(b: Uint8Array, iface: Iface, what: string): Json {
  if (b.length < 4) throw new AminoError(`${what}: too short for prefix bytes`);
  const c = getRegistry().byPrefix.get(hex(b.subarray(0, 4)));
  if (c === undefined || c.iface !== iface) throw new AminoError(`${what}: unknown ${iface} prefix ${hex(b.subarray(0, 4)).toUpperCase()}`);
  const rest = b.subarray(4);
  if (c.desc !== undefined && encodingOf(c.desc) === 'key_field') {
    const r = new Reader(rest);
    const key = r.delimited(what);
    if (!r.done()) throw new AminoError(`${what}: trailing bytes after key`);
    return { type: c.name, value: base64(key) };
  }
  return { type: c.name, value: decodeStruct(c.desc === undefined ? STD_TX : structOf(c.desc), rest, `${what}(${c.name})`) };
}

function wireOf(kind: Kind): number {
  return kind.k === 'bool' || kind.k === 'uint' || kind.k === 'sint' ? 0 : 2;
}

function decodeStruct(s: Struct, b: Uint8Array, what: string): { [k: string]: Json } {
  const fields = s.fields();
  const r = new Reader(b);
  const vals: (Json | undefined)[] = fields.map(() => undefined);
  let last = 0;
  while (!r.done()) {
    const { num, wire } = r.peekKey(what);
    const f = fields[num - 1];
    if (num < 1 || f === undefined) throw new AminoError(`${what}: unknown field ${num}`);
    const path = `${what}.${f.json}`;
    if (num < last || (num === last && !f.list)) throw new AminoError(`${path}: field out of order or repeated`);
    last = num;
    if (wire !== wireOf(f.kind)) throw new AminoError(`${path}: wire type ${wire}, want ${wireOf(f.kind)}`);
    const v = decodeValue(r, f.kind, path);
    if (f.list) ((vals[num - 1] ??= []) as Json[]).push(v);
    else vals[num - 1] = v;
  }
  const out: { [k: string]: Json } = {};
  fields.forEach((f, i) => {
    let v = vals[i];
    // omitempty compares the decoded value: a zero written explicitly is still left out.
    if (v !== undefined && !f.keepJson && !f.list && isScalarKind(f.kind) && v === zeroJson(f)) v = undefined;
    if (v === undefined) {
      if (!f.keepJson) return;
      v = f.list ? null : zeroJson(f);
    }
    out[f.json] = v;
  });
  return out;
}

function isScalarKind(k: Kind): boolean {
  return k.k === 'string' || k.k === 'bytes' || k.k === 'bool' || k.k === 'uint' || k.k === 'sint';
}

/** The JSON of a field absent from the binary (its Go zero value). */
function zeroJson(f: Field): Json {
  switch (f.kind.k) {
    case 'string':
      return '';
    case 'int':
      return '0';
    case 'bytes':
      return '';
    case 'bool':
      return false;
    case 'uint':
    case 'sint':
      return f.kind.bits === 64 ? '0' : 0;
    case 'struct':
      return decodeStruct(f.kind.s, new Uint8Array(0), f.json);
    case 'time':
    case 'iface':
      return null;
  }
}

function decodeValue(r: Reader, kind: Kind, what: string): Json {
  switch (kind.k) {
    case 'string':
      try {
        return UTF8_STRICT.decode(r.delimited(what));
      } catch (e) {
        if (e instanceof AminoError) throw e;
        throw new AminoError(`${what}: invalid UTF-8`);
      }
    case 'int': {
      const s = Buffer.from(r.delimited(what)).toString('latin1');
      return parseInt256(s, what);
    }
    case 'bytes':
      return base64(r.delimited(what));
    case 'bool': {
      const x = r.uvarint(what);
      if (x > 1n) throw new AminoError(`${what}: invalid bool`);
      return x === 1n;
    }
    case 'uint': {
      const x = r.uvarint(what);
      if (kind.bits === 32) {
        if (x >= 1n << 32n) throw new AminoError(`${what}: out of range`);
        return Number(x);
      }
      return x.toString();
    }
    case 'sint': {
      const z = r.uvarint(what);
      const x = z & 1n ? -((z + 1n) >> 1n) : z >> 1n;
      if (kind.bits === 32) {
        if (x < -(1n << 31n) || x >= 1n << 31n) throw new AminoError(`${what}: out of range`);
        return Number(x);
      }
      return x.toString();
    }
    case 'time': {
      const t = new Reader(r.delimited(what));
      let seconds = 0n;
      let nanos = 0;
      let last = 0;
      while (!t.done()) {
        const { num, wire } = t.peekKey(what);
        if (wire !== 0 || num <= last || num > 2) throw new AminoError(`${what}: invalid time field ${num}`);
        last = num;
        const x = t.uvarint(what);
        if (num === 1) seconds = BigInt.asIntN(64, x);
        else {
          if (x >= 1_000_000_000n) throw new AminoError(`${what}: nanoseconds out of range`);
          nanos = Number(x);
        }
      }
      if (seconds < MIN_SECONDS || seconds >= MAX_SECONDS) throw new AminoError(`${what}: time out of range`);
      return formatRfc3339Nano(seconds, nanos);
    }
    case 'struct':
      return decodeStruct(kind.s, r.delimited(what), what);
    case 'iface':
      return decodeIface(r.delimited(what), kind.iface, what);
  }
}

// ---------------------------------------------------------------------------------------------
// The service methods

function invalid(e: unknown): never {
  if (e instanceof AminoError) throw new GrpcStatusError(GrpcCode.InvalidArgument, e.message);
  throw e;
}

/** Amino JSON StdTx text → go-amino binary (MarshalBinaryBare: prefix ‖ fields). */
export function encodeStdTxAmino(aminoJson: string): Uint8Array {
  let v: Json;
  try {
    v = JSON.parse(aminoJson) as Json;
  } catch (e) {
    throw new AminoError(`invalid amino JSON: ${(e as Error).message}`);
  }
  if (!isObj(v) || typeof v['type'] !== 'string' || parseAminoName(v['type']) !== STD_TX_SPEC) {
    throw new AminoError(`amino JSON is not a {"type":"${STD_TX_SPEC}","value":…} StdTx`);
  }
  return encodeIface(v, 'stdtx', 'StdTx');
}

/** go-amino binary StdTx → amino JSON text. */
export function decodeStdTxAmino(aminoBinary: Uint8Array): string {
  return goJsonStringify(decodeIface(aminoBinary, 'stdtx', 'StdTx'));
}

/** TxEncodeAmino: `invalid empty tx json` for an empty request (as upstream). */
export function txEncodeAmino(req: TxEncodeAminoRequest, _names?: Names): TxEncodeAminoResponse {
  if (req.aminoJson === '') throw new GrpcStatusError(GrpcCode.InvalidArgument, 'invalid empty tx json');
  try {
    return create(TxEncodeAminoResponseSchema, { aminoBinary: encodeStdTxAmino(req.aminoJson) });
  } catch (e) {
    invalid(e);
  }
}

/** TxDecodeAmino: `invalid empty tx bytes` for an empty request (as upstream). */
export function txDecodeAmino(req: TxDecodeAminoRequest, _names?: Names): TxDecodeAminoResponse {
  if (req.aminoBinary.length === 0) throw new GrpcStatusError(GrpcCode.InvalidArgument, 'invalid empty tx bytes');
  try {
    return create(TxDecodeAminoResponseSchema, { aminoJson: decodeStdTxAmino(req.aminoBinary) });
  } catch (e) {
    invalid(e);
  }
}
