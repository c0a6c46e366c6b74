'use strict';
// Turns JSON Schemas into TypeScript declarations for the prompt that tells a model which
// tools it may call (docs/cloudflare-compat.md §13.2, §13.3). The output must be byte-for-byte what
// @cloudflare/codemode produces, since callers paste it into prompts and compare snapshots;
// that is why some odd-looking results below (an empty union, `string | null[]`, duplicated
// aliases after a failure) are kept on purpose.
//
// Malformed schemas (a `null` schema, a non-array `anyOf`, a numeric `$ref`, a non-string
// description) make Cloudflare throw a TypeError from inside its string handling. We let
// the same operations throw the same way, so that generateTypesFromJsonSchema degrades the
// same tools to `unknown` that Cloudflare does.

const { sanitizeToolName } = require('./names.js');

// Beyond this many nested schemas the type is cut off as `unknown`, which keeps the prompt
// bounded for huge or adversarial schemas.
const MAX_DEPTH = 20;

// Property names that can be written bare in an object type; anything else is quoted.
const IDENTIFIER = /^[a-zA-Z_$][a-zA-Z0-9_$]*$/;

// Characters that may not appear raw inside a double-quoted string literal: the quote and
// the backslash, line terminators (including U+2028/U+2029) and other control characters.
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_ESCAPE = /[\\"\u0000-\u001f\u007f\u2028\u2029]/g;
const SHORT_ESCAPES = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

// A double-quoted TypeScript string literal for `text`.
function quote(text) {
  return '"' + text.replace(NEEDS_ESCAPE, (ch) =>
    SHORT_ESCAPES[ch] || '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

// Keeps text from closing the JSDoc comment it is placed in.
function escapeComment(text) {
  return text.replace(/\*\//g, '*\\/');
}

// JSDoc lines must stay on one line; only "\n" and "\r\n" count as line breaks here (a lone
// "\r" is left alone, as Cloudflare does).
function oneLine(text) {
  return text.replace(/\r?\n/g, ' ');
}

// The TypeScript literal type for one `enum` member or a `const` value.
function literal(value) {
  if (typeof value === 'string') return quote(value);
  if (value === null) return 'null';
  // Objects and arrays are written as their JSON; an object whose toJSON yields nothing
  // cannot be written at all.
  if (typeof value === 'object') return JSON.stringify(value) ?? 'unknown';
  return String(value);
}

// Follows a local `$ref` from the root schema. Returns undefined for anything that cannot be
// resolved here (another document, a missing path, a value that is not a schema object).
function resolveRef(ref, root) {
  // A non-string truthy $ref throws here, as in Cloudflare. ("#" always meets the root on
  // the current path, so it ends as `unknown` through the cycle check.)
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node = root;
  for (const raw of ref.slice(2).split('/')) {
    // JSON pointer unescaping (RFC 6901): "~1" first, so "~01" becomes "~1", not "/".
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    // The walk only steps through objects (arrays included). Keys are read as plain
    // properties, inherited ones too, as Cloudflare does; "#/x/toString" still ends in a
    // function, which is not a schema.
    if (node === null || typeof node !== 'object') return undefined;
    node = node[key];
  }
  // `true`/`false` found by a pointer are not treated as boolean schemas.
  return node !== null && typeof node === 'object' ? node : undefined;
}

// The name a single entry of a `type` array maps to. Entries are rendered on their own,
// without the rest of the schema (so ["array", "null"] is `unknown[] | null` even with
// `items`).
function simpleType(type) {
  switch (type) {
    case 'string': return 'string';
    case 'number':
    case 'integer': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': return 'unknown[]';
    case 'object': return 'Record<string, unknown>';
    default: return 'unknown';
  }
}

// Converts `schema` to a type expression.
//   ctx.root  the schema `$ref`s are resolved against
//   ctx.path  schema objects being converted right now (cycle detection)
//   depth     how many schemas enclose this one
//   indent    nesting level of object literals: the properties of an object printed here
//             are indented by 4 * (indent + 1) spaces. Only a property (or index
//             signature) moves one level in; unions, arrays and `$ref`s keep the level.
function convert(schema, ctx, depth, indent) {
  // Boolean schemas are answered even past the depth limit.
  if (typeof schema === 'boolean') return schema ? 'unknown' : 'never';
  if (depth >= MAX_DEPTH) return 'unknown';
  // A schema that contains itself (through $ref or a plain object cycle) would never end.
  const isObject = schema !== null && typeof schema === 'object';
  if (isObject && ctx.path.has(schema)) return 'unknown';
  if (isObject) ctx.path.add(schema);
  try {
    // A null/undefined schema throws here (reading `$ref`), as it does in Cloudflare.
    const body = convertBody(schema, ctx, depth, indent);
    if (body === null) return 'null';
    return withNullable(body, schema);
  } finally {
    if (isObject) ctx.path.delete(schema);
  }
}

// OpenAPI's `nullable: true` adds `| null`, except to `unknown`/`never`, where it would
// only add noise.
function withNullable(body, schema) {
  if (schema.nullable === true && body !== 'unknown' && body !== 'never') return `${body} | null`;
  return body;
}

// The type for one schema object, before `nullable` is applied. Returns null (not the string)
// for `type: "null"`, which must never get a second `| null`. The order of the checks
// decides which keyword wins when several are present: $ref, anyOf, oneOf, allOf, enum,
// const, then type.
function convertBody(schema, ctx, depth, indent) {
  const child = (sub) => convert(sub, ctx, depth + 1, indent);

  if (schema.$ref) {
    const target = resolveRef(schema.$ref, ctx.root);
    return target === undefined ? 'unknown' : child(target);
  }
  // These keywords are only tested for truthiness; a non-array value throws in `.map`.
  if (schema.anyOf) return schema.anyOf.map(child).join(' | ');
  if (schema.oneOf) return schema.oneOf.map(child).join(' | ');
  if (schema.allOf) return schema.allOf.map(child).join(' & ');
  if (schema.enum) {
    if (schema.enum.length === 0) return 'never';
    return schema.enum.map(literal).join(' | ');
  }
  if (schema.const !== undefined) return literal(schema.const);

  const type = schema.type;
  if (type === 'string') return 'string';
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'null') return null;
  if (type === 'array') return convertArray(schema, child);
  // `properties` alone makes an object, whatever else `type` says (other than the names
  // handled above).
  if (type === 'object' || schema.properties) return convertObject(schema, ctx, depth, indent);
  if (Array.isArray(type)) return type.map(simpleType).join(' | ');
  return 'unknown';
}

// Arrays: a tuple for `prefixItems` (2020-12) or array-valued `items` (draft 4–2019), else
// `T[]`. An item type that is itself a union is not parenthesised (Cloudflare's output).
function convertArray(schema, child) {
  if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map(child).join(', ')}]`;
  if (Array.isArray(schema.items)) return `[${schema.items.map(child).join(', ')}]`;
  // Only a truthy `items` is converted: `items: false` gives `unknown[]`, not `never[]`.
  if (schema.items) return `${child(schema.items)}[]`;
  return 'unknown[]';
}

// Objects become a multi-line literal, one member per line.
function convertObject(schema, ctx, depth, indent) {
  const pad = '    '.repeat(indent + 1);
  const member = (sub) => convert(sub, ctx, depth + 1, indent + 1);
  // `new Set` of a string splits it into characters, as Cloudflare does.
  const required = new Set(schema.required || []);
  const lines = [];

  for (const [name, prop] of Object.entries(schema.properties || {})) {
    // The JSDoc is read before the property's type is converted; a null property schema
    // throws here even past the depth limit.
    const { description, format } = prop;
    if (description && format) {
      lines.push(`${pad}/**`, `${pad} * ${escapeComment(oneLine(description))}`,
        `${pad} * @format ${escapeComment(format)}`, `${pad} */`);
    } else if (description) {
      lines.push(`${pad}/** ${escapeComment(oneLine(description))} */`);
    } else if (format) {
      // `format` is not flattened to one line, only kept from closing the comment.
      lines.push(`${pad}/** @format ${escapeComment(format)} */`);
    }
    const key = IDENTIFIER.test(name) ? name : quote(name);
    lines.push(`${pad}${key}${required.has(name) ? '' : '?'}: ${member(prop)};`);
  }

  const extra = schema.additionalProperties;
  if (extra) lines.push(`${pad}[key: string]: ${extra === true ? 'unknown' : member(extra)};`);

  if (lines.length === 0) return extra === false ? '{}' : 'Record<string, unknown>';
  return `{\n${lines.join('\n')}\n${'    '.repeat(indent)}}`;
}

/**
 * `type <typeName> = <TypeScript type for schema>`.
 * @param {object|boolean} schema a JSON Schema; its local `$ref`s resolve against itself
 * @param {string} typeName
 * @returns {string}
 */
function jsonSchemaToType(schema, typeName) {
  const ctx = { root: schema, path: new Set() };
  return `type ${typeName} = ${convert(schema, ctx, 0, 0)}`;
}

// "get_weather" → "GetWeather", "_3d_render" → "_3dRender": an underscore before a lower-case
// letter is dropped and the letter upper-cased; then the first character is upper-cased.
function pascalCase(name) {
  const camel = name.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

// One member of the `codemode` declaration with its JSDoc block (tab-indented).
function declaration(safe, typeName, docLines) {
  return [
    '\t/**',
    ...docLines.map((line) => `\t * ${line}`),
    '\t */',
    `\t${safe}: (input: ${typeName}Input) => Promise<${typeName}Output>;`,
  ].join('\n');
}

/**
 * Declarations for a record of tools, `{ [name]: { description?, inputSchema, outputSchema? } }`:
 * the Input/Output type aliases, then `declare const codemode: { … }`.
 * @param {Record<string, {description?: string, inputSchema: unknown, outputSchema?: unknown}>} tools
 * @returns {string}
 */
function generateTypesFromJsonSchema(tools) {
  const aliases = [];
  const members = [];

  for (const [name, tool] of Object.entries(tools)) {
    const safe = sanitizeToolName(name);
    const typeName = pascalCase(safe);
    try {
      const input = jsonSchemaToType(tool.inputSchema, `${typeName}Input`);
      const output = tool.outputSchema
        ? jsonSchemaToType(tool.outputSchema, `${typeName}Output`)
        : `type ${typeName}Output = unknown`;
      // Pushed before the JSDoc is built: if that throws (a non-string description), the
      // catch below adds a second, `unknown` pair of aliases, exactly as Cloudflare does.
      // Each alias is trimmed, so an empty union gives `type XInput =` without a trailing
      // space (jsonSchemaToType itself keeps the space).
      aliases.push(input.trim(), output.trim());

      const description = tool.description?.trim();
      const docLines = [escapeComment(description ? oneLine(description) : name)];
      // Only the top-level properties of the input schema are documented, as written (no
      // `$ref` or combinator is followed).
      for (const [field, prop] of Object.entries(tool.inputSchema.properties || {})) {
        if (prop?.description) {
          docLines.push(escapeComment(oneLine(`@param input.${field} - ${prop.description}`)));
        }
      }
      members.push(declaration(safe, typeName, docLines));
    } catch {
      // A tool whose schema cannot be converted is still callable; its types are unknown
      // and its doc is just its name.
      aliases.push(`type ${typeName}Input = unknown`, `type ${typeName}Output = unknown`);
      members.push(declaration(safe, typeName, [escapeComment(name)]));
    }
  }

  if (members.length === 0) return 'declare const codemode: {}';
  return `${aliases.join('\n')}\n\ndeclare const codemode: {\n${members.join('\n\n')}\n}`.trim();
}

module.exports = { jsonSchemaToType, generateTypesFromJsonSchema, pascalCase, escapeComment, oneLine };
