//! SVG plots of lab records (`ackwise lab ... --plot DIR`).
//!
//! Everything is derived from the records themselves, so any preset or
//! scenario file plots without knowing its layout:
//!
//! - every parameter that takes two or more values across the records is
//!   an x axis: `<preset>-completion-vs-<param>.svg`,
//!   `<preset>-utilization-vs-<param>.svg`, `<preset>-acks-vs-<param>.svg`,
//!   `<preset>-ackrate-vs-<param>.svg`, `<preset>-reverse-vs-<param>.svg`,
//!   `<preset>-drops-vs-<param>.svg`,
//!   `<preset>-throughput-vs-<param>.svg` and `<preset>-fairness-vs-<param>.svg`,
//!   one line per strategy. When the preset sweeps further parameters, each
//!   of their value combinations gets its own file (suffix
//!   `-<other>-<value>`), because completion times at different transfer
//!   sizes differ by orders of magnitude and would flatten each other on
//!   one axis;
//! - records with no swept parameter (a scenario file) give one bar per
//!   strategy: `<preset>-completion.svg`, `<preset>-utilization.svg`,
//!   and so on for each metric;
//! - every record with time series gives
//!   `<preset>-<point>-<strategy>-cwnd.svg`: windows over time on top, the
//!   bottleneck queue below (`<point>` is `param-value` pairs, left out
//!   when there are none).
//!
//! Only plotters' SVG backend is used: text becomes SVG `<text>` elements
//! that the viewer renders, so no font files or system font libraries are
//! needed. Values that are missing or not finite (an unfinished flow has no
//! completion time) are left out of the plot instead of failing it.

use super::run::{RunRecord, SeriesRecord};
use super::strategy::Strategy;
use super::LabError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

const SWEEP_SIZE: (u32, u32) = (800, 500);
const SERIES_SIZE: (u32, u32) = (900, 700);
const FONT: &str = "sans-serif";

/// One figure of merit plotted against the swept parameters.
struct Metric {
    /// In file names.
    slug: &'static str,
    /// In titles.
    title: &'static str,
    /// Y-axis label, with its unit.
    axis: &'static str,
    value: fn(&RunRecord) -> Option<f64>,
}

const METRICS: [Metric; 8] = [
    Metric {
        slug: "completion",
        title: "mean completion time",
        axis: "mean completion time of finished flows (s)",
        value: RunRecord::mean_completion_of_finished_s,
    },
    Metric {
        slug: "utilization",
        title: "bottleneck utilization",
        axis: "bottleneck utilization (%)",
        value: RunRecord::utilization_percent,
    },
    Metric {
        slug: "acks",
        title: "ACK packets",
        axis: "pure ACK packets, left-to-right flows",
        value: RunRecord::ack_packets,
    },
    Metric {
        slug: "ackrate",
        title: "ACK bit rate",
        axis: "pure ACK bit rate in the window (kbit/s)",
        value: RunRecord::ack_kbps,
    },
    Metric {
        slug: "reverse",
        title: "reverse channel load",
        axis: "bytes over the reverse bottleneck (kB)",
        value: RunRecord::reverse_kbytes,
    },
    Metric {
        slug: "drops",
        title: "bottleneck drops",
        axis: "drops, % of data segments",
        value: RunRecord::drop_percent,
    },
    Metric {
        slug: "throughput",
        title: "throughput",
        axis: "left-to-right throughput in the window (Mbit/s)",
        value: RunRecord::forward_throughput_mbps,
    },
    Metric {
        slug: "fairness",
        title: "Jain's fairness index",
        axis: "Jain's index (completion times, or throughputs)",
        value: fairness,
    },
];

fn fairness(r: &RunRecord) -> Option<f64> {
    r.jain_index
}

/// Writes every plot the records support into `dir` (created if missing)
/// and returns the files written, in a fixed order.
pub fn write_plots(records: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>, LabError> {
    prepare_dir(dir)?;
    let mut written = Vec::new();
    for preset in first_appearance(records.iter().map(|r| r.preset.as_str())) {
        let runs: Vec<&RunRecord> = records.iter().filter(|r| r.preset == preset).collect();
        let strategies = first_appearance(runs.iter().map(|r| r.strategy.as_str()));
        let axes = swept_params(&runs);
        for metric in &METRICS {
            if axes.is_empty() {
                let path = dir.join(format!("{}-{}.svg", file_part(preset), metric.slug));
                write_svg(&path, SWEEP_SIZE, |root| {
                    bars(root, preset, metric, &runs, &strategies)
                })?;
                written.push(path);
            }
            for x in &axes {
                let others: Vec<&str> = axes
                    .iter()
                    .filter(|a| *a != x)
                    .map(String::as_str)
                    .collect();
                for (fixed, group) in group_by_params(&runs, &others) {
                    let mut name = format!("{}-{}-vs-{}", file_part(preset), metric.slug, x);
                    for (k, v) in others.iter().zip(&fixed) {
                        name.push_str(&format!("-{k}-{}", value_text(*v)));
                    }
                    let path = dir.join(file_part(&name) + ".svg");
                    let sweep = Sweep {
                        preset,
                        metric,
                        x,
                        fixed: others.iter().copied().zip(fixed.iter().copied()).collect(),
                        runs: &group,
                        strategies: &strategies,
                    };
                    write_svg(&path, SWEEP_SIZE, |root| sweep.draw(root))?;
                    written.push(path);
                }
            }
        }
        written.extend(series_plots(&runs, dir)?);
    }
    Ok(written)
}

/// Writes only the window plots (`<preset>-<point>-<strategy>-cwnd.svg`)
/// of the records that have time series, into `dir` (created if
/// missing), and returns the files written in record order. A results
/// page that samples a single point uses this, since the sweep plots of
/// one point would only repeat its tables as bars.
pub fn write_series_plots(records: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>, LabError> {
    prepare_dir(dir)?;
    let runs: Vec<&RunRecord> = records.iter().collect();
    series_plots(&runs, dir)
}

fn series_plots(runs: &[&RunRecord], dir: &Path) -> Result<Vec<PathBuf>, LabError> {
    let mut written = Vec::new();
    for r in runs {
        let Some(series) = &r.series else { continue };
        let mut name = file_part(&r.preset);
        for (k, v) in &r.params {
            name.push_str(&format!("-{k}-{}", value_text(Some(*v))));
        }
        name.push_str(&format!("-{}-cwnd", r.strategy));
        let path = dir.join(file_part(&name) + ".svg");
        write_svg(&path, SERIES_SIZE, |root| windows(root, r, series))?;
        written.push(path);
    }
    Ok(written)
}

/// Creates `dir` if needed, so a bad `--plot` can be reported before a
/// long sweep rather than after it.
pub fn prepare_dir(dir: &Path) -> Result<(), LabError> {
    let io = |source| LabError::Io {
        path: dir.display().to_string(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    if !dir.is_dir() {
        return Err(io(std::io::Error::other("not a directory")));
    }
    Ok(())
}

/// Renders into a string, then writes the file: an unwritable file is
/// then a plain I/O error naming the path, not a plotting error.
fn write_svg(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<(), LabError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(|e| e.to_string()));
        drawn.map_err(|problem| LabError::Plot {
            path: path.display().to_string(),
            problem,
        })?;
    }
    std::fs::write(path, svg).map_err(|source| LabError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Distinct items in order of first appearance: strategies keep the
/// colours and legend order of the run's own order.
pub(crate) fn first_appearance<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Parameters that take at least two values: those are swept; one that
/// never changes is a constant of the preset and makes no axis.
fn swept_params(runs: &[&RunRecord]) -> Vec<String> {
    let mut names: Vec<&String> = runs.iter().flat_map(|r| r.params.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|name| {
            let mut values: Vec<Option<u64>> = runs
                .iter()
                .map(|r| r.params.get(*name).map(|v| v.to_bits()))
                .collect();
            values.sort();
            values.dedup();
            values.len() > 1
        })
        .cloned()
        .collect()
}

/// Runs grouped by their values of `names`, groups in ascending order of
/// those values (missing values first).
fn group_by_params<'a>(
    runs: &[&'a RunRecord],
    names: &[&str],
) -> Vec<(Vec<Option<f64>>, Vec<&'a RunRecord>)> {
    let mut groups: Vec<(Vec<Option<f64>>, Vec<&RunRecord>)> = Vec::new();
    for &r in runs {
        let key: Vec<Option<f64>> = names.iter().map(|n| r.params.get(*n).copied()).collect();
        let same = |k: &Vec<Option<f64>>| {
            k.iter()
                .zip(&key)
                .all(|(a, b)| a.map(f64::to_bits) == b.map(f64::to_bits))
        };
        match groups.iter_mut().find(|(k, _)| same(k)) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b)
            .map(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => x.is_some().cmp(&y.is_some()),
            })
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    groups
}

fn value_text(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_string(), |v| format!("{v}"))
}

/// A file-name component: anything but letters, digits, `.`, `-` and `_`
/// becomes `_`, so a scenario's name can never leave the plot directory.
fn file_part(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A name made only of dots would still point elsewhere.
    if cleaned.chars().all(|c| c == '.') {
        cleaned.replace('.', "_")
    } else {
        cleaned
    }
}

/// A plain RGB colour (which is `Copy`, unlike a palette entry, so legend
/// closures can own one).
fn colour(i: usize) -> RGBColor {
    // The palette's third entry is yellow, which barely shows on white.
    let (r, g, b) = Palette99::pick(if i >= 2 { i + 1 } else { i }).rgb();
    RGBColor(r, g, b)
}

/// A strategy's colour: known strategies keep theirs whichever subset a
/// run compares, so plots of different runs can be read side by side.
fn strategy_colour(name: &str, position: usize) -> RGBColor {
    let known = Strategy::ALL.len();
    match name.parse::<Strategy>() {
        Ok(s) => colour(Strategy::ALL.iter().position(|&k| k == s).unwrap_or(0)),
        Err(_) => colour(known + position),
    }
}

/// An axis range that covers `values` (finite ones), padded so points do
/// not sit on the frame; `from_zero` anchors it at zero for quantities
/// that start there.
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
    let r = padded_range(values, from_zero);
    // Values near f64::MAX would pad to infinity, which no axis can show.
    if r.start.is_finite() && r.end.is_finite() {
        r
    } else {
        0.0..1.0
    }
}

fn padded_range(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return 0.0..1.0;
    }
    if from_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < 1e-12 {
        let pad = if hi.abs() > 1e-12 {
            hi.abs() * 0.1
        } else {
            1.0
        };
        return if from_zero && lo >= 0.0 {
            0.0..hi + pad
        } else {
            lo - pad..hi + pad
        };
    }
    let pad = (hi - lo) * 0.05;
    if from_zero && lo >= 0.0 {
        0.0..hi + pad * 2.0
    } else {
        lo - pad..hi + pad
    }
}

/// A value for a label: four significant digits are plenty on a plot.
fn short(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e6 || v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else {
        let digits = (3 - v.abs().log10().floor().max(0.0) as i32).max(0) as usize;
        format!("{v:.digits$}")
    }
}

fn text_err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// One strategy's points on a sweep plot.
struct Line<'a> {
    /// Index of the strategy, which picks its colour.
    index: usize,
    strategy: &'a str,
    /// Finite points in ascending x.
    points: Vec<(f64, f64)>,
}

/// One metric against one swept parameter, the others held at `fixed`.
struct Sweep<'a> {
    preset: &'a str,
    metric: &'a Metric,
    x: &'a str,
    fixed: Vec<(&'a str, Option<f64>)>,
    runs: &'a [&'a RunRecord],
    strategies: &'a [&'a str],
}

impl Sweep<'_> {
    /// Per strategy, the finite (x, y) points in ascending x.
    fn lines(&self) -> Vec<Line<'_>> {
        self.strategies
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let mut points: Vec<(f64, f64)> = self
                    .runs
                    .iter()
                    .filter(|r| r.strategy == s)
                    .filter_map(|r| Some((*r.params.get(self.x)?, (self.metric.value)(r)?)))
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Line {
                    index: i,
                    strategy: s,
                    points,
                }
            })
            .collect()
    }

    fn draw(&self, root: &DrawingArea<SVGBackend, Shift>) -> Result<(), String> {
        let lines = self.lines();
        let all = || lines.iter().flat_map(|l| l.points.iter());
        let xs = range(
            self.runs
                .iter()
                .filter_map(|r| r.params.get(self.x).copied()),
            false,
        );
        let ys = range(all().map(|p| p.1), true);
        let mut title = format!("{}: {} vs {}", self.preset, self.metric.title, self.x);
        if !self.fixed.is_empty() {
            let fixed: Vec<String> = self
                .fixed
                .iter()
                .map(|(k, v)| format!("{k} = {}", value_text(*v)))
                .collect();
            title.push_str(&format!(" ({})", fixed.join(", ")));
        }
        if all().next().is_none() {
            title.push_str(" - no data");
        }
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(xs, ys)
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .x_desc(self.x)
            .y_desc(self.metric.axis)
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(text_err)?;
        for line in &lines {
            let c = strategy_colour(line.strategy, line.index);
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    c.stroke_width(2),
                ))
                .map_err(text_err)?
                .label(line.strategy)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart
                .draw_series(line.points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(text_err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font((FONT, 14))
            .draw()
            .map_err(text_err)
    }
}

/// No swept parameter: one bar per strategy (the mean if a strategy has
/// several runs), strategy names under the bars.
fn bars(
    root: &DrawingArea<SVGBackend, Shift>,
    preset: &str,
    metric: &Metric,
    runs: &[&RunRecord],
    strategies: &[&str],
) -> Result<(), String> {
    let values: Vec<Option<f64>> = strategies
        .iter()
        .map(|&s| {
            let v: Vec<f64> = runs
                .iter()
                .filter(|r| r.strategy == s)
                .filter_map(|r| (metric.value)(r))
                .filter(|v| v.is_finite())
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect();
    let ys = range(values.iter().flatten().copied(), true);
    let mut title = format!("{preset}: {}", metric.title);
    if values.iter().all(Option::is_none) {
        title.push_str(" - no data");
    }
    // Strategy k sits at x = k. Its name is written on the bar rather than
    // under it: axis ticks fall where plotters' number layout puts them,
    // not necessarily on the bars.
    let n = strategies.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 18))
        .margin(15)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, ys)
        .map_err(text_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("strategy")
        .y_desc(metric.axis)
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(text_err)?;
    let above = TextStyle::from((FONT, 14)).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (i, (name, v)) in strategies.iter().zip(&values).enumerate() {
        let k = i as f64;
        let text = match v {
            Some(v) => format!("{name}: {}", short(*v)),
            None => format!("{name}: no data"),
        };
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (k, v.unwrap_or(0.0)),
                above.clone(),
            )))
            .map_err(text_err)?;
        let Some(v) = v else { continue };
        let c = strategy_colour(name, i);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(k - 0.3, 0.0), (k + 0.3, *v)],
                c.filled(),
            )))
            .map_err(text_err)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()
        .map_err(text_err)
}

/// Splits samples into runs of present, finite values, so a gap (an unset
/// ssthresh, a missing estimate) breaks the line instead of bridging it.
fn segments(times: &[f64], values: impl Iterator<Item = Option<f64>>) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (&t, v) in times.iter().zip(values) {
        match v {
            Some(v) if v.is_finite() && t.is_finite() => current.push((t, v)),
            _ if !current.is_empty() => out.push(std::mem::take(&mut current)),
            _ => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Window {
    Cwnd,
    Ssthresh,
    Estimate,
}

/// The legend box of a time-series panel, top right.
fn legend<'a, 'b: 'a>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'b>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .draw()
        .map_err(text_err)
}

/// One flow's window of one kind, split at gaps.
struct WindowLine {
    legend: String,
    /// Index of the flow, which picks its colour.
    flow: usize,
    kind: Window,
    segments: Vec<Vec<(f64, f64)>>,
}

/// Windows over time (cwnd solid, ssthresh dashed, the receiver's
/// estimate thin) above the bottleneck queue.
fn windows(
    root: &DrawingArea<SVGBackend, Shift>,
    r: &RunRecord,
    series: &SeriesRecord,
) -> Result<(), String> {
    let kb = |v: u64| v as f64 / 1000.0;
    let times = &series.times_s;
    let mut point: Vec<String> = r.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    point.push(r.strategy.clone());
    let title = format!("{}: {}", r.preset, point.join(", "));
    let (top, bottom) = root.split_vertically(SERIES_SIZE.1 * 62 / 100);

    let mut lines: Vec<WindowLine> = Vec::new();
    for (flow, f) in series.flows.iter().enumerate() {
        let cwnd = segments(times, f.cwnd_bytes.iter().map(|&v| Some(kb(v))));
        lines.push(WindowLine {
            legend: format!("{} cwnd", f.name),
            flow,
            kind: Window::Cwnd,
            segments: cwnd,
        });
        let ss = segments(times, f.ssthresh_bytes.iter().map(|v| v.map(kb)));
        lines.push(WindowLine {
            legend: format!("{} ssthresh", f.name),
            flow,
            kind: Window::Ssthresh,
            segments: ss,
        });
        if let Some(est) = &f.receiver_cwnd_estimate_bytes {
            lines.push(WindowLine {
                legend: format!("{} receiver estimate", f.name),
                flow,
                kind: Window::Estimate,
                segments: segments(times, est.iter().map(|v| v.map(kb))),
            });
        }
    }
    let xs = range(times.iter().copied(), true);
    let ys = range(
        lines
            .iter()
            .flat_map(|l| l.segments.iter().flatten().map(|p| p.1)),
        true,
    );
    let mut chart = ChartBuilder::on(&top)
        .caption(title, (FONT, 18))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(xs.clone(), ys)
        .map_err(text_err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("window (kB)")
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(text_err)?;
    for line in lines {
        let c = colour(line.flow);
        let mut labelled = false;
        for seg in line.segments {
            let drawn = match line.kind {
                Window::Cwnd => chart.draw_series(LineSeries::new(seg, c.stroke_width(2))),
                Window::Ssthresh => {
                    chart.draw_series(DashedLineSeries::new(seg, 6, 4, c.stroke_width(1)))
                }
                Window::Estimate => {
                    chart.draw_series(LineSeries::new(seg, c.mix(0.6).stroke_width(1)))
                }
            }
            .map_err(text_err)?;
            // One legend entry per line, however many gaps split it.
            if !labelled {
                labelled = true;
                let width = if line.kind == Window::Cwnd { 2 } else { 1 };
                drawn.label(line.legend.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
                });
            }
        }
    }
    legend(&mut chart)?;

    let queue: Vec<(f64, f64)> = times
        .iter()
        .zip(&series.queue_packets)
        .map(|(&t, &q)| (t, q as f64))
        .filter(|(t, _)| t.is_finite())
        .collect();
    let reverse_peak = series
        .reverse_queue_packets
        .iter()
        .flatten()
        .map(|&q| q as f64);
    let qs = range(queue.iter().map(|p| p.1).chain(reverse_peak), true);
    // With both directions drawn, the legend names them.
    let link = if series.link.is_empty() || series.reverse_queue_packets.is_some() {
        "bottleneck".to_string()
    } else {
        format!("bottleneck {}", series.link)
    };
    let mut chart = ChartBuilder::on(&bottom)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(xs, qs)
        .map_err(text_err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(format!("{link} queue (packets)"))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(text_err)?;
    chart
        .draw_series(LineSeries::new(queue, BLACK.stroke_width(1)))
        .map_err(text_err)?
        .label("forward")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    // The reverse (ACK) queue in the same panel, where a run has one.
    if let Some(rev) = &series.reverse_queue_packets {
        let rev: Vec<(f64, f64)> = times
            .iter()
            .zip(rev)
            .map(|(&t, &q)| (t, q as f64))
            .filter(|(t, _)| t.is_finite())
            .collect();
        chart
            .draw_series(LineSeries::new(rev, RED.stroke_width(1)))
            .map_err(text_err)?
            .label("reverse (ACKs)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(1)));
        legend(&mut chart)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::run::{FlowRecord, FlowSeriesRecord, LinkRecord};
    use std::collections::BTreeMap;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ackwise-plot-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn flow(completion: Option<f64>) -> FlowRecord {
        FlowRecord {
            name: "flow0".into(),
            completion_time_s: completion,
            goodput_bps: completion.map(|c| 8e6 / c),
            throughput_bps: 1e6,
            strategy: "ae".into(),
            reverse: false,
            data_packets: 1000,
            ack_packets: 500,
            ack_bytes: 20_000,
            retransmissions: 0,
            timeouts: 0,
            finished: completion.is_some(),
        }
    }

    fn record(strategy: &str, params: &[(&str, f64)], completion: Option<f64>) -> RunRecord {
        RunRecord {
            preset: "t".into(),
            strategy: strategy.into(),
            seed: 1,
            params: params
                .iter()
                .map(|&(k, v)| (k.to_string(), v))
                .collect::<BTreeMap<_, _>>(),
            flows: vec![flow(completion)],
            links: vec![LinkRecord {
                name: "middle.fwd".into(),
                utilization: 0.9,
                drops: 0,
                ..LinkRecord::default()
            }],
            jain_index: completion.map(|_| 1.0),
            all_finished: completion.is_some(),
            simulated_s: 10.0,
            measured_s: 10.0,
            series: None,
        }
    }

    /// The contents of the SVG's `<text>` elements, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    fn read(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("<svg"), "{}", path.display());
        assert!(text.trim_end().ends_with("</svg>"), "{}", path.display());
        text
    }

    #[test]
    fn one_line_per_strategy_for_each_swept_parameter() {
        let mut records = Vec::new();
        for rate in [1.0, 2.0, 5.0] {
            for s in ["ae", "dal2"] {
                records.push(record(s, &[("rate_mbps", rate)], Some(10.0 / rate)));
            }
        }
        let dir = temp_dir("sweep");
        let files = write_plots(&records, &dir).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "t-completion-vs-rate_mbps.svg",
                "t-utilization-vs-rate_mbps.svg",
                "t-acks-vs-rate_mbps.svg",
                "t-ackrate-vs-rate_mbps.svg",
                "t-reverse-vs-rate_mbps.svg",
                "t-drops-vs-rate_mbps.svg",
                "t-throughput-vs-rate_mbps.svg",
                "t-fairness-vs-rate_mbps.svg"
            ]
        );
        for f in &files {
            let texts = texts(&read(f));
            for s in ["ae", "dal2", "rate_mbps"] {
                assert!(texts.iter().any(|t| t == s), "{s}: {texts:?}");
            }
        }
    }

    #[test]
    fn a_second_swept_parameter_splits_the_files() {
        let mut records = Vec::new();
        for buffer in [4.0, 8.0] {
            for segments in [10.0, 100.0] {
                let p = [("buffer_packets", buffer), ("transfer_segments", segments)];
                records.push(record("ae", &p, Some(segments / buffer)));
            }
        }
        let dir = temp_dir("two");
        let files = write_plots(&records, &dir).unwrap();
        // METRICS x (2 files per axis) x 2 axes.
        assert_eq!(files.len(), METRICS.len() * 4);
        assert!(dir
            .join("t-completion-vs-buffer_packets-transfer_segments-100.svg")
            .exists());
        assert!(dir
            .join("t-acks-vs-transfer_segments-buffer_packets-4.svg")
            .exists());
    }

    #[test]
    fn empty_nan_and_unfinished_records_still_plot() {
        let dir = temp_dir("odd");
        assert!(write_plots(&[], &dir).unwrap().is_empty());
        assert!(dir.is_dir(), "the directory is created even so");

        let mut nan = record("da", &[("rate_mbps", 2.0)], Some(f64::NAN));
        nan.links[0].utilization = f64::NAN;
        let records = vec![
            record("ae", &[("rate_mbps", 1.0)], None),
            record("ae", &[("rate_mbps", 2.0)], Some(3.0)),
            record("da", &[("rate_mbps", 1.0)], None),
            nan,
            record("da", &[("rate_mbps", f64::INFINITY)], Some(1.0)),
        ];
        let mut huge = record("ae", &[("rate_mbps", 3.0)], Some(f64::MAX));
        huge.links.clear();
        let records = [records, vec![huge]].concat();
        for f in write_plots(&records, &dir).unwrap() {
            let svg = read(&f);
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }

        // Nothing finished anywhere: the completion plot says so.
        let none = vec![
            record("ae", &[("rate_mbps", 1.0)], None),
            record("ae", &[("rate_mbps", 2.0)], None),
        ];
        write_plots(&none, &dir).unwrap();
        assert!(read(&dir.join("t-completion-vs-rate_mbps.svg")).contains("no data"));
    }

    #[test]
    fn no_swept_parameter_gives_bars_named_by_strategy() {
        let records = vec![record("ae", &[], Some(2.0)), record("dal2", &[], None)];
        let dir = temp_dir("bars");
        let files = write_plots(&records, &dir).unwrap();
        assert_eq!(files.len(), METRICS.len());
        let texts = texts(&read(&dir.join("t-acks.svg")));
        for s in ["ae", "dal2"] {
            assert!(texts.iter().any(|t| t == s), "{s}: {texts:?}");
        }
        read(&dir.join("t-completion.svg"));
    }

    #[test]
    fn series_give_a_window_plot_per_run() {
        let mut r = record("dal2", &[("rate_mbps", 1.5)], Some(2.0));
        r.series = Some(SeriesRecord {
            interval_s: 0.1,
            link: "middle.fwd".into(),
            times_s: vec![0.0, 0.1, 0.2, 0.3],
            flows: vec![FlowSeriesRecord {
                name: "flow0".into(),
                cwnd_bytes: vec![4000, 8000, 16000, 8000],
                ssthresh_bytes: vec![None, None, None, Some(8000)],
                receiver_cwnd_estimate_bytes: Some(vec![None, Some(7000), Some(15000), None]),
            }],
            queue_packets: vec![0, 2, 9, 1],
            reverse_queue_packets: None,
        });
        let mut empty = record("ae", &[("rate_mbps", 1.5)], None);
        empty.series = Some(SeriesRecord {
            interval_s: 0.1,
            link: String::new(),
            times_s: Vec::new(),
            flows: Vec::new(),
            queue_packets: Vec::new(),
            reverse_queue_packets: None,
        });
        let dir = temp_dir("series");
        write_plots(&[r, empty], &dir).unwrap();
        let svg = read(&dir.join("t-rate_mbps-1.5-dal2-cwnd.svg"));
        for needle in ["flow0 cwnd", "flow0 ssthresh", "receiver estimate", "queue"] {
            assert!(svg.contains(needle), "{needle}");
        }
        read(&dir.join("t-rate_mbps-1.5-ae-cwnd.svg"));

        // Only the window plots, and only for records with series.
        let plain = record("smart", &[("rate_mbps", 1.5)], Some(2.0));
        let r = sampled_dal2();
        let dir = temp_dir("series-only");
        let files = write_series_plots(&[plain, r], &dir).unwrap();
        assert_eq!(files, vec![dir.join("t-rate_mbps-1.5-dal2-cwnd.svg")]);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    fn sampled_dal2() -> RunRecord {
        let mut r = record("dal2", &[("rate_mbps", 1.5)], Some(2.0));
        r.series = Some(SeriesRecord {
            interval_s: 0.1,
            link: "middle.fwd".into(),
            times_s: vec![0.0, 0.1],
            flows: Vec::new(),
            queue_packets: vec![0, 1],
            reverse_queue_packets: None,
        });
        r
    }

    #[test]
    fn names_cannot_leave_the_directory() {
        let mut r = record("ae", &[], Some(1.0));
        r.preset = "../../etc/x y".into();
        let dir = temp_dir("names");
        let files = write_plots(&[r], &dir).unwrap();
        for f in files {
            assert_eq!(f.parent(), Some(dir.as_path()));
            assert!(f
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".._.._etc_x_y"));
        }
        assert_eq!(file_part(".."), "__");
    }

    #[test]
    fn an_unusable_directory_is_an_io_error() {
        let file = temp_dir("file");
        std::fs::write(&file, "not a directory").unwrap();
        let err = write_plots(&[record("ae", &[], Some(1.0))], &file.join("sub")).unwrap_err();
        assert!(matches!(err, LabError::Io { .. }), "{err}");
        assert!(!err.to_string().contains('\n'));
    }
}
