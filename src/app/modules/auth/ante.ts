/**
 * The signature-checking ante chain of a signed (protobuf) tx, in the SDK's order
 * (cosmos-sdk: x/auth/ante/ante.go NewAnteHandler):
 *
 *  1. SetUpContext        the gas meter (BaseApp installs it; the block max-gas check here) — setup.go
 *  2. ExtensionOptions    any extension option is refused (code 31) — ext.go
 *  3. ValidateBasic       gas, fee, signatures present and one per signer — basic.go, x/auth/tx
 *  4. TxTimeoutHeight     timeout height (30), timeout timestamp (42), unordered refused (37) — basic.go
 *  5. ValidateMemo        max_memo_characters, in bytes (12) — basic.go
 *  6. ConsumeGasForTxSize tx_size_cost_per_byte × len(tx bytes), plus fake signatures when simulating — basic.go
 *  7. DeductFee           min-gas-prices in CheckTx (13), gas 0 (41), payer exists (9), fee to fee_collector (5) — fee.go, validator_tx_fee.go
 *  8. SetPubKey           key must hash to the signer (8); stored when the account has none; tx.acc_seq/tx.signature events — sigverify.go
 *  9. ValidateSigCount    tx_sig_limit over the keys' sub-keys (14) — sigverify.go
 * 10. SigGasConsume       per-key verification gas from params — sigverify.go
 * 11. SigVerification     sequence (32), then the signature (4) — sigverify.go
 * 12. IncrementSequence   every signer's sequence + 1 — sigverify.go
 *
 * Signatures are checked through the worker pool before the chain runs (sigverify.ts); the
 * decorators are synchronous. A failing chain leaves no state behind: BaseApp runs it in a branch
 * that is dropped on error.
 */
import type { Any } from '@bufbuild/protobuf/wkt';
import { bytesEqual, utf8, type Bytes } from '../../bytes.js';
import { coinsError, coinsToString, type Coin } from '../../coins.js';
import type { Context } from '../../context.js';
import { AbciError, sdkErrors } from '../../errors.js';
import type { Tx } from '../../tx.js';
import { MAX_GAS_WANTED, setUpContextDecorator, type AnteDecorator } from '../../ante.js';
import type { BankKeeper } from '../bank/keeper.js';
import { aminoBinaryPubKey, countSubKeys, decodePubKey, pubKeyAddress, type PubKey } from '../../../tx/pubkey.js';
import { canonicalPubKeyAny, type AccountKeeper } from './keeper.js';
import {
  bitArrayCount,
  bitArrayGet,
  bitArrayTrueBefore,
  onlyLegacyAminoSigners,
  rawTxOf,
  signatureBytesForEvents,
  signerSigData,
  verifySignerSignature,
  type SigData,
  type SignatureVerifier,
} from './sigverify.js';
import { FEE_COLLECTOR_NAME, type Account, type Params } from './types.js';

/**
 * Gas per eth_secp256k1 signature: Cosmos EVM's consumer charges 21000 (cosmos/evm ante
 * sigverify.go secp256k1VerifyCost); the SDK's own consumer does not know the key type.
 */
export const DEFAULT_ETH_SECP256K1_VERIFY_COST = 21000n;

/** x/auth/ante/sigverify.go simSecp256k1Pubkey: the stand-in key of a simulated signer without one. */
export const SIM_SECP256K1_PUBKEY: PubKey = { algo: 'secp256k1', key: Uint8Array.from(Buffer.from('035AD6810A47F073553FF30D2FCC7E0D3B1C0B74B61A1AAA2582344037151E143A', 'hex')) };
/** simSecp256k1Sig: 64 zero bytes. */
const SIM_SIG_LEN = 64;

export interface AuthAnteOptions {
  accounts: AccountKeeper;
  bank: BankKeeper;
  verifier: SignatureVerifier;
  /** Module account that receives fees; default fee_collector. */
  feeCollector?: string;
  ethSecp256k1VerifyCost?: bigint;
}

const signersCache = new WeakMap<Tx, Bytes[]>();

/**
 * GetSigners of a tx (x/auth/tx): the messages' signers, de-duplicated in order, then the fee
 * payer when it is set and not among them. Signer i owns signer info i and signature i.
 */
export function txSigners(ctx: Context, tx: Tx): Bytes[] {
  const hit = signersCache.get(tx);
  if (hit !== undefined) return hit;
  const signers = [...tx.signers];
  if (tx.fee.payer !== '') {
    let payer: Bytes;
    try {
      payer = ctx.addressCodec.decode(tx.fee.payer);
    } catch (e) {
      throw e instanceof AbciError ? e.wrap('invalid fee payer address') : e;
    }
    if (!signers.some((s) => bytesEqual(s, payer))) signers.push(payer);
  }
  signersCache.set(tx, signers);
  return signers;
}

/** The fee payer: fee.payer when set, else the first signer (FeeTx.FeePayer). */
export function feePayer(ctx: Context, tx: Tx): Bytes {
  if (tx.fee.payer !== '') return ctx.addressCodec.decode(tx.fee.payer);
  const first = txSigners(ctx, tx)[0];
  if (first === undefined) throw sdkErrors.unknownAddress.wrap('fee payer address:  does not exist');
  return first;
}

/** GetSignerAcc: `account <addr> does not exist: unknown address` (9). */
function signerAccount(ctx: Context, accounts: AccountKeeper, addr: Bytes): Account {
  const acc = accounts.getAccount(ctx, addr);
  if (acc === undefined) throw sdkErrors.unknownAddress.wrap(`account ${ctx.addressCodec.encode(addr)} does not exist`);
  return acc;
}

/** The signer infos' keys (GetPubKeys); undefined where the info carries none. */
function signerInfoKeys(tx: Tx): (PubKey | undefined)[] {
  return rawTxOf(tx).authInfo.signerInfos.map((si) => (si.publicKey === undefined ? undefined : decodePubKey(si.publicKey)));
}

/** The stored key of an account, decoded. */
function accountKey(acc: Account): PubKey | undefined {
  return acc.pubKey === undefined ? undefined : decodePubKey(acc.pubKey);
}

/** ExtensionOptionsDecorator with the default checker: no extension option is accepted. */
export const extensionOptionsDecorator: AnteDecorator = (_ctx, tx) => {
  if (rawTxOf(tx).body.extensionOptions.length > 0) return sdkErrors.unknownExtensionOptions;
};

/**
 * ValidateBasicDecorator over a signed tx (skipped on recheck): gas within int64, a valid
 * non-negative fee, then tx.ValidateBasic's `empty signatures` (15) and
 * `invalid number of signatures: got N signatures and M signers` (4).
 */
export const validateBasicSignedDecorator: AnteDecorator = (ctx, tx) => {
  if (ctx.isReCheckTx) return;
  if (tx.gas > MAX_GAS_WANTED) return sdkErrors.invalidRequest.wrap(`invalid gas supplied; ${tx.gas} > ${MAX_GAS_WANTED}`);
  if (tx.fee.amount.some((c) => c.amount < 0n)) return sdkErrors.insufficientFee.wrap(`invalid fee provided: ${coinsToString(tx.fee.amount)}`);
  const raw = rawTxOf(tx);
  if (raw.signatures.length === 0) return sdkErrors.noSignatures.wrap('empty signatures');
  const signers = txSigners(ctx, tx);
  if (raw.signatures.length !== signers.length) {
    return sdkErrors.unauthorized.wrap(`invalid number of signatures: got ${raw.signatures.length} signatures and ${signers.length} signers`);
  }
};

/** Go's time.Time.String() of a UTC time: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(ns: bigint): string {
  const secs = ns / 1_000_000_000n;
  const frac = ns % 1_000_000_000n;
  const iso = new Date(Number(secs * 1000n)).toISOString();
  const f = frac === 0n ? '' : `.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${f} +0000 UTC`;
}

/**
 * TxTimeoutHeightDecorator (v0.53): `block height: H, timeout height: T: tx timeout height` (30),
 * `block time: …, timeout timestamp: …: tx timeout` (42); then the UnorderedTxDecorator of a chain
 * that does not enable unordered txs: `unordered transactions are not enabled: feature not supported` (37).
 */
export const txTimeoutDecorator: AnteDecorator = (ctx, tx) => {
  if (tx.timeoutHeight > 0n && ctx.height > tx.timeoutHeight) {
    return sdkErrors.txTimeoutHeight.wrap(`block height: ${ctx.height}, timeout height: ${tx.timeoutHeight}`);
  }
  const body = rawTxOf(tx).body;
  const ts = body.timeoutTimestamp;
  if (ts !== undefined && (ts.seconds !== 0n || ts.nanos !== 0)) {
    const t = ts.seconds * 1_000_000_000n + BigInt(ts.nanos);
    if (ctx.time > t) return sdkErrors.txTimeout.wrap(`block time: ${goTimeString(ctx.time)}, timeout timestamp: ${goTimeString(t)}`);
  }
  if (body.unordered) return sdkErrors.notSupported.wrap('unordered transactions are not enabled');
};

/**
 * The amino length of StdSignature{pubkey, 64-byte signature} for the simulate-mode tx-size charge.
 * Keys without an upstream amino registration are counted like a secp256k1 key of their length.
 */
function simStdSignatureLen(pk: PubKey): number {
  let keyLen: number;
  try {
    keyLen = aminoBinaryPubKey(pk).length;
  } catch {
    const k = pk.algo === 'multisig' ? 33 : pk.key.length;
    keyLen = 4 + (k < 128 ? 1 : 2) + k;
  }
  const field = (n: number) => 1 + (n < 128 ? 1 : n < 16384 ? 2 : 3) + n;
  return field(keyLen) + field(SIM_SIG_LEN);
}

/** A signature slot that holds nothing yet (isIncompleteSignature). */
function incomplete(d: SigData | undefined): boolean {
  if (d === undefined) return true;
  if (d.kind === 'single') return d.sig.length === 0;
  return d.sigs.length === 0 || d.sigs.some(incomplete);
}

export function authAnteChain(opts: AuthAnteOptions): AnteDecorator[] {
  const { accounts, bank, verifier } = opts;
  const feeCollector = opts.feeCollector ?? FEE_COLLECTOR_NAME;
  const ethCost = opts.ethSecp256k1VerifyCost ?? DEFAULT_ETH_SECP256K1_VERIFY_COST;
  /**
   * Params once per run of the chain (each SDK decorator reads them; one read is charged here).
   * Keyed by the run's context, not the tx: a tx decoded once is checked again by every recheck,
   * each a run of its own that reads (and is charged for) the params once. The decorators of one
   * run are called one after another with the same context, so one entry is enough.
   */
  let paramsCtx: Context | undefined;
  let paramsOfCtx: Params | undefined;
  const params = (ctx: Context, _tx: Tx): Params => {
    if (paramsCtx !== ctx || paramsOfCtx === undefined) {
      paramsOfCtx = accounts.getParams(ctx);
      paramsCtx = ctx;
    }
    return paramsOfCtx;
  };

  /** ValidateMemoDecorator: `maximum number of characters is M but received N characters: memo too large` (12). */
  const validateMemo: AnteDecorator = (ctx, tx) => {
    const max = params(ctx, tx).maxMemoCharacters;
    const n = BigInt(utf8(tx.memo).length);
    if (n > max) return sdkErrors.memoTooLarge.wrap(`maximum number of characters is ${max} but received ${n} characters`);
  };

  /** ConsumeTxSizeGasDecorator, with the simulate-mode charge for each missing signature. */
  const consumeTxSize: AnteDecorator = (ctx, tx, simulate) => {
    const p = params(ctx, tx);
    ctx.gasMeter.consume(p.txSizeCostPerByte * BigInt(tx.bytes.length), 'txSize');
    if (!simulate) return;
    const raw = rawTxOf(tx);
    const signers = txSigners(ctx, tx);
    for (let i = 0; i < signers.length; i++) {
      let d: SigData | undefined;
      try {
        d = signerSigData(raw, i);
      } catch {
        d = undefined;
      }
      if (i < raw.signatures.length && !incomplete(d)) continue;
      const acc = accounts.getAccount(ctx, signers[i]!);
      const pk = (acc && accountKey(acc)) ?? SIM_SECP256K1_PUBKEY;
      let cost = BigInt(simStdSignatureLen(pk) + 6);
      if (pk.algo === 'multisig') cost *= p.txSigLimit;
      ctx.gasMeter.consume(p.txSizeCostPerByte * cost, 'txSize');
    }
  };

  /**
   * DeductFeeDecorator + checkTxFeeWithValidatorMinGasPrices: gas 0 refused past genesis; in
   * CheckTx the fee must reach ceil(price × gas) in at least one min-gas-price denom; the payer must
   * exist; the fee goes to the fee collector; `tx{fee, fee_payer}`.
   */
  const deductFee: AnteDecorator = (ctx, tx, simulate) => {
    if (!simulate && ctx.height > 0n && tx.gas === 0n) return sdkErrors.invalidGasLimit.wrap('must provide positive gas');
    const fee = tx.fee.amount;
    if (!simulate && ctx.isCheckTx) {
      const required = requiredFees(ctx.minGasPrices, tx.gas);
      if (required !== null && !isAnyGte(fee, required)) {
        return sdkErrors.insufficientFee.wrap(`insufficient fees; got: ${coinsToString(fee)} required: ${coinsToString(required)}`);
      }
    }
    if (tx.fee.granter !== '') return sdkErrors.invalidRequest.wrap('fee grants are not enabled');
    const payer = feePayer(ctx, tx);
    if (!accounts.hasAccount(ctx, payer)) return sdkErrors.unknownAddress.wrap(`fee payer address: ${ctx.addressCodec.encode(payer)} does not exist`);
    if (fee.some((c) => c.amount !== 0n)) {
      if (coinsError(fee) !== null) return sdkErrors.insufficientFee.wrap(`invalid fee amount: ${coinsToString(fee)}`);
      try {
        bank.sendCoinsFromAccountToModule(ctx, payer, feeCollector, fee);
      } catch (e) {
        if (e instanceof AbciError) return sdkErrors.insufficientFunds.wrap(e.message);
        throw e;
      }
    }
    ctx.events.emit('tx', [
      ['fee', coinsToString(fee)],
      ['fee_payer', ctx.addressCodec.encode(payer)],
    ]);
  };

  /**
   * SetPubKeyDecorator: each signer info's key must hash to its signer; an account without a key
   * gets it. Emits `tx{acc_seq="<addr>/<seq>"}` per signer and `tx{signature=<base64>}` per
   * signature.
   */
  const setPubKey: AnteDecorator = (ctx, tx, simulate) => {
    const raw = rawTxOf(tx);
    const signers = txSigners(ctx, tx);
    const infos = raw.authInfo.signerInfos;
    if (infos.length !== signers.length || raw.signatures.length !== infos.length) {
      return sdkErrors.unauthorized.wrap(`invalid number of signer;  expected: ${signers.length}, got ${Math.min(infos.length, raw.signatures.length)}`);
    }
    const keys = signerInfoKeys(tx);
    for (let i = 0; i < keys.length; i++) {
      const signer = signers[i]!;
      let pk = keys[i];
      let pkAny: Any | undefined = infos[i]!.publicKey;
      if (pk === undefined) {
        if (!simulate) continue;
        pk = SIM_SECP256K1_PUBKEY;
        pkAny = undefined;
      }
      if (!simulate && !bytesEqual(pubKeyAddress(pk), signer)) {
        return sdkErrors.invalidPubKey.wrap(`pubKey does not match signer address ${ctx.addressCodec.encode(signer)} with signer index: ${i}`);
      }
      const acc = signerAccount(ctx, accounts, signer);
      if (acc.pubKey !== undefined) continue;
      // In simulation the stand-in key is never stored: only gas is being estimated.
      if (pkAny === undefined) continue;
      accounts.setAccount(ctx, { ...acc, pubKey: canonicalPubKeyAny(pkAny) });
    }
    for (let i = 0; i < infos.length; i++) {
      ctx.events.emit('tx', [['acc_seq', `${ctx.addressCodec.encode(signers[i]!)}/${infos[i]!.sequence}`]]);
      for (const sig of signatureBytesForEvents(signerSigData(raw, i))) ctx.events.emit('tx', [['signature', Buffer.from(sig).toString('base64')]]);
    }
  };

  /** ValidateSigCountDecorator: `signatures: N, limit: L: maximum number of signatures exceeded` (14). */
  const validateSigCount: AnteDecorator = (ctx, tx) => {
    const limit = params(ctx, tx).txSigLimit;
    let count = 0n;
    for (const pk of signerInfoKeys(tx)) {
      count += BigInt(pk === undefined ? 0 : countSubKeys(pk));
      if (count > limit) return sdkErrors.tooManySignatures.wrap(`signatures: ${count}, limit: ${limit}`);
    }
  };

  /** DefaultSigVerificationGasConsumer (multisig: the signed sub-keys'). */
  const consumeSigGas = (ctx: Context, p: Params, pk: PubKey, d: SigData | undefined): void => {
    switch (pk.algo) {
      case 'ed25519':
        ctx.gasMeter.consume(p.sigVerifyCostEd25519, 'ante verify: ed25519');
        return;
      case 'secp256k1':
        ctx.gasMeter.consume(p.sigVerifyCostSecp256k1, 'ante verify: secp256k1');
        return;
      case 'eth_secp256k1':
        ctx.gasMeter.consume(ethCost, 'ante verify: eth_secp256k1');
        return;
      case 'mldsa65':
        ctx.gasMeter.consume(p.sigVerifyCostMldsa65, 'ante verify: mldsa65');
        return;
      case 'multisig': {
        if (d === undefined || d.kind !== 'multi') throw new Error(`expected *signing.MultiSignatureData, got, ${d === undefined ? '<nil>' : '*signing.SingleSignatureData'}`);
        const size = bitArrayCount(d.bitarray);
        if (size !== pk.pubKeys.length) throw sdkErrors.invalidPubKey.wrap("bitarray length doesn't match the number of public keys");
        if (d.sigs.length !== bitArrayTrueBefore(d.bitarray, size)) throw sdkErrors.tooManySignatures.wrap('number of signatures exceeds number of bits in bitarray');
        let si = 0;
        for (let i = 0; i < size; i++) {
          if (!bitArrayGet(d.bitarray, i)) continue;
          consumeSigGas(ctx, p, pk.pubKeys[i]!, d.sigs[si]);
          si++;
        }
      }
    }
  };

  const sigGasConsume: AnteDecorator = (ctx, tx, simulate) => {
    const p = params(ctx, tx);
    const raw = rawTxOf(tx);
    const signers = txSigners(ctx, tx);
    for (let i = 0; i < raw.authInfo.signerInfos.length; i++) {
      const acc = signerAccount(ctx, accounts, signers[i]!);
      let pk = accountKey(acc);
      if (pk === undefined && simulate) pk = SIM_SECP256K1_PUBKEY;
      // A signer whose account has no key and whose signer info offered none: the SDK's gas
      // consumer meets a nil key before SigVerification can say `pubkey on account is not set`.
      if (pk === undefined) return sdkErrors.invalidPubKey.wrap('unrecognized public key type: <nil>');
      consumeSigGas(ctx, p, pk, signerSigData(raw, i));
    }
  };

  /**
   * SigVerificationDecorator: sequence first (32), then the signature (4), except on recheck and
   * when simulating. Account number 0 at genesis (height 0).
   */
  const sigVerification: AnteDecorator = (ctx, tx, simulate) => {
    const raw = rawTxOf(tx);
    const signers = txSigners(ctx, tx);
    const infos = raw.authInfo.signerInfos;
    if (infos.length !== signers.length) {
      return sdkErrors.unauthorized.wrap(`invalid number of signer;  expected: ${signers.length}, got ${infos.length}`);
    }
    const single = verifier.verifier(tx);
    for (let i = 0; i < infos.length; i++) {
      const acc = signerAccount(ctx, accounts, signers[i]!);
      const pk = accountKey(acc);
      if (!simulate && pk === undefined) return sdkErrors.invalidPubKey.wrap('pubkey on account is not set');
      const seq = infos[i]!.sequence;
      if (seq !== acc.sequence) return sdkErrors.wrongSequence.wrap(`account sequence mismatch, expected ${acc.sequence}, got ${seq}`);
      if (simulate || ctx.isReCheckTx || pk === undefined) continue;
      const accNum = ctx.height === 0n ? 0n : acc.accountNumber;
      const d = signerSigData(raw, i);
      const err =
        d === undefined
          ? 'signature data is missing'
          : verifySignerSignature(raw, pk, d, { chainId: ctx.chainId, accountNumber: accNum, sequence: acc.sequence, pubKey: acc.pubKey }, single);
      if (err !== null) {
        const msg = onlyLegacyAminoSigners(d)
          ? `signature verification failed; please verify account number (${accNum}), sequence (${acc.sequence}) and chain-id (${ctx.chainId})`
          : `signature verification failed; please verify account number (${accNum}) and chain-id (${ctx.chainId}): (${err})`;
        return sdkErrors.unauthorized.wrap(msg);
      }
    }
  };

  /** IncrementSequenceDecorator: every signer's sequence + 1 (kept even when the messages fail). */
  const incrementSequence: AnteDecorator = (ctx, tx) => {
    for (const s of txSigners(ctx, tx)) {
      const acc = signerAccount(ctx, accounts, s);
      accounts.setAccount(ctx, { ...acc, sequence: acc.sequence + 1n });
    }
  };

  return [
    setUpContextDecorator,
    extensionOptionsDecorator,
    validateBasicSignedDecorator,
    txTimeoutDecorator,
    validateMemo,
    consumeTxSize,
    deductFee,
    setPubKey,
    validateSigCount,
    sigGasConsume,
    sigVerification,
    incrementSequence,
  ];
}

/** The decimal part of a DecCoin amount times gas, rounded up (fee = ceil(minGasPrice × gasLimit)). */
function ceilMul(amount: string, gas: bigint): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(amount.trim());
  if (m === null) throw new Error(`invalid decimal coin amount: ${amount}`);
  const frac = m[2] ?? '';
  const scale = 10n ** BigInt(frac.length);
  const num = BigInt(m[1]! + frac) * gas;
  return (num + scale - 1n) / scale;
}

/** The required fee per min-gas-price denom, or null when the node sets no (non-zero) price. */
export function requiredFees(minGasPrices: readonly { denom: string; amount: string }[], gas: bigint): Coin[] | null {
  const prices = minGasPrices.filter((p) => ceilMul(p.amount, 1_000_000_000_000_000_000n) > 0n);
  if (prices.length === 0) return null;
  return prices.map((p) => ({ denom: p.denom, amount: ceilMul(p.amount, gas) }));
}

/** Coins.IsAnyGTE (types/coin.go): some fee denom reaches its non-zero required amount. */
function isAnyGte(fee: readonly Coin[], required: readonly Coin[]): boolean {
  if (required.length === 0) return false;
  for (const r of required) {
    const have = fee.find((c) => c.denom === r.denom)?.amount ?? 0n;
    if (r.amount !== 0n && have >= r.amount) return true;
  }
  return false;
}
