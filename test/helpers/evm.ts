/**
 * Shared pieces of the EVM tests and bench: the TestToken fixture, keys, signed txs, ABI words.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Common } from '@ethereumjs/common';
import { type TypedTransaction, createTx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes, privateToAddress, type EOACode7702AuthorizationListBytesItem } from '@ethereumjs/util';
import { getCryptoBackend } from '../../src/crypto/backend.js';
import { packageRoot } from '../../src/crypto/native.js';
import { allocPorts, runCli, startNode, tmpHome, waitFor, type Ports, type RunningNode } from './node.js';

export interface TokenFixture {
  compiler: string;
  bytecode: string;
  deployedBytecode: string;
  abi: unknown[];
}

export function loadToken(): TokenFixture {
  return JSON.parse(readFileSync(join(packageRoot(), 'test/fixtures/evm/TestToken.json'), 'utf8')) as TokenFixture;
}

export const SEL_TRANSFER = hexToBytes('0xa9059cbb');
export const SEL_BALANCE_OF = hexToBytes('0x70a08231');

export function keccak(data: Uint8Array): Uint8Array {
  return getCryptoBackend().keccak256(data);
}

/** keccak("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = keccak(new TextEncoder().encode('Transfer(address,address,uint256)'));

export function word(x: bigint | Uint8Array): Uint8Array {
  const w = new Uint8Array(32);
  if (typeof x === 'bigint') {
    let v = x;
    for (let i = 31; i >= 0 && v > 0n; i--) {
      w[i] = Number(v & 0xffn);
      v >>= 8n;
    }
  } else {
    w.set(x, 32 - x.length);
  }
  return w;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function transferData(to: Uint8Array, amount: bigint): Uint8Array {
  return concat(SEL_TRANSFER, word(to), word(amount));
}

export function approveData(spender: Uint8Array, amount: bigint): Uint8Array {
  return concat(hexToBytes('0x095ea7b3'), word(spender), word(amount));
}

export function transferFromData(from: Uint8Array, to: Uint8Array, amount: bigint): Uint8Array {
  return concat(hexToBytes('0x23b872dd'), word(from), word(to), word(amount));
}

export function allowanceData(owner: Uint8Array, spender: Uint8Array): Uint8Array {
  return concat(hexToBytes('0xdd62ed3e'), word(owner), word(spender));
}

export function balanceOfData(who: Uint8Array): Uint8Array {
  return concat(SEL_BALANCE_OF, word(who));
}

/** The token's deploy data for a total supply minted to the deployer. */
export function deployData(supply: bigint): Uint8Array {
  return concat(hexToBytes(loadToken().bytecode as `0x${string}`), word(supply));
}

/** The storage slot of balanceOf[holder] (mapping at slot 1: keccak(holder ‖ 1)). */
export function balanceSlot(holder: Uint8Array): Uint8Array {
  return keccak(concat(word(holder), word(1n)));
}

export interface Key {
  priv: Uint8Array;
  address: Uint8Array;
}

export function makeKeys(n: number, seed = 'chaind-evm'): Key[] {
  const keys: Key[] = [];
  for (let i = 0; i < n; i++) {
    const priv = keccak(new TextEncoder().encode(`${seed}-${i}`));
    keys.push({ priv, address: privateToAddress(priv) });
  }
  return keys;
}

export interface TxSpec {
  type?: 0 | 1 | 2 | 4;
  nonce: bigint;
  to?: Uint8Array;
  value?: bigint;
  data?: Uint8Array;
  gasLimit?: bigint;
  /** Gas price (fee cap and tip for type 2); default 1 wei. */
  price?: bigint;
  /** Types 2 and 4: a fee cap above the tip (`price`). */
  maxFee?: bigint;
  /** Types 1, 2 and 4. */
  accessList?: { address: string; storageKeys: string[] }[];
  /** Type 4 (EIP-7702): signed authorizations (eoaCode7702SignAuthorization). */
  authorizationList?: EOACode7702AuthorizationListBytesItem[];
}

/** A signed tx (gas price `price`, default 1 wei; fee cap = tip = price for type 2). Signs with @noble: slow. */
export function signTx(common: Common, key: Pick<Key, 'priv'>, spec: TxSpec): TypedTransaction {
  const type = spec.type ?? 2;
  const base = {
    type,
    nonce: spec.nonce,
    to: spec.to === undefined ? undefined : bytesToHex(spec.to),
    value: spec.value ?? 0n,
    data: spec.data ?? new Uint8Array(0),
    gasLimit: spec.gasLimit ?? 200_000n,
  };
  const price = spec.price ?? 1n;
  const fees = type >= 2 ? { maxFeePerGas: spec.maxFee ?? price, maxPriorityFeePerGas: price } : { gasPrice: price };
  const lists = {
    ...(spec.accessList ? { accessList: spec.accessList as never } : {}),
    ...(spec.authorizationList ? { authorizationList: spec.authorizationList } : {}),
  };
  return createTx({ ...base, ...fees, ...lists }, { common }).sign(key.priv);
}

// ---- Clients, devnet and anvil (test/conformance/evm-clients.test.ts) ----

export interface ContractArtifact {
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
}

/** test/fixtures/evm/Probe.json: the Probe and Child contracts (scripts/compile-evm-fixtures.mjs). */
export function loadProbe(): { compiler: string; contracts: { Probe: ContractArtifact; Child: ContractArtifact } } {
  return JSON.parse(readFileSync(join(packageRoot(), 'test/fixtures/evm/Probe.json'), 'utf8'));
}

export type RpcAnswer = { result?: any; error?: { code: number; message: string; data?: string } };

/** One JSON-RPC call over HTTP; the whole answer (result or error). */
export async function rpcCall(url: string, method: string, params: unknown[] = []): Promise<RpcAnswer> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(60_000),
  });
  return (await r.json()) as RpcAnswer;
}

/** One JSON-RPC call over HTTP; its result, or a thrown Error with the JSON-RPC error. */
export async function rpcOk(url: string, method: string, params: unknown[] = []): Promise<any> {
  const a = await rpcCall(url, method, params);
  if (a.error) throw new Error(`${method}: ${JSON.stringify(a.error)}`);
  return a.result;
}

export interface EvmDevnet {
  home: string;
  ports: Ports;
  node: RunningNode;
  /** http://127.0.0.1:<json-rpc port> */
  url: string;
  stop(): void;
}

/**
 * A devnet node as a separate process (`chaind init --dev`, `chaind start`, real LMDB) with
 * `timeout_commit` shortened for fast blocks; resolves once eth_blockNumber ≥ 1.
 */
export async function startEvmDevnet(opts: { timeoutCommit?: string; api?: string[]; httpTimeout?: string } = {}): Promise<EvmDevnet> {
  const home = tmpHome();
  const init = runCli(['init', 'evm', '--home', home, '--chain-id', 'evm-1', '--dev']);
  if (init.status !== 0) throw new Error(`chaind init failed: ${init.stderr}`);
  const cfgPath = join(home, 'config/config.toml');
  writeFileSync(cfgPath, readFileSync(cfgPath, 'utf8').replace(/timeout_commit = "[^"]*"/, `timeout_commit = "${opts.timeoutCommit ?? '200ms'}"`));
  if (opts.api !== undefined) {
    // `[json-rpc] api`: the namespaces served (e.g. debug for the tracer tests).
    const appPath = join(home, 'config/app.toml');
    writeFileSync(appPath, readFileSync(appPath, 'utf8').replace(/^api = "[^"]*"/m, `api = "${opts.api.join(',')}"`));
  }
  if (opts.httpTimeout !== undefined) {
    // `[json-rpc] http-timeout`: an HTTP call running longer is answered -32002 (default 30s).
    const appPath = join(home, 'config/app.toml');
    const app = readFileSync(appPath, 'utf8');
    if (!/^http-timeout = "[^"]*"/m.test(app)) throw new Error('app.toml has no http-timeout');
    writeFileSync(appPath, app.replace(/^http-timeout = "[^"]*"/m, `http-timeout = "${opts.httpTimeout}"`));
  }
  const ports = await allocPorts();
  const node = startNode(home, ports);
  const url = `http://127.0.0.1:${ports.jsonRpc}/`;
  const stop = () => {
    node.proc.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await waitFor('eth_blockNumber ≥ 1', async () => BigInt(await rpcOk(url, 'eth_blockNumber')) >= 1n, 180_000);
  } catch (e) {
    const out = node.output().slice(-3000);
    stop();
    throw new Error(`${(e as Error).message}\n${out}`);
  }
  return { home, ports, node, url, stop };
}

export const ANVIL_BIN = join(packageRoot(), 'node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil');
export const CAST_BIN = join(packageRoot(), 'node_modules/@foundry-rs/cast-linux-amd64/bin/cast');

export interface Anvil {
  proc: ChildProcess;
  url: string;
  output: () => string;
  stop(): void;
}

/**
 * Foundry's anvil on 127.0.0.1 (a port it picks: `--port 0`, read back from its banner), with the
 * same dev mnemonic as chaind's devnet (anvil's default: `test test … junk`), automine, and the
 * extra arguments given (hardfork, chain id, base fee…).
 */
export async function startAnvil(args: string[]): Promise<Anvil> {
  const proc = spawn(ANVIL_BIN, ['--host', '127.0.0.1', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-50_000)));
  proc.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-50_000)));
  const stop = () => {
    proc.kill('SIGKILL');
  };
  try {
    const port = await waitFor('anvil listening', async () => /Listening on 127\.0\.0\.1:(\d+)/.exec(out)?.[1], 60_000, 50);
    const url = `http://127.0.0.1:${port}/`;
    await waitFor('anvil answers', async () => (await rpcOk(url, 'eth_chainId')) !== undefined, 30_000);
    return { proc, url, output: () => out, stop };
  } catch (e) {
    stop();
    throw new Error(`${(e as Error).message}\n${out.slice(-3000)}`);
  }
}
