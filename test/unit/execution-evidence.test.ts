/**
 * The block executor and the evidence pool (src/state/execution.ts; cometbft: state/execution.go
 * CreateProposalBlock, state/validation.go, types/block.go ValidateBasic, evidence/pool.go
 * CheckEvidence): a proposal carries pending evidence within evidence.max_bytes and its txs get
 * what is left; PrepareProposal sees it as misbehavior; a block's evidence must decode and pass
 * ValidateBasic, fit evidence.max_bytes, and pass CheckEvidence.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { EvidenceChain } from '../helpers/evidence-chain.js';
import type { RequestPrepareProposal } from '../../src/abci/types.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import { EvidencePool } from '../../src/evidence/pool.js';
import { Executor, emptyCommit, maxDataBytes, type ExecutorApp, type ExecutorMempool } from '../../src/state/execution.js';
import type { State } from '../../src/types/state.js';
import { Storage } from '../../src/store/storage.js';
import type { Block, Bytes } from '../../src/types/block.js';
import {
  encodeDuplicateVoteEvidence,
  evidenceListByteSize,
  type CheckedDuplicateVoteEvidence,
} from '../../src/types/evidence.js';
import { evidenceHash } from '../../src/types/hashing.js';
import { defaultConsensusParams } from '../../src/types/params.js';
import { ValidatorSet } from '../../src/types/validator_set.js';

const CHAIN_ID = 'exec-evidence';
const key = Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(3));
const vals = new ValidatorSet([{ pubKey: { type: 'ed25519', bytes: key.pubKey }, power: 10n }]);
const ec = new EvidenceChain(CHAIN_ID, vals, 100n);
const chain = ec.store;
const timeOf = (h: bigint) => ec.timeOf(h);
const blockId = () => ec.blockId();
const dve = (h: bigint): CheckedDuplicateVoteEvidence => ec.dve(h, key);

/**
 * A chain that starts at height 20 (initial_height 20, nothing committed yet), so a proposal
 * needs no last commit; heights 1..100 have headers and the one-validator set for the evidence.
 */
function genesisState(evidenceMaxBytes = 1048576n): State {
  const params = defaultConsensusParams();
  params.evidence.maxBytes = evidenceMaxBytes;
  return {
    chainId: CHAIN_ID,
    initialHeight: 20n,
    lastBlockHeight: 0n,
    lastBlockId: { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } },
    lastBlockTime: timeOf(19n),
    validators: vals,
    nextValidators: vals.copyIncrementProposerPriority(1),
    lastValidators: new ValidatorSet([]),
    lastHeightValidatorsChanged: 20n,
    consensusParams: params,
    lastHeightConsensusParamsChanged: 20n,
    lastResultsHash: new Uint8Array(0),
    appHash: new Uint8Array(0),
    appVersion: 0n,
  };
}

t.test('proposals and block validation with evidence', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  const storage = Storage.open({ file: path.join(dir, 'chaind.mdb'), noSync: true });
  t.teardown(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const prepared: RequestPrepareProposal[] = [];
  const reaped: bigint[] = [];
  const app = {
    prepareProposal: async (req: RequestPrepareProposal) => {
      prepared.push(req);
      return req.txs;
    },
  } as unknown as ExecutorApp;
  const mempool: ExecutorMempool = {
    reapMaxBytesMaxGas: (maxBytes) => {
      reaped.push(maxBytes);
      return [];
    },
    lock: async () => {},
    unlock: () => {},
    update: async () => {},
  };
  const state = genesisState();
  const pool = new EvidencePool({ store: storage.evidence, chain, state });
  const exec = new Executor({ storage, app, mempool, evidence: pool });
  const items = [dve(3n), dve(4n)].map((ev) => {
    pool.addEvidence(ev);
    return encodeDuplicateVoteEvidence(ev);
  });
  const withEvidence = (b: Block, evidence: Bytes[]): Block => ({ ...b, evidence, header: { ...b.header, evidenceHash: evidenceHash(evidence) } });

  const block = await exec.createProposalBlock(state, emptyCommit(), key.address, 0n);
  await t.test('the proposal carries the pending evidence', async (t) => {
    t.same(block.evidence, items);
    t.same(block.header.evidenceHash, evidenceHash(items));
    t.equal(reaped[0], maxDataBytes(state.consensusParams.block.maxBytes, evidenceListByteSize(items), 1), 'txs get block.max_bytes minus the evidence');
    t.same(
      prepared[0]!.misbehavior?.map((m) => [m.type, m.height, m.time, m.validator.power, m.totalVotingPower]),
      [
        [1, 3n, timeOf(3n), 10n, 10n],
        [1, 4n, timeOf(4n), 10n, 10n],
      ],
      'PrepareProposal misbehavior',
    );
    t.doesNotThrow(() => exec.validateBlock(state, block));
  });

  await t.test('evidence.max_bytes bounds the proposal and the block', async (t) => {
    const one = evidenceListByteSize(items.slice(0, 1));
    const small = genesisState(one);
    const b = await exec.createProposalBlock(small, emptyCommit(), key.address, 0n);
    t.same(b.evidence, items.slice(0, 1), 'only what fits');
    t.throws(() => exec.validateBlock(small, block), { message: `Too much evidence: Max ${one}, got ${evidenceListByteSize(items)}` });
  });

  await t.test('a block with bad evidence is invalid', async (t) => {
    t.throws(() => exec.validateBlock(state, withEvidence(block, [items[0]!, items[0]!])), {
      message: /^Invalid evidence: duplicate evidence\. Evidence: DuplicateVoteEvidence\{VoteA: Vote\{0:/,
    });
    const ev = dve(5n);
    const swapped = encodeDuplicateVoteEvidence({ ...ev, voteA: ev.voteB, voteB: ev.voteA });
    t.throws(() => exec.validateBlock(state, withEvidence(block, [swapped])), { message: 'invalid evidence (#0): duplicate votes in invalid order' });
    t.throws(() => exec.validateBlock(state, { ...block, evidence: [Uint8Array.of(0x1a, 0x00)] }), { message: /^invalid evidence \(#0\): / });
    const wrongPower = encodeDuplicateVoteEvidence({ ...dve(6n), validatorPower: 3n });
    t.throws(() => exec.validateBlock(state, withEvidence(block, [wrongPower])), {
      message: 'validator power from evidence and our validator set does not match (3 != 10)',
    });
    // The header must cover exactly the block's evidence.
    t.throws(() => exec.validateBlock(state, { ...block, evidence: items.slice(0, 1) }), { message: 'wrong Header.EvidenceHash' });
    // An executor without a pool cannot check evidence and refuses it.
    const bare = new Executor({ storage, app, mempool });
    t.throws(() => bare.validateBlock(state, block), /no evidence pool/);
    t.same((await bare.createProposalBlock(state, emptyCommit(), key.address, 0n)).evidence, []);
  });

  await t.test("the data hash of the node's own proposal is not computed again, yet still checked", async (t) => {
    const txs = [Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5)];
    const withTxs = new Executor({ storage, app, mempool: { ...mempool, reapMaxBytesMaxGas: () => [...txs] } });
    const own = await withTxs.createProposalBlock(state, emptyCommit(), key.address, 0n);
    t.same(own.data.txs, txs);
    t.doesNotThrow(() => withTxs.validateBlock(state, own));
    t.throws(() => (own.data.txs as Bytes[]).push(Uint8Array.of(6)), TypeError, 'its txs are frozen');
    t.throws(() => withTxs.validateBlock(state, { ...own, data: { txs: [...txs, Uint8Array.of(6)] } }), { message: 'wrong Header.DataHash' });
    t.throws(() => withTxs.validateBlock(state, { ...own, data: { txs: [txs[1]!, txs[0]!] } }), { message: 'wrong Header.DataHash' });
    t.throws(() => withTxs.validateBlock(state, { ...own, header: { ...own.header, dataHash: new Uint8Array(32) } }), { message: 'wrong Header.DataHash' });
    // Another executor (a peer) hashes the same block's txs and agrees.
    t.doesNotThrow(() => exec.validateBlock(state, own));
  });
});
