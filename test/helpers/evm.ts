/**
 * Shared pieces of the EVM tests and bench: the TestToken fixture, keys, signed txs, ABI words.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Common } from '@ethereumjs/common';
import { type TypedTransaction, createTx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util';
import { getCryptoBackend } from '../../src/crypto/backend.js';
import { packageRoot } from '../../src/crypto/native.js';

export interface TokenFixture {
  compiler: string;
  bytecode: string;
  deployedBytecode: string;
  abi: unknown[];
}

export function loadToken(): TokenFixture {
  return JSON.parse(readFileSync(join(packageRoot(), 'test/fixtures/evm/TestToken.json'), 'utf8')) as TokenFixture;
}

export const SEL_TRANSFER = hexToBytes('0xa9059cbb');
export const SEL_BALANCE_OF = hexToBytes('0x70a08231');

export function keccak(data: Uint8Array): Uint8Array {
  return getCryptoBackend().keccak256(data);
}

/** keccak("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = keccak(new TextEncoder().encode('Transfer(address,address,uint256)'));

export function word(x: bigint | Uint8Array): Uint8Array {
  const w = new Uint8Array(32);
  if (typeof x === 'bigint') {
    let v = x;
    for (let i = 31; i >= 0 && v > 0n; i--) {
      w[i] = Number(v & 0xffn);
      v >>= 8n;
    }
  } else {
    w.set(x, 32 - x.length);
  }
  return w;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function transferData(to: Uint8Array, amount: bigint): Uint8Array {
  return concat(SEL_TRANSFER, word(to), word(amount));
}

export function approveData(spender: Uint8Array, amount: bigint): Uint8Array {
  return concat(hexToBytes('0x095ea7b3'), word(spender), word(amount));
}

export function transferFromData(from: Uint8Array, to: Uint8Array, amount: bigint): Uint8Array {
  return concat(hexToBytes('0x23b872dd'), word(from), word(to), word(amount));
}

export function allowanceData(owner: Uint8Array, spender: Uint8Array): Uint8Array {
  return concat(hexToBytes('0xdd62ed3e'), word(owner), word(spender));
}

export function balanceOfData(who: Uint8Array): Uint8Array {
  return concat(SEL_BALANCE_OF, word(who));
}

/** The token's deploy data for a total supply minted to the deployer. */
export function deployData(supply: bigint): Uint8Array {
  return concat(hexToBytes(loadToken().bytecode as `0x${string}`), word(supply));
}

/** The storage slot of balanceOf[holder] (mapping at slot 1: keccak(holder ‖ 1)). */
export function balanceSlot(holder: Uint8Array): Uint8Array {
  return keccak(concat(word(holder), word(1n)));
}

export interface Key {
  priv: Uint8Array;
  address: Uint8Array;
}

export function makeKeys(n: number, seed = 'chaind-evm'): Key[] {
  const keys: Key[] = [];
  for (let i = 0; i < n; i++) {
    const priv = keccak(new TextEncoder().encode(`${seed}-${i}`));
    keys.push({ priv, address: privateToAddress(priv) });
  }
  return keys;
}

export interface TxSpec {
  type?: 0 | 1 | 2;
  nonce: bigint;
  to?: Uint8Array;
  value?: bigint;
  data?: Uint8Array;
  gasLimit?: bigint;
  /** Gas price (fee cap and tip for type 2); default 1 wei. */
  price?: bigint;
}

/** A signed tx (gas price `price`, default 1 wei; fee cap = tip = price for type 2). Signs with @noble: slow. */
export function signTx(common: Common, key: Pick<Key, 'priv'>, spec: TxSpec): TypedTransaction {
  const type = spec.type ?? 2;
  const base = {
    type,
    nonce: spec.nonce,
    to: spec.to === undefined ? undefined : bytesToHex(spec.to),
    value: spec.value ?? 0n,
    data: spec.data ?? new Uint8Array(0),
    gasLimit: spec.gasLimit ?? 200_000n,
  };
  const price = spec.price ?? 1n;
  const fees = type === 2 ? { maxFeePerGas: price, maxPriorityFeePerGas: price } : { gasPrice: price };
  return createTx({ ...base, ...fees }, { common }).sign(key.priv);
}
