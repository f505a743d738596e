//! Fuzz file-transfer headers: read or refused, and re-encoded unchanged (`ackwise::fuzzing::transfer_header`).
//!
//! Run with `cargo fuzz run transfer_header` from the repository root; the corpus in
//! `fuzz/corpus/transfer_header` is replayed on stable by `tests/fuzz_corpus.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ackwise::fuzzing::transfer_header(data);
});
