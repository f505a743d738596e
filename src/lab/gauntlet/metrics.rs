//! What a gauntlet run measures and how strategies are judged against AE.
//!
//! The "test flows" of a case are the flows that run the judged strategy;
//! competitors pinned to `ae` or `da` are not judged, only shared with.
//!
//! Completion is the *span of the test flows*: from the earliest test
//! flow's start to the last test flow's final ACK, with an unfinished
//! flow counted as finishing at the horizon. A mean of per-flow times
//! would reward unfairness (serving the short flows first lowers a mean,
//! as shortest-job-first does), and dropping unfinished flows would
//! reward starving one; the span can only grow when any one flow is
//! slowed, so neither helps.

use super::draw::CaseParams;
use crate::emu::RunResult;
use crate::lab::scenario::FlowRole;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One flow of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowOutcome {
    /// The strategy it ran.
    pub strategy: String,
    /// It is a test flow (runs the judged strategy).
    pub test: bool,
    /// It delivered every byte, intact, before the horizon.
    pub finished: bool,
    /// When the ACK of its last byte reached its sender, seconds from the
    /// start of the run; `None` if it never did.
    pub finish_s: Option<f64>,
    /// Payload bytes its receiver read.
    pub delivered_bytes: u64,
    /// Delivered bits over the time from its start to its finish (or the
    /// end of the run), bits per second.
    pub goodput_bps: f64,
    /// Data segments sent, retransmissions included.
    pub data_packets: u64,
    /// Pure ACKs its receiver sent.
    pub ack_packets: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
}

/// The judged figures of one (case, strategy) run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Earliest test-flow start to last test-flow finish, seconds; an
    /// unfinished test flow finishes at the horizon.
    pub completion_s: f64,
    /// Test flows that did not finish.
    pub unfinished: u32,
    /// Pure ACKs of the test flows.
    pub ack_packets: u64,
    /// Data segments of the test flows.
    pub data_packets: u64,
    /// Retransmissions of the test flows.
    pub retransmissions: u64,
    /// RTOs of the test flows.
    pub rtos: u64,
    /// On shared paths, the test flows' goodput over all flows' goodput.
    pub share: Option<f64>,
    /// Packets the forward bottleneck's queue dropped.
    pub queue_drops: u64,
    /// Packets the forward bottleneck's random loss took.
    pub random_losses: u64,
    /// Simulated time the run covered, seconds.
    pub simulated_s: f64,
    /// Every flow, in the case's order.
    pub flows: Vec<FlowOutcome>,
}

/// The figures of a run of `p` whose flows had `roles`.
pub fn outcome(p: &CaseParams, roles: &[FlowRole], r: &RunResult) -> Outcome {
    let end_s = r.elapsed.as_secs_f64();
    let horizon_s = p.horizon_us as f64 / 1e6;
    let flows: Vec<FlowOutcome> = r
        .flows
        .iter()
        .zip(roles)
        .zip(&p.flows)
        .map(|((f, role), d)| {
            let finished = f.finished && f.delivered_all && f.content_ok;
            let finish_s = f
                .last_ack_at
                .filter(|_| finished)
                .map(|t| t.since_epoch().as_secs_f64());
            let start_s = d.start_us as f64 / 1e6;
            let alive_s = finish_s.unwrap_or(end_s) - start_s;
            let delivered_bytes = f.measured_bytes;
            FlowOutcome {
                strategy: role.strategy.name(),
                test: d.competitor.is_none(),
                finished,
                finish_s,
                delivered_bytes,
                goodput_bps: if alive_s > 0.0 {
                    delivered_bytes as f64 * 8.0 / alive_s
                } else {
                    0.0
                },
                data_packets: f.data_packets,
                ack_packets: f.ack_packets,
                retransmissions: f.retransmissions,
                rtos: f.timeouts,
            }
        })
        .collect();
    let first_start_s = p
        .flows
        .iter()
        .filter(|f| f.competitor.is_none())
        .map(|f| f.start_us as f64 / 1e6)
        .fold(f64::INFINITY, f64::min);
    let tests = || flows.iter().filter(|f| f.test);
    let last_finish_s = tests()
        .map(|f| f.finish_s.unwrap_or(horizon_s))
        .fold(0.0, f64::max);
    let sum = |get: fn(&FlowOutcome) -> u64| tests().map(get).sum::<u64>();
    let all_goodput: f64 = flows.iter().map(|f| f.goodput_bps).sum();
    let test_goodput: f64 = tests().map(|f| f.goodput_bps).sum();
    let shared = p.competitors() > 0;
    Outcome {
        completion_s: (last_finish_s - first_start_s).max(0.0),
        unfinished: tests().filter(|f| !f.finished).count() as u32,
        ack_packets: sum(|f| f.ack_packets),
        data_packets: sum(|f| f.data_packets),
        retransmissions: sum(|f| f.retransmissions),
        rtos: sum(|f| f.rtos),
        share: (shared && all_goodput > 0.0).then(|| test_goodput / all_goodput),
        queue_drops: r.links.first().map_or(0, |l| l.drops),
        random_losses: r.links.first().map_or(0, |l| l.lost),
        simulated_s: end_s,
        flows,
    }
}

/// One (case, strategy, replicate) record of a gauntlet file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GauntletRecord {
    /// The case number.
    pub case: u64,
    /// The judged strategy.
    pub strategy: String,
    /// Which run of the (case, strategy) this is (`--replicates`); 0, the
    /// case's own emulator seed, is absent from JSON.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicate: u32,
    /// The case's path and flows.
    pub params: CaseParams,
    /// What happened.
    pub outcome: Outcome,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What one (case, strategy) is judged on: the mean over its replicates.
/// One draw of random loss or RED can move a completion by a factor of
/// three on a lossy path, so a verdict on one run says more about the
/// draw than about the strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicateMean<'a> {
    /// Its lowest-numbered replicate (replicate 0 in a whole file): the
    /// case's parameters, and the run that stands for all of them where
    /// one run must (replaying, listing flows).
    pub first: &'a GauntletRecord,
    /// How many replicates the means are over.
    pub replicates: u32,
    /// Mean completion, seconds; each run counts an unfinished test flow
    /// as finishing at the horizon, so a stall weighs in the mean too.
    pub completion_s: f64,
    /// Sample variance of the completion over the replicates, seconds
    /// squared (zero with one replicate, where nothing says how far the
    /// draw moves it).
    pub completion_var: f64,
    /// On shared paths, the mean over the replicates of when the path's
    /// last flow, competitors included, finished (seconds from the start
    /// of the run, an unfinished flow at the horizon); `None` on other
    /// paths or without per-flow figures.
    pub all_flows_end_s: Option<f64>,
    /// Mean pure ACKs of the test flows.
    pub ack_packets: f64,
    /// Mean RTOs of the test flows; kept fractional, so one RTO in five
    /// runs is 0.2 and not rounded away.
    pub rtos: f64,
    /// Mean retransmissions of the test flows.
    pub retransmissions: f64,
    /// Replicates with at least one RTO: all of them on a path whose
    /// timeouts are systematic, some on one where the draw decides.
    pub runs_with_rto: u32,
    /// Mean share over the replicates that have one (shared paths).
    pub share: Option<f64>,
    /// The most test flows any one replicate left unfinished: a stall in
    /// one draw is worth flagging even when the mean completion hides it.
    pub unfinished: u32,
}

/// One [`ReplicateMean`] per (case, strategy) of `records`, in the order
/// of first appearance. This is the only place replicates are averaged:
/// [`relatives`], and through it [`summarise`], the CLI table, the page
/// and the other seeds' figures all judge these. With one replicate per
/// (case, strategy) every mean is that run's figure exactly (a sum of one
/// float divided by 1), so a single-replicate file judges as it always
/// did.
pub fn replicate_means(records: &[GauntletRecord]) -> Vec<ReplicateMean<'_>> {
    let mut order: Vec<(u64, &str)> = Vec::new();
    let mut groups: BTreeMap<(u64, &str), Vec<&GauntletRecord>> = BTreeMap::new();
    for r in records {
        let key = (r.case, r.strategy.as_str());
        let group = groups.entry(key).or_default();
        if group.is_empty() {
            order.push(key);
        }
        group.push(r);
    }
    order
        .into_iter()
        .filter_map(|key| {
            let group = groups.get(&key)?;
            let first = *group.iter().min_by_key(|r| r.replicate)?;
            let n = group.len() as f64;
            let mean = |get: &dyn Fn(&Outcome) -> f64| {
                group.iter().map(|r| get(&r.outcome)).sum::<f64>() / n
            };
            let shares: Vec<f64> = group.iter().filter_map(|r| r.outcome.share).collect();
            let completion_s = mean(&|o| o.completion_s);
            let horizon_s = first.params.horizon_us as f64 / 1e6;
            let all_flows_end_s = (first.params.competitors() > 0
                && group.iter().all(|r| !r.outcome.flows.is_empty()))
            .then(|| {
                mean(&|o| {
                    o.flows
                        .iter()
                        .map(|f| f.finish_s.unwrap_or(horizon_s))
                        .fold(0.0, f64::max)
                })
            });
            let completion_var = if group.len() > 1 {
                group
                    .iter()
                    .map(|r| (r.outcome.completion_s - completion_s).powi(2))
                    .sum::<f64>()
                    / (n - 1.0)
            } else {
                0.0
            };
            Some(ReplicateMean {
                first,
                replicates: group.len() as u32,
                completion_s,
                completion_var,
                all_flows_end_s,
                ack_packets: mean(&|o| o.ack_packets as f64),
                rtos: mean(&|o| o.rtos as f64),
                retransmissions: mean(&|o| o.retransmissions as f64),
                runs_with_rto: group.iter().filter(|r| r.outcome.rtos > 0).count() as u32,
                share: (!shares.is_empty())
                    .then(|| shares.iter().sum::<f64>() / shares.len() as f64),
                unfinished: group
                    .iter()
                    .map(|r| r.outcome.unfinished)
                    .max()
                    .unwrap_or(0),
            })
        })
        .collect()
}

/// A count that may be a mean over replicates, as text: whole numbers as
/// integers (all a single replicate can give, so such output reads as it
/// always did), others to at most two decimals.
pub fn count_text(x: f64) -> String {
    if x.fract() == 0.0 {
        return format!("{x:.0}");
    }
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The row name of [`noise_floor`]'s summary.
pub const NOISE_FLOOR: &str = "ae (replicate 1 / 0)";

/// AE against itself: replicate 1 of every case judged against replicate
/// 0, as if it were another strategy. How far these ratios stray from 1
/// is what a single draw of the emulator's randomness does to a ratio
/// when nothing differs; `None` without a second replicate.
pub fn noise_floor(records: &[GauntletRecord]) -> Option<StrategySummary> {
    let mut paired: Vec<GauntletRecord> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.strategy == "ae" && r.replicate <= 1)
    {
        let mut r = r.clone();
        if r.replicate == 1 {
            r.strategy = NOISE_FLOOR.into();
        }
        r.replicate = 0;
        paired.push(r);
    }
    if !paired.iter().any(|r| r.strategy == NOISE_FLOOR) {
        return None;
    }
    summarise(&paired, &["ae".into(), NOISE_FLOOR.into()])
        .into_iter()
        .next()
}

/// A strategy's figures on one case next to AE's on the same case.
#[derive(Debug, Clone, PartialEq)]
pub struct Relative {
    /// The case.
    pub case: u64,
    /// The judged strategy.
    pub strategy: String,
    /// Completion over AE's.
    pub completion_ratio: f64,
    /// Standard error of `completion_ratio` from the spread of both
    /// sides' replicates (see [`ratio_standard_error`]); zero with one
    /// replicate.
    pub completion_ratio_se: f64,
    /// On shared paths, when the last of all the path's flows finished
    /// over the same with AE in the test flows' place: a completion ratio
    /// above 1 beside a path ratio near 1 means the same work ended at
    /// the same time, the competitors first.
    pub path_ratio: Option<f64>,
    /// Test-flow ACKs over AE's (`None` if AE sent none).
    pub ack_ratio: Option<f64>,
    /// Share over AE's share in the same place (shared paths only).
    pub share_ratio: Option<f64>,
    /// RTOs of the test flows, mean over replicates.
    pub rtos: f64,
    /// AE's RTOs on the same case, mean over replicates.
    pub ae_rtos: f64,
    /// The case is a loss-free single-flow path with >= 0.5 BDP buffer.
    pub rto_free_path: bool,
    /// The case has competitors.
    pub shared: bool,
    /// Test flows that did not finish (the most in any one replicate).
    pub unfinished: u32,
}

/// Every (case, strategy) beside AE on the same case, each judged on the
/// mean over its replicates ([`replicate_means`]); cases without an AE
/// record are left out (a well-formed file has one).
pub fn relatives(records: &[GauntletRecord]) -> Vec<Relative> {
    let means = replicate_means(records);
    let ae: BTreeMap<u64, &ReplicateMean> = means
        .iter()
        .filter(|m| m.first.strategy == "ae")
        .map(|m| (m.first.case, m))
        .collect();
    means
        .iter()
        .filter_map(|m| {
            let b = ae.get(&m.first.case)?;
            let r = m.first;
            Some(Relative {
                case: r.case,
                strategy: r.strategy.clone(),
                completion_ratio: ratio(m.completion_s, b.completion_s).unwrap_or(1.0),
                completion_ratio_se: ratio_standard_error(m, b),
                path_ratio: m
                    .all_flows_end_s
                    .zip(b.all_flows_end_s)
                    .and_then(|(x, base)| ratio(x, base)),
                ack_ratio: ratio(m.ack_packets, b.ack_packets),
                share_ratio: m.share.zip(b.share).and_then(|(s, a)| ratio(s, a)),
                rtos: m.rtos,
                ae_rtos: b.rtos,
                rto_free_path: r.params.rto_free_path(),
                shared: r.params.competitors() > 0,
                unfinished: m.unfinished,
            })
        })
        .collect()
}

fn ratio(x: f64, base: f64) -> Option<f64> {
    (base > 0.0).then(|| x / base)
}

/// Standard error of the ratio of two replicate means, `m` over `base`,
/// by the delta method: the relative errors of the two means add in
/// quadrature. The two sides ran on the same emulator seeds, but their
/// runs part ways at the first packet that differs, so they are taken as
/// independent (which overstates the error if anything). Zero when
/// either side has a single replicate or a zero mean.
pub fn ratio_standard_error(m: &ReplicateMean, base: &ReplicateMean) -> f64 {
    if m.replicates < 2 || base.replicates < 2 || m.completion_s <= 0.0 || base.completion_s <= 0.0
    {
        return 0.0;
    }
    let rel_var =
        |x: &ReplicateMean| x.completion_var / f64::from(x.replicates) / x.completion_s.powi(2);
    m.completion_s / base.completion_s * (rel_var(m) + rel_var(base)).sqrt()
}

/// How many standard errors above [`WITHIN_RATIO`] a completion ratio
/// must lie to be [`clearly_above`] it.
pub const CLEARLY_STANDARD_ERRORS: f64 = 2.0;

/// Whether a case's completion ratio exceeds [`WITHIN_RATIO`] by more than
/// [`CLEARLY_STANDARD_ERRORS`] standard errors: slower than AE beyond what
/// the replicates' spread explains. On a path without randomness every
/// replicate is the same run, the error is zero, and any ratio above
/// 1.05 counts; on a lossy path a ratio of 1.3 from five widely spread
/// draws may not.
pub fn clearly_above(r: &Relative) -> bool {
    r.completion_ratio - CLEARLY_STANDARD_ERRORS * r.completion_ratio_se > WITHIN_RATIO
}

/// Nearest-rank percentile `q` (0..=1) of `xs`; `None` when empty.
pub fn percentile(xs: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (n > 0).then(|| v[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
}

/// A completion ratio to AE at or below this counts as keeping up with
/// AE (the gauntlet's "within 1.05x" target).
pub const WITHIN_RATIO: f64 = 1.05;

/// A strategy's figures over all cases.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategySummary {
    /// The strategy.
    pub strategy: String,
    /// Cases judged.
    pub cases: usize,
    /// Completion ratio: median, 90th percentile, largest.
    pub completion: [f64; 3],
    /// Fraction of cases with a completion ratio <= 1.05.
    pub within_105: f64,
    /// Fraction of cases with a completion ratio > 1.25.
    pub above_125: f64,
    /// Cases whose completion ratio is [`clearly_above`] 1.05.
    pub clearly_above_105: usize,
    /// ACK ratio: median, 90th percentile.
    pub acks: [f64; 2],
    /// Loss-free single-flow paths with >= 0.5 BDP buffer.
    pub rto_free_paths: usize,
    /// This strategy's RTOs on them (per path the mean over replicates).
    pub rtos_on_free_paths: f64,
    /// AE's RTOs on them (per path the mean over replicates).
    pub ae_rtos_on_free_paths: f64,
    /// Shared paths.
    pub shared_paths: usize,
    /// Shared paths where this strategy had more RTOs than AE (means
    /// over replicates compared).
    pub more_rtos_than_ae_shared: usize,
    /// Share ratio on shared paths: 10th percentile, median, 90th
    /// percentile, farthest from 1 (either side, by factor).
    pub share: Option<[f64; 4]>,
    /// Fraction of shared paths with a share ratio in [0.9, 1.1].
    pub share_within: Option<f64>,
    /// Cases where a test flow did not finish.
    pub unfinished_cases: usize,
}

/// Per strategy, in the order of `strategies` (AE itself left out).
pub fn summarise(records: &[GauntletRecord], strategies: &[String]) -> Vec<StrategySummary> {
    let rel = relatives(records);
    strategies
        .iter()
        .filter(|s| s.as_str() != "ae")
        .map(|s| {
            let mine: Vec<&Relative> = rel.iter().filter(|r| &r.strategy == s).collect();
            summary(s, &mine)
        })
        .collect()
}

fn summary(strategy: &str, rel: &[&Relative]) -> StrategySummary {
    let n = rel.len();
    let completion: Vec<f64> = rel.iter().map(|r| r.completion_ratio).collect();
    let acks: Vec<f64> = rel.iter().filter_map(|r| r.ack_ratio).collect();
    let frac = |k: usize, of: usize| if of == 0 { 0.0 } else { k as f64 / of as f64 };
    let free: Vec<&&Relative> = rel.iter().filter(|r| r.rto_free_path).collect();
    let shared: Vec<&&Relative> = rel.iter().filter(|r| r.shared).collect();
    let shares: Vec<f64> = shared.iter().filter_map(|r| r.share_ratio).collect();
    let p = |xs: &[f64], q| percentile(xs, q).unwrap_or(f64::NAN);
    let worst_share = shares
        .iter()
        .copied()
        .max_by(|a, b| a.ln().abs().total_cmp(&b.ln().abs()));
    StrategySummary {
        strategy: strategy.to_string(),
        cases: n,
        completion: [
            p(&completion, 0.5),
            p(&completion, 0.9),
            p(&completion, 1.0),
        ],
        within_105: frac(completion.iter().filter(|&&c| c <= WITHIN_RATIO).count(), n),
        above_125: frac(completion.iter().filter(|&&c| c > 1.25).count(), n),
        clearly_above_105: rel.iter().filter(|r| clearly_above(r)).count(),
        acks: [p(&acks, 0.5), p(&acks, 0.9)],
        rto_free_paths: free.len(),
        rtos_on_free_paths: free.iter().map(|r| r.rtos).sum(),
        ae_rtos_on_free_paths: free.iter().map(|r| r.ae_rtos).sum(),
        shared_paths: shared.len(),
        more_rtos_than_ae_shared: shared.iter().filter(|r| r.rtos > r.ae_rtos).count(),
        share: worst_share.map(|w| [p(&shares, 0.1), p(&shares, 0.5), p(&shares, 0.9), w]),
        share_within: (!shares.is_empty()).then(|| {
            frac(
                shares.iter().filter(|&&s| (0.9..=1.1).contains(&s)).count(),
                shares.len(),
            )
        }),
        unfinished_cases: rel.iter().filter(|r| r.unfinished > 0).count(),
    }
}

/// The summary as a terminal table.
pub fn table(summaries: &[StrategySummary]) -> String {
    // The name column fits the longest name, and is 12 wide when every
    // name fits (all strategy names do; the noise floor's row does not).
    let w = summaries
        .iter()
        .map(|s| s.strategy.len())
        .fold(12, usize::max);
    let mut out = format!(
        "{:<w$} {:>5} | {:>6} {:>6} {:>7} {:>6} {:>6} | {:>6} {:>6} | {:>9} | {:>7} {:>6} {:>6} {:>6} | {:>5}\n",
        "strategy", "cases", "ct p50", "p90", "worst", "<=1.05", ">1.25", "ack50", "ack90",
        "rto:free", "shr p10", "p50", "worst", "in.9-1", "unfin"
    );
    let f = |x: f64| {
        if x.is_finite() {
            format!("{x:.3}")
        } else {
            "-".into()
        }
    };
    for s in summaries {
        let share = s
            .share
            .map_or(["-".to_string(), "-".into(), "-".into()], |v| {
                [f(v[0]), f(v[1]), f(v[3])]
            });
        out.push_str(&format!(
            "{:<w$} {:>5} | {:>6} {:>6} {:>7} {:>5.0}% {:>5.0}% | {:>6} {:>6} | {:>9} | {:>7} {:>6} {:>6} {:>6} | {:>5}\n",
            s.strategy,
            s.cases,
            f(s.completion[0]),
            f(s.completion[1]),
            f(s.completion[2]),
            s.within_105 * 100.0,
            s.above_125 * 100.0,
            f(s.acks[0]),
            f(s.acks[1]),
            format!(
                "{}/{}ae@{}",
                count_text(s.rtos_on_free_paths),
                count_text(s.ae_rtos_on_free_paths),
                s.rto_free_paths
            ),
            share[0],
            share[1],
            share[2],
            s.share_within
                .map_or("-".to_string(), |w| format!("{:.0}%", w * 100.0)),
            s.unfinished_cases,
        ));
    }
    out.push_str(
        "ct: completion / ae's; ack: ACKs / ae's; rto: RTOs / ae's RTOs @ loss-free single-flow paths \
         with >= 0.5 BDP; shr: share / ae's share on shared paths; unfin: cases with an unfinished flow\n",
    );
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::lab::gauntlet::draw::{draw, FlowDraw, LossDraw};

    /// A record of `case` under `strategy` with the given judged figures;
    /// the path is case 0 of seed 1 made a loss-free single-flow path with
    /// a 1 BDP buffer, shared with one AE competitor when `share` is set.
    pub(crate) fn record(
        case: u64,
        strategy: &str,
        completion_s: f64,
        ack_packets: u64,
        rtos: u64,
        share: Option<f64>,
    ) -> GauntletRecord {
        let mut params = draw(1, 0).params;
        params.case = case;
        params.loss = LossDraw::None;
        params.buffer_bdp = 1.0;
        params.flows.truncate(1);
        params.flows[0].competitor = None;
        if share.is_some() {
            params.flows.push(FlowDraw {
                competitor: Some("ae".into()),
                ..params.flows[0].clone()
            });
        }
        GauntletRecord {
            case,
            strategy: strategy.into(),
            replicate: 0,
            params,
            outcome: Outcome {
                completion_s,
                unfinished: 0,
                ack_packets,
                data_packets: 1000,
                retransmissions: rtos,
                rtos,
                share,
                queue_drops: 0,
                random_losses: 0,
                simulated_s: completion_s,
                flows: Vec::new(),
            },
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(percentile(&xs, 0.5), Some(3.0));
        assert_eq!(percentile(&xs, 0.9), Some(5.0));
        assert_eq!(percentile(&xs, 0.1), Some(1.0));
        assert_eq!(percentile(&xs, 1.0), Some(5.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn a_ratio_is_clearly_above_only_beyond_two_standard_errors_of_the_draws() {
        // Case 0: every replicate the same run, 11 s against AE's 10 s.
        // Case 1: the same means (1.1x), the strategy's draws 6 and 16 s
        // and AE's 8 and 12 s. Case 2: the means 1.2x with a small spread.
        let mut records = Vec::new();
        for (case, mine, ae) in [
            (0, [11.0, 11.0], [10.0, 10.0]),
            (1, [6.0, 16.0], [8.0, 12.0]),
            (2, [11.9, 12.1], [9.9, 10.1]),
        ] {
            for r in 0..2 {
                for (strategy, c) in [("4w", mine[r]), ("ae", ae[r])] {
                    records.push(GauntletRecord {
                        replicate: r as u32,
                        ..record(case, strategy, c, 100, 0, None)
                    });
                }
            }
        }
        let rel: Vec<Relative> = relatives(&records)
            .into_iter()
            .filter(|r| r.strategy == "4w")
            .collect();
        let se: Vec<f64> = rel.iter().map(|r| r.completion_ratio_se).collect();
        assert_eq!(se[0], 0.0);
        // Case 1: variances 50 and 8 over two runs, means 11 and 10:
        // 1.1 * sqrt(50 / 2 / 121 + 8 / 2 / 100).
        let expected = 1.1 * (25.0_f64 / 121.0 + 0.04).sqrt();
        assert!((se[1] - expected).abs() < 1e-12, "{se:?}");
        assert!(se[2] > 0.0 && se[2] < 0.02, "{se:?}");
        let clearly: Vec<bool> = rel.iter().map(clearly_above).collect();
        assert_eq!(clearly, [true, false, true]);
        let summary = summarise(&records, &["ae".into(), "4w".into()]);
        assert_eq!(summary[0].clearly_above_105, 2);
        assert_eq!(summary[0].within_105, 0.0);
        // A single replicate has no spread: every ratio above 1.05 counts.
        let single: Vec<GauntletRecord> = records
            .iter()
            .filter(|r| r.replicate == 0)
            .cloned()
            .collect();
        let summary = summarise(&single, &["ae".into(), "4w".into()]);
        assert_eq!(summary[0].clearly_above_105, 2);
    }

    #[test]
    fn on_a_shared_path_the_last_of_all_flows_is_compared_too() {
        // The test flow ends at 12 s against AE's 10 s in its place, but the
        // competitor ends at 12 s against 15 s: the path's last flow ends
        // at 12 s against 15 s. An unfinished competitor counts at the
        // horizon.
        let flow = |test: bool, finish_s: Option<f64>| FlowOutcome {
            strategy: if test { "4w" } else { "ae" }.into(),
            test,
            finished: finish_s.is_some(),
            finish_s,
            delivered_bytes: 1,
            goodput_bps: 1.0,
            data_packets: 1,
            ack_packets: 1,
            retransmissions: 0,
            rtos: 0,
        };
        let with_flows = |strategy: &str, mine: f64, theirs: Option<f64>| {
            let mut r = record(0, strategy, mine, 100, 0, Some(0.5));
            r.outcome.flows = vec![flow(true, Some(mine)), flow(false, theirs)];
            r
        };
        let records = [
            with_flows("4w", 12.0, Some(12.0)),
            with_flows("ae", 10.0, Some(15.0)),
        ];
        let rel = relatives(&records);
        let mine = rel.iter().find(|r| r.strategy == "4w").unwrap();
        assert!((mine.completion_ratio - 1.2).abs() < 1e-12);
        assert!((mine.path_ratio.unwrap() - 0.8).abs() < 1e-12);
        let horizon_s = records[0].params.horizon_us as f64 / 1e6;
        let records = [
            with_flows("4w", 12.0, None),
            with_flows("ae", 10.0, Some(15.0)),
        ];
        let rel = relatives(&records);
        let mine = rel.iter().find(|r| r.strategy == "4w").unwrap();
        assert!((mine.path_ratio.unwrap() - horizon_s / 15.0).abs() < 1e-12);
        // Not on a path without competitors, nor without per-flow figures.
        let alone = [
            record(0, "4w", 12.0, 100, 0, None),
            record(0, "ae", 10.0, 100, 0, None),
        ];
        assert!(relatives(&alone).iter().all(|r| r.path_ratio.is_none()));
        let bare = [
            record(0, "4w", 12.0, 100, 0, Some(0.5)),
            record(0, "ae", 10.0, 100, 0, Some(0.5)),
        ];
        assert!(relatives(&bare).iter().all(|r| r.path_ratio.is_none()));
    }

    #[test]
    fn replicates_are_judged_on_their_mean_and_ae_against_itself_is_the_floor() {
        let rep =
            |r: u32, strategy: &str, completion_s: f64, rtos: u64, share: f64| GauntletRecord {
                replicate: r,
                ..record(
                    0,
                    strategy,
                    completion_s,
                    100 + u64::from(r),
                    rtos,
                    Some(share),
                )
            };
        // Out of replicate order, as nothing guarantees it to the mean.
        let records = vec![
            rep(1, "ae", 14.0, 1, 0.5),
            rep(0, "ae", 10.0, 0, 0.5),
            rep(2, "ae", 12.0, 0, 0.5),
            rep(0, "4w", 18.0, 0, 0.4),
            rep(1, "4w", 12.0, 0, 0.5),
            rep(2, "4w", 6.0, 2, 0.6),
        ];
        let means = replicate_means(&records);
        assert_eq!(means.len(), 2);
        let (ae, w4) = (&means[0], &means[1]);
        assert_eq!((ae.first.strategy.as_str(), ae.first.replicate), ("ae", 0));
        assert_eq!(ae.replicates, 3);
        assert_eq!(ae.completion_s, 12.0);
        assert_eq!(ae.ack_packets, 101.0);
        assert!((ae.rtos - 1.0 / 3.0).abs() < 1e-12, "{}", ae.rtos);
        assert_eq!(ae.runs_with_rto, 1);
        assert_eq!(ae.share, Some(0.5));
        assert_eq!(w4.completion_s, 12.0);
        assert!((w4.rtos - 2.0 / 3.0).abs() < 1e-12);
        assert!((w4.share.unwrap() - 0.5).abs() < 1e-12);
        // The single draw said 1.8x; the mean says the same as AE, and
        // "more RTOs than ae" compares the means (2/3 against 1/3).
        let rel = relatives(&records);
        assert_eq!(rel.len(), 2, "AE is beside itself too");
        let w4 = &rel[1];
        assert_eq!(w4.strategy, "4w");
        assert_eq!(w4.completion_ratio, 1.0);
        assert_eq!(w4.ack_ratio, Some(1.0));
        assert!(w4.rtos > w4.ae_rtos);
        // One record per (case, strategy) is judged on that record alone.
        let one = replicate_means(&records[1..2]);
        assert_eq!(one[0].completion_s, 10.0);
        assert_eq!((one[0].rtos, one[0].replicates), (0.0, 1));
        // AE's replicate 1 (14 s) over its replicate 0 (10 s).
        let floor = noise_floor(&records).expect("two AE replicates");
        assert_eq!((floor.strategy.as_str(), floor.cases), (NOISE_FLOOR, 1));
        assert!((floor.completion[0] - 1.4).abs() < 1e-9);
        assert!(noise_floor(&records[1..]).is_none());
    }

    #[test]
    fn mean_counts_read_as_integers_when_whole() {
        assert_eq!(count_text(0.0), "0");
        assert_eq!(count_text(12.0), "12");
        assert_eq!(count_text(0.2 + 0.4), "0.6");
        assert_eq!(count_text(1.0 / 3.0), "0.33");
        assert_eq!(count_text(2.5), "2.5");
    }

    #[test]
    fn strategies_are_judged_against_ae_on_the_same_case() {
        let mut records = Vec::new();
        // Four unshared cases: AE takes 10 s and sends 1000 ACKs.
        for (k, (ct, acks, rtos)) in [
            (10.0, 200, 0),
            (10.4, 250, 0),
            (12.0, 100, 1),
            (20.0, 300, 0),
        ]
        .into_iter()
        .enumerate()
        {
            records.push(record(k as u64, "ae", 10.0, 1000, 0, None));
            records.push(record(k as u64, "4w", ct, acks, rtos, None));
        }
        // Two shared cases: AE holds half, 4w 0.45 and 0.6 of the link.
        for (k, share, rtos) in [(4, 0.45, 2), (5, 0.6, 0)] {
            records.push(record(k, "ae", 10.0, 1000, 1, Some(0.5)));
            records.push(record(k, "4w", 10.0, 200, rtos, Some(share)));
        }
        let s = &summarise(&records, &["ae".into(), "4w".into()])[0];
        assert_eq!(s.strategy, "4w");
        assert_eq!(s.cases, 6);
        assert_eq!(s.completion, [1.0, 2.0, 2.0]);
        // 1.0, 1.04, 1.0, 1.0 within; 1.2 and 2.0 not; only 2.0 above 1.25.
        assert!((s.within_105 - 4.0 / 6.0).abs() < 1e-12);
        assert!((s.above_125 - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(s.acks, [0.2, 0.3]);
        // Every hand-built unshared case is an RTO-free path.
        assert_eq!((s.rto_free_paths, s.rtos_on_free_paths), (4, 1.0));
        assert_eq!(s.ae_rtos_on_free_paths, 0.0);
        assert_eq!((s.shared_paths, s.more_rtos_than_ae_shared), (2, 1));
        let share = s.share.unwrap();
        assert!((share[0] - 0.9).abs() < 1e-12 && (share[3] - 1.2).abs() < 1e-12);
        assert_eq!(s.share_within, Some(0.5));
        // A case without an AE record is not judged.
        records.retain(|r| !(r.case == 3 && r.strategy == "ae"));
        assert_eq!(summarise(&records, &["ae".into(), "4w".into()])[0].cases, 5);
    }

    #[test]
    fn completion_is_the_test_flows_span_and_counts_stalls_at_the_horizon() {
        use crate::lab::Strategy;
        // Run a real small case: seed 1 case 3 is one 0.7 MB flow at
        // 300 Mbit/s; make it two test flows and a competitor.
        let case = draw(1, 3);
        let roles = case.scenario.roles(Strategy::AE);
        let r = crate::emu::run(&case.scenario.to_emu(Strategy::AE, 1)).unwrap();
        let o = outcome(&case.params, &roles, &r);
        assert_eq!(o.unfinished, 0);
        let f = &o.flows[0];
        assert!(f.finished && f.test);
        let start = case.params.flows[0].start_us as f64 / 1e6;
        assert!((o.completion_s - (f.finish_s.unwrap() - start)).abs() < 1e-9);
        assert_eq!(o.share, None, "no competitor, no share");
        assert_eq!(o.ack_packets, f.ack_packets);

        // The same result read as if the flow had not finished: it counts
        // as finishing at the horizon, never as missing.
        let mut stalled = r.clone();
        stalled.flows[0].finished = false;
        let o = outcome(&case.params, &roles, &stalled);
        assert_eq!(o.unfinished, 1);
        let horizon = case.params.horizon_us as f64 / 1e6;
        assert!((o.completion_s - (horizon - start)).abs() < 1e-9);
    }
}
