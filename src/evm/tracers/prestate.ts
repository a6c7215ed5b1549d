/**
 * geth's prestateTracer (ethereum/go-ethereum:eth/tracers/native/prestate.go, gen_account_json.go):
 * every account and slot the tx touches, as it was before the tx — `{addr: {balance, code?,
 * codeHash?, nonce?, storage?}}`, nonce a JSON number omitted when 0, code and codeHash omitted
 * for accounts without code, storage omitted when empty; empty accounts dropped unless
 * includeEmpty. Touched: sender, recipient (or the created address), coinbase, EIP-7702
 * authorities and delegation targets, and per opcode the slots of SLOAD/SSTORE, the targets of
 * BALANCE, EXTCODE*, SELFDESTRUCT and the CALL family, the addresses of CREATE/CREATE2.
 *
 * diffMode: `{post, pre}` — post holds what changed (new balance, nonce, code, codeHash, the
 * non-zero new slot values), pre only the accounts that changed, without unchanged slots and
 * zero ones; self-destructed accounts (created in the same tx, EIP-6780) only in pre. Config:
 * diffMode, disableCode, disableStorage, includeEmpty (with diffMode: geth's error).
 *
 * Each value is read when first touched (before the op runs): the state reads make OnOpcode
 * asynchronous here, which the driver waits for.
 */
import { keccak_256 as keccak256 } from '@noble/hashes/sha3.js';
import { createAddress } from './driver.js';
import type { OpStep, StateReader, Tracer, TxContext } from './types.js';
import { TracerError, addressOf, bytesEqual, hex, qty, wordBytes } from './types.js';

export interface PrestateConfig {
  diffMode?: boolean;
  disableCode?: boolean;
  disableStorage?: boolean;
  includeEmpty?: boolean;
}

const EMPTY_CODE_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';
const ZERO_WORD = `0x${'0'.repeat(64)}`;

interface Account {
  balance: bigint;
  nonce: bigint;
  code: Uint8Array | undefined;
  codeHash: string | undefined;
  storage: Map<string, string> | undefined;
  empty: boolean;
  address: Uint8Array;
}

/** A 7702 delegation designator: 0xef0100 ‖ address. */
function delegation(code: Uint8Array): Uint8Array | undefined {
  return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00 ? code.subarray(3) : undefined;
}

export class PrestateTracer implements Tracer {
  readonly steps = true;
  readonly asyncSteps = true;
  private readonly pre = new Map<string, Account>();
  private readonly post = new Map<string, Record<string, unknown>>();
  private readonly created = new Set<string>();
  private readonly deleted = new Set<string>();

  constructor(private readonly cfg: PrestateConfig = {}) {
    if (cfg.diffMode && cfg.includeEmpty) throw new TracerError('cannot use diffMode with includeEmpty');
  }

  private async lookupAccount(st: StateReader, addr: Uint8Array): Promise<void> {
    const key = hex(addr);
    if (this.pre.has(key)) return;
    // Reserve the key first: a second touch while this read is under way does not read again.
    const a = await st.account(addr);
    if (this.pre.has(key)) return;
    const code = a?.code ?? new Uint8Array(0);
    const codeHash = a === undefined ? undefined : hex(a.codeHash);
    const acc: Account = {
      balance: a?.balance ?? 0n,
      nonce: a?.nonce ?? 0n,
      code: code.length > 0 && !this.cfg.disableCode ? code : undefined,
      codeHash: codeHash !== undefined && codeHash !== EMPTY_CODE_HASH && codeHash !== ZERO_WORD ? codeHash : undefined,
      storage: this.cfg.disableStorage ? undefined : new Map(),
      empty: false,
      address: Uint8Array.from(addr),
    };
    acc.empty = !(acc.nonce > 0n || code.length > 0 || acc.balance !== 0n);
    this.pre.set(key, acc);
  }

  private async lookupStorage(st: StateReader, addr: Uint8Array, slot: Uint8Array): Promise<void> {
    if (this.cfg.disableStorage) return;
    const acc = this.pre.get(hex(addr));
    if (acc === undefined) {
      await this.lookupAccount(st, addr);
      return this.lookupStorage(st, addr, slot);
    }
    const k = hex(slot);
    if (acc.storage!.has(k)) return;
    const v = hex(await st.storage(addr, slot));
    if (!acc.storage!.has(k)) acc.storage!.set(k, v);
  }

  async onTxStart(tx: TxContext, st: StateReader): Promise<void> {
    let to: Uint8Array;
    if (tx.to === undefined) {
      to = tx.created ?? createAddress(tx.from, tx.nonce);
      this.created.add(hex(to));
    } else {
      to = tx.to;
      const code = (await st.account(to))?.code;
      const target = code === undefined ? undefined : delegation(code);
      if (target !== undefined) await this.lookupAccount(st, target);
    }
    await this.lookupAccount(st, tx.from);
    await this.lookupAccount(st, to);
    await this.lookupAccount(st, tx.coinbase);
    for (const a of tx.authorities) await this.lookupAccount(st, a);
  }

  async onOpcode(s: OpStep, st: StateReader): Promise<void> {
    // geth skips a step that fails before it runs (OnOpcode with an error).
    if (s.error !== undefined) return;
    const stack = s.stack;
    const n = stack.length;
    const op = s.op;
    if ((op === 0x54 || op === 0x55) && n >= 1) {
      await this.lookupStorage(st, s.address, wordBytes(stack[n - 1]!));
    } else if ((op === 0x3c || op === 0x3f || op === 0x3b || op === 0x31 || op === 0xff) && n >= 1) {
      await this.lookupAccount(st, addressOf(stack[n - 1]!));
      if (op === 0xff && this.created.has(hex(s.address))) this.deleted.add(hex(s.address));
    } else if ((op === 0xf4 || op === 0xf1 || op === 0xfa || op === 0xf2) && n >= 5) {
      const addr = addressOf(stack[n - 2]!);
      await this.lookupAccount(st, addr);
      const code = (await st.account(addr))?.code;
      const target = code === undefined ? undefined : delegation(code);
      if (target !== undefined) await this.lookupAccount(st, target);
    } else if (op === 0xf0) {
      const nonce = (await st.account(s.address))?.nonce ?? 0n;
      const addr = createAddress(s.address, nonce);
      await this.lookupAccount(st, addr);
      this.created.add(hex(addr));
    } else if (op === 0xf5 && n >= 4) {
      const offset = Number(stack[n - 2]!);
      const size = Number(stack[n - 3]!);
      const init = new Uint8Array(size);
      if (offset < s.memory.length) init.set(s.memory.subarray(offset, Math.min(s.memory.length, offset + size)));
      const salt = wordBytes(stack[n - 4]!);
      const h = keccak256(Uint8Array.from([0xff, ...s.address, ...salt, ...keccak256(init)]));
      const addr = h.subarray(12);
      await this.lookupAccount(st, addr);
      this.created.add(hex(addr));
    }
  }

  async onTxEnd(_end: unknown, st: StateReader): Promise<void> {
    if (this.cfg.diffMode) await this.diff(st);
    if (this.cfg.includeEmpty) return;
    for (const [k, a] of this.pre) if (a.empty) this.pre.delete(k);
  }

  private async diff(st: StateReader): Promise<void> {
    for (const [key, acc] of this.pre) {
      if (this.deleted.has(key)) continue;
      let modified = false;
      const post: Record<string, unknown> = {};
      const now = await st.account(acc.address);
      const balance = now?.balance ?? 0n;
      const nonce = now?.nonce ?? 0n;
      const codeHash = now === undefined ? ZERO_WORD : hex(now.codeHash);
      if (balance !== acc.balance) {
        modified = true;
        post.balance = balance;
      }
      if (nonce !== acc.nonce) {
        modified = true;
        post.nonce = nonce;
      }
      const prevHash = acc.codeHash ?? EMPTY_CODE_HASH;
      // geth compares with GetCodeHash, which is zero for an account that does not exist.
      if (codeHash !== prevHash && !(now === undefined && acc.codeHash === undefined)) {
        modified = true;
        post.codeHash = codeHash;
      }
      if (!this.cfg.disableCode) {
        const code = now?.code ?? new Uint8Array(0);
        if (!bytesEqual(code, acc.code ?? new Uint8Array(0))) {
          modified = true;
          post.code = code;
        }
      }
      if (!this.cfg.disableStorage && acc.storage !== undefined) {
        const slots = new Map<string, string>();
        for (const [k, v] of [...acc.storage]) {
          if (v === ZERO_WORD) acc.storage.delete(k);
          const nv = hex(await st.storage(acc.address, hexBytes(k)));
          if (nv === v) acc.storage.delete(k);
          else {
            modified = true;
            if (nv !== ZERO_WORD) slots.set(k, nv);
          }
        }
        if (slots.size > 0) post.storage = slots;
      }
      if (modified) this.post.set(key, post);
      else this.pre.delete(key);
    }
  }

  result(): unknown {
    const pre = stateJson([...this.pre].map(([k, a]) => [k, { balance: a.balance, code: a.code, codeHash: a.codeHash, nonce: a.nonce, storage: a.storage }]));
    if (!this.cfg.diffMode) return pre;
    return { post: stateJson([...this.post].map(([k, p]) => [k, p as AccountJson])), pre };
  }
}

interface AccountJson {
  balance?: bigint;
  code?: Uint8Array;
  codeHash?: string;
  nonce?: bigint;
  storage?: Map<string, string>;
}

function stateJson(entries: [string, AccountJson][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, a] of entries.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const o: Record<string, unknown> = {};
    if (a.balance !== undefined) o.balance = qty(a.balance);
    if (a.code !== undefined) o.code = hex(a.code);
    if (a.codeHash !== undefined) o.codeHash = a.codeHash;
    if (a.nonce !== undefined && a.nonce !== 0n) o.nonce = Number(a.nonce);
    if (a.storage !== undefined && a.storage.size > 0) {
      o.storage = Object.fromEntries([...a.storage].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    }
    out[k] = o;
  }
  return out;
}

function hexBytes(h: string): Uint8Array {
  return Uint8Array.from(Buffer.from(h.slice(2), 'hex'));
}
