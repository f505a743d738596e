//! The shared-medium target of the gauntlet page: on the Wi-Fi-like
//! `shared-medium` preset (data and ACKs of both directions take turns on
//! one half-duplex transmitter, each frame paying a fixed airtime
//! overhead), the default strategy's bulk goodput against delayed ACK's.
//!
//! Bulk goodput here is every byte of the run over the last flow's
//! completion, not a mean of per-flow goodputs, which would reward one
//! flow finishing early at the other's expense.
//!
//! The page also states the most any strategy could gain: with the medium
//! busy the whole run (forward and reverse utilization add up to about
//! one), the run cannot be shorter than the airtime of its data frames
//! alone, the ACK-free limit.

use super::{PREVIOUS_DEFAULT, TARGET_STRATEGY};
use crate::lab::presets;
use crate::lab::run::{self, RunPlan, RunRecord, BOTTLENECK_LINK};
use crate::lab::strategy::Strategy;
use crate::lab::LabError;
use crate::time::Duration;
use std::fmt::Write as _;

/// Goodput at least this many times delayed ACK's (issue 18's target).
pub const TARGET_RATIO: f64 = 1.2;

/// One (point, strategy) of the shared-medium run.
#[derive(Debug, Clone, PartialEq)]
pub struct MediumFigure {
    /// The point's PHY rate, bit/s.
    pub phy_rate_bps: u64,
    /// The point's airtime overhead per frame.
    pub per_frame: Duration,
    /// Lab name of the strategy.
    pub strategy: String,
    /// Every byte delivered over the last completion, bit/s.
    pub bulk_goodput_bps: f64,
    /// Pure ACKs of the forward flows.
    pub acks: u64,
    /// Data frames of the forward flows (retransmissions included).
    pub data_frames: u64,
    /// Time the medium spends on the data frames alone.
    pub data_airtime: Duration,
    /// Last flow's completion.
    pub last_completion: Duration,
}

/// Runs the `shared-medium` preset with ae, da, 4w, the default strategy
/// and the previous default at `seed`.
pub fn run(seed: u64, jobs: usize) -> Result<Vec<MediumFigure>, LabError> {
    let preset = presets::find("shared-medium")?;
    let strategies = vec![
        Strategy::AE,
        Strategy::DA,
        Strategy::W4,
        TARGET_STRATEGY,
        PREVIOUS_DEFAULT,
    ];
    let plan = RunPlan {
        preset: preset.clone(),
        strategies,
        seed,
        jobs,
        shard: None,
        sample_interval: None,
        pcap_dir: None,
    };
    let records = run::run(&plan, false)?;
    let mut out = Vec::new();
    for r in &records {
        let Some(point) = preset.points.iter().find(|p| {
            p.params
                .iter()
                .all(|(k, v)| r.params.get(*k).is_some_and(|w| (v - w).abs() < 1e-9))
        }) else {
            continue;
        };
        let Some(medium) = point.scenario.medium else {
            continue;
        };
        if let Some(f) = figure(
            r,
            medium.per_frame_overhead,
            point.scenario.forward.rate_bps,
        ) {
            out.push(f);
        }
    }
    Ok(out)
}

/// The figure of one run on a medium of `rate_bps` with `per_frame`
/// overhead; `None` when a flow did not finish.
fn figure(r: &RunRecord, per_frame: Duration, rate_bps: u64) -> Option<MediumFigure> {
    let last = r.last_completion_s()?;
    if !r.all_finished || last <= 0.0 || rate_bps == 0 {
        return None;
    }
    let forward = r.flows.iter().filter(|f| !f.reverse);
    let (delivered_bps_s, acks, data_frames) = forward.fold((0.0, 0u64, 0u64), |(b, a, d), f| {
        let bits = f.goodput_bps.unwrap_or(0.0) * f.completion_time_s.unwrap_or(0.0);
        (b + bits, a + f.ack_packets, d + f.data_packets)
    });
    // The forward half of the medium carries the data frames (and
    // nothing else: ACKs travel the reverse half).
    let data_bytes = r.links.get(BOTTLENECK_LINK)?.bytes;
    let data_airtime = Duration::from_secs_f64(data_bytes as f64 * 8.0 / rate_bps as f64)
        + per_frame * u32::try_from(data_frames).ok()?;
    Some(MediumFigure {
        phy_rate_bps: rate_bps,
        per_frame,
        strategy: r.strategy.clone(),
        bulk_goodput_bps: delivered_bps_s / last,
        acks,
        data_frames,
        data_airtime,
        last_completion: Duration::from_secs_f64(last),
    })
}

impl MediumFigure {
    /// `54 Mbit/s, 100 us`: the point, for tables and verdicts.
    pub fn point_text(&self) -> String {
        format!(
            "{} Mbit/s, {} us",
            self.phy_rate_bps / 1_000_000,
            self.per_frame.as_micros()
        )
    }

    fn same_point(&self, other: &MediumFigure) -> bool {
        self.phy_rate_bps == other.phy_rate_bps && self.per_frame == other.per_frame
    }
}

/// `strategy`'s bulk goodput over `da`'s at each point (PHY rate and
/// overhead per frame, as [`MediumFigure::point_text`] names it).
pub fn ratios_to_da(figures: &[MediumFigure], strategy: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for f in figures.iter().filter(|f| f.strategy == strategy) {
        let da = figures
            .iter()
            .find(|d| d.same_point(f) && d.strategy == "da");
        if let Some(da) = da {
            out.push((f.point_text(), f.bulk_goodput_bps / da.bulk_goodput_bps));
        }
    }
    out
}

/// The page's section: a table per point and the target's verdict.
pub fn section(out: &mut String, figures: &[MediumFigure]) {
    let _ = writeln!(
        out,
        "## Shared medium\n\n\
         The `shared-medium` preset (`cargo run --release -- lab shared-medium`): two 20 MB \
         bulk flows over one half-duplex transmitter that data and ACKs of both directions \
         share, 10 ms RTT, each frame paying a fixed airtime overhead, at 802.11g's 54 Mbit/s \
         and at a 300 Mbit/s PHY rate as 802.11n/ac reach (where TACK, SIGCOMM 2020, \
         measured its gains): the faster the PHY, the more of each frame's airtime is the \
         overhead, and the more an ACK costs. Bulk goodput is every byte over the last \
         flow's completion. The ACK-free limit is the airtime of the strategy's own data \
         frames alone (bytes at the PHY rate plus the overhead per frame): the medium is \
         busy the whole run, so no strategy can finish sooner, and delayed ACK's completion \
         over the limit is the most any ACK saving could gain.\n"
    );
    let _ = writeln!(
        out,
        "| PHY, overhead per frame | strategy | bulk goodput (Mbit/s) | vs `da` | ACKs | data frames | completion (s) | ACK-free limit (s) | `da` over the limit |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    let judged = [TARGET_STRATEGY.to_string(), PREVIOUS_DEFAULT.to_string()];
    let mut verdicts = Vec::new();
    let mut points: Vec<&MediumFigure> = Vec::new();
    for f in figures {
        if !points.iter().any(|p| p.same_point(f)) {
            points.push(f);
        }
    }
    for point in points {
        let at: Vec<&MediumFigure> = figures.iter().filter(|f| f.same_point(point)).collect();
        let Some(da) = at.iter().find(|f| f.strategy == "da") else {
            continue;
        };
        for f in &at {
            let _ = writeln!(
                out,
                "| {} | `{}` | {:.2} | {:.3} | {} | {} | {:.3} | {:.3} | {:.3} |",
                f.point_text(),
                f.strategy,
                f.bulk_goodput_bps / 1e6,
                f.bulk_goodput_bps / da.bulk_goodput_bps,
                f.acks,
                f.data_frames,
                f.last_completion.as_secs_f64(),
                f.data_airtime.as_secs_f64(),
                da.last_completion.as_secs_f64() / f.data_airtime.as_secs_f64(),
            );
        }
        for name in &judged {
            if let Some(t) = at.iter().find(|f| &f.strategy == name) {
                verdicts.push((
                    t.point_text(),
                    name,
                    t.bulk_goodput_bps / da.bulk_goodput_bps,
                    da.last_completion.as_secs_f64() / t.data_airtime.as_secs_f64(),
                    t.acks,
                ));
            }
        }
    }
    out.push('\n');
    for (point, target, ratio, limit, acks) in verdicts {
        let met = if ratio >= TARGET_RATIO {
            "met"
        } else {
            "**missed**"
        };
        let _ = writeln!(
            out,
            "- {point} per frame: `{target}` {ratio:.3}x `da`'s bulk goodput with {acks} ACKs, target {TARGET_RATIO}x {met}; without any ACK it could reach {limit:.3}x."
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_strategy_gains_on_the_shared_medium_within_the_ack_free_limit() {
        let figures = run(1, 2).expect("the preset runs");
        assert_eq!(figures.len(), 20, "4 points x 5 strategies, all finished");
        for f in &figures {
            // The run cannot beat the airtime its data frames need.
            assert!(
                f.last_completion >= f.data_airtime,
                "{} at {:?}: {:?} < {:?}",
                f.strategy,
                f.per_frame,
                f.last_completion,
                f.data_airtime
            );
        }
        for point in figures.iter().filter(|f| f.strategy == "da") {
            let g = |s: &str| {
                figures
                    .iter()
                    .find(|f| f.same_point(point) && f.strategy == s)
                    .map(|f| (f.bulk_goodput_bps, f.acks))
                    .expect("figure")
            };
            let (da, da_acks) = g("da");
            let (default, default_acks) = g(&TARGET_STRATEGY.to_string());
            // Every ACK saved is airtime for data.
            assert!(default_acks * 2 < da_acks);
            assert!(default > da * 1.1, "{default} vs {da}");
        }
    }
}
