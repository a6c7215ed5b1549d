/**
 * geth's struct logger, the default tracer (ethereum/go-ethereum:eth/tracers/logger/logger.go):
 * `{gas, failed, returnValue, structLogs}`, one entry per opcode with `pc, op, gas, gasCost,
 * depth, error?, stack?, returnData?, memory?, storage?, refund?` (geth's structLogLegacy, in that
 * key order). Options (logger.Config): disableStack, disableStorage, enableMemory,
 * enableReturnData, limit (geth: entries stop once the text written exceeds `limit` bytes).
 *
 * Storage is geth's: on SLOAD and SSTORE, the contract's slots touched so far in the tx, SLOAD
 * with the value read, SSTORE with the value written. The value an SLOAD reads is the top of the
 * stack at the frame's next step, so the SLOAD entry is written then.
 *
 * Entries are JSON text from the start (raw-json.ts): the result is their list of parts, never an
 * object graph of 100,000 entries to clone and stringify again, nor one string unless a buffered
 * answer needs it (a single HTTP request streams the parts to its socket).
 */
import { RawJson } from './raw-json.js';
import type { OpStep, Tracer, TxEnd } from './types.js';
import { hex, wordOf } from './types.js';

export interface StructLoggerConfig {
  disableStack?: boolean;
  disableStorage?: boolean;
  enableMemory?: boolean;
  enableReturnData?: boolean;
  limit?: number;
}

interface Entry {
  step: { pc: number; opName: string; gas: bigint; cost: bigint; depth: number; refund: bigint };
  stack: string | undefined;
  memory: string | undefined;
  returnData: string | undefined;
  storage: Map<string, string> | undefined;
  error: string | undefined;
  /** An SLOAD waiting for its value: [slot, depth]. */
  sload?: string;
}

function memoryText(m: Uint8Array): string | undefined {
  if (m.length === 0) return undefined;
  const words: string[] = [];
  for (let i = 0; i < m.length; i += 32) {
    const w = m.subarray(i, i + 32);
    words.push(`"${w.length === 32 ? hex(w) : hex(Uint8Array.from([...w, ...new Uint8Array(32 - w.length)]))}"`);
  }
  return `[${words.join(',')}]`;
}

function stackText(s: bigint[]): string {
  let out = '[';
  for (let i = 0; i < s.length; i++) out += `${i === 0 ? '' : ','}"0x${s[i]!.toString(16)}"`;
  return `${out}]`;
}

/** Entries joined into one flat string at a time. */
const ENTRIES_PER_BLOCK = 256;

export class StructLogger implements Tracer {
  readonly steps = true;
  private readonly cfg: StructLoggerConfig;
  /** Blocks of ENTRIES_PER_BLOCK entries, each one flat string (see flush). */
  private readonly entries: string[] = [];
  /** The entries of the block being filled. */
  private block: string[] = [];
  private size = 0;
  private pending: Entry | undefined;
  private readonly storage = new Map<string, Map<string, string>>();
  private end: TxEnd | undefined;
  private output: Uint8Array = new Uint8Array(0);
  private error: string | undefined;
  private count = 0;

  constructor(cfg: StructLoggerConfig = {}) {
    this.cfg = cfg;
  }

  /** Entries written so far. */
  get length(): number {
    return this.count;
  }

  onOpcode(s: OpStep): void {
    const p = this.pending;
    if (p !== undefined) {
      if (p.sload !== undefined && s.depth === p.step.depth && s.stack.length > 0) {
        p.storage!.set(p.sload, wordOf(s.stack[s.stack.length - 1]!));
      }
      this.flush();
    }
    const limit = this.cfg.limit ?? 0;
    if (limit !== 0 && this.size > limit) return;
    const e: Entry = {
      step: { pc: s.pc, opName: s.opName, gas: s.gas, cost: s.cost, depth: s.depth, refund: s.refund },
      stack: this.cfg.disableStack ? undefined : stackText(s.stack),
      memory: this.cfg.enableMemory ? memoryText(s.memory) : undefined,
      returnData: this.cfg.enableReturnData && s.returnData.length > 0 ? hex(s.returnData) : undefined,
      storage: undefined,
      error: s.error,
    };
    if (!this.cfg.disableStorage && (s.op === 0x54 || s.op === 0x55)) {
      const key = hex(s.address);
      let m = this.storage.get(key);
      if (m === undefined) this.storage.set(key, (m = new Map()));
      const st = s.stack;
      if (s.op === 0x54 && st.length >= 1) {
        const slot = wordOf(st[st.length - 1]!);
        e.sload = slot;
        // The value is the stack top at the next step; until then the slot's last known value.
        if (!m.has(slot)) m.set(slot, wordOf(0n));
        e.storage = m;
      } else if (s.op === 0x55 && st.length >= 2) {
        m.set(wordOf(st[st.length - 1]!), wordOf(st[st.length - 2]!));
        e.storage = new Map(m);
      }
    }
    this.pending = e;
  }

  onFault(depth: number, error: string): void {
    if (this.pending !== undefined && this.pending.step.depth === depth) this.pending.error = error;
  }

  onExit(x: { depth: number; output: Uint8Array; error: string | undefined }): void {
    if (x.depth !== 0) return;
    this.output = x.output;
    this.error = x.error;
  }

  onTxEnd(end: TxEnd): void {
    this.flush();
    this.end = end;
    if (end.error !== undefined && this.error === undefined) this.error = end.error;
  }

  private flush(): void {
    const e = this.pending;
    if (e === undefined) return;
    this.pending = undefined;
    const s = e.step;
    let text = `{"pc":${s.pc},"op":"${s.opName}","gas":${s.gas},"gasCost":${s.cost},"depth":${s.depth}`;
    if (e.error !== undefined) text += `,"error":${JSON.stringify(e.error)}`;
    if (e.stack !== undefined) text += `,"stack":${e.stack}`;
    if (e.returnData !== undefined) text += `,"returnData":"${e.returnData}"`;
    if (e.memory !== undefined) text += `,"memory":${e.memory}`;
    if (e.storage !== undefined && e.storage.size > 0) {
      const keys = [...e.storage.keys()].sort();
      text += `,"storage":{${keys.map((k) => `"${k}":"${e.storage!.get(k)}"`).join(',')}}`;
    }
    if (s.refund !== 0n) text += `,"refund":${s.refund}`;
    text += '}';
    this.size += text.length;
    this.count++;
    // Each entry after the first carries its separating comma: the blocks are the result's parts.
    // An entry built by concatenation is a V8 rope of ~10 strings; joined into blocks, 100,000
    // steps are ~7 MB of flat text instead of ~46 MiB of string objects (bench/evm-trace.bench.ts).
    this.block.push(this.count === 1 ? text : `,${text}`);
    if (this.block.length >= ENTRIES_PER_BLOCK) this.seal();
  }

  private seal(): void {
    if (this.block.length === 0) return;
    this.entries.push(this.block.join(''));
    this.block = [];
  }

  private tail(): string {
    const failed = this.error !== undefined;
    const ret = failed && this.error !== 'execution reverted' ? '0x' : hex(this.output);
    return `"gas":${this.end?.gasUsed ?? 0n},"failed":${failed},"returnValue":"${ret}"`;
  }

  result(): RawJson {
    this.flush();
    this.seal();
    return new RawJson([`{${this.tail()},"structLogs":[`, ...this.entries, ']}']);
  }
}
