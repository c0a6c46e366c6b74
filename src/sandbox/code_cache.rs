//! Compiled programs kept between runs, so that the same source (with its varying data in
//! `params`) is stripped, read and compiled once per pool: V8's code cache for the script or
//! module, with what was learned while preparing it (its form, the text V8 compiled). Keyed by
//! the source itself (a hash map compares the whole text on a hit, so no collision can run one
//! program's code for another's source), bounded in bytes (`codeCacheMb`), least recently used
//! entry dropped first.

use crate::program::Form;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a program was compiled from, and how it reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey {
    pub code: Arc<str>,
    pub typescript: bool,
    pub statements: bool,
}

/// One compiled program.
#[derive(Clone)]
pub(crate) struct CachedProgram {
    pub form: Form,
    /// The text V8 compiled when it is not the source (types stripped, a body wrapped).
    pub text: Option<Arc<str>>,
    /// V8's code cache for that text.
    pub data: Arc<[u8]>,
}

struct Entry {
    program: CachedProgram,
    bytes: usize,
    last_used: u64,
}

/// The cache of one pool (shared by its workers; one per engine process in 'process').
pub struct CodeCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<CacheKey, Entry>,
    bytes: usize,
    clock: u64,
}

impl CodeCache {
    /// A cache holding at most `capacity` bytes (source, text and code together); 0 keeps
    /// nothing.
    pub fn new(capacity: usize) -> CodeCache {
        CodeCache {
            capacity,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn get(&self, key: &CacheKey) -> Option<CachedProgram> {
        if self.capacity == 0 {
            return None;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let entry = inner.entries.get_mut(key)?;
        entry.last_used = now;
        Some(entry.program.clone())
    }

    pub(crate) fn insert(&self, key: CacheKey, program: CachedProgram) {
        let bytes =
            key.code.len() + program.text.as_ref().map_or(0, |t| t.len()) + program.data.len();
        if bytes > self.capacity {
            return;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let last_used = inner.clock;
        if let Some(old) = inner.entries.remove(&key) {
            inner.bytes -= old.bytes;
        }
        while inner.bytes + bytes > self.capacity {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone());
            let Some(oldest) = oldest else { break };
            if let Some(gone) = inner.entries.remove(&oldest) {
                inner.bytes -= gone.bytes;
            }
        }
        inner.bytes += bytes;
        inner.entries.insert(
            key,
            Entry {
                program,
                bytes,
                last_used,
            },
        );
    }

    /// Drops the entry for `key` (V8 refused its code).
    pub(crate) fn remove(&self, key: &CacheKey) {
        let mut inner = self.lock();
        if let Some(gone) = inner.entries.remove(key) {
            inner.bytes -= gone.bytes;
        }
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: &str) -> CacheKey {
        CacheKey {
            code: code.into(),
            typescript: true,
            statements: false,
        }
    }

    fn program(bytes: usize) -> CachedProgram {
        CachedProgram {
            form: Form::Expression,
            text: None,
            data: vec![0u8; bytes].into(),
        }
    }

    #[test]
    fn the_least_recently_used_entry_goes_first_and_the_bound_holds() {
        let cache = CodeCache::new(300);
        cache.insert(key("a"), program(99));
        cache.insert(key("b"), program(99));
        assert!(cache.get(&key("a")).is_some());
        cache.insert(key("c"), program(99));
        assert_eq!(cache.bytes(), 300);
        cache.insert(key("d"), program(99));
        assert!(cache.bytes() <= 300);
        assert!(
            cache.get(&key("b")).is_none(),
            "b was the least recently used"
        );
        assert!(cache.get(&key("a")).is_some());
        // Larger than the whole cache: not kept, nothing else dropped.
        cache.insert(key("e"), program(400));
        assert!(cache.get(&key("e")).is_none());
        assert!(cache.get(&key("d")).is_some());
        // The same source read another way is another entry.
        let js = CacheKey {
            typescript: false,
            ..key("a")
        };
        assert!(cache.get(&js).is_none());
        cache.remove(&key("a"));
        assert!(cache.get(&key("a")).is_none());
    }

    #[test]
    fn a_zero_capacity_keeps_nothing() {
        let cache = CodeCache::new(0);
        cache.insert(key("a"), program(1));
        assert!(cache.get(&key("a")).is_none());
        assert_eq!(cache.bytes(), 0);
    }
}
