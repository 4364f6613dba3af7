//! The few C functions of the OTF2 library (3.x) that the reader and the writer call,
//! declared from OTF2 3.0's headers (`otf2/OTF2_Reader.h`, `OTF2_GlobalDefReaderCallbacks.h`,
//! `OTF2_GlobalEvtReaderCallbacks.h`, `OTF2_Archive.h`, `OTF2_EvtWriter.h`,
//! `OTF2_GlobalDefWriter.h`), and the library loaded at run time with `dlopen`: the core
//! builds and runs without OTF2, and only an OTF2 command needs it. The caller gives the
//! path (the Python side finds the `otf2` wheel's bundled library, else the system's).

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::error::{Error, ErrorKind, Result};

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}
const RTLD_LAZY: c_int = 1;

/// `OTF2_ErrorCode`: 0 is success.
pub type ErrorCode = c_int;
/// `OTF2_CallbackCode`: what a callback returns.
pub type CallbackCode = c_int;
pub const CALLBACK_SUCCESS: CallbackCode = 0;
pub const CALLBACK_INTERRUPT: CallbackCode = 1;
/// `OTF2_ERROR_INTERRUPTED_BY_CALLBACK`: a reading stopped because a callback asked to.
pub const ERROR_INTERRUPTED_BY_CALLBACK: ErrorCode = 92;

pub type Opaque = c_void;
pub type Ud = *mut c_void;
pub type Attr = *mut c_void;

/// `OTF2_ErrorCallback` (OTF2_ErrorCodes.h); the last argument is a `va_list`, passed as a pointer.
pub type ErrorCallback = unsafe extern "C" fn(Ud, *const c_char, u64, *const c_char, ErrorCode, *const c_char, *mut c_void) -> ErrorCode;

/// Keeps OTF2 from printing its own messages on stderr: its error codes come back from the
/// calls, and our errors say what failed.
unsafe extern "C" fn quiet(_: Ud, _: *const c_char, _: u64, _: *const c_char, code: ErrorCode, _: *const c_char, _: *mut c_void) -> ErrorCode {
    code
}

/// `OTF2_FlushCallbacks` (OTF2_Callbacks.h): the pre-flush callback returns `OTF2_FlushType`.
#[repr(C)]
pub struct FlushCallbacks {
    pub pre_flush: Option<unsafe extern "C" fn(Ud, u8, u64, Ud, bool) -> u8>,
    pub post_flush: Option<unsafe extern "C" fn(Ud, u8, u64) -> u64>,
}

// OTF2_GlobalDefReaderCallbacks.h
pub type DefClockProperties = unsafe extern "C" fn(Ud, u64, u64, u64, u64) -> CallbackCode;
pub type DefString = unsafe extern "C" fn(Ud, u32, *const c_char) -> CallbackCode;
pub type DefLocationGroup = unsafe extern "C" fn(Ud, u32, u32, u8, u32, u32) -> CallbackCode;
pub type DefLocation = unsafe extern "C" fn(Ud, u64, u32, u8, u64, u32) -> CallbackCode;
pub type DefRegion = unsafe extern "C" fn(Ud, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> CallbackCode;
pub type DefGroup = unsafe extern "C" fn(Ud, u32, u32, u8, u8, u32, u32, *const u64) -> CallbackCode;
pub type DefComm = unsafe extern "C" fn(Ud, u32, u32, u32, u32, u32) -> CallbackCode;

// OTF2_GlobalEvtReaderCallbacks.h: (location, time, userData, attributeList, ...)
pub type EvtRegion = unsafe extern "C" fn(u64, u64, Ud, Attr, u32) -> CallbackCode;
pub type EvtP2p = unsafe extern "C" fn(u64, u64, Ud, Attr, u32, u32, u32, u64) -> CallbackCode;
pub type EvtP2pReq = unsafe extern "C" fn(u64, u64, Ud, Attr, u32, u32, u32, u64, u64) -> CallbackCode;
pub type EvtReq = unsafe extern "C" fn(u64, u64, Ud, Attr, u64) -> CallbackCode;
pub type EvtNone = unsafe extern "C" fn(u64, u64, Ud, Attr) -> CallbackCode;
pub type EvtCollEnd = unsafe extern "C" fn(u64, u64, Ud, Attr, u8, u32, u32, u64, u64) -> CallbackCode;

macro_rules! library {
    ($($field:ident : $sym:literal => fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The OTF2 functions, resolved in the loaded library.
        #[allow(non_snake_case)]
        pub struct Lib {
            $(pub $field: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Lib {
            unsafe fn resolve(handle: *mut c_void, path: &str) -> Result<Lib> {
                Ok(Lib { $($field: {
                    let p = dlsym(handle, concat!($sym, "\0").as_ptr() as *const c_char);
                    if p.is_null() {
                        return Err(missing(path, concat!("has no ", $sym, " (not an OTF2 3.x library)")));
                    }
                    std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(p)
                },)* })
            }
        }
    };
}

library! {
    error_description: "OTF2_Error_GetDescription" => fn(ErrorCode) -> *const c_char;
    error_register: "OTF2_Error_RegisterCallback" => fn(ErrorCallback, Ud) -> Option<ErrorCallback>;
    reader_open: "OTF2_Reader_Open" => fn(*const c_char) -> *mut Opaque;
    reader_close: "OTF2_Reader_Close" => fn(*mut Opaque) -> ErrorCode;
    reader_serial: "OTF2_Reader_SetSerialCollectiveCallbacks" => fn(*mut Opaque) -> ErrorCode;
    reader_n_locations: "OTF2_Reader_GetNumberOfLocations" => fn(*mut Opaque, *mut u64) -> ErrorCode;
    reader_global_def_reader: "OTF2_Reader_GetGlobalDefReader" => fn(*mut Opaque) -> *mut Opaque;
    reader_register_def: "OTF2_Reader_RegisterGlobalDefCallbacks" => fn(*mut Opaque, *mut Opaque, *const Opaque, Ud) -> ErrorCode;
    reader_read_defs: "OTF2_Reader_ReadAllGlobalDefinitions" => fn(*mut Opaque, *mut Opaque, *mut u64) -> ErrorCode;
    reader_select: "OTF2_Reader_SelectLocation" => fn(*mut Opaque, u64) -> ErrorCode;
    reader_open_def_files: "OTF2_Reader_OpenDefFiles" => fn(*mut Opaque) -> ErrorCode;
    reader_close_def_files: "OTF2_Reader_CloseDefFiles" => fn(*mut Opaque) -> ErrorCode;
    reader_open_evt_files: "OTF2_Reader_OpenEvtFiles" => fn(*mut Opaque) -> ErrorCode;
    reader_close_evt_files: "OTF2_Reader_CloseEvtFiles" => fn(*mut Opaque) -> ErrorCode;
    reader_def_reader: "OTF2_Reader_GetDefReader" => fn(*mut Opaque, u64) -> *mut Opaque;
    reader_read_local_defs: "OTF2_Reader_ReadAllLocalDefinitions" => fn(*mut Opaque, *mut Opaque, *mut u64) -> ErrorCode;
    reader_close_def_reader: "OTF2_Reader_CloseDefReader" => fn(*mut Opaque, *mut Opaque) -> ErrorCode;
    reader_evt_reader: "OTF2_Reader_GetEvtReader" => fn(*mut Opaque, u64) -> *mut Opaque;
    reader_global_evt_reader: "OTF2_Reader_GetGlobalEvtReader" => fn(*mut Opaque) -> *mut Opaque;
    reader_register_evt: "OTF2_Reader_RegisterGlobalEvtCallbacks" => fn(*mut Opaque, *mut Opaque, *const Opaque, Ud) -> ErrorCode;
    reader_read_events: "OTF2_Reader_ReadAllGlobalEvents" => fn(*mut Opaque, *mut Opaque, *mut u64) -> ErrorCode;
    reader_close_global_evt_reader: "OTF2_Reader_CloseGlobalEvtReader" => fn(*mut Opaque, *mut Opaque) -> ErrorCode;
    def_callbacks_new: "OTF2_GlobalDefReaderCallbacks_New" => fn() -> *mut Opaque;
    def_callbacks_delete: "OTF2_GlobalDefReaderCallbacks_Delete" => fn(*mut Opaque);
    def_set_clock: "OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback" => fn(*mut Opaque, DefClockProperties) -> ErrorCode;
    def_set_string: "OTF2_GlobalDefReaderCallbacks_SetStringCallback" => fn(*mut Opaque, DefString) -> ErrorCode;
    def_set_location_group: "OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback" => fn(*mut Opaque, DefLocationGroup) -> ErrorCode;
    def_set_location: "OTF2_GlobalDefReaderCallbacks_SetLocationCallback" => fn(*mut Opaque, DefLocation) -> ErrorCode;
    def_set_region: "OTF2_GlobalDefReaderCallbacks_SetRegionCallback" => fn(*mut Opaque, DefRegion) -> ErrorCode;
    def_set_group: "OTF2_GlobalDefReaderCallbacks_SetGroupCallback" => fn(*mut Opaque, DefGroup) -> ErrorCode;
    def_set_comm: "OTF2_GlobalDefReaderCallbacks_SetCommCallback" => fn(*mut Opaque, DefComm) -> ErrorCode;
    evt_callbacks_new: "OTF2_GlobalEvtReaderCallbacks_New" => fn() -> *mut Opaque;
    evt_callbacks_delete: "OTF2_GlobalEvtReaderCallbacks_Delete" => fn(*mut Opaque);
    evt_set_enter: "OTF2_GlobalEvtReaderCallbacks_SetEnterCallback" => fn(*mut Opaque, EvtRegion) -> ErrorCode;
    evt_set_leave: "OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback" => fn(*mut Opaque, EvtRegion) -> ErrorCode;
    evt_set_send: "OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback" => fn(*mut Opaque, EvtP2p) -> ErrorCode;
    evt_set_isend: "OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback" => fn(*mut Opaque, EvtP2pReq) -> ErrorCode;
    evt_set_isend_complete: "OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback" => fn(*mut Opaque, EvtReq) -> ErrorCode;
    evt_set_irecv_request: "OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback" => fn(*mut Opaque, EvtReq) -> ErrorCode;
    evt_set_recv: "OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback" => fn(*mut Opaque, EvtP2p) -> ErrorCode;
    evt_set_irecv: "OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback" => fn(*mut Opaque, EvtP2pReq) -> ErrorCode;
    evt_set_request_test: "OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback" => fn(*mut Opaque, EvtReq) -> ErrorCode;
    evt_set_request_cancelled: "OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback" => fn(*mut Opaque, EvtReq) -> ErrorCode;
    evt_set_coll_begin: "OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_coll_end: "OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback" => fn(*mut Opaque, EvtCollEnd) -> ErrorCode;
    evt_set_omp_fork: "OTF2_GlobalEvtReaderCallbacks_SetOmpForkCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_omp_join: "OTF2_GlobalEvtReaderCallbacks_SetOmpJoinCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_thread_fork: "OTF2_GlobalEvtReaderCallbacks_SetThreadForkCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_thread_join: "OTF2_GlobalEvtReaderCallbacks_SetThreadJoinCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_team_begin: "OTF2_GlobalEvtReaderCallbacks_SetThreadTeamBeginCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_team_end: "OTF2_GlobalEvtReaderCallbacks_SetThreadTeamEndCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_nbc_request: "OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_nbc_complete: "OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_put: "OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_get: "OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_atomic: "OTF2_GlobalEvtReaderCallbacks_SetRmaAtomicCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_sync: "OTF2_GlobalEvtReaderCallbacks_SetRmaSyncCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_group_sync: "OTF2_GlobalEvtReaderCallbacks_SetRmaGroupSyncCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_request_lock: "OTF2_GlobalEvtReaderCallbacks_SetRmaRequestLockCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_acquire_lock: "OTF2_GlobalEvtReaderCallbacks_SetRmaAcquireLockCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_try_lock: "OTF2_GlobalEvtReaderCallbacks_SetRmaTryLockCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_release_lock: "OTF2_GlobalEvtReaderCallbacks_SetRmaReleaseLockCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_wait_change: "OTF2_GlobalEvtReaderCallbacks_SetRmaWaitChangeCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_op_complete_blocking: "OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteBlockingCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_op_complete_non_blocking: "OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_op_test: "OTF2_GlobalEvtReaderCallbacks_SetRmaOpTestCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    evt_set_rma_op_complete_remote: "OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteRemoteCallback" => fn(*mut Opaque, EvtNone) -> ErrorCode;
    archive_open: "OTF2_Archive_Open" => fn(*const c_char, *const c_char, u8, u64, u64, u8, u8) -> *mut Opaque;
    archive_close: "OTF2_Archive_Close" => fn(*mut Opaque) -> ErrorCode;
    archive_set_flush: "OTF2_Archive_SetFlushCallbacks" => fn(*mut Opaque, *const FlushCallbacks, Ud) -> ErrorCode;
    archive_serial: "OTF2_Archive_SetSerialCollectiveCallbacks" => fn(*mut Opaque) -> ErrorCode;
    archive_open_evt_files: "OTF2_Archive_OpenEvtFiles" => fn(*mut Opaque) -> ErrorCode;
    archive_close_evt_files: "OTF2_Archive_CloseEvtFiles" => fn(*mut Opaque) -> ErrorCode;
    archive_open_def_files: "OTF2_Archive_OpenDefFiles" => fn(*mut Opaque) -> ErrorCode;
    archive_close_def_files: "OTF2_Archive_CloseDefFiles" => fn(*mut Opaque) -> ErrorCode;
    archive_evt_writer: "OTF2_Archive_GetEvtWriter" => fn(*mut Opaque, u64) -> *mut Opaque;
    archive_close_evt_writer: "OTF2_Archive_CloseEvtWriter" => fn(*mut Opaque, *mut Opaque) -> ErrorCode;
    archive_def_writer: "OTF2_Archive_GetDefWriter" => fn(*mut Opaque, u64) -> *mut Opaque;
    archive_close_def_writer: "OTF2_Archive_CloseDefWriter" => fn(*mut Opaque, *mut Opaque) -> ErrorCode;
    archive_global_def_writer: "OTF2_Archive_GetGlobalDefWriter" => fn(*mut Opaque) -> *mut Opaque;
    evt_enter: "OTF2_EvtWriter_Enter" => fn(*mut Opaque, Attr, u64, u32) -> ErrorCode;
    evt_leave: "OTF2_EvtWriter_Leave" => fn(*mut Opaque, Attr, u64, u32) -> ErrorCode;
    evt_mpi_send: "OTF2_EvtWriter_MpiSend" => fn(*mut Opaque, Attr, u64, u32, u32, u32, u64) -> ErrorCode;
    evt_mpi_recv: "OTF2_EvtWriter_MpiRecv" => fn(*mut Opaque, Attr, u64, u32, u32, u32, u64) -> ErrorCode;
    evt_mpi_isend: "OTF2_EvtWriter_MpiIsend" => fn(*mut Opaque, Attr, u64, u32, u32, u32, u64, u64) -> ErrorCode;
    evt_mpi_isend_complete: "OTF2_EvtWriter_MpiIsendComplete" => fn(*mut Opaque, Attr, u64, u64) -> ErrorCode;
    evt_mpi_irecv_request: "OTF2_EvtWriter_MpiIrecvRequest" => fn(*mut Opaque, Attr, u64, u64) -> ErrorCode;
    evt_mpi_irecv: "OTF2_EvtWriter_MpiIrecv" => fn(*mut Opaque, Attr, u64, u32, u32, u32, u64, u64) -> ErrorCode;
    evt_mpi_request_test: "OTF2_EvtWriter_MpiRequestTest" => fn(*mut Opaque, Attr, u64, u64) -> ErrorCode;
    evt_mpi_coll_begin: "OTF2_EvtWriter_MpiCollectiveBegin" => fn(*mut Opaque, Attr, u64) -> ErrorCode;
    evt_mpi_coll_end: "OTF2_EvtWriter_MpiCollectiveEnd" => fn(*mut Opaque, Attr, u64, u8, u32, u32, u64, u64) -> ErrorCode;
    def_clock_properties: "OTF2_GlobalDefWriter_WriteClockProperties" => fn(*mut Opaque, u64, u64, u64, u64) -> ErrorCode;
    def_string: "OTF2_GlobalDefWriter_WriteString" => fn(*mut Opaque, u32, *const c_char) -> ErrorCode;
    def_system_tree_node: "OTF2_GlobalDefWriter_WriteSystemTreeNode" => fn(*mut Opaque, u32, u32, u32, u32) -> ErrorCode;
    def_location_group: "OTF2_GlobalDefWriter_WriteLocationGroup" => fn(*mut Opaque, u32, u32, u8, u32, u32) -> ErrorCode;
    def_location: "OTF2_GlobalDefWriter_WriteLocation" => fn(*mut Opaque, u64, u32, u8, u64, u32) -> ErrorCode;
    def_region: "OTF2_GlobalDefWriter_WriteRegion" => fn(*mut Opaque, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> ErrorCode;
    def_group: "OTF2_GlobalDefWriter_WriteGroup" => fn(*mut Opaque, u32, u32, u8, u8, u32, u32, *const u64) -> ErrorCode;
    def_comm: "OTF2_GlobalDefWriter_WriteComm" => fn(*mut Opaque, u32, u32, u32, u32, u32) -> ErrorCode;
}

fn missing(path: &str, reason: &str) -> Error {
    Error::new(
        ErrorKind::Options,
        "",
        format!("the OTF2 library {path} {reason}; install OTF2 3.x: `pip install otf2` (or Debian's libopen-trace-format2-dev)"),
    )
}

impl Lib {
    /// Load the OTF2 library at `path` (a shared object exporting OTF2's C functions: the
    /// wheel's module or the system's `libotf2.so`/`libopen-trace-format2.so`). The library
    /// stays loaded for the life of the process.
    pub fn load(path: &str) -> Result<Lib> {
        let c = CString::new(path).map_err(|_| missing(path, "is not a valid path"))?;
        // SAFETY: dlopen/dlerror are thread-safe in glibc; the handle is never closed, so the
        // function pointers stay valid.
        unsafe {
            let handle = dlopen(c.as_ptr(), RTLD_LAZY);
            if handle.is_null() {
                let why = dlerror();
                let why = if why.is_null() { "cannot be loaded".to_string() } else { format!("cannot be loaded ({})", CStr::from_ptr(why).to_string_lossy()) };
                return Err(missing(path, &why));
            }
            let lib = Lib::resolve(handle, path)?;
            (lib.error_register)(quiet, std::ptr::null_mut());
            Ok(lib)
        }
    }

    /// OTF2's description of error `code`.
    pub fn describe(&self, code: ErrorCode) -> String {
        // SAFETY: OTF2 returns a static string (or NULL) for any code.
        let p = unsafe { (self.error_description)(code) };
        if p.is_null() {
            format!("OTF2 error {code}")
        } else {
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }
}

/// The libraries loaded so far, by path (each loaded once, kept for the process's life).
static LOADED: std::sync::Mutex<Vec<(String, &'static Lib)>> = std::sync::Mutex::new(Vec::new());
/// The library [`use_library`] chose, for the writers (which get no path).
static CHOSEN: std::sync::Mutex<Option<&'static Lib>> = std::sync::Mutex::new(None);

/// The OTF2 library at `path`, loaded once for the process.
pub fn shared(path: &str) -> Result<&'static Lib> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, lib)) = loaded.iter().find(|(p, _)| p == path) {
        return Ok(lib);
    }
    let lib: &'static Lib = Box::leak(Box::new(Lib::load(path)?));
    loaded.push((path.to_string(), lib));
    Ok(lib)
}

/// Load the OTF2 library at `path` and use it for the writers from now on.
pub fn use_library(path: &str) -> Result<()> {
    let lib = shared(path)?;
    *CHOSEN.lock().unwrap_or_else(|e| e.into_inner()) = Some(lib);
    Ok(())
}

/// The library [`use_library`] chose.
pub fn library() -> Result<&'static Lib> {
    CHOSEN.lock().unwrap_or_else(|e| e.into_inner()).ok_or_else(|| missing("(none chosen)", "is not loaded"))
}
