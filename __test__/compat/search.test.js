'use strict';
// search(query) and describe(target) (docs/cloudflare-compat.md §11).
//
// Two kinds of test: fixed expectations for each rule of the spec (they hold without
// Cloudflare's package), and a value-for-value comparison with @cloudflare/codemode 0.5.6,
// used as a black box, over a generated corpus of connectors, snippets, queries and targets.
//
// How the oracle is reached: Cloudflare does not export its searchConnectors/describeTarget;
// they sit behind the runtime handle (`createCodemodeRuntime(...).search(q)` /
// `.describe(t)`), which reads every connector's `describe()` and the runtime facet's
// `listSnippets()`. The handle needs only a Durable Object `ctx` with
// `exports.CodemodeRuntime` (checked to exist) and `facets.get(name, factory)`. We give it
// the real CodemodeRuntime class, constructed by our fake `facets.get` over a fake
// `storage.sql` whose `exec(query)` answers the snippet listing
// (`SELECT * FROM cm_snippets ORDER BY name`) with our rows and every other statement (the
// CREATE TABLEs of the constructor) with no rows. Connectors are real subclasses of
// Cloudflare's CodemodeConnector. Our functions then get exactly the inputs Cloudflare's got:
// the connectors' describe() outputs and the handle's snippets().
const test = require('node:test');
const assert = require('node:assert/strict');

const { searchConnectors, describeTarget, normalizeSearchText, tokenize, SEARCH_RESULT_LIMIT } = require('../../lib/runtime/search.js');
const { generateTypesFromJsonSchema } = require('../../lib/cloudflare/schema-types.js');
const { loadCloudflare } = require('../fixtures/cloudflare-oracle.js');

// ---------------------------------------------------------------------------------------
// Helpers for the rule tests: a connector description as describe() returns it.

function connector(name, methods, instructions) {
  const descriptors = {};
  const annotations = {};
  for (const [method, m] of Object.entries(methods)) {
    descriptors[method] = { description: m.description, inputSchema: m.inputSchema ?? { type: 'object' }, outputSchema: m.outputSchema };
    if (m.requiresApproval || m.replay) {
      annotations[method] = { ...(m.requiresApproval ? { requiresApproval: true } : {}), ...(m.replay ? { replay: m.replay } : {}) };
    }
  }
  return { name, instructions, descriptors, annotations };
}

const GITHUB = connector('github', {
  create_issue: { description: 'Create a repository issue', requiresApproval: true },
  listIssues: { description: 'List issues in a repository' },
});

const scoreOf = (query, descriptions, snippets) => {
  const { results } = searchConnectors(query, descriptions, snippets);
  return Object.fromEntries(results.map((r) => [r.path, r.score]));
};

// ---------------------------------------------------------------------------------------
// §11.1 rule by rule

test('text normalization and tokens', () => {
  assert.equal(normalizeSearchText('listIssues'), 'list issues');
  assert.equal(normalizeSearchText('list_issues'), 'list issues');
  assert.equal(normalizeSearchText('github.list-issues'), 'github list issues');
  assert.equal(normalizeSearchText('a__b..c//d::e--f'), 'a b c d e f');
  assert.equal(normalizeSearchText('get2FAStatus'), 'get2 fastatus');
  assert.equal(normalizeSearchText('HTTPRequest'), 'httprequest');
  assert.equal(normalizeSearchText('  Spaced  Out  '), 'spaced  out');
  assert.equal(normalizeSearchText('_lead_'), 'lead');
  assert.equal(normalizeSearchText('_-./:'), '');
  assert.deepEqual(tokenize('Create a repository issue!'), ['create', 'a', 'repository', 'issue']);
  assert.deepEqual(tokenize('café, über'), ['caf', 'ber']);
  assert.deepEqual(tokenize('!!!'), []);
  assert.deepEqual(tokenize('v1:users:list'), ['v1', 'users', 'list']);
});

test('the spec\'s worked example scores 481, and the score is part of each result', () => {
  const out = searchConnectors('create issue', [GITHUB], []);
  assert.equal(out.total, 1);
  assert.equal(out.truncated, false);
  // path 168 + method 220 + description 40 + coverage 25 + first token 8 + exact method 20
  assert.deepEqual(out.results[0], {
    path: 'github.create_issue',
    connector: 'github',
    method: 'create_issue',
    description: 'Create a repository issue',
    requiresApproval: true,
    kind: 'method',
    score: 481,
  });
  // listIssues matches "issue" (a prefix of "issues") but not "create": with two query
  // tokens both must match, so it is left out.
  assert.equal('requiresApproval' in searchConnectors('list issues', [GITHUB], []).results[0], false);
  // "issue" alone: listIssues has only prefix hits (path 24 + method 20 + description 10),
  // create_issue exact ones (path 48 + method 40 + description 20); both get coverage 25.
  assert.deepEqual(searchConnectors('issue', [GITHUB], []).results.map((r) => [r.path, r.score]),
    [['github.create_issue', 12 * 6 + 48 + 10 * 6 + 40 + 5 * 6 + 20 + 25], ['github.listIssues', 12 * 6 + 24 + 10 * 6 + 20 + 5 * 6 + 10 + 25]]);
  assert.deepEqual(Object.keys(out.results[0]), ['path', 'connector', 'method', 'description', 'requiresApproval', 'kind', 'score']);
});

test('field weights and phrase bonuses, one field at a time', () => {
  const only = [connector('zz', { qq: { description: 'alpha beta' } })];
  const s = (q) => scoreOf(q, only)['zz.qq'];
  assert.equal(s('alpha beta'), 5 * 14 + 5 * 4 * 2 + 25);   // whole field
  assert.equal(s('alpha'), 5 * 9 + 5 * 4 + 25);             // field starts with the query
  assert.equal(s('beta'), 5 * 6 + 5 * 4 + 25);              // field contains it
  assert.equal(s('alp'), 5 * 9 + 5 * 2 + 25);               // a prefix of a field token
  assert.equal(s('lph'), 5 * 6 + 5 * 1 + 25);               // a substring only
  assert.equal(s('alphabet'), 5 * 2 + 25);                  // a field token is a prefix of it
  assert.equal(s('ALPHA_beta'), 5 * 14 + 5 * 4 * 2 + 25);   // queries are normalized too
  // The connector field (8) and the path (12): "zz" is the path's and connector's first token.
  assert.equal(s('zz'), 12 * 9 + 12 * 4 + 8 * 14 + 8 * 4 + 25 + 8);
  // The method field (10) plus the path, with the exact-method bonus.
  assert.equal(s('qq'), 12 * 6 + 12 * 4 + 10 * 14 + 10 * 4 + 25 + 8 + 20);
  // The exact-path bonus: the whole normalized path is the query.
  assert.equal(s('zz.qq'), 12 * 14 + 12 * 4 * 2 + 8 * 4 + 10 * 4 + 25 + 8 + 20);
});

test('coverage: every token with two or fewer, 60 % with more, and the partial bonus', () => {
  const only = [connector('zz', { qq: { description: 'alpha beta' } })];
  const s = (q) => scoreOf(q, only)['zz.qq'];
  assert.equal(s('alpha gamma'), undefined);                 // 1 of 2 tokens
  assert.equal(s('alpha beta gamma'), 5 * 4 * 2 + 7);        // 2 of 3: round(6.67) = 7
  assert.equal(s('alpha beta gamma delta'), undefined);      // 2 of 4 < 0.6
  assert.equal(s('alpha beta zz gamma delta'), 12 * 4 + 8 * 4 + 5 * 4 * 2 + 6); // 3 of 5: round(6)
  assert.equal(s('omega'), undefined);                       // nothing matched
});

test('a repeated query token counts once for coverage; a contained phrase still lets it in', () => {
  const descs = [connector('t', {
    one: { description: 'issue issue tracker' },
    two: { description: 'issue tracker' },
  })];
  const scores = scoreOf('issue issue', descs);
  // Both tokens score (duplicates included), but only 1 of 2 distinct matches: coverage 0.5.
  assert.equal(scores['t.one'], 5 * 9 + 5 * 4 * 2 + 5);
  assert.equal(scores['t.two'], undefined);
});

test('the one-letter quirk and equal normalizations', () => {
  const descs = [connector('c', {
    listIssues: { description: 'x' },
    list_issues: { description: 'x' },
    other: { description: 'Make a thing' },
  })];
  const out = searchConnectors('list issues', descs, []);
  assert.deepEqual(out.results.map((r) => r.path), ['c.list_issues', 'c.listIssues']);
  assert.equal(out.results[0].score, out.results[1].score);
  // "a" in the description prefix-matches "apple"; "x" matches "xylophone".
  assert.equal(scoreOf('apple', descs)['c.other'], 5 * 2 + 25);
  assert.equal(scoreOf('xylophone', descs)['c.listIssues'], 5 * 2 + 25);
});

test('empty queries find nothing', () => {
  for (const q of ['', '   ', '!!!', '_-./:', '???  ***']) {
    assert.deepEqual(searchConnectors(q, [GITHUB], [{ name: 'x', description: 'y', code: 'z', savedAt: 1 }]), { results: [], total: 0, truncated: false });
  }
});

test('snippets are searched as items of kind "snippet"', () => {
  const snippets = [{ name: 'weekly-report', description: 'Summarize the week', code: 'async () => 1', savedAt: 1 }];
  const out = searchConnectors('weekly report', [GITHUB], snippets);
  assert.deepEqual(out.results, [{
    path: 'weekly-report', connector: 'snippet', method: 'weekly-report', description: 'Summarize the week', kind: 'snippet',
    // path 12·14 + 12·8, method 10·14 + 10·8, description "week" ⊂ "weekly" 5·2,
    // coverage 25, first token 8, exact 20
    score: 12 * 14 + 12 * 8 + 10 * 14 + 10 * 8 + 5 * 2 + 25 + 8 + 20,
  }]);
  assert.equal(searchConnectors('weekly', [GITHUB], undefined).total, 0);
});

test('ties are ordered by path with localeCompare, and results stop at 50', () => {
  const descs = [connector('Beta', { run: { description: 'Run a job' } }), connector('alpha', { run: { description: 'Run a job' } })];
  assert.deepEqual(searchConnectors('run', descs, []).results.map((r) => r.path), ['alpha.run', 'Beta.run']);
  const methods = {};
  for (let i = 0; i < 60; i++) methods[`op_${i}`] = { description: `Operation number ${i}` };
  const out = searchConnectors('operation', [connector('bulk', methods)], []);
  assert.equal(SEARCH_RESULT_LIMIT, 50);
  assert.equal(out.total, 60);
  assert.equal(out.results.length, 50);
  assert.equal(out.truncated, true);
  assert.deepEqual(out.results.slice(0, 3).map((r) => r.path), ['bulk.op_0', 'bulk.op_1', 'bulk.op_10']);
  assert.equal(searchConnectors('operation 7', [connector('bulk', methods)], []).results[0].path, 'bulk.op_7');
});

test('a description that is missing keeps its key', () => {
  const out = searchConnectors('bare', [connector('c', { bare: {} })], []);
  assert.equal(out.total, 1);
  assert.ok('description' in out.results[0]);
  assert.equal(out.results[0].description, undefined);
});

// ---------------------------------------------------------------------------------------
// §11.2 rule by rule

const TYPED = connector('my-conn', {
  create_issue: {
    description: 'Create a repository issue',
    requiresApproval: true,
    inputSchema: { type: 'object', properties: { title: { type: 'string', description: 'Title' } }, required: ['title'] },
    outputSchema: { type: 'object', properties: { id: { type: 'number' } } },
  },
  list: { description: 'List' },
}, 'Use me for issues.');

test('describe a snippet: first, with its code in a ts block', () => {
  const snippets = [
    { name: 'my-conn.create_issue', description: 'A snippet shadowing a method', code: 'async () => 1', savedAt: 1 },
    { name: 'quiet', description: '', code: 'x', savedAt: 2 },
  ];
  assert.deepEqual(describeTarget('my-conn.create_issue', [TYPED], snippets), {
    path: 'my-conn.create_issue', description: 'A snippet shadowing a method',
    types: 'A snippet shadowing a method\n\n```ts\nasync () => 1\n```', kind: 'snippet',
  });
  assert.equal(describeTarget('quiet', [TYPED], snippets).types, '\n\n```ts\nx\n```');
});

test('describe a connector: instructions and the declarations under its sanitized name', () => {
  const out = describeTarget('my-conn', [TYPED], []);
  const expected = 'Use me for issues.\n\n' + generateTypesFromJsonSchema(TYPED.descriptors).replace('declare const codemode', 'declare const my_conn');
  assert.deepEqual(out, { path: 'my-conn', description: 'Use me for issues.', types: expected, kind: 'connector' });
  assert.match(out.types, /declare const my_conn: \{/);
  // No instructions: only the declarations. A trailing dot also means "the connector".
  const bare = { ...TYPED, instructions: undefined };
  assert.equal(describeTarget('my-conn.', [bare], []).types, generateTypesFromJsonSchema(TYPED.descriptors).replace('declare const codemode', 'declare const my_conn'));
  assert.equal(describeTarget('my-conn.', [bare], []).kind, 'connector');
});

test('describe a method: only its Input/Output aliases', () => {
  const out = describeTarget('my-conn.create_issue', [TYPED], []);
  assert.deepEqual(out, {
    path: 'my-conn.create_issue',
    description: 'Create a repository issue',
    requiresApproval: true,
    types: 'type CreateIssueInput = {\n    /** Title */\n    title: string;\n}\ntype CreateIssueOutput = {\n    id?: number;\n}',
    kind: 'method',
  });
  assert.deepEqual(Object.keys(out), ['path', 'description', 'requiresApproval', 'types', 'kind']);
  const list = describeTarget('my-conn.list', [TYPED], []);
  assert.equal('requiresApproval' in list, false);
  assert.equal(list.types, 'type ListInput = Record<string, unknown>\ntype ListOutput = unknown');
});

test('describe: split(".", 2), searching all connectors, and not found', () => {
  const other = connector('other', { list: { description: 'Other list' }, 'a.b': { description: 'dotted' } });
  // Text after a second dot is dropped: this is "my-conn" + "create_issue".
  assert.equal(describeTarget('my-conn.create_issue.extra', [TYPED], []).path, 'my-conn.create_issue');
  // An unknown connector part: the method part is looked up on every connector, in order.
  assert.equal(describeTarget('nope.list', [TYPED, other], []).path, 'my-conn.list');
  // No dot: the whole target is a method name, looked up on every connector.
  assert.equal(describeTarget('list', [other, TYPED], []).path, 'other.list');
  // A method whose name has a dot cannot be reached ("other.a.b" is "other" + "a").
  assert.deepEqual(describeTarget('other.a.b', [other], []), { path: 'other.a.b', description: undefined, types: '"other.a.b" not found.', kind: 'method' });
  const missing = describeTarget('my-conn.nothing', [TYPED], []);
  assert.deepEqual(missing, { path: 'my-conn.nothing', description: undefined, types: '"my-conn.nothing" not found.', kind: 'method' });
  assert.ok('description' in missing);
  assert.equal(describeTarget('', [TYPED], []).types, '"" not found.');
});

// ---------------------------------------------------------------------------------------
// Agreement with Cloudflare's implementation

// A small deterministic PRNG (mulberry32), so failures reproduce.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const OBJ = (properties, required) => ({ type: 'object', properties, ...(required ? { required } : {}) });
const STR = { type: 'string' };

// Connector definitions: name, instructions, tools (as a connector author writes them).
function corpusConnectors() {
  const bulk = {};
  for (let i = 0; i < 64; i++) {
    bulk[i % 3 === 0 ? `op_${i}` : i % 3 === 1 ? `runOp${i}` : `op.step-${i}`] = {
      description: `Generic operation number ${i} for bulk testing`,
      inputSchema: OBJ({ n: { type: 'integer', description: `count ${i}` } }),
      ...(i % 7 === 0 ? { requiresApproval: true } : {}),
    };
  }
  return [
    { name: 'github', instructions: 'GitHub REST API. Owner and repo are required for repository methods.', tools: {
      create_issue: { description: 'Create a repository issue', requiresApproval: true,
        inputSchema: OBJ({ owner: { type: 'string', description: 'Repository owner' }, repo: STR, title: STR, body: STR, labels: { type: 'array', items: STR } }, ['owner', 'repo', 'title']),
        outputSchema: OBJ({ number: { type: 'integer' }, url: { type: 'string', format: 'uri', description: 'Issue URL' } }) },
      listIssues: { description: 'List issues in a repository, newest first', inputSchema: OBJ({ owner: STR, repo: STR, state: { enum: ['open', 'closed', 'all'] } }) },
      list_issues: { description: 'List issues (snake case alias)' },
      get_issue: { description: 'Get one issue by number', inputSchema: OBJ({ number: { type: 'integer' } }, ['number']) },
      close_issue: { description: 'Close an issue', requiresApproval: true },
      'search.code': { description: 'Search code across repositories' },
      'repos/list': { description: 'List repositories for the authenticated user' },
      'get-pull-request': { description: 'Get a pull request' },
      mergePR: { description: 'Merge a pull request (PR) into its base branch', requiresApproval: true },
      getHTTPStatus: { description: 'HTTP status of the API' },
      get2FAStatus: { description: 'Whether two-factor authentication (2FA) is on' },
      'v1:users:list': { description: 'Legacy v1 user listing' },
      create_issue_comment: { description: 'Comment on an issue', requiresApproval: true },
      issue: { description: 'Issue' },
    } },
    { name: 'slack', tools: {
      postMessage: { description: 'Post a message to a channel', requiresApproval: true, inputSchema: OBJ({ channel: STR, text: STR }, ['channel', 'text']) },
      'chat.postMessage': { description: 'Post a message (chat API spelling)' },
      list_channels: { description: 'List public channels' },
      getUserInfo: { description: 'Get a user\'s profile: name, e-mail, time zone' },
      users_lookupByEmail: { description: 'Find a user by e-mail address' },
      reactions_add: { description: 'Add a reaction (emoji) to a message', replay: 'reexecute' },
      search: { description: 'Search messages and files' },
      a: { description: 'A' },
      x: { description: '' },
      noDescription: {},
    } },
    { name: 'files_v2', instructions: 'Read and write files in the workspace.', tools: {
      readFile: { description: 'Read a file as UTF-8 text', inputSchema: OBJ({ path: STR }, ['path']), outputSchema: STR },
      writeFile: { description: 'Write a file, replacing it', requiresApproval: true, inputSchema: OBJ({ path: STR, content: STR }, ['path', 'content']) },
      list_dir: { description: 'List a directory' },
      stat: { description: 'File metadata: size, mtime' },
      '3dRender': { description: 'Render a 3D model to PNG' },
      delete: { description: 'Delete a file', requiresApproval: true },
      'move.file': { description: 'Move or rename a file' },
      class: { description: 'A reserved word as a method name' },
    } },
    { name: 'weatherAPI', instructions: '', tools: {
      getForecast: { description: 'Forecast for the next 7 days', inputSchema: OBJ({ lat: { type: 'number' }, lon: { type: 'number' } }, ['lat', 'lon']) },
      current_conditions: { description: 'Current conditions at a location' },
      'alerts.active': { description: 'Active weather alerts' },
      getUVIndex: { description: 'UV index' },
      historical2020Data: { description: 'Historical data for 2020' },
      café_menu: { description: 'Café menu — über special' },
    } },
    { name: 'bulk', instructions: 'Bulk operations.', tools: bulk },
    { name: 'Beta', tools: { run: { description: 'Run a job' } } },
    { name: 'alpha', tools: { run: { description: 'Run a job' }, runAll: { description: 'Run every job' } } },
    { name: 'my-conn', instructions: 'Hyphenated name.', tools: { 'do-thing': { description: 'Do the thing' }, search_files: { description: 'Search files' } } },
    { name: '$$', tools: { dollar: { description: 'A dollar-named connector' } } },
    { name: 'empty', instructions: 'No tools here.', tools: {} },
  ];
}

function corpusSnippetRows() {
  const rows = [
    ['weekly-report', 'Summarize the week of issues and pull requests', 'async (input) => ({ week: input.week })', { type: 'object', properties: { week: STR } }, ['github']],
    ['summarize_issues', 'Summarize open issues', 'async () => github.listIssues({})', undefined, ['github']],
    ['github.create_issue', 'A snippet named like a method', 'async () => 1', undefined, undefined],
    ['a', '', 'async () => "a"', undefined, undefined],
    ['Report2024', 'Yearly report for 2024', 'async () => 2024', undefined, []],
    ['postMessage', 'Post the daily digest to slack', 'async () => slack.postMessage({})', undefined, ['slack']],
    ['issue-triage', 'Triage new issues: label, assign, close duplicates', 'async () => null', undefined, ['github']],
  ];
  return rows.map(([name, description, code, schema, connectors], i) => ({
    name, description, code, saved_at: 1_700_000_000_000 + i,
    input_schema: schema === undefined ? null : JSON.stringify(schema),
    connectors: connectors === undefined ? null : JSON.stringify(connectors),
  }));
}

// A Cloudflare runtime handle over the given connector definitions and snippet rows.
async function cloudflareHandle(cf, defs, snippetRows) {
  class TestConnector extends cf.CodemodeConnector {
    constructor(def) {
      super({}, {});
      this.def = def;
    }
    name() { return this.def.name; }
    instructions() { return this.def.instructions; }
    tools() {
      return Object.fromEntries(Object.entries(this.def.tools).map(([k, t]) => [k, { ...t, execute: async () => null }]));
    }
  }
  const rows = [...snippetRows].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sql = {
    exec(query) {
      const answer = /FROM cm_snippets ORDER BY name/.test(query) ? rows : [];
      return { toArray: () => answer.slice() };
    },
  };
  const facets = new Map();
  const ctx = {
    exports: { CodemodeRuntime: cf.CodemodeRuntime },
    facets: {
      get(name, factory) {
        if (!facets.has(name)) facets.set(name, new (factory().class)({ storage: { sql } }, {}));
        return facets.get(name);
      },
    },
  };
  const connectors = defs.map((d) => new TestConnector(d));
  const handle = cf.createCodemodeRuntime({ ctx, connectors, executor: { execute: () => { throw new Error('unused'); } } });
  const descriptions = await Promise.all(connectors.map((c) => c.describe()));
  const snippets = await handle.snippets();
  return { handle, descriptions, snippets };
}

function corpusQueries(descriptions, snippets) {
  const random = rng(0x5eed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const names = [];
  const texts = [];
  for (const d of descriptions) {
    names.push(d.name);
    for (const [m, desc] of Object.entries(d.descriptors)) {
      names.push(m, `${d.name}.${m}`);
      if (desc.description) texts.push(desc.description);
    }
  }
  for (const s of snippets) { names.push(s.name); texts.push(s.description); }
  const vocabulary = [...new Set([...names, ...texts].flatMap((t) => tokenize(t)))].sort();
  const queries = new Set([
    '', ' ', '   ', '!!!', '...', '-_-', '?', 'create issue', 'create-issue', 'create.issue', 'create/issue:',
    'CREATE ISSUE', 'Create_Issue', 'createIssue', 'listIssues', 'list issues', 'list_issues', 'issue issue',
    'issue issue issue', 'op', 'operation', 'generic operation', 'bulk testing 7', 'the', 'PR', 'pr', 'café',
    'über', 'e-mail', 'E-Mail address', '2fa', '2FA status', 'get2FA', 'http', 'HTTPStatus', 'v1 users',
    'v1:users:list', 'run', 'run a job', 'job', 'snippet', 'report', 'weekly report', 'github create issue',
    'github.create_issue', 'slack post', 'post message to channel', 'search', 'search files', 'search code',
    'read write file', 'file', '3d', '3dRender', 'render 3d model', 'uv', 'forecast 7 days', 'a', 'x', 'A',
    'issue triage label assign close duplicates', 'zzz', 'qqq www', 'dollar', '$$', 'my conn', 'do thing',
    'close', 'merge pull request', 'pull', 'request', 'repository issue', 'a repository issue',
  ]);
  for (const n of names) queries.add(n);
  for (const t of vocabulary) queries.add(t);
  for (let c = 97; c <= 122; c++) queries.add(String.fromCharCode(c));
  for (let d = 0; d <= 9; d++) queries.add(String(d));
  const separators = [' ', ' ', '_', '.', '-', '/', ':', ', ', '  '];
  const target = queries.size + 400;
  while (queries.size < target) {
    const kind = random();
    if (kind < 0.3) {
      const t = pick(vocabulary);
      queries.add(t.slice(0, 1 + Math.floor(random() * t.length)));
    } else if (kind < 0.8) {
      const n = 2 + Math.floor(random() * 4);
      const toks = Array.from({ length: n }, () => (random() < 0.1 ? pick(['zz', 'nothing', 'q', 'xylophone']) : pick(vocabulary)));
      if (random() < 0.2) queries.add(toks.map((t, i) => (i ? t[0].toUpperCase() + t.slice(1) : t)).join(''));
      else queries.add(toks.join(pick(separators)));
    } else {
      const base = pick(texts).split(' ');
      const start = Math.floor(random() * base.length);
      queries.add(base.slice(start, start + 1 + Math.floor(random() * 3)).join(' '));
    }
  }
  return [...queries];
}

test('search agrees with Cloudflare\'s implementation over a generated corpus', async (t) => {
  const cf = await loadCloudflare();
  const { handle, descriptions, snippets } = await cloudflareHandle(cf, corpusConnectors(), corpusSnippetRows());
  assert.equal(snippets.length, 7);
  const queries = corpusQueries(descriptions, snippets);
  assert.ok(queries.length >= 300, `${queries.length} queries`);
  let nonEmpty = 0;
  let truncated = 0;
  for (const q of queries) {
    const ours = searchConnectors(q, descriptions, snippets);
    assert.deepEqual(ours, await handle.search(q), `query ${JSON.stringify(q)}`);
    if (ours.total > 0) nonEmpty++;
    if (ours.truncated) truncated++;
  }
  // The corpus exercises both outcomes, and the 50-result cap.
  assert.ok(nonEmpty > queries.length / 2, `${nonEmpty} of ${queries.length} queries found something`);
  assert.ok(truncated >= 3, `${truncated} truncated`);
  t.diagnostic(`${queries.length} queries compared (${nonEmpty} with results, ${truncated} truncated)`);
});

test('search agrees with Cloudflare\'s on a large random corpus of items', async () => {
  // Random method names and descriptions built from a small alphabet, so that prefixes,
  // one-letter tokens, ties and the coverage thresholds all come up often.
  const cf = await loadCloudflare();
  const random = rng(42);
  const syll = ['a', 'b', 'ab', 'ba', 'abc', 'cab', 'x', 'xy', 'list', 'lis', 'issue', 'is', 'get', 'Get', 'ID', '2', 'v2', 'Item'];
  const seps = ['', '_', '.', '-', ' ', ':', '/'];
  const word = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => syll[Math.floor(random() * syll.length)]).join(seps[Math.floor(random() * seps.length)]);
  const defs = Array.from({ length: 4 }, (_, c) => {
    const tools = {};
    for (let i = 0; i < 30; i++) {
      tools[word() + (random() < 0.3 ? String(i) : '')] = {
        description: random() < 0.1 ? undefined : Array.from({ length: Math.floor(random() * 5) }, word).join(' '),
        ...(random() < 0.2 ? { requiresApproval: true } : {}),
      };
    }
    return { name: ['c', 'conn_b', 'connC', 'list'][c], tools };
  });
  const rows = Array.from({ length: 10 }, (_, i) => ({ name: `${word()}${i}`, description: Array.from({ length: 3 }, word).join(' '), code: '() => 1', saved_at: i, input_schema: null, connectors: null }));
  const { handle, descriptions, snippets } = await cloudflareHandle(cf, defs, rows);
  let compared = 0;
  for (let i = 0; i < 400; i++) {
    const q = Array.from({ length: 1 + Math.floor(random() * 4) }, word).join(seps[Math.floor(random() * seps.length)] || ' ');
    assert.deepEqual(searchConnectors(q, descriptions, snippets), await handle.search(q), `query ${JSON.stringify(q)}`);
    compared++;
  }
  assert.equal(compared, 400);
});

test('a query that is not a string fails the same way (only with items to match)', async () => {
  const cf = await loadCloudflare();
  const { handle, descriptions, snippets } = await cloudflareHandle(cf, corpusConnectors().slice(0, 1), []);
  for (const q of [undefined, null, 5, {}]) {
    assert.throws(() => searchConnectors(q, descriptions, snippets), TypeError);
    await assert.rejects(handle.search(q), TypeError);
  }
  const empty = await cloudflareHandle(cf, [], []);
  assert.deepEqual(searchConnectors(undefined, [], []), await empty.handle.search(undefined));
});

test('describe agrees with Cloudflare\'s implementation over many targets', async (t) => {
  const cf = await loadCloudflare();
  const { handle, descriptions, snippets } = await cloudflareHandle(cf, corpusConnectors(), corpusSnippetRows());
  const targets = new Set([
    '', '.', '..', 'nope', 'nope.create_issue', 'nope.nothing', 'toString', 'github.toString', 'constructor',
    'github.constructor', 'hasOwnProperty', '__proto__', 'github.__proto__', 'valueOf', 'GitHub.create_issue',
    'github.CREATE_ISSUE', 'search.code', 'github.search.code', 'files_v2.move.file', 'list', 'run', 'Beta.run',
    'alpha.run', 'alpha.', '.run', 'my_conn', 'my-conn', '$$', '$$.dollar', 'empty', 'empty.anything', 'snippet',
  ]);
  for (const d of descriptions) {
    targets.add(d.name).add(`${d.name}.`).add(`${d.name}.x.y`);
    for (const m of Object.keys(d.descriptors)) targets.add(m).add(`${d.name}.${m}`).add(`${d.name}.${m}.extra`).add(`.${m}`);
  }
  for (const s of snippets) targets.add(s.name).add(`${s.name}.`).add(s.name.toUpperCase());
  let compared = 0;
  for (const t of targets) {
    assert.deepEqual(describeTarget(t, descriptions, snippets), await handle.describe(t), `target ${JSON.stringify(t)}`);
    compared++;
  }
  assert.ok(compared >= 300, `${compared} targets`);
  t.diagnostic(`${compared} targets compared`);
});
