//! Per-node task lists (§3.1 TaskList_i) with the preemption rules of §5
//! (Figs. 13-16). Each list starts with a head task ending at time 0.
//! A non-preemptive scheduler always inserts at the tail; a preemptive one
//! may insert a send into the idle wait before a receive.

use std::cell::Cell;

pub(crate) const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Head,
    Send,
    Recv,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    pub kind: Kind,
    pub peer: u32,
    /// Internal multicast index.
    pub mc: u32,
    /// Completion time of the task.
    pub end: f64,
    /// For a receive, its busy part R(node, l); condition (10) subtracts it.
    pub rcost: f64,
    pub next: u32,
    /// A receive that now has a send after it in the list.
    pub covered: bool,
}

pub(crate) struct TaskLists {
    pub recs: Vec<Rec>,
    pub head: Vec<u32>,
    pub tail: Vec<u32>,
    pub last_send: Vec<u32>,
    /// Number of tasks per node, head excluded.
    pub count: Vec<u32>,
    /// Last walk of `send_target` per node: (start, S bits, result).
    memo: Vec<Cell<(u32, u64, u32)>>,
}

impl TaskLists {
    pub fn new(n: usize) -> Self {
        let head_rec = Rec {
            kind: Kind::Head,
            peer: 0,
            mc: 0,
            end: 0.0,
            rcost: 0.0,
            next: NIL,
            covered: true,
        };
        let ids: Vec<u32> = (0..n as u32).collect();
        TaskLists {
            recs: vec![head_rec; n],
            head: ids.clone(),
            tail: ids.clone(),
            last_send: ids,
            count: vec![0; n],
            memo: vec![Cell::new((NIL, 0, NIL)); n],
        }
    }

    #[inline]
    pub fn end(&self, t: u32) -> f64 {
        self.recs[t as usize].end
    }

    /// Fig. 15: receive-available time = end of the node's last task.
    #[inline]
    pub fn recv_avail(&self, i: usize) -> f64 {
        self.end(self.tail[i])
    }

    /// Fig. 14: a receive is appended at the tail.
    pub fn append_recv(&mut self, j: usize, peer: usize, mc: usize, end: f64, rcost: f64) -> u32 {
        let id = self.recs.len() as u32;
        self.recs.push(Rec {
            kind: Kind::Recv,
            peer: peer as u32,
            mc: mc as u32,
            end,
            rcost,
            next: NIL,
            covered: false,
        });
        let t = self.tail[j] as usize;
        self.recs[t].next = id;
        self.tail[j] = id;
        self.count[j] += 1;
        self.memo[j].set((NIL, 0, NIL));
        id
    }

    /// Figs. 13 and 16: the task after which node i's next send goes.
    /// `got` is i's receive of the message (NIL when i is its source).
    /// Start from the later of `got` and i's last send (a source starts from
    /// its last send), then move past each following receive while the gap
    /// before its busy part is shorter than the send overhead `s`: that is
    /// condition (10), gap = next.end - R(next) - current.end >= S.
    pub fn send_target(&self, i: usize, got: u32, s: f64) -> u32 {
        let mut t = if got == NIL || self.recs[got as usize].covered {
            self.last_send[i]
        } else {
            got
        };
        // Many messages start from the same task with the same S: remember
        // the last walk per node until its list changes.
        let (from, bits, to) = self.memo[i].get();
        if from == t && bits == s.to_bits() {
            return to;
        }
        let start = t;
        loop {
            let nx = self.recs[t as usize].next;
            if nx == NIL {
                break;
            }
            let r = &self.recs[nx as usize];
            if r.end - r.rcost - self.end(t) < s {
                t = nx;
            } else {
                break;
            }
        }
        self.memo[i].set((start, s.to_bits(), t));
        t
    }

    /// Inserts a send after task `after`; it ends S later (non-blocking send, §2).
    pub fn insert_send(&mut self, i: usize, after: u32, peer: usize, mc: usize, s: f64) -> u32 {
        // The receives between the old last send and `after` now precede a send.
        let mut p = self.last_send[i];
        while p != after {
            p = self.recs[p as usize].next;
            self.recs[p as usize].covered = true;
        }
        let id = self.recs.len() as u32;
        let next = self.recs[after as usize].next;
        let end = self.end(after) + s;
        self.recs.push(Rec {
            kind: Kind::Send,
            peer: peer as u32,
            mc: mc as u32,
            end,
            rcost: 0.0,
            next,
            covered: true,
        });
        self.recs[after as usize].next = id;
        if self.tail[i] == after {
            self.tail[i] = id;
        }
        self.last_send[i] = id;
        self.count[i] += 1;
        self.memo[i].set((NIL, 0, NIL));
        id
    }

    /// The tasks of node i in list order, without the head.
    pub fn iter(&self, i: usize) -> impl Iterator<Item = &Rec> + '_ {
        let mut p = self.recs[self.head[i] as usize].next;
        std::iter::from_fn(move || {
            if p == NIL {
                return None;
            }
            let r = &self.recs[p as usize];
            p = r.next;
            Some(r)
        })
    }
}
