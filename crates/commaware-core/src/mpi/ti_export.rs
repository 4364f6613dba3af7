//! Writing traces in SimGrid's time-independent (TI) format, as SimGrid 3.32's
//! `smpirun -trace-ti` writes it and its offline replay (`smpirun -replay`) reads it: one
//! text per rank, every line `RANK ACTION ARGS...` (the reader is [`crate::mpi::ti`]).
//!
//! * `compute {seconds}` becomes `compute FLOPS` with FLOPS = seconds × `flops_per_second`;
//! * sizes are written as element counts of `MPI_BYTE` (id 6), or of `MPI_DOUBLE` (id 0) when
//!   a size does not fit a C `int` of bytes but does of doubles;
//! * a `recv` gets the size of the send it matches (MPI's non-overtaking order on each
//!   (source, destination, tag) channel), as SimGrid's tracer writes it;
//! * `wait {req}` becomes `wait SRC DST TAG` of that request, which SimGrid resolves to the
//!   oldest pending request with that key: a wait on a newer one cannot be written;
//! * v-collectives get every rank's counts from the ranks' matching calls.
//!
//! Ops TI cannot express are errors naming the op (`ranks[R][I]`): a `sync` send, `"any"`
//! source or tag, a `sendrecv` with a tag other than 0 (SimGrid's `sendRecv` uses tag 0),
//! sizes that are not whole bytes or do not fit a count.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::TraceSpec;

/// SimGrid's datatype ids (`Datatype::decode`) used for sizes.
const DT_BYTE: u32 = 6;
const DT_DOUBLE: u32 = 0;
/// Largest element count SimGrid reads (a C `int`).
const MAX_COUNT: f64 = i32::MAX as f64;

fn bad(r: usize, i: usize, op: &OpSpec, reason: impl std::fmt::Display) -> Error {
    Error::trace(format!("ranks[{r}][{i}]"), format!("`{}` cannot be written as a SimGrid TI action: {reason}", op.describe()))
}

/// The datatype that expresses every size of `sizes` as a whole count, or why none does.
fn datatype_for(sizes: &[f64]) -> std::result::Result<(u32, f64), String> {
    if let Some(v) = sizes.iter().find(|v| v.fract() != 0.0 || **v < 0.0) {
        return Err(format!("{v} bytes is not a whole number of bytes"));
    }
    let max = sizes.iter().cloned().fold(0.0, f64::max);
    if max <= MAX_COUNT {
        return Ok((DT_BYTE, 1.0));
    }
    if sizes.iter().all(|v| v % 8.0 == 0.0) && max / 8.0 <= MAX_COUNT {
        return Ok((DT_DOUBLE, 8.0));
    }
    Err(format!("{max} bytes does not fit a TI count (at most 2^31 - 1 elements of one byte, or of 8 bytes)"))
}

/// Collective positions: for each rank, the op index of its k-th collective.
fn collective_indices(spec: &TraceSpec) -> Vec<Vec<usize>> {
    spec.ranks
        .iter()
        .map(|ops| ops.iter().enumerate().filter(|(_, op)| is_collective(op)).map(|(i, _)| i).collect())
        .collect()
}

fn is_collective(op: &OpSpec) -> bool {
    matches!(
        op,
        OpSpec::Barrier { .. }
            | OpSpec::Bcast { .. }
            | OpSpec::Allreduce { .. }
            | OpSpec::Alltoall { .. }
            | OpSpec::Reduce { .. }
            | OpSpec::Gather { .. }
            | OpSpec::Gatherv { .. }
            | OpSpec::Scatter { .. }
            | OpSpec::Scatterv { .. }
            | OpSpec::Allgather { .. }
            | OpSpec::Allgatherv { .. }
            | OpSpec::Alltoallv { .. }
            | OpSpec::ReduceScatter { .. }
            | OpSpec::Scan { .. }
            | OpSpec::Exscan { .. }
    )
}

/// The size of each receive: the bytes of the send it matches on its (source, destination,
/// tag) channel (in posting order on both sides), keyed by (rank, op index).
fn receive_sizes(spec: &TraceSpec) -> HashMap<(usize, usize), f64> {
    let mut channels: HashMap<(usize, usize, i64), VecDeque<f64>> = HashMap::new();
    for (r, ops) in spec.ranks.iter().enumerate() {
        for op in ops {
            match op {
                OpSpec::Send { dst, bytes, tag, .. } | OpSpec::Isend { dst, bytes, tag, .. } | OpSpec::Sendrecv { dst, bytes, tag, .. } => {
                    channels.entry((r, *dst, *tag)).or_default().push_back(*bytes)
                }
                _ => {}
            }
        }
    }
    let mut sizes = HashMap::new();
    for (r, ops) in spec.ranks.iter().enumerate() {
        for (i, op) in ops.iter().enumerate() {
            let key = match op {
                OpSpec::Recv { src: Peer::Rank(s), tag: TagSpec::Value(t), .. } | OpSpec::Irecv { src: Peer::Rank(s), tag: TagSpec::Value(t), .. } => (*s, r, *t),
                OpSpec::Sendrecv { src: Peer::Rank(s), recvtag: TagSpec::Value(t), .. } => (*s, r, *t),
                _ => continue,
            };
            let size = channels.get_mut(&key).and_then(|q| q.pop_front()).unwrap_or(0.0);
            sizes.insert((r, i), size);
        }
    }
    sizes
}

/// A number as TI text: integers without a fraction, others in Rust's shortest exact form.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e17 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The TI text of every rank of `spec`, each starting with the comment `header` (a line
/// starting with `#`, which both SimGrid's reader and ours skip) and `R init`, ending with
/// `R finalize`.
pub fn export(spec: &TraceSpec, flops_per_second: f64, header: &str) -> Result<Vec<String>> {
    if !(flops_per_second.is_finite() && flops_per_second > 0.0) {
        let reason = format!("must be a finite number > 0, got {flops_per_second}");
        return Err(Error::new(crate::error::ErrorKind::Options, "", reason).in_source("--flops-per-second"));
    }
    // TI has no communicators: SimGrid's replay runs every collective on the world.
    for (r, ops) in spec.ranks.iter().enumerate() {
        for (i, op) in ops.iter().enumerate() {
            if op.comm() != 0 || matches!(op, OpSpec::CommSplit { .. } | OpSpec::CommDup { .. }) {
                return Err(Error::trace(
                    format!("ranks[{r}][{i}]"),
                    format!("`{}`: TI traces have no communicators (SimGrid's replay runs every collective on the world), so this cannot be exported", op.describe()),
                ));
            }
        }
    }
    let p = spec.ranks.len();
    let colls = collective_indices(spec);
    let recv_sizes = receive_sizes(spec);
    let mut texts = Vec::with_capacity(p);
    for (r, ops) in spec.ranks.iter().enumerate() {
        let mut t = String::new();
        for line in header.lines() {
            let _ = writeln!(t, "# {line}");
        }
        let _ = writeln!(t, "{r} init");
        // Requests: index -> (src, dst, tag); pending keys, oldest first.
        let mut requests: Vec<(usize, usize, i64)> = Vec::new();
        let mut pending: HashMap<(usize, usize, i64), VecDeque<usize>> = HashMap::new();
        let mut n_coll = 0usize;
        for (i, op) in ops.iter().enumerate() {
            let size1 = |b: f64| datatype_for(&[b]).map(|(dt, s)| (num(b / s), dt)).map_err(|e| bad(r, i, op, e));
            let list = |b: &[f64]| -> Result<(Vec<String>, u32)> {
                let (dt, s) = datatype_for(b).map_err(|e| bad(r, i, op, e))?;
                Ok((b.iter().map(|v| num(v / s)).collect(), dt))
            };
            // The same collective call on every rank (the trace is validated: same order).
            let peer_op = |q: usize| -> &OpSpec { &spec.ranks[q][colls[q][n_coll]] };
            match op {
                OpSpec::Compute { flops, seconds } => {
                    let f = match (flops, seconds) {
                        (Some(f), _) => *f,
                        (None, Some(s)) => s * flops_per_second,
                        (None, None) => 0.0,
                    };
                    let _ = writeln!(t, "{r} compute {}", num(f));
                }
                OpSpec::Sleep { seconds } => {
                    let _ = writeln!(t, "{r} sleep {}", num(*seconds));
                }
                OpSpec::Send { dst, bytes, tag, sync, .. } | OpSpec::Isend { dst, bytes, tag, sync, .. } => {
                    if *sync {
                        return Err(bad(r, i, op, "TI has no synchronous (rendezvous-forced) send"));
                    }
                    let (c, dt) = size1(*bytes)?;
                    let name = if matches!(op, OpSpec::Send { .. }) { "send" } else { "isend" };
                    let _ = writeln!(t, "{r} {name} {dst} {tag} {c} {dt}");
                    if name == "isend" {
                        pending.entry((r, *dst, *tag)).or_default().push_back(requests.len());
                        requests.push((r, *dst, *tag));
                    }
                }
                OpSpec::Recv { src, tag, .. } | OpSpec::Irecv { src, tag, .. } => {
                    let Peer::Rank(s) = src else { return Err(bad(r, i, op, "TI has no receive from any source")) };
                    let TagSpec::Value(tg) = tag else { return Err(bad(r, i, op, "TI has no receive with any tag")) };
                    let (c, dt) = size1(recv_sizes.get(&(r, i)).copied().unwrap_or(0.0))?;
                    let name = if matches!(op, OpSpec::Recv { .. }) { "recv" } else { "irecv" };
                    let _ = writeln!(t, "{r} {name} {s} {tg} {c} {dt}");
                    if name == "irecv" {
                        pending.entry((*s, r, *tg)).or_default().push_back(requests.len());
                        requests.push((*s, r, *tg));
                    }
                }
                OpSpec::Wait { req } => {
                    let key = requests[*req];
                    let queue = pending.get_mut(&key);
                    match queue.as_ref().and_then(|q| q.front()) {
                        Some(&oldest) if oldest == *req => {
                            queue.unwrap().pop_front();
                        }
                        Some(&oldest) => {
                            return Err(bad(r, i, op, format!(
                                "SimGrid's `wait {} {} {}` completes the oldest pending request with that source, \
                                 destination and tag, which is request {oldest}",
                                key.0, key.1, key.2
                            )))
                        }
                        None => return Err(bad(r, i, op, "the request was already completed")),
                    }
                    let _ = writeln!(t, "{r} wait {} {} {}", key.0, key.1, key.2);
                }
                OpSpec::Test { req } => {
                    // SimGrid's test looks at the oldest pending request with the key and
                    // leaves it pending; only that one can be written.
                    let key = requests[*req];
                    match pending.get(&key).and_then(|q| q.front()) {
                        Some(&oldest) if oldest == *req => {
                            let _ = writeln!(t, "{r} test {} {} {}", key.0, key.1, key.2);
                        }
                        Some(&oldest) => {
                            return Err(bad(r, i, op, format!(
                                "SimGrid's `test {} {} {}` looks at the oldest pending request with that source, \
                                 destination and tag, which is request {oldest}",
                                key.0, key.1, key.2
                            )))
                        }
                        None => return Err(bad(r, i, op, "the request was already completed")),
                    }
                }
                OpSpec::Waitall => {
                    pending.clear();
                    let _ = writeln!(t, "{r} waitall");
                }
                OpSpec::Sendrecv { dst, bytes, tag, src, recvtag, .. } => {
                    let Peer::Rank(s) = src else { return Err(bad(r, i, op, "TI has no receive from any source")) };
                    if *tag != 0 || *recvtag != TagSpec::Value(0) {
                        return Err(bad(r, i, op, "SimGrid's `sendRecv` sends and receives with tag 0 only"));
                    }
                    let recv = recv_sizes.get(&(r, i)).copied().unwrap_or(0.0);
                    let (c, dt1) = size1(*bytes)?;
                    let (rc, dt2) = size1(recv)?;
                    let _ = writeln!(t, "{r} sendRecv {c} {dst} {rc} {s} {dt1} {dt2}");
                }
                OpSpec::Barrier { .. } => {
                    let _ = writeln!(t, "{r} barrier");
                }
                OpSpec::Bcast { root, bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} bcast {c} {root} {dt}");
                }
                OpSpec::Allreduce { bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} allreduce {c} 0 {dt}");
                }
                OpSpec::Alltoall { bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} alltoall {c} {c} {dt} {dt}");
                }
                OpSpec::Reduce { root, bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} reduce {c} 0 {root} {dt}");
                }
                OpSpec::Scan { bytes, .. } | OpSpec::Exscan { bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} {} {c} 0 {dt}", op.name());
                }
                OpSpec::Gather { root, bytes, .. } | OpSpec::Scatter { root, bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} {} {c} {c} {root} {dt} {dt}", op.name());
                }
                OpSpec::Allgather { bytes, .. } => {
                    let (c, dt) = size1(*bytes)?;
                    let _ = writeln!(t, "{r} allgather {c} {c} {dt} {dt}");
                }
                OpSpec::Gatherv { root, bytes, .. } => {
                    // Rank q sends its own entry; only the root lists the receive counts.
                    let sent: Vec<f64> = (0..p)
                        .map(|q| match peer_op(q) {
                            OpSpec::Gatherv { bytes: b, .. } => b[q],
                            _ => 0.0,
                        })
                        .collect();
                    let recv: Vec<f64> = if r == *root { sent.clone() } else { vec![0.0; p] };
                    let (counts, dt) = list(&[vec![bytes[r]], recv].concat())?;
                    let _ = writeln!(t, "{r} gatherv {} {root} {dt} {dt}", counts.join(" "));
                }
                OpSpec::Scatterv { root, bytes: _, .. } => {
                    let from_root = match peer_op(*root) {
                        OpSpec::Scatterv { bytes: b, .. } => b.clone(),
                        _ => vec![0.0; p],
                    };
                    let send: Vec<f64> = if r == *root { from_root.clone() } else { vec![0.0; p] };
                    let (counts, dt) = list(&[send, vec![from_root[r]]].concat())?;
                    let _ = writeln!(t, "{r} scatterv {} {root} {dt} {dt}", counts.join(" "));
                }
                OpSpec::Allgatherv { bytes, .. } => {
                    let (counts, dt) = list(&[vec![bytes[r]], bytes.clone()].concat())?;
                    let _ = writeln!(t, "{r} allgatherv {} {dt} {dt}", counts.join(" "));
                }
                OpSpec::Alltoallv { bytes, .. } => {
                    let recv: Vec<f64> = (0..p)
                        .map(|q| match peer_op(q) {
                            OpSpec::Alltoallv { bytes: b, .. } => b[r],
                            _ => 0.0,
                        })
                        .collect();
                    let send_total: f64 = bytes.iter().sum();
                    let recv_total: f64 = recv.iter().sum();
                    let all = [vec![send_total], bytes.clone(), vec![recv_total], recv].concat();
                    let (counts, dt) = list(&all)?;
                    let (send_part, recv_part) = counts.split_at(p + 1);
                    let _ = writeln!(t, "{r} alltoallv {} {} {dt} {dt}", send_part.join(" "), recv_part.join(" "));
                }
                OpSpec::ReduceScatter { bytes, .. } => {
                    let (counts, dt) = list(bytes)?;
                    let _ = writeln!(t, "{r} reducescatter {} 0 {dt}", counts.join(" "));
                }
                #[allow(unreachable_patterns)]
                _ => return Err(bad(r, i, op, "this operation has no TI action")),
            }
            if is_collective(op) {
                n_coll += 1;
            }
        }
        let _ = writeln!(t, "{r} finalize");
        texts.push(t);
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Trace;

    fn spec(json: &str) -> TraceSpec {
        Trace::from_json(json).unwrap().spec
    }

    #[test]
    fn point_to_point_and_sizes() {
        let s = spec(r#"{"ranks": [[{"op":"compute","seconds":0.5},{"op":"isend","dst":1,"bytes":100,"tag":3},{"op":"wait","req":0}],
                                 [{"op":"recv","src":0,"tag":3}]]}"#);
        let t = export(&s, 2e9, "x").unwrap();
        assert_eq!(t[0], "# x\n0 init\n0 compute 1000000000\n0 isend 1 3 100 6\n0 wait 0 1 3\n0 finalize\n");
        assert_eq!(t[1], "# x\n1 init\n1 recv 0 3 100 6\n1 finalize\n");
    }

    #[test]
    fn inexpressible_ops_name_the_op() {
        let s = spec(r#"{"ranks": [[{"op":"send","dst":1,"bytes":1,"sync":true}],[{"op":"recv","src":0}]]}"#);
        let e = export(&s, 1e9, "").unwrap_err();
        assert_eq!(e.field, "ranks[0][0]");
        assert!(e.reason.contains("synchronous"), "{}", e.reason);
        let s = spec(r#"{"ranks": [[{"op":"send","dst":1,"bytes":1}],[{"op":"recv","src":"any"}]]}"#);
        let e = export(&s, 1e9, "").unwrap_err();
        assert_eq!(e.field, "ranks[1][0]");
        assert!(e.reason.contains("any source"), "{}", e.reason);
        let s = spec(r#"{"ranks": [[{"op":"send","dst":1,"bytes":1.5}],[{"op":"recv","src":0}]]}"#);
        assert!(export(&s, 1e9, "").unwrap_err().reason.contains("whole number"));
    }

    #[test]
    fn wait_must_be_the_oldest_of_its_key() {
        let s = spec(r#"{"ranks": [[{"op":"isend","dst":1,"bytes":1},{"op":"isend","dst":1,"bytes":2},{"op":"wait","req":1},{"op":"wait","req":0}],
                                 [{"op":"recv","src":0},{"op":"recv","src":0}]]}"#);
        let e = export(&s, 1e9, "").unwrap_err();
        assert_eq!(e.field, "ranks[0][2]");
        assert!(e.reason.contains("request 0"), "{}", e.reason);
    }
}
