/**
 * The `personal` namespace over the node's keystore (`<home>/keystore`, src/keys/keystore.ts),
 * served when `[json-rpc] api` lists it, every method private (a JWT, geth-server.ts).
 *
 * Behaviour and texts follow geth's PersonalAccountAPI before its removal
 * (ethereum/go-ethereum:internal/ethapi/api.go at v1.13, removed in #30704) and the spec §3, §4.4,
 * §7, §8: unlock duration default 300 s, 0 = until the node exits; importRawKey takes exactly 64
 * hex characters (crypto.HexToECDSA's errors name the bad character); ecRecover wants 65 bytes
 * with v 27/28. Unlike Cosmos EVM (whose unlock/lock are stubs answering false, spec §4.4), unlock
 * and lock really gate eth_sign / eth_sendTransaction, as in geth.
 */
import { addressOfPrivateKey, KeystoreError } from '../../keys/keystore.js';
import { toChecksumAddress } from '../../keys/devaccounts.js';
import { gethMethod } from '../jsonrpc/geth.js';
import type { Route } from '../jsonrpc/methods.js';
import { notImplementedIn } from './status.js';
import { notImplemented } from './eth.js';
import { argError, gethError, hex } from './format.js';
import { buildTx, ecRecover, parseSendArgs, signText, type AddrLocker, type SignerEnv } from './sign.js';

/** Spec §3 / §8: personal_unlockAccount's duration when none is given, seconds. */
export const DEFAULT_UNLOCK_SECONDS = 300;
/** geth: uint64(time.Duration(math.MaxInt64) / time.Second). */
const MAX_UNLOCK_SECONDS = 9_223_372_036;

/** crypto.HexToECDSA: hex.DecodeString's errors, then toECDSA's. */
export function parseRawKey(text: string): Uint8Array {
  // Go's hex.DecodeString reads bytes: the first bad one (of the UTF-8 text) is the one named.
  const bytes = Buffer.from(text, 'utf8');
  for (const b of bytes) {
    const hexDigit = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
    if (!hexDigit) throw gethError(`invalid hex character ${goQuoteByte(b)} in private key`);
  }
  if (text.length % 2 !== 0) throw gethError('invalid hex data for private key');
  const priv = new Uint8Array(Buffer.from(text, 'hex'));
  try {
    addressOfPrivateKey(priv);
  } catch (e) {
    throw gethError((e as Error).message);
  }
  return priv;
}

/** Go's %q of a byte: 'x', with Go's escapes for the unprintable ones. */
function goQuoteByte(b: number): string {
  const c = b & 0xff;
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' };
  if (named[c] !== undefined) return `'${named[c]}'`;
  if (c >= 0x20 && c < 0x7f) return `'${String.fromCharCode(c)}'`;
  if (c < 0x80) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // A byte >= 0x80 is the rune U+0080..U+00FF: printable from U+00A1 on (except the soft hyphen).
  if (c >= 0xa1 && c !== 0xad) return `'${String.fromCharCode(c)}'`;
  return `'\\u00${c.toString(16).padStart(2, '0')}'`;
}

function keystoreCall<T>(f: () => Promise<T> | T): Promise<T> {
  return Promise.resolve()
    .then(f)
    .catch((e: unknown) => {
      if (e instanceof KeystoreError) throw gethError(e.message);
      throw e;
    });
}

export function personalMethods(env: SignerEnv, locker: AddrLocker, opts: { allowInsecureUnlock?: boolean } = {}): Route[] {
  const ks = () => {
    if (env.keystore === undefined) throw gethError('no keystore configured');
    return env.keystore;
  };
  return [
    gethMethod({
      name: 'personal_listAccounts',
      handler: () => (env.keystore?.accounts() ?? []).map((a) => hex(a.address)),
    }),
    gethMethod({
      name: 'personal_listWallets',
      // rawWallet {url, status, accounts}: a keystore wallet per account (accounts/keystore/wallet.go).
      handler: () =>
        (env.keystore?.accounts() ?? []).map((a) => ({
          url: `keystore://${a.file}`,
          status: env.keystore!.isUnlocked(a.address) ? 'Unlocked' : 'Locked',
          accounts: [{ address: hex(a.address), url: `keystore://${a.file}` }],
        })),
    }),
    gethMethod({
      name: 'personal_newAccount',
      params: [{ name: 'password', type: 'string' }],
      handler: ({ password }) => keystoreCall(async () => toChecksumAddress((await ks().newAccount(password)).address)),
    }),
    gethMethod({
      name: 'personal_importRawKey',
      params: [{ name: 'privkey', type: 'string' }, { name: 'password', type: 'string' }],
      handler: ({ privkey, password }) => {
        const priv = parseRawKey(privkey);
        return keystoreCall(async () => hex((await ks().importKey(priv, password)).address));
      },
    }),
    gethMethod({
      name: 'personal_unlockAccount',
      params: [{ name: 'address', type: 'address' }, { name: 'password', type: 'string' }, { name: 'duration', type: 'any', optional: true }],
      handler: ({ address, password, duration }) => {
        // geth: refused while the HTTP/WS RPC is exposed unless --allow-insecure-unlock.
        if (opts.allowInsecureUnlock === false) throw gethError('account unlock with HTTP access is forbidden');
        let seconds = DEFAULT_UNLOCK_SECONDS;
        if (duration !== undefined && duration !== null) {
          if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 0) {
            const what = typeof duration === 'number' ? `number ${duration}` : Array.isArray(duration) ? 'array' : typeof duration;
            throw argError(2, `json: cannot unmarshal ${what} into Go value of type uint64`);
          }
          if (duration > MAX_UNLOCK_SECONDS) throw gethError('unlock duration too large');
          seconds = duration;
        }
        return keystoreCall(async () => {
          await ks().unlock(address, password, seconds);
          return true;
        });
      },
    }),
    gethMethod({
      name: 'personal_lockAccount',
      params: [{ name: 'address', type: 'address' }],
      // geth KeyStore.Lock returns nil for any address: always true.
      handler: ({ address }) => {
        env.keystore?.lock(address);
        return true;
      },
    }),
    gethMethod({
      name: 'personal_sign',
      params: [{ name: 'data', type: 'data' }, { name: 'address', type: 'address' }, { name: 'password', type: 'string' }],
      handler: ({ data, address, password }) =>
        keystoreCall(async () => {
          // geth: the account manager's Find fails first (unlock, by contrast, answers ErrNoMatch).
          if (!ks().has(address)) throw gethError('unknown account');
          const priv = await ks().decrypt(address, password);
          try {
            return hex(signText(priv, data));
          } finally {
            priv.fill(0);
          }
        }),
    }),
    gethMethod({
      name: 'personal_ecRecover',
      params: [{ name: 'data', type: 'data' }, { name: 'sig', type: 'data' }],
      handler: ({ data, sig }) => hex(ecRecover(data, sig)),
    }),
    gethMethod({
      name: 'personal_sendTransaction',
      params: [{ name: 'args', type: 'any' }, { name: 'password', type: 'string' }],
      handler: ({ args, password }, ctx) => {
        const a = parseSendArgs(0, args);
        return keystoreCall(async () => {
          // geth: the account manager's Find fails first.
          if (!ks().has(a.from)) throw gethError('unknown account');
          const priv = await ks().decrypt(a.from, password);
          try {
            return await locker.run(a.from, async () => env.submit((await buildTx(env, a, ctx)).sign(priv).serialize(), ctx));
          } finally {
            priv.fill(0);
          }
        });
      },
    }),
    ...notImplementedIn('personal').map(notImplemented),
  ];
}
