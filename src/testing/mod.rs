//! Test fixtures that are useful outside the crate too: a deterministic
//! in-memory pipe between two connections.

pub mod pipe;
pub mod rng;

pub use pipe::{transfer, Pipe, PipeConfig, PipeError, PipeStats, Side, TransferOutcome};
pub use rng::TestRng;
