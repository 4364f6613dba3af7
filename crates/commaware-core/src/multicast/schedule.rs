//! Schedules as data (§3.1): the selection sequence and each node's task list.

use serde::{Deserialize, Serialize};

/// One scheduling step: `sender` sends the message of `source` to `receiver`;
/// the receive completes at `complete` (seconds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    pub sender: usize,
    pub receiver: usize,
    pub source: usize,
    pub complete: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    Send,
    Recv,
}

/// A communication task (op, i, peer, source) of §3.1 with its times (seconds).
/// `start` is when the node issues it (the end of its previous task); a send
/// ends S later, a receive ends R after the later of `start` and the arrival.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub kind: TaskKind,
    pub peer: usize,
    pub source: usize,
    pub start: f64,
    pub end: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub algorithm: String,
    /// Selections in the order the scheduler made them.
    pub sequence: Vec<Selection>,
    /// `tasks[i]` is node i's task list in execution order.
    pub tasks: Vec<Vec<Task>>,
    /// Latest receive completion, seconds (0 when nothing is sent).
    pub completion_time: f64,
}

impl Schedule {
    /// The sequence as (sender, receiver, source) triples, as the paper prints it (§6).
    pub fn triples(&self) -> Vec<(usize, usize, usize)> {
        self.sequence
            .iter()
            .map(|s| (s.sender, s.receiver, s.source))
            .collect()
    }
}
