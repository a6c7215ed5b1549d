/**
 * TxEncodeAmino / TxDecodeAmino: amino JSON ↔ amino binary of a legacy `StdTx`
 * (cosmos-sdk: x/auth/tx/service.go, which runs LegacyAmino.UnmarshalJSON/Marshal and
 * Unmarshal/MarshalJSON over x/auth/migrations/legacytx StdTx).
 *
 * Not implemented here, on purpose: both directions need go-amino itself — its binary codec
 * (registered-type prefix bytes, struct fields numbered by Go field order rather than proto
 * numbers, zigzag varints for signed integers, interface values for every Any) and its JSON
 * codec (Go struct field order, the gogoproto `json` tags and their omitempty, custom
 * Marshal(JSON|Amino) types). chaind has no go-amino model of its message structs: its amino
 * support is the canonical amino JSON that SIGN_MODE_LEGACY_AMINO_JSON signs (src/tx/amino.ts),
 * which is a different encoder. Without upstream byte vectors to hold a re-implementation to,
 * answering with guessed bytes would be worse than refusing, so both methods answer
 * Unimplemented after upstream's own argument check (an empty input is InvalidArgument, as
 * upstream). Amino-signed txs do not need these methods: a client signs the amino JSON sign doc
 * and broadcasts a protobuf TxRaw with SIGN_MODE_LEGACY_AMINO_JSON.
 */
import { GrpcCode, GrpcStatusError } from '../../app/errors.js';
import type { TxDecodeAminoRequest, TxEncodeAminoRequest } from '../../gen/chain/tx/v1beta1/service_pb.js';
import type { Names } from '../../names/index.js';

/** The status message of both methods (stable: clients and tests match on it). */
export const AMINO_UNIMPLEMENTED =
  'legacy amino binary encoding of StdTx is not supported by this node; encode and decode protobuf txs with TxEncode and TxDecode';

/** TxEncodeAmino: `invalid empty tx json` for an empty request, else Unimplemented. */
export function txEncodeAmino(req: TxEncodeAminoRequest, _names?: Names): never {
  if (req.aminoJson === '') throw new GrpcStatusError(GrpcCode.InvalidArgument, 'invalid empty tx json');
  throw new GrpcStatusError(GrpcCode.Unimplemented, AMINO_UNIMPLEMENTED);
}

/** TxDecodeAmino: `invalid empty tx bytes` for an empty request, else Unimplemented. */
export function txDecodeAmino(req: TxDecodeAminoRequest, _names?: Names): never {
  if (req.aminoBinary.length === 0) throw new GrpcStatusError(GrpcCode.InvalidArgument, 'invalid empty tx bytes');
  throw new GrpcStatusError(GrpcCode.Unimplemented, AMINO_UNIMPLEMENTED);
}
