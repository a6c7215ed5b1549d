/**
 * gRPC status handling shared by the gRPC server, the REST gateway and abci_query: how a handler's
 * thrown value becomes a (code, message) status, the `grpc-message` percent-encoding, the
 * `grpc-timeout` format and the `x-cosmos-block-height` request header.
 *
 * Sources: grpc/grpc PROTOCOL-HTTP2.md (Status-Message, Timeout), grpc-go status.FromError
 * (a non-status error is Unknown with err.Error() as message), cosmossdk.io/errors
 * wrappedError.GRPCStatus (root-first message of wrapped SDK errors, code Unknown for errors
 * registered without a gRPC code; grpc-ecosystem/grpc-gateway:runtime/errors.go) and cosmos-sdk
 * baseapp/grpcserver.go (the height header).
 */
import { AbciError, GrpcCode, GrpcStatusError, sdkErrors } from '../../app/errors.js';

export { GrpcCode, GrpcStatusError };

/** A gRPC status: the code and the message (`desc`) without the `rpc error:` frame. */
export interface Status {
  code: GrpcCode;
  message: string;
}

/** The request/response metadata key for query heights (cosmos-sdk types/grpc GRPCBlockHeightHeader). */
export const BLOCK_HEIGHT_HEADER = 'x-cosmos-block-height';

/**
 * The status a thrown value reports, as grpc-go's status.FromError sees it:
 * - GrpcStatusError (status.Error in a handler): its code and desc;
 * - AbciError (a registered SDK error): Unknown, with the message root-first — wrappedError.GRPCStatus
 *   builds `<root description>: <wrap message>`, the reverse of Go's `Error()` (`wrap: root`);
 * - anything else: Unknown with its message.
 */
export function toStatus(err: unknown): Status {
  if (err instanceof GrpcStatusError) return { code: err.grpcCode, message: err.desc };
  if (err instanceof AbciError) return { code: GrpcCode.Unknown, message: sdkStatusMessage(err) };
  if (err instanceof Error) return { code: GrpcCode.Unknown, message: err.message };
  return { code: GrpcCode.Unknown, message: String(err) };
}

/**
 * `<root>: <wraps>` for an AbciError whose message is `<wraps>: <root>`. With several wraps Go
 * orders them innermost-first; an AbciError keeps only the joined text, so they stay as written.
 */
export function sdkStatusMessage(err: AbciError): string {
  if (err.message === err.description) return err.description;
  const suffix = `: ${err.description}`;
  if (!err.message.endsWith(suffix)) return err.message;
  return `${err.description}: ${err.message.slice(0, -suffix.length)}`;
}

/** An error the servers raise themselves (transport, routing): a typed status error. */
export function statusError(code: GrpcCode, message: string): GrpcStatusError {
  return new GrpcStatusError(code, message);
}

/**
 * PROTOCOL-HTTP2.md Status-Message: the UTF-8 bytes of the message, with every byte outside
 * 0x20–0x7E, and `%` itself, written as `%XX` (upper-case hex). A leading or trailing space is
 * escaped too: HTTP/2 (RFC 9113 §8.2.1) forbids header values that begin or end with whitespace,
 * and nghttp2 drops them, so the SDK's Simulate error (which ends in a space) would reach clients
 * empty. Every decoder turns `%20` back into a space.
 */
export function encodeGrpcMessage(msg: string): string {
  const escape = (b: number, i: number, last: number) =>
    b < 0x20 || b > 0x7e || b === 0x25 || (b === 0x20 && (i === 0 || i === last));
  let plain = true;
  for (let i = 0; i < msg.length; i++) {
    if (escape(msg.charCodeAt(i), i, msg.length - 1)) {
      plain = false;
      break;
    }
  }
  if (plain) return msg;
  const bytes = Buffer.from(msg, 'utf8');
  let out = '';
  bytes.forEach((b, i) => {
    out += escape(b, i, bytes.length - 1) ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b);
  });
  return out;
}

/** The inverse of encodeGrpcMessage; a malformed escape is kept as it is (the protocol says to). */
export function decodeGrpcMessage(s: string): string {
  if (!s.includes('%')) return s;
  const src = Buffer.from(s, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  const hex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
  for (let i = 0; i < src.length; i++) {
    const b = src[i]!;
    if (b === 0x25 && i + 2 < src.length && hex(src[i + 1]!) && hex(src[i + 2]!)) {
      out[n++] = parseInt(src.toString('latin1', i + 1, i + 3), 16);
      i += 2;
    } else out[n++] = b;
  }
  return out.toString('utf8', 0, n);
}

/** The longest delay a Node timer takes; past it setTimeout fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * PROTOCOL-HTTP2.md Timeout: 1–8 ASCII digits and a unit; milliseconds, or null when malformed
 * (grpc-go internal/transport/http_util.go decodeTimeout refuses the same strings).
 *
 * The result is clamped to MAX_TIMER_MS (about 24.8 days). grpc-go saturates a duration that
 * overflows int64 and such a deadline never fires in practice; here 99999999H (11,415 years) would
 * overflow the timer instead and end the call at once with DeadlineExceeded.
 */
export function parseGrpcTimeout(v: string): number | null {
  const m = /^(\d{1,8})([HMSmun])$/.exec(v);
  if (!m) return null;
  const n = Number(m[1]);
  let ms: number;
  switch (m[2]) {
    case 'H':
      ms = n * 3_600_000;
      break;
    case 'M':
      ms = n * 60_000;
      break;
    case 'S':
      ms = n * 1000;
      break;
    case 'm':
      ms = n;
      break;
    case 'u':
      ms = n / 1000;
      break;
    default:
      ms = n / 1_000_000;
  }
  return Math.min(ms, MAX_TIMER_MS);
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * The `x-cosmos-block-height` request value (cosmos-sdk baseapp/grpcserver.go): a base-10 int64
 * (Go strconv.ParseInt(v, 10, 64)), else an `invalid request`; a negative height is refused as
 * createQueryContext refuses it. 0 means latest, returned as undefined.
 */
export function parseHeightHeader(v: string): bigint | undefined {
  const bad = (why: string) =>
    // baseapp/grpcserver.go's text, Go's strconv error included.
    sdkErrors.invalidRequest.wrap(`Baseapp.RegisterGRPCServer: invalid height header ${JSON.stringify(BLOCK_HEIGHT_HEADER)}: strconv.ParseInt: parsing ${JSON.stringify(v)}: ${why}`);
  if (!/^[+-]?\d+$/.test(v)) throw bad('invalid syntax');
  const h = BigInt(v);
  if (h > INT64_MAX || h < INT64_MIN) throw bad('value out of range');
  if (h < 0n) throw sdkErrors.invalidRequest.wrap('cannot query with height < 0; please provide a valid height');
  return h === 0n ? undefined : h;
}
