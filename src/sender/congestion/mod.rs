//! Congestion control behind a small trait.

mod reno;
pub use reno::Reno;

/// A window-based congestion controller. All sizes in bytes.
pub trait CongestionControl: core::fmt::Debug + Send {
    /// Current congestion window.
    fn window(&self) -> u64;
}
