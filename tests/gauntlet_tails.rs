//! Gauntlet paths where the default strategy once ended a transfer with a
//! retransmission timeout although the path had no random loss and room
//! for a window: each fault is fixed in the sender, and the whole path is
//! replayed here so that a later change to the sender, the receiver or
//! the emulator cannot bring the timeout back unseen. The paths are
//! drop-tail without randomness, so every run of a case is the same run.
#![cfg(feature = "lab")]

use ackwise::lab::gauntlet::{self, GauntletPlan};
use ackwise::lab::strategy::Strategy;

/// Runs the default strategy (and AE, which every gauntlet run has) on
/// one case; returns the default's RTOs and completion relative to AE's.
fn replay(seed: u64, case: u64) -> (u64, f64) {
    let plan = GauntletPlan {
        strategies: vec![Strategy::DEFAULT],
        only_case: Some(case),
        ..GauntletPlan::new(seed, 1)
    };
    let file = gauntlet::run(&plan).unwrap_or_else(|e| panic!("seed {seed} case {case}: {e}"));
    let find = |name: &str| {
        file.records
            .iter()
            .find(|r| r.strategy == name)
            .unwrap_or_else(|| panic!("seed {seed} case {case}: no {name} record"))
    };
    let ours = find(&Strategy::DEFAULT.name());
    let ae = find("ae");
    assert!(
        ours.params.rto_free_path(),
        "seed {seed} case {case} is no longer a loss-free single-flow path"
    );
    (
        ours.outcome.rtos,
        ours.outcome.completion_s / ae.outcome.completion_s,
    )
}

/// Seed 5 case 111: the last segment lost in a fast recovery, nothing
/// above it to SACK; RFC 6675's rescue retransmission resends it.
#[test]
fn a_last_segment_lost_in_recovery_is_rescued() {
    let (rtos, ratio) = replay(5, 111);
    assert_eq!(rtos, 0, "ratio {ratio:.3}");
}

/// Seed 7 case 178: a burst lost its last eight segments and two below
/// one that arrived; the tail loss probe's delivery condemns the holes.
#[test]
fn holes_below_a_delivered_probe_are_repaired_without_the_timer() {
    let (rtos, ratio) = replay(7, 178);
    assert_eq!(rtos, 0, "ratio {ratio:.3}");
    assert!(
        ratio < 1.4,
        "{ratio:.3} of AE's completion (1.485 with the timeout)"
    );
}

/// Seed 8 case 164: an ACK that advanced and SACKed the segment above the
/// transfer's last hole; early retransmit is asked on it.
#[test]
fn a_tail_hole_reported_by_an_advancing_ack_is_repaired_without_the_timer() {
    let (rtos, ratio) = replay(8, 164);
    assert_eq!(rtos, 0, "ratio {ratio:.3}");
}
