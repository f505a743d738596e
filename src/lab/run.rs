//! Running a preset: every sweep point with every strategy, in parallel,
//! and the records that come out (table, JSON, CSV).

use super::presets::Preset;
use super::progress::Progress;
use super::strategy::Strategy;
use super::LabError;
use crate::emu::{self, RunResult};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Per-flow figures of one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowRecord {
    /// Flow name.
    pub name: String,
    /// First data segment sent to last ACK delivered, seconds.
    pub completion_time_s: Option<f64>,
    /// Bytes over completion time, bits per second.
    pub goodput_bps: Option<f64>,
    /// Data segments sent (retransmissions included).
    pub data_packets: u64,
    /// Pure ACKs sent by the receiver.
    pub ack_packets: u64,
    /// Their bytes on the links.
    pub ack_bytes: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Every byte arrived and the flow finished.
    pub finished: bool,
}

/// Per-link figures of one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkRecord {
    /// Link name.
    pub name: String,
    /// Fraction of capacity used.
    pub utilization: f64,
    /// Packets dropped by the queue.
    pub drops: u64,
}

/// One run: a preset point under one strategy.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunRecord {
    /// Preset (or scenario file) name.
    pub preset: String,
    /// Strategy name.
    pub strategy: String,
    /// Seed of the run.
    pub seed: u64,
    /// Swept parameters at this point.
    pub params: BTreeMap<String, f64>,
    /// Flows.
    pub flows: Vec<FlowRecord>,
    /// Links.
    pub links: Vec<LinkRecord>,
    /// Jain's fairness index over completion times (paper 004 eq. 2).
    pub jain_index: Option<f64>,
    /// Every flow finished before the horizon.
    pub all_finished: bool,
    /// Simulated time the run covered, seconds.
    pub simulated_s: f64,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The experiment.
    pub preset: Preset,
    /// Strategies (the preset's own when empty).
    pub strategies: Vec<Strategy>,
    /// Seed for every run.
    pub seed: u64,
    /// Worker threads.
    pub jobs: usize,
    /// Run only the tasks of shard `i` of `n` (1-based), if set.
    pub shard: Option<(usize, usize)>,
}

/// Parses `i/n` for `--shard`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), LabError> {
    let bad = || LabError::Shard(s.to_string());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

fn record(
    preset: &str,
    strategy: Strategy,
    seed: u64,
    params: &[(&str, f64)],
    r: &RunResult,
) -> RunRecord {
    RunRecord {
        preset: preset.to_string(),
        strategy: strategy.name().to_string(),
        seed,
        params: params.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
        flows: r
            .flows
            .iter()
            .map(|f| FlowRecord {
                name: f.name.clone(),
                completion_time_s: f.completion_time.map(|d| d.as_secs_f64()),
                goodput_bps: f.goodput_bps,
                data_packets: f.data_packets,
                ack_packets: f.ack_packets,
                ack_bytes: f.ack_bytes,
                retransmissions: f.retransmissions,
                timeouts: f.timeouts,
                finished: f.finished && f.delivered_all && f.content_ok,
            })
            .collect(),
        links: r
            .links
            .iter()
            .map(|l| LinkRecord {
                name: l.name.clone(),
                utilization: l.utilization,
                drops: l.drops,
            })
            .collect(),
        jain_index: r.completion_fairness(),
        all_finished: r.all_finished,
        simulated_s: r.elapsed.as_secs_f64(),
    }
}

/// Runs the plan; records come back in a fixed order (point, then
/// strategy) whatever the number of jobs, so the same seed gives the same
/// output byte for byte.
pub fn run(plan: &RunPlan, progress: bool) -> Result<Vec<RunRecord>, LabError> {
    let strategies = if plan.strategies.is_empty() {
        plan.preset.strategies.clone()
    } else {
        plan.strategies.clone()
    };
    let mut tasks = Vec::new();
    for (p, point) in plan.preset.points.iter().enumerate() {
        point.scenario.validate()?;
        for &s in &strategies {
            tasks.push((p, s));
        }
    }
    if let Some((i, n)) = plan.shard {
        tasks = tasks
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i - 1)
            .map(|(_, t)| t)
            .collect();
    }
    let bar = Progress::new(tasks.len(), progress);
    // A pool of our own rather than rayon's global one: `--jobs` must hold
    // for this run whatever else the process does, and a library should not
    // size a process-wide pool behind its caller's back.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.jobs.clamp(1, 64))
        .thread_name(|i| format!("ackwise-lab-{i}"))
        .build()
        .map_err(|e| LabError::Threads(e.to_string()))?;
    // An indexed parallel iterator collects in task order, whatever order
    // the runs finish in: that is what keeps the output byte-identical for
    // every `--jobs`.
    let results: Vec<Result<RunRecord, LabError>> = pool.install(|| {
        tasks
            .par_iter()
            .map(|&(p, strategy)| {
                let point = &plan.preset.points[p];
                bar.start(|| point_label(&point.params, strategy));
                let scenario = point.scenario.to_emu(strategy, plan.seed);
                let out = emu::run(&scenario)
                    .map(|r| record(&plan.preset.name, strategy, plan.seed, &point.params, &r))
                    .map_err(LabError::from);
                bar.finish_one();
                out
            })
            .collect()
    });
    bar.finish();
    results.into_iter().collect()
}

/// `rate_mbps=10 dal2`: which run is busy, for the progress bar.
fn point_label(params: &[(&str, f64)], strategy: Strategy) -> String {
    let mut label = String::new();
    for (k, v) in params {
        label.push_str(&format!("{k}={v} "));
    }
    label.push_str(strategy.name());
    label
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// A table for the terminal: one line per run.
pub fn table(records: &[RunRecord]) -> String {
    let mut out = String::new();
    let param_names: Vec<String> = records
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut header = String::new();
    for p in &param_names {
        header.push_str(&format!("{p:>17} "));
    }
    header.push_str(&format!(
        "{:<9} {:>5} {:>10} {:>9} {:>6} {:>8} {:>8} {:>9} {:>6} {:>6} {:>5} {:>6}",
        "strategy",
        "done",
        "mean_ct_s",
        "gput_Mbps",
        "util%",
        "data_pk",
        "ack_pk",
        "ack_KB",
        "drops",
        "retx",
        "rto",
        "jain"
    ));
    out.push_str(&header);
    out.push('\n');
    for r in records {
        for p in &param_names {
            out.push_str(&format!(
                "{:>17} ",
                r.params.get(p).map_or(String::new(), |v| format!("{v}"))
            ));
        }
        let finished = r.flows.iter().filter(|f| f.finished).count();
        let ct = mean(r.flows.iter().filter_map(|f| f.completion_time_s));
        let goodput: f64 = r.flows.iter().filter_map(|f| f.goodput_bps).sum();
        let util = r.links.first().map_or(0.0, |l| l.utilization);
        let sum = |f: fn(&FlowRecord) -> u64| r.flows.iter().map(f).sum::<u64>();
        out.push_str(&format!(
            "{:<9} {:>5} {:>10} {:>9.3} {:>6.1} {:>8} {:>8} {:>9.1} {:>6} {:>6} {:>5} {:>6}\n",
            r.strategy,
            format!("{finished}/{}", r.flows.len()),
            ct.map_or("-".to_string(), |c| format!("{c:.3}")),
            goodput / 1e6,
            util * 100.0,
            sum(|f| f.data_packets),
            sum(|f| f.ack_packets),
            sum(|f| f.ack_bytes) as f64 / 1000.0,
            r.links.iter().map(|l| l.drops).sum::<u64>(),
            sum(|f| f.retransmissions),
            sum(|f| f.timeouts),
            r.jain_index.map_or("-".to_string(), |j| format!("{j:.3}")),
        ));
    }
    out
}

/// JSON: an array with one object per run.
pub fn to_json(records: &[RunRecord]) -> String {
    serde_json::to_string_pretty(records).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// CSV: one row per flow of every run.
pub fn to_csv(records: &[RunRecord]) -> String {
    let param_names: Vec<String> = records
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut out = String::from("preset,strategy,seed");
    for p in &param_names {
        out.push(',');
        out.push_str(p);
    }
    out.push_str(",flow,completion_time_s,goodput_bps,data_packets,ack_packets,ack_bytes,retransmissions,timeouts,finished,jain_index\n");
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for r in records {
        for f in &r.flows {
            out.push_str(&format!("{},{},{}", r.preset, r.strategy, r.seed));
            for p in &param_names {
                out.push_str(&format!(",{}", opt(r.params.get(p).copied())));
            }
            out.push_str(&format!(
                ",{},{},{},{},{},{},{},{},{},{}\n",
                f.name,
                opt(f.completion_time_s),
                opt(f.goodput_bps),
                f.data_packets,
                f.ack_packets,
                f.ack_bytes,
                f.retransmissions,
                f.timeouts,
                f.finished,
                opt(r.jain_index)
            ));
        }
    }
    out
}
