//! Fuzz `SegmentRepr::parse`: it must never panic, and whatever it accepts
//! must survive emit -> parse unchanged.
//!
//! Run with `cargo fuzz run parse_segment` from the repository root.
#![no_main]

use ackwise::wire::{Checksum, SegmentRepr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(repr) = SegmentRepr::parse(data, Checksum::Ignore) else {
        return;
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    let n = repr
        .emit(&mut buf, Checksum::Ignore)
        .expect("a parsed segment must emit");
    assert_eq!(n, buf.len(), "emit length disagrees with buffer_len");
    let again = SegmentRepr::parse(&buf, Checksum::Ignore).expect("re-parse");
    assert_eq!(again, repr, "parse/emit not idempotent");
});
