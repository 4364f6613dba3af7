//! GOAL text out, in the form txt2bin reads (no indentation, one item a line, ops labelled
//! `l1, l2, …` as schedgen does): a rank's operations in order, then its dependencies, each
//! predecessor's successors in their order, so that reading the file back gives the same graph.

use std::io::Write;

use super::{GoalKind, GoalOp, GoalSchedule, ANY};

fn peer_or_any(v: u32) -> String {
    if v == ANY {
        "-1".into()
    } else {
        v.to_string()
    }
}

fn op_line(op: &GoalOp) -> String {
    let mut line = match op.kind {
        GoalKind::Send => format!("send {}b to {} tag {}", op.size, op.peer, peer_or_any(op.tag)),
        GoalKind::Recv => format!("recv {}b from {} tag {}", op.size, peer_or_any(op.peer), peer_or_any(op.tag)),
        GoalKind::Calc => format!("calc {}", op.size),
    };
    if op.cpu != 0 || (op.nic != 0 && op.kind != GoalKind::Calc) {
        line += &format!(" cpu {}", op.cpu);
    }
    if op.nic != 0 && op.kind != GoalKind::Calc {
        line += &format!(" nic {}", op.nic);
    }
    line
}

/// Writes `schedule` as GOAL text.
pub fn write(schedule: &GoalSchedule, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "num_ranks {}", schedule.ranks.len())?;
    for (r, rank) in schedule.ranks.iter().enumerate() {
        writeln!(out, "\nrank {r} {{")?;
        for (i, op) in rank.ops.iter().enumerate() {
            writeln!(out, "l{}: {}", i + 1, op_line(op))?;
        }
        for i in 0..rank.ops.len() {
            for &s in rank.requires_me(i) {
                writeln!(out, "l{} requires l{}", s + 1, i + 1)?;
            }
            for &s in rank.irequires_me(i) {
                writeln!(out, "l{} irequires l{}", s + 1, i + 1)?;
            }
        }
        writeln!(out, "}}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::goal::parse::parse_text;

    #[test]
    fn written_text_reads_back_as_the_same_graph() {
        let s = parse_text(include_str!("../../../../../tests/data/goal/hand/features.goal")).unwrap();
        let mut out = Vec::new();
        write(&s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("l4: recv 128b from -1 tag -1\n"), "{text}");
        assert!(text.contains("l5: send 32b to 3 tag 0 cpu 0 nic 1\n"), "{text}");
        assert!(text.lines().all(|l| !l.starts_with([' ', '\t'])));
        assert_eq!(parse_text(&text).unwrap(), s);
    }
}
