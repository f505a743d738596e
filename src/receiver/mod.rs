//! The receiving half: reassembly, receive window, SACK generation and the
//! ACK policies that decide when an acknowledgment is sent.

pub mod ack_policy;
mod reassembly;

pub use ack_policy::{AckDecision, AckPolicy, ArrivalInfo, Delayed, Every, Polled};
pub use reassembly::{InsertOutcome, Reassembly};
