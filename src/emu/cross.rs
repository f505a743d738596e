//! On/off constant-rate UDP cross traffic (paper 004 sec. 4.2, the TCP-UDP
//! configuration): while on, a source emits fixed-size datagrams at a
//! constant rate; on and off periods are fixed or exponentially distributed
//! (drawn from the run's seeded RNG, so they are reproducible).

use super::link::transmission_time;
use super::queue::uniform;
use super::scenario::{CrossTrafficSpec, Period};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

#[derive(Debug)]
pub(crate) struct CrossSource {
    pub path: Vec<u32>,
    pub packet_bytes: u32,
    on_period: Period,
    off_period: Period,
    /// Gap between datagrams while on.
    interval: Duration,
    on: bool,
    phase_end: Instant,
}

/// A period drawn from its distribution, at least one nanosecond so that a
/// source always makes progress.
fn draw(p: Period, rng: &mut dyn RngCore) -> Duration {
    let d = match p {
        Period::Fixed(d) => d,
        Period::Exponential { mean } => {
            let u = uniform(rng);
            let nanos = -(mean.as_nanos() as f64) * (1.0 - u).ln();
            Duration::from_nanos(nanos.min(u64::MAX as f64) as u64)
        }
    };
    d.max(Duration::from_nanos(1))
}

impl CrossSource {
    pub fn new(spec: &CrossTrafficSpec) -> CrossSource {
        CrossSource {
            path: spec.path.iter().map(|&l| l as u32).collect(),
            packet_bytes: spec.packet_bytes,
            on_period: spec.on,
            off_period: spec.off,
            interval: transmission_time(spec.packet_bytes, spec.rate_bps),
            on: false,
            // The first event, at `start`, switches the source on.
            phase_end: Instant::ZERO + spec.start,
        }
    }

    pub fn first_event(&self) -> Instant {
        self.phase_end
    }

    /// Handles the source's event at `now`: returns whether to emit a
    /// datagram now and when the next event is.
    pub fn step(&mut self, now: Instant, rng: &mut dyn RngCore) -> (bool, Instant) {
        if now >= self.phase_end {
            self.on = !self.on;
            let p = if self.on {
                self.on_period
            } else {
                self.off_period
            };
            self.phase_end = now + draw(p, rng);
        }
        if self.on {
            (true, (now + self.interval).min(self.phase_end))
        } else {
            (false, self.phase_end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    #[test]
    fn fixed_on_off_emits_at_rate() {
        let spec = CrossTrafficSpec {
            path: vec![0],
            rate_bps: 8_000_000, // 1 ms per 1000-byte datagram
            packet_bytes: 1000,
            on: Period::Fixed(Duration::from_millis(10)),
            off: Period::Fixed(Duration::from_millis(10)),
            start: Duration::from_millis(5),
        };
        let mut s = CrossSource::new(&spec);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut t = s.first_event();
        let mut sent = Vec::new();
        while t < Instant::from_millis(45) {
            let (emit, next) = s.step(t, &mut rng);
            if emit {
                sent.push(t.as_nanos() / 1_000_000);
            }
            t = next;
        }
        let expect: Vec<u64> = (5..15).chain(25..35).collect();
        assert_eq!(sent, expect);
    }

    #[test]
    fn exponential_periods_average_their_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mean = Duration::from_millis(100);
        let n = 20_000;
        let total: u128 = (0..n)
            .map(|_| draw(Period::Exponential { mean }, &mut rng).as_nanos())
            .sum();
        let avg_ms = total as f64 / n as f64 / 1e6;
        assert!((avg_ms - 100.0).abs() < 3.0, "{avg_ms}");
    }
}
