/**
 * `google.api.http` method options and grpc-gateway path templates.
 *
 * The option (extension 72295728 of google.protobuf.MethodOptions, googleapis
 * google/api/annotations.proto) is read from the method's descriptor as the generated code
 * embeds it: @bufbuild/protobuf keeps extensions it was not told about as unknown fields, so the
 * HttpRule is decoded here from its wire form (fields: selector 1, get 2, put 3, post 4, delete 5,
 * patch 6, body 7, custom 8 {kind 1, path 2}, additional_bindings 11, response_body 12). That keeps
 * the gateway independent of which generated copy of google/api/annotations.proto a service used.
 *
 * Templates (grpc-gateway protoc-gen-grpc-gateway/httprule/parse.go grammar):
 *   Template = "/" Segments [ Verb ] ;  Segments = Segment { "/" Segment } ;
 *   Segment  = "*" | "**" | LITERAL | Variable ;  Variable = "{" FieldPath [ "=" Segments ] "}" ;
 *   FieldPath = IDENT { "." IDENT } ;  Verb = ":" LITERAL ;
 * Matching follows grpc-gateway v1 runtime/pattern.go: `*` takes one segment, `**` the rest
 * (possibly none) up to the literal tail, a variable captures its segments joined with `/`, and
 * the verb (text after the last `:` of the last segment) must be equal.
 */
import type { DescMethod } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

/** Field number of the `google.api.http` extension. */
export const HTTP_RULE_EXTENSION = 72295728;

export interface HttpBinding {
  /** Upper-case HTTP method (`GET`, `POST`, …, or a custom kind). */
  method: string;
  /** The path template as written. */
  template: string;
  /** `*`, a field path, or '' (no body). */
  body: string;
  /** A response field to answer with instead of the whole message, or ''. */
  responseBody: string;
}

interface RawRule {
  method: string;
  template: string;
  body: string;
  responseBody: string;
  additional: RawRule[];
}

/** The method's HTTP bindings: the rule, then its additional bindings; [] without the option. */
export function httpBindings(method: DescMethod): HttpBinding[] {
  const unknown = method.proto.options?.$unknown ?? [];
  const parts = unknown.filter((u) => u.no === HTTP_RULE_EXTENSION && u.wireType === WireType.LengthDelimited);
  if (parts.length === 0) return [];
  // Several occurrences of a message field merge; merging wire forms is concatenation.
  const payloads = parts.map((u) => new BinaryReader(u.data).bytes());
  const total = payloads.reduce((n, p) => n + p.length, 0);
  const merged = new Uint8Array(total);
  let off = 0;
  for (const p of payloads) {
    merged.set(p, off);
    off += p.length;
  }
  const rule = decodeRule(merged, 0);
  const out: HttpBinding[] = [];
  const push = (r: RawRule) => {
    if (r.method !== '' && r.template !== '') out.push({ method: r.method, template: r.template, body: r.body, responseBody: r.responseBody });
  };
  push(rule);
  // grpc-gateway reads additional bindings one level deep (nested ones are not allowed).
  for (const a of rule.additional) push(a);
  return out;
}

const VERB_BY_FIELD: Record<number, string> = { 2: 'GET', 3: 'PUT', 4: 'POST', 5: 'DELETE', 6: 'PATCH' };

function decodeRule(bytes: Uint8Array, depth: number): RawRule {
  const rule: RawRule = { method: '', template: '', body: '', responseBody: '', additional: [] };
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (VERB_BY_FIELD[no] !== undefined && wt === WireType.LengthDelimited) {
      rule.method = VERB_BY_FIELD[no]!;
      rule.template = r.string();
    } else if (no === 7 && wt === WireType.LengthDelimited) rule.body = r.string();
    else if (no === 12 && wt === WireType.LengthDelimited) rule.responseBody = r.string();
    else if (no === 8 && wt === WireType.LengthDelimited) {
      const c = new BinaryReader(r.bytes());
      let kind = '';
      let path = '';
      while (c.pos < c.len) {
        const [cn, cw] = c.tag();
        if (cn === 1 && cw === WireType.LengthDelimited) kind = c.string();
        else if (cn === 2 && cw === WireType.LengthDelimited) path = c.string();
        else c.skip(cw, cn);
      }
      rule.method = kind.toUpperCase();
      rule.template = path;
    } else if (no === 11 && wt === WireType.LengthDelimited && depth === 0) rule.additional.push(decodeRule(r.bytes(), depth + 1));
    else r.skip(wt, no);
  }
  return rule;
}

type Segment = { kind: 'literal'; value: string } | { kind: 'wild' } | { kind: 'deep' };

interface Variable {
  /** Field path, e.g. ['pagination', 'key']. */
  path: string[];
  /** Segment range [start, end) it covers. */
  start: number;
  end: number;
}

/** A compiled path template. */
export class PathTemplate {
  readonly segments: readonly Segment[];
  readonly variables: readonly Variable[];
  readonly verb: string;
  /** Segments after a `**` (which must all be literal or `*`). */
  private readonly tailLen: number;

  private constructor(segments: Segment[], variables: Variable[], verb: string, readonly template: string) {
    this.segments = segments;
    this.variables = variables;
    this.verb = verb;
    const deep = segments.findIndex((s) => s.kind === 'deep');
    this.tailLen = deep < 0 ? 0 : segments.length - deep - 1;
  }

  /** Parses a template; throws with the reason on a malformed one. */
  static parse(template: string): PathTemplate {
    if (!template.startsWith('/')) throw new Error(`path template ${JSON.stringify(template)} must start with /`);
    let body = template.slice(1);
    let verb = '';
    // The verb is after the last ':' that is outside braces.
    let braces = 0;
    for (let i = 0; i < body.length; i++) {
      const c = body[i];
      if (c === '{') braces++;
      else if (c === '}') braces--;
      else if (c === ':' && braces === 0) {
        verb = body.slice(i + 1);
        body = body.slice(0, i);
        break;
      }
    }
    const segments: Segment[] = [];
    const variables: Variable[] = [];
    let i = 0;
    const fail = (why: string): never => {
      throw new Error(`path template ${JSON.stringify(template)}: ${why}`);
    };
    const parseSegments = (stopAtBrace: boolean) => {
      for (;;) {
        if (body[i] === '{') {
          if (stopAtBrace) fail('nested variable');
          const close = body.indexOf('}', i);
          if (close < 0) fail('unclosed {');
          const inner = body.slice(i + 1, close);
          const eq = inner.indexOf('=');
          const fieldPath = eq < 0 ? inner : inner.slice(0, eq);
          if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(fieldPath)) fail(`bad field path ${JSON.stringify(fieldPath)}`);
          const start = segments.length;
          if (eq < 0) segments.push({ kind: 'wild' });
          else {
            const saved = body;
            const savedI = i;
            body = inner.slice(eq + 1);
            i = 0;
            parseSegments(true);
            if (i !== body.length) fail('bad variable pattern');
            body = saved;
            i = savedI;
          }
          variables.push({ path: fieldPath.split('.'), start, end: segments.length });
          i = close + 1;
        } else {
          let j = i;
          while (j < body.length && body[j] !== '/' && (stopAtBrace || body[j] !== '{')) j++;
          const lit = body.slice(i, j);
          if (lit === '') fail('empty segment');
          if (lit === '*') segments.push({ kind: 'wild' });
          else if (lit === '**') segments.push({ kind: 'deep' });
          else if (/[{}]/.test(lit)) fail(`bad segment ${JSON.stringify(lit)}`);
          else segments.push({ kind: 'literal', value: lit });
          i = j;
        }
        if (i < body.length && body[i] === '/') {
          i++;
          continue;
        }
        return;
      }
    };
    parseSegments(false);
    if (i !== body.length) fail('trailing characters');
    const deeps = segments.filter((s) => s.kind === 'deep').length;
    if (deeps > 1) fail('more than one **');
    const deepAt = segments.findIndex((s) => s.kind === 'deep');
    if (deepAt >= 0 && segments.slice(deepAt + 1).some((s) => s.kind !== 'literal')) fail('only literals may follow **');
    return new PathTemplate(segments, variables, verb, template);
  }

  /**
   * Matches decoded path components and the verb; returns each variable's value (its segments
   * joined with `/`) by dotted field path, or null.
   */
  match(components: readonly string[], verb: string): Map<string, string> | null {
    if (verb !== this.verb) return null;
    const n = components.length;
    // Component index where each template segment starts, plus the end.
    const at: number[] = [];
    let pos = 0;
    for (const s of this.segments) {
      at.push(pos);
      if (s.kind === 'literal') {
        if (pos >= n || components[pos] !== s.value) return null;
        pos++;
      } else if (s.kind === 'wild') {
        if (pos >= n) return null;
        pos++;
      } else {
        const end = n - this.tailLen;
        if (end < pos) return null;
        pos = end;
      }
    }
    at.push(pos);
    if (pos !== n) return null;
    const out = new Map<string, string>();
    for (const v of this.variables) out.set(v.path.join('.'), components.slice(at[v.start]!, at[v.end]!).join('/'));
    return out;
  }
}
