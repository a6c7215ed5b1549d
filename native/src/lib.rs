//! chaind-native: keccak256, sha256, CometBFT merkle root and secp256k1 verify/recover for
//! chaind, and the calling thread's scheduler slice (sched.rs), as a raw Node-API addon (see
//! native/README.md for why there is no napi crate).
//!
//! The addon is stateless: no globals, no instance data, libsecp256k1's const static context.
//! Node calls `napi_register_module_v1` once per thread that loads it (main thread and every
//! Piscina worker), and each call only creates function objects.
//!
//! Every export validates its arguments and throws a JS TypeError (code
//! `ERR_CHAIND_CRYPTO_ARG`) instead of reading out of bounds; a Rust panic is caught at the
//! boundary and thrown as an Error (code `ERR_CHAIND_NATIVE_PANIC`) instead of aborting Node.

mod hash;
mod napi;
mod sched;
mod secp;

use napi::*;
use std::ffi::CString;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

macro_rules! cstr {
    ($s:expr) => {
        concat!($s, "\0").as_ptr() as *const c_char
    };
}

/// Why an export did not produce a value.
enum Fail {
    /// Bad argument: thrown as a TypeError.
    Arg(String),
    /// A Node-API call failed; it may already have set a pending exception.
    Napi(napi_status),
}

type R<T> = Result<T, Fail>;

fn check(status: napi_status) -> R<()> {
    if status == NAPI_OK {
        Ok(())
    } else {
        Err(Fail::Napi(status))
    }
}

/// Borrowed view of a Uint8Array's bytes: pointer (already offset) and length.
#[derive(Clone, Copy)]
struct Bytes {
    ptr: *mut u8,
    len: usize,
}

impl Bytes {
    /// The bytes as a slice. The caller guarantees the typed array stays alive for the call
    /// (it is an argument, or an element of an argument array) and is not written meanwhile.
    unsafe fn slice<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            // A zero-length or detached view may report a null pointer, which a slice may not hold.
            &[]
        } else {
            std::slice::from_raw_parts(self.ptr, self.len)
        }
    }
}

unsafe fn get_args<const N: usize>(env: napi_env, info: napi_callback_info) -> R<[napi_value; N]> {
    let mut argv: [napi_value; N] = [ptr::null_mut(); N];
    let mut argc: usize = N;
    // Missing arguments come back as `undefined`, so the type checks below catch them.
    check(napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()))?;
    Ok(argv)
}

/// A status that is not napi_ok without a pending exception means "wrong kind of value" for the
/// getters below (napi_invalid_arg, napi_number_expected): they check the type themselves, so a
/// separate napi_is_typedarray / napi_typeof call per argument would only add a crossing to every
/// hash (about a third of keccak256Into's time on 32 bytes).
unsafe fn wrong_type(env: napi_env, status: napi_status) -> R<bool> {
    if status == NAPI_OK {
        return Ok(false);
    }
    let mut pending = false;
    napi_is_exception_pending(env, &mut pending);
    if pending {
        return Err(Fail::Napi(status));
    }
    Ok(true)
}

unsafe fn get_bytes(env: napi_env, v: napi_value, what: &str) -> R<Bytes> {
    let mut ty: i32 = -1;
    let mut len: usize = 0;
    let mut data: *mut c_void = ptr::null_mut();
    let status = napi_get_typedarray_info(env, v, &mut ty, &mut len, &mut data, ptr::null_mut(), ptr::null_mut());
    if wrong_type(env, status)? || ty != NAPI_UINT8_ARRAY {
        return Err(Fail::Arg(format!("{} must be a Uint8Array", what)));
    }
    Ok(Bytes { ptr: data as *mut u8, len })
}

unsafe fn get_exact<const N: usize>(env: napi_env, v: napi_value, what: &str) -> R<[u8; N]> {
    let b = get_bytes(env, v, what)?;
    if b.len != N {
        return Err(Fail::Arg(format!("{} must be {} bytes, got {}", what, N, b.len)));
    }
    let mut out = [0u8; N];
    out.copy_from_slice(b.slice());
    Ok(out)
}

/// A non-negative integer argument (offsets, lengths, recovery ids).
unsafe fn get_index(env: napi_env, v: napi_value, what: &str) -> R<usize> {
    let mut d: f64 = 0.0;
    if wrong_type(env, napi_get_value_double(env, v, &mut d))? {
        return Err(Fail::Arg(format!("{} must be a number", what)));
    }
    // 2^53 - 1: Number.MAX_SAFE_INTEGER; anything past it is not an exact index.
    if !(d >= 0.0 && d <= 9007199254740991.0 && d.fract() == 0.0) {
        return Err(Fail::Arg(format!("{} must be a non-negative integer", what)));
    }
    Ok(d as usize)
}

unsafe fn new_buffer(env: napi_env, data: &[u8]) -> R<napi_value> {
    let mut out: napi_value = ptr::null_mut();
    let mut out_data: *mut c_void = ptr::null_mut();
    check(napi_create_buffer_copy(env, data.len(), data.as_ptr() as *const c_void, &mut out_data, &mut out))?;
    Ok(out)
}

unsafe fn undefined(env: napi_env) -> R<napi_value> {
    let mut v: napi_value = ptr::null_mut();
    check(napi_get_undefined(env, &mut v))?;
    Ok(v)
}

/// Writes a 32-byte digest at `out[offset..offset+32]` after checking the bounds.
unsafe fn write32(out: Bytes, offset: usize, digest: &[u8; 32]) -> R<()> {
    if offset.checked_add(32).map_or(true, |end| end > out.len) {
        return Err(Fail::Arg(format!("out too small: offset {} + 32 > length {}", offset, out.len)));
    }
    // Raw copy rather than a &mut slice: `out` may be the same buffer as the input, which has
    // already been read into `digest`, and Rust forbids a &mut aliasing a live &.
    ptr::copy_nonoverlapping(digest.as_ptr(), out.ptr.add(offset), 32);
    Ok(())
}

/// Runs one export body, turning failures into JS exceptions. Returning NULL with a pending
/// exception is how a Node-API callback throws.
unsafe fn run(
    env: napi_env,
    info: napi_callback_info,
    name: &str,
    body: unsafe fn(napi_env, napi_callback_info) -> R<napi_value>,
) -> napi_value {
    match catch_unwind(AssertUnwindSafe(|| body(env, info))) {
        Ok(Ok(v)) => v,
        Ok(Err(Fail::Arg(msg))) => {
            let m = CString::new(format!("{}: {}", name, msg)).unwrap_or_default();
            napi_throw_type_error(env, cstr!("ERR_CHAIND_CRYPTO_ARG"), m.as_ptr());
            ptr::null_mut()
        }
        Ok(Err(Fail::Napi(status))) => {
            let mut pending = false;
            napi_is_exception_pending(env, &mut pending);
            if !pending {
                let m = CString::new(format!("{}: Node-API call failed with status {}", name, status)).unwrap_or_default();
                napi_throw_error(env, cstr!("ERR_CHAIND_NATIVE_NAPI"), m.as_ptr());
            }
            ptr::null_mut()
        }
        Err(_) => {
            let m = CString::new(format!("{}: internal panic", name)).unwrap_or_default();
            napi_throw_error(env, cstr!("ERR_CHAIND_NATIVE_PANIC"), m.as_ptr());
            ptr::null_mut()
        }
    }
}

// ---- export bodies ---------------------------------------------------------------------------

/// keccak256(data) -> Buffer(32). Allocating the result costs ~0.6 µs of the ~1 µs per call
/// (paulmillr/noble-hashes:README.md), so hot loops should use keccak256Into.
unsafe fn keccak256_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [data] = get_args::<1>(env, info)?;
    let d = get_bytes(env, data, "data")?;
    new_buffer(env, &hash::keccak256(d.slice()))
}

/// keccak256Into(data, out, offset) -> undefined.
unsafe fn keccak256_into_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    hash_into(env, info, hash::keccak256)
}

/// The body of the `…Into(data, out, offset)` exports: `digest(data)` written at out[offset..+32].
unsafe fn hash_into(env: napi_env, info: napi_callback_info, digest: fn(&[u8]) -> [u8; 32]) -> R<napi_value> {
    let [data, out, offset] = get_args::<3>(env, info)?;
    let d = get_bytes(env, data, "data")?;
    let o = get_bytes(env, out, "out")?;
    let off = get_index(env, offset, "offset")?;
    // Check the bounds before hashing so a bad call costs nothing.
    if off.checked_add(32).map_or(true, |end| end > o.len) {
        return Err(Fail::Arg(format!("out too small: offset {} + 32 > length {}", off, o.len)));
    }
    write32(o, off, &digest(d.slice()))?;
    undefined(env)
}

/// keccak256Batch(concat, itemLen, out) -> count. Hashes each consecutive `itemLen`-byte item of
/// `concat` into out[32*i ..]. One crossing for many hashes: ~0.29 µs per 32-byte hash against
/// ~0.32 µs through keccak256Into (paulmillr/noble-hashes:README.md).
unsafe fn keccak256_batch_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [concat, item_len, out] = get_args::<3>(env, info)?;
    let c = get_bytes(env, concat, "concat")?;
    let item = get_index(env, item_len, "itemLen")?;
    let o = get_bytes(env, out, "out")?;
    if item == 0 {
        return Err(Fail::Arg("itemLen must be at least 1".to_string()));
    }
    if c.len % item != 0 {
        return Err(Fail::Arg(format!("concat length {} is not a multiple of itemLen {}", c.len, item)));
    }
    let n = c.len / item;
    if n > u32::MAX as usize || n.checked_mul(32).map_or(true, |need| need > o.len) {
        return Err(Fail::Arg(format!("out too small: {} items need {} bytes, got {}", n, n.saturating_mul(32), o.len)));
    }
    for i in 0..n {
        // Each item is read, then its digest written, through raw pointers: if a caller passes
        // overlapping buffers the result is well defined (sequential), just not useful.
        let src = Bytes { ptr: c.ptr.add(i * item), len: item };
        let digest = hash::keccak256(src.slice());
        ptr::copy_nonoverlapping(digest.as_ptr(), o.ptr.add(i * 32), 32);
    }
    let mut v: napi_value = ptr::null_mut();
    check(napi_create_uint32(env, n as u32, &mut v))?;
    Ok(v)
}

/// A Uint32Array argument: pointer and element count.
unsafe fn get_u32s(env: napi_env, v: napi_value, what: &str) -> R<(*const u32, usize)> {
    let mut ty: i32 = -1;
    let mut len: usize = 0;
    let mut data: *mut c_void = ptr::null_mut();
    let status = napi_get_typedarray_info(env, v, &mut ty, &mut len, &mut data, ptr::null_mut(), ptr::null_mut());
    if wrong_type(env, status)? || ty != NAPI_UINT32_ARRAY {
        return Err(Fail::Arg(format!("{} must be a Uint32Array", what)));
    }
    Ok((data as *const u32, len))
}

/// keccak256Spans(concat, ends, out) -> count. Item i is concat[ends[i-1] .. ends[i]] (item 0
/// starts at 0); its digest goes to out[32*i ..]. Variable-length items in one crossing: the
/// trie hashes all the nodes of one level of a commit with one call (src/evm/trie.ts).
unsafe fn keccak256_spans_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [concat, ends, out] = get_args::<3>(env, info)?;
    let c = get_bytes(env, concat, "concat")?;
    let (e_ptr, n) = get_u32s(env, ends, "ends")?;
    let o = get_bytes(env, out, "out")?;
    if n > u32::MAX as usize || n.checked_mul(32).map_or(true, |need| need > o.len) {
        return Err(Fail::Arg(format!("out too small: {} items need {} bytes, got {}", n, n.saturating_mul(32), o.len)));
    }
    // Copy the ends first (out may alias them in a careless caller) and check them all before
    // hashing anything: non-decreasing and within concat.
    let ends_v: Vec<usize> = if n == 0 { Vec::new() } else { std::slice::from_raw_parts(e_ptr, n).iter().map(|&x| x as usize).collect() };
    let mut prev = 0usize;
    for (i, &e) in ends_v.iter().enumerate() {
        if e < prev || e > c.len {
            return Err(Fail::Arg(format!("ends[{}] = {} is out of order or past concat length {}", i, e, c.len)));
        }
        prev = e;
    }
    let mut start = 0usize;
    for (i, &e) in ends_v.iter().enumerate() {
        let src = Bytes { ptr: c.ptr.add(start), len: e - start };
        let digest = hash::keccak256(src.slice());
        ptr::copy_nonoverlapping(digest.as_ptr(), o.ptr.add(i * 32), 32);
        start = e;
    }
    let mut v: napi_value = ptr::null_mut();
    check(napi_create_uint32(env, n as u32, &mut v))?;
    Ok(v)
}

/// sha256(data) -> Buffer(32).
unsafe fn sha256_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [data] = get_args::<1>(env, info)?;
    let d = get_bytes(env, data, "data")?;
    new_buffer(env, &hash::sha256(d.slice()))
}

/// sha256Into(data, out, offset) -> undefined.
unsafe fn sha256_into_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    hash_into(env, info, hash::sha256)
}

/// merkleRoot(items: Uint8Array[]) -> Buffer(32).
unsafe fn merkle_root_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [items] = get_args::<1>(env, info)?;
    let mut is_array = false;
    check(napi_is_array(env, items, &mut is_array))?;
    if !is_array {
        return Err(Fail::Arg("items must be an array of Uint8Array".to_string()));
    }
    let mut n: u32 = 0;
    check(napi_get_array_length(env, items, &mut n))?;
    // The element handles live in this callback's handle scope, so each view's backing store
    // stays reachable (and, being off-heap after get_typedarray_info, does not move) until we
    // return. 8 bytes of handle per item; a 10,000-tx block costs 80 KiB of scope, freed on return.
    let mut views: Vec<&[u8]> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut el: napi_value = ptr::null_mut();
        check(napi_get_element(env, items, i, &mut el))?;
        // The index is formatted only on failure: a per-item format! would cost more than the hash.
        let b = match get_bytes(env, el, "item") {
            Err(Fail::Arg(_)) => return Err(Fail::Arg(format!("items[{}] must be a Uint8Array", i))),
            other => other?,
        };
        views.push(b.slice());
    }
    new_buffer(env, &hash::merkle_root(&views))
}

/// secp256k1Verify(digest32, sig64, pubkey33or65) -> boolean.
unsafe fn secp_verify_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [digest, sig, pubkey] = get_args::<3>(env, info)?;
    let d = get_exact::<32>(env, digest, "digest")?;
    let s = get_exact::<64>(env, sig, "sig")?;
    let p = get_bytes(env, pubkey, "pubkey")?;
    if p.len != 33 && p.len != 65 {
        return Err(Fail::Arg(format!("pubkey must be 33 or 65 bytes, got {}", p.len)));
    }
    let ok = secp::verify(&d, &s, p.slice());
    let mut v: napi_value = ptr::null_mut();
    check(napi_get_boolean(env, ok, &mut v))?;
    Ok(v)
}

/// secp256k1Recover(digest32, sig64, recid) -> Buffer(65) | null.
unsafe fn secp_recover_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [digest, sig, recid] = get_args::<3>(env, info)?;
    let d = get_exact::<32>(env, digest, "digest")?;
    let s = get_exact::<64>(env, sig, "sig")?;
    let r = get_index(env, recid, "recid")?;
    if r > 3 {
        return Err(Fail::Arg(format!("recid must be 0..3, got {}", r)));
    }
    match secp::recover(&d, &s, r as i32) {
        Some(pk) => new_buffer(env, &pk),
        None => {
            let mut v: napi_value = ptr::null_mut();
            check(napi_get_null(env, &mut v))?;
            Ok(v)
        }
    }
}

/// secp256k1Decompress(pubkey33or65) -> Buffer(65) | null.
unsafe fn secp_decompress_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [pubkey] = get_args::<1>(env, info)?;
    let p = get_bytes(env, pubkey, "pubkey")?;
    if p.len != 33 && p.len != 65 {
        return Err(Fail::Arg(format!("pubkey must be 33 or 65 bytes, got {}", p.len)));
    }
    match secp::decompress(p.slice()) {
        Some(pk) => new_buffer(env, &pk),
        None => {
            let mut v: napi_value = ptr::null_mut();
            check(napi_get_null(env, &mut v))?;
            Ok(v)
        }
    }
}

/// ltHashMix(lanes, key, value, subtract) -> undefined: element(key, value) of the app hash's
/// LtHash16 (src/app/apphash.ts) added into, or with subtract = 1 taken from, `lanes` (2048 bytes:
/// 1024 little-endian u16). One crossing per changed key instead of a 2 KiB node:crypto digest, a
/// Buffer and a JS lane loop.
unsafe fn lthash_mix_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [lanes, key, value, subtract] = get_args::<4>(env, info)?;
    let l = get_bytes(env, lanes, "lanes")?;
    if l.len != hash::LTHASH_BYTES {
        return Err(Fail::Arg(format!("lanes must be {} bytes, got {}", hash::LTHASH_BYTES, l.len)));
    }
    let k = get_bytes(env, key, "key")?;
    let v = get_bytes(env, value, "value")?;
    let s = get_index(env, subtract, "subtract")?;
    if s > 1 {
        return Err(Fail::Arg(format!("subtract must be 0 or 1, got {}", s)));
    }
    if k.len > u32::MAX as usize {
        return Err(Fail::Arg(format!("key of {} bytes is longer than a u32 length", k.len)));
    }
    // Copy in, mix, copy out: `lanes` may share a buffer with key or value, and Rust forbids a
    // &mut aliasing a live &.
    let mut acc = [0u8; hash::LTHASH_BYTES];
    acc.copy_from_slice(l.slice());
    hash::lthash_mix(&mut acc, k.slice(), v.slice(), s == 1);
    ptr::copy_nonoverlapping(acc.as_ptr(), l.ptr, hash::LTHASH_BYTES);
    undefined(env)
}

/// threadSlice(ns) -> number: the calling thread's scheduler slice set to `ns` nanoseconds (0: only
/// read), then read back (sched.rs); a negative errno when the kernel refused or lacks the call.
unsafe fn thread_slice_body(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    let [ns] = get_args::<1>(env, info)?;
    let n = get_index(env, ns, "ns")?;
    let r = match sched::thread_slice(n as u64) {
        Ok(v) => v as f64,
        Err(e) => -(e as f64),
    };
    let mut v: napi_value = ptr::null_mut();
    check(napi_create_double(env, r, &mut v))?;
    Ok(v)
}

// ---- registration ----------------------------------------------------------------------------

macro_rules! export_fn {
    ($cname:ident, $js:literal, $body:ident) => {
        unsafe extern "C" fn $cname(env: napi_env, info: napi_callback_info) -> napi_value {
            run(env, info, $js, $body)
        }
    };
}

export_fn!(js_keccak256, "keccak256", keccak256_body);
export_fn!(js_keccak256_into, "keccak256Into", keccak256_into_body);
export_fn!(js_keccak256_batch, "keccak256Batch", keccak256_batch_body);
export_fn!(js_keccak256_spans, "keccak256Spans", keccak256_spans_body);
export_fn!(js_sha256, "sha256", sha256_body);
export_fn!(js_sha256_into, "sha256Into", sha256_into_body);
export_fn!(js_merkle_root, "merkleRoot", merkle_root_body);
export_fn!(js_secp_verify, "secp256k1Verify", secp_verify_body);
export_fn!(js_secp_recover, "secp256k1Recover", secp_recover_body);
export_fn!(js_secp_decompress, "secp256k1Decompress", secp_decompress_body);
export_fn!(js_lthash_mix, "ltHashMix", lthash_mix_body);
export_fn!(js_thread_slice, "threadSlice", thread_slice_body);

type Callback = unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value;

/// Entry point Node looks up after dlopen(); called once per thread (env) that loads us.
#[no_mangle]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    // Cheap sanity check of the linked library (endianness, miscompilation) before we hand out
    // its static context; it aborts only if libsecp256k1 itself is broken.
    secp::secp256k1_selftest();

    let table: [(*const c_char, Callback); 12] = [
        (cstr!("keccak256"), js_keccak256),
        (cstr!("keccak256Into"), js_keccak256_into),
        (cstr!("keccak256Batch"), js_keccak256_batch),
        (cstr!("keccak256Spans"), js_keccak256_spans),
        (cstr!("sha256"), js_sha256),
        (cstr!("sha256Into"), js_sha256_into),
        (cstr!("merkleRoot"), js_merkle_root),
        (cstr!("secp256k1Verify"), js_secp_verify),
        (cstr!("secp256k1Recover"), js_secp_recover),
        (cstr!("secp256k1Decompress"), js_secp_decompress),
        (cstr!("ltHashMix"), js_lthash_mix),
        (cstr!("threadSlice"), js_thread_slice),
    ];
    for (name, cb) in table.iter() {
        let mut f: napi_value = ptr::null_mut();
        // usize::MAX is NAPI_AUTO_LENGTH: the name is NUL-terminated.
        if napi_create_function(env, *name, usize::MAX, Some(*cb), ptr::null_mut(), &mut f) != NAPI_OK
            || napi_set_named_property(env, exports, *name, f) != NAPI_OK
        {
            return ptr::null_mut();
        }
    }
    exports
}

/// Node-API version this addon needs (Node 20 asks; absent means 8). Everything used is v1.
#[no_mangle]
pub extern "C" fn node_api_module_get_api_version_v1() -> i32 {
    8
}
