//! Fuzz the SYN cookies: every SYN comes back through its cookie with the
//! same negotiated options, and no segment checked as a cookie panics
//! (`ackwise::fuzzing::syn_cookie`).
//!
//! Run with `cargo fuzz run syn_cookie` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackwise::fuzzing::syn_cookie(data));
