/**
 * CRC-32C (Castagnoli), table-driven, as the consensus WAL frames its records
 * (cometbft: consensus/wal.go uses crc32.MakeTable(crc32.Castagnoli)).
 *
 * Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF. Check value:
 * crc32c("123456789") = 0xE3069283 (RFC 3720 appendix B.4).
 *
 * Slicing-by-8 tables: a WAL record can be 1 MiB, and one table lookup per byte costs about
 * four times as much as eight lookups per 8 bytes on V8.
 */

const POLY = 0x82f63b78;

function makeTables(): Uint32Array[] {
  const t0 = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[i] = c >>> 0;
  }
  const tables = [t0];
  for (let n = 1; n < 8; n++) {
    const prev = tables[n - 1]!;
    const t = new Uint32Array(256);
    for (let i = 0; i < 256; i++) t[i] = ((prev[i]! >>> 8) ^ t0[prev[i]! & 0xff]!) >>> 0;
    tables.push(t);
  }
  return tables;
}

const [T0, T1, T2, T3, T4, T5, T6, T7] = makeTables() as [
  Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array,
];

/** Continues a CRC-32C over `data`; pass the previous result as `crc` to checksum in pieces. */
export function crc32c(data: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  let i = 0;
  const n = data.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const lo = (c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    c =
      T7[lo & 0xff]! ^
      T6[(lo >>> 8) & 0xff]! ^
      T5[(lo >>> 16) & 0xff]! ^
      T4[lo >>> 24]! ^
      T3[data[i + 4]!]! ^
      T2[data[i + 5]!]! ^
      T1[data[i + 6]!]! ^
      T0[data[i + 7]!]!;
    i += 8;
  }
  while (i < n) c = T0[(c ^ data[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
