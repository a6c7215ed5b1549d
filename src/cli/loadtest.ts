/**
 * `chaind loadtest`: a load generator for a running chaind, CometBFT node or EVM node, measured the
 * way CometBFT's QA measures a network (cometbft/cometbft:docs/references/qa/method.md and its
 * test/loadtime tool): an open loop of `--rate` txs/s spread over `--connections` clients for
 * `--duration`, each tx carrying its scheduled send time, and the latency of a tx taken as the
 * time of the block that holds it minus that send time.
 *
 * Tx mode (`--kind`):
 *   bank-send       MsgSend over the node RPC (broadcast_tx_sync), memo `loadtest <send ms>`
 *   eth-transfer    1-wei transfers over eth_sendRawTransaction, calldata = the send ms (8 bytes)
 *   erc20-transfer  deploys an ERC-20 (src/cli/loadtest-token.ts) first, then transfer(sink, 1)
 *                   with the send ms appended to the calldata
 * Senders are derived from `--mnemonic` (default the dev mnemonic; `chaind init --dev` funds its
 * first ten keys per path): key 0 funds `--accounts` fresh senders (keys 1..N) in a set-up phase,
 * then tx i goes out from sender i mod N at t0 + i/rate whatever the answers so far (open loop:
 * a slow node does not slow the schedule, and latency counts from the schedule, so the queueing a
 * slow node causes is measured, not hidden). Each step's txs are signed before it starts. A sender
 * uses one connection and has one tx in flight: its next tx waits for the answer (reported as lag
 * behind the schedule), so a rejected tx's sequence is reused instead of failing every later one.
 * `--pending-per-sender N` also holds a sender's next tx while N of its accepted txs are not yet
 * in a block (a wallet that waits for its receipt when N is 1): no sender then queues a backlog
 * of nonces in the node's pool. Use it against anvil: 1.7.1's automine stalls when senders queue
 * deep backlogs (each arrival re-selects the whole ready set, blocks re-run the txs of the blocks
 * before them, and it ends idle with ready txs in its pool), and with the same flags for both
 * nodes the comparison stays fair. The set-up's funding txs go out in waves of 32, each waited for.
 *
 * `--rate A:B:S` ramps from A to B by S, one `--duration` per step, each step settled (its
 * accepted txs committed, or no progress for `--settle`) before the next; the saturation point is
 * the last rate whose step committed what it sent at the rate asked.
 *
 * Read mode (`--method`): eth_call, eth_getBalance, status, abci_query or any other JSON-RPC
 * method (`--params`), `grpc:/pkg.Service/Method` (`--data` hex request), `rest:/path`. Without
 * `--rate` each connection keeps one request in flight (closed loop: the node's throughput); with
 * it the requests follow the schedule (open loop: latency at a given load).
 *
 * The transport follows the URL: http:// (one keep-alive socket per connection) or ws:// (one
 * websocket per connection; requests do not wait for earlier answers).
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { createTx } from '@ethereumjs/tx';
import { bytesToHex, createContractAddress, Address, hexToBytes } from '@ethereumjs/util';
import crypto from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import { MsgSendSchema } from '../gen/chain/bank/v1beta1/tx_pb.js';
import { CoinSchema, type Coin } from '../gen/chain/base/v1beta1/coin_pb.js';
import { QueryAccountRequestSchema } from '../gen/chain/auth/v1beta1/query_pb.js';
import { SignMode } from '../gen/chain/tx/signing/v1beta1/signing_pb.js';
import { AuthInfoSchema, FeeSchema, ModeInfoSchema, SignerInfoSchema, TxBodySchema } from '../gen/chain/tx/v1beta1/tx_pb.js';
import { DEV_MNEMONIC, devAccounts, type DevAccount } from '../keys/devaccounts.js';
import { packAny } from '../proto/registry.js';
import { encodeAuthInfo, encodeTxBody, encodeTxRaw } from '../tx/codec.js';
import { encodePubKey } from '../tx/pubkey.js';
import { signBytesDirect } from '../tx/signbytes.js';
import { CliError, DEFAULT_NODE, nodeUrl, RpcClient } from './client.js';
import { type CliIo, EXIT_OK, parse, UsageError } from './common.js';
import { TOKEN_BYTECODE } from './loadtest-token.js';
import { WsTextClient } from './loadtest-ws.js';

export const LOADTEST_USAGE = `Usage: chaind loadtest --kind bank-send|eth-transfer|erc20-transfer [options]
       chaind loadtest --method eth_call|eth_getBalance|status|abci_query|grpc:<path>|rest:<path> [options]

Tx mode: an open loop of signed txs at a fixed rate; reports submitted, accepted, committed,
rejected by reason, committed tx/s, latency (block time - send time) and block interval.
Read mode: requests over --connections; reports req/s and latency percentiles.

Options:
  --rate R|A:B:S        txs (or requests) per second, or a ramp from A to B by S (default 100
                        in tx mode; read mode without --rate keeps one request in flight per connection)
  --duration D          per rate step: 30s, 1m, 500ms or seconds (default 10s)
  --connections N       clients (default 4)
  --node URL            node RPC, http:// or ws://host:port/websocket (default ${DEFAULT_NODE})
  --evm-rpc URL         EVM JSON-RPC, http:// or ws:// (default http://127.0.0.1:8545)
  --grpc HOST:PORT      gRPC (default 127.0.0.1:9090), for --method grpc:<path>
  --api URL             REST (default http://127.0.0.1:1317), for --method rest:<path>
  --mnemonic WORDS      signing keys (default the dev mnemonic "test test ... junk")
  --accounts N          senders funded by key 0 of the mnemonic (default 32)
  --denom D             bank-send denom (default achain)
  --fees COINS          bank-send fee per tx, e.g. 10achain (default none)
  --settle D            after a step, wait this long without a commit before giving up (default 10s)
  --pending-per-sender N
                        at most N of a sender's accepted txs not yet in a block; its next
                        waits (default no limit; use 1 on both nodes to compare with anvil)
  --params JSON         read mode: JSON-RPC params (default: a dev account, see the README)
  --data HEX            read mode: abci_query data or gRPC request message
  --path P              read mode: abci_query path (default the auth Account query)
  --json                print the report as JSON on stdout
  -q, --quiet           no progress line
`;

const OPTIONS = {
  kind: { type: 'string' },
  method: { type: 'string' },
  rate: { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string' },
  node: { type: 'string' },
  'evm-rpc': { type: 'string' },
  grpc: { type: 'string' },
  api: { type: 'string' },
  mnemonic: { type: 'string' },
  accounts: { type: 'string' },
  denom: { type: 'string' },
  fees: { type: 'string' },
  settle: { type: 'string' },
  'pending-per-sender': { type: 'string' },
  params: { type: 'string' },
  data: { type: 'string' },
  path: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const;

// ---- small parsers (exported for the unit test) ---------------------------------------------------

/** `30s`, `1m`, `500ms`, `2.5` (seconds) → ms. */
export function parseDuration(s: string, flag = '--duration'): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new UsageError(`${flag}: want e.g. 30s, 1m, 500ms, got "${s}"`);
  const v = Number(m[1]);
  const ms = v * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as Record<string, number>)[m[2] ?? 's']!;
  if (!(ms > 0)) throw new UsageError(`${flag}: must be above zero`);
  return ms;
}

/** `100` → [100]; `100:1000:100` → [100, 200, …, 1000]. */
export function parseRate(s: string): number[] {
  const parts = s.split(':').map((p) => Number(p));
  if (parts.some((p) => !Number.isFinite(p) || p <= 0) || (parts.length !== 1 && parts.length !== 3)) {
    throw new UsageError(`--rate: want R or A:B:S with positive numbers, got "${s}"`);
  }
  if (parts.length === 1) return [parts[0]!];
  const [a, b, step] = parts as [number, number, number];
  if (b < a) throw new UsageError(`--rate: the ramp must go up (${a} > ${b})`);
  const out: number[] = [];
  for (let r = a; r <= b + 1e-9; r += step) out.push(Math.round(r * 1000) / 1000);
  if (out.length > 1000) throw new UsageError('--rate: more than 1000 steps');
  return out;
}

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Groups error messages: numbers and hex become N, at most 140 characters. */
export function reasonKey(s: string): string {
  return s
    .replace(/0x[0-9a-fA-F]+/g, '0x…')
    .replace(/\b\d+\b/g, 'N')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 140);
}

function positiveInt(v: unknown, flag: string, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag}: want a positive integer, got "${String(v)}"`);
  return n;
}

// ---- transports ------------------------------------------------------------------------------------

interface Answer {
  result?: any;
  error?: { code?: number; message?: string; data?: unknown };
}

/** One client: JSON-RPC calls in order over one socket. */
interface Conn {
  call(method: string, params: unknown): Promise<Answer>;
  close(): void;
}

class HttpConn implements Conn {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly u: URL;
  private id = 0;
  constructor(url: string) {
    this.u = new URL(url);
  }
  call(method: string, params: unknown): Promise<Answer> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params });
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.u.hostname,
          port: Number(this.u.port || 80),
          path: this.u.pathname + this.u.search,
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve(JSON.parse(text) as Answer);
            } catch {
              reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 100)}`));
            }
          });
          res.on('error', reject);
        },
      );
      req.setTimeout(120_000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });
  }
  close(): void {
    this.agent.destroy();
  }
}

class WsConn implements Conn {
  private id = 0;
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  private constructor(private readonly ws: WsTextClient) {
    ws.onMessage = (text) => {
      let a: Answer & { id?: unknown };
      try {
        a = JSON.parse(text);
      } catch {
        return;
      }
      const w = typeof a.id === 'number' ? this.waiting.get(a.id) : undefined;
      if (w) {
        this.waiting.delete(a.id as number);
        w.resolve(a);
      }
    };
    ws.onClose = (why) => {
      for (const w of this.waiting.values()) w.reject(new Error(`websocket: ${why}`));
      this.waiting.clear();
    };
  }
  static async open(url: string): Promise<WsConn> {
    return new WsConn(await WsTextClient.connect(url));
  }
  call(method: string, params: unknown): Promise<Answer> {
    const id = ++this.id;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      try {
        this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      } catch (e) {
        this.waiting.delete(id);
        reject(e as Error);
      }
    });
  }
  close(): void {
    this.ws.close();
  }
}

async function openConn(url: string): Promise<Conn> {
  return url.startsWith('ws://') ? WsConn.open(url) : new HttpConn(url);
}

/** `tcp://h:p` / `h:p` → http://h:p; ws:// kept. */
function endpoint(url: string): string {
  if (url.startsWith('ws://')) return url;
  if (url.startsWith('wss://') || url.startsWith('https://')) throw new UsageError(`TLS endpoints are not supported: ${url}`);
  return nodeUrl(url);
}

async function rpcOk(c: Conn, method: string, params: unknown): Promise<any> {
  const a = await c.call(method, params);
  if (a.error) throw new CliError(`${method}: ${a.error.message ?? JSON.stringify(a.error)}${a.error.data ? `: ${String(a.error.data)}` : ''}`, 'LOADTEST_RPC');
  return a.result;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A timer that does not keep the process alive (the loser of a race). */
const deadline = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

// ---- tx kinds --------------------------------------------------------------------------------------

interface SignedTx {
  method: string;
  params: unknown;
  /** Upper-case hex (CometBFT) or 0x lower-case (EVM): as the block watcher spells it. */
  hash: string;
}

interface BlockTx {
  hash: string;
  /** null: committed and succeeded; else why it failed in the block. */
  failure: string | null;
}

interface BlockInfo {
  height: number;
  /** The header's time in ms (CometBFT, ns precision), or null (EVM headers have whole seconds). */
  timeMs: number | null;
  /** When this client first learnt the block exists (Date.now() at the height poll's answer). */
  seenMs: number;
  txs: BlockTx[];
}

interface TxKind {
  readonly name: string;
  readonly senders: number;
  readonly nextSeq: bigint[];
  /** Signs the next tx of sender `s` with sequence `seq`, carrying `sendMs`. */
  sign(s: number, seq: bigint, sendMs: number): SignedTx;
  /** null when the node took the tx; else the rejection reason. */
  verdict(a: Answer): string | null;
  /** The sequence (nonce) a rejection says the node expects, when it says. */
  expectedSeq(a: Answer): bigint | undefined;
  /** Blocks above `after`, in order (empty when none is new). */
  blocksAfter(after: number): Promise<BlockInfo[]>;
  latestHeight(): Promise<number>;
}

function sha256HexUpper(b: Uint8Array): string {
  return crypto.createHash('sha256').update(b).digest('hex').toUpperCase();
}

/** RFC 3339 with up to 9 fractional digits → ms since the epoch (sub-ms kept as a fraction). */
function rfc3339Ms(s: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(s);
  if (!m) return Date.parse(s);
  const frac = (m[2] ?? '').padEnd(9, '0').slice(0, 9);
  return Date.parse(m[1]! + m[3]!) + Number(frac) / 1e6;
}

/** Blocks after..latest; `seenMs`: when the poll that found `latest` answered. */
async function cometBlocks(c: Conn, after: number, latest: number, seenMs: number, ours: (h: string) => boolean): Promise<BlockInfo[]> {
  const out: BlockInfo[] = [];
  for (let h = after + 1; h <= latest; h++) {
    const b = await rpcOk(c, 'block', { height: String(h) });
    const txs: string[] = b.block?.data?.txs ?? [];
    const hashes = txs.map((t) => sha256HexUpper(Buffer.from(t, 'base64')));
    const info: BlockInfo = { height: h, timeMs: rfc3339Ms(b.block.header.time), seenMs, txs: [] };
    if (hashes.some(ours)) {
      const r = await rpcOk(c, 'block_results', { height: String(h) });
      const results: { code?: number; codespace?: string; log?: string }[] = r.txs_results ?? [];
      hashes.forEach((hash, i) => {
        const res = results[i];
        const code = res?.code ?? 0;
        info.txs.push({ hash, failure: code === 0 ? null : `code ${res?.codespace ? res.codespace + '/' : ''}${code}: ${reasonKey(res?.log ?? '')}` });
      });
    }
    out.push(info);
  }
  return out;
}

interface KindContext {
  io: CliIo;
  quiet: boolean;
  senders: number;
  mnemonic: string;
  /** Tells whether a hash is one of ours (the watcher fetches results only then). */
  ours: (hash: string) => boolean;
}

function note(ctx: KindContext, text: string): void {
  if (!ctx.quiet) ctx.io.err(text + '\n');
}

async function bankSendKind(ctx: KindContext, nodeEndpoint: string, setup: Conn, watch: Conn, denom: string, fees: Coin[]): Promise<TxKind> {
  const status = await rpcOk(setup, 'status', {});
  const chainId: string = status.node_info.network;
  const keys = devAccounts({ mnemonic: ctx.mnemonic, count: ctx.senders + 1 }).filter((a) => a.keyType === 'secp256k1');
  const funder = keys[0]!;
  const senders = keys.slice(1, ctx.senders + 1);
  const rpc = new RpcClient(nodeEndpoint.startsWith('ws://') ? nodeEndpoint.replace(/^ws:/, 'http:').replace(/\/websocket$/, '') : nodeEndpoint);
  const { queryAccount } = await import('./tx.js');
  const feeOf = (gasLimit: bigint) => create(FeeSchema, { amount: fees, gasLimit });
  const sendAny = (from: string, to: string, amount: bigint) =>
    packAny(MsgSendSchema, create(MsgSendSchema, { fromAddress: from, toAddress: to, amount: [create(CoinSchema, { denom, amount: amount.toString() })] }));
  const pubKeys = new Map<string, ReturnType<typeof encodePubKey>>();
  const signTx = (key: DevAccount, accountNumber: bigint, sequence: bigint, msgs: ReturnType<typeof sendAny>[], memo: string, gasLimit: bigint): Uint8Array => {
    let pk = pubKeys.get(key.bech32);
    if (!pk) pubKeys.set(key.bech32, (pk = encodePubKey({ algo: key.keyType, key: key.publicKey })));
    const bodyBytes = encodeTxBody(create(TxBodySchema, { messages: msgs, memo }));
    const authInfoBytes = encodeAuthInfo(
      create(AuthInfoSchema, {
        signerInfos: [create(SignerInfoSchema, { publicKey: pk, modeInfo: create(ModeInfoSchema, { sum: { case: 'single', value: { mode: SignMode.DIRECT } } }), sequence })],
        fee: feeOf(gasLimit),
      }),
    );
    const digest = crypto.createHash('sha256').update(signBytesDirect(bodyBytes, authInfoBytes, chainId, accountNumber)).digest();
    const sig = secp256k1.sign(digest, key.privateKey, { prehash: false, lowS: true });
    return encodeTxRaw({ bodyBytes, authInfoBytes, signatures: [sig] });
  };

  // Set-up: key 0 funds the senders, 50 per tx, each tx committed before the next.
  const f = await queryAccount(rpc, funder.bech32);
  let fseq = f.sequence;
  note(ctx, `set-up: ${funder.bech32} funds ${senders.length} senders on ${chainId}`);
  for (let i = 0; i < senders.length; i += 50) {
    const chunk = senders.slice(i, i + 50);
    const tx = signTx(funder, f.accountNumber, fseq++, chunk.map((s) => sendAny(funder.bech32, s.bech32, 10n ** 20n)), 'loadtest set-up', 100_000n + 40_000n * BigInt(chunk.length));
    const r = await rpcOk(setup, 'broadcast_tx_commit', { tx: Buffer.from(tx).toString('base64') });
    if (r.check_tx?.code || r.tx_result?.code) throw new CliError(`set-up funding failed: ${r.check_tx?.log || r.tx_result?.log}`, 'LOADTEST_SETUP');
  }
  const accts = await Promise.all(senders.map((s) => queryAccount(rpc, s.bech32)));
  const sendMsgs = senders.map((s) => [sendAny(s.bech32, funder.bech32, 1n)]);
  const latestHeight = async () => Number((await rpcOk(watch, 'status', {})).sync_info.latest_block_height);
  return {
    name: 'bank-send',
    senders: senders.length,
    nextSeq: accts.map((a) => a.sequence),
    sign(s, seq, sendMs) {
      const tx = signTx(senders[s]!, accts[s]!.accountNumber, seq, sendMsgs[s]!, `loadtest ${sendMs.toFixed(3)}`, 100_000n);
      return { method: 'broadcast_tx_sync', params: { tx: Buffer.from(tx).toString('base64') }, hash: sha256HexUpper(tx) };
    },
    verdict(a) {
      if (a.error) return `rpc: ${reasonKey(a.error.message ?? '')}${a.error.data ? ': ' + reasonKey(String(a.error.data)) : ''}`;
      const code = a.result?.code ?? 0;
      return code === 0 ? null : `code ${a.result.codespace ? a.result.codespace + '/' : ''}${code}: ${reasonKey(a.result.log ?? '')}`;
    },
    expectedSeq(a) {
      const m = /account sequence mismatch, expected (\d+)/.exec(String(a.result?.log ?? ''));
      return m ? BigInt(m[1]!) : undefined;
    },
    latestHeight,
    async blocksAfter(after) {
      const latest = await latestHeight();
      return cometBlocks(watch, after, latest, Date.now(), ctx.ours);
    },
  };
}

function word(x: bigint | Uint8Array): Uint8Array {
  const w = new Uint8Array(32);
  if (typeof x === 'bigint') {
    let v = x;
    for (let i = 31; i >= 0 && v > 0n; i--, v >>= 8n) w[i] = Number(v & 0xffn);
  } else w.set(x, 32 - x.length);
  return w;
}

function cat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

function msBytes(ms: number): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(Math.round(ms)));
  return b;
}

async function evmKind(ctx: KindContext, kind: 'eth-transfer' | 'erc20-transfer', setup: Conn, watch: Conn): Promise<TxKind> {
  const { createEvmCommon } = await import('../evm/common.js');
  const chainId = BigInt(await rpcOk(setup, 'eth_chainId', []));
  const common = createEvmCommon({ chainId });
  const keys = devAccounts({ mnemonic: ctx.mnemonic, count: ctx.senders + 1 }).filter((a) => a.keyType === 'eth_secp256k1');
  const funder = keys[0]!;
  const senders = keys.slice(1, ctx.senders + 1);
  const gasPrice = BigInt(await rpcOk(setup, 'eth_gasPrice', []));
  // Fee cap twice the node's price (anvil's base fee moves; chaind's devnet asks 0), tip ≤ cap.
  const maxFee = gasPrice * 2n;
  const tip = maxFee < 1_000_000_000n ? maxFee : 1_000_000_000n;
  const sign = (key: DevAccount, nonce: bigint, to: Uint8Array | undefined, value: bigint, data: Uint8Array, gasLimit: bigint): SignedTx => {
    const tx = createTx(
      { type: 2, nonce, to: to === undefined ? undefined : bytesToHex(to), value, data, gasLimit, maxFeePerGas: maxFee, maxPriorityFeePerGas: tip },
      { common },
    ).sign(key.privateKey);
    return { method: 'eth_sendRawTransaction', params: [bytesToHex(tx.serialize())], hash: bytesToHex(tx.hash()) };
  };
  const setupTxs: SignedTx[] = [];
  const send = (t: SignedTx) => {
    setupTxs.push(t);
    return t.hash;
  };
  let fnonce = BigInt(await rpcOk(setup, 'eth_getTransactionCount', [funder.hex, 'pending']));
  let token: Uint8Array | undefined;
  note(ctx, `set-up: ${funder.hex} funds ${senders.length} senders on chain id ${chainId}${kind === 'erc20-transfer' ? ' and deploys the token' : ''}`);
  if (kind === 'erc20-transfer') {
    token = createContractAddress(new Address(funder.address), fnonce).bytes;
    send(sign(funder, fnonce++, undefined, 0n, cat(hexToBytes(TOKEN_BYTECODE as `0x${string}`), word(10n ** 30n)), 1_500_000n));
  }
  for (const s of senders) {
    send(sign(funder, fnonce++, s.address, 5n * 10n ** 18n, new Uint8Array(0), 21_000n));
    if (token) send(sign(funder, fnonce++, token, 0n, cat(hexToBytes('0xa9059cbb'), word(s.address), word(10n ** 24n)), 100_000n));
  }
  const deadline = Date.now() + 180_000;
  const mined = async (h: string) => {
    for (;;) {
      const r = await rpcOk(setup, 'eth_getTransactionReceipt', [h]);
      if (r) {
        if (r.status !== '0x1') throw new CliError(`set-up tx ${h} failed in its block`, 'LOADTEST_SETUP');
        return;
      }
      if (Date.now() > deadline) throw new CliError(`set-up tx ${h} not mined in 180 s`, 'LOADTEST_SETUP');
      await sleep(100);
    }
  };
  // In waves of 32, each waited for: no deep backlog of the funder's nonces in the node's pool.
  for (let w = 0; w < setupTxs.length; w += 32) {
    const wave = setupTxs.slice(w, w + 32);
    for (const t of wave) {
      for (let tries = 0; ; tries++) {
        const a = await setup.call(t.method, t.params);
        if (!a.error) break;
        // chaind: right after a commit, the next nonce is briefly "too high" (mempool recheck).
        if (!/nonce too high/.test(a.error.message ?? '') || tries > 2000) throw new CliError(`set-up tx refused: ${a.error.message}`, 'LOADTEST_SETUP');
        await sleep(5);
      }
    }
    await mined(wave[wave.length - 1]!.hash);
  }
  for (const t of setupTxs) await mined(t.hash);
  const nonces = await Promise.all(senders.map(async (s) => BigInt(await rpcOk(setup, 'eth_getTransactionCount', [s.hex, 'pending']))));
  const sink = funder.address;
  const transferHead = token ? cat(hexToBytes('0xa9059cbb'), word(sink), word(1n)) : new Uint8Array(0);
  let haveBlockReceipts = true;
  const latestHeight = async () => Number(BigInt(await rpcOk(watch, 'eth_blockNumber', [])));
  return {
    name: kind,
    senders: senders.length,
    nextSeq: nonces,
    sign(s, seq, sendMs) {
      return token ? sign(senders[s]!, seq, token, 0n, cat(transferHead, msBytes(sendMs)), 100_000n) : sign(senders[s]!, seq, sink, 1n, msBytes(sendMs), 30_000n);
    },
    verdict(a) {
      return a.error ? reasonKey(a.error.message ?? JSON.stringify(a.error)) : null;
    },
    expectedSeq(a) {
      // geth-style "nonce too low: next nonce 5, tx nonce 3"
      const m = /next nonce (\d+)/.exec(String(a.error?.message ?? ''));
      return m ? BigInt(m[1]!) : undefined;
    },
    latestHeight,
    async blocksAfter(after) {
      const latest = await latestHeight();
      const seenMs = Date.now();
      const out: BlockInfo[] = [];
      for (let h = after + 1; h <= latest; h++) {
        const b = await rpcOk(watch, 'eth_getBlockByNumber', ['0x' + h.toString(16), false]);
        const hashes: string[] = (b?.transactions ?? []).map((x: string) => x.toLowerCase());
        const info: BlockInfo = { height: h, timeMs: null, seenMs, txs: [] };
        if (hashes.some(ctx.ours)) {
          let status = new Map<string, string>();
          if (haveBlockReceipts) {
            const a = await watch.call('eth_getBlockReceipts', ['0x' + h.toString(16)]);
            if (a.error || !Array.isArray(a.result)) haveBlockReceipts = false;
            else status = new Map(a.result.map((r: { transactionHash: string; status: string }) => [r.transactionHash.toLowerCase(), r.status]));
          }
          for (const hash of hashes) info.txs.push({ hash, failure: status.get(hash) === '0x0' ? 'reverted' : null });
        }
        out.push(info);
      }
      return out;
    },
  };
}

// ---- the tx run -------------------------------------------------------------------------------------

interface TxRec {
  step: number;
  sender: number;
  /** Scheduled send time, ms since the epoch (what the tx carries). */
  schedMs: number;
  /** Actual send − scheduled, ms (how far the generator fell behind). */
  lagMs: number;
  answered: boolean;
  accepted: boolean;
  committed: boolean;
  /** Counted in its sender's accepted-but-not-committed txs (--pending-per-sender). */
  pooled?: boolean;
  /** Why the node refused it (a tx later seen in a block counts as accepted, not rejected). */
  rejected?: string;
}

interface Dist {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

function dist(xs: number[]): Dist {
  const s = [...xs].sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 10) / 10;
  return {
    n: s.length,
    p50: r(percentile(s, 50)),
    p90: r(percentile(s, 90)),
    p99: r(percentile(s, 99)),
    max: r(s[s.length - 1] ?? NaN),
    mean: r(s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN),
  };
}

export interface TxStepReport {
  rate: number;
  duration_s: number;
  submitted: number;
  answered: number;
  accepted: number;
  committed: number;
  failed_in_block: number;
  rejected: number;
  rejected_by_reason: Record<string, number>;
  failed_by_reason: Record<string, number>;
  /** Accepted by the node but not seen in a block before the step settled. */
  pending: number;
  committed_tps: number;
  latency_ms: Dist | null;
  latency_seen_ms: Dist;
  send_lag_ms: Dist;
  block_interval_ms: Dist;
  blocks: number;
  saturated: boolean;
}

export interface TxReport {
  mode: 'tx';
  kind: string;
  target: string;
  connections: number;
  senders: number;
  steps: TxStepReport[];
  saturation: { max_sustained_rate: number | null; first_saturated_rate: number | null };
}

interface RunOpts {
  rates: number[];
  durationMs: number;
  connections: number;
  settleMs: number;
  /** A sender's accepted txs not yet in a block, at most (Infinity: no limit). */
  pendingPerSender: number;
  io: CliIo;
  quiet: boolean;
}

class Progress {
  private last = '';
  private lastAt = 0;
  constructor(
    private readonly io: CliIo,
    private readonly quiet: boolean,
  ) {}
  private get tty(): boolean {
    return process.stderr.isTTY === true && this.io.env === process.env;
  }
  show(line: string): void {
    if (this.quiet) return;
    if (this.tty) {
      this.io.err(`\r${line.padEnd(this.last.length)}`);
      this.last = line;
    } else if (Date.now() - this.lastAt >= 5000) {
      this.io.err(line + '\n');
      this.lastAt = Date.now();
    }
  }
  done(): void {
    if (!this.quiet && this.tty && this.last) this.io.err('\n');
    this.last = '';
  }
}

async function runTx(kind: TxKind, conns: Conn[], recs: Map<string, TxRec>, o: RunOpts, target: string): Promise<TxReport> {
  const progress = new Progress(o.io, o.quiet);
  /** Each sender's next sequence (nonce): moves on when the node takes a tx. */
  const seqOf = [...kind.nextSeq];
  const busy = new Array<boolean>(kind.senders).fill(false);
  const queued: number[][] = Array.from({ length: kind.senders }, () => []);
  /** Each sender's accepted txs not yet seen in a block; `onCommit` lets a held sender go on. */
  const inPool = new Array<number>(kind.senders).fill(0);
  let onCommit: (sender: number) => void = () => {};
  const blocks: BlockInfo[] = [];
  const latency: number[][] = o.rates.map(() => []);
  const latencySeen: number[][] = o.rates.map(() => []);
  const failures = o.rates.map(() => new Map<string, number>());
  let height = await kind.latestHeight();
  let watching = true;
  const lastCommitSeen = o.rates.map(() => 0);
  let watchError: unknown;
  const watcher = (async () => {
    while (watching) {
      try {
        const bs = await kind.blocksAfter(height);
        for (const b of bs) {
          blocks.push(b);
          height = b.height;
          for (const t of b.txs) {
            const r = recs.get(t.hash);
            if (!r || r.committed) continue;
            r.committed = true;
            r.accepted = true; // even if its answer was lost or said otherwise: the node took it
            if (r.pooled) {
              r.pooled = false;
              inPool[r.sender]!--;
              onCommit(r.sender);
            }
            if (t.failure !== null) {
              const m = failures[r.step]!;
              m.set(t.failure, (m.get(t.failure) ?? 0) + 1);
              continue;
            }
            if (b.timeMs !== null) latency[r.step]!.push(b.timeMs - r.schedMs);
            latencySeen[r.step]!.push(b.seenMs - r.schedMs);
            lastCommitSeen[r.step] = b.seenMs;
          }
        }
        if (bs.length === 0) await sleep(25);
      } catch (e) {
        watchError = e;
        await sleep(200);
      }
    }
  })();

  const steps: TxStepReport[] = [];
  try {
    for (let step = 0; step < o.rates.length; step++) {
      const rate = o.rates[step]!;
      const n = Math.max(1, Math.round((rate * o.durationMs) / 1000));
      const stepRecs: TxRec[] = [];
      const startHeight = height;
      const interval = 1000 / rate;
      // Pre-sign the step (signing is ~1 ms of JS per tx: done during the run it would limit the
      // rate and share the CPU with the node), each tx carrying its scheduled send time; so the
      // schedule starts once the signing is expected to be done.
      const c0 = performance.now();
      for (let k = 0; k < 5; k++) kind.sign(k % kind.senders, seqOf[k % kind.senders]!, Date.now());
      const perSign = (performance.now() - c0) / 5;
      const lead = 200 + perSign * n * 1.3;
      if (lead > 2000) note({ io: o.io, quiet: o.quiet } as KindContext, `signing ${n} txs (about ${(lead / 1000).toFixed(0)} s)`);
      const perf0 = performance.now() + lead;
      const wall0 = Date.now() + lead;
      const presigned: { signed: SignedTx; seq: bigint }[] = [];
      for (let k = 0; k < n; k++) {
        const s = k % kind.senders;
        const seq = seqOf[s]! + BigInt(Math.floor(k / kind.senders));
        presigned.push({ signed: kind.sign(s, seq, wall0 + k * interval), seq });
      }
      let i = 0;
      let answered = 0;
      const send = (k: number) => {
        const s = k % kind.senders;
        busy[s] = true;
        let p = presigned[k]!;
        // A rejection (or a lost answer) moved the sender's sequence: sign again.
        if (p.seq !== seqOf[s]) p = { signed: kind.sign(s, seqOf[s]!, wall0 + k * interval), seq: seqOf[s]! };
        const rec: TxRec = { step, sender: s, schedMs: wall0 + k * interval, lagMs: performance.now() - (perf0 + k * interval), answered: false, accepted: false, committed: false };
        recs.set(p.signed.hash, rec);
        stepRecs.push(rec);
        conns[s % conns.length]!.call(p.signed.method, p.signed.params).then(
          (a) => {
            const why = kind.verdict(a);
            if (why === null) {
              rec.accepted = true;
              seqOf[s] = p.seq + 1n;
              if (!rec.committed) {
                rec.pooled = true;
                inPool[s]!++;
              }
            } else {
              reject(rec, why);
              const expected = kind.expectedSeq(a);
              if (expected !== undefined) seqOf[s] = expected;
            }
            release(rec, s);
          },
          (e: Error) => {
            reject(rec, `transport: ${reasonKey(e.message)}`);
            release(rec, s);
          },
        );
      };
      const release = (rec: TxRec, s: number) => {
        rec.answered = true;
        answered++;
        busy[s] = false;
        next(s);
      };
      /** The sender's next queued tx, unless one is in flight or too many of its txs wait in the pool. */
      const next = (s: number) => {
        if (busy[s] || inPool[s]! >= o.pendingPerSender) return;
        const k = queued[s]!.shift();
        if (k !== undefined) send(k);
      };
      onCommit = next;
      // One tx in flight per sender: a sender's next tx waits for the answer to its previous one
      // (later sequences would fail behind a rejected one), and with --pending-per-sender for a
      // block to take one of its txs; its wait shows as lag behind the schedule.
      const fire = (k: number) => {
        const s = k % kind.senders;
        if (busy[s] || inPool[s]! >= o.pendingPerSender || queued[s]!.length > 0) queued[s]!.push(k);
        else send(k);
      };
      const reject = (rec: TxRec, why: string) => {
        if (!rec.committed) rec.rejected = why;
      };
      const rejectsNow = () => {
        const m = new Map<string, number>();
        for (const r of stepRecs) if (r.rejected !== undefined && !r.committed) m.set(r.rejected, (m.get(r.rejected) ?? 0) + 1);
        return m;
      };
      const counts = () => {
        let acc = 0;
        let com = 0;
        for (const r of stepRecs) {
          if (r.accepted) acc++;
          if (r.committed) com++;
        }
        let rej = 0;
        for (const r of stepRecs) if (r.rejected !== undefined && !r.committed) rej++;
        return { acc, com, rej };
      };
      const show = (phase: string) => {
        const c = counts();
        const t = Math.min(o.durationMs, performance.now() - perf0) / 1000;
        progress.show(
          `[${o.rates.length > 1 ? `step ${step + 1}/${o.rates.length} ` : ''}${rate} tx/s] ${phase} ${t.toFixed(1)}/${(o.durationMs / 1000).toFixed(0)} s  sent ${stepRecs.length}/${n}  accepted ${c.acc}  rejected ${c.rej}  committed ${c.com}  height ${height}`,
        );
      };
      // The schedule: a timer every few ms fires every tx whose time has come.
      await new Promise<void>((resolve) => {
        let lastShow = 0;
        const tick = () => {
          const now = performance.now();
          while (i < n && perf0 + i * interval <= now) fire(i++);
          if (now - lastShow > 250) {
            show('sending');
            lastShow = now;
          }
          if (i >= n) resolve();
          else setTimeout(tick, Math.max(0, Math.min(5, perf0 + i * interval - performance.now())));
        };
        setTimeout(tick, Math.max(0, perf0 - performance.now()));
      });
      const sentAt = performance.now();
      // Every answer, then every accepted tx in a block, or no commit progress for settleMs.
      const answersBy = performance.now() + 120_000;
      while (answered < n && performance.now() < answersBy) {
        show('answers');
        await sleep(50);
      }
      let lastCom = -1;
      let lastProgress = performance.now();
      for (;;) {
        const c = counts();
        if (c.com >= c.acc) break;
        if (c.com !== lastCom) {
          lastCom = c.com;
          lastProgress = performance.now();
        } else if (performance.now() - lastProgress > o.settleMs) break;
        show('settling');
        await sleep(100);
      }
      progress.done();
      const c = counts();
      let failedInBlock = 0;
      for (const v of failures[step]!.values()) failedInBlock += v;
      const stepBlocks = blocks.filter((b) => b.height > startHeight);
      const intervals: number[] = [];
      for (let k = 1; k < stepBlocks.length; k++) {
        const a = stepBlocks[k - 1]!;
        const b = stepBlocks[k]!;
        intervals.push(a.timeMs !== null && b.timeMs !== null ? b.timeMs - a.timeMs : b.seenMs - a.seenMs);
      }
      const committedOk = c.com - failedInBlock;
      const span = Math.max(o.durationMs, lastCommitSeen[step]! - wall0) / 1000;
      const tps = committedOk / span;
      const lag = dist(stepRecs.map((r) => r.lagMs));
      // Saturated: refusals, txs lost or late, or the sends themselves fell a second behind the
      // schedule (senders waiting on slow answers).
      const saturated = c.rej > 0 || committedOk < 0.95 * n || tps < 0.9 * rate || sentAt - perf0 > o.durationMs * 1.1 || lag.p90 > 1000;
      steps.push({
        rate,
        duration_s: o.durationMs / 1000,
        submitted: n,
        answered: stepRecs.filter((r) => r.answered).length,
        accepted: c.acc,
        committed: c.com,
        failed_in_block: failedInBlock,
        rejected: c.rej,
        rejected_by_reason: Object.fromEntries(rejectsNow()),
        failed_by_reason: Object.fromEntries(failures[step]!),
        pending: c.acc - c.com,
        committed_tps: Math.round(tps * 10) / 10,
        latency_ms: latency[step]!.length ? dist(latency[step]!) : null,
        latency_seen_ms: dist(latencySeen[step]!),
        send_lag_ms: lag,
        block_interval_ms: dist(intervals),
        blocks: stepBlocks.length,
        saturated,
      });
    }
  } finally {
    watching = false;
    await watcher;
  }
  if (steps.every((s) => s.committed === 0) && watchError) throw watchError;
  let maxSustained: number | null = null;
  let firstSaturated: number | null = null;
  for (const s of steps) {
    if (!s.saturated && firstSaturated === null) maxSustained = s.rate;
    if (s.saturated && firstSaturated === null) firstSaturated = s.rate;
  }
  return {
    mode: 'tx',
    kind: kind.name,
    target,
    connections: conns.length,
    senders: kind.senders,
    steps,
    saturation: { max_sustained_rate: maxSustained, first_saturated_rate: firstSaturated },
  };
}

// ---- read mode -----------------------------------------------------------------------------------

/** One request; resolves null when it succeeded, else the failure reason. */
type Requester = () => Promise<string | null>;

export interface ReadStepReport {
  rate: number | null;
  duration_s: number;
  requests: number;
  ok: number;
  errors: number;
  errors_by_reason: Record<string, number>;
  req_per_s: number;
  latency_ms: Dist;
}

export interface ReadReport {
  mode: 'read';
  method: string;
  target: string;
  connections: number;
  steps: ReadStepReport[];
}

async function makeRequesters(method: string, values: Record<string, unknown>, n: number, mnemonic: string): Promise<{ target: string; reqs: Requester[]; close: () => void }> {
  const dev = devAccounts({ mnemonic, count: 1 });
  const eth0 = dev.find((a) => a.keyType === 'eth_secp256k1')!;
  const cosmos0 = dev.find((a) => a.keyType === 'secp256k1')!;
  if (method.startsWith('rest:')) {
    const base = new URL(endpoint((values['api'] as string | undefined) ?? 'http://127.0.0.1:1317'));
    const path = method.slice('rest:'.length);
    const reqs = Array.from({ length: n }, () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const r: Requester = () =>
        new Promise((resolve) => {
          const req = http.get({ host: base.hostname, port: Number(base.port || 80), path, agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode === 200 ? null : `HTTP ${res.statusCode}`));
          });
          req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
          req.on('error', (e) => resolve(`transport: ${reasonKey(e.message)}`));
        });
      return Object.assign(r, { agent });
    });
    return { target: `${base.origin}${path}`, reqs, close: () => reqs.forEach((r) => r.agent.destroy()) };
  }
  if (method.startsWith('grpc:')) {
    const addr = (values['grpc'] as string | undefined) ?? '127.0.0.1:9090';
    const path = method.slice('grpc:'.length);
    const msg = Buffer.from(((values['data'] as string | undefined) ?? '').replace(/^0x/, ''), 'hex');
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt32BE(msg.length, 1);
    msg.copy(frame, 5);
    const sessions = Array.from({ length: n }, () => http2.connect(`http://${addr.replace(/^(tcp|http):\/\//, '')}`));
    for (const s of sessions) s.on('error', () => {});
    const reqs = sessions.map(
      (sess): Requester =>
        () =>
          new Promise((resolve) => {
            let status: string | undefined;
            const st = sess.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
            st.on('response', (h) => {
              if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
            });
            st.on('trailers', (h) => (status = String(h['grpc-status'] ?? status)));
            st.on('data', () => {});
            st.on('end', () => resolve(status === '0' ? null : `grpc-status ${status ?? 'missing'}`));
            st.on('error', (e) => resolve(`transport: ${reasonKey(e.message)}`));
            st.end(frame);
          }),
    );
    return { target: `grpc://${addr}${path}`, reqs, close: () => sessions.forEach((s) => s.close()) };
  }
  const isEth = method.startsWith('eth_') || method.startsWith('net_') || method.startsWith('web3_') || method.startsWith('debug_') || method.startsWith('txpool_');
  const url = isEth ? endpoint((values['evm-rpc'] as string | undefined) ?? 'http://127.0.0.1:8545') : endpoint((values['node'] as string | undefined) ?? DEFAULT_NODE);
  let params: unknown;
  if (values['params'] !== undefined) {
    try {
      params = JSON.parse(values['params'] as string);
    } catch {
      throw new UsageError('--params: not JSON');
    }
  } else if (method === 'eth_call') params = [{ to: eth0.hex, data: '0x' }, 'latest'];
  else if (method === 'eth_getBalance') params = [eth0.hex, 'latest'];
  else if (method === 'abci_query') {
    const data = (values['data'] as string | undefined) ?? Buffer.from(toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address: cosmos0.bech32 }))).toString('hex');
    params = { path: (values['path'] as string | undefined) ?? '/chain.auth.v1beta1.Query/Account', data: data.replace(/^0x/, ''), height: '0', prove: false };
  } else params = isEth ? [] : {};
  const conns = await Promise.all(Array.from({ length: n }, () => openConn(url)));
  const reqs = conns.map(
    (c): Requester =>
      async () => {
        try {
          const a = await c.call(method, params);
          if (a.error) return `rpc: ${reasonKey(a.error.message ?? JSON.stringify(a.error))}`;
          if (method === 'abci_query' && a.result?.response?.code) return `code ${a.result.response.code}: ${reasonKey(a.result.response.log ?? '')}`;
          return null;
        } catch (e) {
          return `transport: ${reasonKey((e as Error).message)}`;
        }
      },
  );
  return { target: url, reqs, close: () => conns.forEach((c) => c.close()) };
}

async function runRead(reqs: Requester[], rates: (number | null)[], o: RunOpts, method: string, target: string): Promise<ReadReport> {
  const progress = new Progress(o.io, o.quiet);
  const steps: ReadStepReport[] = [];
  for (let step = 0; step < rates.length; step++) {
    const rate = rates[step]!;
    const lat: number[] = [];
    const errs = new Map<string, number>();
    let requests = 0;
    const t0 = performance.now();
    const end = t0 + o.durationMs;
    const one = async (r: Requester, sched: number) => {
      requests++;
      const why = await r();
      if (why === null) lat.push(performance.now() - sched);
      else errs.set(why, (errs.get(why) ?? 0) + 1);
    };
    const timer = setInterval(() => {
      const t = (performance.now() - t0) / 1000;
      progress.show(`[${method}${rate ? ` ${rate} req/s` : ''}] ${Math.min(t, o.durationMs / 1000).toFixed(1)}/${(o.durationMs / 1000).toFixed(0)} s  ${requests} requests  ${(lat.length / Math.max(t, 0.001)).toFixed(0)} ok/s  errors ${requests - lat.length}`);
    }, 250);
    if (rate === null) {
      await Promise.all(
        reqs.map(async (r) => {
          while (performance.now() < end) await one(r, performance.now());
        }),
      );
    } else {
      const interval = 1000 / rate;
      const n = Math.round((rate * o.durationMs) / 1000);
      const inflight: Promise<void>[] = [];
      let i = 0;
      await new Promise<void>((resolve) => {
        const tick = () => {
          const now = performance.now();
          while (i < n && t0 + i * interval <= now) {
            inflight.push(one(reqs[i % reqs.length]!, t0 + i * interval));
            i++;
          }
          if (i >= n) resolve();
          else setTimeout(tick, Math.max(0, Math.min(5, t0 + i * interval - performance.now())));
        };
        tick();
      });
      await Promise.race([Promise.allSettled(inflight), deadline(60_000)]);
    }
    clearInterval(timer);
    progress.done();
    const secs = (performance.now() - t0) / 1000;
    let errors = 0;
    for (const v of errs.values()) errors += v;
    steps.push({
      rate,
      duration_s: Math.round(secs * 100) / 100,
      requests,
      ok: lat.length,
      errors,
      errors_by_reason: Object.fromEntries(errs),
      req_per_s: Math.round((lat.length / secs) * 10) / 10,
      latency_ms: dist(lat),
    });
  }
  return { mode: 'read', method, target, connections: reqs.length, steps };
}

// ---- the report ------------------------------------------------------------------------------------

const fmt = (d: Dist | null) => (d && d.n > 0 ? `p50 ${d.p50}  p90 ${d.p90}  p99 ${d.p99}  max ${d.max} ms` : 'n/a');

export function formatReport(r: TxReport | ReadReport): string {
  const lines: string[] = [];
  if (r.mode === 'read') {
    lines.push(`${r.method} → ${r.target}, ${r.connections} connections`);
    for (const s of r.steps) {
      lines.push(`  ${s.rate === null ? 'closed loop' : `${s.rate} req/s offered`}: ${s.requests} requests in ${s.duration_s} s, ${s.ok} ok, ${s.errors} errors → ${s.req_per_s} req/s`);
      lines.push(`    latency ${fmt(s.latency_ms)}`);
      for (const [k, v] of Object.entries(s.errors_by_reason)) lines.push(`    ${v}× ${k}`);
    }
    return lines.join('\n') + '\n';
  }
  lines.push(`${r.kind} → ${r.target}, ${r.connections} connections, ${r.senders} senders`);
  for (const s of r.steps) {
    lines.push(`  ${s.rate} tx/s for ${s.duration_s} s${s.saturated ? '  (saturated)' : ''}`);
    lines.push(`    submitted ${s.submitted}  accepted ${s.accepted}  rejected ${s.rejected}  committed ${s.committed} (failed in block ${s.failed_in_block})  not committed ${s.pending}`);
    lines.push(`    committed ${s.committed_tps} tx/s over ${s.blocks} blocks`);
    lines.push(`    latency, block time - send time: ${fmt(s.latency_ms)}`);
    lines.push(`    latency, block seen - send time: ${fmt(s.latency_seen_ms)}`);
    lines.push(`    block interval: ${fmt(s.block_interval_ms)}; sender lag behind schedule: ${fmt(s.send_lag_ms)}`);
    for (const [k, v] of Object.entries(s.rejected_by_reason)) lines.push(`    rejected ${v}× ${k}`);
    for (const [k, v] of Object.entries(s.failed_by_reason)) lines.push(`    failed in block ${v}× ${k}`);
  }
  if (r.steps.length > 1) {
    lines.push(`  saturation: sustained up to ${r.saturation.max_sustained_rate ?? 'none'} tx/s; first saturated step ${r.saturation.first_saturated_rate ?? 'none'} tx/s`);
  }
  return lines.join('\n') + '\n';
}

// ---- the command ---------------------------------------------------------------------------------

export async function runLoadtest(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, OPTIONS);
  if (values.help) {
    io.out(LOADTEST_USAGE);
    return EXIT_OK;
  }
  const kindName = values.kind as string | undefined;
  const method = values.method as string | undefined;
  if ((kindName === undefined) === (method === undefined)) throw new UsageError('give one of --kind (tx mode) or --method (read mode)');
  if (kindName !== undefined && !['bank-send', 'eth-transfer', 'erc20-transfer'].includes(kindName)) throw new UsageError(`--kind: want bank-send, eth-transfer or erc20-transfer, got "${kindName}"`);
  const durationMs = parseDuration((values.duration as string | undefined) ?? '10s');
  const settleMs = parseDuration((values.settle as string | undefined) ?? '10s', '--settle');
  const connections = positiveInt(values.connections, '--connections', 4);
  const quiet = values.quiet === true;
  const mnemonic = (values.mnemonic as string | undefined) ?? DEV_MNEMONIC;
  const pendingPerSender = values['pending-per-sender'] === undefined ? Infinity : positiveInt(values['pending-per-sender'], '--pending-per-sender', 1);
  const runOpts = (rates: number[]): RunOpts => ({ rates, durationMs, connections, settleMs, pendingPerSender, io, quiet });
  let report: TxReport | ReadReport;
  if (method !== undefined) {
    const rates: (number | null)[] = values.rate === undefined ? [null] : parseRate(values.rate as string);
    const { target, reqs, close } = await makeRequesters(method, values, connections, mnemonic);
    try {
      report = await runRead(reqs, rates, runOpts([]), method, target);
    } finally {
      close();
    }
  } else {
    const rates = parseRate((values.rate as string | undefined) ?? '100');
    const senders = positiveInt(values.accounts, '--accounts', 32);
    const isBank = kindName === 'bank-send';
    const target = endpoint(isBank ? ((values.node as string | undefined) ?? DEFAULT_NODE) : ((values['evm-rpc'] as string | undefined) ?? 'http://127.0.0.1:8545'));
    const recs = new Map<string, TxRec>();
    const ctx: KindContext = { io, quiet, senders, mnemonic, ours: (h) => recs.has(h) };
    const conns: Conn[] = [];
    const setup = await openConn(target);
    const watch = await openConn(target);
    try {
      for (let i = 0; i < connections; i++) conns.push(await openConn(target));
      let fees: Coin[] = [];
      if (values.fees !== undefined) fees = (await import('./tx.js')).parseCoins(values.fees as string);
      const kind = isBank ? await bankSendKind(ctx, target, setup, watch, (values.denom as string | undefined) ?? 'achain', fees) : await evmKind(ctx, kindName as 'eth-transfer' | 'erc20-transfer', setup, watch);
      report = await runTx(kind, conns, recs, runOpts(rates), target);
    } finally {
      for (const c of [setup, watch, ...conns]) c.close();
    }
  }
  io.out(values.json ? JSON.stringify(report) + '\n' : formatReport(report));
  return EXIT_OK;
}
