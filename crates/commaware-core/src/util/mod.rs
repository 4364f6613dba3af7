//! Small utilities shared by every layer: a seeded random generator ([`rng`]) and an
//! indexed min-tree ([`mintree`]) for next-event and next-finish searches.

pub mod mintree;
pub mod rng;
