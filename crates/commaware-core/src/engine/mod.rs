//! The activity engine: transfers, computations and timers on an event clock.
//!
//! Transfers first spend their latency, then join the [`FlowNet`] where the sharing
//! model rates them; computations run at the host speed times the factor given by
//! the [`ComputeRate`] hook (the seam for the interference of communication on
//! computation, paper 000 §3.1). The clock jumps to the next completion; events
//! live in a binary heap (O(log n)) and stale ones are skipped by version.

/// Interference of communication on computation as the engine's compute-rate hook.
pub mod interference;
/// Per-link statistics, kept when asked.
pub mod link_stats;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::util::mintree::MinTree;
use crate::network::platform::Platform;
use crate::error::{Error, ErrorKind, Result};
use crate::network::sharing::cm02::CROSSTRAFFIC_WEIGHT;
use crate::network::sharing::{FlowAttrs, FlowId, FlowNet, LinkId, RemovedFlow, SharingModel};
use crate::network::topology::routing::{RouteState, Routing};
use crate::network::topology::{Endpoint, Topology, TopologyLink};
use crate::util::rng::SplitMix64;
use link_stats::{LinkReport, LinkStats};

/// Events closer than this (relative) to the current one are handled together, so
/// flows that finish "at the same time" up to rounding cause one re-solve.
const SAME_TIME: f64 = 1e-12;

/// Caller's handle for an activity; returned in [`Completion`].
pub type Tag = u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActKind {
    Transfer,
    Compute,
    Timer,
}

#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub tag: Tag,
    pub kind: ActKind,
    /// For a transfer under a penalty model: the conflict classes it has been in.
    pub conflicts: Option<u8>,
}

/// Traffic seen by one host, given to the compute-rate hook: (peer host, rate in
/// bytes/s) of each transfer crossing its NIC, leaving and entering.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostTraffic<'a> {
    pub out: &'a [(u32, f64)],
    pub inn: &'a [(u32, f64)],
}

impl HostTraffic<'_> {
    /// Total rate of the transfers leaving the host (bytes/s).
    pub fn out_rate(&self) -> f64 {
        self.out.iter().map(|p| p.1).sum()
    }
    /// Total rate of the transfers entering the host (bytes/s).
    pub fn in_rate(&self) -> f64 {
        self.inn.iter().map(|p| p.1).sum()
    }
}

/// Gives the fraction of its speed a host computes at, from its network traffic.
pub trait ComputeRate {
    /// `true` when the factor is always 1 (no interference): the engine then skips it.
    fn is_identity(&self) -> bool;
    fn factor(&self, host: usize, traffic: HostTraffic) -> f64;
}

/// No interference: computation always runs at full speed.
pub struct FullSpeed;
impl ComputeRate for FullSpeed {
    fn is_identity(&self) -> bool {
        true
    }
    fn factor(&self, _host: usize, _traffic: HostTraffic) -> f64 {
        1.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Time(f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Time {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum What {
    LatencyDone { transfer: u32 },
    ComputeDone { compute: u32, version: u32 },
    Timer { tag: Tag },
}

#[derive(Debug, Clone)]
struct Transfer {
    tag: Tag,
    /// The star's route; on a topology `nlinks` is 0 and the route is in `Engine::routes`.
    links: [LinkId; 3],
    nlinks: u8,
    /// On a topology: the route's latency (before any latency factor) and how many of
    /// the route's links are forward (the others are its reverse route, crosstraffic).
    attrs: FlowAttrs,
    /// Bytes left at `last`.
    remaining: f64,
    last: f64,
    /// Rate since `last` (0 while in latency).
    rate: f64,
    flow: Option<FlowId>,
    src: u32,
    dst: u32,
}

#[derive(Debug, Clone)]
struct Compute {
    tag: Tag,
    host: u32,
    remaining: f64,
    last: f64,
    rate: f64,
    version: u32,
}

pub struct Engine {
    now: f64,
    seq: u64,
    queue: BinaryHeap<Reverse<(Time, u64, What)>>,
    /// Completion time of each transfer in the network, by transfer id.
    flow_ends: MinTree,
    net: FlowNet,
    model: Box<dyn SharingModel>,
    compute_rate: Box<dyn ComputeRate>,
    /// `compute_rate.is_identity()`, asked once (it looks at every host).
    full_speed: bool,
    transfers: Vec<Transfer>,
    free_transfers: Vec<u32>,
    flow_owner: Vec<u32>,
    computes: Vec<Compute>,
    free_computes: Vec<u32>,
    /// Live computes per host (only kept when the compute-rate hook is not the identity).
    host_computes: Vec<Vec<u32>>,
    speeds: Vec<f64>,
    n_hosts: usize,
    backbone: bool,
    /// The platform's fabric; `None` for the star (fixed link numbering, see `new`).
    topology: Option<Arc<dyn Topology>>,
    /// Links of the topology (its links are 0..topo_links, then a memory link per host).
    topo_links: u32,
    /// The route of each transfer on a topology, by transfer id (kept for reuse).
    routes: Vec<Vec<LinkId>>,
    /// Load reverse routes too (the sharing model asks for it).
    crosstraffic: bool,
    scratch: Vec<LinkId>,
    latency: f64,
    memory_latency: f64,
    added: Vec<FlowId>,
    removed: Vec<RemovedFlow>,
    changed: Vec<FlowId>,
    live_events: usize,
    /// The sharing model keeps flow progress (`SharingModel::track_progress`): the
    /// engine then asks it for completions and does not re-key `changed` flows.
    tracks: bool,
    /// Per-link statistics, when asked for ([`Engine::with_link_stats`]).
    stats: Option<Box<LinkStats>>,
    /// How flows pick their routes on the topology (`network.routing`, issue 44).
    routing: Routing,
    routing_seed: u64,
    /// Valiant's draws, in the order flows start.
    routing_rng: SplitMix64,
    /// Transfers started on the topology so far (ECMP hashes a flow's number).
    messages: u64,
    /// Transfers in flight crossing each link (forward routes), for the adaptive routings.
    link_flows: Vec<u32>,
    /// The id of the transfer started last.
    last_started: u32,
}

/// A flow's view of the engine while its route is picked.
struct FlowRouting<'a> {
    rng: &'a mut SplitMix64,
    link_flows: &'a [u32],
    seed: u64,
    src: u32,
    dst: u32,
    message: u64,
}

impl RouteState for FlowRouting<'_> {
    fn draw(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }
    fn flow_hash(&self, salt: u64) -> u64 {
        let mix = |h: u64, x: u64| SplitMix64::new(h ^ x).next_u64();
        [self.src as u64, self.dst as u64, self.message, salt].into_iter().fold(mix(self.seed, 0), mix)
    }
    fn flows_on(&self, link: TopologyLink) -> u32 {
        self.link_flows.get(link as usize).copied().unwrap_or(0)
    }
}

impl Engine {
    pub fn new(platform: &Platform, model: Box<dyn SharingModel>, compute_rate: Box<dyn ComputeRate>) -> Self {
        Self::with_link_stats(platform, model, compute_rate, false)
    }

    /// [`Engine::new`], keeping per-link statistics when `link_stats` (see
    /// [`Engine::link_report`]). They need each flow's rate, so the sharing model then
    /// rates flows in the net instead of tracking their progress itself.
    pub fn with_link_stats(
        platform: &Platform,
        model: Box<dyn SharingModel>,
        compute_rate: Box<dyn ComputeRate>,
        link_stats: bool,
    ) -> Self {
        let n = platform.hosts.len();
        let mut topo_links = 0;
        let caps: Vec<f64> = if let Some(topo) = &platform.topology {
            // Links: the topology's 0..L, then memory(h) = L + h for a host talking to
            // itself when the topology has no loopback.
            topo_links = topo.link_count() as u32;
            let mut caps: Vec<f64> = (0..topo_links).map(|l| topo.link(l).bandwidth).collect();
            caps.extend(std::iter::repeat(platform.memory_bandwidth()).take(n));
            caps
        } else {
            // Links: up(h) = h, down(h) = n + h, memory(h) = 2n + h, backbone = 3n.
            let mut caps: Vec<f64> = platform.hosts.iter().map(|h| h.bandwidth_up).collect();
            caps.extend(platform.hosts.iter().map(|h| h.bandwidth_down));
            caps.extend(std::iter::repeat(platform.memory_bandwidth()).take(n));
            if let Some(b) = platform.network.backbone {
                caps.push(b);
            }
            caps
        };
        let mut model = model;
        // The compute-rate hook reads flow rates from the net, which a tracking model
        // does not keep: track only without it.
        let full_speed = compute_rate.is_identity();
        let tracks = full_speed && !link_stats && model.track_progress().is_some();
        let stats = link_stats.then(|| Box::new(LinkStats::new(&caps)));
        let crosstraffic = model.crosstraffic();
        Engine {
            full_speed,
            now: 0.0,
            seq: 0,
            queue: BinaryHeap::new(),
            flow_ends: MinTree::new(),
            net: FlowNet::new(caps),
            model,
            compute_rate,
            transfers: Vec::new(),
            free_transfers: Vec::new(),
            flow_owner: Vec::new(),
            computes: Vec::new(),
            free_computes: Vec::new(),
            host_computes: vec![Vec::new(); n],
            speeds: platform.hosts.iter().map(|h| h.speed).collect(),
            n_hosts: n,
            backbone: platform.network.backbone.is_some(),
            topology: platform.topology.clone(),
            topo_links,
            routes: Vec::new(),
            crosstraffic,
            scratch: Vec::new(),
            latency: platform.network.latency,
            memory_latency: platform.network.memory_latency,
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            live_events: 0,
            tracks,
            stats,
            routing: Routing::Minimal,
            routing_seed: 0,
            routing_rng: SplitMix64::new(0),
            messages: 0,
            link_flows: Vec::new(),
            last_started: u32::MAX,
        }
        .routed(platform.routing, platform.network.routing_seed)
    }

    /// The engine with flows routed by `routing`, its draws and hashes seeded by `seed`
    /// (the platform checked that the routing applies to its topology).
    fn routed(mut self, routing: Routing, seed: u64) -> Self {
        self.routing = routing;
        self.routing_seed = seed;
        self.routing_rng = SplitMix64::new(seed);
        self.link_flows = match self.topology {
            Some(_) if routing.adaptive() => vec![0; self.topo_links as usize + self.n_hosts],
            _ => Vec::new(),
        };
        self
    }

    /// The forward route of the transfer started last (without the reverse route crosstraffic
    /// adds): what the routing picked for it. Links as the engine numbers them: on the star
    /// up(h) = h, down(h) = n + h, memory(h) = 2n + h, backbone 3n; on a topology its links,
    /// then a memory link per host.
    pub fn last_route(&self) -> &[LinkId] {
        let Some(t) = self.transfers.get(self.last_started as usize) else { return &[] };
        if t.nlinks > 0 {
            return &t.links[..t.nlinks as usize];
        }
        let route = &self.routes[self.last_started as usize];
        match t.attrs.forward as usize {
            0 => route,
            n => &route[..n],
        }
    }

    /// Names of the engine's links: the topology's links then one memory link per host
    /// (`HOST_loopback`); on the star, `HOST_UP`, `HOST_DOWN`, `HOST_loopback` for every
    /// host, then `backbone`.
    fn link_names(&self, host_names: &[String]) -> Vec<String> {
        let memory = host_names.iter().map(|h| format!("{h}_loopback"));
        match &self.topology {
            Some(t) => (0..self.topo_links).map(|l| t.link_name(l)).chain(memory).collect(),
            None => {
                let mut v: Vec<String> = host_names.iter().map(|h| format!("{h}_UP")).collect();
                v.extend(host_names.iter().map(|h| format!("{h}_DOWN")));
                v.extend(memory);
                if self.backbone {
                    v.push("backbone".to_string());
                }
                v
            }
        }
    }

    /// The links as a timeline shows them: (name, bandwidth B/s) of every link, indexed as
    /// [`Engine::drain_link_changes`] numbers them, and keep their changes of load from now
    /// on. `None` unless the engine keeps link statistics.
    pub fn track_link_loads(&mut self, host_names: &[String]) -> Option<Vec<(String, f64)>> {
        let names = self.link_names(host_names);
        let stats = self.stats.as_deref_mut()?;
        stats.track_changes();
        Some(names.into_iter().zip(stats.bandwidths()).collect())
    }

    /// Each link whose load changed since the last call (after [`Engine::track_link_loads`]),
    /// with its load now in B/s: the sum of its flows' rates, all changed at [`Engine::now`].
    /// The flows that joined or left since the last step are rated first (as the next
    /// [`Engine::step`] would do at the same time), so the loads are the settled ones.
    pub fn drain_link_changes(&mut self, f: impl FnMut(u32, f64)) {
        self.resolve();
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.drain_changes(f);
        }
    }

    /// The per-link statistics of the run, for a run of length `makespan`, named after
    /// `host_names`: every link of the fabric, and the hosts' memory links (a host talking
    /// to itself) that carried a flow. `None` unless the engine was built to keep them.
    pub fn link_report(&mut self, makespan: f64, host_names: &[String]) -> Option<LinkReport> {
        let stats = self.stats.take()?;
        let names = self.link_names(host_names);
        let n = self.n_hosts;
        let memory = match self.topology {
            Some(_) => self.topo_links as usize..self.topo_links as usize + n,
            None => 2 * n..3 * n,
        };
        let mut report = stats.report(makespan);
        let mut k = 0;
        report.links.retain_mut(|r| {
            r.name = names[k].clone();
            k += 1;
            !memory.contains(&(k - 1)) || r.peak_flows > 0
        });
        Some(report)
    }

    /// Tell the statistics that flow `f` joined (`flows` = 1) or left (-1) its links, or
    /// that its rate changed by `delta`. Reverse-route links (crosstraffic) carry
    /// [`CROSSTRAFFIC_WEIGHT`] of the rate.
    fn note_links(&mut self, f: FlowId, flows: i32, delta: f64) {
        let Some(stats) = self.stats.as_deref_mut() else { return };
        let now = self.now;
        let links = self.net.flow(f).links();
        let forward = match self.net.attrs(f).forward as usize {
            0 => links.len(),
            n => n,
        };
        for (k, &l) in links.iter().enumerate() {
            if flows != 0 {
                stats.count(l, now, flows);
            }
            if delta != 0.0 {
                stats.rate(l, now, if k < forward { delta } else { delta * CROSSTRAFFIC_WEIGHT });
            }
        }
    }

    pub fn now(&self) -> f64 {
        self.now
    }

    pub fn model_name(&self) -> &'static str {
        self.model.name()
    }

    /// The sharing model's [`SharingModel::penalty_counts`].
    pub fn penalty_counts(&self) -> Option<crate::network::sharing::PenaltyCounts> {
        self.model.penalty_counts()
    }

    fn push(&mut self, time: f64, what: What) {
        self.seq += 1;
        self.queue.push(Reverse((Time(time), self.seq, what)));
    }

    /// Start moving `bytes` from `src` to `dst` (host indices). It completes after the
    /// latency plus the transfer at its shared rate. On a topology, two hosts without a
    /// route between them are an error (nothing is started).
    pub fn start_transfer(&mut self, src: usize, dst: usize, bytes: f64, tag: Tag) -> Result<()> {
        self.start_transfer_scaled(src, dst, bytes, 1.0, tag)
    }

    /// [`Engine::start_transfer`] with the route's latency multiplied by `latency_factor`
    /// (SMPI's `smpi/lat-factor`).
    pub fn start_transfer_scaled(&mut self, src: usize, dst: usize, bytes: f64, latency_factor: f64, tag: Tag) -> Result<()> {
        let n = self.n_hosts as u32;
        let (s, d) = (src as u32, dst as u32);
        let no_attrs = FlowAttrs { latency: 0.0, forward: 0 };
        let mut route = std::mem::take(&mut self.scratch);
        route.clear();
        let (links, nlinks, latency, attrs) = if self.topology.is_some() {
            let (latency, attrs) = self.route(s, d, &mut route)?;
            ([0; 3], 0u8, latency, attrs)
        } else if s == d {
            ([2 * n + s, 0, 0], 1u8, self.memory_latency, no_attrs)
        } else if self.backbone {
            ([s, 3 * n, n + d], 3, self.latency, no_attrs)
        } else {
            ([s, n + d, 0], 2, self.latency, no_attrs)
        };
        let t = Transfer { tag, links, nlinks, attrs, remaining: bytes, last: self.now, rate: 0.0, flow: None, src: s, dst: d };
        let id = match self.free_transfers.pop() {
            Some(id) => {
                self.transfers[id as usize] = t;
                id
            }
            None => {
                self.transfers.push(t);
                (self.transfers.len() - 1) as u32
            }
        };
        if self.topology.is_some() {
            if self.routes.len() <= id as usize {
                self.routes.resize_with(id as usize + 1, Vec::new);
            }
            // Keep the slot's buffer: the route moves into it.
            let slot = &mut self.routes[id as usize];
            slot.clear();
            slot.extend_from_slice(&route);
            if !self.link_flows.is_empty() {
                let forward = if attrs.forward == 0 { route.len() } else { attrs.forward as usize };
                for &l in &route[..forward] {
                    self.link_flows[l as usize] += 1;
                }
            }
        }
        self.last_started = id;
        self.scratch = route;
        self.live_events += 1;
        self.push(self.now + latency * latency_factor, What::LatencyDone { transfer: id });
        Ok(())
    }

    /// The route from host `s` to host `d` on the topology into `out` (with the reverse
    /// route after it under crosstraffic); returns the latency to wait and the flow's
    /// attributes. A host to itself without a loopback link uses its memory link.
    fn route(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) -> Result<(f64, FlowAttrs)> {
        let topo = self.topology.as_ref().expect("a topology");
        let latency = match self.routing {
            Routing::Minimal => topo.route(Endpoint::Host(s), Endpoint::Host(d), out)?,
            routing => {
                let mut state = FlowRouting {
                    rng: &mut self.routing_rng,
                    link_flows: &self.link_flows,
                    seed: self.routing_seed,
                    src: s,
                    dst: d,
                    message: self.messages,
                };
                self.messages += 1;
                topo.route_by(routing, Endpoint::Host(s), Endpoint::Host(d), &mut state, out)?
            }
        };
        if out.is_empty() {
            if s == d {
                out.push(self.topo_links + s);
                // Not a fabric route: no CM02 penalty or bound (attributes left empty).
                return Ok((self.memory_latency, FlowAttrs { latency: 0.0, forward: 0 }));
            }
            return Err(Error::new(
                ErrorKind::Platform,
                "network.topology",
                format!("the route from host {s} to host {d} crosses no link"),
            ));
        }
        let forward = out.len() as u32;
        if self.crosstraffic {
            // The reverse flow takes the minimal route whatever the routing.
            topo.route(Endpoint::Host(d), Endpoint::Host(s), out)?;
        }
        Ok((latency, FlowAttrs { latency, forward }))
    }

    /// Start a computation of `flops` on `host`.
    pub fn start_compute(&mut self, host: usize, flops: f64, tag: Tag) {
        let rate = self.speeds[host] * self.factor(host);
        let c = Compute { tag, host: host as u32, remaining: flops, last: self.now, rate, version: 0 };
        let id = match self.free_computes.pop() {
            Some(id) => {
                // Keep the slot's version counting up: completion events of the slot's
                // earlier computes may still be queued, and must stay stale.
                let version = self.computes[id as usize].version;
                self.computes[id as usize] = Compute { version, ..c };
                id
            }
            None => {
                self.computes.push(c);
                (self.computes.len() - 1) as u32
            }
        };
        if !self.full_speed {
            self.host_computes[host].push(id);
        }
        self.live_events += 1;
        self.schedule_compute(id);
    }

    /// Do computations run at their hosts' speeds whatever the network does (no compute-rate
    /// hook)?
    pub fn full_speed(&self) -> bool {
        self.full_speed
    }

    /// Complete after `delay` seconds whatever else happens.
    pub fn start_timer(&mut self, delay: f64, tag: Tag) {
        self.live_events += 1;
        self.push(self.now + delay, What::Timer { tag });
    }

    fn schedule_compute(&mut self, id: u32) {
        let c = &mut self.computes[id as usize];
        c.version += 1;
        if c.rate > 0.0 || c.remaining == 0.0 {
            let t = self.now + if c.remaining == 0.0 { 0.0 } else { c.remaining / c.rate };
            let v = c.version;
            self.push(t, What::ComputeDone { compute: id, version: v });
        }
    }

    fn factor(&self, host: usize) -> f64 {
        if self.full_speed {
            return 1.0;
        }
        let n = self.n_hosts as u32;
        // (peer, rate) of each rated transfer on the host's up-link (out) and down-link (in).
        let peers = |l: usize, peer_of: &dyn Fn(&[LinkId]) -> u32| -> Vec<(u32, f64)> {
            self.net.links[l]
                .flows
                .iter()
                .map(|&f| self.net.flow(f))
                .filter(|fl| fl.rate.is_finite())
                .map(|fl| (peer_of(fl.links()), fl.rate))
                .collect()
        };
        let out = peers(host, &|links| links[links.len() - 1] - n);
        let inn = peers(n as usize + host, &|links| links[0]);
        self.compute_rate.factor(host, HostTraffic { out: &out, inn: &inn }).max(0.0)
    }

    /// Let the sharing model re-rate after flows joined or left, and move the
    /// completion events of every flow whose rate changed.
    fn resolve(&mut self) {
        if self.added.is_empty() && self.removed.is_empty() {
            return;
        }
        self.changed.clear();
        if self.tracks {
            let now = self.now;
            self.model.track_progress().expect("tracking model").set_time(now);
        }
        self.model.update(&mut self.net, &self.added, &self.removed, &mut self.changed);
        let mut hosts: Vec<u32> = Vec::new();
        if !self.full_speed {
            // Hosts a flow left see their traffic change too.
            let n = self.n_hosts as u32;
            for r in &self.removed {
                hosts.extend(r.links().iter().filter(|&&l| l < 3 * n).map(|&l| l % n));
            }
        }
        for k in 0..self.changed.len() {
            let f = self.changed[k];
            let tid = self.flow_owner[f as usize];
            let rate = self.net.flow(f).rate;
            let now = self.now;
            if self.stats.is_some() {
                let old = self.transfers[tid as usize].rate;
                if rate.is_finite() && rate != old {
                    self.note_links(f, 0, rate - old);
                }
            }
            let t = &mut self.transfers[tid as usize];
            // Settle the progress made at the old rate, then switch.
            t.remaining = (t.remaining - t.rate * (now - t.last)).max(0.0);
            t.last = now;
            t.rate = rate;
            let when = if rate > 0.0 { now + t.remaining / rate } else { f64::INFINITY };
            if !self.full_speed {
                hosts.push(t.src);
                hosts.push(t.dst);
            }
            self.flow_ends.set_lazy(tid as usize, when);
        }
        self.flow_ends.flush();
        if let Some(s) = self.stats.as_deref_mut() {
            s.commit();
        }
        self.added.clear();
        self.removed.clear();
        if !hosts.is_empty() {
            hosts.sort_unstable();
            hosts.dedup();
            for h in hosts {
                self.rerate_computes(h as usize);
            }
        }
        self.compact_queue();
    }

    fn rerate_computes(&mut self, host: usize) {
        let f = self.factor(host);
        for k in 0..self.host_computes[host].len() {
            let id = self.host_computes[host][k];
            let now = self.now;
            let c = &mut self.computes[id as usize];
            c.remaining = (c.remaining - c.rate * (now - c.last)).max(0.0);
            c.last = now;
            c.rate = self.speeds[host] * f;
            self.schedule_compute(id);
        }
    }

    /// Drop stale heap entries when they outnumber live ones.
    fn compact_queue(&mut self) {
        if self.queue.len() < 1024 || self.queue.len() < 4 * self.live_events {
            return;
        }
        let items = std::mem::take(&mut self.queue).into_vec();
        let kept: Vec<_> = items.into_iter().filter(|Reverse((_, _, w))| self.is_current(*w)).collect();
        self.queue = BinaryHeap::from(kept);
    }

    fn is_current(&self, w: What) -> bool {
        match w {
            What::ComputeDone { compute, version } => self.computes[compute as usize].version == version,
            _ => true,
        }
    }

    /// Advance the clock to the next event(s) and return what completed then (maybe
    /// nothing, when only a latency ended). Returns `None` when nothing is pending.
    pub fn step(&mut self, out: &mut Vec<Completion>) -> Option<f64> {
        self.resolve();
        out.clear();
        let mut first: Option<f64> = None;
        loop {
            // Earliest of the next flow completion and the next other event.
            let (flow_t, tid) = if self.tracks {
                let (t, f) = self.model.track_progress().expect("tracking model").next_completion();
                (t, if t < f64::INFINITY { self.flow_owner[f as usize] as usize } else { 0 })
            } else {
                self.flow_ends.min()
            };
            let event_t = self.queue.peek().map_or(f64::INFINITY, |Reverse((Time(t), _, _))| *t);
            let t = flow_t.min(event_t);
            if t == f64::INFINITY {
                break;
            }
            if let Some(t0) = first {
                if t > t0 + SAME_TIME * t0.abs().max(1e-300) {
                    break;
                }
            }
            if flow_t <= event_t {
                first.get_or_insert(t);
                self.now = first.unwrap();
                self.flow_done(tid as u32, out);
                continue;
            }
            let Reverse((_, _, w)) = self.queue.pop().expect("peeked");
            if !self.is_current(w) {
                continue;
            }
            first.get_or_insert(t);
            self.now = first.unwrap();
            self.handle(w, out);
        }
        first
    }

    fn flow_done(&mut self, transfer: u32, out: &mut Vec<Completion>) {
        let f = self.transfers[transfer as usize].flow.take().expect("a flow completion has a flow");
        if self.tracks {
            self.model.track_progress().expect("tracking model").complete(f);
        } else {
            self.flow_ends.set(transfer as usize, f64::INFINITY);
        }
        // A flow gets a completion time only once rated (in `resolve`, which empties
        // `added`), so a completing flow is never among the unrated new ones.
        debug_assert!(!self.added.contains(&f));
        // Intra-node messages are in no conflict graph.
        let t = &self.transfers[transfer as usize];
        let conflicts = if t.src != t.dst { self.model.flow_conflicts(f) } else { None };
        if self.stats.is_some() {
            let rate = t.rate;
            self.note_links(f, -1, -rate);
        }
        let r = self.net.remove_flow(f);
        self.removed.push(r);
        self.transfers[transfer as usize].remaining = 0.0;
        self.finish_transfer_with(transfer, conflicts, out);
    }

    fn handle(&mut self, w: What, out: &mut Vec<Completion>) {
        match w {
            What::LatencyDone { transfer } => {
                let t = &mut self.transfers[transfer as usize];
                t.last = self.now;
                if t.remaining <= 0.0 {
                    self.finish_transfer(transfer, out);
                } else {
                    let (links, nlinks, attrs) = (t.links, t.nlinks as usize, t.attrs);
                    let f = if nlinks > 0 {
                        self.net.add_flow(&links[..nlinks])
                    } else {
                        let f = self.net.add_flow(&self.routes[transfer as usize]);
                        if attrs.forward > 0 {
                            self.net.set_attrs(f, attrs);
                        }
                        f
                    };
                    if self.flow_owner.len() <= f as usize {
                        self.flow_owner.resize(f as usize + 1, 0);
                    }
                    self.flow_owner[f as usize] = transfer;
                    self.transfers[transfer as usize].flow = Some(f);
                    self.added.push(f);
                    self.note_links(f, 1, 0.0);
                    if self.tracks {
                        let bytes = self.transfers[transfer as usize].remaining;
                        self.model.track_progress().expect("tracking model").start(f, bytes);
                    }
                }
            }
            What::ComputeDone { compute, .. } => {
                let c = &mut self.computes[compute as usize];
                c.version += 1; // invalidate any other pending event
                let (tag, host) = (c.tag, c.host as usize);
                if let Some(p) = self.host_computes[host].iter().position(|&x| x == compute) {
                    self.host_computes[host].swap_remove(p);
                }
                self.free_computes.push(compute);
                self.live_events -= 1;
                out.push(Completion { tag, kind: ActKind::Compute, conflicts: None });
            }
            What::Timer { tag } => {
                self.live_events -= 1;
                out.push(Completion { tag, kind: ActKind::Timer, conflicts: None });
            }
        }
    }

    fn finish_transfer(&mut self, id: u32, out: &mut Vec<Completion>) {
        self.finish_transfer_with(id, None, out);
    }

    fn finish_transfer_with(&mut self, id: u32, conflicts: Option<u8>, out: &mut Vec<Completion>) {
        let tag = self.transfers[id as usize].tag;
        if !self.link_flows.is_empty() {
            let forward = match self.transfers[id as usize].attrs.forward as usize {
                0 => self.routes[id as usize].len(),
                n => n,
            };
            for &l in &self.routes[id as usize][..forward] {
                self.link_flows[l as usize] -= 1;
            }
        }
        self.free_transfers.push(id);
        self.live_events -= 1;
        out.push(Completion { tag, kind: ActKind::Transfer, conflicts });
    }
}

#[cfg(test)]
mod topology_tests {
    //! The engine on a hand-built topology, under SimGrid's CM02 (`maxmin` with a
    //! topology). Expected times are worked out by hand in each test's comments.

    use std::collections::HashMap;

    use super::*;
    use crate::network::sharing::make_model;
    use crate::network::topology::{LinkInfo, LinkSharing, TopologyLink};

    /// A `Full` zone: links and explicitly listed routes (host pairs).
    #[derive(Debug)]
    struct Fabric {
        hosts: usize,
        links: Vec<LinkInfo>,
        routes: HashMap<(u32, u32), Vec<TopologyLink>>,
    }

    impl Topology for Fabric {
        fn kind(&self) -> &'static str {
            "full"
        }
        fn host_count(&self) -> usize {
            self.hosts
        }
        fn link_count(&self) -> usize {
            self.links.len()
        }
        fn link(&self, l: TopologyLink) -> LinkInfo {
            self.links[l as usize]
        }
        fn link_name(&self, l: TopologyLink) -> String {
            format!("l{l}")
        }
        fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64> {
            let (Endpoint::Host(s), Endpoint::Host(d)) = (src, dst) else { unreachable!("hosts only") };
            match self.routes.get(&(s, d)) {
                Some(r) => {
                    out.extend_from_slice(r);
                    Ok(r.iter().map(|&l| self.links[l as usize].latency).sum())
                }
                None if s == d => Ok(0.0),
                None => Err(Error::platform("routes", format!("no route from {s} to {d}"))),
            }
        }
    }

    fn link(bandwidth: f64, latency: f64, sharing: LinkSharing) -> LinkInfo {
        LinkInfo { bandwidth, latency, sharing }
    }

    const L: u32 = 0; // 125 MB/s SHARED, no latency
    const F: u32 = 1; // 100 MB/s FATPIPE, no latency
    const A: u32 = 2; // 1 GB/s, 100 µs
    const B: u32 = 3; // 1 GB/s, 200 µs
    const SLOW: u32 = 4; // 125 MB/s, 50 ms

    /// Four hosts; 0→1 over [A, L], 2→3 over [B, L], 1→0 over [A, F], 3→2 over [B, F],
    /// 0→2 over [SLOW], 2→0 over [SLOW] (the same SHARED link both ways).
    fn fabric() -> Fabric {
        let links = vec![
            link(125e6, 0.0, LinkSharing::Shared),
            link(100e6, 0.0, LinkSharing::Fatpipe),
            link(1e9, 100e-6, LinkSharing::Shared),
            link(1e9, 200e-6, LinkSharing::Shared),
            link(125e6, 50e-3, LinkSharing::Shared),
        ];
        let routes = HashMap::from([
            ((0, 1), vec![A, L]),
            ((2, 3), vec![B, L]),
            ((1, 0), vec![A, F]),
            ((3, 2), vec![B, F]),
            ((0, 2), vec![SLOW]),
            ((2, 0), vec![SLOW]),
        ]);
        Fabric { hosts: 4, links, routes }
    }

    fn platform() -> Platform {
        let text = r#"{"cluster": {"count": 4, "speed": 1e9}, "network": {"bandwidth": 1e9, "latency": 0,
                        "memory_bandwidth": 2e9, "memory_latency": 1e-6}}"#;
        let mut p = crate::mpi::platform_file::load_json(text).unwrap();
        p.topology = Some(Arc::new(fabric()));
        p
    }

    /// Finish time of each (src, dst, bytes) flow, all started at t = 0.
    fn run(params: &[(&str, f64)], flows: &[(usize, usize, f64)]) -> Vec<f64> {
        let p = platform();
        let params: Vec<(String, f64)> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let model = make_model("maxmin", &p, &params).unwrap();
        let mut e = Engine::new(&p, model, Box::new(FullSpeed));
        for (k, &(s, d, bytes)) in flows.iter().enumerate() {
            e.start_transfer(s, d, bytes, k as Tag).unwrap();
        }
        let mut end = vec![f64::NAN; flows.len()];
        let mut done = Vec::new();
        while let Some(t) = e.step(&mut done) {
            for c in &done {
                end[c.tag as usize] = t;
            }
        }
        end
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs()
    }

    #[test]
    fn latency_weighted_shares_worked_case() {
        // 0→1 (route latency 100 µs) and 2→3 (200 µs), 1e8 bytes each, share L (125 MB/s).
        // 0→1 joins at 1e-4 and runs alone until 2e-4: 12,500 bytes. Then weights
        // 1/1e-4 : 1/2e-4 = 2 : 1, so 83.33 and 41.67 MB/s; 0→1 ends at
        // 2e-4 + (1e8 − 12,500) / (2/3 × 125e6) = 2e-4 + 1.19985 = 1.20005 s.
        // 2→3 then has 1e8 − 1.19985 × 125e6 / 3 = 50,006,250 bytes left, alone on L:
        // 1.20005 + 50,006,250 / 125e6 = 1.20005 + 0.40005 = 1.6001 s.
        let end = run(&[], &[(0, 1, 1e8), (2, 3, 1e8)]);
        assert!(close(end[0], 1.20005), "{end:?}");
        assert!(close(end[1], 1.6001), "{end:?}");
    }

    #[test]
    fn rates_inverse_to_route_latency() {
        // The issue's worked case on the model alone: 125 MB/s shared by routes of
        // 100 µs and 200 µs: 125e6 × 2/3 = 83.33e6 and 125e6 / 3 = 41.67e6 bytes/s.
        let mut net = FlowNet::new([125e6]);
        let mut m = crate::network::sharing::Cm02::with_fatpipes(vec![false], Default::default());
        let a = net.add_flow(&[0]);
        net.set_attrs(a, FlowAttrs { latency: 100e-6, forward: 1 });
        let b = net.add_flow(&[0]);
        net.set_attrs(b, FlowAttrs { latency: 200e-6, forward: 1 });
        let mut changed = Vec::new();
        m.update(&mut net, &[a, b], &[], &mut changed);
        assert!(close(net.flow(a).rate, 125e6 * 2.0 / 3.0), "{}", net.flow(a).rate);
        assert!(close(net.flow(b).rate, 125e6 / 3.0), "{}", net.flow(b).rate);
        // b leaves: a gets the whole link (and is reported as changed).
        let r = net.remove_flow(b);
        changed.clear();
        m.update(&mut net, &[], &[r], &mut changed);
        assert_eq!(net.flow(a).rate, 125e6);
        assert_eq!(changed, vec![a]);
    }

    #[test]
    fn weighting_off_gives_equal_shares() {
        // Same flows, cm02_weighting = 0: 0→1 alone for 1e-4 s (12,500 bytes), then both
        // at 62.5 MB/s: 0→1 ends at 2e-4 + (1e8 − 12,500) / 62.5e6 = 2e-4 + 1.5998 = 1.6 s;
        // 2→3 has 1e8 − 1.5998 × 62.5e6 = 12,500 bytes left: 1.6 + 12,500 / 125e6 = 1.6001 s.
        let end = run(&[("cm02_weighting", 0.0)], &[(0, 1, 1e8), (2, 3, 1e8)]);
        assert!(close(end[0], 1.6), "{end:?}");
        assert!(close(end[1], 1.6001), "{end:?}");
    }

    #[test]
    fn fatpipe_caps_each_flow_at_simgrids_weighted_level() {
        // 1→0 over [A, F] (100 µs) and 3→2 over [B, F] (200 µs); F is a 100 MB/s FATPIPE.
        // 1→0 runs at 100 MB/s from 1e-4: ends at 1e-4 + 1 = 1.0001 s. F's level is set by
        // the lowest penalty (1e-4): 3→2 gets 100e6 × 1e-4 / 2e-4 = 50 MB/s from 2e-4 to
        // 1.0001 (49,995,000 bytes), then 100 MB/s: 1.0001 + 50,005,000 / 1e8 = 1.50015 s.
        let end = run(&[], &[(1, 0, 1e8), (3, 2, 1e8)]);
        assert!(close(end[0], 1.0001), "{end:?}");
        assert!(close(end[1], 1.50015), "{end:?}");
        // Alone, a flow crosses F at F's full bandwidth, not less.
        let end = run(&[], &[(3, 2, 1e8)]);
        assert!(close(end[0], 2e-4 + 1.0), "{end:?}");
    }

    #[test]
    fn tcp_gamma_bounds_long_routes() {
        // 0→2 over SLOW (125 MB/s, 50 ms): gamma / (2 × 0.05) = 4194304 / 0.1 =
        // 41,943,040 bytes/s < 125e6, so 1e8 bytes end at 0.05 + 1e8 / 41,943,040
        // = 0.05 + 2.384185791015625 s.
        let end = run(&[], &[(0, 2, 1e8)]);
        assert!(close(end[0], 0.05 + 2.384185791015625), "{end:?}");
        // tcp_gamma = 0 disables the bound: 0.05 + 1e8 / 125e6 = 0.85 s.
        let end = run(&[("tcp_gamma", 0.0)], &[(0, 2, 1e8)]);
        assert!(close(end[0], 0.85), "{end:?}");
        // A larger window: 2^27 / 0.1 = 1.342e9 bytes/s, above the link: 0.85 s again.
        let end = run(&[("tcp_gamma", 134217728.0)], &[(0, 2, 1e8)]);
        assert!(close(end[0], 0.85), "{end:?}");
    }

    #[test]
    fn crosstraffic_loads_the_reverse_route() {
        // 0→2 and 2→0, both over SLOW (SHARED) both ways, gamma off. Without crosstraffic
        // each gets 62.5 MB/s: 0.05 + 1e8 / 62.5e6 = 1.65 s. With it each flow loads SLOW
        // with 1 + 0.05 of its rate: 2 × 1.05 × r = 125e6, r = 59,523,809.52 bytes/s:
        // 0.05 + 1e8 / r = 0.05 + 1.68 = 1.73 s.
        let flows = [(0, 2, 1e8), (2, 0, 1e8)];
        let end = run(&[("tcp_gamma", 0.0)], &flows);
        assert!(end.iter().all(|&t| close(t, 1.65)), "{end:?}");
        let end = run(&[("tcp_gamma", 0.0), ("crosstraffic", 1.0)], &flows);
        assert!(end.iter().all(|&t| close(t, 1.73)), "{end:?}");
    }

    #[test]
    fn self_transfer_uses_the_memory_link() {
        // No loopback route: host 1 to itself over its memory link, 2e9 bytes/s after
        // 1 µs: 1e-6 + 1e9 / 2e9 = 0.500001 s.
        let end = run(&[], &[(1, 1, 1e9)]);
        assert!(close(end[0], 0.500001), "{end:?}");
    }

    #[test]
    fn missing_route_is_an_error() {
        let p = platform();
        let model = make_model("maxmin", &p, &[]).unwrap();
        let mut e = Engine::new(&p, model, Box::new(FullSpeed));
        let err = e.start_transfer(1, 3, 1.0, 0).unwrap_err();
        assert!(err.reason.contains("no route from 1 to 3"), "{err:?}");
    }

    #[test]
    fn models_and_parameters_on_a_topology() {
        let p = platform();
        // This fabric declares no private link per host: the penalty models are refused.
        for m in ["gige", "myrinet", "infiniband", "ib-simgrid"] {
            let err = make_model(m, &p, &[]).err().expect("refused");
            assert!(err.reason.contains("private link (its NIC)") && err.reason.contains("host `"), "{m}: {err:?}");
        }
        let err = make_model("contention_free", &p, &[]).err().expect("refused");
        assert!(err.reason.contains("not available on platforms with a topology"), "{err:?}");
        let bad = |k: &str, v: f64| make_model("maxmin", &p, &[(k.into(), v)]).err().expect("refused");
        assert!(bad("cm02_weighting", 0.5).reason.contains("0 or 1"));
        assert!(bad("tcp_gamma", -1.0).reason.contains(">= 0"));
        assert_eq!(bad("beta", 1.0).field, "param.beta");
        // The star takes none of them.
        let star = crate::mpi::platform_file::load_json(r#"{"cluster": {"count": 2, "speed": 1e9}, "network": {"bandwidth": 1e9}}"#).unwrap();
        let err = make_model("maxmin", &star, &[("tcp_gamma".into(), 0.0)]).err().expect("refused");
        assert!(err.reason.contains("only to a platform with a topology"), "{err:?}");
    }
}

#[cfg(test)]
mod routing_tests {
    //! Routing beyond minimal in the engine (issue 44): the flow counts the adaptive
    //! routings read, and the seed.

    use super::*;
    use crate::network::sharing::make_model;

    fn fat_tree(routing: &str, seed: u64) -> Platform {
        crate::mpi::platform_file::load_json(&format!(
            r#"{{"cluster": {{"count": 8, "speed": 1e9}}, "network": {{"bandwidth": 1e9, "routing": "{routing}", "routing_seed": {seed},
                "topology": {{"kind": "fat_tree", "down": [4, 2], "up": [1, 2]}}}}}}"#
        ))
        .unwrap()
    }

    /// Run `pairs` (each 1e6 bytes, all started at 0) and give each one's route and the end.
    fn run(p: &Platform, pairs: &[(usize, usize)]) -> (Vec<Vec<LinkId>>, f64, Engine) {
        let mut e = Engine::new(p, make_model("maxmin", p, &[]).unwrap(), Box::new(FullSpeed));
        let mut routes = Vec::new();
        for (i, &(s, d)) in pairs.iter().enumerate() {
            e.start_transfer(s, d, 1e6, i as Tag).unwrap();
            routes.push(e.last_route().to_vec());
        }
        let mut out = Vec::new();
        while e.step(&mut out).is_some() {}
        let end = e.now();
        (routes, end, e)
    }

    #[test]
    fn adaptive_spreads_two_flows_over_both_top_switches_and_counts_back_to_zero() {
        // 8 hosts, two leaves of 4 under two top switches. Hosts 0 and 1 send to hosts 4 and 6:
        // d-mod-k (position mod 2) sends both through top switch 0, whose up-link from leaf 0
        // they share (1 GB/s: 1e6 bytes each end at 2 ms); adaptive sends the second through
        // top switch 1, and each ends at 1 ms.
        let (minimal, t_min, _) = run(&fat_tree("minimal", 0), &[(0, 4), (1, 6)]);
        assert_eq!(minimal[0][1], minimal[1][1]);
        assert!((t_min - 2e-3).abs() < 1e-12, "{t_min}");
        let (adaptive, t_ad, e) = run(&fat_tree("adaptive", 0), &[(0, 4), (1, 6)]);
        assert_eq!(adaptive[0], minimal[0]);
        assert_ne!(adaptive[0][1], adaptive[1][1]);
        assert!((t_ad - 1e-3).abs() < 1e-12, "{t_ad}");
        assert_eq!(e.link_flows.len(), e.topo_links as usize + 8);
        assert!(e.link_flows.iter().all(|&f| f == 0), "{:?}", e.link_flows);
    }

    #[test]
    fn ecmp_depends_on_the_seed_only() {
        let pairs: Vec<(usize, usize)> = (0..64).map(|i| (i % 4, 4 + (i / 4) % 4)).collect();
        let (a, ..) = run(&fat_tree("ecmp", 7), &pairs);
        let (b, ..) = run(&fat_tree("ecmp", 7), &pairs);
        let (c, ..) = run(&fat_tree("ecmp", 8), &pairs);
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Both up-links of leaf 0 carry some of the 64 flows.
        let firsts: std::collections::BTreeSet<LinkId> = a.iter().map(|r| r[1]).collect();
        assert_eq!(firsts.len(), 2, "{firsts:?}");
    }
}
