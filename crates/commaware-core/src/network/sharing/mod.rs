//! Bandwidth sharing: how concurrent transfers divide link capacities.
//!
//! The engine keeps the flows in a [`FlowNet`] (links with capacities, flows with the
//! links they cross and their current rate). A [`SharingModel`] is told which flows
//! were added or removed since it last ran and re-rates only what that can change,
//! reporting the flows whose rate moved. The penalty models of paper 004 (GigE §V-A,
//! Myrinet §V-B, InfiniBand) and SimGrid's IB model live in [`penalty`] (the formulas, on
//! static schemes too) and [`penalized`] (their use in the engine).

pub mod cm02;
mod contention_free;
mod maxmin;
pub mod myrinet;
pub mod penalized;
pub mod penalty;
pub mod penalty_report;

pub use cm02::{Cm02, Cm02Params};
pub use contention_free::ContentionFree;
pub use maxmin::{MaxMin, MaxMin4};
pub use penalized::{Penalized, PenalizedFabric};
pub use penalty::PenaltyModel;

use crate::error::{Error, ErrorKind, Result};
use crate::network::platform::Platform;

pub type FlowId = u32;
pub type LinkId = u32;

/// Most links a star flow crosses (sender up-link, backbone, receiver down-link).
pub const MAX_HOPS: usize = 3;

#[derive(Debug, Clone)]
pub struct Link {
    pub capacity: f64,
    /// Flows currently crossing this link (unordered).
    pub flows: Vec<FlowId>,
}

/// Links a flow keeps inline (a star route); a longer route (a topology's) spills to
/// the heap.
const INLINE: usize = MAX_HOPS;

/// A flow's route and its position in each link's list: up to [`INLINE`] links inline
/// (no allocation on the star, and the star's flows stay small); a longer route keeps
/// both in `spill` (the links, then the positions).
#[derive(Debug, Clone, Default)]
struct Route {
    links: [LinkId; INLINE],
    pos: [u32; INLINE],
    n: u32,
    spill: Option<Box<Vec<u32>>>,
}

impl Route {
    #[inline]
    fn links(&self) -> &[LinkId] {
        let n = self.n as usize;
        match &self.spill {
            Some(v) if n > INLINE => &v[..n],
            _ => &self.links[..n],
        }
    }

    #[inline]
    fn pos(&self) -> &[u32] {
        let n = self.n as usize;
        match &self.spill {
            Some(v) if n > INLINE => &v[n..],
            _ => &self.pos[..n],
        }
    }

    #[inline]
    fn pos_mut(&mut self) -> &mut [u32] {
        let n = self.n as usize;
        match &mut self.spill {
            Some(v) if n > INLINE => &mut v[n..],
            _ => &mut self.pos[..n],
        }
    }
}

/// Per-flow data a weighted model reads (CM02 on a topology, see [`Cm02`]); flows
/// added by [`FlowNet::add_flow`] have none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowAttrs {
    /// The route's latency (s), before any latency factor.
    pub latency: f64,
    /// The first `forward` links are the route; the others are its reverse route
    /// (crosstraffic), loaded at a fraction of the flow's rate.
    pub forward: u32,
}

#[derive(Debug, Clone, Default)]
pub struct NetFlow {
    /// Its links, and its position in each of their `flows` (for O(1) removal).
    route: Route,
    /// Current rate in bytes/s; `f64::INFINITY` for a flow not rated yet.
    pub rate: f64,
}

impl NetFlow {
    #[inline]
    pub fn links(&self) -> &[LinkId] {
        self.route.links()
    }
}

/// A flow that left the network, as the sharing model needs to know it.
#[derive(Debug, Clone)]
pub struct RemovedFlow {
    /// The id the flow had (it may already be reused by a flow in `added`).
    pub id: FlowId,
    route: Route,
    pub rate: f64,
}

impl RemovedFlow {
    pub fn links(&self) -> &[LinkId] {
        self.route.links()
    }
}

/// Links and the flows crossing them. Flow ids are recycled after removal.
#[derive(Debug, Default)]
pub struct FlowNet {
    pub links: Vec<Link>,
    flows: Vec<NetFlow>,
    /// Per-flow attributes, only for flows given some ([`FlowNet::set_attrs`]).
    attrs: Vec<FlowAttrs>,
    free: Vec<FlowId>,
    live: usize,
}

impl FlowNet {
    pub fn new(capacities: impl IntoIterator<Item = f64>) -> Self {
        FlowNet {
            links: capacities.into_iter().map(|capacity| Link { capacity, flows: Vec::new() }).collect(),
            ..Default::default()
        }
    }

    /// Set link `l`'s capacity, adding links up to it first if needed (a mirror's private
    /// cap links, one per flow id). The net grows by doubling: a sharing model copies every
    /// capacity when links appear.
    pub fn set_capacity_growing(&mut self, l: LinkId, capacity: f64) {
        if self.links.len() <= l as usize {
            let want = (l as usize + 1).max(2 * self.links.len());
            self.links.resize_with(want, || Link { capacity: f64::INFINITY, flows: Vec::new() });
        }
        self.links[l as usize].capacity = capacity;
    }

    pub fn flow(&self, id: FlowId) -> &NetFlow {
        &self.flows[id as usize]
    }

    pub fn set_rate(&mut self, id: FlowId, rate: f64) {
        self.flows[id as usize].rate = rate;
    }

    /// Give flow `id` its attributes (right after [`FlowNet::add_flow`]).
    pub fn set_attrs(&mut self, id: FlowId, attrs: FlowAttrs) {
        if self.attrs.len() <= id as usize {
            self.attrs.resize(id as usize + 1, FlowAttrs { latency: 0.0, forward: 0 });
        }
        self.attrs[id as usize] = attrs;
    }

    /// The attributes of live flow `id`; a flow never given any has all its links forward
    /// and a latency of 0.
    pub fn attrs(&self, id: FlowId) -> FlowAttrs {
        match self.attrs.get(id as usize) {
            Some(a) if a.forward > 0 => *a,
            _ => FlowAttrs { latency: 0.0, forward: self.flows[id as usize].route.n },
        }
    }

    /// Number of flows in the network.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Capacity of the flow-id space (ids are below this).
    pub fn id_bound(&self) -> usize {
        self.flows.len()
    }

    pub fn is_live(&self, id: FlowId) -> bool {
        self.flows[id as usize].route.n > 0
    }

    /// Add a flow crossing `links` (at least one; a link may appear more than once).
    pub fn add_flow(&mut self, links: &[LinkId]) -> FlowId {
        assert!(!links.is_empty(), "a flow crosses at least one link");
        let id = self.free.pop().unwrap_or_else(|| {
            self.flows.push(NetFlow::default());
            (self.flows.len() - 1) as FlowId
        });
        let n = links.len();
        let f = &mut self.flows[id as usize];
        let r = &mut f.route;
        r.n = n as u32;
        if n <= INLINE {
            r.links[..n].copy_from_slice(links);
        } else {
            // Reuse the slot's buffer when it has one.
            let v = r.spill.get_or_insert_with(Default::default);
            v.clear();
            v.extend_from_slice(links);
            v.resize(2 * n, 0);
        }
        for (k, &l) in links.iter().enumerate() {
            let list = &mut self.links[l as usize].flows;
            r.pos_mut()[k] = list.len() as u32;
            list.push(id);
        }
        f.rate = f64::INFINITY;
        if let Some(a) = self.attrs.get_mut(id as usize) {
            a.forward = 0;
        }
        self.live += 1;
        id
    }

    pub fn remove_flow(&mut self, id: FlowId) -> RemovedFlow {
        let n = self.flows[id as usize].route.n as usize;
        for k in 0..n {
            // Read the position afresh: on a link the flow crosses twice, removing one
            // entry may have moved the other.
            let r = &self.flows[id as usize].route;
            let (l, p) = (r.links()[k] as usize, r.pos()[k] as usize);
            let list = &mut self.links[l].flows;
            list.swap_remove(p);
            if p < list.len() {
                // The entry at the end moved into slot p: fix its back-pointer.
                let last = list.len();
                let mr = &mut self.flows[list[p] as usize].route;
                let j = (0..mr.n as usize)
                    .find(|&j| mr.links()[j] as usize == l && mr.pos()[j] as usize == last)
                    .expect("the moved entry points back to its link");
                mr.pos_mut()[j] = p as u32;
            }
        }
        let f = &mut self.flows[id as usize];
        let route = f.route.clone();
        f.route.n = 0;
        self.free.push(id);
        self.live -= 1;
        RemovedFlow { id, route, rate: f.rate }
    }
}

/// A bandwidth-sharing model. `update` is called whenever flows were added (their
/// rate is `f64::INFINITY`) or removed since the previous call; it must give every
/// added flow a finite rate and push into `changed` each flow whose rate it changed
/// (unless it tracks progress itself, see [`SharingModel::track_progress`]).
pub trait SharingModel {
    fn name(&self) -> &'static str;
    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], removed: &[RemovedFlow], changed: &mut Vec<FlowId>);

    /// Ask the model to keep the flows' progress and completion times itself. A model
    /// that can (max-min: per bottleneck group, so that a re-rate costs per group, not
    /// per flow) switches to it for good and returns its [`Progress`]; from then on
    /// `update` leaves `changed` empty and need not keep [`NetFlow::rate`]. Call it
    /// before the first flow is added; calling it again returns the same tracker.
    fn track_progress(&mut self) -> Option<&mut dyn Progress> {
        None
    }

    /// For a penalty model: the conflict classes (bits of [`penalty::CLASS_NAMES`]) flow
    /// `f` has been in since it joined. `None` for models without conflicts.
    fn flow_conflicts(&self, _f: FlowId) -> Option<u8> {
        None
    }

    /// Does each flow also load its reverse route (SimGrid's crosstraffic)? The engine
    /// then appends the reverse route's links after the route ([`FlowAttrs::forward`]).
    fn crosstraffic(&self) -> bool {
        false
    }

    /// For a model that counts penalties per component (Myrinet): how many counts it made
    /// and how many of them were estimates. `None` for other models.
    fn penalty_counts(&self) -> Option<PenaltyCounts> {
        None
    }
}

/// The component counts a Myrinet run made (paper 004 §V-B): exact ones, and estimates
/// for components beyond `exact_limit` that the exact programme could not take within
/// `exact_states`. Components of one communication (penalty 1) are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PenaltyCounts {
    /// Component counts made (each change of a component recounts it).
    pub counts: u64,
    /// Of those, estimated (their penalties are within `tolerance`, 95 %, unless `steps`
    /// stopped the estimate first).
    pub estimated: u64,
    /// Of the estimates, those that `steps` stopped before every penalty was within
    /// `tolerance`.
    pub bounded: u64,
    /// The largest relative 95 % half-width of a penalty over all the estimates (0 when
    /// every count was exact).
    pub largest_error: f64,
}

/// Flow progress kept by the sharing model (see [`SharingModel::track_progress`]).
pub trait Progress {
    /// The clock is at `now`: call before each `update` (rates change from then on).
    fn set_time(&mut self, now: f64);
    /// Flow `f`, just added to the net (it is in the next `update`'s `added`), has
    /// `bytes` (> 0) to move from the time of that update.
    fn start(&mut self, f: FlowId, bytes: f64);
    /// The earliest completion among the rated flows, and its flow; the time is
    /// `f64::INFINITY` when no flow is in progress.
    fn next_completion(&self) -> (f64, FlowId);
    /// Flow `f` completed (`next_completion` named it): forget its progress. It is
    /// then removed from the net and passed in the next `update`'s `removed`.
    fn complete(&mut self, f: FlowId);
    /// The current rate of flow `f` (bytes/s).
    fn rate(&self, f: FlowId) -> f64;
}

/// Max-min shares of one resource of capacity `total` among flows capped at `caps`
/// (water-filling); `out[i]` gets flow i's rate.
pub fn water_fill(caps: &[f64], total: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend_from_slice(caps);
    let sum: f64 = caps.iter().sum();
    if sum <= total {
        return;
    }
    let mut idx: Vec<usize> = (0..caps.len()).collect();
    idx.sort_by(|&a, &b| caps[a].total_cmp(&caps[b]).then(a.cmp(&b)));
    let mut left = total;
    let mut k = caps.len();
    let mut level = f64::INFINITY;
    for &i in &idx {
        if level.is_finite() {
            out[i] = level;
            continue;
        }
        let share = left / k as f64;
        if caps[i] <= share {
            left -= caps[i];
            k -= 1;
        } else {
            level = share;
            out[i] = share;
        }
    }
}

/// Names of the sharing models the engine knows.
pub const MODELS: &[&str] = &["maxmin", "contention_free", "gige", "myrinet", "infiniband", "ib-simgrid"];

pub fn check_model_name(name: &str) -> Result<()> {
    if MODELS.contains(&name) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Options,
            "model",
            format!("unknown sharing model `{name}` (known: {})", MODELS.join(", ")),
        ))
    }
}

/// Can the sharing model `name` run on `platform`?
pub fn check_model(platform: &Platform, name: &str) -> Result<()> {
    check_model_name(name)?;
    if platform.topology.is_some() {
        if name == "contention_free" {
            return Err(Error::new(
                ErrorKind::Options,
                "model",
                "the contention_free model is not available on platforms with a topology (maxmin and the penalty models are)",
            ));
        }
        if !penalty::parameter_names(name).is_empty() {
            // The penalty models need each host's private link (its NIC).
            penalized::private_links(platform, name)?;
        }
    }
    Ok(())
}

/// The parameters of `maxmin` on `platform`, checked (errors name `prefix` + the
/// parameter). With a topology they are CM02's ([`cm02::PARAMETERS`]); the star takes
/// none: its routes all have one latency, so the weighting changes nothing, and its
/// exact solver does not apply the TCP-gamma bound (docs/sharing.md).
pub fn maxmin_params(platform: &Platform, params: &[(String, f64)], prefix: &str) -> Result<Cm02Params> {
    if platform.topology.is_some() {
        return Cm02Params::from_params(params, prefix);
    }
    if let Some((k, _)) = params.iter().find(|(k, _)| cm02::PARAMETERS.contains(&k.as_str())) {
        return Err(Error::new(
            ErrorKind::Options,
            format!("{prefix}{k}"),
            "applies only to a platform with a topology: the star's maxmin takes no parameters",
        ));
    }
    PenaltyModel::from_params("maxmin", params, prefix)?;
    Ok(Cm02Params::default())
}

/// A penalty model `name` on `platform` with a topology: the model with its own parameters
/// among `params`, and CM02's for the fabric (docs/sharing.md, "Penalty models on a
/// topology"), checked (errors name `prefix` + the parameter). `None` for another model or
/// on the star.
pub fn penalty_on_topology(
    platform: &Platform,
    name: &str,
    params: &[(String, f64)],
    prefix: &str,
) -> Result<Option<(PenaltyModel, Cm02Params)>> {
    if platform.topology.is_none() || penalty::parameter_names(name).is_empty() {
        return Ok(None);
    }
    let (fabric, own): (Vec<_>, Vec<_>) = params.iter().cloned().partition(|(k, _)| cm02::PARAMETERS.contains(&k.as_str()));
    let m = PenaltyModel::from_params(name, &own, prefix)?.expect("a penalty model");
    Ok(Some((m, Cm02Params::from_params(&fabric, prefix)?)))
}

/// The sharing model `name` for `platform`, with `params` (name, value) overriding its
/// defaults. The platform's own `network.parameters` apply when `name` is its
/// `network.model`, and `params` come after them.
pub fn make_model(name: &str, platform: &Platform, params: &[(String, f64)]) -> Result<Box<dyn SharingModel>> {
    // Known, and within the model's size limits, before anything is allocated.
    check_model(platform, name)?;
    let mut all: Vec<(String, f64)> = Vec::new();
    if name == "maxmin" && platform.topology.is_some() && platform.smpi.as_ref().is_some_and(|s| s.preset) {
        // smpirun's defaults (`network/model:SMPI`): crosstraffic on and weight-S 8775; the
        // platform's parameters and the options come after, so they can turn them off.
        all.extend([("crosstraffic".to_string(), 1.0), ("weight_s".to_string(), crate::network::smpi::SMPI_WEIGHT_S)]);
    }
    if name == platform.network.model {
        all.extend(platform.network.parameters.iter().map(|(k, v)| (k.clone(), *v)));
    }
    all.extend(params.iter().cloned());
    if name == "maxmin" {
        let params = maxmin_params(platform, &all, "param.")?;
        if platform.topology.is_some() {
            return Ok(Box::new(Cm02::new(platform, params)));
        }
        return Ok(Box::new(MaxMin::default()));
    }
    if let Some((m, fabric)) = penalty_on_topology(platform, name, &all, "param.")? {
        return Ok(Box::new(PenalizedFabric::new(m, platform, fabric)?));
    }
    if let Some(m) = PenaltyModel::from_params(name, &all, "param.")? {
        return Ok(Box::new(Penalized::new(m, platform.hosts.len(), platform.network.backbone.is_some())));
    }
    Ok(match name {
        "contention_free" => Box::new(ContentionFree::new(platform)),
        _ => Box::new(MaxMin::default()),
    })
}
