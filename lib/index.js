'use strict';
const { IsolateExecutor } = require('./executor.js');
const { CODES, CodemodeExecutorError } = require('./errors.js');
const { normalizeCode } = require('./normalize.js');
const { sanitizeToolName } = require('./names.js');
const { runCode } = require('./run-code.js');
const { jsonSchemaToType, generateTypesFromJsonSchema } = require('./schema-types.js');
const { truncateResult, truncateResponse } = require('./truncate.js');
const {
  createCodemodeRuntime, DEFAULT_MAX_EXECUTIONS, DEFAULT_PAUSED_TTL_MS, MAX_DURABLE_VALUE_BYTES,
} = require('./runtime.js');
const {
  CodemodeConnector, McpConnector, OpenApiConnector, ToolSetConnector, toolSetConnector,
} = require('./connectors.js');

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
  createCodemodeRuntime,
  DEFAULT_MAX_EXECUTIONS,
  DEFAULT_PAUSED_TTL_MS,
  MAX_DURABLE_VALUE_BYTES,
  CodemodeConnector,
  McpConnector,
  OpenApiConnector,
  ToolSetConnector,
  toolSetConnector,
};
