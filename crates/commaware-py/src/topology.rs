//! A platform's fabric (issue 28): the route between two hosts and the link table, as the
//! core computes them. Conversion only.

use commaware_core::network::topology::{Endpoint, LinkSharing};
use commaware_core::Error;
use pyo3::prelude::*;

use crate::errors::guarded;
use crate::simulation::Platform;

fn topology(p: &Platform) -> Result<&dyn commaware_core::network::topology::Topology, Error> {
    p.0.topology.as_deref().ok_or_else(|| Error::platform("network.topology", "the platform has no topology (it is a star)"))
}

fn sharing_name(s: LinkSharing) -> &'static str {
    match s {
        LinkSharing::Shared => "SHARED",
        LinkSharing::Fatpipe => "FATPIPE",
    }
}

/// The route from host `src` to host `dst` (names): its latency (s) and its links in the
/// order a message crosses them, each as (name, bandwidth B/s, latency s, sharing).
/// `source` names the platform's file in errors.
#[pyfunction]
#[pyo3(signature = (platform, src, dst, source=""))]
pub(crate) fn platform_route(
    platform: &Platform,
    src: &str,
    dst: &str,
    source: &str,
) -> PyResult<(f64, Vec<(String, f64, f64, String)>)> {
    guarded(|| route(platform, src, dst).map_err(|e| e.in_source(source)))
}

fn route(platform: &Platform, src: &str, dst: &str) -> Result<(f64, Vec<(String, f64, f64, String)>), Error> {
    let t = topology(platform)?;
    let host = |name: &str, field: &str| {
        platform.0.host_index(name).map(|i| Endpoint::Host(i as u32)).ok_or_else(|| Error::platform(field, format!("unknown host `{name}`")))
    };
    let (s, d) = (host(src, "src")?, host(dst, "dst")?);
    let mut links = Vec::new();
    let latency = t.route(s, d, &mut links)?;
    Ok((
        latency,
        links
            .into_iter()
            .map(|l| {
                let i = t.link(l);
                (t.link_name(l), i.bandwidth, i.latency, sharing_name(i.sharing).to_string())
            })
            .collect(),
    ))
}

/// Every link of the platform's topology: (name, bandwidth B/s, latency s, sharing).
#[pyfunction]
pub(crate) fn platform_links(platform: &Platform) -> PyResult<Vec<(String, f64, f64, String)>> {
    guarded(|| {
        let t = topology(platform)?;
        Ok((0..t.link_count() as u32)
            .map(|l| {
                let i = t.link(l);
                (t.link_name(l), i.bandwidth, i.latency, sharing_name(i.sharing).to_string())
            })
            .collect())
    })
}

/// The platform as another format's text: `simgrid` (a SimGrid 4.1 XML platform file) or
/// `json` (our JSON platform, for a platform that is one SimGrid cluster). `source` names
/// the platform's file in errors.
#[pyfunction]
#[pyo3(signature = (platform, format, source=""))]
pub(crate) fn platform_export(py: Python<'_>, platform: &Platform, format: &str, source: &str) -> PyResult<String> {
    use commaware_core::network::simgrid_export;
    let p = &platform.0;
    py.allow_threads(|| {
        guarded(|| {
            let r = match format {
                "simgrid" => simgrid_export::to_simgrid_xml(p),
                "json" => simgrid_export::to_json(p).map(|v| {
                    let mut s = serde_json::to_string_pretty(&v).expect("a JSON value serializes");
                    s.push('\n');
                    s
                }),
                other => Err(Error::new(
                    commaware_core::ErrorKind::Options,
                    "--format",
                    format!("unknown export format `{other}`; expected simgrid or json"),
                )),
            };
            r.map_err(|e| e.in_source(source))
        })
    })
}
