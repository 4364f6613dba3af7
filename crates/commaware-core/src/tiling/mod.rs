//! Loop tiling with overlapped communication (paper 001): the tiling model and schedules
//! ([`model`]), the per-rank programs simulated on the engine ([`programs`]), and the
//! native kernel of the real runs ([`kernel`]).

pub mod kernel;
pub mod model;
pub mod programs;

pub use model::{sweep_heights, CostModel, Formulas, Geometry, GridTiling, Schedule, SciModel, SciOptimum, StepReport, TileShape, Tiling};
pub use programs::{program, simulate_program, simulate_program_observed, TilingRun};

#[cfg(test)]
mod tests;
