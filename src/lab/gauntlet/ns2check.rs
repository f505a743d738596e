//! The ns-2 baseline check of the gauntlet: for every case ns-2 can
//! express, ns-2's Sack1 sender with an AE sink and a DelAck sink beside
//! ackwise's `ae` and `da`; cases whose completion times differ by more
//! than [`TOLERANCE`] are flagged.

use super::draw::{Case, CaseParams};
use super::metrics::GauntletRecord;
use crate::lab::progress::Progress;
use crate::lab::LabError;
use serde::{Deserialize, Serialize};

/// Largest relative completion-time difference before a case is flagged.
pub const TOLERANCE: f64 = 0.10;

/// ns-2 runs per expressible case: one per sink.
pub const RUNS_PER_CASE: usize = 2;

/// The ns-2 check of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ns2Case {
    /// The case.
    pub case: u64,
}

/// Why ns-2 cannot run case `p`, if it cannot.
pub fn expressible(_p: &CaseParams) -> Result<(), String> {
    Err("not yet".into())
}

/// Runs the check of every expressible case.
pub(crate) fn run_cases(
    _pool: &rayon::ThreadPool,
    _cases: &[Case],
    _records: &[GauntletRecord],
    _bar: &Progress,
) -> Result<Vec<Ns2Case>, LabError> {
    Ok(Vec::new())
}

/// The page's section on the check.
pub(crate) fn page_section(out: &mut String, _file: &super::GauntletFile, _ns2: &[Ns2Case]) {
    out.push_str("## ns-2 baseline check\n\n(not yet)\n");
}

/// The check as a terminal table.
pub fn table(_ns2: &[Ns2Case]) -> String {
    String::new()
}
