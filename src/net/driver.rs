//! The endpoint's driver task: it owns the UDP socket and every
//! connection, and is the only place where segments are received, timers
//! run and segments are sent.
//!
//! One loop waits for whichever comes first: the socket becoming readable
//! (or reporting an ICMP error), a command from the [`Endpoint`](super::Endpoint),
//! a stream handle queuing its connection, or the earliest connection
//! timer. It then handles everything that is ready and, for each
//! connection that was touched, collects what it has to send. A batch of
//! received datagrams (several segments each with GRO) is processed whole
//! before anything is transmitted, so one ACK can answer many segments and
//! readers are woken once per batch. Consecutive equal-sized segments of a
//! connection leave in one GSO send.

use super::capture::SocketCapture;
use super::clock::Clock;
use super::error::NetError;
use super::gather;
use super::half_open::{HalfOpen, Room};
use super::pmtu::{self, ProbeEvent};
use super::shared::{ConnShared, DriverLink};
use super::stats::StatsCell;
use super::stream::Stream;
use crate::connection::syn_cookie::{SynCookies, Tuple};
use crate::connection::{
    ChallengeBudget, CloseReason, Config, Connection, Emitted, Event, State, WindowBudget,
};
use crate::time::Instant;
use crate::wire::{Checksum, Flags, SegmentRepr, HEADER_LEN, MAX_OPTIONS_LEN};
use bytes::{Bytes, BytesMut};
use quinn_udp::{EcnCodepoint, RecvMeta, Transmit, UdpSocketState, BATCH_SIZE};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::{self, IoSlice, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};

/// Bytes per receive slot: the largest UDP payload, which is also the
/// largest GRO batch the kernel hands over at once.
const RECV_SLOT: usize = 65_536;
/// Largest UDP payload we send in one GSO call.
const MAX_GSO_BYTES: usize = 65_000;
/// Datagrams at least this long are received into a slot that their
/// connection keeps by reference (see [`RecvSlots`]); shorter ones are
/// copied, so a slice never pins more than four times its bytes.
const SHARE_MIN_DATAGRAM: usize = RECV_SLOT / 4;
/// Receive calls handled before the driver stops to transmit and run
/// timers, so a flood of arrivals cannot starve the other work.
const MAX_RECV_CALLS: usize = 8;
/// Bytes kept for segments waiting to be sent.
const TX_ARENA: usize = 4 * MAX_GSO_BYTES;
/// Local ports for outgoing connections (the IANA dynamic range).
const EPHEMERAL: std::ops::RangeInclusive<u16> = 49_152..=65_535;

/// What an [`Endpoint`](super::Endpoint) asks its driver to do.
pub(crate) enum Command {
    Connect {
        remote: SocketAddr,
        config: Box<Config>,
        reply: oneshot::Sender<Result<Arc<ConnShared>, NetError>>,
    },
    Close {
        grace: Duration,
        done: oneshot::Sender<()>,
    },
    /// Send path MTU probes of these UDP payload sizes to `remote` and
    /// report what becomes of them on `events` (see [`super::pmtu`]).
    Probe {
        remote: SocketAddr,
        token: u64,
        sizes: Vec<usize>,
        events: mpsc::UnboundedSender<ProbeEvent>,
    },
    /// The probe round `token` is over: forget it.
    ProbeDone { token: u64 },
}

/// The receive slots, one per datagram of a receive batch, and the slots
/// lent to connections.
///
/// A connection that takes a datagram's payload by reference
/// (`Connection::handle_segment_shared`) keeps the slot alive until the
/// application has read it; the driver puts a fresh slot in its place and
/// takes the lent one back once nothing else refers to it. Lent slots are
/// checked oldest first, which is the order connections read them in, so
/// steady traffic cycles through a few slots that stay in cache, and the
/// bytes are copied once, from the slot to the application, instead of
/// into a receive ring first.
#[derive(Default)]
struct RecvSlots {
    /// The slots the next receive call fills, `RECV_SLOT` bytes each.
    ready: Vec<BytesMut>,
    /// Whole slots given away, oldest first (each also referred to by the
    /// slices its connection holds).
    lent: VecDeque<Bytes>,
}

/// Lent slots looked at per slot needed: enough that the slots read in
/// the meantime come back before more are allocated.
const SLOT_CHECKS: usize = 4;
/// Lent slots tracked for reuse (16 MiB): beyond that the oldest is
/// forgotten (freed once read), so an endpoint whose readers fall far
/// behind does not keep that memory after they catch up.
const MAX_LENT: usize = 256;

impl RecvSlots {
    fn new() -> RecvSlots {
        RecvSlots {
            ready: (0..BATCH_SIZE)
                .map(|_| BytesMut::zeroed(RECV_SLOT))
                .collect(),
            lent: VecDeque::new(),
        }
    }

    /// Gives slot `i` away, holding a datagram of `len` bytes, and puts a
    /// returned or new slot in its place.
    fn lend(&mut self, i: usize, len: usize) -> Bytes {
        let fresh = self
            .take_returned()
            .unwrap_or_else(|| BytesMut::zeroed(RECV_SLOT));
        let whole = std::mem::replace(&mut self.ready[i], fresh).freeze();
        let datagram = whole.slice(..len);
        if self.lent.len() == MAX_LENT {
            self.lent.pop_front();
        }
        self.lent.push_back(whole);
        datagram
    }

    /// A lent slot that nothing refers to any more, if one of the oldest
    /// few is.
    fn take_returned(&mut self) -> Option<BytesMut> {
        for _ in 0..SLOT_CHECKS.min(self.lent.len()) {
            let slot = self.lent.pop_front()?;
            match slot.try_into_mut() {
                Ok(free) if free.len() == RECV_SLOT => return Some(free),
                Ok(_) => {}
                Err(still_lent) => self.lent.push_back(still_lent),
            }
        }
        None
    }

    /// Frees the returned slots (for an endpoint gone quiet).
    fn release_returned(&mut self) {
        self.lent.retain(|slot| !slot.is_unique());
    }
}

/// A connection's identity: the peer's socket address and the port pair
/// from the TCP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    remote: SocketAddr,
    local_port: u16,
    remote_port: u16,
}

impl Key {
    fn of(shared: &ConnShared) -> Key {
        Key {
            remote: shared.remote,
            local_port: shared.local_port,
            remote_port: shared.remote_port,
        }
    }
}

struct Entry {
    shared: Arc<ConnShared>,
    /// The connection's `poll_timeout` as of the last time we touched it;
    /// also its place in [`Driver::deadlines`].
    timeout: Option<Instant>,
    /// Opened by a peer's SYN; handed to `accept` once established.
    passive: bool,
    /// Passive and its handshake not complete yet: counted against the
    /// half-open limit, first to go when a newer SYN needs room.
    half_open: bool,
    /// Already on the touched list.
    touched: bool,
}

/// Segments waiting to be sent, grouped into GSO batches.
struct TxArena {
    buf: Vec<u8>,
    used: usize,
    batches: Vec<TxBatch>,
    /// The segments of gathered batches, in order.
    parts: Vec<TxPart>,
}

struct TxBatch {
    dest: SocketAddr,
    /// Where the batch's bytes are in `buf` (a gathered batch: its
    /// headers' first byte).
    start: usize,
    /// Bytes the batch puts on the wire.
    len: usize,
    /// Size of every segment but possibly the last.
    segment: usize,
    count: usize,
    /// Segments whose payloads stay in their connection's send buffer
    /// until the send (see [`gather`]); `None` for a batch of whole
    /// segments in `buf`.
    gathered: Option<Gathered>,
}

/// A batch of segments that are a header in the arena and a payload in
/// their connection's send buffer.
struct Gathered {
    shared: Arc<ConnShared>,
    /// Its segments in [`TxArena::parts`].
    parts: std::ops::Range<usize>,
}

/// One gathered segment.
struct TxPart {
    /// Its header in [`TxArena::buf`].
    header: std::ops::Range<usize>,
    /// Where its payload lies in the send stream.
    payload_offset: u64,
    payload_len: usize,
}

/// The batch [`TxArena::fill`] is building.
struct OpenBatch {
    start: usize,
    /// Size of its first segment, which every one but the last has.
    segment: usize,
    count: usize,
    /// Bytes on the wire so far.
    len: usize,
    /// Its first segment in [`TxArena::parts`], for a gathered batch.
    first_part: Option<usize>,
}

/// Configuration the driver needs from the endpoint.
pub(crate) struct DriverParams {
    pub(crate) server: Option<Config>,
    pub(crate) max_connections: usize,
    pub(crate) max_half_open: usize,
    pub(crate) max_half_open_per_peer: usize,
    pub(crate) max_connections_per_peer: usize,
    pub(crate) syn_cookies: bool,
    pub(crate) idle_eviction: Option<Duration>,
    pub(crate) idle_release: Option<Duration>,
    pub(crate) challenge_ack_limit: Option<u32>,
    pub(crate) gso: bool,
    pub(crate) transmit_per_segment: bool,
    pub(crate) echo_probes: bool,
    pub(crate) omit_checksums: bool,
    /// Window bytes the endpoint's connections may offer together before
    /// autotuning stops taking the wider margin (`WindowBudget`).
    pub(crate) window_budget_bytes: Option<u64>,
    pub(crate) capture: Option<SocketCapture>,
}

/// A probe round a connecting handle waits on.
struct ProbeWaiter {
    remote: SocketAddr,
    events: mpsc::UnboundedSender<ProbeEvent>,
}

pub(crate) struct Driver {
    socket: UdpSocket,
    udp: UdpSocketState,
    link: Arc<DriverLink>,
    stats: Arc<StatsCell>,
    clock: Clock,
    server: Option<Config>,
    checksum: Checksum,
    accept_tx: Option<mpsc::UnboundedSender<(Stream, SocketAddr)>>,
    cmd_rx: mpsc::UnboundedReceiver<Command>,
    conns: HashMap<Key, Entry>,
    /// Every entry's `timeout`, in time order: the next deadline and the
    /// due timers without a pass over all connections, so a wake-up costs
    /// the same with ten thousand connections as with one.
    deadlines: BTreeSet<(Instant, Key)>,
    rng: ChaCha8Rng,
    next_port: u16,
    max_connections: usize,
    /// Half-open connections per peer, and which gives way to a new SYN.
    half_open: HalfOpen<Key>,
    /// Connections each peer address opened (`passive` entries).
    per_peer: HashMap<IpAddr, usize>,
    max_connections_per_peer: usize,
    /// The SYN-cookie secret, on a listening endpoint that uses them.
    cookies: Option<SynCookies>,
    /// Challenge ACKs all connections may send per second together.
    challenge_budget: Option<Arc<ChallengeBudget>>,
    window_budget: Option<Arc<WindowBudget>>,
    /// How long an established connection's data must have stood still
    /// before a full table gives its place to a new connection.
    idle_eviction: Option<Duration>,
    /// How long a connection's data must have stood still before it
    /// gives its buffers back, and how often the sweep runs.
    idle_release: Option<Duration>,
    /// When the next sweep gives idle connections' buffers back.
    next_trim: Option<Instant>,
    max_gso_segments: usize,
    transmit_per_segment: bool,
    recv_slots: RecvSlots,
    metas: Vec<RecvMeta>,
    tx: TxArena,
    touched: Vec<Key>,
    dirty: Vec<Arc<ConnShared>>,
    closing: Option<(Instant, Vec<oneshot::Sender<()>>)>,
    /// The connection of the last segment received, during one
    /// [`on_readable`](Self::on_readable) (when it was touched already).
    last_rx: Option<(Key, Arc<ConnShared>)>,
    capture: Option<SocketCapture>,
    /// Whether the socket is IPv4 (else IPv6); `None` if unknown.
    local_v4: Option<bool>,
    /// Answer path MTU probes. Also when not listening: a client
    /// connecting to the wrong port then learns from the reset to its
    /// SYN at once, instead of waiting for echoes first.
    echo_probes: bool,
    /// Offer connections' peers to leave the TCP checksum out.
    omit_checksums: bool,
    /// Probe rounds under way, by token.
    probe_waiters: HashMap<u64, ProbeWaiter>,
    /// Probes to send: destination, token, datagram.
    probes_out: Vec<(SocketAddr, u64, Vec<u8>)>,
}

/// What woke the driver.
enum Wake {
    Command(Option<Command>),
    Readable,
    SocketError,
    Other,
}

impl Driver {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        socket: UdpSocket,
        udp: UdpSocketState,
        link: Arc<DriverLink>,
        stats: Arc<StatsCell>,
        clock: Clock,
        params: DriverParams,
        accept_tx: Option<mpsc::UnboundedSender<(Stream, SocketAddr)>>,
        cmd_rx: mpsc::UnboundedReceiver<Command>,
        rng: ChaCha8Rng,
        first_port: u16,
    ) -> Driver {
        // Segments of connections this endpoint no longer has may come
        // with the checksum left out, as their connection agreed: the
        // datagram's UDP checksum has covered them.
        let checksum = match &params.server {
            Some(c) if !c.checksums => Checksum::Ignore,
            _ => Checksum::UNSPECIFIED_OR_OMITTED,
        };
        let max_gso_segments = if params.gso {
            udp.max_gso_segments().max(1)
        } else {
            1
        };
        let echo_probes = params.echo_probes;
        let omit_checksums = params.omit_checksums;
        let local_v4 = socket.local_addr().ok().map(|a| a.is_ipv4());
        let mut server = params.server.map(|c| for_sockets(c, omit_checksums));
        if let Some(config) = server.as_mut().filter(|_| echo_probes) {
            // A client's probe set the size; should the path stop carrying
            // it, fall back to the base (IPv6's, which fits either family).
            let v6: SocketAddr = (std::net::Ipv6Addr::LOCALHOST, 0).into();
            config
                .black_hole_mss
                .get_or_insert(pmtu::mss_for_datagram(pmtu::BASE_DATAGRAM_BYTES, v6));
        }
        let mut rng = rng;
        let cookies = (server.is_some() && params.syn_cookies).then(|| SynCookies::new(&mut rng));
        let challenge_budget = params.challenge_ack_limit.map(|n| {
            Arc::new(ChallengeBudget::new(
                n,
                rand_core::RngCore::next_u64(&mut rng),
            ))
        });
        Driver {
            socket,
            udp,
            link,
            stats,
            clock,
            server,
            checksum,
            accept_tx,
            cmd_rx,
            conns: HashMap::new(),
            deadlines: BTreeSet::new(),
            rng,
            next_port: first_port.clamp(*EPHEMERAL.start(), *EPHEMERAL.end()),
            max_connections: params.max_connections,
            half_open: HalfOpen::new(params.max_half_open, params.max_half_open_per_peer),
            per_peer: HashMap::new(),
            max_connections_per_peer: params.max_connections_per_peer,
            cookies,
            idle_eviction: params.idle_eviction,
            idle_release: params.idle_release,
            next_trim: params.idle_release.map(|d| Instant::ZERO + d),
            challenge_budget,
            window_budget: params
                .window_budget_bytes
                .map(|b| Arc::new(WindowBudget::new(b))),
            max_gso_segments,
            transmit_per_segment: params.transmit_per_segment,
            recv_slots: RecvSlots::new(),
            metas: vec![RecvMeta::default(); BATCH_SIZE],
            tx: TxArena {
                buf: vec![0; TX_ARENA],
                used: 0,
                batches: Vec::new(),
                parts: Vec::new(),
            },
            touched: Vec::new(),
            dirty: Vec::new(),
            closing: None,
            last_rx: None,
            echo_probes,
            omit_checksums,
            capture: params.capture,
            local_v4,
            probe_waiters: HashMap::new(),
            probes_out: Vec::new(),
        }
    }

    /// Runs until the endpoint is dropped or its graceful close ends.
    pub(crate) async fn run(mut self) {
        loop {
            let deadline = self.next_deadline();
            let sleep_until =
                deadline.map(|t| tokio::time::Instant::from_std(self.clock.to_std(t)));
            let wake = tokio::select! {
                cmd = self.cmd_rx.recv() => Wake::Command(cmd),
                r = self.socket.ready(Interest::READABLE | Interest::ERROR) => match r {
                    Ok(ready) if ready.is_error() => Wake::SocketError,
                    _ => Wake::Readable,
                },
                _ = self.link.notify.notified() => Wake::Other,
                _ = sleep_opt(sleep_until) => Wake::Other,
            };
            match wake {
                Wake::Command(None) => {
                    // Every endpoint handle is gone: stop at once.
                    break;
                }
                Wake::Command(Some(cmd)) => self.on_command(cmd),
                Wake::Readable => self.on_readable(),
                Wake::SocketError => self.on_socket_error(),
                Wake::Other => {}
            }
            let now = self.clock.now();
            self.collect_dirty();
            self.run_timers(now);
            if self.next_trim.is_some_and(|t| now >= t) {
                self.release_idle_memory(now);
            }
            self.service_touched(now).await;
            if let Some(c) = &mut self.capture {
                count_captured(&self.stats, c.maybe_flush().map(|()| 0));
            }
            if let Some((deadline, _)) = &self.closing {
                let settled = self.conns.values().all(|e| {
                    matches!(
                        e.shared.lock().conn.state(),
                        State::Closed | State::TimeWait
                    )
                });
                if settled || now >= *deadline {
                    break;
                }
            }
        }
        self.shutdown().await;
        if let Some(c) = &mut self.capture {
            count_captured(&self.stats, c.flush().map(|()| 0));
        }
    }

    /// Gives back the buffers of connections whose data has stood still
    /// for [`idle_release`](Self::idle_release) (see
    /// `Connection::release_idle_memory`), and sets the next sweep.
    fn release_idle_memory(&mut self, now: Instant) {
        let Some(idle) = self.idle_release else {
            return;
        };
        for e in self.conns.values() {
            let mut st = e.shared.lock();
            if now >= st.conn.last_progress() + idle {
                st.conn.release_idle_memory();
            }
        }
        self.recv_slots.release_returned();
        self.next_trim = Some(now + idle);
    }

    /// The earliest connection timer, the end of the grace period, or
    /// (while there are connections) the next idle sweep.
    fn next_deadline(&self) -> Option<Instant> {
        let mut t = self.closing.as_ref().map(|(d, _)| *d);
        if let Some(trim) = self.next_trim.filter(|_| !self.conns.is_empty()) {
            t = Some(t.map_or(trim, |t| t.min(trim)));
        }
        if let Some(&(x, _)) = self.deadlines.first() {
            t = Some(t.map_or(x, |t| t.min(x)));
        }
        t
    }

    /// Records `key`'s next timer (its entry's `timeout` and its place in
    /// `deadlines`).
    fn set_timeout(&mut self, key: Key, timeout: Option<Instant>) {
        let Some(e) = self.conns.get_mut(&key) else {
            return;
        };
        if e.timeout == timeout {
            return;
        }
        if let Some(old) = e.timeout {
            self.deadlines.remove(&(old, key));
        }
        if let Some(new) = timeout {
            self.deadlines.insert((new, key));
        }
        e.timeout = timeout;
    }

    fn touch(&mut self, key: Key) {
        if let Some(e) = self.conns.get_mut(&key) {
            if !e.touched {
                e.touched = true;
                self.touched.push(key);
            }
        }
    }

    fn collect_dirty(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        self.link.drain(&mut dirty);
        for shared in dirty.drain(..) {
            self.touch(Key::of(&shared));
        }
        self.dirty = dirty;
    }

    fn run_timers(&mut self, now: Instant) {
        while let Some(&(at, key)) = self.deadlines.first() {
            if at > now {
                break;
            }
            self.deadlines.pop_first();
            if let Some(e) = self.conns.get_mut(&key) {
                // Servicing the connection (it is touched below) sets its
                // next timer.
                e.timeout = None;
                let shared = e.shared.clone();
                shared
                    .span
                    .in_scope(|| shared.lock().conn.handle_timeout(now));
                self.touch(key);
            }
        }
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Connect {
                remote,
                config,
                reply,
            } => {
                let result = self.open(remote, *config);
                let _ = reply.send(result);
            }
            Command::Probe {
                remote,
                token,
                sizes,
                events,
            } => {
                for size in sizes {
                    self.probes_out
                        .push((remote, token, pmtu::probe(token, size)));
                }
                // Rounds whose connect was given up before it could say so.
                self.probe_waiters.retain(|_, w| !w.events.is_closed());
                self.probe_waiters
                    .insert(token, ProbeWaiter { remote, events });
            }
            Command::ProbeDone { token } => {
                self.probe_waiters.remove(&token);
            }
            Command::Close { grace, done } => {
                let now = self.clock.now();
                match &mut self.closing {
                    Some((_, waiters)) => waiters.push(done),
                    None => {
                        self.closing = Some((now + grace, vec![done]));
                        // No new connections from now on.
                        self.server = None;
                        let keys: Vec<Key> = self.conns.keys().copied().collect();
                        for key in keys {
                            if let Some(e) = self.conns.get(&key) {
                                e.shared.lock().conn.close();
                            }
                            self.touch(key);
                        }
                    }
                }
            }
        }
    }

    /// Starts an active open towards `remote` from a free local port.
    fn open(&mut self, remote: SocketAddr, config: Config) -> Result<Arc<ConnShared>, NetError> {
        if self.closing.is_some() {
            return Err(NetError::EndpointClosed);
        }
        let span = usize::from(EPHEMERAL.end() - EPHEMERAL.start()) + 1;
        let mut key = None;
        for _ in 0..span {
            let port = self.next_port;
            self.next_port = if port == *EPHEMERAL.end() {
                *EPHEMERAL.start()
            } else {
                port + 1
            };
            let k = Key {
                remote,
                local_port: port,
                remote_port: remote.port(),
            };
            if !self.conns.contains_key(&k) {
                key = Some(k);
                break;
            }
        }
        let key = key.ok_or(NetError::NoFreePort { remote })?;
        let now = self.clock.now();
        let conn = Connection::connect(
            for_sockets(config, self.omit_checksums),
            now,
            key.local_port,
            key.remote_port,
            &mut self.rng,
        )?;
        let shared = ConnShared::new(self.with_budget(conn), remote);
        shared.span.in_scope(|| tracing::debug!("connecting"));
        self.insert_entry(
            key,
            Entry {
                shared: shared.clone(),
                timeout: None,
                passive: false,
                half_open: false,
                touched: false,
            },
        );
        self.touch(key);
        Ok(shared)
    }

    /// Receives until the socket is drained (or for a bounded number of
    /// calls), feeding every segment to its connection.
    fn on_readable(&mut self) {
        let mut slots = std::mem::take(&mut self.recv_slots);
        let mut metas = std::mem::take(&mut self.metas);
        self.last_rx = None;
        for _ in 0..MAX_RECV_CALLS {
            let result = {
                let mut free = slots.ready.iter_mut().map(|s| IoSliceMut::new(&mut s[..]));
                let mut iovs: [IoSliceMut<'_>; BATCH_SIZE] =
                    std::array::from_fn(|_| free.next().expect("one slot per batch entry"));
                self.socket.try_io(Interest::READABLE, || {
                    self.udp.recv((&self.socket).into(), &mut iovs, &mut metas)
                })
            };
            match result {
                Ok(n) => {
                    let now = self.clock.now();
                    for (i, meta) in metas.iter().take(n).enumerate() {
                        let len = meta.len.min(RECV_SLOT);
                        // A large datagram's slot goes to its connection
                        // (a slice per segment), a small one is copied.
                        let shared = (len >= SHARE_MIN_DATAGRAM).then(|| slots.lend(i, len));
                        let data = match &shared {
                            Some(datagram) => &datagram[..],
                            None => &slots.ready[i][..len],
                        };
                        let stride = if meta.stride == 0 {
                            data.len().max(1)
                        } else {
                            meta.stride
                        };
                        let ce = meta.ecn == Some(EcnCodepoint::Ce);
                        self.stats.datagrams_received.fetch_add(1, Relaxed);
                        if let Some(c) = &mut self.capture {
                            let r = c.received(
                                meta.addr,
                                meta.dst_ip,
                                ecn_bits(meta.ecn),
                                data.chunks(stride),
                            );
                            count_captured(&self.stats, r);
                        }
                        for seg in data.chunks(stride) {
                            let whole = shared.as_ref().map(|d| d.slice_ref(seg));
                            self.on_segment(meta.addr, seg, whole.as_ref(), ce, now);
                        }
                    }
                    if self.tx.used >= TX_ARENA / 2 {
                        // Send what the segments drew before reading more.
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    // A pending ICMP error surfaces here; read it from the
                    // error queue and go on receiving.
                    tracing::trace!(error = %e, "receive error");
                    self.on_socket_error();
                }
            }
        }
        self.last_rx = None;
        self.recv_slots = slots;
        self.metas = metas;
    }

    /// Drains the socket's error queue: an ICMP port unreachable from a
    /// host we are opening connections to means nothing listens there.
    fn on_socket_error(&mut self) {
        for _ in 0..64 {
            match self.udp.recv_transport_error((&self.socket).into()) {
                Ok(Some(err)) => {
                    tracing::debug!(?err, "transport error");
                    if matches!(err.payload, quinn_udp::TransportErrorPayload::Unreachable) {
                        if let Some(addr) = err.addr {
                            self.refuse(addr.ip());
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::trace!(error = %e, "error queue");
                    break;
                }
            }
        }
        // Clear the error readiness, which is edge-triggered from here on.
        let _ = self.socket.try_io(Interest::ERROR, || {
            Err::<(), _>(io::Error::from(io::ErrorKind::WouldBlock))
        });
    }

    /// Fails the handshakes towards `ip`. The kernel reports the host that
    /// sent the ICMP message, not the port the datagram went to, so every
    /// connection still in SYN-SENT towards that host is refused.
    fn refuse(&mut self, ip: IpAddr) {
        for w in self.probe_waiters.values() {
            if w.remote.ip() == ip {
                let _ = w.events.send(ProbeEvent::Unreachable);
            }
        }
        let keys: Vec<Key> = self
            .conns
            .iter()
            .filter(|(k, _)| k.remote.ip() == ip)
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            let e = &self.conns[&key];
            let mut st = e.shared.lock();
            if st.conn.state() == State::SynSent {
                st.conn.abort();
                st.closed = Some(CloseReason::Refused);
                drop(st);
                self.touch(key);
            }
        }
    }

    /// One segment from `from`; `shared_bytes` is the same bytes when the
    /// connection may keep them by reference.
    fn on_segment(
        &mut self,
        from: SocketAddr,
        seg: &[u8],
        shared_bytes: Option<&Bytes>,
        ce: bool,
        now: Instant,
    ) {
        self.stats.segments_received.fetch_add(1, Relaxed);
        if seg.len() < HEADER_LEN {
            self.stats.malformed_dropped.fetch_add(1, Relaxed);
            return;
        }
        if pmtu::is_probe_format(seg) {
            self.on_probe_format(from, seg);
            return;
        }
        let key = Key {
            remote: from,
            local_port: u16::from_be_bytes([seg[2], seg[3]]),
            remote_port: u16::from_be_bytes([seg[0], seg[1]]),
        };
        // The segments of a GRO batch, and most of a receive batch, belong
        // to one connection: skip the table lookup and the touch for them.
        let cached = match &self.last_rx {
            Some((k, shared)) if *k == key => Some(shared.clone()),
            _ => None,
        };
        let shared = match cached {
            Some(shared) => Some(shared),
            None => self.conns.get(&key).map(|e| e.shared.clone()),
        };
        if let Some(shared) = shared {
            let entered = shared.span.enter();
            let mut st = shared.lock();
            let handled = match shared_bytes {
                Some(b) => st.conn.handle_segment_shared(now, b, ce),
                None => st.conn.handle_segment_with_ce(now, seg, ce),
            };
            if handled.is_err() {
                self.stats.malformed_dropped.fetch_add(1, Relaxed);
            } else if self.transmit_per_segment && self.tx.used < TX_ARENA / 2 {
                // What the connection answers this segment with (its ACK
                // policy's per-segment decision) goes out as if the
                // segment had arrived alone, in a datagram of its own.
                let gather = self.gathers(key.remote).then_some(&shared);
                self.tx
                    .fill(&mut st.conn, now, key.remote, self.max_gso_segments, gather);
            }
            drop(st);
            drop(entered);
            if self.last_rx.as_ref().is_none_or(|(k, _)| *k != key) {
                self.touch(key);
                self.last_rx = Some((key, shared));
            }
        } else {
            self.on_unknown(key, seg, ce, now);
        }
    }

    /// A datagram in the path MTU probe format: a probe is echoed (by an
    /// endpoint that takes part), an echo goes to the round
    /// that sent its probe, from the address the probe went to.
    fn on_probe_format(&mut self, from: SocketAddr, datagram: &[u8]) {
        match pmtu::parse(datagram) {
            Some(pmtu::Message::Probe { token, size }) if self.echo_probes => {
                // 28 bytes for at least 1 200: no amplification.
                self.tx.push(from, &pmtu::echo(token, size));
                self.stats.mtu_probes_echoed.fetch_add(1, Relaxed);
            }
            Some(pmtu::Message::Echo { token, size }) => {
                let live = match self.probe_waiters.get(&token) {
                    Some(w) if w.remote == from => {
                        w.events.send(ProbeEvent::Echoed(size as usize)).is_ok()
                    }
                    _ => {
                        self.stats.unknown_dropped.fetch_add(1, Relaxed);
                        true
                    }
                };
                if !live {
                    self.probe_waiters.remove(&token);
                }
            }
            Some(pmtu::Message::Probe { .. }) => {
                self.stats.unknown_dropped.fetch_add(1, Relaxed);
            }
            None => {
                self.stats.malformed_dropped.fetch_add(1, Relaxed);
            }
        }
    }

    /// A segment for no known connection: a SYN opens one on a listening
    /// endpoint, anything else but a reset is answered with a reset
    /// (RFC 9293 section 3.10.7.1).
    fn on_unknown(&mut self, key: Key, seg: &[u8], ce: bool, now: Instant) {
        if self.server.is_some() {
            if let Some((dcid, scid)) = super::foreign::quic_initial_ids(seg) {
                // A QUIC client (`--transport quic` at the other end):
                // tell it at once that nothing here speaks QUIC.
                let answer = super::foreign::version_negotiation(dcid, scid);
                self.tx.push(key.remote, &answer);
                self.stats.unknown_dropped.fetch_add(1, Relaxed);
                tracing::warn!(peer = %key.remote, "a QUIC client tried to connect to an ackwise endpoint");
                return;
            }
        }
        let repr = match SegmentRepr::parse(seg, self.checksum) {
            Ok(r) => r,
            Err(_) => {
                self.stats.malformed_dropped.fetch_add(1, Relaxed);
                return;
            }
        };
        let f = repr.flags;
        let Some(rst) = repr.reset_reply() else {
            self.stats.unknown_dropped.fetch_add(1, Relaxed);
            return;
        };
        let opens = f.contains(Flags::SYN) && !f.contains(Flags::ACK) && self.server.is_some();
        if opens && self.peer_at_cap(key.remote) {
            // The peer holds its share of the table: the reset below.
            self.stats.per_peer_refused.fetch_add(1, Relaxed);
        } else if opens {
            if self.cookies.is_some() && !self.has_room_for_syn(key.remote) {
                self.answer_with_cookie(key, &repr, now);
                return;
            }
            if !self.make_room_for_syn(key.remote, now) {
                self.stats.unknown_dropped.fetch_add(1, Relaxed);
                return;
            }
            if let Some(config) = &self.server {
                match Connection::accept(config.clone(), now, seg, &mut self.rng) {
                    Ok(conn) => {
                        self.insert_passive(key, conn, true, "SYN received");
                        self.half_open.add(key.remote, key);
                    }
                    Err(_) => {
                        self.stats.malformed_dropped.fetch_add(1, Relaxed);
                    }
                }
                return;
            }
        }
        if f.contains(Flags::ACK) && self.accept_cookie(key, &repr, seg, ce, now) {
            return;
        }
        let mut bytes = [0u8; HEADER_LEN + MAX_OPTIONS_LEN];
        if let Ok(n) = rst.emit(&mut bytes, self.checksum) {
            if self.tx.push(key.remote, &bytes[..n]) {
                self.stats.resets_sent.fetch_add(1, Relaxed);
            }
        }
        self.stats.unknown_dropped.fetch_add(1, Relaxed);
    }

    /// `conn`, drawing its challenge ACKs and its windows' wider margin
    /// also from the endpoint's budgets.
    fn with_budget(&self, mut conn: Connection) -> Connection {
        if let Some(b) = &self.challenge_budget {
            conn.share_challenge_budget(b.clone());
        }
        if let Some(b) = &self.window_budget {
            conn.share_window_budget(b.clone());
        }
        conn
    }

    /// Whether a SYN from `peer` fits under the half-open limits and in
    /// the table as they are, without dropping anything.
    fn has_room_for_syn(&mut self, peer: SocketAddr) -> bool {
        let conns = &self.conns;
        let table_full = conns.len() >= self.max_connections;
        self.half_open
            .has_room(peer, table_full, |k| still_half_open(conns, k))
    }

    /// Answers a SYN with a SYN-ACK whose ISS is a cookie, keeping nothing.
    fn answer_with_cookie(&mut self, key: Key, syn: &SegmentRepr<'_>, now: Instant) {
        let (Some(cookies), Some(config)) = (&self.cookies, &self.server) else {
            return;
        };
        let tuple = tuple_of(&key);
        let Some(v) = cookies.answer(now, &tuple, syn, config.timestamps, self.checksum) else {
            self.stats.malformed_dropped.fetch_add(1, Relaxed);
            return;
        };
        // The SYN-ACK is exactly what a connection accepting the vouched
        // SYN would send first; the connection is then dropped.
        match Connection::accept_stateless(
            config.clone(),
            now,
            &v.syn,
            v.iss,
            v.ts_offset,
            &mut self.rng,
        ) {
            Ok(mut conn) => {
                // poll_transmit wants room for a segment with payload.
                let mut bytes = [0u8; 2 * (HEADER_LEN + MAX_OPTIONS_LEN)];
                if let Some(n) = conn.poll_transmit(now, &mut bytes) {
                    if self.tx.push(key.remote, &bytes[..n]) {
                        self.stats.syn_cookies_sent.fetch_add(1, Relaxed);
                    }
                }
            }
            Err(_) => {
                self.stats.malformed_dropped.fetch_add(1, Relaxed);
            }
        }
    }

    /// An ACK for no connection that returns one of this endpoint's SYN
    /// cookies opens the connection the cookie stands for. Returns whether
    /// it did.
    fn accept_cookie(
        &mut self,
        key: Key,
        ack: &SegmentRepr<'_>,
        seg: &[u8],
        ce: bool,
        now: Instant,
    ) -> bool {
        let Some(cookies) = &self.cookies else {
            return false;
        };
        let Some(v) = cookies.check(now, &tuple_of(&key), ack, self.checksum) else {
            return false;
        };
        if self.peer_at_cap(key.remote) {
            self.stats.per_peer_refused.fetch_add(1, Relaxed);
            return false;
        }
        if self.conns.len() >= self.max_connections && !self.evict_idle(now) {
            return false;
        }
        let Some(config) = self.server.clone() else {
            return false;
        };
        let Ok(conn) = Connection::accept_cookie_ack(
            config,
            now,
            &v.syn,
            v.iss,
            v.ts_offset,
            (seg, ce),
            &mut self.rng,
        ) else {
            return false;
        };
        self.insert_passive(key, conn, false, "connection rebuilt from a SYN cookie");
        self.stats.syn_cookies_accepted.fetch_add(1, Relaxed);
        true
    }

    /// `peer`'s address has opened as many connections as it may.
    fn peer_at_cap(&self, peer: SocketAddr) -> bool {
        self.per_peer.get(&peer.ip()).copied().unwrap_or(0) >= self.max_connections_per_peer
    }

    /// Puts a connection into the table under `key` (which no connection
    /// holds: new connections take free ports or unknown port pairs).
    fn insert_entry(&mut self, key: Key, entry: Entry) {
        if let Some(old) = self.conns.insert(key, entry) {
            debug_assert!(false, "a second connection under {key:?}");
            if let Some(t) = old.timeout {
                self.deadlines.remove(&(t, key));
            }
        }
    }

    /// Takes `key`'s connection out of the table.
    fn remove_entry(&mut self, key: &Key) {
        self.set_timeout(*key, None);
        let Some(entry) = self.conns.remove(key) else {
            return;
        };
        if entry.passive {
            let ip = key.remote.ip();
            if let Some(n) = self.per_peer.get_mut(&ip) {
                *n -= 1;
                if *n == 0 {
                    self.per_peer.remove(&ip);
                }
            }
        }
    }

    /// Enters a connection a peer opened into the table (counted as half
    /// open while its handshake is under way) and has it serviced.
    fn insert_passive(&mut self, key: Key, conn: Connection, half_open: bool, what: &str) {
        let shared = ConnShared::new(self.with_budget(conn), key.remote);
        shared.span.in_scope(|| tracing::debug!("{what}"));
        *self.per_peer.entry(key.remote.ip()).or_insert(0) += 1;
        self.insert_entry(
            key,
            Entry {
                shared,
                timeout: None,
                passive: true,
                half_open,
                touched: false,
            },
        );
        self.touch(key);
    }

    /// Whether a new SYN from `peer` may open a connection, after dropping
    /// a half-open one if the half-open limits or the table say so (see
    /// [`HalfOpen`]; the dropped connection's peer, if real, retransmits
    /// its SYN).
    fn make_room_for_syn(&mut self, peer: SocketAddr, now: Instant) -> bool {
        let conns = &self.conns;
        let table_full = conns.len() >= self.max_connections;
        match self
            .half_open
            .room_for(peer, table_full, |k| still_half_open(conns, k))
        {
            Room::Free => true,
            Room::Full => table_full && self.evict_idle(now),
            Room::Evict(key) => {
                self.remove_entry(&key);
                self.stats.half_open_evicted.fetch_add(1, Relaxed);
                if self.last_rx.as_ref().is_some_and(|(k, _)| *k == key) {
                    self.last_rx = None;
                }
                self.conns.len() < self.max_connections
            }
        }
    }

    /// Resets the established connection whose data has stood still the
    /// longest, if for at least [`idle_eviction`](Self::idle_eviction),
    /// to make room in a full table. Its entry goes when the driver next
    /// services it, so the table may hold one connection too many until
    /// then. Returns whether one was evicted.
    fn evict_idle(&mut self, now: Instant) -> bool {
        let Some(min_idle) = self.idle_eviction else {
            return false;
        };
        let mut stillest: Option<(Instant, Key)> = None;
        for (key, entry) in &self.conns {
            if entry.half_open {
                continue;
            }
            let st = entry.shared.lock();
            let state = st.conn.state();
            if st.conn.is_closed() || matches!(state, State::SynSent | State::SynReceived) {
                continue;
            }
            let since = st.conn.last_progress();
            if stillest.is_none_or(|(s, _)| since < s) {
                stillest = Some((since, *key));
            }
        }
        let Some((since, key)) = stillest else {
            return false;
        };
        if now < since + min_idle {
            return false;
        }
        let Some(entry) = self.conns.get(&key) else {
            return false;
        };
        let shared = entry.shared.clone();
        {
            let _entered = shared.span.enter();
            let mut st = shared.lock();
            st.conn.evict();
            tracing::debug!("evicted: idle while the table was full");
            self.tx
                .fill(&mut st.conn, now, key.remote, self.max_gso_segments, None);
        }
        self.stats.idle_evicted.fetch_add(1, Relaxed);
        self.touch(key);
        true
    }

    /// A half-open connection connected or closed: it no longer counts
    /// against the limits.
    fn leave_half_open(&mut self, key: Key) {
        let Some(entry) = self.conns.get_mut(&key) else {
            return;
        };
        if !entry.half_open {
            return;
        }
        entry.half_open = false;
        let conns = &self.conns;
        self.half_open
            .left(key.remote, |k| conns.get(k).is_some_and(|e| e.half_open));
    }

    /// Events, transmissions, wakeups and timer bookkeeping for every
    /// connection touched since the last time.
    async fn service_touched(&mut self, now: Instant) {
        let mut touched = std::mem::take(&mut self.touched);
        for key in touched.drain(..) {
            self.service(key, now).await;
        }
        self.touched = touched;
        self.send_pending().await;
    }

    async fn service(&mut self, key: Key, now: Instant) {
        let Some(entry) = self.conns.get_mut(&key) else {
            return;
        };
        entry.touched = false;
        let shared = entry.shared.clone();
        let passive = entry.passive;
        let mut newly_connected = false;
        loop {
            let full;
            let closed;
            let timeout;
            {
                let _entered = shared.span.enter();
                let mut st = shared.lock();
                while let Some(ev) = st.conn.poll_event() {
                    match ev {
                        Event::Connected => {
                            st.connected = true;
                            newly_connected = true;
                            tracing::debug!("established");
                        }
                        Event::PeerClosed => {}
                        Event::Closed(reason) => {
                            if st.closed.is_none() {
                                st.closed = Some(reason);
                            }
                            tracing::debug!(%reason, "closed");
                        }
                    }
                }
                let gather = self.gathers(key.remote).then_some(&shared);
                full = self
                    .tx
                    .fill(&mut st.conn, now, key.remote, self.max_gso_segments, gather);
                if !full {
                    // Wake the handles once for everything this batch brought.
                    let readable =
                        st.conn.readable() > 0 || st.conn.peer_closed() || st.closed.is_some();
                    if readable {
                        if let Some(w) = st.read_waker.take() {
                            w.wake();
                        }
                    }
                    let threshold = (st.conn.send_buffer_limit() / 4).max(1);
                    let writable = newly_connected
                        || st.conn.send_capacity() >= threshold
                        || st.closed.is_some()
                        || st.fin_acknowledged();
                    if writable {
                        if let Some(w) = st.write_waker.take() {
                            w.wake();
                        }
                    }
                }
                closed = st.conn.is_closed();
                timeout = st.conn.poll_timeout();
            }
            if full {
                self.send_pending().await;
                continue;
            }
            self.set_timeout(key, timeout);
            if closed || newly_connected {
                self.leave_half_open(key);
            }
            if closed {
                self.remove_entry(&key);
            } else if newly_connected && passive {
                self.stats.connections_accepted.fetch_add(1, Relaxed);
                if let Some(tx) = &self.accept_tx {
                    let stream = Stream::new(shared.clone(), self.link.clone());
                    // If nobody accepts any more, the stream's drop closes
                    // the connection.
                    let _ = tx.send((stream, key.remote));
                }
            }
            break;
        }
    }

    /// Whether segments to `dest` are sent gathered (see [`gather`]):
    /// where the platform can, unless every segment is captured (the
    /// capture wants them whole), and only to an address of the socket's
    /// own family, for which the control messages are the family's.
    fn gathers(&self, dest: SocketAddr) -> bool {
        gather::SUPPORTED
            && self.capture.is_none()
            && match dest {
                SocketAddr::V4(_) => self.local_v4 == Some(true),
                SocketAddr::V6(v6) => {
                    self.local_v4 == Some(false) && v6.ip().to_ipv4_mapped().is_none()
                }
            }
    }

    /// Sends every queued batch, waiting for the socket when its buffer is
    /// full.
    async fn send_pending(&mut self) {
        self.send_probes().await;
        let batches = std::mem::take(&mut self.tx.batches);
        for b in &batches {
            // A gathered batch's bytes are not all in the arena.
            let whole = match b.gathered {
                None => &self.tx.buf[b.start..b.start + b.len],
                Some(_) => &[],
            };
            let transmit = Transmit {
                destination: b.dest,
                ecn: Some(EcnCodepoint::Ect0),
                contents: whole,
                segment_size: (b.count > 1).then_some(b.segment),
                src_ip: None,
            };
            let mut retried = false;
            loop {
                let r = self
                    .socket
                    .try_io(Interest::WRITABLE, || match &b.gathered {
                        None => self
                            .udp
                            .try_send((&self.socket).into(), &transmit)
                            .map(|()| b.count),
                        Some(g) => send_gathered(&self.socket, &self.tx, b, g),
                    });
                match r {
                    Ok(0) => break,
                    Ok(segments) => {
                        self.stats.datagrams_sent.fetch_add(1, Relaxed);
                        self.stats.segments_sent.fetch_add(segments as u64, Relaxed);
                        if let Some(c) = &mut self.capture {
                            let r = c.sent(
                                b.dest,
                                ecn_bits(transmit.ecn),
                                transmit.contents.chunks(b.segment.max(1)),
                            );
                            count_captured(&self.stats, r);
                        }
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if self.socket.writable().await.is_err() {
                            break;
                        }
                    }
                    Err(e) if !retried && e.kind() == io::ErrorKind::ConnectionRefused => {
                        // An earlier datagram drew an ICMP error, reported
                        // on this call; it says nothing about this one. The
                        // error queue is read when the socket signals it.
                        retried = true;
                    }
                    Err(e) => {
                        // Lost like any datagram; the connection recovers.
                        tracing::debug!(error = %e, dest = %b.dest, "send failed");
                        self.stats.send_errors.fetch_add(1, Relaxed);
                        if b.gathered.is_some() && b.count > 1 && is_gso_refusal(&e) {
                            // A device that cannot segment (quinn-udp's
                            // own sends stop using GSO on this error too).
                            self.max_gso_segments = 1;
                        }
                        break;
                    }
                }
            }
        }
        let mut batches = batches;
        batches.clear();
        self.tx.batches = batches;
        self.tx.used = 0;
        self.tx.parts.clear();
    }

    /// Sends the path MTU probes queued, each in a datagram of its own;
    /// one the kernel will not send (above the interface's MTU) is
    /// reported refused to its round.
    async fn send_probes(&mut self) {
        for (dest, token, datagram) in std::mem::take(&mut self.probes_out) {
            let transmit = Transmit {
                destination: dest,
                ecn: None,
                contents: &datagram,
                segment_size: None,
                src_ip: None,
            };
            let mut retried = false;
            let sent = loop {
                let r = self.socket.try_io(Interest::WRITABLE, || {
                    self.udp.try_send((&self.socket).into(), &transmit)
                });
                match r {
                    Ok(()) => break true,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if self.socket.writable().await.is_err() {
                            break false;
                        }
                    }
                    Err(e) if !retried && e.kind() == io::ErrorKind::ConnectionRefused => {
                        // An earlier datagram's ICMP error, not this one's.
                        retried = true;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, dest = %dest, bytes = datagram.len(), "path MTU probe not sent");
                        break false;
                    }
                }
            };
            if sent {
                self.stats.datagrams_sent.fetch_add(1, Relaxed);
                self.stats.mtu_probes_sent.fetch_add(1, Relaxed);
            } else if let Some(w) = self.probe_waiters.get(&token) {
                let _ = w.events.send(ProbeEvent::Refused(datagram.len()));
            }
        }
    }

    /// Aborts what is left, tells the handles and the closers, and ends.
    async fn shutdown(&mut self) {
        let now = self.clock.now();
        let keys: Vec<Key> = self.conns.keys().copied().collect();
        for key in &keys {
            let shared = self.conns[key].shared.clone();
            {
                let mut st = shared.lock();
                // A connection in TIME-WAIT has delivered everything both
                // ways: a reset would only tell the peer of an error there
                // was not.
                if !st.conn.is_closed() && st.conn.state() != State::TimeWait {
                    st.conn.abort();
                }
                // Only the reset is left to send.
                self.tx.fill(&mut st.conn, now, key.remote, 1, None);
            }
            if self.tx.used + 2 * (HEADER_LEN + MAX_OPTIONS_LEN) > TX_ARENA {
                self.send_pending().await;
            }
        }
        self.send_pending().await;
        for (_, e) in self.conns.drain() {
            let mut st = e.shared.lock();
            st.endpoint_gone = true;
            st.wake_all();
        }
        // Handles queued after this point find `endpoint_gone` set on the
        // connections they hold.
        self.link.drain(&mut Vec::new());
        if let Some((_, waiters)) = self.closing.take() {
            for w in waiters {
                let _ = w.send(());
            }
        }
    }
}

impl TxArena {
    /// Queues one datagram on its own; false when there is no room.
    fn push(&mut self, dest: SocketAddr, bytes: &[u8]) -> bool {
        if self.used + bytes.len() > self.buf.len() {
            return false;
        }
        self.buf[self.used..self.used + bytes.len()].copy_from_slice(bytes);
        self.batches.push(TxBatch {
            dest,
            start: self.used,
            len: bytes.len(),
            segment: bytes.len(),
            count: 1,
            gathered: None,
        });
        self.used += bytes.len();
        true
    }

    /// Collects `conn`'s segments into GSO batches of equal-sized
    /// segments (the last may be shorter). With `gather` (the connection's
    /// shared state) data segments whose payload needs no checksum leave
    /// it in the send buffer, and only their headers take room here.
    /// Returns true when the arena filled up before the connection ran out
    /// of segments.
    fn fill(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        dest: SocketAddr,
        max_segments: usize,
        gather: Option<&Arc<ConnShared>>,
    ) -> bool {
        let seg_cap = usize::from(conn.mss()) + HEADER_LEN + MAX_OPTIONS_LEN;
        let mut open: Option<OpenBatch> = None;
        loop {
            if self.used + seg_cap > self.buf.len() {
                self.close_batch(&mut open, dest, gather);
                return true;
            }
            let out = &mut self.buf[self.used..self.used + seg_cap];
            let emitted = match gather {
                Some(_) => conn.poll_transmit_gather(now, out),
                None => conn.poll_transmit(now, out).map(Emitted::Whole),
            };
            let (n, kept, part) = match emitted {
                None => break,
                Some(Emitted::Whole(n)) => (n, n, None),
                Some(Emitted::Header {
                    header_len,
                    payload_offset,
                    payload_len,
                }) => (
                    header_len + payload_len,
                    header_len,
                    Some(TxPart {
                        header: self.used..self.used + header_len,
                        payload_offset,
                        payload_len,
                    }),
                ),
            };
            let joins = open.as_ref().is_some_and(|b| {
                b.first_part.is_some() == part.is_some()
                    && n <= b.segment
                    && b.len + n <= MAX_GSO_BYTES
            });
            if !joins {
                self.close_batch(&mut open, dest, gather);
            }
            let gathered = part.is_some();
            if let Some(part) = part {
                self.parts.push(part);
            }
            let batch = open.get_or_insert(OpenBatch {
                start: self.used,
                segment: n,
                count: 0,
                len: 0,
                first_part: gathered.then(|| self.parts.len() - 1),
            });
            batch.count += 1;
            batch.len += n;
            self.used += kept;
            if n < batch.segment || batch.count >= max_segments {
                self.close_batch(&mut open, dest, gather);
            }
        }
        self.close_batch(&mut open, dest, gather);
        false
    }

    fn close_batch(
        &mut self,
        open: &mut Option<OpenBatch>,
        dest: SocketAddr,
        gather: Option<&Arc<ConnShared>>,
    ) {
        if let Some(b) = open.take() {
            let gathered = b.first_part.zip(gather).map(|(first, shared)| Gathered {
                shared: shared.clone(),
                parts: first..self.parts.len(),
            });
            self.batches.push(TxBatch {
                dest,
                start: b.start,
                len: b.len,
                segment: b.segment,
                count: b.count,
                gathered,
            });
        }
    }
}

/// Sends a gathered batch: each segment's header from the arena and its
/// payload from its connection's send buffer, read in place under the
/// connection's lock. A segment whose payload is no longer held (an ACK
/// that arrived after it was queued covered it, or the connection was
/// dropped) is left out: the rest are still equal-sized but for the last.
/// Returns the segments sent, 0 when none was left.
fn send_gathered(
    socket: &UdpSocket,
    tx: &TxArena,
    batch: &TxBatch,
    gathered: &Gathered,
) -> io::Result<usize> {
    let st = gathered.shared.lock();
    let parts = &tx.parts[gathered.parts.clone()];
    let mut pieces = Vec::with_capacity(3 * parts.len());
    let mut count = 0;
    for part in parts {
        let Some(payload) = st.conn.sent_payload(part.payload_offset, part.payload_len) else {
            continue;
        };
        pieces.push(IoSlice::new(&tx.buf[part.header.clone()]));
        pieces.extend(payload.map(IoSlice::new));
        count += 1;
    }
    if count == 0 {
        return Ok(0);
    }
    // Segments are at most 65 535 bytes (a UDP payload).
    let segment_size = (count > 1).then_some(batch.segment as u16);
    gather::send(
        socket,
        batch.dest,
        &pieces,
        segment_size,
        EcnCodepoint::Ect0 as u8,
    )?;
    Ok(count)
}

/// Whether a send's error says the device cannot segment GSO batches
/// (Linux answers EIO when the device lacks the checksum offload that
/// segmentation needs).
fn is_gso_refusal(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    return e.raw_os_error() == Some(libc::EIO);
    #[cfg(not(target_os = "linux"))]
    return {
        let _ = e;
        false
    };
}

/// The two ECN bits of the IP header for a codepoint (0 when none).
fn ecn_bits(ecn: Option<EcnCodepoint>) -> u8 {
    ecn.map_or(0, |e| e as u8)
}

/// Counts captured segments, or the capture's failure: the capture
/// stops at its first error (the transfer goes on), which is logged once
/// and left in the endpoint's counters for the application to report.
fn count_captured(stats: &StatsCell, written: io::Result<u64>) {
    match written {
        Ok(n) => {
            stats.segments_captured.fetch_add(n, Relaxed);
        }
        Err(e) => {
            tracing::warn!(error = %e, "capture stopped");
            stats.capture_errors.fetch_add(1, Relaxed);
        }
    }
}

/// A connection's config as this driver runs it: a paced or spreading
/// sender may catch up by one timer tick, since the driver's wake-ups come
/// up to a tick late (see `sender::pacing` and `sender::spread`); without
/// that such a flow sends about one segment per tick. And it offers to
/// leave the TCP checksum out, which UDP's checksum makes redundant,
/// unless the endpoint was told not to.
fn for_sockets(config: Config, omit_checksums: bool) -> Config {
    let mut config = config.with_late_timers(super::PACING_TIMER_TICK);
    config.omit_checksums = omit_checksums;
    config
}

async fn sleep_opt(until: Option<tokio::time::Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Whether `key` names a connection still in its handshake. The entry's
/// flag lags the connection until the driver services it, so the state is
/// asked too: a handshake completed in this very batch must not count.
fn still_half_open(conns: &HashMap<Key, Entry>, key: &Key) -> bool {
    conns
        .get(key)
        .is_some_and(|e| e.half_open && e.shared.lock().conn.state() == State::SynReceived)
}

/// The cookie's view of a connection key.
fn tuple_of(key: &Key) -> Tuple {
    Tuple {
        peer: key.remote,
        peer_port: key.remote_port,
        local_port: key.local_port,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_slot_comes_back_once_read() {
        let mut slots = RecvSlots::new();
        let first = slots.ready[0].as_ptr();
        let datagram = slots.lend(0, 40_000);
        assert_eq!(datagram.len(), 40_000);
        assert_eq!(datagram.as_ptr(), first);
        // Still referred to: a new slot takes its place.
        let second = slots.lend(0, 30_000);
        assert_ne!(second.as_ptr(), first);
        assert_eq!(slots.lent.len(), 2);
        // Read and dropped: the next slot needed is the first one again.
        drop(datagram);
        let _third = slots.lend(0, 20_000);
        assert_eq!(slots.ready[0].as_ptr(), first);
        assert_eq!(slots.ready[0].len(), RECV_SLOT);
        drop(second);
        slots.release_returned();
        assert_eq!(slots.lent.len(), 1, "only the slot still lent is kept");
    }

    #[test]
    fn lent_slots_tracked_are_bounded() {
        let mut slots = RecvSlots::new();
        let held: Vec<Bytes> = (0..MAX_LENT + 10).map(|_| slots.lend(0, 20_000)).collect();
        assert_eq!(slots.lent.len(), MAX_LENT);
        assert!(held.iter().all(|d| d.len() == 20_000));
    }
}
