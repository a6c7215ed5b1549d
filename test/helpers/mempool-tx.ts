/**
 * What the mempool RPC tests share: unique bank transfers the JSON tx decoder accepts, their
 * base64 and URI (0x-hex) forms, and a node that makes no block for a minute, so that its mempool
 * keeps what it is given.
 */
import { devAccounts } from '../../src/keys/devaccounts.js';
import { startTestNode, type TestNode } from './inproc.js';
import { utf8 } from './rpc3.js';

const [ALICE, BOB] = devAccounts();
let sent = 0;
/** A bank transfer the JSON tx decoder accepts; the memo makes each one unique. */
export function transferTx(pad = 0): Uint8Array {
  sent++;
  const msg = { '@type': '/chain.bank.v1beta1.MsgSend', from_address: ALICE!.bech32, to_address: BOB!.bech32, amount: [{ denom: 'achain', amount: '1' }] };
  const memo = `tx ${sent} ${'x'.repeat(pad)}`;
  return utf8(JSON.stringify({ body: { messages: [msg], memo }, auth_info: { fee: { amount: [], gas_limit: '200000' } } }));
}
export const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
/** The URI form of a byte argument: 0x-hex. */
export const hexArg = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
/** A node whose first block comes only after 60 s: the mempool keeps what it is given. */
export function idleNode(opts: { json?: boolean; flags?: Record<string, string | number | boolean> } = {}): Promise<TestNode> {
  return startTestNode({ timeoutCommit: '60s', txDecoder: opts.json ? 'json' : undefined, flags: opts.flags });
}
