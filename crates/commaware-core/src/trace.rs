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

/// A lowered operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Compute `flops`, or `seconds` at full speed.
    Compute { flops: f64, seconds: bool },
    Sleep { seconds: f64 },
    /// Post a send into request slot `req`.
    Send { req: u32, dst: u32, bytes: f64, tag: i64, ctx: u8, sync: bool },
    /// Post a receive into request slot `req`; `None` means any.
    Recv { req: u32, src: Option<u32>, tag: Option<i64>, ctx: u8 },
    /// Block until all these request slots completed.
    Wait { reqs: Vec<u32> },
}

/// One rank's lowered program.
#[derive(Debug, Clone)]
pub struct RankProgram {
    pub ops: Vec<Op>,
    /// Index of the trace op each lowered op comes from.
    pub origin: Vec<u32>,
    /// Number of request slots used.
    pub n_reqs: u32,
}

/// A validated, lowered trace.
#[derive(Debug, Clone)]
pub struct Trace {
    pub spec: TraceSpec,
    pub programs: Vec<RankProgram>,
}

struct Lowering {
    ops: Vec<Op>,
    origin: Vec<u32>,
    n_reqs: u32,
    current: u32,
}

impl Lowering {
    fn push(&mut self, op: Op) {
        self.ops.push(op);
        self.origin.push(self.current);
    }
    fn slot(&mut self) -> u32 {
        self.n_reqs += 1;
        self.n_reqs - 1
    }
    fn post_send(&mut self, dst: usize, bytes: f64, tag: i64, ctx: u8, sync: bool) -> u32 {
        let req = self.slot();
        self.push(Op::Send { req, dst: dst as u32, bytes, tag, ctx, sync });
        req
    }
    fn post_recv(&mut self, src: Option<usize>, tag: Option<i64>, ctx: u8) -> u32 {
        let req = self.slot();
        self.push(Op::Recv { req, src: src.map(|s| s as u32), tag, ctx });
        req
    }
    fn send(&mut self, dst: usize, bytes: f64, tag: i64) {
        let r = self.post_send(dst, bytes, tag, CTX_COLLECTIVE, false);
        self.push(Op::Wait { reqs: vec![r] });
    }
    fn recv(&mut self, src: usize, tag: i64) {
        let r = self.post_recv(Some(src), Some(tag), CTX_COLLECTIVE);
        self.push(Op::Wait { reqs: vec![r] });
    }
    /// MPI_Sendrecv: both posted, then both waited.
    fn sendrecv(&mut self, dst: usize, src: usize, bytes: f64, tag: i64) {
        let a = self.post_send(dst, bytes, tag, CTX_COLLECTIVE, false);
        let b = self.post_recv(Some(src), Some(tag), CTX_COLLECTIVE);
        self.push(Op::Wait { reqs: vec![a, b] });
    }

    fn barrier(&mut self, r: usize, p: usize, tag: i64) {
        let mut k = 1;
        while k < p {
            self.sendrecv((r + k) % p, (r + p - k) % p, 0.0, tag);
            k *= 2;
        }
    }

    fn bcast(&mut self, r: usize, p: usize, root: usize, bytes: f64, tag: i64) {
        let rel = (r + p - root) % p;
        let mut mask = 1;
        while mask < p {
            if rel & mask != 0 {
                self.recv((rel - mask + root) % p, tag);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if rel + mask < p {
                self.send((rel + mask + root) % p, bytes, tag);
            }
            mask >>= 1;
        }
    }

    fn allreduce(&mut self, r: usize, p: usize, bytes: f64, tag: i64) {
        let pof2 = if p == 0 { 0 } else { 1usize << (usize::BITS - 1 - p.leading_zeros()) };
        let rem = p - pof2;
        // Fold the first 2*rem ranks pairwise so a power of two remains.
        let newrank: Option<usize> = if r < 2 * rem {
            if r % 2 == 0 {
                self.send(r + 1, bytes, tag);
                None
            } else {
                self.recv(r - 1, tag);
                Some(r / 2)
            }
        } else {
            Some(r - rem)
        };
        if let Some(nr) = newrank {
            let mut mask = 1;
            while mask < pof2 {
                let nd = nr ^ mask;
                let dst = if nd < rem { nd * 2 + 1 } else { nd + rem };
                self.sendrecv(dst, dst, bytes, tag);
                mask <<= 1;
            }
        }
        if r < 2 * rem {
            if r % 2 == 1 {
                self.send(r - 1, bytes, tag);
            } else {
                self.recv(r + 1, tag);
            }
        }
    }

    fn alltoall(&mut self, r: usize, p: usize, bytes: f64, tag: i64) {
        let pow2 = p.is_power_of_two();
        for i in 1..p {
            let (dst, src) = if pow2 { (r ^ i, r ^ i) } else { ((r + i) % p, (r + p - i) % p) };
            self.sendrecv(dst, src, bytes, tag);
        }
    }
}

fn collectives(ops: &[OpSpec]) -> Vec<(usize, &OpSpec)> {
    ops.iter().enumerate().filter(|(_, o)| o.is_collective()).collect()
}

impl Trace {
    pub fn from_json(text: &str) -> Result<Trace> {
        let spec: TraceSpec = parse_json(ErrorKind::Trace, text)?;
        Trace::from_spec(spec)
    }

    pub fn n_ranks(&self) -> usize {
        self.programs.len()
    }

    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(TraceSpec)).expect("schema serialises")
    }

    pub fn from_spec(spec: TraceSpec) -> Result<Trace> {
        let p = spec.ranks.len();
        if p == 0 {
            return Err(Error::trace("ranks", "the trace has no ranks"));
        }
        if let Some(pl) = &spec.placement {
            if pl.len() != p {
                return Err(Error::trace("placement", format!("lists {} hosts for {p} ranks", pl.len())));
            }
        }
        let reference = collectives(&spec.ranks[0]);
        let mut programs = Vec::with_capacity(p);
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
            programs.push(lower_rank(r, p, ops)?);
        }
        Ok(Trace { spec, programs })
    }
}

fn lower_rank(r: usize, p: usize, ops: &[OpSpec]) -> Result<RankProgram> {
    let mut lw = Lowering { ops: Vec::with_capacity(ops.len()), origin: Vec::with_capacity(ops.len()), n_reqs: 0, current: 0 };
    // User requests in posting order -> slot, and whether already waited for.
    let mut user_reqs: Vec<(u32, bool)> = Vec::new();
    let mut n_collectives: i64 = 0;
    for (i, op) in ops.iter().enumerate() {
        lw.current = i as u32;
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
                return Err(Error::trace(field(name), format!("{v} is too large (at most 2^53)")));
            }
            Ok(())
        };
        match op {
            OpSpec::Compute { flops, seconds } => match (flops, seconds) {
                (Some(f), None) => {
                    size_ok("flops", *f)?;
                    lw.push(Op::Compute { flops: *f, seconds: false });
                }
                (None, Some(s)) => {
                    size_ok("seconds", *s)?;
                    lw.push(Op::Compute { flops: *s, seconds: true });
                }
                _ => {
                    return Err(Error::trace(
                        format!("ranks[{r}][{i}]"),
                        "compute needs exactly one of `flops` or `seconds`",
                    ))
                }
            },
            OpSpec::Sleep { seconds } => {
                size_ok("seconds", *seconds)?;
                lw.push(Op::Sleep { seconds: *seconds });
            }
            OpSpec::Send { dst, bytes, tag, sync } | OpSpec::Isend { dst, bytes, tag, sync } => {
                rank_ok("dst", *dst)?;
                size_ok("bytes", *bytes)?;
                if *tag < 0 {
                    return Err(Error::trace(field("tag"), "must be >= 0"));
                }
                let req = lw.post_send(*dst, *bytes, *tag, CTX_USER, *sync);
                if matches!(op, OpSpec::Send { .. }) {
                    lw.push(Op::Wait { reqs: vec![req] });
                } else {
                    user_reqs.push((req, false));
                }
            }
            OpSpec::Recv { src, tag } | OpSpec::Irecv { src, tag } => {
                let src = match src {
                    Peer::Rank(s) => {
                        rank_ok("src", *s)?;
                        Some(*s)
                    }
                    Peer::Any => None,
                };
                let tag = match tag {
                    TagSpec::Value(v) => Some(*v),
                    TagSpec::Any => None,
                };
                let req = lw.post_recv(src, tag, CTX_USER);
                if matches!(op, OpSpec::Recv { .. }) {
                    lw.push(Op::Wait { reqs: vec![req] });
                } else {
                    user_reqs.push((req, false));
                }
            }
            OpSpec::Wait { req } => {
                let Some(entry) = user_reqs.get_mut(*req) else {
                    return Err(Error::trace(
                        field("req"),
                        format!("request {req} is not posted yet (this rank has posted {} so far)", user_reqs.len()),
                    ));
                };
                if entry.1 {
                    return Err(Error::trace(field("req"), format!("request {req} was already waited for")));
                }
                entry.1 = true;
                lw.push(Op::Wait { reqs: vec![entry.0] });
            }
            OpSpec::Waitall => {
                let reqs: Vec<u32> = user_reqs.iter_mut().filter(|e| !e.1).map(|e| {
                    e.1 = true;
                    e.0
                }).collect();
                lw.push(Op::Wait { reqs });
            }
            OpSpec::Barrier => lw.barrier(r, p, n_collectives),
            OpSpec::Bcast { root, bytes } => {
                rank_ok("root", *root)?;
                size_ok("bytes", *bytes)?;
                lw.bcast(r, p, *root, *bytes, n_collectives);
            }
            OpSpec::Allreduce { bytes } => {
                size_ok("bytes", *bytes)?;
                lw.allreduce(r, p, *bytes, n_collectives);
            }
            OpSpec::Alltoall { bytes } => {
                size_ok("bytes", *bytes)?;
                lw.alltoall(r, p, *bytes, n_collectives);
            }
        }
        if op.is_collective() {
            n_collectives += 1;
        }
    }
    Ok(RankProgram { ops: lw.ops, origin: lw.origin, n_reqs: lw.n_reqs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sends(t: &Trace, r: usize) -> Vec<u32> {
        t.programs[r].ops.iter().filter_map(|o| if let Op::Send { dst, .. } = o { Some(*dst) } else { None }).collect()
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
