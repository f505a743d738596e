//! Random loss on a link's wire: independent (Bernoulli) or bursty
//! (Gilbert-Elliott, as used to model radio links with fading).
//!
//! A lost packet is lost *after* serialisation: it occupied the
//! transmitter for its full transmission time, as a frame corrupted on a
//! radio link does, and never reaches the far end. Losses are counted
//! apart from queue drops (`LinkResult::lost`), so a report can tell
//! congestion from the path's own loss.
//!
//! A Bernoulli loss is drawn from the packet's own key ([`super::draws`]):
//! the same segment crossing the link for the same time is lost in every
//! run of the seed, whatever else those runs sent. A Gilbert-Elliott chain
//! is stepped by the link's own generator, two draws per packet. A link
//! without a loss model draws nothing.

use super::draws::{mix, uniform_of, Purpose};
use super::queue::uniform;
use crate::testing::TestRng;
use crate::time::Duration;

/// How a link loses packets on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum LossModel {
    /// No random loss (the default).
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability per packet, in [0, 1].
        p: f64,
    },
    /// A two-state Markov chain (Gilbert 1960, Elliott 1963) in slotted
    /// time: the state advances once per *packet time*, the time the link
    /// takes to serialise a 1500-byte packet, whether a packet is sent in
    /// it or not. A packet is lost with the state's loss
    /// probability after the chain has advanced one slot for it and one
    /// for each whole packet time the transmitter stood idle before it. On
    /// a busy link that is one step per packet, and with `loss_good = 0`
    /// and `loss_bad = 1` (Gilbert's model) losses come in bursts whose
    /// length is geometric with mean `1 / p_bad_to_good` packets. A burst
    /// is a stretch of time, like a fade on a radio link: a lone
    /// retransmission seconds after a loss finds the chain near its
    /// long-run state, not still inside the burst (a chain stepped per
    /// packet only kept a flow left alone on a link in the bad state
    /// across a dozen backed-off timeouts, hundreds of seconds).
    GilbertElliott {
        /// Probability per packet time of moving from the good to the bad
        /// state.
        p_good_to_bad: f64,
        /// Probability per packet time of moving from the bad to the good
        /// state.
        p_bad_to_good: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
}

impl LossModel {
    /// A Gilbert model (no loss when good, every packet lost when bad)
    /// with a long-run loss rate of `mean_loss` and loss bursts of
    /// `mean_burst_packets` on average on a busy link (at least 1: a
    /// shorter mean burst is taken as 1, i.e. no burstiness beyond chance).
    ///
    /// The bad state lasts `1 / p_bad_to_good` packet times on average and is
    /// occupied a fraction `p_gb / (p_gb + p_bg)` of the time, which is
    /// set to `mean_loss`. A `mean_loss` of 1 or more (or a non-finite
    /// value) gives a model [`validate`](Self::validate) rejects.
    pub fn gilbert_elliott_bursty(mean_loss: f64, mean_burst_packets: f64) -> LossModel {
        let burst = if mean_burst_packets.is_nan() {
            f64::NAN
        } else {
            mean_burst_packets.max(1.0)
        };
        let p_bad_to_good = 1.0 / burst;
        LossModel::GilbertElliott {
            p_good_to_bad: mean_loss * p_bad_to_good / (1.0 - mean_loss),
            p_bad_to_good,
            loss_good: 0.0,
            loss_bad: 1.0,
        }
    }

    /// Every probability is finite and within [0, 1]; a Gilbert-Elliott
    /// chain must be able to leave the bad state if it can enter it.
    pub fn validate(&self) -> Result<(), &'static str> {
        let prob = |p: f64| p.is_finite() && (0.0..=1.0).contains(&p);
        match *self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => {
                if prob(p) {
                    Ok(())
                } else {
                    Err("loss probability must be a number in [0, 1]")
                }
            }
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                if ![p_good_to_bad, p_bad_to_good, loss_good, loss_bad]
                    .into_iter()
                    .all(prob)
                {
                    return Err("Gilbert-Elliott probabilities must be numbers in [0, 1]");
                }
                if p_good_to_bad > 0.0 && p_bad_to_good == 0.0 && loss_bad >= 1.0 {
                    // Once bad, every packet would be lost forever.
                    return Err(
                        "Gilbert-Elliott bad state with loss 1 must be left (p_bad_to_good > 0)",
                    );
                }
                Ok(())
            }
        }
    }

    /// Long-run fraction of packets lost (the stationary loss rate).
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                let moves = p_good_to_bad + p_bad_to_good;
                if moves == 0.0 {
                    // Never leaves the good state it starts in.
                    return loss_good;
                }
                let bad = p_good_to_bad / moves;
                bad * loss_bad + (1.0 - bad) * loss_good
            }
        }
    }

    /// A model that never loses anything and so never needs a draw.
    pub fn is_none(&self) -> bool {
        matches!(self, LossModel::None)
    }
}

/// Bytes of the packet whose serialisation time is one slot of a
/// Gilbert-Elliott chain (see [`LossModel::GilbertElliott`]).
pub(crate) const SLOT_BYTES: u64 = 1500;

/// A link's loss process: the model and, for Gilbert-Elliott, the
/// current state. Every chain starts in the good state.
#[derive(Debug, Clone)]
pub(crate) struct LossProcess {
    model: LossModel,
    bad: bool,
    /// Steps a Gilbert-Elliott chain: two draws per packet on this link,
    /// whatever the outcome, and nothing else.
    chain: TestRng,
}

impl LossProcess {
    /// The process of `model`, its chain (if any) stepped by `chain`.
    pub(crate) fn new(model: LossModel, chain: TestRng) -> LossProcess {
        LossProcess {
            model,
            bad: false,
            chain,
        }
    }

    /// Decides the fate of the packet keyed `key` leaving the
    /// transmitter: `true` if it is lost. `idle` is how long the
    /// transmitter, serialising at `rate_bps`, stood idle before it (zero
    /// when sent back to back).
    ///
    /// A Bernoulli loss is the packet's own draw ([`super::draws`]). A
    /// Gilbert-Elliott chain steps per packet, so its draws come from the
    /// link's own stream in packet order: the n-th packet across the link
    /// meets the same step in every run of the seed, which on a one-flow
    /// path is the same segment until the runs' first retransmission
    /// (keying the chain by time instead put the bursts at the same
    /// instants but on other segments, and made two strategies' runs of a
    /// case agree less than this).
    pub(crate) fn lose(&mut self, idle: Duration, rate_bps: u64, key: u64) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => uniform_of(mix(key, Purpose::Loss as u64)) < p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                // Two draws per packet whatever the outcome, so the stream
                // does not depend on the state.
                let flip = uniform(&mut self.chain);
                let lose = uniform(&mut self.chain);
                let idle_slots = idle_slots(idle, rate_bps);
                let leave = if idle_slots == 0 {
                    // One step: the per-slot probability itself (the
                    // closed form below rounds differently).
                    if self.bad {
                        p_bad_to_good
                    } else {
                        p_good_to_bad
                    }
                } else {
                    leave_within(p_good_to_bad, p_bad_to_good, self.bad, idle_slots + 1)
                };
                if flip < leave {
                    self.bad = !self.bad;
                }
                lose < if self.bad { loss_bad } else { loss_good }
            }
        }
    }
}

/// Whole packet times ([`SLOT_BYTES`] at `rate_bps`) in `idle`.
fn idle_slots(idle: Duration, rate_bps: u64) -> u64 {
    let slot_bits = u128::from(SLOT_BYTES * 8);
    let bits = idle.as_nanos() * u128::from(rate_bps) / 1_000_000_000;
    u64::try_from(bits / slot_bits).unwrap_or(u64::MAX)
}

/// Probability that a two-state chain with per-step moves `p` (good to
/// bad) and `q` (bad to good) is in the other state after `steps` steps:
/// `(1 - r^steps)` times the other state's long-run share, with
/// `r = 1 - p - q`.
fn leave_within(p: f64, q: f64, bad: bool, steps: u64) -> f64 {
    let moves = p + q;
    if moves == 0.0 {
        return 0.0;
    }
    let r = 1.0 - moves;
    // |r| <= 1; past 2^20 steps r^steps is 0 unless |r| = 1 (p = q = 1:
    // the chain alternates), where only the parity counts.
    let steps = if steps > 1 << 20 {
        (1 << 20) + (steps & 1)
    } else {
        steps
    };
    let mixed = 1.0 - r.powi(steps as i32);
    let other_share = if bad { q / moves } else { p / moves };
    (other_share * mixed).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 12 Mbit/s: a slot (1500 bytes) is 1 ms.
    const RATE: u64 = 12_000_000;

    /// The fates of `n` packets, `idle` apart, keyed by their index.
    fn spaced(model: LossModel, seed: u64, n: usize, idle: Duration) -> Vec<bool> {
        let mut p = LossProcess::new(model, TestRng::seed_from_u64(seed));
        (0..n)
            .map(|i| p.lose(idle, RATE, mix(seed, i as u64)))
            .collect()
    }

    fn losses(model: LossModel, seed: u64, n: usize) -> Vec<bool> {
        spaced(model, seed, n, Duration::ZERO)
    }

    /// Lengths of the runs of consecutive losses.
    fn bursts(lost: &[bool]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut run = 0;
        for &l in lost {
            if l {
                run += 1;
            } else if run > 0 {
                out.push(run);
                run = 0;
            }
        }
        if run > 0 {
            out.push(run);
        }
        out
    }

    #[test]
    fn none_never_loses_and_never_draws() {
        let chain = TestRng::seed_from_u64(1);
        let mut p = LossProcess::new(LossModel::default(), chain.clone());
        assert!((0..1000).all(|i| !p.lose(Duration::from_secs(1), RATE, i)));
        assert_eq!(p.chain, chain, "no model, no draw");
    }

    #[test]
    fn bernoulli_rate_within_bounds() {
        let n = 200_000;
        for p in [0.001, 0.01, 0.1, 0.5] {
            let lost = losses(LossModel::Bernoulli { p }, 7, n);
            let k = lost.iter().filter(|&&l| l).count() as f64;
            // Five standard deviations of a binomial count.
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((k - n as f64 * p).abs() < 5.0 * sd, "p {p}: {k} lost");
        }
        assert!(losses(LossModel::Bernoulli { p: 1.0 }, 1, 100)
            .iter()
            .all(|&l| l));
        assert!(!losses(LossModel::Bernoulli { p: 0.0 }, 1, 100)
            .iter()
            .any(|&l| l));
    }

    #[test]
    fn gilbert_elliott_rate_and_burst_length() {
        let n = 400_000;
        for (mean, burst) in [(0.01, 4.0), (0.05, 10.0), (0.02, 1.0)] {
            let model = LossModel::gilbert_elliott_bursty(mean, burst);
            model.validate().unwrap();
            assert!((model.mean_loss() - mean).abs() < 1e-12);
            let lost = losses(model, 11, n);
            let rate = lost.iter().filter(|&&l| l).count() as f64 / n as f64;
            // Bursts make the count far more variable than a binomial;
            // 25% relative error is still a sharp check at these sizes.
            assert!((rate - mean).abs() < 0.25 * mean, "{mean}/{burst}: {rate}");
            let b = bursts(&lost);
            let avg = b.iter().sum::<usize>() as f64 / b.len() as f64;
            assert!((avg - burst).abs() < 0.15 * burst, "{mean}/{burst}: {avg}");
        }
        // Independent losses of the same rate have bursts near 1.
        let b = bursts(&losses(LossModel::Bernoulli { p: 0.01 }, 3, n));
        let avg = b.iter().sum::<usize>() as f64 / b.len() as f64;
        assert!(avg < 1.05, "{avg}");
    }

    /// A packet after a long silence finds the chain in its long-run
    /// state: losses of packets a second apart are independent with the
    /// mean rate, where back to back they come in bursts.
    #[test]
    fn gilbert_elliott_bursts_are_stretches_of_time() {
        let model = LossModel::gilbert_elliott_bursty(0.05, 10.0);
        let n = 200_000;
        let sparse = spaced(model, 5, n, Duration::from_secs(1));
        let rate = sparse.iter().filter(|&&l| l).count() as f64 / n as f64;
        let sd = (0.05 * 0.95 / n as f64).sqrt();
        assert!((rate - 0.05).abs() < 5.0 * sd, "{rate}");
        let b = bursts(&sparse);
        let avg = b.iter().sum::<usize>() as f64 / b.len() as f64;
        // Independent losses at 5%: runs average 1 / 0.95.
        assert!(avg < 1.1, "sparse packets: bursts of {avg}");
        // Half a slot of silence is no step of its own; ten slots mix a
        // chain whose bursts last ten packets only partly.
        let half = spaced(model, 5, n, Duration::from_micros(500));
        assert_eq!(half, losses(model, 5, n), "under a slot idle: per packet");
        let tens = spaced(model, 5, n, Duration::from_millis(9));
        let b = bursts(&tens);
        let avg = b.iter().sum::<usize>() as f64 / b.len() as f64;
        assert!(avg > 1.3 && avg < 3.0, "ten slots apart: bursts of {avg}");
    }

    #[test]
    fn leaving_within_steps_matches_the_chain() {
        let (p, q) = (0.02, 0.3);
        // One step: the per-step probabilities.
        assert!((leave_within(p, q, false, 1) - p).abs() < 1e-15);
        assert!((leave_within(p, q, true, 1) - q).abs() < 1e-15);
        // Two steps by hand: good -> bad -> bad or good -> good -> bad.
        let two = p * (1.0 - q) + (1.0 - p) * p;
        assert!((leave_within(p, q, false, 2) - two).abs() < 1e-15);
        // Many steps: the long-run share of the other state.
        assert!((leave_within(p, q, false, u64::MAX) - p / (p + q)).abs() < 1e-12);
        assert!((leave_within(p, q, true, 1 << 40) - q / (p + q)).abs() < 1e-12);
        // A chain that alternates, and one that never moves.
        assert_eq!(leave_within(1.0, 1.0, true, (1 << 40) + 1), 1.0);
        assert_eq!(leave_within(1.0, 1.0, true, 1 << 40), 0.0);
        assert_eq!(leave_within(0.0, 0.0, false, 99), 0.0);
    }

    #[test]
    fn gilbert_elliott_partial_loss_in_each_state() {
        let model = LossModel::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.09,
            loss_good: 0.001,
            loss_bad: 0.3,
        };
        model.validate().unwrap();
        let expect = 0.1 * 0.3 + 0.9 * 0.001;
        assert!((model.mean_loss() - expect).abs() < 1e-12);
        let n = 400_000;
        let rate = losses(model, 5, n).iter().filter(|&&l| l).count() as f64 / n as f64;
        assert!((rate - expect).abs() < 0.1 * expect, "{rate}");
    }

    /// A Bernoulli loss belongs to the packet: the same keys lose the same
    /// packets whatever else crossed the link in between.
    #[test]
    fn bernoulli_losses_follow_the_packet_keys() {
        let model = LossModel::Bernoulli { p: 0.2 };
        let mut every = LossProcess::new(model, TestRng::seed_from_u64(3));
        let all: Vec<bool> = (0..5_000u64)
            .map(|i| every.lose(Duration::ZERO, RATE, mix(3, i)))
            .collect();
        let mut some = LossProcess::new(model, TestRng::seed_from_u64(3));
        for i in (0..5_000u64).step_by(7) {
            assert_eq!(some.lose(Duration::ZERO, RATE, mix(3, i)), all[i as usize]);
        }
    }

    #[test]
    fn same_seed_same_losses() {
        let model = LossModel::gilbert_elliott_bursty(0.03, 3.0);
        assert_eq!(losses(model, 9, 10_000), losses(model, 9, 10_000));
        assert_ne!(losses(model, 9, 10_000), losses(model, 10, 10_000));
    }

    #[test]
    fn validation() {
        let bad = [
            LossModel::Bernoulli { p: -0.1 },
            LossModel::Bernoulli { p: 1.5 },
            LossModel::Bernoulli { p: f64::NAN },
            LossModel::Bernoulli { p: f64::INFINITY },
            LossModel::gilbert_elliott_bursty(1.0, 4.0),
            LossModel::gilbert_elliott_bursty(0.9, 4.0),
            LossModel::gilbert_elliott_bursty(f64::NAN, 4.0),
            LossModel::gilbert_elliott_bursty(0.01, f64::NAN),
            LossModel::GilbertElliott {
                p_good_to_bad: 0.1,
                p_bad_to_good: 0.0,
                loss_good: 0.0,
                loss_bad: 1.0,
            },
        ];
        for m in bad {
            assert!(m.validate().is_err(), "{m:?}");
        }
        let good = [
            LossModel::None,
            LossModel::Bernoulli { p: 0.0 },
            LossModel::Bernoulli { p: 1.0 },
            LossModel::gilbert_elliott_bursty(0.0, 4.0),
            LossModel::gilbert_elliott_bursty(0.01, 0.5),
            LossModel::gilbert_elliott_bursty(0.5, 1e9),
        ];
        for m in good {
            assert!(m.validate().is_ok(), "{m:?}");
        }
    }
}
