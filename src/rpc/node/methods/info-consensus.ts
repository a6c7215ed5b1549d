/**
 * Consensus-state and ABCI methods of the node RPC: dump_consensus_state, consensus_state
 * (cometbft: rpc/core/consensus.go), abci_info and abci_query (rpc/core/abci.go).
 */
import { base64, base64OrNull } from '../../../types/json.js';
import type { ResponseInfo, ResponseQuery } from '../../../abci/types.js';
import type { ConsensusInfoRpc } from '../context.js';
import { route, type Route } from '../../jsonrpc/methods.js';

/**
 * abci.ResponseInfo under cmtjson: every field `omitempty`, so zero values disappear
 * (`app_version` and `last_block_height` are int64 strings, the app hash base64).
 */
export function responseInfoJSON(r: ResponseInfo): Record<string, string> {
  const out: Record<string, string> = {};
  if (r.data !== '') out['data'] = r.data;
  if (r.version !== '') out['version'] = r.version;
  if (r.appVersion !== 0n) out['app_version'] = r.appVersion.toString();
  if (r.lastBlockHeight !== 0n) out['last_block_height'] = r.lastBlockHeight.toString();
  if (r.lastBlockAppHash.length > 0) out['last_block_app_hash'] = base64(r.lastBlockAppHash);
  return out;
}

/**
 * abci.ResponseQuery under gogo jsonpb (EmitDefaults): all fields in proto order, int64 as
 * strings, empty bytes null, and the proto JSON name `proofOps`.
 */
export function responseQueryJSON(r: ResponseQuery) {
  return {
    code: r.code,
    log: r.log,
    info: r.info,
    index: r.index.toString(),
    key: base64OrNull(r.key),
    value: base64OrNull(r.value),
    proofOps: r.proofOps === null ? null : { ops: r.proofOps.map((op) => ({ type: op.type, key: base64OrNull(op.key), data: base64OrNull(op.data) })) },
    height: r.height.toString(),
    codespace: r.codespace,
  };
}

export function consensusRoutes(ctx: ConsensusInfoRpc): Route[] {
  const evidenceNames = {
    duplicateVote: ctx.names.evidenceType('DuplicateVoteEvidence'),
    lightClientAttack: ctx.names.evidenceType('LightClientAttackEvidence'),
  };
  return [
    route({
      name: 'dump_consensus_state',
      // The round state (spec §2.2: the consensus module renders it, incl. vote and bit-array
      // strings) and one entry per connected peer. chaind has no P2P yet, so `peers` is always the
      // empty list CometBFT gives a node without peers (make([]PeerStateInfo, 0)).
      handler: () => ({ round_state: ctx.consensus.roundStateJSON({ block: { evidenceNames } }), peers: [] }),
    }),
    route({
      name: 'consensus_state',
      handler: () => ({ round_state: ctx.consensus.roundStateSimpleJSON() }),
    }),
    route({
      name: 'abci_info',
      cacheable: true,
      // proxy.RequestInfo carries CometBFT's versions; the in-process app needs none of them.
      handler: async () => ({ response: responseInfoJSON(await ctx.app.info()) }),
    }),
    route({
      name: 'abci_query',
      params: [
        { name: 'path', type: 'string' },
        { name: 'data', type: 'hexbytes' },
        { name: 'height', type: 'int64' },
        { name: 'prove', type: 'bool' },
      ],
      // Passed on as given (height 0 = latest); errors come back in `code`/`log`. gRPC service paths
      // (module queries, the tx service) go through the same router as the gRPC server and REST
      // gateway (cosmos-sdk baseapp: abci Query dispatches gRPC paths to the GRPCQueryRouter).
      handler: async ({ path, data, height, prove }) => {
        const req = { path, data, height, prove };
        const router = ctx.queryRouter;
        const res = router && router.has(path) ? await router.abciQuery(req) : await ctx.app.query(req);
        return { response: responseQueryJSON(res) };
      },
    }),
  ];
}
