//! A small deterministic in-memory pipe between two connections.
//!
//! It has a fixed one-way delay and seeded loss, reordering and
//! duplication, and nothing else: no rate, no queue. The link emulator
//! with real links and queues is a separate module; this one exists so the
//! transport can be tested and benchmarked on its own.

use super::rng::TestRng;
use crate::connection::{AcceptError, Config, ConfigError, Connection, Event};
use crate::time::{Duration, Instant};
use alloc::collections::BinaryHeap;
use alloc::{vec, vec::Vec};
use bytes::Bytes;
use core::cmp::Reverse;
use rand_core::RngCore;

/// Impairments of the pipe, applied independently to each direction.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeConfig {
    /// One-way delay.
    pub delay: Duration,
    /// Probability that a segment is lost.
    pub loss: f64,
    /// Probability that a segment is held back by up to `reorder_delay`
    /// more, so later segments overtake it.
    pub reorder: f64,
    /// Largest extra delay of a reordered segment.
    pub reorder_delay: Duration,
    /// Probability that a segment arrives twice.
    pub duplicate: f64,
    /// Seed of the pipe's random choices (and the connections' ISNs).
    pub seed: u64,
}

impl Default for PipeConfig {
    fn default() -> Self {
        PipeConfig {
            delay: Duration::from_millis(10),
            loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(5),
            duplicate: 0.0,
            seed: 0,
        }
    }
}

/// Why a pipe could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipeError {
    /// A connection configuration is invalid.
    Config(ConfigError),
    /// The server could not accept the client's SYN.
    Accept(AcceptError),
}

// Written out rather than derived: the bare core needs no proc-macro crates.
impl core::fmt::Display for PipeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PipeError::Config(e) => e.fmt(f),
            PipeError::Accept(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for PipeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PipeError::Config(e) => core::error::Error::source(e),
            PipeError::Accept(e) => core::error::Error::source(e),
        }
    }
}

impl From<ConfigError> for PipeError {
    fn from(e: ConfigError) -> Self {
        PipeError::Config(e)
    }
}

impl From<AcceptError> for PipeError {
    fn from(e: AcceptError) -> Self {
        PipeError::Accept(e)
    }
}

/// Which end of the pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The end that opened the connection.
    Client,
    /// The end that accepted it.
    Server,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: Instant,
    /// Tie-breaker that keeps delivery order deterministic.
    serial: u64,
    to_server: bool,
    buf: usize,
}

/// Counters of what the pipe did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipeStats {
    /// Segments offered to the pipe.
    pub sent: u64,
    /// Segments delivered (duplicates included).
    pub delivered: u64,
    /// Segments dropped.
    pub lost: u64,
    /// Segments delivered late on purpose.
    pub reordered: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
}

/// Two connections joined by an impaired pipe, on a virtual clock.
#[derive(Debug)]
pub struct Pipe {
    config: PipeConfig,
    now: Instant,
    rng: TestRng,
    client: Connection,
    server: Option<Connection>,
    server_config: Config,
    queue: BinaryHeap<Reverse<InFlight>>,
    /// Packet buffers, recycled so steady state does not allocate.
    buffers: Vec<Vec<u8>>,
    /// Length of the segment held in each buffer (buffers keep their full
    /// size so reuse never zeroes or reallocates them).
    lens: Vec<usize>,
    free: Vec<usize>,
    serial: u64,
    stats: PipeStats,
    /// Size of each packet buffer: the larger MSS plus header room.
    segment_buf: usize,
    /// Everything one side sends is lost while it is set (client, server).
    blackout: [bool; 2],
    max_segment_bytes: Option<usize>,
}

/// Room for the largest header beside a full segment.
const HEADER_ROOM: usize = 60;

impl Pipe {
    /// A client configured with `client` connecting to a server configured
    /// with `server`. The clock starts at zero.
    pub fn new(config: PipeConfig, client: Config, server: Config) -> Result<Pipe, PipeError> {
        server.validate()?;
        let mut rng = TestRng::seed_from_u64(config.seed);
        let now = Instant::ZERO;
        let segment_buf = usize::from(client.mss.max(server.mss)) + HEADER_ROOM;
        let client = Connection::connect(client, now, 40_000, 80, &mut rng)?;
        Ok(Pipe {
            config,
            now,
            rng,
            client,
            server: None,
            server_config: server,
            queue: BinaryHeap::new(),
            buffers: Vec::new(),
            lens: Vec::new(),
            free: Vec::new(),
            serial: 0,
            stats: PipeStats::default(),
            segment_buf,
            blackout: [false; 2],
            max_segment_bytes: None,
        })
    }

    /// Virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// What the pipe did so far.
    pub fn stats(&self) -> PipeStats {
        self.stats
    }

    /// The client connection.
    pub fn client(&mut self) -> &mut Connection {
        &mut self.client
    }

    /// The server connection, once the SYN has arrived.
    pub fn server(&mut self) -> Option<&mut Connection> {
        self.server.as_mut()
    }

    /// One side's connection, if it exists.
    pub fn side(&mut self, side: Side) -> Option<&mut Connection> {
        match side {
            Side::Client => Some(&mut self.client),
            Side::Server => self.server.as_mut(),
        }
    }

    /// Loses everything `side` sends from now on while `lost` is set, as
    /// an outage of one direction (for instance every ACK of a window).
    pub fn set_blackout(&mut self, side: Side, lost: bool) {
        self.blackout[match side {
            Side::Client => 0,
            Side::Server => 1,
        }] = lost;
    }

    /// Loses every segment longer than `bytes` (header included), both
    /// ways, from now on: a path whose MTU shrank. `None` lifts it.
    pub fn set_max_segment_bytes(&mut self, bytes: Option<usize>) {
        self.max_segment_bytes = bytes;
    }

    fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn take_buffer(&mut self) -> usize {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.buffers.push(vec![0; self.segment_buf]);
                self.lens.push(0);
                self.buffers.len() - 1
            }
        }
    }

    /// Collects every segment both ends want to send now and puts it on
    /// the pipe.
    fn flush(&mut self) {
        for to_server in [true, false] {
            loop {
                let idx = self.take_buffer();
                let mut buf = core::mem::take(&mut self.buffers[idx]);
                let conn = if to_server {
                    Some(&mut self.client)
                } else {
                    self.server.as_mut()
                };
                let n = conn.and_then(|c| c.poll_transmit(self.now, &mut buf));
                match n {
                    Some(n) => {
                        self.buffers[idx] = buf;
                        self.lens[idx] = n;
                        self.launch(idx, to_server);
                    }
                    None => {
                        self.buffers[idx] = buf;
                        self.free.push(idx);
                        break;
                    }
                }
            }
        }
    }

    fn launch(&mut self, idx: usize, to_server: bool) {
        self.stats.sent += 1;
        let dark = self.blackout[usize::from(!to_server)]
            || self.max_segment_bytes.is_some_and(|m| self.lens[idx] > m);
        if self.uniform() < self.config.loss || dark {
            self.stats.lost += 1;
            self.release(idx);
            return;
        }
        let mut at = self.now + self.config.delay;
        if self.uniform() < self.config.reorder {
            self.stats.reordered += 1;
            let extra = self.config.reorder_delay.as_nanos() as f64 * self.uniform();
            at += Duration::from_nanos(extra as u64);
        }
        if self.uniform() < self.config.duplicate {
            self.stats.duplicated += 1;
            let copy = self.take_buffer();
            let (src, dst) = if copy < idx {
                let (a, b) = self.buffers.split_at_mut(idx);
                (&b[0], &mut a[copy])
            } else {
                let (a, b) = self.buffers.split_at_mut(copy);
                (&a[idx], &mut b[0])
            };
            let n = self.lens[idx];
            dst[..n].copy_from_slice(&src[..n]);
            self.lens[copy] = n;
            self.push(at + Duration::from_micros(1), to_server, copy);
        }
        self.push(at, to_server, idx);
    }

    fn push(&mut self, at: Instant, to_server: bool, buf: usize) {
        self.serial += 1;
        self.queue.push(Reverse(InFlight {
            at,
            serial: self.serial,
            to_server,
            buf,
        }));
    }

    fn release(&mut self, idx: usize) {
        self.free.push(idx);
    }

    /// The next time something happens, if anything will.
    fn next_event(&self) -> Option<Instant> {
        let mut t = self.queue.peek().map(|Reverse(p)| p.at);
        let timers = [
            self.client.poll_timeout(),
            self.server.as_ref().and_then(|s| s.poll_timeout()),
        ];
        for x in timers.into_iter().flatten() {
            t = Some(t.map_or(x, |t| t.min(x)));
        }
        t
    }

    /// Advances to the next event and processes it. Returns false when
    /// nothing is left to happen.
    pub fn step(&mut self) -> Result<bool, PipeError> {
        self.flush();
        let Some(t) = self.next_event() else {
            return Ok(false);
        };
        self.now = self.now.max(t);
        // One segment at a time, each followed by whatever it provokes, as
        // a host would handle back-to-back arrivals.
        while self.queue.peek().is_some_and(|Reverse(p)| p.at <= self.now) {
            let Some(Reverse(p)) = self.queue.pop() else {
                break;
            };
            self.deliver(p)?;
            self.flush();
        }
        let now = self.now;
        if self.client.poll_timeout().is_some_and(|x| x <= now) {
            self.client.handle_timeout(now);
        }
        if let Some(s) = self.server.as_mut() {
            if s.poll_timeout().is_some_and(|x| x <= now) {
                s.handle_timeout(now);
            }
        }
        self.flush();
        Ok(true)
    }

    fn deliver(&mut self, p: InFlight) -> Result<(), PipeError> {
        self.stats.delivered += 1;
        let bytes = core::mem::take(&mut self.buffers[p.buf]);
        let len = self.lens[p.buf];
        // Every other segment is handed over by reference, so the
        // receive side holds shared chunks and copies side by side.
        let shared = self
            .stats
            .delivered
            .is_multiple_of(2)
            .then(|| Bytes::copy_from_slice(&bytes[..len]));
        let handle = |c: &mut Connection, now| match &shared {
            Some(b) => c.handle_segment_shared(now, b, false),
            None => c.handle_segment(now, &bytes[..len]),
        };
        if p.to_server {
            match self.server.as_mut() {
                Some(s) => {
                    let _ = handle(s, self.now);
                }
                None => {
                    if let Ok(s) = Connection::accept(
                        self.server_config.clone(),
                        self.now,
                        &bytes[..len],
                        &mut self.rng,
                    ) {
                        self.server = Some(s);
                    }
                }
            }
        } else {
            let _ = handle(&mut self.client, self.now);
        }
        self.buffers[p.buf] = bytes;
        self.release(p.buf);
        Ok(())
    }

    /// Steps until `done` holds or virtual time passes `deadline`. Returns
    /// whether `done` held.
    pub fn run_until(
        &mut self,
        deadline: Instant,
        mut done: impl FnMut(&mut Pipe) -> bool,
    ) -> Result<bool, PipeError> {
        loop {
            if done(self) {
                return Ok(true);
            }
            if self.now > deadline || !self.step()? {
                return Ok(done(self));
            }
        }
    }
}

/// What a two-way transfer achieved.
#[derive(Debug, Clone)]
pub struct TransferOutcome {
    /// Bytes the server read.
    pub server_received: Vec<u8>,
    /// Bytes the client read.
    pub client_received: Vec<u8>,
    /// Both connections reached CLOSED through a normal close.
    pub closed_cleanly: bool,
    /// How each end closed (client, server), if it did.
    pub close_reasons: [Option<crate::connection::CloseReason>; 2],
    /// Final states (client, server).
    pub final_states: [Option<crate::connection::State>; 2],
    /// Virtual time at the end (including TIME-WAIT).
    pub elapsed: Duration,
    /// Virtual time at which both applications had read every byte sent
    /// to them, if they did.
    pub delivered_at: Option<Duration>,
    /// Client counters.
    pub client_stats: crate::connection::Stats,
    /// Server counters.
    pub server_stats: crate::connection::Stats,
    /// Pipe counters.
    pub pipe_stats: PipeStats,
}

/// Runs a complete exchange: the client sends `to_server`, the server
/// sends `to_client`, each closes after its last byte, and the run ends
/// when both connections are closed or `limit` of virtual time passed.
pub fn transfer(
    pipe_config: PipeConfig,
    client: Config,
    server: Config,
    to_server: &[u8],
    to_client: &[u8],
    limit: Duration,
) -> Result<TransferOutcome, PipeError> {
    let mut pipe = Pipe::new(pipe_config, client, server)?;
    let mut ends = [AppEnd::new(to_server), AppEnd::new(to_client)];
    let deadline = Instant::ZERO + limit;
    let mut closed = [None, None];
    let mut delivered_at = None;
    pipe.run_until(deadline, |p| {
        for (i, side) in [Side::Client, Side::Server].into_iter().enumerate() {
            if let Some(conn) = p.side(side) {
                ends[i].drive(conn);
                while let Some(ev) = conn.poll_event() {
                    if let Event::Closed(reason) = ev {
                        closed[i] = Some(reason);
                    }
                }
            }
        }
        if delivered_at.is_none()
            && ends[0].received.len() == to_client.len()
            && ends[1].received.len() == to_server.len()
        {
            delivered_at = Some(p.now() - Instant::ZERO);
        }
        closed.iter().all(Option::is_some)
    })?;
    let normal = closed
        .iter()
        .all(|c| *c == Some(crate::connection::CloseReason::Normal));
    let client_stats = pipe.client().stats();
    let server_stats = pipe.server().map(|s| s.stats()).unwrap_or_default();
    let final_states = [
        Some(pipe.client().state()),
        pipe.server().map(|s| s.state()),
    ];
    let [c, s] = ends;
    Ok(TransferOutcome {
        close_reasons: closed,
        final_states,
        server_received: s.received,
        client_received: c.received,
        closed_cleanly: normal,
        elapsed: pipe.now() - Instant::ZERO,
        delivered_at,
        client_stats,
        server_stats,
        pipe_stats: pipe.stats(),
    })
}

/// The application at one end of [`transfer`]. Its writes alternate
/// between copied ones and ones handed over by reference
/// ([`Connection::write_shared`]); both take as much as the send buffer
/// has room for, so the connection sees the same writes either way and
/// the send buffer holds both kinds of chunk side by side.
struct AppEnd<'a> {
    to_send: &'a [u8],
    /// `to_send` again, for the shared writes.
    shared: Bytes,
    writes: u64,
    sent: usize,
    closed: bool,
    received: Vec<u8>,
    scratch: Vec<u8>,
}

impl<'a> AppEnd<'a> {
    fn new(to_send: &'a [u8]) -> Self {
        AppEnd {
            to_send,
            shared: Bytes::copy_from_slice(to_send),
            writes: 0,
            sent: 0,
            closed: false,
            received: Vec::new(),
            scratch: vec![0; 64 * 1024],
        }
    }

    fn drive(&mut self, conn: &mut Connection) {
        if self.sent < self.to_send.len() {
            self.writes += 1;
            self.sent += if self.writes.is_multiple_of(2) {
                conn.write_shared(self.shared.slice(self.sent..))
            } else {
                conn.write(&self.to_send[self.sent..])
            };
        }
        if self.sent == self.to_send.len() && !self.closed && conn.is_established() {
            conn.close();
            self.closed = true;
        }
        loop {
            let n = conn.read(&mut self.scratch);
            if n == 0 {
                break;
            }
            self.received.extend_from_slice(&self.scratch[..n]);
        }
    }
}
