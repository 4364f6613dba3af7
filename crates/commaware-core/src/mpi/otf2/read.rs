//! Reading an OTF2 archive with Score-P's conventions into a [`Trace`], through the OTF2
//! library's global event reader (one callback per record, in time order across locations;
//! the library keeps one buffer per location). What is kept while reading is each rank's
//! state and its open requests, besides the ops produced.
//!
//! The mapping (OTF2 3.0's record definitions; Score-P's MPI adapter writes them so):
//! * **Ranks.** The MPI locations are the members of the `COMM_LOCATIONS` group of the MPI
//!   paradigm, rank = position. Without one, the first CPU-thread location of each location
//!   group is a rank, in location-group order. Events of other locations (OpenMP threads,
//!   accelerator streams, metrics) are skipped and counted.
//! * **Communicators.** Each `Comm` definition's group (`COMM_GROUP`: world ranks) is a
//!   communicator; the one whose members are all ranks in order is the world (0). The others
//!   are created on every rank before its first op, in definition order, with `comm_split`
//!   (a rank outside gets none; `COMM_SELF` gives each rank its own); creating costs no time.
//! * **MPI regions.** An `Enter`/`Leave` of a region of the MPI paradigm brackets an MPI call;
//!   the time between the outermost MPI calls of a rank (from the clock's global offset) is
//!   compute: `compute {flops}` at `traced_speed` flops/s, else `compute {seconds}`. Regions of
//!   other paradigms (user, compiler, OpenMP, CUDA) count as compute; those of a parallel
//!   paradigm other than MPI are counted as skipped records.
//! * **Point to point.** `MpiSend` → `send` (`sync` in `MPI_Ssend`), `MpiRecv` → `recv` (its
//!   `sender` is the matched source, so a wildcard receive replays from the sender it got),
//!   both in one call (`MPI_Sendrecv`) → `sendrecv`; `MpiIsend` → `isend` (`sync` in
//!   `MPI_Issend`); `MpiIrecvRequest` → `irecv`, whose source and tag the completing `MpiIrecv`
//!   gives (an `MpiIrecv` without a request record posts it there); `MpiIsendComplete` and
//!   `MpiIrecv` → `wait` on that request (`test` inside an `MPI_Test*` call, where the test
//!   succeeded); `MpiRequestTest` → `test`; `MpiRequestCancelled` removes the request and its
//!   waits. Requests still open at the end of a rank are waited for.
//! * **Collectives.** `MpiCollectiveEnd` gives the operation, communicator, root and the
//!   bytes this rank sent and received, counted as Score-P counts them (Score-P 9.0,
//!   `src/adapters/mpi/c/scorep_mpi_coll.inc.c`; line numbers below are that file's): a
//!   bcast's root sends N × the buffer, a gather's root receives N blocks, an allreduce sends
//!   N × the buffer, a scan's rank r receives (r + 1) buffers, … The v-collectives get each
//!   rank's block from its own record, gathered across ranks; `alltoallv` and `alltoallw`
//!   record only totals, which are spread evenly over the peers (counted). Handle operations
//!   (communicator creation, windows) cost nothing; an unknown type is an error.
//! * **`MPI_IN_PLACE`.** Score-P records no in-place flag, only counts that leave out the
//!   block that stays in place. Where the counts tell the two apart they are read so: a
//!   gather's or reduce's root in place sends 0 and receives (N − 1) blocks (l. 69-72), a
//!   scatter's root receives 0 and sends (N − 1) blocks (the same, swapped, l. 275-283), an
//!   in-place scan's rank r sends (N − 1 − r) and receives r blocks (l. 712-716), an in-place
//!   allgatherv's rank sends (N − 1) × its block and receives all but its own (l. 569-584),
//!   an in-place reduce_scatter's rank receives (N − 1) × its block and sends all but its own
//!   (l. 661-666): the v-forms are decided over all ranks of the call. An in-place allreduce,
//!   allgather, alltoall or reduce_scatter_block records (N − 1) × the block at every rank
//!   where the ordinary call records N × (l. 387-398, l. 630-639): the same numbers for
//!   another size, so they are read as not in place unless [`Otf2Options::in_place`] names
//!   them, and counted.
//! * **What is refused.** Non-blocking collectives (`NonBlockingCollectiveRequest` /
//!   `Complete` records: `MPI_Ibcast` and the rest), one-sided communication (RMA records other
//!   than window creation, destruction and their collective brackets) and `MPI_Imrecv` (Score-P
//!   records no message and no request for it) stop the reading with the record's name and
//!   how many there are. `MPI_Mrecv` has no record either (its `MPI_Mprobe` matched the
//!   message): it is read as a receive from any rank with any tag on the world communicator,
//!   and counted.

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::ffi::{self, Attr, CallbackCode, Lib, Ud, CALLBACK_INTERRUPT, CALLBACK_SUCCESS};
use crate::error::{Error, ErrorKind, Result};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec};

const PARADIGM_MPI: u8 = 4;
const GROUP_COMM_LOCATIONS: u8 = 4;
const GROUP_COMM_GROUP: u8 = 5;
const GROUP_COMM_SELF: u8 = 6;
const LOCATION_CPU_THREAD: u8 = 1;
const UNDEFINED_U32: u32 = u32::MAX;

/// What reading an archive left out or approximated, for the caller's warnings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Otf2Stats {
    /// Events read.
    pub events: u64,
    /// Records skipped: events of locations that are not MPI ranks, and records of a
    /// parallel paradigm other than MPI (OpenMP, CUDA, threads).
    pub skipped_records: u64,
    /// `alltoallv`/`alltoallw` calls whose total was spread evenly over the peers.
    pub even_split_collectives: u64,
    /// Collective calls whose counts say `MPI_IN_PLACE` (read with the block left in place).
    pub in_place_collectives: u64,
    /// allreduce, allgather, alltoall and reduce_scatter_block calls whose counts cannot say
    /// whether they were in place (read as [`Otf2Options::in_place`] says).
    pub ambiguous_in_place: u64,
    /// `MPI_Mrecv` calls, read as a receive from any rank with any tag.
    pub wildcard_mrecv: u64,
}

/// The collectives whose Score-P counts are the same at every rank whether or not the
/// program passed `MPI_IN_PLACE` ((N − 1) × the block in place, N × otherwise): the names
/// [`Otf2Options::in_place`] takes.
pub const AMBIGUOUS_IN_PLACE: [&str; 4] = ["allreduce", "allgather", "alltoall", "reduce_scatter_block"];

/// How to read: `traced_speed` (flops/s of the traced machine) turns compute time into flops;
/// `in_place[i]` reads every [`AMBIGUOUS_IN_PLACE`]`[i]` call as made with `MPI_IN_PLACE`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Otf2Options {
    pub traced_speed: Option<f64>,
    pub in_place: [bool; 4],
}

impl Otf2Options {
    /// `in_place`: names from [`AMBIGUOUS_IN_PLACE`] (an unknown one is an options error).
    pub fn new(traced_speed: Option<f64>, in_place: &[String]) -> Result<Otf2Options> {
        OpSpec::check_traced_speed(traced_speed)?;
        let mut flags = [false; 4];
        for name in in_place {
            let Some(i) = AMBIGUOUS_IN_PLACE.iter().position(|k| k == name) else {
                return Err(Error::new(ErrorKind::Options, "in_place", format!("{name:?} is not one of {}", AMBIGUOUS_IN_PLACE.join(", "))));
            };
            flags[i] = true;
        }
        Ok(Otf2Options { traced_speed, in_place: flags })
    }
}

#[derive(Clone, Copy)]
enum CallKind {
    Other,
    Test,
    Ssend,
    /// `MPI_Mrecv`: a receive Score-P records nothing for.
    Mrecv,
    /// `MPI_Imrecv`: refused.
    Imrecv,
}

/// Records the reader refuses, counted over the whole archive: the record's name, how many,
/// and where the first one is.
#[derive(Default)]
struct Refused {
    count: u64,
    first: Option<(usize, u64)>,
}

impl Refused {
    fn note(&mut self, r: usize, time: u64) {
        self.count += 1;
        self.first.get_or_insert((r, time));
    }
}

struct Region {
    mpi: bool,
    other_parallel: bool,
    name: u32,
    kind: CallKind,
}

struct GroupDef {
    kind: u8,
    paradigm: u8,
    members: Vec<u64>,
}

#[derive(Default)]
struct Defs {
    resolution: u64,
    offset: Option<u64>,
    strings: HashMap<u32, String>,
    regions: HashMap<u32, Region>,
    /// (location, type, location group), in definition order.
    locations: Vec<(u64, u8, u32)>,
    groups: HashMap<u32, GroupDef>,
    /// (comm, group), in definition order.
    comms: Vec<(u32, u32)>,
}

/// One communicator: its members (world ranks; a COMM_SELF is each rank's own, one rank).
struct Comm {
    members: Vec<u32>,
}

#[derive(Default)]
struct RankState {
    ops: Vec<OpSpec>,
    depth: u32,
    kind: Option<CallKind>,
    last_leave: Option<u64>,
    /// Position of a blocking send in the current call (a receive after it makes a sendrecv).
    send_here: Option<usize>,
    /// Open requests: OTF2 request id → (our request number, position of its op).
    open: HashMap<u64, (usize, usize)>,
    /// Request ids whose irecv waits for its source and tag.
    placeholder: HashMap<u64, ()>,
    n_reqs: usize,
    cancelled: Vec<usize>,
    /// Collectives called so far on each communicator (by index into `Reading::comms`).
    coll_seq: HashMap<usize, u32>,
}

struct Reading {
    resolution: f64,
    offset: Option<u64>,
    regions: HashMap<u32, Region>,
    rank_of: HashMap<u64, usize>,
    comm_index: HashMap<u32, usize>,
    comms: Vec<Comm>,
    /// Per rank, per communicator index: this rank's own id and rank in it (None: not a member).
    local: Vec<Vec<Option<(usize, usize)>>>,
    ranks: Vec<RankState>,
    speed: Option<f64>,
    stats: Otf2Stats,
    /// v-collectives to complete: (rank, op position, communicator index, sequence).
    vfix: Vec<(usize, usize, usize, u32)>,
    /// Per v-collective call (communicator index, sequence): each member's (sent, received).
    vlists: HashMap<(usize, u32), Vec<(f64, f64)>>,
    in_place: [bool; 4],
    nonblocking_collectives: Refused,
    rma: Refused,
    imrecv: Refused,
    error: Option<Error>,
}

fn at(rank: usize, time: u64, reason: impl Into<String>) -> Error {
    Error::trace(format!("rank {rank} at time {time}"), reason)
}

impl Reading {
    fn compute(&mut self, r: usize, from: u64, to: u64) {
        if to <= from {
            return;
        }
        let seconds = (to - from) as f64 / self.resolution;
        self.ranks[r].ops.push(OpSpec::traced_compute(seconds, self.speed));
    }

    fn enter(&mut self, r: usize, time: u64, region: u32) -> Result<()> {
        let Some(reg) = self.regions.get(&region) else { return Err(at(r, time, format!("Enter of region {region}, which no definition names"))) };
        if reg.other_parallel {
            self.stats.skipped_records += 1;
        }
        if !reg.mpi {
            return Ok(());
        }
        let kind = reg.kind;
        let start = self.ranks[r].last_leave.or(self.offset).unwrap_or(time);
        let st = &mut self.ranks[r];
        st.depth += 1;
        if st.depth == 1 {
            st.kind = Some(kind);
            st.send_here = None;
            self.compute(r, start, time);
            match kind {
                CallKind::Mrecv => {
                    self.stats.wildcard_mrecv += 1;
                    self.ranks[r].ops.push(OpSpec::Recv { src: Peer::Any, tag: TagSpec::Any, comm: 0 });
                }
                CallKind::Imrecv => self.imrecv.note(r, time),
                _ => {}
            }
        }
        Ok(())
    }

    fn leave(&mut self, r: usize, time: u64, region: u32) -> Result<()> {
        let Some(reg) = self.regions.get(&region) else { return Err(at(r, time, format!("Leave of region {region}, which no definition names"))) };
        if reg.other_parallel {
            self.stats.skipped_records += 1;
        }
        if !reg.mpi {
            return Ok(());
        }
        let st = &mut self.ranks[r];
        if st.depth == 0 {
            return Err(at(r, time, "Leave of an MPI region that was not entered"));
        }
        st.depth -= 1;
        if st.depth == 0 {
            st.kind = None;
            st.last_leave = Some(time);
        }
        Ok(())
    }

    /// This rank's id for communicator `comm` and its size; `peer` checked against it.
    fn comm(&self, r: usize, time: u64, comm: u32) -> Result<(usize, usize, usize)> {
        let Some(&k) = self.comm_index.get(&comm) else { return Err(at(r, time, format!("communicator {comm}, which no definition names"))) };
        let Some((id, me)) = self.local[r][k] else { return Err(at(r, time, format!("communicator {comm}, which rank {r} is not a member of"))) };
        let _ = me;
        Ok((k, id, self.comms[k].members.len()))
    }

    fn peer(&self, r: usize, time: u64, comm: u32, peer: u32, what: &str) -> Result<usize> {
        let (_, _, n) = self.comm(r, time, comm)?;
        if peer as usize >= n {
            return Err(at(r, time, format!("{what} {peer} is not a rank of communicator {comm} ({n} ranks)")));
        }
        Ok(peer as usize)
    }

    fn send(&mut self, r: usize, time: u64, dst: u32, comm: u32, tag: u32, len: u64) -> Result<()> {
        let dst = self.peer(r, time, comm, dst, "receiver")?;
        let (_, id, _) = self.comm(r, time, comm)?;
        let st = &mut self.ranks[r];
        let sync = matches!(st.kind, Some(CallKind::Ssend));
        st.ops.push(OpSpec::Send { dst, bytes: len as f64, tag: tag as i64, sync, comm: id });
        st.send_here = Some(st.ops.len() - 1);
        Ok(())
    }

    fn recv(&mut self, r: usize, time: u64, src: u32, comm: u32, tag: u32) -> Result<()> {
        let src = self.peer(r, time, comm, src, "sender")?;
        let (_, id, _) = self.comm(r, time, comm)?;
        let st = &mut self.ranks[r];
        if let Some(i) = st.send_here.take() {
            if i + 1 == st.ops.len() {
                if let OpSpec::Send { dst, bytes, tag: stag, comm: scomm, .. } = st.ops[i] {
                    if scomm == id {
                        st.ops[i] = OpSpec::Sendrecv { dst, bytes, tag: stag, src: Peer::Rank(src), recvtag: TagSpec::Value(tag as i64), comm: id };
                        return Ok(());
                    }
                }
            }
        }
        st.ops.push(OpSpec::Recv { src: Peer::Rank(src), tag: TagSpec::Value(tag as i64), comm: id });
        Ok(())
    }

    fn post(&mut self, r: usize, time: u64, req: u64, op: OpSpec, placeholder: bool) -> Result<()> {
        let st = &mut self.ranks[r];
        st.ops.push(op);
        let n = st.n_reqs;
        st.n_reqs += 1;
        if st.open.insert(req, (n, st.ops.len() - 1)).is_some() {
            return Err(at(r, time, format!("request {req} posted while a request with that id is still open")));
        }
        if placeholder {
            st.placeholder.insert(req, ());
        }
        Ok(())
    }

    fn isend(&mut self, r: usize, time: u64, dst: u32, comm: u32, tag: u32, len: u64, req: u64) -> Result<()> {
        let dst = self.peer(r, time, comm, dst, "receiver")?;
        let (_, id, _) = self.comm(r, time, comm)?;
        let sync = matches!(self.ranks[r].kind, Some(CallKind::Ssend));
        self.post(r, time, req, OpSpec::Isend { dst, bytes: len as f64, tag: tag as i64, sync, comm: id }, false)
    }

    /// A request completed (in a wait, or in a test that succeeded).
    fn complete(&mut self, r: usize, time: u64, req: u64) -> Result<()> {
        let st = &mut self.ranks[r];
        let Some((n, _)) = st.open.remove(&req) else { return Err(at(r, time, format!("request {req} completes but was never posted"))) };
        let op = if matches!(st.kind, Some(CallKind::Test)) { OpSpec::Test { req: n } } else { OpSpec::Wait { req: n } };
        st.ops.push(op);
        Ok(())
    }

    fn irecv(&mut self, r: usize, time: u64, src: u32, comm: u32, tag: u32, req: u64) -> Result<()> {
        let src = self.peer(r, time, comm, src, "sender")?;
        let (_, id, _) = self.comm(r, time, comm)?;
        let op = OpSpec::Irecv { src: Peer::Rank(src), tag: TagSpec::Value(tag as i64), comm: id };
        let st = &mut self.ranks[r];
        if st.placeholder.remove(&req).is_some() {
            let (_, pos) = st.open[&req];
            st.ops[pos] = op;
        } else {
            self.post(r, time, req, op, false)?;
        }
        self.complete(r, time, req)
    }

    fn test(&mut self, r: usize, req: u64) {
        let st = &mut self.ranks[r];
        if let Some(&(n, _)) = st.open.get(&req) {
            st.ops.push(OpSpec::Test { req: n });
        }
    }

    fn cancel(&mut self, r: usize, req: u64) {
        let st = &mut self.ranks[r];
        if let Some((n, _)) = st.open.remove(&req) {
            st.placeholder.remove(&req);
            st.cancelled.push(n);
        }
    }

    fn collective(&mut self, r: usize, time: u64, kind: u8, comm: u32, root: u32, sent: u64, recvd: u64) -> Result<()> {
        if (17..=22).contains(&kind) {
            return Ok(()); // create/destroy a handle, allocate/free a window: no data moved
        }
        if kind > 22 {
            return Err(at(r, time, format!("unknown collective type {kind} (OTF2 3.0 knows 0 to 22)")));
        }
        let (k, id, n) = self.comm(r, time, comm)?;
        let me = self.local[r][k].map(|(_, m)| m).unwrap_or(0);
        let (s, v) = (sent as f64, recvd as f64);
        let nf = n as f64;
        let root_ok = |what: &str| -> Result<usize> {
            if root == UNDEFINED_U32 || root as usize >= n {
                return Err(at(r, time, format!("{what} with root {root}, not a rank of communicator {comm} ({n} ranks)")));
            }
            Ok(root as usize)
        };
        let seq = {
            let c = self.ranks[r].coll_seq.entry(k).or_insert(0);
            *c += 1;
            *c - 1
        };
        // Score-P's (N − 1) × block for an in-place allreduce, allgather, alltoall or
        // reduce_scatter_block (l. 387-391, 630-634), N × block otherwise: as the options say.
        let ambiguous = |this: &mut Reading, which: usize, total: f64| -> f64 {
            if n > 1 && total > 0.0 {
                this.stats.ambiguous_in_place += 1;
            }
            if this.in_place[which] && n > 1 {
                total / (nf - 1.0)
            } else {
                total / nf
            }
        };
        let mut vlist = false;
        let op = match kind {
            0 => OpSpec::Barrier { comm: id },
            1 => OpSpec::Bcast { root: root_ok("bcast")?, bytes: v, comm: id },
            // All-to-one (l. 38-116): the root in place sends 0 and receives (N − 1) blocks.
            2 | 12 => {
                let root = root_ok(if kind == 2 { "gather" } else { "reduce" })?;
                let bytes = if me == root && s == 0.0 && v > 0.0 && n > 1 {
                    self.stats.in_place_collectives += 1;
                    v / (nf - 1.0)
                } else {
                    s
                };
                if kind == 2 {
                    OpSpec::Gather { root, bytes, comm: id }
                } else {
                    OpSpec::Reduce { root, bytes, comm: id }
                }
            }
            // One-to-all (l. 261-285, all-to-one swapped): the root in place receives 0 and
            // sends (N − 1) blocks.
            4 => {
                let root = root_ok("scatter")?;
                let bytes = if me == root && v == 0.0 && s > 0.0 && n > 1 {
                    self.stats.in_place_collectives += 1;
                    s / (nf - 1.0)
                } else {
                    v
                };
                OpSpec::Scatter { root, bytes, comm: id }
            }
            // gatherv (l. 166-258), scatterv (l. 332-357): a rank's block is what it sends
            // (receives); an in-place root's own block stays in place (0, and no message).
            3 => {
                vlist = true;
                OpSpec::Gatherv { root: root_ok("gatherv")?, bytes: vec![0.0; n], comm: id }
            }
            5 => {
                vlist = true;
                OpSpec::Scatterv { root: root_ok("scatterv")?, bytes: vec![0.0; n], comm: id }
            }
            6 => OpSpec::Allgather { bytes: ambiguous(self, 1, s), comm: id },
            7 => {
                vlist = true;
                OpSpec::Allgatherv { bytes: vec![0.0; n], comm: id }
            }
            8 => OpSpec::Alltoall { bytes: ambiguous(self, 2, s), comm: id },
            9 | 10 => {
                self.stats.even_split_collectives += 1;
                OpSpec::Alltoallv { bytes: vec![s / nf; n], comm: id }
            }
            11 => OpSpec::Allreduce { bytes: ambiguous(self, 0, s), comm: id },
            13 => {
                vlist = true;
                OpSpec::ReduceScatter { bytes: vec![0.0; n], comm: id }
            }
            16 => OpSpec::ReduceScatter { bytes: vec![ambiguous(self, 3, v); n], comm: id },
            14 => {
                // Scan (l. 695-723): rank r sends (N − r) and receives (r + 1) blocks, in place
                // (N − 1 − r) and r.
                let (mf, ordinary) = (me as f64, v / (me as f64 + 1.0));
                let bytes = if close(s, (nf - mf) * ordinary) {
                    ordinary
                } else {
                    let b = if me > 0 { v / mf } else { s / (nf - 1.0).max(1.0) };
                    if !(close(s, (nf - 1.0 - mf) * b) && close(v, mf * b)) {
                        return Err(at(r, time, format!("scan sending {sent} and receiving {recvd} bytes at rank {me} of {n}: neither Score-P's ordinary nor its in-place counts")));
                    }
                    self.stats.in_place_collectives += 1;
                    b
                };
                OpSpec::Scan { bytes, comm: id }
            }
            _ => {
                // 15, exscan (l. 725-740, counted as an in-place scan): rank r receives r
                // buffers and sends N - 1 - r.
                let bytes = if me > 0 { v / me as f64 } else if n > 1 { s / (nf - 1.0) } else { 0.0 };
                OpSpec::Exscan { bytes, comm: id }
            }
        };
        let st = &mut self.ranks[r];
        st.ops.push(op);
        if vlist {
            self.vfix.push((r, st.ops.len() - 1, k, seq));
            let list = self.vlists.entry((k, seq)).or_insert_with(|| vec![(0.0, 0.0); n]);
            list[me] = (s, v);
        }
        Ok(())
    }
}

/// Equal up to rounding (the counts are integers; the blocks derived from them may not be).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// A v-collective's per-rank blocks from its members' (sent, received) counts, and whether it
/// was in place. gatherv: what each rank sends; scatterv: what each receives. allgatherv
/// (l. 539-597): rank i sends N × b_i and receives Σb, in place (N − 1) × b_i and Σb − b_i.
/// reduce_scatter (l. 643-693): rank i receives N × b_i and sends Σb, in place (N − 1) × b_i
/// and Σb − b_i. The ordinary reading is taken where both fit (all blocks 0, one rank).
fn v_blocks(op: &OpSpec, counts: &[(f64, f64)]) -> std::result::Result<(Vec<f64>, bool), String> {
    let nf = counts.len() as f64;
    let fits = |per_rank: &dyn Fn(f64, f64) -> f64, total_of: &dyn Fn(f64, f64) -> f64, divisor: f64, in_place: bool| {
        if divisor <= 0.0 {
            return None;
        }
        let blocks: Vec<f64> = counts.iter().map(|&(s, v)| per_rank(s, v) / divisor).collect();
        let sum: f64 = blocks.iter().sum();
        let ok = counts.iter().zip(&blocks).all(|(&(s, v), &b)| close(total_of(s, v), if in_place { sum - b } else { sum }));
        ok.then_some(blocks)
    };
    match op {
        OpSpec::Gatherv { .. } => Ok((counts.iter().map(|&(s, _)| s).collect(), false)),
        OpSpec::Scatterv { .. } => Ok((counts.iter().map(|&(_, v)| v).collect(), false)),
        OpSpec::Allgatherv { .. } | OpSpec::ReduceScatter { .. } => {
            let gather = matches!(op, OpSpec::Allgatherv { .. });
            let own = move |s: f64, v: f64| if gather { s } else { v };
            let total = move |s: f64, v: f64| if gather { v } else { s };
            if let Some(b) = fits(&own, &total, nf, false) {
                return Ok((b, false));
            }
            if let Some(b) = fits(&own, &total, nf - 1.0, true) {
                return Ok((b, true));
            }
            let what = if gather { "allgatherv" } else { "reduce_scatter" };
            let shown: Vec<String> = counts.iter().take(4).map(|(s, v)| format!("({s}, {v})")).collect();
            let more = if counts.len() > 4 { format!(", … ({} ranks)", counts.len()) } else { String::new() };
            Err(format!("an {what} whose ranks' byte counts (sent, received) {}{more} fit neither Score-P's ordinary nor its in-place counts", shown.join(", ")))
        }
        _ => Ok((Vec::new(), false)),
    }
}

/// The rank of an event's location, or None (counted as skipped).
fn rank(st: &mut Reading, loc: u64) -> Option<usize> {
    let r = st.rank_of.get(&loc).copied();
    if r.is_none() {
        st.stats.skipped_records += 1;
    }
    r
}

/// Run a callback's body: an error or a panic stops the reading (no unwinding into C).
fn guard(ud: Ud, f: impl FnOnce(&mut Reading) -> Result<()>) -> CallbackCode {
    // SAFETY: `ud` is the `Reading` registered with the callbacks, alive for the whole read
    // and used by one thread (the reader calls back serially).
    let st = unsafe { &mut *(ud as *mut Reading) };
    st.stats.events += 1;
    match catch_unwind(AssertUnwindSafe(|| f(st))) {
        Ok(Ok(())) => CALLBACK_SUCCESS,
        Ok(Err(e)) => {
            st.error = Some(e);
            CALLBACK_INTERRUPT
        }
        Err(_) => {
            st.error = Some(Error::trace("", "internal error while reading an OTF2 record"));
            CALLBACK_INTERRUPT
        }
    }
}

macro_rules! on_rank {
    ($ud:expr, $loc:expr, |$st:ident, $r:ident| $body:expr) => {
        guard($ud, |$st| match rank($st, $loc) {
            Some($r) => $body,
            None => Ok(()),
        })
    };
}

unsafe extern "C" fn ev_enter(loc: u64, t: u64, ud: Ud, _: Attr, region: u32) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.enter(r, t, region))
}
unsafe extern "C" fn ev_leave(loc: u64, t: u64, ud: Ud, _: Attr, region: u32) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.leave(r, t, region))
}
unsafe extern "C" fn ev_send(loc: u64, t: u64, ud: Ud, _: Attr, dst: u32, comm: u32, tag: u32, len: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.send(r, t, dst, comm, tag, len))
}
unsafe extern "C" fn ev_recv(loc: u64, t: u64, ud: Ud, _: Attr, src: u32, comm: u32, tag: u32, _len: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.recv(r, t, src, comm, tag))
}
unsafe extern "C" fn ev_isend(loc: u64, t: u64, ud: Ud, _: Attr, dst: u32, comm: u32, tag: u32, len: u64, req: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.isend(r, t, dst, comm, tag, len, req))
}
unsafe extern "C" fn ev_irecv(loc: u64, t: u64, ud: Ud, _: Attr, src: u32, comm: u32, tag: u32, _len: u64, req: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.irecv(r, t, src, comm, tag, req))
}
unsafe extern "C" fn ev_isend_complete(loc: u64, t: u64, ud: Ud, _: Attr, req: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.complete(r, t, req))
}
unsafe extern "C" fn ev_irecv_request(loc: u64, t: u64, ud: Ud, _: Attr, req: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.post(r, t, req, OpSpec::Irecv { src: Peer::Any, tag: TagSpec::Any, comm: 0 }, true))
}
unsafe extern "C" fn ev_request_test(loc: u64, _t: u64, ud: Ud, _: Attr, req: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| {
        st.test(r, req);
        Ok(())
    })
}
unsafe extern "C" fn ev_request_cancelled(loc: u64, _t: u64, ud: Ud, _: Attr, req: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| {
        st.cancel(r, req);
        Ok(())
    })
}
unsafe extern "C" fn ev_coll_begin(loc: u64, _t: u64, ud: Ud, _: Attr) -> CallbackCode {
    on_rank!(ud, loc, |_st, _r| Ok(()))
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn ev_coll_end(loc: u64, t: u64, ud: Ud, _: Attr, kind: u8, comm: u32, root: u32, sent: u64, recvd: u64) -> CallbackCode {
    on_rank!(ud, loc, |st, r| st.collective(r, t, kind, comm, root, sent, recvd))
}
/// `NonBlockingCollectiveRequest` and `…Complete`: counted, then refused (see `finish`).
unsafe extern "C" fn ev_nonblocking_collective(loc: u64, t: u64, ud: Ud, _: Attr) -> CallbackCode {
    on_rank!(ud, loc, |st, r| {
        st.nonblocking_collectives.note(r, t);
        Ok(())
    })
}
/// RMA records that move data or synchronise: counted, then refused (see `finish`).
unsafe extern "C" fn ev_rma(loc: u64, t: u64, ud: Ud, _: Attr) -> CallbackCode {
    on_rank!(ud, loc, |st, r| {
        st.rma.note(r, t);
        Ok(())
    })
}
/// OpenMP and thread records: only counted. Registered for records with more arguments
/// than these four: the C caller passes them all and this callee ignores the rest, which
/// the C calling conventions of the platforms we build for allow.
unsafe extern "C" fn ev_skipped(_loc: u64, _t: u64, ud: Ud, _: Attr) -> CallbackCode {
    guard(ud, |st| {
        st.stats.skipped_records += 1;
        Ok(())
    })
}

// Definitions.
fn defs<'a>(ud: Ud) -> &'a mut Defs {
    // SAFETY: `ud` is the `Defs` registered with the definition callbacks, alive and unshared.
    unsafe { &mut *(ud as *mut Defs) }
}
fn def_guard(ud: Ud, f: impl FnOnce(&mut Defs)) -> CallbackCode {
    match catch_unwind(AssertUnwindSafe(|| f(defs(ud)))) {
        Ok(()) => CALLBACK_SUCCESS,
        Err(_) => CALLBACK_INTERRUPT,
    }
}
unsafe extern "C" fn def_clock(ud: Ud, resolution: u64, offset: u64, _len: u64, _real: u64) -> CallbackCode {
    def_guard(ud, |d| {
        d.resolution = resolution;
        d.offset = Some(offset);
    })
}
unsafe extern "C" fn def_string(ud: Ud, id: u32, s: *const c_char) -> CallbackCode {
    let text = if s.is_null() { String::new() } else { CStr::from_ptr(s).to_string_lossy().into_owned() };
    def_guard(ud, |d| {
        d.strings.insert(id, text);
    })
}
unsafe extern "C" fn def_location_group(_ud: Ud, _id: u32, _name: u32, _kind: u8, _parent: u32, _creator: u32) -> CallbackCode {
    CALLBACK_SUCCESS
}
unsafe extern "C" fn def_location(ud: Ud, id: u64, _name: u32, kind: u8, _n: u64, group: u32) -> CallbackCode {
    def_guard(ud, |d| d.locations.push((id, kind, group)))
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn def_region(ud: Ud, id: u32, name: u32, _canon: u32, _desc: u32, _role: u8, paradigm: u8, _flags: u32, _file: u32, _b: u32, _e: u32) -> CallbackCode {
    def_guard(ud, |d| {
        let mpi = paradigm == PARADIGM_MPI;
        // Unknown, user, compiler and measurement-system regions are the program's own time.
        let other_parallel = !mpi && !matches!(paradigm, 0 | 1 | 2 | 6);
        d.regions.insert(id, Region { mpi, other_parallel, name, kind: CallKind::Other });
    })
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn def_group(ud: Ud, id: u32, _name: u32, kind: u8, paradigm: u8, _flags: u32, n: u32, members: *const u64) -> CallbackCode {
    let list = if members.is_null() || n == 0 { Vec::new() } else { std::slice::from_raw_parts(members, n as usize).to_vec() };
    def_guard(ud, |d| {
        d.groups.insert(id, GroupDef { kind, paradigm, members: list });
    })
}
unsafe extern "C" fn def_comm(ud: Ud, id: u32, _name: u32, group: u32, _parent: u32, _flags: u32) -> CallbackCode {
    def_guard(ud, |d| d.comms.push((id, group)))
}

/// Calls the library, turning a failed call into an error about the archive.
fn check(lib: &Lib, code: ffi::ErrorCode, what: &str) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::trace("", format!("{what}: {}", lib.describe(code))))
    }
}

/// Closes the reader on every way out.
struct ReaderHandle<'a> {
    lib: &'a Lib,
    ptr: *mut ffi::Opaque,
}
impl Drop for ReaderHandle<'_> {
    fn drop(&mut self) {
        // SAFETY: a reader from OTF2_Reader_Open, closed once.
        unsafe { (self.lib.reader_close)(self.ptr) };
    }
}

/// Read the archive whose anchor file is `anchor` with the OTF2 library `lib`; errors name
/// no file (the caller adds it).
pub fn read(lib: &Lib, anchor: &str, options: Otf2Options) -> Result<(Trace, Otf2Stats)> {
    let spec_stats = read_spec(lib, anchor, options)?;
    let trace = Trace::from_spec(spec_stats.0)?;
    Ok((trace, spec_stats.1))
}

/// The trace spec of the archive at `anchor`, before validation.
pub fn read_spec(lib: &Lib, anchor: &str, options: Otf2Options) -> Result<(TraceSpec, Otf2Stats)> {
    let path = CString::new(anchor).map_err(|_| Error::trace("", "the path holds a NUL byte"))?;
    // SAFETY: every call below follows OTF2's reader protocol (open, serial callbacks,
    // global definitions, local definitions per location, global events); callbacks get
    // pointers to `Defs`/`Reading` values that outlive the calls that use them.
    unsafe {
        let ptr = (lib.reader_open)(path.as_ptr());
        if ptr.is_null() {
            return Err(Error::trace("", "not an OTF2 archive (OTF2 cannot open this anchor file)"));
        }
        let h = ReaderHandle { lib, ptr };
        check(lib, (lib.reader_serial)(h.ptr), "the archive cannot be read")?;

        // Global definitions.
        let mut d = Defs { resolution: 1, ..Defs::default() };
        let gdr = (lib.reader_global_def_reader)(h.ptr);
        if gdr.is_null() {
            return Err(Error::trace("", "the archive has no global definitions (the anchor file without its .def file?)"));
        }
        let cbs = (lib.def_callbacks_new)();
        (lib.def_set_clock)(cbs, def_clock);
        (lib.def_set_string)(cbs, def_string);
        (lib.def_set_location_group)(cbs, def_location_group);
        (lib.def_set_location)(cbs, def_location);
        (lib.def_set_region)(cbs, def_region);
        (lib.def_set_group)(cbs, def_group);
        (lib.def_set_comm)(cbs, def_comm);
        let code = (lib.reader_register_def)(h.ptr, gdr, cbs, &mut d as *mut Defs as Ud);
        (lib.def_callbacks_delete)(cbs);
        check(lib, code, "the global definitions cannot be read")?;
        let mut n = 0u64;
        check(lib, (lib.reader_read_defs)(h.ptr, gdr, &mut n), "the global definitions cannot be read")?;
        if d.resolution == 0 {
            return Err(Error::trace("ClockProperties", "the timer resolution is 0 ticks per second"));
        }

        let mut st = prepare(d, options)?;
        // Local definitions (Score-P's id mappings), then every location's events.
        let locations: Vec<u64> = st.rank_of.keys().copied().collect();
        let mut all: Vec<u64> = locations.clone();
        all.sort_unstable();
        for &loc in &all {
            check(lib, (lib.reader_select)(h.ptr, loc), "a location cannot be selected")?;
        }
        let has_defs = (lib.reader_open_def_files)(h.ptr) == 0;
        check(lib, (lib.reader_open_evt_files)(h.ptr), "the event files cannot be opened")?;
        for &loc in &all {
            if has_defs {
                let dr = (lib.reader_def_reader)(h.ptr, loc);
                if !dr.is_null() {
                    let mut k = 0u64;
                    (lib.reader_read_local_defs)(h.ptr, dr, &mut k);
                    (lib.reader_close_def_reader)(h.ptr, dr);
                }
            }
            if (lib.reader_evt_reader)(h.ptr, loc).is_null() {
                return Err(Error::trace("", format!("the events of location {loc} cannot be opened (missing or truncated event file)")));
            }
        }
        if has_defs {
            (lib.reader_close_def_files)(h.ptr);
        }
        let ger = (lib.reader_global_evt_reader)(h.ptr);
        if ger.is_null() {
            return Err(Error::trace("", "the events cannot be read (missing or truncated event files)"));
        }
        let cbs = (lib.evt_callbacks_new)();
        (lib.evt_set_enter)(cbs, ev_enter);
        (lib.evt_set_leave)(cbs, ev_leave);
        (lib.evt_set_send)(cbs, ev_send);
        (lib.evt_set_isend)(cbs, ev_isend);
        (lib.evt_set_isend_complete)(cbs, ev_isend_complete);
        (lib.evt_set_irecv_request)(cbs, ev_irecv_request);
        (lib.evt_set_recv)(cbs, ev_recv);
        (lib.evt_set_irecv)(cbs, ev_irecv);
        (lib.evt_set_request_test)(cbs, ev_request_test);
        (lib.evt_set_request_cancelled)(cbs, ev_request_cancelled);
        (lib.evt_set_coll_begin)(cbs, ev_coll_begin);
        (lib.evt_set_coll_end)(cbs, ev_coll_end);
        for set in [lib.evt_set_omp_fork, lib.evt_set_omp_join, lib.evt_set_thread_fork, lib.evt_set_thread_join, lib.evt_set_team_begin, lib.evt_set_team_end] {
            set(cbs, ev_skipped);
        }
        // Records with more arguments than the four these take: see `ev_skipped`.
        for set in [lib.evt_set_nbc_request, lib.evt_set_nbc_complete] {
            set(cbs, ev_nonblocking_collective);
        }
        for set in [
            lib.evt_set_rma_put, lib.evt_set_rma_get, lib.evt_set_rma_atomic, lib.evt_set_rma_sync, lib.evt_set_rma_group_sync,
            lib.evt_set_rma_request_lock, lib.evt_set_rma_acquire_lock, lib.evt_set_rma_try_lock, lib.evt_set_rma_release_lock,
            lib.evt_set_rma_wait_change, lib.evt_set_rma_op_complete_blocking, lib.evt_set_rma_op_complete_non_blocking,
            lib.evt_set_rma_op_test, lib.evt_set_rma_op_complete_remote,
        ] {
            set(cbs, ev_rma);
        }
        let code = (lib.reader_register_evt)(h.ptr, ger, cbs, &mut st as *mut Reading as Ud);
        (lib.evt_callbacks_delete)(cbs);
        check(lib, code, "the events cannot be read")?;
        let mut n = 0u64;
        let code = (lib.reader_read_events)(h.ptr, ger, &mut n);
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        check(lib, code, "the events cannot be read (truncated or corrupt event file?)")?;
        (lib.reader_close_global_evt_reader)(h.ptr, ger);
        (lib.reader_close_evt_files)(h.ptr);
        drop(h);
        finish(st)
    }
}

/// Ranks, regions and communicators from the definitions.
fn prepare(d: Defs, options: Otf2Options) -> Result<Reading> {
    // Ranks: the MPI COMM_LOCATIONS group, else the first CPU thread of each location group.
    let mut rank_locations: Vec<u64> = match d.groups.values().find(|g| g.kind == GROUP_COMM_LOCATIONS && g.paradigm == PARADIGM_MPI) {
        Some(g) => g.members.clone(),
        None => {
            let mut firsts: Vec<(u32, u64)> = Vec::new();
            for &(loc, kind, group) in &d.locations {
                if kind == LOCATION_CPU_THREAD && !firsts.iter().any(|&(g, _)| g == group) {
                    firsts.push((group, loc));
                }
            }
            firsts.sort_unstable();
            firsts.into_iter().map(|(_, l)| l).collect()
        }
    };
    if rank_locations.is_empty() {
        return Err(Error::trace("", "the archive defines no MPI locations (no COMM_LOCATIONS group and no CPU-thread location)"));
    }
    rank_locations.truncate(crate::mpi::trace::MAX_RANKS + 1);
    let p = rank_locations.len();
    let mut rank_of = HashMap::with_capacity(p);
    for (r, &loc) in rank_locations.iter().enumerate() {
        if rank_of.insert(loc, r).is_some() {
            return Err(Error::trace("COMM_LOCATIONS", format!("location {loc} is listed twice")));
        }
    }
    // Regions: MPI calls whose name says how to read their records.
    let mut regions = d.regions;
    for reg in regions.values_mut() {
        if reg.mpi {
            let name = d.strings.get(&reg.name).map(|s| s.as_str()).unwrap_or("");
            let lower = name.to_ascii_lowercase();
            reg.kind = if lower.starts_with("mpi_test") {
                CallKind::Test
            } else if lower == "mpi_ssend" || lower == "mpi_issend" {
                CallKind::Ssend
            } else if lower == "mpi_mrecv" {
                CallKind::Mrecv
            } else if lower == "mpi_imrecv" {
                CallKind::Imrecv
            } else {
                CallKind::Other
            };
        }
    }
    // Communicators.
    let mut comms = Vec::new();
    let mut comm_index = HashMap::new();
    let mut local: Vec<Vec<Option<(usize, usize)>>> = vec![Vec::new(); p];
    let mut next_id = vec![1usize; p];
    let mut ranks: Vec<RankState> = (0..p).map(|_| RankState::default()).collect();
    let mut world_seen = false;
    for &(id, group) in &d.comms {
        let Some(g) = d.groups.get(&group) else { return Err(Error::trace(format!("Comm {id}"), format!("its group {group} is not defined"))) };
        let is_self = g.kind == GROUP_COMM_SELF;
        let members: Vec<u32> = if is_self {
            Vec::new()
        } else if g.kind == GROUP_COMM_GROUP || g.kind == GROUP_COMM_LOCATIONS {
            let mut m = Vec::with_capacity(g.members.len());
            for &x in &g.members {
                let r = if g.kind == GROUP_COMM_LOCATIONS { rank_of.get(&x).copied() } else { Some(x as usize).filter(|&r| r < p) };
                let Some(r) = r else { return Err(Error::trace(format!("Comm {id}"), format!("member {x} is not one of the {p} ranks"))) };
                m.push(r as u32);
            }
            m
        } else {
            continue; // not an MPI communicator's group
        };
        let k = comms.len();
        comm_index.insert(id, k);
        let is_world = !world_seen && !is_self && members.len() == p && members.iter().enumerate().all(|(i, &m)| m as usize == i);
        for r in 0..p {
            local[r].push(None);
        }
        if is_world {
            world_seen = true;
            for (r, l) in local.iter_mut().enumerate() {
                l[k] = Some((0, r));
            }
        } else {
            // Created on every rank first (collective over the world, costs nothing).
            let mut pos = vec![None; p];
            for (i, &m) in members.iter().enumerate() {
                if pos[m as usize].is_some() {
                    return Err(Error::trace(format!("Comm {id}"), format!("rank {m} is listed twice")));
                }
                pos[m as usize] = Some(i);
            }
            for r in 0..p {
                let (color, key) = if is_self {
                    (r as i64, 0)
                } else {
                    match pos[r] {
                        Some(i) => (0, i as i64),
                        None => (-1, 0),
                    }
                };
                ranks[r].ops.push(OpSpec::CommSplit { comm: 0, color, key });
                if color >= 0 {
                    local[r][k] = Some((next_id[r], if is_self { 0 } else { key as usize }));
                    next_id[r] += 1;
                }
            }
        }
        comms.push(Comm { members: if is_self { vec![0] } else { members } });
    }
    if !world_seen {
        // No world communicator defined: point-to-point records need one, so add it.
        let k = comms.len();
        comm_index.entry(u32::MAX).or_insert(k);
        for (r, l) in local.iter_mut().enumerate() {
            l.push(Some((0, r)));
        }
        comms.push(Comm { members: (0..p as u32).collect() });
    }
    Ok(Reading {
        resolution: d.resolution as f64,
        offset: d.offset,
        regions,
        rank_of,
        comm_index,
        comms,
        local,
        ranks,
        speed: options.traced_speed,
        stats: Otf2Stats::default(),
        vfix: Vec::new(),
        vlists: HashMap::new(),
        in_place: options.in_place,
        nonblocking_collectives: Refused::default(),
        rma: Refused::default(),
        imrecv: Refused::default(),
        error: None,
    })
}

/// Complete what needs the whole archive: refusals, v-collective lists, cancelled requests.
fn finish(mut st: Reading) -> Result<(TraceSpec, Otf2Stats)> {
    for (refused, record, what) in [
        (&st.nonblocking_collectives, "NonBlockingCollectiveRequest/Complete records", "non-blocking collectives (MPI_Ibcast, MPI_Iallreduce and the others)"),
        (&st.rma, "RMA records", "one-sided communication (MPI_Put, MPI_Get, MPI_Accumulate and their synchronisation)"),
        (&st.imrecv, "MPI_Imrecv calls", "MPI_Imrecv (Score-P records neither its message nor its request)"),
    ] {
        if let Some((r, time)) = refused.first {
            return Err(at(r, time, format!("{} {record}, the first here: commaware does not replay {what}", refused.count)));
        }
    }
    let mut decided: HashMap<(usize, u32), Vec<f64>> = HashMap::new();
    for &(r, pos, k, seq) in &st.vfix {
        let op = &mut st.ranks[r].ops[pos];
        if !decided.contains_key(&(k, seq)) {
            // Decided once per call: its raw counts are not needed after.
            let counts = st.vlists.remove(&(k, seq)).unwrap_or_default();
            let (blocks, in_place) = v_blocks(op, &counts).map_err(|e| Error::trace(format!("rank {r}"), e))?;
            if in_place {
                st.stats.in_place_collectives += counts.len() as u64;
            }
            decided.insert((k, seq), blocks);
        }
        let list = decided[&(k, seq)].clone();
        match op {
            OpSpec::Gatherv { bytes, .. } | OpSpec::Scatterv { bytes, .. } | OpSpec::Allgatherv { bytes, .. } | OpSpec::ReduceScatter { bytes, .. } => *bytes = list,
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(st.ranks.len());
    for (r, mut rs) in std::mem::take(&mut st.ranks).into_iter().enumerate() {
        if let Some((&req, _)) = rs.placeholder.iter().next() {
            return Err(Error::trace(format!("rank {r}"), format!("the MPI_Irecv of request {req} never completes (no MpiIrecv record)")));
        }
        if !rs.cancelled.is_empty() {
            rs.ops = drop_cancelled(rs.ops, &rs.cancelled);
        }
        if rs.n_reqs > rs.cancelled.len() {
            rs.ops.push(OpSpec::Waitall);
        }
        out.push(rs.ops);
    }
    Ok((TraceSpec { ranks: out, placement: None }, st.stats))
}

/// `ops` without the requests in `cancelled` (numbers in posting order) and their waits
/// and tests, the other requests renumbered.
fn drop_cancelled(ops: Vec<OpSpec>, cancelled: &[usize]) -> Vec<OpSpec> {
    let mut gone = cancelled.to_vec();
    gone.sort_unstable();
    let new_of = |n: usize| -> Option<usize> {
        match gone.binary_search(&n) {
            Ok(_) => None,
            Err(below) => Some(n - below),
        }
    };
    let mut posted = 0usize;
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        match op {
            OpSpec::Isend { .. } | OpSpec::Irecv { .. } => {
                let n = posted;
                posted += 1;
                if new_of(n).is_some() {
                    out.push(op);
                }
            }
            OpSpec::Wait { req } => {
                if let Some(m) = new_of(req) {
                    out.push(OpSpec::Wait { req: m });
                }
            }
            OpSpec::Test { req } => {
                if let Some(m) = new_of(req) {
                    out.push(OpSpec::Test { req: m });
                }
            }
            other => out.push(other),
        }
    }
    out
}
