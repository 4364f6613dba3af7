//! Small value types that the scheduling state and its fast receiver scan ([`super::bynode`])
//! share: a multicast as the state indexes it, and a totally ordered time key.

use std::cmp::Ordering;

/// A multicast, internally indexed in increasing order of its source node.
pub(crate) struct Mc {
    pub src: usize,
    pub bytes: f64,
}

/// f64 ordered by `total_cmp`, for ordered sets and heaps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Key(pub f64);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}
