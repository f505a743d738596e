//! Helpers shared by the integration tests.

#![allow(dead_code)]

use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// A cheap deterministic byte stream (xorshift) that differs per seed.
pub fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `cases` cases from the fixed `seed` by default, so CI is repeatable;
/// `PROPTEST_CASES` and `ACKWISE_PROPTEST_SEED` explore further. The seed
/// is printed so a failure can be rerun.
pub fn proptest_config(cases: u32, seed: u64) -> ProptestConfig {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("ACKWISE_PROPTEST_SEED").unwrap_or(seed);
    eprintln!("proptest seed {seed} (set ACKWISE_PROPTEST_SEED to change)");
    ProptestConfig {
        cases: env("PROPTEST_CASES").map_or(cases, |c| c as u32),
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Reads `child`'s stderr until a line starting with `prefix`, then keeps
/// draining it so the child never blocks on a full pipe.
pub fn wait_for_line(child: &mut std::process::Child, prefix: &str) -> String {
    use std::io::{BufRead, BufReader};
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let line = loop {
        let l = lines
            .next()
            .unwrap_or_else(|| panic!("no line starting with {prefix:?}"))
            .unwrap();
        if l.starts_with(prefix) {
            break l;
        }
    };
    std::thread::spawn(move || for _ in lines {});
    line
}

/// A UDP port on 127.0.0.1 that was free a moment ago.
pub fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether tshark runs here; panics when CI requires it
/// (`ACKWISE_REQUIRE_TSHARK`) and it does not.
pub fn have_tshark() -> bool {
    let ok = std::process::Command::new("tshark")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("ACKWISE_REQUIRE_TSHARK").is_none(),
            "ACKWISE_REQUIRE_TSHARK is set but tshark does not run"
        );
        eprintln!("tshark not available; skipping the decode checks");
    }
    ok
}

/// Runs `tshark -r path ARGS` and returns what it printed; panics with
/// tshark's complaint when it fails.
pub fn tshark_fields(path: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args(args)
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `cmd` to completion and returns its output, failing the test with
/// the command's stderr unless it exited with success.
pub fn output_ok(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().expect("run the command");
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
