/**
 * Node RPC `broadcast_evidence` (cometbft: rpc/core/evidence.go; types/evidence.go ValidateBasic;
 * types/vote.go ValidateBasic; evidence/pool.go AddEvidence; evidence/verify.go;
 * libs/json decoding of the type-wrapped argument). Duplicate-vote evidence signed with the
 * node's own validator key is checked step by step: `no evidence was provided`; decoding errors
 * as parameter errors; `evidence.ValidateBasic failed: …`; `failed to add evidence: Invalid
 * evidence: <reason>. Evidence: DuplicateVoteEvidence{…}`; and, for evidence that passes every
 * check, the missing pool: `failed to add evidence: can't add evidence to pending list: chaind has
 * no evidence pool yet`.
 *
 * `evidence` goes as CometBFT takes it: the type-wrapped JSON object over JSON-RPC and websocket,
 * its JSON text over URI (see `evidenceArgs`).
 */
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { SignedMsgType, type BlockID, type Vote } from '../../src/types/block.js';
import { formatTime, voteJSON, voteString } from '../../src/types/json.js';
import { voteSignBytes } from '../../src/types/signbytes.js';
import { blockIdKeyBytes, compareBytesLex } from '../../src/consensus/util.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startTestNode, waitHeight } from '../helpers/inproc.js';
import { viaPost, nodeErr3 as err3 } from '../helpers/rpc3.js';

/** The argument over URI (a JSON-quoted string) and JSON-RPC (a string), for `err3`. */
/** CometBFT's forms: the JSON object over JSON-RPC, its JSON text over URI (jsonStringToArg). */
function evidenceArgs(ev: unknown): [string, { evidence: unknown }] {
  return [`evidence=${encodeURIComponent(JSON.stringify(ev))}`, { evidence: ev }];
}
const rnd = (n: number) => new Uint8Array(createHash('sha256').update(String(Math.random())).digest()).subarray(0, n);
const blockId = (): BlockID => ({ hash: rnd(32), partSetHeader: { total: 1, hash: rnd(32) } });
/** Go's time.Time.String() of a UTC time. */
const goTime = (ns: bigint) => formatTime(ns).replace('T', ' ').replace(/Z$/, ' +0000 UTC');
const NO_POOL = "failed to add evidence: can't add evidence to pending list: chaind has no evidence pool yet";

t.test('broadcast_evidence', async (t) => {
  // Blocks keep coming; the evidence is about height 2, which no longer changes.
  const tn = await startTestNode({ timeoutCommit: '200ms' });
  t.teardown(() => tn.close());
  await waitHeight(tn, 2n);
  const keyFile = JSON.parse(fs.readFileSync(path.join(tn.home, 'config/priv_validator_key.json'), 'utf8'));
  const key = Ed25519PrivKey.fromBytes(Buffer.from(keyFile.priv_key.value, 'base64'));
  const chainId = tn.ctx.consensus.getState().chainId;
  const H = 2n;
  const blockTime = tn.ctx.storage.blocks.loadBlockMeta(H)!.header.time;

  const vote = (over: Partial<Vote> = {}, sign = true): Vote => {
    const v: Vote = {
      type: SignedMsgType.Prevote,
      height: H,
      round: 0,
      blockId: blockId(),
      timestamp: blockTime + 1_000_000n,
      validatorAddress: key.address,
      validatorIndex: 0,
      signature: new Uint8Array(0),
      extension: new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
      ...over,
    };
    return sign ? { ...v, signature: key.sign(voteSignBytes(chainId, v)) } : v;
  };
  /** Two votes in BlockID.Key() order, as NewDuplicateVoteEvidence orders them. */
  const ordered = (a: Vote, b: Vote): [Vote, Vote] => (compareBytesLex(blockIdKeyBytes(a.blockId), blockIdKeyBytes(b.blockId)) < 0 ? [a, b] : [b, a]);
  const evidence = (a: Vote | null, b: Vote | null, over: Record<string, unknown> = {}, type = 'consensus/DuplicateVoteEvidence') => ({
    type,
    value: { vote_a: a && voteJSON(a), vote_b: b && voteJSON(b), TotalVotingPower: '10', ValidatorPower: '10', Timestamp: formatTime(blockTime), ...over },
  });
  const evString = (a: Vote, b: Vote) => `DuplicateVoteEvidence{VoteA: ${voteString(a)}, VoteB: ${voteString(b)}}`;
  const invalid = (reason: string, a: Vote, b: Vote) => `failed to add evidence: Invalid evidence: ${reason}. Evidence: ${evString(a, b)}`;

  await t.test('valid evidence passes every check and meets the missing pool', async (t) => {
    const [a, b] = ordered(vote(), vote());
    const [q, p] = evidenceArgs(evidence(a, b));
    await err3(t, tn, 'broadcast_evidence', q, p, NO_POOL);
    // Upstream type names are accepted as well.
    const up = await viaPost(tn, 'broadcast_evidence', evidenceArgs(evidence(a, b, {}, 'tendermint/DuplicateVoteEvidence'))[1]);
    t.equal(up.body.error.data, NO_POOL);
  });

  await t.test('no evidence', async (t) => {
    await err3(t, tn, 'broadcast_evidence', '', {}, 'no evidence was provided');
    const [q, p] = evidenceArgs(null);
    await err3(t, tn, 'broadcast_evidence', q, p, 'no evidence was provided');
  });

  await t.test('decoding errors are parameter errors', async (t) => {
    const [a, b] = ordered(vote(), vote());
    const cases: [unknown, string][] = [
      [{ type: 'consensus/NoSuchEvidence', value: {} }, 'unknown type "consensus/NoSuchEvidence"'],
      [{ value: {} }, 'interface type cannot be empty'],
      [{ type: 'consensus/DuplicateVoteEvidence' }, 'interface value cannot be empty'],
      [[1], 'json: cannot unmarshal array into Go value of type json.interfaceWrapper'],
      [evidence(a, b, { TotalVotingPower: 10 }), 'invalid 64-bit integer encoding "10", expected string'],
      [evidence(a, b, { Timestamp: '2024-01-01T00:00:00+01:00' }), 'JSON time must be UTC and end with \'Z\', but got "\\"2024-01-01T00:00:00+01:00\\""'],
      [evidence({ ...a, round: 0 }, b, { vote_a: { ...voteJSON(a), round: '0' } }), 'json: cannot unmarshal string into Go value of type int32'],
      [evidence(a, b, { vote_a: { ...voteJSON(a), validator_address: 'XYZ' } }), "encoding/hex: invalid byte: U+0058 'X'"],
    ];
    for (const [ev, text] of cases) {
      const [q, p] = evidenceArgs(ev);
      await err3(t, tn, 'broadcast_evidence', q, p, text, true);
    }
  });

  await t.test('ValidateBasic', async (t) => {
    const [a, b] = ordered(vote(), vote());
    const cases: [unknown, string][] = [
      [{ type: 'consensus/DuplicateVoteEvidence', value: null }, 'one or both of the votes are empty nil-Vote, nil-Vote'],
      [evidence(a, null), `one or both of the votes are empty ${voteString(a)}, nil-Vote`],
      [evidence(b, a), 'duplicate votes in invalid order'],
      [evidence(a, a), 'duplicate votes in invalid order'],
      [evidence(...ordered(vote({ signature: new Uint8Array(0) }, false), vote())), ''],
      [evidence(...ordered(vote({ height: 0n }), vote())), ''],
      [evidence(...ordered(vote({ validatorAddress: rnd(19) }), vote())), ''],
      [evidence(...ordered(vote({ type: SignedMsgType.Proposal }), vote())), ''],
      [evidence(...ordered(vote({ blockId: { hash: rnd(32), partSetHeader: { total: 0, hash: new Uint8Array(0) } } }), vote())), ''],
      [evidence(...ordered(vote({ extension: rnd(3) }), vote())), ''],
    ];
    const wantFor = (v: Vote): string => {
      if (v.signature.length === 0) return 'signature is missing';
      if (v.height === 0n) return 'negative or zero Height';
      if (v.validatorAddress.length !== 20) return 'expected ValidatorAddress size to be 20 bytes, got 19 bytes';
      if (v.type === SignedMsgType.Proposal) return 'invalid Type';
      if (v.extension.length > 0) return 'unexpected vote extension; vote type 1, isNil false';
      return `blockID must be either empty or complete, got: ${Buffer.from(v.blockId.hash).toString('hex').toUpperCase()}:0:000000000000`;
    };
    for (const [ev, text] of cases) {
      let want = text;
      if (want === '') {
        // The bad vote is whichever of the two it was ordered to.
        const e = ev as { value: { vote_a: any; vote_b: any } };
        const which = isBad(e.value.vote_a) ? 'A' : 'B';
        const bad = which === 'A' ? e.value.vote_a : e.value.vote_b;
        want = `invalid Vote${which}: ${wantFor(fromJson(bad))}`;
      }
      const [q, p] = evidenceArgs(ev);
      await err3(t, tn, 'broadcast_evidence', q, p, `evidence.ValidateBasic failed: ${want}`);
    }
  });

  await t.test('verification against the chain', async (t) => {
    const good = ordered(vote(), vote());
    const check = async (ev: unknown, reason: string, a: Vote, b: Vote) => {
      const [q, p] = evidenceArgs(ev);
      await err3(t, tn, 'broadcast_evidence', q, p, invalid(reason, a, b));
    };
    // A height the chain has not reached.
    const far = ordered(vote({ height: 999n }), vote({ height: 999n }));
    await check(evidence(...far), "don't have header #999", ...far);
    // The evidence time must be the block's time.
    await check(evidence(...good, { Timestamp: formatTime(blockTime + 5n) }), `evidence has a different time to the block it is associated with (${goTime(blockTime + 5n)} != ${goTime(blockTime)})`, ...good);
    // Not a validator.
    const other = Ed25519PrivKey.fromSeed(rnd(32));
    const stranger = ordered(vote({ validatorAddress: other.address }), vote({ validatorAddress: other.address }));
    await check(evidence(...stranger), `address ${Buffer.from(other.address).toString('hex').toUpperCase()} was not a validator at height 2`, ...stranger);
    // H/R/S must match.
    const hrs = ordered(vote(), vote({ round: 1 }));
    const [ra, rb] = [hrs[0].round, hrs[1].round];
    await check(evidence(...hrs), `h/r/s does not match: 2/${ra}/SIGNED_MSG_TYPE_PREVOTE vs 2/${rb}/SIGNED_MSG_TYPE_PREVOTE`, ...hrs);
    // Powers.
    await check(evidence(...good, { ValidatorPower: '7' }), 'validator power from evidence and our validator set does not match (7 != 10)', ...good);
    await check(evidence(...good, { TotalVotingPower: '11' }), 'total voting power from the evidence and our validator set does not match (11 != 10)', ...good);
    // Signatures: one of the two votes carries 64 random bytes.
    const forgedVote = { ...vote(), signature: Uint8Array.from([...rnd(32), ...rnd(32)]) };
    const forged = ordered(vote(), forgedVote);
    await check(evidence(...forged), `verifying Vote${forged[0] === forgedVote ? 'A' : 'B'}: invalid signature`, ...forged);
  });

  /** A vote JSON back to a Vote (for the ValidateBasic expectations). */
  function fromJson(j: any): Vote {
    return {
      type: j.type,
      height: BigInt(j.height),
      round: j.round,
      blockId: { hash: Buffer.from(j.block_id.hash, 'hex'), partSetHeader: { total: j.block_id.parts.total, hash: Buffer.from(j.block_id.parts.hash, 'hex') } },
      timestamp: 0n,
      validatorAddress: Buffer.from(j.validator_address, 'hex'),
      validatorIndex: j.validator_index,
      signature: j.signature ? Buffer.from(j.signature, 'base64') : new Uint8Array(0),
      extension: j.extension ? Buffer.from(j.extension, 'base64') : new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
    };
  }
  function isBad(j: any): boolean {
    const v = fromJson(j);
    return (
      v.signature.length === 0 || v.height === 0n || v.validatorAddress.length !== 20 || v.type === SignedMsgType.Proposal ||
      v.extension.length > 0 || v.blockId.partSetHeader.total === 0
    );
  }
});
