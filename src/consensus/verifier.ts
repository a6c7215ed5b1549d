/**
 * Signature checks for votes and proposals. Consensus hands over every signature that arrives
 * in one event-loop turn as one batch, so the worker pool (src/pool) sees batches rather than
 * single items (docs/ARCHITECTURE.md "Threads"; lodestar chain/bls batching).
 *
 * The synchronous default runs node:crypto inline: deterministic, for tests and single-node setups.
 */
import { ed25519Verify } from '../crypto/ed25519.js';

export interface Ed25519Item {
  scheme: 'ed25519';
  pubKey: Uint8Array;
  msg: Uint8Array;
  sig: Uint8Array;
}

/** What consensus needs; one boolean per item, in order. Must not throw for bad signatures. */
export interface VoteVerifier {
  verifyEd25519(items: readonly Ed25519Item[]): Promise<boolean[]>;
}

/** Verifies inline on the calling thread. */
export class SyncVoteVerifier implements VoteVerifier {
  async verifyEd25519(items: readonly Ed25519Item[]): Promise<boolean[]> {
    return items.map((it) => ed25519Verify(it.pubKey, it.msg, it.sig));
  }
}

/** Adapts the crypto pool (src/pool CryptoPool.verifySignatures) to a VoteVerifier. */
export function poolVoteVerifier(pool: { verifySignatures(items: readonly Ed25519Item[]): Promise<boolean[]> }): VoteVerifier {
  return {
    async verifyEd25519(items) {
      if (items.length === 0) return [];
      return pool.verifySignatures(items);
    },
  };
}
