//! Tests of the shared table and verdict helpers and of the pages' own
//! metrics.

use super::paper_004::*;
use super::*;
use crate::lab::run::{FlowRecord, LinkRecord};

fn flow(strategy: &str, tput: f64) -> FlowRecord {
    FlowRecord {
        name: "f".into(),
        completion_time_s: None,
        goodput_bps: None,
        throughput_bps: tput,
        strategy: strategy.into(),
        reverse: false,
        data_packets: 1000,
        ack_packets: 250,
        ack_bytes: 13_000,
        retransmissions: 0,
        timeouts: 0,
        finished: false,
    }
}

fn record(strategy: &str, flows: f64, util: f64) -> RunRecord {
    RunRecord {
        preset: "p".into(),
        strategy: strategy.into(),
        seed: 1,
        params: [("flows".to_string(), flows)].into_iter().collect(),
        flows: vec![flow("ae", 1e6), flow(strategy, 0.5e6)],
        links: vec![LinkRecord {
            name: "l".into(),
            utilization: util,
            drops: 20,
            ..LinkRecord::default()
        }],
        jain_index: Some(0.9),
        all_finished: false,
        simulated_s: 10.0,
        measured_s: 10.0,
        series: None,
    }
}

#[test]
fn tables_have_a_row_per_point_and_a_column_per_strategy() {
    let records = vec![
        record("ae", 1.0, 0.5),
        record("4w", 1.0, 0.25),
        record("ae", 2.0, 1.0),
    ];
    let t = table(&records, RunRecord::utilization_percent, 1);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "| flows | ae | 4w |");
    assert_eq!(lines[2], "| 1 | 50 | 25 |");
    assert_eq!(lines[3], "| 2 | 100 | - |");
    assert_eq!(records[0].drop_percent(), Some(1.0));
    assert_eq!(records[0].ack_kbps(), Some(20.8));
    assert_eq!(share_against_ae(&records[1]), Some(0.5));
}

#[test]
fn verdicts() {
    let c = |paper, ackwise, higher| Check {
        what: String::new(),
        paper: Some(paper),
        ackwise,
        higher_is_better: higher,
        tolerance: 3.0,
        decimals: 1,
    };
    assert_eq!(c(73.0, Some(75.0), true).verdict(), "matches");
    assert_eq!(c(73.0, Some(80.0), true).verdict(), "beats");
    assert_eq!(c(73.0, Some(60.0), true).verdict(), "misses");
    assert_eq!(c(10.0, Some(2.0), false).verdict(), "beats");
    assert_eq!(c(10.0, None, false).verdict(), "no result");
}

/// A run of `preset` at `rate_mbps` whose flows took `completions`
/// seconds (`None`: unfinished), all left to right.
fn timed(preset: &str, strategy: &str, rate: f64, completions: &[Option<f64>]) -> RunRecord {
    RunRecord {
        preset: preset.into(),
        strategy: strategy.into(),
        params: [("rate_mbps".to_string(), rate)].into_iter().collect(),
        flows: completions
            .iter()
            .map(|&c| FlowRecord {
                completion_time_s: c,
                finished: c.is_some(),
                ..flow(strategy, 1e6)
            })
            .collect(),
        ..record(strategy, 1.0, 0.5)
    }
}

#[test]
fn relative_tables_divide_by_the_baseline_at_the_same_point() {
    let records = vec![
        timed("p", "da", 1.0, &[Some(10.0)]),
        timed("p", "smart", 1.0, &[Some(8.0)]),
        timed("p", "da", 2.0, &[Some(5.0)]),
        timed("p", "smart", 2.0, &[Some(6.0), Some(4.0)]),
        timed("p", "da", 5.0, &[None]),
        timed("p", "smart", 5.0, &[Some(1.0)]),
        // Another preset at the same point must not be the baseline.
        timed("q", "da", 1.0, &[Some(1.0)]),
        timed("q", "smart", 1.0, &[Some(3.0)]),
    ];
    let (p, q) = records.split_at(6);
    let t = table(p, relative(p, "da", RunRecord::mean_completion_s), 3);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "| rate_mbps | da | smart |");
    assert_eq!(lines[2], "| 1 | 1 | 0.800 |");
    assert_eq!(lines[3], "| 2 | 1 | 1 |");
    // An unfinished baseline leaves no ratio rather than a wrong one.
    assert_eq!(lines[4], "| 5 | - | - |");

    let both = relative(&records, "da", RunRecord::mean_completion_s);
    assert_eq!(both(&q[1]), Some(3.0));
    let r = ratios(&records, "smart", "da", RunRecord::mean_completion_s);
    let values: Vec<f64> = r.iter().map(|(_, v)| *v).collect();
    assert_eq!(values, vec![0.8, 1.0, 3.0]);
    let (worst, v) = extreme(r.iter().copied(), true).unwrap();
    assert_eq!((worst.preset.as_str(), v), ("q", 3.0));
    let (best, v) = extreme(r.iter().copied(), false).unwrap();
    assert_eq!((point_text(best).as_str(), v), ("p at rate_mbps = 1", 0.8));
    assert!(extreme([(best, f64::NAN)], true).is_none());
    assert!(ratios(&records, "acc", "da", RunRecord::mean_completion_s).is_empty());
}

#[test]
fn tables_of_several_presets_get_a_preset_column() {
    let records = vec![
        timed("a", "da", 5.0, &[Some(2.0)]),
        timed("a", "smart", 5.0, &[Some(1.0)]),
        timed("b", "da", 5.0, &[Some(4.0)]),
    ];
    let t = table(&records, RunRecord::mean_completion_s, 2);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "| preset | rate_mbps | da | smart |");
    assert_eq!(lines[1], "|---|---|---:|---:|");
    assert_eq!(lines[2], "| a | 5 | 2 | 1 |");
    assert_eq!(lines[3], "| b | 5 | 4 | - |");
    assert_eq!(lines.len(), 4);
}

#[test]
fn friendly_connections_are_found_by_position_and_direction() {
    let mut r = timed(
        "p004-friendly",
        "smart",
        5.0,
        &[Some(30.0), Some(20.0), Some(40.0), Some(50.0)],
    );
    r.flows[0].strategy = "da".into();
    r.flows[2].strategy = "da".into();
    r.flows[3].strategy = "da".into();
    r.flows[2].reverse = true;
    r.flows[3].reverse = true;
    assert_eq!(friendly_compared_s(&r), Some(20.0));
    assert_eq!(friendly_parallel_s(&r), Some(30.0));
    // The all-NewReno run: the same positions.
    let mut all_da = r.clone();
    all_da.strategy = "da".into();
    all_da.flows[1].strategy = "da".into();
    assert_eq!(friendly_compared_s(&all_da), Some(20.0));
    assert_eq!(friendly_parallel_s(&all_da), Some(30.0));
    // A parallel connection in the other direction does not count.
    r.flows[0].reverse = true;
    assert_eq!(friendly_parallel_s(&r), None);
    // Records of another layout give nothing rather than a wrong flow.
    let other = timed("p", "smart", 5.0, &[Some(1.0)]);
    assert_eq!(friendly_compared_s(&other), None);
    assert_eq!(friendly_parallel_s(&other), None);
}

#[test]
fn verdict_prose_follows_the_verdicts() {
    let c = |what: &str, ackwise| Check {
        what: what.into(),
        paper: Some(1.0),
        ackwise,
        higher_is_better: false,
        tolerance: 0.0,
        decimals: 3,
    };
    let checks = [
        c("a", Some(0.5)),
        c("b", Some(2.0)),
        c("c", Some(0.9)),
        c("d", None),
    ];
    let prose = verdict_prose(&checks);
    assert_eq!(
        prose,
        "- ackwise beats: a (0.500 against 1.000); c (0.900 against 1.000).\n\
         - ackwise misses: b (2.000 against 1.000).\n\
         - no result (some flow did not finish) for: d.\n"
    );
    assert!(checks_table(&checks).contains("| a | 1.000 | 0.500 | beats |"));
    // Only the claim, up to the first "; ", goes into the prose.
    let prose = verdict_prose(&[c("e; how it was measured", Some(1.0))]);
    assert_eq!(prose, "- ackwise matches: e (1.000 against 1.000).\n");
}

#[test]
fn only_points_keeps_the_matching_points() {
    let preset = presets::find("p004-1-0").unwrap();
    let five = only_points(preset.clone(), "rate_mbps", &[5.0]).unwrap();
    assert_eq!(five.points.len(), 1);
    assert_eq!(five.points[0].params, vec![("rate_mbps", 5.0)]);
    let two = only_points(preset.clone(), "rate_mbps", &[1.0, 20.0]).unwrap();
    assert_eq!(two.points.len(), 2);
    assert!(only_points(preset.clone(), "rate_mbps", &[3.0]).is_err());
    assert!(only_points(preset, "buffer_bdp", &[5.0]).is_err());
}

#[test]
fn unknown_pages_are_refused() {
    let plan = ReportPlan {
        page: "paper-999".into(),
        out_dir: std::env::temp_dir(),
        seed: 1,
        jobs: 1,
        progress: false,
    };
    assert!(write_report(&plan)
        .unwrap_err()
        .to_string()
        .contains("paper-003"));
}

#[test]
fn the_paper_004_baseline_runs_name_real_strategies_and_presets() {
    let p002 = super::ack_management::P002_NOSACK_STRATEGIES;
    for name in NOSACK_STRATEGIES
        .iter()
        .chain(&NOSACK_STRATEGIES_ASYM)
        .chain(&p002)
    {
        let s: Strategy = name.parse().unwrap();
        assert_eq!(s.name(), *name);
    }
    assert!(NOSACK_STRATEGIES.contains(&NOSACK_BASELINE));
    assert_eq!(
        NOSACK_PRESETS[0], "p004-1-0",
        "fig. 8's check reads the first"
    );
    for name in NOSACK_PRESETS {
        presets::find(name).unwrap();
    }
}

#[test]
fn an_unwritable_output_directory_fails_before_any_run() {
    // A file where the directory should be: create_dir_all must refuse.
    let file = std::env::temp_dir().join(format!("ackwise-report-{}", std::process::id()));
    std::fs::write(&file, b"not a directory").unwrap();
    let out_dir = file.join("results");
    let plan = ReportPlan {
        page: "quic".into(),
        out_dir: out_dir.clone(),
        seed: 1,
        jobs: 1,
        progress: false,
    };
    let err = write_report(&plan).unwrap_err();
    std::fs::remove_file(&file).unwrap();
    // The directory itself is refused, not `quic.md` after the page's
    // runs.
    match err {
        LabError::Io { path, .. } => assert_eq!(path, out_dir.display().to_string()),
        other => panic!("{other}"),
    }
}
