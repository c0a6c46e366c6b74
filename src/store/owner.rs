//! The thread that owns one store: every operation runs there, in the order it was asked for,
//! so the caller (Node's main thread) never waits on SQLite. A transaction that waits for a
//! file another process has locked (up to the busy timeout) then stalls only this store's
//! later operations, never the event loop or any run's tool calls.

use super::{Durability, Store, StoreError};
use crossbeam_channel::{Receiver, Sender};

/// One operation: called with the store, or with `None` when the store is gone (its thread
/// ended), so whoever waits for an answer always gets one.
pub type Job = Box<dyn FnOnce(Option<&Store>) + Send>;

/// A handle on the owner thread. Dropping the last one ends the thread once the operations
/// already asked for are done.
pub struct StoreOwner {
    jobs: Sender<Job>,
}

impl StoreOwner {
    /// Opens the store at `path` on a thread of its own and waits for the result (creating the
    /// file and migrating its schema happen there too).
    pub fn open(path: &str, durability: Durability) -> Result<StoreOwner, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_run_on_the_owner_thread_in_order() {
        let owner = StoreOwner::open(":memory:", Durability::Normal).unwrap();
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
        let error = StoreOwner::open("/proc/no/such/dir/x.db", Durability::Normal).err();
        assert!(error.is_some_and(|e| e.message.contains("codemode store")));
    }
}
