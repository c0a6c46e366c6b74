'use strict';
// Where an executor allows npm packages (issue 39), the code tools Cloudflare's surfaces make
// tell the model so: createCodeTool and codeModeTool (/ai), codeMcpServer and openApiMcpServer
// (/mcp) end their default description with Cloudflare's text followed by a "Packages" section
// (each package with its version and description), and the programs they run can import them.
// A custom description is the host's own; an executor without packages gives Cloudflare's text.
const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { tool } = require('ai');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { IsolateExecutor } = require('../../lib/index.js');
const ai = require('../../lib/ai/index.js');
const mcp = require('../../lib/mcp/index.js');

const allowing = new IsolateExecutor({ workers: 1, packages: ['ms', 'papaparse'] });
const plain = new IsolateExecutor({ workers: 1 });
test.after(async () => {
  await allowing.dispose();
  await plain.dispose();
});

// What the default text gains: a blank line, the heading, the list.
const SECTION = [
  '',
  '',
  '## Packages',
  '',
  'Programs may also import these npm packages (`import { x } from "name"`, or `await import("name")`):',
  `- \`ms\` ${require('ms/package.json').version} — Tiny millisecond conversion utility`,
  `- \`papaparse\` ${require('papaparse/package.json').version} — Fast and powerful CSV parser for the browser that supports web workers and streaming large files. Converts CSV to JSON and JSON to CSV.`,
].join('\n');

// A program that imports both packages.
const PROGRAM = `import ms from 'ms';
import Papa from 'papaparse';
export default async function main() {
  const rows = Papa.parse('a,b\\n1,2', { header: true }).data;
  return { rows, day: ms('1d') };
}`;
const ANSWER = { rows: [{ a: '1', b: '2' }], day: 86_400_000 };

const tools = () => ({ ping: tool({ description: 'Ping', inputSchema: z.object({}), execute: async () => 'pong' }) });

test('/ai createCodeTool: the default description lists the packages after the types; its programs import them', async () => {
  const withPackages = ai.createCodeTool({ tools: tools(), executor: allowing });
  const without = ai.createCodeTool({ tools: tools(), executor: plain });
  assert.ok(!without.description.includes('## Packages'));
  assert.equal(withPackages.description, without.description + SECTION);
  assert.deepEqual(await withPackages.execute({ code: PROGRAM }, {}), { result: ANSWER });
  // A custom description is the host's, unchanged.
  assert.equal(ai.createCodeTool({ tools: tools(), executor: allowing, description: 'Mine: {{types}}' }).description.includes('## Packages'), false);
  // With a tool that needs approval (a durable code tool), the section follows the approval note.
  const gated = ai.createCodeTool({ tools: { ...tools(), wipe: tool({ description: 'Wipe', inputSchema: z.object({}), needsApproval: true, execute: async () => 'wiped' }) }, executor: allowing });
  assert.ok(gated.description.endsWith(`the run continues where it stopped.${SECTION}`), gated.description.slice(-400));
});

test('/mcp codeMcpServer and openApiMcpServer: their code tools list the packages; the program imports them', async () => {
  const upstream = () => {
    const server = new McpServer({ name: 'upstream', version: '1.0.0' });
    server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
    return server;
  };
  const connect = async (server) => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(a);
    return client;
  };
  const description = async (client, name) => (await client.listTools()).tools.find((t) => t.name === name).description;
  const mine = await connect(await mcp.codeMcpServer({ server: upstream(), executor: allowing }));
  const bare = await connect(await mcp.codeMcpServer({ server: upstream(), executor: plain }));
  assert.equal(await description(mine, 'code'), (await description(bare, 'code')) + SECTION);
  const answer = await mine.callTool({ name: 'code', arguments: { code: PROGRAM } });
  assert.deepEqual(JSON.parse(answer.content[0].text), ANSWER);

  const spec = { openapi: '3.0.0', info: { title: 'Pets', version: '1' }, paths: { '/pets': { get: { summary: 'List pets' } } } };
  const request = async () => [];
  const api = await connect(mcp.openApiMcpServer({ spec, executor: allowing, request, description: 'Extra words' }));
  const apiBare = await connect(mcp.openApiMcpServer({ spec, executor: plain, request, description: 'Extra words' }));
  const plainText = await description(apiBare, 'execute');
  assert.ok(plainText.endsWith('\n\nExtra words'));
  assert.equal(await description(api, 'execute'), `${plainText.slice(0, -'\n\nExtra words'.length)}${SECTION}\n\nExtra words`);
});
