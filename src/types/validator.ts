/**
 * Validators and the validator set with CometBFT's proposer-priority rotation
 * (types/validator_set.go).
 */
import type { Bytes } from './block.js';

export type { PubKey, PubKeyType } from '../crypto/hash.js';
import type { PubKey } from '../crypto/hash.js';

export interface Validator {
  /** First 20 bytes of sha256(pubkey) for ed25519. */
  address: Bytes;
  pubKey: PubKey;
  votingPower: bigint;
  proposerPriority: bigint;
}

/** An ABCI validator update: power 0 removes the validator. */
export interface ValidatorUpdate {
  pubKey: PubKey;
  power: bigint;
}
