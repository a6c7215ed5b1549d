/**
 * The EVM keeper: runs Ethereum transactions through @ethereumjs/vm (hardfork Prague, src/evm) over
 * the one-account-model state view (state.ts), keeps the block's receipts and logs until commit,
 * and computes the state root — a Merkle-Patricia trie over every account — as the module's
 * commitment to the app hash.
 *
 * Execution. A tx whose run is one frame of plain code (an ERC-20 transfer) runs on
 * src/evm/fast-tx.ts's interpreter, with runTx's effects; everything else through runTx.
 * One VM and one FlatStateManager live as long as the keeper; the manager's flat state
 * is a view bound to the running tx's Context, which (BaseApp's cache branches) is the only source
 * of truth. Within one FinalizeBlock the manager's caches are kept from tx to tx and stay exactly
 * what the block state holds (watchBlockState: BaseApp reports every key written into the block's
 * state). A tx leaves the caches holding its own writes; they stay only once its run stage is seen
 * landing in the block state (BaseApp writes its branch, all keys or none), otherwise — BaseApp
 * dropped it — the next tx starts from empty caches. Every other write into the block state — a
 * Cosmos tx's, a fee, BeginBlock's — drops the account or slot it touches. Any other mode
 * (simulate, a replay) starts from empty caches and leaves them to be emptied again. Runs are
 * serialized (a promise chain), so a simulation and FinalizeBlock never interleave on the VM.
 * Nothing here assumes a thread: the keeper runs wherever BaseApp runs.
 *
 * The state root. BaseApp hands commitment() the keys each store changed in the block relative
 * to the committed state. Every address whose auth account, `achain` balance, code hash or
 * storage changed — through an EVM or a Cosmos tx alike — is re-leafed; storage tries are updated
 * from the changed slots; src/evm's StateTrie does the rest, starting from the last committed
 * root. Its new nodes, the new storage roots and the root of the height are written to evm_trie
 * in commit(), inside the block's LMDB transaction.
 */
import type { Common } from '@ethereumjs/common';
import type { Block } from '@ethereumjs/block';
import { type TypedTransaction, Capability, TransactionType, getCalldataFloorGas } from '@ethereumjs/tx';
import { RLP } from '@ethereumjs/rlp';
import { Address, bigIntToUnpaddedBytes, bytesToBigInt, hexToBytes, type PrefixedHexString } from '@ethereumjs/util';
import { type VM, createVM, runTx } from '@ethereumjs/vm';
import { FastCaller } from '../../../evm/fast-call.js';
import { installFastSteps } from '../../../evm/fast-steps.js';
import { runFastTx } from '../../../evm/fast-tx.js';
import { installJumpDestCache } from '../../../evm/jumpdests.js';
import { createBlock } from '@ethereumjs/block';
import { moduleAddress } from '../../address.js';
import { bytesToKey, concatBytes, readU64be, u64be, utf8, type Bytes } from '../../bytes.js';
import type { Context } from '../../context.js';
import { ExecMode } from '../../context.js';
import { AbciError, sdkErrors } from '../../errors.js';
import { InfiniteGasMeter } from '../../gas.js';
import type { BlockStateWatcher, ModuleCommit, ModuleDbReader } from '../../module.js';
import type { AccountKeeper } from '../auth/keeper.js';
import { FEE_COLLECTOR_NAME } from '../auth/types.js';
import type { BankKeeper } from '../bank/keeper.js';
import { BALANCES_PREFIX } from '../bank/keys.js';
import { ACCOUNTS_PREFIX } from '../auth/keys.js';
import { type CryptoBackend, getCryptoBackend } from '../../../crypto/backend.js';
import { hex0x, hexUpper } from '../../../crypto/bytes.js';
import type { CryptoPool } from '../../../pool/types.js';
import { SECP256K1_N_DIV_2, signature64 } from '../../../evm/common.js';
import { createEvmCommon } from '../../../evm/common.js';
import type { AccountRecord, FlatState, StateChanges, StorageChange } from '../../../evm/flat-state.js';
import { keyBytes, overlayKV, type KVStore as EvmKV } from '../../../evm/kv.js';
import { FlatStateManager } from '../../../evm/state-manager.js';
import { EMPTY_TRIE_ROOT, StateTrie, type AccountProof } from '../../../evm/trie.js';
import { EvmTxError, decodeTx, recoverSender } from '../../../evm/tx.js';
import {
  blockHashKey,
  blockKey,
  CHAIN_ID_KEY,
  codeHashKey,
  codeKey,
  slotKey,
  CODE_HASH_PREFIX,
  cometHashKey,
  EVM_RECEIPTS_DB,
  EVM_STORE_KEY,
  EVM_TRIE_DB,
  headerKey,
  heightRootKey,
  LATEST_ROOT_KEY,
  logKey,
  logsPrefix,
  PARAMS_KEY,
  receiptKey,
  receiptsPrefix,
  STORAGE_PREFIX,
  storageRootKey,
  txLookupKey,
  txPosition,
} from './keys.js';
import { decodeBlock, decodeLog, decodeReceipt, encodeBlock, encodeLog, encodeReceipt, receiptHashes, type IndexedLog, type ReceiptHashes, type StoredBlock, type StoredReceipt } from './receipts.js';
import { blockHashChain, consensusReceipt, decodeStoredHeader, encodeStoredHeader, makeHeader, orderedTrieRoot, sealHeader, type SealedHeader } from './header.js';
import { EVM_KIND } from './kind.js';
import { ContextFlatState, evmStore, readAccount, setBankBalance, setSequence, type AccountModel } from './state.js';

/** The devnet's EVM chain id (src/config/app-genesis.ts DEFAULT_EVM_CHAIN_ID). */
export const DEFAULT_EVM_CHAIN_ID = 9000n;

export interface EvmKeeperOptions {
  auth: AccountKeeper;
  bank: BankKeeper;
  /** The bank denom that is the EVM balance (`achain`, 18 decimals). */
  denom: string;
  /** EVM chain id until the genesis (or the stored one) says otherwise. */
  chainId?: bigint;
  /** `[json-rpc] allow-unprotected-txs`: accept legacy txs without EIP-155 in CheckTx. */
  allowUnprotectedTxs?: boolean;
  /** The worker pool: sender recovery of a block's txs in one call (preVerify). */
  pool?: Pick<CryptoPool, 'recoverSenders'>;
  crypto?: CryptoBackend;
}

/** A decoded EVM tx as the tx kind carries it. */
export interface EvmTx {
  /** The decoded tx (after pool recovery, a view of it whose getSenderAddress is the recovered sender). */
  tx: TypedTransaction;
  raw: Bytes;
  /** Recovered once (ante), cached here. */
  sender?: Bytes;
  /** The Ethereum tx hash (keccak of the envelope), computed once (EvmKeeper.ethHash). */
  ethHash?: Bytes;
  /** SHA-256 of the raw bytes (the CometBFT tx hash), when already computed. */
  cometHash?: Bytes;
  /**
   * The tx's intrinsic gas, computed at its first ante (a function of the tx and its fork rules,
   * fixed at decoding): every recheck of a pending tx asked the library again (~8 µs).
   */
  intrinsic?: bigint;
  /** Its EIP-7623 calldata floor, likewise computed once. */
  floor?: bigint;
}

/** One sender hint on the wire: SHA-256 of the raw tx (32), sender (20), Ethereum tx hash (32). */
const HINT_BYTES = 84;
/** Hints kept on either side before the oldest are dropped (a full default mempool three times over). */
const HINTS_MAX = 16_384;

interface PendingBlock {
  height: bigint;
  receipts: StoredReceipt[];
  /** The EVM txs' envelopes, in receipt order (the transactions root). */
  txs: Bytes[];
  gasUsed: bigint;
  logsBloom: Uint8Array;
  logCount: number;
}

interface PendingRoot {
  height: bigint;
  stateRoot: Bytes;
  nodes: [Bytes, Bytes][];
  storageRoots: [Bytes, Bytes | undefined][];
}

interface Engine {
  vm: VM;
  sm: FlatStateManager;
  view: ContextFlatState;
  /** The one-frame interpreter for txs it covers (src/evm/fast-tx.ts); undefined: runTx for all. */
  fast: FastCaller | undefined;
}

/** How many committed storage roots EvmKeeper.storageRoot remembers before it starts over. */
const STORAGE_ROOT_MEMO_MAX = 65_536;

function evmError(kind: 'wrongSequence' | 'insufficientFunds' | 'outOfGas' | 'invalidChainId' | 'unauthorized' | 'txDecode' | 'invalidRequest', msg: string): AbciError {
  return sdkErrors[kind].wrap(msg);
}

export class EvmKeeper implements AccountModel {
  readonly auth: AccountKeeper;
  readonly bank: BankKeeper;
  readonly denom: string;
  readonly crypto: CryptoBackend;
  readonly allowUnprotectedTxs: boolean;
  readonly coinbase: Bytes;
  private readonly pool: Pick<CryptoPool, 'recoverSenders'> | undefined;
  private chain: bigint;
  private commonCache: Common | undefined;
  private engineP: Promise<Engine> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private trieDb: ModuleDbReader | undefined;
  private receiptsDb: ModuleDbReader | undefined;
  private committedRoot: Bytes = EMPTY_TRIE_ROOT;
  private committedHeight = 0n;
  private block: PendingBlock | undefined;
  private root: PendingRoot | undefined;
  private header: { height: bigint; sealed: SealedHeader } | undefined;
  private chainIdDirty = false;
  private decodedChain = 0n;
  private blockCache: { height: bigint; time: bigint; maxGas: bigint; common: Common; block: Block } | undefined;
  /**
   * The block state BaseApp opened last (watchBlockState); the manager whose caches are over it,
   * if any; whether they hold a run whose landing in the block state is not seen yet.
   */
  private watched: { height: bigint; eng: Engine | undefined; unlanded: boolean } | undefined;
  /**
   * A tx whose run is one frame of plain code (an ERC-20 transfer) runs on src/evm/fast-tx.ts's
   * interpreter; everything else, and everything it does not cover, through runTx. False: every
   * tx through runTx (the tests and the bench compare the two).
   */
  fastTxs = true;

  constructor(opts: EvmKeeperOptions) {
    this.auth = opts.auth;
    this.bank = opts.bank;
    this.denom = opts.denom;
    this.chain = opts.chainId ?? DEFAULT_EVM_CHAIN_ID;
    this.allowUnprotectedTxs = opts.allowUnprotectedTxs ?? false;
    this.crypto = opts.crypto ?? getCryptoBackend();
    // Fees (priority fee × gas; the base fee is 0) go to the fee collector, as Cosmos fees do.
    this.coinbase = moduleAddress(FEE_COLLECTOR_NAME);
    this.pool = opts.pool;
  }

  // --- chain id, common, VM ---------------------------------------------------------------------

  get chainId(): bigint {
    return this.chain;
  }

  /** Sets the chain id (genesis): decoding and execution switch to it. */
  setChainId(id: bigint): void {
    if (id === this.chain) return;
    this.chain = id;
    this.commonCache = undefined;
    this.engineP = undefined;
    this.chainIdDirty = true;
  }

  get common(): Common {
    if (this.commonCache === undefined) this.commonCache = createEvmCommon({ chainId: this.chain, crypto: this.crypto });
    return this.commonCache;
  }

  private engine(): Promise<Engine> {
    if (this.engineP === undefined) {
      const view = new ContextFlatState(this);
      const sm = new FlatStateManager(view, { keccak256: (d) => this.crypto.keccak256(d) });
      // BLOCKHASH answers the stored EVM hashes (header.ts), as eth_getBlockByNumber reports them.
      const blockchain = blockHashChain((n) => this.blockHashAt(n));
      const common = this.common;
      this.engineP = Promise.all([installJumpDestCache(), installFastSteps()])
        .then(() => createVM({ common, stateManager: sm, blockchain: blockchain as never }))
        .then((vm) => ({ vm, sm, view, fast: FastCaller.create(vm.evm, common) }));
    }
    return this.engineP;
  }

  /** Runs `f` after every earlier run has finished (one tx on the VM at a time). */
  private serial<T>(f: () => Promise<T>): Promise<T> {
    const p = this.queue.then(f, f);
    this.queue = p.catch(() => undefined);
    return p;
  }

  // --- databases ----------------------------------------------------------------------------------

  attach(dbs: ReadonlyMap<string, ModuleDbReader>): void {
    this.trieDb = dbs.get(EVM_TRIE_DB);
    this.receiptsDb = dbs.get(EVM_RECEIPTS_DB);
    this.loadCommitted();
  }

  private loadCommitted(): void {
    this.storageRoots.clear();
    const latest = this.trieDb?.getBinary(LATEST_ROOT_KEY);
    if (latest !== undefined) {
      this.committedHeight = readU64be(latest.subarray(0, 8));
      this.committedRoot = Uint8Array.from(latest.subarray(8));
    } else {
      this.committedHeight = 0n;
      this.committedRoot = EMPTY_TRIE_ROOT;
    }
    const cid = this.trieDb?.getBinary(CHAIN_ID_KEY);
    if (cid !== undefined) {
      const id = readU64be(cid);
      if (id !== this.chain) {
        this.chain = id;
        this.commonCache = undefined;
        this.engineP = undefined;
      }
      this.chainIdDirty = false;
    }
  }

  /**
   * Committed storage roots already read, by address (latin1), `null` for none. Every account
   * read of every tx asked LMDB (sender, coinbase, contract: three reads a transfer); the roots
   * change only in commit() and when the databases are (re)attached, which empty the memo.
   */
  private storageRoots = new Map<string, Bytes | null>();

  /** AccountModel: the committed storage root of an address. */
  storageRoot(addr: Bytes): Bytes | undefined {
    const k = bytesToKey(addr);
    const hit = this.storageRoots.get(k);
    if (hit !== undefined) return hit ?? undefined;
    const v = this.trieDb?.getBinary(storageRootKey(addr));
    const root = v === undefined ? undefined : Uint8Array.from(v);
    if (this.storageRoots.size >= STORAGE_ROOT_MEMO_MAX) this.storageRoots.clear();
    this.storageRoots.set(k, root ?? null);
    return root;
  }

  // --- decode and ante ------------------------------------------------------------------------------

  /**
   * The decoded tx of a raw byte array, by identity. CheckTx of one eth_sendRawTransaction decodes
   * the same bytes three times (the RPC method, the tx pool's inspect, the app's tx kind) and
   * recovers the sender twice, the second time through a pool job whose buffer wait and round trip
   * sat inside the mempool's one-at-a-time admission: most of the time a tx took to be admitted.
   * Here the second and third decodes are the first's EvmTx, whose sender inspect already
   * recovered (so preVerify has nothing to send). A decoded tx only depends on the bytes and the
   * chain id (the map starts over when the id changes); what is shared is filled in once and never
   * differs (the sender). Failures are not kept.
   */
  private decoded = new WeakMap<Bytes, EvmTx>();

  decode(raw: Bytes): EvmTx {
    const hit = this.decoded.get(raw);
    if (hit !== undefined && hit.raw === raw && this.decodedChain === this.chain) return hit;
    if (this.decodedChain !== this.chain) {
      this.decoded = new WeakMap();
      this.decodedChain = this.chain;
    }
    try {
      const etx: EvmTx = { tx: decodeTx(raw, this.common), raw };
      this.decoded.set(raw, etx);
      return etx;
    } catch (e) {
      // The tx library's own words for a foreign chain id are unreadable; say it as geth does.
      const cid = signedChainId(raw);
      if (cid !== undefined && cid !== this.chain) throw evmError('invalidChainId', `invalid chain id for signer: have ${cid} want ${this.chain}`);
      if (e instanceof EvmTxError) throw evmError('txDecode', e.message);
      throw evmError('txDecode', (e as Error).message);
    }
  }

  sender(etx: EvmTx): Bytes {
    if (etx.sender === undefined) {
      try {
        etx.sender = recoverSender(etx.tx, this.crypto);
      } catch (e) {
        throw evmError('unauthorized', (e as Error).message);
      }
      if (this.hintOutbox !== null) this.remember(etx);
      else this.hintStats.recovered++;
    }
    return etx.sender;
  }

  /**
   * The Ethereum tx hash, computed once per decoded tx: keccak256 of the envelope bytes as they came
   * (geth's Transaction.Hash of a decoded tx). The decoder takes only canonical encodings (RLP
   * prefixes, no leading zeros in integers, nothing trailing), so these bytes are the library's
   * serialize() of the tx, which its hash() would build again first.
   */
  ethHash(etx: EvmTx): Bytes {
    return (etx.ethHash ??= this.crypto.keccak256(etx.raw));
  }

  /** SHA-256 of the raw bytes (the CometBFT tx hash), computed once per decoded tx. */
  cometHash(etx: EvmTx): Bytes {
    return (etx.cometHash ??= this.crypto.sha256(etx.raw));
  }

  /** The CometBFT hash of the tx being run: of the bytes the block carries (a wrapping message's, when it is wrapped). */
  private txCometHash(ctx: Context, etx: EvmTx): Bytes {
    return ctx.txBytes === undefined || ctx.txBytes === etx.raw ? this.cometHash(etx) : this.crypto.sha256(ctx.txBytes);
  }

  // --- sender hints (main thread → executor thread) ---------------------------------------------

  /**
   * Txs whose sender this thread recovered since the last takeSenderHints, while sharing is on
   * (shareSenderHints): the main thread's admission recovers every EVM tx's sender and hashes it,
   * and the executor thread, which runs the block, would do both again (~100 µs a tx with the
   * native backend, a tenth of an ERC-20 transfer). As SignatureVerifier.takeVerified does for
   * Cosmos signatures, the main thread hands them over with the block; the executor thread looks
   * each block tx up by the SHA-256 of its bytes and recovers only the ones it has no hint for
   * (another proposer's txs, a hint dropped). A sender and a hash are pure functions of the bytes
   * and the chain id, so a hint gives what recovering would.
   */
  private hintOutbox: EvmTx[] | null = null;
  /** Executor side: SHA-256 of the raw tx (latin1) → [sender, Ethereum tx hash]. */
  private hints = new Map<string, [Bytes, Bytes]>();
  /** Executor side: block txs whose sender came from a hint, and ones recovered here. */
  readonly hintStats = { hinted: 0, recovered: 0 };

  /** Starts collecting recovered senders for takeSenderHints (the main thread, with an executor thread). */
  shareSenderHints(): void {
    this.hintOutbox ??= [];
  }

  private remember(etx: EvmTx): void {
    const box = this.hintOutbox!;
    box.push(etx);
    // Nobody took them for a while: keep the newest.
    if (box.length > 2 * HINTS_MAX) box.splice(0, box.length - HINTS_MAX);
  }

  /**
   * The hints collected since the last call, packed (HINT_BYTES each, after an 8-byte chain id),
   * or undefined when there are none.
   */
  takeSenderHints(): Uint8Array | undefined {
    const box = this.hintOutbox;
    if (box === null || box.length === 0) return undefined;
    this.hintOutbox = [];
    const take = box.length > HINTS_MAX ? box.slice(box.length - HINTS_MAX) : box;
    const out = new Uint8Array(8 + take.length * HINT_BYTES);
    out.set(u64be(this.chain), 0);
    let o = 8;
    for (const etx of take) {
      out.set(this.cometHash(etx), o);
      out.set(etx.sender!, o + 32);
      out.set(this.ethHash(etx), o + 52);
      o += HINT_BYTES;
    }
    return out;
  }

  /** Executor side: hints the main thread took (takeSenderHints); foreign chain ids are ignored. */
  addSenderHints(packed: Uint8Array | undefined): void {
    if (packed === undefined || packed.length < 8 || readU64be(packed.subarray(0, 8)) !== this.chain) return;
    if (this.hints.size > 4 * HINTS_MAX) this.hints.clear();
    for (let o = 8; o + HINT_BYTES <= packed.length; o += HINT_BYTES) {
      this.hints.set(bytesToKey(packed.subarray(o, o + 32)), [packed.slice(o + 32, o + 52), packed.slice(o + 52, o + 84)]);
    }
  }

  /** Applies a hint to a tx without a sender (executor side): sender, tx view and hash set. */
  private useHint(etx: EvmTx): boolean {
    if (this.hints.size === 0 || etx.sender !== undefined) return false;
    const k = bytesToKey(this.cometHash(etx));
    const h = this.hints.get(k);
    if (h === undefined) return false;
    this.hints.delete(k);
    this.hintStats.hinted++;
    etx.sender = h[0];
    etx.ethHash = h[1];
    etx.tx = withSender(etx.tx, new Address(h[0]));
    return true;
  }

  /**
   * Sender recovery for many txs in one worker-pool call (FinalizeBlock: the block's EVM txs;
   * CheckTx: one). A recovered sender is kept on the EvmTx and handed to runTx through the tx's
   * getSenderAddress (runTx's only use of the signature), so neither the ante nor runTx recovers
   * again. Items the pool refuses (null) are left to the inline path, which gives the error.
   */
  async preVerify(etxs: readonly EvmTx[]): Promise<void> {
    if (this.hints.size > 0) for (const etx of etxs) this.useHint(etx);
    if (this.pool === undefined) return;
    const todo: EvmTx[] = [];
    const items: { digest: Uint8Array; sig: Uint8Array; recid: number }[] = [];
    for (const etx of etxs) {
      if (etx.sender !== undefined) continue;
      const { v, r, s } = etx.tx;
      if (v === undefined || r === undefined || s === undefined || s > SECP256K1_N_DIV_2) continue;
      const recid = etx.tx.type !== TransactionType.Legacy ? v : v === 27n || v === 28n ? v - 27n : v - (this.chain * 2n + 35n);
      if (recid !== 0n && recid !== 1n) continue;
      let sig: Uint8Array;
      try {
        sig = signature64(bigIntToUnpaddedBytes(r), bigIntToUnpaddedBytes(s));
      } catch {
        continue;
      }
      todo.push(etx);
      items.push({ digest: etx.tx.getMessageToVerifySignature(), sig, recid: Number(recid) });
    }
    if (items.length === 0) {
      // CheckTx of a tx whose sender is known (decoded and recovered once, by the tx pool's
      // inspect): no pool job, but still one turn of the event loop, as the job gave. The
      // mempool's recheck after a block awaits CheckTx tx after tx; answered in microtasks only,
      // it would hold the RPC thread for its whole recheck_timeout.
      if (etxs.length === 1) await new Promise<void>((r) => setImmediate(r));
      return;
    }
    const out = await this.pool.recoverSenders(items);
    out.forEach((addr, i) => {
      if (addr === null || addr.length !== 20) return;
      const etx = todo[i]!;
      if (etx.sender !== undefined) return;
      etx.sender = addr;
      etx.tx = withSender(etx.tx, new Address(Uint8Array.from(addr)));
      if (this.hintOutbox !== null) this.remember(etx);
    });
  }

  /** gas × price + value, with the fee cap of a dynamic-fee tx as its price (the most it can cost). */
  /** The price per gas a tx pays with a base fee of 0: its gas price, or min(tip, fee cap). */
  static effectiveGasPrice(tx: TypedTransaction): bigint {
    const t = tx as unknown as { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint };
    return t.gasPrice ?? (t.maxPriorityFeePerGas! < t.maxFeePerGas! ? t.maxPriorityFeePerGas! : t.maxFeePerGas!);
  }

  static maxCost(tx: TypedTransaction): bigint {
    const t = tx as unknown as { gasPrice?: bigint; maxFeePerGas?: bigint };
    const price = t.maxFeePerGas ?? t.gasPrice ?? 0n;
    return tx.gasLimit * price + tx.value;
  }

  /**
   * The EVM ante (Cosmos EVM's, reduced): chain id, replay protection (CheckTx only), sender,
   * intrinsic gas, nonce = sequence, balance ≥ gas × price + value. Effects only in CheckTx: the
   * sequence is bumped and the maximum cost set aside in the check state, so that a sender's next
   * tx is admitted; in FinalizeBlock runTx does both for real.
   */
  ante(ctx: Context, etx: EvmTx): void {
    const meter = ctx.gasMeter;
    ctx.setGasMeter(new InfiniteGasMeter());
    try {
      const tx = etx.tx;
      if (tx.type !== TransactionType.Legacy) {
        const cid = (tx as unknown as { chainId: bigint }).chainId;
        if (cid !== this.chain) throw evmError('invalidChainId', `invalid chain id for signer: have ${cid} want ${this.chain}`);
      } else if (!tx.supports(Capability.EIP155ReplayProtection)) {
        if (ctx.isCheckTx && !this.allowUnprotectedTxs) {
          throw evmError('unauthorized', 'only replay-protected (EIP-155) transactions allowed over RPC');
        }
      }
      const from = this.sender(etx);
      const intrinsic = this.intrinsicGas(etx);
      if (tx.gasLimit < intrinsic) throw evmError('outOfGas', `intrinsic gas too low: have ${tx.gasLimit}, want ${intrinsic}`);
      // EIP-7623 (Prague): the gas limit must also cover the calldata floor, or runTx refuses the
      // tx (geth: core.ErrFloorDataGas, checked in its pool and its state transition alike).
      const floor = this.floorGas(etx);
      if (tx.gasLimit < floor) throw evmError('outOfGas', `insufficient gas for floor data gas cost: have ${tx.gasLimit}, want ${floor}`);
      const acc = this.auth.getAccount(ctx, from);
      const seq = acc?.sequence ?? 0n;
      if (tx.nonce < seq) throw evmError('wrongSequence', `nonce too low: address ${hex0x(from)}, tx: ${tx.nonce} state: ${seq}`);
      if (tx.nonce > seq) throw evmError('wrongSequence', `nonce too high: address ${hex0x(from)}, tx: ${tx.nonce} state: ${seq}`);
      const balance = this.bank.getBalance(ctx, from, this.denom).amount;
      const cost = EvmKeeper.maxCost(tx);
      if (balance < cost) {
        throw evmError('insufficientFunds', `insufficient funds for gas * price + value: address ${hex0x(from)} have ${balance} want ${cost}`);
      }
      if (ctx.isCheckTx) {
        setSequence(this, ctx, from, seq + 1n, acc ?? null);
        setBankBalance(this, ctx, from, balance - cost, balance !== 0n);
      }
    } finally {
      ctx.setGasMeter(meter);
    }
  }

  /** The tx's intrinsic gas, computed once per decoded tx. */
  private intrinsicGas(etx: EvmTx): bigint {
    return (etx.intrinsic ??= etx.tx.getIntrinsicGas());
  }

  /** The tx's EIP-7623 calldata floor (0 before Prague), computed once per decoded tx. */
  private floorGas(etx: EvmTx): bigint {
    return (etx.floor ??= getCalldataFloorGas(etx.tx, new Address(this.sender(etx))));
  }

  // --- execution ------------------------------------------------------------------------------------

  /** The block env of a height, built once per block (createBlock copies Common: ~1 ms). */
  private blockFor(ctx: Context): Block {
    const maxGas = ctx.consensusParams?.block.maxGas ?? -1n;
    const c = this.blockCache;
    if (c !== undefined && c.height === ctx.height && c.time === ctx.time && c.maxGas === maxGas && c.common === this.common) return c.block;
    const block = this.makeBlock(ctx, maxGas);
    this.blockCache = { height: ctx.height, time: ctx.time, maxGas, common: this.common, block };
    return block;
  }

  private makeBlock(ctx: Context, maxGas: bigint): Block {
    return createBlock(
      {
        header: {
          number: ctx.height,
          timestamp: ctx.time / 1_000_000_000n,
          coinbase: this.coinbase,
          gasLimit: maxGas > 0n ? maxGas : 1n << 62n,
          baseFeePerGas: 0n,
          mixHash: new Uint8Array(32),
        },
      },
      { common: this.common, skipConsensusFormatValidation: true },
    );
  }

  private pendingBlock(height: bigint): PendingBlock {
    if (this.block === undefined || this.block.height !== height) {
      this.block = { height, receipts: [], txs: [], gasUsed: 0n, logsBloom: new Uint8Array(256), logCount: 0 };
    }
    return this.block;
  }

  /**
   * Runs the tx (its ante passed) on the tx's Context. EVM failures (revert, out of gas…) return
   * normally with status 0 — the fee and nonce stay, the gas is charged — as on Ethereum. A tx
   * runTx refuses outright throws (BaseApp then drops the run stage: no effects, code ≠ 0).
   */
  execute(ctx: Context, etx: EvmTx): Promise<{ data?: Bytes }> {
    return this.serial(() => this.executeNow(ctx, etx));
  }

  private async executeNow(ctx: Context, etx: EvmTx): Promise<{ data?: Bytes }> {
    const meter = ctx.gasMeter;
    ctx.setGasMeter(new InfiniteGasMeter());
    const eng = await this.engine();
    const finalize = ctx.mode === ExecMode.Finalize;
    // The caches (the manager's, the view's reads) carry over only from the block state's
    // previous tx, once it landed (see the header comment).
    const w = this.watched;
    const inBlock = finalize && w !== undefined && w.height === ctx.height;
    if (inBlock && w.eng === eng && !w.unlanded) eng.view.carryOver(ctx);
    else {
      eng.sm.clearCaches();
      eng.view.ctx = ctx;
    }
    if (w !== undefined) {
      w.eng = inBlock ? eng : undefined;
      w.unlanded = false;
    }
    try {
      const tx = etx.tx;
      const from = this.sender(etx);
      const blk = finalize ? this.pendingBlock(ctx.height) : undefined;
      let r;
      try {
        const block = this.blockFor(ctx);
        const fast = eng.fast === undefined || !this.fastTxs ? undefined : runFastTx({ fast: eng.fast, sm: eng.sm, common: this.common, tx, sender: from, intrinsic: this.intrinsicGas(etx), floor: this.floorGas(etx), block });
        r = fast ?? (await runTx(eng.vm, { tx, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true, blockGasUsed: blk?.gasUsed ?? 0n }));
      } catch (e) {
        // The manager may hold a half-run tx: start the next one on a fresh engine.
        this.engineP = undefined;
        if (blk === undefined) throw evmError('invalidRequest', `evm: ${(e as Error).message}`);
        // In a block, a tx whose ante passed is never free: a library throw is a failed tx.
        meter.consume(tx.gasLimit, 'evm execution');
        return this.failInBlock(ctx, etx, blk, from, (e as Error).message);
      }
      const changes: StateChanges = eng.sm.flush();
      if (inBlock) w.unlanded = true;
      eng.view.apply(changes);
      meter.consume(r.totalGasSpent, 'evm execution');

      const err = r.execResult.exceptionError;
      const logs = (r.execResult.logs ?? []) as [Uint8Array, Uint8Array[], Uint8Array][];
      const ethHash = this.ethHash(etx);
      const cometHash = this.txCometHash(ctx, etx);
      const index = blk?.receipts.length ?? 0;
      const firstLogIndex = blk?.logCount ?? 0;
      const effectiveGasPrice = EvmKeeper.effectiveGasPrice(tx);
      const receipt: StoredReceipt = {
        type: tx.type,
        status: err === undefined ? 1 : 0,
        cumulativeGasUsed: (blk?.gasUsed ?? 0n) + r.totalGasSpent,
        gasUsed: r.totalGasSpent,
        logsBloom: r.bloom.bitvector,
        logs,
        contractAddress: r.createdAddress?.bytes,
        ethHash,
        cometHash,
        from,
        to: tx.to?.bytes,
        index,
        firstLogIndex,
        effectiveGasPrice,
        error: err?.error ?? '',
      };
      if (blk !== undefined) {
        blk.receipts.push(receipt);
        blk.txs.push(etx.raw);
        blk.gasUsed = receipt.cumulativeGasUsed;
        blk.logCount += logs.length;
        for (let i = 0; i < 256; i++) blk.logsBloom[i]! |= receipt.logsBloom[i]!;
      }
      this.emitEvents(ctx, receipt, tx);
      return { data: r.execResult.returnValue };
    } finally {
      eng.view.carryOver(undefined);
      ctx.setGasMeter(meter);
    }
  }

  /**
   * A tx that passed the ante but that runTx threw on (a library error, not an EVM failure): as on
   * Ethereum for a tx that fails, it consumes its whole gas limit, pays for it and bumps the nonce,
   * and gets a status-0 receipt with no logs. Otherwise such a tx would cost nothing and could be
   * repeated at will. The base fee is 0, so the whole fee goes to the fee collector (coinbase).
   */
  private failInBlock(ctx: Context, etx: EvmTx, blk: PendingBlock, from: Bytes, message: string): { data?: Bytes } {
    const tx = etx.tx;
    const effectiveGasPrice = EvmKeeper.effectiveGasPrice(tx);
    const fee = tx.gasLimit * effectiveGasPrice;
    const seq = this.auth.getAccount(ctx, from)?.sequence ?? 0n;
    setSequence(this, ctx, from, seq + 1n);
    const balance = this.bank.getBalance(ctx, from, this.denom).amount;
    setBankBalance(this, ctx, from, balance - fee);
    const collected = this.bank.getBalance(ctx, this.coinbase, this.denom).amount;
    setBankBalance(this, ctx, this.coinbase, collected + fee);
    const receipt: StoredReceipt = {
      type: tx.type,
      status: 0,
      cumulativeGasUsed: blk.gasUsed + tx.gasLimit,
      gasUsed: tx.gasLimit,
      logsBloom: new Uint8Array(256),
      logs: [],
      contractAddress: undefined,
      ethHash: this.ethHash(etx),
      cometHash: this.txCometHash(ctx, etx),
      from,
      to: tx.to?.bytes,
      index: blk.receipts.length,
      firstLogIndex: blk.logCount,
      effectiveGasPrice,
      error: `evm: ${message}`,
    };
    blk.receipts.push(receipt);
    blk.txs.push(etx.raw);
    blk.gasUsed = receipt.cumulativeGasUsed;
    this.emitEvents(ctx, receipt, tx);
    return {};
  }

  /**
   * Cosmos EVM's events (cosmos/evm:x/vm/types/events.go): `ethereum_tx` (tx_search finds the tx by
   * `ethereum_tx.ethereumTxHash='0x…'`), one `tx_log` per log, and a `message` event.
   */
  private emitEvents(ctx: Context, r: StoredReceipt, tx: TypedTransaction): void {
    const attrs: [string, string][] = [['amount', tx.value.toString()]];
    if (r.to !== undefined) attrs.push(['recipient', hex0x(r.to)]);
    if (r.contractAddress !== undefined) attrs.push(['contract', hex0x(r.contractAddress)]);
    attrs.push(['txHash', hexUpper(r.cometHash)], ['ethereumTxHash', hex0x(r.ethHash)], ['txIndex', String(r.index)], ['txGasUsed', r.gasUsed.toString()], ['txType', String(r.type)]);
    if (r.status === 0) attrs.push(['ethereumTxFailed', r.error]);
    ctx.events.emit('ethereum_tx', attrs);
    if (r.logs.length > 0) {
      // JSON.stringify({ address, topics, data, blockNumber, transactionHash, transactionIndex,
      // logIndex, removed }) written out: every value is a 0x hex string (nothing to escape) or an
      // integer, so the text is the same, without an object and a walk over it per log.
      const tail = `,"blockNumber":${Number(ctx.height)},"transactionHash":"${hex0x(r.ethHash)}","transactionIndex":${r.index},"logIndex":`;
      r.logs.forEach(([address, topics, data], i) => {
        const json = `{"address":"${hex0x(address)}","topics":[${topics.map((x) => `"${hex0x(x)}"`).join(',')}],"data":"${hex0x(data)}"${tail}${r.firstLogIndex + i},"removed":false}`;
        ctx.events.emit('tx_log', [['txLog', json]]);
      });
    }
    ctx.events.emit('message', [
      ['module', 'evm'],
      ['sender', hex0x(r.from)],
      ['txType', String(r.type)],
    ]);
  }

  // --- genesis ----------------------------------------------------------------------------------------

  initGenesis(ctx: Context, gs: unknown): void {
    const g = (gs ?? {}) as { chain_id?: number | string; evm_denom?: string; accounts?: { address: string; code?: string; storage?: Record<string, string> }[] };
    if (g.evm_denom !== undefined && g.evm_denom !== this.denom) throw new Error(`evm genesis: evm_denom ${g.evm_denom} is not ${this.denom}`);
    if (g.chain_id !== undefined) {
      const id = BigInt(g.chain_id);
      if (id <= 0n || id >= 1n << 53n) throw new Error(`evm genesis: chain_id ${g.chain_id} out of range`);
      this.setChainId(id);
    }
    const store = evmStore(ctx);
    store.set(PARAMS_KEY, new TextEncoder().encode(JSON.stringify({ chain_id: this.chain.toString(), evm_denom: this.denom })));
    for (const a of g.accounts ?? []) {
      const addr = Buffer.from(a.address.replace(/^0x/, ''), 'hex');
      if (addr.length !== 20) throw new Error(`evm genesis: bad address ${a.address}`);
      const address = new Uint8Array(addr);
      if (a.code !== undefined && a.code !== '0x' && a.code !== '') {
        const code = new Uint8Array(Buffer.from(a.code.replace(/^0x/, ''), 'hex'));
        const h = this.crypto.keccak256(code);
        store.set(concatBytes(Uint8Array.of(CODE_HASH_PREFIX), address), h);
        store.set(concatBytes(Uint8Array.of(0x02), h), code);
      }
      for (const [k, v] of Object.entries(a.storage ?? {})) {
        const slot = new Uint8Array(32);
        const kb = Buffer.from(k.replace(/^0x/, '').padStart(64, '0'), 'hex');
        slot.set(kb, 32 - kb.length);
        let vb = new Uint8Array(Buffer.from(v.replace(/^0x/, '').padStart(2, '0'), 'hex'));
        let i = 0;
        while (i < vb.length && vb[i] === 0) i++;
        vb = vb.subarray(i);
        if (vb.length > 0) store.set(concatBytes(Uint8Array.of(STORAGE_PREFIX), address, slot), vb);
      }
    }
  }

  // --- state root ---------------------------------------------------------------------------------------

  /**
   * The state root after the block whose changed keys are `changed` (store key → keys relative to
   * the store that differ from the committed state). `ctx` reads the block's final state.
   */
  async computeRoot(ctx: Context, changed: ReadonlyMap<string, readonly Bytes[]>): Promise<Bytes> {
    const stateRoot = await this.computeStateRoot(ctx, changed);
    this.header = { height: ctx.height, sealed: this.buildHeader(ctx, stateRoot) };
    return stateRoot;
  }

  /**
   * The Ethereum header of the block being finalized (header.ts): its receipts and txs as run,
   * the state root just computed, the parent's stored EVM hash, the block env's gas limit and
   * time, the proposer as coinbase.
   */
  private buildHeader(ctx: Context, stateRoot: Bytes): SealedHeader {
    const blk = this.block !== undefined && this.block.height === ctx.height ? this.block : undefined;
    const keccak = (d: Uint8Array) => this.crypto.keccak256(d);
    const maxGas = ctx.consensusParams?.block.maxGas ?? -1n;
    const proposer = ctx.proposerAddress;
    return sealHeader(
      makeHeader({
        parentHash: this.blockHashAt(ctx.height - 1n) ?? new Uint8Array(32),
        coinbase: proposer !== undefined && proposer.length === 20 ? proposer : new Uint8Array(20),
        stateRoot,
        transactionsRoot: orderedTrieRoot(blk?.txs ?? [], keccak),
        receiptsRoot: orderedTrieRoot((blk?.receipts ?? []).map(consensusReceipt), keccak),
        logsBloom: blk?.logsBloom ?? new Uint8Array(256),
        number: ctx.height,
        gasLimit: maxGas > 0n ? maxGas : 1n << 62n,
        gasUsed: blk?.gasUsed ?? 0n,
        timestamp: ctx.time / 1_000_000_000n,
      }),
      this.crypto,
    );
  }

  /**
   * debug_intermediateRoots over a replayed branch (BaseApp.replayBlockTxs): the state root of
   * `ctx`, whose keys `changed` differ from the state whose root is `parentRoot`, computed as
   * computeStateRoot does but from that root and its storage roots. Nothing is written.
   */
  async rootOver(ctx: Context, changed: ReadonlyMap<string, readonly Bytes[]>, parentRoot: Bytes): Promise<Bytes> {
    const { accounts, slots } = this.changesFrom(ctx, changed);
    if (accounts.length === 0) return parentRoot;
    const base = this.nodeReader();
    const parent = new StateTrie({ nodes: base, root: parentRoot, crypto: this.crypto });
    // The parent's storage roots (readAccount gives the latest height's), from its account leaves.
    const roots = new Map<string, Bytes>();
    for (const a of accounts) {
      const r = hexToBytes((await parent.getProof(a.address, [], parentRoot)).storageHash as PrefixedHexString);
      roots.set(bytesToKey(a.address), r);
      if (a.account !== undefined) a.account = { ...a.account, storageRoot: r };
    }
    const atParent: FlatState = {
      getAccount: (a) => ({ nonce: 0n, balance: 0n, storageRoot: roots.get(bytesToKey(a)) ?? EMPTY_TRIE_ROOT, codeHash: EMPTY_TRIE_ROOT }) as AccountRecord,
      getCode: () => undefined,
      getStorage: () => undefined,
      storageEntries: () => [],
      apply: () => {
        throw new Error('read-only');
      },
    };
    const trie = new StateTrie({ nodes: overlayKV(base), root: parentRoot, crypto: this.crypto });
    return (await trie.commit({ accounts, storage: [...slots.values()], code: [] }, atParent)).stateRoot;
  }

  /** The accounts and slots a block's changed keys touch, as `ctx` has them (computeStateRoot). */
  private changesFrom(ctx: Context, changed: ReadonlyMap<string, readonly Bytes[]>): { accounts: StateChanges['accounts']; slots: Map<string, StorageChange> } {
    const touched = new Map<string, Bytes>();
    const slots = new Map<string, StorageChange>();
    const evm = evmStore(ctx);
    const denom = this.denomKey();
    for (const storeKey of [this.auth.storeKey, this.bank.storeKey, EVM_STORE_KEY]) {
      for (const k of changed.get(storeKey) ?? []) {
        const t = this.keyTouch(storeKey, bytesToKey(k), denom);
        if (t === undefined) continue;
        if (!touched.has(t.addr)) touched.set(t.addr, keyBytes(t.addr));
        if (t.slot === undefined) continue;
        let s = slots.get(t.addr);
        if (s === undefined) {
          s = { address: keyBytes(t.addr), wiped: false, slots: [] };
          slots.set(t.addr, s);
        }
        s.slots.push({ slot: keyBytes(t.slot), value: evm.get(k) ?? new Uint8Array(0) });
      }
    }
    const accounts: StateChanges['accounts'] = [];
    for (const [, addr] of touched) accounts.push({ address: addr, account: readAccount(this, ctx, addr) });
    return { accounts, slots };
  }

  private async computeStateRoot(ctx: Context, changed: ReadonlyMap<string, readonly Bytes[]>): Promise<Bytes> {
    const { accounts, slots } = this.changesFrom(ctx, changed);
    if (accounts.length === 0) {
      this.root = { height: ctx.height, stateRoot: this.committedRoot, nodes: [], storageRoots: [] };
      return this.committedRoot;
    }
    const changes: StateChanges = { accounts, storage: [...slots.values()], code: [] };
    // The base of each storage trie is the committed storage root (evm_trie), never the block's.
    const committed: FlatState = {
      getAccount: (a) => {
        const sr = this.storageRoot(a);
        return sr === undefined ? undefined : ({ nonce: 0n, balance: 0n, storageRoot: sr, codeHash: EMPTY_TRIE_ROOT } as AccountRecord);
      },
      getCode: () => undefined,
      getStorage: () => undefined,
      storageEntries: () => [],
      apply: () => {
        throw new Error('read-only');
      },
    };
    const trie = new StateTrie({ nodes: this.nodeReader(), root: this.committedRoot, crypto: this.crypto });
    const { stateRoot, nodes } = await trie.commit(changes, committed);
    const storageRoots: [Bytes, Bytes | undefined][] = [];
    for (const a of accounts) {
      const ak = bytesToKey(a.address);
      if (!slots.has(ak) && a.account !== undefined) continue;
      const sr = a.account?.storageRoot;
      storageRoots.push([a.address, sr === undefined || bytesEqualRoot(sr) ? undefined : sr]);
    }
    this.root = { height: ctx.height, stateRoot, nodes, storageRoots };
    return stateRoot;
  }

  /** The stored trie nodes, read-only (also debug_intermediateRoots' base, trace.ts). */
  nodeReader(): EvmKV {
    const db = this.trieDb;
    return {
      get: (k) => db?.getBinary(k),
      put: () => {
        throw new Error('evm_trie is written only in commit()');
      },
      del: () => {},
      range: () => [],
    };
  }

  // --- commit -------------------------------------------------------------------------------------------

  commit(c: ModuleCommit): void {
    const trie = c.db(EVM_TRIE_DB);
    const root = this.root;
    this.storageRoots.clear();
    if (root !== undefined && root.height === c.height) {
      for (const [k, v] of root.nodes) trie.putSync(k, v);
      for (const [a, sr] of root.storageRoots) {
        if (sr === undefined) trie.removeSync(storageRootKey(a));
        else trie.putSync(storageRootKey(a), sr);
      }
      this.committedRoot = root.stateRoot;
    }
    trie.putSync(heightRootKey(c.height), this.committedRoot);
    trie.putSync(LATEST_ROOT_KEY, concatBytes(u64be(c.height), this.committedRoot));
    if (this.chainIdDirty || trie.getBinary(CHAIN_ID_KEY) === undefined) trie.putSync(CHAIN_ID_KEY, u64be(this.chain));
    this.chainIdDirty = false;
    this.committedHeight = c.height;
    this.root = undefined;

    const hdr = this.header;
    if (hdr !== undefined && hdr.height === c.height) {
      const rdb = c.db(EVM_RECEIPTS_DB);
      rdb.putSync(headerKey(c.height), encodeStoredHeader(hdr.sealed));
      rdb.putSync(blockHashKey(hdr.sealed.hash), u64be(c.height));
    }
    this.header = undefined;

    const blk = this.block;
    if (blk !== undefined && blk.height === c.height) {
      const rdb = c.db(EVM_RECEIPTS_DB);
      for (const r of blk.receipts) {
        rdb.putSync(txLookupKey(r.ethHash), txPosition(c.height, r.index));
        rdb.putSync(cometHashKey(r.cometHash), r.ethHash);
        rdb.putSync(receiptKey(c.height, r.index), encodeReceipt(r));
        r.logs.forEach(([address, topics, data], i) => {
          rdb.putSync(logKey(c.height, r.firstLogIndex + i), encodeLog({ address, topics, data, txIndex: r.index }));
        });
      }
      rdb.putSync(blockKey(c.height), encodeBlock({ txCount: blk.receipts.length, gasUsed: blk.gasUsed, logsBloom: blk.logsBloom, logCount: blk.logCount }));
    }
    this.block = undefined;
  }

  /**
   * BaseApp opened the state of block `height`: the returned watcher sees every key written into
   * it. While the engine's caches are over this state, a key an EVM run stage wrote tells that the
   * last run landed (what the caches hold is now what the state holds); any other writer's key
   * drops the account whose auth account, `achain` balance or code hash it is, or the slot it is.
   */
  watchBlockState(height: bigint): BlockStateWatcher {
    const w: NonNullable<EvmKeeper['watched']> = { height, eng: undefined, unlanded: false };
    this.watched = w;
    const denom = this.denomKey();
    return (storeKey, k, runOf) => {
      const eng = w.eng;
      if (eng === undefined) return;
      if (runOf === EVM_KIND) {
        w.unlanded = false;
        return;
      }
      const t = this.keyTouch(storeKey, k, denom);
      if (t === undefined) return;
      if (t.slot !== undefined) eng.sm.forgetSlot(t.addr, t.slot);
      else {
        eng.sm.forgetAccount(t.addr);
        eng.view.forget(t.addr);
      }
    };
  }

  /** The EVM denom as a latin1 key (an `achain` balance key ends with it: keyTouch). */
  private denomKey(): string {
    return bytesToKey(utf8(this.denom));
  }

  /**
   * What a key written into a block state is to the account model (keys latin1, relative to their
   * store; `denom` from denomKey): an auth account, an `achain` balance or a code hash gives the
   * address whose account it is; a storage slot, its address and slot; any other key, undefined.
   * The state root (changesFrom) and the caches (watchBlockState) read keys through this.
   */
  private keyTouch(storeKey: string, k: string, denom: string): { addr: string; slot?: string } | undefined {
    const kind = k.charCodeAt(0);
    if (storeKey === EVM_STORE_KEY) {
      if (kind === CODE_HASH_PREFIX && k.length === 21) return { addr: k.slice(1) };
      if (kind === STORAGE_PREFIX && k.length === 53) return { addr: k.slice(1, 21), slot: k.slice(21) };
    } else if (storeKey === this.auth.storeKey) {
      if (kind === ACCOUNTS_PREFIX[0] && k.length === 21) return { addr: k.slice(1) };
    } else if (storeKey === this.bank.storeKey) {
      if (kind === BALANCES_PREFIX[0] && k.charCodeAt(1) === 20 && k.length === 22 + denom.length && k.endsWith(denom)) return { addr: k.slice(2, 22) };
    }
    return undefined;
  }

  /** A re-run of a height or a reload: drop what was computed, re-read what was committed. */
  discardPending(): void {
    this.block = undefined;
    this.root = undefined;
    this.header = undefined;
    this.loadCommitted();
  }

  // --- reads for the RPC --------------------------------------------------------------------------------

  /**
   * The account as the EVM sees it in `ctx` (e.g. `app.queryContext(height)` for eth_getBalance /
   * eth_getTransactionCount at a height), or undefined if it does not exist.
   */
  account(ctx: Context, addr: Bytes): AccountRecord | undefined {
    return readAccount(this, ctx, addr);
  }

  /** The code at `addr` in `ctx` (empty without code). */
  code(ctx: Context, addr: Bytes): Bytes {
    const s = evmStore(ctx);
    const h = s.get(codeHashKey(addr));
    return h === undefined ? new Uint8Array(0) : (s.get(codeKey(h)) ?? new Uint8Array(0));
  }

  /** The 32-byte storage word of `slot` at `addr` in `ctx`. */
  storage(ctx: Context, addr: Bytes, slot: Bytes): Bytes {
    const v = evmStore(ctx).get(slotKey(addr, slot));
    const out = new Uint8Array(32);
    if (v !== undefined) out.set(v, 32 - v.length);
    return out;
  }

  /** The state root after `height` (undefined if the height has none recorded). */
  stateRootAt(height: bigint): Bytes | undefined {
    return this.trieDb?.getBinary(heightRootKey(height));
  }

  get lastStateRoot(): Bytes {
    return this.committedRoot;
  }

  get lastHeight(): bigint {
    return this.committedHeight;
  }

  receiptByHash(ethHash: Bytes): (StoredReceipt & { height: bigint }) | undefined {
    const pos = this.receiptsDb?.getBinary(txLookupKey(ethHash));
    if (pos === undefined) return undefined;
    const height = readU64be(pos.subarray(0, 8));
    const v = this.receiptsDb!.getBinary(concatBytes(Uint8Array.of(0x02), pos));
    return v === undefined ? undefined : { ...decodeReceipt(v), height };
  }

  /** The Ethereum header of a committed height, with its hash and RLP (undefined: none stored). */
  headerAt(height: bigint): SealedHeader | undefined {
    const v = this.receiptsDb?.getBinary(headerKey(height));
    return v === undefined ? undefined : decodeStoredHeader(v);
  }

  /** The EVM block hash of a committed height (no RLP decode). */
  blockHashAt(height: bigint): Bytes | undefined {
    if (height < 0n) return undefined;
    const v = this.receiptsDb?.getBinary(headerKey(height));
    return v === undefined ? undefined : Uint8Array.from(v.subarray(0, 32));
  }

  /** The height whose EVM block hash is `hash`. */
  heightOfBlockHash(hash: Bytes): bigint | undefined {
    const v = this.receiptsDb?.getBinary(blockHashKey(hash));
    return v === undefined ? undefined : readU64be(v);
  }

  /** The eth hash of the EVM tx whose raw bytes hash (sha256) to `cometHash`. */
  ethHashOf(cometHash: Bytes): Bytes | undefined {
    return this.receiptsDb?.getBinary(cometHashKey(cometHash));
  }

  blockReceipts(height: bigint): StoredReceipt[] {
    return this.rangeValues(receiptsPrefix(height)).map(decodeReceipt);
  }

  /** The Ethereum and CometBFT hashes of a block's EVM txs, in execution order (blockReceipts, lighter). */
  blockTxHashes(height: bigint): ReceiptHashes[] {
    return this.rangeValues(receiptsPrefix(height)).map(receiptHashes);
  }

  blockSummary(height: bigint): StoredBlock | undefined {
    const v = this.receiptsDb?.getBinary(blockKey(height));
    return v === undefined ? undefined : decodeBlock(v);
  }

  blockLogs(height: bigint): IndexedLog[] {
    return this.rangeValues(logsPrefix(height)).map(decodeLog);
  }

  private rangeValues(prefix: Bytes): Bytes[] {
    if (this.receiptsDb === undefined) return [];
    const end = Uint8Array.from(prefix);
    end[end.length - 1]! += 1;
    const out: Bytes[] = [];
    for (const { value } of this.receiptsDb.getRange({ start: prefix, end })) out.push(value as Bytes);
    return out;
  }

  /** EIP-1186 proof at the state root after `height` (default: the last committed). */
  async getProof(address: Bytes, slots: Bytes[] = [], height?: bigint): Promise<AccountProof> {
    const root = height === undefined ? this.committedRoot : this.stateRootAt(height);
    if (root === undefined) throw new Error(`no state root for height ${height}`);
    const trie = new StateTrie({ nodes: this.nodeReader(), root, crypto: this.crypto });
    return trie.getProof(address, slots, root);
  }
}

/**
 * The tx with getSenderAddress answering `sender` (a frozen tx cannot take the property, and the
 * pool returns addresses, not the public key the tx's own cache would need). Every other member is
 * the tx's own, methods bound to it.
 */
export function withSender(tx: TypedTransaction, sender: Address): TypedTransaction {
  const getSenderAddress = () => sender;
  return new Proxy(tx, {
    get(target, prop) {
      if (prop === 'getSenderAddress') return getSenderAddress;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The chain id a raw tx was signed for (typed: its chainId field; legacy: from v), if readable. */
function signedChainId(raw: Bytes): bigint | undefined {
  try {
    if (raw[0] === 0x01 || raw[0] === 0x02 || raw[0] === 0x04) {
      const f = RLP.decode(raw.subarray(1)) as Uint8Array[];
      return Array.isArray(f) && f[0] instanceof Uint8Array ? bytesToBigInt(f[0]) : undefined;
    }
    const f = RLP.decode(raw) as Uint8Array[];
    if (!Array.isArray(f) || !(f[6] instanceof Uint8Array)) return undefined;
    const v = bytesToBigInt(f[6]);
    return v >= 35n ? (v - 35n) / 2n : undefined;
  } catch {
    return undefined;
  }
}

function bytesEqualRoot(r: Bytes): boolean {
  if (r.length !== 32) return false;
  for (let i = 0; i < 32; i++) if (r[i] !== EMPTY_TRIE_ROOT[i]) return false;
  return true;
}

