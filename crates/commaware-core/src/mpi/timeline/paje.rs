//! The Paje trace SimGrid writes with `--cfg=tracing:yes --cfg=tracing/smpi:yes
//! --cfg=tracing/smpi/group:yes` (SimGrid 3.32, `src/instr/instr_paje_header.cpp` and
//! `src/smpi/internals/instr_smpi.cpp`), the format ViTE and pajeng read.
//!
//! * The header defines the 18 Paje events with SimGrid's numbers and field names
//!   (`PajeStartLink` also carries the message's `Size`, as SimGrid's
//!   `tracing/smpi/display-sizes` does).
//! * Containers: the root `0` is the platform; a `HOST` container per platform host, an `MPI`
//!   container `rank-N` per rank inside its host.
//! * States: `MPI_STATE` of the ranks, one push and pop per trace operation, named as SMPI
//!   names them (`PMPI_Send`, `PMPI_Bcast`, …, and `computing`, `sleeping`) with SMPI's
//!   colours.
//! * Links: `MPI_LINK` from the sender's rank at the time the send was posted to the
//!   receiver's rank at the time its receive completed, one per message (SMPI traces only
//!   user point-to-point messages; here a collective's messages are links too, with the
//!   collective's name as value, user messages have SMPI's value `PTP`).
//!
//! * Link load: as SimGrid's `tracing/platform:yes` with `tracing/uncategorized:yes`
//!   (`src/instr/instr_platform.cpp`), a `LINK` container per link, with the variables
//!   `bandwidth` (its capacity, B/s) and `bandwidth_used` (the sum of the rates of the flows
//!   on it, B/s). A link's container is created when it first carries a flow (SimGrid
//!   creates every link of the platform at 0), and `bandwidth_used` is set each time its
//!   load changes, so it integrates over time to the bytes the link carried (`--links`).
//!
//! Events are written as the replay reports them (in time order), so nothing of the run
//! is held but the output buffer and a name, bandwidth and flag per link.

use std::io::Write;
use std::path::Path;

use super::{create_file, write_error, ShownLinks, TimelineMessage, TimelineRun, TimelineSink};
use crate::error::Result;
use crate::mpi::ops::OP_NAMES;

/// Aliases of the types this writer defines.
const HOST_TYPE: &str = "1";
const RANK_TYPE: &str = "2";
const STATE_TYPE: &str = "3";
const LINK_TYPE: &str = "4";
const NET_LINK_TYPE: &str = "5";
const BANDWIDTH_TYPE: &str = "6";
const BANDWIDTH_USED_TYPE: &str = "7";

/// SMPI's colours of its states (`smpi_colors` in SimGrid 3.32's `instr_smpi.cpp`), by
/// the state's name in lower case without `pmpi_`, in that map's (sorted) order.
const SMPI_COLORS: [(&str, &str); 31] = [
    ("allgather", "1 0 0"),
    ("allgatherv", "1 0.52 0.52"),
    ("allreduce", "1 0 1"),
    ("alltoall", "0.52 0 1"),
    ("alltoallv", "0.78 0.52 1"),
    ("barrier", "0 0.39 0.78"),
    ("bcast", "0 0.78 0.39"),
    ("computing", "0 1 1"),
    ("exscan", "1 0.54 0.25"),
    ("finalize", "0 1 0"),
    ("gather", "1 1 0"),
    ("gatherv", "1 1 0.52"),
    ("init", "0 1 0"),
    ("irecv", "1 0.52 0.52"),
    ("isend", "0.52 0.52 1"),
    ("recv", "1 0 0"),
    ("reduce", "0 1 0"),
    ("reducescatter", "0.52 1 0.52"),
    ("scan", "1 0.58 0.23"),
    ("scatter", "1 0.74 0.54"),
    ("scatterv", "0.52 0 0.52"),
    ("send", "0 0 1"),
    ("sendrecv", "0 1 1"),
    ("sleeping", "0 0.5 0.5"),
    ("test", "0.52 0.52 0"),
    ("wait", "1 1 0"),
    ("waitall", "0.78 0.78 0"),
    ("waitany", "0.78 0.78 0.58"),
    ("put", "0.3 1 0"),
    ("get", "0 1 0.3"),
    ("accumulate", "1 0.3 0"),
];

/// The state SMPI shows for trace operation `op` (an [`OP_NAMES`] name).
pub fn state_name(op: &str) -> String {
    match op {
        "compute" => "computing".into(),
        "sleep" => "sleeping".into(),
        _ => {
            let mut name = String::from("PMPI_");
            let mut chars = op.chars();
            if let Some(c) = chars.next() {
                name.push(c.to_ascii_uppercase());
            }
            name.extend(chars);
            name
        }
    }
}

/// SMPI's colour of a state (`instr_find_color`): the exact entry of its lower-case name
/// without `pmpi_`, else the first entry (in name order) that is part of it, else grey.
pub fn state_color(state: &str) -> &'static str {
    let lower = state.to_ascii_lowercase();
    let key = lower.strip_prefix("pmpi_").unwrap_or(&lower);
    if let Some((_, c)) = SMPI_COLORS.iter().find(|(k, _)| *k == key) {
        return c;
    }
    let mut sorted: Vec<&(&str, &str)> = SMPI_COLORS.iter().collect();
    sorted.sort_by_key(|(k, _)| *k);
    sorted.into_iter().find(|(k, _)| key.contains(k)).map_or("0.5 0.5 0.5", |(_, c)| c)
}

/// A name as a Paje string field: quoted, without the characters that would end it.
fn quoted(name: &str) -> String {
    let clean: String = name.chars().map(|c| if c == '"' || c.is_control() { '_' } else { c }).collect();
    format!("\"{clean}\"")
}

/// Writes a Paje trace to `W` as the replay reports the run.
pub struct PajeWriter<W: Write> {
    out: W,
    shown_as: String,
    n_hosts: usize,
    n_ranks: usize,
    /// The platform's links, and which have a container yet.
    links: ShownLinks,
}

/// Open a Paje writer on the file `path` (named `shown_as` in errors).
pub fn open(path: &Path, shown_as: &str) -> Result<Box<dyn TimelineSink + Send>> {
    Ok(Box::new(PajeWriter::new(create_file(path, shown_as)?, shown_as)))
}

impl<W: Write> PajeWriter<W> {
    pub fn new(out: W, shown_as: &str) -> Self {
        PajeWriter { out, shown_as: shown_as.to_string(), n_hosts: 0, n_ranks: 0, links: ShownLinks::default() }
    }

    /// The writer's output (after [`TimelineSink::end`]).
    pub fn into_inner(self) -> W {
        self.out
    }

    fn put(&mut self, args: std::fmt::Arguments<'_>) -> Result<()> {
        self.out.write_fmt(args).map_err(|e| write_error(&self.shown_as, e))
    }

    fn header(&mut self) -> Result<()> {
        let defs: [(&str, u8, &[&str]); 18] = [
            ("PajeDefineContainerType", 0, &["Alias string", "Type string", "Name string"]),
            ("PajeDefineVariableType", 1, &["Alias string", "Type string", "Name string", "Color color"]),
            ("PajeDefineStateType", 2, &["Alias string", "Type string", "Name string"]),
            ("PajeDefineEventType", 3, &["Alias string", "Type string", "Name string"]),
            (
                "PajeDefineLinkType",
                4,
                &["Alias string", "Type string", "StartContainerType string", "EndContainerType string", "Name string"],
            ),
            ("PajeDefineEntityValue", 5, &["Alias string", "Type string", "Name string", "Color color"]),
            ("PajeCreateContainer", 6, &["Time date", "Alias string", "Type string", "Container string", "Name string"]),
            ("PajeDestroyContainer", 7, &["Time date", "Type string", "Name string"]),
            ("PajeSetVariable", 8, &["Time date", "Type string", "Container string", "Value double"]),
            ("PajeAddVariable", 9, &["Time date", "Type string", "Container string", "Value double"]),
            ("PajeSubVariable", 10, &["Time date", "Type string", "Container string", "Value double"]),
            ("PajeSetState", 11, &["Time date", "Type string", "Container string", "Value string"]),
            ("PajePushState", 12, &["Time date", "Type string", "Container string", "Value string"]),
            ("PajePopState", 13, &["Time date", "Type string", "Container string"]),
            ("PajeResetState", 14, &["Time date", "Type string", "Container string"]),
            (
                "PajeStartLink",
                15,
                &["Time date", "Type string", "Container string", "Value string", "StartContainer string", "Key string", "Size int"],
            ),
            ("PajeEndLink", 16, &["Time date", "Type string", "Container string", "Value string", "EndContainer string", "Key string"]),
            ("PajeNewEvent", 17, &["Time date", "Type string", "Container string", "Value string"]),
        ];
        self.put(format_args!("#This file was generated by commaware {}\n", env!("CARGO_PKG_VERSION")))?;
        for (name, id, fields) in defs {
            self.put(format_args!("%EventDef {name} {id}\n"))?;
            for f in fields {
                self.put(format_args!("%       {f}\n"))?;
            }
            self.put(format_args!("%EndEventDef\n"))?;
        }
        Ok(())
    }
}

impl<W: Write> TimelineSink for PajeWriter<W> {
    fn begin(&mut self, run: &TimelineRun<'_>) -> Result<()> {
        self.header()?;
        self.put(format_args!("0 {HOST_TYPE} 0 HOST\n0 {RANK_TYPE} {HOST_TYPE} MPI\n2 {STATE_TYPE} {RANK_TYPE} MPI_STATE\n"))?;
        self.put(format_args!("4 {LINK_TYPE} 0 {RANK_TYPE} {RANK_TYPE} MPI_LINK\n"))?;
        self.put(format_args!("0 {NET_LINK_TYPE} 0 LINK\n1 {BANDWIDTH_TYPE} {NET_LINK_TYPE} bandwidth \"1 1 1\"\n"))?;
        self.put(format_args!("1 {BANDWIDTH_USED_TYPE} {NET_LINK_TYPE} bandwidth_used \"0.5 0.5 0.5\"\n"))?;
        for (code, op) in OP_NAMES.iter().enumerate() {
            let state = state_name(op);
            let color = state_color(&state);
            self.put(format_args!("5 v{code} {STATE_TYPE} {state} \"{color}\"\n"))?;
        }
        for (h, name) in run.host_names.iter().enumerate() {
            self.put(format_args!("6 0 h{h} {HOST_TYPE} 0 {}\n", quoted(name)))?;
        }
        for (r, &h) in run.rank_hosts.iter().enumerate() {
            self.put(format_args!("6 0 r{r} {RANK_TYPE} h{h} \"rank-{r}\"\n"))?;
        }
        self.n_hosts = run.host_names.len();
        self.n_ranks = run.rank_hosts.len();
        Ok(())
    }

    fn enter(&mut self, time: f64, rank: u32, op: u8) -> Result<()> {
        self.put(format_args!("12 {time} {STATE_TYPE} r{rank} v{op}\n"))
    }

    fn leave(&mut self, time: f64, rank: u32) -> Result<()> {
        self.put(format_args!("13 {time} {STATE_TYPE} r{rank}\n"))
    }

    fn send(&mut self, m: &TimelineMessage) -> Result<()> {
        let value = if m.tag >= 0 { "PTP" } else { OP_NAMES[m.op as usize] };
        let size = m.bytes.round();
        self.put(format_args!("15 {} {LINK_TYPE} 0 {value} r{} {} {size}\n", m.posted, m.src_rank, m.id))
    }

    fn receive(&mut self, m: &TimelineMessage) -> Result<()> {
        let value = if m.tag >= 0 { "PTP" } else { OP_NAMES[m.op as usize] };
        self.put(format_args!("16 {} {LINK_TYPE} 0 {value} r{} {}\n", m.received, m.dst_rank, m.id))
    }

    fn wants_links(&self) -> bool {
        true
    }

    fn links(&mut self, links: &[(String, f64)]) -> Result<()> {
        self.links = ShownLinks::new(links);
        Ok(())
    }

    fn link_load(&mut self, time: f64, link: u32, load: f64) -> Result<()> {
        let Some(first) = self.links.load(link, load) else { return Ok(()) };
        let l = link as usize;
        if first {
            let (name, bandwidth) = (quoted(&self.links.links[l].0), self.links.links[l].1);
            self.put(format_args!("6 {time} l{l} {NET_LINK_TYPE} 0 {name}\n8 {time} {BANDWIDTH_TYPE} l{l} {bandwidth}\n"))?;
        }
        self.put(format_args!("8 {time} {BANDWIDTH_USED_TYPE} l{l} {load}\n"))
    }

    fn end(&mut self, makespan: f64) -> Result<()> {
        for k in 0..self.links.order.len() {
            let l = self.links.order[k];
            self.put(format_args!("7 {makespan} {NET_LINK_TYPE} l{l}\n"))?;
        }
        for r in 0..self.n_ranks {
            self.put(format_args!("7 {makespan} {RANK_TYPE} r{r}\n"))?;
        }
        for h in 0..self.n_hosts {
            self.put(format_args!("7 {makespan} {HOST_TYPE} h{h}\n"))?;
        }
        self.out.flush().map_err(|e| write_error(&self.shown_as, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_named_and_coloured_as_smpi_names_them() {
        assert_eq!(state_name("send"), "PMPI_Send");
        assert_eq!(state_name("reduce_scatter"), "PMPI_Reduce_scatter");
        assert_eq!(state_name("compute"), "computing");
        assert_eq!(state_color("PMPI_Bcast"), "0 0.78 0.39");
        assert_eq!(state_color("computing"), "0 1 1");
        // No exact entry: the first entry, in name order, that is part of the name.
        assert_eq!(state_color("PMPI_Reduce_scatter"), "0 1 0");
        assert_eq!(state_color("PMPI_Comm_split"), "0.5 0.5 0.5");
    }

    #[test]
    fn events_follow_the_header_in_the_order_they_came() {
        let hosts = vec!["node-0".to_string(), "node \"1\"".to_string()];
        let mut w = PajeWriter::new(Vec::new(), "mem.paje");
        w.begin(&TimelineRun { host_names: &hosts, rank_hosts: &[1, 0], comms: &[] }).unwrap();
        w.enter(0.0, 0, 1).unwrap();
        let mut m = TimelineMessage {
            id: 7, src_rank: 0, dst_rank: 1, bytes: 1000.0, tag: 3, op: 1, posted: 0.5,
            start: f64::NAN, arrived: f64::NAN, received: f64::NAN,
        };
        w.send(&m).unwrap();
        w.leave(0.5, 0).unwrap();
        m.received = 1.25;
        w.receive(&m).unwrap();
        w.end(2.0).unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('%') && !l.starts_with('#')).collect();
        assert!(body.contains(&"6 0 h1 1 0 \"node _1_\""));
        assert!(body.contains(&"6 0 r0 2 h1 \"rank-0\""));
        assert!(body.contains(&"5 v1 3 PMPI_Send \"0 0 1\""));
        assert!(body.contains(&"1 7 5 bandwidth_used \"0.5 0.5 0.5\""));
        let definition = |l: &&str| ["0", "1", "2", "4", "5", "6"].contains(&l.split(' ').next().unwrap_or(""));
        let events: Vec<&str> = body.iter().copied().filter(|l| !definition(l)).collect();
        assert_eq!(
            events,
            ["12 0 3 r0 v1", "15 0.5 4 0 PTP r0 7 1000", "13 0.5 3 r0", "16 1.25 4 0 PTP r1 7", "7 2 2 r0", "7 2 2 r1", "7 2 1 h0", "7 2 1 h1"]
        );
    }

    #[test]
    fn a_link_appears_when_it_first_carries_a_flow_and_its_load_is_set_at_each_change() {
        let hosts = vec!["n0".to_string(), "n1".to_string()];
        let mut w = PajeWriter::new(Vec::new(), "mem.paje");
        w.begin(&TimelineRun { host_names: &hosts, rank_hosts: &[0, 1], comms: &[] }).unwrap();
        w.links(&[("n0_UP".to_string(), 1e8), ("n1_DOWN".to_string(), 2e8)]).unwrap();
        // An idle link that stays idle gets no container; a load of 0 later is written.
        w.link_load(0.0, 0, 0.0).unwrap();
        w.link_load(0.5, 1, 5e7).unwrap();
        w.link_load(1.5, 1, 0.0).unwrap();
        w.end(2.0).unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('%') && !l.starts_with('#')).collect();
        let links: Vec<&str> = body.iter().copied().filter(|l| l.contains(" l0") || l.contains(" l1")).collect();
        assert_eq!(
            links,
            ["6 0.5 l1 5 0 \"n1_DOWN\"", "8 0.5 6 l1 200000000", "8 0.5 7 l1 50000000", "8 1.5 7 l1 0", "7 2 5 l1"]
        );
    }
}
