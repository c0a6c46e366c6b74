//! Program text as models write it, before V8 sees it: TypeScript types stripped
//! (`typescript`), whether a text is an ES module, and the help a failure's message gets when
//! the program used something the sandbox does not have (`require`, JSX, Node's built-ins).
//! Nothing here knows about V8; the sandbox calls it on the worker thread, never on the host's
//! JavaScript thread.

mod hints;
mod imports;
mod nesting;
mod typescript;

pub use hints::with_hint;
pub use imports::imports_as_statements;
pub use typescript::{strip_types, Diagnostic, Stripped};

/// How a program's text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// An expression evaluating to the entry function (`async (params) => { ... }`).
    Expression,
    /// The body of an async function: compiled as `async () => {`, a line break, the text.
    Body,
    /// An ES module whose default export is the entry function.
    Module,
}

/// How many lines of a failure's place a message shows at most: one, cut to this many
/// characters around the column.
const EXCERPT_CHARS: usize = 120;

/// `message`, then where in `code` it happened: `(line L, column C)` and, on the lines after,
/// that line of the program with a caret under the column, so a model fixing its program
/// sees what it wrote there. A place past the end of `code` gets the position only.
pub fn with_place(message: &str, code: &str, line: usize, column: usize) -> String {
    let place = format!("{message} (line {line}, column {column})");
    let Some(text) = code.lines().nth(line.saturating_sub(1)) else {
        return place;
    };
    let chars: Vec<char> = text.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    // A long line is cut to a window around the column.
    let start = at.saturating_sub(EXCERPT_CHARS / 2);
    let end = (start + EXCERPT_CHARS).min(chars.len());
    let shown: String = chars[start..end]
        .iter()
        .map(|&c| if c == '\t' { ' ' } else { c })
        .collect();
    if shown.trim().is_empty() {
        return place;
    }
    let lead = if start > 0 { "…" } else { "" };
    let caret = " ".repeat(lead.chars().count() + (at - start));
    format!("{place}\n{line:>4} | {lead}{shown}\n{:>4} | {caret}^", "")
}

/// Where a syntax error V8 placed at `line` lies when that is past the program's last line:
/// the wrapper the program is compiled in closes after it (`(`…`\n)`, `async () => {`…`\n}`),
/// so V8 stops at the wrapper's `)` or `}` when the program ends before what it opened is
/// closed. The place to report is then the end of the program (its last line that has text,
/// after its last character), and the message is the program's, not the wrapper's token.
pub fn past_the_end(code: &str, line: usize) -> Option<(usize, usize)> {
    if line <= code.lines().count() {
        return None;
    }
    let (index, last) = code
        .lines()
        .enumerate()
        .filter(|(_, text)| !text.trim().is_empty())
        .last()?;
    Some((index + 1, last.chars().count() + 1))
}

/// The message of a syntax error `past_the_end` moved to the end of the program.
pub const ENDS_EARLY: &str =
    "Unexpected end of input: the program ends before a bracket, string or block it opened is closed";

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

/// The languages of a fence around a program that the sandbox reads (the host takes such a
/// fence off before the program gets here).
const SCRIPT_LANGUAGES: &[&str] = &[
    "",
    "js",
    "javascript",
    "mjs",
    "cjs",
    "ts",
    "typescript",
    "tsx",
    "jsx",
];

/// The language a text that starts with a code fence names, when it is not JavaScript or
/// TypeScript (```python, ```bash): such a text is never a program here (as JavaScript it
/// would read as an empty template literal called as a tag). `Some("")` never happens: a
/// bare fence is taken off by the host.
pub fn foreign_fence(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix("```")?;
    let language = rest
        .split(|c: char| c.is_whitespace() || c == '`')
        .next()
        .unwrap_or("");
    (!SCRIPT_LANGUAGES.contains(&language.to_ascii_lowercase().as_str())).then_some(language)
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
    fn a_place_shows_its_line_with_a_caret() {
        let code = "async () => {\n  const a = 1;\n  return a.foo.bar;\n}";
        assert_eq!(
            with_place("TypeError: x", code, 3, 12),
            "TypeError: x (line 3, column 12)\n   3 |   return a.foo.bar;\n     |            ^"
        );
        assert_eq!(with_place("E", code, 9, 1), "E (line 9, column 1)");
        let long = format!("{}x", " ".repeat(500));
        let placed = with_place("E", &long, 1, 501);
        assert!(placed.ends_with("…") || placed.contains("…"), "{placed}");
        assert!(placed.lines().all(|l| l.chars().count() < 140), "{placed}");
    }

    #[test]
    fn a_syntax_error_in_the_wrapper_is_placed_at_the_end_of_the_program() {
        assert_eq!(past_the_end("async () => { return (", 2), Some((1, 23)));
        assert_eq!(past_the_end("const a = [\n  1,\n\n", 4), Some((2, 5)));
        assert_eq!(past_the_end("async () => { return (", 1), None);
        assert_eq!(past_the_end("a\nb", 2), None);
        assert_eq!(past_the_end("", 1), None);
    }

    #[test]
    fn fences_of_other_languages_are_told() {
        assert_eq!(foreign_fence("```python\nprint(1)\n```"), Some("python"));
        assert_eq!(foreign_fence("  ```Bash\nls"), Some("Bash"));
        assert_eq!(foreign_fence("```ts\nconst a = 1"), None);
        assert_eq!(foreign_fence("async () => `\n```python\n`"), None);
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
