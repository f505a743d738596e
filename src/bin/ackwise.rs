//! The `ackwise` command: runs the lab, sends and receives files, and
//! relays over emulated links.
//!
//! ```text
//! ackwise lab                       # the default comparison, as a table
//! ackwise lab list                  # presets and strategies
//! ackwise lab bench                 # emulator speed (and ns-2's, if installed)
//! ackwise lab report paper-003|paper-004|ack-management [--out DIR]
//!                                   # run a paper's presets, write its results page
//! ackwise lab gauntlet [--cases N] [--seed S] [--strategies a,b] [--case K] [--replicates R]
//!             [--shard i/n] [--jobs N] [--json F] [--ns2] [--ae-redraw] [--pcap DIR (with --case)] [--quiet]
//!                                   # every strategy against AE on random paths
//! ackwise lab merge PART.json... --json OUT.json
//!                                   # gauntlet shards into one file
//! ackwise lab compare BEFORE.json AFTER.json [BEFORE2.json AFTER2.json ...]
//!                                   # two gauntlet runs of one draw, case by case
//! ackwise lab report gauntlet [--from MERGED.json] [--cases N] [--seed S] [--replicates R]
//! ackwise lab crosscheck [--json F] [--ns2-stock]
//!                                   # emulator and baseline TCP against ns-2
//! ackwise lab PRESET|FILE.toml [--strategies ae,dal2] [--seed N]
//!             [--json F] [--csv F] [--jobs N] [--shard i/n] [--quiet]
//!             [--series INTERVAL [--series-csv F]] [--plot DIR] [--pcap DIR]
//! ackwise relay --listen ADDR --to ADDR [--fwd-rate R --fwd-delay D
//!               --rev-rate R --rev-delay D --buffer N --rev-buffer N
//!               --queue droptail|red --loss P --reorder P --seed N
//!               --stats-interval D --ack-filter KIND
//!               --ack-delay-control THRESHOLD[,FRACTION]
//!               --max-clients N --client-idle D --pcap FILE]
//!                                   # a link emulator between two UDP endpoints
//! ackwise recv --listen ADDR --out DIR [--strategy S] [--overwrite] [--key-file F | --insecure]
//!              [--transport ackwise|tcp|quic] [--quic-cert-sha256 HEX] [--mss N] [--idle-timeout 60s]
//!              [--keep-partial 24h] [--pcap FILE] [--quiet]
//!                                   # receive files until Ctrl-C
//! ackwise send FILE... --to ADDR [--strategy S] [--connect-timeout 10s] [--key-file F]
//!              [--transport ackwise|tcp|quic] [--mss N] [--idle-timeout 60s] [--pcap FILE] [--quiet]
//!                                   # send files; exit status 1 if any failed
//! ackwise perf server [--listen ADDR] [--strategy S] [--transport ackwise|tcp] [--mss N] [--pcap FILE]
//! ackwise perf client [--to ADDR] [--time 10s] [--interval 1s] [-P N] [-R] [--strategy S]
//!                     [--transport ackwise|tcp] [--mss N] [--json] [--pcap FILE]
//!                                   # timed throughput runs with the receiver's ACK count
//! ```
//!
//! `--series 100ms` samples every flow's windows and the bottleneck queue
//! into the JSON records (and `--series-csv`); `--plot DIR` writes SVG
//! plots of the sweep, and of the series when recorded. `--pcap DIR`
//! writes every link of every run as a pcap file (IP/TCP, one
//! conversation per flow) for Wireshark or tshark; `send`, `recv` and
//! `relay` take `--pcap FILE` for what crosses their sockets. Progress
//! goes to stderr: a bar on a terminal, a few plain lines otherwise.

use ackwise::lab::{self, presets, run, LabError, RunPlan, Strategy};
use ackwise::net::transfer::{self, auth, ConsoleMode, ReceiveOptions, SendOptions, Transport};
use ackwise::relay;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ackwise",
    version,
    about = "A transport that sends fewer ACKs, its lab, and file transfer over it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment on the link emulator (`lab list` shows them).
    Lab(LabArgs),
    /// Relay UDP datagrams between clients and a server across emulated
    /// forward and reverse links (rate, delay, queue, loss, reordering).
    Relay(RelayArgs),
    /// Send files to an `ackwise recv`.
    Send(SendArgs),
    /// Receive files from `ackwise send` until Ctrl-C.
    Recv(RecvArgs),
    /// Timed throughput runs (like iperf3) with the receiver's ACK count.
    Perf {
        #[command(subcommand)]
        role: PerfRole,
    },
}

#[derive(Subcommand)]
enum PerfRole {
    /// Answer perf clients until Ctrl-C.
    Server(PerfServerArgs),
    /// Run one timed test against a perf server.
    Client(PerfClientArgs),
}

#[derive(clap::Args)]
struct PerfServerArgs {
    /// Address to listen on, e.g. `127.0.0.1:5201`.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:5201")]
    listen: String,
    /// Strategy, a lab name. Without it the receiver acknowledges as the
    /// strategy each client names; it is also the sending strategy of
    /// `--reverse` runs (default 4w-adaptive+spread+sparse-holes; over
    /// QUIC a `quic*` strategy, default `quic`, and the receiver follows
    /// each client's ACK_FREQUENCY frames).
    #[arg(long)]
    strategy: Option<String>,
    #[command(flatten)]
    carrier: CarrierArgs,
}

#[derive(clap::Args)]
struct PerfClientArgs {
    /// The server, HOST:PORT.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:5201")]
    to: String,
    /// How long data flows, e.g. `10s`.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    time: String,
    /// Period of the interval reports.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    interval: String,
    /// Connections at once (1 to 128).
    #[arg(long, short = 'P', value_name = "N", default_value_t = 1)]
    parallel: usize,
    /// The server sends, the client receives.
    #[arg(long, short = 'R')]
    reverse: bool,
    /// Strategy of the sending client, a lab name (the server's receiver
    /// follows it unless started with --strategy).
    #[arg(long, default_value = Strategy::DEFAULT_NAME)]
    strategy: String,
    #[command(flatten)]
    carrier: CarrierArgs,
    /// Give up connecting after this long.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    connect_timeout: String,
    /// Print the report as JSON on stdout (no interval lines).
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct RelayArgs {
    /// Address clients send to, e.g. 127.0.0.1:9000.
    #[arg(long, value_name = "ADDR")]
    listen: String,
    /// The server's address.
    #[arg(long, value_name = "ADDR")]
    to: String,
    /// Forward (client to server) rate, e.g. 10mbit; 28 bytes of UDP/IP
    /// header are counted per datagram.
    #[arg(long, value_name = "RATE", default_value = "10mbit")]
    fwd_rate: String,
    /// Forward one-way delay, e.g. 50ms.
    #[arg(long, value_name = "DELAY", default_value = "0ms")]
    fwd_delay: String,
    /// Reverse (server to client) rate.
    #[arg(long, value_name = "RATE", default_value = "10mbit")]
    rev_rate: String,
    /// Reverse one-way delay.
    #[arg(long, value_name = "DELAY", default_value = "0ms")]
    rev_delay: String,
    /// Queue limit in datagrams (forward, and reverse unless --rev-buffer).
    #[arg(long, value_name = "PACKETS", default_value_t = 50)]
    buffer: usize,
    /// Reverse queue limit in datagrams.
    #[arg(long, value_name = "PACKETS")]
    rev_buffer: Option<usize>,
    /// Queue discipline of both links: droptail or red.
    #[arg(long, default_value = "droptail")]
    queue: String,
    /// Random loss probability of both links, e.g. 0.01 or 1%.
    #[arg(long, value_name = "P", default_value = "0")]
    loss: String,
    /// Reordering probability of both links (a reordered datagram is held
    /// back by three of its transmission times, at least 1 ms).
    #[arg(long, value_name = "P", default_value = "0")]
    reorder: String,
    /// Path MTU of both links in bytes (IP datagram: UDP payload + 28);
    /// larger datagrams are dropped and counted. The default is
    /// Ethernet's; 65535 carries anything loopback does.
    #[arg(long, value_name = "BYTES", default_value_t = ackwise::relay::ETHERNET_MTU_BYTES)]
    mtu: u32,
    /// Seed of the loss and reordering draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the counters every INTERVAL, e.g. 5s.
    #[arg(long, value_name = "INTERVAL")]
    stats_interval: Option<String>,
    /// ACK filtering on the reverse queue (paper 000): classic,
    /// static:DELTA, delayed, per-flow or per-flow-rr.
    #[arg(long, value_name = "KIND")]
    ack_filter: Option<String>,
    /// Most clients (source addresses) with a socket toward the server at
    /// once; datagrams of further new clients are dropped.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_clients: usize,
    /// Close a client's socket after it carried nothing for this long.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    client_idle: String,
    /// ACK delay control (paper 001): slow the reverse ACKs to FRACTION
    /// (default 0.5) of the forward packet rate while the forward queue
    /// holds more than THRESHOLD, e.g. 50kB or 50kB,0.5.
    #[arg(long, value_name = "THRESHOLD[,FRACTION]")]
    ack_delay_control: Option<String>,
    /// Write every datagram reaching the relay, from either side, to FILE
    /// (pcap, as IP/TCP between client and server, before the emulated
    /// links: the links' drops show as retransmissions).
    #[arg(long, value_name = "FILE")]
    pcap: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct SendArgs {
    /// Files to send, one after another over one connection; each keeps
    /// its name (the last path component) at the receiver.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<std::path::PathBuf>,
    /// The receiver, HOST:PORT.
    #[arg(long, value_name = "ADDR")]
    to: String,
    /// Strategy, a lab name (`ackwise lab list`): the sender takes its ACK
    /// requests and congestion control from it. Give the receiver the
    /// same name.
    #[arg(long, default_value = Strategy::DEFAULT_NAME)]
    strategy: String,
    #[command(flatten)]
    carrier: CarrierArgs,
    /// Give up connecting after this long, e.g. `5s`.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    connect_timeout: String,
    /// Give up when the transfer stalls for this long.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    idle_timeout: String,
    /// Authenticate with the shared key in FILE (at least 16 bytes, e.g.
    /// `head -c 32 /dev/urandom > FILE`): nothing is sent unless the
    /// receiver proves it holds the same key, and every header and digest
    /// carries the key's tag.
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    /// With `--transport quic`: the SHA-256 fingerprint of the receiver's
    /// certificate, as `ackwise recv --transport quic` prints it.
    #[arg(long, value_name = "HEX")]
    quic_cert_sha256: Option<String>,
    /// No progress, no summary: only errors.
    #[arg(long, short)]
    quiet: bool,
}

/// The carrier flags `send` and `recv` share.
#[derive(clap::Args)]
struct CarrierArgs {
    /// Carrier: `ackwise` (over UDP), `tcp` (the kernel's, for
    /// comparison) or `quic` (quinn, with a `quic*` strategy).
    #[arg(long, default_value = "ackwise")]
    transport: String,
    /// Largest segment payload, bytes (ackwise only), 64 to 65447. The
    /// connecting end probes the path before its SYN and lowers this to
    /// what the path carries (1412 on a 1500-byte MTU; loopback takes
    /// 65447, a segment and its header in one UDP datagram); the smaller
    /// of the two ends' values applies. The default, 65447, leaves the
    /// choice to the path.
    #[arg(long, value_name = "BYTES", default_value_t = transfer::DEFAULT_MSS)]
    mss: u16,
    /// Write every segment this end sends and receives to FILE (pcap, as
    /// IP/TCP between the two hosts, so Wireshark's TCP analysis works);
    /// ackwise transport only.
    #[arg(long, value_name = "FILE")]
    pcap: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct RecvArgs {
    /// Address to listen on, e.g. `127.0.0.1:4433` or `0.0.0.0:4433`.
    #[arg(long, value_name = "ADDR")]
    listen: String,
    /// Directory the files land in (it must exist).
    #[arg(long, value_name = "DIR")]
    out: std::path::PathBuf,
    /// Strategy, a lab name. Without it the receiver acknowledges as the
    /// strategy the sender names does; with it, a sender whose strategy
    /// needs another ACK policy is refused before any data moves.
    #[arg(long)]
    strategy: Option<String>,
    #[command(flatten)]
    carrier: CarrierArgs,
    /// Replace existing files (by default a file whose name exists is
    /// refused).
    #[arg(long)]
    overwrite: bool,
    /// Take files only from senders holding the shared key in FILE (the
    /// sender's --key-file). Required when listening beyond loopback,
    /// unless --insecure is given.
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    /// Listen beyond loopback without --key-file: anyone who can reach
    /// the port can store files in --out.
    #[arg(long)]
    insecure: bool,
    /// Drop a connection that stalls for this long.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    idle_timeout: String,
    /// Keep what arrived of a file whose transfer broke off for this
    /// long, so that sending it again resumes where it stopped; `0`
    /// keeps nothing.
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    keep_partial: String,
    /// No progress, no summaries: only errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(clap::Args)]
struct LabArgs {
    /// A preset name, a scenario file (.toml), `list`, `bench`,
    /// `crosscheck`, `report`, `gauntlet`, `merge`, `compare` or `summary`.
    target: Option<String>,
    /// report: the page to write (`paper-003`, `gauntlet`, ...); merge:
    /// the part files; compare: gauntlet files in pairs, before and after (one pair per seed; several pairs are pooled);
    /// summary: gauntlet files, one per seed, judged together.
    #[arg(value_name = "PAGE|FILE.json")]
    page: Vec<String>,
    /// report: directory for the page and its plots.
    #[arg(long, value_name = "DIR", default_value = "docs/results")]
    out: String,
    /// Strategies to compare, comma separated (default: the preset's).
    #[arg(long)]
    strategies: Option<String>,
    /// Seed of every run (default: the file's, else 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Write one JSON record per run to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write one CSV row per flow to this file.
    #[arg(long, value_name = "FILE")]
    csv: Option<String>,
    /// Runs in parallel (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only shard i of n of the sweep, e.g. `2/4`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// crosscheck: compare with ns-2's stock sender, whose congestion
    /// avoidance counts ACKs rather than bytes.
    #[arg(long)]
    ns2_stock: bool,
    /// Record time series (windows, bottleneck queue) every INTERVAL,
    /// e.g. `100ms`; they go into --json and --series-csv.
    #[arg(long, value_name = "INTERVAL")]
    series: Option<String>,
    /// Write the time series as CSV, one row per flow per sample.
    #[arg(long, value_name = "FILE")]
    series_csv: Option<String>,
    /// Write SVG plots into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    plot: Option<String>,
    /// Write every link of every run as a pcap file into this directory
    /// (created if missing): PRESET-POINT-STRATEGY-LINK.pcap, IP/TCP with
    /// one address pair per flow; gauntlet: with --case only, as
    /// gauntlet-sSEED-cCASE-REPLICATE-STRATEGY-LINK.pcap.
    #[arg(long, value_name = "DIR")]
    pcap: Option<String>,
    /// gauntlet: number of cases (default 200).
    #[arg(long, value_name = "N")]
    cases: Option<u64>,
    /// gauntlet: run case K only, to replay it.
    #[arg(long, value_name = "K")]
    case: Option<u64>,
    /// gauntlet: also run the ns-2 baseline check.
    #[arg(long)]
    ns2: bool,
    /// gauntlet, report gauntlet: run every (case, strategy) R times, each
    /// with its own emulator seed and, after the first, flow starts moved
    /// by up to half an RTT (replicate 0 is the case as drawn, so 1 is the
    /// single run), and judge the mean; from 2 on the table adds AE's
    /// replicate 1 against its replicate 0, the single-draw noise floor
    /// (default 1).
    #[arg(long, value_name = "R")]
    replicates: Option<u32>,
    /// gauntlet: also run AE a second time on every case, on replicates R
    /// to 2R - 1, and judge it against the first like a strategy (row
    /// `ae (second draw)`): the noise floor at this many replicates.
    /// `report gauntlet` always does.
    #[arg(long)]
    ae_redraw: bool,
    /// report gauntlet: read this merged gauntlet file instead of running.
    #[arg(long, value_name = "FILE")]
    from: Option<String>,
    /// bench: run one scaling point with this many flows (with --rate and
    /// --seconds; --json FILE writes its record, peak memory included).
    #[arg(long, value_name = "N")]
    flows: Option<usize>,
    /// bench: the scaling point's bottleneck rate, e.g. `1gbit`.
    #[arg(long, value_name = "RATE")]
    rate: Option<String>,
    /// bench: the scaling point's simulated seconds.
    #[arg(long, value_name = "S")]
    seconds: Option<u64>,
    /// bench: the scaling point's socket buffers (send and receive), bytes
    /// (default the lab's 16 MiB, which bounds the window above about
    /// 1.3 Gbit/s at 100 ms).
    #[arg(long, value_name = "BYTES")]
    socket_buffer: Option<usize>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = match parse_cli() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match cli.command {
        // The lab's errors are all about its input (presets, strategies,
        // scenario files, output paths).
        Command::Lab(args) => lab_command(args).unwrap_or_else(usage),
        Command::Relay(args) => relay_command(&args),
        Command::Send(args) => send_command(args),
        Command::Recv(args) => recv_command(args),
        Command::Perf { role } => perf_command(role),
    }
}

/// Resolves `ADDR` (an IP address or host name, with a port).
fn socket_addr(value: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    value
        .to_socket_addrs()
        .map_err(|e| format!("`{value}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{value}` resolves to no address"))
}

fn relay_config(args: &RelayArgs) -> Result<relay::RelayConfig, relay::RelayConfigError> {
    let queue = relay::QueueKind::parse(&args.queue)?;
    let loss = relay::parse_probability("--loss", &args.loss)?;
    let reorder = relay::parse_probability("--reorder", &args.reorder)?;
    let link = |rate: (&str, &str), delay: (&str, &str), buffer_packets| {
        Ok::<_, relay::RelayConfigError>(relay::LinkConfig {
            rate_bps: relay::parse_rate(rate.0, rate.1)?,
            delay: relay::parse_delay(delay.0, delay.1)?,
            queue,
            buffer_packets,
            loss,
            reorder,
            reorder_delay: None,
            mtu_bytes: Some(args.mtu),
        })
    };
    let config = relay::RelayConfig {
        listen: socket_addr(&args.listen)
            .map_err(|p| relay::RelayConfigError::new("--listen", p))?,
        to: socket_addr(&args.to).map_err(|p| relay::RelayConfigError::new("--to", p))?,
        forward: link(
            ("--fwd-rate", &args.fwd_rate),
            ("--fwd-delay", &args.fwd_delay),
            args.buffer,
        )?,
        reverse: link(
            ("--rev-rate", &args.rev_rate),
            ("--rev-delay", &args.rev_delay),
            args.rev_buffer.unwrap_or(args.buffer),
        )?,
        seed: args.seed,
        ack_management: relay::AckManagement {
            filter: args
                .ack_filter
                .as_deref()
                .map(|v| relay::parse_ack_filter("--ack-filter", v))
                .transpose()?,
            delay_control: args
                .ack_delay_control
                .as_deref()
                .map(|v| relay::parse_delay_control("--ack-delay-control", v))
                .transpose()?,
        },
    };
    config.validate()?;
    Ok(config)
}

fn relay_command(args: &RelayArgs) -> ExitCode {
    let config = match relay_config(args) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let interval = match args
        .stats_interval
        .as_deref()
        .map(|s| relay::parse_delay("--stats-interval", s))
        .transpose()
    {
        Ok(Some(d)) if d.is_zero() => return usage("--stats-interval: must be positive"),
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    let idle = match relay::parse_delay("--client-idle", &args.client_idle) {
        Ok(d) if d.is_zero() => return usage("--client-idle: must be positive"),
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    if args.max_clients == 0 {
        return usage("--max-clients: must be at least 1");
    }
    let limits = relay::ClientLimits {
        max_clients: args.max_clients,
        idle,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(async move {
        let mut relay = match relay::Relay::bind(config.clone()).await {
            Ok(r) => r,
            // A loop is a setting that cannot work; a busy port is not.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return usage(e),
            Err(e) => return fail(e),
        };
        relay.set_client_limits(limits);
        if let Some(path) = &args.pcap {
            if let Err(e) = relay.set_capture(path) {
                return fail(format!("--pcap: {e}"));
            }
        }
        let shown = relay::RelayConfig {
            listen: relay.local_addr().unwrap_or(config.listen),
            ..config
        };
        eprintln!(
            "ackwise relay: {shown}; at most {} clients, idle ones closed after {}",
            limits.max_clients, args.client_idle
        );
        let mut handle = relay.spawn();
        let mut ticker =
            interval.map(|d| tokio::time::interval_at(tokio::time::Instant::now() + d, d));
        let outcome = loop {
            let tick = async {
                match ticker.as_mut() {
                    Some(t) => {
                        t.tick().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = tokio::signal::ctrl_c() => break r.map_err(|e| format!("cannot wait for Ctrl-C: {e}")),
                () = tick => println!("{}\n", handle.stats()),
                () = wait_finished(&mut handle) => break Err(String::new()),
            }
        };
        let stats = handle.stats();
        let stopped = match outcome {
            // The relay task ended on its own: say why.
            Err(e) if e.is_empty() => match handle.join().await {
                Err(e) => Err(e.to_string()),
                Ok(()) => Err("the relay stopped".to_string()),
            },
            other => {
                handle.shutdown().await;
                other
            }
        };
        println!("{stats}");
        match stopped {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(e),
        }
    })
}

/// Resolves once the relay task has stopped.
async fn wait_finished(handle: &mut relay::RelayHandle) {
    while !handle.is_finished() {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The one line `send` and `recv` print for anything that stops them.
/// Exit status of a run that failed: a transfer, connection, file or
/// socket error, or a file the receiver refused.
const EXIT_FAILED: u8 = 1;
/// Exit status of a command line (or lab input file) that cannot be run.
const EXIT_USAGE: u8 = 2;
/// Exit status of `send` stopped by Ctrl-C (128 + SIGINT, as shells
/// report it).
const EXIT_INTERRUPTED: u8 = 130;

/// A run that failed: its one line, and [`EXIT_FAILED`].
fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_FAILED)
}

/// A command line that cannot run: its one line, and [`EXIT_USAGE`].
fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Parses the command line; a mistake is one `error:` line (clap's
/// message with its hints folded in) and [`EXIT_USAGE`], help and version
/// go to stdout with status 0.
fn parse_cli() -> Result<Cli, ExitCode> {
    use clap::error::ErrorKind;
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = e.print();
                Err(if e.use_stderr() {
                    ExitCode::from(EXIT_USAGE)
                } else {
                    ExitCode::SUCCESS
                })
            }
            _ => Err(usage(one_line(&e.to_string()))),
        },
    }
}

/// Clap's multi-line message as one line: the lines up to the usage or
/// the "--help" hint, joined, without its own `error:` prefix.
fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    parts.join(" ").trim_start_matches("error: ").to_string()
}

/// The flags `send` and `recv` share, checked before any work.
fn transfer_flags(
    strategy: &str,
    transport: &str,
    idle_timeout: &str,
) -> Result<(Strategy, Transport, std::time::Duration), String> {
    let strategy: Strategy = strategy.parse().map_err(|e| format!("--strategy: {e}"))?;
    let transport: Transport = transport.parse().map_err(|e| format!("--transport: {e}"))?;
    let idle =
        lab::units::parse_duration(idle_timeout).map_err(|e| format!("--idle-timeout: {e}"))?;
    if idle.is_zero() {
        return Err("--idle-timeout: must be positive".into());
    }
    Ok((strategy, transport, idle))
}

/// `--mss` and `--pcap`, checked before any socket exists (both only
/// matter to the ackwise carrier).
fn carrier_flags(transport: Transport, carrier: &CarrierArgs) -> Result<(), String> {
    if transport == Transport::Ackwise {
        transfer::check_mss(carrier.mss).map_err(|e| format!("--mss: {e}"))?;
    } else if carrier.pcap.is_some() {
        return Err(format!(
            "--pcap: records ackwise's own segments; with --transport {transport} capture the socket with tcpdump"
        ));
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

fn console(quiet: bool) -> ConsoleMode {
    if quiet {
        ConsoleMode::Quiet
    } else {
        ConsoleMode::Auto
    }
}

fn send_command(args: SendArgs) -> ExitCode {
    let (strategy, transport, idle) =
        match transfer_flags(&args.strategy, &args.carrier.transport, &args.idle_timeout) {
            Ok(flags) => flags,
            Err(e) => return usage(e),
        };
    if let Err(e) = carrier_flags(transport, &args.carrier) {
        return usage(e);
    }
    let connect_timeout = match positive_duration("--connect-timeout", &args.connect_timeout) {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    let quic_cert_sha256 = match args.quic_cert_sha256.as_deref().map(parse_fingerprint) {
        None => None,
        Some(Ok(fp)) => Some(fp),
        Some(Err(e)) => return usage(format!("--quic-cert-sha256: {e}")),
    };
    let key = match key_flag(args.key_file.as_deref()) {
        Ok(k) => k,
        Err(e) => return usage(e),
    };
    let plan = transfer::SendPlan {
        paths: args.files,
        to: args.to,
        transport,
        strategy,
        mss: args.carrier.mss,
        connect_timeout,
        quic_cert_sha256,
        options: SendOptions {
            idle_timeout: idle,
            key,
            ..SendOptions::default()
        },
        console: console(args.quiet),
        pcap: args.carrier.pcap,
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(e),
    };
    let interrupt = async {
        // Without a Ctrl-C handler the default action (exit) stands.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    match rt.block_on(transfer::run_send_until(&plan, interrupt)) {
        Ok(summary) => {
            if !args.quiet {
                eprintln!("{summary}");
            }
            let failed: Vec<String> = summary
                .files
                .iter()
                .filter(|f| !f.verdict.is_ok())
                .map(|f| format!("{}: the receiver says: {}", f.name, f.verdict))
                .collect();
            if failed.is_empty() {
                ExitCode::SUCCESS
            } else {
                fail(failed.join("; "))
            }
        }
        Err(e @ transfer::TransferError::Interrupted) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => fail(e),
    }
}

/// `--key-file`, read and checked before any socket exists.
fn key_flag(path: Option<&std::path::Path>) -> Result<Option<auth::Key>, String> {
    path.map(auth::Key::from_file)
        .transpose()
        .map_err(|e| format!("--key-file: {e}"))
}

fn positive_duration(flag: &str, text: &str) -> Result<std::time::Duration, String> {
    match lab::units::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err(format!("{flag}: must be positive")),
        Err(e) => Err(format!("{flag}: {e}")),
    }
}

fn perf_command(role: PerfRole) -> ExitCode {
    use ackwise::net::perf;
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(e),
    };
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    match role {
        PerfRole::Server(args) => {
            let transport: Transport = match args.carrier.transport.parse() {
                Ok(t) => t,
                Err(e) => return usage(format!("--transport: {e}")),
            };
            if let Err(e) = carrier_flags(transport, &args.carrier) {
                return usage(e);
            }
            let strategy = match args.strategy.as_deref().map(str::parse::<Strategy>) {
                None => None,
                Some(Ok(s)) => Some(s),
                Some(Err(e)) => return usage(format!("--strategy: {e}")),
            };
            let plan = perf::PerfServerPlan {
                listen: args.listen,
                transport,
                strategy,
                mss: args.carrier.mss,
                pcap: args.carrier.pcap,
            };
            let announce = |addr: std::net::SocketAddr| {
                eprintln!("perf server on {addr} ({transport}); Ctrl-C stops");
            };
            match rt.block_on(perf::serve_perf(&plan, announce, ctrl_c)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e @ perf::PerfError::Invalid(_)) => usage(e),
                Err(e) => fail(e),
            }
        }
        PerfRole::Client(args) => {
            let (strategy, transport) = match (
                args.strategy.parse::<Strategy>(),
                args.carrier.transport.parse::<Transport>(),
            ) {
                (Ok(s), Ok(t)) => (s, t),
                (Err(e), _) => return usage(format!("--strategy: {e}")),
                (_, Err(e)) => return usage(format!("--transport: {e}")),
            };
            if let Err(e) = carrier_flags(transport, &args.carrier) {
                return usage(e);
            }
            let durations = (
                positive_duration("--time", &args.time),
                positive_duration("--interval", &args.interval),
                positive_duration("--connect-timeout", &args.connect_timeout),
            );
            let (duration, interval, connect_timeout) = match durations {
                (Ok(a), Ok(b), Ok(c)) => (a, b, c),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return usage(e),
            };
            let plan = perf::PerfPlan {
                to: args.to,
                transport,
                strategy,
                mss: args.carrier.mss,
                duration,
                interval,
                parallel: args.parallel,
                reverse: args.reverse,
                connect_timeout,
                pcap: args.carrier.pcap,
            };
            let json = args.json;
            let print = |r: &perf::IntervalReport| {
                if !json {
                    println!(
                        "[{:6.2}-{:6.2} s] {:>12} bytes  {}",
                        r.start_s,
                        r.end_s,
                        r.bytes,
                        transfer::fmt_rate(r.bits_per_second)
                    );
                }
            };
            let run = async {
                tokio::select! {
                    r = perf::run_perf(&plan, print) => Some(r),
                    () = ctrl_c => None,
                }
            };
            match rt.block_on(run) {
                Some(Ok(report)) => {
                    if json {
                        match serde_json::to_string_pretty(&report) {
                            Ok(text) => println!("{text}"),
                            Err(e) => return fail(e),
                        }
                    } else {
                        println!("{report}");
                    }
                    ExitCode::SUCCESS
                }
                Some(Err(e @ perf::PerfError::Invalid(_))) => usage(e),
                Some(Err(e)) => fail(e),
                None => {
                    eprintln!("error: interrupted");
                    ExitCode::from(EXIT_INTERRUPTED)
                }
            }
        }
    }
}

/// `--keep-partial`: a duration, `0` for none.
fn parse_keep_partial(text: &str) -> Result<std::time::Duration, String> {
    if text.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    lab::units::parse_duration(text).map_err(|e| format!("--keep-partial: {e}"))
}

fn recv_command(args: RecvArgs) -> ExitCode {
    let named = args.strategy.as_deref().unwrap_or(Strategy::DEFAULT_NAME);
    let (strategy, transport, idle) =
        match transfer_flags(named, &args.carrier.transport, &args.idle_timeout) {
            Ok(flags) => flags,
            Err(e) => return usage(e),
        };
    if let Err(e) = carrier_flags(transport, &args.carrier) {
        return usage(e);
    }
    let key = match key_flag(args.key_file.as_deref()) {
        Ok(k) => k,
        Err(e) => return usage(e),
    };
    if key.is_none() && !args.insecure {
        if let Ok(addr) = socket_addr(&args.listen) {
            if !addr.ip().is_loopback() {
                return usage(format!(
                    "--listen {}: beyond loopback anyone who can reach the port could store files; \
                     give --key-file FILE (the same key to the sender) or --insecure",
                    args.listen
                ));
            }
        }
    }
    let keep_partial = match parse_keep_partial(&args.keep_partial) {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    let mut options = ReceiveOptions::new(args.out);
    options.keep_partial = keep_partial;
    options.overwrite = args.overwrite;
    options.key = key;
    options.idle_timeout = idle;
    options.strategy = args.strategy.is_some().then_some(strategy);
    let plan = transfer::ServePlan {
        listen: args.listen,
        transport,
        strategy,
        mss: args.carrier.mss,
        options,
        console: console(args.quiet),
        pcap: args.carrier.pcap,
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(e),
    };
    let stop = async {
        // Without a Ctrl-C handler the server runs until killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    match rt.block_on(transfer::serve(&plan, stop)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

fn list() {
    println!("presets:");
    for name in presets::names() {
        if let Ok(p) = presets::find(name) {
            let strategies: Vec<String> = p.strategies.iter().map(|s| s.name()).collect();
            println!(
                "  {:<18} {} ({} points; {})",
                p.name,
                p.description,
                p.points.len(),
                strategies.join(", ")
            );
        }
    }
    println!("strategies:");
    for s in Strategy::ALL {
        println!("  {:<18} {}", s.name(), s.description());
    }
    // QUIC strategies (feature `quic`); `quic-af-8` stands for any N.
    for s in Strategy::quic() {
        println!("  {:<18} {}", s.name(), s.description());
    }
    println!(
        "options (append with +; ss-every needs a polled strategy): +{}",
        Strategy::option_names().join(", +")
    );
}

fn bench() -> Result<(), LabError> {
    let simulated = std::time::Duration::from_secs(200);
    eprintln!(
        "ackwise emulator: 1 flow, 100 Mbit/s, 100 ms RTT, 1 BDP buffer, AE, 200 s simulated, \
         {BENCH_ROUNDS} rounds alternating with ns-2 ..."
    );
    let ns2 = lab::ns2::ns2_available();
    let mut ratios = Vec::new();
    for round in 1..=BENCH_ROUNDS {
        let ours = lab::bench::run(simulated)?;
        println!(
            "round {round}: ackwise: {} data packets, {} events in {:.2} s wall: {:.3} M data packets per wall second",
            ours.data_packets,
            ours.events,
            ours.wall.as_secs_f64(),
            ours.packets_per_second() / 1e6
        );
        if !ns2 {
            continue;
        }
        let theirs = lab::bench::run_ns2(simulated)?;
        let ratio = ours.packets_per_second() / theirs.packets_per_second().max(1e-9);
        println!(
            "round {round}: ns-2:    {} data packets in {:.2} s wall: {:.3} M data packets per wall second; ratio {ratio:.2}",
            theirs.data_packets,
            theirs.wall.as_secs_f64(),
            theirs.packets_per_second() / 1e6
        );
        ratios.push(ratio);
    }
    if !ns2 {
        println!("ns-2: unavailable (no `ns` on PATH), nothing to compare with");
        return Ok(());
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "ackwise/ns-2 speed ratio: {:.2} (median of {BENCH_ROUNDS} rounds; {:.2}-{:.2})",
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    );
    Ok(())
}

/// Rounds of `lab bench`, each ackwise then ns-2: one round on a shared
/// machine can be off by a fifth, the median of three much less.
const BENCH_ROUNDS: usize = 3;

/// `lab bench --flows N --rate R --seconds S [--json FILE]`: one scaling
/// point in this process, so that its peak memory is the point's own.
fn bench_point(args: &LabArgs) -> Result<(), LabError> {
    let reference = lab::bench::ScalePoint::REFERENCE;
    let rate_bps = match &args.rate {
        Some(r) => lab::units::parse_rate(r).map_err(|problem| LabError::Field {
            field: "--rate".into(),
            problem,
        })?,
        None => reference.rate_bps,
    };
    let flows = args.flows.unwrap_or(reference.flows);
    let seconds = args.seconds.unwrap_or(reference.simulated.as_secs());
    if !(1..=100_000).contains(&flows) || seconds == 0 || rate_bps == 0 {
        return Err(LabError::Field {
            field: "--flows/--rate/--seconds".into(),
            problem: "flows 1-100000, a positive rate and seconds".into(),
        });
    }
    if args
        .socket_buffer
        .is_some_and(|b| !(1448..=(1 << 40)).contains(&b))
    {
        return Err(LabError::Field {
            field: "--socket-buffer".into(),
            problem: "between 1448 bytes and 1 TiB".into(),
        });
    }
    let point = lab::bench::ScalePoint {
        flows,
        rate_bps,
        simulated: std::time::Duration::from_secs(seconds),
        socket_buffer_bytes: args.socket_buffer,
    };
    let r = lab::bench::run_point(&point)?;
    let record = lab::bench::PointRecord::new(&point, &r, lab::bench::peak_rss_bytes());
    println!("{}", record.summary());
    if let Some(path) = &args.json {
        write_file(path, &record.to_json())?;
    }
    Ok(())
}

fn write_file(path: &str, text: &str) -> Result<(), LabError> {
    std::fs::write(path, text).map_err(|source| LabError::Io {
        path: path.to_string(),
        source,
    })
}

fn crosscheck(args: &LabArgs) -> Result<ExitCode, LabError> {
    // Checked first so that a missing ns-2 is one clear line, not an error
    // from the middle of the run.
    if !lab::ns2::ns2_available() {
        return Err(lab::ns2::Ns2Error::NotInstalled.into());
    }
    let started = std::time::Instant::now();
    let reference = if args.ns2_stock {
        lab::crosscheck::Reference::Stock
    } else {
        lab::crosscheck::Reference::ByteCounting
    };
    let cases = lab::crosscheck::run_all(reference, !args.quiet)?;
    print!("{}", lab::crosscheck::table(&cases));
    if let Some(path) = &args.json {
        write_file(path, &lab::crosscheck::to_json(&cases))?;
    }
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| !c.passed())
        .map(|c| format!("{} {}", c.scenario.name, c.sink.name()))
        .collect();
    if !args.quiet {
        eprintln!(
            "{} cases in {:.1} s wall time",
            cases.len(),
            started.elapsed().as_secs_f64()
        );
    }
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "ackwise: cross-check outside {:.0}% tolerance: {}",
            lab::crosscheck::TOLERANCE * 100.0,
            failed.join(", ")
        );
        Ok(ExitCode::from(1))
    }
}

/// The gauntlet plan of `lab gauntlet` and `lab report gauntlet`.
fn gauntlet_plan(args: &LabArgs) -> Result<lab::gauntlet::GauntletPlan, LabError> {
    let mut plan = lab::gauntlet::GauntletPlan::new(
        args.seed.unwrap_or(1),
        args.cases.unwrap_or(lab::gauntlet::DEFAULT_CASES),
    );
    if plan.cases == 0 {
        return Err(LabError::Field {
            field: "--cases".into(),
            problem: "must be at least 1".into(),
        });
    }
    if let Some(list) = &args.strategies {
        plan.strategies = Strategy::parse_list(list)?;
    }
    plan.only_case = args.case;
    plan.shard = args.shard.as_deref().map(run::parse_shard).transpose()?;
    plan.jobs = jobs(args)?;
    plan.ns2 = args.ns2;
    plan.ae_redraw = args.ae_redraw;
    plan.progress = !args.quiet;
    plan.pcap_dir = args.pcap.as_ref().map(std::path::PathBuf::from);
    if let Some(r) = args.replicates {
        if r == 0 {
            return Err(LabError::Field {
                field: "--replicates".into(),
                problem: "must be at least 1".into(),
            });
        }
        plan.replicates = r;
    }
    Ok(plan)
}

/// `lab gauntlet`: the summary table on stdout, the records in --json.
fn gauntlet(args: &LabArgs) -> Result<ExitCode, LabError> {
    use lab::gauntlet::{metrics, ns2check};
    if let Some(extra) = args.page.first() {
        return Err(LabError::Field {
            field: extra.clone(),
            problem: "unexpected argument (lab gauntlet takes only flags)".into(),
        });
    }
    let plan = gauntlet_plan(args)?;
    if plan.ns2 && !lab::ns2::ns2_available() {
        return Err(lab::ns2::Ns2Error::NotInstalled.into());
    }
    if let (Some(dir), Some(_)) = (&plan.pcap_dir, plan.only_case) {
        lab::plot::prepare_dir(dir)?;
    }
    let started = std::time::Instant::now();
    let file = lab::gauntlet::run(&plan)?;
    let mut summaries = metrics::summarise(&file.records, &file.strategies);
    summaries.extend(metrics::noise_floor(&file.records));
    print!("{}", metrics::table(&summaries));
    if plan.only_case.is_some() {
        print!("{}", metrics::case_details(&file.records));
    }
    if let Some(ns2) = &file.ns2 {
        print!("{}", ns2check::table(ns2));
    }
    if !args.quiet {
        let runs = file.records.len();
        let wall = started.elapsed().as_secs_f64();
        eprintln!(
            "{runs} runs ({} cases x {} strategies x {} replicates, seed {}) in {wall:.1} s wall time with {} jobs: {:.2} s per run",
            runs / (file.strategies.len() * file.replicates as usize).max(1),
            file.strategies.len(),
            file.replicates,
            file.seed,
            plan.jobs,
            wall * plan.jobs as f64 / runs.max(1) as f64,
        );
    }
    if let Some(path) = &args.json {
        write_file(path, &file.to_json())?;
    }
    if let (Some(dir), false) = (&plan.pcap_dir, args.quiet) {
        eprintln!(
            "every link of every run captured in {} (gauntlet-sSEED-cCASE-REPLICATE-STRATEGY-LINK.pcap)",
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `lab merge PART.json... --json OUT.json`.
fn merge(args: &LabArgs) -> Result<ExitCode, LabError> {
    let Some(out) = &args.json else {
        return Err(LabError::Field {
            field: "lab merge".into(),
            problem: "needs --json OUT.json".into(),
        });
    };
    let parts = args
        .page
        .iter()
        .map(|p| Ok((p.clone(), lab::gauntlet::GauntletFile::read(p)?)))
        .collect::<Result<Vec<_>, LabError>>()?;
    let merged = lab::gauntlet::merge::merge(&parts)?;
    write_file(out, &merged.to_json())?;
    if !args.quiet {
        eprintln!(
            "merged {} parts: {} cases, {} records into {out}",
            parts.len(),
            merged.cases,
            merged.records.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `lab compare BEFORE.json AFTER.json [BEFORE2.json AFTER2.json ...]`.
fn compare(args: &LabArgs) -> Result<ExitCode, LabError> {
    if args.page.is_empty() || !args.page.len().is_multiple_of(2) {
        return Err(LabError::Field {
            field: "lab compare".into(),
            problem: format!(
                "needs pairs of gauntlet files, BEFORE.json AFTER.json [BEFORE2.json AFTER2.json ...] (got {})",
                args.page.len()
            ),
        });
    }
    let files = args
        .page
        .iter()
        .map(|p| lab::gauntlet::GauntletFile::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let runs: Vec<_> = files.chunks(2).map(|p| (&p[0], &p[1])).collect();
    let changes = lab::gauntlet::compare::compare_runs(&runs)?;
    print!("{}", lab::gauntlet::compare::table(&changes));
    Ok(ExitCode::SUCCESS)
}

/// `lab summary A.json [B.json ...]`: gauntlet files of different seeds,
/// every case judged against AE in its own file and the judgements pooled.
fn summary(args: &LabArgs) -> Result<ExitCode, LabError> {
    use lab::gauntlet::metrics;
    if args.page.is_empty() {
        return Err(LabError::Field {
            field: "lab summary".into(),
            problem: "needs gauntlet files, one per seed: A.json [B.json ...]".into(),
        });
    }
    let files = args
        .page
        .iter()
        .map(|p| lab::gauntlet::GauntletFile::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, f) in files.iter().enumerate() {
        if let Some(j) = files[..i].iter().position(|g| g.seed == f.seed) {
            return Err(LabError::Field {
                field: args.page[i].clone(),
                problem: format!(
                    "seed {} again (also {}): pool one file per seed; combine a seed's shards with `lab merge` first",
                    f.seed, args.page[j]
                ),
            });
        }
    }
    let mut strategies: Vec<String> = Vec::new();
    for s in files.iter().flat_map(|f| &f.strategies) {
        if !strategies.contains(s) {
            strategies.push(s.clone());
        }
    }
    let sets: Vec<&[metrics::GauntletRecord]> =
        files.iter().map(|f| f.records.as_slice()).collect();
    let mut summaries = metrics::summarise_pooled(&sets, &strategies);
    summaries.extend(metrics::noise_floor_pooled(&sets));
    print!("{}", metrics::table(&summaries));
    let cases: usize = files
        .iter()
        .map(|f| {
            let mut c: Vec<u64> = f.records.iter().map(|r| r.case).collect();
            c.sort_unstable();
            c.dedup();
            c.len()
        })
        .sum();
    let seeds: Vec<String> = files.iter().map(|f| f.seed.to_string()).collect();
    println!(
        "pooled: {} file(s), seeds {}, {cases} cases",
        files.len(),
        seeds.join(", ")
    );
    for s in summaries
        .iter()
        .filter(|s| s.strategy != metrics::NOISE_FLOOR)
    {
        if let Some(share) = s.share {
            let harm = s.harm.as_ref().map_or(String::new(), |h| {
                format!(
                    "; competitors keep p10 {:.3} of their goodput beside ae, under {} on {} paths",
                    h.competitors[0],
                    lab::gauntlet::harm::HARM_RATIO,
                    h.harmed
                )
            });
            println!(
                "{}: share p10 {:.3}, p90 {:.3} on {} shared paths; more RTOs than ae on {} of them{harm}",
                s.strategy, share[0], share[2], s.shared_paths, s.more_rtos_than_ae_shared
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `lab report gauntlet [--from MERGED.json]`.
fn gauntlet_report(args: &LabArgs) -> Result<ExitCode, LabError> {
    if let Some(extra) = args.page.get(1) {
        return Err(LabError::Field {
            field: extra.clone(),
            problem: "unexpected argument after `report gauntlet`".into(),
        });
    }
    let plan = lab::gauntlet::page::PagePlan {
        from: args.from.clone(),
        run: gauntlet_plan(args)?,
        out_dir: args.out.clone().into(),
    };
    let path = lab::gauntlet::page::write_report(&plan)?;
    println!("wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `--jobs`, by default the number of cores.
fn jobs(args: &LabArgs) -> Result<usize, LabError> {
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        return Err(LabError::Field {
            field: "--jobs".into(),
            problem: "must be at least 1".into(),
        });
    }
    Ok(jobs)
}

fn lab_command(args: LabArgs) -> Result<ExitCode, LabError> {
    let target = args.target.as_deref().unwrap_or("default");
    if target == "list" {
        list();
        return Ok(ExitCode::SUCCESS);
    }
    if target == "bench"
        && (args.flows.is_some()
            || args.rate.is_some()
            || args.seconds.is_some()
            || args.socket_buffer.is_some())
    {
        return bench_point(&args).map(|()| ExitCode::SUCCESS);
    }
    if target == "bench" {
        return bench().map(|()| ExitCode::SUCCESS);
    }
    if target == "crosscheck" {
        return crosscheck(&args);
    }
    if target == "gauntlet" {
        return gauntlet(&args);
    }
    if target == "merge" {
        return merge(&args);
    }
    if target == "compare" {
        return compare(&args);
    }
    if target == "summary" {
        return summary(&args);
    }
    if target == "report" && args.page.first().map(String::as_str) == Some("gauntlet") {
        return gauntlet_report(&args);
    }
    if target == "report" {
        let Some(page) = args.page.first().cloned() else {
            return Err(LabError::Field {
                field: "report".into(),
                problem: format!("name a page: {}", lab::report::PAGES.join(", ")),
            });
        };
        let plan = lab::report::ReportPlan {
            page,
            out_dir: args.out.clone().into(),
            seed: args.seed.unwrap_or(1),
            jobs: jobs(&args)?,
            progress: !args.quiet,
        };
        let path = lab::report::write_report(&plan)?;
        println!("wrote {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(page) = args.page.first() {
        return Err(LabError::Field {
            field: page.clone(),
            problem: "unexpected argument (only `report` takes a page)".into(),
        });
    }
    let mut file_seed = None;
    let preset = lab::load(target, Some(&mut file_seed))?;
    let strategies = match &args.strategies {
        Some(list) => Strategy::parse_list(list)?,
        None => preset.strategies.clone(),
    };
    if strategies.is_empty() {
        return Err(LabError::Field {
            field: "--strategies".into(),
            problem: "names no strategy".into(),
        });
    }
    let shard = args.shard.as_deref().map(run::parse_shard).transpose()?;
    let jobs = jobs(&args)?;
    let sample_interval = args
        .series
        .as_deref()
        .map(|s| {
            lab::units::parse_duration(s).map_err(|problem| LabError::Field {
                field: "--series".into(),
                problem,
            })
        })
        .transpose()?;
    if args.series_csv.is_some() && sample_interval.is_none() {
        return Err(LabError::Field {
            field: "--series-csv".into(),
            problem: "needs --series INTERVAL".into(),
        });
    }
    let plan = RunPlan {
        preset,
        strategies,
        seed: args.seed.or(file_seed).unwrap_or(1),
        jobs,
        shard,
        sample_interval,
        pcap_dir: args.pcap.as_ref().map(std::path::PathBuf::from),
    };
    // Before the sweep, so a bad directory does not cost a long run.
    if let Some(dir) = &args.plot {
        lab::plot::prepare_dir(std::path::Path::new(dir))?;
    }
    if let Some(dir) = &args.pcap {
        lab::plot::prepare_dir(std::path::Path::new(dir))?;
    }
    let started = std::time::Instant::now();
    let records = run::run(&plan, !args.quiet)?;
    print!("{}", run::table(&records));
    if !args.quiet {
        eprintln!(
            "{} runs of `{}` (seed {}) in {:.1} s wall time",
            records.len(),
            plan.preset.name,
            plan.seed,
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(path) = &args.json {
        write_file(path, &run::to_json(&records))?;
    }
    if let Some(path) = &args.csv {
        write_file(path, &run::to_csv(&records))?;
    }
    if let Some(path) = &args.series_csv {
        write_file(path, &run::series_to_csv(&records))?;
    }
    if let Some(dir) = &args.plot {
        let files = lab::plot::write_plots(&records, std::path::Path::new(dir))?;
        if !args.quiet {
            eprintln!("{} plots in {dir}", files.len());
        }
    }
    if let (Some(dir), false) = (&args.pcap, args.quiet) {
        eprintln!("every link of every run captured in {dir} (PRESET-POINT-STRATEGY-LINK.pcap)");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--quic-cert-sha256`: 64 hex digits.
#[cfg(feature = "quic-net")]
fn parse_fingerprint(text: &str) -> Result<[u8; 32], String> {
    transfer::quic::parse_fingerprint(text)
}

/// Without QUIC support the flag cannot be used.
#[cfg(not(feature = "quic-net"))]
fn parse_fingerprint(_text: &str) -> Result<[u8; 32], String> {
    Err("this ackwise was built without feature `quic-net`".into())
}
