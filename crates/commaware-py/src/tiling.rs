//! Paper 001: tiled loops, their formulas, programs and the native kernel.

use commaware_core::tiling;
use commaware_core::tiling::kernel::{Axis as TilingAxis, TileBlock as TilingBlock};
use commaware_core::{Error, ErrorKind, SimOptions};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::convert::{f32_bytes, floats_from_buffer, py_str};
use crate::errors::{guarded, interruptible, to_py};
use crate::simulation::{Forward, Platform, Trace};

fn tiling_axis(axis: &str) -> PyResult<TilingAxis> {
    match axis {
        "i" => Ok(TilingAxis::I),
        "j" => Ok(TilingAxis::J),
        _ => Err(to_py(Error::new(ErrorKind::Options, "axis", format!("must be \"i\" or \"j\", got {axis:?}")))),
    }
}

/// One rank's block of paper 001's 3-D kernel (§5.3; `commaware_core::tiling::kernel`):
/// x×y×dimz float32 points plus halo planes at index 0. Faces and halos are bytes of
/// native-endian float32 (MPI.FLOAT).
#[pyclass(module = "commaware._core")]
pub(crate) struct TileBlock(TilingBlock);

#[pymethods]
impl TileBlock {
    #[new]
    fn new(x: usize, y: usize, dimz: usize) -> PyResult<Self> {
        guarded(|| TilingBlock::new(x, y, dimz)).map(TileBlock)
    }
    #[getter]
    fn x(&self) -> usize {
        self.0.x()
    }
    #[getter]
    fn y(&self) -> usize {
        self.0.y()
    }
    #[getter]
    fn dimz(&self) -> usize {
        self.0.dimz()
    }
    /// Compute tile `tile` of height `z` (k in [tile·z, (tile+1)·z)), GIL released.
    fn compute_tile(&mut self, py: Python<'_>, tile: usize, z: usize) -> PyResult<()> {
        let block = &mut self.0;
        py.allow_threads(|| guarded(|| block.compute_tile(tile, z)))
    }
    /// Floats in the face of a tile of height `z` in `axis` ("i": y·z, "j": x·z).
    fn face_len(&self, axis: &str, z: usize) -> PyResult<usize> {
        let axis = tiling_axis(axis)?;
        guarded(|| self.0.face_len(axis, z))
    }
    /// The outgoing face of tile `tile` in `axis` as bytes.
    fn face<'py>(&self, py: Python<'py>, axis: &str, tile: usize, z: usize) -> PyResult<Bound<'py, PyBytes>> {
        let axis = tiling_axis(axis)?;
        let mut out = vec![0f32; guarded(|| self.0.face_len(axis, z))?];
        guarded(|| self.0.face_into(axis, tile, z, &mut out))?;
        Ok(f32_bytes(py, &out))
    }
    /// The outgoing face of tile `tile` in `axis` written into `out`, a writable buffer of
    /// exactly 4·face_len bytes (a bytearray: no allocation per tile).
    fn face_into(&self, py: Python<'_>, axis: &str, tile: usize, z: usize, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let axis = tiling_axis(axis)?;
        let mut face = vec![0f32; guarded(|| self.0.face_len(axis, z))?];
        guarded(|| self.0.face_into(axis, tile, z, &mut face))?;
        let buf = PyBuffer::<u8>::get(out)
            .map_err(|_| to_py(Error::new(ErrorKind::Options, "out", "expected a writable bytes-like object (bytearray)")))?;
        if buf.readonly() || buf.item_count() != 4 * face.len() {
            return Err(to_py(Error::new(ErrorKind::Options, "out", format!(
                "must be a writable buffer of {} bytes (4 per float), got {}{} bytes",
                4 * face.len(), if buf.readonly() { "a read-only buffer of " } else { "" }, buf.item_count()))));
        }
        let raw: Vec<u8> = face.iter().flat_map(|v| v.to_ne_bytes()).collect();
        buf.copy_from_slice(py, &raw)
    }
    /// Set the incoming halo of tile `tile` in `axis` from the predecessor's face (bytes).
    fn set_halo(&mut self, axis: &str, tile: usize, z: usize, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let axis = tiling_axis(axis)?;
        let floats = floats_from_buffer(data, "data")?;
        guarded(|| self.0.set_halo(axis, tile, z, &floats))
    }
    /// The interior A(i, j, k), i, j, k from 1, k fastest, as native-endian float32 bytes.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        // Written straight into the Python bytes (a failed allocation is a MemoryError).
        PyBytes::new_with(py, 4 * self.0.points(), |buf| {
            for (out, v) in buf.chunks_exact_mut(4).zip(self.0.interior()) {
                out.copy_from_slice(&v.to_ne_bytes());
            }
            Ok(())
        })
    }
    /// (FNV-1a digest of the interior's bit patterns, f64 sum of its values).
    fn checksum(&self) -> (u64, f64) {
        self.0.checksum()
    }
    /// The checksum of the nx×ny×dimz region whose first point is (i0+1, j0+1, 1).
    fn region_checksum(&self, i0: usize, j0: usize, nx: usize, ny: usize) -> PyResult<(u64, f64)> {
        guarded(|| self.0.region_checksum(i0, j0, nx, ny))
    }
}

/// The sequential reference run of paper 001's kernel over the whole space, GIL released.
#[pyfunction]
pub(crate) fn tiling_sequential(py: Python<'_>, dimx: usize, dimy: usize, dimz: usize) -> PyResult<TileBlock> {
    py.allow_threads(|| guarded(|| commaware_core::tiling::kernel::sequential(dimx, dimy, dimz))).map(TileBlock)
}

fn grid_tiling(space: Vec<u64>, procs: &[u64], tile_height: u64, mapping: Option<usize>) -> Result<tiling::GridTiling, Error> {
    tiling::GridTiling::new(space, procs, tile_height, mapping)
}

/// The geometry of a tiling (paper 001 §2) as JSON: exactly one of `sides` and `h`.
#[pyfunction]
#[pyo3(signature = (space, deps, sides=None, h=None, mapping=None))]
pub(crate) fn tiling_geometry<'py>(
    py: Python<'py>,
    space: Vec<u64>,
    deps: Vec<Vec<i64>>,
    sides: Option<Vec<u64>>,
    h: Option<Vec<Vec<f64>>>,
    mapping: Option<usize>,
) -> PyResult<Bound<'py, PyString>> {
    let shape = match (sides, h) {
        (Some(s), None) => tiling::TileShape::Sides(s),
        (None, Some(h)) => tiling::TileShape::Matrix(h),
        _ => return Err(to_py(Error::new(ErrorKind::Options, "tile", "give exactly one of the tile sides and the matrix H"))),
    };
    let g = guarded(|| tiling::Tiling::new(space, deps, shape, mapping).map(|t| t.geometry()))?;
    py_str(py, serde_json::to_string(&g).unwrap_or_default())
}

/// Eqs. (3), (4) and, with `sci` = (t_start_dma, t_sci_interrupt), (7) at one tile height, as JSON.
#[pyfunction]
#[pyo3(signature = (space, procs, tile_height, t_c, latency, bandwidth, mapping=None, sci=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tiling_formulas<'py>(
    py: Python<'py>,
    space: Vec<u64>,
    procs: Vec<u64>,
    tile_height: u64,
    t_c: f64,
    latency: f64,
    bandwidth: f64,
    mapping: Option<usize>,
    sci: Option<(f64, f64)>,
) -> PyResult<Bound<'py, PyString>> {
    let r = guarded(|| {
        let g = grid_tiling(space, &procs, tile_height, mapping)?;
        let sci = sci.map(|(t_start_dma, t_sci_interrupt)| tiling::SciModel { t_c, t_start_dma, t_sci_interrupt });
        tiling::StepReport::new(&g, &tiling::CostModel { t_c, latency, bandwidth }, sci.as_ref())
    })?;
    py_str(py, serde_json::to_string(&r).unwrap_or_default())
}

/// The closed-form minimum of eq. (7) over a real tile height, as JSON.
#[pyfunction]
#[pyo3(signature = (space, procs, t_c, t_start_dma, t_sci_interrupt, mapping=None))]
pub(crate) fn tiling_sci_optimum<'py>(
    py: Python<'py>,
    space: Vec<u64>,
    procs: Vec<u64>,
    t_c: f64,
    t_start_dma: f64,
    t_sci_interrupt: f64,
    mapping: Option<usize>,
) -> PyResult<Bound<'py, PyString>> {
    let r = guarded(|| {
        let sci = tiling::SciModel { t_c, t_start_dma, t_sci_interrupt };
        sci.check()?;
        Ok(sci.optimum(&grid_tiling(space, &procs, 1, mapping)?))
    })?;
    py_str(py, serde_json::to_string(&r).unwrap_or_default())
}

/// Time step of tile `tile` (coordinates from the tile space's origin) under `schedule`
/// (`block`: Π = [1 … 1], `overlap`: Π' with 1 at `mapping`).
#[pyfunction]
pub(crate) fn tiling_time_step(tile: Vec<u64>, schedule: &str, mapping: usize) -> PyResult<u64> {
    guarded(|| {
        if mapping >= tile.len() {
            return Err(Error::new(ErrorKind::Options, "mapping", format!("dimension {} does not exist for a {}-dimensional tile", mapping + 1, tile.len())));
        }
        let s = tiling::Schedule::from_name(schedule)?;
        Ok(s.time_step(&tile, mapping))
    })
}

/// The tile heights a sweep visits: divisors of the mapping dimension up to DIMZ / max p.
#[pyfunction]
#[pyo3(signature = (space, procs, mapping=None))]
pub(crate) fn tiling_sweep_heights(space: Vec<u64>, procs: Vec<u64>, mapping: Option<usize>) -> PyResult<Vec<u64>> {
    guarded(|| {
        let g = grid_tiling(space.clone(), &procs, 1, mapping)?;
        Ok(tiling::sweep_heights(&space, &procs, g.mapping()))
    })
}

/// The trace of one schedule's program (`block` or `overlap`), t_c seconds per point.
#[pyfunction]
#[pyo3(signature = (space, procs, tile_height, t_c, schedule, mapping=None))]
pub(crate) fn tiling_program(
    py: Python<'_>,
    space: Vec<u64>,
    procs: Vec<u64>,
    tile_height: u64,
    t_c: f64,
    schedule: &str,
    mapping: Option<usize>,
) -> PyResult<Trace> {
    let schedule = schedule.to_owned();
    py.allow_threads(|| {
        guarded(|| {
            let g = grid_tiling(space, &procs, tile_height, mapping)?;
            let cost = tiling::CostModel { t_c, latency: 0.0, bandwidth: 1.0 };
            cost.check()?;
            let spec = tiling::program(&g, tiling::Schedule::from_name(&schedule)?, g.tiling.tile_volume() * t_c)?;
            commaware_core::Trace::from_spec(spec)
        })
    })
    .map(Trace)
}

/// Simulate one schedule's program on `platform` (rank i on host i); returns
/// {makespan, messages, max_compute_seconds, model}. `on_progress(simulated time, engine
/// steps, messages, ranks done, ranks, wall seconds)` is called every `progress_every` wall
/// seconds while it runs (what it raises stops the run and is re-raised).
#[pyfunction]
#[pyo3(signature = (platform, space, procs, tile_height, t_c, schedule, mapping=None, model=None, params=Vec::new(),
                    on_progress=None, progress_every=10.0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tiling_simulate<'py>(
    py: Python<'py>,
    platform: &Platform,
    space: Vec<u64>,
    procs: Vec<u64>,
    tile_height: u64,
    t_c: f64,
    schedule: &str,
    mapping: Option<usize>,
    model: Option<String>,
    params: Vec<(String, f64)>,
    on_progress: Option<PyObject>,
    progress_every: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let schedule = schedule.to_owned();
    let mut fw = Forward::progress_only(on_progress, progress_every);
    let r = interruptible(py, || {
        let g = grid_tiling(space, &procs, tile_height, mapping)?;
        tiling::CostModel { t_c, latency: 0.0, bandwidth: 1.0 }.check()?;
        if !(progress_every.is_finite() && progress_every > 0.0) {
            return Err(Error::new(ErrorKind::Options, "progress_every", format!("must be a positive number of seconds, got {progress_every}")));
        }
        let opts = SimOptions { model, params, ..SimOptions::default() };
        let schedule = tiling::Schedule::from_name(&schedule)?;
        tiling::simulate_program_observed(&platform.0, &g, schedule, g.tiling.tile_volume() * t_c, &opts, &mut fw)
    });
    if let Some(e) = fw.take_raised() {
        return Err(e);
    }
    let r = r?;
    let d = PyDict::new(py);
    d.set_item("makespan", r.makespan)?;
    d.set_item("messages", r.messages)?;
    d.set_item("max_compute_seconds", r.max_compute_seconds)?;
    d.set_item("model", r.model)?;
    Ok(d)
}
