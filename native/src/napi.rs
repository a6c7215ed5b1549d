//! Hand-declared subset of Node-API (js_native_api.h / node_api.h) used by this addon.
//!
//! The napi/napi-sys crates are not reachable offline (no crates.io, no Debian package), so the
//! handful of functions we call are declared here. They are resolved from the `node` executable
//! when the addon is dlopen()ed, which is why the cdylib links with undefined symbols. Every
//! function below exists since Node-API version 1 (Node 8.6), so no version gate is needed.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

#[repr(C)]
pub struct napi_env__ {
    _private: [u8; 0],
}
#[repr(C)]
pub struct napi_value__ {
    _private: [u8; 0],
}
#[repr(C)]
pub struct napi_callback_info__ {
    _private: [u8; 0],
}

pub type napi_env = *mut napi_env__;
pub type napi_value = *mut napi_value__;
pub type napi_callback_info = *mut napi_callback_info__;
/// `napi_status` is a C enum; 0 is `napi_ok`.
pub type napi_status = c_int;
pub const NAPI_OK: napi_status = 0;
pub type napi_callback = Option<unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value>;

/// `napi_typedarray_type::napi_uint8_array` (Buffer is a Uint8Array subclass and reports this too).
pub const NAPI_UINT8_ARRAY: c_int = 1;
/// `napi_typedarray_type::napi_uint32_array`.
pub const NAPI_UINT32_ARRAY: c_int = 6;

extern "C" {
    pub fn napi_create_function(
        env: napi_env,
        utf8name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_set_named_property(
        env: napi_env,
        object: napi_value,
        utf8name: *const c_char,
        value: napi_value,
    ) -> napi_status;
    pub fn napi_get_cb_info(
        env: napi_env,
        cbinfo: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;
    /// `data` comes back already advanced by the view's byte offset (Node >= 10). On a value that
    /// is not a typed array it returns napi_invalid_arg without throwing (lib.rs relies on that).
    pub fn napi_get_typedarray_info(
        env: napi_env,
        typedarray: napi_value,
        type_: *mut c_int,
        length: *mut usize,
        data: *mut *mut c_void,
        arraybuffer: *mut napi_value,
        byte_offset: *mut usize,
    ) -> napi_status;
    pub fn napi_get_value_double(env: napi_env, value: napi_value, result: *mut f64) -> napi_status;
    pub fn napi_is_array(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    pub fn napi_get_array_length(env: napi_env, value: napi_value, result: *mut u32) -> napi_status;
    pub fn napi_get_element(
        env: napi_env,
        object: napi_value,
        index: u32,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_buffer_copy(
        env: napi_env,
        length: usize,
        data: *const c_void,
        result_data: *mut *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_double(env: napi_env, value: f64, result: *mut napi_value) -> napi_status;
    pub fn napi_create_uint32(env: napi_env, value: u32, result: *mut napi_value) -> napi_status;
    pub fn napi_get_boolean(env: napi_env, value: bool, result: *mut napi_value) -> napi_status;
    pub fn napi_get_null(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_get_undefined(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_throw_type_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    pub fn napi_throw_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    pub fn napi_is_exception_pending(env: napi_env, result: *mut bool) -> napi_status;
}
