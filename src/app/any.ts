/**
 * `google.protobuf.Any` in responses, and type lookups that accept either spelling of a name.
 *
 * The names registry (src/names) decides how type URLs are emitted: `/chain.…` by default,
 * `/cosmos.…` with `[compat] upstream-names`; both are accepted on input. Handlers build Anys in
 * the canonical spelling (or whatever a client once sent, e.g. a CosmJS pubkey Any stored in an
 * account), so the router passes each response through `mapAnyTypeUrls` before it reaches the
 * wire — gRPC bytes, REST JSON and abci_query alike.
 */
import { fromBinary, toBinary, type DescMessage, type Message, type Registry } from '@bufbuild/protobuf';
import { reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { createNames, SPEC_NAMES, type Names } from '../names/index.js';

/** Full name of the Any message; the only name the mapping recognises by spelling. */
export const ANY_TYPE_NAME = 'google.protobuf.Any';

/** The upstream-spelling registry, used only to derive the other spelling of a name. */
const UPSTREAM = createNames({ upstreamNames: true });

/** The type name inside a type URL: `/chain.x.Y` or `type.googleapis.com/chain.x.Y` → `chain.x.Y`. */
export function typeNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** Both spellings of a full name, the given one first (`chain.x.Y` ↔ `cosmos.x.Y`). */
export function nameSpellings(name: string): string[] {
  const canonical = SPEC_NAMES.parseTypeUrl(name);
  const upstream = UPSTREAM.typeUrl(canonical);
  return [...new Set([name, canonical, upstream])];
}

/**
 * A registry view that finds a type under either spelling: a `/cosmos.bank.v1beta1.MsgSend` Any
 * resolves to the `chain.bank.v1beta1.MsgSend` descriptor, and the reverse.
 */
export function aliasRegistry(base: Registry): Registry {
  const find = <T>(name: string, get: (n: string) => T | undefined): T | undefined => {
    for (const n of nameSpellings(name)) {
      const d = get(n);
      if (d !== undefined) return d;
    }
    return undefined;
  };
  return {
    kind: 'registry',
    [Symbol.iterator]: () => base[Symbol.iterator](),
    get: (n) => find(n, (x) => base.get(x)),
    getMessage: (n) => find(n, (x) => base.getMessage(x)),
    getEnum: (n) => find(n, (x) => base.getEnum(x)),
    getExtension: (n) => find(n, (x) => base.getExtension(x)),
    getExtensionFor: (extendee, no) => base.getExtensionFor(extendee, no),
    getService: (n) => find(n, (x) => base.getService(x)),
  };
}

/** Whether a message type can hold an Any anywhere below it (cached per descriptor). */
const anyReach = new WeakMap<DescMessage, boolean>();

export function reachesAny(desc: DescMessage): boolean {
  const known = anyReach.get(desc);
  if (known !== undefined) return known;
  // Breadth-first over the message types reachable through fields; cycles end at `seen`.
  const seen = new Set<DescMessage>([desc]);
  const queue: DescMessage[] = [desc];
  let found = false;
  while (queue.length > 0 && !found) {
    const d = queue.shift()!;
    if (d.typeName === ANY_TYPE_NAME) found = true;
    for (const f of d.fields) {
      const m = f.message;
      if (m && !seen.has(m)) {
        seen.add(m);
        queue.push(m);
      }
    }
  }
  anyReach.set(desc, found);
  return found;
}

/**
 * Rewrites, in place, the type URL of every Any in `msg` with `map`, descending into packed
 * messages the registry knows (decode, rewrite, re-encode). Unknown packed types keep their bytes.
 */
export function mapAnyTypeUrls(desc: DescMessage, msg: Message, map: (url: string) => string, registry: Registry): void {
  if (!reachesAny(desc)) return;
  walk(reflect(desc, msg), map, registry, 0);
}

/** Deeper nesting than this is left as it is (a malicious or broken value, not a real response). */
const MAX_DEPTH = 64;

function walk(r: ReflectMessage, map: (url: string) => string, registry: Registry, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (r.desc.typeName === ANY_TYPE_NAME) {
    mapAny(r.message as Message & { typeUrl: string; value: Uint8Array }, map, registry, depth);
    return;
  }
  for (const f of r.fields) {
    const m = f.message;
    if (!m || !reachesAny(m) || !r.isSet(f)) continue;
    if (f.fieldKind === 'message') walk(r.get(f) as ReflectMessage, map, registry, depth + 1);
    else if (f.fieldKind === 'list') for (const v of r.get(f)) walk(v as ReflectMessage, map, registry, depth + 1);
    else if (f.fieldKind === 'map') for (const v of r.get(f).values()) walk(v as ReflectMessage, map, registry, depth + 1);
  }
}

function mapAny(any: { typeUrl: string; value: Uint8Array }, map: (url: string) => string, registry: Registry, depth: number): void {
  if (any.typeUrl === '') return;
  const inner = registry.getMessage(typeNameOfUrl(any.typeUrl));
  any.typeUrl = map(any.typeUrl);
  if (!inner || !reachesAny(inner)) return;
  let m: Message;
  try {
    m = fromBinary(inner, any.value);
  } catch {
    return; // bytes that do not decode are passed on untouched
  }
  walk(reflect(inner, m), map, registry, depth + 1);
  any.value = toBinary(inner, m);
}

/** The emit mapping of a names registry, for mapAnyTypeUrls. */
export function emitTypeUrl(names: Names): (url: string) => string {
  return (url) => names.typeUrl(url);
}
