/**
 * The state store's FinalizeBlock response records (src/store/statestore.ts): the binary record
 * round-trips every field of a response (events, tx results with bytes, bigints and index flags,
 * the app hash, validator and consensus param updates), and a height written before it, as one
 * tagged-JSON record, still reads the same.
 */
import t from 'tap';
import type { ResponseFinalizeBlock } from '../../src/abci/types.js';
import { decodeFinalizeBlockRecord, encodeFinalizeBlockRecord } from '../../src/store/statestore.js';
import { encodeTagged } from '../../src/store/tagged.js';
import { defaultConsensusParams } from '../../src/types/params.js';

const ev = (type: string, kv: [string, string, boolean][]) => ({ type, attributes: kv.map(([key, value, index]) => ({ key, value, index })) });

function response(withUpdates: boolean): ResponseFinalizeBlock {
  return {
    events: [ev('block', [['height', '7', true], ['ünïcode', 'välue ✓', false]])],
    txResults: [
      { code: 0, data: Uint8Array.of(1, 2, 3), log: '', info: '', gasWanted: 200_000n, gasUsed: 61_234n, events: [ev('transfer', [['amount', '10achain', true], ['sender', 'chain1xyz', true], ['memo', 'x'.repeat(129), true]]), ev('message', [])], codespace: '' },
      { code: 5, data: new Uint8Array(0), log: 'insufficient funds', info: 'long '.repeat(60) + 'ü', gasWanted: -1n, gasUsed: (1n << 62n) + 1n, events: [], codespace: 'sdk' },
    ],
    validatorUpdates: withUpdates ? [{ pubKey: { type: 'ed25519', bytes: new Uint8Array(32).fill(9) }, power: 10n } as unknown as ResponseFinalizeBlock['validatorUpdates'][number]] : [],
    ...(withUpdates ? { consensusParamUpdates: defaultConsensusParams() } : {}),
    appHash: new Uint8Array(32).fill(0xab),
  };
}

t.test('the binary record round-trips a response', async (t) => {
  for (const withUpdates of [false, true]) {
    const r = response(withUpdates);
    const b = encodeFinalizeBlockRecord(r);
    t.equal(b[0], 2, 'version byte');
    const back = decodeFinalizeBlockRecord(b);
    t.same(back, r, `equal (updates: ${withUpdates})`);
    t.equal('consensusParamUpdates' in back, withUpdates, 'no consensusParamUpdates key when there were none');
    t.ok(back.txResults[0]!.data instanceof Uint8Array && typeof back.txResults[1]!.gasUsed === 'bigint');
    t.ok(b.length < encodeTagged(r).length, 'smaller than the tagged JSON');
  }
  const empty: ResponseFinalizeBlock = { events: [], txResults: [], validatorUpdates: [], appHash: new Uint8Array(0) };
  t.same(decodeFinalizeBlockRecord(encodeFinalizeBlockRecord(empty)), empty, 'an empty block');
});

t.test('a tagged-JSON record (heights written before) still reads', async (t) => {
  for (const withUpdates of [false, true]) {
    const r = response(withUpdates);
    t.same(decodeFinalizeBlockRecord(encodeTagged(r)), r);
  }
  t.throws(() => decodeFinalizeBlockRecord(Uint8Array.of(9, 0, 0)), /unknown version 9/);
});
