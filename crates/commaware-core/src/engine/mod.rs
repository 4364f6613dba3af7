//! The activity engine: transfers, computations and timers on an event clock.
//!
//! Transfers first spend their latency, then join the [`FlowNet`] where the sharing
//! model rates them; computations run at the host speed times the factor given by
//! the [`ComputeRate`] hook (the seam for the interference of communication on
//! computation, paper 000 §3.1). The clock jumps to the next completion; events
//! live in a binary heap (O(log n)) and stale ones are skipped by version.

/// Interference of communication on computation as the engine's compute-rate hook.
pub mod interference;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::util::mintree::MinTree;
use crate::network::platform::Platform;
use crate::network::sharing::{FlowId, FlowNet, LinkId, RemovedFlow, SharingModel};

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
    links: [LinkId; 3],
    nlinks: u8,
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
    latency: f64,
    memory_latency: f64,
    added: Vec<FlowId>,
    removed: Vec<RemovedFlow>,
    changed: Vec<FlowId>,
    live_events: usize,
    /// The sharing model keeps flow progress (`SharingModel::track_progress`): the
    /// engine then asks it for completions and does not re-key `changed` flows.
    tracks: bool,
}

impl Engine {
    pub fn new(platform: &Platform, model: Box<dyn SharingModel>, compute_rate: Box<dyn ComputeRate>) -> Self {
        let n = platform.hosts.len();
        // Links: up(h) = h, down(h) = n + h, memory(h) = 2n + h, backbone = 3n.
        let mut caps: Vec<f64> = platform.hosts.iter().map(|h| h.bandwidth_up).collect();
        caps.extend(platform.hosts.iter().map(|h| h.bandwidth_down));
        caps.extend(std::iter::repeat(platform.memory_bandwidth()).take(n));
        if let Some(b) = platform.network.backbone {
            caps.push(b);
        }
        let mut model = model;
        // The compute-rate hook reads flow rates from the net, which a tracking model
        // does not keep: track only without it.
        let full_speed = compute_rate.is_identity();
        let tracks = full_speed && model.track_progress().is_some();
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
            latency: platform.network.latency,
            memory_latency: platform.network.memory_latency,
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            live_events: 0,
            tracks,
        }
    }

    pub fn now(&self) -> f64 {
        self.now
    }

    pub fn model_name(&self) -> &'static str {
        self.model.name()
    }

    fn push(&mut self, time: f64, what: What) {
        self.seq += 1;
        self.queue.push(Reverse((Time(time), self.seq, what)));
    }

    /// Start moving `bytes` from `src` to `dst` (host indices). It completes after the
    /// latency plus the transfer at its shared rate.
    pub fn start_transfer(&mut self, src: usize, dst: usize, bytes: f64, tag: Tag) {
        self.start_transfer_scaled(src, dst, bytes, 1.0, tag)
    }

    /// [`Engine::start_transfer`] with the route's latency multiplied by `latency_factor`
    /// (SMPI's `smpi/lat-factor`).
    pub fn start_transfer_scaled(&mut self, src: usize, dst: usize, bytes: f64, latency_factor: f64, tag: Tag) {
        let n = self.n_hosts as u32;
        let (s, d) = (src as u32, dst as u32);
        let (links, nlinks, latency) = if s == d {
            ([2 * n + s, 0, 0], 1u8, self.memory_latency)
        } else if self.backbone {
            ([s, 3 * n, n + d], 3, self.latency)
        } else {
            ([s, n + d, 0], 2, self.latency)
        };
        let t = Transfer { tag, links, nlinks, remaining: bytes, last: self.now, rate: 0.0, flow: None, src: s, dst: d };
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
        self.live_events += 1;
        self.push(self.now + latency * latency_factor, What::LatencyDone { transfer: id });
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
                    let links = t.links;
                    let nlinks = t.nlinks as usize;
                    let f = self.net.add_flow(&links[..nlinks]);
                    if self.flow_owner.len() <= f as usize {
                        self.flow_owner.resize(f as usize + 1, 0);
                    }
                    self.flow_owner[f as usize] = transfer;
                    self.transfers[transfer as usize].flow = Some(f);
                    self.added.push(f);
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
        self.free_transfers.push(id);
        self.live_events -= 1;
        out.push(Completion { tag, kind: ActKind::Transfer, conflicts });
    }
}
