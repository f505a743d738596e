//! The ns-2 baseline check of the gauntlet: for every case ns-2 can
//! express, ns-2's Sack1 sender with an AE sink and with a DelAck sink
//! beside ackwise's `ae` and `da` on the same case; a case whose
//! completion times differ by more than [`TOLERANCE`] is flagged.
//!
//! The ns-2 side mirrors the case flow by flow: the test flows get the
//! sink under comparison, competitors the sink of their pinned strategy
//! (`ae`: AE sink, `da`: DelAck sink), and completion is the same span of
//! the test flows as [`super::metrics`] measures. ns-2's stock sender
//! grows per ACK, which is ackwise's `da` (L = 1, ACK counting in
//! congestion avoidance); with an AE sink every ACK covers one segment, so
//! counting ACKs and bytes agree. Skipped: Gilbert-Elliott loss (the
//! driver has no two-state error model).

use super::draw::{Case, CaseParams, LossDraw, SEGMENT_BYTES};
use super::metrics::GauntletRecord;
use super::GauntletFile;
use crate::lab::ns2::{Ns2Dumbbell, Ns2FlowDone, Ns2FlowSpec, Ns2Red, Ns2Sink};
use crate::lab::progress::Progress;
use crate::lab::scenario::QueueKind;
use crate::lab::LabError;
use crate::time::Duration;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Largest relative completion-time difference before a case is flagged.
pub const TOLERANCE: f64 = 0.10;

/// ns-2 runs per expressible case: one per sink.
pub const RUNS_PER_CASE: usize = 2;

/// Wall-clock limit of one ns-2 run: generous, since the largest cases
/// carry a million packets.
const WALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(900);

/// One sink's comparison on one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ns2Compare {
    /// The ackwise strategy compared (`ae` or `da`).
    pub strategy: String,
    /// ns-2's span of the test flows, seconds (horizon if unfinished).
    pub ns2_completion_s: f64,
    /// ns-2's test flows that did not finish.
    pub ns2_unfinished: u32,
    /// ackwise's figure from the gauntlet record, if that strategy ran.
    pub ackwise_completion_s: Option<f64>,
    /// ackwise over ns-2, minus one.
    pub difference: Option<f64>,
    /// `|difference| > TOLERANCE`.
    pub flagged: bool,
    /// ns-2's retransmissions over the test flows.
    pub ns2_retransmissions: u64,
    /// ns-2's retransmission timeouts over the test flows (`nrexmit_`).
    #[serde(default)]
    pub ns2_timeouts: u64,
    /// ackwise's retransmission timeouts over the test flows, if that
    /// strategy ran.
    #[serde(default)]
    pub ackwise_timeouts: Option<u64>,
}

/// The ns-2 check of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ns2Case {
    /// The case.
    pub case: u64,
    /// Why ns-2 did not run it, if it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// One comparison per sink (AE, then DelAck) when it ran.
    pub sinks: Vec<Ns2Compare>,
}

/// Why ns-2 cannot run case `p`, if it cannot.
pub fn expressible(p: &CaseParams) -> Result<(), String> {
    match p.loss {
        LossDraw::GilbertElliott { .. } => {
            Err("Gilbert-Elliott loss (no two-state error model in the driver)".into())
        }
        _ => Ok(()),
    }
}

fn sink_of(strategy: &str) -> Ns2Sink {
    if strategy == "da" {
        Ns2Sink::DelayedAck
    } else {
        Ns2Sink::AckEvery
    }
}

/// The ns-2 dumbbell of `case` with the test flows on `sink`.
pub fn dumbbell(case: &Case, sink: Ns2Sink) -> Ns2Dumbbell {
    let p = &case.params;
    let s = &case.scenario;
    // ns-2's queue-limit counts the packet in transmission.
    let mut d = Ns2Dumbbell::new(
        p.flows.len(),
        p.rate_bps,
        s.forward.delay,
        p.buffer_packets + 1,
    );
    d.payload_bytes = u32::from(SEGMENT_BYTES);
    d.reverse_rate_bps = (p.reverse_rate_bps != p.rate_bps).then_some(p.reverse_rate_bps);
    // The lab's default: access links ten times the faster middle way.
    d.access_rate_bps = s
        .access_rate_bps
        .unwrap_or(10 * p.rate_bps.max(p.reverse_rate_bps));
    d.access_queue_limit_packets = 1001;
    d.initial_window_segments = s.initial_window_segments;
    d.min_rto = s.min_rto;
    d.initial_rto = Duration::from_secs(1).max(s.min_rto);
    d.delack_interval = s.delayed_ack;
    d.horizon = Duration::from_micros(p.horizon_us);
    d.wall_timeout = WALL_LIMIT;
    d.loss_rate = match p.loss {
        LossDraw::Bernoulli { p } => p,
        _ => 0.0,
    };
    if let QueueKind::Red {
        min_th_packets,
        max_th_packets,
        w_q,
        max_p,
        ..
    } = s.forward.queue
    {
        d.red = Some(Ns2Red {
            min_th_packets,
            max_th_packets,
            w_q,
            max_p,
        });
    }
    d.per_flow = p
        .flows
        .iter()
        .map(|f| Ns2FlowSpec {
            start: Duration::from_micros(f.start_us),
            segments: f.bytes.div_ceil(u64::from(SEGMENT_BYTES)),
            access_delay: Duration::from_micros(f.access_delay_us),
            sink: f.competitor.as_deref().map_or(sink, sink_of),
        })
        .collect();
    d
}

/// The test flows' span in an ns-2 run, unfinished flows at the horizon;
/// their count of unfinished; their retransmissions and timeouts.
fn span(p: &CaseParams, flows: &[Ns2FlowDone]) -> (f64, u32, u64, u64) {
    let horizon = p.horizon_us as f64 / 1e6;
    let tests = || {
        p.flows
            .iter()
            .zip(flows)
            .filter(|(d, _)| d.competitor.is_none())
    };
    let first = tests()
        .map(|(d, _)| d.start_us as f64 / 1e6)
        .fold(f64::INFINITY, f64::min);
    let last = tests()
        .map(|(_, f)| f.done_at.map_or(horizon, |t| t.as_secs_f64()))
        .fold(0.0, f64::max);
    let unfinished = tests().filter(|(_, f)| f.done_at.is_none()).count() as u32;
    let retx = tests().map(|(_, f)| f.retransmissions).sum();
    let timeouts = tests().map(|(_, f)| f.timeouts).sum();
    ((last - first).max(0.0), unfinished, retx, timeouts)
}

/// Runs the check of every case on `pool`, comparing with `records`.
pub(crate) fn run_cases(
    pool: &rayon::ThreadPool,
    cases: &[Case],
    records: &[GauntletRecord],
    bar: &Progress,
) -> Result<Vec<Ns2Case>, LabError> {
    let jobs: Vec<(usize, Ns2Sink)> = (0..cases.len())
        .filter(|&c| expressible(&cases[c].params).is_ok())
        .flat_map(|c| Ns2Sink::ALL.into_iter().map(move |s| (c, s)))
        .collect();
    let runs: Vec<Result<Vec<Ns2FlowDone>, LabError>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(c, sink)| {
                bar.start(|| format!("ns-2 case {} {}", cases[c].params.case, sink.name()));
                let out = dumbbell(&cases[c], sink)
                    .run_untraced()
                    .map_err(|e| LabError::Field {
                        field: format!("ns-2 check of gauntlet case {}", cases[c].params.case),
                        problem: e.to_string(),
                    });
                bar.finish_one();
                out
            })
            .collect()
    });
    let mut runs = jobs.iter().zip(runs);
    let mut out = Vec::new();
    for case in cases {
        let p = &case.params;
        if let Err(why) = expressible(p) {
            out.push(Ns2Case {
                case: p.case,
                skipped: Some(why),
                sinks: Vec::new(),
            });
            continue;
        }
        let mut sinks = Vec::new();
        for _ in Ns2Sink::ALL {
            let Some((&(_, sink), run)) = runs.next() else {
                break;
            };
            let (ns2_completion_s, ns2_unfinished, ns2_retransmissions, ns2_timeouts) =
                span(p, &run?);
            let strategy = if sink == Ns2Sink::AckEvery {
                "ae"
            } else {
                "da"
            };
            let record = records
                .iter()
                // ns-2 runs once per case: compare with the single draw.
                .find(|r| r.case == p.case && r.strategy == strategy && r.replicate == 0);
            let ackwise = record.map(|r| r.outcome.completion_s);
            let difference = ackwise
                .filter(|_| ns2_completion_s > 0.0)
                .map(|a| a / ns2_completion_s - 1.0);
            sinks.push(Ns2Compare {
                strategy: strategy.into(),
                ns2_completion_s,
                ns2_unfinished,
                ackwise_completion_s: ackwise,
                difference,
                flagged: difference.is_some_and(|d| d.abs() > TOLERANCE),
                ns2_retransmissions,
                ns2_timeouts,
                ackwise_timeouts: record.map(|r| r.outcome.rtos),
            });
        }
        out.push(Ns2Case {
            case: p.case,
            skipped: None,
            sinks,
        });
    }
    Ok(out)
}

/// Flagged comparisons: (case, comparison).
fn flags(ns2: &[Ns2Case]) -> Vec<(u64, &Ns2Compare)> {
    ns2.iter()
        .flat_map(|c| c.sinks.iter().map(move |s| (c.case, s)))
        .filter(|(_, s)| s.flagged)
        .collect()
}

fn counts(ns2: &[Ns2Case]) -> (usize, usize, usize) {
    let ran = ns2.iter().filter(|c| c.skipped.is_none()).count();
    let compared = ns2
        .iter()
        .flat_map(|c| &c.sinks)
        .filter(|s| s.difference.is_some())
        .count();
    (ran, ns2.len() - ran, compared)
}

/// The check as a terminal table: the counts and every flag.
pub fn table(ns2: &[Ns2Case]) -> String {
    let (ran, skipped, compared) = counts(ns2);
    let flagged = flags(ns2);
    let mut out = format!(
        "ns-2 check: {ran} cases run, {skipped} skipped, {compared} comparisons, {} beyond {:.0}%\n",
        flagged.len(),
        TOLERANCE * 100.0
    );
    for (case, s) in flagged {
        let _ = writeln!(
            out,
            "  case {case} {}: ackwise {:.3} s, ns-2 {:.3} s ({:+.1}%); timeouts ackwise {}, ns-2 {}",
            s.strategy,
            s.ackwise_completion_s.unwrap_or(f64::NAN),
            s.ns2_completion_s,
            s.difference.unwrap_or(f64::NAN) * 100.0,
            timeouts_text(s.ackwise_timeouts),
            s.ns2_timeouts
        );
    }
    out
}

fn timeouts_text(t: Option<u64>) -> String {
    t.map_or_else(|| "-".into(), |t| t.to_string())
}

/// Among flagged comparisons, (ackwise faster, of those with more ns-2
/// timeouts than ackwise's; ackwise slower, of those with more ackwise
/// timeouts than ns-2's).
fn timeout_split(flagged: &[(u64, &Ns2Compare)]) -> (usize, usize, usize, usize) {
    let mut split = (0, 0, 0, 0);
    for (_, s) in flagged {
        let ackwise = s.ackwise_timeouts.unwrap_or(0);
        match s.difference {
            Some(d) if d < 0.0 => {
                split.0 += 1;
                split.1 += usize::from(s.ns2_timeouts > ackwise);
            }
            Some(d) if d > 0.0 => {
                split.2 += 1;
                split.3 += usize::from(ackwise > s.ns2_timeouts);
            }
            _ => {}
        }
    }
    split
}

/// The page's section on the check.
pub(crate) fn page_section(out: &mut String, file: &GauntletFile, ns2: &[Ns2Case]) {
    let (ran, skipped, compared) = counts(ns2);
    let flagged = flags(ns2);
    let _ = writeln!(out, "## ns-2 baseline check\n");
    let _ = writeln!(
        out,
        "Every case ns-2 can express ran in ns-2 (Sack1 sender; AE sink against ackwise's `ae`, DelAck sink against `da`; \
         competitors on their pinned sink; no trace, completion from the agents' `done`). \
         {ran} cases ran, {skipped} were skipped (Gilbert-Elliott loss: the driver has no two-state error model); \
         {compared} comparisons, {} differ by more than {:.0}% in the test flows' completion span.\n",
        flagged.len(),
        TOLERANCE * 100.0
    );
    let diffs: Vec<f64> = ns2
        .iter()
        .flat_map(|c| &c.sinks)
        .filter_map(|s| s.difference.map(f64::abs))
        .collect();
    if let (Some(p50), Some(p90)) = (
        super::metrics::percentile(&diffs, 0.5),
        super::metrics::percentile(&diffs, 0.9),
    ) {
        let _ = writeln!(
            out,
            "Absolute difference: median {:.1}%, 90th percentile {:.1}%.\n",
            p50 * 100.0,
            p90 * 100.0
        );
    }
    if flagged.is_empty() {
        return;
    }
    let (faster, ns2_more, slower, ackwise_more) = timeout_split(&flagged);
    let _ = writeln!(
        out,
        "Of the flagged comparisons, ackwise is faster in {faster}; in {ns2_more} of those ns-2's Sack1 sender took more \
         retransmission timeouts than ackwise's (ns-2's `nrexmit_` against ackwise's RTO count). ackwise is slower in \
         {slower}; in {ackwise_more} of those ackwise took more timeouts than ns-2.\n"
    );
    let _ = writeln!(
        out,
        "| case | strategy | ackwise s | ns-2 s | difference | timeouts ackwise / ns-2 | ns-2 unfinished | path |\n|---|---|---|---|---|---|---|---|"
    );
    for (case, s) in flagged {
        let path = file
            .records
            .iter()
            .find(|r| r.case == case)
            .map(|r| r.params.describe())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {case} | `{}` | {:.3} | {:.3} | {:+.1}% | {} / {} | {} | {path} |",
            s.strategy,
            s.ackwise_completion_s.unwrap_or(f64::NAN),
            s.ns2_completion_s,
            s.difference.unwrap_or(f64::NAN) * 100.0,
            timeouts_text(s.ackwise_timeouts),
            s.ns2_timeouts,
            s.ns2_unfinished
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::super::draw::draw;
    use super::*;

    #[test]
    fn a_case_maps_flow_by_flow_onto_ns2() {
        // Seed 1 case 0 has 13 flows, some of them competitors.
        let case = draw(1, 0);
        let d = dumbbell(&case, Ns2Sink::DelayedAck);
        assert_eq!(d.per_flow.len(), case.params.flows.len());
        assert_eq!(d.queue_limit_packets, case.params.buffer_packets + 1);
        for (f, p) in d.per_flow.iter().zip(&case.params.flows) {
            assert_eq!(f.start, Duration::from_micros(p.start_us));
            assert_eq!(f.segments, p.bytes.div_ceil(1448));
            let want = match p.competitor.as_deref() {
                Some("ae") => Ns2Sink::AckEvery,
                _ => Ns2Sink::DelayedAck,
            };
            assert_eq!(f.sink, want);
        }
        let mut ge = case.params.clone();
        ge.loss = LossDraw::GilbertElliott {
            mean_loss: 0.01,
            mean_burst_packets: 3.0,
        };
        assert!(expressible(&ge).is_err());
        assert!(expressible(&case.params).is_ok());
    }

    #[test]
    fn the_ns2_span_covers_test_flows_only_and_stalls_count_at_the_horizon() {
        let mut p = draw(1, 0).params;
        p.flows.truncate(3);
        for (f, start_ms) in p.flows.iter_mut().zip([100, 0, 200]) {
            f.start_us = start_ms * 1000;
            f.competitor = None;
        }
        p.flows[1].competitor = Some("ae".into());
        p.horizon_us = 50_000_000;
        let done = |s: Option<u64>, retx| Ns2FlowDone {
            done_at: s.map(Duration::from_secs),
            retransmissions: retx,
            ..Ns2FlowDone::default()
        };
        // The competitor (flow 1) starts first and finishes last: ignored.
        let flows = [done(Some(3), 1), done(Some(9), 5), done(Some(4), 2)];
        let (s, unfinished, retx, _) = span(&p, &flows);
        assert!((s - 3.9).abs() < 1e-9, "{s}");
        assert_eq!((unfinished, retx), (0, 3));
        let flows = [done(Some(3), 1), done(Some(9), 5), done(None, 2)];
        let (s, unfinished, _, _) = span(&p, &flows);
        assert!((s - 49.9).abs() < 1e-9, "{s}");
        assert_eq!(unfinished, 1);
    }
}
