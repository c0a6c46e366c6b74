// ESM form of `@supolka/codemode-executor/mastra` (the CommonJS module, re-exported).
import mastraModule from './index.js';

export const { IsolateCodeModeTransport } = mastraModule;
