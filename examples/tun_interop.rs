//! ackwise receivers against unmodified Linux senders on a shaped path,
//! beside the kernel's own receiver on an identically shaped path, and
//! ackwise senders against Linux's receiver beside Linux's own senders;
//! writes `docs/results/interop.md` (or `--out FILE`).
//!
//! ```text
//! sudo cargo run --release --example tun_interop -- [--rates 20mbit,100mbit] [--rtts-ms 0,20,80]
//!     [--bytes 8000000] [--limit-ms 50] [--burst-us 250] [--repeat 7] [--out docs/results/interop.md]
//!     [--receivers ae,da,...|none] [--senders 4w-adaptive,...|none]
//! ```
//!
//! `--receivers` and `--senders` run a subset (lab strategy names; `none`
//! skips that half, kernel runs included), for a quicker look at a few
//! paths; the page's command line then names them.
//!
//! Needs root, /dev/net/tun, network namespaces, `ip`, `tc` (tbf,
//! ingress, mirred) and the ifb link type. Downloads: two paths leave a
//! kernel TCP server in the root namespace, each shaped by the same tbf
//! qdisc (rate, queue of `--limit-ms` at that rate, token bucket of
//! `--burst-us` at that rate but at least one full-sized packet, so that
//! packets leave nearly one by one at the rate, as a link serializes them)
//! on the sending side
//! and each given the same added round-trip time (each of `--rtts-ms`,
//! half of it each way; netem is not needed):
//!
//! - through a TUN interface to an ackwise host (`ackwise::tun`), which
//!   downloads with each receiver policy (the delay is the host's delay
//!   line);
//! - through a TUN interface joined by a [`TunBridge`] to a second one in
//!   a network namespace of its own, where a kernel client runs (this
//!   program run again there with `fetch`); the bridge holds each packet
//!   for the same delay.
//!
//! For each of the kernel's congestion controls (set system-wide with
//! `net.ipv4.tcp_congestion_control` for the run, then restored) every
//! receiver downloads `--bytes` `--repeat` times; the table has the median
//! completion (first SYN to last byte, at the receiver) and the median
//! count of the receiver's pure ACKs (ackwise's own counter; for the
//! kernel receiver the sender's `segs_in` less the handshake's and the
//! FIN's), each beside the kernel receiver's.
//!
//! Uploads: a kernel receiver in the root namespace reads `--bytes` from
//! an ackwise sender through the TUN interface, and from a kernel sender
//! in the namespace (this program run there with `push`, with each of
//! Linux's congestion controls, set in the namespace). Both senders'
//! traffic into the root namespace is redirected to an ifb device
//! carrying the same tbf, so that the queue is away from either sender's
//! host. Completion runs from the receiver's accept to its last byte.

use ackwise::connection::State;
use ackwise::lab::Strategy;
use ackwise::net::transfer::strategy_config;
use ackwise::tun::{TunBridge, TunDevice, TunHost};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::process::Command;
use std::time::{Duration, Instant};

const NETNS: &str = "ackw-interop";
/// The bridge's interface in the root namespace, the kernel server's side.
const BRIDGE_ROOT: &str = "ackwib0";
/// The bridge's interface in the namespace, the kernel client's side.
const BRIDGE_NS: &str = "ackwib1";
const TUN: &str = "ackwit0";
const BRIDGE_KERNEL: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 1);
const BRIDGE_CLIENT: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 2);
const TUN_KERNEL: Ipv4Addr = Ipv4Addr::new(10, 214, 0, 1);
const TUN_HOST: Ipv4Addr = Ipv4Addr::new(10, 214, 0, 2);
const IFB: &str = "ackwif0";
/// The ifb device that shapes what reaches the root namespace from the
/// bridge, as [`IFB`] shapes what reaches it from the TUN host.
const IFB_BRIDGE: &str = "ackwif1";
const RECEIVERS: [&str; 7] = [
    "ae",
    "da",
    "smart",
    "smart-minrtt",
    "smart-minrtt+span",
    "smart-minrtt+span+floor",
    "acc",
];
const SENDERS: [&str; 5] = [Strategy::DEFAULT_NAME, "4w-adaptive", "4w", "da", "ae"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("fetch") {
        // The kernel client, inside the namespace.
        let addr: SocketAddrV4 = args[2].parse().expect("fetch ADDR BYTES");
        let want: u64 = args[3].parse().expect("fetch ADDR BYTES");
        let started = Instant::now();
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        // The client closes first, once it has everything, so that the
        // server's socket waits in CLOSE-WAIT with its counters readable.
        while total < want {
            let n = s.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        println!("{} {}", started.elapsed().as_secs_f64(), total);
        return;
    }
    if args.get(1).map(String::as_str) == Some("push") {
        // A kernel sender, inside the namespace.
        let addr: SocketAddrV4 = args[2].parse().expect("push ADDR BYTES");
        let bytes: usize = args[3].parse().expect("push ADDR BYTES");
        let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.write_all(&data).expect("write");
        s.shutdown(std::net::Shutdown::Write).expect("shutdown");
        let mut sink = [0u8; 64];
        while s.read(&mut sink).unwrap_or(0) > 0 {}
        return;
    }
    if let Err(e) = run(&args[1..]) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn flag<'a>(args: &'a [String], name: &str, default: &'a str) -> &'a str {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, String::as_str)
}

/// The lab strategies given with `name` as a comma-separated list
/// (`default` when absent, none for `none`), by their canonical names,
/// which the page's rows and verdicts match on.
fn strategy_list(args: &[String], name: &str, default: &[&str]) -> Result<Vec<String>, String> {
    match flag(args, name, "") {
        "" => Ok(default.iter().map(|s| s.to_string()).collect()),
        "none" => Ok(Vec::new()),
        given => Ok(Strategy::parse_list(given)
            .map_err(|e| format!("{name}: {e}"))?
            .into_iter()
            .map(Strategy::name)
            .collect()),
    }
}

fn sh(cmd: &str) -> Result<String, String> {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Removes what a previous run left, quietly.
fn cleanup() {
    let _ = sh(&format!("ip netns del {NETNS} 2>/dev/null"));
    let _ = sh(&format!("ip link del {IFB} 2>/dev/null"));
    let _ = sh(&format!("ip link del {IFB_BRIDGE} 2>/dev/null"));
}

/// The kernel-to-kernel path: a TUN interface here, one in the
/// namespace, joined with `one_way` of delay each way.
fn bridge(one_way: Duration) -> Result<TunBridge, String> {
    let here = TunDevice::create(BRIDGE_ROOT, BRIDGE_KERNEL, 30).map_err(|e| e.to_string())?;
    let there = TunDevice::create_in_netns(BRIDGE_NS, NETNS, BRIDGE_CLIENT, 30)
        .map_err(|e| e.to_string())?;
    Ok(TunBridge::start(here, there, one_way))
}

struct Row {
    rtt_ms: u32,
    rate: String,
    cc: String,
    receiver: String,
    completion_s: f64,
    acks: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs one measurement `repeat` times: the medians of its completion
/// time and its ACK count.
fn medians(
    repeat: usize,
    mut run: impl FnMut() -> Result<(f64, f64), String>,
) -> Result<(f64, f64), String> {
    let (mut times, mut acks) = (Vec::new(), Vec::new());
    for _ in 0..repeat {
        let (t, a) = run()?;
        times.push(t);
        acks.push(a);
    }
    Ok((median(times), median(acks)))
}

fn run(args: &[String]) -> Result<(), String> {
    let rates: Vec<String> = flag(args, "--rates", "20mbit,100mbit")
        .split(',')
        .map(str::to_string)
        .collect();
    let bytes: usize = flag(args, "--bytes", "8000000")
        .parse()
        .map_err(|_| "--bytes: a number".to_string())?;
    let rtts_ms: Vec<u32> = flag(args, "--rtts-ms", "0,20,80")
        .split(',')
        .map(|v| {
            v.parse()
                .map_err(|_| format!("--rtts-ms: `{v}` is not a number of ms"))
        })
        .collect::<Result<_, _>>()?;
    let burst_us: u64 = flag(args, "--burst-us", "250")
        .parse()
        .map_err(|_| "--burst-us: a number of microseconds".to_string())?;
    let limit_ms: u32 = flag(args, "--limit-ms", "50")
        .parse()
        .map_err(|_| "--limit-ms: a number".to_string())?;
    let repeat: usize = flag(args, "--repeat", "7")
        .parse()
        .map_err(|_| "--repeat: a number".to_string())?;
    let out = flag(args, "--out", "docs/results/interop.md").to_string();
    let receivers = strategy_list(args, "--receivers", &RECEIVERS)?;
    let senders = strategy_list(args, "--senders", &SENDERS)?;
    cleanup();
    let dev = TunDevice::create(TUN, TUN_KERNEL, 30).map_err(|e| e.to_string())?;
    let mut host = TunHost::new(dev, TUN_HOST);
    // The bucket: `burst_us` at the rate, at least one packet of the
    // TUN's 1500-byte MTU with its link header.
    let tbf = |dev: &str, rate: &str| -> Result<String, String> {
        let bps = ackwise::lab::units::parse_rate(rate)?;
        let burst = (bps * burst_us / 8_000_000).max(1_600);
        Ok(format!(
            "tc qdisc replace dev {dev} root tbf rate {rate} burst {burst} latency {limit_ms}ms"
        ))
    };
    // The kernel sends TUN interfaces wire-sized segments (no offloads
    // without a virtio header), so both receivers see and acknowledge the
    // same segments.
    for cmd in [
        format!("ip netns add {NETNS}"),
        format!("ip netns exec {NETNS} ip link set lo up"),
        // What the ackwise host sends into the kernel goes through one
        // ifb device and its tbf; what the namespace sends, through the
        // other (its ingress redirect is set up with each bridge below).
        format!("ip link add {IFB} type ifb"),
        format!("ip link set {IFB} up"),
        format!("ip link add {IFB_BRIDGE} type ifb"),
        format!("ip link set {IFB_BRIDGE} up"),
        format!("tc qdisc add dev {TUN} handle ffff: ingress"),
        format!("tc filter add dev {TUN} parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev {IFB}"),
    ] {
        sh(&cmd)?;
    }
    let old_cc = sh("sysctl -n net.ipv4.tcp_congestion_control")?
        .trim()
        .to_string();
    let available = sh("sysctl -n net.ipv4.tcp_available_congestion_control")?;
    let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let mut rows = Vec::new();
    let mut uploads = Vec::new();
    let result = (|| -> Result<(), String> {
        for &rtt_ms in &rtts_ms {
            let one_way = Duration::from_micros(u64::from(rtt_ms) * 500);
            host.set_delay(one_way);
            let bridge = bridge(one_way)?;
            // What the namespace sends is shaped where it enters the root
            // namespace, as the TUN host's is: a qdisc on the sending
            // host's own interface would hold the kernel's TCP back
            // before it ever dropped (TCP Small Queues and local
            // congestion), which no sender gets from a router.
            for cmd in [
                format!("tc qdisc add dev {BRIDGE_ROOT} handle ffff: ingress"),
                format!("tc filter add dev {BRIDGE_ROOT} parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev {IFB_BRIDGE}"),
            ] {
                sh(&cmd)?;
            }
            for rate in &rates {
                sh(&tbf(BRIDGE_ROOT, rate)?)?;
                sh(&tbf(TUN, rate)?)?;
                sh(&tbf(IFB, rate)?)?;
                sh(&tbf(IFB_BRIDGE, rate)?)?;
                for cc in ["cubic", "reno", "bbr"] {
                    if !available.split_whitespace().any(|a| a == cc) {
                        eprintln!("{cc}: not available here, skipped");
                        continue;
                    }
                    // Each network namespace keeps its own choice, copied
                    // from the root's when it was made: the kernel
                    // sender of the uploads runs in the namespace.
                    sh(&format!(
                        "sysctl -q -w net.ipv4.tcp_congestion_control={cc}"
                    ))?;
                    sh(&format!(
                        "ip netns exec {NETNS} sysctl -q -w net.ipv4.tcp_congestion_control={cc}"
                    ))?;
                    if !receivers.is_empty() {
                        let (completion_s, acks) = medians(repeat, || kernel_receiver(&data))?;
                        rows.push(Row {
                            rtt_ms,
                            rate: rate.clone(),
                            cc: cc.into(),
                            receiver: "kernel".into(),
                            completion_s,
                            acks,
                        });
                        eprintln!(
                            "{rtt_ms} ms {rate} {cc} kernel: {completion_s:.3} s, {acks:.0} ACKs"
                        );
                    }
                    if !senders.is_empty() {
                        let times = (0..repeat)
                            .map(|_| kernel_sender(&data))
                            .collect::<Result<Vec<_>, _>>()?;
                        uploads.push(Row {
                            rtt_ms,
                            rate: rate.clone(),
                            cc: cc.into(),
                            receiver: format!("kernel {cc}"),
                            completion_s: median(times),
                            acks: 0.0,
                        });
                        eprintln!(
                            "{rtt_ms} ms {rate} {cc} kernel upload: {:.3} s",
                            last_completion(&uploads)
                        );
                    }
                    for name in receivers.iter().map(String::as_str) {
                        let (completion_s, acks) =
                            medians(repeat, || ackwise_receiver(&mut host, name, &data))?;
                        rows.push(Row {
                            rtt_ms,
                            rate: rate.clone(),
                            cc: cc.into(),
                            receiver: name.into(),
                            completion_s,
                            acks,
                        });
                        let r = rows.last().expect("just pushed");
                        eprintln!(
                            "{rtt_ms} ms {rate} {cc} {name}: {:.3} s, {:.0} ACKs",
                            r.completion_s, r.acks
                        );
                    }
                }
                for name in senders.iter().map(String::as_str) {
                    let times = (0..repeat)
                        .map(|_| ackwise_sender(&mut host, name, &data))
                        .collect::<Result<Vec<_>, _>>()?;
                    uploads.push(Row {
                        rtt_ms,
                        rate: rate.clone(),
                        cc: String::new(),
                        receiver: name.into(),
                        completion_s: median(times),
                        acks: 0.0,
                    });
                    eprintln!(
                        "{rtt_ms} ms {rate} upload {name}: {:.3} s",
                        last_completion(&uploads)
                    );
                }
            }
            let carried = bridge.stop().map_err(|e| format!("the bridge: {e}"))?;
            eprintln!("{rtt_ms} ms: the bridge carried {carried:?}");
        }
        Ok(())
    })();
    let _ = sh(&format!(
        "sysctl -q -w net.ipv4.tcp_congestion_control={old_cc}"
    ));
    cleanup();
    result?;
    let rtts = rtts_ms
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let shaper = format!("--limit-ms {limit_ms} --burst-us {burst_us}");
    let mut subset = String::new();
    for (name, list, all) in [
        ("--receivers", &receivers, &RECEIVERS[..]),
        ("--senders", &senders, &SENDERS[..]),
    ] {
        if list.iter().map(String::as_str).ne(all.iter().copied()) {
            let named = if list.is_empty() {
                "none".to_string()
            } else {
                list.join(",")
            };
            subset.push_str(&format!(" {name} {named}"));
        }
    }
    let mut page = page(
        &rows,
        &rates.join(","),
        &rtts,
        bytes,
        &shaper,
        &subset,
        repeat,
    );
    if !uploads.is_empty() {
        page.push_str(&uploads_section(&uploads, bytes));
    }
    std::fs::write(&out, page).map_err(|e| format!("{out}: {e}"))?;
    eprintln!("wrote {out}");
    Ok(())
}

/// The kernel server of one download: accepts one client, sends it
/// `data` and waits for its FIN. With `keep_open` the socket comes back
/// still open (for `ss` to read); otherwise it closes at once, which the
/// client may be waiting for.
fn serve(
    listener: TcpListener,
    data: &[u8],
    keep_open: bool,
) -> std::thread::JoinHandle<Result<Option<std::net::TcpStream>, String>> {
    let served = data.to_vec();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().map_err(|e| e.to_string())?;
        s.write_all(&served).map_err(|e| e.to_string())?;
        let mut sink = [0u8; 64];
        while s.read(&mut sink).map_err(|e| e.to_string())? > 0 {}
        Ok(keep_open.then_some(s))
    })
}

/// One download by the kernel client in the namespace: (completion s,
/// the receiver's pure ACKs).
fn kernel_receiver(data: &[u8]) -> Result<(f64, f64), String> {
    let listener = TcpListener::bind((BRIDGE_KERNEL, 0)).map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let server = serve(listener, data, true);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = sh(&format!(
        "ip netns exec {NETNS} {} fetch {BRIDGE_KERNEL}:{port} {}",
        exe.display(),
        data.len()
    ))?;
    // Held open (in CLOSE-WAIT) while `ss` reads its counters.
    let _socket = server.join().map_err(|_| "server thread failed")??;
    // The client read everything and closed: what the sender's socket took
    // in is the receiver's ACKs, plus the handshake's ACK and the FIN.
    let ss = sh(&format!("ss -tinH state close-wait '( sport = :{port} )'"))?;
    let acks = ss
        .split_whitespace()
        .find_map(|w| w.strip_prefix("segs_in:"))
        .and_then(|n| n.parse::<f64>().ok())
        .ok_or_else(|| format!("no segs_in in `ss` output: {ss}"))?
        - 2.0;
    let mut parts = out.split_whitespace();
    let secs: f64 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("bad fetch output")?;
    let got: usize = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("bad fetch output")?;
    if got != data.len() {
        return Err(format!(
            "the kernel client got {got} of {} bytes",
            data.len()
        ));
    }
    Ok((secs, acks))
}

/// One download by the ackwise host with receiver policy `name`.
fn ackwise_receiver(host: &mut TunHost, name: &str, data: &[u8]) -> Result<(f64, f64), String> {
    let listener = TcpListener::bind((TUN_KERNEL, 0)).map_err(|e| e.to_string())?;
    let remote = match listener.local_addr().map_err(|e| e.to_string())? {
        std::net::SocketAddr::V4(a) => a,
        other => return Err(format!("{other}: not IPv4")),
    };
    let server = serve(listener, data, false);
    let strategy: Strategy = name.parse().map_err(|e| format!("{name}: {e}"))?;
    let started = Instant::now();
    let mut conn = host
        .connect(remote, strategy_config(strategy, 8_960))
        .map_err(|e| e.to_string())?;
    let mut got = 0usize;
    let mut finished: Option<f64> = None;
    let mut buf = vec![0u8; 1 << 16];
    host.run(&mut conn, remote, Duration::from_secs(600), |c| {
        loop {
            let n = c.read(&mut buf);
            if n == 0 {
                break;
            }
            got += n;
        }
        if got == data.len() && finished.is_none() {
            // Everything is in: close first, as the kernel client does.
            finished = Some(started.elapsed().as_secs_f64());
            c.close();
        }
        finished.is_some() && matches!(c.state(), State::TimeWait | State::Closed)
    })
    .map_err(|e| format!("{name}: {e}"))?;
    server.join().map_err(|_| "server thread failed")??;
    if got != data.len() {
        return Err(format!("{name}: got {got} of {} bytes", data.len()));
    }
    Ok((
        finished.unwrap_or_else(|| started.elapsed().as_secs_f64()),
        conn.stats().pure_acks_sent as f64,
    ))
}

/// The completion of the row just pushed, for the progress line.
fn last_completion(rows: &[Row]) -> f64 {
    rows.last().map_or(0.0, |r| r.completion_s)
}

/// The kernel receiver's side of one upload: accepts one sender, reads to
/// its FIN, checks the bytes; seconds from the accept to the last byte.
fn receive(listener: TcpListener, data: &[u8]) -> std::thread::JoinHandle<Result<f64, String>> {
    let want = data.to_vec();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().map_err(|e| e.to_string())?;
        let started = Instant::now();
        let mut got = Vec::with_capacity(want.len());
        s.read_to_end(&mut got).map_err(|e| e.to_string())?;
        let secs = started.elapsed().as_secs_f64();
        if got != want {
            return Err(format!(
                "the kernel receiver got {} bytes, or different",
                got.len()
            ));
        }
        Ok(secs)
    })
}

/// One upload from a kernel sender in the namespace to a kernel receiver
/// in the root namespace, through the shaped bridge.
fn kernel_sender(data: &[u8]) -> Result<f64, String> {
    let listener = TcpListener::bind((BRIDGE_KERNEL, 0)).map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let receiver = receive(listener, data);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    sh(&format!(
        "ip netns exec {NETNS} {} push {BRIDGE_KERNEL}:{port} {}",
        exe.display(),
        data.len()
    ))?;
    receiver.join().map_err(|_| "receiver thread failed")?
}

/// One upload from the ackwise host with strategy `name` to a kernel
/// receiver, through the TUN interface and the ifb's tbf.
fn ackwise_sender(host: &mut TunHost, name: &str, data: &[u8]) -> Result<f64, String> {
    let listener = TcpListener::bind((TUN_KERNEL, 0)).map_err(|e| e.to_string())?;
    let remote = match listener.local_addr().map_err(|e| e.to_string())? {
        std::net::SocketAddr::V4(a) => a,
        other => return Err(format!("{other}: not IPv4")),
    };
    let receiver = receive(listener, data);
    let strategy: Strategy = name.parse().map_err(|e| format!("{name}: {e}"))?;
    let mut conn = host
        .connect(remote, strategy_config(strategy, 8_960))
        .map_err(|e| e.to_string())?;
    let mut written = 0usize;
    let mut closed = false;
    host.run(&mut conn, remote, Duration::from_secs(600), |c| {
        if c.is_established() {
            while written < data.len() {
                let n = c.write(&data[written..]);
                if n == 0 {
                    break;
                }
                written += n;
            }
            if written == data.len() && !closed {
                c.close();
                closed = true;
            }
        }
        while c.poll_event().is_some() {}
        closed && matches!(c.state(), State::TimeWait | State::Closed)
    })
    .map_err(|e| format!("{name}: {e}"))?;
    receiver.join().map_err(|_| "receiver thread failed")?
}

/// The uploads' table and the target's verdict.
fn uploads_section(uploads: &[Row], bytes: usize) -> String {
    let mut s = String::from(
        "
## ackwise senders against Linux's receiver

",
    );
    s.push_str(&format!(
        "A kernel receiver reads {bytes} bytes from each sender through the same tbf and the same added round-trip time: each \
         sender's packets reach the kernel through an ifb device carrying the qdisc where they enter the root namespace (from the TUN \
         host, delayed by its delay line; from a kernel sender in the namespace, delayed by the bridge), so both meet the queue away \
         from their own host, as at a router. (With the qdisc on the kernel sender's own interface, TCP Small Queues and the local \
         drop signal held the kernel's TCP back before the queue overflowed: it retransmitted nothing at 80 ms and 20 Mbit/s, where \
         every ackwise sender lost its slow-start overshoot.) The kernel sender's congestion control is set in its namespace, which \
         keeps its own. Linux's receiver ignores ackwise's ACK-request option, so every ackwise sender runs on the kernel's own ACKs; \
         ackwise's senders all grow their windows as Reno does, so the kernel's `reno` is the like-for-like column. Completion runs \
         from the receiver's accept to its last byte; medians.\n\n"
    ));
    s.push_str(
        "| added RTT ms | rate | sender | completion s | vs fastest kernel sender | vs kernel reno |\n|---|---|---|---|---|---|\n",
    );
    let best_kernel = |r: &Row| {
        uploads
            .iter()
            .filter(|k| {
                k.rtt_ms == r.rtt_ms && k.rate == r.rate && k.receiver.starts_with("kernel")
            })
            .map(|k| k.completion_s)
            .fold(f64::INFINITY, f64::min)
    };
    let kernel_reno = |r: &Row| {
        uploads
            .iter()
            .find(|k| k.rtt_ms == r.rtt_ms && k.rate == r.rate && k.receiver == "kernel reno")
            .map_or(f64::NAN, |k| k.completion_s)
    };
    for r in uploads {
        s.push_str(&format!(
            "| {} | {} | `{}` | {:.3} | {:.3} | {:.3} |\n",
            r.rtt_ms,
            r.rate,
            r.receiver,
            r.completion_s,
            r.completion_s / best_kernel(r),
            r.completion_s / kernel_reno(r)
        ));
    }
    let verdict = |reference: &dyn Fn(&Row) -> f64| {
        let slow: Vec<String> = uploads
            .iter()
            .filter(|r| !r.receiver.starts_with("kernel") && r.completion_s > 1.10 * reference(r))
            .map(|r| {
                format!(
                    "`{}` at {} and {} ms ({:.3}x)",
                    r.receiver,
                    r.rate,
                    r.rtt_ms,
                    r.completion_s / reference(r)
                )
            })
            .collect();
        if slow.is_empty() {
            "met on every path".to_string()
        } else {
            format!("missed by {}", slow.join(", "))
        }
    };
    s.push_str(&format!(
        "\nTarget (issue 15): an ackwise sender is never more than 10% slower than a kernel sender to the same receiver. \
         Against the fastest of the kernel's senders: {}. Against the kernel's Reno: {}.\n",
        verdict(&best_kernel),
        verdict(&kernel_reno)
    ));
    s
}

/// The kernel receiver's row on the same path as `r`.
fn kernel_row<'a>(rows: &'a [Row], r: &Row) -> &'a Row {
    rows.iter()
        .find(|k| {
            k.rtt_ms == r.rtt_ms && k.rate == r.rate && k.cc == r.cc && k.receiver == "kernel"
        })
        .expect("the kernel row comes first")
}

/// The page; `shaper` holds the tbf's flags, `subset` the command's
/// `--receivers` and `--senders` when they were given.
fn page(
    rows: &[Row],
    rates: &str,
    rtts: &str,
    bytes: usize,
    shaper: &str,
    subset: &str,
    repeat: usize,
) -> String {
    let mut s = String::new();
    s.push_str("# ackwise receivers against Linux senders\n\n");
    s.push_str(&format!(
        "Generated by `sudo cargo run --release --example tun_interop -- --rates {rates} --rtts-ms {rtts} --bytes {bytes} {shaper}{subset} \
         --repeat {repeat}` on one machine: a kernel TCP server sends {bytes} bytes through a tbf qdisc (each rate; `{shaper}`: the queue's \
         length in time at that rate, and the token bucket, at least one packet, so that packets leave nearly one by one at the rate, as \
         a link serializes them; with a bucket of 15 kB, packets left in clumps of ten and the smartacking receivers' arrival spacing collapsed to the \
         host's own processing time) to each receiver, {repeat} times; medians. The ackwise receivers are behind a TUN interface (`ackwise::tun`); the kernel receiver is \
         in a network namespace, reached through a TUN interface on each side joined by `ackwise::tun::TunBridge`, with the same qdisc. \
         On both paths the other direction (the receivers' ACKs here, the data of the uploads below) has the same tbf on an ifb device \
         where it enters the root namespace. \
         Both paths get the same added round-trip time (each of {rtts} ms, half each way: the ackwise host's delay line, the bridge's for \
         the kernel's path; netem is not needed), on top of the queue's. The kernel receiver's ACKs are its sender's `segs_in` less the \
         handshake's ACK and the FIN.\n\n",
    ));
    if rows.is_empty() {
        // `--receivers none`: the uploads alone.
        return s;
    }
    s.push_str("| added RTT ms | rate | sender cc | receiver | completion s | vs kernel | receiver ACKs | vs kernel |\n|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let kernel = kernel_row(rows, r);
        s.push_str(&format!(
            "| {} | {} | {} | `{}` | {:.3} | {:.3} | {:.0} | {:.3} |\n",
            r.rtt_ms,
            r.rate,
            r.cc,
            r.receiver,
            r.completion_s,
            r.completion_s / kernel.completion_s,
            r.acks,
            r.acks / kernel.acks.max(1.0)
        ));
    }
    s.push_str(
        "\nTarget (issue 15): a smartacking receiver sends at most half the kernel receiver's ACKs with completion within 5% of it.\n\n",
    );
    for smart in [
        "smart",
        "smart-minrtt",
        "smart-minrtt+span",
        "smart-minrtt+span+floor",
    ] {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.receiver == smart).collect();
        if mine.is_empty() {
            continue;
        }
        let met: Vec<String> = mine
            .iter()
            .filter(|r| {
                let k = kernel_row(rows, r);
                r.acks <= 0.5 * k.acks && r.completion_s <= 1.05 * k.completion_s
            })
            .map(|r| format!("{} ms {} {}", r.rtt_ms, r.rate, r.cc))
            .collect();
        s.push_str(&format!(
            "- `{smart}` meets it on {} of {} paths{}.\n",
            met.len(),
            mine.len(),
            if met.is_empty() {
                String::new()
            } else {
                format!(" ({})", met.join(", "))
            }
        ));
    }
    s
}
