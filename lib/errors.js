'use strict';
// Machinery faults carry a stable `code`; messages may change, codes never do. The list is
// src/error.rs ErrorCode::ALL (a test compares the two).

const CODES = Object.freeze({
  QUEUE_FULL: 'ERR_QUEUE_FULL',
  DISPOSED: 'ERR_DISPOSED',
  WORKER_LOST: 'ERR_WORKER_LOST',
  INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT',
  HANDLE_CLOSED: 'ERR_HANDLE_CLOSED',
  // The durable runtime's store (a SQLite file, a PostgreSQL database) could not be read or written.
  STORE: 'ERR_STORE',
  // The durable runtime's PostgreSQL database could not be reached or did not answer in time;
  // nothing of the operation was written, and retrying later is safe.
  STORE_UNAVAILABLE: 'ERR_STORE_UNAVAILABLE',
  // The durable runtime's rollback() did not revert everything that is or may be in force: a
  // revert failed, a call in doubt has no revert (or no connector here), or a pass holds the run
  // (nothing was tried). The message names each; calling rollback() again later is safe.
  ROLLBACK_INCOMPLETE: 'ERR_ROLLBACK_INCOMPLETE',
  // A pass of a durable run would import another version of an allowed package than the run
  // recorded when its program began (or the package is gone). The message names the package
  // and both versions; the run is kept, and recover() resumes it once that version is back.
  PACKAGE_VERSION: 'ERR_PACKAGE_VERSION',
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

// Errors thrown by the native layer carry their stable `code` already (napi sets it); they
// become CodemodeExecutorErrors so that callers see one error class.
function fromNative(error) {
  if (error && KNOWN.has(error.code) && !(error instanceof CodemodeExecutorError)) {
    return new CodemodeExecutorError(error.code, error.message);
  }
  return error;
}

module.exports = { CODES, CodemodeExecutorError, invalidArgument, fromNative };
