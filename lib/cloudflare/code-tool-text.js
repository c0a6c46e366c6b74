'use strict';
// The model-facing text of Cloudflare's code tools (docs/cloudflare-compat.md §14): `/ai`'s
// description and `/mcp`'s template share it and differ in their last line.

const INSTRUCTIONS = `Execute code to achieve a goal.

Available:
{{types}}

Write an async arrow function in JavaScript that returns the result.
Do NOT use TypeScript syntax — no type annotations, interfaces, or generics.
Do NOT define named functions then call them — just write the arrow function body directly.`;

/** `createCodeTool`'s description; `{{types}}` becomes the generated declarations. */
const AI_DESCRIPTION = `${INSTRUCTIONS}

Example: async () => { const r = await codemode.searchWeb({ query: "test" }); return r; }`;

/** `codeMcpServer`'s template: `{{types}}`, and `{{example}}` (a call of the first tool). */
const MCP_TEMPLATE = `${INSTRUCTIONS}

{{example}}`;

/** The description of the code tools' one input field, `code`. */
const CODE_FIELD = 'JavaScript async arrow function to execute';

module.exports = { AI_DESCRIPTION, MCP_TEMPLATE, CODE_FIELD };
