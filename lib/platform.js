'use strict';
// Which platform this is, and the message for a native binary that cannot be loaded: it names
// the platform triple, the package that was expected and how to build from source, instead of
// napi's generic text.

const PACKAGE = '@supolka/codemode-executor';
// The platforms a binary is published for (npm/<triple>/), and the floor each needs.
const PUBLISHED = { 'linux-x64-gnu': 'glibc 2.34 or newer' };

// Node's diagnostic report says which glibc the runtime uses (none under musl). Built once:
// a report costs milliseconds, and the load-failure message needs it twice.
let report;
function runtimeReport() {
  if (report === undefined) {
    try {
      report = { value: process.report && process.report.getReport() };
    } catch {
      report = { failed: true };
    }
  }
  return report;
}

function isMusl() {
  if (process.platform !== 'linux') return false;
  const { value, failed } = runtimeReport();
  if (failed) return false;
  return !(value && value.header && value.header.glibcVersionRuntime);
}

function glibcVersion() {
  const { value } = runtimeReport();
  return value && value.header && value.header.glibcVersionRuntime;
}

/** This machine's platform triple, as the per-platform packages are named (linux-x64-gnu). */
function platformTriple() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

// The errors behind a failed load: napi's loader chains them through `cause`.
function causeChain(error) {
  const out = [];
  for (let e = error && error.cause; e && out.length < 8; e = e.cause) {
    if (Array.isArray(e)) { out.push(...e.filter((x) => x && x.message)); break; }
    if (e.message) out.push(e);
  }
  return out;
}

/** The error thrown when the native binary cannot be loaded (code ERR_NATIVE_BINARY). */
function loadFailure(cause) {
  const triple = platformTriple();
  const expected = `${PACKAGE}-${triple}`;
  const causes = causeChain(cause).map((e) => e.message.split('\n')[0]);
  const glibc = glibcVersion();
  const tooOld = causes.some((m) => /GLIBC_[0-9.]+' not found/.test(m));
  const lines = [];
  if (!(triple in PUBLISHED)) {
    lines.push(`${PACKAGE} has no prebuilt native binary for this platform (${triple}); published: ${Object.keys(PUBLISHED).join(', ')}.`);
  } else if (tooOld) {
    lines.push(`${PACKAGE}'s native binary for ${triple} needs ${PUBLISHED[triple]}; this system has glibc ${glibc || 'of an unknown version'}.`);
  } else {
    lines.push(`${PACKAGE} could not load its native binary for ${triple}: the package ${expected} is missing or broken.`);
    lines.push(`It is an optional dependency: reinstall without --no-optional / --omit=optional (and without --ignore-optional), with the same version as ${PACKAGE}.`);
  }
  lines.push('To build from source instead: clone the repository, then `npm install && npm run build` (needs a Rust toolchain; see README.md, "Building from a checkout").');
  if (causes.length > 0) lines.push(`Loader said: ${causes.join(' | ')}`);
  const error = new Error(lines.join('\n'));
  error.code = 'ERR_NATIVE_BINARY';
  error.platform = triple;
  error.expectedPackage = expected;
  error.cause = cause;
  return error;
}

module.exports = { PACKAGE, PUBLISHED, platformTriple, loadFailure };
