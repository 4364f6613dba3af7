//! Tiling of a perfectly nested loop with uniform dependences (paper 001 §2), the two
//! linear schedules of the tiles (§3 non-overlapping, §4 overlapping) and the
//! completion-time formulas (eqs. 3, 4 and 7).
//!
//! Index points are counted from the space's origin: a space of sizes N_1 × … × N_n has
//! the points 0 ≤ j_d < N_d, and point j lies in tile ⌊H·j⌋ (§2.3), so a rectangular tile
//! of sides s_d gives N_d/s_d whole tiles along d.

use serde::Serialize;

use crate::error::{check_amount, fmt_num, Error, ErrorKind, Result};

/// Bytes of one array element: the paper's kernel works on float32 (§5.3).
pub const ELEMENT_BYTES: f64 = 4.0;
/// Largest number of loop dimensions accepted.
pub const MAX_DIMS: usize = 8;
/// Largest extent of one dimension (2^40 points).
pub const MAX_EXTENT: u64 = 1 << 40;
/// Slack on the legality bounds 0 ≤ HD ≤ 1 for matrices given in floating point.
const LEGALITY_SLACK: f64 = 1e-9;

fn err(field: &str, reason: impl Into<String>) -> Error {
    Error::new(ErrorKind::Options, field, reason)
}

/// How the space is cut into tiles.
#[derive(Debug, Clone, PartialEq)]
pub enum TileShape {
    /// Rectangular tiles with these sides (H = diag(1/s)).
    Sides(Vec<u64>),
    /// The tiling matrix H, one row per family of hyperplanes (its rows are the tiles'
    /// surface normals, §2.3).
    Matrix(Vec<Vec<f64>>),
}

/// A tiled iteration space: sizes, dependence vectors, tiling, and the dimension whose
/// tiles all run on one processor (§4: the largest one by default).
#[derive(Debug, Clone)]
pub struct Tiling {
    pub space: Vec<u64>,
    /// Dependence vectors d_1 … d_m (the columns of D), each of length n.
    pub deps: Vec<Vec<i64>>,
    pub shape: TileShape,
    pub mapping: usize,
    h: Vec<Vec<f64>>,
    hd: Vec<Vec<f64>>,
    det_h: f64,
}

/// The geometry of a tiling (§2.3–2.4), as reported by `commaware tiling`.
#[derive(Debug, Clone, Serialize)]
pub struct Geometry {
    pub dims: usize,
    /// Index of the mapping dimension (0-based).
    pub mapping: usize,
    pub h: Vec<Vec<f64>>,
    /// H·D: legal when every entry is in [0, 1].
    pub hd: Vec<Vec<f64>>,
    /// Iteration points per tile, det(P) = 1/|det H| (§2.4).
    pub tile_volume: f64,
    /// Eq. (1): communication volume of a tile across all its surfaces (points).
    pub v_comm_eq1: f64,
    /// Eq. (2): the same without the surfaces normal to the mapping dimension (points).
    pub v_comm_eq2: f64,
    /// Tile-space bounds l^S and u^S (inclusive), per dimension.
    pub tile_lower: Vec<i64>,
    pub tile_upper: Vec<i64>,
    /// Whole tiles per dimension (u^S − l^S + 1).
    pub tiles: Vec<u64>,
}

/// Determinant by Gaussian elimination with partial pivoting.
fn determinant(m: &[Vec<f64>]) -> f64 {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut det = 1.0;
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap_or(c);
        if a[p][c] == 0.0 {
            return 0.0;
        }
        if p != c {
            a.swap(p, c);
            det = -det;
        }
        det *= a[c][c];
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            for k in c..n {
                a[r][k] -= f * a[c][k];
            }
        }
    }
    det
}

impl Tiling {
    /// A checked tiling. `mapping` defaults to the largest dimension (the last of equals).
    pub fn new(space: Vec<u64>, deps: Vec<Vec<i64>>, shape: TileShape, mapping: Option<usize>) -> Result<Tiling> {
        let n = space.len();
        if n == 0 || n > MAX_DIMS {
            return Err(err("space", format!("needs 1 to {MAX_DIMS} dimensions, got {n}")));
        }
        for (d, &s) in space.iter().enumerate() {
            if s == 0 || s > MAX_EXTENT {
                return Err(err("space", format!("dimension {} has {s} points; it must be in 1..={MAX_EXTENT}", d + 1)));
            }
        }
        if deps.is_empty() {
            return Err(err("deps", "needs at least one dependence vector"));
        }
        for (j, d) in deps.iter().enumerate() {
            if d.len() != n {
                return Err(err("deps", format!("vector {} has {} coordinates for a {n}-dimensional space", j + 1, d.len())));
            }
            if d.iter().all(|&x| x == 0) {
                return Err(err("deps", format!("vector {} is zero", j + 1)));
            }
            if d.iter().any(|&x| x.unsigned_abs() > MAX_EXTENT) {
                return Err(err("deps", format!("vector {} is longer than {MAX_EXTENT}", j + 1)));
            }
        }
        let mapping = match mapping {
            Some(m) if m < n => m,
            Some(m) => return Err(err("mapping", format!("dimension {} does not exist in a {n}-dimensional space", m + 1))),
            None => (0..n).rev().max_by_key(|&d| space[d]).unwrap_or(0),
        };
        let h: Vec<Vec<f64>> = match &shape {
            TileShape::Sides(s) => {
                if s.len() != n {
                    return Err(err("tile", format!("gives {} sides for a {n}-dimensional space", s.len())));
                }
                for (d, (&side, &size)) in s.iter().zip(&space).enumerate() {
                    if side == 0 {
                        return Err(err("tile", format!("side {} must be > 0", d + 1)));
                    }
                    if size % side != 0 {
                        return Err(err("tile", format!("side {side} does not divide dimension {} ({size} points)", d + 1)));
                    }
                }
                (0..n).map(|i| (0..n).map(|k| if i == k { 1.0 / s[i] as f64 } else { 0.0 }).collect()).collect()
            }
            TileShape::Matrix(h) => {
                if h.len() != n || h.iter().any(|r| r.len() != n) {
                    return Err(err("h", format!("must be a {n}×{n} matrix")));
                }
                if h.iter().flatten().any(|x| !x.is_finite()) {
                    return Err(err("h", "has an entry that is not a finite number"));
                }
                h.clone()
            }
        };
        let det_h = determinant(&h);
        if !det_h.is_finite() || det_h.abs() < 1e-300 {
            return Err(err("h", "is singular: its rows are not independent"));
        }
        // H·D, one column per dependence vector (§2.3).
        let hd: Vec<Vec<f64>> =
            (0..n).map(|i| deps.iter().map(|d| (0..n).map(|k| h[i][k] * d[k] as f64).sum()).collect()).collect();
        for (i, row) in hd.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if v < -LEGALITY_SLACK {
                    return Err(err(
                        "h",
                        format!("illegal tiling: (HD)[{}][{}] = {} < 0, so tiles are not atomic (§2.3 needs HD ≥ 0)", i + 1, j + 1, fmt_num(v)),
                    ));
                }
                if v > 1.0 + LEGALITY_SLACK {
                    return Err(err(
                        "deps",
                        format!(
                            "dependence {} is longer than the tile along row {} of H ((HD)[{}][{}] = {} > 1); tiles must contain every dependence (§2.3)",
                            j + 1,
                            i + 1,
                            i + 1,
                            j + 1,
                            fmt_num(v)
                        ),
                    ));
                }
            }
        }
        Ok(Tiling { space, deps, shape, mapping, h, hd, det_h })
    }

    pub fn dims(&self) -> usize {
        self.space.len()
    }

    /// Iteration points per tile, det(P) = 1/|det H|.
    pub fn tile_volume(&self) -> f64 {
        1.0 / self.det_h.abs()
    }

    /// Eq. (2)'s contribution of surface `i`: points of a tile whose dependences cross its
    /// surface normal to row i of H, (1/|det H|)·Σ_j (HD)_ij.
    pub fn surface_points(&self, i: usize) -> f64 {
        self.hd[i].iter().sum::<f64>() / self.det_h.abs()
    }

    /// Tile-space bounds: each coordinate of ⌊H·j⌋ is a linear function of j floored,
    /// so its extremes over the box are at its corners.
    fn tile_bounds(&self) -> (Vec<i64>, Vec<i64>) {
        let n = self.dims();
        let mut lo = vec![i64::MAX; n];
        let mut hi = vec![i64::MIN; n];
        for corner in 0..(1u32 << n) {
            let j: Vec<f64> =
                (0..n).map(|d| if corner >> d & 1 == 1 { (self.space[d] - 1) as f64 } else { 0.0 }).collect();
            for i in 0..n {
                let v: f64 = (0..n).map(|k| self.h[i][k] * j[k]).sum();
                // A point exactly on a tile boundary up to rounding belongs to the next tile.
                let t = (v + 1e-9).floor() as i64;
                lo[i] = lo[i].min(t);
                hi[i] = hi[i].max(t);
            }
        }
        (lo, hi)
    }

    pub fn geometry(&self) -> Geometry {
        let n = self.dims();
        let (tile_lower, tile_upper) = self.tile_bounds();
        let tiles = (0..n).map(|d| (tile_upper[d] - tile_lower[d] + 1) as u64).collect();
        let eq1 = (0..n).map(|i| self.surface_points(i)).sum();
        let eq2 = (0..n).filter(|&i| i != self.mapping).map(|i| self.surface_points(i)).sum();
        Geometry {
            dims: n,
            mapping: self.mapping,
            h: self.h.clone(),
            hd: self.hd.clone(),
            tile_volume: self.tile_volume(),
            v_comm_eq1: eq1,
            v_comm_eq2: eq2,
            tile_lower,
            tile_upper,
            tiles,
        }
    }

    /// Tiles per dimension, for rectangular tilings only.
    pub fn tile_counts(&self) -> Option<Vec<u64>> {
        match &self.shape {
            TileShape::Sides(s) => Some(self.space.iter().zip(s).map(|(&n, &s)| n / s).collect()),
            TileShape::Matrix(_) => None,
        }
    }
}

/// The two linear schedules of the tile space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// §3: Π = [1 … 1]; each step receives, computes, then sends.
    NonOverlapping,
    /// §4: Π' = [2 … 2 1 2 … 2], 1 at the mapping dimension; each step computes tile k
    /// while sending the results of k−1 and receiving the inputs of k+1.
    Overlapping,
}

impl Schedule {
    pub const NAMES: [&'static str; 2] = ["block", "overlap"];

    /// `block` (§3, the blocking program) or `overlap` (§4, the non-blocking one).
    pub fn from_name(name: &str) -> Result<Schedule> {
        match name {
            "block" => Ok(Schedule::NonOverlapping),
            "overlap" => Ok(Schedule::Overlapping),
            _ => Err(err("schedule", format!("unknown schedule {name:?}; expected one of: block, overlap"))),
        }
    }

    pub fn vector(self, dims: usize, mapping: usize) -> Vec<i64> {
        (0..dims).map(|d| if self == Schedule::Overlapping && d != mapping { 2 } else { 1 }).collect()
    }

    /// Time step of tile `tile` (coordinates from the tile space's origin): Π·j^S − Π·j^S_init.
    pub fn time_step(self, tile: &[u64], mapping: usize) -> u64 {
        let pi = self.vector(tile.len(), mapping);
        tile.iter().zip(&pi).map(|(&t, &p)| t * p as u64).sum()
    }

    /// Number of time steps P(g) (or P'(g)) over a tile space with `tiles` tiles per
    /// dimension: the step of the last tile plus one (§3, eq. 5).
    pub fn steps(self, tiles: &[u64], mapping: usize) -> u64 {
        let last: Vec<u64> = tiles.iter().map(|&t| t - 1).collect();
        self.time_step(&last, mapping) + 1
    }
}

/// The paper's experiment: a DIMX × DIMY × … × DIMZ space, unit dependences, one tile per
/// processor in every dimension but the mapping one, and tiles of height z along it.
#[derive(Debug, Clone)]
pub struct GridTiling {
    pub tiling: Tiling,
    /// Processors along each dimension (1 along the mapping dimension).
    pub procs: Vec<u64>,
    pub tile_height: u64,
}

impl GridTiling {
    /// `procs` lists the processors along every dimension except the mapping one, in order.
    pub fn new(space: Vec<u64>, procs: &[u64], tile_height: u64, mapping: Option<usize>) -> Result<GridTiling> {
        let n = space.len();
        if n < 2 || n > MAX_DIMS {
            return Err(err("space", format!("needs 2 to {MAX_DIMS} dimensions, got {n}")));
        }
        if let Some(&s) = space.iter().find(|&&s| s == 0 || s > MAX_EXTENT) {
            return Err(err("space", format!("has a dimension of {s} points; each must be in 1..={MAX_EXTENT}")));
        }
        let mapping = match mapping {
            Some(m) if m < n => m,
            Some(m) => return Err(err("mapping", format!("dimension {} does not exist in a {n}-dimensional space", m + 1))),
            None => (0..n).rev().max_by_key(|&d| space[d]).unwrap_or(0),
        };
        if procs.len() != n - 1 {
            return Err(err("procs", format!("gives {} processor counts; a {n}-dimensional space needs {}", procs.len(), n - 1)));
        }
        let mut full = Vec::with_capacity(n);
        let mut it = procs.iter();
        for d in 0..n {
            if d == mapping {
                full.push(1);
                continue;
            }
            let p = *it.next().expect("n-1 counts");
            if p == 0 {
                return Err(err("procs", "processor counts must be > 0"));
            }
            if space[d] % p != 0 {
                return Err(err("procs", format!("{p} processors do not divide dimension {} ({} points)", d + 1, space[d])));
            }
            full.push(p);
        }
        if tile_height == 0 {
            return Err(err("tile_height", "must be > 0"));
        }
        if space[mapping] % tile_height != 0 {
            return Err(err(
                "tile_height",
                format!("{tile_height} does not divide the mapping dimension ({} points)", space[mapping]),
            ));
        }
        let sides: Vec<u64> = (0..n).map(|d| if d == mapping { tile_height } else { space[d] / full[d] }).collect();
        let deps = (0..n).map(|i| (0..n).map(|k| (i == k) as i64).collect()).collect();
        let tiling = Tiling::new(space, deps, TileShape::Sides(sides), Some(mapping))?;
        Ok(GridTiling { tiling, procs: full, tile_height })
    }

    pub fn mapping(&self) -> usize {
        self.tiling.mapping
    }

    /// Number of processors (ranks).
    pub fn n_procs(&self) -> u64 {
        self.procs.iter().product()
    }

    /// Tiles along the mapping dimension (each processor's column), x_k + 1.
    pub fn column_tiles(&self) -> u64 {
        self.tiling.space[self.mapping()] / self.tile_height
    }

    /// x_d = tiles along d − 1 (§6.2 with the note's fix: x_i = p_i − 1).
    pub fn x(&self) -> Vec<u64> {
        self.tiling.tile_counts().expect("rectangular").iter().map(|t| t - 1).collect()
    }

    pub fn steps(&self, schedule: Schedule) -> u64 {
        self.tiling.tile_counts().map(|t| schedule.steps(&t, self.mapping())).expect("rectangular")
    }

    /// Bytes a tile sends across its surface normal to dimension `d` (eq. 2's row d, float32).
    pub fn face_bytes(&self, d: usize) -> f64 {
        self.tiling.surface_points(d) * ELEMENT_BYTES
    }

    /// Dimensions along which processors exchange tiles (not the mapping one, p_d > 1).
    pub fn exchange_dims(&self) -> Vec<usize> {
        (0..self.tiling.dims()).filter(|&d| d != self.mapping() && self.procs[d] > 1).collect()
    }

    /// Side of a tile along each non-mapping dimension (x, y in eq. 7).
    pub fn sides(&self) -> Vec<u64> {
        match &self.tiling.shape {
            TileShape::Sides(s) => s.clone(),
            TileShape::Matrix(_) => unreachable!("a grid tiling is rectangular"),
        }
    }
}

/// Inputs of the time formulas: t_c and a latency–bandwidth network.
#[derive(Debug, Clone, Copy)]
pub struct CostModel {
    /// Computation time of one iteration point (s).
    pub t_c: f64,
    /// One-way message latency, t_startup (s).
    pub latency: f64,
    /// Bandwidth (bytes/s).
    pub bandwidth: f64,
}

/// Eqs. (3) and (4) for one tile height.
#[derive(Debug, Clone, Serialize)]
#[allow(non_snake_case)]
pub struct Formulas {
    pub P_block: u64,
    pub P_overlap: u64,
    /// g·t_c (s).
    pub t_comp: f64,
    /// Communication time of an overlapped step (eq. 4): one startup, then the faces sent
    /// (and received) at the same time over distinct links, latency + largest face /
    /// bandwidth. Eq. (4) is exact with it when t_comp = t_comm and nothing is shared.
    pub t_comm: f64,
    /// Communication time of a blocking step (eq. 3, §3): every incoming and every
    /// outgoing message one after another, Σ (latency + face / bandwidth), for a
    /// processor with neighbours on every side.
    pub t_comm_block: f64,
    /// Eq. (3): P·(t_comp + t_comm_block).
    pub T_block: f64,
    /// Eq. (4): P'·max(t_comp, t_comm).
    pub T_overlap: f64,
}

impl CostModel {
    pub fn check(&self) -> Result<()> {
        check_amount(ErrorKind::Options, "t_c", self.t_c, true)?;
        check_amount(ErrorKind::Options, "latency", self.latency, false)?;
        check_amount(ErrorKind::Options, "bandwidth", self.bandwidth, true)
    }

    pub fn formulas(&self, g: &GridTiling) -> Formulas {
        let t_comp = g.tiling.tile_volume() * self.t_c;
        let faces: Vec<f64> = g.exchange_dims().iter().map(|&d| g.face_bytes(d)).collect();
        let message = |bytes: f64| self.latency + bytes / self.bandwidth;
        let t_comm = faces.iter().copied().reduce(f64::max).map_or(0.0, message);
        let t_comm_block = faces.iter().map(|&b| 2.0 * message(b)).sum();
        let p = g.steps(Schedule::NonOverlapping);
        let p2 = g.steps(Schedule::Overlapping);
        Formulas {
            P_block: p,
            P_overlap: p2,
            t_comp,
            t_comm,
            t_comm_block,
            T_block: p as f64 * (t_comp + t_comm_block),
            T_overlap: p2 as f64 * t_comp.max(t_comm),
        }
    }
}

/// The SCI model of §6.2, eq. (7), for a 3-D space: a = t_start_dma + 4·t_sci_interrupt,
/// C = 2(x_i + x_j).
#[derive(Debug, Clone, Copy)]
pub struct SciModel {
    pub t_c: f64,
    pub t_start_dma: f64,
    pub t_sci_interrupt: f64,
}

/// Eq. (7) and its closed-form minimum.
#[derive(Debug, Clone, Copy, Serialize)]
#[allow(non_snake_case)]
pub struct SciOptimum {
    /// a = t_start_dma + 4·t_sci_interrupt (s).
    pub a: f64,
    /// C = 2·Σ x_d over the non-mapping dimensions.
    pub C: f64,
    /// √(DIMZ·a / (C·x·y·t_c)), a real number (the best whole divisor is near it).
    pub z_opt: f64,
    /// (√(C·a) + √(DIMZ·x·y·t_c))² (s).
    pub T_min: f64,
}

impl SciModel {
    pub fn check(&self) -> Result<()> {
        check_amount(ErrorKind::Options, "t_c", self.t_c, true)?;
        check_amount(ErrorKind::Options, "t_start_dma", self.t_start_dma, false)?;
        check_amount(ErrorKind::Options, "t_sci_interrupt", self.t_sci_interrupt, false)
    }

    pub fn a(&self) -> f64 {
        self.t_start_dma + 4.0 * self.t_sci_interrupt
    }

    /// C and x·y (the product of the tile sides off the mapping dimension).
    fn c_and_face(g: &GridTiling) -> (f64, f64) {
        let m = g.mapping();
        let x = g.x();
        let c = 2.0 * (0..x.len()).filter(|&d| d != m).map(|d| x[d] as f64).sum::<f64>();
        let face = g.sides().iter().enumerate().filter(|&(d, _)| d != m).map(|(_, &s)| s as f64).product();
        (c, face)
    }

    /// Eq. (7): T(z) = (C + DIMZ/z)·(z·x·y·t_c + a).
    pub fn time(&self, g: &GridTiling) -> f64 {
        let (c, face) = Self::c_and_face(g);
        let z = g.tile_height as f64;
        let dimz = g.tiling.space[g.mapping()] as f64;
        (c + dimz / z) * (z * face * self.t_c + self.a())
    }

    /// The minimum of eq. (7) over a real z > 0 (C > 0, that is more than one processor).
    pub fn optimum(&self, g: &GridTiling) -> SciOptimum {
        let (c, face) = Self::c_and_face(g);
        let dimz = g.tiling.space[g.mapping()] as f64;
        let a = self.a();
        SciOptimum {
            a,
            C: c,
            z_opt: (dimz * a / (c * face * self.t_c)).sqrt(),
            T_min: ((c * a).sqrt() + (dimz * face * self.t_c).sqrt()).powi(2),
        }
    }
}

/// The tile heights worth sweeping: the divisors of the mapping dimension's extent up to
/// DIMZ / max p (beyond it, the mapping dimension is no longer the longest tile axis).
pub fn sweep_heights(space: &[u64], procs_off_mapping: &[u64], mapping: usize) -> Vec<u64> {
    let dimz = space[mapping];
    let pmax = procs_off_mapping.iter().copied().max().unwrap_or(1).max(1);
    let limit = dimz / pmax;
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1u64;
    while d * d <= dimz {
        if dimz % d == 0 {
            small.push(d);
            if d * d != dimz {
                large.push(dimz / d);
            }
        }
        d += 1;
    }
    small.into_iter().chain(large.into_iter().rev()).filter(|&z| z <= limit).collect()
}

/// Everything the formulas say about one tile height, as `commaware tiling` reports it.
#[derive(Debug, Clone, Serialize)]
#[allow(non_snake_case)]
pub struct StepReport {
    pub tile_height: u64,
    /// Tile sides per dimension.
    pub sides: Vec<u64>,
    /// x_d = tiles along d − 1.
    pub x: Vec<u64>,
    /// Iteration points per tile, g.
    pub tile_points: f64,
    /// Bytes of each exchanged face (float32), per dimension (0 where nothing is exchanged).
    pub face_bytes: Vec<f64>,
    #[serde(flatten)]
    pub formulas: Formulas,
    /// Eq. (7) at this z, when the SCI model is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub T_sci: Option<f64>,
}

impl StepReport {
    pub fn new(g: &GridTiling, cost: &CostModel, sci: Option<&SciModel>) -> Result<StepReport> {
        cost.check()?;
        if let Some(s) = sci {
            s.check()?;
        }
        let exch = g.exchange_dims();
        Ok(StepReport {
            tile_height: g.tile_height,
            sides: g.sides(),
            x: g.x(),
            tile_points: g.tiling.tile_volume(),
            face_bytes: (0..g.tiling.dims()).map(|d| if exch.contains(&d) { g.face_bytes(d) } else { 0.0 }).collect(),
            formulas: cost.formulas(g),
            T_sci: sci.map(|s| s.time(g)),
        })
    }
}
