'use strict';
const { IsolateExecutor } = require('./executor.js');
const { CODES, CodemodeExecutorError } = require('./errors.js');
const { normalizeCode } = require('./normalize.js');
const { sanitizeToolName } = require('./names.js');

module.exports = { IsolateExecutor, CodemodeExecutorError, ErrorCodes: CODES, normalizeCode, sanitizeToolName };
