//! Estimators shared by sender and receiver algorithms and by in-network
//! ACK management.

mod ack_interval;
mod cwnd;
mod isat;
mod min_rtt;
mod rtt;
mod tsw;

pub use ack_interval::AckInterval;
pub use cwnd::{CwndEstimator, CwndPhase, RttIntervals};
pub use isat::Isat;
pub use min_rtt::WindowedMinRtt;
pub use rtt::RttEstimator;
pub use tsw::TswRate;
