//! The threads that own one store, so the caller (Node's main thread) never waits on the
//! database. A transaction that waits for a file or a row another process has locked (up to
//! the busy or statement timeout) then stalls only that thread, never the event loop or any
//! run's tool calls.
//!
//! - A SQLite file has one thread, one connection: operations run in the order asked for.
//! - A PostgreSQL database has up to `maxConnections` threads, one connection each, taking
//!   operations from one queue: each runs as soon as a connection is free, so operations asked
//!   for without waiting for the one before may finish in any order (the database serializes
//!   what they decide). A thread connects when it first gets an operation, and lets its
//!   connection go after `IDLE_CLOSE` without one (the server's connections are shared).

use super::postgres::{Migrated, PgTarget};
use super::{Durability, Store, StoreError, Target};
use crossbeam_channel::{Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

/// How long a PostgreSQL store's thread keeps its connection open without an operation.
const IDLE_CLOSE: Duration = Duration::from_secs(60);

/// One operation: called with the store, or with `None` when the store is gone (its thread
/// ended), so whoever waits for an answer always gets one.
pub type Job = Box<dyn FnOnce(Option<&Store>) + Send>;

/// A handle on the owner thread. Dropping the last one ends the thread once the operations
/// already asked for are done.
pub struct StoreOwner {
    jobs: Sender<Job>,
}

impl StoreOwner {
    /// The owner threads of the store at `target`: see [`StoreOwner::open_file`] and
    /// [`StoreOwner::connect`].
    pub fn open(target: Target) -> Result<StoreOwner, StoreError> {
        match target {
            Target::File(path, durability) => StoreOwner::open_file(&path, durability),
            Target::Postgres(target) => StoreOwner::connect(target),
        }
    }

    /// Threads for a PostgreSQL store. Nothing is connected yet: each thread connects when it
    /// first gets an operation, and a database that cannot be reached fails those operations
    /// (`ERR_STORE_UNAVAILABLE`), not this call.
    pub fn connect(target: Arc<PgTarget>) -> Result<StoreOwner, StoreError> {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        let migrated = Migrated::default();
        for i in 0..target.connections {
            let store = Store::postgres(target.clone(), migrated.clone());
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("codemode-store-{i}"))
                .spawn(move || serve_connected(&store, &queue))
                .map_err(|e| {
                    StoreError::io(format!("codemode store: cannot start its thread: {e}"))
                })?;
        }
        Ok(StoreOwner { jobs })
    }

    /// Opens the SQLite store at `path` on a thread of its own and waits for the result
    /// (creating the file and migrating its schema happen there too).
    pub fn open_file(path: &str, durability: Durability) -> Result<StoreOwner, StoreError> {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        let (opened, outcome) = crossbeam_channel::bounded(1);
        let path = path.to_string();
        std::thread::Builder::new()
            .name("codemode-store".into())
            .spawn(move || match Store::open(&path, durability) {
                Ok(store) => {
                    let _ = opened.send(Ok(()));
                    serve(&store, &queue);
                }
                Err(e) => {
                    let _ = opened.send(Err(e));
                }
            })
            .map_err(|e| StoreError::io(format!("codemode store: cannot start its thread: {e}")))?;
        match outcome.recv() {
            Ok(Ok(())) => Ok(StoreOwner { jobs }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StoreError::io(
                "codemode store: its thread ended while opening the file".to_string(),
            )),
        }
    }

    /// Queues `job` for the owner thread. When the thread is gone, `job` runs here at once with
    /// `None`.
    pub fn run(&self, job: Job) {
        if let Err(returned) = self.jobs.send(job) {
            (returned.0)(None);
        }
    }
}

fn serve(store: &Store, queue: &Receiver<Job>) {
    for job in queue {
        job(Some(store));
    }
}

/// `serve`, letting the connection go while no operation comes.
fn serve_connected(store: &Store, queue: &Receiver<Job>) {
    loop {
        match queue.recv_timeout(IDLE_CLOSE) {
            Ok(job) => job(Some(store)),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => store.disconnect(),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_run_on_the_owner_thread_in_order() {
        let owner = StoreOwner::open_file(":memory:", Durability::Normal).unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let caller = std::thread::current().id();
        for i in 0..3 {
            let tx = tx.clone();
            owner.run(Box::new(move |store| {
                let _ = tx.send((i, store.is_some(), std::thread::current().id() != caller));
            }));
        }
        let seen: Vec<_> = rx.iter().take(3).collect();
        assert_eq!(
            seen,
            vec![(0, true, true), (1, true, true), (2, true, true)]
        );
    }

    #[test]
    fn a_store_that_cannot_open_says_why() {
        let error = StoreOwner::open_file("/proc/no/such/dir/x.db", Durability::Normal).err();
        assert!(error.is_some_and(|e| e.message.contains("codemode store")));
    }
}
