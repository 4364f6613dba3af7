//! One error type for everything the core can reject, with the file, the field
//! (or operation) and the reason, so front-ends can print one clear line.

use std::fmt;

/// What kind of input was wrong; front-ends map each to a typed exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The platform description is malformed or inconsistent.
    Platform,
    /// The trace is malformed or refers to ranks, requests or ops that do not exist.
    Trace,
    /// Ranks cannot be placed on the hosts (too few cores, unknown host).
    Placement,
    /// The replay cannot finish: blocked ranks or messages left unmatched.
    Deadlock,
    /// Options given to the simulator are invalid (unknown model, ...).
    Options,
    /// A multicast instance (paper 003) is malformed or inconsistent.
    Multicast,
    /// A communication scheme (paper 004) is malformed.
    Scheme,
    /// An output could not be written (disk full, permission denied, ...).
    Output,
    /// The caller stopped the run (a progress callback asked to, or raised).
    Aborted,
    /// A job workload (paper 002: JSON job list or SWF log) is malformed.
    Workload,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    /// File the input came from ("<dict>" when it was given in memory).
    pub source: String,
    /// Path of the offending field, e.g. `ranks[2][5].bytes`; empty when not about one field.
    pub field: String,
    pub reason: String,
}

impl Error {
    /// A new error; numbers of more than 20 digits in `reason` are shown in scientific
    /// notation (`1e300`, not 301 digits), and values echoed in `field` or `reason` are cut
    /// to [`ECHO_LIMIT`] characters ([`cut_long_values`]).
    pub fn new(kind: ErrorKind, field: impl Into<String>, reason: impl Into<String>) -> Self {
        let (field, reason) = (field.into(), reason.into());
        Error {
            kind,
            source: String::new(),
            field: cut_long_values(&field).into_owned(),
            reason: tidy_numbers(&cut_long_values(&reason)),
        }
    }
    pub fn platform(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Platform, field, reason)
    }
    pub fn trace(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Trace, field, reason)
    }
    pub fn workload(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Workload, field, reason)
    }
    /// Attach the file name the input was read from.
    pub fn in_source(mut self, source: &str) -> Self {
        if self.source.is_empty() {
            self.source = source.to_string();
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<&str> = Vec::new();
        if !self.source.is_empty() {
            parts.push(&self.source);
        }
        if !self.field.is_empty() {
            parts.push(&self.field);
        }
        if parts.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", parts.join(": "), self.reason)
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// The text formats the loaders read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON text from a file; errors give its line and column.
    Json,
    /// TOML text from a file; errors give its line and column.
    Toml,
    /// JSON text a front-end made from an in-memory value (a Python dict): its
    /// positions mean nothing to the user, so errors name the field only.
    Dict,
}

impl Format {
    pub const NAMES: &'static [&'static str] = &["json", "toml", "dict"];

    pub fn from_name(name: &str) -> Result<Format> {
        match name {
            "json" => Ok(Format::Json),
            "toml" => Ok(Format::Toml),
            "dict" => Ok(Format::Dict),
            _ => Err(Error::new(
                ErrorKind::Options,
                "format",
                format!("unknown input format `{name}` (known: {})", Self::NAMES.join(", ")),
            )),
        }
    }
}

/// What a loader says about a NaN or an infinity, in any format.
pub const NON_FINITE: &str = "non-finite number (NaN/inf) is not allowed";

/// Parse `text` in `format` into `T`, reporting the path of the failing field.
pub fn parse_input<T: serde::de::DeserializeOwned>(kind: ErrorKind, text: &str, format: Format) -> Result<T> {
    match format {
        Format::Json => parse_json_text(kind, text, true),
        Format::Dict => parse_json_text(kind, text, false),
        Format::Toml => parse_toml(kind, text),
    }
}

/// How deeply arrays and objects (JSON), tables and arrays (TOML), or elements (SimGrid XML)
/// may nest in any input: far beyond what any of our formats needs, and shallow enough that
/// no reader, ours or Python's, runs out of stack. It is the toml crate's own limit for
/// arrays and inline tables, and for the keys of a dotted key.
pub const MAX_NESTING: usize = 80;

/// The reason of a computation, or a parse, stopped from outside (`util::cancel`).
pub const STOPPED: &str = "stopped by the caller";

/// Why an input nested deeper than [`MAX_NESTING`] levels of `what` is refused: the same
/// words in every format.
pub fn too_deep(what: &str) -> String {
    format!("nested more than {MAX_NESTING} levels deep (the limit for {what})")
}

/// The reason to refuse JSON `text` nested more than [`MAX_NESTING`] levels deep (with the
/// line and column of the first array or object too deep when `positions`), or `None`.
/// One pass over the bytes, skipping strings, before any parser recurses.
pub fn json_too_deep(text: &str, positions: bool) -> Option<String> {
    let b = text.as_bytes();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut line_start) = (1usize, 0usize);
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            line += 1;
            line_start = i + 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let at = if positions {
                        let column = text[line_start..i].chars().count() + 1;
                        format!(" at line {line} column {column}")
                    } else {
                        String::new()
                    };
                    return Some(format!("{}{at}", too_deep("arrays and objects")));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Parse JSON text into `T`, reporting the path of the failing field.
pub fn parse_json<T: serde::de::DeserializeOwned>(kind: ErrorKind, text: &str) -> Result<T> {
    parse_json_text(kind, text, true)
}

fn parse_json_text<T: serde::de::DeserializeOwned>(kind: ErrorKind, text: &str, positions: bool) -> Result<T> {
    if let Some(reason) = json_too_deep(text, positions) {
        return Err(Error::new(kind, "", reason));
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().clone();
        let inner = e.into_inner();
        if inner.is_data() && inner.to_string().starts_with(STOPPED) {
            return Error::new(ErrorKind::Aborted, "", STOPPED); // asked to stop (`util::cancel::checked_seq`): no second pass
        }
        let mut field = path_string(&path);
        let full = cut_long_values(&inner.to_string()).into_owned(); // before any copy of a huge value
        let bare = strip_position(&full);
        let at = if positions && inner.line() > 0 { format!(" at line {} column {}", inner.line(), inner.column()) } else { String::new() };
        let reason = if inner.is_syntax() || inner.is_eof() {
            if is_non_finite_at(text, inner.line(), inner.column()) {
                format!("{NON_FINITE}{at}")
            } else {
                format!("malformed JSON: {bare}{at}")
            }
        } else {
            let segments: Vec<_> = path.iter().cloned().collect();
            let de = &mut serde_json::Deserializer::from_str(text);
            if let Ok(Some(node)) = serde::de::DeserializeSeed::deserialize(Follow(&segments), de) {
                field = refine_field(&node, field, bare);
            }
            format!("{bare}{at}")
        };
        Error::new(kind, field, reason)
    })
}

/// The reason to refuse TOML `text` nested more than [`MAX_NESTING`] tables and arrays deep
/// (dotted keys, table headers, arrays and inline tables together), with its line and
/// column, or `None`.
pub fn toml_too_deep(text: &str) -> Option<String> {
    toml_document(text).err().and_then(|(reason, deep)| deep.then_some(reason))
}

/// TOML `text` parsed, or the reason to refuse it and whether that is its depth. The toml
/// crate stops at 80 keys in a dotted key or header and at 80 arrays and inline tables in a
/// value, but together these nest thousands of tables deep, beyond the stack that serde's
/// recursion needs: the tree is measured, without recursion, before it is deserialized.
fn toml_document(text: &str) -> std::result::Result<toml::de::Deserializer<'_>, (String, bool)> {
    let deep = |at: Option<usize>| (format!("{}{}", too_deep("tables and arrays"), span_position(text, at.map(|i| i..i))), true);
    let doc = toml::de::DeTable::parse(text).map_err(|e| {
        if e.message().contains("cannot recurse further") {
            deep(e.span().map(|s| s.start))
        } else if e.message().contains("recursion limit") {
            deep(deep_key_at(text)) // the crate gives no span
        } else {
            (format!("malformed TOML: {}{}", one_line(&cut_long_values(e.message())), span_position(text, e.span())), false)
        }
    })?;
    if let Some(at) = deep_table_at(doc.get_ref()) {
        return Err(deep(Some(at)));
    }
    Ok(toml::de::Deserializer::from(doc))
}

/// Where (the key or item of) a table or array below [`MAX_NESTING`] others starts in a
/// TOML document, or `None`.
fn deep_table_at(doc: &toml::de::DeTable) -> Option<usize> {
    let mut stack: Vec<(usize, &toml::de::DeValue, usize)> = doc.iter().map(|(k, v)| (k.span().start, v.get_ref(), 1)).collect();
    while let Some((at, value, depth)) = stack.pop() {
        match value {
            toml::de::DeValue::Table(_) | toml::de::DeValue::Array(_) if depth > MAX_NESTING => return Some(at),
            toml::de::DeValue::Table(t) => stack.extend(t.iter().map(|(k, v)| (k.span().start, v.get_ref(), depth + 1))),
            toml::de::DeValue::Array(a) => stack.extend(a.iter().map(|v| (v.span().start, v.get_ref(), depth + 1))),
            _ => {}
        }
    }
    None
}

/// Where the first dotted key or table header of TOML `text` reaches its key number
/// `MAX_NESTING + 1`: one pass, skipping strings and comments.
fn deep_key_at(text: &str) -> Option<usize> {
    let (mut dots, mut quote, mut escaped, mut comment) = (0, None, false, false);
    for (i, c) in text.char_indices() {
        if c == '\n' {
            (dots, quote, comment) = (0, None, false);
        } else if comment {
        } else if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                '"' | '\'' => quote = Some(c),
                '#' => comment = true,
                '=' | ',' | '{' | '}' | '[' | ']' => dots = 0,
                '.' if dots + 1 == MAX_NESTING => return Some(i + 1),
                '.' => dots += 1,
                _ => {}
            }
        }
    }
    None
}

/// Parse TOML text into `T`; errors give the TOML file's own line and column.
pub fn parse_toml<T: serde::de::DeserializeOwned>(kind: ErrorKind, text: &str) -> Result<T> {
    let de = toml_document(text).map_err(|(reason, _)| Error::new(kind, "", reason))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().clone();
        let inner = e.into_inner();
        let mut field = path_string(&path);
        let message = one_line(&cut_long_values(inner.message()));
        let segments: Vec<_> = path.iter().cloned().collect();
        if let Ok(Some(node)) = toml::de::Deserializer::parse(text)
            .and_then(|de| serde::de::DeserializeSeed::deserialize(Follow(&segments), de))
        {
            field = refine_field(&node, field, &message);
        }
        let at = span_position(text, inner.span());
        Error::new(kind, field, format!("{message}{at}"))
    })
}

fn path_string(path: &serde_path_to_error::Path) -> String {
    let p = path.to_string();
    if p == "." {
        String::new()
    } else {
        p
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// " at line L column C" of a byte span, or "" when there is none.
fn span_position(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else { return String::new() };
    let start = span.start.min(text.len());
    let start = (0..=start).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(" at line {line} column {column}")
}

/// serde_json's message without its " at line L column C" suffix.
fn strip_position(message: &str) -> &str {
    if let Some(i) = message.rfind(" at line ") {
        let rest = &message[i + " at line ".len()..];
        let mut parts = rest.split(" column ");
        if let (Some(l), Some(c), None) = (parts.next(), parts.next(), parts.next()) {
            if !l.is_empty() && !c.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) && c.bytes().all(|b| b.is_ascii_digit()) {
                return &message[..i];
            }
        }
    }
    message
}

/// Does a NaN or an infinity (as Python's `json.dumps` writes them) start at this
/// 1-based line and column of `text`, or one character before it?
fn is_non_finite_at(text: &str, line: usize, column: usize) -> bool {
    if line == 0 {
        return false;
    }
    let Some(line_text) = text.split('\n').nth(line - 1) else { return false };
    let col = column.saturating_sub(1).min(line_text.len());
    let from = col.saturating_sub(1);
    let window = |i: usize| line_text.get(i..).unwrap_or("");
    [from, col].iter().any(|&i| {
        let w = window(i).trim_start_matches(['-', '+']);
        ["NaN", "Infinity", "nan", "inf"].iter().any(|t| w.starts_with(t))
    })
}

/// Reads a document keeping only the value at `path` (as a JSON value): everything else
/// is skipped, so finding one op in a large file takes no more memory than the op.
struct Follow<'a>(&'a [serde_path_to_error::Segment]);

impl<'de> serde::de::DeserializeSeed<'de> for Follow<'_> {
    type Value = Option<serde_json::Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        use serde::Deserialize;
        match self.0.split_first() {
            None => serde_json::Value::deserialize(d).map(Some),
            Some(_) => d.deserialize_any(self),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for Follow<'_> {
    type Value = Option<serde_json::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        use serde::de::IgnoredAny;
        use serde_path_to_error::Segment;
        let (Segment::Seq { index }, rest) = (&self.0[0], &self.0[1..]) else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(None);
        };
        let mut found = None;
        let mut i = 0;
        loop {
            if i == *index {
                match seq.next_element_seed(Follow(rest))? {
                    Some(v) => found = v,
                    None => break,
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            i += 1;
        }
        Ok(found)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        use serde::de::IgnoredAny;
        use serde_path_to_error::Segment;
        let want = match &self.0[0] {
            Segment::Map { key } => Some(key.as_str()),
            Segment::Enum { variant } => Some(variant.as_str()),
            _ => None,
        };
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if Some(key.as_str()) == want && found.is_none() {
                found = map.next_value_seed(Follow(&self.0[1..]))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
}

/// serde loses the path below an internally tagged enum (and a flattened struct): an
/// error in `{"op": "send", "dst": "x"}` is reported at the op, not at `dst`. Find the
/// field the message is about in the document and add it to the path: the first field,
/// in document order, whose value is the one the message shows.
fn refine_field(node: &serde_json::Value, mut field: String, message: &str) -> String {
    let mut node = node;
    if message.starts_with("missing field") || message.starts_with("unknown variant") {
        return field;
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let (Some(name), serde_json::Value::Object(m)) = (rest.split('`').next(), node) {
            if m.contains_key(name) && !field.ends_with(&format!(".{name}")) {
                return join_field(&field, name);
            }
        }
        return field;
    }
    // Descend while the message is about a field of the current object, not the object.
    while let serde_json::Value::Object(m) = node {
        if shown_value(message).is_some_and(|shown| shown == unexpected(node)) {
            break;
        }
        let Some((key, value)) = m.iter().find(|(_, v)| mentions(message, v)) else { break };
        field = join_field(&field, key);
        node = value;
    }
    field
}

fn join_field(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}

/// The value serde's "invalid type: X, expected Y" / "invalid value: X, expected Y" shows.
fn shown_value(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "))?;
    Some(rest.rsplit_once(", expected").map_or(rest, |(v, _)| v))
}

/// How serde describes a JSON value in "invalid type" messages.
fn unexpected(v: &serde_json::Value) -> String {
    use serde::de::Unexpected;
    match v {
        serde_json::Value::Null => Unexpected::Unit.to_string(),
        serde_json::Value::Bool(b) => Unexpected::Bool(*b).to_string(),
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u).to_string(),
            (_, Some(i), _) => Unexpected::Signed(i).to_string(),
            (_, _, Some(f)) => Unexpected::Float(f).to_string(),
            _ => n.to_string(),
        },
        serde_json::Value::String(s) => Unexpected::Str(s).to_string(),
        serde_json::Value::Array(_) => Unexpected::Seq.to_string(),
        serde_json::Value::Object(_) => Unexpected::Map.to_string(),
    }
}

/// Is `v` the value an error message is about?
fn mentions(message: &str, v: &serde_json::Value) -> bool {
    if let Some(shown) = shown_value(message) {
        return shown == unexpected(v);
    }
    // Custom messages: "... got <value>" or a number standing alone in the text.
    let json = v.to_string();
    if let Some((_, got)) = message.rsplit_once("got ") {
        return got.trim_end_matches(['.', ')']) == json;
    }
    v.is_number() && message.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-')).any(|t| t == json)
}

/// Shortest readable form of a number for an error message: plain when it is of a
/// moderate size, scientific (`1e300`, `2.5e-12`) otherwise; NaN and inf as such.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() { "NaN".into() } else if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    if a == 0.0 || (1e-6..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A memory size for a message: `512 B`, `3.2 MiB`, `1.1 GiB`, `8e6 TiB`.
pub fn fmt_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{} B", fmt_num(v))
    } else if v < 1e6 {
        format!("{:.1} {}", v, UNITS[unit])
    } else {
        format!("{} {}", fmt_num((v * 10.0).round() / 10.0), UNITS[unit])
    }
}

/// Rewrite every number of more than 20 digits in `text` in scientific notation, and
/// serde's `1e+300` as `1e300`, so every message shows huge values the same way.
pub fn tidy_numbers(text: &str) -> String {
    let text = &drop_exponent_plus(text);
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
            j += 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
        }
        let digits = b[i..j].iter().filter(|c| c.is_ascii_digit()).count();
        let ends = j == b.len() || !(b[j].is_ascii_alphanumeric() || b[j] == b'_');
        if digits > 20 && ends {
            if let Ok(v) = text[i..j].parse::<f64>() {
                out.push_str(&text[last..i]);
                out.push_str(&format!("{v:e}"));
                last = j;
            }
        }
        i = j;
    }
    out.push_str(&text[last..]);
    out
}

fn drop_exponent_plus(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let exponent_plus = c == '+'
            && i >= 2
            && b[i - 1] == b'e'
            && b[i - 2].is_ascii_digit()
            && b.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        if !exponent_plus {
            out.push(c);
        }
    }
    out
}

/// Check a number is finite and >= 0 (or > 0 when `positive`).
pub fn check_amount(kind: ErrorKind, field: &str, value: f64, positive: bool) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::new(kind, field, format!("{NON_FINITE}, got {}", fmt_num(value))));
    }
    if positive && value <= 0.0 {
        return Err(Error::new(kind, field, format!("must be > 0, got {}", fmt_num(value))));
    }
    if value < 0.0 {
        return Err(Error::new(kind, field, format!("must be >= 0, got {}", fmt_num(value))));
    }
    Ok(())
}

/// The most characters of one value (a run of non-blank characters) an error message echoes.
pub const ECHO_LIMIT: usize = 100;

/// `value` whole, or cut as [`cut_long_values`] cuts a word (blanks and all) with room for
/// quotes around it: for a message that quotes a value of any size.
pub fn cut_value(value: &str) -> std::borrow::Cow<'_, str> {
    let limit = ECHO_LIMIT - 2;
    if value.len() > limit && value.chars().nth(limit).is_some() {
        std::borrow::Cow::Owned(cut(value, limit, value))
    } else {
        std::borrow::Cow::Borrowed(value)
    }
}

/// The first `limit` - 1 characters of `text`, `…` and ` (N characters)` of `whole`: with
/// the ellipsis, `limit` characters, so that cutting again changes nothing.
fn cut(text: &str, limit: usize, whole: &str) -> String {
    let end = text.char_indices().nth(limit - 1).map_or(text.len(), |(i, _)| i);
    format!("{}… ({} characters)", &text[..end], whole.chars().count())
}

/// The most characters of a whole message part once its values are cut: a value of many
/// short words (a 1 GB XML attribute of numbers and newlines) is not echoed whole either.
pub const MESSAGE_LIMIT: usize = 20 * ECHO_LIMIT;

/// `text` with every run of non-blank characters longer than [`ECHO_LIMIT`] characters cut to
/// its first [`ECHO_LIMIT`] - 1 and `…`, followed by ` (N characters)`: a 200 MB op name is not echoed
/// whole; then the whole text, the same way, to [`MESSAGE_LIMIT`]. Borrowed when nothing is cut.
pub fn cut_long_values(text: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let long = |word: &str, limit: usize| word.len() > limit && word.chars().nth(limit).is_some();
    if text.len() <= ECHO_LIMIT || !text.split(char::is_whitespace).any(|w| long(w, ECHO_LIMIT)) {
        return if long(text, MESSAGE_LIMIT) { Cow::Owned(cut(text, MESSAGE_LIMIT, text)) } else { Cow::Borrowed(text) };
    }
    let mut out = String::with_capacity(ECHO_LIMIT * 4);
    let mut rest = text;
    while !rest.is_empty() && !long(&out, MESSAGE_LIMIT) {
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(word_end);
        if long(word, ECHO_LIMIT) {
            out.push_str(&cut(word, ECHO_LIMIT, word));
        } else {
            out.push_str(word);
        }
        let blank_end = after.find(|c: char| !c.is_whitespace()).unwrap_or(after.len());
        out.push_str(&after[..blank_end]);
        rest = &after[blank_end..];
    }
    if long(&out, MESSAGE_LIMIT) {
        out = cut(&out, MESSAGE_LIMIT, text); // the count is the text's, before any cut
    }
    Cow::Owned(out)
}

/// The longest duration an input may give, in seconds (about 31,700 years; messages say
/// "1e12"): beyond it, the
/// simulated clock would lose all precision and, near 1e308, overflow, so that no event could
/// ever happen again (the run would look like a deadlock).
pub const MAX_SECONDS: f64 = 1e12;

/// Check a duration in seconds is finite, >= 0 and at most [`MAX_SECONDS`].
pub fn check_seconds(kind: ErrorKind, field: &str, value: f64) -> Result<()> {
    check_amount(kind, field, value, false)?;
    if value > MAX_SECONDS {
        return Err(Error::new(
            kind,
            field,
            format!(
                "{} s is too long for any progress to be made (the simulated clock would overflow); must be at most 1e12 s",
                fmt_num(value)
            ),
        ));
    }
    Ok(())
}

/// An empty vector with room for `n` items, or an error naming `field` when the
/// memory cannot be had (instead of aborting the process).
pub fn try_with_capacity<T>(kind: ErrorKind, field: &str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        let bytes = (n as f64) * (std::mem::size_of::<T>() as f64);
        Error::new(kind, field, format!("needs {} of memory, which cannot be allocated", fmt_bytes(bytes)))
    })?;
    Ok(v)
}

/// Can `bytes` of memory be had now? Reserves and frees them: under an address-space
/// limit, or where the kernel refuses an obviously excessive request, this turns what
/// would be an abort later into an error naming `field`.
pub fn check_memory(kind: ErrorKind, field: &str, bytes: f64) -> Result<()> {
    let fail = || {
        Error::new(kind, field, format!("needs about {} of memory, which cannot be allocated", fmt_bytes(bytes)))
    };
    if !(bytes <= isize::MAX as f64) {
        return Err(fail());
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes as usize).map_err(|_| fail())?;
    Ok(())
}

/// `vec![value; n]`, or an error naming `field` when the memory cannot be had.
pub fn try_filled<T: Clone>(kind: ErrorKind, field: &str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = try_with_capacity(kind, field, n)?;
    v.resize(n, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        ranks: Vec<Vec<Op>>,
        #[serde(default)]
        count: usize,
    }

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
    enum Op {
        Send { dst: usize, bytes: f64, #[serde(default)] tag: i64 },
        Sleep { seconds: f64 },
    }

    fn err(text: &str) -> Error {
        parse_json::<Doc>(ErrorKind::Trace, text).unwrap_err()
    }

    #[test]
    fn type_error_in_a_tagged_enum_names_the_field() {
        let e = err(r#"{"ranks": [[{"op": "send", "dst": "x", "bytes": 1}]]}"#);
        assert_eq!(e.field, "ranks[0][0].dst", "{e}");
        assert!(e.reason.starts_with("invalid type: string \"x\", expected usize"), "{e}");
        let e = err(r#"{"ranks": [[], [{"op": "sleep", "seconds": 1}, {"op": "send", "dst": 1, "bytes": 1, "tag": 1.5}]]}"#);
        assert_eq!(e.field, "ranks[1][1].tag", "{e}");
        let e = err(r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 1, "zz": 1}]]}"#);
        assert_eq!(e.field, "ranks[0][0].zz", "{e}");
        assert!(e.reason.starts_with("unknown field `zz`"), "{e}");
        // A missing field stays at the op; the message names the field.
        let e = err(r#"{"ranks": [[{"op": "send", "dst": 1}]]}"#);
        assert_eq!(e.field, "ranks[0][0]", "{e}");
        assert!(e.reason.contains("missing field `bytes`"), "{e}");
        // An error about the op itself is not pushed into one of its fields.
        let e = err(r#"{"ranks": [["send"]]}"#);
        assert_eq!(e.field, "ranks[0][0]", "{e}");
    }

    #[test]
    fn non_finite_numbers_are_named_as_such() {
        for text in [
            r#"{"ranks": [[{"op": "sleep", "seconds": NaN}]]}"#,
            r#"{"ranks": [[{"op": "sleep", "seconds": Infinity}]]}"#,
            r#"{"ranks": [[{"op": "sleep", "seconds": -Infinity}]]}"#,
        ] {
            let e = err(text);
            assert!(e.reason.starts_with(NON_FINITE), "{e}");
            assert!(e.reason.contains("line 1"), "{e}");
            assert!(e.field.starts_with("ranks[0]"), "{e}");
        }
        let e = parse_input::<Doc>(ErrorKind::Trace, r#"{"ranks": [], "count": NaN}"#, Format::Dict).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("count", NON_FINITE), "{e}");
        let e = check_amount(ErrorKind::Platform, "x", f64::INFINITY, false).unwrap_err();
        assert_eq!(e.reason, format!("{NON_FINITE}, got inf"));
        // Other syntax errors stay malformed JSON.
        assert!(err(r#"{"ranks": [[{"op": "sleep", "seconds": Nope}]]}"#).reason.starts_with("malformed JSON"));
    }

    #[test]
    fn huge_numbers_are_shown_in_scientific_notation() {
        let e = err(r#"{"ranks": [], "count": 1e300}"#);
        assert_eq!(e.field, "count");
        assert!(e.reason.contains("`1e300`"), "{e}"); // serde's `1e+300`, tidied
        assert!(e.reason.len() < 120, "{e}");
        let e = check_amount(ErrorKind::Platform, "x", -1e300, false).unwrap_err();
        assert_eq!(e.reason, "must be >= 0, got -1e300");
        assert_eq!(tidy_numbers(&format!("got {} bytes, {}", 1e300, -2.5e-200)), "got 1e300 bytes, -2.5e-200");
        // Moderate numbers, u64 values and numbers inside names stay as they are.
        assert_eq!(tidy_numbers("seed 18446744073709551615, host n123456789012345678901234"), "seed 18446744073709551615, host n123456789012345678901234");
        assert_eq!(tidy_numbers("got `1e+300` and 2.5e+7, c++ and e+1"), "got `1e300` and 2.5e7, c++ and e+1");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_bytes(512.0), "512 B");
        assert_eq!(fmt_bytes(1175584768.0), "1.1 GiB");
        assert_eq!(fmt_num(1e-300), "1e-300");
        assert_eq!(fmt_num(f64::NAN), "NaN");
    }

    #[test]
    fn dict_errors_have_no_positions_file_errors_do() {
        let text = r#"{"ranks": [], "count": -1}"#;
        let e = parse_input::<Doc>(ErrorKind::Trace, text, Format::Json).unwrap_err();
        assert!(e.reason.ends_with("at line 1 column 25"), "{e}");
        let e = parse_input::<Doc>(ErrorKind::Trace, text, Format::Dict).unwrap_err();
        assert!(!e.reason.contains("line"), "{e}");
        assert_eq!(e.field, "count");
    }

    #[test]
    fn toml_errors_give_the_toml_position() {
        let e = parse_toml::<Doc>(ErrorKind::Platform, "ranks = []\ncount = \"x\"\n").unwrap_err();
        assert_eq!(e.field, "count", "{e}");
        assert!(e.reason.contains("expected usize"), "{e}");
        assert!(e.reason.ends_with("at line 2 column 9"), "{e}");
        let e = parse_toml::<Doc>(ErrorKind::Platform, "ranks = []\n\ncount = = 3\n").unwrap_err();
        assert!(e.reason.starts_with("malformed TOML"), "{e}");
        assert!(e.reason.contains("line 3"), "{e}");
        let e = parse_toml::<Doc>(ErrorKind::Platform, "[[ranks]]\n[[ranks]]\nop = \"send\"\n").unwrap_err();
        assert!(e.field.starts_with("ranks"), "{e}");
        let text = "count = 0\n[[ranks]]\n\n[[ranks]]\n";
        assert!(parse_toml::<Doc>(ErrorKind::Platform, text).is_err());
        let e = parse_toml::<Doc>(ErrorKind::Platform, "ranks = [[{op = \"send\", dst = -1, bytes = 1}]]\n").unwrap_err();
        assert_eq!(e.field, "ranks[0][0].dst", "{e}");
        assert!(e.reason.contains("line 1"), "{e}");
        let e = parse_toml::<Doc>(ErrorKind::Platform, "ranks = [[{op = \"sleep\", seconds = nan}]]\ncount = inf\n").unwrap_err();
        assert_eq!(e.field, "count", "{e}");
    }

    #[test]
    fn nesting_beyond_the_limit_is_named_in_json_and_toml() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        // MAX_NESTING levels are read (the error is then about the value, not its depth).
        let e = err(&format!(r#"{{"ranks": {}}}"#, nested(MAX_NESTING - 1)));
        assert!(!e.reason.contains("nested"), "{e}");
        for text in [format!(r#"{{"ranks": {}}}"#, nested(MAX_NESTING)), format!(r#"{{"ranks": {}}}"#, nested(100_000))] {
            let e = err(&text);
            assert_eq!(e.field, "", "{e}");
            assert_eq!(e.reason, format!("nested more than {MAX_NESTING} levels deep (the limit for arrays and objects) at line 1 column {}", 11 + MAX_NESTING - 1));
        }
        // Brackets inside strings do not nest; a dict's error has no position.
        assert!(json_too_deep(&format!(r#"{{"a": "{}\""}}"#, "[".repeat(1000)), true).is_none());
        let e = parse_input::<Doc>(ErrorKind::Trace, &format!(r#"{{"ranks": {}}}"#, nested(MAX_NESTING)), Format::Dict).unwrap_err();
        assert!(e.reason.ends_with("(the limit for arrays and objects)"), "{e}");
        // TOML: tables and arrays, 80 deep, are read (the error is then about the value).
        let deep = |at: &str| format!("nested more than {MAX_NESTING} levels deep (the limit for tables and arrays) at {at}");
        let toml_text = |n: usize| format!("count = 1\nranks = {}\n", nested(n));
        assert!(!parse_toml::<Doc>(ErrorKind::Platform, &toml_text(MAX_NESTING)).unwrap_err().reason.contains("nested"));
        let keys = |n: usize, key: &str| vec![key; n].join(".");
        let headed = |n: usize| format!("[{}]\nx = {}\n", keys(MAX_NESTING / 2, "h"), nested(n));
        assert_eq!(toml_too_deep(&format!("{} = 1\n[{}]\n{}", keys(MAX_NESTING, "k"), keys(MAX_NESTING, "h"), headed(40))), None);
        // Arrays (the toml crate's limit), keys of a dotted key or header (the crate's, which
        // gives no position), and these together: refused at the 81st level.
        for (text, at) in [
            (toml_text(MAX_NESTING + 1), format!("line 2 column {}", 8 + MAX_NESTING + 1)),
            (toml_text(100_000), format!("line 2 column {}", 8 + MAX_NESTING + 1)),
            (format!("# a.b.c\ncount = 1\n{} = 1\n", keys(MAX_NESTING + 1, "k")), format!("line 3 column {}", 2 * MAX_NESTING + 1)),
            (format!("\"x.y\" = 2\n[{}]\n", keys(1_000_000, "k")), format!("line 2 column {}", 2 * MAX_NESTING + 2)),
            (headed(MAX_NESTING / 2 + 1), format!("line 2 column {}", 4 + MAX_NESTING / 2 + 1)),
        ] {
            let e = parse_toml::<Doc>(ErrorKind::Platform, &text).unwrap_err();
            assert_eq!((e.field.as_str(), e.reason.as_str()), ("", deep(&at).as_str()));
            assert_eq!(toml_too_deep(&text), Some(e.reason));
        }
        // 79 inline tables, each behind a dotted key of 79 keys: 6,000 tables deep, each part
        // within the crate's limits (serde's recursion over it overflowed the stack).
        let mut value = String::from("1");
        for _ in 0..MAX_NESTING - 1 {
            value = format!("{{{} = {value}}}", keys(MAX_NESTING - 1, "k"));
        }
        let e = parse_input::<serde_json::Value>(ErrorKind::Platform, &format!("x = {value}\n"), Format::Toml).unwrap_err();
        assert!(e.reason.starts_with(&deep("line 1 column")), "{e}");
        assert_eq!(toml_too_deep("count = \n"), None); // malformed, but not for its depth
    }

    #[test]
    fn failed_reservations_are_errors() {
        let e = try_with_capacity::<u64>(ErrorKind::Platform, "cluster.count", usize::MAX / 4).unwrap_err();
        assert_eq!(e.field, "cluster.count");
        assert!(e.reason.contains("cannot be allocated"), "{e}");
        assert_eq!(try_filled(ErrorKind::Platform, "x", 3, 7u8).unwrap(), vec![7, 7, 7]);
        assert!(check_memory(ErrorKind::Multicast, "", 1e6).is_ok());
        for bytes in [1e18, 1e300, f64::INFINITY, f64::NAN] {
            let e = check_memory(ErrorKind::Multicast, "nodes", bytes).unwrap_err();
            assert_eq!(e.field, "nodes");
            assert!(e.reason.contains("cannot be allocated"), "{e}");
        }
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        let op = "é".repeat(250);
        let e = Error::new(ErrorKind::Trace, format!("ranks[0].{op}"), format!("unknown variant `{op}`, expected one of `send`"));
        // The word "`éé…é`," is 253 characters: its first 99 are kept, with the ellipsis.
        assert_eq!(e.reason, format!("unknown variant `{}… (253 characters) expected one of `send`", "é".repeat(98)));
        assert_eq!(e.field, format!("ranks[0].{}… (259 characters)", "é".repeat(90)));
        // Short words and the blanks between them are kept as written.
        assert!(matches!(cut_long_values("a  b\tc"), std::borrow::Cow::Borrowed("a  b\tc")));
        let exact = "x".repeat(ECHO_LIMIT);
        assert_eq!(cut_long_values(&exact), exact);
        // A value of many short words is cut as a whole, counted before any cut.
        let words = format!("`{}` is not a number", "1 ".repeat(1 << 20));
        let head = "1 ".repeat(MESSAGE_LIMIT / 2);
        assert_eq!(cut_long_values(&words), format!("`{}… ({} characters)", &head[..MESSAGE_LIMIT - 2], words.len()));
        let mixed = format!("{} {}", "y".repeat(200), "1 ".repeat(1 << 20));
        assert!(cut_long_values(&mixed).ends_with(&format!("… ({} characters)", mixed.len())));
        assert!(cut_long_values(&mixed).chars().count() < MESSAGE_LIMIT + 30);
        let at_limit = "1 ".repeat(MESSAGE_LIMIT / 2);
        assert_eq!(cut_long_values(&at_limit), at_limit);
    }

    #[test]
    fn a_json_error_on_a_huge_op_name_echoes_about_100_characters() {
        let text = format!(r#"{{"ranks": [[{{"op": "{}"}}]]}}"#, "x".repeat(1_000_000));
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        enum Op {
            Send,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct One {
            op: Op,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Doc {
            ranks: Vec<Vec<One>>,
        }
        let e = parse_json::<Doc>(ErrorKind::Trace, &text).unwrap_err();
        assert!(e.to_string().len() < 300, "{}", &e.to_string()[..300]);
        assert!(e.reason.starts_with(&format!("unknown variant `{}… (1000003 characters) expected", "x".repeat(ECHO_LIMIT - 2))), "{}", e.reason);
    }
}
