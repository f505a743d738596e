//! A shared half-duplex medium (Wi-Fi-like): several simplex links, each
//! with its own queue, but one transmitter for all of them, so data one
//! way and ACKs the other contend for the same airtime.
//!
//! Every frame pays a fixed per-frame overhead on top of its bytes at the
//! link's rate (on 802.11: DIFS, average backoff, PHY preamble, SIFS and
//! the link-layer ACK, together about 100 us at 54 Mbit/s), which is what
//! makes a small TCP ACK nearly as expensive as a data segment: every ACK
//! a receiver does not send is airtime for data (TACK, SIGCOMM 2020).
//!
//! Service alternates between the member links that have something
//! queued (round robin, one frame per turn), not FIFO across them:
//! 802.11's DCF gives each contending station about the same number of
//! transmission opportunities whatever its backlog, so a station sending
//! only ACKs wins every other frame against the access point sending
//! data. That per-station fairness is exactly why ACKs cost so much on
//! Wi-Fi, and a FIFO across both queues would understate it.
//! Collisions are not modelled (two stations never both transmit).

use super::scenario::LinkId;
use crate::time::{Duration, Instant};

/// Links sharing one transmitter (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct MediumSpec {
    /// The member links, in their round-robin order. Each keeps its own
    /// rate, delay, queue, loss and jitter; a link belongs to at most one
    /// medium.
    pub links: Vec<LinkId>,
    /// Airtime every frame costs beyond its bytes at the link's rate.
    pub per_frame_overhead: Duration,
}

/// A medium's transmitter state.
#[derive(Debug, Clone)]
pub(crate) struct Medium {
    pub links: Vec<LinkId>,
    /// The medium is busy until then.
    pub busy_until: Instant,
    /// A `MediumFree` event is scheduled.
    pub pending: bool,
    /// Index into `links` of the member served last.
    last: usize,
}

impl Medium {
    pub(crate) fn new(spec: &MediumSpec) -> Medium {
        Medium {
            links: spec.links.clone(),
            busy_until: Instant::ZERO,
            pending: false,
            // So that the first turn goes to the first member.
            last: spec.links.len().saturating_sub(1),
        }
    }

    /// The next member to serve: the first after the one served last that
    /// has a packet queued (`backlogged`), if any; it becomes the last
    /// served.
    pub(crate) fn next(&mut self, backlogged: impl Fn(LinkId) -> bool) -> Option<LinkId> {
        let n = self.links.len();
        let k = (1..=n)
            .map(|i| (self.last + i) % n)
            .find(|&k| backlogged(self.links[k]))?;
        self.last = k;
        Some(self.links[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_alternate_when_both_have_frames() {
        let mut m = Medium::new(&MediumSpec {
            links: vec![4, 7],
            per_frame_overhead: Duration::from_micros(100),
        });
        let both = |_| true;
        let order: Vec<_> = (0..4).map(|_| m.next(both).unwrap()).collect();
        assert_eq!(order, vec![4, 7, 4, 7]);
        // Only one backlogged: it gets every turn.
        assert_eq!(m.next(|l| l == 7), Some(7));
        assert_eq!(m.next(|l| l == 7), Some(7));
        // Then the other comes first again.
        assert_eq!(m.next(both), Some(4));
        assert_eq!(m.next(|_| false), None);
    }
}
