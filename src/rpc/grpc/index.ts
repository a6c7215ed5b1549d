/** The gRPC server, the query router it shares with the REST gateway and abci_query, and reflection. */
export { QueryRouter, decodeRequest, queryError } from '../../app/query-router.js';
export type { CallContext, CallOptions, CallResult, HandlerResult, Metadata, QueryRouterOptions, RegisterOptions, Resolved, Route, ServiceImpl, UnaryHandler } from '../../app/query-router.js';
export {
  GrpcServer,
  grpcServerOptions,
  contentSubtype,
  DEFAULT_MAX_RECV_MSG_SIZE,
  DEFAULT_MAX_SEND_MSG_SIZE,
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_MAX_OPEN_CONNECTIONS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_STREAMS,
  DEFAULT_MAX_RECV_BUFFER_BYTES,
} from './server.js';
export type { GrpcServerOptions } from './server.js';
export { GRPC_THREAD_MIN_CORES, GrpcThread } from './thread.js';
export { DescriptorPool, REFLECTION_PATHS, REFLECTION_SERVICES, answerReflection } from './reflection.js';
export { jsonQueryService, latestOnlyHeights } from './app-bridge.js';
export type { JsonQueryApp, JsonQueryServiceOptions } from './app-bridge.js';
export {
  BLOCK_HEIGHT_HEADER,
  GrpcCode,
  GrpcStatusError,
  decodeGrpcMessage,
  encodeGrpcMessage,
  parseGrpcTimeout,
  MAX_TIMER_MS,
  parseHeightHeader,
  sdkStatusMessage,
  statusError,
  toStatus,
} from './status.js';
export type { Status } from './status.js';
export { aliasRegistry, mapAnyTypeUrls, nameSpellings, reachesAny, typeNameOfUrl } from '../../app/any.js';
