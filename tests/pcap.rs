//! `--pcap` where users look for packets: `ackwise lab` writes every link
//! of a run, `send`, `recv` and `relay` what crosses their sockets, and
//! tshark reads each file as an ordinary TCP conversation (checksums
//! good, one stream per flow, the whole file in its sequence space).
//!
//! tshark is optional on a developer's machine (the checks are skipped
//! with a note) and required in CI (`ACKWISE_REQUIRE_TSHARK=1`, set by
//! `.ci/run`, which installs it).
#![cfg(feature = "cli")]

mod common;

use common::{free_udp_port, have_tshark, output_ok, wait_for_line};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn ackwise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackwise"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackwise-pcap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One decoded frame.
#[derive(Debug)]
struct Frame {
    src: String,
    dst: String,
    stream: u32,
    /// Relative sequence number and payload length.
    seq: u64,
    len: u64,
    syn: bool,
}

/// Decodes `path` with tshark, checking every frame's IP and TCP
/// checksums and that nothing is malformed.
fn decode(path: &Path) -> Vec<Frame> {
    #[rustfmt::skip]
    let text = common::tshark_fields(path, &[
        "-o", "ip.check_checksum:TRUE",
        "-o", "tcp.check_checksum:TRUE",
        "-o", "tcp.relative_sequence_numbers:TRUE",
        "-T", "fields", "-E", "separator=/t",
        "-e", "ip.src", "-e", "ipv6.src", "-e", "ip.dst", "-e", "ipv6.dst",
        "-e", "tcp.stream", "-e", "tcp.seq", "-e", "tcp.len",
        "-e", "tcp.flags.syn", "-e", "tcp.checksum.status",
        "-e", "ip.checksum.status", "-e", "_ws.malformed",
    ]);
    text.lines()
        .map(|line| {
            let c: Vec<&str> = line.split('\t').collect();
            assert_eq!(c.len(), 11, "{}: {line}", path.display());
            assert_eq!(c[8], "1", "TCP checksum not good: {line}");
            assert!(c[9].is_empty() || c[9] == "1", "IP checksum: {line}");
            assert!(c[10].is_empty(), "malformed: {line}");
            let pick = |v4: &str, v6: &str| if v4.is_empty() { v6 } else { v4 }.to_string();
            Frame {
                src: pick(c[0], c[1]),
                dst: pick(c[2], c[3]),
                stream: c[4].parse().unwrap(),
                seq: c[5].parse().unwrap(),
                len: c[6].parse().unwrap(),
                syn: c[7] == "1" || c[7] == "True",
            }
        })
        .collect()
}

/// Checks a capture of one connection that carried `bytes` of file
/// content from `sender` (an IP address as tshark prints it): one TCP
/// stream, a SYN, both directions, and the sender's sequence space
/// covering at least the content.
fn one_transfer(path: &Path, sender: &str, bytes: u64) {
    let frames = decode(path);
    assert!(
        frames.len() > 10,
        "{}: {} frames",
        path.display(),
        frames.len()
    );
    assert!(frames.iter().all(|f| f.stream == 0), "{}", path.display());
    assert!(frames.iter().any(|f| f.syn), "{}: no SYN", path.display());
    assert!(frames.iter().any(|f| f.src == sender));
    assert!(frames.iter().any(|f| f.dst == sender));
    let top = frames
        .iter()
        .filter(|f| f.src == sender)
        .map(|f| f.seq + f.len)
        .max()
        .unwrap();
    assert!(
        top > bytes,
        "{}: the sender's data reaches only {top} of {bytes}",
        path.display()
    );
}

/// Ctrl-C, then waits for the child to end on its own.
fn interrupt(mut child: Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("did not stop on Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn send_recv_and_relay_captures_decode_as_one_tcp_conversation() {
    let dir = scratch("sockets");
    let file = dir.join("payload.bin");
    let bytes: u64 = 1_500_000;
    let content: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&file, &content).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let (recv_port, relay_port) = (free_udp_port(), free_udp_port());
    let mut recv = ackwise()
        .args(["recv", "--listen", &format!("127.0.0.1:{recv_port}")])
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--pcap")
        .arg(dir.join("recv.pcap"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(&mut recv, "receiving on");
    let mut relay = ackwise()
        .args(["relay", "--listen", &format!("127.0.0.1:{relay_port}")])
        .args(["--to", &format!("127.0.0.1:{recv_port}")])
        .args(["--fwd-rate", "50mbit", "--rev-rate", "50mbit"])
        .args([
            "--fwd-delay",
            "5ms",
            "--rev-delay",
            "5ms",
            "--buffer",
            "200",
        ])
        .arg("--pcap")
        .arg(dir.join("relay.pcap"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(&mut relay, "ackwise relay:");
    let sent = ackwise()
        .arg("send")
        .arg(&file)
        .args(["--to", &format!("127.0.0.1:{relay_port}"), "--mss", "1400"])
        .arg("--pcap")
        .arg(dir.join("send.pcap"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{said}");
    assert!(
        said.contains("capture: ") && said.contains("send.pcap"),
        "{said}"
    );
    interrupt(relay);
    interrupt(recv);
    assert!(std::fs::read(dir.join("out/payload.bin")).unwrap() == content);
    for name in ["send.pcap", "recv.pcap", "relay.pcap"] {
        let len = std::fs::metadata(dir.join(name)).unwrap().len();
        assert!(len > bytes, "{name}: {len} bytes");
    }
    if have_tshark() {
        for name in ["send.pcap", "recv.pcap", "relay.pcap"] {
            one_transfer(&dir.join(name), "127.0.0.1", bytes);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lab_pcap_writes_every_link_of_every_run() {
    let dir = scratch("lab");
    let scenario = dir.join("small.toml");
    std::fs::write(
        &scenario,
        r#"
name = "small"
[bottleneck]
rate = "2mbit"
delay = "20ms"
buffer_packets = 20
[[flows]]
bytes = 300000
[[flows]]
bytes = 200000
start = "100ms"
"#,
    )
    .unwrap();
    let caps = dir.join("caps");
    output_ok(
        ackwise()
            .arg("lab")
            .arg(&scenario)
            .args(["--strategies", "ae,4w", "--quiet", "--pcap"])
            .arg(&caps),
    );
    let mut names: Vec<String> = std::fs::read_dir(&caps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for s in ["ae", "4w"] {
        let mine: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(&format!("small-0-{s}-")))
            .collect();
        // A dumbbell has at least the bottleneck both ways and the
        // access links.
        assert!(mine.len() >= 2, "{s}: {names:?}");
    }
    if have_tshark() {
        // The bottleneck carries both flows' data: two conversations,
        // each with its own address pair.
        let bottleneck = "small-0-ae-middle.fwd.pcap";
        assert!(names.iter().any(|n| n == bottleneck), "{names:?}");
        let frames = decode(&caps.join(bottleneck));
        let mut streams: Vec<u32> = frames.iter().map(|f| f.stream).collect();
        streams.sort_unstable();
        streams.dedup();
        assert_eq!(streams, vec![0, 1], "{bottleneck}");
        for (stream, bytes) in [(0, 300_000), (1, 200_000)] {
            let top = frames
                .iter()
                .filter(|f| f.stream == stream && f.len > 0)
                .map(|f| f.seq + f.len)
                .max()
                .unwrap();
            assert!(top > bytes, "stream {stream}: {top}");
        }
    }
    // A directory that cannot be made is one line before any run.
    let blocked = dir.join("file-not-dir");
    std::fs::write(&blocked, b"x").unwrap();
    let out = ackwise()
        .arg("lab")
        .arg(&scenario)
        .args(["--quiet", "--pcap"])
        .arg(&blocked)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("file-not-dir"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn pcap_with_another_transport_or_an_unwritable_file_is_one_line() {
    let dir = scratch("flags");
    let out = ackwise()
        .args([
            "send",
            "Cargo.toml",
            "--to",
            "127.0.0.1:9",
            "--transport",
            "tcp",
        ])
        .arg("--pcap")
        .arg(dir.join("x.pcap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--pcap") && err.contains("tcpdump"), "{err}");
    let out = ackwise()
        .args(["relay", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9"])
        .args(["--pcap", "/nonexistent-ackwise/relay.pcap"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent-ackwise/relay.pcap"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `lab gauntlet --case K --pcap DIR` captures every link of the replayed
/// case, one file per (replicate, strategy, link); a whole gauntlet is
/// refused in one line rather than writing thousands of files.
#[test]
fn a_replayed_gauntlet_case_is_captured() {
    let dir = scratch("gauntlet");
    let caps = dir.join("caps");
    output_ok(
        ackwise()
            .args(["lab", "gauntlet", "--seed", "1", "--case", "3"])
            .args([
                "--strategies",
                "4w",
                "--replicates",
                "2",
                "--quiet",
                "--pcap",
            ])
            .arg(&caps),
    );
    for draw in ["0", "1"] {
        for s in ["ae", "4w"] {
            let path = caps.join(format!("gauntlet-s1-c3-{draw}-{s}-middle.fwd.pcap"));
            assert!(path.is_file(), "{}", path.display());
        }
    }
    if have_tshark() {
        // Case 3 is one flow of 727 kB: its data crosses the bottleneck.
        let frames = decode(&caps.join("gauntlet-s1-c3-0-4w-middle.fwd.pcap"));
        let top = frames.iter().map(|f| f.seq + f.len).max().unwrap();
        assert!(top > 700_000, "{top}");
    }
    let out = ackwise()
        .args(["lab", "gauntlet", "--cases", "3", "--quiet", "--pcap"])
        .arg(dir.join("all"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--pcap") && err.contains("--case"), "{err}");
    assert!(!dir.join("all").exists(), "nothing written");
    std::fs::remove_dir_all(&dir).unwrap();
}
