/**
 * Node RPC `broadcast_evidence` (cometbft: rpc/core/evidence.go; types/evidence.go ValidateBasic;
 * types/vote.go ValidateBasic; evidence/pool.go AddEvidence; evidence/verify.go;
 * state/execution.go; libs/json decoding of the type-wrapped argument). Duplicate-vote evidence
 * signed with the node's own validator key is checked step by step: `no evidence was provided`;
 * decoding errors as parameter errors; `evidence.ValidateBasic failed: …`; `failed to add
 * evidence: Invalid evidence: <reason>. Evidence: DuplicateVoteEvidence{…}`. Evidence that passes
 * goes end to end: ResultBroadcastEvidence `{hash}` (base64, Go's []byte), the evidence pool, a
 * later committed block (`block` renders it as CometBFT's JSON, the header's evidence_hash covers
 * it, `block_results` still answers), and no second inclusion when it is broadcast again.
 *
 * `evidence` goes as CometBFT takes it: the type-wrapped JSON object over JSON-RPC and websocket,
 * its JSON text over URI (see `evidenceArgs`).
 */
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { SignedMsgType, type BlockID, type Vote } from '../../src/types/block.js';
import { formatTime, voteJSON, voteString } from '../../src/types/json.js';
import { encodeDuplicateVoteEvidence } from '../../src/types/evidence.js';
import { evidenceHash, evidenceItemHash } from '../../src/types/hashing.js';
import { voteSignBytes } from '../../src/types/signbytes.js';
import { blockIdKeyBytes, compareBytesLex } from '../../src/consensus/util.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startTestNode, waitHeight } from '../helpers/inproc.js';
import { b64, hexOf, nodeOk3 as ok3, viaPost, nodeErr3 as err3 } from '../helpers/rpc3.js';

/** The argument over URI (a JSON-quoted string) and JSON-RPC (a string), for `err3`. */
/** CometBFT's forms: the JSON object over JSON-RPC, its JSON text over URI (jsonStringToArg). */
function evidenceArgs(ev: unknown): [string, { evidence: unknown }] {
  return [`evidence=${encodeURIComponent(JSON.stringify(ev))}`, { evidence: ev }];
}
const rnd = (n: number) => new Uint8Array(createHash('sha256').update(String(Math.random())).digest()).subarray(0, n);
const blockId = (): BlockID => ({ hash: rnd(32), partSetHeader: { total: 1, hash: rnd(32) } });
/** Go's time.Time.String() of a UTC time. */
const goTime = (ns: bigint) => formatTime(ns).replace('T', ' ').replace(/Z$/, ' +0000 UTC');

t.test('broadcast_evidence', async (t) => {
  // Blocks keep coming; the evidence is about height 2, which no longer changes.
  // Inline block execution (the harness's default): the test spies on the app's FinalizeBlock
  // (what misbehavior it gets), which on the executor thread is another app instance.
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

  await t.test('valid evidence: hash, pending, committed in a later block, never twice', async (t) => {
    const [a, b] = ordered(vote(), vote());
    const encoded = encodeDuplicateVoteEvidence({ voteA: a, voteB: b, totalVotingPower: 10n, validatorPower: 10n, timestamp: blockTime });
    const want = { hash: b64(evidenceItemHash(encoded)) };
    const from = tn.ctx.storage.blocks.height();
    // The executor publishes NewEvidence (one per item) with NewBlock (state/execution.go fireEvents).
    const published: { type: string; data: any }[] = [];
    const unsubscribe = tn.ctx.bus.subscribe((m) => {
      if (m.type === 'NewBlockEvents' || m.type === 'NewEvidence') published.push(m);
    });
    t.teardown(unsubscribe);
    // What FinalizeBlock hands the application (the app itself ignores misbehavior).
    const app = tn.ctx.app;
    const finalize = app.finalizeBlock.bind(app);
    const misbehavior: { height: bigint; list: unknown }[] = [];
    app.finalizeBlock = (req) => {
      if (req.misbehavior && req.misbehavior.length > 0) misbehavior.push({ height: req.height, list: req.misbehavior });
      return finalize(req);
    };
    t.teardown(() => {
      app.finalizeBlock = finalize;
    });
    const [q, p] = evidenceArgs(evidence(a, b));
    const first = await ok3(t, tn, 'broadcast_evidence', q, p);
    t.same([first.uri, first.post, first.ws], [want, want, want], 'ResultBroadcastEvidence: Evidence.Hash() in base64, on every transport');
    // Upstream type names are accepted as well; evidence already pending is answered the same.
    const up = await viaPost(tn, 'broadcast_evidence', evidenceArgs(evidence(a, b, {}, 'tendermint/DuplicateVoteEvidence'))[1]);
    t.same(up.body.result, want);

    // The proposer takes it into the next block.
    const deadline = Date.now() + 20_000;
    let height = from + 1n;
    let found: any = null;
    while (found === null && Date.now() < deadline) {
      await waitHeight(tn, height);
      const r = await viaPost(tn, 'block', { height: String(height) });
      if (r.body.result.block.evidence.evidence.length > 0) found = r.body.result;
      else height++;
    }
    t.ok(found, `a block after ${from} carries the evidence`);
    if (!found) return;
    t.same(
      found.block.evidence.evidence,
      [
        {
          type: 'consensus/DuplicateVoteEvidence',
          value: { vote_a: voteJSON(a), vote_b: voteJSON(b), TotalVotingPower: '10', ValidatorPower: '10', Timestamp: formatTime(blockTime) },
        },
      ],
      'rendered as CometBFT renders DuplicateVoteEvidence',
    );
    t.same(
      misbehavior,
      [{ height, list: [{ type: 1, validator: { address: key.address, power: 10n }, height: H, time: blockTime, totalVotingPower: 10n }] }],
      'FinalizeBlock misbehavior: DUPLICATE_VOTE, validator {address, power}, height, time, total_voting_power',
    );
    const at = published.findIndex((m) => m.type === 'NewEvidence');
    t.ok(at > 0 && published[at - 1]!.type === 'NewBlockEvents', 'NewEvidence follows NewBlockEvents');
    t.same([published[at]?.data.height, hexOf(published[at]?.data.evidence ?? new Uint8Array(0))], [height, hexOf(encoded)], 'NewEvidence carries the height and the item');
    t.equal(found.block.header.evidence_hash, hexOf(evidenceHash([encoded])), 'the header evidence_hash covers it');
    t.same(tn.ctx.storage.blocks.loadBlock(height)!.evidence.map(hexOf), [hexOf(encoded)], 'stored as the proto Evidence item');
    const results = await viaPost(tn, 'block_results', { height: String(height) });
    t.equal(results.body.result?.height, String(height), 'block_results still answer for that height');
    t.equal(tn.ctx.evidencePool.size(), 0, 'nothing left pending');
    t.ok(tn.ctx.evidencePool.isCommitted(encoded), 'remembered as committed');

    // Broadcast again after commit: CometBFT's AddEvidence ignores committed evidence without an
    // error (a peer that is behind may send it), so the answer is the hash again...
    const again = await viaPost(tn, 'broadcast_evidence', p);
    t.same([again.body.error, again.body.result], [undefined, want], 'committed evidence: no error, same hash');
    t.equal(tn.ctx.evidencePool.size(), 0, '...and it is not pending again');
    // ...and blocks keep coming, without it.
    await waitHeight(tn, height + 3n);
    for (let h = height + 1n; h <= height + 3n; h++) {
      t.same(tn.ctx.storage.blocks.loadBlock(h)!.evidence, [], `block ${h} has no evidence`);
    }
    // A block carrying it again would be invalid (CometBFT's CheckEvidence text).
    t.throws(() => tn.ctx.evidencePool.checkEvidence(tn.ctx.evidencePool.state, [encoded]), {
      message: `Invalid evidence: evidence was already committed. Evidence: ${evString(a, b)}`,
    });
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
