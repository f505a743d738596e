//! Receives files over ackwise into a directory until Ctrl-C: the library
//! calls behind `ackwise recv`, spelled out.
//!
//! ```text
//! cargo run --release --example file_server -- 127.0.0.1:4433 /tmp/inbox [STRATEGY]
//! cargo run --release --example file_client -- 127.0.0.1:4433 FILE... [STRATEGY]
//! ```
//!
//! STRATEGY is a lab name (`ackwise lab list`; default `4w-adaptive`): the server
//! takes its ACK policy from it. A `quic*` strategy (`quic`, `quic-af-16`,
//! `quic-4w+ackwise-cc`, ...) serves over QUIC instead, by quinn with that
//! strategy's ACK frequency and controller; the server prints its
//! certificate's SHA-256, which the client pins:
//!
//! ```text
//! cargo run --release --example file_server -- 127.0.0.1:4433 /tmp/inbox quic-af-16
//! cargo run --release --example file_client -- 127.0.0.1:4433 FILE... quic-af-16 SHA256
//! ```

use ackwise::lab::Strategy;
use ackwise::net::transfer::{self, Console, ConsoleMode, ReceiveOptions};
use ackwise::net::Endpoint;
use std::process::ExitCode;
use std::time::Duration;

#[tokio::main]
async fn main() -> ExitCode {
    // One readable line, not the Debug form `main` would print for an
    // error it returns.
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let listen_arg = args.first().map_or("127.0.0.1:4433", String::as_str);
    let listen: std::net::SocketAddr = listen_arg
        .parse()
        .map_err(|e| format!("`{listen_arg}`: {e} (expected IP:PORT)"))?;
    let out_dir = args.get(1).map_or(".", String::as_str);
    let strategy: Strategy = args
        .get(2)
        .map_or(Strategy::DEFAULT_NAME, String::as_str)
        .parse()?;

    // Files land in `out_dir`, never over an existing file; a bad
    // directory is reported now rather than at the first transfer.
    let options = ReceiveOptions::new(out_dir);
    options.check_out_dir()?;

    #[cfg(feature = "quic-net")]
    if strategy.base.is_quic() {
        // The same file protocol over a quinn endpoint, served until Ctrl-C.
        let plan = transfer::ServePlan {
            listen: listen.to_string(),
            transport: transfer::Transport::Quic,
            strategy,
            mss: transfer::DEFAULT_MSS,
            options,
            console: ConsoleMode::Plain,
            pcap: None,
        };
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        transfer::serve(&plan, ctrl_c).await?;
        return Ok(());
    }

    let config = transfer::strategy_config(strategy, transfer::DEFAULT_MSS);
    let endpoint = Endpoint::server(listen, config)?;
    eprintln!("listening on {} with {strategy}", endpoint.local_addr());

    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            accepted = endpoint.accept() => {
                let Some((mut stream, peer)) = accepted else { break };
                let options = options.clone();
                // One task per sender: connections are served concurrently.
                tokio::spawn(async move {
                    let mut console = Console::new(ConsoleMode::Plain, peer.to_string());
                    match transfer::receive_files(&mut stream, &options, &mut console).await {
                        // Bytes, time, goodput, ACKs sent and received.
                        Ok(summary) => eprintln!("{peer}: {summary}"),
                        // The partial file is already gone.
                        Err(e) => eprintln!("{peer}: error: {e}"),
                    }
                });
            }
        }
    }
    // Let connections that are closing send their last ACKs.
    endpoint.close(Duration::from_secs(1)).await;
    Ok(())
}
