//! libstdc++'s `std::sort` (GCC 12, `bits/stl_algo.h` and `stl_heap.h`), step for step: LogGOPSim
//! orders a host's ready operations with it by type alone, and above 16 elements this introsort
//! is not stable, so the order of equal types is part of LogGOPSim's result (SEMANTICS.md §2.6).
//! Neither of Rust's sorts gives that order.

/// Sorts `v` by `key` exactly as `std::sort(v.begin(), v.end(), key(a) < key(b))` does.
pub(super) fn std_sort<T: Copy, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K + Copy) {
    let n = v.len();
    if n == 0 {
        return;
    }
    let less = move |a: &T, b: &T| key(a) < key(b);
    introsort_loop(v, 0, n, 2 * (usize::BITS - 1 - n.leading_zeros()) as usize, less);
    if n > 16 {
        insertion_sort(v, 0, 16, less);
        for i in 16..n {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, 0, n, less);
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: impl Fn(&T, &T) -> bool) {
    let val = v[last];
    let mut next = last - 1;
    while less(&val, &v[next]) {
        v[last] = v[next];
        last = next;
        next = next.wrapping_sub(1);
    }
    v[last] = val;
}

fn insertion_sort<T: Copy>(v: &mut [T], first: usize, last: usize, less: impl Fn(&T, &T) -> bool + Copy) {
    if first == last {
        return;
    }
    for i in first + 1..last {
        if less(&v[i], &v[first]) {
            let val = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = val;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn adjust_heap<T: Copy>(v: &mut [T], first: usize, mut hole: usize, len: usize, value: T, less: impl Fn(&T, &T) -> bool) {
    let top = hole;
    let mut second = hole;
    while len > 0 && second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if less(&v[first + second], &v[first + second - 1]) {
            second -= 1;
        }
        v[first + hole] = v[first + second];
        hole = second;
    }
    if len & 1 == 0 && len >= 2 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[first + hole] = v[first + second - 1];
        hole = second - 1;
    }
    // __push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[first + parent], &value) {
            break;
        }
        v[first + hole] = v[first + parent];
        hole = parent;
    }
    v[first + hole] = value;
}

fn heap_sort<T: Copy>(v: &mut [T], first: usize, mut last: usize, less: impl Fn(&T, &T) -> bool + Copy) {
    let n = last - first;
    if n >= 2 {
        let mut parent = (n - 2) / 2;
        loop {
            adjust_heap(v, first, parent, n, v[first + parent], less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    while last - first > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[first];
        adjust_heap(v, first, 0, last - first, value, less);
    }
}

fn move_median_to_first<T: Copy>(v: &mut [T], result: usize, a: usize, b: usize, c: usize, less: impl Fn(&T, &T) -> bool) {
    let m = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, m);
}

fn unguarded_partition<T: Copy>(v: &mut [T], mut first: usize, mut last: usize, pivot: usize, less: impl Fn(&T, &T) -> bool) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn introsort_loop<T: Copy>(v: &mut [T], first: usize, mut last: usize, mut depth: usize, less: impl Fn(&T, &T) -> bool + Copy) {
    while last - first > 16 {
        if depth == 0 {
            heap_sort(v, first, last, less);
            return;
        }
        depth -= 1;
        let mid = first + (last - first) / 2;
        move_median_to_first(v, first, first + 1, mid, last - 1, less);
        let cut = unguarded_partition(v, first + 1, last, first, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (key, position) pairs; a small LCG so the test needs no generator.
    fn keyed(n: usize, seed: u64) -> Vec<(u8, usize)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (1 + (x >> 61) as u8 % 3, i)
            })
            .collect()
    }

    #[test]
    fn sorts_by_key_and_is_stable_up_to_16() {
        for n in 0..200 {
            let mut v = keyed(n, n as u64);
            std_sort(&mut v, |e| e.0);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
            if n <= 16 {
                assert!(v.windows(2).all(|w| w[0].0 < w[1].0 || w[0].1 < w[1].1));
            }
        }
    }

    #[test]
    fn heap_sort_sorts() {
        let mut v = keyed(100, 7);
        heap_sort(&mut v, 0, 100, |a: &(u8, usize), b: &(u8, usize)| a.0 < b.0);
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    /// The permutation g++ 12's std::sort makes of 40 ops (types below, by position), printed by
    /// a 10-line C++ program that sorts (type, position) pairs comparing types only.
    #[test]
    fn matches_libstdcxx_on_a_recorded_case() {
        let types: [u8; 40] = [2, 2, 1, 3, 2, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 3, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2];
        let mut v: Vec<(u8, usize)> = types.iter().copied().zip(0..).collect();
        std_sort(&mut v, |e| e.0);
        let got: Vec<usize> = v.iter().map(|e| e.1).collect();
        assert_eq!(got, EXPECTED_40);
    }
    const EXPECTED_40: [usize; 40] = [11, 22, 17, 32, 10, 6, 2, 5, 31, 39, 24, 25, 26, 27, 28, 30, 38, 33, 20, 37, 34, 35, 36, 14, 1, 4, 7, 8, 9, 12, 13, 23, 15, 16, 18, 19, 0, 21, 29, 3];
}
