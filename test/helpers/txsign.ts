/**
 * Builds and signs real chain txs for tests: TxBody/AuthInfo/TxRaw through the generated
 * protobuf code, SIGN_MODE_DIRECT or SIGN_MODE_LEGACY_AMINO_JSON sign bytes from src/tx, and
 * secp256k1 (SHA-256) or eth_secp256k1 (Keccak-256) signatures with the dev keys of
 * src/keys/devaccounts.ts (the `test test … junk` mnemonic; public keys, never fund them for real).
 *
 * Every knob a failing-path test needs is here: wrong account number / sequence / chain id,
 * no public key, the upstream (`/cosmos.…`, `cosmos-sdk/…`) spellings, a corrupted signature,
 * extra signatures, extension options, memo, timeout height.
 */
import { create, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { AnySchema, TimestampSchema, type Any } from '@bufbuild/protobuf/wkt';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { devAccounts, type DevAccount } from '../../src/keys/devaccounts.js';
import { MsgSendSchema } from '../../src/gen/chain/bank/v1beta1/tx_pb.js';
import { CoinSchema } from '../../src/gen/chain/base/v1beta1/coin_pb.js';
import { SignMode } from '../../src/gen/chain/tx/signing/v1beta1/signing_pb.js';
import { AuthInfoSchema, FeeSchema, ModeInfoSchema, ModeInfo_SingleSchema, SignerInfoSchema, TxBodySchema } from '../../src/gen/chain/tx/v1beta1/tx_pb.js';
import { packAny } from '../../src/proto/registry.js';
import { decodeTx, encodeTxRaw } from '../../src/tx/codec.js';
import { encodePubKey, pubKeyAddress } from '../../src/tx/pubkey.js';
import { bech32 } from '@scure/base';
import { signBytesDirect, signBytesLegacyAmino } from '../../src/tx/signbytes.js';

export type { DevAccount };

/** The 10 eth_secp256k1 dev keys (m/44'/60'/0'/0/i) then the 10 secp256k1 ones (m/44'/118'/0'/0/i). */
export function devKeys(prefix = 'chain'): DevAccount[] {
  return devAccounts({ prefix });
}

export const ETH_KEYS = (prefix = 'chain') => devKeys(prefix).filter((a) => a.keyType === 'eth_secp256k1');
export const COSMOS_KEYS = (prefix = 'chain') => devKeys(prefix).filter((a) => a.keyType === 'secp256k1');

export interface CoinInit {
  denom: string;
  amount: string | bigint | number;
}

function coins(cs: readonly CoinInit[]) {
  return cs.map((c) => create(CoinSchema, { denom: c.denom, amount: String(c.amount) }));
}

/** A message packed as an Any (spec type URL, or upstream with `upstream`). */
export function anyOf<D extends DescMessage>(schema: D, msg: MessageShape<D>, upstream = false): Any {
  return packAny(schema, msg, { upstreamNames: upstream });
}

/** MsgSend packed as an Any. */
export function msgSend(from: string, to: string, amount: readonly CoinInit[], upstream = false): Any {
  return anyOf(MsgSendSchema, create(MsgSendSchema, { fromAddress: from, toAddress: to, amount: coins(amount) }), upstream);
}

/** The 64-byte r||s signature of `signBytes` (low-S): SHA-256 for secp256k1, Keccak-256 for eth_secp256k1. */
export function signWith(key: DevAccount, signBytes: Uint8Array): Uint8Array {
  const digest = key.keyType === 'eth_secp256k1' ? keccak_256(signBytes) : sha256(signBytes);
  return secp256k1.sign(digest, key.privateKey, { prehash: false, lowS: true });
}

export interface TxSigner {
  key: DevAccount;
  accountNumber: bigint;
  sequence: bigint;
  /** Default 'direct'. */
  mode?: 'direct' | 'amino';
  /** Put the public key in the signer info (default true). */
  withPubKey?: boolean;
  /** Override the key put in the signer info (e.g. someone else's). */
  pubKeyOverride?: Any;
  /** Sign with these instead (wrong chain id / account number / sequence tests). */
  signAs?: { chainId?: string; accountNumber?: bigint; sequence?: bigint };
  /** Amino: sign the upstream (`cosmos-sdk/…`) names, as unmodified CosmJS/Keplr do. */
  aminoUpstream?: boolean;
  /** Flip a byte of the signature. */
  corrupt?: boolean;
}

export interface TxSpec {
  chainId: string;
  msgs: Any[];
  signers: TxSigner[];
  fee?: { amount?: readonly CoinInit[]; gasLimit?: bigint; payer?: string; granter?: string };
  memo?: string;
  timeoutHeight?: bigint;
  /** ns since the epoch. */
  timeoutTimestamp?: bigint;
  unordered?: boolean;
  extensionOptions?: Any[];
  /** Spell pubkey type URLs `/cosmos.…` (what CosmJS sends). */
  upstreamKeyTypes?: boolean;
  /** Replace the signatures (after signing) — e.g. [] or an extra one. */
  signatures?: (sigs: Uint8Array[]) => Uint8Array[];
}

export interface BuiltTx {
  bytes: Uint8Array;
  bodyBytes: Uint8Array;
  authInfoBytes: Uint8Array;
  signatures: Uint8Array[];
}

/** Builds, signs and encodes a TxRaw. */
export function buildTx(spec: TxSpec): BuiltTx {
  const body = create(TxBodySchema, {
    messages: spec.msgs,
    memo: spec.memo ?? '',
    timeoutHeight: spec.timeoutHeight ?? 0n,
    timeoutTimestamp:
      spec.timeoutTimestamp === undefined ? undefined : create(TimestampSchema, { seconds: spec.timeoutTimestamp / 1_000_000_000n, nanos: Number(spec.timeoutTimestamp % 1_000_000_000n) }),
    unordered: spec.unordered ?? false,
    extensionOptions: spec.extensionOptions ?? [],
  });
  const bodyBytes = toBinary(TxBodySchema, body);
  const signerInfos = spec.signers.map((s) =>
    create(SignerInfoSchema, {
      publicKey: s.pubKeyOverride ?? (s.withPubKey === false ? undefined : encodePubKey({ algo: s.key.keyType, key: s.key.publicKey }, { upstreamNames: spec.upstreamKeyTypes === true })),
      modeInfo: create(ModeInfoSchema, {
        sum: { case: 'single', value: create(ModeInfo_SingleSchema, { mode: s.mode === 'amino' ? SignMode.LEGACY_AMINO_JSON : SignMode.DIRECT }) },
      }),
      sequence: s.sequence,
    }),
  );
  const fee = create(FeeSchema, {
    amount: coins(spec.fee?.amount ?? []),
    gasLimit: spec.fee?.gasLimit ?? 200_000n,
    payer: spec.fee?.payer ?? '',
    granter: spec.fee?.granter ?? '',
  });
  const authInfoBytes = toBinary(AuthInfoSchema, create(AuthInfoSchema, { signerInfos, fee }));
  // Amino sign bytes read the decoded tx; decode what we built (signatures do not enter them).
  const unsigned = decodeTx(encodeTxRaw({ bodyBytes, authInfoBytes, signatures: spec.signers.map(() => new Uint8Array(64)) }));
  let signatures = spec.signers.map((s) => {
    const chainId = s.signAs?.chainId ?? spec.chainId;
    const accountNumber = s.signAs?.accountNumber ?? s.accountNumber;
    const sequence = s.signAs?.sequence ?? s.sequence;
    const signBytes =
      s.mode === 'amino'
        ? signBytesLegacyAmino(unsigned, chainId, accountNumber, sequence, { upstreamNames: s.aminoUpstream === true })
        : signBytesDirect(bodyBytes, authInfoBytes, chainId, accountNumber);
    const sig = signWith(s.key, signBytes);
    if (s.corrupt) sig[5] ^= 0x01;
    return sig;
  });
  if (spec.signatures) signatures = spec.signatures(signatures);
  return { bytes: encodeTxRaw({ bodyBytes, authInfoBytes, signatures }), bodyBytes, authInfoBytes, signatures };
}

/** A one-signer MsgSend tx. */
export function sendTx(o: {
  chainId: string;
  from: DevAccount;
  to: string;
  amount: readonly CoinInit[];
  accountNumber: bigint;
  sequence: bigint;
  fee?: TxSpec['fee'];
  mode?: 'direct' | 'amino';
  memo?: string;
  upstream?: boolean;
}): Uint8Array {
  return buildTx({
    chainId: o.chainId,
    msgs: [msgSend(o.from.bech32, o.to, o.amount, o.upstream)],
    signers: [{ key: o.from, accountNumber: o.accountNumber, sequence: o.sequence, mode: o.mode, aminoUpstream: o.upstream }],
    fee: o.fee,
    memo: o.memo,
    upstreamKeyTypes: o.upstream,
  }).bytes;
}

/**
 * One tx in which `funder` (sequence 0, a genesis account) sends `amount` of `denom` to each of
 * `recipients` (the benches' set-up block), with gas for that many sends.
 */
export function fundingTx(chainId: string, funder: DevAccount, accountNumber: bigint, recipients: readonly DevAccount[], denom: string, amount: bigint): Uint8Array {
  return buildTx({
    chainId,
    msgs: recipients.map((r) => msgSend(funder.bech32, r.bech32, [{ denom, amount }])),
    signers: [{ key: funder, accountNumber, sequence: 0n }],
    fee: { gasLimit: 200_000n + 40_000n * BigInt(recipients.length) },
  }).bytes;
}

/** An Any with arbitrary type URL and bytes (extension options, bogus keys). */
export function rawAny(typeUrl: string, value: Uint8Array = new Uint8Array(0)): Any {
  return create(AnySchema, { typeUrl, value });
}

/** A key outside the genesis (no account until it receives funds), from a fixed seed byte. */
export function freshKey(seed: number, keyType: DevAccount['keyType'] = 'secp256k1', prefix = 'chain'): DevAccount {
  const privateKey = sha256(Uint8Array.of(0xc4, 0xa1, seed & 0xff, keyType === 'secp256k1' ? 1 : 2));
  const publicKey = secp256k1.getPublicKey(privateKey, true);
  const address = pubKeyAddress({ algo: keyType, key: publicKey });
  return {
    keyType,
    path: `fresh/${seed}`,
    index: seed,
    privateKey,
    publicKey,
    address,
    bech32: bech32.encode(prefix, bech32.toWords(address)),
    hex: `0x${Buffer.from(address).toString('hex')}`,
  };
}
