/**
 * The gRPC surface (port 9090) over raw node:http2 streams, so the frames themselves can be wrong:
 * every unary method of the served services in both spellings (`chain.*` and `cosmos.*`), and the
 * reflection streams.
 *
 * A protocol-shaped answer (grpc/grpc PROTOCOL-HTTP2.md; grpc-go transport): the stream ends with
 * a `grpc-status` (0–16), in the trailers or in a trailers-only response; a status 0 comes with
 * HTTP 200 and exactly one well-formed message for a unary method. A stream reset or a connection
 * dropped without a grpc-status is a failure (except REFUSED_STREAM before any response: the call
 * never started).
 */
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { create, fromJson, toBinary, type DescMessage } from '@bufbuild/protobuf';
import { protoRegistry } from '../../../src/proto/registry.js';
import { REFLECTION_PATHS } from '../../../src/rpc/grpc/reflection.js';
import { enabled, jsLeak, headerName, headerValue, mutateBytes, pickMutator, type Mutator } from './mutators.js';
import type { Rng } from './prng.js';
import { SERVED_SERVICES, sampleMessage } from './rest.js';
import { printable, type FuzzCase, type Lane, type Surface } from './surface.js';
import type { FuzzTarget } from './target.js';

export interface GrpcSeed {
  name: string;
  path: string;
  message: Buffer;
}

export interface GrpcCase extends FuzzCase {
  readonly headers: Record<string, string>;
  /** Body chunks, each written as it is (DATA frames). */
  readonly chunks: Buffer[];
  /** Streams opened at once with the same request (1 unless a flood mutation). */
  readonly copies: number;
  /** Unary methods answer exactly one message on success. */
  readonly unary: boolean;
}

function encode(m: DescMessage, json: unknown): Buffer {
  try {
    return Buffer.from(toBinary(m, fromJson(m, json as never, { ignoreUnknownFields: true, registry: protoRegistry })));
  } catch {
    return Buffer.from(toBinary(m, create(m)));
  }
}

export function grpcSeeds(t: FuzzTarget): GrpcSeed[] {
  const out: GrpcSeed[] = [];
  for (const svc of SERVED_SERVICES) {
    const local = svc.typeName.replace(/^chain\./, '');
    for (const m of svc.methods) {
      const filled = encode(m.input, sampleMessage(t, m.input));
      for (const pkg of ['chain', 'cosmos']) {
        const path = `/${pkg}.${local}/${m.name}`;
        out.push({ name: path, path, message: filled });
        out.push({ name: `${path} (empty)`, path, message: Buffer.alloc(0) });
      }
    }
  }
  for (const p of REFLECTION_PATHS.keys()) {
    out.push({ name: `${p} list`, path: p, message: Buffer.from([0x3a, 0x00]) });
    out.push({ name: `${p} file`, path: p, message: Buffer.concat([Buffer.from([0x22, 'cosmos.bank.v1beta1.Query'.length]), Buffer.from('cosmos.bank.v1beta1.Query')]) });
  }
  return out;
}

function frameOf(flag: number, declared: number, data: Buffer): Buffer {
  const h = Buffer.alloc(5);
  h[0] = flag;
  h.writeUInt32BE(declared >>> 0, 1);
  return Buffer.concat([h, data]);
}

interface Draft {
  headers: Record<string, string>;
  message: Buffer;
  flag: number;
  /** Declared length minus the real one. */
  delta: number | null;
  declared: number | null;
  extraFrames: Buffer[];
  splits: number;
  copies: number;
  rawBody: Buffer | null;
  applied: string[];
}

function randomField(rng: Rng): Buffer {
  const field = rng.pick([1, 2, 3, 4, 5, 15, 16, 2047, 536870911]);
  const wire = rng.pick([0, 1, 2, 5, 3, 4, 6, 7]);
  const tag = (field << 3) | wire;
  const varint = (n: bigint) => {
    const bytes: number[] = [];
    let v = n & 0xffffffffffffffffn;
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v) b |= 0x80;
      bytes.push(b);
    } while (v);
    return Buffer.from(bytes);
  };
  const head = varint(BigInt(tag >>> 0));
  switch (wire) {
    case 0:
      return Buffer.concat([head, varint(rng.pick([0n, 1n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 31n]))]);
    case 1:
      return Buffer.concat([head, rng.bytes(8)]);
    case 2: {
      const len = rng.pick([0, 1, 5, 1000, 2 ** 31, 2 ** 32 - 1]);
      return Buffer.concat([head, varint(BigInt(len)), rng.bytes(Math.min(len, rng.int(64)))]);
    }
    case 5:
      return Buffer.concat([head, rng.bytes(4)]);
    default:
      return Buffer.concat([head, rng.bytes(rng.int(4))]);
  }
}

const bombs = new Map<number, Buffer>();
/** gzip of `mib` MiB of zeros (a few KiB), made once per size. */
function bomb(mib: number): Buffer {
  let b = bombs.get(mib);
  if (!b) bombs.set(mib, (b = zlib.gzipSync(Buffer.alloc(mib * 1024 * 1024))));
  return b;
}

const GRPC_MUTATORS: Mutator<Draft>[] = [
  { name: 'grpc.bytes', weight: 5, apply: (rng, d) => ({ ...d, message: mutateBytes(rng, d.message, d.applied) }) },
  { name: 'grpc.field', weight: 3, apply: (rng, d) => ({ ...d, message: Buffer.concat([d.message, randomField(rng)]) }) },
  { name: 'grpc.lengthDelta', weight: 2, apply: (rng, d) => ({ ...d, delta: rng.pick([-5, -1, 1, 3, 100]) }) },
  { name: 'grpc.lengthHuge', weight: 1, apply: (rng, d) => ({ ...d, declared: rng.pick([0xffffffff, 0x7fffffff, 4 * 1024 * 1024 + 1, 16 * 1024 * 1024]) }) },
  { name: 'grpc.flag', weight: 2, apply: (rng, d) => ({ ...d, flag: rng.pick([1, 1, 2, 0x80, 0xff]) }) },
  {
    name: 'grpc.encoding',
    weight: 2,
    apply(rng, d) {
      const enc = rng.pick(['gzip', 'deflate', 'identity', 'br', 'snappy', '', 'GZIP']);
      let message = d.message;
      let flag = d.flag;
      if (rng.chance(0.6) && (enc === 'gzip' || enc === 'deflate')) {
        message = enc === 'gzip' ? zlib.gzipSync(message) : zlib.deflateSync(message);
        flag = 1;
        if (rng.chance(0.3)) message = mutateBytes(rng, message, d.applied);
      } else if (rng.chance(0.5)) flag = 1;
      return { ...d, message, flag, headers: { ...d.headers, 'grpc-encoding': enc } };
    },
  },
  {
    name: 'grpc.bomb',
    weight: 0.3,
    apply: (rng, d) => ({ ...d, message: bomb(rng.pick([5, 20, 64])), flag: 1, headers: { ...d.headers, 'grpc-encoding': 'gzip' } }),
  },
  { name: 'grpc.extraFrames', weight: 1, apply: (rng, d) => ({ ...d, extraFrames: Array.from({ length: rng.range(1, 5) }, () => frameOf(0, 3, rng.bytes(3))) }) },
  { name: 'grpc.noFrame', weight: 1, apply: (rng, d) => ({ ...d, rawBody: rng.pick([Buffer.alloc(0), Buffer.from([0, 0, 0]), Buffer.from([0]), rng.bytes(rng.range(1, 4))]) }) },
  { name: 'grpc.split', weight: 2, apply: (rng, d) => ({ ...d, splits: rng.range(2, 8) }) },
  {
    name: 'grpc.path',
    weight: 3,
    apply(rng, d) {
      const p = d.headers[':path']!;
      const variants = [
        '/',
        '',
        '/x',
        '/chain.bank.v1beta1.Query',
        p.toLowerCase(),
        `${p}/`,
        `${p}x`,
        p.replace(/\/[^/]*$/, '/NoSuchMethod'),
        '/no.such.Service/Method',
        p.replace(/^\/[^.]+/, '/other'),
        `/${'a'.repeat(2000)}`,
        '/%2e%2e/x',
        '/grpc.health.v1.Health/Check',
        '//chain.bank.v1beta1.Query/Balance',
      ];
      return { ...d, headers: { ...d.headers, ':path': rng.pick(variants) || '/' } };
    },
  },
  { name: 'grpc.contentType', weight: 1, apply: (rng, d) => ({ ...d, headers: { ...d.headers, 'content-type': rng.pick(['application/grpc+proto', 'application/grpc+json', 'application/grpc+', 'application/grpcx', 'text/plain', 'application/json', 'application/grpc;charset=x', 'APPLICATION/GRPC']) } }) },
  { name: 'grpc.method', weight: 0.5, apply: (rng, d) => ({ ...d, headers: { ...d.headers, ':method': rng.pick(['GET', 'PUT', 'HEAD', 'FUZZ']) } }) },
  {
    name: 'grpc.metadata',
    weight: 2,
    apply(rng, d) {
      const h = { ...d.headers };
      for (let n = rng.range(1, 4); n > 0; n--) h[headerName(rng).toLowerCase()] = headerValue(rng);
      return { ...d, headers: h };
    },
  },
  { name: 'grpc.height', weight: 2, apply: (rng, d) => ({ ...d, headers: { ...d.headers, 'x-cosmos-block-height': rng.pick(['-1', '0', '1', '2', '18446744073709551616', 'abc', '', '99999999', '1.5']) } }) },
  { name: 'grpc.timeout', weight: 1, apply: (rng, d) => ({ ...d, headers: { ...d.headers, 'grpc-timeout': rng.pick(['1n', '1u', '1m', '100m', '5S', '0S', '1M', '-1S', '1X', 'S', '123456789S', '1.5S', '']) } }) },
  { name: 'grpc.timeoutHuge', weight: 0.5, knownBug: 'grpcStreamFlood', apply: (rng, d) => ({ ...d, headers: { ...d.headers, 'grpc-timeout': rng.pick(['99999999H', '99999999M', '99999999S']) } }) },
  { name: 'grpc.streamFlood', weight: 0.5, knownBug: 'grpcStreamFlood', apply: (rng, d) => ({ ...d, copies: rng.range(100, 1000) }) },
];

export function grpcSurface(t: FuzzTarget): Surface<GrpcCase> {
  const seeds = grpcSeeds(t);
  return {
    name: 'grpc',
    seedNames: seeds.map((s) => s.name),
    generate(rng, index) {
      const s = rng.pick(seeds);
      let d: Draft = {
        headers: { ':method': 'POST', ':path': s.path, 'content-type': 'application/grpc', te: 'trailers' },
        message: s.message,
        flag: 0,
        delta: null,
        declared: null,
        extraFrames: [],
        splits: 1,
        copies: 1,
        rawBody: null,
        applied: [],
      };
      const on = enabled(GRPC_MUTATORS);
      if (rng.chance(0.9)) {
        for (let n = rng.weighted([[6, 1], [3, 2], [1, 3]] as const); n > 0; n--) {
          const m = pickMutator(rng, on);
          d.applied.push(m.name);
          d = m.apply(rng, d);
        }
      }
      const declared = d.declared ?? Math.max(0, d.message.length + (d.delta ?? 0));
      const body = d.rawBody ?? Buffer.concat([frameOf(d.flag, declared, d.message), ...d.extraFrames]);
      const chunks: Buffer[] = [];
      if (d.splits <= 1 || body.length < 2) chunks.push(body);
      else {
        const cuts = Array.from({ length: d.splits - 1 }, () => rng.int(body.length)).sort((a, b) => a - b);
        let from = 0;
        for (const c of cuts) {
          chunks.push(body.subarray(from, c));
          from = c;
        }
        chunks.push(body.subarray(from));
      }
      const headers = d.headers;
      return {
        index,
        seed: s.name,
        mutations: d.applied,
        headers,
        chunks,
        copies: d.copies,
        unary: !REFLECTION_PATHS.has(headers[':path']!),
        describe: () => `${JSON.stringify(headers)} body ${printable(body.length > 600 ? body.subarray(0, 600).toString('hex') + `…(${body.length} bytes)` : body.toString('hex'))}${d.copies > 1 ? ` ×${d.copies} streams` : ''}`,
      };
    },
    async openLane(): Promise<Lane<GrpcCase>> {
      let session: http2.ClientHttp2Session | null = null;
      const connect = () => {
        const s = http2.connect(`http://127.0.0.1:${t.ports.grpc}`);
        s.on('error', () => {});
        s.on('close', () => {
          if (session === s) session = null;
        });
        session = s;
        return s;
      };
      const one = (s: http2.ClientHttp2Session, c: GrpcCase) =>
        new Promise<{ problem: string | null; tag: string }>((resolve) => {
          let req: http2.ClientHttp2Stream;
          try {
            req = s.request(c.headers, { endStream: false });
          } catch (e) {
            resolve({ problem: null, tag: `unsendable ${(e as { code?: string }).code ?? ''}` });
            return;
          }
          let head: http2.IncomingHttpHeaders | null = null;
          let trailers: http2.IncomingHttpHeaders | null = null;
          const data: Buffer[] = [];
          const timer = setTimeout(() => {
            req.close(http2.constants.NGHTTP2_CANCEL);
            resolve({ problem: 'no end of stream within 30 s', tag: 'timeout' });
          }, 30_000);
          req.on('response', (h) => (head = h));
          req.on('trailers', (h) => (trailers = h));
          req.on('data', (d: Buffer) => data.push(d));
          req.on('error', () => {});
          req.on('close', () => {
            clearTimeout(timer);
            resolve(judgeGrpc(c, head, trailers, Buffer.concat(data), req.rstCode));
          });
          const write = (i: number) => {
            if (i >= c.chunks.length) {
              req.end();
              return;
            }
            req.write(c.chunks[i]!, () => write(i + 1));
          };
          write(0);
        });
      return {
        async run(c) {
          const s = session && !session.closed && !session.destroyed ? session : connect();
          if (c.copies === 1) return one(s, c);
          const all = await Promise.all(Array.from({ length: c.copies }, () => one(s, c)));
          return all.find((r) => r.problem !== null) ?? all[0]!;
        },
        close() {
          session?.destroy();
          session = null;
        },
      };
    },
  };
}

export function judgeGrpc(c: GrpcCase, head: http2.IncomingHttpHeaders | null, trailers: http2.IncomingHttpHeaders | null, body: Buffer, rstCode: number | undefined): { problem: string | null; tag: string } {
  const statusText = (trailers?.['grpc-status'] ?? head?.['grpc-status']) as string | undefined;
  // REFUSED_STREAM: the server did not start the call (a stream cap), which HTTP/2 lets it do.
  if (statusText === undefined && head === null && rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return { problem: null, tag: 'refused' };
  if (statusText === undefined) {
    return { problem: `stream ended without grpc-status (HTTP ${head?.[':status'] ?? 'none'}, RST_STREAM code ${rstCode ?? 'none'})`, tag: `rst ${rstCode}` };
  }
  const code = Number(statusText);
  if (!/^\d+$/.test(statusText) || code > 16) return { problem: `grpc-status ${JSON.stringify(statusText)}`, tag: 'bad' };
  const tag = `grpc-status ${code}`;
  const message = String(trailers?.['grpc-message'] ?? head?.['grpc-message'] ?? '');
  let decoded = message;
  try {
    decoded = decodeURIComponent(message);
  } catch {
    // grpc-message is percent-encoded; a bad escape is left as is
  }
  const leak = jsLeak(decoded);
  if (leak) return { problem: `a JavaScript error leaks into grpc-message (${leak}): ${JSON.stringify(decoded.slice(0, 300))}`, tag: 'leak' };
  const http = Number(head?.[':status']);
  if (code !== 0) return { problem: null, tag };
  if (http !== 200) return { problem: `grpc-status 0 with HTTP ${http}`, tag };
  if (!c.unary) return { problem: null, tag };
  if (body.length < 5) return { problem: `grpc-status 0 without a message (${body.length} bytes)`, tag };
  const len = body.readUInt32BE(1);
  if (body[0] !== 0 || len !== body.length - 5) return { problem: `grpc-status 0 with a malformed message frame (flag ${body[0]}, length ${len}, ${body.length - 5} bytes)`, tag };
  return { problem: null, tag };
}
