/**
 * Verification of evidence against the chain (cometbft: evidence/verify.go Pool.verify and
 * VerifyDuplicateVote). Each function answers the reason text CometBFT gives, or null when the
 * evidence holds; the pool wraps a reason as `Invalid evidence: <reason>. Evidence: <ev>`.
 *
 * The order is CometBFT's: the header at the evidence height must exist and carry the evidence
 * time; the evidence must not have expired (older than BOTH max_age_num_blocks and
 * max_age_duration); then the validator set of that height decides the duplicate vote.
 */
import { ed25519Address, ed25519Verify } from '../crypto/ed25519.js';
import { blockIdEqual, compareBytesLex } from '../consensus/util.js';
import type { State } from '../types/state.js';
import type { BlockMeta, Vote } from '../types/block.js';
import type { CheckedDuplicateVoteEvidence } from '../types/evidence.js';
import { blockIdString, formatTime, hexUpper, signedMsgTypeName } from '../types/json.js';
import { voteSignBytes } from '../types/signbytes.js';
import type { ValidatorSet } from '../types/validator_set.js';

/** What verification reads of the stores (src/store/blockstore.ts, statestore.ts fit). */
export interface EvidenceChainReader {
  loadBlockMeta(height: bigint): BlockMeta | null;
  loadValidators(height: bigint): ValidatorSet | null;
}

/** Go's time.Time.String() of a UTC time: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(ns: bigint): string {
  return formatTime(ns).replace('T', ' ').replace(/Z$/, ' +0000 UTC');
}

/**
 * isExpired (evidence/pool.go): older than max_age_num_blocks AND max_age_duration, measured
 * from the state's last block. Evidence stays valid while either bound still holds.
 */
export function isExpired(state: State, height: bigint, time: bigint): boolean {
  const p = state.consensusParams.evidence;
  return state.lastBlockHeight - height > p.maxAgeNumBlocks && state.lastBlockTime - time > p.maxAgeDuration;
}

/** Pool.verify's checks common to every evidence type: header, time, expiry. */
export function verifyHeightAndTime(state: State, chain: EvidenceChainReader, evHeight: bigint, evTimestamp: bigint): string | null {
  const meta = chain.loadBlockMeta(evHeight);
  if (meta === null) return `don't have header #${evHeight}`;
  const evTime = meta.header.time;
  if (evTimestamp !== evTime) {
    return `evidence has a different time to the block it is associated with (${goTimeString(evTimestamp)} != ${goTimeString(evTime)})`;
  }
  if (isExpired(state, evHeight, evTime)) {
    const p = state.consensusParams.evidence;
    return (
      `evidence from height ${evHeight} (created at: ${goTimeString(evTime)}) is too old; min height is ${state.lastBlockHeight - p.maxAgeNumBlocks} ` +
      `and evidence can not be older than ${goTimeString(state.lastBlockTime + p.maxAgeDuration)}`
    );
  }
  return null;
}

/** Pool.verify + VerifyDuplicateVote for duplicate-vote evidence that passed ValidateBasic. */
export function verifyDuplicateVote(state: State, chain: EvidenceChainReader, e: CheckedDuplicateVoteEvidence): string | null {
  const { voteA, voteB } = e;
  const evHeight = voteA.height;
  const common = verifyHeightAndTime(state, chain, evHeight, e.timestamp);
  if (common !== null) return common;
  const valSet = chain.loadValidators(evHeight);
  if (valSet === null) return `could not find validator set for height #${evHeight}`;

  const found = valSet.getByAddress(voteA.validatorAddress);
  if (found === null) return `address ${hexUpper(voteA.validatorAddress)} was not a validator at height ${evHeight}`;
  const val = found.validator;
  if (voteA.height !== voteB.height || voteA.round !== voteB.round || voteA.type !== voteB.type) {
    return (
      `h/r/s does not match: ${voteA.height}/${voteA.round}/${signedMsgTypeName(voteA.type)} vs ` +
      `${voteB.height}/${voteB.round}/${signedMsgTypeName(voteB.type)}`
    );
  }
  if (compareBytesLex(voteA.validatorAddress, voteB.validatorAddress) !== 0) {
    return `validator addresses do not match: ${hexUpper(voteA.validatorAddress)} vs ${hexUpper(voteB.validatorAddress)}`;
  }
  if (blockIdEqual(voteA.blockId, voteB.blockId)) return `block IDs are the same (${blockIdString(voteA.blockId)}) - not a real duplicate vote`;
  if (val.pubKey.type === 'ed25519') {
    const derived = ed25519Address(val.pubKey.bytes);
    if (compareBytesLex(derived, voteA.validatorAddress) !== 0) {
      return `address (${hexUpper(voteA.validatorAddress)}) doesn't match pubkey (PubKeyEd25519{${hexUpper(val.pubKey.bytes)}} - ${hexUpper(derived)})`;
    }
  }
  if (val.votingPower !== e.validatorPower) {
    return `validator power from evidence and our validator set does not match (${e.validatorPower} != ${val.votingPower})`;
  }
  const total = valSet.totalVotingPower();
  if (total !== e.totalVotingPower) {
    return `total voting power from the evidence and our validator set does not match (${e.totalVotingPower} != ${total})`;
  }
  // Only ed25519 validator keys exist in chaind; another key type cannot verify here.
  const verify = (v: Vote) => val.pubKey.type === 'ed25519' && ed25519Verify(val.pubKey.bytes, voteSignBytes(state.chainId, v), v.signature);
  if (!verify(voteA)) return 'verifying VoteA: invalid signature';
  if (!verify(voteB)) return 'verifying VoteB: invalid signature';
  return null;
}
