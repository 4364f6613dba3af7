//! OTF2 archives (Score-P's trace format, read by Vampir, Scalasca and TAU) in and out,
//! through the OTF2 C library loaded at run time ([`ffi`]): [`read`] turns an archive into
//! the same [`crate::mpi::trace::TraceSpec`] the other readers give; [`write`] streams a
//! simulated run as an archive (a [`crate::mpi::timeline::TimelineSink`]).

pub mod ffi;
pub mod read;
pub mod write;
