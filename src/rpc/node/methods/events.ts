/** Node RPC methods: subscribe, unsubscribe, unsubscribe_all. */
import type { NodeRpcContext } from '../context.js';
import type { Route } from '../routes.js';

export function eventsRoutes(_ctx: NodeRpcContext): Route[] {
  return [];
}
