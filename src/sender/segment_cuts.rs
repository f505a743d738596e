//! Unguessable segment ends: catching optimistic ACKs from a peer that
//! takes no part in the ACK nonce.
//!
//! A receiver that acknowledges data still in flight makes its sender
//! outrun the path (Savage et al., "TCP congestion control with a
//! misbehaving receiver", 1999). Between two ackwise ends the ACK nonce
//! ([`ack_nonce`](crate::connection::ack_nonce)) makes every such ACK
//! prove itself. A peer that declines the nonce (any TCP other than
//! ackwise, or a liar that strips the offer) proves nothing, but its ACKs
//! can still be held to one fact every honest receiver obeys: the
//! cumulative ACK moves only to the end of data that arrived, so it is
//! always the end of a segment that was sent, and SACK blocks begin and
//! end where segments do. A receiver that acknowledges a segment it has
//! not seen has to say where that segment ends.
//!
//! Were all segments full-sized, that would be easy to guess. So, toward
//! a peer that declined the nonce this end offered, the sender shortens
//! about one new full segment in [`CUT_ONE_IN`] by an amount drawn from
//! a keyed hash of where the segment starts (SipHash-1-3 under a key the
//! peer never sees); every end after it shifts by that amount. An ACK
//! that names a point where no sent segment ends is ignored and counted
//! (`Stats::segment_end_failures`), and [`END_FAILURES_BEFORE_RESET`]
//! of them reset the connection (`CloseReason::PeerMisbehaved`), so a
//! liar cannot try every offset in turn. A lie that reaches n full
//! segments past what arrived is right with probability about
//! (1 - 1/32)^n: 0.36 at n = 32, 0.04 at n = 100.
//!
//! The cost falls on these connections only: about one segment in 32
//! carries between half and all but one byte of a full payload, so about
//! 0.8 % more segments carry the same bytes. An attacker that watches the
//! sender's segments leave (on the path, before the bottleneck) sees the
//! real ends and is not stopped; that is the on-path observer the
//! threat model leaves to cryptography (`docs/security.md`).

use crate::connection::ack_nonce::siphash13;

/// About one new full segment in this many is shortened.
pub const CUT_ONE_IN: u64 = 32;

/// ACKs naming a point where no segment ends that a connection takes
/// before it resets: an honest receiver never sends one, and a liar
/// trying offsets one by one is stopped after this many.
pub const END_FAILURES_BEFORE_RESET: u64 = 3;

/// The sender's secret choice of which segments to shorten and by how
/// much.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SegmentCuts {
    k0: u64,
    k1: u64,
}

impl core::fmt::Debug for SegmentCuts {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The key is the whole defence: keep it out of logs.
        f.write_str("SegmentCuts(..)")
    }
}

impl SegmentCuts {
    /// Cuts under a 128-bit key that the peer must never learn.
    pub fn new(k0: u64, k1: u64) -> Self {
        SegmentCuts { k0, k1 }
    }

    /// The payload of a new segment starting at stream offset `start`
    /// whose full size is `full` bytes: `full` most of the time, about
    /// once in [`CUT_ONE_IN`] a length in `full / 2 .. full`.
    pub fn length(&self, start: u64, full: u64) -> u64 {
        if full < 2 {
            return full;
        }
        let h = siphash13(self.k0, self.k1, &start.to_le_bytes());
        if !h.is_multiple_of(CUT_ONE_IN) {
            return full;
        }
        // The high half of the hash picks the length, independent of the
        // low bits that decided to cut.
        let half = full / 2;
        half + (h >> 32) % (full - half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_one_segment_in_32_is_cut_to_between_half_and_all_but_a_byte() {
        let cuts = SegmentCuts::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
        let full = 1400u64;
        let (mut cut, mut removed) = (0u64, 0u64);
        let n = 100_000u64;
        for i in 0..n {
            let len = cuts.length(i * full, full);
            assert!((full / 2..=full).contains(&len), "{len}");
            if len < full {
                cut += 1;
                removed += full - len;
            }
        }
        // 3125 expected; a binomial's standard deviation is about 55.
        assert!((2900..3350).contains(&cut), "{cut} of {n} cut");
        // Each cut removes 1..=700 bytes, 350 on average.
        let mean = removed as f64 / cut as f64;
        assert!((320.0..380.0).contains(&mean), "{mean}");
    }

    #[test]
    fn the_choice_depends_on_the_key_and_is_stable_under_it() {
        let a = SegmentCuts::new(1, 2);
        let b = SegmentCuts::new(1, 3);
        let full = 1000u64;
        let lengths = |c: &SegmentCuts| {
            (0..2000)
                .map(|i| c.length(i * 997, full))
                .collect::<Vec<_>>()
        };
        assert_eq!(lengths(&a), lengths(&a));
        assert_ne!(lengths(&a), lengths(&b));
    }

    #[test]
    fn tiny_segments_are_left_whole() {
        let cuts = SegmentCuts::new(5, 6);
        for start in 0..10_000 {
            assert_eq!(cuts.length(start, 1), 1);
            assert_eq!(cuts.length(start, 0), 0);
            let two = cuts.length(start, 2);
            assert!(two == 1 || two == 2);
        }
    }

    #[test]
    fn debug_output_keeps_the_key_secret() {
        let text = format!("{:?}", SegmentCuts::new(0xdead_beef, 0xcafe));
        assert!(
            !text.contains("dead") && !text.contains("3735928559"),
            "{text}"
        );
    }
}
