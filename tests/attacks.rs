//! A receiver that lies in its ACKs, against an honest sender: each
//! attack's gain (data the sender pushed out in the same virtual time) over
//! an honest receiver on the same path stays at most 1.05x (issue 14's
//! table). The path is a single bottleneck with a drop-tail queue, so the
//! honest flow reaches congestion avoidance and loss recovery, where the
//! ACK-counting and duplicate-ACK rules are exposed.
#![cfg(feature = "lab")]

use ackwise::connection::{AckNonceMode, CloseReason, Config, Connection, Event};
use ackwise::lab::Strategy;
use ackwise::time::{Duration, Instant};
use ackwise::wire::{Checksum, Flags, SegmentRepr, SeqNum};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const SEED: u64 = 0x00a7_7ac4;

/// How the receiver's outgoing segments are rewritten.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Attack {
    Honest,
    /// Every pure ACK that advances the cumulative ACK by n bytes becomes
    /// `slices` ACKs advancing n / slices each (Savage et al. 1999).
    Division {
        slices: u32,
    },
    /// Every duplicate ACK is sent `copies` times; with `decline`, the
    /// receiver takes no part in the nonce (it does not offer it).
    DupSpoof {
        copies: u32,
        decline: bool,
    },
    /// Every pure ACK acknowledges everything the sender has put on the
    /// wire so far, received or not (Savage et al. 1999's optimistic ACK,
    /// by an attacker that knows exactly what is in flight); with
    /// `strip`, the attacker's SYN-ACK also leaves out the nonce offer.
    Optimistic {
        strip: bool,
    },
    /// The receiver declines the nonce (it does not offer it), and every
    /// pure ACK is followed by one that acknowledges `ahead` segments past
    /// the highest that has arrived, each the size of the largest that
    /// has (holes below are acknowledged too: the liar wants the sender
    /// fast, not the data): an optimistic receiver that, as any real one,
    /// must guess where the sender's segments end. `ahead` 0 is an honest
    /// receiver that declines the nonce.
    Guessing {
        ahead: u32,
    },
    /// Every pure ACK keeps its true cumulative point but claims, in a
    /// SACK block, everything the sender has put on the wire above the
    /// first segment past that point (an attacker that knows what is in
    /// flight).
    SackAll,
}

/// A segment on the wire: arrival, serial (keeps ties in send order),
/// towards the server, bytes.
type InFlight = (Instant, u64, bool, Vec<u8>);

/// A dumbbell in miniature: the data direction has a rate and a drop-tail
/// queue, the ACK direction only a delay.
struct Path {
    rate_bps: u64,
    queue_packets: usize,
    delay: Duration,
}

struct Run {
    /// Payload bytes the sender put on the wire, retransmissions included.
    sent_bytes: u64,
    /// Bytes the receiver's application got.
    delivered: u64,
    /// How the sender's connection ended, if it did.
    closed: Option<CloseReason>,
    /// The sender's `Stats::segment_end_failures`.
    end_failures: u64,
}

fn run(strategy: Strategy, attack: Attack, path: &Path, duration: Duration) -> Run {
    run_with(strategy, attack, path, duration, AckNonceMode::Offer)
}

/// [`run`] with the sender's ACK-nonce mode (the receiver offers it).
fn run_with(
    strategy: Strategy,
    attack: Attack,
    path: &Path,
    duration: Duration,
    nonce: AckNonceMode,
) -> Run {
    let base = Config {
        checksums: false,
        min_rto: Duration::from_millis(200),
        send_buffer: 64 << 20,
        recv_buffer: 64 << 20,
        ..Config::default()
    };
    let config = strategy.apply(
        &base,
        Duration::from_millis(100),
        Duration::from_millis(100),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut now = Instant::ZERO;
    let client_config = Config {
        ack_nonce: nonce,
        ..config.clone()
    };
    let mut client = Connection::connect(client_config, now, 40_000, 80, &mut rng).unwrap();
    // The highest sequence number the sender has put on the wire.
    let mut sent_high: Option<SeqNum> = None;
    let mut server: Option<Connection> = None;
    // (arrival, serial, to_server, bytes)
    let mut wire: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut serial = 0u64;
    // Departure instants of the packets in the bottleneck queue.
    let mut queue: VecDeque<Instant> = VecDeque::new();
    let mut last_ack: Option<u32> = None;
    // The largest payload that reached the receiver, and the highest
    // sequence number.
    let mut largest = 0u32;
    let mut highest: Option<SeqNum> = None;
    let mut closed = None;
    let mut delivered = 0u64;
    let chunk = vec![0x5a; 1 << 16];
    let mut buf = vec![0u8; 4096];
    let end = Instant::ZERO + duration;
    while now < end {
        // The application keeps the sender busy.
        while client.is_established() && client.send_capacity() > chunk.len() {
            client.write(&chunk);
        }
        while let Some(n) = client.poll_transmit(now, &mut buf) {
            if let Ok(seg) = SegmentRepr::parse(&buf[..n], Checksum::Ignore) {
                let end = seg.seq.add(seg.payload.len() as u32);
                if !seg.payload.is_empty() && sent_high.is_none_or(|h| end.diff(h) > 0) {
                    sent_high = Some(end);
                }
            }
            while queue.front().is_some_and(|&t| t <= now) {
                queue.pop_front();
            }
            if queue.len() >= path.queue_packets {
                continue; // drop-tail
            }
            let start = queue.back().copied().unwrap_or(now).max(now);
            let tx = Duration::from_nanos(n as u64 * 8 * 1_000_000_000 / path.rate_bps);
            queue.push_back(start + tx);
            serial += 1;
            wire.push(Reverse((
                start + tx + path.delay,
                serial,
                true,
                buf[..n].to_vec(),
            )));
        }
        if let Some(s) = server.as_mut() {
            while let Some(n) = s.poll_transmit(now, &mut buf) {
                let seen = highest.map(|h| (h, largest));
                for seg in rewrite(attack, &buf[..n], &mut last_ack, sent_high, seen) {
                    serial += 1;
                    wire.push(Reverse((now + path.delay, serial, false, seg)));
                }
            }
            let mut sink = [0u8; 1 << 16];
            loop {
                let got = s.read(&mut sink);
                if got == 0 {
                    break;
                }
                delivered += got as u64;
            }
        }
        let next = [
            wire.peek().map(|Reverse(p)| p.0),
            client.poll_timeout(),
            server.as_ref().and_then(|s| s.poll_timeout()),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else { break };
        now = now.max(next);
        while wire.peek().is_some_and(|Reverse(p)| p.0 <= now) {
            let Reverse((_, _, to_server, seg)) = wire.pop().unwrap();
            if to_server {
                if let Ok(repr) = SegmentRepr::parse(&seg, Checksum::Ignore) {
                    let end = repr.seq.add(repr.payload.len() as u32);
                    if !repr.payload.is_empty() && highest.is_none_or(|h| end.diff(h) > 0) {
                        highest = Some(end);
                    }
                    largest = largest.max(repr.payload.len() as u32);
                }
                match server.as_mut() {
                    Some(s) => {
                        let _ = s.handle_segment(now, &seg);
                    }
                    None => {
                        let mut server_config = config.clone();
                        if let Attack::DupSpoof { decline: true, .. } | Attack::Guessing { .. } =
                            attack
                        {
                            server_config.ack_nonce = AckNonceMode::Off;
                        }
                        server = Connection::accept(server_config, now, &seg, &mut rng).ok();
                    }
                }
            } else {
                let _ = client.handle_segment(now, &seg);
            }
        }
        if client.poll_timeout().is_some_and(|t| t <= now) {
            client.handle_timeout(now);
        }
        while let Some(event) = client.poll_event() {
            if let Event::Closed(reason) = event {
                closed = Some(reason);
            }
        }
        if let Some(s) = server.as_mut() {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                s.handle_timeout(now);
            }
        }
    }
    Run {
        sent_bytes: client.sender().counters().data_bytes,
        delivered,
        closed,
        end_failures: client.stats().segment_end_failures,
    }
}

/// The receiver's segment as the attacker sends it.
fn rewrite(
    attack: Attack,
    seg: &[u8],
    last_ack: &mut Option<u32>,
    sent_high: Option<SeqNum>,
    seen: Option<(SeqNum, u32)>,
) -> Vec<Vec<u8>> {
    let Ok(repr) = SegmentRepr::parse(seg, Checksum::Ignore) else {
        return vec![seg.to_vec()];
    };
    if let Attack::Optimistic { strip: true } = attack {
        if repr.flags.contains(Flags::SYN) {
            let mut r = repr;
            r.options.ack_nonce = None;
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut out, Checksum::Ignore).unwrap();
            return vec![out];
        }
    }
    let pure_ack = repr.payload.is_empty()
        && repr.flags.contains(Flags::ACK)
        && ![Flags::SYN, Flags::FIN, Flags::RST]
            .iter()
            .any(|&f| repr.flags.contains(f));
    let ack = repr.ack.0;
    let previous = last_ack.replace(ack);
    if !pure_ack {
        return vec![seg.to_vec()];
    }
    let emit = |ack: u32| {
        let mut r = repr;
        r.ack.0 = ack;
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut out, Checksum::Ignore).unwrap();
        out
    };
    match (attack, previous) {
        (Attack::Division { slices }, Some(prev)) if ack.wrapping_sub(prev) as i32 > 0 => {
            let advance = ack.wrapping_sub(prev);
            (1..=slices)
                .map(|i| {
                    emit(prev.wrapping_add(
                        (u64::from(advance) * u64::from(i) / u64::from(slices)) as u32,
                    ))
                })
                .collect()
        }
        (Attack::DupSpoof { copies, .. }, Some(prev)) if prev == ack => {
            (0..copies).map(|_| seg.to_vec()).collect()
        }
        (Attack::Guessing { ahead }, _) if ahead > 0 => match seen {
            // The true ACK goes too, so that a lie past what was sent (which
            // the sender drops) does not stall the transfer.
            Some((high, largest)) => vec![
                seg.to_vec(),
                emit(high.0.wrapping_add(ahead.wrapping_mul(largest))),
            ],
            None => vec![seg.to_vec()],
        },
        (Attack::SackAll, _) => match (sent_high, seen) {
            (Some(high), Some((_, largest))) if high.diff(repr.ack) > largest as i32 => {
                let mut r = repr;
                r.options.sack = Default::default();
                r.options.sack.push(repr.ack.add(largest), high);
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut out, Checksum::Ignore).unwrap();
                vec![out]
            }
            _ => vec![seg.to_vec()],
        },
        (Attack::Optimistic { .. }, _) => match sent_high {
            Some(high) if high.diff(repr.ack) > 0 => vec![emit(high.0)],
            _ => vec![seg.to_vec()],
        },
        _ => vec![seg.to_vec()],
    }
}

fn path() -> Path {
    Path {
        rate_bps: 10_000_000,
        queue_packets: 30,
        delay: Duration::from_millis(20),
    }
}

fn gain(strategy: &str, attack: Attack) -> f64 {
    let strategy: Strategy = strategy.parse().unwrap();
    let d = Duration::from_secs(6);
    let honest = run(strategy, Attack::Honest, &path(), d);
    let attacked = run(strategy, attack, &path(), d);
    assert!(
        honest.delivered > 1_000_000,
        "the honest transfer must run (seed {SEED:#x}): {} bytes",
        honest.delivered
    );
    let g = attacked.sent_bytes as f64 / honest.sent_bytes as f64;
    eprintln!(
        "{strategy} {attack:?}: sent {} vs {} bytes (gain {g:.3}), delivered {} vs {}",
        attacked.sent_bytes, honest.sent_bytes, attacked.delivered, honest.delivered
    );
    g
}

/// On this path the bottleneck, not cwnd, limits a 6 s transfer, so even
/// before ACK-counting avoidance ignored sub-segment ACKs the division
/// gained only 1.02-1.04x here (on 1 Gbit/s with a 1000-packet queue and
/// 14 slices, `smart` gained 1.23x then and 1.04x now); the rule itself is
/// pinned by `ack_division_earns_no_more_than_one_ack_per_segment` in
/// `sender::congestion::reno`.
#[test]
fn ack_division_gains_nothing_against_ack_counting_strategies() {
    for strategy in ["da", "smart", "acc"] {
        let g = gain(strategy, Attack::Division { slices: 10 });
        assert!(
            g <= 1.05,
            "{strategy}: ACK division gain {g:.3} (seed {SEED:#x})"
        );
    }
}

#[test]
fn ack_division_gains_nothing_against_byte_counting_strategies() {
    for strategy in ["dal2", "4w-adaptive"] {
        let g = gain(strategy, Attack::Division { slices: 10 });
        assert!(
            g <= 1.05,
            "{strategy}: ACK division gain {g:.3} (seed {SEED:#x})"
        );
    }
}

/// Without SACK a sender cannot tell a forged duplicate ACK from an
/// honest one, and each one it counts lets a segment out: without the
/// nonce, twenty copies of every duplicate make the sender push several
/// times more into the path (the forger gains no goodput: its flood
/// overruns the queue and stalls its own recovery). With the nonce each
/// duplicate must echo the nonce of the out-of-order segment it reports,
/// and the sender counts each segment once, so the copies count nothing.
#[test]
fn duplicate_ack_spoofing_without_sack_gains_nothing_against_the_ack_nonce() {
    for strategy in ["da+nosack", "ae+nosack"] {
        let s: Strategy = strategy.parse().unwrap();
        let d = Duration::from_secs(6);
        let spoof = Attack::DupSpoof {
            copies: 20,
            decline: false,
        };
        let honest = run(s, Attack::Honest, &path(), d);
        let attacked = run(s, spoof, &path(), d);
        let honest_off = run_with(s, Attack::Honest, &path(), d, AckNonceMode::Off);
        let attacked_off = run_with(s, spoof, &path(), d, AckNonceMode::Off);
        let sent = |a: &Run, h: &Run| a.sent_bytes as f64 / h.sent_bytes as f64;
        let goodput = |a: &Run, h: &Run| a.delivered as f64 / h.delivered as f64;
        eprintln!(
            "{strategy} duplicate-ACK spoofing: sent {:.3}x, goodput {:.3}x with the nonce; \
             sent {:.3}x, goodput {:.3}x without",
            sent(&attacked, &honest),
            goodput(&attacked, &honest),
            sent(&attacked_off, &honest_off),
            goodput(&attacked_off, &honest_off)
        );
        assert!(honest.delivered > 1_000_000, "seed {SEED:#x}");
        assert!(
            sent(&attacked, &honest) <= 1.05,
            "{strategy}: amplification with the nonce (seed {SEED:#x})"
        );
        assert!(
            goodput(&attacked, &honest) <= 1.05,
            "{strategy}: goodput gain (seed {SEED:#x})"
        );
        // The attack is real without the nonce.
        assert!(
            sent(&attacked_off, &honest_off) > 2.0,
            "{strategy}: no amplification to defend against (seed {SEED:#x})"
        );
        assert!(goodput(&attacked_off, &honest_off) <= 1.05);
    }
}

/// A receiver that declines the nonce this sender offers, and SACK, gets
/// no proof of its duplicates; the sender then holds them to what an
/// honest receiver could send: only for data sent at least a minimum RTT
/// ago, and no faster than 1.25 times the rate the path delivered before
/// the recovery. Twenty copies of every duplicate then keep the sender at
/// about the path's rate through a recovery in which the honest NewReno
/// (one hole per RTT, nothing new in flight) sends almost nothing, so
/// the ratio to the honest run is not the measure: what the attacker can
/// pour into the path is. Unguarded the same attack sends over 20 times
/// the honest bytes, several times the path's capacity.
#[test]
fn duplicate_ack_spoofing_by_a_peer_that_declines_the_nonce_is_held_to_the_path_rate() {
    for strategy in ["da+nosack", "ae+nosack"] {
        let s: Strategy = strategy.parse().unwrap();
        let d = Duration::from_secs(6);
        let declining = |copies| Attack::DupSpoof {
            copies,
            decline: true,
        };
        let honest = run(s, declining(1), &path(), d);
        let attacked = run(s, declining(20), &path(), d);
        let capacity_bytes = path().rate_bps as f64 / 8.0 * d.as_secs_f64();
        let of_capacity = attacked.sent_bytes as f64 / capacity_bytes;
        let sent = attacked.sent_bytes as f64 / honest.sent_bytes as f64;
        let goodput = attacked.delivered as f64 / honest.delivered as f64;
        eprintln!(
            "{strategy} duplicate-ACK spoofing, nonce declined: sent {sent:.3}x the honest \
             run, {of_capacity:.3}x the path's capacity; goodput {goodput:.3}x"
        );
        assert!(honest.delivered > 1_000_000, "seed {SEED:#x}");
        assert!(goodput <= 1.05, "{strategy}: goodput gain (seed {SEED:#x})");
        assert!(
            of_capacity <= 1.3,
            "{strategy}: {of_capacity:.3}x the path's capacity sent (seed {SEED:#x})"
        );
    }
}

/// An optimistic receiver acknowledges everything in flight as soon as
/// it leaves: without the nonce the sender believes it and sends as fast
/// as the lies come (measured with this harness below); with it, each
/// such ACK lacks the echo of a segment the receiver does not hold and
/// is ignored, and a receiver that strips the nonce offer is refused by a
/// sender that requires it.
#[test]
fn optimistic_acks_gain_nothing_against_the_ack_nonce() {
    let d = Duration::from_secs(6);
    for strategy in ["4w-adaptive", "da"] {
        let s: Strategy = strategy.parse().unwrap();
        let honest = run(s, Attack::Honest, &path(), d);
        assert!(honest.delivered > 1_000_000, "seed {SEED:#x}");
        let gain = |r: &Run| r.sent_bytes as f64 / honest.sent_bytes as f64;
        let optimistic = Attack::Optimistic { strip: false };
        let stripped = Attack::Optimistic { strip: true };
        let unprotected = run_with(s, optimistic, &path(), d, AckNonceMode::Off);
        let offered = run(s, optimistic, &path(), d);
        let stripped_offered = run(s, stripped, &path(), d);
        let stripped_required = run_with(s, stripped, &path(), d, AckNonceMode::Require);
        eprintln!(
            "{strategy} optimistic ACKs: sent {:.3}x without the nonce, {:.3}x with it, \
             {:.3}x when the offer is stripped, {:.3}x when the sender requires it",
            gain(&unprotected),
            gain(&offered),
            gain(&stripped_offered),
            gain(&stripped_required)
        );
        // The attack is real: without the nonce the sender is fooled.
        assert!(gain(&unprotected) > 2.0, "{strategy} (seed {SEED:#x})");
        assert!(gain(&offered) <= 1.05, "{strategy} (seed {SEED:#x})");
        // Offered, not required: stripping the offer gets around it.
        assert!(gain(&stripped_offered) > 2.0, "{strategy} (seed {SEED:#x})");
        assert!(
            gain(&stripped_required) <= 1.05,
            "{strategy} (seed {SEED:#x})"
        );
        assert_eq!(stripped_required.delivered, 0);
    }
}

/// A receiver that declines the nonce proves nothing, but it still has to
/// name where the segments it pretends to hold end, and toward it the
/// sender cuts about one segment in 32 short by a secret amount: a lie
/// that reaches past one of those names a point where nothing ends, is
/// refused, and a few such lies reset the connection. Unguarded (the
/// sender with the nonce off), the same lies make it send several times
/// the honest bytes.
#[test]
fn optimistic_acks_from_a_peer_that_declines_the_nonce_are_caught_at_the_segment_ends() {
    let d = Duration::from_secs(6);
    for strategy in ["4w-adaptive", "da"] {
        let s: Strategy = strategy.parse().unwrap();
        let honest = run(s, Attack::Guessing { ahead: 0 }, &path(), d);
        assert!(honest.delivered > 1_000_000, "seed {SEED:#x}");
        assert_eq!(
            (honest.end_failures, honest.closed),
            (0, None),
            "{strategy}: an honest peer that declines the nonce (seed {SEED:#x})"
        );
        let honest_off = run_with(
            s,
            Attack::Guessing { ahead: 0 },
            &path(),
            d,
            AckNonceMode::Off,
        );
        for ahead in [1, 4, 32] {
            let lying = Attack::Guessing { ahead };
            let unguarded = run_with(s, lying, &path(), d, AckNonceMode::Off);
            let guarded = run(s, lying, &path(), d);
            let gain = |r: &Run, h: &Run| r.sent_bytes as f64 / h.sent_bytes as f64;
            eprintln!(
                "{strategy} optimistic ACKs {ahead} segments ahead, nonce declined: sent {:.3}x \
                 unguarded, {:.3}x guarded ({} refused, closed {:?} after {} bytes)",
                gain(&unguarded, &honest_off),
                gain(&guarded, &honest),
                guarded.end_failures,
                guarded.closed,
                guarded.sent_bytes
            );
            // The attack is real without the check.
            assert!(
                gain(&unguarded, &honest_off) > 2.0,
                "{strategy} {ahead} ahead (seed {SEED:#x})"
            );
            assert!(
                gain(&guarded, &honest) <= 1.05,
                "{strategy} {ahead} ahead (seed {SEED:#x})"
            );
            assert_eq!(
                guarded.closed,
                Some(CloseReason::PeerMisbehaved),
                "{strategy} {ahead} ahead (seed {SEED:#x})"
            );
        }
    }
}

/// The nonce proves the cumulative ACK only. A receiver that keeps that
/// honest but claims in a SACK block everything in flight above one
/// segment gains nothing: the sender retransmits less and enters recovery
/// more, but only SND.UNA's advance opens the window, and the hidden
/// losses stall the liar.
#[test]
fn optimistic_sack_blocks_gain_nothing() {
    let d = Duration::from_secs(6);
    for strategy in ["4w-adaptive", "da", "ae"] {
        let s: Strategy = strategy.parse().unwrap();
        let honest = run(s, Attack::Honest, &path(), d);
        let lying = run(s, Attack::SackAll, &path(), d);
        let sent = lying.sent_bytes as f64 / honest.sent_bytes as f64;
        eprintln!(
            "{strategy} SACK blocks over everything in flight: sent {sent:.3}x, delivered {:.3}x",
            lying.delivered as f64 / honest.delivered as f64,
        );
        assert!(honest.delivered > 1_000_000, "seed {SEED:#x}");
        assert!(sent <= 1.05, "{strategy}: {sent:.3}x (seed {SEED:#x})");
    }
}
