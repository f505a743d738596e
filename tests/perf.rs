//! `ackwise perf`: timed runs both ways over ackwise, kernel TCP and QUIC,
//! with interval reports, the receiver's ACK count, JSON, and one-line
//! errors.
#![cfg(feature = "cli")]

use ackwise::lab::Strategy;
use ackwise::net::perf::{self, PerfPlan, PerfReport, PerfServerPlan};
use ackwise::net::transfer::Transport;
use std::process::Command;
use std::time::Duration;

/// Starts a server on a free port and runs `plan` (with its `to` set)
/// against it.
async fn run_against_server(transport: Transport, plan: PerfPlan) -> (PerfReport, usize) {
    let server = PerfServerPlan {
        listen: "127.0.0.1:0".into(),
        transport,
        strategy: None,
        mss: 1400,
        pcap: None,
    };
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        perf::serve_perf(
            &server,
            |a| {
                let _ = addr_tx.send(a);
            },
            async {
                let _ = stopped.await;
            },
        )
        .await
    });
    let addr = addr_rx.await.unwrap();
    let mut lines = 0;
    let report = perf::run_perf(
        &PerfPlan {
            to: addr.to_string(),
            ..plan
        },
        |_| lines += 1,
    )
    .await
    .unwrap();
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    (report, lines)
}

fn plan(transport: Transport, reverse: bool, parallel: usize) -> PerfPlan {
    PerfPlan {
        to: String::new(),
        transport,
        strategy: Strategy::DEFAULT,
        mss: 1400,
        duration: Duration::from_millis(1500),
        interval: Duration::from_millis(500),
        parallel,
        reverse,
        connect_timeout: Duration::from_secs(5),
        pcap: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ackwise_runs_both_ways_with_intervals_and_receiver_acks() {
    for (reverse, parallel) in [(false, 1), (true, 2)] {
        let (r, lines) = run_against_server(
            Transport::Ackwise,
            plan(Transport::Ackwise, reverse, parallel),
        )
        .await;
        assert_eq!((r.reverse, r.parallel), (reverse, parallel));
        assert!(r.bytes > 1 << 20, "{r}");
        assert!(r.elapsed_s >= 1.5 && r.elapsed_s < 10.0, "{r}");
        // An interval report every 500 ms of the 1.5 s run.
        assert!((2..=4).contains(&lines), "{lines} lines: {r:?}");
        assert_eq!(lines, r.intervals.len());
        let in_intervals: u64 = r.intervals.iter().map(|i| i.bytes).sum();
        assert!(in_intervals <= r.bytes, "{in_intervals} > {}", r.bytes);
        // The receiver acknowledged, and far less than once per segment.
        let acks = r.receiver_acks.expect("ackwise counts the receiver's ACKs");
        // Loopback carries the 1 400 bytes asked for (the path's probe
        // found more room).
        assert_eq!(r.segment_bytes, Some(1400), "{r:?}");
        let segments = r.bytes / 1400;
        assert!(
            acks > 0 && acks < segments / 4,
            "{acks} ACKs for {segments} segments"
        );
        assert!(r.acks_per_gib.is_some());
        // The sender's counters are reported when the client sent.
        assert_eq!(r.retransmissions.is_some(), !reverse, "{r:?}");
        assert!(r.to_string().contains("per GiB"), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_tcp_runs_for_comparison_with_the_kernels_own_counts() {
    let (r, _) = run_against_server(Transport::Tcp, plan(Transport::Tcp, false, 2)).await;
    assert!(r.bytes > 1 << 20, "{r}");
    assert_eq!(r.segment_bytes, None);
    // The receiving sockets' segments, as the kernel counts them (Linux):
    // at least a SYN-ACK and an ACK each, and far fewer than one per
    // 100 bytes moved.
    if cfg!(target_os = "linux") {
        let acks = r.receiver_acks.expect("the kernel's counters");
        assert!(acks >= 4 && acks < r.bytes / 100, "{r}");
        assert!(r.to_string().contains("receiver ACKs"), "{r}");
    } else {
        assert_eq!(r.receiver_acks, None);
        assert!(r.to_string().contains("no ACK counters"), "{r}");
    }
    // Both ways: the client reads its own socket's counters when it
    // receives.
    let (back, _) = run_against_server(Transport::Tcp, plan(Transport::Tcp, true, 1)).await;
    assert_eq!(
        back.receiver_acks.is_some(),
        cfg!(target_os = "linux"),
        "{back}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["transport"], "tcp");
    assert_eq!(
        json["intervals"].as_array().unwrap().len(),
        r.intervals.len()
    );
}

/// QUIC through quinn: both ways, with a `quic*` strategy, the
/// receiver's ACK frames counted; any other strategy is refused before a
/// connection is tried.
#[cfg(feature = "quic-net")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quic_runs_both_ways_with_the_receivers_ack_frames() {
    let quic4w: Strategy = "quic-4w".parse().unwrap();
    for (reverse, parallel) in [(false, 1), (true, 2)] {
        let (r, lines) = run_against_server(
            Transport::Quic,
            PerfPlan {
                strategy: quic4w,
                ..plan(Transport::Quic, reverse, parallel)
            },
        )
        .await;
        assert_eq!((r.reverse, r.parallel), (reverse, parallel));
        assert_eq!(r.transport, "quic");
        assert!(r.bytes > 1 << 20, "{r}");
        assert!((2..=4).contains(&lines), "{lines} lines: {r:?}");
        let acks = r.receiver_acks.expect("quinn counts its ACK frames");
        assert!(acks > 0, "{r}");
        assert!(r.acks_per_gib.is_some(), "{r}");
        assert_eq!((r.retransmissions, r.segment_bytes), (None, None), "{r}");
    }
    let refused = perf::run_perf(
        &PerfPlan {
            to: "127.0.0.1:9".into(),
            ..plan(Transport::Quic, false, 1)
        },
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&refused, perf::PerfError::Invalid(m) if m.contains("QUIC strategy")),
        "{refused}"
    );
}

fn ackwise(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ackwise"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_bad_settings_are_one_line_with_status_2_and_a_dead_server_status_1() {
    for (args, needle) in [
        (vec!["perf", "client", "--parallel", "0"], "--parallel"),
        (vec!["perf", "client", "--time", "0s"], "--time"),
        (vec!["perf", "client", "--interval", "soon"], "--interval"),
        (vec!["perf", "client", "--strategy", "nope"], "--strategy"),
        (
            vec!["perf", "client", "--transport", "tcp", "--pcap", "x.pcap"],
            "--pcap",
        ),
        (vec!["perf", "server", "--mss", "0"], "--mss"),
        // QUIC takes a `quic*` strategy; the default is not one.
        (vec!["perf", "client", "--transport", "quic"], "--transport"),
        (
            vec!["perf", "server", "--transport", "quic", "--strategy", "4w"],
            "--transport",
        ),
    ] {
        let out = ackwise(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let to = format!("127.0.0.1:{port}");
    let out = ackwise(&["perf", "client", "--to", &to, "--connect-timeout", "2s"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn cli_json_report() {
    // The server binds a port of its own choosing and names it: a port
    // picked here and released could be taken meanwhile by an endpoint
    // of a test running beside this one, whose peers would then meet
    // this test's client (that cross-talk once hung this test for 163 s).
    let mut server = Command::new(env!("CARGO_BIN_EXE_ackwise"))
        .args(["perf", "server", "--listen", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    // "perf server on 127.0.0.1:PORT (ackwise); Ctrl-C stops"
    let listen = first
        .split_whitespace()
        .nth(3)
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    // Keep what the server says (so that it never blocks on a full
    // pipe), to show it if the run fails.
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    // An interval longer than the run: its one report is the tail the
    // client adds after the connections stop.
    let out = ackwise(&[
        "perf",
        "client",
        "--to",
        &listen,
        "--time",
        "1s",
        "--interval",
        "3s",
        "--json",
    ]);
    let _ = server.kill();
    let _ = server.wait();
    let server_said = said.join().unwrap_or_default();
    assert!(
        out.status.success(),
        "client: {}server: {first}{server_said}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["transport"], "ackwise");
    assert_eq!(v["strategy"], Strategy::DEFAULT_NAME);
    assert!(v["bytes"].as_u64().unwrap() > 0);
    assert!(v["receiver_acks"].as_u64().unwrap() > 0);
    let intervals = v["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 1, "{intervals:?}");
    assert_eq!(intervals[0]["start_s"], 0.0);
    assert!((intervals[0]["end_s"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    let tail_bytes = intervals[0]["bytes"].as_u64().unwrap();
    assert!(tail_bytes > 0 && tail_bytes <= v["bytes"].as_u64().unwrap());
    // Without --mss, loopback's largest segments (issue 16 item 5).
    assert_eq!(v["segment_bytes"], u64::from(ackwise::net::MAX_MSS));
}
