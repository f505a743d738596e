use super::*;
use crate::testing::{transfer, Pipe, PipeConfig, Side};
use crate::wire::{Options, SegmentRepr};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(7)
}

fn fast_config() -> Config {
    Config {
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(500),
        time_wait: Duration::from_millis(500),
        ..Config::default()
    }
}

fn established_pipe(client: Config, server: Config) -> Pipe {
    let mut pipe = Pipe::new(PipeConfig::default(), client, server).unwrap();
    let ok = pipe
        .run_until(Instant::from_millis(5_000), |p| {
            p.client().is_established() && p.server().is_some_and(|s| s.is_established())
        })
        .unwrap();
    assert!(ok, "handshake did not complete");
    pipe
}

#[test]
fn negotiation_when_both_support_everything() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let c = pipe.client().negotiated();
    let s = pipe.server().unwrap().negotiated();
    for n in [c, s] {
        assert!(n.sack);
        assert!(n.timestamps);
        assert!(n.window_scaling);
        assert!(n.ack_requests);
        assert!(n.peer_ack_requests);
        assert_eq!(n.peer_mss, 1460);
    }
    // 1 MiB needs shift 5 to fit in 16 bits.
    assert_eq!(c.recv_window_shift, 5);
    assert_eq!(c.send_window_shift, s.recv_window_shift);
    assert_eq!(pipe.client().poll_event(), Some(Event::Connected));
}

#[test]
fn ack_request_negotiation_needs_both_ends() {
    let mut without = fast_config();
    without.ack_requests = false;
    // Only the client supports it.
    let mut pipe = established_pipe(fast_config(), without.clone());
    assert!(!pipe.client().negotiated().ack_requests);
    assert!(!pipe.client().negotiated().peer_ack_requests);
    let s = pipe.server().unwrap().negotiated();
    assert!(s.peer_ack_requests, "server saw the client's offer");
    assert!(!s.ack_requests, "but does not support it itself");
    // Only the server supports it: it must not advertise on the SYN-ACK.
    let mut pipe = established_pipe(without, fast_config());
    assert!(!pipe.client().negotiated().peer_ack_requests);
    assert!(!pipe.server().unwrap().negotiated().ack_requests);
    assert!(!pipe.server().unwrap().negotiated().peer_ack_requests);
}

#[test]
fn options_are_only_used_when_both_offer_them() {
    let mut plain = fast_config();
    plain.sack = false;
    plain.timestamps = false;
    plain.window_scaling = false;
    plain.recv_buffer = 65_535;
    plain.mss = 1000;
    let mut pipe = established_pipe(fast_config(), plain);
    let c = pipe.client().negotiated();
    assert!(!c.sack && !c.timestamps && !c.window_scaling);
    assert_eq!(c.peer_mss, 1000);
    assert_eq!(c.send_window_shift, 0);
    assert_eq!(c.recv_window_shift, 0);
}

#[test]
fn syn_to_nowhere_times_out_after_retries() {
    let mut config = fast_config();
    config.syn_retries = 2;
    let mut conn = Connection::connect(config, Instant::ZERO, 1, 2, &mut rng()).unwrap();
    let mut buf = [0u8; 2000];
    let mut syns = 0;
    let mut now = Instant::ZERO;
    for _ in 0..20 {
        while conn.poll_transmit(now, &mut buf).is_some() {
            syns += 1;
        }
        match conn.poll_timeout() {
            Some(t) => {
                now = t;
                conn.handle_timeout(now);
            }
            None => break,
        }
    }
    assert_eq!(syns, 3);
    assert_eq!(conn.state(), State::Closed);
    assert_eq!(
        conn.poll_event(),
        Some(Event::Closed(CloseReason::TimedOut))
    );
    // 0.5 + 1 + 2 seconds of backoff.
    assert_eq!(now, Instant::from_millis(3_500));
}

fn segment(src: u16, dst: u16, seq: SeqNum, ack: SeqNum, flags: Flags) -> Vec<u8> {
    let repr = SegmentRepr {
        src_port: src,
        dst_port: dst,
        seq,
        ack,
        flags,
        window: 1000,
        options: Options::default(),
        payload: &[],
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf, Checksum::UNSPECIFIED).unwrap();
    buf
}

#[test]
fn reset_answering_syn_is_connection_refused() {
    let mut conn = Connection::connect(fast_config(), Instant::ZERO, 1, 2, &mut rng()).unwrap();
    let mut buf = [0u8; 2000];
    let n = conn.poll_transmit(Instant::ZERO, &mut buf).unwrap();
    let syn = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
    assert!(syn.flags.contains(Flags::SYN));
    assert_eq!(
        syn.options.ack_request,
        Some(crate::wire::AckRequest::Supported)
    );
    // A reset that does not acknowledge our SYN is ignored.
    let bogus = segment(2, 1, SeqNum(0), syn.seq.add(7), Flags::RST | Flags::ACK);
    conn.handle_segment(Instant::ZERO, &bogus).unwrap();
    assert_eq!(conn.state(), State::SynSent);
    let rst = segment(2, 1, SeqNum(0), syn.seq.add(1), Flags::RST | Flags::ACK);
    conn.handle_segment(Instant::ZERO, &rst).unwrap();
    assert_eq!(conn.poll_event(), Some(Event::Closed(CloseReason::Refused)));
}

#[test]
fn blind_reset_gets_a_challenge_ack_and_exact_reset_closes() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let client = pipe.client();
    let ack_before = client.stats().acks_sent;
    let rcv_nxt = client.rcv_ack_seq();
    // In the window but not at RCV.NXT: challenge ACK (RFC 5961 3.2).
    let rst = segment(80, 40_000, rcv_nxt.add(100), SeqNum(0), Flags::RST);
    client.handle_segment(now, &rst).unwrap();
    assert_eq!(client.state(), State::Established);
    let mut buf = [0u8; 2000];
    let n = client.poll_transmit(now, &mut buf).expect("challenge ACK");
    let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
    assert!(ack.flags.contains(Flags::ACK) && ack.payload.is_empty());
    assert_eq!(client.stats().acks_sent, ack_before + 1);
    // Exactly at RCV.NXT: the connection is reset.
    let rst = segment(80, 40_000, rcv_nxt, SeqNum(0), Flags::RST);
    client.handle_segment(now, &rst).unwrap();
    assert_eq!(client.state(), State::Closed);
    assert!(
        core::iter::from_fn(|| client.poll_event()).any(|e| e == Event::Closed(CloseReason::Reset))
    );
}

/// A data segment whose ACK field the peer could not have sent.
fn forged_data(client: &Connection, ack: SeqNum) -> Vec<u8> {
    data_at(client.rcv_ack_seq(), ack, b"forged")
}

/// A data segment from the server's port to the client's.
fn data_at(seq: SeqNum, ack: SeqNum, payload: &[u8]) -> Vec<u8> {
    let repr = SegmentRepr {
        src_port: 80,
        dst_port: 40_000,
        seq,
        ack,
        flags: Flags::ACK | Flags::PSH,
        window: 1000,
        options: Options::default(),
        payload,
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf, Checksum::UNSPECIFIED).unwrap();
    buf
}

#[test]
fn data_with_an_ack_far_behind_snd_una_is_dropped_with_a_challenge_ack() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let client = pipe.client();
    let snd_una = client.snd_seq(client.sender().snd_una());
    // 2^30 bytes below SND.UNA is beyond any window the peer offered
    // (RFC 5961 section 5): the payload must not be delivered.
    let forged = forged_data(client, SeqNum(snd_una.0.wrapping_sub(1 << 30)));
    client.handle_segment(now, &forged).unwrap();
    assert_eq!(client.readable(), 0);
    let mut buf = [0u8; 2000];
    let n = client.poll_transmit(now, &mut buf).expect("challenge ACK");
    let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
    assert!(ack.flags.contains(Flags::ACK) && ack.payload.is_empty());
    assert_eq!(ack.ack, client.rcv_ack_seq());
    // The same segment with a plausible ACK is accepted.
    let genuine = forged_data(client, snd_una);
    client.handle_segment(now, &genuine).unwrap();
    assert_eq!(client.readable(), 6);
}

#[test]
fn a_flood_of_forged_resets_gets_at_most_the_limit_of_challenge_acks() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let client = pipe.client();
    let limit = client.config().challenge_ack_limit;
    assert!(limit > 0);
    let rcv_nxt = client.rcv_ack_seq();
    let mut buf = [0u8; 2000];
    let mut answered = 0;
    // 10 000 resets inside the window, none at RCV.NXT (RFC 5961 3.2).
    for k in 0..10_000u32 {
        let rst = segment(80, 40_000, rcv_nxt.add(1 + k % 100), SeqNum(0), Flags::RST);
        client.handle_segment(now, &rst).unwrap();
        while client.poll_transmit(now, &mut buf).is_some() {
            answered += 1;
        }
    }
    assert_eq!(client.state(), State::Established);
    assert_eq!(
        answered,
        u64::from(limit),
        "section 7: at most the limit per second"
    );
    let s = client.stats();
    assert_eq!(s.challenge_acks, u64::from(limit));
    assert_eq!(s.challenge_acks_suppressed, 10_000 - u64::from(limit));
    // A second later the budget is back.
    let later = now + Duration::from_secs(1);
    let rst = segment(80, 40_000, rcv_nxt.add(7), SeqNum(0), Flags::RST);
    client.handle_segment(later, &rst).unwrap();
    assert!(client.poll_transmit(later, &mut buf).is_some());
}

#[test]
fn a_flood_of_bare_acks_outside_the_window_is_answered_twice_a_second_at_most() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let client = pipe.client();
    let rcv_nxt = client.rcv_ack_seq();
    let una = client.snd_seq(client.sender().snd_una());
    let mut buf = [0u8; 2000];
    let mut answered = 0;
    // Below RCV.NXT (as a keep-alive) and far above the window.
    for k in 0..10_000u32 {
        let seq = if k % 2 == 0 {
            SeqNum(rcv_nxt.0.wrapping_sub(1 + k))
        } else {
            rcv_nxt.add(1 << 30).add(k)
        };
        client
            .handle_segment(now, &segment(80, 40_000, seq, una, Flags::ACK))
            .unwrap();
        while client.poll_transmit(now, &mut buf).is_some() {
            answered += 1;
        }
    }
    assert_eq!(answered, 1, "one answer per 500 ms");
    assert_eq!(client.stats().invalid_replies_suppressed, 9_999);
    assert_eq!(client.state(), State::Established);
    // A keep-alive half a second later is answered.
    let later = now + Duration::from_millis(500);
    let probe = segment(
        80,
        40_000,
        SeqNum(rcv_nxt.0.wrapping_sub(1)),
        una,
        Flags::ACK,
    );
    client.handle_segment(later, &probe).unwrap();
    assert!(client.poll_transmit(later, &mut buf).is_some());
}

#[test]
fn data_outside_the_window_is_answered_one_for_one_only_where_an_honest_peer_could_send_it() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    pipe.server().unwrap().write(&[7u8; 10_000]);
    let soon = pipe.now() + Duration::from_secs(2);
    pipe.run_until(soon, |p| p.client().readable() == 10_000)
        .unwrap();
    let now = pipe.now();
    let client = pipe.client();
    let mut sink = [0u8; 10_000];
    assert_eq!(client.read(&mut sink), 10_000);
    let rcv_nxt = client.rcv_ack_seq();
    let una = client.snd_seq(client.sender().snd_una());
    let window = Config::default().recv_buffer as u32;
    let mut buf = [0u8; 2000];
    let mut answers = |client: &mut Connection, seg: &[u8]| {
        client.handle_segment(now, seg).unwrap();
        let mut n = 0;
        while client.poll_transmit(now, &mut buf).is_some() {
            n += 1;
        }
        n
    };
    // Blind guesses, below anything the peer could still resend and past
    // the window's right edge: two answers a second at most.
    let mut blind = 0;
    for k in 0..10_000u32 {
        let seq = if k % 2 == 0 {
            SeqNum(rcv_nxt.0.wrapping_sub(window + 100 + k))
        } else {
            rcv_nxt.add(window + 1 + k)
        };
        blind += answers(client, &data_at(seq, una, b"guess"));
    }
    assert_eq!(blind, 1, "one answer per 500 ms");
    assert_eq!(client.stats().invalid_replies_suppressed, 9_999);
    // Retransmissions of bytes already held, and probes at the right
    // edge, are answered one for one at once (the sender needs each).
    let mut honest = 0;
    for k in 0..100u32 {
        let old = data_at(SeqNum(rcv_nxt.0.wrapping_sub(1000 + k)), una, &[7u8; 500]);
        honest += answers(client, &old);
        let probe = data_at(rcv_nxt.add(window), una, &[1]);
        honest += answers(client, &probe);
    }
    assert_eq!(honest, 200);
    assert_eq!(client.stats().invalid_replies_suppressed, 9_999);
    assert_eq!(client.readable(), 0, "nothing outside the window delivered");
    assert_eq!(client.state(), State::Established);
}

#[test]
fn a_syn_on_an_open_connection_gets_a_challenge_ack_and_changes_nothing() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let client = pipe.client();
    let rcv_nxt = client.rcv_ack_seq();
    // RFC 5961 section 4: whatever its sequence number.
    for seq in [
        rcv_nxt,
        rcv_nxt.add(100),
        SeqNum(rcv_nxt.0.wrapping_add(1 << 31)),
    ] {
        let syn = segment(80, 40_000, seq, SeqNum(0), Flags::SYN);
        client.handle_segment(now, &syn).unwrap();
        assert_eq!(client.state(), State::Established);
        let mut buf = [0u8; 2000];
        let n = client.poll_transmit(now, &mut buf).expect("an ACK");
        let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
        assert!(ack.flags.contains(Flags::ACK) && !ack.flags.contains(Flags::SYN));
        assert_eq!(ack.ack, rcv_nxt);
    }
}

#[test]
fn malformed_and_foreign_segments_are_counted_not_fatal() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let client = pipe.client();
    assert!(matches!(
        client.handle_segment(now, &[1, 2, 3]),
        Err(SegmentError::Malformed(_))
    ));
    let foreign = segment(81, 40_000, SeqNum(0), SeqNum(0), Flags::ACK);
    assert_eq!(
        client.handle_segment(now, &foreign),
        Err(SegmentError::WrongPorts)
    );
    let s = client.stats();
    assert_eq!(s.malformed_segments, 1);
    assert_eq!(s.discarded_segments, 1);
    assert_eq!(client.state(), State::Established);
}

#[test]
fn accept_rejects_non_syn() {
    let ack = segment(1, 2, SeqNum(5), SeqNum(5), Flags::ACK);
    assert!(matches!(
        Connection::accept(fast_config(), Instant::ZERO, &ack, &mut rng()),
        Err(AcceptError::Segment(SegmentError::NotSyn))
    ));
    assert!(matches!(
        Connection::accept(fast_config(), Instant::ZERO, &[0u8; 3], &mut rng()),
        Err(AcceptError::Segment(SegmentError::Malformed(_)))
    ));
}

#[test]
fn invalid_config_is_a_typed_error() {
    let mut config = fast_config();
    config.ack_policy = AckPolicyConfig::Delayed {
        max_delay: Duration::from_secs(1),
        segments: 2,
    };
    assert!(matches!(
        Connection::connect(config, Instant::ZERO, 1, 2, &mut rng()),
        Err(ConfigError::Invalid {
            field: "ack_policy.max_delay",
            ..
        })
    ));
}

#[test]
fn idle_peer_times_out() {
    let mut config = fast_config();
    config.idle_timeout = Some(Duration::from_secs(3));
    let mut pipe = established_pipe(config.clone(), config);
    // Silence the server by dropping everything from now on.
    let start = pipe.now();
    let client = pipe.client();
    let mut now = start;
    while let Some(t) = client.poll_timeout() {
        now = t;
        client.handle_timeout(now);
        let mut buf = [0u8; 2000];
        while client.poll_transmit(now, &mut buf).is_some() {}
        if client.is_closed() {
            break;
        }
    }
    assert!(client.is_closed());
    assert!(now - start <= Duration::from_secs(3) + Duration::from_millis(1));
    assert!(core::iter::from_fn(|| client.poll_event())
        .any(|e| e == Event::Closed(CloseReason::TimedOut)));
}

#[test]
fn both_directions_deliver_and_close_cleanly() {
    let a: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let b: Vec<u8> = (0..123_457u32).map(|i| (i * 13 + 1) as u8).collect();
    for policy in [AckPolicyConfig::Every, AckPolicyConfig::DELAYED] {
        let mut config = fast_config();
        config.ack_policy = policy;
        let out = transfer(
            PipeConfig::default(),
            config.clone(),
            config,
            &a,
            &b,
            Duration::from_secs(600),
        )
        .unwrap();
        assert_eq!(out.server_received, a, "{policy:?}");
        assert_eq!(out.client_received, b, "{policy:?}");
        assert!(out.closed_cleanly, "{policy:?}");
        assert_eq!(out.client_stats.retransmissions, 0);
    }
}

#[test]
fn delayed_ack_sends_about_half_the_acks_of_every() {
    let data = vec![0x5au8; 1_000_000];
    let mut acks = Vec::new();
    for policy in [AckPolicyConfig::Every, AckPolicyConfig::DELAYED] {
        let mut config = fast_config();
        config.ack_policy = policy;
        let out = transfer(
            PipeConfig::default(),
            config.clone(),
            config,
            &data,
            &[],
            Duration::from_secs(600),
        )
        .unwrap();
        assert_eq!(out.server_received.len(), data.len());
        acks.push(out.server_stats.pure_acks_sent as f64);
    }
    let ratio = acks[1] / acks[0];
    assert!(
        (0.4..0.65).contains(&ratio),
        "delayed/every ACK ratio {ratio}, acks {acks:?}"
    );
}

/// A receiver whose own MSS only says how much it could take (on sockets
/// the listening end offers the most a datagram holds and the client's
/// probe of the path sets the size) judges the peer's segments by the
/// size both ends agreed: a smartacking receiver's estimate of the
/// sender's window and its ACKs are the same as with its MSS at that size.
#[test]
fn a_receiver_counts_full_segments_by_the_agreed_size_not_its_own() {
    let small = smart_receiver_after_a_transfer(1400);
    let large = smart_receiver_after_a_transfer(65_000);
    assert!(small.0.is_some_and(|w| w > 0), "{small:?}");
    assert_eq!(
        small, large,
        "(cwnd estimate, ACKs) with receiver MSS 1400 and 65000"
    );
}

/// The server's estimate of the client's window and its ACK count after
/// 300 kB from a client of MSS 1400 to a smartacking server of `mss`.
fn smart_receiver_after_a_transfer(mss: u16) -> (Option<u64>, u64) {
    let client = Config {
        mss: 1400,
        ..fast_config()
    };
    let server = Config {
        mss,
        ack_policy: AckPolicyConfig::SMART,
        ..fast_config()
    };
    let mut pipe = established_pipe(client, server);
    let data = vec![0x3cu8; 300_000];
    assert_eq!(pipe.client().write(&data), data.len());
    let mut got = 0;
    let mut buf = vec![0u8; 65_536];
    pipe.run_until(Instant::from_millis(5_000), |p| {
        got += p.server().map_or(0, |s| s.read(&mut buf));
        got == data.len()
    })
    .unwrap();
    assert_eq!(got, data.len());
    let s = pipe.server().unwrap();
    assert_eq!(s.negotiated().peer_mss, 1400);
    (s.receiver_cwnd_estimate(), s.stats().pure_acks_sent)
}

/// RFC 8899 section 4.3: the path stops carrying the agreed segment size
/// mid-transfer. With `black_hole_mss` the sender falls back after three
/// timeouts in a row and the data arrives whole; without, every resend
/// of a full segment is lost and nothing more arrives.
#[test]
fn a_path_that_stops_carrying_full_segments_is_left_for_smaller_ones() {
    let data: Vec<u8> = (0..400_000u32).map(|i| (i % 253) as u8).collect();
    for fallback in [Some(1200), None] {
        let config = Config {
            mss: 4000,
            black_hole_mss: fallback,
            ..fast_config()
        };
        let mut pipe = established_pipe(config.clone(), config);
        assert_eq!(pipe.client().write(&data), data.len());
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65_536];
        let mut read = |p: &mut Pipe, got: &mut Vec<u8>| {
            if let Some(s) = p.server() {
                let n = s.read(&mut buf);
                got.extend_from_slice(&buf[..n]);
            }
        };
        pipe.run_until(Instant::from_millis(45), |p| {
            read(p, &mut got);
            false
        })
        .unwrap();
        assert!(
            got.len() < data.len(),
            "{fallback:?}: all arrived before the change"
        );
        // Room for a 1 200-byte MSS segment and its header, not more.
        pipe.set_max_segment_bytes(Some(1200 + 60));
        pipe.run_until(Instant::from_millis(60_000), |p| {
            read(p, &mut got);
            got.len() == data.len()
        })
        .unwrap();
        let stats = pipe.client().stats();
        match fallback {
            Some(_) => {
                assert!(got == data, "{} of {} bytes", got.len(), data.len());
                assert_eq!(stats.black_hole_fallbacks, 1);
                assert!(
                    stats.timeouts >= u64::from(BLACK_HOLE_TIMEOUTS),
                    "{stats:?}"
                );
                assert!(pipe.client().stats().timeouts < 10, "{stats:?}");
            }
            None => {
                assert!(got.len() < data.len(), "arrived without a fallback");
                assert_eq!(stats.black_hole_fallbacks, 0);
            }
        }
    }
}

/// 2 MB from client to server with `config` at both ends over the test
/// pipe with 1% random loss (seed 3); the data and the outcome.
fn lossy_transfer(config: Config) -> (Vec<u8>, crate::testing::TransferOutcome) {
    let data: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
    let pipe = PipeConfig {
        loss: 0.01,
        seed: 3,
        ..PipeConfig::default()
    };
    let out = transfer(
        pipe,
        config.clone(),
        config,
        &data,
        &[],
        Duration::from_secs(600),
    )
    .unwrap();
    (data, out)
}

#[test]
fn loss_is_repaired_by_fast_retransmit() {
    let (data, out) = lossy_transfer(fast_config());
    assert_eq!(out.server_received, data);
    assert!(out.closed_cleanly);
    let s = out.client_stats;
    assert!(s.fast_retransmits > 0, "{s:?}");
    assert!(s.retransmissions >= s.fast_retransmits);
    // With SACK, most losses are repaired without a timeout.
    assert!(s.timeouts * 4 <= s.fast_retransmits, "{s:?}");
}

#[test]
fn rtt_estimate_ignores_duplicated_and_reordered_old_segments() {
    // 20 ms round trip; delayed ACKs add at most 100 ms. Old duplicates
    // must not drag TS.Recent back and inflate the sender's samples.
    let data = vec![9u8; 1_000_000];
    let out = transfer(
        PipeConfig {
            loss: 0.03,
            reorder: 0.2,
            reorder_delay: Duration::from_millis(30),
            duplicate: 0.2,
            seed: 11,
            ..PipeConfig::default()
        },
        fast_config(),
        fast_config(),
        &data,
        &[],
        Duration::from_secs(600),
    )
    .unwrap();
    assert_eq!(out.server_received, data);
    let srtt = out.client_stats.srtt.expect("samples taken");
    assert!(srtt < Duration::from_millis(150), "srtt {srtt:?}");
    assert!(srtt >= Duration::from_millis(20), "srtt {srtt:?}");
}

#[test]
fn closed_receive_window_is_probed_and_reopened() {
    // The server reads nothing for 5 s: the client fills the 64 KiB window,
    // probes it while it is closed, and resumes when the reader drains it.
    let mut server_config = fast_config();
    server_config.recv_buffer = 64 * 1024;
    let mut pipe = Pipe::new(PipeConfig::default(), fast_config(), server_config).unwrap();
    let data: Vec<u8> = (0..400_000u32).map(|i| (i % 241) as u8).collect();
    let mut written = 0;
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    let mut stalled_at = None;
    let done = pipe
        .run_until(Instant::from_millis(120_000), |p| {
            let now = p.now();
            let c = p.client();
            written += c.write(&data[written..]);
            if let Some(s) = p.server() {
                if now >= Instant::from_millis(5_000) {
                    loop {
                        let n = s.read(&mut buf);
                        if n == 0 {
                            break;
                        }
                        received.extend_from_slice(&buf[..n]);
                    }
                } else if s.readable() == 64 * 1024 && stalled_at.is_none() {
                    stalled_at = Some(now);
                }
            }
            received.len() == data.len()
        })
        .unwrap();
    assert!(done, "transfer did not resume");
    assert_eq!(received, data);
    assert!(stalled_at.is_some(), "window never filled");
    assert_eq!(
        pipe.client().stats().timeouts,
        0,
        "probing is not a timeout"
    );
}

#[test]
fn abort_resets_the_peer() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    pipe.client().write(&[3u8; 50_000]);
    pipe.run_until(pipe.now() + Duration::from_millis(15), |_| false)
        .unwrap();
    pipe.client().abort();
    assert!(pipe.client().is_closed());
    let done = pipe
        .run_until(pipe.now() + Duration::from_secs(5), |p| {
            p.server().is_some_and(|s| s.is_closed())
        })
        .unwrap();
    assert!(done, "server never saw the reset");
    let server = pipe.server().unwrap();
    assert!(
        core::iter::from_fn(|| server.poll_event()).any(|e| e == Event::Closed(CloseReason::Reset))
    );
    assert!(core::iter::from_fn(|| pipe.client().poll_event())
        .any(|e| e == Event::Closed(CloseReason::Aborted)));
}

/// Issue 18: the receiver's out-of-order store is sized from the receive
/// window, so a full window of full-sized segments with every other one
/// lost is held and SACKed, whatever `max_ooo_ranges` says.
#[test]
fn out_of_order_range_limit_follows_the_receive_window() {
    let config = Config::default();
    let per_window = config.recv_buffer / usize::from(config.mss);
    assert!(config.ooo_range_limit() > per_window);
    let small = Config {
        recv_buffer: 64 * 1000,
        mss: 1000,
        max_ooo_ranges: 200,
        ..Config::default()
    };
    assert_eq!(small.ooo_range_limit(), 200, "a larger floor is kept");
}

/// Every ACK of a window is lost, the data is not: the timer fires, the
/// receiver D-SACKs the resent head (RFC 2883), and the sender takes the
/// timeout's window reduction back. Without SACK there is no D-SACK and
/// the reduction stays.
#[test]
fn a_timeout_caused_by_lost_acks_is_undone_by_dsack() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    for sack in [true, false] {
        let mut config = fast_config();
        config.sack = sack;
        let mut pipe = established_pipe(config.clone(), config);
        let written = pipe.client().write(&data);
        let deadline = Instant::from_millis(60_000);
        // Past the initial window, in slow start.
        let ok = pipe
            .run_until(deadline, |p| p.client().stats().cwnd >= 40_000)
            .unwrap();
        assert!(ok);
        let before = pipe.client().stats();
        pipe.set_blackout(Side::Server, true);
        let ok = pipe
            .run_until(deadline, |p| p.client().stats().timeouts > before.timeouts)
            .unwrap();
        assert!(ok, "no timeout");
        pipe.set_blackout(Side::Server, false);
        // The first ACK after the outage.
        let acked = pipe.client().sender().snd_una();
        let ok = pipe
            .run_until(deadline, |p| p.client().sender().snd_una() > acked)
            .unwrap();
        assert!(ok);
        let after = pipe.client().stats();
        assert_eq!(after.timeouts, before.timeouts + 1, "sack {sack}");
        if sack {
            assert_eq!(after.spurious_timeouts, 1);
            assert!(after.cwnd >= before.cwnd, "{before:?} {after:?}");
        } else {
            assert_eq!(after.spurious_timeouts, 0);
            assert!(after.cwnd < before.cwnd, "{before:?} {after:?}");
        }
        // Nothing lost on the way.
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65_536];
        let ok = pipe
            .run_until(deadline, |p| {
                let s = p.server().expect("server");
                loop {
                    let n = s.read(&mut buf);
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                got.len() >= written
            })
            .unwrap();
        assert!(ok, "sack {sack}: {} of {written}", got.len());
        assert_eq!(got, data[..written]);
    }
}

#[test]
fn the_ack_policy_can_be_switched_on_an_open_connection() {
    // The server starts polled (it would send a handful of ACKs for a
    // 4W sender) and is switched to ACK-every-segment once established,
    // as a file receiver does when the sender names its strategy.
    let mut pipe = established_pipe(fast_config(), fast_config());
    let server = pipe.server().unwrap();
    let bad = AckPolicyConfig::Delayed {
        max_delay: Duration::from_secs(2),
        segments: 2,
    };
    assert!(matches!(
        server.set_ack_policy(bad),
        Err(ConfigError::Invalid { .. })
    ));
    server.set_ack_policy(AckPolicyConfig::Every).unwrap();
    let acks_before = server.stats().pure_acks_sent;
    let data = vec![7u8; 200 * 1448];
    let mut written = 0;
    let mut buf = vec![0u8; 64 << 10];
    let mut read = 0;
    let ok = pipe
        .run_until(Instant::from_millis(60_000), |p| {
            written += p.client().write(&data[written..]);
            if let Some(s) = p.server() {
                read += s.read(&mut buf);
            }
            read == data.len()
        })
        .unwrap();
    assert!(ok, "transfer did not finish");
    let server = pipe.server().unwrap();
    let acks = server.stats().pure_acks_sent - acks_before;
    let segments = server.stats().data_segments_received;
    assert!(
        acks + 2 >= segments,
        "{acks} ACKs for {segments} segments: the switch did not take"
    );
}

/// Opens a connection between two hand-driven ends at time zero.
fn handshake(client: Config, server: Config) -> (Connection, Result<Connection, AcceptError>) {
    let mut rng = rng();
    let t0 = Instant::ZERO;
    let mut c = Connection::connect(client, t0, 1000, 80, &mut rng).unwrap();
    let mut buf = [0u8; 2000];
    let n = c.poll_transmit(t0, &mut buf).unwrap();
    let s = Connection::accept(server, t0, &buf[..n], &mut rng);
    let Ok(mut s) = s else {
        return (c, s);
    };
    let n = s.poll_transmit(t0, &mut buf).unwrap();
    c.handle_segment(t0, &buf[..n]).unwrap();
    while let Some(n) = c.poll_transmit(t0, &mut buf) {
        let _ = s.handle_segment(t0, &buf[..n]);
    }
    (c, Ok(s))
}

#[test]
fn ack_nonce_is_used_when_both_offer_it_and_required_ends_refuse_peers_without() {
    let off = Config {
        ack_nonce: AckNonceMode::Off,
        ..fast_config()
    };
    let require = Config {
        ack_nonce: AckNonceMode::Require,
        ..fast_config()
    };
    let (c, s) = handshake(fast_config(), fast_config());
    assert!(c.negotiated().ack_nonce && s.unwrap().negotiated().ack_nonce);
    let (c, s) = handshake(fast_config(), off.clone());
    assert!(c.is_established());
    assert!(!c.negotiated().ack_nonce && !s.unwrap().negotiated().ack_nonce);
    // A listener that requires it does not take a SYN without it.
    let (_, s) = handshake(off.clone(), require.clone());
    assert!(matches!(s, Err(AcceptError::NonceRequired)));
    // A client that requires it resets a SYN-ACK without it, and the
    // reset closes the listener's half-open connection.
    let (mut c, s) = handshake(require, off);
    assert_eq!(c.state(), State::Closed);
    assert_eq!(
        c.poll_event(),
        Some(Event::Closed(CloseReason::NonceRequired))
    );
    assert_eq!(s.unwrap().state(), State::Closed);
}

/// A client (default configuration) sends at least three segments of
/// which only the first reaches a server configured as `server`: the
/// client, the segments it sent, the server's ACK of the first, and when
/// that ACK was taken (its timer had run out by then).
fn first_of_several_acknowledged(server: Config) -> (Connection, Vec<Vec<u8>>, Vec<u8>, Instant) {
    let (mut c, s) = handshake(fast_config(), server);
    let mut s = s.unwrap();
    let t1 = Instant::from_millis(10);
    assert_eq!(c.write(&[9u8; 6000]), 6000);
    let mut buf = [0u8; 2000];
    let mut data = Vec::new();
    while let Some(n) = c.poll_transmit(t1, &mut buf) {
        data.push(buf[..n].to_vec());
    }
    assert!(data.len() >= 3, "{} segments", data.len());
    s.handle_segment(t1, &data[0]).unwrap();
    let later = Instant::from_millis(500);
    s.handle_timeout(later);
    let n = s.poll_transmit(later, &mut buf).expect("an ACK");
    (c, data, buf[..n].to_vec(), later)
}

#[test]
fn an_ack_of_data_still_in_flight_moves_nothing_without_its_nonce() {
    // Only the first segment arrives; the receiver's ACK for it is due
    // by its timer at the latest.
    let (mut c, data, honest, later) = first_of_several_acknowledged(fast_config());
    let repr = SegmentRepr::parse(&honest, Checksum::UNSPECIFIED).unwrap();
    assert!(repr.options.nonce_echo.is_some());
    let first = SegmentRepr::parse(&data[0], Checksum::UNSPECIFIED).unwrap();
    assert_eq!(repr.ack, first.seq.add(first.payload.len() as u32));
    // The optimistic receiver acknowledges everything sent: with the
    // echo it has, and without any.
    let last = SegmentRepr::parse(data.last().unwrap(), Checksum::UNSPECIFIED).unwrap();
    let all = last.seq.add(last.payload.len() as u32);
    for echo in [repr.options.nonce_echo, None] {
        let mut lie = repr;
        lie.ack = all;
        lie.options.nonce_echo = echo;
        let mut forged = vec![0u8; lie.buffer_len()];
        lie.emit(&mut forged, Checksum::UNSPECIFIED).unwrap();
        c.handle_segment(later, &forged).unwrap();
        assert_eq!(c.sender().snd_una(), 0, "nothing believed");
    }
    assert_eq!(c.stats().ack_nonce_failures, 2);
    // The honest ACK is believed.
    c.handle_segment(later, &honest).unwrap();
    assert_eq!(c.sender().snd_una(), first.payload.len() as u64);
    assert_eq!(c.stats().ack_nonce_failures, 2);
}

/// Without SACK but with the nonce, every honest duplicate ACK names the
/// out-of-order segment it reports and is counted, so NewReno still
/// repairs losses by fast retransmit.
#[test]
fn duplicates_are_guarded_only_against_a_peer_that_declined_the_nonce_and_sack() {
    let with = |sack, nonce| Config {
        sack,
        ack_nonce: nonce,
        ..fast_config()
    };
    let (offer, off) = (AckNonceMode::Offer, AckNonceMode::Off);
    // (client, server, client guarded, server guarded)
    for (client, server, c, s) in [
        (with(false, offer), with(false, off), true, false),
        (with(false, offer), with(false, offer), false, false),
        (with(false, off), with(false, off), false, false),
        (with(true, offer), with(true, off), false, false),
        (with(true, offer), with(false, off), true, false),
    ] {
        let mut pipe = established_pipe(client.clone(), server.clone());
        let guarded = (
            pipe.client().sender().duplicate_guard(),
            pipe.server().unwrap().sender().duplicate_guard(),
        );
        assert_eq!(
            guarded,
            (c, s),
            "client sack {} nonce {:?}, server sack {} nonce {:?}",
            client.sack,
            client.ack_nonce,
            server.sack,
            server.ack_nonce
        );
    }
}

#[test]
fn newreno_duplicates_are_proven_and_counted_with_the_nonce() {
    let (data, out) = lossy_transfer(Config {
        sack: false,
        ..fast_config()
    });
    assert_eq!(out.server_received, data);
    let s = out.client_stats;
    assert_eq!(s.ack_nonce_failures, 0);
    assert!(s.fast_retransmits > 0, "{s:?}");
    // Every fast retransmit needed three counted duplicates.
    assert!(s.duplicate_acks_received >= 3 * s.fast_retransmits, "{s:?}");
    assert!(s.timeouts * 4 <= s.fast_retransmits, "{s:?}");
}

#[test]
fn last_progress_moves_with_data_only() {
    let mut pipe = established_pipe(fast_config(), fast_config());
    let t0 = pipe.now();
    assert!(pipe.client().last_progress() <= t0);
    pipe.client().write(&[5u8; 20_000]);
    let done = pipe
        .run_until(Instant::from_millis(10_000), |p| {
            p.client().sender().snd_una() >= 20_000
        })
        .unwrap();
    assert!(done);
    let (sent, received) = (
        pipe.client().last_progress(),
        pipe.server().unwrap().last_progress(),
    );
    assert!(sent > t0 && received > t0, "{t0:?} {sent:?} {received:?}");
    // The application reading what arrived is not progress of the
    // connection.
    let mut buf = vec![0u8; 20_000];
    assert_eq!(pipe.server().unwrap().read(&mut buf), 20_000);
    assert_eq!(pipe.server().unwrap().last_progress(), received);
    // Data the other way moves both ends.
    pipe.server().unwrap().write(&[6u8; 5_000]);
    let back = pipe
        .run_until(pipe.now() + Duration::from_millis(5_000), |p| {
            p.client().readable() >= 5_000
                && p.server().is_some_and(|s| s.sender().snd_una() >= 5_000)
        })
        .unwrap();
    assert!(back);
    assert!(pipe.client().last_progress() > sent);
    assert!(pipe.server().unwrap().last_progress() > received);
}

#[test]
#[cfg(feature = "std")]
fn connections_sharing_a_challenge_budget_answer_floods_within_it() {
    // Three connections, each allowed 10 challenge ACKs a second, share
    // an endpoint budget of 4 to 8 a second: 3 x 1000 forged resets in
    // one second get at most 8 answers between them, at least 4.
    let budget = alloc::sync::Arc::new(ChallengeBudget::new(4, 9));
    let mut pipes: Vec<Pipe> = (0..3)
        .map(|_| established_pipe(fast_config(), fast_config()))
        .collect();
    let now = pipes.iter().map(|p| p.now()).max().unwrap();
    let mut buf = [0u8; 2000];
    let mut answered = 0;
    for pipe in &mut pipes {
        let client = pipe.client();
        client.share_challenge_budget(budget.clone());
        let rcv_nxt = client.rcv_ack_seq();
        for k in 0..1_000u32 {
            let rst = segment(80, 40_000, rcv_nxt.add(1 + k % 100), SeqNum(0), Flags::RST);
            client.handle_segment(now, &rst).unwrap();
            while client.poll_transmit(now, &mut buf).is_some() {
                answered += 1;
            }
        }
        assert_eq!(client.state(), State::Established);
    }
    assert!((4..=8).contains(&answered), "{answered}");
    let suppressed: u64 = pipes
        .iter_mut()
        .map(|p| p.client().stats().challenge_acks_suppressed)
        .sum();
    assert_eq!(suppressed, 3_000 - answered);
}

#[test]
fn data_injected_ahead_of_the_peer_does_not_start_an_ack_storm() {
    // An attacker lands 1400 bytes at the server's RCV.NXT before the
    // client sends them. The server acknowledges bytes the client never
    // sent; the client answers such an ACK with an ACK of its own, whose
    // sequence number the server now takes for old, which it answers
    // again: without a limit on the answers to ACKs of unsent data the
    // two ends ping-pong for as long as the connection lives, one more
    // exchange for each retransmission.
    let mut pipe = established_pipe(fast_config(), fast_config());
    let now = pipe.now();
    let server = pipe.server().unwrap();
    let repr = SegmentRepr {
        src_port: 40_000,
        dst_port: 80,
        seq: server.rcv_ack_seq(),
        ack: server.snd_seq(server.sender().snd_una()),
        flags: Flags::ACK | Flags::PSH,
        window: 1000,
        options: Options::default(),
        payload: &[0x66; 1400],
    };
    let mut forged = vec![0u8; repr.buffer_len()];
    repr.emit(&mut forged, Checksum::UNSPECIFIED).unwrap();
    server.handle_segment(now, &forged).unwrap();
    pipe.client().write(&[1u8; 300]);
    let before = pipe.stats().sent;
    let ten_seconds = now + Duration::from_secs(10);
    pipe.run_until(ten_seconds, |_| false).unwrap();
    let exchanged = pipe.stats().sent - before;
    // The client answers an ACK of unsent data at most twice a second,
    // and each answer draws one reply; its retransmissions (backing off)
    // add a few more. Without the limit: 5850 segments.
    assert!(exchanged <= 60, "{exchanged} segments in 10 s");
}

/// Every segment `conn` has to send at `now`.
fn drain(conn: &mut Connection, now: Instant) -> Vec<Vec<u8>> {
    let mut buf = [0u8; 2000];
    let mut out = Vec::new();
    while let Some(n) = conn.poll_transmit(now, &mut buf) {
        out.push(buf[..n].to_vec());
    }
    out
}

/// An established pair whose client sends every write at once (Nagle
/// off), for tests that cut the stream into segments of their choosing.
fn eager_pair() -> (Connection, Connection) {
    let client = Config {
        nagle: false,
        ..fast_config()
    };
    let (c, s) = handshake(client, fast_config());
    (c, s.unwrap())
}

/// More small segments above a hole than the receiver keeps nonces for
/// (its limit counts full-sized segments per window): when the hole
/// fills, the ACK of everything still carries the right echo, so the
/// sender believes it. (A stale echo here once made the sender refuse
/// every ACK while its retransmissions, all old data, changed nothing.)
#[test]
fn a_window_of_small_segments_above_a_hole_is_acknowledged_with_its_proof() {
    let server = Config {
        recv_buffer: 64_000,
        max_ooo_ranges: 1,
        ..fast_config()
    };
    let mut client = Config {
        nagle: false,
        ..fast_config()
    };
    client.congestion.initial_window = Some(1 << 20);
    let (mut c, s) = handshake(client, server);
    let mut s = s.unwrap();
    let t1 = Instant::from_millis(10);
    let mut buf = [0u8; 2000];
    let mut data = Vec::new();
    for _ in 0..100 {
        assert_eq!(c.write(&[3u8; 500]), 500);
        while let Some(n) = c.poll_transmit(t1, &mut buf) {
            data.push(buf[..n].to_vec());
        }
    }
    assert_eq!(data.len(), 100, "one segment per write");
    // The first arrives, the second is lost, the other 98 are held.
    let t2 = Instant::from_millis(20);
    for seg in data.iter().take(1).chain(&data[2..]) {
        s.handle_segment(t2, seg).unwrap();
    }
    while let Some(n) = s.poll_transmit(t2, &mut buf) {
        c.handle_segment(t2, &buf[..n]).unwrap();
    }
    assert_eq!(c.sender().snd_una(), 500);
    // The retransmission fills the hole.
    s.handle_segment(t2, &data[1]).unwrap();
    let mut acks = 0;
    while let Some(n) = s.poll_transmit(t2, &mut buf) {
        let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
        assert_eq!(ack.ack, c.snd_seq(50_000));
        c.handle_segment(t2, &buf[..n]).unwrap();
        acks += 1;
    }
    assert!(acks > 0);
    assert_eq!(c.sender().snd_una(), 50_000);
    assert_eq!(c.stats().ack_nonce_failures, 0);
}

/// Where the receiver cannot prove RCV.NXT (here the held range's last
/// segment came without its nonce), its ACK claims the highest point it
/// can prove, with the window's right edge unchanged, and old data from
/// that point carries the proof on: the sender is never left refusing
/// every ACK.
#[test]
fn an_unproved_cumulative_point_is_claimed_once_old_data_proves_it() {
    let (mut c, mut s) = eager_pair();
    let t1 = Instant::from_millis(10);
    assert_eq!(c.write(&[4u8; 4000]), 4000);
    let mut buf = [0u8; 2000];
    let data = drain(&mut c, t1);
    assert!(data.len() >= 3, "{} segments", data.len());
    let ends: Vec<u64> = data
        .iter()
        .scan(0u64, |end, seg| {
            let r = SegmentRepr::parse(seg, Checksum::UNSPECIFIED).unwrap();
            *end += r.payload.len() as u64;
            Some(*end)
        })
        .collect();
    // The last segment arrives first, stripped of its nonce.
    let last = data.len() - 1;
    let mut stripped = SegmentRepr::parse(&data[last], Checksum::UNSPECIFIED).unwrap();
    stripped.options.ack_nonce = None;
    let mut bare = vec![0u8; stripped.buffer_len()];
    stripped.emit(&mut bare, Checksum::UNSPECIFIED).unwrap();
    s.handle_segment(t1, &bare).unwrap();
    for seg in &data[..last] {
        s.handle_segment(t1, seg).unwrap();
    }
    let mut claimed = Vec::new();
    while let Some(n) = s.poll_transmit(t1, &mut buf) {
        let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
        claimed.push((ack.ack, ack.window));
        c.handle_segment(t1, &buf[..n]).unwrap();
    }
    assert_eq!(c.stats().ack_nonce_failures, 0);
    assert_eq!(c.sender().snd_una(), ends[last - 1], "the proved point");
    // The last segment again, now with its nonce, is old data to the
    // receiver and proves the rest.
    s.handle_segment(t1, &data[last]).unwrap();
    let n = s.poll_transmit(t1, &mut buf).expect("an ACK at once");
    let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
    c.handle_segment(t1, &buf[..n]).unwrap();
    assert_eq!(c.sender().snd_una(), 4000);
    assert_eq!(c.stats().ack_nonce_failures, 0);
    // The right edge of the window did not move back.
    let shift = s.negotiated().recv_window_shift;
    let edge = |ack: SeqNum, window: u16| ack.add(u32::from(window) << shift);
    let (first_ack, first_window) = claimed[0];
    assert!(edge(ack.ack, ack.window).diff(edge(first_ack, first_window)) >= 0);
}

/// A FIN that arrives before the hole below it fills keeps its nonce: the
/// ACK that covers the whole stream and the FIN is believed at once.
#[test]
fn a_fin_ahead_of_a_hole_is_acknowledged_with_its_proof() {
    for separate_fin in [false, true] {
        let (mut c, mut s) = eager_pair();
        let t1 = Instant::from_millis(10);
        assert_eq!(c.write(&[6u8; 4000]), 4000);
        let mut buf = [0u8; 2000];
        let mut data = Vec::new();
        if separate_fin {
            data = drain(&mut c, t1);
        }
        c.close();
        data.extend(drain(&mut c, t1));
        let last = SegmentRepr::parse(data.last().unwrap(), Checksum::UNSPECIFIED).unwrap();
        assert!(last.flags.contains(Flags::FIN));
        assert_eq!(last.payload.is_empty(), separate_fin);
        // Everything but the first segment arrives before it, newest first.
        for seg in data[1..].iter().rev().chain(&data[..1]) {
            s.handle_segment(t1, seg).unwrap();
        }
        while let Some(n) = s.poll_transmit(t1, &mut buf) {
            c.handle_segment(t1, &buf[..n]).unwrap();
        }
        assert_eq!(
            c.stats().ack_nonce_failures,
            0,
            "separate FIN: {separate_fin}"
        );
        assert_eq!(c.state(), State::FinWait2, "separate FIN: {separate_fin}");
    }
}

/// The last segment carries the FIN; when it arrives ahead of a hole, the
/// receiver's SACK block covers the FIN too, so the sender can mark that
/// segment SACKed and resend the hole just below it during recovery
/// (NextSeg rule 3). A block that stopped short of the FIN left the last
/// segment partly covered, never SACKed, and the hole below it to the
/// retransmission timer.
#[test]
fn a_sack_block_reaching_a_held_fin_covers_it() {
    let mut client = Config {
        nagle: false,
        ..fast_config()
    };
    client.congestion.initial_window = Some(1 << 20);
    let (mut c, s) = handshake(client, fast_config());
    let mut s = s.unwrap();
    let t1 = Instant::from_millis(10);
    let bytes = 6 * c.sender().mss();
    assert_eq!(c.write(&vec![5u8; bytes as usize]), bytes as usize);
    c.close();
    let data = drain(&mut c, t1);
    let starts: Vec<SeqNum> = data
        .iter()
        .map(|seg| SegmentRepr::parse(seg, Checksum::UNSPECIFIED).unwrap().seq)
        .collect();
    assert_eq!(data.len(), 6, "the FIN rides on the last data segment");
    let last = SegmentRepr::parse(&data[5], Checksum::UNSPECIFIED).unwrap();
    assert!(last.flags.contains(Flags::FIN));
    // The first and the fifth segments are lost.
    let t2 = Instant::from_millis(20);
    for seg in [&data[1], &data[2], &data[3], &data[5]] {
        s.handle_segment(t2, seg).unwrap();
    }
    let mut buf = [0u8; 2000];
    let mut top_edge = None;
    while let Some(n) = s.poll_transmit(t2, &mut buf) {
        let ack = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
        let edges = ack.options.sack.as_slice().iter().map(|b| b.1);
        top_edge = edges.max_by_key(|r| r.diff(starts[0]));
        c.handle_segment(t2, &buf[..n]).unwrap();
    }
    let after_fin = c.snd_seq(bytes + 1);
    assert_eq!(top_edge, Some(after_fin), "the block ends after the FIN");
    let resent: Vec<SeqNum> = drain(&mut c, t2)
        .iter()
        .map(|seg| SegmentRepr::parse(seg, Checksum::UNSPECIFIED).unwrap().seq)
        .collect();
    assert!(resent.contains(&starts[0]), "{resent:?}");
    assert!(
        resent.contains(&starts[4]),
        "the hole below the last segment: {resent:?}"
    );
}

/// Toward a peer that declined the nonce this end offered, some segments
/// are cut short at secret points, and an ACK or SACK block naming a point
/// where no segment ends is refused; the third such refusal resets the
/// connection. Ends that both offer, or both leave the nonce off, send
/// full segments and check nothing.
#[test]
fn a_peer_that_declines_the_nonce_is_held_to_the_ends_of_segments() {
    let off = Config {
        ack_nonce: AckNonceMode::Off,
        ..fast_config()
    };
    // Full segments only, unless the peer declined the nonce offered.
    for (client, server, cut) in [
        (fast_config(), off.clone(), true),
        (fast_config(), fast_config(), false),
        (off.clone(), off.clone(), false),
    ] {
        let (mut c, s) = handshake(client, server);
        s.unwrap();
        let mss = c.sender().mss() as usize;
        assert_eq!(c.write(&vec![1u8; 400 * mss]), 400 * mss);
        let mut buf = vec![0u8; mss + 200];
        let mut short = 0;
        let mut at = Instant::from_millis(10);
        for _ in 0..300 {
            // Acknowledge whatever went out, at its true end, so that the
            // window keeps opening.
            let mut sent_end = None;
            while let Some(n) = c.poll_transmit(at, &mut buf) {
                let seg = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
                if seg.payload.len() < mss && c.sender().data_end() > c.sender().snd_nxt() {
                    short += 1;
                }
                sent_end = Some((seg.seq.add(seg.payload.len() as u32), seg.ack));
            }
            let Some((end, ack)) = sent_end else { break };
            let reply = SegmentRepr {
                src_port: 80,
                dst_port: 1000,
                seq: ack,
                ack: end,
                flags: Flags::ACK,
                window: 65_535,
                options: Options::default(),
                payload: &[],
            };
            let mut out = vec![0u8; reply.buffer_len()];
            reply.emit(&mut out, Checksum::UNSPECIFIED).unwrap();
            at += Duration::from_millis(1);
            c.handle_segment(at, &out).unwrap();
        }
        assert_eq!(short > 0, cut, "{short} short segments");
        assert_eq!(c.stats().segment_end_failures, 0);
    }

    let (mut c, data, honest, later) = first_of_several_acknowledged(off);
    let repr = SegmentRepr::parse(&honest, Checksum::UNSPECIFIED).unwrap();
    let second = SegmentRepr::parse(&data[1], Checksum::UNSPECIFIED).unwrap();
    let second_end = second.seq.add(second.payload.len() as u32);
    let forge = |ack: SeqNum, sack: Option<(SeqNum, SeqNum)>| {
        let mut lie = repr;
        lie.ack = ack;
        if let Some((l, r)) = sack {
            lie.options.sack.push(l, r);
        }
        let mut out = vec![0u8; lie.buffer_len()];
        lie.emit(&mut out, Checksum::UNSPECIFIED).unwrap();
        out
    };
    // One byte short of the second segment's end, and a SACK block ending
    // one byte into the third: nowhere a segment ends.
    c.handle_segment(later, &forge(second_end.add(u32::MAX), None))
        .unwrap();
    assert_eq!(c.sender().snd_una(), 0, "nothing believed");
    c.handle_segment(
        later,
        &forge(repr.ack, Some((second_end, second_end.add(1)))),
    )
    .unwrap();
    assert_eq!(c.stats().segment_end_failures, 2);
    // The honest ACK, and one at the second segment's true end, are
    // believed.
    c.handle_segment(later, &honest).unwrap();
    let first = SegmentRepr::parse(&data[0], Checksum::UNSPECIFIED).unwrap();
    assert_eq!(c.sender().snd_una(), first.payload.len() as u64);
    c.handle_segment(later, &forge(second_end, None)).unwrap();
    assert_eq!(
        c.sender().snd_una(),
        (first.payload.len() + second.payload.len()) as u64
    );
    assert!(c.is_established());
    // A third point where nothing ends: the peer is lying, and is reset.
    let third = SegmentRepr::parse(&data[2], Checksum::UNSPECIFIED).unwrap();
    c.handle_segment(later, &forge(third.seq.add(7), None))
        .unwrap();
    assert_eq!(c.stats().segment_end_failures, 3);
    let mut closed = None;
    while let Some(e) = c.poll_event() {
        if let Event::Closed(reason) = e {
            closed = Some(reason);
        }
    }
    assert_eq!(closed, Some(CloseReason::PeerMisbehaved));
    let mut buf = [0u8; 2000];
    let n = c.poll_transmit(later, &mut buf).expect("a reset");
    let rst = SegmentRepr::parse(&buf[..n], Checksum::UNSPECIFIED).unwrap();
    assert!(rst.flags.contains(Flags::RST));
}

/// The checksum field of a segment as written.
fn checksum_field(segment: &[u8]) -> u16 {
    u16::from_be_bytes([segment[16], segment[17]])
}

/// Handshake, then `data` each way and both FINs, every segment handed
/// over as soon as it is sent; returns both ends and what each sent.
fn exchange_everything(
    client: Config,
    server: Config,
    data: &[u8],
) -> (Connection, Connection, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut rng = rng();
    let now = Instant::ZERO;
    let mut c = Connection::connect(client, now, 1000, 80, &mut rng).unwrap();
    let mut from_client = drain(&mut c, now);
    let mut s = Connection::accept(server, now, &from_client[0], &mut rng).unwrap();
    let mut from_server = Vec::new();
    let (mut c_written, mut s_written) = (0, 0);
    let mut scratch = vec![0u8; 1 << 16];
    for _ in 0..10_000 {
        if c.is_established() && s.is_established() {
            c_written += c.write(&data[c_written..]);
            s_written += s.write(&data[s_written..]);
            if c_written == data.len() {
                c.close();
            }
            if s_written == data.len() {
                s.close();
            }
        }
        let to_server = drain(&mut s, now);
        for seg in &to_server {
            let _ = c.handle_segment(now, seg);
        }
        let to_client = drain(&mut c, now);
        for seg in &to_client {
            let _ = s.handle_segment(now, seg);
        }
        while c.read(&mut scratch) > 0 || s.read(&mut scratch) > 0 {}
        let quiet = to_server.is_empty() && to_client.is_empty();
        from_server.extend(to_server);
        from_client.extend(to_client);
        if quiet && c_written == data.len() && s_written == data.len() {
            break;
        }
    }
    (c, s, from_client, from_server)
}

/// Over a carrier that checks integrity itself, the TCP checksum is left
/// out once both ends have offered to (the SYN-ACK on): not before, and
/// not at all when one end did not offer or does not check checksums.
#[test]
fn checksums_are_left_out_only_where_both_ends_offer_it() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 31 + 5) as u8).collect();
    let offering = Config {
        omit_checksums: true,
        ..fast_config()
    };
    let unchecked = Config {
        checksums: false,
        ..offering.clone()
    };
    for (client, server, omitted) in [
        (offering.clone(), offering.clone(), true),
        (offering.clone(), fast_config(), false),
        (fast_config(), offering.clone(), false),
        (offering.clone(), unchecked, false),
    ] {
        let what = (
            client.omit_checksums,
            server.omit_checksums,
            server.checksums,
        );
        let (c, s, from_client, from_server) = exchange_everything(client, server.clone(), &data);
        assert_eq!(c.negotiated().checksums_omitted, omitted, "{what:?}");
        assert_eq!(s.negotiated().checksums_omitted, omitted, "{what:?}");
        assert_eq!(c.stats().bytes_delivered, data.len() as u64, "{what:?}");
        assert_eq!(s.stats().bytes_delivered, data.len() as u64, "{what:?}");
        assert_eq!(c.stats().malformed_segments, 0, "{what:?}");
        assert_eq!(s.stats().malformed_segments, 0, "{what:?}");
        assert!(from_client.len() > 100 && from_server.len() > 100);
        // The SYN offers before anything is agreed, so it is checksummed.
        let syn = SegmentRepr::parse(&from_client[0], Checksum::UNSPECIFIED).unwrap();
        assert!(syn.flags.contains(Flags::SYN));
        for (i, seg) in from_client[1..].iter().chain(&from_server).enumerate() {
            if omitted {
                assert_eq!(checksum_field(seg), 0, "{what:?}: segment {i}");
            } else if server.checksums {
                assert!(
                    SegmentRepr::parse(seg, Checksum::UNSPECIFIED).is_ok(),
                    "{what:?}: segment {i} not checksummed"
                );
            }
        }
    }
}

/// An end that offered omission still checks every checksum that is
/// there, and an end that did not offer takes a zero field for what it
/// is: a wrong checksum.
#[test]
fn offering_omission_still_refuses_a_wrong_checksum_and_not_offering_refuses_zero() {
    let offering = Config {
        omit_checksums: true,
        ..fast_config()
    };
    for (config, refused_zero) in [(offering, false), (fast_config(), true)] {
        let (mut c, s) = handshake(config.clone(), config.clone());
        let mut s = s.unwrap();
        let now = Instant::ZERO;
        assert_eq!(s.negotiated().checksums_omitted, !refused_zero);
        s.write(b"hello");
        let seg = drain(&mut s, now).remove(0);
        // The same segment checksummed, with one payload bit flipped, and
        // with the field zeroed.
        let mut summed = seg.clone();
        let repr = SegmentRepr::parse(&seg, Checksum::Ignore).unwrap();
        repr.emit(&mut summed, Checksum::UNSPECIFIED).unwrap();
        let mut corrupted = summed.clone();
        *corrupted.last_mut().unwrap() ^= 1;
        assert!(matches!(
            c.handle_segment(now, &corrupted),
            Err(SegmentError::Malformed(WireError::BadChecksum))
        ));
        let mut zeroed = summed.clone();
        zeroed[16..18].fill(0);
        let zero = c.handle_segment(now, &zeroed);
        assert_eq!(
            matches!(zero, Err(SegmentError::Malformed(WireError::BadChecksum))),
            refused_zero,
            "{zero:?}"
        );
        assert_eq!(c.readable(), if refused_zero { 0 } else { 5 });
    }
}

/// A connection a SYN cookie answered does not know what the SYN offered
/// beyond what the cookie keeps, so it keeps checksums both ways.
#[test]
fn a_cookie_connection_keeps_checksums() {
    use super::syn_cookie::{SynCookies, Tuple};
    let config = Config {
        omit_checksums: true,
        ..fast_config()
    };
    let mut rng = rng();
    let now = Instant::ZERO;
    let cookies = SynCookies::new(&mut rng);
    let tuple = Tuple {
        peer: "192.0.2.1:4000".parse().unwrap(),
        peer_port: 1000,
        local_port: 80,
    };
    let mut c = Connection::connect(config.clone(), now, 1000, 80, &mut rng).unwrap();
    let syn = drain(&mut c, now).remove(0);
    let syn_repr = SegmentRepr::parse(&syn, Checksum::UNSPECIFIED).unwrap();
    assert!(syn_repr.options.checksum_omission);
    let checksum = checksum_mode(&config);
    let vouched = cookies
        .answer(now, &tuple, &syn_repr, true, checksum)
        .unwrap();
    let mut answering = Connection::accept_stateless(
        config.clone(),
        now,
        &vouched.syn,
        vouched.iss,
        vouched.ts_offset,
        &mut rng,
    )
    .unwrap();
    let syn_ack = drain(&mut answering, now).remove(0);
    assert!(
        !SegmentRepr::parse(&syn_ack, Checksum::UNSPECIFIED)
            .unwrap()
            .options
            .checksum_omission
    );
    c.handle_segment(now, &syn_ack).unwrap();
    assert!(!c.negotiated().checksums_omitted);
    c.write(b"data");
    let ack = drain(&mut c, now).remove(0);
    let ack_repr = SegmentRepr::parse(&ack, Checksum::UNSPECIFIED).expect("checksummed");
    let again = cookies.check(now, &tuple, &ack_repr, checksum).unwrap();
    let mut s = Connection::accept_cookie_ack(
        config,
        now,
        &again.syn,
        again.iss,
        again.ts_offset,
        (&ack, false),
        &mut rng,
    )
    .unwrap();
    assert!(!s.negotiated().checksums_omitted);
    assert_eq!(s.readable(), 4);
    s.write(b"back");
    for seg in drain(&mut s, now) {
        assert!(SegmentRepr::parse(&seg, Checksum::UNSPECIFIED).is_ok());
    }
}

/// Every segment `conn` has to send at `now`, through
/// `poll_transmit_gather`, put together from header and payload; with
/// how many came as a header only.
fn drain_gathered(conn: &mut Connection, now: Instant) -> (Vec<Vec<u8>>, usize) {
    let mut buf = [0u8; 2000];
    let (mut out, mut headers) = (Vec::new(), 0);
    while let Some(emitted) = conn.poll_transmit_gather(now, &mut buf) {
        out.push(match emitted {
            Emitted::Whole(n) => buf[..n].to_vec(),
            Emitted::Header {
                header_len,
                payload_offset,
                payload_len,
            } => {
                headers += 1;
                let mut segment = buf[..header_len].to_vec();
                for piece in conn.sent_payload(payload_offset, payload_len).unwrap() {
                    segment.extend_from_slice(piece);
                }
                segment
            }
        });
    }
    (out, headers)
}

/// A gathering carrier puts on the wire exactly the segments
/// `poll_transmit` writes, and takes the payload from the send buffer
/// only where no checksum has to be computed over it.
#[test]
fn gathered_segments_are_the_segments_poll_transmit_writes() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + 1) as u8).collect();
    for omit in [true, false] {
        let config = Config {
            omit_checksums: omit,
            send_buffer: 64 << 10,
            ..fast_config()
        };
        let (mut c1, s1) = handshake(config.clone(), config.clone());
        let (mut c2, s2) = handshake(config.clone(), config);
        let (mut s1, mut s2) = (s1.unwrap(), s2.unwrap());
        let (mut written, mut gathered_total) = (0, 0);
        let mut now = Instant::ZERO;
        let mut scratch = vec![0u8; 1 << 16];
        while s1.stats().bytes_delivered < data.len() as u64 {
            let w = c1.write(&data[written..]);
            assert_eq!(c2.write(&data[written..written + w]), w);
            written += w;
            let plain = drain(&mut c1, now);
            let (gathered, headers) = drain_gathered(&mut c2, now);
            assert_eq!(plain, gathered, "omit {omit}");
            gathered_total += headers;
            for seg in &plain {
                let _ = s1.handle_segment(now, seg);
                let _ = s2.handle_segment(now, seg);
            }
            while s1.read(&mut scratch) > 0 {}
            while s2.read(&mut scratch) > 0 {}
            let acks = drain(&mut s1, now);
            assert_eq!(acks, drain(&mut s2, now));
            for ack in &acks {
                let _ = c1.handle_segment(now, ack);
                let _ = c2.handle_segment(now, ack);
            }
            now += Duration::from_millis(1);
            c1.handle_timeout(now);
            c2.handle_timeout(now);
            s1.handle_timeout(now);
            s2.handle_timeout(now);
        }
        let data_segments = c2.stats().data_segments_sent as usize;
        if omit {
            assert_eq!(gathered_total, data_segments);
        } else {
            assert_eq!(gathered_total, 0);
        }
        // Acknowledged bytes are no longer there to gather.
        assert!(c2.sent_payload(0, 1).is_none());
    }
}

/// A segment handed over as header and payload by reference is handled
/// as the whole segment is: the same ACKs, the same bytes read, the same
/// counters, with segments out of order and checksums on (the pieces are
/// put together) or off (the payload is held by reference and read out in
/// place).
#[test]
fn segments_in_parts_are_handled_as_whole_segments() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 11 + 3) as u8).collect();
    for checksums in [true, false] {
        let config = Config {
            checksums,
            ..fast_config()
        };
        let (mut c, s1) = handshake(config.clone(), config.clone());
        let (_, s2) = handshake(config.clone(), config);
        let (mut whole, mut parts) = (s1.unwrap(), s2.unwrap());
        let (mut written, mut read_whole, mut read_parts) = (0, Vec::new(), Vec::new());
        let (mut now, mut in_place) = (Instant::ZERO, 0usize);
        let mut scratch = vec![0u8; 1 << 16];
        for round in 0.. {
            assert!(round < 10_000, "the transfer stalled");
            written += c.write(&data[written..]);
            let mut segments = drain(&mut c, now);
            // Every third flight arrives with its first two segments
            // swapped: the second one waits in the receive buffer.
            if round % 3 == 0 && segments.len() >= 2 {
                segments.swap(0, 1);
            }
            for seg in &segments {
                let _ = whole.handle_segment(now, seg);
                let header = usize::from(seg[12] >> 4) * 4;
                let payload = Bytes::copy_from_slice(&seg[header..]);
                let _ = parts.handle_segment_parts(now, &seg[..header], &payload, false);
            }
            loop {
                let n = whole.read(&mut scratch);
                read_whole.extend_from_slice(&scratch[..n]);
                if n == 0 {
                    break;
                }
            }
            loop {
                if let Some(chunk) = parts.read_in_place(usize::MAX) {
                    in_place += chunk.len();
                    read_parts.extend_from_slice(&chunk);
                    continue;
                }
                let n = parts.read(&mut scratch);
                read_parts.extend_from_slice(&scratch[..n]);
                if n == 0 {
                    break;
                }
            }
            let acks = drain(&mut whole, now);
            assert_eq!(acks, drain(&mut parts, now), "checksums {checksums}");
            for ack in &acks {
                let _ = c.handle_segment(now, ack);
            }
            if read_whole.len() == data.len() {
                break;
            }
            now += Duration::from_millis(1);
            c.handle_timeout(now);
            whole.handle_timeout(now);
            parts.handle_timeout(now);
        }
        assert_eq!(read_whole, data);
        assert_eq!(read_parts, data);
        assert_eq!(whole.stats(), parts.stats());
        // With checksums the pieces were put together and copied; without,
        // in-order payloads stayed where they were handed over.
        if checksums {
            assert_eq!(in_place, 0);
        } else {
            assert!(
                in_place > data.len() / 2,
                "{in_place} of {} in place",
                data.len()
            );
        }
    }
}

/// Moves `bytes` from client to server through `pipe`, the server's
/// application reading everything as it arrives; returns the virtual
/// time it took.
fn push_through(pipe: &mut Pipe, bytes: usize) -> Duration {
    let start = pipe.now();
    let data: Vec<u8> = (0..bytes).map(|i| (i * 13 + 7) as u8).collect();
    let (mut written, mut received) = (0, Vec::with_capacity(bytes));
    let mut buf = vec![0u8; 1 << 16];
    while received.len() < bytes {
        written += pipe.client().write(&data[written..]);
        let server = pipe.server().unwrap();
        loop {
            let n = server.read(&mut buf);
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
        }
        assert!(pipe.step().unwrap(), "stalled at {} bytes", received.len());
    }
    assert!(received == data, "bytes differ");
    pipe.now() - start
}

/// Autotuned buffers start at twenty segments (at least 64 KiB) and grow
/// with the transfer: a sender in slow start is not held back by the
/// receive window (the transfer takes no longer than with the whole
/// buffer offered from the start), and neither buffer passes its
/// ceiling.
#[test]
fn autotuned_buffers_start_small_and_keep_up_with_slow_start() {
    let ceiling = 8 << 20;
    let fixed = Config {
        recv_buffer: ceiling,
        send_buffer: ceiling,
        ..fast_config()
    };
    let tuned = Config {
        buffer_autotuning: true,
        ..fixed.clone()
    };
    let mut pipe = established_pipe(tuned.clone(), tuned);
    assert_eq!(pipe.server().unwrap().recv_buffer_limit(), 64 << 10);
    assert_eq!(pipe.client().send_buffer_limit(), 64 << 10);
    let tuned_time = push_through(&mut pipe, 6 << 20);
    let recv_limit = pipe.server().unwrap().recv_buffer_limit();
    let send_limit = pipe.client().send_buffer_limit();
    assert!(
        recv_limit > 1 << 20 && recv_limit <= ceiling,
        "{recv_limit}"
    );
    assert!(
        send_limit > 1 << 20 && send_limit <= ceiling,
        "{send_limit}"
    );

    let mut pipe = established_pipe(fixed.clone(), fixed);
    assert_eq!(pipe.server().unwrap().recv_buffer_limit(), ceiling);
    let fixed_time = push_through(&mut pipe, 6 << 20);
    assert!(
        tuned_time.as_secs_f64() <= 1.1 * fixed_time.as_secs_f64(),
        "autotuned {tuned_time:?} against {fixed_time:?}"
    );
}

/// An autotuned window takes a margin wider than Linux's only out of its
/// endpoint's budget: with room, it grows past the window it would have
/// had; with none (other windows hold it all), it is exactly that window;
/// and it gives its bytes back when the connection goes.
#[test]
#[cfg(feature = "std")]
fn autotuned_windows_take_the_wider_margin_only_from_the_budget() {
    let tuned = Config {
        recv_buffer: 64 << 20,
        send_buffer: 64 << 20,
        buffer_autotuning: true,
        ..fast_config()
    };
    let run = |budget: Option<alloc::sync::Arc<WindowBudget>>| {
        let mut pipe = established_pipe(tuned.clone(), tuned.clone());
        if let Some(b) = &budget {
            pipe.server().unwrap().share_window_budget(b.clone());
            assert_eq!(b.used_bytes(), 64 << 10, "the first window is counted");
        }
        push_through(&mut pipe, 6 << 20);
        let limit = pipe.server().unwrap().recv_buffer_limit() as u64;
        if let Some(b) = &budget {
            assert_eq!(b.used_bytes(), limit);
        }
        drop(pipe);
        if let Some(b) = &budget {
            assert_eq!(b.used_bytes(), 0, "given back");
        }
        limit
    };
    let plain = run(None);
    let wide = run(Some(alloc::sync::Arc::new(WindowBudget::new(64 << 20))));
    let none_left = run(Some(alloc::sync::Arc::new(WindowBudget::new(0))));
    assert!(wide > plain, "{wide} against {plain}");
    assert_eq!(none_left, plain);
}
