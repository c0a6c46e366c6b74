'use strict';
// normalizeCode (docs/cloudflare-compat.md §3): turns raw model output (fences, bare expressions, statement blocks,
// `export default`, named functions) into an expression evaluating to an async function.
// Slicing uses acorn's offsets, which are JS string (UTF-16) indices.
const acorn = require('acorn');

const FENCE = /^```(?:js|javascript|typescript|ts|tsx|jsx)?\s*\n([\s\S]*?)```\s*$/;

function stripFence(text) {
  const match = FENCE.exec(text);
  return match ? match[1] : text;
}

function wrapBody(body) {
  return `async () => {\n${body}\n}`;
}

const EMPTY_PROGRAM = 'async () => {}';

// Model output's program text (fence taken off, trimmed) and acorn's reading of it: `program`
// is null when the text does not parse (or is empty).
function parse(code) {
  const source = stripFence(String(code).trim()).trim();
  if (source === '') return { source, program: null };
  try {
    return { source, program: acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module' }) };
  } catch {
    return { source, program: null };
  }
}

function normalizeCode(code) {
  const { source, program } = parse(code);
  if (source === '') return EMPTY_PROGRAM;
  return program === null ? wrapBody(source) : fromProgram(source, program);
}

function fromProgram(source, program) {
  const body = program.body;
  if (body.length === 1) {
    const only = body[0];
    if (only.type === 'ExpressionStatement' && only.expression.type === 'ArrowFunctionExpression') {
      return source;
    }
    if (only.type === 'ExportDefaultDeclaration') {
      const declaration = only.declaration;
      const declarationText = source.slice(declaration.start, declaration.end);
      if (declaration.type === 'FunctionDeclaration' && !declaration.id) {
        return `async () => {\nreturn (${declarationText})();\n}`;
      }
      if (declaration.type === 'ClassDeclaration' && !declaration.id) {
        return `async () => {\nreturn (${declarationText});\n}`;
      }
      return normalizeCode(declarationText);
    }
    if (only.type === 'FunctionDeclaration' && only.id) {
      return `async () => {\n${source}\nreturn ${only.id.name}();\n}`;
    }
  }
  const last = body[body.length - 1];
  if (last && last.type === 'ExpressionStatement') {
    const before = source.slice(0, last.start);
    const expression = source.slice(last.expression.start, last.expression.end);
    return `async () => {\n${before}return (${expression})\n}`;
  }
  return wrapBody(source);
}

// programForRun's cache of its recent results, by text.
// How many texts the cache keeps: a few agents' recent programs, each resent now and then.
const RUN_CACHE_ENTRIES = 32;
// The longest text cached (UTF-16 units): bounds what the cache holds to ~4 MB at worst.
const RUN_CACHE_MAX_CHARS = 32000;
const runCache = new Map();

// What execute() runs, where Cloudflare's normalizeCode would lose something: a module (import
// or export declarations) goes as written, so its default export is called with `params` and its
// imports of the executor's `modules` resolve; a text acorn cannot parse (TypeScript, most
// often) goes as written with `statements`, and the sandbox reads it after stripping its types
// (a function expression, a module, or else the body of an async function, as here).
// Everything else is normalizeCode's.
// Its results are frozen and kept for the texts seen last (RUN_CACHE_ENTRIES), so an agent
// sending the same program again skips acorn's parse.
function programForRun(code) {
  if (typeof code !== 'string' || code.length > RUN_CACHE_MAX_CHARS) return readForRun(code);
  const cached = runCache.get(code);
  if (cached !== undefined) {
    // Most recently used last: eviction takes the least recently used text.
    runCache.delete(code);
    runCache.set(code, cached);
    return cached;
  }
  const read = readForRun(code);
  if (runCache.size >= RUN_CACHE_ENTRIES) runCache.delete(runCache.keys().next().value);
  runCache.set(code, read);
  return read;
}

function readForRun(code) {
  const { source, program } = parse(code);
  if (source === '') return Object.freeze({ code: EMPTY_PROGRAM, statements: false });
  // A fence of another language (```python) goes as written, for the sandbox to say what it is.
  if (program === null || source.startsWith('```')) return Object.freeze({ code: source, statements: true });
  const isModule = program.body.some((node) => node.type === 'ImportDeclaration' || node.type.startsWith('Export'));
  if (isModule) return Object.freeze({ code: source, statements: false });
  return Object.freeze({ code: fromProgram(source, program), statements: false });
}

// A stored program as the function expression `codemode.run` calls: normalizeCode's reading
// when acorn parses it, as a module or as a function body (statements with a top-level
// `return`: what a model's execution most often was); a text it cannot parse (TypeScript) is
// left as written when it starts like a function expression, for the stripper to read inside
// the calling program, and is otherwise the body of one.
function functionExpression(code) {
  const { source, program } = parse(code);
  if (source === '') return EMPTY_PROGRAM;
  if (program !== null) return fromProgram(source, program);
  const body = parseBody(source);
  if (body !== null) return fromProgram(source, body);
  return FUNCTION_START.test(source) ? source : wrapBody(source);
}

// The program `codemode.run` runs for a stored snippet called with `input` (JSON text, or
// undefined). A snippet saved from a module (its imports, its default export: what a program
// importing a package is) stays a module, whose default export calls the snippet's with the
// input: its static imports stay at its top, where they must be. Any other snippet is the
// function expression above, called from an async arrow function.
function snippetProgram(code, inputJson) {
  const { source, program } = parse(code);
  const exported = program === null ? undefined : program.body.find((node) => node.type === 'ExportDefaultDeclaration');
  if (exported === undefined || !program.body.some((node) => node.type === 'ImportDeclaration' || node.type.startsWith('Export'))) {
    return `async () => {\n  const snippet = (${functionExpression(code)});\n  return await snippet(${inputJson});\n}`;
  }
  const declaration = exported.declaration;
  const text = source.slice(declaration.start, declaration.end);
  const before = source.slice(0, exported.start);
  const after = source.slice(exported.end);
  // A named function keeps its declaration (and the binding the rest of the module may use).
  const named = declaration.type === 'FunctionDeclaration' && declaration.id;
  const kept = named ? text : `const __codemodeSnippet = (${text});`;
  const callee = named ? declaration.id.name : '__codemodeSnippet';
  return `${before}${kept}\n${after}\nexport default async () => await ${callee}(${inputJson});\n`;
}

// `async (`, `async x =>`, `function`, `(…) =>`, `x =>`: a text that starts as a function
// expression does.
const FUNCTION_START = /^(?:async\b|function\b|\(|[A-Za-z_$][\w$]*\s*=>)/;

// acorn's reading of `source` as the body of an async function, or null.
function parseBody(source) {
  try {
    return acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true });
  } catch {
    return null;
  }
}

// Marks an executor whose Cloudflare-form execute reads raw program text itself (programForRun):
// runCode then hands it the text as written, so TypeScript and modules survive, instead of what
// normalizeCode makes of a text it cannot parse (wrapped as statements: an arrow function in it
// would never be called). Any other executor gets normalizeCode's output, as in Cloudflare.
const READS_PROGRAMS = Symbol('codemode.readsPrograms');

module.exports = { normalizeCode, programForRun, functionExpression, snippetProgram, READS_PROGRAMS, RUN_CACHE_ENTRIES, RUN_CACHE_MAX_CHARS };
