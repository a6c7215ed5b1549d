/**
 * Spec §4.4's status table for the namespaces served here (eth, net, web3): each method's status
 * (Y functional, Stub success with empty values, N an error) and its public flag. The N methods
 * are registered from this table (they answer -32601); the unit test checks the served table
 * against it (test/unit/evm-rpc.test.ts).
 */
export type SpecStatus = 'Y' | 'Stub' | 'N';

export interface MethodStatus {
  status: SpecStatus;
  /** The table's Public flag (false: private, e.g. eth_sign). */
  public: boolean;
}

const rows: [SpecStatus, boolean, string, string[]][] = [
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
    ['sendTransaction', 'getCompilers', 'compileLLL', 'compileSolidity', 'compileSerpent', 'signTransaction', 'signTypedData', 'signTypedData_v3', 'signTypedData_v4'],
  ],
];

export const EVM_METHOD_STATUS: ReadonlyMap<string, MethodStatus> = new Map(
  rows.flatMap(([status, pub, ns, names]) => names.map((n) => [`${ns}_${n}`, { status, public: pub }] as const)),
);

/** The spec's N methods of a namespace. */
export function notImplementedIn(ns: string): string[] {
  return [...EVM_METHOD_STATUS].filter(([name, s]) => s.status === 'N' && name.startsWith(`${ns}_`)).map(([name]) => name);
}
