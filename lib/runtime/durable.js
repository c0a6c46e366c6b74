'use strict';
// Values in the durable log (docs/cloudflare-compat.md §4.2, §4.3, §6.6): the storage codec (the transport codec's
// binary envelopes plus a bigint one; `undefined` is "no value"), the stable form used to
// compare a replayed call's arguments with the recorded ones, and the size-checked conversion
// with the messages the model reads.

const { transportReplacer, transportReviver } = require('../cloudflare/codec.js');
const { durableConstants } = require('../native.js');
const { messageOf } = require('../util.js');

const BIGINT_TAG = '__codemode_bigint_v1__';
/**
 * Longest serialized value kept in the log, in UTF-16 code units (docs/cloudflare-compat.md's
 * "bytes"): 1 000 000, declared once in src/store (the store cuts error texts to it too).
 */
const MAX_DURABLE_VALUE_BYTES = durableConstants().maxValueUnits;

/** JSON text for a durable column; `undefined` for `undefined`. Throws where JSON would. */
function stringifyForStorage(value) {
  if (value === undefined) return undefined;
  return JSON.stringify(value, (key, nested) => (typeof nested === 'bigint' ? { [BIGINT_TAG]: nested.toString() } : transportReplacer(key, nested)));
}

/** The value of a durable column: `null`/`undefined` (SQL NULL) → `undefined`. */
function parseForStorage(text) {
  if (text === null || text === undefined) return undefined;
  return JSON.parse(text, (key, nested) => {
    if (nested !== null && typeof nested === 'object' && BIGINT_TAG in nested && typeof nested[BIGINT_TAG] === 'string') {
      return BigInt(nested[BIGINT_TAG]);
    }
    return transportReviver(key, nested);
  });
}

/** Deterministic JSON (object keys sorted, BigInt tagged); `undefined` when not serializable. */
function stableStringify(value) {
  try {
    return JSON.stringify(value, (key, nested) => {
      if (typeof nested === 'bigint') return `__bigint__:${nested.toString()}`;
      if (nested !== null && typeof nested === 'object' && !Array.isArray(nested)) {
        const sorted = {};
        for (const name of Object.keys(nested).sort()) sorted[name] = nested[name];
        return sorted;
      }
      return nested;
    });
  } catch {
    return undefined;
  }
}

function tooLargeMessage(what, size) {
  return `${what} is too large to record durably (${size} bytes > ${MAX_DURABLE_VALUE_BYTES} byte limit). Write large data to a file or workspace instead and pass/return a small reference (such as a path).`;
}

/**
 * The storage text of `value` for the column described by `what` (e.g. "Arguments to gh.create"):
 * `{ text }` (null for undefined) or `{ error }` with the message the run fails with.
 */
function toStored(what, value) {
  let text;
  try {
    text = stringifyForStorage(value);
  } catch (error) {
    return { error: `${what} could not be recorded durably (not serializable: ${messageOf(error)}). Only JSON-compatible values (plus binary and bigint) can cross a durable replay boundary.` };
  }
  if (text === undefined) return { text: null };
  if (text.length > MAX_DURABLE_VALUE_BYTES) return { error: tooLargeMessage(what, text.length) };
  return { text };
}

const LOGS_DROPPED = '[codemode: earlier console output dropped — too large to record]';

/** Console lines as stored: halved from the front while over the cap; null if nothing fits. */
function logsForStorage(logs) {
  if (!Array.isArray(logs) || logs.length === 0) return logs === undefined ? null : JSON.stringify(logs);
  let lines = logs;
  for (;;) {
    const text = JSON.stringify(lines);
    if (text.length <= MAX_DURABLE_VALUE_BYTES) return text;
    if (lines.length <= 1) return null;
    const kept = lines[0] === LOGS_DROPPED ? lines.slice(1) : lines;
    lines = [LOGS_DROPPED, ...kept.slice(Math.ceil(kept.length / 2))];
  }
}

module.exports = {
  BIGINT_TAG,
  MAX_DURABLE_VALUE_BYTES,
  stringifyForStorage,
  parseForStorage,
  stableStringify,
  tooLargeMessage,
  toStored,
  logsForStorage,
};
