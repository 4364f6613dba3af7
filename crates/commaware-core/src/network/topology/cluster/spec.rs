//! `network.topology` of our JSON platforms: SimGrid's cluster topologies with named fields
//! (docs/topologies.md gives the SimGrid `topo_parameters` each one equals). Converted to a
//! [`ClusterParams`] and built by [`super::build_cluster_with`].

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{check_amount, Error, ErrorKind, Result};
use crate::network::topology::{ClusterKind, ClusterLinkSharing, ClusterParams, LinkSharing, Topology};

use super::{build_cluster_with, DragonflyRouting};

/// `sharing_policy` of a topology's links (SimGrid's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum PrivateSharing {
    SPLITDUPLEX,
    SHARED,
    FATPIPE,
}

/// `bb_sharing_policy` of a backbone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum BackboneSharing {
    SHARED,
    FATPIPE,
}

/// A dragonfly's routing: SimGrid 3.32's (its chassis quirk included) or minimal routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoutingName {
    Simgrid,
    Minimal,
}

/// A link's bandwidth (bytes/s) and latency (s).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub bandwidth: f64,
    #[serde(default)]
    pub latency: f64,
}

/// A FLAT cluster's backbone (SimGrid's `bb_bw`, `bb_lat`, `bb_sharing_policy`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackboneSpec {
    pub bandwidth: f64,
    #[serde(default)]
    pub latency: f64,
    /// SHARED (default) or FATPIPE.
    #[serde(default)]
    pub sharing: Option<BackboneSharing>,
}

/// The fabric of a platform (issue 28): one of SimGrid's cluster topologies. Its hosts are
/// the platform's hosts in order. Common fields: `id` (SimGrid's cluster id, the prefix of
/// its link names; default `cluster`), `bandwidth` and `latency` of every link of the
/// fabric (default: `network.bandwidth`, `network.latency`), `sharing` (SPLITDUPLEX by
/// default), `limiter_bandwidth` (SimGrid's `limiter_link`), `loopback`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologySpec {
    /// SimGrid's FLAT cluster: a private link per host, an optional backbone.
    Flat {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        bandwidth: Option<f64>,
        #[serde(default)]
        latency: Option<f64>,
        #[serde(default)]
        sharing: Option<PrivateSharing>,
        #[serde(default)]
        limiter_bandwidth: Option<f64>,
        #[serde(default)]
        loopback: Option<LinkSpec>,
        #[serde(default)]
        backbone: Option<BackboneSpec>,
    },
    /// SimGrid's TORUS `X,Y,Z,...`: `dims` = [X, Y, Z, ...].
    Torus {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        bandwidth: Option<f64>,
        #[serde(default)]
        latency: Option<f64>,
        #[serde(default)]
        sharing: Option<PrivateSharing>,
        #[serde(default)]
        limiter_bandwidth: Option<f64>,
        #[serde(default)]
        loopback: Option<LinkSpec>,
        dims: Vec<u64>,
    },
    /// SimGrid's FAT_TREE `L;d1,..,dL;u1,..,uL;c1,..,cL`: `down` = children per node,
    /// `up` = parents per node, `parallel` = cables between a node and each parent
    /// (default all 1), level by level from the hosts; `levels` (optional) = L.
    FatTree {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        bandwidth: Option<f64>,
        #[serde(default)]
        latency: Option<f64>,
        #[serde(default)]
        sharing: Option<PrivateSharing>,
        #[serde(default)]
        limiter_bandwidth: Option<f64>,
        #[serde(default)]
        loopback: Option<LinkSpec>,
        #[serde(default)]
        levels: Option<u64>,
        down: Vec<u64>,
        up: Vec<u64>,
        #[serde(default)]
        parallel: Option<Vec<u64>>,
    },
    /// SimGrid's DRAGONFLY `G,b;C,k;R,g;N`: `groups` = [G, blue links between two groups],
    /// `chassis` = [C per group, black links], `routers` = [R per chassis, green links],
    /// `nodes` = N hosts per router; `routing`: `simgrid` (default) or `minimal`.
    Dragonfly {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        bandwidth: Option<f64>,
        #[serde(default)]
        latency: Option<f64>,
        #[serde(default)]
        sharing: Option<PrivateSharing>,
        #[serde(default)]
        limiter_bandwidth: Option<f64>,
        #[serde(default)]
        loopback: Option<LinkSpec>,
        groups: [u64; 2],
        chassis: [u64; 2],
        routers: [u64; 2],
        nodes: u64,
        #[serde(default)]
        routing: Option<RoutingName>,
    },
}

const FIELD: &str = "network.topology";

fn positive_list(name: &str, v: &[u64]) -> Result<String> {
    if v.is_empty() {
        return Err(Error::platform(format!("{FIELD}.{name}"), "must list at least one value"));
    }
    if let Some(i) = v.iter().position(|&x| x == 0) {
        return Err(Error::platform(format!("{FIELD}.{name}[{i}]"), "is 0, every value must be > 0"));
    }
    Ok(v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
}

fn product(v: &[u64]) -> u128 {
    v.iter().fold(1u128, |a, &x| a.saturating_mul(x as u128))
}

impl TopologySpec {
    /// SimGrid's name of the kind.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Flat { .. } => "flat",
            Self::Torus { .. } => "torus",
            Self::FatTree { .. } => "fat_tree",
            Self::Dragonfly { .. } => "dragonfly",
        }
    }

    /// The SimGrid `<cluster>` this topology equals, for `hosts` hosts numbered from 0, and
    /// the dragonfly routing. `bandwidth` and `latency` are the network's, used where the
    /// topology gives none. Wrong lists (empty, zeros, lengths that disagree, a host count
    /// other than `hosts`) are errors naming the field.
    pub fn to_params(&self, hosts: usize, bandwidth: f64, latency: f64) -> Result<(ClusterParams, DragonflyRouting)> {
        let (id, bw, lat, sharing, limiter, loopback) = match self {
            Self::Flat { id, bandwidth, latency, sharing, limiter_bandwidth, loopback, .. }
            | Self::Torus { id, bandwidth, latency, sharing, limiter_bandwidth, loopback, .. }
            | Self::FatTree { id, bandwidth, latency, sharing, limiter_bandwidth, loopback, .. }
            | Self::Dragonfly { id, bandwidth, latency, sharing, limiter_bandwidth, loopback, .. } => {
                (id, bandwidth, latency, sharing, limiter_bandwidth, loopback)
            }
        };
        let bw = bw.unwrap_or(bandwidth);
        let lat = lat.unwrap_or(latency);
        check_amount(ErrorKind::Platform, &format!("{FIELD}.bandwidth"), bw, true)?;
        check_amount(ErrorKind::Platform, &format!("{FIELD}.latency"), lat, false)?;
        if let Some(b) = limiter {
            check_amount(ErrorKind::Platform, &format!("{FIELD}.limiter_bandwidth"), *b, true)?;
        }
        if let Some(l) = loopback {
            check_amount(ErrorKind::Platform, &format!("{FIELD}.loopback.bandwidth"), l.bandwidth, true)?;
            check_amount(ErrorKind::Platform, &format!("{FIELD}.loopback.latency"), l.latency, false)?;
        }
        let mut routing = DragonflyRouting::Simgrid;
        let mut backbone = None;
        let (kind, topo, wanted): (ClusterKind, String, u128) = match self {
            Self::Flat { backbone: bb, .. } => {
                if let Some(b) = bb {
                    check_amount(ErrorKind::Platform, &format!("{FIELD}.backbone.bandwidth"), b.bandwidth, true)?;
                    check_amount(ErrorKind::Platform, &format!("{FIELD}.backbone.latency"), b.latency, false)?;
                    let s = match b.sharing {
                        Some(BackboneSharing::FATPIPE) => LinkSharing::Fatpipe,
                        _ => LinkSharing::Shared,
                    };
                    backbone = Some((b.bandwidth, b.latency, s));
                }
                (ClusterKind::Flat, String::new(), hosts as u128)
            }
            Self::Torus { dims, .. } => (ClusterKind::Torus, positive_list("dims", dims)?, product(dims)),
            Self::FatTree { levels, down, up, parallel, .. } => {
                let ones;
                let parallel = match parallel {
                    Some(p) => p.as_slice(),
                    None => {
                        ones = vec![1; down.len()];
                        &ones
                    }
                };
                let d = positive_list("down", down)?;
                let u = positive_list("up", up)?;
                let c = positive_list("parallel", parallel)?;
                let l = levels.unwrap_or(down.len() as u64);
                for (name, v) in [("down", down.as_slice()), ("up", up.as_slice()), ("parallel", parallel)] {
                    if v.len() as u64 != l {
                        return Err(Error::platform(
                            format!("{FIELD}.{name}"),
                            format!("has {} values for {l} levels (down, up and parallel give one value per level)", v.len()),
                        ));
                    }
                }
                (ClusterKind::FatTree, format!("{l};{d};{u};{c}"), product(down))
            }
            Self::Dragonfly { groups, chassis, routers, nodes, routing: r, .. } => {
                let g = positive_list("groups", groups)?;
                let c = positive_list("chassis", chassis)?;
                let rt = positive_list("routers", routers)?;
                positive_list("nodes", &[*nodes])?;
                if r == &Some(RoutingName::Minimal) {
                    routing = DragonflyRouting::Minimal;
                }
                (ClusterKind::Dragonfly, format!("{g};{c};{rt};{nodes}"), product(&[groups[0], chassis[0], routers[0], *nodes]))
            }
        };
        if wanted != hosts as u128 {
            return Err(Error::platform(
                FIELD,
                format!("the {} topology has {wanted} hosts but the platform has {hosts}; they must be equal", self.kind_name()),
            ));
        }
        let sharing = match sharing {
            Some(PrivateSharing::SHARED) => ClusterLinkSharing::Shared,
            Some(PrivateSharing::FATPIPE) => ClusterLinkSharing::Fatpipe,
            _ => ClusterLinkSharing::Splitduplex,
        };
        let params = ClusterParams {
            id: id.clone().unwrap_or_else(|| "cluster".into()),
            prefix: String::new(),
            suffix: String::new(),
            radical: vec![(0, hosts.saturating_sub(1) as u64)],
            speed: 1.0,
            cores: 1,
            bandwidth: bw,
            latency: lat,
            sharing,
            kind,
            topo_parameters: topo,
            backbone,
            limiter_bandwidth: *limiter,
            loopback: loopback.as_ref().map(|l| (l.bandwidth, l.latency)),
            router_id: None,
        };
        Ok((params, routing))
    }

    /// Build the topology for `hosts` hosts (see [`Self::to_params`]); errors name
    /// `network.topology`.
    pub fn build(&self, hosts: usize, bandwidth: f64, latency: f64) -> Result<Arc<dyn Topology>> {
        let (params, routing) = self.to_params(hosts, bandwidth, latency)?;
        build_cluster_with(&params, routing).map_err(|mut e| {
            e.field = if e.field.is_empty() { FIELD.into() } else { format!("{FIELD} ({})", e.field) };
            e
        })
    }
}
