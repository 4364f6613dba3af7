//! Routing beyond minimal (issue 44): how a flow's route is chosen on a topology when the
//! transfer starts. `minimal` is SimGrid 3.32's routing, exactly (the dragonfly's chassis
//! quirk and its `topology.routing` switch included); every other routing is commaware's.
//!
//! The choice is made once per flow, when its transfer starts (flow level: no re-routing
//! mid-flow), and depends only on the seed, the platform and the order in which flows
//! start. Valiant's intermediate is one random draw; ECMP hashes the seed, the end points
//! and the message's number; the adaptive routings read the load of each link: the number
//! of transfers in flight whose route crosses it (from its start, latency included, to its
//! last byte).

use crate::error::{Error, Result};
use super::TopologyLink;

/// A routing of `network.routing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Routing {
    /// SimGrid 3.32's routing (each topology's; the default).
    #[default]
    Minimal,
    /// Dragonfly: a minimal route to a random router of a random group other than the
    /// source's and the destination's, then a minimal route on (Kim et al., ISCA 2008,
    /// "VAL"); traffic within a group stays minimal. Torus: a dimension-order route to a
    /// random node, then one on to the destination (Valiant's two phases).
    Valiant,
    /// Dragonfly, UGAL-G: the minimal or one Valiant candidate, whichever has the lower
    /// [`ugal_cost`] over all its links.
    UgalG,
    /// Dragonfly, UGAL-L: the same from the source router's own link on each candidate.
    UgalL,
    /// Fat tree: at each level up, the parent (and parallel cable) picked by a seeded hash
    /// of source, destination and message number, among all minimal parents.
    Ecmp,
    /// Fat tree: at each level up, the minimal parent whose up-link carries the fewest
    /// flows (ties: SimGrid's d-mod-k choice first, then the next ones in order).
    Adaptive,
}

impl Routing {
    pub const NAMES: [&'static str; 6] = ["minimal", "valiant", "ugal-g", "ugal-l", "ecmp", "adaptive"];

    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "minimal" => Self::Minimal,
            "valiant" => Self::Valiant,
            "ugal-g" => Self::UgalG,
            "ugal-l" => Self::UgalL,
            "ecmp" => Self::Ecmp,
            "adaptive" => Self::Adaptive,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Valiant => "valiant",
            Self::UgalG => "ugal-g",
            Self::UgalL => "ugal-l",
            Self::Ecmp => "ecmp",
            Self::Adaptive => "adaptive",
        }
    }

    /// The topology kinds (`Topology::kind`) this routing applies to; `minimal` applies to
    /// every platform, the star included.
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            Self::Minimal => &[],
            Self::Valiant => &["dragonfly", "torus"],
            Self::UgalG | Self::UgalL => &["dragonfly"],
            Self::Ecmp | Self::Adaptive => &["fat_tree"],
        }
    }

    /// What the routing is, for `platform show`: SimGrid's or commaware's own.
    pub fn description(self) -> &'static str {
        match self {
            Self::Minimal => "SimGrid 3.32's routing",
            Self::Valiant => "commaware's (not SimGrid's): Valiant, through a random intermediate (seeded)",
            Self::UgalG => "commaware's (not SimGrid's): UGAL-G, minimal or Valiant by the global link loads",
            Self::UgalL => "commaware's (not SimGrid's): UGAL-L, minimal or Valiant by the source router's link loads",
            Self::Ecmp => "commaware's (not SimGrid's): ECMP, up-links by a seeded hash of each flow",
            Self::Adaptive => "commaware's (not SimGrid's): adaptive, the least loaded up-link at each level",
        }
    }

    /// Does this routing apply to a platform whose topology is `kind` (`None`: the star)?
    pub fn applies_to(self, kind: Option<&str>) -> bool {
        self == Self::Minimal || kind.is_some_and(|k| self.kinds().contains(&k))
    }

    /// The routings that apply to a platform whose topology is `kind` (`None`: the star).
    pub fn for_kind(kind: Option<&str>) -> Vec<Self> {
        Self::NAMES.iter().filter_map(|n| Self::from_name(n)).filter(|r| r.applies_to(kind)).collect()
    }

    /// Does this routing read the links' loads (the engine then counts flows per link)?
    pub fn adaptive(self) -> bool {
        matches!(self, Self::UgalG | Self::UgalL | Self::Adaptive)
    }

    /// The routing named `name` for a platform whose topology is `kind` (`None`: the star),
    /// or an error naming `field`: an unknown name, or a routing for another topology.
    pub fn for_topology(name: &str, kind: Option<&str>, field: &str) -> Result<Self> {
        let routing = Self::from_name(name).ok_or_else(|| {
            Error::platform(field, format!("unknown routing `{name}`; known: {}", Self::NAMES.join(", ")))
        })?;
        if routing.applies_to(kind) {
            return Ok(routing);
        }
        let on = match kind {
            None => "the star (a platform without a topology)".to_string(),
            Some(k) => format!("a `{k}` topology"),
        };
        Err(Error::platform(
            field,
            format!("routing `{name}` applies to {} topologies only, not to {on}", routing.kinds().join(" and ")),
        ))
    }
}

/// What a routing beyond minimal asks of the engine for the flow being routed.
pub trait RouteState {
    /// The flow's next seeded draw, uniform in `0..n` (n > 0).
    fn draw(&mut self, n: u64) -> u64;
    /// ECMP's hash of the seed, the flow's end points, its message number and `salt` (the
    /// level): the same flow hashes the same way whatever else is in flight.
    fn flow_hash(&self, salt: u64) -> u64;
    /// Transfers in flight whose forward route crosses `link`.
    fn flows_on(&self, link: TopologyLink) -> u32;
}

/// UGAL's cost of a candidate route: its hop count times the load of its most loaded link,
/// a link's load being (flows on it + 1) / its bandwidth: the inverse of the equal share the
/// new flow would get there, seconds per byte. It is Kim et al.'s queue length × hops with
/// the flow level's stand-in for a queue (flows, not bytes left: a flow's bytes left change
/// at every event and the engine does not track them per link). `links` are (flows, bandwidth).
pub fn ugal_cost(hops: usize, links: impl Iterator<Item = (u32, f64)>) -> f64 {
    let worst = links.map(|(flows, bw)| (flows as f64 + 1.0) / bw).fold(0.0, f64::max);
    hops as f64 * worst
}

/// A [`RouteState`] with the draws and loads a test lists (draws cycle; loads default 0).
#[cfg(test)]
pub(crate) struct FixedState {
    pub draws: Vec<u64>,
    pub next: usize,
    pub hash: u64,
    pub loads: std::collections::HashMap<TopologyLink, u32>,
}

#[cfg(test)]
impl FixedState {
    pub fn new(draws: &[u64]) -> Self {
        FixedState { draws: draws.to_vec(), next: 0, hash: 0, loads: Default::default() }
    }
}

#[cfg(test)]
impl RouteState for FixedState {
    fn draw(&mut self, n: u64) -> u64 {
        let v = self.draws[self.next % self.draws.len()];
        self.next += 1;
        assert!(v < n, "test draw {v} out of 0..{n}");
        v
    }
    fn flow_hash(&self, salt: u64) -> u64 {
        self.hash.wrapping_add(salt)
    }
    fn flows_on(&self, link: TopologyLink) -> u32 {
        self.loads.get(&link).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_kinds_are_checked() {
        for name in Routing::NAMES {
            assert_eq!(Routing::from_name(name).unwrap().name(), name);
        }
        assert_eq!(Routing::for_topology("minimal", None, "f").unwrap(), Routing::Minimal);
        assert_eq!(Routing::for_topology("valiant", Some("torus"), "f").unwrap(), Routing::Valiant);
        let e = Routing::for_topology("ecmp", Some("dragonfly"), "network.routing").unwrap_err();
        assert!(e.to_string().contains("applies to fat_tree topologies only, not to a `dragonfly` topology"), "{e}");
        let e = Routing::for_topology("ugal-g", None, "network.routing").unwrap_err();
        assert!(e.to_string().contains("not to the star"), "{e}");
        let e = Routing::for_topology("random", Some("torus"), "network.routing").unwrap_err();
        assert!(e.to_string().contains("unknown routing `random`"), "{e}");
    }

    #[test]
    fn ugal_cost_is_hops_times_the_worst_link() {
        // 3 hops; links at 1 GB/s with 0 flows and 2 GB/s with 3 flows: worst 4/2e9.
        let c = ugal_cost(3, [(0, 1e9), (3, 2e9)].into_iter());
        assert!((c - 3.0 * 2e-9).abs() < 1e-24, "{c}");
        assert_eq!(ugal_cost(2, std::iter::empty()), 0.0);
    }
}
