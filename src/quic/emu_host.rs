//! quinn-proto endpoints hosted by the emulator in virtual time.
//!
//! Each emulated QUIC flow has a client and a server `quinn_proto::Endpoint`
//! with one connection between them, TLS handshake included (a
//! certificate generated at run time, see [`SelfSigned`]). The client
//! opens one unidirectional stream, writes the flow's bytes of the
//! emulator's pattern and finishes it; the server reads and checks them.
//! The flow is done when quinn reports the stream finished (every byte
//! acknowledged) and the server has read every byte intact, the same
//! rule as a TCP-style flow.
//!
//! Time: quinn-proto takes `std::time::Instant`; virtual time `t` is
//! `epoch + t` for an epoch taken when the flow is built, and only
//! differences of instants ever reach the emulator, so the epoch cancels.
//!
//! Packet classes, for the per-flow records: quinn-proto does not say what
//! a datagram carries, but its per-connection frame counters
//! (`Connection::stats().frame_tx`) do. Each datagram is polled alone
//! (`max_datagrams = 1`) and the counters are compared before and after:
//! a datagram with STREAM frames is a data packet; one with ACK frames and
//! no ack-eliciting frame (RFC 9002 section 2: all but ACK, PADDING and
//! CONNECTION_CLOSE) is ACK-only; anything else (handshake, control) is
//! neither. A frame type that a newer quinn-proto adds to `FrameStats`
//! would be missed by the sum below; quinn-proto 0.11.19's list is
//! complete.
//!
//! Determinism: the endpoints' RNGs are seeded from the run's seed and the
//! flow index (`EndpointConfig::rng_seed`); TLS randomness (rustls, the
//! handshake token key) is not seedable, so bytes differ between runs but
//! sizes do not (Ed25519 signatures have a fixed length), and neither do
//! the measured figures.

use super::ack_frequency::{AckFrequencyPolicy, CachedPath};
use super::congestion::AckwiseRenoConfig;
use super::tls::{SelfSigned, SERVER_NAME};
use super::QuicError;
use crate::emu::host::{pattern_at, CHUNK};
use crate::sender::congestion::Decrease;
use crate::time::Instant as VirtualInstant;
use bytes::BytesMut;
use quinn_proto::congestion::NewRenoConfig;
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, DatagramEvent, Dir, Endpoint,
    EndpointConfig, Event, FrameStats, IdleTimeout, ServerConfig, StreamEvent, StreamId,
    TransportConfig, ValidationTokenConfig, VarInt,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

/// The congestion controller a QUIC flow's sender runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuicController {
    /// quinn-proto's own NewReno (its default).
    NewReno,
    /// ackwise's Reno with extended byte counting ([`AckwiseRenoConfig`]),
    /// L matched to the ACK spacing the ACK-frequency policy asks for.
    Ackwise {
        /// Multiplicative decrease.
        decrease: Decrease,
    },
}

/// What an emulated QUIC transfer runs at each end.
#[derive(Debug, Clone, PartialEq)]
pub struct QuicFlowConfig {
    /// The sender's congestion controller.
    pub controller: QuicController,
    /// How the sender asks the receiver to acknowledge.
    pub ack_frequency: AckFrequencyPolicy,
    /// What a path cache held for this peer when the connection started
    /// (`None`: cold), read by [`AckFrequencyPolicy::PerWindow`].
    pub cached_path: Option<CachedPath>,
    /// UDP payload size of every datagram, bytes. Path MTU discovery is
    /// off so that every run uses this size; quinn-proto raises anything
    /// below QUIC's minimum of 1200.
    pub datagram_bytes: u16,
    /// Initial congestion window, bytes (`None`: the controller's
    /// default). Raised to two datagrams, RFC 9002 section 7.2's minimum
    /// window: quinn-proto never sends a datagram its window cannot hold
    /// whole, so a smaller one would never send at all.
    pub initial_window: Option<u64>,
    /// Receive windows (stream and connection), bytes.
    pub receive_window: u64,
}

impl Default for QuicFlowConfig {
    fn default() -> Self {
        QuicFlowConfig {
            controller: QuicController::NewReno,
            ack_frequency: AckFrequencyPolicy::QuinnDefault,
            cached_path: None,
            datagram_bytes: 1200,
            initial_window: None,
            receive_window: 16 << 20,
        }
    }
}

impl QuicFlowConfig {
    /// Packets per ACK this flow's sender asks for.
    pub fn packets_per_ack(&self) -> u32 {
        self.ack_frequency
            .packets_per_ack(self.cached_path.as_ref())
    }

    /// The initial window in bytes, at least two datagrams.
    fn initial_window_bytes(&self) -> Option<u64> {
        let minimum = 2 * u64::from(self.datagram_bytes.max(1200));
        self.initial_window.map(|iw| iw.max(minimum))
    }

    /// The transport configuration of the sending end.
    pub fn sender_transport(&self) -> TransportConfig {
        let mut t = self.common_transport();
        let cached = self.cached_path.as_ref();
        t.ack_frequency_config(self.ack_frequency.config(cached));
        match self.controller {
            QuicController::NewReno => {
                let mut c = NewRenoConfig::default();
                if let Some(iw) = self.initial_window_bytes() {
                    c.initial_window(iw);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
            QuicController::Ackwise { decrease } => {
                let c = AckwiseRenoConfig {
                    decrease,
                    initial_window: self.initial_window_bytes(),
                    ..AckwiseRenoConfig::new(self.ack_frequency.byte_counting_limit(cached))
                };
                t.congestion_controller_factory(Arc::new(c));
            }
        }
        t
    }

    /// Gives back to `transport` (from [`sender_transport`](Self::sender_transport)
    /// or [`receiver_transport`](Self::receiver_transport)) what a real
    /// socket needs and the emulator turns off: path MTU discovery, and
    /// segmentation offload (GSO), which on loopback roughly doubles
    /// quinn's goodput.
    pub fn on_sockets(transport: &mut TransportConfig) {
        transport
            .mtu_discovery_config(Some(quinn_proto::MtuDiscoveryConfig::default()))
            .enable_segmentation_offload(true);
    }

    /// The transport configuration of the receiving end.
    pub fn receiver_transport(&self) -> TransportConfig {
        self.common_transport()
    }

    fn common_transport(&self) -> TransportConfig {
        let mut t = TransportConfig::default();
        let window = VarInt::from_u64(self.receive_window).unwrap_or(VarInt::MAX);
        t.stream_receive_window(window)
            .receive_window(window)
            .send_window(self.receive_window)
            .initial_mtu(self.datagram_bytes)
            .min_mtu(self.datagram_bytes)
            .mtu_discovery_config(None)
            // A starved flow on a long run must not time out: the lab
            // measures the slowdown, as with its TCP-style hosts.
            .max_idle_timeout(None::<IdleTimeout>)
            .enable_segmentation_offload(false);
        t
    }
}

/// What a datagram carried, from the frame counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DatagramClass {
    /// STREAM frames.
    Data,
    /// ACK frames and nothing ack-eliciting.
    AckOnly,
    /// Handshake, flow control, close.
    Control,
}

/// A connection ended otherwise than by the transfer's own close (error
/// code 0, sent by the client once every byte is acknowledged and read).
fn abnormal(reason: &ConnectionError) -> bool {
    match reason {
        ConnectionError::LocallyClosed => false,
        ConnectionError::ApplicationClosed(close) => close.error_code != VarInt::from_u32(0),
        _ => true,
    }
}

fn ack_eliciting_frames(f: &FrameStats) -> u64 {
    // Every counter but `acks` and `connection_close` (RFC 9002 section 2).
    f.ack_frequency
        + f.crypto
        + f.data_blocked
        + f.datagram
        + u64::from(f.handshake_done)
        + f.immediate_ack
        + f.max_data
        + f.max_stream_data
        + f.max_streams_bidi
        + f.max_streams_uni
        + f.new_connection_id
        + f.new_token
        + f.path_challenge
        + f.path_response
        + f.ping
        + f.reset_stream
        + f.retire_connection_id
        + f.stream_data_blocked
        + f.streams_blocked_bidi
        + f.streams_blocked_uni
        + f.stop_sending
        + f.stream
}

fn classify(before: &FrameStats, after: &FrameStats) -> DatagramClass {
    let eliciting = ack_eliciting_frames(after) - ack_eliciting_frames(before);
    if after.stream > before.stream {
        DatagramClass::Data
    } else if eliciting == 0
        && after.acks > before.acks
        && after.connection_close == before.connection_close
    {
        DatagramClass::AckOnly
    } else {
        DatagramClass::Control
    }
}

/// One end: its endpoint, its connection once there is one, and stateless
/// replies waiting to be sent.
struct End {
    endpoint: Endpoint,
    conn: Option<(ConnectionHandle, Connection)>,
    address: SocketAddr,
    responses: Vec<Vec<u8>>,
}

impl std::fmt::Debug for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("End")
            .field("address", &self.address)
            .field("connected", &self.conn.is_some())
            .finish_non_exhaustive()
    }
}

impl End {
    fn new(seed: [u8; 32], server: Option<Arc<ServerConfig>>, address: SocketAddr) -> End {
        let mut ec = EndpointConfig::default();
        ec.rng_seed(Some(seed));
        End {
            endpoint: Endpoint::new(Arc::new(ec), server, false, None),
            conn: None,
            address,
            responses: Vec::new(),
        }
    }

    /// Passes endpoint events to the endpoint and its answers back.
    fn pump_endpoint_events(&mut self) {
        if let Some((ch, conn)) = self.conn.as_mut() {
            while let Some(ev) = conn.poll_endpoint_events() {
                if let Some(ce) = self.endpoint.handle_event(*ch, ev) {
                    conn.handle_event(ce);
                }
            }
        }
    }
}

/// A QUIC transfer between two hosted endpoints, with its application
/// progress.
#[derive(Debug)]
pub(crate) struct QuicFlow {
    client: End,
    server: End,
    client_config: Option<ClientConfig>,
    epoch: Instant,
    bytes: u64,
    send_stream: Option<StreamId>,
    recv_stream: Option<StreamId>,
    written: u64,
    finished_writing: bool,
    acked_all: bool,
    closed: bool,
    /// Payload bytes the server read.
    pub read: u64,
    /// Everything read matched the pattern.
    pub content_ok: bool,
    /// When quinn reported every byte of the stream acknowledged.
    pub last_ack_at: Option<VirtualInstant>,
    /// The connection failed (handshake, protocol): why.
    pub error: Option<String>,
    scratch: Vec<u8>,
}

impl QuicFlow {
    /// Builds both endpoints for flow `index` of a run seeded with `seed`.
    pub fn new(
        config: &QuicFlowConfig,
        cert: &SelfSigned,
        bytes: u64,
        seed: u64,
        index: u32,
    ) -> Result<QuicFlow, QuicError> {
        let mut server_config = cert.server_config(config.receiver_transport())?;
        // No NEW_TOKEN frames: quinn-proto sends two per connection only
        // when built with its `bloom` feature, which cargo enables or not
        // depending on what else the build includes (quinn's defaults in
        // `cargo test` builds). Pinning it keeps the emulated packets, and
        // so every figure, the same in every build; no emulated client
        // reconnects to use a token anyway.
        let mut tokens = ValidationTokenConfig::default();
        tokens.sent(0);
        server_config.validation_token_config(tokens);
        let client_config = cert.client_config(config.sender_transport())?;
        let seed_for = |side: u8| {
            let mut s = [0u8; 32];
            s[..8].copy_from_slice(&seed.to_le_bytes());
            s[8..12].copy_from_slice(&index.to_le_bytes());
            s[12] = side;
            s
        };
        let [a, b] = index.to_be_bytes()[2..4].try_into().unwrap_or([0, 0]);
        let client_addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 1, a, b)), 10_000);
        let server_addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 2, a, b)), 443);
        Ok(QuicFlow {
            client: End::new(seed_for(0), None, client_addr),
            server: End::new(seed_for(1), Some(Arc::new(server_config)), server_addr),
            client_config: Some(client_config),
            epoch: Instant::now(),
            bytes,
            send_stream: None,
            recv_stream: None,
            written: 0,
            finished_writing: false,
            acked_all: false,
            closed: false,
            read: 0,
            content_ok: true,
            last_ack_at: None,
            error: None,
            scratch: Vec::new(),
        })
    }

    fn real(&self, t: VirtualInstant) -> Instant {
        self.epoch + t.since_epoch()
    }

    fn virtual_time(&self, t: Instant) -> VirtualInstant {
        let d = t.saturating_duration_since(self.epoch);
        VirtualInstant::from_nanos(crate::time::duration_nanos_saturating(d))
    }

    fn end(&mut self, server: bool) -> &mut End {
        if server {
            &mut self.server
        } else {
            &mut self.client
        }
    }

    /// The client opens its connection.
    pub fn start(&mut self, now: VirtualInstant) -> Result<(), QuicError> {
        let Some(cc) = self.client_config.take() else {
            return Ok(());
        };
        let real = self.real(now);
        let server = self.server.address;
        let (ch, conn) = self
            .client
            .endpoint
            .connect(real, cc, server, SERVER_NAME)
            .map_err(|e| QuicError::Connect(e.to_string()))?;
        self.client.conn = Some((ch, conn));
        Ok(())
    }

    /// A datagram reached one end.
    pub fn deliver(&mut self, now: VirtualInstant, to_server: bool, datagram: &[u8]) {
        let real = self.real(now);
        let mut buf = std::mem::take(&mut self.scratch);
        let from = if to_server {
            self.client.address
        } else {
            self.server.address
        };
        let end = self.end(to_server);
        buf.clear();
        let event = end
            .endpoint
            .handle(real, from, None, None, BytesMut::from(datagram), &mut buf);
        match event {
            Some(DatagramEvent::ConnectionEvent(ch, ev)) => {
                if let Some((own, conn)) = end.conn.as_mut() {
                    if *own == ch {
                        conn.handle_event(ev);
                    }
                }
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                if end.conn.is_some() {
                    end.endpoint.ignore(incoming);
                } else {
                    buf.clear();
                    match end.endpoint.accept(incoming, real, &mut buf, None) {
                        Ok(c) => end.conn = Some(c),
                        Err(e) => {
                            if let Some(t) = e.response {
                                end.responses.push(buf[..t.size].to_vec());
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => end.responses.push(buf[..t.size].to_vec()),
            None => {}
        }
        end.pump_endpoint_events();
        self.scratch = buf;
    }

    /// A timer of one end may be due.
    pub fn handle_timeout(&mut self, now: VirtualInstant, server: bool) {
        let real = self.real(now);
        let end = self.end(server);
        if let Some((_, conn)) = end.conn.as_mut() {
            if conn.poll_timeout().is_some_and(|t| t <= real) {
                conn.handle_timeout(real);
            }
        }
        end.pump_endpoint_events();
    }

    /// The next deadline of one end.
    pub fn poll_timeout(&mut self, server: bool) -> Option<VirtualInstant> {
        let t = self.end(server).conn.as_mut()?.1.poll_timeout()?;
        Some(self.virtual_time(t))
    }

    /// The next datagram one end sends, written to `out`: its length and
    /// class. `out` must hold the configured datagram size.
    pub fn poll_transmit(
        &mut self,
        now: VirtualInstant,
        server: bool,
        out: &mut [u8],
    ) -> Option<(usize, DatagramClass)> {
        let real = self.real(now);
        let mut buf = std::mem::take(&mut self.scratch);
        let end = self.end(server);
        let result = if let Some(r) = end.responses.pop() {
            let n = r.len().min(out.len());
            out[..n].copy_from_slice(&r[..n]);
            Some((n, DatagramClass::Control))
        } else if let Some((_, conn)) = end.conn.as_mut() {
            buf.clear();
            let before = conn.stats().frame_tx;
            conn.poll_transmit(real, 1, &mut buf).map(|t| {
                let class = classify(&before, &conn.stats().frame_tx);
                let n = t.size.min(out.len());
                out[..n].copy_from_slice(&buf[..n]);
                (n, class)
            })
        } else {
            None
        };
        end.pump_endpoint_events();
        self.scratch = buf;
        result
    }

    /// Runs both applications: the client writes and finishes its stream,
    /// the server reads and checks. Returns true once the transfer is done.
    pub fn drive(&mut self, now: VirtualInstant, pattern: &[u8]) -> bool {
        let real = self.real(now);
        self.drive_client(now, real, pattern);
        self.drive_server(pattern);
        self.client.pump_endpoint_events();
        self.server.pump_endpoint_events();
        self.last_ack_at.is_some() && self.read == self.bytes && self.content_ok
    }

    fn drive_client(&mut self, now: VirtualInstant, real: Instant, pattern: &[u8]) {
        let Some((_, conn)) = self.client.conn.as_mut() else {
            return;
        };
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Stream(StreamEvent::Finished { id }) if Some(id) == self.send_stream => {
                    self.acked_all = true;
                    self.last_ack_at.get_or_insert(now);
                }
                Event::ConnectionLost { reason } if abnormal(&reason) => {
                    tracing::warn!(%reason, "emulated QUIC client lost its connection");
                    self.error.get_or_insert(reason.to_string());
                }
                _ => {}
            }
        }
        if self.send_stream.is_none() && !conn.is_handshaking() && !conn.is_closed() {
            self.send_stream = conn.streams().open(Dir::Uni);
        }
        if let Some(id) = self.send_stream {
            let mut stream = conn.send_stream(id);
            while self.written < self.bytes {
                let want = (self.bytes - self.written).min(CHUNK as u64) as usize;
                match stream.write(pattern_at(pattern, self.written, want)) {
                    Ok(n) if n > 0 => self.written += n as u64,
                    _ => break,
                }
            }
            if self.written == self.bytes && !self.finished_writing {
                self.finished_writing = stream.finish().is_ok();
            }
        }
        if self.acked_all && !self.closed && self.read == self.bytes {
            // Every byte is acknowledged and read: close, so that the
            // connection's timers stop and the peer learns it at once.
            conn.close(real, VarInt::from_u32(0), bytes::Bytes::new());
            self.closed = true;
        }
    }

    fn drive_server(&mut self, pattern: &[u8]) {
        let Some((_, conn)) = self.server.conn.as_mut() else {
            return;
        };
        while let Some(ev) = conn.poll() {
            if let Event::ConnectionLost { reason } = ev {
                if !abnormal(&reason) {
                    continue;
                }
                tracing::warn!(%reason, "emulated QUIC server lost its connection");
                self.error.get_or_insert(reason.to_string());
            }
        }
        if self.recv_stream.is_none() {
            self.recv_stream = conn.streams().accept(Dir::Uni);
        }
        let Some(id) = self.recv_stream else {
            return;
        };
        let mut stream = conn.recv_stream(id);
        // Unordered reads, like a file writer placing each chunk at its
        // offset: quinn-proto keeps at most 1024 separate spans of a stream
        // behind a hole (`MAX_CHUNKS` in its assembler) and kills the
        // connection with "too many gaps in stream buffer" beyond that,
        // which a slow-start overshoot at 100 Mbit/s with a one-BDP buffer
        // reaches (every other packet of a window lost). Unordered reads
        // leave nothing behind the hole; quinn still delivers each byte
        // once.
        let Ok(mut chunks) = stream.read(false) else {
            return;
        };
        while let Ok(Some(chunk)) = chunks.next(CHUNK) {
            let n = chunk.bytes.len();
            let end = chunk.offset.saturating_add(n as u64);
            if end > self.bytes || chunk.bytes[..] != *pattern_at(pattern, chunk.offset, n) {
                self.content_ok = false;
            }
            self.read += n as u64;
        }
        // Releases flow-control credit; quinn sends the update itself.
        let _ = chunks.finalize();
    }

    /// The sender's congestion window and slow-start threshold, bytes.
    pub fn window(&self) -> (u64, u64) {
        self.client.conn.as_ref().map_or((0, 0), |(_, c)| {
            let m = c.congestion_state().metrics();
            (m.congestion_window, m.ssthresh.unwrap_or(u64::MAX))
        })
    }

    /// Packets the sender declared lost (QUIC retransmits their frames).
    pub fn lost_packets(&self) -> u64 {
        self.client
            .conn
            .as_ref()
            .map_or(0, |(_, c)| c.stats().path.lost_packets)
    }

    /// What this connection leaves in a path cache: its window (bounded by
    /// ssthresh once a loss set one, as a slow start that ended without
    /// loss may have overshot), datagram size and smoothed RTT.
    pub fn path_at_end(&self) -> Option<CachedPath> {
        let (_, conn) = self.client.conn.as_ref()?;
        let m = conn.congestion_state().metrics();
        let window = match m.ssthresh {
            Some(s) if s < m.congestion_window => s,
            _ => m.congestion_window,
        };
        Some(CachedPath {
            window_bytes: window,
            datagram_bytes: u64::from(conn.current_mtu()),
            srtt: conn.rtt(),
        })
    }
}
