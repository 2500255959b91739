//! A small bounded cache of shared values, oldest first: each of the server's per-capture
//! caches (chart rows, association reports, compare rows, report heads, studies).

use std::sync::{Arc, Mutex};

/// At most `cap` entries; putting one more drops the oldest.
pub struct Bounded<K, V> {
    cap: usize,
    items: Mutex<Vec<(K, Arc<V>)>>,
}

impl<K: PartialEq, V> Bounded<K, V> {
    pub fn new(cap: usize) -> Self {
        Bounded {
            cap,
            items: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(K, Arc<V>)>> {
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value of `key`; with `touch` it becomes the newest (least recently used goes first),
    /// without, entries go in the order they were put.
    pub fn get(&self, key: &K, touch: bool) -> Option<Arc<V>> {
        let mut c = self.lock();
        let pos = c.iter().position(|(k, _)| k == key)?;
        if touch {
            let hit = c.remove(pos);
            let v = hit.1.clone();
            c.push(hit);
            Some(v)
        } else {
            Some(c[pos].1.clone())
        }
    }

    /// Puts `v` as the newest entry of `key` (replacing one there was).
    pub fn put(&self, key: K, v: Arc<V>) {
        let mut c = self.lock();
        c.retain(|(k, _)| *k != key);
        c.push((key, v));
        if c.len() > self.cap {
            c.remove(0);
        }
    }

    /// Drops the entries whose key matches.
    pub fn remove_where(&self, f: impl Fn(&K) -> bool) {
        self.lock().retain(|(k, _)| !f(k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_goes_first_and_touch_makes_an_entry_the_newest() {
        let c = Bounded::new(2);
        c.put(1, Arc::new("a"));
        c.put(2, Arc::new("b"));
        assert_eq!(c.get(&1, true).as_deref(), Some(&"a"));
        c.put(3, Arc::new("c"));
        // 2 was the oldest once 1 was touched.
        assert!(c.get(&2, false).is_none());
        assert!(c.get(&1, false).is_some());
        c.put(4, Arc::new("d"));
        // Not touched: 1 is the oldest now.
        assert!(c.get(&1, false).is_none());
        c.remove_where(|k| *k == 3);
        assert!(c.get(&3, false).is_none());
        assert!(c.get(&4, false).is_some());
    }
}
