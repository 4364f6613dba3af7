//! Penalty models in the engine: each inter-node transfer runs at its single-transfer
//! bandwidth divided by its penalty in the graph of the transfers active now.
//!
//! Paper 004's predictions are static (penalty × t_ref for a whole scheme). Re-evaluating
//! the penalties whenever a transfer starts or ends is our extension: a transfer joins
//! the graph when its latency is over and leaves it when its last byte arrives.
//! Intra-node messages use the host's memory link, shared equally, and are not in the
//! graph. A backbone, if present, is shared max-min with the penalised rates as per-flow
//! caps. `ib-simgrid` also shares the NIC links max-min (CM02) under those caps, as
//! SimGrid's IB model does (`NetworkIBModel`, SimGrid 3.32).
//!
//! Only what a change can reach is recomputed: for the local formulas (GigE §V-A, IB)
//! the communications two arcs away from the endpoints of a transfer that came or went;
//! for Myrinet (§V-B) its whole connected component.

use super::myrinet;
use super::penalty::{conflict_classes, Adjacency, LocalScratch, PenaltyModel};
use super::{water_fill, Cm02, Cm02Params, FlowAttrs, FlowId, FlowNet, LinkId, MaxMin4, PenaltyCounts, Progress, RemovedFlow, SharingModel};
use crate::error::{Error, ErrorKind, Result};
use crate::network::platform::Platform;

const NONE: u32 = u32::MAX;

/// Max-min under per-flow caps, kept incrementally by the max-min model on a mirror of the
/// engine's net where each inter-node flow also crosses a private link whose capacity is its
/// cap (`ib-simgrid`, with or without a backbone: the mirror has every link of the net, and
/// the intra-node flows on their memory link). A cap that changes is a flow leaving its
/// private link and coming back on it with the new capacity. When the engine lets the model
/// keep the flows' progress, the mirror's max-min keeps it (a re-rate then costs per
/// bottleneck group, not per flow), and a flow that comes back carries the bytes it had left.
struct CappedMaxMin {
    mirror: FlowNet,
    /// A mirror flow crosses up to four links: up, backbone, down, and its private link.
    model: MaxMin4,
    /// Private link of engine flow f: `base + f`.
    base: u32,
    /// Engine flow → mirror flow, and back (`NONE` when absent).
    inner: Vec<FlowId>,
    outer: Vec<FlowId>,
    added: Vec<FlowId>,
    removed: Vec<RemovedFlow>,
    changed: Vec<FlowId>,
}

impl CappedMaxMin {
    fn new(net: &FlowNet, tracking: bool) -> Self {
        let mirror = FlowNet::new(net.links.iter().map(|l| l.capacity));
        let base = mirror.links.len() as u32;
        let mut model = MaxMin4::default();
        if tracking {
            model.track_progress();
        }
        CappedMaxMin {
            mirror,
            model,
            base,
            inner: Vec::new(),
            outer: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
        }
    }

    /// Engine flow `f` leaves the mirror. With `tracked`, it has not completed: returns the
    /// bytes it had left (else 0).
    fn leave(&mut self, f: FlowId, tracked: bool) -> f64 {
        let g = std::mem::replace(&mut self.inner[f as usize], NONE);
        if g == NONE {
            return 0.0;
        }
        let left = if tracked {
            let left = self.model.remaining(g);
            self.model.complete(g);
            left
        } else {
            0.0
        };
        self.outer[g as usize] = NONE;
        self.removed.push(self.mirror.remove_flow(g));
        left
    }

    /// Engine flow `f` (crossing `links`) joins with rate cap `cap` (`None`: uncapped, an
    /// intra-node flow on its memory link). Returns its mirror flow.
    fn join(&mut self, f: FlowId, links: &[LinkId], cap: Option<f64>) -> FlowId {
        let mut all = [0; super::MAX_HOPS + 1];
        all[..links.len()].copy_from_slice(links);
        let mut n = links.len();
        if let Some(cap) = cap {
            let private = self.base + f;
            self.mirror.set_capacity_growing(private, cap);
            self.model.set_capacity_of_emptied_link(private, cap);
            all[n] = private;
            n += 1;
        }
        let g = self.mirror.add_flow(&all[..n]);
        if self.outer.len() <= g as usize {
            self.outer.resize(g as usize + 1, NONE);
        }
        self.outer[g as usize] = f;
        self.inner[f as usize] = g;
        self.added.push(g);
        g
    }
}

/// The engine's flows as a communication graph: node h sends through link h (its
/// up-link) and receives through link n + h (its down-link).
struct NetView<'a> {
    net: &'a FlowNet,
    n: u32,
}

impl Adjacency for NetView<'_> {
    fn outgoing(&self, node: u32) -> &[u32] {
        &self.net.links[node as usize].flows
    }
    fn incoming(&self, node: u32) -> &[u32] {
        &self.net.links[(self.n + node) as usize].flows
    }
    fn ends(&self, f: u32) -> (u32, u32) {
        let links = self.net.flow(f).links();
        (links[0], links[links.len() - 1] - self.n)
    }
}

pub struct Penalized {
    model: PenaltyModel,
    n: u32,
    backbone: Option<LinkId>,
    /// Current penalty and conflict classes seen so far, by flow id.
    penalty: Vec<f64>,
    classes: Vec<u8>,
    /// Per-flow rate cap (single-transfer bandwidth / penalty), by flow id.
    cap: Vec<f64>,
    /// Scratch: an epoch mark per flow and per link, to collect each once.
    flow_mark: Vec<u32>,
    link_mark: Vec<u32>,
    epoch: u32,
    affected: Vec<FlowId>,
    rates: Vec<f64>,
    /// `ib-simgrid`: incremental max-min under the caps.
    capped: Option<CappedMaxMin>,
    /// `ib-simgrid`: the engine lets the model keep the flows' progress (through the
    /// capped max-min), with the time and each new flow's bytes.
    tracking: bool,
    now: f64,
    bytes: Vec<f64>,
    /// Myrinet: the component counts made so far.
    counts: PenaltyCounts,
    /// The local formulas' per-node aggregates, forgotten before each re-evaluation.
    local: LocalScratch,
}

impl Penalized {
    /// `hosts` hosts, links laid out as the engine does (up h, down n + h, memory 2n + h,
    /// backbone 3n when `backbone`).
    pub fn new(model: PenaltyModel, hosts: usize, backbone: bool) -> Penalized {
        let n = hosts as u32;
        Penalized {
            model,
            n,
            backbone: backbone.then_some(3 * n),
            penalty: Vec::new(),
            classes: Vec::new(),
            cap: Vec::new(),
            flow_mark: Vec::new(),
            link_mark: Vec::new(),
            epoch: 0,
            affected: Vec::new(),
            rates: Vec::new(),
            capped: None,
            tracking: false,
            now: 0.0,
            bytes: Vec::new(),
            counts: PenaltyCounts::default(),
            local: LocalScratch::default(),
        }
    }

    /// Current penalty of a live inter-node flow.
    pub fn flow_penalty(&self, f: FlowId) -> f64 {
        self.penalty[f as usize]
    }

    fn is_intra(&self, links: &[LinkId]) -> bool {
        links[0] >= 2 * self.n
    }

    fn new_epoch(&mut self, net: &FlowNet) {
        if self.flow_mark.len() < net.id_bound() {
            self.flow_mark.resize(net.id_bound(), 0);
            self.penalty.resize(net.id_bound(), 1.0);
            self.classes.resize(net.id_bound(), 0);
            self.cap.resize(net.id_bound(), 0.0);
        }
        if self.link_mark.len() < net.links.len() {
            self.link_mark.resize(net.links.len(), 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.flow_mark.iter_mut().for_each(|m| *m = 0);
            self.link_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
    }

    fn take(&mut self, f: FlowId) {
        if self.flow_mark[f as usize] != self.epoch {
            self.flow_mark[f as usize] = self.epoch;
            self.affected.push(f);
        }
    }

    /// Collect the inter-node flows whose penalty a change at the pair (s, d) can move.
    fn collect_around(&mut self, net: &FlowNet, s: u32, d: u32) {
        let view = NetView { net, n: self.n };
        match self.model {
            PenaltyModel::Myrinet(_) => self.collect_component(net, s, d),
            _ => {
                // A formula reads the degrees at both ends and those of the arcs next to
                // them: the arcs of s and d, and the arcs of their neighbours.
                for &k in view.outgoing(s) {
                    self.take(k);
                    for &j in view.incoming(view.ends(k).1) {
                        self.take(j);
                    }
                }
                for &k in view.incoming(d) {
                    self.take(k);
                    for &j in view.outgoing(view.ends(k).0) {
                        self.take(j);
                    }
                }
            }
        }
    }

    /// Collect the connected component(s) of the sending side of s and the receiving
    /// side of d (a node's two sides are separate vertices: in-out is no conflict).
    fn collect_component(&mut self, net: &FlowNet, s: u32, d: u32) {
        let n = self.n;
        // Vertices as link ids: sending side h = link h, receiving side h = link n + h.
        let mut stack = vec![s, n + d];
        while let Some(v) = stack.pop() {
            if self.link_mark[v as usize] == self.epoch {
                continue;
            }
            self.link_mark[v as usize] = self.epoch;
            for &f in &net.links[v as usize].flows {
                self.take(f);
                let links = net.flow(f).links();
                for other in [links[0], links[links.len() - 1]] {
                    if other != v && self.link_mark[other as usize] != self.epoch {
                        stack.push(other);
                    }
                }
            }
        }
    }

    /// Recompute the penalties of `affected` and their rate caps.
    fn repenalize(&mut self, net: &FlowNet) {
        let view = NetView { net, n: self.n };
        match &self.model {
            PenaltyModel::Myrinet(opts) => {
                // `affected` is a union of whole components; Myrinet counts per component.
                // A communication alone in its component has one state set: penalty 1.
                let mut tangled: Vec<FlowId> = Vec::new();
                for &f in &self.affected {
                    let (s, d) = view.ends(f);
                    if view.outgoing(s).len() == 1 && view.incoming(d).len() == 1 {
                        self.penalty[f as usize] = 1.0;
                    } else {
                        tangled.push(f);
                    }
                }
                if !tangled.is_empty() {
                    let ends: Vec<(u32, u32)> = tangled.iter().map(|&f| view.ends(f)).collect();
                    // A stop (util::cancel) leaves them as they were: the replay's next check
                    // sees the same stop and ends the run.
                    if let Ok(r) = myrinet::myrinet_penalties(&ends, opts, false) {
                        for (k, &f) in tangled.iter().enumerate() {
                            self.penalty[f as usize] = r.penalties[k];
                        }
                        for c in &r.components {
                            self.counts.counts += 1;
                            self.counts.estimated += u64::from(!c.exact);
                            self.counts.bounded += u64::from(!c.converged);
                            self.counts.largest_error = self.counts.largest_error.max(c.penalty_error);
                        }
                    }
                }
            }
            m => {
                self.local.forget();
                for &f in &self.affected {
                    self.penalty[f as usize] = self.local.local_penalty(m, &view, f);
                }
            }
        }
        for &f in &self.affected {
            let (s, d) = view.ends(f);
            self.classes[f as usize] |= conflict_classes(&view, f);
            let single = net.links[s as usize].capacity.min(net.links[(self.n + d) as usize].capacity);
            self.cap[f as usize] = single / self.penalty[f as usize];
        }
    }

    /// Max-min over the links of `flows`, each flow capped at its `cap`; `flows` must hold
    /// every flow crossing those links. Rates go to `self.rates`. Progressive filling,
    /// quadratic: the tests' oracle for the incremental capped max-min.
    #[cfg(test)]
    fn fill_with_caps(&mut self, net: &FlowNet, flows: &[FlowId]) {
        use std::collections::HashMap;
        let mut link_ix: HashMap<LinkId, usize> = HashMap::new();
        let mut remaining: Vec<f64> = Vec::new();
        let mut count: Vec<usize> = Vec::new();
        let flow_links: Vec<Vec<usize>> = flows
            .iter()
            .map(|&f| {
                net.flow(f)
                    .links()
                    .iter()
                    .map(|&l| {
                        let ix = *link_ix.entry(l).or_insert_with(|| {
                            remaining.push(net.links[l as usize].capacity);
                            count.push(0);
                            remaining.len() - 1
                        });
                        count[ix] += 1;
                        ix
                    })
                    .collect()
            })
            .collect();
        self.rates.clear();
        self.rates.resize(flows.len(), f64::NAN);
        let mut left = flows.len();
        while left > 0 {
            // Progressive filling: the lowest fair share, unless caps bind first. Shares
            // only grow as flows are fixed, so every flow capped below the current
            // share is fixed at its cap at once.
            let level = (0..remaining.len())
                .filter(|&l| count[l] > 0)
                .map(|l| remaining[l].max(0.0) / count[l] as f64)
                .fold(f64::INFINITY, f64::min);
            let mut fixed_any = false;
            for k in 0..flows.len() {
                let c = self.cap[flows[k] as usize];
                if self.rates[k].is_nan() && c <= level {
                    self.fix(k, c, &flow_links, &mut remaining, &mut count);
                    left -= 1;
                    fixed_any = true;
                }
            }
            if fixed_any {
                continue;
            }
            let tight: Vec<bool> = (0..remaining.len())
                .map(|l| count[l] > 0 && remaining[l].max(0.0) / count[l] as f64 <= level * (1.0 + 1e-12))
                .collect();
            for k in 0..flows.len() {
                if self.rates[k].is_nan() && flow_links[k].iter().any(|&l| tight[l]) {
                    self.fix(k, level, &flow_links, &mut remaining, &mut count);
                    left -= 1;
                }
            }
        }
    }

    #[cfg(test)]
    fn fix(&mut self, k: usize, rate: f64, flow_links: &[Vec<usize>], remaining: &mut [f64], count: &mut [usize]) {
        self.rates[k] = rate;
        for &l in &flow_links[k] {
            remaining[l] -= rate;
            count[l] -= 1;
        }
    }

    /// `ib-simgrid`: new penalties for `affected`, then the capped max-min model learns
    /// which flows left, came, or changed cap (a flow that left frees its links, the
    /// backbone included, for the others).
    fn update_capped(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        let tracking = self.tracking;
        let mut cm = self.capped.take().unwrap_or_else(|| CappedMaxMin::new(net, tracking));
        if cm.inner.len() < net.id_bound() {
            cm.inner.resize(net.id_bound(), NONE);
        }
        if tracking {
            cm.model.set_time(self.now);
        }
        // (A flow that left has completed: nothing to carry.)
        for r in removed {
            cm.leave(r.id, false);
        }
        // Flows present before whose cap changes leave their private link and come back.
        let old: Vec<f64> = self.affected.iter().map(|&f| self.cap[f as usize]).collect();
        self.repenalize(net);
        let mut new: Vec<FlowId> = added.to_vec();
        new.sort_unstable();
        for (k, &f) in self.affected.iter().enumerate() {
            let cap = self.cap[f as usize];
            let joins = new.binary_search(&f).is_ok();
            if joins || old[k].to_bits() != cap.to_bits() {
                // (A new flow is in no private link yet: an id's previous flow left.)
                let left = cm.leave(f, tracking && !joins);
                let g = cm.join(f, net.flow(f).links(), Some(cap));
                if tracking {
                    cm.model.start(g, if joins { self.bytes[f as usize] } else { left });
                }
            }
        }
        // Intra-node flows share their host's memory link: max-min over that one link.
        for &f in added {
            if self.is_intra(net.flow(f).links()) {
                let g = cm.join(f, net.flow(f).links(), None);
                if tracking {
                    cm.model.start(g, self.bytes[f as usize]);
                }
            }
        }
        let (a, r) = (std::mem::take(&mut cm.added), std::mem::take(&mut cm.removed));
        cm.changed.clear();
        cm.model.update(&mut cm.mirror, &a, &r, &mut cm.changed);
        cm.added = a;
        cm.added.clear();
        cm.removed = r;
        cm.removed.clear();
        for k in 0..cm.changed.len() {
            let g = cm.changed[k];
            let f = cm.outer[g as usize];
            if f != NONE {
                let rate = cm.mirror.flow(g).rate;
                self.set(net, f, rate, changed);
            }
        }
        self.capped = Some(cm);
    }

    /// Collect into `affected` the inter-node flows whose penalty the flows `added` and
    /// `removed` can move (and update the conflict classes they change); returns the
    /// memory links of the intra-node flows among them.
    fn collect_changes(&mut self, net: &FlowNet, added: &[FlowId], removed: &[RemovedFlow]) -> Vec<LinkId> {
        self.new_epoch(net);
        self.affected.clear();
        let mut memory_links: Vec<LinkId> = Vec::new();
        let ends = |links: &[LinkId]| (links[0], links[links.len() - 1] - self.n);
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for links in added.iter().map(|&f| net.flow(f).links()).chain(removed.iter().map(|r| r.links())) {
            if self.is_intra(links) {
                memory_links.push(links[0]);
            } else {
                pairs.push(ends(links));
            }
        }
        for &f in added {
            if !self.is_intra(net.flow(f).links()) {
                self.classes[f as usize] = 0;
            }
        }
        for &(s, d) in &pairs {
            self.collect_around(net, s, d);
            // In-out conflicts appear at the other side of s and d: classes only.
            let view = NetView { net, n: self.n };
            for &f in view.outgoing(d).iter().chain(view.incoming(s)) {
                self.classes[f as usize] |= conflict_classes(&view, f);
            }
        }
        memory_links
    }

    fn set(&mut self, net: &mut FlowNet, f: FlowId, rate: f64, changed: &mut Vec<FlowId>) {
        if net.flow(f).rate != rate {
            net.set_rate(f, rate);
            changed.push(f);
        }
    }
}

impl SharingModel for Penalized {
    fn name(&self) -> &'static str {
        self.model.name()
    }

    fn flow_conflicts(&self, f: FlowId) -> Option<u8> {
        Some(self.classes[f as usize])
    }

    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        let mut memory_links = self.collect_changes(net, added, removed);
        if matches!(self.model, PenaltyModel::IbSimgrid(_)) {
            // The capped max-min rates the intra-node flows too.
            memory_links.clear();
            self.update_capped(net, added, removed, changed);
        } else if !self.affected.is_empty() || self.backbone.is_some_and(|_| removed.iter().any(|r| !self.is_intra(r.links()))) {
            // (With a backbone, an inter-node flow that left frees backbone capacity for
            // every flow on it, even when no penalty changed: they are shared again.)
            if !self.affected.is_empty() {
                self.repenalize(net);
            }
            let flows: Vec<FlowId> = match self.backbone {
                Some(bb) => {
                    // The penalty replaces NIC sharing; the backbone (every inter-node flow
                    // crosses it) is shared max-min under the caps: water-filling.
                    let flows = net.links[bb as usize].flows.clone();
                    let caps: Vec<f64> = flows.iter().map(|&f| self.cap[f as usize]).collect();
                    water_fill(&caps, net.links[bb as usize].capacity, &mut self.rates);
                    flows
                }
                None => {
                    let flows = std::mem::take(&mut self.affected);
                    self.rates.clear();
                    self.rates.extend(flows.iter().map(|&f| self.cap[f as usize]));
                    flows
                }
            };
            let rates = std::mem::take(&mut self.rates);
            for (&f, &r) in flows.iter().zip(&rates) {
                self.set(net, f, r, changed);
            }
            self.rates = rates;
        }
        // Intra-node messages share their host's memory link equally.
        memory_links.sort_unstable();
        memory_links.dedup();
        for l in memory_links {
            let on = net.links[l as usize].flows.clone();
            let rate = net.links[l as usize].capacity / on.len().max(1) as f64;
            for f in on {
                self.set(net, f, rate, changed);
            }
        }
        // Every added flow was rated: its rate was infinite (unrated) before, so `set`
        // reported it as changed.
        debug_assert!(self.tracking || added.iter().all(|f| changed.contains(f)));
    }

    fn penalty_counts(&self) -> Option<PenaltyCounts> {
        matches!(self.model, PenaltyModel::Myrinet(_)).then_some(self.counts)
    }

    fn track_progress(&mut self) -> Option<&mut dyn Progress> {
        if !matches!(self.model, PenaltyModel::IbSimgrid(_)) {
            return None;
        }
        self.tracking = true;
        Some(self)
    }
}

/// `ib-simgrid`'s progress, kept by the capped max-min's mirror (mirror flows mapped back
/// to the engine's).
impl Progress for Penalized {
    fn set_time(&mut self, now: f64) {
        self.now = now;
    }

    fn start(&mut self, f: FlowId, bytes: f64) {
        if self.bytes.len() <= f as usize {
            self.bytes.resize(f as usize + 1, 0.0);
        }
        self.bytes[f as usize] = bytes;
    }

    fn next_completion(&self) -> (f64, FlowId) {
        match &self.capped {
            Some(cm) => {
                let (t, g) = cm.model.next_completion();
                if t == f64::INFINITY {
                    (t, 0)
                } else {
                    (t, cm.outer[g as usize])
                }
            }
            None => (f64::INFINITY, 0),
        }
    }

    fn complete(&mut self, f: FlowId) {
        if let Some(cm) = &mut self.capped {
            let g = cm.inner[f as usize];
            if g != NONE {
                cm.model.complete(g);
            }
        }
    }

    fn rate(&self, f: FlowId) -> f64 {
        match &self.capped {
            Some(cm) if cm.inner.get(f as usize).is_some_and(|&g| g != NONE) => cm.model.rate(cm.inner[f as usize]),
            _ => f64::INFINITY,
        }
    }
}

/// Each host's private link on `platform`'s topology, as (sending side, receiving side),
/// or the error saying which host has none: the penalty models (paper 004) apply at the
/// NIC, so a topology without one link per host between it and the fabric cannot take them.
pub fn private_links(platform: &Platform, model: &str) -> Result<Vec<(LinkId, LinkId)>> {
    let topo = platform.topology.as_ref().expect("a platform with a topology");
    let kind = topo.kind();
    let why = |what: String| {
        Error::new(
            ErrorKind::Options,
            "model",
            format!("the {model} model applies its penalties at each host's private link (its NIC) and {what}; use maxmin on this platform"),
        )
    };
    if kind == "torus" {
        return Err(why("a torus has none (its hosts are its switches, linked to their neighbours in every dimension)".into()));
    }
    (0..topo.host_count() as u32)
        .map(|h| {
            topo.private_links(h).ok_or_else(|| {
                let name = platform.hosts.get(h as usize).map_or_else(|| format!("{h}"), |x| x.name.clone());
                why(format!("host `{name}` has none in this {kind} topology (it is attached to the fabric by several links)"))
            })
        })
        .collect()
}

/// A penalty model on a platform with a topology (issue 28): the penalties are those of
/// the star made of the hosts' private links (their NICs; host h sends on its private
/// link's sending side and receives on its receiving side), and the rest of each route,
/// the fabric, is shared as `maxmin` shares it on that topology (SimGrid's CM02, with its
/// parameters), each flow capped at its single-transfer bandwidth over its penalty. As on
/// the star, the penalty replaces the sharing of the private links, except under
/// `ib-simgrid`, whose CM02 also shares them (under the caps). Messages from a host to
/// itself (memory link or loopback) are in no conflict graph and are shared by CM02 alone.
pub struct PenalizedFabric {
    /// The model on the star of private links (`star`): link h is host h's sending side,
    /// link n + h its receiving side.
    inner: Penalized,
    star: FlowNet,
    /// Per engine link: the host whose private link's sending (receiving) side it is.
    send_owner: Vec<u32>,
    recv_owner: Vec<u32>,
    /// Keep the private links in the fabric (`ib-simgrid`).
    share_private: bool,
    /// The fabric, a mirror of the engine's links (made at the first update): engine flow f
    /// crosses its route's shared links and link `cap_base + f`, whose capacity is its cap
    /// (inter-node flows only).
    fabric: FlowNet,
    cm02: Cm02,
    cap_base: u32,
    /// Engine flow → star flow, fabric flow (`NONE` when absent), and back.
    to_star: Vec<FlowId>,
    from_star: Vec<FlowId>,
    to_fab: Vec<FlowId>,
    from_fab: Vec<FlowId>,
    /// The cap each engine flow is in the fabric with.
    fab_cap: Vec<f64>,
    scratch: Vec<LinkId>,
}

impl PenalizedFabric {
    /// `model` on `platform` (with a topology), the fabric shared by CM02 with `params`.
    /// Errors when a host has no private link.
    pub fn new(model: PenaltyModel, platform: &Platform, params: Cm02Params) -> Result<PenalizedFabric> {
        let private = private_links(platform, model.name())?;
        let topo = platform.topology.as_ref().expect("a platform with a topology");
        let n = private.len();
        let links = topo.link_count();
        let (mut send_owner, mut recv_owner) = (vec![NONE; links], vec![NONE; links]);
        let mut star_caps = vec![0.0; 2 * n];
        for (h, &(up, down)) in private.iter().enumerate() {
            send_owner[up as usize] = h as u32;
            recv_owner[down as usize] = h as u32;
            star_caps[h] = topo.link(up).bandwidth;
            star_caps[n + h] = topo.link(down).bandwidth;
        }
        let share_private = matches!(model, PenaltyModel::IbSimgrid(_));
        Ok(PenalizedFabric {
            inner: Penalized::new(model, n, false),
            star: FlowNet::new(star_caps),
            send_owner,
            recv_owner,
            share_private,
            fabric: FlowNet::default(),
            cm02: Cm02::new(platform, params),
            cap_base: 0,
            to_star: Vec::new(),
            from_star: Vec::new(),
            to_fab: Vec::new(),
            from_fab: Vec::new(),
            fab_cap: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The hosts at the ends of an engine flow's route, from its private links (the first
    /// sending side and the last receiving side it crosses); `None` for a message from a
    /// host to itself, which crosses no private link.
    fn ends(&self, links: &[LinkId]) -> Option<(u32, u32)> {
        let owner = |v: &Vec<u32>, l: LinkId| v.get(l as usize).copied().unwrap_or(NONE);
        let s = links.iter().map(|&l| owner(&self.send_owner, l)).find(|&h| h != NONE)?;
        let d = links.iter().rev().map(|&l| owner(&self.recv_owner, l)).find(|&h| h != NONE)?;
        Some((s, d))
    }

    fn is_private(&self, l: LinkId) -> bool {
        let l = l as usize;
        l < self.send_owner.len() && (self.send_owner[l] != NONE || self.recv_owner[l] != NONE)
    }

    /// Current penalty of a live inter-node flow (engine id).
    pub fn flow_penalty(&self, f: FlowId) -> f64 {
        self.inner.flow_penalty(self.to_star[f as usize])
    }

    /// Engine flow `f` (re)joins the fabric with rate cap `cap` (`None`: intra-node).
    fn join(&mut self, net: &FlowNet, f: FlowId, cap: Option<f64>, added: &mut Vec<FlowId>) {
        let FlowAttrs { latency, forward } = net.attrs(f);
        let route = net.flow(f).links();
        let mut links = std::mem::take(&mut self.scratch);
        links.clear();
        if let Some(cap) = cap {
            let l = self.cap_base + f;
            self.fabric.set_capacity_growing(l, cap);
            links.push(l);
        }
        let keep = |l: &&LinkId| self.share_private || !self.is_private(**l);
        links.extend(route[..forward as usize].iter().filter(keep));
        let fwd = links.len() as u32;
        links.extend(route[forward as usize..].iter().filter(keep));
        let g = self.fabric.add_flow(&links);
        self.fabric.set_attrs(g, FlowAttrs { latency, forward: fwd });
        self.scratch = links;
        if self.from_fab.len() <= g as usize {
            self.from_fab.resize(g as usize + 1, NONE);
        }
        self.from_fab[g as usize] = f;
        self.to_fab[f as usize] = g;
        self.fab_cap[f as usize] = cap.unwrap_or(f64::INFINITY);
        added.push(g);
    }

    fn leave(&mut self, f: FlowId, removed: &mut Vec<RemovedFlow>) {
        let g = std::mem::replace(&mut self.to_fab[f as usize], NONE);
        if g != NONE {
            self.from_fab[g as usize] = NONE;
            removed.push(self.fabric.remove_flow(g));
        }
    }
}

impl SharingModel for PenalizedFabric {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn penalty_counts(&self) -> Option<PenaltyCounts> {
        self.inner.penalty_counts()
    }

    fn flow_conflicts(&self, f: FlowId) -> Option<u8> {
        match self.to_star.get(f as usize) {
            Some(&m) if m != NONE => self.inner.flow_conflicts(m),
            _ => Some(0),
        }
    }

    fn crosstraffic(&self) -> bool {
        self.cm02.crosstraffic()
    }

    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        if self.fabric.links.is_empty() {
            // The fabric mirrors the engine's links (the topology's, then the memory links).
            self.fabric = FlowNet::new(net.links.iter().map(|l| l.capacity));
            self.cap_base = net.links.len() as u32;
        }
        let bound = net.id_bound();
        for v in [&mut self.to_star, &mut self.to_fab] {
            if v.len() < bound {
                v.resize(bound, NONE);
            }
        }
        if self.fab_cap.len() < bound {
            self.fab_cap.resize(bound, f64::INFINITY);
        }
        // Flows that left: out of the star and of the fabric.
        let (mut star_added, mut star_removed) = (Vec::new(), Vec::new());
        let (mut fab_added, mut fab_removed) = (Vec::new(), Vec::new());
        for r in removed {
            let m = std::mem::replace(&mut self.to_star[r.id as usize], NONE);
            if m != NONE {
                self.from_star[m as usize] = NONE;
                star_removed.push(self.star.remove_flow(m));
            }
            self.leave(r.id, &mut fab_removed);
        }
        // New inter-node flows join the star between their ends' private links.
        let hosts = (self.star.links.len() / 2) as u32;
        for &f in added {
            if let Some((s, d)) = self.ends(net.flow(f).links()) {
                let m = self.star.add_flow(&[s, hosts + d]);
                if self.from_star.len() <= m as usize {
                    self.from_star.resize(m as usize + 1, NONE);
                }
                self.from_star[m as usize] = f;
                self.to_star[f as usize] = m;
                star_added.push(m);
            }
        }
        // Penalties, then caps, of the flows the change can reach.
        self.inner.collect_changes(&self.star, &star_added, &star_removed);
        if !self.inner.affected.is_empty() {
            self.inner.repenalize(&self.star);
        }
        // Flows that are new or whose cap moved (re)join the fabric.
        let mut rejoin: Vec<FlowId> = added.to_vec();
        for &m in &self.inner.affected {
            let f = self.from_star[m as usize];
            if f != NONE && self.fab_cap[f as usize].to_bits() != self.inner.cap[m as usize].to_bits() {
                rejoin.push(f);
            }
        }
        rejoin.sort_unstable();
        rejoin.dedup();
        for f in rejoin {
            self.leave(f, &mut fab_removed);
            let m = self.to_star[f as usize];
            let cap = (m != NONE).then(|| self.inner.cap[m as usize]);
            self.join(net, f, cap, &mut fab_added);
        }
        let mut fab_changed = Vec::new();
        self.cm02.update(&mut self.fabric, &fab_added, &fab_removed, &mut fab_changed);
        for g in fab_changed {
            let f = self.from_fab[g as usize];
            if f != NONE {
                let rate = self.fabric.flow(g).rate;
                if net.flow(f).rate != rate {
                    net.set_rate(f, rate);
                    changed.push(f);
                }
            }
        }
        debug_assert!(added.iter().all(|f| changed.contains(f)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::penalty::{analyze, GIGE_DEFAULTS, IB_SIMGRID_DEFAULTS};
    use super::*;
    use crate::util::rng::SplitMix64;

    fn net_for(hosts: u32, backbone: Option<f64>) -> FlowNet {
        let mut caps = vec![100.0; 3 * hosts as usize];
        caps.extend(backbone);
        FlowNet::new(caps)
    }

    fn add(net: &mut FlowNet, n: u32, s: u32, d: u32, backbone: bool) -> FlowId {
        if backbone {
            net.add_flow(&[s, 3 * n, n + d])
        } else {
            net.add_flow(&[s, n + d])
        }
    }

    /// One random change: a flow between two random hosts joins (always below `bounds.0`
    /// live flows, never from `bounds.1`, else with probability 1/2) or a random one leaves.
    /// With `backbone`, the flows cross the backbone (link 3n).
    fn churn(
        rng: &mut SplitMix64,
        net: &mut FlowNet,
        pm: &mut Penalized,
        live: &mut Vec<(FlowId, (u32, u32))>,
        n: u32,
        bounds: (usize, usize),
        backbone: bool,
    ) {
        let mut changed = Vec::new();
        if live.len() < bounds.0 || (live.len() < bounds.1 && rng.below(2) == 0) {
            let s = rng.below(n as u64) as u32;
            let d = (s + 1 + rng.below(n as u64 - 1) as u32) % n;
            let f = add(net, n, s, d, backbone);
            live.push((f, (s, d)));
            pm.update(net, &[f], &[], &mut changed);
        } else {
            let (f, _) = live.swap_remove(rng.below_usize(live.len()));
            let r = net.remove_flow(f);
            pm.update(net, &[], &[r], &mut changed);
        }
    }

    /// Adding and removing flows one by one gives, at every step, the static penalties
    /// of the active scheme (relative to the 100 B/s NICs).
    #[test]
    fn dynamic_matches_static() {
        for model in [
            PenaltyModel::Gige { name: "gige", params: GIGE_DEFAULTS },
            PenaltyModel::Myrinet(myrinet::MyrinetOptions::default()),
        ] {
            let n = 6;
            let mut rng = SplitMix64::new(7);
            let mut net = net_for(n, None);
            let mut pm = Penalized::new(model.clone(), n as usize, false);
            let mut live: Vec<(FlowId, (u32, u32))> = Vec::new();
            for step in 0..200 {
                churn(&mut rng, &mut net, &mut pm, &mut live, n, (3, 12), false);
                let comms: Vec<(u32, u32)> = live.iter().map(|x| x.1).collect();
                let want = analyze(&comms, Some(&model)).unwrap().penalties;
                for ((f, _), p) in live.iter().zip(want) {
                    let got = 100.0 / net.flow(*f).rate;
                    assert!((got - p).abs() < 1e-9 * p, "step {step}: {got} != {p}");
                }
            }
        }
    }

    #[test]
    fn ib_simgrid_caps_and_maxmin() {
        // 0 sends to 1, 2, 3; 4 also sends to 3. Penalties: 0's comms 3·βs (3 receives
        // only 2, no γs); 4→3: in-penalty 1·βe·2 = 1.93. Max-min on up(0) gives 100/3 each,
        // under the caps 100/2.775; 4→3 takes the rest of down(3) but is capped at 100/1.93.
        let n = 5;
        let mut net = net_for(n, None);
        let mut pm = Penalized::new(PenaltyModel::IbSimgrid(IB_SIMGRID_DEFAULTS), n as usize, false);
        let fs: Vec<FlowId> = [(0, 1), (0, 2), (0, 3), (4, 3)].iter().map(|&(s, d)| add(&mut net, n, s, d, false)).collect();
        let mut changed = Vec::new();
        pm.update(&mut net, &fs, &[], &mut changed);
        let r: Vec<f64> = fs.iter().map(|&f| net.flow(f).rate).collect();
        for x in &r[..3] {
            assert!((x - 100.0 / 3.0).abs() < 1e-9);
        }
        assert!((r[3] - 100.0 / 1.93).abs() < 1e-9);
        assert_eq!(pm.flow_penalty(fs[3]), 1.93);
        // 0→3 is outgoing (0 sends 3) and incoming (3 receives 2); 4→3 incoming only.
        use super::super::penalty::{INCOMING, IN_OUT, OUTGOING};
        assert_eq!(pm.flow_conflicts(fs[2]), Some(OUTGOING | INCOMING));
        assert_eq!(pm.flow_conflicts(fs[3]), Some(INCOMING));
        // A flow 3→0 makes 0→3 and 4→3 in-out (3 sends, 0 receives) without touching their penalties.
        let g = add(&mut net, n, 3, 0, false);
        changed.clear();
        pm.update(&mut net, &[g], &[], &mut changed);
        assert_eq!(pm.flow_conflicts(fs[2]), Some(OUTGOING | INCOMING | IN_OUT));
        assert_eq!(pm.flow_conflicts(fs[3]).map(|c| c & IN_OUT), Some(IN_OUT));
    }

    /// The incremental capped max-min of `ib-simgrid` gives, after every change, the rates
    /// of a progressive filling under the caps of the static penalties, without a backbone
    /// and with one (250 B/s for up to 16 flows of at most 100: it binds in some steps).
    #[test]
    fn capped_maxmin_matches_filling() {
        capped_maxmin_matches_filling_on(None);
        capped_maxmin_matches_filling_on(Some(250.0));
    }

    fn capped_maxmin_matches_filling_on(backbone: Option<f64>) {
        let n = 7;
        let mut rng = SplitMix64::new(3);
        let mut net = net_for(n, backbone);
        let model = PenaltyModel::IbSimgrid(IB_SIMGRID_DEFAULTS);
        let mut pm = Penalized::new(model.clone(), n as usize, backbone.is_some());
        let mut live: Vec<(FlowId, (u32, u32))> = Vec::new();
        let (mut binding, mut backbone_full) = (0, 0);
        for step in 0..400 {
            churn(&mut rng, &mut net, &mut pm, &mut live, n, (4, 16), backbone.is_some());
            // Oracle: static penalties, caps, progressive filling over every link.
            let comms: Vec<(u32, u32)> = live.iter().map(|x| x.1).collect();
            let pens = analyze(&comms, Some(&model)).unwrap().penalties;
            let mut oracle = Penalized::new(model.clone(), n as usize, false);
            oracle.new_epoch(&net);
            let flows: Vec<FlowId> = live.iter().map(|x| x.0).collect();
            for (&f, p) in flows.iter().zip(&pens) {
                oracle.cap[f as usize] = 100.0 / p;
            }
            oracle.fill_with_caps(&net, &flows);
            for (k, &f) in flows.iter().enumerate() {
                let (got, want) = (net.flow(f).rate, oracle.rates[k]);
                assert!((got - want).abs() <= 1e-9 * want, "step {step}: flow {f} {got} != {want}");
            }
            binding += flows.iter().any(|&f| (net.flow(f).rate - oracle.cap[f as usize]).abs() < 1e-9) as u32;
            if let Some(cap) = backbone {
                let used: f64 = flows.iter().map(|&f| net.flow(f).rate).sum();
                backbone_full += (used > cap * (1.0 - 1e-9)) as u32;
            }
        }
        // The caps did bind (else this would only test max-min), and so did the backbone.
        assert!(binding > 40, "caps bound in {binding} steps");
        if backbone.is_some() {
            assert!(backbone_full > 40, "the backbone was full in {backbone_full} steps");
        }
    }

    #[test]
    fn backbone_is_shared_again_when_a_lone_flow_leaves() {
        // a 0→1 and b 2→3, penalty 1 each (cap 100), on a 120 B/s backbone: 60 each. When b
        // leaves no penalty moves, but a gets the backbone back up to its cap, 100.
        for model in [
            PenaltyModel::Gige { name: "gige", params: GIGE_DEFAULTS },
            PenaltyModel::IbSimgrid(IB_SIMGRID_DEFAULTS),
        ] {
            let n = 4;
            let mut net = net_for(n, Some(120.0));
            let mut pm = Penalized::new(model, n as usize, true);
            let a = add(&mut net, n, 0, 1, true);
            let b = add(&mut net, n, 2, 3, true);
            let mut changed = Vec::new();
            pm.update(&mut net, &[a, b], &[], &mut changed);
            assert_eq!((net.flow(a).rate, net.flow(b).rate), (60.0, 60.0));
            let r = net.remove_flow(b);
            changed.clear();
            pm.update(&mut net, &[], &[r], &mut changed);
            assert_eq!((net.flow(a).rate, changed.as_slice()), (100.0, &[a][..]));
        }
    }

    #[test]
    fn backbone_shares_capped_rates() {
        // Two independent flows, penalty 1 each (cap 100), over a 120 B/s backbone: 60 each.
        let n = 4;
        let mut net = net_for(n, Some(120.0));
        let mut pm = Penalized::new(PenaltyModel::Gige { name: "gige", params: GIGE_DEFAULTS }, n as usize, true);
        let a = add(&mut net, n, 0, 1, true);
        let b = add(&mut net, n, 2, 3, true);
        let c = net.add_flow(&[2 * n + 1]); // intra-node on host 1
        let mut changed = Vec::new();
        pm.update(&mut net, &[a, b, c], &[], &mut changed);
        assert_eq!((net.flow(a).rate, net.flow(b).rate, net.flow(c).rate), (60.0, 60.0, 100.0));
        assert_eq!(changed.len(), 3);
        // A second flow from 0: both of 0's get 100/1.5, which fits with b under 120? No:
        // caps 66.7, 66.7, 100 on 120 → max-min gives 40 each.
        let d = add(&mut net, n, 0, 2, true);
        changed.clear();
        pm.update(&mut net, &[d], &[], &mut changed);
        for f in [a, b, d] {
            assert!((net.flow(f).rate - 40.0).abs() < 1e-9);
        }
    }
}
