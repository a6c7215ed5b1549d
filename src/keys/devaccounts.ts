/**
 * Development accounts: the well-known mnemonic `test test … junk` (Hardhat, Anvil and Foundry
 * use it, so wallets and scripts already hold these keys), derived (BIP-39 seed, BIP-32 paths) as
 *
 *   m/44'/60'/0'/0/i   eth_secp256k1: address = keccak256(uncompressed pubkey without 0x04)[12:]
 *                      (the first is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266)
 *   m/44'/118'/0'/0/i  secp256k1:     address = ripemd160(sha256(compressed pubkey))
 *
 * for i = 0..9. Every 20-byte address is both a bech32 (`chain1…`) and a 0x address (one account
 * model, ARCHITECTURE.md). These keys are public: never fund them on a real network.
 */
import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import { bech32 } from '@scure/base';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { getPublicKey, Point } from '@noble/secp256k1';
import { BECH32_PREFIX } from '../names/index.js';

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
/** Accounts per derivation path. */
export const DEV_ACCOUNTS_PER_PATH = 10;
export const ETH_HD_PATH = "m/44'/60'/0'/0";
export const COSMOS_HD_PATH = "m/44'/118'/0'/0";

export type DevKeyType = 'eth_secp256k1' | 'secp256k1';

export interface DevAccount {
  keyType: DevKeyType;
  /** Full derivation path, e.g. m/44'/60'/0'/0/3. */
  path: string;
  index: number;
  /** 32-byte secp256k1 private key. */
  privateKey: Uint8Array;
  /** 33-byte compressed public key. */
  publicKey: Uint8Array;
  /** 20-byte account address. */
  address: Uint8Array;
  /** `chain1…` */
  bech32: string;
  /** EIP-55 checksummed 0x address. */
  hex: string;
}

const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** keccak256(uncompressed key without the 0x04 prefix)[12:]. Accepts a 33- or 65-byte key. */
export function ethAddressFromPubKey(pub: Uint8Array): Uint8Array {
  let full = pub;
  if (pub.length === 33) full = uncompress(pub);
  if (full.length !== 65 || full[0] !== 0x04) throw new Error('want a 33- or 65-byte secp256k1 public key');
  return keccak_256(full.subarray(1)).subarray(12);
}

/** ripemd160(sha256(compressed key)) (cosmos-sdk: crypto/keys/secp256k1). */
export function cosmosAddressFromPubKey(pub: Uint8Array): Uint8Array {
  if (pub.length !== 33) throw new Error('want a 33-byte compressed secp256k1 public key');
  return ripemd160(sha256(pub));
}

function uncompress(pub: Uint8Array): Uint8Array {
  return Point.fromBytes(pub).toBytes(false);
}

/** EIP-55 mixed-case checksum of a 20-byte address. */
export function toChecksumAddress(addr: Uint8Array): string {
  if (addr.length !== 20) throw new Error('want a 20-byte address');
  const lower = toHex(addr);
  const hash = toHex(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out;
}

export function bech32Address(addr: Uint8Array, prefix = BECH32_PREFIX): string {
  return bech32.encode(prefix, bech32.toWords(addr));
}

export interface DevAccountsOptions {
  mnemonic?: string;
  /** Accounts per path; default 10. */
  count?: number;
  prefix?: string;
}

const cache = new Map<string, DevAccount[]>();

/**
 * The dev accounts: `count` eth_secp256k1 accounts (m/44'/60'/0'/0/i), then `count` secp256k1
 * accounts (m/44'/118'/0'/0/i). Memoized: the BIP-39 seed is 2048 rounds of PBKDF2-SHA512.
 */
export function devAccounts(opts: DevAccountsOptions = {}): DevAccount[] {
  const mnemonic = opts.mnemonic ?? DEV_MNEMONIC;
  const count = opts.count ?? DEV_ACCOUNTS_PER_PATH;
  const prefix = opts.prefix ?? BECH32_PREFIX;
  const key = `${mnemonic}\0${count}\0${prefix}`;
  const hit = cache.get(key);
  if (hit) return hit.map((a) => ({ ...a }));
  const root = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic));
  const out: DevAccount[] = [];
  for (const [keyType, base] of [
    ['eth_secp256k1', ETH_HD_PATH],
    ['secp256k1', COSMOS_HD_PATH],
  ] as const) {
    for (let i = 0; i < count; i++) {
      const path = `${base}/${i}`;
      const node = root.derive(path);
      const privateKey = node.privateKey!;
      const publicKey = getPublicKey(privateKey, true);
      const address = keyType === 'eth_secp256k1' ? ethAddressFromPubKey(getPublicKey(privateKey, false)) : cosmosAddressFromPubKey(publicKey);
      out.push({ keyType, path, index: i, privateKey, publicKey, address, bech32: bech32Address(address, prefix), hex: toChecksumAddress(address) });
    }
  }
  cache.set(key, out);
  return out.map((a) => ({ ...a }));
}
