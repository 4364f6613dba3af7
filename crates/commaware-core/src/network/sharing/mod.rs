//! Bandwidth sharing: how concurrent transfers divide link capacities.
//!
//! The engine keeps the flows in a [`FlowNet`] (links with capacities, flows with the
//! links they cross and their current rate). A [`SharingModel`] is told which flows
//! were added or removed since it last ran and re-rates only what that can change,
//! reporting the flows whose rate moved. The penalty models of paper 004 (GigE §V-A,
//! Myrinet §V-B, InfiniBand) and SimGrid's IB model live in [`penalty`] (the formulas, on
//! static schemes too) and [`penalized`] (their use in the engine).

mod contention_free;
mod maxmin;
pub mod myrinet;
pub mod penalized;
pub mod penalty;
pub mod penalty_report;

pub use contention_free::ContentionFree;
pub use maxmin::MaxMin;
pub use penalized::Penalized;
pub use penalty::PenaltyModel;

use crate::error::{Error, ErrorKind, Result};
use crate::network::platform::Platform;

pub type FlowId = u32;
pub type LinkId = u32;

/// Most links a flow crosses: sender up-link, backbone, receiver down-link.
pub const MAX_HOPS: usize = 3;

#[derive(Debug, Clone)]
pub struct Link {
    pub capacity: f64,
    /// Flows currently crossing this link (unordered).
    pub flows: Vec<FlowId>,
}

#[derive(Debug, Clone)]
pub struct NetFlow {
    links: [LinkId; MAX_HOPS],
    /// Position of this flow in each of its links' `flows`, for O(1) removal.
    pos: [u32; MAX_HOPS],
    nlinks: u8,
    /// Current rate in bytes/s; `f64::INFINITY` for a flow not rated yet.
    pub rate: f64,
}

impl NetFlow {
    pub fn links(&self) -> &[LinkId] {
        &self.links[..self.nlinks as usize]
    }
}

/// A flow that left the network, as the sharing model needs to know it.
#[derive(Debug, Clone)]
pub struct RemovedFlow {
    /// The id the flow had (it may already be reused by a flow in `added`).
    pub id: FlowId,
    links: [LinkId; MAX_HOPS],
    nlinks: u8,
    pub rate: f64,
}

impl RemovedFlow {
    pub fn links(&self) -> &[LinkId] {
        &self.links[..self.nlinks as usize]
    }
}

/// Links and the flows crossing them. Flow ids are recycled after removal.
#[derive(Debug, Default)]
pub struct FlowNet {
    pub links: Vec<Link>,
    flows: Vec<NetFlow>,
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

    pub fn flow(&self, id: FlowId) -> &NetFlow {
        &self.flows[id as usize]
    }

    pub fn set_rate(&mut self, id: FlowId, rate: f64) {
        self.flows[id as usize].rate = rate;
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
        self.flows[id as usize].nlinks > 0
    }

    pub fn add_flow(&mut self, links: &[LinkId]) -> FlowId {
        assert!(!links.is_empty() && links.len() <= MAX_HOPS, "a flow crosses 1..=3 links");
        let id = self.free.pop().unwrap_or_else(|| {
            self.flows.push(NetFlow { links: [0; MAX_HOPS], pos: [0; MAX_HOPS], nlinks: 0, rate: 0.0 });
            (self.flows.len() - 1) as FlowId
        });
        let mut f = NetFlow { links: [0; MAX_HOPS], pos: [0; MAX_HOPS], nlinks: links.len() as u8, rate: f64::INFINITY };
        for (k, &l) in links.iter().enumerate() {
            f.links[k] = l;
            let list = &mut self.links[l as usize].flows;
            f.pos[k] = list.len() as u32;
            list.push(id);
        }
        self.flows[id as usize] = f;
        self.live += 1;
        id
    }

    pub fn remove_flow(&mut self, id: FlowId) -> RemovedFlow {
        let f = self.flows[id as usize].clone();
        for k in 0..f.nlinks as usize {
            let l = f.links[k] as usize;
            let p = f.pos[k] as usize;
            let list = &mut self.links[l].flows;
            list.swap_remove(p);
            if p < list.len() {
                // The flow moved into slot p: fix its back-pointer for this link.
                let moved = list[p] as usize;
                let mf = &mut self.flows[moved];
                for j in 0..mf.nlinks as usize {
                    if mf.links[j] as usize == l && mf.pos[j] as usize == list.len() {
                        mf.pos[j] = p as u32;
                        break;
                    }
                }
            }
        }
        self.flows[id as usize].nlinks = 0;
        self.free.push(id);
        self.live -= 1;
        RemovedFlow { id, links: f.links, nlinks: f.nlinks, rate: f.rate }
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

/// Most hosts under `contention_free`, which keeps a bandwidth for every ordered pair
/// of hosts: 2^12 hosts, 2^24 pairs, 128 MiB.
pub const MAX_PAIR_HOSTS: usize = 1 << 12;

/// Can the sharing model `name` run on `platform`? `contention_free` keeps a table of
/// every ordered pair of hosts, so it takes at most [`MAX_PAIR_HOSTS`].
pub fn check_model(platform: &Platform, name: &str) -> Result<()> {
    check_model_name(name)?;
    if name == "contention_free" && platform.hosts.len() > MAX_PAIR_HOSTS {
        return Err(Error::new(
            ErrorKind::Options,
            "model",
            format!(
                "contention_free keeps a bandwidth per pair of hosts: at most {MAX_PAIR_HOSTS} hosts, this platform has {}",
                platform.hosts.len()
            ),
        ));
    }
    Ok(())
}

/// The sharing model `name` for `platform`, with `params` (name, value) overriding its
/// defaults. The platform's own `network.parameters` apply when `name` is its
/// `network.model`, and `params` come after them.
pub fn make_model(name: &str, platform: &Platform, params: &[(String, f64)]) -> Result<Box<dyn SharingModel>> {
    // Known, and within the model's size limits, before anything is allocated.
    check_model(platform, name)?;
    let mut all: Vec<(String, f64)> = Vec::new();
    if name == platform.network.model {
        all.extend(platform.network.parameters.iter().map(|(k, v)| (k.clone(), *v)));
    }
    all.extend(params.iter().cloned());
    if let Some(m) = PenaltyModel::from_params(name, &all, "param.")? {
        return Ok(Box::new(Penalized::new(m, platform.hosts.len(), platform.network.backbone.is_some())));
    }
    Ok(match name {
        "contention_free" => Box::new(ContentionFree::new(platform)),
        _ => Box::new(MaxMin::default()),
    })
}
