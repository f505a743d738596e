//! ACK Congestion Control at the receiver (paper 004 sec. 2, paper 002
//! sec. II.B; RFC 5690 where they are silent).

use super::peer_model::{PeerModel, RttChoice};
use super::{AckDecision, AckPolicy, AckSent, ArrivalInfo};
use crate::time::{Duration, Instant};

/// Sends one ACK per `d` in-order segments and treats congestion of the
/// ACK path like a sender treats congestion of the data path.
///
/// - A congestion mark doubles `d` (multiplicative decrease of the ACK
///   rate): CE on an arriving data segment, or ECE on it, which is how the
///   sender reports that our ACKs arrived CE-marked. At most one doubling
///   per RTT, as a sender halves at most once per window of marks.
/// - Every RTT without a mark lowers `d` by one (additive increase of the
///   ACK rate), timed by the receiver's smoothed RTT from timestamps.
/// - `d` stays within 1 and half the receiver's estimate of the sender's
///   window (paper 004 fig. 1's estimator), so the sender still sees two
///   ACKs per window, RFC 5690's bound.
/// - Out-of-order segments, gap fills, duplicates and FIN are
///   acknowledged at once; no ACK waits longer than `max_delay`.
#[derive(Debug, Clone)]
pub struct Acc {
    max_delay: Duration,
    model: PeerModel,
    ratio: u32,
    unacked: u32,
    first_unacked: Option<Instant>,
    last_doubling: Option<Instant>,
    next_decrease: Option<Instant>,
}

impl Acc {
    /// Starting ratio: standard delayed ACK's one ACK per two segments.
    pub const INITIAL_RATIO: u32 = 2;

    /// An ACC receiver.
    pub fn new(max_delay: Duration, initial_window_segments: u32) -> Self {
        Acc {
            max_delay,
            model: PeerModel::new(initial_window_segments.max(1)),
            ratio: Self::INITIAL_RATIO,
            unacked: 0,
            first_unacked: None,
            last_doubling: None,
            next_decrease: None,
        }
    }

    /// The ACK ratio `d` the next ACK will use.
    pub fn ratio(&self) -> u32 {
        self.ratio.clamp(1, self.max_ratio())
    }

    fn max_ratio(&self) -> u32 {
        (self.model.cwnd_segments() / 2).max(1)
    }

    fn adjust(&mut self, now: Instant, marked: bool) {
        let Some(rtt) = self.model.rtt(RttChoice::Smoothed).filter(|r| !r.is_zero()) else {
            if marked {
                self.ratio = self.ratio.saturating_mul(2);
            }
            return;
        };
        if marked {
            if self.last_doubling.is_none_or(|t| now >= t + rtt) {
                self.ratio = self.ratio.saturating_mul(2);
                self.last_doubling = Some(now);
            }
            self.next_decrease = Some(now + rtt);
        }
        let next = self.next_decrease.get_or_insert(now + rtt);
        // A long silence decays the ratio all the way; cap the loop.
        let mut steps = 0;
        while *next <= now && steps < 64 {
            self.ratio = self.ratio.saturating_sub(1).max(1);
            *next += rtt;
            steps += 1;
        }
        if *next <= now {
            *next = now + rtt;
        }
        self.ratio = self.ratio.clamp(1, self.max_ratio());
    }
}

impl AckPolicy for Acc {
    fn name(&self) -> &'static str {
        "acc"
    }

    fn on_segment(&mut self, info: &ArrivalInfo) -> AckDecision {
        self.model.on_segment(info);
        self.adjust(info.now, info.ce || info.ece);
        if info.out_of_order || info.filled_gap || info.duplicate || info.fin || info.has_gaps {
            return AckDecision::Now;
        }
        self.unacked += 1;
        let first = *self.first_unacked.get_or_insert(info.now);
        if self.unacked >= self.ratio() {
            AckDecision::Now
        } else {
            AckDecision::By(first + self.max_delay)
        }
    }

    fn on_timer(&mut self, now: Instant) -> AckDecision {
        self.model.tick(now);
        AckDecision::Now
    }

    fn on_ack_sent(&mut self, ack: &AckSent) {
        self.model.on_ack_sent(ack);
        self.unacked = 0;
        self.first_unacked = None;
    }

    fn cwnd_estimate_segments(&self) -> Option<u32> {
        Some(self.model.cwnd_segments())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u64 = 1000;

    /// In-order segment `n` (1-based) at `ms`, with an RTT sample.
    fn seg(n: u64, ms: u64) -> ArrivalInfo {
        let mut a = ArrivalInfo::in_order(Instant::from_millis(ms), SEG as usize, true);
        a.rcv_nxt = n * SEG;
        a.segment_size = SEG as usize;
        a.rtt_sample = Some(Duration::from_millis(100));
        a
    }

    /// Runs `count` segments from `first` 1 ms apart starting at `ms`,
    /// sending the ACKs the policy asks for; returns how many it sent.
    fn run(p: &mut Acc, first: u64, count: u64, ms: u64, mark_first: bool) -> u32 {
        let mut acks = 0;
        for i in 0..count {
            let mut a = seg(first + i, ms + i);
            a.ce = mark_first && i == 0;
            if p.on_segment(&a) == AckDecision::Now {
                p.on_ack_sent(&AckSent::new(a.now, a.rcv_nxt));
                acks += 1;
            }
        }
        acks
    }

    /// A policy whose window estimate is large (initial slow start with
    /// many ACKs sent), so `d` is not capped by it.
    fn warmed_up() -> Acc {
        let p = Acc::new(Duration::from_millis(200), 64);
        assert_eq!(p.ratio(), Acc::INITIAL_RATIO);
        p
    }

    #[test]
    fn a_mark_doubles_the_ratio_once_per_rtt() {
        let mut p = warmed_up();
        run(&mut p, 1, 1, 0, true);
        assert_eq!(p.ratio(), 4);
        // A second mark within the same RTT does not double again.
        run(&mut p, 2, 1, 10, true);
        assert_eq!(p.ratio(), 4);
        // One RTT later it does.
        run(&mut p, 3, 1, 111, true);
        assert_eq!(p.ratio(), 8);
        // ECE (our ACKs were marked) counts like CE.
        let mut a = seg(4, 300);
        a.ece = true;
        p.on_segment(&a);
        assert_eq!(p.ratio(), 16);
    }

    #[test]
    fn quiet_rtts_lower_the_ratio_by_one_each_down_to_one() {
        let mut p = warmed_up();
        run(&mut p, 1, 1, 0, true);
        run(&mut p, 2, 1, 101, true);
        assert_eq!(p.ratio(), 8);
        // Unmarked segments every 10 ms: with a 100 ms RTT, three quiet
        // RTTs later the ratio is 5.
        for (i, ms) in (111..=401).step_by(10).enumerate() {
            run(&mut p, 3 + i as u64, 1, ms, false);
        }
        assert_eq!(p.ratio(), 5);
        // Twenty more quiet RTTs take it to 1, not below.
        for (i, ms) in (411..=2_411).step_by(10).enumerate() {
            run(&mut p, 40 + i as u64, 1, ms, false);
        }
        assert_eq!(p.ratio(), 1);
    }

    #[test]
    fn one_ack_per_ratio_segments_and_holes_at_once() {
        let mut p = warmed_up();
        run(&mut p, 1, 1, 0, true);
        assert_eq!(p.ratio(), 4);
        // 12 segments within the RTT: 3 ACKs.
        assert_eq!(run(&mut p, 2, 12, 1, false), 3);
        let mut ooo = seg(20, 20);
        ooo.out_of_order = true;
        assert_eq!(p.on_segment(&ooo), AckDecision::Now);
    }

    #[test]
    fn the_ratio_never_exceeds_half_the_estimated_window() {
        // The estimate starts at 2 segments: d may not exceed 1.
        let mut p = Acc::new(Duration::from_millis(200), 2);
        run(&mut p, 1, 1, 0, true);
        assert_eq!(p.ratio(), 1);
        assert_eq!(p.cwnd_estimate_segments(), Some(3));
    }

    #[test]
    fn a_held_ack_waits_at_most_the_maximum_delay() {
        let mut p = warmed_up();
        run(&mut p, 1, 1, 0, true);
        // Segment 1 is still unacknowledged: the deadline runs from it.
        let a = seg(2, 50);
        assert_eq!(p.on_segment(&a), AckDecision::By(Instant::from_millis(200)));
    }
}
