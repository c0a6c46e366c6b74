// ESM form of `@supolka/codemode-executor/mcp` (the CommonJS module, re-exported).
import mcp from './index.js';

export const { codeMcpServer, openApiMcpServer, runtimeMcpServer } = mcp;
