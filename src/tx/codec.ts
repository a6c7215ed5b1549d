/**
 * The protobuf tx codec: TxRaw bytes → body, auth info and signatures, with the Cosmos SDK's
 * decoder checks (cosmos-sdk: x/auth/tx/decoder.go DefaultTxDecoder, x/tx/decode/unknown.go
 * RejectUnknownFields; cosmos/cosmos-sdk:x/auth/tx/decoder.go, x/auth/tx/direct.go).
 *
 * Order of checks, as upstream; every failure is `<reason>: tx parse error` (sdk code 2):
 * 1. empty bytes are refused (`tx bytes are empty`);
 * 2. TxRaw must follow ADR-027 as far as the SDK checks it (rejectNonADR027TxRaw): only
 *    length-delimited fields, field numbers non-decreasing, length prefixes as short as possible;
 * 3. TxRaw may hold no unknown field at all;
 * 4. TxBody may hold unknown fields only when they are non-critical (field number with bit 11,
 *    1024, set: e.g. 1024–2047), at any depth, including inside the messages' Anys;
 * 5. AuthInfo may hold no unknown field at all.
 * Every Any met on the way must name a registered type (both `/chain.…` and `/cosmos.…`
 * resolve), and the wire type of every known field must match its declaration.
 */
import { create, fromBinary, getOption, hasOption, toBinary, ScalarType, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { createHash } from 'node:crypto';
import { AbciError, sdkErrors } from '../app/errors.js';
import { coinsFromJson } from '../app/coins.js';
import type { DecodedTx, TxDecoder } from '../app/tx.js';
import { signer as signerOption } from '../gen/chain/msg/v1/msg_pb.js';
import { AuthInfoSchema, TxBodySchema, TxRawSchema, type AuthInfo, type TxBody, type TxRaw } from '../gen/chain/tx/v1beta1/tx_pb.js';
import { resolveTypeUrl } from '../proto/registry.js';

/** Field numbers with this bit set are non-critical (ADR-020; x/tx/decode bit11NonCritical). */
export const NON_CRITICAL_FIELD_BIT = 1 << 10;
/** Nesting limit for the unknown-field walk (messages inside Anys inside messages…). */
export const MAX_DECODE_DEPTH = 100;

/** A decoded TxRaw. bodyBytes/authInfoBytes are the exact signed bytes. */
export interface DecodedTxRaw {
  /** The tx bytes as received (CometBFT hashes these). */
  txBytes: Uint8Array;
  raw: TxRaw;
  bodyBytes: Uint8Array;
  authInfoBytes: Uint8Array;
  signatures: Uint8Array[];
  body: TxBody;
  authInfo: AuthInfo;
  /** body.messages unpacked, in order. */
  msgs: Message[];
  /** TxBody (or a message in it) carried unknown non-critical fields. */
  hasUnknownNonCriticals: boolean;
}

function parseError(msg: string): AbciError {
  return sdkErrors.txDecode.wrap(msg);
}

// ---- wire reading ----

const WIRE_NAMES = ['varint', 'fixed64', 'bytes', 'start_group', 'end_group', 'fixed32'];

function wireTypeName(wt: number): string {
  return WIRE_NAMES[wt] ?? `unknown(${wt})`;
}

class WireError extends Error {}

/** Reads a varint at `pos`; returns [value, byte length]. Values above 2^64-1 are refused. */
function readVarint(b: Uint8Array, pos: number): [bigint, number] {
  let v = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= b.length) throw new WireError('unexpected EOF');
    const byte = b[pos + i]!;
    v |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if ((byte & 0x80) === 0) {
      if (i === 9 && byte > 1) throw new WireError('variable length integer overflow');
      return [v, i + 1];
    }
  }
  throw new WireError('variable length integer overflow');
}

/** Bytes a varint of this value takes at minimum. */
function varintMinLength(v: bigint): number {
  let n = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    n++;
  }
  return n;
}

interface WireField {
  num: number;
  wt: number;
  /** Start of the whole field (tag) and end of it. */
  start: number;
  end: number;
  /** For wire type 2: the payload bounds (after the length prefix) and the prefix's length. */
  valueStart: number;
  lenPrefixBytes: number;
}

/** Reads one field (tag and value) at `pos`. Groups are skipped whole. */
function readField(b: Uint8Array, pos: number): WireField {
  const start = pos;
  const [tag, tn] = readVarint(b, pos);
  pos += tn;
  if (tag > 0xffffffffn) throw new WireError('invalid field number');
  const num = Number(tag >> 3n);
  const wt = Number(tag & 7n);
  if (num === 0) throw new WireError('invalid field number');
  let valueStart = pos;
  let lenPrefixBytes = 0;
  switch (wt) {
    case 0:
      pos += readVarint(b, pos)[1];
      break;
    case 1:
      pos += 8;
      break;
    case 2: {
      const [len, ln] = readVarint(b, pos);
      lenPrefixBytes = ln;
      pos += ln;
      valueStart = pos;
      if (len > BigInt(b.length - pos)) throw new WireError('unexpected EOF');
      pos += Number(len);
      break;
    }
    case 5:
      pos += 4;
      break;
    case 3: {
      // Skip to the matching end-group tag.
      for (;;) {
        if (pos >= b.length) throw new WireError('unexpected EOF');
        const f = readField(b, pos);
        if (f.wt === 4) {
          if (f.num !== num) throw new WireError('mismatching end group marker');
          pos = f.end;
          break;
        }
        pos = f.end;
      }
      break;
    }
    case 4:
      // An end-group tag ends its group; the group reader consumes it.
      break;
    default:
      throw new WireError(`invalid wire type ${wt}`);
  }
  if (pos > b.length) throw new WireError('unexpected EOF');
  return { num, wt, start, end: pos, valueStart, lenPrefixBytes };
}

/** The wire type a field is written with (packed repeated scalars also accept 2). */
function wireTypeOf(f: DescField): number {
  const scalar = f.fieldKind === 'scalar' ? f.scalar : f.fieldKind === 'list' && f.listKind === 'scalar' ? f.scalar : undefined;
  if (f.fieldKind === 'enum' || (f.fieldKind === 'list' && f.listKind === 'enum')) return 0;
  if (scalar === undefined) return 2; // message, map entry
  switch (scalar) {
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 1;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return 5;
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return 2;
    default:
      return 0;
  }
}

function isPackable(f: DescField): boolean {
  return f.fieldKind === 'list' && (f.listKind === 'enum' || (f.listKind === 'scalar' && f.scalar !== ScalarType.STRING && f.scalar !== ScalarType.BYTES));
}

const fieldMaps = new WeakMap<DescMessage, Map<number, DescField>>();

function fieldByNumber(desc: DescMessage, num: number): DescField | undefined {
  let m = fieldMaps.get(desc);
  if (m === undefined) {
    m = new Map(desc.fields.map((f) => [f.number, f]));
    fieldMaps.set(desc, m);
  }
  return m.get(num);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The fields of an Any, walked with the same unknown-field rules as any message (the walk is
 * the hot path of CheckTx; this avoids decoding every Any twice). */
function readAny(b: Uint8Array, allowNonCritical: boolean): { typeUrl: string; value: Uint8Array; hasNonCritical: boolean } {
  let typeUrl = '';
  let value: Uint8Array = new Uint8Array(0);
  let hasNonCritical = false;
  let pos = 0;
  while (pos < b.length) {
    let wf: WireField;
    try {
      wf = readField(b, pos);
    } catch (e) {
      if (e instanceof WireError) throw new Error(`google.protobuf.Any: could not read field: ${e.message}`);
      throw e;
    }
    pos = wf.end;
    if (wf.num === 1 || wf.num === 2) {
      if (wf.wt !== 2) throw new Error(`google.protobuf.Any: {TagNum: ${wf.num}, WireType:"${wireTypeName(wf.wt)}"} != "bytes": mismatched wire type`);
      const payload = b.subarray(wf.valueStart, wf.end);
      // Last one wins, as protobuf decoders do for repeated singular fields.
      if (wf.num === 1) typeUrl = strictUtf8.decode(payload);
      else value = payload;
      continue;
    }
    if (wf.wt === 4) throw new Error(`google.protobuf.Any: unexpected end group tag {TagNum: ${wf.num}}`);
    const critical = (wf.num & NON_CRITICAL_FIELD_BIT) === 0;
    if (!critical) hasNonCritical = true;
    if (critical || !allowNonCritical) {
      throw new Error(`google.protobuf.Any: {TagNum: ${wf.num}, WireType:"${wireTypeName(wf.wt)}"}: unknown protobuf field`);
    }
  }
  return { typeUrl, value, hasNonCritical };
}

/**
 * RejectUnknownFields (x/tx/decode/unknown.go): walks `bytes` as a `desc` message, recursing into
 * message fields and into the value of every Any (resolved through the registry). Unknown
 * critical fields are always refused; unknown non-critical ones only when `allowNonCritical` is
 * false. Returns whether a non-critical unknown field was seen. Throws an Error naming the
 * message, field number and wire type.
 */
export function rejectUnknownFields(bytes: Uint8Array, desc: DescMessage, allowNonCritical: boolean, depth = 0): boolean {
  if (depth > MAX_DECODE_DEPTH) throw new Error(`max protobuf nesting depth ${MAX_DECODE_DEPTH} exceeded`);
  let hasNonCritical = false;
  let pos = 0;
  while (pos < bytes.length) {
    let wf: WireField;
    try {
      wf = readField(bytes, pos);
    } catch (e) {
      if (e instanceof WireError) throw new Error(`${desc.typeName}: could not read field: ${e.message}`);
      throw e;
    }
    if (wf.wt === 4) throw new Error(`${desc.typeName}: unexpected end group tag {TagNum: ${wf.num}}`);
    pos = wf.end;
    const f = fieldByNumber(desc, wf.num);
    if (f === undefined) {
      const critical = (wf.num & NON_CRITICAL_FIELD_BIT) === 0;
      if (!critical) hasNonCritical = true;
      if (critical || !allowNonCritical) {
        throw new Error(`${desc.typeName}: {TagNum: ${wf.num}, WireType:"${wireTypeName(wf.wt)}"}: unknown protobuf field`);
      }
      continue;
    }
    const want = wireTypeOf(f);
    if (wf.wt !== want && !(wf.wt === 2 && isPackable(f))) {
      throw new Error(`${desc.typeName}: {TagNum: ${wf.num}, WireType:"${wireTypeName(wf.wt)}"} != "${wireTypeName(want)}": mismatched wire type`);
    }
    const m = f.fieldKind === 'message' || (f.fieldKind === 'list' && f.listKind === 'message') ? f.message : undefined;
    if (m === undefined) continue; // scalars, enums; map entries hold no Any in proto/
    const payload = bytes.subarray(wf.valueStart, wf.end);
    if (m.typeName === 'google.protobuf.Any') {
      const any = readAny(payload, allowNonCritical);
      if (any.hasNonCritical) hasNonCritical = true;
      const inner = resolveTypeUrl(any.typeUrl);
      if (inner === undefined) throw new Error(`unable to resolve type URL ${any.typeUrl}`);
      if (rejectUnknownFields(any.value, inner, allowNonCritical, depth + 1)) hasNonCritical = true;
    } else if (rejectUnknownFields(payload, m, allowNonCritical, depth + 1)) {
      hasNonCritical = true;
    }
  }
  return hasNonCritical;
}

/**
 * rejectNonADR027TxRaw (x/auth/tx/decoder.go): TxRaw holds only length-delimited fields, in
 * non-decreasing field order (several 3s), each with a minimal length prefix. Throws an Error.
 */
export function rejectNonAdr027TxRaw(txBytes: Uint8Array): void {
  let prev = 0;
  let pos = 0;
  while (pos < txBytes.length) {
    let tag: bigint;
    let tn: number;
    try {
      [tag, tn] = readVarint(txBytes, pos);
    } catch (e) {
      throw new Error(`invalid length; ${(e as Error).message}`);
    }
    const num = Number(tag >> 3n);
    const wt = Number(tag & 7n);
    if (wt !== 2) throw new Error(`expected 2 wire type, got ${wt}`);
    if (num < prev) throw new Error(`txRaw must follow ADR-027, got tagNum ${num} after tagNum ${prev}`);
    prev = num;
    let len: bigint;
    let ln: number;
    try {
      [len, ln] = readVarint(txBytes, pos + tn);
    } catch (e) {
      throw new Error(`invalid length; ${(e as Error).message}`);
    }
    const need = varintMinLength(len);
    if (need !== ln) throw new Error(`length prefix varint for tagNum ${num} is not as short as possible, read ${ln}, only need ${need}`);
    const end = pos + tn + ln + Number(len);
    if (len > BigInt(txBytes.length) || end > txBytes.length) throw new Error('invalid length; unexpected EOF');
    pos = end;
  }
}

function decodeStep<T>(what: () => T): T {
  try {
    return what();
  } catch (e) {
    if (e instanceof AbciError) throw e;
    throw parseError((e as Error).message);
  }
}

/**
 * Decodes tx bytes (TxRaw) with the SDK's checks. Throws an AbciError `…: tx parse error`
 * (sdk code 2) on any failure.
 */
export function decodeTx(txBytes: Uint8Array): DecodedTxRaw {
  if (txBytes.length === 0) throw parseError('tx bytes are empty');
  decodeStep(() => rejectNonAdr027TxRaw(txBytes));
  decodeStep(() => rejectUnknownFields(txBytes, TxRawSchema, false));
  const raw = decodeStep(() => fromBinary(TxRawSchema, txBytes));
  const hasUnknownNonCriticals = decodeStep(() => rejectUnknownFields(raw.bodyBytes, TxBodySchema, true));
  const body = decodeStep(() => fromBinary(TxBodySchema, raw.bodyBytes));
  decodeStep(() => rejectUnknownFields(raw.authInfoBytes, AuthInfoSchema, false));
  const authInfo = decodeStep(() => fromBinary(AuthInfoSchema, raw.authInfoBytes));
  const msgs = body.messages.map((any) =>
    decodeStep(() => {
      const desc = resolveTypeUrl(any.typeUrl);
      if (desc === undefined) throw new Error(`unable to resolve type URL ${any.typeUrl}`);
      return fromBinary(desc, any.value);
    }),
  );
  return {
    txBytes,
    raw,
    bodyBytes: raw.bodyBytes,
    authInfoBytes: raw.authInfoBytes,
    signatures: raw.signatures,
    body,
    authInfo,
    msgs,
    hasUnknownNonCriticals,
  };
}

/** TxRaw bytes: body_bytes, auth_info_bytes, signatures, in field order (ADR-027 form). */
export function encodeTxRaw(parts: { bodyBytes: Uint8Array; authInfoBytes: Uint8Array; signatures: readonly Uint8Array[] }): Uint8Array {
  return toBinary(TxRawSchema, create(TxRawSchema, { bodyBytes: parts.bodyBytes, authInfoBytes: parts.authInfoBytes, signatures: [...parts.signatures] }));
}

/** TxBody bytes (proto3: default values omitted, fields in number order). */
export function encodeTxBody(body: TxBody): Uint8Array {
  return toBinary(TxBodySchema, body);
}

/** AuthInfo bytes. */
export function encodeAuthInfo(authInfo: AuthInfo): Uint8Array {
  return toBinary(AuthInfoSchema, authInfo);
}

/** The tx hash CometBFT and the SDK report: upper-hex SHA-256 of the tx bytes. */
export function txHash(txBytes: Uint8Array): string {
  return createHash('sha256').update(txBytes).digest('hex').toUpperCase();
}

/**
 * The signer address strings of a message, from its `(chain.msg.v1.signer)` option
 * (cosmos-sdk: x/tx/signing GetSigners): each named field is an address string, a list of them,
 * or a message whose own signer fields are followed. Throws when the message declares no signer.
 */
export function msgSignerStrings(msg: Message): string[] {
  const desc = resolveTypeUrl(`/${msg.$typeName}`);
  if (desc === undefined) throw new Error(`unknown message type ${msg.$typeName}`);
  return signersOf(desc, msg as unknown as Record<string, unknown>);
}

function signersOf(desc: DescMessage, msg: Record<string, unknown>): string[] {
  if (!hasOption(desc, signerOption)) throw new Error(`${desc.typeName} has no chain.msg.v1.signer option`);
  const out: string[] = [];
  for (const name of getOption(desc, signerOption)) {
    const f = desc.fields.find((x) => x.name === name);
    if (f === undefined) throw new Error(`${desc.typeName}: signer field ${name} does not exist`);
    const v = msg[f.localName];
    if (f.fieldKind === 'scalar' && f.scalar === ScalarType.STRING) out.push(v as string);
    else if (f.fieldKind === 'list' && f.listKind === 'scalar' && f.scalar === ScalarType.STRING) out.push(...(v as string[]));
    else if (f.fieldKind === 'message' && v !== undefined) out.push(...signersOf(f.message, v as Record<string, unknown>));
    else if (f.fieldKind === 'list' && f.listKind === 'message') for (const e of v as Record<string, unknown>[]) out.push(...signersOf(f.message, e));
    else if (f.fieldKind !== 'message') throw new Error(`${desc.typeName}: signer field ${name} is not an address string`);
  }
  return out;
}

/** The type URL of each message of a decoded tx, as sent (either spelling). */
export function msgTypeUrls(tx: DecodedTxRaw): string[] {
  return tx.body.messages.map((a: Any) => a.typeUrl);
}

/**
 * A BaseApp TxDecoder (src/app/tx.ts) over decodeTx: message values are the decoded
 * @bufbuild/protobuf messages (field names in lowerCamel, amounts as strings), `auth` is the
 * DecodedTxRaw for the auth ante decorators. A missing fee decodes as no fee and zero gas, as
 * the SDK's GetFee/GetGas on a nil Fee.
 */
export const protoTxDecoder: TxDecoder = {
  decode(txBytes: Uint8Array): DecodedTx {
    const tx = decodeTx(txBytes);
    const fee = tx.authInfo.fee;
    let amount;
    try {
      amount = coinsFromJson(fee?.amount ?? []);
    } catch (e) {
      throw parseError(`fee: ${(e as Error).message}`);
    }
    return {
      msgs: tx.msgs.map((m, i) => ({ typeUrl: tx.body.messages[i]!.typeUrl, value: m })),
      fee: { amount, payer: fee?.payer ?? '', granter: fee?.granter ?? '' },
      gas: fee?.gasLimit ?? 0n,
      memo: tx.body.memo,
      timeoutHeight: tx.body.timeoutHeight,
      auth: tx,
    };
  },
};
