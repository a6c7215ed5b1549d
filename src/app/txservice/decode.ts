/**
 * Tx bytes → the `Tx` message the tx service returns (cosmos-sdk: x/auth/tx decoder.go
 * DefaultTxDecoder, then the wrapper's AsTx/GetProtoTx: the Tx whose body and auth info are the
 * decoded body_bytes and auth_info_bytes, and whose signatures are the TxRaw's).
 */
import { create, fromBinary } from '@bufbuild/protobuf';
import { AuthInfoSchema, TxBodySchema, TxSchema, type Tx } from '../../gen/chain/tx/v1beta1/tx_pb.js';
import { fromProtoJsonString } from '../../proto/json.js';
import { decodeTx } from '../../tx/codec.js';

/** Decodes tx bytes into the proto Tx; throws an AbciError `…: tx parse error` (sdk 2). */
export type StoredTxDecoder = (txBytes: Uint8Array) => Tx;

/**
 * The protobuf decoder with every check of DefaultTxDecoder (ADR-027 TxRaw, unknown fields).
 * Unknown non-critical fields of the body are left out of the returned Tx, as gogoproto drops
 * unknown fields when it unmarshals (the SDK's Tx types keep no XXX_unrecognized); packed
 * messages inside Anys keep their bytes as sent.
 */
export function decodeProtoTx(txBytes: Uint8Array): Tx {
  const d = decodeTx(txBytes);
  const body = d.hasUnknownNonCriticals ? fromBinary(TxBodySchema, d.bodyBytes, { readUnknownFields: false }) : d.body;
  const authInfo = fromBinary(AuthInfoSchema, d.authInfoBytes, { readUnknownFields: false });
  return create(TxSchema, { body, authInfo, signatures: d.signatures });
}

const OPEN_BRACE = 0x7b;

/**
 * The decoder for txs read back from blocks and the indexer: the protobuf decoder, and for bytes
 * that are not a TxRaw but the proto3 JSON of a Tx (what the test-only `jsonTxDecoder` of
 * src/app/tx.ts admits into blocks), that JSON read as a Tx. No JSON text is a valid TxRaw (`{`
 * is field 15 with the group wire type, which ADR-027 refuses), so on a node with the protobuf
 * decoder the second path never runs; with the JSON decoder it lets GetTx, GetTxsEvent and
 * GetBlockWithTxs show the txs that node committed. The protobuf error is the one reported.
 */
export function decodeStoredTx(txBytes: Uint8Array): Tx {
  try {
    return decodeProtoTx(txBytes);
  } catch (protoErr) {
    if (txBytes.length === 0 || txBytes[0] !== OPEN_BRACE) throw protoErr;
    try {
      return fromProtoJsonString(TxSchema, Buffer.from(txBytes.buffer, txBytes.byteOffset, txBytes.byteLength).toString('utf8'));
    } catch {
      throw protoErr;
    }
  }
}
