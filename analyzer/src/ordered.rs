//! Runs a function over many inputs on a few threads and hands the results on in input order,
//! with at most `window` results computed ahead of the one the consumer waits for. Unlike
//! processing the inputs in groups, no worker ever waits at a group's end for another's slow
//! input: it only waits when the window is full (bounded memory).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

struct Shared<R> {
    /// Results not yet consumed, by input index.
    done: BTreeMap<usize, R>,
    /// Results consumed so far (the consumer waits for index `consumed`).
    consumed: usize,
    /// The consumer stopped (its sink failed): workers stop too.
    stop: bool,
    /// A worker's panic, re-raised on the calling thread.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

/// Waits on `c` (a peer that panicked holding the lock leaves nothing half-updated here).
fn wait<'a, S>(c: &Condvar, g: MutexGuard<'a, S>) -> MutexGuard<'a, S> {
    c.wait(g).unwrap_or_else(|e| e.into_inner())
}

/// Computes `work(&items[i])` for every `i` on `jobs` threads and calls `sink` with the results
/// in input order, on the calling thread. Stops at the first error of `sink` and returns it; a
/// panic in `work` is re-raised here once the other workers stopped.
pub fn for_each_ordered<T, R, E>(
    items: &[T],
    jobs: usize,
    window: usize,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let window = window.max(1);
    let next = AtomicUsize::new(0);
    let shared = Mutex::new(Shared {
        done: BTreeMap::new(),
        consumed: 0,
        stop: false,
        panic: None,
    });
    // `ready`: a result arrived (consumer); `room`: the window moved or the run stops (workers).
    let (ready, room) = (Condvar::new(), Condvar::new());
    let lock = || shared.lock().unwrap_or_else(|e| e.into_inner());
    let result = std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(items.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    return;
                }
                let mut g = lock();
                while !g.stop && i >= g.consumed + window {
                    g = wait(&room, g);
                }
                if g.stop {
                    return;
                }
                drop(g);
                let r = catch_unwind(AssertUnwindSafe(|| work(&items[i])));
                let mut g = lock();
                match r {
                    Ok(r) => {
                        g.done.insert(i, r);
                    }
                    Err(p) => {
                        g.panic.get_or_insert(p);
                        g.stop = true;
                        room.notify_all();
                    }
                }
                ready.notify_one();
            });
        }
        for i in 0..items.len() {
            let mut g = lock();
            let r = loop {
                if let Some(r) = g.done.remove(&i) {
                    break r;
                }
                if g.stop {
                    return Ok(());
                }
                g = wait(&ready, g);
            };
            g.consumed = i + 1;
            room.notify_all();
            drop(g);
            if let Err(e) = sink(r) {
                let mut g = lock();
                g.stop = true;
                room.notify_all();
                return Err(e);
            }
        }
        Ok(())
    });
    if let Some(p) = lock().panic.take() {
        resume_unwind(p);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_input_order_whatever_the_work_time() {
        let items: Vec<u64> = (0..300).collect();
        let mut got = Vec::new();
        for_each_ordered(
            &items,
            3,
            8,
            |&x| {
                // Uneven work: some inputs take much longer than their neighbours.
                if x % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                x * 2
            },
            |r| {
                got.push(r);
                Ok::<_, ()>(())
            },
        )
        .unwrap();
        assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn no_more_than_the_window_is_computed_ahead() {
        let items: Vec<usize> = (0..100).collect();
        let consumed = AtomicUsize::new(0);
        let ahead = AtomicUsize::new(0);
        for_each_ordered(
            &items,
            4,
            5,
            |&i| {
                let c = consumed.load(Ordering::SeqCst);
                ahead.fetch_max(i.saturating_sub(c), Ordering::SeqCst);
                i
            },
            |_| {
                consumed.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ()>(())
            },
        )
        .unwrap();
        // A result is taken off the window before the sink runs for it: counted by the sink,
        // a worker may be one further ahead than the window.
        assert!(ahead.load(Ordering::SeqCst) <= 5);
    }

    #[test]
    fn a_sink_error_stops_the_run() {
        let items: Vec<usize> = (0..1000).collect();
        let calls = AtomicUsize::new(0);
        let r = for_each_ordered(
            &items,
            2,
            4,
            |&i| {
                calls.fetch_add(1, Ordering::SeqCst);
                i
            },
            |i| if i == 10 { Err(i) } else { Ok(()) },
        );
        assert_eq!(r, Err(10));
        assert!(calls.load(Ordering::SeqCst) < 20);
    }

    #[test]
    fn a_panicking_worker_is_re_raised_without_hanging() {
        let items: Vec<usize> = (0..50).collect();
        let r = catch_unwind(|| {
            for_each_ordered(
                &items,
                2,
                4,
                |&i| {
                    assert!(i != 7, "input 7 fails");
                    i
                },
                |_| Ok::<_, ()>(()),
            )
        });
        assert!(r.is_err());
    }
}
