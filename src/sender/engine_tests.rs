//! Packet-by-packet checks of the sender's loss recovery.

use super::*;
use crate::sender::congestion::{Reno, RenoConfig};

const MSS: u64 = 1000;

fn sender(sack: bool) -> Sender {
    sender_with(sack, false)
}

/// A sender with IW 4 and nothing written yet.
fn empty_sender(sack: bool, ack_fixes: bool) -> Sender {
    sender_from(sack, params(ack_fixes))
}

/// The parameters `empty_sender` uses.
fn params(ack_fixes: bool) -> SenderParams {
    SenderParams {
        mss: MSS as usize,
        send_buffer: 1 << 20,
        dup_thresh: 3,
        limited_transmit: true,
        nagle: false,
        initial_rto: Duration::from_secs(1),
        min_rto: Duration::from_millis(200),
        max_rto: Duration::from_secs(60),
        rto_variance_floor: Duration::from_millis(1),
        ack_fixes,
        abc_skips_sacked: true,
        impatient: false,
        hystart: false,
        tail_loss_probe: false,
        loss_by_send_order: true,
        sack_rtt_samples: true,
        timeout_keeps_sacks: true,
        early_retransmit: false,
        af_waits_only_for_sparse_acks: false,
        reorder_timer: false,
    }
}

/// A sender with IW 4, `params` and nothing written yet.
fn sender_from(sack: bool, params: SenderParams) -> Sender {
    let mut reno = RenoConfig::new(MSS);
    reno.initial_window = 4 * MSS;
    Sender::new(params, Box::new(Reno::new(reno)), sack, 1 << 20)
}

fn sender_with(sack: bool, ack_fixes: bool) -> Sender {
    let mut s = empty_sender(sack, ack_fixes);
    assert_eq!(s.write(&vec![7u8; 100_000]), 100_000);
    s
}

fn drain(s: &mut Sender, now: Instant) -> Vec<TxSegment> {
    core::iter::from_fn(|| s.poll_transmit(now, MSS as usize)).collect()
}

fn ack(s: &mut Sender, now: Instant, ack: u64, sack: &[(u64, u64)]) -> AckEffect {
    s.on_ack(
        now,
        AckInput {
            ack,
            sack,
            window: 1 << 20,
            carries_data: false,
            rtt_sample: Some(Duration::from_millis(100)),
            unproven_duplicate: false,
        },
    )
}

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

#[test]
fn initial_window_then_ack_clocked_slow_start() {
    let mut s = sender(true);
    let first = drain(&mut s, t(0));
    assert_eq!(first.len(), 4);
    assert_eq!(first[3].start, 3 * MSS);
    assert!(first
        .iter()
        .all(|x| x.len == MSS as usize && !x.retransmission));
    // One ACK for two segments with L = 2 opens the window by two
    // segments: two for the acknowledged ones plus two of growth.
    ack(&mut s, t(100), 2 * MSS, &[]);
    assert_eq!(s.cwnd(), 6 * MSS);
    assert_eq!(drain(&mut s, t(100)).len(), 4);
}

#[test]
fn limited_transmit_then_fast_retransmit_with_sack() {
    let mut s = sender(true);
    assert_eq!(drain(&mut s, t(0)).len(), 4);
    // Segment 0 lost: each later arrival SACKs one more segment.
    let e = ack(&mut s, t(100), 0, &[(MSS, 2 * MSS)]);
    assert!(e.duplicate && !e.entered_recovery);
    // RFC 3042: the first duplicate releases one new segment.
    let lt = drain(&mut s, t(100));
    assert_eq!(lt.len(), 1);
    assert_eq!(lt[0].start, 4 * MSS);
    ack(&mut s, t(101), 0, &[(MSS, 3 * MSS)]);
    assert_eq!(
        drain(&mut s, t(101)).len(),
        1,
        "second duplicate, second segment"
    );
    let e = ack(&mut s, t(102), 0, &[(MSS, 4 * MSS)]);
    assert!(e.entered_recovery, "third duplicate starts recovery");
    assert_eq!(s.counters().fast_retransmits, 1);
    // FlightSize was 6 segments, 2 of them sent by limited transmit, which
    // RFC 5681 section 3.2 step 2 leaves out: ssthresh = cwnd = 4 / 2.
    assert_eq!(s.ssthresh(), 2 * MSS);
    assert_eq!(s.cwnd(), 2 * MSS);
    let rx = drain(&mut s, t(102));
    assert_eq!(rx[0].start, 0, "the hole is resent first");
    assert!(rx[0].retransmission);
    // pipe: segments 4 and 5 plus the retransmission = 3 > cwnd; only the
    // fast retransmit itself leaves.
    assert_eq!(rx.len(), 1, "{rx:?}");
    // The retransmission fills the hole: recovery ends, cwnd = ssthresh.
    let e = ack(&mut s, t(200), 6 * MSS, &[]);
    assert!(e.exited_recovery);
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), 2 * MSS);
}

#[test]
fn newreno_without_sack_retransmits_each_hole_on_partial_acks() {
    let mut s = sender(false);
    // Grow the window to 6 segments first (L = 2 caps the growth).
    drain(&mut s, t(0));
    ack(&mut s, t(100), 4 * MSS, &[]);
    let sent = drain(&mut s, t(100));
    assert_eq!(sent.len(), 6);
    // Segments 4 and 6 are lost: three duplicates for 4.
    for i in 0..3 {
        let e = ack(&mut s, t(200 + i), 4 * MSS, &[]);
        assert!(e.duplicate);
    }
    assert!(s.in_recovery());
    let rx = drain(&mut s, t(203));
    assert_eq!(rx[0].start, 4 * MSS);
    assert!(rx[0].retransmission);
    // Partial ACK up to the second hole: it is resent at once
    // (RFC 6582 3.2 step 3), without leaving recovery.
    let e = ack(&mut s, t(300), 6 * MSS, &[]);
    assert!(!e.exited_recovery);
    let rx = drain(&mut s, t(300));
    assert!(
        rx.iter().any(|x| x.start == 6 * MSS && x.retransmission),
        "{rx:?}"
    );
    let e = ack(&mut s, t(400), 10 * MSS, &[]);
    assert!(e.exited_recovery);
}

#[test]
fn timeout_goes_back_to_una_with_one_segment_and_backs_off() {
    let mut s = sender(true);
    drain(&mut s, t(0));
    let deadline = s.poll_timeout().expect("RTO armed");
    assert_eq!(deadline, t(1_000), "initial RTO 1 s");
    assert!(!s.handle_timeout(t(999)));
    assert!(s.handle_timeout(deadline));
    assert_eq!(s.counters().timeouts, 1);
    assert_eq!(s.cwnd(), MSS, "loss window");
    assert_eq!(s.ssthresh(), 2 * MSS, "half of four segments in flight");
    let rx = drain(&mut s, deadline);
    assert_eq!(rx.len(), 1);
    assert_eq!(rx[0].start, 0);
    assert!(rx[0].retransmission);
    // Backoff: the next timeout is twice the previous RTO.
    let again = s.poll_timeout().unwrap();
    assert_eq!(again - deadline, Duration::from_secs(2));
    assert!(s.handle_timeout(again));
    assert_eq!(s.counters().timeouts, 2);
    // An ACK for data sent before the rewind moves straight past it.
    let e = ack(&mut s, again + Duration::from_millis(50), 3 * MSS, &[]);
    assert_eq!(e.newly_acked, 3 * MSS);
    assert_eq!(s.snd_una(), 3 * MSS);
}

/// A receiver that holds `got` (segment numbers) and answers each
/// arrival at once: the cumulative ACK and the runs above it as SACK
/// blocks.
fn receiver_ack(got: &alloc::collections::BTreeSet<u64>) -> (u64, Vec<(u64, u64)>) {
    let cum = (0..).find(|i| !got.contains(i)).unwrap();
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    for &i in got.range(cum..) {
        match blocks.last_mut() {
            Some(b) if b.1 == i * MSS => b.1 += MSS,
            _ => blocks.push((i * MSS, (i + 1) * MSS)),
        }
    }
    (cum * MSS, blocks)
}

/// The segments resent after a timeout that strikes with segments 3, 5
/// and 7 SACKed and 2, 4, 6, 8 and 9 lost (2's fast retransmit too),
/// until everything up to 10 is acknowledged with no further loss.
fn resent_after_a_timeout(keep_sacks: bool) -> Vec<u64> {
    let mut s = sender_from(
        true,
        SenderParams {
            timeout_keeps_sacks: keep_sacks,
            ..params(false)
        },
    );
    s.write(&[7u8; 10 * MSS as usize]);
    let mut got = alloc::collections::BTreeSet::new();
    assert_eq!(drain(&mut s, t(0)).len(), 4);
    got.extend([0, 1]);
    ack(&mut s, t(100), 2 * MSS, &[]);
    assert_eq!(drain(&mut s, t(100)).len(), 4, "segments 4 to 7");
    for (i, seg) in [3, 5, 7].into_iter().enumerate() {
        got.insert(seg);
        let (cum, blocks) = receiver_ack(&got);
        ack(&mut s, t(200 + i as u64), cum, &blocks);
        // Limited transmit's 8 and 9, then the fast retransmit of 2: lost.
        drain(&mut s, t(200 + i as u64));
    }
    assert!(s.in_recovery());
    let rto = s.poll_timeout().unwrap();
    assert!(s.handle_timeout(rto));
    let mut resent = Vec::new();
    let mut now = rto;
    while s.snd_una() < 10 * MSS {
        let tx = drain(&mut s, now);
        assert!(!tx.is_empty(), "stalled at {}", s.snd_una());
        now += Duration::from_millis(100);
        for seg in tx {
            if seg.retransmission {
                resent.push(seg.start / MSS);
            }
            got.insert(seg.start / MSS);
            let (cum, blocks) = receiver_ack(&got);
            ack(&mut s, now, cum, &blocks);
        }
    }
    resent
}

/// A receiver that discards what it SACKed (reneging, RFC 2018 section
/// 8) still gets everything: the next timeout finds the cumulative ACK
/// stuck at SACKed data and goes back to SND.UNA. Trusting the marks
/// there would leave nothing to resend and no timer running.
#[test]
fn a_timeout_after_reneging_goes_back_to_the_cumulative_ack() {
    let mut s = sender(true);
    let mut got = alloc::collections::BTreeSet::new();
    let tx = drain(&mut s, t(0));
    assert_eq!(tx.len(), 4);
    // 0 is lost; 1 to 3 are SACKed, and the fast retransmit of 0 is lost.
    for i in 1..4 {
        got.insert(i);
        let (cum, blocks) = receiver_ack(&got);
        ack(&mut s, t(100 + i), cum, &blocks);
        drain(&mut s, t(100 + i));
    }
    // The receiver drops what it held above the hole.
    got.clear();
    let mut now = s.poll_timeout().unwrap();
    let mut timeouts = 0;
    while s.snd_una() < 10 * MSS {
        let tx = drain(&mut s, now);
        if tx.is_empty() {
            now = s.poll_timeout().expect("a timer runs while data is out");
            assert!(s.handle_timeout(now));
            timeouts += 1;
            assert!(timeouts < 4, "no progress at {}", s.snd_una());
            continue;
        }
        now += Duration::from_millis(100);
        for seg in tx {
            got.insert(seg.start / MSS);
            let (cum, blocks) = receiver_ack(&got);
            ack(&mut s, now, cum, &blocks);
        }
    }
}

#[test]
fn a_timeout_resends_the_holes_and_not_what_was_sacked() {
    assert_eq!(resent_after_a_timeout(true), [2, 4, 6, 8, 9]);
    // Going back to SND.UNA resends SACKed data too.
    let go_back_n = resent_after_a_timeout(false);
    assert!(
        go_back_n.contains(&5) && go_back_n.contains(&7),
        "{go_back_n:?}"
    );
}

#[test]
fn acks_for_data_never_sent_are_ignored() {
    let mut s = sender(true);
    drain(&mut s, t(0));
    let e = ack(&mut s, t(10), 50 * MSS, &[]);
    assert!(e.invalid);
    assert_eq!(s.snd_una(), 0);
}

#[test]
fn fin_follows_the_last_byte_and_is_retransmitted_with_it() {
    let params = SenderParams {
        mss: 1000,
        send_buffer: 10_000,
        dup_thresh: 3,
        limited_transmit: true,
        nagle: true,
        initial_rto: Duration::from_secs(1),
        min_rto: Duration::from_millis(200),
        max_rto: Duration::from_secs(60),
        rto_variance_floor: Duration::from_millis(1),
        ack_fixes: false,
        abc_skips_sacked: true,
        impatient: false,
        hystart: false,
        tail_loss_probe: false,
        loss_by_send_order: true,
        sack_rtt_samples: true,
        timeout_keeps_sacks: true,
        early_retransmit: false,
        af_waits_only_for_sparse_acks: false,
        reorder_timer: false,
    };
    let mut s = Sender::new(
        params,
        Box::new(Reno::new(RenoConfig::new(1000))),
        true,
        1 << 20,
    );
    s.write(&[1u8; 1500]);
    s.queue_fin();
    let tx = drain(&mut s, t(0));
    assert_eq!(tx.len(), 2);
    assert_eq!((tx[1].start, tx[1].len, tx[1].fin), (1000, 500, true));
    assert!(s.handle_timeout(s.poll_timeout().unwrap()));
    let rx = drain(&mut s, t(1_000));
    assert_eq!((rx[0].start, rx[0].fin), (0, false));
    ack(&mut s, t(1_100), 1000, &[]);
    let rx = drain(&mut s, t(1_100));
    assert_eq!((rx[0].start, rx[0].len, rx[0].fin), (1000, 500, true));
    ack(&mut s, t(1_200), 1501, &[]);
    assert!(s.fin_acked());
}

/// Paper 003 sec. 4.3, packet by packet: segment 4 (bytes 4000..5000)
/// is dropped, and the ACK for segment 3 arrives together with a SACK
/// block for segment 5. Without AF that cumulative ACK releases new data
/// just ahead of the coming fast retransmit; with AF it releases none,
/// limited transmit still adds one segment per duplicate, and the fast
/// retransmit waits until the next ACK is expected.
#[test]
fn ack_fixes_hold_the_burst_and_postpone_the_fast_retransmit() {
    let run = |fixes: bool| {
        let mut s = sender_with(true, fixes);
        drain(&mut s, t(0));
        // Two ACKs 10 ms apart grow the window and time the ACK interval.
        ack(&mut s, t(100), 2 * MSS, &[]);
        ack(&mut s, t(110), 3 * MSS, &[]);
        drain(&mut s, t(110));
        let e = ack(&mut s, t(200), 4 * MSS, &[(5 * MSS, 6 * MSS)]);
        assert_eq!(e.newly_acked, MSS);
        let burst = drain(&mut s, t(200));
        (s, burst)
    };
    let (_, plain_burst) = run(false);
    let (mut af, af_burst) = run(true);
    assert!(!plain_burst.is_empty(), "without AF the ACK releases data");
    assert!(af_burst.is_empty(), "AF releases nothing: {af_burst:?}");
    // First duplicate: limited transmit sends one segment.
    let e = ack(&mut af, t(201), 4 * MSS, &[(5 * MSS, 7 * MSS)]);
    assert!(e.duplicate);
    assert_eq!(drain(&mut af, t(201)).len(), 1);
    // Three segments above the hole are SACKed: segment 4 counts as lost
    // (RFC 6675), but AF postpones the fast retransmit to when the next
    // ACK is expected; limited transmit goes on.
    let e = ack(&mut af, t(202), 4 * MSS, &[(5 * MSS, 8 * MSS)]);
    assert!(e.duplicate && !e.entered_recovery && !af.in_recovery());
    let lt = drain(&mut af, t(202));
    assert!(lt.len() == 1 && !lt[0].retransmission, "{lt:?}");
    let due = af.poll_timeout().unwrap();
    assert!(due > t(202) && due < t(300), "{due:?}");
    af.handle_timeout(due);
    assert!(af.in_recovery());
    let rexmit = drain(&mut af, due);
    assert_eq!(
        rexmit.first().map(|x| (x.start, x.retransmission)),
        Some((4 * MSS, true))
    );
    // Had the next ACK come first, it would have triggered recovery.
    let (mut early, _) = run(true);
    ack(&mut early, t(201), 4 * MSS, &[(5 * MSS, 7 * MSS)]);
    ack(&mut early, t(202), 4 * MSS, &[(5 * MSS, 8 * MSS)]);
    assert!(!early.in_recovery());
    let e = ack(&mut early, t(203), 4 * MSS, &[(5 * MSS, 9 * MSS)]);
    assert!(e.entered_recovery);
}

/// Paper 003 sec. 4.2's proposal: a cumulative ACK that covers data the
/// receiver had already SACKed counts only the rest. Segment 0 is late;
/// 1 and 2 are SACKed (two duplicates, no recovery); then the cumulative
/// ACK for all three arrives.
#[test]
fn byte_counting_skips_data_already_sacked() {
    let grow = |skip: bool| {
        let mut s = sender(true);
        s.params.abc_skips_sacked = skip;
        s.cc.set_byte_counting_limit(4);
        drain(&mut s, t(0));
        ack(&mut s, t(100), 0, &[(MSS, 2 * MSS)]);
        ack(&mut s, t(101), 0, &[(MSS, 3 * MSS)]);
        assert!(!s.in_recovery());
        let before = s.cwnd();
        ack(&mut s, t(102), 3 * MSS, &[]);
        s.cwnd() - before
    };
    assert_eq!(grow(false), 3 * MSS, "slow start counts all three");
    assert_eq!(grow(true), MSS, "only segment 0 was not SACKed before");
}

/// Issue 18: a timeout that ends a stalled SACK recovery must not take
/// ssthresh from a FlightSize swollen by the new data sent during that
/// recovery (RFC 6675 NextSeg rule 2). The episode already reduced the
/// window at the fast retransmit; the timeout keeps that ssthresh.
#[test]
fn timeout_during_fast_recovery_keeps_the_episodes_ssthresh() {
    let mut s = sender(true);
    drain(&mut s, t(0));
    ack(&mut s, t(100), 4 * MSS, &[]);
    assert_eq!(drain(&mut s, t(100)).len(), 6);
    // Segment 4 is lost; its retransmission will be lost too.
    ack(&mut s, t(200), 4 * MSS, &[(5 * MSS, 6 * MSS)]);
    drain(&mut s, t(200));
    ack(&mut s, t(201), 4 * MSS, &[(5 * MSS, 7 * MSS)]);
    drain(&mut s, t(201));
    let e = ack(&mut s, t(202), 4 * MSS, &[(5 * MSS, 8 * MSS)]);
    assert!(e.entered_recovery);
    let episode_ssthresh = s.ssthresh();
    drain(&mut s, t(202));
    // Everything else arrives and is SACKed; recovery keeps sending new
    // data while the hole stays.
    for i in 0..6 {
        let high = s.snd_nxt();
        ack(&mut s, t(210 + i), 4 * MSS, &[(5 * MSS, high)]);
        drain(&mut s, t(210 + i));
    }
    assert!(s.in_recovery());
    assert!(
        s.snd_nxt() - s.snd_una() > 4 * episode_ssthresh,
        "recovery sent much new data: flight {}",
        s.snd_nxt() - s.snd_una()
    );
    let rto = s.poll_timeout().unwrap();
    assert!(s.handle_timeout(rto));
    assert_eq!(s.cwnd(), MSS, "loss window");
    assert_eq!(
        s.ssthresh(),
        episode_ssthresh,
        "the timeout does not recompute ssthresh from the swollen flight"
    );
}

/// Paper 003's 2WAF: a stretch ACK with a SACK block takes half the
/// window out of flight just before the fast retransmit, and AF holds the
/// refill. ssthresh comes from the window in use (10 segments), not from
/// the 6 segments still outstanding, which would cut to less than a third.
#[test]
fn stretch_ack_before_fast_retransmit_does_not_deflate_ssthresh() {
    let mut s = sender_with(true, true);
    assert_eq!(drain(&mut s, t(0)).len(), 4);
    ack(&mut s, t(100), 4 * MSS, &[]);
    assert_eq!(drain(&mut s, t(100)).len(), 6);
    ack(&mut s, t(200), 10 * MSS, &[]);
    assert_eq!(drain(&mut s, t(200)).len(), 8);
    ack(&mut s, t(300), 18 * MSS, &[]);
    assert_eq!(drain(&mut s, t(300)).len(), 10, "window in use: 18..28");
    // Segment 22 is lost; one ACK covers 18..22 and SACKs 23. Segments
    // 24..28 are still on their way and will bring the duplicate ACKs.
    ack(&mut s, t(400), 22 * MSS, &[(23 * MSS, 24 * MSS)]);
    assert!(drain(&mut s, t(400)).is_empty(), "AF holds the refill");
    for k in 25..28 {
        ack(&mut s, t(376 + k), 22 * MSS, &[(23 * MSS, k * MSS)]);
        drain(&mut s, t(376 + k));
    }
    if !s.in_recovery() {
        let due = s.poll_timeout().unwrap();
        assert!(due < t(500), "the postponed fast retransmit, {due:?}");
        s.handle_timeout(due);
    }
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 5 * MSS, "half of the 10 segments in use");
}

/// AF's hold needs duplicate ACKs to end it: with less than DupThresh
/// segments in flight beyond the highest SACK, holding would leave the
/// sender waiting for ACKs that cannot come, so the refill goes.
#[test]
fn af_does_not_hold_the_refill_when_too_little_is_in_flight_to_end_the_hold() {
    let mut s = sender_with(true, true);
    drain(&mut s, t(0));
    ack(&mut s, t(100), 4 * MSS, &[]);
    assert_eq!(drain(&mut s, t(100)).len(), 6);
    // Segment 7 is lost; one ACK covers 4..7 and SACKs 8: only segment 9
    // is left to bring a duplicate ACK.
    ack(&mut s, t(200), 7 * MSS, &[(8 * MSS, 9 * MSS)]);
    assert!(!drain(&mut s, t(200)).is_empty(), "the refill goes");
}

/// A fast retransmit that AF postpones never waits past the
/// retransmission timer, whatever the ACK spacing says: on a slow ACK
/// path the next ACK may be due after the timer, and a postponement
/// there turns every fast retransmit into a timeout.
#[test]
fn af_never_postpones_the_fast_retransmit_past_half_an_rtt() {
    let mut s = sender_with(true, true);
    drain(&mut s, t(0));
    // ACKs 2 s apart teach the ACK-spacing estimate a 2 s interval.
    ack(&mut s, t(100), 2 * MSS, &[]);
    ack(&mut s, t(2_100), 4 * MSS, &[]);
    let sent = drain(&mut s, t(2_100)).len() as u64;
    assert!(sent >= 4, "sent {sent}");
    let una = 4 * MSS;
    for k in 0..3 {
        ack(
            &mut s,
            t(2_200 + k),
            una,
            &[(una + MSS, una + (2 + k) * MSS)],
        );
        drain(&mut s, t(2_200 + k));
    }
    if !s.in_recovery() {
        let due = s.poll_timeout().unwrap();
        // SRTT is about 100 ms (the SACKs of the duplicates time their
        // segments at 100-102 ms): at most half of it of waiting.
        let srtt = s.rtt().srtt().unwrap();
        assert!(srtt < Duration::from_millis(103), "{srtt:?}");
        assert!(due <= t(2_202) + srtt / 2, "postponed to {due:?}");
        s.handle_timeout(due);
    }
    assert!(s.in_recovery());
    assert_eq!(s.counters().timeouts, 0);
}

/// A sender with SACK, an initial window of `initial_segments`, early
/// retransmit as given and `bytes` written.
fn early_retransmit_sender(early_retransmit: bool, initial_segments: u64, bytes: usize) -> Sender {
    let mut reno = RenoConfig::new(MSS);
    reno.initial_window = initial_segments * MSS;
    let params = SenderParams {
        early_retransmit,
        ..params(false)
    };
    let mut s = Sender::new(params, Box::new(Reno::new(reno)), true, 1 << 20);
    assert_eq!(s.write(&vec![7u8; bytes]), bytes);
    s
}

/// A SACK sender with IW 4, the reordering timer as given and 100 kB
/// written.
fn reorder_timer_sender(reorder_timer: bool) -> Sender {
    let mut s = sender_from(
        true,
        SenderParams {
            reorder_timer,
            ..params(false)
        },
    );
    assert_eq!(s.write(&vec![7u8; 100_000]), 100_000);
    s
}

/// A stalled recovery (RFC 8985's reordering timer, see
/// `sender::reorder_timer`): IW 4 and limited transmit put segments 0-5
/// out; 0, 3 and 5 are lost. Segment 4's SACK, a round trip after it
/// left, is the third and starts recovery with cwnd at 2 segments. When
/// the fast retransmit's partial ACK arrives, segment 3 lies below the one
/// SACKed segment (4) and segment 5 above it: one SACK is short of
/// DupThresh, and with 3 and 5 counted in `pipe` cwnd is full. Segment 3
/// was sent before segment 4, which arrived, and more than a round trip
/// and a quarter of the minimum RTT ago, so the timer has declared it
/// lost, and the partial ACK's room resends it. Without the timer nothing
/// may go out until the retransmission timeout.
#[test]
fn the_reordering_timer_resends_a_hole_that_one_sack_cannot_condemn() {
    let run = |reorder_timer: bool| {
        let mut s = reorder_timer_sender(reorder_timer);
        assert_eq!(drain(&mut s, t(0)).len(), 4);
        ack(&mut s, t(100), 0, &[(MSS, 2 * MSS)]);
        assert_eq!(drain(&mut s, t(100)).len(), 1, "limited transmit: 4");
        ack(&mut s, t(101), 0, &[(MSS, 3 * MSS)]);
        assert_eq!(drain(&mut s, t(101)).len(), 1, "limited transmit: 5");
        let e = ack(&mut s, t(200), 0, &[(MSS, 3 * MSS), (4 * MSS, 5 * MSS)]);
        assert!(e.entered_recovery);
        assert_eq!(s.cwnd(), 2 * MSS);
        let fr = drain(&mut s, t(200));
        assert_eq!(
            fr.iter().map(|x| x.start).collect::<Vec<_>>(),
            vec![0],
            "the fast retransmit alone fits"
        );
        // The resent segment 0 arrives: a partial ACK up to the hole at 3.
        ack(&mut s, t(300), 3 * MSS, &[(4 * MSS, 5 * MSS)]);
        (s.counters().reorder_timeouts, drain(&mut s, t(300)), s)
    };
    let (declared, sent, _) = run(true);
    assert_eq!(declared, 1);
    assert_eq!(
        sent.first().map(|x| (x.start, x.retransmission)),
        Some((3 * MSS, true)),
        "{sent:?}"
    );
    let (declared, sent, s) = run(false);
    assert_eq!(declared, 0);
    assert!(sent.is_empty(), "stalled: {sent:?}");
    let next = s.poll_timeout().expect("the retransmission timer runs");
    assert!(next > t(400), "only the timeout is left: {next:?}");
}

/// The timer's deadline. Segment 0 is lost and repaired by the fast
/// retransmit (cwnd 2 segments); of the two limited-transmit segments, 4
/// (sent at 100 ms) is lost and 5 arrives. Its SACK is one short of
/// DupThresh for segment 4, `pipe` fills cwnd, and the timer is armed for
/// segment 4's send time plus SRTT and a quarter of the minimum RTT. When
/// it fires the hole is lost, `pipe` drops below cwnd and the hole is
/// resent then, with no other ACK needed.
#[test]
fn the_reordering_timer_fires_a_round_trip_and_a_quarter_after_the_hole_left() {
    let mut s = reorder_timer_sender(true);
    assert_eq!(drain(&mut s, t(0)).len(), 4);
    ack(&mut s, t(100), 0, &[(MSS, 2 * MSS)]);
    assert_eq!(drain(&mut s, t(100))[0].start, 4 * MSS);
    ack(&mut s, t(101), 0, &[(MSS, 3 * MSS)]);
    assert_eq!(drain(&mut s, t(101))[0].start, 5 * MSS);
    assert!(ack(&mut s, t(102), 0, &[(MSS, 4 * MSS)]).entered_recovery);
    assert_eq!(drain(&mut s, t(102)).len(), 1, "the fast retransmit");
    ack(&mut s, t(201), 0, &[(MSS, 4 * MSS), (5 * MSS, 6 * MSS)]);
    assert!(drain(&mut s, t(201)).is_empty(), "pipe fills cwnd");
    let srtt = s.rtt().srtt().unwrap();
    let min = s.rtt().min_rtt().unwrap();
    let due = t(100) + srtt + min / 4;
    assert!(due > t(201));
    assert_eq!(s.poll_timeout(), Some(due));
    assert!(!s.handle_timeout(due), "no retransmission timeout");
    assert_eq!(s.counters().reorder_timeouts, 1);
    let sent = drain(&mut s, due);
    assert_eq!(
        sent.iter()
            .map(|x| (x.start, x.retransmission))
            .collect::<Vec<_>>(),
        vec![(4 * MSS, true)]
    );
    assert_eq!(s.counters().timeouts, 0);
}

/// RFC 5827 at the tail of a transfer: three segments out, the first
/// lost, the other two SACKed. Two SACKed segments are one short of
/// DupThresh, and nothing is left to send to draw a third; early
/// retransmit repairs the loss on the second SACK instead of leaving it
/// to a probe and the timer.
#[test]
fn early_retransmit_repairs_a_tail_loss_that_cannot_bring_three_duplicates() {
    let run = |early: bool| {
        let mut s = early_retransmit_sender(early, 4, 3 * MSS as usize);
        assert_eq!(drain(&mut s, t(0)).len(), 3);
        let first = ack(&mut s, t(100), 0, &[(MSS, 2 * MSS)]);
        assert!(
            first.duplicate && !first.entered_recovery,
            "one SACKed of three"
        );
        let second = ack(&mut s, t(101), 0, &[(MSS, 3 * MSS)]);
        (second.entered_recovery, drain(&mut s, t(101)))
    };
    let (entered, sent) = run(true);
    assert!(entered);
    assert_eq!(
        sent.first().map(|x| (x.start, x.retransmission)),
        Some((0, true)),
        "{sent:?}"
    );
    let (entered, sent) = run(false);
    assert!(
        !entered && sent.is_empty(),
        "DupThresh alone waits: {sent:?}"
    );
}

/// The tail again, but the ACK that reports the segment above the hole
/// also advances the cumulative point (the first segment's ACK was lost
/// or held, as a sparse-ACK receiver does). That ACK acknowledges new
/// data, so it is no duplicate, and with everything sent none can follow;
/// early retransmit must still see the hole on it, not leave it to the
/// timer.
#[test]
fn early_retransmit_sees_a_hole_reported_by_an_ack_that_advances() {
    let mut s = early_retransmit_sender(true, 4, 3 * MSS as usize);
    assert_eq!(drain(&mut s, t(0)).len(), 3);
    let e = ack(&mut s, t(100), MSS, &[(2 * MSS, 3 * MSS)]);
    assert!(!e.duplicate && e.newly_acked == MSS);
    assert!(e.entered_recovery, "{e:?}");
    let sent = drain(&mut s, t(100));
    assert_eq!(
        sent.first().map(|x| (x.start, x.retransmission)),
        Some((MSS, true)),
        "{sent:?}"
    );
    // Without early retransmit the same ACK leaves the hole alone.
    let mut s = early_retransmit_sender(false, 4, 3 * MSS as usize);
    drain(&mut s, t(0));
    assert!(!ack(&mut s, t(100), MSS, &[(2 * MSS, 3 * MSS)]).entered_recovery);
    assert!(drain(&mut s, t(100)).iter().all(|x| !x.retransmission));
}

/// Early retransmit only where no new segment can go out: a sender with
/// data left and room in the peer's window sends it (limited transmit)
/// and lets DupThresh decide, even with three segments outstanding.
#[test]
fn early_retransmit_leaves_the_decision_to_dupthresh_while_new_data_can_go() {
    let mut s = early_retransmit_sender(true, 3, 100_000);
    assert_eq!(drain(&mut s, t(0)).len(), 3);
    ack(&mut s, t(100), 0, &[(MSS, 2 * MSS)]);
    let e = ack(&mut s, t(101), 0, &[(MSS, 3 * MSS)]);
    assert!(e.duplicate && !e.entered_recovery && !s.in_recovery());
    let sent = drain(&mut s, t(101));
    assert!(
        !sent.is_empty() && sent.iter().all(|x| !x.retransmission),
        "limited transmit sends new data: {sent:?}"
    );
}

/// The acknowledgment fixes postpone a fast retransmit to let the burst
/// before it drain; with `af_waits_only_for_sparse_acks` they do so only
/// when each requested ACK covers two or more segments. Asked for an ACK
/// of every segment, the sender repairs the loss at once; asked for two
/// per window (groups of several segments), it still waits.
#[test]
fn af_postpones_the_fast_retransmit_only_when_acks_are_sparse() {
    let run = |strategy: Box<dyn crate::sender::AckRequestStrategy>| {
        let mut reno = RenoConfig::new(MSS);
        reno.initial_window = 10 * MSS;
        let params = SenderParams {
            af_waits_only_for_sparse_acks: true,
            ..params(true)
        };
        let mut s = Sender::new(params, Box::new(Reno::new(reno)), true, 1 << 20);
        assert_eq!(s.write(&vec![7u8; 100_000]), 100_000);
        s.set_ack_requests(Some(crate::sender::Requester::new(strategy, false)));
        assert_eq!(drain(&mut s, t(0)).len(), 10);
        // Two ACKs 10 ms apart time the ACK interval the wait uses.
        ack(&mut s, t(100), MSS, &[]);
        ack(&mut s, t(110), 2 * MSS, &[]);
        drain(&mut s, t(110));
        // Segment 2 is lost; three segments above it are SACKed.
        for k in 0..3 {
            ack(&mut s, t(200 + k), 2 * MSS, &[(3 * MSS, (4 + k) * MSS)]);
            drain(&mut s, t(200 + k));
        }
        s
    };
    let every = run(Box::new(crate::sender::EveryN { segments: 1 }));
    assert_eq!(every.ack_requests().map(|r| r.group_segments()), Some(1));
    assert!(
        every.in_recovery(),
        "no burst to wait for: repaired at once"
    );
    let sparse = run(Box::new(crate::sender::PerWindow { acks: 2 }));
    assert!(sparse.ack_requests().unwrap().group_segments() >= 2);
    assert!(!sparse.in_recovery(), "sparse ACKs: AF waits");
    let due = sparse.poll_timeout().unwrap();
    assert!(due > t(202) && due < t(300), "{due:?}");
}

/// RFC 7661 section 4's side of the argument: an application that never
/// fills a large cwnd must not get ssthresh from that cwnd.
#[test]
fn application_limited_cwnd_does_not_set_ssthresh() {
    let mut s = empty_sender(true, false);
    // Rounds of four segments grow cwnd far beyond what is used.
    let mut now = 0;
    for _ in 0..8 {
        s.write(&[1u8; 4 * MSS as usize]);
        assert_eq!(drain(&mut s, t(now)).len(), 4);
        now += 100;
        let nxt = s.snd_nxt();
        ack(&mut s, t(now), nxt, &[]);
    }
    assert!(s.cwnd() >= 16 * MSS, "cwnd {}", s.cwnd());
    s.write(&[1u8; 6 * MSS as usize]);
    assert_eq!(drain(&mut s, t(now)).len(), 6);
    let una = s.snd_una();
    for k in 2..5 {
        ack(&mut s, t(now + 100 + k), una, &[(una + MSS, una + k * MSS)]);
    }
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 3 * MSS, "half of the 6 segments in flight");
}

/// A SACK sender whose segment 1 (of the flight sent at 100 ms, after
/// segment 0's ACK) is lost: three SACKs at 250-252 ms start a recovery
/// and the fast retransmit of segment 1 leaves at 252 ms. Returns the
/// sender and the number of the last segment sent at 100 ms.
fn head_lost_in_slow_start() -> (Sender, u64) {
    let mut s = sender(true);
    drain(&mut s, t(0));
    ack(&mut s, t(100), MSS, &[]);
    let sent_at_100 = drain(&mut s, t(100));
    let last = sent_at_100.last().expect("slow start sends").start / MSS;
    for k in 0..3 {
        ack(&mut s, t(250 + k), MSS, &[(2 * MSS, (3 + k) * MSS)]);
        drain(&mut s, t(250 + k));
    }
    assert!(s.in_recovery());
    (s, last)
}

/// Resending the oldest outstanding segment restarts the retransmission
/// timer, so a lost fast retransmit that recovery resends again gets a
/// whole RTO from that resend rather than from the last cumulative ACK.
#[test]
fn resending_the_head_restarts_the_retransmission_timer() {
    let (s, _) = head_lost_in_slow_start();
    assert_eq!(s.poll_timeout(), Some(t(252) + s.rtt().rto()));
}

/// In a recovery, ACKs that SACK segments sent once are RTT samples, and
/// the timer started by the fast retransmit keeps to the RTO they give:
/// ACKs queued on a slow reverse link arrive later and later, and the
/// timer must not fire while they still come.
#[test]
fn sacks_in_recovery_time_the_path_and_move_the_timer() {
    let (mut s, last) = head_lost_in_slow_start();
    let srtt_before = s.rtt().srtt().expect("sampled");
    let deadline_before = s.poll_timeout().expect("timer runs");
    // The SACK of the last segment sent at 100 ms comes 600 ms later.
    ack(&mut s, t(700), MSS, &[(2 * MSS, (last + 1) * MSS)]);
    assert!(s.rtt().srtt().expect("sampled") > srtt_before);
    let deadline = s.poll_timeout().expect("timer runs");
    assert!(
        deadline > deadline_before,
        "{deadline:?} <= {deadline_before:?}"
    );
    assert_eq!(deadline, t(252) + s.rtt().rto());
    // The head, resent at 252 ms, was lost beyond doubt (three SACKs
    // above it): only the resend can have arrived, so its SACK times the
    // path from the resend, 648 ms.
    let srtt = s.rtt().srtt().expect("sampled");
    let e = ack(
        &mut s,
        t(900),
        MSS,
        &[(MSS, 2 * MSS), (2 * MSS, (last + 1) * MSS)],
    );
    assert!(e.newly_acked == 0 && s.in_recovery());
    assert!(s.rtt().srtt().expect("sampled") > srtt);
}

/// A SACK of a repair that comes back sooner than the path's minimum RTT
/// answers the first copy, not the repair (RFC 8985 section 6.2): no
/// sample, since the time since the repair understates the path.
#[test]
fn a_repair_answered_faster_than_the_path_is_no_sample() {
    let (mut s, _) = head_lost_in_slow_start();
    let srtt = s.rtt().srtt();
    ack(&mut s, t(260), MSS, &[(MSS, 5 * MSS)]);
    assert!(s.in_recovery());
    assert_eq!(s.rtt().srtt(), srtt);
}

/// RFC 3168 section 6.1.2: the window is reduced once per loss episode.
/// An ECN-Echo during fast recovery is about the window that recovery
/// already halved; the next one, once an ACK passes the data of the
/// episode, reduces again.
#[test]
fn ecn_echo_during_fast_recovery_does_not_reduce_again() {
    let mut s = sender(true);
    drain(&mut s, t(0));
    ack(&mut s, t(100), 4 * MSS, &[]);
    drain(&mut s, t(100));
    // Segment 4 is lost: three SACKs start recovery.
    for (i, top) in [6u64, 7, 8].into_iter().enumerate() {
        ack(&mut s, t(200 + i as u64), 4 * MSS, &[(5 * MSS, top * MSS)]);
        drain(&mut s, t(200 + i as u64));
    }
    assert!(s.in_recovery());
    let (cwnd, ssthresh) = (s.cwnd(), s.ssthresh());
    assert!(!s.on_ecn_echo(t(203)), "no second reduction in recovery");
    assert_eq!((s.cwnd(), s.ssthresh()), (cwnd, ssthresh));
    // The retransmission arrives: recovery ends at the recovery point.
    let recover = s.snd_nxt();
    ack(&mut s, t(300), recover, &[]);
    assert!(!s.in_recovery());
    drain(&mut s, t(300));
    // New data past the episode is acknowledged: an echo now reduces.
    let next = s.snd_nxt();
    ack(&mut s, t(400), next, &[]);
    let before = s.cwnd();
    assert!(s.on_ecn_echo(t(401)), "a new episode");
    assert!(s.cwnd() < before);
    assert_eq!(s.counters().ecn_reductions, 1);
}

/// HyStart++ (RFC 9406): once a round's RTT floor rises past the previous
/// round's by the threshold, Conservative Slow Start grows the window a
/// quarter as fast for five rounds, then slow start ends where cwnd
/// stands; without the option the same ACKs keep doubling it.
#[test]
fn hystart_ends_the_initial_slow_start_on_a_climbing_rtt() {
    let run = |hystart: bool| {
        let mut s = sender_from(
            true,
            SenderParams {
                hystart,
                ..params(false)
            },
        );
        let data = vec![7u8; 1 << 20];
        let mut now = 0;
        let mut windows = Vec::new();
        // Rounds 0-2 at 100 ms, then 130 ms: a queue is building. What
        // each ACK releases leaves at once, as from a real sender, so the
        // next round's data is in flight before this one's last ACK.
        s.write(&data);
        let mut sent = drain(&mut s, t(now)).len() as u64;
        for round in 0..10u64 {
            assert!(sent > 0);
            let rtt = if round < 3 { 100 } else { 130 };
            now += rtt;
            let high = s.snd_nxt();
            let una = s.snd_una();
            let mut next = 0;
            for k in 1..=sent {
                let ack = una + (high - una) * k / sent;
                s.on_ack(
                    t(now),
                    AckInput {
                        ack,
                        sack: &[],
                        window: 1 << 30,
                        carries_data: false,
                        rtt_sample: Some(Duration::from_millis(rtt)),
                        unproven_duplicate: false,
                    },
                );
                s.write(&data);
                next += drain(&mut s, t(now)).len() as u64;
            }
            sent = next;
            windows.push(s.cwnd());
        }
        (s, windows)
    };
    let (plain, plain_windows) = run(false);
    let (hy, hy_windows) = run(true);
    assert_eq!(plain.counters().hystart_exits, 0);
    assert!(plain.cc.in_slow_start());
    assert_eq!(plain_windows[5], 2 * plain_windows[4]);
    assert_eq!(hy.counters().hystart_exits, 1);
    assert!(!hy.cc.in_slow_start());
    // Round 3 saw the rise; rounds 4-7 grow by a quarter each.
    for r in 5..=7 {
        let growth = hy_windows[r] as f64 / hy_windows[r - 1] as f64;
        assert!((1.2..=1.3).contains(&growth), "round {r}: {hy_windows:?}");
    }
    assert!(
        hy.cwnd() < plain.cwnd() / 4,
        "{hy_windows:?} vs {plain_windows:?}"
    );
}

/// A sender asking for 4 ACKs per window, with an initial window of
/// `segments`, data written.
fn four_per_window(segments: u64) -> Sender {
    let mut reno = RenoConfig::new(MSS);
    reno.initial_window = segments * MSS;
    let mut s = Sender::new(params(false), Box::new(Reno::new(reno)), true, 1 << 20);
    assert_eq!(s.write(&vec![7u8; 100_000]), 100_000);
    s.set_ack_requests(Some(crate::sender::Requester::new(
        Box::new(crate::sender::PerWindow { acks: 4 }),
        false,
    )));
    s
}

#[test]
fn a_group_mostly_sent_when_the_window_fills_is_closed_there() {
    // 22 segments in groups of ceil(22 / 4) = 6: the fourth group has 4
    // of its 6 segments out when the window fills, so its fourth asks for
    // the ACK at once rather than waiting two more segments.
    let mut s = four_per_window(22);
    let countdowns: Vec<_> = drain(&mut s, t(0)).iter().map(|x| x.ack_request).collect();
    let mut want: Vec<_> = (0..3).flat_map(|_| (0..6u16).rev().map(Some)).collect();
    want.extend([Some(5), Some(4), Some(3), Some(0)]);
    assert_eq!(countdowns, want);
}

#[test]
fn a_group_barely_started_when_the_window_fills_stays_open() {
    // 13 segments in groups of 4: the last group has one segment out, and
    // earlier requested ACKs are still to come back to release the rest.
    let mut s = four_per_window(13);
    let countdowns: Vec<_> = drain(&mut s, t(0)).iter().map(|x| x.ack_request).collect();
    let mut want: Vec<_> = (0..3).flat_map(|_| (0..4u16).rev().map(Some)).collect();
    want.push(Some(3));
    assert_eq!(countdowns, want);
}

/// [`params`] without the acknowledgment fixes, with tail loss probes.
fn probing_params() -> SenderParams {
    SenderParams {
        tail_loss_probe: true,
        loss_by_send_order: true,
        sack_rtt_samples: true,
        timeout_keeps_sacks: true,
        ..params(false)
    }
}

/// A SACK sender with tail loss probes that has sent four segments, all
/// it has, and heard the ACK for the first three at 100 ms (SRTT 100 ms,
/// RTO 300 ms): the ACK for the last one never comes.
fn tail_with_last_ack_missing(tlp: bool) -> Sender {
    let p = if tlp { probing_params() } else { params(false) };
    let mut s = sender_from(true, p);
    s.write(&[7u8; 4 * MSS as usize]);
    assert_eq!(drain(&mut s, t(0)).len(), 4);
    ack(&mut s, t(100), 3 * MSS, &[]);
    assert!(drain(&mut s, t(100)).is_empty());
    s
}

#[test]
fn a_missing_last_ack_draws_a_probe_instead_of_a_timeout() {
    // Without probes the timer fires and cwnd collapses to one segment.
    let mut plain = tail_with_last_ack_missing(false);
    let at = plain.poll_timeout().unwrap();
    assert!(plain.handle_timeout(at));
    assert_eq!(plain.cwnd(), MSS);
    // With them the same expiry (two SRTTs plus the delayed-ACK allowance
    // outlast the 300 ms timer, so the probe takes the timer's place)
    // resends the last segment, asking for an ACK, and nothing collapses.
    let mut s = tail_with_last_ack_missing(true);
    assert_eq!(s.poll_timeout(), Some(at));
    let cwnd = s.cwnd();
    assert!(!s.handle_timeout(at), "a probe, not a timeout");
    let probe = drain(&mut s, at);
    assert_eq!(probe.len(), 1, "{probe:?}");
    assert_eq!((probe[0].start, probe[0].len), (3 * MSS, MSS as usize));
    assert!(probe[0].retransmission);
    assert_eq!(s.counters().timeouts, 0);
    assert_eq!(s.counters().tail_loss_probes, 1);
    // The timer runs again from the probe; no second probe is armed.
    assert!(s.poll_timeout().unwrap() > at);
    // The receiver had the segment: its ACK D-SACKs the probe, no loss.
    ack(
        &mut s,
        at + Duration::from_millis(100),
        4 * MSS,
        &[(3 * MSS, 4 * MSS)],
    );
    assert_eq!(s.ssthresh(), u64::MAX);
    assert!(s.cwnd() > cwnd, "still in slow start");
    assert_eq!(s.counters().tail_loss_repairs, 0);
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn a_probe_that_repairs_a_lost_segment_reduces_the_window_once() {
    let mut s = tail_with_last_ack_missing(true);
    let cwnd = s.cwnd();
    let at = s.poll_timeout().unwrap();
    s.handle_timeout(at);
    assert_eq!(drain(&mut s, at).len(), 1);
    // No D-SACK: the original was lost and the probe filled the hole.
    ack(&mut s, at + Duration::from_millis(100), 4 * MSS, &[]);
    assert_eq!(s.counters().tail_loss_repairs, 1);
    // Halved from the four segments in use (cwnd had grown to six).
    assert_eq!(cwnd, 6 * MSS);
    assert_eq!(s.ssthresh(), 2 * MSS);
    assert_eq!(s.cwnd(), 2 * MSS);
    assert_eq!(s.counters().timeouts, 0);
}

/// Two of four segments lost at the tail, one between them SACKed: one
/// SACK is short of DupThresh, and nothing is left to send. The probe
/// resends the last segment; its SACK leaves two segments reported above
/// the hole, still short, but the probe left two round trips after the
/// hole's segment did, so the hole is lost (RFC 8985) and is repaired at
/// once instead of by the timer.
#[test]
fn a_delivered_probe_reveals_the_holes_below_it() {
    let run = |tlp: bool| {
        let mut s = sender_from(true, probing_params());
        if !tlp {
            s.params.tail_loss_probe = false;
        }
        s.write(&[7u8; 4 * MSS as usize]);
        assert_eq!(drain(&mut s, t(0)).len(), 4);
        // Segments 1 and 3 lost.
        let e = ack(&mut s, t(100), MSS, &[(2 * MSS, 3 * MSS)]);
        assert!(!e.entered_recovery);
        assert!(drain(&mut s, t(100)).is_empty());
        let at = s.poll_timeout().unwrap();
        let timeout = s.handle_timeout(at);
        let probe = drain(&mut s, at);
        (s, at, timeout, probe)
    };
    let (mut s, at, timeout, probe) = run(true);
    assert!(!timeout);
    assert_eq!(
        probe.iter().map(|x| x.start).collect::<Vec<_>>(),
        [3 * MSS],
        "the probe resends the last segment"
    );
    let later = at + Duration::from_millis(100);
    let e = ack(&mut s, later, MSS, &[(2 * MSS, 4 * MSS)]);
    assert!(e.entered_recovery, "{e:?}");
    let repair = drain(&mut s, later);
    assert_eq!(
        repair.first().map(|x| (x.start, x.retransmission)),
        Some((MSS, true)),
        "{repair:?}"
    );
    assert_eq!(s.counters().timeouts, 0);
    // Without probes the same tail waits for the timer.
    let (_, _, timeout, resent) = run(false);
    assert!(timeout);
    assert_eq!(resent.first().map(|x| x.start), Some(MSS));
}

#[test]
fn a_probe_sends_new_data_past_cwnd_when_there_is_some() {
    let mut s = sender_from(true, probing_params());
    s.write(&[7u8; 20 * MSS as usize]);
    assert_eq!(drain(&mut s, t(0)).len(), 4);
    ack(&mut s, t(100), MSS, &[]);
    let burst = drain(&mut s, t(100));
    let high = burst.last().unwrap().start + MSS;
    // Every ACK after that is lost.
    let at = s.poll_timeout().unwrap();
    assert!(!s.handle_timeout(at));
    let probe = drain(&mut s, at);
    assert_eq!(probe.len(), 1, "one segment beyond cwnd: {probe:?}");
    assert_eq!(probe[0].start, high);
    assert!(!probe[0].retransmission);
    // Its ACK, covering everything, settles the episode without a
    // reduction, and probes are armed again for the next tail.
    let cwnd = s.cwnd();
    ack(&mut s, at + Duration::from_millis(100), high + MSS, &[]);
    assert_eq!(s.counters().tail_loss_repairs, 0);
    assert!(s.cwnd() >= cwnd);
}

#[test]
fn no_probe_without_sack_or_during_recovery() {
    let mut s = sender_from(false, probing_params());
    s.write(&[7u8; 4 * MSS as usize]);
    drain(&mut s, t(0));
    ack(&mut s, t(100), 3 * MSS, &[]);
    let at = s.poll_timeout().unwrap();
    assert!(s.handle_timeout(at), "NewReno has no probe: a timeout");
    assert_eq!(s.counters().tail_loss_probes, 0);
}

/// A loss among the data sent during a recovery starts a new recovery
/// once the first ends, but a segment resent in the first whose copy is
/// still in flight is not sent a second time (neither as the new
/// recovery's fast retransmit nor by NextSeg, which restarts HighRxt at
/// the cumulative ACK).
#[test]
fn a_new_recovery_does_not_resend_a_retransmission_still_in_flight() {
    let mut s = sender(true);
    let starts = |segs: &[TxSegment]| segs.iter().map(|g| g.start).collect::<Vec<_>>();
    // Slow start, one ACK per segment, until 16 segments are out.
    let mut now = 0;
    let mut out = starts(&drain(&mut s, t(now)));
    while out.len() < 16 {
        now += 100;
        for a in out {
            ack(&mut s, t(now), a + MSS, &[]);
        }
        out = starts(&drain(&mut s, t(now)));
    }
    assert_eq!(out.len(), 16, "{out:?}");
    assert_eq!(out[0], 12_000);
    // Segment 12 is lost: recovery, 12 resent.
    ack(&mut s, t(300), 12_000, &[(13_000, 16_000)]);
    assert!(s.in_recovery());
    assert_eq!(starts(&drain(&mut s, t(300))), vec![12_000]);
    // Everything else arrives; new data goes out, and 28 is lost.
    ack(&mut s, t(310), 12_000, &[(13_000, 28_000)]);
    let sent = starts(&drain(&mut s, t(310)));
    assert_eq!(sent.first(), Some(&28_000), "{sent:?}");
    // 29..32, sent after 12's copy, arrive: that copy was lost too, and
    // 28 is lost. Both go out again, 12 first.
    ack(
        &mut s,
        t(320),
        12_000,
        &[(13_000, 28_000), (29_000, 32_000)],
    );
    let resent = starts(&drain(&mut s, t(320)));
    assert_eq!(resent[..2], [12_000, 28_000], "{resent:?}");
    // 12's second copy arrives: the first recovery ends, the second
    // begins with 28's copy still out.
    let effect = ack(&mut s, t(400), 28_000, &[(29_000, 32_000)]);
    assert!(effect.exited_recovery);
    let mut sent = starts(&drain(&mut s, t(400)));
    let effect = ack(&mut s, t(401), 28_000, &[(29_000, 33_000)]);
    assert!(effect.entered_recovery);
    sent.extend(starts(&drain(&mut s, t(401))));
    assert!(!sent.contains(&28_000), "{sent:?}");
}

/// A 4-per-window SACK sender in congestion avoidance (ssthresh half its
/// initial window of `window_segments`), with or without ACK-clock
/// spreading, that has sent its first window at time 0.
fn spreading_sender(spread: bool, window_segments: u64) -> Sender {
    spreading_sender_with(spread, window_segments, 4)
}

/// [`spreading_sender`] asking for `acks` ACKs per window.
fn spreading_sender_with(spread: bool, window_segments: u64, acks: u32) -> Sender {
    let mut reno = RenoConfig::new(MSS);
    reno.initial_window = window_segments * MSS;
    reno.initial_ssthresh = window_segments / 2 * MSS;
    let mut s = Sender::new(params(false), Box::new(Reno::new(reno)), true, 1 << 20);
    assert_eq!(s.write(&vec![7u8; 100_000]), 100_000);
    s.set_ack_requests(Some(crate::sender::Requester::new(
        Box::new(crate::sender::PerWindow { acks }),
        false,
    )));
    s.set_ack_spreading(spread.then_some(Duration::ZERO));
    assert_eq!(drain(&mut s, t(0)).len() as u64, window_segments);
    s
}

/// Send instants (microseconds) of what a 4-per-window sender in
/// congestion avoidance releases for its second ACK, with or without
/// ACK-clock spreading; the sender is driven at every wake-up it asks for.
fn release_instants_after_two_acks(spread: bool, window_segments: u64, group: u64) -> Vec<u64> {
    release_instants_with(spread, window_segments, group, 4)
}

/// [`release_instants_after_two_acks`] for a sender asking for `acks`
/// ACKs per window.
fn release_instants_with(spread: bool, window_segments: u64, group: u64, acks: u32) -> Vec<u64> {
    let mut s = spreading_sender_with(spread, window_segments, acks);
    // One ACK gives no delivery rate yet: its group leaves at once.
    ack(&mut s, t(100), group * MSS, &[]);
    assert_eq!(drain(&mut s, t(100)).len() as u64, group);
    // The next group was delivered `group` ms later: 1 segment per ms.
    ack(&mut s, t(100 + group), 2 * group * MSS, &[]);
    let mut sent = Vec::new();
    let mut now = t(100 + group);
    while (sent.len() as u64) < group {
        let before = sent.len();
        for seg in drain(&mut s, now) {
            assert!(!seg.retransmission);
            sent.push(now.saturating_duration_since(Instant::ZERO).as_micros() as u64);
        }
        if (sent.len() as u64) < group {
            let wake = s.poll_timeout().expect("a held segment asks for a wake-up");
            assert!(wake > now, "stalled after {before} segments");
            now = wake;
        }
    }
    sent
}

#[test]
fn spreading_releases_a_group_at_the_gain_times_the_delivery_rate() {
    assert_eq!(release_instants_after_two_acks(false, 20, 5), [105_000; 5]);
    // 1000 bytes per ms delivered: each next segment 1 / 1.05 ms later
    // (952 380 ns, truncated to whole microseconds here).
    assert_eq!(
        release_instants_after_two_acks(true, 20, 5),
        [105_000, 105_952, 106_904, 107_857, 108_809]
    );
}

#[test]
fn spreading_leaves_windows_under_its_floor_alone() {
    // Asking for an ACK per segment (8 per window), a 7-segment window is
    // below `spread::MIN_CWND_SEGMENTS`: a group of three leaves at once,
    // as without spreading; from 8 segments on it is spread.
    assert_eq!(release_instants_with(true, 7, 3, 8), [103_000; 3]);
    assert_eq!(
        release_instants_with(true, 8, 3, 8),
        [103_000, 103_952, 104_904]
    );
    // Asking for 4 per window, each ACK covers two segments of a
    // 7-segment window: the floor is `spread::MIN_GROUPED_CWND_SEGMENTS`
    // and the group is spread.
    assert_eq!(
        release_instants_after_two_acks(true, 7, 3),
        [103_000, 103_952, 104_904]
    );
}

/// Send instants (microseconds) and starts of the ten segments a
/// 4-per-window sender in congestion avoidance releases when one ACK
/// reveals five holes at once, as after a queue overflowed with every
/// other segment lost: the window halves to 10 segments and, with 15
/// SACKed and 5 lost, nothing is left in the pipe.
fn recovery_releases(spread: bool) -> Vec<(u64, u64)> {
    let mut s = spreading_sender(spread, 20);
    // Two groups of five come back 5 ms apart: a segment per ms.
    ack(&mut s, t(100), 5 * MSS, &[]);
    let mut now = t(100);
    let mut sent = 20 + drain(&mut s, now).len();
    ack(&mut s, t(105), 10 * MSS, &[]);
    now = t(105);
    while sent < 30 {
        sent += drain(&mut s, now).len();
        if sent < 30 {
            now = s.poll_timeout().expect("a held segment asks for a wake-up");
            assert!(now < t(110), "only {sent} sent");
        }
    }
    assert!(now < t(110));
    // Segments 10, 12, 14, 16 and 18 were lost; everything else arrived.
    let arrived = [
        (11 * MSS, 12 * MSS),
        (13 * MSS, 14 * MSS),
        (15 * MSS, 16 * MSS),
        (17 * MSS, 18 * MSS),
        (19 * MSS, 30 * MSS),
    ];
    assert!(ack(&mut s, t(110), 10 * MSS, &arrived).entered_recovery);
    now = t(110);
    let mut out = Vec::new();
    while out.len() < 10 {
        for seg in drain(&mut s, now) {
            let at = now.saturating_duration_since(Instant::ZERO).as_micros() as u64;
            out.push((at, seg.start));
        }
        if out.len() < 10 {
            now = s.poll_timeout().expect("a held segment asks for a wake-up");
            assert!(now < t(200), "stalled after {out:?}");
        }
    }
    out
}

#[test]
fn spreading_spaces_what_an_ack_releases_in_loss_recovery() {
    // Unspread, the five resends and five new segments leave in one burst
    // at the ACK's instant.
    let burst = recovery_releases(false);
    assert!(burst.iter().all(|&(at, _)| at == 110_000), "{burst:?}");
    let starts: Vec<u64> = burst.iter().map(|&(_, s)| s / MSS).collect();
    assert_eq!(starts, [10, 12, 14, 16, 18, 30, 31, 32, 33, 34]);
    // Spread, the fast retransmit still leaves at once; what follows
    // leaves at 1.5 segments per ms, the rate the ACKs showed.
    let spread = recovery_releases(true);
    assert_eq!(spread[0], (110_000, 10 * MSS), "{spread:?}");
    assert!(spread.windows(2).all(|w| w[0].0 <= w[1].0), "{spread:?}");
    let at_once = spread.iter().filter(|&&(at, _)| at == 110_000).count();
    assert!(at_once <= 2, "{spread:?}");
    assert!(spread[9].0 >= 110_000 + 5_000, "{spread:?}");
}

/// RFC 6675 NextSeg rule 4: when rules 1-3 offer nothing (the hole
/// resent, no new data, nothing unSACKed below the highest SACK) and the
/// window has room, the highest unSACKed segment, the transfer's last
/// here, is resent once per recovery when tail loss probes are on. Nothing
/// above it can draw the SACKs that would mark it lost, so without the
/// rescue the partial ACK that leaves only it waits for the timer.
#[test]
fn a_lost_last_segment_is_rescued_in_recovery() {
    for rescue in [true, false] {
        let mut s = sender_from(
            true,
            SenderParams {
                tail_loss_probe: rescue,
                ..params(false)
            },
        );
        assert_eq!(s.write(&vec![7u8; 8 * MSS as usize]), 8 * MSS as usize);
        assert_eq!(drain(&mut s, t(0)).len(), 4);
        ack(&mut s, t(100), 2 * MSS, &[]);
        assert_eq!(drain(&mut s, t(100)).len(), 4, "segments 4-7");
        // Segments 2 and 7 are lost; 3-6 arrive.
        for (i, upto) in [4u64, 5, 6].into_iter().enumerate() {
            ack(&mut s, t(200 + i as u64), 2 * MSS, &[(3 * MSS, upto * MSS)]);
        }
        assert!(s.in_recovery());
        let resent = drain(&mut s, t(202));
        assert_eq!(resent.len(), 1);
        assert_eq!((resent[0].start, resent[0].retransmission), (2 * MSS, true));
        ack(&mut s, t(203), 2 * MSS, &[(3 * MSS, 7 * MSS)]);
        let next = drain(&mut s, t(203));
        if rescue {
            assert_eq!(next.len(), 1, "{next:?}");
            assert_eq!((next[0].start, next[0].retransmission), (7 * MSS, true));
        } else {
            assert!(next.is_empty(), "{next:?}");
        }
        // The resent segment 2 arrives: everything but segment 7 is in,
        // and nothing more goes (one rescue per recovery).
        ack(&mut s, t(300), 7 * MSS, &[]);
        assert!(s.in_recovery(), "a partial ACK");
        assert!(drain(&mut s, t(300)).is_empty());
        if rescue {
            // The rescued copy arrives and ends the recovery.
            ack(&mut s, t(303), 8 * MSS, &[]);
            assert!(!s.in_recovery());
        }
    }
}
