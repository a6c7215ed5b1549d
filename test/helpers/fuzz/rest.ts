/**
 * The REST surface (port 1317): every HTTP binding of the served query and tx services
 * (google.api.http options read with src/rpc/rest/http-rule.ts), with path variables filled from
 * the node's genesis and request bodies built from the input messages.
 *
 * A protocol-shaped answer (cosmos-sdk server/api/server.go; grpc-gateway v1 runtime/errors.go):
 * JSON; a 200 carries an object; any other status carries the SDK's error JSON
 * `{code: int, message: string, details: []}` whose status is HTTPStatusFromCode(code). Empty
 * answers only for HEAD.
 */
import type { DescField, DescMessage, DescService } from '@bufbuild/protobuf';
import { Query as AuthQuery } from '../../../src/gen/chain/auth/v1beta1/query_pb.js';
import { Query as AuthzQuery } from '../../../src/gen/chain/authz/v1beta1/query_pb.js';
import { Query as BankQuery } from '../../../src/gen/chain/bank/v1beta1/query_pb.js';
import { Service as TxService } from '../../../src/gen/chain/tx/v1beta1/service_pb.js';
import { httpBindings } from '../../../src/rpc/rest/http-rule.js';
import { httpStatusFromCode } from '../../../src/rpc/rest/errors.js';
import { header, type HttpAnswer } from './http-conn.js';
import type { HttpRequestSpec } from './http-surface.js';
import { enabled, jsLeak, headerValue, mutateJson, mutatePath, mutateQuery, pickMutator, toJson, type JsonValue, type Mutator } from './mutators.js';
import { httpMethods, httpSurface, randomHeaders } from './node-rpc.js';
import type { Rng } from './prng.js';
import { isFramingError, type FuzzCase, type Surface } from './surface.js';
import type { HttpCase } from './http-surface.js';
import type { FuzzTarget } from './target.js';

/** The services chaind serves over gRPC and REST (src/node.ts). */
export const SERVED_SERVICES: readonly DescService[] = [AuthQuery, BankQuery, AuthzQuery, TxService];

export interface RestSeed {
  name: string;
  method: string;
  path: string;
  query: string;
  body: JsonValue | null;
}

/** A value for a field, guessed from its name, in the SDK's JSON. */
function sampleScalar(t: FuzzTarget, f: DescField, rng?: Rng): JsonValue {
  const n = f.name.toLowerCase();
  if (f.fieldKind === 'enum') return f.enum.values[1]?.name ?? f.enum.values[0]!.name;
  if (f.fieldKind !== 'scalar') return null;
  switch (f.scalar) {
    case 9: // string
      if (n.includes('address') || n === 'granter' || n === 'grantee' || n.includes('owner')) return rng ? rng.pick(t.addresses) : t.addresses[0]!;
      if (n.includes('denom')) return t.denom;
      if (n.includes('hash')) return 'AB'.repeat(32);
      if (n.includes('url') || n.includes('type')) return '/cosmos.bank.v1beta1.MsgSend';
      if (n === 'events' || n === 'query') return "tx.height>=1";
      return 'x';
    case 12: // bytes
      return Buffer.from('0a0212001200', 'hex').toString('base64');
    case 8: // bool
      return true;
    case 3:
    case 4:
    case 16:
    case 18:
    case 6: // 64-bit ints: strings in the SDK's JSON
      return '1';
    default:
      return 1;
  }
}

/** A request message in the SDK's JSON, its scalar fields filled. */
export function sampleMessage(t: FuzzTarget, m: DescMessage, depth = 0): { [k: string]: JsonValue } {
  const out: { [k: string]: JsonValue } = {};
  for (const f of m.fields) {
    let v: JsonValue;
    if (f.fieldKind === 'message') {
      if (depth >= 2) continue;
      if (f.message.typeName === 'google.protobuf.Any') v = { '@type': '/cosmos.bank.v1beta1.MsgSend', from_address: t.addresses[0]!, to_address: t.addresses[1] ?? t.addresses[0]!, amount: [{ denom: t.denom, amount: '1' }] };
      else v = sampleMessage(t, f.message, depth + 1);
    } else if (f.fieldKind === 'list') {
      v = f.listKind === 'message' ? [] : [sampleScalar(t, { ...f, fieldKind: 'scalar' } as unknown as DescField)];
    } else if (f.fieldKind === 'map') {
      continue;
    } else v = sampleScalar(t, f);
    out[f.jsonName === f.name ? f.name : f.name] = v;
  }
  return out;
}

function fieldByPath(m: DescMessage, path: string): DescField | undefined {
  let cur: DescMessage | undefined = m;
  let f: DescField | undefined;
  for (const p of path.split('.')) {
    f = cur?.fields.find((x) => x.name === p);
    cur = f?.fieldKind === 'message' ? f.message : undefined;
  }
  return f;
}

export function restSeeds(t: FuzzTarget): RestSeed[] {
  const out: RestSeed[] = [];
  for (const svc of SERVED_SERVICES) {
    for (const m of svc.methods) {
      for (const b of httpBindings(m)) {
        const path = b.template.replace(/\{([^}=]+)(=[^}]*)?\}/g, (_all, name: string) => {
          const f = fieldByPath(m.input, name);
          const v = f ? sampleScalar(t, f) : 'x';
          return encodeURIComponent(String(v));
        });
        const hasPagination = m.input.fields.some((f) => f.name === 'pagination');
        const query = hasPagination ? 'pagination.limit=2&pagination.count_total=true' : '';
        const body = b.body === '' ? null : b.body === '*' ? sampleMessage(t, m.input) : (sampleMessage(t, m.input)[b.body] ?? {});
        out.push({ name: `${b.method} ${b.template}`, method: b.method, path, query, body });
        if (path.startsWith('/chain/')) out.push({ name: `${b.method} ${b.template} (cosmos)`, method: b.method, path: path.replace(/^\/chain\//, '/cosmos/'), query, body });
      }
    }
  }
  return out;
}

export function judgeRest(a: HttpAnswer, head: boolean): string | null {
  const leak = jsLeak(a.body.toString('utf8'));
  if (leak) return `a JavaScript error leaks into the answer (${leak})`;
  const ct = (header(a, 'content-type') ?? '').toLowerCase();
  if (head) return a.body.length === 0 ? null : 'body on a HEAD answer';
  if (a.status === 200 && a.body.length === 0) return null; // OPTIONS
  if (isFramingError(a)) return null; // net/http's own 400, before the gateway
  if (!ct.startsWith('application/json')) return `content-type ${JSON.stringify(ct)} (status ${a.status})`;
  let v: unknown;
  try {
    v = JSON.parse(a.body.toString('utf8'));
  } catch {
    return 'body does not parse as JSON';
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'body is not a JSON object';
  if (a.status === 200) return null;
  const e = v as Record<string, unknown>;
  if (!Number.isInteger(e.code) || typeof e.message !== 'string' || !Array.isArray(e.details)) return 'error body is not {code, message, details}';
  const want = httpStatusFromCode(e.code as number);
  if (want !== a.status) return `status ${a.status} for code ${e.code} (HTTPStatusFromCode gives ${want})`;
  for (const k of Object.keys(e)) if (!['code', 'message', 'details'].includes(k)) return `unexpected member ${k}`;
  return null;
}

export function restSurface(t: FuzzTarget): Surface<HttpCase> {
  const seeds = restSeeds(t);
  const methods = httpMethods(['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
  const structural: Mutator<HttpRequestSpec & { json: JsonValue | null }>[] = [
    { name: 'rest.query', weight: 5, apply: (rng, r) => ({ ...r, query: mutateQuery(rng, r.query, r.applied) }) },
    { name: 'rest.path', weight: 4, apply: (rng, r) => ({ ...r, path: mutatePath(rng, r.path, r.applied) }) },
    { name: 'rest.method', weight: 1, apply: (rng, r) => ({ ...r, method: rng.pick(methods) }) },
    { name: 'rest.body', weight: 4, apply: (rng, r) => ({ ...r, json: mutateJson(rng, r.json ?? {}, r.applied), method: r.json === null && rng.chance(0.5) ? 'POST' : r.method }) },
    { name: 'rest.headers', weight: 2, apply: (rng, r) => ({ ...r, headers: [...r.headers, ...randomHeaders(rng)] }) },
    { name: 'rest.height', weight: 2, apply: (rng, r) => ({ ...r, headers: [...r.headers, [rng.pick(['X-Cosmos-Block-Height', 'Grpc-Metadata-X-Cosmos-Block-Height']), rng.pick(['-1', '0', '1', '2', '18446744073709551616', 'abc', '', '999999999', headerValue(rng)])]] }) },
    { name: 'rest.timeout', weight: 1, apply: (rng, r) => ({ ...r, headers: [...r.headers, ['Grpc-Timeout', rng.pick(['1n', '1m', '5S', '0S', '-1S', '1X', 'S', '99999999H', '100000000H', '1', headerValue(rng)])]] }) },
    { name: 'rest.contentType', weight: 1, apply: (rng, r) => ({ ...r, headers: [...r.headers, ['Content-Type', rng.pick(['application/x-www-form-urlencoded', 'text/plain', 'application/json', 'multipart/form-data; boundary=x', ''])]] }) },
  ];
  return httpSurface('rest', t.ports.api, seeds.map((s) => s.name), (rng) => {
    const s = rng.pick(seeds);
    let r: HttpRequestSpec & { json: JsonValue | null } = { method: s.method, path: s.path, query: s.query, headers: [['Host', '127.0.0.1']], body: Buffer.alloc(0), applied: [], json: s.body };
    const on = enabled(structural);
    for (let n = rng.weighted([[6, 1], [3, 2], [1, 3]] as const); n > 0; n--) {
      const m = pickMutator(rng, on);
      r.applied.push(m.name);
      r = m.apply(rng, r);
    }
    if (r.json !== null) {
      r.body = Buffer.from(toJson(r.json), 'utf8');
      if (!r.headers.some(([k]) => k === 'Content-Type')) r.headers.push(['Content-Type', 'application/json']);
    }
    return { seed: s.name, spec: r };
  }, judgeRest);
}

export type { FuzzCase };
