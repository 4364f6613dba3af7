//! Penalty models of interconnect bandwidth sharing (paper 004 §IV–V, and SimGrid's IB model).
//!
//! A *scheme* is a set of concurrent communications, each an arc from a source node to a
//! destination node (parallel arcs count, as RRN/RRP placements create them). A model gives
//! each communication a *penalty* p ≥ 1: it takes p times as long as it would alone
//! (paper 004 §IV-B, P_i = T_i / T_ref). The formulas read only the arcs around a
//! communication, through [`Adjacency`], so that the static scheme analysis (`commaware
//! penalties`) and the engine's dynamic model ([`super::penalized`]) share one implementation.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{check_amount, parse_input, Error, ErrorKind, Format, Result};
use crate::util::cancel;

use super::myrinet::{self, MyrinetOptions};

/// Conflict classes of a communication (paper 004 §IV-A), as bits.
pub const OUTGOING: u8 = 1;
pub const INCOMING: u8 = 2;
pub const IN_OUT: u8 = 4;
/// The classes with their names, in reporting order.
pub const CLASS_NAMES: [(u8, &str); 3] = [(OUTGOING, "outgoing"), (INCOMING, "incoming"), (IN_OUT, "in-out")];

/// The names of a class set, in reporting order.
pub fn class_names(bits: u8) -> impl Iterator<Item = &'static str> {
    CLASS_NAMES.iter().filter(move |(b, _)| bits & b != 0).map(|(_, n)| *n)
}

/// The arcs around a node, as the formulas need them. Communications and nodes are
/// numbered by the implementor.
pub trait Adjacency {
    /// Communications leaving `node` (its sending side).
    fn outgoing(&self, node: u32) -> &[u32];
    /// Communications entering `node` (its receiving side).
    fn incoming(&self, node: u32) -> &[u32];
    /// Source and destination of communication `c`.
    fn ends(&self, c: u32) -> (u32, u32);
}

/// Conflict classes of communication `c` (§IV-A): outgoing when its source sends others,
/// incoming when its destination receives others, in-out when its source also receives
/// or its destination also sends. A communication can be in several.
pub fn conflict_classes<A: Adjacency>(a: &A, c: u32) -> u8 {
    let (s, d) = a.ends(c);
    let mut bits = 0;
    if a.outgoing(s).len() > 1 {
        bits |= OUTGOING;
    }
    if a.incoming(d).len() > 1 {
        bits |= INCOMING;
    }
    if !a.incoming(s).is_empty() || !a.outgoing(d).is_empty() {
        bits |= IN_OUT;
    }
    bits
}

/// Parameters of the Gigabit Ethernet penalty model (§V-A), also used, fitted to other
/// measurements, for InfiniBand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GigeParams {
    pub beta: f64,
    pub gamma_o: f64,
    pub gamma_i: f64,
}

/// §V-A: β = 0.75 from the star rows of Fig. 2, γ_o = 0.115 and γ_i = 0.036 from Fig. 4.
pub const GIGE_DEFAULTS: GigeParams = GigeParams { beta: 0.75, gamma_o: 0.115, gamma_i: 0.036 };

/// InfiniBand (InfiniHost III, Fig. 2 third column): β by least squares on the star rows
/// P_2 = 1.725 and P_3 = 2.61 (β = Σk·P_k / Σk² = 11.28/13); the text determines no γ
/// (the γ terms vanish on stars), so both are 0. Residuals: docs/sharing.md.
pub const INFINIBAND_DEFAULTS: GigeParams = GigeParams { beta: 11.28 / 13.0, gamma_o: 0.0, gamma_i: 0.0 };

/// Parameters of SimGrid's IB model (`smpi/IB-penalty-factors`: βe;βs;γs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IbParams {
    pub beta_e: f64,
    pub beta_s: f64,
    pub gamma_s: f64,
}

/// SimGrid's defaults, `0.965;0.925;1.35`.
pub const IB_SIMGRID_DEFAULTS: IbParams = IbParams { beta_e: 0.965, beta_s: 0.925, gamma_s: 1.35 };

/// One side (emission or reception) of a communication in the §V-A formula: the degree
/// Δ of its node on that side, whether it is strongly slowed (in C_o^m, resp. C_i^m) and
/// the size of that set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    pub delta: usize,
    pub strongly_slowed: bool,
    pub card: usize,
}

impl Side {
    /// Δ·β·(1 + γ(Δ − card)) when strongly slowed, Δ·β·(1 − γ/card) otherwise, 1 without
    /// conflict on this side (Δ = 1). Both are Δ·β·(1 + γ·k): this is k (the factor γ
    /// carries; 0 when the data say nothing of γ).
    pub fn gamma_factor(&self) -> f64 {
        match (self.delta <= 1, self.strongly_slowed) {
            (true, _) => 0.0,
            (false, true) => (self.delta - self.card) as f64,
            (false, false) => -1.0 / self.card as f64,
        }
    }

    pub fn penalty(&self, beta: f64, gamma: f64) -> f64 {
        if self.delta <= 1 {
            1.0
        } else {
            self.delta as f64 * beta * (1.0 + gamma * self.gamma_factor())
        }
    }
}

/// What the local formulas read around a node's sending side: over the communications it
/// sends, the largest in-degree of their destinations, how many reach it, and whether some
/// destination receives more than two (resp. at most two) communications (SimGrid's IB γs).
#[derive(Debug, Clone, Copy, Default)]
struct SendSide {
    max_in: usize,
    card: usize,
    to_busy: bool,
    to_quiet: bool,
}

/// What the local formulas read around a node's receiving side: over the communications it
/// receives, the largest out-degree of their sources and how many reach it; and its distinct
/// senders with the number of communications from each, `senders[start..start + len]` of
/// [`LocalScratch`], sorted by sender (SimGrid's IB incoming penalty).
#[derive(Debug, Clone, Copy, Default)]
struct RecvSide {
    max_out: usize,
    card: usize,
    start: usize,
    len: usize,
}

/// The per-node aggregates of the local formulas (GigE §V-A, SimGrid's IB), each computed
/// once per node and kept until [`LocalScratch::forget`]. The formulas of a communication read
/// the degrees of its source's destinations and of its destination's sources; computing them
/// per communication costs Δ each, Δ² for a node of degree Δ (a star of 100,000 arcs took a
/// minute). Through this cache each node's side is computed once, so a whole scheme takes time
/// linear in its arcs. The aggregates are only valid while the graph is unchanged: the engine
/// forgets them before each re-evaluation.
#[derive(Debug, Clone)]
pub struct LocalScratch {
    epoch: u32,
    send_mark: Vec<u32>,
    send: Vec<SendSide>,
    recv_mark: Vec<u32>,
    recv: Vec<RecvSide>,
    /// (sender, communications from it) of each receiving side computed in this epoch.
    senders: Vec<(u32, u32)>,
    scratch: Vec<u32>,
}

impl Default for LocalScratch {
    fn default() -> Self {
        // Marks start at 0, so the first epoch is 1.
        LocalScratch { epoch: 1, send_mark: Vec::new(), send: Vec::new(), recv_mark: Vec::new(), recv: Vec::new(),
                       senders: Vec::new(), scratch: Vec::new() }
    }
}

/// Whether node `i`'s cached side is stale in `epoch` (growing the cache to hold it); it is
/// marked current, so the caller computes it now.
fn stale<T: Clone + Default>(marks: &mut Vec<u32>, values: &mut Vec<T>, i: usize, epoch: u32) -> bool {
    if marks.len() <= i {
        marks.resize(i + 1, 0);
        values.resize(i + 1, T::default());
    }
    std::mem::replace(&mut marks[i], epoch) != epoch
}

impl LocalScratch {
    /// Drop every aggregate (the graph changed).
    pub fn forget(&mut self) {
        self.senders.clear();
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.send_mark.iter_mut().for_each(|m| *m = 0);
            self.recv_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
    }

    fn send_side<A: Adjacency>(&mut self, a: &A, s: u32) -> SendSide {
        let i = s as usize;
        if stale(&mut self.send_mark, &mut self.send, i, self.epoch) {
            let out = a.outgoing(s);
            let (max_in, card) = max_and_count(out.iter().map(|&k| a.incoming(a.ends(k).1).len()));
            let busy = |k: &u32| a.incoming(a.ends(*k).1).len() > 2;
            self.send[i] = SendSide { max_in, card, to_busy: out.iter().any(busy), to_quiet: !out.iter().all(busy) };
        }
        self.send[i]
    }

    fn recv_side<A: Adjacency>(&mut self, a: &A, d: u32, with_senders: bool) -> RecvSide {
        let i = d as usize;
        if stale(&mut self.recv_mark, &mut self.recv, i, self.epoch) {
            let inn = a.incoming(d);
            let (max_out, card) = max_and_count(inn.iter().map(|&k| a.outgoing(a.ends(k).0).len()));
            self.recv[i] = RecvSide { max_out, card, start: 0, len: usize::MAX };
        }
        if with_senders && self.recv[i].len == usize::MAX {
            self.scratch.clear();
            self.scratch.extend(a.incoming(d).iter().map(|&k| a.ends(k).0));
            self.scratch.sort_unstable();
            let start = self.senders.len();
            for &x in &self.scratch {
                let n = self.senders.len();
                if n > start && self.senders[n - 1].0 == x {
                    self.senders[n - 1].1 += 1;
                } else {
                    self.senders.push((x, 1));
                }
            }
            self.recv[i].start = start;
            self.recv[i].len = self.senders.len() - start;
        }
        self.recv[i]
    }

    /// Emission and reception sides of communication `c` (§V-A, Definition 1):
    /// C_o^m holds the communications of c's source whose destination has the largest
    /// in-degree; C_i^m those into c's destination whose source has the largest out-degree.
    pub fn gige_sides<A: Adjacency>(&mut self, a: &A, c: u32) -> (Side, Side) {
        let (s, d) = a.ends(c);
        let (out, inn) = (a.outgoing(s).len(), a.incoming(d).len());
        let so = self.send_side(a, s);
        let ri = self.recv_side(a, d, false);
        (
            Side { delta: out, strongly_slowed: inn == so.max_in, card: so.card },
            Side { delta: inn, strongly_slowed: out == ri.max_out, card: ri.card },
        )
    }

    /// GigE penalty of communication `c` (§V-A): p = max(p_o, p_i).
    pub fn gige_penalty<A: Adjacency>(&mut self, a: &A, c: u32, p: &GigeParams) -> f64 {
        let (o, i) = self.gige_sides(a, c);
        o.penalty(p.beta, p.gamma_o).max(i.penalty(p.beta, p.gamma_i))
    }

    /// SimGrid's IB penalty of communication `c` from s to d (SimGrid's
    /// `NetworkIBModel::compute_IB_factors`): the largest outgoing penalty of s, where each
    /// of its n_out communications weighs n_out·βs, times γs when its destination receives
    /// more than two; and the incoming penalty (comms from s to d)·βe·(distinct senders to d)
    /// when d receives more than one. Both are 1 without conflict.
    pub fn ib_simgrid_penalty<A: Adjacency>(&mut self, a: &A, c: u32, p: &IbParams) -> f64 {
        let (s, d) = a.ends(c);
        let n_out = a.outgoing(s).len();
        let max_out = if n_out <= 1 {
            1.0
        } else {
            let side = self.send_side(a, s);
            // The largest of n_out·βs·γs (to a busy destination) and n_out·βs (to a quiet one).
            let weigh = |on: bool, f: f64| if on { n_out as f64 * p.beta_s * f } else { 0.0 };
            weigh(side.to_busy, p.gamma_s).max(weigh(side.to_quiet, 1.0))
        };
        let my_in = if a.incoming(d).len() <= 1 {
            1.0
        } else {
            let side = self.recv_side(a, d, true);
            let senders = &self.senders[side.start..side.start + side.len];
            let from_s = senders.binary_search_by_key(&s, |x| x.0).map_or(0, |k| senders[k].1);
            from_s as f64 * p.beta_e * side.len as f64
        };
        my_in.max(max_out)
    }

    /// Penalty of one communication under a local model (not Myrinet, whose penalties
    /// come per component: [`myrinet::myrinet_penalties`]).
    pub fn local_penalty<A: Adjacency>(&mut self, model: &PenaltyModel, a: &A, c: u32) -> f64 {
        match model {
            PenaltyModel::Gige { params, .. } => self.gige_penalty(a, c, params),
            PenaltyModel::IbSimgrid(p) => self.ib_simgrid_penalty(a, c, p),
            PenaltyModel::Myrinet(_) => unreachable!("Myrinet penalties are computed per component"),
        }
    }
}

fn max_and_count(values: impl Iterator<Item = usize>) -> (usize, usize) {
    let mut best = (0, 0);
    for v in values {
        if v > best.0 {
            best = (v, 1);
        } else if v == best.0 {
            best.1 += 1;
        }
    }
    best
}

/// One communication of a scheme file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommSpec {
    /// Unique name of the communication.
    pub id: String,
    /// Source node (an integer >= 0).
    pub src: i64,
    /// Destination node (an integer >= 0, not `src`).
    pub dst: i64,
    /// Message size in bytes (optional; `penalties --static-times` and `measure` use it).
    #[serde(default)]
    pub bytes: Option<f64>,
    /// Measured values, as `commaware measure penalties` writes them (ignored here).
    #[serde(default)]
    pub time_s: Option<f64>,
    #[serde(default)]
    pub penalty: Option<f64>,
    #[serde(default)]
    pub t_ref_s: Option<f64>,
    #[serde(default)]
    pub samples_s: Option<Vec<f64>>,
}

/// A communication scheme (paper 004 §IV): concurrent communications between nodes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemeSpec {
    /// Optional name of the scheme.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(deserialize_with = "crate::util::cancel::checked_seq")]
    #[schemars(with = "Vec<CommSpec>")]
    pub comms: Vec<CommSpec>,
    /// Reference time of a lone transfer, as `measure` writes it (ignored here).
    #[serde(default)]
    pub t_ref_s: Option<f64>,
}

/// A validated scheme: ids, arcs and sizes.
#[derive(Debug, Clone)]
pub struct Scheme {
    pub ids: Vec<String>,
    pub comms: Vec<(u32, u32)>,
    pub bytes: Vec<Option<f64>>,
}

/// Most communications in one scheme.
pub const MAX_SCHEME_COMMS: usize = 1 << 24;

impl Scheme {
    /// Parse and validate a scheme from JSON, TOML or dict text.
    pub fn from_text(text: &str, format: Format) -> Result<Scheme> {
        Scheme::from_spec(parse_input(ErrorKind::Scheme, text, format)?)
    }

    pub fn from_spec(spec: SchemeSpec) -> Result<Scheme> {
        let err = |field: String, reason: String| Error::new(ErrorKind::Scheme, field, reason);
        if spec.comms.is_empty() {
            return Err(err("comms".into(), "the scheme has no communications".into()));
        }
        if spec.comms.len() > MAX_SCHEME_COMMS {
            return Err(err("comms".into(), format!("{} communications: at most {MAX_SCHEME_COMMS}", spec.comms.len())));
        }
        let mut seen = std::collections::HashMap::new();
        let mut scheme = Scheme { ids: Vec::new(), comms: Vec::new(), bytes: Vec::new() };
        for (k, c) in spec.comms.into_iter().enumerate() {
            if k % 4096 == 0 {
                crate::util::cancel::check()?;
            }
            for (name, v) in [("src", c.src), ("dst", c.dst)] {
                if !(0..=u32::MAX as i64).contains(&v) {
                    return Err(err(format!("comms[{k}].{name}"), format!("a node id is an integer in [0, {}], got {v}", u32::MAX)));
                }
            }
            if c.src == c.dst {
                return Err(err(format!("comms[{k}].dst"), format!("same node as src ({}): a self-loop is not a network transfer", c.src)));
            }
            if let Some(b) = c.bytes {
                check_amount(ErrorKind::Scheme, &format!("comms[{k}].bytes"), b, true)?;
            }
            if let Some(first) = seen.insert(c.id.clone(), k) {
                return Err(err(format!("comms[{k}].id"), format!("duplicate id `{}` (also comms[{first}])", c.id)));
            }
            scheme.ids.push(c.id);
            scheme.comms.push((c.src as u32, c.dst as u32));
            scheme.bytes.push(c.bytes);
        }
        Ok(scheme)
    }

    /// The JSON Schema of scheme files.
    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(SchemeSpec)).expect("a schema serialises")
    }
}

/// A sharing model that rates by penalties, with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum PenaltyModel {
    /// §V-A (`gige`), or the same family with InfiniBand's fitted parameters (`infiniband`).
    Gige { name: &'static str, params: GigeParams },
    /// §V-B: Stop&Go state sets.
    Myrinet(MyrinetOptions),
    /// SimGrid's IB model: max-min link sharing with per-flow caps (route bandwidth)/penalty.
    IbSimgrid(IbParams),
}

/// Penalty models and the parameters each takes.
pub const PENALTY_MODELS: &[(&str, &[&str])] = &[
    ("gige", &["beta", "gamma_o", "gamma_i"]),
    ("myrinet", &["exact_limit", "exact_states", "samples", "steps", "tolerance", "seed"]),
    ("infiniband", &["beta", "gamma_o", "gamma_i"]),
    ("ib-simgrid", &["beta_e", "beta_s", "gamma_s"]),
];

/// The parameter names of sharing model `model` (none for max-min and contention-free).
pub fn parameter_names(model: &str) -> &'static [&'static str] {
    PENALTY_MODELS.iter().find(|(m, _)| *m == model).map_or(&[], |(_, p)| p)
}

impl PenaltyModel {
    /// The model `name` with its defaults overridden by `params` (name, value), checked:
    /// unknown names, non-finite values, β ≤ 0 and γ outside [0, 1) are errors naming
    /// `prefix` + the parameter. `None` for a model that is not a penalty model.
    pub fn from_params(name: &str, params: &[(String, f64)], prefix: &str) -> Result<Option<PenaltyModel>> {
        let known = parameter_names(name);
        for (k, v) in params {
            let field = format!("{prefix}{k}");
            if !known.contains(&k.as_str()) {
                let expected = if known.is_empty() {
                    format!("the {name} model takes no parameters")
                } else {
                    format!("the {name} model takes {}", known.join(", "))
                };
                return Err(Error::new(ErrorKind::Options, field, format!("unknown parameter `{k}`: {expected}")));
            }
            if !v.is_finite() {
                return Err(Error::new(ErrorKind::Options, field, format!("must be a finite number, got {v}")));
            }
        }
        let get = |k: &str, default: f64| params.iter().rev().find(|(n, _)| n == k).map_or(default, |(_, v)| *v);
        let err = |k: &str, reason: String| Error::new(ErrorKind::Options, format!("{prefix}{k}"), reason);
        let gige = |name: &'static str, d: GigeParams| -> Result<PenaltyModel> {
            let p = GigeParams { beta: get("beta", d.beta), gamma_o: get("gamma_o", d.gamma_o), gamma_i: get("gamma_i", d.gamma_i) };
            if p.beta <= 0.0 {
                return Err(err("beta", format!("must be > 0, got {}", p.beta)));
            }
            for (k, g) in [("gamma_o", p.gamma_o), ("gamma_i", p.gamma_i)] {
                if !(0.0..1.0).contains(&g) {
                    return Err(err(k, format!("must be in [0, 1), got {g}")));
                }
            }
            Ok(PenaltyModel::Gige { name, params: p })
        };
        Ok(Some(match name {
            "gige" => gige("gige", GIGE_DEFAULTS)?,
            "infiniband" => gige("infiniband", INFINIBAND_DEFAULTS)?,
            "ib-simgrid" => {
                let d = IB_SIMGRID_DEFAULTS;
                let p = IbParams { beta_e: get("beta_e", d.beta_e), beta_s: get("beta_s", d.beta_s), gamma_s: get("gamma_s", d.gamma_s) };
                for (k, v) in [("beta_e", p.beta_e), ("beta_s", p.beta_s), ("gamma_s", p.gamma_s)] {
                    if v <= 0.0 {
                        return Err(err(k, format!("must be > 0, got {v}")));
                    }
                }
                PenaltyModel::IbSimgrid(p)
            }
            "myrinet" => {
                let d = MyrinetOptions::default();
                let int = |k: &str, default: usize, lo: f64, hi: f64| -> Result<usize> {
                    let v = get(k, default as f64);
                    if v.fract() != 0.0 || v < lo || v > hi {
                        return Err(err(k, format!("must be an integer in [{lo}, {hi}], got {v}")));
                    }
                    Ok(v as usize)
                };
                let seed = get("seed", d.seed as f64);
                if seed.fract() != 0.0 || !(0.0..9007199254740992.0).contains(&seed) {
                    return Err(err("seed", format!("must be an integer in [0, 2^53), got {seed}")));
                }
                MyrinetOptions {
                    exact_limit: int("exact_limit", d.exact_limit, 0.0, myrinet::EXACT_LIMIT as f64)?,
                    exact_states: int("exact_states", d.exact_states, 0.0, myrinet::MAX_EXACT_STATES as f64)?,
                    samples: int("samples", d.samples, 1.0, 1e7)?,
                    steps: int("steps", d.steps, 1.0, 1e12)?,
                    tolerance: {
                        let v = get("tolerance", d.tolerance);
                        if !(v > 0.0 && v < 1.0) {
                            return Err(err("tolerance", format!("must be in (0, 1), got {v}")));
                        }
                        v
                    },
                    seed: seed as u64,
                }
                .into()
            }
            _ => return Ok(None),
        }))
    }

    pub fn name(&self) -> &'static str {
        match self {
            PenaltyModel::Gige { name, .. } => name,
            PenaltyModel::Myrinet(_) => "myrinet",
            PenaltyModel::IbSimgrid(_) => "ib-simgrid",
        }
    }

    /// The parameters in effect, by name.
    pub fn parameters(&self) -> Vec<(&'static str, f64)> {
        match self {
            PenaltyModel::Gige { params: p, .. } => vec![("beta", p.beta), ("gamma_o", p.gamma_o), ("gamma_i", p.gamma_i)],
            PenaltyModel::Myrinet(o) => {
                vec![("exact_limit", o.exact_limit as f64), ("exact_states", o.exact_states as f64), ("samples", o.samples as f64), ("steps", o.steps as f64), ("tolerance", o.tolerance), ("seed", o.seed as f64)]
            }
            PenaltyModel::IbSimgrid(p) => vec![("beta_e", p.beta_e), ("beta_s", p.beta_s), ("gamma_s", p.gamma_s)],
        }
    }
}

impl From<MyrinetOptions> for PenaltyModel {
    fn from(o: MyrinetOptions) -> Self {
        PenaltyModel::Myrinet(o)
    }
}

/// A scheme's arcs on dense node indices, with each node's arcs: the static [`Adjacency`].
#[derive(Debug, Clone)]
pub struct SchemeGraph {
    ends: Vec<(u32, u32)>,
    out: Vec<Vec<u32>>,
    inn: Vec<Vec<u32>>,
}

impl SchemeGraph {
    /// Node ids may be any u32; they are renumbered densely (relabelling nodes changes nothing).
    pub fn new(comms: &[(u32, u32)]) -> SchemeGraph {
        let mut ids: Vec<u32> = comms.iter().flat_map(|&(s, d)| [s, d]).collect();
        ids.sort_unstable();
        ids.dedup();
        let dense = |x: u32| ids.binary_search(&x).expect("collected") as u32;
        let ends: Vec<(u32, u32)> = comms.iter().map(|&(s, d)| (dense(s), dense(d))).collect();
        let mut out = vec![Vec::new(); ids.len()];
        let mut inn = vec![Vec::new(); ids.len()];
        for (c, &(s, d)) in ends.iter().enumerate() {
            out[s as usize].push(c as u32);
            inn[d as usize].push(c as u32);
        }
        SchemeGraph { ends, out, inn }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Out-degree of each communication's source (Δo) and in-degree of its destination (Δi).
    pub fn degrees(&self, c: u32) -> (usize, usize) {
        let (s, d) = self.ends[c as usize];
        (self.out[s as usize].len(), self.inn[d as usize].len())
    }
}

impl Adjacency for SchemeGraph {
    fn outgoing(&self, node: u32) -> &[u32] {
        &self.out[node as usize]
    }
    fn incoming(&self, node: u32) -> &[u32] {
        &self.inn[node as usize]
    }
    fn ends(&self, c: u32) -> (u32, u32) {
        self.ends[c as usize]
    }
}

/// Static analysis of a scheme: per communication, its degrees, classes and penalty.
#[derive(Debug, Clone)]
pub struct SchemeAnalysis {
    pub delta_out: Vec<u32>,
    pub delta_in: Vec<u32>,
    pub conflicts: Vec<u8>,
    pub penalties: Vec<f64>,
    /// The §V-A emission and reception sides of each communication (for calibration).
    pub sides: Vec<(Side, Side)>,
    /// Myrinet only: the state sets of each component.
    pub components: Vec<myrinet::ComponentCount>,
}

/// Penalties of a static scheme (the paper's predictions: penalty × t_ref for the whole
/// scheme, Fig. 4). `maxmin` gives nominal bandwidth / max-min rate on a star of
/// full-duplex NICs of equal bandwidth.
pub fn analyze(comms: &[(u32, u32)], model: Option<&PenaltyModel>) -> Result<SchemeAnalysis> {
    let g = SchemeGraph::new(comms);
    let n = g.len() as u32;
    // A scheme may hold millions of communications: the per-communication passes stop
    // (`util::cancel`) between blocks of them.
    let checked = |c: u32| if c % 4096 == 0 { cancel::check() } else { Ok(()) };
    let (delta_out, delta_in) = (0..n).map(|c| g.degrees(c)).map(|(o, i)| (o as u32, i as u32)).unzip();
    let conflicts = (0..n).map(|c| checked(c).map(|_| conflict_classes(&g, c))).collect::<Result<_>>()?;
    let mut components = Vec::new();
    let mut local = LocalScratch::default();
    let penalties = match model {
        Some(PenaltyModel::Myrinet(opts)) => {
            let r = myrinet::myrinet_penalties(&g.ends, opts, true)?;
            components = r.components;
            r.penalties
        }
        Some(m) => (0..n).map(|c| checked(c).map(|_| local.local_penalty(m, &g, c))).collect::<Result<_>>()?,
        None => maxmin_penalties(&g),
    };
    let sides = (0..n).map(|c| local.gige_sides(&g, c)).collect();
    Ok(SchemeAnalysis { delta_out, delta_in, conflicts, penalties, sides, components })
}

/// Max-min on the scheme's star: each node an up-link and a down-link of capacity 1.
fn maxmin_penalties(g: &SchemeGraph) -> Vec<f64> {
    use super::{FlowNet, MaxMin, SharingModel};
    let nodes = g.out.len() as u32;
    let mut net = FlowNet::new(std::iter::repeat(1.0).take(2 * nodes as usize));
    let added: Vec<u32> = g.ends.iter().map(|&(s, d)| net.add_flow(&[s, nodes + d])).collect();
    let mut changed = Vec::new();
    MaxMin::default().update(&mut net, &added, &[], &mut changed);
    added.iter().map(|&f| 1.0 / net.flow(f).rate).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gige(comms: &[(u32, u32)]) -> Vec<f64> {
        analyze(comms, Some(&PenaltyModel::Gige { name: "gige", params: GIGE_DEFAULTS })).unwrap().penalties
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-12, "{a:?} != {b:?}");
        }
    }

    #[test]
    fn fig2_stars_gige() {
        // Fig. 2, Gigabit Ethernet: 1, 1.5, 2.25 for one node sending to 1, 2, 3 peers.
        close(&gige(&[(0, 1)]), &[1.0]);
        close(&gige(&[(0, 1), (0, 2)]), &[1.5, 1.5]);
        close(&gige(&[(0, 1), (0, 2), (0, 3)]), &[2.25, 2.25, 2.25]);
    }

    #[test]
    fn fig4_tournament() {
        // a 0→1, b 0→2, c 0→3, d 1→2, e 1→3, f 2→3 (the reconstruction of the notes).
        let p = gige(&[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
        let b = 0.75;
        // a: not in C_o^m = {c} (card 1): 3β(1 − γo); f: not in C_i^m = {c}: 3β(1 − γi).
        assert!((p[0] - 3.0 * b * (1.0 - 0.115)).abs() < 1e-12);
        assert!((p[5] - 3.0 * b * (1.0 - 0.036)).abs() < 1e-12);
        // c: in C_o^m (card 1) and C_i^m (card 1): max(3β(1 + 2γo), 3β(1 + 2γi)).
        assert!((p[2] - 3.0 * b * (1.0 + 2.0 * 0.115)).abs() < 1e-12);
    }

    #[test]
    fn hand_worked_both_sides() {
        // Node 0 sends a→1, b→2; node 3 sends c→2; node 4 sends d→2 too.
        // a: Δo=2, C_o^m of 0: Δi(1)=1, Δi(2)=3 → {b}, card 1; a not in it: 2β(1 − γo).
        // b: Δo=2, in C_o^m: 2β(1 + γo(2 − 1)); Δi=3, C_i^m of 2: Δo(0)=2, Δo(3)=1, Δo(4)=1
        //    → {b}, b in it, card 1: 3β(1 + γi·2). p = max.
        // c: Δo=1 → p_o=1; Δi=3, not in C_i^m: 3β(1 − γi/1).
        let p = gige(&[(0, 1), (0, 2), (3, 2), (4, 2)]);
        let (b, go, gi) = (0.75, 0.115, 0.036);
        close(&p, &[
            2.0 * b * (1.0 - go),
            (2.0 * b * (1.0 + go)).max(3.0 * b * (1.0 + 2.0 * gi)),
            3.0 * b * (1.0 - gi),
            3.0 * b * (1.0 - gi),
        ]);
    }

    #[test]
    fn conflict_classes_lists() {
        let a = analyze(&[(0, 1), (0, 2), (1, 2), (3, 4)], None).unwrap();
        // 0→1: outgoing (0 sends two), in-out (1 also sends); 0→2: outgoing, incoming;
        // 1→2: incoming, in-out (1 also receives); 3→4: none.
        assert_eq!(a.conflicts, vec![OUTGOING | IN_OUT, OUTGOING | INCOMING, INCOMING | IN_OUT, 0]);
        assert_eq!(class_names(OUTGOING | IN_OUT).collect::<Vec<_>>(), ["outgoing", "in-out"]);
        assert_eq!(a.delta_out, vec![2, 2, 1, 1]);
        assert_eq!(a.delta_in, vec![1, 2, 2, 1]);
    }

    #[test]
    fn in_out_only_is_penalty_one() {
        // 0→1 and 1→2: each is only in an in-out conflict.
        let comms = [(0, 1), (1, 2)];
        close(&gige(&comms), &[1.0, 1.0]);
        let ib = analyze(&comms, Some(&PenaltyModel::IbSimgrid(IB_SIMGRID_DEFAULTS))).unwrap().penalties;
        close(&ib, &[1.0, 1.0]);
        close(&analyze(&comms, None).unwrap().penalties, &[1.0, 1.0]);
    }

    #[test]
    fn ib_simgrid_formula() {
        let ib = |c: &[(u32, u32)]| analyze(c, Some(&PenaltyModel::IbSimgrid(IB_SIMGRID_DEFAULTS))).unwrap().penalties;
        close(&ib(&[(0, 1), (0, 2)]), &[1.85, 1.85]);
        // Two senders into 2: (1 comm from s)·βe·2 senders.
        close(&ib(&[(0, 2), (1, 2)]), &[1.93, 1.93]);
        // Parallel arcs 0→1 twice: out 2·βs = 1.85, in 2·βe·1 = 1.93.
        close(&ib(&[(0, 1), (0, 1)]), &[1.93, 1.93]);
        // Three into 3 from 0, 1, 2, and 0 also → 4: 0's out penalty 2·βs·γs (3 has > 2 in).
        let p = ib(&[(0, 3), (1, 3), (2, 3), (0, 4)]);
        // 0→3: max(in 1·βe·3 senders, out 2·βs·γs) = 2.895; 0→4: out only.
        close(&p, &[3.0 * 0.965, 3.0 * 0.965, 3.0 * 0.965, 2.0 * 0.925 * 1.35]);
    }

    #[test]
    fn maxmin_static() {
        close(&analyze(&[(0, 1), (0, 2), (3, 2)], None).unwrap().penalties, &[2.0, 2.0, 2.0]);
        close(&analyze(&[(0, 1), (0, 2), (0, 3), (4, 3)], None).unwrap().penalties, &[3.0, 3.0, 3.0, 1.5]);
    }

    #[test]
    fn scheme_checked() {
        let e = |t: &str| Scheme::from_text(t, Format::Json).unwrap_err();
        assert_eq!(e(r#"{"comms": []}"#).field, "comms");
        assert_eq!(e(r#"{"comms": [{"id": "a", "src": 1, "dst": 1}]}"#).field, "comms[0].dst");
        assert_eq!(e(r#"{"comms": [{"id": "a", "src": -1, "dst": 1}]}"#).field, "comms[0].src");
        assert!(e(r#"{"comms": [{"id": "a", "src": 0.5, "dst": 1}]}"#).field.starts_with("comms[0].src"));
        let d = e(r#"{"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "a", "src": 0, "dst": 2}]}"#);
        assert_eq!((d.field.as_str(), d.kind), ("comms[1].id", ErrorKind::Scheme));
        assert_eq!(e(r#"{"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": -4}]}"#).field, "comms[0].bytes");
        assert!(e(r#"{"comms": [{"id": "a", "src": 0, "dst": 1, "btyes": 4}]}"#).reason.contains("unknown field"));
        let s = Scheme::from_text(r#"{"comms": [{"id": "a", "src": 7, "dst": 3, "bytes": 10}]}"#, Format::Json).unwrap();
        assert_eq!((s.comms[0], s.bytes[0]), ((7, 3), Some(10.0)));
    }

    #[test]
    fn params_checked() {
        let p = |name: &str, k: &str, v: f64| PenaltyModel::from_params(name, &[(k.into(), v)], "parameters.");
        assert_eq!(p("gige", "beta", 0.0).unwrap_err().field, "parameters.beta");
        assert!(p("gige", "gamma_o", 1.0).unwrap_err().reason.contains("[0, 1)"));
        assert!(p("gige", "gamma_i", -0.1).is_err());
        assert!(p("gige", "zeta", 1.0).unwrap_err().reason.contains("unknown parameter"));
        assert!(p("gige", "beta", f64::NAN).is_err());
        assert!(p("maxmin", "beta", 1.0).unwrap_err().reason.contains("takes no parameters"));
        assert!(p("myrinet", "samples", 0.5).is_err());
        assert!(p("ib-simgrid", "gamma_s", -1.0).is_err());
        let m = p("gige", "beta", 0.8).unwrap().unwrap();
        assert_eq!(m.parameters()[0], ("beta", 0.8));
        assert_eq!(PenaltyModel::from_params("maxmin", &[], "").unwrap(), None);
    }
}
