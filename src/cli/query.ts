/**
 * `chaind query` (alias `q`): the auth, bank and authz Query services through the node RPC's
 * `abci_query`, with the gRPC method as path (`/chain.auth.v1beta1.Query/Account`) and the
 * protobuf request as data, as the Cosmos SDK client does (cosmos-sdk: client/grpc_query.go;
 * cosmos/cosmos-sdk:baseapp/abci.go). Answers print as the SDK's protobuf JSON
 * (`--output json`, one line) or as YAML (`--output text`, the default), the whole response
 * message in both cases (`{"account": {...}}`, `{"balances": [...], "pagination": {...}}`).
 *
 * A failed query prints `Error: rpc error: code = <gRPC code> desc = <log>` (the SDK client maps
 * the ABCI code back: sdk 22 → NotFound, 18 → InvalidArgument, 4 → Unauthenticated, else
 * Unknown) and exits 1.
 *
 * Flags: --node, --height, --output; on paginated queries --page-key (base64, as `next_key`
 * prints), --offset, --limit (default 100), --page (1-based; offset = (page-1)·limit),
 * --count-total, --reverse.
 */
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import * as authQ from '../gen/chain/auth/v1beta1/query_pb.js';
import * as authzQ from '../gen/chain/authz/v1beta1/query_pb.js';
import * as bankQ from '../gen/chain/bank/v1beta1/query_pb.js';
import { PageRequestSchema, type PageRequest } from '../gen/chain/base/query/v1beta1/pagination_pb.js';
import { toProtoJson } from '../proto/json.js';
import { DEFAULT_NODE, grpcQuery, nodeUrl, outputFormat, printValue, RpcClient, uintFlag } from './client.js';
import { type CliIo, EXIT_OK, parse, UsageError } from './common.js';

interface QuerySpec {
  /** Positional argument names, in order; a trailing `?` marks an optional one. */
  args: string[];
  /** gRPC path. */
  path: string;
  req: DescMessage;
  res: DescMessage;
  paginated?: boolean;
  /** Request fields from the positional arguments. */
  build: (a: string[]) => Record<string, unknown>;
  help: string;
}

const AUTH = '/chain.auth.v1beta1.Query/';
const BANK = '/chain.bank.v1beta1.Query/';
const AUTHZ = '/chain.authz.v1beta1.Query/';

function accNum(s: string): bigint {
  if (!/^[0-9]+$/.test(s) || BigInt(s) >= 1n << 64n) throw new UsageError(`invalid account number "${s}"`);
  return BigInt(s);
}

export const QUERIES: Record<string, Record<string, QuerySpec>> = {
  auth: {
    account: { args: ['address'], path: AUTH + 'Account', req: authQ.QueryAccountRequestSchema, res: authQ.QueryAccountResponseSchema, build: ([address]) => ({ address }), help: 'an account by address' },
    accounts: { args: [], path: AUTH + 'Accounts', req: authQ.QueryAccountsRequestSchema, res: authQ.QueryAccountsResponseSchema, paginated: true, build: () => ({}), help: 'all accounts' },
    params: { args: [], path: AUTH + 'Params', req: authQ.QueryParamsRequestSchema, res: authQ.QueryParamsResponseSchema, build: () => ({}), help: 'the auth parameters' },
    'module-accounts': { args: [], path: AUTH + 'ModuleAccounts', req: authQ.QueryModuleAccountsRequestSchema, res: authQ.QueryModuleAccountsResponseSchema, build: () => ({}), help: 'all module accounts' },
    'module-account': { args: ['module-name'], path: AUTH + 'ModuleAccountByName', req: authQ.QueryModuleAccountByNameRequestSchema, res: authQ.QueryModuleAccountByNameResponseSchema, build: ([name]) => ({ name }), help: 'a module account by name' },
    'address-by-acc-num': {
      args: ['acc-num'],
      path: AUTH + 'AccountAddressByID',
      req: authQ.QueryAccountAddressByIDRequestSchema,
      res: authQ.QueryAccountAddressByIDResponseSchema,
      build: ([n]) => ({ accountId: accNum(n!) }),
      help: 'the address of an account number',
    },
    'account-info': { args: ['address'], path: AUTH + 'AccountInfo', req: authQ.QueryAccountInfoRequestSchema, res: authQ.QueryAccountInfoResponseSchema, build: ([address]) => ({ address }), help: 'an account as a BaseAccount' },
    'bech32-prefix': { args: [], path: AUTH + 'Bech32Prefix', req: authQ.Bech32PrefixRequestSchema, res: authQ.Bech32PrefixResponseSchema, build: () => ({}), help: 'the bech32 prefix' },
  },
  bank: {
    balances: { args: ['address'], path: BANK + 'AllBalances', req: bankQ.QueryAllBalancesRequestSchema, res: bankQ.QueryAllBalancesResponseSchema, paginated: true, build: ([address]) => ({ address }), help: 'all balances of an address' },
    balance: { args: ['address', 'denom'], path: BANK + 'Balance', req: bankQ.QueryBalanceRequestSchema, res: bankQ.QueryBalanceResponseSchema, build: ([address, denom]) => ({ address, denom }), help: 'the balance of one denom' },
    'spendable-balances': { args: ['address'], path: BANK + 'SpendableBalances', req: bankQ.QuerySpendableBalancesRequestSchema, res: bankQ.QuerySpendableBalancesResponseSchema, paginated: true, build: ([address]) => ({ address }), help: 'spendable balances of an address' },
    'total-supply': { args: [], path: BANK + 'TotalSupply', req: bankQ.QueryTotalSupplyRequestSchema, res: bankQ.QueryTotalSupplyResponseSchema, paginated: true, build: () => ({}), help: 'the total supply of every denom' },
    'total-supply-of': { args: ['denom'], path: BANK + 'SupplyOf', req: bankQ.QuerySupplyOfRequestSchema, res: bankQ.QuerySupplyOfResponseSchema, build: ([denom]) => ({ denom }), help: 'the total supply of one denom' },
    params: { args: [], path: BANK + 'Params', req: bankQ.QueryParamsRequestSchema, res: bankQ.QueryParamsResponseSchema, build: () => ({}), help: 'the bank parameters' },
  },
  authz: {
    grants: {
      args: ['granter', 'grantee', 'msg-type-url?'],
      path: AUTHZ + 'Grants',
      req: authzQ.QueryGrantsRequestSchema,
      res: authzQ.QueryGrantsResponseSchema,
      paginated: true,
      build: ([granter, grantee, msgTypeUrl]) => ({ granter, grantee, msgTypeUrl: msgTypeUrl ?? '' }),
      help: 'grants of a granter to a grantee (optionally of one msg type)',
    },
    'grants-by-granter': { args: ['granter'], path: AUTHZ + 'GranterGrants', req: authzQ.QueryGranterGrantsRequestSchema, res: authzQ.QueryGranterGrantsResponseSchema, paginated: true, build: ([granter]) => ({ granter }), help: 'grants given by a granter' },
    'grants-by-grantee': { args: ['grantee'], path: AUTHZ + 'GranteeGrants', req: authzQ.QueryGranteeGrantsRequestSchema, res: authzQ.QueryGranteeGrantsResponseSchema, paginated: true, build: ([grantee]) => ({ grantee }), help: 'grants received by a grantee' },
  },
};

function usage(): string {
  const lines = ['Usage: chaind query <module> <query> [args] [options]', ''];
  for (const [mod, qs] of Object.entries(QUERIES)) {
    lines.push(`${mod}:`);
    for (const [name, q] of Object.entries(qs)) {
      const args = q.args.map((a) => (a.endsWith('?') ? `[${a.slice(0, -1)}]` : `<${a}>`)).join(' ');
      lines.push(`  ${`${name} ${args}`.padEnd(48)} ${q.help}${q.paginated ? ' (paginated)' : ''}`);
    }
  }
  lines.push(
    '',
    'Options:',
    '  --node URL            node RPC (default tcp://127.0.0.1:26657)',
    '  --height N            query state at this height (default latest)',
    '  -o, --output text|json   output format (default text)',
    '  --page-key KEY        base64 next_key of the previous page',
    '  --offset N, --limit N, --page N, --count-total, --reverse   pagination',
    '',
  );
  return lines.join('\n');
}

export const QUERY_USAGE = usage();

const QUERY_OPTIONS = {
  node: { type: 'string' },
  height: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'page-key': { type: 'string' },
  offset: { type: 'string' },
  limit: { type: 'string' },
  page: { type: 'string' },
  'count-total': { type: 'boolean' },
  reverse: { type: 'boolean' },
  home: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** PageRequest from the flags (client/utils.go ReadPageRequest): limit 100 by default. */
export function pageRequestFromFlags(v: Record<string, unknown>): PageRequest {
  const limit = uintFlag('limit', v['limit']) ?? 100n;
  const page = uintFlag('page', v['page']);
  let offset = uintFlag('offset', v['offset']) ?? 0n;
  if (page !== undefined) {
    if (v['offset'] !== undefined) throw new UsageError('page and offset cannot be used together');
    if (page < 1n) throw new UsageError('--page: pages start at 1');
    offset = (page - 1n) * limit;
  }
  let key = new Uint8Array(0);
  const pk = v['page-key'] as string | undefined;
  if (pk !== undefined && pk !== '') {
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(pk)) throw new UsageError('--page-key: want base64 (the next_key of the previous page)');
    key = new Uint8Array(Buffer.from(pk, pk.includes('-') || pk.includes('_') ? 'base64url' : 'base64'));
  }
  return create(PageRequestSchema, { key, offset, limit, countTotal: v['count-total'] === true, reverse: v['reverse'] === true });
}

export async function runQuery(args: string[], io: CliIo): Promise<number> {
  const [mod, name, ...rest] = args;
  if (mod === undefined || mod === 'help' || mod === '--help' || mod === '-h') {
    io.out(QUERY_USAGE);
    return EXIT_OK;
  }
  const qs = QUERIES[mod];
  if (qs === undefined) throw new UsageError(`unknown query module "${mod}" (want ${Object.keys(QUERIES).join(', ')})`);
  if (name === undefined || name === '--help' || name === '-h') {
    io.out(QUERY_USAGE);
    return EXIT_OK;
  }
  const spec = Object.hasOwn(qs, name) ? qs[name] : undefined;
  if (spec === undefined) throw new UsageError(`unknown ${mod} query "${name}" (want ${Object.keys(qs).join(', ')})`);
  const { values, positionals } = parse(rest, QUERY_OPTIONS, true);
  if (values.help) {
    io.out(QUERY_USAGE);
    return EXIT_OK;
  }
  const required = spec.args.filter((a) => !a.endsWith('?')).length;
  if (positionals.length < required || positionals.length > spec.args.length) {
    const want = required === spec.args.length ? `${required}` : `${required} to ${spec.args.length}`;
    throw new UsageError(`accepts ${want} arg(s), received ${positionals.length}: usage: chaind query ${mod} ${name} ${spec.args.map((a) => `<${a.replace('?', '')}>`).join(' ')}`);
  }
  const format = outputFormat(values.output, 'text');
  const height = uintFlag('height', values.height) ?? 0n;
  const init: Record<string, unknown> = spec.build(positionals);
  if (spec.paginated) init['pagination'] = pageRequestFromFlags(values);
  const req = create(spec.req, init as MessageInitShape<DescMessage>);
  const rpc = new RpcClient(nodeUrl((values.node as string | undefined) ?? DEFAULT_NODE));
  const { value } = await grpcQuery(rpc, spec.path, toBinary(spec.req, req), height);
  const res = fromBinary(spec.res, value);
  printValue(io, toProtoJson(spec.res, res), format);
  return EXIT_OK;
}
