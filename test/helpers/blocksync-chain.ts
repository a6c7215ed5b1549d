/**
 * Real chains for the block-sync tests: a node's parts without consensus (LMDB Storage, the chain
 * app with the JSON tx decoder, the real Executor) from one shared genesis with a single
 * validator. `produce` makes blocks the way a lone validator commits them: the executor builds the
 * proposal, the validator's key signs the precommit, applyBlock stores block + seen commit + state.
 * A fresh node opened from the same genesis is the syncing side.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createChainApp, type ChainApp } from '../../src/app/chain.js';
import { jsonTxDecoder } from '../../src/app/tx.js';
import { buildAppState } from '../../src/config/app-genesis.js';
import { appStateBytes, type GenesisDoc } from '../../src/config/genesis.js';
import { merkleRoot } from '../../src/crypto/merkle.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { devAccounts } from '../../src/keys/devaccounts.js';
import { createNames } from '../../src/names/index.js';
import { makeGenesisState } from '../../src/node.js';
import { Executor, type ExecutorMempool } from '../../src/state/execution.js';
import type { State } from '../../src/types/state.js';
import { Storage } from '../../src/store/storage.js';
import { BlockIDFlag, SignedMsgType, type Bytes, type Commit } from '../../src/types/block.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { blockIdOf } from '../../src/types/partset.js';
import { voteSignBytes } from '../../src/types/signbytes.js';
import { MConnection, type MConnConfig } from '../../src/p2p/mconnection.js';
import type { BlocksyncPeer, BlocksyncReactor } from '../../src/p2p/blocksync/reactor.js';
import { secretPair } from './p2p.js';

export const GENESIS_TIME = 1_700_000_000_000_000_000n;

export interface ChainGenesis {
  doc: GenesisDoc;
  key: Ed25519PrivKey;
}

export function makeChainGenesis(chainId = 'blocksync-test'): ChainGenesis {
  const key = Ed25519PrivKey.generate();
  const names = createNames({ upstreamNames: false });
  const appState = buildAppState({ accounts: devAccounts().map((a) => ({ address: a.address, balance: 10n ** 24n })), names });
  const doc: GenesisDoc = {
    genesisTime: GENESIS_TIME,
    chainId,
    initialHeight: 1n,
    consensusParams: defaultConsensusParams(),
    validators: [{ address: key.address, pubKey: { type: 'ed25519', bytes: key.pubKey }, power: 10n, name: 'v0' }],
    appHash: new Uint8Array(0),
    appState,
  };
  return { doc, key };
}

/** A mempool that holds txs handed to `produce` (the executor reaps them into the next block). */
class PlainMempool implements ExecutorMempool {
  next: Bytes[] = [];
  reapMaxBytesMaxGas(): Bytes[] {
    const txs = this.next;
    this.next = [];
    return txs;
  }
  async lock(): Promise<void> {}
  unlock(): void {}
  async update(): Promise<void> {}
}

export interface ChainNode {
  dir: string;
  storage: Storage;
  app: ChainApp;
  executor: Executor;
  state: State;
  /** Makes `n` blocks on top of the current state (this node must be the validator's). */
  produce(n: number, txsPerBlock?: (height: bigint) => Bytes[]): Promise<void>;
  close(): Promise<void>;
}

export async function openChainNode(g: ChainGenesis): Promise<ChainNode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  // BS_SYNC=1 (bench): fsync every commit, as a node does.
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: process.env['BS_SYNC'] !== '1', mapSize: 4 * 1024 * 1024 * 1024 });
  const names = createNames({ upstreamNames: false });
  const app = createChainApp({ db: storage.app.latest, names, bech32Prefix: 'chain', txDecoder: jsonTxDecoder, appVersion: g.doc.consensusParams.version.app });
  let state = makeGenesisState(g.doc);
  const res = await app.initChain({
    time: g.doc.genesisTime,
    chainId: g.doc.chainId,
    consensusParams: g.doc.consensusParams,
    validators: g.doc.validators.map((v) => ({ pubKey: v.pubKey, power: v.power })),
    appStateBytes: appStateBytes(g.doc),
    initialHeight: g.doc.initialHeight,
  });
  if (res.appHash.length > 0) state = { ...state, appHash: res.appHash };
  state = { ...state, lastResultsHash: merkleRoot([]) };
  const mempool = new PlainMempool();
  const executor = new Executor({ storage, app, mempool });
  let lastCommit: Commit = { height: 0n, round: 0, blockId: { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } }, signatures: [] };
  const node: ChainNode = {
    dir,
    storage,
    app,
    executor,
    state,
    async produce(n, txsPerBlock) {
      for (let i = 0; i < n; i++) {
        const s = node.state;
        const height = s.lastBlockHeight + 1n;
        mempool.next = txsPerBlock?.(height) ?? [];
        const block = await executor.createProposalBlock(s, lastCommit, g.key.address, 0n);
        const { blockId } = blockIdOf(block);
        // The lone validator's precommit, 1 ms after the block time (the next block's time).
        const vote = {
          type: SignedMsgType.Precommit,
          height,
          round: 0,
          blockId,
          timestamp: block.header.time + 1_000_000n,
          validatorAddress: g.key.address,
          validatorIndex: 0,
          signature: new Uint8Array(0),
          extension: new Uint8Array(0),
          extensionSignature: new Uint8Array(0),
        };
        const commit: Commit = {
          height,
          round: 0,
          blockId,
          signatures: [{ blockIdFlag: BlockIDFlag.Commit, validatorAddress: g.key.address, timestamp: vote.timestamp, signature: g.key.sign(voteSignBytes(s.chainId, vote)) }],
        };
        node.state = await executor.applyBlock(s, blockId, block, commit);
        lastCommit = commit;
      }
    },
    async close() {
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return node;
}

/**
 * Two reactors joined over a real MConnection on a SecretConnection socket pair (127.0.0.1), each
 * seeing the other as a BlocksyncPeer, as the switch will present it. `kill()` drops the link
 * from a's side at once; b learns it from the closed socket (MConnection onError), as in life.
 */
export interface ReactorLink {
  /** a's view of b, and b's view of a. */
  peerOfA: BlocksyncPeer;
  peerOfB: BlocksyncPeer;
  kill(): void;
  close(): void;
}

export async function linkReactors(a: BlocksyncReactor, aId: string, b: BlocksyncReactor, bId: string, mconn: Partial<MConnConfig> = {}): Promise<ReactorLink> {
  const [sa, sb] = await secretPair();
  let mcA: MConnection;
  let mcB: MConnection;
  const peerOfA: BlocksyncPeer = {
    id: bId,
    send: (ch, bytes) => mcA.send(ch, bytes),
    trySend: (ch, bytes) => mcA.trySend(ch, bytes),
    disconnect: () => {
      mcA.stop();
      a.removePeer(peerOfA, 'disconnect');
    },
  };
  const peerOfB: BlocksyncPeer = {
    id: aId,
    send: (ch, bytes) => mcB.send(ch, bytes),
    trySend: (ch, bytes) => mcB.trySend(ch, bytes),
    disconnect: () => {
      mcB.stop();
      b.removePeer(peerOfB, 'disconnect');
    },
  };
  mcA = new MConnection(sa, a.channels(), { onReceive: (ch, msg) => a.receive(peerOfA, ch, msg), onError: (e) => a.removePeer(peerOfA, e) }, mconn);
  mcB = new MConnection(sb, b.channels(), { onReceive: (ch, msg) => b.receive(peerOfB, ch, msg), onError: (e) => b.removePeer(peerOfB, e) }, mconn);
  mcA.start();
  mcB.start();
  a.addPeer(peerOfA);
  b.addPeer(peerOfB);
  return {
    peerOfA,
    peerOfB,
    kill() {
      mcA.stop();
      a.removePeer(peerOfA, 'killed');
    },
    close() {
      mcA.stop();
      mcB.stop();
    },
  };
}
