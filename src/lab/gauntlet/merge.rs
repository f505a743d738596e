//! `ackwise lab merge`: shard files back into one. The result is the file
//! an unsharded run of the same seed, case count and strategies writes,
//! byte for byte, so a run spread over machines is indistinguishable from
//! one run on one machine.

use super::{GauntletFile, FORMAT};
use crate::lab::LabError;
use std::collections::BTreeMap;

fn refuse(problem: String) -> LabError {
    LabError::Field {
        field: "lab merge".into(),
        problem,
    }
}

/// Merges `parts` (each with the path it came from, for errors). All must
/// share seed, case count, strategies and whether ns-2 ran; together they
/// must hold every case exactly once.
pub fn merge(parts: &[(String, GauntletFile)]) -> Result<GauntletFile, LabError> {
    let Some((first_path, first)) = parts.first() else {
        return Err(refuse("no part files given".into()));
    };
    for (path, p) in parts {
        if let Some(k) = p.only_case {
            return Err(refuse(format!(
                "{path} holds a single replayed case ({k}), not a shard"
            )));
        }
        let differs = |what: &str, a: String, b: String| {
            refuse(format!(
                "{path} has {what} {a} but {first_path} has {b}: parts of different runs"
            ))
        };
        if p.seed != first.seed {
            return Err(differs("seed", p.seed.to_string(), first.seed.to_string()));
        }
        if p.cases != first.cases {
            return Err(differs(
                "--cases",
                p.cases.to_string(),
                first.cases.to_string(),
            ));
        }
        if p.strategies != first.strategies {
            return Err(differs(
                "strategies",
                p.strategies.join(","),
                first.strategies.join(","),
            ));
        }
        if p.replicates != first.replicates {
            return Err(differs(
                "--replicates",
                p.replicates.to_string(),
                first.replicates.to_string(),
            ));
        }
        if p.ns2.is_some() != first.ns2.is_some() {
            let ran = |f: &GauntletFile| if f.ns2.is_some() { "ns-2" } else { "no ns-2" };
            return Err(differs("", ran(p).into(), ran(first).into()));
        }
    }
    let order: BTreeMap<&str, usize> = first
        .strategies
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    // (case, strategy index, replicate) -> (part index, record index)
    let mut seen: BTreeMap<(u64, usize, u32), (usize, usize)> = BTreeMap::new();
    for (pi, (path, p)) in parts.iter().enumerate() {
        for (ri, r) in p.records.iter().enumerate() {
            let Some(&si) = order.get(r.strategy.as_str()) else {
                return Err(refuse(format!(
                    "{path}: case {} has a record for strategy `{}`, which its header does not list",
                    r.case, r.strategy
                )));
            };
            if r.case >= first.cases {
                return Err(refuse(format!(
                    "{path}: case {} is beyond --cases {}",
                    r.case, first.cases
                )));
            }
            if r.replicate >= first.replicates {
                return Err(refuse(format!(
                    "{path}: case {} ({}) has replicate {}, beyond --replicates {}",
                    r.case, r.strategy, r.replicate, first.replicates
                )));
            }
            if let Some((other, _)) = seen.insert((r.case, si, r.replicate), (pi, ri)) {
                return Err(refuse(format!(
                    "case {} ({}, replicate {}) appears twice: in {} and {path}",
                    r.case, r.strategy, r.replicate, parts[other].0
                )));
            }
        }
    }
    let missing: Vec<String> = (0..first.cases)
        .filter(|&k| {
            (0..order.len())
                .any(|si| (0..first.replicates).any(|r| !seen.contains_key(&(k, si, r))))
        })
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).map(String::as_str).collect();
        let more = if missing.len() > 10 { ", ..." } else { "" };
        return Err(refuse(format!(
            "{} of {} cases missing or incomplete: {}{more}",
            missing.len(),
            first.cases,
            shown.join(", ")
        )));
    }
    let records = seen
        .values()
        .map(|&(pi, ri)| parts[pi].1.records[ri].clone())
        .collect();
    let ns2 = if first.ns2.is_some() {
        let mut by_case = BTreeMap::new();
        for (path, p) in parts {
            for c in p.ns2.iter().flatten() {
                if by_case.insert(c.case, c.clone()).is_some() {
                    return Err(refuse(format!(
                        "ns-2 check of case {} appears twice (again in {path})",
                        c.case
                    )));
                }
            }
        }
        Some(by_case.into_values().collect())
    } else {
        None
    };
    Ok(GauntletFile {
        format: FORMAT.into(),
        seed: first.seed,
        cases: first.cases,
        strategies: first.strategies.clone(),
        shard: None,
        only_case: None,
        replicates: first.replicates,
        records,
        ns2,
    })
}

#[cfg(test)]
mod tests {
    use super::super::metrics::tests::record;
    use super::super::metrics::GauntletRecord;
    use super::super::GauntletPlan;
    use super::*;
    use crate::lab::Strategy;

    /// The file a run of `plan` writes, with hand-built records (the
    /// merge only moves records; simulating them would test nothing more).
    fn fake_run(plan: &GauntletPlan) -> GauntletFile {
        let strategies: Vec<String> = plan.run_strategies().iter().map(|s| s.name()).collect();
        let replicates = plan.replicates;
        let records = plan
            .case_numbers()
            .into_iter()
            .flat_map(|k| {
                strategies.iter().flat_map(move |s| {
                    (0..replicates).map(move |r| GauntletRecord {
                        replicate: r,
                        ..record(
                            k,
                            s,
                            1.0 + k as f64 / 3.0 + f64::from(r),
                            10 * k + 1,
                            0,
                            None,
                        )
                    })
                })
            })
            .collect();
        GauntletFile {
            format: FORMAT.into(),
            seed: plan.seed,
            cases: plan.cases,
            strategies,
            shard: plan.shard.map(|(i, n)| format!("{i}/{n}")),
            only_case: None,
            replicates,
            records,
            ns2: None,
        }
    }

    #[test]
    fn merge_restores_the_unsharded_file_and_refuses_bad_parts() {
        let plan = GauntletPlan {
            strategies: vec![Strategy::AE, Strategy::W4],
            ..GauntletPlan::new(3, 5)
        };
        let parts: Vec<(String, GauntletFile)> = (1..=3)
            .map(|i| {
                let shard = GauntletPlan {
                    shard: Some((i, 3)),
                    ..plan.clone()
                };
                (format!("part{i}.json"), fake_run(&shard))
            })
            .collect();
        let whole = fake_run(&plan).to_json();
        let shuffled = [parts[2].clone(), parts[0].clone(), parts[1].clone()];
        assert_eq!(merge(&shuffled).unwrap().to_json(), whole);
        // Through JSON text, as the command does.
        let reread: Vec<(String, GauntletFile)> = parts
            .iter()
            .map(|(n, f)| (n.clone(), GauntletFile::from_json(&f.to_json(), n).unwrap()))
            .collect();
        assert_eq!(merge(&reread).unwrap().to_json(), whole);

        let err = |p: &[(String, GauntletFile)]| {
            let e = merge(p).unwrap_err().to_string();
            assert!(!e.contains('\n'), "one line: {e}");
            e
        };
        let e = err(&[parts[0].clone(), parts[1].clone(), parts[0].clone()]);
        assert!(
            e.contains("appears twice") && e.contains("part1.json"),
            "{e}"
        );
        let e = err(&parts[..2]);
        assert!(e.contains("1 of 5 cases missing or incomplete: 2"), "{e}");
        let mut torn = parts[2].clone();
        torn.1.records.pop();
        let e = err(&[parts[0].clone(), parts[1].clone(), torn]);
        assert!(e.contains("cases missing or incomplete: 2"), "{e}");
        for (what, change) in [
            (
                "seed",
                (|f: &mut GauntletFile| f.seed = 4) as fn(&mut GauntletFile),
            ),
            ("strategies", |f| f.strategies.push("da".into())),
            ("--cases", |f| f.cases = 6),
            ("--replicates 2", |f| f.replicates = 2),
        ] {
            let mut other = parts[1].clone();
            change(&mut other.1);
            let e = err(&[parts[0].clone(), other, parts[2].clone()]);
            assert!(e.contains(what), "{what}: {e}");
        }
        let mut replay = parts[1].clone();
        replay.1.only_case = Some(1);
        assert!(err(&[replay]).contains("single replayed case"));
        assert!(err(&[]).contains("no part"));
    }

    #[test]
    fn replicated_shards_merge_by_case_strategy_and_replicate() {
        let plan = GauntletPlan {
            strategies: vec![Strategy::AE, Strategy::W4],
            replicates: 2,
            ..GauntletPlan::new(3, 5)
        };
        let parts: Vec<(String, GauntletFile)> = [2, 1]
            .into_iter()
            .map(|i| {
                let shard = GauntletPlan {
                    shard: Some((i, 2)),
                    ..plan.clone()
                };
                (format!("part{i}.json"), fake_run(&shard))
            })
            .collect();
        let merged = merge(&parts).unwrap();
        assert_eq!(merged.to_json(), fake_run(&plan).to_json());
        assert!(merged.to_json().contains("\"replicates\": 2"));
        // A replicate missing from one part leaves its case incomplete.
        let mut torn = parts[1].clone();
        torn.1
            .records
            .retain(|r| !(r.case == 0 && r.replicate == 1));
        let e = merge(&[parts[0].clone(), torn]).unwrap_err().to_string();
        assert!(e.contains("cases missing or incomplete: 0"), "{e}");
        // A replicate beyond the header's count is refused.
        let mut beyond = parts[1].clone();
        beyond.1.records[0].replicate = 2;
        let e = merge(&[parts[0].clone(), beyond]).unwrap_err().to_string();
        assert!(e.contains("beyond --replicates 2"), "{e}");
    }
}
