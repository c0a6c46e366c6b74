//! What a fresh isolate costs on this machine, phase by phase, for the benchmark's report: the
//! floor under every execution, whatever the pool around it does.

use super::{snapshot, Sandbox};
use crate::limits::Limits;
use std::time::Duration;

/// Median CPU time of the calling thread for each phase of a fresh isolate's life.
#[derive(Debug, Clone, Copy)]
pub struct IsolatePhases {
    /// `v8::Isolate::new` from the bootstrap snapshot.
    pub create: Duration,
    /// Restoring the bootstrapped context and setting this isolate's bounds.
    pub restore: Duration,
    /// Dropping the isolate.
    pub drop: Duration,
}

/// Builds and drops `samples` sandboxes on the calling thread (which must not be a pool
/// worker's: V8 work only) and returns the median of each phase.
pub fn isolate_phases(limits: &Limits, samples: usize) -> Result<IsolatePhases, String> {
    // Warm: the snapshot exists and the anchor isolate keeps the isolate group alive, as in a
    // running pool.
    drop(Sandbox::new(limits)?);
    let samples = samples.max(1);
    let (mut create, mut restore, mut dropping) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..samples {
        let started = crate::os::thread_cpu_time();
        let mut isolate = v8::Isolate::new(snapshot::create_params()?);
        let created = crate::os::thread_cpu_time();
        let restored_context = snapshot::restore(&mut isolate, limits)?;
        let restored = crate::os::thread_cpu_time();
        drop(restored_context);
        drop(isolate);
        let dropped = crate::os::thread_cpu_time();
        create.push(created - started);
        restore.push(restored - created);
        dropping.push(dropped - restored);
    }
    Ok(IsolatePhases {
        create: median(create),
        restore: median(restore),
        drop: median(dropping),
    })
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}
