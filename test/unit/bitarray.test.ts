/**
 * Bit-array vectors from cometbft libs/bits/bit_array_test.go (TestSub, TestPickRandom,
 * TestBytes, TestEmptyFull, TestJSONMarshalUnmarshal, TestAnd, TestOr) and the string forms of
 * cometbft/cometbft:libs/bits/bit_array.go (`BA{4:xx_x}`).
 */
import t from 'tap';
import { BitArray } from '../../src/types/bitarray.js';

const empty16 = '________________';
const empty64 = empty16.repeat(4);
const full16 = 'xxxxxxxxxxxxxxxx';
const full64 = full16.repeat(4);

// JSON null stands for a nil bit array, as in the Go tests.
const fromJSON = (s: string): BitArray | null => (s === 'null' ? null : BitArray.fromString(JSON.parse(s)));
const toJSON = (b: BitArray | null): string => JSON.stringify(b === null ? null : b.toJSON());

function rand(bits: number, seed: number): BitArray {
  let x = seed;
  return BitArray.fromFn(bits, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 16) % 2 === 1;
  });
}

t.test('TestSub', async (t) => {
  const cases: [string, string, string][] = [
    ['null', 'null', 'null'],
    ['"x"', 'null', 'null'],
    ['null', '"x"', 'null'],
    ['"x"', '"x"', '"_"'],
    ['"xxxxxx"', '"x_x_x_"', '"_x_x_x"'],
    ['"x_x_x_"', '"xxxxxx"', '"______"'],
    ['"xxxxxx"', '"x_x_x_xxxx"', '"_x_x_x"'],
    ['"x_x_x_xxxx"', '"xxxxxx"', '"______xxxx"'],
    ['"xxxxxxxxxx"', '"x_x_x_"', '"_x_x_xxxxx"'],
    ['"x_x_x_"', '"xxxxxxxxxx"', '"______"'],
  ];
  for (const [a, b, want] of cases) {
    const A = fromJSON(a);
    const B = fromJSON(b);
    const got = A === null || B === null ? null : A.sub(B);
    t.equal(toJSON(got), want, `${a} - ${b}`);
  }
  // Across word boundaries.
  const a = BitArray.fromString('x'.repeat(100));
  const b = BitArray.fromString('_x'.repeat(35));
  t.equal(a.sub(b).bitsString(), 'x_'.repeat(35) + 'x'.repeat(30));
});

t.test('TestPickRandom', async (t) => {
  const cases: [string, boolean][] = [
    ['"x"', true],
    [`"${empty16}"`, false],
    [`"x${empty16}"`, true],
    [`"${empty16}x"`, true],
    [`"x${empty16}x"`, true],
    [`"${empty64}"`, false],
    [`"x${empty64}"`, true],
    [`"${empty64}x"`, true],
    [`"x${empty64}x"`, true],
    [`"${full16}"`, true],
    [`"${full64}"`, true],
  ];
  for (const [s, ok] of cases) {
    const ba = fromJSON(s)!;
    const idx = ba.pickRandom();
    t.equal(idx !== null, ok, s);
    if (idx !== null) t.ok(ba.get(idx), `picked a set bit in ${s}`);
  }
  const ba = BitArray.fromString(`x${empty64}x`);
  t.equal(ba.pickRandom(() => 0), 0);
  t.equal(ba.pickRandom(() => 0.99), 65);
});

t.test('TestBytes', async (t) => {
  const hex = (b: BitArray) => Buffer.from(b.bytes()).toString('hex');
  let ba = new BitArray(4);
  ba.setIndex(0, true);
  t.equal(hex(ba), '01');
  ba.setIndex(3, true);
  t.equal(hex(ba), '09');
  ba = new BitArray(9);
  t.equal(hex(ba), '0000');
  ba.setIndex(7, true);
  t.equal(hex(ba), '8000');
  ba.setIndex(8, true);
  t.equal(hex(ba), '8001');
  ba = new BitArray(16);
  t.equal(hex(ba), '0000');
  ba.setIndex(7, true);
  t.equal(hex(ba), '8000');
  ba.setIndex(8, true);
  t.equal(hex(ba), '8001');
  ba.setIndex(9, true);
  t.equal(hex(ba), '8003');
  t.notOk(ba.setIndex(16, true), 'out of range');
  t.notOk(ba.setIndex(-1, true), 'negative');
});

t.test('TestEmptyFull', async (t) => {
  for (const n of [47, 123]) {
    const ba = new BitArray(n);
    t.ok(ba.isEmpty());
    t.notOk(ba.isFull());
    for (let i = 0; i < n; i++) ba.setIndex(i, true);
    t.ok(ba.isFull());
    t.notOk(ba.isEmpty());
    t.equal(ba.countTrue(), n);
    t.ok(ba.not().isEmpty(), 'not() of a full array is empty (no stray tail bits)');
  }
  t.ok(new BitArray(0).isFull(), 'nil array counts as full');
});

t.test('TestJSONMarshalUnmarshal and String', async (t) => {
  const ba4 = new BitArray(5);
  ba4.setIndex(0, true);
  ba4.setIndex(1, true);
  const one = new BitArray(1);
  one.setIndex(0, true);
  const cases: [BitArray, string, string][] = [
    [new BitArray(0), 'null', 'nil-BitArray'],
    [new BitArray(1), '"_"', 'BA{1:_}'],
    [one, '"x"', 'BA{1:x}'],
    [ba4, '"xx___"', 'BA{5:xx___}'],
  ];
  for (const [ba, json, str] of cases) {
    t.equal(JSON.stringify(ba), json);
    t.equal(ba.toString(), str);
    if (ba.size > 0) {
      const back = BitArray.fromString(JSON.parse(json));
      t.ok(back.equals(ba));
      t.ok(BitArray.fromString(str).equals(ba), 'String() form parses too');
    }
  }
  const b = BitArray.fromString('xx_x');
  t.equal(b.toString(), 'BA{4:xx_x}');
  t.equal(JSON.stringify({ prevotes_bit_array: b }), '{"prevotes_bit_array":"xx_x"}');
  t.throws(() => BitArray.fromString('xx-x'));
  t.throws(() => BitArray.fromString('BA{5:xx_x}'));
  t.equal(BitArray.fromString('').size, 0);
});

t.test('TestAnd / TestOr / Not / copy / update', async (t) => {
  const a = rand(51, 1);
  const b = rand(31, 2);
  const and = a.and(b);
  t.equal(and.size, 31, 'And has the smaller size');
  for (let i = 0; i < 31; i++) t.equal(and.get(i), a.get(i) && b.get(i));
  const c = rand(57, 3);
  const or = c.or(b);
  t.equal(or.size, 57, 'Or has the larger size');
  for (let i = 0; i < 57; i++) t.equal(or.get(i), c.get(i) || b.get(i));
  const not = c.not();
  for (let i = 0; i < 57; i++) t.equal(not.get(i), !c.get(i));
  t.equal(not.countTrue() + c.countTrue(), 57);
  const cp = c.copy();
  cp.set(0, !cp.get(0));
  t.not(cp.get(0), c.get(0), 'copy is independent');
  const u = new BitArray(40);
  u.update(c);
  for (let i = 0; i < 40; i++) t.equal(u.get(i), c.get(i));
  t.same(c.trueIndices(), Array.from({ length: 57 }, (_, i) => i).filter((i) => c.get(i)));
});

t.test('proto elems round trip (uint64 words)', async (t) => {
  const ba = BitArray.fromString('x' + '_'.repeat(62) + 'xx' + '_'.repeat(5) + 'x');
  const elems = ba.elems();
  t.equal(elems.length, 2);
  t.equal(elems[0], (1n << 63n) | 1n);
  t.equal(elems[1], 1n | (1n << 6n), "bits 64 and 70");
  t.ok(BitArray.fromElems(ba.size, elems).equals(ba));
  // Bits past the size in the proto form are ignored.
  t.equal(BitArray.fromElems(3, [0xffn]).bitsString(), 'xxx');
});
