/**
 * A made-up chain for evidence tests: block h was made at T0 + h seconds, heights 1..maxHeight
 * have a header time and one validator set, and votes are signed by that set's keys, so valid
 * duplicate-vote evidence can be built at any height.
 */
import { createHash } from 'node:crypto';
import type { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { SignedMsgType, type BlockID, type BlockMeta, type Vote } from '../../src/types/block.js';
import { newDuplicateVoteEvidence, type CheckedDuplicateVoteEvidence } from '../../src/types/evidence.js';
import { voteSignBytes } from '../../src/types/signbytes.js';
import type { ValidatorSet } from '../../src/types/validator_set.js';

export const SEC = 1_000_000_000n;
export const T0 = 1_700_000_000n * SEC;

export class EvidenceChain {
  private n = 0;
  /** What the pool reads of the chain (EvidencePool's `chain` option). */
  readonly store = {
    loadBlockMeta: (h: bigint) => (h >= 1n && h <= this.maxHeight ? ({ header: { time: this.timeOf(h) } } as BlockMeta) : null),
    loadValidators: (h: bigint) => (h >= 1n && h <= this.maxHeight ? this.vals : null),
  };

  constructor(
    readonly chainId: string,
    readonly vals: ValidatorSet,
    private readonly maxHeight: bigint,
  ) {}

  /** Block h's time. */
  timeOf(h: bigint): bigint {
    return T0 + h * SEC;
  }

  /** A fresh, deterministic BlockID. */
  blockId(): BlockID {
    return { hash: this.bytes(32), partSetHeader: { total: 1, hash: this.bytes(32) } };
  }

  /** A vote for a fresh block at height h, signed by `signer` (a key of the set). */
  vote(h: bigint, signer: Ed25519PrivKey, opts: { type?: SignedMsgType; round?: number } = {}): Vote {
    const v: Vote = {
      type: opts.type ?? SignedMsgType.Prevote,
      height: h,
      round: opts.round ?? 0,
      blockId: this.blockId(),
      timestamp: this.timeOf(h) + 1000n,
      validatorAddress: signer.address,
      validatorIndex: this.vals.getByAddress(signer.address)!.index,
      signature: new Uint8Array(0),
      extension: new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
    };
    return { ...v, signature: signer.sign(voteSignBytes(this.chainId, v)) };
  }

  /** Valid duplicate-vote evidence of `signer` at height h. */
  dve(h: bigint, signer: Ed25519PrivKey): CheckedDuplicateVoteEvidence {
    return newDuplicateVoteEvidence(this.vote(h, signer), this.vote(h, signer), this.timeOf(h), this.vals)!;
  }

  private bytes(len: number): Uint8Array {
    return new Uint8Array(createHash('sha256').update(`${this.chainId}/${this.n++}`).digest()).subarray(0, len);
  }
}
