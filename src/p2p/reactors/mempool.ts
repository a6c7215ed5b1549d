/**
 * The mempool reactor (cometbft/cometbft:mempool/reactor.go) on channel 0x30: peers' Txs go
 * through CheckTx with the peer as sender; every pool tx is sent once to each peer that did not
 * send it to us (broadcastTxRoutine walks the pool in order; here a 100 ms pass over the pool
 * does the same walk). `[mempool] broadcast = false` turns the sending off.
 */
import type { Logger } from '../../log.js';
import { nullLogger } from '../../log.js';
import type { Mempool } from '../../mempool/mempool.js';
import { P2PError } from '../errors.js';
import type { ChannelDescriptor } from '../mconnection.js';
import { MEMPOOL_CHANNEL, decodeMempoolMessage, encodeMempoolMessage } from '../messages/mempool.js';
import type { Peer, Reactor } from '../switch.js';

export interface MempoolReactorOptions {
  mempool: Mempool;
  broadcast: boolean;
  /** Largest Txs message accepted (cometbft: max_tx_bytes + overhead; default 1 MiB + 64). */
  maxMsgBytes?: number;
  logger?: Logger;
  intervalMs?: number;
}

export class MempoolReactor implements Reactor {
  readonly name = 'mempool';
  readonly channels: readonly ChannelDescriptor[];
  private readonly log: Logger;
  private readonly sent = new Map<string, { peer: Peer; keys: Set<string> }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: MempoolReactorOptions) {
    this.log = opts.logger ?? nullLogger;
    this.channels = [{ id: MEMPOOL_CHANNEL, priority: 5, recvMessageCapacity: opts.maxMsgBytes ?? 1_048_576 + 64 }];
  }

  start(): void {
    if (!this.opts.broadcast) return;
    this.timer = setInterval(() => this.pass(), this.opts.intervalMs ?? 100);
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
    let txs: Uint8Array[];
    try {
      txs = decodeMempoolMessage(msg);
    } catch (e) {
      throw new P2PError('INVALID_MESSAGE', `mempool: ${(e as Error).message}`);
    }
    if (txs.length === 0) throw new P2PError('INVALID_MESSAGE', 'mempool: empty txs message');
    const s = this.sent.get(peer.id);
    for (const tx of txs) {
      this.opts.mempool.checkTx(tx, { sender: peer.id }).catch((e) => this.log.debug('peer tx rejected', { peer: peer.id, err: (e as Error).message }));
      void s;
    }
  }

  /** One pass: each pool tx to each peer that neither sent it nor got it already. */
  pass(): void {
    if (this.sent.size === 0) return;
    const live = new Set<string>();
    for (const e of this.opts.mempool.entries()) {
      const k = Buffer.from(e.key).toString('hex');
      live.add(k);
      for (const { peer, keys } of this.sent.values()) {
        if (keys.has(k) || e.senders.has(peer.id)) continue;
        if (!peer.trySend(MEMPOOL_CHANNEL, encodeMempoolMessage([e.tx]))) continue;
        keys.add(k);
      }
    }
    for (const { keys } of this.sent.values()) for (const k of keys) if (!live.has(k)) keys.delete(k);
  }
}
