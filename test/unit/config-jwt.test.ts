/** HS256 JWTs over config/jwt.hex: sign, verify, reject. */
import t from 'tap';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatJwtSecret, generateJwtSecret, parseJwtSecret, readJwtSecret, signJwt, verifyJwt } from '../../src/config/jwt.js';

const secret = new Uint8Array(32).fill(7);
const b64u = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** An independently built token (node:crypto directly), to check interoperability. */
function handMade(header: unknown, claims: unknown, key: Uint8Array = secret): string {
  const body = `${b64u(header)}.${b64u(claims)}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

t.test('sign: header, claims and signature', async (t) => {
  const token = signJwt(secret, { now: 1000, ttlSeconds: 3600 });
  const [h, p, s] = token.split('.');
  t.same(JSON.parse(Buffer.from(h!, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
  t.same(JSON.parse(Buffer.from(p!, 'base64url').toString()), { iat: 1000, exp: 4600 });
  t.equal(token, handMade({ alg: 'HS256', typ: 'JWT' }, { iat: 1000, exp: 4600 }));
  t.ok(s && /^[A-Za-z0-9_-]{43}$/.test(s));
  const extra = signJwt(secret, { now: 1000, claims: { iat: 1, sub: 'x' } });
  t.same(verifyJwt(extra, secret, { now: 1000 }), { ok: true, claims: { sub: 'x', iat: 1000, exp: 4600 } }, 'extra claims cannot override iat/exp');
});

t.test('verify', async (t) => {
  const token = signJwt(secret, { now: 1000, ttlSeconds: 60 });
  const rows: Array<[string, string, Uint8Array, number, string | true]> = [
    ['valid', token, secret, 1000, true],
    ['valid until exp', token, secret, 1059, true],
    ['expired at exp', token, secret, 1060, 'JWT_EXPIRED'],
    ['wrong secret', token, new Uint8Array(32).fill(8), 1000, 'JWT_SIGNATURE'],
    ['tampered claims', token.split('.').map((x, i) => (i === 1 ? b64u({ iat: 1000, exp: 99999 }) : x)).join('.'), secret, 1000, 'JWT_SIGNATURE'],
    ['alg none', handMade({ alg: 'none' }, { iat: 1000 }), secret, 1000, 'JWT_ALGORITHM'],
    ['alg HS512', handMade({ alg: 'HS512' }, { iat: 1000 }), secret, 1000, 'JWT_ALGORITHM'],
    ['two parts', 'a.b', secret, 1000, 'JWT_MALFORMED'],
    ['garbage header', 'x!.y.z', secret, 1000, 'JWT_MALFORMED'],
    ['no iat', handMade({ alg: 'HS256' }, { exp: 2000 }), secret, 1000, 'JWT_IAT'],
    ['iat in the future', handMade({ alg: 'HS256' }, { iat: 1061, exp: 5000 }), secret, 1000, 'JWT_IAT'],
    ['iat slightly ahead is fine', handMade({ alg: 'HS256' }, { iat: 1060, exp: 5000 }), secret, 1000, true],
    ['no exp, fresh iat (geth style)', handMade({ alg: 'HS256', typ: 'JWT' }, { iat: 970 }), secret, 1000, true],
    ['no exp, stale iat', handMade({ alg: 'HS256' }, { iat: 900 }), secret, 1000, 'JWT_IAT'],
    ['claims not an object', handMade({ alg: 'HS256' }, [1]), secret, 1000, 'JWT_MALFORMED'],
  ];
  for (const [name, tok, key, now, want] of rows) {
    const r = verifyJwt(tok, key, { now });
    t.equal(r.ok ? true : r.code, want, name);
  }
});

t.test('secret file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = generateJwtSecret();
  t.equal(s.length, 32);
  t.notSame(generateJwtSecret(), s, 'random');
  t.match(formatJwtSecret(s), /^[0-9a-f]{64}$/);
  t.same(parseJwtSecret(formatJwtSecret(s)), s);
  t.same(parseJwtSecret(`0x${formatJwtSecret(s)}\n`), s, '0x and newline tolerated');
  t.throws(() => parseJwtSecret('abcd'), { message: 'want 64 hex characters (32 bytes)' });
  const path = join(dir, 'jwt.hex');
  t.throws(() => readJwtSecret(path, 'config/jwt.hex'), { message: 'config/jwt.hex: not found (run `chaind init` first)' });
  writeFileSync(path, 'zz'.repeat(32));
  t.throws(() => readJwtSecret(path, 'config/jwt.hex'), { message: 'config/jwt.hex: want 64 hex characters (32 bytes)', name: 'ConfigError' });
  writeFileSync(path, formatJwtSecret(s));
  t.same(readJwtSecret(path), s);
});
