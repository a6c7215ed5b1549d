/**
 * A synchronous interpreter for the common case of eth_call: one frame of plain contract code that
 * only reads (an ERC-20 `balanceOf`, most view functions), over the state manager's synchronous
 * reads. It answers what @ethereumjs/evm's runCall answers for such a call (return data, revert
 * data, error text, gas used), or `undefined` as soon as the code does anything it does not cover;
 * the caller then runs the call again, from scratch, through the library (nothing was written, so
 * that is safe).
 *
 * Why: measured on the call thread (bench/evm-call.bench.ts with a profiler), the library spent
 * ~360 µs CPU on a balanceOf, a third of it in the per-call set-up of runCall/_executeCall/
 * runInterpreter (Message, Interpreter, an 8 KiB Memory, the journal's checkpoints, account
 * objects, result objects spread three times), a third in the interpreter (an awaited runStep
 * with a promise per dynamic-gas opcode), and a tenth in the garbage collector. This loop has none
 * of it: one preallocated stack and memory per engine, one switch.
 *
 * With `writes` (a transaction's top frame, src/evm/fast-tx.ts) SSTORE (EIP-2200 with EIP-2929's and
 * EIP-3529's costs and refunds, the 2300-gas sentry) and LOG0-LOG4 are covered too: the frame's
 * slot writes and logs come back in the result (after a failure or a revert: no logs, the
 * written slots at their original values), with the refund counter, and the caller writes them; reads of a slot written earlier in the frame
 * answer the written value, and a slot's original value is the one the state read first.
 *
 * Covered: STOP, the arithmetic/comparison/bitwise opcodes 0x01-0x1d, KECCAK256, ADDRESS, ORIGIN,
 * CALLER, CALLVALUE, CALLDATALOAD/SIZE/COPY, CODESIZE/COPY, GASPRICE, RETURNDATASIZE (always 0
 * in one frame), TIMESTAMP, NUMBER, GASLIMIT, CHAINID, BASEFEE, POP, MLOAD, MSTORE, MSTORE8,
 * SLOAD (EIP-2929 cold/warm), JUMP, JUMPI, PC, MSIZE, GAS, JUMPDEST, MCOPY, PUSH0-32, DUP, SWAP,
 * RETURN, REVERT, and the invalid opcodes. Everything else (the CALL and CREATE families, SSTORE,
 * LOGs, TLOAD/TSTORE, BALANCE and the other account reads, RETURNDATACOPY, SELFDESTRUCT...) ends
 * the fast run with `undefined`. So do memory past MAX_MEMORY that the gas could pay for, a gas
 * limit past 2^53, EOF or EIP-7702 delegated code, and a fork whose opcode table or gas rules
 * differ from the ones checked here (the table is read from the EVM's own, and each covered
 * opcode's name and static/dynamic gas must match, else it is not covered).
 *
 * Semantics follow the library's handlers (ethereumjs/ethereumjs-monorepo:packages/evm/src/opcodes/
 * functions.ts, gas.ts, interpreter.ts), including which error wins: an opcode with static gas is
 * charged before its stack is checked; one with dynamic gas reads its stack (underflow) before it
 * is charged; an invalid opcode fails before any charge; the error texts are the library's
 * (a bad jump names the code hash, the address and the pc). A failed frame uses all its gas and
 * returns nothing; a REVERT returns its data and the gas it used. test/unit/evm-fast-call.test.ts
 * runs every case both ways.
 */
import type { Common } from '@ethereumjs/common';

export interface FastCallBlock {
  number: bigint;
  timestamp: bigint;
  gasLimit: bigint;
  baseFeePerGas?: bigint | undefined;
}

export interface FastCallInput {
  /** The code at `address` (not a precompile, not a delegation). */
  code: Uint8Array;
  address: Uint8Array;
  caller: Uint8Array;
  origin: Uint8Array;
  data: Uint8Array;
  /** The frame's gas (the call's gas less the intrinsic gas). */
  gasLimit: bigint;
  gasPrice: bigint;
  block: FastCallBlock;
  /** The committed value of a slot of `address` (32-byte key), as the state manager reads it. */
  sload(key: Uint8Array): Uint8Array;
  /** A transaction's top frame: SSTORE and the LOGs are covered, their effects returned. */
  writes?: boolean;
  /** Slots of `address` warm before the frame starts (the tx's access list). */
  warmSlots?: readonly bigint[];
}

/** A log as the library's execResult holds it: address, 32-byte topics, data. */
export type FastLog = [Uint8Array, Uint8Array[], Uint8Array];

/** What runCall's execResult holds for these fields. */
export interface FastCallResult {
  executionGasUsed: bigint;
  returnValue: Uint8Array;
  /** The EVMError's text (`revert`, `out of gas`, ...); absent on success. */
  error?: string;
  /**
   * With `writes`, the slots the frame wrote, to be written to the state: on success at their
   * final values; after a failure or a revert at their original values — the library's journal
   * puts those back, and the slots stay marked written, so the block's changed set is the same.
   */
  storage?: Map<bigint, bigint>;
  /** With `writes`, on success: the logs and the refund counter. */
  logs?: FastLog[];
  gasRefund?: bigint;
}

/**
 * Whether an address is in the precompiles' range (its first 19 bytes zero): 0x01-0x11 run as
 * precompiles whatever the state holds, so a call there is left to the library.
 */
export function inPrecompileRange(address: Uint8Array): boolean {
  let high = 0;
  for (let i = 0; i < 19; i++) high |= address[i]!;
  return high === 0;
}

/** Memory beyond this many bytes is left to the library (when the gas could pay for it). */
const MAX_MEMORY = 1 << 22;
const STACK_LIMIT = 1024;
const EMPTY = new Uint8Array(0);
const MAX_U256 = (1n << 256n) - 1n;

const OOG = 'out of gas';
const UNDERFLOW = 'stack underflow';
const OVERFLOW = 'stack overflow';
const INVALID_OPCODE = 'invalid opcode';
const INVALID_JUMP = 'invalid JUMP';

/** Kinds of opcode in the table. */
const UNCOVERED = 0;
const STATIC = 1;
const DYNAMIC = 2;
const INVALID = 3;

/** The covered opcodes: the library's name for them, and whether their gas is dynamic. */
function coveredOpcodes(): Map<number, [string, boolean]> {
  const m = new Map<number, [string, boolean]>();
  const names: [number, string][] = [
    [0x00, 'STOP'], [0x01, 'ADD'], [0x02, 'MUL'], [0x03, 'SUB'], [0x04, 'DIV'], [0x05, 'SDIV'], [0x06, 'MOD'],
    [0x07, 'SMOD'], [0x08, 'ADDMOD'], [0x09, 'MULMOD'], [0x0b, 'SIGNEXTEND'],
    [0x10, 'LT'], [0x11, 'GT'], [0x12, 'SLT'], [0x13, 'SGT'], [0x14, 'EQ'], [0x15, 'ISZERO'], [0x16, 'AND'],
    [0x17, 'OR'], [0x18, 'XOR'], [0x19, 'NOT'], [0x1a, 'BYTE'], [0x1b, 'SHL'], [0x1c, 'SHR'], [0x1d, 'SAR'],
    [0x30, 'ADDRESS'], [0x32, 'ORIGIN'], [0x33, 'CALLER'], [0x34, 'CALLVALUE'], [0x35, 'CALLDATALOAD'],
    [0x36, 'CALLDATASIZE'], [0x38, 'CODESIZE'], [0x3a, 'GASPRICE'], [0x3d, 'RETURNDATASIZE'],
    [0x42, 'TIMESTAMP'], [0x43, 'NUMBER'], [0x45, 'GASLIMIT'], [0x46, 'CHAINID'], [0x48, 'BASEFEE'],
    [0x50, 'POP'], [0x56, 'JUMP'], [0x57, 'JUMPI'], [0x58, 'PC'], [0x59, 'MSIZE'], [0x5a, 'GAS'], [0x5b, 'JUMPDEST'],
    [0x5f, 'PUSH0'],
  ];
  for (const [op, name] of names) m.set(op, [name, false]);
  const dynamic: [number, string][] = [
    [0x0a, 'EXP'], [0x20, 'KECCAK256'], [0x37, 'CALLDATACOPY'], [0x39, 'CODECOPY'], [0x51, 'MLOAD'],
    [0x52, 'MSTORE'], [0x53, 'MSTORE8'], [0x54, 'SLOAD'], [0x55, 'SSTORE'], [0x5e, 'MCOPY'], [0xf3, 'RETURN'], [0xfd, 'REVERT'],
    [0xa0, 'LOG'], [0xa1, 'LOG'], [0xa2, 'LOG'], [0xa3, 'LOG'], [0xa4, 'LOG'],
  ];
  for (const [op, name] of dynamic) m.set(op, [name, true]);
  for (let i = 0; i < 32; i++) m.set(0x60 + i, ['PUSH', false]);
  for (let i = 0; i < 16; i++) {
    m.set(0x80 + i, ['DUP', false]);
    m.set(0x90 + i, ['SWAP', false]);
  }
  return m;
}

interface OpcodeEntry {
  opcodeInfo: { name: string; feeBigInt: bigint; dynamicGas: boolean; isInvalid: boolean };
}

/** Jump destinations and PUSH values of one code array, computed once (weakly kept). */
interface Analysis {
  jumpdests: Uint8Array;
  /** The value of the PUSH at each pc (undefined elsewhere). */
  pushes: bigint[];
}

const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

export class FastCaller {
  private readonly kind = new Uint8Array(256);
  private readonly fee = new Float64Array(256);
  private readonly analyses = new WeakMap<Uint8Array, Analysis>();
  private readonly stack: bigint[] = new Array<bigint>(STACK_LIMIT).fill(0n);
  private mem = new Uint8Array(4096);
  private memView = new DataView(this.mem.buffer);
  /** How many bytes of `mem` the last run may have written (zeroed before the next). */
  private memDirty = 0;
  private readonly scratch = new Uint8Array(32);
  private readonly scratchView = new DataView(this.scratch.buffer);
  private readonly warm = new Set<bigint>();
  private readonly chainId: bigint;
  private readonly memoryGas: number;
  private readonly quadDiv: number;
  private readonly keccakWordGas: number;
  private readonly copyGas: number;
  private readonly expByteGas: number;
  private readonly coldSload: number;
  private readonly warmRead: number;
  /** EIP-2200's parameters as the fork sets them (EIP-2929 and EIP-3529 change some). */
  private readonly sstore: { sentry: number; noop: number; init: number; clean: number; dirty: number; clearRefund: number; initRefund: number; cleanRefund: number; reset: number };
  private readonly logTopicGas: number;
  private readonly logDataGas: number;

  private constructor(
    opcodeMap: OpcodeEntry[],
    common: Common,
    private readonly keccak: (d: Uint8Array) => Uint8Array,
  ) {
    const covered = coveredOpcodes();
    for (let op = 0; op < 256; op++) {
      const info = opcodeMap[op]?.opcodeInfo;
      if (info === undefined) continue;
      if (info.isInvalid) {
        this.kind[op] = INVALID;
        continue;
      }
      const c = covered.get(op);
      if (c === undefined || c[0] !== info.name || c[1] !== info.dynamicGas) continue;
      this.kind[op] = c[1] ? DYNAMIC : STATIC;
      this.fee[op] = Number(info.feeBigInt);
    }
    const p = (name: string) => Number(common.param(name));
    this.chainId = common.chainId();
    this.memoryGas = p('memoryGas');
    this.quadDiv = p('quadCoefficientDivGas');
    this.keccakWordGas = p('keccak256WordGas');
    this.copyGas = p('copyGas');
    this.expByteGas = p('expByteGas');
    this.coldSload = p('coldsloadGas');
    this.warmRead = p('warmstoragereadGas');
    this.sstore = {
      sentry: p('sstoreSentryEIP2200Gas'),
      noop: p('sstoreNoopEIP2200Gas'),
      init: p('sstoreInitEIP2200Gas'),
      clean: p('sstoreCleanEIP2200Gas'),
      dirty: p('sstoreDirtyEIP2200Gas'),
      clearRefund: p('sstoreClearRefundEIP2200Gas'),
      initRefund: p('sstoreInitRefundEIP2200Gas'),
      cleanRefund: p('sstoreCleanRefundEIP2200Gas'),
      reset: p('sstoreResetGas'),
    };
    this.logTopicGas = p('logTopicGas');
    this.logDataGas = p('logDataGas');
  }

  /**
   * The interpreter for an EVM (its opcode table, its Common's gas parameters and keccak), or
   * undefined when the fork has rules this loop does not follow: no EIP-2929 (cold/warm slots), or
   * EOF (3540), stateless code-chunk gas (6800, 7864), DUPN/SWAPN/EXCHANGE immediates (8024),
   * state gas (8037), block-level access lists (7928), SSTORE's access-gate rules (8038), or a fork
   * before Istanbul's SSTORE rules (EIP-2200).
   */
  static create(evm: unknown, common: Common): FastCaller | undefined {
    const map = (evm as { _opcodeMap?: OpcodeEntry[] })._opcodeMap;
    const keccak = common.customCrypto.keccak256;
    if (!Array.isArray(map) || keccak === undefined) return undefined;
    if (!common.isActivatedEIP(2929) || !common.gteHardfork('istanbul')) return undefined;
    for (const eip of [3540, 6800, 7864, 7928, 8024, 8037, 8038]) if (common.isActivatedEIP(eip)) return undefined;
    return new FastCaller(map, common, keccak);
  }

  private analyse(code: Uint8Array): Analysis {
    let a = this.analyses.get(code);
    if (a !== undefined) return a;
    const jumpdests = new Uint8Array(code.length);
    const pushes: bigint[] = [];
    for (let i = 0; i < code.length; i++) {
      const op = code[i]!;
      if (op === 0x5b) jumpdests[i] = 1;
      else if (op >= 0x60 && op <= 0x7f) {
        const n = op - 0x5f;
        let v = 0n;
        // Bytes past the end of the code read as zero (the library pads on the right).
        for (let j = 1; j <= n; j++) v = (v << 8n) | BigInt(code[i + j] ?? 0);
        pushes[i] = v;
        i += n;
      }
    }
    a = { jumpdests, pushes };
    this.analyses.set(code, a);
    return a;
  }

  /** Makes `mem` hold at least `size` bytes (zeros past what was there). */
  private grow(size: number): void {
    if (size <= this.mem.length) return;
    let n = this.mem.length;
    while (n < size) n *= 2;
    const m = new Uint8Array(n);
    m.set(this.mem.subarray(0, this.memDirty));
    this.mem = m;
    this.memView = new DataView(m.buffer);
  }

  /** The 32-byte word at `off` of `view` as a bigint. */
  private static word(view: DataView, off: number): bigint {
    return (view.getBigUint64(off) << 192n) | (view.getBigUint64(off + 8) << 128n) | (view.getBigUint64(off + 16) << 64n) | view.getBigUint64(off + 24);
  }

  private static putWord(view: DataView, off: number, x: bigint): void {
    view.setBigUint64(off, x >> 192n);
    view.setBigUint64(off + 8, x >> 128n);
    view.setBigUint64(off + 16, x >> 64n);
    view.setBigUint64(off + 24, x);
  }

  /** Up to 32 bytes as a big-endian number. */
  private bytesToBig(b: Uint8Array): bigint {
    if (b.length === 0) return 0n;
    const s = this.scratch;
    s.fill(0);
    s.set(b.length > 32 ? b.subarray(b.length - 32) : b, 32 - Math.min(32, b.length));
    return FastCaller.word(this.scratchView, 0);
  }

  /** A 256-bit word as 32 big-endian bytes, a fresh array (a slot key the state manager may keep, a log topic). */
  static wordBytes(x: bigint): Uint8Array {
    const out = new Uint8Array(32);
    FastCaller.putWord(new DataView(out.buffer), 0, x);
    return out;
  }

  /**
   * Runs the call, or returns undefined if it needs anything not covered here (then nothing has
   * been written anywhere: the caller runs it through the library).
   */
  run(input: FastCallInput): FastCallResult | undefined {
    const gasLimit = input.gasLimit;
    if (gasLimit > BigInt(Number.MAX_SAFE_INTEGER) || gasLimit < 0n) return undefined;
    const code = input.code;
    if (code.length === 0 || code[0] === 0xef) return undefined;
    const { jumpdests, pushes } = this.analyse(code);
    const kind = this.kind;
    const fee = this.fee;
    const stack = this.stack;
    const data = input.data;
    const len = code.length;
    const warm = this.warm;
    warm.clear();
    if (this.memDirty > 0) this.mem.fill(0, 0, this.memDirty);
    this.memDirty = 0;
    let gas = Number(gasLimit);
    let sp = 0;
    let pc = 0;
    /** Memory size in words, as the gas counts it (MSIZE). */
    let words = 0;
    let memCost = 0;
    const writes = input.writes === true;
    if (input.warmSlots !== undefined) for (const k of input.warmSlots) warm.add(k);
    /** With `writes`: slots written in this frame (current values), slots read (original values). */
    const written = writes ? new Map<bigint, bigint>() : undefined;
    const original = writes ? new Map<bigint, bigint>() : undefined;
    /**
     * A failed or reverted frame: with `writes`, the slots it wrote go back at their original
     * values (see FastCallResult.storage).
     */
    const failed = (executionGasUsed: bigint, returnValue: Uint8Array, error: string): FastCallResult => {
      if (written === undefined || written.size === 0) return { executionGasUsed, returnValue, error };
      const storage = new Map<bigint, bigint>();
      for (const k of written.keys()) storage.set(k, original!.get(k)!);
      return { executionGasUsed, returnValue, error, storage };
    };
    const fail = (error: string): FastCallResult => failed(gasLimit, EMPTY, error);
    const logs: FastLog[] = [];
    let refund = 0;
    /** A slot's value before this frame (read once). */
    const originalOf = (key: bigint): bigint => {
      let v = original!.get(key);
      if (v === undefined) {
        v = this.bytesToBig(input.sload(FastCaller.wordBytes(key)));
        original!.set(key, v);
      }
      return v;
    };
    /** STOP, RETURN, or the code's end: what the frame leaves. */
    const done = (returnValue: Uint8Array): FastCallResult => {
      const used = gasLimit - BigInt(gas);
      return written === undefined ? { executionGasUsed: used, returnValue } : { executionGasUsed: used, returnValue, storage: written, logs, gasRefund: BigInt(refund) };
    };
    /**
     * The gas to grow memory to cover [offset, offset + length) (0 when length is 0 or it is
     * covered), updating the size; -1 when no gas this run has could pay for it (out of gas),
     * -2 when it could but is past MAX_MEMORY (not covered).
     */
    const expand = (offset: bigint, length: bigint): number => {
      if (length === 0n) return 0;
      const end = offset + length;
      if (end > BigInt(MAX_MEMORY)) {
        const w = (end + 31n) / 32n;
        const c = w * BigInt(this.memoryGas) + (w * w) / BigInt(this.quadDiv) - BigInt(memCost);
        return c > BigInt(gas) ? -1 : -2;
      }
      const w = Math.ceil(Number(end) / 32);
      if (w <= words) return 0;
      const total = w * this.memoryGas + Math.floor((w * w) / this.quadDiv);
      const c = total - memCost;
      memCost = total;
      words = w;
      return c;
    };
    /** 32-byte words covering `length` bytes: what the per-word charges (hashing, copies) count. */
    const wordsOf = (length: bigint): number => Number((length + 31n) / 32n);
    /** [offset, offset + length) of `mem`, already paid for by expand(): as numbers, allocated. */
    const memWindow = (offset: bigint, length: bigint): [number, number] => {
      const o = Number(offset);
      const n = Number(length);
      const end = o + n;
      this.grow(end);
      if (end > this.memDirty) this.memDirty = end;
      return [o, n];
    };

    for (;;) {
      if (pc >= len) return done(EMPTY);
      const op = code[pc]!;
      const k = kind[op]!;
      if (k === STATIC) {
        gas -= fee[op]!;
        if (gas < 0) return fail(OOG);
      } else if (k !== DYNAMIC) {
        if (k === INVALID) return fail(INVALID_OPCODE);
        return undefined;
      }
      if (op >= 0x60 && op <= 0x7f) {
        if (sp >= STACK_LIMIT) return fail(OVERFLOW);
        stack[sp++] = pushes[pc]!;
        pc += op - 0x5e;
        continue;
      }
      if (op >= 0x80 && op <= 0x8f) {
        const n = op - 0x7f;
        if (sp < n) return fail(UNDERFLOW);
        if (sp >= STACK_LIMIT) return fail(OVERFLOW);
        stack[sp] = stack[sp - n]!;
        sp++;
        pc++;
        continue;
      }
      if (op >= 0x90 && op <= 0x9f) {
        const n = op - 0x8f;
        if (sp <= n) return fail(UNDERFLOW);
        const top = stack[sp - 1]!;
        stack[sp - 1] = stack[sp - 1 - n]!;
        stack[sp - 1 - n] = top;
        pc++;
        continue;
      }
      pc++;
      switch (op) {
        case 0x00:
          return done(EMPTY);
        case 0x01:
        case 0x02:
        case 0x03:
        case 0x04:
        case 0x05:
        case 0x06:
        case 0x07:
        case 0x10:
        case 0x11:
        case 0x12:
        case 0x13:
        case 0x14:
        case 0x16:
        case 0x17:
        case 0x18:
        case 0x1a:
        case 0x1b:
        case 0x1c:
        case 0x1d: {
          if (sp < 2) return fail(UNDERFLOW);
          const a = stack[--sp]!;
          const b = stack[sp - 1]!;
          stack[sp - 1] = binary(op, a, b);
          break;
        }
        case 0x08:
        case 0x09: {
          if (sp < 3) return fail(UNDERFLOW);
          const a = stack[sp - 1]!;
          const b = stack[sp - 2]!;
          const n = stack[sp - 3]!;
          sp -= 2;
          stack[sp - 1] = n === 0n ? 0n : op === 0x08 ? (a + b) % n : (a * b) % n;
          break;
        }
        case 0x0a: {
          if (sp < 2) return fail(UNDERFLOW);
          let base = stack[sp - 1]!;
          let exp = stack[sp - 2]!;
          let c = fee[op]!;
          if (exp !== 0n) c += Math.ceil(exp.toString(2).length / 8) * this.expByteGas;
          gas -= c;
          if (gas < 0) return fail(OOG);
          sp--;
          let r = 1n;
          while (exp > 0n) {
            if (exp & 1n) r = (r * base) & MAX_U256;
            base = (base * base) & MAX_U256;
            exp >>= 1n;
          }
          stack[sp - 1] = r;
          break;
        }
        case 0x0b: {
          if (sp < 2) return fail(UNDERFLOW);
          const kk = stack[--sp]!;
          const v = stack[sp - 1]!;
          if (kk < 31n) {
            const bit = kk * 8n + 7n;
            const mask = (1n << bit) - 1n;
            stack[sp - 1] = (v >> bit) & 1n ? v | (MAX_U256 ^ mask) : v & mask;
          }
          break;
        }
        case 0x15:
          if (sp < 1) return fail(UNDERFLOW);
          stack[sp - 1] = stack[sp - 1] === 0n ? 1n : 0n;
          break;
        case 0x19:
          if (sp < 1) return fail(UNDERFLOW);
          stack[sp - 1] = MAX_U256 ^ stack[sp - 1]!;
          break;
        case 0x20: {
          if (sp < 2) return fail(UNDERFLOW);
          const offset = stack[sp - 1]!;
          const length = stack[sp - 2]!;
          const m = expand(offset, length);
          if (m === -2) return undefined;
          if (m === -1) return fail(OOG);
          // Past expand(), a non-zero length is below MAX_MEMORY.
          gas -= fee[op]! + m + this.keccakWordGas * wordsOf(length);
          if (gas < 0) return fail(OOG);
          sp--;
          let h: Uint8Array;
          if (length === 0n) h = this.keccak(EMPTY);
          else {
            const [o, n] = memWindow(offset, length);
            h = this.keccak(this.mem.subarray(o, o + n));
          }
          stack[sp - 1] = this.bytesToBig(h);
          break;
        }
        case 0x30:
        case 0x32:
        case 0x33:
        case 0x34:
        case 0x36:
        case 0x38:
        case 0x3a:
        case 0x3d:
        case 0x42:
        case 0x43:
        case 0x45:
        case 0x46:
        case 0x48:
        case 0x58:
        case 0x59:
        case 0x5a:
        case 0x5f: {
          if (sp >= STACK_LIMIT) return fail(OVERFLOW);
          let v: bigint;
          switch (op) {
            case 0x30:
              v = this.bytesToBig(input.address);
              break;
            case 0x32:
              v = this.bytesToBig(input.origin);
              break;
            case 0x33:
              v = this.bytesToBig(input.caller);
              break;
            case 0x36:
              v = BigInt(data.length);
              break;
            case 0x38:
              v = BigInt(len);
              break;
            case 0x3a:
              v = input.gasPrice;
              break;
            case 0x42:
              v = input.block.timestamp;
              break;
            case 0x43:
              v = input.block.number;
              break;
            case 0x45:
              v = input.block.gasLimit;
              break;
            case 0x46:
              v = this.chainId;
              break;
            case 0x48:
              // The library throws a plain error for a block without a base fee.
              if (input.block.baseFeePerGas === undefined) return undefined;
              v = input.block.baseFeePerGas;
              break;
            case 0x58:
              v = BigInt(pc - 1);
              break;
            case 0x59:
              v = BigInt(words * 32);
              break;
            case 0x5a:
              v = BigInt(gas);
              break;
            default:
              // CALLVALUE (this path runs calls without value), RETURNDATASIZE (no inner call), PUSH0
              v = 0n;
          }
          stack[sp++] = v;
          break;
        }
        case 0x35: {
          if (sp < 1) return fail(UNDERFLOW);
          const pos = stack[sp - 1]!;
          if (pos >= BigInt(data.length)) stack[sp - 1] = 0n;
          else {
            const i = Number(pos);
            const s = this.scratch;
            s.fill(0);
            s.set(data.subarray(i, i + 32), 0);
            stack[sp - 1] = FastCaller.word(this.scratchView, 0);
          }
          break;
        }
        case 0x37:
        case 0x39: {
          if (sp < 3) return fail(UNDERFLOW);
          const memOffset = stack[sp - 1]!;
          const srcOffset = stack[sp - 2]!;
          const length = stack[sp - 3]!;
          const m = expand(memOffset, length);
          if (m === -2) return undefined;
          if (m === -1) return fail(OOG);
          gas -= fee[op]! + m + this.copyGas * wordsOf(length);
          if (gas < 0) return fail(OOG);
          sp -= 3;
          if (length !== 0n) {
            const src = op === 0x37 ? data : code;
            const [o, n] = memWindow(memOffset, length);
            const from = srcOffset > BigInt(src.length) ? src.length : Number(srcOffset);
            const part = src.subarray(from, Math.min(src.length, from + n));
            this.mem.set(part, o);
            this.mem.fill(0, o + part.length, o + n);
          }
          break;
        }
        case 0x50:
          if (sp < 1) return fail(UNDERFLOW);
          sp--;
          break;
        case 0x51:
        case 0x52:
        case 0x53: {
          // The gas handler peeks one word (underflow before any charge); MSTORE's second word is
          // popped after the charge.
          if (sp < 1) return fail(UNDERFLOW);
          const offset = stack[sp - 1]!;
          const size = op === 0x53 ? 1n : 32n;
          const m = expand(offset, size);
          if (m === -2) return undefined;
          if (m === -1) return fail(OOG);
          gas -= fee[op]! + m;
          if (gas < 0) return fail(OOG);
          if (op !== 0x51 && sp < 2) return fail(UNDERFLOW);
          const [o] = memWindow(offset, size);
          if (op === 0x51) stack[sp - 1] = FastCaller.word(this.memView, o);
          else {
            const v = stack[sp - 2]!;
            sp -= 2;
            if (op === 0x52) FastCaller.putWord(this.memView, o, v);
            else this.mem[o] = Number(v & 0xffn);
          }
          break;
        }
        case 0x54: {
          if (sp < 1) return fail(UNDERFLOW);
          const key = stack[sp - 1]!;
          const cold = !warm.has(key);
          if (cold) warm.add(key);
          gas -= fee[op]! + (cold ? this.coldSload : this.warmRead);
          if (gas < 0) return fail(OOG);
          if (written === undefined) stack[sp - 1] = this.bytesToBig(input.sload(FastCaller.wordBytes(key)));
          else {
            const w = written.get(key);
            stack[sp - 1] = w !== undefined ? w : originalOf(key);
          }
          break;
        }
        case 0x55: {
          // The library's gas handler: stack (peeked), the current and original values, the
          // sentry, EIP-2200's cost and refunds with EIP-2929's warm adjustments (read before the
          // slot is warmed), then the cold charge and the warming.
          if (written === undefined) return undefined;
          if (sp < 2) return fail(UNDERFLOW);
          const key = stack[sp - 1]!;
          const val = stack[sp - 2]!;
          const orig = originalOf(key);
          const w = written.get(key);
          const cur = w !== undefined ? w : orig;
          const t = this.sstore;
          if (gas <= t.sentry) return fail(OOG);
          const wasWarm = warm.has(key);
          let c: number;
          if (cur === val) c = wasWarm ? this.warmRead : t.noop;
          else if (orig === cur) {
            if (orig === 0n) c = t.init;
            else {
              if (val === 0n) refund += t.clearRefund;
              c = t.clean;
            }
          } else {
            if (orig !== 0n) {
              if (cur === 0n) {
                refund -= t.clearRefund;
                // The library traps with `refund exhausted`: left to it.
                if (refund < 0) return undefined;
              } else if (val === 0n) refund += t.clearRefund;
            }
            if (orig === val) {
              if (orig === 0n) refund += wasWarm ? t.init - this.warmRead : t.initRefund;
              else refund += wasWarm ? t.reset - this.coldSload - this.warmRead : t.cleanRefund;
            }
            c = t.dirty;
          }
          if (!wasWarm) {
            warm.add(key);
            c += this.coldSload;
          }
          gas -= fee[op]! + c;
          if (gas < 0) return fail(OOG);
          sp -= 2;
          written.set(key, val);
          break;
        }
        case 0xa0:
        case 0xa1:
        case 0xa2:
        case 0xa3:
        case 0xa4: {
          // The gas handler peeks offset and length; the topics are popped after the charge.
          if (written === undefined) return undefined;
          if (sp < 2) return fail(UNDERFLOW);
          const offset = stack[sp - 1]!;
          const length = stack[sp - 2]!;
          const topicCount = op - 0xa0;
          const m = expand(offset, length);
          if (m === -2) return undefined;
          if (m === -1) return fail(OOG);
          // Past expand(), a non-zero length is below MAX_MEMORY.
          gas -= fee[op]! + m + this.logTopicGas * topicCount + Number(length) * this.logDataGas;
          if (gas < 0) return fail(OOG);
          if (sp < 2 + topicCount) return fail(UNDERFLOW);
          sp -= 2;
          const topics: Uint8Array[] = [];
          for (let i = 0; i < topicCount; i++) topics.push(FastCaller.wordBytes(stack[--sp]!));
          let bytes = new Uint8Array(0);
          if (length !== 0n) {
            const [o, n] = memWindow(offset, length);
            bytes = this.mem.slice(o, o + n);
          }
          logs.push([input.address, topics, bytes]);
          break;
        }
        case 0x56:
        case 0x57: {
          if (sp < (op === 0x56 ? 1 : 2)) return fail(UNDERFLOW);
          const dest = stack[--sp]!;
          if (op === 0x57 && stack[--sp] === 0n) break;
          if (dest >= BigInt(len) || jumpdests[Number(dest)] !== 1) {
            return fail(`${INVALID_JUMP} at 0x${toHex(this.keccak(code))}/0x${toHex(input.address)}:${pc - 1}`);
          }
          pc = Number(dest);
          break;
        }
        case 0x5b:
          break;
        case 0x5e: {
          if (sp < 3) return fail(UNDERFLOW);
          const dst = stack[sp - 1]!;
          const src = stack[sp - 2]!;
          const length = stack[sp - 3]!;
          // As the library's gas handler: the source's expansion, then the destination's.
          const ms = expand(src, length);
          if (ms === -2) return undefined;
          if (ms === -1) return fail(OOG);
          const md = expand(dst, length);
          if (md === -2) return undefined;
          if (md === -1) return fail(OOG);
          gas -= fee[op]! + this.copyGas * wordsOf(length) + ms + md;
          if (gas < 0) return fail(OOG);
          sp -= 3;
          if (length !== 0n) {
            const [s, n] = memWindow(src, length);
            const [d] = memWindow(dst, length);
            this.mem.copyWithin(d, s, s + n);
          }
          break;
        }
        case 0xf3:
        case 0xfd: {
          if (sp < 2) return fail(UNDERFLOW);
          const offset = stack[sp - 1]!;
          const length = stack[sp - 2]!;
          const m = expand(offset, length);
          if (m === -2) return undefined;
          if (m === -1) return fail(OOG);
          gas -= fee[op]! + m;
          if (gas < 0) return fail(OOG);
          let out = EMPTY;
          if (length !== 0n) {
            const [o, n] = memWindow(offset, length);
            out = this.mem.slice(o, o + n);
          }
          return op === 0xf3 ? done(out) : failed(gasLimit - BigInt(gas), out, 'revert');
        }
        default:
          return undefined;
      }
    }
  }
}

/** The two-operand opcodes: `a` is the top of the stack, `b` the next. */
function binary(op: number, a: bigint, b: bigint): bigint {
  switch (op) {
    case 0x01:
      return (a + b) & MAX_U256;
    case 0x02:
      return (a * b) & MAX_U256;
    case 0x03:
      return (a - b) & MAX_U256;
    case 0x04:
      return b === 0n ? 0n : a / b;
    case 0x05:
      return b === 0n ? 0n : BigInt.asUintN(256, BigInt.asIntN(256, a) / BigInt.asIntN(256, b));
    case 0x06:
      return b === 0n ? 0n : a % b;
    case 0x07:
      return b === 0n ? 0n : BigInt.asUintN(256, BigInt.asIntN(256, a) % BigInt.asIntN(256, b));
    case 0x10:
      return a < b ? 1n : 0n;
    case 0x11:
      return a > b ? 1n : 0n;
    case 0x12:
      return BigInt.asIntN(256, a) < BigInt.asIntN(256, b) ? 1n : 0n;
    case 0x13:
      return BigInt.asIntN(256, a) > BigInt.asIntN(256, b) ? 1n : 0n;
    case 0x14:
      return a === b ? 1n : 0n;
    case 0x16:
      return a & b;
    case 0x17:
      return a | b;
    case 0x18:
      return a ^ b;
    case 0x1a:
      return a >= 32n ? 0n : (b >> ((31n - a) * 8n)) & 0xffn;
    case 0x1b:
      return a >= 256n ? 0n : (b << a) & MAX_U256;
    case 0x1c:
      return a >= 256n ? 0n : b >> a;
    default: {
      // SAR
      const neg = b >> 255n === 1n;
      if (a >= 256n) return neg ? MAX_U256 : 0n;
      return BigInt.asUintN(256, BigInt.asIntN(256, b) >> a);
    }
  }
}
