//! Tests of the gauntlet's judgement: replicate means, ratios to AE,
//! their standard errors and the per-strategy summaries.

use super::*;
use crate::lab::gauntlet::draw::{draw, FlowDraw, LossDraw};

/// A record of `case` under `strategy` with the given judged figures;
/// the path is case 0 of seed 1 made a loss-free single-flow path with
/// a 1 BDP buffer, shared with one AE competitor when `share` is set.
pub(crate) fn record(
    case: u64,
    strategy: &str,
    completion_s: f64,
    ack_packets: u64,
    rtos: u64,
    share: Option<f64>,
) -> GauntletRecord {
    let mut params = draw(1, 0).params;
    params.case = case;
    params.loss = LossDraw::None;
    params.buffer_bdp = 1.0;
    params.flows.truncate(1);
    params.flows[0].competitor = None;
    if share.is_some() {
        params.flows.push(FlowDraw {
            competitor: Some("ae".into()),
            ..params.flows[0].clone()
        });
    }
    GauntletRecord {
        case,
        strategy: strategy.into(),
        replicate: 0,
        params,
        outcome: Outcome {
            completion_s,
            unfinished: 0,
            ack_packets,
            data_packets: 1000,
            retransmissions: rtos,
            rtos,
            share,
            queue_drops: 0,
            random_losses: 0,
            simulated_s: completion_s,
            flows: Vec::new(),
        },
    }
}

#[test]
fn percentiles_are_nearest_rank() {
    let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
    assert_eq!(percentile(&xs, 0.5), Some(3.0));
    assert_eq!(percentile(&xs, 0.9), Some(5.0));
    assert_eq!(percentile(&xs, 0.1), Some(1.0));
    assert_eq!(percentile(&xs, 1.0), Some(5.0));
    assert_eq!(percentile(&[], 0.5), None);
}

#[test]
fn a_ratio_is_clearly_above_only_beyond_two_standard_errors_of_the_draws() {
    // Case 0: every replicate the same run, 11 s against AE's 10 s.
    // Case 1: the same means (1.1x), the strategy's draws 6 and 16 s
    // and AE's 8 and 12 s. Case 2: the means 1.2x with a small spread.
    // Case 3: both sides spread, but each replicate's pair is 1.1x.
    let mut records = Vec::new();
    for (case, mine, ae) in [
        (0, [11.0, 11.0], [10.0, 10.0]),
        (1, [6.0, 16.0], [8.0, 12.0]),
        (2, [11.9, 12.1], [9.9, 10.1]),
        (3, [11.0, 13.2], [10.0, 12.0]),
    ] {
        for r in 0..2 {
            for (strategy, c) in [("4w", mine[r]), ("ae", ae[r])] {
                records.push(GauntletRecord {
                    replicate: r as u32,
                    ..record(case, strategy, c, 100, 0, None)
                });
            }
        }
    }
    let rel: Vec<Relative> = relatives(&records)
        .into_iter()
        .filter(|r| r.strategy == "4w")
        .collect();
    let se: Vec<f64> = rel.iter().map(|r| r.completion_ratio_se).collect();
    assert_eq!(se[0], 0.0);
    // Case 1, paired by replicate: residuals 6 - 1.1 * 8 = -2.8 and
    // 16 - 1.1 * 12 = 2.8, variance 15.68, over 2 runs and AE's 10 s.
    assert!(
        (se[1] - (15.68_f64 / 2.0).sqrt() / 10.0).abs() < 1e-12,
        "{se:?}"
    );
    assert!(se[2] > 0.0 && se[2] < 0.02, "{se:?}");
    // Case 3: the pairs agree exactly, so the draws explain nothing.
    assert!(se[3].abs() < 1e-12, "{se:?}");
    let clearly: Vec<bool> = rel.iter().map(clearly_above).collect();
    assert_eq!(clearly, [true, false, true, true]);
    let summary = summarise(&records, &["ae".into(), "4w".into()]);
    assert_eq!(summary[0].clearly_above_105, 3);
    assert_eq!(summary[0].within_105, 0.0);
    // A single replicate has no spread: every ratio above 1.05 counts.
    let single: Vec<GauntletRecord> = records
        .iter()
        .filter(|r| r.replicate == 0)
        .cloned()
        .collect();
    let summary = summarise(&single, &["ae".into(), "4w".into()]);
    assert_eq!(summary[0].clearly_above_105, 3);
}

#[test]
fn runs_on_other_seeds_are_not_paired() {
    // Case 3 above with the strategy on replicates 2 and 3: independent
    // draws, whose relative errors add in quadrature (variances 2.42 and
    // 2, means 12.1 and 11), and 1.1x is no longer clearly above 1.05.
    let mut records = Vec::new();
    for (r, mine, ae) in [(0u32, 11.0, 10.0), (1, 13.2, 12.0)] {
        records.push(GauntletRecord {
            replicate: r,
            ..record(3, "ae", ae, 100, 0, None)
        });
        records.push(GauntletRecord {
            replicate: r + 2,
            ..record(3, "4w", mine, 100, 0, None)
        });
    }
    let rel = relatives(&records);
    let mine = rel.iter().find(|r| r.strategy == "4w").unwrap();
    let expected = 1.1 * (2.42_f64 / 2.0 / 12.1_f64.powi(2) + 1.0 / 121.0).sqrt();
    assert!(
        (mine.completion_ratio_se - expected).abs() < 1e-12,
        "{mine:?}"
    );
    assert!(!clearly_above(mine));
}

/// A flow of a run under `strategy` (a test flow or a competitor) that
/// finished at `finish_s`, or never; its other figures are placeholders.
pub(crate) fn flow(strategy: &str, test: bool, finish_s: Option<f64>) -> FlowOutcome {
    FlowOutcome {
        strategy: strategy.into(),
        test,
        finished: finish_s.is_some(),
        finish_s,
        delivered_bytes: 1,
        goodput_bps: 1.0,
        data_packets: 1,
        ack_packets: 1,
        retransmissions: 0,
        rtos: 0,
    }
}

#[test]
fn on_a_shared_path_the_last_of_all_flows_is_compared_too() {
    // The test flow ends at 12 s against AE's 10 s in its place, but the
    // competitor ends at 12 s against 15 s: the path's last flow ends
    // at 12 s against 15 s. An unfinished competitor counts at the
    // horizon.
    let with_flows = |strategy: &str, mine: f64, theirs: Option<f64>| {
        let mut r = record(0, strategy, mine, 100, 0, Some(0.5));
        r.outcome.flows = vec![flow(strategy, true, Some(mine)), flow("ae", false, theirs)];
        r
    };
    let records = [
        with_flows("4w", 12.0, Some(12.0)),
        with_flows("ae", 10.0, Some(15.0)),
    ];
    let rel = relatives(&records);
    let mine = rel.iter().find(|r| r.strategy == "4w").unwrap();
    assert!((mine.completion_ratio - 1.2).abs() < 1e-12);
    assert!((mine.path_ratio.unwrap() - 0.8).abs() < 1e-12);
    let horizon_s = records[0].params.horizon_us as f64 / 1e6;
    let records = [
        with_flows("4w", 12.0, None),
        with_flows("ae", 10.0, Some(15.0)),
    ];
    let rel = relatives(&records);
    let mine = rel.iter().find(|r| r.strategy == "4w").unwrap();
    assert!((mine.path_ratio.unwrap() - horizon_s / 15.0).abs() < 1e-12);
    // Not on a path without competitors, nor without per-flow figures.
    let alone = [
        record(0, "4w", 12.0, 100, 0, None),
        record(0, "ae", 10.0, 100, 0, None),
    ];
    assert!(relatives(&alone).iter().all(|r| r.path_ratio.is_none()));
    let bare = [
        record(0, "4w", 12.0, 100, 0, Some(0.5)),
        record(0, "ae", 10.0, 100, 0, Some(0.5)),
    ];
    assert!(relatives(&bare).iter().all(|r| r.path_ratio.is_none()));
}

#[test]
fn a_replayed_case_is_detailed_against_ae_with_the_whole_path() {
    // The test flow ends at 12 s against AE's 10 s (1.2x, deterministic:
    // clearly above 1.05), the whole path at 12 s against 15 s; half
    // AE's ACKs, one RTO against none, share 0.6 against 0.5.
    let with_flows = |strategy: &str, mine: f64, theirs: f64, acks, rtos, share| {
        let mut r = record(7, strategy, mine, acks, rtos, Some(share));
        r.outcome.flows = vec![
            flow(strategy, true, Some(mine)),
            flow("ae", false, Some(theirs)),
        ];
        r
    };
    let records = [
        with_flows("ae", 10.0, 15.0, 100, 0, 0.5),
        with_flows("4w", 12.0, 12.0, 50, 1, 0.6),
    ];
    let text = case_details(&records);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("case 7: "), "{text}");
    assert_eq!(
        lines[1],
        "  ae: completion 10.000 s, ACKs 100, RTOs 0, share 0.500"
    );
    assert_eq!(
        lines[2],
        "  4w: completion 12.000 s, 1.200 +- 0.000 of ae's (clearly above 1.05), \
         all flows 0.800, ACKs 0.500, RTOs 1 (ae 0), share 1.200 of ae's"
    );
    // A case without AE's run has nothing to be judged against.
    assert_eq!(case_details(&records[1..]), "");
}

#[test]
fn replicates_are_judged_on_their_mean_and_ae_against_itself_is_the_floor() {
    let rep = |r: u32, strategy: &str, completion_s: f64, rtos: u64, share: f64| GauntletRecord {
        replicate: r,
        ..record(
            0,
            strategy,
            completion_s,
            100 + u64::from(r),
            rtos,
            Some(share),
        )
    };
    // Out of replicate order, as nothing guarantees it to the mean.
    let records = vec![
        rep(1, "ae", 14.0, 1, 0.5),
        rep(0, "ae", 10.0, 0, 0.5),
        rep(2, "ae", 12.0, 0, 0.5),
        rep(0, "4w", 18.0, 0, 0.4),
        rep(1, "4w", 12.0, 0, 0.5),
        rep(2, "4w", 6.0, 2, 0.6),
    ];
    let means = replicate_means(&records);
    assert_eq!(means.len(), 2);
    let (ae, w4) = (&means[0], &means[1]);
    assert_eq!((ae.first.strategy.as_str(), ae.first.replicate), ("ae", 0));
    assert_eq!(ae.replicates, 3);
    assert_eq!(ae.completion_s, 12.0);
    assert_eq!(ae.ack_packets, 101.0);
    assert!((ae.rtos - 1.0 / 3.0).abs() < 1e-12, "{}", ae.rtos);
    assert_eq!(ae.runs_with_rto, 1);
    assert_eq!(ae.share, Some(0.5));
    assert_eq!(w4.completion_s, 12.0);
    assert!((w4.rtos - 2.0 / 3.0).abs() < 1e-12);
    assert!((w4.share.unwrap() - 0.5).abs() < 1e-12);
    // The single draw said 1.8x; the mean says the same as AE, and
    // "more RTOs than ae" compares the means (2/3 against 1/3).
    let rel = relatives(&records);
    assert_eq!(rel.len(), 2, "AE is beside itself too");
    let w4 = &rel[1];
    assert_eq!(w4.strategy, "4w");
    assert_eq!(w4.completion_ratio, 1.0);
    assert_eq!(w4.ack_ratio, Some(1.0));
    assert!(w4.rtos > w4.ae_rtos);
    // One record per (case, strategy) is judged on that record alone.
    let one = replicate_means(&records[1..2]);
    assert_eq!(one[0].completion_s, 10.0);
    assert_eq!((one[0].rtos, one[0].replicates), (0.0, 1));
    // AE's replicate 1 (14 s) over its replicate 0 (10 s).
    let floor = noise_floor(&records).expect("two AE replicates");
    assert_eq!((floor.strategy.as_str(), floor.cases), (NOISE_FLOOR, 1));
    assert!((floor.completion[0] - 1.4).abs() < 1e-9);
    assert!(noise_floor(&records[1..]).is_none());
}

#[test]
fn mean_counts_read_as_integers_when_whole() {
    assert_eq!(count_text(0.0), "0");
    assert_eq!(count_text(12.0), "12");
    assert_eq!(count_text(0.2 + 0.4), "0.6");
    assert_eq!(count_text(1.0 / 3.0), "0.33");
    assert_eq!(count_text(2.5), "2.5");
}

#[test]
fn strategies_are_judged_against_ae_on_the_same_case() {
    let mut records = Vec::new();
    // Four unshared cases: AE takes 10 s and sends 1000 ACKs.
    for (k, (ct, acks, rtos)) in [
        (10.0, 200, 0),
        (10.4, 250, 0),
        (12.0, 100, 1),
        (20.0, 300, 0),
    ]
    .into_iter()
    .enumerate()
    {
        records.push(record(k as u64, "ae", 10.0, 1000, 0, None));
        records.push(record(k as u64, "4w", ct, acks, rtos, None));
    }
    // Two shared cases: AE holds half, 4w 0.45 and 0.6 of the link.
    for (k, share, rtos) in [(4, 0.45, 2), (5, 0.6, 0)] {
        records.push(record(k, "ae", 10.0, 1000, 1, Some(0.5)));
        records.push(record(k, "4w", 10.0, 200, rtos, Some(share)));
    }
    let s = &summarise(&records, &["ae".into(), "4w".into()])[0];
    assert_eq!(s.strategy, "4w");
    assert_eq!(s.cases, 6);
    assert_eq!(s.completion, [1.0, 2.0, 2.0]);
    // 1.0, 1.04, 1.0, 1.0 within; 1.2 and 2.0 not; only 2.0 above 1.25.
    assert!((s.within_105 - 4.0 / 6.0).abs() < 1e-12);
    assert!((s.above_125 - 1.0 / 6.0).abs() < 1e-12);
    assert_eq!(s.acks, [0.2, 0.3]);
    // Every hand-built unshared case is an RTO-free path.
    assert_eq!((s.rto_free_paths, s.rtos_on_free_paths), (4, 1.0));
    assert_eq!(s.ae_rtos_on_free_paths, 0.0);
    assert_eq!((s.shared_paths, s.more_rtos_than_ae_shared), (2, 1));
    let share = s.share.unwrap();
    assert!((share[0] - 0.9).abs() < 1e-12 && (share[3] - 1.2).abs() < 1e-12);
    assert_eq!(s.share_within, Some(0.5));
    // A case without an AE record is not judged.
    records.retain(|r| !(r.case == 3 && r.strategy == "ae"));
    assert_eq!(summarise(&records, &["ae".into(), "4w".into()])[0].cases, 5);
}

#[test]
fn completion_is_the_test_flows_span_and_counts_stalls_at_the_horizon() {
    use crate::lab::Strategy;
    // Run a real small case: seed 1 case 3 is one 0.7 MB flow at
    // 300 Mbit/s; make it two test flows and a competitor.
    let case = draw(1, 3);
    let roles = case.scenario.roles(Strategy::AE);
    let r = crate::emu::run(&case.scenario.to_emu(Strategy::AE, 1)).unwrap();
    let o = outcome(&case.params, &roles, &r);
    assert_eq!(o.unfinished, 0);
    let f = &o.flows[0];
    assert!(f.finished && f.test);
    let start = case.params.flows[0].start_us as f64 / 1e6;
    assert!((o.completion_s - (f.finish_s.unwrap() - start)).abs() < 1e-9);
    assert_eq!(o.share, None, "no competitor, no share");
    assert_eq!(o.ack_packets, f.ack_packets);

    // The same result read as if the flow had not finished: it counts
    // as finishing at the horizon, never as missing.
    let mut stalled = r.clone();
    stalled.flows[0].finished = false;
    let o = outcome(&case.params, &roles, &stalled);
    assert_eq!(o.unfinished, 1);
    let horizon = case.params.horizon_us as f64 / 1e6;
    assert!((o.completion_s - (horizon - start)).abs() < 1e-9);
}

#[test]
fn the_terminal_table_counts_the_clearly_above_cases_except_for_the_noise_floor() {
    // Two replicates of one case: the strategy at 11 s in both against
    // AE's 10 s (clearly above), AE's replicate 1 at 12 s (the floor row,
    // one draw against one).
    let mut records = Vec::new();
    for r in 0..2 {
        for (strategy, c) in [("4w", 11.0), ("ae", if r == 0 { 10.0 } else { 12.0 })] {
            records.push(GauntletRecord {
                replicate: r,
                ..record(0, strategy, c, 100, 0, None)
            });
        }
    }
    let mut summaries = summarise(&records, &["ae".into(), "4w".into()]);
    summaries.extend(noise_floor(&records));
    let text = table(&summaries);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert!(
        text.lines().next().unwrap().contains("<=1.05  clr  >1.25"),
        "{text}"
    );
    // 11 / 11 against 10 / 12: the ratio 1.0 is not above 1.05 at all.
    assert_eq!(row("4w")[7], "0", "{text}");
    assert_eq!(row(NOISE_FLOOR)[11], "-", "{text}");
    // Without AE's spread the same 1.1 is clearly above.
    let steady: Vec<GauntletRecord> = records
        .iter()
        .cloned()
        .map(|mut r| {
            if r.strategy == "ae" {
                r.outcome.completion_s = 10.0;
            }
            r
        })
        .collect();
    let text = table(&summarise(&steady, &["ae".into(), "4w".into()]));
    assert_eq!(
        text.lines().nth(1).unwrap().split_whitespace().nth(7),
        Some("1"),
        "{text}"
    );
}

#[test]
fn pooled_seeds_judge_each_case_against_ae_in_its_own_file() {
    // Two files that both hold case 0 (two seeds): pooled, the case
    // counts twice, each against its own AE; concatenated as one file
    // the two case 0s would be one case with four replicates.
    let seed = |mine: f64, ae: f64| {
        vec![
            record(0, "ae", ae, 100, 0, None),
            record(0, "4w", mine, 50, 0, None),
            record(1, "ae", 10.0, 100, 0, None),
            record(1, "4w", 10.0, 50, 0, None),
        ]
    };
    let (a, b) = (seed(11.0, 10.0), seed(20.0, 25.0));
    let names = ["ae".to_string(), "4w".to_string()];
    let pooled = summarise_pooled(&[&a, &b], &names);
    assert_eq!(pooled[0].cases, 4);
    assert_eq!(pooled[0].within_105, 0.75);
    assert_eq!(pooled[0].completion[2], 1.1);
    assert_eq!(pooled[0].clearly_above_105, 1);
    // The same as one file whose cases were renumbered apart.
    let mut renumbered = a.clone();
    renumbered.extend(b.iter().cloned().map(|mut r| {
        r.case += 2;
        r
    }));
    assert_eq!(summarise(&renumbered, &names), pooled);
    assert_eq!(summarise_pooled(&[&a], &names), summarise(&a, &names));
}
