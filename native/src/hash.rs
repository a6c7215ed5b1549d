//! keccak256, sha256 and CometBFT's RFC 6962 merkle root (cometbft: crypto/merkle/tree.go,
//! hash.go; notes in shared/reference/cometbft/cometbft:crypto/merkle/tree.go).

use sha2::{Digest, Sha256};
use tiny_keccak::{Hasher, Keccak, Shake};

pub fn keccak256(data: &[u8]) -> [u8; 32] {
    let mut k = Keccak::v256();
    k.update(data);
    let mut out = [0u8; 32];
    k.finalize(&mut out);
    out
}

/// Lanes of the app hash's LtHash16 (src/app/apphash.ts): 1024 u16, 2048 bytes.
pub const LTHASH_BYTES: usize = 2048;

/// element(k, v) of src/app/apphash.ts: SHAKE256(u32be(len(k)) || k || v), 2048 bytes of output.
pub fn lthash_element(key: &[u8], value: &[u8]) -> [u8; LTHASH_BYTES] {
    let mut s = Shake::v256();
    s.update(&(key.len() as u32).to_be_bytes());
    s.update(key);
    s.update(value);
    let mut out = [0u8; LTHASH_BYTES];
    s.finalize(&mut out);
    out
}

/// Adds (or subtracts) element(k, v) into `lanes`, 1024 little-endian u16 lanes, each mod 2^16.
pub fn lthash_mix(lanes: &mut [u8; LTHASH_BYTES], key: &[u8], value: &[u8], subtract: bool) {
    let e = lthash_element(key, value);
    // As u16 lanes (chunks_exact and zip carry no bounds checks, so the loop vectorizes).
    let mut acc = [0u16; LTHASH_BYTES / 2];
    let mut add = [0u16; LTHASH_BYTES / 2];
    for (l, b) in acc.iter_mut().zip(lanes.chunks_exact(2)) {
        *l = u16::from_le_bytes([b[0], b[1]]);
    }
    for (l, b) in add.iter_mut().zip(e.chunks_exact(2)) {
        *l = u16::from_le_bytes([b[0], b[1]]);
    }
    if subtract {
        for (a, b) in acc.iter_mut().zip(add.iter()) {
            *a = a.wrapping_sub(*b);
        }
    } else {
        for (a, b) in acc.iter_mut().zip(add.iter()) {
            *a = a.wrapping_add(*b);
        }
    }
    for (out, a) in lanes.chunks_exact_mut(2).zip(acc.iter()) {
        out.copy_from_slice(&a.to_le_bytes());
    }
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&Sha256::digest(data));
    out
}

/// sha256(0x00 || item): the leaf prefix keeps a leaf from ever equalling an inner node
/// (second-preimage protection, RFC 6962 §2.1).
fn leaf_hash(item: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(item);
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    out
}

/// sha256(0x01 || left || right).
fn inner_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    out
}

/// Merkle root of `items`, equal to CometBFT's `HashFromByteSlices`.
///
/// CometBFT defines the tree top-down: split at the largest power of two strictly below n.
/// That tree is the same as pairing neighbours level by level from the left and lifting an odd
/// last node unchanged to the next level, which is what this does in place over one vector of
/// n leaf hashes: n - 1 inner hashes, no recursion, one allocation. (The JS backend keeps the
/// top-down definition, and test/unit/crypto-backend.test.ts checks both agree for n = 0..130.)
pub fn merkle_root(items: &[&[u8]]) -> [u8; 32] {
    if items.is_empty() {
        return sha256(&[]);
    }
    let mut level: Vec<[u8; 32]> = items.iter().map(|it| leaf_hash(it)).collect();
    let mut n = level.len();
    while n > 1 {
        let pairs = n / 2;
        for i in 0..pairs {
            level[i] = inner_hash(&level[2 * i], &level[2 * i + 1]);
        }
        if n % 2 == 1 {
            level[pairs] = level[n - 1];
        }
        n = pairs + n % 2;
    }
    level[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{:02x}", x)).collect()
    }

    #[test]
    fn keccak_vectors() {
        assert_eq!(hex(&keccak256(b"")), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
        assert_eq!(hex(&keccak256(b"abc")), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
    }

    #[test]
    fn shake256_vector_and_lthash_inverse() {
        // FIPS 202 SHAKE256 of the empty string, first 32 bytes of output.
        let mut s = Shake::v256();
        let mut out = [0u8; 32];
        s.update(b"");
        s.finalize(&mut out);
        assert_eq!(hex(&out), "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f");
        // element(k, v) from zero lanes is the digest itself; subtracting it again gives zero.
        let mut lanes = [0u8; LTHASH_BYTES];
        lthash_mix(&mut lanes, b"key", b"value", false);
        assert_eq!(lanes[..], lthash_element(b"key", b"value")[..]);
        lthash_mix(&mut lanes, b"key", b"value", true);
        assert!(lanes.iter().all(|&b| b == 0));
    }

    #[test]
    fn merkle_vectors() {
        // cometbft: crypto/merkle/tree_test.go TestHashFromByteSlices
        assert_eq!(hex(&merkle_root(&[])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&merkle_root(&[&[1, 2, 3]])), "054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8");
        assert_eq!(
            hex(&merkle_root(&[&[1, 2, 3], &[4, 5, 6]])),
            "82e6cfce00453804379b53962939eaa7906b39904be0813fcadd31b100773c4b"
        );
    }
}
