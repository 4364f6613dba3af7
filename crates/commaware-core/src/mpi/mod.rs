//! The MPI layer, above the engine: per-rank programs ([`trace`]) and the point-to-point
//! schedules of collectives ([`collectives`], Open MPI's segmented ones in `collectives::ompi_colls`), readers and writers of SimGrid's
//! time-independent traces ([`ti`], [`ti_export`]), ranks onto hosts ([`placement`]),
//! MPI matching semantics driving the engine ([`replay`]), several jobs in one engine ([`jobs`]), streamed results ([`output`]),
//! the timeline of a run for Paje and OTF2 viewers ([`timeline`]),
//! a look at a trace before replaying it ([`summary`]), LogGOPSim's GOAL schedules and its LogGP simulation ([`goal`]),
//! and loading a platform file with every layer's checks ([`platform_file`]).

pub mod collectives;
pub mod dumpi;
pub mod goal;
pub mod graph;
pub mod jobs;
pub mod ops;
pub mod otf2;
pub mod output;
pub mod placement;
pub mod platform_file;
pub mod replay;
pub mod summary;
pub mod ti;
pub mod ti_export;
pub mod timeline;
pub mod trace;
