'use strict';
// The durable runtime as an MCP server over stdio: point an MCP client (a desktop assistant,
// an IDE agent) at `node examples/mcp-server.js [dataDir]` and it gets the tools `code`,
// `pending`, `search` and `describe`. A program that calls `tracker.create_issue` pauses, and a
// client that supports elicitation asks you, the person, whether to run it (accept runs it and
// the program goes on; decline rejects the run; cancel leaves it paused). The model cannot
// approve: `approve`, `reject` and `rollback` are tools only with `--approval-tools`, for a
// client without elicitation that confirms every tool call with you. The issues live in
// `<dataDir>/issues.json`, the runs in `<dataDir>/runtime.db`.
const fs = require('node:fs');
const path = require('node:path');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { IsolateExecutor, CodemodeConnector, createCodemodeRuntime } = require('..');
const { runtimeMcpServer } = require('../lib/mcp/index.js'); // '@supolka/codemode-executor/mcp' once installed

const approvalTools = process.argv.includes('--approval-tools');
const dir = process.argv.slice(2).find((a) => !a.startsWith('--')) || path.join(process.cwd(), '.codemode');
fs.mkdirSync(dir, { recursive: true });
const issuesFile = path.join(dir, 'issues.json');
const issues = () => (fs.existsSync(issuesFile) ? JSON.parse(fs.readFileSync(issuesFile, 'utf8')) : []);

class Tracker extends CodemodeConnector {
  name() { return 'tracker'; }
  tools() {
    return {
      list_issues: { description: 'List the issues', execute: async () => issues() },
      create_issue: {
        description: 'Open an issue',
        inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
        requiresApproval: true,
        execute: async ({ title }) => {
          const list = issues();
          const issue = { id: list.length + 1, title };
          fs.writeFileSync(issuesFile, JSON.stringify([...list, issue]));
          return issue;
        },
        revert: async (_args, made) => fs.writeFileSync(issuesFile, JSON.stringify(issues().filter((i) => i.id !== made.id))),
      },
    };
  }
}

async function main() {
  const executor = new IsolateExecutor({ timeout: 30_000 });
  const runtime = createCodemodeRuntime({ executor, connectors: [new Tracker()], path: path.join(dir, 'runtime.db') });
  const server = runtimeMcpServer({ runtime, approvalTools, server: new McpServer({ name: 'codemode-tracker', version: '1.0.0' }) });
  await server.connect(new StdioServerTransport());
  // stdout carries the protocol; nothing else may be printed there.
  const stop = async () => { await server.close(); await executor.dispose(); process.exit(0); };
  process.stdin.on('close', stop);
  process.on('SIGTERM', stop);
}

main().catch((error) => { console.error(error); process.exit(1); });
