//! Arriving segments (RFC 9293 section 3.10.7), with the RFC 5961
//! defences against blind resets and SYNs.

use super::{AckNonceMode, CloseReason, Connection, Event, SegmentError, State};
use crate::receiver::{AckDecision, ArrivalInfo};
use crate::sender::segment_cuts::END_FAILURES_BEFORE_RESET;
use crate::sender::AckInput;
use crate::time::{Duration, Instant};
use crate::wire::{AckNonce, Checksum, Flags, SegmentRepr, SeqNum};
use bytes::Bytes;

/// Answers to segments that carry nothing but a claim we cannot accept
/// (an ACK of data never sent, a bare ACK outside the window) go out at
/// most this often, as Linux's `tcp_invalid_ratelimit` (500 ms) spaces
/// its replies to invalid segments: enough for an honest peer that lost
/// track (or a keep-alive) to hear from us, too few for two
/// desynchronized ends to keep an ACK storm going or for a flood of
/// forged ACKs to be reflected.
const INVALID_REPLY_INTERVAL: Duration = Duration::from_millis(500);

impl Connection {
    /// Processes one arriving segment. A segment that does not parse or is
    /// not for this connection is dropped, counted and reported as an
    /// error; the connection itself is unaffected.
    pub fn handle_segment(&mut self, now: Instant, bytes: &[u8]) -> Result<(), SegmentError> {
        self.handle_segment_with_ce(now, bytes, false)
    }

    /// [`handle_segment_with_ce`](Self::handle_segment_with_ce) for a
    /// segment the caller hands over by reference: in-order data that
    /// finds nothing else waiting is kept as a slice of `bytes` instead of
    /// being copied into the receive buffer, so the bytes are copied once,
    /// when the application reads them. What the connection does is
    /// otherwise exactly what `handle_segment_with_ce` does.
    ///
    /// The slice keeps all of `bytes`' allocation alive until it is read:
    /// hand over buffers the segment fills for the most part.
    pub fn handle_segment_shared(
        &mut self,
        now: Instant,
        bytes: &Bytes,
        ce: bool,
    ) -> Result<(), SegmentError> {
        self.arrival_bytes = Some(bytes.clone());
        let result = self.handle_segment_with_ce(now, bytes, ce);
        self.arrival_bytes = None;
        result
    }

    /// [`handle_segment_shared`](Self::handle_segment_shared) for a segment
    /// that arrives in two pieces, its header (options included) and its
    /// payload by reference, as a carrier that keeps the two apart hands
    /// it over (the receiving counterpart of
    /// [`poll_transmit_gather`](Self::poll_transmit_gather)): the payload
    /// is never copied into one buffer with the header. Where this end
    /// checks checksums, which cover both pieces, they are put together
    /// first and the segment handled as `handle_segment_with_ce` would;
    /// likewise when `header` does not parse on its own or runs past the
    /// header its data offset gives.
    pub fn handle_segment_parts(
        &mut self,
        now: Instant,
        header: &[u8],
        payload: &Bytes,
        ce: bool,
    ) -> Result<(), SegmentError> {
        let mut seg = SegmentRepr::EMPTY;
        let apart = self.checksum == Checksum::Ignore
            && seg.parse_from(header, Checksum::Ignore).is_ok()
            && seg.payload.is_empty();
        if !apart {
            let mut whole = alloc::vec::Vec::with_capacity(header.len() + payload.len());
            whole.extend_from_slice(header);
            whole.extend_from_slice(payload);
            return self.handle_segment_with_ce(now, &whole, ce);
        }
        seg.payload = payload;
        self.arrival_ce = ce;
        self.arrival_bytes = Some(payload.clone());
        let result = self.handle_parsed(now, &seg);
        self.arrival_bytes = None;
        result
    }

    /// [`handle_segment`](Self::handle_segment) for a segment whose IP
    /// header's ECN field said Congestion Experienced when `ce` is true
    /// (RFC 3168). The receive side hands the mark to its ACK policy (ACC
    /// reacts to it); a mark on a segment that carried no data tells that
    /// our ACKs met congestion, and the next data segment we send carries
    /// ECE so the peer's ACK policy learns it (RFC 5690's ACK-path signal).
    pub fn handle_segment_with_ce(
        &mut self,
        now: Instant,
        bytes: &[u8],
        ce: bool,
    ) -> Result<(), SegmentError> {
        self.arrival_ce = ce;
        // Parsed in place (see `SegmentRepr::parse_from`).
        let mut seg = SegmentRepr::EMPTY;
        if let Err(e) = seg.parse_from(bytes, self.checksum) {
            self.stats.malformed_segments += 1;
            return Err(e.into());
        }
        self.handle_parsed(now, &seg)
    }

    /// A segment parsed: for this connection if its ports say so.
    fn handle_parsed(&mut self, now: Instant, seg: &SegmentRepr<'_>) -> Result<(), SegmentError> {
        if seg.dst_port != self.local_port || seg.src_port != self.remote_port {
            self.stats.discarded_segments += 1;
            return Err(SegmentError::WrongPorts);
        }
        match self.state {
            State::Closed => self.answer_closed(seg),
            State::SynSent => self.on_syn_sent(now, seg),
            _ => self.on_synchronized(now, seg),
        }
        Ok(())
    }

    /// RFC 9293 3.10.7.1: a closed connection answers anything but a
    /// reset with a reset, so a peer still retransmitting its FIN after we
    /// left TIME-WAIT learns that we are gone.
    fn answer_closed(&mut self, seg: &SegmentRepr<'_>) {
        if self.pending_rst.is_some() {
            return;
        }
        let Some(rst) = seg.reset_reply() else {
            return;
        };
        self.stats.discarded_segments += 1;
        self.pending_rst = Some((rst.seq, rst.ack, rst.flags.contains(Flags::ACK)));
    }

    fn on_syn_sent(&mut self, now: Instant, seg: &SegmentRepr<'_>) {
        let f = seg.flags;
        let acks_syn = f.contains(Flags::ACK) && seg.ack == self.iss.add(1);
        if f.contains(Flags::ACK) && !acks_syn {
            if !f.contains(Flags::RST) {
                self.pending_rst = Some((seg.ack, SeqNum(0), false));
            }
            self.stats.discarded_segments += 1;
            return;
        }
        if f.contains(Flags::RST) {
            if acks_syn {
                self.finish(CloseReason::Refused);
            }
            return;
        }
        if !f.contains(Flags::SYN) || !acks_syn {
            // A simultaneous open is not supported; ignore.
            self.stats.discarded_segments += 1;
            return;
        }
        self.last_received = now;
        self.negotiate(seg);
        if self.config.ack_nonce == AckNonceMode::Require && !self.negotiated.ack_nonce {
            // A receiver that strips the option must not get around the
            // check: no connection without it.
            self.pending_rst = Some((seg.ack, SeqNum(0), false));
            self.finish(CloseReason::NonceRequired);
            return;
        }
        self.init_receiver(now, seg.seq, seg.options.timestamps.map(|t| t.tsval));
        self.syn_sample(now);
        self.state = State::Established;
        self.syn_due = false;
        self.syn_deadline = None;
        self.events.push_back(Event::Connected);
        // The SYN-ACK is always answered at once.
        if let Some(r) = self.recv.as_mut() {
            r.ack_now = true;
        }
        tracing::debug!(peer = self.remote_port, "established (active open)");
        if !seg.payload.is_empty() || seg.flags.contains(Flags::FIN) {
            // Data on a SYN-ACK is legal but rare; process it as data.
            let data_seg = SegmentRepr {
                flags: seg.flags,
                seq: seg.seq.add(1),
                ..*seg
            };
            self.receive_data(now, &data_seg);
        }
    }

    /// An RTT sample from the handshake when the SYN was not resent (Karn).
    fn syn_sample(&mut self, now: Instant) {
        if self.syn_sent_count == 1 {
            if let Some(sent) = self.syn_sent_at {
                self.sender.on_handshake_rtt(now - sent);
            }
        }
    }

    fn on_synchronized(&mut self, now: Instant, seg: &SegmentRepr<'_>) {
        let Some(recv) = self.recv.as_ref() else {
            return;
        };
        let f = seg.flags;
        let fin_received = recv.fin_received;
        let rcv_nxt = recv.reassembly.next_offset() + u64::from(fin_received);
        let rcv_nxt_seq = super::seq_of(recv.irs, rcv_nxt);
        let window = recv.reassembly.window() as u64;
        let buffer_bytes = recv.reassembly.capacity() as u64;
        let rel = seg.seq.diff(rcv_nxt_seq) as i64;
        let seg_len = seg.payload.len() as i64 + i64::from(f.contains(Flags::FIN));

        // A retransmitted SYN while we wait for the handshake's ACK.
        if self.state == State::SynReceived && f.contains(Flags::SYN) && !f.contains(Flags::ACK) {
            if seg.seq == recv.irs && !f.contains(Flags::RST) {
                self.syn_due = true;
            }
            return;
        }

        // RFC 9293 3.10.7.4, first check: sequence acceptability.
        let acceptable = if seg_len == 0 {
            if window == 0 {
                rel == 0
            } else {
                rel >= 0 && rel < window as i64
            }
        } else if window == 0 {
            false
        } else {
            let last = rel + seg_len - 1;
            (rel >= 0 && rel < window as i64) || (last >= 0 && last < window as i64)
        };
        if f.contains(Flags::RST) {
            if rel == 0 {
                // Once both FINs are out and all our data is acknowledged,
                // a reset only means the peer forgot the connection first
                // (its TIME-WAIT ended before our FIN retransmission came).
                let done = matches!(
                    self.state,
                    State::LastAck | State::Closing | State::TimeWait
                ) && self.sender.all_data_acked();
                self.finish(if done {
                    CloseReason::Normal
                } else {
                    CloseReason::Reset
                });
            } else if acceptable {
                // RFC 5961 3.2: a reset inside the window but not exactly
                // at RCV.NXT gets a challenge ACK.
                self.challenge_ack(now);
            } else {
                self.stats.discarded_segments += 1;
            }
            return;
        }
        if !acceptable && f.contains(Flags::SYN) {
            // RFC 5961 4.2, whatever the sequence number: a rate-limited
            // challenge ACK.
            self.challenge_ack(now);
            return;
        }
        if !acceptable {
            // Keep-alives and retransmissions of data we already have land
            // here: tell the peer where we are.
            self.stats.discarded_segments += 1;
            if self.state == State::TimeWait && f.contains(Flags::FIN) {
                // The peer did not hear our last ACK: linger another 2 MSL
                // (RFC 9293 3.10.7.4, eighth check).
                self.enter_time_wait(now);
            }
            if seg_len > 0 {
                self.stats.data_segments_received += 1;
                self.stats.data_bytes_received += seg.payload.len() as u64;
            }
            let below = rel.unsigned_abs();
            if let (true, true, Some(AckNonce::Nonce(nonce)), Some(recv)) = (
                self.negotiated.ack_nonce,
                rel < 0 && below <= rcv_nxt,
                seg.options.ack_nonce,
                self.recv.as_mut(),
            ) {
                // Old data still proves its end: it carries an ACK that
                // could not claim RCV.NXT up to it (see `EchoTracker`).
                let start = rcv_nxt - below;
                let end = start + seg_len as u64;
                recv.echo.on_segment((start, end), nonce, rcv_nxt, None);
            }
            if self.negotiated.sack && rel < 0 && below <= rcv_nxt {
                // A retransmission of data we hold.
                let start = rcv_nxt - below;
                let end = (start + seg.payload.len() as u64).min(rcv_nxt - u64::from(fin_received));
                if let Some(recv) = self.recv.as_mut() {
                    recv.report_duplicate(start, end);
                }
            }
            // Data an honest peer could have sent earns its answer at once,
            // one for one: a retransmission of bytes we hold (never more
            // than a buffer's worth below RCV.NXT, as the peer cannot have
            // had more in flight) or a probe starting at the window's right
            // edge (RFC 9293 3.8.6.1). Data anywhere else, like a bare ACK
            // outside the window (a keep-alive, an ACK loop's turn), is a
            // blind guess or a desynchronized peer: rate-limited (RFC 5961
            // section 7's advice for every unacceptable segment).
            let honest_data = seg_len > 0
                && if rel < 0 {
                    below <= rcv_nxt.min(buffer_bytes)
                } else {
                    rel.unsigned_abs() == window
                };
            if honest_data {
                self.ack_immediately();
            } else {
                self.reply_to_invalid(now);
            }
            return;
        }
        if f.contains(Flags::SYN) {
            // RFC 5961 4.2.
            self.challenge_ack(now);
            return;
        }
        if !f.contains(Flags::ACK) {
            self.stats.discarded_segments += 1;
            return;
        }
        self.last_received = now;

        if self.state == State::SynReceived {
            if seg.ack != self.iss.add(1) {
                self.pending_rst = Some((seg.ack, SeqNum(0), false));
                return;
            }
            self.state = State::Established;
            self.syn_due = false;
            self.syn_deadline = None;
            self.syn_sample(now);
            self.events.push_back(Event::Connected);
            tracing::debug!(peer = self.remote_port, "established (passive open)");
        }

        let una_before = self.sender.snd_una();
        let had_flight = una_before < self.sender.max_sent();
        if !self.process_ack(now, seg) {
            return;
        }
        if self.sender.snd_una() > una_before {
            self.last_progress = now;
        }
        if had_flight {
            self.ecn_on_ack(now, seg);
        }
        self.update_ts_recent(seg, rel);
        if seg_len > 0 {
            self.receive_data(now, seg);
            if self.ecn_on_data(seg) {
                self.ack_immediately();
            }
        } else if seg.payload.is_empty() {
            self.stats.pure_acks_received += 1;
            if self.arrival_ce {
                self.reflect_ece = true;
            }
        }
    }

    /// The ACK field of a synchronized segment. Returns false when the
    /// segment must be dropped.
    fn process_ack(&mut self, now: Instant, seg: &SegmentRepr<'_>) -> bool {
        let una = self.sender.snd_una();
        let una_seq = self.snd_seq(una);
        let rel = seg.ack.diff(una_seq) as i64;
        if rel < 0 {
            if rel.unsigned_abs() > self.max_snd_wnd {
                // RFC 5961 section 5: an ACK more than the largest window
                // ever offered below SND.UNA is not the peer's; injected
                // data riding on it must not be accepted.
                self.challenge_ack(now);
                return false;
            }
            // An old duplicate ACK; its data may still be useful.
            return true;
        }
        let ack = una + rel as u64;
        if ack > self.sender.max_sent() {
            // Acknowledges something never sent (RFC 9293): drop, and
            // answer at most every UNSENT_ACK_REPLY_INTERVAL. Unlimited,
            // an answer to an answer never ends once injected data has
            // put the peer ahead of us: each end takes the other's ACK
            // for one of unsent data or of an old segment, and replies.
            self.stats.discarded_segments += 1;
            self.reply_to_invalid(now);
            return false;
        }
        if ack > una && !self.nonce_echo_holds(seg) {
            // Acknowledges data the peer cannot show it holds: believe
            // nothing of it (see `ack_nonce`).
            self.stats.ack_nonce_failures += 1;
            self.stats.discarded_segments += 1;
            return false;
        }
        if self.end_guard && !self.names_segment_ends(seg, una, ack) {
            // Names a point no honest receiver could: it acknowledges
            // data it never got (see `segment_cuts`).
            self.stats.segment_end_failures += 1;
            self.stats.discarded_segments += 1;
            if self.stats.segment_end_failures >= END_FAILURES_BEFORE_RESET {
                self.abort_for(CloseReason::PeerMisbehaved);
            }
            return false;
        }
        let mut sack = core::mem::take(&mut self.sack_scratch);
        sack.clear();
        if self.negotiated.sack {
            for &(l, r) in seg.options.sack.as_slice() {
                let (l, r) = (l.diff(una_seq) as i64, r.diff(una_seq) as i64);
                if l >= 0 && r > l {
                    sack.push((una + l as u64, una + r as u64));
                }
            }
        }
        let rtt_sample = self.ts_rtt_sample(now, seg, ack > una);
        let window = u64::from(seg.window) << self.negotiated.send_window_shift;
        self.max_snd_wnd = self.max_snd_wnd.max(window);
        let carries_data = !seg.payload.is_empty() || seg.flags.contains(Flags::FIN);
        let unproven_duplicate = self.duplicate_unproven(seg, ack, una, carries_data);
        self.sender.on_ack(
            now,
            AckInput {
                ack,
                sack: &sack,
                window,
                carries_data,
                rtt_sample,
                unproven_duplicate,
            },
        );
        self.sack_scratch = sack;
        if self.config.buffer_autotuning {
            // Room for twice what the sender may have in flight.
            let window = self.sender.cwnd().min(self.sender.peer_window());
            let limit = super::autotune::send_limit(window, u64::from(self.mss()));
            self.sender
                .send_limit_mut()
                .raise(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        if self.sender.fin_acked() {
            self.on_fin_acked(now);
        }
        true
    }

    /// With the nonce in use and no SACK, a duplicate ACK counts only when
    /// its second echo names a segment sent above SND.UNA that no earlier
    /// duplicate named (see `ack_nonce`). Also settles the record of sent
    /// segments as SND.UNA moves.
    fn duplicate_unproven(
        &mut self,
        seg: &SegmentRepr<'_>,
        ack: u64,
        una: u64,
        carries_data: bool,
    ) -> bool {
        let (true, false, Some(key)) = (
            self.negotiated.ack_nonce,
            self.negotiated.sack,
            self.nonce_key,
        ) else {
            return false;
        };
        if ack > una {
            self.sent_ends.on_acked(ack);
            return false;
        }
        if ack < una || carries_data || una >= self.sender.max_sent() {
            return false;
        }
        let first = self.iss.add(1);
        match seg.options.arrival_echo {
            Some(arrival) => !self
                .sent_ends
                .credit(&key, arrival, |offset| SeqNum::from_offset(first, offset)),
            None => true,
        }
    }

    /// Toward a peer that declined the nonce: an ACK that moves SND.UNA
    /// must point where a segment we sent ends, and SACK blocks above
    /// SND.UNA must begin and end where segments do. Settles the record
    /// of sent ends as SND.UNA moves.
    fn names_segment_ends(&mut self, seg: &SegmentRepr<'_>, una: u64, ack: u64) -> bool {
        let una_seq = self.snd_seq(una);
        // Where an edge points, when that is above SND.UNA; at or below
        // it an edge is old news (a D-SACK, or an ACK that moves nothing).
        let above = |edge: SeqNum| {
            u64::try_from(edge.diff(una_seq))
                .ok()
                .filter(|&d| d > 0)
                .map(|d| una + d)
        };
        // A segment that carries the FIN ends twice: at the FIN, and, for
        // a receiver that holds it out of order, at the last data byte.
        // Nothing past what was sent has a recorded end.
        let data_end = self.sender.data_end();
        let is_end = |at: u64| {
            self.sent_ends.contains(at) || (at == data_end && self.sent_ends.contains(at + 1))
        };
        if ack > una && !is_end(ack) {
            return false;
        }
        if self.negotiated.sack {
            for &(l, r) in seg.options.sack.as_slice() {
                if above(l).is_some_and(|at| !is_end(at)) || above(r).is_some_and(|at| !is_end(at))
                {
                    return false;
                }
            }
        }
        if ack > una {
            self.sent_ends.on_acked(ack);
        }
        true
    }

    /// With the nonce in use, an ACK that moves SND.UNA must echo the
    /// nonce of the segment ending where it points.
    fn nonce_echo_holds(&self, seg: &SegmentRepr<'_>) -> bool {
        match (self.negotiated.ack_nonce, self.nonce_key) {
            (true, Some(key)) => seg.options.nonce_echo == Some(key.nonce(seg.ack)),
            _ => true,
        }
    }

    fn ts_rtt_sample(
        &self,
        now: Instant,
        seg: &SegmentRepr<'_>,
        advances: bool,
    ) -> Option<Duration> {
        if !self.negotiated.timestamps || !advances {
            return None;
        }
        let ts = seg.options.timestamps?;
        if ts.tsecr == 0 {
            return None;
        }
        let elapsed = self.timestamp_now(now).wrapping_sub(ts.tsecr);
        // An echo from the future or from long ago is not a sample.
        if elapsed > 1 << 30 {
            return None;
        }
        Some(Duration::from_micros(u64::from(elapsed)))
    }

    /// The receive side's RTT sample (paper 004 sec. 3.2): data echoing
    /// the timestamp of one of our ACKs measures the time from that ACK
    /// leaving to the data it released arriving. Only the first segment
    /// to echo a timestamp counts: the rest of the flight it released
    /// queued behind it and would read the bottleneck's serialisation as
    /// delay.
    fn receiver_rtt_sample(&mut self, now: Instant, seg: &SegmentRepr<'_>) -> Option<Duration> {
        if !self.negotiated.timestamps {
            return None;
        }
        let echo = seg.options.timestamps?.tsecr;
        let elapsed = self.timestamp_now(now).wrapping_sub(echo);
        let recv = self.recv.as_mut()?;
        if echo == 0 || elapsed > 1 << 30 {
            return None;
        }
        // An echo no newer than the last sampled one is a later segment
        // of the same flight, or reordered.
        if let Some(last) = recv.last_echo_sampled {
            if echo.wrapping_sub(last) as i32 <= 0 {
                return None;
            }
        }
        recv.last_echo_sampled = Some(echo);
        Some(Duration::from_micros(u64::from(elapsed)))
    }

    /// RFC 7323 section 4.3: remember the timestamp of the segment that
    /// our next ACK will acknowledge first.
    fn update_ts_recent(&mut self, seg: &SegmentRepr<'_>, rel: i64) {
        let Some(ts) = seg.options.timestamps else {
            return;
        };
        let Some(recv) = self.recv.as_mut() else {
            return;
        };
        let rcv_nxt = recv.reassembly.next_offset() + u64::from(recv.fin_received);
        let start = rcv_nxt as i64 + rel;
        // A duplicate or reordered old segment carries an old TSval; taking
        // it would make the peer's next RTT samples too long (RFC 7323
        // section 5.3 keeps TS.Recent monotonic for the same reason).
        let newer = ts.tsval.wrapping_sub(recv.ts_recent) as i32 >= 0;
        if start <= recv.last_ack_sent as i64 && newer {
            recv.ts_recent = ts.tsval;
        }
    }

    fn on_fin_acked(&mut self, now: Instant) {
        match self.state {
            State::FinWait1 => self.state = State::FinWait2,
            State::Closing => self.enter_time_wait(now),
            State::LastAck => self.finish(CloseReason::Normal),
            _ => {}
        }
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.state = State::TimeWait;
        self.time_wait_deadline = Some(now + self.config.time_wait);
    }

    fn receive_data(&mut self, now: Instant, seg: &SegmentRepr<'_>) {
        let full_sized = self.peer_segment_size();
        let rtt_sample = self.receiver_rtt_sample(now, seg);
        let accepts_data = matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        );
        let Some(recv) = self.recv.as_mut() else {
            return;
        };
        self.stats.data_segments_received += 1;
        self.stats.data_bytes_received += seg.payload.len() as u64;
        let rcv_nxt = recv.reassembly.next_offset();
        let start_rel = seg.seq.diff(super::seq_of(recv.irs, rcv_nxt)) as i64;
        let fin = seg.flags.contains(Flags::FIN);
        if !accepts_data || recv.fin_received {
            // After the peer's FIN nothing new can arrive; a retransmitted
            // FIN still deserves an ACK.
            recv.ack_now = true;
            return;
        }
        // Drop bytes below RCV.NXT; the reassembly trims the top.
        let (offset, payload) = if start_rel < 0 {
            let skip = (-start_rel) as usize;
            (rcv_nxt, seg.payload.get(skip..).unwrap_or(&[]))
        } else {
            (rcv_nxt + start_rel as u64, seg.payload)
        };
        if let Some(tuner) = recv.tuner.as_mut() {
            if let Some(rtt) = rtt_sample {
                tuner.on_rtt_sample(rtt);
            }
            let read = recv.reassembly.read_offset();
            if let Some(limit) = tuner.on_arrival(now, read, full_sized as u64) {
                #[cfg(feature = "std")]
                let limit = match self.window_share.as_mut() {
                    Some(share) => {
                        let wider = limit.saturating_add(
                            super::window_budget::EXTRA_MARGIN_SEGMENTS * full_sized as u64,
                        );
                        share.grow(limit, wider, recv.reassembly.capacity() as u64)
                    }
                    None => limit,
                };
                recv.reassembly
                    .limit_mut()
                    .raise(usize::try_from(limit).unwrap_or(usize::MAX));
            }
        }
        let highest_before = recv.reassembly.highest_received();
        let outcome = match self
            .arrival_bytes
            .as_ref()
            .and_then(|b| subslice(b, payload))
        {
            Some(shared) => recv.reassembly.insert_shared(offset, &shared),
            None => recv.reassembly.insert(offset, payload),
        };
        let opened_hole = !payload.is_empty() && offset > highest_before;
        self.stats.bytes_delivered += outcome.advanced;
        if outcome.advanced > 0 {
            self.last_progress = now;
        }

        if self.negotiated.sack && !seg.payload.is_empty() {
            // RFC 2883: report the duplicate part, the bytes below RCV.NXT
            // or a segment all of whose bytes were already held.
            let seg_start = (rcv_nxt as i64 + start_rel).max(0) as u64;
            let seg_end = seg_start + seg.payload.len() as u64;
            if start_rel < 0 {
                recv.report_duplicate(seg_start, seg_end.min(rcv_nxt));
            } else if outcome.duplicate {
                recv.report_duplicate(seg_start, seg_end);
            }
        }
        if fin {
            let fin_at = (rcv_nxt as i64 + start_rel + seg.payload.len() as i64).max(0) as u64;
            // Only a FIN inside the window we offered is believed.
            if fin_at <= recv.reassembly.next_offset() + recv.reassembly.window() as u64 {
                recv.fin_offset = Some(fin_at);
            }
        }
        let mut peer_closed = false;
        if recv.fin_offset == Some(recv.reassembly.next_offset()) && !recv.fin_received {
            recv.fin_received = true;
            peer_closed = true;
        }
        if let (true, Some(AckNonce::Nonce(nonce))) =
            (self.negotiated.ack_nonce, seg.options.ack_nonce)
        {
            // Where the segment ends and where RCV.NXT is now, both in
            // stream offsets with the FIN counted, as the sender's nonce
            // counts it.
            let start = (rcv_nxt as i64 + start_rel).max(0) as u64;
            let end = rcv_nxt as i64 + start_rel + seg.payload.len() as i64 + i64::from(fin);
            let now_at = recv.reassembly.next_offset() + u64::from(recv.fin_received);
            // The held range the segment now ends; a FIN ends the stream,
            // so its segment always ends what lies below it.
            let data_end = (end - i64::from(fin)).max(0) as u64;
            let last_byte = recv.reassembly.held_range(data_end.saturating_sub(1));
            let range = if fin {
                Some((last_byte.map_or(data_end, |(from, _)| from), data_end + 1))
            } else {
                last_byte
            };
            recv.echo
                .on_segment((start, end.max(0) as u64), nonce, now_at, range);
            if !self.negotiated.sack && end > now_at as i64 {
                recv.arrival_echo = Some(nonce);
            }
        }
        let info = ArrivalInfo {
            now,
            payload_len: seg.payload.len(),
            full_sized: seg.payload.len() >= full_sized,
            out_of_order: outcome.out_of_order,
            filled_gap: outcome.filled_gap,
            duplicate: outcome.duplicate && !peer_closed,
            has_gaps: recv.reassembly.has_gaps(),
            opened_hole,
            fin: peer_closed,
            push: seg.flags.contains(Flags::PSH),
            ack_request: seg.options.ack_request,
            rcv_nxt: recv.reassembly.next_offset(),
            segment_size: full_sized,
            rtt_sample,
            ce: self.arrival_ce,
            ece: seg.flags.contains(Flags::ECE),
        };
        let decision = recv.policy.on_segment(&info);
        tracing::debug!(
            policy = recv.policy.name(),
            ?decision,
            len = info.payload_len,
            ooo = info.out_of_order,
            "ack decision"
        );
        match decision {
            AckDecision::Now => recv.ack_now = true,
            AckDecision::By(t) => {
                recv.ack_deadline = Some(recv.ack_deadline.map_or(t, |d| d.min(t)));
            }
        }
        if peer_closed {
            self.events.push_back(Event::PeerClosed);
            match self.state {
                State::Established => self.state = State::CloseWait,
                State::FinWait1 => self.state = State::Closing,
                State::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    /// RFC 5961's challenge ACK, at most `challenge_ack_limit` per second
    /// (section 7): an attacker flooding forged segments must not turn
    /// the connection into an ACK reflector, nor learn from the ACK rate.
    fn challenge_ack(&mut self, now: Instant) {
        self.stats.discarded_segments += 1;
        if now >= self.challenge_window.0 + Duration::from_secs(1) {
            self.challenge_window = (now, 0);
        }
        let allowed = self.challenge_window.1 < self.config.challenge_ack_limit;
        // The endpoint's budget is drawn only within the connection's own.
        #[cfg(feature = "std")]
        let allowed = allowed && self.challenge_budget.as_ref().is_none_or(|b| b.take(now));
        if allowed {
            self.challenge_window.1 += 1;
            self.stats.challenge_acks += 1;
            self.ack_immediately();
        } else {
            self.stats.challenge_acks_suppressed += 1;
        }
    }

    /// An ACK in answer to an invalid segment, at most every
    /// [`INVALID_REPLY_INTERVAL`]; the suppressed ones are counted.
    fn reply_to_invalid(&mut self, now: Instant) {
        let due = self
            .invalid_replied_at
            .is_none_or(|at| now >= at + INVALID_REPLY_INTERVAL);
        if due {
            self.invalid_replied_at = Some(now);
            self.ack_immediately();
        } else {
            self.stats.invalid_replies_suppressed += 1;
        }
    }

    fn ack_immediately(&mut self) {
        if let Some(r) = self.recv.as_mut() {
            r.ack_now = true;
        }
    }

    /// After the application read, tell a peer that believes our window is
    /// nearly closed that it has opened again (receiver-side silly window
    /// avoidance, RFC 9293 3.8.6.2.2: only for a substantial opening).
    pub(super) fn maybe_window_update(&mut self) {
        let mss = u64::from(self.mss());
        let Some(recv) = self.recv.as_mut() else {
            return;
        };
        let rcv_nxt = recv.reassembly.next_offset();
        let cap = recv.reassembly.limit() as u64;
        let peer_view = recv.last_window_edge.saturating_sub(rcv_nxt);
        let edge = rcv_nxt + recv.reassembly.window() as u64;
        let opened = edge.saturating_sub(recv.last_window_edge);
        if peer_view < (cap / 4).max(2 * mss).min(cap) && opened >= (cap / 2).min(4 * mss).max(1) {
            recv.ack_now = true;
        }
    }
}

/// `part` as a slice of `whole`, if it lies within `whole`'s bytes (a
/// payload parsed from them); `None` for an empty part or one from
/// elsewhere.
fn subslice(whole: &Bytes, part: &[u8]) -> Option<Bytes> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (!part.is_empty() && end <= whole.len()).then(|| whole.slice(start..end))
}
