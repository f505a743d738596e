//! smoltcp as the other end of an emulated flow: a second, independent
//! TCP implementation on every path the emulator has.
//!
//! One end of a [`FlowTransport::Smoltcp`](super::FlowTransport) flow is
//! an ackwise [`Connection`](crate::connection::Connection) as usual, the
//! other a `smoltcp::socket::tcp::Socket` behind its own
//! `smoltcp::iface::Interface`. The emulator's links carry bare TCP
//! segments (the IP header is [`Scenario::overhead_bytes`](super::Scenario)),
//! so [`SmolHost`] frames each arriving segment in IPv4 between the flow's
//! two addresses ([`host_address`](super::pcap::host_address)) with the
//! checksums smoltcp verifies, and takes the TCP segment back out of
//! every IP packet smoltcp sends ([`crate::wire::ip`]), its checksum
//! recomputed the way ackwise's connections compute it without an IP
//! layer.
//!
//! smoltcp here runs as an embedded user would build it: Reno congestion
//! control, its own delayed ACK (10 ms), Nagle, SACK blocks offered when
//! the peer permits them but no SACK-based recovery of its own, RFC 7323
//! timestamps (a millisecond clock), and up to 32 out-of-order ranges
//! held by the receiver
//! (the `assembler-max-segment-count-32` feature; smoltcp's default is 4).
//! It ignores ackwise's ACK-request option, so an ackwise sender facing
//! it falls back to the receiver's own ACKs, as against any unmodified
//! stack. smoltcp keeps time in microseconds; its deadlines are rounded
//! up to the next microsecond of virtual time.

use crate::time::Instant;
use crate::wire::ip;
use smoltcp::iface::{Config as IfaceConfig, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{ChecksumCapabilities, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, Ipv4Address};
use std::collections::VecDeque;
use std::net::IpAddr;

/// Which end of the flow smoltcp plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmoltcpEnd {
    /// smoltcp sends (the flow's client): an ackwise receiver under its
    /// strategy's ACK policy acknowledges an unmodified sender.
    Sender,
    /// smoltcp receives (the flow's server): an ackwise sender under its
    /// strategy against an unmodified receiver.
    Receiver,
}

impl SmoltcpEnd {
    /// Whether smoltcp is the flow's server.
    pub fn is_server(self) -> bool {
        matches!(self, SmoltcpEnd::Receiver)
    }
}

/// What the emulator tells smoltcp's interface about its "wire": IP
/// packets of at most `mtu` bytes, checksums computed and verified.
#[derive(Debug, Default)]
struct Wire {
    mtu: usize,
    /// IP packets delivered by the emulator, not yet read by smoltcp.
    rx: VecDeque<Vec<u8>>,
    /// IP packets smoltcp sent, not yet taken by the emulator.
    tx: VecDeque<Vec<u8>>,
}

struct Rx(Vec<u8>);
struct Tx<'a>(&'a mut VecDeque<Vec<u8>>);

impl smoltcp::phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl smoltcp::phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut packet = vec![0; len];
        let r = f(&mut packet);
        self.0.push_back(packet);
        r
    }
}

impl Device for Wire {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;

    fn receive(
        &mut self,
        _now: smoltcp::time::Instant,
    ) -> Option<(Self::RxToken<'_>, Self::TxToken<'_>)> {
        let packet = self.rx.pop_front()?;
        Some((Rx(packet), Tx(&mut self.tx)))
    }

    fn transmit(&mut self, _now: smoltcp::time::Instant) -> Option<Self::TxToken<'_>> {
        Some(Tx(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = self.mtu;
        caps.checksum = ChecksumCapabilities::default();
        caps
    }
}

/// How to build one smoltcp end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SmolParams {
    /// Its own address and the peer's.
    pub local: Ipv4Address,
    /// The ackwise end's address.
    pub remote: Ipv4Address,
    /// Its TCP port (the listening port for a server).
    pub local_port: u16,
    /// The server's port (a client connects to it).
    pub remote_port: u16,
    /// Largest TCP payload per segment: the IP MTU is this plus 40.
    pub mss: u16,
    /// Receive and send buffers, bytes.
    pub recv_buffer: usize,
    /// Send buffer, bytes.
    pub send_buffer: usize,
    /// Seeds smoltcp's generator (initial sequence numbers, ports).
    pub seed: u64,
}

/// One smoltcp TCP end with its interface, driven in virtual time.
pub(crate) struct SmolHost {
    wire: Wire,
    iface: Interface,
    sockets: SocketSet<'static>,
    handle: SocketHandle,
    params: SmolParams,
    /// Scratch for framing a delivered segment.
    framed: Vec<u8>,
    /// Highest sequence number (relative to the first data byte) sent so
    /// far, to count retransmissions: smoltcp does not.
    highest_sent: Option<u32>,
    /// Data segments that started below `highest_sent`.
    pub retransmissions: u64,
    /// Segments smoltcp sent that were not IPv4/TCP with a good checksum
    /// (none expected; counted rather than forwarded).
    pub malformed: u64,
}

impl std::fmt::Debug for SmolHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmolHost")
            .field("params", &self.params)
            .field("state", &self.socket().state())
            .field("retransmissions", &self.retransmissions)
            .finish()
    }
}

std::thread_local! {
    /// The virtual time of the smoltcp poll running on this thread, in
    /// milliseconds: smoltcp asks for timestamp values through a plain
    /// `fn() -> u32` with no context, so [`SmolHost::poll`] sets this
    /// just before it calls into smoltcp. Each emulator run lives on one
    /// thread and sets it before every poll, so runs never see each
    /// other's clocks.
    static TSVAL_MS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn tsval() -> u32 {
    TSVAL_MS.with(|t| t.get())
}

fn smol_time(now: Instant) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros(i64::try_from(now.as_nanos() / 1_000).unwrap_or(i64::MAX))
}

impl SmolHost {
    /// A smoltcp end that listens (`server`) or connects at `now`.
    pub fn new(params: SmolParams, server: bool, now: Instant) -> SmolHost {
        let mut wire = Wire {
            mtu: usize::from(params.mss) + 40,
            ..Wire::default()
        };
        let mut config = IfaceConfig::new(HardwareAddress::Ip);
        config.random_seed = params.seed;
        let t = smol_time(now);
        let mut iface = Interface::new(config, &mut wire, t);
        iface.update_ip_addrs(|addrs| {
            // Every flow's addresses lie in 10.0.0.0/16: one subnet, so
            // no route is needed to reach the peer.
            let _ = addrs.push(IpCidr::new(IpAddress::Ipv4(params.local), 16));
        });
        let rx = tcp::SocketBuffer::new(vec![0; params.recv_buffer.max(1)]);
        let tx = tcp::SocketBuffer::new(vec![0; params.send_buffer.max(1)]);
        let mut socket = tcp::Socket::new(rx, tx);
        socket.set_congestion_control(tcp::CongestionControl::Reno);
        socket.set_tsval_generator(Some(tsval));
        let mut sockets = SocketSet::new(Vec::new());
        if server {
            // Listening on a fresh socket cannot fail (port non-zero).
            let _ = socket.listen(params.local_port);
        }
        let handle = sockets.add(socket);
        let mut host = SmolHost {
            wire,
            iface,
            sockets,
            handle,
            params,
            framed: Vec::new(),
            highest_sent: None,
            retransmissions: 0,
            malformed: 0,
        };
        if !server {
            let socket = host.sockets.get_mut::<tcp::Socket>(host.handle);
            let _ = socket.connect(
                host.iface.context(),
                (IpAddress::Ipv4(params.remote), params.remote_port),
                params.local_port,
            );
        }
        host.poll(now);
        host
    }

    fn socket(&self) -> &tcp::Socket<'static> {
        self.sockets.get::<tcp::Socket>(self.handle)
    }

    fn socket_mut(&mut self) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(self.handle)
    }

    fn poll(&mut self, now: Instant) {
        // Wraps after 49 days of virtual time, as RFC 7323 allows.
        TSVAL_MS.with(|t| t.set((now.as_nanos() / 1_000_000) as u32));
        self.iface
            .poll(smol_time(now), &mut self.wire, &mut self.sockets);
    }

    /// A segment from the ackwise end reached smoltcp.
    pub fn deliver(&mut self, now: Instant, segment: &[u8]) {
        let (src, dst) = (self.params.remote, self.params.local);
        if ip::frame(
            &mut self.framed,
            0,
            IpAddr::V4(src),
            IpAddr::V4(dst),
            0,
            segment,
        )
        .is_ok()
        {
            self.wire.rx.push_back(std::mem::take(&mut self.framed));
        }
        self.poll(now);
    }

    /// The next segment smoltcp sends, written to `out`: its length.
    pub fn poll_transmit(&mut self, now: Instant, out: &mut [u8]) -> Option<usize> {
        if self.wire.tx.is_empty() {
            self.poll(now);
        }
        while let Some(packet) = self.wire.tx.pop_front() {
            let Ok(u) = ip::unframe(&packet) else {
                self.malformed += 1;
                continue;
            };
            let n = u.segment.len();
            if n > out.len() {
                self.malformed += 1;
                continue;
            }
            out[..n].copy_from_slice(u.segment);
            // Bare segments on the emulator's links carry the checksum
            // over the unspecified addresses, as ackwise's connections
            // compute it without an IP layer (`Checksum::UNSPECIFIED`).
            let unspecified = IpAddress::Ipv4(Ipv4Address::UNSPECIFIED);
            smoltcp::wire::TcpPacket::new_unchecked(&mut out[..n])
                .fill_checksum(&unspecified, &unspecified);
            self.count_retransmission(&out[..n]);
            return Some(n);
        }
        None
    }

    fn count_retransmission(&mut self, segment: &[u8]) {
        let Ok(tcp) = smoltcp::wire::TcpPacket::new_checked(segment) else {
            return;
        };
        if tcp.payload().is_empty() {
            return;
        }
        let start = tcp.seq_number().0 as u32;
        let end = start.wrapping_add(tcp.payload().len() as u32);
        match self.highest_sent {
            Some(high) if (start.wrapping_sub(high) as i32) < 0 => self.retransmissions += 1,
            _ => {}
        }
        if self
            .highest_sent
            .is_none_or(|high| (end.wrapping_sub(high) as i32) > 0)
        {
            self.highest_sent = Some(end);
        }
    }

    /// When smoltcp next needs the clock (its retransmission, delayed-ACK
    /// and close timers), rounded up to a whole microsecond.
    pub fn poll_timeout(&mut self, now: Instant) -> Option<Instant> {
        if !self.wire.tx.is_empty() {
            return Some(now);
        }
        let at = self.iface.poll_at(smol_time(now), &self.sockets)?;
        let micros = u64::try_from(at.total_micros()).unwrap_or(0);
        Some(Instant::from_micros(micros).max(now))
    }

    /// smoltcp's clock moved to `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.poll(now);
    }

    /// Queues application bytes; how many were taken.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let socket = self.socket_mut();
        if !socket.may_send() {
            return 0;
        }
        socket.send_slice(data).unwrap_or(0)
    }

    /// The connection is established (or further), so writes are taken.
    pub fn may_send(&self) -> bool {
        self.socket().may_send()
    }

    /// Reads received bytes in order into `buf`.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let socket = self.socket_mut();
        if !socket.can_recv() {
            return 0;
        }
        socket.recv_slice(buf).unwrap_or(0)
    }

    /// Closes the sending half (a FIN after the queued data).
    pub fn close(&mut self) {
        self.socket_mut().close();
    }

    /// The handshake is over (whatever happened since).
    fn connected(&self) -> bool {
        !matches!(
            self.socket().state(),
            tcp::State::Listen | tcp::State::SynSent | tcp::State::SynReceived
        )
    }

    /// The peer sent its FIN and every byte before it was read.
    pub fn peer_closed(&self) -> bool {
        let s = self.socket();
        self.connected() && !s.may_recv() && !s.can_recv()
    }

    /// Every byte written was acknowledged by the peer.
    pub fn all_acked(&self) -> bool {
        self.connected() && self.socket().send_queue() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::pcap::host_address;

    fn params(server: bool) -> SmolParams {
        SmolParams {
            local: host_address(0, server),
            remote: host_address(0, !server),
            local_port: if server { 80 } else { 10_000 },
            remote_port: 80,
            mss: 1000,
            recv_buffer: 64 * 1024,
            send_buffer: 64 * 1024,
            seed: 7,
        }
    }

    #[test]
    fn two_smoltcp_ends_exchange_bytes_through_bare_segments() {
        // Both ends through the same framing the emulator uses: what one
        // sends as a bare segment, the other receives.
        let mut now = Instant::ZERO;
        let mut client = SmolHost::new(params(false), false, now);
        let mut server = SmolHost::new(params(true), true, now);
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let (mut written, mut got) = (0, Vec::new());
        let mut buf = vec![0u8; 2048];
        let mut read = vec![0u8; 8192];
        for _ in 0..20_000 {
            now += crate::time::Duration::from_micros(100);
            if client.may_send() && written < data.len() {
                written += client.write(&data[written..]);
                if written == data.len() {
                    client.close();
                }
            }
            while let Some(n) = client.poll_transmit(now, &mut buf) {
                server.deliver(now, &buf[..n]);
            }
            while let Some(n) = server.poll_transmit(now, &mut buf) {
                client.deliver(now, &buf[..n]);
            }
            loop {
                let n = server.read(&mut read);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&read[..n]);
            }
            client.handle_timeout(now);
            server.handle_timeout(now);
            if server.peer_closed() && client.all_acked() {
                break;
            }
        }
        assert_eq!(got, data);
        assert!(server.peer_closed());
        assert_eq!(client.retransmissions, 0);
        assert_eq!(client.malformed + server.malformed, 0);
    }
}
