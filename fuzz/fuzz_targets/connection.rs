//! Fuzz a live connection between two `Connection`s driven by the input as a program (writes, reads, closes, time, deliveries, drops, mutated and forged segments) (`ackwise::fuzzing::connection`).
//!
//! Run with `cargo fuzz run connection` from the repository root; the corpus in
//! `fuzz/corpus/connection` is replayed on stable by `tests/fuzz_corpus.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ackwise::fuzzing::connection(data);
});
