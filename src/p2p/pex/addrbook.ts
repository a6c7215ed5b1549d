/**
 * The address book (cometbft/cometbft:p2p/pex/addrbook.go, known_address.go, params.go, file.go):
 * the peers this node knows of, kept across restarts in `[p2p] addr_book_file` (default
 * config/addrbook.json) for the PEX reactor to dial from and to share.
 *
 * Reduced from CometBFT's: the 256 "new" and 64 "old" hashed buckets (an eclipse defence that
 * spreads addresses by source group) become two sets with the same meaning and the same caps in
 * total — "new" for addresses heard of, "old" for addresses that proved good (a successful outbound
 * connection; CometBFT's consensus reactor marks a peer good after 10,000 useful messages instead,
 * which chaind's does not count). Kept: the first address heard for an ID stays until it is removed
 * (an old entry is never re-pointed), attempts / last attempt / last success, isBad expiry of new
 * entries, bans (MarkBad, 24 h by default) and ReinstateBadPeers, the selection sizes (23 %, at
 * least 32, at most 250), the new/old bias of PickAddress and GetSelectionWithBias, our own
 * addresses and private IDs never added, addr_book_strict (non-routable addresses refused when
 * true), a save every 2 minutes and on stop.
 *
 * File format: CometBFT's addrBookJSON ({key, addrs: [knownAddress]}, Go time strings, bucket_type
 * 1 = new, 2 = old, one bucket index per entry), so either program reads the other's file. chaind
 * adds `bad_peers` (banned entries with their ban end) so that a ban survives a restart; CometBFT
 * ignores that key.
 */
import { randomBytes, createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { nullLogger, type Logger } from '../../log.js';
import { isRoutable, netAddressError, netAddressString, normalizeNetAddress, type NetAddress } from './netaddress.js';

/** params.go */
export const NEED_ADDRESS_THRESHOLD = 1000;
export const DUMP_ADDRESS_INTERVAL_MS = 2 * 60_000;
/** oldBucketCount × oldBucketSize and newBucketCount × newBucketSize. */
export const MAX_OLD = 64 * 64;
export const MAX_NEW = 256 * 64;
const NUM_MISSING_DAYS = 7;
const NUM_RETRIES = 3;
const MAX_FAILURES = 10;
const MIN_BAD_DAYS = 7;
const GET_SELECTION_PERCENT = 23;
const MIN_GET_SELECTION = 32;
export const MAX_GET_SELECTION = 250;
const DAY_MS = 24 * 3600_000;
/** pex_reactor.go defaultBanTime. */
export const DEFAULT_BAN_MS = DAY_MS;

const NEW_BUCKET_COUNT = 256;
const OLD_BUCKET_COUNT = 64;
const BUCKET_NEW = 1;
const BUCKET_OLD = 2;

export type AddrBookErrorCode = 'INVALID' | 'BANNED' | 'PRIVATE' | 'PRIVATE_SRC' | 'SELF' | 'NON_ROUTABLE' | 'CORRUPT';

/** Why an address was not added (addrbook errors.go), or a file that cannot be read. */
export class AddrBookError extends Error {
  readonly code: AddrBookErrorCode;
  constructor(code: AddrBookErrorCode, message: string) {
    super(message);
    this.name = 'AddrBookError';
    this.code = code;
  }
}

/** One known address (known_address.go). Times are ms since the epoch, 0 = never. */
export interface KnownAddress {
  addr: NetAddress;
  src: NetAddress;
  attempts: number;
  lastAttempt: number;
  lastSuccess: number;
  /** Banned until this time (0 = never banned). */
  lastBanTime: number;
  old: boolean;
}

export interface AddrBookOptions {
  /** The JSON file; null keeps the book in memory only. */
  file: string | null;
  /** `[p2p] addr_book_strict`. */
  strict: boolean;
  logger?: Logger;
  /** Clock (tests). */
  now?: () => number;
  /** Random numbers in [0, 1) (tests). */
  random?: () => number;
  saveIntervalMs?: number;
}

/** Go's time.Time JSON (RFC 3339, the zero time as Go writes it). */
function goTime(ms: number): string {
  return ms === 0 ? '0001-01-01T00:00:00Z' : new Date(ms).toISOString();
}

function parseGoTime(v: unknown): number {
  if (typeof v !== 'string' || v.startsWith('0001-01-01')) return 0;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : 0;
}

export class AddrBook {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: () => number;
  readonly file: string | null;
  readonly strict: boolean;
  private key = randomBytes(12).toString('hex');
  private readonly lookup = new Map<string, KnownAddress>();
  private readonly bad = new Map<string, KnownAddress>();
  private readonly ourAddrs = new Set<string>();
  private readonly ourIds = new Set<string>();
  private readonly privateIds = new Set<string>();
  private nOld = 0;
  private saveTimer: NodeJS.Timeout | null = null;
  private loaded = false;

  constructor(private readonly opts: AddrBookOptions) {
    this.log = opts.logger ?? nullLogger;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.file = opts.file;
    this.strict = opts.strict;
  }

  /** Loads the file (if any) and starts the periodic save. Throws AddrBookError('CORRUPT') on a file that is not an address book. */
  start(): void {
    this.load();
    if (this.file !== null && this.saveTimer === null) {
      this.saveTimer = setInterval(() => this.save(), this.opts.saveIntervalMs ?? DUMP_ADDRESS_INTERVAL_MS);
      this.saveTimer.unref?.();
    }
  }

  /** Stops the periodic save and saves. */
  stop(): void {
    if (this.saveTimer) clearInterval(this.saveTimer);
    this.saveTimer = null;
    this.save();
  }

  /** AddOurAddress: never added (by ID as well: a node does not dial itself). */
  addOurAddress(a: NetAddress): void {
    const n = normalizeNetAddress(a);
    this.ourAddrs.add(netAddressString(n));
    this.ourIds.add(n.id);
    this.removeAddress(n.id);
  }

  /** Our node ID alone (when our listen address is not an IP literal). */
  addOurId(id: string): void {
    this.ourIds.add(id.toLowerCase());
    this.removeAddress(id.toLowerCase());
  }

  isOurAddress(a: NetAddress): boolean {
    const n = normalizeNetAddress(a);
    return this.ourIds.has(n.id) || this.ourAddrs.has(netAddressString(n));
  }

  addPrivateIds(ids: readonly string[]): void {
    for (const id of ids) {
      if (id === '') continue;
      this.privateIds.add(id.toLowerCase());
      this.removeAddress(id.toLowerCase());
    }
  }

  isPrivate(id: string): boolean {
    return this.privateIds.has(id.toLowerCase());
  }

  /**
   * AddAddress: a new address (from `src`) goes to "new"; an ID already known keeps its first
   * address. Throws AddrBookError saying why an address is refused.
   */
  addAddress(addr: NetAddress, src: NetAddress): void {
    const a = normalizeNetAddress(addr);
    const s = normalizeNetAddress(src);
    const invalid = netAddressError(a);
    if (invalid !== null) throw new AddrBookError('INVALID', `cannot add address ${netAddressString(a)}: ${invalid}`);
    if (this.bad.has(a.id)) throw new AddrBookError('BANNED', `address ${netAddressString(a)} is banned`);
    if (this.privateIds.has(a.id)) throw new AddrBookError('PRIVATE', `cannot add private peer with ID ${a.id}`);
    if (this.privateIds.has(s.id)) throw new AddrBookError('PRIVATE_SRC', `cannot add address from private peer ${s.id}`);
    if (this.isOurAddress(a)) throw new AddrBookError('SELF', `cannot add ourselves with address ${netAddressString(a)}`);
    if (this.strict && !isRoutable(a)) throw new AddrBookError('NON_ROUTABLE', `cannot add non-routable address ${netAddressString(a)}`);
    if (this.lookup.has(a.id)) return;
    if (this.size() - this.nOld >= MAX_NEW) this.expireNew();
    this.lookup.set(a.id, { addr: a, src: s, attempts: 0, lastAttempt: this.now(), lastSuccess: 0, lastBanTime: 0, old: false });
  }

  /** AddAddress that logs instead of throwing; true when the ID is in the book afterwards. */
  tryAddAddress(addr: NetAddress, src: NetAddress): boolean {
    try {
      this.addAddress(addr, src);
      return true;
    } catch (e) {
      this.log.debug('address not added to the book', { err: (e as Error).message });
      return false;
    }
  }

  removeAddress(id: string): void {
    const ka = this.lookup.get(id);
    if (!ka) return;
    this.lookup.delete(id);
    if (ka.old) this.nOld--;
  }

  has(id: string): boolean {
    return this.lookup.has(id.toLowerCase());
  }

  get(id: string): KnownAddress | undefined {
    const ka = this.lookup.get(id.toLowerCase()) ?? this.bad.get(id.toLowerCase());
    return ka ? { ...ka, addr: { ...ka.addr }, src: { ...ka.src } } : undefined;
  }

  size(): number {
    return this.lookup.size;
  }

  empty(): boolean {
    return this.lookup.size === 0;
  }

  needMoreAddrs(): boolean {
    return this.size() < NEED_ADDRESS_THRESHOLD;
  }

  isGood(id: string): boolean {
    return this.lookup.get(id.toLowerCase())?.old ?? false;
  }

  isBanned(id: string): boolean {
    return this.bad.has(id.toLowerCase());
  }

  /** MarkGood: a successful connection; the address moves to "old" (the oldest old one goes back to "new" when full). */
  markGood(id: string): void {
    const ka = this.lookup.get(id.toLowerCase());
    if (!ka) return;
    const now = this.now();
    ka.lastAttempt = now;
    ka.attempts = 0;
    ka.lastSuccess = now;
    if (ka.old) return;
    if (this.nOld >= MAX_OLD) {
      let oldest: KnownAddress | null = null;
      for (const k of this.lookup.values()) if (k.old && (oldest === null || k.lastAttempt < oldest.lastAttempt)) oldest = k;
      if (oldest) {
        oldest.old = false;
        this.nOld--;
      }
    }
    ka.old = true;
    this.nOld++;
  }

  /** MarkAttempt: a dial failed (or is being tried). */
  markAttempt(id: string): void {
    const ka = this.lookup.get(id.toLowerCase());
    if (!ka) return;
    ka.lastAttempt = this.now();
    ka.attempts++;
  }

  /** MarkBad: out of the book and banned for `banMs` (only an ID in the book can be banned, as in CometBFT). */
  markBad(id: string, banMs = DEFAULT_BAN_MS): void {
    const key = id.toLowerCase();
    const ka = this.lookup.get(key);
    if (!ka) return;
    const until = this.now() + banMs;
    if (ka.lastBanTime < until) ka.lastBanTime = until;
    this.bad.set(key, ka);
    this.removeAddress(key);
    this.log.info('address banned', { addr: netAddressString(ka.addr), ms: banMs });
  }

  /** ReinstateBadPeers: bans that ended put their address back in "new". */
  reinstateBadPeers(): void {
    const now = this.now();
    for (const [id, ka] of this.bad) {
      if (ka.lastBanTime > now) continue;
      this.bad.delete(id);
      if (this.lookup.has(id) || this.privateIds.has(id) || this.isOurAddress(ka.addr)) continue;
      ka.old = false;
      this.lookup.set(id, ka);
      this.log.info('reinstated address', { addr: netAddressString(ka.addr) });
    }
  }

  /**
   * PickAddress: a random address, from "new" with weight sqrt(nNew)·bias and from "old" with
   * sqrt(nOld)·(100 − bias); null when the side drawn is empty.
   */
  pickAddress(biasTowardsNew: number): NetAddress | null {
    if (this.size() === 0) return null;
    const bias = Math.max(0, Math.min(100, biasTowardsNew));
    const nNew = this.size() - this.nOld;
    const oldCorr = Math.sqrt(this.nOld) * (100 - bias);
    const newCorr = Math.sqrt(nNew) * bias;
    const fromOld = (oldCorr + newCorr) * this.random() < oldCorr;
    if ((fromOld && this.nOld === 0) || (!fromOld && nNew === 0)) return null;
    const side = [...this.lookup.values()].filter((k) => k.old === fromOld);
    return { ...side[Math.floor(this.random() * side.length)]!.addr };
  }

  private selectionSize(): number {
    const n = this.size();
    return Math.min(MAX_GET_SELECTION, Math.max(Math.min(MIN_GET_SELECTION, n), Math.floor((n * GET_SELECTION_PERCENT) / 100)));
  }

  private shuffled(list: KnownAddress[], take: number): NetAddress[] {
    const a = list.slice();
    const n = Math.min(take, a.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.random() * (a.length - i));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a.slice(0, n).map((k) => ({ ...k.addr }));
  }

  /** GetSelection: a random share of the book for a PexAddrs answer. */
  getSelection(): NetAddress[] {
    return this.shuffled([...this.lookup.values()], this.selectionSize());
  }

  /** GetSelectionWithBias: as many "new" addresses as `bias` percent asks (more if "old" runs short), then "old". */
  getSelectionWithBias(biasTowardsNew: number): NetAddress[] {
    const n = this.selectionSize();
    if (n === 0) return [];
    const bias = Math.max(0, Math.min(100, biasTowardsNew));
    const all = [...this.lookup.values()];
    const wantNew = Math.max(Math.round((bias / 100) * n), n - this.nOld);
    const sel = this.shuffled(all.filter((k) => !k.old), wantNew);
    return sel.concat(this.shuffled(all.filter((k) => k.old), n - sel.length));
  }

  /** isBad (known_address.go): a "new" address not tried in the last minute that is stale or keeps failing. */
  private isBad(ka: KnownAddress): boolean {
    if (ka.old) return false;
    const now = this.now();
    if (ka.lastAttempt > now - 60_000) return false;
    if (ka.lastAttempt < now - NUM_MISSING_DAYS * DAY_MS) return true;
    if (ka.lastSuccess === 0 && ka.attempts >= NUM_RETRIES) return true;
    if (ka.lastSuccess < now - MIN_BAD_DAYS * DAY_MS && ka.attempts >= MAX_FAILURES) return true;
    return false;
  }

  /** expireNew: room in "new" — a bad entry goes, else the one tried longest ago. */
  private expireNew(): void {
    let oldest: KnownAddress | null = null;
    for (const ka of this.lookup.values()) {
      if (ka.old) continue;
      if (this.isBad(ka)) {
        this.removeAddress(ka.addr.id);
        return;
      }
      if (oldest === null || ka.lastAttempt < oldest.lastAttempt) oldest = ka;
    }
    if (oldest) this.removeAddress(oldest.addr.id);
  }

  // ---------------------------------------------------------------------------------------------
  // file

  private bucketOf(ka: KnownAddress): number {
    const h = createHash('sha256').update(this.key).update(ka.addr.id).digest();
    return h.readUInt32BE(0) % (ka.old ? OLD_BUCKET_COUNT : NEW_BUCKET_COUNT);
  }

  private entryJson(ka: KnownAddress): Record<string, unknown> {
    return {
      addr: { id: ka.addr.id, ip: ka.addr.ip, port: ka.addr.port },
      src: { id: ka.src.id, ip: ka.src.ip, port: ka.src.port },
      buckets: [this.bucketOf(ka)],
      attempts: ka.attempts,
      bucket_type: ka.old ? BUCKET_OLD : BUCKET_NEW,
      last_attempt: goTime(ka.lastAttempt),
      last_success: goTime(ka.lastSuccess),
      last_ban_time: goTime(ka.lastBanTime),
    };
  }

  /** The file's content (saveToFile). */
  toJSON(): { key: string; addrs: unknown[]; bad_peers: unknown[] } {
    return {
      key: this.key,
      addrs: [...this.lookup.values()].map((ka) => this.entryJson(ka)),
      bad_peers: [...this.bad.values()].map((ka) => this.entryJson(ka)),
    };
  }

  /** Writes the file atomically (temp file + rename). Errors are logged. */
  save(): void {
    if (this.file === null) return;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(this.toJSON(), null, '\t'), { mode: 0o644 });
      fs.renameSync(tmp, this.file);
      this.log.debug('saved address book', { file: this.file, size: this.size() });
    } catch (e) {
      this.log.error('failed to save address book', { file: this.file, err: (e as Error).message });
    }
  }

  private parseEntry(v: unknown): KnownAddress | null {
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    const na = (x: unknown): NetAddress | null => {
      if (typeof x !== 'object' || x === null) return null;
      const r = x as Record<string, unknown>;
      if (typeof r.id !== 'string' || typeof r.ip !== 'string' || typeof r.port !== 'number') return null;
      return normalizeNetAddress({ id: r.id, ip: r.ip, port: r.port });
    };
    const addr = na(o.addr);
    if (addr === null || netAddressError(addr) !== null) return null;
    const src = na(o.src) ?? addr;
    return {
      addr,
      src,
      attempts: typeof o.attempts === 'number' && o.attempts >= 0 ? Math.floor(o.attempts) : 0,
      lastAttempt: parseGoTime(o.last_attempt),
      lastSuccess: parseGoTime(o.last_success),
      lastBanTime: parseGoTime(o.last_ban_time),
      old: o.bucket_type === BUCKET_OLD,
    };
  }

  /**
   * loadFromFile (once; start() calls it too): nothing when the file does not exist; entries that
   * are not valid addresses are skipped. Throws AddrBookError('CORRUPT') on a file that is not JSON.
   */
  load(): void {
    if (this.loaded) return;
    this.loaded = true;
    if (this.file === null || !fs.existsSync(this.file)) return;
    let j: unknown;
    try {
      j = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch (e) {
      throw new AddrBookError('CORRUPT', `error reading address book ${this.file}: ${(e as Error).message}`);
    }
    if (typeof j !== 'object' || j === null || Array.isArray(j)) throw new AddrBookError('CORRUPT', `address book ${this.file} is not a JSON object`);
    const o = j as Record<string, unknown>;
    if (typeof o.key === 'string' && o.key !== '') this.key = o.key;
    let skipped = 0;
    for (const v of Array.isArray(o.addrs) ? o.addrs : []) {
      const ka = this.parseEntry(v);
      if (ka === null || this.privateIds.has(ka.addr.id) || this.isOurAddress(ka.addr) || this.lookup.has(ka.addr.id)) {
        skipped++;
        continue;
      }
      if (ka.old && this.nOld >= MAX_OLD) ka.old = false;
      this.lookup.set(ka.addr.id, ka);
      if (ka.old) this.nOld++;
    }
    for (const v of Array.isArray(o.bad_peers) ? o.bad_peers : []) {
      const ka = this.parseEntry(v);
      if (ka === null) continue;
      this.removeAddress(ka.addr.id);
      this.bad.set(ka.addr.id, ka);
    }
    this.log.info('loaded address book', { file: this.file, size: this.size(), banned: this.bad.size, skipped });
  }
}
