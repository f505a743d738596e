//! File transfer over a slow path (the relay at 64 kbit/s on 127.0.0.1):
//! a transfer that moves steadily completes however long its queued data
//! takes to drain, and the sender's progress never runs ahead of what the
//! receiver acknowledged.
#![cfg(all(feature = "tokio", feature = "lab"))]
#![cfg(all(feature = "tokio", feature = "cli"))]

use ackwise::connection::Stats;
use ackwise::lab::Strategy;
use ackwise::net::transfer::{self, Observer, ReceiveOptions, SendOptions, Silent};
use ackwise::net::{AckProbe, Endpoint};
use ackwise::relay::{LinkConfig, Relay, RelayConfig};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackwise-slow-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    dir
}

/// Records every progress report with what the connection had
/// acknowledged at that moment.
struct Recorder {
    probe: AckProbe,
    /// (when, reported bytes, acknowledged bytes of the whole stream).
    reports: Vec<(Instant, u64, u64)>,
}

impl Observer for Recorder {
    fn progress(&mut self, done_bytes: u64, _stats: Option<&Stats>) {
        let acked = self.probe.acknowledged_bytes();
        self.reports.push((Instant::now(), done_bytes, acked));
    }
}

/// 40 000 bytes at 64 kbit/s take about 5 s, more than twice the 2 s idle
/// timeout; the relay's queue holds them all, so nothing is lost and ACKs
/// arrive every segment time (175 ms) from start to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_steady_transfer_outlasts_the_idle_timeout_and_progress_follows_acks() {
    let dir = scratch("64k");
    let content: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.join("slow.bin"), &content).unwrap();

    let config = transfer::strategy_config(Strategy::DEFAULT, transfer::DEFAULT_MSS);
    let server = Endpoint::server("127.0.0.1:0".parse().unwrap(), config.clone()).unwrap();
    let relay = Relay::bind(RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to: server.local_addr(),
        forward: LinkConfig::new(64_000, Duration::from_millis(10), 200),
        reverse: LinkConfig::new(64_000, Duration::from_millis(10), 200),
        seed: 1,
        ack_management: Default::default(),
    })
    .await
    .unwrap()
    .spawn();

    let out = dir.join("out");
    let accepting = server.clone();
    let receiver = tokio::spawn(async move {
        let (mut stream, _) = accepting.accept().await.unwrap();
        transfer::receive_files(&mut stream, &ReceiveOptions::new(out), &mut Silent).await
    });
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let mut stream = client.connect(relay.local_addr(), config).await.unwrap();
    let mut recorder = Recorder {
        probe: stream.ack_probe(),
        reports: Vec::new(),
    };
    let options = SendOptions {
        idle_timeout: Duration::from_secs(2),
        ..SendOptions::default()
    };
    let started = Instant::now();
    let files = transfer::open_files(&[dir.join("slow.bin")]).unwrap();
    let sent = transfer::send_files(&mut stream, files, &options, &mut recorder)
        .await
        .expect("a steadily moving transfer must not time out");
    let took = started.elapsed();
    let received = receiver.await.unwrap().unwrap();
    assert!(sent.all_ok() && received.all_ok());
    assert_eq!(std::fs::read(dir.join("out/slow.bin")).unwrap(), content);
    assert!(
        took > Duration::from_secs(4),
        "the path was not slow enough to test anything: {took:?}"
    );

    // Progress: never beyond what the connection had acknowledged, and
    // moving in steps while the file crawls, with no silence of a second.
    let r = &recorder.reports;
    assert!(!r.is_empty());
    for &(_, done, acked) in r {
        assert!(
            done <= acked,
            "reported {done} bytes with {acked} acknowledged"
        );
    }
    let intermediate = r.iter().filter(|&&(_, d, _)| d > 0 && d < 40_000).count();
    assert!(intermediate >= 10, "{intermediate} intermediate reports");
    for pair in r.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap < Duration::from_secs(1), "no report for {gap:?}");
    }
    assert_eq!(r.last().unwrap().1, 40_000);
    std::fs::remove_dir_all(&dir).unwrap();
}
