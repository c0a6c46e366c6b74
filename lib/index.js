'use strict';
const { IsolateExecutor } = require('./executor.js');
const { CODES, CodemodeExecutorError } = require('./errors.js');

module.exports = { IsolateExecutor, CodemodeExecutorError, ErrorCodes: CODES };
