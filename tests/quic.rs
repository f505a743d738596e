//! quinn-proto connections in the emulator (feature `quic`): data intact
//! under seeded loss, the ACK-frequency policies' effect on ACK-only
//! packets, determinism of the measured figures, and QUIC beside
//! TCP-style flows in a lab run.
#![cfg(feature = "quic-net")]
#![cfg(feature = "quic")]

use ackwise::connection::Config;
use ackwise::emu::{
    self, DumbbellSpec, FlowParams, FlowTransport, LossModel, QueueSpec, RunResult, Scenario,
    DUMBBELL_MIDDLE,
};
use ackwise::lab::{RunPlan, Strategy};
use ackwise::quic::{AckFrequencyPolicy, QuicController, QuicFlowConfig};
use ackwise::sender::congestion::Decrease;
use std::time::Duration;

fn quic_flow(config: QuicFlowConfig, bytes: u64) -> FlowParams {
    FlowParams {
        transport: FlowTransport::Quic(Box::new(config)),
        ..FlowParams::new(Config::default(), bytes)
    }
}

fn dumbbell(rate_bps: u64, one_way: Duration, buffer: usize, flows: &[FlowParams]) -> Scenario {
    let spec = DumbbellSpec::symmetric(rate_bps, one_way, QueueSpec::drop_tail(buffer));
    // The default overhead is the IPv4 header; the emulator adds UDP's.
    Scenario::dumbbell(&spec, flows)
}

fn ackwise_cc(policy: AckFrequencyPolicy) -> QuicFlowConfig {
    QuicFlowConfig {
        controller: QuicController::Ackwise {
            decrease: Decrease::Half,
        },
        ack_frequency: policy,
        ..QuicFlowConfig::default()
    }
}

/// The figures a run must reproduce for a seed.
fn figures(r: &RunResult) -> Vec<(Option<Duration>, u64, u64, u64, u64, u64)> {
    r.flows
        .iter()
        .map(|f| {
            (
                f.completion_time,
                f.data_packets,
                f.data_bytes,
                f.ack_packets,
                f.ack_bytes,
                f.retransmissions,
            )
        })
        .collect()
}

#[test]
fn ackwise_controller_delivers_intact_over_seeded_random_loss() {
    let bytes = 2_000_000;
    let mut s = dumbbell(
        10_000_000,
        Duration::from_millis(20),
        40,
        &[quic_flow(
            ackwise_cc(AckFrequencyPolicy::EveryN { packets: 4 }),
            bytes,
        )],
    );
    s.seed = 7;
    s.links[DUMBBELL_MIDDLE.0].loss = LossModel::Bernoulli { p: 0.01 };
    let r = emu::run(&s).unwrap();
    let f = &r.flows[0];
    assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
    assert_eq!(f.measured_bytes, bytes);
    assert!(r.links[DUMBBELL_MIDDLE.0].lost > 0, "loss model inactive");
    assert!(f.retransmissions > 0, "{f:?}");
    // At least bytes / datagram size data packets, each 1200 + 28 bytes
    // on the link at most.
    assert!(f.data_packets >= bytes / 1200, "{f:?}");
    assert!(f.data_bytes <= f.data_packets * 1228, "{f:?}");
    let goodput = f.goodput_bps.unwrap();
    assert!(goodput > 1_000_000.0 && goodput < 10_000_000.0, "{goodput}");
}

#[test]
fn same_seed_same_figures() {
    let run = |seed| {
        let flows = [
            quic_flow(
                ackwise_cc(AckFrequencyPolicy::EveryN { packets: 8 }),
                500_000,
            ),
            quic_flow(QuicFlowConfig::default(), 500_000),
        ];
        let mut s = dumbbell(5_000_000, Duration::from_millis(10), 20, &flows);
        s.links[DUMBBELL_MIDDLE.0].loss = LossModel::Bernoulli { p: 0.005 };
        s.seed = seed;
        let r = emu::run(&s).unwrap();
        assert!(r.all_finished, "{:?}", r.flows);
        r
    };
    let a = run(3);
    let b = run(3);
    assert_eq!(figures(&a), figures(&b));
    assert_eq!(a.links, b.links);
    assert_eq!(a.events, b.events);
    // Another seed draws other losses.
    let c = run(4);
    assert_ne!(figures(&a), figures(&c));
}

#[test]
fn ack_frequency_cuts_ack_only_packets() {
    let bytes = 3_000_000;
    let run = |config| {
        let s = dumbbell(
            20_000_000,
            Duration::from_millis(10),
            100,
            &[quic_flow(config, bytes)],
        );
        let r = emu::run(&s).unwrap();
        assert!(r.all_finished, "{:?}", r.flows);
        r.flows[0].clone()
    };
    let default = run(QuicFlowConfig::default());
    let af8 = run(ackwise_cc(AckFrequencyPolicy::EveryN { packets: 8 }));
    // quinn's default: an ACK per two data packets.
    let per_ack = default.data_packets as f64 / default.ack_packets as f64;
    assert!(per_ack > 1.5 && per_ack < 2.6, "{default:?}");
    let per_ack8 = af8.data_packets as f64 / af8.ack_packets as f64;
    assert!(per_ack8 > 5.0, "{af8:?}");
    // ACK-only datagrams are small: ACK frame, header and tag.
    assert!(default.ack_bytes < default.ack_packets * 80, "{default:?}");
}

#[test]
fn lab_run_mixes_quic_and_tcp_style_flows_on_one_bottleneck() {
    // The `quic` preset's mixed point at 1 Mbit/s: five QUIC flows with
    // the compared strategy and five 4W flows, staggered, one bottleneck.
    let mut preset = ackwise::lab::presets::find("quic").unwrap();
    preset
        .points
        .retain(|p| p.params.contains(&("rate_mbps", 1.0)) && p.params.contains(&("mixed", 1.0)));
    assert_eq!(preset.points.len(), 1);
    let strategy: Strategy = "quic-af-4+ackwise-cc".parse().unwrap();
    let plan = RunPlan {
        preset,
        strategies: vec![strategy],
        seed: 5,
        jobs: 1,
        shard: None,
        sample_interval: None,
        pcap_dir: None,
    };
    let records = ackwise::lab::run::run(&plan, false).unwrap();
    let again = ackwise::lab::run::run(&plan, false).unwrap();
    assert_eq!(
        ackwise::lab::run::to_json(&records),
        ackwise::lab::run::to_json(&again)
    );
    let r = &records[0];
    assert!(r.all_finished, "{r:?}");
    let (quic, tcp): (Vec<_>, Vec<_>) = r.flows.iter().partition(|f| f.strategy == strategy.name());
    assert_eq!(quic.len(), 5);
    assert!(tcp.iter().all(|f| f.strategy == "4w"), "{tcp:?}");
    for f in r.flows.iter() {
        assert!(f.finished && f.completion_time_s.is_some(), "{f:?}");
    }
    // Both kinds got a share: neither took the bottleneck alone.
    let mean = |fs: &[&ackwise::lab::run::FlowRecord]| {
        fs.iter().filter_map(|f| f.goodput_bps).sum::<f64>() / fs.len() as f64
    };
    let (q, t) = (mean(&quic), mean(&tcp));
    assert!(q > 0.2 * t && t > 0.2 * q, "quic {q} tcp {t}");
    // They asked for one ACK per 4 packets, but at 1 Mbit/s shared ten
    // ways a flow's packets arrive ~100 ms apart, so the receiver's 25 ms
    // max_ack_delay sends most ACKs: still fewer than one per packet.
    let (data, acks) = quic
        .iter()
        .fold((0, 0), |(d, a), f| (d + f.data_packets, a + f.ack_packets));
    assert!(
        acks > 0 && acks < data,
        "{acks} ACK-only for {data} data packets"
    );
    assert!(r.links[0].utilization > 0.8, "{:?}", r.links[0]);
}

#[test]
fn quic_strategies_parse_and_list() {
    for s in Strategy::quic() {
        assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
    }
    let af: Strategy = "quic-af-16+ackwise-cc+beta27".parse().unwrap();
    assert_eq!(af.name(), "quic-af-16+beta27+ackwise-cc");
    for bad in [
        "quic-af-0",
        "quic-af-257",
        "quic+pacing",
        "quic+beta27",
        "4w+ackwise-cc",
        "quic-9w",
    ] {
        assert!(bad.parse::<Strategy>().is_err(), "{bad}");
    }
}

#[test]
fn an_initial_window_below_two_datagrams_still_sends() {
    // One 1000-byte segment of initial window (paper 004's setups) is less
    // than a QUIC datagram; quinn's NewReno would never send with it.
    for controller in [
        QuicController::NewReno,
        QuicController::Ackwise {
            decrease: Decrease::Half,
        },
    ] {
        let config = QuicFlowConfig {
            controller,
            initial_window: Some(1000),
            ..QuicFlowConfig::default()
        };
        let s = dumbbell(
            10_000_000,
            Duration::from_millis(20),
            50,
            &[quic_flow(config, 100_000)],
        );
        let r = emu::run(&s).unwrap();
        assert!(r.all_finished, "{controller:?}: {:?}", r.flows[0]);
    }
}

/// `ackwise send --transport quic` as a library call against the QUIC
/// server of `ackwise recv`: files arrive intact (the transfer checks each
/// one's SHA-256), and a sender pinning another certificate is refused.
#[cfg(feature = "quic-net")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_over_quic_delivers_files_with_matching_digests() {
    use ackwise::net::transfer::{self, quic, ReceiveOptions, SendOptions};
    use ackwise::quic::SelfSigned;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    let dir = std::env::temp_dir().join(format!("ackwise-quic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let mut paths = Vec::new();
    let mut contents = Vec::new();
    for (i, size) in [0usize, 1, 262_145, 3_000_017].into_iter().enumerate() {
        let mut data = vec![0u8; size];
        rng.fill_bytes(&mut data);
        let path = dir.join("src").join(format!("f{i}.bin"));
        std::fs::write(&path, &data).unwrap();
        paths.push(path);
        contents.push((format!("f{i}.bin"), data));
    }
    let port = free_udp_port();
    let listen = format!("127.0.0.1:{port}");
    let identity = SelfSigned::generate().unwrap();
    let pinned = quic::fingerprint(&identity.cert);
    let serve_plan = transfer::ServePlan {
        listen: listen.clone(),
        transport: transfer::Transport::Quic,
        strategy: Strategy::W4,
        mss: 1400,
        options: ReceiveOptions::new(dir.join("out")),
        console: transfer::ConsoleMode::Quiet,
        pcap: None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let addr = listen.parse().unwrap();
    let server = tokio::spawn(async move {
        quic::serve_quic(&serve_plan, &identity, addr, async {
            let _ = stopped.await;
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let plan = |sha256, strategy: &str| transfer::SendPlan {
        paths: paths.clone(),
        to: listen.clone(),
        transport: transfer::Transport::Quic,
        strategy: strategy.parse().unwrap(),
        mss: 1400,
        connect_timeout: Duration::from_secs(5),
        quic_cert_sha256: Some(sha256),
        options: SendOptions::default(),
        console: transfer::ConsoleMode::Quiet,
        pcap: None,
    };
    let summary = transfer::run_send(&plan(pinned, "quic-af-16+ackwise-cc"))
        .await
        .unwrap();
    assert!(summary.all_ok(), "{summary}");
    for (name, data) in &contents {
        assert_eq!(&std::fs::read(dir.join("out").join(name)).unwrap(), data);
    }
    // Another certificate's fingerprint: the handshake fails, nothing lands.
    let mut wrong = pinned;
    wrong[0] ^= 1;
    let err = transfer::run_send(&plan(wrong, "quic")).await.unwrap_err();
    assert!(err.to_string().contains("does not match"), "{err}");
    // A TCP-style strategy is refused with a clear line.
    let err = transfer::run_send(&plan(pinned, "4w")).await.unwrap_err();
    assert!(err.to_string().contains("QUIC strategy"), "{err}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command line: `ackwise recv --transport quic` prints its
/// certificate's fingerprint, `ackwise send --transport quic` pinning it
/// delivers a file whose digest the transfer checks, and a bad
/// fingerprint is one clear error line.
#[cfg(all(feature = "quic-net", feature = "cli"))]
#[test]
fn cli_send_over_quic_delivers_a_file() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = std::env::temp_dir().join(format!("ackwise-quic-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let data: Vec<u8> = (0..2_000_003u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let file = dir.join("payload.bin");
    std::fs::write(&file, &data).unwrap();
    let port = free_udp_port();
    let listen = format!("127.0.0.1:{port}");
    let mut recv = Command::new(env!("CARGO_BIN_EXE_ackwise"))
        .args(["recv", "--transport", "quic", "--listen", &listen, "--out"])
        .arg(dir.join("out"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut reader = BufReader::new(recv.stderr.take().unwrap());
    reader.read_line(&mut first).unwrap();
    // Keep reading: a closed pipe would fail the receiver's next report.
    let drain = std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let fingerprint = first
        .split_whitespace()
        .skip_while(|w| *w != "sha256")
        .nth(1)
        .unwrap_or_else(|| panic!("no fingerprint in `{first}`"))
        .trim_end_matches(')')
        .to_string();
    let send = |fp: &str| {
        Command::new(env!("CARGO_BIN_EXE_ackwise"))
            .args(["send", "--quiet", "--transport", "quic", "--to", &listen])
            .args([
                "--strategy",
                "quic-af-8+ackwise-cc",
                "--quic-cert-sha256",
                fp,
            ])
            .arg(&file)
            .output()
            .unwrap()
    };
    let ok = send(&fingerprint);
    let bad = send("not-hex");
    let _ = recv.kill();
    let _ = recv.wait();
    let _ = drain.join();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(std::fs::read(dir.join("out/payload.bin")).unwrap(), data);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: --quic-cert-sha256"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two processes, same seed: the same figures. TLS randomness and the
/// certificate differ between processes (they are not seedable); what is
/// measured must not.
#[cfg(feature = "cli")]
#[test]
fn same_seed_same_figures_across_processes() {
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ackwise"))
            .args([
                "lab",
                "quic",
                "--strategies",
                "quic,quic-af-8+ackwise-cc,quic-4w",
            ])
            .args(["--seed", "3", "--jobs", "1", "--quiet"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (a, b) = (run(), run());
    assert!(a.contains("quic-af-8+ackwise-cc"), "{a}");
    assert_eq!(a, b);
}

/// A UDP port on loopback that nothing holds right now.
fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
