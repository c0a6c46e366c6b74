'use strict';
// Truncation helpers (docs/cloudflare-compat.md §12): keep a tool result or response inside a token budget that a
// model can read, while saying what was cut. Budgets are counted in JS string (UTF-16) units of
// the compact JSON, the same unit Cloudflare's @cloudflare/codemode 0.5.6 uses.

const MARKER = '--- TRUNCATED ---';
const DEFAULT_MAX_TOKENS = 6000;
// Per-child floor cap: no child is promised more than this before the largest absorb the cut.
const FLOOR_CAP = 128;

// `??`, not `||`: an explicit 0 is a real (if harsh) budget, as in Cloudflare's.
function limits(options) {
  const maxTokens = options?.maxTokens ?? DEFAULT_MAX_TOKENS;
  const maxChars = options?.maxChars ?? maxTokens * 4;
  return { maxTokens, maxChars };
}

// en-US grouping (`6,000`) whatever the host locale, as docs/cloudflare-compat.md §12 asks for.
const grouped = (n) => n.toLocaleString('en-US');

function truncateResponse(text, options) {
  const { maxTokens, maxChars } = limits(options);
  if (text.length <= maxChars) return text;
  return (
    `${text.slice(0, maxChars)}\n\n${MARKER}\n` +
    `Response was ~${grouped(Math.ceil(text.length / 4))} tokens (limit: ${grouped(maxTokens)}). ` +
    'Narrow the request to reduce response size.'
  );
}

function truncateResult(value, options) {
  if (typeof value === 'string') return truncateResponse(value, options);
  const { maxChars } = limits(options);
  let json;
  try {
    json = JSON.stringify(value);
  } catch {
    return value; // cycles, BigInt: nothing sensible to measure, hand it back untouched
  }
  if (json === undefined || json.length <= maxChars) return value;
  // Work on the JSON form so toJSON, class instances and undefined members look as they will
  // once serialised; the caller's value is never mutated.
  const shrunk = shrink(JSON.parse(json), maxChars);
  if (JSON.stringify(shrunk).length <= maxChars) return shrunk;
  // Only a scalar (a long number, `true` under a tiny budget) cannot shrink structurally.
  return truncateResponse(json, options);
}

const size = (value) => JSON.stringify(value).length;
const isContainer = (value) => value !== null && typeof value === 'object';

// Returns `value`, or a smaller stand-in, whose compact JSON is at most `budget` long when that
// is possible at all.
function shrink(value, budget) {
  if (size(value) <= budget) return value;
  if (typeof value === 'string') return shrinkString(value, budget);
  if (Array.isArray(value)) return shrinkArray(value, budget);
  if (isContainer(value)) return shrinkObject(value, budget);
  return value; // numbers, booleans, null are kept whole or dropped by their parent
}

function shrinkString(text, budget) {
  const suffix = ` ${MARKER} ${grouped(text.length)} chars`;
  // Start from the prefix that would fit with no escaping, then back off by the overshoot:
  // escapes (`\"`, `\n`, `\u0001`) and split surrogate pairs make the JSON longer than the text.
  // (The suffix is plain ASCII, so it fits exactly when the starting prefix is not negative.)
  let keep = budget - 2 - suffix.length;
  while (keep >= 0) {
    const overshoot = size(text.slice(0, keep) + suffix) - budget;
    if (overshoot <= 0) return text.slice(0, keep) + suffix;
    keep = Math.max(0, keep - overshoot);
  }
  // Not even the marker with its count fits: say at least that something was cut.
  return MARKER.slice(0, Math.max(0, budget - 2));
}

// What each child is owed before the largest ones absorb the cut: scalars cannot shrink, so
// they are owed their whole size; others at most FLOOR_CAP and at most half the parent budget.
function floorOf(value, budget) {
  const full = size(value);
  if (!isContainer(value) && typeof value !== 'string') return full;
  return Math.min(full, FLOOR_CAP, Math.max(2, Math.floor(budget / 2)));
}

// Water-filling: visit children from smallest to largest, each taking an even share of what is
// left (but never less than its floor, never more than its size). Small children keep their
// full size; the largest share the cut, later ones receiving any rounding remainder.
function waterFill(children, available) {
  const order = children.map((_, i) => i).sort((a, b) => children[a].size - children[b].size);
  const budgets = children.map(() => 0);
  let left = available;
  order.forEach((index, n) => {
    const child = children[index];
    const share = Math.floor(left / (order.length - n));
    budgets[index] = Math.min(child.size, Math.max(child.floor, share));
    left -= budgets[index];
  });
  return budgets;
}

function describe(values, budget) {
  return values.map((value) => ({ value, size: size(value), floor: floorOf(value, budget) }));
}

const sum = (numbers) => numbers.reduce((a, b) => a + b, 0);

const moreItems = (dropped) => `${MARKER} ${grouped(dropped)} more items`;

function shrinkArray(items, budget) {
  const n = items.length;
  const children = describe(items, budget);
  const floors = [0]; // floors[k]: the floors of the first k items together
  children.forEach((child, i) => floors.push(floors[i] + child.floor));

  // All items, if their floors fit between the brackets and commas. Otherwise the longest
  // prefix that fits beside a marker item; like Cloudflare's, this test reserves the marker as
  // if every item were dropped plus one spare character, so it is a little conservative.
  let kept = n;
  if (2 + (n - 1) + floors[n] > budget) {
    const reserve = 3 + size(moreItems(n));
    kept = n - 1;
    while (kept > 0 && reserve + kept + floors[kept] > budget) kept--;
    // Not even the marker fits: an empty array still says "a list was here".
    if (kept === 0 && 2 + size(moreItems(n)) > budget) return [];
  }

  const marker = kept < n ? [moreItems(n - kept)] : [];
  const overhead = 2 + (kept + marker.length - 1) + (marker.length ? size(marker[0]) : 0);
  const keptChildren = children.slice(0, kept);
  const budgets = waterFill(keptChildren, budget - overhead);
  return [...keptChildren.map((child, i) => shrink(child.value, budgets[i])), ...marker];
}

function shrinkObject(object, budget) {
  const keys = Object.keys(object);
  const children = describe(keys.map((key) => object[key]), budget);
  children.forEach((child, i) => (child.key = keys[i]));
  // `"key":` plus the comma before every entry but the first.
  const entryOverhead = (key) => size(key) + 2;
  const build = (entries) => {
    const result = {};
    // defineProperty: a `__proto__` key from JSON.parse must stay an ordinary key.
    for (const [key, value] of entries) {
      Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return result;
  };

  let overhead = 1 + sum(children.map((c) => entryOverhead(c.key)));
  let floors = sum(children.map((c) => c.floor));
  if (overhead + floors <= budget) {
    const budgets = waterFill(children, budget - overhead);
    return build(children.map((c, i) => [c.key, shrink(c.value, budgets[i])]));
  }

  // The note's key must not collide with a real key, so it grows trailing spaces if needed.
  let noteKey = MARKER;
  while (Object.prototype.hasOwnProperty.call(object, noteKey)) noteKey += ' ';
  overhead += entryOverhead(noteKey);
  // The note's JSON length is tracked as keys are dropped rather than rebuilt each time (wide
  // objects drop thousands of keys). Keys are joined by ", ", so their escapes simply add up.
  const notePrefix = (count) => `${grouped(count)} keys omitted: `;
  const omitted = new Set();
  let escapedKeys = 0;
  let noteFloor = 0;

  // Drop the largest values first (earliest first among equals) until what is left, and the
  // note naming what went, are owed no more than the budget. The note counts as a child.
  for (const child of [...children].sort((a, b) => b.size - a.size)) {
    omitted.add(child);
    overhead -= entryOverhead(child.key);
    floors -= child.floor;
    escapedKeys += size(child.key) - 2;
    const noteSize = 2 + notePrefix(omitted.size).length + escapedKeys + 2 * (omitted.size - 1);
    noteFloor = Math.min(noteSize, FLOOR_CAP, Math.max(2, Math.floor(budget / 2)));
    if (overhead + floors + noteFloor <= budget) break;
  }
  const noteText = notePrefix(omitted.size) + children.filter((c) => omitted.has(c)).map((c) => c.key).join(', ');
  const note = { key: noteKey, value: noteText, size: size(noteText), floor: noteFloor };

  const kept = children.filter((c) => !omitted.has(c));
  if (kept.length === 0) {
    // Everything went: the note alone takes what is left, or is left out if nothing is.
    const room = budget - overhead;
    return room >= 2 ? build([[noteKey, shrink(note.value, room)]]) : {};
  }
  const shared = [...kept, note];
  const budgets = waterFill(shared, budget - overhead);
  return build(shared.map((c, i) => [c.key, shrink(c.value, budgets[i])]));
}

module.exports = { truncateResult, truncateResponse };
