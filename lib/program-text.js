'use strict';
// What chat models wrap around a program, taken off before it is compiled (both forms): one
// fenced block (```js … ```, ```ts …, or a bare ```) with prose before or after it, and
// trailing semicolons after the function (`async () => { … };`). Cloudflare's normalizeCode
// accepts only a text that is nothing but a fence; this goes further (README, difference table).
// A fence counts only at the start of a line: a program cannot have three backticks there
// (outside a template literal they are not JavaScript one would write; inside one they must be
// escaped), so a program with backticks in its strings is left alone. No parsing happens here.

// A fence at the start of a line: its language (optional) and its body.
const FENCE = /(^|\n)[ \t]*```[ \t]*([A-Za-z]*)[ \t]*\r?\n([\s\S]*?)(?:\r?\n[ \t]*```|$)/;
const LANGUAGES = new Set(['', 'js', 'javascript', 'mjs', 'ts', 'typescript', 'tsx', 'jsx']);

/** The program inside model output: the fenced block's body, without trailing semicolons. */
function unwrapProgram(code) {
  // Leading lines are kept unless a fence is taken off, so error positions stay the program's.
  let text = String(code);
  if (text.includes('```')) {
    const trimmed = text.trim();
    const match = FENCE.exec(trimmed);
    // A text that is only a fence, or prose before and after one.
    if (match !== null && LANGUAGES.has(match[2].toLowerCase())) text = match[3];
  }
  return withoutTrailingSemicolons(text);
}

// Cuts the run of semicolons and white space that ends `text`, from its first semicolon (a
// scan from the end: a regular expression here backtracks quadratically on long white space).
function withoutTrailingSemicolons(text) {
  let cut = text.length;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 59) cut = i; // ';'
    else if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
  }
  return cut < text.length ? text.slice(0, cut) : text;
}

module.exports = { unwrapProgram };
