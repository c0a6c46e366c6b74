//! A process-wide V8 code cache for the bootstrap scripts. Every isolate evaluates the same
//! sources; after the first isolate has run them, their compiled code is kept as V8 code-cache
//! bytes, and later isolates compile from those instead of parsing again.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

type Scope<'a, 'b, 'c, 'd> = v8::PinnedRef<'a, v8::TryCatch<'b, 'c, v8::HandleScope<'d>>>;

fn cache() -> &'static Mutex<HashMap<&'static str, Vec<u8>>> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, Vec<u8>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Compiles the bootstrap script `name`, from the code cache when there is one.
pub(crate) fn compile<'s>(
    tc: &mut Scope<'s, '_, '_, '_>,
    name: &'static str,
    text: &str,
) -> Option<v8::Local<'s, v8::Script>> {
    let source = v8::String::new(tc, text)?;
    let cached = cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(name)
        .cloned();
    match cached {
        Some(bytes) => {
            let data = v8::script_compiler::CachedData::new(&bytes);
            let mut source = v8::script_compiler::Source::new_with_cached_data(source, None, data);
            v8::script_compiler::compile(
                tc,
                &mut source,
                v8::script_compiler::CompileOptions::ConsumeCodeCache,
                v8::script_compiler::NoCacheReason::NoReason,
            )
        }
        None => v8::Script::compile(tc, source, None),
    }
}

/// Keeps the compiled code of `script` for later isolates, once it has run (so the functions
/// the bootstrap called are compiled too). Only the first isolate's code is kept.
pub(crate) fn remember(
    tc: &mut Scope<'_, '_, '_, '_>,
    name: &'static str,
    script: v8::Local<'_, v8::Script>,
) {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    if cache.contains_key(name) {
        return;
    }
    if let Some(data) = script.get_unbound_script(tc).create_code_cache() {
        cache.insert(name, data.to_vec());
    }
}
