//! Reduce-scatters (and the allgather that shares MPICH's recursive doubling) as SimGrid 3.32 runs them where its `smpi/coll-selector:ompi` or
//! `smpi/reduce_scatter:NAME` leads: MPICH's recursive doubling
//! (`src/smpi/colls/reduce_scatter/reduce_scatter-mpich.cpp`, `reduce_scatter__mpich_rdb`),
//! which SMPI's `reduce_scatter__default` (`src/smpi/colls/smpi_default_selector.cpp`) runs
//! for blocks of different sizes, and Open MPI's butterfly
//! (`src/smpi/colls/reduce_scatter/reduce_scatter-ompi.cpp`, `reduce_scatter__ompi_butterfly`).
//! Each is written as rounds of [`Round`]s with, beside each round, the bytes the rank
//! combines after it (what a reduction costs on a platform with
//! `network.reduction_flops_per_byte`).

use super::{floor_pow2, log2_ceil, Round};

/// Bytes of the blocks outside ranks `first .. first + n` (those at or beyond p count none).
fn outside(counts: &[f64], first: usize, n: usize) -> f64 {
    let p = counts.len();
    let total: f64 = counts.iter().sum();
    total - counts[first.min(p)..(first + n).min(p)].iter().sum::<f64>()
}

/// Round `k` of rank `r` in MPICH's recursive-doubling reduce-scatter over blocks `counts`
/// (one per rank), and the bytes it combines after it: [`doubling`] where a rank sends every
/// block outside its own group and receives every block outside its partner's.
pub(crate) fn mpich_rdb(r: usize, p: usize, k: usize, counts: &[f64]) -> Option<(Round, f64)> {
    doubling(r, p, k, |first, n| outside(counts, first, n))
}

/// Round `k` of rank `r` in MPICH's recursive-doubling allgather as SimGrid's `allgather__rdb`
/// (`src/smpi/colls/allgather/allgather-rdb.cpp`) runs it, on any count, `bytes` a block:
/// [`doubling`] where a rank sends the blocks of its own group and receives its partner's.
pub(crate) fn allgather_rdb(r: usize, p: usize, k: usize, bytes: f64) -> Option<Round> {
    doubling(r, p, k, |first, n| (p.saturating_sub(first)).min(n) as f64 * bytes).map(|(rd, _)| rd)
}

/// MPICH's recursive doubling with its fix for a count p that is not a power of two (the
/// reduce-scatter, the allgather and the allgather of the scatter_rdb_allgather bcast share it), and what the rank takes in after each round;
/// `group(first, n)` is the bytes a rank of the aligned group of ranks `first .. first + n`
/// sends for it (ranks at or beyond p are none).
///
/// Step i (distance 2^i, i < ⌈log2 p⌉) is one round and then i more. In the first, a rank whose
/// partner r XOR 2^i exists trades with it: it sends `group` of its own group of 2^i ranks and
/// receives its partner's. When the partner's group reaches past p, the ranks of this group
/// that had no partner get, in the i rounds after, what the others received, by recursive
/// halving inside the group: at distance 2^(i−1), …, 1, a rank that has it sends to one that
/// lacks it (blocking).
pub(crate) fn doubling(r: usize, p: usize, k: usize, group: impl Fn(usize, usize) -> f64) -> Option<(Round, f64)> {
    // Find the step: step i spans rounds start .. start + 1 + i.
    let (mut i, mut start) = (0usize, 0usize);
    while start + 1 + i <= k {
        start += 1 + i;
        i += 1;
    }
    if i >= log2_ceil(p) {
        return None;
    }
    let j = k - start;
    let mask = 1usize << i;
    let dst = r ^ mask;
    let (mine, theirs) = (r >> i << i, dst >> i << i);
    let received = group(theirs, mask);
    if j == 0 {
        return Some(if dst < p { (Round::SendRecv { dst, src: dst, bytes: group(mine, mask) }, received) } else { (Round::Skip, 0.0) });
    }
    if theirs + mask <= p {
        return Some((Round::Skip, 0.0));
    }
    // The ranks of this group that had a partner: those below mine + done.
    let done = p as i64 - (mine + mask) as i64;
    let level = i - (j - 1);
    let tree = (r >> level << level) as i64;
    let peer = r ^ (mask >> j);
    let (ri, pi) = (r as i64, peer as i64);
    Some(if pi > ri && ri < tree + done && pi >= tree + done {
        (Round::Send { to: peer, bytes: received }, 0.0)
    } else if pi < ri && pi < tree + done && ri >= tree + done {
        (Round::Recv(peer), received)
    } else {
        (Round::Skip, 0.0)
    })
}

/// Round `k` of rank `r` in Open MPI's butterfly reduce-scatter over blocks `counts`, and the
/// bytes it combines after it.
///
/// With pof2 the largest power of two ≤ p and rem = p − pof2: round 0, each even rank of the
/// first 2·rem sends its whole buffer to the odd one above (blocking), which combines it; the odd
/// ones and the ranks from 2·rem on (virtual ranks 0 … pof2 − 1: r / 2, r − rem) then run log2
/// pof2 butterfly rounds over pof2 blocks of the buffer (block b holding ranks 2b and 2b + 1'
/// blocks for b < rem, rank b + rem's otherwise): at distance 1, 2, … a virtual rank keeps the
/// half of its window of blocks on its side of the partner and sends the other half. Last,
/// each virtual rank v holds block mirror(v) (v's bits reversed): it sends the first of a pair
/// to the even rank that sat out, and, unless mirror(v) = v, trades with the rank holding its own
/// block. A rank that sat out receives its block from the holder.
pub(crate) fn butterfly(r: usize, p: usize, k: usize, counts: &[f64]) -> Option<(Round, f64)> {
    if p < 2 {
        return None;
    }
    let pof2 = floor_pow2(p);
    let rem = p - pof2;
    let bits = pof2.trailing_zeros() as usize;
    let total: f64 = counts.iter().sum();
    let real = |v: usize| if v < rem { 2 * v + 1 } else { v + rem };
    // Bytes of virtual blocks lo ..= hi (ompi_sum_counts).
    let first_rank = |b: usize| if b < rem { 2 * b } else { b + rem };
    let last_rank = |b: usize| if b < rem { 2 * b + 1 } else { b + rem };
    let span = |lo: usize, hi: usize| counts[first_rank(lo)..=last_rank(hi)].iter().sum::<f64>();
    let mirror = |v: usize| if bits == 0 { 0 } else { v.reverse_bits() >> (usize::BITS as usize - bits) };
    let folded = r < 2 * rem;
    if folded && r % 2 == 0 {
        // Sits out: sends its buffer, then receives its block from the holder.
        return match k {
            0 => Some((Round::Send { to: r + 1, bytes: total }, 0.0)),
            1 => Some((Round::Recv(real(mirror((r + 1) / 2))), 0.0)),
            _ => None,
        };
    }
    let vrank = if folded { r / 2 } else { r - rem };
    if k == 0 {
        return Some(if folded { (Round::Recv(r - 1), total) } else { (Round::Skip, 0.0) });
    }
    let k = k - 1;
    if k < bits {
        // Replay the windows up to round k.
        let (mut nblocks, mut send_index, mut recv_index) = (pof2, 0usize, 0usize);
        for step in 0..=k {
            let mask = 1usize << step;
            nblocks /= 2;
            if vrank & mask == 0 {
                send_index += nblocks;
            } else {
                recv_index += nblocks;
            }
            if step < k {
                send_index = recv_index;
            }
        }
        let peer = real(vrank ^ (1 << k));
        let (sent, got) = (span(send_index, send_index + nblocks - 1), span(recv_index, recv_index + nblocks - 1));
        return Some((Round::SendRecv { dst: peer, src: peer, bytes: sent }, got));
    }
    // The result block mirror(vrank): its first rank's part to the rank that sat out, then the
    // trade with the rank that owns it.
    let vpeer = mirror(vrank);
    let peer = real(vpeer);
    let index = first_rank(vpeer);
    match k - bits {
        0 if vpeer < rem => Some((Round::Send { to: peer - 1, bytes: counts[index] }, 0.0)),
        0 => Some((Round::Skip, 0.0)),
        1 if vpeer != vrank => Some((Round::SendRecv { dst: peer, src: peer, bytes: counts[last_rank(vpeer)] }, 0.0)),
        _ => None,
    }
}
