//! Tcl scripts for ns-2: the dumbbell of the cross-check and the speed
//! benchmark. Every parameter the comparison depends on is written out
//! explicitly, so a script documents the exact ns-2 setup and does not
//! lean on defaults that changed between ns-2 releases.

use super::{Ns2Dumbbell, Ns2Sink};
use crate::time::Duration;
use std::fmt::Write;

/// Name of the trace file a dumbbell script writes, in its directory.
pub(crate) const TRACE_FILE: &str = "trace.tr";

/// Prefix of the per-flow summary lines a dumbbell script prints.
pub(crate) const FLOW_LINE: &str = "ackwise-flow";

/// Prefix of the summary line the benchmark script prints.
pub(crate) const BENCH_LINE: &str = "ackwise-bench";

/// Seconds as a plain Tcl number (ns-2 reads plain numbers as seconds and
/// bits per second).
pub(crate) fn secs(d: Duration) -> String {
    format!("{:.9}", d.as_secs_f64())
}

/// ns-2 node id of flow `i`'s sender; the routers are nodes 0 and 1 and
/// each flow adds its sender and then its receiver (sender + 1).
pub(crate) fn sender_node(i: usize) -> u32 {
    u32::try_from(2 + 2 * i).unwrap_or(u32::MAX)
}

/// Left router (bottleneck input for data).
pub(crate) const LEFT_ROUTER: u32 = 0;
/// Right router.
pub(crate) const RIGHT_ROUTER: u32 = 1;

/// Sender settings shared by the dumbbell and the benchmark: one-way SACK
/// TCP with a window large enough never to limit the flow (ns-2's default
/// `window_` of 20 packets would cap it well below these links' BDPs).
pub(crate) fn sender_settings(out: &mut String, agent: &str, d: &Ns2Dumbbell) {
    let _ = writeln!(out, "    {agent} set packetSize_ {}", d.payload_bytes);
    let _ = writeln!(out, "    {agent} set window_ 1000000");
    let _ = writeln!(
        out,
        "    {agent} set windowInit_ {}",
        d.initial_window_segments
    );
    let _ = writeln!(out, "    {agent} set syn_ true");
    let _ = writeln!(out, "    {agent} set timestamps_ false");
    let _ = writeln!(out, "    {agent} set maxburst_ 0");
    let _ = writeln!(out, "    {agent} set minrto_ {}", secs(d.min_rto));
    let _ = writeln!(out, "    {agent} set rtxcur_init_ {}", secs(d.initial_rto));
    let _ = writeln!(out, "    {agent} set tcpTick_ {}", secs(d.tcp_tick));
    let _ = writeln!(
        out,
        "    {agent} set increase_num_ {}",
        d.ca_increase_segments
    );
}

pub(crate) fn sink_class(sink: Ns2Sink) -> &'static str {
    match sink {
        Ns2Sink::AckEvery => "Agent/TCPSink/Sack1",
        Ns2Sink::DelayedAck => "Agent/TCPSink/Sack1/DelAck",
    }
}

/// The script for `d`: it writes [`TRACE_FILE`], prints one
/// [`FLOW_LINE`] per flow at the horizon and exits.
pub(crate) fn dumbbell(d: &Ns2Dumbbell) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# ackwise cross-check: {} flow(s) over a dumbbell",
        d.flows
    );
    s.push_str("set ns [new Simulator]\n");
    let _ = writeln!(s, "set tf [open {TRACE_FILE} w]");
    s.push_str("$ns trace-all $tf\n");
    // Node creation order fixes the ids the trace analysis relies on.
    s.push_str("set r0 [$ns node]\nset r1 [$ns node]\n");
    let _ = writeln!(
        s,
        "$ns duplex-link $r0 $r1 {} {} DropTail",
        d.bottleneck_rate_bps,
        secs(d.bottleneck_delay)
    );
    let _ = writeln!(s, "$ns queue-limit $r0 $r1 {}", d.queue_limit_packets);
    let _ = writeln!(s, "$ns queue-limit $r1 $r0 {}", d.queue_limit_packets);
    let _ = writeln!(s, "for {{set i 0}} {{$i < {}}} {{incr i}} {{", d.flows);
    s.push_str("    set src($i) [$ns node]\n    set dst($i) [$ns node]\n");
    let access = format!("{} {} DropTail", d.access_rate_bps, secs(d.access_delay));
    let _ = writeln!(s, "    $ns duplex-link $src($i) $r0 {access}");
    let _ = writeln!(s, "    $ns duplex-link $r1 $dst($i) {access}");
    for (a, b) in [
        ("$src($i)", "$r0"),
        ("$r0", "$src($i)"),
        ("$r1", "$dst($i)"),
        ("$dst($i)", "$r1"),
    ] {
        let _ = writeln!(
            s,
            "    $ns queue-limit {a} {b} {}",
            d.access_queue_limit_packets
        );
    }
    s.push_str("    set tcp($i) [new Agent/TCP/Sack1]\n");
    s.push_str("    $tcp($i) set fid_ $i\n");
    sender_settings(&mut s, "$tcp($i)", d);
    let _ = writeln!(s, "    set sink($i) [new {}]", sink_class(d.sink));
    if d.sink == Ns2Sink::DelayedAck {
        let _ = writeln!(s, "    $sink($i) set interval_ {}", secs(d.delack_interval));
    }
    s.push_str("    $ns attach-agent $src($i) $tcp($i)\n");
    s.push_str("    $ns attach-agent $dst($i) $sink($i)\n");
    s.push_str("    $ns connect $tcp($i) $sink($i)\n");
    let _ = writeln!(
        s,
        "    $ns at [expr $i * {}] \"$tcp($i) advance {}\"",
        secs(d.start_stagger),
        d.segments
    );
    s.push_str("}\n");
    let _ = writeln!(s, "proc finish {{}} {{");
    s.push_str("    global ns tf tcp\n    $ns flush-trace\n    close $tf\n");
    let _ = writeln!(s, "    for {{set i 0}} {{$i < {}}} {{incr i}} {{", d.flows);
    let _ = writeln!(
        s,
        "        puts \"{FLOW_LINE} $i [$tcp($i) set ndatapack_] [$tcp($i) set nrexmitpack_] [$tcp($i) set ack_]\""
    );
    s.push_str("    }\n    exit 0\n}\n");
    let _ = writeln!(s, "$ns at {} finish", secs(d.horizon));
    s.push_str("$ns run\n");
    s
}

/// The benchmark script: one flow over a single link pair, no trace, and
/// one [`BENCH_LINE`] with the data packets sent by the horizon.
pub(crate) fn bench(d: &Ns2Dumbbell) -> String {
    let mut s = String::new();
    s.push_str("# ackwise bench: one flow, no trace\n");
    s.push_str("set ns [new Simulator]\nset a [$ns node]\nset b [$ns node]\n");
    let _ = writeln!(
        s,
        "$ns duplex-link $a $b {} {} DropTail",
        d.bottleneck_rate_bps,
        secs(d.bottleneck_delay)
    );
    let _ = writeln!(s, "$ns queue-limit $a $b {}", d.queue_limit_packets);
    let _ = writeln!(s, "$ns queue-limit $b $a {}", d.queue_limit_packets);
    let _ = writeln!(
        s,
        "for {{set i 0}} {{$i < {}}} {{incr i}} {{",
        d.flows.max(1)
    );
    s.push_str("    set tcp($i) [new Agent/TCP/Sack1]\n");
    sender_settings(&mut s, "$tcp($i)", d);
    let _ = writeln!(s, "    set sink($i) [new {}]", sink_class(d.sink));
    s.push_str("    $ns attach-agent $a $tcp($i)\n    $ns attach-agent $b $sink($i)\n");
    s.push_str("    $ns connect $tcp($i) $sink($i)\n");
    let _ = writeln!(s, "    $ns at 0 \"$tcp($i) advance {}\"", d.segments);
    s.push_str("}\n");
    // A proc, so that the counters are read at the horizon and not when
    // the event is scheduled.
    let _ = writeln!(
        s,
        "proc finish {{}} {{\n    global tcp\n    set n 0\n    foreach i [array names tcp] {{ incr n [$tcp($i) set ndatapack_] }}\n    puts \"{BENCH_LINE} $n\"\n    exit 0\n}}"
    );
    let _ = writeln!(s, "$ns at {} finish", secs(d.horizon));
    s.push_str("$ns run\n");
    s
}
