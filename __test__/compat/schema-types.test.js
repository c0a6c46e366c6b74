'use strict';
// jsonSchemaToType / generateTypesFromJsonSchema (docs/cloudflare-compat.md §13.2, §13.3).
//
// Two kinds of test: fixed expectations for each rule of the spec (these hold without
// Cloudflare's package), and a string-for-string comparison with @cloudflare/codemode 0.5.6
// (a devDependency, used as a black box) over a corpus of hand-written and generated schemas.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const { jsonSchemaToType, generateTypesFromJsonSchema } = require('../../lib/cloudflare/schema-types.js');

// Cloudflare's chunk exports these under minified names: n = jsonSchemaToType,
// t = generateTypesFromJsonSchema.
const CF_CHUNK = path.join(__dirname, '..', '..', 'node_modules', '@cloudflare', 'codemode', 'dist', 'json-schema-types-D_m9tVnI.js');
const loadOracle = async () => {
  const cf = await import(pathToFileURL(CF_CHUNK).href);
  assert.equal(typeof cf.n, 'function');
  assert.equal(typeof cf.t, 'function');
  return { jsonSchemaToType: cf.n, generateTypesFromJsonSchema: cf.t };
};

const S = { type: 'string' };
const N = { type: 'number' };
const T = (schema) => jsonSchemaToType(schema, 'T');
// Expected multi-line output, one argument per line.
const lines = (...l) => l.join('\n');

// ---------------------------------------------------------------------------------------
// §13.2 rule by rule

test('boolean schemas, empty and primitive schemas', () => {
  assert.equal(T(true), 'type T = unknown');
  assert.equal(T(false), 'type T = never');
  assert.equal(T({}), 'type T = unknown');
  assert.equal(T(5), 'type T = unknown');
  assert.equal(jsonSchemaToType({ type: 'string' }, 'Foo<Bar>'), 'type Foo<Bar> = string');
});

test('primitive types', () => {
  assert.equal(T(S), 'type T = string');
  assert.equal(T(N), 'type T = number');
  assert.equal(T({ type: 'integer' }), 'type T = number');
  assert.equal(T({ type: 'boolean' }), 'type T = boolean');
  assert.equal(T({ type: 'null' }), 'type T = null');
  assert.equal(T({ type: 'foo' }), 'type T = unknown');
});

test('type arrays map member by member, by name only', () => {
  assert.equal(T({ type: ['string', 'null'] }), 'type T = string | null');
  assert.equal(T({ type: ['integer', 'boolean', 'array', 'object', 'x'] }),
    'type T = number | boolean | unknown[] | Record<string, unknown> | unknown');
  // `items` is not used for an "array" member.
  assert.equal(T({ type: ['array', 'null'], items: S }), 'type T = unknown[] | null');
  assert.equal(T({ type: [] }), 'type T = ');
  // `properties` wins over a type array.
  assert.equal(T({ type: ['object', 'null'], properties: { a: S } }), 'type T = {\n    a?: string;\n}');
});

test('enum and const literals', () => {
  assert.equal(T({ enum: [] }), 'type T = never');
  assert.equal(T({ enum: ['a"b', 'q\\', 'n\nr\rt\t', '\u2028\u2029', '\u0000\u001f\u007f\b', "it's"] }),
    'type T = "a\\"b" | "q\\\\" | "n\\nr\\rt\\t" | "\\u2028\\u2029" | "\\u0000\\u001f\\u007f\\u0008" | "it\'s"');
  assert.equal(T({ enum: [1, null, true, { x: [1] }, [1, 'a'], 1.5] }), 'type T = 1 | null | true | {"x":[1]} | [1,"a"] | 1.5');
  assert.equal(T({ enum: [NaN, undefined, 10n] }), 'type T = NaN | undefined | 10');
  assert.equal(T({ const: 'x' }), 'type T = "x"');
  assert.equal(T({ const: { a: 1 } }), 'type T = {"a":1}');
  assert.equal(T({ const: null }), 'type T = null');
  assert.equal(T({ const: 0 }), 'type T = 0');
  assert.equal(T({ const: undefined, type: 'string' }), 'type T = string');
  assert.equal(T({ const: { toJSON() { return undefined; } } }), 'type T = unknown');
  // Precedence: enum over const over type.
  assert.equal(T({ enum: ['x'], const: 'y', type: 'number' }), 'type T = "x"');
  assert.equal(T({ const: 1, type: 'string' }), 'type T = 1');
});

test('anyOf / oneOf / allOf and their precedence', () => {
  assert.equal(T({ anyOf: [S, N] }), 'type T = string | number');
  assert.equal(T({ oneOf: [S, { type: 'null' }] }), 'type T = string | null');
  assert.equal(T({ allOf: [{ properties: { a: S } }, { properties: { b: S } }] }),
    'type T = {\n    a?: string;\n} & {\n    b?: string;\n}');
  assert.equal(T({ anyOf: [S], oneOf: [N], allOf: [N], enum: [1] }), 'type T = string');
  assert.equal(T({ oneOf: [S], allOf: [N] }), 'type T = string');
  assert.equal(T({ allOf: [N], enum: [1] }), 'type T = number');
  assert.equal(T({ anyOf: [] }), 'type T = ');
});

test('arrays and tuples', () => {
  assert.equal(T({ type: 'array' }), 'type T = unknown[]');
  assert.equal(T({ type: 'array', items: S }), 'type T = string[]');
  assert.equal(T({ type: 'array', items: [S, N] }), 'type T = [string, number]');
  assert.equal(T({ type: 'array', prefixItems: [S], items: N }), 'type T = [string]');
  assert.equal(T({ type: 'array', prefixItems: [] }), 'type T = []');
  assert.equal(T({ type: 'array', items: false }), 'type T = unknown[]');
  assert.equal(T({ type: 'array', prefixItems: [true, false] }), 'type T = [unknown, never]');
  // Unions are not parenthesised (Cloudflare's output, kept).
  assert.equal(T({ type: 'array', items: { type: 'string', nullable: true } }), 'type T = string | null[]');
  // Tuples need `type: "array"`.
  assert.equal(T({ items: [S] }), 'type T = unknown');
});

test('objects: indentation, optional members, index signatures', () => {
  assert.equal(T({ type: 'object' }), 'type T = Record<string, unknown>');
  assert.equal(T({ type: 'object', properties: {} }), 'type T = Record<string, unknown>');
  assert.equal(T({ type: 'object', additionalProperties: false }), 'type T = {}');
  assert.equal(T({ type: 'object', additionalProperties: true }), 'type T = {\n    [key: string]: unknown;\n}');
  assert.equal(T({ type: 'string', properties: { a: S } }), 'type T = string');
  assert.equal(T({
    type: 'object',
    properties: { a: S, b: { type: 'object', properties: { c: { type: 'array', items: { type: 'object', properties: { d: N } } } }, required: ['c'] } },
    required: ['a'],
    additionalProperties: { type: 'object', properties: { z: S } },
  }), lines(
    'type T = {',
    '    a: string;',
    '    b?: {',
    '        c: {',
    '            d?: number;',
    '        }[];',
    '    };',
    '    [key: string]: {',
    '        z?: string;',
    '    };',
    '}'));
  // `required` is turned into a Set: a string counts as its characters.
  assert.equal(T({ properties: { a: {}, ab: {} }, required: 'ab' }), 'type T = {\n    a: unknown;\n    ab?: unknown;\n}');
});

test('property names are quoted and escaped when not identifiers', () => {
  const props = {};
  for (const name of ['ok', '$a', '_1', '1a', 'a-b', '', 'class', 'é', 'a"b\\c', 'l\nr\rt\t', '\u2028', '\u0001\u007f']) props[name] = {};
  assert.equal(T({ properties: props }), lines(
    'type T = {',
    '    ok?: unknown;',
    '    $a?: unknown;',
    '    _1?: unknown;',
    '    "1a"?: unknown;',
    '    "a-b"?: unknown;',
    '    ""?: unknown;',
    '    class?: unknown;',
    '    "é"?: unknown;',
    '    "a\\"b\\\\c"?: unknown;',
    '    "l\\nr\\rt\\t"?: unknown;',
    '    "\\u2028"?: unknown;',
    '    "\\u0001\\u007f"?: unknown;',
    '}'));
});

test('JSDoc lines for description and format', () => {
  assert.equal(T({
    properties: {
      a: { description: 'two\nlines\r\nand */ end' },
      b: { format: 'uuid' },
      c: { description: 'When', format: 'date-time' },
      d: { description: '' },
      e: { format: 'x*/y\nz' },
    },
  }), lines(
    'type T = {',
    '    /** two lines and *\\/ end */',
    '    a?: unknown;',
    '    /** @format uuid */',
    '    b?: unknown;',
    '    /**',
    '     * When',
    '     * @format date-time',
    '     */',
    '    c?: unknown;',
    '    d?: unknown;',
    '    /** @format x*\\/y\nz */',
    '    e?: unknown;',
    '}'));
  // A non-string description is an error, as in Cloudflare.
  assert.throws(() => T({ properties: { a: { description: 5 } } }), TypeError);
});

test('OpenAPI nullable', () => {
  assert.equal(T({ type: 'string', nullable: true }), 'type T = string | null');
  assert.equal(T({ type: 'object', nullable: true }), 'type T = Record<string, unknown> | null');
  assert.equal(T({ enum: ['a'], nullable: true }), 'type T = "a" | null');
  assert.equal(T({ nullable: true }), 'type T = unknown');
  assert.equal(T({ enum: [], nullable: true }), 'type T = never');
  assert.equal(T({ type: 'null', nullable: true }), 'type T = null');
  assert.equal(T({ const: null, nullable: true }), 'type T = null | null');
  assert.equal(T({ type: 'string', nullable: 'true' }), 'type T = string');
});

test('$ref: root, JSON pointers, unescaping, unresolvable', () => {
  const schema = {
    type: 'object',
    properties: {
      a: { $ref: '#/$defs/A' },
      b: { $ref: '#/$defs/a~1b~0c' },
      c: { $ref: '#/$defs/x~01' },
      d: { $ref: '#/$defs/missing' },
      e: { $ref: 'other.json#/A' },
      f: { $ref: '#/$defs/list/0' },
      g: { $ref: '#/$defs/toString' },
      h: { $ref: '#/$defs/flag' },
      i: { $ref: '#/$defs/A', nullable: true },
      j: { $ref: '#/$defs/x%20y' },
    },
    $defs: { A: S, 'a/b~c': N, 'x~1': { type: 'boolean' }, 'x/': N, list: [{ type: 'null' }], flag: false, 'x%20y': S },
  };
  assert.equal(T(schema), lines(
    'type T = {',
    '    a?: string;',
    '    b?: number;',
    '    c?: boolean;',
    '    d?: unknown;',
    '    e?: unknown;',
    '    f?: null;',
    '    g?: unknown;',
    '    h?: unknown;',
    '    i?: string | null;',
    '    j?: string;',
    '}'));
  assert.equal(T({ $ref: '#/defs/o', defs: { o: { properties: { x: S } } } }), 'type T = {\n    x?: string;\n}');
  // The pointer reads plain properties (inherited ones too) but only steps through objects.
  const fn = () => 1;
  fn.schema = S;
  assert.equal(T({ $ref: '#/defs/P', defs: Object.create({ P: N }) }), 'type T = number');
  assert.equal(T({ anyOf: [{ $ref: '#/d/fn/schema' }, { $ref: '#/d/s/length' }, { $ref: '#/d/n/x' }], d: { fn, s: 'str', n: null } }),
    'type T = unknown | unknown | unknown');
  assert.throws(() => T({ $ref: 5 }), TypeError);
});

test('cycles become unknown, shared subschemas do not', () => {
  assert.equal(T({ type: 'object', properties: { value: N, next: { $ref: '#' } } }),
    'type T = {\n    value?: number;\n    next?: unknown;\n}');
  assert.equal(T({ $ref: '#/d/A', d: { A: { type: 'array', items: { $ref: '#/d/A' } } } }), 'type T = unknown[]');
  assert.equal(T({ $ref: '#/d/A', d: { A: { $ref: '#/d/B' }, B: { $ref: '#/d/A' } } }), 'type T = unknown');
  const self = { type: 'array' };
  self.items = self;
  assert.equal(T(self), 'type T = unknown[]');
  assert.equal(T({ anyOf: [S, S, { type: 'array', items: S }] }), 'type T = string | string | string[]');
});

test('depth limit of 20', () => {
  const nest = (n, leaf) => { let s = leaf; for (let i = 0; i < n; i++) s = { type: 'array', items: s }; return s; };
  assert.equal(T(nest(19, S)), `type T = string${'[]'.repeat(19)}`);
  assert.equal(T(nest(20, S)), `type T = unknown${'[]'.repeat(20)}`);
  assert.equal(T(nest(25, S)), `type T = unknown${'[]'.repeat(20)}`);
  // Boolean schemas are still answered at the limit; type-array members are not counted.
  assert.equal(T(nest(19, { type: 'array', prefixItems: [false, S] })), `type T = [never, unknown]${'[]'.repeat(19)}`);
  assert.equal(T(nest(19, { type: ['string', 'null'] })), `type T = string | null${'[]'.repeat(19)}`);
  // Each $ref hop counts as a level.
  const defs = {};
  for (let i = 0; i < 25; i++) defs['d' + i] = { $ref: '#/defs/d' + (i + 1) };
  defs.d25 = S;
  assert.equal(T({ $ref: '#/defs/d7', defs }), 'type T = string');
  assert.equal(T({ $ref: '#/defs/d6', defs }), 'type T = unknown');
});

// ---------------------------------------------------------------------------------------
// §13.3 layout

test('generateTypesFromJsonSchema: empty record', () => {
  assert.equal(generateTypesFromJsonSchema({}), 'declare const codemode: {}');
});

test('generateTypesFromJsonSchema: layout, names and JSDoc', () => {
  const out = generateTypesFromJsonSchema({
    'get-weather': {
      description: ' Get the weather\nfor a city */ now ',
      inputSchema: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name' }, units: { enum: ['c', 'f'] }, days: { type: 'integer', description: 'How many\r\ndays' } },
        required: ['city'],
      },
      outputSchema: { type: 'object', properties: { temp: N } },
    },
    class: { inputSchema: { type: 'object' } },
    '3d.render': { description: '   ', inputSchema: {} },
  });
  assert.equal(out, lines(
    'type GetWeatherInput = {',
    '    /** City name */',
    '    city: string;',
    '    units?: "c" | "f";',
    '    /** How many days */',
    '    days?: number;',
    '}',
    'type GetWeatherOutput = {',
    '    temp?: number;',
    '}',
    'type Class_Input = Record<string, unknown>',
    'type Class_Output = unknown',
    'type _3dRenderInput = unknown',
    'type _3dRenderOutput = unknown',
    '',
    'declare const codemode: {',
    '\t/**',
    '\t * Get the weather for a city *\\/ now',
    '\t * @param input.city - City name',
    '\t * @param input.days - How many days',
    '\t */',
    '\tget_weather: (input: GetWeatherInput) => Promise<GetWeatherOutput>;',
    '',
    '\t/**',
    '\t * class',
    '\t */',
    '\tclass_: (input: Class_Input) => Promise<Class_Output>;',
    '',
    '\t/**',
    '\t * 3d.render',
    '\t */',
    '\t_3d_render: (input: _3dRenderInput) => Promise<_3dRenderOutput>;',
    '}'));
});

test('generateTypesFromJsonSchema: PascalCase type names', () => {
  const names = { _x: 'X', __a: '_A', a__b: 'A_B', a_B: 'A_B', a_b1_c2: 'AB1C2', x_y_: 'XY_', $a: '$a', 'a b-c': 'ABC' };
  for (const [name, type] of Object.entries(names)) {
    const out = generateTypesFromJsonSchema({ [name]: { inputSchema: {} } });
    assert.equal(out.split('\n')[0], `type ${type}Input = unknown`, name);
  }
});

test('generateTypesFromJsonSchema: only described top-level input properties get @param', () => {
  const out = generateTypesFromJsonSchema({
    t: {
      description: 'tool',
      inputSchema: { type: 'string', properties: { p: { description: 'pd' }, q: null, r: { description: '' }, 'k*/\nx': { description: 'kd' } } },
    },
  });
  assert.equal(out, lines(
    'type TInput = string',
    'type TOutput = unknown',
    '',
    'declare const codemode: {',
    '\t/**',
    '\t * tool',
    '\t * @param input.p - pd',
    '\t * @param input.k*\\/ x - kd',
    '\t */',
    '\tt: (input: TInput) => Promise<TOutput>;',
    '}'));
});

test('generateTypesFromJsonSchema: a failing tool degrades to unknown', () => {
  // The input schema throws before any alias is written: one unknown pair, name as the doc.
  assert.equal(generateTypesFromJsonSchema({ 'bad*/tool': { description: 'never shown', inputSchema: null } }), lines(
    'type BadtoolInput = unknown',
    'type BadtoolOutput = unknown',
    '',
    'declare const codemode: {',
    '\t/**',
    '\t * bad*\\/tool',
    '\t */',
    '\tbadtool: (input: BadtoolInput) => Promise<BadtoolOutput>;',
    '}'));
  // The description throws after the aliases were written: Cloudflare then adds a second pair.
  assert.equal(generateTypesFromJsonSchema({ a: { description: 5, inputSchema: { type: 'string' } }, b: { inputSchema: N } }), lines(
    'type AInput = string',
    'type AOutput = unknown',
    'type AInput = unknown',
    'type AOutput = unknown',
    'type BInput = number',
    'type BOutput = unknown',
    '',
    'declare const codemode: {',
    '\t/**',
    '\t * a',
    '\t */',
    '\ta: (input: AInput) => Promise<AOutput>;',
    '',
    '\t/**',
    '\t * b',
    '\t */',
    '\tb: (input: BInput) => Promise<BOutput>;',
    '}'));
  // Aliases are trimmed; an output schema is used only when truthy.
  assert.equal(generateTypesFromJsonSchema({ e: { description: 'x', inputSchema: { anyOf: [] }, outputSchema: false } }).split('\n').slice(0, 2).join('\n'),
    'type EInput =\ntype EOutput = unknown');
  assert.throws(() => generateTypesFromJsonSchema(null), TypeError);
});

// ---------------------------------------------------------------------------------------
// Comparison with Cloudflare's implementation

// Hand-written corpus: every rule above plus realistic MCP / OpenAPI / zod-style schemas.
function buildCorpus() {
  const S = { type: 'string' }, N = { type: 'number' };
  const nest = (n, leaf, wrap) => { let s = leaf; for (let i = 0; i < n; i++) s = wrap(s); return s; };
  const arr = (s) => ({ type: 'array', items: s });
  const obj = (s) => ({ type: 'object', properties: { a: s }, required: ['a'] });
  const any = (s) => ({ anyOf: [s, { type: 'null' }] });
  const selfArr = { type: 'array' }; selfArr.items = selfArr;
  const selfObj = { type: 'object', properties: {} }; selfObj.properties.me = selfObj; selfObj.properties.list = { type: 'array', items: selfObj };
  const shared = { type: 'object', properties: { x: S } };
  const weirdNames = {};
  for (const n of ['a', '_a', '$a', 'a1', '1a', 'a-b', 'a b', '', 'class', 'default', 'ünï', 'a\\b', 'a"b', "a'b", 'a\nb', 'a\rb', 'a\tb',
    'a\u2028b', 'a\u2029b', 'a\u0000b', 'a\u001fb', 'a\u007fb', 'a\u0080b', 'a\u009fb', 'a\bb', 'a\fb', 'a\vb', '\ud800', '😀', 'constructor',
    'toString', '0', '123', '-1', '1.5', 'a.b', '`x`', '${x}', '*/', 'a*/b']) weirdNames[n] = { type: 'string' };
  const chain = {}; for (let i = 0; i < 25; i++) chain['d' + i] = { $ref: '#/defs/d' + (i + 1) }; chain.d25 = { type: 'string' };

  const schemas = [
    ['true', true], ['false', false], ['empty', {}], ['number primitive', 5], ['string primitive', 'x'], ['array as schema', []],
    ['string', S], ['number', N], ['integer', { type: 'integer' }], ['boolean', { type: 'boolean' }], ['null', { type: 'null' }],
    ['unknown type', { type: 'foo' }], ['capital type', { type: 'String' }],
    ['object bare', { type: 'object' }], ['object closed', { type: 'object', additionalProperties: false }],
    ['object empty props', { type: 'object', properties: {} }], ['object empty props closed', { type: 'object', properties: {}, additionalProperties: false }],
    ['props without type', { properties: { a: S } }], ['props with string type', { type: 'string', properties: { a: S } }],
    ['props with unknown type', { type: 'foo', properties: { a: S } }], ['props with null type', { type: 'null', properties: { a: S } }],
    ['props with array type', { type: 'array', properties: { a: S } }], ['props with type array', { type: ['string', 'null'], properties: { a: S } }],
    ['props is string', { properties: 'ab' }], ['props is array', { properties: [] }], ['props null', { type: 'object', properties: null }],
    ['props 0', { properties: 0 }],
    ['required mixed', { type: 'object', properties: { a: S, b: N, c: { type: 'boolean' } }, required: ['a', 'c'] }],
    ['required string', { type: 'object', properties: { a: {}, ab: {} }, required: 'ab' }],
    ['required numbers', { type: 'object', properties: { 1: S, a: S }, required: [1] }],
    ['required falsy', { type: 'object', properties: { a: S }, required: 0 }],
    ['required null', { type: 'object', properties: { a: S }, required: null }],
    ['ap true', { type: 'object', additionalProperties: true }], ['ap {}', { type: 'object', additionalProperties: {} }],
    ['ap schema', { type: 'object', additionalProperties: N }], ['ap nullable', { type: 'object', additionalProperties: { type: 'string', nullable: true } }],
    ['ap object', { type: 'object', additionalProperties: { type: 'object', properties: { z: S } } }],
    ['ap with props', { type: 'object', properties: { a: S }, additionalProperties: { type: 'object', properties: { z: S } } }],
    ['ap false with props', { type: 'object', properties: { a: S }, additionalProperties: false }],
    ['ap null', { type: 'object', additionalProperties: null }], ['ap 0', { type: 'object', additionalProperties: 0 }],
    ['ap string', { type: 'object', additionalProperties: 'x' }], ['ap array', { type: 'object', additionalProperties: [] }],
    ['ap with description', { type: 'object', properties: { a: { description: 'd', format: 'f' } }, additionalProperties: { description: 'ignored', type: 'string' } }],
    ['weird names', { type: 'object', properties: weirdNames, required: ['a', 'class', '', 'a"b'] }],
    ['__proto__ key', JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"number"}},"required":["__proto__"]}')],
    ['descriptions', { type: 'object', properties: {
      a: { type: 'string', description: 'hi\nthere */ x' }, b: { description: '' }, c: { description: '  spaced  ' },
      d: { description: 'a\r\nb' }, e: { description: 'a\n\nb' }, f: { description: 'a\rb' }, g: { description: 'tab\tand\u2028ls' },
      h: { description: 'a*/b*/' }, i: { description: '/** x' }, j: { description: '**/' }, k: { description: null },
      l: { description: '\n' }, m: { title: 'title only' }, n: { description: 'with default', default: 1, examples: [1] } } }],
    ['formats', { type: 'object', properties: {
      a: { type: 'string', format: 'uuid' }, b: { format: '' }, c: { format: 'a\nb' }, d: { format: '*/' }, e: { format: null },
      f: { type: 'string', format: 'date-time', description: 'When' }, g: { description: 'd', format: 'f\n*/' },
      h: { description: '', format: 'f' }, i: { description: 'd\ne', format: 'f' }, j: { description: '  ', format: 'f' } } }],
    ['nested formats', { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'string', description: 'd', format: 'f' } } } } } } }],
    ['type array', { type: ['string', 'null'] }], ['type array all', { type: ['string', 'null', 'integer', 'boolean', 'array', 'object', 'any'] }],
    ['type array dup', { type: ['string', 'string'] }], ['type array empty', { type: [] }], ['type array junk', { type: [1, ['string'], 'number'] }],
    ['type array array items', { type: ['array', 'null'], items: S }], ['type array object', { type: ['object', 'null'] }],
    ['type array closed object', { type: ['string', 'object'], additionalProperties: false }],
    ['nullable string', { type: 'string', nullable: true }], ['nullable alone', { nullable: true }], ['nullable not true', { type: 'string', nullable: 'yes' }],
    ['nullable 1', { type: 'string', nullable: 1 }], ['nullable null type', { type: 'null', nullable: true }], ['nullable null type array', { type: ['null'], nullable: true }],
    ['nullable type array', { type: ['string', 'number'], nullable: true }], ['nullable anyOf', { anyOf: [S], nullable: true }],
    ['nullable anyOf unknown', { anyOf: [{}], nullable: true }], ['nullable anyOf 2 unknown', { anyOf: [{}, {}], nullable: true }],
    ['nullable enum', { enum: ['a'], nullable: true }], ['nullable empty enum', { enum: [], nullable: true }], ['nullable const null', { const: null, nullable: true }],
    ['nullable empty anyOf', { anyOf: [], nullable: true }], ['nullable empty type array', { type: [], nullable: true }],
    ['nullable object', { type: 'object', properties: { a: S }, nullable: true }], ['nullable bare object', { type: 'object', nullable: true }],
    ['nullable array', { type: 'array', items: S, nullable: true }], ['nullable tuple', { type: 'array', prefixItems: [S, N], nullable: true }],
    ['nullable unknown type', { type: 'foo', nullable: true }],
    ['nullable ref', { $ref: '#/$defs/A', $defs: { A: S }, nullable: true }], ['nullable in ref target', { $ref: '#/$defs/A', $defs: { A: { type: 'string', nullable: true } } }],
    ['nullable both', { $ref: '#/$defs/A', $defs: { A: { type: 'string', nullable: true } }, nullable: true }],
    ['nullable nested object prop', { type: 'object', properties: { a: { type: 'object', properties: { b: S }, nullable: true, description: 'x' } } }],
    ['enum empty', { enum: [] }], ['enum strings', { enum: ['a\\b', 'a"b', "a'b", 'a\nb', 'a\rb', 'a\tb', 'a\u2028b', 'a\u2029b', 'a\u0000b', 'a\u001fb', 'a\u007fb', 'a\u0080b', 'a\bb', '\ud800', '😀', '`${x}`'] }],
    ['enum mixed', { enum: ['a', 1, null, { x: 1 }, [1], true, false, 1.5, -0, 1e21, { 'a b': [1, 'q"'] }] }],
    ['enum js values', { enum: [NaN, Infinity, undefined, 10n, () => 1, new Date(0), { toJSON() { return 'x'; } }, { toJSON() { return undefined; } }, [undefined], new String('s')] }],
    // oxlint-disable-next-line no-sparse-arrays -- a hole in the schema is the case under test
    ['enum sparse', { enum: [, 1] }], ['enum array-like empty', { enum: { length: 0 } }], ['enum falsy', { enum: 0, type: 'string' }], ['enum null', { enum: null, type: 'string' }],
    ['const string', { const: 'x' }], ['const object', { const: { a: 1 } }], ['const null', { const: null }], ['const 0', { const: 0 }], ['const empty', { const: '' }],
    ['const false', { const: false }], ['const undefined', { const: undefined, type: 'string' }], ['const newline', { const: 'a\nb' }], ['const array', { const: [1, 'x'] }],
    ['const function', { const: () => 1 }], ['const toJSON undefined', { const: { toJSON() {} } }], ['const toJSON 5', { const: { toJSON() { return 5; } } }],
    ['enum beats const', { enum: ['x'], const: 'y' }], ['enum beats type', { enum: ['x'], type: 'number' }], ['const beats type', { const: 1, type: 'string' }],
    ['anyOf', { anyOf: [S, N] }], ['oneOf', { oneOf: [S, N, { type: 'null' }] }],
    ['allOf', { allOf: [{ type: 'object', properties: { a: S } }, { type: 'object', properties: { b: S } }] }],
    ['anyOf beats oneOf', { anyOf: [S], oneOf: [N] }], ['oneOf beats allOf', { oneOf: [S], allOf: [N] }], ['anyOf beats allOf', { anyOf: [S], allOf: [N] }],
    ['allOf beats enum', { allOf: [N], enum: [1] }], ['anyOf beats enum', { anyOf: [S], enum: ['x'] }], ['ref beats anyOf', { $ref: '#/d/s', anyOf: [N], d: { s: S } }],
    ['empty anyOf', { anyOf: [] }], ['empty oneOf', { oneOf: [] }], ['empty allOf', { allOf: [] }], ['anyOf falsy', { anyOf: 0, type: 'string' }],
    // oxlint-disable-next-line no-sparse-arrays -- a hole in the schema is the case under test
    ['anyOf sparse', { anyOf: [, S] }], ['anyOf of objects', { anyOf: [shared, { allOf: [shared] }] }],
    ['array bare', { type: 'array' }], ['array of string', { type: 'array', items: S }], ['tuple items', { type: 'array', items: [S, N] }],
    ['tuple prefixItems', { type: 'array', prefixItems: [S] }], ['prefixItems beats items', { type: 'array', prefixItems: [S], items: N }],
    ['prefixItems empty', { type: 'array', prefixItems: [] }], ['items empty array', { type: 'array', items: [] }],
    ['prefixItems object', { type: 'array', prefixItems: {} }], ['prefixItems null', { type: 'array', prefixItems: null, items: S }], ['prefixItems string', { type: 'array', prefixItems: 'ab' }],
    ['items true', { type: 'array', items: true }], ['items false', { type: 'array', items: false }], ['items string', { type: 'array', items: 'x' }],
    ['items null', { type: 'array', items: null }], ['items 0', { type: 'array', items: 0 }], ['prefixItems booleans', { type: 'array', prefixItems: [true, false, {}] }],
    // oxlint-disable-next-line no-sparse-arrays -- a hole in the schema is the case under test
    ['prefixItems sparse', { type: 'array', prefixItems: [, S] }], ['tuple additionalItems', { type: 'array', items: [S], additionalItems: N }],
    ['tuple without type', { items: [S, N] }], ['prefixItems without type', { prefixItems: [S] }],
    ['array of nullable', { type: 'array', items: { type: 'string', nullable: true } }], ['array of union', { type: 'array', items: { anyOf: [S, N] } }],
    ['array of type array', { type: 'array', items: { type: ['string', 'null'] } }], ['array of object', { type: 'array', items: shared }],
    ['array minmax', { type: 'array', items: S, minItems: 2, maxItems: 2 }],
    ['indent through combinators', { type: 'object', properties: { a: { anyOf: [shared, { allOf: [shared] }] }, b: { type: 'array', items: shared }, c: { type: 'array', items: [shared] }, d: { $ref: '#/defs/o' }, e: { type: ['object'] } }, defs: { o: shared } }],
    ['ref root', { $ref: '#', type: 'string' }], ['ref defs', { $ref: '#/$defs/A', $defs: { A: S } }],
    ['ref definitions', { type: 'object', properties: { a: { type: 'string', nullable: true }, b: { $ref: '#/definitions/B' } }, definitions: { B: { type: 'object', properties: { c: { type: 'integer' } } } } }],
    ['ref escapes', { type: 'object', properties: { a: { $ref: '#/definitions/a~1b~0c' }, b: { $ref: '#/definitions/a~01' } }, definitions: { 'a/b~c': S, 'a~1': N, 'a/': { type: 'boolean' } } }],
    ['ref missing', { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }], ['ref external', { type: 'object', properties: { a: { $ref: 'http://x/y' }, b: { $ref: 'other.json#/a' } } }],
    ['ref to property', { type: 'object', properties: { a: { $ref: '#/properties/b' }, b: N } }], ['ref self prop', { type: 'object', properties: { a: { $ref: '#' } } }],
    ['ref slash', { type: 'object', properties: { a: { $ref: '#/' } } }], ['ref array index', { type: 'object', properties: { a: { $ref: '#/items/0' } }, items: [S] }],
    ['ref percent', { type: 'object', properties: { a: { $ref: '#/definitions/x%20y' } }, definitions: { 'x y': S, 'x%20y': N } }],
    ['ref no slash', { type: 'object', properties: { a: { $ref: '#definitions/x' } }, definitions: { x: S } }],
    ['ref empty string', { $ref: '', type: 'string' }], ['ref 0', { $ref: 0, type: 'string' }], ['ref null', { $ref: null, type: 'string' }], ['ref plain', { $ref: 'x', type: 'string' }],
    ['ref trailing slash', { type: 'object', properties: { a: { $ref: '#/definitions/x/' } }, definitions: { x: { '': S } } }],
    ['ref empty segment', { type: 'object', properties: { a: { $ref: '#//x' } }, '': { x: S } }],
    ['ref to non-objects', { type: 'object', properties: { a: { $ref: '#/d/n' }, b: { $ref: '#/d/t' }, c: { $ref: '#/d/f' }, e: { $ref: '#/d/s' }, g: { $ref: '#/d/s/length' }, h: { $ref: '#/d/toString' }, i: { $ref: '#/d/__proto__' }, j: { $ref: '#/d/arr' } }, d: { n: null, t: true, f: false, s: 'str', arr: [S] } }],
    ['ref inherited', { type: 'object', properties: { a: { $ref: '#/d/P' }, b: { $ref: '#/d/__proto__' }, c: { $ref: '#/d/constructor/prototype' } }, d: Object.create({ P: N }) }],
  ['ref through function', { type: 'object', properties: { a: { $ref: '#/d/fn/schema' }, b: { $ref: '#/d/n/x' }, c: { $ref: '#/d/u/x' } }, d: { fn: Object.assign(() => 1, { schema: S }), n: null } }],
  ['ref with description', { type: 'object', properties: { a: { $ref: '#/d/x' }, b: { $ref: '#/d/x', description: 'own' } }, d: { x: { type: 'string', description: 'refdesc', format: 'f' } } }],
    ['recursive array', { $ref: '#/defs/A', defs: { A: { type: 'array', items: { $ref: '#/defs/A' } } } }],
    ['linked list', { type: 'object', properties: { value: N, next: { $ref: '#' } } }],
    ['mutual recursion', { $ref: '#/defs/A', defs: { A: { type: 'object', properties: { b: { $ref: '#/defs/B' } } }, B: { type: 'object', properties: { a: { $ref: '#/defs/A' }, s: S } } } }],
    ['ref to self ref', { defs: { A: { $ref: '#/defs/A' } }, $ref: '#/defs/A' }],
    ['ref loop', { defs: { A: { $ref: '#/defs/B' }, B: { $ref: '#/defs/A' } }, type: 'object', properties: { x: { $ref: '#/defs/A' } } }],
    ['ref to root ref', { type: 'object', properties: { x: { $ref: '#/defs/R' } }, defs: { R: { $ref: '#' } } }],
    ['nullable self ref', { type: 'object', properties: { x: { $ref: '#', nullable: true } } }],
    ['tree', { $ref: '#/$defs/node', $defs: { node: { type: 'object', properties: { name: S, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] } } }],
    ['object cycle array', selfArr], ['object cycle object', selfObj],
    ['shared leaf', { anyOf: [S, S, { type: 'array', items: S }] }], ['shared leaf props', { type: 'object', properties: { a: S, b: S } }],
    ['ref chain 17', { $ref: '#/defs/d8', defs: chain }], ['ref chain 18', { $ref: '#/defs/d7', defs: chain }],
    ['ref chain 19', { $ref: '#/defs/d6', defs: chain }], ['ref chain 20', { $ref: '#/defs/d5', defs: chain }],
  ];
  for (const n of [18, 19, 20, 21, 25]) schemas.push([`arrays ${n}`, nest(n, S, arr)]);
  for (const n of [19, 20, 21]) schemas.push([`anyOf ${n}`, nest(n, S, any)]);
  for (const n of [18, 19, 20, 21]) schemas.push([`objects ${n}`, nest(n, S, obj)]);
  for (const [label, leaf] of [['type array', { type: ['string', 'null'] }], ['object', shared], ['open object', { type: 'object', additionalProperties: true }],
    ['closed object', { type: 'object', additionalProperties: false }], ['empty anyOf', { anyOf: [] }], ['empty enum', { enum: [] }], ['enum', { enum: ['a'] }],
    ['const', { const: 'a' }], ['array', { type: 'array', items: S }], ['tuple', { type: 'array', prefixItems: [] }], ['tuple of false/null', { type: 'array', prefixItems: [false, null] }],
    ['items null', { type: 'array', items: null }], ['ref', { $ref: '#' }]]) schemas.push([`depth 19 + ${label}`, nest(19, leaf, arr)]);
  schemas.push(['depth 20 null', nest(20, null, arr)], ['depth 20 false in object', nest(19, { type: 'object', properties: { a: false, b: true } }, arr)]);

  // Realistic tool schemas.
  const mcpGithub = {
    type: 'object',
    properties: {
      owner: { type: 'string', description: 'Repository owner (username or organization)' },
      repo: { type: 'string', description: 'Repository name' },
      state: { type: 'string', enum: ['open', 'closed', 'all'], description: 'Filter by state', default: 'open' },
      labels: { type: 'array', items: { type: 'string' }, description: 'Filter by labels' },
      since: { type: 'string', format: 'date-time', description: 'Only issues updated at or after this time\n(ISO 8601)' },
      per_page: { type: 'integer', minimum: 1, maximum: 100, description: 'Results per page (max 100)' },
      'sort-by': { type: 'string', enum: ['created', 'updated', 'comments'] },
    },
    required: ['owner', 'repo'],
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  };
  const openapiPet = {
    type: 'object',
    properties: {
      petId: { type: 'integer', format: 'int64', description: 'ID of pet to update' },
      body: { $ref: '#/components/schemas/Pet' },
    },
    required: ['petId', 'body'],
    components: { schemas: {
      Pet: { type: 'object', required: ['name', 'photoUrls'], properties: {
        id: { type: 'integer', format: 'int64' },
        category: { $ref: '#/components/schemas/Category' },
        name: { type: 'string', example: 'doggie' },
        photoUrls: { type: 'array', items: { type: 'string' } },
        tags: { type: 'array', items: { $ref: '#/components/schemas/Tag' }, nullable: true },
        status: { type: 'string', description: 'pet status in the store', enum: ['available', 'pending', 'sold'] },
        owner: { allOf: [{ $ref: '#/components/schemas/Person' }, { type: 'object', properties: { verified: { type: 'boolean' } } }] },
      } },
      Category: { type: 'object', properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' } } },
      Tag: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
      Person: { type: 'object', properties: { name: S, friends: { type: 'array', items: { $ref: '#/components/schemas/Person' } } } },
    } },
  };
  const zodLike = {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1 },
      filters: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } }, from: { type: 'string', format: 'date' } }, additionalProperties: false },
      mode: { anyOf: [{ type: 'string', const: 'fast' }, { type: 'string', const: 'thorough' }] },
      limit: { type: ['integer', 'null'], default: null },
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
      coords: { type: 'array', prefixItems: [N, N], minItems: 2, maxItems: 2 },
      extra: { type: 'object', propertyNames: { pattern: '^x-' }, additionalProperties: {} },
    },
    required: ['query', 'filters', 'mode'],
    additionalProperties: false,
    $schema: 'https://json-schema.org/draft/2020-12/schema',
  };
  const mcpFs = {
    type: 'object',
    properties: {
      edits: { type: 'array', items: { type: 'object', properties: { oldText: { type: 'string', description: 'Text to search for - must match exactly' }, newText: { type: 'string', description: 'Text to replace with' } }, required: ['oldText', 'newText'], additionalProperties: false } },
      path: { type: 'string' },
      dryRun: { type: 'boolean', default: false, description: 'Preview changes using git-style diff format' },
    },
    required: ['path', 'edits'],
    additionalProperties: false,
  };
  schemas.push(['mcp github', mcpGithub], ['openapi pet', openapiPet], ['zod-like', zodLike], ['mcp filesystem', mcpFs]);

  const toolSets = [
    ['empty', {}],
    ['weather', { 'get-weather': { description: 'Get the weather\nfor a city', inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' }, units: { type: 'string', enum: ['c', 'f'] }, days: { type: 'integer', description: 'How many\ndays' } }, required: ['city'] }, outputSchema: { type: 'object', properties: { temp: { type: 'number' } } } }, class: { inputSchema: { type: 'object' } }, '3d.render': { description: '  ', inputSchema: {} } }],
    ['realistic', { list_issues: { description: 'List issues in a GitHub repository.', inputSchema: mcpGithub, outputSchema: { type: 'array', items: { type: 'object', properties: { number: { type: 'integer' }, title: S } } } }, 'pets.update': { description: 'Update a pet */ carefully', inputSchema: openapiPet }, search: { description: 'Search', inputSchema: zodLike }, 'edit_file': { description: ' Make line-based edits to a text file.\r\nReturns a diff. ', inputSchema: mcpFs } }],
    ['shapes', { a: {}, b: { inputSchema: { type: 'string' } }, c: { inputSchema: null }, d: null, e: { inputSchema: { $ref: 5 } }, f: { description: 'x', parameters: { type: 'object', properties: { p: S } } }, g: { description: 'x', inputSchema: { jsonSchema: { type: 'object' } } }, h: 'str', i: { description: 'x', inputSchema: false }, j: { description: 'x', inputSchema: 0 } }],
    ['output shapes', { a: { description: 'x', inputSchema: {}, outputSchema: false }, b: { description: 'x', inputSchema: {}, outputSchema: true }, c: { description: 'x', inputSchema: {}, outputSchema: null }, d: { description: 'x', inputSchema: {}, outputSchema: 0 }, e: { description: 'x', inputSchema: {}, outputSchema: 's' }, f: { description: 'x', inputSchema: {}, outputSchema: { $ref: 5 } } }],
    ['degrade after aliases', { a: { description: 'x', inputSchema: { type: 'object', properties: { p: { type: 'string', description: 'first' } } } }, b: { description: 5, inputSchema: {} }, c: { description: 'z', inputSchema: {} }, d: { description: 0, inputSchema: {} }, e: { description: false, inputSchema: {} }, f: { description: null, inputSchema: {} }, g: { description: '', inputSchema: {} } }],
    ['params', { a: { description: 'x', inputSchema: { type: 'object', properties: { p: S, q: { description: 'qq', format: 'f' }, r: { description: '' }, s: { description: 'a\r\nb*/c' }, 't-u': { description: 'tu' }, v: true, w: { $ref: '#/defs/W' }, x: { description: 'a\rb' } }, required: ['p'] } } }],
    ['param edge', { 'a*/b\nc': { inputSchema: { type: 'object', properties: { 'k*/\nx': { description: '  pd  ' } } } }, b: { inputSchema: { type: 'string', properties: { p: { description: 5 } } } }, c: { inputSchema: { type: 'string', properties: { p: null } } }, d: { inputSchema: { type: 'string', properties: 'ab' } }, e: { inputSchema: { $ref: '#/defs/O', defs: { O: { type: 'object', properties: { p: { description: 'pd' } } } } } }, f: { inputSchema: { anyOf: [{ type: 'object', properties: { p: { description: 'pd' } } }] } }, g: { inputSchema: { properties: { p: { description: 'pd' } } } }, h: { inputSchema: { type: 'string', properties: { p: { description: { a: 1 } } } } } }],
    ['degrade name', { 'a*/b\nc': { description: 5, inputSchema: {} } }],
    ['pascal', Object.fromEntries(['_x', '__a', 'a__b', 'a_B', 'a_1', 'a$b', '$a', 'a_b_c', 'A_b', 'a_', '_', '$', 'x_y_', 'get_WEATHER', 'a_$b', 'a_ü', 'über_x', 'ñame', 'a-b-c', 'a b', '_3d_render', 'x_yZ_w', 'a_b1_c2', 'hello@world!', '@#!', '', '123', 'class', 'yield'].map((n) => [n, { description: `tool ${n}`, inputSchema: {} }]))],
    ['array record', [{ description: 'x', inputSchema: {} }]],
    ['duplicate safe names', { 'a-b': { description: 'dash', inputSchema: { type: 'string' } }, a_b: { description: 'underscore', inputSchema: { type: 'number' } } }],
  ];
  // Malformed schemas that make Cloudflare throw; we must throw too (and so degrade the same
  // tools in generateTypesFromJsonSchema).
  const circular = {};
  circular.self = circular;
  const throwing = [
    ['null', null], ['undefined', undefined], ['anyOf object', { anyOf: {} }], ['enum object', { enum: { length: 1 } }],
    ['ref number', { $ref: 5 }], ['ref object', { $ref: {} }], ['description number', { properties: { a: { description: 5 } } }],
    ['format number', { properties: { a: { format: 5 } } }], ['null property', { properties: { a: null } }],
    ['required object', { properties: { a: {} }, required: {} }], ['enum BigInt in object', { enum: [{ a: 1n }] }],
    ['circular const', { const: circular }], ['anyOf with undefined', { anyOf: [undefined] }],
  ];
  for (const [label, schema] of throwing) schemas.push([`throws: ${label}`, schema]);
  return { schemas, toolSets };
}

// Random schemas from a seeded generator: keyword mixes nobody would write by hand, to check
// which keyword wins and how odd values are treated.
function randomSchemas(seed, count) {
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const strs = ['a', 'b', 'a-b', '', 'x y', '1', 'class', '*/', 'a\nb', 'é', '"', '\\', '\r\n', '  ', 'id', '$x', '_'];
  const prim = () => pick([null, true, false, 0, 1, -1.5, 'str', '', 'a\nb*/', undefined, [], {}, [1, 'x'], { k: 'v' }]);
  const refs = ['#', '#/', '#/defs/A', '#/defs/B', '#/defs/missing', '#/properties/a', '#/defs/A/properties/a', 'http://x', '#defs/A', '#/defs/a~1b', '#/items/0', '#/defs/A/items'];
  const list = (make) => Array.from({ length: Math.floor(rnd() * 3) }, make);
  function gen(d) {
    if (d > 4 || rnd() < 0.15) return pick([true, false, {}, { type: 'string' }, { type: 'number' }, { type: 'null' }, { nullable: true }, 'x', 5]);
    const s = {};
    const n = 1 + Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) {
      const k = pick(['type', 'properties', 'required', 'items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref', 'nullable', 'additionalProperties', 'description', 'format']);
      switch (k) {
        case 'type': s.type = rnd() < 0.7 ? pick(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object', 'foo']) : list(() => pick(['string', 'null', 'object', 'array', 'integer', 'x'])); break;
        case 'properties': {
          if (rnd() < 0.1) { s.properties = pick([null, 0, 'ab', []]); break; }
          const p = {};
          const m = Math.floor(rnd() * 4);
          for (let j = 0; j < m; j++) p[pick(strs)] = gen(d + 1);
          s.properties = p;
          break;
        }
        case 'required': s.required = rnd() < 0.8 ? list(() => pick(strs)) : pick([null, 'ab', 0]); break;
        case 'items': s.items = rnd() < 0.7 ? gen(d + 1) : list(() => gen(d + 1)); break;
        case 'prefixItems': s.prefixItems = rnd() < 0.9 ? list(() => gen(d + 1)) : {}; break;
        case 'anyOf': case 'oneOf': case 'allOf': s[k] = list(() => gen(d + 1)); break;
        case 'enum': s.enum = list(prim); break;
        case 'const': s.const = prim(); break;
        case '$ref': s.$ref = pick(refs); break;
        case 'nullable': s.nullable = pick([true, true, false, 'true']); break;
        case 'additionalProperties': s.additionalProperties = rnd() < 0.5 ? pick([true, false, null]) : gen(d + 1); break;
        case 'description': s.description = pick(['desc', '', '  pad ', 'a\nb', 'x */ y', 'r\r\nn', null]); break;
        case 'format': s.format = pick(['uuid', '', 'date-time', 'a*/b', null]); break;
      }
    }
    return s;
  }
  const out = [];
  for (let i = 0; i < count; i++) {
    const schema = gen(0);
    if (schema && typeof schema === 'object' && rnd() < 0.7) schema.defs = { A: gen(1), B: { $ref: '#/defs/A' }, 'a/b': gen(2) };
    const tools = {
      [pick(strs)]: { description: pick(['d', undefined, ' x\ny ', 5]), inputSchema: schema, outputSchema: rnd() < 0.5 ? gen(0) : undefined },
      other: { inputSchema: gen(0) },
    };
    out.push({ schema, tools });
  }
  return out;
}

// The text a call gives, or which kind of error it throws.
const outcome = (fn) => {
  try {
    return `ok: ${fn()}`;
  } catch (error) {
    return `throws ${error.constructor.name}`;
  }
};

test('matches @cloudflare/codemode on the hand-written corpus', async () => {
  const cf = await loadOracle();
  const { schemas, toolSets } = buildCorpus();
  let compared = 0;
  for (const [label, schema] of schemas) {
    assert.equal(outcome(() => jsonSchemaToType(schema, 'T')), outcome(() => cf.jsonSchemaToType(schema, 'T')), `jsonSchemaToType: ${label}`);
    // The same schema as a tool's input and output.
    const tools = { [label]: { description: label, inputSchema: schema, outputSchema: schema } };
    assert.equal(outcome(() => generateTypesFromJsonSchema(tools)), outcome(() => cf.generateTypesFromJsonSchema(tools)), `as a tool: ${label}`);
    compared += 2;
  }
  for (const [label, tools] of toolSets) {
    assert.equal(outcome(() => generateTypesFromJsonSchema(tools)), outcome(() => cf.generateTypesFromJsonSchema(tools)), `tool set: ${label}`);
    compared++;
  }
  // Guard against a corpus that silently shrank.
  assert.ok(compared > 450, `only ${compared} comparisons`);
});

test('matches @cloudflare/codemode on generated schemas', async () => {
  const cf = await loadOracle();
  for (const [i, { schema, tools }] of randomSchemas(20240611, 3000).entries()) {
    assert.equal(outcome(() => jsonSchemaToType(schema, 'T')), outcome(() => cf.jsonSchemaToType(schema, 'T')), `schema #${i}: ${JSON.stringify(schema)}`);
    assert.equal(outcome(() => generateTypesFromJsonSchema(tools)), outcome(() => cf.generateTypesFromJsonSchema(tools)), `tools #${i}`);
  }
});
