//! A `no_std` consumer of ackwise's core: a connection pair exchanges a
//! few bytes over the core's own in-memory pipe, so the linker keeps the
//! connection, sender, receiver and wire code. Never run: built by
//! `.ci/run` only to prove nothing below it needs `std`.
#![no_std]

extern crate alloc;

use ackwise::connection::Config;
use ackwise::testing::{transfer, PipeConfig};
use core::alloc::{GlobalAlloc, Layout};
use core::time::Duration;

/// An allocator that never allocates: the library is built, not run.
struct Never;

// SAFETY: returning null is how an allocator reports failure; `dealloc`
// is never reached since nothing is ever allocated.
unsafe impl GlobalAlloc for Never {
    unsafe fn alloc(&self, _layout: Layout) -> *mut u8 {
        core::ptr::null_mut()
    }
    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static ALLOCATOR: Never = Never;

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

/// Moves `len` bytes from a client to a server; the bytes the server got.
#[no_mangle]
pub extern "C" fn ackwise_no_std_transfer(len: usize) -> usize {
    let data = alloc::vec![7u8; len];
    let config = Config::default();
    match transfer(
        PipeConfig::default(),
        config.clone(),
        config,
        &data,
        &[],
        Duration::from_secs(60),
    ) {
        Ok(out) => out.server_received.len(),
        Err(_) => 0,
    }
}
