//! Fuzz `SegmentRepr::parse`: it must never panic, and whatever it accepts
//! must survive emit -> parse unchanged (`ackwise::fuzzing::segment`).
//!
//! Run with `cargo fuzz run parse_segment` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackwise::fuzzing::segment(data));
