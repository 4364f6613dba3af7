//! A platform's fabric (issue 28): the route between two hosts and the link table, as the
//! core computes them. Conversion only.

use commaware_core::network::topology::routing::Routing;
use commaware_core::network::topology::{summary, Endpoint, LinkSharing};
use commaware_core::Error;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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

/// What `commaware platform show` prints: hosts (count, first and last `ends` names), links
/// (count, by sharing), zones, the topology's kind and parameters with the SimGrid string they
/// equal, diameter in hops, total and bisection bandwidth (`None` with the reason where not given).
#[pyfunction]
#[pyo3(signature = (platform, ends=3))]
pub(crate) fn platform_summary<'py>(py: Python<'py>, platform: &Platform, ends: usize) -> PyResult<Bound<'py, PyDict>> {
    let p = &platform.0;
    let s = match p.topology.as_deref() {
        Some(t) => summary::summarize(t),
        None => {
            let up: Vec<f64> = p.hosts.iter().map(|h| h.bandwidth_up).collect();
            let down: Vec<f64> = p.hosts.iter().map(|h| h.bandwidth_down).collect();
            summary::summarize_star(&up, &down, p.network.backbone)
        }
    };
    let d = PyDict::new(py);
    d.set_item("kind", &s.kind)?;
    let names: Vec<&str> = p.hosts.iter().map(|h| h.name.as_str()).collect();
    let hosts = PyDict::new(py);
    hosts.set_item("count", s.hosts)?;
    hosts.set_item("first", &names[..ends.min(names.len())])?;
    hosts.set_item("last", &names[names.len().saturating_sub(ends).max(ends.min(names.len()))..])?;
    d.set_item("hosts", hosts)?;
    let links = PyDict::new(py);
    links.set_item("count", s.links)?;
    links.set_item("SHARED", s.shared_links)?;
    links.set_item("FATPIPE", s.fatpipe_links)?;
    d.set_item("links", links)?;
    d.set_item("zones", s.zones)?;
    d.set_item("parameters", s.shape.as_ref().map(|sh| shape_dict(py, sh)).transpose()?)?;
    d.set_item(
        "simgrid",
        s.shape.as_ref().map(|sh| {
            let (kind, params) = sh.simgrid();
            let g = PyDict::new(py);
            g.set_item("topology", kind)?;
            g.set_item("topo_parameters", params)?;
            Ok::<_, PyErr>(g)
        }).transpose()?,
    )?;
    d.set_item("total_bandwidth_bytes_per_s", s.total_bandwidth)?;
    d.set_item("diameter_hops", s.diameter_hops.value)?;
    d.set_item("diameter_how", &s.diameter_hops.how)?;
    d.set_item("bisection_bandwidth_bytes_per_s", s.bisection_bandwidth.value)?;
    d.set_item("bisection_how", &s.bisection_bandwidth.how)?;
    let config = PyList::empty(py);
    for c in &p.simgrid_config {
        let item = PyDict::new(py);
        item.set_item("setting", &c.setting)?;
        item.set_item("value", &c.value)?;
        item.set_item("applied_as", &c.applied_as)?;
        config.append(item)?;
    }
    d.set_item("simgrid_config", config)?;
    let routing = PyDict::new(py);
    routing.set_item("name", p.routing.name())?;
    routing.set_item("seed", p.network.routing_seed)?;
    routing.set_item("how", p.routing.description())?;
    let kind = p.topology.as_deref().map(|t| t.kind());
    routing.set_item("available", Routing::for_kind(kind).iter().map(|r| r.name()).collect::<Vec<_>>())?;
    d.set_item("routing", routing)?;
    let unmodelled = PyList::empty(py);
    for u in &p.simgrid_unmodelled {
        let item = PyDict::new(py);
        item.set_item("what", &u.what)?;
        item.set_item("count", u.count)?;
        item.set_item("first_at", &u.first_at)?;
        unmodelled.append(item)?;
    }
    d.set_item("simgrid_unmodelled", unmodelled)?;
    Ok(d)
}

fn shape_dict<'py>(py: Python<'py>, sh: &summary::Shape) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bandwidth_bytes_per_s", sh.bandwidth)?;
    d.set_item("sharing", if sh.split { "SPLITDUPLEX" } else { "SHARED" })?;
    d.set_item("limiter_bytes_per_s", sh.limiter)?;
    match &sh.kind {
        summary::ShapeKind::Flat { backbone } => {
            d.set_item("backbone", backbone.map(|b| (b.bandwidth, b.latency, sharing_name(b.sharing))))?;
        }
        summary::ShapeKind::Torus { dims } => d.set_item("dims", dims)?,
        summary::ShapeKind::FatTree { down, up, parallel } => {
            d.set_item("levels", down.len())?;
            d.set_item("down", down)?;
            d.set_item("up", up)?;
            d.set_item("parallel", parallel)?;
        }
        summary::ShapeKind::Dragonfly { groups, chassis, routers, nodes } => {
            d.set_item("groups", [groups.0, groups.1])?;
            d.set_item("chassis", [chassis.0, chassis.1])?;
            d.set_item("routers", [routers.0, routers.1])?;
            d.set_item("nodes", nodes)?;
        }
    }
    Ok(d)
}
