//! A userspace link emulator over real UDP: datagrams between two
//! endpoints cross emulated forward and reverse links (rate, delay, queue,
//! loss, reordering) built from the emulator's queue components.
//!
//! Clients send datagrams to the relay's listening address; the relay
//! forwards each to the server from a socket of its own per client, so the
//! server's replies come back on that socket and go to the right client.
//! Client to server is the *forward* direction, server to client the
//! *reverse* one. Each direction is an emulated link ([`LinkConfig`]):
//!
//! 1. a queue: [`DropTail`](crate::emu::queue::DropTail) or
//!    [`Red`](crate::emu::queue::Red) from [`crate::emu::queue`], holding
//!    at most `buffer_packets` datagrams;
//! 2. a transmitter serialising one datagram at a time at `rate_bps`,
//!    counting [`UDP_IP_OVERHEAD_BYTES`] (28) on top of each payload;
//! 3. a propagation delay;
//! 4. a seeded Bernoulli loss draw, and a reordering draw that holds a
//!    datagram back by `reorder_delay` (default three of its transmission
//!    times, at least 1 ms) so the next few overtake it;
//! 5. a path MTU (`mtu_bytes`, Ethernet's 1 500 from [`LinkConfig::new`]
//!    and the CLI; `None` for none): a datagram larger than it is dropped
//!    on arrival and counted, as a router that may not fragment drops it.
//!
//! Departures follow a virtual timeline (the transmitter is free from the
//! end of the previous datagram, not from when the task woke up), so timer
//! jitter delays datagrams slightly without changing the link rate. The
//! relay runs on one tokio task plus one receiving task per socket; it
//! sleeps until the earliest pending event and never polls.
//!
//! The reverse link's input is a seam for middleboxes ([`ReverseHook`]),
//! and its queue discipline can be replaced
//! ([`Relay::set_reverse_queue`]). [`AckManagement`] installs the
//! emulator's in-network ACK management there: paper 000's ACK filtering
//! as the reverse queue, paper 001's ACK delay control as the hook.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use ackwise::ack_path::{Filter, Service};
//! use ackwise::relay::{AckManagement, LinkConfig, Relay, RelayConfig};
//! use std::time::Duration;
//! let config = RelayConfig {
//!     listen: "127.0.0.1:9000".parse().unwrap(),
//!     to: "127.0.0.1:9001".parse().unwrap(),
//!     forward: LinkConfig::new(10_000_000, Duration::from_millis(50), 50),
//!     reverse: LinkConfig::new(64_000, Duration::from_millis(50), 50),
//!     seed: 1,
//!     // Paper 000's delayed filtering on the slow reverse link.
//!     ack_management: AckManagement {
//!         filter: Some((Filter::DELAYED, Service::Fifo)),
//!         delay_control: None,
//!     },
//! };
//! let relay = Relay::bind(config).await?.spawn();
//! println!("relaying on {}", relay.local_addr());
//! # Ok(()) }
//! ```

pub(crate) mod ack_management;
mod config;
mod hook;
pub(crate) mod link;
mod stats;

pub use ack_management::DelayControlHook;
pub use config::{
    parse_ack_filter, parse_delay, parse_delay_control, parse_probability, parse_rate,
    AckManagement, DelayControlSetting, LinkConfig, QueueKind, RelayConfig, RelayConfigError,
    DELAY_CONTROL_PACKET_BYTES, ETHERNET_MTU_BYTES, MAX_MTU_BYTES, MIN_MTU_BYTES,
    UDP_IP_OVERHEAD_BYTES,
};
pub use hook::{Arrival, HookAction, NoHook, QueueView, QueuedDatagram, ReverseHook};
pub use stats::{DirectionStats, RelayStats};

use crate::emu::queue::LinkQueue;
use crate::net::capture::SocketCapture;
use crate::time::Instant;
use link::EmulatedLink;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

/// Largest datagram the relay carries.
const MAX_DATAGRAM: usize = 65_535;
/// Datagrams buffered between the receiving tasks and the link task.
const CHANNEL_DEPTH: usize = 4096;

/// A bound, not yet running relay.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    listen: Arc<UdpSocket>,
    stats: Arc<Mutex<RelayStats>>,
    hook: Option<Box<dyn ReverseHook>>,
    reverse_queue: Option<Box<dyn LinkQueue + Send>>,
    limits: ClientLimits,
    capture: Option<SocketCapture>,
}

/// Bounds on the per-client sockets: each client address gets a socket
/// of its own toward the server, so without bounds a long-running relay
/// keeps one per past sender, and a flood of source addresses opens one
/// per datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    /// Most client sockets open at once; a new client's datagrams are
    /// dropped (and counted in [`RelayStats::clients_refused`]) while this
    /// many are open.
    pub max_clients: usize,
    /// A client socket that carried nothing either way for this long is
    /// closed (counted in [`RelayStats::clients_expired`]); the client's
    /// next datagram opens a new one.
    pub idle: std::time::Duration,
}

impl Default for ClientLimits {
    /// 1024 clients, 60 s idle.
    fn default() -> Self {
        ClientLimits {
            max_clients: 1024,
            idle: std::time::Duration::from_secs(60),
        }
    }
}

/// One client's socket toward the server.
struct Client {
    sock: Arc<UdpSocket>,
    /// Its receiving task, stopped when the socket expires.
    reader: tokio::task::AbortHandle,
    last_active: tokio::time::Instant,
}

/// A running relay (see [`Relay::spawn`]); dropping it stops the relay.
#[derive(Debug)]
pub struct RelayHandle {
    addr: SocketAddr,
    stats: Arc<Mutex<RelayStats>>,
    task: JoinHandle<io::Result<()>>,
}

#[derive(Debug, Clone, Copy)]
enum Direction {
    Forward,
    Reverse,
}

struct Received {
    direction: Direction,
    client: SocketAddr,
    data: Vec<u8>,
}

impl Relay {
    /// Checks `config` and binds the listening socket (the error says which
    /// setting is wrong, or why binding failed).
    pub async fn bind(config: RelayConfig) -> io::Result<Relay> {
        config
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let listen = UdpSocket::bind(config.listen).await.map_err(|e| {
            io::Error::new(e.kind(), format!("cannot listen on {}: {e}", config.listen))
        })?;
        enlarge_buffers(&listen);
        let local = listen.local_addr()?;
        if leads_back(config.to, local) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "--to {}: a forwarding loop (that is the relay's own address {local})",
                    config.to
                ),
            ));
        }
        Ok(Relay {
            config,
            listen: Arc::new(listen),
            stats: Arc::default(),
            hook: None,
            reverse_queue: None,
            limits: ClientLimits::default(),
            capture: None,
        })
    }

    /// Replaces the default [`ClientLimits`].
    pub fn set_client_limits(&mut self, limits: ClientLimits) {
        self.limits = limits;
    }

    /// The address clients send to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listen.local_addr()
    }

    /// The counters so far.
    pub fn stats(&self) -> RelayStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Installs a middlebox at the reverse link's input (taking precedence
    /// over [`AckManagement::delay_control`]).
    pub fn set_reverse_hook(&mut self, hook: Box<dyn ReverseHook>) {
        self.hook = Some(hook);
    }

    /// Replaces the reverse link's queue discipline (and takes precedence
    /// over [`AckManagement::filter`]). A discipline that serves packets
    /// in arrival order (DropTail, RED) lets hooks remove queued
    /// datagrams; one that orders them itself (ACK filtering, round robin)
    /// is served in its own order and makes hooks' views read-only.
    pub fn set_reverse_queue(&mut self, queue: Box<dyn LinkQueue + Send>) {
        self.reverse_queue = Some(queue);
    }

    /// Writes every datagram that reaches the relay, from either side, to
    /// the pcap file `path` as IP/TCP between the client and the server
    /// (see [`crate::pcap`]), before the emulated links: what each end
    /// sent, so the links' drops show up in Wireshark as retransmissions.
    /// The file is created, or truncated, now; the error names it.
    pub fn set_capture(&mut self, path: &std::path::Path) -> io::Result<()> {
        self.capture = Some(SocketCapture::create(path, self.config.listen)?);
        Ok(())
    }

    /// Runs the relay on its own task.
    pub fn spawn(self) -> RelayHandle {
        let addr = self
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
        let stats = self.stats.clone();
        RelayHandle {
            addr,
            stats,
            task: tokio::spawn(self.run()),
        }
    }

    /// Relays until the future is dropped. Socket errors lose the datagram
    /// concerned (counted as a send error) but do not stop the relay. A
    /// datagram that arrives from one of the relay's own client sockets
    /// means `to` leads back to the relay (through an address [`bind`]
    /// could not recognise): the relay stops with an `InvalidInput` error
    /// rather than multiply it.
    ///
    /// [`bind`]: Relay::bind
    pub async fn run(self) -> io::Result<()> {
        let Relay {
            config,
            listen,
            stats,
            hook,
            reverse_queue,
            limits,
            mut capture,
        } = self;
        let mut captured = 0u64;
        let mut capture_failed = false;
        // `--ack-filter` and `--ack-delay-control`, unless the caller
        // installed its own queue or hook.
        let reverse_queue = reverse_queue.or_else(|| ack_management::filter_queue(&config));
        let mut hook = hook.or_else(|| ack_management::delay_control_hook(&config));
        let mut forward = EmulatedLink::new(config.forward.clone(), config.seed, false);
        let mut reverse = EmulatedLink::new(
            config.reverse.clone(),
            config.seed ^ 0x9e37_79b9_7f4a_7c15,
            hook.is_some(),
        );
        if let Some(q) = reverse_queue {
            reverse.set_discipline(q);
        }
        reverse.set_parse_acks(hook.is_some());

        let (tx, mut rx) = mpsc::channel::<Received>(CHANNEL_DEPTH);
        // Dropping the set (when this future ends or is dropped) stops the
        // receiving tasks.
        let mut readers = JoinSet::new();
        readers.spawn(read_loop(
            listen.clone(),
            Direction::Forward,
            None,
            tx.clone(),
        ));
        let mut clients: HashMap<SocketAddr, Client> = HashMap::new();
        // The local ports of the client sockets, to recognise a datagram
        // of our own coming back.
        let mut own_ports: HashMap<u16, usize> = HashMap::new();
        let mut expired = 0u64;
        let mut refused = 0u64;
        let check_every = (limits.idle / 4).max(std::time::Duration::from_millis(10));
        let mut expiry = tokio::time::interval(check_every);
        expiry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let epoch = tokio::time::Instant::now();
        let clock = move || Instant::from_nanos(epoch.elapsed().as_nanos() as u64);

        loop {
            let wake = [forward.next_wake(), reverse.next_wake()]
                .into_iter()
                .flatten()
                .min();
            let sleep = async {
                match wake {
                    Some(t) => tokio::time::sleep_until(epoch + t.since_epoch()).await,
                    None => std::future::pending().await,
                }
            };
            let first = tokio::select! {
                biased;
                r = rx.recv() => r,
                () = sleep => None,
                _ = expiry.tick() => {
                    let now = tokio::time::Instant::now();
                    clients.retain(|_, c| {
                        let keep = now.duration_since(c.last_active) < limits.idle;
                        if !keep {
                            c.reader.abort();
                            forget_port(&mut own_ports, &c.sock);
                            expired += 1;
                        }
                        keep
                    });
                    None
                }
            };
            let now = clock();
            // Everything already received is taken in one go.
            let mut next = first;
            while let Some(r) = next {
                if let Some(c) = &mut capture {
                    let (src, dst) = match r.direction {
                        Direction::Forward => (r.client.ip(), config.to.ip()),
                        Direction::Reverse => (config.to.ip(), r.client.ip()),
                    };
                    match c.record(src, dst, 0, std::iter::once(&r.data)) {
                        Ok(n) => captured += n,
                        Err(_) => {
                            capture_failed = true;
                            capture = None;
                        }
                    }
                }
                match r.direction {
                    Direction::Forward => {
                        if own_ports.contains_key(&r.client.port())
                            && (r.client.ip().is_loopback() || r.client.ip() == config.to.ip())
                        {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidInput,
                                format!(
                                    "--to {}: a forwarding loop (datagrams come back from the \
                                     relay's own socket {})",
                                    config.to, r.client
                                ),
                            ));
                        }
                        let open = clients.len();
                        match clients.entry(r.client) {
                            Entry::Occupied(mut c) => {
                                c.get_mut().last_active = tokio::time::Instant::now();
                            }
                            Entry::Vacant(slot) => {
                                if open >= limits.max_clients {
                                    refused += 1;
                                    forward.stats.packets_in += 1;
                                    forward.stats.bytes_in += r.data.len() as u64;
                                    next = rx.try_recv().ok();
                                    continue;
                                }
                                // Without a socket (out of descriptors,
                                // say) the datagram is lost; the client
                                // may retry.
                                let Ok(sock) = client_socket(config.to).await else {
                                    forward.stats.packets_in += 1;
                                    forward.stats.bytes_in += r.data.len() as u64;
                                    forward.stats.send_errors += 1;
                                    next = rx.try_recv().ok();
                                    continue;
                                };
                                let reader = readers.spawn(read_loop(
                                    sock.clone(),
                                    Direction::Reverse,
                                    Some(r.client),
                                    tx.clone(),
                                ));
                                if let Ok(a) = sock.local_addr() {
                                    *own_ports.entry(a.port()).or_default() += 1;
                                }
                                slot.insert(Client {
                                    sock,
                                    reader,
                                    last_active: tokio::time::Instant::now(),
                                });
                            }
                        }
                        forward.arrive(now, r.client, r.data, None, (0, 0));
                    }
                    Direction::Reverse => {
                        if let Some(c) = clients.get_mut(&r.client) {
                            c.last_active = tokio::time::Instant::now();
                        }
                        let fq = (forward.queue_packets(), forward.queue_bytes());
                        reverse.arrive(now, r.client, r.data, hook.as_deref_mut(), fq);
                    }
                }
                next = rx.try_recv().ok();
            }
            forward.advance(now, None);
            reverse.advance(now, hook.as_deref_mut());
            while let Some((client, data)) = forward.pop_due(now) {
                let sent = match clients.get(&client) {
                    Some(c) => c.sock.send(&data).await.is_ok(),
                    None => false,
                };
                if !sent {
                    forward.stats.send_errors += 1;
                }
            }
            while let Some((client, data)) = reverse.pop_due(now) {
                if listen.send_to(&data, client).await.is_err() {
                    reverse.stats.send_errors += 1;
                }
            }
            if let Some(c) = &mut capture {
                if c.maybe_flush().is_err() {
                    capture_failed = true;
                    capture = None;
                }
            }
            let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
            s.captured = captured;
            s.capture_failed = capture_failed;
            s.forward = forward.stats;
            s.reverse = reverse.stats;
            s.clients = clients.len();
            s.clients_expired = expired;
            s.clients_refused = refused;
        }
    }
}

impl RelayHandle {
    /// The address clients send to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counters so far.
    pub fn stats(&self) -> RelayStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the relay task stopped (it does not stop by itself unless
    /// it panicked).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Stops the relay and returns its final counters.
    pub async fn shutdown(mut self) -> RelayStats {
        self.task.abort();
        let _ = (&mut self.task).await;
        self.stats()
    }

    /// Waits until the relay task ends.
    pub async fn join(mut self) -> io::Result<()> {
        match (&mut self.task).await {
            Ok(r) => r,
            Err(e) => Err(io::Error::other(e)),
        }
    }
}

impl Drop for RelayHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether datagrams sent to `to` would reach the relay's own listening
/// socket at `local`: the same address, or the same port when the relay
/// listens on every address and `to` is loopback or one of this host's
/// addresses (one a socket can bind to).
fn leads_back(to: SocketAddr, local: SocketAddr) -> bool {
    if to.port() != local.port() {
        return false;
    }
    if to.ip() == local.ip() {
        return true;
    }
    local.ip().is_unspecified()
        && (to.ip().is_loopback() || std::net::UdpSocket::bind((to.ip(), 0)).is_ok())
}

/// One client socket fewer on its local port.
fn forget_port(own_ports: &mut HashMap<u16, usize>, sock: &UdpSocket) {
    if let Ok(a) = sock.local_addr() {
        if let Entry::Occupied(mut e) = own_ports.entry(a.port()) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
    }
}

/// A socket for one client's traffic, connected to the server.
async fn client_socket(to: SocketAddr) -> io::Result<Arc<UdpSocket>> {
    let any: IpAddr = match to {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let sock = UdpSocket::bind((any, 0)).await?;
    enlarge_buffers(&sock);
    sock.connect(to).await?;
    Ok(Arc::new(sock))
}

/// Socket buffers the relay asks the kernel for (which caps them at
/// `net.core.rmem_max` / `wmem_max`).
const SOCKET_BUFFER_BYTES: usize = 8 << 20;

/// Asks for large socket buffers, so that a sender's burst waits in the
/// emulated queue, where it is counted and dropped by the link's rules,
/// rather than being lost unseen when the kernel's default buffer (about
/// 200 KB) overflows before the relay reads it. The kernel may grant
/// less; that only brings those unseen drops back. (Only the sizes: the
/// relay reads one datagram at a time, so receive offload, which
/// `quinn_udp`'s socket state would switch on, must stay off.)
fn enlarge_buffers(sock: &UdpSocket) {
    let sock = socket2::SockRef::from(sock);
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES);
}

/// Receives datagrams on `sock` and hands them to the link task. With
/// `client` set, the socket is that client's (replies from the server);
/// otherwise it is the listening socket.
async fn read_loop(
    sock: Arc<UdpSocket>,
    direction: Direction,
    client: Option<SocketAddr>,
    tx: mpsc::Sender<Received>,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut errors_in_row = 0u32;
    loop {
        let (n, from) = match sock.recv_from(&mut buf).await {
            Ok(r) => r,
            // ICMP errors (port unreachable at the server) surface here on
            // Linux; they concern one earlier datagram, not the socket. A
            // socket failing persistently is given a pause, not a spin.
            Err(_) => {
                errors_in_row += 1;
                if errors_in_row > 16 {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
                continue;
            }
        };
        errors_in_row = 0;
        let received = Received {
            direction,
            client: client.unwrap_or(from),
            data: buf[..n].to_vec(),
        };
        if tx.send(received).await.is_err() {
            return;
        }
    }
}
