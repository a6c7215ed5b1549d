/**
 * The evidence reactor (cometbft/cometbft:evidence/reactor.go) on channel 0x38: pending evidence
 * is sent to each peer once, one item per EvidenceList message (as broadcastEvidenceRoutine does);
 * received evidence goes through ValidateBasic (a failure disconnects the peer, as
 * ErrInvalidEvidence does) and then the pool's AddEvidence (a verification failure there is
 * logged: it is also what a peer ahead of us sends for a height we have not reached).
 * Light-client-attack evidence cannot be verified by chaind and is ignored.
 * Simplified: no check of the peer's height before sending (CometBFT waits until the peer is at
 * the evidence's height); evidence is re-offered after a reconnect.
 */
import type { Logger } from '../../log.js';
import { nullLogger } from '../../log.js';
import { decodeEvidenceItem, duplicateVoteValidateBasic, type CheckedDuplicateVoteEvidence } from '../../types/evidence.js';
import { P2PError } from '../errors.js';
import type { ChannelDescriptor } from '../mconnection.js';
import { EVIDENCE_CHANNEL, decodeEvidenceMessage, encodeEvidenceMessage } from '../messages/evidence.js';
import type { Peer, Reactor } from '../switch.js';

/** What the reactor needs of src/evidence/pool.ts EvidencePool. */
export interface EvidenceSource {
  pendingEvidence(maxBytes: bigint): { evidence: Uint8Array[] };
  addEvidence(ev: CheckedDuplicateVoteEvidence): Uint8Array;
}

/** maxMsgSize of cometbft/cometbft:evidence/reactor.go (1 MiB). */
export const MAX_EVIDENCE_MSG_SIZE = 1_048_576;

export class EvidenceReactor implements Reactor {
  readonly name = 'evidence';
  readonly channels: readonly ChannelDescriptor[] = [{ id: EVIDENCE_CHANNEL, priority: 6, recvMessageCapacity: MAX_EVIDENCE_MSG_SIZE }];
  private readonly log: Logger;
  private readonly sent = new Map<string, { peer: Peer; keys: Set<string> }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: { pool: EvidenceSource; logger?: Logger; intervalMs?: number }) {
    this.log = opts.logger ?? nullLogger;
  }

  start(): void {
    this.timer = setInterval(() => this.pass(), this.opts.intervalMs ?? 1000);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  addPeer(peer: Peer): void {
    this.sent.set(peer.id, { peer, keys: new Set() });
  }

  removePeer(peer: Peer): void {
    if (this.sent.get(peer.id)?.peer === peer) this.sent.delete(peer.id);
  }

  receive(_ch: number, peer: Peer, msg: Uint8Array): void {
    let items: Uint8Array[];
    try {
      items = decodeEvidenceMessage(msg);
    } catch (e) {
      throw new P2PError('INVALID_MESSAGE', `evidence: ${(e as Error).message}`);
    }
    const s = this.sent.get(peer.id);
    for (const item of items) {
      let ev;
      try {
        ev = decodeEvidenceItem(item);
      } catch (e) {
        throw new P2PError('INVALID_MESSAGE', `evidence: ${(e as Error).message}`);
      }
      if (ev.kind !== 'DuplicateVoteEvidence') continue;
      const bad = duplicateVoteValidateBasic(ev);
      if (bad !== null) throw new P2PError('INVALID_MESSAGE', `evidence: invalid evidence: ${bad}`);
      // The peer has it: do not send it back.
      s?.keys.add(Buffer.from(item).toString('hex'));
      try {
        this.opts.pool.addEvidence(ev as CheckedDuplicateVoteEvidence);
      } catch (e) {
        this.log.info('evidence from peer not added', { peer: peer.id, err: (e as Error).message });
      }
    }
  }

  /** Sends each pending item to each peer that does not have it. */
  pass(): void {
    if (this.sent.size === 0) return;
    let pending: Uint8Array[];
    try {
      pending = this.opts.pool.pendingEvidence(-1n).evidence;
    } catch (e) {
      this.log.error('reading pending evidence failed', { err: (e as Error).message });
      return;
    }
    for (const item of pending) {
      const k = Buffer.from(item).toString('hex');
      for (const { peer, keys } of this.sent.values()) {
        if (keys.has(k)) continue;
        if (peer.trySend(EVIDENCE_CHANNEL, encodeEvidenceMessage([item]))) keys.add(k);
      }
    }
  }
}
