//! GOAL schedules (LogGOPSim's and schedgen's format): per rank, a graph of `send`, `recv` and
//! `calc` operations with `requires` (start after the other op is done) and `irequires` (start
//! after it started) dependencies. Read from text ([`parse`]), written back ([`write`]), and run
//! under LogGOPSim's LogGP model ([`loggp`]). `tests/data/goal/SEMANTICS.md` describes the format
//! and the simulation with references to LogGOPSim's source.

pub mod from_trace;
pub mod loggp;
pub mod parse;
mod sort;
pub mod write;

pub use crate::mpi::graph::{GoalKind, GoalOp, GoalRank, GoalRankBuilder, GoalSchedule, ANY};

/// `schedule` as a trace the flow-level replay runs as a graph: each rank's operations
/// in line order as `isend`, `irecv` and `compute` (a `calc N` lasts N × `unit_seconds`),
/// started once their dependencies are met. Refuses what MPI cannot say: a send with
/// LogGOPSim's wildcard tag, and CPUs or NICs beyond the first.
pub fn into_trace(schedule: std::sync::Arc<GoalSchedule>, unit_seconds: f64) -> crate::error::Result<crate::mpi::trace::Trace> {
    use crate::error::Error;
    use crate::mpi::ops::{OpSpec, Peer, TagSpec};
    let units = from_trace::CalcUnits::new(unit_seconds)?;
    let mut ranks = Vec::with_capacity(schedule.ranks.len());
    for (r, rank) in schedule.ranks.iter().enumerate() {
        let mut ops = Vec::with_capacity(rank.ops.len());
        for (i, op) in rank.ops.iter().enumerate() {
            let field = || format!("rank {r}, op {} (line order)", i + 1);
            if op.cpu != 0 || op.nic != 0 {
                return Err(Error::trace(field(), "cpu or nic other than 0: the flow-level replay gives a rank one CPU and one NIC (use --model loggp)"));
            }
            ops.push(match op.kind {
                GoalKind::Send if op.tag == ANY => {
                    return Err(Error::trace(field(), "a send with tag -1 (LogGOPSim's wildcard) has no MPI meaning (use --model loggp)"))
                }
                GoalKind::Send => OpSpec::Isend { dst: op.peer as usize, bytes: op.size as f64, tag: i64::from(op.tag), sync: false, comm: 0 },
                GoalKind::Recv => OpSpec::Irecv {
                    src: if op.peer == ANY { Peer::Any } else { Peer::Rank(op.peer as usize) },
                    tag: if op.tag == ANY { TagSpec::Any } else { TagSpec::Value(i64::from(op.tag)) },
                    comm: 0,
                },
                GoalKind::Calc => OpSpec::Compute { flops: None, seconds: Some(op.size as f64 * units.unit_seconds) },
            });
        }
        ranks.push(ops);
    }
    let mut trace = crate::mpi::trace::Trace::from_spec(crate::mpi::trace::TraceSpec { ranks, placement: None })?;
    trace.graph = Some(schedule);
    Ok(trace)
}
