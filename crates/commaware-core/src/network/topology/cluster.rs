//! SimGrid 3.32's `<cluster>` topologies: FLAT (a star with optional backbone, limiters and
//! loopbacks), TORUS, FAT_TREE and DRAGONFLY, with SimGrid's link names, host order and
//! routes, quirks included.
//!
//! Nothing is stored per link or per host: every link's numbers and name, and every route,
//! come from closed forms over the cluster's parameters, so a 65,536-host fat tree costs a
//! few hundred bytes. What each piece follows in SimGrid 3.32 (release commit e8d2ff8dab):
//!
//! - the links a cluster creates, their names and the FLAT cluster's routes:
//!   `src/surf/sg_platf.cpp` (`sg_platf_new_cluster_flat`, `sg_platf_cluster_create_loopback`,
//!   `sg_platf_cluster_create_limiter`) and `src/kernel/routing/StarZone.cpp`;
//! - where limiters and loopbacks sit: `src/kernel/routing/ClusterZone.cpp`;
//! - TORUS: `src/kernel/routing/TorusZone.cpp` (`create_torus_links`, `get_local_route`);
//! - FAT_TREE: `src/kernel/routing/FatTreeZone.cpp` (`generate_switches`, `generate_labels`,
//!   `connect_node_to_parents`, `add_link`, `get_local_route`);
//! - DRAGONFLY: `src/kernel/routing/DragonflyZone.cpp` (`generate_routers`,
//!   `generate_links`, `get_local_route`).
//!
//! Differences from SimGrid, all on input SimGrid accepts but mishandles: a radical with
//! more or fewer numbers than the topology has hosts is an error (SimGrid ignores the extra
//! numbers or aborts), and so is a dragonfly whose routes SimGrid computes by reading past
//! the end of an array (more groups than routers per chassis).
//!
//! SimGrid numbers the fat tree's and the dragonfly's links with counters shared by every
//! such cluster of a file (`static int uniqueId` in `FatTreeZone::add_link` and
//! `DragonflyZone::generate_links`), and numbers fat-tree hosts with one more
//! (`static int position` in `FatTreeZone::add_processing_node`), which d-mod-k routing
//! reads: a second fat tree of a file routes on positions that continue from the first.
//! [`SimgridCounters`] carries the three across the clusters of one file.

use std::sync::Arc;

use crate::error::{check_amount, Error, ErrorKind, Result};
use crate::network::topology::MAX_HOSTS;

pub mod spec;
pub use spec::TopologySpec;

use super::{
    not_routed_here, ClusterKind, ClusterLinkSharing, ClusterParams, Endpoint, LinkInfo, LinkSharing, Shape, ShapeKind, Topology,
    TopologyLink,
};
use crate::network::topology::routing::{ugal_cost, RouteState, Routing};

/// Most links a cluster may have (link numbers are `u32`).
pub const MAX_LINKS: u64 = u32::MAX as u64;
/// Most levels of a fat tree and dimensions of a torus.
pub const MAX_LEVELS: usize = 32;

/// How a dragonfly routes between routers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DragonflyRouting {
    /// SimGrid 3.32's `DragonflyZone::get_local_route`, chassis quirk included: after a hop
    /// between the routers of one chassis it carries on as if the message were in chassis 0,
    /// so a route inside a group but across chassis other than 0 takes a black link of
    /// chassis 0 (or misses its black hop). What a SimGrid file gives by default.
    #[default]
    Simgrid,
    /// Minimal routing done right: green hop (to the destination's blade, in the current
    /// chassis), then black hop (to the destination's chassis), in each group crossed.
    Minimal,
}

impl DragonflyRouting {
    pub const NAMES: [&'static str; 2] = ["simgrid", "minimal"];
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "simgrid" => Some(Self::Simgrid),
            "minimal" => Some(Self::Minimal),
            _ => None,
        }
    }
}

/// SimGrid 3.32's counters that run on across the clusters of one platform file: the
/// fat trees' link serial and host position, and the dragonflies' link serial (see the
/// module's header). A file starts them at 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimgridCounters {
    pub fat_tree_links: u64,
    pub fat_tree_hosts: u64,
    pub dragonfly_links: u64,
}

/// Build a SimGrid `<cluster>` with SimGrid 3.32's routing (the dragonfly's chassis quirk
/// included), as the first cluster of a file.
pub fn build_cluster(p: &ClusterParams) -> Result<Arc<dyn Topology>> {
    build_cluster_with(p, DragonflyRouting::Simgrid)
}

/// [`build_cluster`] with a choice of dragonfly routing (ignored by the other kinds).
pub fn build_cluster_with(p: &ClusterParams, routing: DragonflyRouting) -> Result<Arc<dyn Topology>> {
    build_cluster_in(p, routing, &mut SimgridCounters::default())
}

/// [`build_cluster_with`] for a cluster that follows others in a file: starts from
/// `counters` and advances them past this cluster.
pub fn build_cluster_in(p: &ClusterParams, routing: DragonflyRouting, counters: &mut SimgridCounters) -> Result<Arc<dyn Topology>> {
    let common = Common::new(p)?;
    Ok(match p.kind {
        ClusterKind::Flat => Arc::new(Flat::new(common, p)?),
        ClusterKind::Torus => Arc::new(Torus::new(common, &p.topo_parameters)?),
        ClusterKind::FatTree => {
            let mut t = FatTree::new(common, &p.topo_parameters)?;
            (t.serial_base, t.position_base) = (counters.fat_tree_links, counters.fat_tree_hosts);
            counters.fat_tree_links += t.cables;
            counters.fat_tree_hosts += t.c.n as u64;
            Arc::new(t)
        }
        ClusterKind::Dragonfly => {
            let mut t = Dragonfly::new(common, &p.topo_parameters, routing)?;
            t.serial_base = counters.dragonfly_links;
            counters.dragonfly_links += t.cables;
            Arc::new(t)
        }
    })
}

/// The cluster's host names in SimGrid's order: `prefix + number + suffix` for each number
/// of the radical. A radical of more than [`MAX_HOSTS`] numbers is an error before anything
/// is allocated.
pub fn cluster_host_names(p: &ClusterParams) -> Result<Vec<String>> {
    let radical = Radical::new(&p.radical)?;
    let mut names = Vec::with_capacity(radical.count);
    for &(a, b) in &p.radical {
        names.extend((a..=b).map(|i| format!("{}{}{}", p.prefix, i, p.suffix)));
    }
    Ok(names)
}

/// The name of a cluster's router: `router_id`, else SimGrid's `{prefix}{id}_router{suffix}`.
pub fn cluster_router_name(p: &ClusterParams) -> String {
    p.router_id.clone().unwrap_or_else(|| format!("{}{}_router{}", p.prefix, p.id, p.suffix))
}

fn err(field: &str, reason: impl Into<String>) -> Error {
    Error::platform(field, reason)
}

/// A cluster's radical: inclusive ranges and the index of each range's first host.
#[derive(Debug)]
struct Radical {
    ranges: Vec<(u64, u64)>,
    starts: Vec<usize>,
    count: usize,
}

impl Radical {
    fn new(ranges: &[(u64, u64)]) -> Result<Self> {
        let mut count: u64 = 0;
        let mut starts = Vec::with_capacity(ranges.len());
        for &(a, b) in ranges {
            if a > b {
                return Err(err("radical", format!("range {a}-{b} is empty (its start is above its end)")));
            }
            starts.push(count as usize);
            count = count.saturating_add(b - a + 1);
            if count > MAX_HOSTS as u64 {
                return Err(err("radical", format!("more than {MAX_HOSTS} hosts, at most {MAX_HOSTS} (2^20) are allowed")));
            }
        }
        if count == 0 {
            return Err(err("radical", "names no host"));
        }
        let mut sorted: Vec<(u64, u64)> = ranges.to_vec();
        sorted.sort_unstable();
        for w in sorted.windows(2) {
            if w[1].0 <= w[0].1 {
                return Err(err("radical", format!("number {} appears twice (hosts would share a name)", w[1].0)));
            }
        }
        Ok(Radical { ranges: ranges.to_vec(), starts, count: count as usize })
    }

    /// The radical number of host `i`.
    fn number(&self, i: usize) -> u64 {
        let r = self.starts.partition_point(|&s| s <= i) - 1;
        self.ranges[r].0 + (i - self.starts[r]) as u64
    }
}

/// What every cluster kind has: its id, hosts, private-link numbers, limiters, loopbacks.
#[derive(Debug)]
struct Common {
    id: String,
    radical: Radical,
    n: usize,
    bw: f64,
    lat: f64,
    /// SPLITDUPLEX: two links (`_UP`, `_DOWN`) where the other policies make one.
    split: bool,
    limiter: Option<f64>,
    loopback: Option<(f64, f64)>,
    /// What the cluster was built from (for `platform export`).
    params: ClusterParams,
}

impl Common {
    fn new(p: &ClusterParams) -> Result<Self> {
        let radical = Radical::new(&p.radical)?;
        let pos = |f: &str, v: f64| check_amount(ErrorKind::Platform, f, v, true);
        let nonneg = |f: &str, v: f64| check_amount(ErrorKind::Platform, f, v, false);
        pos("bw", p.bandwidth)?;
        nonneg("lat", p.latency)?;
        // SimGrid makes a limiter when `limiter_link` > 0 and a loopback when either of its
        // numbers is (sg_platf.cpp); a loopback of bandwidth 0 would stall, so refuse it.
        let limiter = match p.limiter_bandwidth {
            Some(b) => {
                nonneg("limiter_link", b)?;
                (b > 0.0).then_some(b)
            }
            None => None,
        };
        let loopback = match p.loopback {
            Some((b, l)) => {
                nonneg("loopback_bw", b)?;
                nonneg("loopback_lat", l)?;
                if b > 0.0 || l > 0.0 {
                    pos("loopback_bw", b)?;
                    Some((b, l))
                } else {
                    None
                }
            }
            None => None,
        };
        let n = radical.count;
        Ok(Common {
            id: p.id.clone(),
            radical,
            n,
            bw: p.bandwidth,
            lat: p.latency,
            split: p.sharing == ClusterLinkSharing::Splitduplex,
            limiter,
            loopback,
            params: p.clone(),
        })
    }

    fn shape(&self, kind: ShapeKind) -> Shape {
        Shape { kind, bandwidth: self.bw, split: self.split, limiter: self.limiter }
    }
    /// Links per host in the host section: loopback, then limiter.
    fn host_stride(&self) -> usize {
        self.loopback.is_some() as usize + self.limiter.is_some() as usize
    }
    fn ways(&self) -> usize {
        if self.split { 2 } else { 1 }
    }
    fn loopback_of(&self, host: usize, base: usize, stride: usize) -> Option<TopologyLink> {
        self.loopback.map(|_| (base + host * stride) as TopologyLink)
    }
    fn limiter_of(&self, host: usize, base: usize, stride: usize) -> Option<TopologyLink> {
        self.limiter.map(|_| (base + host * stride + self.loopback.is_some() as usize) as TopologyLink)
    }
    fn loopback_info(&self) -> LinkInfo {
        let (bandwidth, latency) = self.loopback.unwrap_or((0.0, 0.0));
        LinkInfo { bandwidth, latency, sharing: LinkSharing::Fatpipe }
    }
    /// SimGrid's limiters are plain links: SHARED, latency 0.
    fn limiter_info(&self) -> LinkInfo {
        LinkInfo { bandwidth: self.limiter.unwrap_or(0.0), latency: 0.0, sharing: LinkSharing::Shared }
    }
    /// A cable of the fabric, `mult` parallel links merged (the dragonfly's). SimGrid creates
    /// them without a sharing policy: SHARED, whatever the cluster's `sharing_policy`.
    fn cable_info(&self, mult: f64) -> LinkInfo {
        LinkInfo { bandwidth: self.bw * mult, latency: self.lat, sharing: LinkSharing::Shared }
    }
    fn dir_suffix(&self, way: usize) -> &'static str {
        match (self.split, way) {
            (false, _) => "",
            (true, 0) => "_UP",
            (true, _) => "_DOWN",
        }
    }
    /// The host of an end point, or the error SimGrid's hierarchical clusters give: no router.
    fn host(&self, e: Endpoint, kind: &str) -> Result<usize> {
        match e {
            Endpoint::Host(h) if (h as usize) < self.n => Ok(h as usize),
            Endpoint::Host(h) => Err(err("route", format!("cluster {}: no host {h} (it has {})", self.id, self.n))),
            Endpoint::Gateway => Err(err(
                "route",
                format!("cluster {} ({kind}) has no router in SimGrid 3.32; route to one of its hosts instead", self.id),
            )),
        }
    }
}

fn finish(out: &mut [TopologyLink], start: usize, t: &dyn Topology) -> f64 {
    // SimGrid adds the latencies in route order (add_link_latency).
    out[start..].iter().fold(0.0, |acc, &l| acc + t.link(l).latency)
}

fn check_links(id: &str, count: u128) -> Result<usize> {
    if count > MAX_LINKS as u128 {
        return Err(err("topo_parameters", format!("cluster {id} would have {count} links, at most {MAX_LINKS} are allowed")));
    }
    Ok(count as usize)
}

/// Parse a comma-separated list of positive integers (one part of `topo_parameters`).
fn parse_list(text: &str, what: &str) -> Result<Vec<u64>> {
    text.split(',')
        .enumerate()
        .map(|(i, s)| {
            let v: u64 = s.trim().parse().map_err(|_| {
                err("topo_parameters", format!("{what}: `{}` (item {}) is not a whole number", s.trim(), i + 1))
            })?;
            if v == 0 {
                return Err(err("topo_parameters", format!("{what}: item {} is 0, every value must be > 0", i + 1)));
            }
            Ok(v)
        })
        .collect()
}

fn host_count_mismatch(c: &Common, kind: &str, wanted: u128, params: &str) -> Error {
    err(
        "radical",
        format!("cluster {} has {} hosts but its {kind} `{params}` has {wanted}; they must be equal", c.id, c.n),
    )
}

// ---------------------------------------------------------------------------------------
// FLAT

/// SimGrid's FLAT cluster (a StarZone): per host an optional loopback, an optional limiter
/// and its private link(s); an optional backbone; a router with an empty route of its own.
/// Links: [backbone] then per host [loopback][limiter][private UP, DOWN | private].
#[derive(Debug)]
pub struct Flat {
    c: Common,
    backbone: Option<LinkInfo>,
    stride: usize,
}

impl Flat {
    fn new(c: Common, p: &ClusterParams) -> Result<Self> {
        let backbone = match p.backbone {
            Some((bw, lat, sharing)) => {
                check_amount(ErrorKind::Platform, "bb_bw", bw, false)?;
                check_amount(ErrorKind::Platform, "bb_lat", lat, false)?;
                if bw > 0.0 || lat > 0.0 {
                    check_amount(ErrorKind::Platform, "bb_bw", bw, true)?;
                    Some(LinkInfo { bandwidth: bw, latency: lat, sharing })
                } else {
                    None
                }
            }
            None => None,
        };
        let stride = c.host_stride() + c.ways();
        check_links(&c.id, backbone.is_some() as u128 + (c.n as u128) * stride as u128)?;
        Ok(Flat { c, backbone, stride })
    }
    fn base(&self) -> usize {
        self.backbone.is_some() as usize
    }
    /// Host `h`'s private link, way 0 (UP) or 1 (DOWN).
    fn private(&self, h: usize, way: usize) -> TopologyLink {
        let w = if self.c.split { way } else { 0 };
        (self.base() + h * self.stride + self.c.host_stride() + w) as TopologyLink
    }
    fn up_links(&self, h: usize, out: &mut Vec<TopologyLink>) {
        out.extend(self.c.limiter_of(h, self.base(), self.stride));
        out.push(self.private(h, 0));
        if self.backbone.is_some() {
            out.push(0);
        }
    }
    fn down_links(&self, h: usize, out: &mut Vec<TopologyLink>) {
        if self.backbone.is_some() {
            out.push(0);
        }
        out.push(self.private(h, 1));
        out.extend(self.c.limiter_of(h, self.base(), self.stride));
    }
}

impl Topology for Flat {
    fn cluster_params(&self) -> Option<&ClusterParams> {
        Some(&self.c.params)
    }
    fn kind(&self) -> &'static str {
        "flat"
    }
    fn shape(&self) -> Option<Shape> {
        Some(self.c.shape(ShapeKind::Flat { backbone: self.backbone }))
    }
    fn host_count(&self) -> usize {
        self.c.n
    }
    fn link_count(&self) -> usize {
        self.base() + self.c.n * self.stride
    }
    fn link(&self, link: TopologyLink) -> LinkInfo {
        let l = link as usize;
        if l < self.base() {
            return self.backbone.unwrap_or(self.c.cable_info(1.0));
        }
        let k = (l - self.base()) % self.stride;
        let has_lb = self.c.loopback.is_some() as usize;
        if k < has_lb {
            self.c.loopback_info()
        } else if k < self.c.host_stride() {
            self.c.limiter_info()
        } else {
            self.c.cable_info(1.0)
        }
    }
    fn link_name(&self, link: TopologyLink) -> String {
        let l = link as usize;
        let id = &self.c.id;
        if l < self.base() {
            return format!("{id}_backbone");
        }
        let h = (l - self.base()) / self.stride;
        let k = (l - self.base()) % self.stride;
        let r = self.c.radical.number(h);
        let has_lb = self.c.loopback.is_some() as usize;
        if k < has_lb {
            format!("{id}_link_{r}_loopback")
        } else if k < self.c.host_stride() {
            format!("{id}_link_{r}_limiter")
        } else {
            format!("{id}_link_{r}{}", self.c.dir_suffix(k - self.c.host_stride()))
        }
    }
    fn private_links(&self, host: u32) -> Option<(TopologyLink, TopologyLink)> {
        let h = host as usize;
        (h < self.c.n).then(|| (self.private(h, 0), self.private(h, 1)))
    }
    fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64> {
        let start = out.len();
        let host = |e: Endpoint| match e {
            Endpoint::Host(h) if (h as usize) < self.c.n => Ok(Some(h as usize)),
            Endpoint::Host(h) => Err(err("route", format!("cluster {}: no host {h} (it has {})", self.c.id, self.c.n))),
            Endpoint::Gateway => Ok(None),
        };
        let (s, d) = (host(src)?, host(dst)?);
        if src == dst {
            if let Some(h) = s {
                out.extend(self.c.loopback_of(h, self.base(), self.stride));
            }
            return Ok(finish(out, start, self));
        }
        // StarZone::get_local_route: the source's UP list then the destination's DOWN list,
        // each link once (the backbone is in both). The router's lists are empty.
        if let Some(h) = s {
            self.up_links(h, out);
        }
        if let Some(h) = d {
            let mid = out.len();
            self.down_links(h, out);
            let mut w = mid;
            for i in mid..out.len() {
                let l = out[i];
                if !out[start..mid].contains(&l) {
                    out[w] = l;
                    w += 1;
                }
            }
            out.truncate(w);
        }
        Ok(finish(out, start, self))
    }
}

// ---------------------------------------------------------------------------------------
// TORUS

/// SimGrid's TORUS: per host [loopback][limiter] then, per dimension, the link to its next
/// neighbour (`{id}_link_from_{i}_to_{j}`, UP and DOWN when SPLITDUPLEX); dimension-order
/// routing, each dimension the shorter way with SimGrid's tie rule.
#[derive(Debug)]
pub struct Torus {
    c: Common,
    dims: Vec<u64>,
    stride: usize,
}

impl Torus {
    fn new(c: Common, params: &str) -> Result<Self> {
        let dims = parse_list(params, "torus dimensions")?;
        Self::from_dims(c, dims, params)
    }
    fn from_dims(c: Common, dims: Vec<u64>, params: &str) -> Result<Self> {
        if dims.len() > MAX_LEVELS {
            return Err(err("topo_parameters", format!("{} torus dimensions, at most {MAX_LEVELS} are allowed", dims.len())));
        }
        let total = dims.iter().fold(1u128, |a, &d| a.saturating_mul(d as u128));
        if total != c.n as u128 {
            return Err(host_count_mismatch(&c, "torus dimensions", total, params));
        }
        let stride = c.host_stride() + dims.len() * c.ways();
        check_links(&c.id, c.n as u128 * stride as u128)?;
        Ok(Torus { c, dims, stride })
    }
    /// The link of host `h` towards its next neighbour in dimension `j`, way 0 (UP) or 1.
    fn dim_link(&self, h: usize, j: usize, way: usize) -> TopologyLink {
        let w = if self.c.split { way } else { 0 };
        (h * self.stride + self.c.host_stride() + j * self.c.ways() + w) as TopologyLink
    }
    fn neighbour(&self, h: u64, j: usize) -> u64 {
        let dp: u64 = self.dims[..j].iter().product();
        let dj = self.dims[j];
        if (h / dp) % dj == dj - 1 { h - (dj - 1) * dp } else { h + dp }
    }
    /// The hops from node `s64` to `d64`, each the limiter of the node it leaves (if any)
    /// and the link; not the last node's limiter.
    fn leg(&self, s64: u64, d64: u64, out: &mut Vec<TopologyLink>) {
        // TorusZone::get_local_route: dimension by dimension; whether to go up (+1) is
        // decided from the source's coordinate in that dimension, with SimGrid's condition.
        let mut cur = s64;
        while cur != d64 {
            let mut dp = 1u64;
            let mut step = None;
            for (j, &dj) in self.dims.iter().enumerate() {
                let (mine, target, here) = ((s64 / dp) % dj, (d64 / dp) % dj, (cur / dp) % dj);
                if here != target {
                    let half = dj / 2;
                    let right = (target > mine && target <= mine + half) || (mine > half && (mine + half) % dj >= target);
                    step = Some(if right {
                        let next = if here == dj - 1 { cur + dp - dp * dj } else { cur + dp };
                        (next, self.dim_link(cur as usize, j, 0))
                    } else {
                        let next = if here == 0 { cur - dp + dp * dj } else { cur - dp };
                        (next, self.dim_link(next as usize, j, 1))
                    });
                    break;
                }
                dp *= dj;
            }
            let (next, link) = step.expect("coordinates differ somewhere while cur != dst");
            out.extend(self.c.limiter_of(cur as usize, 0, self.stride));
            out.push(link);
            cur = next;
        }
    }
}

impl Topology for Torus {
    fn cluster_params(&self) -> Option<&ClusterParams> {
        Some(&self.c.params)
    }
    fn kind(&self) -> &'static str {
        "torus"
    }
    fn shape(&self) -> Option<Shape> {
        Some(self.c.shape(ShapeKind::Torus { dims: self.dims.clone() }))
    }
    fn host_count(&self) -> usize {
        self.c.n
    }
    fn link_count(&self) -> usize {
        self.c.n * self.stride
    }
    fn link(&self, link: TopologyLink) -> LinkInfo {
        let k = link as usize % self.stride;
        if k < self.c.loopback.is_some() as usize {
            self.c.loopback_info()
        } else if k < self.c.host_stride() {
            self.c.limiter_info()
        } else {
            self.c.cable_info(1.0)
        }
    }
    fn link_name(&self, link: TopologyLink) -> String {
        let (h, k) = (link as usize / self.stride, link as usize % self.stride);
        let id = &self.c.id;
        if k < self.c.loopback.is_some() as usize {
            return format!("{id}_link_{}_loopback", self.c.radical.number(h));
        }
        if k < self.c.host_stride() {
            return format!("{id}_link_{h}_limiter");
        }
        let k = k - self.c.host_stride();
        let (j, way) = (k / self.c.ways(), k % self.c.ways());
        format!("{id}_link_from_{h}_to_{}{}", self.neighbour(h as u64, j), self.c.dir_suffix(way))
    }
    fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64> {
        let start = out.len();
        let (s, d) = (self.c.host(src, "TORUS")?, self.c.host(dst, "TORUS")?);
        if s == d {
            out.extend(self.c.loopback_of(s, 0, self.stride));
            return Ok(finish(out, start, self));
        }
        self.leg(s as u64, d as u64, out);
        out.extend(self.c.limiter_of(d, 0, self.stride));
        Ok(finish(out, start, self))
    }
    /// Valiant on a torus: dimension-order to a node drawn uniformly among all n (the source
    /// and the destination included, as Valiant draws), then dimension-order on.
    fn route_by(&self, routing: Routing, src: Endpoint, dst: Endpoint, state: &mut dyn RouteState, out: &mut Vec<TopologyLink>) -> Result<f64> {
        match routing {
            Routing::Minimal => return self.route(src, dst, out),
            Routing::Valiant => {}
            r => return Err(not_routed_here(r, self.kind())),
        }
        let start = out.len();
        let (s, d) = (self.c.host(src, "TORUS")?, self.c.host(dst, "TORUS")?);
        if s == d {
            return self.route(src, dst, out);
        }
        let mid = state.draw(self.c.n as u64);
        self.leg(s as u64, mid, out);
        self.leg(mid, d as u64, out);
        out.extend(self.c.limiter_of(d, 0, self.stride));
        Ok(finish(out, start, self))
    }
}

// ---------------------------------------------------------------------------------------
// FAT_TREE

/// SimGrid's FAT_TREE `L;d1,..,dL;u1,..,uL;c1,..,cL`: level-0 nodes are the hosts; a node
/// at level l has `d[l]` children and `u[l]` parents... (FatTreeZone.cpp). Labels are
/// mixed-radix digits (digit 0 fastest); a node of level l has digits `u[j]`-ary below l and
/// `d[j]`-ary from l. Links: per host [loopback][limiter], then one limiter per switch (in
/// SimGrid's creation order) if limiters are on, then the cables in SimGrid's creation
/// order (`link_from_{child}_{parent}_{n}`, UP and DOWN when SPLITDUPLEX).
#[derive(Debug)]
pub struct FatTree {
    c: Common,
    levels: usize,
    down: Vec<u64>,
    up: Vec<u64>,
    parallel: Vec<u64>,
    /// Number of switches before level l (l >= 1) in creation order.
    switches_before: Vec<u64>,
    /// First cable number of each level 0..L (cables from level l to l + 1).
    cable_base: Vec<u64>,
    cables: u64,
    switch_limiter_base: usize,
    cable_link_base: usize,
    /// SimGrid's link serial and host position at this cluster ([`SimgridCounters`]).
    serial_base: u64,
    position_base: u64,
}

/// A fat-tree node: its level and label digits.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Node {
    level: usize,
    label: [u64; MAX_LEVELS],
}

impl FatTree {
    fn new(c: Common, params: &str) -> Result<Self> {
        let parts: Vec<&str> = params.split(';').collect();
        if parts.len() != 4 {
            return Err(err(
                "topo_parameters",
                format!("a fat tree is `levels;down;up;parallel` (4 parts separated by `;`), got {} parts", parts.len()),
            ));
        }
        let levels: u64 = parts[0].trim().parse().map_err(|_| {
            err("topo_parameters", format!("the number of levels `{}` is not a whole number", parts[0].trim()))
        })?;
        let down = parse_list(parts[1], "fat tree down (children) counts")?;
        let up = parse_list(parts[2], "fat tree up (parents) counts")?;
        let parallel = parse_list(parts[3], "fat tree parallel cable counts")?;
        Self::from_lists(c, levels, down, up, parallel, params)
    }

    fn from_lists(c: Common, levels: u64, down: Vec<u64>, up: Vec<u64>, parallel: Vec<u64>, params: &str) -> Result<Self> {
        if levels == 0 {
            return Err(err("topo_parameters", "a fat tree needs at least 1 level, got 0"));
        }
        if levels as usize > MAX_LEVELS {
            return Err(err("topo_parameters", format!("{levels} fat tree levels, at most {MAX_LEVELS} are allowed")));
        }
        let l = levels as usize;
        for (what, v) in [("down (children)", &down), ("up (parents)", &up), ("parallel", &parallel)] {
            if v.len() != l {
                return Err(err(
                    "topo_parameters",
                    format!("the fat tree's {what} list has {} values for {levels} levels", v.len()),
                ));
            }
        }
        let hosts = down.iter().fold(1u128, |a, &d| a.saturating_mul(d as u128));
        if hosts != c.n as u128 {
            return Err(host_count_mismatch(&c, "fat tree", hosts, params));
        }
        let too_big = || err("topo_parameters", format!("fat tree `{params}` is too large (more than {MAX_LINKS} links)"));
        let mut by_level = vec![c.n as u64];
        for i in 0..l {
            let mut k: u128 = 1;
            for &x in up[..=i].iter().chain(&down[i + 1..]) {
                k = k.saturating_mul(x as u128);
            }
            if k > MAX_LINKS as u128 {
                return Err(too_big());
            }
            by_level.push(k as u64);
        }
        let mut switches_before = vec![0u64; l + 2];
        for lev in 2..=l + 1 {
            switches_before[lev] = switches_before[lev - 1] + by_level[lev - 1];
        }
        let switches = switches_before[l + 1];
        let mut cable_base = Vec::with_capacity(l + 1);
        let mut cables: u128 = 0;
        for i in 0..l {
            cable_base.push(cables as u64);
            cables += by_level[i] as u128 * up[i] as u128 * parallel[i] as u128;
            if cables > MAX_LINKS as u128 {
                return Err(too_big());
            }
        }
        // Switch limiters are named after the switch ids, 2n - 1 counting down: with more
        // switches than hosts they take the names of host limiters, and SimGrid 3.32 stops
        // ("Link ... declared several times").
        if c.limiter.is_some() && switches > c.n as u64 {
            return Err(err(
                "limiter_link",
                format!(
                    "fat tree `{params}` has {switches} switches for {} hosts: SimGrid 3.32 names switch limiters after switch ids, which then collide with host limiters; it refuses this platform",
                    c.n
                ),
            ));
        }
        let host_links = c.n as u128 * c.host_stride() as u128;
        let switch_limiters = if c.limiter.is_some() { switches as u128 } else { 0 };
        check_links(&c.id, host_links + switch_limiters + cables * c.ways() as u128)?;
        Ok(FatTree {
            switch_limiter_base: host_links as usize,
            cable_link_base: (host_links + switch_limiters) as usize,
            c,
            levels: l,
            down,
            up,
            parallel,
            switches_before,
            cable_base,
            cables: cables as u64,
            serial_base: 0,
            position_base: 0,
        })
    }

    /// Radix of digit `j` for a node of level `level`.
    fn radix(&self, level: usize, j: usize) -> u64 {
        if j < level { self.up[j] } else { self.down[j] }
    }
    fn node(&self, level: usize, mut pos: u64) -> Node {
        let mut label = [0u64; MAX_LEVELS];
        for (j, digit) in label.iter_mut().enumerate().take(self.levels) {
            let r = self.radix(level, j);
            *digit = pos % r;
            pos /= r;
        }
        Node { level, label }
    }
    fn position(&self, n: &Node) -> u64 {
        (0..self.levels).rev().fold(0, |acc, j| acc * self.radix(n.level, j) + n.label[j])
    }
    /// SimGrid's id of a node: hosts 0..n, switches counting down from 2n - 1.
    fn node_id(&self, n: &Node) -> u64 {
        if n.level == 0 {
            self.position(n)
        } else {
            2 * self.c.n as u64 - 1 - self.switches_before[n.level] - self.position(n)
        }
    }
    /// The limiter link of a node, if limiters are on.
    fn limiter(&self, n: &Node) -> Option<TopologyLink> {
        self.c.limiter?;
        if n.level == 0 {
            return self.c.limiter_of(self.position(n) as usize, 0, self.c.host_stride());
        }
        Some((self.switch_limiter_base as u64 + self.switches_before[n.level] + self.position(n)) as TopologyLink)
    }
    /// The cable number of `child`'s `cable`-th link to its parent whose digit
    /// `child.level` is `parent_digit`.
    fn cable(&self, child: &Node, parent_digit: u64, cable: u64) -> u64 {
        let l = child.level;
        self.cable_base[l] + self.position(child) * self.up[l] * self.parallel[l] + parent_digit * self.parallel[l] + cable
    }
    fn cable_link(&self, cable: u64, way: usize) -> TopologyLink {
        let w = if self.c.split { way } else { 0 };
        (self.cable_link_base as u64 + cable * self.c.ways() as u64 + w as u64) as TopologyLink
    }
    /// FatTreeZone::is_in_sub_tree(root, host): the digits from root's level on agree.
    fn contains(&self, root: &Node, host: &Node) -> bool {
        root.level > host.level && (root.level..self.levels).all(|j| root.label[j] == host.label[j])
    }
}

impl Topology for FatTree {
    fn cluster_params(&self) -> Option<&ClusterParams> {
        Some(&self.c.params)
    }
    fn kind(&self) -> &'static str {
        "fat_tree"
    }
    fn shape(&self) -> Option<Shape> {
        Some(self.c.shape(ShapeKind::FatTree { down: self.down.clone(), up: self.up.clone(), parallel: self.parallel.clone() }))
    }
    fn host_count(&self) -> usize {
        self.c.n
    }
    fn link_count(&self) -> usize {
        self.cable_link_base + self.cables as usize * self.c.ways()
    }
    fn link(&self, link: TopologyLink) -> LinkInfo {
        let l = link as usize;
        if l >= self.cable_link_base {
            self.c.cable_info(1.0)
        } else if l >= self.switch_limiter_base {
            self.c.limiter_info()
        } else if l % self.c.host_stride() < self.c.loopback.is_some() as usize {
            self.c.loopback_info()
        } else {
            self.c.limiter_info()
        }
    }
    fn link_name(&self, link: TopologyLink) -> String {
        let l = link as usize;
        let id = &self.c.id;
        if l < self.switch_limiter_base {
            let (h, k) = (l / self.c.host_stride(), l % self.c.host_stride());
            return if k < self.c.loopback.is_some() as usize {
                format!("{id}_link_{}_loopback", self.c.radical.number(h))
            } else {
                format!("{id}_link_{h}_limiter")
            };
        }
        if l < self.cable_link_base {
            // Switch limiters are named after the switch's id (2n - 1 counting down).
            let k = (l - self.switch_limiter_base) as u64;
            return format!("{id}_link_{}_limiter", 2 * self.c.n as u64 - 1 - k);
        }
        let k = (l - self.cable_link_base) as u64;
        let (cable, way) = (k / self.c.ways() as u64, (k % self.c.ways() as u64) as usize);
        let lev = self.cable_base.partition_point(|&b| b <= cable) - 1;
        let rest = cable - self.cable_base[lev];
        let per_child = self.up[lev] * self.parallel[lev];
        let (pos, digit) = (rest / per_child, (rest % per_child) / self.parallel[lev]);
        let child = self.node(lev, pos);
        let mut parent = child;
        parent.level = lev + 1;
        parent.label[lev] = digit;
        let serial = self.serial_base + cable;
        format!("link_from_{}_{}_{}{}", self.node_id(&child), self.node_id(&parent), serial, self.c.dir_suffix(way))
    }
    /// The host's cable to its leaf switch, when it has only one (one parent and no
    /// parallel cables at level 0).
    fn private_links(&self, host: u32) -> Option<(TopologyLink, TopologyLink)> {
        if host as usize >= self.c.n || self.up[0] * self.parallel[0] != 1 {
            return None;
        }
        let cable = self.cable(&self.node(0, host as u64), 0, 0);
        Some((self.cable_link(cable, 0), self.cable_link(cable, 1)))
    }
    fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64> {
        self.route_choosing(src, dst, out, |_, _, _, k| k)
    }
    /// ECMP hashes the flow at each level; adaptive takes the up-link with the fewest flows,
    /// looking from SimGrid's d-mod-k choice on (so an idle fabric routes as SimGrid does).
    fn route_by(&self, routing: Routing, src: Endpoint, dst: Endpoint, state: &mut dyn RouteState, out: &mut Vec<TopologyLink>) -> Result<f64> {
        match routing {
            Routing::Minimal => self.route(src, dst, out),
            Routing::Ecmp => self.route_choosing(src, dst, out, |level, options, _, _| state.flow_hash(level as u64) % options),
            Routing::Adaptive => self.route_choosing(src, dst, out, |_, options, up_link, k| {
                (0..options).map(|i| (k + i) % options).min_by_key(|&o| state.flows_on(up_link(o))).unwrap_or(k)
            }),
            r => Err(not_routed_here(r, self.kind())),
        }
    }
}

impl FatTree {
    /// The route with the up-link at each level picked by `pick(level, options, up_link, k)`:
    /// among `options` (parents × parallel cables, option o being parent o % up and cable
    /// o / up; `up_link(o)` its link), given SimGrid's choice `k`.
    fn route_choosing(
        &self,
        src: Endpoint,
        dst: Endpoint,
        out: &mut Vec<TopologyLink>,
        mut pick: impl FnMut(usize, u64, &dyn Fn(u64) -> TopologyLink, u64) -> u64,
    ) -> Result<f64> {
        let start = out.len();
        let (s, d) = (self.c.host(src, "FAT_TREE")?, self.c.host(dst, "FAT_TREE")?);
        if s == d {
            out.extend(self.c.loopback_of(s, 0, self.c.host_stride()));
            return Ok(finish(out, start, self));
        }
        let (source, dest) = (self.node(0, s as u64), self.node(0, d as u64));
        let mut cur = source;
        // Up: d-mod-k on the destination's position (SimGrid's, which runs on from the
        // fat trees before this one in the file), unless `pick` chooses otherwise.
        while !self.contains(&cur, &dest) {
            let l = cur.level;
            let mut k = self.position_base + d as u64;
            for i in 0..l {
                k /= self.up[i];
            }
            let options = self.up[l] * self.parallel[l];
            k %= options;
            let here = cur;
            let up_link = |o: u64| self.cable_link(self.cable(&here, o % self.up[l], o / self.up[l]), 0);
            let k = pick(l, options, &up_link, k);
            let (digit, cable) = (k % self.up[l], k / self.up[l]);
            out.extend(self.limiter(&cur));
            out.push(self.cable_link(self.cable(&cur, digit, cable), 0));
            cur.level = l + 1;
            cur.label[l] = digit;
        }
        // Down: FatTreeZone's loop, kept as it is written: the scan over a switch's children
        // starts at the source's cable and, after a hop, goes on over the next switch's
        // children from where it was.
        while cur != dest {
            let l = cur.level;
            let mut i = ((self.position_base + s as u64) % self.parallel[l - 1]) * self.down[l - 1];
            while cur.level > 0 && i < self.down[cur.level - 1] * self.parallel[cur.level - 1] {
                let lv = cur.level - 1;
                if i % self.down[lv] == dest.label[lv] {
                    let mut child = cur;
                    child.level = lv;
                    child.label[lv] = i % self.down[lv];
                    out.push(self.cable_link(self.cable(&child, cur.label[lv], i / self.down[lv]), 1));
                    out.extend(self.limiter(&cur));
                    cur = child;
                }
                i += 1;
            }
        }
        out.extend(self.limiter(&dest));
        Ok(finish(out, start, self))
    }
}

// ---------------------------------------------------------------------------------------
// DRAGONFLY

/// SimGrid's DRAGONFLY `G,blue;C,black;R,green;N`: G groups of C chassis of R routers
/// (blades) of N hosts. Links: per host [loopback][limiter], then one limiter per router if
/// limiters are on, then SimGrid's links in its creation order: local (router-host), green
/// (routers of a chassis, all to all), black (same blade of the chassis of a group, all to
/// all), blue (router g of group i to router i of group g); parallel links merged into one
/// of multiplied bandwidth.
#[derive(Debug)]
pub struct Dragonfly {
    c: Common,
    groups: u64,
    chassis: u64,
    blades: u64,
    nodes: u64,
    /// Parallel links of the blue, black and green levels.
    blue: u64,
    black: u64,
    green: u64,
    pub routing: DragonflyRouting,
    router_limiter_base: usize,
    cable_link_base: usize,
    green_base: u64,
    black_base: u64,
    blue_base: u64,
    cables: u64,
    /// SimGrid's link serial at this cluster ([`SimgridCounters`]).
    serial_base: u64,
}

/// A dragonfly router: group, chassis, blade.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Router {
    g: u64,
    c: u64,
    b: u64,
}

fn pair_index(n: u64, j: u64, k: u64) -> u64 {
    // Index of the pair j < k among the pairs of 0..n in (j, k) lexicographic order.
    j * n - j * (j + 1) / 2 + (k - j - 1)
}

fn pair_of(n: u64, mut idx: u64) -> (u64, u64) {
    let mut j = 0;
    while idx >= n - j - 1 {
        idx -= n - j - 1;
        j += 1;
    }
    (j, j + 1 + idx)
}

impl Dragonfly {
    fn new(c: Common, params: &str, routing: DragonflyRouting) -> Result<Self> {
        let parts: Vec<&str> = params.split(';').collect();
        if parts.len() != 4 {
            return Err(err(
                "topo_parameters",
                format!("a dragonfly is `groups,blue;chassis,black;routers,green;nodes` (4 parts separated by `;`), got {} parts", parts.len()),
            ));
        }
        let pair = |i: usize, what: &str| -> Result<(u64, u64)> {
            let v = parse_list(parts[i], what)?;
            if v.len() != 2 {
                return Err(err("topo_parameters", format!("{what}: expected 2 values (count,links), got {}", v.len())));
            }
            Ok((v[0], v[1]))
        };
        let (g, blue) = pair(0, "dragonfly groups")?;
        let (ch, black) = pair(1, "dragonfly chassis")?;
        let (r, green) = pair(2, "dragonfly routers")?;
        let n = parse_list(parts[3], "dragonfly nodes per router")?;
        if n.len() != 1 {
            return Err(err("topo_parameters", format!("dragonfly nodes per router: expected 1 value, got {}", n.len())));
        }
        Self::from_counts(c, [g, blue, ch, black, r, green, n[0]], routing, params)
    }

    fn from_counts(c: Common, v: [u64; 7], routing: DragonflyRouting, params: &str) -> Result<Self> {
        let [g, blue, ch, black, r, green, n] = v;
        let hosts = [g, ch, r, n].iter().fold(1u128, |a, &x| a.saturating_mul(x as u128));
        if hosts != c.n as u128 {
            return Err(host_count_mismatch(&c, "dragonfly", hosts, params));
        }
        // Router i of a group carries the blue link to group i (DragonflyZone::generate_links).
        if g > ch * r {
            return Err(err(
                "topo_parameters",
                format!("dragonfly `{params}`: {g} groups but {} routers per group; each group needs a router per other group", ch * r),
            ));
        }
        if routing == DragonflyRouting::Simgrid && g > r {
            return Err(err(
                "topo_parameters",
                format!(
                    "dragonfly `{params}`: SimGrid 3.32 routes between groups only when groups ({g}) <= routers per chassis ({r}) (beyond, it reads past an array); use the minimal routing"
                ),
            ));
        }
        let routers = g * ch * r;
        let local = routers * n;
        let greens = g * ch * (r * (r - 1) / 2);
        let blacks = g * (ch * (ch - 1) / 2) * r;
        let blues = g * (g - 1) / 2;
        let cables = local + greens + blacks + blues;
        let host_links = c.n * c.host_stride();
        let router_limiters = if c.limiter.is_some() { routers as usize } else { 0 };
        check_links(&c.id, host_links as u128 + router_limiters as u128 + cables as u128 * c.ways() as u128)?;
        Ok(Dragonfly {
            router_limiter_base: host_links,
            cable_link_base: host_links + router_limiters,
            c,
            groups: g,
            chassis: ch,
            blades: r,
            nodes: n,
            blue,
            black,
            green,
            routing,
            green_base: local,
            black_base: local + greens,
            blue_base: local + greens + blacks,
            cables,
            serial_base: 0,
        })
    }

    fn router_index(&self, x: Router) -> u64 {
        (x.g * self.chassis + x.c) * self.blades + x.b
    }
    fn router(&self, idx: u64) -> Router {
        Router { g: idx / (self.chassis * self.blades), c: (idx / self.blades) % self.chassis, b: idx % self.blades }
    }
    /// Router `idx`-th of group `g` (the one carrying the blue link to group `idx`).
    fn in_group(&self, g: u64, idx: u64) -> Router {
        Router { g, c: idx / self.blades, b: idx % self.blades }
    }
    fn link_of(&self, cable: u64, way: usize) -> TopologyLink {
        let w = if self.c.split { way } else { 0 };
        (self.cable_link_base as u64 + cable * self.c.ways() as u64 + w as u64) as TopologyLink
    }
    fn limiter(&self, x: Router) -> Option<TopologyLink> {
        self.c.limiter.map(|_| (self.router_limiter_base as u64 + self.router_index(x)) as TopologyLink)
    }
    fn local(&self, x: Router, node: u64, way: usize) -> TopologyLink {
        self.link_of(self.router_index(x) * self.nodes + node, way)
    }
    /// `green_links_[to]` of router `x`: to the router of blade `to` in its chassis.
    fn green_hop(&self, x: Router, to: u64) -> TopologyLink {
        let (lo, hi, way) = if x.b < to { (x.b, to, 0) } else { (to, x.b, 1) };
        let chassis = x.g * self.chassis + x.c;
        let idx = chassis * (self.blades * (self.blades - 1) / 2) + pair_index(self.blades, lo, hi);
        self.link_of(self.green_base + idx, way)
    }
    /// `black_links_[to]` of router `x`: to the router of its blade in chassis `to`.
    fn black_hop(&self, x: Router, to: u64) -> TopologyLink {
        let (lo, hi, way) = if x.c < to { (x.c, to, 0) } else { (to, x.c, 1) };
        let per_group = self.chassis * (self.chassis - 1) / 2 * self.blades;
        let idx = x.g * per_group + pair_index(self.chassis, lo, hi) * self.blades + x.b;
        self.link_of(self.black_base + idx, way)
    }
    /// `blue_link_` of the router `idx`-th of group `g`: to group `idx`.
    fn blue_hop(&self, g: u64, idx: u64) -> TopologyLink {
        let (lo, hi, way) = if g < idx { (g, idx, 0) } else { (idx, g, 1) };
        self.link_of(self.blue_base + pair_index(self.groups, lo, hi), way)
    }

    fn route_routers(&self, routing: DragonflyRouting, my: Router, target: Router, out: &mut Vec<TopologyLink>) {
        let limiter = |x: Router, out: &mut Vec<TopologyLink>| out.extend(self.limiter(x));
        match routing {
            DragonflyRouting::Simgrid => {
                // DragonflyZone::get_local_route as SimGrid 3.32 writes it.
                let mut cur = my;
                if target.g != cur.g {
                    if cur.b != target.g {
                        limiter(cur, out);
                        out.push(self.green_hop(cur, target.g));
                        cur = Router { g: my.g, c: my.c, b: target.g };
                    }
                    if cur.c != 0 {
                        limiter(cur, out);
                        out.push(self.black_hop(cur, 0));
                        cur = self.in_group(my.g, target.g);
                    }
                    out.push(self.blue_hop(cur.g, self.router_index(cur) % (self.chassis * self.blades)));
                    limiter(cur, out);
                    cur = self.in_group(target.g, my.g);
                }
                if target.b != cur.b {
                    limiter(cur, out);
                    out.push(self.green_hop(cur, target.b));
                    // The quirk: SimGrid carries on from chassis 0 of the target group.
                    cur = Router { g: target.g, c: 0, b: target.b };
                }
                if target.c != cur.c {
                    limiter(cur, out);
                    out.push(self.black_hop(cur, target.c));
                }
            }
            DragonflyRouting::Minimal => {
                let mut cur = my;
                let within = |cur: &mut Router, to: Router, out: &mut Vec<TopologyLink>| {
                    if to.b != cur.b {
                        limiter(*cur, out);
                        out.push(self.green_hop(*cur, to.b));
                        cur.b = to.b;
                    }
                    if to.c != cur.c {
                        limiter(*cur, out);
                        out.push(self.black_hop(*cur, to.c));
                        cur.c = to.c;
                    }
                };
                if target.g != cur.g {
                    let gate = self.in_group(my.g, target.g);
                    within(&mut cur, gate, out);
                    out.push(self.blue_hop(my.g, target.g));
                    limiter(cur, out);
                    cur = self.in_group(target.g, my.g);
                }
                within(&mut cur, target, out);
            }
        }
    }
}

impl Topology for Dragonfly {
    fn cluster_params(&self) -> Option<&ClusterParams> {
        Some(&self.c.params)
    }
    /// Router pairs along the minimal routing, each carrying its N × N host pairs' bytes (a
    /// valid path for every pair whatever `routing` is: SimGrid's chassis quirk can skip a
    /// hop); each host's private link carries its n − 1 sends and n − 1 receives. Without
    /// limiters only (they would need their own loads). Loads are per direction: a SHARED
    /// link's figure is its busier direction, since the bytes crossing a cut one way form a
    /// single flow that may cancel opposite bytes on an undirected link (so the loads are
    /// counted on this dragonfly's SPLITDUPLEX twin).
    fn uniform_congestion(&self) -> Option<f64> {
        let routers = self.groups * self.chassis * self.blades;
        if self.c.limiter.is_some() || routers > super::summary::CONGESTION_ROUTER_LIMIT {
            return None;
        }
        if !self.c.split {
            let p = ClusterParams { sharing: ClusterLinkSharing::Splitduplex, ..self.c.params.clone() };
            let counts = [self.groups, self.blue, self.chassis, self.black, self.blades, self.green, self.nodes];
            let twin = Dragonfly::from_counts(Common::new(&p).ok()?, counts, DragonflyRouting::Minimal, "").ok()?;
            return twin.uniform_congestion();
        }
        let mut load = vec![0.0f64; self.link_count()];
        let per_pair = (self.nodes * self.nodes) as f64;
        let mut path = Vec::new();
        for a in 0..routers {
            for b in (0..routers).filter(|&b| b != a) {
                path.clear();
                self.route_routers(DragonflyRouting::Minimal, self.router(a), self.router(b), &mut path);
                for &l in &path {
                    load[l as usize] += per_pair;
                }
            }
        }
        let others = (self.c.n - 1) as f64;
        for host in 0..self.c.n as u32 {
            let (up, down) = self.private_links(host)?;
            load[up as usize] += others;
            load[down as usize] += others;
        }
        let shared = |l: usize| self.link(l as TopologyLink).sharing == LinkSharing::Shared;
        Some((0..load.len()).filter(|&l| load[l] > 0.0 && shared(l)).map(|l| load[l] / self.link(l as TopologyLink).bandwidth).fold(0.0, f64::max))
    }
    fn kind(&self) -> &'static str {
        "dragonfly"
    }
    fn shape(&self) -> Option<Shape> {
        Some(self.c.shape(ShapeKind::Dragonfly {
            groups: (self.groups, self.blue),
            chassis: (self.chassis, self.black),
            routers: (self.blades, self.green),
            nodes: self.nodes,
        }))
    }
    fn host_count(&self) -> usize {
        self.c.n
    }
    fn link_count(&self) -> usize {
        self.cable_link_base + self.cables as usize * self.c.ways()
    }
    fn link(&self, link: TopologyLink) -> LinkInfo {
        let l = link as usize;
        if l < self.router_limiter_base {
            return if l % self.c.host_stride() < self.c.loopback.is_some() as usize {
                self.c.loopback_info()
            } else {
                self.c.limiter_info()
            };
        }
        if l < self.cable_link_base {
            return self.c.limiter_info();
        }
        let cable = (l - self.cable_link_base) as u64 / self.c.ways() as u64;
        let mult = if cable < self.green_base {
            1
        } else if cable < self.black_base {
            self.green
        } else if cable < self.blue_base {
            self.black
        } else {
            self.blue
        };
        self.c.cable_info(mult as f64)
    }
    fn link_name(&self, link: TopologyLink) -> String {
        let l = link as usize;
        let id = &self.c.id;
        if l < self.router_limiter_base {
            let (h, k) = (l / self.c.host_stride(), l % self.c.host_stride());
            return if k < self.c.loopback.is_some() as usize {
                format!("{id}_link_{}_loopback", self.c.radical.number(h))
            } else {
                format!("{id}_link_{h}_limiter")
            };
        }
        if l < self.cable_link_base {
            // Router limiters count down from 2n - 1 (DragonflyZone::generate_routers).
            let r = (l - self.router_limiter_base) as u64;
            return format!("{id}_link_{}_limiter", 2 * self.c.n as u64 - 1 - r);
        }
        let k = (l - self.cable_link_base) as u64;
        let (cable, way) = (k / self.c.ways() as u64, (k % self.c.ways() as u64) as usize);
        let sfx = self.c.dir_suffix(way);
        let uid = self.serial_base + cable;
        if cable < self.green_base {
            return format!("local_link_from_router_{}_to_node_{}_{uid}{sfx}", cable / self.nodes, cable % self.nodes);
        }
        if cable < self.black_base {
            let per = self.blades * (self.blades - 1) / 2;
            let rest = cable - self.green_base;
            let (j, k) = pair_of(self.blades, rest % per);
            return format!("green_link_in_chassis_{}_between_routers_{j}_and_{k}_{uid}{sfx}", (rest / per) % self.chassis);
        }
        if cable < self.blue_base {
            let per = self.chassis * (self.chassis - 1) / 2 * self.blades;
            let rest = cable - self.black_base;
            let (g, within) = (rest / per, rest % per);
            let (j, k) = pair_of(self.chassis, within / self.blades);
            return format!("black_link_in_group_{g}_between_chassis_{j}_and_{k}_blade_{}_{uid}{sfx}", within % self.blades);
        }
        let (i, j) = pair_of(self.groups, cable - self.blue_base);
        let rc = self.blades * self.chassis;
        format!("blue_link_between_group_{i}_and_{j}_routers_{}_and_{}_{uid}{sfx}", i * rc + j, j * rc + i)
    }
    /// The host's link to its router.
    fn private_links(&self, host: u32) -> Option<(TopologyLink, TopologyLink)> {
        if host as usize >= self.c.n {
            return None;
        }
        let (x, k) = (self.router(host as u64 / self.nodes), host as u64 % self.nodes);
        Some((self.local(x, k, 0), self.local(x, k, 1)))
    }
    fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64> {
        let start = out.len();
        let (s, d) = (self.c.host(src, "DRAGONFLY")?, self.c.host(dst, "DRAGONFLY")?);
        let stride = self.c.host_stride();
        if s == d {
            out.extend(self.c.loopback_of(s, 0, stride));
            return Ok(finish(out, start, self));
        }
        let (my, target) = (self.router(s as u64 / self.nodes), self.router(d as u64 / self.nodes));
        self.host_side(s, my, 0, out);
        if my != target {
            self.route_routers(self.routing, my, target, out);
        }
        self.host_side(d, target, 1, out);
        Ok(finish(out, start, self))
    }
    /// Valiant (Kim et al., ISCA 2008, "VAL") between routers of different groups: a minimal
    /// route to a router drawn among the routers of the groups other than the source's and
    /// the destination's, then a minimal route on; within a group, or with fewer than 3
    /// groups, the minimal route. UGAL takes the minimal or that Valiant candidate, whichever
    /// costs less ([`ugal_cost`]; the hops are the cables crossed, host links included): over
    /// every link of the candidate (UGAL-G), or over the source router's link on it (UGAL-L,
    /// the first router-to-router link). The legs route minimally (not SimGrid's quirk).
    fn route_by(&self, routing: Routing, src: Endpoint, dst: Endpoint, state: &mut dyn RouteState, out: &mut Vec<TopologyLink>) -> Result<f64> {
        match routing {
            Routing::Minimal => return self.route(src, dst, out),
            Routing::Valiant | Routing::UgalG | Routing::UgalL => {}
            r => return Err(not_routed_here(r, self.kind())),
        }
        let start = out.len();
        let (s, d) = (self.c.host(src, "DRAGONFLY")?, self.c.host(dst, "DRAGONFLY")?);
        if s == d {
            return self.route(src, dst, out);
        }
        let (my, target) = (self.router(s as u64 / self.nodes), self.router(d as u64 / self.nodes));
        self.host_side(s, my, 0, out);
        if my.g == target.g || self.groups < 3 {
            if my != target {
                self.route_routers(DragonflyRouting::Minimal, my, target, out);
            }
        } else {
            let per_group = self.chassis * self.blades;
            let mut g = state.draw(self.groups - 2);
            for skipped in [my.g.min(target.g), my.g.max(target.g)] {
                g += (g >= skipped) as u64;
            }
            let mid = self.router(g * per_group + state.draw(per_group));
            if routing == Routing::Valiant {
                self.route_routers(DragonflyRouting::Minimal, my, mid, out);
                self.route_routers(DragonflyRouting::Minimal, mid, target, out);
            } else {
                // The minimal candidate goes into `out`, the Valiant one beside it.
                let mark = out.len();
                self.route_routers(DragonflyRouting::Minimal, my, target, out);
                let mut valiant = Vec::with_capacity(24);
                self.route_routers(DragonflyRouting::Minimal, my, mid, &mut valiant);
                self.route_routers(DragonflyRouting::Minimal, mid, target, &mut valiant);
                let cost = |route: &[TopologyLink]| {
                    let cables = route.iter().filter(|&&l| l as usize >= self.cable_link_base).count() + 2;
                    let load = |l: TopologyLink| (state.flows_on(l), self.link(l).bandwidth);
                    if routing == Routing::UgalG {
                        ugal_cost(cables, route.iter().map(|&l| load(l)))
                    } else {
                        ugal_cost(cables, route.iter().copied().find(|&l| self.is_router_cable(l)).map(load).into_iter())
                    }
                };
                if cost(&valiant) < cost(&out[mark..]) {
                    out.truncate(mark);
                    out.extend(valiant);
                }
            }
        }
        self.host_side(d, target, 1, out);
        Ok(finish(out, start, self))
    }
}

impl Dragonfly {
    /// The links between host `h` and its router `x`: way 0 from the host (its limiter, then
    /// its local link), way 1 to it (the router's limiter, the local link, the host's limiter).
    fn host_side(&self, h: usize, x: Router, way: usize, out: &mut Vec<TopologyLink>) {
        let stride = self.c.host_stride();
        if way == 0 {
            out.extend(self.c.limiter_of(h, 0, stride));
            out.push(self.local(x, h as u64 % self.nodes, 0));
        } else {
            out.extend(self.limiter(x));
            out.push(self.local(x, h as u64 % self.nodes, 1));
            out.extend(self.c.limiter_of(h, 0, stride));
        }
    }
    /// Is `link` a cable between two routers (green, black or blue)?
    fn is_router_cable(&self, link: TopologyLink) -> bool {
        let l = link as usize;
        l >= self.cable_link_base && (l - self.cable_link_base) as u64 / self.c.ways() as u64 >= self.green_base
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod routing_tests;
