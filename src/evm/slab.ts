/**
 * Short-lived byte arrays carved from shared 64 KiB buffers (a bump allocator).
 *
 * Why: V8 keeps a typed array of more than 64 bytes in a backing store of its own outside the JS
 * heap, and allocating one (and freeing it in a GC) costs ~0.9 µs on this machine, against ~0.1 µs
 * for a view on an existing buffer (measured with Node 20: `new Uint8Array(300)` 850 ns,
 * `Buffer.allocUnsafe(300)` 118 ns). The RLP encoders of a block's receipts and transactions roots
 * made a dozen such arrays per tx; they are hashed and dropped within the block.
 *
 * Contract: allocBytes(n) is zero-filled like `new Uint8Array(n)` (a region is never handed out
 * twice), but it is a view: its `.buffer` is the shared slab, larger than the array, and a view
 * kept alive keeps its whole slab alive. Use it only for values that are consumed (hashed, copied
 * into LMDB, concatenated) and dropped, never where `.buffer` is transferred or assumed whole.
 */
const SLAB_BYTES = 64 * 1024;
/** Larger requests get an array of their own (one slab would serve too few of them). */
const MAX_SLAB_ALLOC = 4096;

let slab = new ArrayBuffer(SLAB_BYTES);
let used = 0;

export function allocBytes(n: number): Uint8Array {
  if (n > MAX_SLAB_ALLOC) return new Uint8Array(n);
  if (used + n > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    used = 0;
  }
  const out = new Uint8Array(slab, used, n);
  used += n;
  return out;
}
