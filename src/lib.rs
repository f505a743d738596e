//! ackwise: a sans-IO TCP-style transport that sends far fewer ACKs.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod connection;
pub mod estimators;
pub mod receiver;
pub mod sender;
pub mod testing;
pub mod time;
pub mod wire;
