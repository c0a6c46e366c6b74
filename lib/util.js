'use strict';
// Small predicates that every part of lib/ needs, defined once so that the layers cannot drift
// apart on what counts as an object or how a thrown value becomes a message.

/** The text a thrown value shows: an Error's message, anything else as a string. */
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/** Any non-null object, arrays and class instances included. */
function isObject(value) {
  return value !== null && typeof value === 'object';
}

/** A non-null object that is not an array (an options or request record). */
function isPlainObject(value) {
  return isObject(value) && !Array.isArray(value);
}

module.exports = { messageOf, isObject, isPlainObject };
