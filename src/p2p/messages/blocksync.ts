/**
 * The blocksync reactor's messages on channel 0x40 (cometbft/cometbft:proto/tendermint/blocksync/types.proto):
 *
 *   Message{oneof sum: block_request=1 BlockRequest{height=1}, no_block_response=2 NoBlockResponse{height=1},
 *           block_response=3 BlockResponse{block Block=1, ext_commit ExtendedCommit=2},
 *           status_request=4 StatusRequest{}, status_response=5 StatusResponse{height=1, base=2}}
 *
 * A BlockResponse without a block is refused (BlockFromProto(nil) fails in CometBFT); ext_commit
 * is present only when vote extensions are enabled at that height. The decoded response keeps the
 * block's proto bytes as received, so the receiver can rebuild its part set without re-encoding.
 */
import type { Block } from '../../types/block.js';
import { readBlock, readExtendedCommit, writeBlockBody, writeExtendedCommitBody, type ExtendedCommit } from '../../types/codec.js';
import { ProtoDecodeError, ProtoReader, type ProtoWriter, WIRE_LEN, WIRE_VARINT, expectWire } from '../../types/proto.js';
import { readOneof, writeOneof } from './oneof.js';

export const BLOCKSYNC_CHANNEL = 0x40;

export type BlocksyncMessage =
  | { type: 'BlockRequest'; height: bigint }
  | { type: 'NoBlockResponse'; height: bigint }
  | { type: 'BlockResponse'; block: Block; extCommit: ExtendedCommit | null }
  | { type: 'StatusRequest' }
  | { type: 'StatusResponse'; height: bigint; base: bigint };

export type DecodedBlocksyncMessage =
  | Exclude<BlocksyncMessage, { type: 'BlockResponse' }>
  | { type: 'BlockResponse'; block: Block; extCommit: ExtendedCommit | null; blockBytes: Uint8Array };

export const BLOCKSYNC_FIELD = { BlockRequest: 1, NoBlockResponse: 2, BlockResponse: 3, StatusRequest: 4, StatusResponse: 5 } as const;

function writeBody(w: ProtoWriter, m: BlocksyncMessage): void {
  switch (m.type) {
    case 'BlockRequest':
    case 'NoBlockResponse':
      w.int64Field(1, m.height);
      return;
    case 'BlockResponse': {
      let k = w.fork(1);
      writeBlockBody(w, m.block);
      w.ldelim(k);
      if (m.extCommit) {
        k = w.fork(2);
        writeExtendedCommitBody(w, m.extCommit);
        w.ldelim(k);
      }
      return;
    }
    case 'StatusRequest':
      return;
    case 'StatusResponse':
      w.int64Field(1, m.height);
      w.int64Field(2, m.base);
      return;
  }
}

export function encodeBlocksyncMessage(m: BlocksyncMessage): Uint8Array {
  let hint = 64;
  if (m.type === 'BlockResponse') hint = 4096 + m.block.data.txs.reduce((n, tx) => n + tx.length + 6, 0);
  return writeOneof(BLOCKSYNC_FIELD[m.type], (w) => writeBody(w, m), hint);
}

/**
 * A BlockResponse from the block's stored proto bytes (what the block store keeps), without
 * decoding and re-encoding the block; `extCommit` likewise already encoded, or null.
 */
export function encodeBlockResponseRaw(blockBytes: Uint8Array, extCommitBytes: Uint8Array | null = null): Uint8Array {
  return writeOneof(BLOCKSYNC_FIELD.BlockResponse, (w) => {
    w.bytesFieldAlways(1, blockBytes);
    if (extCommitBytes) w.bytesFieldAlways(2, extCommitBytes);
  }, blockBytes.length + (extCommitBytes?.length ?? 0) + 32);
}

function readHeights(r: ProtoReader): { height: bigint; base: bigint } {
  let height = 0n;
  let base = 0n;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (f === 1) {
      expectWire(f, wt, WIRE_VARINT);
      height = r.int64();
    } else if (f === 2) {
      expectWire(f, wt, WIRE_VARINT);
      base = r.int64();
    } else r.skip(wt);
  }
  return { height, base };
}

export function decodeBlocksyncMessage(bytes: Uint8Array): DecodedBlocksyncMessage {
  const { field, body: r } = readOneof(bytes, [1, 2, 3, 4, 5], 'blocksync');
  switch (field) {
    case 1:
      return { type: 'BlockRequest', height: readHeights(r).height };
    case 2:
      return { type: 'NoBlockResponse', height: readHeights(r).height };
    case 3: {
      let blockBytes: Uint8Array | undefined;
      let extCommit: ExtendedCommit | null = null;
      while (!r.eof()) {
        const t = r.tag();
        const f = t >>> 3;
        const wt = t & 7;
        if (f === 1) {
          expectWire(f, wt, WIRE_LEN);
          blockBytes = r.bytes();
        } else if (f === 2) {
          expectWire(f, wt, WIRE_LEN);
          extCommit = readExtendedCommit(r.sub());
        } else r.skip(wt);
      }
      if (blockBytes === undefined) throw new ProtoDecodeError('blocksync: BlockResponse without a block');
      return { type: 'BlockResponse', block: readBlock(new ProtoReader(blockBytes)), extCommit, blockBytes };
    }
    case 4:
      return { type: 'StatusRequest' };
    case 5:
      return { type: 'StatusResponse', ...readHeights(r) };
    default:
      throw new ProtoDecodeError(`blocksync: unknown message field ${field}`);
  }
}

/**
 * blocksync ValidateMsg (cometbft/cometbft:blocksync/msgs.go) for the height-only messages; a
 * BlockResponse's block is checked by the pool against the next block's LastCommit.
 */
export function validateBlocksyncMessage(m: BlocksyncMessage | DecodedBlocksyncMessage): string | null {
  switch (m.type) {
    case 'BlockRequest':
    case 'NoBlockResponse':
      return m.height < 0n ? 'negative Height' : null;
    case 'StatusResponse':
      if (m.base < 0n) return 'negative Base';
      if (m.height < 0n) return 'negative Height';
      if (m.base > m.height) return `base ${m.base} cannot be greater than height ${m.height}`;
      return null;
    default:
      return null;
  }
}
