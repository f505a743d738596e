//! Parser and analysis tests on hand-written trace lines, and (when `ns` is
//! installed) a check that the trace analysis agrees with ns-2's own
//! counters.

use super::trace::{parse_line, EventKind, PacketType, TraceError};
use super::*;

#[test]
fn parses_each_event_kind() {
    let e = parse_line("+ 0.100439 2 0 tcp 1040 ------- 0 2.0 3.0 1 2", 1).unwrap();
    assert_eq!(e.kind, EventKind::Enqueue);
    assert_eq!(e.at, Duration::from_nanos(100_439_000));
    assert_eq!((e.from_node, e.to_node), (2, 0));
    assert_eq!(e.packet, PacketType::Tcp);
    assert_eq!(e.size_bytes, 1040);
    assert_eq!((e.flow_id, e.src_node, e.dst_node), (0, 2, 3));
    assert_eq!((e.seqno, e.uid), (1, 2));
    let kinds = [
        ("-", EventKind::Dequeue),
        ("r", EventKind::Receive),
        ("d", EventKind::Drop),
    ];
    for (c, k) in kinds {
        let line = format!("{c} 6.46599 0 2 ack 48 ------- 3 3.0 2.0 1000 2041");
        let e = parse_line(&line, 7).unwrap();
        assert_eq!(e.kind, k);
        assert_eq!(e.packet, PacketType::Ack);
        assert_eq!(e.flow_id, 3);
    }
    let other = parse_line("r 1e-3 4 5 cbr 210 ------- 1 4.0 5.1 -1 9", 1).unwrap();
    assert_eq!(other.packet, PacketType::Other);
    assert_eq!(other.seqno, -1);
    assert_eq!(other.at, Duration::from_millis(1));
}

#[test]
fn malformed_lines_are_typed_errors() {
    let cases: &[(&str, &str)] = &[
        ("x 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 1 2", "event"),
        ("+ abc 2 0 tcp 1040 ------- 0 2.0 3.0 1 2", "time"),
        ("+ -0.5 2 0 tcp 1040 ------- 0 2.0 3.0 1 2", "time"),
        ("+ NaN 2 0 tcp 1040 ------- 0 2.0 3.0 1 2", "time"),
        ("+ inf 2 0 tcp 1040 ------- 0 2.0 3.0 1 2", "time"),
        ("+ 0.1 -2 0 tcp 1040 ------- 0 2.0 3.0 1 2", "from node"),
        ("+ 0.1 2 0 tcp big ------- 0 2.0 3.0 1 2", "size"),
        ("+ 0.1 2 0 tcp 1040 ------- 0 2 3.0 1 2", "source address"),
        (
            "+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.x 1 2",
            "destination address",
        ),
        (
            "+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 1.5 2",
            "sequence number",
        ),
        ("+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 1 -2", "packet id"),
    ];
    for (line, field) in cases {
        match parse_line(line, 42) {
            Err(TraceError::BadField {
                line: 42, field: f, ..
            }) => assert_eq!(f, *field, "{line}"),
            other => panic!("{line}: {other:?}"),
        }
    }
    for (line, found) in [
        ("", 0),
        ("+ 0.1 2 0 tcp", 5),
        ("+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 1 2 extra", 13),
    ] {
        assert_eq!(
            parse_line(line, 3),
            Err(TraceError::FieldCount { line: 3, found })
        );
    }
    // Non-ASCII and very long garbage come back as errors, shortened.
    let long = "é".repeat(5000);
    let err = parse_line(&format!("{long} 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 1 2"), 1).unwrap_err();
    assert!(err.to_string().len() < 200, "{err}");
}

/// One flow of three segments; segment 2 is dropped once and resent.
const TRACE: &str = "\
+ 0 2 0 tcp 40 ------- 0 2.0 3.0 0 0
r 0.05 0 2 ack 40 ------- 0 3.0 2.0 0 1
+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 1 2
+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 2 3
+ 0.1 2 0 tcp 1040 ------- 0 2.0 3.0 3 4
d 0.11 0 1 tcp 1040 ------- 0 2.0 3.0 2 3
+ 0.15 3 1 ack 40 ------- 0 3.0 2.0 1 5

+ 0.16 3 1 ack 48 ------- 0 3.0 2.0 1 6
r 0.2 0 2 ack 40 ------- 0 3.0 2.0 1 5
+ 0.3 2 0 tcp 1040 ------- 0 2.0 3.0 2 7
+ 0.35 3 1 ack 40 ------- 0 3.0 2.0 3 8
d 0.36 1 0 ack 40 ------- 0 3.0 2.0 3 8
+ 0.45 3 1 ack 40 ------- 0 3.0 2.0 3 9
r 0.5 0 2 ack 40 ------- 0 3.0 2.0 3 9
r 0.6 0 2 ack 40 ------- 0 3.0 2.0 3 10
";

#[test]
fn analysis_counts_a_hand_written_flow() {
    let d = Ns2Dumbbell::new(1, 1_000_000, Duration::from_millis(40), 10).segments(3);
    let r = analyse(TRACE.as_bytes(), &d).unwrap();
    assert_eq!(r.trace_events, 15);
    assert_eq!((r.bottleneck_drops, r.reverse_drops), (1, 1));
    let f = &r.flows[0];
    assert_eq!((f.data_packets, f.data_bytes), (4, 4160));
    assert_eq!((f.ack_packets, f.ack_bytes), (4, 168));
    assert_eq!((f.retransmissions, f.drops), (1, 1));
    assert_eq!(f.first_data_at, Some(Duration::from_millis(100)));
    assert_eq!(f.last_ack_at, Some(Duration::from_millis(500)));
    assert_eq!(f.completion_time, Some(Duration::from_millis(400)));
    let goodput = f.goodput_bps.unwrap();
    assert!((goodput - 60_000.0).abs() < 1e-6, "{goodput}");
}

#[test]
fn unfinished_flow_has_no_completion_time() {
    let d = Ns2Dumbbell::new(1, 1_000_000, Duration::from_millis(40), 10).segments(4);
    let r = analyse(TRACE.as_bytes(), &d).unwrap();
    assert_eq!(r.flows[0].completion_time, None);
    assert_eq!(r.flows[0].goodput_bps, None);
}

#[test]
fn analysis_reports_the_bad_line() {
    let d = Ns2Dumbbell::new(1, 1_000_000, Duration::from_millis(40), 10);
    let broken = format!("{TRACE}+ 0.7 2 0 tcp 1040 -------\n");
    match analyse(broken.as_bytes(), &d) {
        Err(Ns2Error::Trace(TraceError::FieldCount { line: 17, found: 7 })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn summary_lines_fill_agent_counters_and_missing_ones_are_errors() {
    let mut flows = vec![Ns2Flow::default(); 2];
    read_agent_counters(
        "junk\nackwise-flow 1 10 2 -1\nackwise-flow 0 5 0 4\n",
        &mut flows,
    )
    .unwrap();
    assert_eq!(
        (flows[1].agent_data_packets, flows[1].agent_retransmissions),
        (10, 2)
    );
    assert_eq!(flows[0].agent_data_packets, 5);
    for out in [
        "ackwise-flow 0 5 0 4\n",
        "ackwise-flow 0 x 0\nackwise-flow 1 1 1",
        "ackwise-flow 7 1 1 1\n",
    ] {
        let mut flows = vec![Ns2Flow::default(); 2];
        assert!(
            matches!(
                read_agent_counters(out, &mut flows),
                Err(Ns2Error::Output(_))
            ),
            "{out}"
        );
    }
}

#[test]
fn bad_parameters_are_rejected_before_running() {
    let base = Ns2Dumbbell::new(1, 1_000_000, Duration::from_millis(40), 10);
    for d in [
        Ns2Dumbbell {
            flows: 0,
            ..base.clone()
        },
        Ns2Dumbbell {
            queue_limit_packets: 0,
            ..base.clone()
        },
        Ns2Dumbbell {
            segments: 0,
            ..base.clone()
        },
        Ns2Dumbbell {
            bottleneck_rate_bps: 0,
            ..base.clone()
        },
        Ns2Dumbbell {
            tcp_tick: Duration::ZERO,
            ..base.clone()
        },
    ] {
        assert!(matches!(d.run(), Err(Ns2Error::Invalid { .. })), "{d:?}");
    }
}

#[test]
fn scripts_name_every_setting_explicitly() {
    let d = Ns2Dumbbell::new(2, 1_500_000, Duration::from_millis(40), 19).sink(Ns2Sink::DelayedAck);
    let s = tcl::dumbbell(&d);
    for needle in [
        "Agent/TCPSink/Sack1/DelAck",
        "interval_ 0.100000000",
        "window_ 1000000",
        "windowInit_ 2",
        "minrto_ 0.200000000",
        "rtxcur_init_ 3.000000000",
        "tcpTick_ 0.010000000",
        "queue-limit $r0 $r1 19",
        "1500000 0.040000000 DropTail",
    ] {
        assert!(s.contains(needle), "{needle} missing from\n{s}");
    }
    assert!(!tcl::dumbbell(&d.clone().sink(Ns2Sink::AckEvery)).contains("DelAck"));
}

/// With ns-2 present: the trace analysis agrees with the agent's own
/// counters, and data and ACK sizes are ns-2's.
#[test]
fn trace_counts_match_the_agents_counters() {
    if !ns2_available() {
        eprintln!("skipped: ns-2 is not installed");
        return;
    }
    let d = Ns2Dumbbell::new(2, 1_000_000, Duration::from_millis(40), 8)
        .segments(200)
        .access_delay(Duration::from_millis(5))
        .start_stagger(Duration::from_millis(100));
    let r = d.run().unwrap();
    assert!(r.bottleneck_drops > 0, "{r:?}");
    for f in &r.flows {
        assert!(f.completion_time.is_some(), "{f:?}");
        // ndatapack_ counts the SYN too.
        assert_eq!(f.agent_data_packets, f.data_packets + 1, "{f:?}");
        assert_eq!(f.agent_retransmissions, f.retransmissions, "{f:?}");
        assert_eq!(f.data_bytes, f.data_packets * 1040, "{f:?}");
        assert!(f.ack_bytes >= f.ack_packets * 40, "{f:?}");
    }
}
