/**
 * The `status` and `health` results (rpc/core/status.go, health.go in CometBFT 0.38).
 * Shapes: cometbft/cometbft:libs/json/encoder.go and the `status` fixture.
 */
import type { State } from '../../types/state.js';
import type { BlockStore } from '../../store/blockstore.js';
import type { PubKey } from '../../types/validator.js';
import { hexUpper } from '../../crypto/bytes.js';

/** The CometBFT release line whose RPC chaind speaks. CosmJS picks its client by this prefix. */
export const COMET_COMPAT_VERSION = '0.38.17';
/** p2p.ProtocolVersion and version.BlockProtocol of the 0.38 line. */
export const P2P_PROTOCOL = '8';
/** Reactor channel ids CometBFT 0.38 advertises: pex, consensus (4), mempool, evidence, blocksync, statesync. */
export const NODE_CHANNELS = '40202122233038606100';

export interface StatusDeps {
  nodeId: string;
  moniker: string;
  p2pListenAddr: string;
  /** Hex of the channels the P2P switch advertises (default NODE_CHANNELS). */
  channels?: string;
  rpcListenAddr: string;
  txIndex: boolean;
  blockStore: BlockStore;
  state: () => State;
  validatorAddress: Uint8Array;
  validatorPubKey: PubKey;
  pubKeyTypeName: (t: PubKey['type']) => string;
  formatTime: (ns: bigint) => string;
  catchingUp?: () => boolean;
}

const EPOCH = '1970-01-01T00:00:00Z';

export function statusResult(d: StatusDeps) {
  const store = d.blockStore;
  const state = d.state();
  const latestH = store.height();
  const earliestH = store.base();
  const latest = latestH > 0n ? store.loadBlockMeta(latestH) : null;
  const earliest = earliestH > 0n ? store.loadBlockMeta(earliestH) : null;
  const found = state.validators.getByAddress(d.validatorAddress);
  return {
    node_info: {
      protocol_version: { p2p: P2P_PROTOCOL, block: '11', app: state.appVersion.toString() },
      id: d.nodeId,
      listen_addr: d.p2pListenAddr,
      network: state.chainId,
      version: COMET_COMPAT_VERSION,
      channels: d.channels ?? NODE_CHANNELS,
      moniker: d.moniker,
      other: { tx_index: d.txIndex ? 'on' : 'off', rpc_address: d.rpcListenAddr },
    },
    sync_info: {
      latest_block_hash: latest ? hexUpper(latest.blockId.hash) : '',
      // CometBFT reports the latest header's app hash (the state before that block), not the
      // app hash the block produced.
      latest_app_hash: latest ? hexUpper(latest.header.appHash) : '',
      latest_block_height: latestH.toString(),
      latest_block_time: latest ? d.formatTime(latest.header.time) : EPOCH,
      earliest_block_hash: earliest ? hexUpper(earliest.blockId.hash) : '',
      earliest_app_hash: earliest ? hexUpper(earliest.header.appHash) : '',
      earliest_block_height: earliestH.toString(),
      earliest_block_time: earliest ? d.formatTime(earliest.header.time) : EPOCH,
      catching_up: d.catchingUp?.() ?? false,
    },
    validator_info: {
      address: hexUpper(d.validatorAddress),
      pub_key: { type: d.pubKeyTypeName(d.validatorPubKey.type), value: Buffer.from(d.validatorPubKey.bytes).toString('base64') },
      voting_power: found ? found.validator.votingPower.toString() : '0',
    },
  };
}
