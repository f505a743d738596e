//! The receiving half: reassembly, receive window, SACK generation and the
//! ACK policies that decide when an acknowledgment is sent.

pub mod ack_policy;
mod reassembly;

pub use ack_policy::{
    Acc, AckDecision, AckPolicy, AckSent, ArrivalInfo, Delayed, Every, HoleAcks, Polled, Smart,
    SmartParams, SmartRtt,
};
pub use reassembly::{InsertOutcome, Reassembly};
