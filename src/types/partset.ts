/**
 * Block part sets (cometbft: types/part_set.go, types/block.go MakePartSet).
 * The proto-encoded block is cut into 65536-byte parts; PartSetHeader.hash is the merkle root
 * over the raw part bytes and each part carries its merkle proof.
 */
import { BLOCK_PART_SIZE_BYTES, type Block, type BlockID, type PartSetHeader } from './block.js';
import { encodeBlock, type Part } from './codec.js';
import { headerHash } from './hashing.js';
import { merkleProofs, verifyMerkleProof, validateProof } from '../crypto/merkle.js';
import { BitArray } from './bitarray.js';

export type { Part } from './codec.js';

/** The maximum size of a block in bytes (types/params.go MaxBlockSizeBytes, 100 MiB). */
export const MAX_BLOCK_SIZE_BYTES = 104857600;

export class PartSetError extends Error {
  constructor(readonly code: 'PART_SET_UNEXPECTED_INDEX' | 'PART_SET_INVALID_PROOF' | 'PART_SET_INCOMPLETE', message: string) {
    super(message);
    this.name = 'PartSetError';
  }
}

/** NewPartSetFromData: parts are views into `data` (no copy). */
export function makePartSet(data: Uint8Array, partSize = BLOCK_PART_SIZE_BYTES): { header: PartSetHeader; parts: Part[] } {
  const total = Math.ceil(data.length / partSize);
  const chunks = new Array<Uint8Array>(total);
  for (let i = 0; i < total; i++) chunks[i] = data.subarray(i * partSize, Math.min(data.length, (i + 1) * partSize));
  const { root, proofs } = merkleProofs(chunks);
  const parts = new Array<Part>(total);
  for (let i = 0; i < total; i++) parts[i] = { index: i, bytes: chunks[i]!, proof: proofs[i]! };
  return { header: { total, hash: root }, parts };
}

/** The BlockID of a block and its proto bytes: hash = header hash, parts from encodeBlock. */
export function blockIdOf(block: Block): { blockId: BlockID; blockBytes: Uint8Array; parts: Part[] } {
  return blockIdOfEncoded(block, encodeBlock(block));
}

/** blockIdOf's second half, for a caller that encoded the block itself (`blockBytes` = encodeBlock(block)). */
export function blockIdOfEncoded(block: Block, blockBytes: Uint8Array): { blockId: BlockID; blockBytes: Uint8Array; parts: Part[] } {
  const ps = makePartSet(blockBytes);
  return { blockId: { hash: headerHash(block.header), partSetHeader: ps.header }, blockBytes, parts: ps.parts };
}

/** Part.ValidateBasic: an error message or null. */
export function validatePart(part: Part): string | null {
  if (part.bytes.length > BLOCK_PART_SIZE_BYTES) return 'part too big';
  if (part.index < part.proof.total - 1 && part.bytes.length !== BLOCK_PART_SIZE_BYTES) return 'part of invalid size';
  if (part.index !== part.proof.index) return `part index ${part.index} != proof index ${part.proof.index}`;
  const e = validateProof(part.proof);
  return e === null ? null : `wrong Proof: ${e}`;
}

/** A part set being received (NewPartSetFromHeader) or built from data (NewPartSetFromData). */
export class PartSet {
  readonly total: number;
  readonly hash: Uint8Array;
  private readonly parts: (Part | undefined)[];
  private readonly bits: BitArray;
  private _count = 0;
  private _byteSize = 0;

  private constructor(header: PartSetHeader) {
    this.total = header.total;
    this.hash = header.hash;
    this.parts = new Array(header.total);
    this.bits = new BitArray(header.total);
  }

  static fromHeader(header: PartSetHeader): PartSet {
    return new PartSet(header);
  }

  static fromData(data: Uint8Array, partSize = BLOCK_PART_SIZE_BYTES): PartSet {
    const { header, parts } = makePartSet(data, partSize);
    const ps = new PartSet(header);
    for (const p of parts) {
      ps.parts[p.index] = p;
      ps.bits.set(p.index, true);
    }
    ps._count = parts.length;
    ps._byteSize = data.length;
    return ps;
  }

  header(): PartSetHeader {
    return { total: this.total, hash: this.hash };
  }

  hasHeader(h: PartSetHeader): boolean {
    if (h.total !== this.total || h.hash.length !== this.hash.length) return false;
    for (let i = 0; i < h.hash.length; i++) if (h.hash[i] !== this.hash[i]) return false;
    return true;
  }

  /**
   * AddPart: true when added, false for a duplicate; throws PartSetError for an index out of
   * range or a proof that does not match this set's root.
   */
  addPart(part: Part): boolean {
    if (!(part.index >= 0 && part.index < this.total)) {
      throw new PartSetError('PART_SET_UNEXPECTED_INDEX', 'error part set unexpected index');
    }
    if (this.parts[part.index] !== undefined) return false;
    if (part.proof.total !== this.total || part.proof.index !== part.index || !verifyMerkleProof(this.hash, part.bytes, part.proof)) {
      throw new PartSetError('PART_SET_INVALID_PROOF', 'error part set invalid proof');
    }
    this.parts[part.index] = part;
    this.bits.set(part.index, true);
    this._count++;
    this._byteSize += part.bytes.length;
    return true;
  }

  getPart(i: number): Part | undefined {
    return this.parts[i];
  }

  get count(): number {
    return this._count;
  }

  get byteSize(): number {
    return this._byteSize;
  }

  isComplete(): boolean {
    return this._count === this.total;
  }

  /** A copy of the received-parts bit array. */
  bitArray(): BitArray {
    return this.bits.copy();
  }

  /** The reassembled data; throws unless complete. */
  assemble(): Uint8Array {
    if (!this.isComplete()) throw new PartSetError('PART_SET_INCOMPLETE', 'part set is not complete');
    const out = new Uint8Array(this._byteSize);
    let off = 0;
    for (const p of this.parts) {
      out.set(p!.bytes, off);
      off += p!.bytes.length;
    }
    return out;
  }
}
