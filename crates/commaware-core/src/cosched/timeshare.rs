//! Time-sharing and coscheduling on a cluster of single-CPU nodes (paper 002 §2–5): the
//! jobs run their phase programs process by process, each node schedules its processes with
//! the Linux 2.4 epoch scheduler ([`super::epoch`]) or, for gang scheduling, an Ousterhout
//! matrix, and the policies differ in how a process waits for a message and whom they
//! favour. Event-driven: a node has at most one pending timer (its activity's end or its
//! running process's quantum expiry) and nothing happens on idle ticks.
//!
//! **Cluster** (§5.1): `nodes` nodes of one CPU and 1,024 MB, 100 MB for the OS and 900 MB for
//! jobs; a Myrinet GM network of 9.7 µs one-way latency (measured, §5.1) and 250 MB/s
//! (Myrinet-2000's 2 Gb/s link, our assumption: the paper gives no bandwidth; the same
//! figures size the generator's messages, so a job alone takes its time alone). Each node's
//! NIC sends one message at a time, L + bytes/BW each, and the message arrives when its
//! send ends; no switch contention. While a node's resident memory exceeds its 900 MB,
//! computation there runs `swap_slowdown` times slower (default 2, an assumption: the
//! paper only says swapping is expensive, §5.3).
//!
//! **Allocation** (§5.1, §5.3): an FCFS queue, the head allocated as soon as it fits, one
//! process per node per job, at most `mpl` processes per node. `packing`: the contiguous
//! window of nodes with the fewest processes already (ties: the lowest); `random`: nodes
//! drawn with the seeded generator among those below the MPL; `memory-aware`: packing, and
//! a node must also hold the job's memory in its 900 MB (a job larger than 900 MB per process
//! waits for empty nodes). Gang: the first matrix row (time slot) with a contiguous free
//! window, leftmost.
//!
//! **Waiting for a message** (the notes' spin/block table): NLS, DCS, PB and gang spin
//! (until the message, or the quantum ends); SB and CC spin `spin_s` then block; HYBRID
//! blocks at once. A blocked process is woken (an interrupt, `interrupt_s`) when the
//! messages it waits for have all arrived; a woken process preempts the running one if its
//! goodness is higher (Linux 2.4's wake-up rule). Spinning is CPU time (it counts as busy).
//!
//! **Policies** (§2.3, §4):
//! - `nls`: plain Linux 2.4 scheduling, spin-waiting.
//! - `gang`: the MPL rows of an Ousterhout matrix take turns, `gang_slot_s` each, every switch
//!   costing all nodes `gang_switch_s` (SCore's global synchronisation); only the active
//!   row's processes run; empty rows are skipped, a lone row never switches.
//! - `dcs`: a message for a process that is not running raises an interrupt and favours it
//!   (it preempts the running process), spin only.
//! - `pb`: every `pb_period_s`, if the running process spins, one ready process with
//!   unconsumed messages (round robin) is favoured; spin only.
//! - `sb`: spin `spin_s`, then block.
//! - `cc`: a sender spins until its NIC has sent (at most `cc_send_spin_s`); a receiver spins
//!   `spin_s` then blocks; every `cc_interval_s`, if the running process spins, the ready
//!   process with the most unconsumed messages is favoured.
//! - `hybrid`: a process is boosted from the entry of a collective to its exit (not for
//!   point-to-point exchanges) and blocks at once when its message is absent.
//!
//! A favour or boost adds `boost` to the goodness, but a process whose epoch counter is spent
//! has goodness 0 whatever its boost (§5.2: this is why PB loses on Linux). Every switch to
//! another process costs `context_switch_s`, plus `interrupt_s` if it was woken or favoured
//! by an interrupt; both are charged when the process is next dispatched.
//!
//! **Collectives and exchanges** run as rounds of messages, as the generator sizes them: an
//! exchange with k neighbours sends to ranks r+1..r+k and receives k messages; barrier,
//! bcast and allreduce take ⌈log2 p⌉ dissemination rounds (round i: to r + 2^i, from
//! r − 2^i); alltoall takes p − 1 rounds (round i: to r + i). Sends are eager (detached).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::error::{check_amount, fmt_num, Error, ErrorKind, Result};
use crate::util::rng::SplitMix64;

use super::batch::JobRecord;
use super::epoch::{goodness, EpochParams};
use super::nas;
use super::workload::{Job, Phase, Program, Skipped};

/// The time-sharing policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TsPolicy {
    Nls,
    Gang,
    Dcs,
    Sb,
    Pb,
    Cc,
    Hybrid,
}

impl TsPolicy {
    pub const NAMES: &'static [&'static str] = &["nls", "gang", "dcs", "sb", "pb", "cc", "hybrid"];
    pub const ALL: [TsPolicy; 7] =
        [TsPolicy::Nls, TsPolicy::Gang, TsPolicy::Dcs, TsPolicy::Sb, TsPolicy::Pb, TsPolicy::Cc, TsPolicy::Hybrid];

    pub fn from_name(name: &str) -> Option<TsPolicy> {
        Self::NAMES.iter().position(|n| *n == name).map(|k| Self::ALL[k])
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|p| *p == self).expect("every policy is named")]
    }

    /// How long a process waiting for a message spins before blocking (∞: never blocks).
    fn spin_limit(self, p: &TsParams) -> f64 {
        match self {
            TsPolicy::Nls | TsPolicy::Gang | TsPolicy::Dcs | TsPolicy::Pb => f64::INFINITY,
            TsPolicy::Sb | TsPolicy::Cc => p.spin_s,
            TsPolicy::Hybrid => 0.0,
        }
    }
}

/// Processor allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    Packing,
    Random,
    MemoryAware,
}

impl Allocation {
    pub const NAMES: &'static [&'static str] = &["packing", "random", "memory-aware"];
    pub const ALL: [Allocation; 3] = [Allocation::Packing, Allocation::Random, Allocation::MemoryAware];

    pub fn from_name(name: &str) -> Result<Allocation> {
        match Self::NAMES.iter().position(|n| *n == name) {
            Some(k) => Ok(Self::ALL[k]),
            None => Err(Error::new(
                ErrorKind::Options,
                "allocation",
                format!("unknown allocation `{name}` (known: {})", Self::NAMES.join(", ")),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|p| *p == self).expect("every allocation is named")]
    }
}

/// Every parameter of a time-sharing run, with its default and source (P = paper 002,
/// L = Linux 2.4 `kernel/sched.c`, A = our assumption; docs/cosched.md has the table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TsParams {
    /// Nodes (one CPU each, §5.1: 16).
    pub nodes: u64,
    /// Most processes per node (P §5.1: 3).
    pub mpl: u64,
    pub allocation: Allocation,
    /// Seed of the random allocation.
    pub seed: u64,
    /// Memory of a node, MB (P §5.1: 1 GB).
    pub node_memory_mb: f64,
    /// Memory the OS keeps, MB (P §5.3: 100 MB, leaving 900 MB for jobs).
    pub os_memory_mb: f64,
    /// Computation slowdown on a node whose resident memory exceeds what it has (A: 2).
    pub swap_slowdown: f64,
    /// One-way latency, s (P §5.1: 9.7 µs, GM application to application).
    pub latency_s: f64,
    /// Link bandwidth, bytes/s (A: 250 MB/s, Myrinet-2000's 2 Gb/s link).
    pub bandwidth_bytes_s: f64,
    /// Timer tick, s (L: HZ = 100).
    pub tick_s: f64,
    /// Quantum added at each epoch end, ticks (L: NICE_TO_TICKS(0) = 6).
    pub quantum_ticks: i64,
    /// Cost of switching the CPU to another process, s (calibrated; see docs/cosched.md).
    pub context_switch_s: f64,
    /// Cost of the interrupt that wakes a blocked process or carries a DCS message, s (A).
    pub interrupt_s: f64,
    /// How long SB and CC receivers spin before blocking, s (A).
    pub spin_s: f64,
    /// How long a CC sender spins for its NIC's acknowledgement at most, s (A).
    pub cc_send_spin_s: f64,
    /// PB's check period, s (A: one tick).
    pub pb_period_s: f64,
    /// CC's favouring interval, s (A: one tick).
    pub cc_interval_s: f64,
    /// Goodness added by a boost or favour (A: 1000, above any time-sharing goodness, as a
    /// real-time process's).
    pub boost: i64,
    /// Gang time slot, s (A).
    pub gang_slot_s: f64,
    /// Gang global switch cost, s (A).
    pub gang_switch_s: f64,
}

impl Default for TsParams {
    fn default() -> Self {
        TsParams {
            nodes: 16,
            mpl: 3,
            allocation: Allocation::Packing,
            seed: 0,
            node_memory_mb: 1024.0,
            os_memory_mb: 100.0,
            swap_slowdown: 2.0,
            latency_s: nas::LATENCY_S,
            bandwidth_bytes_s: nas::BANDWIDTH_BYTES_S,
            tick_s: 0.01,
            quantum_ticks: 6,
            context_switch_s: 100e-6,
            interrupt_s: 10e-6,
            spin_s: 200e-6,
            cc_send_spin_s: 20e-6,
            pb_period_s: 0.01,
            cc_interval_s: 0.01,
            boost: 1000,
            gang_slot_s: 0.1,
            gang_switch_s: 0.002,
        }
    }
}

fn opt(field: &str, reason: String) -> Error {
    Error::new(ErrorKind::Options, field, reason)
}

impl TsParams {
    /// Every parameter within its bounds; errors name the parameter.
    pub fn validate(&self) -> Result<()> {
        if self.nodes == 0 || self.nodes > 1 << 20 {
            return Err(opt("nodes", format!("must be in 1..=2^20, got {}", self.nodes)));
        }
        if self.mpl == 0 || self.mpl > 64 {
            return Err(opt("mpl", format!("must be in 1..=64, got {}", self.mpl)));
        }
        if !(1..=1000).contains(&self.quantum_ticks) {
            return Err(opt("quantum_ticks", format!("must be in 1..=1000, got {}", self.quantum_ticks)));
        }
        if !(0..=1 << 20).contains(&self.boost) {
            return Err(opt("boost", format!("must be in 0..=2^20, got {}", self.boost)));
        }
        for (name, v, positive) in [
            ("node_memory_mb", self.node_memory_mb, true),
            ("os_memory_mb", self.os_memory_mb, false),
            ("latency_s", self.latency_s, false),
            ("bandwidth_bytes_s", self.bandwidth_bytes_s, true),
            ("tick_s", self.tick_s, true),
            ("context_switch_s", self.context_switch_s, false),
            ("interrupt_s", self.interrupt_s, false),
            ("spin_s", self.spin_s, false),
            ("cc_send_spin_s", self.cc_send_spin_s, false),
            ("pb_period_s", self.pb_period_s, true),
            ("cc_interval_s", self.cc_interval_s, true),
            ("gang_slot_s", self.gang_slot_s, true),
            ("gang_switch_s", self.gang_switch_s, false),
        ] {
            check_amount(ErrorKind::Options, name, v, positive)?;
            if v > 1e9 {
                return Err(opt(name, format!("must be at most 1e9, got {}", fmt_num(v))));
            }
        }
        if self.os_memory_mb >= self.node_memory_mb {
            return Err(opt("os_memory_mb", "must be below node_memory_mb".into()));
        }
        if !(self.swap_slowdown.is_finite() && (1.0..=1e6).contains(&self.swap_slowdown)) {
            return Err(opt("swap_slowdown", format!("must be in [1, 1e6], got {}", fmt_num(self.swap_slowdown))));
        }
        if self.gang_switch_s >= self.gang_slot_s {
            return Err(opt("gang_switch_s", "must be shorter than gang_slot_s".into()));
        }
        Ok(())
    }

    /// Memory a node leaves to jobs, MB.
    pub fn job_memory_mb(&self) -> f64 {
        self.node_memory_mb - self.os_memory_mb
    }
}

/// The outcome of a time-sharing run.
#[derive(Debug, Clone, PartialEq)]
pub struct TsResult {
    pub policy: TsPolicy,
    pub params: TsParams,
    /// Jobs in queue order (submit time, then id); `runtime_s` is the time alone.
    pub jobs: Vec<JobRecord>,
    /// Nodes of each job, by rank.
    pub alloc: Vec<Vec<u32>>,
    pub skipped: Skipped,
    /// Node-seconds computing, spinning (waiting on the CPU, and CC's send spins), switching
    /// (context and gang switches, interrupts): all three count as busy.
    pub compute_s: f64,
    pub spin_s: f64,
    pub switch_s: f64,
    /// Context switches, messages and events simulated.
    pub switches: u64,
    pub messages: u64,
    pub events: u64,
}

impl TsResult {
    pub fn busy_s(&self) -> f64 {
        self.compute_s + self.spin_s + self.switch_s
    }
}

/// One step of an iteration as a process runs it.
#[derive(Debug, Clone, Copy)]
enum Step {
    Compute(f64),
    /// Send to ranks r+first .. r+first+count-1 (mod p), then wait for `count` messages.
    Round { first: u32, count: u32, bytes: f64, coll: bool, start: bool, end: bool },
}

fn steps_of(program: &Program, p: u64) -> Vec<Step> {
    let mut out = Vec::new();
    let rounds = |out: &mut Vec<Step>, offsets: &mut dyn Iterator<Item = u64>, n: u64, bytes: f64| {
        for (i, off) in offsets.enumerate() {
            let i = i as u64;
            out.push(Step::Round { first: off as u32, count: 1, bytes, coll: true, start: i == 0, end: i + 1 == n });
        }
    };
    for ph in &program.phases {
        match *ph {
            Phase::Compute { seconds } => out.push(Step::Compute(seconds)),
            Phase::Exchange { bytes, neighbors } => {
                out.push(Step::Round { first: 1, count: neighbors, bytes, coll: false, start: true, end: true })
            }
            // The node model has no grid or pairing: a halo is an exchange with 2·dims
            // neighbours, random pairs one with 1 (as `phase_comm_s` counts them).
            Phase::Halo { bytes, dims } if p > 1 => {
                let count = (2 * u64::from(dims)).min(p - 1) as u32;
                out.push(Step::Round { first: 1, count, bytes, coll: false, start: true, end: true })
            }
            Phase::Pairs { bytes } if p > 1 => {
                out.push(Step::Round { first: 1, count: 1, bytes, coll: false, start: true, end: true })
            }
            Phase::Halo { .. } | Phase::Pairs { .. } => {}
            Phase::ComputeShare => {} // resolved by the caller (`Program::resolved`)
            Phase::Barrier | Phase::Bcast { .. } | Phase::Allreduce { .. } => {
                let bytes = match *ph {
                    Phase::Bcast { bytes } | Phase::Allreduce { bytes } => bytes,
                    _ => 0.0,
                };
                let n = (p as f64).log2().ceil() as u64;
                rounds(&mut out, &mut (0..n).map(|i| 1u64 << i), n, bytes);
            }
            Phase::Alltoall { bytes } => {
                let n = p.saturating_sub(1);
                rounds(&mut out, &mut (1..p), n, bytes);
            }
        }
    }
    if out.is_empty() {
        out.push(Step::Compute(0.0));
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Ready,
    Running,
    Blocked,
    Done,
}

#[derive(Debug, Clone)]
struct Proc {
    job: u32,
    rank: u32,
    node: u32,
    row: u32,
    st: St,
    iter: u64,
    step: u32,
    /// Round sequence number (the message tag).
    q: u64,
    /// Compute left in the current step, s at full speed; NaN before the step starts.
    remaining: f64,
    /// The current round's sends are posted.
    posted: bool,
    counter: i64,
    /// HYBRID: inside a collective.
    boosted: bool,
    /// DCS, PB, CC: favoured until next dispatched.
    favoured: bool,
    /// When it last became runnable (later wins ties, as Linux puts woken tasks first).
    enq: u64,
    /// Arrived, unconsumed messages: (round tag, count).
    mailbox: Vec<(u64, u32)>,
    unconsumed: u32,
    /// Interrupt cost to pay at the next dispatch, s.
    wake_cost: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Act {
    Idle,
    Switch(f64),
    Compute(f64),
    Spin(f64),
    SendSpin(f64),
}

#[derive(Debug, Clone)]
struct Node {
    procs: Vec<u32>,
    cur: Option<u32>,
    last: Option<u32>,
    act: Act,
    act_since: f64,
    tick_sync: f64,
    gen: u64,
    resident_mb: f64,
    nic_free: f64,
    check_at: f64,
    rr: usize,
}

struct JobRt {
    procs: u64,
    mem: f64,
    steps: Vec<Step>,
    iterations: u64,
    first_proc: u32,
    done: u64,
    start: f64,
    end: f64,
    row: u32,
    nodes: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Arrive(u32),
    Msg(u32, u64),
    Node(u32, u64),
    Check(u32),
    Gang(u64),
    Alloc,
}

struct Ev {
    t: f64,
    seq: u64,
    kind: Kind,
}
impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    fn cmp(&self, o: &Self) -> Ordering {
        self.t.total_cmp(&o.t).then(self.seq.cmp(&o.seq))
    }
}

const NONE: u32 = u32::MAX;

struct Sim<'a> {
    p: &'a TsParams,
    pol: TsPolicy,
    ep: EpochParams,
    gang: bool,
    jobs: Vec<JobRt>,
    procs: Vec<Proc>,
    nodes: Vec<Node>,
    heap: BinaryHeap<Reverse<Ev>>,
    seq: u64,
    enq: u64,
    queue: VecDeque<u32>,
    rng: SplitMix64,
    /// Gang: the job of each (row, node), NONE when free.
    matrix: Vec<Vec<u32>>,
    row_jobs: Vec<u32>,
    active_row: u32,
    gang_gen: u64,
    gang_armed: bool,
    done_jobs: usize,
    compute_s: f64,
    spin_s: f64,
    switch_s: f64,
    switches: u64,
    messages: u64,
}

impl<'a> Sim<'a> {
    fn push(&mut self, t: f64, kind: Kind) {
        self.seq += 1;
        self.heap.push(Reverse(Ev { t, seq: self.seq, kind }));
    }

    fn rate(&self, n: usize) -> f64 {
        if self.nodes[n].resident_mb > self.p.job_memory_mb() + 1e-9 {
            1.0 / self.p.swap_slowdown
        } else {
            1.0
        }
    }

    fn others_ready(&self, n: usize) -> bool {
        let cur = self.nodes[n].cur;
        self.nodes[n].procs.iter().any(|&q| Some(q) != cur && self.procs[q as usize].st == St::Ready)
    }

    fn good(&self, q: u32) -> i64 {
        let pr = &self.procs[q as usize];
        let bonus = if pr.boosted || pr.favoured { self.p.boost } else { 0 };
        goodness(pr.counter, bonus)
    }

    /// Bring node `n`'s accounting to `now`: compute progress, busy time, and the running
    /// process's ticks (with the epochs that ended while it ran alone).
    fn sync(&mut self, n: usize, now: f64) {
        let rate = self.rate(n);
        let node = &mut self.nodes[n];
        let dt = now - node.act_since;
        if dt > 0.0 {
            match node.act {
                Act::Idle => {}
                Act::Compute(_) => {
                    self.compute_s += dt;
                    if let Some(c) = node.cur {
                        self.procs[c as usize].remaining -= dt * rate;
                    }
                }
                Act::Spin(_) | Act::SendSpin(_) => self.spin_s += dt,
                Act::Switch(_) => self.switch_s += dt,
            }
        }
        node.act_since = now;
        let ticks = self.ep.ticks_between(node.tick_sync, now);
        node.tick_sync = now;
        if self.gang || ticks == 0 {
            return;
        }
        let Some(c) = self.nodes[n].cur else { return };
        if self.others_ready(n) {
            let pr = &mut self.procs[c as usize];
            pr.counter = (pr.counter - ticks).max(0);
        } else {
            let (after, epochs) = self.ep.charge_alone(self.procs[c as usize].counter, ticks);
            self.procs[c as usize].counter = after;
            if epochs > 0 {
                for k in 0..self.nodes[n].procs.len() {
                    let q = self.nodes[n].procs[k] as usize;
                    if q != c as usize && self.procs[q].st != St::Done {
                        self.procs[q].counter = self.ep.recalc_n(self.procs[q].counter, epochs);
                    }
                }
            }
        }
    }

    /// Set node `n`'s single timer: its activity's end, or the running process's quantum
    /// expiry when another process is ready.
    fn arm(&mut self, n: usize, now: f64) {
        let node = &self.nodes[n];
        let mut t = match node.act {
            Act::Idle => f64::INFINITY,
            Act::Switch(u) | Act::Compute(u) | Act::Spin(u) | Act::SendSpin(u) => u,
        };
        if !self.gang {
            if let Some(c) = node.cur {
                if self.others_ready(n) {
                    t = t.min(self.ep.expiry(now, self.procs[c as usize].counter));
                }
            }
        }
        let node = &mut self.nodes[n];
        node.gen += 1;
        if t.is_finite() {
            let gen = node.gen;
            self.push(t.max(now), Kind::Node(n as u32, gen));
        }
    }

    fn pick(&mut self, n: usize) -> Option<u32> {
        let cur = self.nodes[n].cur;
        if self.gang {
            let row = self.active_row;
            return self.nodes[n].procs.iter().copied().find(|&q| {
                let pr = &self.procs[q as usize];
                pr.row == row && (pr.st == St::Ready || (pr.st == St::Running && Some(q) == cur))
            });
        }
        loop {
            let mut best: Option<(i64, bool, u64, u32)> = None;
            for &q in &self.nodes[n].procs {
                let pr = &self.procs[q as usize];
                let runnable = pr.st == St::Ready || (pr.st == St::Running && Some(q) == cur);
                if !runnable {
                    continue;
                }
                let key = (self.good(q), Some(q) == cur, pr.enq, q);
                if best.is_none_or(|b| (key.0, key.1, key.2) > (b.0, b.1, b.2)) {
                    best = Some(key);
                }
            }
            match best {
                None => return None,
                Some((0, ..)) => {
                    // Every runnable process has spent its counter: the epoch ends for all.
                    for k in 0..self.nodes[n].procs.len() {
                        let q = self.nodes[n].procs[k] as usize;
                        if self.procs[q].st != St::Done {
                            self.procs[q].counter = self.ep.recalc(self.procs[q].counter);
                        }
                    }
                }
                Some(b) => return Some(b.3),
            }
        }
    }

    /// Linux `schedule()` on node `n` (after `sync`): run the best process, switching if it
    /// is another one.
    fn resched(&mut self, n: usize, now: f64) {
        let best = self.pick(n);
        let cur = self.nodes[n].cur;
        if best == cur && cur.is_some() {
            self.arm(n, now);
            return;
        }
        if let Some(c) = cur {
            let pr = &mut self.procs[c as usize];
            if pr.st == St::Running {
                pr.st = St::Ready;
            }
        }
        self.nodes[n].cur = best;
        match best {
            None => {
                self.nodes[n].act = Act::Idle;
                self.arm(n, now);
            }
            Some(b) => self.dispatch(n, b, now, 0.0),
        }
    }

    /// Make `b` the running process of node `n`, after a switch of `extra` s plus the
    /// context switch (if another process ran last) and any pending interrupt cost.
    fn dispatch(&mut self, n: usize, b: u32, now: f64, extra: f64) {
        let pr = &mut self.procs[b as usize];
        pr.st = St::Running;
        pr.favoured = false;
        let mut cost = extra + pr.wake_cost;
        pr.wake_cost = 0.0;
        let node = &mut self.nodes[n];
        node.cur = Some(b);
        if node.last != Some(b) {
            cost += self.p.context_switch_s;
            self.switches += 1;
        }
        node.last = Some(b);
        if cost > 0.0 {
            node.act = Act::Switch(now + cost);
            self.arm(n, now);
        } else {
            self.run(b, now);
        }
    }

    fn satisfied(&self, q: u32) -> bool {
        let pr = &self.procs[q as usize];
        let job = &self.jobs[pr.job as usize];
        match job.steps[pr.step as usize] {
            Step::Round { count, .. } => pr.mailbox.iter().any(|&(tag, c)| tag == pr.q && c >= count),
            Step::Compute(_) => false,
        }
    }

    /// Run process `q` (the running process of its node, switch done) from its current step
    /// until it computes, spins, blocks or ends.
    fn run(&mut self, q: u32, now: f64) {
        let n = self.procs[q as usize].node as usize;
        loop {
            let (job_i, step_i) = (self.procs[q as usize].job as usize, self.procs[q as usize].step as usize);
            let step = self.jobs[job_i].steps[step_i];
            match step {
                Step::Compute(s) => {
                    let rate = self.rate(n);
                    let pr = &mut self.procs[q as usize];
                    if pr.remaining.is_nan() {
                        pr.remaining = s;
                    }
                    if pr.remaining > 1e-12 {
                        let until = now + pr.remaining / rate;
                        self.nodes[n].act = Act::Compute(until);
                        self.nodes[n].act_since = now;
                        self.arm(n, now);
                        return;
                    }
                    pr.remaining = f64::NAN;
                }
                Step::Round { first, count, bytes, coll, start, end } => {
                    if !self.procs[q as usize].posted {
                        self.procs[q as usize].posted = true;
                        if coll && start && self.pol == TsPolicy::Hybrid {
                            self.procs[q as usize].boosted = true;
                        }
                        self.send(q, first, count, bytes, now);
                        if self.pol == TsPolicy::Cc {
                            let until = self.nodes[n].nic_free.min(now + self.p.cc_send_spin_s);
                            if until > now {
                                self.nodes[n].act = Act::SendSpin(until);
                                self.nodes[n].act_since = now;
                                self.arm(n, now);
                                return;
                            }
                        }
                    }
                    if !self.satisfied(q) {
                        let limit = self.pol.spin_limit(self.p);
                        if limit <= 0.0 {
                            self.block(q, now);
                        } else {
                            self.nodes[n].act = Act::Spin(now + limit);
                            self.nodes[n].act_since = now;
                            if matches!(self.pol, TsPolicy::Pb | TsPolicy::Cc) && self.pending_elsewhere(n, q) {
                                self.arm_check(n, now);
                            }
                            self.arm(n, now);
                        }
                        return;
                    }
                    let pr = &mut self.procs[q as usize];
                    let tag = pr.q;
                    let k = pr.mailbox.iter().position(|&(t, _)| t == tag).expect("satisfied");
                    pr.mailbox[k].1 -= count;
                    if pr.mailbox[k].1 == 0 {
                        pr.mailbox.swap_remove(k);
                    }
                    pr.unconsumed -= count;
                    pr.q += 1;
                    pr.posted = false;
                    if coll && end && self.pol == TsPolicy::Hybrid {
                        pr.boosted = false;
                    }
                }
            }
            // Next step.
            let iterations = self.jobs[job_i].iterations;
            let len = self.jobs[job_i].steps.len() as u32;
            let pr = &mut self.procs[q as usize];
            pr.step += 1;
            if pr.step == len {
                pr.step = 0;
                pr.iter += 1;
                if pr.iter == iterations {
                    self.finish(q, now);
                    return;
                }
            }
        }
    }

    fn send(&mut self, q: u32, first: u32, count: u32, bytes: f64, now: f64) {
        let pr = &self.procs[q as usize];
        let (n, tag) = (pr.node as usize, pr.q);
        let job = &self.jobs[pr.job as usize];
        let (p, base, rank) = (job.procs, job.first_proc, pr.rank as u64);
        let dur = self.p.latency_s + bytes / self.p.bandwidth_bytes_s;
        for j in 0..count as u64 {
            let dst = base + ((rank + first as u64 + j) % p) as u32;
            let depart = now.max(self.nodes[n].nic_free);
            let arrive = depart + dur;
            self.nodes[n].nic_free = arrive;
            self.messages += 1;
            self.push(arrive, Kind::Msg(dst, tag));
        }
    }

    /// Whether a ready process of node `n` other than `q` has unconsumed messages.
    fn pending_elsewhere(&self, n: usize, q: u32) -> bool {
        self.nodes[n].procs.iter().any(|&o| o != q && self.procs[o as usize].st == St::Ready && self.procs[o as usize].unconsumed > 0)
    }

    fn arm_check(&mut self, n: usize, now: f64) {
        let period = if self.pol == TsPolicy::Pb { self.p.pb_period_s } else { self.p.cc_interval_s };
        let t = ((now / period + 1e-9).floor() + 1.0) * period;
        if self.nodes[n].check_at <= t {
            return;
        }
        self.nodes[n].check_at = t;
        self.push(t, Kind::Check(n as u32));
    }

    fn block(&mut self, q: u32, now: f64) {
        let n = self.procs[q as usize].node as usize;
        self.procs[q as usize].st = St::Blocked;
        self.nodes[n].cur = None;
        self.nodes[n].act = Act::Idle;
        self.nodes[n].act_since = now;
        self.resched(n, now);
    }

    fn wake(&mut self, q: u32, now: f64) {
        let n = self.procs[q as usize].node as usize;
        self.sync(n, now);
        self.enq += 1;
        let pr = &mut self.procs[q as usize];
        pr.st = St::Ready;
        pr.enq = self.enq;
        pr.wake_cost += self.p.interrupt_s;
        self.preempt_check(n, q, now);
    }

    /// A process became ready on node `n`: it runs if the node is idle or if it beats the
    /// running one (Linux 2.4's wake-up preemption; gang: if it is in the active row).
    fn preempt_check(&mut self, n: usize, q: u32, now: f64) {
        match self.nodes[n].cur {
            None => self.resched(n, now),
            Some(c) if !self.gang && self.good(q) > self.good(c) => self.resched(n, now),
            _ => self.arm(n, now),
        }
    }

    fn finish(&mut self, q: u32, now: f64) {
        let n = self.procs[q as usize].node as usize;
        let pr = &mut self.procs[q as usize];
        pr.st = St::Done;
        let j = pr.job as usize;
        self.nodes[n].cur = None;
        self.nodes[n].act = Act::Idle;
        self.nodes[n].act_since = now;
        self.jobs[j].done += 1;
        if self.jobs[j].done == self.jobs[j].procs {
            self.end_job(j, now, n);
        }
        self.resched(n, now);
    }

    /// Job `j` ends: its processes leave their nodes (memory, MPL slots, gang row).
    fn end_job(&mut self, j: usize, now: f64, finishing_node: usize) {
        self.jobs[j].end = now;
        self.done_jobs += 1;
        let nodes = std::mem::take(&mut self.jobs[j].nodes);
        let first = self.jobs[j].first_proc;
        for &nd in &nodes {
            let nd = nd as usize;
            self.sync(nd, now);
            self.nodes[nd].procs.retain(|&x| x < first || x >= first + self.jobs[j].procs as u32);
            self.nodes[nd].resident_mb -= self.jobs[j].mem;
            if self.nodes[nd].procs.is_empty() {
                self.nodes[nd].resident_mb = 0.0;
            }
            if nd != finishing_node {
                // Its compute rate may have changed.
                if let Act::Compute(_) = self.nodes[nd].act {
                    let c = self.nodes[nd].cur.expect("computing node has a process");
                    let until = now + self.procs[c as usize].remaining.max(0.0) / self.rate(nd);
                    self.nodes[nd].act = Act::Compute(until);
                }
                self.arm(nd, now);
            }
        }
        if self.gang {
            let row = self.jobs[j].row as usize;
            for &nd in &nodes {
                self.matrix[row][nd as usize] = NONE;
            }
            self.row_jobs[row] -= 1;
            if self.row_jobs[row] == 0 && row as u32 == self.active_row {
                self.gang_gen += 1;
                let gen = self.gang_gen;
                self.gang_armed = true;
                self.push(now, Kind::Gang(gen));
            }
        }
        self.jobs[j].nodes = nodes;
        self.push(now, Kind::Alloc);
    }

    // --- allocation ------------------------------------------------------------------------

    fn mem_fits(&self, n: usize, mem: f64) -> bool {
        let node = &self.nodes[n];
        node.procs.is_empty() || node.resident_mb + mem <= self.p.job_memory_mb() + 1e-9
    }

    /// Nodes for job `j` by rank (and the gang row), or None if it must wait.
    fn find(&mut self, j: usize) -> Option<(Vec<u32>, u32)> {
        let p = self.jobs[j].procs as usize;
        let mem = self.jobs[j].mem;
        let nn = self.nodes.len();
        let mem_aware = self.p.allocation == Allocation::MemoryAware;
        let mpl = self.p.mpl as usize;
        if self.gang {
            for row in 0..mpl {
                let mut run = 0;
                for nd in 0..nn {
                    let ok = self.matrix[row][nd] == NONE && (!mem_aware || self.mem_fits(nd, mem));
                    run = if ok { run + 1 } else { 0 };
                    if run == p {
                        let start = nd + 1 - p;
                        return Some(((start..=nd).map(|x| x as u32).collect(), row as u32));
                    }
                }
            }
            return None;
        }
        let ok = |s: &Self, nd: usize| s.nodes[nd].procs.len() < mpl && (!mem_aware || s.mem_fits(nd, mem));
        match self.p.allocation {
            Allocation::Random => {
                let mut free: Vec<u32> = (0..nn).filter(|&nd| ok(self, nd)).map(|x| x as u32).collect();
                if free.len() < p {
                    return None;
                }
                self.rng.shuffle(&mut free);
                free.truncate(p);
                Some((free, 0))
            }
            Allocation::Packing | Allocation::MemoryAware => {
                let mut best: Option<(usize, usize)> = None;
                let (mut run, mut load) = (0usize, 0usize);
                for nd in 0..nn {
                    if ok(self, nd) {
                        run += 1;
                        load += self.nodes[nd].procs.len();
                        if run > p {
                            load -= self.nodes[nd - p].procs.len();
                            run = p;
                        }
                        if run == p && best.is_none_or(|(l, _)| load < l) {
                            best = Some((load, nd + 1 - p));
                        }
                    } else {
                        run = 0;
                        load = 0;
                    }
                }
                best.map(|(_, s)| ((s..s + p).map(|x| x as u32).collect(), 0))
            }
        }
    }

    fn try_allocate(&mut self, now: f64) {
        while let Some(&j) = self.queue.front() {
            let Some((nodes, row)) = self.find(j as usize) else { break };
            self.queue.pop_front();
            self.start_job(j as usize, nodes, row, now);
        }
    }

    fn start_job(&mut self, j: usize, nodes: Vec<u32>, row: u32, now: f64) {
        let first = self.procs.len() as u32;
        let job = &mut self.jobs[j];
        job.start = now;
        job.first_proc = first;
        job.row = row;
        let mem = job.mem;
        for (rank, &nd) in nodes.iter().enumerate() {
            self.enq += 1;
            self.procs.push(Proc {
                job: j as u32,
                rank: rank as u32,
                node: nd,
                row,
                st: St::Ready,
                iter: 0,
                step: 0,
                q: 0,
                remaining: f64::NAN,
                posted: false,
                counter: self.p.quantum_ticks,
                boosted: false,
                favoured: false,
                enq: self.enq,
                mailbox: Vec::new(),
                unconsumed: 0,
                wake_cost: 0.0,
            });
        }
        if self.gang {
            for &nd in &nodes {
                self.matrix[row as usize][nd as usize] = j as u32;
            }
            if self.row_jobs[self.active_row as usize] == 0 {
                self.active_row = row;
            }
            self.row_jobs[row as usize] += 1;
            let busy_rows = self.row_jobs.iter().filter(|&&c| c > 0).count();
            if busy_rows >= 2 && !self.gang_armed {
                self.gang_gen += 1;
                self.gang_armed = true;
                let gen = self.gang_gen;
                self.push(now + self.p.gang_slot_s, Kind::Gang(gen));
            }
        }
        for (rank, &nd) in nodes.iter().enumerate() {
            let nd = nd as usize;
            self.sync(nd, now);
            self.nodes[nd].procs.push(first + rank as u32);
            self.nodes[nd].resident_mb += mem;
            if let Act::Compute(_) = self.nodes[nd].act {
                let c = self.nodes[nd].cur.expect("computing node has a process");
                let until = now + self.procs[c as usize].remaining.max(0.0) / self.rate(nd);
                self.nodes[nd].act = Act::Compute(until);
            }
            self.preempt_check(nd, first + rank as u32, now);
        }
        self.jobs[j].nodes = nodes;
    }

    // --- events ----------------------------------------------------------------------------

    fn on_node(&mut self, n: usize, now: f64) {
        self.sync(n, now);
        let Some(c) = self.nodes[n].cur else {
            self.arm(n, now);
            return;
        };
        match self.nodes[n].act {
            Act::Switch(u) if u <= now => {
                self.nodes[n].act = Act::Idle;
                self.run(c, now);
            }
            Act::Compute(u) if u <= now => {
                self.procs[c as usize].remaining = 0.0;
                self.run(c, now);
            }
            Act::SendSpin(u) if u <= now => self.run(c, now),
            Act::Spin(u) if u <= now => {
                self.block(c, now);
                return;
            }
            _ => {}
        }
        self.settle(n, now);
    }

    /// After an event: reschedule if the running process's quantum has run out, else re-arm.
    fn settle(&mut self, n: usize, now: f64) {
        match self.nodes[n].cur {
            Some(c) if !self.gang && self.procs[c as usize].counter == 0 => self.resched(n, now),
            _ => self.arm(n, now),
        }
    }

    fn on_msg(&mut self, q: u32, tag: u64, now: f64) {
        let pr = &mut self.procs[q as usize];
        match pr.mailbox.iter_mut().find(|(t, _)| *t == tag) {
            Some(e) => e.1 += 1,
            None => pr.mailbox.push((tag, 1)),
        }
        pr.unconsumed += 1;
        let n = pr.node as usize;
        match pr.st {
            St::Running => {
                if let Act::Spin(_) = self.nodes[n].act {
                    if self.satisfied(q) {
                        self.sync(n, now);
                        self.run(q, now);
                        self.settle(n, now);
                    }
                }
            }
            St::Blocked => {
                if self.satisfied(q) {
                    self.wake(q, now);
                }
            }
            St::Ready => match self.pol {
                TsPolicy::Dcs => {
                    // The NIC interrupts and the message's process is favoured (§2.3).
                    self.sync(n, now);
                    let pr = &mut self.procs[q as usize];
                    pr.wake_cost += self.p.interrupt_s;
                    pr.favoured = true;
                    self.preempt_check(n, q, now);
                }
                TsPolicy::Pb | TsPolicy::Cc => {
                    if matches!(self.nodes[n].act, Act::Spin(_)) {
                        self.arm_check(n, now);
                    }
                }
                _ => {}
            },
            St::Done => {}
        }
    }

    /// PB's periodic check or CC's interval: if the running process spins, favour a ready
    /// process with unconsumed messages (PB: round robin; CC: the most messages).
    fn on_check(&mut self, n: usize, now: f64) {
        self.nodes[n].check_at = f64::INFINITY;
        if !matches!(self.nodes[n].act, Act::Spin(_)) {
            return;
        }
        self.sync(n, now);
        let k = self.nodes[n].procs.len();
        let cand = |s: &Self, q: u32| {
            let pr = &s.procs[q as usize];
            pr.st == St::Ready && pr.unconsumed > 0 && pr.counter > 0
        };
        let chosen = if self.pol == TsPolicy::Pb {
            let start = self.nodes[n].rr;
            (0..k).map(|i| (start + 1 + i) % k).find(|&i| cand(self, self.nodes[n].procs[i])).map(|i| {
                self.nodes[n].rr = i;
                self.nodes[n].procs[i]
            })
        } else {
            let mut best: Option<u32> = None;
            for &q in &self.nodes[n].procs {
                if cand(self, q) && best.is_none_or(|b| self.procs[q as usize].unconsumed > self.procs[b as usize].unconsumed) {
                    best = Some(q);
                }
            }
            best
        };
        if let Some(q) = chosen {
            self.procs[q as usize].favoured = true;
            self.resched(n, now);
        }
    }

    /// Gang: the next non-empty row takes its slot; every node pays the global switch.
    fn on_gang(&mut self, gen: u64, now: f64) {
        if gen != self.gang_gen {
            return;
        }
        let rows = self.row_jobs.len() as u32;
        let next = (1..=rows).map(|i| (self.active_row + i) % rows).find(|&r| self.row_jobs[r as usize] > 0);
        let Some(next) = next else {
            self.gang_armed = false;
            return;
        };
        let switching = next != self.active_row;
        self.active_row = next;
        for n in 0..self.nodes.len() {
            self.sync(n, now);
            if switching {
                if let Some(c) = self.nodes[n].cur {
                    if self.procs[c as usize].st == St::Running {
                        self.procs[c as usize].st = St::Ready;
                    }
                }
                self.nodes[n].cur = None;
                self.nodes[n].act = Act::Idle;
                match self.pick(n) {
                    Some(b) => {
                        // The global switch replaces the local context switch.
                        self.nodes[n].last = Some(b);
                        self.dispatch(n, b, now, self.p.gang_switch_s);
                    }
                    None => self.arm(n, now),
                }
            } else if self.nodes[n].cur.is_none() {
                self.resched(n, now);
            }
        }
        let busy_rows = self.row_jobs.iter().filter(|&&c| c > 0).count();
        if busy_rows >= 2 {
            self.gang_gen += 1;
            let gen = self.gang_gen;
            self.push(now + self.p.gang_slot_s, Kind::Gang(gen));
        } else {
            self.gang_armed = false;
        }
    }
}

/// Run `jobs` (any order) under a time-sharing policy. Jobs with more processes than nodes
/// are skipped and counted; jobs without a program get [`nas::default_program`].
pub fn simulate(jobs: &[Job], policy: TsPolicy, params: &TsParams) -> Result<TsResult> {
    params.validate()?;
    let mut skipped = Skipped::default();
    let mut order: Vec<usize> = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        if j.procs > params.nodes {
            skipped.too_large += 1;
        } else {
            order.push(i);
        }
    }
    order.sort_by(|&a, &b| {
        let (x, y) = (&jobs[a], &jobs[b]);
        x.submit_s.total_cmp(&y.submit_s).then(x.id.cmp(&y.id)).then(a.cmp(&b))
    });
    let total_procs: u64 = order.iter().map(|&i| jobs[i].procs).sum();
    if total_procs >= u32::MAX as u64 {
        return Err(opt("jobs", format!("{total_procs} processes in all, at most 2^32 - 1 are supported")));
    }
    let mut rt = Vec::with_capacity(order.len());
    for &i in &order {
        let j = &jobs[i];
        let prog = match &j.program {
            Some(p) => p.resolved(j.runtime_s).into_owned(),
            None => nas::default_program(j.runtime_s, j.procs),
        };
        rt.push(JobRt {
            procs: j.procs,
            mem: j.memory_mb,
            steps: steps_of(&prog, j.procs),
            iterations: prog.iterations,
            first_proc: 0,
            done: 0,
            start: f64::NAN,
            end: f64::NAN,
            row: 0,
            nodes: Vec::new(),
        });
    }
    let gang = policy == TsPolicy::Gang;
    let nn = params.nodes as usize;
    let mut sim = Sim {
        p: params,
        pol: policy,
        ep: EpochParams { tick_s: params.tick_s, quantum_ticks: params.quantum_ticks },
        gang,
        jobs: rt,
        procs: Vec::with_capacity(total_procs as usize),
        nodes: vec![
            Node {
                procs: Vec::new(),
                cur: None,
                last: None,
                act: Act::Idle,
                act_since: 0.0,
                tick_sync: 0.0,
                gen: 0,
                resident_mb: 0.0,
                nic_free: 0.0,
                check_at: f64::INFINITY,
                rr: 0,
            };
            nn
        ],
        heap: BinaryHeap::new(),
        seq: 0,
        enq: 0,
        queue: VecDeque::new(),
        rng: SplitMix64::new(params.seed),
        matrix: if gang { vec![vec![NONE; nn]; params.mpl as usize] } else { Vec::new() },
        row_jobs: vec![0; if gang { params.mpl as usize } else { 0 }],
        active_row: 0,
        gang_gen: 0,
        gang_armed: false,
        done_jobs: 0,
        compute_s: 0.0,
        spin_s: 0.0,
        switch_s: 0.0,
        switches: 0,
        messages: 0,
    };
    let first_t = order.first().map(|&i| jobs[i].submit_s).unwrap_or(0.0);
    for n in &mut sim.nodes {
        n.act_since = first_t;
        n.tick_sync = first_t;
    }
    for (k, &i) in order.iter().enumerate() {
        sim.push(jobs[i].submit_s, Kind::Arrive(k as u32));
    }
    let mut events = 0u64;
    while let Some(Reverse(ev)) = sim.heap.pop() {
        events += 1;
        if events % 1024 == 0 {
            crate::util::cancel::check()?;
        }
        let now = ev.t;
        match ev.kind {
            Kind::Arrive(j) => {
                sim.queue.push_back(j);
                sim.try_allocate(now);
            }
            Kind::Alloc => sim.try_allocate(now),
            Kind::Msg(q, tag) => sim.on_msg(q, tag, now),
            Kind::Node(n, gen) => {
                if sim.nodes[n as usize].gen == gen {
                    sim.on_node(n as usize, now);
                }
            }
            Kind::Check(n) => {
                if sim.nodes[n as usize].check_at == now {
                    sim.on_check(n as usize, now);
                }
            }
            Kind::Gang(gen) => sim.on_gang(gen, now),
        }
    }
    if sim.done_jobs != sim.jobs.len() {
        let waiting = sim.jobs.iter().filter(|j| j.end.is_nan()).count();
        return Err(Error::new(
            ErrorKind::Deadlock,
            "jobs",
            format!("{waiting} jobs never finished under {} (a simulator bug: please report it)", policy.name()),
        ));
    }
    let records = order
        .iter()
        .zip(&sim.jobs)
        .map(|(&i, r)| {
            let j = &jobs[i];
            JobRecord {
                id: j.id,
                submit_s: j.submit_s,
                procs: j.procs,
                runtime_s: j.runtime_s,
                requested_s: j.requested(),
                start_s: r.start,
                end_s: r.end,
                reserved_s: f64::NAN,
            }
        })
        .collect();
    let alloc = sim.jobs.iter().map(|r| r.nodes.clone()).collect();
    Ok(TsResult {
        policy,
        params: params.clone(),
        jobs: records,
        alloc,
        skipped,
        compute_s: sim.compute_s,
        spin_s: sim.spin_s,
        switch_s: sim.switch_s,
        switches: sim.switches,
        messages: sim.messages,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosched::nas::{generate, Mix, NasParams};

    fn job(id: u64, procs: u64, phases: Vec<Phase>) -> Job {
        Job {
            id,
            submit_s: 0.0,
            procs,
            memory_mb: 10.0,
            runtime_s: 1.0,
            requested_s: None,
            benchmark: None,
            class: None,
            program: Some(Program { iterations: 1, phases }),
            ..Job::default()
        }
    }

    /// Toy parameters: 2 nodes, MPL 2, 1 ms context switch, free interrupts, 1 ms latency,
    /// SB/CC spin 0.5 ms, CC send spin 20 µs, gang slot 100 ms with a 2 ms switch; Linux 2.4
    /// ticks (10 ms) and quantum (6 ticks).
    fn toy() -> TsParams {
        TsParams {
            nodes: 2,
            mpl: 2,
            context_switch_s: 0.001,
            interrupt_s: 0.0,
            latency_s: 0.001,
            spin_s: 0.0005,
            cc_send_spin_s: 20e-6,
            gang_slot_s: 0.1,
            gang_switch_s: 0.002,
            ..TsParams::default()
        }
    }

    fn ends(jobs: &[Job], pol: TsPolicy, p: &TsParams) -> Vec<f64> {
        simulate(jobs, pol, p).unwrap().jobs.iter().map(|j| j.end_s).collect()
    }

    fn close(got: &[f64], want: &[f64], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "{what}: got {got:?}, want {want:?}");
        }
    }

    // Toy 1. A (id 1, 2 procs: compute 50 ms, barrier) on nodes 0-1; B (id 2, 1 proc: compute
    // 1 s) on node 0 (both nodes carry 1 process: the lowest window). Both submitted at 0.
    //   t=0: A0, A1 dispatched (switch to 1 ms), compute to 51 ms. B0 ready: goodness 26 = A0's
    //        26, the running process keeps the CPU.
    //   t=51 ms: A0 has been charged 5 ticks (counter 1). Both send (arrive 52 ms) and wait.
    // - Spinning (NLS, DCS, PB): the messages come at 52 ms while A0, A1 spin: A ends at 52 ms;
    //   B0 switches in (1 ms) and computes 1 s: ends 1.053.
    // - HYBRID: A0 and A1 block at once; B0 switches in (to 52 ms). At 52 ms A0's message
    //   wakes it, boosted in its barrier: 1 + 20 + 1000 > B0's 26, it preempts: switch to 53 ms,
    //   done at 53 ms. A1 wakes on its idle node, no switch (it ran last): done at 52 ms. A ends
    //   at 53 ms; B0 switches back in (54 ms) with its 1 s intact: 1.054.
    // - SB: A0 spins 0.5 ms, blocks at 51.5 ms; B0 switches in (52.5 ms). A0's message (52 ms)
    //   wakes it with goodness 1 + 20 = 21 < B0's 26: no preemption. B0, dispatched at 51.5 ms
    //   with 6 ticks, is charged at 60, ..., 110 ms: counter 0 at 110 ms, A0 runs (switch to
    //   111 ms) and ends: A at 111 ms. B0 (epoch: 0/2 + 6) switches back (112 ms) with
    //   1 - (0.110 - 0.0525) = 0.9425 s left: 1.0545.
    // - CC: as SB, each sender first spins 20 µs for its NIC (51.02 ms), then 0.5 ms: blocks at
    //   51.52 ms, B0 computes from 52.52 ms; A at 111 ms, B at 0.112 + 1 - (0.110 - 0.05252).
    // - gang: A takes row 0 (nodes 0-1), B row 1 (node 0). A ends at 52 ms as with spinning;
    //   row 0 is then empty and row 1 takes over at once: 2 ms global switch, 1 s: 1.054.
    #[test]
    fn two_job_toy_coscheduled_peers() {
        let barrier = |s: f64| vec![Phase::Compute { seconds: s }, Phase::Barrier];
        let jobs = vec![job(1, 2, barrier(0.05)), job(2, 1, vec![Phase::Compute { seconds: 1.0 }])];
        let p = toy();
        for pol in [TsPolicy::Nls, TsPolicy::Dcs, TsPolicy::Pb] {
            close(&ends(&jobs, pol, &p), &[0.052, 1.053], pol.name());
        }
        close(&ends(&jobs, TsPolicy::Hybrid, &p), &[0.053, 1.054], "hybrid");
        close(&ends(&jobs, TsPolicy::Sb, &p), &[0.111, 1.0545], "sb");
        close(&ends(&jobs, TsPolicy::Cc, &p), &[0.111, 0.112 + 1.0 - (0.110 - 0.05252)], "cc");
        close(&ends(&jobs, TsPolicy::Gang, &p), &[0.052, 1.054], "gang");
    }

    // Toy 2. B (id 1, 1 proc: compute 1 s) on node 0, then A (id 2, 2 procs: compute 20 ms,
    // barrier) on nodes 0-1, both at 0. B0 runs first; A0 waits (26 vs 26); A1 runs alone,
    // computes to 21 ms and sends to A0 (arrives 22 ms).
    // - NLS: A1 spins. B0 runs until its counter is spent at 60 ms; A0 switches in (61 ms),
    //   computes to 81 ms, sends (A1 gets it at 82 ms), finds A1's message: done at 81 ms. A
    //   ends at 82 ms. B0 (epoch) switches back (82 ms) with 1 - (0.060 - 0.001) s left: 1.023.
    //   PB does nothing (B0 computes, it does not spin), HYBRID and SB only change how A1 waits
    //   on its own node (it wakes at 82 ms without a switch): the same ends.
    // - DCS: A1's message for A0 (not running) at 22 ms favours it: A0 preempts B0 (switch to
    //   23 ms), computes to 43 ms, sends (A1 at 44 ms) and ends: A at 44 ms. B0 (computed
    //   1-22 ms, 0.021 s) switches back (44 ms): 0.044 + 0.979 = 1.023.
    // - CC: A0's send spin (20 µs) ends it at 81.02 ms; B0 back at 82.02 ms: 1.02302.
    // - gang: B row 0, A row 1 (row 0 has no two free nodes). Row 0 runs until the slot ends at
    //   100 ms; row 1 (2 ms switch) computes 102-122 ms, messages at 123 ms: A ends. Row 0
    //   again at once: B0 (2 ms switch) with 1 - 0.099 s left: 0.125 + 0.901 = 1.026.
    #[test]
    fn two_job_toy_descheduled_peer() {
        let jobs = vec![
            job(1, 1, vec![Phase::Compute { seconds: 1.0 }]),
            job(2, 2, vec![Phase::Compute { seconds: 0.02 }, Phase::Barrier]),
        ];
        let p = toy();
        for pol in [TsPolicy::Nls, TsPolicy::Pb, TsPolicy::Hybrid, TsPolicy::Sb] {
            close(&ends(&jobs, pol, &p), &[1.023, 0.082], pol.name());
        }
        close(&ends(&jobs, TsPolicy::Dcs, &p), &[1.023, 0.044], "dcs");
        close(&ends(&jobs, TsPolicy::Cc, &p), &[1.02302, 0.082], "cc");
        close(&ends(&jobs, TsPolicy::Gang, &p), &[1.026, 0.123], "gang");
    }

    // Gang slots: three 1-process jobs of 0.25 s on one node, MPL 3, no context-switch cost.
    // Rows 0, 1, 2 take 100 ms turns; each switch costs 2 ms, so a job computes 98 ms per
    // turn after its first (J1 computes 100 ms from 0). J1: 0.1 + 0.098 = 0.198, then 0.052
    // left at 0.602: ends 0.654; row 0 is empty, row 1 at once: J2 0.054 left from 0.656:
    // 0.710; J3 from 0.712: 0.766.
    #[test]
    fn gang_matrix_slots() {
        let jobs: Vec<Job> = (1..=3).map(|i| job(i, 1, vec![Phase::Compute { seconds: 0.25 }])).collect();
        let p = TsParams { nodes: 1, mpl: 3, context_switch_s: 0.0, ..toy() };
        close(&ends(&jobs, TsPolicy::Gang, &p), &[0.654, 0.710, 0.766], "gang");
        // MPL 2: the third job waits for a row (J1's at 0.654 - 0.002 = ... recomputed by the
        // same rule): it only starts once a row is free.
        let r = simulate(&jobs, TsPolicy::Gang, &TsParams { mpl: 2, ..p }).unwrap();
        assert!(r.jobs[2].start_s > 0.0 && r.jobs[2].start_s == r.jobs[0].end_s.min(r.jobs[1].end_s));
    }

    // A job alone takes its time alone (plus one context switch): the generator's sizing and
    // the network model agree.
    #[test]
    fn job_alone_takes_its_time_alone() {
        let w = generate(&NasParams { jobs: 10, interarrival_s: 1e6, seed: 3, classes: vec!["A".into()], mix: Mix::Nas }).unwrap();
        for pol in TsPolicy::ALL {
            let r = simulate(&w.jobs, pol, &TsParams::default()).unwrap();
            for (rec, j) in r.jobs.iter().zip(&w.jobs) {
                let exec = rec.end_s - rec.start_s;
                // Spinning policies: exact but for the first switch; blocking ones also pay an
                // interrupt per wake-up (HYBRID on class A CG, 3,375 waits in 1.3 s: 2.6%).
                let slack = if pol.spin_limit(&TsParams::default()).is_finite() { 5e-2 * j.runtime_s } else { 1e-6 * j.runtime_s };
                assert!(exec >= j.runtime_s - 1e-6 && exec - j.runtime_s <= slack + 1e-3, "{}: {exec} vs {}", pol.name(), j.runtime_s);
            }
        }
    }

    #[test]
    fn memory_aware_waits_and_others_swap() {
        // Two 2-process jobs of 500 MB per process on 2 nodes: together 1000 MB > 900 MB.
        let mut a = job(1, 2, vec![Phase::Compute { seconds: 1.0 }]);
        let mut b = job(2, 2, vec![Phase::Compute { seconds: 1.0 }]);
        a.memory_mb = 500.0;
        b.memory_mb = 500.0;
        let jobs = vec![a, b];
        let p = TsParams { nodes: 2, mpl: 3, context_switch_s: 0.0, ..TsParams::default() };
        // Memory-aware: B waits for A (1 s) and runs alone: ends at 2 s.
        let r = simulate(&jobs, TsPolicy::Nls, &TsParams { allocation: Allocation::MemoryAware, ..p.clone() }).unwrap();
        close(&[r.jobs[1].start_s, r.jobs[1].end_s], &[1.0, 2.0], "memory-aware");
        // Packing: both run at once, swapping (half speed) until one ends: 2 s of CPU at half
        // speed is 4 s for both, or the first ends at ≥ 2 s and the second after.
        let r = simulate(&jobs, TsPolicy::Nls, &p).unwrap();
        assert_eq!(r.jobs[1].start_s, 0.0);
        let last = r.jobs.iter().map(|j| j.end_s).fold(0.0, f64::max);
        assert!(last > 2.5, "{last}");
    }

    #[test]
    fn seeded_random_allocation_is_deterministic() {
        let w = generate(&NasParams { jobs: 30, interarrival_s: 50.0, seed: 2, classes: vec!["A".into()], mix: Mix::Nas }).unwrap();
        let p = TsParams { allocation: Allocation::Random, seed: 5, ..TsParams::default() };
        let a = simulate(&w.jobs, TsPolicy::Sb, &p).unwrap();
        let b = simulate(&w.jobs, TsPolicy::Sb, &p).unwrap();
        let key = |r: &TsResult| (r.jobs.iter().map(|j| (j.start_s.to_bits(), j.end_s.to_bits())).collect::<Vec<_>>(), r.alloc.clone(), r.events);
        assert_eq!(key(&a), key(&b));
        let c = simulate(&w.jobs, TsPolicy::Sb, &TsParams { seed: 6, ..p }).unwrap();
        assert_ne!(a.alloc, c.alloc);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let jobs = vec![job(1, 1, vec![Phase::Compute { seconds: 1.0 }])];
        for (p, field) in [
            (TsParams { mpl: 0, ..TsParams::default() }, "mpl"),
            (TsParams { spin_s: -1.0, ..TsParams::default() }, "spin_s"),
            (TsParams { swap_slowdown: 0.5, ..TsParams::default() }, "swap_slowdown"),
            (TsParams { nodes: 0, ..TsParams::default() }, "nodes"),
        ] {
            assert_eq!(simulate(&jobs, TsPolicy::Nls, &p).unwrap_err().field, field);
        }
        // Too large for the cluster: skipped and counted.
        let big = vec![job(1, 17, vec![Phase::Compute { seconds: 1.0 }])];
        let r = simulate(&big, TsPolicy::Nls, &TsParams::default()).unwrap();
        assert_eq!((r.jobs.len(), r.skipped.too_large), (0, 1));
    }

    // 100 NAS jobs (classes A and B, one every 100 s on average) under every policy, on the
    // default 16-node, MPL 3 cluster (about 6 s in release for the seven policies): what any
    // run must keep, whatever the policy.
    #[test]
    fn smoke_nas_100() {
        use super::super::batch::{summarize, BUSY_POWER_W, IDLE_POWER_W};
        let w = generate(&NasParams { jobs: 100, interarrival_s: 100.0, seed: 1, classes: vec!["A".into(), "B".into()], mix: Mix::Nas }).unwrap();
        let p = TsParams::default();
        let (nodes, mpl) = (p.nodes as f64, p.mpl as usize);
        let first_submit = w.jobs.iter().map(|j| j.submit_s).fold(f64::INFINITY, f64::min);
        let last_submit = w.jobs.iter().map(|j| j.submit_s).fold(f64::NEG_INFINITY, f64::max);
        for pol in TsPolicy::ALL {
            let r = simulate(&w.jobs, pol, &p).unwrap();
            let name = pol.name();
            // Every job runs (none is wider than 16 nodes) and finishes.
            assert_eq!((r.jobs.len(), r.skipped.too_large, r.alloc.len()), (100, 0, 100), "{name}");
            for (rec, nds) in r.jobs.iter().zip(&r.alloc) {
                let id = rec.id;
                assert!(rec.start_s.is_finite() && rec.end_s.is_finite(), "{name} job {id}: {rec:?}");
                assert!(rec.start_s >= rec.submit_s, "{name} job {id} starts before its submission: {rec:?}");
                // Sharing nodes never makes a job faster than alone: run time, hence response,
                // at least its time alone.
                assert!(rec.end_s - rec.start_s >= rec.runtime_s - 1e-6, "{name} job {id} faster than alone: {rec:?}");
                assert!(rec.response() >= rec.runtime_s - 1e-6, "{name} job {id}: {rec:?}");
                // One process per node, on nodes of the cluster.
                let mut d = nds.clone();
                d.sort_unstable();
                d.dedup();
                assert!(d.len() as u64 == rec.procs && d.iter().all(|&n| (n as u64) < p.nodes), "{name} job {id}: {nds:?}");
                // At most MPL jobs on a node at any time (checked at each start: the count only
                // grows there).
                for n in nds {
                    let on = r.jobs.iter().zip(&r.alloc).filter(|(o, a)| o.start_s <= rec.start_s && rec.start_s < o.end_s && a.contains(n)).count();
                    assert!(on <= mpl, "{name}: {on} jobs on node {n} at {}", rec.start_s);
                }
            }
            let makespan = r.jobs.iter().map(|j| j.end_s).fold(f64::NEG_INFINITY, f64::max);
            assert!(makespan >= last_submit, "{name}: makespan {makespan} before the last submission {last_submit}");
            // Busy accounting: positive, at most every node for the whole run.
            assert!(r.compute_s > 0.0 && r.spin_s >= 0.0 && r.switch_s >= 0.0, "{name}: {r:?}");
            assert!(r.messages > 0 && r.switches > 0, "{name}");
            let s = summarize(&r.jobs, p.nodes, r.busy_s());
            assert_eq!(s.total_time_s, makespan - first_submit, "{name}");
            assert!(s.utilization > 0.0 && s.utilization <= 1.0 + 1e-12, "{name}: utilisation {}", s.utilization);
            // Energy (§5.4): idle part B·N·T, busy part X·U·N·T = X · the busy node-seconds.
            let rel = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
            assert!(rel(s.energy_idle_j, IDLE_POWER_W * nodes * s.total_time_s), "{name}: {s:?}");
            assert!(rel(s.energy_busy_j, BUSY_POWER_W * r.busy_s()), "{name}: {s:?} busy {}", r.busy_s());
            assert!(rel(s.energy_j, s.energy_idle_j + s.energy_busy_j), "{name}: {s:?}");
        }
    }
}
