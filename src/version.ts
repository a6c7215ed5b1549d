/** Version strings reported by `chaind version`, node_info and web3_clientVersion. */

/** chaind's own version; kept equal to package.json `version` (a unit test checks). */
export const VERSION = '0.1.0';

/** The CometBFT release line whose RPC and wire behaviour chaind follows (node_info.version). */
export const COMETBFT_VERSION = '0.38.17';
/** ABCI semantic version of CometBFT 0.38 (abci_info). */
export const ABCI_VERSION = '2.0.0';
/** node_info.protocol_version.p2p and .block for CometBFT 0.38 (version/version.go). */
export const P2P_PROTOCOL = 8n;
export const BLOCK_PROTOCOL = 11n;
