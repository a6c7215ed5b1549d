/**
 * JSON text that is already serialized: a tracer whose result is large (the struct logger) builds
 * its entries as text once, and the result travels (worker to RPC thread, into the response) as
 * one string instead of an object graph that would be cloned and stringified again.
 */
export class RawJson {
  constructor(readonly json: string) {}
  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/** JSON.stringify that writes a RawJson's text as it is, wherever it sits in `v`. */
export function toJsonText(v: unknown): string {
  if (v instanceof RawJson) return v.json;
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : toJsonText(x))).join(',')}]`;
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array) && typeof (v as { toJSON?: unknown }).toJSON !== 'function') {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v)) if (x !== undefined) parts.push(`${JSON.stringify(k)}:${toJsonText(x)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
