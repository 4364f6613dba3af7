//! The communication model of §2 and the multiple multicast problem of §3.1.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Per-node overheads (§2), in seconds and seconds per byte.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeParams {
    pub send_const: f64,
    pub send_per_byte: f64,
    pub recv_const: f64,
    pub recv_per_byte: f64,
}

impl NodeParams {
    /// Eq. (2): S(i, m) = S_c(i) + S_m(i) * m.
    pub fn send(&self, bytes: f64) -> f64 {
        self.send_const + self.send_per_byte * bytes
    }
    /// Eq. (3): R(i, m) = R_c(i) + R_m(i) * m.
    pub fn recv(&self, bytes: f64) -> f64 {
        self.recv_const + self.recv_per_byte * bytes
    }
}

/// Transmission time per byte X(i, j) (§2), in seconds per byte:
/// `{"default": x}` for every pair, or `{"matrix": [[...]]}` (N x N, row = sender).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Transmission {
    Default(f64),
    Matrix(Vec<Vec<f64>>),
}

/// One multicast of §3.1: `source` sends a message of `bytes` bytes to `destinations`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Multicast {
    pub source: usize,
    pub destinations: Vec<usize>,
    pub bytes: f64,
}

/// A multiple multicast instance (§3.1). Node ids are indices into `nodes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    pub nodes: Vec<NodeParams>,
    pub transmission: Transmission,
    pub multicasts: Vec<Multicast>,
}

/// Bad input: which field, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MulticastError {
    pub field: String,
    pub reason: String,
}

impl fmt::Display for MulticastError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for MulticastError {}

fn err(field: impl Into<String>, reason: impl Into<String>) -> Result<(), MulticastError> {
    Err(MulticastError {
        field: field.into(),
        reason: reason.into(),
    })
}

/// Most nodes of an instance (2^12): the schedulers keep tables of N x N and N x M
/// entries (M multicasts, at most N), so each has at most 2^24 entries.
pub const MAX_NODES: usize = 1 << 12;

/// Largest message in bytes (2^53: beyond it doubles no longer count bytes exactly).
pub const MAX_BYTES: f64 = crate::network::platform::MAX_EXACT;

/// A finite, non-negative value; `field` is only built on error.
fn check_value(field: impl FnOnce() -> String, v: f64, what: &str) -> Result<(), MulticastError> {
    use crate::error::{fmt_num, NON_FINITE};
    if !v.is_finite() {
        return err(field(), format!("{what}: {NON_FINITE}, got {}", fmt_num(v)));
    }
    if v < 0.0 {
        return err(field(), format!("{what} must not be negative, got {}", fmt_num(v)));
    }
    Ok(())
}

/// A time that must stay finite for the largest message of the instance.
fn check_time(field: impl FnOnce() -> String, t: f64, largest: f64) -> Result<(), MulticastError> {
    if !t.is_finite() {
        return err(
            field(),
            format!(
                "gives an infinite time for the largest message ({} bytes): the value is too large",
                crate::error::fmt_num(largest)
            ),
        );
    }
    Ok(())
}

impl Instance {
    /// JSON Schema of the instance format.
    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(Instance)).expect("schema serialises")
    }

    /// A single broadcast (§3.1): `source` sends `bytes` to every other node.
    pub fn broadcast(
        nodes: Vec<NodeParams>,
        transmission: Transmission,
        source: usize,
        bytes: f64,
    ) -> Self {
        let destinations = (0..nodes.len()).filter(|&d| d != source).collect();
        Instance {
            nodes,
            transmission,
            multicasts: vec![Multicast {
                source,
                destinations,
                bytes,
            }],
        }
    }

    /// All-to-all broadcast (§3.1): every node broadcasts `bytes` to every other node.
    pub fn all_to_all(nodes: Vec<NodeParams>, transmission: Transmission, bytes: f64) -> Self {
        let n = nodes.len();
        let multicasts = (0..n)
            .map(|s| Multicast {
                source: s,
                destinations: (0..n).filter(|&d| d != s).collect(),
                bytes,
            })
            .collect();
        Instance {
            nodes,
            transmission,
            multicasts,
        }
    }

    /// X(i, j), seconds per byte.
    pub fn x(&self, i: usize, j: usize) -> f64 {
        match &self.transmission {
            Transmission::Default(x) => *x,
            Transmission::Matrix(m) => m[i][j],
        }
    }

    /// Eq. (1): point-to-point latency T(i, j, m) = S(i, m) + X(i, j) * m + R(j, m).
    pub fn latency(&self, i: usize, j: usize, bytes: f64) -> f64 {
        self.nodes[i].send(bytes) + self.x(i, j) * bytes + self.nodes[j].recv(bytes)
    }

    /// Number of (destination, message) deliveries the instance asks for.
    pub fn deliveries(&self) -> usize {
        self.multicasts.iter().map(|m| m.destinations.len()).sum()
    }

    /// Checks the instance; the first problem found is returned.
    pub fn validate(&self) -> Result<(), MulticastError> {
        let n = self.nodes.len();
        if n == 0 {
            return err("nodes", "no nodes");
        }
        if n > MAX_NODES {
            return err("nodes", format!("{n} nodes, at most {MAX_NODES} (2^12) are allowed"));
        }
        if self.multicasts.len() > n {
            return err(
                "multicasts",
                format!("{} multicasts for {n} nodes: each needs a source of its own", self.multicasts.len()),
            );
        }
        for (i, p) in self.nodes.iter().enumerate() {
            for (name, v) in [
                ("send_const", p.send_const),
                ("send_per_byte", p.send_per_byte),
                ("recv_const", p.recv_const),
                ("recv_per_byte", p.recv_per_byte),
            ] {
                check_value(|| format!("nodes[{i}].{name}"), v, "an overhead")?;
            }
        }
        match &self.transmission {
            Transmission::Default(x) => {
                check_value(|| "transmission.default".into(), *x, "a transmission time")?
            }
            Transmission::Matrix(m) => {
                if m.len() != n {
                    return err(
                        "transmission.matrix",
                        format!("has {} rows, expected {n} (one per node)", m.len()),
                    );
                }
                for (i, row) in m.iter().enumerate() {
                    if row.len() != n {
                        return err(
                            format!("transmission.matrix[{i}]"),
                            format!("has {} entries, expected {n}: the matrix must be square, one row and column per node", row.len()),
                        );
                    }
                    for (j, &x) in row.iter().enumerate() {
                        check_value(
                            || format!("transmission.matrix[{i}][{j}]"),
                            x,
                            "a transmission time",
                        )?;
                    }
                }
            }
        }
        let mut source_of = vec![usize::MAX; n]; // node -> multicast index having it as source
        let mut seen = vec![usize::MAX; n]; // seen[d] = k: d already listed in multicasts[k]
        for (k, mc) in self.multicasts.iter().enumerate() {
            let f = || format!("multicasts[{k}]");
            if mc.source >= n {
                return err(
                    format!("{}.source", f()),
                    format!("node id {} out of range 0..{n}", mc.source),
                );
            }
            if source_of[mc.source] != usize::MAX {
                return err(
                    format!("{}.source", f()),
                    format!(
                        "node {} is also the source of multicasts[{}]; a message is named by its source, so two multicasts may not share one",
                        mc.source, source_of[mc.source]
                    ),
                );
            }
            source_of[mc.source] = k;
            check_value(|| format!("{}.bytes", f()), mc.bytes, "a message size")?;
            if mc.bytes > MAX_BYTES {
                return err(
                    format!("{}.bytes", f()),
                    format!("{} bytes, at most 2^53 are allowed", crate::error::fmt_num(mc.bytes)),
                );
            }
            if mc.destinations.is_empty() {
                return err(format!("{}.destinations", f()), "empty destination set");
            }
            for (d, &dest) in mc.destinations.iter().enumerate() {
                let fd = || format!("{}.destinations[{d}]", f());
                if dest >= n {
                    return err(fd(), format!("node id {dest} out of range 0..{n}"));
                }
                if dest == mc.source {
                    return err(fd(), format!("node {dest} is the source of this multicast: a source is not in its own destination set"));
                }
                if seen[dest] == k {
                    return err(fd(), format!("duplicate destination {dest}"));
                }
                seen[dest] = k;
            }
        }
        self.check_finite_times()
    }

    /// Every overhead and transmission stays finite for the largest message, so no
    /// completion time is infinite.
    fn check_finite_times(&self) -> Result<(), MulticastError> {
        let largest = self.multicasts.iter().map(|m| m.bytes).fold(0.0f64, f64::max);
        for (i, p) in self.nodes.iter().enumerate() {
            check_time(|| format!("nodes[{i}].send_per_byte"), p.send_per_byte * largest, largest)?;
            check_time(|| format!("nodes[{i}].send_const"), p.send(largest), largest)?;
            check_time(|| format!("nodes[{i}].recv_per_byte"), p.recv_per_byte * largest, largest)?;
            check_time(|| format!("nodes[{i}].recv_const"), p.recv(largest), largest)?;
        }
        match &self.transmission {
            Transmission::Default(x) => check_time(|| "transmission.default".into(), x * largest, largest),
            Transmission::Matrix(m) => {
                for (i, row) in m.iter().enumerate() {
                    for (j, x) in row.iter().enumerate() {
                        check_time(|| format!("transmission.matrix[{i}][{j}]"), x * largest, largest)?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// The cost model in flat arrays, for the schedulers' inner loops.
/// Values are normalised with `+ 0.0` so that a -0.0 input orders like 0.0.
pub(crate) struct Costs {
    pub n: usize,
    sc: Vec<f64>,
    sm: Vec<f64>,
    rc: Vec<f64>,
    rm: Vec<f64>,
    /// `Some(x)` when X is one value for every pair.
    pub scalar_x: Option<f64>,
    xm: Vec<f64>,
}

impl Costs {
    pub fn new(inst: &Instance) -> Self {
        let n = inst.nodes.len();
        let col = |f: fn(&NodeParams) -> f64| inst.nodes.iter().map(|p| f(p) + 0.0).collect();
        let (scalar_x, xm) = match &inst.transmission {
            Transmission::Default(x) => (Some(*x + 0.0), Vec::new()),
            Transmission::Matrix(m) => (None, m.iter().flatten().map(|x| x + 0.0).collect()),
        };
        Costs {
            n,
            sc: col(|p| p.send_const),
            sm: col(|p| p.send_per_byte),
            rc: col(|p| p.recv_const),
            rm: col(|p| p.recv_per_byte),
            scalar_x,
            xm,
        }
    }
    /// Eq. (2).
    #[inline]
    pub fn s(&self, i: usize, l: f64) -> f64 {
        self.sc[i] + self.sm[i] * l
    }
    /// Eq. (3).
    #[inline]
    pub fn r(&self, j: usize, l: f64) -> f64 {
        self.rc[j] + self.rm[j] * l
    }
    #[inline]
    pub fn x(&self, i: usize, j: usize) -> f64 {
        match self.scalar_x {
            Some(x) => x,
            None => self.xm[i * self.n + j],
        }
    }
    pub fn recv_const(&self, j: usize) -> f64 {
        self.rc[j]
    }
}
