//! Estimators shared by sender and receiver algorithms.

mod ack_interval;
mod rtt;

pub use ack_interval::AckInterval;
pub use rtt::RttEstimator;
