'use strict';
// The host side of the sandbox's fetch: each request arrives as a call of the internal
// "#outbound" namespace, is handed to the user's handler as a real Request, and its Response is
// sent back (status, headers, body), bounded in size.
const { invalidArgument } = require('../errors.js');
const { messageOf } = require('../util.js');

const OUTBOUND = '#outbound';

// A handler is a function (request) => Response, or an object with fetch(request) (the
// Fetcher shape). null or undefined means no network.
function checkOutbound(outbound, what = 'globalOutbound') {
  if (outbound === undefined || outbound === null) return null;
  if (typeof outbound === 'function') return outbound;
  if (typeof outbound === 'object' && typeof outbound.fetch === 'function') return outbound;
  throw invalidArgument(`${what} must be null, a function (request) => Response, or an object with fetch(request)`);
}

async function readBounded(response, maxBytes) {
  if (response.body === null || response.body === undefined) {
    if (typeof response.arrayBuffer !== 'function') return null;
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > maxBytes) throw new Error(`The response body exceeds ${maxBytes} bytes (maxReplyBytes)`);
    return bytes;
  }
  const chunks = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      throw new Error(`The response body exceeds ${maxBytes} bytes (maxReplyBytes)`);
    }
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks);
}

// Answers one outbound call: `messageJson` is { url, method, headers, body (base64 | null) }.
// `secrets` (a RunSecrets, or null) substitutes the `{{secret:NAME}}` placeholders the request
// names, refusing hosts a secret is not allowed for, and redacts their values from the reply.
// A request that carries a secret goes to the handler with redirect: 'manual', so a redirect
// comes back to the program (whose next fetch is checked again) instead of being followed
// with the secret on board.
async function handleOutbound(handler, messageJson, maxBodyBytes, secrets = null) {
  try {
    let message = JSON.parse(messageJson);
    message.body = message.body === null ? null : Buffer.from(message.body, 'base64');
    let used = [];
    if (secrets !== null) ({ message, used } = await secrets.substitute(message));
    const init = { method: message.method, headers: message.headers };
    if (message.body !== null) init.body = message.body;
    if (used.length > 0) init.redirect = 'manual';
    const request = new Request(message.url, init);
    const response = typeof handler === 'function' ? await handler(request) : await handler.fetch(request);
    if (response === null || typeof response !== 'object' || typeof response.status !== 'number') {
      throw new Error('The outbound handler must return a Response');
    }
    if (secrets !== null) secrets.checkFinalUrl(used, response.url);
    let body = await readBounded(response, maxBodyBytes);
    let headers = response.headers ? [...response.headers] : [];
    let statusText = response.statusText || '';
    let url = response.url || message.url;
    if (secrets !== null) {
      if (body !== null) body = secrets.redactBytes(body);
      headers = headers.map(([key, value]) => [secrets.redact(key), secrets.redact(value)]);
      statusText = secrets.redact(statusText);
      url = secrets.redact(url);
    }
    return JSON.stringify({
      status: response.status,
      statusText,
      headers,
      url,
      body: body === null ? null : body.toString('base64'),
    });
  } catch (error) {
    const text = messageOf(error);
    return JSON.stringify({ error: secrets === null ? text : secrets.redact(text) });
  }
}

// The largest body that still fits a reply of `maxReplyBytes` once base64-encoded.
function bodyBudget(maxReplyBytes) {
  return Math.max(0, Math.floor(((maxReplyBytes - 4096) * 3) / 4));
}

module.exports = { OUTBOUND, checkOutbound, handleOutbound, bodyBudget };
