/** x/auth: module.ts (genesis, MsgUpdateParams, queries), keeper.ts (accounts), ante.ts (the signature-checking ante chain), sigverify.ts (sign bytes, verification, the pool stage). */
export { AuthModule, addressBytesToString, addressStringToBytes, parseMsgUpdateParams, type AuthModuleOptions } from './module.js';
export { AccountKeeper, canonicalPubKeyAny, sanitizeGenesisAccounts, type AccountKeeperOptions, type AuthGenesisJson } from './keeper.js';
export { authAnteChain, feePayer, goTimeString, requiredFees, txSigners, DEFAULT_ETH_SECP256K1_VERIFY_COST, SIM_SECP256K1_PUBKEY, type AuthAnteOptions } from './ante.js';
export { SignatureVerifier, signBytesFor, sigDataOf, verifySignerSignature, verifySingleSync, type SigData, type SignatureVerifierOptions, type SignerData } from './sigverify.js';
export * from './keys.js';
export * from './types.js';
