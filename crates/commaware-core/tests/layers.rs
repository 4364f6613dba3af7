//! Dependencies between the core's modules point down only: no cycle, at any level.
//!
//! Reads `src/` as text: every `crate::` and `super::` path outside comments and test
//! code (`tests.rs` files and `#[cfg(test)]` modules), `use` groups expanded, re-exports
//! (`pub use`) followed to the module that defines the item. A module's references to
//! its own submodules are ownership, not dependencies. Then, for every folder, the
//! modules directly in it (each with everything below it) must form an acyclic graph:
//! at the top, error/util → network → engine → mpi → front-ends; inside `network`,
//! platform → sharing; and so on down to single files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// One reference found in a file: the absolute path it names and where.
struct Reference {
    path: ModPath,
    line: usize,
}

struct SourceFile {
    module: ModPath,
    /// Relative to the crate (`src/...`), for messages.
    file: PathBuf,
    refs: Vec<Reference>,
    /// Names this module re-exports (`pub use`), with the absolute path they stand for.
    reexports: BTreeMap<String, ModPath>,
}

fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        name => parts.push(name.trim_end_matches(".rs").to_string()),
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") && p.file_name().unwrap() != "tests.rs" {
            out.push(p);
        }
    }
}

/// The text without comments and without `#[cfg(test)]` modules (blanked, so that line
/// numbers stay).
fn code_only(text: &str) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut in_str = false;
            let b = l.as_bytes();
            for i in 0..b.len() {
                match b[i] {
                    b'"' if i == 0 || b[i - 1] != b'\\' => in_str = !in_str,
                    b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return l[..i].to_string(),
                    _ => {}
                }
            }
            l.to_string()
        })
        .collect();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            let next = (i + 1..lines.len()).find(|&k| !lines[k].trim().is_empty());
            let is_mod = |l: &str| ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "].iter().any(|p| l.trim_start().starts_with(p));
            if let Some(k) = next.filter(|&k| is_mod(&lines[k])) {
                let mut end = k;
                if lines[k].contains('{') {
                    let mut depth = 0i64;
                    'scan: for (j, line) in lines.iter().enumerate().skip(k) {
                        for c in line.chars() {
                            depth += (c == '{') as i64 - (c == '}') as i64;
                            if depth == 0 && c == '}' {
                                end = j;
                                break 'scan;
                            }
                        }
                    }
                }
                for line in &mut lines[i..=end] {
                    line.clear();
                }
                i = end;
            }
        }
        i += 1;
    }
    lines.join("\n")
}

/// Does `w` stand in `chars` at `i`?
fn at(chars: &[char], i: usize, w: &str) -> bool {
    chars[i..].iter().take(w.len()).copied().eq(w.chars())
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Parse a path (with `{…}` groups) starting at `s`; push every full path onto `out`.
fn parse_path(s: &[char], mut i: usize, prefix: ModPath, out: &mut Vec<ModPath>) -> usize {
    let mut path = prefix;
    loop {
        while i < s.len() && s[i].is_whitespace() {
            i += 1;
        }
        if i < s.len() && s[i] == '{' {
            i += 1;
            loop {
                i = parse_path(s, i, path.clone(), out);
                while i < s.len() && s[i].is_whitespace() {
                    i += 1;
                }
                match s.get(i) {
                    Some(',') => i += 1,
                    Some('}') => return i + 1,
                    _ => return i,
                }
                while i < s.len() && s[i].is_whitespace() {
                    i += 1;
                }
                if s.get(i) == Some(&'}') {
                    return i + 1;
                }
            }
        }
        let start = i;
        while i < s.len() && is_ident(s[i]) {
            i += 1;
        }
        if i == start {
            out.push(path);
            return i;
        }
        let word: String = s[start..i].iter().collect();
        if word != "self" {
            path.push(word);
        }
        if i + 1 < s.len() && s[i] == ':' && s[i + 1] == ':' {
            i += 2;
        } else {
            out.push(path);
            return i;
        }
    }
}

/// Every `crate::` and `super::` path of `code`, made absolute for `module` (whose
/// `super` is `parent`), with its line; and the `pub use` re-exports.
fn references(code: &str, parent: &ModPath, module: &ModPath) -> (Vec<Reference>, BTreeMap<String, ModPath>) {
    let chars: Vec<char> = code.chars().collect();
    let mut refs = Vec::new();
    let mut reexports = BTreeMap::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\n' {
            line += 1;
        }
        let boundary = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':');
        let mut found: Option<(ModPath, usize)> = None;
        if boundary && at(&chars, i, "crate::") {
            found = Some((Vec::new(), i + 7));
        } else if boundary && at(&chars, i, "super::") {
            let mut base = parent.clone();
            let mut j = i + 7;
            while at(&chars, j, "super::") {
                base.pop();
                j += 7;
            }
            found = Some((base, j));
        } else if boundary && at(&chars, i, "pub use ") {
            // A re-export of a child module's item: `pub use child::Name` (relative).
            let j = i + 8;
            if !at(&chars, j, "crate::") && !at(&chars, j, "super::") {
                let mut paths = Vec::new();
                parse_path(&chars, j, module.clone(), &mut paths);
                for p in paths {
                    if let Some(name) = p.last() {
                        reexports.insert(name.clone(), p);
                    }
                }
            }
        }
        if let Some((base, j)) = found {
            let is_pub_use = i >= 8 && at(&chars, i - 8, "pub use ");
            let mut paths = Vec::new();
            let end = parse_path(&chars, j, base, &mut paths);
            for p in paths {
                if is_pub_use {
                    if let Some(name) = p.last() {
                        reexports.insert(name.clone(), p.clone());
                    }
                }
                refs.push(Reference { path: p, line });
            }
            line += chars[i..end].iter().filter(|&&c| c == '\n').count();
            i = end;
            continue;
        }
        i += 1;
    }
    (refs, reexports)
}

fn read_crate(src: &Path) -> Vec<SourceFile> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let module = module_of(src, &file);
            let is_dir_module = matches!(file.file_name().unwrap().to_str(), Some("mod.rs") | Some("lib.rs"));
            let mut parent = module.clone();
            if !is_dir_module || !parent.is_empty() {
                parent.pop();
            }
            let (refs, reexports) = references(&code_only(&std::fs::read_to_string(&file).unwrap()), &parent, &module);
            let file = file.strip_prefix(src.parent().unwrap()).unwrap().to_path_buf();
            SourceFile { module, file, refs, reexports }
        })
        .collect()
}

/// The module a path lands in: the longest module prefix, then through re-exports.
fn resolve(path: &ModPath, modules: &BTreeMap<ModPath, usize>, files: &[SourceFile]) -> ModPath {
    let mut path = path.clone();
    for _ in 0..16 {
        let Some(k) = (0..=path.len()).rev().find(|&k| modules.contains_key(&path[..k])) else { return Vec::new() };
        let module = path[..k].to_vec();
        let Some(next) = path.get(k) else { return module };
        match files[modules[&module]].reexports.get(next) {
            Some(target) if target != &path[..=k] => {
                let mut p = target.clone();
                p.extend_from_slice(&path[k + 1..]);
                path = p;
            }
            _ => return module,
        }
    }
    path
}

/// Module-level edges (from → to, with an example "file:line uses path").
fn edges(files: &[SourceFile]) -> BTreeMap<(ModPath, ModPath), String> {
    let modules: BTreeMap<ModPath, usize> = files.iter().enumerate().map(|(i, f)| (f.module.clone(), i)).collect();
    let mut out = BTreeMap::new();
    for f in files {
        for r in &f.refs {
            let to = resolve(&r.path, &modules, files);
            // A module's references into its own submodules are ownership, not dependencies.
            if to == f.module || to.starts_with(&f.module) {
                continue;
            }
            out.entry((f.module.clone(), to)).or_insert_with(|| format!("{}:{} uses crate::{}", f.file.display(), r.line, r.path.join("::")));
        }
    }
    out
}

/// For every folder, the graph of the modules directly in it (each standing for its whole
/// subtree) must be acyclic. Returns one message per folder with a cycle.
fn cycles(files: &[SourceFile]) -> Vec<String> {
    let edges = edges(files);
    let parents: BTreeSet<ModPath> = files.iter().filter(|f| !f.module.is_empty()).map(|f| f.module[..f.module.len() - 1].to_vec()).collect();
    let mut found = Vec::new();
    for parent in parents {
        let depth = parent.len();
        let child = |m: &ModPath| (m.len() > depth && m.starts_with(&parent)).then(|| m[depth].clone());
        let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for ((from, to), why) in &edges {
            if let (Some(a), Some(b)) = (child(from), child(to)) {
                if a != b {
                    graph.entry(a).or_default().entry(b).or_insert_with(|| why.clone());
                }
            }
        }
        // Depth-first search for a back edge; report the cycle it closes.
        let names: Vec<String> = graph.keys().cloned().collect();
        let mut state: BTreeMap<String, u8> = BTreeMap::new();
        fn visit(
            n: &str,
            graph: &BTreeMap<String, BTreeMap<String, String>>,
            state: &mut BTreeMap<String, u8>,
            stack: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            state.insert(n.to_string(), 1);
            stack.push(n.to_string());
            for m in graph.get(n).map(|g| g.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                match state.get(&m).copied().unwrap_or(0) {
                    1 => {
                        let at = stack.iter().position(|s| *s == m).unwrap();
                        let mut cycle = stack[at..].to_vec();
                        cycle.push(m);
                        return Some(cycle);
                    }
                    0 => {
                        if let Some(c) = visit(&m, graph, state, stack) {
                            return Some(c);
                        }
                    }
                    _ => {}
                }
            }
            stack.pop();
            state.insert(n.to_string(), 2);
            None
        }
        for n in names {
            if state.get(&n).copied().unwrap_or(0) == 0 {
                if let Some(cycle) = visit(&n, &graph, &mut state, &mut Vec::new()) {
                    let at = if parent.is_empty() { "crate".to_string() } else { format!("crate::{}", parent.join("::")) };
                    let steps: Vec<String> = cycle.windows(2).map(|w| format!("  {} -> {}: {}", w[0], w[1], graph[&w[0]][&w[1]])).collect();
                    found.push(format!("cycle among the modules of {at}: {}\n{}", cycle.join(" -> "), steps.join("\n")));
                    break; // one cycle per folder: the search it cut short left nodes marked
                }
            }
        }
    }
    found
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_cycle_between_modules() {
    let files = read_crate(&src_dir());
    assert!(files.len() > 30, "read only {} files", files.len());
    let found = cycles(&files);
    assert!(found.is_empty(), "dependencies must point down only:\n{}", found.join("\n"));
}

#[test]
fn no_cycle_between_binding_modules() {
    // The binding crate (`commaware-py`) is read the same way: its domain modules use the
    // shared conversions and errors, never each other in a circle.
    let files = read_crate(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../commaware-py/src"));
    assert!(files.len() > 5, "read only {} files", files.len());
    let found = cycles(&files);
    assert!(found.is_empty(), "dependencies must point down only:\n{}", found.join("\n"));
}

#[test]
fn the_top_layers_are_in_order() {
    // Spot checks that the reader sees the edges it must (a reader that found nothing
    // would pass the test above): the engine uses the network, the replay the engine.
    let files = read_crate(&src_dir());
    let e = edges(&files);
    let has = |a: &str, b: &str| {
        let p = |s: &str| s.split("::").map(String::from).collect::<ModPath>();
        e.contains_key(&(p(a), p(b)))
    };
    assert!(has("engine", "network::sharing"));
    assert!(has("mpi::replay", "engine"));
    assert!(has("mpi::replay", "network::platform"));
    // Through the re-export `network::sharing::PenaltyModel` to the module defining it.
    assert!(has("mpi::platform_file", "network::sharing::penalty"));
}

/// The checker itself, on a small tree written for it: a back edge is a cycle, ownership
/// and test code are not.
#[test]
fn a_back_edge_is_found() {
    let dir = std::env::temp_dir().join(format!("commaware-layers-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "pub mod low;\npub mod high;\n");
    write("low/mod.rs", "pub mod spec;\npub use spec::Spec;\nuse crate::low::spec::Other; // crate::high::X in a comment\n");
    write("low/spec.rs", "pub struct Spec;\npub struct Other;\nuse super::Spec as S;\n#[cfg(test)]\nmod tests {\n    use crate::high::Thing;\n}\n#[cfg(test)]\npub(crate) mod more {\n    use crate::high::Thing;\n}\n");
    write("high.rs", "use crate::low::{Spec, spec::Other};\npub struct Thing;\n");
    let ok = cycles(&read_crate(&dir));
    assert!(ok.is_empty(), "{ok:?}");
    write("low/spec.rs", "pub struct Spec;\npub struct Other;\nfn f() { let _ = crate::high::Thing; }\n");
    let bad = cycles(&read_crate(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("high -> low") && bad[0].contains("low -> high"), "{}", bad[0]);
    assert!(bad[0].contains("spec.rs:3 uses crate::high::Thing"), "{}", bad[0]);
}
