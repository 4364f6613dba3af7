//! The interference of communication on computation that a platform file gives each host
//! (paper 000): the rates as written, and as validated with peer names resolved to host
//! indices. The engine turns them into compute rates (`engine::interference`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{check_amount, Error, ErrorKind, Result};

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
