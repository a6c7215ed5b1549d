//! Hand-declared subset of libsecp256k1 0.2.0 (Debian 12 libsecp256k1-dev: secp256k1.h,
//! secp256k1_recovery.h). The opaque structs' sizes come from those headers (64 bytes, and 65
//! for the recoverable signature); their content is internal to the library.
#![allow(non_camel_case_types)]

use std::os::raw::{c_int, c_uchar, c_uint};

#[repr(C)]
pub struct secp256k1_context {
    _private: [u8; 0],
}
#[repr(C)]
pub struct secp256k1_pubkey {
    pub data: [c_uchar; 64],
}
#[repr(C)]
pub struct secp256k1_ecdsa_signature {
    pub data: [c_uchar; 64],
}
#[repr(C)]
pub struct secp256k1_ecdsa_recoverable_signature {
    pub data: [c_uchar; 65],
}

/// SECP256K1_FLAGS_TYPE_COMPRESSION (1 << 1): the uncompressed 65-byte 0x04 form.
pub const SECP256K1_EC_UNCOMPRESSED: c_uint = 1 << 1;

extern "C" {
    /// The library's read-only, pre-built context (v0.2.0+). It is enough for parsing,
    /// verification and recovery (only signing and key generation need a randomised context),
    /// and being a const global it keeps the addon free of per-thread state.
    pub static secp256k1_context_static: *const secp256k1_context;
    pub fn secp256k1_selftest();
    pub fn secp256k1_ec_pubkey_parse(
        ctx: *const secp256k1_context,
        pubkey: *mut secp256k1_pubkey,
        input: *const c_uchar,
        inputlen: usize,
    ) -> c_int;
    pub fn secp256k1_ec_pubkey_serialize(
        ctx: *const secp256k1_context,
        output: *mut c_uchar,
        outputlen: *mut usize,
        pubkey: *const secp256k1_pubkey,
        flags: c_uint,
    ) -> c_int;
    pub fn secp256k1_ecdsa_signature_parse_compact(
        ctx: *const secp256k1_context,
        sig: *mut secp256k1_ecdsa_signature,
        input64: *const c_uchar,
    ) -> c_int;
    pub fn secp256k1_ecdsa_verify(
        ctx: *const secp256k1_context,
        sig: *const secp256k1_ecdsa_signature,
        msghash32: *const c_uchar,
        pubkey: *const secp256k1_pubkey,
    ) -> c_int;
    pub fn secp256k1_ecdsa_recoverable_signature_parse_compact(
        ctx: *const secp256k1_context,
        sig: *mut secp256k1_ecdsa_recoverable_signature,
        input64: *const c_uchar,
        recid: c_int,
    ) -> c_int;
    pub fn secp256k1_ecdsa_recover(
        ctx: *const secp256k1_context,
        pubkey: *mut secp256k1_pubkey,
        sig: *const secp256k1_ecdsa_recoverable_signature,
        msghash32: *const c_uchar,
    ) -> c_int;
}

/// Verifies a 64-byte compact `r||s` ECDSA signature over a 32-byte digest.
///
/// libsecp256k1 rejects high-S signatures in verify (BIP-62/EIP-2 malleability rule), which is
/// what both Cosmos (cosmos/cosmos-sdk:crypto/keys/secp256k1/secp256k1.go: "low-S is required") and Ethereum transactions want.
/// Hybrid keys (0x06/0x07 prefix) are refused here although the library would parse them,
/// so that the native and the JS backend (@noble/secp256k1 refuses them) agree on every input.
pub fn verify(digest: &[u8; 32], sig: &[u8; 64], pubkey: &[u8]) -> bool {
    let prefix_ok = match pubkey.len() {
        33 => pubkey[0] == 0x02 || pubkey[0] == 0x03,
        65 => pubkey[0] == 0x04,
        _ => false,
    };
    if !prefix_ok {
        return false;
    }
    unsafe {
        let ctx = secp256k1_context_static;
        let mut pk = secp256k1_pubkey { data: [0; 64] };
        if secp256k1_ec_pubkey_parse(ctx, &mut pk, pubkey.as_ptr(), pubkey.len()) != 1 {
            return false;
        }
        let mut s = secp256k1_ecdsa_signature { data: [0; 64] };
        // Fails when r or s >= n; r = 0 or s = 0 parse but never verify.
        if secp256k1_ecdsa_signature_parse_compact(ctx, &mut s, sig.as_ptr()) != 1 {
            return false;
        }
        secp256k1_ecdsa_verify(ctx, &s, digest.as_ptr(), &pk) == 1
    }
}

/// The 65-byte uncompressed form of a 33-byte compressed or 65-byte uncompressed SEC1 key, or
/// None when it is not a point on the curve. Hybrid keys (0x06/0x07) are refused, as in `verify`.
/// Decompressing costs a field square root; callers memoise the result per key.
pub fn decompress(pubkey: &[u8]) -> Option<[u8; 65]> {
    let prefix_ok = match pubkey.len() {
        33 => pubkey[0] == 0x02 || pubkey[0] == 0x03,
        65 => pubkey[0] == 0x04,
        _ => false,
    };
    if !prefix_ok {
        return None;
    }
    unsafe {
        let ctx = secp256k1_context_static;
        let mut pk = secp256k1_pubkey { data: [0; 64] };
        if secp256k1_ec_pubkey_parse(ctx, &mut pk, pubkey.as_ptr(), pubkey.len()) != 1 {
            return None;
        }
        let mut out = [0u8; 65];
        let mut len: usize = 65;
        if secp256k1_ec_pubkey_serialize(ctx, out.as_mut_ptr(), &mut len, &pk, SECP256K1_EC_UNCOMPRESSED) != 1 || len != 65 {
            return None;
        }
        Some(out)
    }
}

/// Recovers the signer's public key, as 65 uncompressed bytes, from `r||s` plus recid 0..=3.
/// Recovery accepts high-S (as Ethereum's ecrecover precompile does); callers that need low-S
/// check it themselves.
pub fn recover(digest: &[u8; 32], sig: &[u8; 64], recid: i32) -> Option<[u8; 65]> {
    if !(0..=3).contains(&recid) {
        return None;
    }
    unsafe {
        let ctx = secp256k1_context_static;
        let mut rs = secp256k1_ecdsa_recoverable_signature { data: [0; 65] };
        if secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &mut rs, sig.as_ptr(), recid) != 1 {
            return None;
        }
        let mut pk = secp256k1_pubkey { data: [0; 64] };
        if secp256k1_ecdsa_recover(ctx, &mut pk, &rs, digest.as_ptr()) != 1 {
            return None;
        }
        let mut out = [0u8; 65];
        let mut len: usize = 65;
        if secp256k1_ec_pubkey_serialize(ctx, out.as_mut_ptr(), &mut len, &pk, SECP256K1_EC_UNCOMPRESSED) != 1
            || len != 65
        {
            return None;
        }
        Some(out)
    }
}
