//! Running a preset: every sweep point with every strategy, in parallel,
//! and the records that come out (table, JSON, CSV).

use super::presets::Preset;
use super::progress::Progress;
use super::scenario::{FlowRole, TopologyKind, LONG_LIVED_BYTES};
use super::strategy::{NetAck, Strategy};
use super::LabError;
use crate::emu::{self, jain_index, RunResult, TimeSeries};
use crate::time::{Duration, Instant};
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
    /// Bytes the receiver read in the measurement window over its length,
    /// bits per second (the figure for long-lived flows).
    pub throughput_bps: f64,
    /// Strategy of this flow (a preset may pin some flows to one).
    pub strategy: String,
    /// Data flows right to left (two-way traffic).
    pub reverse: bool,
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
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct LinkRecord {
    /// Link name.
    pub name: String,
    /// Fraction of capacity used.
    pub utilization: f64,
    /// Packets dropped by the queue.
    pub drops: u64,
    /// Packets lost on the wire by the link's random-loss model (not in
    /// `drops`). Left out of the JSON when zero, so runs without a loss
    /// model read byte for byte as they did before loss existed.
    #[serde(skip_serializing_if = "is_zero")]
    pub lost: u64,
    /// On-link bytes sent in the measurement window.
    pub bytes: u64,
    /// Pure ACKs removed by an ACK-filtering queue (paper 000).
    pub filtered: u64,
    /// Pure ACKs held back by delay control before this link (paper 001).
    pub delayed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// Jain's fairness index (paper 004 eq. 2) over the completion times
    /// when every flow has a size, else over the throughputs of the
    /// left-to-right flows.
    pub jain_index: Option<f64>,
    /// Every flow finished before the horizon.
    pub all_finished: bool,
    /// Simulated time the run covered, seconds.
    pub simulated_s: f64,
    /// Length of the measurement window, seconds.
    pub measured_s: f64,
    /// Time series, when the plan asked for them; absent from JSON
    /// otherwise, so records without series read as they always did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesRecord>,
}

impl RunRecord {
    /// Left-to-right flows (the ones the bottleneck carries data for).
    fn forward_flows(&self) -> impl Iterator<Item = &FlowRecord> {
        self.flows.iter().filter(|f| !f.reverse)
    }

    /// Bottleneck utilization in percent.
    pub fn utilization_percent(&self) -> Option<f64> {
        self.links.first().map(|l| l.utilization * 100.0)
    }

    /// Bottleneck drops as a percentage of the left-to-right flows' data
    /// segments (paper 003 figs. 7 and 12).
    pub fn drop_percent(&self) -> Option<f64> {
        let data: u64 = self.forward_flows().map(|f| f.data_packets).sum();
        let drops = self.links.first()?.drops;
        (data > 0).then(|| drops as f64 * 100.0 / data as f64)
    }

    /// Drops at every queue of the path (access links, both bottleneck
    /// directions, filtering buffers) as a percentage of the left-to-right
    /// flows' data segments. [`drop_percent`](Self::drop_percent) counts
    /// only the bottleneck, as paper 003 figs. 7 and 12 do; a sender whose
    /// bursts overflow its own access queue loses segments there that the
    /// bottleneck figure never shows.
    pub fn drop_percent_all_queues(&self) -> Option<f64> {
        let data: u64 = self.forward_flows().map(|f| f.data_packets).sum();
        let drops: u64 = self.links.iter().map(|l| l.drops).sum();
        (data > 0 && !self.links.is_empty()).then(|| drops as f64 * 100.0 / data as f64)
    }

    /// The smallest left-to-right flow throughput over the largest: 1 when
    /// every flow got the same share, near 0 when one was starved. Unlike
    /// Jain's index, one starved flow among many shows at full weight.
    pub fn min_max_share(&self) -> Option<f64> {
        let (min, max) = self
            .forward_flows()
            .map(|f| f.throughput_bps)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
        (max > 0.0).then(|| min / max)
    }

    /// Bit rate of the left-to-right flows' pure ACKs over the measurement
    /// window, kbit/s (paper 003 fig. 9).
    pub fn ack_kbps(&self) -> Option<f64> {
        let bytes: u64 = self.forward_flows().map(|f| f.ack_bytes).sum();
        (self.measured_s > 0.0).then(|| bytes as f64 * 8.0 / self.measured_s / 1e3)
    }

    /// Bytes the reverse bottleneck (the dumbbell's second link) carried,
    /// kB: the ACK load of the slow channel after any filtering.
    pub fn reverse_kbytes(&self) -> Option<f64> {
        Some(self.links.get(1)?.bytes as f64 / 1e3)
    }

    /// Mean goodput of the left-to-right flows that finished, Mbit/s (paper
    /// 000 figs. 11-12: the average throughput of a transfer).
    pub fn mean_goodput_mbps(&self) -> Option<f64> {
        let g: Vec<f64> = self.forward_flows().filter_map(|f| f.goodput_bps).collect();
        (!g.is_empty()).then(|| g.iter().sum::<f64>() / g.len() as f64 / 1e6)
    }

    /// ACKs removed by filtering on any link.
    pub fn filtered_acks(&self) -> u64 {
        self.links.iter().map(|l| l.filtered).sum()
    }

    /// Pure ACK packets of the left-to-right flows.
    pub fn ack_packets(&self) -> Option<f64> {
        (!self.flows.is_empty()).then(|| self.forward_flows().map(|f| f.ack_packets as f64).sum())
    }

    /// Sum of the left-to-right flows' throughputs in the window, Mbit/s.
    pub fn forward_throughput_mbps(&self) -> Option<f64> {
        let mut flows = self.forward_flows().peekable();
        flows.peek()?;
        Some(flows.map(|f| f.throughput_bps).sum::<f64>() / 1e6)
    }

    /// Mean completion time of the flows that finished, seconds.
    pub fn mean_completion_of_finished_s(&self) -> Option<f64> {
        mean(
            self.flows
                .iter()
                .filter_map(|f| f.completion_time_s)
                .filter(|t| t.is_finite()),
        )
    }

    /// Mean completion time, seconds, only when every flow finished (a
    /// mean over the survivors would flatter a strategy that stalls).
    pub fn mean_completion_s(&self) -> Option<f64> {
        if self.flows.iter().any(|f| f.completion_time_s.is_none()) {
            return None;
        }
        self.mean_completion_of_finished_s()
    }

    /// When the last flow finished, seconds from its own start (the
    /// longest completion time), only when every flow finished. Unlike a
    /// mean, it cannot improve by starving one flow to speed up the rest.
    pub fn last_completion_s(&self) -> Option<f64> {
        self.flows
            .iter()
            .map(|f| f.completion_time_s)
            .try_fold(None, |acc: Option<f64>, t| {
                let t = t?;
                Some(Some(acc.map_or(t, |a| a.max(t))))
            })
            .flatten()
    }

    /// How far the receivers' estimates of the senders' windows were from
    /// the windows (paper 004 figs. 6 and 7), as a fraction: per
    /// left-to-right flow, the sum of |estimate - cwnd| over the sum of
    /// cwnd, then the mean over those flows. Only samples where both
    /// exist count (the sender has a connection, so cwnd > 0, and the
    /// receiver an estimate), from `from_s` seconds on (the handshake and
    /// first round trips say little about a steady estimator) and before
    /// the flow's completion time (after it both are frozen at their last
    /// values; completion is counted from the flow's first segment, so
    /// this cut is early by at most the flow's start). `None` without
    /// series or when no flow has such a sample.
    pub fn cwnd_estimate_error(&self, from_s: f64) -> Option<f64> {
        let series = self.series.as_ref()?;
        let errors = self
            .flows
            .iter()
            .zip(&series.flows)
            .filter(|(f, _)| !f.reverse)
            .filter_map(|(f, s)| {
                let until = f.completion_time_s.unwrap_or(f64::INFINITY);
                let estimates = s.receiver_cwnd_estimate_bytes.as_ref()?;
                let (mut error, mut total) = (0.0, 0.0);
                for ((&t, &cwnd), estimate) in
                    series.times_s.iter().zip(&s.cwnd_bytes).zip(estimates)
                {
                    let Some(estimate) = *estimate else { continue };
                    if t < from_s || t > until || cwnd == 0 {
                        continue;
                    }
                    error += (estimate as f64 - cwnd as f64).abs();
                    total += cwnd as f64;
                }
                (total > 0.0).then(|| error / total)
            });
        mean(errors)
    }
}

/// Periodic samples of one run: every flow's windows and the bottleneck
/// queue, all aligned with `times_s`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SeriesRecord {
    /// Sampling period, seconds.
    pub interval_s: f64,
    /// Name of the sampled link: the bottleneck (see [`BOTTLENECK_LINK`]).
    pub link: String,
    /// Sample instants, seconds from the start of the run.
    pub times_s: Vec<f64>,
    /// Per flow, in the order of [`RunRecord::flows`].
    pub flows: Vec<FlowSeriesRecord>,
    /// Packets waiting in the bottleneck queue at each sample.
    pub queue_packets: Vec<usize>,
    /// Packets waiting in the dumbbell's reverse bottleneck queue (the
    /// slow ACK channel of papers 000-002) at each sample; absent for
    /// other topologies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_queue_packets: Option<Vec<usize>>,
}

/// The link of a dumbbell's reverse bottleneck, sampled beside the
/// forward one.
pub const REVERSE_BOTTLENECK_LINK: emu::LinkId = 1;

/// The name the dumbbell gives its reverse middle link.
const REVERSE_BOTTLENECK_NAME: &str = "middle.rev";

/// One flow's samples.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowSeriesRecord {
    /// Flow name.
    pub name: String,
    /// Sender congestion window, bytes (0 before the connection exists).
    pub cwnd_bytes: Vec<u64>,
    /// Sender slow-start threshold, bytes; `null` while it is unset
    /// (unbounded, before the first loss).
    pub ssthresh_bytes: Vec<Option<u64>>,
    /// The receiver's estimate of the sender's window, bytes, where it
    /// had one; absent when no sample had an estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_cwnd_estimate_bytes: Option<Vec<Option<u64>>>,
}

/// The link whose queue is sampled: the first link of every scenario the
/// lab builds is its bottleneck (the dumbbell's forward middle link, the
/// parking lot's first hop), so the index holds for any preset.
pub const BOTTLENECK_LINK: emu::LinkId = 0;

/// Most samples one run may take over its horizon: a guard against an
/// interval so short that the series would not fit in memory.
pub const MAX_SAMPLES: u64 = 1_000_000;

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
    /// Record time series with this period (`--series`), if set.
    pub sample_interval: Option<Duration>,
    /// Capture every link of every run into this directory (`--pcap`),
    /// if set; see [`capture_specs`].
    pub pcap_dir: Option<std::path::PathBuf>,
}

/// One pcap file per link of a run, in `dir`, named
/// `PRESET-POINT-STRATEGY-LINK.pcap` (POINT the sweep point's index,
/// characters a file name should not hold replaced by `_`), so that the
/// runs of a sweep never share a file.
pub fn capture_specs(
    dir: &std::path::Path,
    preset: &str,
    point: usize,
    strategy: Strategy,
    links: &[emu::LinkSpec],
) -> Vec<emu::CaptureSpec> {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "+-._=".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    links
        .iter()
        .enumerate()
        .map(|(l, link)| emu::CaptureSpec {
            link: l,
            path: dir.join(format!(
                "{}-{point}-{}-{}.pcap",
                clean(preset),
                clean(&strategy.name()),
                clean(&link.name)
            )),
        })
        .collect()
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
    roles: &[FlowRole],
    r: &RunResult,
    interval: Option<Duration>,
) -> RunRecord {
    let sized = r.flows.iter().all(|f| f.bytes < LONG_LIVED_BYTES);
    let jain_index = if sized {
        r.completion_fairness()
    } else {
        let x: Vec<f64> = r
            .flows
            .iter()
            .zip(roles)
            .filter(|(_, role)| !role.reverse)
            .map(|(f, _)| f.throughput_bps)
            .collect();
        jain_index(&x)
    };
    RunRecord {
        preset: preset.to_string(),
        strategy: strategy.name().to_string(),
        seed,
        params: params.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
        flows: r
            .flows
            .iter()
            .zip(roles)
            .map(|(f, role)| FlowRecord {
                name: f.name.clone(),
                completion_time_s: f.completion_time.map(|d| d.as_secs_f64()),
                goodput_bps: f.goodput_bps,
                throughput_bps: f.throughput_bps,
                strategy: role.strategy.name().to_string(),
                reverse: role.reverse,
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
                lost: l.lost,
                bytes: l.bytes,
                filtered: l.filtered,
                delayed: l.delayed,
            })
            .collect(),
        jain_index,
        all_finished: r.all_finished,
        simulated_s: r.elapsed.as_secs_f64(),
        measured_s: r.measured.as_secs_f64(),
        series: r.series.as_ref().map(|ts| series_record(ts, r, interval)),
    }
}

fn series_record(ts: &TimeSeries, r: &RunResult, interval: Option<Duration>) -> SeriesRecord {
    let flows = ts
        .flows
        .iter()
        .zip(&r.flows)
        .map(|(s, f)| FlowSeriesRecord {
            name: f.name.clone(),
            cwnd_bytes: s.cwnd.clone(),
            // The sender keeps an unset threshold as u64::MAX; a number
            // that large reads as a real window in scripts and plots.
            ssthresh_bytes: s
                .ssthresh
                .iter()
                .map(|&v| (v != u64::MAX).then_some(v))
                .collect(),
            receiver_cwnd_estimate_bytes: s
                .receiver_cwnd_estimate
                .iter()
                .any(Option::is_some)
                .then(|| s.receiver_cwnd_estimate.clone()),
        })
        .collect();
    let queue = ts.queues.iter().find(|(l, _)| *l == BOTTLENECK_LINK);
    SeriesRecord {
        interval_s: interval.map_or(0.0, |d| d.as_secs_f64()),
        link: r
            .links
            .get(BOTTLENECK_LINK)
            .map_or_else(String::new, |l| l.name.clone()),
        times_s: ts
            .times
            .iter()
            .map(|&t| (t - Instant::ZERO).as_secs_f64())
            .collect(),
        flows,
        queue_packets: queue.map_or_else(Vec::new, |(_, q)| q.clone()),
        reverse_queue_packets: ts
            .queues
            .iter()
            .find(|(l, _)| *l == REVERSE_BOTTLENECK_LINK)
            .map(|(_, q)| q.clone()),
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
        if let Some(interval) = plan.sample_interval {
            check_interval(interval, point.scenario.horizon)?;
        }
        for &s in &strategies {
            // Delay control sits at the dumbbell's forward router; other
            // topologies have no single one.
            if s.options.net_ack == Some(NetAck::DelayControl)
                && point.scenario.topology != TopologyKind::Dumbbell
            {
                return Err(LabError::Field {
                    field: format!("strategy {s}"),
                    problem: "+adc (ACK delay control) needs a dumbbell topology".into(),
                });
            }
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
                let mut scenario = point.scenario.to_emu(strategy, plan.seed);
                if plan.sample_interval.is_some() && !scenario.links.is_empty() {
                    scenario.sample_interval = plan.sample_interval;
                    scenario.sampled_links = vec![BOTTLENECK_LINK];
                    if scenario
                        .links
                        .get(REVERSE_BOTTLENECK_LINK)
                        .is_some_and(|l| l.name == REVERSE_BOTTLENECK_NAME)
                    {
                        scenario.sampled_links.push(REVERSE_BOTTLENECK_LINK);
                    }
                }
                if let Some(dir) = &plan.pcap_dir {
                    scenario.captures =
                        capture_specs(dir, &plan.preset.name, p, strategy, &scenario.links);
                }
                #[cfg(feature = "quic")]
                let warmed = super::quic::warm_path_caches(&mut scenario);
                #[cfg(not(feature = "quic"))]
                let warmed = Ok::<(), emu::EmuError>(());
                let out = warmed
                    .and_then(|()| emu::run(&scenario))
                    .map(|r| {
                        let (name, params) = (&plan.preset.name, &point.params);
                        let roles = point.scenario.roles(strategy);
                        let interval = plan.sample_interval;
                        record(name, strategy, plan.seed, params, &roles, &r, interval)
                    })
                    .map_err(LabError::from);
                bar.finish_one();
                out
            })
            .collect()
    });
    bar.finish();
    results.into_iter().collect()
}

/// A sampling period must be positive and leave at most [`MAX_SAMPLES`]
/// samples over the horizon.
fn check_interval(interval: Duration, horizon: Duration) -> Result<(), LabError> {
    let bad = |problem: String| LabError::Field {
        field: "sample interval (--series)".into(),
        problem,
    };
    if interval.is_zero() {
        return Err(bad("must be positive".into()));
    }
    let samples = horizon.as_nanos() / interval.as_nanos();
    if samples > u128::from(MAX_SAMPLES) {
        return Err(bad(format!(
            "{interval:?} gives {samples} samples over the {horizon:?} horizon; at most {MAX_SAMPLES}"
        )));
    }
    Ok(())
}

/// `rate_mbps=10 dal2`: which run is busy, for the progress bar.
fn point_label(params: &[(&str, f64)], strategy: Strategy) -> String {
    let mut label = String::new();
    for (k, v) in params {
        label.push_str(&format!("{k}={v} "));
    }
    label.push_str(&strategy.name());
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
    // The strategy column fits the longest name, so that the numbers
    // stay under their headings.
    let width = records.iter().map(|r| r.strategy.len()).fold(9, usize::max);
    let mut header = String::new();
    for p in &param_names {
        header.push_str(&format!("{p:>17} "));
    }
    header.push_str(&format!(
        "{:<width$} {:>5} {:>10} {:>9} {:>9} {:>6} {:>8} {:>8} {:>9} {:>6} {:>6} {:>5} {:>6}",
        "strategy",
        "done",
        "mean_ct_s",
        "gput_Mbps",
        "tput_Mbps",
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
        let goodput = r
            .flows
            .iter()
            .filter_map(|f| f.goodput_bps)
            .reduce(|a, b| a + b);
        let throughput: f64 = r.flows.iter().map(|f| f.throughput_bps).sum();
        let util = r.links.first().map_or(0.0, |l| l.utilization);
        let sum = |f: fn(&FlowRecord) -> u64| r.flows.iter().map(f).sum::<u64>();
        out.push_str(&format!(
            "{:<width$} {:>5} {:>10} {:>9} {:>9.3} {:>6.1} {:>8} {:>8} {:>9.1} {:>6} {:>6} {:>5} {:>6}\n",
            r.strategy,
            format!("{finished}/{}", r.flows.len()),
            ct.map_or("-".to_string(), |c| format!("{c:.3}")),
            goodput.map_or("-".to_string(), |g| format!("{:.3}", g / 1e6)),
            throughput / 1e6,
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

/// The swept parameters (the first record's) and the start of a CSV
/// header naming the columns every row begins with.
fn csv_head(records: &[RunRecord]) -> (Vec<String>, String) {
    let param_names: Vec<String> = records
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut head = String::from("preset,strategy,seed");
    for p in &param_names {
        head.push(',');
        head.push_str(p);
    }
    (param_names, head)
}

/// The columns of [`csv_head`] for one run; a parameter the run lacks is
/// an empty field.
fn csv_prefix(r: &RunRecord, param_names: &[String]) -> String {
    let mut prefix = format!("{},{},{}", r.preset, r.strategy, r.seed);
    for p in param_names {
        prefix.push(',');
        if let Some(v) = r.params.get(p) {
            prefix.push_str(&v.to_string());
        }
    }
    prefix
}

/// CSV: one row per flow of every run.
pub fn to_csv(records: &[RunRecord]) -> String {
    let (param_names, mut out) = csv_head(records);
    out.push_str(",flow,flow_strategy,reverse,completion_time_s,goodput_bps,throughput_bps,data_packets,ack_packets,ack_bytes,retransmissions,timeouts,finished,jain_index\n");
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for r in records {
        let prefix = csv_prefix(r, &param_names);
        for f in &r.flows {
            out.push_str(&prefix);
            out.push_str(&format!(
                ",{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                f.name,
                f.strategy,
                f.reverse,
                opt(f.completion_time_s),
                opt(f.goodput_bps),
                f.throughput_bps,
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

/// CSV of the time series: one row per flow per sample, with the
/// bottleneck queue repeated on each flow's row so every row stands alone
/// (the shape plotting tools and data frames read directly). Runs without
/// series add no rows.
pub fn series_to_csv(records: &[RunRecord]) -> String {
    let (param_names, mut out) = csv_head(records);
    out.push_str(
        ",flow,time_s,cwnd_bytes,ssthresh_bytes,receiver_cwnd_estimate_bytes,queue_packets\n",
    );
    for r in records {
        let Some(series) = &r.series else { continue };
        let prefix = csv_prefix(r, &param_names);
        for f in &series.flows {
            for (k, t) in series.times_s.iter().enumerate() {
                let field = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
                let estimate = f
                    .receiver_cwnd_estimate_bytes
                    .as_ref()
                    .and_then(|e| e.get(k).copied().flatten());
                out.push_str(&format!(
                    "{prefix},{},{t},{},{},{},{}\n",
                    f.name,
                    field(f.cwnd_bytes.get(k).copied()),
                    field(f.ssthresh_bytes.get(k).copied().flatten()),
                    field(estimate),
                    field(series.queue_packets.get(k).map(|&q| q as u64)),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::presets;

    fn plan(sample_interval: Option<Duration>) -> RunPlan {
        let preset = presets::find("default").unwrap();
        RunPlan {
            preset,
            strategies: vec![Strategy::DAL2],
            seed: 3,
            jobs: 2,
            shard: Some((1, 2)),
            sample_interval,
            pcap_dir: None,
        }
    }

    #[test]
    fn the_table_keeps_its_columns_under_long_strategy_names() {
        let mut p = plan(None);
        p.strategies = vec![Strategy::DAL2, Strategy::DEFAULT];
        p.shard = None;
        let records = run(&p, false).unwrap();
        let table = table(&records);
        let widths: Vec<usize> = table.lines().map(str::len).collect();
        assert_eq!(widths.len(), 1 + records.len(), "{table}");
        assert!(widths.iter().all(|&w| w == widths[0]), "{table}");
    }

    #[test]
    fn series_are_aligned_and_absent_unless_asked_for() {
        let plain = run(&plan(None), false).unwrap();
        assert!(plain.iter().all(|r| r.series.is_none()));
        assert!(!to_json(&plain).contains("\"series\""));
        assert_eq!(series_to_csv(&plain).lines().count(), 1, "header only");

        let sampled = run(&plan(Some(Duration::from_millis(100))), false).unwrap();
        assert_eq!(sampled.len(), plain.len());
        for (s, p) in sampled.iter().zip(&plain) {
            // Sampling observes the run; it must not change it.
            assert_eq!(s.flows, p.flows);
            let series = s.series.as_ref().unwrap();
            let n = series.times_s.len();
            assert!(n > 10, "{n} samples");
            assert_eq!(series.queue_packets.len(), n);
            assert_eq!(series.link, s.links[BOTTLENECK_LINK].name);
            for f in &series.flows {
                assert_eq!((f.cwnd_bytes.len(), f.ssthresh_bytes.len()), (n, n));
                assert!(f.cwnd_bytes.iter().any(|&c| c > 0));
            }
        }
        let csv = series_to_csv(&sampled);
        let rows = sampled
            .iter()
            .map(|r| {
                r.series
                    .as_ref()
                    .map_or(0, |s| s.times_s.len() * s.flows.len())
            })
            .sum::<usize>();
        assert_eq!(csv.lines().count(), rows + 1);
    }

    #[test]
    fn drops_at_every_queue_and_the_min_max_share() {
        let flow = |tput: f64, data: u64, reverse: bool| FlowRecord {
            name: "f".into(),
            completion_time_s: None,
            goodput_bps: None,
            throughput_bps: tput,
            strategy: "ae".into(),
            reverse,
            data_packets: data,
            ack_packets: 0,
            ack_bytes: 0,
            retransmissions: 0,
            timeouts: 0,
            finished: false,
        };
        let link = |drops: u64| LinkRecord {
            name: "l".into(),
            drops,
            ..LinkRecord::default()
        };
        let r = RunRecord {
            preset: "p".into(),
            strategy: "ae".into(),
            seed: 1,
            params: BTreeMap::new(),
            // The reverse flow's rate and segments count for neither figure.
            flows: vec![
                flow(4e6, 600, false),
                flow(1e6, 400, false),
                flow(9e6, 5000, true),
            ],
            links: vec![link(10), link(5), link(35)],
            jain_index: None,
            all_finished: false,
            simulated_s: 1.0,
            measured_s: 1.0,
            series: None,
        };
        assert_eq!(r.drop_percent(), Some(1.0));
        assert_eq!(r.drop_percent_all_queues(), Some(5.0));
        assert_eq!(r.min_max_share(), Some(0.25));
        let idle = RunRecord {
            flows: vec![flow(0.0, 0, false)],
            links: Vec::new(),
            ..r
        };
        assert_eq!(idle.drop_percent_all_queues(), None);
        assert_eq!(idle.min_max_share(), None);
        let timed = |c: &[Option<f64>]| RunRecord {
            flows: c
                .iter()
                .map(|&t| FlowRecord {
                    completion_time_s: t,
                    ..flow(1.0, 1, false)
                })
                .collect(),
            ..idle.clone()
        };
        assert_eq!(
            timed(&[Some(2.0), Some(5.0), Some(3.0)]).last_completion_s(),
            Some(5.0)
        );
        assert_eq!(timed(&[Some(2.0), None]).last_completion_s(), None);
        assert_eq!(timed(&[]).last_completion_s(), None);
    }

    #[test]
    fn cwnd_estimate_error_is_relative_to_the_window_and_skips_gaps() {
        let flow = |reverse: bool, completion: Option<f64>| FlowRecord {
            name: "f".into(),
            completion_time_s: completion,
            goodput_bps: None,
            throughput_bps: 0.0,
            strategy: "smart".into(),
            reverse,
            data_packets: 0,
            ack_packets: 0,
            ack_bytes: 0,
            retransmissions: 0,
            timeouts: 0,
            finished: completion.is_some(),
        };
        let windows = |cwnd: Vec<u64>, estimate: Option<Vec<Option<u64>>>| FlowSeriesRecord {
            name: "f".into(),
            ssthresh_bytes: vec![None; cwnd.len()],
            cwnd_bytes: cwnd,
            receiver_cwnd_estimate_bytes: estimate,
        };
        let mut r = RunRecord {
            preset: "p".into(),
            strategy: "smart".into(),
            seed: 1,
            params: BTreeMap::new(),
            flows: vec![flow(false, Some(2.5)), flow(false, None), flow(true, None)],
            links: Vec::new(),
            jain_index: None,
            all_finished: false,
            simulated_s: 3.0,
            measured_s: 3.0,
            series: None,
        };
        assert_eq!(r.cwnd_estimate_error(1.0), None, "no series");
        r.series = Some(SeriesRecord {
            interval_s: 0.5,
            link: "l".into(),
            times_s: vec![0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
            flows: vec![
                // Counted: t = 1.0 (|8-10| of 10), 1.5 (estimate missing:
                // skipped), 2.0 (|12-10|), 2.5 (exact). Before 1 s and
                // after completion (2.5 s) nothing counts, however wrong.
                windows(
                    vec![1, 10, 10, 10, 20, 20],
                    Some(vec![Some(100), Some(8), None, Some(12), Some(20), Some(99)]),
                ),
                // Counted where cwnd > 0: |15-10| of 10 at t = 3.0 only.
                windows(
                    vec![0, 0, 0, 0, 0, 10],
                    Some(vec![None, Some(5), None, None, None, Some(15)]),
                ),
                // Reverse flows are not the bottleneck's data: ignored.
                windows(vec![10; 6], Some(vec![Some(1000); 6])),
            ],
            queue_packets: vec![0; 6],
            reverse_queue_packets: None,
        });
        // Flow 0: (2 + 2 + 0) / (10 + 10 + 20) = 0.1; flow 1: 0.5.
        let e = r.cwnd_estimate_error(1.0).unwrap();
        assert!((e - 0.3).abs() < 1e-12, "{e}");
        // Without a receiver estimate there is nothing to judge.
        if let Some(s) = r.series.as_mut() {
            for f in &mut s.flows {
                f.receiver_cwnd_estimate_bytes = None;
            }
        }
        assert_eq!(r.cwnd_estimate_error(1.0), None);
    }

    #[test]
    fn sample_interval_must_be_positive_and_not_absurdly_short() {
        let horizon = Duration::from_secs(600);
        assert!(check_interval(Duration::from_millis(100), horizon).is_ok());
        for bad in [Duration::ZERO, Duration::from_micros(1)] {
            let err = run(&plan(Some(bad)), false).unwrap_err();
            assert!(err.to_string().contains("--series"), "{err}");
        }
    }
}
