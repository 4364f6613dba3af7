//! `commaware platform export`: any platform we load as a SimGrid 4.1 XML file, and a SimGrid
//! cluster file as our JSON (the reverse of [`super::simgrid_xml`]).
//!
//! - A cluster topology (JSON `network.topology`, or an XML file that is one `<cluster>`) is
//!   written as one `<cluster>` with SimGrid's attribute names (XML_reference.rst).
//! - A JSON star (no topology) is SimGrid's FLAT cluster it equals: each host's NIC becomes a
//!   SPLITDUPLEX private link of half the network latency (a route crosses two), the backbone
//!   `bb_bw` with no latency, the memory bandwidth and latency the loopback.
//! - Graphs and nested zones are written as one `Full` zone listing every host-to-host route
//!   (what SimGrid's own flatifier shows of a platform): the same links, names and routes,
//!   without the routers and the zone tree. At most [`MAX_FLAT_HOSTS`] hosts.
//!
//! Numbers are written as the shortest decimal that reads back to the same double, with
//! SimGrid's base units (`f`, `Bps`, `s`), so nothing is rounded. Fields SimGrid cannot
//! express are refused when they change the network's numbers (sharing models other than
//! `maxmin`, their parameters, per-pair bandwidths, per-host NIC bandwidths that differ,
//! interference, minimal dragonfly routing) and written as an XML comment otherwise (MPI-level
//! settings that SimGrid takes from SMPI's configuration, not from the platform file).

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::network::platform::Platform;
use crate::network::topology::cluster::spec::{RoutingName, TopologySpec};
use crate::network::topology::{
    cluster_host_names, ClusterKind, ClusterLinkSharing, ClusterParams, Endpoint, LinkSharing, Topology,
};

/// Most hosts of a graph or nested-zone platform `export` writes (it lists every route).
pub const MAX_FLAT_HOSTS: usize = 512;

/// A number as SimGrid reads it back exactly: the shortest round-trip decimal and its unit.
fn num(x: f64, unit: &str) -> String {
    format!("{x}{unit}")
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

fn refuse(field: &str, reason: impl Into<String>) -> Error {
    Error::platform(field, reason)
}

/// What SimGrid's platform file cannot hold and that changes the network's numbers: an error.
fn check_network_fields(p: &Platform) -> Result<()> {
    let n = &p.network;
    if n.model != "maxmin" {
        return Err(refuse(
            "network.model",
            format!("SimGrid's platform file has no `{}` sharing model (its CM02 is our `maxmin`); export a maxmin platform", n.model),
        ));
    }
    if !n.parameters.is_empty() {
        let names: Vec<&str> = n.parameters.keys().map(String::as_str).collect();
        return Err(refuse(
            "network.parameters",
            format!("{} change(s) the sharing model and SimGrid sets them in its configuration, not in the platform file", names.join(", ")),
        ));
    }
    if n.pair_bandwidth.is_some() {
        return Err(refuse("network.pair_bandwidth", "per-pair bandwidths have no SimGrid platform equivalent"));
    }
    if let Some(h) = p.hosts.iter().find(|h| h.interference.is_some()) {
        return Err(refuse(&format!("host `{}`: interference", h.name), "SimGrid does not model communication slowing computation"));
    }
    if let Some(TopologySpec::Dragonfly { routing: Some(RoutingName::Minimal), .. }) = &n.topology {
        return Err(refuse(
            "network.topology.routing",
            "`minimal` dragonfly routing differs from SimGrid 3.32's, which a SimGrid file always gets",
        ));
    }
    Ok(())
}

/// The MPI-level settings that SimGrid takes from SMPI's configuration, not from the platform
/// file: listed in a comment when they differ from the defaults.
fn mpi_comment(p: &Platform) -> Option<String> {
    let n = &p.network;
    let mut items = Vec::new();
    let mut add = |name: &str, v: f64, default: f64| {
        if v != default {
            items.push(format!("network.{name} = {v}"));
        }
    };
    add("eager_threshold", n.eager_threshold.unwrap_or(crate::network::platform::DEFAULT_EAGER_THRESHOLD), 65536.0);
    add("envelope_bytes", n.envelope_bytes.unwrap_or(0.0), 0.0);
    add("test_seconds", n.test_seconds.unwrap_or(0.0), 0.0);
    add("reduction_flops_per_byte", n.reduction_flops_per_byte, 0.0);
    add("send_overhead", n.send_overhead, 0.0);
    add("send_overhead_per_byte", n.send_overhead_per_byte, 0.0);
    add("recv_overhead", n.recv_overhead, 0.0);
    add("recv_overhead_per_byte", n.recv_overhead_per_byte, 0.0);
    if n.synchronous_send {
        items.push("network.synchronous_send = true".into());
    }
    if !n.collectives.is_empty() {
        let c: Vec<String> = n.collectives.iter().map(|(k, v)| format!("{k}={v}")).collect();
        items.push(format!("network.collectives = {}", c.join(", ")));
    }
    if n.smpi.is_some() {
        items.push("network.smpi (SMPI's timing model and async_small_thresh: give them to smpirun as --cfg=smpi/...)".into());
    }
    let with_memory = p.hosts.iter().filter(|h| h.memory != 0.0).count();
    if with_memory > 0 {
        items.push(format!("host memory sizes ({with_memory} hosts)"));
    }
    if items.is_empty() {
        return None;
    }
    // `--` may not appear inside an XML comment.
    let text = items.join("; ").replace("--", "- -");
    Some(format!("<!-- Not in SimGrid's platform file (SMPI configuration or not modelled): {text} -->\n"))
}

/// Radical of hosts named `prefix + 0..n`, if they are.
fn numbered(names: &[&str]) -> Option<String> {
    let prefix = names.first()?.strip_suffix('0')?;
    names.iter().enumerate().all(|(i, n)| n.strip_prefix(prefix) == Some(i.to_string().as_str())).then(|| prefix.to_string())
}

/// `radical` attribute text.
fn radical_text(r: &[(u64, u64)]) -> String {
    r.iter().map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect::<Vec<_>>().join(",")
}

/// The cluster to write: the topology's parameters, with the platform's host names, speed and
/// cores (hosts must be uniform and named `prefix + number + suffix`).
fn cluster_for(p: &Platform, base: &ClusterParams) -> Result<ClusterParams> {
    let mut c = base.clone();
    let first = p.hosts.first().ok_or_else(|| refuse("hosts", "the platform has no host"))?;
    if let Some(h) = p.hosts.iter().find(|h| h.speed != first.speed || h.cores != first.cores) {
        return Err(refuse(
            &format!("host `{}`", h.name),
            format!(
                "a SimGrid cluster's hosts all have one speed and core count; `{}` has {} flop/s and {} cores, `{}` {} and {}",
                h.name, h.speed, h.cores, first.name, first.speed, first.cores
            ),
        ));
    }
    c.speed = first.speed;
    c.cores = first.cores as u32;
    let names: Vec<&str> = p.hosts.iter().map(|h| h.name.as_str()).collect();
    let ours = cluster_host_names(&c)?;
    if ours.iter().map(String::as_str).ne(names.iter().copied()) {
        let prefix = numbered(&names).ok_or_else(|| {
            refuse(
                "hosts",
                format!(
                    "a SimGrid cluster names its hosts prefix + number; these are not `prefix0`, `prefix1`, ... (first: `{}`)",
                    names[0]
                ),
            )
        })?;
        c.prefix = prefix;
        c.suffix = String::new();
        c.radical = vec![(0, names.len() as u64 - 1)];
    }
    Ok(c)
}

/// The star of a JSON platform without a topology as the FLAT cluster it equals.
fn star_cluster(p: &Platform) -> Result<ClusterParams> {
    let first = p.hosts.first().ok_or_else(|| refuse("hosts", "the platform has no host"))?;
    let bw = first.bandwidth_up;
    if let Some(h) = p.hosts.iter().find(|h| h.bandwidth_up != bw || h.bandwidth_down != bw) {
        return Err(refuse(
            &format!("host `{}`", h.name),
            format!(
                "a SimGrid cluster's private links all have one bandwidth both ways; `{}` has up {} and down {} B/s, `{}` up {}",
                h.name, h.bandwidth_up, h.bandwidth_down, first.name, bw
            ),
        ));
    }
    let n = &p.network;
    Ok(ClusterParams {
        id: "cluster".into(),
        prefix: String::new(),
        suffix: String::new(),
        radical: vec![(0, p.hosts.len() as u64 - 1)],
        speed: first.speed,
        cores: first.cores as u32,
        bandwidth: bw,
        latency: n.latency / 2.0,
        sharing: ClusterLinkSharing::Splitduplex,
        kind: ClusterKind::Flat,
        topo_parameters: String::new(),
        backbone: n.backbone.map(|b| (b, 0.0, LinkSharing::Shared)),
        limiter_bandwidth: None,
        loopback: Some((p.memory_bandwidth(), n.memory_latency)),
        router_id: None,
    })
}

fn sharing_text(s: LinkSharing) -> &'static str {
    match s {
        LinkSharing::Shared => "SHARED",
        LinkSharing::Fatpipe => "FATPIPE",
    }
}

fn write_cluster(o: &mut String, c: &ClusterParams) {
    let topology = match c.kind {
        ClusterKind::Flat => "FLAT",
        ClusterKind::Torus => "TORUS",
        ClusterKind::FatTree => "FAT_TREE",
        ClusterKind::Dragonfly => "DRAGONFLY",
    };
    let _ = write!(
        o,
        "  <cluster id=\"{}\" prefix=\"{}\" suffix=\"{}\" radical=\"{}\" speed=\"{}\" core=\"{}\" bw=\"{}\" lat=\"{}\"",
        escape(&c.id),
        escape(&c.prefix),
        escape(&c.suffix),
        radical_text(&c.radical),
        num(c.speed, "f"),
        c.cores,
        num(c.bandwidth, "Bps"),
        num(c.latency, "s"),
    );
    let policy = match c.sharing {
        ClusterLinkSharing::Splitduplex => "SPLITDUPLEX",
        ClusterLinkSharing::Shared => "SHARED",
        ClusterLinkSharing::Fatpipe => "FATPIPE",
    };
    let _ = write!(o, " sharing_policy=\"{policy}\" topology=\"{topology}\"");
    if c.kind != ClusterKind::Flat {
        let _ = write!(o, " topo_parameters=\"{}\"", escape(&c.topo_parameters));
    }
    if let Some((bw, lat, s)) = c.backbone {
        let _ = write!(o, " bb_bw=\"{}\" bb_lat=\"{}\" bb_sharing_policy=\"{}\"", num(bw, "Bps"), num(lat, "s"), sharing_text(s));
    }
    if let Some(b) = c.limiter_bandwidth {
        let _ = write!(o, " limiter_link=\"{}\"", num(b, "Bps"));
    }
    if let Some((bw, lat)) = c.loopback {
        let _ = write!(o, " loopback_bw=\"{}\" loopback_lat=\"{}\"", num(bw, "Bps"), num(lat, "s"));
    }
    if let Some(r) = &c.router_id {
        let _ = write!(o, " router_id=\"{}\"", escape(r));
    }
    o.push_str("/>\n");
}

/// Graphs and nested zones: one Full zone with every host, every link and every route.
fn write_flat_zone(o: &mut String, p: &Platform, t: &dyn Topology) -> Result<()> {
    let n = p.hosts.len();
    if n > MAX_FLAT_HOSTS {
        return Err(refuse(
            "network",
            format!(
                "a platform of graphs or nested zones is exported as one Full zone listing every route; it has {n} hosts, at most {MAX_FLAT_HOSTS} are allowed"
            ),
        ));
    }
    o.push_str("  <zone id=\"AS0\" routing=\"Full\">\n");
    for h in &p.hosts {
        let _ = writeln!(o, "    <host id=\"{}\" speed=\"{}\" core=\"{}\"/>", escape(&h.name), num(h.speed, "f"), h.cores);
    }
    for l in 0..t.link_count() as u32 {
        let i = t.link(l);
        let _ = writeln!(
            o,
            "    <link id=\"{}\" bandwidth=\"{}\" latency=\"{}\" sharing_policy=\"{}\"/>",
            escape(&t.link_name(l)),
            num(i.bandwidth, "Bps"),
            num(i.latency, "s"),
            sharing_text(i.sharing)
        );
    }
    let mut links = Vec::new();
    for s in 0..n {
        for d in 0..n {
            if s == d {
                continue;
            }
            links.clear();
            // A pair without a route stays without one (SimGrid then finds none either).
            if t.route(Endpoint::Host(s as u32), Endpoint::Host(d as u32), &mut links).is_err() || links.is_empty() {
                continue;
            }
            let _ = write!(o, "    <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">", escape(&p.hosts[s].name), escape(&p.hosts[d].name));
            for &l in &links {
                let _ = write!(o, "<link_ctn id=\"{}\"/>", escape(&t.link_name(l)));
            }
            o.push_str("</route>\n");
        }
    }
    o.push_str("  </zone>\n");
    Ok(())
}

/// The platform as a SimGrid 4.1 platform file (see the module's documentation).
pub fn to_simgrid_xml(p: &Platform) -> Result<String> {
    check_network_fields(p)?;
    let mut o = String::from(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n",
    );
    if let Some(c) = mpi_comment(p) {
        o.push_str(&c);
    }
    match &p.topology {
        None => write_cluster(&mut o, &cluster_for(p, &star_cluster(p)?)?),
        Some(t) => match t.cluster_params() {
            Some(base) => write_cluster(&mut o, &cluster_for(p, base)?),
            None => write_flat_zone(&mut o, p, t.as_ref())?,
        },
    }
    o.push_str("</platform>\n");
    Ok(o)
}

fn numbers(field: &str, text: &str, sep: char) -> Result<Vec<u64>> {
    text.split(sep)
        .map(|v| v.trim().parse::<u64>().map_err(|_| refuse(field, format!("`{text}` is not a list of whole numbers"))))
        .collect()
}

/// A cluster's topology as our JSON `network.topology`.
fn topology_json(c: &ClusterParams) -> Result<serde_json::Value> {
    use serde_json::json;
    let mut t = serde_json::Map::new();
    let tp = c.topo_parameters.as_str();
    match c.kind {
        ClusterKind::Flat => {
            t.insert("kind".into(), json!("flat"));
            if let Some((bw, lat, s)) = c.backbone {
                t.insert("backbone".into(), json!({"bandwidth": bw, "latency": lat, "sharing": sharing_text(s)}));
            }
        }
        ClusterKind::Torus => {
            t.insert("kind".into(), json!("torus"));
            t.insert("dims".into(), json!(numbers("topo_parameters", tp, ',')?));
        }
        ClusterKind::FatTree => {
            let parts: Vec<&str> = tp.split(';').collect();
            if parts.len() != 4 {
                return Err(refuse("topo_parameters", format!("`{tp}` is not L;d1,..;u1,..;c1,..")));
            }
            t.insert("kind".into(), json!("fat_tree"));
            t.insert("levels".into(), json!(numbers("topo_parameters", parts[0], ',')?[0]));
            t.insert("down".into(), json!(numbers("topo_parameters", parts[1], ',')?));
            t.insert("up".into(), json!(numbers("topo_parameters", parts[2], ',')?));
            t.insert("parallel".into(), json!(numbers("topo_parameters", parts[3], ',')?));
        }
        ClusterKind::Dragonfly => {
            let parts: Vec<&str> = tp.split(';').collect();
            if parts.len() != 4 {
                return Err(refuse("topo_parameters", format!("`{tp}` is not G,b;C,k;R,g;N")));
            }
            t.insert("kind".into(), json!("dragonfly"));
            for (name, part) in [("groups", parts[0]), ("chassis", parts[1]), ("routers", parts[2])] {
                t.insert(name.into(), json!(numbers("topo_parameters", part, ',')?));
            }
            t.insert("nodes".into(), json!(numbers("topo_parameters", parts[3], ',')?[0]));
        }
    }
    t.insert("id".into(), json!(c.id));
    t.insert("bandwidth".into(), json!(c.bandwidth));
    t.insert("latency".into(), json!(c.latency));
    let sharing = match c.sharing {
        ClusterLinkSharing::Splitduplex => "SPLITDUPLEX",
        ClusterLinkSharing::Shared => "SHARED",
        ClusterLinkSharing::Fatpipe => "FATPIPE",
    };
    t.insert("sharing".into(), json!(sharing));
    if let Some(b) = c.limiter_bandwidth.filter(|&b| b > 0.0) {
        t.insert("limiter_bandwidth".into(), json!(b));
    }
    if let Some((bw, lat)) = c.loopback.filter(|&(b, l)| b > 0.0 || l > 0.0) {
        t.insert("loopback".into(), json!({"bandwidth": bw, "latency": lat}));
    }
    Ok(serde_json::Value::Object(t))
}

/// A platform whose network is one SimGrid cluster as our JSON platform (hosts and
/// `network.topology`); graphs and nested zones, and the star, are errors saying why.
pub fn to_json(p: &Platform) -> Result<serde_json::Value> {
    use serde_json::json;
    let t = p.topology.as_ref().ok_or_else(|| {
        refuse("network", "the platform is a JSON star already (no topology to convert); `--format json` converts SimGrid clusters")
    })?;
    let c = t.cluster_params().ok_or_else(|| {
        refuse(
            "network",
            format!(
                "the platform is a `{}` zone: our JSON describes one cluster topology over all hosts, not explicit links, routes or nested zones",
                t.kind()
            ),
        )
    })?;
    if c.router_id.is_some() {
        return Err(refuse("router_id", "our JSON topology has no field for the cluster's router name"));
    }
    let c = cluster_for(p, c)?;
    let names: Vec<&str> = p.hosts.iter().map(|h| h.name.as_str()).collect();
    let mut doc = serde_json::Map::new();
    match numbered(&names) {
        Some(prefix) => {
            doc.insert("cluster".into(), json!({"count": names.len(), "speed": c.speed, "cores": c.cores, "prefix": prefix}));
        }
        None => {
            let hosts: Vec<_> = names.iter().map(|n| json!({"name": n, "speed": c.speed, "cores": c.cores})).collect();
            doc.insert("hosts".into(), json!(hosts));
        }
    }
    let mut net = serde_json::Map::new();
    net.insert("model".into(), json!("maxmin"));
    net.insert("bandwidth".into(), json!(p.network.bandwidth));
    if let Some(m) = p.network.memory_bandwidth {
        net.insert("memory_bandwidth".into(), json!(m));
    }
    net.insert("topology".into(), topology_json(&c)?);
    doc.insert("network".into(), serde_json::Value::Object(net));
    Ok(serde_json::Value::Object(doc))
}
