/**
 * The account keeper: accounts with numbers from a global counter, sequences and public keys,
 * module accounts, params and genesis (cosmos-sdk: x/auth/keeper/keeper.go, account.go,
 * genesis.go; x/auth/types/genesis.go SanitizeGenesisAccounts). Every method goes through the
 * context's store, so it obeys the tx's cache branch and gas meter.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { AnySchema, type Any } from '@bufbuild/protobuf/wkt';
import { moduleAddress } from '../../address.js';
import { bytesEqual, bytesToKey, readU64be, u64be, type Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import { ExecMode } from '../../context.js';
import { PrefixStore, type KVStore } from '../../store.js';
import { BaseAccountSchema, ModuleAccountSchema, ParamsSchema, type BaseAccount } from '../../../gen/chain/auth/v1beta1/auth_pb.js';
import { GenesisStateSchema } from '../../../gen/chain/auth/v1beta1/genesis_pb.js';
import { anyToProtoJson, fromProtoJson, toProtoJson } from '../../../proto/json.js';
import { canonicalTypeName, emitTypeUrl, packAny, type EmitNames } from '../../../proto/registry.js';
import type { AccountHooks } from '../bank/keeper.js';
import { ProtoWriter } from '../../../types/proto.js';
import { accountKey, accountNumberKey, ACCOUNTS_PREFIX, GLOBAL_ACCOUNT_NUMBER_KEY, PARAMS_KEY } from './keys.js';
import { AUTH_STORE_KEY, defaultParams, FEE_COLLECTOR_NAME, validateParams, type Account, type Params } from './types.js';

const BASE_ACCOUNT = BaseAccountSchema.typeName;
const MODULE_ACCOUNT = ModuleAccountSchema.typeName;

export interface AccountKeeperOptions {
  storeKey?: string;
  /** Module accounts and their permissions (app.go maccPerms). */
  moduleAccountPermissions?: Record<string, string[]>;
}

/** The JSON genesis section (`app_state.auth`), as `chaind init` writes it. */
export interface AuthGenesisJson {
  params: Record<string, string>;
  accounts: unknown[];
}

/** The pubkey Any with its type URL in the canonical spelling (stored state must not depend on it). */
export function canonicalPubKeyAny(any: Any): Any {
  const typeUrl = `/${canonicalTypeName(any.typeUrl)}`;
  return typeUrl === any.typeUrl ? any : create(AnySchema, { typeUrl, value: any.value });
}

/**
 * Accounts decoded from stored bytes, by the identity of those bytes (see getAccount). Entries go
 * when the bytes do. Shared: an Account from getAccount is never mutated (callers spread it).
 */
const decodedAccounts = new WeakMap<Bytes, Account>();

/**
 * The stored form of a BaseAccount (state spelling): Any{type_url, value: BaseAccount{address,
 * pub_key Any{type_url, value}, account_number, sequence}} in protobuf, written directly; the same
 * bytes as toBinary(AnySchema, packAny(BaseAccountSchema, …)) (proto3: fields in number order,
 * zero values and empty strings left out, a set message field written even when empty).
 */
export function encodeBaseAccountAny(address: string, pubKeyTypeUrl: string | undefined, pubKeyValue: Bytes | undefined, accountNumber: bigint, sequence: bigint): Bytes {
  const w = new ProtoWriter(64 + 3 * address.length + (pubKeyTypeUrl === undefined ? 0 : 3 * pubKeyTypeUrl.length + (pubKeyValue?.length ?? 0)));
  w.bytesField(1, BASE_ACCOUNT_URL);
  const value = w.fork(2);
  w.stringField(1, address);
  if (pubKeyTypeUrl !== undefined) {
    const pk = w.fork(2);
    w.stringField(1, pubKeyTypeUrl);
    w.bytesField(2, pubKeyValue);
    w.ldelim(pk);
  }
  w.uint64Field(3, accountNumber);
  w.uint64Field(4, sequence);
  // Any.value is proto3 bytes: an empty BaseAccount leaves it out (its one-byte tag and the length).
  if (w.pos === value + 1) w.pos = value - 1;
  else w.ldelim(value);
  return w.finish();
}

/** How many written accounts getAccount may answer without decoding (AccountKeeper.written). */
const WRITTEN_MEMO_SIZE = 4096;

const U64_MAX = (1n << 64n) - 1n;
const isU64 = (v: bigint): boolean => v >= 0n && v <= U64_MAX;
const BASE_ACCOUNT_URL = Buffer.from(`/${BaseAccountSchema.typeName}`, 'utf8');

export class AccountKeeper {
  readonly storeKey: string;
  private readonly perms: Map<string, string[]>;
  private readonly permAddrs: Map<string, string>;

  constructor(opts: AccountKeeperOptions = {}) {
    this.storeKey = opts.storeKey ?? AUTH_STORE_KEY;
    this.perms = new Map(Object.entries(opts.moduleAccountPermissions ?? { [FEE_COLLECTOR_NAME]: [] }).map(([k, v]) => [k, [...v]]));
    this.permAddrs = new Map([...this.perms.keys()].map((n) => [bytesToKey(moduleAddress(n)), n]));
  }

  private store(ctx: Context): KVStore {
    return ctx.store(this.storeKey);
  }

  // --- encoding -------------------------------------------------------------------------------

  /** The account as its proto message (for state: canonical type URLs; for output: `names`' spelling). */
  private baseAccountMessage(ctx: Context, acc: Account, names?: EmitNames): BaseAccount {
    const pubKey = acc.pubKey === undefined ? undefined : create(AnySchema, { typeUrl: emitTypeUrl(acc.pubKey.typeUrl, names), value: acc.pubKey.value });
    return create(BaseAccountSchema, { address: ctx.addressCodec.encode(acc.address), pubKey, accountNumber: acc.accountNumber, sequence: acc.sequence });
  }

  /** The account packed as an Any (BaseAccount or ModuleAccount), in `names`' spelling. */
  accountToAny(ctx: Context, acc: Account, names?: EmitNames): Any {
    const base = this.baseAccountMessage(ctx, acc, names);
    if (acc.name === undefined) return packAny(BaseAccountSchema, base, names);
    return packAny(ModuleAccountSchema, create(ModuleAccountSchema, { baseAccount: base, name: acc.name, permissions: acc.permissions ?? [] }), names);
  }

  /** A BaseAccount message of the account (AccountInfo), in `names`' spelling. */
  accountToBaseAccount(ctx: Context, acc: Account, names?: EmitNames): BaseAccount {
    return this.baseAccountMessage(ctx, acc, names);
  }

  private decodeAccount(address: Bytes, bytes: Bytes): Account {
    const any = fromBinary(AnySchema, bytes);
    const type = canonicalTypeName(any.typeUrl);
    if (type === BASE_ACCOUNT) {
      const b = fromBinary(BaseAccountSchema, any.value);
      return { address, pubKey: b.pubKey, accountNumber: b.accountNumber, sequence: b.sequence };
    }
    if (type === MODULE_ACCOUNT) {
      const m = fromBinary(ModuleAccountSchema, any.value);
      const b = m.baseAccount ?? create(BaseAccountSchema);
      return { address, pubKey: b.pubKey, accountNumber: b.accountNumber, sequence: b.sequence, name: m.name, permissions: [...m.permissions] };
    }
    throw new Error(`unknown account type ${any.typeUrl}`);
  }

  // --- accounts -------------------------------------------------------------------------------

  getAccount(ctx: Context, addr: Bytes): Account | undefined {
    const v = this.store(ctx).get(accountKey(addr));
    if (v === undefined) return undefined;
    // The stores hand out the same value object until the key is written again (a cache's entry,
    // or its remembered read of committed state): its decoding is remembered with it. The ante
    // chain reads a signer's account five times a tx, in CheckTx, recheck and FinalizeBlock.
    const hit = decodedAccounts.get(v);
    if (hit !== undefined && bytesEqual(hit.address, addr)) return hit;
    // Bytes this keeper just wrote (the store keeps its own copy, so a new object): the account
    // they were written from, without decoding them.
    const written = this.written.get(bytesToKey(v));
    const acc = written !== undefined && bytesEqual(written.address, addr) ? written : this.decodeAccount(Uint8Array.from(addr), v);
    decodedAccounts.set(v, acc);
    return acc;
  }

  /** The last accounts setAccount wrote, by their bytes (latin1); emptied when full. */
  private readonly written = new Map<string, Account>();

  hasAccount(ctx: Context, addr: Bytes): boolean {
    return this.store(ctx).has(accountKey(addr));
  }

  /** SetAccount: the account under its address, and the number → address index. */
  setAccount(ctx: Context, acc: Account): void {
    const s = this.store(ctx);
    const fast = acc.name === undefined && isU64(acc.accountNumber) && isU64(acc.sequence);
    const keyUrl = acc.pubKey === undefined ? undefined : emitTypeUrl(acc.pubKey.typeUrl);
    const bytes = fast
      ? encodeBaseAccountAny(ctx.addressCodec.encode(acc.address), keyUrl, acc.pubKey?.value, acc.accountNumber, acc.sequence)
      : toBinary(AnySchema, this.accountToAny(ctx, acc));
    s.set(accountKey(acc.address), bytes);
    if (fast) {
      if (this.written.size >= WRITTEN_MEMO_SIZE) this.written.clear();
      // What decoding the bytes gives (the key's type URL as stored), as a snapshot: the caller's
      // object may change after this call, the remembered one never does.
      const pubKey = acc.pubKey === undefined || acc.pubKey.typeUrl === keyUrl ? acc.pubKey : create(AnySchema, { typeUrl: keyUrl, value: acc.pubKey.value });
      this.written.set(bytesToKey(bytes), { address: Uint8Array.from(acc.address), pubKey, accountNumber: acc.accountNumber, sequence: acc.sequence });
    }
    s.set(accountNumberKey(acc.accountNumber), Uint8Array.from(acc.address));
  }

  removeAccount(ctx: Context, acc: Account): void {
    const s = this.store(ctx);
    s.delete(accountKey(acc.address));
    s.delete(accountNumberKey(acc.accountNumber));
  }

  /** The next account number without taking it. */
  peekAccountNumber(ctx: Context): bigint {
    const v = this.store(ctx).get(GLOBAL_ACCOUNT_NUMBER_KEY);
    return v === undefined ? 0n : readU64be(v);
  }

  /** NextAccountNumber: returns the counter and advances it (numbers start at 0, never reused). */
  nextAccountNumber(ctx: Context): bigint {
    const n = this.peekAccountNumber(ctx);
    this.store(ctx).set(GLOBAL_ACCOUNT_NUMBER_KEY, u64be(n + 1n));
    return n;
  }

  /** NewAccountWithAddress: a BaseAccount with the next number; the caller stores it. */
  newAccountWithAddress(ctx: Context, addr: Bytes): Account {
    return { address: Uint8Array.from(addr), accountNumber: this.nextAccountNumber(ctx), sequence: 0n };
  }

  /** The address holding account number `n` (the Number index). */
  addressByAccountNumber(ctx: Context, n: bigint): Bytes | undefined {
    return this.store(ctx).get(accountNumberKey(n));
  }

  /** Accounts in address order. */
  *iterateAccounts(ctx: Context): Generator<Account> {
    for (const p of new PrefixStore(this.store(ctx), ACCOUNTS_PREFIX).iterate()) yield this.decodeAccount(Uint8Array.from(p.key), p.value);
  }

  /** The store narrowed to the accounts (key = address), for pagination. */
  accountsStore(ctx: Context): KVStore {
    return new PrefixStore(this.store(ctx), ACCOUNTS_PREFIX);
  }

  decodeStoredAccount(address: Bytes, value: Bytes): Account {
    return this.decodeAccount(Uint8Array.from(address), value);
  }

  /** What bank needs: recipients without an account get one (x/bank/keeper/send.go SendCoins). */
  accountHooks(): AccountHooks {
    return {
      hasAccount: (ctx, addr) => this.hasAccount(ctx, addr),
      createAccount: (ctx, addr) => this.setAccount(ctx, this.newAccountWithAddress(ctx, addr)),
    };
  }

  // --- module accounts ------------------------------------------------------------------------

  /** Module names in the permission map, sorted (the ModuleAccounts query's order). */
  moduleAccountNames(): string[] {
    return [...this.perms.keys()].sort();
  }

  hasModulePermissions(name: string): boolean {
    return this.perms.has(name);
  }

  modulePermissions(name: string): string[] | undefined {
    const p = this.perms.get(name);
    return p === undefined ? undefined : [...p];
  }

  /** The module name when `addr` is a module account address of the permission map. */
  moduleNameOf(addr: Bytes): string | undefined {
    return this.permAddrs.get(bytesToKey(addr));
  }

  getModuleAddress(name: string): Bytes | undefined {
    return this.perms.has(name) ? moduleAddress(name) : undefined;
  }

  /**
   * GetModuleAccountAndPermissions: the module account, created with the next account number when
   * it is not in state yet (a write, as upstream). Undefined for a name outside the permission
   * map. Throws when the address holds a plain account. In a query context nothing is written: the
   * account that would be created is returned, numbered `peek + pendingOffset`.
   */
  getModuleAccount(ctx: Context, name: string, pendingOffset = 0n): Account | undefined {
    const perms = this.perms.get(name);
    if (perms === undefined) return undefined;
    const addr = moduleAddress(name);
    const acc = this.getAccount(ctx, addr);
    if (acc !== undefined) {
      if (acc.name === undefined) throw new Error(`account is not a module account: ${ctx.addressCodec.encode(addr)}`);
      return acc;
    }
    if (ctx.mode === ExecMode.Query) return { address: addr, accountNumber: this.peekAccountNumber(ctx) + pendingOffset, sequence: 0n, name, permissions: [...perms] };
    const created: Account = { address: addr, accountNumber: this.nextAccountNumber(ctx), sequence: 0n, name, permissions: [...perms] };
    this.setAccount(ctx, created);
    return created;
  }

  // --- params -----------------------------------------------------------------------------------

  getParams(ctx: Context): Params {
    const v = this.store(ctx).get(PARAMS_KEY);
    if (v === undefined) return defaultParams();
    // Read (and charged for) every time; decoded again only when the stored bytes change.
    if (this.paramsBytes === undefined || !bytesEqual(this.paramsBytes, v)) {
      this.paramsDecoded = fromBinary(ParamsSchema, v);
      this.paramsBytes = Uint8Array.from(v);
    }
    return { ...this.paramsDecoded! };
  }

  /** The last params decoded and their stored bytes (getParams). */
  private paramsBytes: Uint8Array | undefined;
  private paramsDecoded: Params | undefined;

  setParams(ctx: Context, p: Params): void {
    this.store(ctx).set(PARAMS_KEY, toBinary(ParamsSchema, p));
  }

  // --- genesis ----------------------------------------------------------------------------------

  /**
   * InitGenesis + ValidateGenesis (x/auth/keeper/genesis.go, x/auth/types/genesis.go): params must
   * validate, no address twice; SanitizeGenesisAccounts renumbers duplicate account numbers to the
   * lowest unused ones and sorts by number; the global counter ends past the largest number. Then
   * the module accounts of the permission map: fee_collector first (auth's own InitGenesis), the
   * rest in name order (what the owning modules' InitGenesis would do; chaind has no gov or mint
   * module yet to do it).
   */
  initGenesis(ctx: Context, genesis: unknown): void {
    const gs = genesis === undefined || genesis === null ? create(GenesisStateSchema, { params: defaultParams() }) : fromProtoJson(GenesisStateSchema, genesis as never);
    const params = gs.params ?? defaultParams();
    validateParams(params);
    this.setParams(ctx, params);

    const accounts: Account[] = gs.accounts.map((any, i) => {
      const type = canonicalTypeName(any.typeUrl);
      if (type !== BASE_ACCOUNT && type !== MODULE_ACCOUNT) throw new Error(`genesis account ${i}: unsupported account type ${any.typeUrl}`);
      const base = type === BASE_ACCOUNT ? fromBinary(BaseAccountSchema, any.value) : fromBinary(ModuleAccountSchema, any.value).baseAccount ?? create(BaseAccountSchema);
      const r = ctx.addressCodec.tryDecode(base.address);
      if ('error' in r) throw new Error(`genesis account ${i}: invalid address ${JSON.stringify(base.address)}: ${r.error}`);
      const acc: Account = { address: r.bytes, pubKey: base.pubKey === undefined ? undefined : canonicalPubKeyAny(base.pubKey), accountNumber: base.accountNumber, sequence: base.sequence };
      if (type === MODULE_ACCOUNT) {
        const m = fromBinary(ModuleAccountSchema, any.value);
        if (m.name.trim() === '') throw new Error(`genesis account ${i}: module account name cannot be blank`);
        acc.name = m.name;
        acc.permissions = [...m.permissions];
      }
      return acc;
    });
    const seen = new Set<string>();
    for (const a of accounts) {
      const k = bytesToKey(a.address);
      if (seen.has(k)) throw new Error(`duplicate account found in genesis state; address: ${ctx.addressCodec.encode(a.address)}`);
      seen.add(k);
    }
    sanitizeGenesisAccounts(accounts);

    let last: bigint | undefined;
    for (const acc of accounts) {
      while (last === undefined || last < acc.accountNumber) last = this.nextAccountNumber(ctx);
      this.setAccount(ctx, acc);
    }
    this.getModuleAccount(ctx, FEE_COLLECTOR_NAME);
    for (const name of this.moduleAccountNames()) this.getModuleAccount(ctx, name);
  }

  /** ExportGenesis: params and every account (address order), in the SDK's JSON. */
  exportGenesis(ctx: Context, names?: EmitNames): AuthGenesisJson {
    const accounts = [...this.iterateAccounts(ctx)].map((a) => anyToProtoJson(this.accountToAny(ctx, a, names)));
    const params = toProtoJson(ParamsSchema, this.getParams(ctx)) as Record<string, string>;
    return { params, accounts };
  }
}

/**
 * SanitizeGenesisAccounts (x/auth/types/genesis.go): the second and later holders of an account
 * number get the lowest unused numbers (duplicates handled in number order), then all are sorted
 * by number. In place.
 */
export function sanitizeGenesisAccounts(accounts: Account[]): void {
  const used = new Set<bigint>();
  const dups = new Map<bigint, Account[]>();
  for (const a of accounts) {
    if (!used.has(a.accountNumber)) used.add(a.accountNumber);
    else dups.set(a.accountNumber, [...(dups.get(a.accountNumber) ?? []), a]);
  }
  let next = 0n;
  for (const n of [...dups.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))) {
    for (const a of dups.get(n)!) {
      while (used.has(next)) next++;
      a.accountNumber = next;
      used.add(next);
    }
  }
  accounts.sort((x, y) => (x.accountNumber < y.accountNumber ? -1 : x.accountNumber > y.accountNumber ? 1 : 0));
}
