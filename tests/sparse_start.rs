//! `+sparse-start` on gauntlet paths: slow start asks for 4 ACKs per
//! window instead of one per segment, and the sender spreads what each
//! ACK releases at twice the delivery rate. On loss-free single-flow
//! paths whose transfer is mostly slow start, that must cut the ACKs
//! several times without costing completion time. A case replays from its
//! seed, so every run of a case is the same run.
#![cfg(feature = "lab")]

use ackwise::lab::gauntlet::draw::LossDraw;
use ackwise::lab::gauntlet::{self, GauntletPlan};
use ackwise::lab::strategy::Strategy;

/// (completion summed over the replicates, ACKs summed, RTOs summed) of
/// each strategy on one case, AE first.
fn replay(seed: u64, case: u64, strategies: &[Strategy]) -> Vec<(f64, u64, u64)> {
    let plan = GauntletPlan {
        strategies: strategies.to_vec(),
        only_case: Some(case),
        replicates: 5,
        ..GauntletPlan::new(seed, 1)
    };
    let file = gauntlet::run(&plan).unwrap_or_else(|e| panic!("seed {seed} case {case}: {e}"));
    let first = file.records.first().expect("a record");
    assert!(
        first.params.loss == LossDraw::None && first.params.flows.len() == 1,
        "seed {seed} case {case} is no longer a loss-free single-flow path"
    );
    let names = std::iter::once("ae".to_string()).chain(strategies.iter().map(|s| s.name()));
    names
        .map(|name| {
            let runs = || file.records.iter().filter(|r| r.strategy == name);
            (
                runs().map(|r| r.outcome.completion_s).sum::<f64>(),
                runs().map(|r| r.outcome.ack_packets).sum::<u64>(),
                runs().map(|r| r.outcome.rtos).sum::<u64>(),
            )
        })
        .collect()
}

/// Seed 1 cases 16 (127 segments, a BDP of 855) and 29 (1 496 segments, a
/// BDP of 6 289): the whole transfer is slow start. When the test was
/// written the default sent 465 and 1 215 ACKs over 5 replicates, with
/// `+sparse-start` 120 and 230, at 1.003 and 0.995 of AE's completion.
#[test]
fn slow_start_over_a_large_window_asks_for_a_few_acks_per_window() {
    let sparse: Strategy = "4w-adaptive+spread+sparse-holes+sparse-start"
        .parse()
        .unwrap();
    for case in [16, 29] {
        let runs = replay(1, case, &[Strategy::DEFAULT, sparse]);
        let [(ae_s, _, _), (_, plain_acks, _), (sparse_s, sparse_acks, sparse_rtos)] = runs[..]
        else {
            panic!("seed 1 case {case}: {runs:?}");
        };
        assert_eq!(sparse_rtos, 0, "seed 1 case {case}");
        assert!(
            sparse_acks * 3 <= plain_acks,
            "seed 1 case {case}: {sparse_acks} ACKs against {plain_acks} without +sparse-start"
        );
        let ratio = sparse_s / ae_s;
        assert!(
            ratio < 1.02,
            "seed 1 case {case}: {ratio:.3} of AE's completion"
        );
    }
}
