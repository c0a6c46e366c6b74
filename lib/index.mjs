// The ES module face of the package: the same objects as the CommonJS entry (lib/index.js), as
// named exports (and the whole surface as the default export). A test keeps the two lists equal.
import lib from './index.js';

export const {
  IsolateExecutor,
  CodemodeExecutorError,
  ErrorCodes,
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
} = lib;

export default lib;
