/**
 * JSON of event data pushed to subscribers: `{"type": <registered name>, "value": …}` as cmtjson
 * renders CometBFT 0.38's EventData* types (cometbft/cometbft:types/events.go, libs/json; shapes checked against fixtures `subscribe_newblock_0` and `subscribe_txs_0`).
 *
 * Two encodings of ABCI results meet here, and which one applies depends on how Go reaches the
 * value (cmtjson uses a type's MarshalJSON only when it can take the value's address):
 * - `ExecTxResult` and `EventAttribute` have jsonpb MarshalJSON methods (EmitDefaults: every field,
 *   int64 as strings). Slice elements and pointers are addressable, so `tx_results` inside
 *   NewBlock's `result_finalize_block` and every event attribute use jsonpb.
 * - The Tx event embeds `abci.TxResult` by value inside an interface: its `result` is not
 *   addressable and is rendered by cmtjson with the proto `omitempty` tags, so zero fields vanish
 *   (the fixture's `result` holds only `events`), and `index` 0 is omitted too.
 *
 * Keys follow Go struct field order. Names that carry a brand (event data types, key types,
 * evidence types, the ABCI pubkey oneof name) come from the names registry.
 */
import type { AbciEvent, ExecTxResult, ResponseFinalizeBlock } from '../../../abci/types.js';
import type { EventDataCompleteProposal, EventDataNewRound, EventDataRoundState, EventDataVote } from '../../../consensus/types.js';
import type { EventDataTypeName, EventTypeValue, Names } from '../../../names/index.js';
import type { Block, BlockID, Header } from '../../../types/block.js';
import {
  base64,
  blockIdJSON,
  blockJSON,
  evidenceJSON,
  headerJSON,
  hexUpper,
  validatorJSON,
  voteJSON,
  type EvidenceTypeNames,
} from '../../../types/json.js';
import type { ValidatorUpdate } from '../../../types/validator.js';
import { newValidator } from '../../../types/validator_set.js';
// The ABCI encoders are shared with block_results / tx (one rendering of each ABCI type).
import { abciEventJSON, consensusParamUpdatesJSON, execTxResultJSON, validatorUpdateJSON } from './chain-json.js';

/**
 * The registered data type of each event type: NewRoundStep, Polka, Lock, Unlock, Relock,
 * ValidBlock, TimeoutPropose and TimeoutWait all carry EventDataRoundState (types/events.go).
 */
const DATA_TYPE: Record<string, EventDataTypeName> = {
  NewBlock: 'NewBlock',
  NewBlockHeader: 'NewBlockHeader',
  NewBlockEvents: 'NewBlockEvents',
  NewEvidence: 'NewEvidence',
  Tx: 'Tx',
  ValidatorSetUpdates: 'ValidatorSetUpdates',
  NewRound: 'NewRound',
  CompleteProposal: 'CompleteProposal',
  Vote: 'Vote',
  NewRoundStep: 'RoundState',
  Polka: 'RoundState',
  Lock: 'RoundState',
  Unlock: 'RoundState',
  Relock: 'RoundState',
  ValidBlock: 'RoundState',
  TimeoutPropose: 'RoundState',
  TimeoutWait: 'RoundState',
};

/** The `data.type` name for an event type, e.g. `Polka` → `consensus/event/RoundState`. */
export function eventDataTypeName(eventType: string, names: Names): string {
  return names.eventType(DATA_TYPE[eventType] ?? (eventType as EventTypeValue));
}

// ---------------------------------------------------------------------------------------------
// ABCI

/** ExecTxResult via cmtjson and its `omitempty` tags (the Tx event's non-addressable `result`). */
export function execTxResultOmitEmpty(r: ExecTxResult) {
  const out: Record<string, unknown> = {};
  if (r.code !== 0) out['code'] = r.code;
  if (r.data.length > 0) out['data'] = base64(r.data);
  if (r.log !== '') out['log'] = r.log;
  if (r.info !== '') out['info'] = r.info;
  if (r.gasWanted !== 0n) out['gas_wanted'] = r.gasWanted.toString();
  if (r.gasUsed !== 0n) out['gas_used'] = r.gasUsed.toString();
  if (r.events.length > 0) out['events'] = r.events.map(abciEventJSON);
  if (r.codespace !== '') out['codespace'] = r.codespace;
  return out;
}

/**
 * ResponseFinalizeBlock via cmtjson: `events`, `tx_results`, `consensus_param_updates` and
 * `app_hash` are `omitempty`; `validator_updates` is not (fixture: `"validator_updates": []`).
 */
export function resultFinalizeBlockJSON(r: ResponseFinalizeBlock, names: Names) {
  const out: Record<string, unknown> = {};
  if (r.events.length > 0) out['events'] = r.events.map(abciEventJSON);
  if (r.txResults.length > 0) out['tx_results'] = r.txResults.map(execTxResultJSON);
  out['validator_updates'] = r.validatorUpdates.map((u) => validatorUpdateJSON(u, names));
  if (r.consensusParamUpdates) out['consensus_param_updates'] = consensusParamUpdatesJSON(r.consensusParamUpdates);
  if (r.appHash.length > 0) out['app_hash'] = base64(r.appHash);
  return out;
}

/**
 * 0.37's ResponseBeginBlock{events,omitempty} and ResponseEndBlock{validator_updates,
 * consensus_param_updates,omitempty, events,omitempty} from a FinalizeBlock response: the events
 * the app marked `mode=BeginBlock` and `mode=EndBlock`, and the validator and params updates.
 */
function beginEndBlockJSON(r: ResponseFinalizeBlock, names: Names) {
  const inMode = (mode: string) => r.events.filter((e) => e.attributes.some((a) => a.key === 'mode' && a.value === mode)).map(abciEventJSON);
  const begin: Record<string, unknown> = {};
  const beginEvents = inMode('BeginBlock');
  if (beginEvents.length > 0) begin['events'] = beginEvents;
  const end: Record<string, unknown> = { validator_updates: r.validatorUpdates.length > 0 ? r.validatorUpdates.map((u) => validatorUpdateJSON(u, names)) : null };
  if (r.consensusParamUpdates) end['consensus_param_updates'] = consensusParamUpdatesJSON(r.consensusParamUpdates);
  const endEvents = inMode('EndBlock');
  if (endEvents.length > 0) end['events'] = endEvents;
  return { result_begin_block: begin, result_end_block: end };
}

// ---------------------------------------------------------------------------------------------
// Event data

function evidenceNames(names: Names): EvidenceTypeNames {
  return { duplicateVote: names.evidenceType('DuplicateVoteEvidence'), lightClientAttack: names.evidenceType('LightClientAttackEvidence') };
}

function roundStateJSON(d: EventDataRoundState) {
  return { height: d.height.toString(), round: d.round, step: d.step };
}

/** What the block executor publishes (src/state/execution.ts fireEvents). */
interface NewBlockData {
  block: Block;
  blockId: BlockID;
  resultFinalizeBlock: ResponseFinalizeBlock;
}
interface TxData {
  height: bigint;
  index: number;
  tx: Uint8Array;
  result: ExecTxResult;
}

/**
 * The `value` of an event's data, as cmtjson renders the EventData type. Types this node does not
 * know are passed through (64-bit integers become strings on the wire).
 */
export function eventDataValueJSON(type: string, data: unknown, names: Names): unknown {
  switch (type) {
    case 'NewBlock': {
      // EventDataNewBlock{Block, BlockID, ResultFinalizeBlock}
      const d = data as NewBlockData;
      const value: Record<string, unknown> = {
        block: blockJSON(d.block, { evidenceNames: evidenceNames(names) }),
        block_id: blockIdJSON(d.blockId),
        result_finalize_block: resultFinalizeBlockJSON(d.resultFinalizeBlock, names),
      };
      // The spec (§6) lists `result_begin_block` and `result_end_block` in the NewBlock value: the
      // 0.37 layout. With the spec's names they are there too, made from FinalizeBlock (the app
      // marks begin- and end-block events with `mode`); upstream names keep 0.38's exact value.
      if (!names.upstreamNames) Object.assign(value, beginEndBlockJSON(d.resultFinalizeBlock, names));
      return value;
    }
    case 'NewBlockHeader':
      return { header: headerJSON((data as { header: Header }).header) };
    case 'NewBlockEvents': {
      // EventDataNewBlockEvents{Height, Events, NumTxs `json:"num_txs,string"`}
      const d = data as { height: bigint; events: AbciEvent[]; numTxs: number | bigint };
      return { height: d.height.toString(), events: d.events.map(abciEventJSON), num_txs: String(d.numTxs) };
    }
    case 'NewEvidence': {
      // EventDataNewEvidence{Evidence, Height}
      const d = data as { height: bigint; evidence: Uint8Array };
      return { evidence: evidenceJSON(d.evidence, evidenceNames(names)), height: d.height.toString() };
    }
    case 'Tx': {
      // EventDataTx embeds abci.TxResult without a json tag, hence the Go field name "TxResult".
      const d = data as TxData;
      const txResult: Record<string, unknown> = { height: d.height.toString() };
      if (d.index !== 0) txResult['index'] = d.index;
      txResult['tx'] = base64(d.tx);
      txResult['result'] = execTxResultOmitEmpty(d.result);
      return { TxResult: txResult };
    }
    case 'ValidatorSetUpdates': {
      // fireEvents converts the ABCI updates with PB2TM.ValidatorUpdates: address from the key,
      // proposer priority 0.
      const d = data as { validatorUpdates: ValidatorUpdate[] };
      return {
        validator_updates: d.validatorUpdates.map((u) => validatorJSON(newValidator(u.pubKey, u.power), (pk) => names.pubKeyType(pk.type))),
      };
    }
    case 'NewRound': {
      const d = data as EventDataNewRound;
      return { ...roundStateJSON(d), proposer: { address: hexUpper(d.proposer.address), index: d.proposer.index } };
    }
    case 'CompleteProposal': {
      const d = data as EventDataCompleteProposal;
      return { ...roundStateJSON(d), block_id: blockIdJSON(d.blockId) };
    }
    case 'Vote':
      // EventDataVote{Vote *Vote} has no json tag: the key is the Go field name.
      return { Vote: voteJSON((data as EventDataVote).vote) };
    case 'NewRoundStep':
    case 'Polka':
    case 'Lock':
    case 'Unlock':
    case 'Relock':
    case 'ValidBlock':
    case 'TimeoutPropose':
    case 'TimeoutWait':
      return roundStateJSON(data as EventDataRoundState);
    default:
      return data;
  }
}

/** `{"type": …, "value": …}`: the `data` member of a subscription push. */
export function eventDataJSON(type: string, data: unknown, names: Names): { type: string; value: unknown } {
  return { type: eventDataTypeName(type, names), value: eventDataValueJSON(type, data, names) };
}
