//! The simulated run as an OTF2 archive (`simulate … --timeline FILE.otf2`), for Vampir and
//! the other OTF2 readers, written through the OTF2 library as the replay streams it
//! ([`TimelineSink`]): one location per rank (in a location group per rank, under a system
//! tree node per host), each trace operation as an `Enter`/`Leave` of a region named as
//! Score-P names the MPI call (`MPI_Send`, `MPI_Bcast`, …; `compute` and `sleep` as user
//! regions), and each message as an `MpiSend` on the sender when it is posted and an
//! `MpiRecv` on the receiver when its receive completes, with its size and tag (a
//! collective's messages carry tag 2^32 − 1) on `MPI_COMM_WORLD`. Times are in nanoseconds.
//!
//! Events go to the library's per-location buffers as they come; the definitions (a few
//! per rank) are written at the end. The archive is `NAME.otf2` (the anchor), `NAME.def` and
//! the folder `NAME/`, NAME being the path's stem for a `*.otf2` path and its whole file name
//! otherwise (a partial name the caller renames once complete, `archive_entries`); an
//! archive left unfinished by an error is removed.

use std::ffi::CString;
use std::path::{Path, PathBuf};


use crate::mpi::otf2::ffi::{self, Lib};
use crate::error::{Error, ErrorKind, Result};
use crate::mpi::ops::OP_NAMES;
use super::{TimelineMessage, TimelineRun, TimelineSink};

/// Ticks per second of the archive's clock.
const RESOLUTION: f64 = 1e9;
const UNDEFINED_U32: u32 = u32::MAX;
const UNDEFINED_U64: u64 = u64::MAX;
/// The tag of a collective's messages (they have none).
const COLLECTIVE_TAG: u32 = u32::MAX;
const PARADIGM_USER: u8 = 1;
const PARADIGM_MPI: u8 = 4;
const ROLE_FUNCTION: u8 = 1;
const ROLE_COLL_OTHER: u8 = 26;
const ROLE_POINT2POINT: u8 = 28;

/// The region Score-P names for trace operation `op` (an [`OP_NAMES`] name).
pub fn region_name(op: &str) -> String {
    match op {
        "compute" | "sleep" => op.to_string(),
        "reduce_scatter" => "MPI_Reduce_scatter".into(),
        "comm_split" => "MPI_Comm_split".into(),
        "comm_dup" => "MPI_Comm_dup".into(),
        _ => {
            let mut chars = op.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or('_');
            format!("MPI_{first}{}", chars.as_str())
        }
    }
}

fn role(op: &str) -> (u8, u8) {
    match op {
        "compute" | "sleep" => (ROLE_FUNCTION, PARADIGM_USER),
        "send" | "isend" | "recv" | "irecv" | "sendrecv" => (ROLE_POINT2POINT, PARADIGM_MPI),
        "wait" | "waitall" | "waitany" | "test" | "comm_split" | "comm_dup" => (ROLE_FUNCTION, PARADIGM_MPI),
        _ => (ROLE_COLL_OTHER, PARADIGM_MPI),
    }
}

/// An OTF2 archive being written.
pub struct Otf2Writer {
    lib: &'static Lib,
    /// Where it is written (directory, archive name) and the name errors show.
    dir: PathBuf,
    name: String,
    shown_as: String,
    archive: *mut ffi::Opaque,
    writers: Vec<*mut ffi::Opaque>,
    /// Per rank: the region it is in (an op code), and its events so far.
    open: Vec<Option<u8>>,
    events: Vec<u64>,
    host_names: Vec<String>,
    rank_hosts: Vec<usize>,
    finished: bool,
}

// SAFETY: the archive and its writers are used by one thread at a time (the sink is owned by
// the replay that calls it); OTF2 handles carry no thread affinity.
unsafe impl Send for Otf2Writer {}

fn out_err(shown_as: &str, reason: impl Into<String>) -> Error {
    Error { kind: ErrorKind::Output, source: shown_as.to_string(), field: String::new(), reason: reason.into() }
}

fn ticks(time: f64) -> u64 {
    (time * RESOLUTION).round().max(0.0) as u64
}

/// Opens an archive at `path` (its anchor file; `shown_as` is the final name) with the
/// library set by [`ffi::use_library`].
pub fn open(path: &Path, shown_as: &str) -> Result<Box<dyn TimelineSink + Send>> {
    let lib = ffi::library().map_err(|e| Error { source: shown_as.to_string(), ..e })?;
    let (dir, name) = archive_name(path);
    Ok(Box::new(Otf2Writer {
        lib,
        dir,
        name,
        shown_as: shown_as.to_string(),
        archive: std::ptr::null_mut(),
        writers: Vec::new(),
        open: Vec::new(),
        events: Vec::new(),
        host_names: Vec::new(),
        rank_hosts: Vec::new(),
        finished: false,
    }))
}

/// The directory and archive name of an archive written at `path`: its stem for a `*.otf2`
/// path (the anchor file is then `path`), else its whole file name.
pub fn archive_name(path: &Path) -> (PathBuf, String) {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let is_anchor = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("otf2"));
    let name = if is_anchor { path.file_stem() } else { path.file_name() };
    (dir, name.and_then(|s| s.to_str()).unwrap_or("traces").to_string())
}

/// The pre-flush callback: always flush the buffers to the files.
unsafe extern "C" fn pre_flush(_: ffi::Ud, _file_type: u8, _location: u64, _caller: ffi::Ud, _final: bool) -> u8 {
    1 // OTF2_FLUSH
}

impl Otf2Writer {
    fn check(&self, code: ffi::ErrorCode, what: &str) -> Result<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(out_err(&self.shown_as, format!("{what}: {}", self.lib.describe(code))))
        }
    }

    /// The archive's three entries: anchor file, global definitions, folder of the locations.
    fn entries(dir: &Path, name: &str) -> [PathBuf; 3] {
        [dir.join(format!("{name}.otf2")), dir.join(format!("{name}.def")), dir.join(name)]
    }

    fn remove(dir: &Path, name: &str) {
        for p in Self::entries(dir, name) {
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(&p);
            } else {
                let _ = std::fs::remove_file(&p);
            }
        }
    }

    fn write_definitions(&mut self, makespan: f64) -> Result<()> {
        let lib = self.lib;
        // Every string first, then the definitions by kind, in the order OTF2 lists them.
        let mut strings: Vec<CString> = Vec::new();
        let mut string = |s: &str| -> u32 {
            strings.push(CString::new(s.replace('\0', " ")).unwrap_or_default());
            strings.len() as u32 - 1
        };
        let empty = string("");
        let machine = string("commaware simulation");
        let class_machine = string("machine");
        let class_node = string("node");
        let thread = string("Master thread");
        let world = string("MPI_COMM_WORLD");
        let hosts: Vec<u32> = self.host_names.iter().map(|h| string(h)).collect();
        let groups: Vec<u32> = (0..self.events.len()).map(|r| string(&format!("MPI Rank {r}"))).collect();
        let regions: Vec<u32> = OP_NAMES.iter().map(|op| string(&region_name(op))).collect();
        let p = self.events.len();
        // SAFETY: the archive is open; every pointer passed lives across its call.
        unsafe {
            let w = (lib.archive_global_def_writer)(self.archive);
            if w.is_null() {
                return Err(out_err(&self.shown_as, "cannot write the global definitions"));
            }
            self.check((lib.def_clock_properties)(w, RESOLUTION as u64, 0, ticks(makespan), UNDEFINED_U64), "clock")?;
            for (id, text) in strings.iter().enumerate() {
                self.check((lib.def_string)(w, id as u32, text.as_ptr()), "string definition")?;
            }
            self.check((lib.def_system_tree_node)(w, 0, machine, class_machine, UNDEFINED_U32), "system tree")?;
            for (h, &name) in hosts.iter().enumerate() {
                self.check((lib.def_system_tree_node)(w, h as u32 + 1, name, class_node, 0), "system tree")?;
            }
            for (r, &name) in groups.iter().enumerate() {
                let node = self.rank_hosts.get(r).map(|&h| h as u32 + 1).unwrap_or(0);
                self.check((lib.def_location_group)(w, r as u32, name, 1, node, UNDEFINED_U32), "location group")?;
            }
            for r in 0..p {
                self.check((lib.def_location)(w, r as u64, thread, 1, self.events[r], r as u32), "location")?;
            }
            for (code, op) in OP_NAMES.iter().enumerate() {
                let (role, paradigm) = role(op);
                let n = regions[code];
                self.check((lib.def_region)(w, code as u32, n, n, empty, role, paradigm, 0, empty, 0, 0), "region")?;
            }
            let ranks: Vec<u64> = (0..p as u64).collect();
            self.check((lib.def_group)(w, 0, empty, 4, PARADIGM_MPI, 0, p as u32, ranks.as_ptr()), "group")?;
            self.check((lib.def_group)(w, 1, empty, 5, PARADIGM_MPI, 0, p as u32, ranks.as_ptr()), "group")?;
            self.check((lib.def_comm)(w, 0, world, 1, UNDEFINED_U32, 0), "communicator")?;
        }
        Ok(())
    }
}

impl TimelineSink for Otf2Writer {
    fn begin(&mut self, run: &TimelineRun<'_>) -> Result<()> {
        let lib = self.lib;
        Self::remove(&self.dir, &self.name); // OTF2 does not write over an archive
        let dir = CString::new(self.dir.to_string_lossy().as_bytes()).map_err(|_| out_err(&self.shown_as, "the path holds a NUL byte"))?;
        let name = CString::new(self.name.as_bytes()).map_err(|_| out_err(&self.shown_as, "the name holds a NUL byte"))?;
        self.host_names = run.host_names.to_vec();
        self.rank_hosts = run.rank_hosts.to_vec();
        let p = run.rank_hosts.len();
        // SAFETY: the reader protocol for writing: open, callbacks, def and event files, one
        // event writer per location; the flush callbacks struct is static.
        unsafe {
            self.archive = (lib.archive_open)(dir.as_ptr(), name.as_ptr(), 0, 1 << 20, 4 << 20, 1, 1);
            if self.archive.is_null() {
                return Err(out_err(&self.shown_as, "OTF2 cannot create the archive here"));
            }
            static FLUSH: ffi::FlushCallbacks = ffi::FlushCallbacks { pre_flush: Some(pre_flush), post_flush: None };
            self.check((lib.archive_set_flush)(self.archive, &FLUSH, std::ptr::null_mut()), "flush callbacks")?;
            self.check((lib.archive_serial)(self.archive), "collective callbacks")?;
            self.check((lib.archive_open_def_files)(self.archive), "definition files")?;
            self.check((lib.archive_open_evt_files)(self.archive), "event files")?;
            for r in 0..p {
                let w = (lib.archive_evt_writer)(self.archive, r as u64);
                if w.is_null() {
                    return Err(out_err(&self.shown_as, format!("cannot write the events of rank {r}")));
                }
                self.writers.push(w);
            }
        }
        self.open = vec![None; p];
        self.events = vec![0; p];
        Ok(())
    }

    fn enter(&mut self, time: f64, rank: u32, op: u8) -> Result<()> {
        let r = rank as usize;
        self.open[r] = Some(op);
        self.events[r] += 1;
        // SAFETY: a writer of this archive.
        let code = unsafe { (self.lib.evt_enter)(self.writers[r], std::ptr::null_mut(), ticks(time), op as u32) };
        self.check(code, "enter")
    }

    fn leave(&mut self, time: f64, rank: u32) -> Result<()> {
        let r = rank as usize;
        let Some(op) = self.open[r].take() else { return Ok(()) };
        self.events[r] += 1;
        // SAFETY: a writer of this archive.
        let code = unsafe { (self.lib.evt_leave)(self.writers[r], std::ptr::null_mut(), ticks(time), op as u32) };
        self.check(code, "leave")
    }

    fn send(&mut self, m: &TimelineMessage) -> Result<()> {
        let r = m.src_rank as usize;
        self.events[r] += 1;
        let tag = if m.tag < 0 { COLLECTIVE_TAG } else { m.tag.min(u32::MAX as i64 - 1) as u32 };
        // SAFETY: a writer of this archive.
        let code = unsafe { (self.lib.evt_mpi_send)(self.writers[r], std::ptr::null_mut(), ticks(m.posted), m.dst_rank, 0, tag, m.bytes as u64) };
        self.check(code, "send")
    }

    fn receive(&mut self, m: &TimelineMessage) -> Result<()> {
        let r = m.dst_rank as usize;
        self.events[r] += 1;
        let tag = if m.tag < 0 { COLLECTIVE_TAG } else { m.tag.min(u32::MAX as i64 - 1) as u32 };
        // SAFETY: a writer of this archive.
        let code = unsafe { (self.lib.evt_mpi_recv)(self.writers[r], std::ptr::null_mut(), ticks(m.received), m.src_rank, 0, tag, m.bytes as u64) };
        self.check(code, "receive")
    }

    fn end(&mut self, makespan: f64) -> Result<()> {
        let lib = self.lib;
        // SAFETY: closing what `begin` opened, once.
        unsafe {
            for (r, w) in std::mem::take(&mut self.writers).into_iter().enumerate() {
                self.check((lib.archive_close_evt_writer)(self.archive, w), &format!("events of rank {r}"))?;
                let d = (lib.archive_def_writer)(self.archive, r as u64);
                if !d.is_null() {
                    (lib.archive_close_def_writer)(self.archive, d);
                }
            }
            self.check((lib.archive_close_evt_files)(self.archive), "event files")?;
            self.check((lib.archive_close_def_files)(self.archive), "definition files")?;
            self.write_definitions(makespan)?;
            let code = (lib.archive_close)(self.archive);
            self.archive = std::ptr::null_mut();
            self.check(code, "closing the archive")?;
        }
        self.finished = true;
        Ok(())
    }
}

impl Drop for Otf2Writer {
    fn drop(&mut self) {
        if !self.archive.is_null() {
            // SAFETY: an archive left open by an error: close it, then remove what it wrote.
            unsafe { (self.lib.archive_close)(self.archive) };
        }
        if !self.finished {
            Self::remove(&self.dir, &self.name);
        }
    }
}
