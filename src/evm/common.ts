/**
 * The @ethereumjs Common for chaind's EVM: chain id of the chain, hardfork Prague from genesis,
 * and every hash and signature the libraries let us inject routed through chaind's crypto backend
 * (native keccak/sha256/secp256k1 where the addon loaded, JS otherwise). The injection points are
 * @ethereumjs/common's CustomCrypto (ethereumjs/ethereumjs-monorepo:packages/common/src/types.ts):
 * keccak256 (tx hashes, SHA3 opcode, blooms, block hashes), ecrecover (tx senders when not cached,
 * the ECRECOVER precompile), sha256 (the SHA256 precompile); and kzg, the point evaluation of the
 * 0x0a precompile (kzg.ts).
 *
 * Not injectable (they use @noble inside @ethereumjs/util): EIP-7702 authority recovery and
 * CREATE/CREATE2 address derivation. Both are rare per block.
 */
import { type Common, Hardfork, Mainnet, createCustomCommon } from '@ethereumjs/common';
import { paramsTx } from '@ethereumjs/tx';
import { type CryptoBackend, getCryptoBackend } from '../crypto/backend.js';
import { pointEvaluationKzg } from './kzg.js';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
export const SECP256K1_N_DIV_2 = SECP256K1_N / 2n;

export interface EvmCommonOptions {
  chainId: bigint;
  crypto?: CryptoBackend;
}

/** 32-byte big-endian r||s from unpadded r and s (throws if either is longer than 32 bytes). */
export function signature64(r: Uint8Array, s: Uint8Array): Uint8Array {
  if (r.length > 32 || s.length > 32) throw new Error('signature value longer than 32 bytes');
  const sig = new Uint8Array(64);
  sig.set(r, 32 - r.length);
  sig.set(s, 64 - s.length);
  return sig;
}

/** The 64-byte public key (no 0x04) as @ethereumjs/util's ecrecover returns it, or a throw. */
export function makeEcrecover(crypto: CryptoBackend) {
  return (msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array => {
    let recid: bigint;
    if (v === 0n || v === 1n) recid = v;
    else if (chainId === undefined) recid = v - 27n;
    else recid = v - (chainId * 2n + 35n);
    if (recid !== 0n && recid !== 1n) throw new Error('Invalid signature v value');
    const pub = crypto.secp256k1Recover(msgHash, signature64(r, s), Number(recid));
    if (pub === null) throw new Error('Invalid signature');
    return pub.subarray(1);
  };
}

export function createEvmCommon(opts: EvmCommonOptions): Common {
  const crypto = opts.crypto ?? getCryptoBackend();
  const common = createCustomCommon({ chainId: Number(opts.chainId), name: 'chaind' }, Mainnet, {
    hardfork: Hardfork.Prague,
    customCrypto: {
      keccak256: (d) => crypto.keccak256(d),
      sha256: (d) => crypto.sha256(d),
      ecrecover: makeEcrecover(crypto),
      // The 0x0a point-evaluation precompile (src/evm/kzg.ts); without it the library throws.
      kzg: pointEvaluationKzg,
    },
  });
  // The tx library merges its parameter table into the tx's Common copy on every construction
  // (a JSON deep copy + cache rebuild, about half of a decode); merged here once, decodeTx can
  // pass an empty table (ethereumjs/ethereumjs-monorepo:packages/tx/src/util/internal.ts).
  common.updateParams(paramsTx);
  return common;
}
