/**
 * HS256 JSON Web Tokens over the 32-byte secret in config/jwt.hex (RFC 7519; the scheme geth's
 * engine API uses). `chaind auth token` issues them; authenticated RPC endpoints verify them.
 *
 * Tokens carry `iat` and `exp` (seconds). A token without `exp` is accepted only while `iat` is
 * within ±60 s of now, as geth does (node/jwt_handler.go), so engine-API style clients work too.
 * The EVM JSON-RPC's private methods verify with `geth: true`: geth's rule exactly, `iat` within
 * ±60 s even when `exp` is later (src/rpc/evm/index.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { configError } from './errors.js';

export const JWT_SECRET_BYTES = 32;
/** Allowed clock difference for `iat`, seconds (geth: jwtExpiryTimeout = 60 s). */
export const JWT_IAT_SKEW_SECONDS = 60;

export function generateJwtSecret(): Uint8Array {
  return new Uint8Array(randomBytes(JWT_SECRET_BYTES));
}

/** The file's text: 64 lower-case hex characters. */
export function formatJwtSecret(secret: Uint8Array): string {
  return Buffer.from(secret).toString('hex');
}

/** Parse hex text (an optional 0x and surrounding whitespace allowed). Throws with the reason. */
export function parseJwtSecret(text: string): Uint8Array {
  const t = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]*$/.test(t) || t.length !== JWT_SECRET_BYTES * 2) {
    throw new Error(`want ${JWT_SECRET_BYTES * 2} hex characters (${JWT_SECRET_BYTES} bytes)`);
  }
  return new Uint8Array(Buffer.from(t, 'hex'));
}

/** Read config/jwt.hex; errors are ConfigErrors naming `source`. */
export function readJwtSecret(path: string, source = path): Uint8Array {
  if (!existsSync(path)) throw configError(source, undefined, 'not found (run `chaind init` first)', 'CONFIG_NOT_FOUND');
  try {
    return parseJwtSecret(readFileSync(path, 'utf8'));
  } catch (e) {
    throw configError(source, undefined, (e as Error).message);
  }
}

export interface JwtClaims {
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expiry, seconds since the epoch. */
  exp?: number;
  [claim: string]: unknown;
}

const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const HEADER = enc({ alg: 'HS256', typ: 'JWT' });

function mac(secret: Uint8Array, input: string): Buffer {
  return createHmac('sha256', secret).update(input).digest();
}

export interface SignJwtOptions {
  /** Lifetime in seconds; default 3600. */
  ttlSeconds?: number;
  /** Current time in seconds; default now. */
  now?: number;
  /** Extra claims. */
  claims?: Record<string, unknown>;
}

export function signJwt(secret: Uint8Array, opts: SignJwtOptions = {}): string {
  const iat = opts.now ?? Math.floor(Date.now() / 1000);
  const payload = enc({ ...opts.claims, iat, exp: iat + (opts.ttlSeconds ?? 3600) });
  const body = `${HEADER}.${payload}`;
  return `${body}.${mac(secret, body).toString('base64url')}`;
}

export type JwtErrorCode = 'JWT_MALFORMED' | 'JWT_ALGORITHM' | 'JWT_SIGNATURE' | 'JWT_EXPIRED' | 'JWT_IAT';

export type JwtVerifyResult = { ok: true; claims: JwtClaims } | { ok: false; code: JwtErrorCode; reason: string };

export interface VerifyJwtOptions {
  /** Current time in seconds; default now. */
  now?: number;
  /**
   * geth's authenticated-RPC rule (ethereum/go-ethereum:node/jwt_handler.go): `iat` must be within
   * ±60 s of now whatever `exp` says (a token is good for about a minute; clients sign one per
   * request), and `exp`, when present, must not have passed. Reasons are geth's texts.
   */
  geth?: boolean;
}

function decodeJson(part: string): unknown {
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Verify an HS256 token. Returns a result rather than throwing: a bad token is an expected
 * outcome for the RPC layer (HTTP 401), not an error.
 */
export function verifyJwt(token: string, secret: Uint8Array, opts: VerifyJwtOptions = {}): JwtVerifyResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, code: 'JWT_MALFORMED', reason: 'token must have three parts' };
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h) as { alg?: unknown } | undefined;
  if (!header || typeof header !== 'object') return { ok: false, code: 'JWT_MALFORMED', reason: 'bad header' };
  // Only HS256: never `none`, never an algorithm chosen by the token.
  if (header.alg !== 'HS256') return { ok: false, code: 'JWT_ALGORITHM', reason: `unsupported algorithm ${JSON.stringify(header.alg)}` };
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return { ok: false, code: 'JWT_MALFORMED', reason: 'bad signature encoding' };
  const sig = Buffer.from(s, 'base64url');
  const want = mac(secret, `${h}.${p}`);
  if (sig.length !== want.length || !timingSafeEqual(sig, want)) return { ok: false, code: 'JWT_SIGNATURE', reason: 'signature mismatch' };
  const claims = decodeJson(p) as JwtClaims | undefined;
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) return { ok: false, code: 'JWT_MALFORMED', reason: 'bad claims' };
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (opts.geth) {
    if (claims.exp !== undefined && (typeof claims.exp !== 'number' || now >= claims.exp)) return { ok: false, code: 'JWT_EXPIRED', reason: 'token is expired' };
    if (typeof claims.iat !== 'number') return { ok: false, code: 'JWT_IAT', reason: 'missing issued-at' };
    if (now - claims.iat > JWT_IAT_SKEW_SECONDS) return { ok: false, code: 'JWT_IAT', reason: 'stale token' };
    if (claims.iat - now > JWT_IAT_SKEW_SECONDS) return { ok: false, code: 'JWT_IAT', reason: 'future token' };
    return { ok: true, claims };
  }
  if (typeof claims.iat !== 'number') return { ok: false, code: 'JWT_IAT', reason: 'missing iat' };
  if (claims.iat > now + JWT_IAT_SKEW_SECONDS) return { ok: false, code: 'JWT_IAT', reason: 'issued in the future' };
  if (claims.exp !== undefined) {
    if (typeof claims.exp !== 'number') return { ok: false, code: 'JWT_MALFORMED', reason: 'exp must be a number' };
    if (now >= claims.exp) return { ok: false, code: 'JWT_EXPIRED', reason: 'token expired' };
  } else if (claims.iat < now - JWT_IAT_SKEW_SECONDS) {
    return { ok: false, code: 'JWT_IAT', reason: 'stale token (no exp and iat older than 60s)' };
  }
  return { ok: true, claims };
}
