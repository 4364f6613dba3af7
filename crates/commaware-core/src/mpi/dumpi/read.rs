//! Reading a DUMPI trace into a [`Trace`], natively and streaming: each rank's `.bin` is read
//! record by record through a buffer; what is kept is the rank's ops, its open requests and
//! its communicators. The format is sst-dumpi's source (its `dumpi/common/io.c`, `iodefs.h`,
//! `dumpiio.c` and `funclabels.h`; file names below are those), not a document:
//!
//! * **Files.** The `.meta` text (`key=value` lines, `libdumpi/init.c`'s `create_meta_file`)
//!   gives `numprocs` and `fileprefix`; rank r's file is `<fileprefix>-<r:04>.bin` beside it.
//!   A `.bin` starts with the 64-bit magic and ends with its index: the magic again, then the
//!   offsets of the type-size table, the function addresses, the counter labels, the header,
//!   the body, the footer and the key-values (`io.c`'s `dumpi_write_index`), all big-endian.
//!   The header holds the version (3 bytes): 0.6.9 or later is read (older layouts differ).
//!   The footer holds the number of calls of each function: a function that cannot be replayed
//!   is refused from it, with its count, before any record is read.
//! * **Records.** The body starts with the CPU and wall clock offsets (u32 seconds each), then
//!   records until the end-of-stream label: a u16 function label, a u8 mask, the thread (u16)
//!   when the mask's bit 6 is set, CPU then wall start and stop times when bits 2 and 3 are set
//!   (u16 seconds past the offset, u32 nanoseconds; the seconds wrap at 65,536), counter
//!   values when bit 7 is set, then the function's fields ([`super::layout`]); statuses are
//!   present when bits 0-1 are (`iodefs.h`'s `STARTREAD`, `get_times`, `get_statuses`).
//! * **What becomes ops** mirrors `commaware trace record`'s recorder, so that the two record
//!   the same run alike: every send, receive and sendrecv (peers and roots are ranks of the
//!   call's communicator; `MPI_PROC_NULL` peers, negative here, make no op), `MPI_Ssend` and
//!   `MPI_Issend` synchronous; requests numbered per rank in posting order (DUMPI's request
//!   handles are reused once completed, so they are looked up as they stand); a wait, or a
//!   test that succeeded, on a tracked request is a `wait`; `MPI_Waitall` (or a successful
//!   `MPI_Testall`) of every open request is a `waitall`, of some of them a `wait` each;
//!   `MPI_Waitany`/`Testany`/`Waitsome`/`Testsome` wait for what completed. A persistent request
//!   (`MPI_Send_init`, `MPI_Recv_init`, …) posts its `isend` or `irecv` at each `MPI_Start`
//!   (`MPI_Startall`: each in turn), a new request each time. The collectives
//!   take their sizes from counts and the trace's type table (count × size); the v-forms give
//!   the lists of the recorder. DUMPI does not record `MPI_IN_PLACE`: a collective whose send
//!   size is 0 where the recorder would read the receive block in place is read so (counted).
//!   `MPI_Comm_split`, `MPI_Comm_dup` and `MPI_Cart_create` (a split keeping the first ranks,
//!   in order) make communicators; calls on `MPI_COMM_SELF` exchange nothing and make no op.
//! * **Compute** is the time between the end of one op's call and the start of the next, from
//!   `MPI_Init`'s return to `MPI_Finalize`, the calls that make no op included (queries, type
//!   and group calls, probes, file I/O, failed tests): `compute {seconds}`, or `{flops}` at
//!   [`DumpiOptions::traced_speed`].
//! * **What is refused** (exit 2, naming the function and its number of calls): cancellation,
//!   one-sided communication, `MPI_Alltoallw`, intercommunicators, dynamic processes, and
//!   communicators made from groups or sub-grids.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::layout::{LAYOUTS, N_LABELS};
use crate::error::{Error, Result};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec, MAX_RANKS};

/// `DUMPI_HEAD_MAGIC` (`io.c`): the first and the index's first 8 bytes.
const HEAD_MAGIC: u64 = 0xffaa_dd44_554d_5049;
/// `DUMPI_FOOT_MAGIC` (`io.c`): the footer's first 8 bytes.
const FOOT_MAGIC: u64 = 0xf007_fee7;
/// The label after the last record (`DUMPI_END_OF_STREAM`).
const END_OF_STREAM: u16 = N_LABELS as u16;
/// The footer counts labels 0 to `DUMPI_ALL_FUNCTIONS` (`io.c`'s `dumpi_write_footer`).
const FOOTER_COUNTS: usize = N_LABELS - 2;
/// Communicator handles (`constants.h`'s `dumpi_native_comms`).
const COMM_NULL: u16 = 1;
const COMM_WORLD: u16 = 2;
const COMM_SELF: u16 = 3;
/// Datatype handles below this are the error and null types (size 0).
const DATATYPE_NULL: i64 = 1;
/// Record mask bits (`settings.h`).
const MASK_STATUS: u8 = 0b11;
const MASK_CPU: u8 = 1 << 2;
const MASK_WALL: u8 = 1 << 3;
const MASK_THREAD: u8 = 1 << 6;
const MASK_PERF: u8 = 1 << 7;

/// Functions that cannot be replayed: refused with their count.
const REFUSED: [&str; 24] = [
    "MPI_Cancel", "MPI_Alltoallw", "MPI_Comm_create", "MPI_Cart_sub", "MPI_Graph_create",
    "MPI_Intercomm_create", "MPI_Intercomm_merge", "MPI_Comm_spawn", "MPI_Comm_spawn_multiple",
    "MPI_Comm_connect", "MPI_Comm_accept", "MPI_Comm_join", "MPI_Win_create", "MPI_Win_fence", "MPI_Win_start",
    "MPI_Win_complete", "MPI_Win_post", "MPI_Win_wait", "MPI_Win_test", "MPI_Win_lock", "MPI_Win_unlock",
    "MPI_Put", "MPI_Get", "MPI_Accumulate",
];

/// How to read: `traced_speed` (flops/s of the traced machine) turns compute time into flops.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpiOptions {
    pub traced_speed: Option<f64>,
}

impl DumpiOptions {
    pub fn new(traced_speed: Option<f64>) -> Result<DumpiOptions> {
        OpSpec::check_traced_speed(traced_speed)?;
        Ok(DumpiOptions { traced_speed })
    }
}

/// What the reading counted, for the caller's report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DumpiStats {
    /// Records read (every MPI call DUMPI wrote).
    pub calls: u64,
    /// Calls that made no op, their time counted as compute (queries, types, groups, probes,
    /// file I/O, failed tests, waits on untracked requests).
    pub compute_calls: u64,
    /// Point-to-point calls with an `MPI_PROC_NULL` peer.
    pub proc_null_calls: u64,
    /// Calls on `MPI_COMM_SELF`.
    pub self_calls: u64,
    /// Collectives read as made with `MPI_IN_PLACE` (a zero send size beside a receive block).
    pub in_place_collectives: u64,
}

/// One field of a record layout ([`super::layout`]).
#[derive(Debug, Clone, Copy)]
struct Field {
    name: &'static str,
    code: u8,
    if_root: bool,
}

/// The layouts by label; `None` for a function without a reader.
fn layouts() -> Vec<Option<Vec<Field>>> {
    LAYOUTS
        .iter()
        .map(|(_, spec)| {
            (*spec != "!").then(|| {
                spec.split_whitespace()
                    .map(|f| {
                        let (if_root, f) = f.strip_prefix('?').map_or((false, f), |rest| (true, rest));
                        let (name, code) = f.split_once(':').expect("layout fields are name:code");
                        Field { name, code: code.as_bytes()[0], if_root }
                    })
                    .collect()
            })
        })
        .collect()
}

/// A field's value in the record being read: an integer, or a range of `Record::ints`.
#[derive(Debug, Clone, Copy)]
enum Val {
    Absent,
    Int(i64),
    Arr(usize, usize),
}

/// The record being read: its label, times (s) and field values.
struct Record {
    label: usize,
    start: f64,
    stop: f64,
    vals: Vec<Val>,
    ints: Vec<i32>,
}

/// A view of a record with its layout, to read fields by name.
struct Call<'a> {
    name: &'static str,
    fields: &'a [Field],
    rec: &'a Record,
}

impl Call<'_> {
    fn val(&self, name: &str) -> Val {
        self.fields.iter().position(|f| f.name == name).map_or(Val::Absent, |i| self.rec.vals[i])
    }

    fn int(&self, name: &str) -> Result<i64> {
        match self.val(name) {
            Val::Int(v) => Ok(v),
            _ => Err(Error::trace(format!("{}.{name}", self.name), "the record has no such value")),
        }
    }

    fn arr(&self, name: &str) -> Result<&[i32]> {
        match self.val(name) {
            Val::Arr(a, n) => Ok(&self.rec.ints[a..a + n]),
            _ => Err(Error::trace(format!("{}.{name}", self.name), "the record has no such list")),
        }
    }
}

/// A rank's `.bin`, read big-endian through a buffer.
struct Bin {
    r: BufReader<File>,
    pos: u64,
    len: u64,
}

impl Bin {
    fn open(path: &Path) -> Result<Bin> {
        let f = File::open(path).map_err(|e| Error::trace("", format!("cannot open: {e}")))?;
        let len = f.metadata().map_err(|e| Error::trace("", format!("cannot read: {e}")))?.len();
        Ok(Bin { r: BufReader::with_capacity(1 << 16, f), pos: 0, len })
    }

    fn seek(&mut self, to: u64) -> Result<()> {
        if to > self.len {
            return Err(Error::trace("index", format!("offset {to} is past the end of the file ({} bytes)", self.len)));
        }
        self.r.seek(SeekFrom::Start(to)).map_err(|e| Error::trace("", format!("cannot seek: {e}")))?;
        self.pos = to;
        Ok(())
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.r.read_exact(&mut b).map_err(|_| Error::trace(format!("byte {}", self.pos), "the file ends inside a record (truncated?)"))?;
        self.pos += N as u64;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.bytes()?))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.bytes()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.bytes()?))
    }

    /// A u32 length of items of `size` bytes, checked against what the file has left.
    fn length(&mut self, size: u64, what: &str) -> Result<usize> {
        let n = self.u32()? as u64;
        if n * size.max(1) > self.len - self.pos {
            return Err(Error::trace(format!("byte {}", self.pos), format!("{what}: a length of {n} runs past the end of the file")));
        }
        Ok(n as usize)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        if n > self.len - self.pos {
            return Err(Error::trace(format!("byte {}", self.pos), "the file ends inside a record (truncated?)"));
        }
        self.r.seek_relative(n as i64).map_err(|e| Error::trace("", format!("cannot read: {e}")))?;
        self.pos += n;
        Ok(())
    }

    /// A `c` field: a u32 length and that many bytes.
    fn skip_chars(&mut self) -> Result<()> {
        let n = self.length(1, "characters")?;
        self.skip(n as u64)
    }

    /// A `C` field: a u32 count and that many `c`.
    fn skip_strings(&mut self) -> Result<()> {
        let n = self.length(4, "strings")?;
        for _ in 0..n {
            self.skip_chars()?;
        }
        Ok(())
    }
}

/// The parts of a rank's file found from its index.
struct Index {
    sizes: Vec<f64>,
    counters: usize,
    body: u64,
    calls: Vec<u32>,
}

fn read_index(bin: &mut Bin) -> Result<Index> {
    if bin.len < 72 || bin.u64()? != HEAD_MAGIC {
        return Err(Error::trace("", "not a DUMPI trace file (no DUMPI magic at its start)"));
    }
    bin.seek(bin.len - 64)?;
    if bin.u64()? != HEAD_MAGIC {
        return Err(Error::trace("index", "no index at the end of the file: a trace of DUMPI before 0.6.6, or one cut short (the run did not reach MPI_Finalize?)"));
    }
    let (sizelbl, _addrlbl, perflbl, header, body, footer) = (bin.u64()?, bin.u64()?, bin.u64()?, bin.u64()?, bin.u64()?, bin.u64()?);
    if header == 0 || body == 0 || footer == 0 {
        return Err(Error::trace("index", "the header, body or footer offset is missing"));
    }
    bin.seek(header)?;
    let version = [bin.u8()?, bin.u8()?, bin.u8()?];
    if (version[0], version[1], version[2]) < (0, 6, 9) {
        return Err(Error::trace("header", format!("DUMPI version {}.{}.{}: versions before 0.6.9 wrote other layouts and are not read", version[0], version[1], version[2])));
    }
    let mut sizes = Vec::new();
    if sizelbl > 0 {
        bin.seek(sizelbl)?;
        let n = bin.length(4, "type sizes")?;
        for _ in 0..n {
            sizes.push(bin.u32()? as i32 as f64);
        }
    }
    let mut counters = 0;
    if perflbl > 0 {
        bin.seek(perflbl)?;
        counters = bin.u32()? as usize;
    }
    bin.seek(footer)?;
    if bin.u64()? != FOOT_MAGIC {
        return Err(Error::trace("footer", "the footer's magic is wrong"));
    }
    let mut calls = Vec::with_capacity(FOOTER_COUNTS);
    for _ in 0..FOOTER_COUNTS {
        calls.push(bin.u32()?);
    }
    Ok(Index { sizes, counters, body, calls })
}

/// Clock of a rank: seconds past the offset, unwrapped (they are stored in 16 bits).
#[derive(Default)]
struct Clock {
    offset: f64,
    last: u16,
    wraps: u64,
}

impl Clock {
    fn at(&mut self, sec: u16, nsec: u32) -> f64 {
        if sec < self.last && self.last - sec > 1 << 15 {
            self.wraps += 1;
        }
        self.last = sec;
        self.offset + (self.wraps as f64) * 65536.0 + sec as f64 + nsec as f64 * 1e-9
    }
}

/// A communicator this rank holds: its op id.
type CommId = usize;

/// The state of the rank being read.
struct RankOps<'a> {
    ops: Vec<OpSpec>,
    sizes: &'a [f64],
    comms: HashMap<u16, CommId>,
    next_comm: CommId,
    /// DUMPI request handle → our request number (`None`: a request that made no op).
    reqs: HashMap<u32, Option<usize>>,
    /// Persistent request handle → the op each `MPI_Start` of it posts (`None`: a null peer).
    persistent: HashMap<u32, Option<OpSpec>>,
    next_req: usize,
    live: usize,
    /// When the last op's call ended (from MPI_Init's return); `None` outside MPI.
    mark: Option<f64>,
    speed: Option<f64>,
    stats: DumpiStats,
}

impl RankOps<'_> {
    fn bytes(&self, call: &Call, count: &str, dtype: &str) -> Result<f64> {
        let n = call.int(count)?;
        let t = call.int(dtype)?;
        self.block(call, n, t, count)
    }

    fn block(&self, call: &Call, n: i64, t: i64, field: &str) -> Result<f64> {
        if n < 0 {
            return Err(Error::trace(format!("{}.{field}", call.name), format!("negative count {n}")));
        }
        Ok(n as f64 * self.type_size(call, t)?)
    }

    fn type_size(&self, call: &Call, t: i64) -> Result<f64> {
        if t <= DATATYPE_NULL {
            return Ok(0.0);
        }
        match self.sizes.get(t as usize) {
            Some(&s) if s >= 0.0 => Ok(s),
            _ => Err(Error::trace(format!("{}", call.name), format!("datatype {t} has no size in the trace's type table ({} types)", self.sizes.len()))),
        }
    }

    fn list(&self, call: &Call, counts: &[i32], t: i64, field: &str) -> Result<Vec<f64>> {
        let s = self.type_size(call, t)?;
        counts
            .iter()
            .map(|&c| if c < 0 { Err(Error::trace(format!("{}.{field}", call.name), format!("negative count {c}"))) } else { Ok(c as f64 * s) })
            .collect()
    }

    /// The op id of communicator handle `h`; `None` for `MPI_COMM_SELF` (counted).
    fn comm(&mut self, call: &Call, field: &str) -> Result<Option<CommId>> {
        let h = call.int(field)? as u16;
        if h == COMM_SELF {
            self.stats.self_calls += 1;
            return Ok(None);
        }
        match self.comms.get(&h) {
            Some(&c) => Ok(Some(c)),
            None => Err(Error::trace(format!("{}.{field}", call.name), format!("communicator {h} was not made by a call this reader replays (only MPI_Comm_split, MPI_Comm_dup and MPI_Cart_create)"))),
        }
    }

    /// The compute burst from the last op's call to `now`.
    fn flush(&mut self, now: f64) {
        if let Some(mark) = self.mark {
            if now > mark {
                self.ops.push(OpSpec::traced_compute(now - mark, self.speed));
            }
        }
    }

    fn op(&mut self, call: &Call, op: OpSpec) {
        self.flush(call.rec.start);
        self.ops.push(op);
        self.mark = Some(call.rec.stop);
    }

    fn post(&mut self, call: &Call, op: Option<OpSpec>) -> Result<()> {
        let h = call.int("request")? as u32;
        match op {
            Some(op) => {
                self.op(call, op);
                self.reqs.insert(h, Some(self.next_req));
                self.next_req += 1;
                self.live += 1;
            }
            None => {
                self.reqs.insert(h, None);
            }
        }
        Ok(())
    }

    /// Our number of request handle `h`, forgotten when `done`.
    fn request(&mut self, h: i32, done: bool) -> Option<usize> {
        let n = if done { self.reqs.remove(&(h as u32)) } else { self.reqs.get(&(h as u32)).copied() };
        let n = n.flatten();
        if done && n.is_some() {
            self.live -= 1;
        }
        n
    }

    /// Requests `handles[i]` for i in `done` completed: a wait for each tracked one.
    fn waits(&mut self, call: &Call, handles: &[i32], done: impl Iterator<Item = usize>) -> bool {
        let mut any = false;
        for i in done {
            if let Some(&h) = handles.get(i) {
                if let Some(n) = self.request(h, true) {
                    self.op(call, OpSpec::Wait { req: n });
                    any = true;
                }
            }
        }
        any
    }

    /// Every request of `handles` completed: a `waitall` when they are all the open ones.
    fn all(&mut self, call: &Call, handles: &[i32]) -> bool {
        let tracked: Vec<usize> = handles.iter().filter_map(|&h| self.request(h, false)).collect();
        if tracked.is_empty() {
            return false;
        }
        if tracked.len() == self.live {
            for &h in handles {
                self.request(h, true);
            }
            self.op(call, OpSpec::Waitall);
            return true;
        }
        self.waits(call, handles, 0..handles.len())
    }

    fn peer(v: i64) -> Option<Peer> {
        match v {
            -1 => Some(Peer::Any),
            v if v >= 0 => Some(Peer::Rank(v as usize)),
            _ => None,
        }
    }

    fn tag(v: i64) -> TagSpec {
        if v == -1 { TagSpec::Any } else { TagSpec::Value(v) }
    }

    /// The op of one call; whether it made one.
    fn call(&mut self, call: &Call) -> Result<bool> {
        let sync = matches!(call.name, "MPI_Ssend" | "MPI_Issend");
        match call.name {
            "MPI_Init" | "MPI_Init_thread" => {
                self.mark = Some(call.rec.stop);
                return Ok(true);
            }
            "MPI_Finalize" => {
                self.flush(call.rec.start);
                self.mark = None;
                return Ok(true);
            }
            "MPI_Send" | "MPI_Bsend" | "MPI_Ssend" | "MPI_Rsend" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let dst = call.int("dest")?;
                if dst < 0 {
                    self.stats.proc_null_calls += 1;
                    return Ok(false);
                }
                let bytes = self.bytes(call, "count", "datatype")?;
                self.op(call, OpSpec::Send { dst: dst as usize, bytes, tag: call.int("tag")?, sync, comm });
            }
            "MPI_Isend" | "MPI_Ibsend" | "MPI_Issend" | "MPI_Irsend" => {
                let dst = call.int("dest")?;
                let comm = self.comm(call, "comm")?;
                let op = match comm {
                    Some(comm) if dst >= 0 => Some(OpSpec::Isend { dst: dst as usize, bytes: self.bytes(call, "count", "datatype")?, tag: call.int("tag")?, sync, comm }),
                    _ => {
                        self.stats.proc_null_calls += u64::from(comm.is_some());
                        None
                    }
                };
                let made = op.is_some();
                self.post(call, op)?;
                return Ok(made);
            }
            "MPI_Recv" | "MPI_Irecv" => {
                let comm = self.comm(call, "comm")?;
                let src = Self::peer(call.int("source")?);
                let op = match (comm, src) {
                    (Some(comm), Some(src)) => {
                        let tag = Self::tag(call.int("tag")?);
                        Some(if call.name == "MPI_Recv" { OpSpec::Recv { src, tag, comm } } else { OpSpec::Irecv { src, tag, comm } })
                    }
                    (c, _) => {
                        self.stats.proc_null_calls += u64::from(c.is_some());
                        None
                    }
                };
                let made = op.is_some();
                if call.name == "MPI_Irecv" {
                    self.post(call, op)?;
                } else if let Some(op) = op {
                    self.op(call, op);
                }
                return Ok(made);
            }
            "MPI_Sendrecv" | "MPI_Sendrecv_replace" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let bytes = if call.name == "MPI_Sendrecv" { self.bytes(call, "sendcount", "sendtype")? } else { self.bytes(call, "count", "datatype")? };
                let (dst, tag) = (call.int("dest")?, call.int("sendtag")?);
                let (src, recvtag) = (Self::peer(call.int("source")?), Self::tag(call.int("recvtag")?));
                let op = match (dst >= 0, src) {
                    (false, None) => {
                        self.stats.proc_null_calls += 1;
                        return Ok(false);
                    }
                    (true, None) => OpSpec::Send { dst: dst as usize, bytes, tag, sync: false, comm },
                    (false, Some(src)) => OpSpec::Recv { src, tag: recvtag, comm },
                    (true, Some(src)) => OpSpec::Sendrecv { dst: dst as usize, bytes, tag, src, recvtag, comm },
                };
                self.op(call, op);
            }
            "MPI_Wait" => {
                let h = call.int("request")? as i32;
                return Ok(self.waits(call, &[h], 0..1));
            }
            "MPI_Test" => {
                let h = call.int("request")? as i32;
                return Ok(call.int("flag")? != 0 && self.waits(call, &[h], 0..1));
            }
            "MPI_Waitall" | "MPI_Testall" => {
                if call.name == "MPI_Testall" && call.int("flag")? == 0 {
                    return Ok(false);
                }
                let handles = call.arr("requests")?.to_vec();
                return Ok(self.all(call, &handles));
            }
            "MPI_Waitany" | "MPI_Testany" => {
                if call.name == "MPI_Testany" && call.int("flag")? == 0 {
                    return Ok(false);
                }
                let handles = call.arr("requests")?.to_vec();
                let index = call.int("index")?;
                return Ok(index >= 0 && self.waits(call, &handles, std::iter::once(index as usize)));
            }
            "MPI_Waitsome" | "MPI_Testsome" => {
                let handles = call.arr("requests")?.to_vec();
                let outcount = call.int("outcount")?;
                let indices: Vec<usize> = call.arr("indices")?.iter().take(outcount.max(0) as usize).filter(|&&i| i >= 0).map(|&i| i as usize).collect();
                return Ok(self.waits(call, &handles, indices.into_iter()));
            }
            "MPI_Request_free" => {
                let h = call.int("request")? as i32;
                self.request(h, true);
                self.persistent.remove(&(h as u32));
                return Ok(false);
            }
            "MPI_Send_init" | "MPI_Bsend_init" | "MPI_Ssend_init" | "MPI_Rsend_init" | "MPI_Recv_init" => {
                // A persistent request: each MPI_Start of it posts this op as a new request.
                let comm = self.comm(call, "comm")?;
                let op = if call.name == "MPI_Recv_init" {
                    match (comm, Self::peer(call.int("source")?)) {
                        (Some(comm), Some(src)) => Some(OpSpec::Irecv { src, tag: Self::tag(call.int("tag")?), comm }),
                        _ => None,
                    }
                } else {
                    let dst = call.int("dest")?;
                    match comm {
                        Some(comm) if dst >= 0 => {
                            let sync = call.name == "MPI_Ssend_init";
                            Some(OpSpec::Isend { dst: dst as usize, bytes: self.bytes(call, "count", "datatype")?, tag: call.int("tag")?, sync, comm })
                        }
                        _ => None,
                    }
                };
                self.stats.proc_null_calls += u64::from(op.is_none() && comm.is_some());
                self.persistent.insert(call.int("request")? as u32, op);
                return Ok(false);
            }
            "MPI_Start" | "MPI_Startall" => {
                let handles = if call.name == "MPI_Start" { vec![call.int("request")? as i32] } else { call.arr("requests")?.to_vec() };
                let mut made = false;
                for h in handles {
                    let Some(template) = self.persistent.get(&(h as u32)) else {
                        return Err(Error::trace(call.name, format!("request {h} was not made by MPI_Send_init, MPI_Recv_init or their kin")));
                    };
                    match template.clone() {
                        Some(op) => {
                            self.op(call, op);
                            self.reqs.insert(h as u32, Some(self.next_req));
                            self.next_req += 1;
                            self.live += 1;
                            made = true;
                        }
                        None => {
                            self.reqs.insert(h as u32, None);
                        }
                    }
                }
                return Ok(made);
            }
            "MPI_Barrier" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                self.op(call, OpSpec::Barrier { comm });
            }
            "MPI_Bcast" | "MPI_Reduce" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let (root, bytes) = (self.root(call)?, self.bytes(call, "count", "datatype")?);
                self.op(call, if call.name == "MPI_Bcast" { OpSpec::Bcast { root, bytes, comm } } else { OpSpec::Reduce { root, bytes, comm } });
            }
            "MPI_Allreduce" | "MPI_Scan" | "MPI_Exscan" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let bytes = self.bytes(call, "count", "datatype")?;
                self.op(call, match call.name {
                    "MPI_Allreduce" => OpSpec::Allreduce { bytes, comm },
                    "MPI_Scan" => OpSpec::Scan { bytes, comm },
                    _ => OpSpec::Exscan { bytes, comm },
                });
            }
            "MPI_Gather" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let root = self.root(call)?;
                let send = self.bytes(call, "sendcount", "sendtype")?;
                let bytes = if call.int("commrank")? == root as i64 { self.own(send, self.bytes(call, "recvcount", "recvtype")?) } else { send };
                self.op(call, OpSpec::Gather { root, bytes, comm });
            }
            "MPI_Scatter" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let root = self.root(call)?;
                let bytes = if call.int("commrank")? == root as i64 { self.bytes(call, "sendcount", "sendtype")? } else { self.bytes(call, "recvcount", "recvtype")? };
                self.op(call, OpSpec::Scatter { root, bytes, comm });
            }
            "MPI_Gatherv" | "MPI_Scatterv" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let root = self.root(call)?;
                let (me, n) = (call.int("commrank")?, call.int("commsize")?);
                if me < 0 || n <= 0 || me >= n {
                    return Err(Error::trace(format!("{}.commrank", call.name), format!("rank {me} is not in a communicator of {n}")));
                }
                let gather = call.name == "MPI_Gatherv";
                let bytes = if me == root as i64 {
                    if gather {
                        let mut list = self.list(call, call.arr("recvcounts")?, call.int("recvtype")?, "recvcounts")?;
                        let send = self.bytes(call, "sendcount", "sendtype")?;
                        if let Some(own) = list.get_mut(me as usize) {
                            *own = self.own(send, *own);
                        }
                        list
                    } else {
                        self.list(call, call.arr("sendcounts")?, call.int("sendtype")?, "sendcounts")?
                    }
                } else {
                    let mut list = vec![0.0; n as usize];
                    list[me as usize] = if gather { self.bytes(call, "sendcount", "sendtype")? } else { self.bytes(call, "recvcount", "recvtype")? };
                    list
                };
                self.op(call, if gather { OpSpec::Gatherv { root, bytes, comm } } else { OpSpec::Scatterv { root, bytes, comm } });
            }
            "MPI_Allgather" | "MPI_Alltoall" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let bytes = self.own(self.bytes(call, "sendcount", "sendtype")?, self.bytes(call, "recvcount", "recvtype")?);
                self.op(call, if call.name == "MPI_Allgather" { OpSpec::Allgather { bytes, comm } } else { OpSpec::Alltoall { bytes, comm } });
            }
            "MPI_Allgatherv" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let bytes = self.list(call, call.arr("recvcounts")?, call.int("recvtype")?, "recvcounts")?;
                self.op(call, OpSpec::Allgatherv { bytes, comm });
            }
            "MPI_Alltoallv" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let send = self.list(call, call.arr("sendcounts")?, call.int("sendtype")?, "sendcounts")?;
                let recv = self.list(call, call.arr("recvcounts")?, call.int("recvtype")?, "recvcounts")?;
                let in_place = self.type_size(call, call.int("sendtype")?)? == 0.0 && recv.iter().any(|&b| b > 0.0);
                self.stats.in_place_collectives += u64::from(in_place);
                self.op(call, OpSpec::Alltoallv { bytes: if in_place { recv } else { send }, comm });
            }
            "MPI_Reduce_scatter" => {
                let Some(comm) = self.comm(call, "comm")? else { return Ok(false) };
                let bytes = self.list(call, call.arr("recvcounts")?, call.int("datatype")?, "recvcounts")?;
                self.op(call, OpSpec::ReduceScatter { bytes, comm });
            }
            "MPI_Comm_split" | "MPI_Comm_dup" | "MPI_Cart_create" => {
                let Some(comm) = self.comm(call, "oldcomm")? else {
                    return Err(Error::trace(format!("{}", call.name), "a communicator made from MPI_COMM_SELF is not replayed"));
                };
                let newcomm = call.int("newcomm")? as u16;
                let op = match call.name {
                    "MPI_Comm_split" => {
                        let color = call.int("color")?;
                        OpSpec::CommSplit { comm, color: if color < 0 { -1 } else { color }, key: call.int("key")? }
                    }
                    "MPI_Comm_dup" => OpSpec::CommDup { comm },
                    _ => OpSpec::CommSplit { comm, color: if newcomm == COMM_NULL { -1 } else { 0 }, key: 0 },
                };
                self.op(call, op);
                if newcomm != COMM_NULL {
                    self.comms.insert(newcomm, self.next_comm);
                    self.next_comm += 1;
                }
            }
            "MPI_Comm_free" => {
                let h = call.int("comm")? as u16;
                if h != COMM_WORLD {
                    self.comms.remove(&h);
                }
                return Ok(false);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn root(&self, call: &Call) -> Result<usize> {
        let root = call.int("root")?;
        if root < 0 {
            return Err(Error::trace(format!("{}.root", call.name), format!("root {root} is not a rank (intercommunicators are not replayed)")));
        }
        Ok(root as usize)
    }

    /// A rank's own block of a gathering collective: what it sends, or its receive block when
    /// it sends nothing (read as `MPI_IN_PLACE`, counted).
    fn own(&mut self, send: f64, recv: f64) -> f64 {
        if send == 0.0 && recv > 0.0 {
            self.stats.in_place_collectives += 1;
            recv
        } else {
            send
        }
    }
}

/// The `.meta` file's rank count and the rank files beside it.
fn rank_files(meta: &Path) -> Result<Vec<PathBuf>> {
    let f = File::open(meta).map_err(|e| Error::trace("", format!("cannot open: {e}")))?;
    let (mut n, mut prefix) = (None, None);
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|_| Error::trace(format!("line {}", i + 1), "not UTF-8 text: not a DUMPI .meta file"))?;
        match line.split_once('=') {
            Some(("numprocs", v)) => n = Some(v.trim().parse::<usize>().map_err(|_| Error::trace(format!("line {}: numprocs", i + 1), format!("{v:?} is not a rank count")))?),
            Some(("fileprefix", v)) => prefix = Some(v.trim().to_owned()),
            _ => {}
        }
    }
    let n = n.ok_or_else(|| Error::trace("numprocs", "missing: not a DUMPI .meta file"))?;
    let prefix = prefix.ok_or_else(|| Error::trace("fileprefix", "missing: not a DUMPI .meta file"))?;
    if n == 0 || n > MAX_RANKS {
        return Err(Error::trace("numprocs", format!("{n} ranks: must be 1 to {MAX_RANKS}")));
    }
    // The prefix is the recording's path; the files are looked for beside the .meta.
    let base = Path::new(&prefix).file_name().ok_or_else(|| Error::trace("fileprefix", format!("{prefix:?} names no file")))?;
    let dir = meta.parent().unwrap_or(Path::new("."));
    Ok((0..n).map(|r| dir.join(format!("{}-{r:04}.bin", base.to_string_lossy()))).collect())
}

/// Read the DUMPI trace whose `.meta` file is `meta`.
pub fn read(meta: &Path, options: DumpiOptions) -> Result<(Trace, DumpiStats)> {
    let (spec, stats) = read_spec(meta, options)?;
    Ok((Trace::from_spec(spec)?, stats))
}

/// The trace spec of the DUMPI trace at `meta`, before validation. An error about a rank's
/// file names that file.
pub fn read_spec(meta: &Path, options: DumpiOptions) -> Result<(TraceSpec, DumpiStats)> {
    let meta_name = meta.display().to_string();
    let files = rank_files(meta).map_err(|e| e.in_source(&meta_name))?;
    let layouts = layouts();
    // Refuse what cannot be replayed, from every rank's footer, before reading any record.
    let mut refused: Vec<(usize, u64, usize)> = Vec::new();
    for (r, path) in files.iter().enumerate() {
        let name = path.display().to_string();
        let mut bin = Bin::open(path).map_err(|e| e.in_source(&name))?;
        let index = read_index(&mut bin).map_err(|e| e.in_source(&name))?;
        // The last count is DUMPI_ALL_FUNCTIONS: the total.
        for (label, &n) in index.calls[..FOOTER_COUNTS - 1].iter().enumerate() {
            let fname = LAYOUTS[label].0;
            if n > 0 && (REFUSED.contains(&fname) || layouts[label].is_none()) {
                match refused.iter_mut().find(|(l, _, _)| *l == label) {
                    Some(e) => e.1 += n as u64,
                    None => refused.push((label, n as u64, r)),
                }
            }
        }
    }
    if let Some(&(label, n, r)) = refused.first() {
        let more: Vec<String> = refused[1..].iter().map(|(l, n, _)| format!("{} ({n})", LAYOUTS[*l].0)).collect();
        let also = if more.is_empty() { String::new() } else { format!("; also {}", more.join(", ")) };
        return Err(Error::trace(LAYOUTS[label].0, format!("{n} calls (the first in rank {r}'s file) cannot be replayed{also}")).in_source(&meta_name));
    }
    // The ranks' files are independent: read on every core, a block of ranks each, and
    // gathered in rank order (the result does not depend on the number of threads).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len()).max(1);
    let block = files.len().div_ceil(threads);
    let read_block = |paths: &[PathBuf]| -> Vec<Result<(Vec<OpSpec>, DumpiStats)>> {
        paths.iter().map(|path| read_rank(path, &layouts, options).map_err(|e| e.in_source(&path.display().to_string()))).collect()
    };
    let results: Vec<Result<(Vec<OpSpec>, DumpiStats)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files.chunks(block).map(|paths| scope.spawn(move || read_block(paths))).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|_| vec![Err(Error::trace("", "a reading thread failed"))])).collect()
    });
    let mut stats = DumpiStats::default();
    let mut ranks = Vec::with_capacity(files.len());
    for result in results {
        let (ops, s) = result?;
        stats.calls += s.calls;
        stats.compute_calls += s.compute_calls;
        stats.proc_null_calls += s.proc_null_calls;
        stats.self_calls += s.self_calls;
        stats.in_place_collectives += s.in_place_collectives;
        ranks.push(ops);
    }
    Ok((TraceSpec { ranks, placement: None }, stats))
}

fn read_rank(path: &Path, layouts: &[Option<Vec<Field>>], options: DumpiOptions) -> Result<(Vec<OpSpec>, DumpiStats)> {
    let mut bin = Bin::open(path)?;
    let index = read_index(&mut bin)?;
    bin.seek(index.body)?;
    let _cpu_offset = bin.u32()?;
    let mut clock = Clock { offset: bin.u32()? as f64, ..Clock::default() };
    let mut cpu_clock = Clock::default();
    let mut st = RankOps {
        ops: Vec::new(),
        sizes: &index.sizes,
        comms: HashMap::from([(COMM_WORLD, 0)]),
        next_comm: 1,
        reqs: HashMap::new(),
        persistent: HashMap::new(),
        next_req: 0,
        live: 0,
        mark: None,
        speed: options.traced_speed,
        stats: DumpiStats::default(),
    };
    let mut rec = Record { label: 0, start: 0.0, stop: 0.0, vals: Vec::new(), ints: Vec::new() };
    loop {
        let at = bin.pos;
        let label = bin.u16()?;
        if label == END_OF_STREAM {
            break;
        }
        let fields = layouts.get(label as usize).and_then(|l| l.as_deref()).ok_or_else(|| Error::trace(format!("byte {at}"), format!("unknown function label {label}")))?;
        rec.label = label as usize;
        read_record(&mut bin, &index, fields, &mut rec, &mut clock, &mut cpu_clock).map_err(|mut e| {
            e.field = format!("{} record at byte {at}: {}", LAYOUTS[label as usize].0, e.field);
            e
        })?;
        st.stats.calls += 1;
        let call = Call { name: LAYOUTS[rec.label].0, fields, rec: &rec };
        let made = st.call(&call).map_err(|mut e| {
            e.field = format!("{} (record at byte {at})", e.field);
            e
        })?;
        st.stats.compute_calls += u64::from(!made);
    }
    Ok((st.ops, st.stats))
}

/// One record after its label: header, then fields into `rec`.
fn read_record(bin: &mut Bin, index: &Index, fields: &[Field], rec: &mut Record, clock: &mut Clock, cpu: &mut Clock) -> Result<()> {
    let mask = bin.u8()?;
    if mask & MASK_THREAD != 0 {
        bin.u16()?;
    }
    let (mut start, mut stop) = (0.0, 0.0);
    if mask & MASK_CPU != 0 {
        let (s0, n0, s1, n1) = (bin.u16()?, bin.u32()?, bin.u16()?, bin.u32()?);
        if mask & MASK_WALL == 0 {
            (start, stop) = (cpu.at(s0, n0), cpu.at(s1, n1));
        }
    }
    if mask & MASK_WALL != 0 {
        let (s0, n0, s1, n1) = (bin.u16()?, bin.u32()?, bin.u16()?, bin.u32()?);
        (start, stop) = (clock.at(s0, n0), clock.at(s1, n1));
    }
    if mask & MASK_PERF != 0 {
        bin.u8()?;
        bin.skip(16 * index.counters as u64)?;
    }
    rec.start = start;
    rec.stop = stop;
    rec.vals.clear();
    rec.ints.clear();
    for f in fields {
        if f.if_root {
            let me = fields.iter().position(|g| g.name == "commrank" || g.name == "oldcommrank");
            let root = fields.iter().position(|g| g.name == "root");
            let same = match (me.map(|i| rec.vals[i]), root.map(|i| rec.vals[i])) {
                (Some(Val::Int(a)), Some(Val::Int(b))) => a == b,
                _ => false,
            };
            if !same {
                rec.vals.push(Val::Absent);
                continue;
            }
        }
        let v = match f.code {
            b'b' => Val::Int(bin.u8()? as i64),
            b'h' => Val::Int(bin.u16()? as i64),
            b'i' => Val::Int(bin.u32()? as i32 as i64),
            b'l' => Val::Int(bin.u64()? as i64),
            b'I' | b'H' => {
                let wide = f.code == b'I';
                let n = bin.length(if wide { 4 } else { 2 }, f.name)?;
                let a = rec.ints.len();
                for _ in 0..n {
                    rec.ints.push(if wide { bin.u32()? as i32 } else { i32::from(bin.u16()?) });
                }
                Val::Arr(a, n)
            }
            b'B' => {
                let n = bin.length(1, f.name)?;
                bin.skip(n as u64)?;
                Val::Absent
            }
            b'c' => {
                bin.skip_chars()?;
                Val::Absent
            }
            b'C' => {
                bin.skip_strings()?;
                Val::Absent
            }
            b'D' => {
                let n = bin.length(4, f.name)?;
                for _ in 0..n {
                    bin.skip_strings()?;
                }
                Val::Absent
            }
            b'J' => {
                let n = bin.length(4, f.name)?;
                for _ in 0..n {
                    let m = bin.length(4, f.name)?;
                    bin.skip(4 * m as u64)?;
                }
                Val::Absent
            }
            b's' => {
                if mask & MASK_STATUS != 0 {
                    let n = bin.length(14, f.name)?;
                    bin.skip(14 * n as u64)?;
                }
                Val::Absent
            }
            c => unreachable!("layout code {}", c as char),
        };
        rec.vals.push(v);
    }
    Ok(())
}
