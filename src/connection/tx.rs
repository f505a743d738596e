//! Building outgoing segments.

use super::{seq_of, Connection, Emitted, State};
use crate::receiver::AckSent;
use crate::sender::{Slices, TxSegment};
use crate::time::Instant;
use crate::wire::{
    AckNonce, AckRequest, Checksum, Flags, Options, SegmentRepr, SeqNum, Timestamps, HEADER_LEN,
    MAX_OPTIONS_LEN,
};

/// The largest header a segment can have.
const MAX_HEADER: usize = HEADER_LEN + MAX_OPTIONS_LEN;

impl Connection {
    /// Writes the next segment to send into `buf` and returns its length,
    /// or `None` when nothing is due. `buf` should hold at least the MSS
    /// plus 60 bytes of header; a smaller buffer gets smaller segments.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<usize> {
        if buf.len() < MAX_HEADER + 1 {
            return None;
        }
        if let Some((seq, ack, has_ack)) = self.pending_rst.take() {
            return self.emit_rst(seq, ack, has_ack, buf);
        }
        match self.state {
            State::Closed => None,
            State::SynSent | State::SynReceived => {
                if self.syn_due {
                    self.emit_syn(now, buf)
                } else {
                    None
                }
            }
            _ => self.transmit_synchronized(now, buf),
        }
    }

    /// [`poll_transmit`](Self::poll_transmit) for a carrier that can send
    /// a datagram from several pieces of memory (`sendmsg` with an I/O
    /// vector): where no checksum is computed (the ends agreed to omit it,
    /// see [`Config::omit_checksums`](super::Config::omit_checksums), or
    /// checksums are off), a data segment's payload is not copied into
    /// `buf`; only its header is written, and the payload stays in the send
    /// buffer, where [`sent_payload`](Self::sent_payload) reads it in
    /// place. That saves a copy of every byte sent. Other segments are
    /// written whole. `buf` must be as large as for `poll_transmit`.
    pub fn poll_transmit_gather(&mut self, now: Instant, buf: &mut [u8]) -> Option<Emitted> {
        self.gather = true;
        self.gathered = None;
        let n = self.poll_transmit(now, buf);
        self.gather = false;
        let n = n?;
        Some(match self.gathered.take() {
            Some((payload_offset, payload_len)) => Emitted::Header {
                header_len: n - payload_len,
                payload_offset,
                payload_len,
            },
            None => Emitted::Whole(n),
        })
    }

    /// The `len` payload bytes from send-stream offset `offset` (as an
    /// [`Emitted::Header`] names them), in place: one slice per piece of
    /// the send buffer they span (a copied block or a buffer given to
    /// [`write_shared`](Self::write_shared)). `None` when they are no
    /// longer all held: acknowledged meanwhile (the segment need not go
    /// out), or dropped with the connection.
    pub fn sent_payload(&self, offset: u64, len: usize) -> Option<Slices<'_>> {
        self.sender
            .payload(offset, len)
            .filter(|pieces| pieces.bytes() == len)
    }

    fn emit_rst(
        &mut self,
        seq: SeqNum,
        ack: SeqNum,
        has_ack: bool,
        buf: &mut [u8],
    ) -> Option<usize> {
        let flags = if has_ack {
            Flags::RST | Flags::ACK
        } else {
            Flags::RST
        };
        let repr = SegmentRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            ack,
            flags,
            window: 0,
            options: Options::default(),
            payload: &[],
        };
        repr.emit(buf, self.tx_checksum()).ok()
    }

    fn emit_syn(&mut self, now: Instant, buf: &mut [u8]) -> Option<usize> {
        let passive = self.state == State::SynReceived;
        let mut options = Options {
            mss: Some(self.config.mss),
            ..Options::default()
        };
        if passive {
            // Offer only what the peer offered (RFC 7323, RFC 2018).
            let n = self.negotiated;
            options.window_scale = n.window_scaling.then_some(n.recv_window_shift);
            options.sack_permitted = n.sack;
            options.timestamps = n.timestamps.then(|| Timestamps {
                tsval: self.timestamp_now(now),
                tsecr: self.recv.as_ref().map_or(0, |r| r.ts_recent),
            });
            options.ack_request = n.ack_requests.then_some(AckRequest::Supported);
            options.ack_nonce = n.ack_nonce.then_some(AckNonce::Permitted);
            options.checksum_omission = n.checksums_omitted;
        } else {
            options.window_scale = self
                .config
                .window_scaling
                .then(|| self.config.window_shift());
            options.sack_permitted = self.config.sack;
            options.timestamps = self.config.timestamps.then(|| Timestamps {
                tsval: self.timestamp_now(now),
                tsecr: 0,
            });
            options.ack_request = self.config.ack_requests.then_some(AckRequest::Supported);
            options.ack_nonce = self
                .config
                .ack_nonce
                .offers()
                .then_some(AckNonce::Permitted);
            options.checksum_omission = super::offers_checksum_omission(&self.config);
        }
        let (flags, ack) = if passive {
            (Flags::SYN | Flags::ACK, self.rcv_ack_seq())
        } else {
            (Flags::SYN, SeqNum(0))
        };
        let flags = flags | self.ecn_syn_flags(passive);
        let repr = SegmentRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.iss,
            ack,
            flags,
            // Never scaled on a SYN (RFC 7323 2.2).
            window: self.config.recv_buffer.min(65_535) as u16,
            options,
            payload: &[],
        };
        let n = repr.emit(buf, self.tx_checksum()).ok()?;
        self.syn_due = false;
        self.syn_sent_count = self.syn_sent_count.saturating_add(1);
        if self.syn_sent_count == 1 {
            self.syn_sent_at = Some(now);
        }
        self.syn_deadline = Some(now + self.syn_rto);
        if passive {
            self.stats.acks_sent += 1;
        }
        Some(n)
    }

    fn transmit_synchronized(&mut self, now: Instant, buf: &mut [u8]) -> Option<usize> {
        let may_send_data = matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        );
        if may_send_data {
            let max_payload = buf.len() - MAX_HEADER;
            if let Some(tx) = self.sender.poll_transmit(now, max_payload) {
                return self.emit_data(now, tx, buf);
            }
        }
        let ack_due = self.recv.as_ref().is_some_and(|r| r.ack_now);
        if ack_due {
            // SND.MAX, not the rewound SND.NXT: after a timeout the peer may
            // already hold more than we are resending, and an ACK numbered
            // below its RCV.NXT would be discarded as old.
            let seq = self.snd_seq(self.sender.max_sent());
            let flags = Flags::ACK | self.ecn_flags(false);
            return self.emit_ack(now, seq, flags, None, buf);
        }
        None
    }

    fn emit_data(&mut self, now: Instant, tx: TxSegment, buf: &mut [u8]) -> Option<usize> {
        let mut flags = Flags::ACK;
        if tx.fin {
            flags = flags | Flags::FIN;
        }
        if tx.start + tx.len as u64 >= self.sender.data_end() {
            flags = flags | Flags::PSH;
        }
        if core::mem::take(&mut self.reflect_ece) {
            flags = flags | Flags::ECE;
        }
        flags = flags | self.ecn_flags(!tx.retransmission);
        let seq = self.snd_seq(tx.start);
        self.emit_ack(now, seq, flags, Some(tx), buf)
    }

    /// Emits a segment that carries our acknowledgment, with or without
    /// data, and tells the ACK policy about it.
    fn emit_ack(
        &mut self,
        now: Instant,
        seq: SeqNum,
        flags: Flags,
        tx: Option<TxSegment>,
        buf: &mut [u8],
    ) -> Option<usize> {
        let recv = self.recv.as_mut()?;
        let rcv_nxt = recv.reassembly.next_offset();
        // The options are filled in place, in the segment's description:
        // built apart and then moved in, their bytes were copied in wide
        // loads right after the narrow stores that set them, which the
        // processor's store forwarding cannot serve. ACK and window are
        // set below, once known.
        let mut repr = SegmentRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            ack: SeqNum(0),
            flags,
            window: 0,
            options: Options::default(),
            payload: &[],
        };
        let options = &mut repr.options;
        if self.negotiated.timestamps {
            options.timestamps = Some(Timestamps {
                tsval: ((now.as_nanos() / 1_000) as u32).wrapping_add(self.ts_offset),
                tsecr: recv.ts_recent,
            });
        }
        if let Some(countdown) = tx.and_then(|t| t.ack_request) {
            options.ack_request = Some(AckRequest::Countdown(countdown));
        } else if tx.is_some() && self.config.announce_window && self.negotiated.peer_ack_requests {
            let segment = self.sender.mss().max(1);
            let segments = u32::try_from(self.sender.cwnd() / segment).unwrap_or(u32::MAX);
            options.ack_request = Some(AckRequest::SenderWindow(segments));
        }
        if self.negotiated.ack_nonce {
            options.nonce_echo = recv.echo.echo();
            if !self.negotiated.sack {
                options.arrival_echo = recv.arrival_echo.take();
                if options.arrival_echo.is_some() && options.nonce_echo.is_none() {
                    // The second echo rides beside the first; before any
                    // data arrived in order there is none to give, and a
                    // duplicate ACK moves nothing, so any value will do.
                    options.nonce_echo = Some(0);
                }
            }
            if let (Some(t), Some(key)) = (tx, self.nonce_key) {
                // The data's end in sequence space (the FIN counts).
                let end = seq.add((t.len + usize::from(t.fin)) as u32);
                options.ack_nonce = Some(AckNonce::Nonce(key.nonce(end)));
                if !self.negotiated.sack {
                    self.sent_ends
                        .on_sent(t.start + t.len as u64 + u64::from(t.fin));
                }
            }
        }
        if let Some(t) = tx.filter(|_| self.end_guard) {
            // The ends an ACK from this peer may name (see `segment_cuts`).
            self.sent_ends
                .on_sent(t.start + t.len as u64 + u64::from(t.fin));
        }
        if let Some((l, r)) = recv.dsack.take().filter(|_| self.negotiated.sack) {
            // The D-SACK block goes first (RFC 2883 section 4).
            options.sack.push(seq_of(recv.irs, l), seq_of(recv.irs, r));
        }
        if self.negotiated.sack && recv.reassembly.has_gaps() {
            let mut blocks = [(0u64, 0u64); 4];
            let n = recv.reassembly.sack_blocks(&mut blocks);
            for &(l, r) in &blocks[..n] {
                // A block that reaches a FIN held out of order covers the
                // FIN too: the sender's last segment carries it and is
                // SACKed only when a block covers it wholly. Without it a
                // hole just below the last segment has nothing SACKed
                // above it, and only a timeout resends it.
                let r = if recv.fin_offset == Some(r) { r + 1 } else { r };
                options.sack.push(seq_of(recv.irs, l), seq_of(recv.irs, r));
            }
        }
        // With the nonce, claim only what its echo proves (normally all
        // of RCV.NXT), and widen the window by the difference so that its
        // right edge stays where the buffer puts it.
        let cumulative = rcv_nxt + u64::from(recv.fin_received);
        let acked_to = if self.negotiated.ack_nonce {
            recv.echo.ack_point(cumulative)
        } else {
            cumulative
        };
        let shift = self.negotiated.recv_window_shift;
        let window = recv.reassembly.window() as u64 + (cumulative - acked_to);
        let window_field = (window >> shift).min(65_535);
        let ack = seq_of(recv.irs, acked_to);

        let len = tx.map_or(0, |t| t.len);
        repr.ack = ack;
        repr.window = window_field as u16;
        // Without a checksum to compute over it, a gathering carrier takes
        // the payload from the send buffer itself.
        let gather = self.gather && self.tx_checksum() == Checksum::Ignore;
        let sender = &self.sender;
        let result = repr.emit_with_payload(buf, self.tx_checksum(), len, |out| {
            if let Some(t) = tx.filter(|_| !gather) {
                let copied = sender.copy_payload(t.start, out);
                debug_assert_eq!(copied, len);
            }
        });
        let n = result.ok()?;
        if gather {
            self.gathered = tx.map(|t| (t.start, len));
        }

        let recv = self.recv.as_mut()?;
        let sent = AckSent {
            now,
            acked_to,
            duplicate: acked_to == recv.last_ack_sent && recv.reassembly.has_gaps(),
        };
        recv.ack_now = false;
        recv.ack_deadline = None;
        recv.last_ack_sent = acked_to;
        recv.last_window_edge =
            (acked_to + (window_field << shift)).saturating_sub(u64::from(recv.fin_received));
        recv.policy.on_ack_sent(&sent);
        self.stats.acks_sent += 1;
        if tx.is_none() {
            self.stats.pure_acks_sent += 1;
        }
        Some(n)
    }
}
