//! ACK filtering (paper 000, Barakat & Altman): when a pure ACK arrives
//! at the reverse buffer, older ACKs of its connection that it makes
//! redundant are erased.
//!
//! The algorithms differ in *when* they erase:
//!
//! - [`Filter::Classic`]: always (the one-ACK-per-connection filtering of
//!   the earlier literature, paper 000 sec. 1 and ref. 3);
//! - [`Filter::Static`]: once the connection has `delta` ACKs queued, the
//!   newest queued ACK is replaced by the arriving one (sec. 2.3); the
//!   best `delta` is `mu_r T / (d + 1)` (eq. 1, [`optimum_delta`]);
//! - [`Filter::Delayed`]: only while the reverse channel's utilization,
//!   measured at its output with a TSW estimator, is above a threshold
//!   (90 % in the paper, sec. 3); then classic filtering;
//! - [`Filter::PerFlowDelayed`]: per connection, only while that
//!   connection's ACK rate at the output exceeds its fair share, the
//!   channel rate divided by the number of active connections (sec. 4.1).
//!   ackwise scales the share by the same 90 % as the single-flow filter:
//!   a rate cannot exceed the whole channel, so with one connection the
//!   paper's test would never filter, and with N equal connections each
//!   at exactly its share it would not filter a saturated channel either.
//!
//! Whatever the algorithm, an ACK is erased only when
//! [`may_replace`] allows it: duplicate ACKs and
//! SACK blocks the newer ACK does not repeat are never lost.

use super::classify::{may_replace, PureAck};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::time::Duration;

/// Which ACK filtering algorithm a reverse buffer runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Filter {
    /// No filtering (`delta` = infinity).
    None,
    /// Erase every older ACK of the connection the arriving one makes
    /// redundant; the arriving ACK takes the place of the oldest erased.
    Classic,
    /// Once `delta` ACKs of the connection are queued, the arriving ACK
    /// replaces the most recently queued one, in its place.
    Static {
        /// ACKs a connection may queue before filtering starts.
        delta: usize,
    },
    /// Classic filtering while the channel's measured utilization is
    /// above `threshold` (a fraction, 0.9 in the paper), none below.
    Delayed {
        /// Utilization above which ACKs are filtered.
        threshold: f64,
    },
    /// Classic filtering of a connection while its own ACK rate at the
    /// output exceeds `threshold` times the channel's capacity over the
    /// number of active connections.
    PerFlowDelayed {
        /// Fraction of the fair share above which ACKs are filtered.
        threshold: f64,
    },
}

impl Filter {
    /// Paper 000's delayed filtering: filter above 90 % utilization.
    pub const DELAYED: Filter = Filter::Delayed { threshold: 0.9 };
    /// Per-connection delayed filtering above 90 % of the fair share.
    pub const PER_FLOW_DELAYED: Filter = Filter::PerFlowDelayed { threshold: 0.9 };
}

/// Paper 000 eq. 1: the optimum static threshold `mu_r T / (d + 1)`, in
/// ACKs, for a reverse channel serving `reverse_rate_bps` with ACKs of
/// `ack_bytes` on the wire, a round-trip propagation delay `rtt`, and a
/// receiver acknowledging every `d` segments.
///
/// ```
/// use ackwise::ack_path::optimum_delta;
/// use std::time::Duration;
/// // Paper 000 sec. 2.4: 100 kbit/s, 40-byte ACKs, T = 200 ms, d = 1.
/// let delta = optimum_delta(100_000, 40, Duration::from_millis(200), 1);
/// assert!((delta - 31.25).abs() < 1e-9);
/// ```
pub fn optimum_delta(reverse_rate_bps: u64, ack_bytes: u32, rtt: Duration, d: u32) -> f64 {
    let acks_per_sec = reverse_rate_bps as f64 / (8.0 * f64::from(ack_bytes.max(1)));
    acks_per_sec * rtt.as_secs_f64() / f64::from(d + 1)
}

/// Something queued that may be a pure ACK.
pub(crate) trait MaybeAck {
    fn pure_ack(&self) -> Option<&PureAck>;
}

/// Classic filtering of one connection's queue (oldest first) against
/// `newer`: puts into `out` (cleared first) the indices of the entries
/// `newer` makes redundant, in queue order. The caller puts `newer` at the
/// first and removes the rest.
pub(crate) fn redundant<E: MaybeAck>(queue: &VecDeque<E>, newer: &PureAck, out: &mut Vec<usize>) {
    out.clear();
    out.extend(
        queue
            .iter()
            .enumerate()
            .filter(|(_, e)| e.pure_ack().is_some_and(|older| may_replace(older, newer)))
            .map(|(i, _)| i),
    );
}

/// Static filtering of one connection's queue: once `delta` pure ACKs are
/// queued, the index of the most recently queued one if `newer` may
/// replace it.
pub(crate) fn static_victim<E: MaybeAck>(
    queue: &VecDeque<E>,
    delta: usize,
    newer: &PureAck,
) -> Option<usize> {
    let queued = queue.iter().filter(|e| e.pure_ack().is_some()).count();
    if queued < delta.max(1) {
        return None;
    }
    let (i, older) = queue
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, e)| e.pure_ack().map(|a| (i, a)))?;
    may_replace(older, newer).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{SackBlocks, SeqNum};

    impl MaybeAck for Option<PureAck> {
        fn pure_ack(&self) -> Option<&PureAck> {
            self.as_ref()
        }
    }

    fn ack(n: u32) -> Option<PureAck> {
        Some(PureAck {
            src_port: 1,
            dst_port: 2,
            ack: SeqNum(n),
            sack: SackBlocks::new(),
        })
    }

    #[test]
    fn classic_marks_every_older_ack_but_not_data_or_duplicates() {
        // A data segment (None), two older ACKs, and a duplicate of the
        // arriving ACK's value.
        let q: VecDeque<_> = [ack(100), None, ack(200), ack(300)].into();
        let mut out = vec![7];
        redundant(&q, &ack(300).unwrap(), &mut out);
        assert_eq!(out, vec![0, 2]);
        redundant(&q, &ack(50).unwrap(), &mut out);
        assert_eq!(out, Vec::<usize>::new());
    }

    #[test]
    fn static_replaces_the_newest_only_at_delta() {
        let q: VecDeque<_> = [ack(100), None, ack(200)].into();
        let newer = ack(300).unwrap();
        assert_eq!(static_victim(&q, 3, &newer), None);
        assert_eq!(static_victim(&q, 2, &newer), Some(2));
        // The newest queued ACK is a duplicate of the arriving one: keep.
        assert_eq!(static_victim(&q, 2, &ack(200).unwrap()), None);
    }

    #[test]
    fn optimum_delta_follows_eq_1() {
        let d1 = optimum_delta(100_000, 40, Duration::from_millis(200), 1);
        let d2 = optimum_delta(100_000, 40, Duration::from_millis(200), 2);
        assert!((d1 - 31.25).abs() < 1e-9);
        assert!((d2 - 62.5 / 3.0).abs() < 1e-9);
    }
}
