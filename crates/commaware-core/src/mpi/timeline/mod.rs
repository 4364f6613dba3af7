//! The timeline of a replay for the viewers users already have (ViTE and pajeng read Paje,
//! Vampir reads OTF2, ui.perfetto.dev reads Perfetto's traces in any browser): what each
//! rank is doing and every message, streamed to a
//! [`TimelineSink`] while the replay runs.
//!
//! The replay reports through its [`crate::mpi::replay::Observer`], the same path as the
//! `--json` messages and the Gantt intervals: an observer that wants a timeline hands out
//! its sink ([`crate::mpi::replay::Observer::timeline_sink`]).
//!
//! Every call comes at the replay's current simulated time, so the calls are in
//! nondecreasing time order across all ranks and messages, not only per rank: a writer can
//! write each event as it comes, and keeps only what it needs per rank or per open message.
//! Writers are picked by the file's extension in [`FORMATS`].

pub mod otf2;
pub mod paje;
pub mod perfetto;

use std::path::Path;

use crate::error::{Error, ErrorKind, Result};
use crate::mpi::ops::OpSpec;

/// The run a timeline is about, given once to [`TimelineSink::begin`] before any event.
#[derive(Debug, Clone, Copy)]
pub struct TimelineRun<'a> {
    /// The platform's host names, indexed by host.
    pub host_names: &'a [String],
    /// The host of each rank (index into `host_names`), indexed by rank.
    pub rank_hosts: &'a [usize],
    /// The trace's communicators, world ranks in communicator rank order; 0 is the world
    /// (`Trace::communicators`).
    pub comms: &'a [Vec<u32>],
}

/// A trace operation as [`TimelineSink::enter_op`] gets it.
#[derive(Debug, Clone, Copy)]
pub struct TimelineOp<'a> {
    /// Its index into [`crate::mpi::ops::OP_NAMES`].
    pub code: u8,
    pub spec: &'a OpSpec,
    /// Its communicator (an index into [`TimelineRun::comms`]), the rank's rank in it and its size.
    pub comm: u32,
    pub me: usize,
    pub size: usize,
}

/// A message as the timeline sees it. [`TimelineSink::send`] gets it when the send is
/// posted (`start`, `arrived` and `received` are NaN then); [`TimelineSink::receive`] gets
/// it again, every time set, when the receiver's request completes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineMessage {
    /// Unique in the run, in posting order: pairs a `receive` with its `send`.
    pub id: u64,
    pub src_rank: u32,
    pub dst_rank: u32,
    pub bytes: f64,
    /// User tag; -1 for the messages of collectives.
    pub tag: i64,
    /// The sender's operation that sent it, an index into [`crate::mpi::ops::OP_NAMES`]
    /// (`send`, `isend`, `sendrecv`, or the collective, e.g. `bcast`).
    pub op: u8,
    /// When the send was posted (after the sender's overhead), s.
    pub posted: f64,
    /// When the transfer started (at posting for an eager message, when both sides are
    /// posted for a rendezvous one), s; the `start` of the `--json` message.
    pub start: f64,
    /// When its last byte arrived, s; the `end` of the `--json` message.
    pub arrived: f64,
    /// When the receiver's request completed (arrived and matched, plus the receive
    /// overhead), s.
    pub received: f64,
}

/// Where a replay's timeline goes. The replay calls [`begin`](TimelineSink::begin) first,
/// then the events as they happen in nondecreasing `time`, then
/// [`end`](TimelineSink::end) once the run finished without error (after an error, no more
/// calls: the caller drops the sink and discards what it wrote). An error returned by
/// any method stops the replay and is returned by it.
pub trait TimelineSink {
    /// The run's hosts and ranks, at time 0 before any event.
    fn begin(&mut self, run: &TimelineRun<'_>) -> Result<()>;
    /// `rank` starts operation `op` of its trace at `time`: an index into
    /// [`crate::mpi::ops::OP_NAMES`] (`compute` and `sleep` included; a collective by its
    /// name, e.g. `bcast`). It stays in it until the next [`leave`](TimelineSink::leave) of
    /// that rank, which always comes before its next `enter`.
    fn enter(&mut self, time: f64, rank: u32, op: u8) -> Result<()>;
    /// `rank` ends the operation it entered last, at `time` (possibly the time it entered).
    fn leave(&mut self, time: f64, rank: u32) -> Result<()>;
    /// A message is posted, at `m.posted`, by `m.src_rank` (inside the state it entered).
    fn send(&mut self, m: &TimelineMessage) -> Result<()>;
    /// The message's receive completed, at `m.received`, on `m.dst_rank`.
    fn receive(&mut self, m: &TimelineMessage) -> Result<()>;
    /// The run is over: `makespan` is its last time. Flush and close what was written.
    fn end(&mut self, makespan: f64) -> Result<()>;
    /// Whether this timeline writes MPI's own records (an OTF2 archive as Score-P writes it):
    /// then the replay calls [`enter_op`](TimelineSink::enter_op) instead of
    /// [`enter`](TimelineSink::enter), and reports the user requests its waits and tests
    /// complete ([`request_done`](TimelineSink::request_done)) and the tests that find one
    /// unfinished ([`request_tested`](TimelineSink::request_tested)).
    fn wants_ops(&self) -> bool {
        false
    }
    /// [`enter`](TimelineSink::enter), with the operation itself.
    fn enter_op(&mut self, time: f64, rank: u32, op: &TimelineOp<'_>) -> Result<()> {
        self.enter(time, rank, op.code)
    }
    /// User request `req` of `rank` (its number in the rank's posting order of isends and
    /// irecvs) is completed by the wait or test the rank is in; `matched`: the world rank and
    /// tag of the message a receive request got.
    fn request_done(&mut self, _time: f64, _rank: u32, _req: u32, _matched: Option<(u32, i64)>) -> Result<()> {
        Ok(())
    }
    /// A test of `rank` found user request `req` unfinished.
    fn request_tested(&mut self, _time: f64, _rank: u32, _req: u32) -> Result<()> {
        Ok(())
    }
    /// Whether this timeline shows the links' load over time: then the replay keeps link
    /// statistics, gives the links once after [`begin`](TimelineSink::begin), and each
    /// change of a link's load as it happens.
    fn wants_links(&self) -> bool {
        false
    }
    /// Every link of the platform, indexed as [`link_load`](TimelineSink::link_load) numbers
    /// them: its name and bandwidth (B/s).
    fn links(&mut self, _links: &[(String, f64)]) -> Result<()> {
        Ok(())
    }
    /// Link `link` carries `load` B/s (the sum of its flows' rates) from `time` on.
    fn link_load(&mut self, _time: f64, _link: u32, _load: f64) -> Result<()> {
        Ok(())
    }
}

/// A writer's constructor: the file to write, and its name as errors show it.
pub type OpenWriter = fn(path: &Path, shown_as: &str) -> Result<Box<dyn TimelineSink + Send>>;

/// The timeline writers by file extension (lower case, no dot): the only dispatch table.
pub const FORMATS: &[(&str, OpenWriter)] = &[
    ("paje", paje::open),
    ("trace", paje::open),
    ("otf2", otf2::open),
    ("perfetto-trace", perfetto::open),
    ("pftrace", perfetto::open),
];

/// The extensions `--timeline` accepts, as `.paje, .trace`.
pub fn extensions() -> String {
    FORMATS.iter().map(|(ext, _)| format!(".{ext}")).collect::<Vec<_>>().join(", ")
}

/// The writer for `shown_as`'s extension, writing to `path` (the two differ when the
/// caller writes a partial file first and renames it once complete).
pub fn open(path: &Path, shown_as: &str) -> Result<Box<dyn TimelineSink + Send>> {
    let ext = Path::new(shown_as).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match FORMATS.iter().find(|(e, _)| *e == ext) {
        Some((_, open)) => open(path, shown_as),
        None => Err(Error {
            kind: ErrorKind::Options,
            source: shown_as.to_string(),
            field: "timeline".into(),
            reason: format!("a timeline is written to a {} file", extensions()),
        }),
    }
}

/// The platform's links as a timeline shows them: a link appears when it first carries a flow
/// (a link that stays idle is left out), in that order.
#[derive(Debug, Default)]
pub(crate) struct ShownLinks {
    /// Each link's name and bandwidth (B/s), as [`TimelineSink::links`] gives them.
    pub links: Vec<(String, f64)>,
    shown: Vec<bool>,
    /// The links shown, in the order they appeared.
    pub order: Vec<u32>,
}

impl ShownLinks {
    pub fn new(links: &[(String, f64)]) -> Self {
        ShownLinks { links: links.to_vec(), shown: vec![false; links.len()], order: Vec::new() }
    }

    /// Whether a load of `load` on `link` is shown, and whether it is the link's first
    /// (it is shown from now on): `None` for an unknown link, or an idle one not shown yet.
    pub fn load(&mut self, link: u32, load: f64) -> Option<bool> {
        let l = link as usize;
        if l >= self.links.len() || (!self.shown[l] && load == 0.0) {
            return None;
        }
        let first = !self.shown[l];
        if first {
            self.shown[l] = true;
            self.order.push(link);
        }
        Some(first)
    }
}

/// The file `path` created for a streamed timeline, buffered (named `shown_as` in errors).
pub(crate) fn create_file(path: &Path, shown_as: &str) -> Result<std::io::BufWriter<std::fs::File>> {
    let file = std::fs::File::create(path).map_err(|e| write_error(shown_as, e))?;
    Ok(std::io::BufWriter::with_capacity(1 << 20, file))
}

/// The error of a failed write to `shown_as`.
pub(crate) fn write_error(shown_as: &str, e: std::io::Error) -> Error {
    Error { kind: ErrorKind::Output, source: shown_as.to_string(), field: String::new(), reason: format!("cannot write: {e}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::ops::OP_NAMES;
    use crate::mpi::replay::{simulate_observed, Collect, Observer, SimOptions};
    use crate::mpi::trace::Trace;

    /// Keeps what the replay streamed, and the messages of the `--json` path beside it.
    #[derive(Default)]
    struct Kept {
        events: Vec<(f64, String)>,
        sends: Vec<TimelineMessage>,
        receives: Vec<TimelineMessage>,
        collect: Collect,
        ended: Option<f64>,
    }
    impl TimelineSink for Kept {
        fn begin(&mut self, run: &TimelineRun<'_>) -> Result<()> {
            self.events.push((0.0, format!("begin {:?}", run.rank_hosts)));
            Ok(())
        }
        fn enter(&mut self, time: f64, rank: u32, op: u8) -> Result<()> {
            self.events.push((time, format!("enter {rank} {}", OP_NAMES[op as usize])));
            Ok(())
        }
        fn leave(&mut self, time: f64, rank: u32) -> Result<()> {
            self.events.push((time, format!("leave {rank}")));
            Ok(())
        }
        fn send(&mut self, m: &TimelineMessage) -> Result<()> {
            self.events.push((m.posted, format!("send {}", m.id)));
            self.sends.push(*m);
            Ok(())
        }
        fn receive(&mut self, m: &TimelineMessage) -> Result<()> {
            self.events.push((m.received, format!("receive {}", m.id)));
            self.receives.push(*m);
            Ok(())
        }
        fn end(&mut self, makespan: f64) -> Result<()> {
            self.ended = Some(makespan);
            Ok(())
        }
    }
    struct WithSink(Kept);
    impl Observer for WithSink {
        fn wants_messages(&self) -> bool {
            true
        }
        fn message(&mut self, m: &crate::mpi::replay::MessageRecord) -> Result<()> {
            self.0.collect.message(m)
        }
        fn timeline_sink(&mut self) -> Option<&mut dyn TimelineSink> {
            Some(&mut self.0)
        }
    }

    fn run(trace: &str) -> Kept {
        // 1 MB/s, no latency, eager below 64 KiB.
        let p = crate::mpi::platform_file::load_json(
            r#"{"cluster": {"count": 4, "speed": 1e9}, "network": {"bandwidth": 1e6, "latency": 0, "eager_threshold": 65536}}"#,
        )
        .unwrap();
        let t = Trace::from_json(trace).unwrap();
        let mut obs = WithSink(Kept::default());
        simulate_observed(&p, &t, &SimOptions::default(), crate::engine::interference::compute_rate(&p), &mut obs).unwrap();
        obs.0
    }

    #[test]
    fn a_compute_then_send_is_streamed_in_time_order_with_its_times() {
        // Rank 0 computes 1 s (1e9 flops at 1 Gflop/s), then sends 1000 bytes eager (1 ms
        // at 1 MB/s); rank 1 waits in its receive from 0 to 1.001 s.
        let k = run(
            r#"{"ranks": [[{"op": "compute", "flops": 1e9}, {"op": "send", "dst": 1, "bytes": 1000, "tag": 5}],
                           [{"op": "recv", "src": 0, "tag": 5}]]}"#,
        );
        let shown: Vec<(f64, &str)> = k.events.iter().map(|(t, e)| (*t, e.as_str())).collect();
        assert_eq!(
            shown,
            [
                (0.0, "begin [0, 1]"),
                (0.0, "enter 0 compute"),
                (0.0, "enter 1 recv"),
                (1.0, "leave 0"),
                (1.0, "enter 0 send"),
                (1.0, "send 0"),
                (1.0, "leave 0"),
                (1.001, "receive 0"),
                (1.001, "leave 1"),
            ]
        );
        assert_eq!(k.ended, Some(1.001));
        let m = k.receives[0];
        assert_eq!((m.src_rank, m.dst_rank, m.bytes, m.tag, OP_NAMES[m.op as usize]), (0, 1, 1000.0, 5, "send"));
        assert_eq!((m.posted, m.start, m.arrived, m.received), (1.0, 1.0, 1.001, 1.001));
        assert!(k.sends[0].posted == 1.0 && k.sends[0].start.is_nan() && k.sends[0].received.is_nan());
    }

    #[test]
    fn collectives_are_one_state_and_their_messages_match_the_json_path() {
        let k = run(
            r#"{"ranks": [[{"op": "bcast", "root": 0, "bytes": 100000}, {"op": "alltoall", "bytes": 2000}],
                           [{"op": "bcast", "root": 0, "bytes": 100000}, {"op": "alltoall", "bytes": 2000}],
                           [{"op": "bcast", "root": 0, "bytes": 100000}, {"op": "alltoall", "bytes": 2000}]]}"#,
        );
        // Time never goes back, across ranks and messages.
        assert!(k.events.windows(2).all(|w| w[0].0 <= w[1].0), "{:?}", k.events);
        for r in 0..3 {
            let (enter, leave) = (format!("enter {r} "), format!("leave {r}"));
            let mine: Vec<&str> =
                k.events.iter().map(|(_, e)| e.as_str()).filter(|e| e.starts_with(&enter) || *e == leave).collect();
            assert_eq!(mine, [format!("enter {r} bcast"), format!("leave {r}"), format!("enter {r} alltoall"), format!("leave {r}")]);
        }
        // Every message sent is received once; the same messages as the --json path, with
        // its start and end.
        let mut ids: Vec<u64> = k.receives.iter().map(|m| m.id).collect();
        ids.sort();
        assert_eq!(ids, (0..k.sends.len() as u64).collect::<Vec<_>>());
        let key = |s: u32, d: u32, b: f64, t0: f64, t1: f64| (s, d, b.to_bits(), t0.to_bits(), t1.to_bits());
        let mut ours: Vec<_> = k.receives.iter().map(|m| key(m.src_rank, m.dst_rank, m.bytes, m.start, m.arrived)).collect();
        let mut json: Vec<_> = k.collect.messages.iter().map(|m| key(m.src_rank, m.dst_rank, m.bytes, m.start, m.end)).collect();
        ours.sort();
        json.sort();
        assert_eq!(ours, json);
        assert!(k.receives.iter().all(|m| m.tag == -1 && m.posted <= m.start && m.arrived <= m.received));
        assert_eq!(k.sends.len(), 2 + 6, "a binomial bcast on 3 ranks, then 6 alltoall messages");
    }
}
