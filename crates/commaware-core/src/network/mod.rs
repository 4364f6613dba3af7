//! The network layer, the bottom of the model: the platform (hosts, their NICs and the
//! switch they hang from, as plain validated specifications) and the bandwidth-sharing
//! models that rate concurrent transfers over its links (paper 004). Nothing here knows
//! the engine, MPI or any front-end.

pub mod interference_spec;
pub mod platform;
pub mod sharing;
pub mod simgrid_export;
pub mod simgrid_xml;
pub mod smpi;
pub mod topology;
