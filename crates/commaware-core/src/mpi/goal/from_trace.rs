//! Any trace as a GOAL schedule: each rank's steps (collectives lowered to their messages by
//! the chosen algorithms, as the replay runs them) become a chain. A blocking step is a node the
//! next one `requires`; a posted send or receive is a node the next one `irequires` (it only
//! has to be started); a wait makes the next node `require` the requests it waited for.

use super::{GoalKind, GoalOp, GoalRankBuilder, GoalSchedule, ANY};
use crate::error::{Error, ErrorKind, Result};
use crate::mpi::collectives::Collectives;
use crate::mpi::ops::OpSpec;
use crate::mpi::trace::{Step, Trace, FAN_REQ};

/// GOAL tags are 32 bits: a message's tag is its MPI tag plus its communication context times
/// this, so that a collective's messages never match a user receive of the same tag.
pub const CONTEXT_TAG_STRIDE: u64 = 1 << 27;

/// What the conversion could not carry over exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FromTraceStats {
    /// MPI_Test calls: GOAL has no test; they order nothing.
    pub tests: u64,
    /// MPI_Waitany calls, made to wait for all their requests.
    pub waitany_as_waitall: u64,
    /// Synchronous sends (MPI_Ssend): GOAL's protocol follows the size alone.
    pub synchronous_sends: u64,
}

/// How to turn a trace's times into GOAL's integer time units.
#[derive(Debug, Clone, Copy)]
pub struct CalcUnits {
    /// Seconds per GOAL time unit.
    pub unit_seconds: f64,
}

impl CalcUnits {
    pub fn new(unit_seconds: f64) -> Result<Self> {
        if !(unit_seconds.is_finite() && unit_seconds > 0.0) {
            return Err(Error::new(ErrorKind::Options, "goal_calc_unit", format!("must be a finite number of seconds > 0, got {unit_seconds}")));
        }
        Ok(CalcUnits { unit_seconds })
    }
    /// `seconds` in whole units (rounded to the nearest).
    pub fn units(&self, seconds: f64, field: &str) -> Result<u64> {
        let u = (seconds / self.unit_seconds).round();
        if !(u.is_finite() && u >= 0.0 && u < 2f64.powi(63)) {
            return Err(Error::trace(field, format!("{seconds} s is not a time GOAL can hold in units of {} s", self.unit_seconds)));
        }
        Ok(u as u64)
    }
}

/// Rank `r`'s steps as a GOAL graph. `speed` is its host's flop rate, for computes in flops.
fn rank_graph(trace: &Trace, coll: &Collectives, r: usize, speed: f64, units: CalcUnits, stats: &mut FromTraceStats) -> Result<GoalRankBuilder> {
    let mut g = GoalRankBuilder::default();
    // What the next node waits for: (node, only its start).
    let mut after: Vec<(u32, bool)> = Vec::new();
    // The node posted in each request slot; the user slots not waited for yet; the fan's posts.
    let mut slots: Vec<u32> = Vec::new();
    let user = trace.n_user_reqs[r];
    let mut unwaited: Vec<u32> = Vec::new();
    let mut fan: Vec<u32> = Vec::new();
    let mut cursor = trace.start(r, coll);
    let field = |op: u32| format!("ranks[{r}][{op}]");
    while !trace.finished(r, &cursor) {
        let step = trace.step(r, &cursor, coll);
        let node = |g: &mut GoalRankBuilder, after: &mut Vec<(u32, bool)>, op: GoalOp, started: bool| -> u32 {
            let i = g.op(op);
            for &(p, s) in after.iter() {
                g.depend(i, p, s);
            }
            after.clear();
            after.push((i, started));
            i
        };
        let tag_of = |tag: i64, ctx: u32| -> Result<u32> {
            let t = u64::try_from(tag).ok().filter(|&t| t < CONTEXT_TAG_STRIDE).map(|t| t + u64::from(ctx) * CONTEXT_TAG_STRIDE).filter(|&t| t < u64::from(ANY));
            t.map(|t| t as u32).ok_or_else(|| Error::trace(field(cursor.op), format!("tag {tag} in communication context {ctx} does not fit GOAL's 32-bit tags (tags below 2^27, up to 31 contexts)")))
        };
        let wait_on = |after: &mut Vec<(u32, bool)>, n: u32| {
            after.retain(|&(p, s)| !(s && p == n));
            if !after.contains(&(n, false)) {
                after.push((n, false));
            }
        };
        match step {
            Step::Compute { amount, seconds } => {
                let secs = if seconds { amount } else { amount / speed };
                let size = units.units(secs, &field(cursor.op))?;
                node(&mut g, &mut after, GoalOp { kind: GoalKind::Calc, cpu: 0, nic: 0, peer: 0, tag: 0, size }, false);
            }
            Step::Sleep { seconds } => {
                let size = units.units(seconds, &field(cursor.op))?;
                node(&mut g, &mut after, GoalOp { kind: GoalKind::Calc, cpu: 0, nic: 0, peer: 0, tag: 0, size }, false);
            }
            Step::Send { req, dst, bytes, tag, ctx, sync, .. } => {
                stats.synchronous_sends += sync as u64;
                let op = GoalOp { kind: GoalKind::Send, cpu: 0, nic: 0, peer: dst, tag: tag_of(tag, ctx)?, size: bytes.round() as u64 };
                let i = node(&mut g, &mut after, op, true);
                post(&mut slots, &mut unwaited, &mut fan, req, user, i);
            }
            Step::Recv { req, src, tag, ctx } => {
                let tag = match tag {
                    Some(t) => tag_of(t, ctx)?,
                    None => ANY,
                };
                let op = GoalOp { kind: GoalKind::Recv, cpu: 0, nic: 0, peer: src.unwrap_or(ANY), tag, size: 0 };
                let i = node(&mut g, &mut after, op, true);
                post(&mut slots, &mut unwaited, &mut fan, req, user, i);
            }
            Step::Wait { reqs, n } => {
                for &q in &reqs[..n as usize] {
                    wait_on(&mut after, slots[q as usize]);
                    unwaited.retain(|&s| s != q);
                }
            }
            Step::WaitSlots { first, n } => {
                for q in first..first + n {
                    wait_on(&mut after, slots[q as usize]);
                }
            }
            Step::WaitFan => {
                for n in fan.drain(..) {
                    wait_on(&mut after, n);
                }
            }
            Step::WaitAll => {
                for q in std::mem::take(&mut unwaited) {
                    wait_on(&mut after, slots[q as usize]);
                }
            }
            Step::Test { .. } => stats.tests += 1,
            Step::WaitAny => {
                stats.waitany_as_waitall += 1;
                let OpSpec::Waitany { reqs } = &trace.spec.ranks[r][cursor.op as usize] else {
                    unreachable!("a WaitAny step comes from a waitany op")
                };
                for &q in reqs {
                    if unwaited.contains(&(q as u32)) {
                        wait_on(&mut after, slots[q]);
                        unwaited.retain(|&s| s != q as u32);
                    }
                }
            }
        }
        trace.advance(r, &mut cursor, coll);
    }
    Ok(g)
}

/// Records node `i` as posted in request slot `req` (or in the current fan).
fn post(slots: &mut Vec<u32>, unwaited: &mut Vec<u32>, fan: &mut Vec<u32>, req: u32, user: u32, i: u32) {
    if req == FAN_REQ {
        fan.push(i);
        return;
    }
    if req as usize >= slots.len() {
        slots.resize(req as usize + 1, 0);
    }
    slots[req as usize] = i;
    if req < user {
        unwaited.push(req);
    }
}

/// `trace` as a GOAL schedule under `coll`'s algorithms; rank r computes at `speeds[r]` flop/s.
/// A receive's size is filled in from its matching send where the trace gives one (GOAL states
/// it on both sides; LogGOPSim's rendezvous test reads it on one path).
pub fn from_trace(trace: &Trace, coll: &Collectives, speeds: &[f64], units: CalcUnits) -> Result<(GoalSchedule, FromTraceStats)> {
    trace.check_collectives(coll)?;
    let mut stats = FromTraceStats::default();
    let mut ranks = Vec::with_capacity(trace.n_ranks());
    for r in 0..trace.n_ranks() {
        ranks.push(rank_graph(trace, coll, r, speeds[r], units, &mut stats)?.finish());
    }
    let mut schedule = GoalSchedule { ranks };
    fill_receive_sizes(&mut schedule);
    Ok((schedule, stats))
}

/// Gives each receive the size of the send it matches in a replay where every rank posts in
/// program order: per (source, destination, tag), the k-th send meets the k-th receive naming
/// that source and tag. Wildcard receives keep size 0 (sizes never decide matching).
fn fill_receive_sizes(s: &mut GoalSchedule) {
    use std::collections::{HashMap, VecDeque};
    let mut sends: HashMap<(u32, u32, u32), VecDeque<u64>> = HashMap::new();
    for (r, rank) in s.ranks.iter().enumerate() {
        for op in rank.ops.iter().filter(|o| o.kind == GoalKind::Send) {
            sends.entry((r as u32, op.peer, op.tag)).or_default().push_back(op.size);
        }
    }
    for (r, rank) in s.ranks.iter_mut().enumerate() {
        for op in rank.ops.iter_mut().filter(|o| o.kind == GoalKind::Recv && o.peer != ANY && o.tag != ANY) {
            if let Some(size) = sends.get_mut(&(op.peer, r as u32, op.tag)).and_then(|q| q.pop_front()) {
                op.size = size;
            }
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::goal::loggp::{simulate, LoggpParams};
    use crate::mpi::goal::parse::parse_text;
    use crate::mpi::goal::write::write;

    fn goal_of(json: &str) -> (GoalSchedule, FromTraceStats) {
        let trace = Trace::from_json(json).unwrap();
        let n = trace.n_ranks();
        from_trace(&trace, &Collectives::default(), &vec![1e9; n], CalcUnits::new(1e-9).unwrap()).unwrap()
    }

    #[test]
    fn a_ping_pong_becomes_chains_loggopsim_runs() {
        let (s, _) = goal_of(
            r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 1024, "tag": 0}, {"op": "recv", "src": 1, "tag": 0}, {"op": "compute", "flops": 2000}],
                          [{"op": "recv", "src": 0, "tag": 0}, {"op": "send", "dst": 0, "bytes": 1024, "tag": 0}]]}"#,
        );
        let mut text = Vec::new();
        write(&s, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        // blocking steps are required whole; the receive got the send's size
        assert!(text.contains("rank 0 {\nl1: send 1024b to 1 tag 0\nl2: recv 1024b from 1 tag 0\nl3: calc 2000\nl2 requires l1\nl3 requires l2\n}"), "{text}");
        let note = LoggpParams { latency: 1000, overhead: 0, gap: 0, gap_per_byte: 10, overhead_per_byte: 0, eager_limit: 65535 };
        // by hand: rank 1 handles the message 1,000..11,230 and sends at 11,230; rank 0 handles
        // the reply 12,230..22,460, then computes 2,000 ns
        assert_eq!(simulate(&parse_text(&text).unwrap(), note).unwrap().ends, vec![24460, 11230]);
    }

    #[test]
    fn posts_are_irequired_and_waits_required() {
        let (s, stats) = goal_of(
            r#"{"ranks": [[{"op": "irecv", "src": 1, "tag": 5}, {"op": "isend", "dst": 1, "bytes": 8, "tag": 5}, {"op": "test", "req": 0}, {"op": "waitall"}, {"op": "compute", "seconds": 1e-6}],
                          [{"op": "irecv", "src": 0, "tag": 5}, {"op": "isend", "dst": 0, "bytes": 8, "tag": 5}, {"op": "waitall"}]]}"#,
        );
        let r0 = &s.ranks[0];
        assert_eq!(r0.irequires_me(0), &[1]);
        assert_eq!(r0.requires_me(0), &[2]);
        assert_eq!(r0.requires_me(1), &[2]);
        assert_eq!(r0.ops[2], GoalOp { kind: GoalKind::Calc, cpu: 0, nic: 0, peer: 0, tag: 0, size: 1000 });
        assert_eq!(stats.tests, 1);
    }

    #[test]
    fn collectives_are_lowered_with_their_context_in_the_tag() {
        let (s, _) = goal_of(r#"{"ranks": [[{"op": "bcast", "root": 0, "bytes": 64}], [{"op": "bcast", "root": 0, "bytes": 64}]]}"#);
        assert_eq!(s.ranks[0].ops[0].kind, GoalKind::Send);
        assert_eq!(s.ranks[0].ops[0].tag as u64, CONTEXT_TAG_STRIDE); // world collective context 1, first collective
        assert_eq!(s.ranks[1].ops[0].size, 64);
    }
}
