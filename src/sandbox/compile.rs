//! From a run's program to its entry function: TypeScript stripped (`program::strip_types`),
//! the text read as an expression or an ES module, compiled (through the pool's code cache),
//! and for a module, instantiated against the run's `modules` and evaluated.

use super::code_cache::{CacheKey, CachedProgram, CodeCache};
use super::{caught, Failure, Helpers, Program};
use crate::program::{
    foreign_fence, imports_as_statements, looks_like_module, strip_types, Diagnostic, Form,
    Stripped,
};
use crate::run::{ErrorKind, SourceAt};
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

/// The name a program's errors and stack frames carry, in every form.
pub(super) const PROGRAM_NAME: &str = "program.js";

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
    if let Some(language) = foreign_fence(&input.code) {
        return Err(Failure::of(
            ErrorKind::Syntax,
            format!("SyntaxError: the program is a ```{language} code block: only JavaScript or TypeScript runs here (an async arrow function, a module, or the body of an async function)"),
        ));
    }
    let to_cache = |form: Form, text: Option<String>| ToCache {
        code: Arc::from(input.code.as_str()),
        typescript: input.typescript,
        statements: input.statements,
        form,
        text: text.map(Arc::from),
    };
    let explain = input.explain;
    let prepared = if input.typescript {
        prepare_typescript(&input.code, input.statements).map_err(Failure::Error)?
    } else {
        Prepared::default()
    };
    // Statements the stripper could read only as a function body: compiled as one.
    if let Some(body) = prepared.body {
        return match compile_as(tc, Form::Body, &body, None) {
            Some((compiled, _)) => {
                one_expression(tc, &body)?;
                Ok((compiled, Some(to_cache(Form::Body, Some(body)))))
            }
            None if stopped(tc) => Err(Failure::Stopped),
            None => Err(syntax_failure(tc, helpers, explain, None)),
        };
    }
    // What the stripper said about a text it could not parse: when V8 stops elsewhere, it
    // stopped at TypeScript, and the stripper's complaint is the program's real error.
    let unparsable = prepared.unparsable;
    // Leading declarations that were only types (`interface P { … }` before the function) leave
    // the `;` the stripper puts in their place: blanked too, so the function is an expression.
    let stripped = prepared.text.map(blank_leading_semicolons);
    let text = stripped.as_deref().unwrap_or(&input.code);
    // An expression first: a text that is one compiles as one, whatever its lines look like.
    if let Some((compiled, _)) = compile_as(tc, Form::Expression, text, None) {
        one_expression(tc, text)?;
        return Ok((compiled, Some(to_cache(Form::Expression, stripped))));
    }
    if stopped(tc) {
        return Err(Failure::Stopped);
    }
    let as_expression = syntax_failure(tc, helpers, explain, unparsable.as_ref());
    tc.reset();
    if looks_like_module(text) {
        if let Some((compiled, _)) = compile_as(tc, Form::Module, text, None) {
            return Ok((compiled, Some(to_cache(Form::Module, stripped))));
        }
        if stopped(tc) {
            return Err(Failure::Stopped);
        }
        let as_module = syntax_failure(tc, helpers, explain, unparsable.as_ref());
        tc.reset();
        // Imports, then a function body (`return` at the top level): the body of an async
        // function once the imports are `await import(…)`.
        let rewritten = input
            .statements
            .then(|| imports_as_statements(text))
            .flatten();
        let Some(rewritten) = rewritten else {
            return Err(as_module);
        };
        let body = statements_body(&rewritten);
        return match compile_as(tc, Form::Body, &body, None) {
            Some((compiled, _)) => {
                one_expression(tc, &body)?;
                Ok((compiled, Some(to_cache(Form::Body, Some(body)))))
            }
            None if stopped(tc) => Err(Failure::Stopped),
            // The body's error when the module's was its top-level `return`.
            None if message_of(&as_module).contains("return") => {
                Err(syntax_failure(tc, helpers, explain, unparsable.as_ref()))
            }
            None => Err(as_module),
        };
    }
    if input.statements {
        let body = statements_body(text);
        return match compile_as(tc, Form::Body, &body, None) {
            Some((compiled, _)) => {
                one_expression(tc, &body)?;
                Ok((compiled, Some(to_cache(Form::Body, Some(body)))))
            }
            None if stopped(tc) => Err(Failure::Stopped),
            None => Err(syntax_failure(tc, helpers, explain, unparsable.as_ref())),
        };
    }
    Err(as_expression)
}

/// A TypeScript program made ready to compile.
#[derive(Default)]
struct Prepared {
    /// The text without its types, when it had any (same positions).
    text: Option<String>,
    /// The program stripped as the body of an async function (`statements_body`), when only
    /// that reading parses: statements with a top-level `return`, after imports or not.
    body: Option<String>,
    /// The stripper's complaint about a text no reading parses, at its place as written.
    unparsable: Option<Diagnostic>,
}

/// Strips `code`'s types: as written, else (with `statements`) as a function body, else as a
/// function body once its leading imports are dynamic imports.
fn prepare_typescript(code: &str, statements: bool) -> Result<Prepared, crate::run::RunError> {
    let diagnostic = match strip_types(code)? {
        Stripped::Changed(text) => {
            return Ok(Prepared {
                text: Some(text),
                ..Prepared::default()
            })
        }
        Stripped::Unchanged => return Ok(Prepared::default()),
        Stripped::Unparsable(diagnostic) => diagnostic,
    };
    if !statements {
        return Ok(Prepared {
            unparsable: diagnostic,
            ..Prepared::default()
        });
    }
    // Statements that return at their top level parse only inside the function they are the
    // body of: strip them there. The body's first line is the wrapper's, so its complaints
    // are one line down from the program as written.
    let as_body = |text: &str| -> Result<Result<String, Option<Diagnostic>>, _> {
        Ok(match strip_types(&statements_body(text))? {
            Stripped::Changed(body) => Ok(body),
            Stripped::Unchanged => Ok(statements_body(text)),
            Stripped::Unparsable(d) => Err(d.map(|d| Diagnostic {
                line: d.line.saturating_sub(1).max(1),
                ..d
            })),
        })
    };
    let body_diagnostic = match as_body(code)? {
        Ok(body) => {
            return Ok(Prepared {
                body: Some(body),
                ..Prepared::default()
            })
        }
        Err(d) => d,
    };
    // After imports, the body they are followed by: its complaint is the one that counts.
    let body_diagnostic = match imports_as_statements(code) {
        Some(rewritten) => match as_body(&rewritten)? {
            Ok(body) => {
                return Ok(Prepared {
                    body: Some(body),
                    ..Prepared::default()
                })
            }
            Err(d) => d,
        },
        None => body_diagnostic,
    };
    Ok(Prepared {
        unparsable: body_diagnostic.or(diagnostic),
        ..Prepared::default()
    })
}

fn message_of(failure: &Failure) -> &str {
    match failure {
        Failure::Error(error) => &error.message,
        Failure::Stopped => "",
    }
}

/// The syntax error in `tc`, with its place in the program as written (`RunError::at`; V8's
/// SyntaxError text has none): the compiled text's origin takes the wrapper around the program
/// off V8's positions, and TypeScript's types are blanked out in place, so they do not move
/// them. When the stripper could not parse the program either and stopped somewhere else, V8
/// stopped at TypeScript syntax: the stripper's error is the one to report. Without `explain`
/// (the Cloudflare form) the message stays V8's.
fn syntax_failure(
    tc: &mut Tc<'_, '_, '_, '_>,
    helpers: &Helpers,
    explain: bool,
    stripper: Option<&Diagnostic>,
) -> Failure {
    let position = tc.message().and_then(|message| {
        let line = message.get_line_number(tc)?;
        Some((line, message.get_start_column() + 1))
    });
    let failure = caught(tc, &helpers.describe).with_kind(ErrorKind::Syntax);
    let (Some((line, column)), true) = (position, explain) else {
        return failure;
    };
    let Failure::Error(mut error) = failure else {
        return failure;
    };
    let (message, line, column) = match stripper {
        Some(d) if (d.line, d.column) != (line, column) => (d.text.clone(), d.line, d.column),
        _ => (error.message, line, column),
    };
    error.message = message;
    error.at = Some(SourceAt { line, column });
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
        Form::Expression | Form::Body => v8::String::new(tc, &format!("({text}\n)"))?,
        Form::Module => v8::String::new(tc, text)?,
    };
    // Every form carries the program's name, and offsets that take the wrapper off V8's
    // positions (messages and stack frames alike): an expression's `(` on the first line, a
    // body's `async () => {` line above it.
    let origin = match form {
        Form::Module => super::modules::module_origin(tc, PROGRAM_NAME)?,
        Form::Expression => super::modules::script_origin(tc, PROGRAM_NAME, 0, -1)?,
        Form::Body => super::modules::script_origin(tc, PROGRAM_NAME, -1, 0)?,
    };
    let origin = Some(origin);
    let mut source = match cached {
        Some(bytes) => {
            Source::new_with_cached_data(source_text, origin.as_ref(), CachedData::new(bytes))
        }
        None => Source::new(source_text, origin.as_ref()),
    };
    let compiled = match form {
        Form::Expression | Form::Body => Compiled::Script(v8::script_compiler::compile(
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
