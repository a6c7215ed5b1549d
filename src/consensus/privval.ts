/**
 * The private validator: signs proposals and votes and refuses to sign twice
 * (cometbft/cometbft:privval/file.go FilePV, "double-sign protection").
 *
 * Files (as CometBFT): config/priv_validator_key.json
 *   {"address":HEX,"pub_key":{"type":"consensus/PubKeyEd25519","value":b64},"priv_key":{"type":"consensus/PrivKeyEd25519","value":b64(64 bytes)}}
 * and data/priv_validator_state.json
 *   {"height":"n","round":n,"step":n,"signature":b64,"signbytes":HEX}   (signature/signbytes omitted when empty)
 * with steps 0 none, 1 propose, 2 prevote, 3 precommit. Key type names come from the names
 * registry; reading accepts both `consensus/…` and `tendermint/…`.
 *
 * Rules (file.go CheckHRS / signVote / signProposal), against the last signed height/round/step:
 * - a lower height, round (same height) or step (same height and round) is refused with
 *   CometBFT's messages (`height regression. Got 4, last height 5`, …);
 * - the same H/R/S with identical sign bytes returns the stored signature; sign bytes that differ
 *   only in the timestamp return the stored signature and the stored timestamp; anything else is
 *   `conflicting data`;
 * - otherwise sign, and persist the new state (temp file, fsync, rename, fsync dir) BEFORE the
 *   signature is returned, so a crash can never lose the record of a signature that left us. A
 *   FilePV does its writes on a small thread of its own (DurableWriter), so the main thread goes
 *   on answering RPC during the fsyncs; the signature still waits for them.
 *
 * Audit log: with the signLogPath option (CHAIND_SIGN_LOG=<path>, src/config/env.ts) every returned signature is
 * appended as one JSON line {"height":"n","round":n,"step":n,"signbytes_hex":HEX} and fsynced, also
 * before returning. The e2e kill test reads it to prove that no H/R/S was signed over two
 * different payloads.
 *
 * Calls are serialized internally: two concurrent sign requests never interleave their checks
 * and writes.
 *
 * A failed state write (EMFILE when the node is out of descriptors, ENOSPC, a directory moved
 * away) is retried a few times with back-off; if it still fails the call throws
 * PRIVVAL_PERSIST_FAILED and no signature leaves. Consensus (state.ts) retries the same step later,
 * so a transient I/O failure delays the node instead of stalling it until a restart.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SignedMsgType, type Proposal, type Vote } from '../types/block.js';
import type { PubKey } from '../types/validator.js';
import { Ed25519PrivKey } from '../crypto/ed25519.js';
import { proposalSignBytes, voteSignBytes } from '../types/signbytes.js';
import { ProtoReader, readDelimited } from '../types/proto.js';
import { readTimestamp } from '../types/codec.js';
import { parsePrivKeyType, parsePubKeyType } from '../names/index.js';
import { bytesEqual, hexUpper } from './util.js';

export const STEP_NONE = 0;
export const STEP_PROPOSE = 1;
export const STEP_PREVOTE = 2;
export const STEP_PRECOMMIT = 3;

export type PrivValidatorErrorCode =
  | 'PRIVVAL_HEIGHT_REGRESSION'
  | 'PRIVVAL_ROUND_REGRESSION'
  | 'PRIVVAL_STEP_REGRESSION'
  | 'PRIVVAL_CONFLICTING_DATA'
  | 'PRIVVAL_NO_SIGN_BYTES'
  | 'PRIVVAL_BAD_VOTE'
  | 'PRIVVAL_BAD_FILE'
  /** The state (or audit log) could not be written: nothing was signed; retrying may succeed. */
  | 'PRIVVAL_PERSIST_FAILED';

/** `message` is CometBFT's inner error text; SignVote wraps it as `error signing vote: …`. */
export class PrivValidatorError extends Error {
  constructor(
    readonly code: PrivValidatorErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PrivValidatorError';
  }
}

/** What consensus needs from a signer. Returned objects are copies with the signature set. */
export interface PrivValidator {
  readonly address: Uint8Array;
  readonly pubKey: PubKey;
  signVote(chainId: string, vote: Vote): Promise<Vote>;
  signProposal(chainId: string, proposal: Proposal): Promise<Proposal>;
}

/** FilePVLastSignState. */
export interface LastSignState {
  height: bigint;
  round: number;
  step: number;
  signature: Uint8Array | null;
  signBytes: Uint8Array | null;
}

export function emptyLastSignState(): LastSignState {
  return { height: 0n, round: 0, step: STEP_NONE, signature: null, signBytes: null };
}

/**
 * CheckHRS: throws on regression; true when H/R/S equals the last signed one (and sign bytes
 * exist), false when it is new.
 */
export function checkHRS(lss: LastSignState, height: bigint, round: number, step: number): boolean {
  if (lss.height > height) {
    throw new PrivValidatorError('PRIVVAL_HEIGHT_REGRESSION', `height regression. Got ${height}, last height ${lss.height}`);
  }
  if (lss.height === height) {
    if (lss.round > round) {
      throw new PrivValidatorError('PRIVVAL_ROUND_REGRESSION', `round regression at height ${height}. Got ${round}, last round ${lss.round}`);
    }
    if (lss.round === round) {
      if (lss.step > step) {
        throw new PrivValidatorError(
          'PRIVVAL_STEP_REGRESSION',
          `step regression at height ${height} round ${round}. Got ${step}, last step ${lss.step}`,
        );
      }
      if (lss.step === step) {
        if (lss.signBytes !== null && lss.signBytes.length > 0) {
          if (lss.signature === null) throw new Error('pv: Signature is nil but SignBytes is not!');
          return true;
        }
        throw new PrivValidatorError('PRIVVAL_NO_SIGN_BYTES', 'no SignBytes found');
      }
    }
  }
  return false;
}

export function voteStep(type: SignedMsgType): number {
  if (type === SignedMsgType.Prevote) return STEP_PREVOTE;
  if (type === SignedMsgType.Precommit) return STEP_PRECOMMIT;
  throw new PrivValidatorError('PRIVVAL_BAD_VOTE', `unknown vote type: ${type}`);
}

/**
 * checkVotesOnlyDifferByTimestamp / checkProposalsOnlyDifferByTimestamp: compares two delimited
 * canonical messages field by field, ignoring the timestamp field (5 in CanonicalVote, 6 in
 * CanonicalProposal). Returns the old timestamp when that is the only difference, else null.
 */
export function onlyDifferByTimestamp(lastSignBytes: Uint8Array, newSignBytes: Uint8Array, timestampField: number): bigint | null {
  try {
    const a = scanFields(readDelimited(lastSignBytes).msg);
    const b = scanFields(readDelimited(newSignBytes).msg);
    const aRest = a.filter((f) => f.field !== timestampField);
    const bRest = b.filter((f) => f.field !== timestampField);
    if (aRest.length !== bRest.length) return null;
    for (let i = 0; i < aRest.length; i++) {
      if (aRest[i]!.field !== bRest[i]!.field || !bytesEqual(aRest[i]!.raw, bRest[i]!.raw)) return null;
    }
    const ts = a.find((f) => f.field === timestampField);
    if (ts === undefined) return null;
    const r = new ProtoReader(ts.raw);
    r.tag();
    return readTimestamp(r.sub());
  } catch {
    return null;
  }
}

function scanFields(msg: Uint8Array): { field: number; raw: Uint8Array }[] {
  const out: { field: number; raw: Uint8Array }[] = [];
  const r = new ProtoReader(msg);
  while (!r.eof()) {
    const start = r.pos;
    const t = r.tag();
    r.skip(t & 7);
    out.push({ field: t >>> 3, raw: msg.subarray(start, r.pos) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Files

/**
 * Writes `data` to `file` atomically and durably: temp file, fsync, rename, fsync of the directory.
 * Synchronous (CometBFT's FilePV writes synchronously too: cometbft/cometbft:privval/file.go,
 * internal/tempfile); a FilePV runs it on its writer thread (DurableWriter), not on the thread
 * that answers RPC. Self-contained (only `fs` and `path`): DurableWriter's thread runs its source.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    const fd = fs.openSync(tmp, 'w', mode);
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    // A half-written temp file must not pile up across retries.
    try {
      fs.unlinkSync(tmp);
    } catch {
      // not created, or already renamed
    }
    throw e;
  }
  try {
    const dfd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  } catch {
    // Directory fsync is refused on some filesystems; the rename itself is atomic.
  }
}

/** Appends `data` to the file open as `fd` and fsyncs it (the audit log's line). */
export function appendDurably(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
  fs.fsyncSync(fd);
}

/**
 * The private validator's durable writes on a thread of their own. A state write is an fsync of
 * the file and one of its directory: 1–2 ms on an idle disk, tens of ms on a busy one, time during
 * which the main thread answered no RPC when it wrote itself. Here the main thread posts the write
 * and waits for ONE message back (the promise form of the same calls took ~9 event-loop passes,
 * open, write, sync, close, rename, open, sync, close, each as long as the busiest RPC turn), and
 * the signature still leaves only after the state is on disk. If the thread cannot start or dies,
 * writes fall back to the calling thread.
 */
export class DurableWriter {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();

  private start(): Worker | null {
    if (this.worker !== null || this.failed) return this.worker;
    const src = [
      "'use strict';",
      "const fs = require('node:fs');",
      "const path = require('node:path');",
      "const { parentPort } = require('node:worker_threads');",
      `const writeFileAtomic = ${writeFileAtomic.toString()};`,
      `const appendDurably = ${appendDurably.toString()};`,
      'const fds = new Map();',
      'parentPort.on("message", (m) => {',
      '  try {',
      '    if (m.op === "atomic") writeFileAtomic(m.file, m.data, m.mode);',
      '    else if (m.op === "append") {',
      '      let fd = fds.get(m.file);',
      '      if (fd === undefined) { fs.mkdirSync(path.dirname(m.file), { recursive: true }); fd = fs.openSync(m.file, "a", 0o600); fds.set(m.file, fd); }',
      '      appendDurably(fd, m.data);',
      '    } else if (m.op === "close") { for (const fd of fds.values()) fs.closeSync(fd); fds.clear(); }',
      '    parentPort.postMessage({ id: m.id });',
      '  } catch (e) {',
      '    parentPort.postMessage({ id: m.id, error: { message: String(e && e.message || e), code: e && e.code } });',
      '  }',
      '});',
    ].join('\n');
    try {
      const w = new Worker(src, { eval: true, name: 'chaind-privval' });
      w.on('message', (m: { id: number; error?: { message: string; code?: string } }) => {
        const p = this.waiting.get(m.id);
        if (p === undefined) return;
        this.waiting.delete(m.id);
        if (this.waiting.size === 0) w.unref();
        if (m.error === undefined) p.resolve();
        else p.reject(Object.assign(new Error(m.error.message), m.error.code === undefined ? {} : { code: m.error.code }));
      });
      const die = (e: Error) => {
        if (this.worker === w) this.worker = null;
        this.failed = true;
        // A write in flight may or may not have reached the disk: the caller retries it (the
        // same bytes, an idempotent atomic replace) on this thread.
        for (const p of this.waiting.values()) p.reject(e);
        this.waiting.clear();
      };
      w.on('error', die);
      w.on('exit', (code) => die(new Error(`privval writer thread exited with code ${code}`)));
      w.unref();
      this.worker = w;
    } catch {
      this.failed = true;
    }
    return this.worker;
  }

  private post(m: { op: 'atomic'; file: string; data: string; mode: number } | { op: 'append'; file: string; data: Uint8Array } | { op: 'close' }, fallback: () => void): Promise<void> {
    const w = this.start();
    if (w === null) {
      fallback();
      return Promise.resolve();
    }
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.ref();
      w.postMessage({ ...m, id });
    });
  }

  /** writeFileAtomic on the writer thread. */
  writeFileAtomic(file: string, data: string, mode = 0o600): Promise<void> {
    return this.post({ op: 'atomic', file, data, mode }, () => writeFileAtomic(file, data, mode));
  }

  /** Appends and fsyncs on the writer thread, which keeps the file open. */
  append(file: string, data: Uint8Array, fallbackFd: () => number): Promise<void> {
    return this.post({ op: 'append', file, data }, () => appendDurably(fallbackFd(), data));
  }

  /** Closes the thread's files and ends it. */
  async close(): Promise<void> {
    const w = this.worker;
    // From now on writes run on the calling thread.
    this.worker = null;
    this.failed = true;
    if (w === null) return;
    const id = this.nextId++;
    await new Promise<void>((resolve) => {
      this.waiting.set(id, { resolve, reject: () => resolve() });
      w.postMessage({ op: 'close', id });
    });
    await w.terminate();
  }
}

export function lastSignStateJSON(lss: LastSignState): Record<string, unknown> {
  const o: Record<string, unknown> = { height: lss.height.toString(), round: lss.round, step: lss.step };
  if (lss.signature !== null && lss.signature.length > 0) o.signature = Buffer.from(lss.signature).toString('base64');
  if (lss.signBytes !== null && lss.signBytes.length > 0) o.signbytes = hexUpper(lss.signBytes);
  return o;
}

export function parseLastSignState(text: string): LastSignState {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new PrivValidatorError('PRIVVAL_BAD_FILE', `error reading PrivValidator state: ${(e as Error).message}`);
  }
  const h = o.height;
  const height = typeof h === 'string' || typeof h === 'number' ? BigInt(h) : 0n;
  const round = typeof o.round === 'number' ? o.round : Number(o.round ?? 0);
  const step = typeof o.step === 'number' ? o.step : Number(o.step ?? 0);
  const signature = typeof o.signature === 'string' && o.signature.length > 0 ? new Uint8Array(Buffer.from(o.signature, 'base64')) : null;
  const signBytes = typeof o.signbytes === 'string' && o.signbytes.length > 0 ? new Uint8Array(Buffer.from(o.signbytes, 'hex')) : null;
  if (!Number.isInteger(round) || !Number.isInteger(step)) throw new PrivValidatorError('PRIVVAL_BAD_FILE', 'bad priv_validator_state.json');
  return { height, round, step, signature, signBytes };
}

export interface KeyTypeNames {
  /** Default `consensus/PubKeyEd25519` (names registry: pubKeyType('ed25519')). */
  pubKeyType: string;
  /** Default `consensus/PrivKeyEd25519`. */
  privKeyType: string;
}

export const DEFAULT_KEY_TYPE_NAMES: KeyTypeNames = {
  pubKeyType: 'consensus/PubKeyEd25519',
  privKeyType: 'consensus/PrivKeyEd25519',
};

export function privValidatorKeyJSON(key: Ed25519PrivKey, names: KeyTypeNames = DEFAULT_KEY_TYPE_NAMES): Record<string, unknown> {
  return {
    address: hexUpper(key.address),
    pub_key: { type: names.pubKeyType, value: Buffer.from(key.pubKey).toString('base64') },
    priv_key: { type: names.privKeyType, value: Buffer.from(key.bytes()).toString('base64') },
  };
}

/** Parses priv_validator_key.json; accepts `consensus/` and `tendermint/` type names. */
export function parsePrivValidatorKey(text: string): Ed25519PrivKey {
  let o: { address?: unknown; pub_key?: { type?: unknown; value?: unknown }; priv_key?: { type?: unknown; value?: unknown } };
  try {
    o = JSON.parse(text) as typeof o;
  } catch (e) {
    throw new PrivValidatorError('PRIVVAL_BAD_FILE', `error reading PrivValidator key: ${(e as Error).message}`);
  }
  const pk = o.priv_key;
  if (!pk || typeof pk.type !== 'string' || typeof pk.value !== 'string') {
    throw new PrivValidatorError('PRIVVAL_BAD_FILE', 'priv_validator_key.json: missing priv_key');
  }
  if (parsePrivKeyType(pk.type) !== 'ed25519') {
    throw new PrivValidatorError('PRIVVAL_BAD_FILE', `priv_validator_key.json: unsupported key type ${pk.type}`);
  }
  const key = Ed25519PrivKey.fromBytes(new Uint8Array(Buffer.from(pk.value, 'base64')));
  const pub = o.pub_key;
  if (pub && typeof pub.type === 'string' && typeof pub.value === 'string') {
    if (parsePubKeyType(pub.type) !== 'ed25519') {
      throw new PrivValidatorError('PRIVVAL_BAD_FILE', `priv_validator_key.json: unsupported key type ${pub.type}`);
    }
    if (!bytesEqual(new Uint8Array(Buffer.from(pub.value, 'base64')), key.pubKey)) {
      throw new PrivValidatorError('PRIVVAL_BAD_FILE', 'priv_validator_key.json: pub_key does not match priv_key');
    }
  }
  if (typeof o.address === 'string' && o.address.length > 0 && o.address.toUpperCase() !== hexUpper(key.address)) {
    throw new PrivValidatorError('PRIVVAL_BAD_FILE', 'priv_validator_key.json: address does not match the key');
  }
  return key;
}

// ---------------------------------------------------------------------------------------------
// Signers

export interface PrivValidatorOptions {
  /** Audit log path (CHAIND_SIGN_LOG, read by src/config/env.ts); absent or null: no log. */
  signLogPath?: string | null;
  /** Attempts of a state write before PRIVVAL_PERSIST_FAILED (default 4). */
  persistAttempts?: number;
  /** Back-off before the 2nd attempt, doubled each time up to 1 s (default 50 ms: 50, 100, 200). */
  persistBackoffMs?: number;
}

export const DEFAULT_PERSIST_ATTEMPTS = 4;
export const DEFAULT_PERSIST_BACKOFF_MS = 50;

/**
 * The double-sign rules over an in-memory LastSignState; subclasses decide where it persists.
 * MemoryPrivValidator (tests, simulations) keeps it in memory only.
 */
export class MemoryPrivValidator implements PrivValidator {
  readonly key: Ed25519PrivKey;
  protected lss: LastSignState;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly signLogPath: string | null;
  private signLogFd: number | null = null;
  private readonly persistAttempts: number;
  private readonly persistBackoffMs: number;

  constructor(key: Ed25519PrivKey, lss: LastSignState = emptyLastSignState(), opts: PrivValidatorOptions = {}) {
    this.key = key;
    this.lss = lss;
    this.persistAttempts = Math.max(1, opts.persistAttempts ?? DEFAULT_PERSIST_ATTEMPTS);
    this.persistBackoffMs = opts.persistBackoffMs ?? DEFAULT_PERSIST_BACKOFF_MS;
    this.signLogPath = opts.signLogPath ?? null;
  }

  get address(): Uint8Array {
    return this.key.address;
  }

  get pubKey(): PubKey {
    return { type: 'ed25519', bytes: this.key.pubKey };
  }

  /** A copy of the last sign state. */
  get lastSignState(): LastSignState {
    return { ...this.lss };
  }

  /** Persists the state; MemoryPrivValidator keeps it in memory only. */
  protected async persist(_lss: LastSignState): Promise<void> {}

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  signVote(chainId: string, vote: Vote): Promise<Vote> {
    return this.serialize(async () => {
      const step = voteStep(vote.type);
      // Extensions are off (abci.vote_extensions_enable_height 0); file.go refuses one elsewhere.
      if (vote.extension.length > 0 && !(vote.type === SignedMsgType.Precommit && vote.blockId.hash.length > 0)) {
        throw new PrivValidatorError('PRIVVAL_BAD_VOTE', 'unexpected vote extension - extensions are only allowed in non-nil precommits');
      }
      const signBytes = voteSignBytes(chainId, vote);
      const r = await this.signBytesFor(vote.height, vote.round, step, signBytes, 5);
      return { ...vote, timestamp: r.timestamp ?? vote.timestamp, signature: r.signature };
    });
  }

  signProposal(chainId: string, proposal: Proposal): Promise<Proposal> {
    return this.serialize(async () => {
      const signBytes = proposalSignBytes(chainId, proposal);
      const r = await this.signBytesFor(proposal.height, proposal.round, STEP_PROPOSE, signBytes, 6);
      return { ...proposal, timestamp: r.timestamp ?? proposal.timestamp, signature: r.signature };
    });
  }

  private async signBytesFor(
    height: bigint,
    round: number,
    step: number,
    signBytes: Uint8Array,
    timestampField: number,
  ): Promise<{ signature: Uint8Array; timestamp: bigint | null }> {
    const lss = this.lss;
    const same = checkHRS(lss, height, round, step);
    if (same) {
      if (bytesEqual(signBytes, lss.signBytes!)) {
        await this.withRetry('sign audit log', () => this.audit(height, round, step, lss.signBytes!));
        return { signature: lss.signature!, timestamp: null };
      }
      const ts = onlyDifferByTimestamp(lss.signBytes!, signBytes, timestampField);
      if (ts !== null) {
        await this.withRetry('sign audit log', () => this.audit(height, round, step, lss.signBytes!));
        return { signature: lss.signature!, timestamp: ts };
      }
      throw new PrivValidatorError('PRIVVAL_CONFLICTING_DATA', 'conflicting data');
    }
    const signature = this.key.sign(signBytes);
    const next: LastSignState = { height, round, step, signature, signBytes: Uint8Array.from(signBytes) };
    // Persist first: if this throws, the signature never leaves and the old state stays in force.
    await this.withRetry('priv_validator_state.json', () => this.persist(next));
    this.lss = next;
    // A failed audit line leaves the state saved: a retry of the same H/R/S returns the same
    // signature (the same-HRS path above) and writes the line then.
    await this.withRetry('sign audit log', () => this.audit(height, round, step, next.signBytes!));
    return { signature, timestamp: null };
  }

  /** Runs a write, retrying with back-off; PRIVVAL_PERSIST_FAILED when every attempt failed. */
  private async withRetry(what: string, write: () => Promise<void>): Promise<void> {
    let delay = this.persistBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        return;
      } catch (e) {
        if (attempt >= this.persistAttempts) {
          const code = (e as { code?: unknown }).code;
          const err = new PrivValidatorError(
            'PRIVVAL_PERSIST_FAILED',
            `cannot save ${what} (${attempt} attempts): ${(e as Error).message}`,
          );
          (err as Error & { errno?: unknown }).errno = code;
          (err as Error).cause = e;
          throw err;
        }
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }

  /** The durable writes' thread (FilePV); without one they run on the calling thread. */
  protected writer: DurableWriter | null = null;

  private signLogFdOpen(): number {
    if (this.signLogFd === null) {
      fs.mkdirSync(path.dirname(this.signLogPath!), { recursive: true });
      this.signLogFd = fs.openSync(this.signLogPath!, 'a', 0o600);
    }
    return this.signLogFd;
  }

  private async audit(height: bigint, round: number, step: number, signBytes: Uint8Array): Promise<void> {
    if (this.signLogPath === null) return;
    const line = Buffer.from(JSON.stringify({ height: height.toString(), round, step, signbytes_hex: hexUpper(signBytes) }) + '\n');
    if (this.writer !== null) await this.writer.append(this.signLogPath, line, () => this.signLogFdOpen());
    else appendDurably(this.signLogFdOpen(), line);
  }

  /** Closes the audit log and the writer thread (idempotent). */
  close(): void {
    if (this.signLogFd !== null) {
      fs.closeSync(this.signLogFd);
      this.signLogFd = null;
    }
    void this.writer?.close();
  }
}

/** FilePV: key file + state file, state written atomically before each new signature is returned. */
export class FilePV extends MemoryPrivValidator {
  readonly keyFilePath: string;
  readonly stateFilePath: string;

  private constructor(key: Ed25519PrivKey, lss: LastSignState, keyFilePath: string, stateFilePath: string, opts: PrivValidatorOptions) {
    super(key, lss, opts);
    this.writer = new DurableWriter();
    this.keyFilePath = keyFilePath;
    this.stateFilePath = stateFilePath;
  }

  /** `<home>/config/priv_validator_key.json`, `<home>/data/priv_validator_state.json`. */
  static defaultPaths(home: string): { keyFile: string; stateFile: string } {
    return {
      keyFile: path.join(home, 'config', 'priv_validator_key.json'),
      stateFile: path.join(home, 'data', 'priv_validator_state.json'),
    };
  }

  /** LoadFilePV: both files must exist. */
  static load(keyFile: string, stateFile: string, opts: PrivValidatorOptions = {}): FilePV {
    const key = parsePrivValidatorKey(fs.readFileSync(keyFile, 'utf8'));
    const lss = parseLastSignState(fs.readFileSync(stateFile, 'utf8'));
    return new FilePV(key, lss, keyFile, stateFile, opts);
  }

  /**
   * GenFilePV + Save: a new key (or the given one) and an empty state, both written. Refuses to
   * overwrite an existing key file.
   */
  static generate(
    keyFile: string,
    stateFile: string,
    opts: PrivValidatorOptions & { key?: Ed25519PrivKey; names?: KeyTypeNames } = {},
  ): FilePV {
    if (fs.existsSync(keyFile)) throw new PrivValidatorError('PRIVVAL_BAD_FILE', `${keyFile} already exists`);
    const key = opts.key ?? Ed25519PrivKey.generate();
    fs.mkdirSync(path.dirname(keyFile), { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.dirname(stateFile), { recursive: true, mode: 0o700 });
    writeFileAtomic(keyFile, JSON.stringify(privValidatorKeyJSON(key, opts.names), null, 2));
    const lss = emptyLastSignState();
    if (!fs.existsSync(stateFile)) writeFileAtomic(stateFile, JSON.stringify(lastSignStateJSON(lss), null, 2));
    return FilePV.load(keyFile, stateFile, opts);
  }

  /**
   * LoadOrGenFilePV. A key file without a state file gets a fresh state (as CometBFT's
   * `init` does); an existing state is never reset here.
   */
  static loadOrGenerate(keyFile: string, stateFile: string, opts: PrivValidatorOptions & { names?: KeyTypeNames } = {}): FilePV {
    if (fs.existsSync(keyFile)) {
      if (!fs.existsSync(stateFile)) {
        fs.mkdirSync(path.dirname(stateFile), { recursive: true, mode: 0o700 });
        writeFileAtomic(stateFile, JSON.stringify(lastSignStateJSON(emptyLastSignState()), null, 2));
      }
      return FilePV.load(keyFile, stateFile, opts);
    }
    return FilePV.generate(keyFile, stateFile, opts);
  }

  protected override async persist(lss: LastSignState): Promise<void> {
    const data = JSON.stringify(lastSignStateJSON(lss), null, 2);
    if (this.writer !== null) await this.writer.writeFileAtomic(this.stateFilePath, data);
    else writeFileAtomic(this.stateFilePath, data);
  }

  /** `unsafe-reset-all`: back to height 0 (the operator's decision; the node never calls this). */
  async reset(): Promise<void> {
    const lss = emptyLastSignState();
    writeFileAtomic(this.stateFilePath, JSON.stringify(lastSignStateJSON(lss), null, 2));
    this.lss = lss;
  }
}
