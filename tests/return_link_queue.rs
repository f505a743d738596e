//! A polled receiver must not fill a slow return link with its own
//! fallback ACKs. Gauntlet seed 11 case 7 is one 6.8 MB flow over
//! 3.1 Mbit/s and 112 ms with a return link of 1/949 of that (about 8
//! ACKs a second) and no loss. There the sender's window is clocked by
//! ACKs that arrive one return-link slot apart, so a requested group
//! reaches the receiver in bursts over a second or more; a fixed 100 ms
//! fallback timer fired at every burst, the receiver's ACKs kept the
//! return link's queue full, and the RTT stayed near 3.9 s: the default
//! strategy took 1.70x AE's time and `4w` 2.82x. The wait for a group's
//! tail now grows with the receiver's RTT (`Polled::FALLBACK_RTT_DIVISOR`).
#![cfg(feature = "lab")]

use ackwise::lab::gauntlet::{self, GauntletPlan};
use ackwise::lab::strategy::Strategy;

/// Total completion of `strategy` over five replicates of the case,
/// relative to AE's.
fn ratio(strategy: Strategy) -> f64 {
    let (seed, case) = (11, 7);
    let plan = GauntletPlan {
        strategies: vec![strategy],
        only_case: Some(case),
        replicates: 5,
        ..GauntletPlan::new(seed, 1)
    };
    let file = gauntlet::run(&plan).unwrap_or_else(|e| panic!("seed {seed} case {case}: {e}"));
    let total = |name: &str| -> f64 {
        file.records
            .iter()
            .filter(|r| r.strategy == name)
            .map(|r| r.outcome.completion_s)
            .sum()
    };
    let first = &file.records[0].params;
    assert!(
        first.rto_free_path() && first.reverse_divisor > 900.0,
        "seed {seed} case {case} is no longer a loss-free path with a slow return link"
    );
    total(&strategy.name()) / total("ae")
}

#[test]
fn the_default_is_not_slowed_by_its_own_acks_on_a_slow_return_link() {
    let r = ratio(Strategy::DEFAULT);
    assert!(
        r < 1.4,
        "{r:.3} of AE's completion (1.697 with a fixed fallback)"
    );
}

#[test]
fn four_per_window_is_not_slowed_by_its_own_acks_on_a_slow_return_link() {
    let r = ratio(Strategy::W4);
    assert!(
        r < 2.0,
        "{r:.3} of AE's completion (2.824 with a fixed fallback)"
    );
}
