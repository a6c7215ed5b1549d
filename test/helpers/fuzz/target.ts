/**
 * What the surfaces need to know of the node under test: its ports and a few real values (an
 * account address, a block hash, the denom) so the seed corpus is made of valid requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { getJson, type Ports } from '../node.js';

export interface FuzzTarget {
  ports: Ports;
  /** Bech32 account addresses from the genesis. */
  addresses: string[];
  denom: string;
  /** Hex (upper case) of the hash of block 1. */
  blockHash: string;
  /** Hex of the validator's address. */
  validatorAddress: string;
  chainId: string;
}

export async function collectTarget(home: string, ports: Ports): Promise<FuzzTarget> {
  const genesis = JSON.parse(fs.readFileSync(path.join(home, 'config/genesis.json'), 'utf8'));
  const balances: Array<{ address: string; coins: Array<{ denom: string }> }> = genesis.app_state?.bank?.balances ?? [];
  const addresses = balances.map((b) => b.address);
  const denom = balances[0]?.coins[0]?.denom ?? 'stake';
  const blk = await getJson(`http://127.0.0.1:${ports.rpc}/block?height=1`);
  const status = await getJson(`http://127.0.0.1:${ports.rpc}/status`);
  return {
    ports,
    addresses: addresses.length > 0 ? addresses : ['chain1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnrql8a'],
    denom,
    blockHash: blk.body.result.block_id.hash,
    validatorAddress: status.body.result.validator_info.address,
    chainId: genesis.chain_id,
  };
}
