//! Network topologies beyond the star: the links of a fabric and the route between two
//! of its end points (issue 28). SimGrid 3.32's routing zones are the reference
//! (`src/kernel/routing/*Zone.cpp`); each implementation cites the file it follows.
//!
//! A platform without a topology is today's star (NIC up and down links per host, an
//! optional backbone); the engine keeps its own fixed link numbering for it. A platform
//! with one routes every inter-host transfer over `Topology::route`.

use std::fmt::Debug;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::network::topology::routing::{RouteState, Routing};

pub mod cluster;

pub use cluster::{
    build_cluster, build_cluster_in, build_cluster_with, cluster_host_names, cluster_router_name, DragonflyRouting, SimgridCounters,
    TopologySpec,
};

/// Most hosts a platform may have: 2^20 (`platform` re-exports it).
pub const MAX_HOSTS: usize = 1 << 20;

/// Index of a link in a topology's link table (0..link_count).
pub type TopologyLink = u32;

/// How concurrent flows share a link (SimGrid's `sharing_policy`). SPLITDUPLEX is not a
/// kind of link: it is expanded into two SHARED links (`_UP`, `_DOWN`) when the
/// topology is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LinkSharing {
    /// Flows share the bandwidth (max-min).
    Shared,
    /// Every flow may use the whole bandwidth; the link only caps each flow.
    Fatpipe,
}

/// One link of a topology. Kept small (24 bytes): names are made on demand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkInfo {
    /// Bytes/s.
    pub bandwidth: f64,
    /// Seconds.
    pub latency: f64,
    pub sharing: LinkSharing,
}

/// An end point of a route inside one topology: one of its hosts (in SimGrid's host
/// order) or its gateway router (a cluster's `{prefix}{id}_router{suffix}`, a zone's
/// `gw_src`/`gw_dst`), through which nested zones reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Host(u32),
    Gateway,
}

/// A built topology: a link table and routes computed on demand (closed forms for
/// clusters, cached shortest paths for graphs; never an all-pairs table).
pub trait Topology: Debug + Send + Sync {
    /// SimGrid's name of the topology kind: `flat`, `torus`, `fat_tree`, `dragonfly`,
    /// `full`, `floyd`, `dijkstra`, `zones` (nested zones).
    fn kind(&self) -> &'static str;
    /// Number of hosts, numbered in SimGrid's host order.
    fn host_count(&self) -> usize;
    fn link_count(&self) -> usize;
    fn link(&self, link: TopologyLink) -> LinkInfo;
    /// The link's SimGrid name (e.g. `cluster_link_3_UP`, `cluster_limiter_5`).
    fn link_name(&self, link: TopologyLink) -> String;
    /// Append the links from `src` to `dst`, in the order a message crosses them, to
    /// `out`, and return the route's latency (the sum of its links' latencies, as
    /// SimGrid sums them). A host to itself gives its loopback link if the topology
    /// has one, else no link. No route is an error naming both end points.
    fn route(&self, src: Endpoint, dst: Endpoint, out: &mut Vec<TopologyLink>) -> Result<f64>;
    /// The route `routing` picks for one flow from `src` to `dst`, like [`Topology::route`]
    /// (issue 44). `minimal` is [`Topology::route`]; a topology answers the routings of its
    /// kind ([`Routing::kinds`]) and refuses the others.
    fn route_by(
        &self,
        routing: Routing,
        src: Endpoint,
        dst: Endpoint,
        _state: &mut dyn RouteState,
        out: &mut Vec<TopologyLink>,
    ) -> Result<f64> {
        match routing {
            Routing::Minimal => self.route(src, dst, out),
            r => Err(not_routed_here(r, self.kind())),
        }
    }
    /// The SimGrid `<cluster>` this topology was built from, if it is one (what `platform
    /// export` writes back as a `<cluster>`); `None` for graphs and nested zones.
    fn cluster_params(&self) -> Option<&ClusterParams> {
        None
    }
    /// A cluster's kind and parameters (`platform show`); `None` for graphs and nested zones.
    fn shape(&self) -> Option<Shape> {
        None
    }
    /// Number of routing zones (1 for a cluster or a single graph zone).
    fn zone_count(&self) -> usize {
        1
    }
    /// Host `host`'s private link to the fabric (its NIC), as (the link its sends leave
    /// by, the link its receives arrive by): one link twice when it is SHARED. Every route
    /// from the host crosses the first, every route to it the second, and no other host's
    /// route crosses either. `None` when the host has no such link (a torus, a host
    /// attached by several links); the penalty models (paper 004) need one per host.
    fn private_links(&self, _host: u32) -> Option<(TopologyLink, TopologyLink)> {
        None
    }
    /// θ, the largest load over bandwidth of any SHARED link when every host sends one byte
    /// to every other host along valid paths (`platform show`'s bisection certificate: every
    /// cut between k and n − k hosts then has at least k(n − k)/θ bytes/s of links; see
    /// summary.rs). `None` where not computed (only dragonflies compute it).
    fn uniform_congestion(&self) -> Option<f64> {
        None
    }
}

/// The error of a routing asked of a topology it does not apply to.
pub(crate) fn not_routed_here(routing: Routing, kind: &str) -> Error {
    Error::platform("network.routing", format!("routing `{}` does not apply to a `{kind}` topology", routing.name()))
}

/// The `topology` attribute of a SimGrid `<cluster>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ClusterKind {
    Flat,
    Torus,
    FatTree,
    Dragonfly,
}

/// A SimGrid `<cluster>` (XML_reference.rst), as both the XML reader and our JSON
/// `network.topology` fill it. Units are already converted: bytes/s, seconds, flop/s.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterParams {
    pub id: String,
    pub prefix: String,
    pub suffix: String,
    /// `radical` as inclusive ranges in document order (`0-3,8,10-11`); hosts are
    /// `prefix + number + suffix` for each number in order. Kept as ranges so a
    /// radical of 10^9 hosts is a limit error before anything is allocated.
    pub radical: Vec<(u64, u64)>,
    /// Flop/s of each host (the first power state).
    pub speed: f64,
    pub cores: u32,
    /// The private links of the hosts (`bw`, `lat`, `sharing_policy`: SPLITDUPLEX by
    /// default, or SHARED or FATPIPE).
    pub bandwidth: f64,
    pub latency: f64,
    pub sharing: ClusterLinkSharing,
    pub kind: ClusterKind,
    /// `topo_parameters`, verbatim (`"2;4,4;1,2;1,2"`, `"3,3,2"`, ...).
    pub topo_parameters: String,
    /// `bb_bw`, `bb_lat`, `bb_sharing_policy` (SHARED or FATPIPE): the backbone, if any.
    pub backbone: Option<(f64, f64, LinkSharing)>,
    /// `limiter_link`: bandwidth of a per-host FATPIPE link capping its in and out traffic.
    pub limiter_bandwidth: Option<f64>,
    /// `loopback_bw`, `loopback_lat`: a FATPIPE link for a host talking to itself.
    pub loopback: Option<(f64, f64)>,
    /// `router_id`, if given; else SimGrid's `{prefix}{id}_router{suffix}`.
    pub router_id: Option<String>,
}

/// `sharing_policy` of a cluster's private links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ClusterLinkSharing {
    /// Separate UP and DOWN links (SimGrid's default).
    Splitduplex,
    Shared,
    Fatpipe,
}

pub mod graph;
pub mod routing;
pub mod summary;
pub mod zones;

pub use summary::{summarize, summarize_star, Shape, ShapeKind, Summary};
