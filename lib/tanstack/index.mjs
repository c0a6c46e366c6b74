// ESM form of `@supolka/codemode-executor/tanstack` (the CommonJS module, re-exported).
import tanstackModule from './index.js';

export const { createIsolateDriver } = tanstackModule;
