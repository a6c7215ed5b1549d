/**
 * Spec §4.4's status table for the namespaces served here (eth, net, web3, txpool, personal, debug, miner): each
 * method's status (Y functional, Stub success with empty values, N an error) and its public flag.
 * The N methods are registered from this table (they answer -32601); the unit test checks the
 * served table against it (test/unit/evm-rpc.test.ts). Where we serve more than the spec's
 * reference did (the issue asks for it: signing for dev tools, a real keystore), the row is Y and
 * `spec` keeps the table's own status.
 *
 * Private methods (Public flag N, and every personal_ and debug_ method, spec §5) need a JWT
 * (geth-server.ts); an N method is refused as unknown, token or not, since it does nothing.
 */
export type SpecStatus = 'Y' | 'Stub' | 'N';

export interface MethodStatus {
  status: SpecStatus;
  /** The table's Public flag (false: private, e.g. eth_sign). */
  public: boolean;
  /** The spec table's status where it differs from what is served. */
  spec?: SpecStatus;
}

const rows: [SpecStatus, boolean, string, string[], SpecStatus?][] = [
  ['Y', true, 'web3', ['clientVersion', 'sha3']],
  ['Y', true, 'net', ['version']],
  ['Stub', true, 'net', ['peerCount', 'listening']],
  [
    'Y',
    true,
    'eth',
    [
      'protocolVersion', 'accounts', 'blockNumber', 'getBalance', 'getStorageAt', 'getTransactionCount', 'sendRawTransaction',
      'createAccessList', 'estimateGas', 'getBlockByNumber', 'getBlockByHash', 'newFilter', 'newBlockFilter',
      'newPendingTransactionFilter', 'mining', 'coinbase', 'hashrate', 'getProof', 'feeHistory', 'chainId',
      'getPendingTransactions', 'getHeaderByHash', 'getHeaderByNumber', 'subscribe', 'unsubscribe', 'getTransactionLogs',
    ],
  ],
  ['Y', false, 'eth', ['sign']],
  // Spec N/N; served for unlocked keystore accounts (dev tools rely on them), private.
  ['Y', false, 'eth', ['sendTransaction', 'signTransaction', 'signTypedData', 'signTypedData_v4'], 'N'],
  [
    'Stub',
    true,
    'eth',
    [
      'syncing', 'gasPrice', 'getBlockTransactionCountByNumber', 'getBlockTransactionCountByHash', 'getCode', 'call',
      'getTransactionByHash', 'getTransactionByBlockHashAndIndex', 'getTransactionByBlockNumberAndIndex', 'getTransactionReceipt',
      'uninstallFilter', 'getFilterChanges', 'getFilterLogs', 'getLogs', 'getUncleCountByBlockHash', 'getUncleCountByBlockNumber',
      'getUncleByBlockHashAndIndex', 'getUncleByBlockNumberAndIndex', 'maxPriorityFeePerGas', 'getBlockReceipts',
    ],
  ],
  [
    'N',
    true,
    'eth',
    [
      'getWork', 'submitWork', 'submitHashrate', 'resend', 'blobBaseFee', 'fillTransaction', 'pendingTransactions', 'simulateV1',
      'getRawTransactionByHash', 'getRawTransactionByBlockNumberAndIndex', 'getRawTransactionByBlockHashAndIndex',
    ],
  ],
  [
    'N',
    false,
    'eth',
    ['getCompilers', 'compileLLL', 'compileSolidity', 'compileSerpent', 'signTypedData_v3'],
  ],
  ['Y', true, 'txpool', ['content', 'contentFrom', 'inspect', 'status']],
  ['Y', false, 'personal', ['listAccounts', 'newAccount', 'sign']],
  // Spec Stub (always false / null); served as geth's (spec §3's lock states are real here).
  ['Y', false, 'personal', ['lockAccount', 'unlockAccount', 'listWallets'], 'Stub'],
  ['Y', false, 'personal', ['importRawKey', 'sendTransaction', 'ecRecover'], 'N'],
  ['N', false, 'personal', ['initializeWallet', 'unpair', 'signTransaction', 'signAndSendTransaction', 'openWallet', 'deriveAccount']],
  // debug (spec §5: every method private). The raw-data rows are spec N; served (issue 12).
  [
    'Y',
    false,
    'debug',
    [
      'blockProfile', 'cpuProfile', 'gcStats', 'goTrace', 'freeOSMemory', 'memStats', 'mutexProfile', 'setBlockProfileRate',
      'setGCPercent', 'setMutexProfileFraction', 'stacks', 'startCPUProfile', 'startGoTrace', 'stopCPUProfile', 'stopGoTrace',
      'traceBlock', 'traceBlockByNumber', 'traceBlockByHash', 'traceTransaction', 'traceCall', 'writeBlockProfile',
      'writeMemProfile', 'writeMutexProfile', 'printBlock', 'intermediateRoots',
    ],
  ],
  ['Y', false, 'debug', ['getRawBlock', 'getRawHeader', 'getRawReceipts', 'getRawTransaction', 'getHeaderRlp', 'getBlockRlp'], 'N'],
  [
    'N',
    false,
    'debug',
    [
      'backtraceAt', 'dumpBlock', 'seedHash', 'setHead', 'traceBlockFromFile', 'standardTraceBlockToFile', 'standardTraceBadBlockToFile',
      'traceChain', 'traceBadBlock', 'verbosity', 'vmodule', 'getBadBlocks', 'storageRangeAt', 'getModifiedAccountsByNumber',
      'getModifiedAccountsByHash',
    ],
  ],
  // Nothing mines on a BFT chain.
  ['N', false, 'miner', ['start', 'stop', 'setEtherbase', 'setGasPrice', 'setGasLimit', 'setExtra', 'setRecommitInterval', 'getHashrate']],
];

export const EVM_METHOD_STATUS: ReadonlyMap<string, MethodStatus> = new Map(
  rows.flatMap(([status, pub, ns, names, spec]) => names.map((n) => [`${ns}_${n}`, spec === undefined ? { status, public: pub } : { status, public: pub, spec }] as const)),
);

/** Namespaces whose every method is private (spec §5: all personal and debug methods). */
export const PRIVATE_NAMESPACES: ReadonlySet<string> = new Set(['personal', 'debug']);

/**
 * Whether a call to `method` needs a valid JWT: a private namespace, or a row with Public N that
 * does something (an N method answers -32601 without doing any work, token or not).
 */
export function isPrivateMethod(method: string): boolean {
  const i = method.indexOf('_');
  if (i > 0 && PRIVATE_NAMESPACES.has(method.slice(0, i))) return true;
  const s = EVM_METHOD_STATUS.get(method);
  return s !== undefined && !s.public && s.status !== 'N';
}

/** The spec's N methods of a namespace. */
export function notImplementedIn(ns: string): string[] {
  return [...EVM_METHOD_STATUS].filter(([name, s]) => s.status === 'N' && name.startsWith(`${ns}_`)).map(([name]) => name);
}
