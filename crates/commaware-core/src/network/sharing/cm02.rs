//! SimGrid's CM02 sharing on a topology: weighted max-min with per-flow bounds, as
//! SimGrid 3.32 builds it (`src/surf/network_cm02.cpp`, `NetworkCm02Model::communicate`)
//! and solves it (`src/kernel/lmm/maxmin.cpp`, `MaxMin::maxmin_solve`).
//!
//! - A flow's *penalty* is its route latency (plus `weight_s` / bandwidth per link of
//!   the route when `weight_s` > 0); a flow whose route has no latency has penalty 1.
//!   On a saturated link every flow gets a rate inversely proportional to its penalty:
//!   two flows over 100 µs and 200 µs routes sharing 125 MB/s get 83.3 and 41.7 MB/s.
//!   `cm02_weighting = 0` gives every flow penalty 1 (equal shares).
//! - Each flow is bounded by `tcp_gamma / (2 × route latency)` (TCP's window over the
//!   round trip; 4 MiB by default, 0 disables).
//! - A SHARED link bounds the sum of its flows' rates. A FATPIPE link bounds each flow
//!   alone, but it saturates as SimGrid's FATPIPE constraint does: at the level where
//!   its lowest-penalty flow reaches the link's bandwidth; the others get that level
//!   over their penalty (less than the bandwidth when their route is longer).
//! - With `crosstraffic` the flow also loads the links of its reverse route at 0.05 of
//!   its rate (the engine appends them after the route, see [`FlowAttrs::forward`]).
//!
//! The solve is SimGrid's progressive filling, with its precision rules (`maxmin/
//! precision` 1e-5: a link whose remaining capacity falls under 1e-5 of its bandwidth
//! is saturated), so flow times match SimGrid's to rounding. Two things differ from
//! SimGrid's `optim:Full`, neither in the result (within rounding):
//!
//! - A solve with many light links (more than [`SCAN_LIMIT`]) does not scan them all
//!   each round for the lowest level: the links sit in an indexed 4-ary heap
//!   ([`LevelHeap`], one entry per link) keyed by a lower bound of their level remaining /
//!   usage. A link's level only rises during a solve (see [`Cm02::fill`]), so its key is
//!   left alone when a flow of it is fixed and only brought up to date when it reaches
//!   the top. The links that saturate in a round are the same set (every link whose level
//!   equals the lowest exactly, SimGrid's tie rule). A solve with few light links scans
//!   them, as SimGrid does: cheaper than keeping a heap in order.
//! - An update with arrivals solves every live flow afresh; an update with departures
//!   only keeps the rates fixed in the rounds before the first round that listed a
//!   departed flow, and refills the others from there (the proof is at
//!   [`Cm02::restart_round`]).

use super::{FlowAttrs, FlowId, FlowNet, LinkId, RemovedFlow, SharingModel};
use crate::error::{Error, ErrorKind, Result};
use crate::network::platform::Platform;
use crate::network::topology::LinkSharing;

/// SimGrid's `maxmin/precision`.
const PRECISION: f64 = 1e-5;
/// Load of a flow on the links of its reverse route (SimGrid's crosstraffic).
pub const CROSSTRAFFIC_WEIGHT: f64 = 0.05;
/// SimGrid's default `network/TCP-gamma` (bytes).
pub const DEFAULT_TCP_GAMMA: f64 = 4194304.0;
const NONE: u32 = u32::MAX;

/// The parameters of `maxmin` (SimGrid's CM02) on a platform with a topology.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cm02Params {
    /// Penalty = route latency (SimGrid); `false`: every flow has penalty 1.
    pub weighting: bool,
    /// Bytes; 0 disables the bound.
    pub tcp_gamma: f64,
    /// SimGrid's `network/weight-S` (0 in CM02).
    pub weight_s: f64,
    /// Load the reverse route at [`CROSSTRAFFIC_WEIGHT`] of the rate.
    pub crosstraffic: bool,
}

impl Default for Cm02Params {
    fn default() -> Self {
        Cm02Params { weighting: true, tcp_gamma: DEFAULT_TCP_GAMMA, weight_s: 0.0, crosstraffic: false }
    }
}

/// The parameters `maxmin` takes.
pub const PARAMETERS: &[&str] = &["cm02_weighting", "tcp_gamma", "weight_s", "crosstraffic"];

impl Cm02Params {
    /// Defaults overridden by `params` (the last value of a name wins), checked; errors
    /// name `prefix` + the parameter.
    pub fn from_params(params: &[(String, f64)], prefix: &str) -> Result<Cm02Params> {
        let err = |k: &str, reason: String| Error::new(ErrorKind::Options, format!("{prefix}{k}"), reason);
        for (k, v) in params {
            if !PARAMETERS.contains(&k.as_str()) {
                return Err(err(k, format!("unknown parameter `{k}`: the maxmin model takes {}", PARAMETERS.join(", "))));
            }
            if !v.is_finite() {
                return Err(err(k, format!("must be a finite number, got {v}")));
            }
        }
        let get = |k: &str| params.iter().rev().find(|(n, _)| n == k).map(|(_, v)| *v);
        let flag = |k: &str, default: bool| -> Result<bool> {
            match get(k) {
                None => Ok(default),
                Some(v) if v == 0.0 || v == 1.0 => Ok(v == 1.0),
                Some(v) => Err(err(k, format!("must be 0 or 1, got {v}"))),
            }
        };
        let nonneg = |k: &str, default: f64| -> Result<f64> {
            match get(k) {
                None => Ok(default),
                Some(v) if v >= 0.0 => Ok(v),
                Some(v) => Err(err(k, format!("must be >= 0, got {v}"))),
            }
        };
        let d = Cm02Params::default();
        Ok(Cm02Params {
            weighting: flag("cm02_weighting", d.weighting)?,
            tcp_gamma: nonneg("tcp_gamma", d.tcp_gamma)?,
            weight_s: nonneg("weight_s", d.weight_s)?,
            crosstraffic: flag("crosstraffic", d.crosstraffic)?,
        })
    }
}

/// One flow as the solver sees it.
#[derive(Debug, Clone, Copy)]
struct Var {
    penalty: f64,
    /// Upper bound on the rate; 0 for none (SimGrid's convention).
    bound: f64,
    value: f64,
    fixed: bool,
    /// The round that last listed it among the flows of the saturated links.
    listed: u64,
    /// The round that first listed it since it was last reset ([`UNSET`] if none).
    first: u64,
    /// The round that fixed its value ([`UNSET`] while not fixed).
    fixed_at: u64,
    /// Position in `live` (`NONE` when not live).
    at: u32,
}

/// Most light links a solve scans each round; with more it keeps them in a heap (on a
/// 1,024-host dragonfly a job's exchange lights about a hundred links, where the scan is
/// about twice as fast as the heap; a million-rank collective lights hundreds of
/// thousands).
pub const SCAN_LIMIT: usize = 512;

/// No round yet.
const UNSET: u64 = u64::MAX;

const NEW_VAR: Var =
    Var { penalty: 1.0, bound: 0.0, value: 0.0, fixed: false, listed: UNSET, first: UNSET, fixed_at: UNSET, at: NONE };

#[derive(Debug, Clone, Copy)]
struct Cnst {
    remaining: f64,
    usage: f64,
    /// The solve that last initialised it.
    stamp: u32,
    /// Not saturated yet in this solve (SimGrid's "light" list).
    light: bool,
}

/// The light links by key (a lower bound of their level remaining / usage), lowest first
/// (ties by link id): a 4-ary heap (shallower than a binary one: fewer cache misses per
/// pop) with each link's position kept, so that a link whose key is brought up to date
/// moves in place (one entry per link).
#[derive(Debug, Default)]
struct LevelHeap {
    items: Vec<(f64, LinkId)>,
    /// Per link: its index in `items`, or `NONE`.
    pos: Vec<u32>,
}

impl LevelHeap {
    /// Keys are levels: positive and finite (never NaN).
    #[inline]
    fn less(a: (f64, LinkId), b: (f64, LinkId)) -> bool {
        a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    fn fit(&mut self, links: usize) {
        if self.pos.len() < links {
            self.pos.resize(links, NONE);
        }
    }

    fn clear(&mut self) {
        for &(_, l) in &self.items {
            self.pos[l as usize] = NONE;
        }
        self.items.clear();
    }

    fn peek(&self) -> Option<(f64, LinkId)> {
        self.items.first().copied()
    }

    #[inline]
    fn place(&mut self, i: usize, item: (f64, LinkId)) {
        self.items[i] = item;
        self.pos[item.1 as usize] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        let item = self.items[i];
        while i > 0 {
            let parent = (i - 1) / 4;
            let p = self.items[parent];
            if !Self::less(item, p) {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, item);
    }

    fn sift_down(&mut self, mut i: usize) {
        let item = self.items[i];
        let n = self.items.len();
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut child = first;
            let mut c = self.items[first];
            for k in first + 1..(first + 4).min(n) {
                if Self::less(self.items[k], c) {
                    child = k;
                    c = self.items[k];
                }
            }
            if !Self::less(c, item) {
                break;
            }
            self.place(i, c);
            i = child;
        }
        self.place(i, item);
    }

    /// Enter link `l` at `level`, or move it there.
    fn set(&mut self, l: LinkId, level: f64) {
        let at = self.pos[l as usize];
        if at == NONE {
            self.items.push((level, l));
            let i = self.items.len() - 1;
            self.pos[l as usize] = i as u32;
            self.sift_up(i);
        } else {
            let i = at as usize;
            let old = self.items[i];
            self.items[i].0 = level;
            if Self::less((level, l), old) {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    /// Take out the lowest entry.
    fn pop(&mut self) {
        let (_, l) = self.items[0];
        self.pos[l as usize] = NONE;
        let last = self.items.pop().expect("pop of an empty heap");
        if !self.items.is_empty() {
            self.place(0, last);
            self.sift_down(0);
        }
    }

    /// Enter link `l` at `level` without ordering (follow with [`LevelHeap::heapify`]).
    fn push_unordered(&mut self, l: LinkId, level: f64) {
        debug_assert_eq!(self.pos[l as usize], NONE);
        self.pos[l as usize] = self.items.len() as u32;
        self.items.push((level, l));
    }

    /// Restore the heap order after [`LevelHeap::push_unordered`].
    fn heapify(&mut self) {
        for i in (0..self.items.len().div_ceil(4)).rev() {
            self.sift_down(i);
        }
    }
}

/// SimGrid's CM02 sharing (see the module documentation).
pub struct Cm02 {
    params: Cm02Params,
    /// Per link: FATPIPE (the topology's links; the engine's memory links are SHARED).
    fatpipe: Vec<bool>,
    vars: Vec<Var>,
    live: Vec<FlowId>,
    cnst: Vec<Cnst>,
    touched: Vec<LinkId>,
    /// The light links by level (a link no longer light may stay until it reaches the top),
    /// when there are more than `scan_limit` of them.
    heap: LevelHeap,
    /// The light links when there are at most `scan_limit` of them (a link no longer light
    /// may stay until the next scan).
    scanned: Vec<LinkId>,
    /// Does this solve scan `scanned` (else it keeps `heap`)?
    scanning: bool,
    scan_limit: usize,
    saturated: Vec<LinkId>,
    round_vars: Vec<FlowId>,
    /// The flows the current solve rates (every live flow, or those a restart refills).
    refill: Vec<FlowId>,
    stamp: u32,
    /// Rounds of filling since the model was made; never reused, so that the rounds
    /// kept by a restart ([`Cm02::restart_round`]) precede every later one.
    round: u64,
    /// Was the last update's solve complete (every live flow rated)?
    solved: bool,
}

impl Cm02 {
    /// The model for `platform` (its topology's link kinds) with `params`.
    pub fn new(platform: &Platform, params: Cm02Params) -> Cm02 {
        let fatpipe = match &platform.topology {
            Some(t) => (0..t.link_count() as u32).map(|l| t.link(l).sharing == LinkSharing::Fatpipe).collect(),
            None => Vec::new(),
        };
        Cm02::with_fatpipes(fatpipe, params)
    }

    /// The model with `fatpipe[l]` saying which links are FATPIPE (links beyond are SHARED).
    pub fn with_fatpipes(fatpipe: Vec<bool>, params: Cm02Params) -> Cm02 {
        Cm02 {
            params,
            fatpipe,
            vars: Vec::new(),
            live: Vec::new(),
            cnst: Vec::new(),
            touched: Vec::new(),
            heap: LevelHeap::default(),
            scanned: Vec::new(),
            scanning: false,
            scan_limit: SCAN_LIMIT,
            saturated: Vec::new(),
            round_vars: Vec::new(),
            refill: Vec::new(),
            stamp: 0,
            round: 0,
            solved: false,
        }
    }

    pub fn params(&self) -> Cm02Params {
        self.params
    }

    /// The model scanning every light link each round while at most `links` are light
    /// (else a heap; [`SCAN_LIMIT`] by default). The rates are the same either way (within
    /// rounding); `tests/cm02_levels.rs` checks both against SimGrid's solve.
    pub fn with_scan_limit(self, links: usize) -> Cm02 {
        Cm02 { scan_limit: links, ..self }
    }

    fn is_fatpipe(&self, l: LinkId) -> bool {
        self.fatpipe.get(l as usize).copied().unwrap_or(false)
    }

    /// Penalty and bound of a joining flow, as `NetworkCm02Model::communicate` sets them.
    fn var_for(&self, net: &FlowNet, f: FlowId) -> Var {
        let FlowAttrs { latency, forward } = net.attrs(f);
        let route = &net.flow(f).links()[..forward as usize];
        let mut penalty = 1.0;
        if self.params.weighting && latency > 0.0 {
            penalty = latency;
            if self.params.weight_s > 0.0 {
                for &l in route {
                    penalty += self.params.weight_s / net.links[l as usize].capacity;
                }
            }
        }
        let mut bound = 0.0;
        if self.params.tcp_gamma > 0.0 && latency > 0.0 {
            // SimGrid bounds by min(route bandwidth, gamma / 2 latency); the route's
            // smallest bandwidth already bounds the flow through its links.
            let min_bw = route.iter().map(|&l| net.links[l as usize].capacity).fold(f64::INFINITY, f64::min);
            bound = min_bw.min(self.params.tcp_gamma / (2.0 * latency));
        }
        Var { penalty, bound, ..NEW_VAR }
    }

    /// Weight of flow `f`'s `k`-th link.
    #[inline]
    fn coef(forward: u32, k: usize) -> f64 {
        if (k as u32) < forward {
            1.0
        } else {
            CROSSTRAFFIC_WEIGHT
        }
    }

    /// Link `l`'s level (remaining / usage).
    #[inline]
    fn level(&self, l: LinkId) -> f64 {
        let c = &self.cnst[l as usize];
        c.remaining / c.usage
    }

    /// FATPIPE usage: the largest weight/penalty among the flows not fixed yet.
    fn fatpipe_usage(&self, net: &FlowNet, l: LinkId) -> f64 {
        let mut usage: f64 = 0.0;
        for &g in &net.links[l as usize].flows {
            let v = &self.vars[g as usize];
            if v.value > 0.0 {
                continue;
            }
            let fwd = net.attrs(g).forward as usize;
            let w = if net.flow(g).links()[..fwd].contains(&l) { 1.0 } else { CROSSTRAFFIC_WEIGHT };
            usage = usage.max(w / v.penalty);
        }
        usage
    }

    /// Grow the per-link state to the net's links.
    fn fit_links(&mut self, net: &FlowNet) {
        if self.cnst.len() < net.links.len() {
            let fresh = Cnst { remaining: 0.0, usage: 0.0, stamp: 0, light: false };
            self.cnst.resize(net.links.len(), fresh);
        }
        self.heap.fit(net.links.len());
    }

    /// SimGrid's progressive filling over every live flow.
    fn solve(&mut self, net: &FlowNet) {
        self.fit_links(net);
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        self.touched.clear();
        self.clear_lights();
        self.refill.clear();
        self.refill.extend_from_slice(&self.live);
        for i in 0..self.live.len() {
            let f = self.live[i];
            let var = &mut self.vars[f as usize];
            var.value = 0.0;
            var.fixed = false;
            var.first = UNSET;
            var.fixed_at = UNSET;
            let penalty = var.penalty;
            let forward = net.attrs(f).forward;
            for (k, &l) in net.flow(f).links().iter().enumerate() {
                let fat = self.is_fatpipe(l);
                let c = &mut self.cnst[l as usize];
                if c.stamp != stamp {
                    *c = Cnst { remaining: net.links[l as usize].capacity, usage: 0.0, stamp, light: false, ..*c };
                    self.touched.push(l);
                }
                let w = Self::coef(forward, k) / penalty;
                if fat {
                    c.usage = c.usage.max(w);
                } else {
                    c.usage += w;
                }
            }
        }
        for i in 0..self.touched.len() {
            let l = self.touched[i];
            let c = &mut self.cnst[l as usize];
            let cap = net.links[l as usize].capacity;
            if c.remaining > cap * PRECISION && c.usage > 0.0 {
                c.light = true;
                self.scanned.push(l);
            }
        }
        self.order_lights();
        self.fill(net);
    }

    /// The round from which a solve without the flows of `removed` (and nothing added)
    /// differs from the last one: the earliest round that listed one of them. `None`
    /// when the last solve was not complete or a removed flow was never listed.
    ///
    /// Why the rounds before it are unchanged: let r be the earliest round that listed a
    /// removed flow f. Before r, f was on no saturated link, and its only part in the
    /// filling was its usage (weight / penalty) on its links, none of which had the
    /// lowest level. Without f those links have a smaller usage (a FATPIPE link a usage
    /// no larger) and the same remaining capacity, so a level no lower: still not the
    /// lowest. Every other link's state depends only on the flows fixed so far, so by
    /// induction each round before r saturates the same links, lists the same flows
    /// (none of them removed), finds the same bound and fixes the same flows at the same
    /// values. A flow fixed before r keeps its rate; the others are filled again from
    /// the state at the start of r, which is each link's capacity minus the rates of its
    /// kept flows, and the usage of its other flows ([`Cm02::restart`]).
    fn restart_round(&self, removed: &[RemovedFlow]) -> Option<u64> {
        if !self.solved {
            return None;
        }
        let mut r = UNSET;
        for f in removed {
            r = r.min(self.vars.get(f.id as usize)?.first);
        }
        (r != UNSET).then_some(r)
    }

    /// Fill again the flows fixed at or after round `from` (or never fixed), keeping the
    /// others' rates (see [`Cm02::restart_round`] for why that equals a full solve).
    fn restart(&mut self, net: &FlowNet, from: u64) {
        self.fit_links(net);
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        self.clear_lights();
        self.refill.clear();
        for i in 0..self.live.len() {
            let f = self.live[i];
            let v = &mut self.vars[f as usize];
            if v.fixed && v.fixed_at < from {
                continue;
            }
            v.value = 0.0;
            v.fixed = false;
            v.first = UNSET;
            v.fixed_at = UNSET;
            self.refill.push(f);
        }
        for i in 0..self.refill.len() {
            let f = self.refill[i];
            for &l in net.flow(f).links() {
                if self.cnst[l as usize].stamp == stamp {
                    continue;
                }
                let cap = net.links[l as usize].capacity;
                let (remaining, usage) = self.link_state(net, l);
                let light = remaining > cap * PRECISION && usage > 0.0;
                let c = &mut self.cnst[l as usize];
                *c = Cnst { remaining, usage, stamp, light, ..*c };
                if light {
                    self.scanned.push(l);
                }
            }
        }
        self.order_lights();
        self.fill(net);
    }

    /// Forget the light links of the last solve.
    fn clear_lights(&mut self) {
        self.heap.clear();
        self.scanned.clear();
    }

    /// Choose how this solve finds its lowest levels: the light links gathered in
    /// `scanned` stay there to be scanned, or (more than `scan_limit` of them) go to the
    /// heap.
    fn order_lights(&mut self) {
        self.scanning = self.scanned.len() <= self.scan_limit;
        if !self.scanning {
            for i in 0..self.scanned.len() {
                let l = self.scanned[i];
                let level = self.level(l);
                self.heap.push_unordered(l, level);
            }
            self.scanned.clear();
            self.heap.heapify();
        }
    }

    /// The round's saturated links from the heap, into `saturated` in link order; returns
    /// their level (negative when no link is light).
    fn lowest_from_heap(&mut self) -> f64 {
        let mut min_usage = -1.0;
        self.saturated.clear();
        while let Some((key, l)) = self.heap.peek() {
            if !self.cnst[l as usize].light {
                self.heap.pop();
                continue;
            }
            if min_usage >= 0.0 && key > min_usage {
                break;
            }
            let level = self.level(l);
            if level > key {
                // Its key is stale: move it to its level and look at the top again.
                self.heap.set(l, level);
            } else if min_usage < 0.0 || level == min_usage {
                min_usage = level;
                self.heap.pop();
                self.saturated.push(l);
            } else {
                // Below its key by a rounding of the update: the next round takes it.
                break;
            }
        }
        min_usage
    }

    /// The round's saturated links by a scan of the light ones (SimGrid's way), into
    /// `saturated` in link order as the heap gives them; returns their level (negative
    /// when no link is light). Links no longer light leave the list.
    fn lowest_from_scan(&mut self) -> f64 {
        let mut min_usage = f64::INFINITY;
        self.saturated.clear();
        let mut i = 0;
        while i < self.scanned.len() {
            let l = self.scanned[i];
            if !self.cnst[l as usize].light {
                self.scanned.swap_remove(i);
                continue;
            }
            let level = self.level(l);
            if level < min_usage {
                min_usage = level;
                self.saturated.clear();
                self.saturated.push(l);
            } else if level == min_usage {
                self.saturated.push(l);
            }
            i += 1;
        }
        if self.saturated.is_empty() {
            return -1.0;
        }
        // The same order of fixing (and so of subtracting rates) as the heap's.
        self.saturated.sort_unstable();
        min_usage
    }

    /// Link `l`'s remaining capacity (its capacity minus the rates of its fixed flows,
    /// each subtracted as the filling does) and usage (of its flows not fixed).
    fn link_state(&self, net: &FlowNet, l: LinkId) -> (f64, f64) {
        let cap = net.links[l as usize].capacity;
        if self.is_fatpipe(l) {
            return (cap, self.fatpipe_usage(net, l));
        }
        let (mut remaining, mut usage) = (cap, 0.0);
        let flows = &net.links[l as usize].flows;
        for &g in flows {
            // One entry per crossing of `l` by flow `g`; with crosstraffic the crossing may
            // be forward (weight 1) or on the reverse route: each entry counts the mean
            // weight of g's crossings of `l` (the weight itself when it crosses once).
            let w = if self.params.crosstraffic {
                let forward = net.attrs(g).forward;
                let (mut sum, mut n) = (0.0, 0.0);
                for (k, &m) in net.flow(g).links().iter().enumerate() {
                    if m == l {
                        sum += Self::coef(forward, k);
                        n += 1.0;
                    }
                }
                sum / n
            } else {
                1.0
            };
            let v = &self.vars[g as usize];
            if v.fixed {
                remaining -= w * v.value;
                if remaining < cap * PRECISION {
                    remaining = 0.0;
                }
            } else {
                usage += w / v.penalty;
            }
        }
        (remaining, usage)
    }

    /// The rounds of the filling until no link is light.
    ///
    /// A light link's level never falls during the filling, so a heap key set from an
    /// earlier level is a lower bound of the level now: fixing a flow of penalty p at
    /// value v on a SHARED link of level rem / u takes v from rem and 1/p from u, and v
    /// is the round's level over p (or a binding bound, lower still), no more than the
    /// link's own level over p: (rem - v) / (u - 1/p) >= rem / u. On a FATPIPE link the
    /// remaining capacity stays and the usage (the largest weight / penalty among the
    /// flows not fixed) can only fall. So a link is keyed afresh only when it reaches the
    /// top of the heap with a key below its level; the first link at the top whose key is
    /// its level has the lowest level of all, and the round's saturated links are the
    /// links at the top whose level equals it, as in SimGrid's scan.
    fn fill(&mut self, net: &FlowNet) {
        loop {
            // The links that saturate first (SimGrid: every light link whose remaining /
            // usage equals the lowest).
            let min_usage = if self.scanning { self.lowest_from_scan() } else { self.lowest_from_heap() };
            if self.saturated.is_empty() {
                break;
            }
            // Their flows not fixed yet, each once.
            self.round += 1;
            let round = self.round;
            self.round_vars.clear();
            for &l in &self.saturated {
                for &g in &net.links[l as usize].flows {
                    let v = &mut self.vars[g as usize];
                    if !v.fixed && v.listed != round {
                        v.listed = round;
                        if v.first == UNSET {
                            v.first = round;
                        }
                        self.round_vars.push(g);
                    }
                }
            }
            // A flow whose bound binds before the level: fix the lowest bounds first.
            let mut min_bound = -1.0;
            for &g in &self.round_vars {
                let v = &self.vars[g as usize];
                if v.bound > 0.0 && v.bound * v.penalty < min_usage {
                    let b = v.bound * v.penalty;
                    min_bound = if min_bound < 0.0 { b } else { f64::min(min_bound, b) };
                }
            }
            for i in 0..self.round_vars.len() {
                let g = self.round_vars[i];
                let v = &mut self.vars[g as usize];
                if min_bound < 0.0 {
                    v.value = min_usage / v.penalty;
                } else if (min_bound - v.bound * v.penalty).abs() < PRECISION {
                    v.value = v.bound;
                } else {
                    continue;
                }
                v.fixed = true;
                v.fixed_at = round;
                let (value, penalty) = (v.value, v.penalty);
                let forward = net.attrs(g).forward;
                for (k, &l) in net.flow(g).links().iter().enumerate() {
                    let cap = net.links[l as usize].capacity;
                    let usage;
                    let remaining;
                    if self.is_fatpipe(l) {
                        usage = self.fatpipe_usage(net, l);
                        let c = &mut self.cnst[l as usize];
                        c.usage = usage;
                        remaining = c.remaining;
                    } else {
                        let w = Self::coef(forward, k);
                        let c = &mut self.cnst[l as usize];
                        c.remaining -= w * value;
                        if c.remaining < cap * PRECISION {
                            c.remaining = 0.0;
                        }
                        c.usage -= w / penalty;
                        if c.usage < PRECISION {
                            c.usage = 0.0;
                        }
                        usage = c.usage;
                        remaining = c.remaining;
                    }
                    if !(usage > PRECISION) || !(remaining > cap * PRECISION) {
                        self.cnst[l as usize].light = false;
                    }
                }
            }
            // A saturated link that is still light (a bound bound first for some of its
            // flows) goes back in the heap at its level (a scan keeps it in its list).
            for i in 0..if self.scanning { 0 } else { self.saturated.len() } {
                let l = self.saturated[i];
                if self.cnst[l as usize].light {
                    let level = self.level(l);
                    self.heap.set(l, level);
                }
            }
        }
    }
}

impl SharingModel for Cm02 {
    fn name(&self) -> &'static str {
        "maxmin"
    }

    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        for r in removed {
            let at = self.vars[r.id as usize].at;
            if at != NONE {
                self.live.swap_remove(at as usize);
                if (at as usize) < self.live.len() {
                    let moved = self.live[at as usize];
                    self.vars[moved as usize].at = at;
                }
                self.vars[r.id as usize].at = NONE;
            }
        }
        for &f in added {
            if self.vars.len() <= f as usize {
                self.vars.resize(f as usize + 1, NEW_VAR);
            }
            let v = self.var_for(net, f);
            self.vars[f as usize] = Var { at: self.live.len() as u32, ..v };
            self.live.push(f);
        }
        // Only departures: refill from the first round they changed; else solve afresh.
        match if added.is_empty() { self.restart_round(removed) } else { None } {
            Some(from) => self.restart(net, from),
            None => self.solve(net),
        }
        self.solved = true;
        for &f in &self.refill {
            let rate = self.vars[f as usize].value;
            if net.flow(f).rate.to_bits() != rate.to_bits() {
                net.set_rate(f, rate);
                changed.push(f);
            }
        }
    }

    fn crosstraffic(&self) -> bool {
        self.params.crosstraffic
    }
}
