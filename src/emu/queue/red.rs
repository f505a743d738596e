//! Random Early Detection (Floyd & Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", 1993), with the "gentle" extension
//! (Floyd 2000) and ECN marking (RFC 3168), following ns-2's behaviour:
//!
//! - the average queue `avg` is an EWMA of the instantaneous length in
//!   packets, updated on every arrival with weight `w_q`; after an idle
//!   period it decays as if `m` small packets had been sent, `m = idle time /
//!   transmission time of a mean-sized packet` (F&J sec. 4);
//! - below `min_th` nothing is dropped; between `min_th` and `max_th` the
//!   base probability is `p_b = max_p (avg - min_th) / (max_th - min_th)` and
//!   the actual one `p_a = p_b / (1 - count p_b)`, `count` being the packets
//!   since the last drop, which spreads drops out evenly (F&J sec. 7);
//! - in gentle mode `p_b` rises linearly from `max_p` to 1 between `max_th`
//!   and `2 max_th`; beyond that (or beyond `max_th` without gentle) every
//!   arrival is dropped;
//! - with `ecn`, an early drop of an ECN-capable packet becomes a mark;
//!   forced drops stay drops, as in ns-2.

use super::{uniform, LinkQueue, QueuedPacket, Verdict};
use crate::time::Instant;
use rand_core::RngCore;
use std::collections::VecDeque;

/// RED parameters (thresholds in packets, as ns-2's defaults are).
#[derive(Debug, Clone, PartialEq)]
pub struct RedParams {
    /// Average length where early drops begin.
    pub min_th: f64,
    /// Average length where `p_b` reaches `max_p`.
    pub max_th: f64,
    /// EWMA weight of the newest sample.
    pub w_q: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Gentle mode (probability ramps to 1 at `2 max_th`).
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
    /// Hard limit on packets waiting.
    pub limit_packets: usize,
    /// Typical packet size for the idle-time correction, bytes.
    pub mean_packet_bytes: u32,
}

impl RedParams {
    /// The paper 004 sec. 4.2 setting: `min_th` 5, `max_th` 15, `w_q`
    /// 0.002, `max_p` 0.1, gentle, no ECN, 1000-byte packets.
    pub fn paper_004(limit_packets: usize) -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            gentle: true,
            ecn: false,
            limit_packets,
            mean_packet_bytes: 1000,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), &'static str> {
        // Written so that NaN fails every check.
        if !(self.min_th >= 0.0 && self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err("RED needs 0 <= min_th < max_th");
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err("RED w_q must be in (0, 1]");
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err("RED max_p must be in (0, 1]");
        }
        if self.limit_packets == 0 {
            return Err("queue limit must be at least one packet");
        }
        if self.mean_packet_bytes == 0 {
            return Err("RED mean_packet_bytes must be positive");
        }
        Ok(())
    }
}

/// RED's admission decision, apart from the packets: the average queue,
/// the count since the last early drop or mark, and the idle correction.
/// [`Red`] pairs it with a FIFO; the ACK-filtering queue pairs it with its
/// reverse buffer (paper 002's ACK filtering on a RED queue).
#[derive(Debug, Clone)]
pub struct RedGate {
    p: RedParams,
    avg: f64,
    /// Packets since the last early drop or mark; -1 while below `min_th`.
    count: i64,
    /// When the queue last went empty, for the idle correction.
    idle_since: Option<Instant>,
    /// Transmission time of a mean-sized packet, ns.
    mean_tx_nanos: f64,
}

impl RedGate {
    /// A gate in front of a link of `rate_bps`, its queue empty.
    pub fn new(p: RedParams, rate_bps: u64) -> RedGate {
        let mean_tx_nanos = f64::from(p.mean_packet_bytes) * 8.0 * 1e9 / (rate_bps.max(1) as f64);
        RedGate {
            p,
            avg: 0.0,
            count: -1,
            idle_since: Some(Instant::ZERO),
            mean_tx_nanos,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &RedParams {
        &self.p
    }

    /// The current average queue length, packets.
    pub fn average(&self) -> f64 {
        self.avg
    }

    fn update_average(&mut self, now: Instant, queued: usize) {
        let w = self.p.w_q;
        match self.idle_since {
            Some(since) if queued == 0 => {
                let idle = (now - since).as_nanos() as f64;
                let m = idle / self.mean_tx_nanos;
                self.avg *= (1.0 - w).powf(m);
                self.idle_since = None;
            }
            _ => self.avg = (1.0 - w) * self.avg + w * queued as f64,
        }
    }

    /// Early-drop probability for the current average, or `None` for a
    /// forced drop.
    fn base_probability(&self) -> Option<f64> {
        let (min, max, max_p) = (self.p.min_th, self.p.max_th, self.p.max_p);
        if self.avg < max {
            Some(max_p * (self.avg - min) / (max - min))
        } else if self.p.gentle && self.avg < 2.0 * max {
            Some(max_p + (1.0 - max_p) * (self.avg - max) / max)
        } else {
            None
        }
    }

    /// A packet arrives at `now` with `queued` packets waiting: queue it,
    /// queue it marked, or drop it.
    pub fn admit(
        &mut self,
        now: Instant,
        queued: usize,
        ecn_capable: bool,
        rng: &mut dyn RngCore,
    ) -> Verdict {
        self.update_average(now, queued);
        if queued >= self.p.limit_packets {
            self.count = 0;
            return Verdict::Dropped;
        }
        if self.avg < self.p.min_th {
            self.count = -1;
            return Verdict::Queued;
        }
        let Some(p_b) = self.base_probability() else {
            self.count = 0;
            return Verdict::Dropped;
        };
        self.count += 1;
        let denom = 1.0 - self.count as f64 * p_b;
        let p_a = if denom <= 0.0 { 1.0 } else { p_b / denom };
        if uniform(rng) >= p_a {
            return Verdict::Queued;
        }
        self.count = 0;
        if self.p.ecn && ecn_capable {
            Verdict::Marked
        } else {
            Verdict::Dropped
        }
    }

    /// The queue went empty at `now` (starts the idle correction).
    pub fn on_empty(&mut self, now: Instant) {
        self.idle_since = Some(now);
    }
}

/// A RED queue.
#[derive(Debug)]
pub struct Red {
    gate: RedGate,
    fifo: VecDeque<QueuedPacket>,
    bytes: u64,
}

impl Red {
    /// A RED queue in front of a link of `rate_bps`.
    pub fn new(p: RedParams, rate_bps: u64) -> Red {
        Red {
            fifo: VecDeque::with_capacity(p.limit_packets.min(1 << 16)),
            gate: RedGate::new(p, rate_bps),
            bytes: 0,
        }
    }

    /// The current average queue length, packets.
    pub fn average(&self) -> f64 {
        self.gate.average()
    }

    /// Stores a packet without consulting the gate (tests build standing
    /// queues with it).
    #[cfg(test)]
    fn store(&mut self, pkt: QueuedPacket, verdict: Verdict) -> Verdict {
        self.bytes += u64::from(pkt.bytes);
        self.fifo.push_back(pkt);
        verdict
    }
}

impl LinkQueue for Red {
    fn enqueue(&mut self, now: Instant, pkt: QueuedPacket, rng: &mut dyn RngCore) -> Verdict {
        let verdict = self.gate.admit(now, self.fifo.len(), pkt.ecn_capable, rng);
        if verdict != Verdict::Dropped {
            self.bytes += u64::from(pkt.bytes);
            self.fifo.push_back(pkt);
        }
        verdict
    }

    fn dequeue(&mut self, now: Instant) -> Option<QueuedPacket> {
        let p = self.fifo.pop_front()?;
        self.bytes -= u64::from(p.bytes);
        if self.fifo.is_empty() {
            self.gate.on_empty(now);
        }
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    fn params(ecn: bool) -> RedParams {
        // w_q = 1 makes the average the instantaneous length, so the tests
        // can place it exactly.
        RedParams {
            w_q: 1.0,
            ecn,
            ..RedParams::paper_004(1000)
        }
    }

    fn pkt(id: u32, ecn_capable: bool) -> QueuedPacket {
        QueuedPacket {
            id,
            bytes: 1000,
            flow: 0,
            ecn_capable,
        }
    }

    #[test]
    fn no_drops_below_min_th() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut q = Red::new(params(false), 1_000_000);
        let now = Instant::from_millis(1);
        // Arrivals see 0 to 5 packets queued; at exactly min_th p_b is 0.
        for i in 0..6 {
            assert_eq!(q.enqueue(now, pkt(i, false), &mut rng), Verdict::Queued);
        }
        // Cycle at a standing queue of 4 for many arrivals: never a drop.
        q.dequeue(now);
        q.dequeue(now);
        for i in 0..10_000 {
            assert_eq!(q.enqueue(now, pkt(i, false), &mut rng), Verdict::Queued);
            q.dequeue(now);
        }
    }

    #[test]
    fn forced_drops_beyond_twice_max_th_in_gentle_mode() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut q = Red::new(params(false), 1_000_000);
        let now = Instant::from_millis(1);
        for i in 0..30 {
            q.store(pkt(i, false), Verdict::Queued);
        }
        for i in 0..1000 {
            assert_eq!(q.enqueue(now, pkt(i, true), &mut rng), Verdict::Dropped);
        }
        // Between max_th and 2 max_th gentle RED still lets some through.
        let mut q = Red::new(params(false), 1_000_000);
        for i in 0..20 {
            q.store(pkt(i, false), Verdict::Queued);
        }
        let passed = (0..1000)
            .filter(|&i| {
                let v = q.enqueue(now, pkt(i, false), &mut rng);
                if v != Verdict::Dropped {
                    q.dequeue(now);
                }
                v != Verdict::Dropped
            })
            .count();
        assert!(passed > 100 && passed < 900, "passed {passed}");
    }

    #[test]
    fn early_drop_rate_grows_with_average() {
        let now = Instant::from_millis(1);
        let mut rates = Vec::new();
        for standing in [7u32, 10, 14] {
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut q = Red::new(params(false), 1_000_000);
            for i in 0..standing {
                q.store(pkt(i, false), Verdict::Queued);
            }
            let drops = (0..20_000)
                .filter(|&i| {
                    let v = q.enqueue(now, pkt(i, false), &mut rng);
                    if v != Verdict::Dropped {
                        q.dequeue(now);
                    }
                    v == Verdict::Dropped
                })
                .count();
            rates.push(drops as f64 / 20_000.0);
        }
        assert!(rates[0] > 0.0 && rates[0] < rates[1] && rates[1] < rates[2]);
        // count spreads drops: the rate exceeds p_b (about 2x for uniform
        // inter-drop gaps), staying well under 2 p_b + slack.
        let p_b = 0.1 * (14.0 - 5.0) / 10.0;
        assert!(rates[2] > p_b && rates[2] < 2.5 * p_b, "{rates:?}");
    }

    #[test]
    fn ecn_marks_instead_of_early_drops() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut q = Red::new(params(true), 1_000_000);
        let now = Instant::from_millis(1);
        for i in 0..12 {
            q.store(pkt(i, true), Verdict::Queued);
        }
        let (mut marks, mut drops) = (0, 0);
        for i in 0..5000 {
            match q.enqueue(now, pkt(i, true), &mut rng) {
                Verdict::Marked => marks += 1,
                Verdict::Dropped => drops += 1,
                Verdict::Queued => {}
            }
            q.dequeue(now);
        }
        assert!(marks > 100, "marks {marks}");
        assert_eq!(drops, 0);
        // A non-ECN-capable packet under the same average is dropped.
        let mut q2 = Red::new(params(true), 1_000_000);
        for i in 0..12 {
            q2.store(pkt(i, false), Verdict::Queued);
        }
        let drops = (0..5000)
            .filter(|&i| {
                let v = q2.enqueue(now, pkt(i, false), &mut rng);
                if v != Verdict::Dropped {
                    q2.dequeue(now);
                }
                v == Verdict::Dropped
            })
            .count();
        assert!(drops > 100);
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut p = params(false);
        p.w_q = 0.002;
        let mut q = Red::new(p, 8_000_000); // 1 ms per 1000-byte packet
        let t0 = Instant::from_millis(1);
        for i in 0..2000 {
            q.enqueue(t0, pkt(i % 100, false), &mut rng);
        }
        let busy_avg = q.average();
        assert!(busy_avg > 5.0);
        while q.dequeue(t0).is_some() {}
        // 1000 mean packet times idle: avg * 0.998^1000 ~ avg * 0.135.
        q.enqueue(
            t0 + std::time::Duration::from_secs(1),
            pkt(0, false),
            &mut rng,
        );
        let ratio = q.average() / busy_avg;
        assert!((ratio - 0.998f64.powi(1000)).abs() < 0.01, "ratio {ratio}");
    }
}
