/**
 * The protobuf type registry of the chain modules, and `Any` packing by type URL.
 *
 * Every file generated under src/gen (proto/ → scripts/gen-proto.sh) plus the google.protobuf
 * well-known types is registered. Type names are the spec's (`chain.bank.v1beta1.MsgSend`); the
 * registry also resolves the upstream spelling (`cosmos.bank.v1beta1.MsgSend`) through
 * src/names `parseTypeUrl`, because unmodified CosmJS, Keplr and explorers send `/cosmos.…` type
 * URLs (cosmos/cosmos-sdk:types/tx/types.go, cosmos/cosmjs:packages/stargate/src/aminotypes.ts). Wire bytes are identical in both spellings except
 * for the type URL strings themselves.
 *
 * Type URLs are the SDK's form: `/` + full name, no host (cosmos-sdk: codec/types/any.go). Packing
 * emits the spec spelling, or the upstream one when `upstreamNames` is set (app.toml `[compat]
 * upstream-names`); unpacking accepts both and never rewrites what it was given.
 */
import {
  create,
  createRegistry,
  fromBinary,
  toBinary,
  type DescEnum,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescService,
  type Message,
  type MessageShape,
  type Registry,
} from '@bufbuild/protobuf';
import {
  AnySchema,
  file_google_protobuf_any,
  file_google_protobuf_descriptor,
  file_google_protobuf_duration,
  file_google_protobuf_empty,
  file_google_protobuf_field_mask,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  type Any,
} from '@bufbuild/protobuf/wkt';
import { allFiles } from '../gen/index.js';
import { createNames, parseTypeUrl } from '../names/index.js';

export type { Any };

/** Which spelling to emit: `upstreamNames: true` → `/cosmos.…`, otherwise `/chain.…`. A `Names`
 * instance (src/names) satisfies this. */
export interface EmitNames {
  readonly upstreamNames?: boolean;
}

/** Every registered file: the well-known types first, then src/gen in path order. */
export const protoFiles: readonly DescFile[] = [
  file_google_protobuf_any,
  file_google_protobuf_descriptor,
  file_google_protobuf_duration,
  file_google_protobuf_empty,
  file_google_protobuf_field_mask,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  ...allFiles,
];

const base = createRegistry(...protoFiles);

/** Canonical (spec) full name for a full name or type URL in either spelling: the part after the
 * last `/`, with the `cosmos.` package root mapped to `chain.`. */
export function canonicalTypeName(nameOrUrl: string): string {
  const slash = nameOrUrl.lastIndexOf('/');
  return parseTypeUrl(slash >= 0 ? nameOrUrl.slice(slash + 1) : nameOrUrl);
}

function lookup<T>(get: (n: string) => T | undefined, name: string): T | undefined {
  const direct = get(name);
  if (direct !== undefined) return direct;
  const canonical = parseTypeUrl(name);
  return canonical === name ? undefined : get(canonical);
}

/**
 * The registry: a @bufbuild/protobuf `Registry` of every generated file, whose lookups accept the
 * upstream spelling too. Pass it as `registry` to @bufbuild/protobuf functions.
 */
export const protoRegistry: Registry = Object.freeze({
  kind: 'registry' as const,
  [Symbol.iterator]: () => base[Symbol.iterator](),
  get: (n: string): DescMessage | DescEnum | DescExtension | DescService | undefined => lookup((x) => base.get(x), n),
  getMessage: (n: string): DescMessage | undefined => lookup((x) => base.getMessage(x), n),
  getEnum: (n: string): DescEnum | undefined => lookup((x) => base.getEnum(x), n),
  getExtension: (n: string): DescExtension | undefined => lookup((x) => base.getExtension(x), n),
  getExtensionFor: (extendee: DescMessage, no: number): DescExtension | undefined => base.getExtensionFor(extendee, no),
  getService: (n: string): DescService | undefined => lookup((x) => base.getService(x), n),
});

const SPEC = createNames({ upstreamNames: false });
const UPSTREAM = createNames({ upstreamNames: true });

/** A type URL or full name in the emit spelling (input in either spelling). */
export function emitTypeUrl(url: string, names?: EmitNames): string {
  return (names?.upstreamNames === true ? UPSTREAM : SPEC).typeUrl(url);
}

/** `/chain.bank.v1beta1.MsgSend` (or `/cosmos.…` with upstreamNames) for a schema or full name. */
export function typeUrlOf(schema: DescMessage | string, names?: EmitNames): string {
  const name = typeof schema === 'string' ? canonicalTypeName(schema) : schema.typeName;
  return emitTypeUrl(`/${name}`, names);
}

/**
 * The message type of a type URL in either spelling, or undefined. Like the SDK's interface
 * registry, only `/<full name>` is a type URL here (no host part, no bare name).
 */
export function resolveTypeUrl(url: string): DescMessage | undefined {
  if (url.length < 2 || url.charCodeAt(0) !== 0x2f || url.indexOf('/', 1) >= 0) return undefined;
  return protoRegistry.getMessage(url.slice(1));
}

/** True when `any` holds a `schema` message (type URL in either spelling). */
export function anyIs(any: Any, schema: DescMessage): boolean {
  return any.typeUrl.startsWith('/') && canonicalTypeName(any.typeUrl) === schema.typeName;
}

/** Packs a message: `{type_url: "/chain.…" (or "/cosmos.…"), value: <proto bytes>}`. */
export function packAny<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>, names?: EmitNames): Any {
  return create(AnySchema, { typeUrl: typeUrlOf(schema, names), value: toBinary(schema, message) });
}

/** Thrown for an Any whose type URL is not registered (callers map it to their error). */
export class UnknownTypeUrlError extends Error {
  readonly code = 'UNKNOWN_TYPE_URL';
  constructor(readonly typeUrl: string) {
    super(`unable to resolve type URL ${typeUrl}`);
    this.name = 'UnknownTypeUrlError';
  }
}

/** The packed message; throws UnknownTypeUrlError for an unregistered type URL, and the decoder's
 * error for bytes that are not a valid message. */
export function unpackAny(any: Any): Message {
  const desc = resolveTypeUrl(any.typeUrl);
  if (desc === undefined) throw new UnknownTypeUrlError(any.typeUrl);
  return fromBinary(desc, any.value);
}

/** The packed message when `any` holds a `schema` message (either spelling), else undefined. */
export function unpackAnyAs<Desc extends DescMessage>(any: Any, schema: Desc): MessageShape<Desc> | undefined {
  if (!anyIs(any, schema)) return undefined;
  return fromBinary(schema, any.value);
}

/** The `Any` with its type URL in the emit spelling (same value bytes). */
export function withEmitTypeUrl(any: Any, names?: EmitNames): Any {
  const typeUrl = emitTypeUrl(any.typeUrl, names);
  return typeUrl === any.typeUrl ? any : create(AnySchema, { typeUrl, value: any.value });
}
