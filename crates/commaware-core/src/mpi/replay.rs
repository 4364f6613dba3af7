//! Trace replay with MPI semantics (the simulator of paper 004 §VI-A).
//!
//! * Matching: a receive matches the earliest posted, unmatched send from its source
//!   (or any) with its tag (or any), per communication context; sends between a pair
//!   are therefore never overtaken.
//! * Eager (fewer bytes than `eager_threshold`): the send is detached; its transfer
//!   starts when it is posted and the sender goes on at once.
//!   With SMPI's `async_small_thresh` below the eager threshold (`network.smpi`; smpirun's
//!   default is 0), an eager message at or above it is still
//!   detached (the sender goes on at once) but its transfer starts only once its receive is
//!   posted too (SimGrid's `Request::start`: no permanent receiver on the mailbox).
//! * Rendezvous (at or above the threshold, or a synchronous send): the transfer
//!   starts once both sides are posted; the send completes when the transfer ends.
//! * A receive completes when its message's last byte arrived, plus the receive
//!   overhead; a send posts after the sender spent the send overhead.
//!
//! Memory follows what is live: each rank walks its program with a [`Cursor`] (collectives
//! are lowered one round at a time), a message's slot is reused once its transfer ended
//! and both its requests were waited for, and per-message records and timeline intervals
//! go to an [`Observer`] as they happen instead of being kept.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use serde::Serialize;

use crate::mpi::collectives::Collectives;
use crate::mpi::graph::GoalKind;
use crate::engine::link_stats::LinkReport;
use crate::engine::{ActKind, Completion, ComputeRate, Engine};
use crate::error::{Error, ErrorKind, Result};
use crate::mpi::placement::{place, Hostfile, Placement};
use crate::network::platform::{Platform, Protocol};
use crate::network::smpi::{SmpiSpec, SmpiTiming};
use crate::network::sharing::{make_model, LinkId, PenaltyCounts};
use crate::mpi::ops::{OpSpec, OP_NAMES};
use crate::mpi::timeline::{TimelineMessage, TimelineOp, TimelineRun, TimelineSink};
use crate::mpi::trace::{Cursor, Step, Trace, CTX_USER, FAN_REQ};

#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Sharing model; `None` uses the platform's `network.model`.
    pub model: Option<String>,
    pub placement: Placement,
    pub seed: u64,
    /// Parameters of the sharing model (name, value), over its defaults and the
    /// platform's `network.parameters`.
    pub params: Vec<(String, f64)>,
    /// Collective algorithms (`collective` or `preset`, name), over the platform's
    /// `network.collectives`.
    pub collectives: Vec<(String, String)>,
    /// SMPI's timing model over the platform's `network.smpi`: a preset (`simgrid-3.32`), or
    /// `none` for none.
    pub smpi: Option<String>,
    /// Keep per-link statistics ([`SimResult::links`]).
    pub link_stats: bool,
    /// An SMPI hostfile placing the ranks (with `placement` explicit): rank i on its i-th slot.
    pub hostfile: Option<Hostfile>,
    /// A routing over the platform's `network.routing` (issue 44), and its seed over
    /// `network.routing_seed`.
    pub routing: Option<String>,
    pub routing_seed: Option<u64>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            model: None,
            placement: Placement::Explicit,
            seed: 0,
            params: Vec::new(),
            collectives: Vec::new(),
            smpi: None,
            link_stats: false,
            hostfile: None,
            routing: None,
            routing_seed: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RankResult {
    pub rank: usize,
    pub host: String,
    /// Time the rank finished its last operation (s).
    pub end: f64,
    /// Time spent computing (s).
    pub compute_seconds: f64,
    /// Time spent blocked in communication (s).
    pub blocked_seconds: f64,
    /// Under a penalty model (paper 004 §VI-A): the mean effective penalty of the
    /// inter-node messages the rank sent; `None` without any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_penalty: Option<f64>,
}

/// One message, reported when its last byte arrived. Fixed size, no strings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageRecord {
    pub src_rank: u32,
    pub dst_rank: u32,
    /// Host indices in the platform.
    pub src_host: u32,
    pub dst_host: u32,
    pub bytes: f64,
    /// User tag; -1 for messages of collectives.
    pub tag: i64,
    /// Trace operation that sent it, an index into [`OP_NAMES`].
    pub op: u8,
    /// When the transfer started (s).
    pub start: f64,
    /// When its last byte arrived: latency first, then the bytes at the shared rate (s).
    pub end: f64,
    /// Under a penalty model (paper 004 §VI-A), for an inter-node message: its effective
    /// penalty, the time it took after its latency over the time alone at its hosts'
    /// single-transfer bandwidth; NaN otherwise.
    pub penalty: f64,
    /// Under a penalty model: the conflict classes it was in (bits of
    /// [`crate::network::sharing::penalty::CLASS_NAMES`]); `None` otherwise.
    pub conflicts: Option<u8>,
}

impl MessageRecord {
    pub fn op_name(&self) -> &'static str {
        OP_NAMES[self.op as usize]
    }
}

/// Kinds of [`Interval`], by index.
pub const INTERVAL_KINDS: [&str; 5] = ["compute", "sleep", "overhead", "wait", "comm"];
const COMPUTE: u8 = 0;
const SLEEP: u8 = 1;
const OVERHEAD: u8 = 2;
const WAIT: u8 = 3;
const COMM: u8 = 4;

/// One stretch of a rank's time, for Gantt charts: `compute`, `sleep`, `overhead`
/// (per-message CPU time), `wait` (partner not ready) or `comm` (data moving).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub rank: u32,
    /// Index into [`INTERVAL_KINDS`].
    pub kind: u8,
    pub start: f64,
    pub end: f64,
}

impl Interval {
    pub fn kind_name(&self) -> &'static str {
        INTERVAL_KINDS[self.kind as usize]
    }
}

/// Totals over all messages, kept whatever is recorded.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct MessageStats {
    pub count: u64,
    pub bytes: f64,
    /// Mean and largest time from transfer start to last byte (s).
    pub mean_seconds: f64,
    pub max_seconds: f64,
}

/// How far a replay is, for progress displays.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time (s).
    pub now: f64,
    /// Engine steps so far.
    pub events: u64,
    /// Messages delivered so far.
    pub messages: u64,
    pub ranks_done: usize,
    pub ranks: usize,
    /// Wall-clock seconds since the replay started.
    pub elapsed: f64,
}

/// What a replay reports while it runs; every method has a default that ignores it.
/// An error returned by a method stops the replay and is returned by it.
pub trait Observer {
    /// Whether to build [`MessageRecord`]s at all.
    fn wants_messages(&self) -> bool {
        false
    }
    /// Whether to build timeline [`Interval`]s at all.
    fn wants_timeline(&self) -> bool {
        false
    }
    fn message(&mut self, _m: &MessageRecord) -> Result<()> {
        Ok(())
    }
    fn interval(&mut self, _i: &Interval) -> Result<()> {
        Ok(())
    }
    /// Seconds between [`Observer::progress`] calls; `None` for no calls.
    fn progress_every(&self) -> Option<f64> {
        None
    }
    fn progress(&mut self, _p: &Progress) -> Result<()> {
        Ok(())
    }
    /// Where to stream the run's timeline (each rank's operations and every message, in
    /// time order; [`crate::mpi::timeline`]); `None`, the default, for no timeline. Asked
    /// once when the replay starts, then for each event.
    fn timeline_sink(&mut self) -> Option<&mut dyn TimelineSink> {
        None
    }
}

/// Records nothing.
pub struct NoObserver;
impl Observer for NoObserver {}

/// Keeps every message and interval in memory, in the order they happened (messages in
/// the order their last byte arrived).
#[derive(Debug, Default)]
pub struct Collect {
    pub messages: Vec<MessageRecord>,
    pub timeline: Vec<Interval>,
}

impl Observer for Collect {
    fn wants_messages(&self) -> bool {
        true
    }
    fn wants_timeline(&self) -> bool {
        true
    }
    fn message(&mut self, m: &MessageRecord) -> Result<()> {
        self.messages.push(*m);
        Ok(())
    }
    fn interval(&mut self, i: &Interval) -> Result<()> {
        self.timeline.push(*i);
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub model: String,
    pub makespan: f64,
    pub message_stats: MessageStats,
    pub ranks: Vec<RankResult>,
    /// Host names, indexed by [`MessageRecord::src_host`] and `dst_host`.
    #[serde(skip)]
    pub host_names: Vec<String>,
    /// Inputs that were accepted but have no effect (e.g. `pair_bandwidth` under `maxmin`).
    pub warnings: Vec<String>,
    /// The trace's [`Trace::derived_datatype_ops`]: ops a derived datatype sized.
    pub derived_datatype_ops: u64,
    /// The trace's ops ([`Trace::n_ops`]): a TI trace's actions.
    pub actions: u64,
    /// Engine steps of the replay (each a time at which activities completed).
    pub events: u64,
    /// Myrinet: the component counts made, and how many were estimated (absent under
    /// other models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub penalty_counts: Option<PenaltyCounts>,
    /// Wall-clock seconds the replay took (not in the document unless asked for: it differs
    /// from run to run).
    #[serde(skip)]
    pub replay_seconds: f64,
    /// Per-link statistics, when [`SimOptions::link_stats`] asked for them.
    #[serde(skip)]
    pub links: Option<LinkReport>,
}

const NONE: u32 = u32::MAX;
// Engine tags: the top bits say what completed.
const TAG_RANK: u64 = 0;
const TAG_MSG: u64 = 1 << 62;
const TAG_RECV_OVERHEAD: u64 = 2 << 62;
/// [`Replay::run_until`]'s alarm at its limit (the number of the alarm below the top bits).
const TAG_WAKE: u64 = 3 << 62;
const TAG_MASK: u64 = 3 << 62;
/// Engine steps between looks at the wall clock for progress reports, and between asks
/// whether the caller wants the replay stopped (`util::cancel`).
const PROGRESS_CHECK_STEPS: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Blocked {
    No,
    /// In a compute, sleep or send overhead (an interval kind).
    Activity(u8),
    /// Waiting for `waiting` requests.
    Wait,
    /// After a wait or test: SMPI's receive overheads (`smpi/or`) of the eager messages it
    /// received; the wait's op is done when this ends.
    WaitOverhead,
    Done,
}

#[derive(Debug, Clone, Copy)]
struct Req {
    done: bool,
    awaited: bool,
    /// A user request already waited for (never waited again by `waitall`).
    waited: bool,
    msg: u32,
    /// When it completed (s), and SMPI's receive overhead (`smpi/or`) its wait pays (s).
    at: f64,
    or_seconds: f64,
}

const FRESH_REQ: Req = Req { done: false, awaited: false, waited: false, msg: NONE, at: 0.0, or_seconds: 0.0 };

impl RankState {
    /// Rank `r` of `trace` on `host`, at the start of its program.
    fn new(host: usize, trace: &Trace, r: usize, coll: &Collectives) -> Self {
        RankState {
            host,
            cursor: trace.start(r, coll),
            blocked: Blocked::No,
            since: 0.0,
            waiting: 0,
            overhead_paid: false,
            // User requests, then the two scratch slots.
            reqs: vec![FRESH_REQ; trace.n_user_reqs[r] as usize + 2],
            unwaited: Vec::new(),
            wait_reqs: Vec::new(),
            wait_any: false,
            end: 0.0,
            compute: 0.0,
            blocked_time: 0.0,
            penalties: (0.0, 0),
            open_op: NONE,
            fan: None,
            fan_posted: 0,
            graph: trace.graph.as_ref().map(|g| GraphRank::new(&g.ranks[r])),
        }
    }
}

struct RankState {
    host: usize,
    cursor: Cursor,
    blocked: Blocked,
    since: f64,
    waiting: u32,
    /// The current step's injected time (a send's overhead, a test's time) is paid.
    overhead_paid: bool,
    reqs: Vec<Req>,
    /// User requests posted and not waited for yet, in posting order (for `waitall`).
    unwaited: Vec<u32>,
    /// Request slots of the wait the rank is in.
    wait_reqs: Vec<u32>,
    /// The wait is a waitany: it ends with the first of `wait_reqs` to complete.
    wait_any: bool,
    end: f64,
    compute: f64,
    blocked_time: f64,
    /// Sum and count of the effective penalties of the messages it sent.
    penalties: (f64, u32),
    /// The trace op the timeline shows the rank in (`NONE` before its first and after its
    /// last).
    open_op: u32,
    /// The fan round the rank is in, from its first post to the end of its wait.
    fan: Option<Box<FanState>>,
    /// With the fans' requests in slots ([`Replay::fans_in_slots`]): posts of the current fan.
    fan_posted: u32,
    /// For a GOAL graph: which of its ops wait, are ready or run.
    graph: Option<Box<GraphRank>>,
}

/// A rank of a GOAL graph (`Trace::graph`): an op is ready once what it `requires` is done and
/// what it `irequires` has started; the rank posts its ready sends and receives first (in line
/// order), then runs a ready calc; with nothing ready it waits for any posted request.
struct GraphRank {
    /// Dependencies not met yet, per op.
    deps: Vec<u32>,
    ready_comm: VecDeque<u32>,
    ready_calc: VecDeque<u32>,
    /// Sends and receives posted and not done: (op, request slot).
    outstanding: Vec<(u32, u32)>,
    /// Request slot of each send and receive (its rank among them in line order).
    slot_of: Vec<u32>,
    /// The op being started (a calc running, a send paying its overhead), or NONE.
    current: u32,
    /// Ops that ran.
    ran: u32,
}

impl GraphRank {
    fn new(rank: &crate::mpi::graph::GoalRank) -> Box<Self> {
        let mut g = GraphRank {
            deps: rank.n_deps.clone(),
            ready_comm: VecDeque::new(),
            ready_calc: VecDeque::new(),
            outstanding: Vec::new(),
            slot_of: Vec::with_capacity(rank.ops.len()),
            current: NONE,
            ran: 0,
        };
        let mut slots = 0;
        for (i, op) in rank.ops.iter().enumerate() {
            g.slot_of.push(slots);
            slots += (op.kind != GoalKind::Calc) as u32;
            if g.deps[i] == 0 {
                g.make_ready(rank, i as u32);
            }
        }
        Box::new(g)
    }

    /// `op` is ready: it joins the queue of its kind.
    fn make_ready(&mut self, rank: &crate::mpi::graph::GoalRank, op: u32) {
        ready_queue(rank, op, &mut self.ready_comm, &mut self.ready_calc).push_back(op);
    }

    /// `succs` lose a dependency; those with none left are ready.
    fn release(&mut self, rank: &crate::mpi::graph::GoalRank, succs: &[u32]) {
        let (comm, calc) = (&mut self.ready_comm, &mut self.ready_calc);
        crate::mpi::graph::release_successors(&mut self.deps, succs, |s| ready_queue(rank, s, comm, calc).push_back(s));
    }
}

/// The ready queue of `op`'s kind: calcs apart from sends and receives.
fn ready_queue<'q>(rank: &crate::mpi::graph::GoalRank, op: u32, comm: &'q mut VecDeque<u32>,
                   calc: &'q mut VecDeque<u32>) -> &'q mut VecDeque<u32> {
    if rank.ops[op as usize].kind == GoalKind::Calc { calc } else { comm }
}

/// What a GOAL rank does next.
enum GraphNext {
    /// Its cursor is on an op to run.
    Run,
    /// It waits for a request.
    Blocked,
    /// Nothing is left that can run.
    Finished,
}

/// A fan round (Open MPI's linear algorithms: receives from and/or sends to many ranks, then
/// one wait for all) without a request slot or a pending receive per post: its receives are
/// the sorted list of the ranks it expects a message from, and its requests a count. What
/// its wait needs afterwards (SMPI's receive overheads, the timeline's split of the wait) is
/// gathered as each request completes, and each message is let go then. A 4,096-rank
/// alltoall posts 33 M requests: this is 4 bytes for each receive and nothing for each send,
/// where a slot and a pending receive took 72.
struct FanState {
    /// The collective's context and tag, which every message of the fan carries.
    ctx: u32,
    tag: i64,
    /// World ranks of the receives, sorted; [`MATCHED`] is set once one got its message.
    expected: Vec<u32>,
    /// Requests posted and not completed yet.
    pending: u32,
    /// The rank is in the fan's wait.
    waiting: bool,
    /// (completion time, SMPI receive overhead) of the receives with an overhead.
    or_done: Vec<(f64, f64)>,
    /// Latest start of its messages, and latest end of those that hold the wait (its
    /// receives and rendezvous sends), as [`Replay::wait_data_span`] takes them.
    span: (f64, f64),
}

/// Set in [`FanState::expected`] on a receive that got its message (ranks are below 2^22).
const MATCHED: u32 = 1 << 31;

impl FanState {
    fn new(ctx: u32, tag: i64) -> Box<Self> {
        Box::new(FanState {
            ctx,
            tag,
            expected: Vec::new(),
            pending: 0,
            waiting: false,
            or_done: Vec::new(),
            span: (f64::NEG_INFINITY, f64::NEG_INFINITY),
        })
    }

    /// Match a message from world rank `src` with context `ctx` and tag `tag` to a receive
    /// that has none yet; whether there was one.
    fn take(&mut self, src: u32, ctx: u32, tag: i64) -> bool {
        if ctx != self.ctx || tag != self.tag {
            return false;
        }
        match self.expected.binary_search_by(|&e| (e & !MATCHED).cmp(&src)) {
            Ok(k) if self.expected[k] & MATCHED == 0 => {
                self.expected[k] |= MATCHED;
                true
            }
            _ => false,
        }
    }
}

struct Msg {
    src: u32,
    dst: u32,
    bytes: f64,
    tag: i64,
    ctx: u32,
    /// The sender waits for the transfer to end (else the send is detached).
    rendezvous: bool,
    /// The transfer waits for the receive to be posted (else it starts when the send is).
    deferred: bool,
    send_req: u32,
    recv_req: u32,
    /// Trace op (index in the sender's list) that sent it.
    origin: u32,
    start: f64,
    end: f64,
    /// Conflict classes under a penalty model, set when the transfer ends.
    conflicts: Option<u8>,
    /// Holders of the slot: the transfer, the send request, the receive request.
    refs: u8,
    /// For the timeline: the message's number in posting order, and when it was posted.
    id: u64,
    posted: f64,
}

struct PendingRecv {
    req: u32,
    src: Option<u32>,
    tag: Option<i64>,
    ctx: u32,
    origin: u32,
}

/// The trace a replay runs: one trace it borrows, or the union of the jobs started so far,
/// which grows as jobs start ([`Replay::add_ranks`]). Cloned (a reference, or a count) where a
/// method needs the trace while it changes the replay.
#[derive(Clone)]
enum TraceRef<'a> {
    Borrowed(&'a Trace),
    Shared(std::rc::Rc<Trace>),
}

impl std::ops::Deref for TraceRef<'_> {
    type Target = Trace;
    fn deref(&self) -> &Trace {
        match self {
            TraceRef::Borrowed(t) => t,
            TraceRef::Shared(t) => t,
        }
    }
}

pub(crate) struct Replay<'a, 'o> {
    platform: &'a Platform,
    trace: TraceRef<'a>,
    /// When the timeline shows the links' load: the changes drained from the engine at each
    /// step (kept to reuse its memory).
    link_loads: Option<Vec<(u32, f64)>>,
    /// The collective algorithms of this run.
    coll: Collectives,
    engine: Engine,
    ranks: Vec<RankState>,
    msgs: Vec<Msg>,
    free_msgs: Vec<u32>,
    /// Per receiving rank: sends not matched yet, in posting order.
    unmatched_sends: Vec<VecDeque<u32>>,
    /// Per receiving rank: receives not matched yet, in posting order.
    unmatched_recvs: Vec<VecDeque<PendingRecv>>,
    ready: VecDeque<usize>,
    observer: &'o mut dyn Observer,
    record_messages: bool,
    record_timeline: bool,
    /// The observer has a [`TimelineSink`].
    record_states: bool,
    /// The timeline writes MPI's records ([`TimelineSink::wants_ops`]).
    timeline_ops: bool,
    /// Messages posted so far (the next one's [`TimelineMessage::id`]).
    posted_msgs: u64,
    stats: MessageStats,
    ranks_done: usize,
    /// Engine steps so far.
    events: u64,
    /// First error an observer returned; stops the replay.
    stopped: Option<Error>,
    /// Give each post of a fan its own request slot and pending receive, as before
    /// [`FanState`]: the reference its tests compare with.
    fans_in_slots: bool,
    /// The platform's protocol settings (thresholds, envelope, MPI_Test's sleep).
    protocol: Protocol,
    /// How many `test_seconds` the next MPI_Test sleeps: SMPI's `nsleeps`, one counter for
    /// every rank (`Request::test`, smpi_request.cpp: a static that a failed test increments
    /// under `smpi/grow-injected-times` and a successful one resets to 1).
    test_sleeps: u32,
    /// Jobs started as the replay runs ([`Replay::add_job`]); `None` for one trace.
    jobs: Option<JobBook>,
}

/// The jobs of a replay that runs a cluster's jobs ([`Replay::add_job`]): each rank's job,
/// each job's first rank and ranks not done yet, the jobs that ended since
/// [`Replay::run_until`] last returned, and its pending alarm (limit, number).
#[derive(Default)]
struct JobBook {
    job_of: Vec<u32>,
    first: Vec<usize>,
    left: Vec<u32>,
    /// Payload bytes each job's messages moved (sent), and how many messages, by job.
    bytes: Vec<f64>,
    messages: Vec<u64>,
    /// When asked for ([`Replay::track_job_links`]): the payload bytes each running job's
    /// messages carried over each link (the whole message over every link of its route).
    link_bytes: Option<Vec<HashMap<LinkId, f64>>>,
    /// Per job: its messages in flight (from the start of their transfer to its end).
    in_flight: Vec<u32>,
    /// The jobs with messages in flight now (a few: a job's exchanges are short).
    talking: Vec<u32>,
    /// Per job: had it a message in flight while another job had one? A job that never
    /// did shared no link with another job's flow, so its flows took the rates they take
    /// alone ([`Replay::job_isolated`]).
    coupled: Vec<bool>,
    ended: Vec<u32>,
    alarm: Option<(f64, u64)>,
    alarms: u64,
}

impl JobBook {
    /// A message of `job` starts its transfer: with another job's in flight, both are
    /// coupled.
    fn transfer_started(&mut self, job: u32) {
        let j = job as usize;
        if self.in_flight[j] == 0 {
            self.talking.push(job);
            if self.talking.len() > 1 {
                for &k in &self.talking {
                    self.coupled[k as usize] = true;
                }
            }
        }
        self.in_flight[j] += 1;
    }

    /// A message of `job` ended its transfer.
    fn transfer_ended(&mut self, job: u32) {
        let j = job as usize;
        self.in_flight[j] -= 1;
        if self.in_flight[j] == 0 {
            let at = self.talking.iter().position(|&k| k == job).expect("a job in flight is talking");
            self.talking.swap_remove(at);
        }
    }
}

/// Replay `trace` on `platform`.
pub fn simulate(platform: &Platform, trace: &Trace, options: &SimOptions) -> Result<SimResult> {
    simulate_observed(platform, trace, options, crate::engine::interference::compute_rate(platform), &mut NoObserver)
}

/// Replay with a compute-rate hook (interference of communication on computation).
pub fn simulate_with(platform: &Platform, trace: &Trace, options: &SimOptions, compute_rate: Box<dyn ComputeRate>) -> Result<SimResult> {
    simulate_observed(platform, trace, options, compute_rate, &mut NoObserver)
}

/// Replay, reporting messages, intervals and progress to `observer`.
pub fn simulate_observed(
    platform: &Platform,
    trace: &Trace,
    options: &SimOptions,
    compute_rate: Box<dyn ComputeRate>,
    observer: &mut dyn Observer,
) -> Result<SimResult> {
    replay(platform, trace, options, compute_rate, observer, false)
}


/// [`simulate_observed`] with every post of a fan in its own request slot, as the replay
/// did before [`FanState`]: the tests' reference.
#[cfg(test)]
pub(crate) fn simulate_fans_in_slots(platform: &Platform, trace: &Trace, options: &SimOptions, observer: &mut dyn Observer) -> Result<SimResult> {
    replay(platform, trace, options, crate::engine::interference::compute_rate(platform), observer, true)
}

/// `platform` with `options.smpi` applied (a preset's timing model, or none) and
/// `options.routing` (a routing of its topology, and its seed).
pub(crate) fn with_platform_options<'p>(platform: &'p Platform, options: &SimOptions) -> Result<std::borrow::Cow<'p, Platform>> {
    if options.smpi.is_none() && options.routing.is_none() && options.routing_seed.is_none() {
        return Ok(std::borrow::Cow::Borrowed(platform));
    }
    let mut owned = platform.clone();
    if let Some(name) = options.smpi.as_deref() {
        owned.smpi = if name == "none" {
            None
        } else {
            Some(SmpiTiming::from_spec(&SmpiSpec::Preset(name.to_string())).map_err(|e| Error {
                kind: ErrorKind::Options,
                field: "smpi".into(),
                reason: format!("{} or none", e.reason),
                ..e
            })?)
        };
    }
    if options.routing.is_some() || options.routing_seed.is_some() {
        let name = options.routing.clone().unwrap_or_else(|| owned.routing.name().to_string());
        owned.set_routing(&name, options.routing_seed, "routing").map_err(|e| Error { kind: ErrorKind::Options, ..e })?;
    }
    Ok(std::borrow::Cow::Owned(owned))
}

/// `trace` as a GOAL schedule as a replay on `platform` under `options` would run it: the
/// placement gives each rank its host's flop rate, the platform and options the collectives.
pub fn goal_schedule_on(
    platform: &Platform,
    trace: &Trace,
    options: &SimOptions,
    units: crate::mpi::goal::from_trace::CalcUnits,
) -> Result<(crate::mpi::goal::GoalSchedule, crate::mpi::goal::from_trace::FromTraceStats)> {
    let platform = &*with_platform_options(platform, options)?;
    let hosts = rank_hosts(platform, trace, options)?;
    let coll = replay_collectives(platform, &options.collectives, &hosts)?;
    let speeds: Vec<f64> = hosts.iter().map(|&h| platform.hosts[h].speed).collect();
    crate::mpi::goal::from_trace::from_trace(trace, &coll, &speeds, units)
}

/// The collective algorithms a replay on `platform` (with SMPI's timing applied already) runs,
/// with `chosen` (collective, algorithm) entries over the platform's, ranks on `hosts`.
pub fn replay_collectives(platform: &Platform, chosen: &[(String, String)], hosts: &[usize]) -> Result<Collectives> {
    let mut coll = Collectives::default();
    if platform.smpi.as_ref().is_some_and(|s| s.preset) {
        // smpirun with no collective option runs SMPI's `default` selector; the platform's
        // and the options' entries come after it, as smpi/<collective> options do.
        coll.apply([("preset".to_string(), "smpi".to_string())])?;
    }
    // The platform's entries were checked when it was loaded.
    coll.apply(platform.network.collectives.iter().map(|(k, v)| (k.clone(), v.clone())))?;
    coll.apply(chosen.iter().cloned())?;
    coll.flops_per_byte = platform.network.reduction_flops_per_byte;
    coll.interleave_nbc = platform.hosts.iter().any(|h| h.overhead.send != 0.0 || h.overhead.send_per_byte != 0.0)
        || platform.smpi.as_ref().is_some_and(|s| s.ois.iter().any(|&(_, t, b)| t != 0.0 || b != 0.0));
    coll.set_hosts(hosts.iter().copied());
    Ok(coll)
}

impl<'a, 'o> Replay<'a, 'o> {
    /// A replay of `trace` on `platform` (with `options.smpi` applied already) under
    /// `options`' model and collectives, rank r on host `hosts[r]`, every rank ready to
    /// start; with the model's name.
    #[allow(clippy::too_many_arguments)]
    fn new(
        platform: &'a Platform,
        trace: TraceRef<'a>,
        options: &SimOptions,
        compute_rate: Box<dyn ComputeRate>,
        observer: &'o mut dyn Observer,
        fans_in_slots: bool,
        hosts: Vec<usize>,
    ) -> Result<(Self, String)> {
        if platform.topology.is_some() && !compute_rate.is_identity() {
            // The compute-rate hook reads each host's NIC traffic, which only the star has.
            return Err(Error::new(ErrorKind::Platform, "interference", "interference is not yet available on platforms with a topology"));
        }
        let model_name = options.model.clone().unwrap_or_else(|| platform.network.model.clone());
        let model = make_model(&model_name, platform, &options.params)?;
        if trace.graph.is_some() && platform.smpi.is_some() {
            return Err(Error::new(ErrorKind::Options, "smpi", "SMPI's timing model tells MPI's calls apart (blocking or not, waits), which a GOAL graph does not say"));
        }
        let coll = replay_collectives(platform, &options.collectives, &hosts)?;
        trace.check_collectives(&coll)?;
        let n = trace.n_ranks();
        // A timeline that shows the links' load needs the engine's link statistics.
        let link_loads = observer.timeline_sink().is_some_and(|s| s.wants_links());
        let mut rp = Replay {
            platform,
            trace: trace.clone(),
            coll: coll.clone(),
            engine: Engine::with_link_stats(platform, model, compute_rate, options.link_stats || link_loads),
            link_loads: if link_loads { Some(Vec::new()) } else { None },
            ranks: hosts.iter().enumerate().map(|(r, &host)| RankState::new(host, &trace, r, &coll)).collect(),
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            unmatched_sends: (0..n).map(|_| VecDeque::new()).collect(),
            unmatched_recvs: (0..n).map(|_| VecDeque::new()).collect(),
            ready: (0..n).collect(),
            record_messages: observer.wants_messages(),
            record_timeline: observer.wants_timeline(),
            record_states: observer.timeline_sink().is_some(),
            timeline_ops: false,
            posted_msgs: 0,
            observer,
            stats: MessageStats::default(),
            ranks_done: 0,
            events: 0,
            stopped: None,
            fans_in_slots,
            protocol: platform.protocol(),
            test_sleeps: 1,
            jobs: None,
        };
        // Host names only for a timeline or link loads (a star may have millions of hosts).
        let host_names: Vec<String> = if rp.record_states || link_loads {
            platform.hosts.iter().map(|h| h.name.clone()).collect()
        } else {
            Vec::new()
        };
        if let Some(sink) = rp.observer.timeline_sink() {
            sink.begin(&TimelineRun { host_names: &host_names, rank_hosts: &hosts, comms: trace.communicators() })?;
            rp.timeline_ops = sink.wants_ops();
        }
        if link_loads {
            let links = rp.engine.track_link_loads(&host_names).unwrap_or_default();
            if let Some(sink) = rp.observer.timeline_sink() {
                sink.links(&links)?;
            }
        }
        Ok((rp, model_name))
    }

    /// A replay of no rank yet on `platform` (with `options.smpi` applied already), to which
    /// jobs are added as they start ([`Replay::add_job`]).
    pub(crate) fn for_jobs(platform: &'a Platform, options: &SimOptions, observer: &'o mut dyn Observer) -> Result<Self> {
        let compute_rate = crate::engine::interference::compute_rate(platform);
        let union = TraceRef::Shared(std::rc::Rc::new(Trace::empty()));
        let (mut rp, _model) = Replay::new(platform, union, options, compute_rate, observer, false, Vec::new())?;
        rp.jobs = Some(JobBook::default());
        Ok(rp)
    }
}

/// The host of each rank of `trace` under `options`' placement or hostfile.
pub fn rank_hosts(platform: &Platform, trace: &Trace, options: &SimOptions) -> Result<Vec<usize>> {
    match &options.hostfile {
        None => place(platform, trace.n_ranks(), options.placement, trace.spec.placement.as_deref(), options.seed),
        Some(hf) => {
            if options.placement != Placement::Explicit {
                return Err(Error::new(
                    ErrorKind::Options,
                    "placement",
                    "a hostfile places the ranks itself: give either a hostfile or a placement, not both",
                ));
            }
            place(platform, trace.n_ranks(), Placement::Explicit, Some(&hf.placement(platform, trace.n_ranks())?), options.seed)
        }
    }
}

fn replay(
    platform: &Platform,
    trace: &Trace,
    options: &SimOptions,
    compute_rate: Box<dyn ComputeRate>,
    observer: &mut dyn Observer,
    fans_in_slots: bool,
) -> Result<SimResult> {
    let platform = &*with_platform_options(platform, options)?;
    let hosts = rank_hosts(platform, trace, options)?;
    let (mut rp, model_name) = Replay::new(platform, TraceRef::Borrowed(trace), options, compute_rate, observer, fans_in_slots, hosts)?;
    let started = Instant::now();
    rp.run()?;
    let replay_seconds = started.elapsed().as_secs_f64();
    let makespan = rp.ranks.iter().map(|r| r.end).fold(0.0, f64::max);
    if let Some(sink) = rp.observer.timeline_sink() {
        sink.end(makespan)?;
    }
    let host_names: Vec<String> = platform.hosts.iter().map(|h| h.name.clone()).collect();
    let links = rp.engine.link_report(makespan, &host_names).filter(|_| options.link_stats);
    let rp_events = rp.events;
    let penalty_counts = rp.engine.penalty_counts();
    let mut result = rp.finish(model_name);
    result.penalty_counts = penalty_counts;
    if let Some(c) = penalty_counts.filter(|c| c.bounded > 0) {
        result.warnings.push(format!(
            "myrinet: {} of {} component counts were estimated, and steps stopped {} of those estimates before tolerance: \
             their penalties are estimated, {} (95 %); raise steps for a tighter result",
            c.estimated,
            c.counts,
            c.bounded,
            if c.largest_error.is_finite() {
                format!("±{:.1} %", 100.0 * c.largest_error)
            } else {
                "with an error the chains could not bound (a communication they never saw free)".to_string()
            }
        ));
    }
    result.links = links;
    result.derived_datatype_ops = trace.derived_datatype_ops;
    result.actions = trace.n_ops() as u64;
    result.events = rp_events;
    result.replay_seconds = replay_seconds;
    if result.model != platform.network.model && !platform.network.parameters.is_empty() {
        result.warnings.push(format!(
            "network.parameters are for the platform's model {}; the {} model ignores them",
            platform.network.model, result.model
        ));
    }
    if result.model != "contention_free" && platform.network.pair_bandwidth.is_some() {
        result.warnings.push(format!(
            "network.pair_bandwidth is used only by the contention_free model; the {} model ignores it",
            result.model
        ));
    }
    Ok(result)
}

impl<'a, 'o> Replay<'a, 'o> {
    fn run(&mut self) -> Result<()> {
        let mut done: Vec<Completion> = Vec::new();
        let every = self.observer.progress_every();
        let started = Instant::now();
        let mut last_report = 0.0;
        loop {
            self.advance_ready()?;
            if !self.step_engine(&mut done)? {
                break;
            }
            let events = self.events;
            if let Some(every) = every {
                if every <= 0.0 || events % PROGRESS_CHECK_STEPS == 0 {
                    let elapsed = started.elapsed().as_secs_f64();
                    if elapsed - last_report >= every {
                        last_report = elapsed;
                        let p = Progress {
                            now: self.now(),
                            events: self.events,
                            messages: self.stats.count,
                            ranks_done: self.ranks_done,
                            ranks: self.ranks.len(),
                            elapsed,
                        };
                        self.observer.progress(&p)?;
                    }
                }
            }
        }
        if let Some(e) = self.stopped.take() {
            return Err(e);
        }
        self.check_finished()
    }

    /// Run every ready rank until it blocks or ends; the error an observer returned, if any.
    fn advance_ready(&mut self) -> Result<()> {
        while let Some(r) = self.ready.pop_front() {
            self.advance(r);
        }
        match self.stopped.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Move the engine to its next event and handle what completed then (`done` is scratch);
    /// false when nothing was pending. Asks whether to stop every few thousand steps.
    fn step_engine(&mut self, done: &mut Vec<Completion>) -> Result<bool> {
        self.show_link_loads();
        if self.engine.step(done).is_none() {
            return Ok(false);
        }
        self.events += 1;
        for k in 0..done.len() {
            let c = done[k];
            self.on_completion(c);
        }
        if self.events % PROGRESS_CHECK_STEPS == 0 {
            crate::util::cancel::check()?;
        }
        Ok(true)
    }

    pub(crate) fn now(&self) -> f64 {
        self.engine.now()
    }

    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// Start `trace` now as the next job, rank i on `hosts[i]` (a replay made by
    /// [`Replay::for_jobs`]); its number.
    pub(crate) fn add_job(&mut self, trace: Trace, hosts: &[usize]) -> Result<u32> {
        debug_assert_eq!(trace.n_ranks(), hosts.len());
        trace.check_collectives(&self.coll)?;
        let TraceRef::Shared(union) = &mut self.trace else {
            return Err(Error::new(ErrorKind::Options, "", "jobs start only in a replay made for jobs"));
        };
        let base = self.ranks.len();
        let n = trace.n_ranks();
        std::rc::Rc::make_mut(union).append(trace)?;
        // The hosts of every rank, for the collectives that look at them (SMP-aware ones).
        if !self.coll.add_hosts(base, hosts) {
            self.coll.set_hosts(self.ranks.iter().map(|st| st.host).chain(hosts.iter().copied()));
        }
        let union = self.trace.clone();
        for (i, &host) in hosts.iter().enumerate() {
            self.ranks.push(RankState::new(host, &union, base + i, &self.coll));
            self.unmatched_sends.push(VecDeque::new());
            self.unmatched_recvs.push(VecDeque::new());
            self.ready.push_back(base + i);
        }
        let book = self.jobs.get_or_insert_with(JobBook::default);
        let job = book.left.len() as u32;
        book.job_of.extend(std::iter::repeat_n(job, n));
        book.first.push(base);
        book.left.push(n as u32);
        book.bytes.push(0.0);
        book.messages.push(0);
        book.in_flight.push(0);
        book.coupled.push(false);
        if let Some(links) = &mut book.link_bytes {
            links.push(HashMap::new());
        }
        Ok(job)
    }

    /// Run until simulated time `limit` (s) or until jobs end, whichever comes first; the jobs
    /// that ended (now), none when the limit came first or nothing is left to run.
    pub(crate) fn run_until(&mut self, limit: f64) -> Result<Vec<u32>> {
        let mut done: Vec<Completion> = Vec::new();
        let book = self.jobs.get_or_insert_with(JobBook::default);
        if limit.is_finite() && book.alarm.is_none_or(|(at, _)| at != limit) {
            // An alarm at the limit, so that the engine's clock stops there.
            book.alarms += 1;
            book.alarm = Some((limit, book.alarms));
            let delay = (limit - self.engine.now()).max(0.0);
            self.engine.start_timer(delay, TAG_WAKE | book.alarms);
        }
        loop {
            self.advance_ready()?;
            let book = self.jobs.as_mut().expect("made above");
            if !book.ended.is_empty() {
                return Ok(std::mem::take(&mut book.ended));
            }
            if limit.is_finite() && book.alarm.is_none() {
                return Ok(Vec::new());
            }
            if !self.step_engine(&mut done)? {
                return Ok(Vec::new());
            }
        }
    }

    /// Per-link statistics until now (hosts named `host_names`), when kept; taken.
    pub(crate) fn link_report(&mut self, host_names: &[String]) -> Option<LinkReport> {
        let now = self.now();
        self.engine.link_report(now, host_names)
    }

    /// Count the bytes each job's messages carry over each link, from now on
    /// ([`Replay::job_link_bytes`]).
    pub(crate) fn track_job_links(&mut self) {
        let book = self.jobs.get_or_insert_with(JobBook::default);
        book.link_bytes = Some(vec![HashMap::new(); book.left.len()]);
    }

    /// The bytes job `job`'s messages carried over each link (empty unless
    /// [`Replay::track_job_links`]); the count is dropped.
    pub(crate) fn job_link_bytes(&mut self, job: u32) -> HashMap<LinkId, f64> {
        let book = self.jobs.as_mut().expect("a replay of jobs");
        book.link_bytes.as_mut().map(|l| std::mem::take(&mut l[job as usize])).unwrap_or_default()
    }

    /// Did job `job` run as it runs alone on its hosts? True when none of its messages was in
    /// flight while another job's was (so no flow of another job shared a link, or a
    /// max-min round, with its flows: their rates are those of the job alone) and no
    /// compute-rate hook lets another job's traffic slow its computations (ranks do not
    /// time-share cores). Its runtime is then its time alone, up to the rounding of the
    /// clock's absolute times.
    pub(crate) fn job_isolated(&self, job: u32) -> bool {
        let book = self.jobs.as_ref().expect("a replay of jobs");
        self.engine.full_speed() && !book.coupled[job as usize]
    }

    /// When job `job`'s ranks ended (s), the payload bytes its messages moved and how many
    /// messages; forget its program (its memory goes).
    pub(crate) fn finish_job(&mut self, job: u32) -> (Vec<f64>, f64, u64) {
        let book = self.jobs.as_ref().expect("a replay of jobs");
        let first = book.first[job as usize];
        let n = book.job_of[first..].iter().take_while(|&&j| j == job).count();
        let (bytes, messages) = (book.bytes[job as usize], book.messages[job as usize]);
        if let TraceRef::Shared(union) = &mut self.trace {
            std::rc::Rc::make_mut(union).forget(first..first + n);
        }
        // The ranks' request slots and queues go too (a rank of a long program has thousands).
        for r in first..first + n {
            let st = &mut self.ranks[r];
            (st.reqs, st.unwaited, st.wait_reqs, st.fan) = (Vec::new(), Vec::new(), Vec::new(), None);
            self.unmatched_sends[r] = VecDeque::new();
            self.unmatched_recvs[r] = VecDeque::new();
        }
        (self.ranks[first..first + n].iter().map(|st| st.end).collect(), bytes, messages)
    }

    /// Give the timeline the load of each link that changed since the last call (all at
    /// the engine's current time), when it shows them.
    fn show_link_loads(&mut self) {
        let Some(mut buf) = self.link_loads.take() else { return };
        self.engine.drain_link_changes(|l, load| buf.push((l, load)));
        let now = self.now();
        for &(l, load) in &buf {
            self.to_sink(|s| s.link_load(now, l, load));
        }
        buf.clear();
        self.link_loads = Some(buf);
    }

    fn report(&mut self, r: std::result::Result<(), Error>) {
        if let Err(e) = r {
            self.stopped.get_or_insert(e);
        }
    }

    fn interval(&mut self, rank: usize, kind: u8, start: f64, end: f64) {
        if self.record_timeline && end > start {
            let r = self.observer.interval(&Interval { rank: rank as u32, kind, start, end });
            self.report(r);
        }
    }

    /// Call the timeline sink, if any, unless an error already stopped the replay.
    fn to_sink(&mut self, f: impl FnOnce(&mut dyn TimelineSink) -> Result<()>) {
        if self.stopped.is_some() {
            return;
        }
        let r = match self.observer.timeline_sink() {
            Some(sink) => f(sink),
            None => return,
        };
        self.report(r);
    }

    /// The timeline shows rank `r` in trace op `op` (`NONE`: in none) from now on.
    fn show_op(&mut self, r: usize, op: u32) {
        let open = self.ranks[r].open_op;
        if open == op {
            return;
        }
        let now = self.now();
        self.ranks[r].open_op = op;
        if open != NONE {
            self.to_sink(|s| s.leave(now, r as u32));
        }
        if op != NONE {
            let trace = self.trace.clone();
            let spec = &trace.spec.ranks[r][op as usize];
            let code = spec.code();
            if self.timeline_ops {
                let (comm, me) = trace.communicator(r, spec.comm());
                let op = TimelineOp { code, spec, comm, me, size: trace.comm_size(r, spec.comm()) };
                self.to_sink(|s| s.enter_op(now, r as u32, &op));
            } else {
                self.to_sink(|s| s.enter(now, r as u32, code));
            }
        }
    }

    /// The message for the timeline, with the times known so far.
    fn timeline_message(&self, id: u32) -> TimelineMessage {
        let m = &self.msgs[id as usize];
        let end = if m.end.is_finite() { m.end } else { f64::NAN };
        TimelineMessage {
            id: m.id,
            src_rank: m.src,
            dst_rank: m.dst,
            bytes: m.bytes,
            tag: if m.ctx % 2 == CTX_USER { m.tag } else { -1 },
            op: self.trace.spec.ranks[m.src as usize][m.origin as usize].code(),
            posted: m.posted,
            start: m.start,
            arrived: end,
            received: f64::NAN,
        }
    }

    /// The receive of message `id` completes now: tell the timeline.
    fn timeline_receive(&mut self, id: u32) {
        if self.record_states {
            let m = TimelineMessage { received: self.now(), ..self.timeline_message(id) };
            self.to_sink(|s| s.receive(&m));
        }
    }

    /// Run rank `r` until it blocks or ends.
    fn advance(&mut self, r: usize) {
        let (trace, platform) = (self.trace.clone(), self.platform);
        let net = &platform.network;
        loop {
            if trace.graph.is_some() {
                match self.graph_next(r) {
                    GraphNext::Run => {}
                    GraphNext::Blocked => return,
                    GraphNext::Finished => break,
                }
            } else if trace.finished(r, &self.ranks[r].cursor) {
                break;
            }
            if self.record_states {
                self.show_op(r, self.ranks[r].cursor.op);
            }
            let host = self.ranks[r].host;
            let mut step = trace.step(r, &self.ranks[r].cursor, &self.coll);
            let fan_post = matches!(step, Step::Send { req: FAN_REQ, .. } | Step::Recv { req: FAN_REQ, .. });
            if self.fans_in_slots {
                // The reference: each post of a fan in the next scratch slot, one wait for all.
                let first = self.trace.scratch_slot(r);
                let st = &mut self.ranks[r];
                match &mut step {
                    Step::Send { req, .. } | Step::Recv { req, .. } if *req == FAN_REQ => *req = first + st.fan_posted,
                    Step::WaitFan => step = Step::WaitSlots { first, n: std::mem::take(&mut st.fan_posted) },
                    _ => {}
                }
            } else if let Step::Recv { req: FAN_REQ, .. } = step {
                // All of the fan's receives at once (they cost no time); the cursor is past them.
                self.post_fan_recvs(r);
                continue;
            }
            match step {
                Step::Compute { amount, seconds } => {
                    let flops = if seconds { amount * platform.hosts[host].speed } else { amount };
                    self.engine.start_compute(host, flops, TAG_RANK | r as u64);
                    return self.block(r, Blocked::Activity(COMPUTE));
                }
                Step::Sleep { seconds } => {
                    self.engine.start_timer(seconds, TAG_RANK | r as u64);
                    return self.block(r, Blocked::Activity(SLEEP));
                }
                Step::Send { req, dst, bytes, tag, ctx, sync, nonblocking } => {
                    if req == FAN_REQ {
                        self.ranks[r].fan.get_or_insert_with(|| FanState::new(ctx, tag));
                    } else {
                        self.grow_slots(r, req);
                    }
                    let mut overhead = platform.hosts[host].overhead.send_time(bytes);
                    if let Some(smpi) = &platform.smpi {
                        overhead += self.smpi_send_overhead(smpi, bytes, sync, nonblocking);
                    }
                    if overhead > 0.0 && !self.ranks[r].overhead_paid {
                        self.ranks[r].overhead_paid = true;
                        self.engine.start_timer(overhead, TAG_RANK | r as u64);
                        return self.block(r, Blocked::Activity(OVERHEAD));
                    }
                    self.ranks[r].overhead_paid = false;
                    let rendezvous = sync || net.synchronous_send || bytes >= self.protocol.eager_threshold;
                    let deferred = rendezvous || bytes >= self.protocol.async_small_thresh;
                    if let (FAN_REQ, Some(fan)) = (req, self.ranks[r].fan.as_mut()) {
                        fan.pending += 1;
                    }
                    self.post_send(r, req, dst, bytes, tag, ctx, rendezvous, deferred);
                    self.ranks[r].fan_posted += (fan_post && self.fans_in_slots) as u32;
                }
                Step::Recv { req, src, tag, ctx } => {
                    self.grow_slots(r, req);
                    self.post_recv(r, req, src, tag, ctx);
                    self.ranks[r].fan_posted += fan_post as u32;
                }
                Step::WaitFan => {
                    if self.enter_fan_wait(r) {
                        return;
                    }
                }
                Step::Wait { reqs, n } => {
                    if self.wait_for(r, reqs[..n as usize].iter().copied()) {
                        return;
                    }
                }
                Step::WaitSlots { first, n } => {
                    if self.wait_for(r, first..first + n) {
                        return;
                    }
                }
                Step::Test { req } => {
                    // As SMPI's MPI_Test: first the injected test_seconds, then the call sees
                    // the request as it is at that time.
                    let test_seconds = self.protocol.test_seconds;
                    if test_seconds > 0.0 && !self.ranks[r].overhead_paid {
                        self.ranks[r].overhead_paid = true;
                        self.engine.start_timer(f64::from(self.test_sleeps) * test_seconds, TAG_RANK | r as u64);
                        return self.block(r, Blocked::Activity(OVERHEAD));
                    }
                    self.ranks[r].overhead_paid = false;
                    let rq = self.ranks[r].reqs[req as usize];
                    if !rq.done && self.timeline_ops {
                        let now = self.now();
                        self.to_sink(|s| s.request_tested(now, r as u32, req));
                    }
                    if rq.done {
                        self.test_sleeps = 1;
                    } else if self.protocol.grow_injected_times {
                        self.test_sleeps = self.test_sleeps.saturating_add(1);
                    }
                    if rq.done && !rq.waited {
                        self.consume(r, req);
                        if rq.or_seconds > 0.0 {
                            self.engine.start_timer(rq.or_seconds, TAG_RANK | r as u64);
                            return self.block(r, Blocked::WaitOverhead);
                        }
                    }
                }
                Step::WaitAny => {
                    let OpSpec::Waitany { reqs } = &trace.spec.ranks[r][self.ranks[r].cursor.op as usize] else {
                        unreachable!("a WaitAny step comes from a waitany op")
                    };
                    let st = &mut self.ranks[r];
                    let open: Vec<u32> = reqs.iter().map(|&q| q as u32).filter(|&q| !st.reqs[q as usize].waited).collect();
                    if let Some(&q) = open.iter().find(|&&q| st.reqs[q as usize].done) {
                        let or_seconds = st.reqs[q as usize].or_seconds;
                        self.consume(r, q);
                        if or_seconds > 0.0 {
                            self.engine.start_timer(or_seconds, TAG_RANK | r as u64);
                            return self.block(r, Blocked::WaitOverhead);
                        }
                    } else if !open.is_empty() {
                        for &q in &open {
                            st.reqs[q as usize].awaited = true;
                        }
                        st.wait_reqs.clear();
                        st.wait_reqs.extend_from_slice(&open);
                        st.wait_any = true;
                        st.waiting = 1;
                        return self.block(r, Blocked::Wait);
                    }
                }
                Step::WaitAll => {
                    let st = &mut self.ranks[r];
                    st.wait_reqs.clear();
                    for q in st.unwaited.drain(..) {
                        if !st.reqs[q as usize].waited {
                            st.wait_reqs.push(q);
                        }
                    }
                    if self.enter_wait(r) {
                        return;
                    }
                }
            }
            self.step_over(r);
        }
        if self.record_states {
            self.show_op(r, NONE);
        }
        let now = self.now();
        let st = &mut self.ranks[r];
        st.blocked = Blocked::Done;
        st.end = now;
        self.ranks_done += 1;
        if let Some(book) = self.jobs.as_mut() {
            let j = book.job_of[r] as usize;
            book.left[j] -= 1;
            if book.left[j] == 0 {
                book.ended.push(j as u32);
            }
        }
    }

    /// Rank `r`'s current step is over: the cursor moves on, or for a GOAL rank its op has
    /// started (a send or receive, now posted) or ended (a calc).
    fn step_over(&mut self, r: usize) {
        let Some(graph) = self.trace.graph.clone() else {
            return self.trace.advance(r, &mut self.ranks[r].cursor, &self.coll);
        };
        let rank = &graph.ranks[r];
        let g = self.ranks[r].graph.as_mut().expect("a graph trace has graph ranks");
        let op = std::mem::replace(&mut g.current, NONE);
        g.ran += 1;
        g.release(rank, rank.irequires_me(op as usize));
        if rank.ops[op as usize].kind == GoalKind::Calc {
            g.release(rank, rank.requires_me(op as usize));
        } else {
            g.outstanding.push((op, g.slot_of[op as usize]));
        }
    }

    /// A GOAL rank's next op: the ops of its completed requests are done first; then a ready
    /// send or receive, else a ready calc, is put under its cursor; else it waits for any
    /// request it posted, or has nothing left.
    fn graph_next(&mut self, r: usize) -> GraphNext {
        let graph = self.trace.graph.clone().expect("a graph trace");
        let rank = &graph.ranks[r];
        let mut g = self.ranks[r].graph.take().expect("a graph trace has graph ranks");
        if g.current == NONE {
            let mut k = 0;
            while k < g.outstanding.len() {
                let (op, q) = g.outstanding[k];
                let req = self.ranks[r].reqs[q as usize];
                if !req.done {
                    k += 1;
                    continue;
                }
                if !req.waited {
                    self.consume(r, q);
                }
                g.outstanding.swap_remove(k);
                g.release(rank, rank.requires_me(op as usize));
            }
            g.current = g.ready_comm.pop_front().or_else(|| g.ready_calc.pop_front()).unwrap_or(NONE);
        }
        let next = if g.current != NONE {
            let c = &mut self.ranks[r].cursor;
            c.op = g.current;
            c.user_posted = g.slot_of[g.current as usize];
            GraphNext::Run
        } else if !g.outstanding.is_empty() {
            let st = &mut self.ranks[r];
            st.wait_reqs.clear();
            for &(_, q) in &g.outstanding {
                st.reqs[q as usize].awaited = true;
                st.wait_reqs.push(q);
            }
            st.wait_any = true;
            st.waiting = 1;
            self.block(r, Blocked::Wait);
            GraphNext::Blocked
        } else {
            GraphNext::Finished
        };
        self.ranks[r].graph = Some(g);
        next
    }

    /// Make request slot `req` of rank `r` exist (a fan's posts go past the two scratch slots).
    fn grow_slots(&mut self, r: usize, req: u32) {
        let reqs = &mut self.ranks[r].reqs;
        if req as usize >= reqs.len() {
            reqs.resize(req as usize + 1, FRESH_REQ);
        }
    }

    /// Start waiting for request slots `slots`; returns whether the rank blocks.
    fn wait_for(&mut self, r: usize, slots: impl Iterator<Item = u32>) -> bool {
        let st = &mut self.ranks[r];
        st.wait_reqs.clear();
        st.wait_reqs.extend(slots);
        self.enter_wait(r)
    }

    /// Start waiting for `wait_reqs`; returns whether the rank blocks (else the wait is over).
    fn enter_wait(&mut self, r: usize) -> bool {
        let user = self.trace.n_user_reqs[r];
        let st = &mut self.ranks[r];
        let mut waiting = 0;
        for &q in &st.wait_reqs {
            let rq = &mut st.reqs[q as usize];
            if q < user {
                rq.waited = true;
            }
            if !rq.done {
                rq.awaited = true;
                waiting += 1;
            }
        }
        if waiting > 0 {
            st.waiting = waiting;
            self.block(r, Blocked::Wait);
            return true;
        }
        self.leave_wait(r)
    }

    /// The requests rank `r` waited for are done: pay SMPI's receive overheads of the wait
    /// (a timer until they end); returns whether the rank blocks for them.
    fn leave_wait(&mut self, r: usize) -> bool {
        let now = self.now();
        let until = self.or_chain_end(r, now);
        self.end_wait(r);
        if until > now {
            self.engine.start_timer(until - now, TAG_RANK | r as u64);
            self.block(r, Blocked::WaitOverhead);
            return true;
        }
        false
    }

    /// When SMPI's receive overheads of the wait rank `r` is in end, the wait having begun
    /// at `start`: SMPI's MPI_Wait/Waitall finish the requests one by one in the order they
    /// completed (Waitall is a loop of Waitany), and finishing an eager message's receive
    /// sleeps `smpi/or` (`Request::finish_wait`, smpi_request.cpp). `start` without any.
    fn or_chain_end(&self, r: usize, start: f64) -> f64 {
        if !self.platform.smpi.as_ref().is_some_and(|s| s.has_recv_overhead()) {
            return start;
        }
        let st = &self.ranks[r];
        let mut done: Vec<(f64, f64)> = if let Some(fan) = &st.fan {
            fan.or_done.clone()
        } else if st.wait_any {
            // only the first that completed is finished
            st.wait_reqs.iter().map(|&q| st.reqs[q as usize]).find(|q| q.done).map(|q| (q.at, q.or_seconds)).into_iter().collect()
        } else {
            st.wait_reqs.iter().map(|&q| st.reqs[q as usize]).filter(|q| q.or_seconds > 0.0).map(|q| (q.at, q.or_seconds)).collect()
        };
        done.sort_by(|a, b| a.0.total_cmp(&b.0));
        done.iter().fold(start, |end, &(at, or)| end.max(at) + or)
    }

    /// SMPI's sender overhead of a send of `bytes` (`Request::start`, smpi_request.cpp):
    /// `smpi/ois` for a non-blocking send (MPI_Isend, and MPI_Sendrecv, whose send is an
    /// isend), `smpi/os` for a blocking send that is detached (eager) or synchronous, nothing
    /// for a blocking rendezvous send. In collectives, a round's lone send is blocking, the
    /// send of a send-receive round or of a fan is not.
    fn smpi_send_overhead(&self, smpi: &SmpiTiming, bytes: f64, sync: bool, nonblocking: bool) -> f64 {
        let net = &self.platform.network;
        if nonblocking {
            return smpi.isend_overhead(bytes);
        }
        let plain_rendezvous = bytes >= self.protocol.eager_threshold && !sync && !net.synchronous_send;
        if plain_rendezvous {
            0.0
        } else {
            smpi.send_overhead(bytes)
        }
    }

    /// A completed user request taken by a test or a waitany: waited for, its message loses
    /// a holder, and a later wait on it returns at once.
    fn consume(&mut self, r: usize, q: u32) {
        let m = self.ranks[r].reqs[q as usize].msg;
        self.show_done(r, q, m);
        self.ranks[r].reqs[q as usize] = Req { done: true, awaited: false, waited: true, msg: NONE, ..FRESH_REQ };
        if m != NONE {
            self.release(m);
        }
    }

    /// A timeline that writes MPI's records learns that the wait or test rank `r` is in
    /// completed its request `q` (a user request; `m` its message, if it still has it).
    fn show_done(&mut self, r: usize, q: u32, m: u32) {
        if self.timeline_ops && q < self.trace.n_user_reqs[r] {
            let matched = (m != NONE).then(|| (self.msgs[m as usize].src, self.msgs[m as usize].tag));
            let now = self.now();
            self.to_sink(|s| s.request_done(now, r as u32, q, matched));
        }
    }

    /// The wait is over: its requests are consumed, and their messages lose a holder (for a
    /// waitany, only the first that completed; the others stay open).
    fn end_wait(&mut self, r: usize) {
        if self.ranks[r].fan.take().is_some() {
            return; // its messages went as its requests completed
        }
        if std::mem::take(&mut self.ranks[r].wait_any) {
            let reqs = std::mem::take(&mut self.ranks[r].wait_reqs);
            let first = reqs.iter().copied().find(|&q| self.ranks[r].reqs[q as usize].done);
            for &q in &reqs {
                self.ranks[r].reqs[q as usize].awaited = false;
            }
            if let Some(q) = first {
                self.consume(r, q);
            }
            self.ranks[r].wait_reqs = reqs;
            self.ranks[r].wait_reqs.clear();
            return;
        }
        for k in 0..self.ranks[r].wait_reqs.len() {
            let q = self.ranks[r].wait_reqs[k] as usize;
            let m = self.ranks[r].reqs[q].msg;
            self.show_done(r, q as u32, m);
            self.ranks[r].reqs[q] = Req { waited: self.ranks[r].reqs[q].waited, ..FRESH_REQ };
            if m != NONE {
                self.release(m);
            }
        }
    }

    /// Drop one holder of message `id`; its slot is free when none is left.
    fn release(&mut self, id: u32) {
        let m = &mut self.msgs[id as usize];
        m.refs -= 1;
        if m.refs == 0 {
            self.free_msgs.push(id);
        }
    }

    fn block(&mut self, r: usize, how: Blocked) {
        let now = self.now();
        let st = &mut self.ranks[r];
        st.blocked = how;
        st.since = now;
    }

    /// Rank `r` may go on: record the stretch it was blocked and queue it.
    fn unblock(&mut self, r: usize) {
        let now = self.now();
        let since = self.ranks[r].since;
        match self.ranks[r].blocked {
            Blocked::Activity(kind) => {
                if kind == COMPUTE {
                    self.ranks[r].compute += now - since;
                }
                self.interval(r, kind, since, now);
                if kind != OVERHEAD {
                    self.step_over(r);
                }
            }
            Blocked::WaitOverhead => {
                self.interval(r, OVERHEAD, since, now);
                self.step_over(r);
            }
            Blocked::Wait => {
                let until = self.or_chain_end(r, since);
                self.ranks[r].blocked_time += now - since;
                if self.record_timeline {
                    // Split into waiting for the partner, data moving, and the receive
                    // overhead after the last byte arrived.
                    let (first, last) = self.wait_data_span(r);
                    let started = first.clamp(since, now);
                    let arrived = last.clamp(started, now);
                    self.interval(r, WAIT, since, started);
                    self.interval(r, COMM, started, arrived);
                    self.interval(r, OVERHEAD, arrived, now);
                }
                self.end_wait(r);
                if until > now {
                    self.engine.start_timer(until - now, TAG_RANK | r as u64);
                    return self.block(r, Blocked::WaitOverhead);
                }
                if self.trace.graph.is_none() {
                    // (a GOAL rank's wait is not an op: the next `graph_next` sees what completed)
                    self.trace.advance(r, &mut self.ranks[r].cursor, &self.coll);
                }
            }
            _ => unreachable!("unblock of a rank that is not blocked"),
        }
        self.ranks[r].blocked = Blocked::No;
        self.ready.push_back(r);
    }

    /// Latest start and latest end among the messages of the wait rank `r` is blocked in
    /// (messages not started or not arrived count as "now").
    fn wait_data_span(&self, r: usize) -> (f64, f64) {
        let st = &self.ranks[r];
        if let Some(fan) = &st.fan {
            return (fan.span.0, fan.span.1.max(fan.span.0));
        }
        let now = self.now();
        let (mut first, mut last) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for &q in &st.wait_reqs {
            let m = st.reqs[q as usize].msg;
            if m == NONE {
                return (now, now);
            }
            let msg = &self.msgs[m as usize];
            let end = if msg.end.is_finite() { msg.end } else { now };
            // A detached (eager) send of this rank completes at posting: its data does not hold
            // it, and its request counts from the posting, also when its transfer waits for the
            // receive (SMPI's async_small_thresh), as a fan's requests do (`complete_fan`).
            let holds = msg.dst as usize == r || msg.rendezvous;
            let began = if !holds { msg.posted } else if msg.start.is_finite() { msg.start } else { now };
            first = first.max(began);
            if holds {
                last = last.max(end);
            }
        }
        (first, last.max(first))
    }

    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::too_many_arguments)]
    fn post_send(&mut self, r: usize, req: u32, dst: u32, bytes: f64, tag: i64, ctx: u32, rendezvous: bool, deferred: bool) {
        let origin = self.ranks[r].cursor.op;
        let msg = Msg {
            src: r as u32,
            dst,
            bytes,
            tag,
            ctx,
            rendezvous,
            deferred,
            send_req: req,
            recv_req: NONE,
            origin,
            start: f64::NAN,
            end: f64::NAN,
            conflicts: None,
            refs: 3,
            id: self.posted_msgs,
            posted: self.now(),
        };
        self.posted_msgs += 1;
        let id = match self.free_msgs.pop() {
            Some(id) => {
                self.msgs[id as usize] = msg;
                id
            }
            None => {
                self.msgs.push(msg);
                (self.msgs.len() - 1) as u32
            }
        };
        if req != FAN_REQ {
            self.ranks[r].reqs[req as usize] = Req { msg: id, ..FRESH_REQ };
        }
        if req < self.trace.n_user_reqs[r] {
            self.ranks[r].unwaited.push(req);
        }
        let d = dst as usize;
        // A fan's receives are the only ones of the destination on this context and tag
        // while it is in the fan (collectives have their own context, and a rank is in one
        // collective round at a time).
        let matched = if self.ranks[d].fan.as_mut().is_some_and(|f| f.take(r as u32, ctx, tag)) {
            self.msgs[id as usize].recv_req = FAN_REQ;
            true
        } else if let Some(k) = self.unmatched_recvs[d]
            .iter()
            .position(|p| p.ctx == ctx && p.src.map_or(true, |s| s == r as u32) && p.tag.map_or(true, |t| t == tag))
        {
            let p = self.unmatched_recvs[d].remove(k).expect("position is valid");
            self.msgs[id as usize].recv_req = p.req;
            self.ranks[d].reqs[p.req as usize].msg = id;
            true
        } else {
            self.unmatched_sends[d].push_back(id);
            false
        };
        if self.record_states {
            let m = self.timeline_message(id);
            self.to_sink(|s| s.send(&m));
        }
        if !deferred || matched {
            self.start_transfer(id);
        }
        if !rendezvous {
            self.complete(r, req, id); // detached: the sender goes on at once
        }
    }

    fn post_recv(&mut self, r: usize, req: u32, src: Option<u32>, tag: Option<i64>, ctx: u32) {
        self.ranks[r].reqs[req as usize] = FRESH_REQ;
        if req < self.trace.n_user_reqs[r] {
            self.ranks[r].unwaited.push(req);
        }
        let matches = |m: &Msg| m.ctx == ctx && src.map_or(true, |s| s == m.src) && tag.map_or(true, |t| t == m.tag);
        // A wildcard receive takes the oldest matching message already under way (eager)
        // before any other, as SMPI does (it looks in the mailbox with a permanent receiver
        // first); a receive naming its source and tag takes the oldest, MPI's order.
        let eager_first = (src.is_none() || tag.is_none())
            .then(|| self.unmatched_sends[r].iter().position(|&m| !self.msgs[m as usize].deferred && matches(&self.msgs[m as usize])))
            .flatten();
        let found = eager_first.or_else(|| self.unmatched_sends[r].iter().position(|&m| matches(&self.msgs[m as usize])));
        match found {
            None => {
                let origin = self.ranks[r].cursor.op;
                self.unmatched_recvs[r].push_back(PendingRecv { req, src, tag, ctx, origin })
            }
            Some(k) => {
                let id = self.unmatched_sends[r].remove(k).expect("position is valid");
                self.msgs[id as usize].recv_req = req;
                self.ranks[r].reqs[req as usize].msg = id;
                let m = &self.msgs[id as usize];
                if m.deferred && m.start.is_nan() {
                    self.start_transfer(id);
                } else if m.end.is_finite() {
                    self.deliver(id);
                }
            }
        }
    }

    fn start_transfer(&mut self, id: u32) {
        let now = self.now();
        let m = &mut self.msgs[id as usize];
        m.start = now;
        let (s, d) = (self.ranks[m.src as usize].host, self.ranks[m.dst as usize].host);
        let (m_src, m_bytes) = (m.src, m.bytes);
        if let Some(book) = &mut self.jobs {
            let job = book.job_of[m.src as usize] as usize;
            book.bytes[job] += m.bytes;
            book.messages[job] += 1;
            book.transfer_started(job as u32);
        }
        // The envelope travels with every message; the eager choice saw the payload alone.
        let size = m.bytes + self.protocol.envelope_bytes;
        let started = match &self.platform.smpi {
            None => self.engine.start_transfer(s, d, size, TAG_MSG | id as u64),
            // SMPI's factors (NetworkCm02Model::communicate): the flow takes its max-min share
            // of the links, but progresses at that share times the bandwidth factor, so it
            // moves size / factor bytes at its share; its latency is scaled.
            Some(smpi) => {
                let (bw, lat) = (smpi.bw_factor(size), smpi.lat_factor(size));
                self.engine.start_transfer_scaled(s, d, size / bw, lat, TAG_MSG | id as u64)
            }
        };
        // Only a topology can fail (two hosts without a route): stop the replay with it.
        if let Err(e) = started {
            self.stopped.get_or_insert(e);
            return;
        }
        if let Some(book) = &mut self.jobs {
            if let Some(links) = &mut book.link_bytes {
                // The route the engine picked for this transfer (a routing may vary it).
                let (job, bytes) = (book.job_of[m_src as usize] as usize, m_bytes);
                for &l in self.engine.last_route() {
                    *links[job].entry(l).or_insert(0.0) += bytes;
                }
            }
        }
    }

    /// The message's data is at the receiver and its receive is matched: complete
    /// the receive after the receive overhead.
    fn deliver(&mut self, id: u32) {
        let m = &self.msgs[id as usize];
        if let Some(smpi) = &self.platform.smpi {
            // SMPI's receiver overhead: for a message whose send was detached (eager).
            if !m.rendezvous && m.recv_req != FAN_REQ {
                let or_seconds = smpi.recv_overhead(m.bytes);
                self.ranks[m.dst as usize].reqs[m.recv_req as usize].or_seconds = or_seconds;
            }
        }
        let m = &self.msgs[id as usize];
        let overhead = self.platform.hosts[self.ranks[m.dst as usize].host].overhead.recv_time(m.bytes);
        if overhead > 0.0 {
            self.engine.start_timer(overhead, TAG_RECV_OVERHEAD | id as u64);
        } else {
            let (dst, req) = (m.dst as usize, m.recv_req);
            self.timeline_receive(id);
            self.complete(dst, req, id);
        }
    }

    /// Request `req` of rank `r`, for message `id`, completed.
    fn complete(&mut self, r: usize, req: u32, id: u32) {
        if req == FAN_REQ {
            self.complete_fan(r, id);
        } else {
            self.complete_req(r, req);
        }
    }

    /// A request of the fan rank `r` is in completed, for message `id`: keep what its wait
    /// needs of the message, and let the message go.
    fn complete_fan(&mut self, r: usize, id: u32) {
        let now = self.now();
        let m = &self.msgs[id as usize];
        let receive = m.dst as usize == r;
        let or_seconds = match &self.platform.smpi {
            Some(smpi) if receive && !m.rendezvous => smpi.recv_overhead(m.bytes),
            _ => 0.0,
        };
        let holds = receive || m.rendezvous;
        let (start, end) = (m.start, m.end);
        let fan = self.ranks[r].fan.as_mut().expect("a fan request completes in a fan");
        fan.pending -= 1;
        if or_seconds > 0.0 {
            fan.or_done.push((now, or_seconds));
        }
        fan.span.0 = fan.span.0.max(if start.is_finite() { start } else { now });
        if holds {
            fan.span.1 = fan.span.1.max(if end.is_finite() { end } else { now });
        }
        let over = fan.waiting && fan.pending == 0;
        self.release(id);
        if over && self.ranks[r].blocked == Blocked::Wait {
            self.unblock(r);
        }
    }

    /// Post every receive of the fan rank `r` is at (they follow one another and cost no
    /// time), moving its cursor past them: each takes the oldest message already sent to it,
    /// in the fan's order, as one receive after another would.
    fn post_fan_recvs(&mut self, r: usize) {
        let trace = self.trace.clone();
        let coll = &self.coll;
        let mut order: Vec<u32> = Vec::new();
        let mut key = None;
        while !trace.finished(r, &self.ranks[r].cursor) {
            match trace.step(r, &self.ranks[r].cursor, coll) {
                Step::Recv { req: FAN_REQ, src: Some(s), tag: Some(t), ctx } => {
                    key = Some((ctx, t));
                    order.push(s);
                }
                _ => break,
            }
            trace.advance(r, &mut self.ranks[r].cursor, coll);
        }
        let (ctx, tag) = key.expect("a fan's receives name their source and tag");
        let mut expected = order.clone();
        expected.sort_unstable();
        let fan = self.ranks[r].fan.get_or_insert_with(|| FanState::new(ctx, tag));
        fan.pending += order.len() as u32;
        // An interleaved fan (SMPI's iallgather) posts its receives one at a time, in rank order.
        let sorted = fan.expected.last().is_none_or(|&e| e & !MATCHED < expected[0]);
        fan.expected.extend(expected);
        if !sorted {
            fan.expected.sort_unstable_by_key(|&e| e & !MATCHED);
        }
        // Messages that came first: the oldest from each source.
        let mut early: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for &id in &self.unmatched_sends[r] {
            let m = &self.msgs[id as usize];
            if m.ctx == ctx && m.tag == tag {
                early.entry(m.src).or_insert(id);
            }
        }
        if early.is_empty() {
            return;
        }
        let mut taken = Vec::new();
        for &s in &order {
            if let Some(id) = early.remove(&s) {
                let fan = self.ranks[r].fan.as_mut().expect("just made");
                if fan.take(s, ctx, tag) {
                    self.msgs[id as usize].recv_req = FAN_REQ;
                    taken.push(id);
                }
            }
        }
        let msgs = &self.msgs;
        self.unmatched_sends[r].retain(|&id| msgs[id as usize].recv_req == NONE);
        for id in taken {
            let m = &self.msgs[id as usize];
            if m.deferred && m.start.is_nan() {
                self.start_transfer(id);
            } else if m.end.is_finite() {
                self.deliver(id);
            }
        }
    }

    /// Rank `r` reaches the wait of its fan; returns whether it blocks (else the wait is over).
    fn enter_fan_wait(&mut self, r: usize) -> bool {
        let pending = match self.ranks[r].fan.as_mut() {
            Some(fan) if fan.pending > 0 => {
                fan.waiting = true;
                true
            }
            _ => false,
        };
        if pending {
            self.block(r, Blocked::Wait);
            return true;
        }
        self.leave_wait(r)
    }

    fn complete_req(&mut self, r: usize, req: u32) {
        let now = self.now();
        let rq = &mut self.ranks[r].reqs[req as usize];
        rq.done = true;
        rq.at = now;
        if rq.awaited && self.ranks[r].blocked == Blocked::Wait {
            self.ranks[r].waiting -= 1;
            if self.ranks[r].waiting == 0 {
                self.unblock(r);
            }
        }
    }

    /// Count the message that just arrived, and report it.
    fn record(&mut self, id: u32) {
        let m = &self.msgs[id as usize];
        let seconds = m.end - m.start;
        let s = &mut self.stats;
        s.count += 1;
        s.bytes += m.bytes;
        s.mean_seconds += seconds; // a sum until `finish`
        s.max_seconds = s.max_seconds.max(seconds);
        let (src_host, dst_host) = (self.ranks[m.src as usize].host, self.ranks[m.dst as usize].host);
        let penalty = self.effective_penalty(src_host, dst_host, m.bytes, seconds, m.conflicts);
        if penalty.is_finite() {
            let p = &mut self.ranks[m.src as usize].penalties;
            p.0 += penalty;
            p.1 += 1;
        }
        let m = &self.msgs[id as usize];
        if self.record_messages {
            let rec = MessageRecord {
                src_rank: m.src,
                dst_rank: m.dst,
                src_host: src_host as u32,
                dst_host: dst_host as u32,
                bytes: m.bytes,
                // User messages (even contexts) keep their tag; collectives' are internal.
                tag: if m.ctx % 2 == CTX_USER { m.tag } else { -1 },
                op: self.trace.spec.ranks[m.src as usize][m.origin as usize].code(),
                start: m.start,
                end: m.end,
                penalty,
                conflicts: m.conflicts,
            };
            let r = self.observer.message(&rec);
            self.report(r);
        }
    }

    /// Time after the latency over the time alone at the hosts' single-transfer bandwidth,
    /// for an inter-node message under a penalty model. On a topology the latency is the
    /// route's and the single-transfer bandwidth that of the hosts' private links (where the
    /// penalty models apply).
    fn effective_penalty(&self, src: usize, dst: usize, bytes: f64, seconds: f64, conflicts: Option<u8>) -> f64 {
        if conflicts.is_none() || src == dst || bytes <= 0.0 {
            return f64::NAN;
        }
        let hosts = &self.platform.hosts;
        let mut single = hosts[src].bandwidth_up.min(hosts[dst].bandwidth_down);
        let mut latency = self.platform.network.latency;
        if let Some(t) = &self.platform.topology {
            use crate::network::topology::Endpoint;
            let mut links = Vec::new();
            // The transfer ran, so its route exists.
            if let Ok(l) = t.route(Endpoint::Host(src as u32), Endpoint::Host(dst as u32), &mut links) {
                latency = l;
            }
            if let (Some((up, _)), Some((_, down))) = (t.private_links(src as u32), t.private_links(dst as u32)) {
                single = t.link(up).bandwidth.min(t.link(down).bandwidth);
            }
        }
        (seconds - latency) * single / bytes
    }

    fn on_completion(&mut self, c: Completion) {
        let id = (c.tag & !TAG_MASK) as u32;
        match (c.tag & TAG_MASK, c.kind) {
            (TAG_RANK, _) => self.unblock(id as usize),
            (TAG_MSG, ActKind::Transfer) => {
                let now = self.now();
                let m = &mut self.msgs[id as usize];
                if let Some(book) = &mut self.jobs {
                    book.transfer_ended(book.job_of[m.src as usize]);
                }
                m.end = now;
                m.conflicts = c.conflicts;
                let (src, send_req, rendezvous, matched) = (m.src as usize, m.send_req, m.rendezvous, m.recv_req != NONE);
                self.record(id);
                if rendezvous {
                    self.complete(src, send_req, id);
                }
                if matched {
                    self.deliver(id);
                }
                self.release(id);
            }
            (TAG_WAKE, _) => {
                if let Some(book) = self.jobs.as_mut() {
                    if book.alarm.is_some_and(|(_, n)| n == id as u64) {
                        book.alarm = None;
                    }
                }
            }
            (TAG_RECV_OVERHEAD, _) => {
                let m = &self.msgs[id as usize];
                let (dst, req) = (m.dst as usize, m.recv_req);
                self.timeline_receive(id);
                self.complete(dst, req, id);
            }
            other => unreachable!("unexpected completion {other:?}"),
        }
    }

    fn describe_op(&self, r: usize, origin: u32) -> String {
        format!("op {origin} `{}`", self.trace.spec.ranks[r][origin as usize].describe())
    }

    pub(crate) fn check_finished(&self) -> Result<()> {
        if let Some(graph) = &self.trace.graph {
            let stuck: Vec<String> = self
                .ranks
                .iter()
                .enumerate()
                .filter_map(|(r, st)| {
                    let ran = st.graph.as_ref().map_or(0, |g| g.ran) as usize;
                    let n = graph.ranks[r].ops.len();
                    (st.blocked == Blocked::Done && ran < n).then(|| format!("rank {r}: {} of its {n} operations never ran", n - ran))
                })
                .collect();
            if !stuck.is_empty() {
                return Err(Error::new(ErrorKind::Deadlock, "", format!("the GOAL graph never completes (its dependencies form a cycle): {}", first_ten(&stuck))));
            }
        }
        let blocked: Vec<String> = self
            .ranks
            .iter()
            .enumerate()
            .filter(|(_, st)| st.blocked != Blocked::Done)
            .map(|(r, st)| format!("rank {r} blocked in {}", self.describe_op(r, st.cursor.op)))
            .collect();
        if !blocked.is_empty() {
            return Err(Error::new(ErrorKind::Deadlock, "", format!("the trace deadlocks at t={}: {}", self.now(), first_ten(&blocked))));
        }
        let mut left: Vec<String> = Vec::new();
        for (d, q) in self.unmatched_sends.iter().enumerate() {
            for &id in q {
                let m = &self.msgs[id as usize];
                left.push(format!(
                    "send from rank {} to rank {d} ({} bytes, tag {}, rank {}'s {}) never received",
                    m.src,
                    m.bytes,
                    m.tag,
                    m.src,
                    self.describe_op(m.src as usize, m.origin)
                ));
            }
        }
        for (r, q) in self.unmatched_recvs.iter().enumerate() {
            for p in q {
                left.push(format!("receive of rank {r} ({}) never matched", self.describe_op(r, p.origin)));
            }
        }
        if !left.is_empty() {
            return Err(Error::new(ErrorKind::Deadlock, "", format!("messages left unmatched at the end: {}", first_ten(&left))));
        }
        Ok(())
    }

    fn finish(self, model: String) -> SimResult {
        let hosts = &self.platform.hosts;
        let ranks: Vec<RankResult> = self
            .ranks
            .iter()
            .enumerate()
            .map(|(r, st)| RankResult {
                rank: r,
                host: hosts[st.host].name.clone(),
                end: st.end,
                compute_seconds: st.compute,
                blocked_seconds: st.blocked_time,
                mean_penalty: (st.penalties.1 > 0).then(|| st.penalties.0 / st.penalties.1 as f64),
            })
            .collect();
        let makespan = ranks.iter().map(|r| r.end).fold(0.0, f64::max);
        let mut stats = self.stats;
        if stats.count > 0 {
            stats.mean_seconds /= stats.count as f64;
        }
        let host_names = hosts.iter().map(|h| h.name.clone()).collect();
        SimResult { model, makespan, message_stats: stats, ranks, host_names, warnings: Vec::new(), derived_datatype_ops: 0, actions: 0, events: 0, penalty_counts: None, replay_seconds: 0.0, links: None }
    }
}

/// The first ten items joined, and how many more there are.
fn first_ten(items: &[String]) -> String {
    let shown = items.iter().take(10).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > 10 {
        format!("{shown} (and {} more)", items.len() - 10)
    } else {
        shown
    }
}

#[cfg(test)]
mod tests;
