//! The real 3-D kernel of paper 001 (§5.3), for `commaware measure tiling`:
//!
//! ```text
//! for i = 1..=DIMX, j = 1..=DIMY, k = 1..=DIMZ:
//!     A(i,j,k) = sqrt(A(i-1,j,k)) + sqrt(A(i,j-1,k)) + sqrt(A(i,j,k-1))
//! ```
//!
//! in `f32`, with "DIMX points plus a halo at index 0" in each dimension (§5.3, and the
//! notes on issue 18). A [`TileBlock`] is one rank's part of the space: the `x`×`y` column
//! of the rank at grid position (p_i, p_j), with every tile along k (the mapping dimension,
//! §5.3: all tiles along k on one processor), stored with its three halo planes. Tile `t`
//! of height `z` covers the interior k range `[t·z, (t+1)·z)` (storage indices
//! `t·z+1 ..= (t+1)·z`). Between tiles, the rank sends the face `i = x` of a tile to
//! (p_i+1, p_j) and the face `j = y` to (p_i, p_j+1), and receives the halo planes
//! `i = 0` and `j = 0` of its next tile from (p_i−1, p_j) and (p_i, p_j−1).
//!
//! **Initial values.** Every halo value is 1.0 (the global boundary; a rank with a
//! predecessor overwrites its halo plane with the predecessor's face tile by tile). Interior
//! points start as NaN ("not computed"): a point read before it is computed poisons
//! everything after it, so a wrong schedule cannot give the sequential result. **Growth:**
//! if the three inputs of a point lie in [1, 9], its value 3·√v lies in [3, 9] (9 is the
//! fixed point of v = 3√v), so by induction every value stays in [1, 9] whatever the size:
//! no overflow, no NaN from sqrt of a negative.
//!
//! **Exactness.** Each point is computed by the same expression in the same order
//! (`(√a + √b) + √c`, IEEE-754 correctly rounded sqrt and add), so a tiled run in any
//! legal order gives the sequential result bit for bit.

use crate::error::{try_filled, Error, ErrorKind, Result};

/// Value of every halo point (the global boundary).
pub const HALO: f32 = 1.0;

fn bad(field: &str, reason: impl Into<String>) -> Error {
    Error::new(ErrorKind::Options, field, reason)
}

/// One rank's block: `x`×`y`×`dimz` points plus the halo planes at index 0.
#[derive(Debug, Clone)]
pub struct TileBlock {
    x: usize,
    y: usize,
    dimz: usize,
    /// `(x+1)·(y+1)·(dimz+1)` values, index `(i·(y+1) + j)·(dimz+1) + k` (k contiguous).
    a: Vec<f32>,
}

impl TileBlock {
    /// A block of `x`×`y`×`dimz` points (each ≥ 1), halos at 1.0, interior not computed (NaN).
    pub fn new(x: usize, y: usize, dimz: usize) -> Result<Self> {
        for (field, v) in [("x", x), ("y", y), ("dimz", dimz)] {
            if v == 0 {
                return Err(bad(field, "must be at least 1"));
            }
        }
        let len = (x + 1)
            .checked_mul(y + 1)
            .and_then(|n| n.checked_mul(dimz + 1))
            .ok_or_else(|| bad("dimz", format!("a block of {x}×{y}×{dimz} points is too large")))?;
        let mut a = try_filled(ErrorKind::Options, "dimz", len, f32::NAN)?;
        let nz = dimz + 1;
        for i in 0..=x {
            for j in 0..=y {
                let base = (i * (y + 1) + j) * nz;
                if i == 0 || j == 0 {
                    a[base..base + nz].fill(HALO);
                } else {
                    a[base] = HALO;
                }
            }
        }
        Ok(TileBlock { x, y, dimz, a })
    }

    pub fn x(&self) -> usize {
        self.x
    }
    pub fn y(&self) -> usize {
        self.y
    }
    pub fn dimz(&self) -> usize {
        self.dimz
    }

    #[inline]
    fn at(&self, i: usize, j: usize) -> usize {
        (i * (self.y + 1) + j) * (self.dimz + 1)
    }

    /// Storage k range `t·z+1 ..= (t+1)·z` of tile `t` of height `z`, checked.
    fn k_range(&self, tile: usize, z: usize) -> Result<std::ops::Range<usize>> {
        if z == 0 || z > self.dimz {
            return Err(bad("z", format!("tile height must be in 1..={}, got {z}", self.dimz)));
        }
        let tiles = self.dimz / z;
        match tile.checked_mul(z).map(|s| (s, s + z)) {
            Some((start, end)) if end <= self.dimz => Ok(start + 1..end + 1),
            _ => Err(bad("tile", format!("tile {tile} of height {z} is outside k = 1..={} ({tiles} whole tiles)", self.dimz))),
        }
    }

    /// Compute tile `t` of height `z` (§5.3 `compute()`), i, j, then k ascending. Its inputs
    /// must be there: the halo planes of this tile and the tile below (or k = 0).
    pub fn compute_tile(&mut self, tile: usize, z: usize) -> Result<()> {
        let ks = self.k_range(tile, z)?;
        self.compute_k(ks);
        Ok(())
    }

    fn compute_k(&mut self, ks: std::ops::Range<usize>) {
        let (nz, y) = (self.dimz + 1, self.y);
        for i in 1..=self.x {
            for j in 1..=y {
                let here = (i * (y + 1) + j) * nz;
                let west = ((i - 1) * (y + 1) + j) * nz; // A(i-1, j, ·)
                let south = (i * (y + 1) + j - 1) * nz; // A(i, j-1, ·)
                // Both input columns lie before this one in memory: borrow them apart.
                let (before, from_here) = self.a.split_at_mut(here);
                let w = &before[west + ks.start..west + ks.end];
                let s = &before[south + ks.start..south + ks.end];
                let col = &mut from_here[ks.start - 1..ks.end];
                // k carries a dependence (A(i,j,k-1)), so this inner loop is a chain.
                let mut below = col[0];
                for ((out, &a), &b) in col[1..].iter_mut().zip(w).zip(s) {
                    let v = (a.sqrt() + b.sqrt()) + below.sqrt();
                    *out = v;
                    below = v;
                }
            }
        }
    }

    /// Length in floats of the face in i (the plane i = x of a tile: y·z) and in j (x·z),
    /// for a tile height `z` in 1..=dimz.
    pub fn face_len(&self, axis: Axis, z: usize) -> Result<usize> {
        self.k_range(0, z)?;
        Ok(self.side(axis) * z)
    }

    fn side(&self, axis: Axis) -> usize {
        match axis {
            Axis::I => self.y,
            Axis::J => self.x,
        }
    }

    /// The outgoing face of tile `t` in `axis` into `out` (length [`face_len`](Self::face_len)):
    /// for `I` the values A(x, j, k), j = 1..=y, k in the tile, j major; for `J` A(i, y, k),
    /// i = 1..=x, i major.
    pub fn face_into(&self, axis: Axis, tile: usize, z: usize, out: &mut [f32]) -> Result<()> {
        let ks = self.k_range(tile, z)?;
        self.check_len(axis, z, out.len())?;
        for (n, chunk) in out.chunks_exact_mut(z).enumerate() {
            let base = match axis {
                Axis::I => self.at(self.x, n + 1),
                Axis::J => self.at(n + 1, self.y),
            };
            chunk.copy_from_slice(&self.a[base + ks.start..base + ks.end]);
        }
        Ok(())
    }

    /// Set the incoming halo of tile `t` in `axis` from `data` (the predecessor's face, in
    /// the layout of [`face_into`](Self::face_into)): A(0, j, k) for `I`, A(i, 0, k) for `J`.
    pub fn set_halo(&mut self, axis: Axis, tile: usize, z: usize, data: &[f32]) -> Result<()> {
        let ks = self.k_range(tile, z)?;
        self.check_len(axis, z, data.len())?;
        for (n, chunk) in data.chunks_exact(z).enumerate() {
            let base = match axis {
                Axis::I => self.at(0, n + 1),
                Axis::J => self.at(n + 1, 0),
            };
            self.a[base + ks.start..base + ks.end].copy_from_slice(chunk);
        }
        Ok(())
    }

    fn check_len(&self, axis: Axis, z: usize, len: usize) -> Result<()> {
        let want = self.face_len(axis, z)?;
        if len != want {
            let (name, side) = match axis {
                Axis::I => ("i", self.y),
                Axis::J => ("j", self.x),
            };
            return Err(bad("face", format!("the face in {name} of a tile of height {z} has {side}·{z} = {want} floats, got {len}")));
        }
        Ok(())
    }

    /// The interior values A(i, j, k), i = 1..=x, j = 1..=y, k = 1..=dimz, in that order
    /// (k fastest).
    pub fn values(&self) -> Vec<f32> {
        self.interior().collect()
    }

    /// The interior values in the order of [`values`](Self::values), without a copy.
    pub fn interior(&self) -> impl Iterator<Item = f32> + '_ {
        (1..=self.x)
            .flat_map(move |i| (1..=self.y).map(move |j| self.at(i, j)))
            .flat_map(move |base| self.a[base + 1..base + 1 + self.dimz].iter().copied())
    }

    /// Number of interior points, x·y·dimz.
    pub fn points(&self) -> usize {
        self.x * self.y * self.dimz
    }

    /// Checksum of the interior (see [`region_checksum`](Self::region_checksum)).
    pub fn checksum(&self) -> (u64, f64) {
        self.region(0, 0, self.x, self.y)
    }

    /// Checksum of the `nx`×`ny`×dimz interior region whose first point is (i0+1, j0+1, 1):
    /// (FNV-1a over the 32-bit patterns of its values in (i, j, k) order, so equal exactly
    /// when every bit is equal; the f64 sum, for display). A rank's block compares with the
    /// region (p_i·x, p_j·y, x, y) of the sequential run.
    pub fn region_checksum(&self, i0: usize, j0: usize, nx: usize, ny: usize) -> Result<(u64, f64)> {
        let fits = |o: usize, n: usize, side: usize| o.checked_add(n).is_some_and(|e| e <= side);
        if !fits(i0, nx, self.x) || !fits(j0, ny, self.y) {
            return Err(bad(
                "region",
                format!("{nx}×{ny} points from ({i0}, {j0}) do not fit in the {}×{} block", self.x, self.y),
            ));
        }
        Ok(self.region(i0, j0, nx, ny))
    }

    fn region(&self, i0: usize, j0: usize, nx: usize, ny: usize) -> (u64, f64) {
        const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        let (mut h, mut sum) = (OFFSET, 0.0f64);
        for i in i0 + 1..=i0 + nx {
            for j in j0 + 1..=j0 + ny {
                let base = self.at(i, j);
                for &v in &self.a[base + 1..base + 1 + self.dimz] {
                    h = (h ^ u64::from(v.to_bits())).wrapping_mul(PRIME);
                    sum += f64::from(v);
                }
            }
        }
        (h, sum)
    }
}

/// The two directions a tile's results leave in (the k direction stays on the rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    I,
    J,
}

/// The sequential reference: the whole `dimx`×`dimy`×`dimz` space in one block, computed
/// in loop order (§5.3's loop nest).
pub fn sequential(dimx: usize, dimy: usize, dimz: usize) -> Result<TileBlock> {
    let mut b = TileBlock::new(dimx, dimy, dimz)?;
    b.compute_k(1..dimz + 1);
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run a p_i×p_j grid of blocks tile by tile, passing faces as the MPI programs do, in a
    /// wavefront order (tile t of rank (a, b) at step a + b + t); returns the blocks.
    fn tiled(dimx: usize, dimy: usize, dimz: usize, pi: usize, pj: usize, z: usize) -> Vec<Vec<TileBlock>> {
        let (x, y) = (dimx / pi, dimy / pj);
        let mut grid: Vec<Vec<TileBlock>> = (0..pi).map(|_| (0..pj).map(|_| TileBlock::new(x, y, dimz).unwrap()).collect()).collect();
        let tiles = dimz / z;
        let mut fi = vec![0f32; y * z];
        let mut fj = vec![0f32; x * z];
        for step in 0..pi + pj + tiles {
            for a in 0..pi {
                for b in 0..pj {
                    let Some(t) = step.checked_sub(a + b).filter(|&t| t < tiles) else { continue };
                    if a > 0 {
                        grid[a - 1][b].face_into(Axis::I, t, z, &mut fi).unwrap();
                        grid[a][b].set_halo(Axis::I, t, z, &fi).unwrap();
                    }
                    if b > 0 {
                        grid[a][b - 1].face_into(Axis::J, t, z, &mut fj).unwrap();
                        grid[a][b].set_halo(Axis::J, t, z, &fj).unwrap();
                    }
                    grid[a][b].compute_tile(t, z).unwrap();
                }
            }
        }
        grid
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn tiled_equals_sequential_bit_for_bit() {
        for (dimx, dimy, dimz, pi, pj, z) in
            [(8, 8, 256, 2, 2, 16), (8, 8, 256, 2, 2, 1), (8, 8, 256, 2, 2, 128), (12, 6, 60, 3, 2, 5), (4, 4, 9, 4, 4, 3), (6, 4, 8, 1, 1, 8)]
        {
            let seq = sequential(dimx, dimy, dimz).unwrap();
            let all = seq.values();
            assert!(all.iter().all(|v| v.is_finite() && (1.0..=9.0).contains(v)));
            let grid = tiled(dimx, dimy, dimz, pi, pj, z);
            let (x, y) = (dimx / pi, dimy / pj);
            for (a, row) in grid.iter().enumerate() {
                for (b, blk) in row.iter().enumerate() {
                    // The sequential region of rank (a, b), by hand from `values()`.
                    let want: Vec<f32> = (a * x..(a + 1) * x)
                        .flat_map(|i| (b * y..(b + 1) * y).map(move |j| (i, j)))
                        .flat_map(|(i, j)| all[(i * dimy + j) * dimz..(i * dimy + j + 1) * dimz].iter().copied())
                        .collect();
                    assert_eq!(bits(&blk.values()), bits(&want), "{dimx}x{dimy}x{dimz} on {pi}x{pj}, z={z}, rank ({a},{b})");
                    assert_eq!(blk.checksum(), seq.region_checksum(a * x, b * y, x, y).unwrap());
                }
            }
        }
    }

    #[test]
    fn values_by_hand_and_growth() {
        let s = sequential(2, 1, 2).unwrap();
        let v = s.values(); // A(1,1,1), A(1,1,2), A(2,1,1), A(2,1,2)
        let a111 = 3.0f32;
        let a112 = (1.0f32 + 1.0) + a111.sqrt();
        let a211 = (a111.sqrt() + 1.0) + 1.0;
        let a212 = (a112.sqrt() + 1.0) + a211.sqrt();
        assert_eq!(bits(&v), bits(&[a111, a112, a211, a212]));
        // Values stay below the fixed point 9 of v = 3·sqrt(v) on a larger space.
        let big = sequential(32, 32, 512).unwrap().values();
        let max = big.iter().cloned().fold(0.0f32, f32::max);
        assert!(max <= 9.0 && max > 8.0, "{max}");
    }

    #[test]
    fn a_missing_halo_or_tile_order_gives_a_different_result() {
        let seq = sequential(4, 4, 8).unwrap();
        // Rank (1, 0) of a 2x1 grid that never receives its i-halo: the 1.0 boundary stays.
        let mut blk = TileBlock::new(2, 4, 8).unwrap();
        blk.compute_tile(0, 8).unwrap();
        assert_ne!(blk.checksum(), seq.region_checksum(2, 0, 2, 4).unwrap());
        // A tile computed before the one below it reads NaN.
        let mut blk = TileBlock::new(4, 4, 8).unwrap();
        blk.compute_tile(1, 4).unwrap();
        blk.compute_tile(0, 4).unwrap();
        assert!(blk.values().iter().any(|v| v.is_nan()));
        assert_ne!(blk.checksum(), seq.checksum());
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert_eq!(TileBlock::new(0, 1, 1).unwrap_err().field, "x");
        assert_eq!(TileBlock::new(1, 0, 1).unwrap_err().field, "y");
        assert_eq!(TileBlock::new(1, 1, 0).unwrap_err().field, "dimz");
        assert_eq!(TileBlock::new(usize::MAX / 2, 4, 4).unwrap_err().field, "dimz");
        let mut b = TileBlock::new(2, 3, 8).unwrap();
        assert_eq!(b.compute_tile(0, 0).unwrap_err().field, "z");
        assert_eq!(b.compute_tile(0, 9).unwrap_err().field, "z");
        assert_eq!(b.compute_tile(2, 4).unwrap_err().field, "tile");
        assert_eq!(b.compute_tile(usize::MAX, 4).unwrap_err().field, "tile");
        assert!(b.compute_tile(2, 3).is_err()); // k 7..9 runs past dimz = 8
        assert_eq!(b.face_len(Axis::I, 4).unwrap(), 12);
        assert_eq!(b.face_len(Axis::J, 4).unwrap(), 8);
        assert_eq!(b.face_len(Axis::I, usize::MAX).unwrap_err().field, "z");
        let mut f = vec![0.0; 3 * 4];
        assert!(b.face_into(Axis::I, 1, 4, &mut f).is_ok());
        let e = b.face_into(Axis::J, 1, 4, &mut f).unwrap_err();
        assert_eq!(e.field, "face");
        assert!(e.reason.contains("2·4 = 8 floats, got 12"), "{e}");
        assert_eq!(b.set_halo(Axis::I, 0, 4, &f[..5]).unwrap_err().field, "face");
        assert_eq!(b.region_checksum(1, 0, 2, 3).unwrap_err().field, "region");
        assert_eq!(b.region_checksum(usize::MAX, 0, 2, 3).unwrap_err().field, "region");
    }
}
