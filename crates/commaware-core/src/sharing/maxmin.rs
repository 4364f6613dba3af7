//! Max-min fair sharing by progressive filling, re-solved incrementally.
//!
//! Progressive filling raises all unfixed flows together; the link whose fair share
//! `residual / unfixed` is smallest saturates first and fixes its flows at that level.
//! Levels only grow during the fill, so a change whose effect starts at level λ leaves
//! every flow rated below λ untouched:
//! * a departing flow of rate r crossed no link that saturated below r, so λ = r;
//! * an arriving flow g gets at least min over its links of capacity/flows, so λ is that.
//!
//! We therefore re-fill only the flows rated ≥ λ that are connected to the changed
//! links through such flows; lower-rated flows are fixed and just reduce residuals.
//! SimGrid re-solves the whole connected component instead.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{FlowId, FlowNet, LinkId, RemovedFlow, SharingModel};

/// Relative slack when comparing a rate with the level λ, to include ties.
const LEVEL_SLACK: f64 = 1e-9;

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

#[derive(Default)]
pub struct MaxMin {
    // Scratch space, reused between calls (indexed by link or flow id).
    flow_mark: Vec<u32>,
    link_mark: Vec<u32>,
    residual: Vec<f64>,
    unfixed: Vec<u32>,
    generation: Vec<u32>,
    stamp: u32,
    touched: Vec<LinkId>,
    heap: BinaryHeap<Reverse<(Share, LinkId, u32)>>,
}

impl MaxMin {
    fn grow(&mut self, net: &FlowNet) {
        if self.flow_mark.len() < net.id_bound() {
            self.flow_mark.resize(net.id_bound(), 0);
        }
        let nl = net.links.len();
        if self.link_mark.len() < nl {
            self.link_mark.resize(nl, 0);
            self.residual.resize(nl, 0.0);
            self.unfixed.resize(nl, 0);
            self.generation.resize(nl, 0);
        }
        // Marks: `stamp` = in the re-fill set and unfixed, `stamp + 1` = fixed.
        if self.stamp > u32::MAX - 4 {
            self.flow_mark.iter_mut().for_each(|m| *m = 0);
            self.link_mark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 0;
        }
        self.stamp += 2;
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
        self.grow(net);
        let (unfixed_mark, fixed_mark) = (self.stamp, self.stamp + 1);

        // Lowest level the change can reach, and the links where it starts.
        let mut level = f64::INFINITY;
        self.touched.clear();
        let seed = |l: LinkId, this: &mut Self| {
            if this.link_mark[l as usize] != unfixed_mark {
                this.link_mark[l as usize] = unfixed_mark;
                this.touched.push(l);
            }
        };
        for &f in added {
            for &l in net.flow(f).links() {
                let link = &net.links[l as usize];
                level = level.min(link.capacity / link.flows.len() as f64);
                seed(l, self);
            }
        }
        for r in removed {
            level = level.min(r.rate);
            for &l in r.links() {
                seed(l, self);
            }
        }
        let threshold = level * (1.0 - LEVEL_SLACK);

        // Collect the re-fill set: flows rated >= threshold reachable from the seeds.
        let mut i = 0;
        while i < self.touched.len() {
            let l = self.touched[i] as usize;
            i += 1;
            for &f in &net.links[l].flows {
                let fi = f as usize;
                if self.flow_mark[fi] == unfixed_mark || net.flow(f).rate < threshold {
                    continue;
                }
                self.flow_mark[fi] = unfixed_mark;
                for &l2 in net.flow(f).links() {
                    if self.link_mark[l2 as usize] != unfixed_mark {
                        self.link_mark[l2 as usize] = unfixed_mark;
                        self.touched.push(l2);
                    }
                }
            }
        }

        // Residual capacity left by the fixed (lower) flows, and unfixed counts.
        self.heap.clear();
        for &l in &self.touched {
            let li = l as usize;
            let link = &net.links[li];
            let mut residual = link.capacity;
            let mut count = 0u32;
            for &f in &link.flows {
                if self.flow_mark[f as usize] == unfixed_mark {
                    count += 1;
                } else {
                    residual -= net.flow(f).rate;
                }
            }
            self.residual[li] = residual.max(0.0);
            self.unfixed[li] = count;
            self.generation[li] = self.generation[li].wrapping_add(1);
            if count > 0 {
                self.heap.push(Reverse((Share(self.residual[li] / count as f64), l, self.generation[li])));
            }
        }

        // Progressive filling over the re-fill set.
        while let Some(Reverse((Share(share), l, gen))) = self.heap.pop() {
            let li = l as usize;
            if gen != self.generation[li] || self.unfixed[li] == 0 {
                continue;
            }
            self.unfixed[li] = 0;
            for k in 0..net.links[li].flows.len() {
                let f = net.links[li].flows[k];
                if self.flow_mark[f as usize] != unfixed_mark {
                    continue;
                }
                self.flow_mark[f as usize] = fixed_mark;
                let nlinks = net.flow(f).links().len();
                for j in 0..nlinks {
                    let l2 = net.flow(f).links()[j] as usize;
                    if l2 == li || self.unfixed[l2] == 0 {
                        continue;
                    }
                    self.residual[l2] = (self.residual[l2] - share).max(0.0);
                    self.unfixed[l2] -= 1;
                    self.generation[l2] = self.generation[l2].wrapping_add(1);
                    if self.unfixed[l2] > 0 {
                        let s = self.residual[l2] / self.unfixed[l2] as f64;
                        self.heap.push(Reverse((Share(s), l2 as LinkId, self.generation[l2])));
                    }
                }
                if net.flow(f).rate != share {
                    net.set_rate(f, share);
                    changed.push(f);
                }
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
        let mut rng = crate::rng::SplitMix64::new(7);
        let nl = 12;
        let mut net = FlowNet::new((0..nl).map(|i| 1.0 + (i % 4) as f64));
        let mut model = MaxMin::default();
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
                let links: Vec<u32> = if rng.below(3) == 0 { vec![a] } else { vec![a, b] };
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
                assert!((got - want[k]).abs() <= 1e-9 * want[k].max(1.0), "step {step} flow {f}: {got} vs {}", want[k]);
            }
        }
    }
}
