//! Compiled programs kept between runs, so that the same source (with its varying data in
//! `params`) is stripped, read and compiled once per pool: V8's code cache for the script or
//! module, with what was learned while preparing it (its form, the text V8 compiled). Keyed by
//! the source itself (a hash map compares the whole text on a hit, so no collision can run one
//! program's code for another's source), bounded in bytes (`codeCacheMb`), least recently used
//! entry dropped first.

use crate::program::Form;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a program was compiled from, and how it reads. Borrowed: looking a run's program up
/// copies nothing (only a miss that is stored keeps its own copy of the source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheKey<'a> {
    pub code: &'a str,
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

/// One reading of a source (its flags) and what it compiled to.
struct Slot {
    typescript: bool,
    statements: bool,
    program: CachedProgram,
    bytes: usize,
    last_used: u64,
}

impl Slot {
    fn reads_as(&self, key: &CacheKey<'_>) -> bool {
        self.typescript == key.typescript && self.statements == key.statements
    }
}

/// The cache of one pool (shared by its workers; one per engine process in 'process').
pub struct CodeCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// By source; each source has a slot per reading it was compiled with.
    entries: HashMap<Arc<str>, Vec<Slot>>,
    bytes: usize,
    clock: u64,
}

impl Inner {
    /// Drops the slot of `code` read as `key` says; true when there was one.
    fn remove(&mut self, key: &CacheKey<'_>) -> bool {
        let Some(slots) = self.entries.get_mut(key.code) else {
            return false;
        };
        let Some(at) = slots.iter().position(|slot| slot.reads_as(key)) else {
            return false;
        };
        self.bytes -= slots.swap_remove(at).bytes;
        if slots.is_empty() {
            self.entries.remove(key.code);
        }
        true
    }

    /// Drops the least recently used slot; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        let oldest = self
            .entries
            .iter()
            .flat_map(|(code, slots)| slots.iter().map(move |slot| (slot.last_used, code, slot)))
            .min_by_key(|(last_used, _, _)| *last_used)
            .map(|(_, code, slot)| (code.clone(), slot.typescript, slot.statements));
        let Some((code, typescript, statements)) = oldest else {
            return false;
        };
        self.remove(&CacheKey {
            code: &code,
            typescript,
            statements,
        })
    }
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

    pub(crate) fn get(&self, key: &CacheKey<'_>) -> Option<CachedProgram> {
        if self.capacity == 0 {
            return None;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let slot = inner
            .entries
            .get_mut(key.code)?
            .iter_mut()
            .find(|slot| slot.reads_as(key))?;
        slot.last_used = now;
        Some(slot.program.clone())
    }

    /// Stores `program` for `code` read as `key` says (`key.code` is `code`).
    pub(crate) fn insert(&self, code: Arc<str>, key: &CacheKey<'_>, program: CachedProgram) {
        let bytes = code.len() + program.text.as_ref().map_or(0, |t| t.len()) + program.data.len();
        if bytes > self.capacity {
            return;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let last_used = inner.clock;
        inner.remove(key);
        while inner.bytes + bytes > self.capacity && inner.evict_oldest() {}
        inner.bytes += bytes;
        inner.entries.entry(code).or_default().push(Slot {
            typescript: key.typescript,
            statements: key.statements,
            program,
            bytes,
            last_used,
        });
    }

    /// Drops the entry for `key` (V8 refused its code).
    pub(crate) fn remove(&self, key: &CacheKey<'_>) {
        self.lock().remove(key);
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: &str) -> CacheKey<'_> {
        CacheKey {
            code,
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

    fn put(cache: &CodeCache, code: &str, bytes: usize) {
        cache.insert(Arc::from(code), &key(code), program(bytes));
    }

    #[test]
    fn the_least_recently_used_entry_goes_first_and_the_bound_holds() {
        let cache = CodeCache::new(300);
        put(&cache, "a", 99);
        put(&cache, "b", 99);
        assert!(cache.get(&key("a")).is_some());
        put(&cache, "c", 99);
        assert_eq!(cache.bytes(), 300);
        put(&cache, "d", 99);
        assert!(cache.bytes() <= 300);
        assert!(
            cache.get(&key("b")).is_none(),
            "b was the least recently used"
        );
        assert!(cache.get(&key("a")).is_some());
        // Larger than the whole cache: not kept, nothing else dropped.
        put(&cache, "e", 400);
        assert!(cache.get(&key("e")).is_none());
        assert!(cache.get(&key("d")).is_some());
        // The same source read another way is another entry.
        let js = CacheKey {
            typescript: false,
            ..key("a")
        };
        assert!(cache.get(&js).is_none());
        cache.insert(Arc::from("a"), &js, program(1));
        assert!(cache.get(&js).is_some() && cache.get(&key("a")).is_some());
        cache.remove(&key("a"));
        assert!(cache.get(&key("a")).is_none());
        assert!(cache.get(&js).is_some(), "the other reading stays");
    }

    #[test]
    fn storing_a_source_again_replaces_its_entry() {
        let cache = CodeCache::new(1000);
        put(&cache, "a", 100);
        put(&cache, "a", 200);
        assert_eq!(cache.bytes(), 201);
        assert_eq!(cache.get(&key("a")).map(|p| p.data.len()), Some(200));
    }

    #[test]
    fn a_zero_capacity_keeps_nothing() {
        let cache = CodeCache::new(0);
        put(&cache, "a", 1);
        assert!(cache.get(&key("a")).is_none());
        assert_eq!(cache.bytes(), 0);
    }
}
