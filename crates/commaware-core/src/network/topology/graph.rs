//! Explicit routing zones: SimGrid 3.32's `Full`, `Floyd` and `Dijkstra` zones
//! (`src/kernel/routing/{FullZone,FloydZone,DijkstraZone}.cpp`), over the points of one
//! zone (its hosts and routers, or its child zones). A declared route is an edge from one
//! point to another carrying a list of links (and, between child zones, the gateways it
//! joins); Floyd and Dijkstra chain edges along the fewest links, as SimGrid counts cost.
//!
//! - `Full`: only the declared edges; a pair without one has no route.
//! - `Dijkstra` (and `DijkstraCache`): SimGrid's priority queue of (cost, node) pairs over
//!   the nodes in the order routes first named them, out-edges in declaration order,
//!   a strictly smaller cost replacing a predecessor; one predecessor array per source,
//!   computed on the first route from it and cached.
//! - `Floyd`: SimGrid's Floyd-Warshall (intermediate points in declaration order, a strictly
//!   smaller cost replacing a predecessor), whose choice among equal paths depends on every
//!   row, so it cannot be computed per source. It runs on the first route asked for, not at
//!   load, and only on zones of at most [`MAX_FLOYD_POINTS`] points (use Dijkstra beyond).

use std::collections::{BinaryHeap, HashMap};
use std::cmp::Reverse;
use std::sync::{Arc, Mutex, OnceLock};

use crate::network::topology::TopologyLink;

/// Most points (hosts, routers, child zones) of a Floyd zone: its all-pairs tables take
/// 8 bytes per pair and its computation points^3 steps.
pub const MAX_FLOYD_POINTS: usize = 1024;

/// A zone's routing algorithm (the `routing` attribute of a SimGrid `<zone>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    Full,
    Floyd,
    Dijkstra,
    /// SimGrid's `None`: no route at all (a zone of one host, or one only crossed through
    /// its gateways).
    Empty,
}

impl Routing {
    /// SimGrid's name of the kind, as `Topology::kind` gives it.
    pub fn kind(self) -> &'static str {
        match self {
            Routing::Full => "full",
            Routing::Floyd => "floyd",
            Routing::Dijkstra => "dijkstra",
            Routing::Empty => "none",
        }
    }
}

/// A declared route: `src` to `dst` (points of the zone) over `links`, in the order a
/// message crosses them; between child zones, the gateways `(gw_src, gw_dst)` it joins
/// (points of the whole platform, numbered by the caller).
#[derive(Debug, Clone)]
pub struct Edge<G> {
    pub src: u32,
    pub dst: u32,
    pub links: Vec<TopologyLink>,
    pub gateways: Option<(G, G)>,
}

/// The routes of one zone, and the paths between its points.
#[derive(Debug)]
pub struct GraphZone<G> {
    routing: Routing,
    points: usize,
    edges: Vec<Edge<G>>,
    /// (src, dst) -> edge.
    by_pair: HashMap<(u32, u32), u32>,
    /// Dijkstra: node number (order of first mention) of each point, and back.
    node_of: HashMap<u32, u32>,
    point_of_node: Vec<u32>,
    /// Dijkstra: out-edges of each node, in declaration order.
    out_edges: Vec<Vec<u32>>,
    /// Dijkstra: predecessor node of every node, per source node.
    dijkstra_cache: Mutex<HashMap<u32, Arc<Vec<u32>>>>,
    /// Floyd: predecessor point table (row = source), built on first use.
    floyd: OnceLock<Vec<i32>>,
}

/// Why a route could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddError {
    /// A route between these two points exists already.
    Duplicate { src: u32, dst: u32 },
    /// A Floyd zone with more than [`MAX_FLOYD_POINTS`] points.
    TooManyPoints,
}

impl<G: Copy> GraphZone<G> {
    pub fn new(routing: Routing) -> Self {
        GraphZone {
            routing,
            points: 0,
            edges: Vec::new(),
            by_pair: HashMap::new(),
            node_of: HashMap::new(),
            point_of_node: Vec::new(),
            out_edges: Vec::new(),
            dijkstra_cache: Mutex::new(HashMap::new()),
            floyd: OnceLock::new(),
        }
    }

    pub fn routing(&self) -> Routing {
        self.routing
    }

    /// A new point (host, router or child zone) of the zone; returns its number.
    pub fn add_point(&mut self) -> Result<u32, AddError> {
        if self.routing == Routing::Floyd && self.points >= MAX_FLOYD_POINTS {
            return Err(AddError::TooManyPoints);
        }
        self.points += 1;
        Ok((self.points - 1) as u32)
    }

    pub fn point_count(&self) -> usize {
        self.points
    }

    pub fn edge(&self, e: u32) -> &Edge<G> {
        &self.edges[e as usize]
    }

    /// The declared routes, in declaration order.
    pub fn edges(&self) -> &[Edge<G>] {
        &self.edges
    }

    fn node(&mut self, point: u32) -> u32 {
        if let Some(&n) = self.node_of.get(&point) {
            return n;
        }
        let n = self.point_of_node.len() as u32;
        self.node_of.insert(point, n);
        self.point_of_node.push(point);
        self.out_edges.push(Vec::new());
        n
    }

    /// Declare the route `edge` and, when `back` is given, the reverse route (`back`'s
    /// links already reversed, UP and DOWN swapped; gateways swapped), as SimGrid's
    /// `add_route` does with `symmetrical`. A route that exists already is an error (a Full
    /// zone does not add the reverse of a route from a point to itself; the others then
    /// refuse it as a duplicate, as SimGrid does).
    pub fn add_route(&mut self, edge: Edge<G>, back: Option<Edge<G>>) -> Result<(), AddError> {
        let back = back.filter(|b| !(self.routing == Routing::Full && b.src == b.dst));
        for e in std::iter::once(&edge).chain(back.as_ref()) {
            if self.by_pair.contains_key(&(e.src, e.dst)) {
                return Err(AddError::Duplicate { src: e.src, dst: e.dst });
            }
        }
        if back.as_ref().is_some_and(|b| (b.src, b.dst) == (edge.src, edge.dst)) {
            return Err(AddError::Duplicate { src: edge.src, dst: edge.dst });
        }
        for e in std::iter::once(edge).chain(back) {
            let id = self.edges.len() as u32;
            self.by_pair.insert((e.src, e.dst), id);
            if self.routing == Routing::Dijkstra {
                let (s, _) = (self.node(e.src), self.node(e.dst));
                self.out_edges[s as usize].push(id);
            }
            self.edges.push(e);
        }
        Ok(())
    }

    /// The edges from `src` to `dst`, in order; `None` when there is no route. A point to
    /// itself is its declared route to itself if any, else no edge.
    pub fn path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        if src == dst {
            return Some(self.by_pair.get(&(src, dst)).map(|&e| vec![e]).unwrap_or_default());
        }
        match self.routing {
            Routing::Empty => None,
            Routing::Full => self.by_pair.get(&(src, dst)).map(|&e| vec![e]),
            Routing::Floyd => self.floyd_path(src, dst),
            Routing::Dijkstra => self.dijkstra_path(src, dst),
        }
    }

    fn floyd_path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let n = self.points;
        let pred = self.floyd.get_or_init(|| {
            let mut cost = vec![u64::MAX; n * n];
            let mut pred = vec![-1i32; n * n];
            for e in &self.edges {
                let i = e.src as usize * n + e.dst as usize;
                cost[i] = e.links.len() as u64;
                pred[i] = e.src as i32;
            }
            for c in 0..n {
                for a in 0..n {
                    let ac = cost[a * n + c];
                    if ac == u64::MAX {
                        continue;
                    }
                    for b in 0..n {
                        let cb = cost[c * n + b];
                        let ab = a * n + b;
                        if cb < u64::MAX && (cost[ab] == u64::MAX || ac + cb < cost[ab]) {
                            cost[ab] = ac + cb;
                            pred[ab] = pred[c * n + b];
                        }
                    }
                }
            }
            pred
        });
        let mut edges = Vec::new();
        let mut cur = dst as usize;
        loop {
            let p = pred[src as usize * n + cur];
            if p < 0 || edges.len() > n {
                return None;
            }
            edges.push(*self.by_pair.get(&(p as u32, cur as u32))?);
            cur = p as usize;
            if cur == src as usize {
                break;
            }
        }
        edges.reverse();
        Some(edges)
    }

    fn dijkstra_path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let (&s, &d) = (self.node_of.get(&src)?, self.node_of.get(&dst)?);
        let pred = {
            let mut cache = self.dijkstra_cache.lock().unwrap_or_else(|p| p.into_inner());
            cache.entry(s).or_insert_with(|| Arc::new(self.dijkstra_from(s))).clone()
        };
        let mut edges = Vec::new();
        let mut v = d;
        while v != s {
            let p = pred[v as usize];
            if p == u32::MAX || edges.len() > self.point_of_node.len() {
                return None;
            }
            edges.push(*self.by_pair.get(&(self.point_of_node[p as usize], self.point_of_node[v as usize]))?);
            v = p;
        }
        edges.reverse();
        Some(edges)
    }

    /// Predecessor node of every node on the paths from node `s` (u32::MAX: unreached).
    fn dijkstra_from(&self, s: u32) -> Vec<u32> {
        let n = self.point_of_node.len();
        let mut cost = vec![u64::MAX; n];
        let mut pred = vec![u32::MAX; n];
        cost[s as usize] = 0;
        let mut queue = BinaryHeap::with_capacity(n);
        for (i, &c) in cost.iter().enumerate() {
            queue.push(Reverse((c, i as u32)));
        }
        while let Some(Reverse((_, v))) = queue.pop() {
            let cv = cost[v as usize];
            if cv == u64::MAX {
                continue; // unreached: SimGrid's sum would wrap; nothing to relax from
            }
            for &e in &self.out_edges[v as usize] {
                let edge = &self.edges[e as usize];
                let u = self.node_of[&edge.dst] as usize;
                let c = cv + edge.links.len() as u64;
                if c < cost[u] {
                    cost[u] = c;
                    pred[u] = v;
                    queue.push(Reverse((c, u as u32)));
                }
            }
        }
        pred
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(src: u32, dst: u32, links: &[u32]) -> Edge<u32> {
        Edge { src, dst, links: links.to_vec(), gateways: None }
    }

    fn zone(routing: Routing, points: u32, routes: &[(u32, u32, &[u32])]) -> GraphZone<u32> {
        let mut z = GraphZone::new(routing);
        for _ in 0..points {
            z.add_point().unwrap();
        }
        for &(s, d, l) in routes {
            let back: Vec<u32> = l.iter().rev().copied().collect();
            z.add_route(edge(s, d, l), Some(edge(d, s, &back))).unwrap();
        }
        z
    }

    fn links(z: &GraphZone<u32>, s: u32, d: u32) -> Option<Vec<u32>> {
        z.path(s, d).map(|p| p.iter().flat_map(|&e| z.edge(e).links.clone()).collect())
    }

    #[test]
    fn shortest_paths_count_links_and_full_knows_only_declared_routes() {
        // 0 -1- 1 -2- 2, and a direct 0-2 route of three links: the two-link path wins.
        let routes: &[(u32, u32, &[u32])] = &[(0, 1, &[1]), (1, 2, &[2]), (0, 2, &[7, 8, 9])];
        for r in [Routing::Floyd, Routing::Dijkstra] {
            let z = zone(r, 3, routes);
            assert_eq!(links(&z, 0, 2), Some(vec![1, 2]), "{r:?}");
            assert_eq!(links(&z, 2, 0), Some(vec![2, 1]), "{r:?}");
        }
        let z = zone(Routing::Full, 3, routes);
        assert_eq!(links(&z, 0, 2), Some(vec![7, 8, 9]));
        let z = zone(Routing::Full, 3, &routes[..2]);
        assert_eq!(links(&z, 0, 2), None);
        assert_eq!(links(&z, 1, 1), Some(vec![]));
    }

    #[test]
    fn ties_follow_simgrids_order() {
        // A square 0-1-3, 0-2-3: two paths of two links from 0 to 3.
        let routes: &[(u32, u32, &[u32])] = &[(0, 1, &[1]), (0, 2, &[2]), (1, 3, &[3]), (2, 3, &[4])];
        // Dijkstra pops (cost, node) in order: node 1 (first named) relaxes 3 first.
        assert_eq!(links(&zone(Routing::Dijkstra, 4, routes), 0, 3), Some(vec![1, 3]));
        // Floyd: intermediate 1 is tried before 2, and 2 is not strictly shorter.
        assert_eq!(links(&zone(Routing::Floyd, 4, routes), 0, 3), Some(vec![1, 3]));
    }

    #[test]
    fn duplicates_and_floyd_size_are_refused() {
        let mut z = zone(Routing::Full, 2, &[(0, 1, &[1])]);
        assert_eq!(z.add_route(edge(1, 0, &[2]), None), Err(AddError::Duplicate { src: 1, dst: 0 }));
        let mut z: GraphZone<u32> = GraphZone::new(Routing::Floyd);
        for _ in 0..MAX_FLOYD_POINTS {
            z.add_point().unwrap();
        }
        assert_eq!(z.add_point(), Err(AddError::TooManyPoints));
    }
}
