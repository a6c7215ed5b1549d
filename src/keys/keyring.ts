/**
 * The account keyring of the `chaind keys` and `chaind tx` commands: one JSON file per key.
 *
 * Backends (the Cosmos SDK's names; cosmos-sdk: crypto/keyring/keyring.go):
 *
 * - `file` (default): `<home>/keyring-file/<name>.json`. The private key is sealed with
 *   AES-256-GCM under a key derived from the keyring passphrase by scrypt (N = 2^15, r = 8, p = 1,
 *   a 16-byte salt per file, 32 MiB of memory, ~0.1 s). The GCM additional data binds the
 *   ciphertext to the file's name, algorithm and address, so editing the clear-text metadata makes
 *   decryption fail. `keyhash` in the same directory holds an scrypt verifier of the passphrase,
 *   written with the first key: every key of one keyring shares one passphrase (as upstream's file
 *   backend), and a wrong passphrase is refused before anything is written.
 * - `test`: `<home>/keyring-test/<name>.json` with the private key in clear (hex), like the SDK's
 *   test backend: for scripts, tests and devnets only.
 *
 * Upstream's file backend encrypts the whole record with JOSE (PBES2); here the public part (name,
 * algorithm, HD path, public key, address) is in clear so that `keys list` and `keys show` need no
 * passphrase. The files are not interchangeable with the SDK's.
 *
 * A key file (format `chaind-key-1`):
 *
 *   {"format":"chaind-key-1","name":"alice","type":"local","algo":"secp256k1",
 *    "hd_path":"m/44'/118'/0'/0/0","pub_key":"<base64, 33-byte compressed>",
 *    "address":"chain1…","created":"2026-…Z",
 *    "crypto":{"kdf":"scrypt","n":32768,"r":8,"p":1,"salt":"<hex>","cipher":"aes-256-gcm",
 *              "iv":"<hex 12 B>","ciphertext":"<hex 32 B>","tag":"<hex 16 B>"}}   (file)
 *    "private_key":"<hex 32 B>"                                                      (test)
 *
 * Key types: `secp256k1` (address RIPEMD160(SHA256(compressed key)), default HD path
 * m/44'/118'/0'/0/0) and `eth_secp256k1` (address keccak256(uncompressed key)[12:], the Ethereum
 * address, default HD path m/44'/60'/0'/0/0); cosmos/cosmos-sdk:proto/cosmos/crypto/secp256k1/keys.proto, cosmos/cosmos-sdk:x/auth/keeper/account.go. Signing:
 * ECDSA over SHA-256 (secp256k1) or Keccak-256 (eth_secp256k1) of the sign bytes, 64-byte r‖s,
 * low-S (§3.3).
 *
 * Export: an ASCII-armored block `CHAIND PRIVATE KEY` (headers kdf, salt, type, then base64 of
 * iv‖ciphertext‖tag, sealed as above under an export passphrase), or the raw hex private key.
 * Upstream armors with bcrypt + xsalsa20-poly1305; those blocks are not readable here.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HDKey } from '@scure/bip32';
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { bech32 } from '@scure/base';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bech32Address, cosmosAddressFromPubKey, ethAddressFromPubKey, toChecksumAddress } from './devaccounts.js';
import { BECH32_PREFIX } from '../names/index.js';

export type KeyAlgo = 'secp256k1' | 'eth_secp256k1';
export const KEY_ALGOS: readonly KeyAlgo[] = ['secp256k1', 'eth_secp256k1'];
export type KeyringBackend = 'file' | 'test';
export const KEYRING_BACKENDS: readonly KeyringBackend[] = ['file', 'test'];

/** BIP-44 coin types: 118 (Cosmos) for secp256k1, 60 (Ethereum) for eth_secp256k1. */
export const COIN_TYPE: Record<KeyAlgo, number> = { secp256k1: 118, eth_secp256k1: 60 };

export const KEY_FILE_FORMAT = 'chaind-key-1';
/** scrypt cost: 2^15 × r 8 × 128 B = 32 MiB, about 0.1 s per derivation. */
export const SCRYPT_N = 1 << 15;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;
/** Upstream's file keyring asks for at least 8 characters (client/input.GetPassword). */
export const MIN_PASSPHRASE_LENGTH = 8;
/** 256 bits of entropy: a 24-word mnemonic, as `keys add` upstream. */
export const MNEMONIC_ENTROPY_BITS = 256;

const ARMOR_TYPE = 'CHAIND PRIVATE KEY';
const KEYHASH_FILE = 'keyhash';
const NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

/** Keyring failures; `code` names the case for callers and tests. */
export class KeyringError extends Error {
  constructor(
    readonly code:
      | 'KEY_NOT_FOUND'
      | 'KEY_EXISTS'
      | 'WRONG_PASSPHRASE'
      | 'NO_PASSPHRASE'
      | 'WEAK_PASSPHRASE'
      | 'INVALID_NAME'
      | 'INVALID_MNEMONIC'
      | 'INVALID_HD_PATH'
      | 'INVALID_KEY'
      | 'INVALID_ARMOR'
      | 'CORRUPT_KEY_FILE',
    message: string,
  ) {
    super(message);
    this.name = 'KeyringError';
  }
}

/** The public part of a stored key. */
export interface KeyRecord {
  name: string;
  type: 'local';
  algo: KeyAlgo;
  /** Derivation path, or undefined for an imported raw key. */
  hdPath: string | undefined;
  /** 33-byte compressed public key. */
  pubKey: Uint8Array;
  /** 20-byte account address. */
  address: Uint8Array;
  /** `chain1…` */
  bech32: string;
  /** EIP-55 0x address of the same 20 bytes. */
  hex: string;
  created: string;
}

export interface SealedBox {
  kdf: 'scrypt';
  n: number;
  r: number;
  p: number;
  salt: string;
  cipher: 'aes-256-gcm';
  iv: string;
  ciphertext: string;
  tag: string;
}

interface KeyFile {
  format: string;
  name: string;
  type: 'local';
  algo: KeyAlgo;
  hd_path?: string;
  pub_key: string;
  address: string;
  created: string;
  crypto?: SealedBox;
  private_key?: string;
}

/** A passphrase, or a function asked for it (at most once per keyring) when it is first needed.
 * `confirm` is true when the keyring is new, so a prompt can ask twice. */
export type PassphraseSource = string | ((opts: { confirm: boolean }) => Promise<string>);

export interface KeyringOptions {
  backend?: KeyringBackend;
  /** Node home; the keyring lives in `<home>/keyring-<backend>/`. */
  home?: string;
  /** Keyring directory itself (overrides home). */
  dir?: string;
  /** Needed by the file backend to add, sign, export or import keys. */
  passphrase?: PassphraseSource;
  /** Bech32 prefix of the printed addresses (default `chain`). */
  prefix?: string;
  /** scrypt cost override (tests of the file format only; the CLI always uses SCRYPT_N). */
  scryptN?: number;
}

export interface DeriveOptions {
  algo?: KeyAlgo;
  /** Full path (overrides coinType/account/index), e.g. m/44'/118'/0'/0/3. */
  hdPath?: string;
  coinType?: number;
  account?: number;
  index?: number;
  /** BIP-39 passphrase ("25th word"); empty by default. */
  bip39Passphrase?: string;
}

export interface AddOptions extends DeriveOptions {
  /** Recover from this mnemonic; a fresh 24-word one is made when absent. */
  mnemonic?: string;
  /** Replace an existing key of that name. */
  overwrite?: boolean;
  /** Derive and return, store nothing (no passphrase needed). */
  dryRun?: boolean;
}

// ---- helpers ----

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const fromHex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

function scrypt(pass: string, salt: Uint8Array, n: number, r: number, p: number): Promise<Buffer> {
  // maxmem must exceed 128·N·r (32 MiB at the defaults); node's default limit is exactly 32 MiB.
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + (1 << 20) };
  return new Promise((resolve, reject) => scryptCb(pass.normalize('NFKD'), salt, 32, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function seal(plain: Uint8Array, pass: string, aad: Uint8Array, n = SCRYPT_N): Promise<SealedBox> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = await scrypt(pass, salt, n, SCRYPT_R, SCRYPT_P);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(aad);
  const ct = Buffer.concat([c.update(plain), c.final()]);
  return { kdf: 'scrypt', n, r: SCRYPT_R, p: SCRYPT_P, salt: hex(salt), cipher: 'aes-256-gcm', iv: hex(iv), ciphertext: hex(ct), tag: hex(c.getAuthTag()) };
}

/** Opens a box; throws KeyringError WRONG_PASSPHRASE when the tag does not verify. */
export async function open(box: SealedBox, pass: string, aad: Uint8Array): Promise<Uint8Array> {
  if (box.kdf !== 'scrypt' || box.cipher !== 'aes-256-gcm') throw new KeyringError('CORRUPT_KEY_FILE', `unsupported key encryption ${box.kdf}/${box.cipher}`);
  // Bound the cost an edited file can make us pay (2^20 = 1 GiB of memory).
  if (!Number.isInteger(box.n) || box.n < 2 || box.n > 1 << 20 || (box.n & (box.n - 1)) !== 0 || box.r < 1 || box.r > 32 || box.p < 1 || box.p > 16) {
    throw new KeyringError('CORRUPT_KEY_FILE', 'invalid scrypt parameters');
  }
  const key = await scrypt(pass, fromHex(box.salt), box.n, box.r, box.p);
  try {
    const d = createDecipheriv('aes-256-gcm', key, fromHex(box.iv));
    d.setAAD(aad);
    d.setAuthTag(fromHex(box.tag));
    return new Uint8Array(Buffer.concat([d.update(fromHex(box.ciphertext)), d.final()]));
  } catch {
    throw new KeyringError('WRONG_PASSPHRASE', 'invalid passphrase: the key could not be decrypted');
  }
}

/** m/44'/<coin>'/<account>'/0/<index> */
export function bip44Path(coinType: number, account = 0, index = 0): string {
  for (const [what, v] of [
    ['coin type', coinType],
    ['account', account],
    ['index', index],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v >= 0x80000000) throw new KeyringError('INVALID_HD_PATH', `invalid ${what} ${v}: want an integer in [0, 2^31)`);
  }
  return `m/44'/${coinType}'/${account}'/0/${index}`;
}

const PATH_RE = /^m(\/\d+'?)*$/;

/** The derivation path of DeriveOptions: hdPath, else BIP-44 with the algorithm's coin type. */
export function hdPathOf(opts: DeriveOptions): string {
  const algo = opts.algo ?? 'secp256k1';
  if (opts.hdPath !== undefined) {
    if (!PATH_RE.test(opts.hdPath)) throw new KeyringError('INVALID_HD_PATH', `invalid HD path "${opts.hdPath}": want e.g. m/44'/118'/0'/0/0`);
    return opts.hdPath;
  }
  return bip44Path(opts.coinType ?? COIN_TYPE[algo], opts.account ?? 0, opts.index ?? 0);
}

export function normalizeMnemonic(m: string): string {
  return m.normalize('NFKD').trim().split(/\s+/).join(' ');
}

export function newMnemonic(): string {
  return generateMnemonic(english, MNEMONIC_ENTROPY_BITS);
}

/** BIP-39 seed → BIP-32 key at the path. Throws INVALID_MNEMONIC for a bad word list or checksum. */
export function derivePrivateKey(mnemonic: string, opts: DeriveOptions = {}): { privateKey: Uint8Array; hdPath: string } {
  const m = normalizeMnemonic(mnemonic);
  if (!validateMnemonic(m, english)) throw new KeyringError('INVALID_MNEMONIC', 'invalid mnemonic');
  const hdPath = hdPathOf(opts);
  const node = HDKey.fromMasterSeed(mnemonicToSeedSync(m, opts.bip39Passphrase ?? '')).derive(hdPath);
  if (!node.privateKey) throw new KeyringError('INVALID_HD_PATH', `no private key at ${hdPath}`);
  return { privateKey: node.privateKey, hdPath };
}

/** Compressed public key and address of a private key. */
export function keyFromPrivate(privateKey: Uint8Array, algo: KeyAlgo): { pubKey: Uint8Array; address: Uint8Array } {
  if (privateKey.length !== 32 || !secp256k1.utils.isValidSecretKey(privateKey)) throw new KeyringError('INVALID_KEY', 'invalid secp256k1 private key');
  const pubKey = secp256k1.getPublicKey(privateKey, true);
  const address = algo === 'eth_secp256k1' ? ethAddressFromPubKey(secp256k1.getPublicKey(privateKey, false)) : cosmosAddressFromPubKey(pubKey);
  return { pubKey, address };
}

/**
 * Signs sign bytes: ECDSA over SHA-256 (secp256k1) or Keccak-256 (eth_secp256k1), low-S, 64-byte
 * r‖s (cosmos/cosmos-sdk:x/auth/keeper/account.go, cosmos/cosmos-sdk:x/auth/tx/direct.go).
 */
export function signWith(privateKey: Uint8Array, algo: KeyAlgo, signBytes: Uint8Array): Uint8Array {
  const digest = algo === 'eth_secp256k1' ? keccak_256(signBytes) : sha256(signBytes);
  return secp256k1.sign(digest, privateKey, { prehash: false, lowS: true, format: 'compact' });
}

function checkAlgo(algo: string): KeyAlgo {
  if (!(KEY_ALGOS as readonly string[]).includes(algo)) throw new KeyringError('INVALID_KEY', `unsupported key type "${algo}": want ${KEY_ALGOS.join(' or ')}`);
  return algo as KeyAlgo;
}

function checkName(name: string): void {
  if (!NAME_RE.test(name)) {
    throw new KeyringError('INVALID_NAME', `invalid key name "${name}": use 1-64 letters, digits, '.', '_' or '-', not starting with '.' or '-'`);
  }
}

function aadOf(name: string, algo: KeyAlgo, address: string): Uint8Array {
  return new TextEncoder().encode(`${KEY_FILE_FORMAT}\n${name}\n${algo}\n${address}`);
}

function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

// ---- the keyring ----

export class Keyring {
  readonly backend: KeyringBackend;
  readonly dir: string;
  readonly prefix: string;
  private readonly passSource: PassphraseSource | undefined;
  private pass: string | undefined;
  private readonly scryptN: number;

  constructor(opts: KeyringOptions) {
    this.backend = opts.backend ?? 'file';
    if (!(KEYRING_BACKENDS as readonly string[]).includes(this.backend)) {
      throw new KeyringError('INVALID_KEY', `unknown keyring backend "${this.backend}": want ${KEYRING_BACKENDS.join(' or ')}`);
    }
    if (opts.dir === undefined && opts.home === undefined) throw new Error('Keyring needs a home or a dir');
    this.dir = opts.dir ?? path.join(opts.home!, `keyring-${this.backend}`);
    this.prefix = opts.prefix ?? BECH32_PREFIX;
    this.passSource = opts.passphrase;
    this.scryptN = opts.scryptN ?? SCRYPT_N;
  }

  private fileOf(name: string): string {
    checkName(name);
    return path.join(this.dir, `${name}.json`);
  }

  private readFile(file: string): KeyFile {
    let j: KeyFile;
    try {
      j = JSON.parse(fs.readFileSync(file, 'utf8')) as KeyFile;
    } catch (e) {
      throw new KeyringError('CORRUPT_KEY_FILE', `${file}: ${(e as Error).message}`);
    }
    if (j.format !== KEY_FILE_FORMAT || typeof j.name !== 'string' || typeof j.pub_key !== 'string' || typeof j.address !== 'string') {
      throw new KeyringError('CORRUPT_KEY_FILE', `${file}: not a ${KEY_FILE_FORMAT} key file`);
    }
    checkAlgo(j.algo);
    return j;
  }

  private toRecord(j: KeyFile): KeyRecord {
    const pubKey = new Uint8Array(Buffer.from(j.pub_key, 'base64'));
    const address = j.algo === 'eth_secp256k1' ? ethAddressFromPubKey(pubKey) : cosmosAddressFromPubKey(pubKey);
    const bech = bech32Address(address, BECH32_PREFIX);
    // The address in the file is informative; the key is the truth. A mismatch means tampering.
    if (bech !== j.address) throw new KeyringError('CORRUPT_KEY_FILE', `key ${j.name}: stored address ${j.address} does not match its public key`);
    return {
      name: j.name,
      type: 'local',
      algo: j.algo,
      hdPath: j.hd_path,
      pubKey,
      address,
      bech32: bech32Address(address, this.prefix),
      hex: toChecksumAddress(address),
      created: j.created,
    };
  }

  /** Every key, sorted by name. */
  list(): KeyRecord[] {
    if (!fs.existsSync(this.dir)) return [];
    const out: KeyRecord[] = [];
    for (const f of fs.readdirSync(this.dir).sort()) {
      if (!f.endsWith('.json')) continue;
      out.push(this.toRecord(this.readFile(path.join(this.dir, f))));
    }
    return out;
  }

  has(name: string): boolean {
    return fs.existsSync(this.fileOf(name));
  }

  /** A key by name, bech32 address (any prefix) or 0x address. */
  get(nameOrAddress: string): KeyRecord {
    if (NAME_RE.test(nameOrAddress)) {
      const file = path.join(this.dir, `${nameOrAddress}.json`);
      if (fs.existsSync(file)) return this.toRecord(this.readFile(file));
    }
    const want = addressBytesOf(nameOrAddress);
    if (want !== undefined) {
      const hit = this.list().find((k) => Buffer.from(k.address).equals(Buffer.from(want)));
      if (hit) return hit;
    }
    throw new KeyringError('KEY_NOT_FOUND', `${nameOrAddress}.info: key not found`);
  }

  private async passphrase(): Promise<string> {
    if (this.pass !== undefined) return this.pass;
    const fresh = !fs.existsSync(path.join(this.dir, KEYHASH_FILE));
    let p: string;
    if (typeof this.passSource === 'string') p = this.passSource;
    else if (this.passSource !== undefined) p = await this.passSource({ confirm: fresh });
    else {
      throw new KeyringError(
        'NO_PASSPHRASE',
        'the file keyring needs a passphrase: pass --keyring-passphrase, set CHAIND_KEYRING_PASSPHRASE, or run on a terminal',
      );
    }
    await this.checkKeyhash(p, fresh);
    this.pass = p;
    return p;
  }

  /** Verify the passphrase against `keyhash`, or write it for a new keyring. */
  private async checkKeyhash(p: string, fresh: boolean): Promise<void> {
    const file = path.join(this.dir, KEYHASH_FILE);
    const label = new TextEncoder().encode(`${KEY_FILE_FORMAT} keyhash`);
    if (fresh) {
      if (p.length < MIN_PASSPHRASE_LENGTH) throw new KeyringError('WEAK_PASSPHRASE', `password must be at least ${MIN_PASSPHRASE_LENGTH} characters`);
      // An empty sealed box: it opens only under the right passphrase.
      const box = await seal(new Uint8Array(0), p, label, this.scryptN);
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileAtomic(file, JSON.stringify(box) + '\n');
      return;
    }
    let box: SealedBox;
    try {
      box = JSON.parse(fs.readFileSync(file, 'utf8')) as SealedBox;
    } catch (e) {
      throw new KeyringError('CORRUPT_KEY_FILE', `${file}: ${(e as Error).message}`);
    }
    try {
      await open(box, p, label);
    } catch (e) {
      if (e instanceof KeyringError && e.code === 'WRONG_PASSPHRASE') throw new KeyringError('WRONG_PASSPHRASE', 'incorrect keyring passphrase');
      throw e;
    }
  }

  /** Stores a raw private key under `name`. */
  async importPrivateKey(name: string, privateKey: Uint8Array, algo: KeyAlgo, opts: { hdPath?: string; overwrite?: boolean } = {}): Promise<KeyRecord> {
    checkAlgo(algo);
    const file = this.fileOf(name);
    if (fs.existsSync(file) && opts.overwrite !== true) throw new KeyringError('KEY_EXISTS', `cannot overwrite key: ${name}: key already exists`);
    const { pubKey, address } = keyFromPrivate(privateKey, algo);
    const bech = bech32Address(address, BECH32_PREFIX);
    const j: KeyFile = {
      format: KEY_FILE_FORMAT,
      name,
      type: 'local',
      algo,
      ...(opts.hdPath !== undefined ? { hd_path: opts.hdPath } : {}),
      pub_key: b64(pubKey),
      address: bech,
      created: new Date().toISOString(),
    };
    if (this.backend === 'test') j.private_key = hex(privateKey);
    else j.crypto = await seal(privateKey, await this.passphrase(), aadOf(name, algo, bech), this.scryptN);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(file, JSON.stringify(j, null, 2) + '\n');
    return this.toRecord(j);
  }

  /**
   * Adds a key derived from a mnemonic (a new 24-word one unless `mnemonic` is given). Returns the
   * record and the mnemonic (to show once; it is not stored).
   */
  async add(name: string, opts: AddOptions = {}): Promise<{ record: KeyRecord; mnemonic: string }> {
    const algo = checkAlgo(opts.algo ?? 'secp256k1');
    const file = this.fileOf(name);
    if (!opts.dryRun && fs.existsSync(file) && opts.overwrite !== true) throw new KeyringError('KEY_EXISTS', `cannot overwrite key: ${name}: key already exists`);
    const mnemonic = opts.mnemonic !== undefined ? normalizeMnemonic(opts.mnemonic) : newMnemonic();
    const { privateKey, hdPath } = derivePrivateKey(mnemonic, { ...opts, algo });
    if (opts.dryRun) {
      const { pubKey, address } = keyFromPrivate(privateKey, algo);
      return {
        record: { name, type: 'local', algo, hdPath, pubKey, address, bech32: bech32Address(address, this.prefix), hex: toChecksumAddress(address), created: new Date().toISOString() },
        mnemonic,
      };
    }
    const record = await this.importPrivateKey(name, privateKey, algo, { hdPath, overwrite: opts.overwrite });
    return { record, mnemonic };
  }

  delete(nameOrAddress: string): KeyRecord {
    const rec = this.get(nameOrAddress);
    fs.rmSync(this.fileOf(rec.name));
    return rec;
  }

  /** The private key (asks for the passphrase on the file backend). */
  async privateKey(nameOrAddress: string): Promise<{ record: KeyRecord; privateKey: Uint8Array }> {
    const rec = this.get(nameOrAddress);
    const j = this.readFile(this.fileOf(rec.name));
    let privateKey: Uint8Array;
    if (j.private_key !== undefined) privateKey = fromHex(j.private_key);
    else if (j.crypto !== undefined) {
      // The key file's own tag is the check here; keyhash is verified by passphrase() as well so
      // that the error names the keyring passphrase rather than one key.
      privateKey = await open(j.crypto, await this.passphrase(), aadOf(j.name, j.algo, j.address));
    } else throw new KeyringError('CORRUPT_KEY_FILE', `key ${rec.name}: no private key in the file`);
    const derived = keyFromPrivate(privateKey, rec.algo);
    if (!Buffer.from(derived.pubKey).equals(Buffer.from(rec.pubKey))) throw new KeyringError('CORRUPT_KEY_FILE', `key ${rec.name}: private key does not match the public key`);
    return { record: rec, privateKey };
  }

  async sign(nameOrAddress: string, signBytes: Uint8Array): Promise<{ record: KeyRecord; signature: Uint8Array }> {
    const { record, privateKey } = await this.privateKey(nameOrAddress);
    return { record, signature: signWith(privateKey, record.algo, signBytes) };
  }

  /** The key as an armored block sealed under `exportPassphrase`. */
  async exportArmored(nameOrAddress: string, exportPassphrase: string): Promise<string> {
    const { record, privateKey } = await this.privateKey(nameOrAddress);
    return armorPrivateKey(privateKey, record.algo, exportPassphrase, this.scryptN);
  }

  async exportHex(nameOrAddress: string): Promise<string> {
    return hex((await this.privateKey(nameOrAddress)).privateKey);
  }

  async importArmored(name: string, armor: string, exportPassphrase: string, opts: { overwrite?: boolean } = {}): Promise<KeyRecord> {
    if (this.has(name) && opts.overwrite !== true) throw new KeyringError('KEY_EXISTS', `cannot overwrite key: ${name}: key already exists`);
    const { privateKey, algo } = await unarmorPrivateKey(armor, exportPassphrase);
    return this.importPrivateKey(name, privateKey, algo, opts);
  }
}

/** 20 address bytes of a bech32 (any prefix) or 0x string, else undefined. */
export function addressBytesOf(s: string): Uint8Array | undefined {
  if (/^0x[0-9a-fA-F]{40}$/.test(s)) return fromHex(s.slice(2));
  if (s.lastIndexOf('1') < 1) return undefined;
  try {
    return decodeBech32(s);
  } catch {
    return undefined;
  }
}

function decodeBech32(s: string): Uint8Array {
  const d = bech32.decode(s as `${string}1${string}`, 1023);
  return bech32.fromWords(d.words);
}

// ---- armor ----

const ARMOR_AAD = new TextEncoder().encode(`${KEY_FILE_FORMAT} export`);

/** ASCII armor (OpenPGP-style layout: headers, blank line, base64 at 64 columns). */
export async function armorPrivateKey(privateKey: Uint8Array, algo: KeyAlgo, passphrase: string, n = SCRYPT_N): Promise<string> {
  if (passphrase.length === 0) throw new KeyringError('WEAK_PASSPHRASE', 'the export passphrase must not be empty');
  const aad = new Uint8Array([...ARMOR_AAD, ...new TextEncoder().encode(algo)]);
  const box = await seal(privateKey, passphrase, aad, n);
  const body = Buffer.concat([Buffer.from(box.iv, 'hex'), Buffer.from(box.ciphertext, 'hex'), Buffer.from(box.tag, 'hex')]).toString('base64');
  const lines = body.match(/.{1,64}/g) ?? [];
  return [
    `-----BEGIN ${ARMOR_TYPE}-----`,
    `kdf: scrypt`,
    `kdfparams: n=${box.n},r=${box.r},p=${box.p}`,
    `salt: ${box.salt.toUpperCase()}`,
    `type: ${algo}`,
    '',
    ...lines,
    `-----END ${ARMOR_TYPE}-----`,
    '',
  ].join('\n');
}

export async function unarmorPrivateKey(armor: string, passphrase: string): Promise<{ privateKey: Uint8Array; algo: KeyAlgo }> {
  const bad = (why: string) => new KeyringError('INVALID_ARMOR', `invalid armored key: ${why}`);
  const lines = armor.replace(/\r\n/g, '\n').split('\n').map((l) => l.trim());
  const begin = lines.indexOf(`-----BEGIN ${ARMOR_TYPE}-----`);
  const end = lines.indexOf(`-----END ${ARMOR_TYPE}-----`);
  if (begin < 0 || end < begin) throw bad(`no ${ARMOR_TYPE} block`);
  const headers = new Map<string, string>();
  let i = begin + 1;
  for (; i < end && lines[i] !== ''; i++) {
    const m = /^([A-Za-z-]+):\s*(.*)$/.exec(lines[i]!);
    if (!m) throw bad(`bad header line "${lines[i]}"`);
    headers.set(m[1]!.toLowerCase(), m[2]!);
  }
  if (headers.get('kdf') !== 'scrypt') throw bad(`unsupported kdf "${headers.get('kdf') ?? ''}" (only chaind's scrypt armor is read)`);
  const algo = checkAlgo(headers.get('type') ?? 'secp256k1');
  const params = new Map((headers.get('kdfparams') ?? '').split(',').map((kv) => kv.split('=') as [string, string]));
  const salt = headers.get('salt') ?? '';
  if (!/^[0-9A-Fa-f]{32}$/.test(salt)) throw bad('bad salt');
  const raw = Buffer.from(lines.slice(i + 1, end).join(''), 'base64');
  if (raw.length !== 12 + 32 + 16) throw bad('bad body length');
  const box: SealedBox = {
    kdf: 'scrypt',
    n: Number(params.get('n') ?? SCRYPT_N),
    r: Number(params.get('r') ?? SCRYPT_R),
    p: Number(params.get('p') ?? SCRYPT_P),
    salt: salt.toLowerCase(),
    cipher: 'aes-256-gcm',
    iv: hex(raw.subarray(0, 12)),
    ciphertext: hex(raw.subarray(12, 44)),
    tag: hex(raw.subarray(44)),
  };
  const aad = new Uint8Array([...ARMOR_AAD, ...new TextEncoder().encode(algo)]);
  let privateKey: Uint8Array;
  try {
    privateKey = await open(box, passphrase, aad);
  } catch (e) {
    if (e instanceof KeyringError && e.code === 'WRONG_PASSPHRASE') throw new KeyringError('WRONG_PASSPHRASE', 'failed to decrypt private key: wrong passphrase');
    throw e;
  }
  keyFromPrivate(privateKey, algo);
  return { privateKey, algo };
}
