/**
 * REST error answers, as grpc-gateway v1's DefaultHTTPProtoErrorHandler writes them (the handler
 * the Cosmos SDK's API server installs): the google.rpc.Status marshalled with the SDK's JSON
 * marshaler, `{"code": <gRPC code>, "message": "<status message>", "details": []}`, with the HTTP
 * status of runtime.HTTPStatusFromCode (grpc-ecosystem/grpc-gateway:runtime/errors.go).
 */
import { GrpcCode } from '../../app/errors.js';
import type { Status } from '../grpc/status.js';
import { goHtmlEscape } from '../server/gojson.js';

/** runtime/errors.go HTTPStatusFromCode (v1: Canceled is 408; v2 made it 499). */
export function httpStatusFromCode(code: GrpcCode): number {
  switch (code) {
    case GrpcCode.OK:
      return 200;
    case GrpcCode.Canceled:
      return 408;
    case GrpcCode.Unknown:
      return 500;
    case GrpcCode.InvalidArgument:
      return 400;
    case GrpcCode.DeadlineExceeded:
      return 504;
    case GrpcCode.NotFound:
      return 404;
    case GrpcCode.AlreadyExists:
      return 409;
    case GrpcCode.PermissionDenied:
      return 403;
    case GrpcCode.Unauthenticated:
      return 401;
    case GrpcCode.ResourceExhausted:
      return 429;
    case GrpcCode.FailedPrecondition:
      // Deliberately not 412 (grpc-gateway's comment: 412 is for HTTP conditional requests).
      return 400;
    case GrpcCode.Aborted:
      return 409;
    case GrpcCode.OutOfRange:
      return 400;
    case GrpcCode.Unimplemented:
      return 501;
    case GrpcCode.Internal:
      return 500;
    case GrpcCode.Unavailable:
      return 503;
    case GrpcCode.DataLoss:
      return 500;
    default:
      return 500;
  }
}

const TEXT: Record<number, string> = {
  200: 'OK',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The HTTP status line uWS writes: `404 Not Found`. */
export function statusLine(code: number): string {
  const t = TEXT[code];
  return t ? `${code} ${t}` : String(code);
}

/** The error body: google.rpc.Status in the SDK's JSON (EmitDefaults: `details` is `[]`). */
export function errorBody(st: Status): string {
  return goHtmlEscape(JSON.stringify({ code: st.code, message: st.message, details: [] }));
}

/**
 * ServeMux's answer for a path no binding matches — and for a path that matches only under
 * another HTTP method: runtime.ErrUnknownURI, Unimplemented `Not Implemented`, HTTP 501
 * (grpc-gateway v1.16 runtime/mux.go ServeHTTP with a proto error handler installed).
 */
export const UNKNOWN_URI: Status = { code: GrpcCode.Unimplemented, message: 'Not Implemented' };
