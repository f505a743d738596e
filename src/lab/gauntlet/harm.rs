//! What a strategy costs the flows beside it on the gauntlet's shared
//! paths.
//!
//! The share (the test flows' goodput over all flows', against AE's share
//! in the same place) reads a larger slice as taking, but a strategy can
//! also grow its slice with capacity AE leaves unused: on a thin reverse
//! link the AE test flows' own ACKs queue and drop, and the flows that
//! replace them move more data without slowing anyone. The competitors'
//! goodput beside the strategy, over theirs beside AE, tells the two
//! apart: at 1 or above the strategy took nothing from them. This is the
//! harm-based view of fairness (Ware et al., "Beyond Jain's Fairness
//! Index", HotNets 2019): judge a sender by what it costs the senders
//! already there, not by how evenly the link ends up split.

use super::metrics::{self, Relative, StrategySummary};
use super::page::{f3, pct};
use super::AE_REDRAW;
use std::fmt::Write as _;

/// Competitors keeping less than this of their goodput beside AE count
/// as harmed: the edge of the share target's 0.9-1.1 band.
pub const HARM_RATIO: f64 = 0.9;

/// One strategy's share and harm figures over the shared paths.
#[derive(Debug, Clone, PartialEq)]
pub struct HarmSummary {
    /// Shared paths with both figures.
    pub paths: usize,
    /// Paths with a share ratio in 0.9-1.1.
    pub share_within: usize,
    /// Paths with a share ratio above 1.1.
    pub share_above: usize,
    /// Of those, paths whose competitors keep at least [`HARM_RATIO`].
    pub above_without_harm: usize,
    /// Competitors' goodput ratio: 10th percentile and median.
    pub competitors: [f64; 2],
    /// Paths whose competitors keep less than [`HARM_RATIO`].
    pub harmed: usize,
}

/// The figures of one strategy's cases; `None` without a shared path
/// that has both ratios.
pub fn summary(relatives: &[&Relative]) -> Option<HarmSummary> {
    let pairs: Vec<(f64, f64)> = relatives
        .iter()
        .filter_map(|r| r.share_ratio.zip(r.competitor_ratio))
        .collect();
    let kept: Vec<f64> = pairs.iter().map(|&(_, c)| c).collect();
    Some(HarmSummary {
        paths: pairs.len(),
        share_within: pairs
            .iter()
            .filter(|(s, _)| (0.9..=1.1).contains(s))
            .count(),
        share_above: pairs.iter().filter(|&&(s, _)| s > 1.1).count(),
        above_without_harm: pairs
            .iter()
            .filter(|&&(s, c)| s > 1.1 && c >= HARM_RATIO)
            .count(),
        competitors: [
            metrics::percentile(&kept, 0.1)?,
            metrics::percentile(&kept, 0.5)?,
        ],
        harmed: kept.iter().filter(|&&c| c < HARM_RATIO).count(),
    })
}

/// The page's section: per strategy, the share beside what the
/// competitors keep.
pub fn section(out: &mut String, summaries: &[StrategySummary]) {
    let rows: Vec<(&String, &HarmSummary)> = summaries
        .iter()
        .filter_map(|s| Some((&s.strategy, s.harm.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## Share and harm: what the competitors keep\n\n\
         The share target reads a slice larger than AE's as taking, but a strategy can also grow its slice with capacity AE leaves unused \
         (on a thin reverse link AE's own ACKs queue and drop, slowing the AE test flows themselves). \
         So beside the share ratio stands the competitors' goodput with the strategy in the test flows' place over theirs with AE there: \
         at 1 or above, the strategy took nothing from them (harm-based fairness: Ware et al., HotNets 2019). \
         Shared paths only, means over the replicates; competitors count as harmed below {HARM_RATIO} of their goodput beside AE. \
         The row `{AE_REDRAW}`, where nothing changes but the draw, is what these figures read from the draw alone.\n"
    );
    let _ = writeln!(
        out,
        "| strategy | shared paths | share in 0.9-1.1 | share above 1.1 | of which competitors keep >= {HARM_RATIO} | competitors' goodput p10 | p50 | paths where competitors keep < {HARM_RATIO} |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (strategy, h) in &rows {
        let _ = writeln!(
            out,
            "| `{strategy}` | {} | {} | {} | {} | {} | {} | {} |",
            h.paths,
            pct(h.share_within as f64 / h.paths as f64),
            h.share_above,
            h.above_without_harm,
            f3(h.competitors[0]),
            f3(h.competitors[1]),
            h.harmed,
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::gauntlet::metrics::tests::{flow, record};
    use crate::lab::gauntlet::metrics::GauntletRecord;

    /// A shared-path record whose test flow and competitor had the given
    /// goodputs.
    fn shared(case: u64, strategy: &str, test_bps: f64, competitor_bps: f64) -> GauntletRecord {
        let share = test_bps / (test_bps + competitor_bps);
        let mut r = record(case, strategy, 10.0, 100, 0, Some(share));
        let mut mine = flow(strategy, true, Some(10.0));
        mine.goodput_bps = test_bps;
        let mut theirs = flow("ae", false, Some(10.0));
        theirs.goodput_bps = competitor_bps;
        r.outcome.flows = vec![mine, theirs];
        r
    }

    #[test]
    fn a_larger_share_counts_as_harm_only_when_the_competitors_lose() {
        let records = [
            // Case 0: AE's test flow leaves capacity unused; the strategy
            // takes it and the competitor keeps everything.
            shared(0, "ae", 2.0, 5.0),
            shared(0, "4w", 5.0, 5.0),
            // Case 1: the strategy takes from the competitor.
            shared(1, "ae", 5.0, 5.0),
            shared(1, "4w", 7.0, 3.0),
            // Case 2: as AE.
            shared(2, "ae", 5.0, 5.0),
            shared(2, "4w", 5.0, 5.0),
        ];
        let rel = metrics::relatives(&records);
        let of = |strategy: &str| -> Vec<&Relative> {
            rel.iter().filter(|r| r.strategy == strategy).collect()
        };
        let h = summary(&of("4w")).unwrap();
        assert_eq!(h.paths, 3);
        assert_eq!(h.share_within, 1);
        assert_eq!(h.share_above, 2);
        assert_eq!(h.above_without_harm, 1);
        assert_eq!(h.harmed, 1);
        assert!((h.competitors[0] - 0.6).abs() < 1e-12);
        assert!((h.competitors[1] - 1.0).abs() < 1e-12);
        // AE against itself: every ratio 1.
        let ae = summary(&of("ae")).unwrap();
        assert_eq!((ae.share_within, ae.harmed), (3, 0));
    }

    #[test]
    fn paths_without_competitors_or_per_flow_figures_are_left_out() {
        let records = [
            record(0, "ae", 10.0, 100, 0, None),
            record(0, "4w", 10.0, 100, 0, None),
            record(1, "ae", 10.0, 100, 0, Some(0.5)),
            record(1, "4w", 10.0, 100, 0, Some(0.5)),
        ];
        let rel = metrics::relatives(&records);
        let mine: Vec<&Relative> = rel.iter().filter(|r| r.strategy == "4w").collect();
        assert_eq!(summary(&mine), None);
    }
}
