'use strict';
// OpenApiConnector (docs/cloudflare-compat.md §8.3): one tool per operation of an OpenAPI
// document, plus the `request` escape hatch; the derivation is cached per spec object.

const { sanitizeToolName } = require('../cloudflare/names.js');
const { isObject } = require('../util.js');
const { invalidArgument } = require('../errors.js');
const { CodemodeConnector, className, hasOwn, setOwn } = require('./base.js');

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];
const OPENAPI_RESERVED = new Set(['request', 'spec']);

const REQUEST_TOOL_DESCRIPTION = 'Escape hatch: perform an authenticated request to a path (and optional method, params, body, headers). Prefer the per-operation tools.';
const SPEC_TOOL_DESCRIPTION = 'Return the raw OpenAPI document.';

// Operations derived from one spec object, kept as long as the object lives.
const derivedOperations = new WeakMap();

function operationsOf(spec) {
  if (!isObject(spec)) return [];
  let operations = derivedOperations.get(spec);
  if (!operations) {
    operations = deriveOperations(spec);
    derivedOperations.set(spec, operations);
  }
  return operations;
}

// Paths in document order, methods in HTTP_METHODS order; a name that is reserved or already
// taken skips the operation, with a warning on the host console.
function deriveOperations(doc) {
  const operations = [];
  const used = new Set();
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const name = sanitizeToolName(operation.operationId ? operation.operationId : `${method}_${path}`);
      const reserved = OPENAPI_RESERVED.has(name);
      if (reserved || used.has(name)) {
        console.warn(`[OpenApiConnector] operation ${method.toUpperCase()} ${path} maps to tool name "${name}", which is ${reserved ? 'reserved' : 'already used'} — skipping. Set a unique operationId to expose it.`);
        continue;
      }
      used.add(name);
      operations.push(deriveOperation(doc, path, method, operation, name));
    }
  }
  return operations;
}

function deriveOperation(doc, path, method, operation, name) {
  const parameters = (Array.isArray(operation.parameters) ? operation.parameters : [])
    .filter((p) => isObject(p) && !!p.name);
  const requestBody = isObject(operation.requestBody) ? operation.requestBody : undefined;
  const jsonContent = requestBody && isObject(requestBody.content) ? requestBody.content['application/json'] : undefined;
  const bodySchema = inlineRefs(isObject(jsonContent) ? jsonContent.schema : undefined, doc);

  const properties = {};
  const required = [];
  for (const param of parameters) {
    setOwn(properties, param.name, withDescription(inlineRefs(param.schema, doc) ?? {}, param.description));
    if (param.required) required.push(param.name);
  }
  if (bodySchema !== undefined) {
    properties.body = bodySchema;
    if (requestBody.required === true) required.push('body');
  }
  const inputSchema = { type: 'object', properties };
  if (required.length > 0) inputSchema.required = required;

  return {
    name,
    description: operation.summary || operation.description || `${method.toUpperCase()} ${path}`,
    inputSchema,
    path,
    method,
    parameters,
  };
}

// A parameter's description is copied onto its schema when the schema has none.
function withDescription(schema, description) {
  if (!description || !isObject(schema)) return schema;
  return { ...schema, description: schema.description ?? description };
}

// Inlines local `#/…` references, recursively through properties, items, additionalProperties
// and allOf/oneOf/anyOf. An external, unresolvable or cyclic reference becomes an open object;
// a reference's sibling keywords are dropped. `seen` holds the references on the current path.
function inlineRefs(schema, root, seen = new Set()) {
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (!ref.startsWith('#/') || seen.has(ref)) return { type: 'object' };
    const target = jsonPointer(root, ref.slice(2).split('/'));
    if (!isObject(target) && typeof target !== 'boolean') return { type: 'object' };
    return inlineRefs(target, root, new Set(seen).add(ref));
  }
  const out = { ...schema };
  if (schema.properties) {
    out.properties = {};
    for (const [key, value] of Object.entries(schema.properties)) {
      setOwn(out.properties, key, inlineRefs(value, root, seen) ?? {});
    }
  }
  if (schema.items && !Array.isArray(schema.items)) out.items = inlineRefs(schema.items, root, seen);
  if (isObject(schema.additionalProperties)) {
    out.additionalProperties = inlineRefs(schema.additionalProperties, root, seen);
  }
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(schema[key])) out[key] = schema[key].map((s) => inlineRefs(s, root, seen) ?? {});
  }
  return out;
}

function jsonPointer(root, segments) {
  let current = root;
  for (const segment of segments) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

// A derived tool's input → the `request()` options: path parameters substituted (URI-encoded),
// query parameters → `params`, header parameters → `headers` (as strings), `body` when given.
function toRequest(op, args) {
  const input = isObject(args) ? args : {};
  let path = op.path;
  const params = {};
  const headers = {};
  for (const param of op.parameters) {
    const value = input[param.name];
    if (value === undefined) continue;
    if (param.in === 'path') path = path.replace(`{${param.name}}`, encodeURIComponent(String(value)));
    else if (param.in === 'query') setOwn(params, param.name, value);
    else if (param.in === 'header') setOwn(headers, param.name, String(value));
  }
  const request = { path, method: op.method.toUpperCase() };
  if (Object.keys(params).length > 0) request.params = params;
  if ('body' in input) request.body = input.body;
  if (Object.keys(headers).length > 0) request.headers = headers;
  return request;
}

/**
 * A connector over an OpenAPI document. Subclasses implement `spec()` (the document, or a
 * promise of it) and `request({ path, method?, params?, body?, headers? })` (the authenticated
 * HTTP call); `exposeSpec()` (default false) adds a `spec` tool returning the document.
 *
 * Tools: `spec` (when exposed), `request` (the escape hatch, passing its input straight to
 * `request()`), then one per operation, named by its sanitized operationId (else
 * `<method>_<path>`), taking `{ ...parameters, body? }`. The derivation is cached per spec object.
 */
class OpenApiConnector extends CodemodeConnector {
  spec() {
    throw invalidArgument(`${className(this)} must implement spec() — it returns the OpenAPI document`);
  }

  request(_options) {
    throw invalidArgument(`${className(this)} must implement request({ path, method, params, body, headers })`);
  }

  exposeSpec() {
    return false;
  }

  async tools() {
    const operations = operationsOf(await this.spec());
    const tools = {};
    if (this.exposeSpec()) {
      tools.spec = {
        description: SPEC_TOOL_DESCRIPTION,
        inputSchema: { type: 'object', properties: {} },
        execute: () => this.spec(),
      };
    }
    tools.request = {
      description: REQUEST_TOOL_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          method: { type: 'string' },
          params: { type: 'object', additionalProperties: true },
          body: {},
          headers: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['path'],
      },
      execute: (args) => this.request(args),
    };
    for (const op of operations) {
      setOwn(tools, op.name, {
        description: op.description,
        inputSchema: op.inputSchema,
        execute: (args) => this.request(toRequest(op, args)),
      });
    }
    return tools;
  }
}

module.exports = { OpenApiConnector };
