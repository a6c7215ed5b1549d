/**
 * The bank keeper: balances, transfers, mint/burn for module accounts, supply and denom metadata
 * (cosmos-sdk: x/bank/keeper/{view,send,keeper,genesis}.go). Every method reads and writes through
 * the context's store, so it obeys the tx's cache branch and gas meter.
 */
import { moduleAddress } from '../../address.js';
import { bytesToKey, fromUtf8, utf8, type Bytes } from '../../bytes.js';
import { coinsError, coinsToString, coinToString, denomError, normalizeCoins, parseInt256, type Coin } from '../../coins.js';
import type { Context } from '../../context.js';
import { sdkErrors } from '../../errors.js';
import { PrefixStore, type KVStore } from '../../store.js';
import {
  balanceKey,
  balancesPrefix,
  DENOM_METADATA_PREFIX,
  denomAddressKey,
  denomMetadataKey,
  PARAMS_KEY,
  SEND_ENABLED_PREFIX,
  sendEnabledKey,
  SUPPLY_PREFIX,
  supplyKey,
} from './keys.js';
import { bankErrors, defaultBankParams, parseBankParams, parseMetadata, type BankGenesis, type BankParams, type Metadata, type SendEnabled } from './types.js';

export type ModulePermission = 'minter' | 'burner';

/** What bank needs from x/auth: recipients without an account get one (SendCoins). */
export interface AccountHooks {
  hasAccount(ctx: Context, addr: Bytes): boolean;
  createAccount(ctx: Context, addr: Bytes): void;
}

export interface BankKeeperOptions {
  storeKey: string;
  /** Module accounts and their permissions (app.go maccPerms); each is a known module account. */
  moduleAccountPermissions?: Record<string, ModulePermission[]>;
  /** Addresses that may not receive funds through MsgSend (app.go BlockedAddresses). Default: every module account. */
  blockedAddrs?: Bytes[];
  accounts?: AccountHooks;
}

const ONE = Uint8Array.of(1);
const ZERO = Uint8Array.of(0);

export class BankKeeper {
  readonly storeKey: string;
  private readonly perms: Map<string, Set<ModulePermission>>;
  private readonly blocked: Set<string>;
  private accounts: AccountHooks | undefined;

  constructor(opts: BankKeeperOptions) {
    this.storeKey = opts.storeKey;
    this.perms = new Map(Object.entries(opts.moduleAccountPermissions ?? {}).map(([k, v]) => [k, new Set(v)]));
    const blocked = opts.blockedAddrs ?? [...this.perms.keys()].map(moduleAddress);
    this.blocked = new Set(blocked.map(bytesToKey));
    this.accounts = opts.accounts;
  }

  /** Wires the auth module in once it exists (auth is built after bank in app.go too). */
  setAccountHooks(h: AccountHooks): void {
    this.accounts = h;
  }

  private store(ctx: Context): KVStore {
    return ctx.store(this.storeKey);
  }

  // --- balances -----------------------------------------------------------------------------

  getBalance(ctx: Context, addr: Bytes, denom: string): Coin {
    const v = this.store(ctx).get(balanceKey(addr, denom));
    return { denom, amount: v === undefined ? 0n : parseInt256(fromUtf8(v)) };
  }

  /** Every non-zero balance of addr, sorted by denom (a prefix range). */
  getAllBalances(ctx: Context, addr: Bytes): Coin[] {
    const out: Coin[] = [];
    for (const p of new PrefixStore(this.store(ctx), balancesPrefix(addr)).iterate()) {
      out.push({ denom: fromUtf8(p.key), amount: parseInt256(fromUtf8(p.value)) });
    }
    return out;
  }

  /** Without vesting accounts everything is spendable. */
  spendableCoins(ctx: Context, addr: Bytes): Coin[] {
    return this.getAllBalances(ctx, addr);
  }

  hasBalance(ctx: Context, addr: Bytes, coin: Coin): boolean {
    return this.getBalance(ctx, addr, coin.denom).amount >= coin.amount;
  }

  /** setBalance: zero balances are deleted, with their denom→owner index entry. */
  private setBalance(ctx: Context, addr: Bytes, coin: Coin): void {
    const s = this.store(ctx);
    if (coin.amount === 0n) {
      s.delete(balanceKey(addr, coin.denom));
      s.delete(denomAddressKey(coin.denom, addr));
      return;
    }
    s.set(balanceKey(addr, coin.denom), utf8(coin.amount.toString()));
    s.set(denomAddressKey(coin.denom, addr), ZERO);
  }

  /**
   * subUnlockedCoins: fails with `spendable balance X is smaller than Y: insufficient funds`
   * (code 5) before writing anything when one denom is short; emits coin_spent.
   */
  private subUnlockedCoins(ctx: Context, addr: Bytes, amt: Coin[]): void {
    if (coinsError(amt) !== null) throw sdkErrors.invalidCoins.wrap(coinsToString(amt));
    const next: Coin[] = [];
    for (const c of amt) {
      const bal = this.getBalance(ctx, addr, c.denom);
      if (bal.amount < c.amount) {
        throw sdkErrors.insufficientFunds.wrap(`spendable balance ${coinToString(bal)} is smaller than ${coinToString(c)}`);
      }
      next.push({ denom: c.denom, amount: bal.amount - c.amount });
    }
    for (const c of next) this.setBalance(ctx, addr, c);
    ctx.events.emit('coin_spent', [
      ['spender', ctx.addressCodec.encode(addr)],
      ['amount', coinsToString(amt)],
    ]);
  }

  /** addCoins: emits coin_received. */
  private addCoins(ctx: Context, addr: Bytes, amt: Coin[]): void {
    if (coinsError(amt) !== null) throw sdkErrors.invalidCoins.wrap(coinsToString(amt));
    for (const c of amt) {
      const bal = this.getBalance(ctx, addr, c.denom);
      this.setBalance(ctx, addr, { denom: c.denom, amount: bal.amount + c.amount });
    }
    ctx.events.emit('coin_received', [
      ['receiver', ctx.addressCodec.encode(addr)],
      ['amount', coinsToString(amt)],
    ]);
  }

  /**
   * SendCoins: subtract, add, create the recipient's account if auth is wired and it has none,
   * then `transfer{recipient,sender,amount}` and `message{sender}`.
   */
  sendCoins(ctx: Context, from: Bytes, to: Bytes, amt: Coin[]): void {
    this.subUnlockedCoins(ctx, from, amt);
    this.addCoins(ctx, to, amt);
    if (this.accounts !== undefined && !this.accounts.hasAccount(ctx, to)) this.accounts.createAccount(ctx, to);
    const fromStr = ctx.addressCodec.encode(from);
    ctx.events.emit('transfer', [
      ['recipient', ctx.addressCodec.encode(to)],
      ['sender', fromStr],
      ['amount', coinsToString(amt)],
    ]);
    ctx.events.emit('message', [['sender', fromStr]]);
  }

  blockedAddr(addr: Bytes): boolean {
    return this.blocked.has(bytesToKey(addr));
  }

  private moduleAccount(name: string): Bytes {
    if (!this.perms.has(name)) throw sdkErrors.unknownAddress.wrap(`module account ${name} does not exist`);
    return moduleAddress(name);
  }

  sendCoinsFromModuleToAccount(ctx: Context, module: string, to: Bytes, amt: Coin[]): void {
    const from = this.moduleAccount(module);
    if (this.blockedAddr(to)) throw sdkErrors.unauthorized.wrap(`${ctx.addressCodec.encode(to)} is not allowed to receive funds`);
    this.sendCoins(ctx, from, to, amt);
  }

  sendCoinsFromAccountToModule(ctx: Context, from: Bytes, module: string, amt: Coin[]): void {
    this.sendCoins(ctx, from, this.moduleAccount(module), amt);
  }

  sendCoinsFromModuleToModule(ctx: Context, fromModule: string, toModule: string, amt: Coin[]): void {
    this.sendCoins(ctx, this.moduleAccount(fromModule), this.moduleAccount(toModule), amt);
  }

  // --- mint / burn / supply -----------------------------------------------------------------

  private requirePermission(name: string, perm: ModulePermission, verb: string): Bytes {
    const addr = this.moduleAccount(name);
    if (!this.perms.get(name)!.has(perm)) throw sdkErrors.unauthorized.wrap(`module account ${name} does not have permissions to ${verb} tokens`);
    return addr;
  }

  /** MintCoins: credits the module account, raises supply, emits coinbase{minter,amount}. */
  mintCoins(ctx: Context, module: string, amt: Coin[]): void {
    const addr = this.requirePermission(module, 'minter', 'mint');
    if (coinsError(amt) !== null || amt.length === 0) throw sdkErrors.invalidCoins.wrap(coinsToString(amt));
    this.addCoins(ctx, addr, amt);
    for (const c of amt) this.setSupply(ctx, { denom: c.denom, amount: this.getSupply(ctx, c.denom).amount + c.amount });
    ctx.events.emit('coinbase', [
      ['minter', ctx.addressCodec.encode(addr)],
      ['amount', coinsToString(amt)],
    ]);
  }

  /** BurnCoins: debits the module account, lowers supply, emits burn{burner,amount}. */
  burnCoins(ctx: Context, module: string, amt: Coin[]): void {
    const addr = this.requirePermission(module, 'burner', 'burn');
    if (coinsError(amt) !== null || amt.length === 0) throw sdkErrors.invalidCoins.wrap(coinsToString(amt));
    this.subUnlockedCoins(ctx, addr, amt);
    for (const c of amt) this.setSupply(ctx, { denom: c.denom, amount: this.getSupply(ctx, c.denom).amount - c.amount });
    ctx.events.emit('burn', [
      ['burner', ctx.addressCodec.encode(addr)],
      ['amount', coinsToString(amt)],
    ]);
  }

  getSupply(ctx: Context, denom: string): Coin {
    const v = this.store(ctx).get(supplyKey(denom));
    return { denom, amount: v === undefined ? 0n : parseInt256(fromUtf8(v)) };
  }

  private setSupply(ctx: Context, c: Coin): void {
    if (c.amount === 0n) this.store(ctx).delete(supplyKey(c.denom));
    else this.store(ctx).set(supplyKey(c.denom), utf8(c.amount.toString()));
  }

  /** Total supply of every denom, sorted by denom. */
  getTotalSupply(ctx: Context): Coin[] {
    const out: Coin[] = [];
    for (const p of new PrefixStore(this.store(ctx), SUPPLY_PREFIX).iterate()) out.push({ denom: fromUtf8(p.key), amount: parseInt256(fromUtf8(p.value)) });
    return out;
  }

  // --- metadata, params, send-enabled -------------------------------------------------------

  getDenomMetadata(ctx: Context, denom: string): Metadata | undefined {
    const v = this.store(ctx).get(denomMetadataKey(denom));
    return v === undefined ? undefined : parseMetadata(JSON.parse(fromUtf8(v)));
  }

  setDenomMetadata(ctx: Context, m: Metadata): void {
    this.store(ctx).set(denomMetadataKey(m.base), utf8(JSON.stringify(m)));
  }

  getAllDenomMetadata(ctx: Context): Metadata[] {
    const out: Metadata[] = [];
    for (const p of new PrefixStore(this.store(ctx), DENOM_METADATA_PREFIX).iterate()) out.push(parseMetadata(JSON.parse(fromUtf8(p.value))));
    return out;
  }

  getParams(ctx: Context): BankParams {
    const v = this.store(ctx).get(PARAMS_KEY);
    return v === undefined ? defaultBankParams() : parseBankParams(JSON.parse(fromUtf8(v)));
  }

  setParams(ctx: Context, p: BankParams): void {
    // SetParams moves the deprecated params.send_enabled entries into the store (keeper.go).
    for (const se of p.send_enabled) this.setSendEnabled(ctx, se.denom, se.enabled);
    this.store(ctx).set(PARAMS_KEY, utf8(JSON.stringify({ send_enabled: [], default_send_enabled: p.default_send_enabled })));
  }

  setSendEnabled(ctx: Context, denom: string, enabled: boolean): void {
    this.store(ctx).set(sendEnabledKey(denom), enabled ? ONE : ZERO);
  }

  getAllSendEnabled(ctx: Context): SendEnabled[] {
    const out: SendEnabled[] = [];
    for (const p of new PrefixStore(this.store(ctx), SEND_ENABLED_PREFIX).iterate()) out.push({ denom: fromUtf8(p.key), enabled: p.value[0] === 1 });
    return out;
  }

  isSendEnabledDenom(ctx: Context, denom: string): boolean {
    const v = this.store(ctx).get(sendEnabledKey(denom));
    return v === undefined ? this.defaultSendEnabled(ctx) : v[0] === 1;
  }

  /** The stored params' bytes and their default_send_enabled, parsed once per distinct value. */
  private paramsMemo: { raw: string; defaultSendEnabled: boolean } | undefined;

  /**
   * getParams(ctx).default_send_enabled, read like getParams (the same store read, so the same
   * gas) but without a JSON parse per send when the stored params are the bytes parsed last time.
   */
  private defaultSendEnabled(ctx: Context): boolean {
    const v = this.store(ctx).get(PARAMS_KEY);
    if (v === undefined) return defaultBankParams().default_send_enabled;
    const raw = bytesToKey(v);
    const m = this.paramsMemo;
    if (m !== undefined && m.raw === raw) return m.defaultSendEnabled;
    const defaultSendEnabled = parseBankParams(JSON.parse(fromUtf8(v))).default_send_enabled;
    this.paramsMemo = { raw, defaultSendEnabled };
    return defaultSendEnabled;
  }

  /** IsSendEnabledCoins: `<denom> transfers are currently disabled: send transactions are disabled` (bank 5). */
  isSendEnabledCoins(ctx: Context, coins: readonly Coin[]): void {
    for (const c of coins) {
      if (!this.isSendEnabledDenom(ctx, c.denom)) throw bankErrors.sendDisabled.wrap(`${c.denom} transfers are currently disabled`);
    }
  }

  // --- genesis ------------------------------------------------------------------------------

  /**
   * InitGenesis + ValidateGenesis (x/bank/keeper/genesis.go, types/genesis.go): balances must be
   * valid coins, one entry per address; supply, when given, must equal the sum of balances.
   */
  initGenesis(ctx: Context, gs: BankGenesis): void {
    this.setParams(ctx, gs.params);
    for (const se of gs.send_enabled) {
      const d = denomError(se.denom);
      if (d !== null) throw new Error(d);
      this.setSendEnabled(ctx, se.denom, se.enabled);
    }
    const seen = new Set<string>();
    let total: Coin[] = [];
    // SanitizeGenesisBalances sorts by address bytes, so import order does not depend on the file.
    const balances = gs.balances.map((b) => ({ b, addr: ctx.addressCodec.decode(b.address) }));
    balances.sort((x, y) => Buffer.compare(Buffer.from(x.addr), Buffer.from(y.addr)));
    for (const { b, addr } of balances) {
      const k = bytesToKey(addr);
      if (seen.has(k)) throw new Error(`duplicate balance for address ${b.address}`);
      seen.add(k);
      const err = coinsError(b.coins);
      if (err !== null) throw new Error(`invalid coins for ${b.address}: ${err}`);
      for (const c of b.coins) this.setBalance(ctx, addr, c);
      total = normalizeCoins([...total, ...b.coins]);
    }
    if (gs.supply.length > 0) {
      const given = normalizeCoins(gs.supply);
      if (coinsToString(given) !== coinsToString(total)) {
        throw new Error(`genesis supply is incorrect, expected ${coinsToString(given)}, got ${coinsToString(total)}`);
      }
    }
    for (const c of total) this.setSupply(ctx, c);
    const metaSeen = new Set<string>();
    for (const m of gs.denom_metadata) {
      const d = denomError(m.base);
      if (d !== null) throw new Error(`invalid metadata base denom: ${d}`);
      if (metaSeen.has(m.base)) throw new Error(`duplicate client metadata for denom ${m.base}`);
      metaSeen.add(m.base);
      this.setDenomMetadata(ctx, m);
    }
  }

  exportGenesis(ctx: Context): BankGenesis {
    const byAddr = new Map<string, Coin[]>();
    // Walk every balance once: 0x02 len addr denom.
    for (const p of new PrefixStore(this.store(ctx), Uint8Array.of(0x02)).iterate()) {
      const n = p.key[0]!;
      const addr = p.key.subarray(1, 1 + n);
      const denom = fromUtf8(p.key.subarray(1 + n));
      const a = ctx.addressCodec.encode(addr);
      const list = byAddr.get(a) ?? [];
      list.push({ denom, amount: parseInt256(fromUtf8(p.value)) });
      byAddr.set(a, list);
    }
    return {
      params: this.getParams(ctx),
      balances: [...byAddr.entries()].map(([address, coins]) => ({ address, coins })),
      supply: this.getTotalSupply(ctx),
      denom_metadata: this.getAllDenomMetadata(ctx),
      send_enabled: this.getAllSendEnabled(ctx),
    };
  }
}
