/**
 * An Ethereum keystore directory (`<home>/keystore`): one Web3 Secret Storage v3 file per account
 * (scrypt + aes-128-ctr, MAC = keccak256(derivedKey[16:32] ‖ ciphertext)), named and laid out as
 * geth's accounts/keystore writes them (ethereum/go-ethereum:accounts/keystore/passphrase.go,
 * key.go keyFileName), so geth, ethers (`Wallet.fromEncryptedJson`) and clef read our files and
 * we read theirs (pbkdf2 files too).
 *
 * Unlocking (ethereum/go-ethereum:accounts/keystore/keystore.go TimedUnlock): the decrypted key
 * stays in memory until its timeout (0 = until the process ends, or `lock`). Signing a hash needs
 * an unlocked account, or the passphrase for a one-off use (personal_sign).
 *
 * scrypt runs asynchronously (node:crypto on the libuv pool): geth's standard cost N = 2^18 takes
 * about a second and 256 MiB, which must not stall the event loop that serves consensus.
 */
import { createCipheriv, createDecipheriv, pbkdf2 as pbkdf2Cb, randomBytes, randomUUID, scrypt as scryptCb, scryptSync, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ethAddressFromPubKey } from './devaccounts.js';

/** geth StandardScryptN / StandardScryptP: 2^18 × r 8 × 128 B = 256 MiB, ~1 s per derivation. */
export const STANDARD_SCRYPT_N = 1 << 18;
export const STANDARD_SCRYPT_P = 1;
/** geth LightScryptN / LightScryptP (`--lightkdf`): 4 MiB per pass, a few ms each. */
export const LIGHT_SCRYPT_N = 1 << 12;
export const LIGHT_SCRYPT_P = 6;
/**
 * `chaind init --dev`'s cost for the dev accounts: N 2^12 (geth's light N), p 1, ~10 ms a key,
 * so ten keys keep init well under a second. Their keys are public (the `test … junk` mnemonic),
 * so a higher cost would protect nothing.
 */
export const DEV_SCRYPT: ScryptCost = { n: LIGHT_SCRYPT_N, p: 1 };
const SCRYPT_R = 8;
const SCRYPT_DKLEN = 32;
/** Largest scrypt cost we will run for a file we did not write (2^20: 1 GiB). */
const MAX_SCRYPT_N = 1 << 20;

/** secp256k1 group order. */
const SECP_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export type KeystoreErrorCode = 'NO_MATCH' | 'LOCKED' | 'DECRYPT' | 'EXISTS' | 'INVALID_KEY' | 'BAD_FILE';

/** Keystore failures, worded as geth's accounts/keystore errors. */
export class KeystoreError extends Error {
  constructor(
    readonly code: KeystoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeystoreError';
  }
}

/** ethereum/go-ethereum:accounts/keystore/keystore.go error texts. */
const ERR = {
  noMatch: () => new KeystoreError('NO_MATCH', 'no key for given address or file'),
  locked: () => new KeystoreError('LOCKED', 'authentication needed: password or unlock'),
  decrypt: () => new KeystoreError('DECRYPT', 'could not decrypt key with given password'),
  exists: () => new KeystoreError('EXISTS', 'account already exists'),
};

export interface ScryptCost {
  n: number;
  p: number;
}

export interface KeyJsonV3 {
  address: string;
  crypto: {
    cipher: string;
    ciphertext: string;
    cipherparams: { iv: string };
    kdf: string;
    kdfparams: Record<string, unknown>;
    mac: string;
  };
  id: string;
  version: number;
}

export interface KeystoreAccount {
  /** 20 bytes. */
  address: Uint8Array;
  /** The key file's absolute path. */
  file: string;
}

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const addrKey = (a: Uint8Array) => hex(a);

const scryptOpts = (n: number, r: number, p: number) => ({ N: n, r, p, maxmem: 128 * n * r * p + 64 * 1024 * 1024 });

function scrypt(password: string, salt: Uint8Array, n: number, r: number, p: number, dklen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, dklen, scryptOpts(n, r, p), (e, k) => (e ? reject(e) : resolve(k))));
}

function pbkdf2(password: string, salt: Uint8Array, c: number, dklen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2Cb(password, salt, c, dklen, 'sha256', (e, k) => (e ? reject(e) : resolve(k))));
}

/** The address of a 32-byte secp256k1 private key; throws geth's texts for an invalid key. */
export function addressOfPrivateKey(priv: Uint8Array): Uint8Array {
  checkPrivateKey(priv);
  return ethAddressFromPubKey(secp256k1.getPublicKey(priv, false));
}

/** ethereum/go-ethereum:crypto/crypto.go toECDSA(strict) checks. */
export function checkPrivateKey(priv: Uint8Array): void {
  if (priv.length !== 32) throw new KeystoreError('INVALID_KEY', 'invalid length, need 256 bits');
  const d = BigInt(`0x${hex(priv)}`);
  if (d >= SECP_N) throw new KeystoreError('INVALID_KEY', 'invalid private key, >=N');
  if (d === 0n) throw new KeystoreError('INVALID_KEY', 'invalid private key, zero or negative');
}

/** Encrypts a private key into a v3 key file object (geth EncryptKey). */
export async function encryptKey(priv: Uint8Array, password: string, cost: ScryptCost = { n: STANDARD_SCRYPT_N, p: STANDARD_SCRYPT_P }): Promise<KeyJsonV3> {
  const salt = randomBytes(32);
  return sealKey(priv, cost, salt, await scrypt(password, salt, cost.n, SCRYPT_R, cost.p, SCRYPT_DKLEN));
}

/** encryptKey on the calling thread: for `chaind init`, with a cheap cost only. */
export function encryptKeySync(priv: Uint8Array, password: string, cost: ScryptCost): KeyJsonV3 {
  const salt = randomBytes(32);
  return sealKey(priv, cost, salt, scryptSync(password, salt, SCRYPT_DKLEN, scryptOpts(cost.n, SCRYPT_R, cost.p)));
}

function sealKey(priv: Uint8Array, cost: ScryptCost, salt: Buffer, dk: Buffer): KeyJsonV3 {
  const address = addressOfPrivateKey(priv);
  const iv = randomBytes(16);
  const c = createCipheriv('aes-128-ctr', dk.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([c.update(priv), c.final()]);
  const mac = keccak_256(Buffer.concat([dk.subarray(16, 32), ciphertext]));
  dk.fill(0);
  return {
    address: hex(address),
    crypto: {
      cipher: 'aes-128-ctr',
      ciphertext: ciphertext.toString('hex'),
      cipherparams: { iv: iv.toString('hex') },
      kdf: 'scrypt',
      kdfparams: { dklen: SCRYPT_DKLEN, n: cost.n, p: cost.p, r: SCRYPT_R, salt: salt.toString('hex') },
      mac: hex(mac),
    },
    id: randomUUID(),
    version: 3,
  };
}

const num = (v: unknown, what: string): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) throw new KeystoreError('BAD_FILE', `key file: ${what} must be a positive integer`);
  return v;
};
const hexField = (v: unknown, what: string): Buffer => {
  if (typeof v !== 'string' || !/^(0x)?([0-9a-fA-F]{2})*$/.test(v)) throw new KeystoreError('BAD_FILE', `key file: ${what} must be hex`);
  return Buffer.from(v.replace(/^0x/, ''), 'hex');
};

/** Decrypts a v3 key file object (scrypt or pbkdf2); a wrong password is geth's ErrDecrypt. */
export async function decryptKey(json: KeyJsonV3, password: string): Promise<Uint8Array> {
  // ethers writes "Crypto"; geth reads either, as Go's encoding/json matches keys case-insensitively.
  const cr = json?.crypto ?? (json as unknown as { Crypto?: KeyJsonV3['crypto'] } | null)?.Crypto;
  if (json === null || typeof json !== 'object' || json.version !== 3 || typeof cr !== 'object' || cr === null) {
    throw new KeystoreError('BAD_FILE', 'key file: not a version 3 key file');
  }
  if (cr.cipher !== 'aes-128-ctr') throw new KeystoreError('BAD_FILE', `key file: cipher not supported: ${String(cr.cipher)}`);
  const kp = cr.kdfparams ?? {};
  const salt = hexField(kp.salt, 'salt');
  const dklen = num(kp.dklen, 'dklen');
  if (dklen < 32) throw new KeystoreError('BAD_FILE', 'key file: dklen must be at least 32');
  let dk: Buffer;
  if (cr.kdf === 'scrypt') {
    const n = num(kp.n, 'n');
    if (n > MAX_SCRYPT_N || (n & (n - 1)) !== 0) throw new KeystoreError('BAD_FILE', `key file: scrypt n ${n} not supported`);
    dk = await scrypt(password, salt, n, num(kp.r, 'r'), num(kp.p, 'p'), dklen);
  } else if (cr.kdf === 'pbkdf2') {
    if (kp.prf !== 'hmac-sha256') throw new KeystoreError('BAD_FILE', `key file: unsupported PBKDF2 PRF: ${String(kp.prf)}`);
    dk = await pbkdf2(password, salt, num(kp.c, 'c'), dklen);
  } else {
    throw new KeystoreError('BAD_FILE', `key file: unsupported KDF: ${String(cr.kdf)}`);
  }
  const ciphertext = hexField(cr.ciphertext, 'ciphertext');
  const mac = keccak_256(Buffer.concat([dk.subarray(16, 32), ciphertext]));
  const want = hexField(cr.mac, 'mac');
  if (want.length !== mac.length || !timingSafeEqual(want, mac)) {
    dk.fill(0);
    throw ERR.decrypt();
  }
  const d = createDecipheriv('aes-128-ctr', dk.subarray(0, 16), hexField(cr.cipherparams?.iv, 'iv'));
  const priv = new Uint8Array(Buffer.concat([d.update(ciphertext), d.final()]));
  dk.fill(0);
  return priv;
}

/** geth keyFileName: `UTC--2006-01-02T15-04-05.000000000Z--<address hex>`. */
export function keyFileName(address: Uint8Array, now = new Date()): string {
  const iso = now.toISOString(); // 2006-01-02T15:04:05.123Z
  const ts = `${iso.slice(0, 19).replace(/:/g, '-')}.${iso.slice(20, 23)}000000Z`;
  return `UTC--${ts}--${hex(address)}`;
}

interface Unlocked {
  priv: Uint8Array;
  timer: NodeJS.Timeout | null;
}

export interface KeystoreOptions {
  /** scrypt cost of keys written here; default geth's standard (N 2^18, p 1). */
  scrypt?: ScryptCost;
}

/** How recent a directory change must be for a reading of it not to be cached (see accounts()). */
const RACY_MTIME_MS = 100;

export class Keystore {
  private readonly cost: ScryptCost;
  private readonly unlocked = new Map<string, Unlocked>();
  /** The last reading of the directory, and the directory's mtime it was taken at. */
  private listed: { mtime: bigint; accounts: KeystoreAccount[] } | undefined;

  constructor(
    readonly dir: string,
    opts: KeystoreOptions = {},
  ) {
    this.cost = opts.scrypt ?? { n: STANDARD_SCRYPT_N, p: STANDARD_SCRYPT_P };
  }

  /**
   * The accounts, in file-name order (geth sorts by URL). Files copied in by hand appear: the list
   * is read again whenever the directory's modification time changed (a file added, removed or
   * renamed, as every write here is), else the last reading serves (one stat a call, where reading
   * every key file cost eth_accounts milliseconds). geth's account cache watches the directory
   * likewise (ethereum/go-ethereum:accounts/keystore/account_cache.go). Files that are not v3 key
   * JSON with an address are skipped.
   */
  accounts(): KeystoreAccount[] {
    let mtime: bigint;
    try {
      mtime = fs.statSync(this.dir, { bigint: true }).mtimeNs;
    } catch {
      this.listed = undefined;
      return [];
    }
    if (this.listed !== undefined && this.listed.mtime === mtime) return this.listed.accounts.slice();
    const accounts = this.readAccounts();
    // A directory changed within the file system's timestamp granularity of this reading could
    // change again without a new mtime ("racy" as git calls it): such a reading is not kept.
    this.listed = Date.now() - Number(mtime / 1_000_000n) > RACY_MTIME_MS ? { mtime, accounts } : undefined;
    return accounts.slice();
  }

  private readAccounts(): KeystoreAccount[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: KeystoreAccount[] = [];
    const seen = new Set<string>();
    for (const name of names.sort()) {
      if (name.startsWith('.') || name.endsWith('~')) continue;
      const file = path.join(this.dir, name);
      try {
        const j = JSON.parse(fs.readFileSync(file, 'utf8')) as { address?: unknown };
        if (typeof j.address !== 'string' || !/^(0x)?[0-9a-fA-F]{40}$/.test(j.address)) continue;
        const address = new Uint8Array(Buffer.from(j.address.replace(/^0x/, ''), 'hex'));
        if (seen.has(addrKey(address))) continue;
        seen.add(addrKey(address));
        out.push({ address, file });
      } catch {
        /* not a key file */
      }
    }
    return out;
  }

  has(address: Uint8Array): boolean {
    return this.find(address) !== undefined;
  }

  private find(address: Uint8Array): KeystoreAccount | undefined {
    const k = addrKey(address);
    return this.accounts().find((a) => addrKey(a.address) === k);
  }

  /** A new random key, stored encrypted with `password`. */
  async newAccount(password: string): Promise<KeystoreAccount> {
    for (;;) {
      const priv = new Uint8Array(randomBytes(32));
      try {
        checkPrivateKey(priv);
      } catch {
        continue; // 2^-128: a key outside [1, n)
      }
      return this.importKey(priv, password);
    }
  }

  /** Stores `priv` encrypted with `password`; an account already here is geth's ErrAccountAlreadyExists. */
  async importKey(priv: Uint8Array, password: string, cost: ScryptCost = this.cost): Promise<KeystoreAccount> {
    const address = addressOfPrivateKey(priv);
    if (this.has(address)) throw ERR.exists();
    return this.write(address, await encryptKey(priv, password, cost));
  }

  /** importKey on the calling thread (`chaind init --dev`); an account already here is kept as it is. */
  importKeySync(priv: Uint8Array, password: string, cost: ScryptCost): KeystoreAccount {
    const address = addressOfPrivateKey(priv);
    const have = this.find(address);
    if (have !== undefined) return have;
    return this.write(address, encryptKeySync(priv, password, cost));
  }

  private write(address: Uint8Array, json: KeyJsonV3): KeystoreAccount {
    if (this.has(address)) throw ERR.exists(); // written meanwhile (two imports of one key)
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, keyFileName(address));
    // Written to a temporary name and renamed: a reader never sees half a file (geth writeTemporaryKeyFile).
    const tmp = `${file}.${process.pid}.tmp~`;
    fs.writeFileSync(tmp, JSON.stringify(json), { mode: 0o600 });
    fs.renameSync(tmp, file);
    this.listed = undefined;
    return { address, file };
  }

  /** Decrypts the account's key with `password` (no unlocking). */
  async decrypt(address: Uint8Array, password: string): Promise<Uint8Array> {
    const acct = this.find(address);
    if (acct === undefined) throw ERR.noMatch();
    let json: KeyJsonV3;
    try {
      json = JSON.parse(fs.readFileSync(acct.file, 'utf8')) as KeyJsonV3;
    } catch (e) {
      throw new KeystoreError('BAD_FILE', `key file ${path.basename(acct.file)}: ${(e as Error).message}`);
    }
    const priv = await decryptKey(json, password);
    // geth checks that the key in the file is the file's account.
    if (addrKey(addressOfPrivateKey(priv)) !== addrKey(address)) throw new KeystoreError('BAD_FILE', 'key content mismatch: have account with different address');
    return priv;
  }

  /**
   * Unlocks for `seconds` (0: until lock() or close()). Unlocking again replaces the timeout,
   * as geth's TimedUnlock does.
   */
  async unlock(address: Uint8Array, password: string, seconds: number): Promise<void> {
    const priv = await this.decrypt(address, password);
    const k = addrKey(address);
    this.drop(k);
    const entry: Unlocked = { priv, timer: null };
    if (seconds > 0) {
      // setTimeout holds at most 2^31-1 ms (~24.8 days); longer waits re-arm.
      const until = Date.now() + seconds * 1000;
      const arm = () => {
        const left = until - Date.now();
        if (left <= 0) {
          if (this.unlocked.get(k) === entry) this.drop(k);
          return;
        }
        entry.timer = setTimeout(arm, Math.min(left, 0x7fffffff));
        entry.timer.unref();
      };
      arm();
    }
    this.unlocked.set(k, entry);
  }

  lock(address: Uint8Array): void {
    this.drop(addrKey(address));
  }

  isUnlocked(address: Uint8Array): boolean {
    return this.unlocked.has(addrKey(address));
  }

  private drop(k: string): void {
    const u = this.unlocked.get(k);
    if (u === undefined) return;
    if (u.timer) clearTimeout(u.timer);
    u.priv.fill(0);
    this.unlocked.delete(k);
  }

  /**
   * The key of an unlocked account, for a signer; geth's ErrLocked when it is not unlocked and
   * ErrNoMatch when it is not here.
   */
  unlockedKey(address: Uint8Array): Uint8Array {
    const u = this.unlocked.get(addrKey(address));
    if (u !== undefined) return u.priv;
    if (!this.has(address)) throw ERR.noMatch();
    throw ERR.locked();
  }

  /** Locks every account and forgets the keys. */
  close(): void {
    for (const k of [...this.unlocked.keys()]) this.drop(k);
  }
}

/**
 * Signs a 32-byte digest: 65 bytes r ‖ s ‖ v with v = 0/1 (low-S, RFC 6979 nonces), as geth's
 * crypto.Sign; callers add 27 where the Ethereum text formats want it.
 */
export function signDigest(priv: Uint8Array, digest: Uint8Array): Uint8Array {
  const rec = secp256k1.sign(digest, priv, { prehash: false, lowS: true, format: 'recovered' });
  // @noble/curves 2: 'recovered' is recovery byte ‖ r ‖ s.
  const out = new Uint8Array(65);
  out.set(rec.subarray(1, 65), 0);
  out[64] = rec[0]!;
  return out;
}

/** The address that signed `digest` (sig r ‖ s ‖ v with v 0/1), or throws. */
export function recoverAddress(digest: Uint8Array, sig: Uint8Array): Uint8Array {
  const rec = new Uint8Array(65);
  rec[0] = sig[64]!;
  rec.set(sig.subarray(0, 64), 1);
  const pub = secp256k1.recoverPublicKey(rec, digest, { prehash: false });
  return ethAddressFromPubKey(pub);
}
