//! What a receiver infers about its sender without the sender's help
//! (paper 004 sec. 3.2): the round-trip time from timestamp echoes, the
//! congestion window from the ACKs it sent and the data that came back,
//! and the sequence numbers the smartacking formula counts with.
//!
//! Smartacking and ACC both need these, so they share this model.

use super::{AckSent, ArrivalInfo};
use crate::estimators::{CwndEstimator, CwndPhase, RttEstimator, RttIntervals, WindowedMinRtt};
use crate::time::{Duration, Instant};

/// How long a minimum RTT sample stands: as long as Linux keeps its
/// `min_rtt` (five minutes), because on a slow reverse path the queue of
/// ACKs may not drain for many seconds, and a shorter window would let the
/// queued RTT replace the path's own (paper 004 sec. 5.4's failure).
pub(crate) const MIN_RTT_WINDOW: Duration = Duration::from_secs(300);

/// Duplicate ACKs that make a NewReno sender retransmit (RFC 5681).
const DUPLICATE_THRESHOLD: u32 = 3;

/// The receiver's model of its peer's sending state.
#[derive(Debug, Clone)]
pub(crate) struct PeerModel {
    smoothed: RttEstimator,
    first_rtt: Option<Duration>,
    min_rtt: WindowedMinRtt,
    cwnd: CwndEstimator,
    intervals: RttIntervals,
    /// Highest in-order byte offset received (LastReceived, in bytes).
    last_received: u64,
    /// Cumulative acknowledgment of our last ACK (LastACKed, in bytes).
    last_acked: u64,
    /// Duplicate ACKs sent in a row.
    duplicate_run: u32,
    /// Payload of a full-sized segment, bytes.
    segment_size: u64,
}

/// Which of the model's RTT estimates to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RttChoice {
    /// RFC 6298 smoothed RTT.
    Smoothed,
    /// The first sample.
    First,
    /// Minimum over a sliding window.
    WindowedMin,
}

impl PeerModel {
    pub fn new(initial_window_segments: u32) -> Self {
        PeerModel {
            smoothed: RttEstimator::rfc6298(),
            first_rtt: None,
            min_rtt: WindowedMinRtt::new(MIN_RTT_WINDOW),
            cwnd: CwndEstimator::new(initial_window_segments),
            intervals: RttIntervals::default(),
            last_received: 0,
            last_acked: 0,
            duplicate_run: 0,
            segment_size: 1,
        }
    }

    /// Takes in an arriving segment: its RTT sample, the in-order edge
    /// and, for in-order new data, figure 1's segment count. Runs the
    /// estimator's per-RTT step first for every RTT that ended before
    /// `info.now`.
    pub fn on_segment(&mut self, info: &ArrivalInfo) {
        self.segment_size = info.segment_size.max(1) as u64;
        if let Some(rtt) = info.rtt_sample {
            self.smoothed.on_sample(rtt);
            self.first_rtt.get_or_insert(rtt);
            self.min_rtt.on_sample(info.now, rtt);
        }
        self.tick(info.now);
        if info.rcv_nxt > self.last_received {
            // Figure 1 counts arrivals of in-order segments. A gap fill is
            // one arrival however much held data it releases: counting the
            // released segments would read a whole repaired window as one
            // RTT's delivery and inflate the slow-start estimate.
            self.cwnd.on_in_order_segment();
            self.last_received = info.rcv_nxt;
        }
    }

    /// Takes in an ACK we sent: figure 1's non-duplicate ACK step, or the
    /// count towards the third duplicate.
    pub fn on_ack_sent(&mut self, ack: &AckSent) {
        self.tick(ack.now);
        if ack.acked_to > self.last_acked {
            self.cwnd.on_non_duplicate_ack_sent();
            self.duplicate_run = 0;
        } else if ack.duplicate {
            self.duplicate_run += 1;
            if self.duplicate_run == DUPLICATE_THRESHOLD {
                self.cwnd.on_third_duplicate_ack_sent();
            }
        }
        self.last_acked = self.last_acked.max(ack.acked_to);
    }

    /// Runs the once-per-RTT step for the RTTs that ended by `now`, timed
    /// by the smoothed RTT (the paper's receiver timer).
    pub fn tick(&mut self, now: Instant) {
        if let Some(rtt) = self.smoothed.srtt() {
            self.intervals.advance(now, rtt, &mut self.cwnd);
        }
    }

    pub fn rtt(&self, choice: RttChoice) -> Option<Duration> {
        match choice {
            RttChoice::Smoothed => self.smoothed.srtt(),
            RttChoice::First => self.first_rtt,
            RttChoice::WindowedMin => self.min_rtt.get(),
        }
    }

    /// The estimated congestion window, segments (figure 1).
    pub fn cwnd_segments(&self) -> u32 {
        self.cwnd.estimate_segments()
    }

    /// The estimate says the sender is in congestion avoidance.
    pub fn in_congestion_avoidance(&self) -> bool {
        self.cwnd.phase() == CwndPhase::CongestionAvoidance
    }

    /// The estimator has seen loss: the initial slow start is over.
    pub fn left_initial_slow_start(&self) -> bool {
        self.cwnd.phase() != CwndPhase::InitialSlowStart
    }

    /// Segments received in order but not yet acknowledged
    /// (LastReceived - LastACKed).
    pub fn unacked_segments(&self) -> u64 {
        self.last_received
            .saturating_sub(self.last_acked)
            .div_ceil(self.segment_size)
    }

    /// Bytes of a full-sized segment.
    pub fn segment_size(&self) -> u64 {
        self.segment_size
    }

    /// The in-order edge, bytes.
    pub fn last_received(&self) -> u64 {
        self.last_received
    }

    /// Segments the last ACK we sent covered beyond the one before it, or
    /// `None` if it was not a new acknowledgment. Call before
    /// [`on_ack_sent`](Self::on_ack_sent).
    pub fn segments_newly_acked(&self, ack: &AckSent) -> Option<u64> {
        (ack.acked_to > self.last_acked)
            .then(|| (ack.acked_to - self.last_acked).div_ceil(self.segment_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(ms: u64, rcv_nxt: u64) -> ArrivalInfo {
        let mut a = ArrivalInfo::in_order(Instant::from_millis(ms), 1000, true);
        a.rcv_nxt = rcv_nxt;
        a.segment_size = 1000;
        a
    }

    #[test]
    fn counts_segments_between_the_edge_and_the_last_ack() {
        let mut m = PeerModel::new(1);
        m.on_segment(&arrival(0, 1000));
        m.on_segment(&arrival(1, 2000));
        assert_eq!(m.unacked_segments(), 2);
        let ack = AckSent::new(Instant::from_millis(1), 2000);
        assert_eq!(m.segments_newly_acked(&ack), Some(2));
        m.on_ack_sent(&ack);
        assert_eq!(m.unacked_segments(), 0);
        // The initial slow start counts one segment per non-duplicate ACK.
        assert_eq!(m.cwnd_segments(), 2);
    }

    #[test]
    fn the_third_duplicate_ack_ends_the_initial_slow_start() {
        let mut m = PeerModel::new(1);
        m.on_segment(&arrival(0, 1000));
        m.on_ack_sent(&AckSent::new(Instant::from_millis(0), 1000));
        for i in 0..3 {
            let dup = AckSent {
                now: Instant::from_millis(1 + i),
                acked_to: 1000,
                duplicate: true,
            };
            m.on_ack_sent(&dup);
        }
        assert_eq!(
            m.cwnd.phase(),
            crate::estimators::CwndPhase::SlowStart,
            "left the initial slow start"
        );
    }

    #[test]
    fn rtt_choices() {
        let mut m = PeerModel::new(1);
        assert_eq!(m.rtt(RttChoice::Smoothed), None);
        for (t, rtt) in [(0, 100), (100, 300), (400, 80)] {
            let mut a = arrival(t, 1000 * (t + 1));
            a.rtt_sample = Some(Duration::from_millis(rtt));
            m.on_segment(&a);
        }
        assert_eq!(m.rtt(RttChoice::First), Some(Duration::from_millis(100)));
        assert_eq!(
            m.rtt(RttChoice::WindowedMin),
            Some(Duration::from_millis(80))
        );
        let srtt = m.rtt(RttChoice::Smoothed).unwrap();
        assert!(srtt > Duration::from_millis(100) && srtt < Duration::from_millis(300));
    }
}
