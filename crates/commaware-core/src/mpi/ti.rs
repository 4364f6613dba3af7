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
//!   `gather|scatter SEND RECV [ROOT] [DT1] [DT2]` (block SEND × size(DT1));
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
//!
//! Datatype ids are SimGrid's (`Datatype::decode`), see [`datatype_size`].

use std::collections::{HashMap, VecDeque};

use crate::error::{Error, Result};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec};

/// Actions of SimGrid's replayer that change nothing here: communicators (SimGrid's
/// replay runs every collective on the world communicator and ignores these lines),
/// `location` (source positions) and `comm_size`.
pub const IGNORED: &[&str] = &["comm_size", "comm_split", "comm_dup", "location"];

/// Largest element count SimGrid accepts (it converts counts to a C `int`).
const MAX_COUNT: f64 = i32::MAX as f64;

/// Size in bytes of SimGrid's predefined datatype `id` (the ids `Datatype::decode` knows,
/// sizes of an LP64 Linux host), or `None` for an id it does not know.
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

/// One rank's program being built.
#[derive(Default)]
struct RankBuild {
    ops: Vec<OpSpec>,
    /// Line number (1-based, in its text) of each op.
    lines: Vec<usize>,
    /// Bytes per element of the default datatype (1 until `init` with an argument).
    default_size: Option<f64>,
    /// Pending requests by (source, destination, tag), oldest first.
    pending: HashMap<(usize, usize, i64), VecDeque<usize>>,
    n_requests: usize,
    n_pending: usize,
    /// Line of the last op (for the final waitall).
    last_line: usize,
}

/// Parse a shared TI text (every line starts with its rank) into a trace spec. The rank
/// count is the largest rank seen plus one.
pub fn parse_shared(text: &str) -> Result<(TraceSpec, Vec<Vec<usize>>)> {
    // First the rank count: the per-rank size lists of v-collectives have one entry per rank.
    let mut p = 0;
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
    }
    let mut ranks: Vec<RankBuild> = Vec::new();
    ranks.resize_with(p, RankBuild::default);
    let mut toks: Vec<&str> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if !tokens_into(raw, &mut toks) {
            continue;
        }
        let r = parse_rank(Origin::Shared, line, toks[0], "rank")?;
        action(&mut ranks[r], r, p, Origin::Shared, line, &toks)?;
    }
    finish(ranks)
}

/// Parse one TI text per rank (`(rank, text)`; ranks must be 0..P-1, each once).
pub fn parse_ranks(parts: &[(usize, &str)]) -> Result<(TraceSpec, Vec<Vec<usize>>)> {
    let p = parts.len();
    let mut order: Vec<Option<&str>> = vec![None; p];
    for &(r, text) in parts {
        if r >= p {
            return Err(Error::trace(format!("rank {r}"), format!("rank {r} out of range ({p} rank texts given)")));
        }
        if order[r].is_some() {
            return Err(Error::trace(format!("rank {r}"), "given twice"));
        }
        order[r] = Some(text);
    }
    // The ranks' texts are independent: parse them on every core, then report the first
    // error in rank order (the same error whatever the thread count).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(p.max(1));
    let chunk = p.div_ceil(threads.max(1)).max(1);
    let mut built: Vec<Result<RankBuild>> = Vec::with_capacity(p);
    std::thread::scope(|scope| {
        let handles: Vec<_> = order
            .chunks(chunk)
            .enumerate()
            .map(|(c, texts)| {
                scope.spawn(move || {
                    texts.iter().enumerate().map(|(i, t)| parse_rank_text(c * chunk + i, p, t.unwrap_or(""))).collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            built.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
    });
    finish(built.into_iter().collect::<Result<Vec<_>>>()?)
}

/// Rank `r`'s program from its own text (`p` ranks in all).
fn parse_rank_text(r: usize, p: usize, text: &str) -> Result<RankBuild> {
    let origin = Origin::Rank(r);
    let mut b = RankBuild::default();
    // About 20 bytes a line: reserve once instead of growing.
    b.ops.reserve(text.len() / 20);
    b.lines.reserve(text.len() / 20);
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

/// A validated trace from a shared TI text.
pub fn trace_from_shared(text: &str) -> Result<Trace> {
    let (spec, lines) = parse_shared(text)?;
    Trace::from_spec(spec).map_err(|e| relocate(e, &lines, Origin::Shared))
}

/// A validated trace from one TI text per rank.
pub fn trace_from_ranks(parts: &[(usize, &str)]) -> Result<Trace> {
    let (spec, lines) = parse_ranks(parts)?;
    Trace::from_spec(spec).map_err(|e| relocate(e, &lines, Origin::Rank(0)))
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
    fn push(&mut self, op: OpSpec, line: usize) {
        self.ops.push(op);
        self.lines.push(line);
        self.last_line = line;
    }

    fn datatype(&self, o: Origin, line: usize, tok: Option<&&str>) -> Result<f64> {
        let Some(tok) = tok else { return Ok(self.default_size.unwrap_or(1.0)) };
        let id: i64 = tok.parse().map_err(|_| Error::trace(o.field(line), format!("expected a datatype id (an integer), got `{tok}`")))?;
        datatype_size(id).ok_or_else(|| Error::trace(o.field(line), format!("unknown datatype id {id}")))
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

    fn post(&mut self, key: (usize, usize, i64)) {
        self.pending.entry(key).or_default().push_back(self.n_requests);
        self.n_requests += 1;
        self.n_pending += 1;
    }
}

/// Apply one action line (`tokens[0]` is the rank, `tokens[1]` the action) to rank `r`.
fn action(b: &mut RankBuild, r: usize, p: usize, o: Origin, line: usize, tokens: &[&str]) -> Result<()> {
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
        _ if IGNORED.contains(&name) => {}
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
        "send" | "isend" => {
            arity(3, 4, "DST TAG COUNT [DATATYPE]")?;
            let dst = parse_rank(o, line, args[0], "destination rank")?;
            let tag = parse_tag(o, line, args[1])?;
            let bytes = parse_count(o, line, args[2])? * b.datatype(o, line, args.get(3))?;
            if name == "send" {
                b.push(OpSpec::Send { dst, bytes, tag, sync: false, comm: 0 }, line);
            } else {
                b.push(OpSpec::Isend { dst, bytes, tag, sync: false, comm: 0 }, line);
                b.post((r, dst, tag));
            }
        }
        "recv" | "irecv" => {
            arity(3, 4, "SRC TAG COUNT [DATATYPE]")?;
            let src = parse_rank(o, line, args[0], "source rank")?;
            let tag = parse_tag(o, line, args[1])?;
            parse_count(o, line, args[2])?;
            b.datatype(o, line, args.get(3))?;
            if name == "recv" {
                b.push(OpSpec::Recv { src: Peer::Rank(src), tag: TagSpec::Value(tag), comm: 0 }, line);
            } else {
                b.push(OpSpec::Irecv { src: Peer::Rank(src), tag: TagSpec::Value(tag), comm: 0 }, line);
                b.post((src, r, tag));
            }
        }
        "wait" => {
            arity(3, 3, "SRC DST TAG")?;
            let src = parse_rank(o, line, args[0], "source rank")?;
            let dst = parse_rank(o, line, args[1], "destination rank")?;
            let tag = parse_tag(o, line, args[2])?;
            let req = b.pending.get_mut(&(src, dst, tag)).and_then(|q| q.pop_front()).ok_or_else(|| {
                Error::trace(o.field(line), format!("no pending isend/irecv with source {src}, destination {dst} and tag {tag} to wait for"))
            })?;
            b.n_pending -= 1;
            b.push(OpSpec::Wait { req }, line);
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
            b.datatype(o, line, args.get(3))?;
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
            let send = parse_count(o, line, args[0])?;
            parse_count(o, line, args[1])?;
            let root = b.root(o, line, args.get(2))?;
            let bytes = send * b.datatype(o, line, args.get(3))?;
            b.datatype(o, line, args.get(4))?;
            b.push(if name == "gather" { OpSpec::Gather { root, bytes, comm: 0 } } else { OpSpec::Scatter { root, bytes, comm: 0 } }, line);
        }
        "allgather" => {
            arity(2, 4, "SEND_COUNT RECV_COUNT [SEND_DATATYPE] [RECV_DATATYPE]")?;
            let send = parse_count(o, line, args[0])?;
            parse_count(o, line, args[1])?;
            let bytes = send * b.datatype(o, line, args.get(2))?;
            b.datatype(o, line, args.get(3))?;
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
            b.datatype(o, line, args.get(p + 3))?;
            let bytes = b.counts(o, line, &args[..p], dt1)?;
            b.push(OpSpec::Scatterv { root, bytes, comm: 0 }, line);
        }
        "alltoallv" => {
            arity(2 * p + 2, 2 * p + 4, &format!("SEND_BUFFER, {p} SEND_COUNTS, RECV_BUFFER, {p} RECV_COUNTS, [SEND_DATATYPE] [RECV_DATATYPE]"))?;
            parse_count(o, line, args[0])?;
            parse_count(o, line, args[p + 1])?;
            let dt1 = b.datatype(o, line, args.get(2 * p + 2))?;
            let dt2 = b.datatype(o, line, args.get(2 * p + 3))?;
            b.counts(o, line, &args[p + 2..2 * p + 2], dt2)?;
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
            let send = parse_count(o, line, args[0])?;
            let dst = parse_rank(o, line, args[1], "destination rank")?;
            parse_count(o, line, args[2])?;
            let src = parse_rank(o, line, args[3], "source rank")?;
            let bytes = send * b.datatype(o, line, args.get(4))?;
            b.datatype(o, line, args.get(5))?;
            b.push(OpSpec::Sendrecv { dst, bytes, tag: 0, src: Peer::Rank(src), recvtag: TagSpec::Value(0), comm: 0 }, line);
        }
        "test" => {
            // SimGrid tests the oldest pending request with that key: consumed if it has
            // completed (a later wait on it returns at once), kept otherwise; no such
            // request, nothing (an earlier test took it).
            arity(3, 3, "SRC DST TAG")?;
            let src = parse_rank(o, line, args[0], "source rank")?;
            let dst = parse_rank(o, line, args[1], "destination rank")?;
            let tag = parse_tag(o, line, args[2])?;
            if let Some(&req) = b.pending.get(&(src, dst, tag)).and_then(|q| q.front()) {
                b.push(OpSpec::Test { req }, line);
            }
        }
        _ => return Err(Error::trace(o.field(line), format!("unknown action `{name}`"))),
    }
    Ok(())
}

/// The spec and each op's line; a rank with requests still pending gets a final waitall.
fn finish(ranks: Vec<RankBuild>) -> Result<(TraceSpec, Vec<Vec<usize>>)> {
    if ranks.is_empty() {
        return Err(Error::trace("", "the trace has no actions"));
    }
    let mut ops = Vec::with_capacity(ranks.len());
    let mut lines = Vec::with_capacity(ranks.len());
    for mut b in ranks {
        if b.n_pending > 0 {
            let l = b.last_line;
            b.push(OpSpec::Waitall, l);
        }
        ops.push(b.ops);
        lines.push(b.lines);
    }
    Ok((TraceSpec { ranks: ops, placement: None }, lines))
}

/// Turn a `ranks[R][I]...` field of a [`Trace::from_spec`] error into the TI line.
fn relocate(mut e: Error, lines: &[Vec<usize>], origin: Origin) -> Error {
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
        .and_then(|i| lines.get(r)?.get(i).copied());
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

    fn err(text: &str) -> Error {
        trace_from_shared(text).unwrap_err()
    }

    #[test]
    fn ti_same_ops_as_hand_written_json() {
        let ti = trace_from_shared(TI).unwrap();
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
        let a = simulate(&p, &trace_from_shared(TI).unwrap(), &opts);
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
    fn ti_per_rank_texts_equal_shared() {
        let mut per: Vec<String> = vec![String::new(); 3];
        for l in TI.lines().filter(|l| !l.starts_with('#')) {
            let r: usize = l.split(' ').next().unwrap().parse().unwrap();
            per[r].push_str(l);
            per[r].push('\n');
        }
        let parts: Vec<(usize, &str)> = per.iter().enumerate().map(|(r, t)| (r, t.as_str())).collect();
        let a = trace_from_ranks(&parts).unwrap();
        let b = trace_from_shared(TI).unwrap();
        assert_eq!(format!("{:?}", a.spec), format!("{:?}", b.spec));
        let e = trace_from_ranks(&[(0, "0 init\n"), (1, "0 init\n")]).unwrap_err();
        assert_eq!(e.field, "rank 1 line 1");
        assert_eq!(split_rank_field(&e.field), Some((1, "line 1".to_string())));
    }

    #[test]
    fn ti_init_switches_datatype() {
        let t = trace_from_shared("0 init\n0 isend 1 0 10\n0 send 1 0 10 5\n1 init 1\n1 recv 0 0 10\n1 send 0 0 10\n0 recv 1 0 10\n0 waitall\n1 irecv 0 0 10\n1 wait 0 1 0\n").unwrap();
        let b: Vec<String> = t.spec.ranks[0].iter().map(|o| o.describe()).collect();
        assert_eq!(b[0], "isend(dst=1, bytes=10, tag=0)");
        assert_eq!(b[1], "send(dst=1, bytes=40, tag=0)");
        assert_eq!(t.spec.ranks[1][1].describe(), "send(dst=0, bytes=80, tag=0)");
    }

    #[test]
    fn ti_wait_pops_oldest_with_key() {
        let t = trace_from_shared(
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
        let t = trace_from_shared("0 isend 1 5 8\n0 isend 1 5 8\n0 test 0 1 5\n0 wait 0 1 5\n0 test 0 1 9\n1 recv 0 5 8\n1 recv 0 5 8\n").unwrap();
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
        let e = err("0 barrier\n1 bcast 4\n");
        assert_eq!(e.field, "line 2");
        let e = err("# nothing\n");
        assert!(e.reason.contains("no actions"), "{e}");
        let e = err("0 send 1 -1 4\n");
        assert!(e.reason.contains("negative"), "{e}");
    }
}
