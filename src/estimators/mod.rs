//! Estimators shared by sender and receiver algorithms.

mod rtt;
pub use rtt::RttEstimator;
