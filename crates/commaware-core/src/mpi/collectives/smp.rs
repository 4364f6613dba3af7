//! SimGrid's `Comm::init_smp` and the MVAPICH2 k-nomial bcast that calls it
//! (`bcast__mvapich2_knomial_intra_node`, what SimGrid 3.32 runs for Open MPI's "knomial" bcast
//! in `smpi_openmpi_selector.cpp`).
//!
//! `init_smp` (SimGrid's `src/smpi/mpi/smpi_comm.cpp`, `Comm::init_smp` and `find_intra_comm`)
//! runs once per communicator, the first time an algorithm that needs its leaders runs on it,
//! and communicates, one MPI_INT (4 bytes) each time:
//! 1. `allgather__ring` over the communicator (each rank's leader);
//! 2. `allgather__ring` over the leaders' communicator (the smallest rank of the communicator on
//!    each host, in that order), by the leaders only (the intra-host rank 0 processes);
//! 3. `bcast__scatter_LR_allgather` from intra-host rank 0 over each host's ranks (in rank order);
//! 4. `allreduce__default` over the communicator: `reduce__default` to rank 0 (SMPI's
//!    `colls::ireduce`, [`Algo::NbcLinear`]), then `bcast__default`, the binomial tree, from rank 0.

use std::collections::BTreeMap;

use super::{binomial_down, fan_round, log2_ceil, pairwise, round, Algo, Collectives, Order, Round};
use crate::mpi::ops::OpSpec;

/// MVAPICH2's `mv2_intra_node_knomial_factor` (SimGrid 3.32, `smpi_mvapich2_selector_stampede.hpp`:
/// 4; only the `mvapich2` selector changes it).
pub(crate) const KNOMIAL_FACTOR: usize = 4;

/// The size of the MPI_INT each step of `init_smp` moves.
const INT_BYTES: f64 = 4.0;

/// A communicator spread over hosts as `Comm::init_smp` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Per communicator rank: its rank on its host and its host's index in `groups`.
    pos: Vec<(u32, u32)>,
    /// Per host: the communicator ranks on it, in world rank order (SMPI's actors on a host in
    /// the order they were created); hosts in the order of their leaders' world ranks (the
    /// leaders' communicator).
    groups: Vec<Vec<u32>>,
}

impl Layout {
    /// The layout of a communicator of `members` (world ranks in communicator rank order) when
    /// world rank w runs on host `host_of(w)`.
    pub(crate) fn new(members: &[u32], host_of: impl Fn(u32) -> u32) -> Layout {
        let mut by_host: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
        for (c, &w) in members.iter().enumerate() {
            by_host.entry(host_of(w)).or_default().push((w, c as u32));
        }
        let mut hosts: Vec<Vec<(u32, u32)>> = by_host.into_values().collect();
        for h in &mut hosts {
            h.sort_unstable();
        }
        hosts.sort_unstable_by_key(|h| h[0].0);
        let mut pos = vec![(0, 0); members.len()];
        for (g, h) in hosts.iter().enumerate() {
            for (i, &(_, c)) in h.iter().enumerate() {
                pos[c as usize] = (i as u32, g as u32);
            }
        }
        Layout { pos, groups: hosts.into_iter().map(|h| h.into_iter().map(|(_, c)| c).collect()).collect() }
    }
}

/// Rounds rank `r` of `p` spends in `init_smp` on `layout` (some of them may be skips).
fn init_smp_len(layout: &Layout, r: usize, p: usize) -> [usize; 5] {
    let (_, g) = layout.pos[r];
    let s = layout.groups[g as usize].len();
    let leaders = layout.groups.len();
    [p - 1, leaders - 1, log2_ceil(s) + 1 + (s - 1), 1, log2_ceil(p) + 1]
}

/// Round `k` of rank `r`'s part in `init_smp` on a communicator of `p` ranks laid out as
/// `layout`, or `None` once it is over (ranks are communicator ranks).
fn init_smp(layout: &Layout, r: usize, p: usize, mut k: usize) -> Option<Round> {
    let lens = init_smp_len(layout, r, p);
    let (me, g) = layout.pos[r];
    let (me, g) = (me as usize, g as usize);
    let mut part = 0;
    while part < lens.len() && k >= lens[part] {
        k -= lens[part];
        part += 1;
    }
    let map = |rd: Option<Round>, to: &dyn Fn(usize) -> usize| match rd {
        Some(Round::Send { to: t, bytes }) => Round::Send { to: to(t), bytes },
        Some(Round::Recv(f)) => Round::Recv(to(f)),
        Some(Round::SendRecv { dst, src, bytes }) => Round::SendRecv { dst: to(dst), src: to(src), bytes },
        _ => Round::Skip,
    };
    Some(match part {
        // 1. allgather__ring of each rank's leader over the communicator.
        0 => pairwise(r, p, k, Some(false), |_| INT_BYTES).unwrap_or(Round::Skip),
        // 2. allgather__ring of the hosts' sizes over the leaders (intra-host rank 0 only).
        1 if me == 0 => {
            let leaders = layout.groups.len();
            map(pairwise(g, leaders, k, Some(false), |_| INT_BYTES), &|l| layout.groups[l][0] as usize)
        }
        1 => Round::Skip,
        // 3. bcast__scatter_LR_allgather from intra-host rank 0 over the host's ranks.
        2 => {
            let host = &layout.groups[g];
            let op = OpSpec::Bcast { root: 0, bytes: INT_BYTES, comm: 0 };
            map(round(&op, Algo::ScatterLrAllgather, me, host.len(), k as u32, &Collectives::default()), &|i| host[i] as usize)
        }
        // 4. allreduce__default: reduce__default to rank 0, then the binomial bcast from rank 0.
        3 if r == 0 => fan_round(0, p, 0, Some(Order::Ascending), None).unwrap_or(Round::Skip),
        3 => Round::Send { to: 0, bytes: INT_BYTES },
        4 => binomial_down(r, p, 0, k, true, |_, _| INT_BYTES).unwrap_or(Round::Skip),
        _ => return None,
    })
}

/// Round `k` of SimGrid's `bcast__mvapich2_knomial_intra_node` (`bcast-mvapich-smp.cpp`) for
/// rank `r` of `p` from `root`, after `init_smp` on `layout` when this is the first algorithm
/// on the communicator that needs it (`None`: it ran before). On ranks relative to the root,
/// a rank receives the buffer from the rank that its lowest nonzero base-4 digit is cleared
/// in (blocking), then, from the highest digit below that down, posts sends to the ranks up
/// to 3 steps of that digit above it (MPI_Isend) and waits for them all.
pub(crate) fn knomial(r: usize, p: usize, root: usize, k: usize, bytes: f64, layout: Option<&Layout>) -> Option<Round> {
    let k = match layout {
        Some(layout) => {
            let pre: usize = init_smp_len(layout, r, p).iter().sum();
            if k < pre {
                return init_smp(layout, r, p, k);
            }
            k - pre
        }
        None => k,
    };
    if p < 2 {
        return None;
    }
    let f = KNOMIAL_FACTOR;
    let rel = (r + p - root) % p;
    let mut mask = 1;
    let mut parent = None;
    while mask < p {
        if rel % (f * mask) != 0 {
            parent = Some((rel / (f * mask) * (f * mask) + root) % p);
            break;
        }
        mask *= f;
    }
    let mut k = k;
    if let Some(src) = parent {
        if k == 0 {
            return Some(Round::Recv(src));
        }
        k -= 1;
    }
    mask /= f;
    while mask > 0 {
        let children = (1..f).filter(|j| rel + mask * j < p).count();
        if children > 0 {
            if k < children {
                let to = (r + mask * (k + 1)) % p;
                return Some(Round::SendSlot { to, bytes, slot: k as u32, blocking: false });
            }
            if k == children {
                return Some(Round::Await { first: 0, n: children as u32, combine: 0.0 });
            }
            k -= children + 1;
        }
        mask /= f;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_groups_ranks_by_host_in_world_order() {
        // Communicator ranks 0..5 are world ranks 5, 1, 4, 0, 3; hosts: world rank / 2.
        let l = Layout::new(&[5, 1, 4, 0, 3], |w| w / 2);
        // Host 0 holds world 0 and 1 (ranks 3, 1), host 1 world 3 (rank 4), host 2 world 4, 5.
        assert_eq!(l.groups, vec![vec![3, 1], vec![4], vec![2, 0]]);
        assert_eq!(l.pos, vec![(1, 2), (1, 0), (0, 2), (0, 0), (0, 1)]);
    }

    #[test]
    fn the_knomial_tree_has_four_children_per_level() {
        // 20 ranks from root 0: rank 0 sends to 16, then 4, 8, 12, then 1, 2, 3; rank 4 gets
        // from 0 and sends to 5, 6, 7; rank 5 only gets from 4; rank 16 gets from 0 and sends to
        // 17, 18, 19.
        let rounds = |r: usize| (0..).map_while(|k| knomial(r, 20, 0, k, 8.0, None)).map(|x| format!("{x:?}")).collect::<Vec<_>>();
        let send = |to: usize, slot: u32| format!("{:?}", Round::SendSlot { to, bytes: 8.0, slot, blocking: false });
        let wait = |n: u32| format!("{:?}", Round::Await { first: 0, n, combine: 0.0 });
        assert_eq!(rounds(0), [send(16, 0), wait(1), send(4, 0), send(8, 1), send(12, 2), wait(3), send(1, 0), send(2, 1), send(3, 2), wait(3)]);
        assert_eq!(rounds(4), ["Recv(0)".to_string(), send(5, 0), send(6, 1), send(7, 2), wait(3)]);
        assert_eq!(rounds(5), ["Recv(4)"]);
        assert_eq!(rounds(16), ["Recv(0)".to_string(), send(17, 0), send(18, 1), send(19, 2), wait(3)]);
        // Root 3 of 5: relative rank 1 is rank 4, relative 4 is rank 2.
        assert_eq!(knomial(2, 5, 3, 0, 8.0, None).map(|x| format!("{x:?}")), Some("Recv(3)".into()));
    }
}
