/**
 * The mempool reactor's message on channel 0x30 (cometbft/cometbft:proto/tendermint/mempool/types.proto):
 * `Message{oneof sum: txs=1 Txs{txs repeated bytes=1}}`. Every tx is written, even an empty one
 * (repeated bytes). CometBFT 0.38 sends one tx per message; a batch decodes the same way.
 */
import { ProtoReader, WIRE_LEN, expectWire } from '../../types/proto.js';
import { readOneof, writeOneof } from './oneof.js';

export const MEMPOOL_CHANNEL = 0x30;

export function encodeMempoolMessage(txs: readonly Uint8Array[]): Uint8Array {
  return writeOneof(1, (w) => {
    for (const tx of txs) w.bytesFieldAlways(1, tx);
  }, txs.reduce((n, tx) => n + tx.length + 6, 16));
}

/** The txs of a mempool Message (possibly none: the reactor refuses an empty batch, as CometBFT does). */
export function decodeMempoolMessage(bytes: Uint8Array): Uint8Array[] {
  const { body } = readOneof(bytes, [1], 'mempool');
  return readTxs(body);
}

function readTxs(r: ProtoReader): Uint8Array[] {
  const txs: Uint8Array[] = [];
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_LEN);
      txs.push(r.bytes());
    } else r.skip(wt);
  }
  return txs;
}
