use super::*;
use rusqlite::{params, Connection};
use std::time::Duration;

/// A name no other store of these tests has (a file's folder, a PostgreSQL schema).
fn fresh_place() -> String {
    static PLACES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "t{}_{}_{}",
        std::process::id(),
        PLACES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        now_ms()
    )
}

/// The PostgreSQL server `CODEMODE_PG_URL` names (`npm test` starts one where it can), if any.
fn postgres_url() -> Option<String> {
    std::env::var("CODEMODE_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

/// A PostgreSQL store target in a fresh schema (its name returned too), with `settings`.
fn postgres_target(settings: postgres::PgSettings) -> Option<(String, Arc<postgres::PgTarget>)> {
    let url = postgres_url()?;
    let schema = fresh_place();
    let settings = postgres::PgSettings {
        schema: Some(schema.clone()),
        ..settings
    };
    Some((
        schema,
        Arc::new(postgres::PgTarget::parse(&url, &settings).unwrap()),
    ))
}

/// Runs `test` once per kind of store these tests can reach, each time with an opener of new
/// connections to one fresh, empty store: a SQLite file, and a PostgreSQL database (a schema of
/// its own) when `CODEMODE_PG_URL` names a server.
fn each_store(test: impl Fn(&(dyn Fn() -> Store + Sync))) {
    let dir = std::env::temp_dir().join(format!("codemode-store-{}", fresh_place()));
    let file = dir.join("runtime.db").to_str().unwrap().to_string();
    test(&|| Store::open(&file, Durability::Normal).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    if let Some((_, target)) = postgres_target(Default::default()) {
        test(&|| Store::postgres(target.clone(), Default::default()));
    }
}

const RT: &str = "default";

/// The owner id of the passes in these tests, and a lease for it well into the future.
const OWNER: &str = "test-owner";

fn lease() -> Lease<'static> {
    Lease {
        owner: OWNER,
        until_ms: now_ms() + 60_000,
    }
}

fn call<'a>(seq: i64, connector: &'a str, method: &'a str, args: &str, approval: bool) -> Call<'a> {
    Call {
        seq,
        connector,
        method,
        args: Ok(Some(args.to_string())),
        args_stable: Some(args.to_string()),
        recorded_stable: Some(args.to_string()),
        requires_approval: approval,
        ephemeral: false,
        idempotent: false,
    }
}

#[test]
fn state_names_are_the_stored_text() {
    let statuses: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        statuses,
        [
            "running",
            "paused",
            "completed",
            "error",
            "rejected",
            "rolled_back"
        ]
    );
    let states: Vec<&str> = EntryState::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        states,
        [
            "pending",
            "executing",
            "applied",
            "reverted",
            "error",
            "in_doubt"
        ]
    );
    for s in Status::ALL {
        assert_eq!(Status::parse(s.as_str()), Some(*s));
    }
    assert_eq!(Status::parse("nope"), None);
}

fn status(store: &Store, id: &str) -> &'static str {
    store
        .get_execution(RT, id)
        .unwrap()
        .unwrap()
        .status
        .as_str()
}

#[test]
fn a_run_records_replays_and_completes() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e1", "code", "[\"gh\"]", 50, &lease(), None)
            .unwrap();
        assert_eq!(
            store
                .decide(RT, "e1", OWNER, &call(0, "gh", "list", "{}", false))
                .unwrap(),
            Decision::Execute
        );
        store
            .record_result(RT, "e1", 0, Ok(Some("[1,2]".into())))
            .unwrap();
        // A second pass over the same code replays.
        assert_eq!(
            store
                .decide(RT, "e1", OWNER, &call(0, "gh", "list", "{}", false))
                .unwrap(),
            Decision::Replay(Some("[1,2]".into()))
        );
        store
            .complete(RT, "e1", OWNER, Some("3"), Some("[\"log\"]"))
            .unwrap();
        let e = store.get_execution(RT, "e1").unwrap().unwrap();
        assert_eq!(e.status, "completed");
        assert_eq!(e.result.as_deref(), Some("3"));
        assert_eq!(e.log.len(), 1);
        assert_eq!(e.log[0].state, "applied");
        // Not running any more: every decision pauses, nothing is recorded.
        assert_eq!(
            store
                .decide(RT, "e1", OWNER, &call(1, "gh", "x", "{}", false))
                .unwrap(),
            Decision::Pause
        );
        assert_eq!(store.get_execution(RT, "e1").unwrap().unwrap().log.len(), 1);
        assert_eq!(
            store
                .decide(RT, "nope", OWNER, &call(0, "gh", "x", "{}", false))
                .unwrap_err(),
            StoreError::missing("No execution \"nope\"".into())
        );
        let missing = store.record_result(RT, "e1", 9, Ok(None)).unwrap_err();
        assert_eq!(missing.code, crate::error::ErrorCode::InvalidArgument);
        assert_eq!(missing.message, "No log entry at step 9");
    });
}

#[test]
fn approval_pauses_then_executes_once_and_a_stale_reject_is_a_no_op() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        assert_eq!(
            store
                .decide(RT, "e", OWNER, &call(0, "gh", "create", "{\"t\":1}", true))
                .unwrap(),
            Decision::Pause
        );
        assert_eq!(status(&store, "e"), "paused");
        let pending = store.list_pending(RT, Some("e")).unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].method, "create");
        // The pass that paused still holds the run until it ends.
        assert_eq!(
            store.resume(RT, "e", &lease(), None).unwrap(),
            Resumed::Leased
        );
        assert!(store.release(RT, "e", OWNER).unwrap());
        assert_eq!(
            store.resume(RT, "e", &lease(), Some(7)).unwrap(),
            Resumed::Stale(vec![0]),
            "an approval of an action that is not waiting is refused"
        );
        assert_eq!(
            store.resume(RT, "e", &lease(), Some(0)).unwrap(),
            Resumed::Resumed
        );
        assert_eq!(
            store.resume(RT, "e", &lease(), None).unwrap(),
            Resumed::NotPaused(Status::Running),
            "only a paused run resumes"
        );
        // Pending while running is not listed.
        assert!(store.list_pending(RT, Some("e")).unwrap().is_empty());
        assert_eq!(
            store
                .decide(RT, "e", OWNER, &call(0, "gh", "create", "{\"t\":1}", true))
                .unwrap(),
            Decision::Execute
        );
        // The entry was claimed (`executing`): a reject now changes nothing.
        assert_eq!(store.reject(RT, "e", 0).unwrap(), Rejected::NotPending);
        assert_eq!(status(&store, "e"), "running");
    });
}

#[test]
fn reject_reverts_the_entry_and_rejects_the_run() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "e", OWNER, &call(0, "gh", "create", "{}", true))
            .unwrap();
        assert_eq!(store.reject(RT, "e", 0).unwrap(), Rejected::Leased);
        store.release(RT, "e", OWNER).unwrap();
        assert_eq!(store.reject(RT, "e", 0).unwrap(), Rejected::Rejected);
        let e = store.get_execution(RT, "e").unwrap().unwrap();
        assert_eq!(e.status, "rejected");
        assert_eq!(
            e.error.as_deref(),
            Some("Action gh.create rejected by user")
        );
        assert_eq!(e.log[0].state, "reverted");
        assert_eq!(store.reject(RT, "e", 0).unwrap(), Rejected::NotPending);
    });
}

#[test]
fn divergence_fails_the_run_with_the_spec_messages() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "a", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "a", OWNER, &call(0, "gh", "list", "{}", false))
            .unwrap();
        store
            .record_result(RT, "a", 0, Ok(Some("1".into())))
            .unwrap();
        assert_eq!(
            store
                .decide(RT, "a", OWNER, &call(0, "gh", "other", "{}", false))
                .unwrap(),
            Decision::Pause
        );
        let e = store.get_execution(RT, "a").unwrap().unwrap();
        assert_eq!(e.status, "error");
        assert_eq!(
            e.error.unwrap(),
            "Codemode replay divergence at step 0: expected gh.list, got gh.other. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn)."
        );

        store
            .begin(RT, "b", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "b", OWNER, &call(0, "gh", "list", "{\"p\":1}", false))
            .unwrap();
        store
            .record_result(RT, "b", 0, Ok(Some("1".into())))
            .unwrap();
        assert_eq!(
            store
                .decide(RT, "b", OWNER, &call(0, "gh", "list", "{\"p\":2}", false))
                .unwrap(),
            Decision::Pause
        );
        let e = store.get_execution(RT, "b").unwrap().unwrap();
        assert_eq!(
            e.error.unwrap(),
            "Codemode replay divergence at step 0: gh.list was called with different arguments than the recorded run. Arguments must be deterministic across replays. Wrap nondeterministic inputs in codemode.step(name, fn)."
        );
        // Unserializable on either side: no comparison.
        store
            .begin(RT, "c", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "c", OWNER, &call(0, "gh", "list", "{\"p\":1}", false))
            .unwrap();
        store
            .record_result(RT, "c", 0, Ok(Some("1".into())))
            .unwrap();
        let mut unstable = call(0, "gh", "list", "{}", false);
        unstable.args_stable = None;
        assert_eq!(
            store.decide(RT, "c", OWNER, &unstable).unwrap(),
            Decision::Replay(Some("1".into()))
        );
    });
}

#[test]
fn unrecordable_values_fail_the_run() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        let mut big = call(0, "gh", "put", "{}", false);
        big.args = Err("Arguments to gh.put is too large".into());
        assert_eq!(store.decide(RT, "e", OWNER, &big).unwrap(), Decision::Pause);
        assert_eq!(status(&store, "e"), "error");

        store
            .begin(RT, "f", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "f", OWNER, &call(0, "gh", "get", "{}", false))
            .unwrap();
        store
            .record_result(RT, "f", 0, Err("The result of gh.get is too large".into()))
            .unwrap();
        let e = store.get_execution(RT, "f").unwrap().unwrap();
        assert_eq!(e.status, "error");
        assert_eq!(e.log[0].state, "error");
    });
}

#[test]
fn ephemeral_entries_reexecute_and_store_no_result() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        let mut c = call(0, "clock", "now", "{}", false);
        c.ephemeral = true;
        assert_eq!(store.decide(RT, "e", OWNER, &c).unwrap(), Decision::Execute);
        store
            .record_result(RT, "e", 0, Ok(Some("123".into())))
            .unwrap();
        let entry = &store.get_execution(RT, "e").unwrap().unwrap().log[0];
        assert_eq!(entry.result, None);
        assert_eq!(entry.state, "applied");
        assert_eq!(store.decide(RT, "e", OWNER, &c).unwrap(), Decision::Execute);
    });
}

#[test]
fn expiry_prune_rollback_and_delete() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "p", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "p", OWNER, &call(0, "gh", "create", "{}", true))
            .unwrap();
        store
            .begin(RT, "r", "code", "[]", 50, &lease(), None)
            .unwrap();
        std::thread::sleep(Duration::from_millis(3));
        // Both are held by a live pass: never expired.
        assert!(store.expire_paused(RT, 0).unwrap().is_empty());
        store.release(RT, "p", OWNER).unwrap();
        store.release(RT, "r", OWNER).unwrap();
        let mut expired = store.expire_paused(RT, 0).unwrap();
        expired.sort();
        assert_eq!(expired, vec!["p".to_string(), "r".to_string()]);
        let p = store.get_execution(RT, "p").unwrap().unwrap();
        assert_eq!(
            (p.status.as_str(), p.error.as_deref()),
            ("rejected", Some("Expired awaiting approval"))
        );
        assert_eq!(p.log[0].state, "reverted");
        let r = store.get_execution(RT, "r").unwrap().unwrap();
        assert_eq!(r.status, "error");
        assert_eq!(
            r.error.as_deref(),
            Some("Expired while running — the host never completed the pass")
        );

        store
            .begin(RT, "w", "code", "[]", 50, &lease(), None)
            .unwrap();
        for seq in 0..3 {
            store
                .decide(RT, "w", OWNER, &call(seq, "gh", "put", "{}", false))
                .unwrap();
            store
                .record_result(RT, "w", seq, Ok(Some("1".into())))
                .unwrap();
        }
        store
            .decide(RT, "w", OWNER, &call(3, STEP_CONNECTOR, "s", "null", false))
            .unwrap();
        store
            .record_result(RT, "w", 3, Ok(Some("1".into())))
            .unwrap();
        let seqs: Vec<i64> = store
            .actions_to_revert(RT, "w")
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, vec![2, 1, 0]);
        store.mark_reverted(RT, "w", 2).unwrap();
        store.mark_rolled_back(RT, "w").unwrap();
        assert_eq!(status(&store, "w"), "rolled_back");

        for i in 0..5 {
            let id = format!("t{i}");
            store
                .begin(RT, &id, "code", "[]", 50, &lease(), None)
                .unwrap();
            store.complete(RT, &id, OWNER, None, None).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        store
            .begin(RT, "live", "code", "[]", 50, &lease(), None)
            .unwrap();
        // Terminal: p, r, w, t0..t4 = 8; keep 3 → 5 deleted; `live` untouched.
        assert_eq!(store.prune_executions(RT, 3).unwrap(), 5);
        let ids: Vec<String> = store
            .list_executions(RT, None)
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, vec!["live", "t4", "t3", "t2"]);
        assert_eq!(
            store.delete_execution(RT, "live").unwrap(),
            Some(Status::Running)
        );
        assert_eq!(store.delete_execution(RT, "live").unwrap(), None);
    });
}

#[test]
fn a_failed_revert_is_kept_on_its_entry_until_a_rollback_reverts_it() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "f", "code", "[]", 50, &lease(), None)
            .unwrap();
        for seq in 0..2 {
            store
                .decide(RT, "f", OWNER, &call(seq, "gh", "put", "{}", false))
                .unwrap();
            store
                .record_result(RT, "f", seq, Ok(Some("1".into())))
                .unwrap();
        }
        store.complete(RT, "f", OWNER, None, None).unwrap();
        let errors = |store: &Store| -> Vec<(EntryState, Option<String>)> {
            let e = store.get_execution(RT, "f").unwrap().unwrap();
            e.log
                .into_iter()
                .map(|l| (l.state, l.revert_error))
                .collect()
        };
        // A rollback reverts seq 1 and fails on seq 0: the run is rolled back, seq 0 says why
        // it is still in force.
        store.mark_reverted(RT, "f", 1).unwrap();
        assert!(store.mark_revert_failed(RT, "f", 0, "busy").unwrap());
        assert!(
            !store.mark_revert_failed(RT, "f", 1, "x").unwrap(),
            "a reverted entry is not in force"
        );
        assert!(
            !store.mark_revert_failed(RT, "f", 7, "x").unwrap(),
            "no entry"
        );
        store.mark_rolled_back(RT, "f").unwrap();
        assert_eq!(status(&store, "f"), "rolled_back");
        assert_eq!(
            errors(&store),
            vec![
                (EntryState::Applied, Some("busy".into())),
                (EntryState::Reverted, None)
            ]
        );
        assert_eq!(
            store.actions_to_revert(RT, "f").unwrap()[0]
                .revert_error
                .as_deref(),
            Some("busy")
        );
        // A later rollback reverts it: the failure is cleared.
        store.mark_reverted(RT, "f", 0).unwrap();
        assert_eq!(
            errors(&store),
            vec![(EntryState::Reverted, None), (EntryState::Reverted, None)]
        );
    });
}

#[test]
fn runtimes_are_partitions_and_snippets_upsert() {
    each_store(|open| {
        let store = open();
        store
            .begin("a", "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        assert!(store.get_execution("b", "e").unwrap().is_none());
        let snippet = |name: &str, description: &str| Snippet {
            name: name.into(),
            description: description.into(),
            code: "async () => 1".into(),
            saved_at: 1,
            input_schema: None,
            connectors: Some("[]".into()),
        };
        store.save_snippet("a", &snippet("b-one", "x")).unwrap();
        store.save_snippet("a", &snippet("B-two", "y")).unwrap();
        store.save_snippet("a", &snippet("b-one", "z")).unwrap();
        let names: Vec<(String, String)> = store
            .snippets("a")
            .unwrap()
            .into_iter()
            .map(|s| (s.name, s.description))
            .collect();
        assert_eq!(
            names,
            vec![("B-two".into(), "y".into()), ("b-one".into(), "z".into())]
        );
        assert!(store.snippets("b").unwrap().is_empty());
        assert!(store.delete_snippet("a", "b-one").unwrap());
        assert!(!store.delete_snippet("a", "b-one").unwrap());
    });
}

#[test]
fn racing_approve_and_reject_from_two_connections_apply_at_most_once() {
    each_store(|open| {
        for round in 0..20 {
            let id = format!("e{round}");
            {
                let store = open();
                store
                    .begin(RT, &id, "code", "[]", 1000, &lease(), None)
                    .unwrap();
                store
                    .decide(RT, &id, OWNER, &call(0, "gh", "create", "{}", true))
                    .unwrap();
                store.release(RT, &id, OWNER).unwrap();
            }
            let (approver, rejecter) = (open(), open());
            let (executed, rejected) = std::thread::scope(|scope| {
                let approve = scope.spawn(|| {
                    if approver.resume(RT, &id, &lease(), Some(0)).unwrap() == Resumed::Resumed {
                        approver
                            .decide(RT, &id, OWNER, &call(0, "gh", "create", "{}", true))
                            .unwrap()
                            == Decision::Execute
                    } else {
                        false
                    }
                });
                let reject =
                    scope.spawn(|| rejecter.reject(RT, &id, 0).unwrap() == Rejected::Rejected);
                (approve.join().unwrap(), reject.join().unwrap())
            });
            assert!(
                executed ^ rejected,
                "round {round}: executed {executed}, rejected {rejected}"
            );
        }
    });
}

#[test]
fn concurrent_begins_with_one_key_start_one_run() {
    each_store(|open| {
        for round in 0..10 {
            let key = format!("k{round}");
            let stores: Vec<Store> = (0..4).map(|_| open()).collect();
            let begun: Vec<(String, Begun)> = std::thread::scope(|scope| {
                let handles: Vec<_> = stores
                    .iter()
                    .enumerate()
                    .map(|(i, store)| {
                        let key = &key;
                        scope.spawn(move || {
                            let id = format!("e{round}_{i}");
                            let begun = store
                                .begin(RT, &id, "code", "[]", 50, &lease(), Some(key))
                                .unwrap();
                            (id, begun)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let started: Vec<&String> = begun
                .iter()
                .filter(|(_, b)| *b == Begun::Started)
                .map(|(id, _)| id)
                .collect();
            assert_eq!(started.len(), 1, "round {round}: {begun:?}");
            for (_, b) in &begun {
                if let Begun::Existing(existing) = b {
                    assert_eq!(existing, started[0]);
                }
            }
        }
    });
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = std::env::temp_dir().join(format!("codemode-store-schema-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("x.db");
    let path = path.to_str().unwrap();
    drop(Store::open(path, Durability::Normal).unwrap());
    Connection::open(path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let newer = Store::open(path, Durability::Normal).err().unwrap();
    assert_eq!(newer.code, crate::error::ErrorCode::Store);
    assert!(newer.message.contains("schema version 99"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn expired_lease() -> Lease<'static> {
    Lease {
        owner: OWNER,
        until_ms: now_ms() - 1,
    }
}

#[test]
fn only_the_owner_moves_a_running_run_and_an_orphan_is_claimed_once() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        let other = "other-owner";
        assert_eq!(
            store
                .decide(RT, "e", other, &call(0, "gh", "put", "{}", false))
                .unwrap(),
            Decision::Pause,
            "a pass that does not hold the run gets nothing to do"
        );
        assert!(!store.complete(RT, "e", other, None, None).unwrap());
        assert!(!store.fail(RT, "e", other, "x", None).unwrap());
        let taken = Lease {
            owner: other,
            until_ms: now_ms() + 60_000,
        };
        assert!(!store.claim(RT, "e", &taken).unwrap(), "the lease is live");
        // The owner's lease lapses: the run is orphaned, and one claim takes it.
        assert!(store.renew(RT, "e", &expired_lease()).unwrap());
        assert!(store.claim(RT, "e", &taken).unwrap());
        assert!(!store.claim(RT, "e", &lease()).unwrap(), "claimed already");
        assert!(
            !store.renew(RT, "e", &lease()).unwrap(),
            "the old owner lost it"
        );
        assert!(store.complete(RT, "e", other, None, None).unwrap());
        let e = store.get_execution(RT, "e").unwrap().unwrap();
        assert_eq!(
            (e.status.as_str(), e.owner, e.lease_until),
            ("completed", None, None)
        );
    });
}

#[test]
fn a_call_left_executing_is_in_doubt_unless_its_tool_is_idempotent() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "e", OWNER, &call(0, "bank", "transfer", "{}", false))
            .unwrap();
        // The pass dies before recording; a recovering pass claims the run.
        store.renew(RT, "e", &expired_lease()).unwrap();
        assert!(store.claim(RT, "e", &lease()).unwrap());
        let mut idempotent = call(0, "bank", "transfer", "{}", false);
        idempotent.idempotent = true;
        assert_eq!(
            store.decide(RT, "e", OWNER, &idempotent).unwrap(),
            Decision::Execute,
            "an idempotent tool is retried with the same key"
        );
        // The retry dies too, and now the tool is not idempotent: the run waits for a person.
        store.renew(RT, "e", &expired_lease()).unwrap();
        assert!(store.claim(RT, "e", &lease()).unwrap());
        assert_eq!(
            store
                .decide(RT, "e", OWNER, &call(0, "bank", "transfer", "{}", false))
                .unwrap(),
            Decision::Pause
        );
        assert_eq!(status(&store, "e"), "paused");
        let pending = store.list_pending(RT, Some("e")).unwrap();
        assert_eq!(pending.len(), 1);
        assert!(pending[0].in_doubt);
        // Rollback sees it as possibly in force.
        let revert: Vec<EntryState> = store
            .actions_to_revert(RT, "e")
            .unwrap()
            .iter()
            .map(|e| e.state)
            .collect();
        assert_eq!(revert, vec![EntryState::InDoubt]);
        store.release(RT, "e", OWNER).unwrap();
        // A person says it did happen: recorded as applied, then replayed.
        assert!(store.mark_done(RT, "e", 0, Some("\"ok\"")).unwrap());
        assert!(
            !store.mark_done(RT, "e", 0, None).unwrap(),
            "no longer in doubt"
        );
        assert_eq!(
            store.resume(RT, "e", &lease(), None).unwrap(),
            Resumed::Resumed
        );
        assert_eq!(
            store
                .decide(RT, "e", OWNER, &call(0, "bank", "transfer", "{}", false))
                .unwrap(),
            Decision::Replay(Some("\"ok\"".into()))
        );
    });
}

#[test]
fn approving_a_call_in_doubt_retries_it() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "e", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .decide(RT, "e", OWNER, &call(0, "bank", "transfer", "{}", false))
            .unwrap();
        store.renew(RT, "e", &expired_lease()).unwrap();
        store.claim(RT, "e", &lease()).unwrap();
        store
            .decide(RT, "e", OWNER, &call(0, "bank", "transfer", "{}", false))
            .unwrap();
        store.release(RT, "e", OWNER).unwrap();
        assert_eq!(
            store.resume(RT, "e", &lease(), Some(0)).unwrap(),
            Resumed::Resumed
        );
        assert_eq!(
            store
                .decide(RT, "e", OWNER, &call(0, "bank", "transfer", "{}", false))
                .unwrap(),
            Decision::Execute
        );
    });
}

#[test]
fn an_idempotency_key_names_the_existing_run_and_an_orphaned_one_is_interrupted() {
    each_store(|open| {
        let store = open();
        let key = Some("k1");
        assert_eq!(
            store
                .begin(RT, "a", "code", "[]", 50, &lease(), key)
                .unwrap(),
            Begun::Started
        );
        assert_eq!(
            store
                .begin(RT, "b", "code", "[]", 50, &lease(), key)
                .unwrap(),
            Begun::Existing("a".into())
        );
        assert_eq!(status(&store, "a"), "running", "a live run is left alone");
        assert!(store.get_execution(RT, "b").unwrap().is_none());
        store.renew(RT, "a", &expired_lease()).unwrap();
        assert_eq!(
            store
                .begin(RT, "c", "code", "[]", 50, &lease(), key)
                .unwrap(),
            Begun::Existing("a".into())
        );
        let a = store.get_execution(RT, "a").unwrap().unwrap();
        assert_eq!(
            (a.status.as_str(), a.error.as_deref()),
            ("error", Some(INTERRUPTED))
        );
        // Keys are per runtime name.
        assert_eq!(
            store
                .begin("other", "d", "code", "[]", 50, &lease(), key)
                .unwrap(),
            Begun::Started
        );
    });
}

#[test]
fn a_version_1_file_is_migrated_and_its_running_runs_are_orphans() {
    let dir = std::env::temp_dir().join(format!("codemode-store-v1-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("v1.db");
    let path = path.to_str().unwrap();
    {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(schema::SQLITE[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO cm_executions (runtime, id, code, status, created_at, updated_at)
             VALUES (?1, 'old', 'code', 'running', 1, 1)",
            params![RT],
        )
        .unwrap();
    }
    let store = Store::open(path, Durability::Full).unwrap();
    let running = store.running(RT).unwrap();
    assert_eq!(
        running,
        vec![RunningRun {
            id: "old".into(),
            owner: None,
            lease_until: None,
            idempotency_key: None,
        }]
    );
    assert!(store.claim(RT, "old", &lease()).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- PostgreSQL only -------------------------------------------------------------------------

/// A PostgreSQL store in a fresh schema, when `CODEMODE_PG_URL` names a server.
fn postgres_store(settings: postgres::PgSettings) -> Option<Store> {
    postgres_target(settings).map(|(_, target)| Store::postgres(target, Default::default()))
}

#[test]
fn an_unreachable_database_fails_with_store_unavailable_and_writes_nothing() {
    // Nothing listens on port 1 of the loopback: refused at once.
    let settings = postgres::PgSettings {
        connect_timeout_ms: Some(500),
        ..Default::default()
    };
    let target = postgres::PgTarget::parse("postgres://u@127.0.0.1:1/db", &settings).unwrap();
    let store = Store::postgres(Arc::new(target), Default::default());
    let e = store
        .begin(RT, "e", "code", "[]", 50, &lease(), None)
        .unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::StoreUnavailable);
    assert!(
        e.message.contains("PostgreSQL is unavailable"),
        "{}",
        e.message
    );
    // And again on the next operation (it tries to connect each time).
    let e = store.running(RT).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::StoreUnavailable);
}

#[test]
fn text_postgres_cannot_hold_is_refused_clearly() {
    let Some(store) = postgres_store(Default::default()) else {
        return;
    };
    let e = store
        .begin(RT, "e", "a\0b", "[]", 50, &lease(), None)
        .unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::InvalidArgument);
    assert!(e.message.contains("NUL"), "{}", e.message);
    // Nothing was written, and the store goes on.
    assert!(store.get_execution(RT, "e").unwrap().is_none());
    store
        .begin(RT, "e", "code", "[]", 50, &lease(), None)
        .unwrap();
}

#[test]
fn a_connection_the_server_ended_is_made_again() {
    let Some(url) = postgres_url() else {
        return;
    };
    // Its own application name, so that only its connection is ended.
    let name = format!("codemode-test-{}-{}", std::process::id(), now_ms());
    let separator = if url.contains('?') { '&' } else { '?' };
    let settings = postgres::PgSettings {
        schema: Some(name.replace('-', "_")),
        ..Default::default()
    };
    let target = postgres::PgTarget::parse(
        &format!("{url}{separator}application_name={name}"),
        &settings,
    )
    .unwrap();
    let store = Store::postgres(Arc::new(target), Default::default());
    store
        .begin(RT, "e", "code", "[]", 50, &lease(), None)
        .unwrap();
    // Another session ends the store's connection (as a restarted server or a failover would).
    let mut admin = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let ended = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .unwrap();
    assert!(!ended.is_empty());
    std::thread::sleep(Duration::from_millis(100));
    // The broken connection is found on use, dropped, and the operation runs on a new one.
    assert!(store.renew(RT, "e", &lease()).unwrap());
    assert_eq!(status(&store, "e"), "running");
}

#[test]
fn many_runs_deciding_at_once_all_commit_through_conflicts() {
    // One schema, 16 connections, each driving its own run through begin (which prunes),
    // three calls and complete: the prunes' reads and the others' writes meet, and every
    // operation must still commit, exactly once.
    let Some((_, target)) = postgres_target(Default::default()) else {
        return;
    };
    let migrated = postgres::Migrated::default();
    std::thread::scope(|scope| {
        for t in 0..16 {
            let store = Store::postgres(target.clone(), migrated.clone());
            scope.spawn(move || {
                for round in 0..5 {
                    let id = format!("r{t}_{round}");
                    store
                        .begin(RT, &id, "code", "[]", 10, &lease(), None)
                        .unwrap();
                    for seq in 0..3 {
                        let decided = store
                            .decide(RT, &id, OWNER, &call(seq, "gh", "put", "{}", false))
                            .unwrap();
                        assert_eq!(decided, Decision::Execute);
                        store
                            .record_result(RT, &id, seq, Ok(Some("1".into())))
                            .unwrap();
                    }
                    assert!(store.complete(RT, &id, OWNER, None, None).unwrap());
                }
            });
        }
    });
    let store = Store::postgres(target, migrated);
    // Pruned to the newest 10 terminal runs (each begin prunes beyond 10).
    let left = store.list_executions(RT, None).unwrap();
    assert!(left.len() <= 10 + 16, "{}", left.len());
    assert!(left.iter().all(|e| e.status == Status::Completed));
    assert!(left.iter().all(|e| e.log.len() == 3));
}

#[test]
fn a_decision_waiting_past_the_statement_timeout_fails_once_and_the_store_goes_on() {
    let settings = postgres::PgSettings {
        statement_timeout_ms: Some(300),
        ..Default::default()
    };
    let (Some(url), Some((schema, target))) = (postgres_url(), postgres_target(settings)) else {
        return;
    };
    let store = Store::postgres(target, Default::default());
    store
        .begin(RT, "e", "code", "[]", 50, &lease(), None)
        .unwrap();
    // Another host holds the run (as a slow decision of its own would).
    let mut other = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let mut held = other.transaction().unwrap();
    held.batch_execute(&format!(
        "SET LOCAL search_path TO \"{schema}\"; SELECT 1 FROM cm_executions WHERE id = 'e' FOR UPDATE"
    ))
    .unwrap();
    let started = std::time::Instant::now();
    let e = store
        .decide(RT, "e", OWNER, &call(0, "gh", "put", "{}", false))
        .unwrap_err();
    let waited = started.elapsed();
    assert_eq!(e.code, crate::error::ErrorCode::StoreUnavailable);
    assert!(e.message.contains("57014"), "{}", e.message);
    // Once, not again on a new connection: one timeout's wait.
    assert!(waited < Duration::from_millis(550), "{waited:?}");
    held.rollback().unwrap();
    // Nothing was written, and the same store goes on.
    assert!(store
        .get_execution(RT, "e")
        .unwrap()
        .unwrap()
        .log
        .is_empty());
    assert_eq!(
        store
            .decide(RT, "e", OWNER, &call(0, "gh", "put", "{}", false))
            .unwrap(),
        Decision::Execute
    );
}

#[test]
fn a_gated_run_starts_paused_on_its_program_and_runs_only_once_approved() {
    each_store(|open| {
        let store = open();
        let gate = ProgramGate {
            args: "{\"code\":\"x\"}".into(),
            args_stable: "{\"code\":\"x\"}".into(),
        };
        store
            .begin_gated(RT, "e", "x", "[]", 50, &lease(), None, Some(&gate))
            .unwrap();
        // Paused, held by nobody, in the same transaction as the begin.
        assert_eq!(status(&store, "e"), "paused");
        let pending = store.list_pending(RT, Some("e")).unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            (
                pending[0].seq,
                pending[0].connector.as_str(),
                pending[0].method.as_str()
            ),
            (0, PROGRAM_GATE_CONNECTOR, PROGRAM_GATE_METHOD)
        );
        // Before an approval no pass may decide anything for it.
        assert_eq!(
            store
                .decide(
                    RT,
                    "e",
                    OWNER,
                    &call(0, "codemode", "program", "{\"code\":\"x\"}", true)
                )
                .unwrap(),
            Decision::Pause
        );
        assert_eq!(
            store.resume(RT, "e", &lease(), Some(0)).unwrap(),
            Resumed::Resumed
        );
        assert_eq!(
            store
                .decide(
                    RT,
                    "e",
                    OWNER,
                    &call(0, "codemode", "program", "{\"code\":\"x\"}", true)
                )
                .unwrap(),
            Decision::Execute
        );
        store
            .record_result(RT, "e", 0, Ok(Some("true".into())))
            .unwrap();
        // Later passes replay the approval.
        assert_eq!(
            store
                .decide(
                    RT,
                    "e",
                    OWNER,
                    &call(0, "codemode", "program", "{\"code\":\"x\"}", true)
                )
                .unwrap(),
            Decision::Replay(Some("true".into()))
        );
        // A rejected program ends with nothing of it run.
        store
            .begin_gated(RT, "r", "x", "[]", 50, &lease(), None, Some(&gate))
            .unwrap();
        assert_eq!(store.reject(RT, "r", 0).unwrap(), Rejected::Rejected);
        assert_eq!(status(&store, "r"), "rejected");
    });
}

/// Issue 36: results take places in the delivery order in the order they are recorded (not
/// their seqs), a later pass reads each place back with its replay, a read re-executed on every
/// pass keeps its first place, and each run has a seed of its own.
#[test]
fn recorded_results_take_delivery_places_in_recording_order() {
    each_store(|open| {
        let store = open();
        store
            .begin(RT, "d", "code", "[]", 50, &lease(), None)
            .unwrap();
        store
            .begin(RT, "d2", "code", "[]", 50, &lease(), None)
            .unwrap();
        for seq in 0..3 {
            let (decision, delivery) = store
                .decide_delivered(RT, "d", OWNER, &call(seq, "gh", "get", "{}", false))
                .unwrap();
            assert_eq!((decision, delivery), (Decision::Execute, None));
        }
        let mut read = call(3, "gh", "read", "{}", false);
        read.ephemeral = true;
        assert_eq!(
            store.decide_delivered(RT, "d", OWNER, &read).unwrap(),
            (Decision::Execute, None)
        );
        // Replies arrive 2, 0, 3, 1.
        let places: Vec<i64> = [2, 0, 3, 1]
            .iter()
            .map(|&seq| {
                let value = format!("{seq}");
                let delivery = store.record_result(RT, "d", seq, Ok(Some(value))).unwrap();
                delivery.unwrap().ordinal
            })
            .collect();
        assert_eq!(places, [0, 1, 2, 3]);
        // The next pass: each replay carries the place its result took.
        let mut by_seq = Vec::new();
        for seq in 0..3 {
            let (decision, delivery) = store
                .decide_delivered(RT, "d", OWNER, &call(seq, "gh", "get", "{}", false))
                .unwrap();
            assert_eq!(decision, Decision::Replay(Some(format!("{seq}"))));
            by_seq.push(delivery.unwrap().ordinal);
        }
        assert_eq!(by_seq, [1, 3, 0]);
        let (decision, delivery) = store.decide_delivered(RT, "d", OWNER, &read).unwrap();
        assert_eq!(decision, Decision::Execute);
        assert_eq!(delivery.unwrap().ordinal, 2);
        let again = store.record_result(RT, "d", 3, Ok(None)).unwrap().unwrap();
        assert_eq!(again.ordinal, 2, "a re-executed read keeps its place");
        let e = store.get_execution(RT, "d").unwrap().unwrap();
        let logged: Vec<Option<i64>> = e
            .log
            .iter()
            .map(|l| l.delivery.map(|d| d.ordinal))
            .collect();
        assert_eq!(logged, [Some(1), Some(3), Some(0), Some(2)]);
        assert!(e.log.iter().all(|l| l.delivery.unwrap().at >= e.created_at));
        let seed = e.seed.unwrap();
        assert_eq!(seed.len(), 64);
        assert!(seed.bytes().all(|b| b.is_ascii_hexdigit()));
        let other = store
            .get_execution(RT, "d2")
            .unwrap()
            .unwrap()
            .seed
            .unwrap();
        assert_ne!(seed, other, "each run has a seed of its own");
        // What the next pass reads in one query.
        let plan = store.replay_plan(RT, "d").unwrap().unwrap();
        let expected = ReplayPlan {
            places: 4,
            start: e.created_at,
            seed: Some(seed),
        };
        assert_eq!(plan, expected);
        assert_eq!(store.replay_plan(RT, "d2").unwrap().unwrap().places, 0);
        assert_eq!(store.replay_plan(RT, "nope").unwrap(), None);
    });
}
