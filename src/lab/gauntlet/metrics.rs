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
use super::harm::HarmSummary;
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
    /// Each replicate's completion, seconds, with its replicate number, in
    /// replicate order: what pairs the strategy's runs with AE's on the
    /// same emulator seeds ([`ratio_standard_error`]).
    pub completions: Vec<(u32, f64)>,
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
    /// On shared paths, the mean over the replicates of the competitors'
    /// summed goodput, bit/s; `None` on other paths or without per-flow
    /// figures.
    pub competitor_goodput_bps: Option<f64>,
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
            let shared_with_flows =
                first.params.competitors() > 0 && group.iter().all(|r| !r.outcome.flows.is_empty());
            let all_flows_end_s = shared_with_flows.then(|| {
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
            let mut completions: Vec<(u32, f64)> = group
                .iter()
                .map(|r| (r.replicate, r.outcome.completion_s))
                .collect();
            completions.sort_by_key(|&(replicate, _)| replicate);
            Some(ReplicateMean {
                first,
                replicates: group.len() as u32,
                completion_s,
                completion_var,
                completions,
                all_flows_end_s,
                ack_packets: mean(&|o| o.ack_packets as f64),
                rtos: mean(&|o| o.rtos as f64),
                retransmissions: mean(&|o| o.retransmissions as f64),
                runs_with_rto: group.iter().filter(|r| r.outcome.rtos > 0).count() as u32,
                share: (!shares.is_empty())
                    .then(|| shares.iter().sum::<f64>() / shares.len() as f64),
                competitor_goodput_bps: shared_with_flows.then(|| {
                    mean(&|o| {
                        o.flows
                            .iter()
                            .filter(|f| !f.test)
                            .map(|f| f.goodput_bps)
                            .sum()
                    })
                }),
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
    noise_floor_pooled(&[records])
}

/// [`noise_floor`] over several files (one per seed), pooled as
/// [`summarise_pooled`] pools.
pub fn noise_floor_pooled(files: &[&[GauntletRecord]]) -> Option<StrategySummary> {
    let paired: Vec<Vec<GauntletRecord>> = files
        .iter()
        .map(|records| {
            records
                .iter()
                .filter(|r| r.strategy == "ae" && r.replicate <= 1)
                .map(|r| {
                    let mut r = r.clone();
                    if r.replicate == 1 {
                        r.strategy = NOISE_FLOOR.into();
                    }
                    r.replicate = 0;
                    r
                })
                .collect()
        })
        .collect();
    if !paired.iter().flatten().any(|r| r.strategy == NOISE_FLOOR) {
        return None;
    }
    let sets: Vec<&[GauntletRecord]> = paired.iter().map(Vec::as_slice).collect();
    summarise_pooled(&sets, &["ae".into(), NOISE_FLOOR.into()])
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
    /// The competitors' goodput over theirs with AE in the test flows'
    /// place (shared paths only): what the strategy costs the flows
    /// beside it, where the share also counts what it gains from
    /// capacity AE leaves unused (a reverse link its ACKs fill).
    pub competitor_ratio: Option<f64>,
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
    relatives_of(&replicate_means(records))
}

/// [`relatives`] from means already taken.
fn relatives_of(means: &[ReplicateMean]) -> Vec<Relative> {
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
                competitor_ratio: m
                    .competitor_goodput_bps
                    .zip(b.competitor_goodput_bps)
                    .and_then(|(x, base)| ratio(x, base)),
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

/// Standard error of the ratio `r` of two replicate means, `m` over
/// `base`, by the delta method.
///
/// When both sides ran the same replicates (the same emulator seeds), the
/// runs come in pairs: the emulator keys each packet's random loss by the
/// packet (common random numbers), so a draw that slows AE's run tends to
/// slow the strategy's run of the same seed, and the ratio varies less than
/// either side. The error then comes from the pairs' residuals
/// `x_i - r * y_i` (the ratio estimator's variance): on the gauntlet's
/// Bernoulli-loss paths (seeds 1-5) its median is 0.23 of what the
/// quadrature below gives, 0.51 on the bursty ones. Otherwise (AE against its own second
/// draw, on other seeds) the two sides are independent and their relative
/// errors add in quadrature. Zero when either side has a single replicate
/// or a zero mean.
pub fn ratio_standard_error(m: &ReplicateMean, base: &ReplicateMean) -> f64 {
    if m.replicates < 2 || base.replicates < 2 || m.completion_s <= 0.0 || base.completion_s <= 0.0
    {
        return 0.0;
    }
    let r = m.completion_s / base.completion_s;
    let paired = m.completions.len() == base.completions.len()
        && m.completions
            .iter()
            .zip(&base.completions)
            .all(|(x, y)| x.0 == y.0);
    if paired {
        let n = m.completions.len() as f64;
        let residuals = m
            .completions
            .iter()
            .zip(&base.completions)
            .map(|(x, y)| (x.1 - r * y.1).powi(2))
            .sum::<f64>();
        return (residuals / (n - 1.0) / n).sqrt() / base.completion_s;
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
    /// What the competitors keep on shared paths (`None` without
    /// per-flow figures): see [`super::harm`].
    pub harm: Option<HarmSummary>,
    /// Cases where a test flow did not finish.
    pub unfinished_cases: usize,
}

/// Per strategy, in the order of `strategies` (AE itself left out).
pub fn summarise(records: &[GauntletRecord], strategies: &[String]) -> Vec<StrategySummary> {
    summarise_pooled(&[records], strategies)
}

/// [`summarise`] over several files, one per seed: every case of every
/// file is judged against AE in its own file, and the judgements are
/// pooled, so 5 seeds of 200 cases give the figures of 1 000 cases.
pub fn summarise_pooled(
    files: &[&[GauntletRecord]],
    strategies: &[String],
) -> Vec<StrategySummary> {
    let rel: Vec<Relative> = files
        .iter()
        .flat_map(|records| relatives(records))
        .collect();
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
        harm: super::harm::summary(rel),
        unfinished_cases: rel.iter().filter(|r| r.unfinished > 0).count(),
    }
}

/// Each case of `records` in detail, as `lab gauntlet --case K` prints it
/// below the table: the path, then per strategy its mean completion
/// against AE's (with the ratio's standard error over the replicates),
/// when the whole path finished against the same with AE in the test
/// flows' place (shared paths), ACKs, RTOs and share beside AE's. What
/// the page's lists give for the cases they name, for any case replayed.
pub fn case_details(records: &[GauntletRecord]) -> String {
    let means = replicate_means(records);
    let rel = relatives_of(&means);
    let mut out = String::new();
    let mut cases: Vec<u64> = means.iter().map(|m| m.first.case).collect();
    cases.sort_unstable();
    cases.dedup();
    for case in cases {
        let mine: Vec<&ReplicateMean> = means.iter().filter(|m| m.first.case == case).collect();
        let Some(ae) = mine.iter().find(|m| m.first.strategy == "ae") else {
            continue;
        };
        out.push_str(&format!(
            "case {case}: {}\n  ae: completion {:.3} s, ACKs {:.0}, RTOs {}{}\n",
            ae.first.params.describe(),
            ae.completion_s,
            ae.ack_packets,
            count_text(ae.rtos),
            ae.share
                .map_or(String::new(), |s| format!(", share {s:.3}")),
        ));
        for m in mine.iter().filter(|m| m.first.strategy != "ae") {
            let Some(r) = rel
                .iter()
                .find(|r| r.case == case && r.strategy == m.first.strategy)
            else {
                continue;
            };
            let mut line = format!(
                "  {}: completion {:.3} s, {:.3} +- {:.3} of ae's{}",
                r.strategy,
                m.completion_s,
                r.completion_ratio,
                r.completion_ratio_se,
                if clearly_above(r) {
                    " (clearly above 1.05)"
                } else {
                    ""
                },
            );
            if let Some(p) = r.path_ratio {
                line.push_str(&format!(", all flows {p:.3}"));
            }
            line.push_str(&format!(
                ", ACKs {}, RTOs {} (ae {})",
                r.ack_ratio.map_or("-".into(), |a| format!("{a:.3}")),
                count_text(r.rtos),
                count_text(r.ae_rtos),
            ));
            if let Some(sh) = r.share_ratio {
                line.push_str(&format!(", share {sh:.3} of ae's"));
            }
            if r.unfinished > 0 {
                line.push_str(&format!(", {} unfinished", r.unfinished));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
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
        "{:<w$} {:>5} | {:>6} {:>6} {:>7} {:>6} {:>4} {:>6} | {:>6} {:>6} | {:>9} | {:>7} {:>6} {:>6} {:>6} {:>7} | {:>5}\n",
        "strategy", "cases", "ct p50", "p90", "worst", "<=1.05", "clr", ">1.25", "ack50", "ack90",
        "rto:free", "shr p10", "p50", "worst", "in.9-1", "cmp p10", "unfin"
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
            "{:<w$} {:>5} | {:>6} {:>6} {:>7} {:>5.0}% {:>4} {:>5.0}% | {:>6} {:>6} | {:>9} | {:>7} {:>6} {:>6} {:>6} {:>7} | {:>5}\n",
            s.strategy,
            s.cases,
            f(s.completion[0]),
            f(s.completion[1]),
            f(s.completion[2]),
            s.within_105 * 100.0,
            // One draw against one has no spread to judge by.
            if s.strategy == NOISE_FLOOR {
                "-".to_string()
            } else {
                s.clearly_above_105.to_string()
            },
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
            s.harm
                .as_ref()
                .map_or("-".to_string(), |h| f(h.competitors[0])),
            s.unfinished_cases,
        ));
    }
    out.push_str(
        "ct: completion / ae's; clr: cases clearly above 1.05x (by more than 2 standard errors of the replicates); \
         ack: ACKs / ae's; rto: RTOs / ae's RTOs @ loss-free single-flow paths \
         with >= 0.5 BDP; shr: share / ae's share on shared paths; cmp: competitors' goodput / theirs beside ae \
         on shared paths; unfin: cases with an unfinished flow\n",
    );
    out
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
pub(crate) mod tests;
