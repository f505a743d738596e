//! Robustness of `SegmentRepr::parse` against hostile input.
//!
//! One million inputs, half seeded random buffers and half mutations of
//! valid emitted segments. For each: parse must not panic, and whenever it
//! succeeds, emitting the parsed segment and parsing that again must give
//! the same segment (parse/emit idempotence). The run is deterministic; set
//! `ACKWISE_WIRE_SEED` (decimal or 0x-hex) to try another seed. The seed is
//! printed in every failure message.

use ackwise::wire::{
    AckNonce, AckRequest, Checksum, Flags, Options, SackBlocks, SegmentRepr, SeqNum, Timestamps,
    WireError,
};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::net::Ipv4Addr;
use std::panic::{catch_unwind, AssertUnwindSafe};

const DEFAULT_SEED: u64 = 0x0ac5_1560_0d00;
const RANDOM_INPUTS: usize = 500_000;
const MUTATED_INPUTS: usize = 500_000;
/// Valid segments to mutate; regenerated from the seed, not stored.
const POOL: usize = 512;

const SRC: Ipv4Addr = Ipv4Addr::new(10, 1, 2, 3);
const DST: Ipv4Addr = Ipv4Addr::new(10, 4, 5, 6);

fn seed() -> u64 {
    match std::env::var("ACKWISE_WIRE_SEED") {
        Ok(s) => {
            let s = s.trim();
            let parsed = match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("ACKWISE_WIRE_SEED={s:?} is not a u64"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

/// Uniform-enough integer in `0..n` (n > 0).
fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    ((u64::from(rng.next_u32()) * n as u64) >> 32) as usize
}

fn chance(rng: &mut ChaCha8Rng, one_in: usize) -> bool {
    below(rng, one_in) == 0
}

fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    items[below(rng, items.len())]
}

/// Counts of outcomes, to check that the inputs reach every error path.
#[derive(Default, Debug)]
struct Stats {
    ok: usize,
    truncated: usize,
    bad_data_offset: usize,
    option_overrun: usize,
    bad_option_length: usize,
    too_many_sack_blocks: usize,
    bad_checksum: usize,
}

struct Checker {
    seed: u64,
    scratch: Vec<u8>,
    stats: Stats,
}

impl Checker {
    fn check(&mut self, case: usize, input: &[u8], checksum: Checksum) {
        let seed = self.seed;
        let fail = |what: &str| -> ! {
            panic!(
                "{what}\nseed {seed:#x} (ACKWISE_WIRE_SEED), case {case}, {checksum:?}\n\
                 input ({} bytes): {input:02x?}",
                input.len()
            )
        };
        let parsed = match catch_unwind(AssertUnwindSafe(|| SegmentRepr::parse(input, checksum))) {
            Ok(result) => result,
            Err(_) => fail("parse panicked"),
        };
        let repr = match parsed {
            Ok(repr) => repr,
            Err(e) => {
                let s = &mut self.stats;
                match e {
                    WireError::Truncated { .. } => s.truncated += 1,
                    WireError::BadDataOffset { .. } => s.bad_data_offset += 1,
                    WireError::OptionOverrun { .. } => s.option_overrun += 1,
                    WireError::BadOptionLength { .. } => s.bad_option_length += 1,
                    WireError::TooManySackBlocks { .. } => s.too_many_sack_blocks += 1,
                    WireError::BadChecksum => s.bad_checksum += 1,
                    other => fail(&format!("parse returned an emit-only error {other:?}")),
                }
                return;
            }
        };
        self.stats.ok += 1;

        self.scratch.clear();
        self.scratch.resize(repr.buffer_len(), 0);
        let n = match repr.emit(&mut self.scratch, checksum) {
            Ok(n) => n,
            Err(e) => fail(&format!("re-emit of {repr:?} failed: {e:?}")),
        };
        if n != self.scratch.len() {
            fail(&format!(
                "emit wrote {n} bytes, buffer_len said {}",
                self.scratch.len()
            ));
        }
        match SegmentRepr::parse(&self.scratch, checksum) {
            Ok(again) if again == repr => {}
            other => fail(&format!(
                "not idempotent:\n first {repr:?}\n again {other:?}\n re-emitted {:02x?}",
                self.scratch
            )),
        }
    }
}

fn random_options(rng: &mut ChaCha8Rng) -> Options {
    let mut sack = SackBlocks::new();
    for _ in 0..below(rng, 5) {
        sack.push(SeqNum(rng.next_u32()), SeqNum(rng.next_u32()));
    }
    let mut options = Options {
        mss: chance(rng, 2).then(|| rng.next_u32() as u16),
        window_scale: chance(rng, 2).then(|| below(rng, 15) as u8),
        sack_permitted: chance(rng, 2),
        sack,
        timestamps: chance(rng, 2).then(|| Timestamps {
            tsval: rng.next_u32(),
            tsecr: rng.next_u32(),
        }),
        ack_request: match below(rng, 3) {
            0 => None,
            1 => Some(AckRequest::Supported),
            _ => Some(AckRequest::Countdown(rng.next_u32() as u16)),
        },
        ack_nonce: match below(rng, 3) {
            0 => None,
            1 => Some(AckNonce::Permitted),
            _ => Some(AckNonce::Nonce(rng.next_u32() as u16)),
        },
        nonce_echo: chance(rng, 2).then(|| rng.next_u32() as u16),
        arrival_echo: chance(rng, 4).then(|| rng.next_u32() as u16),
        checksum_omission: false,
    };
    // Beside every other option the omission offer would pass 40 bytes
    // (a SYN never carries echoes): drawn only where it fits.
    if chance(rng, 2) {
        options.checksum_omission = true;
        options.checksum_omission = options.encoded_len() <= 40;
    }
    options
}

/// A valid segment with random fields, emitted with a real checksum.
fn random_segment(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut payload = vec![0u8; below(rng, 64)];
    rng.fill_bytes(&mut payload);
    let repr = SegmentRepr {
        src_port: rng.next_u32() as u16,
        dst_port: rng.next_u32() as u16,
        seq: SeqNum(rng.next_u32()),
        ack: SeqNum(rng.next_u32()),
        flags: Flags(rng.next_u32() as u8),
        window: rng.next_u32() as u16,
        options: random_options(rng),
        payload: &payload,
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf, Checksum::Ipv4 { src: SRC, dst: DST })
        .expect("emit of a valid segment");
    buf
}

/// Option kinds and lengths that reach the interesting branches.
const KINDS: &[u8] = &[0, 1, 2, 3, 4, 5, 8, 30, 253, 254, 255];
const LENGTHS: &[u8] = &[0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 18, 26, 34, 42, 50, 255];

/// Applies one random mutation to a segment.
fn mutate(rng: &mut ChaCha8Rng, seg: &mut Vec<u8>) {
    // Header length as currently claimed, limited to the buffer.
    let header_end = seg
        .get(12)
        .map_or(0, |b| usize::from(b >> 4) * 4)
        .min(seg.len());
    match below(rng, 7) {
        // Flip one bit anywhere.
        0 if !seg.is_empty() => {
            let i = below(rng, seg.len());
            seg[i] ^= 1 << below(rng, 8);
        }
        // Overwrite a byte with a random or boundary value.
        1 if !seg.is_empty() => {
            let i = below(rng, seg.len());
            seg[i] = if chance(rng, 2) {
                rng.next_u32() as u8
            } else {
                pick(rng, LENGTHS)
            };
        }
        // Truncate.
        2 => seg.truncate(below(rng, seg.len() + 1)),
        // Garbage over part of the option area.
        3 if header_end > 20 => {
            let start = 20 + below(rng, header_end - 20);
            let end = start + 1 + below(rng, header_end - start);
            rng.fill_bytes(&mut seg[start..end]);
        }
        // A plausible but possibly wrong option somewhere in the option area.
        4 if header_end > 20 => {
            let at = 20 + below(rng, header_end - 20);
            seg[at] = pick(rng, KINDS);
            if at + 1 < header_end {
                seg[at + 1] = pick(rng, LENGTHS);
            }
            if at + 3 < header_end && chance(rng, 2) {
                // Our ExID, so kind 253 reaches the ACK-request checks.
                seg[at + 2] = 0xac;
                seg[at + 3] = 0xc5;
            }
        }
        // A different data offset.
        5 if seg.len() > 12 => seg[12] = (seg[12] & 0x0f) | ((below(rng, 16) as u8) << 4),
        // Random bytes appended (they become payload, or header if the
        // data offset is raised).
        _ => {
            for _ in 0..1 + below(rng, 8) {
                seg.push(rng.next_u32() as u8);
            }
        }
    }
}

#[test]
fn a_million_inputs_never_panic_and_round_trip() {
    let seed = seed();
    eprintln!("wire_robustness seed = {seed:#x} (set ACKWISE_WIRE_SEED to change)");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut checker = Checker {
        seed,
        scratch: Vec::with_capacity(256),
        stats: Stats::default(),
    };
    let ipv4 = Checksum::Ipv4 { src: SRC, dst: DST };

    // Half: random buffers of 0..100 bytes.
    let mut buf = [0u8; 100];
    for case in 0..RANDOM_INPUTS {
        let len = below(&mut rng, 100);
        rng.fill_bytes(&mut buf[..len]);
        let checksum = if chance(&mut rng, 16) {
            ipv4
        } else {
            Checksum::Ignore
        };
        checker.check(case, &buf[..len], checksum);
    }

    // Half: mutations of valid segments.
    let pool: Vec<Vec<u8>> = (0..POOL).map(|_| random_segment(&mut rng)).collect();
    for (i, seg) in pool.iter().enumerate() {
        // The unmutated segments must parse (and round-trip) themselves.
        checker.check(RANDOM_INPUTS + i, seg, ipv4);
    }
    let mut seg = Vec::with_capacity(256);
    for case in RANDOM_INPUTS..RANDOM_INPUTS + MUTATED_INPUTS {
        seg.clear();
        seg.extend_from_slice(&pool[below(&mut rng, POOL)]);
        for _ in 0..1 + below(&mut rng, 3) {
            mutate(&mut rng, &mut seg);
        }
        // Mostly ignore the checksum, or nearly every mutant would stop
        // there; sometimes check it, to exercise that path too.
        let checksum = if chance(&mut rng, 8) {
            ipv4
        } else {
            Checksum::Ignore
        };
        checker.check(case, &seg, checksum);
    }

    let s = &checker.stats;
    eprintln!("wire_robustness outcomes: {s:?}");
    // Guard against a generator that stopped reaching the parser's depths.
    let reached = [
        ("ok", s.ok),
        ("Truncated", s.truncated),
        ("BadDataOffset", s.bad_data_offset),
        ("OptionOverrun", s.option_overrun),
        ("BadOptionLength", s.bad_option_length),
        ("TooManySackBlocks", s.too_many_sack_blocks),
        ("BadChecksum", s.bad_checksum),
    ];
    for (name, count) in reached {
        assert!(
            count >= 100,
            "only {count} inputs ended in {name} (seed {seed:#x}): {s:?}"
        );
    }
    assert!(
        s.ok >= MUTATED_INPUTS / 10,
        "too few mutated segments still parse (seed {seed:#x}): {s:?}"
    );
}
