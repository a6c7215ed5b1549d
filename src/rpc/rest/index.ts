/** The REST gateway (grpc-gateway v1 behaviour over the QueryRouter) and the SDK JSON codec. */
export { RestGateway, restGatewayOptions, DEFAULT_MAX_BODY_BYTES } from './gateway.js';
export type { RestGatewayOptions, RestRoute } from './gateway.js';
export { toSdkJson, fromSdkJson, fieldToSdkJson, JsonCodecError } from './json.js';
export type { ReadOptions } from './json.js';
export { httpBindings, PathTemplate, HTTP_RULE_EXTENSION } from './http-rule.js';
export type { HttpBinding } from './http-rule.js';
export { populateQueryParams, populatePathParam, QueryParamError, parseGoInt, parseGoBool, parseGoFloat, parseGoDuration } from './query-params.js';
export { httpStatusFromCode, errorBody, UNKNOWN_URI } from './errors.js';
