//! Explicit Congestion Notification for the connection (RFC 3168
//! section 6.1).
//!
//! Negotiation (section 6.1.1): with [`Config::ecn`](super::Config::ecn)
//! on, an active opener's SYN carries ECE and CWR and a listener that
//! received such a SYN answers with ECE alone on its SYN-ACK; a SYN-ACK
//! with both bits set is not an answer (a reflecting middlebox, section
//! 6.1.1.1). Nothing changes on a connection where either end left it off.
//!
//! Once negotiated:
//! - the data receiver (section 6.1.3) sets ECE on every segment it sends,
//!   ACKs and data alike, from a data segment that arrived marked CE until
//!   a data segment with CWR arrives;
//! - the data sender (section 6.1.2) reduces its window for ECE at most
//!   once per round trip ([`Sender::on_ecn_echo`](crate::sender::Sender::on_ecn_echo))
//!   and sets CWR on the next new data segment after a reduction.
//!
//! One addition to the RFC: the first CE mark of an episode (one that
//! finds ECE not already being echoed) makes the ACK go at once. ackwise's
//! receivers thin ACKs to one per group or per half window; left to the
//! policy, the echo could wait for a whole group and the sender would
//! answer congestion a round trip late. Later marks of the same episode
//! do not hurry the ACK: ECE is already on every ACK until CWR arrives, so
//! they would only add ACKs without adding information.
//!
//! The ACK-path signal of RFC 5690 (ACC: a CE-marked pure ACK reflected as
//! ECE on our next data segment, for the peer's ACK policy) is separate
//! and works with or without this negotiation.

use super::Connection;
use crate::time::Instant;
use crate::wire::{Flags, SegmentRepr};

/// RFC 3168 state of one connection end.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct EcnState {
    /// Receiver side: a CE mark is unanswered by CWR; ECE goes on every
    /// segment we send (section 6.1.3).
    pub(super) echo: bool,
    /// Sender side: the window was reduced for ECE and the next new data
    /// segment must carry CWR (section 6.1.2).
    pub(super) cwr_due: bool,
}

/// Whether a SYN or SYN-ACK offers ECN (RFC 3168 section 6.1.1): a SYN
/// with ECE and CWR, a SYN-ACK with ECE and without CWR.
pub(super) fn offered_ecn(seg: &SegmentRepr<'_>) -> bool {
    let f = seg.flags;
    if f.contains(Flags::ACK) {
        f.contains(Flags::ECE) && !f.contains(Flags::CWR)
    } else {
        f.contains(Flags::ECE) && f.contains(Flags::CWR)
    }
}

impl Connection {
    /// Flags our SYN or SYN-ACK carries to offer ECN (section 6.1.1).
    pub(super) fn ecn_syn_flags(&self, passive: bool) -> Flags {
        if passive {
            // Answer only a peer that offered (section 6.1.1: "ECN-setup
            // SYN-ACK" only in reply to an "ECN-setup SYN").
            if self.negotiated.ecn {
                Flags::ECE
            } else {
                Flags::empty()
            }
        } else if self.config.ecn {
            Flags::ECE | Flags::CWR
        } else {
            Flags::empty()
        }
    }

    /// A data segment arrived (section 6.1.3): CWR ends the echo, CE
    /// (re)starts it; in that order, so a segment carrying both keeps the
    /// echo on. Returns true when the ACK should go at once (see the
    /// module doc).
    pub(super) fn ecn_on_data(&mut self, seg: &SegmentRepr<'_>) -> bool {
        if !self.negotiated.ecn {
            return false;
        }
        if seg.flags.contains(Flags::CWR) {
            self.ecn.echo = false;
        }
        if self.arrival_ce && !self.ecn.echo {
            self.ecn.echo = true;
            return true;
        }
        false
    }

    /// An acknowledgment that found data of ours outstanding was
    /// processed (section 6.1.2): ECE on it may reduce the window, and a
    /// reduction owes the peer a CWR.
    pub(super) fn ecn_on_ack(&mut self, now: Instant, seg: &SegmentRepr<'_>) {
        if self.negotiated.ecn && seg.flags.contains(Flags::ECE) && self.sender.on_ecn_echo(now) {
            self.ecn.cwr_due = true;
        }
    }

    /// ECN flags for a segment we send that acknowledges (section 6.1.3:
    /// ECE on every one while echoing) and, for new data, CWR once after
    /// a reduction (section 6.1.2: a retransmission does not carry it).
    pub(super) fn ecn_flags(&mut self, new_data: bool) -> Flags {
        if !self.negotiated.ecn {
            return Flags::empty();
        }
        let mut flags = Flags::empty();
        if self.ecn.echo {
            flags = flags | Flags::ECE;
        }
        if new_data && core::mem::take(&mut self.ecn.cwr_due) {
            flags = flags | Flags::CWR;
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AckPolicyConfig, Config, Connection};
    use crate::time::{Duration, Instant};
    use crate::wire::{Checksum, Flags, SegmentRepr};
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// What one end sent: flags and payload length of each segment.
    type Sent = Vec<(Flags, usize)>;

    fn config(ecn: bool) -> Config {
        Config {
            ecn,
            // One ACK per segment, so that each step below is one segment.
            ack_policy: AckPolicyConfig::Every,
            checksums: false,
            min_rto: Duration::from_millis(200),
            ..Config::default()
        }
    }

    fn flags_of(bytes: &[u8]) -> (Flags, usize) {
        let seg = SegmentRepr::parse(bytes, Checksum::Ignore).unwrap();
        (seg.flags, seg.payload.len())
    }

    /// Drains `from` and hands every segment to `to`, marked CE when
    /// `ce`; up to `limit` segments. Returns what went across.
    fn carry(
        now: Instant,
        from: &mut Connection,
        to: &mut Connection,
        ce: bool,
        limit: usize,
    ) -> Sent {
        let mut buf = [0u8; 2000];
        let mut sent = Vec::new();
        while sent.len() < limit {
            let Some(n) = from.poll_transmit(now, &mut buf) else {
                break;
            };
            sent.push(flags_of(&buf[..n]));
            to.handle_segment_with_ce(now, &buf[..n], ce).unwrap();
        }
        sent
    }

    /// Client and server after the handshake, and the SYN's and SYN-ACK's
    /// flags.
    fn open(client: bool, server: bool) -> (Connection, Connection, Flags, Flags) {
        open_with(config(client), config(server))
    }

    fn open_with(client: Config, server: Config) -> (Connection, Connection, Flags, Flags) {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let now = Instant::ZERO;
        let mut buf = [0u8; 2000];
        let mut c = Connection::connect(client, now, 1000, 80, &mut rng).unwrap();
        let n = c.poll_transmit(now, &mut buf).unwrap();
        let syn = flags_of(&buf[..n]).0;
        let mut s = Connection::accept(server, now, &buf[..n], &mut rng).unwrap();
        let n = s.poll_transmit(now, &mut buf).unwrap();
        let syn_ack = flags_of(&buf[..n]).0;
        c.handle_segment(now, &buf[..n]).unwrap();
        carry(now, &mut c, &mut s, false, usize::MAX);
        assert!(c.is_established() && s.is_established());
        (c, s, syn, syn_ack)
    }

    fn has(f: Flags, bit: Flags) -> bool {
        f.contains(bit)
    }

    #[test]
    fn negotiated_when_both_offer() {
        let (c, s, syn, syn_ack) = open(true, true);
        assert!(
            has(syn, Flags::ECE) && has(syn, Flags::CWR),
            "ECN-setup SYN"
        );
        assert!(has(syn_ack, Flags::ECE) && !has(syn_ack, Flags::CWR));
        assert!(c.negotiated().ecn && s.negotiated().ecn);
    }

    #[test]
    fn not_negotiated_when_either_end_declines() {
        let (c, s, syn, syn_ack) = open(true, false);
        assert!(has(syn, Flags::ECE));
        assert!(!has(syn_ack, Flags::ECE) && !has(syn_ack, Flags::CWR));
        assert!(!c.negotiated().ecn && !s.negotiated().ecn);
        let (c, s, syn, syn_ack) = open(false, true);
        assert!(!has(syn, Flags::ECE) && !has(syn, Flags::CWR));
        assert!(
            !has(syn_ack, Flags::ECE),
            "only an ECN-setup SYN is answered"
        );
        assert!(!c.negotiated().ecn && !s.negotiated().ecn);
    }

    #[test]
    fn without_negotiation_marks_change_nothing() {
        for (client, server) in [(true, false), (false, true), (false, false)] {
            let (mut c, mut s, _, _) = open(client, server);
            let now = Instant::from_millis(10);
            c.write(&[7u8; 20_000]);
            let data = carry(now, &mut c, &mut s, true, 4);
            let acks = carry(now, &mut s, &mut c, false, usize::MAX);
            let more = carry(now, &mut c, &mut s, false, usize::MAX);
            for (f, _) in data.iter().chain(&acks).chain(&more) {
                assert!(!has(*f, Flags::ECE) && !has(*f, Flags::CWR), "{f:?}");
            }
            assert_eq!(c.stats().ecn_reductions, 0);
        }
    }

    #[test]
    fn receiver_echoes_until_cwr_and_sender_reduces_once() {
        let (mut c, mut s, _, _) = open(true, true);
        let now = Instant::from_millis(10);
        c.write(&[7u8; 200_000]);
        // Grow the window a little first, unmarked.
        for _ in 0..3 {
            carry(now, &mut c, &mut s, false, usize::MAX);
            carry(now, &mut s, &mut c, false, usize::MAX);
        }
        let cwnd = c.stats().cwnd;
        assert!(cwnd >= 8 * 1448, "window grew: {cwnd}");
        // One marked data segment, then unmarked ones, with the receiver's
        // ACKs held back so that they all reach the sender in one round
        // trip, before it can send CWR: every one carries ECE, and the
        // first leaves at once.
        let mut buf = [0u8; 2000];
        let mut held = Vec::new();
        for k in 0..6 {
            carry(now, &mut c, &mut s, k == 0, 1);
            let n = s.poll_transmit(now, &mut buf).expect("an ACK at once");
            assert!(has(flags_of(&buf[..n]).0, Flags::ECE), "ECE until CWR");
            held.push(buf[..n].to_vec());
        }
        // The first reduces the window as a fast retransmit would...
        c.handle_segment(now, &held[0]).unwrap();
        let reduced = c.stats();
        assert_eq!(reduced.ecn_reductions, 1);
        assert_eq!(reduced.cwnd, reduced.ssthresh);
        assert!(reduced.cwnd < cwnd);
        // ...and the other five, in the same round trip, do nothing more.
        for ack in &held[1..] {
            c.handle_segment(now, ack).unwrap();
        }
        let st = c.stats();
        assert_eq!(st.ecn_reductions, 1);
        assert_eq!(st.ssthresh, reduced.ssthresh);
        assert_eq!(st.retransmissions, 0, "ECN reduces without resending");
        assert_eq!(st.fast_retransmits, 0);
        // CWR on the next new data segment only.
        let data = carry(now, &mut c, &mut s, false, usize::MAX);
        assert!(!data.is_empty());
        let cwr: Vec<_> = data.iter().filter(|(f, _)| has(*f, Flags::CWR)).collect();
        assert_eq!(cwr.len(), 1, "{data:?}");
        assert!(has(data[0].0, Flags::CWR));
        // CWR ended the echo: the ACKs for it and after carry no ECE.
        let acks = carry(now, &mut s, &mut c, false, usize::MAX);
        assert!(!acks.is_empty());
        assert!(acks.iter().all(|(f, _)| !has(*f, Flags::ECE)), "{acks:?}");
        assert_eq!(c.stats().ecn_reductions, 1);
        // A new mark after the reduced window was acknowledged is a new
        // round trip: a second reduction.
        for _ in 0..2 {
            carry(now, &mut c, &mut s, false, usize::MAX);
            carry(now, &mut s, &mut c, false, usize::MAX);
        }
        carry(now, &mut c, &mut s, true, 1);
        carry(now, &mut s, &mut c, false, usize::MAX);
        assert_eq!(c.stats().ecn_reductions, 2);
    }

    #[test]
    fn first_mark_is_acknowledged_at_once_by_a_delayed_ack_receiver() {
        let mut server = config(true);
        server.ack_policy = AckPolicyConfig::DELAYED;
        let (mut c, mut s, _, _) = open_with(config(true), server);
        let now = Instant::from_millis(10);
        let mut buf = [0u8; 2000];
        c.write(&[7u8; 20_000]);
        // An unmarked segment waits for the delayed ACK...
        carry(now, &mut c, &mut s, false, 1);
        assert!(s.poll_transmit(now, &mut buf).is_none());
        // ...a marked one is echoed at once.
        carry(now, &mut c, &mut s, true, 1);
        let n = s.poll_transmit(now, &mut buf).expect("ACK at once");
        assert!(has(flags_of(&buf[..n]).0, Flags::ECE));
        // A further mark while ECE is already echoed does not hurry the
        // ACK (the delayed ACK policy decides again).
        carry(now, &mut c, &mut s, true, 1);
        assert!(s.poll_transmit(now, &mut buf).is_none());
    }
}
