//! Placement of ranks on hosts (paper 004 §VI-D): explicit, RRN (round-robin per
//! node), RRP (fill each node's cores first) or random with a seed.

use crate::error::{try_with_capacity, Error, ErrorKind, Result};
use crate::network::platform::{Platform, MAX_CORES_PER_HOST};
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

/// The most slots one hostfile line may give (a host has at most this many cores).
pub const MAX_HOSTFILE_SLOTS: usize = MAX_CORES_PER_HOST;

/// One line of a hostfile: a host and how many ranks it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostfileLine {
    /// Line number in the file, from 1.
    pub line: usize,
    pub host: String,
    pub slots: usize,
}

/// An SMPI hostfile (`smpirun -hostfile`): one host name a line, optionally `name:slots`
/// (1 slot by default); rank i runs on the i-th slot in file order. SMPI 3.32's smpirun
/// expands `name:n` into n lines (splitting at the last colon) and skips empty lines; we also
/// skip lines of blanks and `#` comments (to the end of the line), and trim blanks around
/// the name and the count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hostfile {
    /// The file name errors show.
    pub source: String,
    pub lines: Vec<HostfileLine>,
}

impl Hostfile {
    pub fn parse(text: &str, source: &str) -> Result<Hostfile> {
        let err = |line: usize, reason: String| placement_error(&format!("line {line}"), reason).in_source(source);
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let (host, slots) = match content.rsplit_once(':') {
                None => (content, 1),
                Some((host, count)) => {
                    let count = count.trim();
                    let slots = match count.parse::<u64>() {
                        Ok(0) => return Err(err(line, format!("host `{}`: 0 slots (at least 1)", host.trim()))),
                        Ok(n) if n > MAX_HOSTFILE_SLOTS as u64 => {
                            return Err(err(line, format!("host `{}`: {n} slots, at most {MAX_HOSTFILE_SLOTS} (2^16) a line", host.trim())))
                        }
                        Ok(n) => n as usize,
                        Err(_) if count.chars().all(|c| c.is_ascii_digit()) && !count.is_empty() => {
                            return Err(err(line, format!("host `{}`: {count} slots, at most {MAX_HOSTFILE_SLOTS} (2^16) a line", host.trim())))
                        }
                        Err(_) => {
                            return Err(err(line, format!("host `{}`: slots `{count}` is not a whole number from 1 to {MAX_HOSTFILE_SLOTS}", host.trim())))
                        }
                    };
                    (host.trim(), slots)
                }
            };
            if host.is_empty() {
                return Err(err(line, "no host name before `:`".into()));
            }
            lines.push(HostfileLine { line, host: host.to_string(), slots });
        }
        Ok(Hostfile { source: source.to_string(), lines })
    }

    /// The host of each of `n_ranks` ranks, as an explicit placement: the i-th slot in file
    /// order. Every line must name a host of `platform`, and the file must have a slot for
    /// every rank and no more ranks on a host than its cores.
    pub fn placement(&self, platform: &Platform, n_ranks: usize) -> Result<Vec<HostRef>> {
        let err = |field: String, reason: String| placement_error(&field, reason).in_source(&self.source);
        let index: std::collections::HashMap<&str, usize> =
            platform.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), i)).collect();
        let mut total: usize = 0;
        for l in &self.lines {
            if !index.contains_key(l.host.as_str()) {
                return Err(err(format!("line {}", l.line), format!("unknown host `{}` (the platform has {} hosts)", l.host, platform.hosts.len())));
            }
            total = total.saturating_add(l.slots);
        }
        if total < n_ranks {
            return Err(err(String::new(), format!("{total} slot(s) for {n_ranks} ranks: the hostfile needs a slot for every rank")));
        }
        let mut used = vec![0usize; platform.hosts.len()];
        let mut out = Vec::with_capacity(n_ranks);
        'fill: for l in &self.lines {
            let h = index[l.host.as_str()];
            for _ in 0..l.slots {
                if out.len() == n_ranks {
                    break 'fill;
                }
                used[h] += 1;
                if used[h] > platform.hosts[h].cores {
                    return Err(err(
                        format!("line {}", l.line),
                        format!("host `{}` gets more ranks than its {} core(s)", l.host, platform.hosts[h].cores),
                    ));
                }
                out.push(HostRef::Index(h));
            }
        }
        Ok(out)
    }
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

    #[test]
    fn hostfile_slots_in_file_order() {
        let p = plat();
        let hf = Hostfile::parse("# nodes\n\nn2:2   # two\n  n0 \nn1:1\n", "h.txt").unwrap();
        let list = hf.placement(&p, 4).unwrap();
        let idx: Vec<usize> = list.iter().map(|h| match h { HostRef::Index(i) => *i, HostRef::Name(_) => usize::MAX }).collect();
        assert_eq!(idx, vec![2, 2, 0, 1]);
        let e = hf.placement(&p, 5).unwrap_err();
        assert_eq!((e.source.as_str(), e.reason.as_str()), ("h.txt", "4 slot(s) for 5 ranks: the hostfile needs a slot for every rank"));
        let e = Hostfile::parse("n0\nn9\n", "h").unwrap().placement(&p, 1).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("line 2", "unknown host `n9` (the platform has 3 hosts)"));
        let e = Hostfile::parse("n0:3\n", "h").unwrap().placement(&p, 3).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("line 1", "host `n0` gets more ranks than its 2 core(s)"));
        for (text, why) in [("a:0", "0 slots"), ("a:-1", "`-1` is not a whole number"), ("a:x", "`x` is not"), ("a:", "`` is not"),
                            ("a:99999999999999999999999", "at most 65536"), ("a:65537", "65537 slots, at most"), (":2", "no host name")] {
            let e = Hostfile::parse(&format!("ok\n{text}\n"), "h").unwrap_err();
            assert_eq!(e.field, "line 2", "{text}");
            assert!(e.reason.contains(why), "{text}: {}", e.reason);
        }
    }
}
