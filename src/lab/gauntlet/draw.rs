//! The gauntlet's draw: case `k` of seed `s` is a random dumbbell path
//! whose every parameter comes from one RNG seeded with `(s, k)` alone, so
//! a case is the same whatever `--cases`, `--shard` or `--jobs` say, and
//! `--case K` replays it.
//!
//! The ranges are issue 18's: bottleneck 0.5 Mbit/s to 1 Gbit/s, base RTT
//! 5 to 700 ms with a per-flow spread, buffers of 0.1 to 2 BDP (drop-tail
//! or RED), random and bursty loss up to 2 %, reverse paths down to 1/1000
//! of the forward rate, 1 to 16 flows with random starts, some paths shared
//! with AE or delayed-ACK competitors, transfers of 10 kB to 100 MB.

use crate::emu::LossModel;
use crate::lab::scenario::{FlowGroup, LabScenario, LinkParams, QueueKind, TopologyKind};
use crate::lab::strategy::Strategy;
use crate::time::Duration;
use alloc::borrow::Cow;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};

/// Bottleneck rate range, bits per second (log-uniform).
pub const RATE_BPS: (f64, f64) = (0.5e6, 1e9);
/// Base round-trip propagation delay range, milliseconds (log-uniform).
pub const RTT_MS: (f64, f64) = (5.0, 700.0);
/// Each flow's own RTT is the base RTT times a factor uniform in
/// `1 ± RTT_SPREAD` (its access links make the difference).
pub const RTT_SPREAD: f64 = 0.25;
/// Share of the base RTT spent on the bottleneck (both directions); the
/// rest, per flow, on its access links. Below `1 - RTT_SPREAD` so that the
/// shortest flow still has a non-negative access delay.
const BOTTLENECK_RTT_SHARE: f64 = 0.7;
/// Bottleneck buffer range, bandwidth-delay products (log-uniform).
pub const BUFFER_BDP: (f64, f64) = (0.1, 2.0);
/// Smallest buffer, packets: one packet of queue would be a different
/// (and uninteresting) experiment on the slowest, shortest paths.
pub const MIN_BUFFER_PACKETS: usize = 2;
/// Share of paths whose bottleneck queue is RED rather than drop-tail.
pub const RED_SHARE: f64 = 0.25;
/// RED thresholds as fractions of the buffer: early drops start at a
/// fifth and reach `max_p` at three fifths, so the queue they manage
/// scales with the drawn buffer rather than paper 004's fixed 5/15.
pub const RED_THRESHOLDS: (f64, f64) = (0.2, 0.6);
/// Share of paths without random loss.
pub const LOSS_FREE_SHARE: f64 = 0.4;
/// Mean random loss range on the other paths (log-uniform).
pub const LOSS: (f64, f64) = (1e-4, 2e-2);
/// Share of the lossy paths whose loss comes in Gilbert-Elliott bursts.
pub const BURSTY_SHARE: f64 = 1.0 / 3.0;
/// Mean burst length range of bursty loss, packets (log-uniform).
pub const BURST_PACKETS: (f64, f64) = (1.5, 10.0);
/// Share of paths whose reverse direction runs at the forward rate.
pub const SYMMETRIC_SHARE: f64 = 0.4;
/// Forward rate over reverse rate on the others (log-uniform).
pub const REVERSE_DIVISOR: (f64, f64) = (1.0, 1000.0);
/// Most flows on a path, competitors included.
pub const MAX_FLOWS: u32 = 16;
/// Share of paths shared with competitors pinned to `ae` or `da`.
pub const SHARED_SHARE: f64 = 0.3;
/// Most competitors on a shared path.
pub const MAX_COMPETITORS: u32 = 4;
/// Share of the unshared paths that carry a single flow (the paths the
/// "no RTO without loss" target is judged on).
pub const SINGLE_FLOW_SHARE: f64 = 0.5;
/// Transfer size range, bytes (log-uniform, each flow its own).
pub const SIZE_BYTES: (f64, f64) = (1e4, 1e8);
/// Starts after the first flow's (which starts at zero) are uniform over
/// a window drawn log-uniformly between 3 RTTs and 3 RTTs plus this.
pub const START_WINDOW_EXTRA_S: f64 = 3.0;
/// Payload per segment: a 1500-byte MTU with timestamps.
pub const SEGMENT_BYTES: u16 = 1448;
/// Bytes a full segment takes on a link (payload, 32 of TCP header with
/// timestamps, 20 of IPv4), for BDPs and ideal transfer times.
pub const WIRE_PACKET_BYTES: f64 = 1500.0;
/// Bytes a pure ACK takes on a link (20 of TCP header, 12 of timestamps,
/// 20 of IPv4), for the ACK path's share of the horizon.
pub const WIRE_ACK_BYTES: f64 = 52.0;
/// The horizon is this many times the ideal completion of all bytes ...
pub const HORIZON_FACTOR: f64 = 20.0;
/// ... plus this much, so that slow starts on short transfers and long
/// RTOs always fit.
pub const HORIZON_EXTRA_S: f64 = 60.0;

/// Random loss on the forward bottleneck, as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LossDraw {
    /// No random loss (queue drops only).
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Gilbert-Elliott bursts with this mean loss and mean burst length.
    GilbertElliott {
        /// Long-run fraction of packets lost.
        mean_loss: f64,
        /// Mean consecutive losses in a burst, packets.
        mean_burst_packets: f64,
    },
}

impl LossDraw {
    /// Long-run loss fraction.
    pub fn mean(self) -> f64 {
        match self {
            LossDraw::None => 0.0,
            LossDraw::Bernoulli { p } => p,
            LossDraw::GilbertElliott { mean_loss, .. } => mean_loss,
        }
    }

    /// The emulator's model of this loss.
    pub fn model(self) -> LossModel {
        match self {
            LossDraw::None => LossModel::None,
            LossDraw::Bernoulli { p } => LossModel::Bernoulli { p },
            LossDraw::GilbertElliott {
                mean_loss,
                mean_burst_packets,
            } => LossModel::gilbert_elliott_bursty(mean_loss, mean_burst_packets),
        }
    }

    /// Short text for tables: `none`, `0.12%`, `0.12% bursts of 3.1`.
    pub fn label(self) -> String {
        match self {
            LossDraw::None => "none".into(),
            LossDraw::Bernoulli { p } => format!("{:.3}%", p * 100.0),
            LossDraw::GilbertElliott {
                mean_loss,
                mean_burst_packets,
            } => format!("{:.3}% GE burst {mean_burst_packets:.1}", mean_loss * 100.0),
        }
    }
}

/// One flow of a case, as drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowDraw {
    /// Start, microseconds from the beginning of the run.
    pub start_us: u64,
    /// One-way delay of each of its access links, microseconds.
    pub access_delay_us: u64,
    /// Its round-trip propagation delay, microseconds.
    pub rtt_us: u64,
    /// Payload bytes it transfers.
    pub bytes: u64,
    /// The strategy it is pinned to (`ae` or `da`) when it is a
    /// competitor; `None` for a test flow, which runs the judged strategy.
    pub competitor: Option<String>,
}

/// Everything that defines case `case` of a seed, kept in each record so
/// pages can describe the path without drawing it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseParams {
    /// The case number.
    pub case: u64,
    /// Forward bottleneck rate, bits per second.
    pub rate_bps: u64,
    /// Base (mean) round-trip propagation delay, microseconds.
    pub rtt_us: u64,
    /// One bandwidth-delay product at the base RTT, full-size packets.
    pub bdp_packets: f64,
    /// Forward bottleneck buffer, packets.
    pub buffer_packets: usize,
    /// The same in bandwidth-delay products (after rounding to packets).
    pub buffer_bdp: f64,
    /// `droptail` or `red`.
    pub queue: String,
    /// Random loss on the forward bottleneck.
    pub loss: LossDraw,
    /// Forward rate over reverse rate (1 = symmetric).
    pub reverse_divisor: f64,
    /// Reverse bottleneck rate, bits per second.
    pub reverse_rate_bps: u64,
    /// The flows, test flows and competitors.
    pub flows: Vec<FlowDraw>,
    /// Simulated time limit, microseconds.
    pub horizon_us: u64,
    /// Seed of the emulator's own random choices (RED, loss).
    pub emu_seed: u64,
}

impl CaseParams {
    /// Flows running the judged strategy.
    pub fn test_flows(&self) -> usize {
        self.flows.iter().filter(|f| f.competitor.is_none()).count()
    }

    /// Flows pinned to a competitor strategy.
    pub fn competitors(&self) -> usize {
        self.flows.len() - self.test_flows()
    }

    /// Base RTT, milliseconds.
    pub fn rtt_ms(&self) -> f64 {
        self.rtt_us as f64 / 1e3
    }

    /// The path the "zero RTOs" target is judged on: no random loss, one
    /// flow, a buffer of at least half a BDP.
    pub fn rto_free_path(&self) -> bool {
        self.loss == LossDraw::None && self.flows.len() == 1 && self.buffer_bdp >= 0.5
    }

    /// One line for tables: `12.3 Mbit/s, 84 ms, 0.6 BDP red, ...`.
    pub fn describe(&self) -> String {
        let sizes: Vec<String> = self.flows.iter().map(|f| human_bytes(f.bytes)).collect();
        let competitors: Vec<&str> = self
            .flows
            .iter()
            .filter_map(|f| f.competitor.as_deref())
            .collect();
        let mut s = format!(
            "{} Mbit/s, {:.1} ms, {:.2} BDP ({} pkt) {}, loss {}, reverse 1/{:.1}, {} flow(s) [{}]",
            fmt_sig(self.rate_bps as f64 / 1e6),
            self.rtt_ms(),
            self.buffer_bdp,
            self.buffer_packets,
            self.queue,
            self.loss.label(),
            self.reverse_divisor,
            self.flows.len(),
            sizes.join(" ")
        );
        if !competitors.is_empty() {
            s.push_str(&format!(", competitors: {}", competitors.join(" ")));
        }
        s
    }
}

/// `12.3 MB`, `45 kB`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e6 {
        format!("{}MB", fmt_sig(b / 1e6))
    } else {
        format!("{}kB", fmt_sig(b / 1e3))
    }
}

/// Three significant digits, no trailing noise.
fn fmt_sig(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A drawn case: its description and the lab scenario that runs it.
#[derive(Debug, Clone)]
pub struct Case {
    /// What was drawn.
    pub params: CaseParams,
    /// The scenario (one flow group per flow).
    pub scenario: LabScenario,
}

/// Replicates after the first move every flow's start later by a draw
/// uniform in `[0, this * base RTT)` (see [`Case::replicate_scenario`]).
pub const REPLICATE_START_SHIFT_RTTS: f64 = 0.5;

impl Case {
    /// The scenario that replicate `draw` of this case runs. Replicate 0
    /// runs the case as drawn. Every later one moves each flow's start
    /// later by its own draw, uniform in `[0, REPLICATE_START_SHIFT_RTTS`
    /// times the base RTT), keyed by the case's emulator seed and the
    /// replicate alone.
    ///
    /// Why: on a path without random loss or RED nothing else differs
    /// between replicates, and flows that share a bottleneck in a
    /// deterministic emulator fall into one phase pattern of many (which
    /// flow's slow start overflows the buffer while another is still
    /// small, which one a synchronized loss halves). A single such draw
    /// decides a ratio by more than any mechanism does: gauntlet seed 3
    /// case 55 (eight flows, drop-tail, no loss) came out at 1.22 of AE's
    /// time from one phase and 0.94 over five start offsets. Moving the
    /// starts by a fraction of an RTT keeps the path and its load and
    /// varies only that phase, so the mean over replicates and its
    /// standard error judge the mechanism, as they already did on lossy
    /// paths. A lone flow's run does not depend on when it starts.
    pub fn replicate_scenario(&self, draw: u32) -> Cow<'_, LabScenario> {
        if draw == 0 {
            return Cow::Borrowed(&self.scenario);
        }
        let mut d = Draws(keyed_rng(&[
            &self.params.emu_seed.to_le_bytes(),
            &self.params.case.to_le_bytes(),
            &draw.to_le_bytes(),
            b"startoff",
        ]));
        let span_s = self.params.rtt_ms() / 1e3 * REPLICATE_START_SHIFT_RTTS;
        let mut scenario = self.scenario.clone();
        for g in &mut scenario.flows {
            g.start += Duration::from_micros(micros(d.uniform(0.0, span_s)));
        }
        Cow::Owned(scenario)
    }
}

/// The case RNG: ChaCha8 keyed with the seed, the case number and a tag,
/// so no two (seed, case) pairs share a stream and nothing else (case
/// count, shard, thread) enters it.
fn case_rng(seed: u64, case: u64) -> ChaCha8Rng {
    keyed_rng(&[&seed.to_le_bytes(), &case.to_le_bytes(), b"gauntlet"])
}

/// ChaCha8 keyed with `parts` laid end to end (at most 32 bytes), the
/// rest of the key zero.
fn keyed_rng(parts: &[&[u8]]) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    let mut at = 0;
    for part in parts {
        key[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    ChaCha8Rng::from_seed(key)
}

/// Uniform draws on top of the raw RNG.
struct Draws(ChaCha8Rng);

impl Draws {
    /// Uniform in [0, 1), 53 bits.
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn log_uniform(&mut self, (lo, hi): (f64, f64)) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit()).exp()
    }

    /// An integer in `lo..=hi`, log-uniform (small counts as likely per
    /// octave as large ones).
    fn log_int(&mut self, lo: u32, hi: u32) -> u32 {
        let x = self.log_uniform((f64::from(lo), f64::from(hi) + 1.0));
        (x.floor() as u32).clamp(lo, hi)
    }

    /// An integer in `lo..=hi`, uniform.
    fn int(&mut self, lo: u32, hi: u32) -> u32 {
        let span = f64::from(hi - lo + 1);
        lo + ((self.unit() * span) as u32).min(hi - lo)
    }
}

fn micros(seconds: f64) -> u64 {
    (seconds * 1e6).round() as u64
}

/// Draws case `case` of `seed`.
pub fn draw(seed: u64, case: u64) -> Case {
    let mut d = Draws(case_rng(seed, case));
    // Every draw happens, in this order, whatever earlier draws decided,
    // where that is cheap: a later range change then moves fewer cases.
    let emu_seed = d.0.next_u64();
    let rate_bps = d.log_uniform(RATE_BPS).round() as u64;
    let rtt_s = d.log_uniform(RTT_MS) / 1e3;
    let bdp_packets = rate_bps as f64 * rtt_s / 8.0 / WIRE_PACKET_BYTES;
    let buffer_fraction = d.log_uniform(BUFFER_BDP);
    let buffer_packets = ((buffer_fraction * bdp_packets).round() as usize).max(MIN_BUFFER_PACKETS);
    let red = d.chance(RED_SHARE);
    let lossy = !d.chance(LOSS_FREE_SHARE);
    let mean_loss = d.log_uniform(LOSS);
    let bursty = d.chance(BURSTY_SHARE);
    let burst = d.log_uniform(BURST_PACKETS);
    let loss = match (lossy, bursty) {
        (false, _) => LossDraw::None,
        (true, false) => LossDraw::Bernoulli { p: mean_loss },
        (true, true) => LossDraw::GilbertElliott {
            mean_loss,
            mean_burst_packets: burst,
        },
    };
    let symmetric = d.chance(SYMMETRIC_SHARE);
    let divisor = d.log_uniform(REVERSE_DIVISOR);
    let reverse_divisor = if symmetric { 1.0 } else { divisor };
    let reverse_rate_bps = ((rate_bps as f64 / reverse_divisor).round() as u64).max(1);

    let shared = d.chance(SHARED_SHARE);
    let single = d.chance(SINGLE_FLOW_SHARE);
    let (tests, competitors) = if shared {
        let c = d.int(1, MAX_COMPETITORS);
        (d.log_int(1, MAX_FLOWS - c), c)
    } else if single {
        (1, 0)
    } else {
        (d.log_int(2, MAX_FLOWS), 0)
    };
    let start_window_s = d.log_uniform((3.0 * rtt_s, 3.0 * rtt_s + START_WINDOW_EXTRA_S));
    let bottleneck_one_way_s = rtt_s * BOTTLENECK_RTT_SHARE / 2.0;
    let mut flows = Vec::new();
    for i in 0..tests + competitors {
        let start_s = if i == 0 {
            0.0
        } else {
            d.uniform(0.0, start_window_s)
        };
        let flow_rtt_s = rtt_s * d.uniform(1.0 - RTT_SPREAD, 1.0 + RTT_SPREAD);
        // Two access links each way: sender's and receiver's.
        let access_s = (flow_rtt_s - 2.0 * bottleneck_one_way_s) / 4.0;
        let bytes = d.log_uniform(SIZE_BYTES).round() as u64;
        let competitor = (i >= tests).then(|| {
            if d.chance(0.5) {
                Strategy::AE.name()
            } else {
                Strategy::DA.name()
            }
        });
        flows.push(FlowDraw {
            start_us: micros(start_s),
            access_delay_us: micros(access_s),
            rtt_us: micros(2.0 * bottleneck_one_way_s) + 4 * micros(access_s),
            bytes,
            competitor,
        });
    }
    // The time the path itself forces on the reference (ae) run: the last
    // start, then the slowest of three limits, then one RTT. (1) Every byte
    // of every flow back to back at the bottleneck rate. (2) ae's ACKs, one
    // per segment, through the reverse bottleneck: at 1/1000 of the forward
    // rate these, not the data, set the pace. (3) Random loss: a Reno flow
    // with loss rate p moves about MSS / RTT * sqrt(3 / 2p) (Mathis et al.,
    // 1997), far below the link rate on fast long paths. A horizon sized
    // from (1) alone left every strategy unfinished on such paths, where a
    // comparison then says nothing.
    let segments: f64 = flows
        .iter()
        .map(|f| (f.bytes as f64 / f64::from(SEGMENT_BYTES)).ceil())
        .sum();
    let data_s = segments * WIRE_PACKET_BYTES * 8.0 / rate_bps as f64;
    let acks_s = segments * WIRE_ACK_BYTES * 8.0 / reverse_rate_bps as f64;
    let mean_loss = loss.mean();
    let loss_limited_s = if mean_loss > 0.0 {
        flows
            .iter()
            .map(|f| {
                let rtt = f.rtt_us as f64 / 1e6;
                let rate_bytes_s = f64::from(SEGMENT_BYTES) / rtt * (1.5 / mean_loss).sqrt();
                f.bytes as f64 / rate_bytes_s
            })
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    let last_start_s = flows.iter().map(|f| f.start_us).max().unwrap_or(0) as f64 / 1e6;
    let ideal_s =
        last_start_s + data_s.max(acks_s).max(loss_limited_s) + rtt_s * (1.0 + RTT_SPREAD);
    let params = CaseParams {
        case,
        rate_bps,
        rtt_us: micros(rtt_s),
        bdp_packets,
        buffer_packets,
        buffer_bdp: buffer_packets as f64 / bdp_packets,
        queue: if red { "red" } else { "droptail" }.into(),
        loss,
        reverse_divisor,
        reverse_rate_bps,
        flows,
        horizon_us: micros(HORIZON_FACTOR * ideal_s + HORIZON_EXTRA_S),
        emu_seed,
    };
    let scenario = scenario(&params, bottleneck_one_way_s);
    Case { params, scenario }
}

/// The lab scenario of a drawn case.
fn scenario(p: &CaseParams, bottleneck_one_way_s: f64) -> LabScenario {
    let delay = Duration::from_micros(micros(bottleneck_one_way_s));
    let queue = if p.queue == "red" {
        let (lo, hi) = RED_THRESHOLDS;
        let min_th = (p.buffer_packets as f64 * lo).max(1.0);
        QueueKind::Red {
            min_th_packets: min_th,
            max_th_packets: (p.buffer_packets as f64 * hi).max(min_th + 1.0),
            w_q: 0.002,
            max_p: 0.1,
            ecn: false,
        }
    } else {
        QueueKind::DropTail
    };
    let forward = LinkParams {
        rate_bps: p.rate_bps,
        delay,
        buffer_packets: p.buffer_packets,
        queue,
        loss: p.loss.model(),
        jitter: None,
    };
    // ACKs queue on the reverse path in a drop-tail buffer of as many
    // packets as the forward one: what a symmetric router would give them.
    let reverse = LinkParams {
        rate_bps: p.reverse_rate_bps,
        delay,
        buffer_packets: p.buffer_packets,
        queue: QueueKind::DropTail,
        // The issue puts random loss on the forward bottleneck only: the
        // ACK path's losses come from its own queue.
        loss: LossModel::None,
        jitter: None,
    };
    let flows = p
        .flows
        .iter()
        .map(|f| FlowGroup {
            start: Duration::from_micros(f.start_us),
            access_delay: Duration::from_micros(f.access_delay_us),
            strategy: f
                .competitor
                .as_deref()
                .map(|s| s.parse().expect("competitors are ae or da")),
            ..FlowGroup::new(1, Some(f.bytes))
        })
        .collect();
    LabScenario {
        topology: TopologyKind::Dumbbell,
        forward,
        reverse: Some(reverse),
        flows,
        segment_bytes: SEGMENT_BYTES,
        horizon: Duration::from_micros(p.horizon_us),
        ..LabScenario::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicates_after_the_first_shift_every_start_by_under_half_an_rtt() {
        for k in 0..40 {
            let case = draw(3, k);
            assert_eq!(*case.replicate_scenario(0), case.scenario);
            let span = Duration::from_micros(case.params.rtt_us / 2);
            let starts = |r: u32| -> Vec<Duration> {
                let s = case.replicate_scenario(r);
                s.flows.iter().map(|g| g.start).collect()
            };
            let drawn = starts(0);
            for r in 1..4 {
                let shifted = starts(r);
                assert_eq!(
                    shifted,
                    starts(r),
                    "case {k}: replicate {r} is not repeatable"
                );
                assert_ne!(shifted, drawn, "case {k}: replicate {r} moved nothing");
                for (s, d) in shifted.iter().zip(&drawn) {
                    assert!(
                        *s >= *d && *s - *d < span,
                        "case {k} replicate {r}: {d:?} -> {s:?}"
                    );
                }
                // Only the starts move.
                let mut back = case.replicate_scenario(r).into_owned();
                for (g, d) in back.flows.iter_mut().zip(&drawn) {
                    g.start = *d;
                }
                assert_eq!(back, case.scenario);
            }
            assert_ne!(
                starts(1),
                starts(2),
                "case {k}: replicates 1 and 2 share offsets"
            );
        }
    }

    #[test]
    fn a_case_depends_on_seed_and_number_only() {
        for k in [0, 1, 7, 199, 10_000] {
            let a = draw(1, k);
            let b = draw(1, k);
            assert_eq!(a.params, b.params);
            assert_eq!(a.scenario, b.scenario);
            assert_ne!(draw(2, k).params, a.params, "seed {k}");
        }
        assert_ne!(draw(1, 3).params.rate_bps, draw(1, 4).params.rate_bps);
    }

    #[test]
    fn draws_stay_in_range_and_scenarios_validate() {
        let (mut red, mut lossy, mut shared, mut single, mut asym) = (0, 0, 0, 0, 0);
        let n = 2000;
        for k in 0..n {
            let c = draw(5, k);
            let p = &c.params;
            assert!((RATE_BPS.0..=RATE_BPS.1).contains(&(p.rate_bps as f64)));
            assert!(
                (RTT_MS.0..=RTT_MS.1).contains(&p.rtt_ms()),
                "{}",
                p.rtt_ms()
            );
            assert!(p.buffer_packets >= MIN_BUFFER_PACKETS);
            // Within the range up to rounding to whole packets.
            let packets = p.buffer_packets as f64;
            let floor = p.buffer_packets == MIN_BUFFER_PACKETS;
            assert!(packets - 0.5 <= BUFFER_BDP.1 * p.bdp_packets || floor);
            assert!(packets + 0.5 >= BUFFER_BDP.0 * p.bdp_packets || floor);
            assert!(p.loss.mean() <= LOSS.1);
            assert!((1.0..=1000.0).contains(&p.reverse_divisor));
            assert!(!p.flows.is_empty() && p.flows.len() <= MAX_FLOWS as usize);
            assert!(p.test_flows() >= 1);
            assert!(p.competitors() <= MAX_COMPETITORS as usize);
            assert_eq!(p.flows[0].start_us, 0);
            for f in &p.flows {
                assert!((SIZE_BYTES.0..=SIZE_BYTES.1).contains(&(f.bytes as f64)));
                let spread = f.rtt_us as f64 / p.rtt_us as f64;
                assert!((0.74..=1.26).contains(&spread), "{spread}");
                assert!(f.start_us as f64 <= (3.0 * p.rtt_ms() / 1e3 + 3.0) * 1e6 + 1.0);
            }
            c.scenario.validate().unwrap();
            assert_eq!(c.scenario.forward.loss, p.loss.model());
            red += usize::from(p.queue == "red");
            lossy += usize::from(p.loss != LossDraw::None);
            shared += usize::from(p.competitors() > 0);
            single += usize::from(p.flows.len() == 1);
            asym += usize::from(p.reverse_divisor > 1.0);
        }
        let share = |x: usize| x as f64 / n as f64;
        assert!((0.2..0.3).contains(&share(red)), "{red}");
        assert!((0.55..0.65).contains(&share(lossy)), "{lossy}");
        assert!((0.25..0.35).contains(&share(shared)), "{shared}");
        assert!((0.3..0.4).contains(&share(single)), "{single}");
        assert!((0.55..0.65).contains(&share(asym)), "{asym}");
    }
}
