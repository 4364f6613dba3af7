//! Collective algorithms, and which one each collective uses.
//!
//! Every algorithm is a sequence of rounds; in a round a rank sends at most one message
//! and receives at most one (both posted, then both awaited, as MPI_Sendrecv), or, in a
//! fan, posts receives from and/or sends to all the others and awaits them all (the linear
//! algorithms' MPI_Waitall). Ranks and roots here are ranks of the collective's
//! communicator. The defaults are MPICH's algorithms for these operations (the notes'
//! "Collective sizes"); the others carry SimGrid's names where the algorithm is the same,
//! and the `mpich` and `ompi` presets pick among them by message size and communicator
//! size as MPICH's and Open MPI's selectors do; the `smpi` preset takes, for every
//! collective, what SMPI 3.32 runs with no selector option (its `default` selector,
//! `src/smpi/colls/smpi_default_selector.cpp`) (docs/formats.md).

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
pub(crate) mod ompi_colls;
pub(crate) mod reduce_scatter;
pub(crate) mod smp;
use crate::mpi::ops::OpSpec;

/// One round of a collective: at most one send (of `bytes`) and one receive, or a fan.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Round {
    Send { to: usize, bytes: f64 },
    Recv(usize),
    SendRecv { dst: usize, src: usize, bytes: f64 },
    Fan(Fan),
    /// Post a send of `bytes` to `to` into scratch request slot `slot`: blocking (MPI_Send,
    /// posted and waited for in this round) or not (MPI_Isend, waited for by a later `Await`).
    SendSlot { to: usize, bytes: f64, slot: u32, blocking: bool },
    /// Post a receive from `from` into scratch slot `slot` (waited for by a later `Await`).
    RecvSlot { from: usize, slot: u32 },
    /// Wait for the requests in scratch slots `first .. first + n`, then combine `combine`
    /// bytes (a reduction's share of what arrived; 0 for none).
    Await { first: u32, n: u32, combine: f64 },
    /// A round this rank sits out (its algorithm has nothing for it here).
    Skip,
}

impl Round {
    /// Steps of the round: its posts, then one wait.
    pub(crate) fn len(self) -> u32 {
        match self {
            Round::Send { .. } | Round::Recv(_) => 2,
            Round::SendRecv { .. } => 3,
            Round::Fan(fan) => fan.posts() + 1,
            Round::SendSlot { blocking, .. } => 1 + blocking as u32,
            Round::RecvSlot { .. } | Round::Await { .. } => 1,
            Round::Skip => 0,
        }
    }
}

/// The order in which a fan goes through the p − 1 other ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// 0, 1, …, p − 1 without the rank itself.
    Ascending,
    /// r + 1, r + 2, … (mod p).
    Upward,
    /// r − 1, r − 2, … (mod p).
    Downward,
    /// 0, 1, …, r − 1: the ranks below this one.
    Below,
    /// r + 1, …, p − 1: the ranks above this one.
    Above,
}

/// Receives from every other rank (if `recv_from`), then sends to every other rank (if
/// `send_to`), each in its order (`Below` and `Above` take only the ranks on that side), all posted together and then all awaited (MPI_Waitall);
/// rank `r` of `p`. What a send carries is the op's block for its destination. A fan may
/// take only the ranks `window` (positions in its orders) of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fan {
    r: usize,
    p: usize,
    recv_from: Option<Order>,
    send_to: Option<Order>,
    /// The first position taken in each order, and how many at most.
    window: (usize, usize),
    /// Posts alternate a send to and a receive from each rank of `send_to` in turn (SMPI's
    /// `iallgather`, `smpi_nbc_impl.cpp:78-84`) instead of every receive, then every send.
    interleave: bool,
}

impl Fan {
    /// Requests the fan posts.
    pub(crate) fn posts(self) -> u32 {
        self.recvs() + self.send_to.map_or(0, |o| self.count(o)) as u32
    }

    /// Receives the fan posts.
    pub(crate) fn recvs(self) -> u32 {
        self.recv_from.map_or(0, |o| self.count(o)) as u32
    }

    /// How many ranks `order` goes through.
    fn count(self, order: Order) -> usize {
        let all = match order {
            Order::Below => self.r,
            Order::Above => self.p - 1 - self.r,
            _ => self.p - 1,
        };
        all.saturating_sub(self.window.0).min(self.window.1)
    }

    /// The `i`-th other rank in `order`.
    fn peer(self, order: Order, i: usize) -> usize {
        let (r, p, i) = (self.r, self.p, i + self.window.0);
        match order {
            Order::Ascending => i + (i >= r) as usize,
            Order::Upward => (r + 1 + i) % p,
            Order::Downward => (r + p - 1 - i) % p,
            Order::Below => i,
            Order::Above => r + 1 + i,
        }
    }

    /// The fan's `i`-th post of collective `op`: a `Round::Recv` or a `Round::Send`.
    pub(crate) fn post(self, op: &OpSpec, i: u32) -> Round {
        let i = i as usize;
        if let (true, Some(order)) = (self.interleave, self.send_to) {
            let peer = self.peer(order, i / 2);
            return if i.is_multiple_of(2) { self.send(op, peer) } else { Round::Recv(peer) };
        }
        match (self.recv_from, self.send_to) {
            (Some(order), _) if i < self.count(order) => Round::Recv(self.peer(order, i)),
            (Some(from), Some(order)) => self.send(op, self.peer(order, i - self.count(from))),
            (None, Some(order)) => self.send(op, self.peer(order, i)),
            _ => unreachable!("post {i} of a fan of {} posts", self.posts()),
        }
    }

    /// The fan's send to `to` in collective `op` (the trace's op: an algorithm that another
    /// one calls with other sizes posts no fan of sends).
    fn send(self, op: &OpSpec, to: usize) -> Round {
        let bytes = match op {
            OpSpec::Alltoall { bytes, .. } | OpSpec::Scatter { bytes, .. } | OpSpec::Scan { bytes, .. } | OpSpec::Exscan { bytes, .. } | OpSpec::Allgather { bytes, .. } => *bytes,
            // The destination's block.
            OpSpec::Alltoallv { bytes, .. } | OpSpec::ReduceScatter { bytes, .. } | OpSpec::Scatterv { bytes, .. } => bytes[to],
            // The rank's own block.
            OpSpec::Allgatherv { bytes, .. } => bytes[self.r],
            _ => 0.0, // barrier: empty messages
        };
        Round::Send { to, bytes }
    }
}

/// An algorithm of one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Algo {
    /// Barrier: dissemination, round k with rank ± 2^k (SimGrid's `ompi_bruck`).
    Dissemination,
    /// Binomial tree (bcast: the largest subtree first; reduce, gather, scatter).
    Binomial,
    /// Bcast: binomial scatter of the buffer, then recursive-doubling allgather (MPICH's, with
    /// its fix for a count that is not a power of two, as SimGrid runs it).
    ScatterRdbAllgather,
    /// Bcast: binomial scatter of the buffer, then ring allgather.
    ScatterLrAllgather,
    /// Recursive doubling (allreduce with MPICH's fold for a non-power-of-two count; allgather,
    /// power of two only; scan and exscan).
    Rdb,
    /// Allreduce: ring reduce-scatter then ring allgather (SimGrid's `lr`).
    Lr,
    /// Allreduce: Open MPI's segmented ring (`ompi_ring_segmented`, [`ompi_colls::RingSegmented`])
    /// from p segments of 1 MiB, `lr` below.
    RingSegmented,
    /// Allreduce: Rabenseifner, recursive-halving reduce-scatter then recursive-doubling allgather.
    RabRdb,
    /// Allreduce: SimGrid's `redbcast` (`allreduce-redbcast.cpp`): the reduce in use to rank 0,
    /// then the bcast in use from rank 0 (the fixed or preset choices; with neither, SMPI's
    /// defaults: [`Algo::NbcLinear`] and the binomial tree).
    Redbcast,
    /// SMPI's flat non-blocking algorithms (`src/smpi/colls/smpi_nbc_impl.cpp`), which its
    /// `default` selector runs as `colls::iX` then one wait (`smpi_default_selector.cpp:24-30,
    /// 66-85, 95-105`; gatherv and scatterv always, `smpi_coll.cpp:330-344`): every request
    /// posted at once (`Request::startall`, `smpi_request.cpp:641-650`), then one waitall.
    /// Reduce (`ireduce`, `smpi_nbc_impl.cpp:380-431`), gather (`igather`, `:280-310`) and
    /// gatherv (`igatherv`, `:312-344`): the root posts a receive from every other rank in
    /// rank order and waits for them all; the others isend their block to the root and wait.
    /// Scatterv (`iscatterv`, `:345-378`): the root posts a send of each other rank's block in
    /// rank order and waits; the others receive. Allgather(v) (`iallgather`, `:59-87`;
    /// `iallgatherv`, `:123-150`): every rank posts a send of its block to every other rank
    /// and a receive of that rank's block, and waits for all: SMPI posts them send, receive,
    /// per peer in rank order, and so do we where sends have an overhead
    /// ([`Collectives::interleave_nbc`]); otherwise every receive, then every send, which gives
    /// the same times and lets the replay post the receives at once.
    NbcLinear,
    /// Allgather(v): SimGrid's `ring` (`allgather-ring.cpp`, `allgatherv-ring.cpp`; Open MPI's
    /// ring in its selector): round i sends the rank's block to rank + i and receives from rank − i.
    DirectRing,
    /// Alltoall(v), reduce-scatter: pairwise exchange, XOR partners for a power of two, rank ± i otherwise (MPICH's).
    Pairwise,
    /// Alltoall: XOR partners, power of two only (SimGrid's `pair`).
    Pair,
    /// Alltoall: round i sends to rank + i, receives from rank − i; alltoallv: SimGrid's
    /// `ring`, XOR partners for a power of two and rank ± i otherwise (the same exchange as
    /// `pairwise`); allgather(v): the ring; reduce-scatter: Open MPI's ring (`ompi_ring`),
    /// each rank passing on the partial sums of blocks r − 1, r − 2, … to rank + 1.
    Ring,
    /// Bruck: log p rounds of store-and-forward (alltoall, allgather); alltoallv: SimGrid's
    /// `bruck`, which is MPICH's scattered algorithm (batches of 4 receives and 4 sends).
    Bruck,
    /// Gatherv, scatterv: the root deals with each rank in turn, one blocking receive or send
    /// after another (the default before SMPI's [`Algo::NbcLinear`], which MPICH's linear
    /// gatherv and scatterv also are: the root posts every request at once).
    Linear,
    /// Open MPI's basic linear algorithms (SimGrid's `basic_linear`, `ompi_basic_linear`):
    /// gather, scatter and reduce deal with the root rank by rank (gather and scatter in rank
    /// order, reduce from rank p − 1 down); alltoall(v) posts every receive and every send
    /// then waits for them all; barrier's rank 0 receives from all, then sends to all.
    BasicLinear,
    /// Scatter: Open MPI's binomial tree, the smallest subtree first; reduce: Open MPI's
    /// generic segmented reduce on its in-order binomial tree (the same tree as `binomial`), in
    /// 1 KiB segments on many ranks, else whole (`ompi_binomial`, [`ompi_colls`]).
    OmpiBinomial,
    /// Bcast: SimGrid's pipelined chain 0 → 1 → … → p − 1 in 8192-byte segments, the remainder
    /// by the bcast in use for its size (`NTSL`, what Open MPI's `basic_linear` runs in SimGrid).
    Ntsl,
    /// Bcast: Open MPI's generic segmented bcast on a chain (16, 64 or 128 KiB segments; Open
    /// MPI's `chain` and `pipeline` both run it in SimGrid); reduce: its generic segmented
    /// reduce on a chain (1, 32 or 64 KiB segments) (`ompi_pipeline`).
    OmpiPipeline,
    /// Bcast: Open MPI's split binary tree: each half of the buffer down one subtree of a
    /// binary tree in 1 KiB (8 KiB from 370728 bytes) segments, then halves traded between
    /// the subtrees (`ompi_split_bintree`; needs a segment in each half).
    OmpiSplitBintree,
    /// Reduce: Open MPI's generic segmented reduce on p / 2 chains, 64 KiB segments (`ompi_chain`).
    OmpiChain,
    /// Reduce: Open MPI's generic segmented reduce on a binary tree, 32 KiB segments (`ompi_binary`).
    OmpiBinary,
    /// Reduce: Open MPI's generic reduce, unsegmented, on its in-order binary tree rooted at rank
    /// p − 1, which then sends the result to the root (`ompi_in_order_binary`).
    OmpiInOrderBinary,
    /// Scatter: the root posts every send, then waits for them all (`ompi_linear_nb`).
    LinearNb,
    /// Barrier: recursive doubling on the largest power of two, the ranks above it folded
    /// onto it before and released after (`ompi_recursivedoubling`).
    RecursiveDoubling,
    /// Barrier: a binomial tree up to rank 0 and back down (`ompi_tree`).
    Tree,
    /// Reduce-scatter: Open MPI's recursive halving on the largest power of two, the first
    /// 2·(p − pof2) ranks folded pairwise before and served after
    /// (`ompi_basic_recursivehalving`).
    RecursiveHalving,
    /// Allgather(v): Open MPI's neighbour exchange (`ompi_neighborexchange`; on an odd count
    /// SimGrid runs its direct ring, [`Algo::DirectRing`], instead):
    /// even ranks trade with rank + 1 and rank − 1 in turn, odd ones with rank − 1 and
    /// rank + 1, one block first, then the two blocks received last.
    NeighborExchange,
    /// SMPI's `<collective>__default` (`smpi_default_selector.cpp`) where it is more than one
    /// of our algorithms. Alltoall (`:119-122`): `alltoall__ompi`, Open MPI's decision
    /// ([`smpi_default_alltoall`]). Allreduce (`:107-117`): SMPI's default reduce
    /// ([`Algo::NbcLinear`]) to rank 0, then its default bcast (the binomial tree) from rank 0,
    /// whatever reduce and bcast are chosen (it calls `reduce__default` and `bcast__default`
    /// directly, not `colls::reduce`). Reduce-scatter: `reduce_scatter__default` (`:32-63`, what
    /// SimGrid runs with no selector and Open MPI's "non-overlapping" in its `ompi` selector):
    /// with blocks all of one size, SMPI's default reduce ([`Algo::NbcLinear`]) of the whole
    /// buffer to rank 0, then `colls::scatterv` from rank 0 (rank 0 posts a send of each other
    /// rank's block, in rank order, then waits for them all); with blocks of different sizes,
    /// MPICH's reduce-scatter as SimGrid's `reduce_scatter__mpich` picks it (commutative):
    /// `pairwise` above 524288 bytes in all, else `mpich_rdb`.
    SmpiDefault,
    /// Allgatherv: SimGrid's `GB` (`allgatherv-GB.cpp`, Open MPI's "default" in its `ompi`
    /// selector): `colls::gatherv` to rank 0 (rank 0 posts a receive from every other rank, in
    /// rank order, and waits for them all; the others send their block), then the bcast in use
    /// of the whole gathered buffer from rank 0 (SMPI's default: the binomial tree).
    Gb,
    /// Gather: Open MPI's linear_sync (`ompi_linear_sync`, SimGrid's `gather-ompi.cpp`): the root,
    /// rank by rank in rank order, posts the receive of the first segment (1 KiB, 32 KiB for
    /// blocks above 92160 bytes), sends an empty message, posts the receive of the rest and
    /// waits for the first segment; then it waits for all the rests. The others receive the
    /// empty message, then send the first segment and the rest (maybe empty), blocking.
    LinearSync,
    /// Reduce-scatter: MPICH's recursive doubling (`mpich_rdb`, [`reduce_scatter::mpich_rdb`]).
    MpichRdb,
    /// Reduce-scatter: Open MPI's butterfly (`ompi_butterfly`, [`reduce_scatter::butterfly`]).
    Butterfly,
    /// Bcast: SimGrid's binary tree (`NTSB`): a root other than 0 first sends the buffer to
    /// rank 0; rank r receives from (r − 1) / 2, then sends to 2r + 1 and 2r + 2: the whole
    /// buffer up to 8192 bytes, else pipelined in 8192-byte segments, the remainder by the
    /// bcast in use for its size ([`ompi_colls::ntsb`]).
    BinaryTree,
    /// Bcast: SimGrid's `mvapich2_knomial_intra_node` (Open MPI's "knomial" in its `ompi`
    /// selector): a 4-nomial tree over the whole communicator, each rank posting its sends of a
    /// level together (MPI_Isend) and waiting for them; the first time such an algorithm runs
    /// on a communicator, SimGrid's `Comm::init_smp` communicates before it ([`smp`]).
    MvapichKnomial,
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
            Algo::RingSegmented => "ompi_ring_segmented",
            Algo::RabRdb => "rab_rdb",
            Algo::Redbcast => "redbcast",
            Algo::NbcLinear => "nbc_linear",
            Algo::DirectRing => "direct_ring",
            Algo::Pairwise => "pairwise",
            Algo::Pair => "pair",
            Algo::Ring => "ring",
            Algo::Bruck => "bruck",
            Algo::Linear => "linear",
            Algo::BasicLinear => "basic_linear",
            Algo::OmpiBinomial => "ompi_binomial",
            Algo::Ntsl => "NTSL",
            Algo::OmpiPipeline => "ompi_pipeline",
            Algo::OmpiChain => "ompi_chain",
            Algo::OmpiSplitBintree => "ompi_split_bintree",
            Algo::OmpiBinary => "ompi_binary",
            Algo::OmpiInOrderBinary => "ompi_in_order_binary",
            Algo::LinearNb => "ompi_linear_nb",
            Algo::RecursiveDoubling => "ompi_recursivedoubling",
            Algo::Tree => "ompi_tree",
            Algo::RecursiveHalving => "ompi_basic_recursivehalving",
            Algo::NeighborExchange => "ompi_neighborexchange",
            Algo::BinaryTree => "NTSB",
            Algo::MvapichKnomial => "mvapich2_knomial_intra_node",
            Algo::SmpiDefault => "smpi_default",
            Algo::Gb => "GB",
            Algo::LinearSync => "ompi_linear_sync",
            Algo::MpichRdb => "mpich_rdb",
            Algo::Butterfly => "ompi_butterfly",
        }
    }

    /// Whether the algorithm needs a power-of-two communicator.
    fn needs_pof2(self) -> bool {
        matches!(self, Algo::Pair | Algo::Rdb)
    }
}

/// The algorithms each collective offers, its default first.
pub const ALGORITHMS: &[(&str, &[Algo])] = &[
    ("barrier", &[Algo::Dissemination, Algo::BasicLinear, Algo::RecursiveDoubling, Algo::Tree]),
    ("bcast", &[Algo::Binomial, Algo::ScatterRdbAllgather, Algo::ScatterLrAllgather, Algo::BinaryTree, Algo::Ntsl, Algo::OmpiPipeline, Algo::OmpiSplitBintree, Algo::MvapichKnomial]),
    ("reduce", &[Algo::Binomial, Algo::BasicLinear, Algo::OmpiBinomial, Algo::OmpiPipeline, Algo::OmpiChain, Algo::OmpiBinary, Algo::OmpiInOrderBinary, Algo::NbcLinear]),
    ("allreduce", &[Algo::Rdb, Algo::Lr, Algo::RabRdb, Algo::Redbcast, Algo::RingSegmented, Algo::SmpiDefault]),
    ("alltoall", &[Algo::Pairwise, Algo::Pair, Algo::Ring, Algo::Bruck, Algo::BasicLinear, Algo::SmpiDefault]),
    ("alltoallv", &[Algo::Pairwise, Algo::Pair, Algo::Ring, Algo::BasicLinear, Algo::Bruck]),
    ("gather", &[Algo::Binomial, Algo::BasicLinear, Algo::LinearSync, Algo::NbcLinear]),
    ("gatherv", &[Algo::NbcLinear, Algo::Linear]),
    ("scatter", &[Algo::Binomial, Algo::OmpiBinomial, Algo::BasicLinear, Algo::LinearNb]),
    ("scatterv", &[Algo::NbcLinear, Algo::Linear]),
    ("allgather", &[Algo::Ring, Algo::Rdb, Algo::Bruck, Algo::Pair, Algo::NeighborExchange, Algo::DirectRing, Algo::NbcLinear]),
    ("allgatherv", &[Algo::Ring, Algo::NeighborExchange, Algo::Gb, Algo::Bruck, Algo::Pair, Algo::DirectRing, Algo::NbcLinear]),
    ("reduce_scatter", &[Algo::Pairwise, Algo::RecursiveHalving, Algo::Ring, Algo::SmpiDefault, Algo::MpichRdb, Algo::Butterfly]),
    ("scan", &[Algo::Rdb, Algo::Linear]),
    ("exscan", &[Algo::Rdb, Algo::Linear]),
];

/// Presets that pick an algorithm by message size and communicator size (`smpi`: SMPI 3.32's
/// `default` selector, what smpirun runs with no collective option).
pub const PRESETS: &[&str] = &["mpich", "ompi", "smpi"];

/// SimGrid's spellings of our algorithms: (the collectives it names ours for, none: all;
/// the spelling; our algorithm's name). `parse_algo` and the JSON Schema both read it.
const SPELLINGS: &[(&[&str], &str, &str)] = &[
    // Open MPI's binomial gather is ours; its reduce and scatter differ (Algo::OmpiBinomial).
    (&["bcast"], "binomial_tree", "binomial"),
    (&["gather"], "ompi_binomial", "binomial"),
    (&[], "ompi_basic_linear", "basic_linear"),
    (&["barrier"], "dissemination", "ompi_bruck"),
    (&["alltoall", "reduce_scatter"], "mpich", "pairwise"),
    // SimGrid's `alltoallv__mpich` runs its bruck.
    (&["alltoallv"], "mpich", "bruck"),
    (&["reduce_scatter"], "mpich_pair", "pairwise"),
    // SimGrid's "ring" allgather sends straight to rank + i; its neighbour-forwarding ring
    // (MPICH's, ours) is NTSLR.
    (&["allgather", "allgatherv"], "NTSLR", "ring"),
    (&["allgatherv"], "mpich_ring", "ring"),
    // SimGrid's allgatherv Bruck is Open MPI's; its allgather `bruck` the same exchange.
    (&["allgatherv"], "ompi_bruck", "bruck"),
    (&["reduce_scatter"], "ompi_ring", "ring"),
    (&[], "scatter_LR_allgather", "scatter_lr_allgather"),
    // SMPI's `default` (smpi/<collective>:default), what SimGrid runs with no selector
    // (`smpi_coll.cpp:305-326`: the selector `default` unless smpi/coll-selector or
    // smpi/<collective> says otherwise; each `<collective>__default` in
    // `smpi_default_selector.cpp`; gatherv, scatterv, scan, exscan are not selectable and always
    // run `colls::gatherv` etc., `smpi_coll.cpp:330-472`).
    (&["reduce", "gather", "gatherv", "scatterv", "allgather", "allgatherv"], "default", "nbc_linear"),
    (&["reduce_scatter", "alltoall", "allreduce"], "default", "smpi_default"),
    // barrier__default (`:18-21`) and alltoallv__default (`:124-131`, `colls::ialltoallv`,
    // instruction for instruction `alltoallv__ompi_basic_linear`).
    (&["barrier", "alltoallv"], "default", "basic_linear"),
    // scatter__default (`:87-93`): `colls::iscatter`, the pattern of `scatter__ompi_linear_nb`.
    (&["scatter"], "default", "ompi_linear_nb"),
    (&["bcast"], "default", "binomial"), // bcast__default (`:13-16`): bcast__binomial_tree
    (&["scan", "exscan"], "default", "linear"), // colls::scan, colls::exscan (`smpi_coll.cpp:346-472`)
];

/// The JSON Schema of `network.collectives`: `preset` and each collective with the names it
/// accepts (its algorithms' names and SimGrid's spellings of them).
pub fn json_schema() -> serde_json::Value {
    let mut props = serde_json::Map::new();
    props.insert("preset".into(), serde_json::json!({"enum": PRESETS, "description": "a preset: picks by size and rank count"}));
    for (collective, algos) in ALGORITHMS {
        let mut names: Vec<&str> = algos.iter().map(|a| a.name()).collect();
        names.extend(SPELLINGS.iter().map(|&(_, spelling, _)| spelling).filter(|s| parse_algo(collective, s).is_some()));
        names.sort_unstable();
        names.dedup();
        props.insert((*collective).into(), serde_json::json!({"enum": names}));
    }
    serde_json::json!({"type": "object", "properties": props, "additionalProperties": false, "default": {},
                       "description": "Collective algorithms: a preset and/or one algorithm per collective (docs/formats.md); `--coll` entries override these."})
}

fn offered(collective: &str) -> Option<&'static [Algo]> {
    ALGORITHMS.iter().find(|(c, _)| *c == collective).map(|(_, a)| *a)
}

/// Accepted spellings of an algorithm (SimGrid's where it has one).
fn parse_algo(collective: &str, name: &str) -> Option<Algo> {
    let ours = SPELLINGS
        .iter()
        .find(|(collectives, spelling, _)| *spelling == name && (collectives.is_empty() || collectives.contains(&collective)))
        .map_or(name, |&(_, _, ours)| ours);
    offered(collective)?.iter().copied().find(|a| a.name() == ours)
}

/// A library's selector: picks by message size and communicator size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Preset {
    Mpich,
    Ompi,
    Smpi,
}

/// Which algorithm each collective uses: fixed choices, else the preset's, else the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collectives {
    fixed: BTreeMap<&'static str, Algo>,
    preset: Option<Preset>,
    /// Flops a reduction spends per byte it combines (the platform's
    /// `network.reduction_flops_per_byte`; 0: reductions cost no time).
    pub flops_per_byte: f64,
    /// The host of every world rank, which SimGrid's `Comm::init_smp` groups a communicator's
    /// ranks by ([`Collectives::set_hosts`]); none: rank i on host i.
    smp_hosts: Option<std::sync::Arc<SmpHosts>>,
    /// Post SMPI's `iallgather(v)` ([`Algo::NbcLinear`]) as SMPI does, a send then a receive for
    /// each peer, rather than every receive then every send, which the replay posts at once; the
    /// replay sets it when sends have an overhead (`smpi/ois`, the host's), the only case where
    /// the order shows (a receive is then posted after, not before, the overheads of the sends
    /// before it).
    pub interleave_nbc: bool,
}

/// The placement `Comm::init_smp` reads, and each communicator's layout once worked out.
#[derive(Debug, Default)]
struct SmpHosts {
    hosts: Vec<u32>,
    layouts: std::sync::Mutex<std::collections::HashMap<u32, std::sync::Arc<smp::Layout>>>,
}

impl PartialEq for SmpHosts {
    fn eq(&self, other: &SmpHosts) -> bool {
        self.hosts == other.hosts
    }
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
                self.preset = Some(match value.as_str() {
                    "mpich" => Preset::Mpich,
                    "ompi" => Preset::Ompi,
                    "smpi" => Preset::Smpi,
                    _ => return Err(err("coll", format!("unknown preset {value:?}; presets: {}", PRESETS.join(", ")))),
                });
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

    /// Run world rank i on host `hosts[i]` (the replay's placement): SimGrid's `Comm::init_smp`
    /// groups each communicator's ranks by host.
    pub fn set_hosts(&mut self, hosts: impl IntoIterator<Item = usize>) {
        let hosts = hosts.into_iter().map(|h| h as u32).collect();
        self.smp_hosts = Some(std::sync::Arc::new(SmpHosts { hosts, layouts: Default::default() }));
    }

    /// Ranks joining after the `known` world ranks so far (jobs starting in a replay): world
    /// rank `known + i` runs on host `hosts[i]`. The layouts of the communicators so far stay
    /// (their members do not change). False, changing nothing, when the hosts known are not
    /// those `known` ranks' ([`Collectives::set_hosts`] then).
    pub fn add_hosts(&mut self, known: usize, hosts: &[usize]) -> bool {
        let Some(arc) = &mut self.smp_hosts else { return false };
        if arc.hosts.len() != known {
            return false;
        }
        let more = hosts.iter().map(|&h| h as u32);
        match std::sync::Arc::get_mut(arc) {
            Some(h) => h.hosts.extend(more),
            None => {
                let layouts = arc.layouts.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let hosts = arc.hosts.iter().copied().chain(more).collect();
                *arc = std::sync::Arc::new(SmpHosts { hosts, layouts: std::sync::Mutex::new(layouts) });
            }
        }
        true
    }

    /// The layout over hosts of communicator `g` of `members` (world ranks in its rank order).
    pub(crate) fn smp_layout(&self, g: u32, members: &[u32]) -> std::sync::Arc<smp::Layout> {
        let Some(h) = &self.smp_hosts else { return std::sync::Arc::new(smp::Layout::new(members, |w| w)) };
        let mut layouts = h.layouts.lock().unwrap_or_else(|e| e.into_inner());
        layouts.entry(g).or_insert_with(|| std::sync::Arc::new(smp::Layout::new(members, |w| h.hosts[w as usize]))).clone()
    }

    /// Whether algorithm `a` of `op` on `p` ranks (or an algorithm it calls) runs SimGrid's
    /// `Comm::init_smp` when the communicator has not run it yet (as [`Collectives::check_algo`]
    /// walks the algorithms called).
    pub(crate) fn uses_init_smp(&self, op: &OpSpec, a: Algo, p: usize) -> bool {
        match (op, a) {
            (OpSpec::Bcast { .. }, Algo::MvapichKnomial) => true,
            (OpSpec::Bcast { root, bytes, comm }, Algo::Ntsl | Algo::BinaryTree) => {
                let rest = if a == Algo::Ntsl { ompi_colls::ntsl_len(*root, p, *root, *bytes).1 } else { ompi_colls::ntsb_len(*root, p, *root, *bytes).1 };
                let pipelined = a == Algo::Ntsl || *bytes > ompi_colls::NTSB_SEGMENT;
                let rest_op = OpSpec::Bcast { root: *root, bytes: rest, comm: *comm };
                pipelined && rest > 0.0 && self.uses_init_smp(&rest_op, self.pick(&rest_op, p), p)
            }
            (OpSpec::Allreduce { .. }, Algo::Redbcast | Algo::SmpiDefault) => {
                let (reduce, reduce_algo, bcast, bcast_algo) = redbcast_parts(op, a, p, self);
                self.uses_init_smp(&reduce, reduce_algo, p) || self.uses_init_smp(&bcast, bcast_algo, p)
            }
            (OpSpec::Allgatherv { .. }, Algo::Gb) => {
                let (bcast, bcast_algo) = gb_bcast(op, p, self);
                self.uses_init_smp(&bcast, bcast_algo, p)
            }
            (OpSpec::Allreduce { bytes, .. }, Algo::RingSegmented) if ompi_colls::RingSegmented::new(*bytes, p).is_none() => self.uses_init_smp(op, Algo::Lr, p),
            (OpSpec::Allreduce { bytes, .. }, Algo::Lr) if *bytes < p as f64 => self.uses_init_smp(op, Algo::Redbcast, p),
            (OpSpec::Allreduce { bytes, comm }, Algo::Lr) => {
                let rest = lr_split(*bytes, p).1;
                let rest_op = OpSpec::Allreduce { bytes: rest, comm: *comm };
                rest > 0.0 && self.uses_init_smp(&rest_op, self.pick(&rest_op, p), p)
            }
            _ => false,
        }
    }

    /// The algorithm of `op` on a communicator of `p` ranks.
    pub(crate) fn pick(&self, op: &OpSpec, p: usize) -> Algo {
        let name = op.name();
        if let Some(&a) = self.fixed.get(name) {
            return a;
        }
        let preset_choice = match self.preset {
            Some(Preset::Mpich) => mpich(op, p),
            Some(Preset::Ompi) => ompi(op, p),
            Some(Preset::Smpi) => smpi(op),
            None => None,
        };
        if let Some(a) = preset_choice {
            return a;
        }
        offered(name).map_or(Algo::Binomial, |a| a[0])
    }

    /// The algorithm of `op` when another algorithm calls it (SimGrid's `colls::reduce`,
    /// `colls::bcast`): the fixed choice, else the preset's, else `smpi_default`, what SMPI runs
    /// with no selector (its "default" algorithms), where the preset picks nothing.
    pub(crate) fn pick_inner(&self, op: &OpSpec, p: usize, smpi_default: Algo) -> Algo {
        if self.fixed.contains_key(op.name()) || self.preset.is_some() {
            self.pick(op, p)
        } else {
            smpi_default
        }
    }

    /// Check the fixed choices against communicator size `p` (power-of-two algorithms, the
    /// neighbour exchange's even count).
    pub(crate) fn check(&self, op: &OpSpec, p: usize) -> Result<()> {
        self.check_algo(op, self.pick(op, p), p)
    }

    /// Check algorithm `a` for `op` on `p` ranks (and the algorithms it calls).
    fn check_algo(&self, op: &OpSpec, a: Algo, p: usize) -> Result<()> {
        if let (OpSpec::Alltoall { bytes, .. }, Algo::SmpiDefault) = (op, a) {
            return self.check_algo(op, smpi_default_alltoall(p, *bytes), p);
        }
        if let (OpSpec::Allreduce { .. }, Algo::Redbcast | Algo::SmpiDefault) = (op, a) {
            let (reduce, reduce_algo, bcast, bcast_algo) = redbcast_parts(op, a, p, self);
            self.check_algo(&reduce, reduce_algo, p)?;
            return self.check_algo(&bcast, bcast_algo, p);
        }
        if let (OpSpec::Allgatherv { .. }, Algo::Gb) = (op, a) {
            let (bcast, bcast_algo) = gb_bcast(op, p, self);
            return self.check_algo(&bcast, bcast_algo, p);
        }
        if let (OpSpec::Allreduce { bytes, .. }, Algo::RingSegmented) = (op, a) {
            if ompi_colls::RingSegmented::new(*bytes, p).is_none() {
                return self.check_algo(op, Algo::Lr, p);
            }
        }
        if let (OpSpec::Allreduce { bytes, comm }, Algo::Lr) = (op, a) {
            if *bytes < p as f64 {
                return self.check_algo(op, Algo::Redbcast, p);
            }
            let rest = lr_split(*bytes, p).1;
            return if rest > 0.0 { self.check(&OpSpec::Allreduce { bytes: rest, comm: *comm }, p) } else { Ok(()) };
        }
        let refuse = |reason: String| Err(Error::new(ErrorKind::Options, "coll", format!("{} algorithm {} {reason}", op.name(), a.name())));
        if let OpSpec::Bcast { bytes, .. } = op {
            if a == Algo::OmpiSplitBintree && !ompi_colls::split_bintree_splits(*bytes) {
                return refuse(format!(
                    "needs a segment ({} bytes) in each half of the buffer (SimGrid runs SMP_linear below that, not modelled), got {bytes}",
                    ompi_colls::split_bintree_segsize(*bytes)
                ));
            }
        }
        if a.needs_pof2() && !p.is_power_of_two() && !(a == Algo::Rdb && matches!(op.name(), "allreduce" | "scan" | "exscan" | "allgather")) {
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
        // MPICH's alltoallv (not in place) posts its receives and sends in batches: SimGrid's
        // `alltoallv__mpich` runs its bruck, which does that 4 at a time.
        OpSpec::Alltoallv { .. } => Some(Algo::Bruck),
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

/// Open MPI's fixed decision for one collective: rows of (communicator size below, cells of
/// (total bytes below, Open MPI's algorithm number)), the last row and cell taking the rest
/// (a row "size == 2" of the source is "below 3"). The numbers are those of
/// `ompi/mca/coll/tuned/coll_tuned_decision_fixed.c` (Open MPI 4.1/5.0) as SimGrid 3.32 carries
/// them in `src/smpi/colls/smpi_openmpi_selector.cpp` (updated 02/2022), commutative operations
/// (SimGrid's replay reduces with MPI_OP_NULL, which counts as commutative).
type Decision = &'static [(usize, &'static [(f64, u8)])];

const INF: f64 = f64::INFINITY;

/// `allreduce__ompi`: 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring, 5 segmented_ring, 6 rabenseifner.
const OMPI_ALLREDUCE: Decision = &[
    (4, &[(8.0, 4), (4096.0, 3), (8192.0, 4), (16384.0, 3), (65536.0, 4), (262144.0, 5), (INF, 6)]),
    (8, &[(16.0, 4), (8192.0, 3), (INF, 6)]),
    (16, &[(8192.0, 3), (INF, 6)]),
    (32, &[(64.0, 5), (4096.0, 3), (INF, 6)]),
    (64, &[(128.0, 5), (INF, 6)]),
    (128, &[(262144.0, 3), (INF, 6)]),
    (256, &[(131072.0, 2), (262144.0, 3), (INF, 6)]),
    (512, &[(4096.0, 2), (INF, 6)]),
    (2048, &[(2048.0, 2), (16384.0, 3), (INF, 6)]),
    (4096, &[(2048.0, 2), (4096.0, 5), (16384.0, 3), (INF, 6)]),
    (usize::MAX, &[(2048.0, 2), (16384.0, 5), (32768.0, 3), (INF, 6)]),
];
/// `alltoall__ompi`: 1 linear, 2 pairwise, 3 modified_bruck, 4 linear_sync, 5 two_proc.
const OMPI_ALLTOALL: Decision = &[
    (3, &[(2.0, 2), (4.0, 5), (16.0, 2), (64.0, 5), (256.0, 2), (4096.0, 5), (32768.0, 2), (262144.0, 4), (1048576.0, 5), (INF, 2)]),
    (8, &[(8192.0, 4), (16384.0, 1), (65536.0, 4), (524288.0, 1), (1048576.0, 2), (INF, 1)]),
    (16, &[(262144.0, 4), (INF, 1)]),
    (32, &[(4.0, 4), (512.0, 3), (8192.0, 4), (32768.0, 1), (262144.0, 4), (524288.0, 1), (INF, 4)]),
    (64, &[(512.0, 3), (524288.0, 1), (INF, 4)]),
    (128, &[(1024.0, 3), (2048.0, 1), (4096.0, 4), (262144.0, 1), (INF, 2)]),
    (256, &[(1024.0, 3), (2048.0, 4), (262144.0, 1), (INF, 2)]),
    (512, &[(1024.0, 3), (8192.0, 4), (32768.0, 1), (INF, 2)]),
    (1024, &[(512.0, 3), (8192.0, 4), (16384.0, 1), (131072.0, 4), (262144.0, 1), (INF, 2)]),
    (2048, &[(512.0, 3), (1024.0, 4), (2048.0, 1), (16384.0, 4), (262144.0, 1), (INF, 4)]),
    (4096, &[(1024.0, 3), (4096.0, 4), (8192.0, 1), (131072.0, 4), (INF, 1)]),
    (usize::MAX, &[(2048.0, 3), (8192.0, 4), (16384.0, 1), (32768.0, 4), (65536.0, 1), (INF, 4)]),
];
/// `alltoallv__ompi`: 1 basic_linear, 2 pairwise (by communicator size only).
const OMPI_ALLTOALLV: Decision = &[
    (4, &[(INF, 2)]),
    (64, &[(INF, 1)]),
    (128, &[(INF, 2)]),
    (256, &[(INF, 1)]),
    (1024, &[(INF, 2)]),
    (usize::MAX, &[(INF, 1)]),
];
/// `barrier__ompi`: 1 linear, 2 double_ring, 3 recursive_doubling, 4 bruck, 5 two_proc, 6 tree (by size only).
const OMPI_BARRIER: Decision = &[
    (4, &[(INF, 3)]),
    (8, &[(INF, 1)]),
    (64, &[(INF, 3)]),
    (256, &[(INF, 4)]),
    (512, &[(INF, 6)]),
    (1024, &[(INF, 4)]),
    (4096, &[(INF, 6)]),
    (usize::MAX, &[(INF, 4)]),
];
/// `bcast__ompi`: 1 basic_linear, 2 chain, 3 pipeline, 4 split_binary_tree, 5 binary_tree, 6 binomial, 7 knomial, 8 scatter_allgather, 9 scatter_allgather_ring.
const OMPI_BCAST: Decision = &[
    (4, &[(32.0, 3), (256.0, 5), (512.0, 3), (1024.0, 7), (32768.0, 1), (131072.0, 5), (262144.0, 2), (524288.0, 1), (1048576.0, 6), (INF, 5)]),
    (8, &[(64.0, 5), (128.0, 6), (2048.0, 5), (8192.0, 6), (1048576.0, 1), (INF, 2)]),
    (16, &[(8.0, 7), (64.0, 5), (4096.0, 7), (16384.0, 5), (32768.0, 6), (INF, 1)]),
    (32, &[(4096.0, 7), (1048576.0, 6), (INF, 8)]),
    (64, &[(2048.0, 6), (INF, 7)]),
    (128, &[(INF, 7)]),
    (256, &[(2.0, 6), (16384.0, 5), (32768.0, 1), (65536.0, 5), (INF, 7)]),
    (1024, &[(16384.0, 7), (32768.0, 4), (INF, 7)]),
    (2048, &[(524288.0, 7), (INF, 8)]),
    (4096, &[(262144.0, 7), (INF, 8)]),
    (usize::MAX, &[(8192.0, 7), (16384.0, 5), (262144.0, 7), (INF, 8)]),
];
/// `reduce__ompi`: 1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order_binary, 7 rabenseifner.
const OMPI_REDUCE: Decision = &[
    (4, &[(8.0, 7), (16.0, 4), (32.0, 3), (262144.0, 1), (524288.0, 3), (1048576.0, 2), (INF, 3)]),
    (8, &[(4096.0, 4), (65536.0, 2), (262144.0, 5), (524288.0, 1), (1048576.0, 5), (INF, 1)]),
    (16, &[(8192.0, 4), (INF, 5)]),
    (32, &[(4096.0, 4), (INF, 5)]),
    (256, &[(INF, 5)]),
    (512, &[(8192.0, 5), (16384.0, 6), (INF, 5)]),
    (2048, &[(INF, 5)]),
    (4096, &[(512.0, 5), (1024.0, 6), (8192.0, 5), (16384.0, 6), (INF, 5)]),
    (usize::MAX, &[(16.0, 5), (32.0, 6), (1024.0, 5), (2048.0, 6), (8192.0, 5), (16384.0, 6), (INF, 5)]),
];
/// `reduce_scatter__ompi`: 1 non-overlapping, 2 recursive_halving, 3 ring, 4 butterfly.
const OMPI_REDUCE_SCATTER: Decision = &[
    (4, &[(65536.0, 3), (131072.0, 4), (INF, 3)]),
    (8, &[(8.0, 1), (262144.0, 2), (INF, 3)]),
    (32, &[(262144.0, 2), (INF, 3)]),
    (64, &[(64.0, 1), (2048.0, 2), (524288.0, 4), (INF, 3)]),
    (128, &[(256.0, 1), (512.0, 2), (2048.0, 4), (4096.0, 2), (INF, 4)]),
    (256, &[(256.0, 1), (512.0, 2), (INF, 4)]),
    (512, &[(256.0, 1), (1024.0, 2), (INF, 4)]),
    (1024, &[(512.0, 1), (2048.0, 2), (8192.0, 4), (16384.0, 2), (INF, 4)]),
    (2048, &[(512.0, 1), (4096.0, 2), (16384.0, 4), (32768.0, 2), (INF, 4)]),
    (4096, &[(512.0, 1), (4096.0, 2), (INF, 4)]),
    (usize::MAX, &[(1024.0, 1), (8192.0, 2), (INF, 4)]),
];
/// `allgather__ompi`: 1 linear, 2 bruck, 3 recursive_doubling, 4 ring, 5 neighbor, 6 two_proc.
const OMPI_ALLGATHER: Decision = &[
    (3, &[(INF, 6)]),
    (32, &[(INF, 3)]),
    (64, &[(1024.0, 3), (65536.0, 5), (INF, 4)]),
    (128, &[(512.0, 3), (65536.0, 5), (INF, 4)]),
    (256, &[(512.0, 3), (131072.0, 5), (524288.0, 4), (1048576.0, 5), (INF, 4)]),
    (512, &[(32.0, 3), (128.0, 2), (1024.0, 3), (131072.0, 5), (524288.0, 4), (1048576.0, 5), (INF, 4)]),
    (1024, &[(64.0, 3), (256.0, 2), (2048.0, 3), (INF, 5)]),
    (2048, &[(4.0, 3), (8.0, 2), (16.0, 3), (32.0, 2), (256.0, 3), (512.0, 2), (4096.0, 3), (INF, 5)]),
    (4096, &[(32.0, 2), (128.0, 3), (512.0, 2), (4096.0, 3), (INF, 5)]),
    (usize::MAX, &[(2.0, 3), (8.0, 2), (16.0, 3), (512.0, 2), (4096.0, 3), (INF, 5)]),
];
/// `allgatherv__ompi`: 1 default, 2 bruck, 3 ring, 4 neighbor, 5 two_proc.
const OMPI_ALLGATHERV: Decision = &[
    (3, &[(2048.0, 3), (4096.0, 5), (8192.0, 3), (INF, 5)]),
    (8, &[(256.0, 1), (4096.0, 4), (8192.0, 3), (16384.0, 4), (262144.0, 2), (INF, 4)]),
    (16, &[(1024.0, 1), (INF, 2)]),
    (32, &[(128.0, 1), (262144.0, 2), (INF, 3)]),
    (64, &[(256.0, 1), (8192.0, 2), (INF, 3)]),
    (128, &[(256.0, 1), (4096.0, 2), (INF, 3)]),
    (256, &[(1024.0, 2), (65536.0, 4), (INF, 3)]),
    (512, &[(1024.0, 2), (INF, 3)]),
    (1024, &[(512.0, 2), (1024.0, 1), (4096.0, 2), (1048576.0, 4), (INF, 3)]),
    (usize::MAX, &[(4096.0, 2), (INF, 4)]),
];
/// `gather__ompi`: 1 basic_linear, 2 binomial, 3 linear_sync.
const OMPI_GATHER: Decision = &[
    (4, &[(2.0, 3), (4.0, 1), (32768.0, 2), (65536.0, 1), (131072.0, 2), (INF, 3)]),
    (8, &[(1024.0, 2), (8192.0, 1), (32768.0, 2), (262144.0, 1), (INF, 3)]),
    (256, &[(INF, 2)]),
    (512, &[(2048.0, 2), (8192.0, 1), (INF, 2)]),
    (usize::MAX, &[(INF, 2)]),
];
/// `scatter__ompi`: 1 basic_linear, 2 binomial, 3 linear_nb.
const OMPI_SCATTER: Decision = &[
    (4, &[(2.0, 3), (131072.0, 1), (262144.0, 3), (INF, 1)]),
    (8, &[(2048.0, 2), (4096.0, 1), (8192.0, 2), (32768.0, 1), (1048576.0, 3), (INF, 1)]),
    (16, &[(16384.0, 2), (1048576.0, 3), (INF, 1)]),
    (32, &[(16384.0, 2), (32768.0, 1), (INF, 3)]),
    (64, &[(512.0, 2), (8192.0, 3), (16384.0, 2), (INF, 3)]),
    (usize::MAX, &[(512.0, 2), (INF, 3)]),
];

/// Open MPI's algorithm number for `p` ranks and `bytes` in `table`.
fn decide(table: Decision, p: usize, bytes: f64) -> u8 {
    let (_, cells) = table.iter().find(|(below, _)| p < *below).expect("the last row takes every size");
    cells.iter().find(|(below, _)| bytes < *below).expect("the last cell takes every size").1
}

/// Open MPI's selector as SimGrid 3.32's `smpi/coll-selector:ompi` runs it, or `None` to keep
/// the default where it picks an algorithm not modelled here (docs/formats.md lists each
/// case). Sizes are bytes (counts of MPI_BYTE, as the TI export writes them): per rank for
/// alltoall, gather, scatter and allgather, the whole buffer for bcast, reduce and allreduce,
/// the sum of the counts for reduce_scatter, that sum over p (rounded down) for allgatherv.
fn ompi(op: &OpSpec, p: usize) -> Option<Algo> {
    let if_pof2 = |a: Algo| p.is_power_of_two().then_some(a);
    match op {
        OpSpec::Allreduce { bytes, .. } => match decide(OMPI_ALLREDUCE, p, *bytes) {
            3 => Some(Algo::Rdb),
            // 4 ring: SimGrid's lr (redbcast below p bytes, its remainder by the selector).
            // 5 segmented_ring runs lr below p segments of 1 MiB, which covers every size the
            // decision gives it.
            4 => Some(Algo::Lr),
            5 => Some(Algo::RingSegmented),
            // 1 basic_linear, 2 nonoverlapping: SimGrid runs redbcast, which calls the
            // selector's reduce and bcast.
            1 | 2 => Some(Algo::Redbcast),
            6 => Some(Algo::RabRdb),
            _ => None,
        },
        OpSpec::Alltoall { bytes, .. } => Some(smpi_default_alltoall(p, *bytes)),
        OpSpec::Alltoallv { .. } => match decide(OMPI_ALLTOALLV, p, 0.0) {
            1 => Some(Algo::BasicLinear),
            _ => if_pof2(Algo::Pair), // 2 pairwise: SimGrid's pair (a power of two only)
        },
        OpSpec::Barrier { .. } => match decide(OMPI_BARRIER, p, 0.0) {
            1 | 2 => Some(Algo::BasicLinear), // linear; double_ring runs basic_linear in SimGrid
            3 => Some(Algo::RecursiveDoubling),
            4 => Some(Algo::Dissemination), // bruck
            6 => Some(Algo::Tree),
            _ => None, // 5 two_proc (never picked)
        },
        OpSpec::Bcast { bytes, .. } => match decide(OMPI_BCAST, p, *bytes) {
            // 1 basic_linear: SimGrid runs its NTSL.
            1 => Some(Algo::Ntsl),
            // 2 chain, 3 pipeline: SimGrid runs ompi_pipeline for both.
            2 | 3 => Some(Algo::OmpiPipeline),
            // 5 binary_tree: SimGrid's NTSB.
            5 => Some(Algo::BinaryTree),
            4 if ompi_colls::split_bintree_splits(*bytes) => Some(Algo::OmpiSplitBintree),
            6 => Some(Algo::Binomial),
            8 => Some(Algo::ScatterRdbAllgather), // scatter_allgather: SimGrid's, on any count
            9 => Some(Algo::ScatterLrAllgather),  // scatter_allgather_ring (never picked)
            7 => Some(Algo::MvapichKnomial),      // knomial: SimGrid's mvapich2_knomial_intra_node
            _ => None, // split_bintree below a segment per half (SMP_linear)
        },
        OpSpec::Reduce { bytes, .. } => Some(match decide(OMPI_REDUCE, p, *bytes) {
            2 => Algo::OmpiChain,
            3 => Algo::OmpiPipeline,
            4 => Algo::OmpiBinary,
            5 => Algo::OmpiBinomial,
            6 => Algo::OmpiInOrderBinary,
            // 1 linear; 7 rabenseifner, which SimGrid replaces by basic_linear.
            _ => Algo::BasicLinear,
        }),
        OpSpec::Allgather { bytes, .. } => match decide(OMPI_ALLGATHER, p, *bytes) {
            2 => Some(Algo::Bruck),
            3 => Some(Algo::Rdb), // recursive_doubling: SimGrid's rdb, on any count
            5 => Some(Algo::NeighborExchange), // the direct ring on an odd count, as SimGrid's
            6 => if_pof2(Algo::Pair), // two_proc
            4 => Some(Algo::DirectRing), // ring: SimGrid's direct one
            _ => None,                   // 1 linear (NTSLR_NB; never picked)
        },
        OpSpec::Allgatherv { bytes, .. } => match decide(OMPI_ALLGATHERV, p, (bytes.iter().sum::<f64>() / p as f64).floor()) {
            1 => Some(Algo::Gb), // default: SimGrid's GB
            2 => Some(Algo::Bruck), // bruck: SimGrid's ompi_bruck
            3 => Some(Algo::Ring), // ring: SimGrid's mpich_ring
            4 => Some(Algo::NeighborExchange), // the direct ring on an odd count, as SimGrid's
            _ => if_pof2(Algo::Pair), // 5 two_proc: SimGrid's pair
        },
        OpSpec::Gather { bytes, .. } => match decide(OMPI_GATHER, p, *bytes) {
            1 => Some(Algo::BasicLinear),
            2 => Some(Algo::Binomial),
            _ => Some(Algo::LinearSync),
        },
        OpSpec::Scatter { bytes, .. } => match decide(OMPI_SCATTER, p, *bytes) {
            1 => Some(Algo::BasicLinear),
            2 => Some(Algo::OmpiBinomial),
            _ => Some(Algo::LinearNb),
        },
        OpSpec::ReduceScatter { bytes, .. } => match decide(OMPI_REDUCE_SCATTER, p, bytes.iter().sum()) {
            2 => Some(Algo::RecursiveHalving),
            3 => Some(Algo::Ring),
            4 => Some(Algo::Butterfly),
            // 1 non-overlapping: SimGrid runs its reduce_scatter__default.
            _ => Some(Algo::SmpiDefault),
        },
        // No decision in Open MPI's tuned component: its basic component's linear scan and
        // exscan, which are also SimGrid's only ones.
        OpSpec::Scan { .. } | OpSpec::Exscan { .. } => Some(Algo::Linear),
        _ => None,
    }
}

/// What SMPI's `alltoall__default` runs (`smpi_default_selector.cpp:119-122`): `alltoall__ompi`,
/// Open MPI's decision on the bytes per destination (`smpi_openmpi_selector.cpp:182-368`, our
/// [`OMPI_ALLTOALL`]). 1 linear, 4 linear_sync and 5 two_proc: SimGrid runs `basic_linear` for
/// all three (`:198-204`); 3 modified_bruck: `bruck`; 2 pairwise: SimGrid's `pair`, which throws
/// `std::invalid_argument` on a count that is not a power of two (`alltoall-pair.cpp:81-82`),
/// so that SMPI aborts there: we run MPICH's `pairwise` instead (rank ± i, SimGrid's `ring`),
/// as the `ompi` preset does.
fn smpi_default_alltoall(p: usize, bytes: f64) -> Algo {
    match decide(OMPI_ALLTOALL, p, bytes) {
        2 if p.is_power_of_two() => Algo::Pair,
        2 => Algo::Pairwise,
        3 => Algo::Bruck,
        _ => Algo::BasicLinear,
    }
}

/// SMPI 3.32's `default` selector (`smpi/coll-selector:default`, smpirun's with no collective
/// option: `smpi_config.cpp:236-247`, `smpi_coll.cpp:305-326`), collective by collective
/// (`smpi_default_selector.cpp`; gatherv, scatterv, scan and exscan are not selectable,
/// `smpi_coll.cpp:330-472`). It picks the same whatever the size; the alltoall and allreduce
/// choices ([`Algo::SmpiDefault`]) look at the size and communicator themselves. Replays
/// reduce with `MPI_OP_NULL` on predefined types (`smpi_replay.cpp:665, 684`), so
/// `reduce__default` never takes its Open MPI branch for non-commutative operations or derived
/// types (`:99-101`), nor `allreduce__default` (`:110-111`).
fn smpi(op: &OpSpec) -> Option<Algo> {
    Some(match op {
        OpSpec::Barrier { .. } => Algo::BasicLinear,  // barrier__ompi_basic_linear
        OpSpec::Bcast { .. } => Algo::Binomial,       // bcast__binomial_tree
        OpSpec::Scatter { .. } => Algo::LinearNb,     // colls::iscatter
        OpSpec::Alltoallv { .. } => Algo::BasicLinear, // colls::ialltoallv
        OpSpec::Scan { .. } | OpSpec::Exscan { .. } => Algo::Linear,
        OpSpec::Alltoall { .. } | OpSpec::Allreduce { .. } | OpSpec::ReduceScatter { .. } => Algo::SmpiDefault,
        OpSpec::Reduce { .. } | OpSpec::Gather { .. } | OpSpec::Gatherv { .. } | OpSpec::Scatterv { .. } | OpSpec::Allgather { .. } | OpSpec::Allgatherv { .. } => {
            Algo::NbcLinear
        }
        _ => return None,
    })
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

/// Round `k` of SimGrid's one-segment NTSB bcast ([`Algo::BinaryTree`]).
fn binary_tree_bcast(r: usize, p: usize, root: usize, k: usize, bytes: f64) -> Option<Round> {
    let to_zero = root != 0;
    let send = |to: usize| Some(if to < p { Round::Send { to, bytes } } else { Round::Skip });
    match k.checked_sub(to_zero as usize) {
        None if r == root => Some(Round::Send { to: 0, bytes }),
        None if r == 0 => Some(Round::Recv(root)),
        None => Some(Round::Skip),
        Some(0) => Some(if r == 0 { Round::Skip } else { Round::Recv((r - 1) / 2) }),
        Some(1) => send(2 * r + 1),
        Some(2) => send(2 * r + 2),
        Some(_) => None,
    }
}

/// Round `k` of a binomial tree flowing away from `root` (bcast, scatter): receive from
/// the parent (if not the root), then send to the children, the largest subtree first
/// (MPICH's) or the smallest first (Open MPI's, `largest_first` false); the message to
/// the child at relative rank `c` with a subtree of `n` ranks carries `block(c, n)` bytes.
fn binomial_down(r: usize, p: usize, root: usize, k: usize, largest_first: bool, block: impl Fn(usize, usize) -> f64) -> Option<Round> {
    let rel = (r + p - root) % p;
    let has_parent = rel != 0;
    if has_parent && k == 0 {
        return Some(Round::Recv((rel - low_bit(rel) + root) % p));
    }
    // Children sit at rel + 2^j for every 2^j below this.
    let above_children = if has_parent { low_bit(rel) } else { p.next_power_of_two() };
    let j = (k - has_parent as usize) as u32;
    let mask = if largest_first {
        (above_children >> 1).checked_shr(j).unwrap_or(0)
    } else {
        1usize.checked_shl(j).filter(|&m| m < above_children).unwrap_or(0)
    };
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

/// Round `k` of Open MPI's ring reduce-scatter (SimGrid's `reduce_scatter__ompi_ring`,
/// reduce_scatter-ompi.cpp:351-460): the receive of each block from the left is posted before
/// the previous one is awaited (two buffers), and each block goes on to the right with a
/// blocking send. Round 0 posts the first receive, round 1 sends the left neighbour's block;
/// then for j = 2 … p − 1: post the next receive, await the previous one (combining block
/// r − j), send that block; last, await the rank's own block and combine it. When a detached
/// send's transfer waits for its receive (`async_small_thresh`), the early receives matter.
fn ompi_ring_reduce_scatter(r: usize, p: usize, k: usize, bytes: &[f64]) -> Option<Round> {
    let (left, right) = ((r + p - 1) % p, (r + 1) % p);
    let send = |b: f64| Round::SendSlot { to: right, bytes: b, slot: 2, blocking: true };
    if p < 2 || k > 3 * p - 4 {
        return None;
    }
    Some(match k {
        0 => Round::RecvSlot { from: left, slot: 0 },
        1 => send(bytes[left]),
        k if k == 3 * p - 4 => Round::Await { first: ((p - 2) % 2) as u32, n: 1, combine: bytes[r] },
        k => {
            let j = 2 + (k - 2) / 3;
            let prev = (r + p - j) % p;
            match (k - 2) % 3 {
                0 => Round::RecvSlot { from: left, slot: ((j - 1) % 2) as u32 },
                1 => Round::Await { first: (j % 2) as u32, n: 1, combine: bytes[prev] },
                _ => send(bytes[prev]),
            }
        }
    })
}

/// Linear exchange with the root, round k: the root deals with every other rank in rank
/// order, from rank p − 1 down when `descending` (sending when `to_root` is false), the
/// others make their one transfer; rank i's block is `bytes(i)`.
fn linear(r: usize, p: usize, root: usize, k: usize, to_root: bool, descending: bool, bytes: impl Fn(usize) -> f64) -> Option<Round> {
    if r != root {
        return (k == 0).then(|| if to_root { Round::Send { to: root, bytes: bytes(r) } } else { Round::Recv(root) });
    }
    if k + 1 >= p {
        return None;
    }
    let i = if descending { p - 1 - k - (p - 1 - k <= root) as usize } else { k + (k >= root) as usize };
    Some(if to_root { Round::Recv(i) } else { Round::Send { to: i, bytes: bytes(i) } })
}

/// Round 0 of rank `r` of `p` is a fan (none when it has no other rank).
fn fan_round(r: usize, p: usize, k: usize, recv_from: Option<Order>, send_to: Option<Order>) -> Option<Round> {
    (k == 0 && p > 1).then_some(Round::Fan(Fan { r, p, recv_from, send_to, window: (0, usize::MAX), interleave: false }))
}

/// Round `k` of a rank whose whole part in one of SMPI's non-blocking collectives is one send of
/// `bytes` to `to`: `isend_init`, started, then awaited (`smpi_nbc_impl.cpp`, e.g. `:292-294`),
/// so a non-blocking send (`smpi/ois`, not `smpi/os` as a blocking send), then its wait.
fn nbc_send(k: usize, to: usize, bytes: f64) -> Option<Round> {
    match k {
        0 => Some(Round::SendSlot { to, bytes, slot: 0, blocking: false }),
        1 => Some(Round::Await { first: 0, n: 1, combine: 0.0 }),
        _ => None,
    }
}

/// SimGrid's `alltoallv__bruck` (MPICH's "scattered" alltoallv) posts at most this many
/// receives and sends at a time (`bblock`, MPICH's MPIR_PARAM_ALLTOALL_THROTTLE).
const ALLTOALLV_BLOCK: usize = 4;

/// Round k of SimGrid's alltoallv bruck: ranks r + 4k, …, r + 4k + 3 (mod p, without r
/// itself), receives from each posted in that order, then sends to r − 4k, …, r − 4k − 3,
/// then a wait for all.
fn scattered(r: usize, p: usize, k: usize) -> Option<Round> {
    let first = k * ALLTOALLV_BLOCK;
    if first >= p {
        return None;
    }
    // Positions in the Upward / Downward orders, which leave out r itself (offset 0).
    let (from, to) = (first.max(1) - 1, (first + ALLTOALLV_BLOCK).min(p) - 1);
    Some(Round::Fan(Fan { r, p, recv_from: Some(Order::Upward), send_to: Some(Order::Downward), window: (from, to - from), interleave: false }))
}

/// Round `k` of a barrier with algorithm `algo`; every message is empty.
fn barrier(algo: Algo, r: usize, p: usize, k: usize) -> Option<Round> {
    match algo {
        // Rank 0 receives from every other rank, then sends to each; they send, then receive.
        Algo::BasicLinear => match (r, k) {
            (0, 0) => fan_round(0, p, 0, Some(Order::Ascending), None),
            (0, 1) => fan_round(0, p, 0, None, Some(Order::Ascending)),
            (_, 0) => Some(Round::Send { to: 0, bytes: 0.0 }),
            (1.., 1) => Some(Round::Recv(0)),
            _ => None,
        },
        Algo::RecursiveDoubling => {
            // Ranks from pof2 up exchange with rank − pof2, which hears from them first,
            // runs the recursive doubling, and answers them last.
            let pof2 = floor_pow2(p);
            let steps = pof2.trailing_zeros() as usize;
            let exchange = |peer: usize| Round::SendRecv { dst: peer, src: peer, bytes: 0.0 };
            let folded = r < p - pof2;
            match k {
                _ if r >= pof2 => (k == 0).then(|| exchange(r - pof2)),
                0 => Some(if folded { Round::Recv(r + pof2) } else { Round::Skip }),
                k if k <= steps => Some(exchange(r ^ (1 << (k - 1)))),
                k if k == steps + 1 && folded => Some(Round::Send { to: r + pof2, bytes: 0.0 }),
                _ => None,
            }
        }
        Algo::Tree => {
            // Up: at jump 2^k a rank whose k low bits are clear hears from r + 2^k if it has
            // that bit clear, else reports to r − 2^k; down: the same pairs the other way.
            let levels = log2_ceil(p);
            let (jump, up) = match k {
                k if k < levels => (1usize << k, true),
                k if k < 2 * levels => (1usize << (2 * levels - 1 - k), false),
                _ => return None,
            };
            let partner = r ^ jump;
            Some(if r & (jump - 1) != 0 || partner >= p {
                Round::Skip
            } else if (partner > r) == up {
                Round::Recv(partner)
            } else {
                Round::Send { to: partner, bytes: 0.0 }
            })
        }
        _ => {
            // Dissemination: round k with rank ± 2^k.
            let mask = 1usize.checked_shl(k as u32).filter(|&m| m < p)?;
            Some(Round::SendRecv { dst: (r + mask) % p, src: (r + p - mask) % p, bytes: 0.0 })
        }
    }
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

/// Step `j` of Open MPI's recursive halving (reduce-scatter) for rank `r` of `p` with block
/// sizes `sizes`, if the rank takes part: (partner, bytes sent, bytes received). On the
/// power-of-two core (rank i < rem standing for ranks 2i and 2i + 1, the others for i + rem),
/// step j pairs ranks pof2 / 2^(j+1) apart; each keeps the half of their common window of
/// blocks its own rank is in and sends the other half.
fn halving_step(r: usize, p: usize, j: usize, sizes: &[f64]) -> Option<(usize, f64, f64)> {
    let pof2 = floor_pow2(p);
    let rem = p - pof2;
    let core_rank = if r < 2 * rem { (r % 2 == 1).then_some(r / 2)? } else { r - rem };
    let first_rank = |i: usize| if i < rem { 2 * i } else { i + rem };
    let half_sum = |i: usize, mask: usize| sizes[first_rank(i)..first_rank(i + mask)].iter().sum::<f64>();
    let mask = pof2 >> (j + 1);
    let peer = core_rank ^ mask;
    let (mine, theirs) = (core_rank & !(mask - 1), peer & !(mask - 1));
    let partner = if peer < rem { 2 * peer + 1 } else { peer + rem };
    Some((partner, half_sum(theirs, mask), half_sum(mine, mask)))
}

/// Round `k` of Open MPI's recursive halving (reduce-scatter, [`halving_step`]): the fold
/// (the even of the first 2·rem ranks sends its whole buffer to the odd), the core steps (a
/// step moving nothing either way is skipped), then each odd rank sends its even
/// neighbour's block.
fn recursive_halving(r: usize, p: usize, k: usize, sizes: &[f64]) -> Option<Round> {
    let total: f64 = sizes.iter().sum();
    let steps = floor_pow2(p).trailing_zeros() as usize;
    if total == 0.0 || k > steps + 1 {
        return None;
    }
    let folded = r < 2 * (p - floor_pow2(p));
    Some(match k {
        0 if folded && r % 2 == 0 => Round::Send { to: r + 1, bytes: total },
        0 if folded => Round::Recv(r - 1),
        0 => Round::Skip,
        k if k <= steps => match halving_step(r, p, k - 1, sizes) {
            Some((partner, sent, kept)) if sent > 0.0 && kept > 0.0 => Round::SendRecv { dst: partner, src: partner, bytes: sent },
            _ => Round::Skip,
        },
        _ if folded && r % 2 == 0 && sizes[r] > 0.0 => Round::Recv(r + 1),
        _ if folded && r % 2 == 1 && sizes[r - 1] > 0.0 => Round::Send { to: r - 1, bytes: sizes[r - 1] },
        _ => Round::Skip,
    })
}

/// Round `k` of Open MPI's neighbour exchange (allgather(v), p even): round 0 trades rank r's
/// block with its first neighbour (r + 1 for an even r, r − 1 for an odd one); round k ≥ 1
/// trades, with the first neighbour on even k and the other on odd k, the pair of blocks
/// received in round k − 1: its own pair (r − r mod 2 and the next) at k = 1, then pairs
/// 2·⌊k/2⌋ ranks away, above on odd k for an even r (on even k for an odd r), else below.
/// `block(b)` is the size of rank b's block.
fn neighbor_exchange(r: usize, p: usize, k: usize, block: impl Fn(usize) -> f64) -> Option<Round> {
    if k >= p / 2 {
        return None;
    }
    let even = r % 2 == 0;
    let first = if even { (r + 1) % p } else { (r + p - 1) % p };
    let other = if even { (r + p - 1) % p } else { (r + 1) % p };
    let partner = if k % 2 == 0 { first } else { other };
    if k == 0 {
        return Some(Round::SendRecv { dst: partner, src: partner, bytes: block(r) });
    }
    let pair = r - r % 2;
    let away = 2 * (k / 2) % p;
    let from = if even == (k % 2 == 1) { (pair + away) % p } else { (pair + p - away) % p };
    Some(Round::SendRecv { dst: partner, src: partner, bytes: block(from) + block(from + 1) })
}

/// The reduce to rank 0 and the bcast from rank 0 that allreduce `op` on `p` ranks runs with
/// algorithm `algo`: SimGrid's `allreduce__redbcast` (`allreduce-redbcast.cpp:9-16`, through
/// `colls::reduce` and `colls::bcast`), each with the algorithm `coll` gives it there
/// ([`Collectives::pick_inner`]; SMPI's defaults: `reduce__default`, `bcast__binomial_tree`),
/// or `allreduce__default` ([`Algo::SmpiDefault`], `smpi_default_selector.cpp:107-117`), which
/// calls `reduce__default` and `bcast__default` themselves whatever is chosen for those.
fn redbcast_parts(op: &OpSpec, algo: Algo, p: usize, coll: &Collectives) -> (OpSpec, Algo, OpSpec, Algo) {
    let (bytes, comm) = match *op {
        OpSpec::Allreduce { bytes, comm } => (bytes, comm),
        _ => unreachable!("redbcast of a {}", op.name()),
    };
    let reduce = OpSpec::Reduce { root: 0, bytes, comm };
    let bcast = OpSpec::Bcast { root: 0, bytes, comm };
    let (reduce_algo, bcast_algo) = if algo == Algo::SmpiDefault {
        (Algo::NbcLinear, Algo::Binomial)
    } else {
        (coll.pick_inner(&reduce, p, Algo::NbcLinear), coll.pick_inner(&bcast, p, Algo::Binomial))
    };
    (reduce, reduce_algo, bcast, bcast_algo)
}

/// The bcast SimGrid's `allgatherv__GB` runs after its gatherv: the gathered buffer from rank 0
/// (the sum of the blocks: a program's contiguous displacements; SMPI's replay, whose
/// displacements are all 0, bcasts only the largest block), with the bcast `coll` gives it there
/// ([`Collectives::pick_inner`]; SMPI's default: the binomial tree).
fn gb_bcast(op: &OpSpec, p: usize, coll: &Collectives) -> (OpSpec, Algo) {
    let OpSpec::Allgatherv { bytes, comm } = op else { unreachable!("GB of a {}", op.name()) };
    let bcast = OpSpec::Bcast { root: 0, bytes: bytes.iter().sum(), comm: *comm };
    let algo = coll.pick_inner(&bcast, p, Algo::Binomial);
    (bcast, algo)
}

/// Rank `r`'s own block of a v-collective whose list gives every rank's block.
fn op_block(op: &OpSpec, r: usize) -> f64 {
    match op {
        OpSpec::Allgatherv { bytes, .. } => bytes[r],
        _ => unreachable!("op_block of a {}", op.name()),
    }
}

/// Lr's share of `bytes` per ring step, ⌊bytes / p⌋, and the remainder.
fn lr_split(bytes: f64, p: usize) -> (f64, f64) {
    let share = (bytes / p as f64).floor();
    (share, bytes - share * p as f64)
}

/// Rounds rank `r` of `p` spends in reduce `op` with algorithm `algo` (at least its last round
/// that is not `None`), without going through them.
fn reduce_len(op: &OpSpec, algo: Algo, r: usize, p: usize) -> usize {
    let OpSpec::Reduce { root, bytes, .. } = *op else { unreachable!("reduce_len of a {}", op.name()) };
    if p < 2 {
        return 0;
    }
    let generic = |tree: ompi_colls::Tree, segsize: f64| ompi_colls::reduce_generic_len(&tree, r == root, bytes, segsize);
    match algo {
        Algo::NbcLinear => if r == root { 1 } else { 2 },
        Algo::BasicLinear => if r == root { p - 1 } else { 1 },
        Algo::OmpiBinomial => generic(ompi_colls::in_order_bmtree(p, root, r), ompi_colls::reduce_binomial_segsize(p, bytes)),
        Algo::OmpiPipeline => generic(ompi_colls::chain(1, p, root, r), ompi_colls::reduce_pipeline_segsize(p, bytes)),
        Algo::OmpiChain => generic(ompi_colls::chain(p / 2, p, root, r), 65536.0),
        Algo::OmpiBinary => generic(ompi_colls::kary_tree(2, p, root, r), 32768.0),
        Algo::OmpiInOrderBinary => {
            let handover = root != p - 1 && (r == root || r == p - 1);
            ompi_colls::reduce_generic_len(&ompi_colls::in_order_bintree(p, r), r == p - 1, bytes, 0.0) + handover as usize
        }
        _ => log2_ceil(p),
    }
}

/// Round `k` of Open MPI's linear_sync gather ([`Algo::LinearSync`]) for rank `r` of `p`.
fn gather_linear_sync(r: usize, p: usize, root: usize, k: usize, bytes: f64) -> Option<Round> {
    let segsize = if bytes > 92160.0 { 32768.0 } else { 1024.0 };
    let first = ompi_colls::segments(bytes, segsize).1;
    if r != root {
        return match k {
            0 => Some(Round::Recv(root)),
            1 => Some(Round::Send { to: root, bytes: first }),
            2 => Some(Round::Send { to: root, bytes: bytes - first }),
            _ => None,
        };
    }
    // Four rounds per other rank (slot 0 its first segment, 1 the empty send, 2 + i its rest),
    // then one wait for every rest.
    let others = p - 1;
    if k < 4 * others {
        let (i, j) = (k / 4, k % 4);
        let peer = i + (i >= root) as usize;
        return Some(match j {
            0 => Round::RecvSlot { from: peer, slot: 0 },
            1 => Round::SendSlot { to: peer, bytes: 0.0, slot: 1, blocking: true },
            2 => Round::RecvSlot { from: peer, slot: 2 + i as u32 },
            _ => Round::Await { first: 0, n: 1, combine: 0.0 },
        });
    }
    (k == 4 * others && others > 0).then_some(Round::Await { first: 2, n: others as u32, combine: 0.0 })
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
pub(crate) fn round(op: &OpSpec, algo: Algo, r: usize, p: usize, k: u32, coll: &Collectives) -> Option<Round> {
    round_in(op, algo, r, p, k, &Ctx { coll, smp: None })
}

/// What an algorithm reads besides its op: the algorithms in use, and the communicator's layout
/// over hosts when the op is the first on it to run SimGrid's `Comm::init_smp` ([`smp`]).
pub(crate) struct Ctx<'a> {
    pub(crate) coll: &'a Collectives,
    pub(crate) smp: Option<&'a smp::Layout>,
}

impl std::ops::Deref for Ctx<'_> {
    type Target = Collectives;
    fn deref(&self) -> &Collectives {
        self.coll
    }
}

/// [`round`] in context `coll`.
pub(crate) fn round_in(op: &OpSpec, algo: Algo, r: usize, p: usize, k: u32, coll: &Ctx) -> Option<Round> {
    let k = k as usize;
    match (op, algo) {
        (OpSpec::Barrier { .. }, _) => barrier(algo, r, p, k),
        (OpSpec::Bcast { root, bytes, .. }, Algo::ScatterRdbAllgather | Algo::ScatterLrAllgather) => {
            // MPICH: chunks of ceil(n/p) bytes, chunk j at relative rank j; the binomial
            // scatter gives each rank its chunk, the allgather the others.
            let (n, root) = (*bytes, *root);
            let ss = (n / p as f64).ceil();
            let chunk = |j: usize| (n - j as f64 * ss).clamp(0.0, ss);
            let chunks = |from: usize, count: usize| (n - from as f64 * ss).clamp(0.0, count as f64 * ss);
            let rel = (r + p - root) % p;
            let world = |x: usize| (x + root) % p;
            // The scatter (SimGrid's scatter_for_bcast) sends nothing to a rank whose chunks all lie
            // past the end of the buffer, and that rank posts no receive.
            let scatter = |k| match binomial_down(r, p, root, k, true, chunks)? {
                Round::Send { bytes, .. } if bytes <= 0.0 => Some(Round::Skip),
                Round::Recv(_) if chunk(rel) <= 0.0 => Some(Round::Skip),
                other => Some(other),
            };
            then(k, log2_ceil(p) + 1, scatter, |j| {
                if algo == Algo::ScatterRdbAllgather {
                    // MPICH's recursive doubling on relative ranks, with its fix for a count that
                    // is not a power of two (SimGrid's bcast-scatter-rdb-allgather.cpp).
                    Some(match reduce_scatter::doubling(rel, p, j, chunks)?.0 {
                        Round::SendRecv { dst, bytes, .. } => Round::SendRecv { dst: world(dst), src: world(dst), bytes },
                        Round::Send { to, bytes } => Round::Send { to: world(to), bytes },
                        Round::Recv(from) => Round::Recv(world(from)),
                        other => other,
                    })
                } else {
                    (j + 1 < p).then(|| Round::SendRecv { dst: world((rel + 1) % p), src: world((rel + p - 1) % p), bytes: chunk((rel + p - j) % p) })
                }
            })
        }
        (OpSpec::Bcast { root, bytes, .. }, Algo::BinaryTree) if *bytes <= ompi_colls::NTSB_SEGMENT => binary_tree_bcast(r, p, *root, k, *bytes),
        (OpSpec::Bcast { root, bytes, comm }, Algo::BinaryTree) => {
            // Pipelined in 8192-byte segments; the remainder by the bcast in use for its size.
            let (len, rest) = ompi_colls::ntsb_len(r, p, *root, *bytes);
            let rest_op = OpSpec::Bcast { root: *root, bytes: rest, comm: *comm };
            then(k, len, |k| ompi_colls::ntsb(r, p, *root, k, *bytes), |j| if rest > 0.0 { round_in(&rest_op, coll.pick(&rest_op, p), r, p, j as u32, coll) } else { None })
        }
        (OpSpec::Bcast { root, bytes, comm }, Algo::Ntsl) => {
            // SimGrid's NTSL calls the bcast in use (itself when chosen by name, else the
            // selector's pick) for the remainder.
            let (len, rest) = ompi_colls::ntsl_len(r, p, *root, *bytes);
            let rest_op = OpSpec::Bcast { root: *root, bytes: rest, comm: *comm };
            let rest_algo = coll.pick(&rest_op, p);
            then(k, len, |k| ompi_colls::ntsl(r, p, *root, k, *bytes), |j| if rest > 0.0 { round_in(&rest_op, rest_algo, r, p, j as u32, coll) } else { None })
        }
        (OpSpec::Bcast { root, bytes, .. }, Algo::MvapichKnomial) => smp::knomial(r, p, *root, k, *bytes, coll.smp),
        (OpSpec::Bcast { root, bytes, .. }, Algo::OmpiSplitBintree) => ompi_colls::split_bintree(r, p, *root, k, *bytes),
        (OpSpec::Bcast { root, bytes, .. }, Algo::OmpiPipeline) => {
            let tree = ompi_colls::chain(1, p, *root, r);
            ompi_colls::bcast_generic(&tree, r == *root, k, *bytes, ompi_colls::bcast_pipeline_segsize(p, *bytes))
        }
        (OpSpec::Bcast { root, bytes, .. }, _) => binomial_down(r, p, *root, k, true, |_, _| *bytes),
        (OpSpec::Scatter { root, bytes, .. }, Algo::BasicLinear) => linear(r, p, *root, k, false, false, |_| *bytes),
        (OpSpec::Scatter { root, .. }, Algo::LinearNb) if r == *root => fan_round(r, p, k, None, Some(Order::Ascending)),
        (OpSpec::Scatter { root, .. }, Algo::LinearNb) => (k == 0).then_some(Round::Recv(*root)),
        (OpSpec::Scatter { root, bytes, .. }, a) => binomial_down(r, p, *root, k, a != Algo::OmpiBinomial, |_, n| n as f64 * bytes),
        (OpSpec::Reduce { root, bytes, .. }, Algo::BasicLinear) => linear(r, p, *root, k, true, true, |_| *bytes),
        (OpSpec::Reduce { root, .. }, Algo::NbcLinear) if r == *root => fan_round(r, p, k, Some(Order::Ascending), None),
        (OpSpec::Reduce { root, bytes, .. }, Algo::NbcLinear) => nbc_send(k, *root, *bytes),
        (OpSpec::Reduce { root, bytes, .. }, Algo::OmpiBinomial) => {
            let tree = ompi_colls::in_order_bmtree(p, *root, r);
            ompi_colls::reduce_generic(&tree, r == *root, k, *bytes, ompi_colls::reduce_binomial_segsize(p, *bytes))
        }
        (OpSpec::Reduce { root, bytes, .. }, Algo::OmpiPipeline) => {
            let tree = ompi_colls::chain(1, p, *root, r);
            ompi_colls::reduce_generic(&tree, r == *root, k, *bytes, ompi_colls::reduce_pipeline_segsize(p, *bytes))
        }
        (OpSpec::Reduce { root, bytes, .. }, Algo::OmpiChain) => {
            let tree = ompi_colls::chain(p / 2, p, *root, r);
            ompi_colls::reduce_generic(&tree, r == *root, k, *bytes, 65536.0)
        }
        (OpSpec::Reduce { root, bytes, .. }, Algo::OmpiBinary) => {
            let tree = ompi_colls::kary_tree(2, p, *root, r);
            ompi_colls::reduce_generic(&tree, r == *root, k, *bytes, 32768.0)
        }
        (OpSpec::Reduce { root, bytes, .. }, Algo::OmpiInOrderBinary) => {
            // On the tree rooted at p − 1, which then hands the result to the root.
            let (io_root, n, root) = (p - 1, *bytes, *root);
            let tree = ompi_colls::in_order_bintree(p, r);
            let len = ompi_colls::reduce_generic_len(&tree, r == io_root, n, 0.0);
            then(k, len, |k| ompi_colls::reduce_generic(&tree, r == io_root, k, n, 0.0), |j| match j {
                0 if root != io_root && r == root => Some(Round::Recv(io_root)),
                0 if root != io_root && r == io_root => Some(Round::Send { to: root, bytes: n }),
                _ => None,
            })
        }
        (OpSpec::Reduce { root, bytes, .. }, _) => binomial_up(r, p, *root, k, |_| *bytes),
        (OpSpec::Gather { root, bytes, .. }, Algo::BasicLinear) => linear(r, p, *root, k, true, false, |_| *bytes),
        // colls::igather, colls::igatherv (smpi_nbc_impl.cpp:280-344).
        (OpSpec::Gather { root, .. } | OpSpec::Gatherv { root, .. }, Algo::NbcLinear) if r == *root => fan_round(r, p, k, Some(Order::Ascending), None),
        (OpSpec::Gather { root, bytes, .. }, Algo::NbcLinear) => nbc_send(k, *root, *bytes),
        (OpSpec::Gatherv { root, bytes, .. }, Algo::NbcLinear) => nbc_send(k, *root, bytes[r]),
        // colls::iscatterv (smpi_nbc_impl.cpp:345-378).
        (OpSpec::Scatterv { root, .. }, Algo::NbcLinear) if r == *root => fan_round(r, p, k, None, Some(Order::Ascending)),
        (OpSpec::Scatterv { root, .. }, Algo::NbcLinear) => (k == 0).then_some(Round::Recv(*root)),
        // colls::iallgather, colls::iallgatherv (smpi_nbc_impl.cpp:59-87, 123-150).
        // SMPI posts, for each other rank in rank order, the send then the receive: so do we
        // where send overheads make that order show (Collectives::interleave_nbc).
        (OpSpec::Allgather { .. } | OpSpec::Allgatherv { .. }, Algo::NbcLinear) => match fan_round(r, p, k, Some(Order::Ascending), Some(Order::Ascending)) {
            Some(Round::Fan(fan)) => Some(Round::Fan(Fan { interleave: coll.interleave_nbc, ..fan })),
            other => other,
        },
        (OpSpec::Alltoall { bytes, .. }, Algo::SmpiDefault) => round_in(op, smpi_default_alltoall(p, *bytes), r, p, k as u32, coll),
        (OpSpec::Gather { root, bytes, .. }, Algo::LinearSync) => gather_linear_sync(r, p, *root, k, *bytes),
        (OpSpec::Gather { root, bytes, .. }, _) => binomial_up(r, p, *root, k, |n| n as f64 * bytes),
        (OpSpec::Allreduce { bytes, .. }, Algo::RingSegmented) => match ompi_colls::RingSegmented::new(*bytes, p) {
            Some(ring) => ring.round(r, k),
            None => round_in(op, Algo::Lr, r, p, k as u32, coll),
        },
        // SimGrid's lr (`allreduce-lr.cpp`) runs redbcast below p bytes.
        (OpSpec::Allreduce { bytes, .. }, Algo::Lr) if *bytes < p as f64 => round_in(op, Algo::Redbcast, r, p, k as u32, coll),
        (OpSpec::Allreduce { bytes, comm }, Algo::Lr) => {
            // Ring reduce-scatter then ring allgather, ⌊n/p⌋ per step; the remainder (n mod p)
            // by the allreduce in use for its size.
            let (share, rest) = lr_split(*bytes, p);
            let rest_op = OpSpec::Allreduce { bytes: rest, comm: *comm };
            then(k, 2 * p - 2, |_| Some(Round::SendRecv { dst: (r + 1) % p, src: (r + p - 1) % p, bytes: share }), |j| {
                (rest > 0.0).then(|| round_in(&rest_op, coll.pick(&rest_op, p), r, p, j as u32, coll)).flatten()
            })
        }
        (OpSpec::Allreduce { .. }, Algo::Redbcast | Algo::SmpiDefault) => {
            let (reduce, reduce_algo, bcast, bcast_algo) = redbcast_parts(op, algo, p, coll);
            let len = reduce_len(&reduce, reduce_algo, r, p);
            then(k, len, |k| round_in(&reduce, reduce_algo, r, p, k as u32, coll), |j| round_in(&bcast, bcast_algo, r, p, j as u32, coll))
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
        // SimGrid's scan and exscan (smpi_coll.cpp): receives from every rank below and sends
        // to every rank above, all posted at once, then all awaited.
        (OpSpec::Scan { .. } | OpSpec::Exscan { .. }, Algo::Linear) => fan_round(r, p, k, Some(Order::Below), Some(Order::Above)),
        (OpSpec::Scan { bytes, .. } | OpSpec::Exscan { bytes, .. }, _) => recursive_doubling(r, p, k, |_| *bytes),
        (OpSpec::Alltoall { bytes, .. }, Algo::Bruck) => {
            // Round k carries the blocks whose index has bit k set.
            let count = |k: usize| (0..p).filter(|j| j >> k & 1 == 1).count() as f64;
            bruck(r, p, k, true, |k| count(k) * bytes)
        }
        // Open MPI's: receives from r + 1 upwards, sends to r − 1 downwards (alltoall), both
        // in rank order (alltoallv).
        (OpSpec::Alltoall { .. }, Algo::BasicLinear) => fan_round(r, p, k, Some(Order::Upward), Some(Order::Downward)),
        (OpSpec::Alltoallv { .. }, Algo::BasicLinear) => fan_round(r, p, k, Some(Order::Ascending), Some(Order::Ascending)),
        (OpSpec::Alltoall { bytes, .. }, a) => pairwise(r, p, k, xor_of(a), |_| *bytes),
        (OpSpec::Alltoallv { .. }, Algo::Bruck) => scattered(r, p, k),
        // SimGrid's alltoallv ring is its pairwise exchange: XOR partners for a power of two.
        (OpSpec::Alltoallv { bytes, .. }, a) => pairwise(r, p, k, (a == Algo::Pair).then_some(true), |dst| bytes[dst]),
        (OpSpec::ReduceScatter { bytes, .. }, Algo::RecursiveHalving) => recursive_halving(r, p, k, bytes),
        (OpSpec::ReduceScatter { bytes, .. }, Algo::SmpiDefault) => match smpi_default_reduce_scatter(bytes) {
            // The reduce of the whole buffer to rank 0 (colls::ireduce, smpi_nbc_impl.cpp:380-431:
            // every other rank isends it and waits, rank 0 posts all its receives and waits), then
            // the scatterv from rank 0 (colls::iscatterv, :345-378).
            Algo::SmpiDefault => match (r, k) {
                (0, 0) => fan_round(0, p, 0, Some(Order::Ascending), None),
                (0, 1) => fan_round(0, p, 0, None, Some(Order::Ascending)),
                (1.., 0 | 1) => nbc_send(k, 0, bytes.iter().sum()),
                (1.., 2) => Some(Round::Recv(0)),
                _ => None,
            },
            inner => round_in(op, inner, r, p, k as u32, coll),
        },
        (OpSpec::ReduceScatter { bytes, .. }, Algo::MpichRdb) => reduce_scatter::mpich_rdb(r, p, k, bytes).map(|(rd, _)| rd),
        (OpSpec::ReduceScatter { bytes, .. }, Algo::Butterfly) => reduce_scatter::butterfly(r, p, k, bytes).map(|(rd, _)| rd),
        // Round k passes on block r − 1 − k.
        (OpSpec::ReduceScatter { bytes, .. }, Algo::Ring) => ompi_ring_reduce_scatter(r, p, k, bytes),
        // MPICH's pairwise reduce-scatter pairs r + i with r − i for every count (no XOR
        // partners for a power of two, unlike its alltoall).
        (OpSpec::ReduceScatter { bytes, .. }, _) => pairwise(r, p, k, Some(false), |dst| bytes[dst]),
        (OpSpec::Allgather { bytes, .. }, Algo::Pair) => pairwise(r, p, k, Some(true), |_| *bytes),
        (OpSpec::Allgather { bytes, .. }, Algo::DirectRing) => pairwise(r, p, k, Some(false), |_| *bytes),
        // SimGrid's neighbour exchange runs its direct ring on an odd count.
        (OpSpec::Allgather { bytes, .. }, Algo::NeighborExchange) if p % 2 == 1 => pairwise(r, p, k, Some(false), |_| *bytes),
        (OpSpec::Allgatherv { bytes, .. }, Algo::NeighborExchange | Algo::DirectRing) if p % 2 == 1 || algo == Algo::DirectRing => {
            pairwise(r, p, k, Some(false), |_| bytes[r])
        }
        (OpSpec::Allgatherv { bytes, .. }, Algo::Pair) => pairwise(r, p, k, Some(true), |_| bytes[r]),
        (OpSpec::Allgather { bytes, .. }, Algo::NeighborExchange) => neighbor_exchange(r, p, k, |_| *bytes),
        (OpSpec::Allgatherv { bytes, .. }, Algo::NeighborExchange) => neighbor_exchange(r, p, k, |b| bytes[b]),
        (OpSpec::Allgatherv { bytes, .. }, Algo::Bruck) => {
            // Round k sends the blocks of ranks r, r + 1, … (2^k of them, the p − 2^k left at the end).
            bruck(r, p, k, false, |k| (0..(1usize << k).min(p - (1usize << k))).map(|i| bytes[(r + i) % p]).sum())
        }
        (OpSpec::Allgatherv { .. }, Algo::Gb) => {
            let (bcast, bcast_algo) = gb_bcast(op, p, coll);
            then(k, 1, |_| if r == 0 { fan_round(0, p, 0, Some(Order::Ascending), None) } else { Some(Round::Send { to: 0, bytes: op_block(op, r) }) }, |j| {
                round_in(&bcast, bcast_algo, r, p, j as u32, coll)
            })
        }
        // SimGrid's allgather rdb: MPICH's, with its fix for a count that is not a power of two.
        (OpSpec::Allgather { bytes, .. }, Algo::Rdb) => reduce_scatter::allgather_rdb(r, p, k, *bytes),
        (OpSpec::Allgather { bytes, .. }, Algo::Bruck) => {
            // Doubling counts while 2^k ≤ p/2, then the p − 2^k blocks left.
            bruck(r, p, k, false, |k| ((1usize << k).min(p - (1usize << k))) as f64 * bytes)
        }
        (OpSpec::Allgather { bytes, .. }, _) => ring(r, p, k, |_| *bytes),
        (OpSpec::Allgatherv { bytes, .. }, _) => ring(r, p, k, |owner| bytes[owner]),
        (OpSpec::Gatherv { root, bytes, .. }, _) => linear(r, p, *root, k, true, false, |i| bytes[i]),
        (OpSpec::Scatterv { root, bytes, .. }, _) => linear(r, p, *root, k, false, false, |i| bytes[i]),
        _ => None,
    }
}

/// Bytes rank `r` combines after round `k` (`rd`) of reduction `op`: what it received in a
/// reduce-scatter or reduce phase; 0 in copy phases (allgathers, bcasts, the unfold).
pub(crate) fn reduced_bytes(op: &OpSpec, algo: Algo, r: usize, p: usize, k: u32, rd: Round, coll: &Collectives) -> f64 {
    let k = k as usize;
    let steps = floor_pow2(p.max(1)).trailing_zeros() as usize;
    match (op, algo) {
        (OpSpec::ReduceScatter { bytes, .. }, Algo::SmpiDefault) => {
            return match smpi_default_reduce_scatter(bytes) {
                // Rank 0 combines what every other rank sent (round 0); the scatterv only copies.
                Algo::SmpiDefault => if r == 0 && k == 0 { (p - 1) as f64 * bytes.iter().sum::<f64>() } else { 0.0 },
                inner => reduced_bytes(op, inner, r, p, k as u32, rd, coll),
            };
        }
        (OpSpec::ReduceScatter { bytes, .. }, Algo::MpichRdb) => return reduce_scatter::mpich_rdb(r, p, k, bytes).map_or(0.0, |(_, c)| c),
        (OpSpec::ReduceScatter { bytes, .. }, Algo::Butterfly) => return reduce_scatter::butterfly(r, p, k, bytes).map_or(0.0, |(_, c)| c),
        _ => {}
    }
    let received = match rd {
        // Linear scan: after the waitall, the r blocks from below are combined (exscan copies
        // the first).
        Round::Fan(fan) => {
            return match op {
                OpSpec::Scan { bytes, .. } => fan.r as f64 * bytes,
                OpSpec::Exscan { bytes, .. } => fan.r.saturating_sub(1) as f64 * bytes,
                // reduce__default's root combines what every other rank sent.
                OpSpec::Reduce { bytes, .. } => fan.recvs() as f64 * bytes,
                OpSpec::Allreduce { .. } if matches!(algo, Algo::Redbcast | Algo::SmpiDefault) => redbcast_reduced(op, algo, r, p, k, rd, coll),
                _ => 0.0,
            }
        }
        Round::Recv(_) => None,
        Round::SendRecv { bytes, .. } => Some(bytes),
        _ if matches!((op, algo), (OpSpec::Allreduce { .. }, Algo::Redbcast | Algo::SmpiDefault)) => return redbcast_reduced(op, algo, r, p, k, rd, coll),
        // Open MPI's segmented algorithms say what each wait combines.
        Round::Await { combine, .. } => return combine,
        Round::Send { .. } | Round::Skip | Round::SendSlot { .. } | Round::RecvSlot { .. } => return 0.0,
    };
    match (op, algo) {
        // The in-order binary tree's last receive, at the root, is the result.
        (OpSpec::Reduce { .. }, Algo::OmpiInOrderBinary) => 0.0,
        (OpSpec::Reduce { bytes, .. }, _) => *bytes,
        (OpSpec::Allreduce { bytes, .. }, Algo::RingSegmented) if ompi_colls::RingSegmented::new(*bytes, p).is_none() => {
            reduced_bytes(op, Algo::Lr, r, p, k as u32, rd, coll)
        }
        (OpSpec::Allreduce { bytes, .. }, Algo::Lr) if *bytes < p as f64 => reduced_bytes(op, Algo::Redbcast, r, p, k as u32, rd, coll),
        (OpSpec::Allreduce { bytes, comm }, Algo::Lr) => {
            let (share, rest) = lr_split(*bytes, p);
            let rest_op = OpSpec::Allreduce { bytes: rest, comm: *comm };
            match k {
                k if k + 1 < p => share,
                k if k + 2 < 2 * p => 0.0,
                k if rest > 0.0 => reduced_bytes(&rest_op, coll.pick(&rest_op, p), r, p, (k + 2 - 2 * p) as u32, rd, coll),
                _ => 0.0,
            }
        }
        (OpSpec::Allreduce { .. }, Algo::Redbcast | Algo::SmpiDefault) => redbcast_reduced(op, algo, r, p, k, rd, coll),
        // The segmented ring's waits say what they combine; its allgather only copies.
        (OpSpec::Allreduce { .. }, Algo::RingSegmented) => 0.0,
        // The fold (round 0) combines the whole buffer, then recursive halving its share;
        // the doubling back and the unfold only copy.
        (OpSpec::Allreduce { bytes, .. }, Algo::RabRdb) => match k {
            0 => *bytes,
            k if k <= steps => received.unwrap_or(0.0),
            _ => 0.0,
        },
        (OpSpec::Allreduce { bytes, .. }, _) => if k <= steps { *bytes } else { 0.0 },
        (OpSpec::Scan { .. } | OpSpec::Exscan { .. }, _) => received.unwrap_or(0.0),
        (OpSpec::ReduceScatter { bytes, .. }, Algo::RecursiveHalving) => match k {
            0 => bytes.iter().sum(),
            k if k <= steps => halving_step(r, p, k - 1, bytes).map_or(0.0, |(_, _, kept)| kept),
            _ => 0.0,
        },
        // Round k brings block r − 2 − k from rank − 1.
        (OpSpec::ReduceScatter { bytes, .. }, _) => bytes[r],
        _ => 0.0,
    }
}

/// Bytes rank `r` combines after round `k` (`rd`) of a redbcast allreduce: its reduce's, none
/// in its bcast.
fn redbcast_reduced(op: &OpSpec, algo: Algo, r: usize, p: usize, k: usize, rd: Round, coll: &Collectives) -> f64 {
    let (reduce, reduce_algo, _, _) = redbcast_parts(op, algo, p, coll);
    if k < reduce_len(&reduce, reduce_algo, r, p) {
        reduced_bytes(&reduce, reduce_algo, r, p, k as u32, rd, coll)
    } else {
        0.0
    }
}

/// What SMPI's `reduce_scatter__default` runs for blocks `bytes`: itself (the reduce to rank 0
/// and the scatterv) when they all have one size, else SimGrid's `reduce_scatter__mpich` for a
/// commutative operation: `pairwise` (its `mpich_pair`) above 524288 elements in all, else
/// `mpich_rdb` (sizes are counts of MPI_BYTE, as the TI export writes them).
fn smpi_default_reduce_scatter(bytes: &[f64]) -> Algo {
    if bytes.iter().all(|&b| b == bytes[0]) {
        Algo::SmpiDefault
    } else if bytes.iter().sum::<f64>() > 524288.0 {
        Algo::Pairwise
    } else {
        Algo::MpichRdb
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

    #[test]
    fn the_schema_lists_exactly_what_is_accepted() {
        let schema = json_schema();
        let props = schema["properties"].as_object().unwrap();
        for (collective, entry) in props {
            for name in entry["enum"].as_array().unwrap() {
                let spec = format!("{collective}={}", name.as_str().unwrap());
                let spec = if collective == "preset" { name.as_str().unwrap().to_string() } else { spec };
                assert!(Collectives::parse(&spec).is_ok(), "{spec} is listed but refused");
            }
        }
        assert!(Collectives::parse("bcast=no_such_algorithm").is_err());
        // Every extra spelling is some collective's.
        for (_, s, _) in SPELLINGS {
            assert!(ALGORITHMS.iter().any(|(c, _)| parse_algo(c, s).is_some()), "{s} is no collective's spelling");
        }
        assert_eq!(props.len(), ALGORITHMS.len() + 1);
    }
    use crate::mpi::trace::{Step, Trace, TraceSpec};

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

    /// An allgatherv of blocks 1, 2, …, n.
    fn agv_ops(n: usize) -> OpSpec {
        OpSpec::Allgatherv { bytes: (1..=n).map(|b| b as f64).collect(), comm: 0 }
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
        // 1 byte on 3: chunks of 1 byte, only rank 0's holds data, so the scatter sends nothing;
        // the doubling trades with 1, then 2 (empty messages back), then the fix passes what 0
        // received from 2 (nothing) on to 1.
        let (sent, _) = messages(bcast(1.0), 3, &Collectives::parse("bcast=scatter_rdb_allgather").unwrap());
        assert_eq!(sent, [(0, 1, 0.0), (0, 1, 1.0), (0, 2, 1.0), (1, 0, 0.0), (2, 0, 0.0)]);
        // On 6, with MPICH's fix for a count that is not a power of two: every send has its receive.
        let (sent, got) = messages(bcast(600.0), 6, &Collectives::parse("bcast=scatter_rdb_allgather").unwrap());
        assert_eq!(sent.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(), got);
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
        // Reduce-scatter of blocks 1, 2, 3, 4: the ring passes every block but its own (3 × 10);
        // recursive halving sends the far half (7, 7, 3, 3), then the partner's block (2, 1, 4, 3).
        let reduce_scatter = OpSpec::ReduceScatter { bytes: vec![1.0, 2.0, 3.0, 4.0], comm: 0 };
        assert_eq!(total(reduce_scatter.clone(), 4, "reduce_scatter=ompi_ring"), 30.0);
        assert_eq!(total(reduce_scatter, 4, "reduce_scatter=ompi_basic_recursivehalving"), 20.0 + 10.0);
        // On 5 (blocks 1..=5): the fold (rank 0's 15 to rank 1), the core as on 4 with blocks
        // 3 (ranks 0-1), 3, 4, 5: 9 + 9 + 6 + 6 = 30, then 3 + 3 + 5 + 4 = 15, then rank 1 returns 1.
        let reduce_scatter = OpSpec::ReduceScatter { bytes: vec![1.0, 2.0, 3.0, 4.0, 5.0], comm: 0 };
        assert_eq!(total(reduce_scatter, 5, "reduce_scatter=ompi_basic_recursivehalving"), 15.0 + 30.0 + 15.0 + 1.0);
        // MPICH's recursive doubling on 4 (blocks 1..=4, 10 in all): every block but its own at
        // distance 1 (9 + 8 + 7 + 6), then every block outside its pair at distance 2 (7, 7, 3, 3).
        let blocks = |n: usize| OpSpec::ReduceScatter { bytes: (1..=n).map(|b| b as f64).collect(), comm: 0 };
        assert_eq!(total(blocks(4), 4, "reduce_scatter=mpich_rdb"), 30.0 + 20.0);
        // On 3 (blocks 1, 2, 3): 0 and 1 trade 5 and 4 (2 has no partner); 0 and 2 trade 3 and 3
        // at distance 2; then 0 passes what it received (blocks 2 and 3 … outside 2's group: 3) to 1.
        assert_eq!(total(blocks(3), 3, "reduce_scatter=mpich_rdb"), 5.0 + 4.0 + 3.0 + 3.0 + 3.0);
        // Open MPI's butterfly on 4: the upper or lower half (7 or 3) at distance 1, then one
        // block each (2, 4, 1, 3) at distance 2, then ranks 1 and 2 trade their mirrors' blocks (3, 2).
        assert_eq!(total(blocks(4), 4, "reduce_scatter=ompi_butterfly"), 20.0 + 10.0 + 5.0);
        // On 5: rank 0 sends its 15 to rank 1, which then stands for blocks 0 and 1 (3), and at
        // the end sends block 0 (1) back to rank 0.
        let (sent, _) = messages(blocks(5), 5, &Collectives::parse("reduce_scatter=ompi_butterfly").unwrap());
        assert_eq!(sent.iter().filter(|m| m.0 == 0).map(|m| (m.1, m.2)).collect::<Vec<_>>(), [(1, 15.0)]);
        assert!(sent.contains(&(1, 0, 1.0)));
        // linear_sync on 5: each of 4 ranks sends its 2000 bytes (1024 + 976) after an empty
        // message from the root; 100 bytes: all in the first segment, then an empty rest.
        assert_eq!(total(OpSpec::Gather { root: 2, bytes: 2000.0, comm: 0 }, 5, "gather=ompi_linear_sync"), 4.0 * 2000.0);
        let (sent, _) = messages(OpSpec::Gather { root: 0, bytes: 100.0, comm: 0 }, 3, &Collectives::parse("gather=ompi_linear_sync").unwrap());
        assert_eq!(sent, [(0, 1, 0.0), (0, 2, 0.0), (1, 0, 0.0), (1, 0, 100.0), (2, 0, 0.0), (2, 0, 100.0)]);
        // The neighbour exchange on an odd count is SimGrid's direct ring.
        let five = Collectives::parse("allgather=ompi_neighborexchange,allgatherv=ompi_neighborexchange").unwrap();
        let direct = Collectives::parse("allgather=direct_ring,allgatherv=direct_ring").unwrap();
        for op in [OpSpec::Allgather { bytes: 10.0, comm: 0 }, agv_ops(5)] {
            assert_eq!(messages(op.clone(), 5, &five), messages(op, 5, &direct));
        }
        assert_eq!(total(agv_ops(5), 5, "allgatherv=direct_ring"), 4.0 * 15.0);
        assert_eq!(total(agv_ops(4), 4, "allgatherv=pair"), 3.0 * 10.0);
        // Allgatherv: SimGrid's GB gathers to rank 0 (2 + 3 + 4) and bcasts the 10 bytes down the
        // binomial tree to 3 ranks; Open MPI's Bruck brings every rank the others' blocks.
        let agv = |n: usize| OpSpec::Allgatherv { bytes: (1..=n).map(|b| b as f64).collect(), comm: 0 };
        assert_eq!(total(agv(4), 4, "allgatherv=GB"), 9.0 + 30.0);
        for p in [2, 3, 4, 5, 6, 8] {
            let all = (p * (p + 1) / 2) as f64;
            assert_eq!(total(agv(p), p, "allgatherv=ompi_bruck"), (p - 1) as f64 * all, "{p}");
        }
        // GB's bcast is the one in use, and it is checked.
        let c = Collectives::parse("allgatherv=GB,bcast=ompi_split_bintree").unwrap();
        assert!(c.check(&agv(4), 4).unwrap_err().reason.contains("needs a segment"));
        assert_eq!(total(agv(4), 4, "allgatherv=GB,bcast=NTSL"), 9.0 + 30.0);
        // SMPI's default: blocks of one size, the whole buffer to rank 0 then each block back;
        // blocks of different sizes run MPICH's (mpich_rdb up to 524288 bytes in all, else pairwise).
        let even = OpSpec::ReduceScatter { bytes: vec![10.0; 5], comm: 0 };
        assert_eq!(total(even, 5, "reduce_scatter=default"), 4.0 * 50.0 + 4.0 * 10.0);
        assert_eq!(total(blocks(4), 4, "reduce_scatter=smpi_default"), total(blocks(4), 4, "reduce_scatter=mpich_rdb"));
        let big = OpSpec::ReduceScatter { bytes: vec![200000.0, 400000.0, 200000.0], comm: 0 };
        assert_eq!(total(big.clone(), 3, "reduce_scatter=smpi_default"), total(big, 3, "reduce_scatter=pairwise"));
        // Allgather: every rank receives p − 1 blocks, whatever the algorithm.
        for (p, spec) in [(6, "allgather=bruck"), (8, "allgather=rdb"), (7, "allgather=ring"), (5, "allgather=direct_ring"), (3, "allgather=rdb"), (6, "allgather=rdb"), (7, "allgather=rdb")] {
            assert_eq!(total(OpSpec::Allgather { bytes: 10.0, comm: 0 }, p, spec), (p * (p - 1)) as f64 * 10.0, "{spec}");
        }
    }

    #[test]
    fn alltoallv_ring_is_smpis_and_bruck_goes_four_ranks_at_a_time() {
        let op = |p: usize| OpSpec::Alltoallv { bytes: (0..p).map(|j| 10.0 * (j + 1) as f64).collect(), comm: 0 };
        // SimGrid's ring: XOR partners on a power of two (round k: k + 1), rank ± i otherwise.
        let sr = |p: usize, algo: Algo, r: usize, k: u32| match round(&op(p), algo, r, p, k, &Collectives::default()) {
            Some(Round::SendRecv { dst, src, bytes }) => (dst, src, bytes),
            other => panic!("{other:?}"),
        };
        assert_eq!(sr(4, Algo::Ring, 1, 1), (3, 3, 40.0));
        assert_eq!(sr(6, Algo::Ring, 1, 1), (3, 5, 40.0));
        assert_eq!((sr(8, Algo::Ring, 5, 2), sr(8, Algo::Pairwise, 5, 2)), ((6, 6, 70.0), (6, 6, 70.0)));
        assert!(round(&op(4), Algo::Ring, 0, 4, 3, &Collectives::default()).is_none());
        // Bruck on 6: receives from r + 1, r + 2, r + 3, sends to r − 1, r − 2, r − 3; then r + 4, r + 5.
        let fan = |r: usize, k: u32| match round(&op(6), Algo::Bruck, r, 6, k, &Collectives::default()) {
            Some(Round::Fan(f)) => (0..f.posts()).map(|i| f.post(&op(6), i)).map(|x| format!("{x:?}")).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(fan(2, 0), ["Recv(3)", "Recv(4)", "Recv(5)", "Send { to: 1, bytes: 20.0 }", "Send { to: 0, bytes: 10.0 }", "Send { to: 5, bytes: 60.0 }"]);
        assert_eq!(fan(2, 1), ["Recv(0)", "Recv(1)", "Send { to: 4, bytes: 50.0 }", "Send { to: 3, bytes: 40.0 }"]);
        assert!(round(&op(6), Algo::Bruck, 2, 6, 2, &Collectives::default()).is_none());
        for p in [2, 4, 5, 8, 9, 12] {
            let every: f64 = (0..p).map(|j| 10.0 * (j + 1) as f64).sum();
            assert_eq!(total(op(p), p, "alltoallv=bruck"), (p as f64) * every - (0..p).map(|r| 10.0 * (r + 1) as f64).sum::<f64>(), "{p}");
        }
        // SimGrid's alltoallv `mpich` is its bruck, for the spelling and the preset.
        assert_eq!(Collectives::parse("alltoallv=mpich").unwrap().pick(&op(8), 8), Algo::Bruck);
        assert_eq!(Collectives::parse("mpich").unwrap().pick(&op(8), 8), Algo::Bruck);
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
    fn the_ompi_preset_picks_by_size_and_ranks() {
        // Expected choices read off SimGrid 3.32's smpi_openmpi_selector.cpp at each threshold.
        let c = Collectives::parse("ompi").unwrap();
        let pick = |op: OpSpec, p: usize| c.pick(&op, p);
        let allreduce = |n: f64| OpSpec::Allreduce { bytes: n, comm: 0 };
        // p < 8: ring below 16 bytes, recursive doubling below 8192, Rabenseifner from 8192.
        assert_eq!(pick(allreduce(15.0), 5), Algo::Lr);
        assert_eq!(pick(allreduce(3.0), 2), Algo::Lr);
        assert_eq!(pick(allreduce(16.0), 5), Algo::Rdb);
        assert_eq!(pick(allreduce(8191.0), 5), Algo::Rdb);
        assert_eq!(pick(allreduce(8192.0), 5), Algo::RabRdb);
        // SimGrid's lr turns to redbcast below p elements (4 on 5 ranks), the segmented ring
        // (p 16-31, below 64 bytes) to lr; basic_linear and nonoverlapping run redbcast.
        assert_eq!(pick(allreduce(4.0), 5), Algo::Lr);
        assert_eq!(pick(allreduce(63.0), 16), Algo::RingSegmented);
        assert_eq!(pick(allreduce(2000.0), 300), Algo::Redbcast);
        assert_eq!(pick(allreduce(100000.0), 200), Algo::Redbcast);
        // The segmented ring, which runs lr below p MiB (and lr redbcast below p bytes).
        assert_eq!(pick(allreduce(32.0), 16), Algo::RingSegmented);
        let coll = Collectives::parse("ompi").unwrap();
        assert!(matches!(round(&allreduce(32.0), Algo::RingSegmented, 3, 16, 0, &coll), Some(Round::SendRecv { dst: 4, src: 2, bytes }) if bytes == 2.0));
        assert!(matches!(round(&allreduce(8.0), Algo::RingSegmented, 15, 16, 0, &coll), Some(Round::Send { .. }))); // a leaf of ompi_binary
        let alltoall = |n: f64| OpSpec::Alltoall { bytes: n, comm: 0 };
        assert_eq!(pick(alltoall(100.0), 4), Algo::BasicLinear);
        assert_eq!(pick(alltoall(524288.0), 4), Algo::Pair);
        assert_eq!(pick(alltoall(524288.0), 6), Algo::Pairwise); // pair needs a power of two
        assert_eq!(pick(alltoall(1048576.0), 4), Algo::BasicLinear);
        assert_eq!(pick(alltoall(511.0), 16), Algo::Bruck);
        assert_eq!(pick(alltoall(512.0), 16), Algo::BasicLinear);
        assert_eq!(pick(OpSpec::Alltoallv { bytes: vec![1.0; 3], comm: 0 }, 3), Algo::Pairwise);
        assert_eq!(pick(OpSpec::Alltoallv { bytes: vec![1.0; 4], comm: 0 }, 4), Algo::BasicLinear);
        assert_eq!(pick(OpSpec::Alltoallv { bytes: vec![1.0; 64], comm: 0 }, 64), Algo::Pair);
        let barrier = OpSpec::Barrier { comm: 0 };
        let barriers: Vec<Algo> = [3, 4, 7, 8, 63, 64, 256, 512].iter().map(|&p| pick(barrier.clone(), p)).collect();
        use Algo::{BasicLinear as L, Dissemination as B, RecursiveDoubling as R, Tree as T};
        assert_eq!(barriers, [R, L, L, R, R, B, T, B]);
        let bcast = |n: f64| OpSpec::Bcast { root: 0, bytes: n, comm: 0 };
        assert_eq!(pick(bcast(63.0), 5), Algo::BinaryTree);
        assert_eq!(pick(bcast(64.0), 5), Algo::Binomial);
        assert_eq!(pick(bcast(8192.0), 8), Algo::BinaryTree);
        assert_eq!(pick(bcast(8193.0), 8), Algo::BinaryTree); // NTSB pipelined
        assert_eq!(pick(bcast(2048.0), 5), Algo::Binomial);
        // basic_linear runs SimGrid's NTSL; chain and pipeline its ompi_pipeline.
        assert_eq!(pick(bcast(163840.0), 8), Algo::Ntsl);
        assert_eq!(pick(bcast(8192.0), 5), Algo::Ntsl);
        assert_eq!(pick(bcast(200000.0), 3), Algo::OmpiPipeline);
        assert_eq!(pick(bcast(20.0), 3), Algo::OmpiPipeline);
        assert_eq!(pick(bcast(20000.0), 300), Algo::OmpiSplitBintree);
        assert_eq!(pick(bcast(1048576.0), 16), Algo::ScatterRdbAllgather);
        assert_eq!(pick(bcast(1048576.0), 20), Algo::ScatterRdbAllgather); // SimGrid's, on any count
        let reduce = |n: f64| OpSpec::Reduce { root: 0, bytes: n, comm: 0 };
        assert_eq!(pick(reduce(4095.0), 5), Algo::OmpiBinary);
        assert_eq!(pick(reduce(65535.0), 5), Algo::OmpiChain);
        assert_eq!(pick(reduce(300000.0), 3), Algo::OmpiPipeline);
        assert_eq!(pick(reduce(600000.0), 3), Algo::OmpiChain);
        assert_eq!(pick(reduce(20.0), 5000), Algo::OmpiInOrderBinary);
        assert_eq!(pick(reduce(262143.0), 5), Algo::OmpiBinomial);
        assert_eq!(pick(reduce(262144.0), 5), Algo::BasicLinear);
        assert_eq!(pick(reduce(524288.0), 5), Algo::OmpiBinomial);
        // Open MPI's binomial, segmented or not (1 KiB segments at 8192 bytes on 16 ranks).
        assert_eq!(pick(reduce(8192.0), 16), Algo::OmpiBinomial);
        assert_eq!(pick(reduce(100000.0), 16), Algo::OmpiBinomial);
        assert_eq!(pick(reduce(4.0), 2), Algo::BasicLinear); // rabenseifner: basic_linear in SimGrid
        let gather = |n: f64| OpSpec::Gather { root: 0, bytes: n, comm: 0 };
        let gathers: Vec<Algo> = [1023.0, 1024.0, 8192.0, 32768.0].iter().map(|&n| pick(gather(n), 5)).collect();
        assert_eq!(gathers, [Algo::Binomial, L, Algo::Binomial, L]);
        assert_eq!((pick(gather(262143.0), 5), pick(gather(262144.0), 5)), (L, Algo::LinearSync));
        assert_eq!((pick(gather(1.0), 3), pick(gather(131072.0), 3)), (Algo::LinearSync, Algo::LinearSync));
        let scatter = |n: f64| OpSpec::Scatter { root: 0, bytes: n, comm: 0 };
        let scatters: Vec<Algo> = [2047.0, 2048.0, 4096.0, 8192.0, 32768.0, 1048576.0].iter().map(|&n| pick(scatter(n), 5)).collect();
        assert_eq!(scatters, [Algo::OmpiBinomial, L, Algo::OmpiBinomial, L, Algo::LinearNb, L]);
        let allgather = |n: f64| OpSpec::Allgather { bytes: n, comm: 0 };
        assert_eq!(pick(allgather(100.0), 2), Algo::Pair);
        assert_eq!(pick(allgather(100.0), 8), Algo::Rdb);
        assert_eq!(pick(allgather(100.0), 6), Algo::Rdb); // SimGrid's, on any count
        assert_eq!(pick(allgather(100.0), 600), Algo::Bruck);
        let allgatherv = |each: f64, p: usize| OpSpec::Allgatherv { bytes: vec![each; p], comm: 0 };
        assert_eq!(pick(allgatherv(4096.0, 5), 5), Algo::Ring);
        assert_eq!(pick(allgatherv(8191.0, 5), 5), Algo::Ring);
        assert_eq!(pick(allgatherv(256.0, 4), 4), Algo::NeighborExchange);
        assert_eq!(pick(allgatherv(256.0, 5), 5), Algo::NeighborExchange); // the direct ring on an odd count
        assert_eq!(pick(allgatherv(3000.0, 2), 2), Algo::Pair); // two_proc
        assert_eq!(pick(allgatherv(255.0, 5), 5), Algo::Gb);
        assert_eq!(pick(allgatherv(1023.0, 8), 8), Algo::Gb);
        assert_eq!(pick(allgatherv(1024.0, 8), 8), Algo::Bruck);
        assert_eq!(pick(allgather(1023.0), 32), Algo::Rdb);
        assert_eq!(pick(allgather(1024.0), 32), Algo::NeighborExchange);
        assert_eq!(pick(allgather(65536.0), 32), Algo::DirectRing);
        let reduce_scatter = |total: f64| OpSpec::ReduceScatter { bytes: vec![total / 5.0; 5], comm: 0 };
        assert_eq!(pick(reduce_scatter(5.0), 5), Algo::SmpiDefault); // non-overlapping: SimGrid's default
        assert_eq!(pick(OpSpec::ReduceScatter { bytes: vec![30000.0; 3], comm: 0 }, 3), Algo::Butterfly);
        assert_eq!(pick(OpSpec::ReduceScatter { bytes: vec![50000.0; 3], comm: 0 }, 3), Algo::Ring);
        assert_eq!(pick(reduce_scatter(10.0), 5), Algo::RecursiveHalving);
        assert_eq!(pick(reduce_scatter(262140.0), 5), Algo::RecursiveHalving);
        assert_eq!(pick(reduce_scatter(262145.0), 5), Algo::Ring);
        // A fixed choice wins over the preset; a later preset replaces an earlier one.
        let c = Collectives::parse("ompi,barrier=ompi_bruck").unwrap();
        assert_eq!(c.pick(&barrier, 5), Algo::Dissemination);
        assert_eq!(Collectives::parse("ompi,mpich").unwrap().pick(&alltoall(100.0), 8), Algo::Bruck);
    }

    #[test]
    fn reduce_lengths_cover_every_round_of_each_reduce() {
        let coll = Collectives::default();
        for &algo in offered("reduce").unwrap() {
            for p in 2..=9 {
                for bytes in [10.0, 5000.0, 100000.0, 700000.0] {
                    for root in [0, p - 1] {
                        let op = OpSpec::Reduce { root, bytes, comm: 0 };
                        for r in 0..p {
                            let len = reduce_len(&op, algo, r, p);
                            let rounds = (0..).take_while(|&k| round(&op, algo, r, p, k, &coll).is_some()).count();
                            assert!(rounds <= len && round(&op, algo, r, p, len as u32, &coll).is_none(), "{algo:?} {p} {bytes} {root} {r}: {rounds} > {len}");
                            // Exact but for the binomial tree's ceil(log2 p).
                            assert!(algo == Algo::Binomial || rounds == len, "{algo:?} {p} {bytes} {root} {r}: {rounds} < {len}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn redbcast_runs_the_reduce_and_bcast_in_use() {
        let allreduce = OpSpec::Allreduce { bytes: 100.0, comm: 0 };
        // SMPI's defaults: every rank sends to the root, which posts all its receives at once;
        // then the binomial bcast.
        let coll = Collectives::parse("allreduce=redbcast").unwrap();
        let (_, reduce_algo, _, bcast_algo) = redbcast_parts(&allreduce, Algo::Redbcast, 5, &coll);
        assert_eq!((reduce_algo, bcast_algo), (Algo::NbcLinear, Algo::Binomial));
        assert!(matches!(round(&allreduce, Algo::Redbcast, 0, 5, 0, &coll), Some(Round::Fan(f)) if f.posts() == 4));
        assert!(matches!(round(&allreduce, Algo::Redbcast, 0, 5, 1, &coll), Some(Round::Send { to: 4, bytes }) if bytes == 100.0));
        // The others' one isend (SMPI's isend_init), then its wait.
        assert!(matches!(round(&allreduce, Algo::Redbcast, 3, 5, 0, &coll), Some(Round::SendSlot { to: 0, blocking: false, .. })));
        assert!(matches!(round(&allreduce, Algo::Redbcast, 3, 5, 1, &coll), Some(Round::Await { .. })));
        // Fixed choices and presets are the ones redbcast calls.
        let coll = Collectives::parse("allreduce=redbcast,reduce=ompi_basic_linear,bcast=NTSL").unwrap();
        assert_eq!(redbcast_parts(&allreduce, Algo::Redbcast, 5, &coll).1, Algo::BasicLinear);
        assert_eq!(redbcast_parts(&allreduce, Algo::Redbcast, 5, &coll).3, Algo::Ntsl);
        let coll = Collectives::parse("ompi").unwrap();
        let (_, reduce_algo, _, bcast_algo) = redbcast_parts(&OpSpec::Allreduce { bytes: 2000.0, comm: 0 }, Algo::Redbcast, 300, &coll);
        assert_eq!((reduce_algo, bcast_algo), (Algo::OmpiBinomial, Algo::MvapichKnomial));
        // A bcast the part cannot run is refused for the allreduce.
        let coll = Collectives::parse("allreduce=redbcast,bcast=ompi_split_bintree").unwrap();
        assert!(coll.check(&OpSpec::Allreduce { bytes: 1000.0, comm: 0 }, 4).unwrap_err().reason.contains("needs a segment"));
        // lr below p bytes is redbcast; its remainder goes by the allreduce in use (lr again:
        // redbcast), after 2(p − 1) ring steps of ⌊n/p⌋.
        let coll = Collectives::parse("allreduce=lr").unwrap();
        assert_eq!(total(OpSpec::Allreduce { bytes: 3.0, comm: 0 }, 5, "allreduce=lr"), 8.0 * 3.0);
        assert_eq!(total(OpSpec::Allreduce { bytes: 23.0, comm: 0 }, 5, "allreduce=lr"), 8.0 * 5.0 * 4.0 + 8.0 * 3.0);
        assert!(matches!(round(&OpSpec::Allreduce { bytes: 23.0, comm: 0 }, Algo::Lr, 0, 5, 8, &coll), Some(Round::Fan(_))));
    }

    /// Every message of `op` on `p` ranks as (from, to, bytes), sorted, under `spec`.
    fn sent(op: OpSpec, p: usize, spec: &str) -> Vec<(u32, u32, f64)> {
        let coll = Collectives::parse(spec).unwrap();
        let (sent, got) = messages(op, p, &coll);
        assert_eq!(sent.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(), got, "{spec} on {p} ranks: every send has its receive");
        sent
    }

    /// The posts of rank `r`'s round `k` of `op` with `algo` on `p` ranks, which must be a fan.
    fn fan_posts(op: &OpSpec, algo: Algo, r: usize, p: usize, k: u32, coll: &Collectives) -> Vec<String> {
        match round(op, algo, r, p, k, coll) {
            Some(Round::Fan(f)) => (0..f.posts()).map(|i| format!("{:?}", f.post(op, i))).collect(),
            other => panic!("{algo:?} rank {r} round {k}: {other:?}"),
        }
    }

    #[test]
    fn smpis_nonblocking_defaults_move_every_block_once_from_a_single_fan() {
        let coll = Collectives::default();
        for p in [2, 4, 5, 8] {
            let others = |r: u32| (0..p as u32).filter(move |&o| o != r);
            // gather (colls::igather): each other rank's block to the root, nothing else.
            let root = p / 2;
            let gather = OpSpec::Gather { root, bytes: 100.0, comm: 0 };
            let want: Vec<(u32, u32, f64)> = others(root as u32).map(|r| (r, root as u32, 100.0)).collect();
            assert_eq!(sent(gather.clone(), p, "gather=default"), want, "{p}");
            // gatherv (colls::igatherv): rank r's own block r + 1.
            let blocks: Vec<f64> = (1..=p).map(|b| b as f64).collect();
            let gatherv = OpSpec::Gatherv { root, bytes: blocks.clone(), comm: 0 };
            let want: Vec<(u32, u32, f64)> = others(root as u32).map(|r| (r, root as u32, blocks[r as usize])).collect();
            assert_eq!(sent(gatherv, p, "gatherv=nbc_linear"), want, "{p}");
            // scatterv (colls::iscatterv): block j from the root to rank j.
            let scatterv = OpSpec::Scatterv { root, bytes: blocks.clone(), comm: 0 };
            let want: Vec<(u32, u32, f64)> = others(root as u32).map(|j| (root as u32, j, blocks[j as usize])).collect();
            assert_eq!(sent(scatterv, p, "scatterv=default"), want, "{p}");
            // allgather(v) (colls::iallgather(v)): every rank's block to every other rank.
            let want: Vec<(u32, u32, f64)> = (0..p as u32).flat_map(|r| others(r).map(move |o| (r, o, 10.0))).collect();
            assert_eq!(sent(OpSpec::Allgather { bytes: 10.0, comm: 0 }, p, "allgather=default"), want, "{p}");
            let agv = OpSpec::Allgatherv { bytes: blocks.clone(), comm: 0 };
            let want: Vec<(u32, u32, f64)> = (0..p as u32).flat_map(|r| others(r).map(move |o| (r, o, (r + 1) as f64))).collect();
            assert_eq!(sent(agv, p, "allgatherv=default"), want, "{p}");
        }
        // The root's fan of receives in rank order; a lone send is an isend (smpi/ois, as SMPI's
        // isend_init) and its wait; allgather: one fan of receives then sends.
        let gather = OpSpec::Gather { root: 2, bytes: 100.0, comm: 0 };
        assert_eq!(fan_posts(&gather, Algo::NbcLinear, 2, 5, 0, &coll), ["Recv(0)", "Recv(1)", "Recv(3)", "Recv(4)"]);
        let isend = |op: &OpSpec, r: usize, p: usize| (0..3).map(|k| round(op, Algo::NbcLinear, r, p, k, &coll).map(|rd| format!("{rd:?}"))).collect::<Vec<_>>();
        let (post, wait) = (Some("SendSlot { to: 2, bytes: 100.0, slot: 0, blocking: false }".to_string()), Some("Await { first: 0, n: 1, combine: 0.0 }".to_string()));
        assert_eq!(isend(&gather, 4, 5), [post.clone(), wait.clone(), None]);
        assert_eq!(isend(&gather, 0, 5), [post, wait, None]);
        assert!(round(&gather, Algo::NbcLinear, 2, 5, 1, &coll).is_none());
        let agv = OpSpec::Allgatherv { bytes: vec![1.0, 2.0, 3.0], comm: 0 };
        assert_eq!(fan_posts(&agv, Algo::NbcLinear, 1, 3, 0, &coll), ["Recv(0)", "Recv(2)", "Send { to: 0, bytes: 2.0 }", "Send { to: 2, bytes: 2.0 }"]);
        // As SMPI posts them (iallgather, smpi_nbc_impl.cpp:78-84), where the order shows.
        let interleaved = Collectives { interleave_nbc: true, ..Collectives::default() };
        assert_eq!(fan_posts(&agv, Algo::NbcLinear, 1, 3, 0, &interleaved), ["Send { to: 0, bytes: 2.0 }", "Recv(0)", "Send { to: 2, bytes: 2.0 }", "Recv(2)"]);
        for p in [2, 5, 8] {
            let spec = "allgatherv=default";
            let mut c = Collectives::parse(spec).unwrap();
            c.interleave_nbc = true;
            assert_eq!(messages(OpSpec::Allgatherv { bytes: (1..=p).map(|b| b as f64).collect(), comm: 0 }, p, &c), messages(OpSpec::Allgatherv { bytes: (1..=p).map(|b| b as f64).collect(), comm: 0 }, p, &Collectives::parse(spec).unwrap()));
        }
        let scatterv = OpSpec::Scatterv { root: 0, bytes: vec![1.0, 2.0, 0.0], comm: 0 };
        assert_eq!(fan_posts(&scatterv, Algo::NbcLinear, 0, 3, 0, &coll), ["Send { to: 1, bytes: 2.0 }", "Send { to: 2, bytes: 0.0 }"]);
        // The reduce's lone send too; only the root combines, what it received.
        let reduce = OpSpec::Reduce { root: 1, bytes: 8.0, comm: 0 };
        assert!(matches!(round(&reduce, Algo::NbcLinear, 3, 4, 0, &coll), Some(Round::SendSlot { to: 1, bytes, blocking: false, .. }) if bytes == 8.0));
        let rd = |r, k| round(&reduce, Algo::NbcLinear, r, 4, k, &coll).unwrap();
        let combined = |r, k| reduced_bytes(&reduce, Algo::NbcLinear, r, 4, k, rd(r, k), &coll);
        assert_eq!((combined(3, 0), combined(3, 1), combined(1, 0)), (0.0, 0.0, 24.0));
        // reduce_scatter__default's reduce: the others' isend of the whole buffer, then a wait.
        let rs = OpSpec::ReduceScatter { bytes: vec![10.0; 4], comm: 0 };
        assert!(matches!(round(&rs, Algo::SmpiDefault, 2, 4, 0, &coll), Some(Round::SendSlot { to: 0, bytes, slot: 0, blocking: false }) if bytes == 40.0));
        assert!(matches!(round(&rs, Algo::SmpiDefault, 2, 4, 1, &coll), Some(Round::Await { first: 0, n: 1, .. })));
        // One rank: nothing.
        assert!(round(&OpSpec::Allgather { bytes: 1.0, comm: 0 }, Algo::NbcLinear, 0, 1, 0, &coll).is_none());
    }

    #[test]
    fn smpis_default_alltoall_is_open_mpis_decision_and_allreduce_ignores_the_reduce_and_bcast_chosen() {
        let alltoall = |n: f64| OpSpec::Alltoall { bytes: n, comm: 0 };
        // Open MPI's decision (smpi_openmpi_selector.cpp:212-364), as the ompi preset takes it;
        // `pair` where SimGrid's would abort (not a power of two) is MPICH's pairwise.
        for (p, n, algo) in [(4, 100.0, "basic_linear"), (5, 10000.0, "basic_linear"), (4, 524288.0, "pair"), (6, 524288.0, "pairwise"),
                             (8, 524288.0, "basic_linear"), (16, 3.0, "basic_linear"), (16, 511.0, "bruck"), (16, 512.0, "basic_linear")] {
            assert_eq!(smpi_default_alltoall(p, n).name(), algo, "{p} {n}");
            assert_eq!(Collectives::parse("ompi").unwrap().pick(&alltoall(n), p).name(), algo, "{p} {n}");
            assert_eq!(sent(alltoall(n), p, "alltoall=default"), sent(alltoall(n), p, &format!("alltoall={algo}")), "{p} {n}");
            assert!(Collectives::parse("alltoall=default").unwrap().check(&alltoall(n), p).is_ok());
        }
        // allreduce__default: every rank to 0 (one fan at 0), then the binomial tree from 0,
        // even with another reduce and bcast chosen (SimGrid calls reduce__default and
        // bcast__default directly); redbcast follows those choices.
        let allreduce = OpSpec::Allreduce { bytes: 100.0, comm: 0 };
        for p in [2, 4, 5, 8] {
            let plain = sent(allreduce.clone(), p, "allreduce=redbcast");
            assert_eq!(sent(allreduce.clone(), p, "allreduce=default,reduce=ompi_binomial,bcast=NTSL"), plain, "{p}");
            assert_eq!(plain.iter().map(|m| m.2).sum::<f64>(), 2.0 * (p - 1) as f64 * 100.0);
        }
        let coll = Collectives::parse("allreduce=default,reduce=ompi_basic_linear,bcast=NTSL").unwrap();
        assert_eq!(redbcast_parts(&allreduce, Algo::SmpiDefault, 5, &coll).1, Algo::NbcLinear);
        assert_eq!(redbcast_parts(&allreduce, Algo::SmpiDefault, 5, &coll).3, Algo::Binomial);
        assert_eq!(redbcast_parts(&allreduce, Algo::Redbcast, 5, &coll).1, Algo::BasicLinear);
        assert_eq!(fan_posts(&allreduce, Algo::SmpiDefault, 0, 5, 0, &coll), ["Recv(1)", "Recv(2)", "Recv(3)", "Recv(4)"]);
        assert!(matches!(round(&allreduce, Algo::SmpiDefault, 3, 5, 0, &coll), Some(Round::SendSlot { to: 0, bytes, blocking: false, .. }) if bytes == 100.0));
        assert!(matches!(round(&allreduce, Algo::SmpiDefault, 0, 5, 1, &coll), Some(Round::Send { to: 4, bytes }) if bytes == 100.0));
        // Rank 0 combines the 4 buffers it received, nobody else anything.
        let combined: Vec<f64> = (0..5)
            .map(|r| (0..).map_while(|k| round(&allreduce, Algo::SmpiDefault, r, 5, k, &coll).map(|rd| reduced_bytes(&allreduce, Algo::SmpiDefault, r, 5, k, rd, &coll))).sum::<f64>())
            .collect();
        assert_eq!(combined, [400.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn the_smpi_preset_is_smpis_default_selector() {
        let c = Collectives::parse("smpi").unwrap();
        let blocks = vec![1.0; 5];
        let cases = [
            (OpSpec::Barrier { comm: 0 }, Algo::BasicLinear),
            (OpSpec::Bcast { root: 0, bytes: 1e6, comm: 0 }, Algo::Binomial),
            (OpSpec::Reduce { root: 0, bytes: 1e6, comm: 0 }, Algo::NbcLinear),
            (OpSpec::Allreduce { bytes: 1e6, comm: 0 }, Algo::SmpiDefault),
            (OpSpec::Alltoall { bytes: 1e6, comm: 0 }, Algo::SmpiDefault),
            (OpSpec::Alltoallv { bytes: blocks.clone(), comm: 0 }, Algo::BasicLinear),
            (OpSpec::Gather { root: 0, bytes: 1e6, comm: 0 }, Algo::NbcLinear),
            (OpSpec::Gatherv { root: 0, bytes: blocks.clone(), comm: 0 }, Algo::NbcLinear),
            (OpSpec::Scatter { root: 0, bytes: 1e6, comm: 0 }, Algo::LinearNb),
            (OpSpec::Scatterv { root: 0, bytes: blocks.clone(), comm: 0 }, Algo::NbcLinear),
            (OpSpec::Allgather { bytes: 1e6, comm: 0 }, Algo::NbcLinear),
            (OpSpec::Allgatherv { bytes: blocks.clone(), comm: 0 }, Algo::NbcLinear),
            (OpSpec::ReduceScatter { bytes: blocks.clone(), comm: 0 }, Algo::SmpiDefault),
            (OpSpec::Scan { bytes: 1e6, comm: 0 }, Algo::Linear),
            (OpSpec::Exscan { bytes: 1e6, comm: 0 }, Algo::Linear),
        ];
        for (op, algo) in &cases {
            assert_eq!(c.pick(op, 5), *algo, "{}", op.name());
            // The same as each collective's `default` spelling.
            assert_eq!(Collectives::parse(&format!("{}=default", op.name())).unwrap().pick(op, 5), *algo, "{}", op.name());
        }
        // Every collective is covered, and a fixed choice still wins.
        assert_eq!(cases.len(), ALGORITHMS.len());
        assert_eq!(Collectives::parse("smpi,bcast=NTSL").unwrap().pick(&cases[1].0, 5), Algo::Ntsl);
        // Algorithms that call another collective get SMPI's default for it (where the `ompi`
        // preset gives Open MPI's): redbcast's reduce and bcast, GB's bcast.
        let allreduce = OpSpec::Allreduce { bytes: 2000.0, comm: 0 };
        let c = Collectives::parse("smpi,allreduce=redbcast,allgatherv=GB").unwrap();
        let (_, reduce_algo, _, bcast_algo) = redbcast_parts(&allreduce, Algo::Redbcast, 300, &c);
        assert_eq!((reduce_algo, bcast_algo), (Algo::NbcLinear, Algo::Binomial));
        assert_eq!(gb_bcast(&OpSpec::Allgatherv { bytes: vec![1000.0; 300], comm: 0 }, 300, &c).1, Algo::Binomial);
        let c = Collectives::parse("ompi,allreduce=redbcast").unwrap();
        assert_eq!(redbcast_parts(&allreduce, Algo::Redbcast, 300, &c).3, Algo::MvapichKnomial);
    }

    #[test]
    fn bad_selections_are_errors() {
        assert!(Collectives::parse("bcast=frobnicate").unwrap_err().reason.contains("no algorithm"));
        assert!(Collectives::parse("frob=rdb").unwrap_err().reason.contains("unknown collective"));
        assert!(Collectives::parse("intel").unwrap_err().reason.contains("unknown preset"));
        let c = Collectives::parse("allgather=pair").unwrap();
        assert!(c.check(&OpSpec::Allgather { bytes: 1.0, comm: 0 }, 6).unwrap_err().reason.contains("power-of-two"));
        assert!(c.check(&OpSpec::Allgather { bytes: 1.0, comm: 0 }, 8).is_ok());
        // SimGrid's allgather rdb takes any count.
        assert!(Collectives::parse("allgather=rdb").unwrap().check(&OpSpec::Allgather { bytes: 1.0, comm: 0 }, 6).is_ok());
        let c = Collectives::parse("allgatherv=pair").unwrap();
        assert!(c.check(&OpSpec::Allgatherv { bytes: vec![1.0; 6], comm: 0 }, 6).unwrap_err().reason.contains("power-of-two"));
    }
}
