/**
 * The file-backed private validator (cometbft: privval/file.go): regressions refused with
 * CometBFT's messages, the same-H/R/S reuse rules, the state on disk before a signature is
 * returned, key/state JSON formats (both type-name spellings), and the sign audit log.
 */
import { readEnvSwitches } from '../../src/config/env.js';
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignedMsgType, type BlockID, type Proposal, type Vote } from '../../src/types/block.js';
import { Ed25519PrivKey, ed25519Verify } from '../../src/crypto/ed25519.js';
import { proposalSignBytes, voteSignBytes } from '../../src/types/signbytes.js';
import {
  FilePV,
  MemoryPrivValidator,
  PrivValidatorError,
  checkHRS,
  onlyDifferByTimestamp,
  parseLastSignState,
  parsePrivValidatorKey,
  privValidatorKeyJSON,
} from '../../src/consensus/privval.js';
import { nilBlockId } from '../../src/consensus/util.js';

const CHAIN = 'pv-chain';
const T0 = 1_700_000_000_123_456_789n;

function tmp(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaind-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function newPV(t: Test, opts: { signLogPath?: string | null } = {}) {
  const home = tmp(t);
  const { keyFile, stateFile } = FilePV.defaultPaths(home);
  const pv = FilePV.generate(keyFile, stateFile, { key: Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(7)), signLogPath: opts.signLogPath ?? null });
  t.teardown(() => pv.close());
  return { home, keyFile, stateFile, pv };
}

function bid(tag: number): BlockID {
  return { hash: new Uint8Array(32).fill(tag), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(tag + 1) } };
}

function mkVote(pv: { address: Uint8Array }, height: bigint, round: number, type: SignedMsgType, blockId: BlockID, ts = T0): Vote {
  return {
    type,
    height,
    round,
    blockId,
    timestamp: ts,
    validatorAddress: pv.address,
    validatorIndex: 0,
    signature: new Uint8Array(0),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
}

function mkProposal(height: bigint, round: number, blockId: BlockID, ts = T0, polRound = -1): Proposal {
  return { type: SignedMsgType.Proposal, height, round, polRound, blockId, timestamp: ts, signature: new Uint8Array(0) };
}

function readState(file: string) {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

async function rejects(t: Test, p: Promise<unknown>, code: string, message: string) {
  try {
    await p;
    t.fail(`expected ${code}`);
  } catch (e) {
    t.type(e, PrivValidatorError);
    t.equal((e as PrivValidatorError).code, code);
    t.equal((e as Error).message, message);
  }
}

t.test('signs, and the signature verifies', async (t) => {
  const { pv } = newPV(t);
  const v = await pv.signVote(CHAIN, mkVote(pv, 1n, 0, SignedMsgType.Prevote, bid(1)));
  t.equal(v.signature.length, 64);
  t.ok(ed25519Verify(pv.pubKey.bytes, voteSignBytes(CHAIN, v), v.signature));
  const p = await pv.signProposal(CHAIN, mkProposal(1n, 1, bid(1)));
  t.ok(ed25519Verify(pv.pubKey.bytes, proposalSignBytes(CHAIN, p), p.signature));
});

t.test('regressions are refused with CometBFT\'s messages', async (t) => {
  const { pv, stateFile } = newPV(t);
  await pv.signVote(CHAIN, mkVote(pv, 5n, 2, SignedMsgType.Prevote, bid(1)));
  const before = fs.readFileSync(stateFile, 'utf8');
  await rejects(t, pv.signVote(CHAIN, mkVote(pv, 4n, 9, SignedMsgType.Precommit, bid(1))), 'PRIVVAL_HEIGHT_REGRESSION', 'height regression. Got 4, last height 5');
  await rejects(t, pv.signVote(CHAIN, mkVote(pv, 5n, 1, SignedMsgType.Precommit, bid(1))), 'PRIVVAL_ROUND_REGRESSION', 'round regression at height 5. Got 1, last round 2');
  await rejects(t, pv.signProposal(CHAIN, mkProposal(5n, 2, bid(1))), 'PRIVVAL_STEP_REGRESSION', 'step regression at height 5 round 2. Got 1, last step 2');
  t.equal(fs.readFileSync(stateFile, 'utf8'), before, 'refusals leave the state file alone');
  // Forward moves are fine.
  await pv.signVote(CHAIN, mkVote(pv, 5n, 2, SignedMsgType.Precommit, bid(1)));
  await pv.signVote(CHAIN, mkVote(pv, 5n, 3, SignedMsgType.Prevote, nilBlockId()));
  await pv.signProposal(CHAIN, mkProposal(6n, 0, bid(2)));
  await rejects(t, pv.signVote(CHAIN, mkVote(pv, 5n, 9, SignedMsgType.Prevote, bid(1))), 'PRIVVAL_HEIGHT_REGRESSION', 'height regression. Got 5, last height 6');
});

t.test('checkHRS on a state without sign bytes', async (t) => {
  const lss = { height: 3n, round: 1, step: 2, signature: null, signBytes: null };
  t.throws(() => checkHRS(lss, 3n, 1, 2), { message: 'no SignBytes found', code: 'PRIVVAL_NO_SIGN_BYTES' });
  t.equal(checkHRS(lss, 3n, 1, 3), false);
  t.equal(checkHRS(lss, 4n, 0, 1), false);
});

t.test('same H/R/S: identical bytes reuse the signature; timestamp-only change reuses timestamp and signature; else conflicting data', async (t) => {
  const { pv } = newPV(t);
  const first = await pv.signVote(CHAIN, mkVote(pv, 7n, 0, SignedMsgType.Precommit, bid(3)));
  const again = await pv.signVote(CHAIN, mkVote(pv, 7n, 0, SignedMsgType.Precommit, bid(3)));
  t.same(again.signature, first.signature, 'identical sign bytes → same signature');
  const later = await pv.signVote(CHAIN, mkVote(pv, 7n, 0, SignedMsgType.Precommit, bid(3), T0 + 5_000_000n));
  t.same(later.signature, first.signature, 'timestamp-only difference → old signature');
  t.equal(later.timestamp, T0, '... and the old timestamp');
  t.ok(ed25519Verify(pv.pubKey.bytes, voteSignBytes(CHAIN, later), later.signature), 'the returned vote verifies');
  await rejects(t, pv.signVote(CHAIN, mkVote(pv, 7n, 0, SignedMsgType.Precommit, bid(4))), 'PRIVVAL_CONFLICTING_DATA', 'conflicting data');
  await rejects(t, pv.signVote(CHAIN, mkVote(pv, 7n, 0, SignedMsgType.Precommit, nilBlockId())), 'PRIVVAL_CONFLICTING_DATA', 'conflicting data');
  // Proposals: same rules (timestamp is field 6 there).
  const p1 = await pv.signProposal(CHAIN, mkProposal(8n, 0, bid(5)));
  const p2 = await pv.signProposal(CHAIN, mkProposal(8n, 0, bid(5), T0 + 1n));
  t.same(p2.signature, p1.signature);
  t.equal(p2.timestamp, T0);
  await rejects(t, pv.signProposal(CHAIN, mkProposal(8n, 0, bid(5), T0, 0)), 'PRIVVAL_CONFLICTING_DATA', 'conflicting data');
});

t.test('onlyDifferByTimestamp compares everything but the timestamp field', async (t) => {
  const a = voteSignBytes(CHAIN, { type: SignedMsgType.Prevote, height: 3n, round: 1, blockId: bid(1), timestamp: T0 });
  const b = voteSignBytes(CHAIN, { type: SignedMsgType.Prevote, height: 3n, round: 1, blockId: bid(1), timestamp: T0 + 999n });
  const c = voteSignBytes(CHAIN, { type: SignedMsgType.Prevote, height: 3n, round: 2, blockId: bid(1), timestamp: T0 });
  const d = voteSignBytes('other', { type: SignedMsgType.Prevote, height: 3n, round: 1, blockId: bid(1), timestamp: T0 });
  t.equal(onlyDifferByTimestamp(a, b, 5), T0);
  t.equal(onlyDifferByTimestamp(b, a, 5), T0 + 999n);
  t.equal(onlyDifferByTimestamp(a, c, 5), null);
  t.equal(onlyDifferByTimestamp(a, d, 5), null, 'chain id differs');
  t.equal(onlyDifferByTimestamp(a, new Uint8Array([1, 2]), 5), null, 'garbage');
});

t.test('the state is on disk before the signature is returned', async (t) => {
  const { pv, stateFile, keyFile } = newPV(t);
  const v = await pv.signVote(CHAIN, mkVote(pv, 12n, 3, SignedMsgType.Precommit, bid(9)));
  // No await between the return and this read: whatever is on disk was written before return.
  const st = readState(stateFile);
  t.equal(st.height, '12');
  t.equal(st.round, 3);
  t.equal(st.step, 3);
  t.equal(st.signature, Buffer.from(v.signature).toString('base64'));
  t.equal(st.signbytes, Buffer.from(voteSignBytes(CHAIN, v)).toString('hex').toUpperCase());
  // A reload (restart) refuses what the old process would have refused.
  const pv2 = FilePV.load(keyFile, stateFile, { signLogPath: null });
  await rejects(t, pv2.signVote(CHAIN, mkVote(pv2, 12n, 3, SignedMsgType.Prevote, bid(9))), 'PRIVVAL_STEP_REGRESSION', 'step regression at height 12 round 3. Got 2, last step 3');
  const again = await pv2.signVote(CHAIN, mkVote(pv2, 12n, 3, SignedMsgType.Precommit, bid(9), T0 + 77n));
  t.same(again.signature, v.signature, 'after restart the same vote gets the same signature');
  t.same(fs.readdirSync(path.dirname(stateFile)).filter((f) => f.endsWith('.tmp')), [], 'no temp files left');
});

t.test('a failing write means no signature', async (t) => {
  const { pv, stateFile } = newPV(t);
  await pv.signVote(CHAIN, mkVote(pv, 1n, 0, SignedMsgType.Prevote, bid(1)));
  // Put a non-empty directory where the state file goes: the rename fails, even for root.
  fs.rmSync(stateFile);
  fs.mkdirSync(stateFile);
  fs.writeFileSync(path.join(stateFile, 'x'), 'x');
  let threw = false;
  try {
    await pv.signVote(CHAIN, mkVote(pv, 2n, 0, SignedMsgType.Prevote, bid(1)));
  } catch {
    threw = true;
  }
  t.ok(threw, 'no signature when the state cannot be persisted');
  fs.rmSync(stateFile, { recursive: true });
  // The in-memory state did not move either: height 2 can be signed once the disk works.
  const v = await pv.signVote(CHAIN, mkVote(pv, 2n, 0, SignedMsgType.Prevote, bid(1)));
  t.equal(v.signature.length, 64);
  t.equal(readState(stateFile).height, '2');
});

t.test('a state write that fails is retried with back-off; one that keeps failing is PRIVVAL_PERSIST_FAILED', async (t) => {
  const home = tmp(t);
  const { keyFile, stateFile } = FilePV.defaultPaths(home);
  FilePV.generate(keyFile, stateFile, { key: Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(7)), signLogPath: null }).close();
  const dataDir = path.dirname(stateFile);
  const away = `${dataDir}.away`;

  // Every attempt fails (the data directory is gone): the typed error, nothing signed, no temp file left.
  const pv = FilePV.load(keyFile, stateFile, { signLogPath: null, persistAttempts: 3, persistBackoffMs: 1 });
  t.teardown(() => pv.close());
  fs.renameSync(dataDir, away);
  try {
    await pv.signVote(CHAIN, mkVote(pv, 1n, 0, SignedMsgType.Prevote, bid(1)));
    t.fail('signed without saving its state');
  } catch (e) {
    t.type(e, PrivValidatorError);
    t.equal((e as PrivValidatorError).code, 'PRIVVAL_PERSIST_FAILED');
    t.match((e as Error).message, /cannot save priv_validator_state\.json \(3 attempts\): .*ENOENT/);
  }
  t.equal(pv.lastSignState.height, 0n, 'the in-memory state did not move');
  fs.renameSync(away, dataDir);
  t.same(fs.readdirSync(dataDir), ['priv_validator_state.json'], 'no temp file left behind');

  // The directory comes back while the validator is still retrying: the same call succeeds.
  const patient = FilePV.load(keyFile, stateFile, { signLogPath: null, persistAttempts: 1000, persistBackoffMs: 5 });
  t.teardown(() => patient.close());
  fs.renameSync(dataDir, away);
  let settled = false;
  const signing = patient.signVote(CHAIN, mkVote(patient, 1n, 0, SignedMsgType.Prevote, bid(1))).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 50));
  t.notOk(settled, 'no signature while the state cannot be saved');
  fs.renameSync(away, dataDir);
  const v = await signing;
  t.equal(v.signature.length, 64);
  t.equal(readState(stateFile).height, '1', 'the state was saved before the signature was returned');
});

t.test('concurrent sign calls are serialized: one wins, the conflicting one is refused', async (t) => {
  const { pv } = newPV(t);
  const rs = await Promise.allSettled([
    pv.signVote(CHAIN, mkVote(pv, 3n, 0, SignedMsgType.Prevote, bid(1))),
    pv.signVote(CHAIN, mkVote(pv, 3n, 0, SignedMsgType.Prevote, bid(2))),
  ]);
  t.equal(rs[0]!.status, 'fulfilled');
  t.equal(rs[1]!.status, 'rejected');
  t.equal(((rs[1] as PromiseRejectedResult).reason as Error).message, 'conflicting data');
});

t.test('key and state file formats; both type-name spellings load', async (t) => {
  const { keyFile, stateFile, pv } = newPV(t);
  const key = JSON.parse(fs.readFileSync(keyFile, 'utf8'));
  t.equal(key.address, Buffer.from(pv.address).toString('hex').toUpperCase());
  t.equal(key.pub_key.type, 'consensus/PubKeyEd25519');
  t.equal(key.priv_key.type, 'consensus/PrivKeyEd25519');
  t.equal(Buffer.from(key.priv_key.value, 'base64').length, 64);
  t.same(readState(stateFile), { height: '0', round: 0, step: 0 }, 'fresh state: no signature fields');
  t.equal((fs.statSync(keyFile).mode & 0o777).toString(8), '600');

  const upstream = JSON.stringify(privValidatorKeyJSON(pv.key, { pubKeyType: 'tendermint/PubKeyEd25519', privKeyType: 'tendermint/PrivKeyEd25519' }));
  t.same(parsePrivValidatorKey(upstream).pubKey, pv.pubKey.bytes, 'tendermint/ names accepted');
  t.throws(() => parsePrivValidatorKey(upstream.replace('tendermint/PrivKeyEd25519', 'tendermint/PrivKeySecp256k1')), { code: 'PRIVVAL_BAD_FILE' });
  const other = Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(1));
  const mismatched = { ...JSON.parse(upstream), pub_key: { type: 'tendermint/PubKeyEd25519', value: Buffer.from(other.pubKey).toString('base64') } };
  t.throws(() => parsePrivValidatorKey(JSON.stringify(mismatched)), /does not match/);

  const lss = parseLastSignState('{"height":"9","round":2,"step":3,"signature":"AAAA","signbytes":"0A0B"}');
  t.equal(lss.height, 9n);
  t.same(lss.signBytes, Uint8Array.from([10, 11]));

  t.throws(() => FilePV.generate(keyFile, stateFile), /already exists/, 'generate never overwrites a key');
  const loaded = FilePV.loadOrGenerate(keyFile, stateFile, { signLogPath: null });
  t.same(loaded.address, pv.address);
});

t.test('sign audit log: one fsynced line per returned signature', async (t) => {
  const dir = tmp(t);
  const log = path.join(dir, 'signs.log');
  const { pv } = newPV(t, { signLogPath: log });
  const v1 = await pv.signVote(CHAIN, mkVote(pv, 2n, 0, SignedMsgType.Prevote, bid(1)));
  await pv.signVote(CHAIN, mkVote(pv, 2n, 0, SignedMsgType.Prevote, bid(1), T0 + 1n)); // reuse
  await pv.signVote(CHAIN, mkVote(pv, 2n, 0, SignedMsgType.Precommit, bid(1)));
  await pv.signVote(CHAIN, mkVote(pv, 2n, 0, SignedMsgType.Precommit, bid(2))).catch(() => undefined); // refused: no line
  const lines = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(lines.length, 3);
  t.same(Object.keys(lines[0]), ['height', 'round', 'step', 'signbytes_hex']);
  t.same(lines[0], { height: '2', round: 0, step: 2, signbytes_hex: Buffer.from(voteSignBytes(CHAIN, v1)).toString('hex').toUpperCase() });
  t.equal(lines[1].signbytes_hex, lines[0].signbytes_hex, 'a reused signature logs the bytes actually signed');
  t.equal(lines[2].step, 3);

  // The environment variable turns it on too: src/config/env.ts reads it, the node passes it down.
  const envLog = path.join(dir, 'env.log');
  const { signLog } = readEnvSwitches({ CHAIND_SIGN_LOG: envLog });
  t.equal(signLog, envLog);
  t.equal(readEnvSwitches({ CHAIND_SIGN_LOG: '' }).signLog, null, 'empty: no log');
  const mpv = new MemoryPrivValidator(Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(3)), undefined, { signLogPath: signLog });
  await mpv.signProposal(CHAIN, mkProposal(1n, 0, bid(1)));
  mpv.close();
  t.equal(JSON.parse(fs.readFileSync(envLog, 'utf8')).step, 1);
});

t.test("a FilePV's fsyncs run on its writer thread, not the caller's; the state is on disk when the signature returns", async (t) => {
  const { createRequire, syncBuiltinESMExports } = await import('node:module');
  const cjsFs = createRequire(import.meta.url)('node:fs') as typeof fs;
  const logPath = path.join(tmp(t), 'sign.log');
  const { stateFile, pv } = newPV(t, { signLogPath: logPath });
  const orig = cjsFs.fsyncSync;
  let mainThreadFsyncs = 0;
  cjsFs.fsyncSync = (fd: number) => {
    mainThreadFsyncs++;
    orig(fd);
  };
  syncBuiltinESMExports();
  t.teardown(() => {
    cjsFs.fsyncSync = orig;
    syncBuiltinESMExports();
  });
  const v = await pv.signVote(CHAIN, mkVote(pv, 3n, 0, SignedMsgType.Prevote, bid(1)));
  t.equal(v.signature.length, 64);
  t.equal(mainThreadFsyncs, 0, 'no fsync on the calling thread');
  const onDisk = parseLastSignState(fs.readFileSync(stateFile, 'utf8'));
  t.equal(onDisk.height, 3n, 'the new state is on disk when signVote resolves');
  t.equal(onDisk.step, 2);
  t.equal(fs.readFileSync(logPath, 'utf8').trim().split('\n').length, 1, 'the audit line too');

  // Without its thread (closed), writes go on, on the calling thread.
  pv.close();
  await pv.signVote(CHAIN, mkVote(pv, 4n, 0, SignedMsgType.Prevote, bid(1)));
  t.ok(mainThreadFsyncs >= 1, 'the fallback writes on the calling thread');
  t.equal(parseLastSignState(fs.readFileSync(stateFile, 'utf8')).height, 4n);
});
