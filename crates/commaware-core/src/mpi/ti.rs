//! SimGrid's time-independent (TI) traces (the text `smpirun -trace-ti` writes and
//! SimGrid's offline replay reads), parsed into a [`TraceSpec`] and then validated by
//! [`Trace::from_spec`].
//!
//! A TI line is `RANK ACTION ARGS...`, blank lines and lines starting with `#` are
//! skipped. The input is either one shared text whose lines carry every rank, or one text
//! per rank (the index-file form; every line of rank R's text must start with R).
//!
//! First slice of the mapping (SimGrid 3.32's replayer semantics):
//! * `init [x]`: any argument switches the rank's default datatype from bytes (1) to
//!   doubles (8); `finalize` and `comm_size N`: nothing;
//! * `compute FLOPS` → `compute {flops}`; `sleep S` → `sleep {seconds}`;
//! * `send|isend DST TAG COUNT [DT]` → `send|isend {dst, bytes = COUNT × size(DT), tag}`;
//! * `recv|irecv SRC TAG COUNT [DT]` → `recv|irecv {src, tag}` (the size is the sender's);
//! * `wait SRC DST TAG` → `wait {req}` on the oldest pending request of this rank with that
//!   (source, destination, tag) key, as SimGrid's request store does;
//! * `waitall` → `waitall`; requests still pending at the end of a rank are waited for
//!   (SimGrid does a final waitall), so a trailing `waitall` is added;
//! * `barrier`; `bcast COUNT [ROOT] [DT]`; `allreduce COUNT COMP [DT]` → `allreduce`
//!   followed by `compute {flops: COMP}` when COMP > 0 (SimGrid executes the reduction's
//!   flops after the collective; the same for `reduce`, `scan`, `exscan`, `reducescatter`);
//!   `alltoall SEND RECV [DT1] [DT2]` → `alltoall` with the block SEND × size(DT1);
//! * `reduce COUNT COMP [ROOT] [DT]`; `scan|exscan COUNT COMP [DT]`;
//!   `gather|scatter SEND RECV [ROOT] [DT1] [DT2]` (block SEND × size(DT1) on a gather's
//!   other ranks and a scatter's root, RECV × size(DT2) on the rest; four arguments are
//!   `SEND ROOT DT1 DT2`, as smpirun writes a receive count of 0);
//!   `allgather SEND RECV [DT1] [DT2]`;
//! * v-collectives, with one count per rank (P = the rank count): `gatherv SEND RECV×P
//!   [ROOT] [DT1] [DT2]` (only the root knows the receive counts: rank r's entry is its
//!   SEND); `allgatherv SEND RECV×P [DT] [DISPLS×P]` (read as SimGrid reads it); `scatterv SEND×P RECV [ROOT] [DT1]
//!   [DT2]` (the root's counts); `alltoallv SENDBUF SEND×P RECVBUF RECV×P [DT1] [DT2]`;
//!   `reducescatter RECV×P COMP [DT]`;
//! * `sendRecv SEND DST RECV SRC [DT1] [DT2]` → `sendrecv` with tag 0 (the trace has none);
//! * `test SRC DST TAG` → `test {req}` on the oldest pending request with that key (it
//!   stays pending for a later `wait`, which returns at once if the test consumed it;
//!   `network.test_seconds` plays SimGrid's `smpi/test` injected time);
//! * `comm_split`, `comm_dup`, `location`: ignored, as SimGrid's replay does.
//! * `Ssend|ISsend DST TAG COUNT [DT]` (what `smpirun -trace-ti` writes for MPI_Ssend and
//!   MPI_Issend; SimGrid's replay does not know these actions) → `send|isend` with `sync`.
//!
//! Datatype ids are SimGrid's (`Datatype::decode`), see [`datatype_size`]. A derived
//! datatype (MPI_Type_vector, MPI_Type_create_struct, …) is written as id `-1`, which
//! SimGrid's replay decodes as MPI_DATATYPE_NULL: 0 bytes. It is read so by default, or as
//! [`TiOptions::derived_datatype_bytes`] bytes per element, and the ops it sized are counted
//! ([`Trace::derived_datatype_ops`]).
//!
//! Peers and tags as `smpirun -trace-ti` 3.32 writes them: it translates a peer to its world
//! rank, so MPI_ANY_SOURCE and MPI_PROC_NULL both come out as `-333` (MPI_UNDEFINED), while
//! MPI_ANY_TAG is `-444`. SimGrid's replay takes `-333` for a rank (it deadlocks on an
//! any-source receive and aborts on a send to MPI_PROC_NULL). Here:
//! * `send|isend|Ssend|ISsend -333 …` is a send to MPI_PROC_NULL: no message; the request of
//!   an `isend` completes at once (its `wait`/`test` lines do nothing);
//! * `recv -333 …` and `sendRecv … -333` (source) receive from any source (a blocking receive
//!   from MPI_PROC_NULL is not written at all);
//! * `irecv -333 …` is either: an MPI_ANY_SOURCE receive if rank R has messages of that tag
//!   that no other receive of R takes, an MPI_PROC_NULL one if it has none (see [`resolve`]);
//! * tag `-444` on a receive (and its `wait`/`test` key) is any tag.

use std::collections::{HashMap, VecDeque};

use crate::error::{Error, Result};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec};
use crate::util::hash::IntMap;

/// Actions of SimGrid's replayer that change nothing here: communicators (SimGrid's
/// replay runs every collective on the world communicator and ignores these lines),
/// `location` (source positions) and `comm_size`.
pub const IGNORED: &[&str] = &["comm_size", "comm_split", "comm_dup", "location"];

/// Largest element count SimGrid accepts (it converts counts to a C `int`).
const MAX_COUNT: f64 = i32::MAX as f64;

/// The peer `smpirun -trace-ti` writes for MPI_ANY_SOURCE and MPI_PROC_NULL: MPI_UNDEFINED,
/// the world rank of no process (`MPI_COMM_WORLD->group()->rank(...)`).
pub const UNDEFINED_PEER: i64 = -333;
/// SimGrid's MPI_ANY_TAG, written as is.
pub const ANY_TAG: i64 = -444;
/// The datatype id SimGrid writes for a derived datatype (`Datatype::id` of a type it did
/// not predefine), decoded by its replay as MPI_DATATYPE_NULL (size 0).
pub const DERIVED_DATATYPE: i64 = -1;

/// How to read a TI trace.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TiOptions {
    /// Bytes per element of a derived datatype (id -1): 0, SimGrid's replay's reading, by default.
    pub derived_datatype_bytes: f64,
}

impl TiOptions {
    /// Options with `derived_datatype_bytes`, which must be a whole number of bytes that an MPI
    /// datatype's size can be (0 to 2^31 - 1).
    pub fn new(derived_datatype_bytes: Option<f64>) -> Result<TiOptions> {
        let Some(b) = derived_datatype_bytes else { return Ok(TiOptions::default()) };
        if !b.is_finite() || b < 0.0 || b.fract() != 0.0 || b > MAX_COUNT {
            return Err(Error::new(
                crate::error::ErrorKind::Options,
                "derived_datatype_bytes",
                format!("must be a whole number of bytes from 0 to {} (an MPI datatype's size), got {b}", i32::MAX),
            ));
        }
        Ok(TiOptions { derived_datatype_bytes: b })
    }
}

/// Size in bytes of SimGrid's predefined datatype `id` (the ids `Datatype::decode` knows,
/// sizes of an LP64 Linux host), or `None` for an id it does not know. The derived datatype's
/// `-1` is not here: [`TiOptions`] says how to read it.
pub fn datatype_size(id: i64) -> Option<f64> {
    let size: u32 = match id {
        0 => 8,  // MPI_DOUBLE
        1 => 4,  // MPI_INT
        2 => 1,  // MPI_CHAR
        3 => 2,  // MPI_SHORT
        4 => 8,  // MPI_LONG
        5 => 4,  // MPI_FLOAT
        6 => 1,  // MPI_BYTE
        7 => 8,  // MPI_LONG_LONG
        8 | 9 => 1, // MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR
        10 => 2, // MPI_UNSIGNED_SHORT
        11 => 4, // MPI_UNSIGNED
        12 | 13 => 8, // MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG
        14 => 16, // MPI_LONG_DOUBLE
        15 => 4, // MPI_WCHAR
        16 | 17 => 1, // MPI_C_BOOL, MPI_INT8_T
        18 => 2,
        19 => 4,
        20 => 8, // MPI_INT16_T, MPI_INT32_T, MPI_INT64_T
        21 => 1,
        22 => 2,
        23 => 4,
        24 => 8, // MPI_UINT8_T .. MPI_UINT64_T
        25 => 8,  // MPI_C_FLOAT_COMPLEX
        26 => 16, // MPI_C_DOUBLE_COMPLEX
        27 => 32, // MPI_C_LONG_DOUBLE_COMPLEX
        28 | 29 => 8, // MPI_AINT, MPI_OFFSET
        30 => 8,  // MPI_FLOAT_INT
        31 | 32 => 16, // MPI_LONG_INT, MPI_DOUBLE_INT
        33..=35 => 8, // MPI_SHORT_INT, MPI_2INT, MPI_2FLOAT
        36 | 37 => 16, // MPI_2DOUBLE, MPI_2LONG
        38 | 39 => 4, // MPI_REAL, MPI_REAL4
        40 => 8,  // MPI_REAL8
        41 => 16, // MPI_REAL16
        42 => 8,  // MPI_COMPLEX8
        43 | 44 => 16, // MPI_COMPLEX16, MPI_COMPLEX32 (SimGrid stores two doubles)
        45 => 4,  // MPI_INTEGER1 (SimGrid's size is an int's)
        46 => 2,
        47 => 4,
        48 => 8,
        49 => 16, // MPI_INTEGER2 .. MPI_INTEGER16
        50 => 32, // MPI_LONG_DOUBLE_INT
        51 => 1,  // MPI_CXX_BOOL
        52 => 8,
        53 => 16,
        54 => 32, // MPI_CXX_{FLOAT,DOUBLE,LONG_DOUBLE}_COMPLEX
        55 | 56 => 0, // MPI_UB, MPI_LB (markers without data)
        57 => 1,  // MPI_PACKED
        58 | 59 => 8, // MPI_PTR, MPI_COUNT
        _ => return None,
    };
    Some(size as f64)
}

/// Where a line came from, for error messages.
#[derive(Clone, Copy)]
enum Origin {
    /// The shared text: `line N`.
    Shared,
    /// Rank R's own text: `rank R line N`.
    Rank(usize),
}

impl Origin {
    fn field(self, line: usize) -> String {
        match self {
            Origin::Shared => format!("line {line}"),
            Origin::Rank(r) => format!("rank {r} line {line}"),
        }
    }
}

/// A request's key in SimGrid's request store: (source, destination, tag) as the trace
/// writes them (`-333` for an undefined peer, `-444` for any tag).
type Key = (i64, i64, i64);

/// One rank's program being built.
#[derive(Default)]
struct RankBuild {
    ops: Vec<OpSpec>,
    /// Line number (1-based, in its text) of each op.
    lines: Vec<u32>,
    /// Bytes per element of the default datatype (1 until `init` with an argument).
    default_size: Option<f64>,
    /// Bytes per element of a derived datatype (id -1).
    derived_size: f64,
    /// Whether the current action sized something with a derived datatype.
    derived_here: bool,
    /// Ops sized with a derived datatype.
    derived_ops: u64,
    /// Pending requests by key, oldest first; `None` is a request to MPI_PROC_NULL (it
    /// completed at once: its wait and test do nothing).
    pending: IntMap<Key, VecDeque<Option<usize>>>,
    n_requests: usize,
    n_pending: usize,
    /// Line of the last op (for the final waitall).
    last_line: usize,
    /// Whether the rank has an `irecv -333` (its only irecvs from any source).
    undefined_irecv: bool,
}

/// A TI text parsed into a trace spec: each op's line, and how many ops a derived datatype sized.
pub struct Parsed {
    pub spec: TraceSpec,
    /// Per rank, the line (1-based, in the rank's text) of each op.
    pub lines: Vec<Vec<u32>>,
    pub derived_datatype_ops: u64,
}

/// Parse a shared TI text (every line starts with its rank) into a trace spec. The rank
/// count is the largest rank seen plus one.
pub fn parse_shared(text: &str, options: TiOptions) -> Result<Parsed> {
    // First the rank count: the per-rank size lists of v-collectives have one entry per rank.
    let mut p = 0;
    let mut per_rank: Vec<usize> = Vec::new(); // lines of each rank: its ops' capacity
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let Some(first) = raw.split_ascii_whitespace().next() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let r = parse_rank(Origin::Shared, line, first, "rank")?;
        if r >= crate::mpi::trace::MAX_RANKS {
            return Err(Error::trace(Origin::Shared.field(line), format!("rank {r} is more than the limit of {} ranks", crate::mpi::trace::MAX_RANKS)));
        }
        p = p.max(r + 1);
        if per_rank.len() <= r {
            per_rank.resize(r + 1, 0);
        }
        per_rank[r] += 1;
    }
    // Every rank below the largest has lines, as every rank of the per-rank forms has a file.
    let mut seen = vec![false; p];
    let mut toks: Vec<&str> = Vec::new();
    for raw in text.lines() {
        if tokens_into(raw, &mut toks) {
            if let Ok(r) = toks[0].parse::<usize>() {
                seen[r] = true;
            }
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        // Name the first line of a rank above the gap, as the per-rank forms name its file.
        for (i, raw) in text.lines().enumerate() {
            if tokens_into(raw, &mut toks) {
                let r = parse_rank(Origin::Shared, i + 1, toks[0], "rank")?;
                if r > missing {
                    let present = seen.iter().filter(|s| **s).count();
                    return Err(Error::trace(Origin::Shared.field(i + 1), rank_gap(r, present, &format!("lines of {present} ranks"), missing)));
                }
            }
        }
    }
    let mut ranks: Vec<RankBuild> = Vec::new();
    ranks.resize_with(p, || RankBuild::new(options));
    for (b, &n) in ranks.iter_mut().zip(&per_rank) {
        b.ops.reserve_exact(n + 1);
        b.lines.reserve_exact(n + 1);
    }
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if !tokens_into(raw, &mut toks) {
            continue;
        }
        let r = parse_rank(Origin::Shared, line, toks[0], "rank")?;
        action(&mut ranks[r], r, p, Origin::Shared, line, &toks)?;
    }
    finish(ranks, Origin::Shared)
}

/// Parse one TI text per rank (`(rank, text)`; ranks must be 0..P-1, each once).
pub fn parse_ranks(parts: &[(usize, &str)], options: TiOptions) -> Result<Parsed> {
    let p = parts.len();
    let mut order: Vec<Option<&str>> = vec![None; p];
    for &(r, text) in parts {
        if r >= p {
            let missing = (0..p).find(|m| !parts.iter().any(|&(q, _)| q == *m)).unwrap_or(0);
            return Err(Error::trace(format!("rank {r}"), rank_gap(r, p, &format!("{p} rank texts"), missing)));
        }
        if order[r].is_some() {
            return Err(Error::trace(format!("rank {r}"), "given twice"));
        }
        order[r] = Some(text);
    }
    // The ranks' texts are independent: parse them on every core, then report the first
    // error in rank order (the same error whatever the thread count).
    let built = crate::util::par::map_in_order(&order, |r, t| parse_rank_text(r, p, t.unwrap_or(""), options));
    finish(built.into_iter().collect::<Result<Vec<_>>>()?, Origin::Rank(0))
}

/// Why rank `r` is refused when `count` ranks are `given` (their own texts, or lines) and
/// rank `missing`, below `r`, has none: the ranks are 0 to count − 1, each present.
fn rank_gap(r: usize, count: usize, given: &str, missing: usize) -> String {
    format!("rank {r} out of range ({given} given, none for rank {missing}: the ranks must be 0 to {}, each present)", count.max(1) - 1)
}

/// Rank `r`'s program from its own text (`p` ranks in all).
fn parse_rank_text(r: usize, p: usize, text: &str, options: TiOptions) -> Result<RankBuild> {
    let origin = Origin::Rank(r);
    let mut b = RankBuild::new(options);
    // At most one op a line (and a final waitall; a reduction's compute is rare): reserve
    // once, exactly, instead of growing by doubling (a vector a third empty, and a copy).
    let lines = line_count(text);
    b.ops.reserve_exact(lines + 1);
    b.lines.reserve_exact(lines + 1);
    let mut toks: Vec<&str> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if !tokens_into(raw, &mut toks) {
            continue;
        }
        let named = parse_rank(origin, line, toks[0], "rank")?;
        if named != r {
            return Err(Error::trace(origin.field(line), format!("the line is for rank {named}, in rank {r}'s file")));
        }
        action(&mut b, r, p, origin, line, &toks)?;
    }
    Ok(b)
}

/// Lines of `text` (newlines, plus an unterminated last line).
fn line_count(text: &str) -> usize {
    let b = text.as_bytes();
    b.iter().filter(|&&c| c == b'\n').count() + usize::from(b.last().is_some_and(|&c| c != b'\n'))
}

/// A validated trace from a shared TI text.
pub fn trace_from_shared(text: &str, options: TiOptions) -> Result<Trace> {
    validated(parse_shared(text, options)?, Origin::Shared)
}

/// A validated trace from one TI text per rank.
pub fn trace_from_ranks(parts: &[(usize, &str)], options: TiOptions) -> Result<Trace> {
    validated(parse_ranks(parts, options)?, Origin::Rank(0))
}

fn validated(parsed: Parsed, origin: Origin) -> Result<Trace> {
    let mut trace = Trace::from_spec(parsed.spec).map_err(|e| relocate(e, &parsed.lines, origin))?;
    trace.derived_datatype_ops = parsed.derived_datatype_ops;
    Ok(trace)
}

/// For an error of the per-rank form, the rank it is about (its field starts `rank R`)
/// and the field without that prefix (`line N`), so a front-end can name R's file.
pub fn split_rank_field(field: &str) -> Option<(usize, String)> {
    let rest = field.strip_prefix("rank ")?;
    let (num, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((num.parse().ok()?, tail.to_string()))
}

/// The tokens of a line into `out` (cleared first); false for a blank or comment line.
fn tokens_into<'a>(raw: &'a str, out: &mut Vec<&'a str>) -> bool {
    out.clear();
    let t = raw.trim();
    if t.is_empty() || t.starts_with('#') {
        return false;
    }
    out.extend(t.split_ascii_whitespace());
    true
}

fn parse_rank(o: Origin, line: usize, tok: &str, what: &str) -> Result<usize> {
    tok.parse::<usize>().map_err(|_| Error::trace(o.field(line), format!("expected a {what} (an integer >= 0), got `{tok}`")))
}

fn parse_tag(o: Origin, line: usize, tok: &str) -> Result<i64> {
    match tok.parse::<i64>() {
        Ok(t) if t >= 0 => Ok(t),
        Ok(t) => Err(Error::trace(o.field(line), format!("tag {t} is negative (tags must be >= 0)"))),
        Err(_) => Err(Error::trace(o.field(line), format!("expected a tag (an integer), got `{tok}`"))),
    }
}

/// A receive's tag: a tag >= 0, or `-444` (MPI_ANY_TAG).
fn parse_recv_tag(o: Origin, line: usize, tok: &str) -> Result<i64> {
    if tok.parse::<i64>() == Ok(ANY_TAG) {
        return Ok(ANY_TAG);
    }
    parse_tag(o, line, tok).map_err(|mut e| {
        e.reason = format!("{} (or {ANY_TAG}, MPI_ANY_TAG)", e.reason);
        e
    })
}

/// A peer: a rank, or `-333` (MPI_ANY_SOURCE or MPI_PROC_NULL as smpirun writes them): `None`.
fn parse_peer(o: Origin, line: usize, tok: &str, what: &str) -> Result<Option<usize>> {
    if tok.parse::<i64>() == Ok(UNDEFINED_PEER) {
        return Ok(None);
    }
    parse_rank(o, line, tok, what).map(Some).map_err(|mut e| {
        e.reason = format!("{} (or {UNDEFINED_PEER}, MPI_ANY_SOURCE or MPI_PROC_NULL)", e.reason);
        e
    })
}

fn peer_key(peer: Option<usize>) -> i64 {
    peer.map_or(UNDEFINED_PEER, |r| r as i64)
}

fn tag_spec(tag: i64) -> TagSpec {
    if tag == ANY_TAG {
        TagSpec::Any
    } else {
        TagSpec::Value(tag)
    }
}

/// A finite non-negative number (flops, seconds).
fn parse_amount(o: Origin, line: usize, tok: &str, what: &str) -> Result<f64> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err(Error::trace(o.field(line), format!("{what} `{tok}` must be a finite number >= 0"))),
        Err(_) => Err(Error::trace(o.field(line), format!("expected {what} (a number), got `{tok}`"))),
    }
}

/// An element count: a whole number in [0, 2^31 - 1] (SimGrid's `int`).
fn parse_count(o: Origin, line: usize, tok: &str) -> Result<f64> {
    let v = parse_amount(o, line, tok, "a count")?;
    if v.fract() != 0.0 {
        return Err(Error::trace(o.field(line), format!("count `{tok}` is not a whole number")));
    }
    if v > MAX_COUNT {
        return Err(Error::trace(o.field(line), format!("count `{tok}` does not fit in an MPI count (at most 2^31 - 1)")));
    }
    Ok(v)
}

impl RankBuild {
    fn new(options: TiOptions) -> RankBuild {
        RankBuild { derived_size: options.derived_datatype_bytes, ..RankBuild::default() }
    }

    fn push(&mut self, op: OpSpec, line: usize) {
        self.ops.push(op);
        // 4 bytes, not 8, an op (a text of 2^32 lines would be over 4 GiB).
        self.lines.push(u32::try_from(line).unwrap_or(u32::MAX));
        self.last_line = line;
    }

    /// Bytes per element of datatype `tok` (the default datatype when absent); a derived
    /// datatype (-1) marks the action as sized by one.
    fn datatype(&mut self, o: Origin, line: usize, tok: Option<&&str>) -> Result<f64> {
        let Some(tok) = tok else { return Ok(self.default_size.unwrap_or(1.0)) };
        let id: i64 = tok.parse().map_err(|_| Error::trace(o.field(line), format!("expected a datatype id (an integer), got `{tok}`")))?;
        if id == DERIVED_DATATYPE {
            self.derived_here = true;
            return Ok(self.derived_size);
        }
        datatype_size(id).ok_or_else(|| Error::trace(o.field(line), format!("unknown datatype id {id} (SimGrid's ids are 0 to 59, and -1 for a derived datatype)")))
    }

    /// A receive's datatype: checked, but the message's size is the sender's.
    fn recv_datatype(&mut self, o: Origin, line: usize, tok: Option<&&str>) -> Result<()> {
        let sized = self.derived_here;
        self.datatype(o, line, tok)?;
        self.derived_here = sized;
        Ok(())
    }


    /// An optional root rank (default 0).
    fn root(&self, o: Origin, line: usize, tok: Option<&&str>) -> Result<usize> {
        tok.map_or(Ok(0), |t| parse_rank(o, line, t, "root rank"))
    }

    /// Element counts times a datatype size.
    fn counts(&self, o: Origin, line: usize, toks: &[&str], size: f64) -> Result<Vec<f64>> {
        toks.iter().map(|t| parse_count(o, line, t).map(|c| c * size)).collect()
    }

    /// SimGrid executes a reduction's flops after the collective.
    fn reduction_flops(&mut self, flops: f64, line: usize) {
        if flops > 0.0 {
            self.push(OpSpec::Compute { flops: Some(flops), seconds: None }, line);
        }
    }

    fn post(&mut self, key: Key) {
        self.pending.entry(key).or_default().push_back(Some(self.n_requests));
        self.n_requests += 1;
        self.n_pending += 1;
    }

    /// A request to MPI_PROC_NULL: complete at once.
    fn post_null(&mut self, key: Key) {
        self.pending.entry(key).or_default().push_back(None);
    }

    /// A send (`sync`: MPI_Ssend) or, `nonblocking`, an isend of `bytes` to `dst`; to
    /// MPI_PROC_NULL (`None`), no message.
    #[allow(clippy::too_many_arguments)]
    fn send(&mut self, r: usize, dst: Option<usize>, tag: i64, bytes: f64, sync: bool, nonblocking: bool, line: usize) {
        let key = (r as i64, peer_key(dst), tag);
        let Some(dst) = dst else {
            if nonblocking {
                self.post_null(key);
            }
            return;
        };
        if nonblocking {
            self.push(OpSpec::Isend { dst, bytes, tag, sync, comm: 0 }, line);
            self.post(key);
        } else {
            self.push(OpSpec::Send { dst, bytes, tag, sync, comm: 0 }, line);
        }
    }
}

/// What an action `smpirun -trace-ti` 3.32 writes but no replay reads stands for.
fn unreadable(name: &str) -> Option<&'static str> {
    Some(match name {
        "ibarrier" | "ibcast" | "ireduce" | "iallreduce" | "iscan" | "iexscan" | "igather" | "igatherv" | "iallgather"
        | "iallgatherv" | "iscatter" | "iscatterv" | "ialltoall" | "ialltoallv" | "ireducescatter" => {
            "a non-blocking collective; its wait line names no request of the trace"
        }
        "waitAny" => "MPI_Waitany: the trace does not say which request completed",
        "testany" | "testall" | "testsome" => "MPI_Testany, MPI_Testall or MPI_Testsome: the trace does not say which requests completed",
        "Start" | "Startall" => "a persistent request started",
        "bsend" | "ibsend" => "MPI_Bsend or MPI_Ibsend",
        _ => return None,
    })
}

/// The key of a `wait` or `test` line: SRC DST TAG.
fn wait_key(o: Origin, line: usize, args: &[&str]) -> Result<Key> {
    let src = parse_peer(o, line, args[0], "source rank")?;
    let dst = parse_peer(o, line, args[1], "destination rank")?;
    let tag = parse_recv_tag(o, line, args[2])?;
    Ok((peer_key(src), peer_key(dst), tag))
}

/// Apply one action line (`tokens[0]` is the rank, `tokens[1]` the action) to rank `r`,
/// counting it when a derived datatype sized it.
fn action(b: &mut RankBuild, r: usize, p: usize, o: Origin, line: usize, tokens: &[&str]) -> Result<()> {
    b.derived_here = false;
    apply(b, r, p, o, line, tokens)?;
    b.derived_ops += b.derived_here as u64;
    Ok(())
}

fn apply(b: &mut RankBuild, r: usize, p: usize, o: Origin, line: usize, tokens: &[&str]) -> Result<()> {
    let Some(&name) = tokens.get(1) else {
        return Err(Error::trace(o.field(line), "a rank but no action"));
    };
    let args = &tokens[2..];
    let arity = |min: usize, max: usize, usage: &str| -> Result<()> {
        if args.len() < min || args.len() > max {
            let n = args.len();
            Err(Error::trace(o.field(line), format!("`{name}` takes {usage}, got {n} argument{}", if n == 1 { "" } else { "s" })))
        } else {
            Ok(())
        }
    };
    match name {
        "init" => {
            arity(0, 1, "an optional argument")?;
            b.default_size = Some(if args.is_empty() { 1.0 } else { 8.0 });
        }
        "finalize" => arity(0, 0, "no arguments")?,
        "compute" => {
            arity(1, 1, "FLOPS")?;
            let flops = parse_amount(o, line, args[0], "flops")?;
            b.push(OpSpec::Compute { flops: Some(flops), seconds: None }, line);
        }
        "sleep" => {
            arity(1, 1, "SECONDS")?;
            let seconds = parse_amount(o, line, args[0], "seconds")?;
            b.push(OpSpec::Sleep { seconds }, line);
        }
        "send" | "isend" | "Ssend" | "ISsend" => {
            arity(3, 4, "DST TAG COUNT [DATATYPE]")?;
            let dst = parse_peer(o, line, args[0], "destination rank")?;
            let tag = parse_tag(o, line, args[1])?;
            let bytes = parse_count(o, line, args[2])? * b.datatype(o, line, args.get(3))?;
            let (sync, nonblocking) = match name {
                "send" => (false, false),
                "isend" => (false, true),
                "Ssend" => (true, false),
                _ => (true, true),
            };
            b.send(r, dst, tag, bytes, sync, nonblocking, line);
        }
        "recv" | "irecv" => {
            arity(3, 4, "SRC TAG COUNT [DATATYPE]")?;
            let src = parse_peer(o, line, args[0], "source rank")?;
            let tag = parse_recv_tag(o, line, args[1])?;
            parse_count(o, line, args[2])?;
            b.recv_datatype(o, line, args.get(3))?;
            let peer = src.map_or(Peer::Any, Peer::Rank);
            if name == "recv" {
                b.push(OpSpec::Recv { src: peer, tag: tag_spec(tag), comm: 0 }, line);
            } else {
                b.undefined_irecv |= src.is_none();
                b.push(OpSpec::Irecv { src: peer, tag: tag_spec(tag), comm: 0 }, line);
                b.post((peer_key(src), r as i64, tag));
            }
        }
        "wait" => {
            arity(3, 3, "SRC DST TAG")?;
            let key = wait_key(o, line, args)?;
            let req = b.pending.get_mut(&key).and_then(|q| q.pop_front()).ok_or_else(|| {
                let (src, dst, tag) = key;
                Error::trace(o.field(line), format!("no pending isend/irecv with source {src}, destination {dst} and tag {tag} to wait for"))
            })?;
            if let Some(req) = req {
                b.n_pending -= 1;
                b.push(OpSpec::Wait { req }, line);
            }
        }
        "waitall" => {
            // `smpirun -trace-ti` writes how many requests were waited for; SimGrid's replay
            // ignores it and waits for every pending request, as we do.
            arity(0, 1, "[COUNT]")?;
            if let Some(count) = args.first() {
                parse_count(o, line, count)?;
            }
            b.pending.clear();
            b.n_pending = 0;
            b.push(OpSpec::Waitall, line);
        }
        "barrier" => {
            arity(0, 0, "no arguments")?;
            b.push(OpSpec::Barrier { comm: 0 }, line);
        }
        "bcast" => {
            arity(1, 3, "COUNT [ROOT] [DATATYPE]")?;
            let count = parse_count(o, line, args[0])?;
            let root = match args.get(1) {
                Some(t) => parse_rank(o, line, t, "root rank")?,
                None => 0,
            };
            let bytes = count * b.datatype(o, line, args.get(2))?;
            b.push(OpSpec::Bcast { root, bytes, comm: 0 }, line);
        }
        "allreduce" => {
            arity(2, 3, "COUNT COMP_FLOPS [DATATYPE]")?;
            let count = parse_count(o, line, args[0])?;
            let comp = parse_amount(o, line, args[1], "flops")?;
            let bytes = count * b.datatype(o, line, args.get(2))?;
            b.push(OpSpec::Allreduce { bytes, comm: 0 }, line);
            b.reduction_flops(comp, line);
        }
        "alltoall" => {
            arity(2, 4, "SEND_COUNT RECV_COUNT [SEND_DATATYPE] [RECV_DATATYPE]")?;
            let send = parse_count(o, line, args[0])?;
            parse_count(o, line, args[1])?;
            let bytes = send * b.datatype(o, line, args.get(2))?;
            b.recv_datatype(o, line, args.get(3))?;
            b.push(OpSpec::Alltoall { bytes, comm: 0 }, line);
        }
        "reduce" => {
            arity(2, 4, "COUNT COMP_FLOPS [ROOT] [DATATYPE]")?;
            let count = parse_count(o, line, args[0])?;
            let comp = parse_amount(o, line, args[1], "flops")?;
            let root = b.root(o, line, args.get(2))?;
            let bytes = count * b.datatype(o, line, args.get(3))?;
            b.push(OpSpec::Reduce { root, bytes, comm: 0 }, line);
            b.reduction_flops(comp, line);
        }
        "scan" | "exscan" => {
            arity(2, 3, "COUNT COMP_FLOPS [DATATYPE]")?;
            let count = parse_count(o, line, args[0])?;
            let comp = parse_amount(o, line, args[1], "flops")?;
            let bytes = count * b.datatype(o, line, args.get(2))?;
            b.push(if name == "scan" { OpSpec::Scan { bytes, comm: 0 } } else { OpSpec::Exscan { bytes, comm: 0 } }, line);
            b.reduction_flops(comp, line);
        }
        "gather" | "scatter" => {
            arity(2, 5, "SEND_COUNT RECV_COUNT [ROOT] [SEND_DATATYPE] [RECV_DATATYPE]")?;
            // smpirun writes both datatypes but leaves out a receive count of 0 (a gather's other
            // ranks often pass 0): four arguments are SEND ROOT DT1 DT2. (SimGrid's replay reads
            // them as SEND RECV ROOT DT1, and deadlocks on the wrong root.)
            let full;
            let args: &[&str] = if args.len() == 4 {
                full = [args[0], "0", args[1], args[2], args[3]];
                &full
            } else {
                args
            };
            // The block is what MPI reads on this rank: the send side of a gather's non-root and
            // of a scatter's root, the receive side of the others (a gather's root writes SEND 0
            // for MPI_IN_PLACE; a scatter's other ranks may pass any send count).
            let send = parse_count(o, line, args[0])?;
            let recv = parse_count(o, line, args[1])?;
            let root = b.root(o, line, args.get(2))?;
            let bytes = if (r == root) == (name == "scatter") {
                let bytes = send * b.datatype(o, line, args.get(3))?;
                b.recv_datatype(o, line, args.get(4))?;
                bytes
            } else {
                b.recv_datatype(o, line, args.get(3))?;
                recv * b.datatype(o, line, args.get(4))?
            };
            b.push(if name == "gather" { OpSpec::Gather { root, bytes, comm: 0 } } else { OpSpec::Scatter { root, bytes, comm: 0 } }, line);
        }
        "allgather" => {
            arity(2, 4, "SEND_COUNT RECV_COUNT [SEND_DATATYPE] [RECV_DATATYPE]")?;
            let send = parse_count(o, line, args[0])?;
            parse_count(o, line, args[1])?;
            let bytes = send * b.datatype(o, line, args.get(2))?;
            b.recv_datatype(o, line, args.get(3))?;
            b.push(OpSpec::Allgather { bytes, comm: 0 }, line);
        }
        "gatherv" => {
            // SEND RECV_COUNTS×p [ROOT] [DT1] [DT2]; only the root knows the receive counts
            // (the others write zeros): rank r's own entry is its send size.
            arity(p + 1, p + 4, &format!("SEND_COUNT, {p} RECV_COUNTS, [ROOT] [SEND_DATATYPE] [RECV_DATATYPE]"))?;
            let send = parse_count(o, line, args[0])?;
            let root = b.root(o, line, args.get(p + 1))?;
            let dt1 = b.datatype(o, line, args.get(p + 2))?;
            let dt2 = b.datatype(o, line, args.get(p + 3))?;
            let mut bytes = b.counts(o, line, &args[1..=p], dt2)?;
            bytes[r] = send * dt1;
            b.push(OpSpec::Gatherv { root, bytes, comm: 0 }, line);
        }
        "allgatherv" => {
            // SEND RECV_COUNTS×p, then SimGrid's optional tail: [DATATYPE] or DISPLS×p or
            // DATATYPE DISPLS×p (one datatype for both sides).
            arity(p + 1, 2 * p + 2, &format!("SEND_COUNT, {p} RECV_COUNTS, [DATATYPE] [{p} DISPLACEMENTS]"))?;
            parse_count(o, line, args[0])?;
            let tail = args.len() - 1 - p;
            // SimGrid's reading: more than P extra tokens are a datatype then displacements,
            // more than 2 are displacements alone, 1 or 2 start with the datatype.
            let with_datatype = tail > p || (1..=2).contains(&tail);
            let dt = b.datatype(o, line, if with_datatype { args.get(p + 1) } else { None })?;
            let bytes = b.counts(o, line, &args[1..=p], dt)?;
            b.push(OpSpec::Allgatherv { bytes, comm: 0 }, line);
        }
        "scatterv" => {
            // SEND_COUNTS×p RECV [ROOT] [DT1] [DT2]; only the root's counts matter.
            arity(p + 1, p + 4, &format!("{p} SEND_COUNTS, RECV_COUNT, [ROOT] [SEND_DATATYPE] [RECV_DATATYPE]"))?;
            parse_count(o, line, args[p])?;
            let root = b.root(o, line, args.get(p + 1))?;
            let dt1 = b.datatype(o, line, args.get(p + 2))?;
            b.recv_datatype(o, line, args.get(p + 3))?;
            let bytes = b.counts(o, line, &args[..p], dt1)?;
            b.push(OpSpec::Scatterv { root, bytes, comm: 0 }, line);
        }
        "alltoallv" => {
            arity(2 * p + 2, 2 * p + 4, &format!("SEND_BUFFER, {p} SEND_COUNTS, RECV_BUFFER, {p} RECV_COUNTS, [SEND_DATATYPE] [RECV_DATATYPE]"))?;
            parse_count(o, line, args[0])?;
            parse_count(o, line, args[p + 1])?;
            let dt1 = b.datatype(o, line, args.get(2 * p + 2))?;
            b.recv_datatype(o, line, args.get(2 * p + 3))?;
            b.counts(o, line, &args[p + 2..2 * p + 2], 1.0)?;
            let bytes = b.counts(o, line, &args[1..=p], dt1)?;
            b.push(OpSpec::Alltoallv { bytes, comm: 0 }, line);
        }
        "reducescatter" => {
            arity(p + 1, p + 2, &format!("{p} RECV_COUNTS, COMP_FLOPS, [DATATYPE]"))?;
            let comp = parse_amount(o, line, args[p], "flops")?;
            let dt = b.datatype(o, line, args.get(p + 1))?;
            let bytes = b.counts(o, line, &args[..p], dt)?;
            b.push(OpSpec::ReduceScatter { bytes, comm: 0 }, line);
            b.reduction_flops(comp, line);
        }
        "sendRecv" => {
            arity(4, 6, "SEND_COUNT DST RECV_COUNT SRC [SEND_DATATYPE] [RECV_DATATYPE]")?;
            // smpirun writes nothing for an MPI_Sendrecv with an MPI_PROC_NULL side (the other
            // side still moves data, unrecorded); -333 here is an MPI_ANY_SOURCE source.
            let send = parse_count(o, line, args[0])?;
            let dst = parse_peer(o, line, args[1], "destination rank")?;
            parse_count(o, line, args[2])?;
            let src = parse_peer(o, line, args[3], "source rank")?;
            let bytes = send * b.datatype(o, line, args.get(4))?;
            b.recv_datatype(o, line, args.get(5))?;
            let src = src.map_or(Peer::Any, Peer::Rank);
            match dst {
                Some(dst) => {
                    b.push(OpSpec::Sendrecv { dst, bytes, tag: 0, src, recvtag: TagSpec::Value(0), comm: 0 }, line);
                }
                None => b.push(OpSpec::Recv { src, tag: TagSpec::Value(0), comm: 0 }, line),
            }
        }
        "test" => {
            // SimGrid tests the oldest pending request with that key: consumed if it has
            // completed (a later wait on it returns at once), kept otherwise; no such
            // request, nothing (an earlier test took it).
            arity(3, 3, "SRC DST TAG")?;
            let key = wait_key(o, line, args)?;
            if let Some(&Some(req)) = b.pending.get(&key).and_then(|q| q.front()) {
                b.push(OpSpec::Test { req }, line);
            }
        }
        // Last: a scan of a list, for actions that are rare.
        _ if IGNORED.contains(&name) => {}
        _ => {
            let reason = match unreadable(name) {
                Some(why) => format!("`{name}` ({why}) cannot be replayed: SimGrid's replay does not read it either"),
                None => format!("unknown action `{name}`"),
            };
            return Err(Error::trace(o.field(line), reason));
        }
    }
    Ok(())
}

/// The spec and each op's line; a rank with requests still pending gets a final waitall.
fn finish(mut ranks: Vec<RankBuild>, origin: Origin) -> Result<Parsed> {
    if ranks.is_empty() {
        return Err(Error::trace("", "the trace has no actions"));
    }
    resolve(&mut ranks, origin)?;
    let mut ops = Vec::with_capacity(ranks.len());
    let mut lines = Vec::with_capacity(ranks.len());
    let mut derived_datatype_ops = 0;
    for mut b in ranks {
        if b.n_pending > 0 {
            let l = b.last_line;
            b.push(OpSpec::Waitall, l);
        }
        derived_datatype_ops += b.derived_ops;
        ops.push(b.ops);
        lines.push(b.lines);
    }
    Ok(Parsed { spec: TraceSpec { ranks: ops, placement: None }, lines, derived_datatype_ops })
}

/// Tell each `irecv -333` apart: smpirun writes MPI_ANY_SOURCE and MPI_PROC_NULL alike. For
/// each rank and tag, the messages sent to the rank that its receives from named ranks and its
/// blocking any-source receives (`recv -333`: a blocking receive from MPI_PROC_NULL is not
/// written) leave over are for its `irecv -333`s: all of them are MPI_ANY_SOURCE when there
/// are as many messages left as such irecvs, all MPI_PROC_NULL when none is left (they are
/// removed, with their `wait` and `test` lines). A rank with any-tag receives is counted over
/// all tags. A number in between cannot be told apart: an error naming the first such line.
/// (TI has no other any-source irecv: these are the rank's `Irecv { src: Any }` ops.)
fn resolve(ranks: &mut [RankBuild], origin: Origin) -> Result<()> {
    if !ranks.iter().any(|b| b.undefined_irecv) {
        return Ok(());
    }
    let tag_of = |t: &TagSpec| match t {
        TagSpec::Value(t) => *t,
        TagSpec::Any => ANY_TAG,
    };
    let mut sent: HashMap<(usize, i64), u64> = HashMap::new();
    for op in ranks.iter().flat_map(|b| &b.ops) {
        if let OpSpec::Send { dst, tag, .. } | OpSpec::Isend { dst, tag, .. } | OpSpec::Sendrecv { dst, tag, .. } = op {
            *sent.entry((*dst, *tag)).or_default() += 1;
        }
    }
    for (d, b) in ranks.iter_mut().enumerate().filter(|(_, b)| b.undefined_irecv) {
        // Receives that take a message by tag: from a named rank, or blocking from any; and the
        // irecv -333 lines (request, tag, line).
        let mut taken: HashMap<i64, u64> = HashMap::new();
        let mut undefined: Vec<(usize, i64, usize)> = Vec::new();
        let mut req = 0;
        for (op, &line) in b.ops.iter().zip(&b.lines) {
            let line = line as usize;
            match op {
                OpSpec::Irecv { src: Peer::Any, tag, .. } => undefined.push((req, tag_of(tag), line)),
                OpSpec::Recv { tag, .. } | OpSpec::Irecv { tag, .. } | OpSpec::Sendrecv { recvtag: tag, .. } => {
                    *taken.entry(tag_of(tag)).or_default() += 1
                }
                _ => {}
            }
            req += matches!(op, OpSpec::Isend { .. } | OpSpec::Irecv { .. }) as usize;
        }
        // Over all tags when an any-tag receive may take a message of any tag.
        let all_tags = taken.contains_key(&ANY_TAG) || undefined.iter().any(|u| u.1 == ANY_TAG);
        let group = |tag: i64| if all_tags { ANY_TAG } else { tag };
        let in_group = |tag: i64, g: i64| all_tags || tag == g;
        let mut groups: Vec<i64> = undefined.iter().map(|u| group(u.1)).collect();
        groups.sort_unstable();
        groups.dedup();
        let mut null = Vec::new();
        for g in groups {
            let messages: u64 = sent.iter().filter(|(&(dst, tag), _)| dst == d && in_group(tag, g)).map(|(_, &n)| n).sum();
            let taken: u64 = taken.iter().filter(|(&tag, _)| in_group(tag, g)).map(|(_, &n)| n).sum();
            let irecvs: Vec<&(usize, i64, usize)> = undefined.iter().filter(|u| group(u.1) == g).collect();
            let left = messages.saturating_sub(taken);
            if left == 0 {
                null.extend(irecvs.iter().map(|u| u.0));
            } else if left < irecvs.len() as u64 {
                let tags = if all_tags { "of any tag".to_string() } else { format!("with tag {g}") };
                let o = match origin {
                    Origin::Shared => Origin::Shared,
                    Origin::Rank(_) => Origin::Rank(d),
                };
                return Err(Error::trace(
                    o.field(irecvs[0].2),
                    format!(
                        "rank {d} has {} `irecv {UNDEFINED_PEER}` {tags} (smpirun writes MPI_ANY_SOURCE and MPI_PROC_NULL alike) \
                         but {left} message{} for them: which are MPI_PROC_NULL cannot be told",
                        irecvs.len(),
                        if left == 1 { "" } else { "s" }
                    ),
                ));
            }
            // Otherwise every one is MPI_ANY_SOURCE (more messages than irecvs: the replay
            // reports those left unmatched).
        }
        if !null.is_empty() {
            null.sort_unstable();
            drop_requests(b, &null);
        }
    }
    Ok(())
}

/// Remove requests `null` (sorted, of `irecv` ops) of rank `b`, with the waits and tests on
/// them, and renumber the others.
fn drop_requests(b: &mut RankBuild, null: &[usize]) {
    let is_null = |req: usize| null.binary_search(&req).is_ok();
    let new_index = |req: usize| req - null.partition_point(|&n| n < req);
    let mut next = 0;
    let mut keep = Vec::with_capacity(b.ops.len());
    for op in b.ops.iter_mut() {
        keep.push(match op {
            OpSpec::Isend { .. } | OpSpec::Irecv { .. } => {
                next += 1;
                !is_null(next - 1)
            }
            OpSpec::Wait { req } | OpSpec::Test { req } => {
                let k = !is_null(*req);
                *req = new_index(*req);
                k
            }
            _ => true,
        });
    }
    let mut k = keep.iter();
    b.ops.retain(|_| *k.next().unwrap_or(&true));
    let mut k = keep.iter();
    b.lines.retain(|_| *k.next().unwrap_or(&true));
    // Requests still pending at the end get a final waitall: none if only these were.
    b.n_pending = b.pending.values().flatten().filter(|q| q.is_some_and(|q| !is_null(q))).count();
}

/// Turn a `ranks[R][I]...` field of a [`Trace::from_spec`] error into the TI line.
fn relocate(mut e: Error, lines: &[Vec<u32>], origin: Origin) -> Error {
    let Some(rest) = e.field.strip_prefix("ranks[") else { return e };
    let Some((r, rest)) = rest.split_once(']') else { return e };
    let Ok(r) = r.parse::<usize>() else { return e };
    let o = match origin {
        Origin::Shared => Origin::Shared,
        Origin::Rank(_) => Origin::Rank(r),
    };
    let located = rest
        .strip_prefix('[')
        .and_then(|s| s.split_once(']'))
        .and_then(|(i, _)| i.parse::<usize>().ok())
        .and_then(|i| lines.get(r)?.get(i).map(|&l| l as usize));
    e.field = match (located, o) {
        (Some(line), o) => o.field(line),
        (None, _) => format!("rank {r}"),
    };
    if matches!(origin, Origin::Shared) && located.is_some() {
        e.reason = format!("rank {r}: {}", e.reason);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::platform::Platform;
    use crate::mpi::replay::{simulate, SimOptions};

    const TI: &str = "\
# a 3-rank program
0 init
1 init
2 init
0 compute 1e9
1 compute 2e9
0 send 1 7 1000
1 recv 0 7 1000
1 isend 2 3 500
2 irecv 1 3 500
2 compute 5e8
2 wait 1 2 3
1 wait 1 2 3
0 barrier
1 barrier
2 barrier
0 bcast 4096 1
1 bcast 4096 1
2 bcast 4096 1
0 allreduce 100 1e6 0
1 allreduce 100 1e6 0
2 allreduce 100 1e6 0
0 alltoall 10 10
1 alltoall 10 10
2 alltoall 10 10
0 sleep 0.5
0 finalize
1 finalize
2 finalize
";

    const JSON: &str = r#"{"ranks": [
      [{"op": "compute", "flops": 1e9}, {"op": "send", "dst": 1, "tag": 7, "bytes": 1000}, {"op": "barrier"},
       {"op": "bcast", "root": 1, "bytes": 4096}, {"op": "allreduce", "bytes": 800}, {"op": "compute", "flops": 1e6},
       {"op": "alltoall", "bytes": 10}, {"op": "sleep", "seconds": 0.5}],
      [{"op": "compute", "flops": 2e9}, {"op": "recv", "src": 0, "tag": 7}, {"op": "isend", "dst": 2, "tag": 3, "bytes": 500},
       {"op": "wait", "req": 0}, {"op": "barrier"}, {"op": "bcast", "root": 1, "bytes": 4096},
       {"op": "allreduce", "bytes": 800}, {"op": "compute", "flops": 1e6}, {"op": "alltoall", "bytes": 10}],
      [{"op": "irecv", "src": 1, "tag": 3}, {"op": "compute", "flops": 5e8}, {"op": "wait", "req": 0}, {"op": "barrier"},
       {"op": "bcast", "root": 1, "bytes": 4096}, {"op": "allreduce", "bytes": 800}, {"op": "compute", "flops": 1e6},
       {"op": "alltoall", "bytes": 10}]
    ]}"#;

    fn platform() -> Platform {
        crate::mpi::platform_file::load_json(
            r#"{"cluster": {"count": 3, "speed": 1e9, "cores": 1},
                "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 1e-5, "eager_threshold": 65536}}"#,
        )
        .unwrap()
    }

    fn shared(text: &str) -> Result<Trace> {
        trace_from_shared(text, TiOptions::default())
    }

    fn ranks(parts: &[(usize, &str)]) -> Result<Trace> {
        trace_from_ranks(parts, TiOptions::default())
    }

    fn err(text: &str) -> Error {
        shared(text).unwrap_err()
    }

    fn ops(t: &Trace, r: usize) -> Vec<String> {
        t.spec.ranks[r].iter().map(|o| o.describe()).collect()
    }


    #[test]
    fn ti_same_ops_as_hand_written_json() {
        let ti = shared(TI).unwrap();
        let json = Trace::from_json(JSON).unwrap();
        for r in 0..3 {
            let a: Vec<String> = ti.spec.ranks[r].iter().map(|o| o.describe()).collect();
            let b: Vec<String> = json.spec.ranks[r].iter().map(|o| o.describe()).collect();
            assert_eq!(a, b, "rank {r}");
        }
    }

    #[test]
    fn ti_replays_with_the_json_makespan() {
        let p = platform();
        let opts = SimOptions::default();
        let a = simulate(&p, &shared(TI).unwrap(), &opts);
        let b = simulate(&p, &Trace::from_json(JSON).unwrap(), &opts);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert!(a.makespan > 2.0);
                assert_eq!(a.makespan, b.makespan);
            }
            (a, b) => panic!("{:?} / {:?}", a.err(), b.err()),
        }
    }

    #[test]
    fn ti_ops_are_reserved_once_not_grown() {
        // A rank of 1,000 sends (and its lines, a blank line and a comment among them) and its
        // final waitall: the ops vector is no larger than the rank's lines plus one, where
        // growth by doubling would leave up to half of it empty.
        let mut text = String::from("0 init\n\n# a comment\n");
        for _ in 0..1000 {
            text.push_str("0 isend 1 0 8\n");
        }
        let parts = [(0, text.as_str()), (1, "1 init\n1 compute 10")];
        for t in [ranks(&parts).unwrap(), shared(&format!("{text}1 init\n1 compute 10\n")).unwrap()] {
            let ops = &t.spec.ranks[0];
            assert_eq!(ops.len(), 1001); // the sends and the final waitall
            assert!(ops.capacity() <= 1004, "capacity {}", ops.capacity());
        }
    }

    #[test]
    fn ti_per_rank_texts_equal_shared() {
        let mut per: Vec<String> = vec![String::new(); 3];
        for l in TI.lines().filter(|l| !l.starts_with('#')) {
            let r: usize = l.split(' ').next().unwrap().parse().unwrap();
            per[r].push_str(l);
            per[r].push('\n');
        }
        let parts: Vec<(usize, &str)> = per.iter().enumerate().map(|(r, t)| (r, t.as_str())).collect();
        let a = ranks(&parts).unwrap();
        let b = shared(TI).unwrap();
        assert_eq!(format!("{:?}", a.spec), format!("{:?}", b.spec));
        let e = ranks(&[(0, "0 init\n"), (1, "0 init\n")]).unwrap_err();
        assert_eq!(e.field, "rank 1 line 1");
        assert_eq!(split_rank_field(&e.field), Some((1, "line 1".to_string())));
    }

    #[test]
    fn ti_init_switches_datatype() {
        let t = shared("0 init\n0 isend 1 0 10\n0 send 1 0 10 5\n1 init 1\n1 recv 0 0 10\n1 send 0 0 10\n0 recv 1 0 10\n0 waitall\n1 irecv 0 0 10\n1 wait 0 1 0\n").unwrap();
        let b: Vec<String> = t.spec.ranks[0].iter().map(|o| o.describe()).collect();
        assert_eq!(b[0], "isend(dst=1, bytes=10, tag=0)");
        assert_eq!(b[1], "send(dst=1, bytes=40, tag=0)");
        assert_eq!(t.spec.ranks[1][1].describe(), "send(dst=0, bytes=80, tag=0)");
    }

    #[test]
    fn ti_wait_pops_oldest_with_key() {
        let t = shared(
            "0 isend 1 5 1\n0 isend 1 5 2\n0 isend 1 6 3\n0 wait 0 1 6\n0 wait 0 1 5\n0 wait 0 1 5\n\
             1 irecv 0 5 1\n1 irecv 0 5 1\n1 irecv 0 6 1\n",
        )
        .unwrap();
        let w: Vec<String> = t.spec.ranks[0][3..].iter().map(|o| o.describe()).collect();
        assert_eq!(w, ["wait(req=2)", "wait(req=0)", "wait(req=1)"]);
        // Rank 1 never waits: SimGrid waits for what is left at the end.
        assert!(matches!(t.spec.ranks[1].last(), Some(OpSpec::Waitall)));
    }

    #[test]
    fn test_looks_at_the_oldest_pending_request_and_leaves_it_pending() {
        let t = shared("0 isend 1 5 8\n0 isend 1 5 8\n0 test 0 1 5\n0 wait 0 1 5\n0 test 0 1 9\n1 recv 0 5 8\n1 recv 0 5 8\n").unwrap();
        let ops: Vec<String> = t.spec.ranks[0].iter().map(|o| o.describe()).collect();
        // The test names request 0 and the wait then takes the same one; a test with no
        // pending request of its key writes nothing; request 1 is waited for at the end.
        assert_eq!(ops[2..], ["test(req=0)", "wait(req=0)", "waitall"]);
    }

    #[test]
    fn ti_bad_input_names_the_line() {
        let e = err("0 init\n0 frobnicate 3\n");
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("line 2", "unknown action `frobnicate`"));
        // A v-collective needs one count per rank (here 2 ranks: 1 + 2 counts at least).
        let e = err("0 init\n\n0 gatherv 1 1\n1 init\n");
        assert_eq!(e.field, "line 3");
        assert!(e.reason.contains("takes SEND_COUNT, 2 RECV_COUNTS"), "{e}");
        let e = err("0 send 1 0\n");
        assert!(e.reason.contains("takes DST TAG COUNT"), "{e}");
        let e = err("x init\n");
        assert!(e.reason.contains("expected a rank"), "{e}");
        let e = err("0 send 1 0 3e10\n");
        assert!(e.reason.contains("does not fit"), "{e}");
        let e = err("0 send 1 0 2.5\n");
        assert!(e.reason.contains("whole number"), "{e}");
        let e = err("0 compute nan\n");
        assert!(e.reason.contains("finite"), "{e}");
        let e = err("0 send 1 0 4 99\n");
        assert!(e.reason.contains("unknown datatype id 99"), "{e}");
        let e = err("0 isend 1 0 4\n0 wait 0 1 1\n");
        assert_eq!(e.field, "line 2");
        assert!(e.reason.contains("no pending"), "{e}");
        let e = err("0 send 7 0 4\n1 init\n");
        assert_eq!(e.field, "line 1");
        assert!(e.reason.contains("out of range"), "{e}");
        // A rank without lines below the largest is refused, as the per-rank forms refuse it.
        let e = err("0 init\n# rank 1 has no line\n2 init\n0 compute 1\n2 compute 1\n");
        assert_eq!(e.field, "line 3");
        assert_eq!(e.reason, "rank 2 out of range (lines of 2 ranks given, none for rank 1: the ranks must be 0 to 1, each present)");
        let e = ranks(&[(0, "0 init\n"), (2, "2 init\n")]).unwrap_err();
        assert_eq!(e.field, "rank 2");
        assert_eq!(e.reason, "rank 2 out of range (2 rank texts given, none for rank 1: the ranks must be 0 to 1, each present)");
        let e = err("0 barrier\n1 bcast 4\n");
        assert_eq!(e.field, "line 2");
        let e = err("# nothing\n");
        assert!(e.reason.contains("no actions"), "{e}");
        let e = err("0 send 1 -1 4\n");
        assert!(e.reason.contains("negative"), "{e}");
    }

    fn with_derived(text: &str, bytes: f64) -> Trace {
        trace_from_shared(text, TiOptions::new(Some(bytes)).unwrap()).unwrap()
    }

    /// As `smpirun -trace-ti` writes a program with an MPI_Type_vector (datatype -1).
    const DERIVED: &str = "\
0 init
1 init
0 isend 1 1 60 -1
1 irecv 0 1 60 -1
0 waitall 1
1 waitall 1
0 sendRecv 3 1 3 1 -1 -1
1 sendRecv 3 0 3 0 -1 -1
0 bcast 50 1 -1
1 bcast 50 1 -1
0 gather 2 2 0 -1 -1
1 gather 2 2 0 -1 -1
0 alltoall 4 4 -1 0
1 alltoall 4 4 -1 0
0 allreduce 10 0 0
1 allreduce 10 0 0
";

    #[test]
    fn a_derived_datatype_carries_0_bytes_or_the_size_given_and_is_counted() {
        let t = shared(DERIVED).unwrap();
        assert_eq!(
            ops(&t, 0),
            [
                "isend(dst=1, bytes=0, tag=1)",
                "waitall",
                "sendrecv(dst=1, bytes=0, tag=0, src=1, recvtag=0)",
                "bcast(root=1, bytes=0)",
                "gather(root=0, bytes=0)",
                "alltoall(bytes=0)",
                "allreduce(bytes=80)"
            ]
        );
        // isend, sendRecv, bcast, gather, alltoall on both ranks; not the irecv (the size is the
        // sender's) nor the allreduce of doubles.
        assert_eq!(t.derived_datatype_ops, 9);
        let t = with_derived(DERIVED, 1600.0);
        assert_eq!(ops(&t, 0)[0], "isend(dst=1, bytes=96000, tag=1)");
        assert_eq!(ops(&t, 1)[3..6], ["bcast(root=1, bytes=80000)", "gather(root=0, bytes=3200)", "alltoall(bytes=6400)"]);
        assert_eq!(t.derived_datatype_ops, 9);
        assert_eq!(shared(TI).unwrap().derived_datatype_ops, 0);
        // SimGrid's other ids still need to be known.
        for id in ["-2", "60", "99"] {
            let e = err(&format!("0 send 1 0 4 {id}\n"));
            assert_eq!(e.field, "line 1");
            assert!(e.reason.contains(&format!("unknown datatype id {id}")) && e.reason.contains("-1 for a derived"), "{e}");
        }
    }

    #[test]
    fn derived_datatype_bytes_is_a_whole_number_an_mpi_size_can_be() {
        for ok in [0.0, 1.0, 1600.0, 2147483647.0] {
            assert_eq!(TiOptions::new(Some(ok)).unwrap().derived_datatype_bytes, ok);
        }
        assert_eq!(TiOptions::new(None).unwrap(), TiOptions::default());
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 2147483648.0, 1e300] {
            let e = TiOptions::new(Some(bad)).unwrap_err();
            assert_eq!((e.kind, e.field.as_str()), (crate::error::ErrorKind::Options, "derived_datatype_bytes"), "{bad}");
            assert!(e.reason.contains("whole number of bytes from 0 to 2147483647"), "{e}");
        }
    }

    #[test]
    fn undefined_peers_are_any_source_or_proc_null_and_444_is_any_tag() {
        // Rank 0 sends to MPI_PROC_NULL (blocking and not: the isend's wait and test do
        // nothing), receives from any source (blocking, and an irecv a message is left for),
        // and with any tag; rank 2's sendRecv receives from any source.
        let t = shared(
            "0 send -333 9 10 0\n0 isend -333 9 10 0\n0 test 0 -333 9\n0 wait 0 -333 9\n\
             0 recv -333 6 100 0\n0 irecv -333 7 100 0\n0 wait -333 0 7\n0 recv 1 -444 5 0\n\
             1 send 0 6 100 0\n1 send 0 7 100 0\n1 send 0 12 5 0\n2 sendRecv 5 2 5 -333 0 0\n",
        )
        .unwrap();
        assert_eq!(
            ops(&t, 0),
            ["recv(src=any, tag=6)", "irecv(src=any, tag=7)", "wait(req=0)", "recv(src=1, tag=any)"]
        );
        assert_eq!(ops(&t, 2), ["sendrecv(dst=2, bytes=40, tag=0, src=any, recvtag=0)"]);
        // Keys with -333 and -444 still have to name a pending request.
        let e = err("0 irecv -333 7 1 0\n0 wait 1 0 7\n1 send 0 7 1\n");
        assert_eq!(e.field, "line 2");
        let e = err("0 send -2 0 1\n");
        assert!(e.reason.contains("or -333, MPI_ANY_SOURCE or MPI_PROC_NULL"), "{e}");
        let e = err("0 recv 1 -5 1\n1 send 0 0 1\n");
        assert!(e.reason.contains("or -444, MPI_ANY_TAG"), "{e}");
        assert!(err("0 send 1 -444 1\n").reason.contains("negative"));
    }

    #[test]
    fn an_irecv_from_333_with_no_message_left_is_proc_null() {
        // A line of 3 ranks exchanging with both neighbours, MPI_PROC_NULL past the ends: rank
        // 0's irecv from below and rank 2's from above have nothing to receive.
        let mut text = String::new();
        for r in 0..3i64 {
            let (down, up) = (if r == 0 { -333 } else { r - 1 }, if r == 2 { -333 } else { r + 1 });
            text += &format!(
                "{r} irecv {down} 1 10 0\n{r} irecv {up} 2 10 0\n{r} isend {up} 1 10 0\n{r} isend {down} 2 10 0\n\
                 {r} test {down} {r} 1\n{r} wait {down} {r} 1\n{r} wait {up} {r} 2\n{r} wait {r} {up} 1\n{r} wait {r} {down} 2\n"
            );
        }
        let t = shared(&text).unwrap();
        assert_eq!(ops(&t, 0), ["irecv(src=1, tag=2)", "isend(dst=1, bytes=80, tag=1)", "wait(req=0)", "wait(req=1)"]);
        assert_eq!(ops(&t, 2), ["irecv(src=1, tag=1)", "isend(dst=1, bytes=80, tag=2)", "test(req=0)", "wait(req=0)", "wait(req=1)"]);
        assert_eq!(ops(&t, 1).len(), 9);
        // Lines stay with their ops: an error after the removal names the right line.
        let e = trace_from_shared(&format!("{text}0 wait 0 1 1\n"), TiOptions::default()).unwrap_err();
        assert_eq!(e.field, format!("line {}", text.lines().count() + 1));
        // Two irecv -333 on one tag and one message for them: which is MPI_PROC_NULL is unknown.
        let e = err("0 irecv -333 1 10 0\n0 irecv -333 1 10 0\n1 send 0 1 10 0\n");
        assert_eq!(e.field, "line 1");
        assert!(e.reason.contains("rank 0 has 2 `irecv -333` with tag 1") && e.reason.contains("but 1 message for them"), "{e}");
        // With an any-tag receive, messages of every tag count.
        let t = shared("0 irecv -333 1 10 0\n0 recv 1 -444 10 0\n1 send 0 5 10 0\n1 send 0 6 10 0\n").unwrap();
        assert_eq!(ops(&t, 0)[0], "irecv(src=any, tag=1)");
        let t = shared("0 irecv -333 1 10 0\n0 recv 1 -444 10 0\n1 send 0 5 10 0\n").unwrap();
        assert_eq!(ops(&t, 0), ["recv(src=1, tag=any)"]);
    }

    #[test]
    fn gather_and_scatter_read_the_block_mpi_reads_and_smpiruns_four_argument_form() {
        // MPI_IN_PLACE at a gather's root (SEND 0), a receive count of 0 left out on the other
        // ranks (SEND ROOT DT1 DT2), a scatter whose other ranks pass a send count of 0.
        let t = shared("0 gather 0 30 0 0 0\n1 gather 30 0 0 0\n1 gather 30 30 0 0 0\n0 gather 30 30 0 0 0\n0 scatter 20 20 0 1 1\n1 scatter 0 20 0 1 1\n").unwrap();
        assert_eq!(ops(&t, 0), ["gather(root=0, bytes=240)", "gather(root=0, bytes=240)", "scatter(root=0, bytes=80)"]);
        assert_eq!(ops(&t, 1), ["gather(root=0, bytes=240)", "gather(root=0, bytes=240)", "scatter(root=0, bytes=80)"]);
        // Fewer than four arguments keep SimGrid's reading: SEND RECV [ROOT].
        let t = shared("0 gather 5 5 1\n1 gather 5 5 1\n").unwrap();
        assert_eq!(ops(&t, 0), ["gather(root=1, bytes=5)"]);
    }

    #[test]
    fn ssend_is_a_synchronous_send_and_unreplayable_actions_say_why() {
        let t = shared("0 Ssend 1 3 10 0\n0 ISsend 1 4 10 0\n0 wait 0 1 4\n1 recv 0 3 10 0\n1 recv 0 4 10 0\n").unwrap();
        assert_eq!(t.spec.ranks[0][0], OpSpec::Send { dst: 1, bytes: 80.0, tag: 3, sync: true, comm: 0 });
        assert_eq!(t.spec.ranks[0][1], OpSpec::Isend { dst: 1, bytes: 80.0, tag: 4, sync: true, comm: 0 });
        for (line, words) in [
            ("0 ibcast 100 0 0", "non-blocking collective"),
            ("0 iallreduce 100 0 0", "non-blocking collective"),
            ("0 waitAny 2", "which request completed"),
            ("0 Startall", "persistent"),
            ("0 bsend 1 0 10 0", "MPI_Bsend"),
        ] {
            let e = err(&format!("0 init\n{line}\n"));
            assert_eq!(e.field, "line 2");
            assert!(e.reason.contains(words) && e.reason.contains("SimGrid's replay does not read it either"), "{e}");
        }
        assert_eq!(err("0 frobnicate\n").reason, "unknown action `frobnicate`");
    }
}
