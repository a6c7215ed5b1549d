//! The calling thread's EEVDF time slice (Linux 6.12 and later): `sched_attr.sched_runtime` of a
//! SCHED_OTHER or SCHED_BATCH thread, set through sched_setattr(2) (unprivileged for one's own
//! threads). Linux's EEVDF scheduler lets a waking thread whose slice is shorter than the running
//! thread's preempt it at once instead of waiting for the running thread's slice to end: the
//! node's RPC thread asks for a short slice so that it answers while the executor thread computes
//! a block on the same core (src/pool/sched.ts). Its share of the CPU does not change: that is the
//! thread's weight (nice), which this leaves as it is. The call also sets SCHED_FLAG_RESET_ON_FORK,
//! so that the threads the caller starts afterwards (the executor, the pool's workers, libuv's
//! threads) begin with the kernel's default slice instead of inheriting the short one. Kernels
//! before 6.12 ignore the field for these policies; the read-back then shows what the kernel keeps.

use std::mem::size_of;
use std::os::raw::{c_int, c_long};

/// `struct sched_attr` (include/uapi/linux/sched/types.h), SCHED_ATTR_SIZE_VER1 (56 bytes).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

extern "C" {
    fn syscall(num: c_long, ...) -> c_long;
    fn __errno_location() -> *mut c_int;
}

#[cfg(target_arch = "x86_64")]
const SYS_SCHED_SETATTR: c_long = 314;
#[cfg(target_arch = "x86_64")]
const SYS_SCHED_GETATTR: c_long = 315;
#[cfg(target_arch = "aarch64")]
const SYS_SCHED_SETATTR: c_long = 274;
#[cfg(target_arch = "aarch64")]
const SYS_SCHED_GETATTR: c_long = 275;

const SCHED_OTHER: u32 = 0;
const SCHED_BATCH: u32 = 3;
/// The one flag set (the others select features of other policies or of utilization clamping,
/// which this call does not touch).
const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

unsafe fn errno() -> i32 {
    *__errno_location()
}

unsafe fn get_attr(a: &mut SchedAttr) -> Result<(), i32> {
    // pid 0: the calling thread. Every argument goes as a long: syscall(2) is variadic.
    if syscall(SYS_SCHED_GETATTR, 0 as c_long, a as *mut SchedAttr, size_of::<SchedAttr>() as c_long, 0 as c_long) != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Sets the calling thread's slice to `ns` (0: only read it) when its policy is SCHED_OTHER or
/// SCHED_BATCH, and returns the slice the kernel reports afterwards, in ns; an errno on failure.
pub fn thread_slice(ns: u64) -> Result<u64, i32> {
    let mut a = SchedAttr::default();
    unsafe {
        get_attr(&mut a)?;
        if ns != 0 && (a.sched_policy == SCHED_OTHER || a.sched_policy == SCHED_BATCH) {
            a.size = size_of::<SchedAttr>() as u32;
            // Reset on fork: the threads this one starts later (workers, libuv's pool) begin with
            // the kernel's default slice instead of inheriting this one.
            a.sched_flags = SCHED_FLAG_RESET_ON_FORK;
            a.sched_runtime = ns;
            if syscall(SYS_SCHED_SETATTR, 0 as c_long, &a as *const SchedAttr, 0 as c_long) != 0 {
                return Err(errno());
            }
            a = SchedAttr::default();
            get_attr(&mut a)?;
        }
    }
    Ok(a.sched_runtime)
}
