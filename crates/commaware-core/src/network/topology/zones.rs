//! Nested zones: a tree of routing zones (SimGrid's netzones), each an explicit graph
//! ([`GraphZone`]: Full, Floyd, Dijkstra, None) or a cluster (any [`Topology`], reached
//! through its gateway router). A route between two hosts follows SimGrid 3.32's
//! `NetZoneImpl::get_global_route`: the first zone that holds both, the route there between
//! the two child zones that hold them (with its gateways), and the same again from the
//! source to the first gateway and from the second gateway to the destination.
//!
//! Points are numbered over the whole platform ([`Point`]); every zone keeps the local
//! number of each of its points, as SimGrid's netpoint ids.

use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::network::topology::graph::{Edge, GraphZone, Routing};
use crate::network::topology::{Endpoint, LinkInfo, Topology, TopologyLink};

/// A point of the platform: a host (in host order), a router, or a zone (as a point of its
/// parent zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    Host(u32),
    Router(u32),
    Zone(u32),
}

#[derive(Debug)]
enum Body {
    Graph(GraphZone<Point>),
    /// A cluster: its topology, the first of its links in the platform's link table, and
    /// its router (the cluster's gateway), if the platform names it.
    Cluster { topology: Arc<dyn Topology>, first_link: u32, router: Option<u32> },
}

#[derive(Debug)]
struct Zone {
    name: String,
    parent: Option<u32>,
    body: Body,
    /// The zone's points by local number (Graph zones only).
    points: Vec<Point>,
    has_children: bool,
    has_hosts: bool,
}

/// Where a point sits: its zone and its local number there.
#[derive(Debug, Clone, Copy)]
struct Place {
    zone: u32,
    local: u32,
}

/// The deepest zone nesting a route may cross (SimGrid's recursion has none; a guard).
const MAX_DEPTH: usize = 256;

/// A platform of nested zones, built by [`ZonesBuilder`].
#[derive(Debug)]
pub struct Zones {
    zones: Vec<Zone>,
    links: Vec<LinkInfo>,
    /// Names of the explicit links, in table order skipping the clusters' runs; cluster links are named by
    /// their cluster.
    link_names: Vec<String>,
    /// (first link, zone) of each cluster, by first link.
    cluster_links: Vec<(u32, u32)>,
    hosts: Vec<Place>,
    host_names: Vec<String>,
    routers: Vec<Place>,
    router_names: Vec<String>,
    /// Place of each zone as a point of its parent (the root's is unused).
    zone_places: Vec<Place>,
    /// Each host's private link (see [`Topology::private_links`]), found on first use.
    private: OnceLock<Vec<Option<(TopologyLink, TopologyLink)>>>,
}

/// Builds [`Zones`] in document order.
#[derive(Debug, Default)]
pub struct ZonesBuilder {
    z: Option<Zones>,
}

/// Why [`ZonesBuilder`] refused something; the reader adds the line.
pub type BuildError = String;

impl ZonesBuilder {
    pub fn new() -> Self {
        ZonesBuilder {
            z: Some(Zones {
                zones: Vec::new(),
                links: Vec::new(),
                link_names: Vec::new(),
                cluster_links: Vec::new(),
                hosts: Vec::new(),
                host_names: Vec::new(),
                routers: Vec::new(),
                router_names: Vec::new(),
                zone_places: Vec::new(),
                private: OnceLock::new(),
            }),
        }
    }

    fn z(&mut self) -> &mut Zones {
        self.z.as_mut().expect("builder used after build")
    }

    fn add_local(&mut self, zone: u32, point: Point) -> std::result::Result<u32, BuildError> {
        let z = &mut self.z().zones[zone as usize];
        let Body::Graph(g) = &mut z.body else { return Err(format!("zone `{}` is a cluster", z.name)) };
        let local = g.add_point().map_err(|_| {
            format!("Floyd zone `{}` has more than {} points; use Dijkstra routing", z.name, super::graph::MAX_FLOYD_POINTS)
        })?;
        z.points.push(point);
        Ok(local)
    }

    /// A zone routed by `routing`, child of `parent` (None: the root).
    pub fn add_zone(&mut self, name: &str, parent: Option<u32>, routing: Routing) -> std::result::Result<u32, BuildError> {
        self.add_zone_body(name, parent, Body::Graph(GraphZone::new(routing)))
    }

    fn add_zone_body(&mut self, name: &str, parent: Option<u32>, body: Body) -> std::result::Result<u32, BuildError> {
        let id = self.z().zones.len() as u32;
        let place = match parent {
            Some(p) => {
                let pz = &self.z().zones[p as usize];
                if pz.has_hosts {
                    return Err(format!("zone `{}` holds hosts or routers, so it cannot also hold zones", pz.name));
                }
                let local = self.add_local(p, Point::Zone(id))?;
                self.z().zones[p as usize].has_children = true;
                Place { zone: p, local }
            }
            None => Place { zone: u32::MAX, local: 0 },
        };
        let z = self.z();
        z.zones.push(Zone { name: name.into(), parent, body, points: Vec::new(), has_children: false, has_hosts: false });
        z.zone_places.push(place);
        Ok(id)
    }

    /// A cluster as a zone: `hosts` host names (in its host order) and its router's name
    /// (SimGrid 3.32 gives only FLAT clusters a router). Returns the zone, its first host
    /// and its router.
    pub fn add_cluster(
        &mut self,
        name: &str,
        parent: Option<u32>,
        topology: Arc<dyn Topology>,
        hosts: impl IntoIterator<Item = String>,
        router: Option<String>,
    ) -> std::result::Result<(u32, u32, Option<u32>), BuildError> {
        let first_link = self.z().links.len() as u32;
        let first_host = self.z().hosts.len() as u32;
        let links = topology.link_count();
        if (first_link as usize).saturating_add(links) > u32::MAX as usize {
            return Err("too many links".into());
        }
        for l in 0..links {
            let info = topology.link(l as TopologyLink);
            self.z().links.push(info);
        }
        let body = Body::Cluster { topology: topology.clone(), first_link, router: None };
        let zone = self.add_zone_body(name, parent, body)?;
        self.z().cluster_links.push((first_link, zone));
        for (i, host) in hosts.into_iter().enumerate() {
            let z = self.z();
            z.hosts.push(Place { zone, local: i as u32 });
            z.host_names.push(host);
        }
        let z = self.z();
        let r = router.map(|name| {
            let r = z.routers.len() as u32;
            z.routers.push(Place { zone, local: u32::MAX });
            z.router_names.push(name);
            r
        });
        if let Body::Cluster { router, .. } = &mut z.zones[zone as usize].body {
            *router = r;
        }
        z.zones[zone as usize].has_hosts = true;
        Ok((zone, first_host, r))
    }

    fn leaf(&mut self, zone: u32) -> std::result::Result<(), BuildError> {
        let z = &mut self.z().zones[zone as usize];
        if z.has_children {
            return Err(format!("zone `{}` holds zones, so it cannot also hold hosts or routers", z.name));
        }
        z.has_hosts = true;
        Ok(())
    }

    /// A host of `zone`; returns its number in host order.
    pub fn add_host(&mut self, zone: u32, name: &str) -> std::result::Result<u32, BuildError> {
        self.leaf(zone)?;
        let h = self.z().hosts.len() as u32;
        let local = self.add_local(zone, Point::Host(h))?;
        let z = self.z();
        z.hosts.push(Place { zone, local });
        z.host_names.push(name.into());
        Ok(h)
    }

    pub fn add_router(&mut self, zone: u32, name: &str) -> std::result::Result<u32, BuildError> {
        self.leaf(zone)?;
        let r = self.z().routers.len() as u32;
        let local = self.add_local(zone, Point::Router(r))?;
        let z = self.z();
        z.routers.push(Place { zone, local });
        z.router_names.push(name.into());
        Ok(r)
    }

    /// An explicit link (a SPLITDUPLEX link is two: `_UP` and `_DOWN`, added by the caller).
    pub fn add_link(&mut self, name: &str, info: LinkInfo) -> std::result::Result<TopologyLink, BuildError> {
        let z = self.z();
        let id = z.links.len();
        if id >= u32::MAX as usize {
            return Err("too many links".into());
        }
        z.links.push(info);
        z.link_names.push(name.into());
        Ok(id as TopologyLink)
    }

    /// The zone that holds `p` (for a zone: its parent).
    pub fn zone_of(&self, p: Point) -> Option<u32> {
        self.z.as_ref().and_then(|z| z.place(p)).map(|pl| pl.zone)
    }

    /// Is `p` inside `zone` (at any depth)?
    pub fn is_within(&self, p: Point, zone: u32) -> bool {
        self.z.as_ref().is_some_and(|z| z.is_within(p, zone))
    }

    /// Declare a route in `zone` from `src` to `dst` over `links` (and the reverse over
    /// `back`, when symmetrical); `gateways` for a route between two child zones.
    pub fn add_route(
        &mut self,
        zone: u32,
        src: Point,
        dst: Point,
        links: Vec<TopologyLink>,
        back: Option<Vec<TopologyLink>>,
        gateways: Option<(Point, Point)>,
    ) -> std::result::Result<(), BuildError> {
        let zs = self.z();
        let (Some(s), Some(d)) = (zs.place(src), zs.place(dst)) else { return Err("unknown end point".into()) };
        if s.zone != zone || d.zone != zone {
            return Err(format!("both ends must be in zone `{}`", zs.zones[zone as usize].name));
        }
        let z = &mut zs.zones[zone as usize];
        let Body::Graph(g) = &mut z.body else { return Err(format!("zone `{}` is a cluster", z.name)) };
        if g.routing() == Routing::Empty {
            return Err(format!("zone `{}` has routing None: it takes no routes", z.name));
        }
        let edge = Edge { src: s.local, dst: d.local, links, gateways };
        let back = back.map(|links| Edge { src: d.local, dst: s.local, links, gateways: gateways.map(|(a, b)| (b, a)) });
        g.add_route(edge, back).map_err(|_| "the route exists already (routes are symmetrical by default)".to_string())
    }

    pub fn build(mut self) -> Zones {
        self.z.take().expect("built once")
    }
}

impl Zones {
    fn place(&self, p: Point) -> Option<Place> {
        match p {
            Point::Host(h) => self.hosts.get(h as usize).copied(),
            Point::Router(r) => self.routers.get(r as usize).copied(),
            Point::Zone(z) => self.zone_places.get(z as usize).copied().filter(|pl| pl.zone != u32::MAX),
        }
    }

    fn is_within(&self, p: Point, zone: u32) -> bool {
        let mut cur = match p {
            Point::Zone(z) => Some(z),
            _ => self.place(p).map(|pl| pl.zone),
        };
        while let Some(z) = cur {
            if z == zone {
                return true;
            }
            cur = self.zones[z as usize].parent;
        }
        false
    }

    pub fn host_names(&self) -> &[String] {
        &self.host_names
    }

    fn point_name(&self, p: Point) -> String {
        match p {
            Point::Host(h) => self.host_names[h as usize].clone(),
            Point::Router(r) => self.router_names[r as usize].clone(),
            Point::Zone(z) => self.zones[z as usize].name.clone(),
        }
    }

    /// The zones from `z` up to the root.
    fn path_to_root(&self, z: u32) -> Vec<u32> {
        let mut path = vec![z];
        let mut cur = self.zones[z as usize].parent;
        while let Some(p) = cur {
            path.push(p);
            cur = self.zones[p as usize].parent;
        }
        path
    }

    fn add_links(&self, out: &mut Vec<TopologyLink>, links: impl IntoIterator<Item = TopologyLink>) -> f64 {
        let mut lat = 0.0;
        for l in links {
            lat += self.links[l as usize].latency;
            out.push(l);
        }
        lat
    }

    fn no_route(&self, src: Point, dst: Point) -> Error {
        Error::platform("", format!("no route from `{}` to `{}`", self.point_name(src), self.point_name(dst)))
    }

    /// The route inside `zone` between two of its points: appends its links, returns its
    /// latency and its gateways (for a route between child zones).
    fn local_route(&self, zone: u32, src: Point, dst: Point, out: &mut Vec<TopologyLink>, depth: usize) -> Result<(f64, Option<(Point, Point)>)> {
        let z = &self.zones[zone as usize];
        match &z.body {
            Body::Cluster { topology, first_link, router, .. } => {
                let end = |p: Point| -> Result<Endpoint> {
                    match p {
                        Point::Host(h) => Ok(Endpoint::Host(self.hosts[h as usize].local)),
                        Point::Router(r) if Some(r) == *router => Ok(Endpoint::Gateway),
                        _ => Err(self.no_route(src, dst)),
                    }
                };
                let mut links = Vec::new();
                topology.route(end(src)?, end(dst)?, &mut links)?;
                let lat = self.add_links(out, links.into_iter().map(|l| l + first_link));
                Ok((lat, None))
            }
            Body::Graph(g) if g.routing() == Routing::Dijkstra => {
                // SimGrid 3.32's DijkstraZone walks back from the destination and inserts
                // each route's links, reversed, at the front of the route being built
                // (`insert_link_latency`): the same links and latency, in its order.
                let mut seg = Vec::new();
                let r = self.graph_route(g, src, dst, &mut seg, depth)?;
                let mut quirk: Vec<TopologyLink> = Vec::with_capacity(seg.len() + out.len());
                for part in r.1.iter() {
                    quirk.extend(seg[part.clone()].iter().rev());
                }
                quirk.extend_from_slice(out);
                *out = quirk;
                Ok((r.0, r.2))
            }
            Body::Graph(g) => {
                let mut r = self.graph_route(g, src, dst, out, depth)?;
                r.1.clear();
                Ok((r.0, r.2))
            }
        }
    }

    /// The links of the path from `src` to `dst` in a graph zone, appended to `out`: the
    /// latency, the ranges of `out` each route of the path filled, and the gateways.
    #[allow(clippy::type_complexity)]
    fn graph_route(
        &self,
        g: &GraphZone<Point>,
        src: Point,
        dst: Point,
        out: &mut Vec<TopologyLink>,
        depth: usize,
    ) -> Result<(f64, Vec<std::ops::Range<usize>>, Option<(Point, Point)>)> {
        {
            {
                let (s, d) = (self.place(src).map(|p| p.local), self.place(dst).map(|p| p.local));
                let (Some(s), Some(d)) = (s, d) else { return Err(self.no_route(src, dst)) };
                let path = g.path(s, d).ok_or_else(|| self.no_route(src, dst))?;
                let mut parts = Vec::with_capacity(path.len());
                let mut lat = 0.0;
                let mut prev_gw_dst: Option<Point> = None;
                let mut first_gw = None;
                let mut last_gw = None;
                for &e in &path {
                    let edge = g.edge(e);
                    let start = out.len();
                    if let Some((gs, gd)) = edge.gateways {
                        // A chain of zone routes through an intermediate zone: cross it
                        // from the previous gateway to this one (SimGrid's FloydZone).
                        if let Some(prev) = prev_gw_dst {
                            if prev != gs {
                                lat += self.global_route(prev, gs, out, depth + 1)?;
                            }
                        }
                        first_gw.get_or_insert(gs);
                        last_gw = Some(gd);
                        prev_gw_dst = Some(gd);
                    }
                    lat += self.add_links(out, edge.links.iter().copied());
                    parts.push(start..out.len());
                }
                Ok((lat, parts, first_gw.zip(last_gw)))
            }
        }
    }

    /// SimGrid's `get_global_route` between two points; appends the links, returns the latency.
    fn global_route(&self, src: Point, dst: Point, out: &mut Vec<TopologyLink>, depth: usize) -> Result<f64> {
        if depth > MAX_DEPTH {
            return Err(self.no_route(src, dst));
        }
        let (Some(sp), Some(dp)) = (self.place(src), self.place(dst)) else { return Err(self.no_route(src, dst)) };
        if sp.zone == dp.zone {
            return Ok(self.local_route(sp.zone, src, dst, out, depth)?.0);
        }
        let mut path_src = self.path_to_root(sp.zone);
        let mut path_dst = self.path_to_root(dp.zone);
        let mut parent = None;
        while path_src.len() > 1 && path_dst.len() > 1 && path_src.last() == path_dst.last() {
            parent = path_src.pop();
            path_dst.pop();
        }
        let (sa, da) = (*path_src.last().unwrap(), *path_dst.last().unwrap());
        if sa == da {
            // One point's zone holds the other's: SimGrid has no route there.
            return Err(self.no_route(src, dst));
        }
        let common = parent.ok_or_else(|| self.no_route(src, dst))?;
        let mut middle = Vec::new();
        let (lat_mid, gws) = self.local_route(common, Point::Zone(sa), Point::Zone(da), &mut middle, depth)?;
        let (gw_src, gw_dst) = gws.ok_or_else(|| self.no_route(src, dst))?;
        let mut lat = 0.0;
        if src != gw_src {
            lat += self.global_route(src, gw_src, out, depth + 1)?;
        }
        out.extend_from_slice(&middle);
        lat += lat_mid;
        if gw_dst != dst {
            lat += self.global_route(gw_dst, dst, out, depth + 1)?;
        }
        Ok(lat)
    }
}

impl Zones {
    /// Every host's private link. A host of a graph zone has one when all the routes it
    /// declares start (from it) with one link U and end (to it) with one link D, and no
    /// declared route uses U or D anywhere else; a host of a cluster has its cluster's.
    fn find_private_links(&self) -> Vec<Option<(TopologyLink, TopologyLink)>> {
        const NONE: TopologyLink = TopologyLink::MAX;
        let n = self.hosts.len();
        // Per host: (U, D) so far (NONE: not seen yet); `ok` false once disproved.
        let mut ends = vec![(NONE, NONE); n];
        let mut ok = vec![true; n];
        let mut graphs = Vec::new();
        for (h, place) in self.hosts.iter().enumerate() {
            if let Body::Cluster { topology, first_link, .. } = &self.zones[place.zone as usize].body {
                match topology.private_links(place.local) {
                    Some((u, d)) => ends[h] = (u + first_link, d + first_link),
                    None => ok[h] = false,
                }
            }
        }
        for z in &self.zones {
            if let Body::Graph(g) = &z.body {
                graphs.push((g, &z.points));
            }
        }
        let host = |points: &Vec<Point>, local: u32| match points.get(local as usize) {
            Some(Point::Host(h)) => Some(*h as usize),
            _ => None,
        };
        let note = |slot: &mut TopologyLink, ok: &mut bool, l: TopologyLink| {
            if *slot == NONE {
                *slot = l;
            } else if *slot != l {
                *ok = false;
            }
        };
        for &(g, points) in &graphs {
            for e in g.edges().iter().filter(|e| e.src != e.dst && !e.links.is_empty()) {
                if let Some(h) = host(points, e.src) {
                    note(&mut ends[h].0, &mut ok[h], e.links[0]);
                }
                if let Some(h) = host(points, e.dst) {
                    note(&mut ends[h].1, &mut ok[h], *e.links.last().expect("not empty"));
                }
            }
        }
        // A private link that another route crosses is not private.
        let mut owner = vec![NONE; self.links.len()];
        for (h, &(u, d)) in ends.iter().enumerate() {
            if ok[h] && u != NONE && d != NONE {
                for l in [u, d] {
                    let o = owner[l as usize];
                    if o != NONE && o != h as TopologyLink {
                        // Two hosts claim one link: neither has it to itself.
                        ok[o as usize] = false;
                        ok[h] = false;
                    }
                    owner[l as usize] = h as TopologyLink;
                }
            }
        }
        for &(g, points) in &graphs {
            for e in g.edges() {
                let last = e.links.len().wrapping_sub(1);
                for (k, &l) in e.links.iter().enumerate() {
                    let o = owner[l as usize];
                    if o == NONE {
                        continue;
                    }
                    let mine = (e.src != e.dst)
                        && ((k == 0 && host(points, e.src) == Some(o as usize) && ends[o as usize].0 == l)
                            || (k == last && host(points, e.dst) == Some(o as usize) && ends[o as usize].1 == l));
                    if !mine {
                        ok[o as usize] = false;
                    }
                }
            }
        }
        ends.iter()
            .zip(&ok)
            .map(|(&(u, d), &ok)| (ok && u != NONE && d != NONE).then_some((u, d)))
            .collect()
    }
}

impl Topology for Zones {
    fn private_links(&self, host: u32) -> Option<(TopologyLink, TopologyLink)> {
        self.private.get_or_init(|| self.find_private_links()).get(host as usize).copied().flatten()
    }
    fn zone_count(&self) -> usize {
        self.zones.len()
    }
    fn kind(&self) -> &'static str {
        match self.zones.as_slice() {
            [Zone { body: Body::Graph(g), .. }] => g.routing().kind(),
            _ => "zones",
        }
    }
    fn host_count(&self) -> usize {
        self.hosts.len()
    }
    fn link_count(&self) -> usize {
        self.links.len()
    }
    fn link(&self, link: TopologyLink) -> LinkInfo {
        self.links[link as usize]
    }
    fn link_name(&self, link: TopologyLink) -> String {
        // Clusters' links are runs of the table; explicit links fill the rest in order.
        let i = self.cluster_links.partition_point(|&(first, _)| first <= link);
        if i > 0 {
            let (first, zone) = self.cluster_links[i - 1];
            if let Body::Cluster { topology, .. } = &self.zones[zone as usize].body {
                if ((link - first) as usize) < topology.link_count() {
                    return topology.link_name(link - first);
                }
            }
        }
        let explicit_before = self.cluster_links[..i]
            .iter()
            .map(|&(_, z)| match &self.zones[z as usize].body {
                Body::Cluster { topology, .. } => topology.link_count(),
                Body::Graph(_) => 0,
            })
            .sum::<usize>();
        self.link_names[link as usize - explicit_before].clone()
    }
    fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64> {
        let point = |e: Endpoint| match e {
            Endpoint::Host(h) if (h as usize) < self.hosts.len() => Ok(Point::Host(h)),
            Endpoint::Host(h) => Err(Error::platform("", format!("no host {h}: the platform has {}", self.hosts.len()))),
            Endpoint::Gateway => Err(Error::platform("", "a platform of zones has no gateway of its own")),
        };
        let (s, d) = (point(src)?, point(dst)?);
        self.global_route(s, d, out, 0)
    }
}
