//! Scoreboard tests: hand-built RFC 6675 cases and a property test that
//! compares the cached counters with brute force over the records and the
//! records themselves with a naive model.

use super::*;
use proptest::prelude::*;

const MSS: u64 = 1000;
/// Send time of records whose time the test does not look at.
const T0: Instant = Instant::ZERO;

/// `n` back-to-back MSS-sized segments starting at offset 0.
fn board(n: u64) -> Scoreboard {
    let mut sb = Scoreboard::new(MSS as usize, 3);
    for i in 0..n {
        sb.on_transmit(i * MSS, (i + 1) * MSS, T0);
    }
    sb
}

fn seg(i: u64) -> (u64, u64) {
    (i * MSS, (i + 1) * MSS)
}

/// RFC 6675 SetPipe taken literally: per unSACKed octet, +1 unless lost,
/// +1 if at or below HighRxt. Only equals `pipe()` while retransmissions
/// follow NextSeg order.
fn rfc_literal_pipe(sb: &Scoreboard) -> u64 {
    sb.records
        .iter()
        .filter(|r| !r.sacked)
        .map(|r| {
            let not_lost = if sb.is_lost(r.start) { 0 } else { r.len() };
            let below_rxt = sb.high_rxt.clamp(r.start, r.end) - r.start;
            not_lost + below_rxt
        })
        .sum()
}

#[test]
fn fresh_scoreboard_is_empty() {
    let sb = Scoreboard::new(1460, 3);
    assert!(sb.is_empty());
    assert_eq!((sb.snd_una(), sb.high_data(), sb.high_rxt()), (0, 0, 0));
    assert_eq!(sb.pipe(), 0);
    assert!(!sb.is_lost(0));
    assert_eq!(sb.next_lost(), None);
    assert_eq!(sb.next_unsacked_rule3(), None);
    assert_eq!(sb.rescue_candidate(), None);
    let sb = Scoreboard::with_start(1460, 3, 1);
    assert_eq!((sb.snd_una(), sb.high_data()), (1, 1));
}

#[test]
fn without_sack_pipe_is_outstanding_and_nothing_is_lost() {
    let mut sb = board(10);
    assert_eq!(sb.high_data(), 10 * MSS);
    assert_eq!(sb.pipe(), 10 * MSS);
    assert!((0..10 * MSS).step_by(100).all(|o| !sb.is_lost(o)));
    let out = sb.on_ack(3 * MSS, &[]);
    assert_eq!(out.newly_acked, 3 * MSS);
    assert_eq!(out.newly_sacked, 0);
    assert!(!out.highest_sack_advanced);
    assert_eq!(sb.pipe(), 7 * MSS);
    assert_eq!(sb.next_lost(), None);
    assert_eq!(sb.next_unsacked_rule3(), None);
    // An old ACK changes nothing.
    assert_eq!(sb.on_ack(MSS, &[]), AckOutcome::default());
    assert_eq!(sb.snd_una(), 3 * MSS);
    sb.on_ack(10 * MSS, &[]);
    assert!(sb.is_empty());
    assert_eq!(sb.pipe(), 0);
}

#[test]
fn partial_ack_trims_the_record() {
    let mut sb = board(10);
    let out = sb.on_ack(3 * MSS + 500, &[]);
    assert_eq!(out.newly_acked, 3500);
    assert_eq!(sb.segment_count(), 7);
    assert_eq!(sb.records[0].start, 3500);
    assert_eq!(sb.pipe(), 6500);
    // The trimmed record is still a segment for rule 1 and rule 3 purposes.
    sb.on_ack(3 * MSS + 500, &[seg(4), seg(5), seg(6)]);
    sb.begin_recovery();
    assert!(sb.is_lost(3500));
    assert_eq!(sb.next_lost(), Some((3500, 4000)));
    assert_eq!(sb.pipe(), 6500 - 3000 - 500);
}

#[test]
fn three_sacked_segments_above_make_a_hole_lost() {
    let mut sb = board(10);
    sb.on_ack(2 * MSS, &[]);
    let out = sb.on_ack(2 * MSS, &[(3 * MSS, 6 * MSS)]);
    assert_eq!(out.newly_sacked, 3 * MSS);
    assert!(out.highest_sack_advanced);
    assert!(sb.is_lost(2 * MSS));
    assert!(sb.is_lost(3 * MSS - 1));
    assert!(!sb.is_lost(3 * MSS), "SACKed octet");
    assert!(!sb.is_lost(6 * MSS), "nothing SACKed above");
    assert_eq!(sb.lost_bytes(), MSS);
    // 8 outstanding - 3 SACKed - 1 lost.
    assert_eq!(sb.pipe(), 4 * MSS);
    assert_eq!(sb.sacked_bytes(), 3 * MSS);
    sb.begin_recovery();
    assert_eq!(sb.next_lost(), Some(seg(2)));
}

#[test]
fn two_sacked_segments_are_not_enough() {
    let mut sb = board(10);
    sb.on_ack(2 * MSS, &[(3 * MSS, 5 * MSS)]);
    assert!(!sb.is_lost(2 * MSS));
    assert_eq!(sb.lost_bytes(), 0);
    assert_eq!(sb.pipe(), 6 * MSS);
    sb.begin_recovery();
    assert_eq!(sb.next_lost(), None);
    assert_eq!(sb.next_unsacked_rule3(), Some(seg(2)));
}

/// A verdict by time (a delivered tail loss probe) makes the holes below
/// it lost where the SACK count does not: NextSeg offers them, and the
/// mark stands when later ACKs move the count.
#[test]
fn holes_declared_lost_stay_lost() {
    let mut sb = board(6);
    sb.on_ack(MSS, &[(2 * MSS, 3 * MSS), (5 * MSS, 6 * MSS)]);
    assert_eq!(sb.lost_bytes(), 0, "two SACKed segments are not enough");
    // Mid-record offsets are taken down to the record's start.
    assert!(sb.declare_lost_below(5 * MSS + 10));
    assert!(!sb.declare_lost_below(4 * MSS), "nothing new");
    assert!(sb.is_lost(MSS) && sb.is_lost(3 * MSS) && sb.is_lost(4 * MSS));
    assert!(!sb.is_lost(2 * MSS) && !sb.is_lost(5 * MSS));
    assert_eq!(sb.lost_bytes(), 3 * MSS);
    assert_eq!(sb.pipe(), 0);
    sb.begin_recovery();
    assert_eq!(sb.next_lost(), Some(seg(1)));
    sb.on_ack(2 * MSS, &[(2 * MSS, 3 * MSS), (5 * MSS, 6 * MSS)]);
    assert!(sb.is_lost(3 * MSS));
}

#[test]
fn byte_criterion_with_large_records() {
    // Two SACKed records above, but 5000 > (3 - 1) * 1000 SACKed bytes.
    let mut sb = Scoreboard::new(MSS as usize, 3);
    sb.on_transmit(0, 1000, T0);
    sb.on_transmit(1000, 3500, T0);
    sb.on_transmit(3500, 6000, T0);
    sb.on_ack(0, &[(1000, 6000)]);
    assert!(sb.is_lost(0));
    assert_eq!(sb.next_lost(), Some((0, 1000)));
    // Exactly (DupThresh - 1) * SMSS bytes in two records is not "more than".
    let mut sb = board(3);
    sb.on_ack(0, &[(1000, 3000)]);
    assert!(!sb.is_lost(0));
    assert_eq!(sb.pipe(), MSS);
    // A record with a single large SACKed record above: lost by bytes only.
    let mut sb = Scoreboard::new(MSS as usize, 3);
    sb.on_transmit(0, 1000, T0);
    sb.on_transmit(1000, 4000, T0);
    sb.on_ack(0, &[(1000, 4000)]);
    assert!(sb.is_lost(500));
}

#[test]
fn pipe_counts_retransmissions_once_more() {
    // No SACK: NewReno-style retransmission of the first segment.
    let mut sb = board(10);
    sb.begin_recovery();
    sb.on_transmit(0, MSS, T0);
    assert_eq!(sb.high_rxt(), MSS);
    assert_eq!(sb.retransmitted_bytes(), MSS);
    assert_eq!(sb.pipe(), 11 * MSS);
    assert_eq!(sb.pipe(), rfc_literal_pipe(&sb));

    // With SACK: segments 0..3 lost; a lost retransmitted one counts once.
    let mut sb = board(10);
    sb.on_ack(0, &[(3 * MSS, 6 * MSS)]);
    sb.begin_recovery();
    assert_eq!(sb.pipe(), 4 * MSS);
    let mut sent = Vec::new();
    while let Some((s, e)) = sb.next_lost() {
        sb.on_transmit(s, e, T0);
        sent.push((s, e));
        assert_eq!(sb.pipe(), rfc_literal_pipe(&sb));
    }
    assert_eq!(sent, vec![seg(0), seg(1), seg(2)]);
    assert_eq!(sb.pipe(), 7 * MSS);
    // Cumulative ACK of a retransmitted lost segment removes it once. It
    // also shows segments 6 and 7 lost: first sent three or more
    // transmissions before that retransmission, they are not SACKed.
    sb.on_ack(MSS, &[(3 * MSS, 6 * MSS)]);
    assert!(sb.is_lost(6 * MSS) && sb.is_lost(7 * MSS) && !sb.is_lost(8 * MSS));
    assert_eq!(sb.pipe(), 4 * MSS, "1 and 2 resent, 8 and 9 in flight");
    assert_eq!(sb.pipe(), rfc_literal_pipe(&sb));
    while let Some((s, e)) = sb.next_lost() {
        sb.on_transmit(s, e, T0);
    }
    assert_eq!(sb.pipe(), 6 * MSS);
    assert_eq!(sb.pipe(), rfc_literal_pipe(&sb));
    // Retransmitting a segment that is not lost counts it twice.
    sb.on_transmit(8 * MSS, 9 * MSS, T0);
    assert_eq!(sb.pipe(), 7 * MSS);
    assert_eq!(sb.pipe(), rfc_literal_pipe(&sb));
    // Retransmitting the same range again does not count it a third time.
    sb.on_transmit(8 * MSS, 9 * MSS, T0);
    assert_eq!(sb.pipe(), 7 * MSS);
    // A SACK for a retransmitted segment removes both counts.
    sb.on_ack(MSS, &[(3 * MSS, 6 * MSS), (8 * MSS, 9 * MSS)]);
    assert_eq!(sb.pipe(), 5 * MSS);
}

#[test]
fn dsack_and_bogus_blocks_are_ignored() {
    let mut sb = board(10);
    sb.on_ack(3 * MSS, &[]);
    let blocks = [
        (0, 2 * MSS),         // D-SACK below SND.UNA
        (MSS, 3 * MSS),       // D-SACK ending at SND.UNA
        (20 * MSS, 30 * MSS), // beyond HighData
        (5 * MSS, 4 * MSS),   // reversed
        (9500, 12 * MSS),     // clipped to [9500, 10000): partial record
        (7 * MSS, 7 * MSS),   // empty
        (u64::MAX - 5, u64::MAX),
    ];
    let out = sb.on_ack(3 * MSS, &blocks);
    assert_eq!(out, AckOutcome::default());
    assert!(!sb.has_sacked());
    // A block straddling SND.UNA is clipped and marks what it covers.
    let out = sb.on_ack(3 * MSS, &[(2 * MSS, 4 * MSS)]);
    assert_eq!(out.newly_sacked, MSS);
    assert_eq!(sb.highest_sacked(), Some(4 * MSS));
    // A cumulative ACK beyond HighData is clamped.
    let out = sb.on_ack(50 * MSS, &[]);
    assert_eq!(out.newly_acked, 7 * MSS);
    assert_eq!(out.acked_previously_sacked, MSS);
    assert_eq!(sb.snd_una(), 10 * MSS);
    assert!(sb.is_empty());
}

#[test]
fn only_wholly_covered_records_are_sacked() {
    let mut sb = board(10);
    let out = sb.on_ack(0, &[(3 * MSS + 500, 6 * MSS + 500)]);
    assert_eq!(out.newly_sacked, 2 * MSS);
    assert!(!sb.records[3].sacked && sb.records[4].sacked && sb.records[5].sacked);
    assert!(!sb.records[6].sacked);
    assert_eq!(sb.highest_sacked(), Some(6 * MSS));
}

#[test]
fn acking_sacked_data_is_reported() {
    let mut sb = board(10);
    sb.on_ack(0, &[(2 * MSS, 4 * MSS)]);
    let out = sb.on_ack(3 * MSS, &[]);
    assert_eq!(out.newly_acked, 3 * MSS);
    assert_eq!(out.acked_previously_sacked, MSS);
    assert_eq!(sb.sacked_bytes(), MSS);
    let out = sb.on_ack(5 * MSS, &[]);
    assert_eq!(out.acked_previously_sacked, MSS);
    assert!(!sb.has_sacked());
    assert_eq!(sb.highest_sacked(), None);
}

#[test]
fn highest_sack_advance_is_reported() {
    let mut sb = board(10);
    assert!(sb.on_ack(0, &[seg(5)]).highest_sack_advanced);
    let again = sb.on_ack(0, &[seg(5)]);
    assert_eq!(again.newly_sacked, 0);
    assert!(!again.highest_sack_advanced);
    let lower = sb.on_ack(0, &[seg(3), seg(5)]);
    assert_eq!(lower.newly_sacked, MSS);
    assert!(!lower.highest_sack_advanced);
    assert!(sb.on_ack(0, &[seg(8)]).highest_sack_advanced);
}

/// `n` segments, segment `i` sent at `at(i)`.
fn timed_board(n: u64) -> Scoreboard {
    let mut sb = Scoreboard::new(MSS as usize, 3);
    for i in 0..n {
        sb.on_transmit(i * MSS, (i + 1) * MSS, at(i));
    }
    sb
}

/// Segment `i`'s send time in [`timed_board`]: 10 ms apart.
fn at(i: u64) -> Instant {
    Instant::from_millis(10 * i)
}

#[test]
fn sacks_report_when_the_latest_segment_sent_once_left() {
    let mut sb = timed_board(8);
    // Segment 2 is resent: a SACK of it cannot say which copy arrived.
    sb.on_transmit(2 * MSS, 3 * MSS, at(20));
    let (two, three, four) = (seg(2), seg(3), seg(4));
    let out = sb.on_ack(0, &[(two.0, four.1)]);
    assert_eq!(out.newest_sacked_sent_at, Some(at(4)));
    // Nor was its first copy lost beyond doubt when the SACK came.
    assert_eq!(out.newest_resent_sacked_at, None);
    // Nothing newly SACKed, nothing to time.
    assert_eq!(
        sb.on_ack(0, &[(three.0, four.1)]).newest_sacked_sent_at,
        None
    );
    sb.on_transmit(5 * MSS, 6 * MSS, at(21));
    assert_eq!(sb.on_ack(0, &[seg(5)]).newest_sacked_sent_at, None);
    assert_eq!(sb.on_ack(0, &[seg(6)]).newest_sacked_sent_at, Some(at(6)));
    // A cumulative ACK alone is timed by the caller (timestamps).
    assert_eq!(sb.on_ack(2 * MSS, &[]).newest_sacked_sent_at, None);
}

#[test]
fn sacks_of_repairs_report_when_the_repair_left() {
    let mut sb = timed_board(8);
    // Five segments above 0-2 arrive: those three are lost beyond doubt.
    let out = sb.on_ack(0, &[(seg(3).0, seg(7).1)]);
    assert_eq!(out.newest_sacked_sent_at, Some(at(7)));
    assert_eq!(out.newest_resent_sacked_at, None);
    assert!(sb.is_lost(MSS));
    sb.on_transmit(MSS, 2 * MSS, at(30));
    sb.on_transmit(2 * MSS, 3 * MSS, at(31));
    // Only a repair can have arrived; it left at 300 ms, not at 10.
    let out = sb.on_ack(0, &[seg(1), (seg(3).0, seg(7).1)]);
    assert_eq!(out.newest_sacked_sent_at, None);
    assert_eq!(out.newest_resent_sacked_at, Some(at(30)));
    // Both repairs at once: the later one.
    let mut again = board(8);
    again.on_ack(0, &[(seg(3).0, seg(7).1)]);
    again.on_transmit(MSS, 2 * MSS, at(30));
    again.on_transmit(2 * MSS, 3 * MSS, at(31));
    let out = again.on_ack(0, &[(seg(1).0, seg(7).1)]);
    assert_eq!(out.newest_resent_sacked_at, Some(at(31)));
}

#[test]
fn nextseg_rule1_rule3_and_rescue() {
    let mut sb = board(10);
    sb.on_ack(0, &[seg(1), seg(2)]);
    sb.begin_recovery();
    // Only two SACKed segments, sent right after the hole: nothing lost,
    // rule 3 offers the hole.
    assert_eq!(sb.next_lost(), None);
    assert_eq!(sb.next_unsacked_rule3(), Some(seg(0)));
    sb.on_transmit(0, MSS, T0);
    assert_eq!(sb.next_unsacked_rule3(), None, "nothing else below the top");
    // Three more SACKed segments: 3 and 4 become lost (three SACKed above
    // them); 6 (two above) and 8 (one) do not. Below the highest SACKed
    // segment the order of transmission decides nothing.
    sb.on_ack(0, &[seg(9), seg(5), seg(7), (MSS, 3 * MSS)]);
    assert_eq!(sb.lost_bytes(), 3 * MSS, "0, 3 and 4");
    assert!(!sb.is_lost(6 * MSS) && !sb.is_lost(8 * MSS));
    let mut rule1 = Vec::new();
    while let Some((s, e)) = sb.next_lost() {
        sb.on_transmit(s, e, T0);
        rule1.push(s / MSS);
    }
    assert_eq!(rule1, vec![3, 4], "segment 0 was already retransmitted");
    let mut rule3 = Vec::new();
    while let Some((s, e)) = sb.next_unsacked_rule3() {
        sb.on_transmit(s, e, T0);
        rule3.push(s / MSS);
    }
    assert_eq!(rule3, vec![6, 8]);
    assert_eq!(sb.high_rxt(), 9 * MSS);
    // Rule 4: highest unSACKed segment, once per recovery.
    assert_eq!(sb.rescue_candidate(), Some(seg(8)));
    sb.on_rescue_retransmit(8 * MSS, 9 * MSS, T0);
    assert_eq!(sb.high_rxt(), 9 * MSS, "rescue does not move HighRxt");
    assert_eq!(sb.rescue_candidate(), None);
    sb.begin_recovery();
    assert_eq!(sb.rescue_candidate(), Some(seg(8)));
}

#[test]
fn rescue_prefers_highest_unsacked_above_sacks() {
    let mut sb = board(10);
    sb.on_ack(0, &[seg(2)]);
    sb.begin_recovery();
    assert_eq!(sb.rescue_candidate(), Some(seg(9)));
    sb.on_ack(0, &[seg(9)]);
    assert_eq!(sb.rescue_candidate(), Some(seg(8)));
}

#[test]
fn retransmission_of_part_of_a_record_splits_it() {
    let mut sb = Scoreboard::new(MSS as usize, 3);
    sb.on_transmit(0, 3000, T0);
    sb.on_transmit(3000, 6000, T0);
    sb.begin_recovery();
    sb.on_transmit(1000, 2000, T0);
    assert_eq!(sb.segment_count(), 4);
    assert_eq!(sb.retransmitted_bytes(), 1000);
    assert_eq!(sb.pipe(), 7000);
    assert_eq!(sb.high_rxt(), 2000);
    // Spanning a record boundary splits both ends.
    sb.on_transmit(2500, 3500, T0);
    assert_eq!(sb.segment_count(), 6);
    assert_eq!(sb.retransmitted_bytes(), 2000);
    assert_eq!(sb.high_rxt(), 3500);
}

#[test]
fn transmit_straddling_high_data_is_split() {
    let mut sb = board(10);
    sb.begin_recovery();
    sb.on_transmit(9 * MSS, 12 * MSS, T0);
    assert_eq!(sb.high_data(), 12 * MSS);
    assert_eq!(sb.high_rxt(), 10 * MSS);
    assert_eq!(sb.retransmitted_bytes(), MSS);
    assert_eq!(sb.pipe(), 13 * MSS);
}

#[test]
fn odd_inputs_do_not_panic() {
    let mut sb = board(4);
    sb.on_transmit(10 * MSS, 11 * MSS, T0); // gap
    sb.on_transmit(2 * MSS, 2 * MSS, T0); // empty
    sb.on_transmit(3 * MSS, MSS, T0); // reversed
    assert_eq!(sb.high_data(), 4 * MSS);
    assert_eq!(sb.retransmitted_bytes(), 0);
    sb.on_ack(2 * MSS, &[]);
    sb.on_transmit(0, MSS, T0); // entirely acknowledged
    assert_eq!(sb.retransmitted_bytes(), 0);
    sb.on_transmit(0, 3 * MSS, T0); // clipped to [2000, 3000)
    assert_eq!(sb.retransmitted_bytes(), MSS);
    sb.on_rescue_retransmit(9 * MSS, 10 * MSS, T0);
    sb.on_rescue_retransmit(u64::MAX, 0, T0);
    sb.on_transmit(4 * MSS, u64::MAX, T0);
    assert_eq!(sb.high_data(), u64::MAX);
    sb.on_ack(u64::MAX, &[(0, u64::MAX)]);
    assert!(sb.is_empty());
    assert!(!sb.is_lost(u64::MAX));
    let mut z = Scoreboard::new(0, 0);
    z.on_transmit(0, 1, T0);
    z.on_transmit(1, 2, T0);
    z.on_ack(0, &[(1, 2)]);
    assert!(
        z.is_lost(0),
        "DupThresh raised to 1: one SACK above is enough"
    );
}

#[test]
fn lost_boundary_follows_cumulative_acks() {
    let mut sb = board(10);
    sb.on_ack(0, &[(5 * MSS, 8 * MSS)]);
    assert_eq!(sb.lost_bytes(), 5 * MSS);
    sb.on_ack(2 * MSS + 300, &[]);
    assert_eq!(sb.lost_bytes(), 2700);
    assert!(sb.is_lost(4 * MSS));
    // Past the boundary: the remaining records have nothing lost.
    sb.on_ack(6 * MSS, &[]);
    assert_eq!(sb.lost_bytes(), 0);
    assert!(!sb.is_lost(8 * MSS));
    // Segments 8 and 9 in flight; 6 and 7 SACKed.
    assert_eq!(sb.pipe(), 2 * MSS);
}

#[test]
fn rto_clears_sack_and_retransmission_marks() {
    let mut sb = board(10);
    sb.on_ack(MSS, &[(4 * MSS, 8 * MSS)]);
    sb.begin_recovery();
    let (s, e) = sb.next_lost().unwrap();
    sb.on_transmit(s, e, T0);
    sb.on_rescue_retransmit(9 * MSS, 10 * MSS, T0);
    sb.on_retransmission_timeout();
    assert!(!sb.has_sacked());
    assert_eq!(sb.sacked_bytes(), 0);
    assert_eq!(sb.retransmitted_bytes(), 0);
    assert_eq!(sb.high_rxt(), MSS);
    assert_eq!(sb.recovery_point(), 10 * MSS);
    assert_eq!(sb.pipe(), 9 * MSS);
    assert!(!sb.is_lost(MSS));
    assert_eq!(sb.next_lost(), None);
    assert_eq!(sb.next_unsacked_rule3(), None);
    assert!(sb.records.iter().all(|r| !r.sacked && !r.retransmitted));
    // The receiver re-reports the same blocks: they count as new.
    let out = sb.on_ack(MSS, &[(4 * MSS, 8 * MSS)]);
    assert_eq!(out.newly_sacked, 4 * MSS);
    assert!(out.highest_sack_advanced);
}

// ---------------------------------------------------------------------------
// Property test.

/// A naive scoreboard: the same semantics with linear scans and no caches.
#[derive(Debug, Default)]
struct Model {
    recs: Vec<Record>,
    snd_una: u64,
    high_data: u64,
    dup_thresh: u32,
    xmit_count: u64,
    delivered_xmit_seq: u64,
    /// Every unSACKed record below it is lost by the order of
    /// transmission.
    sent_order_lost_end: u64,
    /// Every unSACKed record below it was outstanding at a timeout that
    /// kept the SACK marks.
    timeout_lost_end: u64,
}

impl Model {
    fn split_at(&mut self, at: u64) {
        if let Some(i) = self
            .recs
            .iter()
            .position(|r| r.start < at && at < r.end && !r.sacked)
        {
            let upper = Record {
                start: at,
                ..self.recs[i]
            };
            self.recs[i].end = at;
            self.recs.insert(i + 1, upper);
        }
    }

    fn transmit(&mut self, start: u64, end: u64) {
        let start = start.max(self.snd_una);
        if end <= start || start > self.high_data {
            return;
        }
        self.xmit_count += 1;
        if start < self.high_data {
            let e = end.min(self.high_data);
            self.split_at(start);
            self.split_at(e);
            let xmit_seq = self.xmit_count;
            for r in &mut self.recs {
                if r.start >= start && r.end <= e && !r.sacked {
                    r.retransmitted = true;
                    r.relost = false;
                    r.xmit_seq = xmit_seq;
                }
            }
        }
        if end > self.high_data {
            let start = self.high_data;
            self.recs.push(Record {
                start,
                end,
                sacked: false,
                retransmitted: false,
                xmit_seq: self.xmit_count,
                relost: false,
                sent_at: T0,
            });
            self.high_data = end;
        }
    }

    fn ack(&mut self, cum: u64, sack: &[(u64, u64)]) {
        let cum = cum.min(self.high_data).max(self.snd_una);
        let advanced = cum > self.snd_una;
        // RFC 6675's IsLost before this ACK: the delivered transmission
        // of a retransmitted record is known only if the first was lost
        // by that rule.
        let lost_before = self.dupthresh_lost_flags();
        for (r, lost) in self.recs.iter().zip(&lost_before) {
            if r.start < cum && (!r.retransmitted || *lost) {
                self.delivered_xmit_seq = self.delivered_xmit_seq.max(r.xmit_seq);
            }
        }
        let lost_before: Vec<bool> = self
            .recs
            .iter()
            .zip(lost_before)
            .filter(|(r, _)| r.end > cum)
            .map(|(_, l)| l)
            .collect();
        self.recs.retain(|r| r.end > cum);
        if let Some(r) = self.recs.first_mut() {
            r.start = r.start.max(cum);
        }
        self.snd_una = cum;
        let mut newly_sacked = false;
        for &(l, r) in sack {
            let (l, r) = (l.max(cum), r.min(self.high_data));
            for (rec, lost) in self.recs.iter_mut().zip(&lost_before) {
                if l < r && rec.start >= l && rec.end <= r && !rec.sacked {
                    rec.sacked = true;
                    newly_sacked = true;
                    if !rec.retransmitted || *lost {
                        self.delivered_xmit_seq = self.delivered_xmit_seq.max(rec.xmit_seq);
                    }
                }
            }
        }
        if !newly_sacked && !advanced {
            return;
        }
        // Lost by the order of transmission: from the lowest record up,
        // past every record that is lost, SACKed or resent, to the last
        // one sent once DupThresh or more transmissions before a
        // delivered one; lost records and those prove what lies below.
        let dup_thresh = u64::from(self.dup_thresh);
        let mut end = self.sent_order_lost_end.max(self.snd_una);
        let top = self
            .recs
            .iter()
            .filter(|r| r.sacked)
            .map(|r| r.end)
            .max()
            .unwrap_or(0);
        for (r, lost) in self.recs.iter().zip(self.lost_flags()) {
            if r.end <= end {
                continue;
            }
            let overtaken = !r.retransmitted
                && r.start >= top
                && r.xmit_seq + dup_thresh <= self.delivered_xmit_seq;
            if !r.sacked && (lost || overtaken) {
                end = r.end;
            } else if !(r.sacked || r.retransmitted || r.start < top) {
                // Below the highest SACKed record RFC 6675 decides alone:
                // passed on trial, like resent records.
                break;
            }
        }
        self.sent_order_lost_end = end;
        // A lost retransmission: a segment sent DupThresh or more
        // transmissions after it was delivered.
        let lost = self.lost_flags();
        for (rec, lost) in self.recs.iter_mut().zip(lost) {
            if rec.sacked
                || !rec.retransmitted
                || rec.xmit_seq + dup_thresh > self.delivered_xmit_seq
            {
                continue;
            }
            if lost {
                rec.retransmitted = false;
                rec.relost = true;
            }
        }
    }

    /// Brute-force RFC 6675 IsLost of every record.
    fn dupthresh_lost_flags(&self) -> Vec<bool> {
        let dup_thresh = u64::from(self.dup_thresh);
        (0..self.recs.len())
            .map(|i| {
                let above = self.recs[i + 1..].iter().filter(|r| r.sacked);
                let count = above.clone().count() as u64;
                let bytes: u64 = above.map(Record::len).sum();
                !self.recs[i].sacked
                    && (count >= dup_thresh
                        || bytes > (dup_thresh - 1) * MSS
                        || self.recs[i].start < self.timeout_lost_end)
            })
            .collect()
    }

    /// Brute-force IsLost of every record, the order of transmission
    /// included.
    fn lost_flags(&self) -> Vec<bool> {
        let by_order = self
            .recs
            .iter()
            .map(|r| !r.sacked && r.start < self.sent_order_lost_end);
        self.dupthresh_lost_flags()
            .into_iter()
            .zip(by_order)
            .map(|(a, b)| a || b)
            .collect()
    }

    fn rto(&mut self) {
        self.sent_order_lost_end = self.snd_una;
        self.timeout_lost_end = self.snd_una;
        for r in &mut self.recs {
            r.sacked = false;
            r.retransmitted = false;
            r.relost = false;
        }
    }

    /// The start of the record holding `offset` (clamped to the window).
    fn declare_lost_below(&mut self, offset: u64) {
        let offset = offset.clamp(self.snd_una, self.high_data);
        let start = self
            .recs
            .iter()
            .find(|r| r.end > offset)
            .map_or(offset, |r| r.start.min(offset));
        self.timeout_lost_end = self.timeout_lost_end.max(start);
    }

    fn rto_keeping_sacks(&mut self) {
        self.sent_order_lost_end = self.high_data;
        self.timeout_lost_end = self.high_data;
        for r in &mut self.recs {
            r.retransmitted = false;
            r.relost = false;
        }
    }
}

/// Brute-force IsLost for record `i` of `sb`.
fn brute_lost(sb: &Scoreboard, i: usize) -> bool {
    let r = &sb.records[i];
    if r.sacked {
        return false;
    }
    let above = sb.records.iter().skip(i + 1).filter(|r| r.sacked);
    let count = above.clone().count() as u64;
    let bytes: u64 = above.map(Record::len).sum();
    count >= u64::from(sb.dup_thresh)
        || bytes > u64::from(sb.dup_thresh - 1) * sb.mss
        || r.start < sb.sent_order_lost_end
        || r.start < sb.timeout_lost_end
}

fn check_invariants(sb: &Scoreboard) {
    assert!(sb.snd_una <= sb.high_data);
    assert!(sb.snd_una <= sb.high_rxt && sb.high_rxt <= sb.high_data.max(sb.snd_una));
    let mut at = sb.snd_una;
    for r in &sb.records {
        assert_eq!(r.start, at, "records contiguous");
        assert!(r.start < r.end, "records non-empty");
        at = r.end;
    }
    assert_eq!(at, sb.high_data);
    let sacked: Vec<&Record> = sb.records.iter().filter(|r| r.sacked).collect();
    assert_eq!(
        sb.sacked_bytes(),
        sacked.iter().map(|r| r.len()).sum::<u64>()
    );
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for r in &sacked {
        match runs.last_mut() {
            Some(last) if last.1 == r.start => last.1 = r.end,
            _ => runs.push((r.start, r.end)),
        }
    }
    assert_eq!(
        sb.runs.iter().copied().collect::<Vec<_>>(),
        runs,
        "SACKed runs"
    );
    assert_eq!(sb.highest_sacked(), sacked.last().map(|r| r.end));
    let rxt: u64 = sb
        .records
        .iter()
        .filter(|r| r.retransmitted && !r.sacked)
        .map(Record::len)
        .sum();
    assert_eq!(sb.retransmitted_bytes(), rxt);

    let mut pipe = 0;
    let mut lost = 0;
    for (i, r) in sb.records.iter().enumerate() {
        let want = brute_lost(sb, i);
        for o in [r.start, (r.start + r.end) / 2, r.end - 1] {
            assert_eq!(sb.is_lost(o), want, "is_lost({o}) in {r:?}");
        }
        if !r.sacked {
            if want {
                lost += r.len();
            } else {
                pipe += r.len();
            }
            if r.retransmitted {
                pipe += r.len();
            }
        }
    }
    assert_eq!(sb.lost_bytes(), lost);
    assert_eq!(sb.pipe(), pipe, "SetPipe");
    assert!(!sb.is_lost(sb.high_data));
    assert!(sb.snd_una == 0 || !sb.is_lost(sb.snd_una - 1));

    let from = sb.high_rxt;
    let trim = |r: &Record| (r.start.max(from), r.end);
    // Lost retransmissions below HighRxt come first.
    let relost = sb
        .records
        .iter()
        .enumerate()
        .find(|(i, r)| {
            r.start < from && !r.sacked && !r.retransmitted && r.relost && brute_lost(sb, *i)
        })
        .map(|(_, r)| (r.start, r.end));
    let rule1 = relost.or_else(|| {
        sb.records
            .iter()
            .enumerate()
            .find(|(i, r)| r.end > from && !r.sacked && !r.retransmitted && brute_lost(sb, *i))
            .map(|(_, r)| trim(r))
    });
    assert_eq!(sb.next_lost(), rule1, "NextSeg rule 1");
    let top = sacked.last().map_or(0, |r| r.end);
    let rule3 = sb
        .records
        .iter()
        .find(|r| r.end > from && r.start < top && !r.sacked && !r.retransmitted)
        .map(trim);
    assert_eq!(sb.next_unsacked_rule3(), rule3, "NextSeg rule 3");
    let rescue_allowed = sb.rescue_rxt.is_none_or(|r| sb.snd_una > r);
    let rule4 = sb
        .records
        .iter()
        .rev()
        .find(|r| !r.sacked)
        .filter(|_| rescue_allowed)
        .map(|r| (r.start, r.end));
    assert_eq!(sb.rescue_candidate(), rule4, "NextSeg rule 4");
}

#[derive(Debug, Clone)]
enum Op {
    /// New data of this length.
    Send(u64),
    /// Transmit [a, b) with a, b placed relative to the window.
    Transmit(Pos, Pos),
    Ack(Pos, Vec<(Pos, Pos)>),
    /// SACK exactly the records whose index bit is set, as a receiver that
    /// got those segments would, without moving the cumulative ACK.
    SackRecords(u64),
    BeginRecovery,
    Rto,
    /// A timeout that keeps the SACK marks.
    RtoKeepingSacks,
    /// Every unSACKed record below this offset declared lost.
    DeclareLost(Pos),
    Rescue,
    /// Retransmit what NextSeg rule 1 or rule 3 offers.
    NextSeg,
}

/// An offset as a fraction of the window [snd_una, high_data] plus jitter,
/// so that most land inside, some on record edges and some outside.
#[derive(Debug, Clone, Copy)]
struct Pos(u16, i16);

impl Pos {
    fn at(self, sb: &Scoreboard) -> u64 {
        let span = sb.outstanding();
        let base = sb.snd_una + span * u64::from(self.0) / u64::from(u16::MAX);
        let snapped = if self.1 % 3 == 0 {
            // Snap to a record edge to exercise exact coverage.
            let i = sb.records.partition_point(|r| r.end <= base);
            sb.records.get(i).map_or(base, |r| r.start)
        } else {
            base
        };
        snapped.saturating_add_signed(i64::from(self.1))
    }
}

fn pos() -> impl Strategy<Value = Pos> {
    (any::<u16>(), prop_oneof![Just(0i16), -1500i16..1500]).prop_map(|(f, j)| Pos(f, j))
}

/// Cumulative ACKs mostly move a little, so that windows stay populated.
fn cum_pos() -> impl Strategy<Value = Pos> {
    prop_oneof![
        3 => (0u16..4096, prop_oneof![Just(0i16), -1500i16..1500]).prop_map(|(f, j)| Pos(f, j)),
        1 => pos(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => prop_oneof![Just(MSS), Just(2 * MSS), 1u64..3000].prop_map(Op::Send),
        2 => (pos(), pos()).prop_map(|(a, b)| Op::Transmit(a, b)),
        5 => (cum_pos(), prop::collection::vec((pos(), pos()), 0..4))
            .prop_map(|(c, s)| Op::Ack(c, s)),
        3 => any::<u64>().prop_map(Op::SackRecords),
        1 => Just(Op::BeginRecovery),
        1 => Just(Op::Rto),
        1 => Just(Op::RtoKeepingSacks),
        1 => pos().prop_map(Op::DeclareLost),
        1 => Just(Op::Rescue),
        2 => Just(Op::NextSeg),
    ]
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(4096, 0x5c0_4eb0))]

    #[test]
    fn scoreboard_matches_brute_force(
        dup_thresh in 1u32..5,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut sb = Scoreboard::new(MSS as usize, dup_thresh);
        let mut model = Model {
            dup_thresh,
            ..Model::default()
        };
        let mut total_acked = 0;
        for op in ops {
            let sacked_before = sb.sacked_bytes();
            let high_sacked_before = sb.highest_sacked();
            match op {
                Op::Send(len) => {
                    let s = sb.high_data();
                    sb.on_transmit(s, s + len, T0);
                    model.transmit(s, s + len);
                }
                Op::Transmit(a, b) => {
                    let (a, b) = (a.at(&sb), b.at(&sb));
                    sb.on_transmit(a, b, T0);
                    model.transmit(a, b);
                }
                Op::Ack(c, blocks) => {
                    let c = c.at(&sb);
                    let blocks: Vec<(u64, u64)> =
                        blocks.iter().map(|(l, r)| (l.at(&sb), r.at(&sb))).collect();
                    let out = sb.on_ack(c, &blocks);
                    model.ack(c, &blocks);
                    total_acked += out.newly_acked;
                    prop_assert_eq!(
                        sacked_before + out.newly_sacked - out.acked_previously_sacked,
                        sb.sacked_bytes()
                    );
                    prop_assert!(out.acked_previously_sacked <= out.newly_acked);
                    prop_assert_eq!(
                        out.highest_sack_advanced,
                        out.newly_sacked > 0 && sb.highest_sacked() > high_sacked_before
                    );
                }
                Op::SackRecords(mask) => {
                    let blocks: Vec<(u64, u64)> = sb
                        .records
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << (i % 64)) != 0)
                        .map(|(_, r)| (r.start, r.end))
                        .collect();
                    let una = sb.snd_una();
                    let out = sb.on_ack(una, &blocks);
                    model.ack(una, &blocks);
                    prop_assert_eq!(sacked_before + out.newly_sacked, sb.sacked_bytes());
                    prop_assert_eq!(
                        out.highest_sack_advanced,
                        sb.highest_sacked() > high_sacked_before
                    );
                }
                Op::BeginRecovery => sb.begin_recovery(),
                Op::Rto => {
                    sb.on_retransmission_timeout();
                    model.rto();
                }
                Op::RtoKeepingSacks => {
                    sb.on_retransmission_timeout_keeping_sacks();
                    model.rto_keeping_sacks();
                    prop_assert_eq!(sb.pipe(), 0, "everything out is SACKed or lost");
                }
                Op::DeclareLost(at) => {
                    let at = at.at(&sb);
                    let before = sb.lost_bytes();
                    sb.declare_lost_below(at);
                    model.declare_lost_below(at);
                    prop_assert!(sb.lost_bytes() >= before);
                    for r in sb.records.iter().filter(|r| !r.sacked && r.end <= at) {
                        prop_assert!(sb.is_lost(r.start), "{:?} below {}", r, at);
                    }
                }
                Op::Rescue => {
                    if let Some((s, e)) = sb.rescue_candidate() {
                        sb.on_rescue_retransmit(s, e, T0);
                        model.transmit(s, e);
                        prop_assert_eq!(sb.rescue_candidate(), None);
                    }
                }
                Op::NextSeg => {
                    if let Some((s, e)) = sb.next_lost().or(sb.next_unsacked_rule3()) {
                        sb.on_transmit(s, e, T0);
                        model.transmit(s, e);
                        prop_assert!(sb.high_rxt() >= e);
                    }
                }
            }
            prop_assert_eq!(total_acked, sb.snd_una());
            prop_assert_eq!(sb.snd_una(), model.snd_una);
            prop_assert_eq!(sb.high_data(), model.high_data);
            prop_assert_eq!(sb.records.iter().copied().collect::<Vec<_>>(), model.recs.clone());
            let lost: Vec<bool> = sb.records.iter().map(|r| sb.is_lost(r.start)).collect();
            prop_assert_eq!(lost, model.lost_flags());
            check_invariants(&sb);
        }
    }
}

#[test]
fn rto_keeping_sacks_resends_only_the_holes() {
    for by_order in [true, false] {
        let mut sb = board(10).with_loss_by_send_order(by_order);
        // Segments 2-3 and 6-7 arrived; 0, 1, 4, 5, 8 and 9 did not, and
        // 0 was resent once already.
        sb.on_ack(0, &[seg(2), seg(3), seg(6), seg(7)]);
        sb.begin_recovery();
        sb.on_transmit(0, MSS, T0);
        sb.on_retransmission_timeout_keeping_sacks();
        assert!(!sb.sacks_reneged());
        assert_eq!(sb.sacked_bytes(), 4 * MSS);
        assert_eq!(sb.retransmitted_bytes(), 0);
        assert_eq!(sb.pipe(), 0, "all unSACKed data is lost");
        assert_eq!(sb.recovery_point(), 10 * MSS);
        // NextSeg walks the holes in order, the tail above the highest
        // SACK included, and never offers SACKed data.
        let mut resent = Vec::new();
        while let Some((s, e)) = sb.next_lost() {
            sb.on_transmit(s, e, T0);
            resent.push(s / MSS);
            if s == 4 * MSS {
                // A later SACK recomputes RFC 6675's boundary (below 8
                // and 9 now); the timeout's losses stand.
                sb.on_ack(0, &[(2 * MSS, 4 * MSS), (6 * MSS, 8 * MSS)]);
                assert!(sb.is_lost(9 * MSS), "by order {by_order}");
            }
        }
        assert_eq!(resent, [0, 1, 4, 5, 8, 9], "by order {by_order}");
        assert_eq!(sb.pipe(), 6 * MSS);
        // The receiver acknowledges up to SACKed data and no further: it
        // reneged.
        sb.on_ack(2 * MSS, &[]);
        assert!(sb.sacks_reneged());
    }
}

/// RFC 8985 section 6.2's lost-retransmission rule with RFC 6675's
/// DupThresh as the reordering margin: once DupThresh segments first sent
/// after a retransmission are SACKed, the retransmission is lost too, and
/// NextSeg offers it again instead of leaving it to the timer (issue 18:
/// every timeout on the clean 5 Mbit/s path was such a stall).
#[test]
fn retransmission_overtaken_by_later_data_is_lost_again() {
    let mut sb = board(10);
    sb.begin_recovery();
    sb.on_ack(0, &[(MSS, 4 * MSS)]);
    assert_eq!(sb.next_lost(), Some(seg(0)));
    sb.on_transmit(0, MSS, T0);
    assert_eq!(sb.next_lost(), None, "retransmitted once");
    // Four new segments go out after the retransmission.
    for i in 10..14 {
        sb.on_transmit(i * MSS, (i + 1) * MSS, T0);
    }
    // Two of them arrive: not yet enough to rule out reordering.
    sb.on_ack(0, &[(MSS, 4 * MSS), (10 * MSS, 12 * MSS)]);
    assert_eq!(sb.retransmitted_bytes(), MSS);
    let pipe_before = sb.pipe();
    // The third one: the retransmission of segment 0 was lost.
    sb.on_ack(0, &[(MSS, 4 * MSS), (10 * MSS, 13 * MSS)]);
    assert_eq!(sb.retransmitted_bytes(), 0);
    assert_eq!(sb.next_lost(), Some(seg(0)), "offered again");
    assert!(sb.pipe() < pipe_before, "no longer counted in flight");
    // Segments 4..10 are lost as well now, and come after it, once each.
    sb.on_transmit(0, MSS, T0);
    assert_eq!(sb.next_lost(), Some(seg(4)));
    sb.on_transmit(4 * MSS, 5 * MSS, T0);
    assert_eq!(sb.next_lost(), Some(seg(5)));
}

/// A retransmission is not declared lost by data sent *before* it.
#[test]
fn data_sent_before_a_retransmission_does_not_condemn_it() {
    let mut sb = board(10);
    sb.begin_recovery();
    sb.on_ack(0, &[(MSS, 4 * MSS)]);
    sb.on_transmit(0, MSS, T0);
    // Segments 4..10 were all sent before the retransmission.
    sb.on_ack(0, &[(MSS, 10 * MSS)]);
    assert_eq!(sb.retransmitted_bytes(), MSS);
    assert_eq!(sb.next_lost(), None);
}

/// The order that matters is the order of transmission, not of offsets:
/// a lost fast retransmit of segment 0 is revealed by the retransmissions
/// of later holes (lower offsets than any new data) arriving before it.
#[test]
fn later_retransmissions_reveal_a_lost_fast_retransmit() {
    let mut sb = board(12);
    sb.begin_recovery();
    // Holes at 0, 2, 4, 6, 8; the rest up to 12 arrives.
    let blocks = [
        (MSS, 2 * MSS),
        (3 * MSS, 4 * MSS),
        (5 * MSS, 6 * MSS),
        (7 * MSS, 8 * MSS),
        (9 * MSS, 12 * MSS),
    ];
    sb.on_ack(0, &blocks);
    let mut order = Vec::new();
    while let Some((s, e)) = sb.next_lost() {
        sb.on_transmit(s, e, T0);
        order.push(s / MSS);
    }
    assert_eq!(order, vec![0, 2, 4, 6, 8]);
    // The retransmissions of 2 and 4 arrive; 0's was lost: not yet enough.
    sb.on_ack(
        0,
        &[(MSS, 6 * MSS), (7 * MSS, 8 * MSS), (9 * MSS, 12 * MSS)],
    );
    assert_eq!(sb.next_lost(), None);
    // 6's arrives too, three transmissions after 0's.
    sb.on_ack(0, &[(MSS, 8 * MSS), (9 * MSS, 12 * MSS)]);
    assert_eq!(sb.next_lost(), Some(seg(0)));
    assert_eq!(sb.retransmitted_bytes(), MSS, "only 8's is still in flight");
}

/// A cumulative ACK that ends exactly where a retransmitted record starts
/// delivers none of that record, so its transmission must not count as
/// delivered: otherwise every retransmission sent DupThresh transmissions
/// before it would be declared lost and sent again for nothing.
#[test]
fn an_ack_up_to_a_retransmission_does_not_deliver_it() {
    let mut sb = board(20);
    sb.begin_recovery();
    // Holes at 0, 2 and 6.
    let blocks = [(MSS, 2 * MSS), (3 * MSS, 6 * MSS), (7 * MSS, 12 * MSS)];
    sb.on_ack(0, &blocks);
    // 6 is resent first, then two new segments, then 2.
    sb.on_transmit(6 * MSS, 7 * MSS, T0);
    sb.on_transmit(20 * MSS, 21 * MSS, T0);
    sb.on_transmit(21 * MSS, 22 * MSS, T0);
    sb.on_transmit(2 * MSS, 3 * MSS, T0);
    assert_eq!(sb.retransmitted_bytes(), 2 * MSS);
    // The original of 0 arrives late: the ACK stops at 2, delivering
    // nothing sent after 6's retransmission.
    sb.on_ack(2 * MSS, &blocks[1..]);
    assert_eq!(sb.retransmitted_bytes(), 2 * MSS, "both still in flight");
    assert_eq!(sb.next_lost(), None);
}

/// RFC 8985's rule for segments sent once: the last segment of a flight
/// went missing along with holes below it. Nothing is ever SACKed above
/// it, so RFC 6675 never deems it lost; the retransmissions of the holes,
/// sent after it, arrive, and that shows it lost (without this only the
/// retransmission timer resent it: a gauntlet path whose recovery of a
/// slow-start overshoot ended in a timeout for every strategy, where
/// ns-2's Sack1 had none).
#[test]
fn retransmissions_delivered_after_the_last_segment_show_it_lost() {
    let mut sb = board(10);
    sb.on_ack(0, &[(3 * MSS, 9 * MSS)]);
    sb.begin_recovery();
    let mut sent = Vec::new();
    while let Some((s, e)) = sb.next_lost() {
        sb.on_transmit(s, e, T0);
        sent.push(s / MSS);
    }
    assert_eq!(sent, vec![0, 1, 2]);
    assert!(!sb.is_lost(9 * MSS), "nothing SACKed above it");
    // Two retransmissions arrive: not enough to rule out reordering.
    sb.on_ack(2 * MSS, &[(3 * MSS, 9 * MSS)]);
    assert!(!sb.is_lost(9 * MSS));
    assert_eq!(sb.next_lost(), None);
    // The third, sent three transmissions after segment 9.
    sb.on_ack(9 * MSS, &[]);
    assert!(sb.is_lost(9 * MSS));
    assert_eq!(sb.next_lost(), Some(seg(9)));
    assert_eq!(sb.pipe(), 0);
    sb.on_transmit(9 * MSS, 10 * MSS, T0);
    assert_eq!(sb.pipe(), MSS, "resent, counted once");
}

/// The reordering timer's candidate: the lowest hole below the SACKs that
/// is neither lost nor resent, with its send time; holes above the
/// highest SACK have no later delivery yet.
#[test]
fn the_oldest_overtaken_hole_is_the_lowest_unsacked_one_sent_once() {
    let mut sb = Scoreboard::new(MSS as usize, 3);
    for i in 0..8 {
        sb.on_transmit(i * MSS, (i + 1) * MSS, Instant::from_millis(i));
    }
    assert_eq!(sb.oldest_overtaken_hole(), None, "nothing SACKed");
    // 0, 2 and 6 missing; 7 is above every SACK.
    sb.on_ack(0, &[(MSS, 2 * MSS), (3 * MSS, 6 * MSS)]);
    assert!(sb.is_lost(0), "three SACKed above 0");
    assert!(sb.is_lost(2 * MSS), "three SACKed above 2");
    assert_eq!(sb.oldest_overtaken_hole(), None, "both holes already lost");
    let mut sb = Scoreboard::new(MSS as usize, 3);
    for i in 0..5 {
        sb.on_transmit(i * MSS, (i + 1) * MSS, Instant::from_millis(10 * i));
    }
    // 0 and 1 missing below one SACKed segment, 3 and 4 above it.
    sb.on_ack(0, &[seg(2)]);
    assert!(!sb.is_lost(0));
    assert_eq!(
        sb.oldest_overtaken_hole(),
        Some((MSS, Instant::from_millis(0)))
    );
    // Once 0 is declared lost, 1 is next; resent records are skipped.
    assert!(sb.declare_lost_below(MSS));
    assert_eq!(
        sb.oldest_overtaken_hole(),
        Some((2 * MSS, Instant::from_millis(10)))
    );
    sb.begin_recovery();
    sb.on_transmit(MSS, 2 * MSS, Instant::from_millis(50));
    assert_eq!(sb.oldest_overtaken_hole(), None);
}
