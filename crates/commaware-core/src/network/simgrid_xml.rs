//! SimGrid platform files (XML, DTD version 4.1, as SimGrid 3.32 reads them: its
//! `docs/source/XML_reference.rst`, `src/surf/xml/simgrid.dtd` and
//! `src/surf/xml/surfxml_sax_cb.cpp`; units as in `src/xbt/xbt_parse_units.cpp`).
//!
//! The file is read with `roxmltree` after a scan that refuses any `<!ENTITY` declaration
//! (no "billion laughs"); nothing is ever fetched (the DTD is not read). Every element
//! and attribute is known: what commaware does not model (disks, profiles and traces,
//! actors, Wi-Fi, Vivaldi coordinates, bypass routes, ...) is an error naming the element
//! and its line, never ignored. A `<config>`'s settings are read here and applied by the
//! loader (`mpi::platform_file::apply_simgrid_config`). Another `<prop>` is accepted and
//! changes nothing, except SMPI's per-host overheads, which are refused; what is accepted
//! without being modelled (those props, power states after the first) is listed in
//! [`XmlPlatform::unmodelled`]. A zone's children must come in the DTD's order, as SimGrid's
//! parser demands.
//!
//! The result is the hosts in document order (a cluster's in radical order) and the
//! network as a [`Topology`]: one cluster alone is the cluster's topology; anything else
//! is a tree of [`Zones`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use roxmltree::{Document, Node, ParsingOptions};

use crate::error::{check_amount, check_seconds, cut_value, too_deep, Error, ErrorKind, Result, MAX_NESTING};
use crate::network::platform::{SimgridUnmodelled, MAX_CORES_PER_HOST, MAX_HOSTS, MAX_TOTAL_CORES};
use crate::network::topology::graph::Routing;
use crate::network::topology::zones::{Point, Zones, ZonesBuilder};
use crate::network::topology::{build_cluster_in, cluster_host_names, cluster_router_name, DragonflyRouting, SimgridCounters,
    ClusterKind, ClusterLinkSharing, ClusterParams, LinkInfo, LinkSharing, Topology, TopologyLink,
};

/// SimGrid's `network/loopback-bw` (10 GBps): the rate of a host's messages to itself. An
/// XML platform's `network.bandwidth` and `network.memory_bandwidth` are set to it; routes
/// between hosts use the file's links only.
pub const LOOPBACK_BANDWIDTH: f64 = 10e9;

/// Most XML nodes a platform file may hold (elements, attributes' text and comments).
const MAX_NODES: u32 = 1 << 24;

/// One host of the file, in SimGrid's host order.
#[derive(Debug, Clone, PartialEq)]
pub struct XmlHost {
    pub name: String,
    /// Flop/s of the first power state.
    pub speed: f64,
    pub cores: usize,
}

/// A platform file read: hosts and network, and the settings of its `<config>`.
#[derive(Debug, Clone)]
pub struct XmlPlatform {
    pub hosts: Vec<XmlHost>,
    pub topology: Arc<dyn Topology>,
    pub config: Vec<ConfigProp>,
    /// What SimGrid reads and commaware accepts without modelling, counted, in order of first use.
    pub unmodelled: Vec<SimgridUnmodelled>,
}

/// One `<prop>` of the file's `<config>`: a SimGrid option, its value, and where it is
/// (`line L, column C`), for the errors of whoever applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigProp {
    pub key: String,
    pub value: String,
    pub at: String,
}

// ---------------------------------------------------------------------------------------
// Units (SimGrid's xbt_parse_units.cpp)

/// The multiplier of `unit` in a table of `base` (value `base_value`) with SI prefixes
/// (k, M, G, ... ×1000) and, when `binary`, IEC ones (Ki, Mi, ... ×1024).
fn prefixed(unit: &str, base: &str, base_value: f64, long: bool, binary: bool) -> Option<f64> {
    let prefix = unit.strip_suffix(base)?;
    if prefix.is_empty() {
        return Some(base_value);
    }
    let (si, iec): (&[&str], &[&str]) = if long {
        (&["kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta"], &[])
    } else {
        (&["k", "M", "G", "T", "P", "E", "Z", "Y"], &["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"])
    };
    if let Some(i) = si.iter().position(|p| *p == prefix) {
        return Some(base_value * 1000f64.powi(i as i32 + 1));
    }
    if binary {
        if let Some(i) = iec.iter().position(|p| *p == prefix) {
            return Some(base_value * 1024f64.powi(i as i32 + 1));
        }
    }
    None
}

/// Kinds of quantity with their unit tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Bytes/s: `Bps` (default), `bps` = 1/8, with k..Y and Ki..Yi prefixes.
    Bandwidth,
    /// Seconds: `s` (default), `w`, `d`, `h`, `m`, `ms`, `us`, `ns`, `ps`.
    Time,
    /// Flop/s: `f` (default) with k..Y, or `flops` with kilo..yotta.
    Speed,
}

fn unit_scale(q: Quantity, unit: &str) -> Option<f64> {
    match q {
        Quantity::Time => Some(match unit {
            "w" => 7.0 * 24.0 * 3600.0,
            "d" => 24.0 * 3600.0,
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" => 1e-6,
            "ns" => 1e-9,
            "ps" => 1e-12,
            _ => return None,
        }),
        Quantity::Bandwidth => prefixed(unit, "Bps", 1.0, false, true).or_else(|| prefixed(unit, "bps", 0.125, false, true)),
        Quantity::Speed => prefixed(unit, "flops", 1.0, true, false).or_else(|| prefixed(unit, "f", 1.0, false, false)),
    }
}

/// The length of the number at the start of `s` (as C's strtod reads a decimal one).
fn number_prefix(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - digits_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return 0;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let e = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > e {
            i = j;
        }
    }
    i
}

/// A SimGrid quantity (`125MBps`, `50us`, `1Gf`, `1.5e3kBps`, or a bare number in the
/// default unit) in bytes/s, seconds or flop/s. The error is the reason only.
pub fn parse_quantity(q: Quantity, value: &str) -> std::result::Result<f64, String> {
    let text = value.trim();
    let n = number_prefix(text);
    let value = cut_value(value); // not copied whole into the message
    if n == 0 {
        return Err(format!("`{value}` is not a number"));
    }
    let number: f64 = text[..n].parse().map_err(|_| format!("`{value}` is not a number"))?;
    let unit = &text[n..];
    let unit = if unit.is_empty() {
        match q {
            Quantity::Bandwidth => "Bps",
            Quantity::Time => "s",
            Quantity::Speed => "f",
        }
    } else {
        unit
    };
    let scale = unit_scale(q, unit).ok_or_else(|| {
        let known = match q {
            Quantity::Bandwidth => "Bps or bps with a prefix k, M, G, ... or Ki, Mi, Gi, ...",
            Quantity::Time => "w, d, h, m, s, ms, us, ns, ps",
            Quantity::Speed => "f with a prefix k, M, G, ..., or flops with kilo, mega, giga, ...",
        };
        format!("`{value}`: unknown unit `{}` (SimGrid's units: {known})", cut_value(unit))
    })?;
    Ok(number * scale)
}

// ---------------------------------------------------------------------------------------
// Clusters are built by topology::cluster (`build_cluster`, `cluster_host_names`).

// ---------------------------------------------------------------------------------------
// The reader

#[derive(Debug, Clone, Copy)]
enum LinkDecl {
    Single(TopologyLink),
    Split { up: TopologyLink, down: TopologyLink },
}

struct Reader<'a, 'input> {
    doc: &'a Document<'input>,
    b: ZonesBuilder,
    points: HashMap<String, Point>,
    links: HashMap<String, LinkDecl>,
    hosts: Vec<XmlHost>,
    total_cores: usize,
    /// SimGrid's link and position counters, run on from cluster to cluster.
    counters: SimgridCounters,
    /// The one cluster, when the platform is one cluster alone.
    lone_cluster: Option<Arc<dyn Topology>>,
    config: Vec<ConfigProp>,
    unmodelled: RefCell<Vec<SimgridUnmodelled>>,
}

/// Line and column of byte `pos`, as an error field.
fn at(doc: &Document, pos: usize) -> String {
    let p = doc.text_pos_at(pos);
    format!("line {}, column {}", p.row, p.col)
}

fn line_col(text: &str, pos: usize) -> String {
    let before = &text[..pos];
    let row = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |i| before[i + 1..].chars().count()) + 1;
    format!("line {row}, column {col}")
}

/// Byte offset of the first element nested more than [`MAX_NESTING`] deep, or `None`: one
/// pass over the text (skipping comments, CDATA, declarations and quoted attribute values),
/// before roxmltree builds the tree and the reader recurses over zones.
fn nested_too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let past = |from: usize, end: &str| text[from..].find(end).map_or(b.len(), |k| from + k + end.len());
    let (mut i, mut depth) = (0, 0usize);
    while let Some(k) = text[i..].find('<') {
        let start = i + k;
        let rest = &b[start + 1..];
        i = if rest.starts_with(b"!--") {
            past(start + 4, "-->")
        } else if rest.starts_with(b"![CDATA[") {
            past(start + 9, "]]>")
        } else if rest.starts_with(b"?") {
            past(start + 2, "?>")
        } else if rest.starts_with(b"!") {
            past(start + 2, ">")
        } else {
            let (mut end, mut quote) = (start + 1, None);
            while end < b.len() {
                match (quote, b[end]) {
                    (None, b'>') => break,
                    (None, q @ (b'"' | b'\'')) => quote = Some(q),
                    (Some(q), c) if c == q => quote = None,
                    _ => {}
                }
                end += 1;
            }
            if rest.first() == Some(&b'/') {
                depth = depth.saturating_sub(1);
            } else if depth == MAX_NESTING {
                return Some(start);
            } else if b[end - 1] != b'/' {
                depth += 1;
            }
            (end + 1).min(b.len())
        };
    }
    None
}

/// Read a SimGrid platform file. Errors carry the line and column; the caller adds the file.
pub fn read(text: &str) -> Result<XmlPlatform> {
    if let Some(pos) = text.find("<!ENTITY") {
        return Err(Error::platform(
            line_col(text, pos),
            "entity declarations are not accepted in platform files (only XML's predefined entities are)",
        ));
    }
    if let Some(pos) = nested_too_deep(text) {
        return Err(Error::platform(line_col(text, pos), too_deep("elements")));
    }
    let doc = Document::parse_with_options(text, ParsingOptions { allow_dtd: true, nodes_limit: MAX_NODES }).map_err(|e| {
        let p = e.pos();
        let msg = e.to_string();
        let msg = msg.rsplit_once(" at ").map_or(msg.as_str(), |(m, _)| m).to_string();
        Error::platform(format!("line {}, column {}", p.row, p.col), format!("malformed XML: {msg}"))
    })?;
    let root = doc.root_element();
    let mut r = Reader {
        doc: &doc,
        b: ZonesBuilder::new(),
        points: HashMap::new(),
        links: HashMap::new(),
        hosts: Vec::new(),
        total_cores: 0,
        counters: SimgridCounters::default(),
        lone_cluster: None,
        config: Vec::new(),
        unmodelled: RefCell::new(Vec::new()),
    };
    r.platform(root)?;
    let hosts = std::mem::take(&mut r.hosts);
    let topology: Arc<dyn Topology> = match r.lone_cluster.take() {
        Some(t) => t,
        None => {
            let zones: Zones = std::mem::take(&mut r.b).build();
            Arc::new(zones)
        }
    };
    Ok(XmlPlatform { hosts, topology, config: std::mem::take(&mut r.config), unmodelled: r.unmodelled.take() })
}

const NOT_MODELLED: &[(&str, &str)] = &[
    ("include", "SimGrid itself refuses it since 3.18"),
    ("trace", "availability and bandwidth profiles are not modelled"),
    ("trace_connect", "availability and bandwidth profiles are not modelled"),
    ("actor", "deployment belongs to the trace and the placement"),
    ("process", "deployment belongs to the trace and the placement"),
    ("disk", "disks are not modelled"),
    ("storage", "storage is not modelled"),
    ("storage_type", "storage is not modelled"),
    ("mount", "storage is not modelled"),
    ("host_link", "host links of Vivaldi/star zones are not modelled"),
    ("peer", "peers (Vivaldi zones) are not modelled"),
    ("cabinet", "cabinets are not modelled"),
    ("backbone", "a backbone outside a cluster's bb_bw is not modelled"),
    ("bypassRoute", "bypass routes are not modelled"),
    ("bypassZoneRoute", "bypass routes are not modelled"),
    ("bypassASroute", "bypass routes are not modelled"),
    ("random", "SimGrid ignores it"),
    ("model_prop", "SimGrid ignores it"),
];

/// Where a zone's children are in the order of SimGrid 3.32's DTD (`src/surf/xml/simgrid.dtd`,
/// enforced by its generated parser: "Starting tag <X> is not allowed here"): its `<prop>`s
/// first; then either hosts, routers and links in any order followed by the routes, or
/// zones, clusters and links followed by the zone routes. SimGrid's parser picks the branch at
/// the first child after the props, and a `<link>` there puts it in the hosts' branch: a zone
/// or cluster after it is refused (checked against SimGrid 3.32: `<link/><zone/>` and
/// `<link/><cluster/>` are refused, `<zone/><link/><zone/>` is read).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum ZoneOrder {
    #[default]
    Props,
    /// The first child after the props was a link: SimGrid reads the hosts' branch.
    LinkFirst,
    Content,
    Routes,
}

impl ZoneOrder {
    /// Take the next child `tag`, or say why it cannot come here.
    fn next(&mut self, tag: &str) -> std::result::Result<(), String> {
        let is_route = matches!(tag, "route" | "zoneRoute" | "ASroute");
        *self = match (*self, tag) {
            (ZoneOrder::Props, "prop") => ZoneOrder::Props,
            (_, "prop") => return Err("a zone's <prop>s come before its other elements (SimGrid's DTD)".into()),
            (ZoneOrder::LinkFirst, "zone" | "AS" | "cluster" | "zoneRoute" | "ASroute") => {
                return Err("the zone's first element is a <link>, so SimGrid reads it as a zone of hosts, \
                            where zones and clusters are not allowed: put its zones and clusters before its links"
                    .into())
            }
            (_, _) if is_route => ZoneOrder::Routes,
            (ZoneOrder::Routes, _) => return Err("a zone's routes come after its other elements (SimGrid's DTD)".into()),
            (ZoneOrder::Props, "link") | (ZoneOrder::LinkFirst, _) => ZoneOrder::LinkFirst,
            _ => ZoneOrder::Content,
        };
        Ok(())
    }
}

impl<'a, 'input> Reader<'a, 'input> {
    fn err(&self, node: Node, reason: impl Into<String>) -> Error {
        Error::platform(at(self.doc, node.range().start), reason)
    }

    fn tag(node: Node) -> String {
        match node.attribute("id") {
            Some(id) => format!("<{} id=\"{id}\">", node.tag_name().name()),
            None => format!("<{}>", node.tag_name().name()),
        }
    }

    /// Elements only (comments, text and processing instructions skipped; text other than
    /// blanks is an error).
    fn children(&self, node: Node<'a, 'input>) -> Result<Vec<Node<'a, 'input>>> {
        let mut out = Vec::new();
        for c in node.children() {
            if c.is_element() {
                out.push(c);
            } else if c.is_text() && !c.text().unwrap_or("").trim().is_empty() {
                return Err(self.err(c, format!("unexpected text in {}", Self::tag(node))));
            }
        }
        Ok(out)
    }

    /// Check the element's attributes: every one known, the required ones there.
    fn attrs(&self, node: Node, known: &[&str], required: &[&str]) -> Result<()> {
        for a in node.attributes() {
            if !known.contains(&a.name()) {
                return Err(Error::platform(
                    at(self.doc, a.range().start),
                    format!("{}: unknown attribute `{}` (known: {})", Self::tag(node), a.name(), known.join(", ")),
                ));
            }
        }
        for r in required {
            if node.attribute(*r).is_none() {
                return Err(self.err(node, format!("{}: attribute `{r}` is required", Self::tag(node))));
            }
        }
        Ok(())
    }

    /// An attribute that must be empty (or absent): something we do not model.
    fn unmodelled_attr(&self, node: Node, name: &str, what: &str) -> Result<()> {
        match node.attribute_node(name) {
            Some(a) if !a.value().trim().is_empty() => Err(Error::platform(
                at(self.doc, a.range_value().start),
                format!("{}: `{name}` is not modelled ({what})", Self::tag(node)),
            )),
            _ => Ok(()),
        }
    }

    fn quantity(&self, node: Node, name: &str, q: Quantity, default: Option<&str>) -> Result<f64> {
        let (value, pos) = match node.attribute_node(name) {
            Some(a) => (a.value(), a.range_value().start),
            None => match default {
                Some(d) => (d, node.range().start),
                None => return Err(self.err(node, format!("{}: attribute `{name}` is required", Self::tag(node)))),
            },
        };
        // Positions are found only for an error: `text_pos_at` scans the text from its start.
        let v = parse_quantity(q, value)
            .map_err(|r| Error::platform(at(self.doc, pos), format!("{} {name}: {r}", Self::tag(node))))?;
        match q {
            Quantity::Time => check_seconds(ErrorKind::Platform, "", v),
            _ => check_amount(ErrorKind::Platform, "", v, true),
        }
        .map_err(|e| Error::platform(at(self.doc, pos), format!("{} {name}: {}", Self::tag(node), e.reason)))?;
        Ok(v)
    }

    fn not_modelled(&self, node: Node) -> Error {
        let name = node.tag_name().name();
        match NOT_MODELLED.iter().find(|(n, _)| *n == name) {
            Some((_, why)) => self.err(node, format!("{} is not modelled by commaware: {why}", Self::tag(node))),
            None => self.err(node, format!("unknown element <{name}>")),
        }
    }

    fn platform(&mut self, node: Node<'a, 'input>) -> Result<()> {
        if node.tag_name().name() != "platform" {
            return Err(self.err(node, format!("expected <platform>, found <{}>", node.tag_name().name())));
        }
        self.attrs(node, &["version"], &["version"])?;
        let version = node.attribute("version").unwrap_or("");
        if !matches!(version.trim(), "4" | "4.0" | "4.1") {
            return Err(self.err(node, format!("<platform> version `{version}`: only SimGrid's versions 4 and 4.1 are read")));
        }
        self.check_host_count(node)?;
        let children = self.children(node)?;
        let tops: Vec<Node> = children.iter().copied().filter(|c| matches!(c.tag_name().name(), "zone" | "AS" | "cluster")).collect();
        for (i, c) in children.iter().enumerate() {
            match c.tag_name().name() {
                "zone" | "AS" | "cluster" => {}
                // SimGrid's DTD: `<!ELEMENT platform ((config)*, ...)>`.
                "config" if children[..i].iter().all(|b| b.tag_name().name() == "config") => self.config(*c)?,
                "config" => return Err(self.err(*c, "<config> comes before everything else in <platform> (SimGrid's DTD)")),
                _ => return Err(self.not_modelled(*c)),
            }
        }
        match tops.as_slice() {
            [] => Err(self.err(node, "<platform> holds no zone or cluster")),
            [one] if one.tag_name().name() == "cluster" => {
                let t = self.cluster(*one, None)?;
                self.lone_cluster = Some(t);
                Ok(())
            }
            [one] => self.zone(*one, None),
            [_, second, ..] => Err(self.err(*second, "a platform has one root zone; put these zones in one")),
        }
    }

    /// A `<config>`'s settings, kept in order for the loader to apply (each `<prop id value>`).
    fn config(&mut self, node: Node<'a, 'input>) -> Result<()> {
        self.attrs(node, &["id"], &[])?;
        for p in self.children(node)? {
            if p.tag_name().name() != "prop" {
                return Err(self.err(p, format!("{} holds only <prop> elements, not <{}>", Self::tag(node), p.tag_name().name())));
            }
            self.attrs(p, &["id", "value"], &["id", "value"])?;
            self.config.push(ConfigProp {
                key: p.attribute("id").unwrap_or("").trim().to_string(),
                value: p.attribute("value").unwrap_or("").trim().to_string(),
                at: at(self.doc, p.range().start),
            });
        }
        Ok(())
    }

    /// Hosts of the whole file, counted before anything is built.
    fn check_host_count(&self, platform: Node) -> Result<()> {
        let mut count: u64 = 0;
        for n in platform.descendants().filter(|n| n.is_element()) {
            match n.tag_name().name() {
                "host" => count += 1,
                "cluster" => {
                    let radical = n.attribute("radical").unwrap_or("");
                    for (a, b) in self.radical(n, radical)? {
                        count = count.saturating_add(b - a).saturating_add(1); // 0-(2^64 - 1) holds 2^64
                    }
                }
                _ => {}
            }
            if count > MAX_HOSTS as u64 {
                return Err(self.err(n, format!("the platform has more than {MAX_HOSTS} (2^20) hosts, the most allowed")));
            }
        }
        Ok(())
    }

    fn radical(&self, node: Node, text: &str) -> Result<Vec<(u64, u64)>> {
        let mut out = Vec::new();
        for group in text.split(',') {
            let ends: Vec<&str> = group.split('-').collect();
            let num = |s: &str| s.trim().parse::<u64>().ok();
            let range = match ends.as_slice() {
                [a] => num(a).map(|a| (a, a)),
                [a, b] => num(a).zip(num(b)),
                _ => None,
            };
            match range {
                Some((a, b)) if a <= b => out.push((a, b)),
                _ => return Err(self.err(node, format!("{} radical: malformed group `{group}` (expected N or N-M, N <= M)", Self::tag(node)))),
            }
        }
        Ok(out)
    }

    fn name_point(&mut self, node: Node, name: &str, p: Point) -> Result<()> {
        if self.points.insert(name.to_string(), p).is_some() {
            return Err(self.err(node, format!("{}: the name `{name}` is used twice (hosts, routers and zones share one name space)", Self::tag(node))));
        }
        Ok(())
    }

    fn build(&self, node: Node, r: std::result::Result<u32, String>) -> Result<u32> {
        r.map_err(|reason| self.err(node, format!("{}: {reason}", Self::tag(node))))
    }

    fn zone(&mut self, node: Node<'a, 'input>, parent: Option<u32>) -> Result<()> {
        self.attrs(node, &["id", "routing"], &["id", "routing"])?;
        let id = node.attribute("id").unwrap_or("");
        let routing = match node.attribute("routing").unwrap_or("") {
            "Full" => Routing::Full,
            "Floyd" => Routing::Floyd,
            "Dijkstra" | "DijkstraCache" => Routing::Dijkstra,
            "None" => Routing::Empty,
            r @ ("Vivaldi" | "Wifi" | "Star" | "Cluster" | "ClusterFatTree" | "ClusterTorus" | "ClusterDragonfly") => {
                return Err(self.err(node, format!("{}: routing `{r}` is not modelled (use Full, Floyd, Dijkstra, None, or a <cluster>)", Self::tag(node))))
            }
            r => return Err(self.err(node, format!("{}: unknown routing `{r}` (Full, Floyd, Dijkstra, DijkstraCache or None)", Self::tag(node)))),
        };
        let zone = self.b.add_zone(id, parent, routing);
        let zone = self.build(node, zone)?;
        self.name_point(node, id, Point::Zone(zone))?;
        let mut order = ZoneOrder::default();
        for c in self.children(node)? {
            // (what commaware does not read is refused below, whatever its place)
            if matches!(c.tag_name().name(), "prop" | "zone" | "AS" | "cluster" | "host" | "router" | "link" | "route" | "zoneRoute" | "ASroute") {
                order.next(c.tag_name().name()).map_err(|reason| self.err(c, format!("{} in {}: {reason}", Self::tag(c), Self::tag(node))))?;
            }
            match c.tag_name().name() {
                "prop" => self.prop(c, false)?,
                "zone" | "AS" => self.zone(c, Some(zone))?,
                "cluster" => {
                    self.cluster(c, Some(zone))?;
                }
                "host" => self.host(c, zone)?,
                "router" => {
                    self.attrs(c, &["id", "coordinates"], &["id"])?;
                    self.unmodelled_attr(c, "coordinates", "Vivaldi coordinates")?;
                    self.empty(c)?;
                    let name = c.attribute("id").unwrap_or("");
                    let r = self.b.add_router(zone, name);
                    let r = self.build(c, r)?;
                    self.name_point(c, name, Point::Router(r))?;
                }
                "link" => self.link(c)?,
                "route" => self.route(c, zone, false)?,
                "zoneRoute" | "ASroute" => self.route(c, zone, true)?,
                _ => return Err(self.not_modelled(c)),
            }
        }
        Ok(())
    }

    /// A `<prop>`; `of_hosts`: of a host or a cluster (whose props SimGrid gives every host).
    /// SimGrid 3.32 times nothing by a prop but SMPI's per-host overheads (`smpi/os`,
    /// `smpi/ois`, `smpi/or`, read in `src/smpi/internals/smpi_host.cpp`), which are refused;
    /// the energy plugin's and user data change no time.
    fn prop(&self, node: Node, of_hosts: bool) -> Result<()> {
        self.attrs(node, &["id", "value"], &["id", "value"])?;
        self.empty(node)?;
        let id = node.attribute("id").unwrap_or("");
        if of_hosts && matches!(id, "smpi/os" | "smpi/ois" | "smpi/or") {
            return Err(self.err(
                node,
                format!("{}: SMPI's per-host overheads are not modelled (network.smpi.{} gives every host one)", Self::tag(node), &id[5..]),
            ));
        }
        self.not_timed(node, format!("<prop id={id:?}> (SimGrid times nothing by it)"));
        Ok(())
    }

    /// Counts `what` (first seen at `node`) among what is accepted without being modelled.
    fn not_timed(&self, node: Node, what: String) {
        let mut list = self.unmodelled.borrow_mut();
        match list.iter_mut().find(|u| u.what == what) {
            Some(u) => u.count += 1,
            None => list.push(SimgridUnmodelled { what, count: 1, first_at: at(self.doc, node.range().start) }),
        }
    }

    /// An element that holds no elements (SimGrid's DTD: EMPTY).
    fn empty(&self, node: Node) -> Result<()> {
        match self.children(node)?.first() {
            Some(c) => Err(self.err(*c, format!("{} holds no elements", Self::tag(node)))),
            None => Ok(()),
        }
    }

    /// The `<prop>`s of a host, a cluster or a link, its only children.
    fn props_only(&self, node: Node, of_hosts: bool) -> Result<()> {
        for c in self.children(node)? {
            if c.tag_name().name() == "prop" {
                self.prop(c, of_hosts)?;
            } else {
                return Err(self.not_modelled(c));
            }
        }
        Ok(())
    }

    fn cores(&self, node: Node, name: &str) -> Result<usize> {
        let Some(a) = node.attribute_node(name) else { return Ok(1) };
        match a.value().trim().parse::<usize>() {
            Ok(c) if (1..=MAX_CORES_PER_HOST).contains(&c) => Ok(c),
            _ => Err(Error::platform(
                at(self.doc, a.range_value().start),
                format!("{} {name}: `{}` is not a core count from 1 to {MAX_CORES_PER_HOST}", Self::tag(node), a.value()),
            )),
        }
    }

    /// The speed of the first power state (the one a host starts in), each of the list
    /// checked as SimGrid checks it: the first above 0, the others 0 or more (a host may
    /// sleep at 0f in a later state).
    fn first_speed(&self, node: Node, name: &str) -> Result<f64> {
        let a = node.attribute_node(name).ok_or_else(|| self.err(node, format!("{}: attribute `{name}` is required", Self::tag(node))))?;
        let mut first = None;
        for (k, text) in a.value().split(',').enumerate() {
            let state = if k == 0 { String::new() } else { format!(" (power state {k})") };
            let fail = |r: String| Error::platform(at(self.doc, a.range_value().start), format!("{} {name}{state}: {r}", Self::tag(node)));
            let v = parse_quantity(Quantity::Speed, text.trim()).map_err(fail)?;
            check_amount(ErrorKind::Platform, "", v, k == 0).map_err(|e| fail(e.reason))?;
            first.get_or_insert(v);
            if k == 1 {
                self.not_timed(node, format!("power states after the first (`{name}` lists; a host runs in its first)"));
            }
        }
        Ok(first.unwrap_or_default())
    }

    fn add_cores(&mut self, node: Node, cores: usize) -> Result<()> {
        self.total_cores = self.total_cores.saturating_add(cores);
        if self.total_cores > MAX_TOTAL_CORES {
            return Err(self.err(node, format!("the platform has more than {MAX_TOTAL_CORES} (2^24) cores, the most allowed")));
        }
        Ok(())
    }

    fn host(&mut self, node: Node, zone: u32) -> Result<()> {
        self.attrs(
            node,
            &["id", "speed", "core", "speed_file", "availability_file", "state_file", "coordinates", "pstate"],
            &["id", "speed"],
        )?;
        self.unmodelled_attr(node, "speed_file", "speed profiles")?;
        self.unmodelled_attr(node, "availability_file", "speed profiles")?;
        self.unmodelled_attr(node, "state_file", "state profiles")?;
        self.unmodelled_attr(node, "coordinates", "Vivaldi coordinates")?;
        if let Some(a) = node.attribute_node("pstate") {
            if a.value().trim().parse::<f64>().ok() != Some(0.0) {
                return Err(Error::platform(at(self.doc, a.range_value().start), format!("{}: pstate other than 0 is not modelled", Self::tag(node))));
            }
        }
        self.props_only(node, true)?;
        let name = node.attribute("id").unwrap_or("");
        let speed = self.first_speed(node, "speed")?;
        let cores = self.cores(node, "core")?;
        self.add_cores(node, cores)?;
        let h = self.b.add_host(zone, name);
        let h = self.build(node, h)?;
        self.name_point(node, name, Point::Host(h))?;
        self.hosts.push(XmlHost { name: name.into(), speed, cores });
        Ok(())
    }

    fn link(&mut self, node: Node) -> Result<()> {
        self.attrs(
            node,
            &["id", "bandwidth", "bandwidth_file", "latency", "latency_file", "state_file", "sharing_policy"],
            &["id", "bandwidth"],
        )?;
        self.unmodelled_attr(node, "bandwidth_file", "bandwidth profiles")?;
        self.unmodelled_attr(node, "latency_file", "latency profiles")?;
        self.unmodelled_attr(node, "state_file", "state profiles")?;
        self.props_only(node, false)?;
        let id = node.attribute("id").unwrap_or("").to_string();
        let bandwidth = self.quantity(node, "bandwidth", Quantity::Bandwidth, None)?;
        let latency = self.quantity(node, "latency", Quantity::Time, Some("0"))?;
        let info = |sharing| LinkInfo { bandwidth, latency, sharing };
        let decl = match node.attribute("sharing_policy").unwrap_or("SHARED") {
            "SHARED" => LinkDecl::Single(self.add_link(node, &id, info(LinkSharing::Shared))?),
            "FATPIPE" => LinkDecl::Single(self.add_link(node, &id, info(LinkSharing::Fatpipe))?),
            "SPLITDUPLEX" | "FULLDUPLEX" => LinkDecl::Split {
                up: self.add_link(node, &format!("{id}_UP"), info(LinkSharing::Shared))?,
                down: self.add_link(node, &format!("{id}_DOWN"), info(LinkSharing::Shared))?,
            },
            "WIFI" => return Err(self.err(node, format!("{}: WIFI links are not modelled", Self::tag(node)))),
            p => return Err(self.err(node, format!("{}: unknown sharing_policy `{p}` (SHARED, SPLITDUPLEX or FATPIPE)", Self::tag(node)))),
        };
        if self.links.insert(id.clone(), decl).is_some() {
            return Err(self.err(node, format!("{}: a link `{id}` exists already", Self::tag(node))));
        }
        Ok(())
    }

    fn add_link(&mut self, node: Node, name: &str, info: LinkInfo) -> Result<TopologyLink> {
        let r = self.b.add_link(name, info);
        self.build(node, r)
    }

    fn point(&self, node: Node, attr: &str) -> Result<Point> {
        let name = node.attribute(attr).unwrap_or("");
        match self.points.get(name) {
            Some(p) => Ok(*p),
            None => Err(self.err(node, format!("{} {attr}: `{name}` names no host, router or zone declared before", Self::tag(node)))),
        }
    }

    fn route(&mut self, node: Node, zone: u32, between_zones: bool) -> Result<()> {
        let tag = Self::tag(node);
        if between_zones {
            self.attrs(node, &["src", "dst", "gw_src", "gw_dst", "symmetrical"], &["src", "dst", "gw_src", "gw_dst"])?;
        } else {
            self.attrs(node, &["src", "dst", "symmetrical"], &["src", "dst"])?;
        }
        let symmetrical = match node.attribute("symmetrical").unwrap_or("YES") {
            "YES" | "yes" => true,
            "NO" | "no" => false,
            s => return Err(self.err(node, format!("{tag}: symmetrical `{s}` (YES or NO)"))),
        };
        let (src, dst) = (self.point(node, "src")?, self.point(node, "dst")?);
        let gateways = if between_zones {
            let (gs, gd) = (self.point(node, "gw_src")?, self.point(node, "gw_dst")?);
            for (end, gw, attr) in [(src, gs, "gw_src"), (dst, gd, "gw_dst")] {
                let Point::Zone(z) = end else {
                    return Err(self.err(node, format!("{tag}: src and dst of a zoneRoute must be zones")));
                };
                if matches!(gw, Point::Zone(_)) || !self.b.is_within(gw, z) {
                    return Err(self.err(node, format!("{tag}: {attr} must be a host or router inside the zone it leaves or enters")));
                }
            }
            if gs == gd {
                return Err(self.err(node, format!("{tag}: gw_src and gw_dst are the same point")));
            }
            Some((gs, gd))
        } else {
            if matches!(src, Point::Zone(_)) || matches!(dst, Point::Zone(_)) {
                return Err(self.err(node, format!("{tag}: a route joins hosts or routers; between zones use <zoneRoute>")));
            }
            None
        };
        let mut forward = Vec::new();
        let mut back = Vec::new();
        for c in self.children(node)? {
            if c.tag_name().name() != "link_ctn" {
                return Err(self.not_modelled(c));
            }
            self.attrs(c, &["id", "direction"], &["id"])?;
            self.empty(c)?;
            let id = c.attribute("id").unwrap_or("");
            let direction = c.attribute("direction").unwrap_or("NONE");
            let decl = *self.links.get(id).ok_or_else(|| self.err(c, format!("<link_ctn id=\"{id}\">: no link `{id}` declared before")))?;
            let (f, b) = match (decl, direction) {
                (LinkDecl::Single(l), "NONE") => (l, l),
                (LinkDecl::Split { up, down }, "UP") => (up, down),
                (LinkDecl::Split { up, down }, "DOWN") => (down, up),
                (LinkDecl::Split { .. }, "NONE") => {
                    return Err(self.err(c, format!("<link_ctn id=\"{id}\">: `{id}` is SPLITDUPLEX: give direction=\"UP\" or \"DOWN\"")))
                }
                (LinkDecl::Single(_), "UP" | "DOWN") => {
                    return Err(self.err(c, format!("<link_ctn id=\"{id}\">: direction {direction} needs a SPLITDUPLEX link; `{id}` is not")))
                }
                (_, d) => return Err(self.err(c, format!("<link_ctn id=\"{id}\">: unknown direction `{d}` (UP, DOWN or NONE)"))),
            };
            forward.push(f);
            back.push(b);
        }
        if forward.is_empty() {
            return Err(self.err(node, format!("{tag}: a route needs at least one <link_ctn>")));
        }
        back.reverse();
        let r = self.b.add_route(zone, src, dst, forward, symmetrical.then_some(back), gateways);
        r.map_err(|reason| self.err(node, format!("{tag} from `{}` to `{}`: {reason}", node.attribute("src").unwrap_or(""), node.attribute("dst").unwrap_or(""))))
    }

    fn cluster(&mut self, node: Node, parent: Option<u32>) -> Result<Arc<dyn Topology>> {
        const ATTRS: &[&str] = &[
            "id", "prefix", "suffix", "radical", "speed", "core", "bw", "lat", "sharing_policy", "topology",
            "topo_parameters", "bb_bw", "bb_lat", "bb_sharing_policy", "router_id", "limiter_link", "loopback_bw",
            "loopback_lat",
        ];
        self.attrs(node, ATTRS, &["id", "prefix", "suffix", "radical", "speed", "bw", "lat"])?;
        self.props_only(node, true)?;
        let tag = Self::tag(node);
        let attr = |n: &str| node.attribute(n).unwrap_or("").to_string();
        let given = |n: &str| node.attribute(n).is_some_and(|v| !v.trim().is_empty());
        let radical = self.radical(node, &attr("radical"))?;
        let sharing = match node.attribute("sharing_policy").unwrap_or("SPLITDUPLEX") {
            "SPLITDUPLEX" | "FULLDUPLEX" => ClusterLinkSharing::Splitduplex,
            "SHARED" => ClusterLinkSharing::Shared,
            "FATPIPE" => ClusterLinkSharing::Fatpipe,
            p => return Err(self.err(node, format!("{tag}: unknown sharing_policy `{p}` (SPLITDUPLEX, SHARED or FATPIPE)"))),
        };
        let kind = match node.attribute("topology").unwrap_or("FLAT") {
            "FLAT" => ClusterKind::Flat,
            "TORUS" => ClusterKind::Torus,
            "FAT_TREE" => ClusterKind::FatTree,
            "DRAGONFLY" => ClusterKind::Dragonfly,
            t => return Err(self.err(node, format!("{tag}: unknown topology `{t}` (FLAT, TORUS, FAT_TREE or DRAGONFLY)"))),
        };
        let backbone = if given("bb_bw") {
            let bw = self.quantity(node, "bb_bw", Quantity::Bandwidth, None)?;
            let lat = self.quantity(node, "bb_lat", Quantity::Time, Some("0s"))?;
            let sharing = match node.attribute("bb_sharing_policy").unwrap_or("SHARED") {
                "SHARED" => LinkSharing::Shared,
                "FATPIPE" => LinkSharing::Fatpipe,
                p => return Err(self.err(node, format!("{tag}: unknown bb_sharing_policy `{p}` (SHARED or FATPIPE)"))),
            };
            Some((bw, lat, sharing))
        } else {
            None
        };
        let limiter_bandwidth = if given("limiter_link") { Some(self.quantity(node, "limiter_link", Quantity::Bandwidth, None)?) } else { None };
        let loopback = if given("loopback_bw") || given("loopback_lat") {
            let bw = if given("loopback_bw") { self.quantity(node, "loopback_bw", Quantity::Bandwidth, None)? } else { LOOPBACK_BANDWIDTH };
            let lat = if given("loopback_lat") { self.quantity(node, "loopback_lat", Quantity::Time, None)? } else { 0.0 };
            Some((bw, lat))
        } else {
            None
        };
        let cores = self.cores(node, "core")?;
        let params = ClusterParams {
            id: attr("id"),
            prefix: attr("prefix"),
            suffix: attr("suffix"),
            radical,
            speed: self.first_speed(node, "speed")?,
            cores: cores as u32,
            bandwidth: self.quantity(node, "bw", Quantity::Bandwidth, None)?,
            latency: self.quantity(node, "lat", Quantity::Time, None)?,
            sharing,
            kind,
            topo_parameters: attr("topo_parameters"),
            backbone,
            limiter_bandwidth,
            loopback,
            router_id: given("router_id").then(|| attr("router_id")),
        };
        let topology = build_cluster_in(&params, DragonflyRouting::Simgrid, &mut self.counters).map_err(|e| {
            let reason = if e.field.is_empty() { e.reason } else { format!("{}: {}", e.field, e.reason) };
            self.err(node, format!("{tag}: {reason}"))
        })?;
        // SimGrid 3.32 gives only a FLAT cluster a router (`sg_platf_new_cluster_flat`); a
        // zoneRoute leaves a torus, fat tree or dragonfly through one of its hosts.
        let router = (params.kind == ClusterKind::Flat).then(|| cluster_router_name(&params));
        let names: Vec<String> = cluster_host_names(&params).map_err(|e| self.err(node, format!("{tag}: {}", e.reason)))?;
        let added = self.b.add_cluster(&params.id, parent, topology.clone(), names.iter().cloned(), router.clone());
        let (zone, first_host, r) = match added {
            Ok(v) => v,
            Err(reason) => return Err(self.err(node, format!("{tag}: {reason}"))),
        };
        self.name_point(node, &params.id, Point::Zone(zone))?;
        for (i, name) in names.into_iter().enumerate() {
            self.add_cores(node, cores)?;
            self.name_point(node, &name, Point::Host(first_host + i as u32))?;
            self.hosts.push(XmlHost { name, speed: params.speed, cores });
        }
        if let (Some(name), Some(r)) = (router, r) {
            self.name_point(node, &name, Point::Router(r))?;
        }
        Ok(topology)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::topology::Endpoint;

    #[test]
    fn units_follow_simgrids_table() {
        let bw = |s| parse_quantity(Quantity::Bandwidth, s).unwrap();
        assert_eq!(bw("125MBps"), 125e6);
        assert_eq!(bw("10Gbps"), 1.25e9);
        assert_eq!(bw("1.5e3kBps"), 1.5e6);
        assert_eq!(bw("1KiBps"), 1024.0);
        assert_eq!(bw("8Mibps"), 1024.0 * 1024.0);
        assert_eq!(bw("100"), 100.0);
        let t = |s| parse_quantity(Quantity::Time, s).unwrap();
        assert_eq!(t("50us"), 50.0 * 1e-6);
        assert_eq!(t("1ms"), 1e-3);
        assert_eq!(t("2m"), 120.0);
        assert_eq!(t("3"), 3.0);
        let f = |s| parse_quantity(Quantity::Speed, s).unwrap();
        assert_eq!(f("1Gf"), 1e9);
        assert_eq!(f("2megaflops"), 2e6);
        assert_eq!(f("1Ef"), 1e18);
        let e = parse_quantity(Quantity::Bandwidth, "10Gbit").unwrap_err();
        assert!(e.contains("unknown unit `Gbit`"), "{e}");
        assert!(parse_quantity(Quantity::Time, "5sec").is_err());
        assert!(parse_quantity(Quantity::Speed, "1GBps").is_err());
        assert!(parse_quantity(Quantity::Speed, "Gf").is_err());
    }

    const TWO_HOSTS: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="b" speed="1Gf" core="2"/>
    <host id="a" speed="2Gf,1Gf"/>
    <link id="l1" bandwidth="125MBps" latency="50us" sharing_policy="SPLITDUPLEX"/>
    <link id="l2" bandwidth="1GBps" latency="1ms" sharing_policy="FATPIPE"/>
    <route src="b" dst="a"><link_ctn id="l1" direction="UP"/><link_ctn id="l2"/></route>
  </zone>
</platform>"#;

    fn names(t: &dyn Topology, s: u32, d: u32) -> (f64, Vec<String>) {
        let mut out = Vec::new();
        let lat = t.route(Endpoint::Host(s), Endpoint::Host(d), &mut out).unwrap();
        (lat, out.into_iter().map(|l| t.link_name(l)).collect())
    }

    #[test]
    fn a_full_zone_gives_its_routes_and_their_reverse() {
        let p = read(TWO_HOSTS).unwrap();
        let hosts: Vec<_> = p.hosts.iter().map(|h| (h.name.as_str(), h.speed, h.cores)).collect();
        assert_eq!(hosts, [("b", 1e9, 2), ("a", 2e9, 1)]);
        let t = p.topology.as_ref();
        assert_eq!(t.kind(), "full");
        assert_eq!(names(t, 0, 1), (50e-6 + 1e-3, vec!["l1_UP".to_string(), "l2".into()]));
        assert_eq!(names(t, 1, 0), (1e-3 + 50e-6, vec!["l2".to_string(), "l1_DOWN".into()]));
        assert_eq!(t.link(0).bandwidth, 125e6);
        assert_eq!(t.link(2).sharing, LinkSharing::Fatpipe);
    }

    fn err(text: &str) -> Error {
        read(text).unwrap_err()
    }

    #[test]
    fn bad_files_name_the_line_and_reason() {
        let e = err(&TWO_HOSTS.replace("125MBps", "125MBs"));
        assert_eq!(e.field, "line 7, column 30", "{e}");
        assert!(e.reason.contains("unknown unit `MBs`"), "{e}");
        let e = err(&TWO_HOSTS.replace(r#"<link_ctn id="l2"/>"#, r#"<link_ctn id="l9"/>"#));
        assert!(e.field.starts_with("line 9,") && e.reason.contains("no link `l9`"), "{e}");
        let e = err(&TWO_HOSTS.replace(r#"<host id="a""#, r#"<host id="b""#));
        assert!(e.field.starts_with("line 6,") && e.reason.contains("used twice"), "{e}");
        let e = err(&TWO_HOSTS.replace("</zone>", "<disk id=\"d\" read_bw=\"1\" write_bw=\"1\"/></zone>"));
        assert!(e.reason.contains("<disk id=\"d\"> is not modelled"), "{e}");
        let e = err(&TWO_HOSTS.replace("</zone>", "<bogus/></zone>"));
        assert_eq!(e.reason, "unknown element <bogus>");
        let e = err(&TWO_HOSTS.replace("</route>", "</rout>"));
        assert!(e.field.starts_with("line 9,") && e.reason.starts_with("malformed XML"), "{e}");
        let e = err(&TWO_HOSTS.replace(r#"sharing_policy="FATPIPE""#, r#"sharing="FATPIPE""#));
        assert!(e.reason.contains("unknown attribute `sharing`"), "{e}");
        let e = err(&TWO_HOSTS.replace(r#" direction="UP""#, ""));
        assert!(e.reason.contains("SPLITDUPLEX"), "{e}");
    }

    #[test]
    fn zone_children_come_in_the_dtds_order() {
        // A prop after another element, a host after the routes: SimGrid's parser refuses both.
        let e = err(&TWO_HOSTS.replace("</zone>", "<prop id=\"p\" value=\"v\"/></zone>"));
        assert!(e.field.starts_with("line 10,") && e.reason.contains("<prop>s come before"), "{e}");
        let e = err(&TWO_HOSTS.replace("</zone>", "<host id=\"c\" speed=\"1Gf\"/></zone>"));
        assert!(e.reason.starts_with("<host id=\"c\"> in <zone id=\"z\">: a zone's routes come after"), "{e}");
        // Links among the hosts, props first: as the DTD allows.
        let ok = TWO_HOSTS.replace("<host id=\"b\"", "<prop id=\"p\" value=\"v\"/><link id=\"l0\" bandwidth=\"1GBps\"/><host id=\"b\"");
        assert_eq!(read(&ok).unwrap().hosts.len(), 2);
        // Empty elements hold nothing.
        let e = err(&TWO_HOSTS.replace(r#"<link_ctn id="l2"/>"#, r#"<link_ctn id="l2"><prop id="p" value="v"/></link_ctn>"#));
        assert!(e.reason.contains("<link_ctn id=\"l2\"> holds no elements"), "{e}");
    }

    #[test]
    fn a_zone_whose_first_element_is_a_link_holds_no_zones() {
        // As SimGrid 3.32 reads them (checked with its parser): a link first puts the zone in the
        // hosts' branch of the DTD, so a zone or cluster after it is refused; after a zone, links
        // and more zones are read.
        let world = |children: &str| {
            format!("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"w\" routing=\"Full\">\n{children}\n</zone>\n</platform>\n")
        };
        let link = r#"<link id="l0" bandwidth="1GBps" latency="1us"/>"#;
        let z1 = r#"<zone id="z1" routing="Full"><host id="h1" speed="1Gf"/></zone>"#;
        let z2 = r#"<zone id="z2" routing="Full"><host id="h2" speed="1Gf"/></zone>"#;
        let cluster = r#"<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>"#;
        let other_link = link.replace("l0", "l9");
        for refused in [format!("{link}{z1}"), format!("{link}{cluster}"), format!("<prop id=\"p\" value=\"v\"/>{link}{other_link}{z1}")] {
            let e = err(&world(&refused));
            assert!(e.reason.contains("first element is a <link>") && e.reason.contains("in <zone id=\"w\">"), "{e}");
        }
        for read_as_simgrid in [format!("{z1}{link}{z2}"), format!("{cluster}{link}{z1}")] {
            assert!(read(&world(&read_as_simgrid)).is_ok(), "{read_as_simgrid}");
        }
    }

    #[test]
    fn every_power_state_is_checked_and_per_host_smpi_overheads_are_refused() {
        let p = read(&TWO_HOSTS.replace("2Gf,1Gf", "2Gf,1Gf,0f")).unwrap();
        assert_eq!(p.hosts[1].speed, 2e9);
        let e = err(&TWO_HOSTS.replace("2Gf,1Gf", "2Gf,fast"));
        assert!(e.reason.contains("speed (power state 1)") && e.reason.contains("`fast`"), "{e}");
        let e = err(&TWO_HOSTS.replace("2Gf,1Gf", "0f,1Gf"));
        assert!(e.reason.contains("<host id=\"a\"> speed: ") && !e.reason.contains("power state"), "{e}");
        let with_prop = |id: &str| TWO_HOSTS.replace(r#"<host id="b" speed="1Gf" core="2"/>"#,
                                                     &format!(r#"<host id="b" speed="1Gf" core="2"><prop id="{id}" value="0:1e-6:0"/></host>"#));
        let e = err(&with_prop("smpi/or"));
        assert!(e.reason.contains("SMPI's per-host overheads are not modelled (network.smpi.or"), "{e}");
        // The energy plugin's props and user data time nothing.
        assert!(read(&with_prop("wattage_per_state")).is_ok());
    }

    #[test]
    fn entity_declarations_are_refused_at_once() {
        let mut bomb = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE platform [\n <!ENTITY a \"aaaaaaaaaa\">\n");
        for i in 1..10 {
            bomb.push_str(&format!(" <!ENTITY a{i} \"{}\">\n", format!("&a{};", if i == 1 { String::new() } else { (i - 1).to_string() }).repeat(10)));
        }
        bomb.push_str("]>\n<platform version=\"4.1\">&a9;</platform>\n");
        let e = err(&bomb);
        assert_eq!(e.field, "line 3, column 2", "{e}");
        assert!(e.reason.contains("entity declarations"), "{e}");
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused_before_parsing() {
        // `levels` elements deep: <platform>, zones (one a line from line 4), a host.
        let nested = |levels: usize| {
            let mut t = String::from("<?xml version=\"1.0\"?>\n<!-- <a><b> -->\n<platform version=\"4.1\">\n");
            for i in 1..levels - 1 {
                let prop = if i == 1 { "<prop id=\"p\" value=\"a>b\"/>" } else { "" };
                t.push_str(&format!("<zone id=\"z{i}\" routing=\"Full\">{prop}\n"));
            }
            t.push_str("<host id=\"h\" speed=\"1f\"/>\n");
            t + &"</zone>".repeat(levels - 2) + "</platform>\n"
        };
        assert_eq!(read(&nested(MAX_NESTING)).unwrap().hosts.len(), 1);
        // The 81st element: the host, or the 80th zone, on line 3 + 80.
        for levels in [MAX_NESTING + 1, 1_000_000] {
            let e = err(&nested(levels));
            assert_eq!(e.field, format!("line {}, column 1", 3 + MAX_NESTING), "{e}");
            assert_eq!(e.reason, format!("nested more than {MAX_NESTING} levels deep (the limit for elements)"));
        }
        // Tags in comments, CDATA, declarations and attribute values do not nest.
        let hidden = "<a>".repeat(100);
        for text in [format!("<!--{hidden}-->"), format!("<p><![CDATA[{hidden}]]></p>"), format!("<?pi {hidden}?>"), format!("<p a='{hidden}'/>")] {
            assert_eq!(nested_too_deep(&text), None, "{text}");
        }
    }

    #[test]
    fn host_limit_is_checked_before_building() {
        let text = r#"<platform version="4.1"><cluster id="c" prefix="n" suffix="" radical="0-1000000000" speed="1f" bw="1Bps" lat="0"/></platform>"#;
        for radical in ["0-1000000000", "0-18446744073709551615"] {
            let e = err(&text.replace("0-1000000000", radical));
            assert!(e.reason.contains("more than 1048576 (2^20) hosts"), "{e}");
        }
    }

    #[test]
    fn floyd_and_dijkstra_route_over_routers_and_zones_join_through_gateways() {
        let text = r#"<platform version="4.1"><zone id="root" routing="Full">
  <zone id="A" routing="Floyd">
    <host id="a1" speed="1f"/><host id="a2" speed="1f"/><router id="ra"/>
    <link id="la1" bandwidth="1Bps" latency="1s"/><link id="la2" bandwidth="1Bps" latency="2s"/>
    <route src="a1" dst="ra"><link_ctn id="la1"/></route>
    <route src="a2" dst="ra"><link_ctn id="la2"/></route>
  </zone>
  <zone id="B" routing="Dijkstra">
    <host id="b1" speed="1f"/><router id="rb"/>
    <link id="lb" bandwidth="1Bps" latency="4s" sharing_policy="SPLITDUPLEX"/>
    <route src="b1" dst="rb"><link_ctn id="lb" direction="UP"/></route>
  </zone>
  <link id="ab" bandwidth="1Bps" latency="8s"/>
  <zoneRoute src="A" dst="B" gw_src="ra" gw_dst="rb"><link_ctn id="ab"/></zoneRoute>
</zone></platform>"#;
        let p = read(text).unwrap();
        let t = p.topology.as_ref();
        assert_eq!(t.kind(), "zones");
        let n = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(names(t, 0, 1), (3.0, n(&["la1", "la2"])));
        // SimGrid 3.32's Dijkstra zones put their links first (DijkstraZone.cpp).
        assert_eq!(names(t, 0, 2), (13.0, n(&["lb_DOWN", "la1", "ab"])));
        assert_eq!(names(t, 2, 1), (14.0, n(&["lb_UP", "ab", "la2"])));
        let e = err(&text.replace(r#"gw_dst="rb""#, r#"gw_dst="ra""#));
        assert!(e.reason.contains("gw_dst must be a host or router inside"), "{e}");
    }
}
