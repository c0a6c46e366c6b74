'use strict';
const { IsolateExecutor } = require('./executor.js');
const { CODES, CodemodeExecutorError } = require('./errors.js');
const { normalizeCode } = require('./normalize.js');
const { sanitizeToolName } = require('./names.js');
const { runCode } = require('./run-code.js');
const { jsonSchemaToType, generateTypesFromJsonSchema } = require('./schema-types.js');
const { truncateResult, truncateResponse } = require('./truncate.js');

module.exports = {
  IsolateExecutor,
  CodemodeExecutorError,
  ErrorCodes: CODES,
  normalizeCode,
  sanitizeToolName,
  runCode,
  jsonSchemaToType,
  generateTypesFromJsonSchema,
  truncateResult,
  truncateResponse,
};
