/**
 * What a CosmJS user must customise to talk to a node that emits the spec names (`chain.*`,
 * `consensus/…`), exactly the list of cosmos/cosmjs:packages/stargate/src/signingstargateclient.ts, built only from CosmJS's
 * own hooks (§4.3): a Comet38Client over a wrapped HttpClient, an accountParser for
 * `/chain.auth.v1beta1.*` accounts, a Registry and AminoTypes with the `/chain.*` type URLs and
 * `chain-sdk/*` amino names. CosmJS itself is not modified. The wrapper counts what it rewrote so
 * tests can show which customisations the node actually needed.
 */
import { encodeEd25519Pubkey, encodeSecp256k1Pubkey, type Pubkey } from '@cosmjs/amino';
import { Registry, type GeneratedType } from '@cosmjs/proto-signing';
import { AminoTypes, accountFromAny, createBankAminoConverters, defaultRegistryTypes, type Account } from '@cosmjs/stargate';
import { Comet38Client, HttpClient, type RpcClient } from '@cosmjs/tendermint-rpc';
import { BaseAccount, ModuleAccount } from 'cosmjs-types/cosmos/auth/v1beta1/auth';
import { MsgExec, MsgExecResponse, MsgGrant, MsgGrantResponse, MsgRevoke, MsgRevokeResponse } from 'cosmjs-types/cosmos/authz/v1beta1/tx';
import { GenericAuthorization } from 'cosmjs-types/cosmos/authz/v1beta1/authz';
import { SendAuthorization } from 'cosmjs-types/cosmos/bank/v1beta1/authz';
import { MsgSend, MsgSendResponse } from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import { PubKey as Secp256k1PubKey } from 'cosmjs-types/cosmos/crypto/secp256k1/keys';
import { PubKey as Ed25519PubKey } from 'cosmjs-types/cosmos/crypto/ed25519/keys';
import type { Any } from 'cosmjs-types/google/protobuf/any';

type Request = Parameters<RpcClient['execute']>[0];
type Response = Awaited<ReturnType<RpcClient['execute']>>;

export interface RewriteCounts {
  /** abci_query paths rewritten `/cosmos.` → `/chain.`. */
  queryPaths: number;
  /** `consensus/PubKey…` key types rewritten to `tendermint/PubKey…`. */
  keyTypes: number;
}

export interface ChainCometOptions {
  /** Rewrite abci_query paths `/cosmos.` → `/chain.` (§4.4 1a); default true. */
  rewriteQueryPaths?: boolean;
}

function rewriteKeyTypes(v: unknown, counts: RewriteCounts): unknown {
  if (Array.isArray(v)) return v.map((x) => rewriteKeyTypes(x, counts));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k === 'type' && typeof x === 'string' && x.startsWith('consensus/PubKey')) {
      counts.keyTypes++;
      out[k] = `tendermint/${x.slice('consensus/'.length)}`;
    } else out[k] = rewriteKeyTypes(x, counts);
  }
  return out;
}

/** A Comet38Client over an HttpClient that undoes the spec renames CosmJS cannot take (§4.4 1). */
export function chainComet(url: string, opts: ChainCometOptions = {}): { comet: Comet38Client; counts: RewriteCounts; requests: Request[] } {
  const http = new HttpClient(url);
  const counts: RewriteCounts = { queryPaths: 0, keyTypes: 0 };
  const requests: Request[] = [];
  const rpc: RpcClient = {
    execute: async (req: Request): Promise<Response> => {
      let r = req;
      const params = req.params as Record<string, unknown>;
      if (opts.rewriteQueryPaths !== false && req.method === 'abci_query' && typeof params.path === 'string' && params.path.startsWith('/cosmos.')) {
        counts.queryPaths++;
        r = { ...req, params: { ...params, path: `/chain.${params.path.slice('/cosmos.'.length)}` } };
      }
      requests.push(r);
      const res = await http.execute(r);
      return { ...res, result: rewriteKeyTypes(res.result, counts) } as Response;
    },
    disconnect: () => http.disconnect(),
  };
  return { comet: Comet38Client.create(rpc), counts, requests };
}

/** A pubkey Any in either spelling, as CosmJS's amino Pubkey. */
export function pubkeyFromAny(a: Any | undefined): Pubkey | null {
  if (a === undefined) return null;
  switch (a.typeUrl) {
    case '/chain.crypto.secp256k1.PubKey':
    case '/cosmos.crypto.secp256k1.PubKey':
      return encodeSecp256k1Pubkey(Secp256k1PubKey.decode(a.value).key);
    case '/chain.crypto.ed25519.PubKey':
    case '/cosmos.crypto.ed25519.PubKey':
      return encodeEd25519Pubkey(Ed25519PubKey.decode(a.value).key);
    default:
      throw new Error(`Pubkey type URL '${a.typeUrl}' not recognized`);
  }
}

/** accountParser for `/chain.auth.v1beta1.BaseAccount` and `ModuleAccount` (§4.4 2). */
export function chainAccountParser(any: Any): Account {
  const base = (b: BaseAccount): Account => ({ address: b.address, pubkey: pubkeyFromAny(b.pubKey), accountNumber: b.accountNumber, sequence: Number(b.sequence) });
  switch (any.typeUrl) {
    case '/chain.auth.v1beta1.BaseAccount':
      return base(BaseAccount.decode(any.value));
    case '/chain.auth.v1beta1.ModuleAccount': {
      const m = ModuleAccount.decode(any.value);
      if (!m.baseAccount) throw new Error('module account without base account');
      return base(m.baseAccount);
    }
    default:
      return accountFromAny(any);
  }
}

/** The cosmjs-types codecs under the spec type URLs; they are wire-identical (§4.3). */
export const CHAIN_TYPES: ReadonlyArray<[string, GeneratedType]> = [
  ['/chain.bank.v1beta1.MsgSend', MsgSend],
  ['/chain.bank.v1beta1.MsgSendResponse', MsgSendResponse],
  ['/chain.bank.v1beta1.SendAuthorization', SendAuthorization],
  ['/chain.authz.v1beta1.GenericAuthorization', GenericAuthorization],
  ['/chain.authz.v1beta1.MsgGrant', MsgGrant],
  ['/chain.authz.v1beta1.MsgGrantResponse', MsgGrantResponse],
  ['/chain.authz.v1beta1.MsgExec', MsgExec],
  ['/chain.authz.v1beta1.MsgExecResponse', MsgExecResponse],
  ['/chain.authz.v1beta1.MsgRevoke', MsgRevoke],
  ['/chain.authz.v1beta1.MsgRevokeResponse', MsgRevokeResponse],
];

/** CosmJS's default registry plus the `/chain.*` types (§4.4 3). */
export function chainRegistry(): Registry {
  return new Registry([...defaultRegistryTypes, ...CHAIN_TYPES]);
}

/** AminoTypes with CosmJS's bank converter under `/chain.bank.v1beta1.MsgSend` ↔ `chain-sdk/MsgSend` (§4.4 4). */
export function chainAminoTypes(): AminoTypes {
  const bank = createBankAminoConverters()['/cosmos.bank.v1beta1.MsgSend']!;
  return new AminoTypes({ '/chain.bank.v1beta1.MsgSend': { ...bank, aminoType: 'chain-sdk/MsgSend' } });
}
