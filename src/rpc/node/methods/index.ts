/** Every node RPC method group; the composition root serves what this returns. */
import type { NodeRpcContext } from '../context.js';
import type { Route } from '../../jsonrpc/methods.js';
import { chainRoutes } from './chain.js';
import { eventsRoutes } from './events.js';
import { infoRoutes } from './info.js';

export function methodRoutes(ctx: NodeRpcContext): Route[] {
  return [...chainRoutes(ctx), ...infoRoutes(ctx), ...eventsRoutes(ctx)];
}
