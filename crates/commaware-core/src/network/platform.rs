//! Platform: hosts and the network that joins them.
//!
//! The default topology is a star: every host has a full-duplex NIC link to a
//! non-blocking switch (one up-link, one down-link), with an optional shared
//! backbone crossed by every inter-node transfer. Intra-node messages use the
//! host's memory bandwidth instead of its NIC.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{check_amount, check_seconds, try_with_capacity, Error, ErrorKind, Result};
use crate::network::interference_spec::{Interference, InterferenceSpec};
use crate::network::topology::routing::Routing;
use crate::network::smpi::{SmpiSpec, SmpiTiming, SMPI_ENVELOPE_BYTES};
use crate::network::topology::{Topology, TopologySpec};

/// A homogeneous cluster shorthand: `count` identical hosts named `{prefix}{i}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// Number of hosts.
    pub count: usize,
    /// Compute speed of each host in flop/s.
    pub speed: f64,
    /// Cores per host (ranks that can run on it at once).
    #[serde(default = "one")]
    pub cores: usize,
    /// Memory per host in bytes.
    #[serde(default)]
    pub memory: f64,
    /// Host name prefix; hosts are named prefix0, prefix1, ...
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// Interference of communication on computation of every host (paper 000); rates
    /// per MB/s, MB = 2^20 bytes. None by default.
    #[serde(default)]
    pub interference: Option<InterferenceSpec>,
}

/// One host of a heterogeneous host list.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    /// Compute speed in flop/s.
    pub speed: f64,
    #[serde(default = "one")]
    pub cores: usize,
    /// Memory in bytes.
    #[serde(default)]
    pub memory: f64,
    /// NIC up-link bandwidth in bytes/s (default: the network's `bandwidth`).
    #[serde(default)]
    pub bandwidth_up: Option<f64>,
    /// NIC down-link bandwidth in bytes/s (default: the network's `bandwidth`).
    #[serde(default)]
    pub bandwidth_down: Option<f64>,
    /// Per-message CPU overheads of this host (default: the network's).
    #[serde(flatten)]
    pub overhead: OverheadSpec,
    /// Interference of communication on computation (paper 000); rates per MB/s, MB = 2^20 bytes.
    #[serde(default)]
    pub interference: Option<InterferenceSpec>,
}

/// Per-message CPU overheads of one host; each defaults to the network's value.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct OverheadSpec {
    /// Sender CPU time per message before its transfer starts (s).
    pub send_overhead: Option<f64>,
    /// Extra sender CPU time per byte (s/byte).
    pub send_overhead_per_byte: Option<f64>,
    /// Receiver CPU time per message after its last byte arrived (s).
    pub recv_overhead: Option<f64>,
    /// Extra receiver CPU time per byte (s/byte).
    pub recv_overhead_per_byte: Option<f64>,
}

/// Per-host overrides applied after `cluster` or `hosts` (keyed by host name).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostOverride {
    pub speed: Option<f64>,
    pub cores: Option<usize>,
    pub memory: Option<f64>,
    pub bandwidth_up: Option<f64>,
    pub bandwidth_down: Option<f64>,
    #[serde(flatten)]
    pub overhead: OverheadSpec,
    /// Replaces the host's interference rates (paper 000).
    pub interference: Option<InterferenceSpec>,
}

/// Network parameters. All bandwidths in bytes/s, all times in seconds.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Bandwidth-sharing model: `maxmin` (progressive filling over link capacities),
    /// `contention_free`, or a penalty model of paper 004 (`gige`, `myrinet`,
    /// `infiniband`) or SimGrid's `ib-simgrid` (see docs/sharing.md).
    #[serde(default = "default_model")]
    pub model: String,
    /// Parameters of the sharing model, by name: `beta`, `gamma_o`, `gamma_i` (gige,
    /// infiniband); `beta_e`, `beta_s`, `gamma_s` (ib-simgrid); `exact_limit`, `exact_states`,
    /// `samples`, `steps`, `tolerance`, `seed` (myrinet). Unset ones take the model's defaults.
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// NIC bandwidth of each direction in bytes/s.
    pub bandwidth: f64,
    /// One-way latency of an inter-node message in s: a message first spends it, then
    /// transfers at its shared rate (as SimGrid's CM02 model does).
    #[serde(default)]
    pub latency: f64,
    /// Messages of fewer bytes (payload) than this are eager (detached sends); others
    /// rendezvous. Not given: `network.smpi`'s `send_is_detached_thresh`, else 65,536
    /// ([`Platform::protocol`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager_threshold: Option<f64>,
    /// Collective algorithms: `{"preset": "mpich", "bcast": "binomial_tree", ...}` (see
    /// docs/formats.md); `--coll` entries override these.
    #[serde(default)]
    pub collectives: BTreeMap<String, String>,
    /// Time an MPI_Test sleeps before it looks (s). Not given: `network.smpi`'s `test` (the
    /// preset's 1e-4 s, SMPI's `smpi/test`), else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_seconds: Option<f64>,
    /// Flops a reduction (reduce, allreduce, reduce_scatter, scan, exscan) spends per byte
    /// it combines, after each receive of its reduce phase; 0: reductions cost no time.
    #[serde(default)]
    pub reduction_flops_per_byte: f64,
    /// Bytes added to every message's transfer (headers; SMPI uses 16), zero-byte messages
    /// included; the eager/rendezvous choice looks at the payload only. Not given: 16 with
    /// `network.smpi`'s preset, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope_bytes: Option<f64>,
    /// Capacity of the shared backbone crossed by every inter-node transfer (bytes/s); none by default.
    #[serde(default)]
    pub backbone: Option<f64>,
    /// Bandwidth of intra-node (same host) messages in bytes/s; default: `bandwidth`.
    #[serde(default)]
    pub memory_bandwidth: Option<f64>,
    /// Latency of intra-node messages in s.
    #[serde(default)]
    pub memory_latency: f64,
    /// CPU time the sender spends per message before the transfer starts (s).
    #[serde(default)]
    pub send_overhead: f64,
    /// Extra sender CPU time per byte (s/byte).
    #[serde(default)]
    pub send_overhead_per_byte: f64,
    /// CPU time the receiver spends per message after its last byte arrives (s).
    #[serde(default)]
    pub recv_overhead: f64,
    /// Extra receiver CPU time per byte (s/byte).
    #[serde(default)]
    pub recv_overhead_per_byte: f64,
    /// Treat every send as synchronous (rendezvous whatever its size).
    #[serde(default)]
    pub synchronous_send: bool,
    /// For the `contention_free` model: bandwidth of each ordered host pair in bytes/s
    /// (a hosts x hosts matrix; the diagonal is ignored). Default: the NIC bandwidths.
    #[serde(default)]
    pub pair_bandwidth: Option<Vec<Vec<f64>>>,
    /// SMPI's timing model (SimGrid 3.32): `"simgrid-3.32"` for SimGrid's defaults, or
    /// `{"preset": ..., "bw_factor": "65472:0.94;...", "lat_factor": ..., "os": "0:1e-6:0;...",
    /// "or": ..., "ois": ...}` in SimGrid's syntax (docs/formats.md, "SMPI's timing model").
    /// None by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smpi: Option<SmpiSpec>,
    /// The fabric, when it is not the star: one of SimGrid's cluster topologies (`flat`,
    /// `torus`, `fat_tree`, `dragonfly`) over the platform's hosts in order (docs/topologies.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySpec>,
    /// How each flow picks its route on the topology when its transfer starts
    /// (docs/routing.md): `minimal` (SimGrid 3.32's routing, the default), `valiant`
    /// (dragonfly, torus), `ugal-g`, `ugal-l` (dragonfly), `ecmp`, `adaptive` (fat tree).
    /// Every routing but `minimal` is commaware's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<String>,
    /// Seed of the routing's random draws (Valiant) and hashes (ECMP), 0 to 2^64 - 1.
    #[serde(default)]
    pub routing_seed: u64,
}

impl NetworkSpec {
    /// Check every number of the network section (the fields this layer interprets).
    pub fn check(&self) -> Result<()> {
        let pos = |field: &str, v: f64| check_amount(ErrorKind::Platform, field, v, true);
        let nonneg = |field: &str, v: f64| check_amount(ErrorKind::Platform, field, v, false);
        let seconds = |field: &str, v: f64| check_seconds(ErrorKind::Platform, field, v);
        pos("network.bandwidth", self.bandwidth)?;
        seconds("network.latency", self.latency)?;
        for (field, v) in [("network.eager_threshold", self.eager_threshold), ("network.envelope_bytes", self.envelope_bytes)] {
            v.map_or(Ok(()), |v| nonneg(field, v))?;
        }
        self.test_seconds.map_or(Ok(()), |v| seconds("network.test_seconds", v))?;
        nonneg("network.reduction_flops_per_byte", self.reduction_flops_per_byte)?;
        seconds("network.memory_latency", self.memory_latency)?;
        seconds("network.send_overhead", self.send_overhead)?;
        nonneg("network.send_overhead_per_byte", self.send_overhead_per_byte)?;
        seconds("network.recv_overhead", self.recv_overhead)?;
        nonneg("network.recv_overhead_per_byte", self.recv_overhead_per_byte)?;
        if let Some(b) = self.backbone {
            pos("network.backbone", b)?;
        }
        if let Some(b) = self.memory_bandwidth {
            pos("network.memory_bandwidth", b)?;
        }
        Ok(())
    }
}

/// The platform file as written by users: exactly one of `cluster` or `hosts`, or a SimGrid
/// file for both hosts and links (`simgrid_platform`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
    /// A SimGrid platform file (XML 4.1; a path relative to this file) that gives the hosts
    /// and the network's links, in place of `cluster`, `hosts` and `network.topology`; the
    /// rest of `network` sets the MPI side (eager threshold, envelope, overheads, model,
    /// collectives, `smpi`), and `network.bandwidth` the rate of a host's messages to itself
    /// (default 10 GB/s, SimGrid's loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simgrid_platform: Option<String>,
    #[serde(default)]
    pub cluster: Option<ClusterSpec>,
    #[serde(default)]
    pub hosts: Option<Vec<HostSpec>>,
    #[serde(default)]
    pub overrides: BTreeMap<String, HostOverride>,
    pub network: NetworkSpec,
}

fn one() -> usize {
    1
}
fn default_prefix() -> String {
    "n".into()
}
fn default_model() -> String {
    "maxmin".into()
}

/// A validated host.
#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub name: String,
    pub speed: f64,
    pub cores: usize,
    pub memory: f64,
    pub bandwidth_up: f64,
    pub bandwidth_down: f64,
    pub overhead: Overhead,
    /// Interference of communication on computation (paper 000), peers resolved.
    pub interference: Option<Interference>,
}

/// Resolved per-message CPU overheads of a host (s and s/byte).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Overhead {
    pub send: f64,
    pub send_per_byte: f64,
    pub recv: f64,
    pub recv_per_byte: f64,
}

impl Overhead {
    fn resolve(spec: &OverheadSpec, net: &NetworkSpec) -> Overhead {
        Overhead {
            send: spec.send_overhead.unwrap_or(net.send_overhead),
            send_per_byte: spec.send_overhead_per_byte.unwrap_or(net.send_overhead_per_byte),
            recv: spec.recv_overhead.unwrap_or(net.recv_overhead),
            recv_per_byte: spec.recv_overhead_per_byte.unwrap_or(net.recv_overhead_per_byte),
        }
    }
    /// CPU time of sending a message of `bytes`.
    pub fn send_time(&self, bytes: f64) -> f64 {
        self.send + self.send_per_byte * bytes
    }
    /// CPU time of receiving a message of `bytes`.
    pub fn recv_time(&self, bytes: f64) -> f64 {
        self.recv + self.recv_per_byte * bytes
    }
}

/// The eager threshold when neither the network nor SMPI's settings give one (bytes; SMPI's
/// `smpi/send-is-detached-thresh`).
pub const DEFAULT_EAGER_THRESHOLD: f64 = 65536.0;

/// How the replay's point-to-point protocol behaves ([`Platform::protocol`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Protocol {
    /// Payload bytes from which a send is a rendezvous.
    pub eager_threshold: f64,
    /// Payload bytes from which a detached send's transfer waits for its receive
    /// (`smpi/async-small-thresh`); the eager threshold when SMPI's protocol is not asked for.
    pub async_small_thresh: f64,
    /// Bytes every message carries beyond its payload.
    pub envelope_bytes: f64,
    /// Seconds an MPI_Test sleeps before it looks.
    pub test_seconds: f64,
    /// Each failed test, on any rank, lengthens the next test's sleep by `test_seconds` until
    /// a test succeeds (SMPI's `smpi/grow-injected-times`).
    pub grow_injected_times: bool,
}

/// A validated platform, ready for the engine.
#[derive(Debug, Clone, Serialize)]
pub struct Platform {
    pub hosts: Vec<Host>,
    pub network: NetworkSpec,
    /// `network.smpi`, parsed; `None` without one.
    pub smpi: Option<SmpiTiming>,
    /// The fabric when it is not the star of `network` (issue 28); `None` is the star.
    #[serde(skip)]
    pub topology: Option<Arc<dyn Topology>>,
    /// `network.routing`, checked against the topology ([`Platform::set_routing`]).
    #[serde(skip)]
    pub routing: Routing,
    /// The settings of a SimGrid file's `<config>`, in order, with what each became.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub simgrid_config: Vec<SimgridSetting>,
    /// What a SimGrid file holds that SimGrid reads and commaware accepts without modelling
    /// it (energy and user `<prop>`s, power states after the first), in order of first use.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub simgrid_unmodelled: Vec<SimgridUnmodelled>,
}

/// Something of a SimGrid platform file that changes no time in commaware: what it is, how
/// many elements have it, and where the first one is (`line L, column C`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimgridUnmodelled {
    pub what: String,
    pub count: u64,
    pub first_at: String,
}

/// One setting of a SimGrid platform file's `<config>` and what commaware made of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimgridSetting {
    /// SimGrid's option (`network/crosstraffic`).
    pub setting: String,
    pub value: String,
    /// The platform field it set (`network.parameters.crosstraffic`), or why it changes
    /// nothing here (a setting of SimGrid's solver).
    pub applied_as: String,
}

/// Largest size or count we accept: beyond 2^53 doubles no longer count bytes exactly.
pub const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// Most hosts a platform may have (defined with the topologies, which check it first).
pub use crate::network::topology::MAX_HOSTS;
/// Most cores of one host (2^16).
pub const MAX_CORES_PER_HOST: usize = 1 << 16;
/// Most cores of a whole platform (2^24): a random placement deals every core.
pub const MAX_TOTAL_CORES: usize = 1 << 24;
/// Longest host name and `cluster.prefix`, in bytes.
pub const MAX_NAME_BYTES: usize = 256;

fn check_name(field: impl FnOnce() -> String, name: &str) -> Result<()> {
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::platform(field(), format!("is {} bytes long, at most {MAX_NAME_BYTES} are allowed", name.len())));
    }
    Ok(())
}

fn check_cores(field: impl FnOnce() -> String, cores: usize) -> Result<()> {
    if cores == 0 {
        return Err(Error::platform(field(), "must be >= 1"));
    }
    if cores > MAX_CORES_PER_HOST {
        return Err(Error::platform(field(), format!("{cores} cores, at most {MAX_CORES_PER_HOST} (2^16) per host are allowed")));
    }
    Ok(())
}

impl Platform {
    /// Validate a platform file's specification: hosts, overrides, interference rates and
    /// every number of the network. The fields that upper layers interpret (the sharing
    /// model and its parameters, the collective algorithms) are checked by the loader of
    /// platform files, `mpi::platform_file`, which calls this.
    pub fn from_spec(spec: PlatformSpec) -> Result<Platform> {
        if spec.simgrid_platform.is_some() {
            return Err(Error::platform(
                "simgrid_platform",
                "the SimGrid file is opened when the platform is loaded from a file or a dict (load_platform)",
            ));
        }
        let net = spec.network;
        net.check()?;
        let pos = |field: &str, v: f64| check_amount(ErrorKind::Platform, field, v, true);
        let nonneg = |field: &str, v: f64| check_amount(ErrorKind::Platform, field, v, false);

        // Interference specs (the cluster's, or each listed host's) with their field names,
        // resolved once every host name is known.
        let mut cluster_interference: Option<(InterferenceSpec, String)> = None;
        let mut host_interference: Vec<Option<(InterferenceSpec, String)>> = Vec::new();
        let mut hosts: Vec<Host> = match (spec.cluster, spec.hosts) {
            (Some(_), Some(_)) => {
                return Err(Error::platform("", "give either `cluster` or `hosts`, not both"))
            }
            (None, None) => return Err(Error::platform("", "missing `cluster` or `hosts`")),
            (Some(c), None) => {
                if c.count == 0 {
                    return Err(Error::platform("cluster.count", "must be > 0"));
                }
                if c.count > MAX_HOSTS {
                    return Err(Error::platform("cluster.count", format!("{} hosts, at most {MAX_HOSTS} (2^20) are allowed", c.count)));
                }
                check_cores(|| "cluster.cores".into(), c.cores)?;
                check_name(|| "cluster.prefix".into(), &c.prefix)?;
                let overhead = Overhead::resolve(&OverheadSpec::default(), &net);
                cluster_interference = c.interference.clone().map(|i| (i, "cluster.interference".to_string()));
                let mut hosts = try_with_capacity(ErrorKind::Platform, "cluster.count", c.count)?;
                hosts.extend((0..c.count).map(|i| Host {
                        name: format!("{}{}", c.prefix, i),
                        speed: c.speed,
                        cores: c.cores,
                        memory: c.memory,
                        bandwidth_up: net.bandwidth,
                        bandwidth_down: net.bandwidth,
                        overhead,
                        interference: None,
                    }));
                hosts
            }
            (None, Some(list)) => {
                if list.is_empty() {
                    return Err(Error::platform("hosts", "must list at least one host"));
                }
                if list.len() > MAX_HOSTS {
                    return Err(Error::platform("hosts", format!("{} hosts, at most {MAX_HOSTS} (2^20) are allowed", list.len())));
                }
                for (i, h) in list.iter().enumerate() {
                    check_name(|| format!("hosts[{i}].name"), &h.name)?;
                }
                host_interference =
                    list.iter().enumerate().map(|(i, h)| h.interference.clone().map(|s| (s, format!("hosts[{i}].interference")))).collect();
                list.into_iter()
                    .map(|h| Host {
                        name: h.name,
                        speed: h.speed,
                        cores: h.cores,
                        memory: h.memory,
                        bandwidth_up: h.bandwidth_up.unwrap_or(net.bandwidth),
                        bandwidth_down: h.bandwidth_down.unwrap_or(net.bandwidth),
                        overhead: Overhead::resolve(&h.overhead, &net),
                        interference: None,
                    })
                    .collect()
            }
        };
        let mut targets: Vec<(usize, &HostOverride)> = Vec::with_capacity(spec.overrides.len());
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for (i, h) in hosts.iter().enumerate() {
            if index.insert(h.name.clone(), i).is_some() {
                return Err(Error::platform(format!("hosts[{i}].name"), format!("duplicate host name `{}`", h.name)));
            }
        }
        for (name, o) in &spec.overrides {
            let Some(&i) = index.get(name.as_str()) else {
                return Err(Error::platform(format!("overrides.{name}"), format!("unknown host `{name}`")));
            };
            targets.push((i, o));
        }
        // Interference: the cluster's for every host, or each listed host's, then overrides.
        let lookup = |name: &str| index.get(name).copied();
        if let Some((s, field)) = cluster_interference {
            let resolved = Interference::resolve(&s, &field, lookup)?;
            hosts.iter_mut().for_each(|h| h.interference = Some(resolved.clone()));
        }
        for (h, given) in hosts.iter_mut().zip(host_interference) {
            if let Some((s, field)) = given {
                h.interference = Some(Interference::resolve(&s, &field, lookup)?);
            }
        }
        for (i, o) in &targets {
            if let Some(s) = &o.interference {
                let field = format!("overrides.{}.interference", hosts[*i].name);
                hosts[*i].interference = Some(Interference::resolve(s, &field, lookup)?);
            }
        }
        for (i, o) in targets {
            let h = &mut hosts[i];
            if let Some(v) = o.speed { h.speed = v; }
            if let Some(v) = o.cores { h.cores = v; }
            if let Some(v) = o.memory { h.memory = v; }
            if let Some(v) = o.bandwidth_up { h.bandwidth_up = v; }
            if let Some(v) = o.bandwidth_down { h.bandwidth_down = v; }
            let given = &o.overhead;
            if let Some(v) = given.send_overhead { h.overhead.send = v; }
            if let Some(v) = given.send_overhead_per_byte { h.overhead.send_per_byte = v; }
            if let Some(v) = given.recv_overhead { h.overhead.recv = v; }
            if let Some(v) = given.recv_overhead_per_byte { h.overhead.recv_per_byte = v; }
        }
        for (i, h) in hosts.iter().enumerate() {
            let f = |name: &str| format!("hosts[{i}] ({}).{name}", h.name);
            pos(&f("speed"), h.speed)?;
            nonneg(&f("memory"), h.memory)?;
            pos(&f("bandwidth_up"), h.bandwidth_up)?;
            pos(&f("bandwidth_down"), h.bandwidth_down)?;
            check_cores(|| f("cores"), h.cores)?;
            check_seconds(ErrorKind::Platform, &f("send_overhead"), h.overhead.send)?;
            nonneg(&f("send_overhead_per_byte"), h.overhead.send_per_byte)?;
            check_seconds(ErrorKind::Platform, &f("recv_overhead"), h.overhead.recv)?;
            nonneg(&f("recv_overhead_per_byte"), h.overhead.recv_per_byte)?;
        }
        let total_cores: usize = hosts.iter().map(|h| h.cores).sum();
        if total_cores > MAX_TOTAL_CORES {
            return Err(Error::platform(
                "",
                format!("{total_cores} cores in all, at most {MAX_TOTAL_CORES} (2^24) are allowed"),
            ));
        }
        if let Some(m) = &net.pair_bandwidth {
            if m.len() != hosts.len() {
                return Err(Error::platform("network.pair_bandwidth", format!("has {} rows for {} hosts", m.len(), hosts.len())));
            }
            for (i, row) in m.iter().enumerate() {
                if row.len() != hosts.len() {
                    return Err(Error::platform(
                        format!("network.pair_bandwidth[{i}]"),
                        format!("has {} entries for {} hosts (the matrix must be square)", row.len(), hosts.len()),
                    ));
                }
                for (j, &v) in row.iter().enumerate() {
                    if i != j {
                        pos(&format!("network.pair_bandwidth[{i}][{j}]"), v)?;
                    }
                }
            }
        }
        let smpi = net.smpi.as_ref().map(SmpiTiming::from_spec).transpose()?;
        if let Some(SmpiSpec::Fields(f)) = &net.smpi {
            // One value given twice, by its two names: they must agree.
            for (ours, theirs, a, b) in [
                ("network.eager_threshold", "network.smpi.send_is_detached_thresh", net.eager_threshold, f.send_is_detached_thresh),
                ("network.test_seconds", "network.smpi.test", net.test_seconds, f.test),
            ] {
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        return Err(Error::platform(ours, format!("is {a} but {theirs} is {b}: they are one setting, give one of them")));
                    }
                }
            }
        }
        let topology = match &net.topology {
            Some(t) => Some(t.build(hosts.len(), net.bandwidth, net.latency)?),
            None => None,
        };
        // `network.routing` is checked once the fabric is known (a SimGrid file gives it later).
        Ok(Platform { hosts, network: net, smpi, topology, routing: Routing::Minimal, simgrid_config: Vec::new(), simgrid_unmodelled: Vec::new() })
    }

    /// Route flows by the routing named `name` (`network.routing`'s names), seeded by `seed`
    /// when given; an unknown name or a routing of another topology is an error naming `field`.
    pub fn set_routing(&mut self, name: &str, seed: Option<u64>, field: &str) -> Result<()> {
        self.routing = Routing::for_topology(name, self.topology.as_deref().map(|t| t.kind()), field)?;
        self.network.routing = Some(name.to_string());
        if let Some(seed) = seed {
            self.network.routing_seed = seed;
        }
        Ok(())
    }

    /// Check `network.routing` against the topology, now or after the topology changed.
    pub fn check_routing(&mut self) -> Result<()> {
        let name = self.network.routing.as_deref().unwrap_or(Routing::Minimal.name());
        self.routing = Routing::for_topology(name, self.topology.as_deref().map(|t| t.kind()), "network.routing")?;
        Ok(())
    }

    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }

    /// The MPI protocol settings a replay uses: the network's own fields, else `network.smpi`'s
    /// (its fields or its preset, smpirun's defaults), else commaware's defaults.
    pub fn protocol(&self) -> Protocol {
        let net = &self.network;
        let smpi = self.smpi.as_ref();
        let eager_threshold = net.eager_threshold.or(smpi.and_then(|s| s.send_is_detached_thresh)).unwrap_or(DEFAULT_EAGER_THRESHOLD);
        Protocol {
            eager_threshold,
            async_small_thresh: smpi.and_then(|s| s.async_small_thresh).unwrap_or(eager_threshold),
            envelope_bytes: net.envelope_bytes.unwrap_or(if smpi.is_some_and(|s| s.preset) { SMPI_ENVELOPE_BYTES } else { 0.0 }),
            test_seconds: net.test_seconds.or(smpi.and_then(|s| s.test)).unwrap_or(0.0),
            grow_injected_times: smpi.is_some_and(|s| s.grow_injected_times.unwrap_or(s.preset && net.test_seconds.is_none())),
        }
    }

    /// Bandwidth of intra-node messages.
    pub fn memory_bandwidth(&self) -> f64 {
        self.network.memory_bandwidth.unwrap_or(self.network.bandwidth)
    }

    /// The JSON Schema of platform files with this layer's bounds: bandwidths and speeds
    /// > 0, times, sizes and overheads >= 0, host and core counts within the limits, and
    /// exactly one of `cluster` and `hosts`. The loader of platform files adds the fields
    /// upper layers interpret (`mpi::platform_file::json_schema`).
    pub fn json_schema() -> serde_json::Value {
        let mut schema = serde_json::to_value(schemars::schema_for!(PlatformSpec)).expect("schema serialises");
        // Hosts from `cluster`, `hosts` or a SimGrid file; `network` and its `bandwidth` are
        // required unless the SimGrid file gives the network (then they default).
        let own = serde_json::json!({"required": ["network"], "properties": {"network": {"required": ["bandwidth"]}}});
        schema["oneOf"] = serde_json::json!([
            {"required": ["cluster"], "allOf": [own]},
            {"required": ["hosts"], "allOf": [own]},
            {"required": ["simgrid_platform"]}
        ]);
        if let Some(required) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
            required.retain(|r| r != "network");
        }
        if let Some(required) = schema.pointer_mut("/definitions/NetworkSpec/required").and_then(|r| r.as_array_mut()) {
            required.retain(|r| r != "bandwidth");
        }
        if let Some(hosts) = schema.pointer_mut("/properties/hosts") {
            hosts["minItems"] = 1.into();
            hosts["maxItems"] = MAX_HOSTS.into();
        }
        if let Some(defs) = schema.get_mut("definitions").and_then(|d| d.as_object_mut()) {
            for def in defs.values_mut() {
                let Some(props) = def.get_mut("properties").and_then(|p| p.as_object_mut()) else { continue };
                for (name, prop) in props.iter_mut() {
                    match name.as_str() {
                        "bandwidth" | "speed" | "bandwidth_up" | "bandwidth_down" | "backbone" | "memory_bandwidth" => {
                            prop["exclusiveMinimum"] = 0.into()
                        }
                        "latency" | "test_seconds" | "memory_latency" | "send_overhead" | "recv_overhead" => {
                            prop["minimum"] = 0.into();
                            prop["maximum"] = crate::error::MAX_SECONDS.into();
                        }
                        "eager_threshold" | "envelope_bytes" | "reduction_flops_per_byte" | "memory"
                        | "send_overhead_per_byte" | "recv_overhead_per_byte" => prop["minimum"] = 0.into(),
                        "count" => {
                            prop["minimum"] = 1.into();
                            prop["maximum"] = MAX_HOSTS.into();
                        }
                        "cores" => {
                            prop["minimum"] = 1.into();
                            prop["maximum"] = MAX_CORES_PER_HOST.into();
                        }
                        _ => {}
                    }
                }
            }
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{parse_input, Format};

    /// This layer's checks alone (the loader of platform files adds the upper layers').
    fn from_text(text: &str, format: Format) -> Result<Platform> {
        Platform::from_spec(parse_input(ErrorKind::Platform, text, format)?)
    }

    fn from_json(text: &str) -> Result<Platform> {
        from_text(text, Format::Json)
    }

    #[test]
    fn cluster_shorthand_and_overrides() {
        let p = from_json(
            r#"{"cluster": {"count": 3, "speed": 1e9}, "overrides": {"n1": {"speed": 2e9, "bandwidth_up": 10}},
                "network": {"bandwidth": 100}}"#,
        )
        .unwrap();
        assert_eq!(p.hosts.len(), 3);
        assert_eq!(p.hosts[1].speed, 2e9);
        assert_eq!(p.hosts[1].bandwidth_up, 10.0);
        assert_eq!(p.hosts[2].bandwidth_up, 100.0);
        assert_eq!(p.hosts[2].name, "n2");
    }

    #[test]
    fn rejects_bad_values() {
        let e = from_json(r#"{"cluster": {"count": 2, "speed": 0}, "network": {"bandwidth": 1}}"#).unwrap_err();
        assert!(e.field.contains("speed"), "{e}");
        let e = from_json(r#"{"cluster": {"count": 2, "speed": 1}, "network": {"bandwidth": -1}}"#).unwrap_err();
        assert_eq!(e.field, "network.bandwidth");
        let e = from_json(r#"{"cluster": {"count": 2, "speed": 1}, "overrides": {"zz": {}}, "network": {"bandwidth": 1}}"#)
            .unwrap_err();
        assert!(e.reason.contains("unknown host"), "{e}");
        let e = from_json(r#"{"cluster": {"count": 2, "speed": 1}, "network": {"bandwidht": 1}}"#).unwrap_err();
        assert!(e.reason.contains("unknown field"), "{e}");
    }

    fn plat(cluster: &str, network: &str) -> Result<Platform> {
        from_json(&format!(r#"{{"cluster": {{{cluster}}}, "network": {{"bandwidth": 1{network}}}}}"#))
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        // 10^12 hosts would need ~100 TB: refused at once, naming the field.
        let e = plat(r#""count": 1000000000000, "speed": 1"#, "").unwrap_err();
        assert_eq!((e.kind, e.field.as_str()), (ErrorKind::Platform, "cluster.count"), "{e}");
        assert!(e.reason.contains("at most 1048576"), "{e}");
        assert!(plat(&format!(r#""count": {MAX_HOSTS}, "speed": 1"#), "").is_ok());
        let e = plat(&format!(r#""count": {}, "speed": 1"#, MAX_HOSTS + 1), "").unwrap_err();
        assert_eq!(e.field, "cluster.count");
        let e = plat(r#""count": 2, "speed": 1, "cores": 18446744073709551615"#, "").unwrap_err();
        assert_eq!(e.field, "cluster.cores", "{e}");
        assert!(e.reason.contains("at most 65536"), "{e}");
        let e = plat(&format!(r#""count": 2, "speed": 1, "prefix": "{}""#, "x".repeat(MAX_NAME_BYTES + 1)), "").unwrap_err();
        assert_eq!(e.field, "cluster.prefix", "{e}");
        // 2^20 hosts of 32 cores is more than 2^24 cores in all.
        let e = plat(&format!(r#""count": {MAX_HOSTS}, "speed": 1, "cores": 32"#), "").unwrap_err();
        assert!(e.reason.contains("cores in all"), "{e}");
        let e = from_json(
            r#"{"cluster": {"count": 2, "speed": 1}, "overrides": {"n1": {"cores": 100000}}, "network": {"bandwidth": 1}}"#,
        )
        .unwrap_err();
        assert_eq!(e.field, "hosts[1] (n1).cores", "{e}");
        let e = from_json(&format!(
            r#"{{"hosts": [{{"name": "{}", "speed": 1}}], "network": {{"bandwidth": 1}}}}"#,
            "h".repeat(300)
        ))
        .unwrap_err();
        assert_eq!(e.field, "hosts[0].name", "{e}");
    }

    #[test]
    fn toml_platforms_report_toml_positions() {
        let text = "[cluster]\ncount = 4\nspeed = \"fast\"\n\n[network]\nbandwidth = 1e9\n";
        let e = from_text(text, Format::Toml).unwrap_err();
        assert_eq!(e.field, "cluster.speed", "{e}");
        assert!(e.reason.ends_with("at line 3 column 9"), "{e}");
        let text = "[[hosts]]\nname = \"a\"\nspeed = 1\nbandwidth_up = \"x\"\n[network]\nbandwidth = 1\n";
        let e = from_text(text, Format::Toml).unwrap_err();
        assert_eq!(e.field, "hosts[0].bandwidth_up", "{e}");
        assert!(e.reason.contains("line 4"), "{e}");
        let e = from_text("[cluster\n", Format::Toml).unwrap_err();
        assert!(e.reason.starts_with("malformed TOML") && e.reason.contains("line 1"), "{e}");
        let e = from_text("[cluster]\ncount = 2\nspeed = nan\n[network]\nbandwidth = 1\n", Format::Toml).unwrap_err();
        assert!(e.reason.starts_with(crate::error::NON_FINITE), "{e}");
        let p = from_text(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/platform_hetero.toml")).unwrap(), Format::Toml);
        assert!(p.is_ok(), "{:?}", p.err());
    }
}
