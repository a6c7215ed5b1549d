/**
 * Protobuf-coded routes for modules (cosmos-sdk: baseapp/grpcrouter.go registers each Query method
 * with its generated request/response codec; baseapp/msg_service_router.go unpacks Msg Anys).
 *
 * A proto query route decodes abci_query `data` with the generated request schema and encodes the
 * handler's answer with the response schema, so abci_query, the gRPC server and the REST gateway
 * (which all reach a query through BaseApp by gRPC path) see the same bytes. Handlers also accept a
 * request that is already a message, or the SDK's JSON shape (BaseApp.queryObject callers), and
 * normalise it to the request message first.
 */
import { create, fromBinary, isMessage, toBinary, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import type { Bytes } from './bytes.js';
import type { Context } from './context.js';
import type { QueryRoute } from './module.js';
import { fromProtoJson } from '../proto/json.js';

/** A QueryRoute that also names its generated schemas (for servers that want typed codecs). */
export interface ProtoQueryRoute<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> extends QueryRoute<unknown, MessageShape<O>> {
  requestSchema: I;
  responseSchema: O;
}

/** Plain JS values (bigints, byte arrays, undefined) → a JSON value the proto-JSON reader takes. */
function toJsonValue(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === '$typeName' || x === undefined) continue;
      out[k] = toJsonValue(x);
    }
    return out;
  }
  return v as JsonValue;
}

/**
 * `v` as a `schema` message: the message itself, its protobuf bytes, or its SDK JSON form (proto or
 * lowerCamel names; unknown keys ignored, as grpc-gateway ignores unknown query parameters).
 * null/undefined is the empty message. Throws Error on anything else.
 */
export function asMessage<D extends DescMessage>(schema: D, v: unknown): MessageShape<D> {
  if (v === undefined || v === null) return create(schema);
  if (isMessage(v, schema)) return v;
  if (v instanceof Uint8Array) return fromBinary(schema, v);
  if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${schema.typeName} must be an object`);
  return fromProtoJson(schema, toJsonValue(v), { ignoreUnknownFields: true });
}

/** A query route over generated schemas: `path` is the canonical gRPC method path. */
export function protoQueryRoute<I extends DescMessage, O extends DescMessage>(
  path: string,
  requestSchema: I,
  responseSchema: O,
  handler: (ctx: Context, req: MessageShape<I>) => MessageShape<O>,
): ProtoQueryRoute<I, O> {
  return {
    path,
    requestSchema,
    responseSchema,
    decodeRequest: (data: Bytes) => fromBinary(requestSchema, data),
    encodeResponse: (res: MessageShape<O>) => toBinary(responseSchema, res),
    handler: (ctx, req) => handler(ctx, asMessage(requestSchema, req)),
  };
}
