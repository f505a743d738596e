//! Per-flow dumbbells without a trace, for the gauntlet's ns-2 check:
//! each flow its own start, size, access delay and sink; an asymmetric
//! reverse direction; a RED bottleneck; Bernoulli random loss through
//! ns-2's `ErrorModel`. Completion comes from the sender agent's `done`
//! callback (ns-2 calls it when the last segment is acknowledged), so a
//! run of millions of packets costs no trace file.

use super::process::{self, TempDir};
use super::tcl::secs;
use super::{Ns2Dumbbell, Ns2Error, Ns2Sink};
use crate::time::Duration;
use std::fmt::Write;

/// One flow of an untraced run.
#[derive(Debug, Clone, PartialEq)]
pub struct Ns2FlowSpec {
    /// When the sender is told to send (`advance`).
    pub start: Duration,
    /// Data segments it sends.
    pub segments: u64,
    /// One-way delay of each of its two access links.
    pub access_delay: Duration,
    /// Its receiving agent.
    pub sink: Ns2Sink,
}

/// RED on the forward bottleneck (`Queue/RED`, gentle, in packets).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns2Red {
    /// `thresh_`, packets.
    pub min_th_packets: f64,
    /// `maxthresh_`, packets.
    pub max_th_packets: f64,
    /// `q_weight_`.
    pub w_q: f64,
    /// Drop probability at `maxthresh_` (`linterm_` is its inverse).
    pub max_p: f64,
}

/// What an untraced run reports per flow.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Ns2FlowDone {
    /// When the sender saw its last segment acknowledged, from the start
    /// of the run; `None` if it did not by the horizon.
    pub done_at: Option<Duration>,
    /// `ndatapack_`: data packets sent (the SYN included).
    pub data_packets: u64,
    /// `nrexmitpack_`: retransmitted packets.
    pub retransmissions: u64,
    /// `nackpack_`: ACKs the sender received.
    pub acks_received: u64,
    /// `nrexmit_`: retransmission timeouts.
    pub timeouts: u64,
}

/// Prefix of the per-flow lines an untraced script prints at the horizon.
const DONE_LINE: &str = "ackwise-done";

impl Ns2Dumbbell {
    /// Runs [`per_flow`](Self::per_flow)'s flows (which replace `flows`,
    /// `segments`, `start_stagger`, `access_delay` and `sink`) without a
    /// trace, with the asymmetric reverse rate, RED and random loss if
    /// set.
    pub fn run_untraced(&self) -> Result<Vec<Ns2FlowDone>, Ns2Error> {
        let bad = |field, problem| Err(Ns2Error::Invalid { field, problem });
        if self.per_flow.is_empty() {
            return bad("per_flow", "needs at least one flow");
        }
        if self.per_flow.iter().any(|f| f.segments == 0) {
            return bad("per_flow", "segments must be at least 1");
        }
        if !(0.0..1.0).contains(&self.loss_rate) {
            return bad("loss_rate", "must be in [0, 1)");
        }
        if self.reverse_rate_bps == Some(0) {
            return bad("reverse_rate_bps", "must be positive");
        }
        if let Some(r) = self.red {
            if !(r.min_th_packets >= 0.0 && r.max_th_packets > r.min_th_packets) {
                return bad("red", "needs 0 <= min_th < max_th");
            }
            if !(r.max_p > 0.0 && r.max_p <= 1.0 && r.w_q > 0.0 && r.w_q <= 1.0) {
                return bad("red", "max_p and w_q must be in (0, 1]");
            }
        }
        Ns2Dumbbell {
            flows: self.per_flow.len(),
            ..self.clone()
        }
        .validate()?;
        let dir = TempDir::new()?;
        let finished = process::run_script(&dir, &self.untraced_script(), self.wall_timeout)?;
        parse_done(&finished.stdout, self.per_flow.len())
    }

    /// The script of [`run_untraced`](Self::run_untraced).
    pub fn untraced_script(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# ackwise gauntlet: {} flow(s), no trace",
            self.per_flow.len()
        );
        s.push_str("set ns [new Simulator]\nset r0 [$ns node]\nset r1 [$ns node]\n");
        let forward_queue = match self.red {
            Some(r) => {
                // Class defaults, set before the link creates its queue;
                // every one that shapes RED is written out.
                for (k, v) in [
                    ("bytes_", "false".to_string()),
                    ("queue_in_bytes_", "false".into()),
                    ("thresh_", r.min_th_packets.to_string()),
                    ("maxthresh_", r.max_th_packets.to_string()),
                    ("q_weight_", r.w_q.to_string()),
                    ("linterm_", (1.0 / r.max_p).to_string()),
                    ("gentle_", "true".into()),
                    ("setbit_", "false".into()),
                    ("mean_pktsize_", (self.payload_bytes + 40).to_string()),
                ] {
                    let _ = writeln!(s, "Queue/RED set {k} {v}");
                }
                "RED"
            }
            None => "DropTail",
        };
        let delay = secs(self.bottleneck_delay);
        let _ = writeln!(
            s,
            "$ns simplex-link $r0 $r1 {} {delay} {forward_queue}",
            self.bottleneck_rate_bps
        );
        let _ = writeln!(
            s,
            "$ns simplex-link $r1 $r0 {} {delay} DropTail",
            self.reverse_rate_bps.unwrap_or(self.bottleneck_rate_bps)
        );
        let _ = writeln!(s, "$ns queue-limit $r0 $r1 {}", self.queue_limit_packets);
        let _ = writeln!(s, "$ns queue-limit $r1 $r0 {}", self.queue_limit_packets);
        if self.loss_rate > 0.0 {
            let _ = writeln!(
                s,
                "set em [new ErrorModel]\n$em set rate_ {}\n$em unit pkt\n\
                 $em ranvar [new RandomVariable/Uniform]\n$em drop-target [new Agent/Null]\n\
                 $ns lossmodel $em $r0 $r1",
                self.loss_rate
            );
        }
        for (i, f) in self.per_flow.iter().enumerate() {
            let _ = writeln!(s, "set src({i}) [$ns node]\nset dst({i}) [$ns node]");
            let access = format!("{} {} DropTail", self.access_rate_bps, secs(f.access_delay));
            let _ = writeln!(s, "$ns duplex-link $src({i}) $r0 {access}");
            let _ = writeln!(s, "$ns duplex-link $r1 $dst({i}) {access}");
            for (a, b) in [("src", "r0"), ("r0", "src"), ("r1", "dst"), ("dst", "r1")] {
                let node = |n: &str| {
                    if n.starts_with('r') {
                        format!("${n}")
                    } else {
                        format!("${n}({i})")
                    }
                };
                let _ = writeln!(
                    s,
                    "$ns queue-limit {} {} {}",
                    node(a),
                    node(b),
                    self.access_queue_limit_packets
                );
            }
            let _ = writeln!(
                s,
                "set tcp({i}) [new Agent/TCP/Sack1]\n$tcp({i}) set fid_ {i}"
            );
            super::tcl::sender_settings(&mut s, &format!("$tcp({i})"), self);
            let _ = writeln!(s, "set sink({i}) [new {}]", super::tcl::sink_class(f.sink));
            if f.sink == Ns2Sink::DelayedAck {
                let _ = writeln!(s, "$sink({i}) set interval_ {}", secs(self.delack_interval));
            }
            let _ = writeln!(
                s,
                "$ns attach-agent $src({i}) $tcp({i})\n$ns attach-agent $dst({i}) $sink({i})\n\
                 $ns connect $tcp({i}) $sink({i})"
            );
            // ns-2 calls `done` on the agent once its last segment is
            // acknowledged.
            let _ = writeln!(
                s,
                "set done({i}) -1\n$tcp({i}) proc done {{}} {{ global ns done; set done({i}) [$ns now] }}"
            );
            let _ = writeln!(
                s,
                "$ns at {} \"$tcp({i}) advance {}\"",
                secs(f.start),
                f.segments
            );
        }
        let n = self.per_flow.len();
        let _ = writeln!(s, "proc finish {{}} {{\n    global tcp done");
        let _ = writeln!(s, "    for {{set i 0}} {{$i < {n}}} {{incr i}} {{");
        let _ = writeln!(
            s,
            "        puts \"{DONE_LINE} $i $done($i) [$tcp($i) set ndatapack_] [$tcp($i) set nrexmitpack_] [$tcp($i) set nackpack_] [$tcp($i) set nrexmit_]\""
        );
        s.push_str("    }\n    exit 0\n}\n");
        let _ = writeln!(s, "$ns at {} finish", secs(self.horizon));
        s.push_str("$ns run\n");
        s
    }
}

/// Reads the [`DONE_LINE`]s of `n` flows.
fn parse_done(stdout: &str, n: usize) -> Result<Vec<Ns2FlowDone>, Ns2Error> {
    let mut flows = vec![None; n];
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix(DONE_LINE) else {
            continue;
        };
        let bad = || Ns2Error::Output(format!("bad summary line `{line}`"));
        let v: Vec<&str> = rest.split_ascii_whitespace().collect();
        let [i, done, data, rexmit, acks, timeouts] = v[..] else {
            return Err(bad());
        };
        let num = |x: &str| x.parse::<u64>().map_err(|_| bad());
        let i = usize::try_from(num(i)?).map_err(|_| bad())?;
        let done: f64 = done.parse().map_err(|_| bad())?;
        let slot = flows.get_mut(i).ok_or_else(bad)?;
        *slot = Some(Ns2FlowDone {
            done_at: (done >= 0.0).then(|| Duration::from_secs_f64(done)),
            data_packets: num(data)?,
            retransmissions: num(rexmit)?,
            acks_received: num(acks)?,
            timeouts: num(timeouts)?,
        });
    }
    flows
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Ns2Error::Output(format!("fewer than {n} per-flow summary lines")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_lines_parse_and_missing_ones_are_an_error() {
        let out = "noise\nackwise-done 1 -1 10 0 5 0\nackwise-done 0 2.5 100 3 60 2\n";
        let flows = parse_done(out, 2).unwrap();
        assert_eq!(flows[0].done_at, Some(Duration::from_millis(2500)));
        assert_eq!((flows[0].data_packets, flows[0].retransmissions), (100, 3));
        assert_eq!(flows[0].timeouts, 2);
        assert_eq!(flows[1].done_at, None);
        assert!(parse_done(out, 3).is_err());
        assert!(parse_done("ackwise-done 0 x 1 1 1 0", 1).is_err());
        // A line without the timeout count is malformed, not zero.
        assert!(parse_done("ackwise-done 0 2.5 100 3 60", 1).is_err());
    }

    #[test]
    fn an_asymmetric_red_lossy_path_runs_and_loss_slows_it() {
        if !super::super::ns2_available() {
            eprintln!("skipped: ns-2 is not installed");
            return;
        }
        let flow = |start_ms, sink| Ns2FlowSpec {
            start: Duration::from_millis(start_ms),
            segments: 300,
            access_delay: Duration::from_millis(5),
            sink,
        };
        let mut d = Ns2Dumbbell::new(1, 5_000_000, Duration::from_millis(20), 30);
        d.per_flow = vec![flow(0, Ns2Sink::AckEvery), flow(300, Ns2Sink::DelayedAck)];
        d.reverse_rate_bps = Some(500_000);
        d.red = Some(Ns2Red {
            min_th_packets: 6.0,
            max_th_packets: 18.0,
            w_q: 0.002,
            max_p: 0.1,
        });
        d.horizon = Duration::from_secs(60);
        let script = d.untraced_script();
        for needle in [
            "simplex-link $r1 $r0 500000",
            "Queue/RED set thresh_ 6",
            "RED\n",
        ] {
            assert!(script.contains(needle), "{needle}: {script}");
        }
        let clean = d.run_untraced().unwrap();
        assert!(clean.iter().all(|f| f.done_at.is_some()), "{clean:?}");
        d.loss_rate = 0.03;
        let lossy = d.run_untraced().unwrap();
        let end = |r: &[Ns2FlowDone]| r.iter().filter_map(|f| f.done_at).max().unwrap();
        assert!(end(&lossy) > end(&clean), "{lossy:?} vs {clean:?}");
        assert!(lossy.iter().map(|f| f.retransmissions).sum::<u64>() > 0);
    }
}
