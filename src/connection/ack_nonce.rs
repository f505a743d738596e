//! ACK nonce: proof that a receiver holds the data it acknowledges.
//!
//! A sender clocks its data by the peer's ACKs, so a receiver that
//! acknowledges data still in flight ("optimistic ACKs", Savage et al.,
//! "TCP congestion control with a misbehaving receiver", 1999) makes it
//! send as fast as the lies come, whatever the path can carry. TCP cannot
//! tell such an ACK from an honest one. ackwise negotiates its own
//! option, so it can ask for a proof, in the spirit of RFC 3540's nonce:
//!
//! - every data segment carries a 16-bit nonce, a keyed hash
//!   (SipHash-1-3) of the sequence number where the segment ends, under a
//!   key drawn per connection that never leaves the sender;
//! - every ACK carries the echo of the nonce of the segment that ends at
//!   its acknowledgment number. The cumulative point always ends a
//!   segment the receiver holds (it moves only to the end of received
//!   data), so an honest receiver always has that nonce; one that
//!   acknowledges a segment it has not received has to guess it;
//! - the sender checks the echo on every ACK that moves SND.UNA and
//!   ignores an ACK whose echo is missing or wrong: nothing it claims
//!   is believed.
//!
//! A guess is right once in 65 536 times and each wrong one is counted
//! (`Stats::ack_nonce_failures`). Because the nonce depends only on where
//! a segment ends, a retransmission cut differently carries the right
//! nonce for its own end, and no per-segment state is kept by the
//! sender. The receiver keeps the nonce of the segment ending each
//! out-of-order range it holds, and claims no more than it can prove
//! ([`EchoTracker`]).
//!
//! Without SACK a sender cannot tell one duplicate ACK from another, and
//! NewReno lets a segment out for each one, so a receiver that repeats
//! its duplicates makes the sender flood the path. With the nonce in use
//! and SACK off, a duplicate ACK also echoes the nonce of the
//! out-of-order segment whose arrival it reports (a second echo in the
//! same option), and the sender counts it only for a segment it sent and
//! has not counted before ([`SentEnds`]): twenty copies of one duplicate
//! count once.
//!
//! The proof covers the cumulative ACK only. SACK blocks are not proved:
//! a lying SACK can make the sender retransmit less, but it cannot move
//! SND.UNA, and only SND.UNA's advance opens the window. The option
//! costs 6 bytes on data segments and ACKs (8 after alignment without
//! SACK blocks, 4 with them), and leaves room for two SACK blocks beside
//! timestamps instead of three.

use super::SeqNum;
use crate::sender::SegmentCuts;
use alloc::collections::BTreeMap;

/// Whether a connection uses ACK nonces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckNonceMode {
    /// Neither offered nor used.
    Off,
    /// Offered on the SYN, used when the peer offers it too; a peer that
    /// does not (any TCP other than ackwise) is served without.
    #[default]
    Offer,
    /// Offered and required: a handshake with a peer that does not offer
    /// it is refused with a reset. For ends that only ever talk to
    /// ackwise (`ackwise send` to `ackwise recv`), where a receiver that
    /// strips the option must not get around the check.
    Require,
}

impl AckNonceMode {
    /// The SYN offers the nonce.
    pub fn offers(self) -> bool {
        self != AckNonceMode::Off
    }
}

/// The sender's secret: the nonce of a segment is a keyed hash of where
/// it ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NonceKey {
    k0: u64,
    k1: u64,
}

impl core::fmt::Debug for NonceKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The key is the whole defence: keep it out of logs.
        f.write_str("NonceKey(..)")
    }
}

impl NonceKey {
    /// A key from 128 random bits.
    pub fn new(k0: u64, k1: u64) -> Self {
        NonceKey { k0, k1 }
    }

    /// The nonce of a segment that ends at sequence number `end` (its
    /// sequence number plus its length, the FIN counted).
    pub fn nonce(&self, end: SeqNum) -> u16 {
        (sip13(self.k0, self.k1, end.0) >> 48) as u16
    }

    /// A key for the sender's segment cuts toward a peer that declined
    /// the nonce, derived from this one (each half a hash of its own
    /// label), so one draw of randomness serves both.
    pub fn segment_cuts(&self) -> SegmentCuts {
        let half = |label: &[u8]| siphash13(self.k0, self.k1, label);
        SegmentCuts::new(half(b"ackwise cuts k0"), half(b"ackwise cuts k1"))
    }
}

/// SipHash-1-3 (Aumasson and Bernstein, 2012) of a 4-byte message, the
/// little-endian bytes of `m`.
fn sip13(k0: u64, k1: u64, m: u32) -> u64 {
    siphash13(k0, k1, &m.to_le_bytes())
}

/// SipHash-1-3 of `msg` under the key (`k0`, `k1`): one compression round
/// per 8-byte block, three finalization rounds. Also the MAC of the
/// listening endpoint's SYN cookies.
pub(crate) fn siphash13(k0: u64, k1: u64, msg: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let compress = |v: &mut [u64; 4], block: u64| {
        v[3] ^= block;
        round(v);
        v[0] ^= block;
    };
    let mut blocks = msg.chunks_exact(8);
    for b in &mut blocks {
        compress(&mut v, u64::from_le_bytes(b.try_into().expect("8 bytes")));
    }
    // The last block: the remaining bytes, the message length in the top
    // byte.
    let mut last = (msg.len() as u64 & 0xff) << 56;
    for (i, byte) in blocks.remainder().iter().enumerate() {
        last |= u64::from(*byte) << (8 * i);
    }
    compress(&mut v, last);
    v[2] ^= 0xff;
    for _ in 0..3 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// The sender's record of where the segments it has sent above SND.UNA
/// end: with the nonce and without SACK, so that each duplicate ACK can
/// be matched to the arrival of one of them, once; toward a peer that
/// declined the nonce, so that an ACK can be held to a point where a
/// segment ends (see [`segment_cuts`](crate::sender::segment_cuts)).
#[derive(Debug, Clone, Default)]
pub struct SentEnds {
    /// Stream offsets where sent segments end (ascending), and whether a
    /// duplicate ACK was counted for the segment.
    ends: alloc::collections::VecDeque<(u64, bool)>,
}

impl SentEnds {
    /// A segment ending at stream offset `end` was sent. A retransmission
    /// may bring a duplicate ACK again, so it may be counted again; one
    /// cut differently from the first transmission adds its own end.
    pub fn on_sent(&mut self, end: u64) {
        match self.ends.back() {
            Some(&(last, _)) if last < end => self.ends.push_back((end, false)),
            None => self.ends.push_back((end, false)),
            _ => match self.ends.binary_search_by(|&(e, _)| e.cmp(&end)) {
                Ok(i) => self.ends[i].1 = false,
                Err(i) => self.ends.insert(i, (end, false)),
            },
        }
    }

    /// Whether a segment sent above SND.UNA ends at stream offset `end`.
    pub fn contains(&self, end: u64) -> bool {
        self.ends.binary_search_by(|&(e, _)| e.cmp(&end)).is_ok()
    }

    /// Gives the storage back when no segment is outstanding.
    pub fn release_if_empty(&mut self) {
        if self.ends.is_empty() {
            self.ends = alloc::collections::VecDeque::new();
        }
    }

    /// SND.UNA reached `una`: the segments below are settled.
    pub fn on_acked(&mut self, una: u64) {
        while self.ends.front().is_some_and(|&(e, _)| e <= una) {
            self.ends.pop_front();
        }
    }

    /// A duplicate ACK echoes `arrival`: true (and the segment counted)
    /// when it is the nonce of a segment sent above SND.UNA and not
    /// counted yet; `seq` maps a stream offset to its sequence number.
    pub fn credit(&mut self, key: &NonceKey, arrival: u16, seq: impl Fn(u64) -> SeqNum) -> bool {
        let hit = self
            .ends
            .iter_mut()
            .find(|(end, counted)| !*counted && key.nonce(seq(*end)) == arrival);
        match hit {
            Some((_, counted)) => {
                *counted = true;
                true
            }
            None => false,
        }
    }
}

/// The receiver's side: how far its ACKs can prove, and the nonce they
/// echo.
///
/// The cumulative point jumps to the end of a held range when a hole
/// fills, so of the out-of-order segments only those ending a held range
/// matter: their nonces are the ones kept (at most one per range, which
/// the reassembly bounds), whatever the segment size. When RCV.NXT still
/// lands where no nonce is known (a segment cut at the window's edge, or
/// one that came without the option), the ACK claims only the highest
/// point it can prove (see [`ack_point`](Self::ack_point)): claiming more
/// would have the sender refuse every ACK while its retransmissions,
/// all below RCV.NXT, never bring the missing nonce.
#[derive(Debug, Clone, Default)]
pub struct EchoTracker {
    /// The provable point: where the segment whose nonce the ACKs echo
    /// ends (stream offset, the FIN counted), and that nonce (none before
    /// any data arrived; the point is then the start of the stream).
    proof: (u64, Option<u16>),
    /// Nonces of out-of-order segments that end a held range, by the
    /// stream offset where they end; one of them becomes the proof when
    /// RCV.NXT reaches it.
    held: BTreeMap<u64, u16>,
    /// At most this many are held (the receiver's out-of-order range
    /// limit, which the held ranges never exceed).
    limit: usize,
}

impl EchoTracker {
    /// A tracker holding at most `limit` out-of-order nonces.
    pub fn new(limit: usize) -> Self {
        EchoTracker {
            proof: (0, None),
            held: BTreeMap::new(),
            limit: limit.max(1),
        }
    }

    /// A data segment `[start, end)` (stream offsets, FIN included) with
    /// `nonce` arrived. `rcv_nxt` is the cumulative point after it was
    /// taken in (FIN included), and `range` the held out-of-order range
    /// that now contains the segment's last byte, if any.
    pub fn on_segment(
        &mut self,
        (start, end): (u64, u64),
        nonce: u16,
        rcv_nxt: u64,
        range: Option<(u64, u64)>,
    ) {
        if end == rcv_nxt || (start <= self.proof.0 && self.proof.0 < end && end < rcv_nxt) {
            // Reaches RCV.NXT, or (old data) carries the proof further up
            // towards it.
            self.proof = (end, Some(nonce));
        } else if let Some((from, to)) = range.filter(|_| end > rcv_nxt) {
            // Ends inside a held range: nonces of segments ending inside
            // it can never be the cumulative point any more.
            while let Some((&e, _)) = self.held.range(from..to).next() {
                self.held.remove(&e);
            }
            if end == to && (self.held.len() < self.limit || self.held.contains_key(&end)) {
                self.held.insert(end, nonce);
            }
        }
        if !self.held.is_empty() {
            if let Some(&n) = self.held.get(&rcv_nxt) {
                self.proof = (rcv_nxt, Some(n));
            }
            // Everything at or below RCV.NXT is settled (popped in
            // place: no new map per segment).
            while self
                .held
                .first_key_value()
                .is_some_and(|(&e, _)| e <= rcv_nxt)
            {
                self.held.pop_first();
            }
        }
    }

    /// The echo for an ACK of [`ack_point`](Self::ack_point), once a
    /// segment reached it.
    pub fn echo(&self) -> Option<u16> {
        self.proof.1
    }

    /// What an ACK may claim when RCV.NXT (FIN included) is `rcv_nxt`:
    /// RCV.NXT itself when the nonce of the segment ending there is known
    /// (always, but for a segment cut at the window's edge or sent without
    /// the option), else the highest point below it that is.
    pub fn ack_point(&self, rcv_nxt: u64) -> u64 {
        self.proof.0.min(rcv_nxt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::hash::Hasher;

    #[test]
    fn sip13_matches_a_reference_implementation() {
        for (k0, k1, m) in [
            (0, 0, 0),
            (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908, 0x0302_0100),
            (u64::MAX, 1, u32::MAX),
            (0xdead_beef, 0x1234_5678_9abc_def0, 1448),
        ] {
            let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
            h.write(&m.to_le_bytes());
            assert_eq!(sip13(k0, k1, m), h.finish(), "{k0:#x} {k1:#x} {m:#x}");
        }
        // Every length across the block boundaries.
        let msg: Vec<u8> = (0..40u8).map(|b| b.wrapping_mul(37)).collect();
        for len in 0..msg.len() {
            let mut h = siphasher::sip::SipHasher13::new_with_keys(7, 9);
            h.write(&msg[..len]);
            assert_eq!(siphash13(7, 9, &msg[..len]), h.finish(), "length {len}");
        }
    }

    #[test]
    fn nonces_depend_on_the_key_and_the_end() {
        let a = NonceKey::new(1, 2);
        let b = NonceKey::new(1, 3);
        let ends = (0..1000u32).map(|i| SeqNum(i.wrapping_mul(1448)));
        let same_key: std::collections::HashSet<u16> = ends.clone().map(|e| a.nonce(e)).collect();
        assert!(
            same_key.len() > 980,
            "nearly all distinct: {}",
            same_key.len()
        );
        let agree = ends.filter(|&e| a.nonce(e) == b.nonce(e)).count();
        assert!(agree < 5, "another key, other nonces: {agree} agree");
        assert_eq!(format!("{a:?}"), "NonceKey(..)");
    }

    #[test]
    fn the_echo_follows_the_segment_that_ends_at_the_cumulative_point() {
        let mut t = EchoTracker::new(8);
        // 0..1000 arrives in order.
        t.on_segment((0, 1000), 11, 1000, None);
        assert_eq!((t.echo(), t.ack_point(1000)), (Some(11), 1000));
        // 2000..3000 and 3000..4000 arrive above a hole: one held range,
        // whose end alone can become the cumulative point.
        t.on_segment((2000, 3000), 33, 1000, Some((2000, 3000)));
        t.on_segment((3000, 4000), 44, 1000, Some((2000, 4000)));
        assert_eq!(t.echo(), Some(11));
        assert_eq!(t.held.keys().copied().collect::<Vec<_>>(), vec![4000]);
        // The hole fills: RCV.NXT jumps to 4000, the end of the range.
        t.on_segment((1000, 2000), 22, 4000, None);
        assert_eq!((t.echo(), t.ack_point(4000)), (Some(44), 4000));
        assert!(t.held.is_empty());
        // A duplicate below RCV.NXT changes nothing.
        t.on_segment((2000, 3000), 99, 4000, None);
        assert_eq!(t.echo(), Some(44));
    }

    #[test]
    fn a_range_longer_than_the_limit_in_segments_keeps_its_end() {
        // More small segments above a hole than the limit (the range
        // limit counts windows of full-sized segments; these are smaller).
        let mut t = EchoTracker::new(3);
        t.on_segment((0, 100), 1, 100, None);
        for i in 2..100u64 {
            t.on_segment(
                (i * 100, i * 100 + 100),
                i as u16,
                100,
                Some((200, i * 100 + 100)),
            );
        }
        assert_eq!(t.held.len(), 1);
        t.on_segment((100, 200), 1000, 10_000, None);
        assert_eq!((t.echo(), t.ack_point(10_000)), (Some(99), 10_000));
    }

    #[test]
    fn an_unproved_cumulative_point_is_not_claimed_until_old_data_proves_it() {
        let mut t = EchoTracker::new(8);
        t.on_segment((0, 1000), 11, 1000, None);
        // 2000..3000 was held but its nonce never seen (a segment without
        // the option, or cut at the window's edge): the hole's filler
        // proves 2000, not RCV.NXT.
        t.on_segment((1000, 2000), 22, 3000, None);
        assert_eq!((t.echo(), t.ack_point(3000)), (Some(22), 2000));
        // A retransmission from the proved point, all old data, carries
        // the proof on; one that starts above it proves nothing.
        t.on_segment((2500, 2800), 77, 3000, None);
        assert_eq!(t.ack_point(3000), 2000);
        t.on_segment((2000, 2500), 25, 3000, None);
        assert_eq!((t.echo(), t.ack_point(3000)), (Some(25), 2500));
        t.on_segment((2400, 3000), 30, 3000, None);
        assert_eq!((t.echo(), t.ack_point(3000)), (Some(30), 3000));
    }

    #[test]
    fn each_sent_segment_earns_one_duplicate_until_it_is_resent() {
        let key = NonceKey::new(5, 6);
        let seq = |offset: u64| SeqNum(offset as u32);
        let mut sent = SentEnds::default();
        for end in [1000, 2000, 3000] {
            sent.on_sent(end);
        }
        let n2 = key.nonce(seq(2000));
        assert!(sent.credit(&key, n2, seq));
        assert!(!sent.credit(&key, n2, seq), "a copy counts nothing");
        assert!(!sent.credit(&key, n2 ^ 1, seq), "nor a guess (here)");
        sent.on_sent(2000);
        assert!(sent.credit(&key, n2, seq), "resent, it may arrive again");
        sent.on_acked(2000);
        assert!(!sent.credit(&key, n2, seq), "acknowledged: settled");
        assert!(sent.credit(&key, key.nonce(seq(3000)), seq));
    }

    #[test]
    fn out_of_order_nonces_are_bounded() {
        let mut t = EchoTracker::new(3);
        for i in 2..100u64 {
            // Each its own range, a byte missing below each.
            t.on_segment(
                (i * 10 - 5, i * 10),
                i as u16,
                10,
                Some((i * 10 - 5, i * 10)),
            );
        }
        assert_eq!(t.held.len(), 3);
        assert_eq!(t.held.keys().copied().collect::<Vec<_>>(), vec![20, 30, 40]);
    }
}
