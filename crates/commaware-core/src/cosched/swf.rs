//! The Standard Workload Format of the Parallel Workloads Archive (Feitelson et al.):
//! one job per line, 18 whitespace-separated numeric fields, `-1` for a missing value,
//! and comment lines starting with `;` (the header). Read and written here, in Rust.
//!
//! A record becomes a [`Job`] as paper 002's notes say:
//! - processors = field 8 (requested processors) if positive, else field 5 (allocated);
//! - runtime = field 4; requested time = field 9 if positive, else the runtime;
//! - memory per process = field 10 (requested memory, KB) if positive, else field 7
//!   (used memory, KB), else 0; divided by 1024 to give MB;
//! - a job with a negative runtime, no processor count or no submit time is skipped and
//!   counted ([`Skipped`]); a job with a zero runtime is kept. Jobs larger than the
//!   cluster are skipped (and counted) when the cluster is known, by the simulator.
//!
//! A line that is not 18 numbers is an error naming the line number and the field.

use crate::error::{fmt_num, Error, Result};
use crate::network::platform::MAX_EXACT;

use super::workload::{Job, Skipped, MAX_JOBS, MAX_PROCS};

/// The 18 SWF fields, in order (field k of the format is `FIELDS[k - 1]`).
pub const FIELDS: [&str; 18] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time used",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job",
    "think time",
];

/// A parsed SWF log: the comment lines as written and every record's 18 fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SwfLog {
    /// Every comment line, `;` included, in file order.
    pub header: Vec<String>,
    /// The 18 fields of each record, in file order.
    pub records: Vec<[f64; 18]>,
    /// The 1-based line number of each record.
    pub lines: Vec<u32>,
}

fn field_name(k: usize) -> String {
    format!("field {} ({})", k + 1, FIELDS[k])
}

impl SwfLog {
    /// Parse SWF text. Errors give `line N` (and the field) in [`Error::field`].
    pub fn parse(text: &str) -> Result<SwfLog> {
        let mut log = SwfLog::default();
        // An estimate that avoids most reallocations (a record line is ~60-100 bytes).
        let guess = (text.len() / 64).min(MAX_JOBS);
        log.records.reserve(guess);
        log.lines.reserve(guess);
        for (n, raw) in text.lines().enumerate() {
            let lineno = n + 1;
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with(';') {
                log.header.push(raw.trim_end().to_string());
                continue;
            }
            if log.records.len() >= MAX_JOBS {
                return Err(Error::workload(format!("line {lineno}"), format!("more than {MAX_JOBS} (2^24) records")));
            }
            let mut rec = [0.0f64; 18];
            let mut count = 0usize;
            for token in line.split_ascii_whitespace() {
                if count < 18 {
                    rec[count] = parse_number(token).map_err(|why| {
                        Error::workload(format!("line {lineno}, {}", field_name(count)), format!("{why}: `{}`", shorten(token)))
                    })?;
                }
                count += 1;
            }
            if count != 18 {
                return Err(Error::workload(format!("line {lineno}"), format!("expected 18 fields, got {count}")));
            }
            log.records.push(rec);
            log.lines.push(u32::try_from(lineno).unwrap_or(u32::MAX));
        }
        Ok(log)
    }

    /// The records as jobs (skipping, and counting, those that cannot be simulated).
    /// Errors name the line and the field: a job number or processor count that is not a
    /// whole number, a value beyond 2^53.
    pub fn jobs(&self) -> Result<(Vec<Job>, Skipped)> {
        let mut jobs = Vec::with_capacity(self.records.len());
        let mut skipped = Skipped::default();
        // A job number names one job (as in a JSON workload), skipped records included.
        let mut first_line: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
        for (rec, &lineno) in self.records.iter().zip(&self.lines) {
            let err = |k: usize, why: String| Error::workload(format!("line {lineno}, {}", field_name(k)), why);
            for (k, &v) in rec.iter().enumerate() {
                if v.abs() > MAX_EXACT {
                    return Err(err(k, format!("must be at most 2^53 in size, got {}", fmt_num(v))));
                }
            }
            let id = rec[0];
            if id < 0.0 || id.fract() != 0.0 {
                return Err(err(0, format!("must be a whole number >= 0, got {}", fmt_num(id))));
            }
            if let Some(first) = first_line.insert(id as u64, lineno) {
                return Err(err(0, format!("job id {} is used twice (first on line {first})", fmt_num(id))));
            }
            let runtime = rec[3];
            if runtime < 0.0 {
                skipped.negative_runtime += 1;
                continue;
            }
            let (k, procs) = if rec[7] > 0.0 { (7, rec[7]) } else { (4, rec[4]) };
            if procs <= 0.0 {
                skipped.no_procs += 1;
                continue;
            }
            if procs.fract() != 0.0 || procs > MAX_PROCS as f64 {
                return Err(err(k, format!("must be a whole number of processors up to 2^24, got {}", fmt_num(procs))));
            }
            let submit = rec[1];
            if submit < 0.0 {
                skipped.no_submit += 1;
                continue;
            }
            let requested = if rec[8] > 0.0 { rec[8] } else { runtime };
            let memory_kb = if rec[9] > 0.0 {
                rec[9]
            } else if rec[6] > 0.0 {
                rec[6]
            } else {
                0.0
            };
            jobs.push(Job {
                id: id as u64,
                submit_s: submit,
                procs: procs as u64,
                memory_mb: memory_kb / 1024.0,
                runtime_s: runtime,
                requested_s: Some(requested),
                benchmark: None,
                class: None,
                program: None,
                trace: None,
                start_s: None,
                hosts: None,
            });
        }
        Ok((jobs, skipped))
    }

    /// SWF records for jobs of a JSON workload (fields it does not know are -1).
    pub fn from_jobs(jobs: &[Job], note: &str) -> SwfLog {
        let max_procs = jobs.iter().map(|j| j.procs).max().unwrap_or(0);
        let mut header = vec!["; Version: 2.2".to_string()];
        for line in note.lines() {
            header.push(format!("; Note: {line}"));
        }
        header.push(format!("; MaxJobs: {}", jobs.len()));
        header.push(format!("; MaxRecords: {}", jobs.len()));
        header.push(format!("; MaxProcs: {max_procs}"));
        let mut log = SwfLog { header, ..SwfLog::default() };
        for (i, j) in jobs.iter().enumerate() {
            let mut r = [-1.0f64; 18];
            r[0] = j.id as f64;
            r[1] = j.submit_s;
            r[3] = j.runtime_s;
            r[4] = j.procs as f64;
            r[7] = j.procs as f64;
            r[8] = j.requested();
            if j.memory_mb > 0.0 {
                r[9] = j.memory_mb * 1024.0;
            }
            log.records.push(r);
            log.lines.push(u32::try_from(i + 1 + log.header.len()).unwrap_or(u32::MAX));
        }
        log
    }

    /// The log as SWF text: the header lines, then one line per record. Whole numbers are
    /// written without a decimal point; others in the shortest form that reads back exactly.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.records.len() * 64 + self.header.len() * 40);
        for h in &self.header {
            out.push_str(h);
            out.push('\n');
        }
        for rec in &self.records {
            for (k, &v) in rec.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                if v.fract() == 0.0 && v.abs() <= MAX_EXACT {
                    out.push_str(&(v as i64).to_string());
                } else {
                    out.push_str(&v.to_string());
                }
            }
            out.push('\n');
        }
        out
    }
}

fn shorten(token: &str) -> String {
    if token.len() <= 40 {
        token.to_string()
    } else {
        let mut end = 40;
        while !token.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &token[..end])
    }
}

/// A number of an SWF field: an integer or a decimal, finite.
fn parse_number(token: &str) -> std::result::Result<f64, &'static str> {
    // Fast path: a plain (possibly negative) integer, by far the most common field.
    let (neg, digits) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token),
    };
    if !digits.is_empty() && digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) {
        let mut v: u64 = 0;
        for b in digits.bytes() {
            v = v * 10 + u64::from(b - b'0');
        }
        let v = v as f64;
        return Ok(if neg { -v } else { v });
    }
    let first_ok = token.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'-' || b == b'+' || b == b'.');
    match token.parse::<f64>() {
        Ok(v) if first_ok && v.is_finite() => Ok(v),
        Ok(_) if first_ok => Err("not a finite number"),
        _ => Err("not a number"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "; Version: 2.2\n; MaxProcs: 8\n\
        1 0 5 100 4 -1 2048 -1 200 -1 1 1 1 1 1 -1 -1 -1\n\
        2 10 -1 50.5 -1 -1 -1 2 -1 4096 1 1 1 1 1 -1 -1 -1\n\
        ; a comment in the middle\n\
        3 20 -1 -1 2 -1 -1 2 100 -1 0 1 1 1 1 -1 -1 -1\n\
        4 30 -1 0 1 -1 -1 -1 -1 -1 1 1 1 1 1 -1 -1 -1\n\
        5 40 -1 10 -1 -1 -1 -1 10 -1 1 1 1 1 1 -1 -1 -1\n";

    #[test]
    fn reads_records_and_maps_fields() {
        let log = SwfLog::parse(SAMPLE).unwrap();
        assert_eq!(log.header, vec!["; Version: 2.2", "; MaxProcs: 8", "; a comment in the middle"]);
        assert_eq!(log.records.len(), 5);
        assert_eq!(log.lines, vec![3, 4, 6, 7, 8]);
        let (jobs, skipped) = log.jobs().unwrap();
        // Job 3 has a negative runtime, job 5 no processor count.
        assert_eq!(skipped, Skipped { negative_runtime: 1, no_procs: 1, no_submit: 0, too_large: 0 });
        assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), vec![1, 2, 4]);
        // Job 1: no requested processors -> allocated (4); requested time 200; used memory 2048 KB.
        assert_eq!((jobs[0].procs, jobs[0].requested(), jobs[0].memory_mb), (4, 200.0, 2.0));
        // Job 2: requested processors 2; no requested time -> the runtime; requested memory 4096 KB.
        assert_eq!((jobs[1].procs, jobs[1].runtime_s, jobs[1].requested(), jobs[1].memory_mb), (2, 50.5, 50.5, 4.0));
        // Job 4: zero runtime is kept.
        assert_eq!((jobs[2].runtime_s, jobs[2].procs), (0.0, 1));
    }

    #[test]
    fn round_trip() {
        let log = SwfLog::parse(SAMPLE).unwrap();
        let text = log.to_text();
        let again = SwfLog::parse(&text).unwrap();
        assert_eq!(again.header, log.header);
        assert_eq!(again.records, log.records);
        assert!(text.contains("2 10 -1 50.5 -1"), "{text}");
        // JSON jobs -> SWF -> jobs.
        let (jobs, _) = log.jobs().unwrap();
        let back = SwfLog::parse(&SwfLog::from_jobs(&jobs, "test").to_text()).unwrap().jobs().unwrap().0;
        assert_eq!(back, jobs);
    }

    #[test]
    fn malformed_lines_name_line_and_field() {
        let e = SwfLog::parse("; h\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1\n").unwrap_err();
        assert_eq!(e.field, "line 2", "{e}");
        assert!(e.reason.contains("expected 18 fields, got 17"), "{e}");
        let e = SwfLog::parse("1 0 -1 ten 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n").unwrap_err();
        assert_eq!(e.field, "line 1, field 4 (run time)", "{e}");
        assert!(e.reason.contains("not a number: `ten`"), "{e}");
        let e = SwfLog::parse("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1 7\n").unwrap_err();
        assert!(e.reason.contains("got 19"), "{e}");
        let e = SwfLog::parse("1 0 -1 10 nan -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n").unwrap_err();
        assert_eq!(e.field, "line 1, field 5 (allocated processors)", "{e}");
        let e = SwfLog::parse("\n\n1 0 -1 10 1.5 -1 -1 -1 10 -1 1 1 1 1 1 -1 -1 -1\n").unwrap().jobs().unwrap_err();
        assert_eq!(e.field, "line 3, field 5 (allocated processors)", "{e}");
        assert!(e.reason.contains("whole number"), "{e}");
        let e = SwfLog::parse("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n; c\n1 5 -1 -3 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
            .unwrap()
            .jobs()
            .unwrap_err();
        assert_eq!(e.field, "line 3, field 1 (job number)", "{e}");
        assert!(e.reason.contains("job id 1 is used twice (first on line 1)"), "{e}");
        assert_eq!(parse_number("-12").unwrap(), -12.0);
        assert_eq!(parse_number("358.00").unwrap(), 358.0);
        assert!(parse_number("inf").is_err() && parse_number("").is_err() && parse_number("1e999").is_err());
    }
}
