//! Sends files to a `file_server` (or `ackwise recv`) over ackwise: the
//! library calls behind `ackwise send`, spelled out.
//!
//! ```text
//! cargo run --release --example file_client -- 127.0.0.1:4433 FILE... [STRATEGY]
//! ```
//!
//! A last argument that is a lab strategy name (default `4w-adaptive`) sets the
//! sender's ACK requests and congestion control.

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
    let server = args.remove(0).parse()?;
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
