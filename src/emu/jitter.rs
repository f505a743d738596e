//! Delay jitter and reordering on a link's wire.
//!
//! Three mechanisms, all adding to a packet's propagation delay after it
//! was serialised:
//!
//! - *jitter*: every packet gets an extra delay drawn uniformly from
//!   `[0, max_extra]`, but never arrives before the packet serialised
//!   ahead of it, so order is kept (a path whose queueing delay varies,
//!   like a shared radio channel, but with no parallel paths);
//! - *reordering*: with a probability, a packet is held back a further
//!   fixed `extra` and packets sent after it may overtake it (a
//!   multi-path or link-layer-retransmission path). Held-back packets do
//!   not hold the others back;
//! - *tick*: packets leave the wire only on the ticks of a clock with
//!   this period, so each arrives at the first tick at or after its time
//!   and the packets due within one period arrive together. This is how a
//!   real-time emulator such as `ackwise relay` delivers: its timers fire
//!   on a runtime's 1 ms ticks, so on 127.0.0.1 its datagrams come out in
//!   bunches about a millisecond apart. The clock's phase is drawn once,
//!   at the link's first packet.
//!
//! A packet's draws are keyed by the packet ([`super::draws`]), so the same
//! segment is delayed alike in every run of the seed; a link without
//! jitter draws nothing.

use super::queue::uniform;
use crate::time::{Duration, Instant};
use rand_core::RngCore;

/// Packets held back so that later ones overtake them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reorder {
    /// Probability that a packet is held back, in [0, 1].
    pub probability: f64,
    /// How much longer a held-back packet propagates.
    pub extra: Duration,
}

/// Random extra propagation delay on a link (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Jitter {
    /// Each packet's extra delay is uniform in `[0, max_extra]`; order is
    /// kept. Zero: no jitter.
    pub max_extra: Duration,
    /// A fraction of packets held back and overtaken, if any.
    pub reorder: Option<Reorder>,
    /// Packets arrive only on the ticks of a clock with this period
    /// (after the two above). Zero: any time.
    pub tick: Duration,
}

impl Jitter {
    /// Order-keeping jitter of up to `max_extra`, no reordering.
    pub fn uniform(max_extra: Duration) -> Jitter {
        Jitter {
            max_extra,
            reorder: None,
            tick: Duration::ZERO,
        }
    }

    /// Only reordering: `probability` of packets held back `extra`.
    pub fn reorder(probability: f64, extra: Duration) -> Jitter {
        Jitter {
            max_extra: Duration::ZERO,
            reorder: Some(Reorder { probability, extra }),
            tick: Duration::ZERO,
        }
    }

    /// Only a clock: packets arrive on ticks `period` apart.
    pub fn tick(period: Duration) -> Jitter {
        Jitter {
            max_extra: Duration::ZERO,
            reorder: None,
            tick: period,
        }
    }

    /// The reordering probability is finite and within [0, 1].
    pub fn validate(&self) -> Result<(), &'static str> {
        match self.reorder {
            Some(r) if !(r.probability.is_finite() && (0.0..=1.0).contains(&r.probability)) => {
                Err("reorder probability must be a number in [0, 1]")
            }
            _ => Ok(()),
        }
    }
}

/// A link's jitter state: the latest arrival of the packets that keep
/// their order, and the tick clock's phase once drawn.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct JitterProcess {
    jitter: Option<Jitter>,
    last_in_order: Instant,
    phase: Option<Duration>,
}

impl JitterProcess {
    pub(crate) fn new(jitter: Option<Jitter>) -> JitterProcess {
        JitterProcess {
            jitter,
            last_in_order: Instant::ZERO,
            phase: None,
        }
    }

    /// When a packet that would arrive at `base` without jitter arrives.
    /// Without jitter this is `base` and nothing is drawn.
    #[inline]
    pub(crate) fn arrival(&mut self, base: Instant, rng: &mut dyn RngCore) -> Instant {
        match self.jitter {
            None => base,
            Some(j) => self.jittered(j, base, rng),
        }
    }

    fn jittered(&mut self, j: Jitter, base: Instant, rng: &mut dyn RngCore) -> Instant {
        let mut at = base;
        if !j.max_extra.is_zero() {
            let ns = j.max_extra.as_nanos() as f64 * uniform(rng);
            at += Duration::from_nanos(ns as u64);
        }
        if let Some(r) = j.reorder {
            if uniform(rng) < r.probability {
                // Held back: later packets may pass it, and it does not
                // hold them back.
                return self.on_tick(at + r.extra, j.tick, rng);
            }
        }
        let at = at.max(self.last_in_order);
        self.last_in_order = at;
        // Rounding up to a tick keeps the order, so it can come last.
        self.on_tick(at, j.tick, rng)
    }

    /// The first tick at or after `at`; `at` itself without a clock.
    fn on_tick(&mut self, at: Instant, period: Duration, rng: &mut dyn RngCore) -> Instant {
        let period_ns = period.as_nanos() as u64;
        if period_ns == 0 {
            return at;
        }
        let phase = *self.phase.get_or_insert_with(|| {
            Duration::from_nanos((period_ns as f64 * uniform(rng)) as u64 % period_ns)
        });
        // Ticks fall at phase + k * period; before the first, at the first.
        let since = at.as_nanos().saturating_sub(phase.as_nanos() as u64);
        let ticks = since.div_ceil(period_ns);
        Instant::from_nanos(phase.as_nanos() as u64 + ticks * period_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// Arrivals of `n` packets sent 1 ms apart over a 10 ms link.
    fn arrivals(j: Option<Jitter>, seed: u64, n: u64) -> Vec<Instant> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut p = JitterProcess::new(j);
        (0..n)
            .map(|i| p.arrival(Instant::from_millis(i + 10), &mut rng))
            .collect()
    }

    #[test]
    fn none_is_the_base_and_draws_nothing() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let before = rng.clone();
        let mut p = JitterProcess::new(None);
        assert_eq!(
            p.arrival(Instant::from_millis(3), &mut rng),
            Instant::from_millis(3)
        );
        assert_eq!(rng, before);
    }

    #[test]
    fn jitter_keeps_order_within_bounds() {
        let a = arrivals(Some(Jitter::uniform(Duration::from_millis(5))), 3, 10_000);
        assert!(a.windows(2).all(|w| w[0] <= w[1]), "order kept");
        let mut extra = 0u128;
        for (i, t) in a.iter().enumerate() {
            let base = Instant::from_millis(i as u64 + 10);
            let d = *t - base;
            assert!(d <= Duration::from_millis(5), "{i}: {d:?}");
            extra += d.as_nanos();
        }
        // Uniform on [0, 5 ms] has mean 2.5 ms; the order clamp adds a
        // little (a packet 1 ms behind may wait for its predecessor).
        let mean_ms = extra as f64 / a.len() as f64 / 1e6;
        assert!(mean_ms > 2.4 && mean_ms < 3.5, "{mean_ms}");
    }

    #[test]
    fn reordering_holds_back_a_fraction() {
        let n = 100_000;
        let a = arrivals(Some(Jitter::reorder(0.02, Duration::from_millis(5))), 4, n);
        let held = a
            .iter()
            .enumerate()
            .filter(|(i, t)| **t - Instant::from_millis(*i as u64 + 10) == Duration::from_millis(5))
            .count() as f64;
        let sd = (n as f64 * 0.02 * 0.98).sqrt();
        assert!((held - n as f64 * 0.02).abs() < 5.0 * sd, "{held}");
        // Packets 1 ms apart held 5 ms are overtaken by the next ones.
        let inversions = a.windows(2).filter(|w| w[0] > w[1]).count() as f64;
        assert!(inversions > 0.9 * held, "{inversions} vs {held}");
        // The others are not delayed at all.
        let on_time = a
            .iter()
            .enumerate()
            .filter(|(i, t)| **t == Instant::from_millis(*i as u64 + 10))
            .count() as f64;
        assert_eq!(on_time + held, n as f64);
    }

    #[test]
    fn tick_bunches_arrivals_on_a_clock() {
        let period = Duration::from_micros(1_100);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut p = JitterProcess::new(Some(Jitter::tick(period)));
        // A packet every 0.25 ms for 1 s.
        let bases: Vec<Instant> = (0..4_000u64)
            .map(|i| Instant::from_micros(10_000 + 250 * i))
            .collect();
        let a: Vec<Instant> = bases.iter().map(|&b| p.arrival(b, &mut rng)).collect();
        let phase = a[0].as_nanos() % period.as_nanos() as u64;
        for (b, t) in bases.iter().zip(&a) {
            let late = *t - *b;
            assert!(late < period, "at most one period late: {late:?}");
            assert_eq!(
                t.as_nanos() % period.as_nanos() as u64,
                phase,
                "on the clock"
            );
        }
        assert!(a.windows(2).all(|w| w[0] <= w[1]), "order kept");
        // Four or five packets share each tick.
        let distinct = {
            let mut d = a.clone();
            d.dedup();
            d.len()
        };
        let per_tick = a.len() as f64 / distinct as f64;
        assert!((4.0..=4.8).contains(&per_tick), "{per_tick}");
        // Another seed puts the clock elsewhere.
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut q = JitterProcess::new(Some(Jitter::tick(period)));
        assert_ne!(q.arrival(bases[0], &mut rng), a[0]);
    }

    #[test]
    fn deterministic_and_validated() {
        let j = Jitter {
            max_extra: Duration::from_millis(2),
            reorder: Some(Reorder {
                probability: 0.1,
                extra: Duration::from_millis(3),
            }),
            tick: Duration::from_micros(700),
        };
        assert!(j.validate().is_ok());
        let j = Some(j);
        assert_eq!(arrivals(j, 8, 1000), arrivals(j, 8, 1000));
        assert_ne!(arrivals(j, 8, 1000), arrivals(j, 9, 1000));
        for p in [-0.1, 1.1, f64::NAN] {
            assert!(Jitter::reorder(p, Duration::ZERO).validate().is_err());
        }
    }
}
