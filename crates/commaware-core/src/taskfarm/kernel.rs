//! The atomic compute task of paper 000 §2: `k` diagonals of the square of an `n`×`n`
//! integer matrix (n = 1024, k = 1 in the paper), used by `commaware measure interference`
//! to measure how much concurrent communication slows computation down.
//!
//! Diagonal `d` of A² is the vector `(A²)[i][(i+d) mod n] = Σ_j A[i][j]·A[j][(i+d) mod n]`,
//! computed with wrapping `i32` arithmetic. Each task returns a checksum (the wrapping sum
//! of its diagonals' entries) so that the work cannot be optimised away.

use crate::error::{Error, ErrorKind, Result};
use crate::util::rng::SplitMix64;

/// Largest matrix side accepted (the matrix takes 4·n² bytes: 256 MiB at 8192).
pub const MAX_N: usize = 8192;

/// A seeded `n`×`n` matrix of `i32`, row-major, and the diagonals per task.
#[derive(Debug, Clone)]
pub struct DiagonalKernel {
    n: usize,
    k: usize,
    a: Vec<i32>,
}

impl DiagonalKernel {
    /// The kernel for an `n`×`n` matrix (2 ≤ n ≤ [`MAX_N`]) and `k` diagonals per task
    /// (1 ≤ k ≤ n); the entries are full-range `i32` from SplitMix64(`seed`), row by row.
    pub fn new(n: usize, k: usize, seed: u64) -> Result<Self> {
        if !(2..=MAX_N).contains(&n) {
            return Err(Error::new(ErrorKind::Options, "n", format!("must be an integer in 2..={MAX_N}, got {n}")));
        }
        if k < 1 || k > n {
            return Err(Error::new(ErrorKind::Options, "k", format!("must be an integer in 1..=n ({n}), got {k}")));
        }
        let mut rng = SplitMix64::new(seed);
        let a = (0..n * n).map(|_| rng.next_u64() as u32 as i32).collect();
        Ok(DiagonalKernel { n, k, a })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// The matrix, row-major.
    pub fn matrix(&self) -> &[i32] {
        &self.a
    }

    /// Diagonal `d` (taken mod n) of A², written into `out` (length n).
    pub fn diagonal_into(&self, d: usize, out: &mut [i32]) {
        let n = self.n;
        for (i, o) in out.iter_mut().enumerate().take(n) {
            let c = (i + d) % n;
            let row = &self.a[i * n..(i + 1) * n];
            let mut s: i32 = 0;
            for (j, &x) in row.iter().enumerate() {
                s = s.wrapping_add(x.wrapping_mul(self.a[j * n + c]));
            }
            *o = s;
        }
    }

    /// One atomic task: diagonals `first, first+1, …, first+k−1` (mod n) of A²; returns the
    /// wrapping sum of their entries.
    pub fn task(&self, first: usize) -> i32 {
        let mut diag = vec![0i32; self.n];
        let mut sum: i32 = 0;
        for d in first..first + self.k {
            self.diagonal_into(d % self.n, &mut diag);
            sum = diag.iter().fold(sum, |acc, &v| acc.wrapping_add(v));
        }
        sum
    }

    /// Run tasks back to back (task t starts at diagonal t·k mod n) until `keep_going` says
    /// stop; `keep_going(done)` is asked after every task with the number completed so far.
    /// Returns the number of tasks and the wrapping sum of their checksums.
    pub fn run_while(&self, mut keep_going: impl FnMut(u64) -> bool) -> (u64, i32) {
        let mut done: u64 = 0;
        let mut sum: i32 = 0;
        loop {
            let first = ((done as u128 * self.k as u128) % self.n as u128) as usize;
            sum = sum.wrapping_add(std::hint::black_box(self.task(first)));
            done += 1;
            if !keep_going(done) {
                return (done, sum);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naive A² in i64, reduced mod 2^32 at the end (same result as wrapping i32).
    fn square(a: &[i32], n: usize) -> Vec<i32> {
        let mut p = vec![0i32; n * n];
        for i in 0..n {
            for c in 0..n {
                let s: i64 = (0..n).fold(0i64, |acc, j| acc.wrapping_add(a[i * n + j] as i64 * a[j * n + c] as i64));
                p[i * n + c] = s as i32;
            }
        }
        p
    }

    #[test]
    fn diagonals_match_naive_square() {
        for (n, k) in [(2, 1), (5, 3), (7, 7), (16, 4)] {
            let kern = DiagonalKernel::new(n, k, 42).unwrap();
            let p = square(kern.matrix(), n);
            let mut out = vec![0; n];
            for d in 0..n {
                kern.diagonal_into(d, &mut out);
                let want: Vec<i32> = (0..n).map(|i| p[i * n + (i + d) % n]).collect();
                assert_eq!(out, want, "n={n} d={d}");
            }
            for first in [0, n - 1, 2 * n + 1] {
                let want = (first..first + k)
                    .flat_map(|d| (0..n).map(move |i| (i, (i + d) % n)))
                    .fold(0i32, |acc, (i, c)| acc.wrapping_add(p[i * n + c]));
                assert_eq!(kern.task(first), want, "n={n} k={k} first={first}");
            }
        }
    }

    #[test]
    fn run_while_counts_and_is_deterministic() {
        let kern = DiagonalKernel::new(8, 3, 1).unwrap();
        let (done, sum) = kern.run_while(|d| d < 5);
        assert_eq!(done, 5);
        let want = (0..5u64).fold(0i32, |acc, t| acc.wrapping_add(kern.task((t as usize * 3) % 8)));
        assert_eq!(sum, want);
    }

    #[test]
    fn bad_sizes() {
        assert_eq!(DiagonalKernel::new(1, 1, 0).unwrap_err().field, "n");
        assert_eq!(DiagonalKernel::new(4, 0, 0).unwrap_err().field, "k");
        assert_eq!(DiagonalKernel::new(4, 5, 0).unwrap_err().field, "k");
    }
}
