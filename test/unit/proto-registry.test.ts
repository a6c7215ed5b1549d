/**
 * The protobuf layer: generated descriptors against cosmjs-types (SDK 0.53 field numbers), the
 * registry's two spellings, Any packing, HTTP annotations and SDK protobuf JSON.
 */
import t from 'tap';
import { create, fromBinary, getOption, hasOption, toBinary, type DescMessage, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate, TimestampSchema, type Any } from '@bufbuild/protobuf/wkt';
import * as cjAuth from 'cosmjs-types/cosmos/auth/v1beta1/auth';
import * as cjAuthQuery from 'cosmjs-types/cosmos/auth/v1beta1/query';
import * as cjAuthTx from 'cosmjs-types/cosmos/auth/v1beta1/tx';
import * as cjAuthGenesis from 'cosmjs-types/cosmos/auth/v1beta1/genesis';
import * as cjAuthz from 'cosmjs-types/cosmos/authz/v1beta1/authz';
import * as cjAuthzTx from 'cosmjs-types/cosmos/authz/v1beta1/tx';
import * as cjAuthzQuery from 'cosmjs-types/cosmos/authz/v1beta1/query';
import * as cjAuthzGenesis from 'cosmjs-types/cosmos/authz/v1beta1/genesis';
import * as cjBank from 'cosmjs-types/cosmos/bank/v1beta1/bank';
import * as cjBankTx from 'cosmjs-types/cosmos/bank/v1beta1/tx';
import * as cjBankAuthz from 'cosmjs-types/cosmos/bank/v1beta1/authz';
import * as cjBankQuery from 'cosmjs-types/cosmos/bank/v1beta1/query';
import * as cjStakingAuthz from 'cosmjs-types/cosmos/staking/v1beta1/authz';
import * as cjTx from 'cosmjs-types/cosmos/tx/v1beta1/tx';
import * as cjService from 'cosmjs-types/cosmos/tx/v1beta1/service';
import * as cjAbci from 'cosmjs-types/cosmos/base/abci/v1beta1/abci';
import * as cjSecp from 'cosmjs-types/cosmos/crypto/secp256k1/keys';
import * as cjMultisig from 'cosmjs-types/cosmos/crypto/multisig/keys';
import * as cjEvidence from 'cosmjs-types/tendermint/types/evidence';
import * as A from '../../src/gen/chain/auth/v1beta1/auth_pb.js';
import * as AQ from '../../src/gen/chain/auth/v1beta1/query_pb.js';
import * as ATx from '../../src/gen/chain/auth/v1beta1/tx_pb.js';
import * as AG from '../../src/gen/chain/auth/v1beta1/genesis_pb.js';
import * as Z from '../../src/gen/chain/authz/v1beta1/authz_pb.js';
import * as ZTx from '../../src/gen/chain/authz/v1beta1/tx_pb.js';
import * as ZQ from '../../src/gen/chain/authz/v1beta1/query_pb.js';
import * as ZG from '../../src/gen/chain/authz/v1beta1/genesis_pb.js';
import * as ZE from '../../src/gen/chain/authz/v1beta1/event_pb.js';
import * as B from '../../src/gen/chain/bank/v1beta1/bank_pb.js';
import * as BTx from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import * as BAuthz from '../../src/gen/chain/bank/v1beta1/authz_pb.js';
import * as BQ from '../../src/gen/chain/bank/v1beta1/query_pb.js';
import * as SAuthz from '../../src/gen/chain/staking/v1beta1/authz_pb.js';
import * as Tx from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import * as Svc from '../../src/gen/chain/tx/v1beta1/service_pb.js';
import * as Abci from '../../src/gen/chain/base/abci/v1beta1/abci_pb.js';
import * as Secp from '../../src/gen/chain/crypto/secp256k1/keys_pb.js';
import * as Multisig from '../../src/gen/chain/crypto/multisig/keys_pb.js';
import * as Evidence from '../../src/gen/consensus/types/evidence_pb.js';
import { SignMode } from '../../src/gen/chain/tx/signing/v1beta1/signing_pb.js';
import { http } from '../../src/gen/google/api/annotations_pb.js';
import {
  anyIs,
  canonicalTypeName,
  emitTypeUrl,
  packAny,
  protoFiles,
  protoRegistry,
  resolveTypeUrl,
  typeUrlOf,
  unpackAny,
  unpackAnyAs,
  UnknownTypeUrlError,
  withEmitTypeUrl,
} from '../../src/proto/registry.js';
import {
  anyFromProtoJson,
  anyToProtoJson,
  fromProtoJson,
  fromProtoJsonString,
  goJsonStringify,
  toProtoJson,
  toProtoJsonString,
} from '../../src/proto/json.js';
import { rejectUnknownFields } from '../../src/tx/codec.js';
import { httpBindings } from '../../src/proto/http.js';
import { createNames } from '../../src/names/index.js';

/** The slice of a cosmjs-types codec the cross-check uses. */
interface CjCodec {
  encode(m: unknown): { finish(): Uint8Array };
  fromPartial(o: unknown): unknown;
}
const cj = (c: unknown): CjCodec => c as CjCodec;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);

// Fully populated cosmjs-types messages (upstream type URLs inside): decoding them with our
// descriptors must leave no unknown field anywhere, and re-encoding must give the same bytes.
const secpKey = Uint8Array.from([2, ...bytes(32, 7)]);
const cjPubKeyAny = { typeUrl: '/cosmos.crypto.secp256k1.PubKey', value: cjSecp.PubKey.encode({ key: secpKey }).finish() };
const cjCoin = { denom: 'stake', amount: '100' };
const cjTs = { seconds: 1798761600n, nanos: 5 };
const cjPage = { key: bytes(3, 1), offset: 2n, limit: 3n, countTotal: true, reverse: true };
const cjPageRes = { nextKey: bytes(2, 9), total: 4n };
const cjMsgSend = { fromAddress: 'chain1from', toAddress: 'chain1to', amount: [cjCoin] };
const cjMsgSendAny = { typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: cjBankTx.MsgSend.encode(cjMsgSend).finish() };
const cjGenericAny = { typeUrl: '/cosmos.authz.v1beta1.GenericAuthorization', value: cjAuthz.GenericAuthorization.encode({ msg: '/cosmos.bank.v1beta1.MsgSend' }).finish() };
const cjBaseAccount = { address: 'chain1acc', pubKey: cjPubKeyAny, accountNumber: 7n, sequence: 3n };
const cjEvent = { type: 'transfer', attributes: [{ key: 'amount', value: '1stake', index: true }] };
const cjModeMulti = {
  multi: { bitarray: { extraBitsStored: 3, elems: bytes(1, 0xe0) }, modeInfos: [{ single: { mode: 1 } }, { single: { mode: 127 } }] },
};
const cjTxBody = {
  messages: [cjMsgSendAny],
  memo: 'memo',
  timeoutHeight: 9n,
  unordered: true,
  timeoutTimestamp: cjTs,
  extensionOptions: [cjGenericAny],
  nonCriticalExtensionOptions: [cjGenericAny],
};
const cjAuthInfo = {
  signerInfos: [{ publicKey: cjPubKeyAny, modeInfo: { single: { mode: 1 } }, sequence: 5n }, { modeInfo: cjModeMulti, sequence: 6n }],
  fee: { amount: [cjCoin], gasLimit: 200000n, payer: 'chain1payer', granter: 'chain1granter' },
  tip: { amount: [cjCoin], tipper: 'chain1tipper' },
};
const cjTxResponse = {
  height: 5n,
  txhash: 'AB',
  codespace: 'sdk',
  code: 5,
  data: '0A',
  rawLog: 'log',
  logs: [{ msgIndex: 1, log: 'l', events: [{ type: 'message', attributes: [{ key: 'k', value: 'v' }] }] }],
  info: 'info',
  gasWanted: 10n,
  gasUsed: 9n,
  tx: { typeUrl: '/cosmos.tx.v1beta1.Tx', value: cjTx.Tx.encode({ body: cjTxBody, authInfo: cjAuthInfo, signatures: [bytes(64, 1)] }).finish() },
  timestamp: '2027-01-01T00:00:00Z',
  events: [cjEvent],
};
const cjBlockId = { hash: bytes(32, 1), partSetHeader: { total: 1, hash: bytes(32, 2) } };
const cjVote = {
  type: 2,
  height: 5n,
  round: 1,
  blockId: cjBlockId,
  timestamp: cjTs,
  validatorAddress: bytes(20, 3),
  validatorIndex: 4,
  signature: bytes(64, 5),
  extension: bytes(2, 6),
  extensionSignature: bytes(64, 7),
};
const cjHeader = {
  version: { block: 11n, app: 1n },
  chainId: 'c',
  height: 5n,
  time: cjTs,
  lastBlockId: cjBlockId,
  lastCommitHash: bytes(32, 1),
  dataHash: bytes(32, 2),
  validatorsHash: bytes(32, 3),
  nextValidatorsHash: bytes(32, 4),
  consensusHash: bytes(32, 5),
  appHash: bytes(32, 6),
  lastResultsHash: bytes(32, 7),
  evidenceHash: bytes(32, 8),
  proposerAddress: bytes(20, 9),
};
const cjCommit = { height: 4n, round: 1, blockId: cjBlockId, signatures: [{ blockIdFlag: 2, validatorAddress: bytes(20, 1), timestamp: cjTs, signature: bytes(64, 2) }] };
const cjValidator = { address: bytes(20, 1), pubKey: { ed25519: bytes(32, 4) }, votingPower: 10n, proposerPriority: -3n };
const cjEvidenceList = {
  evidence: [
    { duplicateVoteEvidence: { voteA: cjVote, voteB: cjVote, totalVotingPower: 10n, validatorPower: 5n, timestamp: cjTs } },
    {
      lightClientAttackEvidence: {
        conflictingBlock: { signedHeader: { header: cjHeader, commit: cjCommit }, validatorSet: { validators: [cjValidator], proposer: cjValidator, totalVotingPower: 10n } },
        commonHeight: 3n,
        byzantineValidators: [cjValidator],
        totalVotingPower: 10n,
        timestamp: cjTs,
      },
    },
  ],
};
const cjBlock = { header: cjHeader, data: { txs: [bytes(5, 1)] }, evidence: cjEvidenceList, lastCommit: cjCommit };

const crossChecks: Array<[string, DescMessage, unknown, unknown]> = [
  ['BaseAccount', A.BaseAccountSchema, cjAuth.BaseAccount, cjBaseAccount],
  ['ModuleAccount', A.ModuleAccountSchema, cjAuth.ModuleAccount, { baseAccount: cjBaseAccount, name: 'gov', permissions: ['burner'] }],
  ['ModuleCredential', A.ModuleCredentialSchema, cjAuth.ModuleCredential, { moduleName: 'm', derivationKeys: [bytes(2, 1)] }],
  [
    'auth Params (fields 1-5)',
    A.ParamsSchema,
    cjAuth.Params,
    { maxMemoCharacters: 256n, txSigLimit: 7n, txSizeCostPerByte: 10n, sigVerifyCostEd25519: 590n, sigVerifyCostSecp256k1: 1000n },
  ],
  ['QueryAccountsRequest', AQ.QueryAccountsRequestSchema, cjAuthQuery.QueryAccountsRequest, { pagination: cjPage }],
  ['QueryAccountsResponse', AQ.QueryAccountsResponseSchema, cjAuthQuery.QueryAccountsResponse, { accounts: [cjPubKeyAny], pagination: cjPageRes }],
  ['QueryAccountAddressByIDRequest', AQ.QueryAccountAddressByIDRequestSchema, cjAuthQuery.QueryAccountAddressByIDRequest, { id: 1n, accountId: 2n }],
  ['QueryAccountAddressByIDResponse', AQ.QueryAccountAddressByIDResponseSchema, cjAuthQuery.QueryAccountAddressByIDResponse, { accountAddress: 'a' }],
  ['QueryModuleAccountByNameResponse', AQ.QueryModuleAccountByNameResponseSchema, cjAuthQuery.QueryModuleAccountByNameResponse, { account: cjPubKeyAny }],
  ['Bech32PrefixResponse', AQ.Bech32PrefixResponseSchema, cjAuthQuery.Bech32PrefixResponse, { bech32Prefix: 'chain' }],
  ['AddressBytesToStringRequest', AQ.AddressBytesToStringRequestSchema, cjAuthQuery.AddressBytesToStringRequest, { addressBytes: bytes(20, 1) }],
  ['AddressStringToBytesResponse', AQ.AddressStringToBytesResponseSchema, cjAuthQuery.AddressStringToBytesResponse, { addressBytes: bytes(20, 1) }],
  ['QueryAccountInfoResponse', AQ.QueryAccountInfoResponseSchema, cjAuthQuery.QueryAccountInfoResponse, { info: cjBaseAccount }],
  ['auth MsgUpdateParams', ATx.MsgUpdateParamsSchema, cjAuthTx.MsgUpdateParams, { authority: 'gov', params: { maxMemoCharacters: 1n, txSigLimit: 2n } }],
  ['auth GenesisState', AG.GenesisStateSchema, cjAuthGenesis.GenesisState, { params: { txSigLimit: 2n }, accounts: [cjPubKeyAny] }],
  ['GenericAuthorization', Z.GenericAuthorizationSchema, cjAuthz.GenericAuthorization, { msg: '/cosmos.bank.v1beta1.MsgSend' }],
  ['Grant', Z.GrantSchema, cjAuthz.Grant, { authorization: cjGenericAny, expiration: cjTs }],
  ['GrantAuthorization', Z.GrantAuthorizationSchema, cjAuthz.GrantAuthorization, { granter: 'g', grantee: 'e', authorization: cjGenericAny, expiration: cjTs }],
  ['GrantQueueItem', Z.GrantQueueItemSchema, cjAuthz.GrantQueueItem, { msgTypeUrls: ['/a', '/b'] }],
  ['MsgGrant', ZTx.MsgGrantSchema, cjAuthzTx.MsgGrant, { granter: 'g', grantee: 'e', grant: { authorization: cjGenericAny, expiration: cjTs } }],
  ['MsgExec', ZTx.MsgExecSchema, cjAuthzTx.MsgExec, { grantee: 'e', msgs: [cjMsgSendAny] }],
  ['MsgExecResponse', ZTx.MsgExecResponseSchema, cjAuthzTx.MsgExecResponse, { results: [bytes(2, 1)] }],
  ['MsgRevoke', ZTx.MsgRevokeSchema, cjAuthzTx.MsgRevoke, { granter: 'g', grantee: 'e', msgTypeUrl: '/x' }],
  ['QueryGrantsRequest', ZQ.QueryGrantsRequestSchema, cjAuthzQuery.QueryGrantsRequest, { granter: 'g', grantee: 'e', msgTypeUrl: '/x', pagination: cjPage }],
  ['QueryGrantsResponse', ZQ.QueryGrantsResponseSchema, cjAuthzQuery.QueryGrantsResponse, { grants: [{ authorization: cjGenericAny }], pagination: cjPageRes }],
  ['QueryGranterGrantsRequest', ZQ.QueryGranterGrantsRequestSchema, cjAuthzQuery.QueryGranterGrantsRequest, { granter: 'g', pagination: cjPage }],
  ['QueryGranteeGrantsResponse', ZQ.QueryGranteeGrantsResponseSchema, cjAuthzQuery.QueryGranteeGrantsResponse, { grants: [{ granter: 'g', grantee: 'e', authorization: cjGenericAny, expiration: cjTs }], pagination: cjPageRes }],
  ['authz GenesisState', ZG.GenesisStateSchema, cjAuthzGenesis.GenesisState, { authorization: [{ granter: 'g', grantee: 'e', authorization: cjGenericAny, expiration: cjTs }] }],
  ['MsgSend', BTx.MsgSendSchema, cjBankTx.MsgSend, cjMsgSend],
  ['SendAuthorization', BAuthz.SendAuthorizationSchema, cjBankAuthz.SendAuthorization, { spendLimit: [cjCoin], allowList: ['chain1a', 'chain1b'] }],
  ['bank Params', B.ParamsSchema, cjBank.Params, { sendEnabled: [{ denom: 'stake', enabled: true }], defaultSendEnabled: true }],
  ['Input', B.InputSchema, cjBank.Input, { address: 'a', coins: [cjCoin] }],
  [
    'Metadata',
    B.MetadataSchema,
    cjBank.Metadata,
    { description: 'd', denomUnits: [{ denom: 'u', exponent: 6, aliases: ['x'] }], base: 'b', display: 'di', name: 'n', symbol: 's', uri: 'u', uriHash: 'h' },
  ],
  ['QueryAllBalancesRequest', BQ.QueryAllBalancesRequestSchema, cjBankQuery.QueryAllBalancesRequest, { address: 'a', pagination: cjPage, resolveDenom: true }],
  ['QueryBalanceRequest', BQ.QueryBalanceRequestSchema, cjBankQuery.QueryBalanceRequest, { address: 'a', denom: 'd' }],
  ['QuerySupplyOfResponse', BQ.QuerySupplyOfResponseSchema, cjBankQuery.QuerySupplyOfResponse, { amount: cjCoin }],
  ['QueryDenomOwnersResponse', BQ.QueryDenomOwnersResponseSchema, cjBankQuery.QueryDenomOwnersResponse, { denomOwners: [{ address: 'a', balance: cjCoin }], pagination: cjPageRes }],
  ['QuerySendEnabledRequest (field 99)', BQ.QuerySendEnabledRequestSchema, cjBankQuery.QuerySendEnabledRequest, { denoms: ['a'], pagination: cjPage }],
  ['StakeAuthorization allow', SAuthz.StakeAuthorizationSchema, cjStakingAuthz.StakeAuthorization, { maxTokens: cjCoin, allowList: { address: ['v1'] }, authorizationType: 1 }],
  ['StakeAuthorization deny', SAuthz.StakeAuthorizationSchema, cjStakingAuthz.StakeAuthorization, { denyList: { address: ['v1', 'v2'] }, authorizationType: 4 }],
  ['TxRaw', Tx.TxRawSchema, cjTx.TxRaw, { bodyBytes: bytes(3, 1), authInfoBytes: bytes(2, 2), signatures: [bytes(64, 3), bytes(64, 4)] }],
  ['TxBody', Tx.TxBodySchema, cjTx.TxBody, cjTxBody],
  ['AuthInfo', Tx.AuthInfoSchema, cjTx.AuthInfo, cjAuthInfo],
  ['SignDoc', Tx.SignDocSchema, cjTx.SignDoc, { bodyBytes: bytes(3, 1), authInfoBytes: bytes(2, 2), chainId: 'c', accountNumber: 9n }],
  [
    'SignDocDirectAux',
    Tx.SignDocDirectAuxSchema,
    cjTx.SignDocDirectAux,
    { bodyBytes: bytes(3, 1), publicKey: cjPubKeyAny, chainId: 'c', accountNumber: 9n, sequence: 2n, tip: { amount: [cjCoin], tipper: 't' } },
  ],
  [
    'AuxSignerData',
    Tx.AuxSignerDataSchema,
    cjTx.AuxSignerData,
    { address: 'a', signDoc: { bodyBytes: bytes(3, 1), chainId: 'c', accountNumber: 1n, sequence: 2n }, mode: 3, sig: bytes(64, 1) },
  ],
  ['Tx', Tx.TxSchema, cjTx.Tx, { body: cjTxBody, authInfo: cjAuthInfo, signatures: [bytes(64, 1)] }],
  ['GetTxsEventRequest', Svc.GetTxsEventRequestSchema, cjService.GetTxsEventRequest, { events: ['a'], pagination: cjPage, orderBy: 2, page: 3n, limit: 4n, query: 'q' }],
  ['GetTxsEventResponse', Svc.GetTxsEventResponseSchema, cjService.GetTxsEventResponse, { txs: [{ body: cjTxBody }], txResponses: [cjTxResponse], pagination: cjPageRes, total: 5n }],
  ['BroadcastTxRequest', Svc.BroadcastTxRequestSchema, cjService.BroadcastTxRequest, { txBytes: bytes(3, 1), mode: 2 }],
  ['SimulateRequest', Svc.SimulateRequestSchema, cjService.SimulateRequest, { tx: { body: cjTxBody }, txBytes: bytes(3, 1) }],
  [
    'SimulateResponse',
    Svc.SimulateResponseSchema,
    cjService.SimulateResponse,
    { gasInfo: { gasWanted: 5n, gasUsed: 4n }, result: { data: bytes(2, 1), log: 'l', events: [cjEvent], msgResponses: [cjGenericAny] } },
  ],
  ['GetTxResponse', Svc.GetTxResponseSchema, cjService.GetTxResponse, { tx: { body: cjTxBody, authInfo: cjAuthInfo }, txResponse: cjTxResponse }],
  ['GetBlockWithTxsRequest', Svc.GetBlockWithTxsRequestSchema, cjService.GetBlockWithTxsRequest, { height: 5n, pagination: cjPage }],
  ['GetBlockWithTxsResponse', Svc.GetBlockWithTxsResponseSchema, cjService.GetBlockWithTxsResponse, { txs: [{ body: cjTxBody }], blockId: cjBlockId, block: cjBlock, pagination: cjPageRes }],
  ['TxEncodeAminoRequest', Svc.TxEncodeAminoRequestSchema, cjService.TxEncodeAminoRequest, { aminoJson: '{}' }],
  ['TxDecodeAminoRequest', Svc.TxDecodeAminoRequestSchema, cjService.TxDecodeAminoRequest, { aminoBinary: bytes(2, 1) }],
  ['TxMsgData', Abci.TxMsgDataSchema, cjAbci.TxMsgData, { data: [{ msgType: '/x', data: bytes(1, 1) }], msgResponses: [cjGenericAny] }],
  ['secp256k1 PubKey', Secp.PubKeySchema, cjSecp.PubKey, { key: secpKey }],
  ['LegacyAminoPubKey', Multisig.LegacyAminoPubKeySchema, cjMultisig.LegacyAminoPubKey, { threshold: 2, publicKeys: [cjPubKeyAny, cjPubKeyAny] }],
  ['EvidenceList', Evidence.EvidenceListSchema, cjEvidence.EvidenceList, cjEvidenceList],
];

t.test('field numbers and types match cosmjs-types (upstream SDK) on the wire', async (t) => {
  for (const [name, schema, codec, partial] of crossChecks) {
    const c = cj(codec);
    const wire = c.encode(c.fromPartial(partial)).finish();
    t.ok(wire.length > 2, `${name}: cosmjs encoding is non-trivial`);
    // Strict walk: every field known with the right wire type, at every depth, Anys included.
    t.doesNotThrow(() => rejectUnknownFields(wire, schema, false), `${name}: no unknown field`);
    const ours = fromBinary(schema, wire);
    t.equal(hex(toBinary(schema, ours)), hex(wire), `${name}: re-encodes identically`);
  }
});

t.test('auth Params carries sig_verify_cost_mldsa65 as field 6 (SDK 0.55)', async (t) => {
  const f = A.ParamsSchema.fields.find((x) => x.name === 'sig_verify_cost_mldsa65');
  t.equal(f?.number, 6);
  t.same(
    A.ParamsSchema.fields.map((x) => [x.number, x.name]),
    [
      [1, 'max_memo_characters'],
      [2, 'tx_sig_limit'],
      [3, 'tx_size_cost_per_byte'],
      [4, 'sig_verify_cost_ed25519'],
      [5, 'sig_verify_cost_secp256k1'],
      [6, 'sig_verify_cost_mldsa65'],
    ],
  );
  // cosmjs-types (0.53) does not know field 6: it must be an unknown field there, a known one here.
  const p = create(A.ParamsSchema, { sigVerifyCostMldsa65: 750n });
  t.equal(hex(toBinary(A.ParamsSchema, p)), '30ee05');
  t.throws(() => rejectUnknownFields(Uint8Array.from([0x38, 1]), A.ParamsSchema, false), /unknown protobuf field/);
  t.same(
    ZE.EventGrantSchema.fields.map((x) => x.number),
    [2, 3, 4],
    'EventGrant numbering starts at 2',
  );
  t.same(
    Object.entries(SignMode).filter(([k]) => isNaN(Number(k))),
    [
      ['UNSPECIFIED', 0],
      ['DIRECT', 1],
      ['DIRECT_AUX', 3],
      ['LEGACY_AMINO_JSON', 127],
      ['EIP_191', 191],
    ],
    'SignMode without TEXTUAL (2 reserved since 0.55)',
  );
});

t.test('registry: every file, both spellings', async (t) => {
  t.ok(protoFiles.length >= 40);
  const names = ['bank.v1beta1.MsgSend', 'auth.v1beta1.BaseAccount', 'authz.v1beta1.MsgGrant', 'tx.v1beta1.TxRaw', 'crypto.secp256k1.PubKey', 'evm.crypto.v1.ethsecp256k1.PubKey'];
  for (const n of names) {
    const spec = protoRegistry.getMessage(`chain.${n}`);
    t.ok(spec, `chain.${n}`);
    t.equal(protoRegistry.getMessage(`cosmos.${n}`), spec, `cosmos.${n} resolves to the same descriptor`);
  }
  t.equal(protoRegistry.getService('cosmos.auth.v1beta1.Query')?.typeName, 'chain.auth.v1beta1.Query');
  t.equal(protoRegistry.getEnum('cosmos.tx.signing.v1beta1.SignMode')?.typeName, 'chain.tx.signing.v1beta1.SignMode');
  t.equal(protoRegistry.getMessage('google.protobuf.Timestamp')?.typeName, 'google.protobuf.Timestamp');
  t.equal(protoRegistry.getMessage('consensus.types.Block')?.typeName, 'consensus.types.Block');
  t.equal(protoRegistry.getMessage('chain.nothing.Here'), undefined);
  t.equal(protoRegistry.getMessage('cosmos.nothing.Here'), undefined);
  t.equal(canonicalTypeName('/cosmos.bank.v1beta1.MsgSend'), 'chain.bank.v1beta1.MsgSend');
  t.equal(canonicalTypeName('chain.bank.v1beta1.MsgSend'), 'chain.bank.v1beta1.MsgSend');
  // Every message lives in a neutral or well-known package: no brand word in a proto package.
  for (const d of protoRegistry) {
    t.notMatch(d.typeName, /^(cosmos|tendermint|cometbft)\./, d.typeName);
  }
});

t.test('Any: pack in the emit spelling, unpack either', async (t) => {
  const msg = create(BTx.MsgSendSchema, { fromAddress: 'a', toAddress: 'b', amount: [{ denom: 'stake', amount: '1' }] });
  const spec = packAny(BTx.MsgSendSchema, msg);
  const up = packAny(BTx.MsgSendSchema, msg, { upstreamNames: true });
  t.equal(spec.typeUrl, '/chain.bank.v1beta1.MsgSend');
  t.equal(up.typeUrl, '/cosmos.bank.v1beta1.MsgSend');
  t.equal(packAny(BTx.MsgSendSchema, msg, createNames({ upstreamNames: true })).typeUrl, '/cosmos.bank.v1beta1.MsgSend', 'a Names instance works');
  t.equal(hex(spec.value), hex(up.value));
  t.equal(typeUrlOf(BTx.MsgSendSchema), '/chain.bank.v1beta1.MsgSend');
  t.equal(typeUrlOf('cosmos.bank.v1beta1.MsgSend', { upstreamNames: true }), '/cosmos.bank.v1beta1.MsgSend');
  t.equal(emitTypeUrl('/google.protobuf.Any', { upstreamNames: true }), '/google.protobuf.Any', 'non-brand packages unchanged');
  for (const any of [spec, up]) {
    t.ok(anyIs(any, BTx.MsgSendSchema));
    const m = unpackAny(any);
    t.equal(m.$typeName, 'chain.bank.v1beta1.MsgSend');
    t.equal(unpackAnyAs(any, BTx.MsgSendSchema)?.toAddress, 'b');
    t.equal(unpackAnyAs(any, ZTx.MsgGrantSchema), undefined);
  }
  t.equal(withEmitTypeUrl(up).typeUrl, '/chain.bank.v1beta1.MsgSend');
  t.equal(withEmitTypeUrl(spec, { upstreamNames: true }).typeUrl, '/cosmos.bank.v1beta1.MsgSend');
  // Only the SDK's `/<full name>` form is a type URL.
  t.equal(resolveTypeUrl('type.googleapis.com/chain.bank.v1beta1.MsgSend'), undefined);
  t.equal(resolveTypeUrl('chain.bank.v1beta1.MsgSend'), undefined);
  t.equal(resolveTypeUrl('/'), undefined);
  t.throws(() => unpackAny({ ...spec, typeUrl: '/chain.bank.v1beta1.Nope' }), UnknownTypeUrlError);
});

t.test('HTTP annotations: the spec 4.2 REST paths, /cosmos/ renamed to /chain/', async (t) => {
  const want: Record<string, string> = {
    'chain.auth.v1beta1.Query.Accounts': 'GET /chain/auth/v1beta1/accounts',
    'chain.auth.v1beta1.Query.Account': 'GET /chain/auth/v1beta1/accounts/{address}',
    'chain.auth.v1beta1.Query.AccountAddressByID': 'GET /chain/auth/v1beta1/address_by_id/{account_id}',
    'chain.auth.v1beta1.Query.Params': 'GET /chain/auth/v1beta1/params',
    'chain.auth.v1beta1.Query.ModuleAccounts': 'GET /chain/auth/v1beta1/module_accounts',
    'chain.auth.v1beta1.Query.ModuleAccountByName': 'GET /chain/auth/v1beta1/module_accounts/{name}',
    'chain.auth.v1beta1.Query.Bech32Prefix': 'GET /chain/auth/v1beta1/bech32',
    'chain.auth.v1beta1.Query.AddressBytesToString': 'GET /chain/auth/v1beta1/bech32/{address_bytes}',
    'chain.auth.v1beta1.Query.AddressStringToBytes': 'GET /chain/auth/v1beta1/bech32/{address_string}',
    'chain.auth.v1beta1.Query.AccountInfo': 'GET /chain/auth/v1beta1/account_info/{address}',
    'chain.authz.v1beta1.Query.Grants': 'GET /chain/authz/v1beta1/grants',
    'chain.authz.v1beta1.Query.GranterGrants': 'GET /chain/authz/v1beta1/grants/granter/{granter}',
    'chain.authz.v1beta1.Query.GranteeGrants': 'GET /chain/authz/v1beta1/grants/grantee/{grantee}',
    'chain.bank.v1beta1.Query.Balance': 'GET /chain/bank/v1beta1/balances/{address}/by_denom',
    'chain.bank.v1beta1.Query.AllBalances': 'GET /chain/bank/v1beta1/balances/{address}',
    'chain.bank.v1beta1.Query.TotalSupply': 'GET /chain/bank/v1beta1/supply',
    'chain.bank.v1beta1.Query.SupplyOf': 'GET /chain/bank/v1beta1/supply/by_denom',
    'chain.bank.v1beta1.Query.Params': 'GET /chain/bank/v1beta1/params',
    'chain.bank.v1beta1.Query.DenomMetadata': 'GET /chain/bank/v1beta1/denoms_metadata/{denom}',
    'chain.tx.v1beta1.Service.Simulate': 'POST /chain/tx/v1beta1/simulate *',
    'chain.tx.v1beta1.Service.GetTx': 'GET /chain/tx/v1beta1/txs/{hash}',
    'chain.tx.v1beta1.Service.BroadcastTx': 'POST /chain/tx/v1beta1/txs *',
    'chain.tx.v1beta1.Service.GetTxsEvent': 'GET /chain/tx/v1beta1/txs',
    'chain.tx.v1beta1.Service.GetBlockWithTxs': 'GET /chain/tx/v1beta1/txs/block/{height}',
    'chain.tx.v1beta1.Service.TxDecode': 'POST /chain/tx/v1beta1/decode *',
    'chain.tx.v1beta1.Service.TxEncode': 'POST /chain/tx/v1beta1/encode *',
    'chain.tx.v1beta1.Service.TxEncodeAmino': 'POST /chain/tx/v1beta1/encode/amino *',
    'chain.tx.v1beta1.Service.TxDecodeAmino': 'POST /chain/tx/v1beta1/decode/amino *',
  };
  const got: Record<string, string> = {};
  for (const svcName of ['chain.auth.v1beta1.Query', 'chain.authz.v1beta1.Query', 'chain.bank.v1beta1.Query', 'chain.tx.v1beta1.Service']) {
    const svc = protoRegistry.getService(svcName)!;
    for (const m of svc.methods) {
      t.ok(hasOption(m, http), `${svcName}.${m.name} has an HTTP rule`);
      const rule = getOption(m, http);
      const p = rule.pattern;
      const verb = p.case === 'get' ? 'GET' : p.case === 'post' ? 'POST' : String(p.case);
      t.match(String(p.value), /^\/chain\//, `${svcName}.${m.name} path`);
      got[`${svcName}.${m.name}`] = `${verb} ${String(p.value)}${rule.body ? ` ${rule.body}` : ''}`;
    }
  }
  for (const [k, v] of Object.entries(want)) t.equal(got[k], v, k);
  // The gateway's view: httpBindings() lists the same rules.
  const listed = new Map(httpBindings().map((b) => [`${b.service.typeName}.${b.method.name}`, `${b.verb} ${b.path}${b.body ? ` ${b.body}` : ''}`]));
  for (const [k, v] of Object.entries(want)) t.equal(listed.get(k), v, `httpBindings ${k}`);
  t.equal(listed.size, Object.keys(got).length, 'one binding per annotated method');
  // Msg services are marked and carry no HTTP rule.
  const msgSvc = protoRegistry.getService('chain.authz.v1beta1.Msg')!;
  t.same(
    msgSvc.methods.map((m) => m.name),
    ['Grant', 'Exec', 'Revoke'],
  );
  t.notOk(msgSvc.methods.some((m) => hasOption(m, http)));
});

t.test('protobuf JSON: the SDK shapes of cosmos/gogoproto:jsonpb/jsonpb.go', async (t) => {
  const names = createNames({ upstreamNames: true });
  const pub = packAny(Secp.PubKeySchema, create(Secp.PubKeySchema, { key: secpKey }), { upstreamNames: true });
  const acc = create(A.BaseAccountSchema, { address: 'chain1abc', pubKey: pub, accountNumber: 7n, sequence: 3n });
  const res = create(AQ.QueryAccountResponseSchema, { account: packAny(A.BaseAccountSchema, acc) });
  const key64 = Buffer.from(secpKey).toString('base64');
  t.equal(
    toProtoJsonString(AQ.QueryAccountResponseSchema, res),
    `{"account":{"@type":"/chain.auth.v1beta1.BaseAccount","address":"chain1abc","pub_key":{"@type":"/cosmos.crypto.secp256k1.PubKey","key":"${key64}"},"account_number":"7","sequence":"3"}}`,
    'type URLs as stored by default',
  );
  t.equal(
    toProtoJsonString(AQ.QueryAccountResponseSchema, res, names),
    `{"account":{"@type":"/cosmos.auth.v1beta1.BaseAccount","address":"chain1abc","pub_key":{"@type":"/cosmos.crypto.secp256k1.PubKey","key":"${key64}"},"account_number":"7","sequence":"3"}}`,
    'upstream names rewrite every @type',
  );
  t.equal(
    toProtoJsonString(AQ.QueryAccountResponseSchema, res, { upstreamNames: false }),
    `{"account":{"@type":"/chain.auth.v1beta1.BaseAccount","address":"chain1abc","pub_key":{"@type":"/chain.crypto.secp256k1.PubKey","key":"${key64}"},"account_number":"7","sequence":"3"}}`,
    'spec names rewrite every @type',
  );
  const params = create(A.ParamsSchema, {
    maxMemoCharacters: 256n,
    txSigLimit: 7n,
    txSizeCostPerByte: 10n,
    sigVerifyCostEd25519: 590n,
    sigVerifyCostSecp256k1: 1000n,
    sigVerifyCostMldsa65: 750n,
  });
  t.equal(
    toProtoJsonString(AQ.QueryParamsResponseSchema, create(AQ.QueryParamsResponseSchema, { params })),
    '{"params":{"max_memo_characters":"256","tx_sig_limit":"7","tx_size_cost_per_byte":"10","sig_verify_cost_ed25519":"590","sig_verify_cost_secp256k1":"1000","sig_verify_cost_mldsa65":"750"}}',
  );
  const grants = create(ZQ.QueryGrantsResponseSchema, {
    grants: [
      {
        authorization: packAny(BAuthz.SendAuthorizationSchema, create(BAuthz.SendAuthorizationSchema, { spendLimit: [{ denom: 'stake', amount: '100' }] }), names),
        expiration: timestampFromDate(new Date('2027-01-01T00:00:00Z')),
      },
    ],
    pagination: { total: 1n },
  });
  t.equal(
    toProtoJsonString(ZQ.QueryGrantsResponseSchema, grants),
    '{"grants":[{"authorization":{"@type":"/cosmos.bank.v1beta1.SendAuthorization","spend_limit":[{"denom":"stake","amount":"100"}],"allow_list":[]},"expiration":"2027-01-01T00:00:00Z"}],"pagination":{"next_key":null,"total":"1"}}',
  );
  // Unset messages and empty bytes are null; empty lists []; zero numbers "0"; oneof members omitted.
  t.same(toProtoJson(AQ.QueryAccountsResponseSchema, create(AQ.QueryAccountsResponseSchema)), { accounts: [], pagination: null });
  t.same(toProtoJson(AQ.QueryAccountInfoResponseSchema, create(AQ.QueryAccountInfoResponseSchema, { info: { address: 'a' } })), {
    info: { address: 'a', pub_key: null, account_number: '0', sequence: '0' },
  });
  t.same(toProtoJson(ZTx.MsgExecResponseSchema, create(ZTx.MsgExecResponseSchema, { results: [new Uint8Array(0), Uint8Array.of(1)] })), { results: ['', 'AQ=='] });
  t.same(toProtoJson(Tx.ModeInfoSchema, create(Tx.ModeInfoSchema, { sum: { case: 'single', value: { mode: SignMode.DIRECT } } })), { single: { mode: 'SIGN_MODE_DIRECT' } });
  t.same(toProtoJson(Tx.ModeInfoSchema, create(Tx.ModeInfoSchema)), {});
  t.same(toProtoJson(Svc.BroadcastTxRequestSchema, create(Svc.BroadcastTxRequestSchema, { mode: 2 })), { tx_bytes: null, mode: 'BROADCAST_MODE_SYNC' });
  t.same(toProtoJson(Tx.SignerInfoSchema, create(Tx.SignerInfoSchema, { modeInfo: { sum: { case: 'single', value: { mode: 99 as SignMode } } } })), {
    public_key: null,
    mode_info: { single: { mode: 99 } },
    sequence: '0',
  }, 'unknown enum values as numbers');
  t.same(
    toProtoJson(
      AQ.QueryAccountResponseSchema,
      create(AQ.QueryAccountResponseSchema, {
        account: { typeUrl: '/google.protobuf.Timestamp', value: toBinary(TimestampSchema, timestampFromDate(new Date('2026-01-01T00:00:00.123Z'))) },
      }),
    ),
    { account: { '@type': '/google.protobuf.Timestamp', value: '2026-01-01T00:00:00.123Z' } },
    'a well-known type in an Any is {"@type", "value"}',
  );
  t.throws(() => toProtoJson(AQ.QueryAccountResponseSchema, create(AQ.QueryAccountResponseSchema, { account: { typeUrl: '/x.Y', value: new Uint8Array() } })), UnknownTypeUrlError);
  t.equal(goJsonStringify({ memo: '<a&b>\u2028\u2029é' }), '{"memo":"\\u003ca\\u0026b\\u003e\\u2028\\u2029é"}', "Go's HTML-safe escaping");
  t.same(anyToProtoJson(pub), { '@type': '/cosmos.crypto.secp256k1.PubKey', key: key64 });
});

t.test('protobuf JSON reading: both names, both spellings, URLs kept byte for byte', async (t) => {
  const json: JsonObject = {
    body: {
      messages: [
        {
          '@type': '/cosmos.authz.v1beta1.MsgExec',
          grantee: 'chain1grantee',
          msgs: [{ '@type': '/cosmos.bank.v1beta1.MsgSend', from_address: 'chain1a', toAddress: 'chain1b', amount: [{ denom: 'stake', amount: '5' }] }],
        },
        {
          '@type': '/chain.authz.v1beta1.MsgGrant',
          granter: 'chain1a',
          grantee: 'chain1b',
          grant: { authorization: { '@type': '/chain.authz.v1beta1.GenericAuthorization', msg: '/chain.bank.v1beta1.MsgSend' }, expiration: '2027-01-01T00:00:00.5Z' },
        },
      ],
      memo: 'hi',
      timeout_height: '12',
      timeoutTimestamp: null,
    },
    auth_info: { signer_infos: [{ public_key: null, mode_info: { single: { mode: 'SIGN_MODE_DIRECT' } }, sequence: 3 }], fee: { amount: [], gas_limit: '200000' } },
    signatures: ['AQID'],
  };
  const tx = fromProtoJson(Tx.TxSchema, json);
  t.equal(tx.body?.messages[0]?.typeUrl, '/cosmos.authz.v1beta1.MsgExec', 'outer URL kept');
  const exec = unpackAnyAs(tx.body!.messages[0]!, ZTx.MsgExecSchema)!;
  t.equal(exec.msgs[0]?.typeUrl, '/cosmos.bank.v1beta1.MsgSend', 'nested URL kept');
  t.equal(unpackAnyAs(exec.msgs[0]!, BTx.MsgSendSchema)?.toAddress, 'chain1b');
  const grant = unpackAnyAs(tx.body!.messages[1]!, ZTx.MsgGrantSchema)!;
  t.equal(grant.grant?.expiration?.nanos, 500_000_000);
  t.equal(grant.grant?.authorization?.typeUrl, '/chain.authz.v1beta1.GenericAuthorization');
  t.equal(tx.body?.timeoutHeight, 12n);
  t.equal(tx.authInfo?.signerInfos[0]?.sequence, 3n);
  t.equal(tx.authInfo?.fee?.gasLimit, 200000n);
  t.same([...tx.signatures[0]!], [1, 2, 3]);
  // Round trip through our writer gives the same message bytes.
  const again = fromProtoJsonString(Tx.TxSchema, toProtoJsonString(Tx.TxSchema, tx));
  t.equal(hex(toBinary(Tx.TxSchema, again)), hex(toBinary(Tx.TxSchema, tx)));
  // Errors: unknown key, unknown type URL, two members of a oneof.
  t.throws(() => fromProtoJson(Tx.TxBodySchema, { memo: 'x', nope: 1 }), /key "nope" is unknown/);
  t.same(fromProtoJson(Tx.TxBodySchema, { memo: 'x', nope: 1 }, { ignoreUnknownFields: true }).memo, 'x');
  t.throws(() => fromProtoJson(Tx.TxBodySchema, { messages: [{ '@type': '/chain.x.Y' }] }), UnknownTypeUrlError);
  t.throws(() => fromProtoJson(Tx.TxBodySchema, { messages: [{ msg: 'no type' }] }), /"@type" is empty/);
  t.throws(
    () => fromProtoJson(Tx.ModeInfoSchema, { single: { mode: 1 }, multi: { mode_infos: [] } }),
    /oneof|multiple/,
  );
  const any = anyFromProtoJson({ '@type': '/cosmos.crypto.secp256k1.PubKey', key: Buffer.from(secpKey).toString('base64') });
  t.equal(any.typeUrl, '/cosmos.crypto.secp256k1.PubKey');
  t.equal(hex(any.value), hex(cjSecp.PubKey.encode({ key: secpKey }).finish()));
  const empty: Any = anyFromProtoJson({});
  t.equal(empty.typeUrl, '');
});
