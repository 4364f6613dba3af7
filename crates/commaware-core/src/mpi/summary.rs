//! A look at a trace before replaying it (`commaware trace show`): one pass over the
//! parsed trace counts its ranks, its ops of each kind, the point-to-point bytes each rank
//! sends and receives, and the calls and bytes of each collective kind as the trace states
//! them (MPI's count convention, not the messages an algorithm would make of them); on
//! request, the rank-to-rank matrix of point-to-point bytes as sparse triplets (memory
//! follows the pairs that talk, at most ranks squared).

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::Serialize;

use crate::mpi::ops::{OpSpec, Peer, TagSpec, OP_NAMES};
use crate::mpi::trace::Trace;

/// Point-to-point traffic of the whole trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointToPoint {
    /// Messages sent: every `send`, `isend` and `sendrecv` op once.
    pub messages: u64,
    /// Bytes those messages carry, in bytes.
    pub bytes: f64,
    /// Receives (`recv`, `irecv`, the receive of a `sendrecv`) from any source (`MPI_ANY_SOURCE`).
    pub any_source_receives: u64,
    /// Receives (`recv`, `irecv`, the receive of a `sendrecv`) for any tag (`MPI_ANY_TAG`).
    pub any_tag_receives: u64,
}

/// One collective kind: its calls and the bytes they state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectiveKind {
    /// Collective calls, each once (not once per rank taking part).
    pub calls: u64,
    /// Ops of this kind in the ranks' lists: a call counts once per rank taking part.
    pub ops: u64,
    /// Bytes as the calls state them, in bytes, added over the calls: the buffer of a
    /// `bcast`, `reduce`, `allreduce`, `scan`, `exscan`; the block per rank (MPI's send count)
    /// of `gather`, `scatter`, `allgather` and `alltoall`; the sum of the count list of
    /// `gatherv`, `scatterv` (the root's list), `allgatherv`, `reduce_scatter`, and of every
    /// rank's send counts for `alltoallv`; 0 for `barrier`, `comm_split`, `comm_dup`. Not the
    /// messages a collective algorithm makes of them.
    pub bytes: f64,
}

/// Per rank, indexed by world rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerRank {
    /// Ops in each rank's list.
    pub ops: Vec<u64>,
    /// Point-to-point messages each rank sends.
    pub sent_messages: Vec<u64>,
    /// Point-to-point bytes each rank sends, in bytes.
    pub sent_bytes: Vec<f64>,
    /// Point-to-point bytes sent to each rank, in bytes.
    pub received_bytes: Vec<f64>,
}

/// Computation the trace states.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Computation {
    /// Flops of the `compute` ops given in flops (a TI reduction's COMP_FLOPS included).
    pub flops: f64,
    /// Seconds of the `compute` ops given in seconds, in s.
    pub compute_seconds: f64,
    /// Seconds of the `sleep` ops, in s.
    pub sleep_seconds: f64,
}

/// What `commaware trace show --json` prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSummary {
    /// Ranks of the trace (the world communicator's size).
    pub ranks: usize,
    /// Ops of the trace, over all ranks.
    pub ops: u64,
    /// Ops of each kind over all ranks (kinds with none left out); a collective call counts
    /// once per rank taking part. A TI trace's actions as read: a reduction's COMP_FLOPS is a
    /// `compute`, `init`, `finalize` and actions SimGrid ignores are no ops.
    pub ops_per_kind: BTreeMap<String, u64>,
    pub point_to_point: PointToPoint,
    /// Collective kinds present, by name.
    pub collectives: BTreeMap<String, CollectiveKind>,
    pub per_rank: PerRank,
    pub computation: Computation,
    /// Ops of a SimGrid TI trace sized by a derived datatype (id -1).
    pub derived_datatype_ops: u64,
}

/// The rank-to-rank matrix of point-to-point bytes as sparse triplets (sender, receiver,
/// bytes; world ranks), one per pair that exchanged at least one message (0-byte messages
/// included), sorted by sender then receiver.
pub type Matrix = Vec<(u32, u32, f64)>;

/// The summary of `trace`, and its matrix when `matrix` is true, in one pass over its ops.
pub fn summarize(trace: &Trace, matrix: bool) -> (TraceSummary, Option<Matrix>) {
    let p = trace.n_ranks();
    let mut kinds = [0u64; OP_NAMES.len()];
    let mut colls: [CollectiveKind; OP_NAMES.len()] = std::array::from_fn(|_| CollectiveKind::default());
    let mut s = TraceSummary {
        ranks: p,
        per_rank: PerRank { ops: vec![0; p], sent_messages: vec![0; p], sent_bytes: vec![0.0; p], received_bytes: vec![0.0; p] },
        derived_datatype_ops: trace.derived_datatype_ops,
        ..TraceSummary::default()
    };
    let mut pairs: Option<HashMap<u64, f64>> = matrix.then(HashMap::new);
    for (r, ops) in trace.spec.ranks.iter().enumerate() {
        s.per_rank.ops[r] = ops.len() as u64;
        for op in ops {
            let code = op.code() as usize;
            kinds[code] += 1;
            if let OpSpec::Recv { src, tag, .. } | OpSpec::Irecv { src, tag, .. } | OpSpec::Sendrecv { src, recvtag: tag, .. } = op {
                s.point_to_point.any_source_receives += (*src == Peer::Any) as u64;
                s.point_to_point.any_tag_receives += (*tag == TagSpec::Any) as u64;
            }
            match op {
                OpSpec::Compute { flops, seconds } => {
                    s.computation.flops += flops.unwrap_or(0.0);
                    s.computation.compute_seconds += seconds.unwrap_or(0.0);
                }
                OpSpec::Sleep { seconds } => s.computation.sleep_seconds += seconds,
                OpSpec::Send { dst, bytes, comm, .. } | OpSpec::Isend { dst, bytes, comm, .. } | OpSpec::Sendrecv { dst, bytes, comm, .. } => {
                    let to = trace.world_rank(r, *comm, *dst);
                    s.point_to_point.messages += 1;
                    s.point_to_point.bytes += bytes;
                    s.per_rank.sent_messages[r] += 1;
                    s.per_rank.sent_bytes[r] += bytes;
                    s.per_rank.received_bytes[to] += bytes;
                    if let Some(m) = pairs.as_mut() {
                        *m.entry(r as u64 * p as u64 + to as u64).or_insert(0.0) += bytes;
                    }
                }
                _ if op.is_collective() => {
                    let me = trace.rank_in(r, op.comm());
                    let c = &mut colls[code];
                    c.ops += 1;
                    c.calls += (me == 0) as u64;
                    c.bytes += match op {
                        OpSpec::Bcast { bytes, .. }
                        | OpSpec::Allreduce { bytes, .. }
                        | OpSpec::Reduce { bytes, .. }
                        | OpSpec::Scan { bytes, .. }
                        | OpSpec::Exscan { bytes, .. }
                        | OpSpec::Alltoall { bytes, .. }
                        | OpSpec::Allgather { bytes, .. }
                        | OpSpec::Gather { bytes, .. }
                        | OpSpec::Scatter { bytes, .. }
                            if me == 0 =>
                        {
                            *bytes
                        }
                        OpSpec::Gatherv { root, bytes, .. } | OpSpec::Scatterv { root, bytes, .. } if me == *root => bytes.iter().sum(),
                        OpSpec::Allgatherv { bytes, .. } | OpSpec::ReduceScatter { bytes, .. } if me == 0 => bytes.iter().sum(),
                        OpSpec::Alltoallv { bytes, .. } => bytes.iter().sum(),
                        _ => 0.0,
                    };
                }
                _ => {}
            }
        }
    }
    s.ops = s.per_rank.ops.iter().sum();
    for (code, &n) in kinds.iter().enumerate() {
        if n > 0 {
            s.ops_per_kind.insert(OP_NAMES[code].to_string(), n);
        }
        if colls[code].ops > 0 {
            s.collectives.insert(OP_NAMES[code].to_string(), std::mem::take(&mut colls[code]));
        }
    }
    let matrix = pairs.map(|m| {
        let mut v: Matrix = m.into_iter().map(|(k, b)| ((k / p as u64) as u32, (k % p as u64) as u32, b)).collect();
        v.sort_unstable_by_key(|&(a, b, _)| (a, b));
        v
    });
    (s, matrix)
}

/// Op kinds that are no collective (the others of [`OP_NAMES`] are).
const NOT_COLLECTIVE: [&str; 11] = ["compute", "send", "isend", "recv", "irecv", "wait", "waitall", "sleep", "sendrecv", "test", "waitany"];

/// The JSON Schema of [`TraceSummary`] (`commaware schema trace-summary`), the keys of
/// `ops_per_kind` and `collectives` restricted to the op names.
pub fn json_schema() -> String {
    let mut schema = serde_json::to_value(schemars::schema_for!(TraceSummary)).expect("schema serialises");
    let collectives: Vec<&str> = OP_NAMES.iter().copied().filter(|n| !NOT_COLLECTIVE.contains(n)).collect();
    if let Some(p) = schema.pointer_mut("/properties/ops_per_kind") {
        p["propertyNames"] = serde_json::json!({"enum": OP_NAMES});
    }
    if let Some(p) = schema.pointer_mut("/properties/collectives") {
        p["propertyNames"] = serde_json::json!({"enum": collectives});
    }
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(json: &str) -> Trace {
        Trace::from_json(json).unwrap()
    }

    #[test]
    fn counts_by_hand() {
        // Rank 1 sends 100 B to 0 and 50 B to 2; rank 2 isends 7 B to 0; a 40 B bcast
        // (3 ops, 1 call) and an alltoall of 5 B blocks.
        let t = trace(
            r#"{"ranks": [
            [{"op": "recv", "src": "any"}, {"op": "recv", "src": 2}, {"op": "bcast", "root": 0, "bytes": 40}, {"op": "alltoall", "bytes": 5}],
            [{"op": "send", "dst": 0, "bytes": 100}, {"op": "send", "dst": 2, "bytes": 50}, {"op": "bcast", "root": 0, "bytes": 40}, {"op": "alltoall", "bytes": 5}],
            [{"op": "recv", "src": 1, "tag": "any"}, {"op": "isend", "dst": 0, "bytes": 7}, {"op": "wait", "req": 0}, {"op": "compute", "flops": 1e6},
             {"op": "bcast", "root": 0, "bytes": 40}, {"op": "alltoall", "bytes": 5}]]}"#,
        );
        let (s, m) = summarize(&t, true);
        assert_eq!(s.ranks, 3);
        assert_eq!(s.ops, 14);
        assert_eq!(s.ops_per_kind["recv"], 3);
        assert_eq!(s.ops_per_kind["bcast"], 3);
        assert_eq!(s.point_to_point, PointToPoint { messages: 3, bytes: 157.0, any_source_receives: 1, any_tag_receives: 1 });
        assert_eq!(s.per_rank.sent_bytes, vec![0.0, 150.0, 7.0]);
        assert_eq!(s.per_rank.received_bytes, vec![107.0, 0.0, 50.0]);
        assert_eq!(s.collectives["bcast"], CollectiveKind { calls: 1, ops: 3, bytes: 40.0 });
        assert_eq!(s.collectives["alltoall"], CollectiveKind { calls: 1, ops: 3, bytes: 5.0 });
        assert_eq!(s.computation.flops, 1e6);
        assert_eq!(m.unwrap(), vec![(1, 0, 100.0), (1, 2, 50.0), (2, 0, 7.0)]);
        assert!(summarize(&t, false).1.is_none());
    }

    #[test]
    fn schema_names_the_collectives() {
        let schema: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let names = schema.pointer("/properties/collectives/propertyNames/enum").unwrap().as_array().unwrap();
        for n in ["barrier", "bcast", "alltoallv", "reduce_scatter", "comm_split", "comm_dup"] {
            assert!(names.iter().any(|v| v == n), "{n}");
        }
        assert!(!names.iter().any(|v| v == "send" || v == "waitany"));
        assert_eq!(names.len(), OP_NAMES.len() - NOT_COLLECTIVE.len());
    }

    #[test]
    fn sub_communicator_ranks_are_world_ranks() {
        // comm_split by parity: ranks 1 and 3 form communicator 1, where rank 1 of it is world rank 3.
        let t = trace(
            r#"{"ranks": [
            [{"op": "comm_split", "color": 0}],
            [{"op": "comm_split", "color": 1}, {"op": "send", "dst": 1, "bytes": 8, "comm": 1}, {"op": "gatherv", "root": 0, "bytes": [3, 4], "comm": 1}],
            [{"op": "comm_split", "color": 0}],
            [{"op": "comm_split", "color": 1}, {"op": "recv", "src": 0, "comm": 1}, {"op": "gatherv", "root": 0, "bytes": [0, 4], "comm": 1}]]}"#,
        );
        let (s, m) = summarize(&t, true);
        assert_eq!(m.unwrap(), vec![(1, 3, 8.0)]);
        // The root's list: 3 + 4.
        assert_eq!(s.collectives["gatherv"], CollectiveKind { calls: 1, ops: 2, bytes: 7.0 });
        assert_eq!(s.collectives["comm_split"], CollectiveKind { calls: 1, ops: 4, bytes: 0.0 });
    }
}
