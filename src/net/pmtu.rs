//! Path MTU probing at connection start, on the datagram path (the
//! packetization layer's own discovery, RFC 8899, without ICMP).
//!
//! The socket never fragments (it sets `IP_PMTUDISC_PROBE` / don't
//! fragment), so a segment larger than the path carries is lost every
//! time it is sent. Before its SYN, a connecting endpoint therefore sends
//! one padding-only probe datagram of each candidate size
//! ([`CANDIDATE_DATAGRAM_BYTES`], and the exact size its own `mss` would
//! need) to the peer's endpoint, which echoes each probe that arrived
//! whole with a short reply. The largest size echoed is the path's MTU
//! for this connection (its PLPMTU), and the connection's `mss` is
//! lowered to fit it before the SYN announces it; the listening end sends
//! no larger than the MSS the client announced, so one probe round fits
//! both directions (paths are taken to have the same MTU both ways, as
//! TCP's MSS option also assumes). Without any echo the connection uses
//! RFC 8899's safe base, [`BASE_DATAGRAM_BYTES`].
//!
//! The sizes are probed at once rather than one by one (RFC 8899 section
//! 5.3 searches upward over several round trips): the kernel refuses a
//! datagram above the local interface's MTU at once (`EMSGSIZE`), so on an
//! ordinary path only the small candidates leave the host, and on
//! loopback the largest is echoed within microseconds. The round ends
//! when every probe still out has been echoed or refused, or one round
//! trip (at least [`EXTRA_WAIT`]) after the first echo, or after
//! [`NO_ECHO_WAIT`] without any echo.
//!
//! A probe is not a segment: its thirteenth byte, where a TCP header
//! keeps its data offset, is zero, which no segment can have, so a peer
//! that does not take part drops it as malformed.

use std::net::SocketAddr;
use std::time::Duration;

/// RFC 8899's BASE_PLPMTU: an IP datagram size every path that carries
/// IPv6 takes, used when no probe is echoed.
pub const BASE_DATAGRAM_BYTES: usize = 1200;

/// IP datagram sizes probed: IPv6's minimum MTU, the sizes common
/// tunnels leave of Ethernet's 1 500 (1 400 as many VPNs set it,
/// WireGuard's 1 420, PPPoE's 1 492), Ethernet, jumbo Ethernet and the
/// largest IP datagram (loopback, whose MTU is 65 536).
pub const CANDIDATE_DATAGRAM_BYTES: [usize; 7] = [1280, 1400, 1420, 1492, 1500, 9000, 65_535];

/// The smallest probe answered, bytes of UDP payload: the base less the
/// larger (IPv6) headers. Every probe sent is larger, and nothing smaller
/// draws an echo, so a forged probe gets back at most 28 bytes for each
/// 1 152 it sent.
pub const MIN_PROBE_PAYLOAD_BYTES: usize = BASE_DATAGRAM_BYTES - 48;

/// How long the round waits for echoes after the first, at least: the
/// larger probes may trail the first echo by their serialization time.
pub const EXTRA_WAIT: Duration = Duration::from_millis(10);

/// How long a round waits when nothing is echoed (a peer that does not
/// answer probes, or a lossy path), before the connection goes ahead at
/// the base size.
pub const NO_ECHO_WAIT: Duration = Duration::from_secs(1);

const MAGIC: &[u8; 12] = b"ackwise pmtu";
/// Bytes of a probe's or an echo's header; an echo is only this.
pub(crate) const HEADER_BYTES: usize = 28;
const PROBE: u8 = 1;
const ECHO: u8 = 2;

/// IP and UDP header bytes in front of a UDP payload sent to `remote`.
pub fn ip_udp_overhead(remote: SocketAddr) -> usize {
    if remote.ip().to_canonical().is_ipv4() {
        20 + 8
    } else {
        40 + 8
    }
}

/// The largest `Config::mss` whose segments (with the most header
/// ackwise puts on them) fit IP datagrams of `datagram_bytes` to `remote`.
pub fn mss_for_datagram(datagram_bytes: usize, remote: SocketAddr) -> u16 {
    let payload = datagram_bytes
        .saturating_sub(ip_udp_overhead(remote) + super::MAX_TCP_HEADER_BYTES)
        .min(usize::from(super::MAX_MSS));
    payload as u16
}

/// The IP datagram size a full segment of `mss` needs to `remote`.
pub fn datagram_for_mss(mss: u16, remote: SocketAddr) -> usize {
    usize::from(mss) + super::MAX_TCP_HEADER_BYTES + ip_udp_overhead(remote)
}

/// The datagram sizes worth probing for a connection of `mss` to
/// `remote`: the candidates above the base and below what `mss` needs,
/// then that size itself, ascending. Empty when `mss` fits the base.
pub fn sizes_to_probe(mss: u16, remote: SocketAddr) -> Vec<usize> {
    let ceiling = datagram_for_mss(mss, remote);
    if ceiling <= BASE_DATAGRAM_BYTES {
        return Vec::new();
    }
    let mut sizes: Vec<usize> = CANDIDATE_DATAGRAM_BYTES
        .into_iter()
        .filter(|&s| s > BASE_DATAGRAM_BYTES && s < ceiling)
        .collect();
    sizes.push(ceiling);
    sizes
}

/// A probe or an echo, as read from a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Message {
    /// A probe of `size` bytes of UDP payload (the whole datagram it came
    /// in, if it arrived whole).
    Probe { token: u64, size: u32 },
    /// The answer to a probe of `size` bytes that arrived whole.
    Echo { token: u64, size: u32 },
}

/// Whether `datagram` is in the probe format rather than a segment: its
/// data-offset nibble is zero (for a segment, one byte to look at, so
/// the receive path tests it for every segment) and it starts with the
/// probes' mark (so other datagrams that are not segments, such as a
/// QUIC client's Initial, go on to be handled as such).
pub(crate) fn is_probe_format(datagram: &[u8]) -> bool {
    datagram.len() >= HEADER_BYTES && datagram[12] >> 4 == 0 && &datagram[..12] == MAGIC
}

/// Reads a probe or an echo; `None` for anything else, including a probe
/// that did not arrive whole (its length is not the size it states) or
/// is smaller than [`MIN_PROBE_PAYLOAD_BYTES`], and an echo with
/// trailing bytes.
pub(crate) fn parse(datagram: &[u8]) -> Option<Message> {
    let header = datagram.get(..HEADER_BYTES)?;
    if &header[..12] != MAGIC || header[12] != 0 {
        return None;
    }
    let token = u64::from_be_bytes(header[16..24].try_into().ok()?);
    let size = u32::from_be_bytes(header[24..28].try_into().ok()?);
    match header[13] {
        PROBE if datagram.len() == size as usize && datagram.len() >= MIN_PROBE_PAYLOAD_BYTES => {
            Some(Message::Probe { token, size })
        }
        ECHO if datagram.len() == HEADER_BYTES => Some(Message::Echo { token, size }),
        _ => None,
    }
}

/// A probe of `size` bytes of UDP payload (at least the header), padded
/// with zeros.
pub(crate) fn probe(token: u64, size: usize) -> Vec<u8> {
    let size = size.max(HEADER_BYTES);
    let mut datagram = vec![0u8; size];
    write_header(&mut datagram, PROBE, token, size as u32);
    datagram
}

/// The echo of a probe of `size` bytes.
pub(crate) fn echo(token: u64, size: u32) -> [u8; HEADER_BYTES] {
    let mut datagram = [0u8; HEADER_BYTES];
    write_header(&mut datagram, ECHO, token, size);
    datagram
}

fn write_header(buf: &mut [u8], kind: u8, token: u64, size: u32) {
    buf[..12].copy_from_slice(MAGIC);
    buf[12] = 0;
    buf[13] = kind;
    buf[14..16].fill(0);
    buf[16..24].copy_from_slice(&token.to_be_bytes());
    buf[24..28].copy_from_slice(&size.to_be_bytes());
}

/// What became of one probe, as the driver reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProbeEvent {
    /// The peer echoed the probe of this many bytes of UDP payload.
    Echoed(usize),
    /// The kernel would not send it (above the interface's MTU).
    Refused(usize),
    /// The peer's host reported the port unreachable: nothing will echo.
    Unreachable,
}

impl ProbeEvent {
    /// The same event with its size mapped by `f` (UDP payload bytes to
    /// datagram bytes).
    pub(crate) fn map_size(self, f: impl Fn(usize) -> usize) -> ProbeEvent {
        match self {
            ProbeEvent::Echoed(s) => ProbeEvent::Echoed(f(s)),
            ProbeEvent::Refused(s) => ProbeEvent::Refused(f(s)),
            ProbeEvent::Unreachable => ProbeEvent::Unreachable,
        }
    }
}

/// One connection's probe round: which sizes are out, which came back,
/// and when it is over. Sizes are IP datagram bytes.
#[derive(Debug, Clone)]
pub(crate) struct ProbeRound {
    /// (size, settled) for each probe sent, ascending.
    probes: Vec<(usize, bool)>,
    largest_echoed: Option<usize>,
    first_echo: Option<Duration>,
    unreachable: bool,
}

impl ProbeRound {
    pub(crate) fn new(sizes: &[usize]) -> ProbeRound {
        ProbeRound {
            probes: sizes.iter().map(|&s| (s, false)).collect(),
            largest_echoed: None,
            first_echo: None,
            unreachable: false,
        }
    }

    /// Takes in what became of a probe, `elapsed` after the round began.
    pub(crate) fn on_event(&mut self, event: ProbeEvent, elapsed: Duration) {
        match event {
            ProbeEvent::Echoed(size) | ProbeEvent::Refused(size) => {
                let Some(p) = self.probes.iter_mut().find(|p| p.0 == size) else {
                    return;
                };
                p.1 = true;
                if matches!(event, ProbeEvent::Echoed(_)) {
                    self.largest_echoed = self.largest_echoed.max(Some(size));
                    self.first_echo.get_or_insert(elapsed);
                }
            }
            ProbeEvent::Unreachable => self.unreachable = true,
        }
    }

    /// How long after its start the round ends at the latest, as far as
    /// is known now.
    pub(crate) fn deadline(&self) -> Duration {
        match self.first_echo {
            Some(first) => first + first.max(EXTRA_WAIT),
            None => NO_ECHO_WAIT,
        }
    }

    /// Whether the round is over `elapsed` after its start: nothing more
    /// can change its result, or its time is up.
    pub(crate) fn is_done(&self, elapsed: Duration) -> bool {
        let nothing_larger_out = self
            .probes
            .iter()
            .all(|&(size, settled)| settled || self.largest_echoed.is_some_and(|l| size < l));
        self.unreachable || nothing_larger_out || elapsed >= self.deadline()
    }

    /// The datagram size the path carries: the largest echoed, or the
    /// base.
    pub(crate) fn path_mtu(&self) -> usize {
        // Every size probed is above the base (`sizes_to_probe`).
        self.largest_echoed.unwrap_or(BASE_DATAGRAM_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4() -> SocketAddr {
        "192.0.2.1:4433".parse().unwrap()
    }

    fn v6() -> SocketAddr {
        "[2001:db8::1]:4433".parse().unwrap()
    }

    #[test]
    fn probes_and_echoes_round_trip_and_nothing_else_parses() {
        for size in [MIN_PROBE_PAYLOAD_BYTES, 1252, 65_507] {
            let p = probe(0x0123_4567_89ab_cdef, size);
            assert_eq!(p.len(), size);
            assert!(is_probe_format(&p));
            assert_eq!(
                parse(&p),
                Some(Message::Probe {
                    token: 0x0123_4567_89ab_cdef,
                    size: size as u32
                })
            );
            // Cut short on the way: not echoed.
            assert_eq!(parse(&p[..size - 1]), None);
        }
        // Too small to be a probe: no echo, so no reflection.
        assert_eq!(parse(&probe(7, MIN_PROBE_PAYLOAD_BYTES - 1)), None);
        assert_eq!(parse(&probe(7, HEADER_BYTES)), None);
        let e = echo(7, 1472);
        assert_eq!(
            parse(&e),
            Some(Message::Echo {
                token: 7,
                size: 1472
            })
        );
        let mut longer = e.to_vec();
        longer.push(0);
        assert_eq!(parse(&longer), None);
        let mut wrong = probe(7, 1300);
        wrong[0] ^= 1;
        assert_eq!(parse(&wrong), None);
        wrong = probe(7, 1300);
        wrong[13] = 9;
        assert_eq!(parse(&wrong), None);
    }

    #[test]
    fn a_probe_is_never_a_segment_and_a_segment_never_a_probe() {
        use crate::wire::{Checksum, Flags, Options, SegmentRepr, SeqNum};
        let p = probe(1, 1500);
        assert!(SegmentRepr::parse(&p, Checksum::Ignore).is_err());
        let repr = SegmentRepr {
            src_port: 1,
            dst_port: 2,
            seq: SeqNum(3),
            ack: SeqNum(4),
            flags: Flags::ACK,
            window: 100,
            options: Options::default(),
            payload: b"MAGIC",
        };
        let mut buf = [0u8; 80];
        let n = repr.emit(&mut buf, Checksum::UNSPECIFIED).unwrap();
        assert!(!is_probe_format(&buf[..n]));
    }

    #[test]
    fn sizes_run_from_above_the_base_to_what_the_mss_needs() {
        let max = crate::net::MAX_MSS;
        assert_eq!(
            sizes_to_probe(max, v4()),
            vec![1280, 1400, 1420, 1492, 1500, 9000, 65_535]
        );
        // IPv6 headers are 20 bytes longer, so the largest MSS needs more
        // than the largest IPv4 datagram.
        assert_eq!(datagram_for_mss(max, v6()), 65_555);
        assert_eq!(sizes_to_probe(1400, v4()), vec![1280, 1400, 1420, 1488]);
        assert_eq!(
            sizes_to_probe(1412, v4()),
            vec![1280, 1400, 1420, 1492, 1500]
        );
        assert!(sizes_to_probe(1112, v4()).is_empty(), "fits the base");
        assert_eq!(mss_for_datagram(1500, v4()), 1412);
        assert_eq!(mss_for_datagram(1500, v6()), 1392);
        assert_eq!(mss_for_datagram(65_535, v4()), max);
        assert_eq!(mss_for_datagram(BASE_DATAGRAM_BYTES, v4()), 1112);
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:1".parse().unwrap();
        assert_eq!(ip_udp_overhead(mapped), 28);
    }

    #[test]
    fn a_round_ends_when_the_largest_is_echoed_or_every_probe_is_settled() {
        let ms = Duration::from_millis;
        let mut r = ProbeRound::new(&[1280, 1500, 9000, 65_535]);
        assert!(!r.is_done(ms(0)));
        r.on_event(ProbeEvent::Echoed(1500), ms(2));
        assert!(!r.is_done(ms(3)), "larger ones still out");
        r.on_event(ProbeEvent::Echoed(65_535), ms(3));
        assert!(r.is_done(ms(3)), "nothing larger can come");
        assert_eq!(r.path_mtu(), 65_535);

        // An Ethernet host: the kernel refuses the two large ones.
        let mut r = ProbeRound::new(&[1280, 1500, 9000, 65_535]);
        r.on_event(ProbeEvent::Refused(9000), ms(0));
        r.on_event(ProbeEvent::Refused(65_535), ms(0));
        r.on_event(ProbeEvent::Echoed(1280), ms(40));
        assert!(!r.is_done(ms(41)));
        r.on_event(ProbeEvent::Echoed(1500), ms(41));
        assert!(r.is_done(ms(41)));
        assert_eq!(r.path_mtu(), 1500);
    }

    #[test]
    fn a_round_waits_a_round_trip_after_the_first_echo_and_a_second_without() {
        let ms = Duration::from_millis;
        // 1500 is dropped on the way (a tunnel): one more RTT after 1280.
        let mut r = ProbeRound::new(&[1280, 1500]);
        r.on_event(ProbeEvent::Echoed(1280), ms(30));
        assert_eq!(r.deadline(), ms(60));
        assert!(!r.is_done(ms(59)));
        assert!(r.is_done(ms(60)));
        assert_eq!(r.path_mtu(), 1280);
        // Loopback-fast echoes still wait the floor.
        let mut r = ProbeRound::new(&[1280, 1500]);
        r.on_event(ProbeEvent::Echoed(1280), Duration::from_micros(50));
        assert_eq!(r.deadline(), Duration::from_micros(50) + EXTRA_WAIT);
        // Nothing back: the base after the long wait.
        let r = ProbeRound::new(&[1280, 1500]);
        assert!(!r.is_done(NO_ECHO_WAIT - ms(1)));
        assert!(r.is_done(NO_ECHO_WAIT));
        assert_eq!(r.path_mtu(), BASE_DATAGRAM_BYTES);
        // A port unreachable ends it at once.
        let mut r = ProbeRound::new(&[1280, 1500]);
        r.on_event(ProbeEvent::Unreachable, ms(1));
        assert!(r.is_done(ms(1)));
        // Unknown sizes are ignored.
        let mut r = ProbeRound::new(&[1280]);
        r.on_event(ProbeEvent::Echoed(4000), ms(1));
        assert_eq!(r.path_mtu(), BASE_DATAGRAM_BYTES);
    }
}
