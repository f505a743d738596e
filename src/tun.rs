//! A TUN carrier (Linux): ackwise connections exchange real IP/TCP
//! packets with the host's own TCP stack through a TUN interface.
//!
//! [`TunDevice`] opens a TUN interface (no packet information header: each
//! read or write is one IP packet). [`TunHost`] is one userspace TCP host
//! behind it, with an address of its own on the interface's subnet: it
//! drives sans-IO [`Connection`]s with real time, frames each segment in
//! IPv4, or IPv6 once both sides have an IPv6 address
//! ([`TunDevice::add_ipv6`], [`TunHost::set_ipv6`]), with the checksums
//! the kernel checks ([`crate::wire::ip`]), takes
//! the segments addressed to it out of what the kernel sends, and leaves
//! everything else (the kernel's IPv6 router solicitations, say) alone.
//! The connection's MSS is capped by the interface MTU, and ECN bits pass
//! both ways.
//!
//! [`TunDevice::create`] gives the kernel its address on the interface
//! and brings it up; [`TunDevice::create_in_netns`] does so in another
//! network namespace, whose kernel stack the host then talks to. The
//! device lives as long as the [`TunDevice`] (it is not persistent).
//! [`TunBridge`] joins two interfaces with a delay line, a link between
//! two kernel stacks with the propagation delay a [`TunHost`] can add to
//! its own path.
//!
//!
//! ```no_run
//! use ackwise::connection::Config;
//! use ackwise::tun::{TunDevice, TunHost};
//! use std::net::{Ipv4Addr, SocketAddrV4};
//! use std::time::Duration;
//!
//! // The kernel's side of the link is 10.77.0.1/30 (run as root); a
//! // server listens there, e.g. python3 -m http.server 8080 --bind 10.77.0.1.
//! let dev = TunDevice::create("ackw0", Ipv4Addr::new(10, 77, 0, 1), 30)?;
//! let mut host = TunHost::new(dev, Ipv4Addr::new(10, 77, 0, 2));
//! let remote = SocketAddrV4::new(Ipv4Addr::new(10, 77, 0, 1), 8080);
//! let mut conn = host.connect(remote, Config::default())?;
//! let mut got = Vec::new();
//! let mut sent = false;
//! host.run(&mut conn, remote, Duration::from_secs(10), |c| {
//!     if c.is_established() && !sent {
//!         sent = c.write(b"GET / HTTP/1.0\r\n\r\n") > 0;
//!     }
//!     let mut buf = [0u8; 4096];
//!     loop {
//!         let n = c.read(&mut buf);
//!         if n == 0 { break; }
//!         got.extend_from_slice(&buf[..n]);
//!     }
//!     if c.peer_closed() { c.close(); }
//!     c.is_closed()
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::connection::{Config, Connection};
use crate::time::Instant;
use crate::wire::ip;
use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;
use tun_device::AbstractDevice;

/// Longest interface name, bytes (the kernel's IFNAMSIZ less the NUL).
pub const MAX_NAME_BYTES: usize = 15;
/// Longest wait for a packet before the host looks at its timers again.
const POLL_CAP: Duration = Duration::from_millis(50);
/// Bytes of IPv4 and TCP header without options, taken off the MTU for
/// the MSS.
const HEADERS_BYTES: u32 = 40;
/// The same over IPv6 (its fixed header is 40 bytes).
const HEADERS_BYTES_V6: u32 = 60;

/// An open TUN interface (through the `tun` crate).
pub struct TunDevice {
    dev: tun_device::Device,
    name: String,
    /// The network namespace the interface was moved into, if any
    /// ([`create_in_netns`](Self::create_in_netns)).
    netns: Option<String>,
    /// The MTU when the interface left this namespace: the `tun` crate
    /// asks for it by name, which only resolves here.
    moved_mtu: Option<u32>,
}

impl std::fmt::Debug for TunDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TunDevice({})", self.name)
    }
}

impl TunDevice {
    /// Creates the TUN interface `name` (at most [`MAX_NAME_BYTES`]
    /// bytes) with the kernel's address `kernel` on a subnet of
    /// `prefix_len` bits, and brings it up. Needs CAP_NET_ADMIN and
    /// `/dev/net/tun`; the error says what failed.
    pub fn create(name: &str, kernel: Ipv4Addr, prefix_len: u8) -> io::Result<TunDevice> {
        check_name_and_prefix(name, prefix_len)?;
        let mask = Ipv4Addr::from(u32::MAX << (32 - u32::from(prefix_len)));
        let mut config = tun_device::Configuration::default();
        config.tun_name(name).address(kernel).netmask(mask).up();
        Self::open(name, &config)
    }

    /// Creates the TUN interface `name` and moves it into the existing
    /// network namespace `netns` (as `ip netns add` names them), where the
    /// kernel gets the address `kernel` on a subnet of `prefix_len` bits
    /// and the interface is brought up. This process keeps the device, so
    /// a [`TunHost`] here talks to the kernel stack of that namespace:
    /// its sockets, routes and qdiscs, none of this one's. Needs the `ip`
    /// tool (iproute2) besides what [`create`](Self::create) needs.
    ///
    /// The interface never carries an address in this namespace, so
    /// nothing here routes to its subnet, even for a moment.
    pub fn create_in_netns(
        name: &str,
        netns: &str,
        kernel: Ipv4Addr,
        prefix_len: u8,
    ) -> io::Result<TunDevice> {
        check_name_and_prefix(name, prefix_len)?;
        let mut config = tun_device::Configuration::default();
        config.tun_name(name);
        let mut dev = Self::open(name, &config)?;
        // Asked before the move: afterwards the name no longer resolves
        // here.
        let mtu = dev.mtu()?;
        let name = dev.name.clone();
        ip(&["link", "set", &name, "netns", netns])?;
        dev.netns = Some(netns.to_string());
        dev.moved_mtu = Some(mtu);
        let address = format!("{kernel}/{prefix_len}");
        ip(&["-n", netns, "addr", "add", &address, "dev", &name])?;
        ip(&["-n", netns, "link", "set", &name, "up"])?;
        Ok(dev)
    }

    fn open(name: &str, config: &tun_device::Configuration) -> io::Result<TunDevice> {
        let dev = tun_device::create(config).map_err(|e| {
            io::Error::other(format!(
                "creating TUN interface {name}: {e} (needs /dev/net/tun and CAP_NET_ADMIN)"
            ))
        })?;
        let name = dev.tun_name().unwrap_or_else(|_| name.to_string());
        Ok(TunDevice {
            dev,
            name,
            netns: None,
            moved_mtu: None,
        })
    }

    /// Gives the kernel the IPv6 address `kernel` on a subnet of
    /// `prefix_len` bits too (without duplicate address detection, so it
    /// is usable at once). The `tun` crate sets IPv4 addresses only, so
    /// this runs `ip -6 addr add`; it needs the `ip` tool (iproute2) and
    /// IPv6 enabled on the interface.
    pub fn add_ipv6(&self, kernel: Ipv6Addr, prefix_len: u8) -> io::Result<()> {
        if !(1..=126).contains(&prefix_len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("IPv6 prefix length {prefix_len}: 1 to 126 (room for two hosts)"),
            ));
        }
        let address = format!("{kernel}/{prefix_len}");
        let mut args = Vec::new();
        if let Some(ns) = &self.netns {
            args.extend(["-n", ns.as_str()]);
        }
        args.extend(["-6", "addr", "add", &address, "dev", &self.name, "nodad"]);
        ip(&args)
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The network namespace the interface lives in, when not this
    /// process's ([`create_in_netns`](Self::create_in_netns)).
    pub fn netns(&self) -> Option<&str> {
        self.netns.as_deref()
    }

    /// The interface's MTU, bytes (for an interface in another
    /// namespace, the MTU it had when it moved there).
    pub fn mtu(&self) -> io::Result<u32> {
        if let Some(mtu) = self.moved_mtu {
            return Ok(mtu);
        }
        self.dev
            .mtu()
            .map(u32::from)
            .map_err(|e| io::Error::other(format!("MTU of {}: {e}", self.name)))
    }

    /// Waits up to `timeout` for a packet and reads it into `buf`;
    /// `None` when none came.
    pub fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        match self.dev.recv_timeout(buf, timeout) {
            Ok(n) => Ok(Some(n)),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Writes one IP packet.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        self.dev.send(packet).map(|_| ())
    }
}

/// The interface name fits the kernel's limit and the subnet has room for
/// two hosts.
fn check_name_and_prefix(name: &str, prefix_len: u8) -> io::Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("TUN interface name `{name}`: 1 to {MAX_NAME_BYTES} bytes"),
        ));
    }
    if !(1..=30).contains(&prefix_len) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("prefix length {prefix_len}: 1 to 30 (room for two hosts)"),
        ));
    }
    Ok(())
}

/// Runs `ip ARGS`; a failure names the command and what `ip` said.
fn ip(args: &[&str]) -> io::Result<()> {
    let out = std::process::Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| io::Error::other(format!("running `ip`: {e} (needs iproute2)")))?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Counters of a [`TunHost`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TunStats {
    /// Packets written to the interface.
    pub packets_sent: u64,
    /// Packets read that carried a segment of a driven connection.
    pub packets_received: u64,
    /// Packets read and left alone: other protocols or addresses, or
    /// ones that failed [`ip::unframe`]'s checks.
    pub packets_ignored: u64,
}

/// One userspace TCP host at `local` behind a TUN interface.
#[derive(Debug)]
pub struct TunHost {
    dev: TunDevice,
    local: Ipv4Addr,
    local_v6: Option<Ipv6Addr>,
    epoch: std::time::Instant,
    ident: u16,
    next_port: u16,
    frame: Vec<u8>,
    segment: Vec<u8>,
    rx: Vec<u8>,
    stats: TunStats,
    capture: Option<crate::pcap::PcapWriter<std::io::BufWriter<std::fs::File>>>,
    /// One-way propagation delay added to each direction.
    delay: Duration,
    /// Framed packets waiting for their time to reach the kernel.
    outbound: DelayLine,
    /// Packets read from the kernel, waiting for their time to reach the
    /// connection.
    inbound: DelayLine,
}

impl TunHost {
    /// A host with address `local` on `dev`'s subnet (not the kernel's
    /// own address on the interface).
    pub fn new(dev: TunDevice, local: Ipv4Addr) -> TunHost {
        let epoch = std::time::Instant::now();
        let seed = wall_nanos();
        TunHost {
            dev,
            local,
            local_v6: None,
            epoch,
            ident: 0,
            next_port: 49_152 + (seed % 16_000) as u16,
            frame: Vec::with_capacity(65_536),
            segment: vec![0; 65_536],
            rx: vec![0; 65_536],
            stats: TunStats::default(),
            capture: None,
            delay: Duration::ZERO,
            outbound: DelayLine::default(),
            inbound: DelayLine::default(),
        }
    }

    /// Gives the host the IPv6 address `local` as well, on the subnet of
    /// the kernel's ([`TunDevice::add_ipv6`]): connections to IPv6 peers
    /// then go out from it, and SYNs to it are answered.
    pub fn set_ipv6(&mut self, local: Ipv6Addr) {
        self.local_v6 = Some(local);
    }

    /// This host's address for talking to `remote`: of the same family.
    fn local_for(&self, remote: IpAddr) -> io::Result<IpAddr> {
        match remote {
            IpAddr::V4(_) => Ok(IpAddr::V4(self.local)),
            IpAddr::V6(_) => self.local_v6.map(IpAddr::V6).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{remote}: this host has no IPv6 address (TunHost::set_ipv6)"),
                )
            }),
        }
    }

    /// Gives the path a propagation delay: from now on every packet this
    /// host sends reaches the kernel `one_way` later, and every packet the
    /// kernel sends reaches the connection `one_way` later, so both ends
    /// see `2 x one_way` more round-trip time, as a delay on both sides of
    /// a link would add (netem is not everywhere). Packets keep their
    /// order; captures record them when they cross the interface.
    pub fn set_delay(&mut self, one_way: Duration) {
        self.delay = one_way;
    }

    /// Writes every packet this host sends or reads from now on to the
    /// pcap file `path` (created or truncated), with wall-clock times.
    pub fn capture(&mut self, path: &std::path::Path) -> io::Result<()> {
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        let file = std::fs::File::create(path).map_err(named)?;
        let w = crate::pcap::PcapWriter::new(std::io::BufWriter::new(file)).map_err(named)?;
        self.capture = Some(w);
        Ok(())
    }

    /// Flushes and closes the capture, if any.
    pub fn finish_capture(&mut self) -> io::Result<()> {
        match self.capture.take() {
            Some(w) => w.finish().map(drop),
            None => Ok(()),
        }
    }

    /// The device.
    pub fn device(&self) -> &TunDevice {
        &self.dev
    }

    /// The host's counters.
    pub fn stats(&self) -> TunStats {
        self.stats
    }

    fn now(&self) -> Instant {
        Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64)
    }

    /// `config` as this carrier runs it: the MSS capped by the interface
    /// MTU less the headers of the family (`v6`), checksums left to the
    /// carrier (it computes and checks them over the real addresses).
    fn carrier_config(&self, config: Config, v6: bool) -> io::Result<Config> {
        let mtu = self.dev.mtu()?;
        let headers = if v6 { HEADERS_BYTES_V6 } else { HEADERS_BYTES };
        let cap = u16::try_from(mtu.saturating_sub(headers)).unwrap_or(u16::MAX);
        Ok(Config {
            mss: config.mss.min(cap),
            checksums: false,
            ..config
        })
    }

    /// Waits up to `limit` for a SYN to this host's `port` (at either of
    /// its addresses) and answers it: the connection (its SYN-ACK goes out
    /// in [`run`](Self::run)) and the peer. Other packets that arrive
    /// meanwhile are dropped, as a host with nothing else open would.
    pub fn accept(
        &mut self,
        port: u16,
        config: Config,
        limit: Duration,
    ) -> io::Result<(Connection, SocketAddr)> {
        let v4 = self.carrier_config(config.clone(), false)?;
        let v6 = self.carrier_config(config, true)?;
        let give_up = std::time::Instant::now() + limit;
        loop {
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no SYN for port {port} within {limit:?}"),
                ));
            }
            let Some(n) = self.dev.recv(&mut self.rx, left.min(POLL_CAP))? else {
                continue;
            };
            record(&mut self.capture, &self.rx[..n])?;
            let now = self.now();
            let accepted = match ip::unframe(&self.rx[..n]) {
                // SYN set, ACK and RST clear.
                Ok(u)
                    if self.local_for(u.src).is_ok_and(|local| local == u.dst)
                        && ports(u.segment).is_some_and(|(_, dst)| dst == port)
                        && u.segment.get(13).is_some_and(|f| f & 0x16 == 0x02) =>
                {
                    let src_port = ports(u.segment).map_or(0, |p| p.0);
                    let mut rng =
                        crate::testing::TestRng::seed_from_u64(wall_nanos() ^ u64::from(src_port));
                    let config = if u.src.is_ipv6() { &v6 } else { &v4 };
                    Connection::accept(config.clone(), now, u.segment, &mut rng)
                        .ok()
                        .map(|c| (c, SocketAddr::new(u.src, src_port)))
                }
                _ => None,
            };
            match accepted {
                Some(found) => {
                    self.stats.packets_received += 1;
                    // The SYN reaches the host a propagation delay after
                    // the kernel sent it; nothing else is open meanwhile.
                    std::thread::sleep(self.delay);
                    return Ok(found);
                }
                None => self.stats.packets_ignored += 1,
            }
        }
    }

    /// Opens a connection to `remote` (IPv4, or IPv6 once the host has an
    /// IPv6 address) from a fresh local port, with `config` as the
    /// carrier runs it (MSS capped by the MTU, checksums over the real
    /// addresses). The SYN goes out in [`run`](Self::run).
    pub fn connect(
        &mut self,
        remote: impl Into<SocketAddr>,
        config: Config,
    ) -> io::Result<Connection> {
        let remote = remote.into();
        self.local_for(remote.ip())?;
        let config = self.carrier_config(config, remote.is_ipv6())?;
        let port = self.next_port;
        self.next_port = if port == u16::MAX { 49_152 } else { port + 1 };
        // Initial sequence numbers need only differ between connections
        // and runs here (RFC 6528's keyed hash is for hosts facing
        // off-path attackers; this one sits behind a local interface).
        let seed = u64::from(port) ^ self.epoch.elapsed().as_nanos() as u64 ^ wall_nanos();
        let mut rng = crate::testing::TestRng::seed_from_u64(seed);
        Connection::connect(config, self.now(), port, remote.port(), &mut rng)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
    }

    /// Drives `conn` (from this host to `remote`) with real time until
    /// `app` returns true, calling it after every packet and timer with
    /// the connection to write, read or close; fails with `TimedOut` when
    /// `limit` passes first.
    pub fn run(
        &mut self,
        conn: &mut Connection,
        remote: impl Into<SocketAddr>,
        limit: Duration,
        mut app: impl FnMut(&mut Connection) -> bool,
    ) -> io::Result<()> {
        let remote = remote.into();
        let local = self.local_for(remote.ip())?;
        let give_up = std::time::Instant::now() + limit;
        loop {
            let done = app(conn);
            let now = self.now();
            self.transmit(conn, local, remote, now)?;
            self.send_due()?;
            if done {
                // What the connection sent last (its final ACK or FIN)
                // still has to reach the kernel.
                while let Some(due) = self.outbound.next_due() {
                    std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
                    self.send_due()?;
                }
                return Ok(());
            }
            if std::time::Instant::now() >= give_up {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the connection to {remote} did not finish within {limit:?}"),
                ));
            }
            let wall = std::time::Instant::now();
            let held = [self.outbound.next_due(), self.inbound.next_due()]
                .into_iter()
                .flatten()
                .map(|due| due.saturating_duration_since(wall))
                .min();
            let wait = conn
                .poll_timeout()
                .map_or(POLL_CAP, |t| t.saturating_duration_since(now))
                .min(held.unwrap_or(POLL_CAP))
                .min(POLL_CAP);
            // Everything the kernel has sent is taken off the interface at
            // once, so its queue never overflows at any rate, whatever is
            // then held for the delay.
            let mut next = recv_within(&self.dev, &mut self.rx, wait)?;
            while let Some(n) = next {
                record(&mut self.capture, &self.rx[..n])?;
                self.inbound.push(&self.rx[..n], self.delay);
                next = self.dev.recv(&mut self.rx, Duration::ZERO)?;
            }
            // One segment per turn: the application reads and the
            // connection answers (an ACK of that segment alone, under AE)
            // before the next is taken, as on a wire, even when the delay
            // line releases several at once; with one due the next turn
            // does not wait.
            if let Some(packet) = self.inbound.pop_due() {
                let now = self.now();
                match ip::unframe(&packet) {
                    Ok(u)
                        if u.dst == local
                            && u.src == remote.ip()
                            && ports(u.segment) == Some((remote.port(), conn.local_port())) =>
                    {
                        self.stats.packets_received += 1;
                        // A segment the connection refuses is counted in
                        // its own statistics.
                        let _ = conn.handle_segment_with_ce(now, u.segment, u.ecn == 3);
                    }
                    _ => self.stats.packets_ignored += 1,
                }
                self.inbound.recycle(packet);
            }
            let now = self.now();
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
        }
    }

    /// Frames every segment `conn` has to send and puts it on the delay
    /// line toward the kernel.
    fn transmit(
        &mut self,
        conn: &mut Connection,
        local: IpAddr,
        remote: SocketAddr,
        now: Instant,
    ) -> io::Result<()> {
        while let Some(n) = conn.poll_transmit(now, &mut self.segment) {
            self.ident = self.ident.wrapping_add(1);
            let ecn = ecn_of(conn, &self.segment[..n]);
            ip::frame(
                &mut self.frame,
                self.ident,
                local,
                remote.ip(),
                ecn,
                &self.segment[..n],
            )
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.outbound.push(&self.frame, self.delay);
        }
        Ok(())
    }

    /// Writes to the interface every held packet whose delay is over.
    fn send_due(&mut self) -> io::Result<()> {
        while let Some(packet) = self.outbound.pop_due() {
            self.dev.send(&packet)?;
            record(&mut self.capture, &packet)?;
            self.stats.packets_sent += 1;
            self.outbound.recycle(packet);
        }
        Ok(())
    }
}

/// Packets held back for a propagation delay, in order. Buffers of
/// packets that left are reused, so a steady flow allocates nothing per
/// packet.
#[derive(Debug, Default)]
struct DelayLine {
    held: VecDeque<(std::time::Instant, Vec<u8>)>,
    spare: Vec<Vec<u8>>,
}

impl DelayLine {
    /// Holds a copy of `packet` until `delay` from now.
    fn push(&mut self, packet: &[u8], delay: Duration) {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(packet);
        self.held
            .push_back((std::time::Instant::now() + delay, buf));
    }

    /// When the first held packet is due.
    fn next_due(&self) -> Option<std::time::Instant> {
        self.held.front().map(|&(due, _)| due)
    }

    /// The first held packet, if its time has come.
    fn pop_due(&mut self) -> Option<Vec<u8>> {
        if self.next_due()? > std::time::Instant::now() {
            return None;
        }
        self.held.pop_front().map(|(_, packet)| packet)
    }

    /// Takes back a packet's buffer for reuse.
    fn recycle(&mut self, buf: Vec<u8>) {
        self.spare.push(buf);
    }
}

/// Two TUN interfaces joined by a wire in userspace: every IP packet the
/// kernel sends into one comes out of the other `one_way` later, in order,
/// both ways. With one interface in a network namespace of its own
/// ([`TunDevice::create_in_netns`]) this is a point-to-point link between
/// two kernel stacks with a propagation delay, built without netem: a
/// kernel-to-kernel baseline on the same delay as a [`TunHost`] with
/// [`set_delay`](TunHost::set_delay). Queues and rates stay the kernel's
/// business (a qdisc on either interface shapes what enters the wire).
///
/// Each direction runs on a thread of its own; [`stop`](Self::stop) (or
/// dropping the bridge) ends them within 50 ms (`POLL_CAP`) and closes both
/// interfaces.
#[derive(Debug)]
pub struct TunBridge {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    directions: Vec<std::thread::JoinHandle<io::Result<u64>>>,
}

/// What a [`TunBridge`] carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TunBridgeStats {
    /// Packets from the first interface to the second.
    pub a_to_b: u64,
    /// Packets from the second interface to the first.
    pub b_to_a: u64,
}

impl TunBridge {
    /// Starts carrying packets between `a` and `b` with `one_way` of delay
    /// each way.
    pub fn start(a: TunDevice, b: TunDevice, one_way: Duration) -> TunBridge {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (a, b) = (std::sync::Arc::new(a), std::sync::Arc::new(b));
        let directions = [(a.clone(), b.clone()), (b, a)]
            .into_iter()
            .map(|(from, to)| {
                let stop = stop.clone();
                std::thread::spawn(move || carry(&from, &to, one_way, &stop))
            })
            .collect();
        TunBridge { stop, directions }
    }

    /// Stops the bridge and closes both interfaces: the packets carried
    /// each way, or the first error either direction met.
    pub fn stop(mut self) -> io::Result<TunBridgeStats> {
        self.halt()
    }

    fn halt(&mut self) -> io::Result<TunBridgeStats> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Both threads see the flag and end within one poll; the first
        // error ends the count (a thread not joined then still stops).
        let mut carried = [0u64; 2];
        for (count, handle) in carried.iter_mut().zip(self.directions.drain(..)) {
            *count = handle
                .join()
                .map_err(|_| io::Error::other("a TUN bridge thread panicked"))??;
        }
        Ok(TunBridgeStats {
            a_to_b: carried[0],
            b_to_a: carried[1],
        })
    }
}

impl Drop for TunBridge {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// One direction of a [`TunBridge`]: reads `from`, holds each packet
/// `delay`, writes it to `to`, until `stop`; the packets carried.
fn carry(
    from: &TunDevice,
    to: &TunDevice,
    delay: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> io::Result<u64> {
    let mut line = DelayLine::default();
    let mut buf = vec![0u8; 65_536];
    let mut carried = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let wait = line.next_due().map_or(POLL_CAP, |due| {
            due.saturating_duration_since(std::time::Instant::now())
                .min(POLL_CAP)
        });
        let mut next = recv_within(from, &mut buf, wait)?;
        while let Some(n) = next {
            line.push(&buf[..n], delay);
            next = from.recv(&mut buf, Duration::ZERO)?;
        }
        while let Some(packet) = line.pop_due() {
            to.send(&packet)?;
            carried += 1;
            line.recycle(packet);
        }
    }
    Ok(carried)
}

/// Waits at most `wait` for a packet from `dev`, with finer than the
/// millisecond that poll(2) counts in: the whole milliseconds in poll,
/// the rest in a sleep and then a look without waiting. A delay line
/// then releases packets within a fraction of a millisecond of their
/// time instead of in millisecond batches, which would bunch segments
/// (and the ACKs they draw) that a wire would have kept apart.
fn recv_within(dev: &TunDevice, buf: &mut [u8], wait: Duration) -> io::Result<Option<usize>> {
    let whole_ms = Duration::from_millis(wait.as_millis() as u64);
    if !whole_ms.is_zero() {
        return dev.recv(buf, whole_ms);
    }
    if !wait.is_zero() {
        std::thread::sleep(wait);
    }
    dev.recv(buf, Duration::ZERO)
}

/// Appends `packet` to the capture, if any, stamped with the wall clock.
fn record(
    capture: &mut Option<crate::pcap::PcapWriter<std::io::BufWriter<std::fs::File>>>,
    packet: &[u8],
) -> io::Result<()> {
    let Some(w) = capture else {
        return Ok(());
    };
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    w.write_packet(at, packet)
}

fn wall_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// (source port, destination port) of a segment.
fn ports(segment: &[u8]) -> Option<(u16, u16)> {
    let p = segment.get(..4)?;
    Some((
        u16::from_be_bytes([p[0], p[1]]),
        u16::from_be_bytes([p[2], p[3]]),
    ))
}

/// The IP ECN codepoint for a segment `conn` emitted: ECT(0) on segments
/// that carry data once both ends negotiated ECN (RFC 3168 section 6.1.1),
/// not-ECT on everything else (SYNs, pure ACKs). Retransmissions are not
/// told apart here and go out ECT(0) too.
fn ecn_of(conn: &Connection, segment: &[u8]) -> u8 {
    let header = segment.get(12).map_or(0, |b| usize::from(b >> 4) * 4);
    if conn.negotiated().ecn && segment.len() > header {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_prefixes_are_checked_before_the_device_is_opened() {
        let a = Ipv4Addr::new(10, 77, 0, 1);
        for (bad, prefix) in [
            ("", 30),
            ("much-too-long-name", 30),
            ("a\0b", 30),
            ("ok", 31),
            ("ok", 0),
        ] {
            let e = TunDevice::create(bad, a, prefix).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad:?}/{prefix}");
            let e = TunDevice::create_in_netns(bad, "any", a, prefix).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad:?}/{prefix}");
        }
        assert_eq!(ports(&[0, 80, 1, 187, 0]), Some((80, 443)));
        assert_eq!(ports(&[0, 80]), None);
    }
}
