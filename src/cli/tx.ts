/**
 * `chaind tx`: build, sign and broadcast protobuf transactions, in the shape of the Cosmos SDK
 * CLI (cosmos-sdk: client/tx/tx.go GenerateOrBroadcastTxCLI, client/flags/flags.go,
 * x/bank/client/cli/tx.go, x/authz/client/cli/tx.go).
 *
 *   tx bank send <from> <to> <amount>
 *   tx authz grant <grantee> send|generic [--spend-limit C] [--allow-list A,B] [--msg-type URL]
 *                  [--expiration T] --from K
 *   tx authz exec <tx.json> --from K       (tx.json: a tx from --generate-only; its messages are
 *                                           wrapped in one MsgExec signed by --from, the grantee)
 *   tx authz revoke <grantee> <msg-type-url> --from K
 *
 * The tx (cosmos/cosmos-sdk:proto/cosmos/tx/v1beta1/tx.proto, cosmos/cosmos-sdk:x/auth/tx/direct.go): TxBody{messages, memo, timeout_height},
 * AuthInfo{one SignerInfo{public key Any, mode DIRECT or LEGACY_AMINO_JSON, sequence}, Fee{amount,
 * gas_limit, payer, granter}}, signed by the keyring (secp256k1: ECDSA/SHA-256; eth_secp256k1:
 * ECDSA/Keccak-256; 64-byte low-S r‖s), sent as TxRaw. Account number and sequence come from
 * `--account-number`/`--sequence` or the node (auth Query/Account over abci_query). The chain id
 * comes from `--chain-id`, else the genesis in --home, else the node's /status.
 *
 * Gas: `--gas N` (default 200000) or `--gas auto`: the node's tx Service/Simulate over abci_query
 * (`/chain.tx.v1beta1.Service/Simulate`), gas used × `--gas-adjustment` (default 1). A node that
 * does not serve Simulate answers `unknown query path`; then `auto` fails with a message asking for
 * a number. Fees: `--fees 500achain`, or `--gas-prices 0.1achain` (fee = ceil(price × gas)), not
 * both.
 *
 * Broadcast: node RPC `broadcast_tx_sync` (default), `broadcast_tx_async` or `broadcast_tx_commit`
 * (`--broadcast-mode sync|async|commit`; upstream dropped block/commit mode in v0.47, chaind keeps
 * it because the node RPC has broadcast_tx_commit). The answer prints as the SDK's TxResponse JSON
 * (`--output json`, the default) or YAML (`--output text`). Unlike upstream, a tx whose CheckTx or
 * DeliverTx code is non-zero makes the command exit 1 (after printing the TxResponse), so scripts
 * can test `$?`.
 *
 * `--generate-only` prints the unsigned tx as protobuf JSON (for `tx authz exec` or offline
 * signing) and needs neither keyring nor node, unless `--gas auto`. On a terminal the tx is shown
 * and confirmed before signing unless `--yes`; without a terminal `--yes` is implied.
 */
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { timestampFromMs, type Any, type Timestamp } from '@bufbuild/protobuf/wkt';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bech32Codec } from '../app/address.js';
import { loadConfig } from '../config/load.js';
import { BaseAccountSchema, ModuleAccountSchema, type BaseAccount } from '../gen/chain/auth/v1beta1/auth_pb.js';
import { QueryAccountRequestSchema, QueryAccountResponseSchema } from '../gen/chain/auth/v1beta1/query_pb.js';
import { GenericAuthorizationSchema, GrantSchema } from '../gen/chain/authz/v1beta1/authz_pb.js';
import { MsgExecSchema, MsgGrantSchema, MsgRevokeSchema } from '../gen/chain/authz/v1beta1/tx_pb.js';
import { SendAuthorizationSchema } from '../gen/chain/bank/v1beta1/authz_pb.js';
import { MsgSendSchema } from '../gen/chain/bank/v1beta1/tx_pb.js';
import { CoinSchema, type Coin } from '../gen/chain/base/v1beta1/coin_pb.js';
import { SignMode } from '../gen/chain/tx/signing/v1beta1/signing_pb.js';
import { SimulateRequestSchema, SimulateResponseSchema } from '../gen/chain/tx/v1beta1/service_pb.js';
import { AuthInfoSchema, FeeSchema, ModeInfoSchema, SignerInfoSchema, TxBodySchema, TxSchema, type AuthInfo, type TxBody } from '../gen/chain/tx/v1beta1/tx_pb.js';
import { BECH32_PREFIX } from '../names/index.js';
import { fromProtoJson, goJsonStringify, toProtoJson } from '../proto/json.js';
import { anyIs, packAny } from '../proto/registry.js';
import { encodeAuthInfo, encodeTxBody, encodeTxRaw, txHash } from '../tx/codec.js';
import { encodePubKey } from '../tx/pubkey.js';
import { signBytesDirect, signBytesLegacyAmino } from '../tx/signbytes.js';
import { KeyringError, type KeyRecord } from '../keys/keyring.js';
import {
  CliError,
  confirm,
  DEFAULT_NODE,
  grpcQuery,
  KEYRING_OPTIONS,
  nodeUrl,
  openKeyring,
  outputFormat,
  printValue,
  QueryError,
  readStdin,
  RpcClient,
  stdinIsTty,
  uintFlag,
} from './client.js';
import { type CliIo, EXIT_FAILURE, EXIT_OK, parse, resolveHome, UsageError } from './common.js';

export const DEFAULT_GAS = 200_000n;
const SIMULATE_PATH = '/chain.tx.v1beta1.Service/Simulate';
const ACCOUNT_PATH = '/chain.auth.v1beta1.Query/Account';

export const TX_USAGE = `Usage: chaind tx <module> <command> [args] [options]

Commands:
  bank send <from> <to> <amount>                 send coins (<from>: key name or address)
  authz grant <grantee> send|generic --from K    grant an authorization
      --spend-limit COINS   (send) the most the grantee may send, e.g. 1000achain
      --allow-list A,B      (send) the only recipients allowed
      --msg-type URL        (generic) the message type allowed, e.g. /chain.bank.v1beta1.MsgSend
      --expiration T        Unix seconds or RFC 3339 time; none by default
  authz exec <tx.json> --from K                  execute the messages of a --generate-only tx
                                                 as grantee ('-' reads stdin)
  authz revoke <grantee> <msg-type-url> --from K revoke a grant

Options:
  --from NAME|ADDRESS           signer (key name, or an address with --generate-only)
  --chain-id ID                 default: the genesis in --home, else the node's network
  --node URL                    node RPC (default tcp://127.0.0.1:26657)
  --gas N|auto                  gas limit (default 200000); auto simulates on the node
  --gas-adjustment F            factor on the simulated gas (default 1)
  --fees COINS                  fee, e.g. 500achain
  --gas-prices DECCOINS         fee = ceil(price × gas), e.g. 0.1achain
  --fee-payer ADDR, --fee-granter ADDR
  --memo TEXT (alias --note)    memo
  --timeout-height N            block height after which the tx is invalid
  --sign-mode direct|amino-json signing mode (default direct)
  -a, --account-number N        skip the account query
  -s, --sequence N              skip the account query
  --generate-only               print the unsigned tx JSON, do not sign or broadcast
  --dry-run                     simulate and print the gas estimate, do not broadcast
  -y, --yes                     do not ask for confirmation (implied without a terminal)
  -b, --broadcast-mode sync|async|commit   default sync
  -o, --output json|text        default json
  --home DIR, --keyring-backend file|test, --keyring-dir DIR, --keyring-passphrase P
`;

export const TX_OPTIONS = {
  from: { type: 'string' },
  'chain-id': { type: 'string' },
  node: { type: 'string' },
  gas: { type: 'string' },
  'gas-adjustment': { type: 'string' },
  fees: { type: 'string' },
  'gas-prices': { type: 'string' },
  'fee-payer': { type: 'string' },
  'fee-granter': { type: 'string' },
  memo: { type: 'string' },
  note: { type: 'string' },
  'timeout-height': { type: 'string' },
  'sign-mode': { type: 'string' },
  'account-number': { type: 'string', short: 'a' },
  sequence: { type: 'string', short: 's' },
  'generate-only': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  'broadcast-mode': { type: 'string', short: 'b' },
  output: { type: 'string', short: 'o' },
  home: { type: 'string' },
  ...KEYRING_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

const ADDR = new Bech32Codec(BECH32_PREFIX);

function checkAddress(what: string, s: string): string {
  const r = ADDR.tryDecode(s);
  if ('error' in r) throw new CliError(`invalid ${what} address ${s}: ${r.error}`, 'INVALID_ADDRESS');
  return s;
}

// ---- coins ----

const COIN_RE = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z][a-zA-Z0-9/:._-]{2,127})$/;

/** `10achain,5foo` → sorted coins, zero amounts dropped (types/coin.go ParseCoinsNormalized);
 * decimal amounts are refused. */
export function parseCoins(s: string): Coin[] {
  const text = s.trim();
  if (text === '') return [];
  const m = new Map<string, bigint>();
  for (const part of text.split(',')) {
    const c = COIN_RE.exec(part.trim());
    if (!c) throw new CliError(`invalid decimal coin expression: ${part.trim()}`, 'INVALID_COINS');
    if (c[1]!.includes('.')) {
      const [i, f = ''] = c[1]!.split('.');
      if (/[1-9]/.test(f)) throw new CliError(`invalid coin expression: ${part.trim()}: amount must be an integer`, 'INVALID_COINS');
      c[1] = i === '' ? '0' : i!;
    }
    const denom = c[2]!;
    if (m.has(denom)) throw new CliError(`duplicate denomination ${denom}`, 'INVALID_COINS');
    m.set(denom, BigInt(c[1]!));
  }
  return [...m.entries()]
    .filter(([, a]) => a > 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([denom, amount]) => create(CoinSchema, { denom, amount: amount.toString() }));
}

const DEC_PRECISION = 18n;
const DEC_ONE = 10n ** DEC_PRECISION;

/** `0.025achain` → [{denom, amount scaled by 10^18}]. */
export function parseDecCoins(s: string): { denom: string; amount: bigint }[] {
  const out: { denom: string; amount: bigint }[] = [];
  for (const part of s.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const c = COIN_RE.exec(part);
    if (!c) throw new CliError(`invalid decimal coin expression: ${part}`, 'INVALID_COINS');
    const [i = '', f = ''] = c[1]!.split('.');
    if (f.length > Number(DEC_PRECISION)) throw new CliError(`invalid decimal coin expression: ${part}: too many decimal places`, 'INVALID_COINS');
    out.push({ denom: c[2]!, amount: BigInt(i === '' ? '0' : i) * DEC_ONE + BigInt(f.padEnd(Number(DEC_PRECISION), '0') || '0') });
  }
  return out;
}

/** Fee from gas prices: ceil(price × gas) per denom (client/tx/factory.go BuildUnsignedTx). */
export function feeFromGasPrices(prices: { denom: string; amount: bigint }[], gas: bigint): Coin[] {
  return prices
    .map(({ denom, amount }) => ({ denom, amount: (amount * gas + DEC_ONE - 1n) / DEC_ONE }))
    .filter((c) => c.amount > 0n)
    .sort((a, b) => (a.denom < b.denom ? -1 : a.denom > b.denom ? 1 : 0))
    .map((c) => create(CoinSchema, { denom: c.denom, amount: c.amount.toString() }));
}

// ---- chain id, accounts ----

function chainIdFromGenesis(home: string): string | undefined {
  let file = join(home, 'config', 'genesis.json');
  try {
    file = loadConfig({ home }).paths.genesis;
  } catch {
    // An unreadable config.toml: try the default genesis path.
  }
  try {
    const j = JSON.parse(readFileSync(file, 'utf8')) as { chain_id?: unknown };
    return typeof j.chain_id === 'string' && j.chain_id !== '' ? j.chain_id : undefined;
  } catch {
    return undefined;
  }
}

export interface AccountInfo {
  address: string;
  accountNumber: bigint;
  sequence: bigint;
}

/** The auth account of an address, through abci_query (BaseAccount or ModuleAccount). */
export async function queryAccount(rpc: RpcClient, address: string): Promise<AccountInfo> {
  let value: Uint8Array;
  try {
    ({ value } = await grpcQuery(rpc, ACCOUNT_PATH, toBinary(QueryAccountRequestSchema, create(QueryAccountRequestSchema, { address }))));
  } catch (e) {
    if (e instanceof QueryError && e.notFound) throw new CliError(`account ${address} not found: ${e.message}`, 'ACCOUNT_NOT_FOUND');
    throw e;
  }
  const any = fromBinary(QueryAccountResponseSchema, value).account;
  if (any === undefined) throw new CliError(`account ${address} not found`, 'ACCOUNT_NOT_FOUND');
  let base: BaseAccount | undefined;
  if (anyIs(any, BaseAccountSchema)) base = fromBinary(BaseAccountSchema, any.value);
  else if (anyIs(any, ModuleAccountSchema)) base = fromBinary(ModuleAccountSchema, any.value).baseAccount;
  if (base === undefined) throw new CliError(`unsupported account type ${any.typeUrl}`, 'ACCOUNT_TYPE');
  return { address: base.address, accountNumber: base.accountNumber, sequence: base.sequence };
}

// ---- building and signing ----

export type SignModeName = 'direct' | 'amino-json';

export interface TxPlan {
  msgs: Any[];
  memo: string;
  timeoutHeight: bigint;
  fee: Coin[];
  gas: bigint;
  payer: string;
  granter: string;
}

export function buildBody(plan: TxPlan): TxBody {
  return create(TxBodySchema, { messages: plan.msgs, memo: plan.memo, timeoutHeight: plan.timeoutHeight });
}

export function buildAuthInfo(plan: TxPlan, signer?: { pubKey: Any | undefined; sequence: bigint; mode: SignMode }): AuthInfo {
  return create(AuthInfoSchema, {
    signerInfos: signer
      ? [
          create(SignerInfoSchema, {
            ...(signer.pubKey !== undefined ? { publicKey: signer.pubKey } : {}),
            modeInfo: create(ModeInfoSchema, { sum: { case: 'single', value: { mode: signer.mode } } }),
            sequence: signer.sequence,
          }),
        ]
      : [],
    fee: create(FeeSchema, { amount: plan.fee, gasLimit: plan.gas, payer: plan.payer, granter: plan.granter }),
  });
}

function signModeOf(name: SignModeName): SignMode {
  return name === 'amino-json' ? SignMode.LEGACY_AMINO_JSON : SignMode.DIRECT;
}

export function pubKeyAnyOf(rec: KeyRecord): Any {
  return encodePubKey({ algo: rec.algo, key: rec.pubKey });
}

/** Node RPC broadcast → the SDK's TxResponse JSON. */
export async function broadcast(rpc: RpcClient, txBytes: Uint8Array, mode: 'sync' | 'async' | 'commit'): Promise<Record<string, unknown>> {
  const tx = Buffer.from(txBytes).toString('base64');
  const hash = txHash(txBytes);
  const base = { height: '0', txhash: hash, codespace: '', code: 0, data: '', raw_log: '', logs: [], info: '', gas_wanted: '0', gas_used: '0', tx: null, timestamp: '', events: [] as unknown[] };
  if (mode === 'async' || mode === 'sync') {
    const r = await rpc.call<{ code: number; data: string; log: string; codespace: string; hash: string }>(`broadcast_tx_${mode}`, { tx });
    return { ...base, txhash: r.hash || hash, codespace: r.codespace ?? '', code: r.code ?? 0, data: r.data ?? '', raw_log: r.log ?? '' };
  }
  const r = await rpc.call<{ check_tx: any; tx_result: any; hash: string; height: string }>('broadcast_tx_commit', { tx });
  const res = (r.check_tx?.code ?? 0) !== 0 ? r.check_tx : r.tx_result;
  const dataHex = res?.data ? Buffer.from(res.data as string, 'base64').toString('hex').toUpperCase() : '';
  return {
    ...base,
    height: r.height ?? '0',
    txhash: r.hash || hash,
    codespace: res?.codespace ?? '',
    code: res?.code ?? 0,
    data: dataHex,
    raw_log: res?.log ?? '',
    info: res?.info ?? '',
    gas_wanted: res?.gas_wanted ?? '0',
    gas_used: res?.gas_used ?? '0',
    events: res?.events ?? [],
  };
}

interface Ctx {
  io: CliIo;
  values: Record<string, unknown>;
}

function rpcOf(values: Record<string, unknown>): RpcClient {
  return new RpcClient(nodeUrl((values['node'] as string | undefined) ?? DEFAULT_NODE));
}

/**
 * The signer named by `--from` (or the bank send positional): a keyring key, or, with
 * --generate-only, any valid address.
 */
function resolveFrom(ctx: Ctx, from: string | undefined): { address: string; record?: KeyRecord } {
  if (from === undefined || from === '') throw new UsageError('--from is required');
  const generateOnly = ctx.values['generate-only'] === true;
  try {
    const record = openKeyring(ctx.values, ctx.io).get(from);
    return { address: record.bech32, record };
  } catch (e) {
    if (!(e instanceof KeyringError && e.code === 'KEY_NOT_FOUND')) throw e;
    if (generateOnly && !('error' in ADDR.tryDecode(from))) return { address: from };
    throw e;
  }
}

/**
 * GenerateOrBroadcastTxCLI: fees and gas, then print (generate-only), simulate (dry-run), or
 * sign and broadcast.
 */
export async function generateOrBroadcast(ctx: Ctx, signer: { address: string; record?: KeyRecord }, msgs: Any[]): Promise<number> {
  const { io, values } = ctx;
  const format = outputFormat(values['output'], 'json');
  const memo = (values['memo'] ?? values['note'] ?? '') as string;
  const signModeName = ((values['sign-mode'] as string | undefined) ?? 'direct') as SignModeName;
  if (signModeName !== 'direct' && signModeName !== 'amino-json') throw new UsageError(`--sign-mode: want direct or amino-json, got "${signModeName}"`);
  const mode = ((values['broadcast-mode'] as string | undefined) ?? 'sync') as 'sync' | 'async' | 'commit';
  if (!['sync', 'async', 'commit'].includes(mode)) throw new UsageError(`--broadcast-mode: want sync, async or commit, got "${mode}"`);
  if (values['fees'] !== undefined && values['gas-prices'] !== undefined) throw new CliError('cannot provide both fees and gas prices', 'INVALID_FEES');
  const gasText = (values['gas'] as string | undefined) ?? String(DEFAULT_GAS);
  const auto = gasText === 'auto' || values['dry-run'] === true;
  let gas = DEFAULT_GAS;
  if (gasText !== 'auto') {
    const g = uintFlag('gas', gasText);
    if (g === undefined) throw new UsageError('--gas: want a number or auto');
    gas = g;
  }
  const adjText = (values['gas-adjustment'] as string | undefined) ?? '1';
  if (!/^[0-9]+(\.[0-9]+)?$/.test(adjText)) throw new UsageError(`--gas-adjustment: want a positive number, got "${adjText}"`);
  const payer = (values['fee-payer'] as string | undefined) ?? '';
  const granter = (values['fee-granter'] as string | undefined) ?? '';
  if (payer !== '') checkAddress('fee payer', payer);
  if (granter !== '') checkAddress('fee granter', granter);
  const plan: TxPlan = {
    msgs,
    memo,
    timeoutHeight: uintFlag('timeout-height', values['timeout-height']) ?? 0n,
    fee: values['fees'] !== undefined ? parseCoins(values['fees'] as string) : [],
    gas,
    payer,
    granter,
  };
  const prices = values['gas-prices'] !== undefined ? parseDecCoins(values['gas-prices'] as string) : undefined;
  const generateOnly = values['generate-only'] === true;
  const rpc = rpcOf(values);
  let accountNumber = uintFlag('account-number', values['account-number']);
  let sequence = uintFlag('sequence', values['sequence']);
  const needAccount = !generateOnly || auto;
  if (needAccount && (accountNumber === undefined || sequence === undefined)) {
    const acc = await queryAccount(rpc, signer.address);
    accountNumber ??= acc.accountNumber;
    sequence ??= acc.sequence;
  }
  const mode_ = signModeOf(signModeName);

  if (auto) {
    plan.gas = await simulateGas(rpc, plan, signer.record, sequence ?? 0n, mode_, adjText);
    if (values['dry-run'] === true) {
      io.err(`gas estimate: ${plan.gas}\n`);
      return EXIT_OK;
    }
    io.err(`estimated gas: ${plan.gas}\n`);
  }
  if (prices !== undefined) plan.fee = feeFromGasPrices(prices, plan.gas);

  if (generateOnly) {
    const tx = create(TxSchema, { body: buildBody(plan), authInfo: buildAuthInfo(plan), signatures: [] });
    printValue(io, toProtoJson(TxSchema, tx), format);
    return EXIT_OK;
  }
  if (signer.record === undefined) throw new CliError(`${signer.address}.info: key not found`, 'KEY_NOT_FOUND');
  const chainId = await resolveChainId(values, io, rpc);

  if (values['yes'] !== true && stdinIsTty(io)) {
    const unsigned = create(TxSchema, { body: buildBody(plan), authInfo: buildAuthInfo(plan), signatures: [] });
    io.err(goJsonStringify(toProtoJson(TxSchema, unsigned)) + '\n\n');
    if (!(await confirm('confirm transaction before signing and broadcasting'))) {
      io.err('canceled transaction\n');
      return EXIT_OK;
    }
  }

  const body = buildBody(plan);
  const authInfo = buildAuthInfo(plan, { pubKey: pubKeyAnyOf(signer.record), sequence: sequence!, mode: mode_ });
  const bodyBytes = encodeTxBody(body);
  const authInfoBytes = encodeAuthInfo(authInfo);
  const signBytes =
    signModeName === 'direct' ? signBytesDirect(bodyBytes, authInfoBytes, chainId, accountNumber!) : signBytesLegacyAmino({ body, authInfo }, chainId, accountNumber!, sequence!);
  const { signature } = await openKeyring(values, io).sign(signer.record.name, signBytes);
  const txBytes = encodeTxRaw({ bodyBytes, authInfoBytes, signatures: [signature] });
  const res = await broadcast(rpc, txBytes, mode);
  printValue(io, res, format);
  if (res['code'] !== 0) {
    io.err(`tx failed with code ${String(res['code'])}${res['codespace'] ? ` (codespace ${String(res['codespace'])})` : ''}: ${String(res['raw_log'])}\n`);
    return EXIT_FAILURE;
  }
  return EXIT_OK;
}

async function resolveChainId(values: Record<string, unknown>, io: CliIo, rpc: RpcClient): Promise<string> {
  const flag = values['chain-id'] as string | undefined;
  if (flag !== undefined && flag !== '') return flag;
  const fromGenesis = chainIdFromGenesis(resolveHome(values['home'] as string | undefined, io.env));
  if (fromGenesis !== undefined) return fromGenesis;
  try {
    const st = await rpc.status();
    const network = st?.node_info?.network;
    if (typeof network === 'string' && network !== '') return network;
  } catch {
    // fall through to the error below
  }
  throw new CliError('chain ID required but not specified: pass --chain-id', 'NO_CHAIN_ID');
}

/** Simulate over abci_query: a tx with the signer's key, the sign mode, and an empty signature. */
async function simulateGas(rpc: RpcClient, plan: TxPlan, rec: KeyRecord | undefined, sequence: bigint, mode: SignMode, adjustment: string): Promise<bigint> {
  const authInfo = buildAuthInfo(plan, { pubKey: rec ? pubKeyAnyOf(rec) : undefined, sequence, mode });
  const txBytes = encodeTxRaw({ bodyBytes: encodeTxBody(buildBody(plan)), authInfoBytes: encodeAuthInfo(authInfo), signatures: [new Uint8Array(0)] });
  let value: Uint8Array;
  try {
    ({ value } = await grpcQuery(rpc, SIMULATE_PATH, toBinary(SimulateRequestSchema, create(SimulateRequestSchema, { txBytes }))));
  } catch (e) {
    if (e instanceof QueryError && e.unknownPath) {
      throw new CliError(`--gas auto is not supported by this node: it does not serve ${SIMULATE_PATH} (${e.log}); pass --gas N`, 'SIMULATE_UNSUPPORTED');
    }
    throw e;
  }
  const used = fromBinary(SimulateResponseSchema, value).gasInfo?.gasUsed ?? 0n;
  // gas = ceil(used × adjustment), the adjustment read as an exact decimal.
  const [i, f = ''] = adjustment.split('.');
  const scale = 10n ** BigInt(f.length);
  const adj = BigInt(i!) * scale + BigInt(f === '' ? '0' : f);
  return (used * adj + scale - 1n) / scale;
}

// ---- commands ----

function pack<Desc extends DescMessage>(schema: Desc, msg: MessageShape<Desc>): Any {
  return packAny(schema, msg);
}

async function bankSend(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, TX_OPTIONS, true);
  if (values.help) return help(io);
  if (positionals.length !== 3) throw new UsageError(`accepts 3 arg(s), received ${positionals.length}: usage: chaind tx bank send <from> <to> <amount>`);
  const [from, to, amount] = positionals as [string, string, string];
  const ctx = { io, values };
  const signer = resolveFrom(ctx, from);
  checkAddress('recipient', to);
  const coins = parseCoins(amount);
  if (coins.length === 0) throw new CliError('must send positive amount', 'INVALID_COINS');
  const msg = create(MsgSendSchema, { fromAddress: signer.address, toAddress: to, amount: coins });
  return generateOrBroadcast(ctx, signer, [pack(MsgSendSchema, msg)]);
}

const AUTHZ_OPTIONS = {
  ...TX_OPTIONS,
  'spend-limit': { type: 'string' },
  'allow-list': { type: 'string' },
  'msg-type': { type: 'string' },
  expiration: { type: 'string' },
} as const;

/** `--expiration`: Unix seconds (as upstream's int64 flag) or an RFC 3339 time; 0 = none. */
export function parseExpiration(s: string | undefined, nowMs = Date.now()): Timestamp | undefined {
  if (s === undefined || s === '' || s === '0') return undefined;
  let ms: number;
  if (/^[0-9]+$/.test(s)) ms = Number(s) * 1000;
  else {
    ms = Date.parse(s);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(s) || Number.isNaN(ms)) throw new UsageError(`--expiration: want Unix seconds or an RFC 3339 time, got "${s}"`);
  }
  if (!Number.isSafeInteger(ms)) throw new UsageError(`--expiration: out of range: ${s}`);
  if (ms <= nowMs) throw new CliError(`expiration must be in the future, got ${new Date(ms).toISOString()}`, 'INVALID_EXPIRATION');
  return timestampFromMs(ms);
}

async function authzGrant(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, AUTHZ_OPTIONS, true);
  if (values.help) return help(io);
  if (positionals.length !== 2) throw new UsageError(`accepts 2 arg(s), received ${positionals.length}: usage: chaind tx authz grant <grantee> send|generic --from <granter>`);
  const [grantee, kind] = positionals as [string, string];
  const ctx = { io, values };
  const signer = resolveFrom(ctx, values.from as string | undefined);
  checkAddress('grantee', grantee);
  if (grantee.toLowerCase() === signer.address.toLowerCase()) throw new CliError('grantee and granter should be different', 'INVALID_GRANT');
  let authorization: Any;
  switch (kind) {
    case 'send': {
      const limit = parseCoins((values['spend-limit'] as string | undefined) ?? '');
      if (limit.length === 0) throw new CliError('spend-limit should be greater than zero', 'INVALID_GRANT');
      const allow = ((values['allow-list'] as string | undefined) ?? '')
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== '');
      const seen = new Set<string>();
      for (const a of allow) {
        checkAddress('allow-list', a);
        if (seen.has(a)) throw new CliError(`duplicate entry ${a} in allow list`, 'INVALID_GRANT');
        seen.add(a);
      }
      authorization = pack(SendAuthorizationSchema, create(SendAuthorizationSchema, { spendLimit: limit, allowList: allow }));
      break;
    }
    case 'generic': {
      const msgType = (values['msg-type'] as string | undefined) ?? '';
      if (msgType === '') throw new CliError('--msg-type is required for a generic authorization', 'INVALID_GRANT');
      authorization = pack(GenericAuthorizationSchema, create(GenericAuthorizationSchema, { msg: msgType }));
      break;
    }
    default:
      throw new CliError(`invalid authorization type, ${kind}: want send or generic`, 'INVALID_GRANT');
  }
  const expiration = parseExpiration(values.expiration as string | undefined);
  const msg = create(MsgGrantSchema, {
    granter: signer.address,
    grantee,
    grant: create(GrantSchema, { authorization, ...(expiration !== undefined ? { expiration } : {}) }),
  });
  return generateOrBroadcast(ctx, signer, [pack(MsgGrantSchema, msg)]);
}

async function authzExec(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, TX_OPTIONS, true);
  if (values.help) return help(io);
  if (positionals.length !== 1) throw new UsageError(`accepts 1 arg(s), received ${positionals.length}: usage: chaind tx authz exec <tx.json> --from <grantee>`);
  const file = positionals[0]!;
  let text: string;
  try {
    text = file === '-' ? readStdin(io) : readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`, 'READ_FAILED');
  }
  let msgs: Any[];
  try {
    msgs = fromProtoJson(TxSchema, JSON.parse(text)).body?.messages ?? [];
  } catch (e) {
    throw new CliError(`${file}: not a tx JSON: ${(e as Error).message}`, 'INVALID_TX_FILE');
  }
  if (msgs.length === 0) throw new CliError(`${file}: messages cannot be empty`, 'INVALID_TX_FILE');
  const ctx = { io, values };
  const signer = resolveFrom(ctx, values.from as string | undefined);
  const msg = create(MsgExecSchema, { grantee: signer.address, msgs });
  return generateOrBroadcast(ctx, signer, [pack(MsgExecSchema, msg)]);
}

async function authzRevoke(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, TX_OPTIONS, true);
  if (values.help) return help(io);
  if (positionals.length !== 2) throw new UsageError(`accepts 2 arg(s), received ${positionals.length}: usage: chaind tx authz revoke <grantee> <msg-type-url> --from <granter>`);
  const [grantee, msgTypeUrl] = positionals as [string, string];
  const ctx = { io, values };
  const signer = resolveFrom(ctx, values.from as string | undefined);
  checkAddress('grantee', grantee);
  const msg = create(MsgRevokeSchema, { granter: signer.address, grantee, msgTypeUrl });
  return generateOrBroadcast(ctx, signer, [pack(MsgRevokeSchema, msg)]);
}

function help(io: CliIo): number {
  io.out(TX_USAGE);
  return EXIT_OK;
}

export async function runTx(args: string[], io: CliIo): Promise<number> {
  const [mod, cmd, ...rest] = args;
  if (mod === undefined || mod === 'help' || mod === '--help' || mod === '-h') return help(io);
  if (cmd === undefined || cmd === '--help' || cmd === '-h') return help(io);
  const key = `${mod} ${cmd}`;
  switch (key) {
    case 'bank send':
      return bankSend(rest, io);
    case 'authz grant':
      return authzGrant(rest, io);
    case 'authz exec':
      return authzExec(rest, io);
    case 'authz revoke':
      return authzRevoke(rest, io);
    default:
      throw new UsageError(`unknown tx command "${key}"`);
  }
}
