//! Work spread over a few threads, results in input order: for per-file work (checks, reads)
//! that the walk's order does not need.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on up to `threads` threads (the calling one among them); the
/// results come back in the order of `items`. Items are handed out one at a time, so a slow
/// one does not hold up a whole share.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, f(item)));
        }
        done
    };
    let mut all: Vec<(usize, R)> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for h in helpers {
            // A helper's panic is the caller's, as if it had run the item itself.
            match h.join() {
                Ok(mut d) => all.append(&mut d),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    all.sort_unstable_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_input_order_whatever_the_threads() {
        let items: Vec<u64> = (0..1000).collect();
        for threads in [0, 1, 2, 7] {
            let out = super::map(&items, threads, |n| {
                if n % 97 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                n * 2
            });
            assert_eq!(out, items.iter().map(|n| n * 2).collect::<Vec<_>>(), "{threads}");
        }
        assert!(super::map(&Vec::<u8>::new(), 4, |b| *b).is_empty());
    }
}
