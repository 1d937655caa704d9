//! Events a run reports while it generates.

use super::error::GenerateError;
use crate::material::Material;
use crate::stats::TableStats;

/// Events reported while generating.
pub trait Progress: Sync {
    /// A pair starts: its first material and the states of the pair.
    fn start(&self, _material: Material, _states: u64) {}
    /// States initialised so far in the current pair.
    fn advance(&self, _states: u64) {}
    /// States of the current pair already solved by an interrupted run.
    fn resumed(&self, _states: u64) {}
    /// A table was written.
    fn done(&self, _stats: &TableStats) {}
    /// A pair was not attempted (it would need more memory than allowed).
    fn refused(&self, _why: &GenerateError) {}
}

/// No progress output.
pub struct Quiet;

impl Progress for Quiet {}
