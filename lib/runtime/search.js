'use strict';
// search(query) and describe(target) over connector descriptions and saved snippets
// (docs/cloudflare-compat.md §11). The model reads these answers to find the method it should call, and tests
// and prompts compare them, so ranking, scores and texts follow @cloudflare/codemode 0.5.6
// exactly, quirks included (they are listed where they happen below).
//
// Inputs:
//   descriptions: connector `describe()` outputs, in connector order:
//     { name, instructions, descriptors: { <method>: { description, inputSchema, outputSchema } },
//       annotations: { <method>: { requiresApproval?: true, replay?: 'reexecute' } } }
//   snippets: [{ name, description, code, savedAt, inputSchema?, connectors? }] (or nullish)
//   packages: the executor's allowed, installed npm packages [{ name, version, description }]
//     (a Node addition, searched after the snippets; none without `packages`, so the answers
//     stay the reference's)

const { sanitizeToolName } = require('../cloudflare/names.js');
const { generateTypesFromJsonSchema } = require('../cloudflare/schema-types.js');
const { DESCRIBE_PACKAGE, PackageError } = require('../packages.js');

// At most this many results come back; `total` still counts every match.
const SEARCH_RESULT_LIMIT = 50;

// How much a hit in each field is worth. Order matters: it is the order fields are scored in.
const FIELDS = [
  ['path', 12],
  ['connector', 8],
  ['method', 10],
  ['description', 5],
];

// Multipliers of a field's weight.
const PHRASE_EQUAL = 14;    // the whole field is the query
const PHRASE_PREFIX = 9;    // the field starts with the query
const PHRASE_CONTAINS = 6;  // the field contains the query somewhere
const TOKEN_EXACT = 4;      // a query token is one of the field's tokens
const TOKEN_PREFIX = 2;     // a query token and a field token, one a prefix of the other
const TOKEN_SUBSTRING = 1;  // a query token appears anywhere in the field text

// Bonuses added once per item.
const FULL_COVERAGE_BONUS = 25;   // every query token matched somewhere
const PARTIAL_COVERAGE_SCALE = 10; // otherwise round(coverage × 10)
const FIRST_TOKEN_BONUS = 8;      // path or method starts with the query's first token
const EXACT_NAME_BONUS = 20;      // the whole path or method is the query

// camelCase boundaries become spaces, and runs of `_ . / : -` become one space, so that
// "listIssues", "list_issues" and "list-issues" all read "list issues".
function normalizeSearchText(value) {
  return value
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_./:-]+/g, ' ')
    .toLowerCase()
    .trim();
}

function tokenize(value) {
  return normalizeSearchText(value).split(/[^a-z0-9]+/).filter((t) => t.length > 0);
}

function prepareField(value) {
  const text = value ?? '';
  return { raw: normalizeSearchText(text), tokens: tokenize(text) };
}

// Score one field of an item against the (normalized) query and its tokens. `phrase` tells
// whether the field text contains the whole query, which lets an item with a low token
// coverage through. Query tokens are scored one by one, duplicates included.
function scoreField(query, queryTokens, field, weight, matched) {
  if (field.raw.length === 0) return { score: 0, phrase: false };
  let score = 0;
  const phrase = field.raw.includes(query);
  if (field.raw === query) score += weight * PHRASE_EQUAL;
  else if (field.raw.startsWith(query)) score += weight * PHRASE_PREFIX;
  else if (phrase) score += weight * PHRASE_CONTAINS;
  for (const token of queryTokens) {
    let hit = 0;
    if (field.tokens.includes(token)) hit = TOKEN_EXACT;
    // A one-letter field token (an "a" in a description) prefix-matches every query token
    // that starts with that letter; that is how the reference behaves.
    else if (field.tokens.some((c) => c.startsWith(token) || token.startsWith(c))) hit = TOKEN_PREFIX;
    else if (field.raw.includes(token)) hit = TOKEN_SUBSTRING;
    if (hit > 0) {
      score += weight * hit;
      matched.add(token);
    }
  }
  return { score, phrase };
}

// The scored result for one item, or null when it does not match.
function scoreItem(item, query, queryTokens) {
  const matched = new Set();
  let score = 0;
  let phrase = false;
  for (const [key, weight] of FIELDS) {
    const field = scoreField(query, queryTokens, prepareField(item[key]), weight, matched);
    score += field.score;
    phrase = phrase || field.phrase;
  }
  if (matched.size === 0) return null;
  // Coverage counts distinct matched tokens against all query tokens, so a repeated query
  // token ("issue issue") can never reach full coverage.
  const coverage = matched.size / queryTokens.length;
  const required = queryTokens.length <= 2 ? 1 : 0.6;
  if (coverage < required && !phrase) return null;
  score += coverage === 1 ? FULL_COVERAGE_BONUS : Math.round(coverage * PARTIAL_COVERAGE_SCALE);
  if (tokenize(item.path)[0] === queryTokens[0] || tokenize(item.method)[0] === queryTokens[0]) {
    score += FIRST_TOKEN_BONUS;
  }
  if (normalizeSearchText(item.path) === query || normalizeSearchText(item.method) === query) {
    score += EXACT_NAME_BONUS;
  }
  const result = {
    path: item.path,
    connector: item.connector,
    method: item.method,
    description: item.description,
  };
  if (item.requiresApproval) result.requiresApproval = true;
  result.kind = item.kind;
  result.score = score;
  return result;
}

// The searchable items: every connector method, then every snippet, then every package.
function searchItems(descriptions, snippets, packages) {
  const items = [];
  for (const desc of descriptions) {
    for (const [method, descriptor] of Object.entries(desc.descriptors)) {
      const item = {
        path: `${desc.name}.${method}`,
        connector: desc.name,
        method,
        description: descriptor?.description,
        kind: 'method',
      };
      if (desc.annotations?.[method]?.requiresApproval) item.requiresApproval = true;
      items.push(item);
    }
  }
  if (snippets) {
    for (const snippet of snippets) {
      items.push({
        path: snippet.name,
        connector: 'snippet',
        method: snippet.name,
        description: snippet.description,
        kind: 'snippet',
      });
    }
  }
  for (const { name, version, description } of packages) {
    items.push({
      path: name,
      connector: 'package',
      method: name,
      description: `npm package ${name}@${version}, which programs may import${description ? `: ${description}` : ''}`,
      kind: 'package',
    });
  }
  return items;
}

// search(query) → { results, total, truncated } (docs/cloudflare-compat.md §11.1). Results are ordered by score,
// best first, ties by path (localeCompare); an empty query (after normalization) finds nothing.
function searchConnectors(query, descriptions, snippets, packages = []) {
  const items = searchItems(descriptions, snippets, packages);
  const ranked = [];
  // The query is only read when there is something to match it against (so a non-string
  // query fails, with a TypeError, exactly when the reference's does).
  const normalized = items.length > 0 ? normalizeSearchText(query) : '';
  const queryTokens = items.length > 0 ? tokenize(query) : [];
  if (normalized.length > 0 && queryTokens.length > 0) {
    for (const item of items) {
      const result = scoreItem(item, normalized, queryTokens);
      if (result !== null) ranked.push(result);
    }
    ranked.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  }
  const total = ranked.length;
  return { results: ranked.slice(0, SEARCH_RESULT_LIMIT), total, truncated: total > SEARCH_RESULT_LIMIT };
}

// A connector's documentation: its instructions, then the declarations of all its methods
// under `declare const <sanitized connector name>`.
function renderConnectorTypes(name, instructions, descriptors) {
  // A string pattern replaces only the first occurrence, as in the reference.
  const types = generateTypesFromJsonSchema(descriptors)
    .replace('declare const codemode', `declare const ${sanitizeToolName(name)}`);
  return [instructions, types].filter(Boolean).join('\n\n');
}

// One method's `type <Name>Input = …` and `type <Name>Output = …` aliases, without the
// declaration block that follows them.
function renderMethodTypes(method, descriptors) {
  const descriptor = descriptors[method];
  if (!descriptor) return '';
  const generated = generateTypesFromJsonSchema({ [method]: descriptor });
  return generated.slice(0, generated.indexOf('declare const codemode')).trim();
}

// describe(target) → { path, description?, requiresApproval?, types, kind } (docs/cloudflare-compat.md §11.2).
function describeTarget(target, descriptions, snippets) {
  return findTarget(target, descriptions, snippets) ?? notFound(target);
}

// What describe answers for a target nothing has.
function notFound(target) {
  return { path: target, description: undefined, types: `"${target}" not found.`, kind: 'method' };
}

// The snippet, connector or method `target` names, described; undefined when none does.
function findTarget(target, descriptions, snippets) {
  const snippet = snippets ? snippets.find((s) => s.name === target) : undefined;
  if (snippet) {
    return {
      path: snippet.name,
      description: snippet.description,
      // The description is kept even when empty, so such a snippet's text starts with "\n\n".
      types: [snippet.description, '```ts\n' + snippet.code + '\n```'].join('\n\n'),
      kind: 'snippet',
    };
  }
  // "a.b.c" splits into "a" and "b": split's limit drops whatever follows a second dot.
  const [connectorName, methodPart] = target.includes('.') ? target.split('.', 2) : [target, undefined];
  const connector = descriptions.find((d) => d.name === connectorName);
  if (connector && !methodPart) {
    return {
      path: connector.name,
      description: connector.instructions,
      types: renderConnectorTypes(connector.name, connector.instructions, connector.descriptors),
      kind: 'connector',
    };
  }
  // An unknown connector part (or no dot at all) searches every connector for the method.
  const candidates = connector ? [connector] : descriptions;
  const method = methodPart ?? target;
  for (const candidate of candidates) {
    // A plain property read, as in the reference: names inherited from Object.prototype
    // ("toString", "constructor") are found on any connector too.
    const descriptor = candidate.descriptors[method];
    if (!descriptor) continue;
    const result = {
      path: `${candidate.name}.${method}`,
      description: descriptor?.description,
    };
    if (candidate.annotations?.[method]?.requiresApproval) result.requiresApproval = true;
    result.types = renderMethodTypes(method, candidate.descriptors);
    result.kind = 'method';
    return result;
  }
  return undefined;
}

// describe(target) with the executor's allowed packages as a last resort: a target that names
// no snippet, connector or method but an allowed package's specifier (`zod`, `date-fns/format`)
// gets the package's declarations (kind 'package'). A package that cannot be described answers
// why, as a missing target does.
async function describeWithPackages(target, descriptions, snippets, executor) {
  const found = findTarget(target, descriptions, snippets);
  if (found !== undefined) return found;
  const describePackage = executor?.[DESCRIBE_PACKAGE];
  if (typeof describePackage !== 'function') return notFound(target);
  try {
    return (await describePackage.call(executor, target)) ?? notFound(target);
  } catch (error) {
    if (!(error instanceof PackageError)) throw error;
    return { path: target, description: undefined, types: error.message, kind: 'package' };
  }
}

module.exports = {
  SEARCH_RESULT_LIMIT,
  describeWithPackages,
  normalizeSearchText,
  tokenize,
  searchConnectors,
  describeTarget,
};
