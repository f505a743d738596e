//! The lab: named strategies, scenarios (TOML files and built-in presets
//! for the papers' setups), a parallel runner and its reports.
//!
//! ```no_run
//! use ackwise::lab::{self, RunPlan};
//!
//! let preset = lab::load("default", None)?;
//! let plan = RunPlan {
//!     strategies: preset.strategies.clone(),
//!     preset,
//!     seed: 1,
//!     jobs: 2,
//!     shard: None,
//!     sample_interval: None,
//!     pcap_dir: None,
//! };
//! let records = lab::run::run(&plan, false)?;
//! print!("{}", lab::run::table(&records));
//! # Ok::<(), lab::LabError>(())
//! ```

pub mod bench;
pub mod crosscheck;
pub mod gauntlet;
pub mod ns2;
pub mod options;
mod path_file;
pub mod plot;
pub mod presets;
mod progress;
#[cfg(feature = "quic")]
mod quic;
pub mod report;
pub mod run;
pub mod scenario;
pub mod strategy;
pub mod units;

pub use presets::{Point, Preset};
pub use run::{RunPlan, RunRecord, SeriesRecord};
pub use scenario::{LabScenario, ScenarioFile};
pub use strategy::{NetAck, Strategy, UnknownStrategy};

use crate::emu::EmuError;
use std::path::Path;
use thiserror::Error;

/// Anything that stops a lab run, phrased for one line on a terminal.
#[derive(Debug, Error)]
pub enum LabError {
    /// No preset has this name.
    #[error("unknown preset `{name}` (known: {known}; or give a .toml file)")]
    UnknownPreset {
        /// what was asked for
        name: String,
        /// the names that exist
        known: String,
    },
    /// A strategy name is unknown.
    #[error(transparent)]
    Strategy(#[from] UnknownStrategy),
    /// A scenario field has a bad value.
    #[error("{field}: {problem}")]
    Field {
        /// field path, e.g. `bottleneck.rate`
        field: String,
        /// what is wrong
        problem: String,
    },
    /// The TOML does not parse or has unknown keys.
    #[error("scenario file: {0}")]
    Toml(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// the file
        path: String,
        /// why
        source: std::io::Error,
    },
    /// The emulator refused the scenario.
    #[error("emulator: {0}")]
    Emu(#[from] EmuError),
    /// `--shard` is not `i/n`.
    #[error("bad shard `{0}`: expected i/n with 1 <= i <= n")]
    Shard(String),
    /// An ns-2 run (the cross-check's reference) failed.
    #[error(transparent)]
    Ns2(#[from] ns2::Ns2Error),
    /// The runner's worker threads could not be started.
    #[error("cannot start worker threads: {0}")]
    Threads(String),
    /// A plot could not be drawn.
    #[error("{path}: cannot draw plot: {problem}")]
    Plot {
        /// the SVG file
        path: String,
        /// what went wrong
        problem: String,
    },
}

/// A preset by name, or a scenario file (a path ending in `.toml`) as a
/// one-point preset. `seed_out` receives the file's seed, if it sets one.
pub fn load(target: &str, seed_out: Option<&mut Option<u64>>) -> Result<Preset, LabError> {
    if !target.ends_with(".toml") {
        return presets::find(target);
    }
    let path = Path::new(target);
    let text = std::fs::read_to_string(path).map_err(|source| LabError::Io {
        path: target.to_string(),
        source,
    })?;
    let file = ScenarioFile::from_toml(&text)?;
    let scenario = file.to_scenario()?;
    let strategies = match &file.strategies {
        Some(list) => list
            .iter()
            .map(|s| s.parse())
            .collect::<Result<Vec<Strategy>, _>>()?,
        None => Strategy::ALL.to_vec(),
    };
    if let Some(out) = seed_out {
        *out = file.seed;
    }
    let name = file.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into())
    });
    Ok(Preset {
        name,
        description: "scenario file",
        strategies,
        points: vec![Point {
            params: Vec::new(),
            scenario,
        }],
    })
}
