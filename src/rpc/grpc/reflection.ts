/**
 * gRPC server reflection, v1 and v1alpha (grpc/grpc-proto: grpc/reflection/v1/reflection.proto;
 * behaviour as grpc-go reflection/serverreflection.go), so that `grpcurl -plaintext host:9090
 * list` and `describe` work against the node.
 *
 * The pool is built from the router's descriptors: every registered service's file and its
 * imports, as the FileDescriptorProtos the generated code embeds, plus reflection's own files.
 * Files in a brand package also get an alias copy in the other spelling of the names registry
 * (`chain/auth/v1beta1/query.proto`, package `chain.auth.v1beta1` ↔ `cosmos/auth/v1beta1/query.proto`,
 * `cosmos.auth.v1beta1`, with every type reference renamed), so a client that reflects on
 * `cosmos.auth.v1beta1.Query` gets descriptors whose names match what it will call.
 * `list_services` gives the emit spelling only.
 *
 * Per grpc-go: a file answer carries the file, then its transitive imports not yet sent on this
 * stream (fileDescWithDependencies); an unknown file or symbol is an `error_response` with
 * NotFound and the stream goes on; a request with no `message_request` ends the stream with
 * InvalidArgument.
 */
import { clone, create, toBinary, type DescFile, type DescMessage, type Message } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, type DescriptorProto, type EnumDescriptorProto, type FieldDescriptorProto, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { GrpcCode } from '../../app/errors.js';
import { createNames, SPEC_NAMES, type Names } from '../../names/index.js';
import * as v1 from '../../gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../../gen/grpc/reflection/v1alpha/reflection_pb.js';
import { statusError } from './status.js';

const UPSTREAM = createNames({ upstreamNames: true });

/** The reflection services and the schemas of their stream messages. */
export const REFLECTION_SERVICES = [
  { service: v1.ServerReflection, file: v1.file_grpc_reflection_v1_reflection, request: v1.ServerReflectionRequestSchema, response: v1.ServerReflectionResponseSchema },
  {
    service: v1alpha.ServerReflection,
    file: v1alpha.file_grpc_reflection_v1alpha_reflection,
    request: v1alpha.ServerReflectionRequestSchema,
    response: v1alpha.ServerReflectionResponseSchema,
  },
] as const;

export type ReflectionVersion = (typeof REFLECTION_SERVICES)[number];

/** The `:path` of each reflection version's one method. */
export const REFLECTION_PATHS: ReadonlyMap<string, ReflectionVersion> = new Map(
  REFLECTION_SERVICES.map((v) => [`/${v.service.typeName}/${v.service.methods[0]!.name}`, v] as const),
);

interface PoolFile {
  bytes: Uint8Array;
  deps: readonly string[];
}

/** Name maps of one spelling "world": every brand name written one way. */
interface World {
  type: (fullName: string) => string;
}

const TO_UPSTREAM: World = { type: (n) => UPSTREAM.typeUrl(n) };
const TO_SPEC: World = { type: (n) => SPEC_NAMES.parseTypeUrl(n) };

/** Files by name and the symbols they define, in both spellings. */
export class DescriptorPool {
  private readonly files = new Map<string, PoolFile>();
  private readonly symbols = new Map<string, string>();
  /** extendee full name → field number → file name. */
  private readonly extensions = new Map<string, Map<number, string>>();
  /** Service names as list_services reports them. */
  readonly serviceNames: readonly string[];

  /**
   * @param files the router's files (each after its imports)
   * @param services full names of the served services (emitted spelling is applied here)
   * @param names the emit spelling
   */
  constructor(files: readonly DescFile[], services: readonly string[], names: Names) {
    // DescFile.name has no `.proto` suffix; the wire uses the descriptor's own name.
    const all = files.map((f) => f.proto);
    const seen = new Set(all.map((f) => f.name));
    for (const v of REFLECTION_SERVICES) {
      if (!seen.has(v.file.proto.name)) {
        all.push(v.file.proto);
        seen.add(v.file.proto.name);
      }
    }
    for (const f of all) this.add(f);
    for (const world of [TO_UPSTREAM, TO_SPEC]) {
      const renamed = new Map<string, string>();
      for (const f of all) {
        const pkg = f.package;
        const other = world.type(pkg);
        if (pkg === '' || other === pkg) continue;
        const root = pkg.split('.')[0]!;
        const otherRoot = world.type(root);
        const name = f.name.startsWith(`${root}/`) ? `${otherRoot}/${f.name.slice(root.length + 1)}` : `${otherRoot}/${f.name}`;
        if (!seen.has(name) && !this.files.has(name)) renamed.set(f.name, name);
      }
      for (const f of all) {
        const alias = renamed.get(f.name);
        if (alias !== undefined) this.add(aliasFile(f, alias, renamed, world));
      }
    }
    const list = new Set<string>([...services.map((s) => names.typeUrl(s)), ...REFLECTION_SERVICES.map((v) => v.service.typeName)]);
    this.serviceNames = [...list].sort();
  }

  private add(proto: FileDescriptorProto): void {
    if (this.files.has(proto.name)) return;
    this.files.set(proto.name, { bytes: toBinary(FileDescriptorProtoSchema, proto), deps: proto.dependency });
    const file = proto.name;
    const sym = (s: string) => {
      if (!this.symbols.has(s)) this.symbols.set(s, file);
    };
    const ext = (x: FieldDescriptorProto) => {
      const extendee = x.extendee.replace(/^\./, '');
      let m = this.extensions.get(extendee);
      if (!m) this.extensions.set(extendee, (m = new Map()));
      if (!m.has(x.number)) m.set(x.number, file);
    };
    const enumSyms = (scope: string, e: EnumDescriptorProto) => {
      sym(scope + e.name);
      // Enum values are scoped like siblings of their enum (protobuf name resolution).
      for (const v of e.value) sym(scope + v.name);
    };
    const message = (scope: string, m: DescriptorProto) => {
      const name = scope + m.name;
      sym(name);
      for (const f of m.field) sym(`${name}.${f.name}`);
      for (const o of m.oneofDecl) sym(`${name}.${o.name}`);
      for (const n of m.nestedType) message(`${name}.`, n);
      for (const e of m.enumType) enumSyms(`${name}.`, e);
      for (const x of m.extension) {
        sym(`${name}.${x.name}`);
        ext(x);
      }
    };
    const scope = proto.package ? `${proto.package}.` : '';
    for (const m of proto.messageType) message(scope, m);
    for (const e of proto.enumType) enumSyms(scope, e);
    for (const s of proto.service) {
      sym(scope + s.name);
      for (const m of s.method) sym(`${scope}${s.name}.${m.name}`);
    }
    for (const x of proto.extension) {
      sym(scope + x.name);
      ext(x);
    }
  }

  /** Whether a file of this name is known. */
  hasFile(name: string): boolean {
    return this.files.has(name);
  }

  /** The file defining a symbol, if any. */
  fileOfSymbol(symbol: string): string | undefined {
    return this.symbols.get(symbol);
  }

  /** The file defining extension `number` of `extendee`. */
  fileOfExtension(extendee: string, number: number): string | undefined {
    return this.extensions.get(extendee)?.get(number);
  }

  /** Extension numbers of a message type, or undefined when the type is unknown. */
  extensionNumbers(type: string): number[] | undefined {
    if (!this.symbols.has(type)) return undefined;
    return [...(this.extensions.get(type)?.keys() ?? [])].sort((a, b) => a - b);
  }

  /**
   * grpc-go fileDescWithDependencies: the file itself (always), then its imports breadth-first,
   * each only if not yet in `sent`; marks what it returns as sent.
   */
  withDependencies(name: string, sent: Set<string>): Uint8Array[] {
    const out: Uint8Array[] = [];
    const queue = [name];
    const visited = new Set<string>();
    while (queue.length > 0) {
      const n = queue.shift()!;
      if (visited.has(n)) continue;
      visited.add(n);
      const f = this.files.get(n);
      if (!f) continue;
      if (out.length === 0 || !sent.has(n)) {
        sent.add(n);
        out.push(f.bytes);
      }
      queue.push(...f.deps);
    }
    return out;
  }
}

/** A copy of `proto` under `name`, with every brand name written the other way. */
function aliasFile(proto: FileDescriptorProto, name: string, renamedFiles: ReadonlyMap<string, string>, world: World): FileDescriptorProto {
  const c = clone(FileDescriptorProtoSchema, proto);
  const ref = (t: string) => (t.startsWith('.') ? `.${world.type(t.slice(1))}` : t);
  const field = (f: FieldDescriptorProto) => {
    if (f.typeName) f.typeName = ref(f.typeName);
    if (f.extendee) f.extendee = ref(f.extendee);
  };
  const message = (m: DescriptorProto) => {
    m.field.forEach(field);
    m.extension.forEach(field);
    m.nestedType.forEach(message);
  };
  c.name = name;
  c.package = world.type(c.package);
  c.dependency = c.dependency.map((d) => renamedFiles.get(d) ?? d);
  c.messageType.forEach(message);
  c.extension.forEach(field);
  for (const s of c.service) {
    for (const m of s.method) {
      m.inputType = ref(m.inputType);
      m.outputType = ref(m.outputType);
    }
  }
  return c;
}

type AnyReflectionRequest = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;

/**
 * One answer per request. `sent` is the stream's set of files already sent. Throws an
 * InvalidArgument status for a request without `message_request` (the stream then ends).
 */
export function answerReflection(pool: DescriptorPool, version: ReflectionVersion, req: AnyReflectionRequest, sent: Set<string>): Message {
  const r = req.messageRequest;
  const reply = (messageResponse: unknown) =>
    create(version.response as DescMessage, { validHost: req.host, originalRequest: req, messageResponse } as never);
  const notFound = (what: string) => reply({ case: 'errorResponse', value: { errorCode: GrpcCode.NotFound, errorMessage: `${what} not found` } });
  const files = (name: string | undefined, what: string) =>
    name === undefined ? notFound(what) : reply({ case: 'fileDescriptorResponse', value: { fileDescriptorProto: pool.withDependencies(name, sent) } });
  switch (r.case) {
    case 'fileByFilename':
      return files(pool.hasFile(r.value) ? r.value : undefined, `file ${JSON.stringify(r.value)}`);
    case 'fileContainingSymbol':
      return files(pool.fileOfSymbol(r.value), `symbol ${JSON.stringify(r.value)}`);
    case 'fileContainingExtension': {
      const { containingType, extensionNumber } = r.value;
      return files(pool.fileOfExtension(containingType, extensionNumber), `extension ${extensionNumber} of ${JSON.stringify(containingType)}`);
    }
    case 'allExtensionNumbersOfType': {
      const nums = pool.extensionNumbers(r.value);
      if (nums === undefined) return notFound(`type ${JSON.stringify(r.value)}`);
      return reply({ case: 'allExtensionNumbersResponse', value: { baseTypeName: r.value, extensionNumber: nums } });
    }
    case 'listServices':
      return reply({ case: 'listServicesResponse', value: { service: pool.serviceNames.map((name) => ({ name })) } });
    default:
      throw statusError(GrpcCode.InvalidArgument, 'invalid MessageRequest: no message_request set');
  }
}
