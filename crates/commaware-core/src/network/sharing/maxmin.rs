//! Max-min fair sharing, kept per bottleneck group and re-solved by propagating what
//! changes.
//!
//! In the max-min allocation every flow has a bottleneck: a saturated link on which no
//! flow gets more (Bertsekas & Gallager: a feasible allocation is max-min fair iff
//! every flow has one). We keep each flow in the *group* of one such link; all flows
//! of a group get the link's *level* `λ_l = (capacity − F_l) / m_l`, with `m_l` its
//! members and `F_l` the sum of the rates of the other flows crossing it (foreign
//! flows). The allocation is max-min iff, on every link, no foreign flow gets more than
//! `λ_l` (or, on a link with no members, the flows fit).
//!
//! A change (flows leave or join) moves a few levels; each level change moves `F` on
//! the other links of the group's members by the same amount, which moves their levels,
//! and so on. We propagate these changes link by link, lowest level first, and check
//! the condition on every link we touch: when a foreign flow gets more than the level
//! (kept cheap by an upper bound on the foreign rates, refreshed by a scan only when
//! the level falls under it), the link water-fills again with those flows as members,
//! which moves them between groups. Links nothing reached keep both their level and
//! their check, so when no link is left to visit the allocation is max-min again,
//! exactly (up to rounding). The work is that of the levels that really move; a batch
//! touching a large part of the flows, or a propagation that does not settle, is solved
//! by one progressive filling of everything instead.
//!
//! **Fans.** A level change moves `F` on the other links of every member; members often
//! share those links (a sender's queue of messages to a few neighbours, §5.3 of paper
//! 001's overlapped tiles), so each group keeps its *fan*: the other links of its
//! members, each with how many members cross it. The change then costs one addition per
//! link of the fan (count × change), not one per member. A fan that would list more than
//! [`FAN_MAX`] links (an alltoall's sender reaches every host) is dropped until its group
//! empties: the change then walks the members, as it would anyway.
//!
//! **Progress.** With [`SharingModel::track_progress`] the model also keeps completion
//! times: the flows of a group share a rate, so they keep their order of completion
//! whatever the rate does. Each group has a counter of the bytes it served per flow;
//! a flow joining it with `b` bytes left ends when the counter reaches its key (the
//! counter then, plus `b`). A group holds its flows in a heap by key, and a tree over
//! the groups gives the next completion. A re-rate then costs per group, not per flow;
//! a flow costs only when it changes group.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{FlowId, FlowNet, LinkId, Progress, RemovedFlow, SharingModel};
use crate::util::mintree::MinTree;

const NONE: u32 = u32::MAX;

/// Relative slack of the "no foreign flow above the level" check (rounding of the sums).
const TOL: f64 = 1e-11;

/// A link's foreign sum is recomputed from its flows after this many increments.
const REFRESH: u32 = 1024;

/// Solve from scratch when a batch changes at least 1/FULL_BATCH of the flows.
pub const FULL_BATCH: usize = 8;

/// ... unless fewer flows than this are live after it: a few flows propagate faster than
/// they fill from scratch (the replay of a few ranks changes nearly all its flows at once).
pub const FULL_MIN: usize = 64;

/// Most links a group's fan lists (it is searched linearly).
pub const FAN_MAX: usize = 32;

/// The links of a flow other than `l`, `NONE`-padded.
fn others_of<const O: usize>(links: &[LinkId], l: LinkId) -> [LinkId; O] {
    let mut others = [NONE; O];
    for (slot, &o) in others.iter_mut().zip(links.iter().filter(|&&o| o != l)) {
        *slot = o;
    }
    others
}

/// One flow crossing a link. A link's entries hold its members first (the propagation
/// walks only those), except within an update that ends in a solve from scratch.
#[derive(Debug, Clone, Copy)]
struct Entry<const O: usize> {
    flow: FlowId,
    /// The flow's other links, `NONE`-padded.
    others: [LinkId; O],
    /// The flow's group (kept in each of its entries, to read foreign rates locally).
    group: LinkId,
}

#[derive(Debug, Clone)]
struct FlowRec<const L: usize> {
    links: [LinkId; L],
    /// Position of this flow's entry in each of its links' `entries`.
    slot: [u32; L],
    n: u8,
    /// The link whose group holds the flow (`NONE` before it is rated).
    group: LinkId,
    /// The group at the start of the current update, when it changed during it.
    from: LinkId,
    moved: u32,
    /// Progress tracking: bytes to move until rated, then the group counter value at
    /// which the flow ends.
    key: f64,
    /// Bumped whenever the flow enters a group's heap, so stale heap items are known.
    stamp: u32,
    queued: bool,
}

impl<const L: usize> FlowRec<L> {
    const NEW: Self =
        FlowRec { links: [0; L], slot: [0; L], n: 0, group: NONE, from: NONE, moved: 0, key: 0.0, stamp: 0, queued: false };
}

/// What the propagation reads and writes of a link, together (one cache line).
#[derive(Debug, Clone, Copy)]
struct LinkState {
    capacity: f64,
    /// Sum of the rates of the non-member flows.
    foreign: f64,
    /// Upper bound on the rates of the non-member flows.
    foreign_max: f64,
    /// Its live item in the visit queue (`u64::MAX` when none).
    queued: u64,
    members: u32,
    /// Changes of `foreign` since it was last summed from the flows.
    increments: u32,
    /// The update that last touched it.
    touched_at: u32,
}

#[derive(Debug, Clone, Copy)]
struct Fill {
    residual: f64,
    count: u32,
    level: f64,
    done: bool,
}

#[derive(Debug, Default)]
struct Group {
    rate: f64,
    /// Bytes served to each flow of the group since it last was empty, as of `since`.
    served: f64,
    since: f64,
    /// Its flows by key: (key bits, flow, stamp); keys are non-negative, so their bits
    /// sort as they do.
    heap: BinaryHeap<Reverse<(u64, FlowId, u32)>>,
}

pub struct MaxMinOf<const L: usize, const O: usize> {
    /// Solve from scratch when a batch changes at least 1/full_batch of the flows.
    pub full_batch: usize,
    /// ... and leaves at least this many flows ([`FULL_MIN`]).
    pub full_min: usize,
    /// Most links a group's fan lists ([`FAN_MAX`]).
    pub fan_max: usize,
    // Per link.
    entries: Vec<Vec<Entry<O>>>,
    /// Level of the link's group; infinite without members.
    lambda: Vec<f64>,
    ls: Vec<LinkState>,
    /// Items in each group's heap of flows that left it (dropped when on top).
    stale: Vec<u32>,
    /// Links with flows, and where each is in that list (`NONE` if not).
    active: Vec<LinkId>,
    active_at: Vec<u32>,
    /// Scratch of the solve from scratch, and of the batch's new flows.
    fill: Vec<Fill>,
    seen: Vec<u32>,
    fill_heap: BinaryHeap<Reverse<(u64, LinkId)>>,
    // Per flow.
    flows: Vec<FlowRec<L>>,
    live: usize,
    // Progress tracking.
    tracking: bool,
    now: f64,
    groups: Vec<Group>,
    next: MinTree,
    // Per update. A link is touched once its level or group may change; `queued` is
    // its live queue item (`u64::MAX` when none).
    stamp: u32,
    old_lambda: Vec<f64>,
    old_members: Vec<u32>,
    touched: Vec<LinkId>,
    moved: Vec<FlowId>,
    /// Links to visit, by level: `(level bits >> 32) << 32 | link`. The order only
    /// saves visits (the result does not depend on it), so 20 bits of mantissa do.
    /// Links without members (infinite level) wait in `last`.
    queue: Quad,
    last: Vec<u64>,
    rates: Vec<(f64, u32)>,
    /// Per group, the other links of its members and how many members cross each, or
    /// `None` when that would exceed [`FAN_MAX`] links.
    fan: Vec<Option<Vec<(LinkId, u32)>>>,
    /// Link visits while propagating, and solves from scratch (for profiling).
    pub visits: u64,
    pub full_solves: u64,
}

/// Max-min over flows of at most `L` links (`O = L - 1`, each entry's other links).
/// The star's flows cross at most three (up, backbone, down).
pub type MaxMin = MaxMinOf<3, 2>;

/// Four links a flow: the star's three and a private cap link (`ib-simgrid` with a
/// backbone, see `penalized.rs`).
pub type MaxMin4 = MaxMinOf<4, 3>;

impl<const L: usize, const O: usize> Default for MaxMinOf<L, O> {
    fn default() -> Self {
        const { assert!(O + 1 == L, "an entry holds the flow's other links") };
        MaxMinOf {
            full_batch: FULL_BATCH,
            full_min: FULL_MIN,
            fan_max: FAN_MAX,
            entries: Vec::new(),
            lambda: Vec::new(),
            ls: Vec::new(),
            stale: Vec::new(),
            active: Vec::new(),
            active_at: Vec::new(),
            fill: Vec::new(),
            seen: Vec::new(),
            fill_heap: BinaryHeap::new(),
            flows: Vec::new(),
            live: 0,
            tracking: false,
            now: 0.0,
            groups: Vec::new(),
            next: MinTree::with_slots(2),
            stamp: 0,
            old_lambda: Vec::new(),
            old_members: Vec::new(),
            touched: Vec::new(),
            moved: Vec::new(),
            queue: Quad::default(),
            last: Vec::new(),
            rates: Vec::new(),
            fan: Vec::new(),
            visits: 0,
            full_solves: 0,
        }
    }
}

/// A 4-ary min-heap of `u64` (shallower than a binary heap: fewer cache misses).
#[derive(Default)]
struct Quad {
    v: Vec<u64>,
}

impl Quad {
    fn push(&mut self, x: u64) {
        let mut i = self.v.len();
        self.v.push(x);
        while i > 0 {
            let p = (i - 1) / 4;
            if self.v[p] <= x {
                break;
            }
            self.v[i] = self.v[p];
            i = p;
        }
        self.v[i] = x;
    }

    fn pop(&mut self) -> Option<u64> {
        let last = self.v.pop()?;
        let n = self.v.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.v[0];
        let mut i = 0;
        loop {
            let c = 4 * i + 1;
            if c >= n {
                break;
            }
            let mut best = c;
            for j in c + 1..(c + 4).min(n) {
                if self.v[j] < self.v[best] {
                    best = j;
                }
            }
            if self.v[best] >= last {
                break;
            }
            self.v[i] = self.v[best];
            i = best;
        }
        self.v[i] = last;
        Some(top)
    }
}

/// Smallest `x` with `Σ min(r, x) + extra·x >= cap` over the rates `r` (sorted here).
fn water_level(cap: f64, rates: &mut [(f64, u32)], extra: u32) -> f64 {
    rates.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let n = rates.len();
    let mut fixed = 0.0;
    for k in 0..n {
        let x = (cap - fixed).max(0.0) / (n - k + extra as usize) as f64;
        if x <= rates[k].0 {
            return x;
        }
        fixed += rates[k].0;
    }
    if extra == 0 {
        f64::INFINITY
    } else {
        (cap - fixed).max(0.0) / extra as f64
    }
}

impl<const L: usize, const O: usize> MaxMinOf<L, O> {
    fn grow(&mut self, net: &FlowNet) {
        let nl = net.links.len();
        if self.entries.len() < nl {
            self.entries.resize_with(nl, Vec::new);
            self.fan.resize_with(nl, || Some(Vec::new()));
            self.lambda.resize(nl, f64::INFINITY);
            let new = LinkState {
                capacity: 0.0,
                foreign: 0.0,
                foreign_max: 0.0,
                queued: u64::MAX,
                members: 0,
                increments: 0,
                touched_at: 0,
            };
            self.ls.resize(nl, new);
            for (l, link) in net.links.iter().enumerate() {
                self.ls[l].capacity = link.capacity;
            }
            self.active_at.resize(nl, NONE);
            self.stale.resize(nl, 0);
            self.seen.resize(nl, 0);
            self.fill.resize(nl, Fill { residual: 0.0, count: 0, level: f64::INFINITY, done: false });
            self.old_lambda.resize(nl, f64::INFINITY);
            self.old_members.resize(nl, 0);
            if self.tracking {
                // Links can appear while flows are in progress (a mirror's private
                // links): the groups keep their completion times.
                let old = self.groups.len();
                self.groups.resize_with(nl, Group::default);
                let mut next = MinTree::with_slots(nl);
                for g in (0..old).filter(|&g| self.next.get(g) < f64::INFINITY) {
                    next.set_lazy(g, self.next.get(g));
                }
                next.flush();
                self.next = next;
            }
        }
    }

    /// Change the capacity of link `l` in the model's copy (the net's must change too).
    /// Only for a link whose flows all leave in the next `update` (as `removed`): the
    /// flows that join it then see the new capacity. Per-flow rate caps are made so
    /// (private links, see `super::penalized`).
    pub fn set_capacity_of_emptied_link(&mut self, l: LinkId, capacity: f64) {
        if let Some(state) = self.ls.get_mut(l as usize) {
            state.capacity = capacity;
        }
    }

    /// With progress tracking: the bytes flow `f` has left now (its bytes when it is not
    /// rated yet), to carry into another flow that replaces it.
    pub fn remaining(&self, f: FlowId) -> f64 {
        let rec = &self.flows[f as usize];
        if !rec.queued {
            return rec.key;
        }
        let grp = &self.groups[rec.group as usize];
        let served = grp.served + grp.rate * (self.now - grp.since);
        (rec.key - served).max(0.0)
    }

    /// The rate of a rated flow: the level of its group's link.
    pub fn flow_rate(&self, f: FlowId) -> f64 {
        match self.flows.get(f as usize) {
            Some(r) if r.group != NONE => self.lambda[r.group as usize],
            _ => f64::INFINITY,
        }
    }

    fn slot(&self, f: FlowId, l: LinkId) -> usize {
        let r = &self.flows[f as usize];
        let k = (0..r.n as usize).find(|&k| r.links[k] == l).expect("the flow crosses the link");
        r.slot[k] as usize
    }

    fn swap_entries(&mut self, l: LinkId, a: usize, b: usize) {
        if a != b {
            let list = &mut self.entries[l as usize];
            list.swap(a, b);
            let (fa, fb) = (list[a].flow, list[b].flow);
            self.set_slot(fa, l, a);
            self.set_slot(fb, l, b);
        }
    }

    /// Flow `f` joins the members of `l` (in the list, and the count).
    fn make_member(&mut self, f: FlowId, l: LinkId) {
        let (s, m) = (self.slot(f, l), self.ls[l as usize].members as usize);
        debug_assert!(s >= m);
        self.swap_entries(l, s, m);
        self.ls[l as usize].members += 1;
    }

    fn make_foreign(&mut self, f: FlowId, l: LinkId) {
        let (s, m) = (self.slot(f, l), self.ls[l as usize].members as usize);
        debug_assert!(s < m);
        self.swap_entries(l, s, m - 1);
        self.ls[l as usize].members -= 1;
    }

    /// Put an entry at the end of `l`'s list and return its slot.
    #[inline]
    fn put_entry(&mut self, l: LinkId, e: Entry<O>) -> u32 {
        let list = &mut self.entries[l as usize];
        list.push(e);
        (list.len() - 1) as u32
    }

    /// Remove the entry at slot `s` of `l`'s list (the last one takes its place).
    #[inline]
    fn take_entry(&mut self, l: LinkId, s: u32) {
        let list = &mut self.entries[l as usize];
        list.swap_remove(s as usize);
        if (s as usize) < list.len() {
            let moved = list[s as usize].flow;
            self.set_slot(moved, l, s as usize);
        }
    }

    /// Flow `f` now belongs to the group of `g`.
    fn set_group(&mut self, f: FlowId, g: LinkId) {
        let r = &mut self.flows[f as usize];
        r.group = g;
        for k in 0..r.n as usize {
            self.entries[r.links[k] as usize][r.slot[k] as usize].group = g;
        }
    }

    fn set_slot(&mut self, f: FlowId, l: LinkId, s: usize) {
        let r = &mut self.flows[f as usize];
        let k = (0..r.n as usize).find(|&k| r.links[k] == l).expect("the flow crosses the link");
        r.slot[k] = s as u32;
    }

    /// Member `f` of group `g` enters `g`'s fan.
    fn fan_join(&mut self, f: FlowId, g: LinkId) {
        let others = self.entries[g as usize][self.slot(f, g)].others;
        let Some(fan) = &mut self.fan[g as usize] else { return };
        for q in others.into_iter().filter(|&q| q != NONE) {
            if let Some(k) = fan.iter().position(|&(p, _)| p == q) {
                fan[k].1 += 1;
            } else if fan.len() < self.fan_max {
                fan.push((q, 1));
            } else {
                self.fan[g as usize] = None;
                return;
            }
        }
    }

    /// Member `f` of group `g` leaves `g`'s fan (before it leaves the members).
    fn fan_leave(&mut self, f: FlowId, g: LinkId) {
        let others = self.entries[g as usize][self.slot(f, g)].others;
        let Some(fan) = &mut self.fan[g as usize] else {
            if self.ls[g as usize].members == 1 {
                // The group empties: it starts a fan again.
                self.fan[g as usize] = Some(Vec::new());
            }
            return;
        };
        for q in others.into_iter().filter(|&q| q != NONE) {
            let k = fan.iter().position(|&(p, _)| p == q).expect("a member's link is in its group's fan");
            fan[k].1 -= 1;
            if fan[k].1 == 0 {
                fan.swap_remove(k);
            }
        }
    }

    #[inline]
    fn touch(&mut self, l: LinkId) {
        let li = l as usize;
        if self.ls[li].touched_at != self.stamp {
            self.ls[li].touched_at = self.stamp;
            self.old_lambda[li] = self.lambda[li];
            self.old_members[li] = self.ls[li].members;
            self.touched.push(l);
        }
    }

    fn note_move(&mut self, f: FlowId, from: LinkId) {
        let r = &mut self.flows[f as usize];
        if r.moved != self.stamp {
            r.moved = self.stamp;
            r.from = from;
            self.moved.push(f);
        }
    }

    /// The level `l` would have now (infinite without members).
    fn tentative(&self, l: usize) -> f64 {
        match self.ls[l].members {
            0 => f64::INFINITY,
            m => (self.ls[l].capacity - self.ls[l].foreign).max(0.0) / m as f64,
        }
    }

    fn queue_item(&self, l: LinkId) -> u64 {
        (self.tentative(l as usize).to_bits() >> 32) << 32 | l as u64
    }

    /// `l` must be visited: queue it by its level now. Its level may still move before
    /// the visit: one that went up is queued again when popped, one that went down is
    /// visited a little late (it costs at most another visit of the links after it).
    #[inline]
    fn dirty(&mut self, l: LinkId) {
        self.touch(l);
        if self.ls[l as usize].queued == u64::MAX {
            let item = self.queue_item(l);
            self.ls[l as usize].queued = item;
            if item >> 32 == f64::INFINITY.to_bits() >> 32 {
                self.last.push(item);
            } else {
                self.queue.push(item);
            }
        }
    }

    /// The rate of `count` foreign flows of link `q` moved by `delta` each, to `rate`:
    /// `q` must be visited.
    fn shift_foreign(&mut self, q: LinkId, count: u32, delta: f64, rate: f64) {
        let qi = q as usize;
        self.ls[qi].foreign += count as f64 * delta;
        self.ls[qi].increments += 1;
        if rate > self.ls[qi].foreign_max {
            self.ls[qi].foreign_max = rate;
        }
        // A visit of a link without members whose flows still fit (and whose sum needs
        // no refresh) would change nothing: skip it. With a shared bottleneck (a
        // backbone), these are most of the links its level moves.
        let st = &self.ls[qi];
        if st.members == 0 && st.increments < REFRESH && st.foreign <= st.capacity * (1.0 + TOL) {
            return;
        }
        self.dirty(q);
    }

    /// Recompute a link's foreign sum and bound from its flows.
    fn refresh(&mut self, l: usize) {
        let (mut sum, mut max) = (0.0, 0.0f64);
        for e in &self.entries[l][self.ls[l].members as usize..] {
            let r = self.lambda[e.group as usize];
            sum += r;
            max = max.max(r);
        }
        self.ls[l].foreign = sum;
        self.ls[l].foreign_max = max;
        self.ls[l].increments = 0;
    }

    /// Visit link `o`: move in the foreign flows that get more than it allows, set its
    /// level, and pass the change of its members' rate on to their other links.
    fn visit(&mut self, o: LinkId) {
        let oi = o as usize;
        self.visits += 1;
        if self.ls[oi].increments >= REFRESH {
            self.refresh(oi);
        }
        let cap = self.ls[oi].capacity;
        let old = self.lambda[oi];
        let m_old = self.ls[oi].members;
        let violated = if m_old == 0 {
            self.ls[oi].foreign > cap * (1.0 + TOL)
        } else {
            self.ls[oi].foreign_max > self.tentative(oi) * (1.0 + TOL)
        };
        if violated {
            self.refresh(oi);
        }
        let violated = if m_old == 0 {
            self.ls[oi].foreign > cap * (1.0 + TOL)
        } else {
            self.ls[oi].foreign_max > self.tentative(oi) * (1.0 + TOL)
        };
        let mut movers = std::mem::take(&mut self.rates);
        movers.clear();
        if violated {
            // Water-fill the link: the foreign flows above the level become members.
            let m = m_old as usize;
            movers.extend(self.entries[oi][m..].iter().map(|e| (self.lambda[e.group as usize], e.flow)));
            let x = water_level(cap, &mut movers, m_old);
            let keep = movers.partition_point(|&(r, _)| r <= x);
            movers.drain(..keep);
            // They join the members after the old ones (which the shift below walks).
            for &(r, f) in &movers {
                self.ls[oi].foreign -= r;
                self.make_member(f, o);
            }
        }
        let m = self.ls[oi].members;
        let level = self.tentative(oi);
        self.lambda[oi] = level;
        // Old members (the fan, which the new ones join below) move from `old` to `level`.
        if m_old > 0 && level.to_bits() != old.to_bits() {
            let delta = level - old;
            let fan = self.fan[oi].take();
            match &fan {
                Some(fan) => {
                    for &(q, count) in fan {
                        self.shift_foreign(q, count, delta, level);
                    }
                }
                None => {
                    for k in 0..m_old as usize {
                        for q in self.entries[oi][k].others.into_iter().filter(|&q| q != NONE) {
                            self.shift_foreign(q, 1, delta, level);
                        }
                    }
                }
            }
            self.fan[oi] = fan;
        }
        // New members leave their group, where they become foreign at `level`.
        for &(r, f) in &movers {
            let g = self.flows[f as usize].group;
            self.note_move(f, g);
            self.fan_leave(f, g);
            self.set_group(f, o);
            self.fan_join(f, o);
            let gi = g as usize;
            self.touch(g);
            self.make_foreign(f, g);
            let others = self.entries[oi][self.slot(f, o)].others;
            for q in others {
                if q == NONE {
                    continue;
                }
                let qi = q as usize;
                if q == g {
                    self.ls[gi].foreign += level;
                    self.ls[gi].foreign_max = self.ls[gi].foreign_max.max(level);
                    self.dirty(g);
                } else {
                    self.ls[qi].foreign += level - r;
                    self.ls[qi].increments += 1;
                    self.ls[qi].foreign_max = self.ls[qi].foreign_max.max(level);
                    self.dirty(q);
                }
            }
        }
        debug_assert!(m > 0 || level.is_infinite());
        self.rates = movers;
    }

    /// Rate new flow `f`: it joins the group of its link with the lowest level (or,
    /// on links without members, the least room), as a start for the propagation.
    /// With `listed`, only list it (a solve from scratch follows).
    fn add(&mut self, net: &FlowNet, f: FlowId, listed: bool) {
        if self.flows.len() <= f as usize {
            self.flows.resize(f as usize + 1, FlowRec::NEW);
        }
        let links = net.flow(f).links();
        if listed {
            let mut rec = FlowRec { links: [0; L], slot: [0; L], n: links.len() as u8, group: NONE, ..self.flows[f as usize].clone() };
            rec.queued = false;
            for (k, &l) in links.iter().enumerate() {
                let others = others_of(links, l);
                self.touch(l);
                rec.links[k] = l;
                rec.slot[k] = self.put_entry(l, Entry { flow: f, others, group: NONE });
                self.note_active(l);
            }
            self.flows[f as usize] = rec;
            self.note_move(f, NONE);
            self.live += 1;
            return;
        }
        let room = |l: LinkId| match self.ls[l as usize].members {
            0 => (self.ls[l as usize].capacity - self.ls[l as usize].foreign).max(0.0),
            _ => self.lambda[l as usize],
        };
        let g = *links.iter().min_by(|&&a, &&b| room(a).total_cmp(&room(b))).expect("a flow crosses a link");
        let gi = g as usize;
        // Alone on its links (sparse traffic, the rounds of an alltoall), it gets the
        // smallest capacity and nothing else moves: no link needs a visit.
        let alone = links.iter().all(|&l| self.entries[l as usize].is_empty());
        if self.ls[gi].members == 0 {
            let r = room(g);
            self.touch(g);
            self.lambda[gi] = r;
        }
        let rate = self.lambda[gi];
        let mut rec = FlowRec { links: [0; L], slot: [0; L], n: links.len() as u8, group: g, ..self.flows[f as usize].clone() };
        rec.queued = false;
        for (k, &l) in links.iter().enumerate() {
            let others = others_of(links, l);
            rec.links[k] = l;
            let li = l as usize;
            rec.slot[k] = self.put_entry(l, Entry { flow: f, others, group: g });
            self.note_active(l);
            if l != g {
                self.ls[li].foreign += rate;
                self.ls[li].increments += 1;
                self.ls[li].foreign_max = self.ls[li].foreign_max.max(rate);
            }
        }
        self.flows[f as usize] = rec;
        self.make_member(f, g);
        self.fan_join(f, g);
        self.note_move(f, NONE);
        for &l in links {
            if alone {
                self.touch(l);
            } else {
                self.dirty(l);
            }
        }
        self.live += 1;
    }

    fn remove(&mut self, f: FlowId, listed: bool) {
        let rec = self.flows[f as usize].clone();
        let g = rec.group;
        let rate = self.lambda[g as usize];
        // Alone on its links, it leaves them empty and nothing else moves.
        let alone = (0..rec.n as usize).all(|k| self.entries[rec.links[k] as usize].len() == 1);
        for k in 0..rec.n as usize {
            let l = rec.links[k];
            let li = l as usize;
            self.touch(l);
            // With `listed`, only unlist it (a solve from scratch follows, which sorts
            // the members first again).
            if !listed && l == g {
                self.fan_leave(f, g);
                self.make_foreign(f, l);
            } else if !listed {
                self.ls[li].foreign -= rate;
                self.ls[li].increments += 1;
            }
            let s = self.slot(f, l) as u32;
            self.take_entry(l, s);
            self.note_active(l);
            if self.entries[li].is_empty() {
                // Exactly nothing left (the running sum may keep a rounding residue).
                let st = &mut self.ls[li];
                (st.foreign, st.foreign_max, st.increments) = (0.0, 0.0, 0);
                if alone {
                    self.lambda[li] = f64::INFINITY;
                }
            }
            if !listed && !alone {
                self.dirty(l);
            }
        }
        let r = &mut self.flows[f as usize];
        if r.queued {
            r.queued = false;
            r.stamp = r.stamp.wrapping_add(1);
            self.stale[g as usize] += 1;
        }
        let r = &mut self.flows[f as usize];
        r.n = 0;
        r.group = NONE;
        self.live -= 1;
    }

    /// Visit queued links, lowest level first, until none is left. False when it does
    /// not settle within a generous budget.
    fn propagate(&mut self) -> bool {
        let budget = 64 * self.entries.len() as u64 + 4096;
        let mut visits = 0u64;
        while let Some(item) = self.queue.pop().or_else(|| self.last.pop()) {
            let l = item as LinkId;
            let li = l as usize;
            if self.ls[li].queued != item {
                continue;
            }
            let now = self.queue_item(l);
            if now > item {
                // Its level went up since: it comes later.
                self.ls[li].queued = now;
                self.queue.push(now);
                continue;
            }
            self.ls[li].queued = u64::MAX;
            visits += 1;
            if visits > budget {
                return false;
            }
            self.visit(l);
        }
        true
    }

    /// Progressive filling of every flow, from scratch (over the links with flows).
    fn solve_all(&mut self) {
        self.full_solves += 1;
        for &l in &self.touched {
            self.ls[l as usize].queued = u64::MAX;
        }
        self.queue.v.clear();
        self.last.clear();
        let mut heap = std::mem::take(&mut self.fill_heap);
        heap.clear();
        for &l in &self.active {
            let li = l as usize;
            let count = self.entries[li].len() as u32;
            let residual = self.ls[li].capacity;
            self.fill[li] = Fill { residual, count, level: f64::INFINITY, done: false };
            heap.push(Reverse(((residual / count as f64).to_bits(), l)));
        }
        let mut last = 0.0f64;
        while let Some(Reverse((key, o))) = heap.pop() {
            let oi = o as usize;
            let Fill { residual, count, done, .. } = self.fill[oi];
            if done || count == 0 {
                continue;
            }
            let share = residual / count as f64;
            if share.to_bits() > key {
                heap.push(Reverse((share.to_bits(), o)));
                continue;
            }
            let s = share.max(last);
            last = s;
            self.fill[oi].done = true;
            self.fill[oi].level = s;
            for k in 0..self.entries[oi].len() {
                let e = self.entries[oi][k];
                if e.others.iter().any(|&p| p != NONE && self.fill[p as usize].done) {
                    continue;
                }
                for p in e.others {
                    if p != NONE {
                        let fp = &mut self.fill[p as usize];
                        fp.residual = (fp.residual - s).max(0.0);
                        fp.count -= 1;
                    }
                }
                // The entry knows the flow's group: only a change costs a look at the flow.
                if e.group != o {
                    self.note_move(e.flow, e.group);
                    self.set_group(e.flow, o);
                }
            }
        }
        self.fill_heap = heap;
        // Groups and levels from the fill; links that lost their flows have none.
        for k in 0..self.touched.len() {
            let l = self.touched[k] as usize;
            if self.entries[l].is_empty() {
                self.ls[l].members = 0;
                self.lambda[l] = f64::INFINITY;
                self.refresh(l);
            }
        }
        for k in 0..self.active.len() {
            let l = self.active[k];
            let li = l as usize;
            self.touch(l);
            // Members first: swap the foreign entries among the first `m` with the
            // members after (each swap updates two flows' slots).
            let m = self.entries[li].iter().filter(|e| e.group == l).count();
            let (mut a, mut b) = (0, m);
            loop {
                while a < m && self.entries[li][a].group == l {
                    a += 1;
                }
                while b < self.entries[li].len() && self.entries[li][b].group != l {
                    b += 1;
                }
                if a >= m || b >= self.entries[li].len() {
                    break;
                }
                self.swap_entries(l, a, b);
            }
            self.ls[li].members = m as u32;
            self.lambda[li] = if m > 0 { self.fill[li].level } else { f64::INFINITY };
        }
        for k in 0..self.active.len() {
            self.refresh(self.active[k] as usize);
        }
        // Fans from the new members (every link with members was touched above).
        for k in 0..self.touched.len() {
            let l = self.touched[k] as usize;
            match &mut self.fan[l] {
                Some(fan) => fan.clear(),
                none => *none = Some(Vec::new()),
            }
        }
        for k in 0..self.active.len() {
            let l = self.active[k];
            for s in 0..self.ls[l as usize].members as usize {
                let f = self.entries[l as usize][s].flow;
                self.fan_join(f, l);
            }
        }
    }

    /// Keep `active` (the links with flows) up to date after `l` gained or lost one.
    fn note_active(&mut self, l: LinkId) {
        let li = l as usize;
        let has = !self.entries[li].is_empty();
        if has && self.active_at[li] == NONE {
            self.active_at[li] = self.active.len() as u32;
            self.active.push(l);
        } else if !has && self.active_at[li] != NONE {
            let p = self.active_at[li] as usize;
            self.active.swap_remove(p);
            if p < self.active.len() {
                self.active_at[self.active[p] as usize] = p as u32;
            }
            self.active_at[li] = NONE;
        }
    }
}

impl<const L: usize, const O: usize> SharingModel for MaxMinOf<L, O> {
    fn name(&self) -> &'static str {
        "maxmin"
    }

    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        if added.is_empty() && removed.is_empty() {
            return;
        }
        self.grow(net);
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.ls.iter_mut().for_each(|s| s.touched_at = 0);
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.flows.iter_mut().for_each(|r| r.moved = 0);
            self.stamp = 1;
        }
        self.touched.clear();
        self.moved.clear();
        // A large batch is solved from scratch (its flows then only need to be listed),
        // unless its new flows share no link with anything: then propagating is trivial.
        let after = self.live + added.len() - removed.len();
        let (full_batch, full_min) = (self.full_batch, self.full_min);
        let large = |n: usize| n.saturating_mul(full_batch) >= after && after >= full_min;
        let mut full = large(removed.len());
        for r in removed {
            self.remove(r.id, full);
        }
        if !full && large(added.len() + removed.len()) {
            full = added.iter().flat_map(|&f| net.flow(f).links()).any(|&l| {
                let li = l as usize;
                let shared = !self.entries[li].is_empty() || self.seen[li] == self.stamp;
                self.seen[li] = self.stamp;
                shared
            });
        }
        for &f in added {
            self.add(net, f, full);
        }
        if full || !self.propagate() {
            self.solve_all();
        }
        let now = self.now;
        for k in 0..self.touched.len() {
            let l = self.touched[k] as usize;
            self.ls[l].queued = u64::MAX;
            if self.tracking && self.old_members[l] > 0 {
                let g = &mut self.groups[l];
                g.served += g.rate * (now - g.since);
                g.since = now;
            } else if self.tracking {
                let g = &mut self.groups[l];
                g.served = 0.0;
                g.since = now;
            }
        }
        for k in 0..self.moved.len() {
            let f = self.moved[k];
            let (g, from) = (self.flows[f as usize].group, self.flows[f as usize].from);
            if g == NONE || g == from {
                continue;
            }
            if self.tracking {
                if from != NONE {
                    self.stale[from as usize] += 1;
                }
                let left = if from == NONE {
                    self.flows[f as usize].key
                } else {
                    (self.flows[f as usize].key - self.groups[from as usize].served).max(0.0)
                };
                let rec = &mut self.flows[f as usize];
                rec.stamp = rec.stamp.wrapping_add(1);
                rec.queued = true;
                rec.key = self.groups[g as usize].served + left;
                let item = Reverse((rec.key.to_bits(), f, rec.stamp));
                self.groups[g as usize].heap.push(item);
            } else {
                let rate = self.lambda[g as usize];
                if net.flow(f).rate.to_bits() != rate.to_bits() {
                    net.set_rate(f, rate);
                    changed.push(f);
                }
            }
        }
        for k in 0..self.touched.len() {
            let l = self.touched[k] as usize;
            let (level, m) = (self.lambda[l], self.ls[l].members);
            if self.tracking {
                self.groups[l].rate = if m > 0 { level } else { 0.0 };
                self.clean(l);
                let t = self.group_time(l);
                self.next.set_lazy(l, t);
            } else if m > 0 && level.to_bits() != self.old_lambda[l].to_bits() {
                for e in &self.entries[l][..m as usize] {
                    if net.flow(e.flow).rate.to_bits() != level.to_bits() {
                        net.set_rate(e.flow, level);
                        changed.push(e.flow);
                    }
                }
            }
        }
        if self.tracking {
            self.next.flush();
        }
    }

    fn track_progress(&mut self) -> Option<&mut dyn Progress> {
        self.tracking = true;
        Some(self)
    }
}

impl<const L: usize, const O: usize> MaxMinOf<L, O> {
    fn group_time(&self, g: usize) -> f64 {
        let grp = &self.groups[g];
        match grp.heap.peek() {
            Some(Reverse((key, _, _))) if grp.rate > 0.0 => {
                let left = (f64::from_bits(*key) - grp.served).max(0.0);
                grp.since + left / grp.rate
            }
            _ => f64::INFINITY,
        }
    }

    /// Drop stale items from the top of a group's heap (and all of them when they
    /// outnumber the live ones). Without stale items there is nothing to look at.
    fn clean(&mut self, g: usize) {
        if self.stale[g] == 0 {
            return;
        }
        let flows = &self.flows;
        let live = |&Reverse((_, f, s)): &Reverse<(u64, FlowId, u32)>| {
            let r = &flows[f as usize];
            r.queued && r.stamp == s && r.group as usize == g
        };
        let (heap, stale) = (&mut self.groups[g].heap, &mut self.stale[g]);
        if heap.len() > 64 && *stale as usize * 2 > heap.len() {
            heap.retain(live);
            *stale = 0;
        }
        while let Some(top) = heap.peek() {
            if *stale == 0 || live(top) {
                break;
            }
            heap.pop();
            *stale -= 1;
        }
    }
}

impl<const L: usize, const O: usize> Progress for MaxMinOf<L, O> {
    fn set_time(&mut self, now: f64) {
        self.now = now;
    }

    fn start(&mut self, f: FlowId, bytes: f64) {
        if self.flows.len() <= f as usize {
            self.flows.resize(f as usize + 1, FlowRec::NEW);
        }
        self.flows[f as usize].key = bytes;
    }

    fn next_completion(&self) -> (f64, FlowId) {
        let (t, g) = self.next.min();
        if t == f64::INFINITY {
            return (t, 0);
        }
        let Reverse((_, f, _)) = self.groups[g].heap.peek().expect("a group with a time has flows");
        (t.max(self.now), *f)
    }

    fn complete(&mut self, f: FlowId) {
        let rec = &mut self.flows[f as usize];
        if !rec.queued {
            return;
        }
        let stamp = rec.stamp;
        rec.queued = false;
        rec.stamp = rec.stamp.wrapping_add(1);
        let g = rec.group as usize;
        // The completing flow is normally on top of its group's heap.
        let heap = &mut self.groups[g].heap;
        match heap.peek() {
            Some(&Reverse((_, top, s))) if top == f && s == stamp => {
                heap.pop();
            }
            _ => self.stale[g] += 1,
        }
        self.clean(g);
        let t = self.group_time(g);
        self.next.set(g, t);
    }

    fn rate(&self, f: FlowId) -> f64 {
        self.flow_rate(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Full progressive filling from scratch, as a reference.
    fn reference(net: &FlowNet, flows: &[FlowId]) -> Vec<f64> {
        let mut residual: Vec<f64> = net.links.iter().map(|l| l.capacity).collect();
        let mut rate = vec![f64::NAN; flows.len()];
        let mut fixed = vec![false; flows.len()];
        loop {
            let mut best: Option<(f64, usize)> = None;
            for l in 0..net.links.len() {
                let n = flows.iter().enumerate().filter(|(k, &f)| !fixed[*k] && net.flow(f).links().contains(&(l as u32))).count();
                if n > 0 {
                    let s = residual[l] / n as f64;
                    if best.map_or(true, |(b, _)| s < b) {
                        best = Some((s, l));
                    }
                }
            }
            let Some((s, l)) = best else { break };
            for (k, &f) in flows.iter().enumerate() {
                if !fixed[k] && net.flow(f).links().contains(&(l as u32)) {
                    fixed[k] = true;
                    rate[k] = s;
                    for &l2 in net.flow(f).links() {
                        residual[l2 as usize] -= s;
                    }
                }
            }
        }
        rate
    }

    /// The model's invariants: every flow in the group of one of its links at that
    /// link's level, members listed first, foreign sums right, and the max-min
    /// condition on every link.
    fn check(model: &MaxMin, net: &FlowNet, step: usize) {
        for f in 0..net.id_bound() as FlowId {
            if net.is_live(f) {
                let g = model.flows[f as usize].group;
                assert!(net.flow(f).links().contains(&g), "step {step}: flow {f} in group {g}");
                for (k, &l) in net.flow(f).links().iter().enumerate() {
                    let s = model.flows[f as usize].slot[k] as usize;
                    assert_eq!(model.entries[l as usize][s].flow, f, "step {step}");
                    assert_eq!(model.entries[l as usize][s].group, g, "step {step}");
                    assert_eq!(s < model.ls[l as usize].members as usize, l == g, "step {step}: flow {f} at link {l}");

                }
            }
        }
        for l in 0..model.entries.len() {
            let listed = model.active.iter().filter(|&&x| x as usize == l).count();
            assert_eq!(listed, !model.entries[l].is_empty() as usize, "step {step}: link {l} listed {listed} times");
            let m = model.ls[l].members as usize;
            assert_eq!(m, model.entries[l].iter().filter(|e| e.group as usize == l).count(), "step {step}: link {l} members");
            let rates: Vec<f64> = model.entries[l].iter().filter(|e| e.group as usize != l).map(|e| model.flow_rate(e.flow)).collect();
            let sum: f64 = rates.iter().sum();
            assert!((sum - model.ls[l].foreign).abs() <= 1e-9 * model.ls[l].capacity, "step {step}: link {l} foreign {} vs {sum}", model.ls[l].foreign);
            if m > 0 {
                let level = (model.ls[l].capacity - sum) / m as f64;
                assert!((level - model.lambda[l]).abs() <= 1e-9 * level, "step {step}: link {l}");
                assert!(rates.iter().all(|&r| r <= level * (1.0 + 1e-9)), "step {step}: link {l} level {level} foreign {rates:?}");
                assert!(model.ls[l].foreign_max >= rates.iter().cloned().fold(0.0, f64::max), "step {step}: link {l}");
            } else {
                assert!(sum <= model.ls[l].capacity * (1.0 + 1e-9), "step {step}: link {l} over capacity");
                assert!(model.lambda[l].is_infinite());
            }
            // The fan lists the members' other links with their counts, or is dropped
            // (only while the group has members, and only past `fan_max`).
            let mut want: Vec<(LinkId, u32)> = Vec::new();
            for e in &model.entries[l][..m] {
                for q in e.others.into_iter().filter(|&q| q != NONE) {
                    match want.iter_mut().find(|(p, _)| *p == q) {
                        Some(w) => w.1 += 1,
                        None => want.push((q, 1)),
                    }
                }
            }
            want.sort_unstable();
            match &model.fan[l] {
                Some(fan) => {
                    let mut got = fan.clone();
                    got.sort_unstable();
                    assert_eq!(got, want, "step {step}: link {l} fan");
                }
                None => assert!(m > 0, "step {step}: link {l} fan dropped without members"),
            }
        }
    }

    /// A random flow over 1 to 3 of `nl` links.
    fn random_links(rng: &mut crate::util::rng::SplitMix64, nl: usize) -> Vec<u32> {
        let a = rng.below(nl as u64) as u32;
        let mut b = rng.below(nl as u64) as u32;
        if b == a {
            b = (b + 1) % nl as u32;
        }
        let c = (a + b + 1) % nl as u32;
        match rng.below(4) {
            0 => vec![a],
            1 if c != a && c != b => vec![a, c, b],
            _ => vec![a, b],
        }
    }

    #[test]
    fn incremental_matches_reference_under_random_churn() {
        // Propagation only, solves from scratch only, and the default mix; fans kept,
        // and fans dropped as soon as a group's members reach two links.
        for fan_max in [FAN_MAX, 1] {
            for full_batch in [0, usize::MAX, FULL_BATCH] {
                for (nl, seed, adds) in [(12, 7, 3), (40, 8, 3), (6, 9, 2), (40, 10, 12)] {
                    churn(full_batch, fan_max, nl, seed, adds);
                }
            }
        }
    }

    /// A star (up-link and down-link per host) loaded with many flows, then emptied a
    /// few flows at a time with a few arrivals, as in the benchmark.
    #[test]
    fn star_departures_match_reference() {
        for (hosts, seed, caps) in [(24, 5, false), (16, 6, true)] {
            let mut rng = crate::util::rng::SplitMix64::new(seed);
            let mut net = FlowNet::new((0..2 * hosts).map(|i| if caps { 1.0 + (i % 3) as f64 / 3.0 } else { 1.0 }));
            let mut model = MaxMin { full_batch: 0, ..MaxMin::default() };
            let flow = |rng: &mut crate::util::rng::SplitMix64, net: &mut FlowNet| {
                let s = rng.below(hosts as u64) as u32;
                let d = (s + 1 + rng.below(hosts as u64 - 1) as u32) % hosts as u32;
                net.add_flow(&[s, hosts as u32 + d])
            };
            let mut live: Vec<FlowId> = (0..300).map(|_| flow(&mut rng, &mut net)).collect();
            let mut changed = Vec::new();
            model.update(&mut net, &live.clone(), &[], &mut changed);
            let mut step = 0;
            while !live.is_empty() {
                step += 1;
                let mut removed = Vec::new();
                for _ in 0..(1 + rng.below(3)).min(live.len() as u64) {
                    let k = rng.below(live.len() as u64) as usize;
                    removed.push(net.remove_flow(live.swap_remove(k)));
                }
                let mut added = Vec::new();
                if step < 150 && rng.below(4) == 0 {
                    let f = flow(&mut rng, &mut net);
                    added.push(f);
                    live.push(f);
                }
                model.update(&mut net, &added, &removed, &mut changed);
                check(&model, &net, step);
                let want = reference(&net, &live);
                for (k, &f) in live.iter().enumerate() {
                    let got = net.flow(f).rate;
                    assert!((got - want[k]).abs() <= 1e-9 * want[k], "step {step} flow {f}: {got} vs {}", want[k]);
                }
            }
        }
    }

    /// Random arrivals and departures (some in one batch, some reusing a departed
    /// flow's id); after each update every rate equals the fill from scratch.
    fn churn(full_batch: usize, fan_max: usize, nl: usize, seed: u64, max_adds: u64) {
        let mut rng = crate::util::rng::SplitMix64::new(seed);
        // Equal capacities on some links make ties between levels.
        let mut net = FlowNet::new((0..nl).map(|i| 1.0 + (i % 4 / 2) as f64));
        // Small sets too: the churn keeps fewer flows than FULL_MIN.
        let mut model = MaxMin { full_batch, full_min: 0, fan_max, ..MaxMin::default() };
        let mut live: Vec<FlowId> = Vec::new();
        let mut changed = Vec::new();
        let mut dropped = false;
        for step in 0..600 {
            let mut added = Vec::new();
            let mut removed = Vec::new();
            let leaves = if rng.below(3) == 0 { rng.below(3) } else { 0 };
            for _ in 0..leaves.min(live.len() as u64) {
                let k = rng.below(live.len() as u64) as usize;
                removed.push(net.remove_flow(live.swap_remove(k)));
            }
            for _ in 0..rng.below(max_adds) {
                let f = net.add_flow(&random_links(&mut rng, nl));
                added.push(f);
                live.push(f);
            }
            if !live.is_empty() && rng.below(2) == 0 {
                let k = rng.below(live.len() as u64) as usize;
                let f = live.swap_remove(k);
                if let Some(p) = added.iter().position(|&x| x == f) {
                    added.swap_remove(p);
                    net.remove_flow(f);
                } else {
                    removed.push(net.remove_flow(f));
                }
            }
            let before: Vec<f64> = live.iter().map(|&f| net.flow(f).rate).collect();
            changed.clear();
            model.update(&mut net, &added, &removed, &mut changed);
            check(&model, &net, step);
            dropped |= model.fan.iter().any(Option::is_none);
            let want = reference(&net, &live);
            for (k, &f) in live.iter().enumerate() {
                let got = net.flow(f).rate;
                assert!((got - want[k]).abs() <= 1e-9 * want[k].max(1.0), "batch {full_batch} step {step} flow {f}: {got} vs {}", want[k]);
                assert_eq!(got, model.flow_rate(f));
                // `changed` names exactly the flows whose rate moved.
                assert_eq!(before[k].to_bits() != got.to_bits(), changed.contains(&f), "step {step} flow {f}");
            }
        }
        // With one link a fan, a group crossing two drops its fan (solves from scratch
        // only rebuild fans, so only a run that propagates drops one).
        if fan_max == 1 && full_batch != usize::MAX {
            assert!(dropped, "batch {full_batch}: no fan dropped");
        }
    }

    /// With progress tracking, the model's next completion is the one a per-flow
    /// simulation at the reference rates gives, through arrivals and completions.
    #[test]
    fn tracked_completions_match_per_flow_simulation() {
        for (nl, seed) in [(10, 3), (30, 4)] {
            let mut rng = crate::util::rng::SplitMix64::new(seed);
            let mut net = FlowNet::new((0..nl).map(|i| 1.0 + (i % 3) as f64));
            let mut model = MaxMin { full_batch: 0, ..MaxMin::default() };
            assert!(model.track_progress().is_some());
            let mut live: Vec<FlowId> = Vec::new();
            let mut left: Vec<f64> = Vec::new(); // bytes left per live flow (reference)
            let mut rates: Vec<f64> = Vec::new();
            let mut now = 0.0;
            let mut changed = Vec::new();
            let mut completed = 0;
            for step in 0..1500 {
                let (t, f) = model.next_completion();
                // Reference: earliest completion at the current rates.
                let mut want_t = f64::INFINITY;
                for k in 0..live.len() {
                    let tk = now + left[k] / rates[k];
                    if tk < want_t {
                        want_t = tk;
                    }
                }
                assert!((t - want_t).abs() <= 1e-9 * want_t.max(1.0) || (t.is_infinite() && want_t.is_infinite()), "step {step}: {t} vs {want_t}");
                // Next event: an arrival before the completion, or the completion.
                let arrival = now + rng.unit() * 0.5;
                let mut added = Vec::new();
                let mut removed = Vec::new();
                let next = if live.is_empty() || (live.len() < 3 * nl && arrival < t) { arrival } else { t };
                for k in 0..live.len() {
                    left[k] -= rates[k] * (next - now);
                }
                now = next;
                if next == t && !live.is_empty() {
                    let k = live.iter().position(|&x| x == f).expect("the completing flow is live");
                    assert!(left[k].abs() <= 1e-7 * (1.0 + left.iter().cloned().fold(0.0, f64::max)), "step {step}: {} left", left[k]);
                    model.complete(f);
                    removed.push(net.remove_flow(f));
                    live.swap_remove(k);
                    left.swap_remove(k);
                    completed += 1;
                } else {
                    for _ in 0..1 + rng.below(3) {
                        let f = net.add_flow(&random_links(&mut rng, nl));
                        let bytes = 0.05 + rng.unit();
                        model.start(f, bytes);
                        added.push(f);
                        live.push(f);
                        left.push(bytes);
                    }
                }
                model.set_time(now);
                changed.clear();
                model.update(&mut net, &added, &removed, &mut changed);
                assert!(changed.is_empty());
                check(&model, &net, step);
                let want = reference(&net, &live);
                for (k, &f) in live.iter().enumerate() {
                    assert!((model.rate(f) - want[k]).abs() <= 1e-9 * want[k], "step {step}");
                }
                rates = want;
            }
            assert!(completed > 300, "{completed} completions");
        }
    }
}
