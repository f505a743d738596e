//! Why a scenario cannot run.

use crate::connection::ConfigError;
use thiserror::Error;

/// A scenario that cannot run, or a run that could not finish its output.
#[derive(Debug, Error)]
pub enum EmuError {
    /// A link parameter is out of range.
    #[error("link {link}: {problem}")]
    InvalidLink {
        /// index of the link in `Scenario::links`
        link: usize,
        /// what is wrong
        problem: &'static str,
    },
    /// A flow parameter is out of range or refers to something missing.
    #[error("flow {flow}: {problem}")]
    InvalidFlow {
        /// index of the flow in `Scenario::flows`
        flow: usize,
        /// what is wrong
        problem: &'static str,
    },
    /// A flow's connection configuration is invalid.
    #[error("flow {flow}: {source}")]
    InvalidConfig {
        /// index of the flow
        flow: usize,
        /// the configuration problem
        source: ConfigError,
    },
    /// A cross-traffic source is out of range or refers to a missing link.
    #[error("cross traffic {source_index}: {problem}")]
    InvalidCross {
        /// index in `Scenario::cross_traffic`
        source_index: usize,
        /// what is wrong
        problem: &'static str,
    },
    /// A scenario-wide setting is out of range (horizon, sampling, capture).
    #[error("scenario: {0}")]
    InvalidScenario(&'static str),
    /// A QUIC flow's endpoints could not be set up.
    #[cfg(feature = "quic")]
    #[error("flow {flow}: {source}")]
    Quic {
        /// index of the flow
        flow: usize,
        /// what failed
        source: crate::quic::QuicError,
    },
    /// Writing a capture file failed.
    #[error("capture file: {0}")]
    Io(#[from] std::io::Error),
}
