//! ACK delay control (paper 001, Wu et al., sec. 3-4): a router in front
//! of a congested forward link spaces the ACKs it passes back to the
//! senders. ACKs leak at a normal rate, the forward link's service rate in
//! data packets, and at a fraction of it (one half in the paper) while the
//! forward queue is above a threshold (50 kB in the paper). Fewer ACKs per
//! second means slower window growth at the sources, so the forward queue
//! drains before it overflows, without any change to the end hosts.
//!
//! The controller decides each ACK's release time when the ACK arrives;
//! ACKs leave in arrival order, so this is a FIFO shaper whose spacing is
//! chosen from the congestion state when each ACK joins it.

use crate::time::{Duration, Instant};

/// Settings of [`DelayControl`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayControlConfig {
    /// Forward queue length at which the leak slows, bytes.
    pub threshold_bytes: u64,
    /// The slowed leak rate as a fraction of the normal one, in (0, 1].
    pub fraction: f64,
    /// Spacing of ACKs at the normal rate: the time the forward link takes
    /// to serve one data packet.
    pub normal_interval: Duration,
}

impl DelayControlConfig {
    /// Paper 001's setting: a 50 kB threshold and half the normal rate,
    /// for a forward link of `forward_rate_bps` serving data packets of
    /// `data_packet_bytes` on the wire.
    pub fn paper_001(forward_rate_bps: u64, data_packet_bytes: u32) -> DelayControlConfig {
        DelayControlConfig {
            threshold_bytes: 50_000,
            fraction: 0.5,
            normal_interval: service_time(forward_rate_bps, data_packet_bytes),
        }
    }

    /// Checks the settings; the error names the problem.
    pub fn validate(&self) -> Result<(), &'static str> {
        if !(self.fraction > 0.0 && self.fraction <= 1.0) {
            return Err("delay-control fraction must be in (0, 1]");
        }
        if self.normal_interval.is_zero() {
            return Err("delay-control normal interval must be positive");
        }
        Ok(())
    }
}

/// Time to serve `bytes` at `rate_bps` (at least a nanosecond).
fn service_time(rate_bps: u64, bytes: u32) -> Duration {
    let nanos = (u128::from(bytes) * 8 * 1_000_000_000) / u128::from(rate_bps.max(1));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX).max(1))
}

/// The ACK shaper. See the module documentation.
#[derive(Debug, Clone)]
pub struct DelayControl {
    config: DelayControlConfig,
    /// When the shaper may release its next ACK.
    next_free: Option<Instant>,
    delayed: u64,
    congested_acks: u64,
}

impl DelayControl {
    /// A shaper with nothing waiting.
    pub fn new(config: DelayControlConfig) -> DelayControl {
        DelayControl {
            config,
            next_free: None,
            delayed: 0,
            congested_acks: 0,
        }
    }

    /// The settings.
    pub fn config(&self) -> &DelayControlConfig {
        &self.config
    }

    /// The spacing the shaper applies while the forward queue holds
    /// `forward_queue_bytes`.
    pub fn interval(&self, forward_queue_bytes: u64) -> Duration {
        let normal = self.config.normal_interval;
        if forward_queue_bytes >= self.config.threshold_bytes {
            Duration::from_secs_f64(normal.as_secs_f64() / self.config.fraction)
        } else {
            normal
        }
    }

    /// An ACK arrives at `now` while the forward queue holds
    /// `forward_queue_bytes`: returns when it may leave (`now` or later).
    pub fn release_at(&mut self, now: Instant, forward_queue_bytes: u64) -> Instant {
        let interval = self.interval(forward_queue_bytes);
        if forward_queue_bytes >= self.config.threshold_bytes {
            self.congested_acks += 1;
        }
        let release = self.next_free.map_or(now, |t| t.max(now));
        self.next_free = Some(release + interval);
        if release > now {
            self.delayed += 1;
        }
        release
    }

    /// ACKs held back so far.
    pub fn delayed_acks(&self) -> u64 {
        self.delayed
    }

    /// ACKs that arrived while the forward queue was above the threshold.
    pub fn congested_acks(&self) -> u64 {
        self.congested_acks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DelayControlConfig {
        DelayControlConfig {
            threshold_bytes: 10_000,
            fraction: 0.5,
            normal_interval: Duration::from_millis(1),
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn below_the_threshold_acks_leak_at_the_normal_rate() {
        let mut c = DelayControl::new(config());
        // A burst of five ACKs at t = 0 leaves 1 ms apart.
        let out: Vec<_> = (0..5).map(|_| c.release_at(at(0), 0)).collect();
        assert_eq!(out, (0..5).map(at).collect::<Vec<_>>());
        assert_eq!(c.delayed_acks(), 4);
        // After a pause, the next ACK goes at once.
        assert_eq!(c.release_at(at(100), 0), at(100));
    }

    #[test]
    fn above_the_threshold_the_leak_rate_is_the_fraction() {
        let mut c = DelayControl::new(config());
        let out: Vec<_> = (0..4).map(|_| c.release_at(at(0), 20_000)).collect();
        assert_eq!(out, [at(0), at(2), at(4), at(6)]);
        assert_eq!(c.congested_acks(), 4);
        // The queue drains: back to 1 ms spacing after the last slow slot.
        assert_eq!(c.release_at(at(0), 0), at(8));
        assert_eq!(c.release_at(at(0), 0), at(9));
    }

    #[test]
    fn a_quarter_fraction_spaces_four_times_wider() {
        let mut c = DelayControl::new(DelayControlConfig {
            fraction: 0.25,
            ..config()
        });
        c.release_at(at(0), 10_000);
        assert_eq!(c.release_at(at(0), 10_000), at(4));
    }

    #[test]
    fn paper_setting_matches_the_forward_service_rate() {
        // 30 Mbit/s, 576-byte packets (536 MSS + 40): 153.6 us each.
        let c = DelayControlConfig::paper_001(30_000_000, 576);
        assert_eq!(c.normal_interval, Duration::from_nanos(153_600));
        assert_eq!(c.threshold_bytes, 50_000);
        assert!(c.validate().is_ok());
        assert!(DelayControlConfig { fraction: 0.0, ..c }
            .validate()
            .is_err());
    }
}
