'use strict';
// The peers, by id: which module builds each and with what options. run.js decides which of
// them to start (the codemode variants depend on what the build supports). A peer may report a
// more exact label once built (codemode says which isolation is in force).

const PEERS = {
  'node-vm': { label: 'node:vm', module: './node-vm.js' },
  'isolated-vm': { label: 'isolated-vm', module: './isolated-vm.js' },
  quickjs: { label: 'quickjs-emscripten', module: './quickjs.js' },
  workerd: { label: 'Cloudflare DynamicWorkerExecutor (workerd)', module: './workerd.js' },
  'codemode-thread': { label: 'codemode (thread)', module: './codemode.js', options: { isolation: 'thread' } },
  'codemode-process': { label: 'codemode (process)', module: './codemode.js', options: { isolation: 'process' } },
  // The build has no `isolation` option yet: its one mode (an in-process thread pool).
  'codemode-default': { label: 'codemode (default)', module: './codemode.js', options: {} },
  // The Cloudflare drop-in form, in the default isolation.
  'codemode-cloudflare': { label: 'codemode (default, Cloudflare form)', module: './codemode.js', options: { form: 'cloudflare' } },
  'plain-node': { label: 'plain node (no sandbox)', module: './plain-node.js' },
};

function createPeer(id, overrides = {}) {
  const spec = PEERS[id];
  if (spec === undefined) throw new Error(`unknown peer ${id}`);
  return require(spec.module).create({ ...spec.options, ...overrides });
}

module.exports = { PEERS, createPeer };
