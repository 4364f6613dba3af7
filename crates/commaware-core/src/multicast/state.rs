//! Scheduling state shared by the eleven heuristics of §4 and §5: sender sets
//! A_k in sender order, pending sources SR_j per receiver, waiting receivers
//! B_k per source, the task lists, and the receiver scan "best (source,
//! sender) for receiver j". The scan uses `bynode` when there is no
//! preemption and one X for every pair; otherwise per-source heaps of sender
//! times, refreshed lazily (a node's times only grow, so a stale key is a
//! lower bound on its current value), with lower bounds to skip sources.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::bynode::ByNode;
use super::keys::Mc;
use super::model::{Costs, Instance};
use super::schedule::{Schedule, Selection, Task, TaskKind};
use super::tasklist::{Kind, TaskLists, NIL};


/// Heap entry: `key` = sender's send-available time + S, computed at `ver`.
#[derive(Clone, Copy)]
struct HEntry {
    key: f64,
    node: u32,
    ver: u32,
}
impl PartialEq for HEntry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for HEntry {}
impl PartialOrd for HEntry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for HEntry {
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.total_cmp(&self.key) // min-heap
    }
}

pub(crate) struct State {
    pub cost: Costs,
    pub preemptive: bool,
    /// Use brute-force scans instead of the heaps (reference for tests).
    pub naive: bool,
    pub mcs: Vec<Mc>,
    pub lists: TaskLists,
    /// Receive-available time of each node (Fig. 15): the end of its last task.
    pub ra: Vec<f64>,
    /// Bumped whenever a node's task list changes.
    version: Vec<u32>,
    /// A_k in sender order: the source, then (receive time, node) ascending.
    pub senders: Vec<Vec<(f64, u32)>>,
    heaps: Vec<BinaryHeap<HEntry>>,
    /// The key at the top of each heap (a dense copy for the bound scan).
    top: Vec<f64>,
    /// The fast receiver scan, when it applies (see `bynode`).
    by_node: Option<ByNode>,
    /// SR_j as a bitset over messages (`words` words per node), and its size.
    words: usize,
    pending: Vec<u64>,
    npending: Vec<u32>,
    /// B_k: receivers still waiting for message k; wpos[k * N + j] is j's index in it.
    pub waiting: Vec<Vec<u32>>,
    wpos: Vec<u32>,
    /// got[i * M + k]: node i's receive task of message k, or NIL.
    got: Vec<u32>,
    /// The smallest message size.
    pub min_bytes: f64,
    /// Lower bound on X(i, j) over senders i, per receiver j.
    xmin: Vec<f64>,
    pub seq: Vec<Selection>,
    pub remaining: usize,
}

impl State {
    /// The instance must be valid (`Instance::validate`).
    pub fn new(inst: &Instance, preemptive: bool) -> Self {
        let cost = Costs::new(inst);
        let n = cost.n;
        let mut order: Vec<usize> = (0..inst.multicasts.len()).collect();
        order.sort_by_key(|&k| inst.multicasts[k].source);
        let nm = order.len();
        let words = nm.div_ceil(64).max(1);
        let mut mcs = Vec::with_capacity(nm);
        let mut pending = vec![0u64; n * words];
        let mut npending = vec![0u32; n];
        let mut waiting = Vec::with_capacity(nm);
        let mut wpos = vec![NIL; nm * n];
        let mut heaps = Vec::with_capacity(nm);
        for (m, &k) in order.iter().enumerate() {
            let mc = &inst.multicasts[k];
            let bytes = mc.bytes + 0.0;
            for (q, &d) in mc.destinations.iter().enumerate() {
                pending[d * words + m / 64] |= 1 << (m % 64);
                npending[d] += 1;
                wpos[m * n + d] = q as u32;
            }
            waiting.push(mc.destinations.iter().map(|&d| d as u32).collect());
            heaps.push(BinaryHeap::from(vec![HEntry {
                key: cost.s(mc.source, bytes),
                node: mc.source as u32,
                ver: 0,
            }]));
            mcs.push(Mc {
                src: mc.source,
                bytes,
            });
        }
        let xmin = (0..n)
            .map(|j| match cost.scalar_x {
                Some(x) => x,
                None => (0..n)
                    .filter(|&i| i != j)
                    .map(|i| cost.x(i, j))
                    .fold(f64::INFINITY, f64::min),
            })
            .collect();
        let min_bytes = match mcs.is_empty() {
            true => 0.0,
            false => mcs.iter().map(|mc| mc.bytes).fold(f64::INFINITY, f64::min),
        };
        let by_node = match cost.scalar_x.is_some() && !preemptive {
            true => ByNode::new(&cost, &mcs),
            false => None,
        };
        State {
            preemptive,
            naive: false,
            senders: waiting
                .iter()
                .zip(&mcs)
                .map(|(w, mc): (&Vec<u32>, &Mc)| {
                    let mut a = Vec::with_capacity(w.len() + 1);
                    a.push((0.0, mc.src as u32));
                    a
                })
                .collect(),
            mcs,
            lists: {
                // A receive and a send per delivery: no regrowth.
                let mut l = TaskLists::new(n);
                l.recs.reserve_exact(2 * inst.deliveries());
                l
            },
            ra: vec![0.0; n],
            version: vec![0; n],
            top: heaps.iter().map(|h| h.peek().unwrap().key).collect(),
            heaps,
            by_node,
            words,
            pending,
            npending,
            waiting,
            wpos,
            got: vec![NIL; n * nm],
            xmin,
            min_bytes,
            seq: Vec::with_capacity(inst.deliveries()),
            remaining: inst.deliveries(),
            cost,
        }
    }

    #[inline]
    pub fn s(&self, i: usize, m: usize) -> f64 {
        self.cost.s(i, self.mcs[m].bytes)
    }
    #[inline]
    pub fn r(&self, j: usize, m: usize) -> f64 {
        self.cost.r(j, self.mcs[m].bytes)
    }
    #[inline]
    pub fn x(&self, i: usize, j: usize) -> f64 {
        self.cost.x(i, j)
    }

    /// Does node j still wait for a message?
    pub fn is_waiting(&self, j: usize) -> bool {
        self.npending[j] > 0
    }

    pub fn has_received(&self, i: usize, m: usize) -> bool {
        self.got[i * self.mcs.len() + m] != NIL
    }

    /// Index of (node, message) in per-pair arrays.
    pub fn slot(&self, i: usize, m: usize) -> usize {
        i * self.mcs.len() + m
    }

    /// The task after which node i would put its send of message m: the tail
    /// without preemption; with preemption, Fig. 13/16.
    fn send_target(&self, i: usize, m: usize) -> u32 {
        if !self.preemptive {
            return self.lists.tail[i];
        }
        let got = if self.mcs[m].src == i {
            NIL
        } else {
            self.got[self.slot(i, m)]
        };
        self.lists.send_target(i, got, self.s(i, m))
    }

    /// Send-available time of i for m plus S(i, l_m): when m leaves i (eq. 5).
    #[inline]
    pub fn v(&self, i: usize, m: usize) -> f64 {
        if !self.preemptive {
            return self.ra[i] + self.s(i, m);
        }
        self.lists.end(self.send_target(i, m)) + self.s(i, m)
    }

    /// Eqs. (5)-(6): completion of (send, i, j, m) when j is receive-available at `ra`.
    #[inline]
    pub fn cand(&self, i: usize, j: usize, m: usize, ra: f64) -> f64 {
        (self.v(i, m) + self.x(i, j) * self.mcs[m].bytes).max(ra) + self.r(j, m)
    }

    /// A value >= `bound` when the exact one is (the caller wants only a
    /// completion below `bound`), so stale heap tops past it stay unrefreshed.
    fn best_of_source(&mut self, j: usize, m: usize, ra: f64, bound: f64) -> f64 {
        let l = self.mcs[m].bytes;
        let r = self.r(j, m);
        if let (Some(x), false) = (self.cost.scalar_x, self.naive) {
            // v is the same for every receiver: the heap gives the sender.
            // Stale keys are lower bounds, so is the top's completion.
            loop {
                let top = *self.heaps[m].peek().unwrap();
                let node = top.node as usize;
                let c = (top.key + x * l).max(ra) + r;
                if c >= bound || top.ver == self.version[node] {
                    return c; // cannot beat the bound, or exact
                }
                let key = self.v(node, m);
                if key + x * l <= ra {
                    return ra + r; // receiver-bound: any sender that early gives the same
                }
                *self.heaps[m].peek_mut().unwrap() = HEntry {
                    key,
                    node: top.node,
                    ver: self.version[node],
                };
                self.top[m] = self.heaps[m].peek().unwrap().key;
            }
        }
        self.senders[m]
            .iter()
            .map(|&(_, i)| self.cand(i as usize, j, m, ra))
            .fold(f64::INFINITY, f64::min)
    }

    /// Receiver-first step (§4.3-4.4): scan j's pending sources in ascending
    /// order, keep the first strict minimum of completion. Returns (completion,
    /// source index). Sources whose lower bound cannot beat the best are skipped.
    pub fn best_for(&mut self, j: usize) -> (f64, usize) {
        self.best_for_above(j, f64::NEG_INFINITY)
    }

    /// As [`State::best_for`], given `floor`, a lower bound on j's best
    /// completion: the scan stops once it reaches the floor, since later
    /// sources can only tie.
    fn best_for_above(&mut self, j: usize, floor: f64) -> (f64, usize) {
        let ra = self.ra[j];
        if let (Some(b), false) = (self.by_node.as_mut(), self.naive) {
            let w = self.words;
            return b.best_for(&self.cost, j, ra, &self.pending[j * w..(j + 1) * w]);
        }
        let (mut best, mut bm) = (f64::INFINITY, usize::MAX);
        let (w, xmin) = (self.words, self.xmin[j]);
        // Every completion at j is at least ra + R(j, smallest message).
        let floor = match self.naive {
            true => f64::NEG_INFINITY,
            false => floor.max(ra + self.cost.r(j, self.min_bytes)),
        };
        'scan: for q in 0..w {
            let mut bits = self.pending[j * w + q];
            while bits != 0 {
                if best <= floor {
                    break 'scan;
                }
                let m = q * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if !self.naive {
                    let l = self.mcs[m].bytes;
                    let lb = (self.top[m] + xmin * l).max(ra) + self.r(j, m);
                    if lb >= best {
                        continue;
                    }
                }
                let c = self.best_of_source(j, m, ra, best);
                if c < best {
                    best = c;
                    bm = m;
                }
            }
        }
        (best, bm)
    }

    /// The completion of `best_for(j)`, and its source when that came for
    /// free; `floor` is a lower bound on that completion.
    pub fn best_value(&mut self, j: usize, floor: f64) -> (f64, Option<usize>) {
        if let (Some(b), false) = (self.by_node.as_ref(), self.naive) {
            let w = self.words;
            return (b.best_value(&self.cost, j, self.ra[j], &self.pending[j * w..(j + 1) * w]), None);
        }
        let (c, m) = self.best_for_above(j, floor);
        (c, Some(m))
    }

    /// Without preemption, with one X and one message size: (size, Q) where
    /// Q + R(j, size) is a lower bound on every receiver j's best completion
    /// (Q = least sender time + X size; it never decreases).
    pub fn front(&self) -> Option<(f64, f64)> {
        match (&self.by_node, self.naive, self.remaining) {
            (Some(b), false, 1..) => b.front(&self.cost),
            _ => None,
        }
    }

    /// True when node i, a new holder of m, cannot lower any receiver's best
    /// completion: another holder of m sends it no later (false: unknown).
    pub fn new_sender_dominated(&self, i: usize, m: usize) -> bool {
        match (&self.by_node, self.naive) {
            (Some(b), false) => b.dominated(i, m),
            _ => false,
        }
    }

    /// The first sender in sender order whose completion to j is `c`.
    pub fn sender_for(&self, j: usize, m: usize, c: f64) -> usize {
        let ra = self.ra[j];
        if let (Some(b), false) = (&self.by_node, self.naive) {
            if c != ra + self.r(j, m) {
                // Not receiver-bound: only the few nodes reaching exactly c qualify.
                let rank = |i: usize| match i == self.mcs[m].src {
                    true => (f64::NEG_INFINITY, i),
                    false => (self.lists.end(self.got[self.slot(i, m)]), i),
                };
                return b
                    .sender_reaching(&self.cost, j, m, ra, c, rank)
                    .expect("a sender reaches c");
            }
        }
        for &(_, i) in &self.senders[m] {
            if self.cand(i as usize, j, m, ra) == c {
                return i as usize;
            }
        }
        unreachable!("no sender reaches the selected completion")
    }

    /// Records the selection (send, i, j, m) completing at `c`: the receiver's
    /// list first (Fig. 14), then the sender's (Fig. 13), then the sets.
    pub fn commit(&mut self, i: usize, j: usize, m: usize, c: f64) {
        let n = self.cost.n;
        let rc = self.r(j, m);
        let slot = self.slot(j, m);
        self.got[slot] = self.lists.append_recv(j, i, m, c, rc);
        let t = self.send_target(i, m);
        let s = self.s(i, m);
        self.lists.insert_send(i, t, j, m, s);
        self.ra[i] = self.lists.recv_avail(i);
        self.ra[j] = c;
        self.version[i] += 1;
        self.version[j] += 1;
        let a = &mut self.senders[m];
        let pos = 1 + a[1..].partition_point(|&(t, n)| t < c || (t == c && n < j as u32));
        a.insert(pos, (c, j as u32));
        if let Some(b) = self.by_node.as_mut() {
            b.moved(&self.cost, i, self.ra[i]);
            b.moved(&self.cost, j, c);
            b.receive(&self.cost, j, m, c);
        } else {
            let key = self.v(j, m);
            self.heaps[m].push(HEntry {
                key,
                node: j as u32,
                ver: self.version[j],
            });
            self.top[m] = self.heaps[m].peek().unwrap().key;
        }
        self.pending[j * self.words + m / 64] &= !(1 << (m % 64));
        self.npending[j] -= 1;
        let w = &mut self.waiting[m];
        let q = std::mem::replace(&mut self.wpos[m * n + j], NIL) as usize;
        w.swap_remove(q);
        if let Some(&moved) = w.get(q) {
            self.wpos[m * n + moved as usize] = q as u32;
        }
        self.remaining -= 1;
        self.seq.push(Selection {
            sender: i,
            receiver: j,
            source: self.mcs[m].src,
            complete: c,
        });
    }

    pub fn into_schedule(self, algorithm: &str) -> Schedule {
        let tasks = (0..self.cost.n)
            .map(|i| {
                let mut out = Vec::with_capacity(self.lists.count[i] as usize);
                let mut start = 0.0;
                out.extend(self.lists.iter(i).map(|r| {
                    let kind = if r.kind == Kind::Send {
                        TaskKind::Send
                    } else {
                        TaskKind::Recv
                    };
                    let t = Task {
                        kind,
                        peer: r.peer as usize,
                        source: self.mcs[r.mc as usize].src,
                        start,
                        end: r.end,
                    };
                    start = r.end;
                    t
                }));
                out
            })
            .collect();
        let completion_time = self.seq.iter().map(|s| s.complete).fold(0.0, f64::max);
        Schedule {
            algorithm: algorithm.to_string(),
            sequence: self.seq,
            tasks,
            completion_time,
        }
    }
}
