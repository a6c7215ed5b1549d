/**
 * Signature data, sign bytes and signature verification of txs (cosmos-sdk: x/auth/tx/sigs.go
 * ModeInfoAndSigToSignatureData, x/auth/signing/verify.go VerifySignature,
 * crypto/keys/multisig/multisig.go VerifyMultisignature, types/tx/signing/signature_data.go;
 * cosmos/cosmos-sdk:x/auth/tx/direct.go), and the pre-verification stage that runs every signature
 * of a tx (CheckTx) or of a whole block (FinalizeBlock) through the worker pool in one call before
 * the synchronous ante chain runs.
 *
 * Pre-verification is a cache, never a verdict on its own: it computes the sign bytes from the
 * state at its start (account number, stored or offered key, the sequence the signer claims) and
 * records (key, sign bytes, signature) → valid. The SigVerification decorator recomputes the sign
 * bytes from the state the tx actually runs against and looks the triple up; a miss (an account
 * created earlier in the same block, a key set by an earlier tx) is verified on the spot with the
 * same crypto backend the pool's workers use, so a block's result never depends on the cache.
 *
 * Keys: secp256k1 is ECDSA over SHA-256 of the sign bytes, eth_secp256k1 over Keccak-256 (a
 * 65-byte r‖s‖v signature has v dropped, as Cosmos EVM's ethsecp256k1.VerifySignature does),
 * ed25519 over the bytes themselves; low-S is required for both secp256k1 kinds. ML-DSA-65 keys
 * are recognised (gas, addresses) but cannot be verified yet: chaind has no ML-DSA-65
 * implementation, so their signatures fail verification.
 *
 * LEGACY_AMINO_JSON is verified against the spec's amino names (`chain-sdk/…`) and, failing that,
 * the upstream ones (`cosmos-sdk/…`) that unmodified CosmJS/Keplr amino signers sign; DIRECT_AUX
 * likewise against both spellings of the signer's key type URL.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { bytesEqual, type Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import { sdkErrors } from '../../errors.js';
import type { Tx } from '../../tx.js';
import { getCryptoBackend, type CryptoBackend } from '../../../crypto/backend.js';
import { MultiSignatureSchema, type CompactBitArray } from '../../../gen/chain/crypto/multisig/v1beta1/multisig_pb.js';
import { SignMode } from '../../../gen/chain/tx/signing/v1beta1/signing_pb.js';
import type { ModeInfo, SignerInfo } from '../../../gen/chain/tx/v1beta1/tx_pb.js';
import type { CryptoPool, SigItem } from '../../../pool/types.js';
import { CryptoPoolError } from '../../../pool/types.js';
import { emitTypeUrl } from '../../../proto/registry.js';
import type { DecodedTxRaw } from '../../../tx/codec.js';
import { LruMemo } from '../../../tx/memo.js';
import { bytesToKey } from '../../../crypto/bytes.js';
import { decodePubKey, type PubKey, type SinglePubKey } from '../../../tx/pubkey.js';
import { signBytesDirect, signBytesDirectAux, signBytesLegacyAmino } from '../../../tx/signbytes.js';
import type { AccountKeeper } from './keeper.js';

/** signing.SignatureData: one signature with its mode, or a multisig's bit array and parts. */
export type SigData =
  | { kind: 'single'; mode: SignMode; sig: Bytes }
  | { kind: 'multi'; bitarray: CompactBitArray | undefined; sigs: SigData[] };

/** The signed-tx view the ante decorators read: the TxRaw parts decoded by src/tx/codec.ts. */
export function rawTxOf(tx: Tx): DecodedTxRaw {
  const a = tx.auth as Partial<DecodedTxRaw> | undefined;
  if (a === undefined || a === null || a.authInfo === undefined || a.body === undefined || a.bodyBytes === undefined) {
    throw sdkErrors.txDecode.wrap('invalid transaction type');
  }
  return a as DecodedTxRaw;
}

/**
 * ModeInfoAndSigToSignatureData: undefined for a signer info without mode info (simulation); a
 * multisig's signature bytes are a MultiSignature whose parts pair with the nested mode infos.
 * Throws a plain Error (the SDK's errors here are unregistered).
 */
export function sigDataOf(modeInfo: ModeInfo | undefined, sig: Bytes): SigData | undefined {
  if (modeInfo === undefined) return undefined;
  const sum = modeInfo.sum;
  switch (sum.case) {
    case 'single':
      return { kind: 'single', mode: sum.value.mode, sig };
    case 'multi': {
      const ms = fromBinary(MultiSignatureSchema, sig);
      if (sum.value.modeInfos.length > ms.signatures.length) {
        throw new Error(`multisig has ${sum.value.modeInfos.length} mode infos but ${ms.signatures.length} signatures`);
      }
      return { kind: 'multi', bitarray: sum.value.bitarray, sigs: sum.value.modeInfos.map((mi, i) => sigDataOf(mi, ms.signatures[i]!)!) };
    }
    default:
      throw new Error('mode info has no sum');
  }
}

export function signerSigData(raw: DecodedTxRaw, i: number): SigData | undefined {
  const si: SignerInfo | undefined = raw.authInfo.signerInfos[i];
  return sigDataOf(si?.modeInfo, raw.signatures[i] ?? new Uint8Array(0));
}

/** True when every signature in `d` is LEGACY_AMINO_JSON (OnlyLegacyAminoSigners). */
export function onlyLegacyAminoSigners(d: SigData | undefined): boolean {
  if (d === undefined) return false;
  if (d.kind === 'single') return d.mode === SignMode.LEGACY_AMINO_JSON;
  return d.sigs.every(onlyLegacyAminoSigners);
}

/** True when the sign bytes of `d` depend on a name spelling (amino names, the aux pubkey URL). */
function spellingDependent(d: SigData): boolean {
  if (d.kind === 'single') return d.mode === SignMode.LEGACY_AMINO_JSON || d.mode === SignMode.DIRECT_AUX;
  return d.sigs.some(spellingDependent);
}

/**
 * signatureDataToBz (x/auth/ante/sigverify.go): a single signature as is; a multisig's parts
 * (recursively), then the MultiSignature of those parts.
 */
export function signatureBytesForEvents(d: SigData | undefined): Bytes[] {
  if (d === undefined) throw new Error('got empty SignatureData');
  if (d.kind === 'single') return [d.sig];
  const parts: Bytes[] = [];
  for (const s of d.sigs) parts.push(...signatureBytesForEvents(s));
  return [...parts, toBinary(MultiSignatureSchema, create(MultiSignatureSchema, { signatures: parts }))];
}

// --- compact bit array (crypto/types/compact_bit_array.go) -------------------------------------

export function bitArrayCount(ba: CompactBitArray | undefined): number {
  if (ba === undefined) return 0;
  if (ba.extraBitsStored === 0) return ba.elems.length * 8;
  return (ba.elems.length - 1) * 8 + ba.extraBitsStored;
}

export function bitArrayGet(ba: CompactBitArray | undefined, i: number): boolean {
  if (ba === undefined || i < 0 || i >= bitArrayCount(ba)) return false;
  return (ba.elems[i >> 3]! & (1 << (7 - (i % 8)))) > 0;
}

export function bitArrayTrueBefore(ba: CompactBitArray | undefined, index: number): number {
  let n = 0;
  for (let i = 0; i < index; i++) if (bitArrayGet(ba, i)) n++;
  return n;
}

// --- sign bytes ---------------------------------------------------------------------------------

export interface SignerData {
  chainId: string;
  accountNumber: bigint;
  sequence: bigint;
  /** The signer's key as stored (canonical type URL). */
  pubKey: Any | undefined;
}

function signModeName(mode: SignMode): string {
  const n = SignMode[mode];
  return n === undefined ? String(mode) : `SIGN_MODE_${n}`;
}

/**
 * The bytes a signer signed in `mode`. `upstream` picks the upstream spelling of what the bytes
 * spell (amino names; the aux key's type URL). Throws an Error for a mode chaind does not verify.
 */
export function signBytesFor(raw: DecodedTxRaw, mode: SignMode, sd: SignerData, upstream: boolean): Bytes {
  switch (mode) {
    case SignMode.DIRECT:
      return signBytesDirect(raw.bodyBytes, raw.authInfoBytes, sd.chainId, sd.accountNumber);
    case SignMode.LEGACY_AMINO_JSON:
      return signBytesLegacyAmino(raw, sd.chainId, sd.accountNumber, sd.sequence, { upstreamNames: upstream });
    case SignMode.DIRECT_AUX: {
      const pk = sd.pubKey === undefined ? undefined : { ...sd.pubKey, typeUrl: emitTypeUrl(sd.pubKey.typeUrl, { upstreamNames: upstream }) };
      return signBytesDirectAux(raw.bodyBytes, pk, sd.chainId, sd.accountNumber, sd.sequence);
    }
    default:
      throw new Error(`unsupported sign mode ${signModeName(mode)}`);
  }
}

/** Checks one signature of one single key over `msg`. */
export type SingleVerifier = (pk: SinglePubKey, msg: Bytes, sig: Bytes) => boolean;

/**
 * VerifySignature: null when valid, else the SDK's reason (`unable to verify single signer
 * signature`, the multisig checks' texts, an unsupported sign mode).
 */
function verifyData(pk: PubKey, d: SigData, bytesFor: (mode: SignMode) => Bytes, single: SingleVerifier): string | null {
  if (d.kind === 'single') {
    let msg: Bytes;
    try {
      msg = bytesFor(d.mode);
    } catch (e) {
      return (e as Error).message;
    }
    // A multisig key's VerifySignature is always false.
    if (pk.algo === 'multisig') return 'unable to verify single signer signature';
    return single(pk, msg, d.sig) ? null : 'unable to verify single signer signature';
  }
  if (pk.algo !== 'multisig') return `expected multisig.PubKey, got ${pk.algo} key`;
  const size = bitArrayCount(d.bitarray);
  if (pk.pubKeys.length !== size) return `bit array size is incorrect, expecting: ${pk.pubKeys.length}`;
  if (d.sigs.length < pk.threshold || d.sigs.length > size) return `signature size is incorrect ${d.sigs.length}`;
  const set = bitArrayTrueBefore(d.bitarray, size);
  if (set < pk.threshold) return `not enough signatures set, have ${set}, expected ${pk.threshold}`;
  let si = 0;
  for (let i = 0; i < size; i++) {
    if (!bitArrayGet(d.bitarray, i)) continue;
    const sub = d.sigs[si];
    if (sub === undefined) return `signature size is incorrect ${d.sigs.length}`;
    const subPk = pk.pubKeys[i]!;
    if (sub.kind === 'single') {
      let msg: Bytes;
      try {
        msg = bytesFor(sub.mode);
      } catch (e) {
        return (e as Error).message;
      }
      if (subPk.algo === 'multisig' || !single(subPk, msg, sub.sig)) return `unable to verify signature at index ${i}`;
    } else {
      if (subPk.algo !== 'multisig') return `unable to parse pubkey of index ${i}`;
      const err = verifyData(subPk, sub, bytesFor, single);
      if (err !== null) return err;
    }
    si++;
  }
  return null;
}

/**
 * Verifies a signer's signature data against its key: spec spelling first, then (only when the
 * bytes spell a name) the upstream one. Null when valid, else the spec attempt's reason.
 */
export function verifySignerSignature(raw: DecodedTxRaw, pk: PubKey, d: SigData, sd: SignerData, single: SingleVerifier): string | null {
  const err = verifyData(pk, d, (m) => signBytesFor(raw, m, sd, false), single);
  if (err === null || !spellingDependent(d)) return err;
  return verifyData(pk, d, (m) => signBytesFor(raw, m, sd, true), single) === null ? null : err;
}

/** The triples verifySignerSignature would check, under both spellings when they matter. */
function collectTriples(raw: DecodedTxRaw, pk: PubKey, d: SigData, sd: SignerData): { pk: SinglePubKey; msg: Bytes; sig: Bytes }[] {
  const out: { pk: SinglePubKey; msg: Bytes; sig: Bytes }[] = [];
  const record: SingleVerifier = (p, msg, sig) => {
    out.push({ pk: p, msg, sig });
    return true;
  };
  verifyData(pk, d, (m) => signBytesFor(raw, m, sd, false), record);
  if (spellingDependent(d)) verifyData(pk, d, (m) => signBytesFor(raw, m, sd, true), record);
  return out;
}

// --- single-key checks --------------------------------------------------------------------------

/** The pool item of a single-key check, or null when no pool scheme covers the key (ML-DSA-65). */
export function sigItemOf(pk: SinglePubKey, msg: Bytes, sig: Bytes): SigItem | null {
  switch (pk.algo) {
    case 'secp256k1':
      return { scheme: 'secp256k1', pubKey: pk.key, msg, hash: 'sha256', sig };
    case 'eth_secp256k1':
      return { scheme: 'secp256k1', pubKey: pk.key, msg, hash: 'keccak256', sig: sig.length === 65 ? sig.subarray(0, 64) : sig };
    case 'ed25519':
      return { scheme: 'ed25519', pubKey: pk.key, msg, sig };
    case 'mldsa65':
      return null;
  }
}

/** The same check on the calling thread, with the backend the pool's workers use. */
export function verifySingleSync(backend: CryptoBackend, pk: SinglePubKey, msg: Bytes, sig: Bytes): boolean {
  const item = sigItemOf(pk, msg, sig);
  if (item === null) return false;
  try {
    if (item.scheme === 'ed25519') return item.pubKey.length === 32 && item.sig.length === 64 && backend.ed25519Verify(item.pubKey, item.msg, item.sig);
    if (item.sig.length !== 64) return false;
    if (!('msg' in item)) return backend.secp256k1Verify(item.digest, item.sig, item.pubKey);
    const digest = item.hash === 'sha256' ? backend.sha256(item.msg) : backend.keccak256(item.msg);
    return backend.secp256k1Verify(digest, item.sig, item.pubKey);
  } catch {
    return false;
  }
}

interface CacheEntry {
  algo: SinglePubKey['algo'];
  key: Bytes;
  msg: Bytes;
  ok: boolean;
}

function sigKey(sig: Bytes): string {
  return Buffer.from(sig.buffer, sig.byteOffset, sig.byteLength).toString('base64');
}

/**
 * How many valid signature checks are remembered across txs and blocks. What CheckTx verified
 * must still be there when the tx's block runs (FinalizeBlock) and at every recheck in between:
 * the mempool holds up to `size` txs (default 5,000), each normally one check, and a block may
 * also bring txs this node never saw. 16,384 covers a full default mempool three times over. An
 * entry is a ~170-byte string key: ~3 MB when full.
 */
export const VERIFIED_SIG_MEMO_SIZE = 16_384;

/** What pre-verification needs to know per tx: its signers (msg signers, then the fee payer). */
export type SignersOf = (ctx: Context, tx: Tx) => Bytes[];

export interface SignatureVerifierOptions {
  accounts: AccountKeeper;
  signers: SignersOf;
  /** The worker pool; without one everything is verified on the calling thread. */
  pool?: CryptoPool;
  /** Default: the process's crypto backend (the one the pool's workers pick too). */
  backend?: CryptoBackend;
  /** Called when pre-verification could not use the pool (FinalizeBlock goes on without it). */
  onPoolError?: (err: unknown) => void;
  /** Capacity of the memo of valid checks; default VERIFIED_SIG_MEMO_SIZE. */
  verifiedMemoSize?: number;
  /**
   * Whether CheckTx pre-verifies on the pool. Default: only with the JS backend (~1 ms a
   * secp256k1 check). With the native one a check costs ~50 µs, less than the pool round trip
   * (collecting the checks, posting them, a worker thread's turn, the answer's event-loop turn):
   * the SigVerification decorator then verifies a CheckTx's signatures on the spot, as the SDK's
   * CheckTx does, and remembers them for the block. FinalizeBlock's batch always uses the pool.
   */
  checkTxOnPool?: boolean;
}

/**
 * The pre-verification stage (BaseApp's TxPreVerifier) and the lookup the SigVerification
 * decorator makes.
 */
export class SignatureVerifier {
  private readonly results = new WeakMap<Tx, Map<string, CacheEntry[]>>();
  private backendCache: CryptoBackend | undefined;
  /**
   * Checks that passed, on this node, in any mode: (key type, key, signature, SHA-256 of the sign
   * bytes). A check is a pure function of that triple, so answering it from here gives the same
   * verdict as verifying it again, and FinalizeBlock stays deterministic: a tx that CheckTx
   * admitted is not verified again when its block runs, and one this node never saw (another
   * proposer's block) misses and is verified. Only passes are kept: a bad signature is refused
   * every time it is presented, at full price.
   */
  private readonly verified: LruMemo<string, true>;
  /**
   * Counters for tests and metrics: checks sent to the pool, answered from the pool's results of
   * this tx, answered from the memo of valid checks, and verified on the spot.
   */
  readonly stats = { pooled: 0, cacheHits: 0, memoHits: 0, syncVerified: 0 };

  constructor(private readonly opts: SignatureVerifierOptions) {
    this.backendCache = opts.backend;
    this.verified = new LruMemo(opts.verifiedMemoSize ?? VERIFIED_SIG_MEMO_SIZE);
  }

  /** New memo keys for another thread's verifier, while sharing is on (shareVerified). */
  private outbox: string[] | null = null;

  /**
   * Starts collecting every new valid check for `takeVerified`: the main thread's CheckTx hands
   * what it verified to the executor thread's verifier, so a block of txs this node admitted is
   * not verified again there (docs/ARCHITECTURE.md, Threads). Keys are pure functions of the
   * check, so a shared entry gives the verdict verifying would.
   */
  shareVerified(): void {
    this.outbox ??= [];
  }

  /** The valid checks collected since the last call (at most the memo's capacity, newest kept). */
  takeVerified(): string[] {
    const out = this.outbox ?? [];
    if (this.outbox !== null) this.outbox = [];
    return out.length > this.verified.capacity ? out.slice(out.length - this.verified.capacity) : out;
  }

  /** Valid checks another thread's verifier made (its takeVerified). */
  addVerified(keys: readonly string[]): void {
    for (const k of keys) this.verified.set(k, true);
  }

  private remember(k: string): void {
    this.verified.set(k, true);
    if (this.outbox === null) return;
    this.outbox.push(k);
    // Nobody took them for a while: keep only what the memo itself could hold.
    if (this.outbox.length > 2 * this.verified.capacity) this.outbox = this.outbox.slice(this.outbox.length - this.verified.capacity);
  }

  /** Number of valid checks remembered (bounded by the memo's capacity). */
  get verifiedMemoSize(): number {
    return this.verified.size;
  }

  /** The memo key of a single-key check: the sign bytes enter as their SHA-256. */
  private memoKey(algo: SinglePubKey['algo'], key: Bytes, msg: Bytes, sig: Bytes): string {
    return `${algo}\0${bytesToKey(key)}\0${bytesToKey(sig)}\0${bytesToKey(this.backend.sha256(msg))}`;
  }

  private get backend(): CryptoBackend {
    this.backendCache ??= getCryptoBackend();
    return this.backendCache;
  }

  /**
   * Collects every signature check of `txs` against `ctx`'s state (read only) and runs them
   * through the pool in one call. In CheckTx a saturated pool refuses the tx (`mempool is full`,
   * code 20); otherwise pool failures only mean the decorator verifies on the spot.
   */
  async preVerify(ctx: Context, txs: readonly Tx[]): Promise<void> {
    const pool = this.opts.pool;
    if (pool === undefined || txs.length === 0) return;
    if (ctx.isCheckTx && !(this.opts.checkTxOnPool ?? this.backend.name === 'js')) return;
    const items: SigItem[] = [];
    const owners: { tx: Tx; entry: CacheEntry; sig: Bytes }[] = [];
    const memoOnly: SingleVerifier = (p, msg, sig) => this.verified.has(this.memoKey(p.algo, p.key, msg, sig));
    for (const tx of txs) {
      let raw: DecodedTxRaw;
      let signers: Bytes[];
      try {
        raw = rawTxOf(tx);
        signers = this.opts.signers(ctx, tx);
      } catch {
        continue;
      }
      const n = Math.min(signers.length, raw.authInfo.signerInfos.length, raw.signatures.length);
      for (let i = 0; i < n; i++) {
        try {
          const si = raw.authInfo.signerInfos[i]!;
          const acc = this.opts.accounts.getAccount(ctx, signers[i]!);
          if (acc === undefined) continue;
          const keyAny = acc.pubKey ?? si.publicKey;
          if (keyAny === undefined) continue;
          const pk = decodePubKey(keyAny);
          const d = sigDataOf(si.modeInfo, raw.signatures[i]!);
          if (d === undefined) continue;
          const accountNumber = ctx.height === 0n ? 0n : acc.accountNumber;
          const sd: SignerData = { chainId: ctx.chainId, accountNumber, sequence: si.sequence, pubKey: acc.pubKey ?? keyAny };
          // Verified before (CheckTx of this tx, an earlier block): the decorator will find it,
          // and an amino signature's other spelling, which failed, need not be tried again.
          if (verifySignerSignature(raw, pk, d, sd, memoOnly) === null) continue;
          for (const t of collectTriples(raw, pk, d, sd)) {
            if (this.verified.has(this.memoKey(t.pk.algo, t.pk.key, t.msg, t.sig))) continue;
            const item = sigItemOf(t.pk, t.msg, t.sig);
            if (item === null) continue;
            items.push(item);
            owners.push({ tx, sig: t.sig, entry: { algo: t.pk.algo, key: t.pk.key, msg: t.msg, ok: false } });
          }
        } catch {
          // Anything malformed is left to the ante chain, which reports it with the SDK's error.
        }
      }
    }
    if (items.length === 0) return;
    let verdicts: boolean[];
    try {
      verdicts = await pool.verifySignatures(items);
    } catch (e) {
      if (ctx.isCheckTx && e instanceof CryptoPoolError && e.code === 'POOL_QUEUE_FULL') {
        throw sdkErrors.mempoolIsFull.wrap('signature verification pool is busy');
      }
      this.opts.onPoolError?.(e);
      return;
    }
    this.stats.pooled += items.length;
    for (let i = 0; i < owners.length; i++) {
      const { tx, sig, entry } = owners[i]!;
      entry.ok = verdicts[i] === true;
      if (entry.ok) this.remember(this.memoKey(entry.algo, entry.key, entry.msg, sig));
      let m = this.results.get(tx);
      if (m === undefined) {
        m = new Map();
        this.results.set(tx, m);
      }
      const k = sigKey(sig);
      m.set(k, [...(m.get(k) ?? []), entry]);
    }
  }

  /** The single-key check for the SigVerification decorator: the pool's verdict, or verified now. */
  verifier(tx: Tx): SingleVerifier {
    const m = this.results.get(tx);
    return (pk, msg, sig) => {
      const hit = m?.get(sigKey(sig))?.find((e) => e.algo === pk.algo && bytesEqual(e.key, pk.key) && bytesEqual(e.msg, msg));
      if (hit !== undefined) {
        this.stats.cacheHits++;
        return hit.ok;
      }
      const k = this.memoKey(pk.algo, pk.key, msg, sig);
      if (this.verified.get(k) === true) {
        this.stats.memoHits++;
        return true;
      }
      this.stats.syncVerified++;
      const ok = verifySingleSync(this.backend, pk, msg, sig);
      if (ok) this.remember(k);
      return ok;
    };
  }
}
