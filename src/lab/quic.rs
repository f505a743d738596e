//! QUIC strategies in the lab (feature `quic`): what a `quic*` strategy
//! runs at each end, and the warm path cache of `quic-2w` / `quic-4w`.
//!
//! Sizes: QUIC datagrams are never below 1200 bytes, so a lab flow whose
//! TCP-style segments carry `segment_bytes` of payload runs QUIC with
//! datagrams of max(1200, `segment_bytes` + 48) bytes: more payload per
//! packet than its TCP-style neighbours at the papers' 1000-byte segments.
//! Compare QUIC and TCP by bytes and time, not by packet counts alone. The
//! initial window is the same number of bytes as the TCP-style flows'.

use super::scenario::LabScenario;
use super::strategy::Strategy;
use crate::connection::Config;
use crate::emu::{self, EmuError, FlowTransport, Scenario};
use crate::quic::{AckFrequencyPolicy, QuicFlowConfig};

/// Bytes of QUIC short header, STREAM frame header and AEAD tag a data
/// datagram spends beyond its payload, about.
const QUIC_PACKET_OVERHEAD: u16 = 48;

/// The transport of a flow running `strategy` in `scenario`; `config` is
/// its TCP-style configuration, whose receive buffer the QUIC windows
/// copy.
pub(crate) fn transport(
    strategy: Strategy,
    scenario: &LabScenario,
    config: &Config,
) -> FlowTransport {
    let Some(quic) = strategy.quic_flow_config() else {
        return FlowTransport::Tcp;
    };
    FlowTransport::Quic(Box::new(QuicFlowConfig {
        datagram_bytes: scenario
            .segment_bytes
            .saturating_add(QUIC_PACKET_OVERHEAD)
            .max(1200),
        initial_window: Some(
            u64::from(scenario.initial_window_segments) * u64::from(scenario.segment_bytes),
        ),
        receive_window: config.recv_buffer as u64,
        ..quic
    }))
}

/// Fills the path cache of every per-window QUIC flow the way an earlier
/// connection on the same path would: the scenario runs once with cold
/// caches, and each such flow then starts with the window its first run
/// ended with (Linux's `tcp_metrics` keeps the same per destination). The
/// warm-up run is not reported. A flow whose first run left no path
/// (it never connected) stays cold.
pub(crate) fn warm_path_caches(scenario: &mut Scenario) -> Result<(), EmuError> {
    let per_window = |t: &FlowTransport| {
        matches!(t, FlowTransport::Quic(q)
            if matches!(q.ack_frequency, AckFrequencyPolicy::PerWindow { .. }) && q.cached_path.is_none())
    };
    if !scenario.flows.iter().any(|f| per_window(&f.transport)) {
        return Ok(());
    }
    let mut first = scenario.clone();
    first.captures.clear();
    first.sample_interval = None;
    first.sampled_links.clear();
    let r = emu::run(&first)?;
    for (f, result) in scenario.flows.iter_mut().zip(&r.flows) {
        if let FlowTransport::Quic(q) = &mut f.transport {
            if matches!(q.ack_frequency, AckFrequencyPolicy::PerWindow { .. }) {
                q.cached_path = result.quic_path;
            }
        }
    }
    Ok(())
}
