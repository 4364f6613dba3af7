//! Trace replay with MPI semantics (the simulator of paper 004 §VI-A).
//!
//! * Matching: a receive matches the earliest posted, unmatched send from its source
//!   (or any) with its tag (or any), per communication context; sends between a pair
//!   are therefore never overtaken.
//! * Eager (fewer bytes than `eager_threshold`): the send is detached; its transfer
//!   starts when it is posted and the sender goes on at once.
//! * Rendezvous (at or above the threshold, or a synchronous send): the transfer
//!   starts once both sides are posted; the send completes when the transfer ends.
//! * A receive completes when its message's last byte arrived, plus the receive
//!   overhead; a send posts after the sender spent the send overhead.

use std::collections::VecDeque;

use serde::Serialize;

use crate::engine::{ActKind, Completion, ComputeRate, Engine, FullSpeed};
use crate::error::{Error, ErrorKind, Result};
use crate::placement::{place, Placement};
use crate::platform::Platform;
use crate::sharing::make_model;
use crate::trace::{Op, Trace, CTX_USER};

#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Sharing model; `None` uses the platform's `network.model`.
    pub model: Option<String>,
    pub placement: Placement,
    pub seed: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { model: None, placement: Placement::Explicit, seed: 0 }
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
}

#[derive(Debug, Clone, Serialize)]
pub struct MessageRecord {
    pub src_rank: usize,
    pub dst_rank: usize,
    pub src_host: String,
    pub dst_host: String,
    pub bytes: f64,
    /// User tag; `None` for messages of collectives.
    pub tag: Option<i64>,
    /// Trace operation that sent it (`send`, `isend`, `bcast`, ...).
    pub op: &'static str,
    /// When the transfer started (s).
    pub start: f64,
    /// When its last byte arrived: latency first, then the bytes at the shared rate (s).
    pub end: f64,
}

/// One stretch of a rank's time, for Gantt charts.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    pub rank: usize,
    /// `compute`, `sleep`, `overhead` (per-message CPU time), `wait` (partner not ready)
    /// or `comm` (data moving).
    pub kind: &'static str,
    pub start: f64,
    pub end: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub model: String,
    pub makespan: f64,
    pub ranks: Vec<RankResult>,
    pub messages: Vec<MessageRecord>,
    #[serde(skip)]
    pub timeline: Vec<Interval>,
}

impl SimResult {
    /// The JSON document of the CLI's `--json` (stable field names).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("result serialises")
    }
}

const NONE: u32 = u32::MAX;
// Engine tags: the top bits say what completed.
const TAG_RANK: u64 = 0;
const TAG_MSG: u64 = 1 << 62;
const TAG_RECV_OVERHEAD: u64 = 2 << 62;
const TAG_MASK: u64 = 3 << 62;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Blocked {
    No,
    /// In a compute, sleep or send overhead.
    Activity(&'static str),
    /// Waiting for `count` requests.
    Wait,
    Done,
}

#[derive(Debug, Clone, Copy)]
struct Req {
    done: bool,
    awaited: bool,
    msg: u32,
}

struct RankState {
    host: usize,
    pc: usize,
    blocked: Blocked,
    since: f64,
    waiting: u32,
    overhead_paid: bool,
    reqs: Vec<Req>,
    end: f64,
    compute: f64,
    blocked_time: f64,
}

struct Msg {
    src: u32,
    dst: u32,
    bytes: f64,
    tag: i64,
    ctx: u8,
    rendezvous: bool,
    send_req: u32,
    recv_req: u32,
    origin: u32,
    start: f64,
    end: f64,
}

struct PendingRecv {
    req: u32,
    src: Option<u32>,
    tag: Option<i64>,
    ctx: u8,
}

struct Replay<'a> {
    platform: &'a Platform,
    trace: &'a Trace,
    engine: Engine,
    ranks: Vec<RankState>,
    msgs: Vec<Msg>,
    /// Per receiving rank: sends not matched yet, in posting order.
    unmatched_sends: Vec<VecDeque<u32>>,
    /// Per receiving rank: receives not matched yet, in posting order.
    unmatched_recvs: Vec<Vec<PendingRecv>>,
    ready: VecDeque<usize>,
    timeline: Vec<Interval>,
}

/// Replay `trace` on `platform`.
pub fn simulate(platform: &Platform, trace: &Trace, options: &SimOptions) -> Result<SimResult> {
    simulate_with(platform, trace, options, Box::new(FullSpeed))
}

/// Replay with a compute-rate hook (interference of communication on computation).
pub fn simulate_with(platform: &Platform, trace: &Trace, options: &SimOptions, compute_rate: Box<dyn ComputeRate>) -> Result<SimResult> {
    let model_name = options.model.clone().unwrap_or_else(|| platform.network.model.clone());
    let model = make_model(&model_name, platform)?;
    let hosts = place(platform, trace.n_ranks(), options.placement, trace.spec.placement.as_deref(), options.seed)?;
    let n = trace.n_ranks();
    let mut rp = Replay {
        platform,
        trace,
        engine: Engine::new(platform, model, compute_rate),
        ranks: hosts
            .iter()
            .zip(&trace.programs)
            .map(|(&host, prog)| RankState {
                host,
                pc: 0,
                blocked: Blocked::No,
                since: 0.0,
                waiting: 0,
                overhead_paid: false,
                reqs: vec![Req { done: false, awaited: false, msg: NONE }; prog.n_reqs as usize],
                end: 0.0,
                compute: 0.0,
                blocked_time: 0.0,
            })
            .collect(),
        msgs: Vec::new(),
        unmatched_sends: vec![VecDeque::new(); n],
        unmatched_recvs: (0..n).map(|_| Vec::new()).collect(),
        ready: (0..n).collect(),
        timeline: Vec::new(),
    };
    rp.run()?;
    Ok(rp.finish(model_name))
}

impl<'a> Replay<'a> {
    fn run(&mut self) -> Result<()> {
        let mut done: Vec<Completion> = Vec::new();
        loop {
            while let Some(r) = self.ready.pop_front() {
                self.advance(r);
            }
            if self.engine.step(&mut done).is_none() {
                break;
            }
            for c in std::mem::take(&mut done) {
                self.on_completion(c);
            }
        }
        self.check_finished()
    }

    fn now(&self) -> f64 {
        self.engine.now()
    }

    /// Run rank `r` until it blocks or ends.
    fn advance(&mut self, r: usize) {
        let (trace, platform) = (self.trace, self.platform);
        let prog = &trace.programs[r];
        let net = &platform.network;
        while self.ranks[r].pc < prog.ops.len() {
            let host = self.ranks[r].host;
            match &prog.ops[self.ranks[r].pc] {
                Op::Compute { flops, seconds } => {
                    let flops = if *seconds { flops * platform.hosts[host].speed } else { *flops };
                    self.engine.start_compute(host, flops, TAG_RANK | r as u64);
                    return self.block(r, Blocked::Activity("compute"));
                }
                Op::Sleep { seconds } => {
                    self.engine.start_timer(*seconds, TAG_RANK | r as u64);
                    return self.block(r, Blocked::Activity("sleep"));
                }
                Op::Send { req, dst, bytes, tag, ctx, sync } => {
                    let overhead = platform.hosts[host].overhead.send_time(*bytes);
                    if overhead > 0.0 && !self.ranks[r].overhead_paid {
                        self.ranks[r].overhead_paid = true;
                        self.engine.start_timer(overhead, TAG_RANK | r as u64);
                        return self.block(r, Blocked::Activity("overhead"));
                    }
                    self.ranks[r].overhead_paid = false;
                    let rendezvous = *sync || net.synchronous_send || *bytes >= net.eager_threshold;
                    self.post_send(r, *req, *dst, *bytes, *tag, *ctx, rendezvous);
                }
                Op::Recv { req, src, tag, ctx } => self.post_recv(r, *req, *src, *tag, *ctx),
                Op::Wait { reqs } => {
                    let mut waiting = 0;
                    for &q in reqs {
                        let rq = &mut self.ranks[r].reqs[q as usize];
                        if !rq.done {
                            rq.awaited = true;
                            waiting += 1;
                        }
                    }
                    if waiting > 0 {
                        self.ranks[r].waiting = waiting;
                        return self.block(r, Blocked::Wait);
                    }
                }
            }
            self.ranks[r].pc += 1;
        }
        let now = self.now();
        let st = &mut self.ranks[r];
        st.blocked = Blocked::Done;
        st.end = now;
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
                if kind == "compute" {
                    self.ranks[r].compute += now - since;
                }
                self.timeline.push(Interval { rank: r, kind, start: since, end: now });
                if kind != "overhead" {
                    self.ranks[r].pc += 1;
                }
            }
            Blocked::Wait => {
                self.ranks[r].blocked_time += now - since;
                // Split into waiting for the partner, data moving, and the receive overhead
                // after the last byte arrived.
                let (first, last) = self.wait_data_span(r);
                let started = first.clamp(since, now);
                let arrived = last.clamp(started, now);
                for (kind, a, b) in [("wait", since, started), ("comm", started, arrived), ("overhead", arrived, now)] {
                    if b > a {
                        self.timeline.push(Interval { rank: r, kind, start: a, end: b });
                    }
                }
                self.ranks[r].pc += 1;
            }
            _ => unreachable!("unblock of a rank that is not blocked"),
        }
        self.ranks[r].blocked = Blocked::No;
        self.ready.push_back(r);
    }

    /// Latest start and latest end among the messages of the Wait op rank `r` is
    /// blocked in (messages not started or not arrived count as "now").
    fn wait_data_span(&self, r: usize) -> (f64, f64) {
        let st = &self.ranks[r];
        let now = self.now();
        let Op::Wait { reqs } = &self.trace.programs[r].ops[st.pc] else { return (now, now) };
        let (mut first, mut last) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for &q in reqs {
            let m = st.reqs[q as usize].msg;
            if m == NONE {
                return (now, now);
            }
            let msg = &self.msgs[m as usize];
            let end = if msg.end.is_finite() { msg.end } else { now };
            first = first.max(if msg.start.is_finite() { msg.start } else { now });
            // A detached (eager) send of this rank completes at posting: its data does not hold it.
            if msg.dst as usize == r || msg.rendezvous {
                last = last.max(end);
            }
        }
        (first, last.max(first))
    }

    #[allow(clippy::too_many_arguments)]
    fn post_send(&mut self, r: usize, req: u32, dst: u32, bytes: f64, tag: i64, ctx: u8, rendezvous: bool) {
        let id = self.msgs.len() as u32;
        let origin = self.trace.programs[r].origin[self.ranks[r].pc];
        self.msgs.push(Msg {
            src: r as u32,
            dst,
            bytes,
            tag,
            ctx,
            rendezvous,
            send_req: req,
            recv_req: NONE,
            origin,
            start: f64::NAN,
            end: f64::NAN,
        });
        self.ranks[r].reqs[req as usize].msg = id;
        let d = dst as usize;
        let found = self.unmatched_recvs[d]
            .iter()
            .position(|p| p.ctx == ctx && p.src.map_or(true, |s| s == r as u32) && p.tag.map_or(true, |t| t == tag));
        if let Some(k) = found {
            let p = self.unmatched_recvs[d].remove(k);
            self.msgs[id as usize].recv_req = p.req;
            self.ranks[d].reqs[p.req as usize].msg = id;
        } else {
            self.unmatched_sends[d].push_back(id);
        }
        if !rendezvous {
            self.start_transfer(id);
            self.complete_req(r, req);
        } else if found.is_some() {
            self.start_transfer(id);
        }
    }

    fn post_recv(&mut self, r: usize, req: u32, src: Option<u32>, tag: Option<i64>, ctx: u8) {
        let found = self.unmatched_sends[r].iter().position(|&m| {
            let m = &self.msgs[m as usize];
            m.ctx == ctx && src.map_or(true, |s| s == m.src) && tag.map_or(true, |t| t == m.tag)
        });
        match found {
            None => self.unmatched_recvs[r].push(PendingRecv { req, src, tag, ctx }),
            Some(k) => {
                let id = self.unmatched_sends[r].remove(k).expect("position is valid");
                self.msgs[id as usize].recv_req = req;
                self.ranks[r].reqs[req as usize].msg = id;
                let m = &self.msgs[id as usize];
                if m.rendezvous && m.start.is_nan() {
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
        self.engine.start_transfer(s, d, m.bytes, TAG_MSG | id as u64);
    }

    /// The message's data is at the receiver and its receive is matched: complete
    /// the receive after the receive overhead.
    fn deliver(&mut self, id: u32) {
        let m = &self.msgs[id as usize];
        let overhead = self.platform.hosts[self.ranks[m.dst as usize].host].overhead.recv_time(m.bytes);
        if overhead > 0.0 {
            self.engine.start_timer(overhead, TAG_RECV_OVERHEAD | id as u64);
        } else {
            let (dst, req) = (m.dst as usize, m.recv_req);
            self.complete_req(dst, req);
        }
    }

    fn complete_req(&mut self, r: usize, req: u32) {
        let rq = &mut self.ranks[r].reqs[req as usize];
        rq.done = true;
        if rq.awaited && self.ranks[r].blocked == Blocked::Wait {
            self.ranks[r].waiting -= 1;
            if self.ranks[r].waiting == 0 {
                self.unblock(r);
            }
        }
    }

    fn on_completion(&mut self, c: Completion) {
        let id = (c.tag & !TAG_MASK) as u32;
        match (c.tag & TAG_MASK, c.kind) {
            (TAG_RANK, _) => self.unblock(id as usize),
            (TAG_MSG, ActKind::Transfer) => {
                let now = self.now();
                let m = &mut self.msgs[id as usize];
                m.end = now;
                let (src, send_req, rendezvous, matched) = (m.src as usize, m.send_req, m.rendezvous, m.recv_req != NONE);
                if rendezvous {
                    self.complete_req(src, send_req);
                }
                if matched {
                    self.deliver(id);
                }
            }
            (TAG_RECV_OVERHEAD, _) => {
                let m = &self.msgs[id as usize];
                let (dst, req) = (m.dst as usize, m.recv_req);
                self.complete_req(dst, req);
            }
            other => unreachable!("unexpected completion {other:?}"),
        }
    }

    fn describe_op(&self, r: usize, origin: u32) -> String {
        format!("op {origin} `{}`", self.trace.spec.ranks[r][origin as usize].describe())
    }

    fn check_finished(&self) -> Result<()> {
        let blocked: Vec<String> = self
            .ranks
            .iter()
            .enumerate()
            .filter(|(_, st)| st.blocked != Blocked::Done)
            .map(|(r, st)| {
                let origin = self.trace.programs[r].origin[st.pc];
                format!("rank {r} blocked in {}", self.describe_op(r, origin))
            })
            .collect();
        if !blocked.is_empty() {
            let shown = blocked.iter().take(10).cloned().collect::<Vec<_>>().join("; ");
            let more = if blocked.len() > 10 { format!(" (and {} more)", blocked.len() - 10) } else { String::new() };
            return Err(Error::new(ErrorKind::Deadlock, "", format!("the trace deadlocks at t={}: {shown}{more}", self.now())));
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
                let pc = self.trace.programs[r].ops.iter().position(|o| matches!(o, Op::Recv { req, .. } if *req == p.req)).unwrap_or(0);
                let origin = self.trace.programs[r].origin[pc];
                left.push(format!("receive of rank {r} ({}) never matched", self.describe_op(r, origin)));
            }
        }
        if !left.is_empty() {
            let shown = left.iter().take(10).cloned().collect::<Vec<_>>().join("; ");
            let more = if left.len() > 10 { format!(" (and {} more)", left.len() - 10) } else { String::new() };
            return Err(Error::new(ErrorKind::Deadlock, "", format!("messages left unmatched at the end: {shown}{more}")));
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
            })
            .collect();
        let makespan = ranks.iter().map(|r| r.end).fold(0.0, f64::max);
        let mut order: Vec<usize> = (0..self.msgs.len()).collect();
        // Order of start time, then source rank, then posting order (stable sort).
        order.sort_by(|&a, &b| {
            let (ma, mb) = (&self.msgs[a], &self.msgs[b]);
            ma.start.total_cmp(&mb.start).then(ma.src.cmp(&mb.src))
        });
        let messages = order
            .into_iter()
            .map(|i| {
                let m = &self.msgs[i];
                let (s, d) = (m.src as usize, m.dst as usize);
                MessageRecord {
                    src_rank: s,
                    dst_rank: d,
                    src_host: hosts[self.ranks[s].host].name.clone(),
                    dst_host: hosts[self.ranks[d].host].name.clone(),
                    bytes: m.bytes,
                    tag: (m.ctx == CTX_USER).then_some(m.tag),
                    op: self.trace.spec.ranks[s][m.origin as usize].name(),
                    start: m.start,
                    end: m.end,
                }
            })
            .collect();
        SimResult { model, makespan, ranks, messages, timeline: self.timeline }
    }
}

#[cfg(test)]
mod tests;
