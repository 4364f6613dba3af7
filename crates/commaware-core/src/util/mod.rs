//! Small utilities shared by every layer: a seeded random generator ([`rng`]), an
//! indexed min-tree ([`mintree`]) for next-event and next-finish searches, a fast hasher
//! for integer keys ([`hash`]), and the way a caller stops a long computation ([`cancel`]).

pub mod cancel;
pub mod hash;
pub mod mintree;
pub mod par;
pub mod rng;
