//! Max-min fair sharing by progressive filling, re-solved locally.
//!
//! Progressive filling raises all unfixed flows together; the link whose fair share
//! `residual / unfixed` is smallest saturates first and fixes its flows at that level.
//!
//! After flows join or leave we do not re-fill the whole connected component (as
//! SimGrid does). We re-fill a small set H of flows, holding every other flow at its
//! rate, and then check the max-min optimality condition (Bertsekas & Gallager: a
//! feasible allocation is max-min fair iff every flow crosses a saturated link on
//! which no flow gets more) around the links H crosses. Flows that violate it join H
//! and we fill again. H only grows, so this ends, and it ends on the exact max-min
//! allocation, since the flows away from H kept their rates and their bottlenecks.
//! H starts from the changed links and closes over the bottleneck structure: the
//! flows bottlenecked on a changed link, the other links they cross, the flows
//! bottlenecked there, and so on. When H reaches a quarter of all flows, one fill of
//! everything (no scans, no checks) is cheaper and we do that instead.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{FlowId, FlowNet, LinkId, RemovedFlow, SharingModel};

/// Re-fill every flow at once when the local set reaches 1/FULL_SOLVE_FRACTION of them.
pub const FULL_SOLVE_FRACTION: usize = 4;

/// Relative tolerance of the saturation and "gets the most" tests.
const EPS: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Share(f64);
impl Eq for Share {}
impl PartialOrd for Share {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Share {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Sum and maximum of the rates on a link.
#[derive(Debug, Clone, Copy, Default)]
struct LinkLoad {
    sum: f64,
    max: f64,
}

impl LinkLoad {
    fn saturated(&self, capacity: f64) -> bool {
        self.sum >= capacity * (1.0 - EPS)
    }
    /// Is this link a bottleneck of a flow of rate `rate`?
    fn bottleneck_for(&self, capacity: f64, rate: f64) -> bool {
        self.saturated(capacity) && rate >= self.max * (1.0 - EPS)
    }
}

pub struct MaxMin {
    /// Re-fill everything once H holds 1/full_solve_fraction of the flows.
    pub full_solve_fraction: usize,
    // Scratch space, reused between calls, indexed by flow or link id. A mark equal to
    // the current stamp means "set in this call".
    stamp: u32,
    in_h: Vec<u32>,
    link_seen: Vec<u32>,
    link_in_pass: Vec<u32>,
    pass: u32,
    old_load: Vec<LinkLoad>,
    residual: Vec<f64>,
    unfixed: Vec<u32>,
    /// Fill level at which a link saturated in this pass (infinite if none of H fixed there).
    level: Vec<f64>,
    h: Vec<(FlowId, f64)>,
    touched: Vec<LinkId>,
    violators: Vec<FlowId>,
    queue: Vec<LinkId>,
    link_closed: Vec<u32>,
    heap: BinaryHeap<Reverse<(Share, LinkId)>>,
}

impl Default for MaxMin {
    fn default() -> Self {
        MaxMin {
            full_solve_fraction: FULL_SOLVE_FRACTION,
            stamp: 0,
            in_h: Vec::new(),
            link_seen: Vec::new(),
            link_in_pass: Vec::new(),
            pass: 0,
            old_load: Vec::new(),
            residual: Vec::new(),
            unfixed: Vec::new(),
            level: Vec::new(),
            h: Vec::new(),
            touched: Vec::new(),
            violators: Vec::new(),
            queue: Vec::new(),
            link_closed: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }
}

impl MaxMin {
    fn prepare(&mut self, net: &FlowNet) {
        if self.in_h.len() < net.id_bound() {
            self.in_h.resize(net.id_bound(), 0);
        }
        let nl = net.links.len();
        if self.link_seen.len() < nl {
            self.link_seen.resize(nl, 0);
            self.link_in_pass.resize(nl, 0);
            self.link_closed.resize(nl, 0);
            self.old_load.resize(nl, LinkLoad::default());
            self.residual.resize(nl, 0.0);
            self.unfixed.resize(nl, 0);
            self.level.resize(nl, f64::INFINITY);
        }
        if self.stamp == u32::MAX || self.pass > u32::MAX - 1024 {
            self.in_h.iter_mut().for_each(|m| *m = 0);
            self.link_seen.iter_mut().for_each(|m| *m = 0);
            self.link_in_pass.iter_mut().for_each(|m| *m = 0);
            self.link_closed.iter_mut().for_each(|m| *m = 0);
            self.stamp = 0;
            self.pass = 0;
        }
        self.stamp += 1;
        self.h.clear();
    }

    fn add_to_h(&mut self, net: &FlowNet, f: FlowId) {
        if self.in_h[f as usize] != self.stamp {
            self.in_h[f as usize] = self.stamp;
            self.h.push((f, net.flow(f).rate));
        }
    }

    fn load(net: &FlowNet, l: usize) -> LinkLoad {
        let mut load = LinkLoad::default();
        for &f in &net.links[l].flows {
            let r = net.flow(f).rate;
            if r.is_finite() {
                load.sum += r;
                load.max = load.max.max(r);
            }
        }
        load
    }

    /// Remember a link's load before this call changed anything (first sight only).
    fn see(&mut self, net: &FlowNet, l: usize) {
        if self.link_seen[l] != self.stamp {
            self.link_seen[l] = self.stamp;
            self.old_load[l] = Self::load(net, l);
        }
    }

    /// Progressive filling of H, every other flow held at its rate. With `everything`,
    /// H holds every flow: residuals are then the capacities and need no scan.
    fn fill(&mut self, net: &mut FlowNet, everything: bool) {
        self.pass += 1;
        let (pass, mark) = (self.pass, self.stamp);
        self.touched.clear();
        self.heap.clear();
        if everything {
            self.touched.extend((0..net.links.len() as LinkId).filter(|&l| !net.links[l as usize].flows.is_empty()));
        } else {
            for k in 0..self.h.len() {
                for &l in net.flow(self.h[k].0).links() {
                    if self.link_in_pass[l as usize] != pass {
                        self.link_in_pass[l as usize] = pass;
                        self.touched.push(l);
                    }
                }
            }
        }
        for k in 0..self.touched.len() {
            let li = self.touched[k] as usize;
            let link = &net.links[li];
            let (mut residual, mut count) = (link.capacity, link.flows.len() as u32);
            if !everything {
                self.see(net, li);
                let link = &net.links[li];
                count = 0;
                for &f in &link.flows {
                    if self.in_h[f as usize] == mark {
                        count += 1;
                    } else {
                        residual -= net.flow(f).rate;
                    }
                }
            }
            self.residual[li] = residual.max(0.0);
            self.unfixed[li] = count;
            self.level[li] = f64::INFINITY;
            self.heap.push(Reverse((Share(self.residual[li] / count as f64), li as LinkId)));
        }
        // While filling, `in_h == mark` means unfixed; fixed flows get `mark` back after.
        // A link's share only grows during the fill (a flow fixed at the current level
        // s <= share leaves it), so heap keys are lower bounds: a popped link whose
        // share moved is pushed back with its current share instead of on every change.
        let fixed = mark.wrapping_sub(1) | 0x8000_0000;
        while let Some(Reverse((Share(key), l))) = self.heap.pop() {
            let li = l as usize;
            if self.unfixed[li] == 0 {
                continue;
            }
            let share = self.residual[li] / self.unfixed[li] as f64;
            if share > key {
                self.heap.push(Reverse((Share(share), l)));
                continue;
            }
            self.unfixed[li] = 0;
            self.level[li] = share;
            for k in 0..net.links[li].flows.len() {
                let f = net.links[li].flows[k];
                if self.in_h[f as usize] != mark {
                    continue;
                }
                self.in_h[f as usize] = fixed;
                for j in 0..net.flow(f).links().len() {
                    let l2 = net.flow(f).links()[j] as usize;
                    if l2 != li && self.unfixed[l2] > 0 {
                        self.residual[l2] = (self.residual[l2] - share).max(0.0);
                        self.unfixed[l2] -= 1;
                    }
                }
                net.set_rate(f, share);
            }
        }
        for &(f, _) in &self.h {
            self.in_h[f as usize] = mark;
        }
    }

    /// Flows outside H that break the optimality condition on the links H crosses.
    fn find_violators(&mut self, net: &FlowNet) {
        self.violators.clear();
        let mark = self.stamp;
        for k in 0..self.touched.len() {
            let li = self.touched[k] as usize;
            let cap = net.links[li].capacity;
            let now = Self::load(net, li);
            let old = self.old_load[li];
            let level = self.level[li];
            for &g in &net.links[li].flows {
                if self.in_h[g as usize] == mark {
                    continue;
                }
                let r = net.flow(g).rate;
                if r > level * (1.0 + EPS) {
                    // A flow of H saturated this link below g: g must give way.
                    self.violators.push(g);
                } else if now.bottleneck_for(cap, r) {
                    // g still has a bottleneck here.
                } else if old.bottleneck_for(cap, r) {
                    // g lost its bottleneck here; does it have another one?
                    let ok = net.flow(g).links().iter().any(|&l2| {
                        l2 as usize != li && Self::load(net, l2 as usize).bottleneck_for(net.links[l2 as usize].capacity, r)
                    });
                    if !ok {
                        self.violators.push(g);
                    }
                }
            }
        }
    }
}

impl SharingModel for MaxMin {
    fn name(&self) -> &'static str {
        "maxmin"
    }

    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        if added.is_empty() && removed.is_empty() {
            return;
        }
        self.prepare(net);
        for &f in added {
            self.add_to_h(net, f);
        }
        // Links a flow left: their loads before the departure include it; the flows that
        // got the most there (with it) start in H.
        for r in removed {
            for &l in r.links() {
                let li = l as usize;
                if self.link_seen[li] != self.stamp {
                    self.link_seen[li] = self.stamp;
                    self.old_load[li] = Self::load(net, li);
                }
                let load = &mut self.old_load[li];
                load.sum += r.rate;
                load.max = load.max.max(r.rate);
            }
        }
        // Close over the bottleneck structure: a link whose share moves moves the flows
        // bottlenecked on it, which move the shares of the other links they cross.
        self.queue.clear();
        for &f in added {
            self.queue.extend_from_slice(net.flow(f).links());
        }
        for r in removed {
            self.queue.extend_from_slice(r.links());
        }
        while let Some(l) = self.queue.pop() {
            let li = l as usize;
            if self.link_closed[li] == self.stamp {
                continue;
            }
            self.link_closed[li] = self.stamp;
            self.see(net, li);
            let load = self.old_load[li];
            if !load.saturated(net.links[li].capacity) {
                continue;
            }
            for k in 0..net.links[li].flows.len() {
                let f = net.links[li].flows[k];
                let rate = net.flow(f).rate;
                if rate.is_finite() && rate >= load.max * (1.0 - EPS) && self.in_h[f as usize] != self.stamp {
                    self.add_to_h(net, f);
                    for &l2 in net.flow(f).links() {
                        if self.link_closed[l2 as usize] != self.stamp {
                            self.queue.push(l2);
                        }
                    }
                }
            }
        }
        loop {
            if self.h.is_empty() {
                break;
            }
            if self.h.len().saturating_mul(self.full_solve_fraction) >= net.live() {
                // Most flows may move: one fill of everything is cheaper than local passes.
                for f in 0..net.id_bound() as FlowId {
                    if net.is_live(f) {
                        self.add_to_h(net, f);
                    }
                }
                self.fill(net, true);
                break;
            }
            self.fill(net, false);
            self.find_violators(net);
            if self.violators.is_empty() {
                break;
            }
            for k in 0..self.violators.len() {
                let g = self.violators[k];
                self.add_to_h(net, g);
            }
        }
        for &(f, before) in &self.h {
            if net.flow(f).rate != before {
                changed.push(f);
            }
        }
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
            for (l, link) in net.links.iter().enumerate() {
                let n = flows.iter().enumerate().filter(|(k, &f)| !fixed[*k] && net.flow(f).links().contains(&(l as u32))).count();
                if n > 0 {
                    let s = residual[l] / n as f64;
                    if best.map_or(true, |(b, _)| s < b) {
                        best = Some((s, l));
                    }
                }
                let _ = link;
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

    #[test]
    fn incremental_matches_reference_under_random_churn() {
        // Local passes only, full re-fills only, and the default mix.
        for fraction in [usize::MAX / 4, 1, FULL_SOLVE_FRACTION] {
            churn(fraction, 12, 7);
            churn(fraction, 40, 8);
        }
    }

    fn churn(fraction: usize, nl: usize, seed: u64) {
        let mut rng = crate::rng::SplitMix64::new(seed);
        let mut net = FlowNet::new((0..nl).map(|i| 1.0 + (i % 4) as f64));
        let mut model = MaxMin { full_solve_fraction: fraction, ..MaxMin::default() };
        let mut live: Vec<FlowId> = Vec::new();
        let mut changed = Vec::new();
        for step in 0..400 {
            let mut added = Vec::new();
            let mut removed = Vec::new();
            let adds = rng.below(3);
            for _ in 0..adds {
                let a = rng.below(nl as u64) as u32;
                let mut b = rng.below(nl as u64) as u32;
                if b == a {
                    b = (b + 1) % nl as u32;
                }
                let c = (a + b + 1) % nl as u32;
                let links: Vec<u32> = match rng.below(4) {
                    0 => vec![a],
                    1 if c != a && c != b => vec![a, c, b],
                    _ => vec![a, b],
                };
                let f = net.add_flow(&links);
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
            changed.clear();
            model.update(&mut net, &added, &removed, &mut changed);
            let want = reference(&net, &live);
            for (k, &f) in live.iter().enumerate() {
                let got = net.flow(f).rate;
                assert!((got - want[k]).abs() <= 1e-9 * want[k].max(1.0), "fraction {fraction} step {step} flow {f}: {got} vs {}", want[k]);
            }
        }
    }
}
