// ESM form of `@supolka/codemode-executor/console` (the CommonJS module, re-exported).
import consoleModule from './index.js';

export const { consoleHandler } = consoleModule;
