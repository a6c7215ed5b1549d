/**
 * KZG point-evaluation proof verification for the EIP-4844 precompile at 0x0a, which Prague
 * keeps active. @ethereumjs/evm calls `common.customCrypto.kzg.verifyProof` and, with no KZG
 * configured, throws `kzg not initialized` out of the interpreter: eth_call answered -32000
 * instead of a failed call, and a tx calling 0x0a never got a receipt (and held back the
 * sender's later nonces). chaind has no blobs, so only `verifyProof` is needed; the other KZG
 * functions (blob commitments, cells) throw.
 *
 * The check (EIP-4844 `verify_kzg_proof`, ethereum/consensus-specs:specs/deneb/polynomial-commitments.md):
 * e(commitment − [y]G1, G2) = e(proof, [τ]G2 − [z]G2), as one pairing product equal to 1, with
 * [τ]G2 the second G2 point of the Ethereum KZG ceremony's trusted setup
 * (ethereum/c-kzg-4844:src/trusted_setup.txt, g2 monomial 1). Points are parsed compressed with
 * the subgroup check; z and y must be canonical field elements. Any invalid input throws or
 * returns false, and the precompile then fails the call consuming all its gas, as geth does.
 */
import type { KZG } from '@ethereumjs/util';
import { bls12_381 } from '@noble/curves/bls12-381.js';

const BLS_MODULUS = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;
const TAU_G2_HEX =
  'b5bfd7dd8cdeb128843bc287230af38926187075cbfbefa81009a2ce615ac53d2914e5870cb452d2afaaab24f3499f72185cbfee53492714734429b7b38608e23926c911cceceac9a36851477ba4c60b087041de621000edc98edada20c1def2';

const { G1, G2 } = bls12_381;
let tauG2: typeof G2.Point.BASE | undefined;

function strip(h: string): string {
  return h.startsWith('0x') || h.startsWith('0X') ? h.slice(2) : h;
}

function fieldElement(h: string): bigint {
  const s = strip(h);
  if (s.length !== 64) throw new Error('C_KZG_BADARGS: field element must be 32 bytes');
  const v = BigInt(`0x${s}`);
  if (v >= BLS_MODULUS) throw new Error('C_KZG_BADARGS: field element not canonical');
  return v;
}

function g1(h: string) {
  const s = strip(h);
  if (s.length !== 96) throw new Error('C_KZG_BADARGS: G1 point must be 48 bytes');
  return G1.Point.fromHex(s);
}

/** verify_kzg_proof: does `proof` show that the polynomial committed to by `commitment` is `y` at `z`? */
export function verifyKzgProof(commitment: string, z: string, y: string, proof: string): boolean {
  const C = g1(commitment);
  const P = g1(proof);
  const zz = fieldElement(z);
  const yy = fieldElement(y);
  tauG2 ??= G2.Point.fromHex(TAU_G2_HEX);
  const xMinusZ = tauG2.subtract(G2.Point.BASE.multiplyUnsafe(zz));
  const pMinusY = C.subtract(G1.Point.BASE.multiplyUnsafe(yy));
  // e(P − [y]G1, −G2) · e(proof, [τ − z]G2) = 1; a pair with the point at infinity contributes 1.
  const pairs = [
    { g1: pMinusY, g2: G2.Point.BASE.negate() },
    { g1: P, g2: xMinusZ },
  ].filter((p) => !p.g1.equals(G1.Point.ZERO) && !p.g2.equals(G2.Point.ZERO));
  const gt = bls12_381.pairingBatch(pairs);
  return bls12_381.fields.Fp12.eql(gt, bls12_381.fields.Fp12.ONE);
}

function unsupported(): never {
  throw new Error('KZG blob functions are not supported (chaind has no blob transactions)');
}

/** The KZG object for @ethereumjs/common's customCrypto: point evaluation only. */
export const pointEvaluationKzg: KZG = {
  verifyProof: verifyKzgProof,
  blobToKzgCommitment: unsupported,
  computeBlobProof: unsupported,
  verifyBlobProofBatch: unsupported,
  computeCells: unsupported,
  computeCellsAndProofs: unsupported,
  recoverCellsAndProofs: unsupported,
  verifyCellKzgProofBatch: unsupported,
};
