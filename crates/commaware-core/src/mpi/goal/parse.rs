//! GOAL text in: the grammar of LogGOPSim's `txt2bin.re` (SEMANTICS.md §1), read a line at a
//! time. Two liberties over txt2bin: indented lines are read as written (txt2bin swallows the
//! character after leading blanks), and a comment may follow an item on its line. What txt2bin
//! would read wrongly or not at all is refused with the line and the reason: ranks out of order
//! or missing, a peer outside the ranks, a label defined twice, a dependency on a label not
//! defined above it.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use super::{GoalKind, GoalOp, GoalRankBuilder, GoalSchedule, ANY};
use crate::error::{Error, Result};

/// Longest line read (bytes): a longer one is refused, not buffered.
const MAX_LINE_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Int(u64),
    MinusOne,
    Colon,
    Open,
    Close,
}

fn describe(t: Option<&Tok<'_>>) -> String {
    match t {
        None => "the end of the line".into(),
        Some(Tok::Word(w)) => format!("'{w}'"),
        Some(Tok::Int(n)) => format!("'{n}'"),
        Some(Tok::MinusOne) => "'-1'".into(),
        Some(Tok::Colon) => "':'".into(),
        Some(Tok::Open) => "'{'".into(),
        Some(Tok::Close) => "'}'".into(),
    }
}

/// Splits a line (comments removed) into tokens: txt2bin's IDENT (`[a-zA-Z][a-zA-Z0-9_]*`), INT,
/// `-1`, `:`, `{` and `}`; `1024b` is INT then the word `b`.
fn tokens(line: &str) -> std::result::Result<Vec<Tok<'_>>, String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
        } else if c.is_ascii_alphabetic() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Word(&line[s..i]));
        } else if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let n = line[s..i].parse::<u64>().map_err(|_| format!("number {} is too large", &line[s..i]))?;
            out.push(Tok::Int(n));
        } else if c == b'-' && b.get(i + 1) == Some(&b'1') && !b.get(i + 2).is_some_and(|d| d.is_ascii_digit()) {
            out.push(Tok::MinusOne);
            i += 2;
        } else if c == b':' || c == b'{' || c == b'}' {
            out.push(match c {
                b':' => Tok::Colon,
                b'{' => Tok::Open,
                _ => Tok::Close,
            });
            i += 1;
        } else {
            let ch = line[i..].chars().next().unwrap_or('?');
            return Err(format!("unexpected character {ch:?}"));
        }
    }
    Ok(out)
}

/// What a GOAL file gives before the graph is built: the rank count and the rank being read.
struct Reader {
    num_ranks: Option<u64>,
    schedule: GoalSchedule,
    /// The rank block open: its number, builder and labels.
    open: Option<(u64, GoalRankBuilder, HashMap<String, (u32, usize)>)>,
    /// Peers named by each op so far, checked against `num_ranks` at the end (it may come late).
    max_peer: Option<(u64, usize)>,
    in_comment: Option<usize>,
}

/// A GOAL schedule from a file.
pub fn read_path(path: &Path) -> Result<GoalSchedule> {
    let file = std::fs::File::open(path).map_err(|e| Error::trace("", format!("cannot open: {e}")))?;
    read(std::io::BufReader::with_capacity(1 << 16, file))
}

/// A GOAL schedule from text (tests, small schedules).
pub fn parse_text(text: &str) -> Result<GoalSchedule> {
    read(text.as_bytes())
}

/// A GOAL schedule read line by line from `input`; errors name the line.
pub fn read(mut input: impl BufRead) -> Result<GoalSchedule> {
    let mut reader = Reader { num_ranks: None, schedule: GoalSchedule::default(), open: None, max_peer: None, in_comment: None };
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = std::io::Read::take(&mut input, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf).map_err(|e| Error::trace("", format!("cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let at = |reason: String| Error::trace(format!("line {line_no}"), reason);
        if buf.len() > MAX_LINE_BYTES {
            return Err(at(format!("longer than {MAX_LINE_BYTES} bytes")));
        }
        let text = std::str::from_utf8(&buf).map_err(|_| at("not UTF-8 text".into()))?;
        reader.line(text, line_no).map_err(at)?;
    }
    reader.finish(line_no)
}

impl Reader {
    /// Removes `/* */` and `//` comments (a block comment may span lines).
    fn strip_comments(&mut self, line: &str, line_no: usize) -> String {
        let mut out = String::new();
        let mut rest = line;
        loop {
            if self.in_comment.is_some() {
                match rest.find("*/") {
                    Some(end) => {
                        self.in_comment = None;
                        rest = &rest[end + 2..];
                    }
                    None => return out,
                }
            }
            let line_c = rest.find("//");
            let block = rest.find("/*");
            match (line_c, block) {
                (Some(l), b) if b.is_none_or(|b| l < b) => {
                    out.push_str(&rest[..l]);
                    return out;
                }
                (_, Some(b)) => {
                    out.push_str(&rest[..b]);
                    out.push(' ');
                    self.in_comment = Some(line_no);
                    rest = &rest[b + 2..];
                }
                _ => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }

    fn line(&mut self, raw: &str, line_no: usize) -> std::result::Result<(), String> {
        let text = self.strip_comments(raw.trim_end_matches(['\n', '\r']), line_no);
        let toks = tokens(&text)?;
        if toks.is_empty() {
            return Ok(());
        }
        let Some((rank, builder, labels)) = self.open.as_mut() else {
            return self.outside(&toks);
        };
        let rank = *rank;
        match toks.as_slice() {
            [Tok::Close] => {
                let (_, builder, _) = self.open.take().expect("a rank is open");
                self.schedule.ranks.push(builder.finish());
                Ok(())
            }
            [Tok::Word(a), Tok::Word(kind @ ("requires" | "irequires")), Tok::Word(b)] => {
                let find = |l: &str| labels.get(l).map(|&(i, _)| i).ok_or_else(|| format!("rank {rank}: '{l}' is not the label of an operation above this line"));
                let (succ, pred) = (find(a)?, find(b)?);
                builder.depend(succ, pred, *kind == "irequires");
                Ok(())
            }
            [Tok::Word(label), Tok::Colon, op @ ..] => {
                if is_keyword(label) {
                    return Err(format!("'{label}' is a keyword, not a label"));
                }
                let op = parse_op(op)?;
                if let Some(&(_, first)) = labels.get(*label) {
                    return Err(format!("rank {rank}: label '{label}' is defined twice (first on line {first})"));
                }
                let i = builder.op(op);
                labels.insert((*label).to_string(), (i, line_no));
                self.note_peer(&op, line_no);
                Ok(())
            }
            op => {
                let op = parse_op(op)?;
                builder.op(op);
                self.note_peer(&op, line_no);
                Ok(())
            }
        }
    }

    fn note_peer(&mut self, op: &GoalOp, line_no: usize) {
        if op.kind != GoalKind::Calc && op.peer != ANY && self.max_peer.is_none_or(|(p, _)| u64::from(op.peer) > p) {
            self.max_peer = Some((u64::from(op.peer), line_no));
        }
    }

    /// A line outside rank blocks: `num_ranks N` or `rank N {`.
    fn outside(&mut self, toks: &[Tok<'_>]) -> std::result::Result<(), String> {
        match toks {
            [Tok::Word("num_ranks"), Tok::Int(n)] => {
                if *n == 0 || *n > u64::from(u32::MAX) {
                    return Err(format!("num_ranks {n}: needs 1 to {} ranks", u32::MAX));
                }
                if let Some(old) = self.num_ranks.filter(|old| old != n) {
                    return Err(format!("num_ranks {n} after num_ranks {old}"));
                }
                self.num_ranks = Some(*n);
                Ok(())
            }
            [Tok::Word("rank"), Tok::Int(r), Tok::Open] => {
                let expected = self.schedule.ranks.len() as u64;
                if let Some(n) = self.num_ranks.filter(|&n| *r >= n) {
                    return Err(format!("rank {r}: num_ranks is {n}"));
                }
                if *r != expected {
                    return Err(format!("rank {r}: rank blocks must come in order 0, 1, ... (expected rank {expected})"));
                }
                self.open = Some((*r, GoalRankBuilder::default(), HashMap::new()));
                Ok(())
            }
            [Tok::Word("rank"), ..] => Err("expected 'rank N {' alone on its line".into()),
            _ => Err(format!("expected 'num_ranks N' or 'rank N {{' outside a rank block, found {}", describe(toks.first()))),
        }
    }

    fn finish(self, lines: usize) -> Result<GoalSchedule> {
        let at_end = |reason: String| Error::trace(format!("line {lines}"), reason);
        if let Some(start) = self.in_comment {
            return Err(at_end(format!("the /* comment of line {start} is never closed")));
        }
        if let Some((r, ..)) = self.open {
            return Err(at_end(format!("rank {r}'s block is never closed with '}}'")));
        }
        let Some(n) = self.num_ranks else {
            return Err(Error::trace("num_ranks", "missing: a GOAL schedule starts with 'num_ranks N'"));
        };
        if (self.schedule.ranks.len() as u64) < n {
            return Err(at_end(format!("num_ranks is {n} but only {} rank blocks follow", self.schedule.ranks.len())));
        }
        if let Some((p, line)) = self.max_peer.filter(|&(p, _)| p >= n) {
            return Err(Error::trace(format!("line {line}"), format!("peer {p} is not a rank (num_ranks {n})")));
        }
        Ok(self.schedule)
    }
}

fn is_keyword(w: &str) -> bool {
    matches!(w, "send" | "recv" | "calc" | "rank" | "num_ranks" | "requires" | "irequires" | "tag" | "cpu" | "nic" | "to" | "from")
}

/// `send Nb to P [tag T] [cpu C] [nic N]`, `recv Nb from P|-1 [tag T|-1] [cpu C] [nic N]` or
/// `calc N [cpu C]` (SEMANTICS.md §1.2: the optional fields in that order).
fn parse_op(toks: &[Tok<'_>]) -> std::result::Result<GoalOp, String> {
    let mut it = toks.iter().peekable();
    let kind = match it.next() {
        Some(Tok::Word("send")) => GoalKind::Send,
        Some(Tok::Word("recv")) => GoalKind::Recv,
        Some(Tok::Word("calc")) => GoalKind::Calc,
        t => return Err(format!("expected send, recv, calc, a label or a dependency, found {}", describe(t))),
    };
    let Some(Tok::Int(size)) = it.next() else {
        return Err(format!("{}: expected a number", name(kind)));
    };
    let mut op = GoalOp { kind, cpu: 0, nic: 0, peer: 0, tag: 0, size: *size };
    if kind != GoalKind::Calc {
        if it.next() != Some(&Tok::Word("b")) {
            return Err(format!("{}: the size needs the suffix 'b' (bytes), e.g. {size}b", name(kind)));
        }
        let (dir, any_ok) = if kind == GoalKind::Send { ("to", false) } else { ("from", true) };
        if it.next() != Some(&Tok::Word(dir)) {
            return Err(format!("{}: expected '{dir}' after the size", name(kind)));
        }
        op.peer = match it.next() {
            Some(Tok::Int(p)) => to_u32(*p, "peer")?,
            Some(Tok::MinusOne) if any_ok => ANY,
            t => return Err(format!("{}: expected a rank after '{dir}', found {}", name(kind), describe(t))),
        };
        if it.peek() == Some(&&Tok::Word("tag")) {
            it.next();
            op.tag = match it.next() {
                Some(Tok::Int(t)) => to_u32(*t, "tag")?,
                Some(Tok::MinusOne) => ANY,
                t => return Err(format!("tag: expected a number or -1, found {}", describe(t))),
            };
        }
    }
    let small = |it: &mut std::iter::Peekable<std::slice::Iter<'_, Tok<'_>>>, field: &str| -> std::result::Result<u8, String> {
        match it.next() {
            Some(Tok::Int(v)) if *v <= 255 => Ok(*v as u8),
            t => Err(format!("{field}: expected 0 to 255, found {}", describe(t))),
        }
    };
    if it.peek() == Some(&&Tok::Word("cpu")) {
        it.next();
        op.cpu = small(&mut it, "cpu")?;
    }
    if kind != GoalKind::Calc && it.peek() == Some(&&Tok::Word("nic")) {
        it.next();
        op.nic = small(&mut it, "nic")?;
    }
    if let Some(t) = it.next() {
        let expected = if kind == GoalKind::Calc { "'cpu N'" } else { "'tag T', 'cpu C', 'nic N' in that order" };
        return Err(format!("{}: unexpected {} (after the {} come only {expected})", name(kind), describe(Some(t)), if kind == GoalKind::Calc { "amount" } else { "peer" }));
    }
    Ok(op)
}

fn name(kind: GoalKind) -> &'static str {
    match kind {
        GoalKind::Send => "send",
        GoalKind::Recv => "recv",
        GoalKind::Calc => "calc",
    }
}

fn to_u32(v: u64, field: &str) -> std::result::Result<u32, String> {
    if v >= u64::from(ANY) {
        return Err(format!("{field} {v} is too large (at most {})", ANY - 1));
    }
    Ok(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_schedgen_style_and_features() {
        let s = parse_text(include_str!("../../../../../tests/data/goal/hand/features.goal")).unwrap();
        assert_eq!(s.ranks.len(), 4);
        let r0 = &s.ranks[0];
        assert_eq!(r0.ops.len(), 6);
        assert_eq!(r0.ops[2], GoalOp { kind: GoalKind::Calc, cpu: 1, nic: 0, peer: 0, tag: 0, size: 2000 });
        assert_eq!((r0.ops[3].peer, r0.ops[3].tag), (ANY, ANY));
        assert_eq!(r0.ops[4].nic, 1);
        assert_eq!(r0.requires_me(0), &[2]);
        assert_eq!(r0.irequires_me(3), &[4]);
        assert_eq!(r0.n_deps, vec![0, 0, 1, 0, 1, 2]);
        assert_eq!(s.n_cpus_nics(), (2, 2));
        assert_eq!(s.ranks[2].ops.len(), 2); // the block comment is skipped
    }

    #[test]
    fn indentation_and_trailing_comments_are_read() {
        let s = parse_text("num_ranks 2\nrank 0 {\n  l1: send 8b to 1 tag 3 // note\n}\nrank 1 {\n\tl1: recv 8b from 0 tag 3\n}\n").unwrap();
        assert_eq!(s.ranks[0].ops[0].tag, 3);
        assert_eq!(s.ranks[1].ops[0].kind, GoalKind::Recv);
    }

    #[test]
    fn refusals_name_the_line_and_reason() {
        let err = |text: &str| parse_text(text).unwrap_err().to_string();
        assert!(err("num_ranks 1\nrank 0 {\nsend 8 to 0\n}\n").contains("line 3"));
        assert!(err("num_ranks 1\nrank 0 {\nsend 8 to 0\n}\n").contains("suffix 'b'"));
        assert!(err("num_ranks 2\nrank 1 {\n}\n").contains("must come in order"));
        assert!(err("num_ranks 2\nrank 0 {\n}\n").contains("only 1 rank blocks"));
        assert!(err("num_ranks 1\nrank 0 {\na: calc 1\nb requires a\n}\n").contains("'b' is not the label"));
        assert!(err("num_ranks 1\nrank 0 {\na: calc 1\na: calc 2\n}\n").contains("defined twice (first on line 3)"));
        assert!(err("num_ranks 2\nrank 0 {\nsend 1b to 5\n}\nrank 1 {\n}\n").contains("peer 5 is not a rank"));
        assert!(err("num_ranks 1\nrank 0 {\ncalc 5 nic 1\n}\n").contains("unexpected 'nic'"));
        assert!(err("num_ranks 1\nrank 0 {\nsend 1b to -1\n}\n").contains("expected a rank"));
        assert!(err("rank 0 {\n}\n").contains("num_ranks"));
        assert!(err("num_ranks 1\nrank 0 {\ncalc 1\n").contains("never closed"));
        assert!(err("num_ranks 1\nrank 0 {\ncalc 99999999999999999999999\n}\n").contains("too large"));
        assert!(err("num_ranks 1\nrank 0 {\nsend 1b to 0 tag 4294967295\n}\n").contains("too large"));
        assert!(err("num_ranks 1\n/* open\n").contains("never closed"));
    }

    #[test]
    fn text_after_the_last_rank_is_refused() {
        // txt2bin ignores it; a reader that drops lines silently would hide a truncated merge
        let e = parse_text("num_ranks 1\nrank 0 {\ncalc 1\n}\nrank 1 {\n}\n").unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("num_ranks is 1"), "{e}");
        assert!(parse_text("num_ranks 1\nrank 0 {\ncalc 1\n}\ngarbage\n").is_err());
    }
}
