//! Results pages: run a paper's presets and write a Markdown page with
//! tables, SVG plots and a plain comparison with the paper's figures
//! (`ackwise lab report paper-003`, `ackwise lab report paper-004`).

use super::plot::first_appearance;
use super::presets::{self, Preset};
use super::run::{self, RunPlan, RunRecord};
use super::strategy::{NetAck, Strategy};
use super::LabError;
use crate::time::Duration;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod ack_management;
mod paper_003;
mod paper_004;
#[cfg(feature = "quic")]
mod quic;
mod speed;
#[cfg(test)]
mod tests;

use ack_management::ack_management;
use paper_003::paper_003;
use paper_004::paper_004;

/// The pages `ackwise lab report` can write.
pub const PAGES: [&str; 6] = [
    "paper-003",
    "paper-004",
    "ack-management",
    "gauntlet",
    "quic",
    "speed",
];

/// What to write and how to run it.
#[derive(Debug, Clone)]
pub struct ReportPlan {
    /// The page, one of [`PAGES`].
    pub page: String,
    /// Directory for `<page>.md` and `<page>/` (plots).
    pub out_dir: PathBuf,
    /// Seed of every run.
    pub seed: u64,
    /// Runs in parallel.
    pub jobs: usize,
    /// Progress on stderr.
    pub progress: bool,
}

/// Mean throughput of the compared flows over that of the AE flows
/// (left to right only): 1 is a fair share.
fn share_against_ae(r: &RunRecord) -> Option<f64> {
    let mean = |ae: bool| {
        let x: Vec<f64> = r
            .flows
            .iter()
            .filter(|f| !f.reverse && (f.strategy == "ae") == ae)
            .map(|f| f.throughput_bps)
            .collect();
        (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64)
    };
    let (other, ae) = (mean(false)?, mean(true)?);
    (ae > 0.0).then(|| other / ae)
}

fn jain(r: &RunRecord) -> Option<f64> {
    r.jain_index
}

/// A Markdown table: one row per point (the swept parameters), one
/// column per strategy. Records of several presets get a leading
/// `preset` column, so one table can set configurations side by side.
fn table(
    records: &[RunRecord],
    metric: impl Fn(&RunRecord) -> Option<f64>,
    decimals: usize,
) -> String {
    let strategies: Vec<&str> = first_appearance(records.iter().map(|r| r.strategy.as_str()));
    let by_preset = first_appearance(records.iter().map(|r| r.preset.as_str())).len() > 1;
    let params: Vec<&String> = records
        .first()
        .map(|r| r.params.keys().collect())
        .unwrap_or_default();
    let mut rows: Vec<(String, BTreeMap<&str, Option<f64>>)> = Vec::new();
    for r in records {
        let mut key: Vec<String> = Vec::new();
        if by_preset {
            key.push(r.preset.clone());
        }
        key.extend(params.iter().map(|p| match r.params.get(*p) {
            Some(v) => format_number(*v, 3),
            None => "-".into(),
        }));
        let key = key.join(" | ");
        let row = match rows.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                rows.push((key, BTreeMap::new()));
                rows.len() - 1
            }
        };
        rows[row].1.insert(r.strategy.as_str(), metric(r));
    }
    let mut out = String::new();
    let mut head: Vec<String> = Vec::new();
    if by_preset {
        head.push("preset".into());
    }
    head.extend(params.iter().map(|p| p.to_string()));
    let _ = writeln!(out, "| {} | {} |", head.join(" | "), strategies.join(" | "));
    let _ = writeln!(
        out,
        "|{}|{}|",
        "---|".repeat(head.len()).trim_end_matches('|'),
        "---:|".repeat(strategies.len()).trim_end_matches('|')
    );
    for (key, cells) in rows {
        let values: Vec<String> = strategies
            .iter()
            .map(|s| match cells.get(s).copied().flatten() {
                Some(v) => format_number(v, decimals),
                None => "-".into(),
            })
            .collect();
        let _ = writeln!(out, "| {key} | {} |", values.join(" | "));
    }
    out
}

fn format_number(v: f64, decimals: usize) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{v:.0}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// The record of `strategy` at the same point of the same preset as `r`.
fn same_point<'a>(
    records: &'a [RunRecord],
    r: &RunRecord,
    strategy: &str,
) -> Option<&'a RunRecord> {
    records
        .iter()
        .find(|b| b.strategy == strategy && b.preset == r.preset && b.params == r.params)
}

/// `p004-1-0 at rate_mbps = 5`: a point, for the page's prose.
fn point_text(r: &RunRecord) -> String {
    let params: Vec<String> = r
        .params
        .iter()
        .map(|(k, v)| format!("{k} = {}", format_number(*v, 3)))
        .collect();
    if params.is_empty() {
        r.preset.clone()
    } else {
        format!("{} at {}", r.preset, params.join(", "))
    }
}

/// The record of `strategy` at the point whose parameters are `params`.
fn find<'a>(
    records: &'a [RunRecord],
    strategy: &str,
    params: &[(&str, f64)],
) -> Option<&'a RunRecord> {
    records.iter().find(|r| {
        r.strategy == strategy
            && params
                .iter()
                .all(|(k, v)| r.params.get(*k).is_some_and(|x| (x - v).abs() < 1e-9))
    })
}

/// One comparison line: what the paper reports, what ackwise measured,
/// and the verdict (within `tolerance` counts as a match).
struct Check {
    what: String,
    paper: Option<f64>,
    ackwise: Option<f64>,
    higher_is_better: bool,
    tolerance: f64,
    /// Decimals shown (ratios need more than percentages).
    decimals: usize,
}

impl Check {
    fn verdict(&self) -> &'static str {
        match (self.paper, self.ackwise) {
            (_, None) => "no result",
            (None, Some(_)) => "-",
            (Some(p), Some(a)) if (a - p).abs() <= self.tolerance => "matches",
            (Some(p), Some(a)) if (a > p) == self.higher_is_better => "beats",
            _ => "misses",
        }
    }
}

fn checks_table(checks: &[Check]) -> String {
    let mut out = String::from("| what | paper | ackwise | verdict |\n|---|---:|---:|---|\n");
    for c in checks {
        let d = c.decimals;
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            c.what,
            f(c.paper),
            f(c.ackwise),
            c.verdict()
        );
    }
    out
}

/// The verdicts in words: which claims ackwise matches, beats or
/// misses, each with its two numbers. A line's claim is its `what` up to
/// the first "; " (the rest says how the number was taken, which the
/// table already shows).
fn verdict_prose(checks: &[Check]) -> String {
    let mut out = String::new();
    for (verdict, words) in [
        ("matches", "ackwise matches"),
        ("beats", "ackwise beats"),
        ("misses", "ackwise misses"),
        ("no result", "no result (some flow did not finish) for"),
    ] {
        let lines: Vec<String> = checks
            .iter()
            .filter(|c| c.verdict() == verdict)
            .map(|c| {
                let claim = c.what.split("; ").next().unwrap_or_default();
                let d = c.decimals;
                match (c.ackwise, c.paper) {
                    (Some(a), Some(p)) => format!("{claim} ({a:.d$} against {p:.d$})"),
                    _ => claim.to_string(),
                }
            })
            .collect();
        if !lines.is_empty() {
            let _ = writeln!(out, "- {words}: {}.", lines.join("; "));
        }
    }
    out
}

fn run_preset(name: &str, plan: &ReportPlan) -> Result<Vec<RunRecord>, LabError> {
    run_points(presets::find(name)?, plan, None)
}

/// Runs every point of `preset` with its strategies, sampling time
/// series every `sample_interval` when given.
fn run_points(
    preset: Preset,
    plan: &ReportPlan,
    sample_interval: Option<Duration>,
) -> Result<Vec<RunRecord>, LabError> {
    if plan.progress {
        eprintln!(
            "report: {} ({} points x {} strategies{})",
            preset.name,
            preset.points.len(),
            preset.strategies.len(),
            if sample_interval.is_some() {
                ", time series"
            } else {
                ""
            }
        );
    }
    let run_plan = RunPlan {
        strategies: preset.strategies.clone(),
        preset,
        seed: plan.seed,
        jobs: plan.jobs,
        shard: None,
        sample_interval,
        pcap_dir: None,
    };
    run::run(&run_plan, plan.progress)
}

/// Runs every point of `preset` with `strategies` (lab names, options
/// allowed) instead of the preset's own.
fn run_with_strategies(
    mut preset: Preset,
    strategies: &[&str],
    plan: &ReportPlan,
) -> Result<Vec<RunRecord>, LabError> {
    preset.strategies = strategies
        .iter()
        .map(|s| s.parse())
        .collect::<Result<Vec<Strategy>, _>>()?;
    run_points(preset, plan, None)
}

/// `preset` with only the points whose `param` is one of `values`; an
/// error rather than an empty run when none is.
fn only_points(mut preset: Preset, param: &str, values: &[f64]) -> Result<Preset, LabError> {
    preset.points.retain(|p| {
        p.params
            .iter()
            .any(|(k, v)| *k == param && values.iter().any(|w| (v - w).abs() < 1e-9))
    });
    if preset.points.is_empty() {
        return Err(LabError::Field {
            field: format!("{} points", preset.name),
            problem: format!("none has {param} in {values:?}"),
        });
    }
    Ok(preset)
}

fn write(path: &Path, text: &str) -> Result<(), LabError> {
    std::fs::write(path, text).map_err(|source| LabError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Runs the page's experiments and writes it; returns the Markdown file.
pub fn write_report(plan: &ReportPlan) -> Result<PathBuf, LabError> {
    // Before any run: a page that cannot be written should not cost the
    // minutes of its experiments first.
    std::fs::create_dir_all(&plan.out_dir).map_err(|source| LabError::Io {
        path: plan.out_dir.display().to_string(),
        source,
    })?;
    match plan.page.as_str() {
        "paper-003" => paper_003(plan),
        "paper-004" => paper_004(plan),
        "ack-management" => ack_management(plan),
        "speed" => speed::speed_page(plan),
        "gauntlet" => super::gauntlet::page::write_report(&plan.into()),
        #[cfg(feature = "quic")]
        "quic" => quic::quic_page(plan),
        #[cfg(not(feature = "quic"))]
        "quic" => Err(LabError::Field {
            field: "report".into(),
            problem: "the quic page needs ackwise built with feature `quic`".into(),
        }),
        other => Err(LabError::Field {
            field: "report".into(),
            problem: format!("unknown page `{other}` (known: {})", PAGES.join(", ")),
        }),
    }
}

fn plots(records: &[RunRecord], dir: &Path) -> Result<Vec<String>, LabError> {
    Ok(relative_paths(
        &super::plot::write_plots(records, dir)?,
        dir,
    ))
}

/// Only the window plots of the records with time series.
fn series_plots(records: &[RunRecord], dir: &Path) -> Result<Vec<String>, LabError> {
    Ok(relative_paths(
        &super::plot::write_series_plots(records, dir)?,
        dir,
    ))
}

/// `<dir name>/<file name>`: how the page, which sits next to `dir`,
/// links to a plot.
fn relative_paths(files: &[PathBuf], dir: &Path) -> Vec<String> {
    files
        .iter()
        .filter_map(|f| {
            let name = f.file_name()?.to_string_lossy().into_owned();
            let parent = dir.file_name()?.to_string_lossy().into_owned();
            Some(format!("{parent}/{name}"))
        })
        .collect()
}

fn plot_links(out: &mut String, files: &[String], wanted: &[&str]) {
    for f in files {
        if wanted.iter().any(|w| f.contains(w)) {
            let _ = writeln!(out, "![{f}]({f})");
        }
    }
    out.push('\n');
}

/// `<out>/<page>/`, created if missing, where a page's plots go.
fn plot_dir(plan: &ReportPlan, page: &str) -> Result<PathBuf, LabError> {
    let dir = plan.out_dir.join(page);
    std::fs::create_dir_all(&dir).map_err(|source| LabError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    Ok(dir)
}
