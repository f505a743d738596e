//! Simplex links as in ns-2: a queue at the input, a transmitter that
//! serialises one packet at a time at the link rate, then a fixed
//! propagation delay. A packet of `N` bytes entering an idle link at `t`
//! reaches the far end at `t + N * 8 / rate + delay`.
//!
//! The packet being serialised is not in the queue (as in ns-2, where it is
//! held by the link), so a DropTail limit of `B` packets means `B` waiting
//! plus one on the wire.

use super::draws::{mix, own_rng, PacketKeys, Purpose};
use super::jitter::JitterProcess;
use super::loss::LossProcess;
use super::middlebox::{LinkHook, NoHook};
use super::queue::LinkQueue;
use super::scenario::LinkSpec;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// Time to serialise `bytes` at `rate_bps`, rounded up to whole
/// nanoseconds (so a busy link never runs faster than its rate).
///
/// Every packet a link carries asks this once. Packets below about 2.3 GB
/// (all of them) keep the product in 64 bits, where the division is one
/// machine instruction instead of a call to the 128-bit routine; the
/// result is the same either way.
pub fn transmission_time(bytes: u32, rate_bps: u64) -> Duration {
    let rate = rate_bps.max(1);
    if let Some(bits_ns) = u64::from(bytes).checked_mul(8 * 1_000_000_000) {
        return Duration::from_nanos(bits_ns.div_ceil(rate));
    }
    let bits_ns = u128::from(bytes) * 8 * 1_000_000_000;
    let ns = bits_ns.div_ceil(u128::from(rate));
    Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// Counters of one link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LinkCounters {
    pub packets: u64,
    pub bytes: u64,
    pub busy_nanos: u64,
    pub queue_drops: u64,
    pub hook_drops: u64,
    /// ACKs a filtering queue removed in favour of newer ones.
    pub filtered: u64,
    /// ACKs held back by delay control.
    pub delayed: u64,
    pub marks: u64,
    /// Packets serialised, then lost on the wire by the loss model.
    pub lost: u64,
    pub peak_queue_packets: usize,
    /// Integral of the queue length over time, packet-nanoseconds.
    pub queue_area: u128,
    pub last_change: Instant,
}

#[derive(Debug)]
pub(crate) struct Link {
    pub rate_bps: u64,
    pub delay: Duration,
    pub queue: Box<dyn LinkQueue>,
    pub hook: Box<dyn LinkHook>,
    /// The transmitter is busy until then.
    pub busy_until: Instant,
    /// A `TxDone` event is scheduled.
    pub tx_done_pending: bool,
    pub counters: LinkCounters,
    /// Random loss on the wire.
    pub loss: LossProcess,
    /// Random extra propagation delay.
    pub jitter: JitterProcess,
    /// The shared medium this link transmits on, if any.
    pub medium: Option<usize>,
    /// Airtime each frame costs beyond its bytes (the medium's).
    pub per_frame_overhead: Duration,
    /// Index into the simulator's captures, if this link is captured.
    pub capture: Option<usize>,
    /// Whether anything on this link draws random numbers (its loss
    /// model, jitter or queue), so packets must be keyed as they enter.
    pub draws: bool,
    /// The link's part of every packet key (the run's seed and its index).
    pub key: u64,
    /// Crossings seen so far, to key the next packets ([`super::draws`]).
    pub keys: PacketKeys,
    /// Packets serialised and propagating, with their arrival times at the
    /// far end, kept sorted (non-decreasing; equal times in sending
    /// order). Without jitter every packet goes to the back.
    pub in_flight: VecDeque<(Instant, u32)>,
    /// The last [`transmission_time`] computed, with the size and rate it
    /// was for: a link carries runs of packets of one size (full data
    /// segments one way, ACKs the other), and the division behind each
    /// is among the slowest single instructions of a packet's path.
    last_tx_time: (u32, u64, Duration),
}

impl Link {
    /// Link number `index` of a run seeded `seed`.
    pub fn new(spec: &LinkSpec, seed: u64, index: usize) -> Link {
        let queue = spec.queue.build(spec.rate_bps);
        Link {
            rate_bps: spec.rate_bps,
            delay: spec.delay,
            draws: !spec.loss.is_none() || spec.jitter.is_some() || queue.draws(),
            key: mix(seed, index as u64),
            keys: PacketKeys::default(),
            queue,
            hook: Box::new(NoHook),
            busy_until: Instant::ZERO,
            tx_done_pending: false,
            counters: LinkCounters::default(),
            loss: LossProcess::new(spec.loss, own_rng(seed, Purpose::Chain, index)),
            jitter: JitterProcess::new(spec.jitter),
            medium: None,
            per_frame_overhead: Duration::ZERO,
            capture: None,
            in_flight: VecDeque::new(),
            last_tx_time: (0, spec.rate_bps, transmission_time(0, spec.rate_bps)),
        }
    }

    /// Puts a packet arriving at `at` into the delay line; returns `true`
    /// if it is now the head, i.e. the link's next exit event must be
    /// scheduled for it.
    pub fn propagate(&mut self, at: Instant, p: u32) -> bool {
        let line = &mut self.in_flight;
        if line.back().is_none_or(|&(last, _)| last <= at) {
            line.push_back((at, p));
            return line.len() == 1;
        }
        // Overtaking (reordering jitter): after every packet due no later.
        let i = line.partition_point(|&(t, _)| t <= at);
        line.insert(i, (at, p));
        i == 0
    }

    /// Accounts the queue length up to `now`; call before the length
    /// changes.
    pub fn account_queue(&mut self, now: Instant) {
        let c = &mut self.counters;
        let dt = (now - c.last_change).as_nanos();
        c.queue_area += dt * self.queue.len_packets() as u128;
        c.last_change = now;
    }

    /// Starts serialising a packet of `bytes` at `now` (plus the per-frame
    /// overhead on a shared medium); returns when it reaches the far end.
    pub fn start_tx(&mut self, now: Instant, bytes: u32) -> Instant {
        let (last_bytes, last_rate, last_time) = self.last_tx_time;
        let time = if (last_bytes, last_rate) == (bytes, self.rate_bps) {
            last_time
        } else {
            let time = transmission_time(bytes, self.rate_bps);
            self.last_tx_time = (bytes, self.rate_bps, time);
            time
        };
        let tx = self.per_frame_overhead + time;
        self.busy_until = now + tx;
        let c = &mut self.counters;
        c.packets += 1;
        c.bytes += u64::from(bytes);
        c.busy_nanos += crate::time::duration_nanos_saturating(tx);
        self.busy_until + self.delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_arithmetic() {
        // 1500 bytes at 1.5 Mbit/s: 8 ms.
        assert_eq!(transmission_time(1500, 1_500_000), Duration::from_millis(8));
        // 40 bytes at 10 Gbit/s: 32 ns.
        assert_eq!(
            transmission_time(40, 10_000_000_000),
            Duration::from_nanos(32)
        );
        // Rounds up: 1 byte at 3 bit/s is 2.666.. s.
        assert_eq!(transmission_time(1, 3), Duration::from_nanos(2_666_666_667));
    }

    #[test]
    fn start_tx_times_every_packet_as_its_size_and_the_rate_say() {
        let spec = LinkSpec {
            name: "l".into(),
            rate_bps: 1_000_000,
            delay: Duration::from_millis(1),
            queue: crate::emu::QueueSpec::drop_tail(10),
            loss: crate::emu::LossModel::None,
            jitter: None,
        };
        let mut l = Link::new(&spec, 1, 0);
        let mut now = Instant::ZERO;
        // Repeats, changes of size, a zero-byte frame and a rate change:
        // the remembered time must never stand in for another packet's.
        for (bytes, rate) in [
            (1_052, 1_000_000),
            (1_052, 1_000_000),
            (52, 1_000_000),
            (0, 1_000_000),
            (1_052, 1_000_000),
            (1_052, 3_000_000),
            (52, 3_000_000),
            (52, 1_000_000),
        ] {
            l.rate_bps = rate;
            let arrival = l.start_tx(now, bytes);
            let tx = transmission_time(bytes, rate);
            assert_eq!(l.busy_until, now + tx, "{bytes} bytes at {rate} bit/s");
            assert_eq!(arrival, now + tx + spec.delay);
            now = l.busy_until;
        }
    }

    #[test]
    fn serialisation_agrees_with_the_wide_arithmetic_on_both_sides_of_its_fast_path() {
        let wide = |bytes: u32, rate_bps: u64| {
            let ns = (u128::from(bytes) * 8_000_000_000).div_ceil(u128::from(rate_bps.max(1)));
            Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
        };
        // The largest byte count whose bit-nanoseconds fit 64 bits, and
        // the first that does not.
        let edge = u32::try_from(u64::MAX / 8_000_000_000).unwrap();
        for bytes in [0, 1, 40, 1_500, 65_535, edge - 1, edge, edge + 1, u32::MAX] {
            for rate_bps in [0, 1, 3, 1_500_000, 100_000_000, 10_000_000_000, u64::MAX] {
                assert_eq!(
                    transmission_time(bytes, rate_bps),
                    wide(bytes, rate_bps),
                    "{bytes} bytes at {rate_bps} bit/s"
                );
            }
        }
    }

    #[test]
    fn delay_line_stays_sorted_and_reports_a_new_head() {
        let spec = LinkSpec {
            name: "l".into(),
            rate_bps: 1_000_000,
            delay: Duration::ZERO,
            queue: crate::emu::QueueSpec::drop_tail(10),
            loss: crate::emu::LossModel::None,
            jitter: None,
        };
        let mut l = Link::new(&spec, 1, 0);
        let ms = Instant::from_millis;
        assert!(l.propagate(ms(5), 1), "first packet is the head");
        assert!(!l.propagate(ms(5), 2), "a tie goes behind");
        assert!(!l.propagate(ms(7), 3));
        assert!(!l.propagate(ms(6), 4), "overtakes 3 only");
        assert!(l.propagate(ms(4), 5), "overtakes everything");
        let order: Vec<u32> = l.in_flight.iter().map(|&(_, p)| p).collect();
        assert_eq!(order, vec![5, 1, 2, 4, 3]);
    }
}
