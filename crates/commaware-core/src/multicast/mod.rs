//! Multiple multicast scheduling on heterogeneous networks of workstations,
//! after Wu, Yeh and Liu, "Efficient Multiple Multicast on Heterogeneous
//! Network of Workstations" (paper 003), with the corrections of the issue
//! notes (tie rules, sender order, preemption rules, lower bound).
//!
//! - [`model`]: the cost model of §2 and the instance of §3.1 (JSON in/out).
//! - [`schedule()`]: the eleven heuristics of §4 and §5.
//! - [`lower_bound()`]: the bound of §3.2 (corrected).
//! - [`validate_schedule()`]: an independent checker.
//! - [`generate()`]: random instances with the distributions of §7.

mod algorithms;
mod bynode;
mod keys;
pub mod execute;
pub mod generate;
mod lower_bound;
pub mod model;
pub mod report;
pub mod schedule;
mod state;
mod tasklist;
mod validate;

#[cfg(test)]
mod tests;

pub use execute::{execute, execute_observed};
pub use generate::{
    generate, GenParams, Network, Pattern, Sizes, FAST_SECONDS_PER_BYTE, SLOW_SECONDS_PER_BYTE,
};
pub use lower_bound::lower_bound;
pub use model::{Instance, Multicast, MulticastError, NodeParams, Transmission, MAX_BYTES, MAX_NODES};
pub use report::{algorithm_from_name, generate_checked, instance_from_json, instance_from_text, Report};
pub use schedule::{Schedule, Selection, Task, TaskKind};
pub use validate::validate_schedule;

use crate::util::rng::SplitMix64;
use algorithms::Picker;
use serde::{Deserialize, Serialize};
use state::State;

/// The heuristics: FEF, ECF, WR, EAF, RR, RRS (§4) and the preemptive
/// ECFP, WRP, EAFP, RRP, RRSP (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    Fef,
    Ecf,
    Wr,
    Eaf,
    Rr,
    Rrs,
    Ecfp,
    Wrp,
    Eafp,
    Rrp,
    Rrsp,
}

impl Algorithm {
    pub const ALL: [Algorithm; 11] = [
        Algorithm::Fef,
        Algorithm::Ecf,
        Algorithm::Wr,
        Algorithm::Eaf,
        Algorithm::Rr,
        Algorithm::Rrs,
        Algorithm::Ecfp,
        Algorithm::Wrp,
        Algorithm::Eafp,
        Algorithm::Rrp,
        Algorithm::Rrsp,
    ];

    pub fn name(self) -> &'static str {
        use Algorithm::*;
        match self {
            Fef => "fef",
            Ecf => "ecf",
            Wr => "wr",
            Eaf => "eaf",
            Rr => "rr",
            Rrs => "rrs",
            Ecfp => "ecfp",
            Wrp => "wrp",
            Eafp => "eafp",
            Rrp => "rrp",
            Rrsp => "rrsp",
        }
    }

    /// Case-insensitive inverse of [`Algorithm::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
    }

    /// The §5 versions that insert sends into a receiver's idle wait.
    pub fn is_preemptive(self) -> bool {
        use Algorithm::*;
        matches!(self, Ecfp | Wrp | Eafp | Rrp | Rrsp)
    }

    /// WR, EAF, RR, RRS and their preemptive versions pick the receiver first.
    pub fn is_receiver_first(self) -> bool {
        !matches!(self, Algorithm::Fef | Algorithm::Ecf | Algorithm::Ecfp)
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Schedules an instance, after checking it (see [`Instance::validate`]).
/// `seed` drives RRS and RRSP only; the same seed gives the same schedule.
pub fn schedule(inst: &Instance, alg: Algorithm, seed: u64) -> Result<Schedule, MulticastError> {
    inst.validate()?;
    Ok(run(inst, alg, seed, None, false))
}

/// As [`schedule()`], but a receiver-first algorithm takes its receivers in
/// the given order (the paper's printed RRS runs need 1,1,0,3,2,3,2).
/// Panics if a receiver in the order waits for no message (a test helper).
pub fn schedule_forced(
    inst: &Instance,
    alg: Algorithm,
    receivers: &[usize],
) -> Result<Schedule, MulticastError> {
    inst.validate()?;
    if !alg.is_receiver_first() {
        return Err(MulticastError {
            field: "algorithm".into(),
            reason: format!("{alg} does not pick receivers first"),
        });
    }
    Ok(run(inst, alg, 0, Some(receivers.to_vec()), false))
}

pub(crate) fn run(
    inst: &Instance,
    alg: Algorithm,
    seed: u64,
    forced: Option<Vec<usize>>,
    naive: bool,
) -> Schedule {
    debug_assert!(inst.validate().is_ok(), "callers validate the instance");
    use Algorithm::*;
    let mut st = State::new(inst, alg.is_preemptive());
    st.naive = naive;
    match alg {
        Fef => algorithms::fef(&mut st),
        Ecf | Ecfp => algorithms::ecf(&mut st),
        _ => {
            let picker = match (forced, alg) {
                (Some(order), _) => Picker::Forced(order),
                (None, Wr | Wrp) => Picker::Wr,
                (None, Eaf | Eafp) => Picker::Eaf,
                (None, Rr | Rrp) => Picker::Rr,
                (None, _) => Picker::Rrs(SplitMix64::new(seed)),
            };
            algorithms::receiver_first(&mut st, picker)
        }
    }
    st.into_schedule(alg.name())
}
