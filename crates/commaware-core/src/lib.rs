//! commaware-core: the pure Rust engine of commaware. Nothing here knows about Python.
//!
//! The map of the crate, bottom up. Each layer uses only the layers listed before it
//! (dependencies point down; `tests/layers.rs` fails on a cycle between modules):
//!
//! - [`error`] (the one error type, its kinds and the input checks every reader shares)
//!   and [`util`] (a seeded random generator, an indexed min-tree, stopping a long
//!   computation from outside).
//! - [`network`]: the platform as plain validated specifications (hosts, NICs, the
//!   switch and backbone, each host's interference rates) and the bandwidth-sharing
//!   models that rate concurrent transfers on its links ([`network::sharing`]: max-min,
//!   contention-free, and paper 004's penalty models for GigE, Myrinet and InfiniBand).
//! - [`engine`]: activities (transfers, computations, timers) on an event clock, with the
//!   interference of communication on computation (paper 000) as its compute-rate hook.
//! - [`mpi`]: per-rank programs and their collectives, the loader of platform files,
//!   SimGrid's time-independent traces in and out, placement of ranks onto hosts, and the
//!   replay of a trace under MPI matching semantics on the engine (paper 004 §VI-A).
//! - The front-ends of the papers, each above the layers it drives: [`taskfarm`]
//!   (autonomous task farming on a tree and the measurement kernel, paper 000),
//!   [`tiling`] (tiled loops with overlapped communication, paper 001), [`cosched`]
//!   (cluster job scheduling and coscheduling, paper 002), [`multicast`] (multiple
//!   multicast schedulers, paper 003).

pub mod error;
pub mod util;

pub mod network;

pub mod engine;

pub mod mpi;

pub mod cosched;
pub mod multicast;
pub mod taskfarm;
pub mod tiling;

pub use error::{Error, ErrorKind};
pub use mpi::replay::{simulate, simulate_observed, Collect, MessageRecord, NoObserver, Observer, SimOptions, SimResult};
pub use mpi::trace::Trace;
pub use network::platform::Platform;
