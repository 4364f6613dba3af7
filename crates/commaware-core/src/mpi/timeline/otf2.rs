//! The simulated run as an OTF2 archive (`simulate … --timeline FILE.otf2`), for Vampir and
//! the other OTF2 readers, written through the OTF2 library as the replay streams it
//! ([`TimelineSink`]): one location per rank (in a location group per rank, under a system
//! tree node per host), each trace operation as an `Enter`/`Leave` of a region named as
//! Score-P names the MPI call (`MPI_Send`, `MPI_Bcast`, …; `compute` and `sleep` as user
//! regions), with the records Score-P's MPI adapter writes inside: `MpiSend` when a send is
//! entered, `MpiRecv` when a receive leaves (the source and tag it matched), `MpiIsend` and
//! `MpiIrecvRequest` with a request id when posted, their `MpiIsendComplete` / `MpiIrecv` in
//! the wait or test that completed them, `MpiRequestTest` for a test that did not,
//! `MpiCollectiveBegin`/`End` with Score-P's byte counts, on the trace's communicators.
//! So the OTF2 reader reads back the trace that was replayed. A collective's own messages
//! are not written (Score-P records none). Times are in nanoseconds.
//!
//! Events go to the library's per-location buffers as they come; the definitions (a few
//! per rank) are written at the end. The archive is `NAME.otf2` (the anchor), `NAME.def` and
//! the folder `NAME/`, NAME being the path's stem for a `*.otf2` path and its whole file name
//! otherwise (a partial name the caller renames once complete, `archive_entries`); an
//! archive left unfinished by an error is removed.

use std::ffi::CString;
use std::path::{Path, PathBuf};


use crate::mpi::otf2::ffi::{self, Lib};
use crate::error::{Error, ErrorKind, Result};
use crate::mpi::ops::{OpSpec, Peer, TagSpec, OP_NAMES};
use crate::mpi::trace::Trace;
use super::{TimelineMessage, TimelineOp, TimelineRun, TimelineSink};

/// Ticks per second of the archive's clock.
const RESOLUTION: f64 = 1e9;
const UNDEFINED_U32: u32 = u32::MAX;
const UNDEFINED_U64: u64 = u64::MAX;
const PARADIGM_USER: u8 = 1;
const PARADIGM_MPI: u8 = 4;
const ROLE_FUNCTION: u8 = 1;
const ROLE_COLL_OTHER: u8 = 26;
const ROLE_POINT2POINT: u8 = 28;

/// The region Score-P names for trace operation `op` (an [`OP_NAMES`] name).
pub fn region_name(op: &str) -> String {
    match op {
        "compute" | "sleep" => op.to_string(),
        "reduce_scatter" => "MPI_Reduce_scatter".into(),
        "comm_split" => "MPI_Comm_split".into(),
        "comm_dup" => "MPI_Comm_dup".into(),
        _ => {
            let mut chars = op.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or('_');
            format!("MPI_{first}{}", chars.as_str())
        }
    }
}

/// Regions beyond one per [`OP_NAMES`] entry (ids from `OP_NAMES.len()`), for recorded runs:
/// the synchronous sends, and MPI_Finalize (which ends a rank's last compute burst).
const EXTRA_REGIONS: [&str; 3] = ["MPI_Ssend", "MPI_Issend", "MPI_Finalize"];
const REGION_SSEND: u32 = OP_NAMES.len() as u32;
const REGION_ISSEND: u32 = REGION_SSEND + 1;
const REGION_FINALIZE: u32 = REGION_SSEND + 2;

/// The region of trace op `op`: its [`OP_NAMES`] code, or `MPI_Ssend` / `MPI_Issend` for a
/// synchronous send.
fn region_of(op: &OpSpec) -> u32 {
    match op {
        OpSpec::Send { sync: true, .. } => REGION_SSEND,
        OpSpec::Isend { sync: true, .. } => REGION_ISSEND,
        _ => op.code() as u32,
    }
}

/// A user tag as a replay's record carries it: user tags are below 2^31, and 2^32 − 1 is
/// OTF2's "undefined".
fn record_tag(tag: i64) -> u32 {
    tag.clamp(0, u32::MAX as i64 - 1) as u32
}

/// Every region the writer defines, by id: its name, role and paradigm.
fn regions() -> Vec<(String, u8, u8)> {
    let mut all: Vec<(String, u8, u8)> = OP_NAMES.iter().map(|op| {
        let (role, paradigm) = role(op);
        (region_name(op), role, paradigm)
    }).collect();
    all.push((EXTRA_REGIONS[0].into(), ROLE_POINT2POINT, PARADIGM_MPI));
    all.push((EXTRA_REGIONS[1].into(), ROLE_POINT2POINT, PARADIGM_MPI));
    all.push((EXTRA_REGIONS[2].into(), ROLE_FUNCTION, PARADIGM_MPI));
    all
}

fn role(op: &str) -> (u8, u8) {
    match op {
        "compute" | "sleep" => (ROLE_FUNCTION, PARADIGM_USER),
        "send" | "isend" | "recv" | "irecv" | "sendrecv" => (ROLE_POINT2POINT, PARADIGM_MPI),
        "wait" | "waitall" | "waitany" | "test" | "comm_split" | "comm_dup" => (ROLE_FUNCTION, PARADIGM_MPI),
        _ => (ROLE_COLL_OTHER, PARADIGM_MPI),
    }
}

/// An OTF2 archive being written.
pub struct Otf2Writer {
    lib: &'static Lib,
    /// Where it is written (directory, archive name) and the name errors show.
    dir: PathBuf,
    name: String,
    shown_as: String,
    archive: *mut ffi::Opaque,
    writers: Vec<*mut ffi::Opaque>,
    /// Per rank: the region it is in (an op code), and its events so far.
    open: Vec<Option<u8>>,
    events: Vec<u64>,
    host_names: Vec<String>,
    rank_hosts: Vec<usize>,
    /// Communicators besides the world (numbers 1, 2, …): their members, world ranks in
    /// communicator rank order.
    comms: Vec<Vec<u32>>,
    /// Per rank, when writing a replay (not a recording).
    records: Vec<RankRecords>,
    finished: bool,
}

// SAFETY: the archive and its writers are used by one thread at a time (the sink is owned by
// the replay that calls it); OTF2 handles carry no thread affinity.
unsafe impl Send for Otf2Writer {}

fn out_err(shown_as: &str, reason: impl Into<String>) -> Error {
    Error { kind: ErrorKind::Output, source: shown_as.to_string(), field: String::new(), reason: reason.into() }
}

fn ticks(time: f64) -> u64 {
    (time * RESOLUTION).round().max(0.0) as u64
}

/// Opens an archive at `path` (its anchor file; `shown_as` is the final name) with the
/// library set by [`ffi::use_library`].
pub fn open(path: &Path, shown_as: &str) -> Result<Box<dyn TimelineSink + Send>> {
    Ok(Box::new(Otf2Writer::new(path, shown_as)?))
}

impl Otf2Writer {
    fn new(path: &Path, shown_as: &str) -> Result<Otf2Writer> {
    let lib = ffi::library().map_err(|e| Error { source: shown_as.to_string(), ..e })?;
    let (dir, name) = archive_name(path);
    Ok(Otf2Writer {
        lib,
        dir,
        name,
        shown_as: shown_as.to_string(),
        archive: std::ptr::null_mut(),
        writers: Vec::new(),
        open: Vec::new(),
        events: Vec::new(),
        host_names: Vec::new(),
        rank_hosts: Vec::new(),
        comms: Vec::new(),
        records: Vec::new(),
        finished: false,
    })
    }
}

/// The directory and archive name of an archive written at `path`: its stem for a `*.otf2`
/// path (the anchor file is then `path`), else its whole file name.
pub fn archive_name(path: &Path) -> (PathBuf, String) {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let is_anchor = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("otf2"));
    let name = if is_anchor { path.file_stem() } else { path.file_name() };
    (dir, name.and_then(|s| s.to_str()).unwrap_or("traces").to_string())
}

/// The pre-flush callback: always flush the buffers to the files.
unsafe extern "C" fn pre_flush(_: ffi::Ud, _file_type: u8, _location: u64, _caller: ffi::Ud, _final: bool) -> u8 {
    1 // OTF2_FLUSH
}

impl Otf2Writer {
    fn check(&self, code: ffi::ErrorCode, what: &str) -> Result<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(out_err(&self.shown_as, format!("{what}: {}", self.lib.describe(code))))
        }
    }

    /// The archive's three entries: anchor file, global definitions, folder of the locations.
    fn entries(dir: &Path, name: &str) -> [PathBuf; 3] {
        [dir.join(format!("{name}.otf2")), dir.join(format!("{name}.def")), dir.join(name)]
    }

    fn remove(dir: &Path, name: &str) {
        for p in Self::entries(dir, name) {
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(&p);
            } else {
                let _ = std::fs::remove_file(&p);
            }
        }
    }

    fn write_definitions(&mut self, makespan: f64) -> Result<()> {
        let lib = self.lib;
        // Every string first, then the definitions by kind, in the order OTF2 lists them.
        let mut strings: Vec<CString> = Vec::new();
        let mut string = |s: &str| -> u32 {
            strings.push(CString::new(s.replace('\0', " ")).unwrap_or_default());
            strings.len() as u32 - 1
        };
        let empty = string("");
        let machine = string("commaware simulation");
        let class_machine = string("machine");
        let class_node = string("node");
        let thread = string("Master thread");
        let world = string("MPI_COMM_WORLD");
        let hosts: Vec<u32> = self.host_names.iter().map(|h| string(h)).collect();
        let groups: Vec<u32> = (0..self.events.len()).map(|r| string(&format!("MPI Rank {r}"))).collect();
        let table = regions();
        let regions: Vec<u32> = table.iter().map(|(name, _, _)| string(name)).collect();
        let comm_names: Vec<u32> = (1..=self.comms.len()).map(|k| string(&format!("MPI communicator {k}"))).collect();
        let p = self.events.len();
        // SAFETY: the archive is open; every pointer passed lives across its call.
        unsafe {
            let w = (lib.archive_global_def_writer)(self.archive);
            if w.is_null() {
                return Err(out_err(&self.shown_as, "cannot write the global definitions"));
            }
            self.check((lib.def_clock_properties)(w, RESOLUTION as u64, 0, ticks(makespan), UNDEFINED_U64), "clock")?;
            for (id, text) in strings.iter().enumerate() {
                self.check((lib.def_string)(w, id as u32, text.as_ptr()), "string definition")?;
            }
            self.check((lib.def_system_tree_node)(w, 0, machine, class_machine, UNDEFINED_U32), "system tree")?;
            for (h, &name) in hosts.iter().enumerate() {
                self.check((lib.def_system_tree_node)(w, h as u32 + 1, name, class_node, 0), "system tree")?;
            }
            for (r, &name) in groups.iter().enumerate() {
                let node = self.rank_hosts.get(r).map(|&h| h as u32 + 1).unwrap_or(0);
                self.check((lib.def_location_group)(w, r as u32, name, 1, node, UNDEFINED_U32), "location group")?;
            }
            for r in 0..p {
                self.check((lib.def_location)(w, r as u64, thread, 1, self.events[r], r as u32), "location")?;
            }
            for (id, &(_, role, paradigm)) in table.iter().enumerate() {
                let n = regions[id];
                self.check((lib.def_region)(w, id as u32, n, n, empty, role, paradigm, 0, empty, 0, 0), "region")?;
            }
            let ranks: Vec<u64> = (0..p as u64).collect();
            self.check((lib.def_group)(w, 0, empty, 4, PARADIGM_MPI, 0, p as u32, ranks.as_ptr()), "group")?;
            self.check((lib.def_group)(w, 1, empty, 5, PARADIGM_MPI, 0, p as u32, ranks.as_ptr()), "group")?;
            self.check((lib.def_comm)(w, 0, world, 1, UNDEFINED_U32, 0), "communicator")?;
            for (k, members) in self.comms.iter().enumerate() {
                let members: Vec<u64> = members.iter().map(|&m| m as u64).collect();
                let id = k as u32 + 1;
                self.check((lib.def_group)(w, id + 1, empty, 5, PARADIGM_MPI, 0, members.len() as u32, members.as_ptr()), "group")?;
                self.check((lib.def_comm)(w, id, comm_names[k], id + 1, 0, 0), "communicator")?;
            }
        }
        Ok(())
    }
}

/// The OTF2 collective type (`OTF2_CollectiveOp`) of a collective op, with the bytes this
/// rank sent and received as Score-P counts them (the inverse of the reader's mapping,
/// `crate::mpi::otf2::read`), and its root; `None` for an op that is not a collective.
fn collective_record(op: &OpSpec, n: usize, me: usize) -> Option<(u8, u32, u64, u64)> {
    let nb = |b: f64| (b * n as f64).round() as u64;
    let b = |b: f64| b.round() as u64;
    let at = |list: &[f64]| list.get(me).copied().unwrap_or(0.0);
    let sum = |list: &[f64]| list.iter().sum::<f64>().round() as u64;
    let is_root = |root: usize| root == me;
    Some(match op {
        OpSpec::Barrier { .. } => (0, UNDEFINED_U32, 0, 0),
        OpSpec::Bcast { root, bytes, .. } => (1, *root as u32, if is_root(*root) { nb(*bytes) } else { 0 }, b(*bytes)),
        OpSpec::Gather { root, bytes, .. } => (2, *root as u32, b(*bytes), if is_root(*root) { nb(*bytes) } else { 0 }),
        OpSpec::Gatherv { root, bytes, .. } => (3, *root as u32, b(at(bytes)), if is_root(*root) { sum(bytes) } else { 0 }),
        OpSpec::Scatter { root, bytes, .. } => (4, *root as u32, if is_root(*root) { nb(*bytes) } else { 0 }, b(*bytes)),
        OpSpec::Scatterv { root, bytes, .. } => (5, *root as u32, if is_root(*root) { sum(bytes) } else { 0 }, b(at(bytes))),
        OpSpec::Allgather { bytes, .. } => (6, UNDEFINED_U32, nb(*bytes), nb(*bytes)),
        OpSpec::Allgatherv { bytes, .. } => (7, UNDEFINED_U32, nb(at(bytes)), sum(bytes)),
        OpSpec::Alltoall { bytes, .. } => (8, UNDEFINED_U32, nb(*bytes), nb(*bytes)),
        OpSpec::Alltoallv { bytes, .. } => (9, UNDEFINED_U32, sum(bytes), sum(bytes)),
        OpSpec::Allreduce { bytes, .. } => (11, UNDEFINED_U32, nb(*bytes), nb(*bytes)),
        OpSpec::Reduce { root, bytes, .. } => (12, *root as u32, b(*bytes), if is_root(*root) { nb(*bytes) } else { 0 }),
        OpSpec::ReduceScatter { bytes, .. } => (13, UNDEFINED_U32, sum(bytes), nb(at(bytes))),
        OpSpec::Scan { bytes, .. } => (14, UNDEFINED_U32, b(*bytes * (n - me) as f64), b(*bytes * (me + 1) as f64)),
        OpSpec::Exscan { bytes, .. } => (15, UNDEFINED_U32, b(*bytes * (n - 1 - me) as f64), b(*bytes * me as f64)),
        _ => return None,
    })
}

/// A request of a recorded rank not completed yet: an isend, or an irecv with its source
/// (rank in the communicator), communicator number and tag.
#[derive(Clone, Copy)]
enum OpenRequest {
    Isend,
    Irecv { src: u32, comm: u32, tag: u32 },
}

/// What a replayed rank's current op writes when it leaves.
#[derive(Clone, Copy)]
enum AtLeave {
    Nothing,
    /// A blocking receive: its `MpiRecv`, with the source and tag the op names (None: the
    /// message it matched gives them).
    Recv { comm: u32, src: Option<u32>, tag: Option<u32> },
    /// A collective's `MpiCollectiveEnd` (type, root, bytes sent and received).
    Collective { comm: u32, kind: u8, root: u32, sent: u64, recvd: u64 },
}

/// A replay's per-rank state for writing MPI's records.
struct RankRecords {
    at_leave: AtLeave,
    /// Requests posted so far (the next one's id), and those still open.
    posted: u64,
    open: std::collections::HashMap<u64, OpenRequest>,
    /// The world rank and tag of the last user message this rank received.
    last_received: Option<(u32, u32)>,
    /// When the rank left its last op (ticks): its `MPI_Finalize`, which ends its last
    /// compute burst for a reader.
    last_leave: u64,
}

/// One line of a `rank-R.times` file: `ENTER LEAVE` (ns), or `end T` for the last.
fn times_line(line: Option<std::io::Result<String>>, file: &str, n: usize, last: bool) -> Result<(u64, u64)> {
    let bad = |reason: String| Error { kind: ErrorKind::Trace, source: file.to_string(), field: format!("line {n}"), reason };
    let line = match line {
        None => return Err(bad("the file ends before the trace's ops do (the times and the trace are not of the same run)".into())),
        Some(Err(e)) => return Err(bad(format!("cannot read: {e}"))),
        Some(Ok(l)) => l,
    };
    let fields: Vec<&str> = line.split_ascii_whitespace().collect();
    let num = |t: &str| t.parse::<u64>().map_err(|_| bad(format!("{t:?} is not a time in nanoseconds")));
    match (last, fields.as_slice()) {
        (false, [a, b]) => {
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(bad(format!("the call ends ({b} ns) before it starts ({a} ns)")));
            }
            Ok((a, b))
        }
        (true, ["end", t]) => {
            let t = num(t)?;
            Ok((t, t))
        }
        (true, _) => Err(bad(format!("expected `end T` after the last op, got {line:?}"))),
        (false, _) => Err(bad(format!("expected `ENTER LEAVE` in nanoseconds, got {line:?}"))),
    }
}

/// Writes a recorded run (`commaware trace record --format otf2`) as an OTF2 archive at
/// `path` (`shown_as` in errors) with Score-P's conventions, so that the OTF2 reader gives
/// back the same trace: `trace` is the run's recording, `times[r]` the file of rank r's call
/// times (one `ENTER LEAVE` line in ns per op that is not a compute, then `end T`, the time
/// MPI_Finalize was called; on the rank's clock from MPI_Init without the recorder's own
/// time, so the gap between two calls is the compute op between them), `hosts[r]` the host
/// rank r ran on. Each op is its MPI call's region, `Enter` at its start and `Leave` at its
/// end, with the call's records inside: `MpiSend`/`MpiRecv`, `MpiIsend`/`MpiIsendComplete`,
/// `MpiIrecvRequest`/`MpiIrecv` (the completion in the wait, test or waitall that completed
/// it), `MpiCollectiveBegin`/`End` with the type, root and bytes. Communicators are defined
/// by their members. Ranks are written one after the other (the library buffers per
/// location and flushes to its files), reading each rank's times as it goes. Returns the
/// number of events written.
pub fn write_recording(trace: &Trace, times: &[PathBuf], hosts: &[String], path: &Path, shown_as: &str) -> Result<u64> {
    use std::collections::BTreeMap;
    use std::io::BufRead;

    let p = trace.n_ranks();
    if times.len() != p || hosts.len() != p {
        return Err(Error::new(ErrorKind::Options, "times", format!("{} times files and {} hosts for {p} ranks", times.len(), hosts.len())));
    }
    let mut w = Otf2Writer::new(path, shown_as)?;
    let mut host_names: Vec<String> = Vec::new();
    let rank_hosts: Vec<usize> = hosts
        .iter()
        .map(|h| match host_names.iter().position(|x| x == h) {
            Some(i) => i,
            None => {
                host_names.push(h.clone());
                host_names.len() - 1
            }
        })
        .collect();
    w.begin(&TimelineRun { host_names: &host_names, rank_hosts: &rank_hosts, comms: trace.communicators() })?;
    w.records.clear(); // the recording writes each op's records and MPI_Finalize itself
    let mut end = 0u64;
    for r in 0..p {
        let file = times[r].display().to_string();
        let f = std::fs::File::open(&times[r]).map_err(|e| Error { kind: ErrorKind::Trace, source: file.clone(), field: String::new(), reason: format!("cannot read: {e}") })?;
        let mut lines = std::io::BufReader::new(f).lines();
        let mut n_line = 0usize;
        let mut last = 0u64;
        let mut open: BTreeMap<u64, OpenRequest> = BTreeMap::new();
        let mut next_req = 0u64;
        for (i, op) in trace.spec.ranks[r].iter().enumerate() {
            if matches!(op, OpSpec::Compute { .. }) {
                continue;
            }
            let at = |reason: &str| Error::trace(format!("ranks[{r}][{i}]"), format!("{reason}; OTF2 cannot express it"));
            n_line += 1;
            let (a, b) = times_line(lines.next(), &file, n_line, false)?;
            let enter = a.max(last);
            let leave = b.max(enter);
            last = leave;
            let region = region_of(op);
            let (comm, me) = trace.communicator(r, op.comm());
            let n = trace.comm_size(r, op.comm());
            let tag = |t: i64| -> Result<u32> { u32::try_from(t).ok().filter(|&t| t != u32::MAX).ok_or_else(|| at(&format!("tag {t}"))) };
            let source = |src: &Peer| -> Result<u32> {
                match src {
                    Peer::Rank(s) => Ok(*s as u32),
                    Peer::Any => Err(at("a receive from any source (OTF2 records the sender that matched, which the recording does not keep)")),
                }
            };
            let recv_tag = |t: &TagSpec| -> Result<u32> {
                match t {
                    TagSpec::Value(v) => tag(*v),
                    TagSpec::Any => Err(at("a receive with any tag (OTF2 records the tag that matched, which the recording does not keep)")),
                }
            };
            w.region_event(r, enter, region, true)?;
            let lib = w.lib;
            match op {
                OpSpec::Send { dst, bytes, tag: t, .. } => {
                    let t = tag(*t)?;
                    w.event(r, "send", |wr| unsafe { (lib.evt_mpi_send)(wr, std::ptr::null_mut(), enter, *dst as u32, comm, t, *bytes as u64) })?;
                }
                OpSpec::Recv { src, tag: t, .. } => {
                    let (s, t) = (source(src)?, recv_tag(t)?);
                    w.event(r, "receive", |wr| unsafe { (lib.evt_mpi_recv)(wr, std::ptr::null_mut(), leave, s, comm, t, 0) })?;
                }
                OpSpec::Sendrecv { dst, bytes, tag: t, src, recvtag, .. } => {
                    let (t, s, rt) = (tag(*t)?, source(src)?, recv_tag(recvtag)?);
                    w.event(r, "send", |wr| unsafe { (lib.evt_mpi_send)(wr, std::ptr::null_mut(), enter, *dst as u32, comm, t, *bytes as u64) })?;
                    w.event(r, "receive", |wr| unsafe { (lib.evt_mpi_recv)(wr, std::ptr::null_mut(), leave, s, comm, rt, 0) })?;
                }
                OpSpec::Isend { dst, bytes, tag: t, .. } => {
                    let t = tag(*t)?;
                    let req = next_req;
                    next_req += 1;
                    open.insert(req, OpenRequest::Isend);
                    w.event(r, "isend", |wr| unsafe { (lib.evt_mpi_isend)(wr, std::ptr::null_mut(), enter, *dst as u32, comm, t, *bytes as u64, req) })?;
                }
                OpSpec::Irecv { src, tag: t, .. } => {
                    let (s, t) = (source(src)?, recv_tag(t)?);
                    let req = next_req;
                    next_req += 1;
                    open.insert(req, OpenRequest::Irecv { src: s, comm, tag: t });
                    w.event(r, "irecv request", |wr| unsafe { (lib.evt_mpi_irecv_request)(wr, std::ptr::null_mut(), enter, req) })?;
                }
                OpSpec::Wait { req } | OpSpec::Test { req } => {
                    if let Some(o) = open.remove(&(*req as u64)) {
                        w.complete(r, leave, *req as u64, &o)?;
                    }
                }
                OpSpec::Waitall => {
                    for (req, o) in std::mem::take(&mut open) {
                        w.complete(r, leave, req, &o)?;
                    }
                }
                OpSpec::Waitany { .. } => return Err(at("a waitany (the recorder writes the wait of the request that completed)")),
                OpSpec::Sleep { .. } => return Err(at("a sleep, which no MPI call records")),
                OpSpec::CommSplit { .. } | OpSpec::CommDup { .. } => {}
                OpSpec::Compute { .. } => unreachable!("skipped above"),
                coll => {
                    let (kind, root, sent, recvd) = collective_record(coll, n, me).expect("every other op is a collective");
                    w.event(r, "collective begin", |wr| unsafe { (lib.evt_mpi_coll_begin)(wr, std::ptr::null_mut(), enter) })?;
                    w.event(r, "collective end", |wr| unsafe { (lib.evt_mpi_coll_end)(wr, std::ptr::null_mut(), leave, kind, comm, root, sent, recvd) })?;
                }
            }
            w.region_event(r, leave, region, false)?;
        }
        let (t, _) = times_line(lines.next(), &file, n_line + 1, true)?;
        let t = t.max(last);
        w.region_event(r, t, REGION_FINALIZE, true)?;
        w.region_event(r, t, REGION_FINALIZE, false)?;
        end = end.max(t);
    }
    let events = w.events.iter().sum();
    w.end(end as f64 / RESOLUTION)?;
    Ok(events)
}

impl Otf2Writer {
    /// An event of rank `r` written by `f` (given the rank's event writer).
    fn event(&mut self, r: usize, what: &str, f: impl FnOnce(*mut ffi::Opaque) -> ffi::ErrorCode) -> Result<()> {
        self.events[r] += 1;
        let code = f(self.writers[r]);
        self.check(code, what)
    }

    /// `Enter` (or `Leave`) of `region` on rank `r` at `t` ticks.
    fn region_event(&mut self, r: usize, t: u64, region: u32, enter: bool) -> Result<()> {
        let lib = self.lib;
        // SAFETY: a writer of this archive.
        if enter {
            self.event(r, "enter", |wr| unsafe { (lib.evt_enter)(wr, std::ptr::null_mut(), t, region) })
        } else {
            self.event(r, "leave", |wr| unsafe { (lib.evt_leave)(wr, std::ptr::null_mut(), t, region) })
        }
    }

    /// The rank in communicator `comm` (0: the world) of world rank `world`.
    fn local_rank(&self, comm: u32, world: u32) -> u32 {
        match comm.checked_sub(1).and_then(|k| self.comms.get(k as usize)) {
            Some(members) => members.iter().position(|&m| m == world).unwrap_or(0) as u32,
            None => world,
        }
    }

    /// The record that completes request `req` of rank `r` at `t`.
    fn complete(&mut self, r: usize, t: u64, req: u64, o: &OpenRequest) -> Result<()> {
        let lib = self.lib;
        // SAFETY: a writer of this archive.
        match *o {
            OpenRequest::Isend => self.event(r, "isend complete", |wr| unsafe { (lib.evt_mpi_isend_complete)(wr, std::ptr::null_mut(), t, req) }),
            OpenRequest::Irecv { src, comm, tag } => {
                self.event(r, "irecv", |wr| unsafe { (lib.evt_mpi_irecv)(wr, std::ptr::null_mut(), t, src, comm, tag, 0, req) })
            }
        }
    }
}

impl TimelineSink for Otf2Writer {
    fn begin(&mut self, run: &TimelineRun<'_>) -> Result<()> {
        let lib = self.lib;
        Self::remove(&self.dir, &self.name); // OTF2 does not write over an archive
        let dir = CString::new(self.dir.to_string_lossy().as_bytes()).map_err(|_| out_err(&self.shown_as, "the path holds a NUL byte"))?;
        let name = CString::new(self.name.as_bytes()).map_err(|_| out_err(&self.shown_as, "the name holds a NUL byte"))?;
        self.host_names = run.host_names.to_vec();
        self.rank_hosts = run.rank_hosts.to_vec();
        self.comms = run.comms.get(1..).unwrap_or(&[]).to_vec();
        let p = run.rank_hosts.len();
        // SAFETY: the reader protocol for writing: open, callbacks, def and event files, one
        // event writer per location; the flush callbacks struct is static.
        unsafe {
            self.archive = (lib.archive_open)(dir.as_ptr(), name.as_ptr(), 0, 1 << 20, 4 << 20, 1, 1);
            if self.archive.is_null() {
                return Err(out_err(&self.shown_as, "OTF2 cannot create the archive here"));
            }
            static FLUSH: ffi::FlushCallbacks = ffi::FlushCallbacks { pre_flush: Some(pre_flush), post_flush: None };
            self.check((lib.archive_set_flush)(self.archive, &FLUSH, std::ptr::null_mut()), "flush callbacks")?;
            self.check((lib.archive_serial)(self.archive), "collective callbacks")?;
            self.check((lib.archive_open_def_files)(self.archive), "definition files")?;
            self.check((lib.archive_open_evt_files)(self.archive), "event files")?;
            for r in 0..p {
                let w = (lib.archive_evt_writer)(self.archive, r as u64);
                if w.is_null() {
                    return Err(out_err(&self.shown_as, format!("cannot write the events of rank {r}")));
                }
                self.writers.push(w);
            }
        }
        self.open = vec![None; p];
        self.events = vec![0; p];
        self.records = (0..p).map(|_| RankRecords { at_leave: AtLeave::Nothing, posted: 0, open: Default::default(), last_received: None, last_leave: 0 }).collect();
        Ok(())
    }

    fn enter(&mut self, time: f64, rank: u32, op: u8) -> Result<()> {
        let r = rank as usize;
        self.open[r] = Some(op);
        self.events[r] += 1;
        // SAFETY: a writer of this archive.
        let code = unsafe { (self.lib.evt_enter)(self.writers[r], std::ptr::null_mut(), ticks(time), op as u32) };
        self.check(code, "enter")
    }

    fn wants_ops(&self) -> bool {
        true
    }

    fn enter_op(&mut self, time: f64, rank: u32, op: &TimelineOp<'_>) -> Result<()> {
        let r = rank as usize;
        self.enter(time, rank, region_of(op.spec) as u8)?;
        let (t, lib, comm) = (ticks(time), self.lib, op.comm);
        // A receive's "any" is resolved at its end.
        let source = |p: &Peer| match p {
            Peer::Rank(s) => Some(*s as u32),
            Peer::Any => None,
        };
        let recv_tag = |t: &TagSpec| match t {
            TagSpec::Value(v) => Some(record_tag(*v)),
            TagSpec::Any => None,
        };
        self.records[r].at_leave = AtLeave::Nothing;
        self.records[r].last_received = None;
        // SAFETY (every call below): a writer of this archive.
        match op.spec {
            OpSpec::Send { dst, bytes, tag: g, .. } | OpSpec::Sendrecv { dst, bytes, tag: g, .. } => {
                let g = record_tag(*g);
                self.event(r, "send", |wr| unsafe { (lib.evt_mpi_send)(wr, std::ptr::null_mut(), t, *dst as u32, comm, g, *bytes as u64) })?;
                if let OpSpec::Sendrecv { src, recvtag, .. } = op.spec {
                    self.records[r].at_leave = AtLeave::Recv { comm, src: source(src), tag: recv_tag(recvtag) };
                }
            }
            OpSpec::Recv { src, tag: g, .. } => self.records[r].at_leave = AtLeave::Recv { comm, src: source(src), tag: recv_tag(g) },
            OpSpec::Isend { dst, bytes, tag: g, .. } => {
                let (g, req) = (record_tag(*g), self.records[r].posted);
                self.records[r].posted += 1;
                self.records[r].open.insert(req, OpenRequest::Isend);
                self.event(r, "isend", |wr| unsafe { (lib.evt_mpi_isend)(wr, std::ptr::null_mut(), t, *dst as u32, comm, g, *bytes as u64, req) })?;
            }
            OpSpec::Irecv { src, tag: g, .. } => {
                let req = self.records[r].posted;
                self.records[r].posted += 1;
                // The source and tag of a wildcard are replaced by the matched ones at completion.
                let (s, g) = (source(src).unwrap_or(u32::MAX), recv_tag(g).unwrap_or(u32::MAX));
                self.records[r].open.insert(req, OpenRequest::Irecv { src: s, comm, tag: g });
                self.event(r, "irecv request", |wr| unsafe { (lib.evt_mpi_irecv_request)(wr, std::ptr::null_mut(), t, req) })?;
            }
            spec => {
                if let Some((kind, root, sent, recvd)) = collective_record(spec, op.size, op.me) {
                    self.event(r, "collective begin", |wr| unsafe { (lib.evt_mpi_coll_begin)(wr, std::ptr::null_mut(), t) })?;
                    self.records[r].at_leave = AtLeave::Collective { comm, kind, root, sent, recvd };
                }
            }
        }
        Ok(())
    }

    fn request_done(&mut self, time: f64, rank: u32, req: u32, matched: Option<(u32, i64)>) -> Result<()> {
        let r = rank as usize;
        let Some(mut o) = self.records.get_mut(r).and_then(|rr| rr.open.remove(&(req as u64))) else { return Ok(()) };
        if let (OpenRequest::Irecv { src, comm, tag }, Some((world, g))) = (&mut o, matched) {
            if *src == u32::MAX {
                *src = self.local_rank(*comm, world);
            }
            if *tag == u32::MAX {
                *tag = record_tag(g);
            }
        }
        self.complete(r, ticks(time), req as u64, &o)
    }

    fn request_tested(&mut self, time: f64, rank: u32, req: u32) -> Result<()> {
        let (r, lib, t) = (rank as usize, self.lib, ticks(time));
        if !self.records.get(r).is_some_and(|rr| rr.open.contains_key(&(req as u64))) {
            return Ok(());
        }
        // SAFETY: a writer of this archive.
        self.event(r, "request test", |wr| unsafe { (lib.evt_mpi_request_test)(wr, std::ptr::null_mut(), t, req as u64) })
    }

    fn leave(&mut self, time: f64, rank: u32) -> Result<()> {
        let r = rank as usize;
        if let Some(rr) = self.records.get_mut(r) {
            rr.last_leave = ticks(time);
            let (at_leave, last) = (std::mem::replace(&mut rr.at_leave, AtLeave::Nothing), rr.last_received.take());
            let (t, lib) = (ticks(time), self.lib);
            match at_leave {
                AtLeave::Nothing => {}
                AtLeave::Recv { comm, src, tag } => {
                    let s = src.unwrap_or_else(|| last.map(|(w, _)| self.local_rank(comm, w)).unwrap_or(0));
                    let g = tag.unwrap_or_else(|| last.map(|(_, g)| g).unwrap_or(0));
                    // SAFETY: a writer of this archive.
                    self.event(r, "receive", |wr| unsafe { (lib.evt_mpi_recv)(wr, std::ptr::null_mut(), t, s, comm, g, 0) })?;
                }
                AtLeave::Collective { comm, kind, root, sent, recvd } => {
                    // SAFETY: a writer of this archive.
                    self.event(r, "collective end", |wr| unsafe { (lib.evt_mpi_coll_end)(wr, std::ptr::null_mut(), t, kind, comm, root, sent, recvd) })?;
                }
            }
        }
        let Some(op) = self.open[r].take() else { return Ok(()) };
        self.events[r] += 1;
        // SAFETY: a writer of this archive.
        let code = unsafe { (self.lib.evt_leave)(self.writers[r], std::ptr::null_mut(), ticks(time), op as u32) };
        self.check(code, "leave")
    }

    fn send(&mut self, _m: &TimelineMessage) -> Result<()> {
        Ok(()) // the op writes its records (enter_op); a collective's messages have none
    }

    fn receive(&mut self, m: &TimelineMessage) -> Result<()> {
        if m.tag >= 0 {
            if let Some(rr) = self.records.get_mut(m.dst_rank as usize) {
                rr.last_received = Some((m.src_rank, record_tag(m.tag)));
            }
        }
        Ok(())
    }

    fn end(&mut self, makespan: f64) -> Result<()> {
        let lib = self.lib;
        for r in 0..self.records.len() {
            let t = self.records[r].last_leave;
            self.region_event(r, t, REGION_FINALIZE, true)?;
            self.region_event(r, t, REGION_FINALIZE, false)?;
        }
        // SAFETY: closing what `begin` opened, once.
        unsafe {
            for (r, w) in std::mem::take(&mut self.writers).into_iter().enumerate() {
                self.check((lib.archive_close_evt_writer)(self.archive, w), &format!("events of rank {r}"))?;
                let d = (lib.archive_def_writer)(self.archive, r as u64);
                if !d.is_null() {
                    (lib.archive_close_def_writer)(self.archive, d);
                }
            }
            self.check((lib.archive_close_evt_files)(self.archive), "event files")?;
            self.check((lib.archive_close_def_files)(self.archive), "definition files")?;
            self.write_definitions(makespan)?;
            let code = (lib.archive_close)(self.archive);
            self.archive = std::ptr::null_mut();
            self.check(code, "closing the archive")?;
        }
        self.finished = true;
        Ok(())
    }
}

impl Drop for Otf2Writer {
    fn drop(&mut self) {
        if !self.archive.is_null() {
            // SAFETY: an archive left open by an error: close it, then remove what it wrote.
            unsafe { (self.lib.archive_close)(self.archive) };
        }
        if !self.finished {
            Self::remove(&self.dir, &self.name);
        }
    }
}
