'use strict';
// npm packages for programs (the executor's `packages` option, issue 39). A program's bare
// imports of an allowed package (`import { z } from 'zod'`, `await import('date-fns/format')`)
// are found in its text, each specifier is bundled by esbuild (in esbuild's own process, off
// this thread) from the host's node_modules into one ES module for a platform with no Node
// built-ins, and the bundles travel with the run as the run's `modules` (the same path as the
// `modules` option: src/sandbox/modules.rs). Bundles are cached per package, version and entry,
// bounded by `limits.maxPackageBytes` each, `packageCacheMb` together, and built within
// `packageBuildTimeoutMs`. Package code runs only inside the isolate, never on the host.
const fs = require('node:fs');
const path = require('node:path');
const { isBuiltin } = require('node:module');
const { invalidArgument } = require('./errors.js');
const { messageOf } = require('./util.js');
const { packageTypes } = require('./package-types.js');

// npm's rules for a package name: lower case, URL-safe, optionally scoped; never `.`/`..`.
const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/** The problem with `name` as a `packages` entry, or null. */
function packageNameProblem(name) {
  if (typeof name !== 'string') return `packages entries must be package names (got ${typeof name})`;
  if (!PACKAGE_NAME.test(name) || name.length > 214) {
    return `packages: "${name}" is not an npm package name (a name such as "zod" or "@scope/name", resolved in node_modules; not a path)`;
  }
  return null;
}

/** Checks the `packages` and `packagesFrom` options; null when no packages are allowed. */
function checkPackages(packages, packagesFrom) {
  if (packagesFrom !== undefined && (typeof packagesFrom !== 'string' || packagesFrom === '')) {
    throw invalidArgument('packagesFrom must be a directory path (the one whose node_modules holds the packages)');
  }
  if (packages === undefined || packages === null) return null;
  if (!Array.isArray(packages)) throw invalidArgument('packages must be an array of package names');
  for (const name of packages) {
    const problem = packageNameProblem(name);
    if (problem) throw invalidArgument(problem);
  }
  if (packages.length === 0) return null;
  return { names: new Set(packages), from: path.resolve(packagesFrom === undefined ? process.cwd() : packagesFrom) };
}

// Specifiers in a program's text: static (`import … from 'x'`, `import 'x'`, `export … from
// 'x'`) and dynamic with a literal (`import('x')`).
const STATIC = /(?:^|[;\n}])\s*(?:import|export)\s*(?:[\w$*{}\s,]+?\s*from\s*)?(['"])([^'"\n]+)\1/g;
const DYNAMIC = /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

function specifiers(code) {
  const found = new Map(); // specifier → static?
  for (const m of code.matchAll(STATIC)) found.set(m[2], true);
  for (const m of code.matchAll(DYNAMIC)) if (!found.has(m[2])) found.set(m[2], false);
  return found;
}

/** The package a bare specifier names and the path inside it ('' for the package itself). */
function splitSpecifier(specifier) {
  const parts = specifier.split('/');
  const count = specifier.startsWith('@') ? 2 : 1;
  return { name: parts.slice(0, count).join('/'), subpath: parts.slice(count).join('/') };
}

function isBare(specifier) {
  return !specifier.startsWith('.') && !specifier.startsWith('/') && !/^[a-z][a-z0-9+.-]*:/i.test(specifier);
}

/** An import that cannot be served, as the error the run reports. */
class PackageError extends Error {
  constructor(message, bound = null) {
    super(message);
    this.bound = bound;
  }
}

// A module whose evaluation throws `message` (for a dynamic import the program may catch).
function throwingModule(message) {
  return `throw new Error(${JSON.stringify(message)});\n`;
}

class Packages {
  #names;
  #from;
  #nodeModules;
  #limits;
  #esbuild = null;
  // key → { source, bytes }, least recently used first; `#bytes` their total.
  #cache = new Map();
  #bytes = 0;
  // key → promise of a bundle being built (concurrent runs share one build).
  #building = new Map();
  // The specifiers the executor's own modules import (they may import packages too), by the
  // modules object they were read from.
  #ownSpecifiers = new WeakMap();
  // Counters, for tests and benchmarks: bundles built, served from the cache.
  stats = { built: 0, cached: 0 };

  /** `config` from checkPackages; `limits` reads { maxPackageBytes, packageBuildTimeoutMs, packageCacheMb }. */
  constructor(config, limits) {
    this.#names = config.names;
    this.#from = config.from;
    this.#nodeModules = path.join(config.from, 'node_modules');
    this.#limits = limits;
  }

  /**
   * The modules a run of `code` needs beside the executor's own `modules` (which win by
   * specifier): { modules, packages: [{ name, version }] }, or throws a PackageError for a
   * static import that cannot be served. A dynamic import that cannot be served gets a module
   * that throws the same message when imported.
   */
  async modulesFor(code, own) {
    const modules = {};
    const packages = new Map();
    const wanted = specifiers(code);
    if (own !== undefined) {
      let theirs = this.#ownSpecifiers.get(own);
      if (theirs === undefined) {
        theirs = specifiers(Object.values(own).join('\n'));
        this.#ownSpecifiers.set(own, theirs);
      }
      // Served like dynamic imports: a problem is reported when that module is imported, not
      // by every run.
      for (const specifier of theirs.keys()) if (!wanted.has(specifier)) wanted.set(specifier, false);
    }
    for (const [specifier, isStatic] of wanted) {
      if (!isBare(specifier) || (own !== undefined && Object.hasOwn(own, specifier))) continue;
      try {
        const { source, name, version } = await this.#module(specifier);
        modules[specifier] = source;
        packages.set(name, version);
      } catch (error) {
        if (!(error instanceof PackageError)) throw error;
        if (isStatic) throw error;
        modules[specifier] = throwingModule(error.message);
      }
    }
    return { modules, packages: [...packages].map(([name, version]) => ({ name, version })) };
  }

  /**
   * The installed version of each allowed package `code` imports (statically or dynamically;
   * specifiers `own` serves are not packages): { name: version, or null when it is not
   * installed }, by name. Builds nothing. What a durable run records when its program begins.
   */
  versionsFor(code, own) {
    const out = {};
    const text = own === undefined ? code : `${code}\n${Object.values(own).join('\n')}`;
    for (const specifier of [...specifiers(text).keys()].sort()) {
      if (!isBare(specifier) || isBuiltin(specifier) || (own !== undefined && Object.hasOwn(own, specifier))) continue;
      const { name } = splitSpecifier(specifier);
      if (!this.#names.has(name) || Object.hasOwn(out, name)) continue;
      try {
        out[name] = this.#version(name);
      } catch (error) {
        if (!(error instanceof PackageError)) throw error;
        out[name] = null;
      }
    }
    return out;
  }

  /**
   * What `describe` answers for an allowed package's specifier (`zod`, `date-fns/format`):
   * { path, description, types, kind: 'package', version }, the types being the declarations
   * the package (or its @types package) ships (lib/package-types.js). Null when `specifier` is
   * not a bare specifier of an allowed package; a PackageError when it is one that cannot be
   * described (not installed, a path with `..`).
   */
  async describe(specifier) {
    if (!isBare(specifier) || isBuiltin(specifier) || !this.#names.has(splitSpecifier(specifier).name)) return null;
    const { name, subpath } = this.#allowed(specifier);
    const version = this.#version(name);
    const types = await packageTypes(this.#nodeModules, name, subpath);
    const from = types === null || types.from === name ? '' : ` (declarations from ${types.from})`;
    return {
      path: specifier,
      description: `npm package ${name}@${version}, which programs may import: import ... from ${JSON.stringify(specifier)}${from}`,
      types: types === null ? `// ${name}@${version} ships no TypeScript declarations, and @types for it is not installed.` : types.text,
      kind: 'package',
      version,
    };
  }

  // `specifier`'s name and subpath, or a PackageError saying why a program may not import it.
  #allowed(specifier) {
    const { name, subpath } = splitSpecifier(specifier);
    if (isBuiltin(specifier)) {
      throw new PackageError(`Cannot import "${specifier}": Node built-in modules are not available to programs`);
    }
    if (subpath.split('/').some((part) => part === '..' || part === '.' || part === '') && subpath !== '' || specifier.includes('\\')) {
      throw new PackageError(`Cannot import "${specifier}": a package path may not contain "." or ".." segments`);
    }
    if (!this.#names.has(name)) {
      throw new PackageError(`Cannot import "${specifier}": the package "${name}" is not allowed. The host allows it with new IsolateExecutor({ packages: [${JSON.stringify(name)}] }) (installed in its node_modules)`);
    }
    return { name, subpath };
  }

  /**
   * The allowed packages that are installed: [{ name, version, description }], by name (the
   * description from package.json, one line, '' when it has none).
   */
  installed() {
    const out = [];
    for (const name of [...this.#names].sort()) {
      try {
        out.push({ name, ...this.#manifest(name) });
      } catch (error) {
        if (!(error instanceof PackageError)) throw error;
      }
    }
    return out;
  }

  async #module(specifier) {
    const { name, subpath } = this.#allowed(specifier);
    const version = this.#version(name);
    const key = `${name}@${version}${subpath === '' ? '' : `/${subpath}`}`;
    const hit = this.#cache.get(key);
    if (hit !== undefined) {
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      this.stats.cached += 1;
      return { source: hit.source, name, version };
    }
    let pending = this.#building.get(key);
    if (pending === undefined) {
      pending = this.#build(specifier, name).finally(() => this.#building.delete(key));
      this.#building.set(key, pending);
    }
    const source = await pending;
    this.#remember(key, source);
    return { source, name, version };
  }

  // The installed version of `name`, from its package.json in node_modules.
  #version(name) {
    return this.#manifest(name).version;
  }

  // What `name`'s package.json says of it: { version, description } (the description one line,
  // at most DESCRIPTION_CHARS characters; '' when it has none).
  #manifest(name) {
    const file = path.join(this.#nodeModules, name, 'package.json');
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      throw new PackageError(`Cannot import "${name}": the package is allowed but not installed in ${this.#nodeModules} (the host installs it with npm install ${name})`);
    }
    let manifest;
    try {
      manifest = JSON.parse(text);
    } catch {
      throw new PackageError(`Cannot import "${name}": its package.json is not JSON`);
    }
    const version = manifest !== null && typeof manifest.version === 'string' ? manifest.version : '0.0.0';
    return { version, description: oneLine(manifest !== null ? manifest.description : undefined) };
  }


  #remember(key, source) {
    const bytes = Buffer.byteLength(source);
    const capacity = this.#limits().packageCacheMb * 1024 * 1024;
    if (this.#cache.has(key) || bytes > capacity) return;
    this.#cache.set(key, { source, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#cache) {
      if (this.#bytes <= capacity) break;
      this.#cache.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }

  async #build(specifier, name) {
    if (this.#esbuild === null) this.#esbuild = require('esbuild');
    const { maxPackageBytes, packageBuildTimeoutMs } = this.#limits();
    let packageDir;
    try {
      packageDir = fs.realpathSync(path.join(this.#nodeModules, name));
    } catch {
      throw new PackageError(`Cannot import "${specifier}": ${path.join(this.#nodeModules, name)} does not exist`);
    }
    const context = await this.#esbuild.context({
      entryPoints: [specifier],
      absWorkingDir: this.#from,
      bundle: true,
      write: false,
      format: 'esm',
      // No Node built-ins: a package that needs one does not resolve (see below).
      platform: 'neutral',
      mainFields: ['browser', 'module', 'main'],
      conditions: ['browser', 'module'],
      define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: 'none',
      metafile: true,
      logLevel: 'silent',
      tsconfigRaw: {},
    });
    // esbuild stops a build it is asked to cancel; the context is disposed only once the
    // build has settled (disposing one mid-build upsets esbuild's service).
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      context.cancel().catch(() => {});
    }, packageBuildTimeoutMs);
    let result;
    let failure;
    try {
      result = await context.rebuild();
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(timer);
      await context.dispose().catch(() => {});
    }
    if (timedOut) {
      throw new PackageError(`Cannot import "${specifier}": bundling the package took longer than ${packageBuildTimeoutMs} ms (packageBuildTimeoutMs)`, 'packageBuildTimeoutMs');
    }
    if (failure !== undefined) throw new PackageError(buildFailure(specifier, name, failure, this.#from));
    // The entry must be a file of the package's own directory in node_modules (or where that
    // links to): not a file esbuild read the name as a path to, nor one a package.json points
    // at outside its package.
    const entry = Object.values(result.metafile.outputs)[0].entryPoint;
    const entryPath = entry === undefined ? '' : fs.realpathSync(path.resolve(this.#from, entry));
    if (!entryPath.startsWith(packageDir + path.sep)) {
      throw new PackageError(`Cannot import "${specifier}": it resolves to ${entryPath || 'nothing'}, outside the package's directory ${path.join(this.#nodeModules, name)}`);
    }
    const bytes = result.outputFiles[0].contents;
    if (bytes.length > maxPackageBytes) {
      throw new PackageError(`Cannot import "${specifier}": its bundle is ${bytes.length} bytes, over limits.maxPackageBytes (${maxPackageBytes})`, 'maxPackageBytes');
    }
    this.stats.built += 1;
    return Buffer.from(bytes).toString('utf8');
  }
}

// esbuild's failure as one line: a Node built-in the package needs, a package it cannot find.
function buildFailure(specifier, name, error, from) {
  const errors = Array.isArray(error && error.errors) ? error.errors : [];
  for (const e of errors) {
    const m = /^Could not resolve "([^"]+)"/.exec(e.text || '');
    if (m && isBuiltin(m[1])) {
      const where = e.location && e.location.file ? ` (from ${e.location.file})` : '';
      return `Cannot import "${specifier}": the package "${name}" needs the Node built-in "${m[1]}"${where}, and programs have no Node built-ins`;
    }
    if (m && m[1] === specifier) {
      return `Cannot import "${specifier}": it is not found in ${path.join(from, 'node_modules')} (is "${name}" installed, and does it export this path?)`;
    }
  }
  const first = errors[0];
  return `Cannot import "${specifier}": bundling failed: ${first ? first.text : messageOf(error)}`;
}

// The key of an executor's method (code) → Packages#versionsFor's answer ({} without packages):
// what the durable runtime records when a run's program begins and checks on later passes.
const PACKAGE_VERSIONS = Symbol('codemode.packageVersions');
// The key of an executor's method (specifier) → Packages#describe's answer (null without
// packages): how the durable runtime's describe() answers for a package.
const DESCRIBE_PACKAGE = Symbol('codemode.describePackage');
// The key of an executor's method () → Packages#installed's answer ([] without packages): the
// packages the runtime's tool description tells the model it may import.
const INSTALLED_PACKAGES = Symbol('codemode.installedPackages');

// `executor`'s allowed, installed packages ([] for an executor without them, or not this
// package's): what the model is told it may import.
function installedPackages(executor) {
  const installed = executor === null || executor === undefined ? undefined : executor[INSTALLED_PACKAGES];
  return typeof installed === 'function' ? installed.call(executor) : [];
}

// A package description as the model reads it: one line, at most this many characters.
const DESCRIPTION_CHARS = 200;

function oneLine(text) {
  if (typeof text !== 'string') return '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= DESCRIPTION_CHARS ? line : `${line.slice(0, DESCRIPTION_CHARS - 1)}…`;
}

// The lines a code tool's description gains when its executor allows npm packages (a Node
// addition: the model cannot otherwise know what it may import). `describe`: whether the tool's
// programs have codemode.describe (the durable runtime's do) to read a package's declarations.
function packagesSection(packages, { describe }) {
  if (packages.length === 0) return [];
  const how = describe
    ? '; `codemode.describe("name")` (or a subpath, such as `"name/sub"`) returns their TypeScript declarations:'
    : ':';
  return [
    '',
    '## Packages',
    '',
    `Programs may also import these npm packages (\`import { x } from "name"\`, or \`await import("name")\`)${how}`,
    ...packages.map(({ name, version, description }) => `- \`${name}\` ${version}${description ? ` — ${description}` : ''}`),
  ];
}

// `text` with packagesSection's lines after it (`text` itself when `executor` allows none).
function withPackagesSection(text, executor, { describe = false } = {}) {
  return [text, ...packagesSection(installedPackages(executor), { describe })].join('\n');
}

module.exports = {
  Packages,
  PackageError,
  checkPackages,
  packageNameProblem,
  specifiers,
  installedPackages,
  packagesSection,
  withPackagesSection,
  PACKAGE_VERSIONS,
  DESCRIBE_PACKAGE,
  INSTALLED_PACKAGES,
};
