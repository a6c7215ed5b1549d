/**
 * Validator-set vectors from cometbft types/validator_set_test.go: TestProposerSelection1/2/3,
 * TestAvgProposerPriority, TestAveragingInIncrementProposerPriority(WithVotingPower),
 * TestSafeAddClip/TestSafeSubClip, TestEmptySet, TestUpdatesForNewValidatorSet,
 * TestValSetUpdatesDuplicateEntries/Overflows/OtherErrors/BasicTestsExecute/
 * OrderIndependenceTestsExecute, TestValSetUpdatePriorityOrderTests and
 * TestValSetUpdateOverflowRelated; plus the real single-validator set of a v0.38 kvstore chain.
 */
import t from 'tap';
import {
  MAX_TOTAL_VOTING_POWER,
  ValidatorSet,
  ValidatorSetError,
  compareByVotingPower,
  newValidator,
  safeAddClip,
  safeSubClip,
} from '../../src/types/validator_set.js';
import { Ed25519PrivKey } from '../../src/crypto/ed25519.js';
import type { Validator } from '../../src/types/validator.js';

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
const enc = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const NO_KEY = { type: 'ed25519' as const, bytes: new Uint8Array(32) };

/** newValidator(address, power) of the Go tests: an arbitrary address and no real key. */
function val(address: Uint8Array | string, power: bigint, priority = 0n): Validator {
  return { address: typeof address === 'string' ? enc(address) : address, pubKey: NO_KEY, votingPower: power, proposerPriority: priority };
}
type TestVal = [string, bigint];
const list = (tv: TestVal[]) => tv.map(([n, p]) => val(n, p));
const names = (vs: ValidatorSet): TestVal[] => vs.validators.map((v) => [Buffer.from(v.address).toString(), v.votingPower]);
const testValSet = (n: number, power: bigint): TestVal[] => Array.from({ length: n }, (_, i) => [`v${i + 1}`, power]);
const snapshot = (vs: ValidatorSet) =>
  JSON.stringify({ v: vs.validators.map((v) => [hex(v.address), String(v.votingPower), String(v.proposerPriority)]), p: vs.isEmpty() ? null : hex(vs.proposer.address) });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function verifyValidatorSet(t: { ok: (...args: any[]) => boolean }, vs: ValidatorSet, msg = ''): void {
  const n = BigInt(vs.size);
  let sum = 0n;
  for (const v of vs.validators) sum = safeAddClip(sum, v.proposerPriority);
  t.ok(sum < n && sum > -n, `priorities centered ${msg}: sum ${sum}`);
  let max = MIN_INT64;
  let min = MAX_INT64;
  for (const v of vs.validators) {
    if (v.proposerPriority > max) max = v.proposerPriority;
    if (v.proposerPriority < min) min = v.proposerPriority;
  }
  t.ok(max - min <= 2n * vs.totalVotingPower(), `priorities scaled ${msg}`);
}

// Deterministic PRNG for the randomized Go tests.
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let x = seed;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('TestProposerSelection1', async (t) => {
  const vset = new ValidatorSet([val('foo', 1000n), val('bar', 300n), val('baz', 330n)]);
  const proposers: string[] = [];
  for (let i = 0; i < 99; i++) {
    proposers.push(Buffer.from(vset.proposer.address).toString());
    vset.incrementProposerPriority(1);
  }
  const expected =
    'foo baz foo bar foo foo baz foo bar foo foo baz foo foo bar foo baz foo foo bar' +
    ' foo foo baz foo bar foo foo baz foo bar foo foo baz foo foo bar foo baz foo foo bar' +
    ' foo baz foo foo bar foo baz foo foo bar foo baz foo foo foo baz bar foo foo foo baz' +
    ' foo bar foo foo baz foo bar foo foo baz foo bar foo foo baz foo bar foo foo baz foo' +
    ' foo bar foo baz foo foo bar foo baz foo foo bar foo baz foo foo';
  t.equal(proposers.join(' '), expected);
});

t.test('TestProposerSelection2', async (t) => {
  const addr = (i: number) => Uint8Array.from([...new Array(19).fill(0), i]);
  let vals = [val(addr(0), 100n), val(addr(1), 100n), val(addr(2), 100n)];
  let vs = new ValidatorSet(vals);
  for (let i = 0; i < 15; i++) {
    t.equal(hex(vs.proposer.address), hex(addr(i % 3)), `equal power goes in address order (${i})`);
    vs.incrementProposerPriority(1);
  }
  vals = [val(addr(0), 100n), val(addr(1), 100n), val(addr(2), 400n)];
  vs = new ValidatorSet(vals);
  t.equal(hex(vs.proposer.address), hex(addr(2)), 'highest power proposes first');
  vs.incrementProposerPriority(1);
  t.equal(hex(vs.proposer.address), hex(addr(0)), 'then the smallest address');

  vals = [val(addr(0), 100n), val(addr(1), 100n), val(addr(2), 401n)];
  vs = new ValidatorSet(vals);
  t.equal(hex(vs.proposer.address), hex(addr(2)));
  vs.incrementProposerPriority(1);
  t.equal(hex(vs.proposer.address), hex(addr(2)), 'enough power to propose twice in a row');
  vs.incrementProposerPriority(1);
  t.equal(hex(vs.proposer.address), hex(addr(0)));

  vs = new ValidatorSet([val(addr(0), 4n), val(addr(1), 5n), val(addr(2), 3n)]);
  const counts = [0, 0, 0];
  for (let i = 0; i < 120; i++) {
    counts[vs.proposer.address[19]!]!++;
    vs.incrementProposerPriority(1);
  }
  t.same(counts, [40, 50, 30], 'proposer counts proportional to power');
});

t.test('TestProposerSelection3: order kept across multi-step increments and store round trips', async (t) => {
  const keys = [1, 2, 3, 4].map((i) => Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(i)));
  const vals = keys.map((k) => newValidator({ type: 'ed25519', bytes: k.pubKey }, 1n));
  let vset = new ValidatorSet(vals);
  const order: string[] = [];
  for (let i = 0; i < 4; i++) {
    order.push(hex(vset.proposer.address));
    vset.incrementProposerPriority(1);
  }
  const rnd = prng(7);
  let j = 0;
  let ok = true;
  for (let i = 0; i < 2000; i++) {
    const got = hex(vset.proposer.address);
    if (got !== order[j % 4]) ok = false;
    vset = ValidatorSet.fromBytes(vset.toBytes());
    if (hex(vset.proposer.address) !== got) ok = false;
    let times = 1;
    const mod = Math.floor(rnd() * 5) + 1;
    if (Math.floor(rnd() * 1000) % mod > 0) times = Math.floor(rnd() * 4) + 1;
    vset.incrementProposerPriority(times);
    j += times;
  }
  t.ok(ok, 'proposers cycle in the same order for 2000 steps');
});

t.test('TestAvgProposerPriority', async (t) => {
  const cases: [bigint[], bigint][] = [
    [[0n, 0n, 0n], 0n],
    [[MAX_INT64, 0n, 0n], MAX_INT64 / 3n],
    [[MAX_INT64, 0n], MAX_INT64 / 2n],
    [[MAX_INT64, MAX_INT64], MAX_INT64],
    [[MIN_INT64, MIN_INT64], MIN_INT64],
    // Euclidean: floor for a negative sum (big.Int Div), where BigInt `/` would truncate.
    [[-1n, 0n, 0n], -1n],
    [[-4n, 0n, 0n], -2n],
  ];
  cases.forEach(([prios, want], i) => {
    const vs = ValidatorSet.restore(prios.map((p, k) => val(`v${k}`, 0n, p)), null);
    t.equal(vs.avgProposerPriority(), want, `case ${i}`);
  });
});

t.test('TestAveragingInIncrementProposerPriority', async (t) => {
  const cases: [bigint[], number, bigint][] = [
    [[1n, 2n, 3n], 1, 2n],
    [[10n, -10n, 1n], 11, 0n],
    [[100n, -10n, 1n], 1, 91n / 3n],
  ];
  cases.forEach(([prios, times, avg], i) => {
    const vs = ValidatorSet.restore([val('a', 0n, prios[0]!), val('b', 0n, prios[1]!), val('c', 0n, prios[2]!)], null);
    const next = vs.copyIncrementProposerPriority(times);
    for (const v of vs.validators) {
      t.equal(next.getByAddress(v.address)!.validator.proposerPriority, v.proposerPriority - avg, `case ${i} ${Buffer.from(v.address)}`);
    }
  });
});

t.test('TestAveragingInIncrementProposerPriorityWithVotingPower', async (t) => {
  const vp0 = 10n;
  const vp1 = 1n;
  const vp2 = 1n;
  const total = vp0 + vp1 + vp2;
  const avg = (vp0 + vp1 + vp2 - total) / 3n;
  const base = () => ValidatorSet.restore([val(Uint8Array.of(0), vp0), val(Uint8Array.of(1), vp1), val(Uint8Array.of(2), vp2)], null);
  const cases: [bigint[], number, number][] = [
    [[0n + vp0 - total - avg, 0n + vp1, 0n + vp2], 1, 0],
    [[0n + vp0 - total + vp0 - total - avg, 0n + vp1 + vp1, 0n + vp2 + vp2], 2, 0],
    [[0n + 3n * (vp0 - total) - avg, 0n + 3n * vp1, 0n + 3n * vp2], 3, 0],
    [[0n + 4n * (vp0 - total), 0n + 4n * vp1, 0n + 4n * vp2], 4, 0],
    [[0n + 4n * (vp0 - total) + vp0, 0n + 5n * vp1 - total, 0n + 5n * vp2], 5, 1],
    [[0n + 6n * vp0 - 5n * total, 0n + 6n * vp1 - total, 0n + 6n * vp2], 6, 0],
    [[0n + 7n * vp0 - 6n * total, 0n + 7n * vp1 - total, 0n + 7n * vp2], 7, 0],
    [[0n + 8n * vp0 - 7n * total, 0n + 8n * vp1 - total, 0n + 8n * vp2], 8, 0],
    [[0n + 9n * vp0 - 7n * total, 0n + 9n * vp1 - total, 0n + 9n * vp2 - total], 9, 2],
    [[0n + 10n * vp0 - 8n * total, 0n + 10n * vp1 - total, 0n + 10n * vp2 - total], 10, 0],
    [[0n + 11n * vp0 - 9n * total, 0n + 11n * vp1 - total, 0n + 11n * vp2 - total], 11, 0],
  ];
  cases.forEach(([want, times, proposer], i) => {
    const vs = base();
    vs.incrementProposerPriority(times);
    t.equal(vs.proposer.address[0], proposer, `case ${i} proposer`);
    t.same(vs.validators.map((v) => v.proposerPriority), want, `case ${i} priorities`);
  });
});

t.test('safeAddClip / safeSubClip', async (t) => {
  t.equal(safeAddClip(MAX_INT64, 10n), MAX_INT64);
  t.equal(safeAddClip(MAX_INT64, MAX_INT64), MAX_INT64);
  t.equal(safeAddClip(MIN_INT64, -10n), MIN_INT64);
  t.equal(safeSubClip(MIN_INT64, 10n), MIN_INT64);
  t.equal(safeSubClip(MIN_INT64, MIN_INT64), 0n);
  t.equal(safeSubClip(MIN_INT64, MAX_INT64), MIN_INT64);
  t.equal(safeSubClip(MAX_INT64, -10n), MAX_INT64);
});

t.test('TestEmptySet and empty-set accessors', async (t) => {
  const vs = new ValidatorSet([]);
  t.ok(vs.isEmpty());
  t.equal(vs.size, 0);
  t.equal(vs.totalVotingPower(), 0n);
  t.equal(hex(vs.hash()), 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855');
  t.equal(vs.proposerOrNull(), null);
  t.throws(() => vs.proposer, ValidatorSetError);
  t.throws(() => vs.incrementProposerPriority(1));
  t.throws(() => vs.rescalePriorities(100n));
  t.equal(vs.getByAddress(enc('some val')), null);
  t.throws(() => vs.getByIndex(0), RangeError);
  t.throws(() => vs.getByIndex(-100), RangeError);
  t.equal(vs.copy().size, 0);
  // Add to the empty set.
  vs.updateWithChangeSet([val('v1', 100n), val('v2', 100n)]);
  verifyValidatorSet(t, vs);
  t.equal(vs.size, 2);
  // Deleting every validator is refused, and so is deleting from an empty set.
  const before = snapshot(vs);
  t.throws(() => vs.updateWithChangeSet([val('v1', 0n), val('v2', 0n)]), ValidatorSetError);
  t.equal(snapshot(vs), before);
  t.throws(() => new ValidatorSet([]).updateWithChangeSet([val('v1', 0n), val('v2', 0n)]), ValidatorSetError);
});

t.test('TestUpdatesForNewValidatorSet', async (t) => {
  verifyValidatorSet(t, new ValidatorSet([val('v1', 100n), val('v2', 100n)]));
  t.throws(() => new ValidatorSet([val('v1', 100n), val('v1', 123n), val('v1', 234n)]), ValidatorSetError, 'duplicates');
  t.throws(() => new ValidatorSet([val('v1', 0n), val('v2', 22n), val('v3', 33n)]), ValidatorSetError, 'power 0');
  t.throws(() => new ValidatorSet([val('v1', 10n), val('v2', -20n), val('v3', 30n)]), ValidatorSetError, 'negative power');
  // NewValidatorSet ignores incoming priorities and copies its input.
  const input = [val('v1', 10n, 12345n), val('v2', 20n, -999n)];
  const a = new ValidatorSet(input);
  const b = new ValidatorSet([val('v1', 10n), val('v2', 20n)]);
  t.equal(snapshot(a), snapshot(b));
  input[0]!.votingPower = 77n;
  t.equal(a.getByAddress(enc('v1'))!.validator.votingPower, 10n);
});

t.test('change sets that must fail leave the set unchanged', async (t) => {
  const M = MAX_TOTAL_VOTING_POWER;
  const cases: [TestVal[], TestVal[]][] = [
    // TestValSetUpdatesDuplicateEntries
    [testValSet(2, 10n), [['v1', 11n], ['v1', 22n]]],
    [testValSet(2, 10n), [['v2', 11n], ['v2', 22n]]],
    [testValSet(2, 10n), [['v1', 11n], ['v2', 22n], ['v1', 12n]]],
    [testValSet(3, 10n), [['v1', 11n], ['v3', 22n], ['v1', 12n]]],
    [testValSet(2, 10n), [['v1', 0n], ['v1', 0n]]],
    [testValSet(2, 10n), [['v2', 0n], ['v2', 0n]]],
    [testValSet(2, 10n), [['v1', 0n], ['v2', 0n], ['v1', 0n]]],
    [testValSet(3, 10n), [['v1', 0n], ['v3', 0n], ['v1', 0n]]],
    [testValSet(2, 10n), [['v1', 0n], ['v2', 20n], ['v1', 30n]]],
    [testValSet(2, 10n), [['v1', 0n], ['v2', 20n], ['v2', 30n], ['v1', 0n]]],
    [testValSet(3, 10n), [['v1', 0n], ['v3', 5n], ['v2', 20n], ['v2', 30n], ['v1', 0n]]],
    // TestValSetUpdatesOverflows
    [testValSet(2, 10n), [['v1', MAX_INT64]]],
    [testValSet(2, 10n), [['v2', MAX_INT64]]],
    [testValSet(1, M), [['v2', MAX_INT64]]],
    [testValSet(1, M - 1n), [['v2', 5n]]],
    [testValSet(2, M / 3n), [['v3', M / 2n]]],
    [testValSet(1, M), [['v2', M]]],
    // TestValSetUpdatesOtherErrors
    [testValSet(2, 10n), [['v1', -123n]]],
    [testValSet(2, 10n), [['v2', -123n]]],
    [testValSet(2, 10n), [['v3', 0n]]],
    [[['v1', 10n], ['v2', 20n], ['v3', 30n]], [['v1', 0n], ['v2', 0n], ['v3', 0n]]],
  ];
  cases.forEach(([start, updates], i) => {
    const vs = new ValidatorSet(list(start));
    const before = snapshot(vs);
    const changes = list(updates);
    const changesBefore = JSON.stringify(changes.map((c) => [hex(c.address), String(c.votingPower)]));
    t.throws(() => vs.updateWithChangeSet(changes), ValidatorSetError, `case ${i} fails`);
    t.equal(snapshot(vs), before, `case ${i} leaves the set unchanged`);
    t.equal(JSON.stringify(changes.map((c) => [hex(c.address), String(c.votingPower)])), changesBefore, `case ${i} leaves the changes unchanged`);
  });
});

t.test('TestValSetUpdatesBasicTestsExecute', async (t) => {
  const cases: [TestVal[], TestVal[], TestVal[]][] = [
    [testValSet(2, 10n), [], testValSet(2, 10n)],
    [testValSet(2, 10n), [['v2', 22n], ['v1', 11n]], [['v2', 22n], ['v1', 11n]]],
    [[['v2', 20n], ['v1', 10n]], [['v4', 40n], ['v3', 30n]], [['v4', 40n], ['v3', 30n], ['v2', 20n], ['v1', 10n]]],
    [[['v3', 20n], ['v1', 10n]], [['v2', 30n]], [['v2', 30n], ['v3', 20n], ['v1', 10n]]],
    [[['v3', 20n], ['v2', 10n]], [['v1', 30n]], [['v1', 30n], ['v3', 20n], ['v2', 10n]]],
    [[['v3', 30n], ['v2', 20n], ['v1', 10n]], [['v2', 0n]], [['v3', 30n], ['v1', 10n]]],
  ];
  cases.forEach(([start, updates, expected], i) => {
    const vs = new ValidatorSet(list(start));
    const changes = list(updates);
    vs.updateWithChangeSet(changes);
    if (changes.length > 0) {
      const snap = names(vs);
      changes[0]!.votingPower++;
      t.same(names(vs), snap, `case ${i}: the set holds copies of the changes`);
    }
    t.same(names(vs), expected, `case ${i}`);
    verifyValidatorSet(t, vs, `case ${i}`);
  });
});

t.test('TestValSetUpdatesOrderIndependenceTestsExecute', async (t) => {
  const cases: [TestVal[], TestVal[]][] = [
    [[['v4', 40n], ['v3', 30n], ['v2', 10n], ['v1', 10n]], [['v4', 44n], ['v3', 33n], ['v2', 22n], ['v1', 11n]]],
    [[['v2', 20n], ['v1', 10n]], [['v3', 30n], ['v4', 40n], ['v5', 50n], ['v6', 60n]]],
    [[['v4', 40n], ['v3', 30n], ['v2', 20n], ['v1', 10n]], [['v1', 0n], ['v3', 0n], ['v4', 0n]]],
    [[['v4', 40n], ['v3', 30n], ['v2', 20n], ['v1', 10n]], [['v1', 0n], ['v3', 0n], ['v2', 22n], ['v5', 50n], ['v4', 44n]]],
  ];
  const rnd = prng(3);
  cases.forEach(([start, updates], i) => {
    const vs = new ValidatorSet(list(start));
    const exp = vs.copy();
    exp.updateWithChangeSet(list(updates));
    for (let p = 0; p < Math.min(20, updates.length * updates.length); p++) {
      const perm = [...updates].sort(() => rnd() - 0.5);
      const c = vs.copy();
      c.updateWithChangeSet(list(perm));
      verifyValidatorSet(t, c, `case ${i} perm ${p}`);
      t.equal(snapshot(c).replace(/"p":.*$/, ''), snapshot(exp).replace(/"p":.*$/, ''), `case ${i} perm ${p}`);
    }
  });
});

t.test('TestValSetUpdatePriorityOrderTests', async (t) => {
  const rnd = prng(11);
  const cases: { start: TestVal[]; deleted: TestVal[]; updated: TestVal[]; added: TestVal[]; expected: TestVal[] }[] = [
    { start: [['v3', 1000n], ['v1', 1n], ['v2', 1n]], deleted: [['v3', 0n]], updated: [], added: [], expected: [['v1', 1n], ['v2', 1n]] },
    { start: [['v3', 1000n], ['v2', 10n], ['v1', 1n]], deleted: [['v3', 0n]], updated: [], added: [], expected: [['v2', 10n], ['v1', 1n]] },
    {
      start: [['v3', 1000n], ['v2', 2n], ['v1', 1n]],
      deleted: [['v3', 0n]],
      updated: [['v2', 1n]],
      added: [['v5', 50n], ['v4', 40n]],
      expected: [['v5', 50n], ['v4', 40n], ['v1', 1n], ['v2', 1n]],
    },
  ];
  // randTestVSetCfg(nBase, nAddMax) equivalents with a seeded generator.
  for (const [nBase, nAddMax] of [[100, 10], [10, 100], [100, 100]] as const) {
    const start: TestVal[] = Array.from({ length: nBase }, (_, i) => [`v${i + 1}`, BigInt(Math.floor(rnd() * 10000) + 1)]);
    const nOld = Math.floor(rnd() * nBase) + 1;
    const nDel = Math.floor(rnd() * (nBase - nOld));
    const nAdd = Math.floor(rnd() * nAddMax) + 1;
    const updated: TestVal[] = start.slice(0, nOld).map(([n]) => [n, BigInt(Math.floor(rnd() * 10000) + 1)]);
    const deleted: TestVal[] = start.slice(nOld, nOld + nDel).map(([n]) => [n, 0n]);
    const kept = start.slice(nOld + nDel);
    const added: TestVal[] = Array.from({ length: nAdd }, (_, i) => [`v${nBase + i + 1}`, BigInt(Math.floor(rnd() * 10000) + 1)]);
    const expected = [...updated, ...kept, ...added]
      .map(([n, p]) => val(n, p))
      .sort(compareByVotingPower)
      .map((v): TestVal => [Buffer.from(v.address).toString(), v.votingPower]);
    cases.push({ start, deleted, updated, added: added.map((a) => a).sort((a, b) => compareByVotingPower(val(a[0], a[1]), val(b[0], b[1]))), expected });
  }
  cases.forEach((c, i) => {
    const vs = new ValidatorSet(list(c.start));
    verifyValidatorSet(t, vs, `case ${i} start`);
    vs.incrementProposerPriority(Math.floor(rnd() * 5000) + 1);
    vs.updateWithChangeSet(list([...c.added, ...c.updated, ...c.deleted]));
    t.same(names(vs), c.expected, `case ${i} order`);
    verifyValidatorSet(t, vs, `case ${i} after`);
    if (c.added.length > 0) {
      const byPrio = [...vs.validators].sort((a, b) => (a.proposerPriority < b.proposerPriority ? -1 : a.proposerPriority > b.proposerPriority ? 1 : 0));
      const lowest = byPrio.slice(0, c.added.length).sort(compareByVotingPower);
      t.same(lowest.map((v): TestVal => [Buffer.from(v.address).toString(), v.votingPower]), c.added, `case ${i}: new validators have the lowest priority`);
      t.ok(lowest.every((v) => v.proposerPriority === lowest[0]!.proposerPriority), `case ${i}: and all the same`);
    }
  });
});

t.test('TestValSetUpdateOverflowRelated', async (t) => {
  const M = MAX_TOTAL_VOTING_POWER;
  const cases: { name: string; start: TestVal[]; changes: TestVal[]; expected: TestVal[]; err: boolean }[] = [
    { name: '1 updates', start: [['v2', M - 1n], ['v1', 1n]], changes: [['v1', M - 1n], ['v2', 1n]], expected: [['v1', M - 1n], ['v2', 1n]], err: false },
    {
      name: '2 decreases applied first',
      start: [['v2', M - 1n], ['v1', 1n]],
      changes: [['v1', M / 2n - 1n], ['v2', M / 2n]],
      expected: [['v2', M / 2n], ['v1', M / 2n - 1n]],
      err: false,
    },
    {
      name: '3 deletes',
      start: [['v1', M - 2n], ['v2', 1n], ['v3', 1n]],
      changes: [['v4', M - 2n], ['v1', 0n]],
      expected: [['v4', M - 2n], ['v2', 1n], ['v3', 1n]],
      err: false,
    },
    {
      name: '4 adds, updates and deletes',
      start: [['v1', M / 4n], ['v2', M / 4n], ['v3', M / 4n], ['v4', M / 4n]],
      changes: [['v5', 3n], ['v1', M / 2n - 2n], ['v3', M / 2n - 3n], ['v4', 2n], ['v2', 0n]],
      expected: [['v1', M / 2n - 2n], ['v3', M / 2n - 3n], ['v5', 3n], ['v4', 2n]],
      err: false,
    },
    {
      name: '5 overflow prevented',
      start: testValSet(9, 1n),
      changes: [...testValSet(8, M), ['v9', 8n]],
      expected: testValSet(9, 1n),
      err: true,
    },
  ];
  for (const c of cases) {
    const vs = new ValidatorSet(list(c.start));
    verifyValidatorSet(t, vs, c.name);
    if (c.err) t.throws(() => vs.updateWithChangeSet(list(c.changes)), { code: 'VALSET_TOTAL_POWER_OVERFLOW' }, c.name);
    else vs.updateWithChangeSet(list(c.changes));
    t.same(names(vs), c.expected, c.name);
    verifyValidatorSet(t, vs, c.name);
  }
});

t.test('new validators start at -(P + P>>3) before centering', async (t) => {
  // One validator of power 10 at priority 0 after centering; add one of power 30: P = 40, the new
  // one starts at -45; centering shifts both by floor((0 - 45)/2) = -23.
  const vs = ValidatorSet.restore([val('a', 10n, 0n)], enc('a'));
  vs.updateWithChangeSet([val('b', 30n)]);
  t.same(names(vs), [['b', 30n], ['a', 10n]]);
  t.same(vs.validators.map((v) => v.proposerPriority), [-45n + 23n, 0n + 23n]);
  // An existing validator keeps its priority on a power change.
  const vs2 = ValidatorSet.restore([val('a', 10n, 7n), val('b', 10n, -7n)], enc('a'));
  vs2.updateWithChangeSet([val('a', 20n)]);
  t.same(vs2.validators.map((v) => [Buffer.from(v.address).toString(), v.votingPower, v.proposerPriority]), [['a', 20n, 7n], ['b', 10n, -7n]]);
});

t.test('real v0.38 single-validator set, ABCI updates, copies and storage', async (t) => {
  const pubKey = { type: 'ed25519' as const, bytes: Uint8Array.from(Buffer.from('bNNlGls5R25wC3Sd8720F/3+7IZBhXcD22MNFtPk/v0=', 'base64')) };
  const vs = new ValidatorSet([{ pubKey, power: 10n }]);
  t.equal(hex(vs.hash()), '33415EFFCEDA5BD0A3A443A727457D9F7B9E38389BF27A936FEDF749A7B7566E');
  t.equal(hex(vs.proposer.address), '2DD9F44FD9067555C322243C3C913BA7B51D2BE0');
  t.equal(vs.totalVotingPower(), 10n);
  t.equal(vs.getByIndex(0).votingPower, 10n);
  t.equal(vs.getByAddress(vs.proposer.address)!.index, 0);
  t.equal(vs.votingPowerOf([vs.proposer.address, vs.proposer.address, enc('nobody')]), 10n);

  const back = ValidatorSet.fromBytes(vs.toBytes());
  t.equal(snapshot(back), snapshot(vs));
  t.equal(hex(back.hash()), hex(vs.hash()));

  // A copy is independent.
  const k2 = Ed25519PrivKey.fromSeed(new Uint8Array(32).fill(9));
  const c = vs.copy();
  c.updateWithChangeSet([{ pubKey: { type: 'ed25519', bytes: k2.pubKey }, power: 30n }]);
  c.incrementProposerPriority(1);
  t.equal(vs.size, 1);
  t.equal(c.size, 2);
  t.equal(hex(c.validators[0]!.address), hex(k2.address));
  // The newcomer starts at -(40 + 5) = -45 against the old validator's 0; centering by
  // floor(-45/2) = -23 gives 23 and -22; one round adds power (33, 8) and the old validator
  // proposes: 33 - 40 = -7.
  t.equal(hex(c.proposer.address), '2DD9F44FD9067555C322243C3C913BA7B51D2BE0');
  t.same(c.validators.map((v) => v.proposerPriority), [8n, -7n]);
  const c2 = c.copyIncrementProposerPriority(3);
  t.not(snapshot(c2), snapshot(c));
  t.throws(() => ValidatorSet.restore(vs.validators, enc('not-a-member')), { code: 'VALSET_PROPOSER_NOT_IN_SET' });
  t.throws(() => vs.incrementProposerPriority(0));
});
