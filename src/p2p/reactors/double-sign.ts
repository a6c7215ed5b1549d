/**
 * A test-only equivocating validator: for the e2e test that a double sign becomes
 * DuplicateVoteEvidence which is gossiped and committed (cometbft/cometbft:test/e2e has a
 * "maverick"/evidence injection for the same purpose). Never active unless the node is started
 * with CHAIND_TEST_DOUBLE_SIGN=1 on a chain whose id begins with "test-"; anything else refuses.
 *
 * It wraps the consensus state machine's broadcast: whenever our own prevote for a block goes
 * out, a second prevote for nil at the same height and round, signed with the same key (past the
 * private validator's double-sign protection), is sent straight to every peer on the vote
 * channel (the consensus reactor would not send a second vote for one height/round/type).
 */
import type { ConsensusMessage } from '../../consensus/types.js';
import type { Ed25519PrivKey } from '../../crypto/ed25519.js';
import { SignedMsgType, type Vote } from '../../types/block.js';
import { voteSignBytes } from '../../types/signbytes.js';
import { VOTE_CHANNEL, encodeConsensusMessage } from '../messages/consensus.js';
import type { Switch } from '../switch.js';

export const DOUBLE_SIGN_ENV = 'CHAIND_TEST_DOUBLE_SIGN';

/** Whether the test-only double signer is asked for; throws when asked for outside a test chain. */
export function doubleSignRequested(requested: boolean, chainId: string): boolean {
  if (!requested) return false;
  if (!chainId.startsWith('test-')) {
    throw new Error(`${DOUBLE_SIGN_ENV}=1 makes this validator sign conflicting votes: refused on chain "${chainId}" (only chain ids beginning "test-")`);
  }
  return true;
}

/** Wraps `broadcast` so that each own block prevote is followed by a conflicting nil prevote. */
export function equivocatingBroadcast(
  broadcast: (msg: ConsensusMessage) => void,
  opts: { key: Ed25519PrivKey; chainId: string; sw: () => Switch | null; onDoubleSign?: (v: Vote) => void },
): (msg: ConsensusMessage) => void {
  const own = Buffer.from(opts.key.address).toString('hex');
  return (msg) => {
    broadcast(msg);
    if (msg.kind !== 'vote') return;
    const v = msg.vote;
    if (v.type !== SignedMsgType.Prevote || v.blockId.hash.length === 0) return;
    if (Buffer.from(v.validatorAddress).toString('hex') !== own) return;
    const nil = { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
    const conflicting: Vote = { ...v, blockId: nil, signature: new Uint8Array(0) };
    conflicting.signature = opts.key.sign(voteSignBytes(opts.chainId, conflicting));
    const bytes = encodeConsensusMessage({ type: 'Vote', vote: conflicting });
    for (const p of opts.sw()?.peerList() ?? []) p.trySend(VOTE_CHANNEL, bytes);
    opts.onDoubleSign?.(conflicting);
  };
}
