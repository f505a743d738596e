//! The lab: named strategies, scenarios and reports.

pub mod strategy;

pub use strategy::{Strategy, UnknownStrategy};
