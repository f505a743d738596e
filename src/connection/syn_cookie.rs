//! SYN cookies: answering a SYN without keeping state, so that a flood of
//! SYNs from spoofed addresses costs a listening endpoint nothing but the
//! SYN-ACKs (one per SYN) and cannot keep real clients out (issue 14,
//! "endpoint under flood"; the idea is Bernstein's, 1996, and RFC 4987
//! section 3.6 describes it).
//!
//! When its half-open table has no room, the endpoint answers a SYN with a
//! SYN-ACK whose initial sequence number is a cookie and forgets the SYN.
//! A real client's ACK then carries the cookie back (ACK = ISS + 1) and
//! the endpoint rebuilds the connection from it. What the cookie must
//! carry is what the SYN offered:
//!
//! - in the ISS, the peer's MSS (one of eight sizes, rounded down) and a
//!   time counter, next to a 27-bit MAC over both, the addresses, ports
//!   and the client's ISN (SipHash-1-3 under the endpoint's secret);
//! - when timestamps are negotiated, the rest of the offer in the low 8
//!   bits of the SYN-ACK's TSval, which the client echoes in TSecr: the
//!   window-scale shift, SACK, ECN, ackwise's ACK-request option and its
//!   ACK nonce (Linux keeps window scaling, SACK and ECN the same way).
//!   The SYN-ACK's TSval is at most 255 microseconds behind the
//!   connection's clock, so later timestamps never go backwards.
//!
//! Without timestamps the cookie keeps only the MSS, and the SYN-ACK is
//! built from that reduced SYN, so both ends agree on no window scaling
//! and no SACK: a cookie connection then works, with less.
//!
//! Use: [`SynCookies::answer`] a SYN, hand its [`Vouched`] to
//! [`Connection::accept_stateless`](super::Connection::accept_stateless),
//! send that connection's first segment (the SYN-ACK) and drop it; when a
//! segment for no connection arrives, [`SynCookies::check`] it and, if it
//! returns a [`Vouched`], open the connection with
//! [`Connection::accept_cookie_ack`](super::Connection::accept_cookie_ack).
//! `ackwise::net`'s endpoint does this once its half-open limits are
//! reached.

use super::ack_nonce::siphash13;
use crate::time::Instant;
use crate::wire::{
    AckNonce, AckRequest, Checksum, Flags, Options, SegmentRepr, SeqNum, Timestamps, HEADER_LEN,
    MAX_OPTIONS_LEN,
};
use alloc::{vec, vec::Vec};
use core::net::SocketAddr;
use rand_core::RngCore;

/// The peer MSS values a cookie can carry; an offer is rounded down to
/// the largest not above it (a SYN without the option means 536).
const MSS_TABLE: [u16; 8] = [536, 1024, 1200, 1220, 1360, 1400, 1440, 1460];

/// Seconds per tick of the cookie's time counter.
const TICK_SECS: u64 = 64;

/// A cookie is good in the tick it was made and the next one (64 to 128
/// seconds), as long as a client keeps retrying its handshake.
const MAX_AGE_TICKS: u32 = 1;

/// Bits of the MAC in the ISS; the other five carry the tick (2) and the
/// MSS index (3).
const MAC_BITS: u32 = 27;

/// No window scaling offered, in the TSval's 4-bit shift field.
const NO_WINDOW_SCALE: u8 = 15;

/// Where a segment came from and went to: the peer's socket address and
/// the TCP ports of the segment (its source and destination).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuple {
    /// The peer's address (of its UDP socket, or its IP address with any
    /// port on a carrier without one).
    pub peer: SocketAddr,
    /// The segment's source port.
    pub peer_port: u16,
    /// The segment's destination port.
    pub local_port: u16,
}

/// What the endpoint sends and rebuilds: the SYN the cookie vouches for,
/// the ISS (the cookie itself) and the offset of the connection's
/// timestamp clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vouched {
    /// A SYN, encoded, with only what the cookie carries.
    pub syn: Vec<u8>,
    /// The SYN-ACK's sequence number: the cookie.
    pub iss: SeqNum,
    /// The offset of the connection's timestamp clock.
    pub ts_offset: u32,
}

/// The offer of a SYN as a cookie keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Offer {
    mss_index: u8,
    /// Timestamps offered and, then, the rest of the offer.
    rest: Option<u8>,
}

impl Offer {
    fn of(syn: &SegmentRepr<'_>, timestamps_on: bool) -> Offer {
        let mss = syn.options.mss.unwrap_or(536);
        let mss_index = MSS_TABLE.iter().rposition(|&m| m <= mss).unwrap_or(0) as u8;
        let o = &syn.options;
        let rest = (timestamps_on && o.timestamps.is_some()).then(|| {
            let shift = o.window_scale.map_or(NO_WINDOW_SCALE, |s| s.min(14));
            shift
                | u8::from(o.sack_permitted) << 4
                | u8::from(syn.flags.contains(Flags::ECE) && syn.flags.contains(Flags::CWR)) << 5
                | u8::from(o.ack_request == Some(AckRequest::Supported)) << 6
                | u8::from(o.ack_nonce == Some(AckNonce::Permitted)) << 7
        });
        Offer { mss_index, rest }
    }

    /// The SYN with exactly this offer: sequence number `isn`, the peer's
    /// `tsval` and receive `window`.
    fn syn(self, tuple: &Tuple, isn: SeqNum, tsval: u32, window: u16) -> SegmentRepr<'static> {
        let mut flags = Flags::SYN;
        let mut options = Options {
            mss: Some(MSS_TABLE[usize::from(self.mss_index)]),
            ..Options::default()
        };
        if let Some(rest) = self.rest {
            let shift = rest & 0x0f;
            options.window_scale = (shift != NO_WINDOW_SCALE).then_some(shift);
            options.sack_permitted = rest & 1 << 4 != 0;
            if rest & 1 << 5 != 0 {
                flags = flags | Flags::ECE | Flags::CWR;
            }
            options.ack_request = (rest & 1 << 6 != 0).then_some(AckRequest::Supported);
            options.ack_nonce = (rest & 1 << 7 != 0).then_some(AckNonce::Permitted);
            options.timestamps = Some(Timestamps { tsval, tsecr: 0 });
        }
        SegmentRepr {
            src_port: tuple.peer_port,
            dst_port: tuple.local_port,
            seq: isn,
            ack: SeqNum(0),
            flags,
            window,
            options,
            payload: &[],
        }
    }
}

/// An endpoint's SYN-cookie secret: [`answer`](Self::answer) a SYN,
/// [`check`](Self::check) the ACK that returns.
pub struct SynCookies {
    k0: u64,
    k1: u64,
}

impl core::fmt::Debug for SynCookies {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SynCookies(..)")
    }
}

impl SynCookies {
    /// A fresh secret.
    pub fn new(rng: &mut dyn RngCore) -> Self {
        SynCookies {
            k0: rng.next_u64(),
            k1: rng.next_u64(),
        }
    }

    fn mac(&self, tuple: &Tuple, isn: SeqNum, extra: &[u8]) -> u64 {
        let mut msg = [0u8; 16 + 2 + 2 + 2 + 4 + 2];
        let ip = match tuple.peer.ip() {
            core::net::IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            core::net::IpAddr::V6(v6) => v6,
        };
        msg[..16].copy_from_slice(&ip.octets());
        msg[16..18].copy_from_slice(&tuple.peer.port().to_be_bytes());
        msg[18..20].copy_from_slice(&tuple.peer_port.to_be_bytes());
        msg[20..22].copy_from_slice(&tuple.local_port.to_be_bytes());
        msg[22..26].copy_from_slice(&isn.0.to_be_bytes());
        let n = 26 + extra.len().min(2);
        msg[26..n].copy_from_slice(&extra[..n - 26]);
        siphash13(self.k0, self.k1, &msg[..n])
    }

    /// The timestamp offset of every cookie connection with this peer,
    /// before the SYN-ACK's adjustment.
    fn ts_base(&self, tuple: &Tuple) -> u32 {
        (self.mac(tuple, SeqNum(0), &[0xff, 0xff]) >> 32) as u32
    }

    fn tick(now: Instant) -> u32 {
        (now.as_nanos() / 1_000_000_000 / TICK_SECS) as u32
    }

    fn iss(&self, tuple: &Tuple, isn: SeqNum, tick: u32, mss_index: u8) -> SeqNum {
        let tick = (tick & 3) as u8;
        let mask = (self.mac(tuple, isn, &[]) >> 59) as u32 & 0x1f;
        let clear = u32::from(tick) << 3 | u32::from(mss_index);
        let mac = self.mac(tuple, isn, &[tick, mss_index]) as u32 & ((1 << MAC_BITS) - 1);
        SeqNum((clear ^ mask) << MAC_BITS | mac)
    }

    /// The stateless answer to `syn` from `tuple` at `now`: the SYN to
    /// build the SYN-ACK from (the original reduced to what the cookie
    /// carries), the ISS and the timestamp offset that puts the rest of
    /// the offer into the SYN-ACK's TSval.
    pub fn answer(
        &self,
        now: Instant,
        tuple: &Tuple,
        syn: &SegmentRepr<'_>,
        timestamps_on: bool,
        checksum: Checksum,
    ) -> Option<Vouched> {
        let offer = Offer::of(syn, timestamps_on);
        let iss = self.iss(tuple, syn.seq, Self::tick(now), offer.mss_index);
        let base = self.ts_base(tuple);
        // The connection's TSval is now (in microseconds) + offset: move
        // it back by at most 255 so that its low byte is the offer.
        let ts_offset = match offer.rest {
            Some(rest) => {
                let natural = (now.as_nanos() / 1_000) as u32;
                let adjust = natural.wrapping_add(base).wrapping_sub(u32::from(rest)) & 0xff;
                base.wrapping_sub(adjust)
            }
            None => base,
        };
        let tsval = syn.options.timestamps.map_or(0, |t| t.tsval);
        let syn = offer.syn(tuple, syn.seq, tsval, syn.window);
        Some(Vouched {
            syn: encode(&syn, checksum)?,
            iss,
            ts_offset,
        })
    }

    /// The SYN that `ack` (from `tuple`, at `now`) shows was answered with
    /// a cookie of this endpoint, if it does: ACK - 1 must be a fresh
    /// cookie for SEQ - 1.
    pub fn check(
        &self,
        now: Instant,
        tuple: &Tuple,
        ack: &SegmentRepr<'_>,
        checksum: Checksum,
    ) -> Option<Vouched> {
        let f = ack.flags;
        if !f.contains(Flags::ACK) || f.contains(Flags::SYN) || f.contains(Flags::RST) {
            return None;
        }
        let iss = SeqNum(ack.ack.0.wrapping_sub(1));
        let isn = SeqNum(ack.seq.0.wrapping_sub(1));
        let mask = (self.mac(tuple, isn, &[]) >> 59) as u32 & 0x1f;
        let clear = (iss.0 >> MAC_BITS) ^ mask;
        let (tick, mss_index) = (clear >> 3, (clear & 7) as u8);
        let now_tick = Self::tick(now);
        let age = now_tick.wrapping_sub(tick) & 3;
        if age > MAX_AGE_TICKS {
            return None;
        }
        let made = now_tick.wrapping_sub(age);
        if self.iss(tuple, isn, made, mss_index) != iss {
            return None;
        }
        let rest = ack.options.timestamps.map(|t| (t.tsecr & 0xff) as u8);
        let offer = Offer { mss_index, rest };
        let tsval = ack.options.timestamps.map_or(0, |t| t.tsval);
        let syn = offer.syn(tuple, isn, tsval, ack.window);
        Some(Vouched {
            syn: encode(&syn, checksum)?,
            iss,
            ts_offset: self.ts_base(tuple),
        })
    }
}

fn encode(syn: &SegmentRepr<'_>, checksum: Checksum) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; HEADER_LEN + MAX_OPTIONS_LEN];
    let n = syn.emit(&mut buf, checksum).ok()?;
    buf.truncate(n);
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::{Config, Connection};
    use core::time::Duration;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    const CHECKSUM: Checksum = Checksum::UNSPECIFIED;

    fn tuple() -> Tuple {
        Tuple {
            peer: "192.0.2.7:40000".parse().unwrap(),
            peer_port: 50_000,
            local_port: 4433,
        }
    }

    fn parse(bytes: &[u8]) -> SegmentRepr<'_> {
        SegmentRepr::parse(bytes, CHECKSUM).unwrap()
    }

    /// Everything `from` has to send, fed to `to`.
    fn carry(now: Instant, from: &mut Connection, to: &mut Connection) -> usize {
        let mut buf = [0u8; 2048];
        let mut n = 0;
        while let Some(len) = from.poll_transmit(now, &mut buf) {
            to.handle_segment(now, &buf[..len]).unwrap();
            n += 1;
        }
        n
    }

    /// A client with `client` opens a connection to an endpoint that
    /// answers with a cookie; returns both ends, established.
    fn cookie_handshake(client: Config, server: Config) -> (Connection, Connection) {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let cookies = SynCookies::new(&mut rng);
        let t = tuple();
        let now = Instant::from_millis(1_000);
        let mut c = Connection::connect(client, now, t.peer_port, t.local_port, &mut rng).unwrap();
        let mut buf = [0u8; 256];
        let n = c.poll_transmit(now, &mut buf).unwrap();
        let syn = parse(&buf[..n]);
        let v = cookies
            .answer(now, &t, &syn, server.timestamps, CHECKSUM)
            .unwrap();
        // The SYN-ACK, from a connection that is then forgotten.
        let mut answering =
            Connection::accept_stateless(server.clone(), now, &v.syn, v.iss, v.ts_offset, &mut rng)
                .unwrap();
        let later = now + Duration::from_millis(30);
        let n = answering.poll_transmit(now, &mut buf).unwrap();
        drop(answering);
        c.handle_segment(later, &buf[..n]).unwrap();
        assert!(c.is_established());
        let n = c.poll_transmit(later, &mut buf).unwrap();
        let ack = parse(&buf[..n]);
        let back = now + Duration::from_millis(60);
        let v = cookies.check(back, &t, &ack, CHECKSUM).expect("our cookie");
        let s = Connection::accept_cookie_ack(
            server,
            back,
            &v.syn,
            v.iss,
            v.ts_offset,
            (&buf[..n], false),
            &mut rng,
        )
        .unwrap();
        assert!(s.is_established());
        (c, s)
    }

    fn exchange(c: &mut Connection, s: &mut Connection, bytes: usize) {
        let data: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
        let mut now = Instant::from_millis(2_000);
        let (mut wrote, mut got) = (0, Vec::new());
        let mut buf = vec![0u8; 65_536];
        for _ in 0..100_000 {
            wrote += c.write(&data[wrote..]);
            carry(now, c, s);
            carry(now, s, c);
            let n = s.read(&mut buf);
            got.extend_from_slice(&buf[..n]);
            if got.len() == bytes {
                break;
            }
            now += Duration::from_millis(1);
            c.handle_timeout(now);
            s.handle_timeout(now);
        }
        assert!(got == data, "{} of {bytes} bytes arrived intact", got.len());
    }

    #[test]
    fn a_cookie_connection_keeps_every_option_the_syn_offered() {
        let (mut c, mut s) = cookie_handshake(Config::default(), Config::default());
        let (cn, sn) = (c.negotiated(), s.negotiated());
        for n in [cn, sn] {
            assert!(n.window_scaling && n.sack && n.timestamps, "{n:?}");
            assert!(n.ack_requests && n.ack_nonce, "{n:?}");
        }
        assert_eq!(cn.send_window_shift, sn.recv_window_shift);
        assert_eq!(cn.recv_window_shift, sn.send_window_shift);
        // 1460 is in the table: the server may send full segments.
        assert_eq!(sn.peer_mss, 1460);
        exchange(&mut c, &mut s, 300_000);
        exchange(&mut s, &mut c, 100_000);
        assert_eq!(
            c.stats().ack_nonce_failures + s.stats().ack_nonce_failures,
            0
        );
    }

    #[test]
    fn ecn_survives_and_a_peer_without_timestamps_gets_a_working_reduced_connection() {
        let ecn = Config {
            ecn: true,
            ..Config::default()
        };
        let (c, s) = cookie_handshake(ecn.clone(), ecn);
        assert!(c.negotiated().ecn && s.negotiated().ecn);

        let bare = Config {
            timestamps: false,
            ..Config::default()
        };
        let (mut c, mut s) = cookie_handshake(bare, Config::default());
        // Nothing but the MSS fits without timestamps, and both ends agree.
        for n in [c.negotiated(), s.negotiated()] {
            assert!(!n.window_scaling && !n.sack && !n.timestamps, "{n:?}");
        }
        exchange(&mut c, &mut s, 200_000);
    }

    #[test]
    fn the_mss_is_rounded_down_to_the_table() {
        let client = Config {
            mss: 1448,
            ..Config::default()
        };
        let (_, s) = cookie_handshake(client, Config::default());
        assert_eq!(s.negotiated().peer_mss, 1440);
        let small = Config {
            mss: 100,
            ..Config::default()
        };
        let (_, s) = cookie_handshake(small, Config::default());
        assert_eq!(s.negotiated().peer_mss, 536);
    }

    /// A handshake ACK for `isn` and `iss` from `tuple()`.
    fn ack(isn: u32, iss: u32) -> Vec<u8> {
        let t = tuple();
        let repr = SegmentRepr {
            src_port: t.peer_port,
            dst_port: t.local_port,
            seq: SeqNum(isn.wrapping_add(1)),
            ack: SeqNum(iss.wrapping_add(1)),
            flags: Flags::ACK,
            window: 1000,
            options: Options::default(),
            payload: &[],
        };
        encode(&repr, CHECKSUM).unwrap()
    }

    #[test]
    fn forged_stale_and_misdirected_acks_are_refused() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let cookies = SynCookies::new(&mut rng);
        let t = tuple();
        let syn_of = |isn: u32| {
            let repr = SegmentRepr {
                src_port: t.peer_port,
                dst_port: t.local_port,
                seq: SeqNum(isn),
                ack: SeqNum(0),
                flags: Flags::SYN,
                window: 1000,
                options: Options {
                    mss: Some(1460),
                    ..Options::default()
                },
                payload: &[],
            };
            encode(&repr, CHECKSUM).unwrap()
        };
        let now = Instant::from_millis(500_000);
        let syn = syn_of(77);
        let v = cookies
            .answer(now, &t, &parse(&syn), true, CHECKSUM)
            .unwrap();
        let good = ack(77, v.iss.0);
        assert!(cookies.check(now, &t, &parse(&good), CHECKSUM).is_some());
        // Good in its own tick and the next, not after.
        let tick = Duration::from_secs(TICK_SECS);
        assert!(cookies
            .check(now + tick, &t, &parse(&good), CHECKSUM)
            .is_some());
        assert!(cookies
            .check(now + tick * 2, &t, &parse(&good), CHECKSUM)
            .is_none());
        // Another client ISN, another port, another address.
        assert!(cookies
            .check(now, &t, &parse(&ack(78, v.iss.0)), CHECKSUM)
            .is_none());
        let elsewhere = Tuple {
            peer_port: 50_001,
            ..t
        };
        assert!(cookies
            .check(now, &elsewhere, &parse(&good), CHECKSUM)
            .is_none());
        let other_host = Tuple {
            peer: "192.0.2.8:40000".parse().unwrap(),
            ..t
        };
        assert!(cookies
            .check(now, &other_host, &parse(&good), CHECKSUM)
            .is_none());
        // Another endpoint's secret.
        let theirs = SynCookies::new(&mut rng);
        assert!(theirs.check(now, &t, &parse(&good), CHECKSUM).is_none());
        // Blind guesses: 200 000 random cookies, each right with
        // probability about 2^-27 x 2/4.
        let mut accepted = 0;
        for _ in 0..200_000 {
            let guess = ack(77, rng.next_u32());
            accepted += usize::from(cookies.check(now, &t, &parse(&guess), CHECKSUM).is_some());
        }
        assert_eq!(accepted, 0);
    }

    #[test]
    fn cookies_look_random() {
        // The same client ISN from successive ports: the cookies share no
        // visible structure (every bit takes both values).
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let cookies = SynCookies::new(&mut rng);
        let now = Instant::from_millis(1);
        let (mut ones, mut zeros) = (0u32, 0u32);
        for port in 1000..1400u16 {
            let t = Tuple {
                peer_port: port,
                ..tuple()
            };
            let iss = cookies.iss(&t, SeqNum(1), SynCookies::tick(now), 7).0;
            ones |= iss;
            zeros |= !iss;
        }
        assert_eq!((ones, zeros), (u32::MAX, u32::MAX));
    }
}
