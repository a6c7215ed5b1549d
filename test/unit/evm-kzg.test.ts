/**
 * The KZG point evaluation behind the 0x0a precompile (src/evm/kzg.ts): c-kzg-4844's mainnet
 * vectors verify (or not) as they say, and a correct one run
 * through @ethereumjs/evm with chaind's Common it returns FIELD_ELEMENTS_PER_BLOB ‖ BLS_MODULUS
 * for 50,000 gas; a changed y, a bad point, a non-canonical z and a wrong length fail the call
 * (all gas) instead of throwing out of the EVM.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { createEVM } from '@ethereumjs/evm';
import { Address, bytesToHex, hexToBytes } from '@ethereumjs/util';
import { createEvmCommon } from '../../src/evm/common.js';
import { verifyKzgProof } from '../../src/evm/kzg.js';

// ethereum/c-kzg-4844:tests/verify_kzg_proof/kzg-mainnet/verify_kzg_proof_case_correct_proof_31ebd010e6098750
const C = '0x8f59a8d2a1a625a17f3fea0fe5eb8c896db3764f3185481bc22f91b4aaffcca25f26936857bc3a7c2539ea8ec3a952b7';
const Z = '0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000';
const Y = '0x1522a4a7f34e1ea350ae07c29c96c7e79655aa926122e95fe69fcbd932ca49e9';
const P = '0xa62ad71d14c5719385c0686f1871430475bf3a00f0aa3f7b8dd99a9abc2160744faf0070725e00b60ad9a026a15b1a8c';
// …_incorrect_proof_392169c16a2e5ef6 (output false)
const BAD = [
  '0xa421e229565952cfff4ef3517100a97da1d4fe57956fa50a442f92af03b1bf37adacc8ad4ed209b31287ea5bb94d9d06',
  '0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000',
  '0x304962b3598a0adf33189fdfd9789feab1096ff40006900400000003fffffffc',
  '0xb08a5afbb1717334e08e05576b07bff58e8851d8cfd9ea71da1ab4233ad4217cffabd669dfa89c3ebf4c44f91694a2f4',
] as const;
/** The precompile's input: versioned hash (0x01 ‖ sha256(commitment)[1:]) ‖ z ‖ y ‖ commitment ‖ proof. */
const INPUT = `01${createHash('sha256').update(Buffer.from(C.slice(2), 'hex')).digest('hex').slice(2)}${Z.slice(2)}${Y.slice(2)}${C.slice(2)}${P.slice(2)}`;
const EXPECTED = '0x000000000000000000000000000000000000000000000000000000000000100073eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001';

t.test('verifyKzgProof', async (t) => {
  t.equal(verifyKzgProof(C, Z, Y, P), true, 'a correct proof (c-kzg mainnet vector) verifies');
  t.equal(verifyKzgProof(...BAD), false, 'an incorrect one does not');
  const y2 = `${Y.slice(0, -1)}${Y.endsWith('0') ? '1' : '0'}`;
  t.equal(verifyKzgProof(C, Z, y2, P), false, 'another y does not');
  t.throws(() => verifyKzgProof(C, `0x${'ff'.repeat(32)}`, Y, P), 'a non-canonical z throws');
  t.throws(() => verifyKzgProof(`0x${'11'.repeat(48)}`, Z, Y, P), 'a point not on the curve throws');
  // A constant polynomial f = 0: commitment and proof are the point at infinity, y = 0 anywhere.
  const inf = `0xc0${'00'.repeat(47)}`;
  t.equal(verifyKzgProof(inf, Z, `0x${'00'.repeat(32)}`, inf), true, 'the zero polynomial is 0 at z');
  t.equal(verifyKzgProof(inf, Z, `0x${'00'.repeat(31)}01`, inf), false, 'and not 1');
});

t.test('the 0x0a precompile through @ethereumjs/evm with chaind\'s Common', async (t) => {
  const evm = await createEVM({ common: createEvmCommon({ chainId: 9000n }) });
  const to = new Address(hexToBytes('0x000000000000000000000000000000000000000a'));
  const ok = await evm.runCall({ to, data: hexToBytes(`0x${INPUT}`), gasLimit: 100_000n });
  t.equal(ok.execResult.exceptionError, undefined);
  t.equal(bytesToHex(ok.execResult.returnValue), EXPECTED);
  t.equal(ok.execResult.executionGasUsed, 50_000n);
  const bad = hexToBytes(`0x${INPUT}`);
  bad[100] ^= 1; // inside the commitment: the versioned hash no longer matches
  const r1 = await evm.runCall({ to, data: bad, gasLimit: 100_000n });
  t.ok(r1.execResult.exceptionError, 'a wrong commitment fails the call');
  t.equal(r1.execResult.executionGasUsed, 100_000n, 'consuming all gas');
  const r2 = await evm.runCall({ to, data: new Uint8Array(10), gasLimit: 100_000n });
  t.ok(r2.execResult.exceptionError, 'a wrong length fails the call');
});
