/**
 * A JSON encoding for small internal records (state, validator sets, consensus params, and the
 * rare parts of a FinalizeBlock response) that keeps bigint and byte values exact: bigint becomes
 * {"$n":"123"} and Uint8Array {"$b":"<base64>"}. Not a wire format: only chaind reads it back.
 * Records written once per block, so JSON's cost (a few µs) is noise next to the block's own work;
 * a block's tx results are not small, and have a binary record (statestore.ts, record-codec.ts).
 */

export function encodeTagged(value: unknown): Buffer {
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
