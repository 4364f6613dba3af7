//! Placement of ranks on hosts (paper 004 §VI-D): explicit, RRN (round-robin per
//! node), RRP (fill each node's cores first) or random with a seed.

use crate::error::{try_with_capacity, Error, ErrorKind, Result};
use crate::network::platform::Platform;
use crate::util::rng::SplitMix64;
use crate::mpi::trace::HostRef;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Explicit,
    Rrn,
    Rrp,
    Random,
}

impl Placement {
    pub const NAMES: &'static [&'static str] = &["explicit", "rrn", "rrp", "random"];

    pub fn from_name(name: &str) -> Result<Placement> {
        Ok(match name {
            "explicit" => Placement::Explicit,
            "rrn" => Placement::Rrn,
            "rrp" => Placement::Rrp,
            "random" => Placement::Random,
            _ => {
                return Err(Error::new(
                    ErrorKind::Options,
                    "placement",
                    format!("unknown placement `{name}` (known: {})", Self::NAMES.join(", ")),
                ))
            }
        })
    }
}

fn placement_error(field: &str, reason: String) -> Error {
    Error::new(ErrorKind::Placement, field, reason)
}

/// Host index of every rank.
pub fn place(platform: &Platform, n_ranks: usize, how: Placement, explicit: Option<&[HostRef]>, seed: u64) -> Result<Vec<usize>> {
    let hosts = &platform.hosts;
    let slots: usize = hosts.iter().map(|h| h.cores).sum();
    let host_of: Vec<usize> = match how {
        Placement::Explicit => match explicit {
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(r, h)| match h {
                    HostRef::Index(i) if *i < hosts.len() => Ok(*i),
                    HostRef::Index(i) => Err(placement_error(
                        &format!("placement[{r}]"),
                        format!("host index {i} out of range (the platform has {} hosts)", hosts.len()),
                    )),
                    HostRef::Name(n) => platform
                        .host_index(n)
                        .ok_or_else(|| placement_error(&format!("placement[{r}]"), format!("unknown host `{n}`"))),
                })
                .collect::<Result<_>>()?,
            None => {
                if n_ranks > hosts.len() {
                    return Err(placement_error(
                        "ranks",
                        format!(
                            "{n_ranks} ranks but only {} hosts: rank i runs on host i by default; \
                             give a placement (rrn, rrp, random) or a `placement` list",
                            hosts.len()
                        ),
                    ));
                }
                (0..n_ranks).collect()
            }
        },
        _ if n_ranks > slots => {
            return Err(placement_error("ranks", format!("{n_ranks} ranks need more cores than the {slots} the platform has")))
        }
        Placement::Rrn => {
            // Deal ranks to nodes in turn, skipping nodes whose cores are all taken.
            let mut used = vec![0usize; hosts.len()];
            let mut out = Vec::with_capacity(n_ranks);
            let mut h = 0;
            while out.len() < n_ranks {
                if used[h] < hosts[h].cores {
                    used[h] += 1;
                    out.push(h);
                }
                h = (h + 1) % hosts.len();
            }
            out
        }
        Placement::Rrp => hosts.iter().enumerate().flat_map(|(h, host)| std::iter::repeat(h).take(host.cores)).take(n_ranks).collect(),
        Placement::Random => {
            // Every core once (at most MAX_TOTAL_CORES of them).
            let mut all: Vec<usize> = try_with_capacity(ErrorKind::Placement, "placement", slots)?;
            all.extend(hosts.iter().enumerate().flat_map(|(h, host)| std::iter::repeat(h).take(host.cores)));
            SplitMix64::new(seed).shuffle(&mut all);
            all.truncate(n_ranks);
            all
        }
    };
    let mut used = vec![0usize; hosts.len()];
    for &h in &host_of {
        used[h] += 1;
        if used[h] > hosts[h].cores {
            return Err(placement_error(
                "placement",
                format!("host `{}` gets more ranks than its {} core(s)", hosts[h].name, hosts[h].cores),
            ));
        }
    }
    Ok(host_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plat() -> Platform {
        crate::mpi::platform_file::load_json(r#"{"cluster": {"count": 3, "speed": 1, "cores": 2}, "network": {"bandwidth": 1}}"#).unwrap()
    }

    #[test]
    fn rrn_rrp_random() {
        let p = plat();
        assert_eq!(place(&p, 5, Placement::Rrn, None, 0).unwrap(), vec![0, 1, 2, 0, 1]);
        assert_eq!(place(&p, 5, Placement::Rrp, None, 0).unwrap(), vec![0, 0, 1, 1, 2]);
        let a = place(&p, 6, Placement::Random, None, 42).unwrap();
        assert_eq!(a, place(&p, 6, Placement::Random, None, 42).unwrap());
        let mut s = a.clone();
        s.sort();
        assert_eq!(s, vec![0, 0, 1, 1, 2, 2]);
        assert!(place(&p, 7, Placement::Rrp, None, 0).unwrap_err().reason.contains("more cores"));
        assert!(place(&p, 4, Placement::Explicit, None, 0).is_err());
    }
}
