//! TypeScript programs: types stripped with swc's `swc_ts_fast_strip` (the stripper Node ships
//! for `--experimental-strip-types`). Strip-only mode replaces every annotation, interface,
//! `as`, `satisfies` and generic argument with white space of the same length, so line and
//! column of every later error are those of the program as written. What strip-only refuses
//! because it would need code generated (enums, namespaces, parameter properties) goes through
//! swc's transform mode instead; positions in such a program are those of the generated code.

use super::nesting::check_nesting;
use crate::limits::{INLINE_PROGRAM_NESTING, MAX_TRANSFORM_NESTING, PROGRAM_STRIP_STACK_BYTES};
use crate::run::{ErrorKind, RunError};
use std::sync::{Arc, Mutex};
use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{BytePos, Globals, SourceMap, GLOBALS};
use swc_ts_fast_strip::{operate, ErrorCode, Mode, Options};

/// What the stripper reported: each message with the byte position it points at.
type Diagnostics = Arc<Mutex<Vec<(String, Option<BytePos>)>>>;

/// Collects swc's diagnostics instead of printing them (an engine's stdout carries frames).
struct Collect(Diagnostics);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let at = db.span.primary_span().map(|span| span.lo);
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((db.message(), at));
    }
}

/// What stripping made of a text.
#[derive(Debug, PartialEq, Eq)]
pub enum Stripped {
    /// Plain JavaScript: nothing to strip.
    Unchanged,
    /// The JavaScript left once the types are gone.
    Changed(String),
    /// Not a program the stripper can parse (it may also be statements that only parse inside
    /// a function), with the stripper's first complaint.
    Unparsable(Option<Diagnostic>),
}

/// What the stripper said, and where, in the program as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub text: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
}

impl Diagnostic {
    /// The message a run reports: the text, then where it is.
    pub fn message(&self) -> String {
        format!("{} (line {}, column {})", self.text, self.line, self.column)
    }
}

/// `code` without its TypeScript. An error for a text that nests past `MAX_PROGRAM_NESTING`
/// (swc would recurse past any stack), and for TypeScript that neither mode can turn into
/// JavaScript.
pub fn strip_types(code: &str) -> Result<Stripped, RunError> {
    let depth =
        check_nesting(code).map_err(|deep| RunError::new(ErrorKind::Syntax, deep.text()))?;
    if depth <= INLINE_PROGRAM_NESTING {
        return strip_measured(code, depth);
    }
    // Deeper than the worker's stack is sized for: on a thread of its own whose stack holds
    // the bound (its untouched pages cost nothing, and all of it goes when the thread ends).
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("codemode-strip".into())
            .stack_size(PROGRAM_STRIP_STACK_BYTES)
            .spawn_scoped(scope, || strip_measured(code, depth))
            .map_err(|error| {
                RunError::new(
                    ErrorKind::Syntax,
                    format!("the program nests too deeply to read as TypeScript here ({error})"),
                )
            })?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// `strip_types` on a text whose nesting (`depth`) was measured and fits the stack it runs on.
fn strip_measured(code: &str, depth: usize) -> Result<Stripped, RunError> {
    match run(code, Mode::StripOnly) {
        Ok(stripped) if stripped == code => Ok(Stripped::Unchanged),
        Ok(stripped) => Ok(Stripped::Changed(stripped)),
        Err((ErrorCode::UnsupportedSyntax, _)) if depth > MAX_TRANSFORM_NESTING => Err(RunError::new(
            ErrorKind::Syntax,
            format!("SyntaxError: TypeScript that needs code generated (an enum, a namespace, parameter properties) may nest at most {MAX_TRANSFORM_NESTING} levels deep; this program measures {depth}: write it without those, or split it"),
        )),
        Err((ErrorCode::UnsupportedSyntax, _)) => match run(code, Mode::Transform) {
            Ok(generated) => Ok(Stripped::Changed(
                super::without_trailing_semicolons(&generated).to_string(),
            )),
            Err((_, diagnostic)) => {
                let message = diagnostic.map_or_else(
                    || "TypeScript the stripper cannot turn into JavaScript".to_string(),
                    |d| d.message(),
                );
                Err(RunError::new(ErrorKind::Syntax, message))
            }
        },
        Err((_, diagnostic)) => Ok(Stripped::Unparsable(diagnostic)),
    }
}

/// One pass of the stripper: its output, or its error code and first diagnostic.
fn run(code: &str, mode: Mode) -> Result<String, (ErrorCode, Option<Diagnostic>)> {
    let source_map: Lrc<SourceMap> = Default::default();
    let diagnostics: Diagnostics = Default::default();
    let handler = Handler::with_emitter(true, false, Box::new(Collect(diagnostics.clone())));
    let options = Options {
        mode,
        ..Options::default()
    };
    let result = GLOBALS.set(&Globals::new(), || {
        operate(&source_map, &handler, code.to_string(), options)
    });
    result.map(|output| output.code).map_err(|error| {
        let first = diagnostics
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .first()
            .cloned();
        let diagnostic = first.and_then(|(text, at)| {
            let loc = source_map.lookup_char_pos(at?);
            Some(Diagnostic {
                text,
                line: loc.line,
                column: loc.col.0 + 1,
            })
        });
        (error.code, diagnostic)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_become_white_space_of_the_same_length() {
        let code = "async (p: { n: number }): Promise<number> => { const x: number = p.n as number; return x }";
        let Stripped::Changed(out) = strip_types(code).unwrap() else {
            panic!("types left in")
        };
        assert_eq!(out.len(), code.len());
        assert!(out.starts_with("async (p"));
        assert!(!out.contains("number"));
        assert_eq!(out.find("return"), code.find("return"));
    }

    #[test]
    fn javascript_and_unparsable_text_are_left_alone() {
        let js = strip_types("async () => { return 1 }").unwrap();
        assert_eq!(js, Stripped::Unchanged);
        let broken = strip_types("async () => { let x = ; }").unwrap();
        let Stripped::Unparsable(Some(diagnostic)) = broken else {
            panic!("no diagnostic: {broken:?}")
        };
        assert_eq!((diagnostic.line, diagnostic.column), (1, 23));
    }

    #[test]
    fn deep_types_strip_on_a_stack_sized_for_them_and_deeper_ones_are_refused() {
        // 3 000 levels overflowed the worker's 4 MiB stack (a SIGSEGV that ended the process).
        let deep = |n: usize| {
            format!(
                "async () => {{ const x: {}number{} = []; return 1 }}",
                "Array<".repeat(n),
                ">".repeat(n)
            )
        };
        let Stripped::Changed(out) = strip_types(&deep(3_000)).unwrap() else {
            panic!("types left in")
        };
        assert!(!out.contains("Array"));
        let refused = strip_types(&deep(10_000)).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::Syntax);
        assert!(
            refused.message.contains("nests more than 4000 levels"),
            "{}",
            refused.message
        );
        // With an enum the transform runs: its own, lower bound.
        let transform = format!("enum E {{ A }}\n{}", deep(2_000));
        let refused = strip_types(&transform).unwrap_err();
        assert!(
            refused.message.contains("at most 1000 levels"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn enums_go_through_the_transform() {
        let Stripped::Changed(out) =
            strip_types("async () => {\n  enum C { A, B }\n  return C.B\n}").unwrap()
        else {
            panic!("the enum is left in")
        };
        assert!(!out.contains("enum"), "{out}");
        assert!(!out.ends_with(';'), "{out}");
    }
}
