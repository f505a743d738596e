//! The RFC 6675 SACK scoreboard.
//!
//! One record per transmitted segment between the cumulative ACK point
//! (SND.UNA, RFC 6675 "HighACK") and HighData, each marked SACKed and/or
//! retransmitted. The loss-recovery driver asks it the RFC 6675 section 4
//! questions: `IsLost`, `SetPipe` and `NextSeg` rules 1, 3 and 4. IsLost
//! also follows RFC 8985's rule that a segment is lost once a segment sent
//! sufficiently later was delivered, counted in transmissions.
//!
//! Offsets are exclusive upper bounds: `high_data()` and `high_rxt()` are
//! one past the last octet, where the RFC names the last octet itself.
//!
//! # Cost model
//!
//! Without SACK information (the common case) nothing can be lost, so
//! `on_ack`, `pipe` and `is_lost` are O(1) amortized (O(records
//! acknowledged) for `on_ack`).
//!
//! With SACK information the scoreboard also keeps the *SACKed runs*: the
//! merged ranges of adjacent SACKed records. A SACK block only walks the
//! records in the gaps between runs (the ones that can change), NextSeg
//! jumps over runs instead of stepping through SACKed records, and the
//! *lost boundary* is found from the top runs alone: both IsLost criteria
//! only weaken as the position rises, so the lost records are exactly the
//! unSACKed records below the point where, counting down from the highest
//! SACKed record, DupThresh records or more than (DupThresh - 1) * SMSS
//! bytes have been seen. Cumulative ACKs remove records below that point
//! and never move it. The costs are therefore O(log window) binary searches
//! plus work proportional to the number of holes touched, not to the
//! window. The boundary found by the order of transmission (see
//! `Scoreboard::on_ack`) is kept between ACKs and its walk starts at the
//! highest SACKed record, so it passes each record once, except resent
//! records above that, which it passes on trial on every ACK until a
//! record above them proves them lost (few: NextSeg resends nothing there
//! but a probe's or a rescue's segment). Nothing allocates per ACK once
//! the queues have reached the window size.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::time::Instant;

#[cfg(test)]
mod tests;

/// What one ACK changed on the scoreboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckOutcome {
    /// Bytes newly covered by the cumulative ACK.
    pub newly_acked: u64,
    /// Bytes newly marked SACKed (above the cumulative ACK).
    pub newly_sacked: u64,
    /// Of `newly_acked`, bytes that had already been SACKed before.
    pub acked_previously_sacked: u64,
    /// The highest SACKed offset moved up.
    pub highest_sack_advanced: bool,
    /// The latest send time among the records this ACK newly SACKed that
    /// were sent only once: where an RTT sample from the SACK starts.
    /// Retransmitted records give none (Karn's rule, RFC 6298 section 3:
    /// which transmission arrived is unknown).
    pub newest_sacked_sent_at: Option<Instant>,
    /// The latest last-transmission time among the records this ACK newly
    /// SACKed that were resent after their first copy was lost beyond
    /// doubt (below RFC 6675's lost boundary): the copy that arrived can
    /// only be a retransmission, and at the latest the last one, so the
    /// time since it is at most the round trip that delivered it (RFC 8985
    /// section 6.2 times retransmissions the same way).
    pub newest_resent_sacked_at: Option<Instant>,
}

/// One transmitted segment, `[start, end)` with `start < end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    start: u64,
    end: u64,
    sacked: bool,
    retransmitted: bool,
    /// Number of the record's latest transmission (see
    /// [`Scoreboard::xmit_count`]): orders records by when they were last
    /// sent, as RFC 8985 orders them by time.
    xmit_seq: u64,
    /// Its retransmission was found lost and it was not sent again since.
    relost: bool,
    /// When it was last sent; while `retransmitted` is unset, its only
    /// transmission.
    sent_at: Instant,
}

impl Record {
    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// Per-segment record of what was sent, SACKed and retransmitted between
/// the cumulative ACK point and the highest offset sent (RFC 6675 section 3).
///
/// Invariant: the records are non-empty, sorted and contiguous, covering
/// exactly `snd_una()..high_data()`.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    records: VecDeque<Record>,
    mss: u64,
    dup_thresh: u32,
    snd_una: u64,
    high_data: u64,
    high_rxt: u64,
    /// Maximal ranges of adjacent SACKed records, sorted and disjoint, never
    /// touching (touching runs are merged). Their union is exactly the set
    /// of SACKed records, so run edges are record edges.
    runs: VecDeque<(u64, u64)>,
    sacked_bytes: u64,
    /// Bytes of records that were retransmitted and are neither SACKed nor
    /// cumulatively acknowledged: the second term of SetPipe.
    rxt_bytes: u64,
    /// Every unSACKed record below this offset is lost, none above it is.
    /// It is a record edge: the start of a SACKed record (RFC 6675's
    /// criteria), the end of a record lost by the order of transmission,
    /// or `snd_una` when nothing is lost.
    lost_end: u64,
    /// Every unSACKed record below this offset is lost by the order of
    /// transmission (see [`Scoreboard::on_ack`]); `lost_end` is never below
    /// it. Only rises until a timeout or [`Scoreboard::reset_to`].
    sent_order_lost_end: u64,
    /// Every unSACKed record below this offset was outstanding at the
    /// last retransmission timeout that kept the SACK marks (see
    /// [`Scoreboard::on_retransmission_timeout_keeping_sacks`]) or was
    /// declared lost by the sender ([`Scoreboard::declare_lost_below`]),
    /// and is lost; `lost_end` is never below it.
    timeout_lost_end: u64,
    /// The boundary by RFC 6675's criteria alone. A cumulative ACK or SACK
    /// of a resent record counts its latest transmission as delivered only
    /// below it: there the first transmission is lost beyond doubt, while
    /// a record lost only by the order of transmission may have been sent
    /// again just before its first copy was reported, and crediting the
    /// copy would condemn everything sent before it (a cascade of needless
    /// retransmissions seen on a gauntlet path).
    dupthresh_lost_end: u64,
    /// SACKed bytes at or above `lost_end`; with `sacked_bytes` this gives
    /// the lost bytes in O(1) after cumulative ACKs.
    sacked_above_lost: u64,
    /// HighData when recovery (or an RTO) began: RFC 6675 RecoveryPoint.
    recovery_point: u64,
    /// RFC 6675 RescueRxt; `None` means undefined.
    rescue_rxt: Option<u64>,
    /// No retransmission found lost (see [`Scoreboard::on_ack`]) and not
    /// yet sent again lies below this offset; `None` when there is none.
    relost_from: Option<u64>,
    /// Transmissions so far (new data and retransmissions, one per call).
    xmit_count: u64,
    /// Highest `xmit_seq` among records SACKed or cumulatively ACKed: the
    /// most recently sent segment known delivered (RFC 8985 RACK.xmit_ts,
    /// as a count instead of a time).
    delivered_xmit_seq: u64,
    /// Every retransmission not yet overtaken, in the order sent, as
    /// (`xmit_seq`, start, end of the range it covered): a record marked
    /// retransmitted lies in the range of the entry with its `xmit_seq`
    /// (later splits and partial ACKs keep it inside). Lost retransmissions
    /// are found from here and `rxt_overtaken` without a pass over every
    /// record on every ACK.
    rxt_sent: VecDeque<(u64, u64, u64)>,
    /// Overtaken retransmissions whose records were not all found lost yet
    /// (some lay at or above the lost boundary), as (start, end,
    /// `xmit_seq`), sorted by start.
    rxt_overtaken: Vec<(u64, u64, u64)>,
    /// Whether records sent once are found lost by the order of
    /// transmission too (see [`on_ack`](Self::on_ack)).
    loss_by_send_order: bool,
}

impl Scoreboard {
    /// With `false`, records sent once are lost only by RFC 6675's
    /// criteria, as in ns-2's SACK sender (see [`on_ack`](Self::on_ack)).
    pub fn with_loss_by_send_order(mut self, on: bool) -> Self {
        self.loss_by_send_order = on;
        self
    }

    /// `mss` is SMSS in bytes; `dup_thresh` is DupThresh (3 in RFC 6675
    /// section 2). Both are raised to at least 1. The first byte sent is
    /// expected at stream offset 0; see [`with_start`](Self::with_start).
    pub fn new(mss: usize, dup_thresh: u32) -> Self {
        Self::with_start(mss, dup_thresh, 0)
    }

    /// Like [`new`](Self::new) but the first byte to be sent is at stream
    /// offset `offset` (e.g. 1 when offset 0 is taken by the SYN).
    pub fn with_start(mss: usize, dup_thresh: u32, offset: u64) -> Self {
        Scoreboard {
            records: VecDeque::new(),
            mss: (mss as u64).max(1),
            dup_thresh: dup_thresh.max(1),
            snd_una: offset,
            high_data: offset,
            high_rxt: offset,
            runs: VecDeque::new(),
            sacked_bytes: 0,
            rxt_bytes: 0,
            lost_end: offset,
            sent_order_lost_end: offset,
            timeout_lost_end: offset,
            dupthresh_lost_end: offset,
            sacked_above_lost: 0,
            recovery_point: offset,
            rescue_rxt: None,
            relost_from: None,
            xmit_count: 0,
            delivered_xmit_seq: 0,
            rxt_sent: VecDeque::new(),
            rxt_overtaken: Vec::new(),
            loss_by_send_order: true,
        }
    }

    /// SMSS in bytes, as used by IsLost (RFC 6675 section 4).
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Changes SMSS (a smaller path MTU found mid-connection); what is
    /// recorded stays, in bytes.
    pub fn set_mss(&mut self, mss: usize) {
        self.mss = (mss as u64).max(1);
    }

    /// DupThresh (RFC 6675 section 2).
    pub fn dup_thresh(&self) -> u32 {
        self.dup_thresh
    }

    /// Outstanding segments the receiver has SACKed.
    pub fn sacked_segments(&self) -> usize {
        self.records.iter().filter(|r| r.sacked).count()
    }

    /// The cumulative ACK point, SND.UNA (RFC 6675 HighACK + 1).
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// One past the highest offset ever sent (RFC 6675 HighData + 1).
    pub fn high_data(&self) -> u64 {
        self.high_data
    }

    /// One past the highest offset retransmitted in this recovery
    /// (RFC 6675 HighRxt + 1); never below `snd_una()`.
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// HighData at the last [`begin_recovery`](Self::begin_recovery) or
    /// retransmission timeout (RFC 6675 RecoveryPoint, exclusive).
    pub fn recovery_point(&self) -> u64 {
        self.recovery_point
    }

    /// One past the highest SACKed octet, if anything above `snd_una()` is
    /// SACKed (RFC 6675 NextSeg rule 1.b bound).
    pub fn highest_sacked(&self) -> Option<u64> {
        self.runs.back().map(|&(_, end)| end)
    }

    /// Bytes sent and not cumulatively acknowledged (RFC 5681 FlightSize).
    pub fn outstanding(&self) -> u64 {
        self.high_data - self.snd_una
    }

    /// Nothing outstanding.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Number of segment records held: the segments outstanding, SACKed
    /// or not (RFC 5827's `oseg`).
    pub fn segment_count(&self) -> usize {
        self.records.len()
    }

    /// Records a transmission of `[start, end)` at `now` (RFC 6675
    /// section 5 steps (C.1) to (C.4) bookkeeping).
    ///
    /// * `start == high_data()`: new data, appended as one record.
    /// * Inside `[snd_una(), high_data())`: a retransmission. Overlapping
    ///   unSACKed records are marked retransmitted (split at `start` and
    ///   `end` if those fall inside a record, so that SetPipe counts exactly
    ///   the retransmitted bytes) and HighRxt is raised to `end` (C.3).
    /// * A range straddling `high_data()` is both: the part below is a
    ///   retransmission, the rest one new record.
    ///
    /// Bytes below `snd_una()` are ignored (already acknowledged); empty,
    /// reversed or gapped (`start > high_data()`) ranges are ignored.
    pub fn on_transmit(&mut self, start: u64, end: u64, now: Instant) {
        let start = start.max(self.snd_una);
        if end <= start || start > self.high_data {
            return;
        }
        self.xmit_count += 1;
        if start < self.high_data {
            let rxt_end = end.min(self.high_data);
            self.mark_retransmitted(start, rxt_end, now);
            self.high_rxt = self.high_rxt.max(rxt_end);
        }
        if end > self.high_data {
            // New data at the top has nothing SACKed above it, so the lost
            // boundary is unaffected.
            self.records.push_back(Record {
                start: self.high_data,
                end,
                sacked: false,
                retransmitted: false,
                xmit_seq: self.xmit_count,
                relost: false,
                sent_at: now,
            });
            self.high_data = end;
        }
    }

    /// Records a rescue retransmission of `[start, end)` (RFC 6675 NextSeg
    /// rule 4): the records are marked retransmitted like any other
    /// retransmission, but HighRxt is *not* raised, and RescueRxt is set to
    /// RecoveryPoint so that only one rescue happens per recovery.
    pub fn on_rescue_retransmit(&mut self, start: u64, end: u64, now: Instant) {
        let start = start.max(self.snd_una);
        let end = end.min(self.high_data);
        if end <= start {
            return;
        }
        self.xmit_count += 1;
        self.mark_retransmitted(start, end, now);
        // RecoveryPoint per the RFC; SND.UNA if recovery already ended (or
        // never began) so that a second rescue still waits for progress.
        self.rescue_rxt = Some(self.recovery_point.max(self.snd_una));
    }

    /// Applies an ACK (RFC 6675 section 5 "Update()" of the scoreboard):
    /// advances SND.UNA to `cum_ack` (clamped to `high_data()`; lower values
    /// are old ACKs and leave it alone) and marks as SACKed every record that
    /// one of the `sack` blocks `[left, right)` covers wholly.
    ///
    /// Blocks are clipped to `[snd_una(), high_data())`: a block entirely
    /// below SND.UNA is a D-SACK (RFC 2883) and one beyond HighData is bogus,
    /// so neither marks anything. A record only partly covered stays
    /// unSACKed. SACK marks are never removed by a later ACK that omits them;
    /// reneging is handled by [`on_retransmission_timeout`]
    /// (RFC 2018 section 8).
    ///
    /// A retransmission is lost too once a segment sent at least DupThresh
    /// transmissions after it has been delivered (SACKed or cumulatively
    /// ACKed) while it has not: RFC 8985 section 6.2's rule, "a segment
    /// sent later was delivered", with a count of DupThresh transmissions
    /// instead of a time as the reordering margin. The segments sent later
    /// include the other retransmissions of the same recovery, which is
    /// what reveals a lost fast retransmit while recovery is still
    /// resending holes. Its retransmitted mark is cleared, so SetPipe no
    /// longer counts it and NextSeg rule 1 offers it again; without this
    /// only the retransmission timer repairs it.
    ///
    /// The same rule applies to segments sent once above the highest
    /// SACKed record, where RFC 6675 can never decide: such a record first
    /// sent DupThresh or more transmissions before a segment since
    /// delivered (a resend, as everything delivered below it was first
    /// sent before it) is lost, and with it every unSACKed record below.
    /// Without it the last segments of a flight are never deemed lost when
    /// they go missing in a recovery: nothing is SACKed above them, and
    /// once every other hole is repaired no ACK comes to reveal them, so
    /// the timer resends them a retransmission timeout later.
    ///
    /// [`on_retransmission_timeout`]: Self::on_retransmission_timeout
    pub fn on_ack(&mut self, cum_ack: u64, sack: &[(u64, u64)]) -> AckOutcome {
        let mut out = AckOutcome::default();
        let cum = cum_ack.min(self.high_data);
        if cum > self.snd_una {
            self.advance(cum, &mut out);
        }
        let prev_high_sacked = self.highest_sacked();
        for &(left, right) in sack {
            let left = left.max(self.snd_una);
            let right = right.min(self.high_data);
            if right > left {
                self.apply_sack_block(left, right, &mut out);
            }
        }
        if out.newly_sacked > 0 {
            out.highest_sack_advanced = self.highest_sacked() > prev_high_sacked;
            self.recompute_lost_boundary();
        }
        if out.newly_sacked > 0 || out.newly_acked > 0 {
            if self.loss_by_send_order {
                self.detect_lost_by_sent_order();
            }
            self.detect_lost_retransmissions();
        }
        out
    }

    /// Raises the lost boundary over the unSACKed records first sent
    /// DupThresh or more transmissions before a segment since delivered
    /// (see [`on_ack`](Self::on_ack)), walking up from the highest SACKed
    /// record and stopping at the first record that is not SACKed, not
    /// resent and not such a record. A resent record is passed on trial:
    /// records are first sent in offset order, so its first transmission
    /// preceded any record above it, and it is lost if one of those is. The
    /// boundary
    /// reached is kept, so a record found lost stays lost once resent and
    /// each record is passed once.
    fn detect_lost_by_sent_order(&mut self) {
        let overtaken_below = self.overtaken_below();
        let mut proved = self.sent_order_lost_end.max(self.lost_end);
        // Only the records above the highest SACKed one are tried: below
        // it RFC 6675's count decides, and a rule that condemned holes
        // there sooner would resend them into the queue that just
        // overflowed (seen in slow-start overshoots with every other
        // segment lost: an extra loss and a second reduction). Above it,
        // records can only be overtaken by delivered resends, which is
        // where RFC 6675 can never decide.
        let mut pos = proved.max(self.highest_sacked().unwrap_or(0));
        loop {
            pos = self.past_run(pos);
            let i = self.first_ending_after(pos);
            match self.records.get(i) {
                Some(r) if r.retransmitted => pos = r.end,
                Some(r) if r.xmit_seq < overtaken_below => {
                    pos = r.end;
                    proved = pos;
                }
                _ => break,
            }
        }
        self.sent_order_lost_end = proved;
        self.raise_lost_end(proved);
    }

    /// Raises the lost boundary to `pos` if it lies higher.
    fn raise_lost_end(&mut self, pos: u64) {
        if pos > self.lost_end {
            self.lost_end = pos;
            self.sacked_above_lost = self
                .runs
                .iter()
                .rev()
                .take_while(|run| run.1 > pos)
                .map(|run| run.1 - run.0.max(pos))
                .sum();
        }
    }

    /// Transmissions numbered below this one were sent DupThresh or more
    /// transmissions before the latest one known delivered: overtaken,
    /// RFC 8985's "a segment sent later was delivered" with DupThresh
    /// transmissions as the reordering margin.
    fn overtaken_below(&self) -> u64 {
        self.delivered_xmit_seq
            .saturating_sub(u64::from(self.dup_thresh))
            .saturating_add(1)
    }

    /// Clears the retransmitted mark of every lost record whose
    /// retransmission a segment sent DupThresh or more transmissions later
    /// has overtaken (see [`on_ack`](Self::on_ack)). Only while
    /// retransmissions are in flight; the cost follows the retransmissions
    /// that became overtaken, not the window (a record only qualifies
    /// through the log entry of its latest retransmission).
    fn detect_lost_retransmissions(&mut self) {
        if self.rxt_bytes == 0 {
            // No record carries an outstanding retransmission: every entry
            // is spent.
            self.rxt_sent.clear();
            self.rxt_overtaken.clear();
            return;
        }
        let overtaken_below = self.overtaken_below();
        // The overtaken threshold only rises, so an entry moves over once.
        while let Some(&(seq, start, end)) = self.rxt_sent.front() {
            if seq >= overtaken_below {
                break;
            }
            self.rxt_sent.pop_front();
            let at = self.rxt_overtaken.partition_point(|w| w.0 < start);
            self.rxt_overtaken.insert(at, (start, end, seq));
        }
        let mut i = 0;
        while let Some(&(start, end, seq)) = self.rxt_overtaken.get(i) {
            if start >= self.lost_end {
                break;
            }
            if self.mark_relost(start, end, seq) {
                self.rxt_overtaken.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Marks lost again the records of `[start, end)` still carrying the
    /// retransmission `seq`, unSACKed and below the lost boundary; returns
    /// whether none of them is left (all lost again, SACKed, acknowledged
    /// or sent once more).
    fn mark_relost(&mut self, start: u64, end: u64, seq: u64) -> bool {
        let mut i = self.first_ending_after(start);
        let mut left = false;
        while let Some(r) = self.records.get_mut(i) {
            if r.start >= end {
                break;
            }
            i += 1;
            if r.sacked || !r.retransmitted || r.xmit_seq != seq {
                continue;
            }
            if r.start >= self.lost_end {
                left = true;
                continue;
            }
            r.retransmitted = false;
            r.relost = true;
            self.rxt_bytes -= r.len();
            self.relost_from = Some(self.relost_from.map_or(r.start, |f| f.min(r.start)));
            tracing::debug!(start = r.start, end = r.end, "retransmission lost");
        }
        !left
    }

    /// RFC 6675 section 4 IsLost: whether the octet at `offset` is deemed
    /// lost, i.e. at least DupThresh SACKed segments lie above it or more
    /// than (DupThresh - 1) * SMSS SACKed bytes do, or (unless turned off
    /// with [`with_loss_by_send_order`](Self::with_loss_by_send_order)) it
    /// was found lost by the order of transmission (see
    /// [`on_ack`](Self::on_ack)).
    ///
    /// Counting is per record: the segments above are the records above the
    /// one holding `offset`. A SACKed octet, or one outside
    /// `[snd_una(), high_data())`, is never lost.
    pub fn is_lost(&self, offset: u64) -> bool {
        if offset < self.snd_una || offset >= self.lost_end {
            return false;
        }
        let i = self.first_ending_after(offset);
        self.records.get(i).is_some_and(|r| !r.sacked)
    }

    /// Whether the octet at `offset` lies in an unSACKed record whose
    /// retransmission is outstanding (neither SACKed, acknowledged nor
    /// found lost since it was sent).
    pub fn is_retransmitted(&self, offset: u64) -> bool {
        if offset < self.snd_una {
            return false;
        }
        let i = self.first_ending_after(offset);
        self.records
            .get(i)
            .is_some_and(|r| r.start <= offset && !r.sacked && r.retransmitted)
    }

    /// Bytes of unSACKed records that [`is_lost`](Self::is_lost) deems lost.
    pub fn lost_bytes(&self) -> u64 {
        if self.lost_end <= self.snd_una {
            return 0;
        }
        let sacked_below = self.sacked_bytes - self.sacked_above_lost;
        (self.lost_end - self.snd_una) - sacked_below
    }

    /// Retransmitted bytes that are neither SACKed nor cumulatively
    /// acknowledged.
    pub fn retransmitted_bytes(&self) -> u64 {
        self.rxt_bytes
    }

    /// RFC 6675 section 4 SetPipe, in bytes: every unSACKed octet counts once
    /// if it is not lost and once more if it was retransmitted.
    ///
    /// The RFC tests "S1 <= HighRxt" for the second term; this uses the
    /// per-record retransmitted mark instead. The two agree while
    /// retransmissions follow NextSeg (everything unSACKed below HighRxt has
    /// been retransmitted); unlike the RFC a rescue retransmission (rule 4)
    /// is counted, which is the conservative choice.
    pub fn pipe(&self) -> u64 {
        self.outstanding() - self.sacked_bytes - self.lost_bytes() + self.rxt_bytes
    }

    /// SACKed bytes above `snd_una()`.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// Any SACKed record above `snd_una()`.
    pub fn has_sacked(&self) -> bool {
        !self.runs.is_empty()
    }

    /// RFC 6675 NextSeg rule 1: the lowest unSACKed, lost range at or above
    /// HighRxt (not yet retransmitted in this recovery). Returns the record's
    /// range, trimmed to start at HighRxt; the caller cuts it to SMSS.
    /// Rule 1.b (below the highest SACKed octet) is implied by IsLost.
    ///
    /// Retransmissions found lost (see [`on_ack`](Self::on_ack)) lie below
    /// HighRxt and come first, lowest first.
    pub fn next_lost(&self) -> Option<(u64, u64)> {
        if let Some(from) = self.relost_from {
            let i = self.first_ending_after(from);
            let relost = self
                .records
                .range(i..)
                .take_while(|r| r.start < self.high_rxt && r.start < self.lost_end)
                .find(|r| !r.sacked && r.relost);
            if let Some(r) = relost {
                return Some((r.start, r.end));
            }
        }
        self.first_unsacked_below(self.lost_end)
    }

    /// The oldest hole that later transmissions have overtaken: the lowest
    /// unSACKed record at or above the lost boundary and below the
    /// highest SACKed octet that was sent only once, as (its end, when it
    /// was sent). Records are first sent in offset order, so SACKed data
    /// above it left after it (RFC 8985 section 6.2's "sent later,
    /// delivered"); see [`reorder_timer`](super::reorder_timer). `None`
    /// when nothing is SACKed or every hole below the SACKs is lost or
    /// resent. Visits the SACK runs and resent records below the hole.
    pub fn oldest_overtaken_hole(&self) -> Option<(u64, Instant)> {
        let top = self.highest_sacked()?;
        self.first_unsacked_sent_once(self.lost_end.max(self.snd_una), top)
            .map(|(_, r)| (r.end, r.sent_at))
    }

    /// RFC 6675 NextSeg rule 3: the lowest unSACKed range at or above HighRxt
    /// and below the highest SACKed octet, lost or not. For use when rules 1
    /// and 2 (new data) yield nothing.
    pub fn next_unsacked_rule3(&self) -> Option<(u64, u64)> {
        self.first_unsacked_below(self.highest_sacked()?)
    }

    /// RFC 6675 NextSeg rule 4: the range of the highest unSACKed record,
    /// offered once per recovery as a rescue retransmission (RescueRxt
    /// undefined or below SND.UNA). Record it with
    /// [`on_rescue_retransmit`](Self::on_rescue_retransmit).
    pub fn rescue_candidate(&self) -> Option<(u64, u64)> {
        if self.rescue_rxt.is_some_and(|r| self.snd_una <= r) {
            return None;
        }
        // The highest unSACKed record ends at HighData unless the top run
        // reaches HighData, in which case it ends where that run starts.
        let top = match self.runs.back() {
            Some(&(start, end)) if end == self.high_data => start,
            _ => self.high_data,
        };
        if top <= self.snd_una {
            return None;
        }
        let i = self.records.partition_point(|r| r.end < top);
        self.records.get(i).map(|r| (r.start, r.end))
    }

    /// Entering loss recovery (RFC 6675 section 5 step 4.1): HighRxt =
    /// HighACK, RecoveryPoint = HighData, RescueRxt undefined.
    pub fn begin_recovery(&mut self) {
        self.high_rxt = self.snd_una;
        self.recovery_point = self.high_data;
        self.rescue_rxt = None;
    }

    /// Forgets every record and restarts at `offset`: both the cumulative
    /// ACK point and HighData become `offset`. The sender uses it to go back
    /// to SND.UNA after a retransmission timeout (what was sent beyond is
    /// resent as if new), and to jump forward when the peer acknowledges
    /// data that was sent before such a rewind. Keeps the allocations.
    pub fn reset_to(&mut self, offset: u64) {
        self.records.clear();
        self.runs.clear();
        self.snd_una = offset;
        self.high_data = offset;
        self.high_rxt = offset;
        self.sacked_bytes = 0;
        self.rxt_bytes = 0;
        self.lost_end = offset;
        self.sent_order_lost_end = offset;
        self.timeout_lost_end = offset;
        self.dupthresh_lost_end = offset;
        self.sacked_above_lost = 0;
        self.recovery_point = offset;
        self.rescue_rxt = None;
        self.relost_from = None;
        self.rxt_sent.clear();
        self.rxt_overtaken.clear();
    }

    /// Gives the record storage back to the allocator when nothing is
    /// outstanding. For a connection gone idle.
    pub fn release_if_empty(&mut self) {
        if self.records.is_empty() {
            self.records = VecDeque::new();
            self.runs = VecDeque::new();
            self.rxt_sent = VecDeque::new();
            self.rxt_overtaken = Vec::new();
        }
    }

    /// Retransmission timeout: forget all SACK marks, since the receiver
    /// may have reneged (RFC 2018 section 8), and all retransmitted marks;
    /// HighRxt = SND.UNA and RecoveryPoint = HighData (RFC 6675 section 5.1).
    /// O(records).
    pub fn on_retransmission_timeout(&mut self) {
        for r in &mut self.records {
            r.sacked = false;
        }
        self.runs.clear();
        self.sacked_bytes = 0;
        self.forget_retransmissions_at_timeout();
        self.lost_end = self.snd_una;
        self.sent_order_lost_end = self.snd_una;
        self.timeout_lost_end = self.snd_una;
        self.dupthresh_lost_end = self.snd_una;
        self.sacked_above_lost = 0;
    }

    /// Retransmission timeout with the SACK marks kept, as Linux does
    /// unless the receiver reneged (`tcp_timeout_mark_lost`): every
    /// unSACKed record is lost, none is retransmitted, HighRxt = SND.UNA
    /// and RecoveryPoint = HighData (RFC 6675 section 5.1). NextSeg then
    /// resends the holes in order and skips what the receiver holds,
    /// where going back to SND.UNA would send the SACKed data again. Not
    /// for a receiver that reneged: see
    /// [`sacks_reneged`](Self::sacks_reneged). O(records).
    pub fn on_retransmission_timeout_keeping_sacks(&mut self) {
        self.forget_retransmissions_at_timeout();
        self.lost_end = self.high_data;
        self.timeout_lost_end = self.high_data;
        self.dupthresh_lost_end = self.high_data;
        self.sacked_above_lost = 0;
    }

    /// Declares every unSACKed record below `offset` lost, whatever the
    /// SACK count says, as a timeout that kept the SACK marks would
    /// (records retransmitted since keep that mark). For a verdict the
    /// sender reaches by time rather than by counting SACKs: a tail loss
    /// probe's bytes reported held (see
    /// [`TailLossProbe::delivered_from`](super::tail_loss_probe::TailLossProbe::delivered_from)).
    /// `offset` is clamped to `[snd_una, high_data]` and taken down to
    /// the start of the record holding it. Returns whether the lost
    /// boundary rose.
    pub fn declare_lost_below(&mut self, offset: u64) -> bool {
        let mut offset = offset.clamp(self.snd_una, self.high_data);
        if let Some(r) = self.records.get(self.first_ending_after(offset)) {
            offset = offset.min(r.start.max(self.snd_una));
        }
        let before = self.lost_end;
        self.timeout_lost_end = self.timeout_lost_end.max(offset);
        self.dupthresh_lost_end = self.dupthresh_lost_end.max(offset);
        self.raise_lost_end(offset);
        self.lost_end > before
    }

    /// What every timeout resets: no record counts as retransmitted (or
    /// as a lost retransmission), HighRxt = SND.UNA, RecoveryPoint =
    /// HighData, RescueRxt undefined (RFC 6675 section 5.1).
    fn forget_retransmissions_at_timeout(&mut self) {
        for r in &mut self.records {
            r.retransmitted = false;
            r.relost = false;
        }
        self.rxt_bytes = 0;
        self.high_rxt = self.snd_una;
        self.recovery_point = self.high_data;
        self.rescue_rxt = None;
        self.relost_from = None;
        self.rxt_sent.clear();
        self.rxt_overtaken.clear();
    }

    /// The record at SND.UNA is marked SACKed: the receiver acknowledged
    /// up to data it had SACKed and no further, so it discarded what it
    /// had SACKed (reneging, RFC 2018 section 8), and the marks above can
    /// no longer be trusted (Linux's test in `tcp_timeout_mark_lost`).
    pub fn sacks_reneged(&self) -> bool {
        self.records.front().is_some_and(|r| r.sacked)
    }

    /// Removes records below `cum` (`snd_una < cum <= high_data`).
    fn advance(&mut self, cum: u64, out: &mut AckOutcome) {
        while let Some(front) = self.records.front_mut() {
            if front.start >= cum {
                break;
            }
            let acked = if front.end <= cum {
                front.len()
            } else {
                // Partial ACK of a record: trim it (RFC 6675 leaves segment
                // boundaries to the implementation).
                cum.saturating_sub(front.start)
            };
            // A SACKed record's delivery was judged when its SACK came;
            // the cumulative ACK that later covers it says nothing new
            // about which transmission arrived.
            if !front.retransmitted || (!front.sacked && front.start < self.dupthresh_lost_end) {
                self.delivered_xmit_seq = self.delivered_xmit_seq.max(front.xmit_seq);
            }
            if front.sacked {
                self.sacked_bytes -= acked;
                out.acked_previously_sacked += acked;
            } else if front.retransmitted {
                self.rxt_bytes -= acked;
            }
            if front.end <= cum {
                self.records.pop_front();
            } else {
                front.start = cum;
                break;
            }
        }
        while let Some(run) = self.runs.front_mut() {
            if run.1 <= cum {
                self.runs.pop_front();
            } else {
                run.0 = run.0.max(cum);
                break;
            }
        }
        out.newly_acked = cum - self.snd_una;
        self.snd_una = cum;
        self.high_rxt = self.high_rxt.max(cum);
        self.relost_from = self.relost_from.map(|f| f.max(cum));
        // Records below the lost boundary disappear without changing what
        // lies above it, so the boundary stays valid; once SND.UNA reaches
        // it, nothing that remains is lost.
        self.dupthresh_lost_end = self.dupthresh_lost_end.max(cum);
        if self.lost_end <= cum {
            self.lost_end = cum;
            self.sacked_above_lost = self.sacked_bytes;
        }
    }

    /// Marks unSACKed records in `[start, end)` retransmitted, splitting the
    /// boundary records. `snd_una <= start < end <= high_data`.
    fn mark_retransmitted(&mut self, start: u64, end: u64, now: Instant) {
        if self.relost_from.is_some_and(|f| f >= start && f < end) {
            self.relost_from = Some(end);
        }
        self.rxt_sent.push_back((self.xmit_count, start, end));
        let mut i = self.first_ending_after(start);
        if let Some(r) = self.records.get(i) {
            if r.start < start && !r.sacked {
                self.split(i, start);
                i += 1;
            }
        }
        while i < self.records.len() && self.records[i].start < end {
            if !self.records[i].sacked {
                if self.records[i].end > end {
                    self.split(i, end);
                }
                let xmit_seq = self.xmit_count;
                let r = &mut self.records[i];
                r.xmit_seq = xmit_seq;
                r.relost = false;
                r.sent_at = now;
                if !r.retransmitted {
                    r.retransmitted = true;
                    self.rxt_bytes += r.len();
                }
            }
            i += 1;
        }
    }

    /// Splits record `i` at `at` (strictly inside it). Only unSACKed records
    /// are split, so the SACKed-segment counts behind IsLost never change.
    fn split(&mut self, i: usize, at: u64) {
        let upper = Record {
            start: at,
            ..self.records[i]
        };
        self.records[i].end = at;
        self.records.insert(i + 1, upper);
    }

    /// Marks the records wholly inside `[left, right)` SACKed
    /// (`snd_una <= left < right <= high_data`). Only the gaps between
    /// existing runs are walked: nothing inside a run can change.
    fn apply_sack_block(&mut self, left: u64, right: u64, out: &mut AckOutcome) {
        let mut pos = left;
        while pos < right {
            let k = self.runs.partition_point(|run| run.1 <= pos);
            let gap_end = match self.runs.get(k) {
                Some(&(start, end)) if start <= pos => {
                    pos = end;
                    continue;
                }
                Some(&(start, _)) => start.min(right),
                None => right,
            };
            if let Some((start, end)) = self.mark_gap(pos, gap_end, out) {
                self.insert_run(k, start, end);
            }
            pos = gap_end;
        }
    }

    /// Marks SACKed the records wholly inside `[left, right)`, a range that
    /// holds no SACKed record. Returns the range they cover, if any; it is
    /// contiguous because every record in the gap qualifies except possibly
    /// the partial ones at its two ends.
    fn mark_gap(&mut self, left: u64, right: u64, out: &mut AckOutcome) -> Option<(u64, u64)> {
        let first = self.records.partition_point(|r| r.start < left);
        let mut covered: Option<(u64, u64)> = None;
        let mut i = first;
        while let Some(r) = self.records.get_mut(i) {
            if r.end > right {
                break;
            }
            r.sacked = true;
            // Which transmission of a retransmitted record arrived is known
            // only when the first one was deemed lost (RFC 8985 section 6.1
            // avoids the same ambiguity with timestamps).
            if !r.retransmitted {
                self.delivered_xmit_seq = self.delivered_xmit_seq.max(r.xmit_seq);
                out.newest_sacked_sent_at = latest(out.newest_sacked_sent_at, r.sent_at);
            } else if r.start < self.dupthresh_lost_end {
                self.delivered_xmit_seq = self.delivered_xmit_seq.max(r.xmit_seq);
                out.newest_resent_sacked_at = latest(out.newest_resent_sacked_at, r.sent_at);
            }
            let len = r.len();
            if r.retransmitted {
                self.rxt_bytes -= len;
            }
            self.sacked_bytes += len;
            out.newly_sacked += len;
            covered = Some((covered.map_or(r.start, |c| c.0), r.end));
            i += 1;
        }
        covered
    }

    /// Inserts the SACKed range `[start, end)` as run `k`, merging it with
    /// the neighbouring runs it touches.
    fn insert_run(&mut self, k: usize, start: u64, end: u64) {
        let touches_left = k > 0 && self.runs[k - 1].1 == start;
        let touches_right = self.runs.get(k).is_some_and(|run| run.0 == end);
        match (touches_left, touches_right) {
            (true, true) => {
                self.runs[k - 1].1 = self.runs[k].1;
                self.runs.remove(k);
            }
            (true, false) => self.runs[k - 1].1 = end,
            (false, true) => self.runs[k].0 = start,
            (false, false) => self.runs.insert(k, (start, end)),
        }
    }

    /// Index of the first record that ends past `pos` (the record holding
    /// `pos`, or the next one). Records are in offset order and most
    /// lookups land on the oldest one (the head of the window on every
    /// ACK without a hole), so it is tried before the binary search.
    fn first_ending_after(&self, pos: u64) -> usize {
        match self.records.front() {
            Some(r) if r.end <= pos => self.records.partition_point(|r| r.end <= pos),
            _ => 0,
        }
    }

    /// The first unSACKed octet at or above `pos`: the end of the run
    /// holding `pos` (runs are maximal), or `pos` itself.
    fn past_run(&self, pos: u64) -> u64 {
        let k = self.runs.partition_point(|run| run.1 <= pos);
        match self.runs.get(k) {
            Some(&(start, end)) if start <= pos => end,
            _ => pos,
        }
    }

    /// The lowest unSACKed record at or above HighRxt that starts below
    /// `limit` and has no retransmission outstanding, trimmed to start at
    /// HighRxt (NextSeg rules 1 and 3). Within a recovery nothing at or
    /// above HighRxt was resent (HighRxt follows the resends); a new
    /// recovery restarts HighRxt at HighACK while the previous one's
    /// resends may still be in flight, and those are not sent again.
    fn first_unsacked_below(&self, limit: u64) -> Option<(u64, u64)> {
        self.first_unsacked_sent_once(self.high_rxt.max(self.snd_una), limit)
            .map(|(from, r)| (r.start.max(from), r.end))
    }

    /// The lowest unSACKed record holding or above `from` that starts
    /// below `limit` and has no retransmission outstanding, with `from`
    /// moved past the SACK runs and resent records on the way to it.
    fn first_unsacked_sent_once(&self, mut from: u64, limit: u64) -> Option<(u64, &Record)> {
        loop {
            from = self.past_run(from);
            if from >= limit {
                return None;
            }
            let i = self.first_ending_after(from);
            let r = self
                .records
                .get(i)
                .filter(|r| r.start < limit && !r.sacked)?;
            if !r.retransmitted {
                return Some((from, r));
            }
            from = r.end;
        }
    }

    /// Recomputes `lost_end` and `sacked_above_lost` by counting SACKed
    /// records down from the highest one until either IsLost criterion is
    /// met; that record's start is the boundary. Only SACKed records are
    /// visited (runs let the walk jump over the holes), at most DupThresh of
    /// them unless they are smaller than SMSS. A timeout's losses stand
    /// whatever the SACKs since say (`timeout_lost_end`).
    fn recompute_lost_boundary(&mut self) {
        self.count_lost_boundary();
        self.dupthresh_lost_end = self.dupthresh_lost_end.max(self.timeout_lost_end);
        self.raise_lost_end(self.timeout_lost_end);
    }

    fn count_lost_boundary(&mut self) {
        self.lost_end = self.snd_una;
        self.dupthresh_lost_end = self.snd_una;
        self.sacked_above_lost = self.sacked_bytes;
        // `detect_lost_by_sent_order` raises it again to the boundary it
        // found before, if that lies higher.
        let byte_thresh = u64::from(self.dup_thresh - 1).saturating_mul(self.mss);
        let count_thresh = u64::from(self.dup_thresh);
        let mut count = 0u64;
        let mut bytes = 0u64;
        for &(run_start, run_end) in self.runs.iter().rev() {
            let top = self.records.partition_point(|r| r.end < run_end);
            for r in self.records.range(..=top).rev() {
                if r.start < run_start {
                    break;
                }
                count += 1;
                bytes += r.len();
                if count >= count_thresh || bytes > byte_thresh {
                    self.lost_end = r.start;
                    self.dupthresh_lost_end = r.start;
                    self.sacked_above_lost = bytes;
                    return;
                }
            }
        }
    }
}

/// The later of an optional time and `at`.
fn latest(so_far: Option<Instant>, at: Instant) -> Option<Instant> {
    Some(so_far.map_or(at, |t| t.max(at)))
}
