//! From a run's program to its entry function: TypeScript stripped (`program::strip_types`),
//! the text read as an expression or an ES module, compiled (through the pool's code cache),
//! and for a module, instantiated against the run's `modules` and evaluated.

use super::code_cache::{CacheKey, CachedProgram, CodeCache};
use super::{caught, Failure, Helpers, Program};
use crate::program::{looks_like_module, strip_types, Diagnostic, Form, Stripped};
use crate::run::ErrorKind;
use std::sync::Arc;
use v8::script_compiler::{CachedData, CompileOptions, NoCacheReason, Source};

type Tc<'s, 'a, 'b, 'c> = v8::PinnedRef<'s, v8::TryCatch<'a, 'b, v8::HandleScope<'c>>>;

/// A compiled program, not yet run.
pub(super) enum Compiled<'s> {
    Script(v8::Local<'s, v8::Script>),
    Module(v8::Local<'s, v8::Module>),
}

/// What to keep in the code cache once the run is over (a miss), so V8's cache then also holds
/// the functions the run compiled lazily.
pub(super) struct ToCache {
    /// The source, copied once, for the cache to keep.
    code: Arc<str>,
    typescript: bool,
    statements: bool,
    form: Form,
    text: Option<Arc<str>>,
}

const SPLICED: &str = "SyntaxError: the program must be one expression (such as `async () => { ... }`); its text closes the expression it is compiled in";

/// The name a module program's errors and stack frames carry.
const MODULE_NAME: &str = "program.js";

/// Compiles the run's program: from the code cache when it holds this source, else prepared
/// and compiled afresh (`Some(ToCache)` then says what to store). `hit` tells which.
pub(super) fn compile<'s>(
    tc: &mut Tc<'s, '_, '_, '_>,
    program: &Program<'_>,
    helpers: &Helpers,
) -> Result<(Compiled<'s>, Option<ToCache>), Failure> {
    let input = program.input;
    let key = CacheKey {
        code: &input.code,
        typescript: input.typescript,
        statements: input.statements,
    };
    if let Some(hit) = program.cache.get(&key) {
        let text = hit.text.as_deref().unwrap_or(&input.code);
        match compile_as(tc, hit.form, text, Some(&hit.data)) {
            Some((compiled, false)) => return Ok((compiled, None)),
            // V8 refused its own cache (another flag set); compile afresh below.
            Some((_, true)) => program.cache.remove(&key),
            None if stopped(tc) => return Err(Failure::Stopped),
            None => tc.reset(),
        }
    }
    // What the stripper said about a text it could not parse: when V8 stops elsewhere, it
    // stopped at TypeScript, and the stripper's complaint is the program's real error.
    let mut unparsable = None;
    let stripped = if input.typescript {
        match strip_types(&input.code).map_err(Failure::Error)? {
            Stripped::Changed(text) => Some(text),
            Stripped::Unchanged => None,
            // Statements that return at their top level parse only inside the function they
            // are the body of: strip them there.
            Stripped::Unparsable(_) if input.statements => {
                let body = statements_body(&input.code);
                match strip_types(&body).map_err(Failure::Error)? {
                    Stripped::Changed(text) => Some(text),
                    _ => None,
                }
            }
            Stripped::Unparsable(diagnostic) => {
                unparsable = diagnostic;
                None
            }
        }
    } else {
        None
    };
    // Leading declarations that were only types (`interface P { … }` before the function) leave
    // the `;` the stripper puts in their place: blanked too, so the function is an expression.
    let stripped = stripped.map(blank_leading_semicolons);
    let text = stripped.as_deref().unwrap_or(&input.code);
    let to_cache = |form: Form, text: Option<String>| ToCache {
        code: Arc::from(input.code.as_str()),
        typescript: input.typescript,
        statements: input.statements,
        form,
        text: text.map(Arc::from),
    };
    // An expression first: a text that is one compiles as one, whatever its lines look like.
    if let Some((compiled, _)) = compile_as(tc, Form::Expression, text, None) {
        one_expression(tc, text)?;
        return Ok((compiled, Some(to_cache(Form::Expression, stripped))));
    }
    if stopped(tc) {
        return Err(Failure::Stopped);
    }
    let explain = input.explain;
    let as_expression = syntax_failure(
        tc,
        helpers,
        Wrapping::Parenthesized,
        explain,
        unparsable.as_ref(),
    );
    tc.reset();
    if looks_like_module(text) {
        return match compile_as(tc, Form::Module, text, None) {
            Some((compiled, _)) => Ok((compiled, Some(to_cache(Form::Module, stripped)))),
            None => Err(syntax_failure(
                tc,
                helpers,
                Wrapping::None,
                explain,
                unparsable.as_ref(),
            )),
        };
    }
    if input.statements {
        let body = statements_body(text);
        return match compile_as(tc, Form::Expression, &body, None) {
            Some((compiled, _)) => {
                one_expression(tc, &body)?;
                Ok((compiled, Some(to_cache(Form::Expression, Some(body)))))
            }
            None => Err(syntax_failure(tc, helpers, Wrapping::Body, explain, None)),
        };
    }
    Err(as_expression)
}

/// What the compiled text adds around the program, for positions as the program was written.
#[derive(Clone, Copy)]
enum Wrapping {
    /// A module: compiled as written.
    None,
    /// `(` before the expression, on its first line.
    Parenthesized,
    /// `async () => {` and a line break before the statements.
    Body,
}

/// The syntax error in `tc`. With `explain`, its message ends with where it is, in the
/// program as written (V8's SyntaxError text has no position; TypeScript's types are blanked
/// out in place, so they do not move it); and when the stripper could not parse the program
/// either and stopped somewhere else, V8 stopped at TypeScript syntax: the stripper's error
/// is the one to report.
fn syntax_failure(
    tc: &mut Tc<'_, '_, '_, '_>,
    helpers: &Helpers,
    wrapping: Wrapping,
    explain: bool,
    stripper: Option<&Diagnostic>,
) -> Failure {
    let position = tc.message().and_then(|message| {
        let line = message.get_line_number(tc)?;
        Some((line, message.get_start_column()))
    });
    let failure = caught(tc, &helpers.describe).with_kind(ErrorKind::Syntax);
    let (Some((line, column)), true) = (position, explain) else {
        return failure;
    };
    let Failure::Error(mut error) = failure else {
        return failure;
    };
    let (line, column) = match wrapping {
        Wrapping::None => (line, column),
        Wrapping::Parenthesized if line == 1 => (1, column.saturating_sub(1)),
        Wrapping::Parenthesized => (line, column),
        Wrapping::Body => (line.saturating_sub(1).max(1), column),
    };
    let column = column + 1;
    error.message = match stripper {
        Some(d) if (d.line, d.column) != (line, column) => d.message(),
        _ => format!("{} (line {line}, column {column})", error.message),
    };
    Failure::Error(error)
}

/// `text` with the semicolons (and white space) it starts with turned into spaces: same
/// length, same lines.
fn blank_leading_semicolons(text: String) -> String {
    let lead = text.len()
        - text
            .trim_start_matches(|c: char| c == ';' || c.is_whitespace())
            .len();
    if !text[..lead].contains(';') {
        return text;
    }
    let blanked: String = text[..lead]
        .chars()
        .map(|c| if c == ';' { ' ' } else { c })
        .collect();
    blanked + &text[lead..]
}

/// Stores what `compile` prepared, with V8's code for it as it stands after the run.
pub(super) fn store(
    tc: &mut Tc<'_, '_, '_, '_>,
    cache: &CodeCache,
    compiled: &Compiled<'_>,
    to_cache: ToCache,
) {
    let data = match compiled {
        Compiled::Script(script) => script.get_unbound_script(tc).create_code_cache(),
        Compiled::Module(module) => module.get_unbound_module_script(tc).create_code_cache(),
    };
    if let Some(data) = data {
        let program = CachedProgram {
            form: to_cache.form,
            text: to_cache.text,
            data: Arc::from(&data[..]),
        };
        let key = CacheKey {
            code: &to_cache.code,
            typescript: to_cache.typescript,
            statements: to_cache.statements,
        };
        cache.insert(to_cache.code.clone(), &key, program);
    }
}

/// Cloudflare's reading of statements: the body of an async function.
fn statements_body(text: &str) -> String {
    format!("async () => {{\n{text}\n}}")
}

fn stopped(tc: &Tc<'_, '_, '_, '_>) -> bool {
    tc.has_terminated() || tc.is_execution_terminating()
}

/// Compiles `text` in `form`, with V8's cached code when given. `None` when it does not
/// compile (the exception is in `tc`); the flag says V8 refused the cached code.
fn compile_as<'s>(
    tc: &mut Tc<'s, '_, '_, '_>,
    form: Form,
    text: &str,
    cached: Option<&[u8]>,
) -> Option<(Compiled<'s>, bool)> {
    let options = if cached.is_some() {
        CompileOptions::ConsumeCodeCache
    } else {
        CompileOptions::NoCompileOptions
    };
    let source_text = match form {
        Form::Expression => v8::String::new(tc, &format!("({text}\n)"))?,
        Form::Module => v8::String::new(tc, text)?,
    };
    let origin = match form {
        Form::Module => Some(super::modules::module_origin(tc, MODULE_NAME)?),
        Form::Expression => None,
    };
    let mut source = match cached {
        Some(bytes) => {
            Source::new_with_cached_data(source_text, origin.as_ref(), CachedData::new(bytes))
        }
        None => Source::new(source_text, origin.as_ref()),
    };
    let compiled = match form {
        Form::Expression => Compiled::Script(v8::script_compiler::compile(
            tc,
            &mut source,
            options,
            NoCacheReason::NoReason,
        )?),
        Form::Module => Compiled::Module(v8::script_compiler::compile_module2(
            tc,
            &mut source,
            options,
            NoCacheReason::NoReason,
        )?),
    };
    let rejected = source.get_cached_data().is_some_and(|data| data.rejected());
    Some((compiled, rejected))
}

/// Refuses a text that closes the parentheses it is compiled in and splices statements around
/// them (`1); evil(); (async () => 2`). Such text compiles inside `( … )` but never inside
/// `[ … ]`: tokens are read the same way after `(` and after `[`, so an escape has to close the
/// one bracket it is in, which the other does not accept. A real expression compiles in both.
/// Only compiled here, never run; a program from the cache passed this when it was stored.
fn one_expression(tc: &mut Tc<'_, '_, '_, '_>, code: &str) -> Result<(), Failure> {
    let probe = format!("[{code}\n]");
    let Some(probe) = v8::String::new(tc, &probe) else {
        return Err(Failure::of(ErrorKind::Syntax, SPLICED));
    };
    if v8::Script::compile(tc, probe, None).is_some() {
        return Ok(());
    }
    if stopped(tc) {
        return Err(Failure::Stopped);
    }
    // Only the probe's own SyntaxError is dropped.
    tc.reset();
    Err(Failure::of(ErrorKind::Syntax, SPLICED))
}
