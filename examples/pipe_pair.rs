//! Two connections over the in-memory pipe: one transfer with ACK-every-
//! segment and one with delayed ACKs, then their statistics side by side.
//!
//! ```text
//! cargo run --release --example pipe_pair -- [BYTES] [LOSS] [SEED]
//! ```

use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::testing::{transfer, PipeConfig};
use std::process::ExitCode;
use std::time::Duration;

fn parse<T: std::str::FromStr>(arg: Option<String>, default: T, what: &str) -> Result<T, String> {
    match arg {
        None => Ok(default),
        Some(s) => s.parse().map_err(|_| format!("invalid {what}: {s:?}")),
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let parsed = (|| {
        let bytes: usize = parse(args.next(), 4_000_000, "byte count")?;
        let loss: f64 = parse(args.next(), 0.01, "loss probability")?;
        let seed: u64 = parse(args.next(), 1, "seed")?;
        if !(0.0..1.0).contains(&loss) {
            return Err(format!("loss probability must be in [0, 1), got {loss}"));
        }
        Ok((bytes, loss, seed))
    })();
    let (bytes, loss, seed) = match parsed {
        Ok(v) => v,
        Err(e) => {
            eprintln!("pipe_pair: {e}");
            return ExitCode::from(2);
        }
    };
    let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    println!(
        "{bytes} bytes client -> server, 10 ms one-way delay, loss {:.1} %, seed {seed}\n",
        loss * 100.0
    );
    println!(
        "{:<8} {:>10} {:>10} {:>9} {:>9} {:>8} {:>8} {:>8} {:>10}",
        "policy", "time_s", "goodput", "data_seg", "acks", "retx", "fast_rx", "rto", "verified"
    );
    for (name, policy) in [
        ("every", AckPolicyConfig::Every),
        ("delayed", AckPolicyConfig::DELAYED),
    ] {
        let config = Config {
            ack_policy: policy,
            min_rto: Duration::from_millis(200),
            ..Config::default()
        };
        let pipe = PipeConfig {
            loss,
            seed,
            ..PipeConfig::default()
        };
        let out = match transfer(
            pipe,
            config.clone(),
            config,
            &data,
            &[],
            Duration::from_secs(3_600),
        ) {
            Ok(out) => out,
            Err(e) => {
                eprintln!("pipe_pair: {e}");
                return ExitCode::FAILURE;
            }
        };
        let secs = out.delivered_at.unwrap_or(out.elapsed).as_secs_f64();
        let ok = out.server_received == data && out.closed_cleanly;
        println!(
            "{:<8} {:>10.3} {:>7.2} Mb/s {:>9} {:>9} {:>8} {:>8} {:>8} {:>10}",
            name,
            secs,
            bytes as f64 * 8.0 / secs / 1e6,
            out.client_stats.data_segments_sent,
            out.server_stats.pure_acks_sent,
            out.client_stats.retransmissions,
            out.client_stats.fast_retransmits,
            out.client_stats.timeouts,
            if ok { "yes" } else { "NO" }
        );
        if !ok {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
