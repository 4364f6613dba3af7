//! Topologies (issue 28): the route between two hosts of a platform, by name, as SimGrid
//! prints it (links in the order a message crosses them, latency in seconds).

use commaware_core::network::topology::{Endpoint, Topology};
use commaware_core::Error;
use pyo3::prelude::*;

use crate::errors::guarded;
use crate::simulation::Platform;

/// (latency in s, link names in order) of the route from host `src` to host `dst` of a
/// platform with a topology; a platform without one (the star) or an unknown host is a
/// PlatformError.
#[pyfunction]
pub(crate) fn platform_route(platform: &Platform, src: &str, dst: &str) -> PyResult<(f64, Vec<String>)> {
    guarded(|| {
        let p = &platform.0;
        let topology: &dyn Topology =
            p.topology.as_deref().ok_or_else(|| Error::platform("", "the platform is a star: it has no topology to route on"))?;
        let host = |name: &str| {
            p.host_index(name).map(|i| Endpoint::Host(i as u32)).ok_or_else(|| Error::platform("", format!("no host `{name}`")))
        };
        let (s, d) = (host(src)?, host(dst)?);
        let mut links = Vec::new();
        let latency = topology.route(s, d, &mut links)?;
        Ok((latency, links.into_iter().map(|l| topology.link_name(l)).collect()))
    })
}
