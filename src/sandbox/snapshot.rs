//! The sandbox bootstrap, baked into a V8 startup snapshot once per process. The first isolate
//! to be created builds a context that has run lib/cloudflare/codec.js, bootstrap.js, web.js and
//! web_net.js with the natives; every isolate after that starts from the snapshot, so a fresh
//! isolate costs deserialization instead of evaluating the bootstrap again. The per-isolate
//! bounds are set on the natives object after restoring.

use super::{modules, natives, web_natives, Helpers};
use crate::limits::Limits;
use std::borrow::Cow;
use std::sync::OnceLock;
use v8::MapFnTo;

const BOOTSTRAP: &str = include_str!("bootstrap.js");
const WEB: &str = include_str!("web.js");
const WEB_NET: &str = include_str!("web_net.js");
/// The value codecs, shared with the host (lib/cloudflare/codec.js is also loaded by Node).
const CODEC: &str = include_str!("../../lib/cloudflare/codec.js");

type BootScope<'a, 'b, 'c, 'd> = v8::PinnedRef<'a, v8::TryCatch<'b, 'c, v8::HandleScope<'d>>>;

/// The natives handed to the bootstrap scripts, by the name they read them under.
fn native_functions() -> [(&'static str, v8::FunctionCallback); 30] {
    [
        ("loadModule", modules::load_module.map_fn_to()),
        ("registerModules", modules::register_modules.map_fn_to()),
        ("call", natives::call_tool.map_fn_to()),
        ("log", natives::log_line.map_fn_to()),
        ("arrayLength", natives::array_length.map_fn_to()),
        ("timerArm", natives::timer_arm.map_fn_to()),
        ("timerCancel", natives::timer_cancel.map_fn_to()),
        ("now", natives::now_ms.map_fn_to()),
        ("randomBytes", natives::random_bytes.map_fn_to()),
        ("urlParse", web_natives::url_parse.map_fn_to()),
        ("urlSet", web_natives::url_set.map_fn_to()),
        ("formParse", web_natives::form_parse.map_fn_to()),
        ("formSerialize", web_natives::form_serialize.map_fn_to()),
        ("digest", web_natives::digest.map_fn_to()),
        ("encodingName", web_natives::encoding_label.map_fn_to()),
        ("encodingDecode", web_natives::encoding_decode.map_fn_to()),
        ("loadScript", web_natives::load_script.map_fn_to()),
        ("cryptoHmac", web_natives::crypto_hmac.map_fn_to()),
        ("cryptoAesGcm", web_natives::crypto_aes_gcm.map_fn_to()),
        ("cryptoVerify", web_natives::crypto_verify.map_fn_to()),
        ("cryptoSign", web_natives::crypto_sign.map_fn_to()),
        ("cryptoAgree", web_natives::crypto_agree.map_fn_to()),
        ("cryptoEcPoint", web_natives::crypto_ec_point.map_fn_to()),
        ("cryptoRsa", web_natives::crypto_rsa.map_fn_to()),
        (
            "cryptoPrivateKey",
            web_natives::crypto_private_key.map_fn_to(),
        ),
        ("cryptoDerive", web_natives::crypto_derive.map_fn_to()),
        ("cryptoAesBlock", web_natives::crypto_aes_block.map_fn_to()),
        ("deflate", web_natives::zlib_deflate.map_fn_to()),
        ("deflateBound", web_natives::zlib_deflate_bound.map_fn_to()),
        ("inflate", web_natives::zlib_inflate.map_fn_to()),
    ]
}

/// Every native callback, for V8 to resolve when it serializes and deserializes the snapshot.
fn external_references() -> &'static [v8::ExternalReference] {
    static REFS: OnceLock<References> = OnceLock::new();
    &REFS
        .get_or_init(|| {
            References(
                native_functions()
                    .into_iter()
                    .map(|(_, function)| v8::ExternalReference { function })
                    .collect(),
            )
        })
        .0
}

struct References(Vec<v8::ExternalReference>);
// SAFETY: the references are addresses of `'static` Rust functions, written once when the
// vector is built and only read afterwards, from any thread.
unsafe impl Send for References {}
// SAFETY: as above: immutable after construction.
unsafe impl Sync for References {}

/// The snapshot blob, and where the helpers and natives objects sit in its context data.
struct Snapshot {
    blob: &'static [u8],
    helpers_index: usize,
    natives_index: usize,
}

fn snapshot() -> Result<&'static Snapshot, String> {
    static SNAPSHOT: OnceLock<Result<Snapshot, String>> = OnceLock::new();
    SNAPSHOT
        .get_or_init(make_snapshot)
        .as_ref()
        .map_err(Clone::clone)
}

/// Isolate parameters that start from the bootstrap snapshot.
pub(crate) fn create_params() -> Result<v8::CreateParams, String> {
    let snapshot = snapshot()?;
    keep_isolate_group_alive(snapshot);
    Ok(params_for(snapshot))
}

fn params_for(snapshot: &Snapshot) -> v8::CreateParams {
    v8::CreateParams::default()
        .snapshot_blob(v8::StartupData::from(snapshot.blob))
        .external_references(Cow::Borrowed(external_references()))
}

/// V8 frees the read-only heap that all isolates of the process share (and stops the optimizing
/// compiler's threads) when the last isolate goes away, and builds both again for the next one.
/// A pool that replaces its isolate after every run empties the group often (with one worker,
/// after every run) and then pays for a whole read-only heap per isolate. One idle isolate, made
/// from the same snapshot (its read-only part must be the one every later isolate expects) and
/// never given a run, keeps the group populated for the life of the process.
fn keep_isolate_group_alive(snapshot: &'static Snapshot) {
    static ANCHOR: std::sync::Once = std::sync::Once::new();
    ANCHOR.call_once(|| {
        let (ready, created) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("codemode-v8-anchor".into())
            // V8 assumes about 1 MB of stack below the point it is entered from (deserializing
            // recurses), so this thread gets the usual 2 MB, committed only as it is touched.
            .stack_size(2 << 20)
            .spawn(move || {
                // Held, and entered on this thread, until the process ends.
                let _anchor = v8::Isolate::new(params_for(snapshot).heap_limits(0, 8 << 20));
                let _ = ready.send(());
                loop {
                    std::thread::park();
                }
            });
        if spawned.is_ok() {
            // Wait until it exists, so that no worker's isolate is the group's last before it.
            let _ = created.recv();
        }
    });
}

fn make_snapshot() -> Result<Snapshot, String> {
    let mut creator =
        v8::Isolate::snapshot_creator(Some(Cow::Borrowed(external_references())), None);
    let (helpers_index, natives_index) = {
        v8::scope!(let handle_scope, &mut creator);
        let context = v8::Context::new(handle_scope, Default::default());
        let scope = &mut v8::ContextScope::new(handle_scope, context);
        v8::tc_scope!(let tc, scope);
        let (natives, helpers) = build(tc)?;
        let natives = v8::Local::new(tc, natives);
        let helpers = v8::Local::new(tc, helpers);
        let helpers_index = tc.add_context_data(context, helpers);
        let natives_index = tc.add_context_data(context, natives);
        tc.set_default_context(context);
        (helpers_index, natives_index)
    };
    let blob = creator
        .create_blob(v8::FunctionCodeHandling::Keep)
        .ok_or("Sandbox bootstrap failed: V8 could not create the startup snapshot")?;
    let blob: &'static [u8] = Box::leak(blob.to_vec().into_boxed_slice());
    Ok(Snapshot {
        blob,
        helpers_index,
        natives_index,
    })
}

fn fail(what: &str) -> String {
    format!("Sandbox bootstrap failed: {what}")
}

/// Runs the bootstrap scripts in the current context; returns the natives object and an object
/// holding the helpers the worker calls.
fn build(
    tc: &mut BootScope<'_, '_, '_, '_>,
) -> Result<(v8::Global<v8::Object>, v8::Global<v8::Object>), String> {
    let natives = v8::Object::new(tc);
    for (name, callback) in native_functions() {
        let function = v8::Function::new_raw(tc, callback).ok_or_else(|| fail(name))?;
        set(tc, natives, name, function.into())?;
    }
    let codec = evaluate(tc, CODEC, Compile::Eager).map_err(|e| fail(&format!("codec.js: {e}")))?;
    set(tc, natives, "codec", codec)?;
    let natives = v8::Global::new(tc, natives);
    let core = run_factory(tc, BOOTSTRAP, Compile::Eager, &natives)
        .map_err(|e| fail(&format!("bootstrap.js: {e}")))?;
    let web = run_factory(tc, WEB, Compile::Eager, &natives)
        .map_err(|e| fail(&format!("web.js: {e}")))?;
    // web_net.js builds its globals on first use (see there); compiling it eagerly would put
    // bytecode that most runs never execute into every isolate (measured: a fresh isolate costs
    // 1.7% more instructions, a run's first URL 4% fewer).
    run_factory(tc, WEB_NET, Compile::Lazy, &natives)
        .map_err(|e| fail(&format!("web_net.js: {e}")))?;
    let helpers = v8::Object::new(tc);
    for (from, name) in [
        (&core, "prepareRun"),
        (&core, "encodeResult"),
        (&core, "describeError"),
        (&core, "importModule"),
        (&core, "refreshContext"),
        (&web, "fireTimer"),
    ] {
        let global = helper(tc, from, name)?;
        let function = v8::Local::new(tc, global);
        set(tc, helpers, name, function.into())?;
    }
    let helpers = v8::Global::new(tc, helpers);
    Ok((natives, helpers))
}

/// The bootstrapped context of a snapshot-started isolate, with this isolate's bounds set.
pub(crate) fn restore(
    isolate: &mut v8::OwnedIsolate,
    limits: &Limits,
) -> Result<(v8::Global<v8::Context>, Helpers), String> {
    let snapshot = snapshot()?;
    v8::scope!(let handle_scope, isolate);
    let context = v8::Context::new(handle_scope, Default::default());
    let scope = &mut v8::ContextScope::new(handle_scope, context);
    v8::tc_scope!(let tc, scope);
    let natives = tc
        .get_context_data_from_snapshot_once::<v8::Object>(snapshot.natives_index)
        .map_err(|_| fail("no natives in the snapshot"))?;
    let helpers = tc
        .get_context_data_from_snapshot_once::<v8::Object>(snapshot.helpers_index)
        .map_err(|_| fail("no helpers in the snapshot"))?;
    for (name, value) in [
        ("maxArrayLike", limits.max_array_like_length as f64),
        ("maxErrorChars", limits.max_error_chars as f64),
        ("arrayBufferBudget", limits.array_buffer_bytes as f64),
    ] {
        let number = v8::Number::new(tc, value);
        set(tc, natives, name, number.into())?;
    }
    let helpers = v8::Global::new(tc, helpers);
    // V8 installs some globals again on a deserialized context; bootstrap.js undoes that.
    let refresh = helper(tc, &helpers, "refreshContext")?;
    let refresh = v8::Local::new(tc, refresh);
    let undefined = v8::undefined(tc).into();
    refresh
        .call(tc, undefined, &[])
        .ok_or_else(|| fail(&exception_text(tc)))?;
    let restored = Helpers {
        prepare: helper(tc, &helpers, "prepareRun")?,
        encode: helper(tc, &helpers, "encodeResult")?,
        describe: helper(tc, &helpers, "describeError")?,
        fire_timer: helper(tc, &helpers, "fireTimer")?,
        import: helper(tc, &helpers, "importModule")?,
    };
    Ok((v8::Global::new(tc, context), restored))
}

fn set(
    tc: &mut BootScope<'_, '_, '_, '_>,
    object: v8::Local<'_, v8::Object>,
    name: &str,
    value: v8::Local<'_, v8::Value>,
) -> Result<(), String> {
    let key = v8::String::new(tc, name).ok_or_else(|| fail(name))?;
    object
        .set(tc, key.into(), value)
        .map(|_| ())
        .ok_or_else(|| fail(name))
}

/// How a bootstrap script is compiled into the snapshot.
#[derive(Clone, Copy)]
enum Compile {
    /// Every function gets its bytecode now, and the snapshot keeps it, so a fresh isolate does
    /// not parse and compile the tool-call and result paths again on first use (measured: about
    /// 50 µs per tool call of a ten-call run went to that).
    Eager,
    /// Functions are compiled when first called: for code most runs never reach.
    Lazy,
}

/// Evaluates a script and returns its completion value.
fn evaluate<'s>(
    tc: &mut v8::PinnedRef<'s, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    source: &str,
    compile: Compile,
) -> Result<v8::Local<'s, v8::Value>, String> {
    let source = v8::String::new(tc, source).ok_or("source")?;
    let mut source = v8::script_compiler::Source::new(source, None);
    let script = v8::script_compiler::compile(
        tc,
        &mut source,
        match compile {
            Compile::Eager => v8::script_compiler::CompileOptions::EagerCompile,
            Compile::Lazy => v8::script_compiler::CompileOptions::NoCompileOptions,
        },
        v8::script_compiler::NoCacheReason::NoReason,
    )
    .ok_or_else(|| exception_text(tc))?;
    script.run(tc).ok_or_else(|| exception_text(tc))
}

/// Evaluates `source` (a function expression), calls it with `natives`, and returns the object
/// it returns.
fn run_factory(
    tc: &mut BootScope<'_, '_, '_, '_>,
    source: &str,
    compile: Compile,
    natives: &v8::Global<v8::Object>,
) -> Result<v8::Global<v8::Object>, String> {
    let natives = v8::Local::new(tc, natives);
    let factory = evaluate(tc, source, compile)?;
    let factory =
        v8::Local::<v8::Function>::try_from(factory).map_err(|_| "not a function".to_string())?;
    let undefined = v8::undefined(tc).into();
    let result = factory
        .call(tc, undefined, &[natives.into()])
        .ok_or_else(|| exception_text(tc))?;
    let object = v8::Local::<v8::Object>::try_from(result)
        .map_err(|_| "did not return an object".to_string())?;
    Ok(v8::Global::new(tc, object))
}

fn exception_text(tc: &mut BootScope<'_, '_, '_, '_>) -> String {
    tc.exception()
        .map(|e| e.to_rust_string_lossy(tc))
        .unwrap_or_else(|| "unknown error".to_string())
}

/// The function `name` of the object `from`, kept as a handle that outlives the scope.
fn helper(
    tc: &mut BootScope<'_, '_, '_, '_>,
    from: &v8::Global<v8::Object>,
    name: &str,
) -> Result<v8::Global<v8::Function>, String> {
    let missing = || fail(&format!("no helper {name}"));
    let from = v8::Local::new(tc, from);
    let key = v8::String::new(tc, name).ok_or_else(missing)?;
    let value = from.get(tc, key.into()).ok_or_else(missing)?;
    let function = v8::Local::<v8::Function>::try_from(value).map_err(|_| missing())?;
    Ok(v8::Global::new(tc, function))
}
