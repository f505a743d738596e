//! Sends files to a `file_server` (or `ackwise recv`) over ackwise: the
//! library calls behind `ackwise send`, spelled out.
//!
//! ```text
//! cargo run --release --example file_client -- 127.0.0.1:4433 FILE... [STRATEGY]
//! ```
//!
//! A last argument that is a lab strategy name (default `4w-adaptive`) sets the
//! sender's ACK requests and congestion control. With a `quic*` strategy the
//! files go over QUIC (see `file_server`), and the argument after it is the
//! SHA-256 of the server's certificate, which the server prints:
//!
//! ```text
//! cargo run --release --example file_client -- 127.0.0.1:4433 FILE... quic-af-16 SHA256
//! ```

use ackwise::lab::Strategy;
use ackwise::net::transfer::{self, Console, ConsoleMode, SendOptions};
use ackwise::net::Endpoint;
use std::process::ExitCode;
use std::time::Duration;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `Ok(false)` when the receiver turned a file down.
async fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err("usage: file_client ADDR FILE... [STRATEGY]".into());
    }
    let server_arg = args.remove(0);
    let server: std::net::SocketAddr = server_arg
        .parse()
        .map_err(|e| format!("`{server_arg}`: {e} (expected IP:PORT)"))?;

    #[cfg(feature = "quic-net")]
    if args.len() >= 3 {
        let n = args.len();
        if let Ok(strategy) = args[n - 2].parse::<Strategy>() {
            if strategy.base.is_quic() {
                let pin = transfer::quic::parse_fingerprint(&args[n - 1])?;
                args.truncate(n - 2);
                return send_over_quic(server, args, strategy, pin).await;
            }
        }
    }

    let strategy = match args.last().map(|s| s.parse::<Strategy>()) {
        Some(Ok(s)) if args.len() > 1 => {
            args.pop();
            s
        }
        _ => Strategy::DEFAULT,
    };

    // Every file is opened and checked before anything goes on the wire.
    let files = transfer::open_files(&args)?;

    let endpoint = Endpoint::bind("0.0.0.0:0".parse()?)?;
    let config = transfer::strategy_config(strategy, transfer::DEFAULT_MSS);
    let mut stream = endpoint.connect(server, config).await?;

    // A bar on a terminal, plain lines otherwise; the ACK counts come from
    // the stream's connection statistics.
    let mut console = Console::new(ConsoleMode::Auto, "");
    let summary =
        transfer::send_files(&mut stream, files, &SendOptions::default(), &mut console).await?;
    eprintln!("{summary}");

    drop(stream);
    endpoint.close(Duration::from_secs(1)).await;
    Ok(summary.all_ok())
}

/// The QUIC path: the same file protocol over quinn, with the strategy's
/// ACK frequency and controller, the server's certificate pinned by its
/// SHA-256.
#[cfg(feature = "quic-net")]
async fn send_over_quic(
    server: std::net::SocketAddr,
    files: Vec<String>,
    strategy: Strategy,
    pin: [u8; 32],
) -> Result<bool, Box<dyn std::error::Error>> {
    let plan = transfer::SendPlan {
        paths: files.into_iter().map(Into::into).collect(),
        to: server.to_string(),
        transport: transfer::Transport::Quic,
        strategy,
        mss: transfer::DEFAULT_MSS,
        connect_timeout: Duration::from_secs(10),
        quic_cert_sha256: Some(pin),
        options: SendOptions::default(),
        console: ConsoleMode::Auto,
        pcap: None,
    };
    let summary = transfer::run_send(&plan).await?;
    eprintln!("{summary}");
    Ok(summary.all_ok())
}
