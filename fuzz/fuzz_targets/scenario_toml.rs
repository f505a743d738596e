//! Fuzz scenario files: parsed and checked, or refused with an error (`ackwise::fuzzing::scenario_toml`).
//!
//! Run with `cargo fuzz run scenario_toml` from the repository root; the corpus in
//! `fuzz/corpus/scenario_toml` is replayed on stable by `tests/fuzz_corpus.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ackwise::fuzzing::scenario_toml(data);
});
