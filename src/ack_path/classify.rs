//! Which segments an ACK filter may touch, and when one ACK may stand in
//! for another.
//!
//! A pure ACK carries no payload and none of SYN, FIN and RST: removing
//! it loses nothing but acknowledgment information, which a later ACK of
//! the same flow can carry. The rules here decide when it does:
//!
//! - the newer ACK must acknowledge strictly more: an ACK repeating the
//!   cumulative acknowledgment is a duplicate ACK, which tells the sender
//!   about a loss (RFC 5681 fast retransmit counts them), so duplicates
//!   are never removed and never replace one another;
//! - every SACK block of the older ACK must be known from the newer one:
//!   below its cumulative acknowledgment or inside one of its blocks.
//!   The newer ACK carries at most three or four blocks, so older
//!   information can fall off; when it would, the older ACK stays in the
//!   queue (ackwise's rule: never merge blocks into another host's
//!   segment, never drop them silently).

use crate::wire::{Flags, SackBlocks, SegmentRepr, SeqNum};

/// The parts of a pure ACK a filter compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PureAck {
    /// Source port, to tell flows of one host pair apart (with the
    /// addresses the caller keys flows by).
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Cumulative acknowledgment.
    pub ack: SeqNum,
    /// SACK blocks.
    pub sack: SackBlocks,
}

impl PureAck {
    /// The pure ACK `seg` is, or `None` when it carries data or SYN, FIN
    /// or RST, or lacks the ACK flag (a filter leaves those alone).
    pub fn from_segment(seg: &SegmentRepr<'_>) -> Option<PureAck> {
        let f = seg.flags;
        let pure = seg.payload.is_empty()
            && f.contains(Flags::ACK)
            && ![Flags::SYN, Flags::FIN, Flags::RST]
                .into_iter()
                .any(|c| f.contains(c));
        pure.then_some(PureAck {
            src_port: seg.src_port,
            dst_port: seg.dst_port,
            ack: seg.ack,
            sack: seg.options.sack,
        })
    }

    fn same_flow(&self, other: &PureAck) -> bool {
        self.src_port == other.src_port && self.dst_port == other.dst_port
    }

    /// `[left, right)` is known from this ACK: below its cumulative
    /// acknowledgment or inside one of its SACK blocks.
    fn covers(&self, left: SeqNum, right: SeqNum) -> bool {
        right.le(self.ack)
            || self
                .sack
                .as_slice()
                .iter()
                .any(|&(l, r)| l.le(left) && right.le(r))
    }
}

/// Whether `newer` (queued after `older`, same host pair) may replace
/// `older`, i.e. whether `older` may be removed without losing anything
/// the sender would learn from it. See the module documentation for the
/// rules.
pub fn may_replace(older: &PureAck, newer: &PureAck) -> bool {
    older.same_flow(newer)
        && older.ack.lt(newer.ack)
        && older
            .sack
            .as_slice()
            .iter()
            .all(|&(l, r)| newer.covers(l, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Options;

    fn ack(ack: u32, sack: &[(u32, u32)]) -> PureAck {
        let mut blocks = SackBlocks::new();
        for &(l, r) in sack {
            blocks.push(SeqNum(l), SeqNum(r));
        }
        PureAck {
            src_port: 80,
            dst_port: 5000,
            ack: SeqNum(ack),
            sack: blocks,
        }
    }

    fn segment(flags: Flags, payload: &[u8]) -> SegmentRepr<'_> {
        SegmentRepr {
            src_port: 80,
            dst_port: 5000,
            seq: SeqNum(1),
            ack: SeqNum(1000),
            flags,
            window: 100,
            options: Options::default(),
            payload,
        }
    }

    #[test]
    fn only_pure_acks_are_classified() {
        assert!(PureAck::from_segment(&segment(Flags::ACK, b"")).is_some());
        assert!(PureAck::from_segment(&segment(Flags::ACK | Flags::PSH, b"")).is_some());
        assert!(PureAck::from_segment(&segment(Flags::ACK, b"x")).is_none());
        for f in [Flags::SYN, Flags::FIN, Flags::RST] {
            assert!(PureAck::from_segment(&segment(Flags::ACK | f, b"")).is_none());
        }
        assert!(PureAck::from_segment(&segment(Flags::RST, b"")).is_none());
    }

    #[test]
    fn a_higher_ack_replaces_a_lower_one() {
        assert!(may_replace(&ack(1000, &[]), &ack(2000, &[])));
        assert!(!may_replace(&ack(2000, &[]), &ack(1000, &[])));
        // Across the sequence-number wrap.
        assert!(may_replace(&ack(u32::MAX - 10, &[]), &ack(5, &[])));
    }

    #[test]
    fn duplicate_acks_are_never_replaced() {
        assert!(!may_replace(&ack(1000, &[]), &ack(1000, &[])));
        assert!(!may_replace(
            &ack(1000, &[(2000, 3000)]),
            &ack(1000, &[(2000, 4000)])
        ));
    }

    #[test]
    fn other_flows_are_never_replaced() {
        let mut other = ack(5000, &[]);
        other.dst_port = 5001;
        assert!(!may_replace(&ack(1000, &[]), &other));
    }

    #[test]
    fn sack_blocks_the_newer_ack_would_lose_keep_the_older_one() {
        // The hole at 1000 is filled up to 3000: the old block is below
        // the new cumulative ACK.
        assert!(may_replace(&ack(1000, &[(2000, 3000)]), &ack(3000, &[])));
        // The old block lives on inside a newer, larger one.
        assert!(may_replace(
            &ack(1000, &[(2000, 3000)]),
            &ack(1500, &[(2000, 4000)])
        ));
        // The newer ACK no longer mentions [5000, 6000): keep the older.
        assert!(!may_replace(
            &ack(1000, &[(2000, 3000), (5000, 6000)]),
            &ack(1500, &[(2000, 3000)])
        ));
        // A block only partly covered is not covered.
        assert!(!may_replace(
            &ack(1000, &[(2000, 3000)]),
            &ack(1500, &[(2500, 3000)])
        ));
    }
}
