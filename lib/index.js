'use strict';
const { IsolateExecutor } = require('./executor/index.js');
const { CODES, CodemodeExecutorError } = require('./errors.js');
const { normalizeCode } = require('./cloudflare/normalize.js');
const { sanitizeToolName } = require('./cloudflare/names.js');
const { runCode } = require('./cloudflare/run-code.js');
const { jsonSchemaToType, generateTypesFromJsonSchema } = require('./cloudflare/schema-types.js');
const { truncateResult, truncateResponse } = require('./cloudflare/truncate.js');
const {
  createCodemodeRuntime, DEFAULT_MAX_EXECUTIONS, DEFAULT_PAUSED_TTL_MS, DEFAULT_LEASE_MS, MAX_DURABLE_VALUE_BYTES,
} = require('./runtime/index.js');
const {
  CodemodeConnector, McpConnector, OpenApiConnector, ToolSetConnector, toolSetConnector,
} = require('./connectors/index.js');

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
  DEFAULT_LEASE_MS,
  MAX_DURABLE_VALUE_BYTES,
  CodemodeConnector,
  McpConnector,
  OpenApiConnector,
  ToolSetConnector,
  toolSetConnector,
};
