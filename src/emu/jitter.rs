//! Delay jitter and reordering on a link's wire.
//!
//! Two mechanisms, both adding to a packet's propagation delay after it
//! was serialised:
//!
//! - *jitter*: every packet gets an extra delay drawn uniformly from
//!   `[0, max_extra]`, but never arrives before the packet serialised
//!   ahead of it, so order is kept (a path whose queueing delay varies,
//!   like a shared radio channel, but with no parallel paths);
//! - *reordering*: with a probability, a packet is held back a further
//!   fixed `extra` and packets sent after it may overtake it (a
//!   multi-path or link-layer-retransmission path). Held-back packets do
//!   not hold the others back.
//!
//! Draws come from the run's single RNG in event order; a link without
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
}

impl Jitter {
    /// Order-keeping jitter of up to `max_extra`, no reordering.
    pub fn uniform(max_extra: Duration) -> Jitter {
        Jitter {
            max_extra,
            reorder: None,
        }
    }

    /// Only reordering: `probability` of packets held back `extra`.
    pub fn reorder(probability: f64, extra: Duration) -> Jitter {
        Jitter {
            max_extra: Duration::ZERO,
            reorder: Some(Reorder { probability, extra }),
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
/// their order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct JitterProcess {
    jitter: Option<Jitter>,
    last_in_order: Instant,
}

impl JitterProcess {
    pub(crate) fn new(jitter: Option<Jitter>) -> JitterProcess {
        JitterProcess {
            jitter,
            last_in_order: Instant::ZERO,
        }
    }

    /// When a packet that would arrive at `base` without jitter arrives.
    /// Without jitter this is `base` and nothing is drawn.
    pub(crate) fn arrival(&mut self, base: Instant, rng: &mut dyn RngCore) -> Instant {
        let Some(j) = self.jitter else {
            return base;
        };
        let mut at = base;
        if !j.max_extra.is_zero() {
            let ns = j.max_extra.as_nanos() as f64 * uniform(rng);
            at += Duration::from_nanos(ns as u64);
        }
        if let Some(r) = j.reorder {
            if uniform(rng) < r.probability {
                // Held back: later packets may pass it, and it does not
                // hold them back.
                return at + r.extra;
            }
        }
        let at = at.max(self.last_in_order);
        self.last_in_order = at;
        at
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
    fn deterministic_and_validated() {
        let j = Jitter {
            max_extra: Duration::from_millis(2),
            reorder: Some(Reorder {
                probability: 0.1,
                extra: Duration::from_millis(3),
            }),
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
