'use strict';
// What a user on each platform sees when the native binary cannot be loaded (lib/platform.js):
// the platform triple, the package that was expected (or that none is published), the glibc
// floor, and how to build from source; never napi's "npm has a bug" text.
const test = require('node:test');
const assert = require('node:assert/strict');
const { loadFailure, platformTriple } = require('../../lib/platform.js');

function napiError(...messages) {
  // napi's loader chains the individual failures through `cause`.
  let cause;
  for (const m of messages.reverse()) cause = Object.assign(new Error(m), cause ? { cause } : {});
  return Object.assign(new Error('Cannot find native binding. npm has a bug related to optional dependencies'), { cause });
}

function onPlatform(platform, arch, fn) {
  const saved = { platform: process.platform, arch: process.arch };
  Object.defineProperty(process, 'platform', { value: platform, configurable: true });
  Object.defineProperty(process, 'arch', { value: arch, configurable: true });
  try {
    return fn();
  } finally {
    Object.defineProperty(process, 'platform', { value: saved.platform, configurable: true });
    Object.defineProperty(process, 'arch', { value: saved.arch, configurable: true });
  }
}

test('this machine is linux-x64-gnu, the published platform', () => {
  assert.equal(platformTriple(), 'linux-x64-gnu');
});

test('a missing platform package is named, with how to reinstall and how to build', () => {
  const e = loadFailure(napiError("Cannot find module './codemode-executor.linux-x64-gnu.node'", "Cannot find module '@supolka/codemode-executor-linux-x64-gnu'"));
  assert.equal(e.code, 'ERR_NATIVE_BINARY');
  assert.equal(e.expectedPackage, '@supolka/codemode-executor-linux-x64-gnu');
  assert.match(e.message, /the package @supolka\/codemode-executor-linux-x64-gnu is missing or broken/);
  assert.match(e.message, /--omit=optional/);
  assert.match(e.message, /npm install && npm run build/);
  assert.match(e.message, /Loader said: Cannot find module '\.\/codemode-executor\.linux-x64-gnu\.node' \| Cannot find module '@supolka/);
  assert.doesNotMatch(e.message, /npm has a bug/);
});

test('an unpublished platform is told that none is published for it', () => {
  for (const [platform, arch, triple] of [['darwin', 'arm64', 'darwin-arm64'], ['win32', 'x64', 'win32-x64-msvc'], ['linux', 'arm64', 'linux-arm64-gnu']]) {
    const e = onPlatform(platform, arch, () => loadFailure(napiError(`Cannot find module '@supolka/codemode-executor-${triple}'`)));
    assert.equal(e.platform, triple);
    assert.match(e.message, new RegExp(`no prebuilt native binary for this platform \\(${triple}\\); published: linux-x64-gnu`));
    assert.match(e.message, /npm run build/);
  }
});

test('a glibc older than the floor is named as the cause', () => {
  const e = loadFailure(napiError("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by /app/codemode-executor.linux-x64-gnu.node)"));
  assert.match(e.message, /needs glibc 2\.34 or newer; this system has glibc /);
});
