/**
 * A JSON encoding for small internal records (state, validator sets, ABCI responses) that keeps
 * bigint and byte values exact: bigint becomes {"$n":"123"} and Uint8Array {"$b":"<base64>"}.
 * Not a wire format: only chaind reads it back. Records written once per block, so JSON's cost
 * (a few µs) is noise next to the block's own work.
 */

export function encodeTagged(value: unknown): Buffer {
  // A direct walk writes what JSON.stringify with the replacer below writes, without a replacer
  // call per key and value (a block's FinalizeBlock response has a few hundred thousand). Values
  // it does not handle the same way (toJSON, other typed arrays, cycles) take the replacer path.
  if (value !== undefined && !(value instanceof Uint8Array)) {
    const parts: string[] = [];
    if (writeTagged(value, parts, 0)) return Buffer.from(parts.join(''), 'utf8');
  }
  return encodeTaggedReplacer(value);
}

/** Deeper than this is left to JSON.stringify (which also detects cycles). */
const MAX_DEPTH = 64;

/**
 * Appends the tagged JSON of `v` (not undefined, a function or a symbol) to `out`; false when
 * `v` holds something the walk leaves to JSON.stringify.
 */
function writeTagged(v: unknown, out: string[], depth: number): boolean {
  switch (typeof v) {
    case 'string':
      out.push(JSON.stringify(v));
      return true;
    case 'number':
      out.push(Number.isFinite(v) ? String(v) : 'null');
      return true;
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return true;
    case 'bigint':
      out.push(`{"$n":"${v.toString()}"}`);
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) {
    out.push('null');
    return true;
  }
  if (depth >= MAX_DEPTH) return false;
  if (v instanceof Uint8Array) {
    out.push(`{"$b":"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}"}`);
    return true;
  }
  if (ArrayBuffer.isView(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.push(',');
      const x: unknown = v[i];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') out.push('null');
      else if (!writeTagged(x, out, depth + 1)) return false;
    }
    out.push(']');
    return true;
  }
  out.push('{');
  let first = true;
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
    out.push(first ? `${JSON.stringify(k)}:` : `,${JSON.stringify(k)}:`);
    first = false;
    if (!writeTagged(x, out, depth + 1)) return false;
  }
  out.push('}');
  return true;
}

/** The reference encoding (JSON.stringify with a replacer); encodeTagged writes the same bytes. */
export function encodeTaggedReplacer(value: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(value, function (this: Record<string, unknown>, k: string, v: unknown) {
      // Buffer has a toJSON that runs before the replacer: look at the original value.
      const orig = k === '' ? v : this[k];
      if (typeof orig === 'bigint') return { $n: orig.toString() };
      if (orig instanceof Uint8Array) return { $b: Buffer.from(orig.buffer, orig.byteOffset, orig.byteLength).toString('base64') };
      return v;
    }),
  );
}

export function decodeTagged<T>(bytes: Uint8Array): T {
  return JSON.parse(Buffer.from(bytes).toString('utf8'), (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (typeof o.$n === 'string' && Object.keys(o).length === 1) return BigInt(o.$n);
      if (typeof o.$b === 'string' && Object.keys(o).length === 1) return new Uint8Array(Buffer.from(o.$b, 'base64'));
    }
    return v;
  }) as T;
}
