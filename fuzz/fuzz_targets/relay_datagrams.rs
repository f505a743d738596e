//! Fuzz the relay's datagram path: its two emulated links, with ACK
//! filtering or ACK delay control as the input chooses, fed arbitrary
//! datagrams and pure ACKs (`ackwise::fuzzing::relay_datagrams`).
//!
//! Run with `cargo fuzz run relay_datagrams` from the repository root; the
//! corpus in `fuzz/corpus/relay_datagrams` is replayed on stable by
//! `tests/fuzz_corpus.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ackwise::fuzzing::relay_datagrams(data);
});
