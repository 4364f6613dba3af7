//! Traces: one list of MPI-style operations per rank (paper 004 §VI-A), parsed,
//! validated and lowered into a few primitive operations. Collectives expand into
//! point-to-point algorithms as MPICH does them:
//! * barrier: dissemination, zero-byte messages, round k exchanges with rank ± 2^k;
//! * bcast: binomial tree, the child with the largest subtree first, blocking sends;
//! * allreduce: recursive doubling, with the usual fix-up for a non-power-of-two count;
//! * alltoall: pairwise exchange, one partner per round (`bytes` is the block per peer).

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::error::{check_amount, parse_json, Error, ErrorKind, Result};
use crate::platform::MAX_EXACT;

/// A peer rank, or any source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Peer {
    Rank(usize),
    Any,
}

/// A message tag, or any tag (receives only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TagSpec {
    Value(i64),
    Any,
}

impl Default for TagSpec {
    fn default() -> Self {
        TagSpec::Value(0)
    }
}

fn int_or_any<'de, D: Deserializer<'de>>(d: D, what: &'static str) -> std::result::Result<Option<i64>, D::Error> {
    struct V(&'static str);
    impl<'de> Visitor<'de> for V {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a non-negative integer {} or \"any\"", self.0)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
            i64::try_from(v).map(Some).map_err(|_| E::custom(format!("{} {v} is too large", self.0)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
            if v < 0 {
                Err(E::custom(format!("{} must be >= 0, got {v}", self.0)))
            } else {
                Ok(Some(v))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
            if v == "any" {
                Ok(None)
            } else {
                Err(E::custom(format!("expected a {} or \"any\", got \"{v}\"", self.0)))
            }
        }
    }
    d.deserialize_any(V(what))
}

impl<'de> Deserialize<'de> for Peer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match int_or_any(d, "rank")? {
            Some(v) => Peer::Rank(v as usize),
            None => Peer::Any,
        })
    }
}

impl<'de> Deserialize<'de> for TagSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match int_or_any(d, "tag")? {
            Some(v) => TagSpec::Value(v),
            None => TagSpec::Any,
        })
    }
}

impl JsonSchema for Peer {
    fn schema_name() -> String {
        "RankOrAny".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({"oneOf": [{"type": "integer", "minimum": 0}, {"const": "any"}]})).unwrap()
    }
}

impl JsonSchema for TagSpec {
    fn schema_name() -> String {
        "TagOrAny".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({"oneOf": [{"type": "integer", "minimum": 0}, {"const": "any"}]})).unwrap()
    }
}

fn zero_tag() -> i64 {
    0
}

/// One operation of a rank, as written in a trace file. Sizes are in bytes, times in s.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum OpSpec {
    /// Compute `flops` floating-point operations, or for `seconds` at the host's full
    /// speed (slowed by interference, unlike `sleep`). Exactly one of the two.
    Compute { flops: Option<f64>, seconds: Option<f64> },
    /// Blocking send; `sync` forces the rendezvous protocol (MPI_Ssend).
    Send { dst: usize, bytes: f64, #[serde(default = "zero_tag")] tag: i64, #[serde(default)] sync: bool },
    /// Non-blocking send; creates the rank's next request.
    Isend { dst: usize, bytes: f64, #[serde(default = "zero_tag")] tag: i64, #[serde(default)] sync: bool },
    /// Blocking receive from a rank or `"any"`.
    Recv { src: Peer, #[serde(default)] tag: TagSpec },
    /// Non-blocking receive; creates the rank's next request.
    Irecv { src: Peer, #[serde(default)] tag: TagSpec },
    /// Wait for request `req` (requests are numbered per rank in posting order).
    Wait { req: usize },
    /// Wait for every request of the rank not waited for yet.
    Waitall,
    Barrier,
    /// Broadcast of a `bytes` buffer from `root`.
    Bcast { root: usize, bytes: f64 },
    /// All-reduce of a `bytes` buffer.
    Allreduce { bytes: f64 },
    /// All-to-all; `bytes` is the block sent to each destination.
    Alltoall { bytes: f64 },
    /// Idle for `seconds` (not slowed by anything).
    Sleep { seconds: f64 },
}

impl OpSpec {
    /// Index of the op's name in [`OP_NAMES`].
    pub fn code(&self) -> u8 {
        OP_NAMES.iter().position(|n| *n == self.name()).expect("every op is named") as u8
    }

    pub fn name(&self) -> &'static str {
        match self {
            OpSpec::Compute { .. } => "compute",
            OpSpec::Send { .. } => "send",
            OpSpec::Isend { .. } => "isend",
            OpSpec::Recv { .. } => "recv",
            OpSpec::Irecv { .. } => "irecv",
            OpSpec::Wait { .. } => "wait",
            OpSpec::Waitall => "waitall",
            OpSpec::Barrier => "barrier",
            OpSpec::Bcast { .. } => "bcast",
            OpSpec::Allreduce { .. } => "allreduce",
            OpSpec::Alltoall { .. } => "alltoall",
            OpSpec::Sleep { .. } => "sleep",
        }
    }

    /// Short human description, e.g. `recv(src=1, tag=0)`.
    pub fn describe(&self) -> String {
        let peer = |p: &Peer| match p {
            Peer::Rank(r) => r.to_string(),
            Peer::Any => "any".into(),
        };
        let tag = |t: &TagSpec| match t {
            TagSpec::Value(v) => v.to_string(),
            TagSpec::Any => "any".into(),
        };
        match self {
            OpSpec::Compute { flops: Some(f), .. } => format!("compute(flops={f})"),
            OpSpec::Compute { seconds, .. } => format!("compute(seconds={})", seconds.unwrap_or(0.0)),
            OpSpec::Send { dst, bytes, tag, .. } | OpSpec::Isend { dst, bytes, tag, .. } => {
                format!("{}(dst={dst}, bytes={bytes}, tag={tag})", self.name())
            }
            OpSpec::Recv { src, tag: t } | OpSpec::Irecv { src, tag: t } => {
                format!("{}(src={}, tag={})", self.name(), peer(src), tag(t))
            }
            OpSpec::Wait { req } => format!("wait(req={req})"),
            OpSpec::Bcast { root, bytes } => format!("bcast(root={root}, bytes={bytes})"),
            OpSpec::Allreduce { bytes } | OpSpec::Alltoall { bytes } => format!("{}(bytes={bytes})", self.name()),
            OpSpec::Sleep { seconds } => format!("sleep(seconds={seconds})"),
            OpSpec::Waitall | OpSpec::Barrier => self.name().to_string(),
        }
    }

    fn is_collective(&self) -> bool {
        matches!(self, OpSpec::Barrier | OpSpec::Bcast { .. } | OpSpec::Allreduce { .. } | OpSpec::Alltoall { .. })
    }
}

/// A host given by name or by index, for explicit placements.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
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

/// Communication context: user messages never match collective ones (MPI keeps a
/// separate context per communicator for collectives).
pub const CTX_USER: u8 = 0;
pub const CTX_COLLECTIVE: u8 = 1;

/// Names of the trace operations, indexed by [`OpSpec::code`] (compact message records).
pub const OP_NAMES: [&str; 12] =
    ["compute", "send", "isend", "recv", "irecv", "wait", "waitall", "barrier", "bcast", "allreduce", "alltoall", "sleep"];

/// Largest number of ranks a trace may have (each rank costs some state in the replay).
pub const MAX_RANKS: usize = 1 << 22;

/// One primitive step of a rank, produced on demand by [`Trace::step`]. Request slots are
/// per rank: user requests (`isend`/`irecv`) take slots `0..n_user_reqs` in posting order;
/// blocking point-to-point ops and collective rounds use the two scratch slots after them,
/// which are free again once the step's `Wait` completed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Compute `amount` flops, or `amount` seconds at full speed when `seconds`.
    Compute { amount: f64, seconds: bool },
    Sleep { seconds: f64 },
    /// Post a send into request slot `req`.
    Send { req: u32, dst: u32, bytes: f64, tag: i64, ctx: u8, sync: bool },
    /// Post a receive into request slot `req`; `None` means any.
    Recv { req: u32, src: Option<u32>, tag: Option<i64>, ctx: u8 },
    /// Block until these request slots (the first `n` of `reqs`) completed.
    Wait { reqs: [u32; 2], n: u8 },
    /// Block until every user request posted and not waited for yet completed.
    WaitAll,
}

/// Where a rank is in its program: the trace op, the round within a collective and the
/// step within the round. Lowering is lazy: a 4,096-rank alltoall never exists as
/// 4,095 × 3 steps per rank, only as this cursor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Index of the trace op (its position in the rank's list).
    pub op: u32,
    round: u32,
    micro: u8,
    /// Collectives completed so far (the collective's tag).
    collectives: u32,
    /// User requests posted so far (the next user request's slot).
    pub user_posted: u32,
}

/// One round of a collective, or the single round of a point-to-point op.
#[derive(Debug, Clone, Copy)]
enum Round {
    Send(usize),
    Recv(usize),
    SendRecv { dst: usize, src: usize },
    /// A round this rank sits out (its algorithm has nothing for it here).
    Skip,
}

impl Round {
    fn len(self) -> u8 {
        match self {
            Round::Send(_) | Round::Recv(_) => 2,
            Round::SendRecv { .. } => 3,
            Round::Skip => 0,
        }
    }
}

/// Highest power of two not above `p` (p ≥ 1).
fn floor_pow2(p: usize) -> usize {
    1usize << (usize::BITS - 1 - p.leading_zeros())
}

/// Round `k` of rank `r`'s part in a collective over `p` ranks (MPICH's algorithms, see
/// the module doc), or `None` once the rank's part is over.
fn collective_round(op: &OpSpec, r: usize, p: usize, k: u32) -> Option<Round> {
    let k = k as usize;
    match *op {
        // Dissemination: round k exchanges with rank ± 2^k.
        OpSpec::Barrier => {
            let mask = 1usize.checked_shl(k as u32).filter(|&m| m < p)?;
            Some(Round::SendRecv { dst: (r + mask) % p, src: (r + p - mask) % p })
        }
        // Binomial tree rooted at `root`: receive from the parent (if not the root), then
        // send to the children, the one with the largest subtree first.
        OpSpec::Bcast { root, .. } => {
            let rel = (r + p - root) % p;
            let has_parent = rel != 0;
            if has_parent && k == 0 {
                let mask = rel & rel.wrapping_neg();
                return Some(Round::Recv((rel - mask + root) % p));
            }
            let first = if has_parent { (rel & rel.wrapping_neg()) >> 1 } else { p.next_power_of_two() >> 1 };
            let mask = first.checked_shr((k - has_parent as usize) as u32).unwrap_or(0);
            if mask == 0 {
                return None;
            }
            Some(if rel + mask < p { Round::Send((rel + mask + root) % p) } else { Round::Skip })
        }
        // Recursive doubling; the first 2·rem ranks fold pairwise before and unfold after.
        OpSpec::Allreduce { .. } => {
            let pof2 = floor_pow2(p);
            let rem = p - pof2;
            let rounds = pof2.trailing_zeros() as usize;
            let folded = r < 2 * rem;
            if k == 0 {
                return Some(match (folded, r % 2) {
                    (false, _) => Round::Skip,
                    (true, 0) => Round::Send(r + 1),
                    (true, _) => Round::Recv(r - 1),
                });
            }
            if k <= rounds {
                let newrank = if folded { (r % 2 == 1).then_some(r / 2) } else { Some(r - rem) };
                let Some(nr) = newrank else { return Some(Round::Skip) };
                let nd = nr ^ (1 << (k - 1));
                let dst = if nd < rem { nd * 2 + 1 } else { nd + rem };
                return Some(Round::SendRecv { dst, src: dst });
            }
            if k == rounds + 1 {
                return Some(match (folded, r % 2) {
                    (false, _) => Round::Skip,
                    (true, 1) => Round::Send(r - 1),
                    (true, _) => Round::Recv(r + 1),
                });
            }
            None
        }
        // Pairwise exchange: XOR partner for a power-of-two count, rank ± i otherwise.
        OpSpec::Alltoall { .. } => {
            let i = k + 1;
            if i >= p {
                return None;
            }
            Some(if p.is_power_of_two() {
                Round::SendRecv { dst: r ^ i, src: r ^ i }
            } else {
                Round::SendRecv { dst: (r + i) % p, src: (r + p - i) % p }
            })
        }
        _ => None,
    }
}

/// A validated trace. Ranks' programs are not expanded: [`Trace::step`] gives each
/// rank's next primitive step from its [`Cursor`].
#[derive(Debug, Clone)]
pub struct Trace {
    pub spec: TraceSpec,
    /// User requests (`isend`/`irecv`) of each rank.
    pub n_user_reqs: Vec<u32>,
}

impl Trace {
    pub fn from_json(text: &str) -> Result<Trace> {
        let spec: TraceSpec = parse_json(ErrorKind::Trace, text)?;
        Trace::from_spec(spec)
    }

    pub fn n_ranks(&self) -> usize {
        self.spec.ranks.len()
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
        let reference = collectives(&spec.ranks[0]);
        let mut n_user_reqs = Vec::with_capacity(p);
        for (r, ops) in spec.ranks.iter().enumerate() {
            // All ranks must call the same collectives in the same order.
            let mine = collectives(ops);
            for (k, (i, op)) in mine.iter().enumerate() {
                match reference.get(k) {
                    Some((_, want)) if want.describe() == op.describe() => {}
                    Some((_, want)) => {
                        return Err(Error::trace(
                            format!("ranks[{r}][{i}]"),
                            format!("collective #{k} is `{}` but rank 0's is `{}`", op.describe(), want.describe()),
                        ))
                    }
                    None => {
                        return Err(Error::trace(
                            format!("ranks[{r}][{i}]"),
                            format!("collective #{k} `{}` has no counterpart on rank 0", op.describe()),
                        ))
                    }
                }
            }
            if mine.len() < reference.len() {
                return Err(Error::trace(
                    format!("ranks[{r}]"),
                    format!("calls {} collectives but rank 0 calls {}", mine.len(), reference.len()),
                ));
            }
            n_user_reqs.push(validate_rank(r, p, ops)?);
        }
        Ok(Trace { spec, n_user_reqs })
    }

    /// First scratch request slot of rank `r` (after its user requests).
    pub fn scratch_slot(&self, r: usize) -> u32 {
        self.n_user_reqs[r]
    }

    /// A cursor at the start of rank `r`'s program.
    pub fn start(&self, r: usize) -> Cursor {
        let mut c = Cursor::default();
        self.settle(r, &mut c);
        c
    }

    /// Move `c` past its current step.
    pub fn advance(&self, r: usize, c: &mut Cursor) {
        let op = &self.spec.ranks[r][c.op as usize];
        match op {
            OpSpec::Isend { .. } | OpSpec::Irecv { .. } => {
                c.user_posted += 1;
                c.op += 1;
            }
            _ if op.is_collective() || matches!(op, OpSpec::Send { .. } | OpSpec::Recv { .. }) => c.micro += 1,
            _ => c.op += 1,
        }
        self.settle(r, c);
    }

    /// Make `c` point at a real step (skipping empty rounds and finished collectives) or
    /// past the end of the program.
    fn settle(&self, r: usize, c: &mut Cursor) {
        let ops = &self.spec.ranks[r];
        let n = self.n_ranks();
        while (c.op as usize) < ops.len() {
            let op = &ops[c.op as usize];
            if op.is_collective() {
                match collective_round(op, r, n, c.round) {
                    Some(round) if c.micro < round.len() => return,
                    Some(_) => {
                        c.round += 1;
                        c.micro = 0;
                        continue;
                    }
                    None => c.collectives += 1,
                }
            } else if matches!(op, OpSpec::Send { .. } | OpSpec::Recv { .. }) {
                // Post, then wait.
                if c.micro < 2 {
                    return;
                }
            } else {
                return;
            }
            c.op += 1;
            c.round = 0;
            c.micro = 0;
        }
    }

    /// Whether rank `r`'s program is over at `c`.
    pub fn finished(&self, r: usize, c: &Cursor) -> bool {
        c.op as usize >= self.spec.ranks[r].len()
    }

    /// The step of rank `r` at `c` (which must not be finished).
    pub fn step(&self, r: usize, c: &Cursor) -> Step {
        let op = &self.spec.ranks[r][c.op as usize];
        let (a, b) = (self.scratch_slot(r), self.scratch_slot(r) + 1);
        let tag = c.collectives as i64;
        let round = match *op {
            OpSpec::Compute { flops: Some(f), .. } => return Step::Compute { amount: f, seconds: false },
            OpSpec::Compute { seconds, .. } => return Step::Compute { amount: seconds.unwrap_or(0.0), seconds: true },
            OpSpec::Sleep { seconds } => return Step::Sleep { seconds },
            OpSpec::Isend { dst, bytes, tag, sync } => {
                return Step::Send { req: c.user_posted, dst: dst as u32, bytes, tag, ctx: CTX_USER, sync }
            }
            OpSpec::Irecv { src, tag } => return Step::Recv { req: c.user_posted, src: peer(src), tag: tag_of(tag), ctx: CTX_USER },
            OpSpec::Wait { req } => return Step::Wait { reqs: [req as u32, 0], n: 1 },
            OpSpec::Waitall => return Step::WaitAll,
            OpSpec::Send { dst, bytes, tag, sync } => {
                return match c.micro {
                    0 => Step::Send { req: a, dst: dst as u32, bytes, tag, ctx: CTX_USER, sync },
                    _ => Step::Wait { reqs: [a, 0], n: 1 },
                }
            }
            OpSpec::Recv { src, tag } => {
                return match c.micro {
                    0 => Step::Recv { req: a, src: peer(src), tag: tag_of(tag), ctx: CTX_USER },
                    _ => Step::Wait { reqs: [a, 0], n: 1 },
                }
            }
            _ => collective_round(op, r, self.n_ranks(), c.round).expect("settled cursor is on a round"),
        };
        let bytes = match *op {
            OpSpec::Bcast { bytes, .. } | OpSpec::Allreduce { bytes } | OpSpec::Alltoall { bytes } => bytes,
            _ => 0.0,
        };
        let send = |req, dst: usize| Step::Send { req, dst: dst as u32, bytes, tag, ctx: CTX_COLLECTIVE, sync: false };
        let recv = |req, src: usize| Step::Recv { req, src: Some(src as u32), tag: Some(tag), ctx: CTX_COLLECTIVE };
        match (round, c.micro) {
            (Round::Send(d), 0) => send(a, d),
            (Round::Recv(s), 0) => recv(a, s),
            (Round::Send(_) | Round::Recv(_), _) => Step::Wait { reqs: [a, 0], n: 1 },
            // MPI_Sendrecv: both posted, then both waited.
            (Round::SendRecv { dst, .. }, 0) => send(a, dst),
            (Round::SendRecv { src, .. }, 1) => recv(b, src),
            (Round::SendRecv { .. }, _) => Step::Wait { reqs: [a, b], n: 2 },
            (Round::Skip, _) => unreachable!("settled cursor skips empty rounds"),
        }
    }
}

fn peer(p: Peer) -> Option<u32> {
    match p {
        Peer::Rank(s) => Some(s as u32),
        Peer::Any => None,
    }
}

fn tag_of(t: TagSpec) -> Option<i64> {
    match t {
        TagSpec::Value(v) => Some(v),
        TagSpec::Any => None,
    }
}

fn collectives(ops: &[OpSpec]) -> Vec<(usize, &OpSpec)> {
    ops.iter().enumerate().filter(|(_, o)| o.is_collective()).collect()
}

/// Check rank `r`'s ops (ranks, sizes, tags, requests); returns its user request count.
fn validate_rank(r: usize, p: usize, ops: &[OpSpec]) -> Result<u32> {
    // Per user request (posting order): already waited for?
    let mut waited: Vec<bool> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let field = |name: &str| format!("ranks[{r}][{i}].{name}");
        let rank_ok = |name: &str, v: usize| -> Result<()> {
            if v >= p {
                Err(Error::trace(field(name), format!("rank {v} out of range (the trace has {p} ranks)")))
            } else {
                Ok(())
            }
        };
        let size_ok = |name: &str, v: f64| -> Result<()> {
            check_amount(ErrorKind::Trace, &field(name), v, false)?;
            if v > MAX_EXACT {
                return Err(Error::trace(field(name), format!("{v:e} is too large (at most 2^53)")));
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
            OpSpec::Barrier => {}
            OpSpec::Bcast { root, bytes } => {
                rank_ok("root", *root)?;
                size_ok("bytes", *bytes)?;
            }
            OpSpec::Allreduce { bytes } | OpSpec::Alltoall { bytes } => size_ok("bytes", *bytes)?,
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
        let mut c = t.start(r);
        let mut out = Vec::new();
        while !t.finished(r, &c) {
            out.push(t.step(r, &c));
            t.advance(r, &mut c);
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
        let ops = [OpSpec::Barrier, OpSpec::Bcast { root: 2, bytes: 8.0 }, OpSpec::Allreduce { bytes: 8.0 }, OpSpec::Alltoall { bytes: 8.0 }];
        for op in ops {
            for p in [3usize, 4, 5, 6, 7, 8, 13] {
                let t = uniform(p, op.clone());
                let mut sent: Vec<(u32, u32)> = (0..p).flat_map(|r| sends(&t, r).into_iter().map(move |d| (r as u32, d))).collect();
                let mut got: Vec<(u32, u32)> = (0..p).flat_map(|r| recvs(&t, r).into_iter().map(move |s| (s, r as u32))).collect();
                sent.sort_unstable();
                got.sort_unstable();
                assert_eq!(sent, got, "{} on {p} ranks", op.name());
                let expected = match op {
                    OpSpec::Barrier => p * (usize::BITS - (p - 1).leading_zeros()) as usize,
                    OpSpec::Bcast { .. } => p - 1,
                    OpSpec::Allreduce { .. } => {
                        let pof2 = floor_pow2(p);
                        pof2 * pof2.trailing_zeros() as usize + 2 * (p - pof2)
                    }
                    _ => p * (p - 1),
                };
                assert_eq!(sent.len(), expected, "{} on {p} ranks", op.name());
            }
        }
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
        let ranks = vec![vec![OpSpec::Bcast { root: 0, bytes: 8.0 }]; 8];
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
}
