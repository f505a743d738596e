//! Estimators shared by sender and receiver algorithms.

mod ack_interval;
mod cwnd;
mod isat;
mod min_rtt;
mod rtt;

pub use ack_interval::AckInterval;
pub use cwnd::{CwndEstimator, CwndPhase, RttIntervals};
pub use isat::Isat;
pub use min_rtt::WindowedMinRtt;
pub use rtt::RttEstimator;
