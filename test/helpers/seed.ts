/**
 * A known chain state for the query conformance tests (grpc-js, REST): signed txs (test/helpers/
 * txsign.ts) sent through the node RPC's broadcast_tx_commit, so queries have accounts with and
 * without keys, a new account, several grants of both authorization types, and heights before and
 * after each change.
 *
 * After seed():
 *   S0 (dev account 10) sent 1000achain + 5000achain fee to FRESH (a new account) at `sendHeight`,
 *     and granted S1 a SendAuthorization (spend limit 500achain, no expiry) and S2 a
 *     GenericAuthorization for MsgSend (expiring in a day), and S1 a GenericAuthorization for
 *     authz MsgRevoke;
 *   S3 (dev account 13) granted S1 a GenericAuthorization for MsgSend;
 *   so S0 has 3 grants as granter, S1 has 3 as grantee (from S0 twice and from S3 once).
 */
import { create } from '@bufbuild/protobuf';
import { TimestampSchema } from '@bufbuild/protobuf/wkt';
import { GenericAuthorizationSchema, GrantSchema } from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import { MsgGrantSchema } from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import { SendAuthorizationSchema } from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import { CoinSchema } from '../../src/gen/chain/base/v1beta1/coin_pb.js';
import type { TestNode } from './inproc.js';
import { anyOf, buildTx, devKeys, freshKey, msgSend, type DevAccount } from './txsign.js';

export const DENOM = 'achain';
export const DEV_BALANCE = 10n ** 24n;
export const KEYS = devKeys();
export const S0 = KEYS[10]!;
export const S1 = KEYS[11]!;
export const S2 = KEYS[12]!;
export const S3 = KEYS[13]!;
export const FRESH = freshKey(0x71);
export const FEE = { amount: [{ denom: DENOM, amount: 5000 }], gasLimit: 200_000n };

export async function rpc(tn: TestNode, method: string, params: Record<string, unknown>): Promise<any> {
  const r = await fetch(`${tn.base}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await r.json()) as { error?: unknown; result: any };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

export interface Committed {
  hash: string;
  height: bigint;
  gasUsed: bigint;
}

/** broadcast_tx_commit; throws unless both CheckTx and DeliverTx succeed. */
export async function commitTx(tn: TestNode, tx: Uint8Array): Promise<Committed> {
  const r = await rpc(tn, 'broadcast_tx_commit', { tx: Buffer.from(tx).toString('base64') });
  if (r.check_tx.code !== 0) throw new Error(`check_tx ${r.check_tx.code}: ${r.check_tx.log}`);
  if (r.tx_result.code !== 0) throw new Error(`tx_result ${r.tx_result.code}: ${r.tx_result.log}`);
  return { hash: r.hash, height: BigInt(r.height), gasUsed: BigInt(r.tx_result.gas_used) };
}

function coins(amount: bigint) {
  return [create(CoinSchema, { denom: DENOM, amount: amount.toString() })];
}

export function grantMsg(granter: DevAccount, grantee: DevAccount, kind: { send: bigint } | { generic: string }, expirationSec?: bigint) {
  const authorization =
    'send' in kind
      ? anyOf(SendAuthorizationSchema, create(SendAuthorizationSchema, { spendLimit: coins(kind.send), allowList: [] }))
      : anyOf(GenericAuthorizationSchema, create(GenericAuthorizationSchema, { msg: kind.generic }));
  const expiration = expirationSec === undefined ? undefined : create(TimestampSchema, { seconds: expirationSec, nanos: 0 });
  return anyOf(MsgGrantSchema, create(MsgGrantSchema, { granter: granter.bech32, grantee: grantee.bech32, grant: create(GrantSchema, { authorization, expiration }) }));
}

export interface Seeded {
  chainId: string;
  /** Height of the block with S0's send (S0 sequence 0 → 1, FRESH created). */
  sendHeight: bigint;
  send: Committed;
  /** Height after the last grant. */
  lastHeight: bigint;
  /** Unix seconds of the S0→S2 grant's expiration. */
  expiry: bigint;
}

export async function seed(tn: TestNode): Promise<Seeded> {
  const chainId = tn.ctx.genesis.chainId;
  const send = await commitTx(
    tn,
    buildTx({ chainId, msgs: [msgSend(S0.bech32, FRESH.bech32, [{ denom: DENOM, amount: 1000 }])], signers: [{ key: S0, accountNumber: 10n, sequence: 0n }], fee: FEE }).bytes,
  );
  const expiry = BigInt(Math.floor(Date.now() / 1000) + 86_400);
  // S0's three grants in one tx (sequence 1).
  await commitTx(
    tn,
    buildTx({
      chainId,
      msgs: [grantMsg(S0, S1, { send: 500n }), grantMsg(S0, S2, { generic: '/chain.bank.v1beta1.MsgSend' }, expiry), grantMsg(S0, S1, { generic: '/chain.authz.v1beta1.MsgRevoke' })],
      signers: [{ key: S0, accountNumber: 10n, sequence: 1n }],
      fee: FEE,
    }).bytes,
  );
  const last = await commitTx(
    tn,
    buildTx({ chainId, msgs: [grantMsg(S3, S1, { generic: '/chain.bank.v1beta1.MsgSend' })], signers: [{ key: S3, accountNumber: 13n, sequence: 0n }], fee: FEE }).bytes,
  );
  return { chainId, sendHeight: send.height, send, lastHeight: last.height, expiry };
}
