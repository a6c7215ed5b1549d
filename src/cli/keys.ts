/**
 * `chaind keys`: manage the account keyring (src/keys/keyring.ts), in the shape of the Cosmos
 * SDK's `keys` command (cosmos-sdk: client/keys/*.go).
 *
 *   keys add <name> [--recover] [--key-type secp256k1|eth_secp256k1] [--account N] [--index N]
 *                   [--coin-type N] [--hd-path PATH] [--no-backup] [--dry-run] [--overwrite]
 *   keys list
 *   keys show <name|address> [--address] [--pubkey] [--bech acc|val|cons]
 *   keys delete <name|address>... [--yes]
 *   keys export <name> [--export-passphrase P]            armored, sealed with the passphrase
 *   keys export <name> --unarmored-hex --unsafe            the raw private key in hex
 *   keys import <name> <keyfile> [--import-passphrase P]   an armored block from `keys export`
 *   keys import-hex <name> <hex> [--key-type T]
 *
 * Key records print as upstream's KeyOutput: `{name, type: "local", address, pubkey}` where
 * `pubkey` is the key's protobuf JSON as a string (`{"@type":"/chain.crypto.secp256k1.PubKey",
 * "key":"…"}`), as YAML by default or JSON with `--output json`. `keys add` prints a new key's
 * mnemonic once: on stderr in text mode, as the `mnemonic` field in JSON mode.
 *
 * `--recover` reads the mnemonic from stdin (one line; prompted on a terminal).
 */
import { readFileSync } from 'node:fs';
import { BECH32_PREFIX, BECH32_PREFIX_VALCONS, BECH32_PREFIX_VALOPER } from '../names/index.js';
import { anyToProtoJson, goJsonStringify } from '../proto/json.js';
import { encodePubKey } from '../tx/pubkey.js';
import { bech32Address } from '../keys/devaccounts.js';
import { KEY_ALGOS, type KeyAlgo, type KeyRecord } from '../keys/keyring.js';
import { CliError, confirm, KEYRING_OPTIONS, openKeyring, outputFormat, printValue, prompt, readStdin, stdinIsTty, type OutputFormat } from './client.js';
import { type CliIo, EXIT_OK, parse, UsageError } from './common.js';

export const KEYS_USAGE = `Usage: chaind keys <command> [options]

Commands:
  add <name>                       create a key (a new 24-word mnemonic), or --recover one
  list                             list all keys
  show <name|address>              show a key (--address, --pubkey, --bech acc|val|cons)
  delete <name|address>...         delete keys (--yes to skip the confirmation)
  export <name>                    export a key: armored and passphrase-sealed, or
                                   --unarmored-hex --unsafe for the raw hex private key
  import <name> <keyfile>          import an armored key written by 'keys export'
  import-hex <name> <hex>          import a raw hex private key (--key-type)

Key options (add, import-hex):
  --key-type, --algo TYPE   secp256k1 (default; coin type 118) or eth_secp256k1 (coin type 60)
  --recover                 read a BIP-39 mnemonic from stdin instead of making one
  --account N, --index N    BIP-44 account and address index (default 0, 0)
  --coin-type N             BIP-44 coin type (default 118, or 60 for eth_secp256k1)
  --hd-path PATH            full derivation path, e.g. "m/44'/118'/0'/0/0" (overrides the above)
  --no-backup               do not print the new mnemonic
  --dry-run                 derive and print, store nothing
  --overwrite               replace an existing key of that name

Keyring options:
  --home DIR                      node home; the keyring is <home>/keyring-<backend>/
  --keyring-backend file|test     file: encrypted (default); test: unencrypted, for scripts
  --keyring-dir DIR               keyring directory (overrides --home)
  --keyring-passphrase P          passphrase of the file keyring (else $CHAIND_KEYRING_PASSPHRASE,
                                  else prompted on a terminal)
  -o, --output text|json          output format (default text)
`;

const COMMON = {
  home: { type: 'string' },
  ...KEYRING_OPTIONS,
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The SDK's KeyOutput for a record (`pubkey` as a JSON string). */
export function keyOutput(rec: KeyRecord, bech: 'acc' | 'val' | 'cons' = 'acc'): { name: string; type: string; address: string; pubkey: string } {
  const prefix = bech === 'val' ? BECH32_PREFIX_VALOPER : bech === 'cons' ? BECH32_PREFIX_VALCONS : BECH32_PREFIX;
  return {
    name: rec.name,
    type: rec.type,
    address: bech32Address(rec.address, prefix),
    pubkey: pubKeyJson(rec),
  };
}

function pubKeyJson(rec: KeyRecord): string {
  return goJsonStringify(anyToProtoJson(encodePubKey({ algo: rec.algo, key: rec.pubKey })));
}

function algoFlag(values: Record<string, unknown>): KeyAlgo {
  const a = (values['key-type'] ?? values['algo'] ?? 'secp256k1') as string;
  if (!(KEY_ALGOS as readonly string[]).includes(a)) throw new UsageError(`--key-type: want ${KEY_ALGOS.join(' or ')}, got "${a}"`);
  return a as KeyAlgo;
}

function intFlag(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const s = String(v);
  if (!/^[0-9]+$/.test(s) || Number(s) >= 0x80000000) throw new UsageError(`--${name}: want an integer in [0, 2147483647], got "${s}"`);
  return Number(s);
}

function wantArgs(pos: string[], n: number, usage: string): void {
  if (pos.length !== n) throw new UsageError(`accepts ${n} arg(s), received ${pos.length}: usage: chaind keys ${usage}`);
}

export async function runKeys(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return keysAdd(rest, io);
    case 'list':
      return keysList(rest, io);
    case 'show':
      return keysShow(rest, io);
    case 'delete':
      return keysDelete(rest, io);
    case 'export':
      return keysExport(rest, io);
    case 'import':
      return keysImport(rest, io);
    case 'import-hex':
      return keysImportHex(rest, io);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.out(KEYS_USAGE);
      return EXIT_OK;
    default:
      throw new UsageError(`unknown keys subcommand "${sub}"`);
  }
}

async function keysAdd(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      ...COMMON,
      recover: { type: 'boolean' },
      'key-type': { type: 'string' },
      algo: { type: 'string' },
      account: { type: 'string' },
      index: { type: 'string' },
      'coin-type': { type: 'string' },
      'hd-path': { type: 'string' },
      'no-backup': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      overwrite: { type: 'boolean' },
    },
    true,
  );
  if (values.help) return help(io);
  wantArgs(positionals, 1, 'add <name>');
  const name = positionals[0]!;
  const format = outputFormat(values.output, 'text');
  const algo = algoFlag(values);
  const kr = openKeyring(values, io);
  let mnemonic: string | undefined;
  if (values.recover) {
    mnemonic = stdinIsTty(io) ? await prompt('> Enter your bip39 mnemonic\n') : (readStdin(io).split('\n').find((l) => l.trim() !== '') ?? '');
    if (mnemonic.trim() === '') throw new CliError('no mnemonic given on stdin', 'INVALID_MNEMONIC');
  }
  const hdPath = values['hd-path'] as string | undefined;
  const coinType = intFlag('coin-type', values['coin-type']);
  const account = intFlag('account', values.account);
  const index = intFlag('index', values.index);
  const { record, mnemonic: words } = await kr.add(name, {
    algo,
    ...(mnemonic !== undefined ? { mnemonic } : {}),
    ...(hdPath !== undefined ? { hdPath } : {}),
    ...(coinType !== undefined ? { coinType } : {}),
    ...(account !== undefined ? { account } : {}),
    ...(index !== undefined ? { index } : {}),
    overwrite: values.overwrite === true,
    dryRun: values['dry-run'] === true,
  });
  const show = !values.recover && !values['no-backup'];
  const out: Record<string, string> = keyOutput(record);
  if (format === 'json') {
    if (show) out['mnemonic'] = words;
    printValue(io, out, 'json');
  } else {
    printValue(io, [out], 'text');
    if (show) {
      io.err(
        `\n**Important** write this mnemonic phrase in a safe place.\nIt is the only way to recover your account if you ever forget your password.\n\n${words}\n\n`,
      );
    }
  }
  return EXIT_OK;
}

async function keysList(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON, 'list-names': { type: 'boolean', short: 'n' } }, true);
  if (values.help) return help(io);
  wantArgs(positionals, 0, 'list');
  const recs = openKeyring(values, io).list();
  if (values['list-names']) {
    for (const r of recs) io.out(`${r.name}\n`);
    return EXIT_OK;
  }
  const format = outputFormat(values.output, 'text');
  if (recs.length === 0 && format === 'text') {
    // Upstream's message (client/keys/list.go), on stderr as cobra's Println writes it.
    io.err('No records were found in keyring\n');
    return EXIT_OK;
  }
  printValue(io, recs.map((r) => keyOutput(r)), format);
  return EXIT_OK;
}

async function keysShow(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    args,
    { ...COMMON, address: { type: 'boolean', short: 'a' }, pubkey: { type: 'boolean', short: 'p' }, bech: { type: 'string' } },
    true,
  );
  if (values.help) return help(io);
  wantArgs(positionals, 1, 'show <name|address>');
  const bech = (values.bech as string | undefined) ?? 'acc';
  if (bech !== 'acc' && bech !== 'val' && bech !== 'cons') throw new UsageError(`invalid Bech32 prefix encoding provided: ${bech}`);
  if (values.address && values.pubkey) throw new UsageError('--address and --pubkey can not be used together');
  const rec = openKeyring(values, io).get(positionals[0]!);
  const out = keyOutput(rec, bech);
  if (values.address) io.out(`${out.address}\n`);
  else if (values.pubkey) io.out(`${out.pubkey}\n`);
  else printValue(io, out, outputFormat(values.output, 'text'));
  return EXIT_OK;
}

async function keysDelete(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON, yes: { type: 'boolean', short: 'y' }, force: { type: 'boolean', short: 'f' } }, true);
  if (values.help) return help(io);
  if (positionals.length === 0) throw new UsageError('requires at least 1 arg(s), only received 0: usage: chaind keys delete <name>...');
  const kr = openKeyring(values, io);
  for (const name of positionals) {
    const rec = kr.get(name);
    if (!values.yes) {
      if (!stdinIsTty(io)) throw new CliError('refusing to delete a key without confirmation: pass --yes', 'ABORTED');
      if (!(await confirm(`Key reference ${rec.name} will be deleted. Continue?`))) throw new CliError('aborted', 'ABORTED');
    }
    kr.delete(rec.name);
    io.err('Key deleted forever (uh oh!)\n');
  }
  return EXIT_OK;
}

async function passphraseFor(io: CliIo, what: string, given: unknown, env: string | undefined, twice: boolean): Promise<string> {
  const p = (given as string | undefined) ?? env;
  if (p !== undefined) return p;
  if (!stdinIsTty(io)) throw new CliError(`no ${what} passphrase: pass --${what}-passphrase`, 'NO_PASSPHRASE');
  const a = await prompt(`Enter passphrase to ${what === 'export' ? 'encrypt the exported' : 'decrypt your'} key: `, true);
  if (twice && (await prompt('Repeat the passphrase: ', true)) !== a) throw new CliError('passphrases do not match', 'NO_PASSPHRASE');
  return a;
}

async function keysExport(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    args,
    { ...COMMON, 'unarmored-hex': { type: 'boolean' }, unsafe: { type: 'boolean' }, 'export-passphrase': { type: 'string' }, yes: { type: 'boolean', short: 'y' } },
    true,
  );
  if (values.help) return help(io);
  wantArgs(positionals, 1, 'export <name>');
  const kr = openKeyring(values, io);
  const name = positionals[0]!;
  if (values['unarmored-hex']) {
    if (!values.unsafe) throw new UsageError('the --unarmored-hex flag must be used together with --unsafe');
    kr.get(name);
    if (stdinIsTty(io) && !values.yes && !(await confirm('**WARNING** this is an unsafe way to export your unencrypted private key, are you sure?'))) {
      throw new CliError('aborted', 'ABORTED');
    }
    io.out(`${await kr.exportHex(name)}\n`);
    return EXIT_OK;
  }
  kr.get(name);
  const pass = await passphraseFor(io, 'export', values['export-passphrase'], io.env.CHAIND_EXPORT_PASSPHRASE, true);
  io.out(await kr.exportArmored(name, pass));
  return EXIT_OK;
}

async function keysImport(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON, 'import-passphrase': { type: 'string' }, overwrite: { type: 'boolean' } }, true);
  if (values.help) return help(io);
  wantArgs(positionals, 2, 'import <name> <keyfile>');
  const [name, file] = positionals as [string, string];
  let armor: string;
  try {
    armor = file === '-' ? readStdin(io) : readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`, 'READ_FAILED');
  }
  const kr = openKeyring(values, io);
  if (kr.has(name) && !values.overwrite) throw new CliError(`cannot overwrite key: ${name}: key already exists`, 'KEY_EXISTS');
  const pass = await passphraseFor(io, 'import', values['import-passphrase'], io.env.CHAIND_EXPORT_PASSPHRASE, false);
  await kr.importArmored(name, armor, pass, { overwrite: values.overwrite === true });
  return EXIT_OK;
}

async function keysImportHex(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON, 'key-type': { type: 'string' }, algo: { type: 'string' }, overwrite: { type: 'boolean' } }, true);
  if (values.help) return help(io);
  wantArgs(positionals, 2, 'import-hex <name> <hex>');
  const [name, hexKey] = positionals as [string, string];
  const h = hexKey.replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new CliError('invalid private key: want 32 bytes of hex', 'INVALID_KEY');
  const kr = openKeyring(values, io);
  await kr.importPrivateKey(name, new Uint8Array(Buffer.from(h, 'hex')), algoFlag(values), { overwrite: values.overwrite === true });
  return EXIT_OK;
}

function help(io: CliIo): number {
  io.out(KEYS_USAGE);
  return EXIT_OK;
}

export type { OutputFormat };
