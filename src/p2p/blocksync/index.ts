/**
 * Block sync (cometbft/cometbft:blocksync): the reactor the switch registers on channel 0x40 and
 * the pool it schedules with.
 *
 *   const bs = new BlocksyncReactor({ store: storage.blocks, executor, state, blockSync: true,
 *     onCaughtUp: (state) => consensus.switchToConsensus(state) });
 *   switch.addReactor('BLOCKSYNC', bs);   // channels(), addPeer, removePeer, receive
 *   bs.start();
 */
export * from './reactor.js';
export * from './pool.js';
