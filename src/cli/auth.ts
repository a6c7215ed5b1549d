/** `chaind auth token [--home DIR] [--ttl 1h]`: print a fresh HS256 JWT signed with config/jwt.hex. */
import { join } from 'node:path';
import { parseDuration } from '../config/duration.js';
import { readJwtSecret, signJwt } from '../config/jwt.js';
import { type CliIo, EXIT_OK, parse, resolveHome, UsageError } from './common.js';

export const AUTH_USAGE = `Usage: chaind auth token [--home DIR] [--ttl 1h]

Prints an HS256 JWT (claims iat, exp) signed with the secret in <home>/config/jwt.hex.
The EVM JSON-RPC's private methods (personal_*, eth_sign, eth_sendTransaction, ...) take it as
"Authorization: Bearer <token>" within 60 s of its issue, whatever --ttl says (geth's rule):
  curl -H "Authorization: Bearer $(chaind auth token)" -H 'Content-Type: application/json' ...
  --ttl DURATION   lifetime (exp), a Go duration such as 30m, 1h, 24h (default 1h)
`;

export function runAuth(args: string[], io: CliIo): number {
  const { values, positionals } = parse(
    args,
    { home: { type: 'string' }, ttl: { type: 'string', default: '1h' }, help: { type: 'boolean', short: 'h' } },
    true,
  );
  if (values.help) {
    io.out(AUTH_USAGE);
    return EXIT_OK;
  }
  if (positionals.length !== 1 || positionals[0] !== 'token') {
    throw new UsageError(positionals.length === 0 ? 'auth needs a subcommand: token' : `unknown auth subcommand "${positionals[0]}"`);
  }
  const ttlText = values.ttl as string;
  const ms = parseDuration(ttlText);
  if (ms === undefined || ms < 1000) throw new UsageError(`--ttl: invalid duration "${ttlText}" (want at least 1s, e.g. 1h)`);
  const home = resolveHome(values.home as string | undefined, io.env);
  const secret = readJwtSecret(join(home, 'config', 'jwt.hex'), 'config/jwt.hex');
  io.out(signJwt(secret, { ttlSeconds: Math.floor(ms / 1000) }) + '\n');
  return EXIT_OK;
}
