/**
 * x/authz: module.ts (routes, queries, genesis, BeginBlock), keeper.ts (grants, queue, Exec),
 * authorizations.ts (Generic, Send, Stake), msgs.ts (message decoding, the MsgRouter hook),
 * queries.ts (Query service), keys.ts (store layout).
 */
export { AuthzModule, type AuthzModuleOptions } from './module.js';
export { AuthzKeeper, GRANT_QUEUE_GAS_PER_ITEM, PRUNE_LIMIT, type AuthzKeeperOptions, type AuthzNames, type StoredGrant } from './keeper.js';
export { AuthzQueries, GranteeGrantsView, queryAddress } from './queries.js';
export { isMsgRouter, MAX_EXEC_DEPTH, timestampToNs, type DecodedMsgExec, type DecodedMsgGrant, type DecodedMsgRevoke, type ExecMsg, type MsgRouter } from './msgs.js';
export * from './authorizations.js';
export * from './errors.js';
export * from './keys.js';
