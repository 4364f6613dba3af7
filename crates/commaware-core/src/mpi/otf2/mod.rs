//! OTF2 archives (Score-P's trace format, read by Vampir, Scalasca and TAU) in and out,
//! through the OTF2 C library loaded at run time ([`ffi`]): [`read`] turns an archive into
//! the same [`crate::mpi::trace::TraceSpec`] the other readers give. The writer of a
//! simulated run is a timeline writer (`crate::mpi::timeline::otf2`), using [`ffi`].

pub mod ffi;
pub mod read;
