//! Autonomous task farming on a tree overlay (paper 000, §4).
//!
//! A request-driven simulation of N independent identical tasks of Z MB each. The root
//! holds all N tasks and computes continuously (it takes the next task whenever its CPU
//! is idle). Every other node asks its parent for tasks at t = 0 and keeps asking while it
//! holds fewer than `hold` (queued + computing + in transit to it); a parent sends a task
//! only to a child that asks. A node with children forwards from its own queue by the same
//! algorithm and computes from its queue whenever its CPU is idle (the CPU takes a task
//! before the port does). Latency is zero.
//!
//! Compute speed of node v at each moment (§3.1, rates in MB/s, MB = 2^20 bytes):
//! `C_v × max(0, 1 − IR_r(v)·TR_in(v) − Σ_children IR_s(c)·TR_out(c))`, re-evaluated
//! whenever a transfer into or out of v starts, ends or changes rate; a task in progress
//! keeps its remaining work.
//!
//! Algorithms, i.e. which requesting child a parent serves when it can start a send:
//! single-port (one send at a time, rate min(link, B_s)): `fcfs` (oldest outstanding
//! request), `comprate` (highest compute rate), `bwc` (largest link rate), `ia-single`
//! (lowest IR_s); multi-port `ia-multi` (start a send to the requesting child with the
//! lowest IR_s that is not already receiving, while the active sends' link rates sum below
//! B_s; the active sends share B_s max-min under their link caps); `root-computes` (the
//! root computes everything). With `cutoff` (the §3-informed variant, not what the paper
//! ran: footnote 5) a parent never sends to a child with IR_s·Z·C_parent ≥ 1.
//! Ties are broken by node index, so runs are deterministic.

/// Paper 000's native measurement kernel (the computation the interference runs time).
pub mod kernel;

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::{check_amount, Error, ErrorKind, Result};
use crate::network::sharing::water_fill;

/// IA:Multi's interruptible sends go in chunks of 512 KB (paper 000 §4.1).
pub const CHUNK_MB: f64 = 0.5;

/// The six autonomous scheduling algorithms of §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    IaMulti,
    IaSingle,
    Fcfs,
    CompRate,
    Bwc,
    RootComputes,
}

impl Algorithm {
    pub const NAMES: &'static [&'static str] = &["ia-multi", "ia-single", "fcfs", "comprate", "bwc", "root-computes"];
    pub const ALL: [Algorithm; 6] =
        [Algorithm::IaMulti, Algorithm::IaSingle, Algorithm::Fcfs, Algorithm::CompRate, Algorithm::Bwc, Algorithm::RootComputes];

    pub fn from_name(name: &str) -> Result<Algorithm> {
        match Self::NAMES.iter().position(|n| *n == name) {
            Some(k) => Ok(Self::ALL[k]),
            None => Err(Error::new(
                ErrorKind::Options,
                "algorithm",
                format!("unknown algorithm `{name}` (known: {})", Self::NAMES.join(", ")),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|a| *a == self).unwrap()]
    }

    fn multi_port(self) -> bool {
        self == Algorithm::IaMulti
    }
}

/// A validated tree, one entry per node (index 0..n-1).
#[derive(Debug, Clone, PartialEq)]
pub struct FarmTree {
    /// Parent index; `None` for the (single) root.
    pub parent: Vec<Option<usize>>,
    /// C: tasks/s with no communication.
    pub compute_rate: Vec<f64>,
    /// Link rate from the parent, MB/s (unused for the root).
    pub link_mb_s: Vec<f64>,
    /// IR_r: interference on this node of receiving, per MB/s.
    pub ir_r: Vec<f64>,
    /// IR_s: interference on the parent of sending to this node, per MB/s.
    pub ir_s: Vec<f64>,
    /// B_s of this node, MB/s (`f64::INFINITY` when unlimited).
    pub send_limit_mb_s: Vec<f64>,
    /// Z, MB per task.
    pub task_mb: f64,
    /// IR_s as the schedulers (IA:Single, IA:Multi, the cutoff) see it, when it differs
    /// from the simulated one (the §4 testbed: Table 4 line 7 against line 8).
    pub priority_ir_s: Option<Vec<f64>>,
    /// Link rate as BWC sees it (the §4 testbed: Table 4 line 5 against line 6).
    pub priority_link_mb_s: Option<Vec<f64>>,
}

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FarmOptions {
    pub algorithm: Algorithm,
    /// N, the number of tasks (all at the root at t = 0).
    pub tasks: u64,
    /// The most tasks a non-root node holds: queued + computing + in transit to it.
    pub hold: u32,
    /// Never send to a child with IR_s·Z·C_parent ≥ 1 (§3).
    pub cutoff: bool,
}

impl Default for FarmOptions {
    fn default() -> Self {
        FarmOptions { algorithm: Algorithm::IaMulti, tasks: 1000, hold: 2, cutoff: false }
    }
}

/// The outcome of one farm.
#[derive(Debug, Clone, PartialEq)]
pub struct FarmResult {
    /// Time at which the N-th task completes, s.
    pub makespan: f64,
    /// N / makespan, tasks/s.
    pub throughput: f64,
    /// Tasks computed by each node.
    pub tasks_per_node: Vec<u64>,
    /// Task transfers made (over all links).
    pub transfers: u64,
    /// Events processed (including stale ones).
    pub events: u64,
}

#[derive(Clone, Copy, PartialEq)]
struct Event {
    time: f64,
    kind: u8, // 0: a transfer to `node` ends, 1: `node` finishes computing
    node: u32,
    version: u32,
}

impl Eq for Event {}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on (time, kind, node): reversed for BinaryHeap.
        other
            .time
            .total_cmp(&self.time)
            .then(other.kind.cmp(&self.kind))
            .then(other.node.cmp(&self.node))
            .then(other.version.cmp(&self.version))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn validate(tree: &FarmTree, opts: &FarmOptions) -> Result<(usize, Vec<usize>)> {
    let n = tree.parent.len();
    let err = |field: &str, reason: String| Error::new(ErrorKind::Platform, field, reason);
    if n == 0 {
        return Err(err("nodes", "expected at least one node".into()));
    }
    let lens = [
        ("compute_rate", tree.compute_rate.len()),
        ("link_mb_s", tree.link_mb_s.len()),
        ("ir_r", tree.ir_r.len()),
        ("ir_s", tree.ir_s.len()),
        ("send_limit_mb_s", tree.send_limit_mb_s.len()),
        ("priority_ir_s", tree.priority_ir_s.as_ref().map_or(n, Vec::len)),
        ("priority_link_mb_s", tree.priority_link_mb_s.as_ref().map_or(n, Vec::len)),
    ];
    for (name, len) in lens {
        if len != n {
            return Err(err(name, format!("expected {n} values (one per node), got {len}")));
        }
    }
    check_amount(ErrorKind::Platform, "task_mb", tree.task_mb, true)?;
    for v in 0..n {
        let f = |name: &str| format!("nodes[{v}].{name}");
        check_amount(ErrorKind::Platform, &f("compute_rate"), tree.compute_rate[v], false)?;
        check_amount(ErrorKind::Platform, &f("link_mb_s"), tree.link_mb_s[v], false)?;
        check_amount(ErrorKind::Platform, &f("ir_r"), tree.ir_r[v], false)?;
        check_amount(ErrorKind::Platform, &f("ir_s"), tree.ir_s[v], false)?;
        let bs = tree.send_limit_mb_s[v];
        if bs.is_nan() || bs < 0.0 {
            return Err(err(&f("send_limit_mb_s"), format!("must be >= 0 (or infinite for unlimited), got {bs}")));
        }
        if let Some(p) = &tree.priority_ir_s {
            check_amount(ErrorKind::Platform, &f("priority_ir_s"), p[v], false)?;
        }
        if let Some(p) = &tree.priority_link_mb_s {
            check_amount(ErrorKind::Platform, &f("priority_link_mb_s"), p[v], false)?;
        }
        if let Some(p) = tree.parent[v] {
            if p >= n || p == v {
                return Err(err(&f("parent"), format!("parent index {p} is not another node")));
            }
        }
    }
    let roots: Vec<usize> = (0..n).filter(|&v| tree.parent[v].is_none()).collect();
    if roots.len() != 1 {
        return Err(err("nodes", format!("expected exactly one root, got {}", roots.len())));
    }
    if opts.tasks == 0 {
        return Err(Error::new(ErrorKind::Options, "tasks", "must be >= 1, got 0"));
    }
    if opts.hold == 0 {
        return Err(Error::new(ErrorKind::Options, "hold", "must be >= 1, got 0"));
    }
    let root = roots[0];
    // Breadth-first order (parents before children); a node not reached is on a cycle.
    let (start, kids) = children(&tree.parent);
    let mut order = Vec::with_capacity(n);
    order.push(root);
    let mut k = 0;
    while k < order.len() {
        let v = order[k];
        order.extend_from_slice(&kids[start[v]..start[v + 1]]);
        k += 1;
    }
    if order.len() != n {
        return Err(err("nodes", "the parent links form a cycle not connected to the root".into()));
    }
    Ok((root, order))
}

/// Children of every node in CSR form (by increasing index).
fn children(parent: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let n = parent.len();
    let mut count = vec![0usize; n + 1];
    for p in parent.iter().flatten() {
        count[*p + 1] += 1;
    }
    for v in 0..n {
        count[v + 1] += count[v];
    }
    let mut fill = count.clone();
    let mut kids = vec![0usize; count[n]];
    for (v, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            kids[fill[p]] = v;
            fill[p] += 1;
        }
    }
    (count, kids)
}

struct Sim<'a> {
    t: &'a FarmTree,
    alg: Algorithm,
    multi: bool,
    z: f64,
    hold: u32,
    start: Vec<usize>,
    kids: Vec<usize>,
    eligible: Vec<bool>,
    prio_link: &'a [f64],
    prio_irs: &'a [f64],
    heap: BinaryHeap<Event>,
    // CPU
    queue: Vec<u64>,
    busy: Vec<bool>,
    work: Vec<f64>,
    speed: Vec<f64>,
    cstamp: Vec<f64>,
    cver: Vec<u32>,
    // transfer into each node
    receiving: Vec<bool>,
    tr_left: Vec<f64>,
    tr_rate: Vec<f64>,
    tr_stamp: Vec<f64>,
    tver: Vec<u32>,
    // each node's sends in progress (children)
    active: Vec<Vec<usize>>,
    requests: Vec<VecDeque<f64>>,
    done: Vec<u64>,
    completed: u64,
    transfers: u64,
    kicks: Vec<usize>,
    scratch_caps: Vec<f64>,
    scratch_rates: Vec<f64>,
}

impl<'a> Sim<'a> {
    fn advance_cpu(&mut self, v: usize, now: f64) {
        if self.busy[v] {
            self.work[v] = (self.work[v] - self.speed[v] * (now - self.cstamp[v])).max(0.0);
        }
        self.cstamp[v] = now;
    }

    /// Set v's speed from its current transfers (after `advance_cpu(v, now)`).
    fn respeed(&mut self, v: usize, now: f64) {
        let t = self.t;
        let mut f = 1.0;
        if self.receiving[v] {
            f -= t.ir_r[v] * self.tr_rate[v];
        }
        for &c in &self.active[v] {
            f -= t.ir_s[c] * self.tr_rate[c];
        }
        self.speed[v] = t.compute_rate[v] * f.max(0.0);
        self.cver[v] = self.cver[v].wrapping_add(1);
        if self.busy[v] && self.speed[v] > 0.0 {
            let time = now + self.work[v] / self.speed[v];
            self.heap.push(Event { time, kind: 1, node: v as u32, version: self.cver[v] });
        }
    }

    /// Re-share p's send capacity after its set of sends changed (`gone`: a child whose
    /// transfer just ended), and re-evaluate the compute speed of everyone affected.
    fn reshare(&mut self, p: usize, now: f64, gone: Option<usize>) {
        let affected = std::mem::take(&mut self.active[p]);
        for &c in &affected {
            self.advance_cpu(c, now);
            self.tr_left[c] = (self.tr_left[c] - self.tr_rate[c] * (now - self.tr_stamp[c])).max(0.0);
            self.tr_stamp[c] = now;
        }
        self.advance_cpu(p, now);
        if let Some(g) = gone {
            self.advance_cpu(g, now);
        }
        let t = self.t;
        let bs = t.send_limit_mb_s[p];
        let mut rates = std::mem::take(&mut self.scratch_rates);
        if self.multi {
            let mut caps = std::mem::take(&mut self.scratch_caps);
            caps.clear();
            caps.extend(affected.iter().map(|&c| t.link_mb_s[c]));
            water_fill(&caps, bs, &mut rates);
            self.scratch_caps = caps;
        } else {
            rates.clear();
            rates.extend(affected.iter().map(|&c| t.link_mb_s[c].min(bs)));
        }
        for (i, &c) in affected.iter().enumerate() {
            let r = rates[i];
            self.tr_rate[c] = r;
            self.tver[c] = self.tver[c].wrapping_add(1);
            let time = now + self.tr_left[c] / r;
            self.heap.push(Event { time, kind: 0, node: c as u32, version: self.tver[c] });
        }
        self.scratch_rates = rates;
        for &c in &affected {
            self.respeed(c, now);
        }
        self.active[p] = affected;
        self.respeed(p, now);
        if let Some(g) = gone {
            self.respeed(g, now);
        }
    }

    fn pick(&self, p: usize) -> Option<usize> {
        let t = self.t;
        let mut best: Option<(f64, usize)> = None;
        for &c in &self.kids[self.start[p]..self.start[p + 1]] {
            if !self.eligible[c] || self.receiving[c] {
                continue;
            }
            let Some(&asked) = self.requests[c].front() else { continue };
            let key = match self.alg {
                Algorithm::Fcfs => asked,
                Algorithm::CompRate => -t.compute_rate[c],
                Algorithm::Bwc => -self.prio_link[c],
                Algorithm::IaSingle | Algorithm::IaMulti => self.prio_irs[c],
                Algorithm::RootComputes => return None,
            };
            // Children are scanned by increasing index: a strict `<` keeps the lowest on ties.
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, c));
            }
        }
        best.map(|b| b.1)
    }

    fn start_send(&mut self, p: usize, c: usize, now: f64) {
        self.queue[p] -= 1;
        self.requests[c].pop_front();
        self.receiving[c] = true;
        self.tr_left[c] = self.z;
        self.tr_rate[c] = 0.0;
        self.tr_stamp[c] = now;
        self.active[p].push(c);
        self.transfers += 1;
        if let Some(gp) = self.t.parent[p] {
            // p holds one task fewer: it asks its own parent for another.
            self.requests[p].push_back(now);
            self.kicks.push(gp);
        }
    }

    /// Let v start computing and sending as far as its rules allow.
    fn kick(&mut self, v: usize, now: f64) {
        let is_root = self.t.parent[v].is_none();
        if !self.busy[v] && self.queue[v] > 0 && self.t.compute_rate[v] > 0.0 && (is_root || self.alg != Algorithm::RootComputes)
        {
            self.queue[v] -= 1;
            self.busy[v] = true;
            self.work[v] = 1.0;
            self.cstamp[v] = now;
            self.respeed(v, now);
        }
        if self.alg == Algorithm::RootComputes || self.start[v] == self.start[v + 1] {
            return;
        }
        let mut started = false;
        if self.multi {
            // IA:Multi's rule. The real sender re-checks it after each 512 KB chunk of every
            // send in progress; its inputs (the sends in progress, the requests, the queue)
            // change only at the events where this function runs (a send ends, a request
            // arrives, a task arrives), so between events a chunk boundary finds the same
            // answer as the last event did. Checking at the events themselves is the
            // chunked rule with requests noticed at once (latency zero): chunk events would
            // add nothing but a delay of at most one chunk before a new request is served.
            let bs = self.t.send_limit_mb_s[v];
            while self.queue[v] > 0 {
                let used: f64 = self.active[v].iter().map(|&c| self.t.link_mb_s[c]).sum();
                if used >= bs {
                    break;
                }
                let Some(c) = self.pick(v) else { break };
                self.start_send(v, c, now);
                started = true;
            }
        } else if self.active[v].is_empty() && self.queue[v] > 0 {
            if let Some(c) = self.pick(v) {
                self.start_send(v, c, now);
                started = true;
            }
        }
        if started {
            self.reshare(v, now, None);
        }
    }

    fn run(&mut self, root: usize, tasks: u64) -> Result<f64> {
        self.kicks.clear();
        // Requests of t = 0 arrive together: the root starts after every node is set up.
        let n = self.queue.len();
        for v in 0..n {
            self.kicks.push(v);
        }
        self.drain(0.0);
        let _ = root;
        while let Some(ev) = self.heap.pop() {
            let v = ev.node as usize;
            let now = ev.time;
            if ev.kind == 0 {
                if ev.version != self.tver[v] || !self.receiving[v] {
                    continue;
                }
                let p = self.t.parent[v].expect("a transfer goes to a non-root node");
                self.tr_left[v] = 0.0;
                self.tr_stamp[v] = now;
                self.receiving[v] = false;
                self.tr_rate[v] = 0.0;
                let pos = self.active[p].iter().position(|&c| c == v).expect("an active send");
                self.active[p].remove(pos);
                self.queue[v] += 1;
                self.reshare(p, now, Some(v));
                self.kicks.push(v);
                self.kicks.push(p);
            } else {
                if ev.version != self.cver[v] || !self.busy[v] {
                    continue;
                }
                self.busy[v] = false;
                self.work[v] = 0.0;
                self.cstamp[v] = now;
                self.done[v] += 1;
                self.completed += 1;
                if self.completed == tasks {
                    return Ok(now);
                }
                self.kicks.push(v);
                if let Some(p) = self.t.parent[v] {
                    self.requests[v].push_back(now);
                    self.kicks.push(p);
                }
            }
            self.drain(now);
        }
        Err(Error::new(
            ErrorKind::Deadlock,
            "",
            format!("the farm stalls with {} of {tasks} tasks computed (no node can make progress)", self.completed),
        ))
    }

    fn drain(&mut self, now: f64) {
        // Kicks in the order they were asked for (a parent after the child that asked).
        let mut k = 0;
        while k < self.kicks.len() {
            let v = self.kicks[k];
            self.kick(v, now);
            k += 1;
        }
        self.kicks.clear();
    }
}

/// Run the farm. Errors: malformed columns, tasks or hold 0, or a farm that cannot
/// finish (no node that can compute).
pub fn simulate(tree: &FarmTree, opts: &FarmOptions) -> Result<FarmResult> {
    let (root, order) = validate(tree, opts)?;
    let n = tree.parent.len();
    let (start, kids) = children(&tree.parent);
    let prio_irs: &[f64] = tree.priority_ir_s.as_deref().unwrap_or(&tree.ir_s);
    let prio_link: &[f64] = tree.priority_link_mb_s.as_deref().unwrap_or(&tree.link_mb_s);
    let multi = opts.algorithm.multi_port();
    // A child is worth a send when the link moves data, the cutoff allows it, and some
    // node of its subtree can compute (else its tasks would never finish).
    let mut eligible = vec![false; n];
    let mut useful = vec![false; n];
    for &v in order.iter().rev() {
        let mut u = tree.compute_rate[v] > 0.0;
        for &c in &kids[start[v]..start[v + 1]] {
            let rate = tree.link_mb_s[c].min(tree.send_limit_mb_s[v]);
            let cut = opts.cutoff && prio_irs[c] * tree.task_mb * tree.compute_rate[v] >= 1.0;
            eligible[c] = rate > 0.0 && !cut && useful[c];
            u |= eligible[c];
        }
        useful[v] = u;
    }
    if !useful[root] || (opts.algorithm == Algorithm::RootComputes && tree.compute_rate[root] <= 0.0) {
        return Err(Error::new(ErrorKind::Options, "tasks", "no node can compute the tasks (every compute rate reachable is 0)"));
    }
    let mut requests = vec![VecDeque::new(); n];
    for (v, r) in requests.iter_mut().enumerate() {
        if v != root {
            r.extend(std::iter::repeat_n(0.0, opts.hold as usize));
        }
    }
    let mut queue = vec![0u64; n];
    queue[root] = opts.tasks;
    let mut sim = Sim {
        t: tree,
        alg: opts.algorithm,
        multi,
        z: tree.task_mb,
        hold: opts.hold,
        start,
        kids,
        eligible,
        prio_link,
        prio_irs,
        heap: BinaryHeap::new(),
        queue,
        busy: vec![false; n],
        work: vec![0.0; n],
        speed: vec![0.0; n],
        cstamp: vec![0.0; n],
        cver: vec![0; n],
        receiving: vec![false; n],
        tr_left: vec![0.0; n],
        tr_rate: vec![0.0; n],
        tr_stamp: vec![0.0; n],
        tver: vec![0; n],
        active: vec![Vec::new(); n],
        requests,
        done: vec![0; n],
        completed: 0,
        transfers: 0,
        kicks: Vec::new(),
        scratch_caps: Vec::new(),
        scratch_rates: Vec::new(),
    };
    let _ = sim.hold;
    let makespan = sim.run(root, opts.tasks)?;
    let events = sim.cver.iter().map(|&x| x as u64).sum::<u64>() + sim.tver.iter().map(|&x| x as u64).sum::<u64>();
    Ok(FarmResult {
        makespan,
        throughput: opts.tasks as f64 / makespan,
        tasks_per_node: sim.done,
        transfers: sim.transfers,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::SplitMix64;

    const INF: f64 = f64::INFINITY;

    /// A fork graph: root (C0, B_s) and leaves (C, link, IR_r, IR_s).
    fn fork(c0: f64, bs: f64, z: f64, leaves: &[(f64, f64, f64, f64)]) -> FarmTree {
        let n = leaves.len() + 1;
        let mut t = FarmTree {
            parent: vec![None],
            compute_rate: vec![c0],
            link_mb_s: vec![0.0],
            ir_r: vec![0.0],
            ir_s: vec![0.0],
            send_limit_mb_s: vec![bs],
            task_mb: z,
            priority_ir_s: None,
            priority_link_mb_s: None,
        };
        for &(c, l, r, s) in leaves {
            t.parent.push(Some(0));
            t.compute_rate.push(c);
            t.link_mb_s.push(l);
            t.ir_r.push(r);
            t.ir_s.push(s);
            t.send_limit_mb_s.push(INF);
        }
        assert_eq!(t.parent.len(), n);
        t
    }

    fn run(t: &FarmTree, alg: Algorithm, tasks: u64, hold: u32) -> FarmResult {
        simulate(t, &FarmOptions { algorithm: alg, tasks, hold, cutoff: false }).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn taskfarm_one_child_by_hand() {
        // Root C=1, child C=1, link 1 MB/s, Z=1 MB, hold 2, N=4, no interference.
        // t=0: root computes #1 (to 1), sends #2 (to 1). t=1: child computes #2 (to 2), root
        // sends #3 (to 2) and computes #4 (to 2). t=2: child computes #3 (to 3). Makespan 3.
        let t = fork(1.0, INF, 1.0, &[(1.0, 1.0, 0.0, 0.0)]);
        for alg in [Algorithm::Fcfs, Algorithm::IaSingle, Algorithm::IaMulti, Algorithm::Bwc, Algorithm::CompRate] {
            let r = run(&t, alg, 4, 2);
            assert!(close(r.makespan, 3.0), "{alg:?}: {}", r.makespan);
            assert_eq!(r.tasks_per_node, vec![2, 2]);
            assert!(close(r.throughput, 4.0 / 3.0));
        }
    }

    #[test]
    fn taskfarm_interference_slows_the_root_while_sending() {
        // Root C=1, IR_s=0.25 per MB/s, link 2 MB/s, Z=1: sending takes 0.5 s at 2 MB/s and
        // the root computes at 1 − 0.5 = 0.5 meanwhile: 0.25 of its task by t=0.5, the rest
        // (0.75) at full speed: done at 1.25. The child (C=4) is done at 0.5 + 0.25 = 0.75.
        let t = fork(1.0, INF, 1.0, &[(4.0, 2.0, 0.0, 0.25)]);
        let r = run(&t, Algorithm::Fcfs, 2, 1);
        assert!(close(r.makespan, 1.25), "{}", r.makespan);
        assert_eq!(r.tasks_per_node, vec![1, 1]);
        // Receive interference on the child: root C=0 (it only sends), child C=4,
        // IR_r=0.125, link 4 MB/s, Z=1, N=2, hold 2. #1 arrives at 0.25; #2 is sent
        // 0.25→0.5 and the child computes #1 meanwhile at 4·(1 − 0.125·4) = 2 tasks/s (half
        // of it), the other half at 4 tasks/s: done at 0.625; #2 is done at 0.875 (0.75
        // without interference).
        let t = fork(0.0, INF, 1.0, &[(4.0, 4.0, 0.125, 0.0)]);
        assert!(close(run(&t, Algorithm::Fcfs, 2, 2).makespan, 0.875));
        let t = fork(0.0, INF, 1.0, &[(4.0, 4.0, 0.0, 0.0)]);
        assert!(close(run(&t, Algorithm::Fcfs, 2, 2).makespan, 0.75));
    }

    #[test]
    fn taskfarm_multi_port_shares_the_send_limit() {
        // Root C=0, two children C=1, links 6 MB/s, B_s 8, Z=4, N=2, hold 1.
        // IA:Multi sends both at once at 4 MB/s each: arrive at 1, done at 2.
        // Single-port: 4/6 s each, one after the other: the second is done at 8/6 + 1.
        let t = fork(0.0, 8.0, 4.0, &[(1.0, 6.0, 0.0, 0.0), (1.0, 6.0, 0.0, 0.0)]);
        assert!(close(run(&t, Algorithm::IaMulti, 2, 1).makespan, 2.0));
        assert!(close(run(&t, Algorithm::IaSingle, 2, 1).makespan, 8.0 / 6.0 + 1.0));
        // A send whose link fills B_s alone blocks a second start: links 8 and 6, B_s 8.
        let t = fork(0.0, 8.0, 4.0, &[(1.0, 8.0, 0.0, 0.0), (1.0, 6.0, 0.0, 0.01)]);
        let r = run(&t, Algorithm::IaMulti, 2, 1);
        assert!(close(r.makespan, 0.5 + 4.0 / 6.0 + 1.0), "{}", r.makespan);
        let mut out = Vec::new();
        water_fill(&[1.0, 6.0, 6.0], 8.0, &mut out);
        assert_eq!(out, vec![1.0, 3.5, 3.5]);
    }

    #[test]
    fn taskfarm_root_computes() {
        let t = fork(9.057 / 5.0, 10.7, 2.0, &[(23.86 / 5.0, 10.8, 0.0443, 0.0333)]);
        let r = run(&t, Algorithm::RootComputes, 1000, 2);
        assert!(close(r.makespan, 1000.0 * 5.0 / 9.057), "{}", r.makespan);
        assert_eq!(r.tasks_per_node, vec![1000, 0]);
    }

    #[test]
    fn taskfarm_priorities_and_cutoff() {
        // Two identical children but IR_s 0.1 and 0.01: IA serves child 2 first; the
        // cutoff (IR_s·Z·C ≥ 1 for child 1 at Z=10, C=1) never sends to child 1.
        let t = fork(1.0, INF, 10.0, &[(1.0, 10.0, 0.0, 0.1), (1.0, 10.0, 0.0, 0.01)]);
        let r = simulate(&t, &FarmOptions { algorithm: Algorithm::IaSingle, tasks: 50, hold: 2, cutoff: true }).unwrap();
        assert_eq!(r.tasks_per_node[1], 0);
        assert!(r.tasks_per_node[2] > 0);
        let r = run(&t, Algorithm::Fcfs, 50, 2);
        assert!(r.tasks_per_node[1] > 0 && r.tasks_per_node[2] > 0);
        assert!(Algorithm::from_name("nope").is_err());
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()).unwrap(), a);
        }
        let bad = simulate(&t, &FarmOptions { tasks: 0, ..Default::default() }).unwrap_err();
        assert_eq!(bad.field, "tasks");
    }

    /// The §3.2.1 multi-port bound of a fork graph (greedy, children by increasing IR_s).
    fn fork_bound(t: &FarmTree) -> f64 {
        let z = t.task_mb;
        let c0 = t.compute_rate[0];
        let mut kids: Vec<usize> = (1..t.parent.len()).collect();
        kids.sort_by(|&a, &b| t.ir_s[a].total_cmp(&t.ir_s[b]).then(a.cmp(&b)));
        let mut num = c0;
        let mut total = 0.0;
        let mut room = t.send_limit_mb_s[0] / z;
        for &i in &kids {
            let load = t.ir_s[i] * z * c0;
            if load >= 1.0 {
                continue;
            }
            let c = t.compute_rate[i];
            let that = (t.link_mb_s[i] / z).min(c / (1.0 + t.ir_r[i] * z * c));
            let mut x = that.min(room);
            if load > 0.0 {
                x = x.min((num - total) / load); // (3): S(root) ≥ 0
            }
            if x <= 0.0 {
                break;
            }
            num += (1.0 - load) * x;
            total += x;
            room -= x;
            if x < that {
                break;
            }
        }
        num
    }

    #[test]
    fn taskfarm_never_beats_the_multi_port_bound() {
        let mut rng = SplitMix64::new(7);
        let mut worst: f64 = 0.0;
        for _ in 0..60 {
            let k = 1 + rng.below_usize(6);
            let leaves: Vec<_> = (0..k)
                .map(|_| (rng.uniform(0.1, 5.0), rng.uniform(0.2, 12.0), rng.uniform(0.0, 0.06), rng.uniform(0.0, 0.06)))
                .collect();
            let t = fork(rng.uniform(0.1, 5.0), rng.uniform(1.0, 12.0), rng.uniform(0.5, 10.0), &leaves);
            let b = fork_bound(&t);
            for alg in Algorithm::ALL {
                for cutoff in [false, true] {
                    let r = simulate(&t, &FarmOptions { algorithm: alg, tasks: 300, hold: 2, cutoff }).unwrap();
                    assert!(r.throughput <= b * (1.0 + 1e-9), "{alg:?}: {} > bound {b}", r.throughput);
                    worst = worst.max(r.throughput / b);
                }
            }
        }
        eprintln!("taskfarm: best farm/bound ratio over random fork graphs: {worst:.4}");
    }

    fn random_tree(n: usize, seed: u64) -> FarmTree {
        let mut rng = SplitMix64::new(seed);
        let mut t = FarmTree {
            parent: vec![None],
            compute_rate: vec![rng.uniform(0.5, 5.0)],
            link_mb_s: vec![0.0],
            ir_r: vec![0.0],
            ir_s: vec![0.0],
            send_limit_mb_s: vec![rng.uniform(5.0, 15.0)],
            task_mb: 2.0,
            priority_ir_s: None,
            priority_link_mb_s: None,
        };
        for v in 1..n {
            t.parent.push(Some(rng.below_usize(v)));
            t.compute_rate.push(rng.uniform(0.5, 5.0));
            t.link_mb_s.push(rng.uniform(1.0, 12.0));
            t.ir_r.push(rng.uniform(0.0, 0.05));
            t.ir_s.push(rng.uniform(0.0, 0.05));
            t.send_limit_mb_s.push(rng.uniform(5.0, 15.0));
        }
        t
    }

    #[test]
    fn taskfarm_deterministic() {
        let t = random_tree(60, 3);
        for alg in Algorithm::ALL {
            let a = run(&t, alg, 2000, 2);
            let b = run(&t, alg, 2000, 2);
            assert_eq!(a, b);
            assert_eq!(a.tasks_per_node.iter().sum::<u64>(), 2000);
        }
    }

    #[test]
    fn taskfarm_100k_tasks_on_1000_nodes() {
        let t = random_tree(1000, 11);
        for alg in [Algorithm::IaMulti, Algorithm::Fcfs] {
            let clock = std::time::Instant::now();
            let r = run(&t, alg, 100_000, 2);
            let secs = clock.elapsed().as_secs_f64();
            eprintln!(
                "taskfarm: {} 100,000 tasks on 1,000 nodes: {secs:.3} s ({} events, {} transfers, makespan {:.1} s)",
                alg.name(),
                r.events,
                r.transfers,
                r.makespan
            );
            assert_eq!(r.tasks_per_node.iter().sum::<u64>(), 100_000);
            assert!(secs < 60.0);
        }
    }
}
