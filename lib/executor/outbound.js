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
async function handleOutbound(handler, messageJson, maxBodyBytes) {
  try {
    const message = JSON.parse(messageJson);
    const init = { method: message.method, headers: message.headers };
    if (message.body !== null) init.body = Buffer.from(message.body, 'base64');
    const request = new Request(message.url, init);
    const response = typeof handler === 'function' ? await handler(request) : await handler.fetch(request);
    if (response === null || typeof response !== 'object' || typeof response.status !== 'number') {
      throw new Error('The outbound handler must return a Response');
    }
    const body = await readBounded(response, maxBodyBytes);
    return JSON.stringify({
      status: response.status,
      statusText: response.statusText || '',
      headers: response.headers ? [...response.headers] : [],
      url: response.url || message.url,
      body: body === null ? null : body.toString('base64'),
    });
  } catch (error) {
    return JSON.stringify({ error: messageOf(error) });
  }
}

// The largest body that still fits a reply of `maxReplyBytes` once base64-encoded.
function bodyBudget(maxReplyBytes) {
  return Math.max(0, Math.floor(((maxReplyBytes - 4096) * 3) / 4));
}

module.exports = { OUTBOUND, checkOutbound, handleOutbound, bodyBudget };
