//! Open MPI's segmented and pipelined collectives, as SimGrid 3.32 runs them (its "tuned"
//! module's algorithms under `smpi/coll-selector:ompi` or their explicit names): the trees
//! they run on (`src/smpi/colls/coll_tuned_topo.cpp`), the generic segmented bcast
//! (`bcast/bcast-ompi-pipeline.cpp`) and reduce (`reduce/reduce-ompi.cpp`), SimGrid's
//! pipelined linear bcast (`bcast/bcast-NTSL.cpp`), each with its segment size.
//!
//! Each is written here as rounds of [`Round`]s: posts into scratch request slots
//! ([`Round::SendSlot`], [`Round::RecvSlot`]) and waits for them ([`Round::Await`]), so that a
//! rank keeps as many requests in flight as the algorithm does.

use super::Round;

/// Open MPI's trees allow at most this many children (`MAXTREEFANOUT`).
const MAX_FANOUT: usize = 32;

/// A rank's place in a tree: its parent (none at the root) and its children in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tree {
    pub prev: Option<usize>,
    pub next: Vec<usize>,
}

/// `fanout` chains hanging from `root` (`ompi_coll_tuned_topo_build_chain`): the p − 1 other
/// ranks, in order after the root, cut into `fanout` chains, the first (p − 1) mod fanout of
/// them one rank longer.
pub(crate) fn chain(fanout: usize, p: usize, root: usize, rank: usize) -> Tree {
    let mut fanout = fanout.clamp(1, MAX_FANOUT);
    if p - 1 < fanout {
        fanout = p - 1;
    }
    let s = (rank + p - root) % p;
    let world = |x: usize| (x + root) % p;
    if fanout == 1 {
        return Tree { prev: (s != 0).then(|| world(s - 1)), next: if s + 1 < p { vec![world(s + 1)] } else { vec![] } };
    }
    if p == 1 {
        return Tree { prev: None, next: vec![] };
    }
    let mut longest = (p - 1) / fanout;
    let long_chains = if (p - 1) % fanout != 0 {
        longest += 1;
        (p - 1) % fanout
    } else {
        fanout + 1
    };
    if s == 0 {
        // Heads of the chains: one chain length apart, one less after the long chains.
        let mut next = vec![world(1)];
        for i in 1..fanout {
            let step = longest - (i > long_chains) as usize;
            next.push((next[i - 1] + step) % p);
        }
        return Tree { prev: None, next };
    }
    let (head, len) = if s - 1 < long_chains * longest {
        (1 + (s - 1) / longest * longest, longest)
    } else {
        let column = long_chains + (s - 1 - long_chains * longest) / (longest - 1);
        (long_chains * longest + 1 + (column - long_chains) * (longest - 1), longest - 1)
    };
    let prev = if s == head { 0 } else { s - 1 };
    let next = if s == head + len - 1 || s + 1 >= p { vec![] } else { vec![world(s + 1)] };
    Tree { prev: Some(world(prev)), next }
}

/// A `fanout`-ary tree rooted at `root` (`ompi_coll_tuned_topo_build_tree`): level by level in
/// rank order after the root, shifted rank s at level l (with f^l ranks) having the children
/// s + f^l·i for i = 1..f.
pub(crate) fn kary_tree(fanout: usize, p: usize, root: usize, rank: usize) -> Tree {
    if p < 2 {
        return Tree { prev: None, next: vec![] };
    }
    let s = (rank + p - root) % p;
    // Level of s: the levels above it hold 1 + f + … + f^(level−1) ranks.
    let (mut level, mut above, mut width) = (0u32, 0usize, 1usize);
    while above + width <= s {
        above += width;
        width *= fanout;
        level += 1;
    }
    let delta = width;
    let next = (1..=fanout).map(|i| s + delta * i).take_while(|&c| c < p).map(|c| (c + root) % p).collect();
    if s == 0 {
        return Tree { prev: None, next };
    }
    let mut parent = s;
    if parent < fanout {
        parent = 0;
    } else {
        let levels_above = (fanout.pow(level) - 1) / (fanout - 1);
        while parent >= levels_above {
            parent -= delta / fanout;
        }
    }
    Tree { prev: Some((parent + root) % p), next }
}

/// Open MPI's in-order binary tree (`ompi_coll_tuned_topo_build_in_order_bintree`), rooted at
/// rank p − 1: a subtree of ranks [lo, lo + size) has its root at the top, its left child's
/// subtree above the right one's, the right one holding the lower size / 2 ranks.
pub(crate) fn in_order_bintree(p: usize, rank: usize) -> Tree {
    let (mut size, mut me, mut parent, mut delta) = (p as i64, rank as i64, p as i64 - 1, 0i64);
    let mut tree = Tree { prev: None, next: vec![] };
    loop {
        let right_size = size >> 1;
        let (mut left, mut right) = (-1i64, -1i64);
        if size - 1 > 0 {
            left = parent - 1;
            if left > 0 {
                right = right_size - 1;
            }
        }
        if me == parent {
            tree.next.extend([left, right].into_iter().filter(|&c| c >= 0).map(|c| (c + delta) as usize));
            return tree;
        }
        if me > right {
            if me == left {
                tree.prev = Some((parent + delta) as usize);
            }
            size -= right_size + 1;
            delta += right_size;
            me -= right_size;
            parent = size - 1;
        } else {
            if me == right {
                tree.prev = Some((parent + delta) as usize);
            }
            size = right_size;
            parent = right;
        }
    }
}

/// Open MPI's in-order binomial tree (`ompi_coll_tuned_topo_build_in_order_bmtree`): relative
/// rank v has the children v + 1, v + 2, v + 4, … below its lowest set bit.
pub(crate) fn in_order_bmtree(p: usize, root: usize, rank: usize) -> Tree {
    let v = (rank + p - root) % p;
    let mut tree = Tree { prev: None, next: vec![] };
    let mut mask = 1;
    while mask < p {
        let remote = v ^ mask;
        if remote < v {
            tree.prev = Some((remote + root) % p);
            break;
        } else if remote < p {
            tree.next.push((remote + root) % p);
        }
        mask <<= 1;
    }
    tree
}

/// Segments of a buffer of `bytes` cut at `segsize` bytes (Open MPI's
/// `COLL_TUNED_COMPUTED_SEGCOUNT` on bytes): one segment when `segsize` is 0 or not below the
/// buffer. Returns (segments, bytes of a full segment).
pub(crate) fn segments(bytes: f64, segsize: f64) -> (usize, f64) {
    if segsize >= 1.0 && segsize < bytes {
        ((bytes / segsize).ceil() as usize, segsize)
    } else {
        (1, bytes)
    }
}

/// Bytes of segment `i` of `n` segments of `seg` bytes cutting `bytes`.
fn segment_bytes(bytes: f64, seg: f64, n: usize, i: usize) -> f64 {
    if i + 1 == n {
        bytes - seg * (n - 1) as f64
    } else {
        seg
    }
}

/// `bcast__ompi_pipeline`'s segment size: 128 KiB, 64 KiB or 16 KiB by rank count and size.
pub(crate) fn bcast_pipeline_segsize(p: usize, bytes: f64) -> f64 {
    let p = p as f64;
    if p < 1.6134e-6 * bytes + 2.1102 {
        131072.0
    } else if p < 2.3679e-6 * bytes + 1.1787 {
        65536.0
    } else if p < 3.2118e-6 * bytes + 8.7936 {
        16384.0
    } else {
        131072.0
    }
}

/// `reduce__ompi_pipeline`'s segment size: 1 KiB, 32 KiB or 64 KiB.
pub(crate) fn reduce_pipeline_segsize(p: usize, bytes: f64) -> f64 {
    let p = p as f64;
    if p > 0.0410 / 1024.0 * bytes + 9.7128 {
        1024.0
    } else if p > 0.0033 / 1024.0 * bytes + 1.6761 {
        32768.0
    } else {
        65536.0
    }
}

/// `reduce__ompi_binomial`'s segment size: none for small buffers (below 20480 bytes on
/// fewer than 8 ranks, below 2048 bytes, or one element), 1 KiB on many ranks, else none.
pub(crate) fn reduce_binomial_segsize(p: usize, bytes: f64) -> f64 {
    if (p < 8 && bytes < 20480.0) || bytes < 2048.0 || bytes <= 1.0 {
        0.0
    } else if p as f64 > 0.6016 / 1024.0 * bytes + 1.3496 {
        1024.0
    } else {
        0.0
    }
}

/// Round `k` of Open MPI's generic segmented bcast on `tree` (`bcast__ompi_pipeline`, which
/// runs it on a chain of fanout 1) for a rank `is_root` or not, `bytes` in segments of
/// `segsize`. The root sends each segment to its children (all posted, then all awaited)
/// before the next; the others keep two receives from the parent posted (the next segment's
/// and the one being waited for) and forward each segment to their children as the root does.
pub(crate) fn bcast_generic(tree: &Tree, is_root: bool, k: usize, bytes: f64, segsize: f64) -> Option<Round> {
    let (n, seg) = segments(bytes, segsize);
    let c = tree.next.len();
    let send = |j: usize, b: f64| Round::SendSlot { to: tree.next[j], bytes: b, slot: 2 + j as u32, blocking: false };
    let await_sends = Round::Await { first: 2, n: c as u32, combine: 0.0 };
    if is_root {
        if c == 0 {
            return None;
        }
        let (s, j) = (k / (c + 1), k % (c + 1));
        if s >= n {
            return None;
        }
        return Some(if j < c { send(j, segment_bytes(bytes, seg, n, s)) } else { await_sends });
    }
    let parent = tree.prev?;
    let recv = |s: usize| Round::RecvSlot { from: parent, slot: (s % 2) as u32 };
    let await_recv = |s: usize| Round::Await { first: (s % 2) as u32, n: 1, combine: 0.0 };
    if k == 0 {
        return Some(recv(0));
    }
    // Then per segment s = 1..n: post s's receive, wait for s − 1's, forward it (sends posted,
    // then awaited); at last wait for segment n − 1 and forward it.
    let forward = |j: usize, s: usize| match j {
        j if j < c => Some(send(j, segment_bytes(bytes, seg, n, s))),
        j if j == c && c > 0 => Some(await_sends),
        _ => None,
    };
    let block = 2 + if c > 0 { c + 1 } else { 0 };
    let k = k - 1;
    if k < (n - 1) * block {
        let (s, j) = (k / block + 1, k % block);
        return match j {
            0 => Some(recv(s)),
            1 => Some(await_recv(s - 1)),
            j => forward(j - 2, s - 1),
        };
    }
    match k - (n - 1) * block {
        0 => Some(await_recv(n - 1)),
        j => forward(j - 1, n - 1),
    }
}

/// Round `k` of Open MPI's generic segmented reduce towards the root of `tree`
/// (`smpi_coll_tuned_ompi_reduce_generic`, with no limit on outstanding requests), `bytes` in
/// segments of `segsize`. A leaf sends each segment to its parent, blocking. A rank with
/// children goes through (segment, child) in order, posting the receive of the segment from
/// that child and then waiting for the receive posted before (two in flight), and after the
/// last child's part of a segment (when it starts the next) sends the segment to its parent,
/// blocking, unless it is the root.
pub(crate) fn reduce_generic(tree: &Tree, is_root: bool, k: usize, bytes: f64, segsize: f64) -> Option<Round> {
    let (n, seg) = segments(bytes, segsize);
    let c = tree.next.len();
    if c == 0 {
        let parent = tree.prev.filter(|_| !is_root)?;
        return (k < n).then(|| Round::Send { to: parent, bytes: segment_bytes(bytes, seg, n, k) });
    }
    let (t, phase) = (k / 3, k % 3);
    if t > n * c {
        return None;
    }
    let (s, i) = (t / c, t % c);
    Some(match phase {
        0 if s < n => Round::RecvSlot { from: tree.next[i], slot: (t % 2) as u32 },
        // What arrives last: segment s from child i − 1, or segment s − 1 from the last child.
        1 if t > 0 => {
            let combine = segment_bytes(bytes, seg, n, if i > 0 { s } else { s - 1 });
            Round::Await { first: ((t - 1) % 2) as u32, n: 1, combine }
        }
        2 if i == 0 && s > 0 && !is_root => match tree.prev {
            Some(parent) => Round::SendSlot { to: parent, bytes: segment_bytes(bytes, seg, n, s - 1), slot: 2, blocking: true },
            None => Round::Skip,
        },
        _ => Round::Skip,
    })
}

/// Rounds of [`reduce_generic`] for a rank with `tree`: one per segment for a leaf (none for a
/// lone root), else three per (segment, child) and three to finish.
pub(crate) fn reduce_generic_len(tree: &Tree, is_root: bool, bytes: f64, segsize: f64) -> usize {
    let (n, _) = segments(bytes, segsize);
    match tree.next.len() {
        0 if tree.prev.is_some() && !is_root => n,
        0 => 0,
        c => 3 * (n * c + 1),
    }
}

/// SimGrid's NTSL bcast pipelines segments of this many bytes (`bcast-NTSL.cpp`).
pub(crate) const NTSL_SEGMENT: f64 = 8192.0;

/// Rounds of SimGrid's NTSL bcast before its remainder, for rank `r` of `p` rooted at `root`
/// (`bcast-NTSL.cpp`): a root other than 0 first sends the whole buffer to rank 0; then the
/// chain 0 → 1 → … → p − 1 carries the buffer, whole when it is at most one segment (each
/// rank receives, then sends on, blocking), else in ⌊bytes / 8192⌋ segments of 8192 bytes,
/// rank 0 posting every send, the last rank every receive, the ranks between posting every
/// receive and then, segment by segment, waiting for it and posting its send on, each side
/// then waiting for all. The remainder (bytes mod 8192, when pipelined) is broadcast after
/// by the bcast algorithm in use for its size ([`ntsl_rest`]). `None` when the rank is done.
pub(crate) fn ntsl(r: usize, p: usize, root: usize, k: usize, bytes: f64) -> Option<Round> {
    if p < 2 {
        return None;
    }
    let (to, from) = ((r + 1) % p, (r + p - 1) % p);
    let k = match k.checked_sub((root != 0) as usize) {
        None if r == root => return Some(Round::Send { to: 0, bytes }),
        None if r == 0 => return Some(Round::Recv(root)),
        None => return Some(Round::Skip),
        Some(k) => k,
    };
    if bytes <= NTSL_SEGMENT {
        return match (r, k) {
            (0, 0) => Some(Round::Send { to, bytes }),
            (0, _) => None,
            (_, 0) => Some(Round::Recv(from)),
            (r, 1) if r + 1 < p => Some(Round::Send { to, bytes }),
            _ => None,
        };
    }
    let n = (bytes / NTSL_SEGMENT).floor() as usize;
    let all = |first: usize| Round::Await { first: first as u32, n: n as u32, combine: 0.0 };
    let send = |i: usize| Round::SendSlot { to, bytes: NTSL_SEGMENT, slot: i as u32, blocking: false };
    let recv = |i: usize| Round::RecvSlot { from, slot: i as u32 };
    Some(if r == 0 {
        match k {
            k if k < n => send(k),
            k if k == n => all(0),
            _ => return None,
        }
    } else if r == p - 1 {
        match k {
            k if k < n => recv(k),
            k if k == n => all(0),
            _ => return None,
        }
    } else {
        match k {
            k if k < n => recv(k),
            k if k < 3 * n => {
                let i = (k - n) / 2;
                if (k - n) % 2 == 0 {
                    Round::Await { first: i as u32, n: 1, combine: 0.0 }
                } else {
                    Round::SendSlot { to, bytes: NTSL_SEGMENT, slot: (n + i) as u32, blocking: false }
                }
            }
            k if k == 3 * n => all(n),
            _ => return None,
        }
    })
}

/// Rounds rank `r` spends in NTSL's pipeline ([`ntsl`]), and the bytes left for the remainder
/// bcast (0: none).
pub(crate) fn ntsl_len(r: usize, p: usize, root: usize, bytes: f64) -> (usize, f64) {
    let pre = (root != 0) as usize;
    if p < 2 || bytes <= NTSL_SEGMENT {
        return (pre + 2, 0.0);
    }
    let n = (bytes / NTSL_SEGMENT).floor() as usize;
    let own = if r == 0 || r == p - 1 { n + 1 } else { 3 * n + 1 };
    (pre + own, bytes - n as f64 * NTSL_SEGMENT)
}

/// SimGrid's NTSB bcast pipelines segments of this many bytes (`bcast-NTSB.cpp`).
pub(crate) const NTSB_SEGMENT: f64 = 8192.0;

/// Round `k` of SimGrid's NTSB bcast beyond one segment (`bcast-NTSB.cpp`; at most one segment
/// is the plain binary tree) for rank `r` of `p` rooted at `root`, before its remainder: a root
/// other than 0 first sends the whole buffer to rank 0; then on the binary tree of rank r
/// (parent (r − 1) / 2, children 2r + 1 and 2r + 2 that exist) the buffer goes in ⌊bytes /
/// 8192⌋ segments of 8192 bytes: rank 0 posts every segment's sends (to the left child, then
/// the right) and waits for them all; a leaf posts every receive, then waits for them all; a
/// rank between posts every receive, then for each segment waits for it and posts its sends
/// on, and at last waits for all its sends. The remainder (bytes mod 8192) is broadcast after
/// by the bcast in use for its size. `None` when the rank is done.
pub(crate) fn ntsb(r: usize, p: usize, root: usize, k: usize, bytes: f64) -> Option<Round> {
    if p < 2 {
        return None;
    }
    let k = match k.checked_sub((root != 0) as usize) {
        None if r == root => return Some(Round::Send { to: 0, bytes }),
        None if r == 0 => return Some(Round::Recv(root)),
        None => return Some(Round::Skip),
        Some(k) => k,
    };
    let n = (bytes / NTSB_SEGMENT).floor() as usize;
    let children: Vec<usize> = [2 * r + 1, 2 * r + 2].into_iter().filter(|&c| c < p).collect();
    let c = children.len();
    // Sends of segment i to child j go to slot base + j·n + i.
    let send = |base: usize, i: usize, j: usize| Round::SendSlot { to: children[j], bytes: NTSB_SEGMENT, slot: (base + j * n + i) as u32, blocking: false };
    let all = |first: usize, m: usize| Round::Await { first: first as u32, n: m as u32, combine: 0.0 };
    if r == 0 {
        return match k {
            k if k < c * n => Some(send(0, k / c, k % c)),
            k if k == c * n => Some(all(0, c * n)),
            _ => None,
        };
    }
    let from = (r - 1) / 2;
    Some(match k {
        k if k < n => Round::RecvSlot { from, slot: k as u32 },
        k if c == 0 && k == n => all(0, n),
        k if c > 0 && k < n + n * (1 + c) => {
            let (i, j) = ((k - n) / (1 + c), (k - n) % (1 + c));
            if j == 0 {
                all(i, 1)
            } else {
                send(n, i, j - 1)
            }
        }
        k if c > 0 && k == n + n * (1 + c) => all(n, c * n),
        _ => return None,
    })
}

/// Rounds rank `r` spends in NTSB's pipeline ([`ntsb`], bytes above one segment), and the
/// bytes left for the remainder bcast (0: none).
pub(crate) fn ntsb_len(r: usize, p: usize, root: usize, bytes: f64) -> (usize, f64) {
    let pre = (root != 0) as usize;
    let n = (bytes / NTSB_SEGMENT).floor() as usize;
    let rest = bytes - n as f64 * NTSB_SEGMENT;
    if p < 2 {
        return (0, rest);
    }
    let c = [2 * r + 1, 2 * r + 2].into_iter().filter(|&c| c < p).count();
    let own = match (r, c) {
        (0, c) => c * n + 1,
        (_, 0) => n + 1,
        (_, c) => n + n * (1 + c) + 1,
    };
    (pre + own, rest)
}

/// Open MPI's `COLL_TUNED_COMPUTE_BLOCKCOUNT`: `count` cut into `n` blocks, the first
/// `count mod n` one larger. Returns (split, early block, late block).
fn blockcount(count: u64, n: u64) -> (u64, u64, u64) {
    let (late, split) = (count / n, count % n);
    (split, late + (split != 0) as u64, late)
}

/// Open MPI's segmented ring allreduce as SimGrid runs it (`allreduce-ompi-ring-segmented.cpp`)
/// on `bytes` (counts of MPI_BYTE) over `p` ranks, from p segments of 1 MiB up (below, it runs
/// lr): its phases and the byte counts of the pieces. `None` below p segments.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RingSegmented {
    p: u64,
    phases: u64,
    /// (split, early, late) of the p blocks.
    blocks: (u64, u64, u64),
}

/// Open MPI's segment for the segmented ring (1 MiB).
const RING_SEGMENT: u64 = 1 << 20;

impl RingSegmented {
    pub(crate) fn new(bytes: f64, p: usize) -> Option<RingSegmented> {
        let (count, p) = (bytes as u64, p as u64);
        let segcount = if RING_SEGMENT < count { RING_SEGMENT } else { count };
        if p < 2 || count < p * segcount {
            return None;
        }
        let mut phases = count / (p * segcount);
        let left = count % (p * segcount);
        if left >= p && left > p * segcount / 2 {
            phases += 1;
        }
        Some(RingSegmented { p, phases, blocks: blockcount(count, p) })
    }

    /// Bytes of block `b`.
    fn block(&self, b: usize) -> f64 {
        let (split, early, late) = self.blocks;
        (if (b as u64) < split { early } else { late }) as f64
    }

    /// Bytes of phase `phase`'s piece of block `b`.
    fn piece(&self, b: usize, phase: usize) -> f64 {
        let (split, early, late) = blockcount(self.block(b) as u64, self.phases);
        (if (phase as u64) < split { early } else { late }) as f64
    }

    /// Rounds of one phase: the first receive posted, the rank's own piece sent, then for each
    /// of p − 2 steps the next receive posted, the last one awaited and its piece sent on, and
    /// the last receive awaited.
    fn per_phase(&self) -> usize {
        3 * self.p as usize
    }

    /// Rounds of every rank: the phases, then the p − 1 steps of the allgather.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.phases as usize * self.per_phase() + self.p as usize - 1
    }

    /// Round `k` of rank `r`: in each phase, on the ring r − 1 → r → r + 1, the piece of block
    /// r, then those of blocks r − 1, r − 2, …, r + 2 (each once the piece from r − 1 is in,
    /// two receives posted ahead), blocking sends; then a ring allgather of the whole blocks
    /// (block r + 1 − k at step k).
    pub(crate) fn round(&self, r: usize, k: usize) -> Option<Round> {
        let p = self.p as usize;
        let (to, from) = ((r + 1) % p, (r + p - 1) % p);
        let reduce_end = self.phases as usize * self.per_phase();
        if k >= reduce_end {
            let k = k - reduce_end;
            return (k + 1 < p).then(|| Round::SendRecv { dst: to, src: from, bytes: self.block((r + 1 + p - k) % p) });
        }
        let (phase, j) = (k / self.per_phase(), k % self.per_phase());
        let send = |b: usize| Round::SendSlot { to, bytes: self.piece(b, phase), slot: 2, blocking: true };
        Some(match j {
            0 => Round::RecvSlot { from, slot: 0 },
            1 => send(r),
            j if j < 2 + 3 * (p - 2) => {
                // Step s = 2..p − 1: post the receive into slot s − 1 mod 2, wait for the other,
                // combine and send on block r − s + 1.
                let (s, part) = ((j - 2) / 3 + 2, (j - 2) % 3);
                let prev = (r + p - s + 1) % p;
                match part {
                    0 => Round::RecvSlot { from, slot: ((s - 1) % 2) as u32 },
                    1 => Round::Await { first: (s % 2) as u32, n: 1, combine: self.piece(prev, phase) },
                    _ => send(prev),
                }
            }
            j if j == 2 + 3 * (p - 2) => Round::Await { first: ((p - 2) % 2) as u32, n: 1, combine: self.piece((r + 1) % p, phase) },
            _ => Round::Skip,
        })
    }
}

/// `bcast__ompi_split_bintree`'s segment size: 1 KiB below 370728 bytes, else 8 KiB.
pub(crate) fn split_bintree_segsize(bytes: f64) -> f64 {
    if bytes < 370728.0 {
        1024.0
    } else {
        8192.0
    }
}

/// The halves of a split-bintree bcast: the first ⌈bytes / 2⌉ bytes, the rest.
fn halves(bytes: f64) -> [f64; 2] {
    let first = (bytes / 2.0).ceil();
    [first, bytes - first]
}

/// Whether SimGrid's split-bintree runs its own algorithm on `bytes` (else it turns to
/// `SMP_linear`): each half holds at least one segment.
pub(crate) fn split_bintree_splits(bytes: f64) -> bool {
    let seg = split_bintree_segsize(bytes);
    halves(bytes).iter().all(|&h| h >= seg && h > 0.0)
}

/// Round `k` of Open MPI's split-binary-tree bcast (`bcast-ompi-split-bintree.cpp`) for rank
/// `r` of `p` rooted at `root`: the root sends the first half of the buffer down its first
/// child's subtree and the second half down the other, segment by segment (blocking sends,
/// the two children in turn); a rank with children receives its half's segments with the next
/// one's receive posted ahead and forwards each to its children (blocking sends); a leaf
/// receives them one by one. Then each rank trades halves with its pair in the other subtree
/// (rank + 1 for the odd shifted ranks, rank − 1 for the even); with p even the last rank has
/// no pair and gets the second half from the root. Needs [`split_bintree_splits`].
pub(crate) fn split_bintree(r: usize, p: usize, root: usize, k: usize, bytes: f64) -> Option<Round> {
    if p < 2 {
        return None;
    }
    let tree = kary_tree(2, p, root, r);
    let seg = split_bintree_segsize(bytes);
    let half = halves(bytes);
    let count = half.map(|h| segments(h, seg).0);
    let s = (r + p - root) % p;
    // The half this rank's subtree carries: 0 for odd shifted ranks, 1 for even (the root).
    let lr = (s + 1) % 2;
    let c = tree.next.len();
    let tree_len = if r == root {
        count[0] * c
    } else if c > 0 {
        1 + (count[lr] - 1) * (2 + c) + 1 + c
    } else {
        count[lr]
    };
    let tree_round = |k: usize| -> Option<Round> {
        if k >= tree_len {
            return None;
        }
        if r == root {
            let (sg, i) = (k / c, k % c);
            return Some(if sg < count[i] {
                Round::SendSlot { to: tree.next[i], bytes: segment_bytes(half[i], seg, count[i], sg), slot: 2, blocking: true }
            } else {
                Round::Skip
            });
        }
        let parent = tree.prev?;
        let n = count[lr];
        if c == 0 {
            return Some(Round::Recv(parent));
        }
        let send = |i: usize, sg: usize| Round::SendSlot { to: tree.next[i], bytes: segment_bytes(half[lr], seg, n, sg), slot: 2, blocking: true };
        if k == 0 {
            return Some(Round::RecvSlot { from: parent, slot: 0 });
        }
        let k = k - 1;
        let block = 2 + c;
        if k < (n - 1) * block {
            let (sg, j) = (k / block + 1, k % block);
            return Some(match j {
                0 => Round::RecvSlot { from: parent, slot: (sg % 2) as u32 },
                1 => Round::Await { first: ((sg - 1) % 2) as u32, n: 1, combine: 0.0 },
                j => send(j - 2, sg - 1),
            });
        }
        Some(match k - (n - 1) * block {
            0 => Round::Await { first: ((n - 1) % 2) as u32, n: 1, combine: 0.0 },
            j => send(j - 1, n - 1),
        })
    };
    let pair = if lr == 0 { (r + 1) % p } else { (r + p - 1) % p };
    let last = (root + p - 1) % p;
    then_round(k, tree_len, tree_round, |j| match j {
        0 if p % 2 == 1 && r != root => Some(Round::SendRecv { dst: pair, src: pair, bytes: half[lr] }),
        0 if p % 2 == 0 && r == root => Some(Round::Send { to: last, bytes: half[1] }),
        0 if p % 2 == 0 && r == last => Some(Round::Recv(root)),
        0 if p % 2 == 0 => Some(Round::SendRecv { dst: pair, src: pair, bytes: half[lr] }),
        _ => None,
    })
}

/// Rounds of `first` (padded to `len`), then of `second`.
fn then_round(k: usize, len: usize, first: impl Fn(usize) -> Option<Round>, second: impl Fn(usize) -> Option<Round>) -> Option<Round> {
    if k < len {
        Some(first(k).unwrap_or(Round::Skip))
    } else {
        second(k - len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn children(tree: impl Fn(usize) -> Tree, p: usize) -> Vec<Vec<usize>> {
        (0..p).map(|r| tree(r).next).collect()
    }

    #[test]
    fn trees_are_open_mpis_worked_out_by_hand() {
        // Chain of fanout 1 from root 2 of 5: 2 → 3 → 4 → 0 → 1.
        assert_eq!(children(|r| chain(1, 5, 2, r), 5), vec![vec![1], vec![], vec![3], vec![4], vec![0]]);
        // Fanout 3 over 8 ranks: 7 others in chains of 3, 2, 2: 1-2-3, 4-5, 6-7.
        let t = |r| chain(3, 8, 0, r);
        assert_eq!(children(t, 8), vec![vec![1, 4, 6], vec![2], vec![3], vec![], vec![5], vec![], vec![7], vec![]]);
        assert_eq!((0..8).map(|r| t(r).prev).collect::<Vec<_>>(), vec![None, Some(0), Some(1), Some(2), Some(0), Some(4), Some(0), Some(6)]);
        // Binary tree of 8: 0 → 1, 2; 1 → 3, 5; 2 → 4, 6; 3 → 7.
        let b = |r| kary_tree(2, 8, 0, r);
        assert_eq!(children(b, 8), vec![vec![1, 2], vec![3, 5], vec![4, 6], vec![7], vec![], vec![], vec![], vec![]]);
        assert_eq!((0..8).map(|r| b(r).prev).collect::<Vec<_>>(), vec![None, Some(0), Some(0), Some(1), Some(2), Some(1), Some(2), Some(3)]);
        // In-order binary tree of 7: root 6 with 5 (left: 3..=5) and 2 (right: 0..=2).
        let io = |r| in_order_bintree(7, r);
        assert_eq!(children(io, 7), vec![vec![], vec![], vec![1, 0], vec![], vec![], vec![4, 3], vec![5, 2]]);
        assert_eq!(io(0).prev, Some(2));
        assert_eq!(io(6).prev, None);
        // In-order binomial from root 1 of 5: relative 0 → 1, 2, 4; 2 → 3.
        assert_eq!(children(|r| in_order_bmtree(5, 1, r), 5), vec![vec![], vec![2, 3, 0], vec![], vec![4], vec![]]);
    }

    fn rounds(f: impl Fn(usize) -> Option<Round>) -> Vec<Round> {
        (0..).map_while(f).collect()
    }

    #[test]
    fn segments_follow_open_mpis_count() {
        assert_eq!(segments(100.0, 0.0), (1, 100.0));
        assert_eq!(segments(100.0, 100.0), (1, 100.0));
        assert_eq!(segments(250.0, 100.0), (3, 100.0));
        assert_eq!(segment_bytes(250.0, 100.0, 3, 2), 50.0);
    }

    #[test]
    fn a_pipeline_rank_keeps_two_receives_and_forwards_each_segment() {
        let mid = Tree { prev: Some(0), next: vec![2] };
        let r = rounds(|k| bcast_generic(&mid, false, k, 250.0, 100.0));
        let kinds: Vec<String> = r.iter().map(|x| format!("{x:?}")).collect();
        // recv 0; (recv 1, wait 0, send 0, wait sends); (recv 2, wait 1, send 1, wait); (wait 2, send 2, wait).
        assert_eq!(r.len(), 1 + 4 + 4 + 3, "{kinds:?}");
        assert!(matches!(r[3], Round::SendSlot { to: 2, bytes, .. } if bytes == 100.0));
        assert!(matches!(r[10], Round::SendSlot { to: 2, bytes, .. } if bytes == 50.0));
        let leaf = Tree { prev: Some(1), next: vec![] };
        assert_eq!(rounds(|k| bcast_generic(&leaf, false, k, 250.0, 100.0)).len(), 1 + 2 + 2 + 1);
        let root = Tree { prev: None, next: vec![1, 2] };
        assert_eq!(rounds(|k| bcast_generic(&root, true, k, 250.0, 100.0)).len(), 3 * 3);
    }

    #[test]
    fn reduce_generic_lengths_match_its_rounds() {
        for p in [2, 3, 4, 5, 7, 8, 13] {
            for root in [0, p - 1] {
                for (bytes, seg) in [(100.0, 0.0), (100.0, 30.0), (65536.0, 1024.0)] {
                    for r in 0..p {
                        for tree in [chain(1, p, root, r), chain(p / 2, p, root, r), kary_tree(2, p, root, r), in_order_bmtree(p, root, r)] {
                            let n = (0..).take_while(|&k| reduce_generic(&tree, r == root, k, bytes, seg).is_some()).count();
                            assert_eq!(reduce_generic_len(&tree, r == root, bytes, seg), n, "{p} {root} {bytes} {seg} {r} {tree:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ntsb_lengths_match_its_rounds() {
        for (p, root, bytes) in [(4, 0, 9000.0), (4, 2, 30000.0), (5, 0, 30000.0), (7, 3, 40960.0), (2, 1, 9000.0), (8, 7, 100000.0)] {
            for r in 0..p {
                let (len, _) = ntsb_len(r, p, root, bytes);
                let rounds = (0..).take_while(|&k| ntsb(r, p, root, k, bytes).is_some()).count();
                assert_eq!(rounds, len, "{p} {root} {bytes} {r}");
            }
        }
        assert_eq!(ntsb_len(1, 5, 0, 30000.0).1, 30000.0 - 3.0 * 8192.0);
        // Rank 1 of 5 (children 3 and 4) with 2 segments: 2 receives, then per segment a wait
        // and two sends (slots 2 + 2j + i), then the wait for its 4 sends.
        let r: Vec<String> = (0..).map_while(|k| ntsb(1, 5, 0, k, 20000.0)).map(|x| format!("{x:?}")).collect();
        assert_eq!(r[2..5], ["Await { first: 0, n: 1, combine: 0.0 }", "SendSlot { to: 3, bytes: 8192.0, slot: 2, blocking: false }",
                             "SendSlot { to: 4, bytes: 8192.0, slot: 4, blocking: false }"]);
        assert_eq!(r[8], "Await { first: 2, n: 4, combine: 0.0 }");
    }

    #[test]
    fn the_segmented_ring_follows_open_mpis_phases() {
        const MIB: f64 = 1048576.0;
        // Below p segments of 1 MiB: lr.
        assert!(RingSegmented::new(4.0 * MIB - 1.0, 4).is_none());
        // 4 MiB + 3 on 4 ranks: one phase (the 3 left are fewer than p), blocks of 1 MiB + 1 (3)
        // and 1 MiB.
        let one = RingSegmented::new(4.0 * MIB + 3.0, 4).unwrap();
        assert_eq!((one.phases, one.block(2), one.block(3)), (1, MIB + 1.0, MIB));
        // 6 MiB on 4 ranks: 1 phase and 2 MiB left, not above half of 4 MiB: still 1; 7 MiB: 2.
        assert_eq!(RingSegmented::new(6.0 * MIB, 4).unwrap().phases, 1);
        let two = RingSegmented::new(7.0 * MIB, 4).unwrap();
        assert_eq!((two.phases, two.piece(0, 0), two.piece(0, 1)), (2, 7.0 * MIB / 8.0, 7.0 * MIB / 8.0));
        for (bytes, p) in [(7.0 * MIB, 4), (3.0 * MIB + 5.0, 3), (2.0 * MIB, 2), (11.0 * MIB, 5)] {
            let ring = RingSegmented::new(bytes, p).unwrap();
            for r in 0..p {
                let rounds: Vec<Round> = (0..).map_while(|k| ring.round(r, k)).collect();
                assert_eq!(rounds.len(), ring.len());
                // Every piece of every block but r + 1's own is sent once per phase (p − 1 a
                // phase), then p − 1 whole blocks: the sends add up to (p − 1)/p of the
                // reduce-scatter and of the allgather.
                let sent: f64 = rounds.iter().map(|x| match *x {
                    Round::SendSlot { bytes, .. } | Round::SendRecv { bytes, .. } => bytes,
                    _ => 0.0,
                }).sum();
                let own: f64 = (0..ring.phases as usize).map(|ph| ring.piece((r + 1) % p, ph)).sum::<f64>() + ring.block((r + 2) % p);
                assert_eq!(sent, 2.0 * bytes - own, "{bytes} {p} {r}");
            }
        }
    }

    #[test]
    fn ntsl_lengths_match_its_rounds() {
        for (p, root, bytes) in [(4, 0, 100.0), (4, 2, 100.0), (5, 0, 30000.0), (5, 3, 40960.0), (2, 1, 9000.0)] {
            for r in 0..p {
                let (len, _) = ntsl_len(r, p, root, bytes);
                let last = (0..len).filter(|&k| !matches!(ntsl(r, p, root, k, bytes), None | Some(Round::Skip))).max();
                assert!(last.is_some_and(|k| k < len) && ntsl(r, p, root, len, bytes).is_none(), "{p} {root} {bytes} {r}");
            }
        }
        assert_eq!(ntsl_len(1, 5, 0, 30000.0).1, 30000.0 - 3.0 * 8192.0);
    }
}
