//! commaware-core: the pure Rust engine of commaware.
//!
//! Layers, bottom up: [`platform`] (hosts and network), [`sharing`] (how concurrent
//! transfers share link capacity), [`engine`] (activities and the event clock),
//! [`trace`] (MPI-style per-rank programs), [`placement`] (ranks onto hosts) and
//! [`replay`] (MPI matching semantics that drive the engine from a trace).
//! Nothing here knows about Python.

pub mod cosched;
pub mod collectives;
pub mod engine;
pub mod mintree;
pub mod error;
pub mod interference;
pub mod kernel;
pub mod multicast;
pub mod output;
pub mod placement;
pub mod platform;
pub mod replay;
pub mod rng;
pub mod sharing;
pub mod taskfarm;
pub mod trace;
pub mod ti;
pub mod ti_export;
pub mod tiling;

pub use error::{Error, ErrorKind};
pub use platform::Platform;
pub use replay::{simulate, simulate_observed, Collect, MessageRecord, NoObserver, Observer, SimOptions, SimResult};
pub use trace::Trace;
