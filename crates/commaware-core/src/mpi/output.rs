//! The `--json` result document, written while the replay runs: messages as they
//! arrive (one per line), then the makespan, totals and ranks once it is over. Nothing
//! of the document is held in memory but the line being written.

use std::io::Write;

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};
use crate::mpi::replay::{MessageRecord, Observer, SimResult};

/// A message as the JSON document shows it (host names, op name, `null` tag for collectives).
#[derive(Serialize)]
struct MessageJson<'a> {
    src_rank: u32,
    dst_rank: u32,
    src_host: &'a str,
    dst_host: &'a str,
    bytes: f64,
    tag: Option<i64>,
    op: &'static str,
    start: f64,
    end: f64,
    /// Under a penalty model only (paper 004 §VI-A); null for an intra-node message.
    #[serde(skip_serializing_if = "Option::is_none")]
    penalty: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conflicts: Option<Vec<&'static str>>,
}

/// A link among the most utilised (`"links"`, when link statistics were kept).
#[derive(Serialize)]
struct LinkJson<'a> {
    name: &'a str,
    bandwidth_bytes_per_s: f64,
    bytes: f64,
    busy_time_s: f64,
    mean_utilisation: f64,
    peak_utilisation: f64,
    peak_flows: u32,
}

/// Links the document lists (the most utilised first).
pub const JSON_LINKS: usize = 10;

/// Writes the result document to `W` as an [`Observer`] of the replay.
pub struct JsonStream<W: Write> {
    out: W,
    host_names: Vec<String>,
    written: u64,
    /// Where the document goes, for error messages.
    target: String,
    /// Seconds the trace took to load, when the document is to carry wall-clock timing.
    load_seconds: Option<f64>,
}

/// The wall-clock figures of a run (`"timing"`, only when asked: they differ from run to
/// run, and the rest of the document does not).
#[derive(Serialize)]
struct TimingJson {
    load_s: f64,
    replay_s: f64,
    load_actions_per_s: f64,
    replay_actions_per_s: f64,
    events_per_s: f64,
}

/// `count` per `seconds`, 0 when no time was measured.
fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

fn write_error(target: &str, e: std::io::Error) -> Error {
    Error { kind: ErrorKind::Output, source: target.to_string(), field: String::new(), reason: format!("cannot write: {e}") }
}

impl<W: Write> JsonStream<W> {
    /// Start the document: `host_names` are the platform's, `target` names `out` in errors.
    pub fn new(mut out: W, model: &str, host_names: Vec<String>, target: &str) -> Result<Self> {
        let head = format!("{{\n  \"model\": {},\n  \"messages\": [", serde_json::to_string(model).expect("a string serialises"));
        out.write_all(head.as_bytes()).map_err(|e| write_error(target, e))?;
        Ok(JsonStream { out, host_names, written: 0, target: target.to_string(), load_seconds: None })
    }

    /// Also write `"timing"`: the trace's load time (given) and the replay's (measured),
    /// each as actions per second, and engine events per second.
    pub fn with_timing(mut self, load_seconds: f64) -> Self {
        self.load_seconds = Some(load_seconds);
        self
    }

    fn line(&mut self, m: &MessageRecord) -> std::io::Result<()> {
        let sep: &[u8] = if self.written == 0 { b"\n    " } else { b",\n    " };
        self.out.write_all(sep)?;
        let doc = MessageJson {
            src_rank: m.src_rank,
            dst_rank: m.dst_rank,
            src_host: &self.host_names[m.src_host as usize],
            dst_host: &self.host_names[m.dst_host as usize],
            bytes: m.bytes,
            tag: (m.tag >= 0).then_some(m.tag),
            op: m.op_name(),
            start: m.start,
            end: m.end,
            penalty: m.conflicts.map(|_| m.penalty.is_finite().then_some(m.penalty)),
            conflicts: m.conflicts.map(|c| crate::network::sharing::penalty::class_names(c).collect()),
        };
        serde_json::to_writer(&mut self.out, &doc).map_err(std::io::Error::from)?;
        self.written += 1;
        Ok(())
    }

    /// End the document with the makespan, the message totals and the ranks.
    pub fn finish(mut self, result: &SimResult) -> Result<W> {
        let target = self.target.clone();
        let tail = (|| -> std::io::Result<()> {
            self.out.write_all(if self.written == 0 { b"],\n" } else { b"\n  ],\n" })?;
            let makespan = serde_json::to_string(&result.makespan).map_err(std::io::Error::from)?;
            let stats = serde_json::to_string(&result.message_stats).map_err(std::io::Error::from)?;
            let warnings = serde_json::to_string(&result.warnings).map_err(std::io::Error::from)?;
            write!(
                self.out,
                "  \"makespan\": {makespan},\n  \"message_stats\": {stats},\n  \"warnings\": {warnings},\n  \"derived_datatype_ops\": {},\n  \"actions\": {},\n  \"events\": {},\n",
                result.derived_datatype_ops, result.actions, result.events
            )?;
            if let Some(counts) = &result.penalty_counts {
                self.out.write_all(b"  \"penalty_counts\": ")?;
                serde_json::to_writer(&mut self.out, counts).map_err(std::io::Error::from)?;
                self.out.write_all(b",\n")?;
            }
            if let Some(load_s) = self.load_seconds {
                let timing = TimingJson {
                    load_s,
                    replay_s: result.replay_seconds,
                    load_actions_per_s: per_second(result.actions, load_s),
                    replay_actions_per_s: per_second(result.actions, result.replay_seconds),
                    events_per_s: per_second(result.events, result.replay_seconds),
                };
                self.out.write_all(b"  \"timing\": ")?;
                serde_json::to_writer(&mut self.out, &timing).map_err(std::io::Error::from)?;
                self.out.write_all(b",\n")?;
            }
            self.out.write_all(b"  \"ranks\": [")?;
            for (k, r) in result.ranks.iter().enumerate() {
                self.out.write_all(if k == 0 { b"\n    " } else { b",\n    " })?;
                serde_json::to_writer(&mut self.out, r).map_err(std::io::Error::from)?;
            }
            self.out.write_all(b"\n  ]")?;
            if let Some(report) = &result.links {
                self.out.write_all(b",\n  \"links\": [")?;
                for (k, l) in report.most_utilised(JSON_LINKS).into_iter().enumerate() {
                    self.out.write_all(if k == 0 { b"\n    " } else { b",\n    " })?;
                    let doc = LinkJson {
                        name: &l.name,
                        bandwidth_bytes_per_s: l.bandwidth,
                        bytes: l.bytes,
                        busy_time_s: l.busy_time,
                        mean_utilisation: l.mean_utilisation,
                        peak_utilisation: l.peak_utilisation,
                        peak_flows: l.peak_flows,
                    };
                    serde_json::to_writer(&mut self.out, &doc).map_err(std::io::Error::from)?;
                }
                self.out.write_all(b"\n  ]")?;
            }
            self.out.write_all(b"\n}\n")?;
            self.out.flush()
        })();
        tail.map_err(|e| write_error(&target, e))?;
        Ok(self.out)
    }
}

impl<W: Write> Observer for JsonStream<W> {
    fn wants_messages(&self) -> bool {
        true
    }
    fn message(&mut self, m: &MessageRecord) -> Result<()> {
        self.line(m).map_err(|e| write_error(&self.target, e))
    }
}

/// The document of a result whose messages were kept in memory (tests, small runs,
/// the API's `Result.to_json`); with `load_seconds` (the trace's), also `"timing"`.
pub fn to_json_string(result: &SimResult, messages: &[MessageRecord], load_seconds: Option<f64>) -> String {
    let mut s = JsonStream::new(Vec::new(), &result.model, result.host_names.clone(), "<memory>").expect("memory writes");
    if let Some(load) = load_seconds {
        s = s.with_timing(load);
    }
    for m in messages {
        s.message(m).expect("memory writes");
    }
    String::from_utf8(s.finish(result).expect("memory writes")).expect("JSON is UTF-8")
}
