//! The paper 003 page's "Why the misses": each row the summary misses,
//! with the figures of the same run that show its cause.

use super::super::*;
use super::phases;

/// `v` with `decimals`, `-` when there is none.
fn fmt_opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |v| format_number(v, decimals))
}

/// Drops at the bottleneck and at every other queue (the senders' access
/// queues, the reverse path) of one run.
fn drops_by_queue(r: &RunRecord) -> (u64, u64) {
    let bottleneck = r.links.get(run::BOTTLENECK_LINK).map_or(0, |l| l.drops);
    let all: u64 = r.links.iter().map(|l| l.drops).sum();
    (bottleneck, all - bottleneck)
}

/// 2W and 2WAF at 100 Mbit/s: where the drops happen, and why AF has
/// nothing to mend.
fn two_w_at_100(md: &mut String, fig6: &[RunRecord]) {
    let at = |s: &str| find(fig6, s, &[("rate_mbps", 100.0), ("flows", 1.0)]);
    let (Some(w2), Some(af)) = (at("2w"), at("2waf")) else {
        return;
    };
    let (w2_bottleneck, w2_elsewhere) = drops_by_queue(w2);
    let (af_bottleneck, af_elsewhere) = drops_by_queue(af);
    let retx = |r: &RunRecord| r.flows.iter().map(|f| f.retransmissions).sum::<u64>();
    let rtos = |r: &RunRecord| r.flows.iter().map(|f| f.timeouts).sum::<u64>();
    let _ = writeln!(
        md,
        "- **2waf at 100 Mbit/s ({} % against the paper's 89).** AF stops the burst that an \
         early cumulative ACK releases just before a fast retransmit (sec. 4.3), which in the \
         paper turned one loss into many. Here 2w loses {} segments at the bottleneck and {} \
         at the other queues over the whole run ({} retransmissions, {} timeouts), so each \
         congestion event costs one segment and AF has nothing to mend: 2waf loses {} and {} \
         ({} retransmissions, {} timeouts). The losses are at the sender's access queue \
         (1000 packets at 10x the bottleneck rate): one of 2W's two ACKs per window releases \
         half the window at once, and that burst overflows the access queue once the window \
         passes about 2 x 1000 / 0.9, 2200 segments, short of the 2 BDP (2500) that \
         equation 1 asks for two ACKs per window. Both stay at 2W's equation-1 limit, {} and \
         {} %, where the paper has 2W at 79. The paper does not give its access queues; an \
         access queue that held a half-window burst would move the losses to the \
         bottleneck.",
        fmt_opt(af.utilization_percent(), 1),
        w2_bottleneck,
        w2_elsewhere,
        retx(w2),
        rtos(w2),
        af_bottleneck,
        af_elsewhere,
        retx(af),
        rtos(af),
        fmt_opt(w2.utilization_percent(), 1),
        fmt_opt(af.utilization_percent(), 1),
    );
}

/// The fig. 11 Jain goal: the lowest index of each strategy beside AE
/// against AE at the same point.
fn jain_against_ae(md: &mut String, fig11: &[RunRecord], over_phases: &phases::PhaseTable) {
    let mut rows = Vec::new();
    for s in ["4w", "4waf", "4w-adaptive", Strategy::DEFAULT_NAME] {
        let mut lowest: Option<(&RunRecord, f64)> = None;
        let mut worst_gap: Option<(&RunRecord, f64)> = None;
        for r in fig11.iter().filter(|r| r.strategy == s) {
            let Some(j) = r.jain_index else { continue };
            if lowest.is_none_or(|(_, l)| j < l) {
                lowest = Some((r, j));
            }
            let ae = same_point(fig11, r, "ae").and_then(|a| a.jain_index);
            if let Some(a) = ae {
                if worst_gap.is_none_or(|(_, g)| j - a < g) {
                    worst_gap = Some((r, j - a));
                }
            }
        }
        let (Some((low_r, low)), Some((gap_r, gap))) = (lowest, worst_gap) else {
            continue;
        };
        let ae_there = same_point(fig11, low_r, "ae").and_then(|a| a.jain_index);
        let mut row = format!(
            "`{s}` {low:.3} at {} (AE against AE there: {}), and at most {:.3} below AE \
             against AE at any point ({})",
            point_text(low_r),
            fmt_opt(ae_there, 3),
            -gap,
            point_text(gap_r),
        );
        if let (Some((low_at, low)), Some((gap_at, gap))) = (
            phases::lowest_mean(over_phases, s),
            phases::widest_gap(over_phases, s),
        ) {
            let _ = write!(
                row,
                "; over the start phases its lowest mean is {low:.3} ({low_at}) and it \
                 falls at most {gap:.3} below AE against AE's mean ({gap_at})"
            );
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "- **The fig. 11 Jain goal (>= 0.95).** The lowest indexes fall where AE flows alone \
         split the drop-tail bottleneck unevenly (one BDP of buffer, a few long-lived \
         flows), so the goal \
         measures the path as much as the strategy: {}. Judged against AE in the same place, \
         as the `ae` column allows, the polled strategies' unfairness is the gap, not the \
         index.",
        rows.join("; ")
    );
}

/// Writes the section.
pub(super) fn section(
    md: &mut String,
    fig6: &[RunRecord],
    fig11: &[RunRecord],
    over_phases: &phases::PhaseTable,
) {
    let _ = writeln!(md, "## Why the misses\n");
    two_w_at_100(md, fig6);
    jain_against_ae(md, fig11, over_phases);
    md.push('\n');
}
