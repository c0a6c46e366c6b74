//! Program text as models write it, before V8 sees it: TypeScript types stripped
//! (`typescript`), whether a text is an ES module, and the help a failure's message gets when
//! the program used something the sandbox does not have (`require`, JSX, Node's built-ins).
//! Nothing here knows about V8; the sandbox calls it on the worker thread, never on the host's
//! JavaScript thread.

mod hints;
mod nesting;
mod typescript;

pub use hints::with_hint;
pub use typescript::{strip_types, Diagnostic, Stripped};

/// How a program's text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// An expression evaluating to the entry function (`async (params) => { ... }`).
    Expression,
    /// An ES module whose default export is the entry function.
    Module,
}

/// Whether `text` has a line that starts an `import` or `export` declaration: only a module can
/// (in a function body both are syntax errors), so the sandbox compiles such a text as a module
/// when it is not an expression. A line of a template literal may look the same; the sandbox
/// tries the expression first, so such a program is still read as one.
pub fn looks_like_module(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        keyword_then(line, "export", |rest| {
            rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '{' || c == '*')
        }) || keyword_then(line, "import", |rest| {
            // `import(` and `import.meta` are expressions, valid anywhere.
            let next = rest.trim_start();
            let spaced = rest.len() != next.len();
            next.starts_with(['{', '*', '"', '\''])
                || (spaced && !next.starts_with(['(', '.']) && !next.is_empty())
        })
    })
}

fn keyword_then(line: &str, keyword: &str, rest_ok: impl Fn(&str) -> bool) -> bool {
    line.strip_prefix(keyword).is_some_and(rest_ok)
}

/// Takes off the semicolons and white space that end `text` (what a code generator appends
/// after an expression statement).
pub fn without_trailing_semicolons(text: &str) -> &str {
    text.trim_end_matches(|c: char| c == ';' || c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_told_by_their_declarations() {
        assert!(looks_like_module(
            "export default async function main(p) {}"
        ));
        assert!(looks_like_module(
            "import { x } from 'util.js';\nexport default () => x"
        ));
        assert!(looks_like_module(
            "  import util from \"util.js\"\nexport const a = 1"
        ));
        assert!(looks_like_module("import * as u from 'u.js'"));
        assert!(looks_like_module("export{ a }"));
        assert!(!looks_like_module(
            "async () => { const m = await import('util.js'); return m }"
        ));
        assert!(!looks_like_module("async () => {\n  import ('x')\n}"));
        assert!(!looks_like_module("async () => {\n  import.meta\n}"));
        assert!(!looks_like_module(
            "async () => { const exported = 1; return exported }"
        ));
        assert!(!looks_like_module("async () => { const important = 1 }"));
        assert!(!looks_like_module("async () => {\n  exports.a = 1\n}"));
    }

    #[test]
    fn trailing_semicolons_are_cut() {
        assert_eq!(
            without_trailing_semicolons("async () => 1;\n"),
            "async () => 1"
        );
        assert_eq!(without_trailing_semicolons("x"), "x");
    }
}
