'use strict';
// Option names are checked, so a misspelt option fails loudly instead of silently keeping a
// default (`{ timeoutMs: 5000 }` used to run with the 60 s default). The error names the
// option and the nearest known name.

/** Edit distance between two short names (insertions, deletions, substitutions). */
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The known name closest to `name` (case-insensitively), if any is reasonably close. */
function nearestName(name, known) {
  let best;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // A prefix or suffix match counts too: `timeoutMs` → `timeout`, `memoryLimit` → `memoryLimitMb`.
  const affix = known.find((k) => name.toLowerCase().startsWith(k.toLowerCase()) || k.toLowerCase().startsWith(name.toLowerCase()));
  if (affix !== undefined && bestDistance > 2) return affix;
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/**
 * Throws `makeError(message)` for the first own key of `object` that is neither in `known` nor
 * in `tolerated` (names another API defines that mean nothing here).
 */
function checkOptionNames(object, known, where, makeError, tolerated = []) {
  for (const name of Object.keys(object)) {
    if (known.includes(name) || tolerated.includes(name)) continue;
    const nearest = nearestName(name, known);
    const hint = nearest === undefined ? '' : ` (did you mean ${nearest}?)`;
    throw makeError(`${where} has no option named ${name}${hint}; known: ${known.join(', ')}`);
  }
}

// Old option names already warned about in this process (one warning per name, not per call).
const warnedRenames = new Set();

/**
 * Warns, once per process for each old name, that `old` is now named `current` (code
 * CODEMODE_RENAMED_OPTION): code written before a rename keeps working and is told.
 */
function warnRenamed(old, current) {
  if (warnedRenames.has(old)) return;
  warnedRenames.add(old);
  process.emitWarning(`${old} is now named ${current}; the old name still works and will be removed in a later major version`, { type: 'DeprecationWarning', code: 'CODEMODE_RENAMED_OPTION' });
}

/**
 * `object` with each old name of `renamed` (`{ old: 'new' }`) moved to its new name, so code
 * written before a rename keeps working; the first use of an old name in a process is warned about (warnRenamed), and giving both names is refused.
 */
function withRenamedOptions(object, renamed, where, makeError) {
  let out = object;
  for (const [old, current] of Object.entries(renamed)) {
    if (object === null || typeof object !== 'object' || object[old] === undefined) continue;
    if (object[current] !== undefined) throw makeError(`${where}: ${old} is the old name of ${current}; give only ${current}`);
    warnRenamed(`${where}'s option ${old}`, current);
    out = { ...out, [current]: object[old] };
    delete out[old];
  }
  return out;
}

module.exports = { checkOptionNames, nearestName, warnRenamed, withRenamedOptions };
