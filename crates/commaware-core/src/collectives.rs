//! Collective algorithms, and which one each collective uses.
//!
//! Every algorithm is a sequence of rounds; in a round a rank sends at most one message
//! and receives at most one (both posted, then both awaited, as MPI_Sendrecv). Ranks and
//! roots here are ranks of the collective's communicator. The defaults are MPICH's
//! algorithms for these operations (the notes' "Collective sizes"); the others carry
//! SimGrid's names where the algorithm is the same, and the `mpich` preset picks among
//! them by message size and communicator size as MPICH's selector does (docs/formats.md).

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
use crate::trace::OpSpec;

/// One round of a collective: at most one send (of `bytes`) and one receive.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Round {
    Send { to: usize, bytes: f64 },
    Recv(usize),
    SendRecv { dst: usize, src: usize, bytes: f64 },
    /// A round this rank sits out (its algorithm has nothing for it here).
    Skip,
}

impl Round {
    pub(crate) fn len(self) -> u8 {
        match self {
            Round::Send { .. } | Round::Recv(_) => 2,
            Round::SendRecv { .. } => 3,
            Round::Skip => 0,
        }
    }
}

/// An algorithm of one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Algo {
    /// Barrier: dissemination, round k with rank ± 2^k (SimGrid's `ompi_bruck`).
    Dissemination,
    /// Binomial tree (bcast: the largest subtree first; reduce, gather, scatter).
    Binomial,
    /// Bcast: binomial scatter of the buffer, then recursive-doubling allgather (power of two).
    ScatterRdbAllgather,
    /// Bcast: binomial scatter of the buffer, then ring allgather.
    ScatterLrAllgather,
    /// Recursive doubling (allreduce with MPICH's fold for a non-power-of-two count; allgather,
    /// power of two only; scan and exscan).
    Rdb,
    /// Allreduce: ring reduce-scatter then ring allgather (SimGrid's `lr`).
    Lr,
    /// Allreduce: Rabenseifner, recursive-halving reduce-scatter then recursive-doubling allgather.
    RabRdb,
    /// Allreduce: binomial reduce to rank 0, then binomial bcast.
    Redbcast,
    /// Alltoall(v), reduce-scatter: pairwise exchange, XOR partners for a power of two, rank ± i otherwise (MPICH's).
    Pairwise,
    /// Alltoall: XOR partners, power of two only (SimGrid's `pair`).
    Pair,
    /// Alltoall: round i sends to rank + i, receives from rank − i; allgather(v): the ring.
    Ring,
    /// Bruck: log p rounds of store-and-forward (alltoall, allgather).
    Bruck,
    /// Gatherv, scatterv: the root deals with each rank in turn.
    Linear,
}

impl Algo {
    pub fn name(self) -> &'static str {
        match self {
            Algo::Dissemination => "ompi_bruck",
            Algo::Binomial => "binomial",
            Algo::ScatterRdbAllgather => "scatter_rdb_allgather",
            Algo::ScatterLrAllgather => "scatter_lr_allgather",
            Algo::Rdb => "rdb",
            Algo::Lr => "lr",
            Algo::RabRdb => "rab_rdb",
            Algo::Redbcast => "redbcast",
            Algo::Pairwise => "pairwise",
            Algo::Pair => "pair",
            Algo::Ring => "ring",
            Algo::Bruck => "bruck",
            Algo::Linear => "linear",
        }
    }

    /// Whether the algorithm needs a power-of-two communicator.
    fn needs_pof2(self) -> bool {
        matches!(self, Algo::ScatterRdbAllgather | Algo::Pair) || self == Algo::Rdb
    }
}

/// The algorithms each collective offers, its default first.
pub const ALGORITHMS: &[(&str, &[Algo])] = &[
    ("barrier", &[Algo::Dissemination]),
    ("bcast", &[Algo::Binomial, Algo::ScatterRdbAllgather, Algo::ScatterLrAllgather]),
    ("reduce", &[Algo::Binomial]),
    ("allreduce", &[Algo::Rdb, Algo::Lr, Algo::RabRdb, Algo::Redbcast]),
    ("alltoall", &[Algo::Pairwise, Algo::Pair, Algo::Ring, Algo::Bruck]),
    ("alltoallv", &[Algo::Pairwise, Algo::Ring]),
    ("gather", &[Algo::Binomial]),
    ("gatherv", &[Algo::Linear]),
    ("scatter", &[Algo::Binomial]),
    ("scatterv", &[Algo::Linear]),
    ("allgather", &[Algo::Ring, Algo::Rdb, Algo::Bruck]),
    ("allgatherv", &[Algo::Ring]),
    ("reduce_scatter", &[Algo::Pairwise]),
    ("scan", &[Algo::Rdb]),
    ("exscan", &[Algo::Rdb]),
];

/// Presets that pick an algorithm by message size and communicator size.
pub const PRESETS: &[&str] = &["mpich"];

fn offered(collective: &str) -> Option<&'static [Algo]> {
    ALGORITHMS.iter().find(|(c, _)| *c == collective).map(|(_, a)| *a)
}

/// Accepted spellings of an algorithm (SimGrid's where it has one).
fn parse_algo(collective: &str, name: &str) -> Option<Algo> {
    let name = match (collective, name) {
        ("bcast", "binomial_tree") | ("reduce" | "gather" | "scatter", "ompi_binomial") => "binomial",
        ("barrier", "dissemination") => "ompi_bruck",
        ("alltoall" | "alltoallv" | "reduce_scatter", "mpich") | ("reduce_scatter", "mpich_pair") => "pairwise",
        ("allgatherv", "mpich_ring") => "ring",
        // SimGrid's "ring" allgather sends straight to rank + i; its neighbour-forwarding ring
        // (MPICH's, ours) is NTSLR.
        ("allgather" | "allgatherv", "NTSLR") => "ring",
        (_, "scatter_LR_allgather") => "scatter_lr_allgather",
        (_, n) => n,
    };
    offered(collective)?.iter().copied().find(|a| a.name() == name)
}

/// Which algorithm each collective uses: fixed choices, else the preset's, else the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collectives {
    fixed: BTreeMap<&'static str, Algo>,
    mpich: bool,
    /// Flops a reduction spends per byte it combines (the platform's
    /// `network.reduction_flops_per_byte`; 0: reductions cost no time).
    pub flops_per_byte: f64,
}

impl Collectives {
    /// From `preset` and/or `collective=algorithm` entries, e.g. `mpich`,
    /// `bcast=binomial_tree,allreduce=rdb`, or both; later entries override earlier ones.
    pub fn parse(spec: &str) -> Result<Collectives> {
        let mut c = Collectives::default();
        c.apply(entries(spec))?;
        Ok(c)
    }

    /// Apply (collective or `preset`, algorithm or preset name) entries.
    pub fn apply(&mut self, entries: impl IntoIterator<Item = (String, String)>) -> Result<()> {
        let err = |field: &str, reason: String| Error::new(ErrorKind::Options, field, reason);
        for (key, value) in entries {
            if key == "preset" {
                if !PRESETS.contains(&value.as_str()) {
                    return Err(err("coll", format!("unknown preset {value:?}; presets: {}", PRESETS.join(", "))));
                }
                self.mpich = true;
                continue;
            }
            let Some((collective, algos)) = ALGORITHMS.iter().find(|(c, _)| *c == key) else {
                let names: Vec<&str> = ALGORITHMS.iter().map(|(c, _)| *c).collect();
                return Err(err("coll", format!("unknown collective {key:?}; collectives: {}", names.join(", "))));
            };
            let Some(algo) = parse_algo(collective, &value) else {
                let names: Vec<&str> = algos.iter().map(|a| a.name()).collect();
                return Err(err("coll", format!("{collective} has no algorithm {value:?}; it has: {}", names.join(", "))));
            };
            self.fixed.insert(collective, algo);
        }
        Ok(())
    }

    /// The algorithm of `op` on a communicator of `p` ranks.
    pub(crate) fn pick(&self, op: &OpSpec, p: usize) -> Algo {
        let name = op.name();
        if let Some(&a) = self.fixed.get(name) {
            return a;
        }
        if self.mpich {
            if let Some(a) = mpich(op, p) {
                return a;
            }
        }
        offered(name).map_or(Algo::Binomial, |a| a[0])
    }

    /// Check the fixed choices against communicator size `p` (power-of-two algorithms).
    pub(crate) fn check(&self, op: &OpSpec, p: usize) -> Result<()> {
        let a = self.pick(op, p);
        if a.needs_pof2() && !p.is_power_of_two() && !(a == Algo::Rdb && matches!(op.name(), "allreduce" | "scan" | "exscan")) {
            return Err(Error::new(
                ErrorKind::Options,
                "coll",
                format!("{} algorithm {} needs a power-of-two number of ranks, the communicator has {p}", op.name(), a.name()),
            ));
        }
        Ok(())
    }
}

/// The (collective or `preset`, name) entries of a `--coll` text: `mpich`,
/// `bcast=binomial_tree,allreduce=rdb`, or both, comma-separated.
pub fn entries(spec: &str) -> Vec<(String, String)> {
    spec.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| match e.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => ("preset".to_string(), e.to_string()),
        })
        .collect()
}

/// MPICH's selector (the decision logic of MPICH 3's defaults, SMP-unaware), or `None`
/// to keep the default. Element counts are taken as bytes / 8 (doubles) where MPICH
/// compares a count with the rank count.
fn mpich(op: &OpSpec, p: usize) -> Option<Algo> {
    let pof2 = floor_pow2(p.max(1));
    match *op {
        // MPIR_CVAR_BCAST_SHORT_MSG_SIZE 12288, MPIR_CVAR_BCAST_LONG_MSG_SIZE 524288,
        // MPIR_CVAR_BCAST_MIN_PROCS 8.
        OpSpec::Bcast { bytes, .. } => Some(if bytes < 12288.0 || p < 8 {
            Algo::Binomial
        } else if bytes < 524288.0 && p.is_power_of_two() {
            Algo::ScatterRdbAllgather
        } else {
            Algo::ScatterLrAllgather
        }),
        // MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE 2048; Rabenseifner needs count >= pof2.
        OpSpec::Allreduce { bytes, .. } => Some(if bytes > 2048.0 && bytes / 8.0 >= pof2 as f64 { Algo::RabRdb } else { Algo::Rdb }),
        // MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE 256 with at least 8 ranks: Bruck. MPICH's
        // medium-size algorithm (batches of isend/irecv) is not modelled: pairwise instead.
        OpSpec::Alltoall { bytes, .. } => Some(if bytes < 256.0 && p >= 8 { Algo::Bruck } else { Algo::Pairwise }),
        // MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE 524288 (recursive doubling for a power of two
        // below it), MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE 81920 (Bruck otherwise below it).
        OpSpec::Allgather { bytes, .. } => {
            let total = bytes * p as f64;
            Some(if total < 524288.0 && p.is_power_of_two() {
                Algo::Rdb
            } else if total < 81920.0 {
                Algo::Bruck
            } else {
                Algo::Ring
            })
        }
        _ => None,
    }
}

/// Highest power of two not above `p` (p ≥ 1).
pub(crate) fn floor_pow2(p: usize) -> usize {
    1usize << (usize::BITS - 1 - p.leading_zeros())
}

/// Lowest set bit of `x` (0 for 0).
fn low_bit(x: usize) -> usize {
    x & x.wrapping_neg()
}

/// Rounds of ceil(log2 p) (the longest any rank spends in a binomial tree of p ranks).
fn log2_ceil(p: usize) -> usize {
    p.next_power_of_two().trailing_zeros() as usize
}

/// Round `k` of a binomial tree rooted at `root` that flows towards the root (reduce,
/// gather): rank `rel` (relative to the root) receives from `rel + 2^k` while bit k of
/// `rel` is clear, then sends to `rel − 2^k` at its lowest set bit and is done. The sent
/// message carries `block(subtree size)` bytes.
fn binomial_up(r: usize, p: usize, root: usize, k: usize, block: impl Fn(usize) -> f64) -> Option<Round> {
    let mask = 1usize.checked_shl(k as u32).filter(|&m| m < p)?;
    let rel = (r + p - root) % p;
    if rel & (mask - 1) != 0 {
        return None; // sent at a lower bit already
    }
    Some(if rel & mask != 0 {
        Round::Send { to: (rel - mask + root) % p, bytes: block(mask.min(p - rel)) }
    } else if rel + mask < p {
        Round::Recv((rel + mask + root) % p)
    } else {
        Round::Skip
    })
}

/// Round `k` of a binomial tree flowing away from `root` (bcast, scatter): receive from
/// the parent (if not the root), then send to the children, the largest subtree first;
/// the message to the child at relative rank `c` with a subtree of `n` ranks carries
/// `block(c, n)` bytes.
fn binomial_down(r: usize, p: usize, root: usize, k: usize, block: impl Fn(usize, usize) -> f64) -> Option<Round> {
    let rel = (r + p - root) % p;
    let has_parent = rel != 0;
    if has_parent && k == 0 {
        return Some(Round::Recv((rel - low_bit(rel) + root) % p));
    }
    let first = if has_parent { low_bit(rel) >> 1 } else { p.next_power_of_two() >> 1 };
    let mask = first.checked_shr((k - has_parent as usize) as u32).unwrap_or(0);
    if mask == 0 {
        return None;
    }
    let child = rel + mask;
    Some(if child < p { Round::Send { to: (child + root) % p, bytes: block(child, mask.min(p - child)) } } else { Round::Skip })
}

/// Pairwise exchange, round k: partner r XOR (k+1) for a power-of-two count (or always,
/// with `xor`), r ± (k+1) otherwise; `bytes(dst)` is what goes to the destination.
fn pairwise(r: usize, p: usize, k: usize, xor: Option<bool>, bytes: impl Fn(usize) -> f64) -> Option<Round> {
    let i = k + 1;
    if i >= p {
        return None;
    }
    let use_xor = xor.unwrap_or(p.is_power_of_two());
    let (dst, src) = if use_xor { (r ^ i, r ^ i) } else { ((r + i) % p, (r + p - i) % p) };
    Some(Round::SendRecv { dst, src, bytes: bytes(dst) })
}

/// Ring, round k of p − 1: send to r + 1 the block of rank r − k, receive from r − 1.
fn ring(r: usize, p: usize, k: usize, block_of: impl Fn(usize) -> f64) -> Option<Round> {
    (k + 1 < p).then(|| Round::SendRecv { dst: (r + 1) % p, src: (r + p - 1) % p, bytes: block_of((r + p - k) % p) })
}

/// Linear exchange with the root, round k: the root deals with every other rank in rank
/// order (sending when `to_root` is false), the others make their one transfer.
fn linear(r: usize, p: usize, root: usize, k: usize, to_root: bool, bytes: &[f64]) -> Option<Round> {
    if r != root {
        return (k == 0).then(|| if to_root { Round::Send { to: root, bytes: bytes[r] } } else { Round::Recv(root) });
    }
    let i = k + (k >= root) as usize;
    (i < p).then(|| if to_root { Round::Recv(i) } else { Round::Send { to: i, bytes: bytes[i] } })
}

/// Recursive doubling over partners r XOR 2^k that exist, `bytes(k)` per exchange.
fn recursive_doubling(r: usize, p: usize, k: usize, bytes: impl Fn(usize) -> f64) -> Option<Round> {
    let mask = 1usize.checked_shl(k as u32).filter(|&m| m < p)?;
    let dst = r ^ mask;
    Some(if dst < p { Round::SendRecv { dst, src: dst, bytes: bytes(k) } } else { Round::Skip })
}

/// Bruck's algorithm, round k while 2^k < p: send to r + 2^k (alltoall) or r − 2^k
/// (allgather), receive from the other side, `bytes(k)` each.
fn bruck(r: usize, p: usize, k: usize, forward: bool, bytes: impl Fn(usize) -> f64) -> Option<Round> {
    let d = 1usize.checked_shl(k as u32).filter(|&m| m < p)?;
    let (ahead, behind) = ((r + d) % p, (r + p - d) % p);
    let (dst, src) = if forward { (ahead, behind) } else { (behind, ahead) };
    Some(Round::SendRecv { dst, src, bytes: bytes(k) })
}

/// MPICH's fold around a power-of-two core (allreduce): round 0 the first 2·rem ranks
/// pair up (even sends to odd), rounds 1..=`inner` run `core(newrank, pof2, j)` on the
/// pof2 remaining ranks (`newrank` mapped back to ranks), the last round unfolds.
fn folded(r: usize, p: usize, k: usize, inner: usize, bytes: f64, core: impl Fn(usize, usize, usize) -> Option<Round>) -> Option<Round> {
    let pof2 = floor_pow2(p);
    let rem = p - pof2;
    let is_folded = r < 2 * rem;
    if k == 0 {
        return Some(match (is_folded, r % 2) {
            (false, _) => Round::Skip,
            (true, 0) => Round::Send { to: r + 1, bytes },
            (true, _) => Round::Recv(r - 1),
        });
    }
    if k <= inner {
        let newrank = if is_folded { (r % 2 == 1).then_some(r / 2) } else { Some(r - rem) };
        let Some(nr) = newrank else { return Some(Round::Skip) };
        let to_rank = |nd: usize| if nd < rem { nd * 2 + 1 } else { nd + rem };
        return Some(match core(nr, pof2, k - 1)? {
            Round::SendRecv { dst, bytes, .. } => Round::SendRecv { dst: to_rank(dst), src: to_rank(dst), bytes },
            other => other,
        });
    }
    if k == inner + 1 {
        return Some(match (is_folded, r % 2) {
            (false, _) => Round::Skip,
            (true, 1) => Round::Send { to: r - 1, bytes },
            (true, _) => Round::Recv(r + 1),
        });
    }
    None
}

/// Two algorithms one after the other: the first's rounds padded to `first_len`.
fn then(k: usize, first_len: usize, first: impl Fn(usize) -> Option<Round>, second: impl Fn(usize) -> Option<Round>) -> Option<Round> {
    if k < first_len {
        Some(first(k).unwrap_or(Round::Skip))
    } else {
        second(k - first_len)
    }
}

/// Round `k` of rank `r`'s part in `op` over `p` ranks with algorithm `algo`, or `None`
/// once the rank's part is over.
pub(crate) fn round(op: &OpSpec, algo: Algo, r: usize, p: usize, k: u32) -> Option<Round> {
    let k = k as usize;
    match (op, algo) {
        (OpSpec::Barrier { .. }, _) => {
            let mask = 1usize.checked_shl(k as u32).filter(|&m| m < p)?;
            Some(Round::SendRecv { dst: (r + mask) % p, src: (r + p - mask) % p, bytes: 0.0 })
        }
        (OpSpec::Bcast { root, bytes, .. }, Algo::ScatterRdbAllgather | Algo::ScatterLrAllgather) => {
            // MPICH: chunks of ceil(n/p) bytes, chunk j at relative rank j; the binomial
            // scatter gives each rank its chunk, the allgather the others.
            let (n, root) = (*bytes, *root);
            let ss = (n / p as f64).ceil();
            let chunk = |j: usize| (n - j as f64 * ss).clamp(0.0, ss);
            let chunks = |from: usize, count: usize| (n - from as f64 * ss).clamp(0.0, count as f64 * ss);
            let rel = (r + p - root) % p;
            let world = |x: usize| (x + root) % p;
            then(k, log2_ceil(p) + 1, |k| binomial_down(r, p, root, k, chunks), |j| {
                if algo == Algo::ScatterRdbAllgather {
                    let mask = 1usize.checked_shl(j as u32).filter(|&m| m < p)?;
                    let partner = rel ^ mask;
                    let mine = (rel >> j) << j;
                    Some(Round::SendRecv { dst: world(partner), src: world(partner), bytes: chunks(mine, mask) })
                } else {
                    (j + 1 < p).then(|| Round::SendRecv { dst: world((rel + 1) % p), src: world((rel + p - 1) % p), bytes: chunk((rel + p - j) % p) })
                }
            })
        }
        (OpSpec::Bcast { root, bytes, .. }, _) => binomial_down(r, p, *root, k, |_, _| *bytes),
        (OpSpec::Scatter { root, bytes, .. }, _) => binomial_down(r, p, *root, k, |_, n| n as f64 * bytes),
        (OpSpec::Reduce { root, bytes, .. }, _) => binomial_up(r, p, *root, k, |_| *bytes),
        (OpSpec::Gather { root, bytes, .. }, _) => binomial_up(r, p, *root, k, |n| n as f64 * bytes),
        (OpSpec::Allreduce { bytes, .. }, Algo::Lr) => {
            // Ring reduce-scatter then ring allgather, n/p per step.
            let share = bytes / p as f64;
            (k + 2 < 2 * p).then(|| Round::SendRecv { dst: (r + 1) % p, src: (r + p - 1) % p, bytes: share })
        }
        (OpSpec::Allreduce { bytes, .. }, Algo::Redbcast) => {
            let n = *bytes;
            then(k, log2_ceil(p), |k| binomial_up(r, p, 0, k, |_| n), |j| binomial_down(r, p, 0, j, |_, _| n))
        }
        (OpSpec::Allreduce { bytes, .. }, Algo::RabRdb) => {
            // Recursive halving (distance 1 first, n/2, n/4, …) then recursive doubling
            // back (n/pof2, 2n/pof2, …), on the power-of-two core.
            let n = *bytes;
            let steps = floor_pow2(p).trailing_zeros() as usize;
            folded(r, p, k, 2 * steps, n, |nr, pof2, j| {
                let (mask, b) = if j < steps {
                    (1 << j, n / (1u64 << (j + 1)) as f64)
                } else {
                    let i = j - steps;
                    (pof2 >> (i + 1), n * (1u64 << i) as f64 / pof2 as f64)
                };
                Some(Round::SendRecv { dst: nr ^ mask, src: nr ^ mask, bytes: b })
            })
        }
        (OpSpec::Allreduce { bytes, .. }, _) => {
            // Recursive doubling; the first 2·rem ranks fold pairwise before and unfold after.
            let steps = floor_pow2(p).trailing_zeros() as usize;
            folded(r, p, k, steps, *bytes, |nr, _, j| Some(Round::SendRecv { dst: nr ^ (1 << j), src: nr ^ (1 << j), bytes: *bytes }))
        }
        (OpSpec::Scan { bytes, .. } | OpSpec::Exscan { bytes, .. }, _) => recursive_doubling(r, p, k, |_| *bytes),
        (OpSpec::Alltoall { bytes, .. }, Algo::Bruck) => {
            // Round k carries the blocks whose index has bit k set.
            let count = |k: usize| (0..p).filter(|j| j >> k & 1 == 1).count() as f64;
            bruck(r, p, k, true, |k| count(k) * bytes)
        }
        (OpSpec::Alltoall { bytes, .. }, a) => pairwise(r, p, k, xor_of(a), |_| *bytes),
        (OpSpec::Alltoallv { bytes, .. }, a) => pairwise(r, p, k, xor_of(a), |dst| bytes[dst]),
        // MPICH's pairwise reduce-scatter pairs r + i with r − i for every count (no XOR
        // partners for a power of two, unlike its alltoall).
        (OpSpec::ReduceScatter { bytes, .. }, _) => pairwise(r, p, k, Some(false), |dst| bytes[dst]),
        (OpSpec::Allgather { bytes, .. }, Algo::Rdb) => recursive_doubling(r, p, k, |k| (1u64 << k) as f64 * bytes),
        (OpSpec::Allgather { bytes, .. }, Algo::Bruck) => {
            // Doubling counts while 2^k ≤ p/2, then the p − 2^k blocks left.
            bruck(r, p, k, false, |k| ((1usize << k).min(p - (1usize << k))) as f64 * bytes)
        }
        (OpSpec::Allgather { bytes, .. }, _) => ring(r, p, k, |_| *bytes),
        (OpSpec::Allgatherv { bytes, .. }, _) => ring(r, p, k, |owner| bytes[owner]),
        (OpSpec::Gatherv { root, bytes, .. }, _) => linear(r, p, *root, k, true, bytes),
        (OpSpec::Scatterv { root, bytes, .. }, _) => linear(r, p, *root, k, false, bytes),
        _ => None,
    }
}

/// Bytes rank `r` combines after round `k` (`rd`) of reduction `op`: what it received in a
/// reduce-scatter or reduce phase; 0 in copy phases (allgathers, bcasts, the unfold).
pub(crate) fn reduced_bytes(op: &OpSpec, algo: Algo, r: usize, p: usize, k: u32, rd: Round) -> f64 {
    let k = k as usize;
    let steps = floor_pow2(p.max(1)).trailing_zeros() as usize;
    let received = match rd {
        Round::Recv(_) => None,
        Round::SendRecv { bytes, .. } => Some(bytes),
        Round::Send { .. } | Round::Skip => return 0.0,
    };
    match (op, algo) {
        (OpSpec::Reduce { bytes, .. }, _) => *bytes,
        (OpSpec::Allreduce { bytes, .. }, Algo::Lr) => if k + 1 < p { bytes / p as f64 } else { 0.0 },
        (OpSpec::Allreduce { bytes, .. }, Algo::Redbcast) => if k < log2_ceil(p) { *bytes } else { 0.0 },
        // The fold (round 0) combines the whole buffer, then recursive halving its share;
        // the doubling back and the unfold only copy.
        (OpSpec::Allreduce { bytes, .. }, Algo::RabRdb) => match k {
            0 => *bytes,
            k if k <= steps => received.unwrap_or(0.0),
            _ => 0.0,
        },
        (OpSpec::Allreduce { bytes, .. }, _) => if k <= steps { *bytes } else { 0.0 },
        (OpSpec::Scan { .. } | OpSpec::Exscan { .. }, _) => received.unwrap_or(0.0),
        (OpSpec::ReduceScatter { bytes, .. }, _) => bytes[r],
        _ => 0.0,
    }
}

/// Partners of a pairwise algorithm: XOR always (`pair`), never (`ring`), or by p.
fn xor_of(a: Algo) -> Option<bool> {
    match a {
        Algo::Pair => Some(true),
        Algo::Ring => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Step, Trace, TraceSpec};

    /// (src, dst, bytes) sent and (src, dst) received by every rank of a uniform collective.
    fn messages(op: OpSpec, p: usize, coll: &Collectives) -> (Vec<(u32, u32, f64)>, Vec<(u32, u32)>) {
        let t = Trace::from_spec(TraceSpec { ranks: vec![vec![op]; p], placement: None }).unwrap();
        let (mut sent, mut got) = (Vec::new(), Vec::new());
        for r in 0..p {
            let mut c = t.start(r, coll);
            while !t.finished(r, &c) {
                match t.step(r, &c, coll) {
                    Step::Send { dst, bytes, .. } => sent.push((r as u32, dst, bytes)),
                    Step::Recv { src: Some(s), .. } => got.push((s, r as u32)),
                    _ => {}
                }
                t.advance(r, &mut c, coll);
            }
        }
        sent.sort_by(|a, b| a.partial_cmp(b).unwrap());
        got.sort_unstable();
        (sent, got)
    }

    fn total(op: OpSpec, p: usize, spec: &str) -> f64 {
        let coll = Collectives::parse(spec).unwrap();
        let (sent, got) = messages(op.clone(), p, &coll);
        let pairs: Vec<(u32, u32)> = sent.iter().map(|m| (m.0, m.1)).collect();
        assert_eq!(pairs, got, "{spec} on {p} ranks: every send has its receive");
        sent.iter().map(|m| m.2).sum()
    }

    #[test]
    fn algorithms_move_the_bytes_worked_out_by_hand() {
        let bcast = |n: f64| OpSpec::Bcast { root: 0, bytes: n, comm: 0 };
        // Scatter of 8 chunks of 100 (root sends 4, 2, 1; rank 4 sends 2, 1; ranks 2, 6 send 1:
        // 12 chunks), then recursive doubling: each rank receives the 7 others.
        assert_eq!(total(bcast(800.0), 8, "bcast=scatter_rdb_allgather"), 1200.0 + 8.0 * 700.0);
        // 5 ranks: scatter 100 + 200 + 100 (root) + 100 (rank 2); ring: 4 steps × 5 × 100.
        assert_eq!(total(bcast(500.0), 5, "bcast=scatter_LR_allgather"), 500.0 + 2000.0);
        assert_eq!(total(bcast(500.0), 5, "bcast=binomial_tree"), 4.0 * 500.0);
        let allreduce = |n: f64| OpSpec::Allreduce { bytes: n, comm: 0 };
        assert_eq!(total(allreduce(400.0), 4, "allreduce=lr"), 6.0 * 4.0 * 100.0);
        // Rabenseifner on 4: 200 + 100 halving, 100 + 200 doubling, per rank.
        assert_eq!(total(allreduce(400.0), 4, "allreduce=rab_rdb"), 4.0 * 600.0);
        // On 6: the fold (2 × 600) and unfold (2 × 600) around the 4-rank core (4 × 900).
        assert_eq!(total(allreduce(600.0), 6, "allreduce=rab_rdb"), 2400.0 + 4.0 * 900.0);
        assert_eq!(total(allreduce(100.0), 5, "allreduce=redbcast"), 8.0 * 100.0);
        // Bruck alltoall on 5: blocks with bit 0 set {1, 3}, bit 1 {2, 3}, bit 2 {4}: 5 blocks a rank.
        assert_eq!(total(OpSpec::Alltoall { bytes: 10.0, comm: 0 }, 5, "alltoall=bruck"), 5.0 * 50.0);
        assert_eq!(total(OpSpec::Alltoall { bytes: 10.0, comm: 0 }, 5, "alltoall=ring"), 5.0 * 4.0 * 10.0);
        // Allgather: every rank receives p − 1 blocks, whatever the algorithm.
        for (p, spec) in [(6, "allgather=bruck"), (8, "allgather=rdb"), (7, "allgather=ring")] {
            assert_eq!(total(OpSpec::Allgather { bytes: 10.0, comm: 0 }, p, spec), (p * (p - 1)) as f64 * 10.0, "{spec}");
        }
    }

    #[test]
    fn the_mpich_preset_picks_by_size_and_ranks() {
        let c = Collectives::parse("mpich").unwrap();
        let b = |n: f64| OpSpec::Bcast { root: 0, bytes: n, comm: 0 };
        assert_eq!(c.pick(&b(1000.0), 16), Algo::Binomial);
        assert_eq!(c.pick(&b(1e5), 4), Algo::Binomial);
        assert_eq!(c.pick(&b(1e5), 16), Algo::ScatterRdbAllgather);
        assert_eq!(c.pick(&b(1e5), 12), Algo::ScatterLrAllgather);
        assert_eq!(c.pick(&b(1e6), 16), Algo::ScatterLrAllgather);
        let a = |n: f64| OpSpec::Allreduce { bytes: n, comm: 0 };
        assert_eq!(c.pick(&a(1024.0), 16), Algo::Rdb);
        assert_eq!(c.pick(&a(1e6), 16), Algo::RabRdb);
        assert_eq!(c.pick(&OpSpec::Alltoall { bytes: 100.0, comm: 0 }, 8), Algo::Bruck);
        assert_eq!(c.pick(&OpSpec::Alltoall { bytes: 100.0, comm: 0 }, 4), Algo::Pairwise);
        // A fixed choice wins over the preset.
        let c = Collectives::parse("mpich,bcast=binomial_tree").unwrap();
        assert_eq!(c.pick(&b(1e6), 16), Algo::Binomial);
        // Defaults are today's expansions.
        let d = Collectives::default();
        assert_eq!((d.pick(&b(1e6), 16), d.pick(&a(1e6), 16)), (Algo::Binomial, Algo::Rdb));
    }

    #[test]
    fn bad_selections_are_errors() {
        assert!(Collectives::parse("bcast=frobnicate").unwrap_err().reason.contains("no algorithm"));
        assert!(Collectives::parse("frob=rdb").unwrap_err().reason.contains("unknown collective"));
        assert!(Collectives::parse("ompi").unwrap_err().reason.contains("unknown preset"));
        let c = Collectives::parse("allgather=rdb").unwrap();
        assert!(c.check(&OpSpec::Allgather { bytes: 1.0, comm: 0 }, 6).unwrap_err().reason.contains("power-of-two"));
        assert!(c.check(&OpSpec::Allgather { bytes: 1.0, comm: 0 }, 8).is_ok());
    }
}
