/**
 * `chaind testnet init-files` and `chaind testnet start`: a local multi-validator network of
 * separate `chaind start` processes, one loopback address per node.
 *
 * Flag names and defaults follow the Cosmos SDK's `simd testnet init-files`
 * (cosmos/cosmos-sdk:simapp/simd/cmd/testnet.go): --v 4, --output-dir ./.testnets, --chain-id
 * (random "chain-XXXXXX" when empty), --node-dir-prefix node, --starting-ip-address,
 * --keyring-backend test. Differences: the node home is DIR/<prefix><i> itself (the SDK nests a
 * daemon home DIR/node0/simd), the starting address defaults to 127.0.0.2 (every 127.0.0.0/8
 * address answers on Linux loopback, so N nodes run on one machine on the default ports), there
 * are no gentxs (chaind has no staking module: the validators are written into the genesis
 * directly, equal power), and `--dev` funds the dev accounts as `chaind init --dev` does.
 *
 * Node i (0-based) binds every listener to the i-th address from the starting one, on the
 * default ports: P2P 26656, node RPC 26657, REST 1317, gRPC 9090, EVM JSON-RPC 8545/8546,
 * metrics 26660. Its persistent_peers are `<id>@<ip>:26656` of every other node, with the ID the
 * hex address of that node's node_key (cometbft/cometbft:p2p/key.go). Like the SDK (and
 * CometBFT's own `testnet` command) it turns addr_book_strict off; allow_duplicate_ip is on.
 *
 * With a keyring backend each node also gets an account key named after its directory in its
 * home's keyring, funded in the genesis, its mnemonic in DIR/<node>/key_seed.json
 * ({"secret": ...}, as the SDK writes it).
 *
 * `testnet start` runs `chaind start --home DIR/<node>` for every node directory as a child
 * process, prints each node's RPC address, node ID and pid, forwards each child's output line by
 * line prefixed with its name (and appends it to DIR/<node>/chaind.log), reports a child that
 * exits on its own, and on SIGINT/SIGTERM sends SIGTERM to every child and waits for them all
 * (SIGKILL after STOP_GRACE_MS; a second signal kills at once). Exit code 0 when every child
 * stopped cleanly, 1 otherwise.
 */
import { hexUpper } from '../crypto/bytes.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { createWriteStream, existsSync, readdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { isIPv4 } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { defaultAppConfig, type AppConfig } from '../config/app-config.js';
import { configError } from '../config/errors.js';
import { MAX_CHAIN_ID_LEN, nowNanos, writeGenesis } from '../config/genesis.js';
import { ed25519Address, nodeIdFromPubKey, readNodeKey } from '../config/keyfiles.js';
import { displayPath, loadConfig } from '../config/load.js';
import { defaultNodeConfig, type NodeConfig } from '../config/node-config.js';
import { renderConfigToml } from '../config/write.js';
import { Keyring, KEYRING_BACKENDS, type KeyringBackend } from '../keys/keyring.js';
import { SPEC_NAMES } from '../names/index.js';
import { type CliIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, parse, UsageError } from './common.js';
import { DEV_ACCOUNT_BALANCE, initGenesisDoc, initHomeFiles, type GenesisValidatorSpec, type HomeFiles } from './init.js';

export const TESTNET_DEFAULT_VALIDATORS = 4;
export const TESTNET_DEFAULT_OUTPUT_DIR = './.testnets';
export const TESTNET_DEFAULT_STARTING_IP = '127.0.0.2';
export const TESTNET_DEFAULT_NODE_DIR_PREFIX = 'node';
/** How long `testnet start` waits for the children after SIGTERM before SIGKILL. */
export const STOP_GRACE_MS = 30_000;

export const TESTNET_USAGE = `Usage: chaind testnet <subcommand> [options]

Subcommands:
  init-files   write the homes of a local N-validator network (one loopback address per node)
  start        run every node of an init-files directory as a separate chaind process

chaind testnet init-files [--v 4] [--output-dir ${TESTNET_DEFAULT_OUTPUT_DIR}] [--chain-id ID]
    [--starting-ip-address ${TESTNET_DEFAULT_STARTING_IP}] [--node-dir-prefix node] [--dev]
    [--keyring-backend test|file|none]
  --v N                       number of validators (default ${TESTNET_DEFAULT_VALIDATORS})
  -o, --output-dir DIR        where DIR/node0 … DIR/node<N-1> are written
  --chain-id ID               chain id (default: random "chain-XXXXXX")
  --starting-ip-address IP    node i listens on IP + i, default ports (26656 P2P, 26657 RPC,
                              1317 REST, 9090 gRPC, 8545/8546 JSON-RPC, 26660 metrics)
  --node-dir-prefix P         node directory names P0, P1, … (default node)
  --dev                       fund the 20 dev accounts, as chaind init --dev
  --keyring-backend B         an account key per node, funded in the genesis, in the node's
                              keyring (default test; file takes $CHAIND_KEYRING_PASSPHRASE;
                              none: no account keys)

chaind testnet start [--output-dir ${TESTNET_DEFAULT_OUTPUT_DIR}] [--node-dir-prefix node] [-- <chaind start flags>]
  Prints each node's RPC address, forwards its log lines prefixed "<node>| " (also appended to
  DIR/<node>/chaind.log); SIGINT/SIGTERM stops every node.
`;

// ---------------------------------------------------------------------------------------------
// Addresses

/** The IPv4 address `i` after `start` (carrying into the higher octets); throws past 255.255.255.255. */
export function nthIp(start: string, i: number): string {
  if (!isIPv4(start)) throw new UsageError(`--starting-ip-address: ${JSON.stringify(start)} is not an IPv4 address`);
  const n = start.split('.').reduce((acc, o) => acc * 256 + Number(o), 0) + i;
  if (n > 0xffffffff) throw new UsageError(`--starting-ip-address: ${start} + ${i} is past 255.255.255.255`);
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** `tcp://host:port` or `host:port` with the host replaced, keeping scheme and port. */
export function withHost(addr: string, host: string): string {
  const m = /^((?:[a-z]+:\/\/)?)(\[[^\]]*\]|[^:/]*):(\d+)$/.exec(addr);
  if (!m) throw new Error(`cannot rewrite address ${JSON.stringify(addr)}`);
  return `${m[1]}${host}:${m[3]}`;
}

function portOf(addr: string): string {
  return /:(\d+)$/.exec(addr)![1]!;
}

/** config.toml of node `name` on `ip`: every listener on that address. */
function nodeConfigFor(name: string, ip: string): NodeConfig {
  const c = defaultNodeConfig({ moniker: name });
  c.rpc.laddr = withHost(c.rpc.laddr, ip);
  c.p2p.laddr = withHost(c.p2p.laddr, ip);
  c.p2p.addrBookStrict = false;
  c.p2p.allowDuplicateIp = true;
  c.instrumentation.prometheusListenAddr = withHost(c.instrumentation.prometheusListenAddr, ip);
  return c;
}

function appConfigFor(ip: string): AppConfig {
  const a = defaultAppConfig();
  a.api.address = withHost(a.api.address, ip);
  a.grpc.address = withHost(a.grpc.address, ip);
  a.jsonRpc.address = withHost(a.jsonRpc.address, ip);
  a.jsonRpc.wsAddress = withHost(a.jsonRpc.wsAddress, ip);
  return a;
}

// ---------------------------------------------------------------------------------------------
// init-files

export interface TestnetInitOptions {
  outputDir: string;
  validators: number;
  chainId: string;
  startingIp: string;
  nodeDirPrefix: string;
  dev: boolean;
  /** 'none': no account keys. */
  keyringBackend: KeyringBackend | 'none';
  /** Passphrase of the file keyring. */
  keyringPassphrase?: string;
}

export interface TestnetNodeResult {
  moniker: string;
  home: string;
  ip: string;
  node_id: string;
  validator_address: string;
  rpc: string;
  p2p: string;
  persistent_peers: string[];
  /** The node's funded account key (with a keyring backend). */
  account?: { name: string; address: string; bech32: string };
}

export interface TestnetInitResult {
  chain_id: string;
  output_dir: string;
  nodes: TestnetNodeResult[];
}

export async function initTestnetFiles(opts: TestnetInitOptions): Promise<TestnetInitResult> {
  const outputDir = resolve(opts.outputDir);
  const names = Array.from({ length: opts.validators }, (_, i) => `${opts.nodeDirPrefix}${i}`);
  const ips = names.map((_, i) => nthIp(opts.startingIp, i));
  for (const name of names) {
    const genesis = join(outputDir, name, 'config', 'genesis.json');
    if (existsSync(genesis)) throw configError(genesis, undefined, 'already exists (remove the output directory first)', 'CONFIG_EXISTS');
  }

  // Pass 1: each home's files (keys first: the peer lists need every node's ID).
  const homes: HomeFiles[] = names.map((name, i) => initHomeFiles(join(outputDir, name), nodeConfigFor(name, ips[i]!), appConfigFor(ips[i]!)));
  const ids = homes.map((h) => nodeIdFromPubKey(h.nodeKey.pubKey));
  const p2pAddr = (i: number) => `${ips[i]}:${portOf(homes[i]!.config.p2p.laddr)}`;

  // Pass 2: persistent_peers, now that every ID is known (the config.toml files are ours, just written).
  const peersOf = (i: number) => ids.flatMap((id, j) => (j === i ? [] : [`${id}@${p2pAddr(j)}`]));
  homes.forEach((h, i) => {
    h.config.p2p.persistentPeers = peersOf(i);
    writeFileSync(h.paths.configToml, renderConfigToml(h.config));
  });

  const accounts: NonNullable<TestnetNodeResult['account']>[] = [];
  if (opts.keyringBackend !== 'none') {
    for (const [i, name] of names.entries()) {
      const kr = new Keyring({ backend: opts.keyringBackend, home: homes[i]!.paths.home, passphrase: opts.keyringPassphrase });
      const { record, mnemonic } = await kr.add(name);
      writeFileSync(join(homes[i]!.paths.home, 'key_seed.json'), JSON.stringify({ secret: mnemonic }) + '\n', { mode: 0o600 });
      accounts.push({ name, address: hexUpper(record.address), bech32: record.bech32 });
    }
  }

  const validators: GenesisValidatorSpec[] = homes.map((h, i) => ({ pubKey: h.privValidator.pubKey, name: names[i]! }));
  const doc = initGenesisDoc({
    chainId: opts.chainId,
    validators,
    dev: opts.dev,
    accounts: accounts.map((a) => ({ address: new Uint8Array(Buffer.from(a.address, 'hex')), balance: DEV_ACCOUNT_BALANCE })),
    genesisTime: nowNanos(),
  });
  for (const h of homes) writeGenesis(h.paths.genesis, doc, SPEC_NAMES);

  return {
    chain_id: opts.chainId,
    output_dir: outputDir,
    nodes: homes.map((h, i) => {
      const node: TestnetNodeResult = {
        moniker: names[i]!,
        home: h.paths.home,
        ip: ips[i]!,
        node_id: ids[i]!,
        validator_address: hexUpper(ed25519Address(h.privValidator.pubKey)),
        rpc: h.config.rpc.laddr,
        p2p: p2pAddr(i),
        persistent_peers: h.config.p2p.persistentPeers,
      };
      if (accounts[i]) node.account = accounts[i];
      return node;
    }),
  };
}

/** "chain-" and six random letters/digits, as the SDK names a testnet without --chain-id. */
export function randomChainId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return 'chain-' + Array.from(randomBytes(6), (b) => alphabet[b % alphabet.length]).join('');
}

async function runInitFiles(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    v: { type: 'string' },
    'output-dir': { type: 'string', short: 'o' },
    'chain-id': { type: 'string' },
    'starting-ip-address': { type: 'string' },
    'node-dir-prefix': { type: 'string' },
    dev: { type: 'boolean', default: false },
    'keyring-backend': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.out(TESTNET_USAGE);
    return EXIT_OK;
  }
  const vText = (values.v as string | undefined) ?? String(TESTNET_DEFAULT_VALIDATORS);
  if (!/^\d+$/.test(vText) || Number(vText) < 1 || Number(vText) > 254) throw new UsageError(`--v: want a number of validators from 1 to 254, got ${JSON.stringify(vText)}`);
  const chainId = (values['chain-id'] as string | undefined) || randomChainId();
  if (chainId.length > MAX_CHAIN_ID_LEN) throw new UsageError(`--chain-id: too long (max ${MAX_CHAIN_ID_LEN} characters)`);
  const prefix = (values['node-dir-prefix'] as string | undefined) ?? TESTNET_DEFAULT_NODE_DIR_PREFIX;
  if (!/^[A-Za-z0-9_.-]+$/.test(prefix)) throw new UsageError(`--node-dir-prefix: ${JSON.stringify(prefix)} is not a plain directory name`);
  const backend = (values['keyring-backend'] as string | undefined) ?? 'test';
  if (backend !== 'none' && !(KEYRING_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`--keyring-backend: want ${KEYRING_BACKENDS.join(', ')} or none, got ${JSON.stringify(backend)}`);
  }
  const passphrase = io.env.CHAIND_KEYRING_PASSPHRASE;
  if (backend === 'file' && !passphrase) throw new UsageError('--keyring-backend file needs $CHAIND_KEYRING_PASSPHRASE (N keys, no prompt)');
  const startingIp = (values['starting-ip-address'] as string | undefined) ?? TESTNET_DEFAULT_STARTING_IP;
  nthIp(startingIp, Number(vText) - 1); // reject a range that runs out before the files are written

  const result = await initTestnetFiles({
    outputDir: (values['output-dir'] as string | undefined) ?? TESTNET_DEFAULT_OUTPUT_DIR,
    validators: Number(vText),
    chainId,
    startingIp,
    nodeDirPrefix: prefix,
    dev: values.dev === true,
    keyringBackend: backend as KeyringBackend | 'none',
    keyringPassphrase: passphrase,
  });
  io.out(JSON.stringify(result, null, 2) + '\n');
  io.err(`Successfully initialized ${result.nodes.length} node directories\n`);
  return EXIT_OK;
}

// ---------------------------------------------------------------------------------------------
// start

export interface TestnetStartDeps {
  /** Where SIGINT/SIGTERM arrive; default `process`. */
  signals?: Pick<EventEmitter, 'on' | 'off'>;
  /** The chaind entry script the children run; default this build's main.js. */
  cliScript?: string;
}

interface Child {
  name: string;
  proc: ChildProcess;
  log: WriteStream;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  done: boolean;
}

/** The node directories of an init-files output: <prefix><digits> holding config/config.toml, by number. */
export function findNodeDirs(outputDir: string, prefix: string): string[] {
  if (!existsSync(outputDir)) return [];
  const re = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)$`);
  return readdirSync(outputDir)
    .filter((d) => re.test(d) && existsSync(join(outputDir, d, 'config', 'config.toml')))
    .sort((a, b) => Number(re.exec(a)![1]) - Number(re.exec(b)![1]));
}

async function runTestnetStart(args: string[], io: CliIo, deps: TestnetStartDeps): Promise<number> {
  const dash = args.indexOf('--');
  const own = dash < 0 ? args : args.slice(0, dash);
  const passThrough = dash < 0 ? [] : args.slice(dash + 1);
  const { values } = parse(own, {
    'output-dir': { type: 'string', short: 'o' },
    'node-dir-prefix': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.out(TESTNET_USAGE);
    return EXIT_OK;
  }
  const outputDir = resolve((values['output-dir'] as string | undefined) ?? TESTNET_DEFAULT_OUTPUT_DIR);
  const prefix = (values['node-dir-prefix'] as string | undefined) ?? TESTNET_DEFAULT_NODE_DIR_PREFIX;
  const dirs = findNodeDirs(outputDir, prefix);
  if (dirs.length === 0) throw configError(outputDir, undefined, `no ${prefix}<i> node directories (run \`chaind testnet init-files\` first)`, 'CONFIG_NOT_FOUND');

  // Read every node's settings before starting any: a broken home fails the command cleanly.
  const nodes = dirs.map((name) => {
    const home = join(outputDir, name);
    const loaded = loadConfig({ home });
    const id = readNodeKey(loaded.paths.nodeKey, displayPath(home, loaded.paths.nodeKey)).id;
    return { name, home, rpc: loaded.config.rpc.laddr.replace(/^tcp:\/\//, 'http://'), id, moniker: loaded.config.moniker };
  });

  const script = deps.cliScript ?? fileURLToPath(new URL('./main.js', import.meta.url));
  const children: Child[] = [];
  let stopping = false;
  let finish: (code: number) => void = () => {};
  const finished = new Promise<number>((r) => (finish = r));

  const killAll = (sig: NodeJS.Signals) => {
    for (const c of children) if (!c.done) c.proc.kill(sig);
  };
  // If this process goes away some other way, do not leave nodes behind.
  const onExit = () => killAll('SIGKILL');
  process.on('exit', onExit);

  for (const n of nodes) {
    // Own process group: a terminal's Ctrl-C reaches only this runner, which then stops each node once.
    const proc = spawn(process.execPath, [script, 'start', '--home', n.home, ...passThrough], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const log = createWriteStream(join(n.home, 'chaind.log'), { flags: 'a' });
    const child: Child = {
      name: n.name,
      proc,
      log,
      done: false,
      exited: new Promise((r) => {
        // 'close', not 'exit': 'exit' may come before the last lines of its stdout and stderr
        // are read, and the log is ended then (a node's last words were lost one run in many).
        proc.once('close', (code, signal) => r({ code, signal }));
        // A process that could not be spawned emits 'error', and may emit no 'close'.
        proc.once('error', () => {
          if (proc.pid === undefined) r({ code: null, signal: null });
        });
      }),
    };
    children.push(child);
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        io.out(`${n.name}| ${line}\n`);
        log.write(line + '\n');
      });
    }
    proc.once('error', (e) => io.err(`${n.name}: ${e.message}\n`));
    void child.exited.then(({ code, signal }) => {
      child.done = true;
      log.end();
      if (!stopping) io.err(`${n.name} exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); the others keep running\n`);
      else if (code !== 0) io.err(`${n.name} did not stop cleanly (${signal ? `signal ${signal}` : `code ${code}`}); see ${n.home}/chaind.log\n`);
      if (children.every((c) => c.done)) {
        if (!stopping) io.err('every node has exited\n');
        void Promise.all(children.map((c) => c.exited)).then((rs) => finish(stopping && rs.every((r) => r.code === 0) ? EXIT_OK : EXIT_FAILURE));
      }
    });
    io.out(`${n.name}: rpc ${n.rpc} id ${n.id} moniker ${n.moniker} pid ${proc.pid} home ${n.home}\n`);
  }

  const signals = deps.signals ?? process;
  let killTimer: NodeJS.Timeout | undefined;
  const onSignal = (sig: string) => {
    if (stopping) {
      io.err(`second ${sig}: killing every node\n`);
      killAll('SIGKILL');
      return;
    }
    stopping = true;
    io.err(`${sig}: stopping ${children.filter((c) => !c.done).length} node(s)\n`);
    killAll('SIGTERM');
    killTimer = setTimeout(() => {
      io.err(`nodes still running after ${STOP_GRACE_MS / 1000} s: killing them\n`);
      killAll('SIGKILL');
    }, STOP_GRACE_MS);
    killTimer.unref();
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  signals.on('SIGINT', onInt);
  signals.on('SIGTERM', onTerm);
  try {
    return await finished;
  } finally {
    clearTimeout(killTimer);
    signals.off('SIGINT', onInt);
    signals.off('SIGTERM', onTerm);
    process.off('exit', onExit);
  }
}

export async function runTestnet(args: string[], io: CliIo, deps: TestnetStartDeps = {}): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'init-files':
      return runInitFiles(rest, io);
    case 'start':
      return runTestnetStart(rest, io, deps);
    case undefined:
      io.err(TESTNET_USAGE);
      return EXIT_USAGE;
    case 'help':
    case '--help':
    case '-h':
      io.out(TESTNET_USAGE);
      return EXIT_OK;
    default:
      throw new UsageError(`unknown testnet subcommand "${sub}" (want init-files or start)`);
  }
}
