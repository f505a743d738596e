//! The paper 004 page's "Why the misses": for each row the summary can
//! miss, the figures of the same runs that show where the difference
//! comes from.

use super::super::*;
use super::{extreme, ratios, BASELINE};

/// Sum of `field` over the forward flows of a run.
fn forward_sum(r: &RunRecord, field: impl Fn(&run::FlowRecord) -> u64) -> u64 {
    r.flows.iter().filter(|f| !f.reverse).map(field).sum()
}

fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// Fig. 8 with SACK senders against the paper's NewReno.
fn fig8(md: &mut String, one_zero: &[RunRecord], nosack: &[RunRecord]) {
    let best = extreme(
        ratios(
            nosack,
            "smart+nosack",
            "da+nosack",
            RunRecord::mean_completion_s,
        ),
        false,
    );
    let Some((r, v)) = best else { return };
    let (Some(reno), Some(sack)) = (
        same_point(nosack, r, "da+nosack"),
        same_point(one_zero, r, BASELINE),
    ) else {
        return;
    };
    let rto = |r: &RunRecord| forward_sum(r, |f| f.timeouts);
    let _ = writeln!(
        md,
        "- **Fig. 8's 20 %.** With the paper's NewReno, smartacking is {v:.3}x NewReno's \
         time at {}: NewReno without SACK takes {} s with {} timeouts, and with ackwise's \
         SACK recovery `{BASELINE}` takes {} s with {}. Here smartacking's gain is \
         mostly the recovery it spares a sender that repairs one hole per round trip; \
         SACK recovery removes that cost for every receiver, and what is left is the faster \
         growth from more ACKs in slow start.",
        point_text(r),
        secs(reno.mean_completion_s()),
        rto(reno),
        secs(sack.mean_completion_s()),
        rto(sack),
    );
}

/// Fig. 13: smart against ACC on the slow ACK path.
fn fig13(md: &mut String, asym: &[RunRecord]) {
    let worst = extreme(
        ratios(asym, "smart", "acc", RunRecord::mean_completion_s)
            .into_iter()
            .filter(|(r, _)| r.params.get("reverse_kbps").is_some_and(|k| *k >= 21.0)),
        true,
    );
    let Some((smart, v)) = worst else { return };
    let Some(acc) = same_point(asym, smart, "acc") else {
        return;
    };
    let Some(kbps) = smart.params.get("reverse_kbps").copied() else {
        return;
    };
    let reverse_drops = |r: &RunRecord| r.links.get(1).map_or(0, |l| l.drops);
    let busy = |r: &RunRecord| forward_sum(r, |f| f.ack_bytes) as f64 * 8.0 / (kbps * 1e3);
    let _ = writeln!(
        md,
        "- **Fig. 13, smart against ACC ({v:.3}x at {}).** Neither loses a data segment \
         there ({} and {} forward drops); both are clocked by the ACK path. Smartacking's \
         receiver sends {} ACKs, {:.1} s of the {kbps} kbit/s reverse link against a {:.1} s \
         transfer, and the RED queue drops {} of them; ACC answers the queue's ECN marks and \
         sends {} ACKs ({:.1} s of the link), of which {} are dropped. The lab's ACKs are \
         52 bytes on a link against the paper's 40 (section \"How the lab differs\"), which \
         makes every ACK 30 % dearer on the path where smartacking's count matters most.",
        point_text(smart),
        smart.links.first().map_or(0, |l| l.drops),
        acc.links.first().map_or(0, |l| l.drops),
        forward_sum(smart, |f| f.ack_packets),
        busy(smart),
        smart.mean_completion_s().unwrap_or(f64::NAN),
        reverse_drops(smart),
        forward_sum(acc, |f| f.ack_packets),
        busy(acc),
        reverse_drops(acc),
    );
}

/// Fig. 18a: the parking lot's Jain index over completion times.
fn fig18a(md: &mut String, parking: &[RunRecord]) {
    let least = extreme(
        parking
            .iter()
            .filter(|r| r.strategy == "smart")
            .filter_map(|r| {
                Some((
                    r,
                    r.jain_index? - same_point(parking, r, BASELINE)?.jain_index?,
                ))
            }),
        false,
    );
    let Some((smart, _)) = least else { return };
    let Some(da) = same_point(parking, smart, BASELINE) else {
        return;
    };
    let times = |r: &RunRecord| {
        r.flows
            .iter()
            .map(|f| secs(f.completion_time_s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rtos = |r: &RunRecord| {
        r.flows
            .iter()
            .map(|f| f.timeouts.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        md,
        "- **Fig. 18a, the parking lot ({}).** The index is over completion times. With \
         smartacking the connections finish at {} s (timeouts {}), with NewReno at {} s \
         (timeouts {}): the last connection finishes at {} s against {} s, and the index \
         falls because one connection finishes far sooner, not because another finishes \
         later. The connections that cross several bottlenecks take many more timeouts \
         with smartacking; that cause is not isolated.",
        point_text(smart),
        times(smart),
        rtos(smart),
        times(da),
        rtos(da),
        secs(smart.last_completion_s()),
        secs(da.last_completion_s()),
    );
}

/// The smart-minrtt goal's worst point: `p004-friendly` compares means
/// over all four connections, three of which run NewReno.
fn friendly(md: &mut String, friendly: &[RunRecord]) {
    let worst = extreme(
        ratios(
            friendly,
            "smart-minrtt",
            BASELINE,
            RunRecord::mean_completion_s,
        ),
        true,
    );
    let Some((r, v)) = worst else { return };
    let Some(da) = same_point(friendly, r, BASELINE) else {
        return;
    };
    let _ = writeln!(
        md,
        "- **smart-minrtt in fig. 19's setup ({v:.3}x at {}).** The ratio is of the mean \
         over all four connections, three of which run NewReno. The compared connection \
         itself takes {} s against NewReno's {} s in its place; the parallel NewReno \
         connection takes {} s against {} s, and the last of the four finishes at {} s \
         against {} s.",
        point_text(r),
        secs(super::friendly_compared_s(r)),
        secs(super::friendly_compared_s(da)),
        secs(super::friendly_parallel_s(r)),
        secs(super::friendly_parallel_s(da)),
        secs(r.last_completion_s()),
        secs(da.last_completion_s()),
    );
}

/// The smart-minrtt goal's worst point over every preset, when it is not
/// the parallel-NewReno setup that [`friendly`] explains: how every
/// other strategy fared at the same point, and what `smart-minrtt` and
/// the baseline lost there.
fn minrtt_worst(md: &mut String, worst: Option<(&RunRecord, f64)>, every: &[&[RunRecord]]) {
    let Some((r, v)) = worst.filter(|(r, _)| r.preset != "p004-friendly") else {
        return;
    };
    let point: Vec<&RunRecord> = every
        .iter()
        .flat_map(|records| records.iter())
        .filter(|x| x.preset == r.preset && x.params == r.params)
        .collect();
    let Some(da_run) = point.iter().find(|x| x.strategy == BASELINE) else {
        return;
    };
    let Some(da) = da_run.mean_completion_s() else {
        return;
    };
    let others: Vec<(String, f64)> = point
        .iter()
        .filter(|x| x.strategy != BASELINE && x.strategy != "smart-minrtt")
        .filter_map(|x| Some((x.strategy.clone(), x.mean_completion_s()? / da)))
        .collect();
    let near = others.iter().filter(|(_, o)| (o - v).abs() <= 0.05).count();
    let listed: Vec<String> = others
        .iter()
        .map(|(name, o)| format!("`{name}` {o:.3}"))
        .collect();
    let lost = |x: &RunRecord| -> (u64, u64) {
        (
            x.links
                .iter()
                .filter(|l| l.name.starts_with("middle"))
                .map(|l| l.drops)
                .sum(),
            x.flows.iter().map(|f| f.timeouts).sum(),
        )
    };
    let (drops, rtos) = lost(r);
    let (da_drops, da_rtos) = lost(da_run);
    let _ = writeln!(
        md,
        "- **smart-minrtt against {BASELINE} ({v:.3}x at {}).** At the same point the other \
         strategies take, relative to {BASELINE}'s time: {}; {near} of those {} are within \
         0.05 of smart-minrtt's ratio, so the point measures how fast {BASELINE}'s own run \
         was more than what smart-minrtt costs. smart-minrtt's run lost {drops} packets at \
         the bottleneck queues (data and ACKs) and took {rtos} timeout(s), {BASELINE}'s \
         {da_drops} and {da_rtos}.",
        point_text(r),
        listed.join(", "),
        others.len(),
    );
}

/// The ACK count row's worst point.
fn ack_count(md: &mut String, sets: &[(&str, &[RunRecord])]) {
    let worst = extreme(
        sets.iter()
            .flat_map(|(_, records)| ratios(records, "smart", BASELINE, RunRecord::ack_packets)),
        true,
    );
    let Some((smart, v)) = worst else { return };
    let Some(da) = sets.iter().find_map(|(_, records)| {
        same_point(records, smart, BASELINE).filter(|d| d.preset == smart.preset)
    }) else {
        return;
    };
    let per_segment = |r: &RunRecord| {
        r.flows
            .iter()
            .map(|f| format!("{:.2}", f.ack_packets as f64 / f.data_packets.max(1) as f64))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Time per data segment at the bottleneck's full rate, and at each
    // connection's own goodput: what ISAT measures against what the
    // connection gets.
    let link_bytes = presets::find(&smart.preset).ok().and_then(|p| {
        p.points
            .first()
            .map(|pt| super::setup::link_bytes_per_segment(&pt.scenario))
    });
    let rate_bps = smart.params.get("rate_mbps").map(|m| m * 1e6);
    let spacing = match (link_bytes, rate_bps) {
        (Some(bytes), Some(rate)) if rate > 0.0 => {
            let bits = f64::from(bytes) * 8.0;
            let own: Vec<String> = smart
                .flows
                .iter()
                .filter_map(|f| f.goodput_bps.filter(|g| *g > 0.0))
                .map(|g| format!("{:.2}", bits / g * 1e3))
                .collect();
            format!(
                " Here a segment takes {:.3} ms at the bottleneck's rate, while the connections' \
                 goodputs give one every {} ms.",
                bits / rate * 1e3,
                own.join(", ")
            )
        }
        _ => String::new(),
    };
    let _ = writeln!(
        md,
        "- **Fewer ACKs than NewReno ({v:.3}x at {}).** Every smartacking receiver there \
         sends about one ACK per data segment (ACKs per segment by connection: {}), against \
         NewReno's delayed ACKs ({}): the receivers' saturation test never holds ACKs back. \
         The cause, measured by tracing the receivers' estimator (an experiment build, \
         p004-diffrtt at 5 and 10 Mbit/s): ISAT, the smoothed gap between consecutive \
         in-order arrivals (sec. 3.2), reads the bottleneck's own time per segment (its \
         median over the arrivals was exactly the link's 1.683 and 0.842 ms on all four \
         connections), because each sender's segments leave the shared queue in runs, \
         back to back, and the gaps where the other connection's run passes are few. \
         Each connection gets only part of the link, so CwndEst times ISAT, the time the \
         receiver expects the rest of the window to take, came to 0.52-0.63 of the \
         smoothed RTT (median over arrivals), with CwndEst if anything above the window \
         the connections' goodput and RTT imply, and LastSegmentTime < RTT, the test for \
         a link with room, held on 98-100% of arrivals.{spacing} The receiver measures the link, not its share of it; \
         `smart-minrtt`'s delayed-ACK floor keeps it at NewReno's count instead.",
        point_text(smart),
        per_segment(smart),
        per_segment(da),
    );
}

/// The runs the section reads.
pub(super) struct Runs<'a> {
    /// 1-0 with SACK senders.
    pub one_zero: &'a [RunRecord],
    /// 1-0 with the paper's NewReno (`+nosack`).
    pub nosack_one_zero: &'a [RunRecord],
    /// Asymmetric.
    pub asym: &'a [RunRecord],
    /// Parking lot.
    pub parking: &'a [RunRecord],
    /// Fig. 19's setup.
    pub friendly: &'a [RunRecord],
    /// The presets the ACK count row covers, by name.
    pub ack_sets: &'a [(&'a str, &'a [RunRecord])],
    /// Every p004 preset on the page.
    pub every: &'a [&'a [RunRecord]],
    /// The smart-minrtt goal's worst point over `every`, as its row
    /// judged it.
    pub minrtt_worst: Option<(&'a RunRecord, f64)>,
}

/// Writes the section.
pub(super) fn section(md: &mut String, runs: &Runs<'_>) {
    let _ = writeln!(md, "## Why the misses\n");
    fig8(md, runs.one_zero, runs.nosack_one_zero);
    fig13(md, runs.asym);
    fig18a(md, runs.parking);
    friendly(md, runs.friendly);
    minrtt_worst(md, runs.minrtt_worst, runs.every);
    ack_count(md, runs.ack_sets);
}
