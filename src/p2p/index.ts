/**
 * P2P transport: CometBFT 0.38's wire protocol (SecretConnection, NodeInfo, MConnection) and the
 * connection upgrade; the Switch (src/p2p/switch.ts) with its peers, and the reactors in
 * src/p2p/reactors (consensus, mempool, evidence).
 *
 *   const transport = new Transport({ nodeKey, nodeInfo, ...transportOptionsFromP2P(config.p2p) });
 *   const up = await transport.dial(parsePeerAddress('id@host:26656'));   // or listen(...)
 *   const mc = new MConnection(up.conn, channels, { onReceive, onError }, mconnConfigFromP2P(config.p2p));
 *   mc.start(); mc.trySend(0x20, bytes); await mc.send(0x21, bytes);
 */
export * from './errors.js';
export * from './node-info.js';
export * from './packet.js';
export { MConnection, DEFAULT_MCONN_CONFIG, mconnConfigFromP2P } from './mconnection.js';
export type { ChannelDescriptor, MConnConfig, MConnHandlers, ChannelStatus, ConnectionStatus } from './mconnection.js';
export { SecretConnection, nodeIdFromPubKey } from './secret-connection.js';
export * from './transport.js';
export { Switch, Peer, type Reactor, type SwitchOptions } from './switch.js';
