/**
 * The evidence reactor's channel 0x38 carries a bare `tendermint.types.EvidenceList{evidence=1}`
 * with no wrapper Message (cometbft/cometbft:evidence/reactor.go, proto/tendermint/types/evidence.proto).
 * Items stay proto-encoded `Evidence` bytes, as in a block; decodeEvidenceItem (src/types/evidence.ts)
 * reads one.
 */
import { decodeEvidenceList, encodeEvidenceList } from '../../types/codec.js';

export const EVIDENCE_CHANNEL = 0x38;

export function encodeEvidenceMessage(items: readonly Uint8Array[]): Uint8Array {
  return encodeEvidenceList(items);
}

export function decodeEvidenceMessage(bytes: Uint8Array): Uint8Array[] {
  return decodeEvidenceList(bytes);
}
