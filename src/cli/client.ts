/**
 * Client plumbing shared by `chaind keys`, `chaind tx` and `chaind query`: the node RPC client
 * (JSON-RPC 2.0 over HTTP POST, `fetch`), output as JSON or YAML text, terminal prompts, and the
 * keyring flags.
 *
 * Output follows the Cosmos SDK CLI (cosmos-sdk: client/context.go PrintProto/PrintString):
 * `--output json` is the compact JSON on one line; `--output text` is that JSON as YAML, keys
 * sorted (as sigs.k8s.io/yaml.JSONToYAML sorts them), strings quoted only when YAML would read
 * them as something else.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { goJsonStringify } from '../proto/json.js';
import { Keyring, KeyringError, KEYRING_BACKENDS, type KeyringBackend } from '../keys/keyring.js';
import { type CliIo, resolveHome, UsageError } from './common.js';

export const DEFAULT_NODE = 'tcp://127.0.0.1:26657';

/** A failure the CLI prints as is (one line on stderr) and exits 1 for. */
export class CliError extends Error {
  readonly code: string;
  constructor(message: string, code = 'CLI_ERROR') {
    super(message);
    this.code = code;
  }
}

// ---- terminal ----

export function stdinIsTty(io: CliIo): boolean {
  return io.stdin === undefined && process.stdin.isTTY === true;
}

/** Everything on stdin (a pipe or file); '' when stdin is a terminal or closed. */
export function readStdin(io: CliIo): string {
  if (io.stdin !== undefined) return io.stdin;
  if (stdinIsTty(io)) return '';
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** Asks a question on stderr and reads one line from the terminal; `hidden` does not echo. */
export async function prompt(question: string, hidden = false): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, (answer) => {
        if (hidden) process.stderr.write('\n');
        resolve(answer);
      });
      muted = hidden;
    });
  } finally {
    rl.close();
  }
}

/** y/N confirmation on a terminal. */
export async function confirm(question: string): Promise<boolean> {
  const a = (await prompt(`${question} [y/N]: `)).trim().toLowerCase();
  return a === 'y' || a === 'yes';
}

// ---- output ----

export type OutputFormat = 'json' | 'text';

export function outputFormat(v: unknown, dflt: OutputFormat): OutputFormat {
  if (v === undefined) return dflt;
  if (v !== 'json' && v !== 'text') throw new UsageError(`--output: want json or text, got "${String(v)}"`);
  return v;
}

/** Prints a JSON value as compact JSON or YAML. */
export function printValue(io: CliIo, value: unknown, format: OutputFormat): void {
  io.out(format === 'json' ? goJsonStringify(value) + '\n' : toYaml(value));
}

const YAML_RESERVED = /^(~|null|Null|NULL|true|True|TRUE|false|False|FALSE|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|\.inf|\.Inf|\.INF|-\.inf|\.nan|\.NaN|\.NAN)$/;
const YAML_NUMBER = /^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$|^0x[0-9a-fA-F_]+$|^0o?[0-7_]+$|^0b[01_]+$|^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/;

/** A YAML scalar for a string, quoted as go-yaml v2 does: double quotes when the plain form
 * would read as another type (or needs escapes), single quotes when it has indicator characters. */
export function yamlString(s: string): string {
  if (s === '') return '""';
  if (YAML_RESERVED.test(s) || YAML_NUMBER.test(s) || /[\u0000-\u001f\u007f]/.test(s)) return JSON.stringify(s);
  const needsQuote =
    /^[-?:,[\]{}#&*!|>'"%@`]/.test(s) || /^\s|\s$/.test(s) || s.includes(': ') || s.includes(' #') || s.endsWith(':') || s === '-' || s.startsWith('- ') || s.startsWith('---');
  return needsQuote ? `'${s.replace(/'/g, "''")}'` : s;
}

function yamlScalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return yamlString(v);
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return JSON.stringify(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function yamlLines(v: unknown, indent: string, out: string[]): void {
  if (Array.isArray(v)) {
    for (const e of v) {
      if (isPlainObject(e) && Object.keys(e).length > 0) {
        const sub: string[] = [];
        yamlLines(e, '', sub);
        out.push(`${indent}- ${sub[0]}`);
        for (const l of sub.slice(1)) out.push(`${indent}  ${l}`);
      } else if (Array.isArray(e) && e.length > 0) {
        const sub: string[] = [];
        yamlLines(e, '', sub);
        out.push(`${indent}- ${sub[0]}`);
        for (const l of sub.slice(1)) out.push(`${indent}  ${l}`);
      } else out.push(`${indent}- ${emptyOrScalar(e)}`);
    }
    return;
  }
  if (isPlainObject(v)) {
    for (const k of Object.keys(v).sort()) {
      const e = v[k];
      const key = yamlString(k);
      if (isPlainObject(e) && Object.keys(e).length > 0) {
        out.push(`${indent}${key}:`);
        yamlLines(e, indent + '  ', out);
      } else if (Array.isArray(e) && e.length > 0) {
        // go-yaml writes sequences in a mapping at the key's own indentation.
        out.push(`${indent}${key}:`);
        yamlLines(e, indent, out);
      } else out.push(`${indent}${key}: ${emptyOrScalar(e)}`);
    }
    return;
  }
  out.push(indent + yamlScalar(v));
}

function emptyOrScalar(v: unknown): string {
  if (Array.isArray(v)) return '[]';
  if (isPlainObject(v)) return '{}';
  return yamlScalar(v);
}

/** JSON value → YAML text (keys sorted). */
export function toYaml(v: unknown): string {
  if (!isPlainObject(v) && !Array.isArray(v)) return yamlScalar(v) + '\n';
  if ((isPlainObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0)) return emptyOrScalar(v) + '\n';
  const out: string[] = [];
  yamlLines(v, '', out);
  return out.join('\n') + '\n';
}

// ---- node RPC ----

/** `tcp://host:port` (CometBFT style), `http(s)://…` or `host:port` → an http(s) URL. */
export function nodeUrl(node: string): string {
  let u = node.trim();
  if (u.startsWith('tcp://')) u = 'http://' + u.slice('tcp://'.length);
  else if (!/^https?:\/\//.test(u)) u = 'http://' + u;
  try {
    return new URL(u).toString().replace(/\/$/, '');
  } catch {
    throw new UsageError(`--node: invalid address "${node}"`);
  }
}

export class RpcClient {
  private id = 0;
  constructor(
    readonly url: string,
    private readonly timeoutMs = 60_000,
  ) {}

  /** One JSON-RPC call; a JSON-RPC error becomes a CliError with its message and data. */
  async call<T = any>(method: string, params: Record<string, unknown>, timeoutMs = this.timeoutMs): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      throw new CliError(`post failed: Post "${this.url}": ${why}`, 'RPC_UNREACHABLE');
    }
    const text = await res.text();
    let body: { result?: T; error?: { code?: number; message?: string; data?: string } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new CliError(`${method}: HTTP ${res.status}: ${text.slice(0, 200)}`, 'RPC_ERROR');
    }
    if (body.error) {
      const { code, message, data } = body.error;
      throw new CliError(`RPC error ${code ?? ''} - ${message ?? ''}${data ? `: ${data}` : ''}`, 'RPC_ERROR');
    }
    if (body.result === undefined) throw new CliError(`${method}: no result in the response`, 'RPC_ERROR');
    return body.result;
  }

  async status(): Promise<any> {
    return this.call('status', {});
  }

  /** abci_query; resolves with the raw ResponseQuery JSON (code may be non-zero). */
  async abciQuery(path: string, data: Uint8Array, height = 0n): Promise<AbciQueryResponse> {
    const r = await this.call<{ response: AbciQueryResponse }>('abci_query', {
      path,
      data: Buffer.from(data).toString('hex'),
      height: height.toString(),
      prove: false,
    });
    return r.response;
  }
}

export interface AbciQueryResponse {
  code?: number;
  log?: string;
  info?: string;
  value?: string | null;
  height?: string;
  codespace?: string;
}

/** gRPC code names, for the `rpc error: code = X desc = …` messages. */
const GRPC_CODE_NAME: Record<number, string> = { 3: 'InvalidArgument', 5: 'NotFound', 16: 'Unauthenticated', 2: 'Unknown' };

/** Root sdk codes (codespace "sdk") the SDK client maps back to gRPC codes (client/query.go
 * sdkErrorToGRPCError): 18 invalid request, 4 unauthorized, 22 key not found, else Unknown. */
function grpcCodeOfAbci(codespace: string, code: number): number {
  if (codespace === 'sdk' || codespace === '') {
    if (code === 18) return 3;
    if (code === 4) return 16;
    if (code === 22) return 5;
  }
  return 2;
}

/** Error of a failed abci_query as the SDK client prints it: `rpc error: code = NotFound desc = <log>`. */
export class QueryError extends CliError {
  constructor(
    readonly abciCode: number,
    readonly codespace: string,
    readonly log: string,
  ) {
    super(`rpc error: code = ${GRPC_CODE_NAME[grpcCodeOfAbci(codespace, abciCode)]} desc = ${log}`, 'QUERY_FAILED');
  }
  get notFound(): boolean {
    return grpcCodeOfAbci(this.codespace, this.abciCode) === 5;
  }
  /** The node has no handler for the path (baseapp: `unknown query path`). */
  get unknownPath(): boolean {
    return this.log.includes('unknown query path');
  }
}

/** abci_query of a gRPC method; the response bytes, or a QueryError. */
export async function grpcQuery(rpc: RpcClient, path: string, request: Uint8Array, height = 0n): Promise<{ value: Uint8Array; height: bigint }> {
  const r = await rpc.abciQuery(path, request, height);
  const code = r.code ?? 0;
  if (code !== 0) throw new QueryError(code, r.codespace ?? '', r.log ?? '');
  return { value: new Uint8Array(Buffer.from(r.value ?? '', 'base64')), height: BigInt(r.height ?? '0') };
}

// ---- keyring flags ----

export const KEYRING_OPTIONS = {
  'keyring-backend': { type: 'string' },
  'keyring-dir': { type: 'string' },
  'keyring-passphrase': { type: 'string' },
} as const;

/** The keyring of `--home`/`--keyring-backend`/`--keyring-dir`, with its passphrase from
 * `--keyring-passphrase`, $CHAIND_KEYRING_PASSPHRASE, or a prompt on a terminal. */
export function openKeyring(values: Record<string, unknown>, io: CliIo): Keyring {
  const backend = (values['keyring-backend'] as string | undefined) ?? io.env.CHAIND_KEYRING_BACKEND ?? 'file';
  if (!(KEYRING_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`--keyring-backend: want ${KEYRING_BACKENDS.join(' or ')}, got "${backend}"`);
  }
  const home = resolveHome(values['home'] as string | undefined, io.env);
  const dir = values['keyring-dir'] as string | undefined;
  const envPass = io.env.CHAIND_KEYRING_PASSPHRASE;
  const given = (values['keyring-passphrase'] as string | undefined) ?? (envPass !== undefined && envPass !== '' ? envPass : undefined);
  const passphrase =
    given !== undefined
      ? given
      : stdinIsTty(io)
        ? async ({ confirm: fresh }: { confirm: boolean }) => {
            const p = await prompt('Enter keyring passphrase (attempt 1/1): ', true);
            if (fresh) {
              const again = await prompt('Re-enter keyring passphrase: ', true);
              if (again !== p) throw new KeyringError('WRONG_PASSPHRASE', 'passphrases do not match');
            }
            return p;
          }
        : undefined;
  return new Keyring({ backend: backend as KeyringBackend, home, ...(dir !== undefined ? { dir } : {}), ...(passphrase !== undefined ? { passphrase } : {}) });
}

/** A non-negative integer flag (uint64 range) or undefined. */
export function uintFlag(name: string, v: unknown): bigint | undefined {
  if (v === undefined) return undefined;
  const s = String(v);
  if (!/^[0-9]+$/.test(s) || BigInt(s) >= 1n << 64n) throw new UsageError(`--${name}: want a non-negative integer, got "${s}"`);
  return BigInt(s);
}
