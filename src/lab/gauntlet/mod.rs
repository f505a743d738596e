//! `ackwise lab gauntlet`: every strategy against AE on a seeded random
//! family of paths (issue 18). The presets show that the papers
//! reproduce; the gauntlet shows whether the promise (far fewer ACKs, no
//! loss of throughput) holds anywhere in the drawn ranges.
//!
//! - [`draw`] draws case `k` of seed `s` from an RNG keyed by `(s, k)`;
//! - [`metrics`] holds the per-run figures and the comparison with AE;
//! - [`merge`] joins shard files into the file of an unsharded run;
//! - [`page`] writes `docs/results/gauntlet.md`;
//! - [`medium`] adds the shared-medium target to that page;
//! - [`ns2check`] runs the ns-2 baseline check of the cases it can express.
//!
//! ```no_run
//! use ackwise::lab::gauntlet::{self, GauntletPlan};
//!
//! let file = gauntlet::run(&GauntletPlan::new(1, 20))?;
//! print!("{}", gauntlet::metrics::table(&gauntlet::metrics::summarise(
//!     &file.records,
//!     &file.strategies,
//! )));
//! # Ok::<(), ackwise::lab::LabError>(())
//! ```

pub mod compare;
pub mod draw;
pub mod harm;
pub mod medium;
pub mod merge;
pub mod metrics;
pub mod ns2check;
pub mod page;
pub mod seeds;

use super::progress::Progress;
use super::strategy::Strategy;
use super::LabError;
use crate::emu;
use metrics::GauntletRecord;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The strategies judged when `--strategies` is not given, AE first;
/// `ae+tlp` and `4w-adaptive+notlp` show what tail loss probes do on
/// their own, apart from the ACK economy, and [`PREVIOUS_DEFAULT`] is
/// judged against the same targets as the default.
pub const DEFAULT_STRATEGIES: [Strategy; 13] = [
    Strategy::AE,
    Strategy::AE_TLP,
    Strategy::DA,
    Strategy::DAL2,
    Strategy::W2AF,
    Strategy::W4,
    Strategy::W4AF,
    Strategy::W4_ADAPTIVE,
    Strategy::W4_ADAPTIVE_NOTLP,
    TARGET_STRATEGY,
    Strategy::SMART,
    Strategy::SMART_MINRTT,
    Strategy::ACC,
];

/// The strategy the targets table judges: `ackwise send`'s and `recv`'s
/// default.
pub const TARGET_STRATEGY: Strategy = Strategy::DEFAULT;

/// The default before ACK-clock spreading and sparse ACKs in holes
/// joined it: the page judges it against the same targets, on the same
/// seeds and on the shared medium, so that what the two mechanisms
/// changed is on the page.
pub const PREVIOUS_DEFAULT: Strategy = Strategy::W4_ADAPTIVE;

/// The judged row of AE against a second, independent draw of itself
/// ([`GauntletPlan::ae_redraw`]).
pub const AE_REDRAW: &str = "ae (second draw)";

/// Cases when `--cases` is not given.
pub const DEFAULT_CASES: u64 = 200;

/// Names the JSON layout, so a merge or a report refuses a file of
/// another kind or version.
pub const FORMAT: &str = "ackwise-gauntlet-1";

/// What to run.
#[derive(Debug, Clone)]
pub struct GauntletPlan {
    /// Seed of the draw.
    pub seed: u64,
    /// Cases `0..cases`.
    pub cases: u64,
    /// Judged strategies; AE is added in front when missing.
    pub strategies: Vec<Strategy>,
    /// Run this case only (`--case`), whatever `cases` says.
    pub only_case: Option<u64>,
    /// Run only the cases `k` with `k % n == i - 1` (`--shard i/n`).
    pub shard: Option<(usize, usize)>,
    /// Worker threads.
    pub jobs: usize,
    /// Also run the ns-2 baseline check.
    pub ns2: bool,
    /// Progress on stderr.
    pub progress: bool,
    /// Runs of every (case, strategy), each with its own emulator seed
    /// and, after the first, its own flow start offsets
    /// ([`draw::Case::replicate_scenario`]) (`--replicates`); strategies
    /// are judged on the mean over them. Replicate 0 runs the case as
    /// drawn, so one replicate is the single-draw run.
    pub replicates: u32,
    /// Also run AE a second time on every case, on replicates
    /// `replicates..2 * replicates` (`--ae-redraw`), recorded as the
    /// strategy [`AE_REDRAW`]. Judged against AE like any strategy, it is
    /// the noise floor of the page's own judgement: the figures a strategy
    /// gets when nothing differs from AE but the draw, at the same number
    /// of replicates.
    pub ae_redraw: bool,
    /// Capture every link of every run as pcap files in this directory
    /// (`--pcap`, only with [`only_case`](Self::only_case)): named
    /// `gauntlet-sSEED-cCASE-DRAW-STRATEGY-LINK.pcap`, DRAW the emulator
    /// seed's replicate index.
    pub pcap_dir: Option<std::path::PathBuf>,
}

impl GauntletPlan {
    /// `cases` cases of `seed` with the default strategies, two jobs, no
    /// ns-2, quiet.
    pub fn new(seed: u64, cases: u64) -> GauntletPlan {
        GauntletPlan {
            seed,
            cases,
            strategies: DEFAULT_STRATEGIES.to_vec(),
            only_case: None,
            shard: None,
            jobs: 2,
            ns2: false,
            progress: false,
            replicates: 1,
            ae_redraw: false,
            pcap_dir: None,
        }
    }

    /// The strategies run: AE first (everything is judged against it),
    /// then the others in the given order, each once.
    pub fn run_strategies(&self) -> Vec<Strategy> {
        let mut out = vec![Strategy::AE];
        for &s in &self.strategies {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The case numbers this plan runs, ascending.
    pub fn case_numbers(&self) -> Vec<u64> {
        if let Some(k) = self.only_case {
            return vec![k];
        }
        (0..self.cases)
            .filter(|k| self.shard.is_none_or(|(i, n)| k % n as u64 == i as u64 - 1))
            .collect()
    }
}

/// The JSON file of a run, a shard or a merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GauntletFile {
    /// [`FORMAT`].
    pub format: String,
    /// Seed of the draw.
    pub seed: u64,
    /// Number of cases of the whole run.
    pub cases: u64,
    /// Strategies, AE first.
    pub strategies: Vec<String>,
    /// `i/n` when this file holds one shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The one case this file holds, when run with `--case`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_case: Option<u64>,
    /// Replicates per (case, strategy); absent from JSON when 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub replicates: u32,
    /// One record per (case, strategy, replicate), by case, then
    /// strategy, then replicate.
    pub records: Vec<GauntletRecord>,
    /// The ns-2 baseline check, one entry per case, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns2: Option<Vec<ns2check::Ns2Case>>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl GauntletFile {
    /// Pretty JSON; the same records give the same bytes.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }

    /// Reads a file written by [`to_json`](Self::to_json); `path` names it
    /// in errors.
    pub fn from_json(text: &str, path: &str) -> Result<GauntletFile, LabError> {
        let bad = |problem: String| LabError::Field {
            field: path.to_string(),
            problem,
        };
        let file: GauntletFile =
            serde_json::from_str(text).map_err(|e| bad(format!("not a gauntlet file: {e}")))?;
        if file.format != FORMAT {
            return Err(bad(format!(
                "format `{}`, expected `{FORMAT}`",
                file.format
            )));
        }
        Ok(file)
    }

    /// Reads the file at `path`.
    pub fn read(path: &str) -> Result<GauntletFile, LabError> {
        let text = std::fs::read_to_string(path).map_err(|source| LabError::Io {
            path: path.to_string(),
            source,
        })?;
        GauntletFile::from_json(&text, path)
    }
}

/// Runs the plan: every case of it under every strategy, in parallel;
/// records come back by case then strategy whatever `jobs` is.
pub fn run(plan: &GauntletPlan) -> Result<GauntletFile, LabError> {
    if plan.pcap_dir.is_some() && plan.only_case.is_none() {
        return Err(LabError::Field {
            field: "--pcap".into(),
            problem: "the gauntlet captures one case at a time: add --case K".into(),
        });
    }
    let strategies = plan.run_strategies();
    let cases: Vec<draw::Case> = plan
        .case_numbers()
        .into_iter()
        .map(|k| draw::draw(plan.seed, k))
        .collect();
    for c in &cases {
        c.scenario
            .validate()
            .map_err(|e| case_error(c.params.case, e))?;
    }
    let replicates = plan.replicates.max(1);
    // (case index, strategy, replicate, second draw of AE); the second
    // draw's records follow AE's on every case.
    let mut rows: Vec<(Strategy, bool)> = strategies.iter().map(|&s| (s, false)).collect();
    if plan.ae_redraw {
        rows.insert(1, (Strategy::AE, true));
    }
    let rows = &rows;
    let tasks: Vec<(usize, Strategy, u32, bool)> = (0..cases.len())
        .flat_map(|c| {
            rows.iter()
                .flat_map(move |&(s, redraw)| (0..replicates).map(move |r| (c, s, r, redraw)))
        })
        .collect();
    let ns2_cases: Vec<usize> = if plan.ns2 {
        (0..cases.len())
            .filter(|&c| ns2check::expressible(&cases[c].params).is_ok())
            .collect()
    } else {
        Vec::new()
    };
    let bar = Progress::new(
        tasks.len() + ns2_cases.len() * ns2check::RUNS_PER_CASE,
        plan.progress,
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.jobs.clamp(1, 64))
        .thread_name(|i| format!("ackwise-gauntlet-{i}"))
        .build()
        .map_err(|e| LabError::Threads(e.to_string()))?;
    // Indexed parallel iterators collect in task order: the output is the
    // same bytes for every `--jobs`.
    let results: Vec<Result<GauntletRecord, LabError>> = pool.install(|| {
        tasks
            .par_iter()
            .map(|&(c, strategy, replicate, redraw)| {
                let case = &cases[c];
                bar.start(|| format!("case {} {strategy}", case.params.case));
                let pcap = plan.pcap_dir.as_deref().map(|dir| (dir, plan.seed));
                let out = if redraw {
                    run_one(case, strategy, replicate, replicates + replicate, pcap).map(|r| {
                        GauntletRecord {
                            strategy: AE_REDRAW.into(),
                            ..r
                        }
                    })
                } else {
                    run_one(case, strategy, replicate, replicate, pcap)
                };
                bar.finish_one();
                out
            })
            .collect()
    });
    let records = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let ns2 = if plan.ns2 {
        if !super::ns2::ns2_available() {
            bar.finish();
            return Err(super::ns2::Ns2Error::NotInstalled.into());
        }
        Some(ns2check::run_cases(&pool, &cases, &records, &bar)?)
    } else {
        None
    };
    bar.finish();
    Ok(GauntletFile {
        format: FORMAT.into(),
        seed: plan.seed,
        cases: plan.cases,
        strategies: rows
            .iter()
            .map(|&(s, redraw)| if redraw { AE_REDRAW.into() } else { s.name() })
            .collect(),
        shard: plan
            .shard
            .filter(|_| plan.only_case.is_none())
            .map(|(i, n)| format!("{i}/{n}")),
        only_case: plan.only_case,
        replicates,
        records,
        ns2,
    })
}

/// A case's error, naming the case so it can be replayed.
fn case_error(case: u64, e: impl std::fmt::Display) -> LabError {
    LabError::Field {
        field: format!("gauntlet case {case}"),
        problem: e.to_string(),
    }
}

/// The emulator seed of replicate `r` of a case whose own seed is `seed`:
/// the seed itself for replicate 0, else a SplitMix64 step away from it,
/// so replicates draw unrelated losses and RED decisions.
pub fn replicate_seed(seed: u64, r: u32) -> u64 {
    if r == 0 {
        return seed;
    }
    let mut z = seed.wrapping_add(u64::from(r).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One case under one strategy, recorded as replicate `replicate` and run
/// with the emulator seed of replicate `draw` (the same but for
/// [`AE_REDRAW`]), its links captured when `pcap` names a directory (and
/// the gauntlet's seed, for the file names).
fn run_one(
    case: &draw::Case,
    strategy: Strategy,
    replicate: u32,
    draw: u32,
    pcap: Option<(&std::path::Path, u64)>,
) -> Result<GauntletRecord, LabError> {
    let p = &case.params;
    let mut scenario = case
        .replicate_scenario(draw)
        .to_emu(strategy, replicate_seed(p.emu_seed, draw));
    if let Some((dir, seed)) = pcap {
        let name = format!("gauntlet-s{seed}-c{}", p.case);
        scenario.captures =
            crate::lab::run::capture_specs(dir, &name, draw as usize, strategy, &scenario.links);
    }
    let result = emu::run(&scenario).map_err(|e| case_error(p.case, format!("{strategy}: {e}")))?;
    let roles = case.scenario.roles(strategy);
    Ok(GauntletRecord {
        case: p.case,
        strategy: strategy.name(),
        replicate,
        params: p.clone(),
        outcome: metrics::outcome(p, &roles, &result),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cases_and_ae_comes_first() {
        let mut plan = GauntletPlan::new(1, 10);
        plan.strategies = vec![Strategy::W4, Strategy::AE, Strategy::W4];
        assert_eq!(plan.run_strategies(), vec![Strategy::AE, Strategy::W4]);
        let mut all = Vec::new();
        for i in 1..=3 {
            plan.shard = Some((i, 3));
            all.extend(plan.case_numbers());
        }
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        plan.only_case = Some(77);
        assert_eq!(plan.case_numbers(), vec![77]);
    }

    #[test]
    fn replicate_zero_keeps_the_case_seed_and_the_others_differ() {
        for seed in [0, 1, 0x5eed, u64::MAX] {
            assert_eq!(replicate_seed(seed, 0), seed);
            let mut seen: Vec<u64> = (0..64).map(|r| replicate_seed(seed, r)).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 64, "seed {seed}: replicates share a seed");
        }
        // Neighbouring cases' seeds must not meet in their replicates.
        assert_ne!(replicate_seed(7, 1), replicate_seed(8, 0));
        assert_ne!(replicate_seed(7, 1), replicate_seed(8, 1));
    }

    #[test]
    fn the_second_draw_of_ae_is_ae_on_the_next_replicates() {
        let plan = GauntletPlan {
            strategies: vec![Strategy::W4],
            replicates: 2,
            ae_redraw: true,
            ..GauntletPlan::new(3, 2)
        };
        let file = run(&plan).unwrap();
        assert_eq!(file.strategies, ["ae", AE_REDRAW, "4w"]);
        let names: Vec<&str> = file.records.iter().map(|r| r.strategy.as_str()).collect();
        assert_eq!(names[..6], ["ae", "ae", AE_REDRAW, AE_REDRAW, "4w", "4w"]);
        // AE run with four replicates: its replicates 2 and 3 are the
        // second draw's 0 and 1.
        let wide = run(&GauntletPlan {
            strategies: vec![Strategy::AE],
            replicates: 4,
            ..GauntletPlan::new(3, 2)
        })
        .unwrap();
        for r in file.records.iter().filter(|r| r.strategy == AE_REDRAW) {
            let same = wide
                .records
                .iter()
                .find(|w| w.case == r.case && w.replicate == r.replicate + 2)
                .unwrap();
            assert_eq!(r.outcome, same.outcome, "case {}", r.case);
            assert_eq!(r.params, same.params);
        }
        // Without the flag the file is as before.
        let plain = run(&GauntletPlan {
            ae_redraw: false,
            ..plan.clone()
        })
        .unwrap();
        assert_eq!(plain.strategies, ["ae", "4w"]);
        let kept: Vec<_> = file
            .records
            .iter()
            .filter(|r| r.strategy != AE_REDRAW)
            .cloned()
            .collect();
        assert_eq!(kept, plain.records);
    }

    #[test]
    fn records_come_by_case_then_strategy_then_replicate_for_any_jobs() {
        let plan = |jobs: usize| GauntletPlan {
            strategies: vec![Strategy::AE, Strategy::W4],
            replicates: 2,
            jobs,
            ..GauntletPlan::new(1, 2)
        };
        let file = run(&plan(2)).unwrap();
        let keys: Vec<(u64, &str, u32)> = file
            .records
            .iter()
            .map(|r| (r.case, r.strategy.as_str(), r.replicate))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|&(k, s, r)| (k, s != "ae", r));
        assert_eq!(keys, sorted);
        assert_eq!(keys.len(), 2 * 2 * 2);
        assert_eq!(file.to_json(), run(&plan(1)).unwrap().to_json());
    }
}
