/** Consensus params (types/params.go); defaults from  */
export interface ConsensusParams {
  block: { maxBytes: bigint; maxGas: bigint };
  evidence: { maxAgeNumBlocks: bigint; maxAgeDuration: bigint; maxBytes: bigint };
  validator: { pubKeyTypes: string[] };
  version: { app: bigint };
  abci: { voteExtensionsEnableHeight: bigint };
}

export function defaultConsensusParams(): ConsensusParams {
  return {
    block: { maxBytes: 22020096n, maxGas: -1n },
    // 48h in nanoseconds.
    evidence: { maxAgeNumBlocks: 100000n, maxAgeDuration: 172800000000000n, maxBytes: 1048576n },
    validator: { pubKeyTypes: ['ed25519'] },
    version: { app: 0n },
    abci: { voteExtensionsEnableHeight: 0n },
  };
}
