'use strict';
// Rules for the names that become globals inside the sandbox.

const IDENTIFIER = /^[a-zA-Z_$][a-zA-Z0-9_$]*$/;

// Cloudflare's reserved provider names (docs/cloudflare-compat.md §2.3), kept exactly.
const CLOUDFLARE_RESERVED = [
  '__dispatchers', '__connectors', '__logs', '__CODEMODE_BINARY_TAG', '__bytesToBase64',
  '__base64ToBytes', '__encodeCodemodeValue', '__decodeCodemodeValue', '__stringifyForCodemode',
  '__parseForCodemode', 'WorkerEntrypoint', 'CodeExecutor', 'Promise', 'setTimeout', 'Error',
  'console',
];

// Globals the sandbox cannot give away: non-configurable ones, and names strict code cannot bind.
const SANDBOX_RESERVED = ['undefined', 'NaN', 'Infinity', 'globalThis', 'eval', 'arguments'];

const RESERVED = new Set([...CLOUDFLARE_RESERVED, ...SANDBOX_RESERVED]);

// ECMAScript reserved words (including strict-mode and contextual ones that cannot name a
// binding); Cloudflare lets them through and then fails with a syntax error.
const KEYWORDS = new Set([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default',
  'delete', 'do', 'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function',
  'if', 'import', 'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this',
  'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield', 'let', 'static',
  'implements', 'interface', 'package', 'private', 'protected', 'public',
]);

// Returns an error message for a provider name, or null when it is acceptable.
function providerNameProblem(name) {
  if (typeof name !== 'string') return `Provider name must be a string (got ${typeof name})`;
  return nameProblem('Provider', name);
}

// Why a provider's or connector's name (`what`: "Provider", "Connector") cannot be a namespace,
// in Cloudflare's order and words (docs/cloudflare-compat.md §2.3), or null. A name that is not a
// string reads as not an identifier, as Cloudflare's does; the native form asks for a string
// first (providerNameProblem).
function nameProblem(what, name) {
  if (RESERVED.has(name)) return `${what} name "${name}" is reserved`;
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) return `${what} name "${name}" is not a valid JavaScript identifier`;
  if (KEYWORDS.has(name)) return `${what} name "${name}" is a JavaScript reserved word`;
  return null;
}

// Words a sanitized tool name must not be (docs/cloudflare-compat.md §13.1); such a name gets a trailing "_".
const TOOL_NAME_RESERVED = new Set(('abstract arguments await boolean break byte case catch char class const ' +
  'continue debugger default delete do double else enum eval export extends false final finally float for ' +
  'function goto if implements import in instanceof int interface let long native new null package private ' +
  'protected public return short static super switch synchronized this throw throws transient true try ' +
  'typeof undefined var void volatile while with yield').split(' '));

// Turns a host tool name into the identifier the sandbox calls it by: "get-weather" →
// "get_weather", "3drender" → "_3drender", "class" → "class_".
function sanitizeToolName(name) {
  let out = String(name).replace(/[-.\s]/g, '_').replace(/[^A-Za-z0-9_$]/g, '');
  if (out === '') return '_';
  if (/^[0-9]/.test(out)) out = '_' + out;
  if (TOOL_NAME_RESERVED.has(out)) out += '_';
  return out;
}

module.exports = { IDENTIFIER, RESERVED, KEYWORDS, nameProblem, providerNameProblem, sanitizeToolName };
