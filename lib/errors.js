'use strict';
// Machinery faults carry a stable `code`; messages may change, codes never do.

const CODES = Object.freeze({
  QUEUE_FULL: 'ERR_QUEUE_FULL',
  DISPOSED: 'ERR_DISPOSED',
  WORKER_LOST: 'ERR_WORKER_LOST',
  INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT',
  HANDLE_CLOSED: 'ERR_HANDLE_CLOSED',
});

const KNOWN = new Set(Object.values(CODES));

class CodemodeExecutorError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'CodemodeExecutorError';
    this.code = code;
  }
}

function invalidArgument(message) {
  return new CodemodeExecutorError(CODES.INVALID_ARGUMENT, message);
}

// Native option errors arrive as plain errors whose message starts with a code and ': '.
function fromNative(error) {
  const match = /^(ERR_[A-Z_]+): ([\s\S]*)$/.exec(error && error.message);
  if (match && KNOWN.has(match[1])) return new CodemodeExecutorError(match[1], match[2]);
  return error;
}

module.exports = { CODES, CodemodeExecutorError, invalidArgument, fromNative };
