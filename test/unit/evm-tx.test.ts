/**
 * Tx admission: typed envelopes decode (legacy with and without EIP-155, 2930, 1559, 7702), blob
 * and unknown types are refused with their codes, senders recovered through each crypto backend
 * equal @ethereumjs's own recovery, and the recovered key is cached so runTx does not recover.
 */
import { Hardfork, Mainnet, createCustomCommon } from '@ethereumjs/common';
import { createTx } from '@ethereumjs/tx';
import { RLP } from '@ethereumjs/rlp';
import { Address, bigIntToUnpaddedBytes, bytesToHex, eoaCode7702SignAuthorization, hexToBytes } from '@ethereumjs/util';
import t from 'tap';
import { availableCryptoBackends } from '../../src/crypto/backend.js';
import { admitTxs, createEvmCommon, decodeTx, recoverSender } from '../../src/evm/index.js';
import { makeKeys, signTx } from '../helpers/evm.js';

const CHAIN_ID = 9001n;

// Signing with @noble and running blocks on both crypto backends takes seconds alone and many
// times that on a loaded 2-core machine: more than tap's default 30 s per file.
t.setTimeout(240_000);

t.test('decodes every accepted type and recovers the sender', async (t) => {
  const [k, other] = makeKeys(2, 'txs');
  for (const crypto of availableCryptoBackends()) {
    const common = createEvmCommon({ chainId: CHAIN_ID, crypto });
    const to = other!.address;
    const legacy155 = signTx(common, k!, { type: 0, nonce: 0n, to, value: 1n });
    const al = createTx(
      { type: 1, nonce: 1n, to: bytesToHex(to), gasPrice: 1n, gasLimit: 50_000n, accessList: [{ address: bytesToHex(to), storageKeys: [bytesToHex(new Uint8Array(32))] }] },
      { common },
    ).sign(k!.priv);
    const fee = signTx(common, k!, { type: 2, nonce: 2n, to, value: 3n });
    const auth = eoaCode7702SignAuthorization({ chainId: '0x2329', address: bytesToHex(to), nonce: '0x0' }, other!.priv);
    const setcode = createTx(
      { type: 4, nonce: 3n, to: bytesToHex(to), maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, gasLimit: 100_000n, authorizationList: [auth] },
      { common },
    ).sign(k!.priv);
    // Pre-EIP-155 legacy (v = 27/28): signed under Homestead, which has no replay protection.
    const homestead = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: Hardfork.Homestead });
    const pre155Signed = createTx({ type: 0, nonce: 4n, to: bytesToHex(to), gasPrice: 1n, gasLimit: 21_000n }, { common: homestead }).sign(k!.priv);

    for (const [name, signed, type] of [
      ['legacy EIP-155', legacy155, 0],
      ['EIP-2930', al, 1],
      ['EIP-1559', fee, 2],
      ['EIP-7702', setcode, 4],
      ['legacy pre-155', pre155Signed, 0],
    ] as const) {
      const raw = signed.serialize();
      const tx = decodeTx(raw, common);
      t.equal(tx.type, type, `${crypto.name} ${name}: type`);
      t.equal(tx.getIntrinsicGas(), signed.getIntrinsicGas(), `${crypto.name} ${name}: gas parameters present`);
      const sender = recoverSender(tx, crypto);
      t.equal(bytesToHex(sender), bytesToHex(k!.address), `${crypto.name} ${name}: sender`);
      // The envelope as received is the library's serialization (EvmKeeper.ethHash hashes the bytes).
      t.equal(bytesToHex(tx.serialize()), bytesToHex(raw), `${crypto.name} ${name}: canonical`);
      t.equal(bytesToHex(crypto.keccak256(raw)), bytesToHex(signed.hash()), `${crypto.name} ${name}: hash = keccak256(bytes)`);
      // @ethereumjs's own (noble) recovery on a fresh decode agrees.
      t.equal(decodeTx(raw, common).getSenderAddress().toString(), bytesToHex(k!.address));
    }
    t.ok((decodeTx(pre155Signed.serialize(), common) as { v?: bigint }).v! <= 28n, 'pre-155 has v 27/28');
  }
});

t.test('refusals carry codes', async (t) => {
  const common = createEvmCommon({ chainId: CHAIN_ID });
  const cases: [string, Uint8Array, string][] = [
    ['empty', new Uint8Array(0), 'EVM_TX_EMPTY'],
    ['blob', hexToBytes('0x03f8a0'), 'EVM_TX_BLOB_UNSUPPORTED'],
    ['type 0x05', hexToBytes('0x05c0'), 'EVM_TX_UNKNOWN_TYPE'],
    ['garbage rlp', hexToBytes('0x02ff00'), 'EVM_TX_MALFORMED'],
    ['legacy list of junk', hexToBytes('0xc3010203'), 'EVM_TX_MALFORMED'],
  ];
  for (const [name, raw, code] of cases) {
    t.throws(() => decodeTx(raw, common), { code }, name);
  }
  t.throws(() => decodeTx(hexToBytes('0x03f8a0'), common), /blob transactions \(type 0x03\) are not supported/);
});

t.test('a typed envelope whose chain id has leading zeros is refused, as geth refuses it', async (t) => {
  const common = createEvmCommon({ chainId: CHAIN_ID });
  const [k, other] = makeKeys(2, 'canonical');
  for (const type of [1, 2, 4] as const) {
    const signed =
      type === 4
        ? createTx({ type, nonce: 0n, to: bytesToHex(other!.address), maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, gasLimit: 100_000n, authorizationList: [eoaCode7702SignAuthorization({ chainId: '0x2329', address: bytesToHex(other!.address), nonce: '0x0' }, other!.priv)] }, { common }).sign(k!.priv)
        : signTx(common, k!, { type, nonce: 0n, to: other!.address, value: 1n });
    const raw = signed.serialize();
    const items = RLP.decode(raw.subarray(1)) as Uint8Array[];
    const rebuild = (chainIdItem: Uint8Array) => {
      const payload = Buffer.concat([Buffer.from(chainIdItem), ...items.slice(1).map((x) => Buffer.from(RLP.encode(x)))]);
      const len = bigIntToUnpaddedBytes(BigInt(payload.length));
      return Uint8Array.from(Buffer.concat([Buffer.from([type]), payload.length < 56 ? Buffer.from([0xc0 + payload.length]) : Buffer.from([0xf7 + len.length, ...len]), payload]));
    };
    t.equal(bytesToHex(rebuild(RLP.encode(items[0]!))), bytesToHex(raw), `type ${type}: the rebuild of the canonical form is the original`);
    t.ok(decodeTx(rebuild(RLP.encode(items[0]!)), common));
    const padded = Uint8Array.from([0, ...items[0]!]); // 0x00 0x23 0x29
    t.throws(() => decodeTx(rebuild(RLP.encode(padded)), common), { code: 'EVM_TX_MALFORMED', message: /non-canonical integer/ }, `type ${type}: short form with a leading zero`);
    const long = new Uint8Array(56);
    long.set(items[0]!, 56 - items[0]!.length);
    t.throws(() => decodeTx(rebuild(RLP.encode(long)), common), { code: 'EVM_TX_MALFORMED', message: /non-canonical integer/ }, `type ${type}: 56 bytes, the value ${CHAIN_ID} at the end`);
    t.throws(() => decodeTx(rebuild(Uint8Array.of(0x00)), common), { code: 'EVM_TX_MALFORMED' }, `type ${type}: zero as 0x00`);
  }
});

t.test('admitTxs: one result per item, in order, no throw', async (t) => {
  const common = createEvmCommon({ chainId: CHAIN_ID });
  const keys = makeKeys(3, 'admit');
  const good = keys.map((k, i) => signTx(common, k, { nonce: BigInt(i), to: keys[0]!.address }).serialize());
  const wrongChain = signTx(createEvmCommon({ chainId: 1n }), keys[1]!, { nonce: 0n, to: keys[0]!.address }).serialize();
  const out = admitTxs([good[0]!, hexToBytes('0x03c0'), good[1]!, wrongChain, good[2]!], common);
  t.same(
    out.map((r) => (r.ok ? 'ok' : r.code)),
    ['ok', 'EVM_TX_BLOB_UNSUPPORTED', 'ok', 'EVM_TX_MALFORMED', 'ok'],
  );
  for (const [i, j] of [
    [0, 0],
    [2, 1],
    [4, 2],
  ] as const) {
    const r = out[i]!;
    t.ok(r.ok);
    if (r.ok) {
      t.equal(bytesToHex(r.sender), bytesToHex(keys[j]!.address));
      t.equal(bytesToHex(r.hash), bytesToHex(r.tx.hash()));
    }
  }
});

t.test('the recovered key is cached: runTx-side getSenderAddress does not recover again', async (t) => {
  const [k, other] = makeKeys(2, 'cache');
  const signed = signTx(createEvmCommon({ chainId: CHAIN_ID }), k!, { nonce: 0n, to: other!.address });
  // A Common whose ecrecover throws: any recovery by the tx library would fail.
  const common = createEvmCommon({ chainId: CHAIN_ID });
  common.customCrypto.ecrecover = () => {
    throw new Error('ecrecover called');
  };
  const tx = decodeTx(signed.serialize(), common);
  t.throws(() => decodeTx(signed.serialize(), common).getSenderAddress(), 'without the cache the library recovers');
  const sender = recoverSender(tx);
  t.equal(tx.getSenderAddress().toString(), new Address(sender).toString(), 'cached key used');
});

t.test('high-S signatures are refused', async (t) => {
  const [k, other] = makeKeys(2, 'highs');
  const common = createEvmCommon({ chainId: CHAIN_ID });
  const tx = signTx(common, k!, { nonce: 0n, to: other!.address });
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  // The envelope with s' = N - s and the other parity: the same signer, but high S (EIP-2).
  const raw = tx.raw() as Uint8Array[];
  raw[9] = raw[9]!.length === 0 ? new Uint8Array([1]) : new Uint8Array(0);
  raw[11] = bigIntToUnpaddedBytes(N - tx.s!);
  const bytes = new Uint8Array([2, ...RLP.encode(raw)]);
  t.throws(() => decodeTx(bytes, common), { code: 'EVM_TX_MALFORMED', message: /s-values greater than secp256k1n\/2/ });
});
