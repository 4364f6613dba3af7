//! The simulated run as a Perfetto trace (`simulate … --timeline FILE.perfetto-trace`, or
//! `.pftrace`), which ui.perfetto.dev opens in any browser: a stream of `TracePacket`s as
//! Perfetto's `protos/perfetto/trace/trace.proto` defines them, each written as the `packet`
//! field (1) of a `Trace` message, so the file is one `Trace`.
//!
//! * Tracks: a process track per host that runs ranks (its pid the host's index + 1, named
//!   after the host), under it a thread track per rank (tid rank + 1, `rank N`), in rank
//!   order.
//! * Slices: each trace operation of a rank, from its start to its end, named as Score-P
//!   names the MPI call (`MPI_Send`, `MPI_Bcast`, …, `compute`, `sleep`), with the
//!   operation's fields as arguments (`bytes`, `dst` or `src`, `tag`, `root`, `comm`, … as
//!   the trace gives them).
//! * Messages: a `send` instant on the sender's track when the send is posted and a
//!   `receive` instant on the receiver's when its receive completes, joined by a flow (the
//!   message's id + 1), each with `bytes`, the peer and `tag` (-1 for a collective's
//!   messages).
//! * Link load (always, as in the Paje file): a counter track per link under a `links`
//!   track, created when the link first carries a flow, set to its load (B/s, the sum of its
//!   flows' rates) at each change.
//!
//! Times are nanoseconds (Perfetto's unit), rounded. Packets go out as the replay reports
//! events (in time order), so nothing of the run is held but the output buffer and a name
//! and a flag per link.

use std::io::Write;
use std::path::Path;

use super::otf2::region_name;
use super::{create_file, write_error, ShownLinks, TimelineMessage, TimelineOp, TimelineRun, TimelineSink};
use crate::error::Result;
use crate::mpi::ops::OP_NAMES;

/// Track uuids: a host's, a rank's and a link's are these plus its index.
const HOST_TRACK: u64 = 1 << 32;
const RANK_TRACK: u64 = 2 << 32;
const LINKS_TRACK: u64 = 3 << 32;
const LINK_TRACK: u64 = 4 << 32;
/// The packets' sequence (one writer, one sequence).
const SEQUENCE: u64 = 1;

/// `TrackEvent.Type`.
const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
const INSTANT: u64 = 3;
const COUNTER: u64 = 4;

/// Protobuf's wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

/// Appends protobuf fields to a buffer.
mod wire {
    use super::{FIXED64, LEN, VARINT};

    pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        buf.push(v as u8);
    }

    pub fn key(buf: &mut Vec<u8>, field: u32, wire: u32) {
        varint(buf, u64::from(field << 3 | wire));
    }

    pub fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
        key(buf, field, VARINT);
        varint(buf, v);
    }

    /// An `int32` or `int64` field (a negative value takes ten bytes, as protobuf has it).
    pub fn int(buf: &mut Vec<u8>, field: u32, v: i64) {
        uint(buf, field, v as u64);
    }

    pub fn double(buf: &mut Vec<u8>, field: u32, v: f64) {
        key(buf, field, FIXED64);
        buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn fixed64(buf: &mut Vec<u8>, field: u32, v: u64) {
        key(buf, field, FIXED64);
        buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn bytes(buf: &mut Vec<u8>, field: u32, data: &[u8]) {
        key(buf, field, LEN);
        varint(buf, data.len() as u64);
        buf.extend_from_slice(data);
    }
}

/// A value of a slice's argument (`DebugAnnotation`).
#[derive(Debug, Clone, Copy)]
enum Arg<'a> {
    Int(i64),
    Double(f64),
    Str(&'a str),
}

/// Nanoseconds of `t` seconds.
fn nanos(t: f64) -> u64 {
    (t * 1e9).round() as u64
}

/// Writes a Perfetto trace to `W` as the replay reports the run.
pub struct PerfettoWriter<W: Write> {
    out: W,
    shown_as: String,
    /// Scratch buffers: a packet's head (its field key and length), the packet, its track
    /// event or descriptor, and a nested message of that.
    head: Vec<u8>,
    packet: Vec<u8>,
    body: Vec<u8>,
    nested: Vec<u8>,
    /// The platform's links, and which have a track yet.
    links: ShownLinks,
}

/// Open a Perfetto writer on the file `path` (named `shown_as` in errors).
pub fn open(path: &Path, shown_as: &str) -> Result<Box<dyn TimelineSink + Send>> {
    Ok(Box::new(PerfettoWriter::new(create_file(path, shown_as)?, shown_as)))
}

impl<W: Write> PerfettoWriter<W> {
    pub fn new(out: W, shown_as: &str) -> Self {
        PerfettoWriter {
            out,
            shown_as: shown_as.to_string(),
            head: Vec::new(),
            packet: Vec::new(),
            body: Vec::new(),
            nested: Vec::new(),
            links: ShownLinks::default(),
        }
    }

    /// The writer's output (after [`TimelineSink::end`]).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Write `body` as field `field` of a packet at `time` (ns; none for a descriptor), the
    /// packet as a `Trace.packet`.
    fn emit(&mut self, time: Option<u64>, field: u32) -> Result<()> {
        self.packet.clear();
        if let Some(t) = time {
            wire::uint(&mut self.packet, 8, t);
        }
        wire::uint(&mut self.packet, 10, SEQUENCE);
        wire::bytes(&mut self.packet, field, &self.body);
        self.head.clear();
        wire::key(&mut self.head, 1, LEN);
        wire::varint(&mut self.head, self.packet.len() as u64);
        self.out.write_all(&self.head).and_then(|()| self.out.write_all(&self.packet)).map_err(|e| write_error(&self.shown_as, e))
    }

    /// A `TrackDescriptor`: `uuid`, `parent`, `name`, then `extra` (its `process`, `thread` or
    /// `counter`, already in `nested` as field `extra.0`) and `order` (its rank among its
    /// siblings).
    fn track(&mut self, uuid: u64, parent: Option<u64>, name: &str, extra: Option<u32>, order: Option<i64>) -> Result<()> {
        self.body.clear();
        wire::uint(&mut self.body, 1, uuid);
        wire::bytes(&mut self.body, 2, name.as_bytes());
        if let Some(p) = parent {
            wire::uint(&mut self.body, 5, p);
        }
        if let Some(field) = extra {
            wire::bytes(&mut self.body, field, &self.nested);
        }
        if let Some(rank) = order {
            wire::int(&mut self.body, 12, rank);
        } else {
            // Children in the order of their `sibling_order_rank`.
            wire::uint(&mut self.body, 11, 3);
        }
        self.emit(None, 60)
    }

    /// Start a `TrackEvent` of `kind` on `track` in `body`.
    fn event(&mut self, kind: u64, track: u64, name: Option<&str>) {
        self.body.clear();
        wire::uint(&mut self.body, 9, kind);
        wire::uint(&mut self.body, 11, track);
        if let Some(n) = name {
            wire::bytes(&mut self.body, 23, n.as_bytes());
        }
    }

    /// Start the slice of `rank`'s operation `op` (an [`OP_NAMES`] code) in `body`.
    fn begin_slice(&mut self, rank: u32, op: u8) {
        let name = region_name(OP_NAMES[op as usize]);
        self.event(SLICE_BEGIN, RANK_TRACK + u64::from(rank), Some(&name));
    }

    /// Add an argument to the event in `body`.
    fn arg(&mut self, name: &str, value: Arg<'_>) {
        self.nested.clear();
        wire::bytes(&mut self.nested, 10, name.as_bytes());
        match value {
            Arg::Int(v) => wire::int(&mut self.nested, 4, v),
            Arg::Double(v) => wire::double(&mut self.nested, 5, v),
            Arg::Str(s) => wire::bytes(&mut self.nested, 6, s.as_bytes()),
        }
        wire::bytes(&mut self.body, 4, &self.nested);
    }

    /// A message's instant on `rank`'s track at `time`: its flow out (`send`) or in.
    fn message(&mut self, m: &TimelineMessage, send: bool) -> Result<()> {
        let (rank, peer, time) = if send { (m.src_rank, ("dst", m.dst_rank), m.posted) } else { (m.dst_rank, ("src", m.src_rank), m.received) };
        self.event(INSTANT, RANK_TRACK + u64::from(rank), Some(if send { "send" } else { "receive" }));
        wire::fixed64(&mut self.body, if send { 47 } else { 48 }, m.id + 1);
        self.arg("bytes", Arg::Double(m.bytes));
        self.arg(peer.0, Arg::Int(i64::from(peer.1)));
        self.arg("tag", Arg::Int(m.tag));
        self.arg("op", Arg::Str(OP_NAMES[m.op as usize]));
        self.emit(Some(nanos(time)), 11)
    }
}

impl<W: Write> TimelineSink for PerfettoWriter<W> {
    fn begin(&mut self, run: &TimelineRun<'_>) -> Result<()> {
        // Only the hosts that run ranks (a star may have millions).
        let mut used = vec![false; run.host_names.len()];
        for &h in run.rank_hosts {
            used[h] = true;
        }
        for (h, name) in run.host_names.iter().enumerate().filter(|&(h, _)| used[h]) {
            self.nested.clear();
            wire::int(&mut self.nested, 1, h as i64 + 1);
            wire::bytes(&mut self.nested, 6, name.as_bytes());
            self.track(HOST_TRACK + h as u64, None, name, Some(3), None)?;
        }
        for (r, &h) in run.rank_hosts.iter().enumerate() {
            let name = format!("rank {r}");
            self.nested.clear();
            wire::int(&mut self.nested, 1, h as i64 + 1);
            wire::int(&mut self.nested, 2, r as i64 + 1);
            wire::bytes(&mut self.nested, 5, name.as_bytes());
            self.track(RANK_TRACK + r as u64, Some(HOST_TRACK + h as u64), &name, Some(4), Some(r as i64))?;
        }
        Ok(())
    }

    fn enter(&mut self, time: f64, rank: u32, op: u8) -> Result<()> {
        self.begin_slice(rank, op);
        self.emit(Some(nanos(time)), 11)
    }

    fn wants_ops(&self) -> bool {
        true
    }

    fn enter_op(&mut self, time: f64, rank: u32, op: &TimelineOp<'_>) -> Result<()> {
        self.begin_slice(rank, op.code);
        // The operation's fields as the trace gives them.
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(op.spec) {
            for (key, value) in &fields {
                match value {
                    serde_json::Value::Number(n) if key != "op" => match n.as_i64() {
                        Some(i) => self.arg(key, Arg::Int(i)),
                        None => self.arg(key, Arg::Double(n.as_f64().unwrap_or(f64::NAN))),
                    },
                    serde_json::Value::String(s) if key != "op" => self.arg(key, Arg::Str(s)),
                    // A flag only when set (`sync`).
                    serde_json::Value::Bool(true) => self.arg(key, Arg::Int(1)),
                    serde_json::Value::Array(items) if !items.is_empty() => self.arg(key, Arg::Str(&value.to_string())),
                    _ => {}
                }
            }
        }
        self.emit(Some(nanos(time)), 11)
    }

    fn leave(&mut self, time: f64, rank: u32) -> Result<()> {
        self.event(SLICE_END, RANK_TRACK + u64::from(rank), None);
        self.emit(Some(nanos(time)), 11)
    }

    fn send(&mut self, m: &TimelineMessage) -> Result<()> {
        self.message(m, true)
    }

    fn receive(&mut self, m: &TimelineMessage) -> Result<()> {
        self.message(m, false)
    }

    fn wants_links(&self) -> bool {
        true
    }

    fn links(&mut self, links: &[(String, f64)]) -> Result<()> {
        self.links = ShownLinks::new(links);
        Ok(())
    }

    fn link_load(&mut self, time: f64, link: u32, load: f64) -> Result<()> {
        let Some(first) = self.links.load(link, load) else { return Ok(()) };
        if first {
            if self.links.order.len() == 1 {
                self.track(LINKS_TRACK, None, "links", None, None)?;
            }
            // CounterDescriptor { unit_name: "B/s" }.
            self.nested.clear();
            wire::bytes(&mut self.nested, 6, b"B/s");
            let name = std::mem::take(&mut self.links.links[link as usize].0);
            let written = self.track(LINK_TRACK + u64::from(link), Some(LINKS_TRACK), &name, Some(8), Some(i64::from(link)));
            self.links.links[link as usize].0 = name;
            written?;
        }
        self.event(COUNTER, LINK_TRACK + u64::from(link), None);
        wire::double(&mut self.body, 44, load);
        self.emit(Some(nanos(time)), 11)
    }

    fn end(&mut self, _makespan: f64) -> Result<()> {
        self.out.flush().map_err(|e| write_error(&self.shown_as, e))
    }
}

/// A job's slice on one lane of a schedule's timeline (`cosched run --timeline`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobSlice {
    /// The lane (a thread track), numbered across groups.
    pub lane: u32,
    pub start: f64,
    pub end: f64,
    pub id: u64,
    pub procs: u64,
    pub submit: f64,
}

/// A schedule as a Perfetto trace on the file `path` (named `shown_as` in errors): a process
/// track per group (`groups[g]`: its name and its lanes; a node, or the whole cluster), under
/// it a thread track per lane (`slot N`), and on the lanes the jobs' slices (`job ID`, with
/// `id`, `procs`, `submit_s` and `wait_s` as arguments), written in time order.
pub fn write_schedule(path: &Path, shown_as: &str, groups: &[(String, u32)], slices: &[JobSlice]) -> Result<()> {
    let mut w = PerfettoWriter::new(create_file(path, shown_as)?, shown_as);
    let mut lane = 0u32;
    for (g, (name, lanes)) in groups.iter().enumerate() {
        w.nested.clear();
        wire::int(&mut w.nested, 1, g as i64 + 1);
        wire::bytes(&mut w.nested, 6, name.as_bytes());
        w.track(HOST_TRACK + g as u64, None, name, Some(3), Some(g as i64))?;
        for k in 0..*lanes {
            let title = format!("slot {k}");
            w.nested.clear();
            wire::int(&mut w.nested, 1, g as i64 + 1);
            wire::int(&mut w.nested, 2, i64::from(lane) + 1);
            wire::bytes(&mut w.nested, 5, title.as_bytes());
            w.track(RANK_TRACK + u64::from(lane), Some(HOST_TRACK + g as u64), &title, Some(4), Some(i64::from(k)))?;
            lane += 1;
        }
    }
    // Ends before starts at the same time: a lane's next job begins after its last one ended.
    let mut order: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * slices.len());
    for (i, s) in slices.iter().enumerate() {
        order.push((nanos(s.start), true, i));
        order.push((nanos(s.end), false, i));
    }
    order.sort_unstable();
    for (time, begins, i) in order {
        let s = &slices[i];
        let track = RANK_TRACK + u64::from(s.lane);
        if begins {
            w.event(SLICE_BEGIN, track, Some(&format!("job {}", s.id)));
            w.arg("id", Arg::Int(s.id as i64));
            w.arg("procs", Arg::Int(s.procs as i64));
            w.arg("submit_s", Arg::Double(s.submit));
            w.arg("wait_s", Arg::Double(s.start - s.submit));
        } else {
            w.event(SLICE_END, track, None);
        }
        w.emit(Some(time), 11)?;
    }
    w.out.flush().map_err(|e| write_error(shown_as, e))
}
