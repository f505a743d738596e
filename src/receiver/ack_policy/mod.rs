//! When to acknowledge.

/// Information about one arriving segment.
#[derive(Debug, Clone, Copy)]
pub struct ArrivalInfo {
    _todo: (),
}

/// What the receiver does about an ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckDecision {
    /// Send an ACK now.
    Now,
}

/// Decides when the receiver acknowledges.
pub trait AckPolicy: core::fmt::Debug + Send {}

/// Acknowledge every segment.
#[derive(Debug)]
pub struct Every;

/// Delayed ACK.
#[derive(Debug)]
pub struct Delayed;
