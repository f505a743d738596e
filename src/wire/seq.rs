//! 32-bit TCP sequence numbers and their mapping to 64-bit stream offsets.
//!
//! Everything above `wire/` counts bytes as `u64` offsets from the initial
//! sequence number, so wrap-around is handled here and nowhere else.

use core::fmt;

/// A TCP sequence (or acknowledgment) number, compared modulo 2^32
/// (RFC 9293 section 3.4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// `self + n` modulo 2^32.
    pub const fn add(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }

    /// Signed distance from `other` to `self` (positive when `self` is later).
    pub const fn diff(self, other: SeqNum) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }

    /// `self` comes before `other` in sequence space.
    pub const fn lt(self, other: SeqNum) -> bool {
        self.diff(other) < 0
    }

    /// `self` comes before or is `other`.
    pub const fn le(self, other: SeqNum) -> bool {
        self.diff(other) <= 0
    }

    /// The sequence number of stream offset `offset` when the
    /// stream starts at sequence number `isn` (offset 0 maps to `isn`).
    pub const fn from_offset(isn: SeqNum, offset: u64) -> SeqNum {
        SeqNum(isn.0.wrapping_add(offset as u32))
    }

    /// The stream offset of `self`, choosing among all offsets congruent to
    /// it modulo 2^32 the one nearest to `reference`, never below zero.
    pub fn to_offset(self, isn: SeqNum, reference: u64) -> u64 {
        let rel = self.0.wrapping_sub(isn.0);
        let ref_low = reference as u32;
        let delta = rel.wrapping_sub(ref_low) as i32 as i64;
        let candidate = reference as i64 as i128 + delta as i128;
        if candidate < 0 {
            // Below the start of the stream: the nearest valid offset is the
            // same residue one wrap higher.
            (candidate + (1i128 << 32)) as u64
        } else {
            candidate as u64
        }
    }
}

impl fmt::Debug for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_wrap() {
        let a = SeqNum(u32::MAX - 5);
        let b = a.add(10);
        assert_eq!(b.0, 4);
        assert!(a.lt(b));
        assert!(!b.lt(a));
        assert!(a.le(a));
        assert_eq!(b.diff(a), 10);
        assert_eq!(a.diff(b), -10);
    }

    #[test]
    fn offsets_round_trip_across_wraps() {
        let isn = SeqNum(u32::MAX - 100);
        for &off in &[
            0u64,
            1,
            100,
            101,
            5_000,
            (1 << 32) - 1,
            1 << 32,
            (1 << 33) + 7,
            1 << 40,
        ] {
            let s = SeqNum::from_offset(isn, off);
            assert_eq!(s.to_offset(isn, off), off);
            assert_eq!(s.to_offset(isn, off.saturating_sub(1_000_000)), off);
            assert_eq!(s.to_offset(isn, off + 1_000_000), off);
        }
    }

    #[test]
    fn offsets_never_negative() {
        let isn = SeqNum(1000);
        // A sequence number just before the ISN near offset 0 maps one wrap up.
        assert_eq!(SeqNum(999).to_offset(isn, 0), (1u64 << 32) - 1);
    }
}
