//! Per-rank graphs of operations (GOAL's model: `send`, `recv` and `calc` with `requires` and
//! `irequires` dependencies), the data [`crate::mpi::goal`] reads, writes and simulates and a
//! trace carries when the replay is to run it as a graph ([`crate::mpi::trace::Trace::graph`]).

/// A wildcard peer (`from -1`) or tag (`tag -1`), as LogGOPSim stores it.
pub const ANY: u32 = u32::MAX;

/// Operation kinds in LogGOPSim's numbering (`LogGOPSim.hpp`): the order of ready operations
/// sorts by it, sends first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum GoalKind {
    Send = 1,
    Recv = 2,
    Calc = 3,
}

/// One operation. `size` is bytes for a message and time units for a calc; `peer` is the
/// destination of a send, the source of a receive ([`ANY`] for any); `cpu` and `nic` select a
/// host's CPU and NIC (0 unless the schedule says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoalOp {
    pub kind: GoalKind,
    pub cpu: u8,
    pub nic: u8,
    pub peer: u32,
    pub tag: u32,
    pub size: u64,
}

/// One rank's graph: its operations in line order, each one's number of dependencies, and its
/// successors by `requires` and by `irequires` in the order the dependency lines name them (that
/// order decides which ready operation LogGOPSim queues first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoalRank {
    pub ops: Vec<GoalOp>,
    pub n_deps: Vec<u32>,
    done_first: Vec<u32>,
    done_succ: Vec<u32>,
    start_first: Vec<u32>,
    start_succ: Vec<u32>,
}

impl GoalRank {
    /// Operations that `requires` op `i` (start once it is done).
    pub fn requires_me(&self, i: usize) -> &[u32] {
        &self.done_succ[self.done_first[i] as usize..self.done_first[i + 1] as usize]
    }
    /// Operations that `irequires` op `i` (start once it started).
    pub fn irequires_me(&self, i: usize) -> &[u32] {
        &self.start_succ[self.start_first[i] as usize..self.start_first[i + 1] as usize]
    }
}

/// `succs` lose a dependency each (`deps` counts what each op still waits for); `on_ready` gets
/// those left with none, in `succs`' order.
pub fn release_successors(deps: &mut [u32], succs: &[u32], mut on_ready: impl FnMut(u32)) {
    for &s in succs {
        deps[s as usize] -= 1;
        if deps[s as usize] == 0 {
            on_ready(s);
        }
    }
}

/// Builds a [`GoalRank`]: operations in order, then dependencies (`succ` requires or irequires
/// `pred`), each between operations already added.
#[derive(Debug, Default)]
pub struct GoalRankBuilder {
    ops: Vec<GoalOp>,
    /// (predecessor, successor, by irequires)
    edges: Vec<(u32, u32, bool)>,
}

impl GoalRankBuilder {
    pub fn op(&mut self, op: GoalOp) -> u32 {
        self.ops.push(op);
        (self.ops.len() - 1) as u32
    }
    pub fn n_ops(&self) -> usize {
        self.ops.len()
    }
    /// `succ requires pred` (`started`: `succ irequires pred`).
    pub fn depend(&mut self, succ: u32, pred: u32, started: bool) {
        debug_assert!((succ as usize) < self.ops.len() && (pred as usize) < self.ops.len());
        self.edges.push((pred, succ, started));
    }
    pub fn finish(self) -> GoalRank {
        let n = self.ops.len();
        let mut n_deps = vec![0u32; n];
        for &(_, succ, _) in &self.edges {
            n_deps[succ as usize] += 1;
        }
        // Successor lists in edge order (a counting sort by predecessor keeps it).
        let csr = |started: bool| {
            let mut first = vec![0u32; n + 1];
            for &(pred, _, s) in &self.edges {
                if s == started {
                    first[pred as usize + 1] += 1;
                }
            }
            for i in 0..n {
                first[i + 1] += first[i];
            }
            let mut next = first.clone();
            let mut succ = vec![0u32; first[n] as usize];
            for &(pred, s_op, s) in &self.edges {
                if s == started {
                    succ[next[pred as usize] as usize] = s_op;
                    next[pred as usize] += 1;
                }
            }
            (first, succ)
        };
        let (done_first, done_succ) = csr(false);
        let (start_first, start_succ) = csr(true);
        GoalRank { ops: self.ops, n_deps, done_first, done_succ, start_first, start_succ }
    }
}

/// A whole schedule: one graph per rank.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoalSchedule {
    pub ranks: Vec<GoalRank>,
}

impl GoalSchedule {
    pub fn n_ops(&self) -> usize {
        self.ranks.iter().map(|r| r.ops.len()).sum()
    }
    /// CPUs and NICs of every host: one more than the largest index any operation of any rank
    /// uses (LogGOPSim's `Goal.hpp` keeps them file-wide).
    pub fn n_cpus_nics(&self) -> (usize, usize) {
        let ops = || self.ranks.iter().flat_map(|r| r.ops.iter());
        (1 + ops().map(|o| o.cpu as usize).max().unwrap_or(0), 1 + ops().map(|o| o.nic as usize).max().unwrap_or(0))
    }
    /// Dependencies of all ranks.
    pub fn n_deps(&self) -> usize {
        self.ranks.iter().map(|r| r.done_succ.len() + r.start_succ.len()).sum()
    }
}
