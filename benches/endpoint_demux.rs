//! What a busy endpoint's size costs per packet: one bulk transfer over
//! loopback through a socket endpoint (`ackwise::net`) that holds no
//! other connection, then the same transfer again once 10 000 idle
//! connections share both endpoints. Each received datagram is matched to
//! its connection by a hash lookup and each wake-up finds the next timer
//! in an ordered index, so the two figures should be about the same; the
//! ratio printed last is the comparison (peers in the same process, one
//! after the other).
//!
//! The same is measured on small request-response exchanges, where every
//! segment wakes the endpoints up on its own and a cost per wake-up (such
//! as a pass over every connection) is not spread over a batch.
//!
//! `cargo bench --bench endpoint_demux` (`-- --connections N` for another
//! table size, `-- --mib M` for another transfer size). The figures are
//! CPU time of the whole process (both endpoints, sender and receiver)
//! per segment the client sent, and wall time per segment; run it on an
//! idle machine.

use ackwise::connection::Config;
use ackwise::net::{Endpoint, EndpointConfig, Stream};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Idle connections opened at once, so the handshakes do not all wait on
/// one queue.
const CONNECT_BATCH: usize = 500;

struct Args {
    connections: usize,
    mib: u64,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        connections: 10_000,
        mib: 256,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or(format!("{name} needs a number"))
        };
        match a.as_str() {
            "--connections" => out.connections = value("--connections")? as usize,
            "--mib" => out.mib = value("--mib")?.max(1),
            // What cargo bench passes to every bench binary.
            "--bench" => {}
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(out)
}

/// CPU time this process has used (user + system), from `/proc`.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are the 14th and 15th fields (12th and 13th here).
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Duration::from_millis(ticks * 10)
}

fn endpoint_config(connections: usize, server: Option<Config>) -> EndpointConfig {
    let room = connections + 16;
    EndpointConfig {
        server,
        max_connections: room,
        max_half_open: room,
        max_half_open_per_peer: room,
        max_connections_per_peer: room,
        ..EndpointConfig::default()
    }
}

/// One measured transfer: `mib` MiB from `client` to `server`.
struct Measured {
    segments: u64,
    cpu: Duration,
    wall: Duration,
}

async fn transfer(client: &Endpoint, server: &Endpoint, to: SocketAddr, mib: u64) -> Measured {
    let bytes = mib << 20;
    let before = client.stats().segments_sent;
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    let sender = async {
        let mut s = client
            .connect(to, Config::default())
            .await
            .expect("connect");
        let chunk = vec![0x5a; 256 << 10];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            s.write_all(&chunk[..n]).await.expect("write");
            left -= n as u64;
        }
        s.shutdown().await.expect("shutdown");
        s
    };
    let receiver = async {
        let (mut s, _) = server.accept().await.expect("accept");
        let mut buf = vec![0; 256 << 10];
        let mut got = 0u64;
        loop {
            let n = s.read(&mut buf).await.expect("read");
            if n == 0 {
                break;
            }
            got += n as u64;
        }
        assert_eq!(got, bytes, "the transfer arrived whole");
        s
    };
    let (_s, _r) = tokio::join!(sender, receiver);
    Measured {
        segments: client.stats().segments_sent - before,
        cpu: cpu_time() - cpu0,
        wall: wall0.elapsed(),
    }
}

/// Round trips of a small message on one connection: every segment is a
/// wake-up of both drivers of its own, so what a wake-up costs shows here
/// undiluted.
const ROUND_TRIPS: u32 = 5_000;

/// Bytes each way per round trip.
const MESSAGE_BYTES: usize = 64;

/// `ROUND_TRIPS` request-response exchanges from `client` to `server`.
async fn ping_pong(client: &Endpoint, server: &Endpoint, to: SocketAddr) -> Measured {
    let before = client.stats().segments_sent;
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    let (c, s) = tokio::join!(client.connect(to, Config::default()), server.accept());
    let (mut c, (mut s, _)) = (c.expect("connect"), s.expect("accept"));
    let echo = async {
        let mut buf = [0u8; MESSAGE_BYTES];
        for _ in 0..ROUND_TRIPS {
            s.read_exact(&mut buf).await.expect("server read");
            s.write_all(&buf).await.expect("server write");
        }
    };
    let ask = async {
        let mut buf = [0x33u8; MESSAGE_BYTES];
        for _ in 0..ROUND_TRIPS {
            c.write_all(&buf).await.expect("client write");
            c.read_exact(&mut buf).await.expect("client read");
        }
    };
    tokio::join!(echo, ask);
    Measured {
        segments: client.stats().segments_sent - before,
        cpu: cpu_time() - cpu0,
        wall: wall0.elapsed(),
    }
}

/// Opens `n` connections from `client` to `server` and keeps both ends.
async fn open_idle(client: &Endpoint, server: &Endpoint, to: SocketAddr, n: usize) -> Vec<Stream> {
    let mut held = Vec::with_capacity(2 * n);
    let mut left = n;
    while left > 0 {
        let batch = left.min(CONNECT_BATCH);
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..batch {
            let client = client.clone();
            tasks.spawn(async move { client.connect(to, Config::default()).await });
        }
        while let Some(t) = tasks.join_next().await {
            held.push(t.expect("connect task").expect("idle connection"));
        }
        for _ in 0..batch {
            let (s, _) = server.accept().await.expect("accept");
            held.push(s);
        }
        left -= batch;
    }
    held
}

fn line(label: &str, m: &Measured) -> f64 {
    let cpu = m.cpu.as_nanos() as f64 / m.segments.max(1) as f64;
    let wall = m.wall.as_nanos() as f64 / m.segments.max(1) as f64;
    println!(
        "endpoint_demux {label:28} {:8} segments  {cpu:7.0} ns CPU  {wall:7.0} ns wall per segment",
        m.segments
    );
    cpu
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("endpoint_demux: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let n = args.connections;
        let server = Endpoint::with_config(
            "127.0.0.1:0".parse().unwrap(),
            endpoint_config(n, Some(Config::default())),
        )
        .expect("server endpoint");
        let to = server.local_addr();
        let client =
            Endpoint::with_config("127.0.0.1:0".parse().unwrap(), endpoint_config(n, None))
                .expect("client endpoint");
        // A first transfer warms the allocator and the sockets.
        transfer(&client, &server, to, args.mib.min(32)).await;
        let alone = transfer(&client, &server, to, args.mib).await;
        let alone_rt = ping_pong(&client, &server, to).await;
        let t = Instant::now();
        let idle = open_idle(&client, &server, to, n).await;
        println!(
            "endpoint_demux opened {n} idle connections in {:.2} s",
            t.elapsed().as_secs_f64()
        );
        let crowded = transfer(&client, &server, to, args.mib).await;
        let crowded_rt = ping_pong(&client, &server, to).await;
        let a = line("bulk, 1 connection", &alone);
        let c = line(&format!("bulk, 1 + {n} idle"), &crowded);
        println!(
            "endpoint_demux bulk ratio {:.2} (CPU per segment with {n} idle connections over without)",
            c / a
        );
        let a = line("ping-pong, 1 connection", &alone_rt);
        let c = line(&format!("ping-pong, 1 + {n} idle"), &crowded_rt);
        println!(
            "endpoint_demux ping-pong ratio {:.2} (CPU per client segment with {n} idle connections over without)",
            c / a
        );
        drop(idle);
    });
}
