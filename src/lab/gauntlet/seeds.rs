//! The default strategy on the next seeds' gauntlets: the page's targets
//! are judged on one seed, and one draw of 200 paths can flatter or wrong
//! a strategy by a few cases. Running AE, the default and the previous default
//! on two more seeds shows how far the headline figures move.

use super::metrics::{self, StrategySummary};
use super::{GauntletPlan, AE_REDRAW, PREVIOUS_DEFAULT, TARGET_STRATEGY};
use crate::lab::strategy::Strategy;
use crate::lab::LabError;
use std::fmt::Write as _;

/// How many seeds after the page's own are run.
pub const EXTRA_SEEDS: u64 = 2;

/// The default strategy's summary on one seed.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedFigure {
    /// The seed of the draw.
    pub seed: u64,
    /// The default strategy against AE on that seed's cases.
    pub summary: StrategySummary,
    /// The previous default ([`PREVIOUS_DEFAULT`]) against AE on them.
    pub previous: StrategySummary,
    /// AE's second draw against AE, when the plan has
    /// [`ae_redraw`](GauntletPlan::ae_redraw): that seed's noise floor.
    pub redraw: Option<StrategySummary>,
}

/// Runs AE, the default strategy and the previous default on the `EXTRA_SEEDS` seeds after
/// `base.seed`, with `base`'s case count and jobs (no ns-2, no shard).
pub fn run(base: &GauntletPlan) -> Result<Vec<SeedFigure>, LabError> {
    let mut out = Vec::new();
    for k in 1..=EXTRA_SEEDS {
        let seed = base.seed.wrapping_add(k);
        let plan = GauntletPlan {
            seed,
            strategies: vec![Strategy::AE, TARGET_STRATEGY, PREVIOUS_DEFAULT],
            only_case: None,
            shard: None,
            ns2: false,
            ..base.clone()
        };
        let file = super::run(&plan)?;
        let summaries = metrics::summarise(&file.records, &file.strategies);
        let find = |strategy: Strategy| {
            summaries
                .iter()
                .find(|s| s.strategy == strategy.name())
                .cloned()
                .ok_or_else(|| LabError::Field {
                    field: "gauntlet".into(),
                    problem: format!("seed {seed} gave no summary for {strategy}"),
                })
        };
        out.push(SeedFigure {
            seed,
            summary: find(TARGET_STRATEGY)?,
            previous: find(PREVIOUS_DEFAULT)?,
            redraw: summaries.iter().find(|s| s.strategy == AE_REDRAW).cloned(),
        });
    }
    Ok(out)
}

/// The page's section: the page seed's figures beside the others', all
/// judged on the mean over `replicates` runs per (case, strategy); the
/// previous default's rows follow the default's when the page has them,
/// and AE's second draw (the noise floor) follows both when it ran.
pub fn section(
    out: &mut String,
    page: Option<&StrategySummary>,
    page_previous: Option<&StrategySummary>,
    page_redraw: Option<&StrategySummary>,
    page_seed: u64,
    replicates: u32,
    others: &[SeedFigure],
) {
    let Some(page) = page else {
        return;
    };
    if others.is_empty() {
        return;
    }
    let _ = writeln!(out, "## The default strategy on other seeds\n");
    let _ = writeln!(
        out,
        "The targets above are judged on seed {page_seed}. The same number of cases drawn from the next seeds, \
         with only `ae`, `{}` and `{}` run (`cargo run --release -- lab gauntlet --cases {} --seed S --strategies ae,{},{}{}{}`), \
         shows how much of a figure is the draw:\n",
        TARGET_STRATEGY.name(),
        PREVIOUS_DEFAULT.name(),
        page.cases,
        TARGET_STRATEGY.name(),
        PREVIOUS_DEFAULT.name(),
        if replicates > 1 {
            format!(" --replicates {replicates}")
        } else {
            String::new()
        },
        if page_redraw.is_some() {
            " --ae-redraw"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "| seed | strategy | completion p50 | p90 | worst | <= 1.05x | clearly > 1.05x | > 1.25x | ACKs p50 | RTOs on RTO-free paths (ae) | shared paths with more RTOs than ae | share p10 | share p90 | unfinished |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let row = |out: &mut String, seed: u64, s: &StrategySummary| {
        let (p10, p90) = s.share.map_or(("-".to_string(), "-".to_string()), |v| {
            (format!("{:.3}", v[0]), format!("{:.3}", v[2]))
        });
        let _ = writeln!(
            out,
            "| {seed} | `{}` | {:.3} | {:.3} | {:.3} | {:.0}% | {} | {:.0}% | {:.3} | {} ({}) on {} | {} of {} | {p10} | {p90} | {} |",
            s.strategy,
            s.completion[0],
            s.completion[1],
            s.completion[2],
            s.within_105 * 100.0,
            s.clearly_above_105,
            s.above_125 * 100.0,
            s.acks[0],
            metrics::count_text(s.rtos_on_free_paths),
            metrics::count_text(s.ae_rtos_on_free_paths),
            s.rto_free_paths,
            s.more_rtos_than_ae_shared,
            s.shared_paths,
            s.unfinished_cases
        );
    };
    row(out, page_seed, page);
    if let Some(c) = page_previous {
        row(out, page_seed, c);
    }
    if let Some(r) = page_redraw {
        row(out, page_seed, r);
    }
    for f in others {
        row(out, f.seed, &f.summary);
        if page_previous.is_some() {
            row(out, f.seed, &f.previous);
        }
        if let (Some(_), Some(r)) = (page_redraw, &f.redraw) {
            row(out, f.seed, r);
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_seeds_run_and_the_section_lists_every_seed() {
        let base = GauntletPlan {
            ae_redraw: true,
            ..GauntletPlan::new(5, 3)
        };
        let others = run(&base).unwrap();
        assert_eq!(
            others.iter().map(|f| f.seed).collect::<Vec<_>>(),
            vec![6, 7]
        );
        // The same seed gives the same figures.
        assert_eq!(run(&base).unwrap(), others);
        let page = others[0].summary.clone();
        let mut out = String::new();
        let previous = others[0].previous.clone();
        let redraw = others[0].redraw.clone();
        assert!(redraw.is_some() && others[1].redraw.is_some());
        section(
            &mut out,
            Some(&page),
            Some(&previous),
            redraw.as_ref(),
            5,
            1,
            &others,
        );
        assert!(out.contains("## The default strategy on other seeds"));
        assert!(out.contains(" --ae-redraw`"), "{out}");
        for seed in [5, 6, 7] {
            for strategy in [
                TARGET_STRATEGY.name(),
                PREVIOUS_DEFAULT.name(),
                AE_REDRAW.into(),
            ] {
                let row = format!("\n| {seed} | `{strategy}` | ");
                assert!(out.contains(&row), "{out}");
            }
        }
        // Nothing to compare, no section.
        let mut empty = String::new();
        section(&mut empty, Some(&page), None, None, 5, 1, &[]);
        section(&mut empty, None, None, None, 5, 1, &others);
        assert!(empty.is_empty());
    }
}
