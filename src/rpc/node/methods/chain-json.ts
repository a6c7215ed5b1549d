/**
 * JSON renderings the chain read methods need beyond src/types/json.ts: the ABCI results of
 * `block_results`, `tx` and `tx_search`, and the tx Merkle proof
 * (cometbft: abci/types/types.go, rpc/core/types/responses.go, types/tx.go;
 * cometbft/cometbft:libs/json/encoder.go, cometbft/cometbft:crypto/ed25519/ed25519.go).
 *
 * Two encoders meet here, as in CometBFT:
 * - gogo jsonpb (EmitDefaults, EnumsAsInts) for ExecTxResult and EventAttribute: every field is
 *   present, int64 as strings, `data` base64 or null, `events: []`, attributes `{key,value,index}`;
 * - cmtjson for everything else, which honours `omitempty`: an Event with no type or no attributes
 *   drops those keys, a ValidatorUpdate with power 0 drops `power`, zero consensus params drop out.
 */
import type { AbciEvent, EventAttribute, ExecTxResult } from '../../../abci/types.js';
import type { MerkleProof } from '../../../crypto/merkle.js';
import type { Names } from '../../../names/index.js';
import type { ConsensusParams } from '../../../types/params.js';
import type { ValidatorUpdate } from '../../../types/validator.js';
import { base64, base64OrNull, hexUpper, merkleProofJSON } from '../../../types/json.js';

/** EventAttribute through jsonpb (abci/types/types.go EventAttribute.MarshalJSON). */
export function eventAttributeJSON(a: EventAttribute) {
  return { key: a.key, value: a.value, index: a.index };
}

/** An Event inside a jsonpb message (ExecTxResult.events): both fields always present. */
function jsonpbEventJSON(e: AbciEvent) {
  return { type: e.type, attributes: e.attributes.map(eventAttributeJSON) };
}

/**
 * ExecTxResult through jsonpb (abci/types/types.go ExecTxResult.MarshalJSON), in proto field
 * order: code, data, log, info, gas_wanted, gas_used, events, codespace.
 */
export function execTxResultJSON(r: ExecTxResult) {
  return {
    code: r.code,
    data: base64OrNull(r.data),
    log: r.log,
    info: r.info,
    gas_wanted: r.gasWanted.toString(),
    gas_used: r.gasUsed.toString(),
    events: r.events.map(jsonpbEventJSON),
    codespace: r.codespace,
  };
}

/** abci.Event through cmtjson (`finalize_block_events`): `type` and `attributes` are omitempty. */
export function abciEventJSON(e: AbciEvent) {
  const out: { type?: string; attributes?: ReturnType<typeof eventAttributeJSON>[] } = {};
  if (e.type !== '') out.type = e.type;
  if (e.attributes.length > 0) out.attributes = e.attributes.map(eventAttributeJSON);
  return out;
}

/**
 * abci.ValidatorUpdate through cmtjson: the proto PublicKey's oneof has no json tag, so it shows
 * as `Sum`, wrapped with its registered Go type name (names.abciPubKeySumType, cometbft/cometbft:crypto/ed25519/ed25519.go):
 * `{"pub_key":{"Sum":{"type":"…PublicKey_Ed25519","value":{"ed25519":b64}}},"power":"n"}`.
 */
export function validatorUpdateJSON(u: ValidatorUpdate, names: Names) {
  const out: { pub_key: { Sum: { type: string; value: Record<string, string> } }; power?: string } = {
    pub_key: { Sum: { type: names.abciPubKeySumType(u.pubKey.type), value: { [u.pubKey.type]: base64(u.pubKey.bytes) } } },
  };
  if (u.power !== 0n) out.power = u.power.toString();
  return out;
}

/**
 * The proto ConsensusParams of `consensus_param_updates` (proto/tendermint/types/params.pb.go
 * through cmtjson): every scalar is omitempty except the non-nullable `max_age_duration`
 * (a time.Duration: int64 nanoseconds as a string).
 */
export function consensusParamUpdatesJSON(p: ConsensusParams) {
  const put = (o: Record<string, unknown>, k: string, v: bigint) => {
    if (v !== 0n) o[k] = v.toString();
  };
  const block: Record<string, unknown> = {};
  put(block, 'max_bytes', p.block.maxBytes);
  put(block, 'max_gas', p.block.maxGas);
  const evidence: Record<string, unknown> = {};
  put(evidence, 'max_age_num_blocks', p.evidence.maxAgeNumBlocks);
  evidence['max_age_duration'] = p.evidence.maxAgeDuration.toString();
  put(evidence, 'max_bytes', p.evidence.maxBytes);
  const validator: Record<string, unknown> = {};
  if (p.validator.pubKeyTypes.length > 0) validator['pub_key_types'] = [...p.validator.pubKeyTypes];
  const version: Record<string, unknown> = {};
  put(version, 'app', p.version.app);
  const abci: Record<string, unknown> = {};
  put(abci, 'vote_extensions_enable_height', p.abci.voteExtensionsEnableHeight);
  return { block, evidence, validator, version, abci };
}

/** types.TxProof: the tx's Merkle proof against the block's data hash (types/tx.go Txs.Proof). */
export interface TxProof {
  rootHash: Uint8Array;
  tx: Uint8Array;
  proof: MerkleProof;
}

export function txProofJSON(p: TxProof) {
  return { root_hash: hexUpper(p.rootHash), data: base64OrNull(p.tx), proof: merkleProofJSON(p.proof) };
}

/** What one `tx` / `tx_search` entry is made of. */
export interface ResultTxParts {
  hash: Uint8Array;
  height: bigint;
  index: number;
  result: ExecTxResult;
  tx: Uint8Array;
  proof?: TxProof;
}

/**
 * coretypes.ResultTx: `hash` upper hex, `height` int64 string, `index` uint32 number, `tx_result`
 * jsonpb, `tx` base64, `proof` omitted unless asked for (a zero TxProof is omitempty's zero).
 */
export function resultTxJSON(r: ResultTxParts) {
  const out: {
    hash: string;
    height: string;
    index: number;
    tx_result: ReturnType<typeof execTxResultJSON>;
    tx: string | null;
    proof?: ReturnType<typeof txProofJSON>;
  } = {
    hash: hexUpper(r.hash),
    height: r.height.toString(),
    index: r.index,
    tx_result: execTxResultJSON(r.result),
    tx: base64OrNull(r.tx),
  };
  if (r.proof) out.proof = txProofJSON(r.proof);
  return out;
}
