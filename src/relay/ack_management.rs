//! The relay's in-network ACK management: the emulator's components
//! (`ackwise::ack_path`) on real datagrams. `--ack-filter` makes the
//! reverse queue paper 000's filtering buffer; `--ack-delay-control`
//! installs paper 001's shaper as the reverse link's hook.

use super::config::{red_params, AckManagement, LinkConfig, QueueKind, RelayConfig};
use super::hook::{Arrival, HookAction, QueueView, ReverseHook};
use crate::ack_path::{AckBufferConfig, DelayControl};
use crate::emu::queue::{AckFilterQueue, LinkQueue, RedGate};
use crate::time::{Duration, Instant};

/// The shortest TSW window the relay uses, whatever the configured
/// delays (a zero-delay relay would otherwise measure single gaps).
const MIN_RATE_WINDOW: Duration = Duration::from_millis(10);

/// The filtering buffer `--ack-filter` asks for on `reverse`, its rate
/// window the relay's round-trip propagation delay.
pub(crate) fn filter_queue(config: &RelayConfig) -> Option<Box<dyn LinkQueue + Send>> {
    let (filter, service) = config.ack_management.filter?;
    let reverse: &LinkConfig = &config.reverse;
    let window = (config.forward.delay + reverse.delay).max(MIN_RATE_WINDOW);
    let buffer = AckBufferConfig::paper_000(
        filter,
        service,
        reverse.buffer_packets,
        reverse.rate_bps,
        window,
    );
    let red = (reverse.queue == QueueKind::Red)
        .then(|| RedGate::new(red_params(reverse.buffer_packets), reverse.rate_bps));
    Some(Box::new(AckFilterQueue::new(buffer, red)))
}

/// The delay-control hook `--ack-delay-control` asks for.
pub(crate) fn delay_control_hook(config: &RelayConfig) -> Option<Box<dyn ReverseHook>> {
    let AckManagement {
        delay_control: Some(setting),
        ..
    } = config.ack_management
    else {
        return None;
    };
    Some(Box::new(DelayControlHook {
        control: DelayControl::new(setting.config(config.forward.rate_bps)),
    }))
}

/// Paper 001's ACK delay control as a reverse hook: pure ACKs leave at
/// the forward link's packet service rate, and at the configured fraction
/// of it while the forward queue is above the threshold; everything else
/// passes.
#[derive(Debug)]
pub struct DelayControlHook {
    control: DelayControl,
}

impl DelayControlHook {
    /// A hook around `control`.
    pub fn new(control: DelayControl) -> DelayControlHook {
        DelayControlHook { control }
    }
}

impl ReverseHook for DelayControlHook {
    fn on_arrival(
        &mut self,
        now: Instant,
        arrival: &Arrival<'_>,
        _queue: &mut QueueView<'_>,
    ) -> HookAction {
        if arrival.pure_ack.is_none() {
            return HookAction::Pass;
        }
        let release = self.control.release_at(now, arrival.forward_queue_bytes);
        if release > now {
            HookAction::Delay(release - now)
        } else {
            HookAction::Pass
        }
    }
}
