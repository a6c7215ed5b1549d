/**
 * Errors of the P2P transport. `code` is stable so the switch can tell an authentication failure
 * (ban-worthy) from a plain disconnect, as CometBFT's ErrRejected flags do
 * (cometbft/cometbft:p2p/errors.go: isAuthFailure, isNodeInfoInvalid, isSelf, isIncompatible).
 */
export type P2PErrorCode =
  | 'EOF' // the remote closed the connection
  | 'SOCKET' // the socket failed (reset, write after close, ...)
  | 'CLOSED' // we closed the connection ourselves
  | 'TIMEOUT' // handshake or dial deadline passed
  | 'HANDSHAKE' // malformed handshake message
  | 'LOW_ORDER_POINT' // the remote ephemeral key gives an all-zero DH secret
  | 'AUTH' // remote key is not ed25519 or its challenge signature does not verify
  | 'FRAME_MAC' // a sealed frame failed authentication
  | 'FRAME_LENGTH' // a frame declares more than 1024 data bytes
  | 'NONCE_OVERFLOW' // 2^64 frames in one direction
  | 'MSG_TOO_LARGE' // a delimited message above its reader's cap
  | 'PROTOCOL' // a malformed packet
  | 'UNKNOWN_CHANNEL' // a packet for a channel we did not register
  | 'RECV_CAPACITY' // a message above its channel's recvMessageCapacity
  | 'PONG_TIMEOUT'
  | 'ID_MISMATCH' // dialled ID or self-reported NodeInfo ID differs from the key's ID
  | 'NODE_INFO_INVALID'
  | 'SELF' // connected to ourselves
  | 'INCOMPATIBLE' // NodeInfo.CompatibleWith failed
  | 'DUPLICATE' // already connected to / dialling this peer
  | 'FULL' // max inbound/outbound peers reached
  | 'ISOLATED' // the switch is cut off on purpose (Switch.isolate, a test tool)
  | 'INVALID_MESSAGE'; // a reactor refused a peer's message

export class P2PError extends Error {
  readonly code: P2PErrorCode;
  constructor(code: P2PErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'P2PError';
    this.code = code;
  }

  /** True for failures that say the remote is not who it claims or misbehaves during upgrade. */
  get isAuthFailure(): boolean {
    return this.code === 'AUTH' || this.code === 'LOW_ORDER_POINT' || this.code === 'ID_MISMATCH' || this.code === 'HANDSHAKE';
  }
}
