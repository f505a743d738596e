//! Tests of the gauntlet page's text.

use super::super::metrics::tests::{flow, record};
use super::super::metrics::{GauntletRecord, NOISE_FLOOR};
use super::super::FORMAT;
use super::*;

/// Four cases of AE and the target strategy, `replicates` runs each;
/// everything takes 10 s except case 0, whose replicate 0 has AE at
/// 10 s and the target at 12 s, and whose replicate 1 has AE at 13 s
/// and the target at 10 s.
fn file(replicates: u32) -> GauntletFile {
    let target = TARGET_STRATEGY.name();
    let mut records: Vec<GauntletRecord> = Vec::new();
    for case in 0..4 {
        for strategy in ["ae", target.as_str()] {
            for r in 0..replicates {
                let completion_s = match (case, strategy == "ae", r) {
                    (0, true, 1) => 13.0,
                    (0, false, 0) => 12.0,
                    _ => 10.0,
                };
                records.push(GauntletRecord {
                    replicate: r,
                    ..record(case, strategy, completion_s, 100, 0, None)
                });
            }
        }
    }
    GauntletFile {
        format: FORMAT.into(),
        seed: 1,
        cases: 4,
        strategies: vec!["ae".into(), target],
        shard: None,
        only_case: None,
        replicates,
        records,
        ns2: None,
    }
}

#[test]
fn replicates_add_the_noise_floor_and_say_what_the_single_draw_moved() {
    let text = page(&file(2), "cmd", &[], &[]);
    assert!(
        text.contains(&format!("| `{NOISE_FLOOR}` | 4 | ")),
        "{text}"
    );
    // Case 0: 1.2 on the single draw, 11/11.5 on the mean.
    assert!(
        text.contains("1 of 4 cases' completion ratios move by more than 5%"),
        "{text}"
    );
    assert!(text.contains("within 1.05x of ae's: 75% on the single draw, 100% on the mean"));
    assert!(text.contains("--case K --strategies X --replicates 2`"));
    // The table judges the mean: no case above 1.05x.
    let target = format!(
        "| `{}` | 4 | 1.000 | 1.000 | 1.000 | 100% |",
        TARGET_STRATEGY.name()
    );
    assert!(text.contains(&target), "{text}");
    // Nor clearly above it, and the page says which cases would be.
    assert!(
        text.contains(&format!("for `{}` 0 (none)", TARGET_STRATEGY.name())),
        "{text}"
    );
    assert!(
        text.contains("| 100% (0 cases clearly above 1.05x) |"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "| `{NOISE_FLOOR}` | 4 | 1.000 | 1.300 | 1.300 | 75% | - |"
        )),
        "{text}"
    );

    let single = page(&file(1), "cmd", &[], &[]);
    assert!(!single.contains(NOISE_FLOOR));
    assert!(!single.contains("--replicates"));
    assert!(!single.contains("replicate"));
    assert!(!single.contains(AE_REDRAW));
}

#[test]
fn cases_clearly_above_are_named_with_when_the_whole_path_finished() {
    // Case 2 becomes a shared path where the target takes 12 s in
    // both draws against AE's 10 s, while the path's competitor ends
    // at 12 s against 15 s with AE in the target's place.
    let mut f = file(2);
    let target = TARGET_STRATEGY.name();
    for r in f.records.iter_mut().filter(|r| r.case == 2) {
        let ae = r.strategy == "ae";
        let shared = record(
            2,
            &r.strategy,
            if ae { 10.0 } else { 12.0 },
            100,
            0,
            Some(0.5),
        );
        r.params = shared.params;
        r.outcome = shared.outcome;
        let theirs = if ae { 15.0 } else { 12.0 };
        r.outcome.flows = [(true, r.outcome.completion_s), (false, theirs)]
            .into_iter()
            .map(|(test, end)| flow(&r.strategy, test, Some(end)))
            .collect();
    }
    let text = page(&f, "cmd", &[], &[]);
    assert!(
        text.contains(&format!("for `{target}` 1 (cases 2 (all flows 0.800))")),
        "{text}"
    );
    assert!(text.contains("(1 of the 1 cases;"), "{text}");
    assert!(
        text.contains("| 75% (1 case clearly above 1.05x) |"),
        "{text}"
    );
    assert!(text.contains("| 2 | 1.200 +- 0.000 |"), "{text}");
}

#[test]
fn the_second_draw_of_ae_sits_beside_every_target_and_replays_nothing() {
    // AE's second draw: case 1 at 14 s against AE's 10 s (1.4x), the
    // others equal.
    let mut f = file(2);
    for case in 0..4 {
        for r in 0..2 {
            let completion_s = if case == 1 { 14.0 } else { 10.0 };
            f.records.push(GauntletRecord {
                replicate: r,
                ..record(case, AE_REDRAW, completion_s, 100, 0, None)
            });
        }
    }
    f.strategies.insert(1, AE_REDRAW.into());
    let text = page(&f, "cmd", &[], &[]);
    assert!(text.contains(&format!("| `{AE_REDRAW}` | 4 | ")), "{text}");
    assert!(
        text.contains(
            "yet 75% of its ratios are within 1.05x, 25% are above 1.25x, its worst is 1.400"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("| met | `{AE_REDRAW}`, the same figure |")));
    assert!(
        text.contains("| completion never above 1.25x of ae's | worst 1.000 | yes | worst 1.400 |"),
        "{text}"
    );
    // Not a strategy one can replay or look for ACK savings in.
    assert!(!text.contains(&format!("### `{AE_REDRAW}`")));
    assert!(!text.contains(&format!("--strategies {AE_REDRAW}")));
    assert!(!text.contains(&format!("| `{AE_REDRAW}` | -")));
}
