'use strict';
// Writes the workerd configuration for the Cloudflare peer into a fresh temporary folder.
//
// - service "main": worker.mjs plus @cloudflare/codemode's dist modules (and acorn, which it
//   imports) as ES modules, a LOADER worker-loader binding for DynamicWorkerExecutor, and a HOST
//   binding to the Node process;
// - service "host": an external HTTP service at the Node process's loopback tool server.
// workerd resolves `embed` paths relative to the config file and bare imports relative to the
// importing module's name, so the codemode modules are named "codemode/<file>" and acorn is
// named "codemode/acorn".

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const BENCH = path.resolve(__dirname, '..', '..');

// Looked up by folder, not require.resolve: @cloudflare/codemode's exports map hides its
// package.json and dist files.
function packageDir(name) {
  return path.join(BENCH, 'node_modules', name);
}

function codemodeModules() {
  const dist = path.join(packageDir('@cloudflare/codemode'), 'dist');
  const modules = fs.readdirSync(dist)
    .filter((file) => file.endsWith('.js'))
    .map((file) => ({ name: `codemode/${file}`, file: path.join(dist, file) }));
  modules.push({ name: 'codemode/acorn', file: path.join(packageDir('acorn'), 'dist', 'acorn.mjs') });
  return modules;
}

function writeConfig({ listenPort, hostPort }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-bench-workerd-'));
  const embed = (file) => JSON.stringify(path.relative(dir, file));
  const modules = [{ name: 'worker.mjs', file: path.join(__dirname, 'worker.mjs') }, ...codemodeModules()]
    .map((m) => `        (name = ${JSON.stringify(m.name)}, esModule = embed ${embed(m.file)}),`)
    .join('\n');
  const text = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = (
      modules = [
${modules}
      ],
      compatibilityDate = "2025-06-01",
      compatibilityFlags = ["nodejs_compat"],
      bindings = [
        (name = "LOADER", workerLoader = ()),
        (name = "HOST", service = "host"),
      ],
    )),
    (name = "host", external = (address = "127.0.0.1:${hostPort}", http = ())),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${listenPort}", http = (), service = "main") ],
);
`;
  const file = path.join(dir, 'config.capnp');
  fs.writeFileSync(file, text);
  return { dir, file };
}

module.exports = { writeConfig, packageDir };
