//! Interference of communication on computation (paper 000).
//!
//! While a host sends or receives, its computation slows down linearly with the transfer
//! rates: its normalised compute rate is `1 − Σ IR_r(i)·TR(i) − Σ IR_s(j)·TR(j)` over the
//! transfers it receives (from peers i) and sends (to peers j), rates in MB/s with
//! MB = 2^20 bytes (§2.3–2.4). While it both sends and receives, an optional planar form
//! `c − a·TR_in − b·TR_out` replaces it (the synergy of §2.5). The engine re-evaluates a
//! host's rate, speed × max(0, normalised rate), whenever its traffic changes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{ComputeRate, HostTraffic};
use crate::error::{check_amount, Error, ErrorKind, Result};

/// Bytes per MB: the interference rates are per MB/s (paper 000's unit).
pub const MB: f64 = 1_048_576.0;

/// Interference rates of one host, as written in platform files.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterferenceSpec {
    /// IR_r: fraction of the compute rate lost per MB/s received (MB = 2^20 bytes; §2.3).
    #[serde(default)]
    pub recv: f64,
    /// IR_s: fraction of the compute rate lost per MB/s sent (MB = 2^20 bytes; §2.4).
    #[serde(default)]
    pub send: f64,
    /// IR_r per peer host name, for transfers from that host (default: `recv`).
    #[serde(default)]
    pub recv_from: BTreeMap<String, f64>,
    /// IR_s per peer host name, for transfers to that host (default: `send`).
    #[serde(default)]
    pub send_to: BTreeMap<String, f64>,
    /// The planar form used only while the host both sends and receives (§2.5).
    #[serde(default)]
    pub synergy: Option<SynergySpec>,
}

/// `constant − recv·TR_in − send·TR_out` (total rates in MB/s), paper 000 §2.5.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SynergySpec {
    pub constant: f64,
    pub recv: f64,
    pub send: f64,
}

/// Resolved interference of one host: peers are host indices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interference {
    pub recv: f64,
    pub send: f64,
    /// (peer host, IR_r), sorted by peer.
    pub recv_from: Vec<(u32, f64)>,
    /// (peer host, IR_s), sorted by peer.
    pub send_to: Vec<(u32, f64)>,
    pub synergy: Option<SynergySpec>,
}

impl Interference {
    /// Check `spec` (finite, ≥ 0; a synergy constant in (0, 1]) and resolve peer names
    /// with `index`; errors name `field` + the sub-field.
    pub fn resolve(spec: &InterferenceSpec, field: &str, index: impl Fn(&str) -> Option<usize>) -> Result<Interference> {
        let check = |name: &str, v: f64| check_amount(ErrorKind::Platform, &format!("{field}.{name}"), v, false);
        check("recv", spec.recv)?;
        check("send", spec.send)?;
        let peers = |map: &BTreeMap<String, f64>, what: &str| -> Result<Vec<(u32, f64)>> {
            let mut out = Vec::with_capacity(map.len());
            for (name, &v) in map {
                check(&format!("{what}.{name}"), v)?;
                let Some(i) = index(name) else {
                    return Err(Error::platform(format!("{field}.{what}.{name}"), format!("unknown host `{name}`")));
                };
                out.push((i as u32, v));
            }
            out.sort_unstable_by_key(|p| p.0);
            Ok(out)
        };
        if let Some(s) = &spec.synergy {
            check("synergy.recv", s.recv)?;
            check("synergy.send", s.send)?;
            check_amount(ErrorKind::Platform, &format!("{field}.synergy.constant"), s.constant, true)?;
            if s.constant > 1.0 {
                return Err(Error::platform(format!("{field}.synergy.constant"), format!("must be at most 1, got {}", s.constant)));
            }
        }
        Ok(Interference {
            recv: spec.recv,
            send: spec.send,
            recv_from: peers(&spec.recv_from, "recv_from")?,
            send_to: peers(&spec.send_to, "send_to")?,
            synergy: spec.synergy,
        })
    }

    fn rate_of(peers: &[(u32, f64)], peer: u32, default: f64) -> f64 {
        peers.binary_search_by_key(&peer, |p| p.0).map_or(default, |k| peers[k].1)
    }

    /// The normalised compute rate (not clamped) under `traffic`.
    pub fn normalised_rate(&self, traffic: &HostTraffic) -> f64 {
        let total = |v: &[(u32, f64)]| v.iter().map(|p| p.1).sum::<f64>() / MB;
        if let Some(s) = self.synergy {
            if !traffic.inn.is_empty() && !traffic.out.is_empty() {
                return s.constant - s.recv * total(traffic.inn) - s.send * total(traffic.out);
            }
        }
        let recv: f64 = traffic.inn.iter().map(|&(p, r)| Self::rate_of(&self.recv_from, p, self.recv) * r).sum();
        let send: f64 = traffic.out.iter().map(|&(p, r)| Self::rate_of(&self.send_to, p, self.send) * r).sum();
        1.0 - (recv + send) / MB
    }
}

/// The platform's interference as the engine's compute-rate hook.
pub struct InterferenceRates {
    hosts: Vec<Option<Interference>>,
}

impl InterferenceRates {
    pub fn new(hosts: Vec<Option<Interference>>) -> Self {
        InterferenceRates { hosts }
    }
}

impl ComputeRate for InterferenceRates {
    fn is_identity(&self) -> bool {
        self.hosts.iter().all(Option::is_none)
    }

    fn factor(&self, host: usize, traffic: HostTraffic) -> f64 {
        self.hosts[host].as_ref().map_or(1.0, |i| i.normalised_rate(&traffic).max(0.0))
    }
}

/// The compute-rate hook of `platform`: its hosts' interference (identity without any).
pub fn compute_rate(platform: &crate::Platform) -> Box<dyn ComputeRate> {
    Box::new(InterferenceRates::new(platform.hosts.iter().map(|h| h.interference.clone()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traffic<'a>(inn: &'a [(u32, f64)], out: &'a [(u32, f64)]) -> HostTraffic<'a> {
        HostTraffic { inn, out }
    }

    #[test]
    fn linear_per_peer_and_synergy() {
        let i = Interference {
            recv: 0.05,
            send: 0.03,
            recv_from: vec![(3, 0.07)],
            send_to: vec![],
            synergy: Some(SynergySpec { constant: 0.9542, recv: 0.0427, send: 0.0265 }),
        };
        // §2.3: receiving at 10 MB/s with IR_r 0.052 leaves 48 % (here 0.05: 50 %).
        assert!((i.normalised_rate(&traffic(&[(1, 10.0 * MB)], &[])) - 0.5).abs() < 1e-12);
        // Per peer: from host 3 at 2 MB/s plus host 1 at 1 MB/s.
        let r = i.normalised_rate(&traffic(&[(3, 2.0 * MB), (1, MB)], &[]));
        assert!((r - (1.0 - 0.14 - 0.05)).abs() < 1e-12);
        // Sending alone: linear.
        assert!((i.normalised_rate(&traffic(&[], &[(2, 4.0 * MB)])) - (1.0 - 0.12)).abs() < 1e-12);
        // Both: the planar form of §2.5.
        let r = i.normalised_rate(&traffic(&[(1, 3.0 * MB)], &[(2, 4.0 * MB)]));
        assert!((r - (0.9542 - 0.0427 * 3.0 - 0.0265 * 4.0)).abs() < 1e-12);
    }

    #[test]
    fn resolve_checks() {
        let index = |n: &str| (n == "a").then_some(0);
        let bad = |spec: InterferenceSpec| Interference::resolve(&spec, "hosts[0].interference", index).unwrap_err();
        assert_eq!(bad(InterferenceSpec { recv: -1.0, ..Default::default() }).field, "hosts[0].interference.recv");
        let e = bad(InterferenceSpec { send_to: [("zz".to_string(), 0.1)].into(), ..Default::default() });
        assert_eq!(e.field, "hosts[0].interference.send_to.zz");
        assert!(e.reason.contains("unknown host"));
        let e = bad(InterferenceSpec { synergy: Some(SynergySpec { constant: 1.5, recv: 0.0, send: 0.0 }), ..Default::default() });
        assert_eq!(e.field, "hosts[0].interference.synergy.constant");
        assert!(bad(InterferenceSpec { recv: f64::NAN, ..Default::default() }).reason.contains("non-finite"));
    }
}
