//! An independent schedule checker. It uses only the instance and the
//! schedule's task lists: it replays every node's list in order under the
//! model of §2 (a send ends S after it starts and does not wait; a receive
//! starts when the node is free and ends R after the later of that and the
//! message's arrival, send end + X l), then compares with the recorded times.

use std::collections::HashMap;

use super::model::Instance;
use super::schedule::{Schedule, TaskKind};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

pub fn validate_schedule(inst: &Instance, sched: &Schedule) -> Result<(), String> {
    inst.validate()
        .map_err(|e| format!("invalid instance: {e}"))?;
    let n = inst.nodes.len();
    if sched.tasks.len() != n {
        return Err(format!("{} task lists for {n} nodes", sched.tasks.len()));
    }
    let mut mc_of = vec![usize::MAX; n]; // source node -> multicast index
    for (k, mc) in inst.multicasts.iter().enumerate() {
        mc_of[mc.source] = k;
    }
    let mut dest = vec![false; inst.multicasts.len() * n];
    for (k, mc) in inst.multicasts.iter().enumerate() {
        for &d in &mc.destinations {
            dest[k * n + d] = true;
        }
    }
    let is_dest = |k: usize, j: usize| dest[k * n + j];
    let own = |k: usize, j: usize| inst.multicasts[k].source == j || is_dest(k, j);

    // Structure: who receives what from whom, and where in each list.
    let mut recv_at: HashMap<(usize, usize), (usize, usize)> = HashMap::new(); // (node, k) -> (sender, position)
    let mut send_at: HashMap<(usize, usize), (usize, usize)> = HashMap::new(); // (receiver, k) -> (sender, position)
    for (i, list) in sched.tasks.iter().enumerate() {
        for (p, t) in list.iter().enumerate() {
            let at = format!("tasks[{i}][{p}]");
            if t.source >= n || mc_of[t.source] == usize::MAX {
                return Err(format!(
                    "{at}: node {} is not the source of a multicast",
                    t.source
                ));
            }
            let k = mc_of[t.source];
            if t.peer >= n || t.peer == i {
                return Err(format!("{at}: bad peer {}", t.peer));
            }
            match t.kind {
                TaskKind::Recv => {
                    if !is_dest(k, i) {
                        return Err(format!(
                            "{at}: node {i} is not a destination of source {}",
                            t.source
                        ));
                    }
                    if !own(k, t.peer) {
                        return Err(format!(
                            "{at}: node {} relays source {}'s message but is none of its nodes",
                            t.peer, t.source
                        ));
                    }
                    if recv_at.insert((i, k), (t.peer, p)).is_some() {
                        return Err(format!(
                            "{at}: node {i} receives source {}'s message twice",
                            t.source
                        ));
                    }
                }
                TaskKind::Send => {
                    if !own(k, i) {
                        return Err(format!(
                            "{at}: node {i} relays source {}'s message but is none of its nodes",
                            t.source
                        ));
                    }
                    if !is_dest(k, t.peer) {
                        return Err(format!(
                            "{at}: node {} is not a destination of source {}",
                            t.peer, t.source
                        ));
                    }
                    if send_at.insert((t.peer, k), (i, p)).is_some() {
                        return Err(format!(
                            "{at}: source {}'s message is sent to node {} twice",
                            t.source, t.peer
                        ));
                    }
                }
            }
        }
    }
    for (k, mc) in inst.multicasts.iter().enumerate() {
        for &d in &mc.destinations {
            let Some(&(from, _)) = recv_at.get(&(d, k)) else {
                return Err(format!(
                    "node {d} never receives source {}'s message",
                    mc.source
                ));
            };
            match send_at.get(&(d, k)) {
                Some(&(s, _)) if s == from => {}
                _ => {
                    return Err(format!(
                        "node {d} receives source {}'s message from {from}, which does not send it",
                        mc.source
                    ))
                }
            }
        }
    }
    if send_at.len() != recv_at.len() {
        return Err("a send has no matching receive".into());
    }
    // A relay sends only after its own receive of the message (list order).
    for (&(_, k), &(i, p)) in &send_at {
        if inst.multicasts[k].source != i {
            match recv_at.get(&(i, k)) {
                Some(&(_, q)) if q < p => {}
                _ => {
                    return Err(format!(
                        "node {i} relays source {}'s message before receiving it",
                        inst.multicasts[k].source
                    ))
                }
            }
        }
    }

    // Replay: advance each node through its list while it can.
    let mut pos = vec![0usize; n];
    let mut now = vec![0.0f64; n];
    let mut sent: HashMap<(usize, usize), f64> = HashMap::new(); // (receiver, k) -> send end
    let mut recv_end: HashMap<(usize, usize), f64> = HashMap::new();
    let mut work: Vec<usize> = (0..n).collect();
    while let Some(i) = work.pop() {
        while let Some(t) = sched.tasks[i].get(pos[i]) {
            let k = mc_of[t.source];
            let l = inst.multicasts[k].bytes;
            let end = match t.kind {
                TaskKind::Send => {
                    let end = now[i] + inst.nodes[i].send(l);
                    sent.insert((t.peer, k), end);
                    work.push(t.peer);
                    end
                }
                TaskKind::Recv => match sent.get(&(i, k)) {
                    Some(&se) => (se + inst.x(t.peer, i) * l).max(now[i]) + inst.nodes[i].recv(l),
                    None => break, // blocked until the sender gets there
                },
            };
            if !close(t.start, now[i]) || !close(t.end, end) {
                return Err(format!(
                    "tasks[{i}][{}]: recorded {}..{}, the model gives {}..{}",
                    pos[i], t.start, t.end, now[i], end
                ));
            }
            if t.kind == TaskKind::Recv {
                recv_end.insert((i, k), end);
            }
            now[i] = end;
            pos[i] += 1;
        }
    }
    if let Some(i) = (0..n).find(|&i| pos[i] < sched.tasks[i].len()) {
        return Err(format!(
            "deadlock: node {i} waits forever at task {}",
            pos[i]
        ));
    }
    let completion = recv_end.values().fold(0.0f64, |a, &b| a.max(b));
    if !close(completion, sched.completion_time) {
        return Err(format!(
            "completion time {} recorded, {} recomputed",
            sched.completion_time, completion
        ));
    }

    // The selection sequence: one entry per delivery, matching the lists,
    // and no relay before the relay's own selection as a receiver.
    if sched.sequence.len() != recv_end.len() {
        return Err(format!(
            "{} selections for {} deliveries",
            sched.sequence.len(),
            recv_end.len()
        ));
    }
    let mut has = vec![false; n * inst.multicasts.len()];
    for (q, s) in sched.sequence.iter().enumerate() {
        if s.source >= n || mc_of[s.source] == usize::MAX || s.receiver >= n || s.sender >= n {
            return Err(format!("sequence[{q}]: bad node id"));
        }
        let k = mc_of[s.source];
        match recv_at.get(&(s.receiver, k)) {
            Some(&(from, _)) if from == s.sender => {}
            _ => return Err(format!("sequence[{q}]: no matching receive task")),
        }
        if has[s.receiver * inst.multicasts.len() + k] {
            return Err(format!("sequence[{q}]: delivery selected twice"));
        }
        if s.sender != s.source && !has[s.sender * inst.multicasts.len() + k] {
            return Err(format!(
                "sequence[{q}]: node {} relays before it was selected to receive",
                s.sender
            ));
        }
        has[s.receiver * inst.multicasts.len() + k] = true;
        if !close(s.complete, recv_end[&(s.receiver, k)]) {
            return Err(format!(
                "sequence[{q}]: completion {} recorded, {} recomputed",
                s.complete,
                recv_end[&(s.receiver, k)]
            ));
        }
    }
    Ok(())
}
