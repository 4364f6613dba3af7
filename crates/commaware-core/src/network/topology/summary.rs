//! What `commaware platform show` tells about a fabric: its links by sharing policy, its
//! total bandwidth, its diameter in hops and its bisection bandwidth where a closed form is
//! known. Definitions (docs/topologies.md, "platform show"):
//!
//! - **diameter**: the most links on the route between two different hosts, routes as the
//!   topology gives them (SimGrid's routing, limiters and backbone included; loopbacks are
//!   never on such a route). Closed forms for FLAT, TORUS and FAT_TREE; otherwise (and in
//!   the tests, to check the closed forms) the maximum over every ordered pair's route,
//!   computed only up to [`DIAMETER_ROUTE_LIMIT`] hosts.
//! - **total bandwidth**: the sum of every link's bandwidth (each of a SPLITDUPLEX pair
//!   counts; loopbacks and limiters too).
//! - **bisection bandwidth**: over every split of the hosts into halves of ⌊n/2⌋ and ⌈n/2⌉,
//!   the smallest total bandwidth of SHARED links one direction of traffic from one half to
//!   the other must cross (a minimum cut); derived below for the star, FLAT, TORUS, FAT_TREE
//!   and DRAGONFLY, each where its conditions hold.

use super::{Endpoint, LinkInfo, LinkSharing, Topology};

/// Above this many routers a dragonfly's [`Topology::uniform_congestion`] is not computed
/// (a route per ordered router pair: 16.8 million at this size).
pub const CONGESTION_ROUTER_LIMIT: u64 = 4096;

/// Above this many hosts the diameter of a topology without a closed form is not computed
/// (every ordered pair's route: about a million routes at this size).
pub const DIAMETER_ROUTE_LIMIT: usize = 1024;

/// A SimGrid cluster's kind and parameters, as the built topology holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub kind: ShapeKind,
    /// Bandwidth of the private links and cables (bytes/s).
    pub bandwidth: f64,
    /// Private links are SPLITDUPLEX (an UP and a DOWN link).
    pub split: bool,
    /// `limiter_link` bandwidth, if limiters are on.
    pub limiter: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ShapeKind {
    Flat { backbone: Option<LinkInfo> },
    Torus { dims: Vec<u64> },
    FatTree { down: Vec<u64>, up: Vec<u64>, parallel: Vec<u64> },
    /// (count, parallel links) of groups (blue), chassis (black), routers (green); hosts per router.
    Dragonfly { groups: (u64, u64), chassis: (u64, u64), routers: (u64, u64), nodes: u64 },
}

fn join(v: &[u64], sep: &str) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(sep)
}

impl Shape {
    /// SimGrid's `topology` attribute and `topo_parameters` string for this cluster.
    pub fn simgrid(&self) -> (&'static str, String) {
        match &self.kind {
            ShapeKind::Flat { .. } => ("FLAT", String::new()),
            ShapeKind::Torus { dims } => ("TORUS", join(dims, ",")),
            ShapeKind::FatTree { down, up, parallel } => {
                ("FAT_TREE", format!("{};{};{};{}", down.len(), join(down, ","), join(up, ","), join(parallel, ",")))
            }
            ShapeKind::Dragonfly { groups, chassis, routers, nodes } => (
                "DRAGONFLY",
                format!("{},{};{},{};{},{};{nodes}", groups.0, groups.1, chassis.0, chassis.1, routers.0, routers.1),
            ),
        }
    }
}

/// A number with how it was found, or why it is not given.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure<T> {
    pub value: Option<T>,
    /// `closed form`, `all routes`, or the reason there is no value.
    pub how: String,
}

impl<T> Figure<T> {
    fn known(value: T, how: &str) -> Self {
        Figure { value: Some(value), how: how.to_string() }
    }
    fn none(why: impl Into<String>) -> Self {
        Figure { value: None, how: why.into() }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `star` (a platform without a topology), or the topology's kind.
    pub kind: String,
    pub shape: Option<Shape>,
    pub zones: usize,
    pub hosts: usize,
    pub links: usize,
    pub shared_links: usize,
    pub fatpipe_links: usize,
    /// Bytes/s.
    pub total_bandwidth: f64,
    pub diameter_hops: Figure<u64>,
    /// Bytes/s.
    pub bisection_bandwidth: Figure<f64>,
}

/// The summary of a built topology.
pub fn summarize(t: &dyn Topology) -> Summary {
    let (mut shared, mut fatpipe, mut total) = (0, 0, 0.0);
    for l in 0..t.link_count() as u32 {
        let info = t.link(l);
        match info.sharing {
            LinkSharing::Shared => shared += 1,
            LinkSharing::Fatpipe => fatpipe += 1,
        }
        total += info.bandwidth;
    }
    let shape = t.shape();
    let n = t.host_count();
    let diameter = match shape.as_ref().and_then(|s| diameter_closed_form(s, n)) {
        Some(d) => Figure::known(d, "closed form"),
        None if n <= DIAMETER_ROUTE_LIMIT => match diameter_by_routes(t) {
            Ok(d) => Figure::known(d, "all routes"),
            Err(e) => Figure::none(format!("not computed: {e}")),
        },
        None => Figure::none(format!("not computed: more than {DIAMETER_ROUTE_LIMIT} hosts and no closed form")),
    };
    let bisection = match &shape {
        Some(s) => bisection_closed_form(t, s, n),
        None => Figure::none("not defined for graphs"),
    };
    Summary {
        kind: t.kind().to_string(),
        shape,
        zones: t.zone_count(),
        hosts: n,
        links: t.link_count(),
        shared_links: shared,
        fatpipe_links: fatpipe,
        total_bandwidth: total,
        diameter_hops: diameter,
        bisection_bandwidth: bisection,
    }
}

/// The summary of a star platform (no topology): an UP and a DOWN NIC link per host
/// (bandwidths `up[i]`, `down[i]`) to a non-blocking switch, and an optional shared backbone
/// every inter-host transfer crosses.
pub fn summarize_star(up: &[f64], down: &[f64], backbone: Option<f64>) -> Summary {
    let n = up.len();
    let total = up.iter().sum::<f64>() + down.iter().sum::<f64>() + backbone.unwrap_or(0.0);
    let links = 2 * n + backbone.is_some() as usize;
    // A route between two hosts: the source's UP link, the backbone, the destination's DOWN link.
    let diameter = if n < 2 { 0 } else { 2 + backbone.is_some() as u64 };
    // Traffic from half A to half B crosses A's UP links, then the backbone, then B's DOWN
    // links: a cut is all of A's UP links, the backbone, or all of B's DOWN links (a mix
    // costs more). The cheapest half is the ⌊n/2⌋ hosts of smallest UP (or DOWN) bandwidth.
    let bisection = if n < 2 {
        Figure::none("not defined for fewer than 2 hosts")
    } else {
        let smallest = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v[..n / 2].iter().sum::<f64>()
        };
        let cut = smallest(up).min(smallest(down)).min(backbone.unwrap_or(f64::INFINITY));
        Figure::known(cut, "closed form")
    };
    Summary {
        kind: "star".into(),
        shape: None,
        zones: 1,
        hosts: n,
        links,
        shared_links: links,
        fatpipe_links: 0,
        total_bandwidth: total,
        diameter_hops: Figure::known(diameter, "closed form"),
        bisection_bandwidth: bisection,
    }
}

/// The most links on a route between two different hosts, by asking every ordered pair.
pub fn diameter_by_routes(t: &dyn Topology) -> crate::error::Result<u64> {
    let n = t.host_count() as u32;
    let mut out = Vec::new();
    let mut most = 0;
    for s in 0..n {
        for d in 0..n {
            if s != d {
                out.clear();
                t.route(Endpoint::Host(s), Endpoint::Host(d), &mut out)?;
                most = most.max(out.len() as u64);
            }
        }
    }
    Ok(most)
}

/// Closed forms of the diameter, from the routes each cluster builds (cluster.rs):
/// - FLAT (StarZone): source limiter, source UP link, backbone, destination DOWN link,
///   destination limiter: 2 + backbone + 2 × limiter.
/// - TORUS (dimension-order, each dimension the shorter way round): at most ⌊d/2⌋ hops in a
///   dimension of size d, H = Σ ⌊d_j/2⌋ cables in all, each preceded by the limiter of the
///   host it leaves, and the destination's limiter: H + limiter × (H + 1).
/// - FAT_TREE: up to the lowest level k where source and destination share an ancestor, and
///   down again: 2k cables; a limiter before each up hop (the source's and k − 1 switches'),
///   after each down hop (k switches) and the destination's: 2k + limiter × (2k + 1). Two
///   hosts first meet at level k = the highest level whose down count d_k > 1 (above it every
///   switch has one child, so all hosts already share the level-k switch).
/// - DRAGONFLY: none here (its routing, SimGrid's chassis quirk included, is checked route
///   by route instead).
fn diameter_closed_form(s: &Shape, n: usize) -> Option<u64> {
    if n < 2 {
        return Some(0);
    }
    let lim = s.limiter.is_some() as u64;
    match &s.kind {
        ShapeKind::Flat { backbone } => Some(2 + backbone.is_some() as u64 + 2 * lim),
        ShapeKind::Torus { dims } => {
            let h: u64 = dims.iter().map(|d| d / 2).sum();
            Some(h + lim * (h + 1))
        }
        ShapeKind::FatTree { down, .. } => {
            let k = down.iter().rposition(|&d| d > 1).map_or(0, |i| i as u64 + 1);
            Some(2 * k + lim * (2 * k + 1))
        }
        ShapeKind::Dragonfly { .. } => None,
    }
}

/// Closed forms of the bisection bandwidth (one direction):
/// - FLAT: every route goes host → switch → host, the limiter and private link of a host in
///   series (both SHARED, whatever the cluster's `sharing_policy`: SimGrid 3.32 makes them
///   so); as for the star, the cut is ⌊n/2⌋ hosts' links or the backbone (if SHARED):
///   min(⌊n/2⌋ × min(bw, limiter), backbone).
/// - TORUS without limiters, its largest dimension D even: each host has one cable (one
///   direction) to its next neighbour in each dimension, so a ring of size d ≥ 2 cut in two
///   arcs loses 2 cables; cutting the n/D rings of the largest dimension into halves splits
///   the hosts evenly across 2n/D cables: 2n/D × bw (the known bisection of k-ary n-cubes,
///   Dally & Towles, "Principles and Practices of Interconnection Networks", §3.3; checked
///   by brute force over every balanced split in the tests).
/// - FAT_TREE without limiters: see [`fat_tree_bisection`].
/// - DRAGONFLY without limiters: see [`dragonfly_bisection`].
fn bisection_closed_form(t: &dyn Topology, s: &Shape, n: usize) -> Figure<f64> {
    if n < 2 {
        return Figure::none("not defined for fewer than 2 hosts");
    }
    match &s.kind {
        ShapeKind::Flat { backbone } => {
            let host = s.bandwidth.min(s.limiter.unwrap_or(f64::INFINITY));
            let bb = match backbone {
                Some(b) if b.sharing == LinkSharing::Shared => b.bandwidth,
                _ => f64::INFINITY,
            };
            Figure::known((n / 2) as f64 * host, "closed form").min_with(bb)
        }
        ShapeKind::Torus { dims } => {
            let d = dims.iter().copied().max().unwrap_or(1);
            if s.limiter.is_some() {
                Figure::none("not derived for a torus with limiters")
            } else if d % 2 == 1 {
                Figure::none("not derived for a torus whose largest dimension is odd")
            } else {
                Figure::known(2.0 * (n as u64 / d) as f64 * s.bandwidth, "closed form")
            }
        }
        ShapeKind::FatTree { down, up, parallel } => fat_tree_bisection(s, down, up, parallel),
        ShapeKind::Dragonfly { groups, .. } => dragonfly_bisection(t, s, n, *groups),
    }
}

/// DRAGONFLY without limiters. Two cuts bound the bisection from above: the private links of
/// ⌊n/2⌋ hosts, and, with an even count G of groups, the blue links between two halves of
/// the groups, (G/2)² of them. From below: route one byte from every host to every other
/// (uniform traffic; [`Topology::uniform_congestion`] gives θ, the most bytes per unit of
/// bandwidth on any link). The bytes from one half to the other, k(n − k) with k = ⌊n/2⌋,
/// then fit in k(n − k)/θ of any cut's bandwidth (they are a part of the traffic, scaled to
/// fit every link), so no cut is smaller: the multicommodity-flow bound of Leighton & Rao
/// (J. ACM 46(6), 1999). Where the two meet, the smaller cut is the bisection (a dragonfly
/// whose blue links carry the most uniform traffic for their bandwidth, as balanced designs
/// do); otherwise the figure is not claimed and the reason gives both bounds.
fn dragonfly_bisection(t: &dyn Topology, s: &Shape, n: usize, (groups, blue): (u64, u64)) -> Figure<f64> {
    if s.limiter.is_some() {
        return Figure::none("not derived for a dragonfly with limiters");
    }
    let k = (n / 2) as f64;
    let hosts = k * s.bandwidth;
    let halves = (groups % 2 == 0).then(|| ((groups / 2) * (groups / 2)) as f64 * blue as f64 * s.bandwidth);
    let (upper, cut) = match halves {
        Some(b) if b < hosts => (b, "the blue links between halves of the groups"),
        _ => (hosts, "the private links of half the hosts"),
    };
    let Some(theta) = t.uniform_congestion() else {
        return Figure::none(format!("not derived for a dragonfly of more than {CONGESTION_ROUTER_LIMIT} routers"));
    };
    let lower = k * (n as f64 - k) / theta;
    if lower >= upper * (1.0 - 1e-9) {
        Figure::known(upper, &format!("closed form: {cut}; uniform traffic shows no cut is smaller"))
    } else {
        Figure::none(format!(
            "not derived for this dragonfly: between {lower:.4e} and {upper:.4e} B/s (uniform traffic's bound and {cut})"
        ))
    }
}

/// FAT_TREE without limiters: below level l the hosts form Π_{j≥l} d_j separate groups of
/// Π_{j<l} d_j hosts (one per level-(l−1) subtree), each joined to the rest only by the
/// cables up from its Π_{j<l} u_j level-(l−1) nodes: u_l parents × p_l parallel cables each.
/// When that number of groups is even, putting half of them on each side cuts
/// (groups / 2) × Π_{j≤l} u_j × p_l cables. The figure is the smallest over the levels that
/// split evenly; it is claimed only when every level's group count is even, else "not
/// derived" (the tests check it against the brute-force minimum cut on small trees).
fn fat_tree_bisection(s: &Shape, down: &[u64], up: &[u64], parallel: &[u64]) -> Figure<f64> {
    if s.limiter.is_some() {
        return Figure::none("not derived for a fat tree with limiters");
    }
    let mut best = f64::INFINITY;
    for l in 0..down.len() {
        let groups: u64 = down[l..].iter().product();
        if groups % 2 == 1 {
            return Figure::none("not derived for a fat tree with an odd count of subtrees at some level");
        }
        let cables = (groups / 2) as f64 * up[..=l].iter().product::<u64>() as f64 * parallel[l] as f64;
        best = best.min(cables * s.bandwidth);
    }
    Figure::known(best, "closed form")
}

impl Figure<f64> {
    fn min_with(mut self, other: f64) -> Self {
        self.value = self.value.map(|v| v.min(other));
        self
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::network::topology::{build_cluster, ClusterKind, ClusterLinkSharing, ClusterParams};

    fn cluster(kind: ClusterKind, topo: &str, n: u64, limiter: Option<f64>, sharing: ClusterLinkSharing) -> ClusterParams {
        ClusterParams {
            id: "c".into(),
            prefix: "h".into(),
            suffix: String::new(),
            radical: vec![(0, n - 1)],
            speed: 1e9,
            cores: 1,
            bandwidth: 10.0,
            latency: 1e-6,
            sharing,
            kind,
            topo_parameters: topo.into(),
            backbone: None,
            limiter_bandwidth: limiter,
            loopback: Some((1e3, 1e-9)),
            router_id: None,
        }
    }

    /// The closed forms of the diameter equal the longest of every pair's route.
    #[test]
    fn diameter_closed_forms_equal_the_longest_route() {
        let sets: &[(ClusterKind, &str, u64)] = &[
            (ClusterKind::Flat, "", 1),
            (ClusterKind::Flat, "", 5),
            (ClusterKind::Torus, "5", 5),
            (ClusterKind::Torus, "4,3", 12),
            (ClusterKind::Torus, "3,2,3", 18),
            (ClusterKind::Torus, "3,1,3,2", 18),
            (ClusterKind::Torus, "2,2,2", 8),
            (ClusterKind::Torus, "6", 6),
            (ClusterKind::FatTree, "2;4,4;1,2;1,2", 16),
            (ClusterKind::FatTree, "2;2,3;2,2;2,1", 6),
            (ClusterKind::FatTree, "3;2,2,2;1,2,2;1,2,1", 8),
            (ClusterKind::FatTree, "3;2,3,1;1,2,2;1,1,1", 6),
            (ClusterKind::FatTree, "2;4,1;2,2;1,1", 4),
        ];
        for &(kind, topo, n) in sets {
            for limiter in [None, Some(5.0)] {
                for sharing in [ClusterLinkSharing::Splitduplex, ClusterLinkSharing::Shared] {
                    for backbone in [None, Some((20.0, 1e-6, LinkSharing::Shared))] {
                        if backbone.is_some() && kind != ClusterKind::Flat {
                            continue;
                        }
                        let mut p = cluster(kind, topo, n, limiter, sharing);
                        p.backbone = backbone;
                        // SimGrid refuses limiters on a fat tree with more switches than hosts.
                        let Ok(t) = build_cluster(&p) else {
                            assert!(limiter.is_some() && kind == ClusterKind::FatTree, "{kind:?} {topo}");
                            continue;
                        };
                        let closed = diameter_closed_form(&t.shape().unwrap(), n as usize);
                        assert_eq!(closed, Some(diameter_by_routes(t.as_ref()).unwrap()), "{kind:?} {topo} {limiter:?} {sharing:?} {backbone:?}");
                        assert_eq!(summarize(t.as_ref()).diameter_hops.how, "closed form");
                    }
                }
            }
        }
    }

    /// Brute force: over every split of the hosts into ⌊n/2⌋ and ⌈n/2⌉, the fewest torus cables
    /// crossing from one half to the other (each host's cable to its next neighbour in each
    /// dimension, one direction, read from the link names `c_link_from_I_to_J[_UP]`).
    fn torus_min_cut(t: &dyn Topology) -> f64 {
        let n = t.host_count();
        let mut edges = Vec::new();
        for l in 0..t.link_count() as u32 {
            let name = t.link_name(l);
            if let Some(rest) = name.strip_prefix("c_link_from_") {
                if name.ends_with("_DOWN") {
                    continue;
                }
                let rest = rest.trim_end_matches("_UP");
                let (a, b) = rest.split_once("_to_").unwrap();
                edges.push((a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap(), t.link(l).bandwidth));
            }
        }
        let mut best = f64::INFINITY;
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != n / 2 {
                continue;
            }
            let side = |h: usize| mask >> h & 1 == 1;
            // Undirected cables: the A→B direction of a cable pair (or a SHARED cable) crossing.
            let cut: f64 = edges.iter().filter(|(a, b, _)| side(*a) != side(*b)).map(|e| e.2).sum();
            best = best.min(cut);
        }
        best
    }

    #[test]
    fn torus_bisection_equals_the_brute_force_minimum_cut() {
        for (topo, n) in [("8", 8), ("2,4", 8), ("4,2", 8), ("2,2,2", 8), ("4,3", 12), ("3,4", 12), ("6,2", 12), ("2,4,2", 16), ("4,4", 16)] {
            for sharing in [ClusterLinkSharing::Splitduplex, ClusterLinkSharing::Shared] {
                let t = build_cluster(&cluster(ClusterKind::Torus, topo, n, None, sharing)).unwrap();
                let s = summarize(t.as_ref());
                assert_eq!(s.bisection_bandwidth.value, Some(torus_min_cut(t.as_ref())), "{topo}");
            }
        }
        for (topo, n) in [("3,3", 9), ("2,3,2", 12)] {
            let t = build_cluster(&cluster(ClusterKind::Torus, topo, n, None, ClusterLinkSharing::Shared)).unwrap();
            assert_eq!(summarize(t.as_ref()).bisection_bandwidth.how, "not derived for a torus whose largest dimension is odd");
        }
    }

    /// The fat tree's graph read from its link names `link_from_CHILD_PARENT_N` (host i is
    /// node i), for [`balanced_min_cut`]: (nodes, arcs), each cable an arc both ways.
    fn fat_tree_graph(t: &dyn Topology) -> (usize, Vec<(usize, usize, f64)>) {
        let mut ids = std::collections::HashMap::new();
        for i in 0..t.host_count() {
            ids.insert(i.to_string(), i);
        }
        let mut arcs = Vec::new();
        for l in 0..t.link_count() as u32 {
            let name = t.link_name(l);
            let Some(rest) = name.strip_prefix("link_from_") else { continue };
            let parts: Vec<&str> = rest.split('_').collect();
            let mut node = |k: &str| {
                let next = ids.len();
                *ids.entry(k.to_string()).or_insert(next)
            };
            let (a, b) = (node(parts[0]), node(parts[1]));
            arcs.push((a, b, t.link(l).bandwidth));
            arcs.push((b, a, t.link(l).bandwidth));
        }
        (ids.len(), arcs)
    }

    /// Brute force: over every split of hosts 0..`hosts` into ⌊n/2⌋ and ⌈n/2⌉ (the other
    /// nodes free to go either side), the smallest maximum flow (Edmonds-Karp) from the first
    /// half to the second through the directed `arcs` (from, to, capacity) of a graph of
    /// `nodes` nodes; an undirected link is an arc each way.
    pub(crate) fn balanced_min_cut(hosts: usize, nodes: usize, arcs: &[(usize, usize, f64)]) -> f64 {
        let (n, v) = (hosts, nodes + 2);
        let (src, dst) = (v - 2, v - 1);
        let mut best = f64::INFINITY;
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != n / 2 {
                continue;
            }
            let mut cap = vec![vec![0.0f64; v]; v];
            for &(a, b, c) in arcs {
                cap[a][b] += c;
            }
            for h in 0..n {
                if mask >> h & 1 == 1 { cap[src][h] = f64::INFINITY } else { cap[h][dst] = f64::INFINITY }
            }
            let mut flow = 0.0;
            loop {
                let mut prev = vec![usize::MAX; v];
                prev[src] = src;
                let mut queue = std::collections::VecDeque::from([src]);
                while let Some(x) = queue.pop_front() {
                    for y in 0..v {
                        if prev[y] == usize::MAX && cap[x][y] > 1e-12 {
                            prev[y] = x;
                            queue.push_back(y);
                        }
                    }
                }
                if prev[dst] == usize::MAX {
                    break;
                }
                let mut push = f64::INFINITY;
                let mut y = dst;
                while y != src {
                    push = push.min(cap[prev[y]][y]);
                    y = prev[y];
                }
                let mut y = dst;
                while y != src {
                    cap[prev[y]][y] -= push;
                    cap[y][prev[y]] += push;
                    y = prev[y];
                }
                flow += push;
            }
            best = best.min(flow);
        }
        best
    }

    #[test]
    fn fat_tree_bisection_equals_the_brute_force_minimum_cut() {
        // Trees with fewer switches than hosts only: beyond that SimGrid's switch ids (2n - 1
        // counting down) reach the hosts' and the names no longer tell the nodes apart.
        for topo in ["2;4,4;1,2;1,2", "2;4,4;2,2;1,1", "2;4,4;2,1;1,1", "2;4,2;1,3;1,2", "1;8;1;1", "2;2,8;1,1;2,1", "3;2,2,4;1,1,2;1,1,1"] {
            let n: u64 = topo.split(';').nth(1).unwrap().split(',').map(|d| d.parse::<u64>().unwrap()).product();
            let t = build_cluster(&cluster(ClusterKind::FatTree, topo, n, None, ClusterLinkSharing::Shared)).unwrap();
            let (nodes, arcs) = fat_tree_graph(t.as_ref());
            assert_eq!(summarize(t.as_ref()).bisection_bandwidth.value, Some(balanced_min_cut(t.host_count(), nodes, &arcs)), "{topo}");
        }
        let t = build_cluster(&cluster(ClusterKind::FatTree, "2;2,3;2,2;2,1", 6, None, ClusterLinkSharing::Shared)).unwrap();
        assert_eq!(summarize(t.as_ref()).bisection_bandwidth.value, None);
    }

    #[test]
    fn flat_and_star_bisection_by_hand() {
        // 5 hosts of 10 B/s, limiters of 5 B/s: 2 hosts' limiters (10 B/s) are the cut.
        let t = build_cluster(&cluster(ClusterKind::Flat, "", 5, Some(5.0), ClusterLinkSharing::Splitduplex)).unwrap();
        let s = summarize(t.as_ref());
        assert_eq!(s.bisection_bandwidth.value, Some(10.0));
        // 5 hosts × (loopback 1e3 + limiter 5 + UP 10 + DOWN 10).
        assert_eq!((s.links, s.shared_links, s.fatpipe_links, s.total_bandwidth), (20, 15, 5, 5.0 * 1025.0));
        let shape = s.shape.unwrap();
        assert_eq!(shape.simgrid(), ("FLAT", String::new()));
        // A shared backbone narrower than two hosts' links is the cut.
        let mut p = cluster(ClusterKind::Flat, "", 4, None, ClusterLinkSharing::Splitduplex);
        p.backbone = Some((15.0, 0.0, LinkSharing::Shared));
        assert_eq!(summarize(build_cluster(&p).unwrap().as_ref()).bisection_bandwidth.value, Some(15.0));
        p.backbone = Some((15.0, 0.0, LinkSharing::Fatpipe));
        assert_eq!(summarize(build_cluster(&p).unwrap().as_ref()).bisection_bandwidth.value, Some(20.0));
        // Star: ups 1, 2, 3, 4; downs 8, 8, 8, 8; the 2 smallest ups are the cut.
        let s = summarize_star(&[4.0, 1.0, 3.0, 2.0], &[8.0; 4], None);
        assert_eq!((s.bisection_bandwidth.value, s.diameter_hops.value, s.links), (Some(3.0), Some(2), 8));
        let s = summarize_star(&[4.0, 1.0, 3.0, 2.0], &[8.0; 4], Some(2.5));
        assert_eq!((s.bisection_bandwidth.value, s.diameter_hops.value, s.links, s.total_bandwidth), (Some(2.5), Some(3), 9, 44.5));
    }

    #[test]
    fn simgrid_strings() {
        let t = build_cluster(&cluster(ClusterKind::FatTree, "2;4,4;1,2;1,2", 16, None, ClusterLinkSharing::Shared)).unwrap();
        assert_eq!(t.shape().unwrap().simgrid(), ("FAT_TREE", "2;4,4;1,2;1,2".to_string()));
        let t = build_cluster(&cluster(ClusterKind::Dragonfly, "3,1;2,1;3,1;2", 36, None, ClusterLinkSharing::Shared)).unwrap();
        assert_eq!(t.shape().unwrap().simgrid(), ("DRAGONFLY", "3,1;2,1;3,1;2".to_string()));
        let s = summarize(t.as_ref());
        assert_eq!((s.diameter_hops.how.as_str(), s.bisection_bandwidth.value), ("all routes", None));
        let t = build_cluster(&cluster(ClusterKind::Torus, "3,1,3,2", 18, None, ClusterLinkSharing::Shared)).unwrap();
        assert_eq!(t.shape().unwrap().simgrid(), ("TORUS", "3,1,3,2".to_string()));
    }
}
