//! ES modules for dynamic `import(specifier)` (Cloudflare's `modules` option): the run's module
//! sources by specifier, compiled on first import and cached for the run. V8's dynamic-import
//! hook hands each `import()` to the bootstrap's `importModule`, which loads through
//! `load_module` and awaits the module's evaluation.

use std::collections::HashMap;

/// The run's modules. Lives in the run state (an isolate slot).
#[derive(Default)]
pub(crate) struct ModuleRegistry {
    sources: HashMap<String, String>,
    compiled: HashMap<String, v8::Global<v8::Module>>,
}

/// The `importModule(specifier)` helper of bootstrap.js, kept where V8's hook can find it.
pub(crate) struct ImportHelper(pub v8::Global<v8::Function>);

impl ModuleRegistry {
    /// Replaces the sources with a JSON object `{ specifier: source }`.
    pub(crate) fn register(&mut self, json: &str) -> Result<(), String> {
        let sources: HashMap<String, String> = serde_json::from_str(json)
            .map_err(|e| format!("modules must map specifiers to source text: {e}"))?;
        self.sources = sources;
        self.compiled.clear();
        Ok(())
    }

    /// The key under which `specifier` is registered: exact, or without a leading "./" or "/".
    fn key_for(&self, specifier: &str) -> Option<String> {
        let candidates = [
            specifier,
            specifier.trim_start_matches("./"),
            specifier.trim_start_matches('/'),
        ];
        candidates
            .into_iter()
            .find(|c| self.sources.contains_key(*c))
            .map(str::to_string)
    }
}

type RegistryCell = std::rc::Rc<std::cell::RefCell<ModuleRegistry>>;

fn registry(scope: &mut v8::PinScope) -> Option<RegistryCell> {
    scope.get_slot::<RegistryCell>().cloned()
}

/// Installs an empty registry for a run (dropped with the isolate).
pub(crate) fn install(isolate: &mut v8::Isolate) -> RegistryCell {
    let cell: RegistryCell = Default::default();
    isolate.set_slot(cell.clone());
    cell
}

fn throw(scope: &mut v8::PinScope, message: &str) {
    if let Some(text) = v8::String::new(scope, message) {
        let error = v8::Exception::type_error(scope, text);
        scope.throw_exception(error);
    }
}

/// Compiles (or finds) the module registered under `specifier`. Throws and returns None when
/// there is no such module or it does not compile.
fn compile<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    specifier: &str,
) -> Option<v8::Local<'s, v8::Module>> {
    let cell = registry(scope)?;
    let Some(key) = cell.borrow().key_for(specifier) else {
        throw(scope, &format!("No such module \"{specifier}\"."));
        return None;
    };
    if let Some(module) = cell.borrow().compiled.get(&key) {
        return Some(v8::Local::new(scope, module));
    }
    let source_text = cell.borrow().sources.get(&key).cloned()?;
    let text = v8::String::new(scope, &source_text)?;
    let origin = module_origin(scope, &key)?;
    let mut source = v8::script_compiler::Source::new(text, Some(&origin));
    let module = v8::script_compiler::compile_module(scope, &mut source)?;
    let global = v8::Global::new(scope, module);
    cell.borrow_mut().compiled.insert(key, global);
    Some(module)
}

/// The origin of a classic script named `name` whose positions V8 reports `line_offset` lines
/// and (on its first line) `column_offset` columns from where they are in its text.
pub(crate) fn script_origin<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: &str,
    line_offset: i32,
    column_offset: i32,
) -> Option<v8::ScriptOrigin<'s>> {
    origin(scope, name, line_offset, column_offset, false)
}

/// The origin of a module named `name` (what its errors and stack frames show).
pub(crate) fn module_origin<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: &str,
) -> Option<v8::ScriptOrigin<'s>> {
    origin(scope, name, 0, 0, true)
}

fn origin<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: &str,
    line_offset: i32,
    column_offset: i32,
    is_module: bool,
) -> Option<v8::ScriptOrigin<'s>> {
    let name = v8::String::new(scope, name)?;
    Some(v8::ScriptOrigin::new(
        scope,
        name.into(),
        line_offset,
        column_offset,
        false,
        0,
        None,
        false,
        false,
        is_module,
        None,
    ))
}

/// V8's resolve hook for static imports between registered modules (and from a module
/// program).
pub(crate) fn resolve<'s>(
    context: v8::Local<'s, v8::Context>,
    specifier: v8::Local<'s, v8::String>,
    _attributes: v8::Local<'s, v8::FixedArray>,
    _referrer: v8::Local<'s, v8::Module>,
) -> Option<v8::Local<'s, v8::Module>> {
    // V8 calls this hook on the isolate's thread, inside the instantiation that the sandbox
    // started from a scope of this context.
    // SAFETY: on the isolate's thread, inside a scope of `context` (see above).
    v8::callback_scope!(unsafe scope, context);
    let specifier = specifier.to_rust_string_lossy(scope);
    compile(scope, &specifier)
}

/// `loadModule(specifier)` → [namespace, evaluation promise]; throws when the module is
/// missing, does not compile, or does not link.
pub(crate) fn load_module(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let specifier = args.get(0).to_rust_string_lossy(scope);
    let Some(module) = compile(scope, &specifier) else {
        return;
    };
    match module.get_status() {
        v8::ModuleStatus::Uninstantiated if module.instantiate_module(scope, resolve).is_none() => {
            return;
        }
        // V8 aborts the process when asked to instantiate or evaluate a module in the middle of
        // doing so (its CHECK on the module status): refuse in the language's terms instead.
        v8::ModuleStatus::Instantiating | v8::ModuleStatus::Evaluating => {
            return throw(
                scope,
                &format!("Cannot import \"{specifier}\" while it is still being loaded"),
            );
        }
        _ => {}
    }
    let Some(evaluation) = module.evaluate(scope) else {
        return;
    };
    let namespace = module.get_module_namespace();
    let pair = v8::Array::new_with_elements(scope, &[namespace, evaluation]);
    rv.set(pair.into());
}

/// `registerModules(json)`: the run's module sources.
pub(crate) fn register_modules(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    _rv: v8::ReturnValue<v8::Value>,
) {
    let json = args.get(0).to_rust_string_lossy(scope);
    let Some(cell) = registry(scope) else { return };
    let result = cell.borrow_mut().register(&json);
    if let Err(message) = result {
        throw(scope, &message);
    }
}

/// V8's dynamic-import hook: every `import(specifier)` goes to bootstrap.js's `importModule`.
pub(crate) fn dynamic_import<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    _options: v8::Local<'s, v8::Data>,
    _resource: v8::Local<'s, v8::Value>,
    specifier: v8::Local<'s, v8::String>,
    _attributes: v8::Local<'s, v8::FixedArray>,
) -> Option<v8::Local<'s, v8::Promise>> {
    let helper = scope.get_slot::<ImportHelper>().map(|h| h.0.clone())?;
    let helper = v8::Local::new(scope, helper);
    let undefined = v8::undefined(scope).into();
    let result = helper.call(scope, undefined, &[specifier.into()])?;
    v8::Local::<v8::Promise>::try_from(result).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specifiers_match_exactly_or_without_a_leading_dot_slash() {
        let mut registry = ModuleRegistry::default();
        registry
            .register(r#"{"util.js":"export const x = 1","lib/a.js":"export default 2"}"#)
            .unwrap();
        assert_eq!(registry.key_for("util.js").as_deref(), Some("util.js"));
        assert_eq!(registry.key_for("./util.js").as_deref(), Some("util.js"));
        assert_eq!(registry.key_for("/lib/a.js").as_deref(), Some("lib/a.js"));
        assert_eq!(registry.key_for("fs"), None);
        assert!(registry.register("[1]").is_err());
    }
}
