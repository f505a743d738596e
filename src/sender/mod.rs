//! The sending half: send buffer, SACK scoreboard, loss recovery,
//! retransmission timer, congestion control, pacing and ACK-clock
//! spreading.

pub mod ack_loss;
pub mod ack_request;
pub mod congestion;
mod engine;
pub mod hold_credit;
pub mod hystart;
pub mod pacing;
pub mod reorder_timer;
mod scoreboard;
pub mod segment_cuts;
mod send_buffer;
pub mod spread;
mod spurious_timeout;
pub mod tail_loss_probe;
mod window_in_use;

pub use ack_request::{
    AckRequestStrategy, AdaptivePerWindow, EveryN, NoRequests, PerWindow, Requester,
};
pub use congestion::{CongestionControl, Reno};
pub use engine::{AckEffect, AckInput, Sender, SenderCounters, SenderParams, TxSegment};
pub use pacing::{Pacer, PacingConfig};
pub use scoreboard::{AckOutcome, Scoreboard};
pub use segment_cuts::SegmentCuts;
pub use send_buffer::{SendBuffer, Slices};
pub use spread::Spreader;
pub use spurious_timeout::{PriorWindow, SpuriousTimeout};
