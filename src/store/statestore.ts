/**
 * The consensus state, validator sets and consensus params by height, and the FinalizeBlock
 * responses (state/store.go in CometBFT).
 *
 * CometBFT writes a full validator set only where it changed (and every 100,000 heights) and
 * recomputes proposer priorities in between. chaind writes the full set every height: a set is a
 * few hundred bytes per validator, and a read then costs one get instead of a replay of
 * IncrementProposerPriority over up to 100k heights. Revisit when sets reach hundreds of entries.
 */
import type { ResponseFinalizeBlock } from '../abci/types.js';
import type { State } from '../types/state.js';
import type { ConsensusParams } from '../types/params.js';
import type { Validator } from '../types/validator.js';
import { ValidatorSet } from '../types/validator_set.js';
import { heightKey, strKey } from './keys.js';
import type { BinaryDB, DbName } from './db.js';
import { readEvents, Reader, readTxResult, writeEvents, Writer, writeTxResult } from './record-codec.js';
import { decodeTagged, encodeTagged } from './tagged.js';

const STATE_KEY = strKey('state');

interface ValidatorSetRecord {
  validators: Validator[];
  proposer: Uint8Array | null;
}

type StateRecord = Omit<State, 'validators' | 'nextValidators' | 'lastValidators'> & {
  validators: ValidatorSetRecord;
  nextValidators: ValidatorSetRecord;
  lastValidators: ValidatorSetRecord;
};

function toRecord(vs: ValidatorSet): ValidatorSetRecord {
  return { validators: vs.validators, proposer: vs.isEmpty() ? null : vs.proposer.address };
}

function fromRecord(r: ValidatorSetRecord): ValidatorSet {
  return ValidatorSet.restore(r.validators, r.proposer);
}

export class StateStore {
  private readonly dbs: Record<DbName, BinaryDB>;

  constructor(dbs: Record<DbName, BinaryDB>) {
    this.dbs = dbs;
  }

  load(): State | null {
    const v = this.dbs.state.getBinary(STATE_KEY);
    if (!v) return null;
    const r = decodeTagged<StateRecord>(v);
    return {
      ...r,
      validators: fromRecord(r.validators),
      nextValidators: fromRecord(r.nextValidators),
      lastValidators: fromRecord(r.lastValidators),
    };
  }

  /**
   * Saves the state after a height and what later RPC reads need of it: the validator sets of
   * the next two heights and the params of the next height. Runs inside the block's transaction.
   */
  save(state: State): void {
    const rec: StateRecord = {
      ...state,
      validators: toRecord(state.validators),
      nextValidators: toRecord(state.nextValidators),
      lastValidators: toRecord(state.lastValidators),
    };
    this.dbs.state.putSync(STATE_KEY, encodeTagged(rec));
    const next = state.lastBlockHeight + 1n;
    this.dbs.validators.putSync(heightKey(next), encodeTagged(rec.validators));
    this.dbs.validators.putSync(heightKey(next + 1n), encodeTagged(rec.nextValidators));
    this.dbs.params.putSync(heightKey(next), encodeTagged(state.consensusParams));
  }

  /**
   * The validator set and params of the initial height, which no later `save` covers (save writes
   * H+1 and H+2). Called inside block 1's transaction with the genesis state.
   */
  saveInitialHeight(state: State): void {
    const h = state.initialHeight;
    this.dbs.validators.putSync(heightKey(h), encodeTagged(toRecord(state.validators)));
    this.dbs.params.putSync(heightKey(h), encodeTagged(state.consensusParams));
  }

  loadValidators(height: bigint): ValidatorSet | null {
    const v = this.dbs.validators.getBinary(heightKey(height));
    return v ? fromRecord(decodeTagged<ValidatorSetRecord>(v)) : null;
  }

  loadConsensusParams(height: bigint): ConsensusParams | null {
    const v = this.dbs.params.getBinary(heightKey(height));
    return v ? decodeTagged<ConsensusParams>(v) : null;
  }

  saveFinalizeBlockResponse(height: bigint, resp: ResponseFinalizeBlock): void {
    this.dbs.abci_responses.putSync(heightKey(height), encodeFinalizeBlockRecord(resp));
  }

  loadFinalizeBlockResponse(height: bigint): ResponseFinalizeBlock | null {
    const v = this.dbs.abci_responses.getBinary(heightKey(height));
    return v ? decodeFinalizeBlockRecord(v) : null;
  }
}

/**
 * A FinalizeBlock response as stored (CometBFT stores the proto ResponseFinalizeBlock): version
 * byte 2, the block's events, the tx results (record-codec.ts), the app hash, then the rare parts
 * (validator updates, consensus param updates) as one tagged-JSON record. The tx results are the
 * bulk: their events in a tagged JSON cost ~35–55 µs a bank send to write and 80–130 µs to read
 * (block_results), their binary form a fraction of it. Heights written before it hold the whole
 * response as tagged JSON, which starts with `{`; both are read.
 */
const FINALIZE_RECORD_VERSION = 2;

export function encodeFinalizeBlockRecord(resp: ResponseFinalizeBlock): Buffer {
  const w = new Writer();
  w.u8(FINALIZE_RECORD_VERSION);
  writeEvents(w, resp.events);
  w.u32(resp.txResults.length);
  for (const r of resp.txResults) writeTxResult(w, r);
  w.bytes(resp.appHash);
  w.bytes(encodeTagged({ validatorUpdates: resp.validatorUpdates, consensusParamUpdates: resp.consensusParamUpdates }));
  return w.finish();
}

export function decodeFinalizeBlockRecord(b: Uint8Array): ResponseFinalizeBlock {
  if (b[0] === 0x7b) return decodeTagged<ResponseFinalizeBlock>(b); // `{`: a tagged-JSON record
  const r = new Reader(b);
  const ver = r.u8();
  if (ver !== FINALIZE_RECORD_VERSION) throw new Error(`FinalizeBlock response record: unknown version ${ver}`);
  const events = readEvents(r);
  const n = r.u32();
  const txResults = new Array(n);
  for (let i = 0; i < n; i++) txResults[i] = readTxResult(r);
  const appHash = r.bytes();
  const rare = decodeTagged<Pick<ResponseFinalizeBlock, 'validatorUpdates' | 'consensusParamUpdates'>>(r.bytes());
  return { events, txResults, validatorUpdates: rare.validatorUpdates, ...(rare.consensusParamUpdates !== undefined ? { consensusParamUpdates: rare.consensusParamUpdates } : {}), appHash };
}
