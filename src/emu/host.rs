//! The applications at each end of a flow: the client writes `bytes` of a
//! deterministic pattern and closes after the last one; the server reads
//! everything, compares it with the same pattern, and closes once the peer
//! has closed. The flow also carries its counters for the run result.

use super::elide::is_pattern_at;
use super::scenario::{FlowSpec, FlowTransport};
use super::smoltcp_host::{SmolHost, SmoltcpEnd};
use crate::connection::{Config, Connection};
use crate::time::Instant;

/// Period of the payload pattern: byte `i` of every flow is `i mod 251`.
/// A prime period catches slips by any offset that is not a multiple of it.
pub(crate) const PATTERN_PERIOD: usize = 251;
/// Largest chunk written or read at once.
pub(crate) const CHUNK: usize = 64 * 1024;

/// The pattern's bytes, built at compile time.
static PATTERN: [u8; PATTERN_PERIOD + CHUNK] = pattern_bytes();

const fn pattern_bytes() -> [u8; PATTERN_PERIOD + CHUNK] {
    let mut bytes = [0u8; PATTERN_PERIOD + CHUNK];
    let mut i = 0;
    while i < bytes.len() {
        bytes[i] = (i % PATTERN_PERIOD) as u8;
        i += 1;
    }
    bytes
}

/// The pattern, long enough that any chunk is one slice of it. Static
/// memory, so the slices of it that flows hand around by reference (the
/// application's writes, payloads left out in flight) are `Bytes` that
/// count no references: each clone and drop of a shared buffer's slice
/// is an atomic operation, and a packet made several.
pub(crate) fn pattern() -> bytes::Bytes {
    bytes::Bytes::from_static(&PATTERN)
}

pub(crate) fn pattern_at(pattern: &[u8], offset: u64, len: usize) -> &[u8] {
    let start = (offset % PATTERN_PERIOD as u64) as usize;
    &pattern[start..start + len.min(CHUNK)]
}

#[derive(Debug)]
pub(crate) struct FlowState {
    pub name: String,
    pub client_config: Config,
    pub server_config: Config,
    pub client: Option<Connection>,
    pub server: Option<Connection>,
    /// Time of the pending timer event per end (client, server).
    pub timer: [Option<Instant>; 2],
    pub forward_path: Vec<u32>,
    pub reverse_path: Vec<u32>,
    pub ecn_capable: bool,
    pub bytes: u64,
    written: u64,
    client_closed: bool,
    pub read: u64,
    pub content_ok: bool,
    server_closed: bool,
    pub first_data_at: Option<Instant>,
    pub last_ack_at: Option<Instant>,
    pub finished: bool,
    pub data_packets: u64,
    pub data_bytes: u64,
    pub ack_packets: u64,
    pub ack_bytes: u64,
    pub ce_marks: u64,
    pub transport: FlowTransport,
    /// The QUIC endpoints of a [`FlowTransport::Quic`] flow, once started.
    #[cfg(feature = "quic")]
    pub quic: Option<Box<crate::quic::emu_host::QuicFlow>>,
    /// The smoltcp end of a [`FlowTransport::Smoltcp`] flow, once started.
    pub smol: Option<Box<SmolHost>>,
}

/// What the emulated applications need of either end of a TCP flow, an
/// ackwise connection or smoltcp.
trait AppEnd {
    /// Queues bytes; how many were taken.
    fn write(&mut self, data: &[u8]) -> usize;
    /// Queues bytes the end may keep by reference; how many were taken.
    fn write_shared(&mut self, data: bytes::Bytes) -> usize {
        self.write(&data)
    }
    /// The handshake is over, so a close sends a FIN after the data.
    fn can_close(&self) -> bool;
    /// Closes the sending half.
    fn close(&mut self);
    /// Every byte written was acknowledged.
    fn all_acked(&self) -> bool;
    /// Reads in-order bytes.
    fn read(&mut self, buf: &mut [u8]) -> usize;
    /// The next in-order bytes, at most `max`, if the end holds them by
    /// reference; `None` sends the reader to [`read`](Self::read).
    fn read_in_place(&mut self, _max: usize) -> Option<bytes::Bytes> {
        None
    }
    /// The peer closed and everything before its FIN was read.
    fn peer_closed(&self) -> bool;
    /// Drops what the end reported since the last call: the applications
    /// read state directly.
    fn discard_events(&mut self) {}
    /// How much more the application should write now, at most: `None`
    /// for as much as the end takes.
    fn write_budget(&self) -> Option<u64> {
        None
    }
}

/// Unsent bytes an emulated application keeps queued beyond what its
/// sender may send at once (`cwnd - pipe`, or the sender's
/// `congestion_room` where that is larger): enough that the sender never
/// waits for data between two calls of the application (each ACK, timer
/// or packet calls it after the connection took in what arrived and
/// before the sender transmits; the sender then sends at most
/// `cwnd - pipe` of new data, plus a few segments of limited transmit or
/// a probe, well within the slack). So the data a flow holds follows its
/// window, not its transfer size.
const BACKLOG_SLACK_BYTES: u64 = 16 * 1024;
/// The application tops its backlog up only once it has fallen below
/// this much beyond `cwnd - pipe` (still more than the sender can take
/// at once), so that it writes at least the rest of
/// [`BACKLOG_SLACK_BYTES`] at a time: enough for the connection to keep
/// the write as a reference to the shared pattern
/// (`Connection::write_shared`) instead of copying it. Unacknowledged
/// data then costs the simulator no memory traffic: a thousand flows'
/// send buffers no longer pass through the CPU's caches.
const BACKLOG_REFILL_BYTES: u64 = BACKLOG_SLACK_BYTES / 2;

impl AppEnd for Connection {
    fn write(&mut self, data: &[u8]) -> usize {
        Connection::write(self, data)
    }
    fn write_shared(&mut self, data: bytes::Bytes) -> usize {
        Connection::write_shared(self, data)
    }
    fn can_close(&self) -> bool {
        self.is_established()
    }
    fn close(&mut self) {
        Connection::close(self)
    }
    fn all_acked(&self) -> bool {
        self.sender().all_data_acked()
    }
    fn read(&mut self, buf: &mut [u8]) -> usize {
        Connection::read(self, buf)
    }
    fn read_in_place(&mut self, max: usize) -> Option<bytes::Bytes> {
        Connection::read_in_place(self, max)
    }
    fn peer_closed(&self) -> bool {
        Connection::peer_closed(self)
    }
    fn discard_events(&mut self) {
        while self.poll_event().is_some() {}
    }
    fn write_budget(&self) -> Option<u64> {
        let s = self.sender();
        // Beyond cwnd - pipe, the hold credit and limited transmit let a
        // sender go further (`congestion_room`); a backlog sized on cwnd
        // alone left such a sender waiting for data after an ACK.
        let sendable = s.cwnd().saturating_sub(s.pipe()).max(s.congestion_room());
        let unsent = s.unsent_bytes();
        if unsent >= sendable.saturating_add(BACKLOG_REFILL_BYTES) {
            return Some(0);
        }
        Some(
            sendable
                .saturating_add(BACKLOG_SLACK_BYTES)
                .saturating_sub(unsent),
        )
    }
}

impl AppEnd for SmolHost {
    fn write(&mut self, data: &[u8]) -> usize {
        SmolHost::write(self, data)
    }
    fn can_close(&self) -> bool {
        self.may_send()
    }
    fn close(&mut self) {
        SmolHost::close(self)
    }
    fn all_acked(&self) -> bool {
        SmolHost::all_acked(self)
    }
    fn read(&mut self, buf: &mut [u8]) -> usize {
        SmolHost::read(self, buf)
    }
    fn peer_closed(&self) -> bool {
        SmolHost::peer_closed(self)
    }
}

impl FlowState {
    pub fn new(spec: &FlowSpec) -> FlowState {
        let path = |p: &[usize]| p.iter().map(|&l| l as u32).collect();
        FlowState {
            name: spec.name.clone(),
            client_config: spec.client.clone(),
            server_config: spec.server.clone(),
            client: None,
            server: None,
            timer: [None, None],
            forward_path: path(&spec.forward_path),
            reverse_path: path(&spec.reverse_path),
            ecn_capable: spec.ecn_capable,
            bytes: spec.bytes,
            written: 0,
            client_closed: false,
            read: 0,
            content_ok: true,
            server_closed: false,
            first_data_at: None,
            last_ack_at: None,
            finished: false,
            data_packets: 0,
            data_bytes: 0,
            ack_packets: 0,
            ack_bytes: 0,
            ce_marks: 0,
            transport: spec.transport.clone(),
            #[cfg(feature = "quic")]
            quic: None,
            smol: None,
        }
    }

    /// The flow's packets are TCP segments (ackwise's connections, with
    /// or without smoltcp at one end).
    pub fn is_tcp(&self) -> bool {
        matches!(
            self.transport,
            FlowTransport::Tcp | FlowTransport::Smoltcp(_)
        )
    }

    /// Which end smoltcp plays, for a smoltcp flow.
    pub fn smoltcp_end(&self) -> Option<SmoltcpEnd> {
        match self.transport {
            FlowTransport::Smoltcp(end) => Some(end),
            _ => None,
        }
    }

    /// The smoltcp end when it is the flow's `server` side (or client).
    pub fn smol_at(&mut self, server: bool) -> Option<&mut SmolHost> {
        match self.smoltcp_end() {
            Some(end) if end.is_server() == server => self.smol.as_deref_mut(),
            _ => None,
        }
    }

    /// The sender's congestion window and slow-start threshold, bytes
    /// (zero before the sender exists).
    pub fn sender_window(&self) -> (u64, u64) {
        #[cfg(feature = "quic")]
        if let Some(q) = self.quic.as_ref() {
            return q.window();
        }
        self.client
            .as_ref()
            .map_or((0, 0), |c| (c.sender().cwnd(), c.sender().ssthresh()))
    }

    /// Runs the application at the end that something touched (the
    /// server's when `at_server`) against its connection. The other end's
    /// application has nothing new to do: its connection changes only
    /// through its own packets and timers, which drive it in turn. Returns
    /// true when the flow finished just now.
    pub fn drive(
        &mut self,
        now: Instant,
        at_server: bool,
        pattern: &bytes::Bytes,
        scratch: &mut [u8],
    ) -> bool {
        #[cfg(feature = "quic")]
        if let Some(q) = self.quic.as_mut() {
            let done = q.drive(now, pattern);
            self.read = q.read;
            self.content_ok = q.content_ok;
            self.last_ack_at = q.last_ack_at;
            if done && !self.finished {
                self.finished = true;
                return true;
            }
            return false;
        }
        let smol = self.smol.as_deref_mut().map(|s| s as &mut dyn AppEnd);
        let client = self.client.as_mut().map(|c| c as &mut dyn AppEnd);
        let server = self.server.as_mut().map(|c| c as &mut dyn AppEnd);
        let (client, server) = match &self.transport {
            FlowTransport::Smoltcp(SmoltcpEnd::Sender) => (smol, server),
            FlowTransport::Smoltcp(SmoltcpEnd::Receiver) => (client, smol),
            _ => (client, server),
        };
        if let Some(c) = client.filter(|_| !at_server) {
            let mut budget = c.write_budget().unwrap_or(u64::MAX);
            while self.written < self.bytes && budget > 0 {
                let want = (self.bytes - self.written).min(CHUNK as u64).min(budget) as usize;
                let n = c.write_shared(pattern.slice_ref(pattern_at(pattern, self.written, want)));
                budget = budget.saturating_sub(n as u64);
                if n == 0 {
                    break;
                }
                self.written += n as u64;
            }
            c.discard_events();
            if self.written == self.bytes && !self.client_closed && c.can_close() {
                c.close();
                self.client_closed = true;
            }
            if self.last_ack_at.is_none() && self.written == self.bytes && c.all_acked() {
                self.last_ack_at = Some(now);
            }
        }
        if let Some(s) = server.filter(|_| at_server) {
            loop {
                // Payloads that arrived by reference are read without a
                // copy, and those still the pattern's memory checked by
                // their address (`elide::is_pattern_at`).
                let held = s.read_in_place(CHUNK);
                let data = match &held {
                    Some(chunk) => &chunk[..],
                    None => {
                        let n = s.read(scratch);
                        &scratch[..n]
                    }
                };
                if data.is_empty() {
                    break;
                }
                let n = data.len() as u64;
                if self.read + n > self.bytes || !is_pattern_at(pattern, data, self.read) {
                    self.content_ok = false;
                }
                self.read += n;
            }
            s.discard_events();
            if !self.server_closed && s.peer_closed() {
                s.close();
                self.server_closed = true;
            }
        }
        if !self.finished
            && self.last_ack_at.is_some()
            && self.read == self.bytes
            && self.content_ok
        {
            self.finished = true;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Pipe, PipeConfig};
    use crate::time::Duration;

    fn established() -> Pipe {
        let mut pipe =
            Pipe::new(PipeConfig::default(), Config::default(), Config::default()).expect("pipe");
        let up = pipe
            .run_until(Instant::from_millis(5_000), |p| {
                p.client().is_established() && p.server().is_some_and(|s| s.is_established())
            })
            .expect("handshake");
        assert!(up, "handshake did not complete");
        pipe
    }

    fn sendable(c: &Connection) -> u64 {
        c.sender().cwnd().saturating_sub(c.sender().pipe())
    }

    #[test]
    fn the_application_tops_up_in_writes_of_half_its_slack_or_more() {
        let mut pipe = established();
        let c = pipe.client();
        // Nothing queued: the whole slack beyond what may be sent now.
        let first = c.write_budget().unwrap();
        assert_eq!(first, sendable(c) + BACKLOG_SLACK_BYTES);
        // A backlog short of the refill mark is topped up to the slack.
        assert_eq!(c.write(&[1u8; 100]), 100);
        assert_eq!(c.write_budget().unwrap(), first - 100);
        // At the mark (half the slack beyond the window) it waits...
        let to_mark = vec![1u8; (sendable(c) + BACKLOG_REFILL_BYTES - 100) as usize];
        assert_eq!(c.write(&to_mark), to_mark.len());
        assert_eq!(c.write_budget().unwrap(), 0);
        // ...one byte under it, it writes up to the whole slack again.
        let mut pipe = established();
        let c = pipe.client();
        let under = vec![1u8; (sendable(c) + BACKLOG_REFILL_BYTES - 1) as usize];
        assert_eq!(c.write(&under), under.len());
        assert_eq!(
            c.write_budget().unwrap(),
            BACKLOG_SLACK_BYTES - BACKLOG_REFILL_BYTES + 1
        );
        let rest = vec![1u8; (BACKLOG_SLACK_BYTES - BACKLOG_REFILL_BYTES + 1) as usize];
        assert_eq!(c.write(&rest), rest.len());
        assert_eq!(c.write_budget().unwrap(), 0);
        // Sending what the window allows leaves the slack queued: still
        // nothing to write, and what is queued is more than may be sent.
        let mut buf = vec![0u8; 2048];
        let now = pipe.now();
        let c = pipe.client();
        while c.poll_transmit(now, &mut buf).is_some() {}
        assert_eq!(c.write_budget().unwrap(), 0);
        assert!(c.sender().unsent_bytes() >= sendable(c) + BACKLOG_REFILL_BYTES);
        // Once ACKs open the window and the backlog beyond it falls under
        // the mark, the top-up is at least the other half of the slack.
        let opened = pipe
            .run_until(Instant::from_millis(20_000), |p| {
                let c = p.client();
                c.sender().unsent_bytes() < sendable(c) + BACKLOG_REFILL_BYTES
            })
            .expect("transfer");
        assert!(opened, "the backlog never fell under the mark");
        let budget = pipe.client().write_budget().unwrap();
        assert!(
            budget > BACKLOG_SLACK_BYTES - BACKLOG_REFILL_BYTES,
            "{budget}"
        );
    }

    /// In congestion avoidance the hold credit lets a sender go a held
    /// group (a quarter window) beyond cwnd. A backlog sized on
    /// `cwnd - pipe` alone then fell short of what an ACK released, and
    /// the sender waited for data: after every top-up, what is queued must
    /// cover the sender's whole congestion room.
    #[test]
    fn the_backlog_covers_what_the_hold_credit_lets_the_sender_send() {
        const TOTAL: u64 = 40 << 20;
        let mut pipe = Pipe::new(
            PipeConfig {
                delay: Duration::from_millis(50),
                loss: 0.000_1,
                seed: 7,
                ..PipeConfig::default()
            },
            Config::default(),
            Config::default(),
        )
        .expect("pipe");
        let (mut written, mut read) = (0u64, 0u64);
        let mut beyond_old_budget = 0;
        let mut buf = vec![0u8; 64 << 10];
        while read < TOTAL && pipe.now() < Instant::from_millis(600_000) {
            let c = pipe.client();
            if c.is_established() {
                let s = c.sender();
                if s.congestion_room() > sendable(c) + BACKLOG_SLACK_BYTES {
                    beyond_old_budget += 1;
                }
                // Written as `FlowState::drive` writes: in chunks until
                // the budget is spent or the send buffer full.
                let mut want = c.write_budget().unwrap().min(TOTAL - written);
                let mut full = false;
                while want > 0 {
                    let took = c.write(&buf[..(want as usize).min(buf.len())]);
                    full = took == 0;
                    if full {
                        break;
                    }
                    written += took as u64;
                    want -= took as u64;
                }
                let s = c.sender();
                // A full send buffer, or nothing left to write, is the
                // only excuse for a backlog short of the room.
                if !full && written < TOTAL {
                    assert!(
                        s.unsent_bytes() >= s.congestion_room(),
                        "queued {} < room {} (cwnd {}, pipe {})",
                        s.unsent_bytes(),
                        s.congestion_room(),
                        s.cwnd(),
                        s.pipe()
                    );
                }
            }
            if !pipe.step().expect("step") {
                break;
            }
            if let Some(server) = pipe.server() {
                loop {
                    let n = server.read(&mut buf);
                    if n == 0 {
                        break;
                    }
                    read += n as u64;
                }
            }
        }
        assert_eq!(read, TOTAL, "the transfer did not finish");
        assert!(
            beyond_old_budget > 0,
            "the run never reached a credit beyond cwnd - pipe and the slack"
        );
    }
}
