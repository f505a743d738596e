//! The paper 004 page's "How the lab differs from the paper": read from
//! the presets and the records rather than restated by hand, so the list
//! cannot drift from what ran.

use super::super::*;
use super::TRACE_RATE_MBPS;

/// TCP header bytes of every lab segment: the timestamp option (10
/// bytes padded to 12: the lab's MSS makes room for it) on top of the
/// fixed header.
fn tcp_header_bytes() -> u32 {
    crate::wire::HEADER_LEN as u32 + 12
}

/// Bytes a full-sized data segment of `s` takes on a link: payload, TCP
/// header with timestamps, and the IP overhead.
pub(super) fn link_bytes_per_segment(s: &crate::lab::LabScenario) -> u32 {
    u32::from(s.segment_bytes) + tcp_header_bytes() + s.overhead_bytes
}

/// Writes the section; `one_zero` is the 1-0 run.
pub(super) fn differences(md: &mut String, one_zero: &[RunRecord]) -> Result<(), LabError> {
    let base = presets::find("p004-1-0")?;
    let asym_preset = presets::find("p004-asym")?;
    let red_preset = presets::find("p004-red")?;
    let _ = writeln!(md, "## How the lab differs from the paper\n");
    let tcp_header = tcp_header_bytes();
    let mut ip_overhead = None;
    if let Some(p) = base.points.first() {
        let s = &p.scenario;
        ip_overhead = Some(s.overhead_bytes);
        let _ = writeln!(
            md,
            "- Initial window {} segment, as the paper's NewReno (sec. 2; the lab's default \
             is 4); maximum ACK delay {} ms.\n\
             - Minimum RTO {} ms (RFC 6298) instead of the lab's usual 200 ms: with 200 ms \
             the handshake's RTT sample gives a 300 ms RTO, which the delayed ACK of the \
             first segment loses to on a 100 ms path, and the spurious timeout leaves \
             NewReno in congestion avoidance from two segments, a handicap the paper's \
             NewReno did not have.\n\
             - Segments carry {} bytes of payload; with the TCP header, the timestamp \
             option and {} bytes of IP overhead they take {} bytes on a link, against the \
             paper's 1000-byte packets.",
            s.initial_window_segments,
            s.delayed_ack.as_secs_f64() * 1e3,
            s.min_rto.as_secs_f64() * 1e3,
            s.segment_bytes,
            s.overhead_bytes,
            link_bytes_per_segment(s),
        );
    }
    let (ack_bytes, acks) = one_zero
        .iter()
        .flat_map(|r| &r.flows)
        .fold((0u64, 0u64), |(b, n), f| {
            (b + f.ack_bytes, n + f.ack_packets)
        });
    if let (true, Some(ip)) = (acks > 0, ip_overhead) {
        let _ = writeln!(
            md,
            "- ACKs carry timestamps (the smartacking receivers' RTT samples come from their \
             echoes): {} bytes on a link, more with SACK blocks; {:.1} bytes on average in \
             the 1-0 runs, against the paper's 40.",
            tcp_header + ip,
            ack_bytes as f64 / acks as f64
        );
    }
    if let Some(reverse) = asym_preset
        .points
        .first()
        .and_then(|p| p.scenario.reverse.as_ref())
    {
        let _ = writeln!(
            md,
            "- Asymmetric: the slow reverse link runs RED marking ECN-capable ACKs \
             (thresholds 5 and 15 packets, {} packets of buffer), as in Balakrishnan et \
             al.'s setup the paper adopts; only ACC reacts to the marks.",
            reverse.buffer_packets
        );
    }
    let red_buffers: Vec<usize> = red_preset
        .points
        .iter()
        .map(|p| p.scenario.forward.buffer_packets)
        .collect();
    if let (Some(lo), Some(hi)) = (red_buffers.iter().min(), red_buffers.iter().max()) {
        let _ = writeln!(
            md,
            "- RED (figs. 12 and 18b): the paper does not give the RED routers' buffer; the \
             lab keeps half a BDP but at least twice max_th, {lo} to {hi} packets. `+fq` \
             replaces every bottleneck queue, RED included, with per-flow round robin."
        );
    }
    let _ = writeln!(
        md,
        "- Loss recovery at every sender is SACK-based (RFC 6675) rather than NewReno's \
         partial ACKs, except in the section \"With the paper's baseline\", where every \
         sender runs `+nosack` (NewReno, RFC 6582, as the paper's); the window growth is \
         NewReno's.\n\
         - Fig. 19: the compared connection is the second forward one (starting at \
         200 ms); the first forward connection is the parallel NewReno one.\n\
         - Window traces of the 2-2 configuration (fig. 7: 8 and 4 Mbit/s) are taken at \
         {} Mbit/s here, the capacity of figs. 6 and 15.",
        format_number(TRACE_RATE_MBPS, 1)
    );
    md.push('\n');

    Ok(())
}
