//! Fuzz the receive buffer's inserts and reads against a byte-per-offset model (`ackwise::fuzzing::reassembly`).
//!
//! Run with `cargo fuzz run reassembly` from the repository root; the corpus in
//! `fuzz/corpus/reassembly` is replayed on stable by `tests/fuzz_corpus.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ackwise::fuzzing::reassembly(data);
});
