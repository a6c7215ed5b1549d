/**
 * The wrapper `Message{oneof sum}` every reactor sends (cometbft/cometbft:p2p/peer.go marshals the
 * reactor's wrapper with proto.Marshal). A set member is written even when its body is empty
 * (StatusRequest is `22 00`); when a message carries several members the last one wins, as in any
 * proto decoder; unknown fields are skipped, so a message whose only member is one we do not know
 * (a newer CometBFT's) reads as "no member" and is refused by the caller.
 */
import { ProtoDecodeError, ProtoReader, ProtoWriter, WIRE_LEN, expectWire } from '../../types/proto.js';

/** The last oneof member of `bytes` among `known` field numbers, with a reader over its body. */
export function readOneof(bytes: Uint8Array, known: readonly number[], what: string): { field: number; body: ProtoReader } {
  const r = new ProtoReader(bytes);
  let found: { field: number; body: ProtoReader } | null = null;
  while (!r.eof()) {
    const t = r.tag();
    const f = t >>> 3;
    const wt = t & 7;
    if (known.includes(f)) {
      expectWire(f, wt, WIRE_LEN);
      found = { field: f, body: r.sub() };
    } else r.skip(wt);
  }
  if (found === null) throw new ProtoDecodeError(`${what}: message has no known member`);
  return found;
}

/** Writes oneof member `field` whose body `write` fills (always written, even when empty). */
export function writeOneof(field: number, write: (w: ProtoWriter) => void, sizeHint = 128): Uint8Array {
  const w = new ProtoWriter(sizeHint);
  const m = w.fork(field);
  write(w);
  w.ldelim(m);
  return w.finish();
}
