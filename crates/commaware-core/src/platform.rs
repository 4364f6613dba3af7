//! Platform: hosts and the network that joins them.
//!
//! The default topology is a star: every host has a full-duplex NIC link to a
//! non-blocking switch (one up-link, one down-link), with an optional shared
//! backbone crossed by every inter-node transfer. Intra-node messages use the
//! host's memory bandwidth instead of its NIC.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{check_amount, parse_json, Error, ErrorKind, Result};

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
}

/// Network parameters. All bandwidths in bytes/s, all times in seconds.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Bandwidth-sharing model: `maxmin` (progressive filling over link capacities).
    #[serde(default = "default_model")]
    pub model: String,
    /// NIC bandwidth of each direction in bytes/s.
    pub bandwidth: f64,
    /// One-way latency of an inter-node message in s: a message first spends it, then
    /// transfers at its shared rate (as SimGrid's CM02 model does).
    #[serde(default)]
    pub latency: f64,
    /// Messages of fewer bytes than this are eager (detached sends); others rendezvous.
    #[serde(default = "default_eager")]
    pub eager_threshold: f64,
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
}

/// The platform file as written by users: exactly one of `cluster` or `hosts`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
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
fn default_eager() -> f64 {
    65536.0
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

/// A validated platform, ready for the engine.
#[derive(Debug, Clone, Serialize)]
pub struct Platform {
    pub hosts: Vec<Host>,
    pub network: NetworkSpec,
}

/// Largest size or count we accept: beyond 2^53 doubles no longer count bytes exactly.
pub const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

impl Platform {
    /// Parse and validate JSON text. Errors carry the field path; the caller adds the file.
    pub fn from_json(text: &str) -> Result<Platform> {
        let spec: PlatformSpec = parse_json(ErrorKind::Platform, text)?;
        Platform::from_spec(spec)
    }

    pub fn from_spec(spec: PlatformSpec) -> Result<Platform> {
        let net = spec.network;
        let pos = |field: &str, v: f64| check_amount(ErrorKind::Platform, field, v, true);
        let nonneg = |field: &str, v: f64| check_amount(ErrorKind::Platform, field, v, false);
        pos("network.bandwidth", net.bandwidth)?;
        nonneg("network.latency", net.latency)?;
        nonneg("network.eager_threshold", net.eager_threshold)?;
        nonneg("network.memory_latency", net.memory_latency)?;
        nonneg("network.send_overhead", net.send_overhead)?;
        nonneg("network.send_overhead_per_byte", net.send_overhead_per_byte)?;
        nonneg("network.recv_overhead", net.recv_overhead)?;
        nonneg("network.recv_overhead_per_byte", net.recv_overhead_per_byte)?;
        if let Some(b) = net.backbone {
            pos("network.backbone", b)?;
        }
        if let Some(b) = net.memory_bandwidth {
            pos("network.memory_bandwidth", b)?;
        }
        crate::sharing::check_model_name(&net.model).map_err(|e| Error { field: "network.model".into(), ..e })?;

        let mut hosts: Vec<Host> = match (spec.cluster, spec.hosts) {
            (Some(_), Some(_)) => {
                return Err(Error::platform("", "give either `cluster` or `hosts`, not both"))
            }
            (None, None) => return Err(Error::platform("", "missing `cluster` or `hosts`")),
            (Some(c), None) => {
                if c.count == 0 {
                    return Err(Error::platform("cluster.count", "must be > 0"));
                }
                let overhead = Overhead::resolve(&OverheadSpec::default(), &net);
                (0..c.count)
                    .map(|i| Host {
                        name: format!("{}{}", c.prefix, i),
                        speed: c.speed,
                        cores: c.cores,
                        memory: c.memory,
                        bandwidth_up: net.bandwidth,
                        bandwidth_down: net.bandwidth,
                        overhead,
                    })
                    .collect()
            }
            (None, Some(list)) => {
                if list.is_empty() {
                    return Err(Error::platform("hosts", "must list at least one host"));
                }
                list.into_iter()
                    .map(|h| Host {
                        name: h.name,
                        speed: h.speed,
                        cores: h.cores,
                        memory: h.memory,
                        bandwidth_up: h.bandwidth_up.unwrap_or(net.bandwidth),
                        bandwidth_down: h.bandwidth_down.unwrap_or(net.bandwidth),
                        overhead: Overhead::resolve(&h.overhead, &net),
                    })
                    .collect()
            }
        };
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for (i, h) in hosts.iter().enumerate() {
            if index.insert(h.name.clone(), i).is_some() {
                return Err(Error::platform(format!("hosts[{i}].name"), format!("duplicate host name `{}`", h.name)));
            }
        }
        for (name, o) in &spec.overrides {
            let Some(&i) = index.get(name) else {
                return Err(Error::platform(format!("overrides.{name}"), format!("unknown host `{name}`")));
            };
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
            if h.cores == 0 {
                return Err(Error::platform(f("cores"), "must be >= 1"));
            }
            nonneg(&f("send_overhead"), h.overhead.send)?;
            nonneg(&f("send_overhead_per_byte"), h.overhead.send_per_byte)?;
            nonneg(&f("recv_overhead"), h.overhead.recv)?;
            nonneg(&f("recv_overhead_per_byte"), h.overhead.recv_per_byte)?;
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
        Ok(Platform { hosts, network: net })
    }

    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }

    /// Bandwidth of intra-node messages.
    pub fn memory_bandwidth(&self) -> f64 {
        self.network.memory_bandwidth.unwrap_or(self.network.bandwidth)
    }

    /// JSON Schema of the platform format.
    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(PlatformSpec)).expect("schema serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_shorthand_and_overrides() {
        let p = Platform::from_json(
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
        let e = Platform::from_json(r#"{"cluster": {"count": 2, "speed": 0}, "network": {"bandwidth": 1}}"#).unwrap_err();
        assert!(e.field.contains("speed"), "{e}");
        let e = Platform::from_json(r#"{"cluster": {"count": 2, "speed": 1}, "network": {"bandwidth": -1}}"#).unwrap_err();
        assert_eq!(e.field, "network.bandwidth");
        let e = Platform::from_json(r#"{"cluster": {"count": 2, "speed": 1}, "overrides": {"zz": {}}, "network": {"bandwidth": 1}}"#)
            .unwrap_err();
        assert!(e.reason.contains("unknown host"), "{e}");
        let e = Platform::from_json(r#"{"cluster": {"count": 2, "speed": 1}, "network": {"bandwidth": 1, "model": "nope"}}"#)
            .unwrap_err();
        assert_eq!(e.field, "network.model");
        let e = Platform::from_json(r#"{"cluster": {"count": 2, "speed": 1}, "network": {"bandwidht": 1}}"#).unwrap_err();
        assert!(e.reason.contains("unknown field"), "{e}");
    }
}
