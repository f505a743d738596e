//! Fig. 11 over start phases: the fairness figures again with the
//! compared flows started a little later each time.
//!
//! The fig. 11 points draw nothing at random (drop-tail, no random loss),
//! so every seed gives the same run, and with a few long-lived flows of
//! nearly equal RTT which flow loses at each overflow is decided by the
//! flows' relative phase. One run's Jain index can then be a matter of
//! luck in either direction: at 4 flows and 15 Mbit/s, `4w` against
//! `ae` gives 0.825 with one start and 0.99 with a start 2 ms later.
//! Shifting the compared group's start over one stagger interval and
//! averaging separates what the mechanism does from where the phases
//! fell.

use super::super::*;

/// Phases run: the compared group starts `k * PHASE_STEP` later than in
/// the preset, `k` from 0 (the preset itself) to `PHASES - 1`, which
/// covers the preset's 20 ms stagger between flows of a group.
const PHASES: u32 = 10;
/// Shift between two phases.
const PHASE_STEP: Duration = Duration::from_millis(2);
/// Strategies run at every phase: AE against AE, the three whose
/// fairness the paper's goal judges, and ackwise's default.
pub(super) const STRATEGIES: [&str; 5] =
    ["ae", "4w", "4waf", "4w-adaptive", Strategy::DEFAULT_NAME];
/// The parameter each record carries for its phase.
const PHASE_PARAM: &str = "start_shift_ms";

/// `p003-fig11` once per phase, every point, with [`STRATEGIES`]; each
/// record's parameters include its phase.
pub(super) fn run(plan: &ReportPlan) -> Result<Vec<RunRecord>, LabError> {
    let preset = presets::find("p003-fig11")?;
    let mut shifted = preset.clone();
    shifted.points.clear();
    for k in 0..PHASES {
        let shift = PHASE_STEP * k;
        for point in &preset.points {
            let mut p = point.clone();
            // The compared group is the forward group without a pinned
            // strategy; AE and the reverse flows keep their starts.
            for g in &mut p.scenario.flows {
                if g.strategy.is_none() && !g.reverse {
                    g.start += shift;
                }
            }
            p.params.push((PHASE_PARAM, shift.as_secs_f64() * 1e3));
            shifted.points.push(p);
        }
    }
    run_with_strategies(shifted, &STRATEGIES, plan)
}

/// Over the phases at one point for one strategy.
#[derive(Debug, Clone, Copy)]
pub(super) struct OverPhases {
    /// Mean Jain index.
    pub mean: f64,
    /// Lowest Jain index.
    pub lowest: f64,
    /// Mean of the compared flows' throughput over the AE flows'.
    pub share: Option<f64>,
}

/// A point: the preset's own parameters (the phase left out), values as
/// bits so that points can be keys.
type PointKey = Vec<(String, u64)>;

/// Per point and strategy.
pub(super) type PhaseTable = BTreeMap<(PointKey, String), OverPhases>;

/// Folds the phase runs into [`OverPhases`] per point and strategy.
pub(super) fn summarize(records: &[RunRecord]) -> PhaseTable {
    let mut runs: BTreeMap<(PointKey, String), Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        let point: PointKey = r
            .params
            .iter()
            .filter(|(k, _)| k.as_str() != PHASE_PARAM)
            .map(|(k, v)| (k.clone(), v.to_bits()))
            .collect();
        runs.entry((point, r.strategy.clone())).or_default().push(r);
    }
    let mut out = PhaseTable::new();
    for (key, rs) in runs {
        let jains: Vec<f64> = rs.iter().filter_map(|r| r.jain_index).collect();
        if jains.is_empty() {
            continue;
        }
        let shares: Vec<f64> = rs.iter().filter_map(|r| share_against_ae(r)).collect();
        out.insert(
            key,
            OverPhases {
                mean: jains.iter().sum::<f64>() / jains.len() as f64,
                lowest: jains.iter().copied().fold(f64::INFINITY, f64::min),
                share: (!shares.is_empty())
                    .then(|| shares.iter().sum::<f64>() / shares.len() as f64),
            },
        );
    }
    out
}

/// `flows = 4, rate_mbps = 15` for a point key.
fn point_words(point: &[(String, u64)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k} = {}", format_number(f64::from_bits(*v), 3)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lowest phase-mean Jain index of `strategy` and where it is.
pub(super) fn lowest_mean(table: &PhaseTable, strategy: &str) -> Option<(String, f64)> {
    table
        .iter()
        .filter(|((_, s), _)| s == strategy)
        .map(|((p, _), o)| (point_words(p), o.mean))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The largest amount by which `strategy`'s phase-mean Jain index falls
/// below AE against AE's at the same point, and where.
pub(super) fn widest_gap(table: &PhaseTable, strategy: &str) -> Option<(String, f64)> {
    table
        .iter()
        .filter(|((_, s), _)| s == strategy)
        .filter_map(|((p, _), o)| {
            let ae = table.get(&(p.clone(), "ae".to_string()))?;
            Some((point_words(p), ae.mean - o.mean))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The section: one table of phase-mean Jain indexes (lowest in
/// brackets) and one of the compared flows' phase-mean share.
pub(super) fn section(md: &mut String, table: &PhaseTable) {
    // Keys sort by point, then strategy; positive parameters sort by
    // their bits as by value.
    let mut points: Vec<&PointKey> = table.keys().map(|(p, _)| p).collect();
    points.dedup();
    let Some(first) = points.first() else {
        return;
    };
    let _ = writeln!(
        md,
        "### Over {PHASES} start phases\n\n\
         The same points with the compared flows started 0, {step}, ..., {last} ms later \
         than above (one stagger interval); nothing else changes. With nothing drawn at \
         random every seed gives the same run, so the start is what moves which flow \
         loses at each overflow. Mean Jain index over the phases, the lowest in brackets:\n",
        step = PHASE_STEP.as_millis(),
        last = PHASE_STEP.as_millis() * u128::from(PHASES - 1),
    );
    let head: Vec<&str> = first.iter().map(|(k, _)| k.as_str()).collect();
    let header = |md: &mut String| {
        let _ = writeln!(md, "| {} | {} |", head.join(" | "), STRATEGIES.join(" | "));
        let _ = writeln!(
            md,
            "|{}|{}|",
            "---|".repeat(head.len()).trim_end_matches('|'),
            "---:|".repeat(STRATEGIES.len()).trim_end_matches('|')
        );
    };
    let values = |p: &PointKey| -> Vec<String> {
        p.iter()
            .map(|(_, v)| format_number(f64::from_bits(*v), 3))
            .collect()
    };
    header(md);
    for p in &points {
        let cells: Vec<String> = STRATEGIES
            .iter()
            .map(|s| match table.get(&((*p).clone(), s.to_string())) {
                Some(o) => format!("{:.3} ({:.3})", o.mean, o.lowest),
                None => "-".into(),
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", values(p).join(" | "), cells.join(" | "));
    }
    let _ = writeln!(
        md,
        "\nMean throughput of the compared flows over that of the AE flows, over the phases:\n"
    );
    header(md);
    for p in &points {
        let cells: Vec<String> = STRATEGIES
            .iter()
            .map(|s| {
                table
                    .get(&((*p).clone(), s.to_string()))
                    .and_then(|o| o.share)
                    .map_or("-".into(), |v| format!("{v:.3}"))
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", values(p).join(" | "), cells.join(" | "));
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn record(strategy: &str, flows: f64, shift: f64, jain: f64) -> RunRecord {
        RunRecord {
            preset: "p003-fig11".into(),
            strategy: strategy.into(),
            seed: 1,
            params: BTreeMap::from([
                ("flows".to_string(), flows),
                (PHASE_PARAM.to_string(), shift),
            ]),
            flows: Vec::new(),
            links: Vec::new(),
            jain_index: Some(jain),
            all_finished: false,
            simulated_s: 100.0,
            measured_s: 60.0,
            series: None,
        }
    }

    #[test]
    fn phases_fold_into_one_row_per_point_and_strategy() {
        let records = [
            record("ae", 4.0, 0.0, 0.98),
            record("ae", 4.0, 2.0, 0.96),
            record("4w", 4.0, 0.0, 0.80),
            record("4w", 4.0, 2.0, 0.90),
            record("4w", 8.0, 0.0, 0.95),
            record("ae", 8.0, 0.0, 0.97),
        ];
        let table = summarize(&records);
        assert_eq!(table.len(), 4);
        let (at, low) = lowest_mean(&table, "4w").unwrap();
        assert_eq!(at, "flows = 4");
        assert!((low - 0.85).abs() < 1e-12);
        let (at, gap) = widest_gap(&table, "4w").unwrap();
        assert_eq!(at, "flows = 4");
        assert!((gap - 0.12).abs() < 1e-12, "{gap}");
        let four = &table[&(
            vec![("flows".to_string(), 4f64.to_bits())],
            "4w".to_string(),
        )];
        assert_eq!(four.lowest, 0.80);
        let mut md = String::new();
        section(&mut md, &table);
        assert!(
            md.contains(&format!(
                "| flows | ae | 4w | 4waf | 4w-adaptive | {} |",
                Strategy::DEFAULT_NAME
            )),
            "{md}"
        );
        assert!(
            md.contains("| 4 | 0.970 (0.960) | 0.850 (0.800) | - | - | - |"),
            "{md}"
        );
        assert!(
            md.contains("| 8 | 0.970 (0.970) | 0.950 (0.950) | - | - | - |"),
            "{md}"
        );
    }
}
