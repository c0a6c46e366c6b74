'use strict';
// Connectors: the runtime's unit of integration (docs/cloudflare-compat.md §8). A connector names a sandbox
// namespace (`name()`), may add guidance for the model (`instructions()`), and lists its tools
// (`tools()`); the runtime only ever uses the derived surface — `describe()`, `executeTool()`,
// `revertAction()`, `onPassEnd()`, `disposeExecution()`, `getTypeScriptTypes()` (§6.1).
//
// Four classes, written from the contract and checked against Cloudflare's published 0.5.6
// classes in __test__/compat/connectors.test.js:
//   CodemodeConnector  the base (§8.1)
//   McpConnector       tools of an MCP connection (§8.2); any object shaped like an MCP client
//                      works, @modelcontextprotocol/sdk is never loaded here
//   OpenApiConnector   one tool per operation of an OpenAPI document (§8.3)
//   ToolSetConnector   an AI SDK ToolSet (§8.4; Cloudflare's `/ai` entry), without loading `ai`
//
// One file each: base.js (with the helpers the others share), mcp.js, openapi.js, toolset.js;
// this file only gathers their exports.

const { CodemodeConnector } = require('./base.js');
const { McpConnector } = require('./mcp.js');
const { OpenApiConnector } = require('./openapi.js');
const { ToolSetConnector, toolSetConnector } = require('./toolset.js');

module.exports = {
  CodemodeConnector,
  McpConnector,
  OpenApiConnector,
  ToolSetConnector,
  toolSetConnector,
};
