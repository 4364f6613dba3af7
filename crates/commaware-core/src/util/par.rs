//! Work split over the machine's cores, results kept in input order.

/// `f(index, item)` for every item of `items`, on every core (one run of consecutive items
/// per thread), the results in input order. A panic in `f` goes on in the caller.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(n);
    if threads <= 1 {
        return items.iter().enumerate().map(|(i, x)| f(i, x)).collect();
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| scope.spawn(move || part.iter().enumerate().map(|(i, x)| f(c * chunk + i, x)).collect::<Vec<R>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_input_order_with_their_index() {
        let items: Vec<u64> = (0..1001).collect();
        let out = map_in_order(&items, |i, &x| (i as u64, x * x));
        assert_eq!(out, items.iter().map(|&x| (x, x * x)).collect::<Vec<_>>());
        assert!(map_in_order(&[] as &[u8], |_, &x| x).is_empty());
    }
}
