//! Every fuzz target on stable: the checked-in corpus under
//! `fuzz/corpus/TARGET/` goes through the same harness the cargo-fuzz
//! target runs (`ackwise::fuzzing`), and so do seeded pseudo-random
//! inputs, some of them mutations of corpus entries. A failure names the
//! file or the seed and input index that broke it.
//!
//! `ACKWISE_WRITE_CORPUS=1 cargo test --release --test fuzz_corpus` writes
//! the seed corpus again (what is checked in came from it; cargo-fuzz adds
//! to it when run longer, see the README).
#![cfg(feature = "cli")]

use ackwise::fuzzing;
use ackwise::testing::TestRng;
use rand_core::RngCore;
use std::path::PathBuf;

const SEED: u64 = 0xf022;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    files
}

/// Runs `harness` over the corpus and `extra` seeded inputs: fresh
/// random ones and corpus entries with a few bytes changed.
fn replay(target: &str, extra: usize, max_len: usize, harness: impl Fn(&[u8])) {
    let files = corpus(target);
    for (name, data) in &files {
        eprintln!("{target}/{name}");
        harness(data);
    }
    let mut rng = TestRng::seed_from_u64(SEED);
    for i in 0..extra {
        let input = if i % 2 == 0 {
            let mut v = vec![0u8; (rng.next_u32() as usize) % max_len];
            rng.fill_bytes(&mut v);
            v
        } else {
            let mut v = files[i / 2 % files.len()].1.clone();
            for _ in 0..1 + rng.next_u32() % 8 {
                if v.is_empty() {
                    break;
                }
                let at = rng.next_u32() as usize % v.len();
                v[at] ^= 1 << (rng.next_u32() % 8);
            }
            v
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| harness(&input)));
        if result.is_err() {
            panic!("{target}: seeded input {i} (seed {SEED:#x}) failed: {input:02x?}");
        }
    }
}

#[test]
fn segment_corpus() {
    replay("parse_segment", 100_000, 80, fuzzing::segment);
}

#[test]
fn connection_corpus() {
    replay("connection", 4_000, 3_000, |d| {
        fuzzing::connection(d);
    });
}

#[test]
fn reassembly_corpus() {
    replay("reassembly", 30_000, 400, fuzzing::reassembly);
}

#[test]
fn scenario_toml_corpus() {
    replay("scenario_toml", 20_000, 400, fuzzing::scenario_toml);
}

#[test]
fn relay_datagrams_corpus() {
    replay("relay_datagrams", 10_000, 600, |d| {
        fuzzing::relay_datagrams(d);
    });
}

#[test]
fn syn_cookie_corpus() {
    replay("syn_cookie", 30_000, 90, fuzzing::syn_cookie);
}

#[test]
fn transfer_header_corpus() {
    replay("transfer_header", 10_000, 300, fuzzing::transfer_header);
}

/// Writes the seed corpus again when `ACKWISE_WRITE_CORPUS` is set, then
/// checks that the honest seeds still move data (the connection program
/// its bytes, the relay programs their datagrams), so that they keep
/// exercising live paths as the code changes.
#[test]
fn seed_corpus() {
    if std::env::var_os("ACKWISE_WRITE_CORPUS").is_some() {
        write_seeds();
    }
    let honest = honest_program();
    let moved = fuzzing::connection(&honest);
    assert!(moved > 50_000, "the honest program moved {moved} bytes");
    let moved = fuzzing::connection(&declined(&honest));
    assert!(
        moved > 50_000,
        "the honest program with the nonce declined moved {moved} bytes"
    );
    // The relay seeds must carry datagrams through the links.
    for (name, data) in corpus("relay_datagrams")
        .into_iter()
        .filter(|(n, _)| n.starts_with("acks-"))
    {
        let left = fuzzing::relay_datagrams(&data);
        assert!(left > 40, "{name}: {left} datagrams left the links");
    }
}

/// The seed corpus, written again.
fn write_seeds() {
    let honest = honest_program();
    let write = |target: &str, name: &str, data: &[u8]| {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    };
    write("connection", "honest-both-ways", &honest);
    write("connection", "honest-nonce-declined", &declined(&honest));
    let mut lossy = honest.clone();
    // Drop some deliveries.
    for i in (0..lossy.len() - 1).step_by(7) {
        if lossy[i] & 0x0f == 6 || lossy[i] & 0x0f == 7 {
            lossy[i + 1] = 3;
        }
    }
    write("connection", "honest-with-drops", &lossy);
    let mut forged = honest[..honest.len() / 2].to_vec();
    forged.extend_from_slice(&[9, 20, 0x40, 10, 40]);
    forged.extend((0..40).map(|i| i as u8 * 7));
    forged.extend_from_slice(&honest[honest.len() / 2..]);
    write("connection", "forged-midway", &forged);
    // Segments as a connection emits them: SYN, SYN-ACK and data with
    // options, taken from a live run.
    for (i, seg) in live_segments().iter().enumerate() {
        write("parse_segment", &format!("live-{i}"), seg);
        // The same segments arriving at a listening end 1000 s in.
        let mut at = (1_000_000u64 << 24).to_le_bytes().to_vec();
        at.extend_from_slice(seg);
        write("syn_cookie", &format!("live-{i}"), &at);
    }
    write(
        "reassembly",
        "in-order",
        &[4, 3, 0, 0, 0, 0, 20, 1, 10, 0, 0, 160, 0, 20, 1, 40],
    );
    write(
        "reassembly",
        "holes",
        &[
            2, 4, 0, 1, 0, 0, 10, 0, 0, 0, 0, 10, 0, 0, 200, 0, 10, 1, 9, 0, 0, 100, 0, 30, 1, 50,
        ],
    );
    for (name, text) in [
        ("dumbbell", "name = \"t\"\nstrategies = [\"ae\", \"4w\"]\n[bottleneck]\nrate = \"1.5mbit\"\ndelay = \"50ms\"\nbuffer_packets = 19\n[[flows]]\nbytes = 200000\n"),
        ("parking-lot", "name = \"p\"\ntopology = \"parking-lot\"\n[bottleneck]\nrate = \"10mbit\"\ndelay = \"10ms\"\nbuffer_packets = 50\n[[flows]]\ncount = 3\nstart = \"0s\"\nstagger = \"1s\"\n"),
        ("cross", "name = \"c\"\n[bottleneck]\nrate = \"2mbit\"\ndelay = \"20ms\"\nbuffer_packets = 20\n[[flows]]\nbytes = 100000\n[[cross]]\nrate = \"500kbit\"\n"),
    ] {
        write("scenario_toml", name, text.as_bytes());
    }
    let header = |version: u8, name: &str, len: u64, strategy: &str| {
        let mut h = b"AWFT".to_vec();
        h.push(version);
        h.extend_from_slice(&(name.len() as u16).to_be_bytes());
        h.extend_from_slice(name.as_bytes());
        h.extend_from_slice(&len.to_be_bytes());
        if version >= 2 {
            h.push(strategy.len() as u8);
            h.extend_from_slice(strategy.as_bytes());
        }
        h
    };
    write(
        "transfer_header",
        "v2",
        &header(2, "file.bin", 123_456, "4w-adaptive"),
    );
    write("transfer_header", "v1", &header(1, "old.txt", 7, ""));
    write(
        "transfer_header",
        "bad-name",
        &header(2, "../etc/passwd", 1, "ae"),
    );
    write("transfer_header", "auth-offer", b"AWAU\x01abcdefghijklmnop");
    // The relay: each setup byte (filters, delay control, RED, loss,
    // reordering) with a train of ACKs of three clients, some data, and
    // time passing.
    for setup in [0x00u8, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x10, 0x18, 0x28, 0xc8] {
        // Forward buffer 24, reverse 300 kbit/s with a 10-packet buffer.
        let mut prog = vec![setup, 20, 24, 8];
        for k in 0..60u8 {
            // A pure ACK of client k % 3, a SACK block on every other.
            prog.extend_from_slice(&[(k % 3) << 6 | 0x20, k, k & 1]);
            if k & 1 == 1 {
                prog.extend_from_slice(&[k, k + 1]);
            }
            if k % 4 == 0 {
                // Ten bytes of data towards the server.
                prog.extend_from_slice(&[0x03, 10]);
                prog.extend((0..10).map(|i| i * k));
            }
            // 1.5 ms pass.
            prog.extend_from_slice(&[0x05, 3]);
        }
        prog.extend_from_slice(&[0x05, 255, 0x05, 255]);
        write("relay_datagrams", &format!("acks-{setup:02x}"), &prog);
    }
}

/// `program` with the listening side declining the ACK nonce (the first
/// byte's 0x20), so that the client cuts segments and checks ends.
fn declined(program: &[u8]) -> Vec<u8> {
    let mut p = program.to_vec();
    p[0] |= 0x20;
    p
}

/// Opens a connection and moves data both ways for a while, honestly.
fn honest_program() -> Vec<u8> {
    let mut prog = vec![0x00, 4, 0x86, 0, 0x85, 7, 0];
    for _ in 0..60 {
        prog.extend_from_slice(&[
            0, 16, 0x80, 16, 4, 0x85, 0x86, 0, 0x86, 0, 0x86, 0, 7, 0, 7, 0, 7, 0, 2, 255, 0x82,
            255, 8, 3,
        ]);
    }
    prog.extend_from_slice(&[11, 0x8b, 4, 0x85, 0x86, 0, 7, 0, 8, 255, 8, 255]);
    prog
}

/// The first segments of a live transfer between two connections.
fn live_segments() -> Vec<Vec<u8>> {
    use ackwise::connection::{Config, Connection};
    use ackwise::time::Instant;
    let mut rng = TestRng::seed_from_u64(1);
    let now = Instant::from_millis(1);
    let config = Config {
        mss: 536,
        ..Config::default()
    };
    let mut a = Connection::connect(config.clone(), now, 40_000, 80, &mut rng).unwrap();
    let mut buf = vec![0u8; 2048];
    let mut out = Vec::new();
    let n = a.poll_transmit(now, &mut buf).unwrap();
    out.push(buf[..n].to_vec());
    let mut b = Connection::accept(config, now, &buf[..n], &mut rng).unwrap();
    let n = b.poll_transmit(now, &mut buf).unwrap();
    out.push(buf[..n].to_vec());
    a.handle_segment(now, &buf[..n]).unwrap();
    a.write(&[7u8; 2000]);
    while let Some(n) = a.poll_transmit(now, &mut buf) {
        out.push(buf[..n].to_vec());
    }
    out
}
