//! Traces: one list of MPI-style operations per rank (paper 004 §VI-A), parsed,
//! validated and lowered into a few primitive operations. Collectives expand into
//! point-to-point algorithms as MPICH does them:
//! * barrier: dissemination, zero-byte messages, round k exchanges with rank ± 2^k;
//! * bcast: binomial tree, the child with the largest subtree first, blocking sends;
//! * allreduce: recursive doubling, with the usual fix-up for a non-power-of-two count;
//! * alltoall: pairwise exchange, one partner per round (`bytes` is the block per peer).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mpi::collectives::{reduced_bytes, round_in, Algo, Collectives, Ctx, Round};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::error::{check_amount, parse_json, Error, ErrorKind, Result};
use crate::network::platform::MAX_EXACT;

/// A host given by name or by index, for explicit placements.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HostRef {
    Index(usize),
    Name(String),
}

/// The trace file: one op list per rank, and optionally the host of each rank.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    pub ranks: Vec<Vec<OpSpec>>,
    /// Host of each rank (name or index) for the explicit placement; default rank i on host i.
    #[serde(default)]
    pub placement: Option<Vec<HostRef>>,
}

/// Communication contexts: communicator g has 2g for user messages and 2g + 1 for its
/// collectives, so neither ever matches the other or another communicator's (MPI keeps
/// a separate context per communicator for collectives). The world's are these two.
pub const CTX_USER: u32 = 0;
pub const CTX_COLLECTIVE: u32 = 1;

/// The request of a fan's posts ([`Step::Send`], [`Step::Recv`]): they are awaited all
/// together by [`Step::WaitFan`], so the replay need not keep a slot for each.
pub const FAN_REQ: u32 = u32::MAX - 1;

/// Largest number of ranks a trace may have (each rank costs some state in the replay).
pub const MAX_RANKS: usize = 1 << 22;

/// One primitive step of a rank, produced on demand by [`Trace::step`]. Request slots are
/// per rank: user requests (`isend`/`irecv`) take slots `0..n_user_reqs` in posting order;
/// blocking point-to-point ops and collective rounds use the scratch slots after them (two,
/// or as many as a segmented algorithm posts), which are free again once the step's wait
/// completed; a fan's posts take none ([`FAN_REQ`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Compute `amount` flops, or `amount` seconds at full speed when `seconds`.
    Compute { amount: f64, seconds: bool },
    Sleep { seconds: f64 },
    /// Post a send into request slot `req`; `nonblocking` for an MPI_Isend (or the send of an
    /// MPI_Sendrecv or of a fan, which SMPI's algorithms post with isend), not for a blocking
    /// send: SMPI's sender overheads differ (`smpi/ois`, `smpi/os`).
    Send { req: u32, dst: u32, bytes: f64, tag: i64, ctx: u32, sync: bool, nonblocking: bool },
    /// Post a receive into request slot `req`; `None` means any.
    Recv { req: u32, src: Option<u32>, tag: Option<i64>, ctx: u32 },
    /// Block until these request slots (the first `n` of `reqs`) completed.
    Wait { reqs: [u32; 2], n: u8 },
    /// Block until request slots `first..first + n` completed.
    WaitSlots { first: u32, n: u32 },
    /// Block until every post of the current fan completed (its MPI_Waitall). A fan's
    /// posts carry [`FAN_REQ`] instead of a slot: the replay keeps its requests together.
    WaitFan,
    /// Block until every user request posted and not waited for yet completed.
    WaitAll,
    /// MPI_Test of user request `req`.
    Test { req: u32 },
    /// MPI_Waitany over the current op's `reqs` (the replay reads them from the op).
    WaitAny,
}

/// Where a rank is in its program: the trace op, the round within a collective and the
/// step within the round. Lowering is lazy: a 4,096-rank alltoall never exists as
/// 4,095 × 3 steps per rank, only as this cursor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Index of the trace op (its position in the rank's list).
    pub op: u32,
    round: u32,
    micro: u32,
    /// User requests posted so far (the next user request's slot).
    pub user_posted: u32,
    /// The current collective's algorithm, picked once when the cursor reaches it (a
    /// preset's choice may sum every rank's size).
    algo: Option<Algo>,
    /// Whether the current collective is the first on its communicator to run SimGrid's
    /// `Comm::init_smp` (which then communicates before it).
    smp_first: bool,
}

/// A validated trace. Ranks' programs are not expanded: [`Trace::step`] gives each
/// rank's next primitive step from its [`Cursor`].
#[derive(Debug, Clone)]
pub struct Trace {
    pub spec: TraceSpec,
    /// User requests (`isend`/`irecv`) of each rank.
    pub n_user_reqs: Vec<u32>,
    /// Members (world ranks, in communicator rank order) of every communicator; 0 is the world.
    comms: Vec<Vec<u32>>,
    /// Per rank, its communicators by its own id: (communicator, its rank in it).
    local: Vec<Vec<(u32, u32)>>,
    /// Per rank and op: a collective's position among its communicator's collectives
    /// (the tag of its messages); empty for a rank without collectives.
    coll_seq: Vec<Vec<u32>>,
    /// Ops whose size a derived datatype gave (SimGrid TI traces: datatype id -1, read as
    /// [`crate::mpi::ti::TiOptions::derived_datatype_bytes`] per element); 0 for other traces.
    pub derived_datatype_ops: u64,
    /// For a GOAL schedule: its graph. Each rank's ops are then its GOAL operations in line
    /// order (isend, irecv, compute), and the replay runs an op once its dependencies are met
    /// instead of in list order.
    pub graph: Option<std::sync::Arc<crate::mpi::graph::GoalSchedule>>,
}

impl Trace {
    pub fn from_json(text: &str) -> Result<Trace> {
        let spec: TraceSpec = parse_json(ErrorKind::Trace, text)?;
        Trace::from_spec(spec)
    }

    pub fn n_ranks(&self) -> usize {
        self.spec.ranks.len()
    }

    /// Ops of all ranks, as the trace states them (a collective is one op).
    pub fn n_ops(&self) -> usize {
        self.spec.ranks.iter().map(|r| r.len()).sum()
    }

    /// Writes the trace as a commaware JSON trace file (`{"ranks": [[op, ...], ...]}`, one op
    /// per line, and the placement when it has one), streamed to `w`.
    pub fn write_json(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(b"{\"ranks\": [")?;
        for (r, ops) in self.spec.ranks.iter().enumerate() {
            w.write_all(if r == 0 { b"\n[" } else { b",\n[" })?;
            for (i, op) in ops.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                w.write_all(b"\n ")?;
                serde_json::to_writer(&mut *w, op)?;
            }
            w.write_all(b"]")?;
        }
        w.write_all(b"]")?;
        if let Some(placement) = &self.spec.placement {
            w.write_all(b",\n\"placement\": ")?;
            serde_json::to_writer(&mut *w, placement)?;
        }
        w.write_all(b"}\n")
    }

    /// The JSON Schema of trace files, with the loader's bounds: sizes and times in
    /// [0, 2^53], tags >= 0, and a compute with exactly one of `flops` and `seconds`.
    pub fn json_schema() -> String {
        let mut schema = serde_json::to_value(schemars::schema_for!(TraceSpec)).expect("schema serialises");
        if let Some(ranks) = schema.pointer_mut("/properties/ranks") {
            ranks["minItems"] = 1.into();
            ranks["maxItems"] = MAX_RANKS.into();
        }
        if let Some(variants) = schema.pointer_mut("/definitions/OpSpec/oneOf").and_then(|v| v.as_array_mut()) {
            for variant in variants {
                let is_compute = variant.pointer("/properties/op/enum/0").and_then(|v| v.as_str()) == Some("compute");
                let Some(props) = variant.get_mut("properties").and_then(|p| p.as_object_mut()) else { continue };
                for (name, prop) in props.iter_mut() {
                    // A size per rank: bound its items.
                    let prop = if prop.get("type").and_then(|t| t.as_str()) == Some("array") { &mut prop["items"] } else { prop };
                    match name.as_str() {
                        "bytes" | "flops" | "seconds" => {
                            prop["minimum"] = 0.into();
                            prop["maximum"] = MAX_EXACT.into();
                            if is_compute {
                                // Given as a number; `null` is no better than leaving it out.
                                prop["type"] = "number".into();
                            }
                        }
                        "tag" if prop.get("oneOf").is_none() => prop["minimum"] = 0.into(),
                        _ => {}
                    }
                }
                if is_compute {
                    variant["oneOf"] = serde_json::json!([{"required": ["flops"]}, {"required": ["seconds"]}]);
                }
            }
        }
        serde_json::to_string_pretty(&schema).expect("schema serialises")
    }

    pub fn from_spec(spec: TraceSpec) -> Result<Trace> {
        let p = spec.ranks.len();
        if p == 0 {
            return Err(Error::trace("ranks", "the trace has no ranks"));
        }
        if p > MAX_RANKS {
            return Err(Error::trace("ranks", format!("{p} ranks is more than the limit of {MAX_RANKS}")));
        }
        if let Some(pl) = &spec.placement {
            if pl.len() != p {
                return Err(Error::trace("placement", format!("lists {} hosts for {p} ranks", pl.len())));
            }
        }
        let comms = resolve_comms(&spec.ranks)?;
        crate::util::cancel::check()?; // a trace of millions of operations takes a while
        // The ranks are checked on every core; the first error in rank order is reported, as
        // one rank after another would.
        let n_user_reqs = crate::util::par::map_in_order(&spec.ranks, |r, ops| {
            let sizes: Vec<usize> = comms.local[r].iter().map(|&(g, _)| comms.members[g as usize].len()).collect();
            validate_rank(r, &sizes, ops)
        })
        .into_iter()
        .collect::<Result<Vec<u32>>>()?;
        crate::util::cancel::check()?;
        let coll_seq = match_collectives(&spec.ranks, &comms)?;
        Ok(Trace { spec, n_user_reqs, comms: comms.members, local: comms.local, coll_seq, derived_datatype_ops: 0, graph: None })
    }

    /// A trace of no rank: the start of a union ([`Trace::append`]).
    pub(crate) fn empty() -> Trace {
        Trace {
            spec: TraceSpec { ranks: Vec::new(), placement: None },
            n_user_reqs: Vec::new(),
            comms: Vec::new(),
            local: Vec::new(),
            coll_seq: Vec::new(),
            derived_datatype_ops: 0,
            graph: None,
        }
    }

    /// Add `part`'s ranks after this trace's, for jobs that share a platform: its ranks are
    /// shifted by the ranks before them, and its world and communicators become communicators
    /// of the union, so no message or collective of one part ever matches another's (each
    /// communicator has its own contexts). A union has no world of its own: its communicator 0
    /// is the first part's world. Placements are dropped (the caller places the ranks).
    pub(crate) fn append(&mut self, part: Trace) -> Result<()> {
        if part.graph.is_some() || self.graph.is_some() {
            return Err(Error::trace("ranks", "a GOAL schedule runs alone, not as one job among others"));
        }
        let total = self.n_ranks() + part.n_ranks();
        if total > MAX_RANKS {
            return Err(Error::trace("ranks", format!("{total} ranks in all is more than the limit of {MAX_RANKS}")));
        }
        let (rank_base, comm_base) = (self.spec.ranks.len() as u32, self.comms.len() as u32);
        self.comms.extend(part.comms.into_iter().map(|members| members.into_iter().map(|m| m + rank_base).collect()));
        self.local.extend(part.local.into_iter().map(|mine| mine.into_iter().map(|(g, me)| (g + comm_base, me)).collect()));
        self.spec.ranks.extend(part.spec.ranks);
        self.spec.placement = None;
        self.n_user_reqs.extend(part.n_user_reqs);
        self.coll_seq.extend(part.coll_seq);
        self.derived_datatype_ops += part.derived_datatype_ops;
        Ok(())
    }

    /// Forget the program of ranks `ranks` (a job that ended): its memory goes, its ranks stay.
    pub(crate) fn forget(&mut self, ranks: std::ops::Range<usize>) {
        for r in ranks {
            self.spec.ranks[r] = Vec::new();
            self.coll_seq[r] = Vec::new();
        }
    }

    /// Rank `r`'s communicator `comm` (its own id): the communicator's members and `r`'s
    /// rank in it.
    fn comm_of(&self, r: usize, comm: usize) -> (u32, &[u32], usize) {
        let (g, me) = self.local[r][comm];
        (g, &self.comms[g as usize], me as usize)
    }

    /// Rank `r`'s communicator `comm` (its own id) as the trace's communicator number (0 is
    /// the world; the others in creation order) and `r`'s rank in it.
    pub fn communicator(&self, r: usize, comm: usize) -> (u32, usize) {
        let (g, _, me) = self.comm_of(r, comm);
        (g, me)
    }

    /// The members (world ranks, in communicator rank order) of every communicator the
    /// trace creates, by communicator number (0 is the world).
    pub fn communicators(&self) -> &[Vec<u32>] {
        &self.comms
    }

    /// First scratch request slot of rank `r` (after its user requests).
    pub fn scratch_slot(&self, r: usize) -> u32 {
        self.n_user_reqs[r]
    }

    /// Size of rank `r`'s communicator `comm` (its own id).
    pub fn comm_size(&self, r: usize, comm: usize) -> usize {
        self.comm_of(r, comm).1.len()
    }

    /// The world rank of rank `local` of rank `r`'s communicator `comm` (its own id).
    pub fn world_rank(&self, r: usize, comm: usize, local: usize) -> usize {
        self.comm_of(r, comm).1[local] as usize
    }

    /// Rank `r`'s rank in its communicator `comm` (its own id).
    pub fn rank_in(&self, r: usize, comm: usize) -> usize {
        self.comm_of(r, comm).2
    }

    /// Check that `coll`'s algorithms suit every collective's communicator.
    pub fn check_collectives(&self, coll: &Collectives) -> Result<()> {
        for (r, ops) in self.spec.ranks.iter().enumerate() {
            for (i, op) in ops.iter().enumerate() {
                if op.is_collective() {
                    coll.check(op, self.comm_size(r, op.comm())).map_err(|e| Error { field: format!("ranks[{r}][{i}]: --coll"), ..e })?;
                }
            }
        }
        Ok(())
    }

    /// A cursor at the start of rank `r`'s program.
    pub fn start(&self, r: usize, coll: &Collectives) -> Cursor {
        let mut c = Cursor::default();
        self.settle(r, &mut c, coll);
        c
    }

    /// Round `k` of rank `r`'s part in collective `op` with algorithm `algo`, and the flops
    /// of the reduction it does after the round (0 for none) under `coll`.
    /// With `smp_first`, the op runs `Comm::init_smp` on its communicator first.
    fn collective_round(&self, r: usize, op: &OpSpec, coll: &Collectives, algo: Algo, smp_first: bool, k: u32) -> Option<(Round, f64)> {
        let (g, members, me) = self.comm_of(r, op.comm());
        let layout = smp_first.then(|| coll.smp_layout(g, members));
        let rd = round_in(op, algo, me, members.len(), k, &Ctx { coll, smp: layout.as_deref() })?;
        let flops = if coll.flops_per_byte > 0.0 { reduced_bytes(op, algo, me, members.len(), k, rd, coll) * coll.flops_per_byte } else { 0.0 };
        Some((rd, flops))
    }

    /// Move `c` past its current step.
    pub fn advance(&self, r: usize, c: &mut Cursor, coll: &Collectives) {
        let op = &self.spec.ranks[r][c.op as usize];
        match op {
            OpSpec::Isend { .. } | OpSpec::Irecv { .. } => {
                c.user_posted += 1;
                c.op += 1;
            }
            _ if op.is_collective() || op.blocking_steps().is_some() => c.micro += 1,
            _ => c.op += 1,
        }
        self.settle(r, c, coll);
    }

    /// Make `c` point at a real step (skipping empty rounds and finished collectives) or
    /// past the end of the program.
    fn settle(&self, r: usize, c: &mut Cursor, coll: &Collectives) {
        let ops = &self.spec.ranks[r];
        while (c.op as usize) < ops.len() {
            let op = &ops[c.op as usize];
            if op.is_collective() {
                let algo = match c.algo {
                    Some(a) => a,
                    None => {
                        let p = self.comm_size(r, op.comm());
                        let a = coll.pick(op, p);
                        c.smp_first = coll.uses_init_smp(op, a, p) && !self.ran_init_smp(r, c.op as usize, coll);
                        c.algo = Some(a);
                        a
                    }
                };
                match self.collective_round(r, op, coll, algo, c.smp_first, c.round) {
                    // Post, wait, then combine what arrived (reductions on a costing platform).
                    Some((round, flops)) if c.micro < round.len() + (flops > 0.0) as u32 => return,
                    Some(_) => {
                        c.round += 1;
                        c.micro = 0;
                        continue;
                    }
                    None => {}
                }
            } else if let Some(n) = op.blocking_steps() {
                // Post, then wait.
                if c.micro < n as u32 {
                    return;
                }
            } else {
                return;
            }
            c.op += 1;
            c.round = 0;
            c.micro = 0;
            c.algo = None;
            c.smp_first = false;
        }
    }

    /// Whether a collective of rank `r` before its op `i`, on the same communicator, ran
    /// SimGrid's `Comm::init_smp` (which a communicator runs once). Looks back to the last
    /// collective there that needs it.
    fn ran_init_smp(&self, r: usize, i: usize, coll: &Collectives) -> bool {
        let ops = &self.spec.ranks[r];
        let comm = ops[i].comm();
        ops[..i].iter().rev().any(|op| {
            op.is_collective() && op.comm() == comm && {
                let p = self.comm_size(r, comm);
                coll.uses_init_smp(op, coll.pick(op, p), p)
            }
        })
    }

    /// Whether rank `r`'s program is over at `c`.
    pub fn finished(&self, r: usize, c: &Cursor) -> bool {
        c.op as usize >= self.spec.ranks[r].len()
    }

    /// The step of rank `r` at `c` (which must not be finished).
    pub fn step(&self, r: usize, c: &Cursor, coll: &Collectives) -> Step {
        let op = &self.spec.ranks[r][c.op as usize];
        let (a, b) = (self.scratch_slot(r), self.scratch_slot(r) + 1);
        let (g, members, _) = self.comm_of(r, op.comm());
        // Ranks in the op are ranks in its communicator.
        let world = |x: usize| members[x];
        let from = |p: Peer| match p {
            Peer::Rank(s) => Some(world(s)),
            Peer::Any => None,
        };
        let (user, coll_ctx) = (2 * g, 2 * g + 1);
        let round = match *op {
            OpSpec::Compute { flops: Some(f), .. } => return Step::Compute { amount: f, seconds: false },
            OpSpec::Compute { seconds, .. } => return Step::Compute { amount: seconds.unwrap_or(0.0), seconds: true },
            OpSpec::Sleep { seconds } => return Step::Sleep { seconds },
            OpSpec::Isend { dst, bytes, tag, sync, .. } => {
                return Step::Send { req: c.user_posted, dst: world(dst), bytes, tag, ctx: user, sync, nonblocking: true }
            }
            OpSpec::Irecv { src, tag, .. } => return Step::Recv { req: c.user_posted, src: from(src), tag: tag_of(tag), ctx: user },
            OpSpec::Wait { req } => return Step::Wait { reqs: [req as u32, 0], n: 1 },
            OpSpec::Waitall => return Step::WaitAll,
            OpSpec::Test { req } => return Step::Test { req: req as u32 },
            OpSpec::Waitany { .. } => return Step::WaitAny,
            OpSpec::Send { dst, bytes, tag, sync, .. } => {
                return match c.micro {
                    0 => Step::Send { req: a, dst: world(dst), bytes, tag, ctx: user, sync, nonblocking: false },
                    _ => Step::Wait { reqs: [a, 0], n: 1 },
                }
            }
            OpSpec::Recv { src, tag, .. } => {
                return match c.micro {
                    0 => Step::Recv { req: a, src: from(src), tag: tag_of(tag), ctx: user },
                    _ => Step::Wait { reqs: [a, 0], n: 1 },
                }
            }
            OpSpec::Sendrecv { dst, bytes, tag, src, recvtag, .. } => {
                return match c.micro {
                    0 => Step::Send { req: a, dst: world(dst), bytes, tag, ctx: user, sync: false, nonblocking: true },
                    1 => Step::Recv { req: b, src: from(src), tag: tag_of(recvtag), ctx: user },
                    _ => Step::Wait { reqs: [a, b], n: 2 },
                }
            }
            _ => {
                let algo = c.algo.expect("a settled cursor on a collective has its algorithm");
                let (rd, flops) = self.collective_round(r, op, coll, algo, c.smp_first, c.round).expect("settled cursor is on a round");
                if c.micro == rd.len() {
                    return Step::Compute { amount: flops, seconds: false };
                }
                rd
            }
        };
        let tag = self.coll_seq[r][c.op as usize] as i64;
        let send = |req, dst: usize, bytes: f64, nonblocking: bool| Step::Send { req, dst: world(dst), bytes, tag, ctx: coll_ctx, sync: false, nonblocking };
        let recv = |req, src: usize| Step::Recv { req, src: Some(world(src)), tag: Some(tag), ctx: coll_ctx };
        match (round, c.micro) {
            (Round::Send { to, bytes }, 0) => send(a, to, bytes, false),
            (Round::Recv(s), 0) => recv(a, s),
            (Round::Send { .. } | Round::Recv(_), _) => Step::Wait { reqs: [a, 0], n: 1 },
            // MPI_Sendrecv: both posted, then both waited.
            (Round::SendRecv { dst, bytes, .. }, 0) => send(a, dst, bytes, true),
            (Round::SendRecv { src, .. }, 1) => recv(b, src),
            (Round::SendRecv { .. }, _) => Step::Wait { reqs: [a, b], n: 2 },
            // A fan's posts, then one wait for them all.
            (Round::Fan(fan), i) if i < fan.posts() => match fan.post(op, i) {
                Round::Send { to, bytes } => send(FAN_REQ, to, bytes, true),
                Round::Recv(s) => recv(FAN_REQ, s),
                _ => unreachable!("a fan posts sends and receives"),
            },
            (Round::Fan(_), _) => Step::WaitFan,
            // Open MPI's segmented algorithms: posts into chosen slots, waits on slot ranges.
            (Round::SendSlot { to, bytes, slot, blocking }, 0) => send(a + slot, to, bytes, !blocking),
            (Round::SendSlot { slot, .. }, _) => Step::Wait { reqs: [a + slot, 0], n: 1 },
            (Round::RecvSlot { from, slot }, _) => recv(a + slot, from),
            (Round::Await { first, n, .. }, _) => Step::WaitSlots { first: a + first, n },
            (Round::Skip, _) => unreachable!("settled cursor skips empty rounds"),
        }
    }
}

fn tag_of(t: TagSpec) -> Option<i64> {
    match t {
        TagSpec::Value(v) => Some(v),
        TagSpec::Any => None,
    }
}

/// The communicators of a trace: members of each (0 is the world) and, per rank, its
/// communicators by its own id with its rank in each.
struct Comms {
    members: Vec<Vec<u32>>,
    local: Vec<Vec<(u32, u32)>>,
}

/// A communicator creation of one rank: its op index, the parent (its own id for it),
/// and the split's (color, key) (`None` for a dup).
struct Creation {
    op: usize,
    parent: usize,
    split: Option<(i64, i64)>,
}

/// Work out every communicator `comm_split`/`comm_dup` create. Each creation is collective
/// over its parent: the n-th creation on a communicator is the n-th of every member. A
/// rank's ids follow its own creation order, so creations resolve in each rank's program
/// order, one communicator at a time, until none is left.
fn resolve_comms(ranks: &[Vec<OpSpec>]) -> Result<Comms> {
    let p = ranks.len();
    let mut members: Vec<Vec<u32>> = vec![(0..p as u32).collect()];
    let mut local: Vec<Vec<(u32, u32)>> = (0..p).map(|r| vec![(0, r as u32)]).collect();
    let mut creations: Vec<Vec<Creation>> = Vec::with_capacity(p);
    for (r, ops) in ranks.iter().enumerate() {
        // Ids this rank holds at each point: the world, plus one per creation that gave it one.
        let mut held = 1usize;
        let mut mine = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let c = op.comm();
            if c >= held {
                return Err(Error::trace(
                    format!("ranks[{r}][{i}].comm"),
                    format!("communicator {c} does not exist here (this rank holds {held}: 0 is the world, then one per comm_split/comm_dup it got)"),
                ));
            }
            match *op {
                OpSpec::CommSplit { comm, color, key } => {
                    if color < -1 {
                        return Err(Error::trace(format!("ranks[{r}][{i}].color"), format!("must be >= 0, or -1 for MPI_UNDEFINED, got {color}")));
                    }
                    mine.push(Creation { op: i, parent: comm, split: Some((color, key)) });
                    held += (color >= 0) as usize;
                }
                OpSpec::CommDup { comm } => {
                    mine.push(Creation { op: i, parent: comm, split: None });
                    held += 1;
                }
                _ => {}
            }
        }
        creations.push(mine);
    }
    if creations.iter().all(|c| c.is_empty()) {
        return Ok(Comms { members, local });
    }
    let mut next = vec![0usize; p];
    loop {
        let mut progress = false;
        let mut g = 0;
        while g < members.len() {
            // Every member's next creation must be on communicator g.
            let ready = members[g].iter().all(|&m| {
                let m = m as usize;
                creations[m].get(next[m]).is_some_and(|c| local[m][c.parent].0 as usize == g)
            });
            if !ready {
                g += 1;
                continue;
            }
            let group = members[g].clone();
            let first = &creations[group[0] as usize][next[group[0] as usize]];
            let is_split = first.split.is_some();
            for &m in &group {
                let c = &creations[m as usize][next[m as usize]];
                if c.split.is_some() != is_split {
                    return Err(Error::trace(
                        format!("ranks[{m}][{}]", c.op),
                        format!("rank {} calls {} here on the same communicator", group[0], if is_split { "comm_split" } else { "comm_dup" }),
                    ));
                }
            }
            if is_split {
                // (color, key, rank in the parent, world rank), grouped by color.
                let mut by: Vec<(i64, i64, usize, u32)> = group
                    .iter()
                    .enumerate()
                    .filter_map(|(idx, &m)| {
                        let (color, key) = creations[m as usize][next[m as usize]].split.expect("a split");
                        (color >= 0).then_some((color, key, idx, m))
                    })
                    .collect();
                by.sort_unstable();
                for chunk in by.chunk_by(|x, y| x.0 == y.0) {
                    let id = members.len() as u32;
                    members.push(chunk.iter().map(|x| x.3).collect());
                    for (rank_in, x) in chunk.iter().enumerate() {
                        local[x.3 as usize].push((id, rank_in as u32));
                    }
                }
            } else {
                let id = members.len() as u32;
                members.push(group.clone());
                for (rank_in, &m) in group.iter().enumerate() {
                    local[m as usize].push((id, rank_in as u32));
                }
            }
            for &m in &group {
                next[m as usize] += 1;
            }
            progress = true;
            g += 1;
        }
        if !progress {
            break;
        }
    }
    if let Some(r) = (0..p).find(|&r| next[r] < creations[r].len()) {
        let c = &creations[r][next[r]];
        return Err(Error::trace(
            format!("ranks[{r}][{}]", c.op),
            format!(
                "this {} on communicator {} is not matched: every member of that communicator must create communicators on it in the same order",
                if c.split.is_some() { "comm_split" } else { "comm_dup" },
                c.parent
            ),
        ));
    }
    Ok(Comms { members, local })
}

/// Check that the members of every communicator call the same collectives on it in the
/// same order; returns each collective's position in its communicator's sequence.
fn match_collectives(ranks: &[Vec<OpSpec>], comms: &Comms) -> Result<Vec<Vec<u32>>> {
    // Per rank and own communicator id: the op indices of its collectives there.
    let mut lists: Vec<Vec<Vec<usize>>> = Vec::with_capacity(ranks.len());
    let mut seq: Vec<Vec<u32>> = Vec::with_capacity(ranks.len());
    for (r, ops) in ranks.iter().enumerate() {
        let mut mine: Vec<Vec<usize>> = vec![Vec::new(); comms.local[r].len()];
        let mut positions = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            if op.is_collective() {
                if positions.is_empty() {
                    positions = vec![0u32; ops.len()];
                }
                let list = &mut mine[op.comm()];
                positions[i] = list.len() as u32;
                list.push(i);
            }
        }
        lists.push(mine);
        seq.push(positions);
    }
    // Each member's own id for every communicator.
    let mut ids: Vec<Vec<usize>> = comms.members.iter().map(|m| vec![0; m.len()]).collect();
    for row in &comms.local {
        for (id, &(g, me)) in row.iter().enumerate() {
            ids[g as usize][me as usize] = id;
        }
    }
    for (g, members) in comms.members.iter().enumerate() {
        let r0 = members[0] as usize;
        let reference = &lists[r0][ids[g][0]];
        for (idx, &m) in members.iter().enumerate().skip(1) {
            let m = m as usize;
            let mine = &lists[m][ids[g][idx]];
            let on = if g == 0 { String::new() } else { format!(" on its communicator {}", ids[g][idx]) };
            for (k, &i) in mine.iter().enumerate() {
                let op = &ranks[m][i];
                match reference.get(k) {
                    Some(&j) if ranks[r0][j].same_collective(op) => {}
                    Some(&j) => {
                        return Err(Error::trace(
                            format!("ranks[{m}][{i}]"),
                            format!("collective #{k}{on} is `{}` but rank {r0}'s is `{}`", op.describe(), ranks[r0][j].describe()),
                        ))
                    }
                    None => {
                        return Err(Error::trace(
                            format!("ranks[{m}][{i}]"),
                            format!("collective #{k} `{}`{on} has no counterpart on rank {r0}", op.describe()),
                        ))
                    }
                }
            }
            if mine.len() < reference.len() {
                let on = if g == 0 { String::new() } else { format!(" on a shared communicator") };
                return Err(Error::trace(
                    format!("ranks[{m}]"),
                    format!("calls {} collectives{on} but rank {r0} calls {}", mine.len(), reference.len()),
                ));
            }
        }
    }
    Ok(seq)
}

/// Check rank `r`'s ops (ranks, sizes, tags, requests) given the size of each of its
/// communicators; returns its user request count.
fn validate_rank(r: usize, comm_sizes: &[usize], ops: &[OpSpec]) -> Result<u32> {
    // Per user request (posting order): already waited for?
    let mut waited: Vec<bool> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let p = comm_sizes[op.comm()];
        let field = |name: &str| format!("ranks[{r}][{i}].{name}");
        let rank_ok = |name: &str, v: usize| -> Result<()> {
            if v >= p {
                let what = if op.comm() == 0 { "the trace".to_string() } else { format!("communicator {}", op.comm()) };
                Err(Error::trace(field(name), format!("rank {v} out of range ({what} has {p} ranks)")))
            } else {
                Ok(())
            }
        };
        let size_ok = |name: &str, v: f64| -> Result<()> {
            if (0.0..=MAX_EXACT).contains(&v) {
                return Ok(()); // the common case: no field name to format
            }
            check_amount(ErrorKind::Trace, &field(name), v, false)?;
            if v > MAX_EXACT {
                return Err(Error::trace(field(name), format!("{v:e} is too large (at most 2^53)")));
            }
            Ok(())
        };
        // A request posted so far and not waited for yet.
        let pending_ok = |name: &str, q: usize, waited: &[bool]| -> Result<()> {
            match waited.get(q) {
                None => Err(Error::trace(field(name), format!("request {q} is not posted yet (this rank has posted {} so far)", waited.len()))),
                Some(true) => Err(Error::trace(field(name), format!("request {q} was already waited for"))),
                Some(false) => Ok(()),
            }
        };
        // A size per rank of the communicator: exactly p of them.
        let sizes_ok = |v: &[f64]| -> Result<()> {
            if v.len() != p {
                let what = if op.comm() == 0 { "the trace".to_string() } else { format!("communicator {}", op.comm()) };
                return Err(Error::trace(field("bytes"), format!("lists {} sizes; {what} has {p} ranks", v.len())));
            }
            for (j, &b) in v.iter().enumerate() {
                size_ok(&format!("bytes[{j}]"), b)?;
            }
            Ok(())
        };
        match op {
            OpSpec::Compute { flops, seconds } => match (flops, seconds) {
                (Some(f), None) => size_ok("flops", *f)?,
                (None, Some(s)) => size_ok("seconds", *s)?,
                _ => return Err(Error::trace(format!("ranks[{r}][{i}]"), "compute needs exactly one of `flops` or `seconds`")),
            },
            OpSpec::Sleep { seconds } => size_ok("seconds", *seconds)?,
            OpSpec::Send { dst, bytes, tag, .. } | OpSpec::Isend { dst, bytes, tag, .. } => {
                rank_ok("dst", *dst)?;
                size_ok("bytes", *bytes)?;
                if *tag < 0 {
                    return Err(Error::trace(field("tag"), "must be >= 0"));
                }
            }
            OpSpec::Recv { src: Peer::Rank(s), .. } | OpSpec::Irecv { src: Peer::Rank(s), .. } => rank_ok("src", *s)?,
            OpSpec::Recv { .. } | OpSpec::Irecv { .. } => {}
            OpSpec::Wait { req } => {
                let Some(done) = waited.get_mut(*req) else {
                    return Err(Error::trace(
                        field("req"),
                        format!("request {req} is not posted yet (this rank has posted {} so far)", waited.len()),
                    ));
                };
                if *done {
                    return Err(Error::trace(field("req"), format!("request {req} was already waited for")));
                }
                *done = true;
            }
            OpSpec::Waitall => waited.iter_mut().for_each(|w| *w = true),
            // Whether a test or a waitany consumes a request depends on timing: they leave
            // it open here (a later wait on a consumed request returns at once).
            OpSpec::Test { req } => pending_ok("req", *req, &waited)?,
            OpSpec::Waitany { reqs } => {
                if reqs.is_empty() {
                    return Err(Error::trace(field("reqs"), "lists no request"));
                }
                for (j, &q) in reqs.iter().enumerate() {
                    pending_ok(&format!("reqs[{j}]"), q, &waited)?;
                }
            }
            OpSpec::Barrier { .. } | OpSpec::CommSplit { .. } | OpSpec::CommDup { .. } => {}
            OpSpec::Bcast { root, bytes, .. } => {
                rank_ok("root", *root)?;
                size_ok("bytes", *bytes)?;
            }
            OpSpec::Allreduce { bytes, .. }
            | OpSpec::Alltoall { bytes, .. }
            | OpSpec::Allgather { bytes, .. }
            | OpSpec::Scan { bytes, .. }
            | OpSpec::Exscan { bytes, .. } => size_ok("bytes", *bytes)?,
            OpSpec::Reduce { root, bytes, .. } | OpSpec::Gather { root, bytes, .. } | OpSpec::Scatter { root, bytes, .. } => {
                rank_ok("root", *root)?;
                size_ok("bytes", *bytes)?;
            }
            OpSpec::Gatherv { root, bytes, .. } | OpSpec::Scatterv { root, bytes, .. } => {
                rank_ok("root", *root)?;
                sizes_ok(bytes)?;
            }
            OpSpec::Allgatherv { bytes, .. } | OpSpec::Alltoallv { bytes, .. } | OpSpec::ReduceScatter { bytes, .. } => sizes_ok(bytes)?,
            OpSpec::Sendrecv { dst, bytes, tag, src, .. } => {
                rank_ok("dst", *dst)?;
                size_ok("bytes", *bytes)?;
                if *tag < 0 {
                    return Err(Error::trace(field("tag"), "must be >= 0"));
                }
                if let Peer::Rank(s) = src {
                    rank_ok("src", *s)?;
                }
            }
        }
        if matches!(op, OpSpec::Isend { .. } | OpSpec::Irecv { .. }) {
            waited.push(false);
        }
    }
    if waited.len() > (u32::MAX - 2) as usize {
        return Err(Error::trace(format!("ranks[{r}]"), format!("{} requests is too many", waited.len())));
    }
    Ok(waited.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(t: &Trace, r: usize) -> Vec<Step> {
        steps_with(t, r, &Collectives::default())
    }

    fn steps_with(t: &Trace, r: usize, coll: &Collectives) -> Vec<Step> {
        let mut c = t.start(r, coll);
        let mut out = Vec::new();
        while !t.finished(r, &c) {
            out.push(t.step(r, &c, coll));
            t.advance(r, &mut c, coll);
        }
        out
    }

    fn sends(t: &Trace, r: usize) -> Vec<u32> {
        steps(t, r).iter().filter_map(|o| if let Step::Send { dst, .. } = o { Some(*dst) } else { None }).collect()
    }

    fn recvs(t: &Trace, r: usize) -> Vec<u32> {
        steps(t, r).iter().filter_map(|o| if let Step::Recv { src, .. } = o { *src } else { None }).collect()
    }

    fn uniform(p: usize, op: OpSpec) -> Trace {
        Trace::from_spec(TraceSpec { ranks: vec![vec![op]; p], placement: None }).unwrap()
    }

    #[test]
    fn every_send_has_its_receive() {
        // For each collective and rank count, the (src, dst) pairs sent equal those received.
        let ops = [OpSpec::Barrier { comm: 0 }, OpSpec::Bcast { root: 2, bytes: 8.0, comm: 0 }, OpSpec::Allreduce { bytes: 8.0, comm: 0 }, OpSpec::Alltoall { bytes: 8.0, comm: 0 }];
        for op in ops {
            for p in [3usize, 4, 5, 6, 7, 8, 13] {
                let t = uniform(p, op.clone());
                let mut sent: Vec<(u32, u32)> = (0..p).flat_map(|r| sends(&t, r).into_iter().map(move |d| (r as u32, d))).collect();
                let mut got: Vec<(u32, u32)> = (0..p).flat_map(|r| recvs(&t, r).into_iter().map(move |s| (s, r as u32))).collect();
                sent.sort_unstable();
                got.sort_unstable();
                assert_eq!(sent, got, "{} on {p} ranks", op.name());
                let expected = match op {
                    OpSpec::Barrier { .. } => p * (usize::BITS - (p - 1).leading_zeros()) as usize,
                    OpSpec::Bcast { .. } => p - 1,
                    OpSpec::Allreduce { .. } => {
                        let pof2 = crate::mpi::collectives::floor_pow2(p);
                        pof2 * pof2.trailing_zeros() as usize + 2 * (p - pof2)
                    }
                    _ => p * (p - 1),
                };
                assert_eq!(sent.len(), expected, "{} on {p} ranks", op.name());
            }
        }
    }

    /// (src, dst, bytes) of every message of a uniform collective, from the send side and
    /// from the receive side (the receive side takes its sizes from the matching send).
    fn messages(t: &Trace, p: usize) -> (Vec<(u32, u32, u64)>, Vec<(u32, u32)>) {
        let mut sent = Vec::new();
        let mut got = Vec::new();
        for r in 0..p {
            for s in steps(t, r) {
                match s {
                    Step::Send { dst, bytes, .. } => sent.push((r as u32, dst, bytes as u64)),
                    Step::Recv { src: Some(src), .. } => got.push((src, r as u32)),
                    _ => {}
                }
            }
        }
        sent.sort_unstable();
        got.sort_unstable();
        (sent, got)
    }

    #[test]
    fn new_collectives_pair_every_send_and_move_the_right_bytes() {
        for p in [1usize, 2, 3, 5, 6, 8, 13] {
            let sizes: Vec<f64> = (0..p).map(|i| (10 * (i + 1)) as f64).collect();
            let total: f64 = sizes.iter().sum();
            let root = p / 2;
            let cases: Vec<(OpSpec, usize, f64)> = vec![
                // (op, messages, bytes moved in all)
                (OpSpec::Reduce { root, bytes: 8.0, comm: 0 }, p - 1, 8.0 * (p - 1) as f64),
                // Binomial gather/scatter: every non-root block crosses one edge per tree level it climbs.
                (OpSpec::Gather { root, bytes: 4.0, comm: 0 }, p - 1, f64::NAN),
                (OpSpec::Scatter { root, bytes: 4.0, comm: 0 }, p - 1, f64::NAN),
                (OpSpec::Gatherv { root, bytes: sizes.clone(), comm: 0 }, p - 1, total - sizes[root]),
                (OpSpec::Scatterv { root, bytes: sizes.clone(), comm: 0 }, p - 1, total - sizes[root]),
                (OpSpec::Allgather { bytes: 4.0, comm: 0 }, p * (p - 1), 4.0 * (p * (p - 1)) as f64),
                (OpSpec::Allgatherv { bytes: sizes.clone(), comm: 0 }, p * (p - 1), (p - 1) as f64 * total),
                (OpSpec::ReduceScatter { bytes: sizes.clone(), comm: 0 }, p * (p - 1), (p - 1) as f64 * total),
                (OpSpec::Scan { bytes: 8.0, comm: 0 }, f64::NAN as usize, f64::NAN),
            ];
            for (op, n, bytes) in cases {
                let t = uniform(p, op.clone());
                let (sent, got) = messages(&t, p);
                let pairs: Vec<(u32, u32)> = sent.iter().map(|&(s, d, _)| (s, d)).collect();
                assert_eq!(pairs, got, "{} on {p} ranks", op.name());
                if !matches!(op, OpSpec::Scan { .. }) {
                    assert_eq!(sent.len(), n, "{} on {p} ranks", op.name());
                }
                if bytes.is_finite() {
                    assert_eq!(sent.iter().map(|m| m.2 as f64).sum::<f64>(), bytes, "{} on {p} ranks", op.name());
                }
                if let OpSpec::Gather { .. } = op {
                    // The root ends up with p − 1 blocks.
                    let at_root: u64 = sent.iter().filter(|m| m.1 as usize == root).map(|m| m.2).sum();
                    assert_eq!(at_root, 4 * (p as u64 - 1), "gather on {p} ranks");
                }
                if let OpSpec::Scatter { .. } = op {
                    let from_root: u64 = sent.iter().filter(|m| m.0 as usize == root).map(|m| m.2).sum();
                    assert_eq!(from_root, 4 * (p as u64 - 1), "scatter on {p} ranks");
                }
            }
            // Scan: partners r XOR 2^k below p, both ways.
            let t = uniform(p, OpSpec::Scan { bytes: 8.0, comm: 0 });
            let expected: usize = (0..p).map(|r| (0..).map(|k| 1usize << k).take_while(|&m| m < p).filter(|&m| r ^ m < p).count()).sum();
            assert_eq!(messages(&t, p).0.len(), expected);
        }
    }

    #[test]
    fn alltoallv_sends_each_rank_its_own_sizes() {
        let p = 5;
        let ranks: Vec<Vec<OpSpec>> =
            (0..p).map(|r| vec![OpSpec::Alltoallv { bytes: (0..p).map(|d| (100 * r + d) as f64).collect(), comm: 0 }]).collect();
        let t = Trace::from_spec(TraceSpec { ranks, placement: None }).unwrap();
        let (sent, got) = messages(&t, p);
        assert_eq!(sent.len(), p * (p - 1));
        assert_eq!(sent.iter().map(|&(s, d, _)| (s, d)).collect::<Vec<_>>(), got);
        assert!(sent.iter().all(|&(s, d, b)| b == (100 * s + d) as u64));
        // Other v-collectives must agree across ranks.
        let ranks = vec![vec![OpSpec::Gatherv { root: 0, bytes: vec![1.0, 2.0], comm: 0 }], vec![OpSpec::Gatherv { root: 1, bytes: vec![1.0, 2.0], comm: 0 }]];
        let e = Trace::from_spec(TraceSpec { ranks, placement: None }).unwrap_err();
        assert!(e.reason.contains("rank 0's is"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "allgatherv", "bytes": [1, 2, 3]}], [{"op": "allgatherv", "bytes": [1, 2, 3]}]]}"#).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.contains("2 ranks")), ("ranks[0][0].bytes", true));
        let e = Trace::from_json(r#"{"ranks": [[{"op": "reduce", "root": 3, "bytes": 1}]]}"#).unwrap_err();
        assert_eq!(e.field, "ranks[0][0].root");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "scatterv", "root": 0, "bytes": [-1]}]]}"#).unwrap_err();
        assert_eq!(e.field, "ranks[0][0].bytes[0]");
    }

    #[test]
    fn sendrecv_posts_both_then_waits_both() {
        let t = Trace::from_json(
            r#"{"ranks": [[{"op": "sendrecv", "dst": 1, "bytes": 5, "src": 1, "tag": 3, "recvtag": 4}],
                          [{"op": "sendrecv", "dst": 0, "bytes": 6, "src": "any", "tag": 4, "recvtag": "any"}]]}"#,
        )
        .unwrap();
        let s0 = steps(&t, 0);
        assert_eq!(s0.len(), 3);
        assert!(matches!(s0[0], Step::Send { req: 0, dst: 1, tag: 3, ctx: CTX_USER, .. }));
        assert!(matches!(s0[1], Step::Recv { req: 1, src: Some(1), tag: Some(4), ctx: CTX_USER }));
        assert_eq!(s0[2], Step::Wait { reqs: [0, 1], n: 2 });
        assert!(matches!(steps(&t, 1)[1], Step::Recv { src: None, tag: None, .. }));
    }

    #[test]
    fn blocking_ops_post_then_wait_on_a_scratch_slot() {
        let t = Trace::from_json(
            r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 1}, {"op": "send", "dst": 1, "bytes": 2}, {"op": "wait", "req": 0}],
                          [{"op": "recv", "src": 0}, {"op": "irecv", "src": 0}, {"op": "waitall"}]]}"#,
        )
        .unwrap();
        assert_eq!(t.n_user_reqs, vec![1, 1]);
        let s0 = steps(&t, 0);
        assert!(matches!(s0[0], Step::Send { req: 0, bytes, .. } if bytes == 1.0));
        assert!(matches!(s0[1], Step::Send { req: 1, bytes, .. } if bytes == 2.0));
        assert_eq!(s0[2], Step::Wait { reqs: [1, 0], n: 1 });
        assert_eq!(s0[3], Step::Wait { reqs: [0, 0], n: 1 });
        let s1 = steps(&t, 1);
        assert!(matches!(s1[0], Step::Recv { req: 1, .. }));
        assert_eq!(s1[1], Step::Wait { reqs: [1, 0], n: 1 });
        assert!(matches!(s1[2], Step::Recv { req: 0, .. }));
        assert_eq!(s1[3], Step::WaitAll);
    }

    #[test]
    fn binomial_bcast_sends_largest_subtree_first() {
        let ranks = vec![vec![OpSpec::Bcast { root: 0, bytes: 8.0, comm: 0 }]; 8];
        let t = Trace::from_spec(TraceSpec { ranks, placement: None }).unwrap();
        assert_eq!(sends(&t, 0), vec![4, 2, 1]);
        assert_eq!(sends(&t, 4), vec![6, 5]);
        assert_eq!(sends(&t, 7), Vec::<u32>::new());
    }

    #[test]
    fn rejects_bad_ops() {
        let e = Trace::from_json(r#"{"ranks": [[{"op": "send", "dst": 5, "bytes": 1}]]}"#).unwrap_err();
        assert_eq!(e.field, "ranks[0][0].dst");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "frobnicate"}]]}"#).unwrap_err();
        assert!(e.reason.contains("unknown variant"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "send", "dst": 0, "bytes": -1}]]}"#).unwrap_err();
        assert!(e.reason.contains(">= 0"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "wait", "req": 0}]]}"#).unwrap_err();
        assert!(e.reason.contains("not posted"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "compute"}]]}"#).unwrap_err();
        assert!(e.reason.contains("exactly one"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "barrier"}], []]}"#).unwrap_err();
        assert!(e.reason.contains("collectives"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "recv", "src": 0, "bogus": 1}]]}"#).unwrap_err();
        assert!(e.reason.contains("unknown field"), "{e}");
    }

    fn trace(json: &str) -> Trace {
        Trace::from_json(json).unwrap()
    }

    #[test]
    fn comm_split_groups_by_color_and_orders_by_key() {
        // 6 ranks split by parity with key = -rank: the even group is (4, 2, 0), the odd
        // (5, 3, 1). A bcast from comm rank 0 then starts at world rank 4, resp. 5.
        let ranks: Vec<String> = (0..6)
            .map(|r| format!(r#"[{{"op": "comm_split", "color": {}, "key": {}}}, {{"op": "bcast", "root": 0, "bytes": 8, "comm": 1}}]"#, r % 2, -(r as i64)))
            .collect();
        let t = trace(&format!(r#"{{"ranks": [{}]}}"#, ranks.join(",")));
        assert_eq!(t.comms, vec![vec![0, 1, 2, 3, 4, 5], vec![4, 2, 0], vec![5, 3, 1]]);
        assert_eq!(sends(&t, 4), vec![0, 2]); // binomial: comm rank 0 → 2 (world 0), then → 1 (world 2)
        assert_eq!(sends(&t, 5), vec![1, 3]);
        assert_eq!(recvs(&t, 0), vec![4]);
        // Each communicator's collectives have their own context: 2g + 1.
        assert!(steps(&t, 4).iter().all(|s| !matches!(s, Step::Send { ctx, .. } if *ctx != 3)));
        assert!(steps(&t, 5).iter().all(|s| !matches!(s, Step::Send { ctx, .. } if *ctx != 5)));
    }

    #[test]
    fn the_same_communicator_may_have_different_ids_on_different_ranks() {
        // Split the world into A = {0, 1} and B = {2, 3}; A dups itself (ids 2 on 0 and 1);
        // then the whole world splits again into one group C: id 3 on ranks 0, 1 and id 2
        // on ranks 2, 3. An allreduce on C matches across those ids.
        let a = r#"{"op": "comm_split", "color": 0}, {"op": "comm_dup", "comm": 1}, {"op": "comm_split", "color": 7}, {"op": "allreduce", "bytes": 8, "comm": 3}"#;
        let b = r#"{"op": "comm_split", "color": 1}, {"op": "comm_split", "color": 7}, {"op": "allreduce", "bytes": 8, "comm": 2}"#;
        let t = trace(&format!(r#"{{"ranks": [[{a}], [{a}], [{b}], [{b}]]}}"#));
        assert_eq!(t.comms.len(), 5); // world, A, B, dup of A, C
        assert_eq!(t.comms[4], vec![0, 1, 2, 3]);
        assert_eq!(sends(&t, 0), vec![1, 2]); // recursive doubling over C
        // Point-to-point on a communicator: dst is a rank in it, its context 2g.
        let t = trace(
            r#"{"ranks": [[{"op": "comm_split", "color": 0, "key": 1}, {"op": "recv", "src": "any", "comm": 1}],
                          [{"op": "comm_split", "color": 0, "key": 0}, {"op": "send", "dst": 1, "bytes": 4, "comm": 1}]]}"#,
        );
        assert!(matches!(steps(&t, 1)[0], Step::Send { dst: 0, ctx: 2, .. }));
        assert!(matches!(steps(&t, 0)[0], Step::Recv { src: None, ctx: 2, .. }));
    }

    #[test]
    fn bad_communicators_are_errors() {
        // MPI_UNDEFINED gives no communicator: id 1 does not exist on rank 1.
        let e = Trace::from_json(
            r#"{"ranks": [[{"op": "comm_split", "color": 0}, {"op": "barrier", "comm": 1}],
                          [{"op": "comm_split", "color": -1}, {"op": "barrier", "comm": 1}]]}"#,
        )
        .unwrap_err();
        assert_eq!(e.field, "ranks[1][1].comm");
        assert!(e.reason.contains("does not exist"), "{e}");
        // Rank 0 creates twice on the world, rank 1 once.
        let e = Trace::from_json(
            r#"{"ranks": [[{"op": "comm_dup"}, {"op": "comm_dup"}], [{"op": "comm_dup"}]]}"#,
        )
        .unwrap_err();
        assert!(e.reason.contains("not matched") || e.reason.contains("collectives"), "{e}");
        // A peer outside the communicator.
        let e = Trace::from_json(
            r#"{"ranks": [[{"op": "comm_split", "color": 0}, {"op": "send", "dst": 1, "bytes": 1, "comm": 1}],
                          [{"op": "comm_split", "color": 1}]]}"#,
        )
        .unwrap_err();
        assert_eq!(e.field, "ranks[0][1].dst");
        assert!(e.reason.contains("communicator 1 has 1 ranks"), "{e}");
        // A split mixed with a dup on the same communicator.
        let e = Trace::from_json(r#"{"ranks": [[{"op": "comm_split", "color": 0}], [{"op": "comm_dup"}]]}"#).unwrap_err();
        assert!(e.reason.contains("comm_split"), "{e}");
        let e = Trace::from_json(r#"{"ranks": [[{"op": "comm_split", "color": -2}]]}"#).unwrap_err();
        assert_eq!(e.field, "ranks[0][0].color");
    }

    #[test]
    fn write_json_reads_back_as_the_same_trace() {
        let text = r#"{"ranks": [
            [{"op": "compute", "seconds": 0.5}, {"op": "irecv", "src": "any", "tag": "any"}, {"op": "irecv", "src": 1, "tag": 3},
             {"op": "send", "dst": 1, "bytes": 8, "tag": 2, "sync": true}, {"op": "waitall"}, {"op": "comm_split", "color": 0, "key": 1},
             {"op": "alltoallv", "bytes": [0, 4], "comm": 1}],
            [{"op": "send", "dst": 0, "bytes": 1e6, "tag": 5}, {"op": "send", "dst": 0, "bytes": 2, "tag": 3},
             {"op": "recv", "src": 0, "tag": 2}, {"op": "comm_split", "color": 0, "key": 0},
             {"op": "alltoallv", "bytes": [4, 0], "comm": 1}]],
            "placement": [1, "h0"]}"#;
        let trace = Trace::from_json(text).unwrap();
        let mut out = Vec::new();
        trace.write_json(&mut out).unwrap();
        let again = Trace::from_json(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(again.spec.ranks, trace.spec.ranks);
        assert_eq!(again.spec.placement, trace.spec.placement);
        assert!(std::str::from_utf8(&out).unwrap().contains(r#""src":"any""#));
    }
}
