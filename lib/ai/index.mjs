// ESM form of `@supolka/codemode-executor/ai` (the CommonJS module, re-exported).
import ai from './index.js';

export const {
  createCodeTool,
  codeModeTool,
  withApprovalDescriptors,
  aiTools,
  resolveProvider,
  generateTypes,
  ToolSetConnector,
  toolSetConnector,
} = ai;
