//! The operations of a per-rank program as a trace file writes them: point-to-point and
//! collective MPI calls, computations and waits ([`OpSpec`]), with their peers and tags.
//! The collectives ([`crate::mpi::collectives`]) expand them; the trace validates and
//! walks them.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A peer rank, or any source (written as the rank, or `"any"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Rank(usize),
    Any,
}

/// A message tag, or any tag (receives only; written as the tag, or `"any"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSpec {
    Value(i64),
    Any,
}

impl Default for TagSpec {
    fn default() -> Self {
        TagSpec::Value(0)
    }
}

fn int_or_any<'de, D: Deserializer<'de>>(d: D, what: &'static str) -> std::result::Result<Option<i64>, D::Error> {
    struct V(&'static str);
    impl<'de> Visitor<'de> for V {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a non-negative integer {} or \"any\"", self.0)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
            i64::try_from(v).map(Some).map_err(|_| E::custom(format!("{} {v} is too large", self.0)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
            if v < 0 {
                Err(E::custom(format!("{} must be >= 0, got {v}", self.0)))
            } else {
                Ok(Some(v))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
            if v == "any" {
                Ok(None)
            } else {
                Err(E::custom(format!("expected a {} or \"any\", got \"{v}\"", self.0)))
            }
        }
    }
    d.deserialize_any(V(what))
}

/// A value as trace files write it: the integer, or `"any"` for `None`.
fn serialize_int_or_any<S: serde::Serializer>(v: Option<i64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_i64(v),
        None => s.serialize_str("any"),
    }
}

impl Serialize for Peer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        serialize_int_or_any(match self { Peer::Rank(r) => Some(*r as i64), Peer::Any => None }, s)
    }
}

impl Serialize for TagSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        serialize_int_or_any(match self { TagSpec::Value(t) => Some(*t), TagSpec::Any => None }, s)
    }
}

impl<'de> Deserialize<'de> for Peer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match int_or_any(d, "rank")? {
            Some(v) => Peer::Rank(v as usize),
            None => Peer::Any,
        })
    }
}

impl<'de> Deserialize<'de> for TagSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match int_or_any(d, "tag")? {
            Some(v) => TagSpec::Value(v),
            None => TagSpec::Any,
        })
    }
}

impl JsonSchema for Peer {
    fn schema_name() -> String {
        "RankOrAny".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({"oneOf": [{"type": "integer", "minimum": 0}, {"const": "any"}]})).unwrap()
    }
}

impl JsonSchema for TagSpec {
    fn schema_name() -> String {
        "TagOrAny".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({"oneOf": [{"type": "integer", "minimum": 0}, {"const": "any"}]})).unwrap()
    }
}

fn zero_tag() -> i64 {
    0
}

/// One operation of a rank, as written in a trace file. Sizes are in bytes, times in s.
/// Point-to-point ops and collectives take an optional `comm` (a communicator this rank
/// holds: 0 is the world, then 1, 2, … in the order `comm_split`/`comm_dup` gave them to
/// it); their ranks (`dst`, `src`, `root`, size lists) are ranks within that communicator.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum OpSpec {
    /// Compute `flops` floating-point operations, or for `seconds` at the host's full
    /// speed (slowed by interference, unlike `sleep`). Exactly one of the two.
    Compute {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flops: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seconds: Option<f64>,
    },
    /// Blocking send; `sync` forces the rendezvous protocol (MPI_Ssend).
    Send { dst: usize, bytes: f64, #[serde(default = "zero_tag")] tag: i64, #[serde(default)] sync: bool, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Non-blocking send; creates the rank's next request.
    Isend { dst: usize, bytes: f64, #[serde(default = "zero_tag")] tag: i64, #[serde(default)] sync: bool, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Blocking receive from a rank or `"any"`.
    Recv { src: Peer, #[serde(default)] tag: TagSpec, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Non-blocking receive; creates the rank's next request.
    Irecv { src: Peer, #[serde(default)] tag: TagSpec, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Wait for request `req` (requests are numbered per rank in posting order).
    Wait { req: usize },
    /// MPI_Test of request `req`: if it completed, it is consumed (a later wait on it
    /// returns at once); the call first sleeps the platform's `network.test_seconds` (longer after failed
    /// tests under SMPI's `grow_injected_times`).
    Test { req: usize },
    /// MPI_Waitany over `reqs`: wait until one of those not consumed yet completes and
    /// consume it (the first in list order when several have); nothing if all are consumed.
    Waitany { reqs: Vec<usize> },
    /// Wait for every request of the rank not waited for yet.
    Waitall,
    Barrier { #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Broadcast of a `bytes` buffer from `root`.
    Bcast { root: usize, bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// All-reduce of a `bytes` buffer.
    Allreduce { bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// All-to-all; `bytes` is the block sent to each destination.
    Alltoall { bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Idle for `seconds` (not slowed by anything).
    Sleep { seconds: f64 },
    /// MPI_Sendrecv: send `bytes` to `dst` and receive from `src`, both posted, then both awaited.
    Sendrecv {
        dst: usize,
        bytes: f64,
        #[serde(default = "zero_tag")]
        tag: i64,
        src: Peer,
        #[serde(default)]
        recvtag: TagSpec,
        #[serde(default, skip_serializing_if = "is_world")] comm: usize,
    },
    /// Reduction of a `bytes` buffer onto `root` (binomial tree).
    Reduce { root: usize, bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Gather onto `root`; `bytes` is each rank's block (binomial tree).
    Gather { root: usize, bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Gather onto `root` with a block size per rank: rank i sends `bytes[i]` of its own list
    /// (lists may differ off a rank's own entry); linear.
    Gatherv { root: usize, bytes: Vec<f64>, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Scatter from `root`; `bytes` is each rank's block (binomial tree).
    Scatter { root: usize, bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Scatter from `root` with a block size per rank: `bytes[i]` of the root's list to rank i
    /// (the other ranks' lists are not used); linear.
    Scatterv { root: usize, bytes: Vec<f64>, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// All-gather; `bytes` is each rank's block (ring).
    Allgather { bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// All-gather with a block size per rank (ring).
    Allgatherv { bytes: Vec<f64>, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// All-to-all with a size per destination: `bytes[j]` is what this rank sends to rank j
    /// (pairwise exchange); ranks give their own lists.
    Alltoallv { bytes: Vec<f64>, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Reduce-scatter: `bytes[i]` is the block rank i receives (pairwise exchange).
    #[serde(rename = "reduce_scatter")]
    ReduceScatter { bytes: Vec<f64>, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Inclusive prefix reduction of a `bytes` buffer (recursive doubling).
    Scan { bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// Exclusive prefix reduction of a `bytes` buffer (recursive doubling).
    Exscan { bytes: f64, #[serde(default, skip_serializing_if = "is_world")] comm: usize },
    /// MPI_Comm_split of communicator `comm` (collective over it): the ranks with the same
    /// `color` form a new communicator, ordered by (`key`, rank in `comm`); each gets it as
    /// its next communicator id. `color` -1 is MPI_UNDEFINED: this rank gets none.
    #[serde(rename = "comm_split")]
    CommSplit { #[serde(default)] comm: usize, color: i64, #[serde(default)] key: i64 },
    /// MPI_Comm_dup of `comm` (collective over it): a new communicator with the same ranks.
    #[serde(rename = "comm_dup")]
    CommDup { #[serde(default)] comm: usize },
}

fn is_world(comm: &usize) -> bool {
    *comm == 0
}

/// `$body` with `$comm` bound to the op's `comm` field (by reference), or `$none` for an
/// op without one.
macro_rules! with_comm {
    ($op:expr, $comm:ident => $body:expr, $none:expr) => {
        match $op {
            OpSpec::Send { $comm, .. }
            | OpSpec::Isend { $comm, .. }
            | OpSpec::Recv { $comm, .. }
            | OpSpec::Irecv { $comm, .. }
            | OpSpec::Sendrecv { $comm, .. }
            | OpSpec::Barrier { $comm }
            | OpSpec::Bcast { $comm, .. }
            | OpSpec::Allreduce { $comm, .. }
            | OpSpec::Alltoall { $comm, .. }
            | OpSpec::Reduce { $comm, .. }
            | OpSpec::Gather { $comm, .. }
            | OpSpec::Gatherv { $comm, .. }
            | OpSpec::Scatter { $comm, .. }
            | OpSpec::Scatterv { $comm, .. }
            | OpSpec::Allgather { $comm, .. }
            | OpSpec::Allgatherv { $comm, .. }
            | OpSpec::Alltoallv { $comm, .. }
            | OpSpec::ReduceScatter { $comm, .. }
            | OpSpec::Scan { $comm, .. }
            | OpSpec::Exscan { $comm, .. }
            | OpSpec::CommSplit { $comm, .. }
            | OpSpec::CommDup { $comm } => $body,
            OpSpec::Compute { .. }
            | OpSpec::Wait { .. }
            | OpSpec::Test { .. }
            | OpSpec::Waitany { .. }
            | OpSpec::Waitall
            | OpSpec::Sleep { .. } => $none,
        }
    };
}

impl OpSpec {
    /// The compute op of a traced burst of `seconds`: kept as seconds, or as flops at
    /// `traced_speed` flops/s (the trace readers' `--traced-speed`).
    pub fn traced_compute(seconds: f64, traced_speed: Option<f64>) -> OpSpec {
        match traced_speed {
            Some(s) => OpSpec::Compute { flops: Some(seconds * s), seconds: None },
            None => OpSpec::Compute { flops: None, seconds: Some(seconds) },
        }
    }

    /// Checks a `traced_speed` option: a positive number of flops per second.
    pub fn check_traced_speed(traced_speed: Option<f64>) -> crate::error::Result<()> {
        match traced_speed {
            Some(s) if !s.is_finite() || s <= 0.0 => Err(crate::error::Error::new(
                crate::error::ErrorKind::Options,
                "traced_speed",
                format!("must be a positive number of flops per second, got {s}"),
            )),
            _ => Ok(()),
        }
    }

    /// Index of the op's name in [`OP_NAMES`].
    pub fn code(&self) -> u8 {
        OP_NAMES.iter().position(|n| *n == self.name()).expect("every op is named") as u8
    }

    pub fn name(&self) -> &'static str {
        match self {
            OpSpec::Compute { .. } => "compute",
            OpSpec::Send { .. } => "send",
            OpSpec::Isend { .. } => "isend",
            OpSpec::Recv { .. } => "recv",
            OpSpec::Irecv { .. } => "irecv",
            OpSpec::Wait { .. } => "wait",
            OpSpec::Waitall => "waitall",
            OpSpec::Barrier { .. } => "barrier",
            OpSpec::Bcast { .. } => "bcast",
            OpSpec::Allreduce { .. } => "allreduce",
            OpSpec::Alltoall { .. } => "alltoall",
            OpSpec::Sleep { .. } => "sleep",
            OpSpec::Sendrecv { .. } => "sendrecv",
            OpSpec::Reduce { .. } => "reduce",
            OpSpec::Gather { .. } => "gather",
            OpSpec::Gatherv { .. } => "gatherv",
            OpSpec::Scatter { .. } => "scatter",
            OpSpec::Scatterv { .. } => "scatterv",
            OpSpec::Allgather { .. } => "allgather",
            OpSpec::Allgatherv { .. } => "allgatherv",
            OpSpec::Alltoallv { .. } => "alltoallv",
            OpSpec::ReduceScatter { .. } => "reduce_scatter",
            OpSpec::Scan { .. } => "scan",
            OpSpec::Exscan { .. } => "exscan",
            OpSpec::CommSplit { .. } => "comm_split",
            OpSpec::CommDup { .. } => "comm_dup",
            OpSpec::Test { .. } => "test",
            OpSpec::Waitany { .. } => "waitany",
        }
    }

    /// Short human description, e.g. `recv(src=1, tag=0)`.
    pub fn describe(&self) -> String {
        let peer = |p: &Peer| match p {
            Peer::Rank(r) => r.to_string(),
            Peer::Any => "any".into(),
        };
        let tag = |t: &TagSpec| match t {
            TagSpec::Value(v) => v.to_string(),
            TagSpec::Any => "any".into(),
        };
        let text = match self {
            OpSpec::Compute { flops: Some(f), .. } => format!("compute(flops={f})"),
            OpSpec::Compute { seconds, .. } => format!("compute(seconds={})", seconds.unwrap_or(0.0)),
            OpSpec::Send { dst, bytes, tag, .. } | OpSpec::Isend { dst, bytes, tag, .. } => {
                format!("{}(dst={dst}, bytes={bytes}, tag={tag})", self.name())
            }
            OpSpec::Recv { src, tag: t, .. } | OpSpec::Irecv { src, tag: t, .. } => {
                format!("{}(src={}, tag={})", self.name(), peer(src), tag(t))
            }
            OpSpec::Wait { req } => format!("wait(req={req})"),
            OpSpec::Test { req } => format!("test(req={req})"),
            OpSpec::Waitany { reqs } => format!("waitany(reqs={reqs:?})"),
            OpSpec::Bcast { root, bytes, .. } => format!("bcast(root={root}, bytes={bytes})"),
            OpSpec::Allreduce { bytes, .. } | OpSpec::Alltoall { bytes, .. } => format!("{}(bytes={bytes})", self.name()),
            OpSpec::Sleep { seconds } => format!("sleep(seconds={seconds})"),
            OpSpec::Waitall | OpSpec::Barrier { .. } => self.name().to_string(),
            OpSpec::Sendrecv { dst, bytes, tag: t, src, recvtag, .. } => {
                format!("sendrecv(dst={dst}, bytes={bytes}, tag={t}, src={}, recvtag={})", peer(src), tag(recvtag))
            }
            OpSpec::Reduce { root, bytes, .. } | OpSpec::Gather { root, bytes, .. } | OpSpec::Scatter { root, bytes, .. } => {
                format!("{}(root={root}, bytes={bytes})", self.name())
            }
            OpSpec::Allgather { bytes, .. } | OpSpec::Scan { bytes, .. } | OpSpec::Exscan { bytes, .. } => {
                format!("{}(bytes={bytes})", self.name())
            }
            OpSpec::Gatherv { root, bytes, .. } | OpSpec::Scatterv { root, bytes, .. } => {
                format!("{}(root={root}, bytes=[{} values, total {}])", self.name(), bytes.len(), bytes.iter().sum::<f64>())
            }
            OpSpec::Allgatherv { bytes, .. } | OpSpec::Alltoallv { bytes, .. } | OpSpec::ReduceScatter { bytes, .. } => {
                format!("{}(bytes=[{} values, total {}])", self.name(), bytes.len(), bytes.iter().sum::<f64>())
            }
            OpSpec::CommSplit { color, key, .. } => format!("comm_split(color={color}, key={key})"),
            OpSpec::CommDup { .. } => "comm_dup".to_string(),
        };
        match self.comm() {
            0 => text,
            c => format!("{text} on communicator {c}"),
        }
    }

    /// The communicator (this rank's id for it) the op works on; 0, the world, for ops
    /// without one.
    pub fn comm(&self) -> usize {
        with_comm!(self, comm => *comm, 0)
    }

    /// The same op on the world communicator (ranks' ids for one communicator may differ).
    pub(crate) fn on_world(&self) -> OpSpec {
        let mut o = self.clone();
        with_comm!(&mut o, comm => *comm = 0, ());
        o
    }

    pub(crate) fn is_collective(&self) -> bool {
        !matches!(
            self,
            OpSpec::Compute { .. }
                | OpSpec::Send { .. }
                | OpSpec::Isend { .. }
                | OpSpec::Recv { .. }
                | OpSpec::Irecv { .. }
                | OpSpec::Wait { .. }
                | OpSpec::Test { .. }
                | OpSpec::Waitany { .. }
                | OpSpec::Waitall
                | OpSpec::Sleep { .. }
                | OpSpec::Sendrecv { .. }
        )
    }

    /// Steps of a blocking point-to-point op: post (one or two), then wait.
    pub(crate) fn blocking_steps(&self) -> Option<u8> {
        match self {
            OpSpec::Send { .. } | OpSpec::Recv { .. } => Some(2),
            OpSpec::Sendrecv { .. } => Some(3),
            _ => None,
        }
    }

    /// Whether `other`, called by another rank on the same communicator, is the same
    /// collective call: the same arguments, except the size lists of `alltoallv` (each
    /// rank's own sends), `gatherv` (each rank sends its own entry) and `scatterv` (the
    /// root's list counts), and `comm_split`'s color and key.
    pub(crate) fn same_collective(&self, other: &OpSpec) -> bool {
        match (self, other) {
            (OpSpec::Alltoallv { bytes: a, .. }, OpSpec::Alltoallv { bytes: b, .. }) => a.len() == b.len(),
            // Only the sender's own entry (gatherv) or the root's list (scatterv) is used.
            (OpSpec::Gatherv { root: r1, bytes: a, .. }, OpSpec::Gatherv { root: r2, bytes: b, .. })
            | (OpSpec::Scatterv { root: r1, bytes: a, .. }, OpSpec::Scatterv { root: r2, bytes: b, .. }) => {
                r1 == r2 && a.len() == b.len()
            }
            // Each rank gives its own color and key.
            (OpSpec::CommSplit { .. }, OpSpec::CommSplit { .. }) => true,
            _ => self.on_world() == other.on_world(),
        }
    }
}

/// Names of the trace operations, indexed by [`OpSpec::code`] (compact message records).
pub const OP_NAMES: [&str; 28] = [
    "compute", "send", "isend", "recv", "irecv", "wait", "waitall", "barrier", "bcast", "allreduce", "alltoall", "sleep",
    "sendrecv", "reduce", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoallv",
    "reduce_scatter", "scan", "exscan", "comm_split", "comm_dup", "test", "waitany",
];
