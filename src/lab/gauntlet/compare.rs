//! Two gauntlet runs of the same draw, compared case by case (or
//! several such pairs, pooled: [`compare_runs`]).
//!
//! A change to a strategy moves some cases one way and others the other
//! way, and on paths shared with other flows the moves are as much the
//! flows' phases as the change. The count of cases within 1.05x of AE
//! hides this: ackwise's gauntlet measured a change that made the default
//! strategy 0.58% faster on the geometric mean of 1 000 cases (three
//! standard errors) leave that count at 91.3% against 91.4%. Comparing
//! the two runs case by case, on the same draw, measures the change
//! itself: for every case the log of (after / before) of the strategy's
//! completion relative to AE's in the same file, then the mean of those
//! logs, its standard error, and how many cases moved by more than 2%
//! each way, over all cases and by kind of path. Single-flow paths have
//! no phase to draw, so a change shows there first.

use super::draw::CaseParams;
use super::metrics::{clearly_above, relatives, replicate_means, WITHIN_RATIO};
use super::GauntletFile;
use crate::lab::LabError;
use std::collections::BTreeMap;

/// A case moves by more than this factor either way to count as faster
/// or slower.
pub const MOVE: f64 = 1.02;

/// The kinds of path the comparison groups cases by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathKind {
    /// One flow, the strategy's own.
    OneFlow,
    /// Several flows, all the strategy's.
    SeveralFlows,
    /// AE or delayed-ACK competitor flows beside the strategy's.
    Competitors,
}

impl PathKind {
    /// The kind of a case.
    pub fn of(params: &CaseParams) -> PathKind {
        if params.flows.iter().any(|f| f.competitor.is_some()) {
            PathKind::Competitors
        } else if params.flows.len() == 1 {
            PathKind::OneFlow
        } else {
            PathKind::SeveralFlows
        }
    }

    fn label(kind: Option<PathKind>) -> &'static str {
        match kind {
            None => "all paths",
            Some(PathKind::OneFlow) => "one flow",
            Some(PathKind::SeveralFlows) => "several flows",
            Some(PathKind::Competitors) => "with competitors",
        }
    }
}

/// One strategy over one group of cases.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupChange {
    /// The group; `None` for all cases.
    pub kind: Option<PathKind>,
    /// Cases in both files.
    pub cases: usize,
    /// Mean over the cases of ln(after / before) of the completion ratio
    /// to AE: negative is faster. `exp` of it is the change of the
    /// geometric mean.
    pub mean_log_change: f64,
    /// Standard error of that mean (0 with fewer than two cases).
    pub standard_error: f64,
    /// Cases more than [`MOVE`] faster after.
    pub faster: usize,
    /// Cases more than [`MOVE`] slower after.
    pub slower: usize,
    /// Cases within [`WITHIN_RATIO`] of AE's completion before.
    pub within_before: usize,
    /// The same after.
    pub within_after: usize,
    /// Cases [`clearly_above`] 1.05x of AE before: slower beyond what
    /// the replicates' spread explains.
    pub clearly_before: usize,
    /// The same after.
    pub clearly_after: usize,
}

/// One strategy's comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyChange {
    /// The strategy's name.
    pub strategy: String,
    /// All cases first, then each kind of path that has cases.
    pub groups: Vec<GroupChange>,
}

/// Compares `after` with `before` for every strategy both files judge,
/// on the cases both hold. Replicates are averaged first, as the
/// gauntlet judges them. The files must come from the same draw: the
/// same seed and, case by case, the same path.
pub fn compare(
    before: &GauntletFile,
    after: &GauntletFile,
) -> Result<Vec<StrategyChange>, LabError> {
    compare_runs(&[(before, after)])
}

/// [`compare`] pooled over several pairs of runs, each pair of one draw
/// (typically one seed each): every case of every pair counts once, so
/// five seeds of 200 cases judge a change on 1 000. The strategies
/// compared are those every file judges.
pub fn compare_runs(
    runs: &[(&GauntletFile, &GauntletFile)],
) -> Result<Vec<StrategyChange>, LabError> {
    let bad = |problem: String| LabError::Field {
        field: "lab compare".into(),
        problem,
    };
    let Some((first, _)) = runs.first() else {
        return Err(bad("needs at least one pair of files".into()));
    };
    let mut judged: Vec<PairCases> = Vec::new();
    for (before, after) in runs {
        if before.seed != after.seed {
            return Err(bad(format!(
                "the files are of seeds {} and {}: compare two runs of the same draw",
                before.seed, after.seed
            )));
        }
        let clearly = |file: &GauntletFile| -> BTreeMap<(u64, String), bool> {
            relatives(&file.records)
                .into_iter()
                .map(|r| ((r.case, r.strategy.clone()), clearly_above(&r)))
                .collect()
        };
        judged.push(PairCases {
            before: ratios(before),
            after: ratios(after),
            clearly_before: clearly(before),
            clearly_after: clearly(after),
        });
    }
    let strategies: Vec<&String> = first
        .strategies
        .iter()
        .filter(|s| {
            s.as_str() != "ae"
                && runs
                    .iter()
                    .all(|(b, a)| b.strategies.contains(s) && a.strategies.contains(s))
        })
        .collect();
    if strategies.is_empty() {
        return Err(bad(
            "the files judge no strategy in common besides ae".into()
        ));
    }
    let mut out = Vec::new();
    for strategy in strategies {
        // (kind, ratio before, ratio after, clearly above 1.05x before,
        // after) per case in both files of a pair.
        let mut pairs: Vec<Pair> = Vec::new();
        for run in &judged {
            for ((case, s), (params, b)) in &run.before {
                if s != strategy {
                    continue;
                }
                let Some((params_after, a)) = run.after.get(&(*case, s.clone())) else {
                    continue;
                };
                if params != params_after {
                    return Err(bad(format!(
                        "case {case} is not the same path in the two files: compare two runs of the same draw"
                    )));
                }
                let key = (*case, s.clone());
                pairs.push((
                    PathKind::of(params),
                    *b,
                    *a,
                    run.clearly_before.get(&key) == Some(&true),
                    run.clearly_after.get(&key) == Some(&true),
                ));
            }
        }
        if pairs.is_empty() {
            return Err(bad(format!("no case of `{strategy}` is in both files")));
        }
        let mut groups = vec![group(None, &pairs)];
        for kind in [
            PathKind::OneFlow,
            PathKind::SeveralFlows,
            PathKind::Competitors,
        ] {
            let of_kind: Vec<_> = pairs.iter().copied().filter(|p| p.0 == kind).collect();
            if !of_kind.is_empty() {
                groups.push(group(Some(kind), &of_kind));
            }
        }
        out.push(StrategyChange {
            strategy: strategy.clone(),
            groups,
        });
    }
    Ok(out)
}

/// One pair of runs, judged: per (case, strategy) the path and the
/// completion ratio to AE, and whether it is clearly above 1.05x.
struct PairCases {
    before: BTreeMap<(u64, String), (CaseParams, f64)>,
    after: BTreeMap<(u64, String), (CaseParams, f64)>,
    clearly_before: BTreeMap<(u64, String), bool>,
    clearly_after: BTreeMap<(u64, String), bool>,
}

/// Per (case, strategy) of a file: the case's path and the strategy's
/// mean completion over AE's mean in the same file. Cases where AE's
/// completion is not positive are left out (nothing to divide by).
fn ratios(file: &GauntletFile) -> BTreeMap<(u64, String), (CaseParams, f64)> {
    let means = replicate_means(&file.records);
    let ae: BTreeMap<u64, f64> = means
        .iter()
        .filter(|m| m.first.strategy == "ae")
        .map(|m| (m.first.case, m.completion_s))
        .collect();
    means
        .iter()
        .filter_map(|m| {
            let base = *ae.get(&m.first.case)?;
            (base > 0.0 && m.completion_s > 0.0).then(|| {
                (
                    (m.first.case, m.first.strategy.clone()),
                    (m.first.params.clone(), m.completion_s / base),
                )
            })
        })
        .collect()
}

/// A case in both files: its kind of path, the completion ratio to AE
/// before and after, and whether it was clearly above 1.05x before and
/// after.
type Pair = (PathKind, f64, f64, bool, bool);

fn group(kind: Option<PathKind>, pairs: &[Pair]) -> GroupChange {
    let logs: Vec<f64> = pairs.iter().map(|&(_, b, a, _, _)| (a / b).ln()).collect();
    let n = logs.len();
    let mean = logs.iter().sum::<f64>() / n as f64;
    let standard_error = if n > 1 {
        let variance = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (variance / n as f64).sqrt()
    } else {
        0.0
    };
    let limit = MOVE.ln();
    GroupChange {
        kind,
        cases: n,
        mean_log_change: mean,
        standard_error,
        faster: logs.iter().filter(|&&x| x < -limit).count(),
        slower: logs.iter().filter(|&&x| x > limit).count(),
        within_before: pairs.iter().filter(|p| p.1 <= WITHIN_RATIO).count(),
        within_after: pairs.iter().filter(|p| p.2 <= WITHIN_RATIO).count(),
        clearly_before: pairs.iter().filter(|p| p.3).count(),
        clearly_after: pairs.iter().filter(|p| p.4).count(),
    }
}

/// The comparison as a table for the terminal. The change is shown as a
/// percentage of the geometric mean of the completion ratios
/// (`exp(mean) - 1`), with its standard error.
pub fn table(changes: &[StrategyChange]) -> String {
    let width = changes.iter().map(|c| c.strategy.len()).fold(8, usize::max);
    let mut out = format!(
        "{:<width$}  {:<16} {:>5} {:>8} {:>6} {:>7} {:>7}  {:<16}  clearly above 1.05x\n",
        "strategy", "paths", "cases", "change", "SE", "faster", "slower", "within 1.05x"
    );
    for c in changes {
        for (i, g) in c.groups.iter().enumerate() {
            let name = if i == 0 { c.strategy.as_str() } else { "" };
            let pct = |n: usize| 100.0 * n as f64 / g.cases as f64;
            out.push_str(&format!(
                "{:<width$}  {:<16} {:>5} {:>+7.2}% {:>5.2}% {:>7} {:>7}  {:<16}  {} -> {}\n",
                name,
                PathKind::label(g.kind),
                g.cases,
                100.0 * g.mean_log_change.exp_m1(),
                100.0 * g.standard_error,
                g.faster,
                g.slower,
                format!(
                    "{:.1}% -> {:.1}%",
                    pct(g.within_before),
                    pct(g.within_after)
                ),
                g.clearly_before,
                g.clearly_after,
            ));
        }
    }
    out.push_str(
        "change: the geometric mean of the completion ratio to ae, after against before \
         (negative: faster), and its standard error\n",
    );
    out.push_str(&format!(
        "faster, slower: cases whose ratio moved by more than {:.0}%; clearly above: by more than {} standard errors of the replicates\n",
        100.0 * (MOVE - 1.0),
        super::metrics::CLEARLY_STANDARD_ERRORS
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::gauntlet::GauntletPlan;
    use crate::lab::Strategy;

    fn small_run() -> GauntletFile {
        let mut plan = GauntletPlan::new(1, 6);
        plan.strategies = vec![Strategy::DAL2];
        plan.jobs = 2;
        crate::lab::gauntlet::run(&plan).unwrap()
    }

    /// `file` with dal2's completion halved on its first case.
    fn first_case_twice_as_fast(file: &GauntletFile) -> GauntletFile {
        let mut after = file.clone();
        let case = after.records[0].case;
        for r in after
            .records
            .iter_mut()
            .filter(|r| r.case == case && r.strategy == "dal2")
        {
            r.outcome.completion_s /= 2.0;
        }
        after
    }

    #[test]
    fn a_run_against_itself_changes_nothing() {
        let file = small_run();
        let changes = compare(&file, &file).unwrap();
        assert_eq!(changes.len(), 1);
        let all = &changes[0].groups[0];
        assert_eq!(all.kind, None);
        assert_eq!(all.cases, 6);
        assert_eq!(all.mean_log_change, 0.0);
        assert_eq!(all.standard_error, 0.0);
        assert_eq!((all.faster, all.slower), (0, 0));
        assert_eq!(all.within_before, all.within_after);
        let kinds: usize = changes[0].groups[1..].iter().map(|g| g.cases).sum();
        assert_eq!(kinds, 6);
    }

    #[test]
    fn a_case_made_faster_shows_as_faster() {
        let before = small_run();
        let after = first_case_twice_as_fast(&before);
        let changes = compare(&before, &after).unwrap();
        let all = &changes[0].groups[0];
        assert_eq!((all.faster, all.slower), (1, 0));
        // One case of six at half the ratio: the mean log is ln(0.5) / 6.
        assert!((all.mean_log_change - 0.5f64.ln() / 6.0).abs() < 1e-12);
        assert!(all.standard_error > 0.0);
        let text = table(&changes);
        assert!(text.contains("dal2"), "{text}");
        assert!(text.contains("-10.91%"), "{text}");
    }

    #[test]
    fn cases_made_slower_than_ae_count_as_clearly_above_after() {
        // One replicate: no spread, so any ratio above 1.05 is clearly
        // so. Before, dal2 takes AE's time on every case; after, twice it.
        let mut before = small_run();
        let ae: BTreeMap<u64, f64> = before
            .records
            .iter()
            .filter(|r| r.strategy == "ae")
            .map(|r| (r.case, r.outcome.completion_s))
            .collect();
        let mut after = before.clone();
        for (file, factor) in [(&mut before, 1.0), (&mut after, 2.0)] {
            for r in file.records.iter_mut().filter(|r| r.strategy == "dal2") {
                r.outcome.completion_s = factor * ae[&r.case];
            }
        }
        let changes = compare(&before, &after).unwrap();
        let all = &changes[0].groups[0];
        assert_eq!((all.clearly_before, all.clearly_after), (0, 6), "{all:?}");
        let text = table(&changes);
        assert!(text.contains("0 -> 6"), "{text}");
    }

    #[test]
    fn pairs_of_runs_pool_their_cases() {
        // The same pair twice: twice the cases, the same mean change and
        // counts doubled; a pair against itself beside it halves the
        // mean.
        let before = small_run();
        let after = first_case_twice_as_fast(&before);
        let one = compare(&before, &after).unwrap();
        let two = compare_runs(&[(&before, &after), (&before, &after)]).unwrap();
        let (g1, g2) = (&one[0].groups[0], &two[0].groups[0]);
        assert_eq!(g2.cases, 2 * g1.cases);
        assert!((g2.mean_log_change - g1.mean_log_change).abs() < 1e-12);
        assert_eq!((g2.faster, g2.slower), (2, 0));
        let mixed = compare_runs(&[(&before, &after), (&before, &before)]).unwrap();
        let g = &mixed[0].groups[0];
        assert!((g.mean_log_change - g1.mean_log_change / 2.0).abs() < 1e-12);
        assert_eq!(g.faster, 1);
        // Each pair must be one draw.
        let mut other = before.clone();
        other.seed = 2;
        let err = compare_runs(&[(&before, &after), (&before, &other)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("same draw"), "{err}");
        assert!(compare_runs(&[]).is_err());
    }

    #[test]
    fn runs_of_different_draws_are_refused() {
        let before = small_run();
        let mut after = before.clone();
        after.seed = 2;
        let err = compare(&before, &after).unwrap_err().to_string();
        assert!(err.contains("same draw"), "{err}");
        let mut other_path = before.clone();
        for r in other_path.records.iter_mut() {
            r.params.rate_bps += 1;
        }
        let err = compare(&before, &other_path).unwrap_err().to_string();
        assert!(err.contains("not the same path"), "{err}");
        let mut no_common = before.clone();
        no_common.strategies.retain(|s| s == "ae");
        let err = compare(&before, &no_common).unwrap_err().to_string();
        assert!(err.contains("no strategy in common"), "{err}");
    }
}
