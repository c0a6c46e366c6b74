'use strict';
// Secrets for the sandbox's fetch: a program names a secret as `{{secret:NAME}}` in a request's
// URL query, headers or body; the host's outbound layer (outbound.js) puts the value in only
// when the request goes to a host allowed for that secret, and refuses it otherwise. The value
// never enters the isolate, and every copy of it in what comes back (the response's body,
// headers, status text and URL, an error message, a tool's reply) is replaced by the
// placeholder before the program can see it.
const { invalidArgument } = require('../errors.js');
const { messageOf, isPlainObject } = require('../util.js');

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
// `{{secret:NAME}}` as written, and as URLSearchParams or encodeURIComponent write it in a query.
const PLACEHOLDER = /\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const ENCODED_PLACEHOLDER = /%7B%7Bsecret(?::|%3A)([A-Za-z_][A-Za-z0-9_]*)%7D%7D/gi;
// A placeholder's opening, as written or encoded (for refusing one outside the query).
const MENTION = /\{\{secret:|%7B%7Bsecret/i;
// A host name (labels of letters, digits and hyphens), optionally `*.` for any subdomain, or an
// IPv4 or bracketed IPv6 address.
const HOST_PATTERN = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$|^\[[0-9a-f:.]+\]$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Checks a `secrets` option: { NAME: { value, hosts } } where `value` is a string or a function
 * ({ name, host }) => string | Promise<string>, and `hosts` host names (`*.example.com` for its
 * subdomains). Returns a Map of name → { value, hosts }, or null when there are none.
 */
function checkSecrets(secrets, what = 'secrets') {
  if (secrets === undefined || secrets === null) return null;
  if (!isPlainObject(secrets)) throw invalidArgument(`${what} must be an object { NAME: { value, hosts } }`);
  const out = new Map();
  for (const [name, entry] of Object.entries(secrets)) {
    if (!NAME.test(name)) throw invalidArgument(`${what}: "${name}" is not a secret name (letters, digits and _, not starting with a digit)`);
    if (!isPlainObject(entry)) throw invalidArgument(`${what}.${name} must be an object { value, hosts }`);
    for (const key of Object.keys(entry)) {
      if (key !== 'value' && key !== 'hosts') throw invalidArgument(`${what}.${name} has no option ${key} (known: value, hosts)`);
    }
    const { value, hosts } = entry;
    if (!(typeof value === 'string' && value.length > 0) && typeof value !== 'function') {
      throw invalidArgument(`${what}.${name}.value must be a non-empty string or a function returning one`);
    }
    if (!Array.isArray(hosts) || hosts.length === 0) {
      throw invalidArgument(`${what}.${name}.hosts must be a non-empty array of host names`);
    }
    const patterns = hosts.map((host) => {
      const pattern = typeof host === 'string' ? host.toLowerCase() : '';
      if (!HOST_PATTERN.test(pattern)) {
        throw invalidArgument(`${what}.${name}.hosts: ${JSON.stringify(host)} is not a host name (such as api.example.com or *.example.com; no scheme, port or path)`);
      }
      return pattern;
    });
    out.set(name, { value, hosts: patterns });
  }
  return out.size > 0 ? out : null;
}

/** The executor's secrets with a run's own over them (by name). */
function mergeSecrets(executorSecrets, runSecrets) {
  if (runSecrets === null) return executorSecrets;
  if (executorSecrets === null) return runSecrets;
  return new Map([...executorSecrets, ...runSecrets]);
}

/** Whether `host` (a URL's hostname) is one of `patterns`: equal, or under a `*.` suffix. */
function hostAllowed(host, patterns) {
  const h = host.toLowerCase();
  return patterns.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p));
}

function replaceBytes(bytes, needle, replacement) {
  let at = bytes.indexOf(needle);
  if (at < 0) return bytes;
  const parts = [];
  let from = 0;
  while (at >= 0) {
    parts.push(bytes.subarray(from, at), replacement);
    from = at + needle.length;
    at = bytes.indexOf(needle, from);
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

/**
 * The secrets of one run: substitutes them into outbound requests and redacts the values it
 * knows from everything on the way back. String values are known from the start; a function's
 * value once it has been resolved in this run.
 */
class RunSecrets {
  #secrets;
  // value → placeholder, longest value first when redacting.
  #known = new Map();

  constructor(secrets) {
    this.#secrets = secrets;
    for (const [name, { value }] of secrets) if (typeof value === 'string') this.#learn(name, value);
  }

  #learn(name, value) {
    this.#known.set(value, `{{secret:${name}}}`);
    const encoded = encodeURIComponent(value);
    if (encoded !== value) this.#known.set(encoded, `{{secret:${name}}}`);
  }

  #pairs() {
    return [...this.#known].sort((a, b) => b[0].length - a[0].length);
  }

  /** `text` with every known value replaced by its placeholder. */
  redact(text) {
    if (this.#known.size === 0 || typeof text !== 'string') return text;
    for (const [value, placeholder] of this.#pairs()) {
      if (text.includes(value)) text = text.split(value).join(placeholder);
    }
    return text;
  }

  /** `bytes` (a Buffer) with every known value replaced by its placeholder. */
  redactBytes(bytes) {
    if (this.#known.size === 0) return bytes;
    for (const [value, placeholder] of this.#pairs()) {
      bytes = replaceBytes(bytes, Buffer.from(value, 'utf8'), Buffer.from(placeholder, 'utf8'));
    }
    return bytes;
  }

  /**
   * A tool's reply (JSON text) with every known value in its strings replaced. The text is
   * parsed only when it holds a value, and rewritten as JSON, so a value that happens to look
   * like a number or a key is still replaced only inside strings.
   */
  redactReply(json) {
    // The common case, on every tool reply: a run with no secret values known.
    if (this.#known.size === 0 || typeof json !== 'string') return json;
    const hit = this.#pairs().some(([value]) => json.includes(JSON.stringify(value).slice(1, -1)));
    if (!hit) return json;
    let parsed;
    try {
      parsed = JSON.parse(json);
    } catch {
      return this.redact(json);
    }
    const walk = (v) => {
      if (typeof v === 'string') return this.redact(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        const o = {};
        for (const [k, x] of Object.entries(v)) o[this.redact(k)] = walk(x);
        return o;
      }
      return v;
    };
    return JSON.stringify(walk(parsed));
  }

  /**
   * A JavaScript value (a connector's result, as the durable runtime records it) with every
   * known value in its strings and keys replaced: plain objects, arrays, Maps and Sets are
   * copied as they are walked; other objects (dates, typed arrays, …) are kept as they are.
   */
  redactValue(value) {
    if (this.#known.size === 0) return value;
    const walk = (v) => {
      if (typeof v === 'string') return this.redact(v);
      if (v === null || typeof v !== 'object') return v;
      if (Array.isArray(v)) return v.map(walk);
      if (v instanceof Map) return new Map([...v].map(([k, x]) => [walk(k), walk(x)]));
      if (v instanceof Set) return new Set([...v].map(walk));
      if (v instanceof Error) {
        const message = this.redact(v.message);
        const stack = typeof v.stack === 'string' ? this.redact(v.stack) : v.stack;
        if (message === v.message && stack === v.stack) return v;
        const e = new Error(message);
        e.name = v.name;
        e.stack = stack;
        return e;
      }
      if (!isPlainObject(v)) return v;
      const o = {};
      for (const [k, x] of Object.entries(v)) o[this.redact(k)] = walk(x);
      return o;
    };
    return walk(value);
  }

  async #resolve(name, host) {
    const { value } = this.#secrets.get(name);
    if (typeof value === 'string') return value;
    let resolved;
    try {
      resolved = await value({ name, host });
    } catch (error) {
      throw new Error(`The secret ${name} could not be resolved: ${this.redact(messageOf(error))}`);
    }
    if (typeof resolved !== 'string' || resolved.length === 0) {
      throw new Error(`The secret ${name} could not be resolved: its value function returned ${typeof resolved}, not a non-empty string`);
    }
    this.#learn(name, resolved);
    return resolved;
  }

  /**
   * Substitutes the secrets a request names. `message` is the sandbox's { url, method, headers,
   * body (Buffer | null) }. Returns { message, used } (the names substituted) or throws an
   * error naming the secret and the host when one is not allowed there.
   */
  async substitute(message) {
    const url = new URL(message.url);
    const names = new Set();
    const collect = (text, pattern) => {
      for (const m of text.matchAll(pattern)) names.add(m[1]);
    };
    const outsideQuery = `${url.protocol}//${url.username}:${url.password}@${url.host}${url.pathname}${url.hash}`;
    if (MENTION.test(outsideQuery) || MENTION.test(decodeLoose(outsideQuery))) {
      throw new Error(`A secret placeholder may appear only in a URL's query, headers or body (in ${url.protocol}//${url.host}${url.pathname})`);
    }
    collect(url.search, PLACEHOLDER);
    collect(url.search, ENCODED_PLACEHOLDER);
    for (const [, value] of message.headers) collect(value, PLACEHOLDER);
    const bodyText = message.body === null ? '' : message.body.toString('latin1');
    collect(bodyText, PLACEHOLDER);
    if (names.size === 0) return { message, used: [] };

    const host = url.hostname;
    for (const name of names) {
      const secret = this.#secrets.get(name);
      if (secret === undefined) throw new Error(`The request names the secret ${name}, which this run does not have`);
      if (!hostAllowed(host, secret.hosts)) {
        throw new Error(`The secret ${name} may not be sent to ${host} (allowed hosts: ${secret.hosts.join(', ')})`);
      }
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(host))) {
        throw new Error(`The secret ${name} may be sent only over https (the request is to ${url.protocol}//${host})`);
      }
    }
    const values = new Map();
    for (const name of names) values.set(name, await this.#resolve(name, host));

    const search = url.search
      .replace(PLACEHOLDER, (m, name) => encodeURIComponent(values.get(name)))
      .replace(ENCODED_PLACEHOLDER, (m, name) => encodeURIComponent(values.get(name)));
    url.search = search;
    const headers = message.headers.map(([key, value]) => [key, value.replace(PLACEHOLDER, (m, name) => values.get(name))]);
    let body = message.body;
    if (body !== null) {
      for (const [name, value] of values) {
        body = replaceBytes(body, Buffer.from(`{{secret:${name}}}`, 'utf8'), Buffer.from(value, 'utf8'));
      }
    }
    return { message: { ...message, url: url.href, headers, body }, used: [...names] };
  }

  /** Throws when a response came from a host that one of `used` may not be sent to. */
  checkFinalUrl(used, responseUrl) {
    if (used.length === 0 || typeof responseUrl !== 'string' || responseUrl === '') return;
    let host;
    try {
      host = new URL(responseUrl).hostname;
    } catch {
      return;
    }
    for (const name of used) {
      if (!hostAllowed(host, this.#secrets.get(name).hosts)) {
        throw new Error(`The secret ${name} may not be sent to ${host}: the outbound handler followed a redirect there (it must honour request.redirect, 'manual' for requests carrying secrets)`);
      }
    }
  }
}

function decodeLoose(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

module.exports = { checkSecrets, mergeSecrets, hostAllowed, RunSecrets };
