//! How deeply a program's text nests, measured before anything that recurses reads it.
//!
//! swc's TypeScript stripper (and the visitors behind it) recurse once per level of nesting:
//! brackets, generic arguments, but also operator chains (`a.b.b.b…`, `1+1+1…`, `!!!…`) and
//! statements that hold a statement (`if (a) if (a) …`, `else if` chains). On a thread's stack
//! a deep enough text overflows it, and a stack overflow ends the process, not the run. V8
//! itself checks its stack and throws a RangeError; swc does not. So the text is measured here
//! first, in one pass with no recursion, and a text past `MAX_PROGRAM_NESTING` is refused as a
//! syntax error before swc sees it (`typescript::strip_types` then runs on a stack sized for
//! that bound).
//!
//! The measure is an upper bound on the stripper's depth, not an exact one: the open brackets
//! (`(`, `[`, `{`, `${`) plus, in each, the operator tokens and keywords seen since the last
//! place a chain must end (`;`, `,`, a statement's line break). A closing bracket counts as one
//! more operator of the bracket around it (`f()()()`, `a[0][0]`). Text inside strings, comments,
//! template text and regular expressions counts nothing, which is only sound while this scanner
//! and the parser agree on where those start. They can disagree at one token: a `/` that
//! follows `}`, `>` or a contextual keyword may start a regular expression or divide,
//! depending on grammar this pass does not track. There both readings
//! are taken: openers inside the would-be expression count and its closers close only what it
//! opened, so neither reading can hide a bracket; and where the readings would read quotes,
//! backticks or comments differently, the text is refused with a message saying to write the
//! expression in parentheses (valid programs essentially never do that).

use crate::limits::MAX_PROGRAM_NESTING;

/// Where a program nests past the bound, or could not be measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooDeep {
    pub message: String,
    /// 1-based line of the place, in the text as given.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl TooDeep {
    /// The message a run reports: the text, then where it is.
    pub fn text(&self) -> String {
        format!(
            "{} (line {}, column {})",
            self.message, self.line, self.column
        )
    }
}

/// Measures `text`; `Err` names the first place past `MAX_PROGRAM_NESTING`.
pub fn check_nesting(text: &str) -> Result<usize, TooDeep> {
    check_nesting_within(text, MAX_PROGRAM_NESTING)
}

/// The deepest measure of `text` (see the module's comment), or where it passes `limit`.
pub fn check_nesting_within(text: &str, limit: usize) -> Result<usize, TooDeep> {
    let mut scan = Scan::new(text.as_bytes(), limit);
    match scan.run() {
        Ok(()) => Ok(scan.deepest),
        Err(message) => {
            let (line, column) = position(text, scan.at.min(text.len()));
            Err(TooDeep {
                message,
                line,
                column,
            })
        }
    }
}

/// 1-based line and column (in characters) of byte `at`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let mut at = at;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bracket {
    Paren,
    Square,
    Brace,
    /// `${` inside a template literal: its `}` goes back to the template's text.
    Template,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    bracket: Bracket,
    /// Operators and keywords counted in this bracket since the last `,`, `;` or statement
    /// line break.
    ops: usize,
    /// `<` not yet closed by a `>`, since the last `;` or statement line break: type arguments
    /// nest across commas (`Map<K, Map<K, …>>`).
    angles: usize,
    /// `else` in this bracket: an `else if` chain nests across `;` (`if (a) x; else if …`).
    elses: usize,
    /// A `(` after `if`, `while`, `for`, `with`: after its `)` an expression starts.
    head: bool,
}

impl Frame {
    fn new(bracket: Bracket, head: bool) -> Self {
        Frame {
            bracket,
            ops: 0,
            angles: 0,
            elses: 0,
            head,
        }
    }

    /// What this bracket adds to the measure.
    fn weight(&self) -> usize {
        1 + self.ops + self.angles + self.elses
    }
}

/// Where a chain of operators ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ChainEnd {
    Comma,
    Statement,
}

/// What the last significant token was, for telling `/` and line breaks apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Last {
    /// Start of text, an operator, an opening bracket, `,` or `;`: an expression may start.
    Operator,
    /// An identifier, number, string, template or regular expression: a value ended.
    Value,
    /// A keyword after which an expression starts (`return`, `typeof`, `else`, …).
    Keyword,
    /// A word that is a keyword in some places and a name in others (`of`, `await`, `yield`,
    /// `let`, `as`, …) or `>`: `/` after it is ambiguous, and the line goes on.
    Ambiguous,
    /// `}`: `/` after it is ambiguous (a block, or an object literal), and a statement may end.
    AmbiguousEnd,
    /// `++`, `--` or a postfix `!` (TypeScript's non-null): a value ended, so `/` divides.
    Postfix,
    /// `)` of an `if`/`while`/`for`/`with` head: a statement (hence maybe a regex) follows.
    Head,
    /// `)` or `]` closing an expression: a value ended.
    Closed,
}

/// Words after which an expression starts.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "return",
    "typeof",
    "instanceof",
    "in",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "extends",
    "keyof",
    "infer",
    "is",
    "satisfies",
    "asserts",
    "unique",
    "readonly",
    "if",
    "while",
    "for",
    "with",
    "switch",
    "catch",
    "function",
    "class",
    "import",
    "export",
    "default",
    "const",
    "var",
    "try",
    "finally",
    "interface",
    "enum",
    "namespace",
    "module",
    "declare",
    "abstract",
];

/// Names that are also keywords somewhere: after them `/` is ambiguous.
const CONTEXTUAL_KEYWORDS: &[&str] = &[
    "of", "await", "yield", "let", "as", "async", "type", "get", "set", "static",
];

/// Words that continue the line before when a line starts with them: binary operators, and
/// `else` (its statement belongs to the `if` before).
const WORD_OPERATORS: &[&str] = &[
    "else",
    "in",
    "instanceof",
    "of",
    "as",
    "satisfies",
    "extends",
    "is",
];

/// Heads whose parenthesis is followed by a statement.
const HEAD_KEYWORDS: &[&str] = &["if", "while", "for", "with"];

struct Scan<'t> {
    text: &'t [u8],
    at: usize,
    limit: usize,
    /// The open brackets, above a root frame for the text outside any.
    frames: Vec<Frame>,
    /// The sum of the frames' weights, less the root's 1: the current measure.
    depth: usize,
    deepest: usize,
    last: Last,
    /// The last word, when `last` came from one (for head and block detection).
    last_word: &'t [u8],
    /// A line break since the last token (for statement ends without `;`).
    newline: bool,
    /// Inside a would-be regular expression read as code: its closers may close only what it
    /// opened (frames above this index).
    floor: usize,
}

type Step = Result<(), String>;

impl<'t> Scan<'t> {
    fn new(text: &'t [u8], limit: usize) -> Self {
        Scan {
            text,
            at: 0,
            limit,
            frames: vec![Frame::new(Bracket::Brace, false)],
            depth: 0,
            deepest: 0,
            last: Last::Operator,
            last_word: b"",
            newline: false,
            floor: 1,
        }
    }

    fn peek(&self, ahead: usize) -> u8 {
        self.text.get(self.at + ahead).copied().unwrap_or(0)
    }

    fn grow(&mut self) -> Step {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        if self.depth > self.limit {
            return Err(format!(
                "SyntaxError: the program nests more than {} levels deep (brackets, generic types, operator chains or statements inside statements); split it into smaller expressions and functions",
                self.limit
            ));
        }
        Ok(())
    }

    fn top(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    fn count_op(&mut self) -> Step {
        self.top().ops += 1;
        self.grow()
    }

    fn count_angle(&mut self) -> Step {
        self.top().angles += 1;
        self.grow()
    }

    fn count_else(&mut self) -> Step {
        self.top().elses += 1;
        self.grow()
    }

    /// A chain ends (`,`, `;`, a statement's line break): its operators no longer nest.
    fn end_chain(&mut self, end: ChainEnd) {
        let top = self.top();
        let mut freed = std::mem::take(&mut top.ops);
        if end == ChainEnd::Statement {
            freed += std::mem::take(&mut top.angles);
        }
        self.depth -= freed;
    }

    fn open(&mut self, bracket: Bracket) -> Step {
        let head = bracket == Bracket::Paren
            && self.last == Last::Keyword
            && HEAD_KEYWORDS.contains(&std::str::from_utf8(self.last_word).unwrap_or(""));
        self.frames.push(Frame::new(bracket, head));
        self.last = Last::Operator;
        self.grow()
    }

    /// A closing bracket. `Some(frame)` when it closed one (a `}` closing `${` returns to the
    /// template's text, which the caller reads).
    fn close(&mut self, bracket: Bracket) -> Option<Frame> {
        if self.frames.len() <= self.floor {
            // Nothing this reading opened: a closer of the other reading's text; ignored.
            return None;
        }
        let top = *self.frames.last()?;
        // A closer that does not match is a syntax error the parser stops at; closing the
        // innermost bracket keeps the measure an upper bound either way.
        let _ = bracket;
        self.frames.pop();
        self.depth -= top.weight();
        Some(top)
    }

    fn run(&mut self) -> Step {
        while self.at < self.text.len() {
            let c = self.text[self.at];
            match c {
                b'\n' => {
                    self.newline = true;
                    self.at += 1;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.at += 1,
                b'/' if self.peek(1) == b'/' => self.skip_line_comment(),
                b'/' if self.peek(1) == b'*' => self.skip_block_comment(),
                b'\'' | b'"' => {
                    self.before_token(false);
                    self.skip_string(c);
                    self.last = Last::Value;
                }
                b'`' => {
                    self.before_token(true);
                    self.at += 1;
                    self.template_text()?;
                }
                b'/' => {
                    self.before_token(true);
                    self.slash()?;
                }
                b'(' | b'[' | b'{' => {
                    self.before_token(true);
                    self.at += 1;
                    self.open(match c {
                        b'(' => Bracket::Paren,
                        b'[' => Bracket::Square,
                        _ => Bracket::Brace,
                    })?;
                }
                b')' | b']' | b'}' => {
                    self.before_token(true);
                    self.at += 1;
                    let bracket = match c {
                        b')' => Bracket::Paren,
                        b']' => Bracket::Square,
                        _ => Bracket::Brace,
                    };
                    match self.close(bracket) {
                        Some(frame) if frame.bracket == Bracket::Template => {
                            self.template_text()?;
                            continue;
                        }
                        Some(frame) => {
                            self.last = match c {
                                b')' if frame.head => Last::Head,
                                b'}' => Last::AmbiguousEnd,
                                _ => Last::Closed,
                            };
                            // The bracket is one operand of its parent: `f()()`, `a[0][0]`.
                            self.count_op()?;
                        }
                        None => self.last = Last::Closed,
                    }
                }
                b';' | b',' => {
                    self.at += 1;
                    self.newline = false;
                    self.end_chain(if c == b',' {
                        ChainEnd::Comma
                    } else {
                        ChainEnd::Statement
                    });
                    self.last = Last::Operator;
                }
                b'0'..=b'9' => {
                    self.before_token(false);
                    self.skip_number();
                    self.last = Last::Value;
                }
                b'\\' => {
                    // Only in identifiers (`\u0061`); skipped with the character it escapes.
                    self.at += 2;
                }
                c if c == b'_' || c == b'$' || c.is_ascii_alphabetic() || c >= 0x80 => {
                    self.word()?;
                }
                _ => self.punctuator()?,
            }
        }
        Ok(())
    }

    /// Before a token: a line break since the last one may have ended a statement (no `;`),
    /// which ends the chain, unless the line before ended in an operator or this token
    /// continues it. `continues`: the token can continue an expression (`(`, `[`, `` ` ``, `.`,
    /// an operator, `/`).
    fn before_token(&mut self, continues: bool) {
        if std::mem::take(&mut self.newline) && !continues && self.line_ended() {
            self.end_chain(ChainEnd::Statement);
        }
    }

    /// Whether the last token could end a statement.
    fn line_ended(&self) -> bool {
        matches!(
            self.last,
            Last::Value | Last::Closed | Last::AmbiguousEnd | Last::Postfix
        )
    }

    fn word(&mut self) -> Step {
        let start = self.at;
        while self.at < self.text.len() {
            let c = self.text[self.at];
            if c == b'_' || c == b'$' || c.is_ascii_alphanumeric() || c >= 0x80 {
                self.at += 1;
            } else if c == b'\\' {
                self.at += 2;
            } else {
                break;
            }
        }
        let word = &self.text[start..self.at.min(self.text.len())];
        let name = std::str::from_utf8(word).unwrap_or("");
        let after_dot = self.last == Last::Operator && self.previous_is_dot(start);
        let keyword = !after_dot && EXPRESSION_KEYWORDS.contains(&name);
        let contextual = !after_dot && CONTEXTUAL_KEYWORDS.contains(&name);
        let operator = !after_dot && WORD_OPERATORS.contains(&name);
        self.before_token(operator);
        if name == "else" && !after_dot {
            self.count_else()?;
        } else if keyword || contextual {
            self.count_op()?;
        }
        self.last = if keyword {
            Last::Keyword
        } else if contextual {
            Last::Ambiguous
        } else {
            Last::Value
        };
        self.last_word = if keyword || contextual { word } else { b"" };
        Ok(())
    }

    /// Whether the token before `start` is `.` (then a keyword is a property name).
    fn previous_is_dot(&self, start: usize) -> bool {
        self.text[..start]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'.')
    }

    /// A numeric literal, an exponent's sign included (`1e+5`; in hex `0x1e+5` that `+` is an
    /// operator, one count fewer: the measure stays within one of an upper bound per number).
    fn skip_number(&mut self) {
        while self.at < self.text.len() {
            let c = self.text[self.at];
            let sign = (c == b'+' || c == b'-') && matches!(self.text[self.at - 1], b'e' | b'E');
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || sign {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn skip_line_comment(&mut self) {
        while self.at < self.text.len() && self.text[self.at] != b'\n' {
            self.at += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        self.at += 2;
        while self.at < self.text.len() {
            if self.text[self.at] == b'*' && self.peek(1) == b'/' {
                self.at += 2;
                return;
            }
            if self.text[self.at] == b'\n' {
                self.newline = true;
            }
            self.at += 1;
        }
    }

    /// A string literal; it ends at its quote or, unterminated, at the line's end.
    fn skip_string(&mut self, quote: u8) {
        self.at += 1;
        while self.at < self.text.len() {
            match self.text[self.at] {
                b'\\' => self.at += 2,
                b'\n' => return,
                c if c == quote => {
                    self.at += 1;
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    /// Template text up to its closing backtick (a value) or a `${` (a bracket, in code).
    fn template_text(&mut self) -> Step {
        while self.at < self.text.len() {
            match self.text[self.at] {
                b'\\' => self.at += 2,
                b'`' => {
                    self.at += 1;
                    self.last = Last::Value;
                    return Ok(());
                }
                b'$' if self.peek(1) == b'{' => {
                    self.at += 2;
                    return self.open(Bracket::Template);
                }
                _ => self.at += 1,
            }
        }
        self.last = Last::Value;
        Ok(())
    }

    /// A `/` that is not a comment: division after a value, a regular expression where an
    /// expression starts, and both readings where the grammar decides (see the module).
    fn slash(&mut self) -> Step {
        match self.last {
            Last::Value | Last::Closed | Last::Postfix => {
                self.at += 1;
                if self.peek(0) == b'=' {
                    self.at += 1;
                }
                self.last = Last::Operator;
                self.count_op()
            }
            Last::Operator | Last::Keyword | Last::Head => {
                self.skip_regex();
                self.last = Last::Value;
                Ok(())
            }
            Last::Ambiguous | Last::AmbiguousEnd => self.ambiguous_slash(),
        }
    }

    /// End (exclusive) of the regular expression starting at `self.at`, on this line.
    fn regex_end(&self) -> Option<usize> {
        let mut i = self.at + 1;
        let mut class = false;
        while i < self.text.len() {
            match self.text[i] {
                b'\\' => i += 2,
                b'\n' | b'\r' => return None,
                b'[' => {
                    class = true;
                    i += 1;
                }
                b']' => {
                    class = false;
                    i += 1;
                }
                b'/' if !class => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    fn skip_regex(&mut self) {
        self.at = self.regex_end().unwrap_or_else(|| {
            // Unterminated: the parser stops there; the rest of the line is skipped.
            let rest = &self.text[self.at..];
            self.at + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        });
        while self.at < self.text.len() && self.text[self.at].is_ascii_alphabetic() {
            self.at += 1;
        }
    }

    /// A `/` the grammar decides: read the would-be regular expression's text as code (its
    /// openers count, its closers close only what it opened), which reads the same as the
    /// division unless quotes, backticks or comments start inside it or right after it.
    fn ambiguous_slash(&mut self) -> Step {
        let Some(end) = self.regex_end() else {
            // Not a regular expression on this line: a division.
            self.at += 1;
            self.last = Last::Operator;
            return self.count_op();
        };
        let body = &self.text[self.at + 1..end - 1];
        let after = self.text.get(end).copied().unwrap_or(0);
        if body.iter().any(|b| matches!(b, b'\'' | b'"' | b'`')) || matches!(after, b'/' | b'*') {
            return Err("SyntaxError: cannot tell whether this `/` starts a regular expression or divides; put the expression in parentheses".to_string());
        }
        let floor = std::mem::replace(&mut self.floor, self.frames.len());
        self.at += 1;
        self.last = Last::Operator;
        self.count_op()?;
        while self.at < end - 1 {
            let c = self.text[self.at];
            self.at += 1;
            match c {
                b'\\' => self.at += 1,
                b'(' => self.open(Bracket::Paren)?,
                b'[' => self.open(Bracket::Square)?,
                b'{' => self.open(Bracket::Brace)?,
                // A closer counts only when it closed what this reading opened (`close` is
                // a no-op otherwise).
                b')' | b']' | b'}' if self.close(Bracket::Paren).is_some() => self.count_op()?,
                b')' | b']' | b'}' => {}
                c if c.is_ascii_punctuation() => self.count_op()?,
                _ => {}
            }
        }
        self.at = end;
        self.floor = floor;
        // As a division, the closing `/` is one more operator; as a regex, flags follow.
        self.count_op()?;
        while self.at < self.text.len() && self.text[self.at].is_ascii_alphabetic() {
            self.at += 1;
        }
        self.last = Last::Value;
        Ok(())
    }

    /// Operators and other punctuation: each token counts once.
    fn punctuator(&mut self) -> Step {
        let c = self.text[self.at];
        let next = self.peek(1);
        let after_value = matches!(self.last, Last::Value | Last::Closed) && !self.newline;
        // `++`/`--` and a postfix `!` make the next `/` ambiguous; `>` may close type
        // arguments (`as A<B> / 2`).
        let (len, last) = match (c, next) {
            // Postfix (right after a value, on its line): `/` then divides. Prefix: an
            // expression starts, so `/` starts a regular expression, as for any operator.
            (b'+', b'+') | (b'-', b'-') if after_value => (2, Last::Postfix),
            (b'!', _) if after_value && next != b'=' => (1, Last::Postfix),
            (b'<', _) if next != b'<' && next != b'=' => {
                self.before_token(true);
                self.at += 1;
                self.last = Last::Operator;
                self.last_word = b"";
                return self.count_angle();
            }
            (b'>', _) if self.top().angles > 0 => {
                // Closes type arguments, or is a comparison after one: it moves one count
                // from `angles` to `ops` (`Array<Array<T>>` measures its depth, not twice it;
                // a chain `1 < 2 > 3 < …` still measures at least half its length).
                self.before_token(true);
                self.at += 1;
                self.last = Last::Ambiguous;
                self.last_word = b"";
                let top = self.top();
                top.angles -= 1;
                top.ops += 1;
                return Ok(());
            }
            (b'>', _) => (1, Last::Ambiguous),
            (b'.', b'.') if self.peek(2) == b'.' => (3, Last::Operator),
            (b'?', b'.') if !self.peek(2).is_ascii_digit() => (2, Last::Operator),
            (b'=', b'>') => (2, Last::Operator),
            _ => (1, Last::Operator),
        };
        // `.`, an operator and a line break: the line continues (`a\n.b`, `a +\nb`).
        self.before_token(true);
        self.at += len;
        self.last = last;
        self.last_word = b"";
        self.count_op()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        check_nesting_within(text, usize::MAX).unwrap()
    }

    #[test]
    fn ordinary_programs_stay_shallow() {
        assert_eq!(depth(""), 0);
        // Type arguments measure their depth once.
        let generic = format!(
            "const x: {}number{} = []",
            "Array<".repeat(100),
            ">".repeat(100)
        );
        assert!((100..110).contains(&depth(&generic)), "{}", depth(&generic));
        let program = "async () => {\n  const list = await items.list();\n  const open = list.filter((i) => i.open && !i.archived).map((i) => ({ id: i.id, name: `${i.first} ${i.last}` }));\n  if (open.length === 0) { return [] }\n  return open;\n}";
        assert!(depth(program) < 30, "{}", depth(program));
        // A long program of short statements does not add up.
        let long = "let a = 0;\n".repeat(10_000) + &"a = a + 1\n".repeat(10_000);
        assert!(depth(&long) < 10, "{}", depth(&long));
        // Long flat lists do not either.
        let list = format!("[{}]", vec!["1 + 2"; 10_000].join(", "));
        assert!(depth(&list) < 10, "{}", depth(&list));
    }

    #[test]
    fn every_kind_of_nesting_counts() {
        let n = 500;
        let shapes = [
            format!(
                "const x: {}number{} = []",
                "Array<".repeat(n),
                ">".repeat(n)
            ),
            format!("x = {}1{}", "(".repeat(n), ")".repeat(n)),
            format!("x = a{}", ".b".repeat(n)),
            format!("x = a{}", "?.b".repeat(n)),
            format!("x = a{}", "\n.b".repeat(n)),
            format!("x = 1{}", "+1".repeat(n)),
            format!("x = 1{}", " +\n1".repeat(n)),
            format!("x = {}1", "!".repeat(n)),
            format!("x = {}1{}", "{a:".repeat(n), "}".repeat(n)),
            format!("x = {}1{}", "`${".repeat(n), "}`".repeat(n)),
            format!("x = {}1", "a=>".repeat(n)),
            format!("x = {}1", "a?b:".repeat(n)),
            format!("{}x", "if(a)".repeat(n)),
            format!("{}x", "if (a)\n".repeat(n)),
            format!("x = f{}", "()".repeat(n)),
            format!("x = {}a", "new ".repeat(n)),
            format!("x = {}a", "await ".repeat(n)),
            format!("if (a) {{}}{}", " else if (a) {}\n".repeat(n)),
            format!("x = a{}", "\ninstanceof b".repeat(n)),
            format!("let x: {}1{}", "Map<1, ".repeat(n), ">".repeat(n)),
            format!("if (a) x{}", "; else if (a) x".repeat(n)),
            format!("if (a) x{}", "\nelse if (a) x".repeat(n)),
            format!("x = /a/{}", ".b".repeat(n)),
            format!("x = 1{}", " < 2 > 3".repeat(n)),
        ];
        for shape in shapes {
            let d = depth(&shape);
            assert!(d >= n, "{d} for {}", &shape[..40.min(shape.len())]);
        }
    }

    #[test]
    fn strings_comments_and_regexes_hide_nothing_they_do_not_hold() {
        assert!(depth("x = '(((((((((('") < 5);
        assert!(depth("x = \"a. b. c. d. e. f. g\"") < 5);
        assert!(depth("// ((((((((((\nx = 1") < 5);
        assert!(depth("/* ((((((((((\n)))) */ x = 1") < 5);
        assert!(depth("x = /((((((((((a))))))))))/.test(y)") < 5);
        assert!(depth("x = `(((((((((( ${a} ((((((`") < 5);
        // A division is not a regex: what follows counts.
        let n = 200;
        let text = format!("x = a / 2 + {}1{}", "(".repeat(n), ")".repeat(n));
        assert!(depth(&text) >= n);
    }

    #[test]
    fn an_ambiguous_slash_hides_no_bracket() {
        let n = 200;
        // After `}` a `/` may divide (object literal) or start a regex (block): the would-be
        // regex's openers count either way.
        let text = format!("x = {{}} /{}/ 1", "(".repeat(n));
        assert!(depth(&text) >= n, "{}", depth(&text));
        // Its closers cannot close what was open before it.
        let text = format!(
            "{}{{}} /{}/ {}1",
            "(".repeat(n),
            ")".repeat(n),
            "(".repeat(n)
        );
        assert!(depth(&text) >= 2 * n, "{}", depth(&text));
        // Where the two readings would lex quotes differently, the text is refused.
        let refused = check_nesting_within("x = {} / \"/; (((((", usize::MAX).unwrap_err();
        assert!(refused.message.contains("parentheses"), "{refused:?}");
        assert_eq!((refused.line, refused.column), (1, 8));
        // Ordinary TypeScript non-null division and a regex after `}` on its own line pass, as
        // does a division after `++` with quotes before the next `/`.
        assert!(depth("x = a! / 2 / 3") < 10);
        assert!(depth("x = i++ / 2 + \" items \" + n / 3") < 10);
        // A prefix `++` (or a `!` starting a line) is followed by a regular expression: its
        // quote hides nothing.
        let n = 200;
        let text = format!("++/\"/; {}1{}", "(".repeat(n), ")".repeat(n));
        assert!(depth(&text) >= n, "{}", depth(&text));
        let text = format!("a\n!/\"/.test(s); {}1{}", "(".repeat(n), ")".repeat(n));
        assert!(depth(&text) >= n, "{}", depth(&text));
        assert!(depth("if (a) {}\n/ab+c/.test(s)") < 10);
    }

    #[test]
    fn past_the_limit_is_a_positioned_syntax_error() {
        let text = format!(
            "let ok = 1\nconst x: {}number{} = []",
            "Array<".repeat(50),
            ">".repeat(50)
        );
        let err = check_nesting_within(&text, 40).unwrap_err();
        assert!(
            err.message
                .starts_with("SyntaxError: the program nests more than 40 levels"),
            "{err:?}"
        );
        assert_eq!(err.line, 2);
        assert!(err
            .text()
            .ends_with(&format!("(line 2, column {})", err.column)));
    }

    #[test]
    fn the_scan_is_linear_on_megabytes() {
        let text = "a".repeat(4 << 20);
        assert_eq!(depth(&text), 0);
        let text = "(".repeat(4 << 20);
        assert!(check_nesting(&text).is_err());
    }
}
