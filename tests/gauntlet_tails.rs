//! Gauntlet paths where the default strategy once ended a transfer with a
//! retransmission timeout although the path had no random loss and room
//! for a window, or (with `+ack-loss`) timed out again and again because
//! its requested ACKs were lost on the way back, or where a polled
//! receiver's own fallback ACKs filled a slow return link, or where the
//! recovery's own ACKs queued long enough on a slow return link to outlast
//! the timer: each fault is fixed in the sender or the receiver, and the
//! whole path is replayed here so that a later change
//! to the sender, the receiver or the emulator cannot bring the timeouts
//! back unseen. A case replays from its seed, so every run of a case is
//! the same run.
#![cfg(feature = "lab")]

use ackwise::lab::gauntlet::{self, GauntletPlan};
use ackwise::lab::strategy::Strategy;

/// Runs the default strategy (and AE, which every gauntlet run has) on
/// one loss-free single-flow case; returns the default's RTOs and
/// completion relative to AE's.
fn replay(seed: u64, case: u64) -> (u64, f64) {
    replay_rto_free(Strategy::DEFAULT, seed, case, 1)
}

/// [`replay_with`] on a case that must still be a loss-free single-flow
/// path; returns the strategy's RTOs and completion relative to AE's.
fn replay_rto_free(strategy: Strategy, seed: u64, case: u64, replicates: u32) -> (u64, f64) {
    let (rtos, ratio, rto_free) = replay_with(strategy, seed, case, replicates);
    assert!(
        rto_free,
        "seed {seed} case {case} is no longer a loss-free single-flow path"
    );
    (rtos, ratio)
}

/// Runs `strategy` and AE on one case, `replicates` times each; returns
/// the strategy's RTOs over all replicates, its total completion time
/// relative to AE's and whether the case is a loss-free single-flow path.
fn replay_with(strategy: Strategy, seed: u64, case: u64, replicates: u32) -> (u64, f64, bool) {
    let plan = GauntletPlan {
        strategies: vec![strategy],
        only_case: Some(case),
        replicates,
        ..GauntletPlan::new(seed, 1)
    };
    let file = gauntlet::run(&plan).unwrap_or_else(|e| panic!("seed {seed} case {case}: {e}"));
    // (completion summed, RTOs summed, loss-free single-flow path)
    let of = |name: &str| {
        let runs = || file.records.iter().filter(|r| r.strategy == name);
        let first = runs()
            .next()
            .unwrap_or_else(|| panic!("seed {seed} case {case}: no {name} record"));
        (
            runs().map(|r| r.outcome.completion_s).sum::<f64>(),
            runs().map(|r| r.outcome.rtos).sum::<u64>(),
            first.params.rto_free_path(),
        )
    };
    let (completion, rtos, rto_free) = of(&strategy.name());
    let (ae_completion, _, _) = of("ae");
    (rtos, completion / ae_completion, rto_free)
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

/// Seed 15 case 162: one flow at 126 Mbit/s and 25 ms with a 430 kbit/s
/// return link overshoots in slow start and repairs about 500 holes; the
/// ACKs of the repairs queue for 0.7 s on the return link, and the head's
/// second repair is answered behind them all. The SACKs of repairs time
/// the path (RFC 8985 section 6.2), so the timer started at that repair
/// waits for its answer instead of firing with every byte delivered.
#[test]
fn the_answer_to_a_repair_queued_behind_the_recovery_acks_is_awaited() {
    let (rtos, ratio) = replay_rto_free(Strategy::DEFAULT, 15, 162, 5);
    assert_eq!(rtos, 0, "ratio {ratio:.3} (one RTO per replicate before)");
}

/// Seed 3 case 66: an AE competitor's ACKs fill a 24 kbit/s return link,
/// so most of the 4 ACKs per window the default asks for are dropped in
/// its queue and the ACK clock stalls into timeouts. With `+ack-loss` the
/// sender sees each arriving ACK pass several request points after its
/// first timeout and asks for more ACKs per window. Single draws of this
/// path swing widely, so the test judges five replicates, as the
/// gauntlet does (when it was written: 109 timeouts and 5.60x AE's
/// completion without, 30 and 4.11x with).
#[test]
fn requested_acks_lost_on_a_full_return_link_are_asked_for_again() {
    let compensating: Strategy = "4w-adaptive+spread+sparse-holes+ack-loss".parse().unwrap();
    let (plain_rtos, plain_ratio, _) = replay_with(Strategy::DEFAULT, 3, 66, 5);
    let (rtos, ratio, _) = replay_with(compensating, 3, 66, 5);
    assert!(
        rtos * 2 <= plain_rtos,
        "{rtos} timeouts against {plain_rtos} without +ack-loss"
    );
    assert!(
        ratio < 0.85 * plain_ratio,
        "{ratio:.3} of AE's completion against {plain_ratio:.3} without +ack-loss"
    );
}

/// Seed 11 case 7: one 6.8 MB flow over 3.1 Mbit/s and 112 ms with a
/// return link of 1/949 of that (about 8 ACKs a second) and no loss.
/// The sender's window is clocked by ACKs that arrive one return-link
/// slot apart, so a requested group reaches the receiver in bursts over
/// a second or more; a fixed 100 ms fallback timer fired at every burst,
/// the receiver's ACKs kept the return link's queue full, and the RTT
/// stayed near 3.9 s. The wait for a group's tail now grows with the
/// receiver's RTT (`Polled::FALLBACK_RTT_DIVISOR`); every polled
/// receiver has it, so plain `4w` is checked too.
#[test]
fn polled_receivers_do_not_fill_a_slow_return_link_with_fallback_acks() {
    for (strategy, bound, fixed) in [(Strategy::DEFAULT, 1.4, 1.697), (Strategy::W4, 2.0, 2.824)] {
        let (_, ratio) = replay_rto_free(strategy, 11, 7, 5);
        assert!(
            ratio < bound,
            "{strategy}: {ratio:.3} of AE's completion ({fixed} with a fixed fallback)"
        );
    }
}
