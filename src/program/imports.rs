//! Statements after imports: models write `import { x } from 'util.js'` and then a function
//! *body* (`const a = await x(); return a`), which is neither a module (a module cannot
//! `return`) nor a body (a function cannot hold `import` declarations). Such a text runs as the
//! body of an async function once its leading import declarations become `await import(…)`
//! destructurings, each on the lines it took, so every later position is unchanged.

/// `text` with its leading import declarations made statements, or `None` when it does not
/// start with one or one of them is not a declaration this reads.
pub fn imports_as_statements(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    let mut any = false;
    loop {
        let skipped = skip_trivia(rest);
        out.push_str(&rest[..rest.len() - skipped.len()]);
        rest = skipped;
        let Some(after) = rest.strip_prefix("import") else {
            break;
        };
        // `import(` and `import.meta` are expressions: the declarations have ended.
        if !after.starts_with(|c: char| c.is_whitespace() || matches!(c, '{' | '*' | '"' | '\'')) {
            break;
        }
        let (statement, consumed) = declaration(after)?;
        let taken = &rest[.."import".len() + consumed];
        out.push_str(&statement);
        // The lines the declaration took stay lines.
        out.extend(std::iter::repeat_n('\n', taken.matches('\n').count()));
        rest = &rest["import".len() + consumed..];
        any = true;
    }
    if !any {
        return None;
    }
    out.push_str(rest);
    Some(out)
}

/// White space and comments at the start of `text` skipped.
fn skip_trivia(mut text: &str) -> &str {
    loop {
        let trimmed = text.trim_start();
        if let Some(comment) = trimmed.strip_prefix("//") {
            text = comment.find('\n').map_or("", |i| &comment[i..]);
        } else if let Some(comment) = trimmed.strip_prefix("/*") {
            text = comment.find("*/").map_or("", |i| &comment[i + 2..]);
        } else {
            return trimmed;
        }
    }
}

/// One declaration after its `import` keyword: the statement it becomes, and the bytes it
/// took (its `;` included).
fn declaration(text: &str) -> Option<(String, usize)> {
    let body = text.trim_start();
    let lead = text.len() - body.len();
    // `import 'side-effect.js'`
    if let Some((specifier, used)) = string_literal(body) {
        let taken = lead + used + semicolon(&body[used..]);
        return Some((format!("await import({specifier});"), taken));
    }
    let from = find_from(body)?;
    let clause = body[..from].trim();
    let after_from = &body[from + "from".len()..];
    let spaced = after_from.trim_start();
    let (specifier, used) = string_literal(spaced)?;
    let mut end = from + "from".len() + (after_from.len() - spaced.len()) + used;
    // Import attributes (`with { type: 'json' }`) are not kept: the executor's modules are
    // JavaScript.
    end += semicolon(&body[end..]);
    let statement = match bindings(clause)? {
        Bindings::Pattern(pattern) => format!("const {pattern} = await import({specifier});"),
        Bindings::Namespace(local, None) => format!("const {local} = await import({specifier});"),
        Bindings::Namespace(local, Some(default)) => format!(
            "const {local} = await import({specifier}), {{ default: {default} }} = {local};"
        ),
    };
    Some((statement, lead + end))
}

/// What an import clause binds.
enum Bindings<'t> {
    /// A destructuring pattern: `{ default: X, a, b: c }`.
    Pattern(String),
    /// `* as ns`, with the default's local name when one is imported beside it.
    Namespace(&'t str, Option<&'t str>),
}

/// The bindings of an import clause: `X`, `{ a, b as c }`, `* as ns`, or a default before
/// either.
fn bindings(clause: &str) -> Option<Bindings<'_>> {
    let (default, rest) = match clause.split_once(',') {
        Some((default, rest)) if !clause.starts_with('{') => {
            (Some(identifier(default.trim())?), rest.trim())
        }
        _ if clause.starts_with('{') || clause.starts_with('*') => (None, clause),
        _ => (Some(identifier(clause)?), ""),
    };
    if let Some(namespace) = rest.strip_prefix('*') {
        let local = identifier(namespace.trim_start().strip_prefix("as")?.trim())?;
        return Some(Bindings::Namespace(local, default));
    }
    let mut parts = Vec::new();
    if let Some(default) = default {
        parts.push(format!("default: {default}"));
    }
    if let Some(named) = rest.strip_prefix('{') {
        let named = named.strip_suffix('}')?;
        for item in named.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match item.split_once(" as ") {
                Some((name, local)) => {
                    let name = name.trim();
                    let key = if name.starts_with(['"', '\'']) {
                        name.to_string()
                    } else {
                        identifier(name)?.to_string()
                    };
                    parts.push(format!("{key}: {}", identifier(local.trim())?));
                }
                None => parts.push(identifier(item)?.to_string()),
            }
        }
    } else if !rest.is_empty() {
        return None;
    }
    Some(Bindings::Pattern(format!("{{ {} }}", parts.join(", "))))
}

fn identifier(text: &str) -> Option<&str> {
    let ok = !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c == '_' || c == '$' || c.is_alphanumeric());
    ok.then_some(text)
}

/// The byte index of the `from` keyword that ends an import clause.
fn find_from(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.checked_sub(1)?,
            '"' | '\'' | ';' | '(' => return None,
            'f' if depth == 0 && body[i..].starts_with("from") => {
                let before = body[..i].chars().next_back();
                let after = body[i + 4..].chars().next();
                let word_edge = |c: Option<char>| {
                    c.is_none_or(|c| c.is_whitespace() || matches!(c, '}' | '"' | '\''))
                };
                if i > 0 && word_edge(before) && word_edge(after) {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A string literal at the start of `text` (as written) and its length.
fn string_literal(text: &str) -> Option<(&str, usize)> {
    let quote = text.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let end = text[1..].find([quote, '\n', '\\'])? + 1;
    (text[end..].starts_with(quote)).then(|| (&text[..=end], end + 1))
}

/// The length of an optional `with { … }` / `assert { … }` and `;` after a specifier (on the
/// same line).
fn semicolon(text: &str) -> usize {
    let mut rest = text;
    let trimmed = rest.trim_start_matches([' ', '\t']);
    for keyword in ["with", "assert"] {
        if let Some(attributes) = trimmed.strip_prefix(keyword) {
            let attributes = attributes.trim_start();
            if attributes.starts_with('{') {
                if let Some(close) = attributes.find('}') {
                    rest = &attributes[close + 1..];
                }
            }
        }
    }
    let trimmed = rest.trim_start_matches([' ', '\t']);
    let used = text.len() - trimmed.len();
    if trimmed.starts_with(';') {
        used + 1
    } else {
        text.len() - rest.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_declaration_becomes_a_dynamic_import() {
        let text = "import { twice, label as l } from 'util.js';\nimport util from \"util.js\"\nimport * as types from 'types.js';\nimport 'side.js';\nconst a = twice(2);\nreturn [a, l, util, types];";
        let out = imports_as_statements(text).unwrap();
        assert_eq!(
            out,
            "const { twice, label: l } = await import('util.js');\nconst { default: util } = await import(\"util.js\");\nconst types = await import('types.js');\nawait import('side.js');\nconst a = twice(2);\nreturn [a, l, util, types];"
        );
        assert_eq!(out.lines().count(), text.lines().count());
    }

    #[test]
    fn a_declaration_over_lines_keeps_its_lines() {
        let text = "// tools\nimport {\n  a,\n  b,\n} from 'm.js';\nreturn a + b;";
        let out = imports_as_statements(text).unwrap();
        assert_eq!(out.lines().count(), text.lines().count());
        assert!(
            out.contains("const { a, b } = await import('m.js');"),
            "{out}"
        );
        assert!(out.ends_with("\n\n\n\nreturn a + b;"), "{out:?}");
    }

    #[test]
    fn a_default_beside_named_or_namespace_imports() {
        let out = imports_as_statements("import d, { x } from 'm.js'\nreturn d").unwrap();
        assert!(
            out.starts_with("const { default: d, x } = await import('m.js');"),
            "{out}"
        );
        let out = imports_as_statements("import d, * as ns from 'm.js'\nreturn d").unwrap();
        assert!(
            out.starts_with("const ns = await import('m.js'), { default: d } = ns;"),
            "{out}"
        );
    }

    #[test]
    fn texts_without_leading_declarations_are_left_alone() {
        assert_eq!(imports_as_statements("return 1"), None);
        assert_eq!(imports_as_statements("import('m.js')"), None);
        assert_eq!(imports_as_statements("import x from y"), None);
    }
}
