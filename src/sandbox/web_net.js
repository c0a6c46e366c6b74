// The sandbox's network-shaped Web globals: URL, URLSearchParams, Event/EventTarget,
// AbortController/AbortSignal, Headers, Request, Response and fetch. URL parsing is native
// (the `url` crate, WHATWG); the rest is JavaScript over the natives. `fetch` rejects with
// workerd's not-permitted message unless the run has an outbound handler, in which case each
// request travels to the host as a tool call of the internal "#outbound" namespace.
(function prepareNet(natives) {
  'use strict';
  const global = globalThis;
  const { defineProperty } = Object;
  const ReflectApply = Reflect.apply;
  const StringCtor = String;
  const NumberCtor = Number;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const SymbolIterator = Symbol.iterator;
  const Uint8ArrayCtor = Uint8Array;
  const isView = ArrayBuffer.isView;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const codec = natives.codec;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const DOMExceptionCtor = global.DOMException;
  const setTimeoutFn = global.setTimeout;
  const SymbolCtor = Symbol;
  const SymbolToStringTag = Symbol.toStringTag;
  const { getOwnPropertyNames, getOwnPropertyDescriptor } = Object;

  // These globals are built on first use, not in every isolate: they are a fifth of what a
  // fresh isolate costs to deserialize (measured), and most programs only call their tools.
  // Until then each name is an accessor; reading any of them runs `installNet` once, which
  // replaces all of them with the usual writable data properties. A name the program assigned
  // or deleted before that keeps what the program did.
  const NAMES = ['URLSearchParams', 'URL', 'Event', 'EventTarget', 'AbortSignal', 'AbortController',
    'Headers', 'Request', 'Response', 'fetch'];
  const getters = [];
  let installed = false;
  function materialize() {
    if (installed) return;
    installed = true;
    const kept = [];
    for (let i = 0; i < NAMES.length; i++) {
      const descriptor = getOwnPropertyDescriptor(global, NAMES[i]);
      if (descriptor === undefined || descriptor.get !== getters[i]) kept.push([NAMES[i], descriptor]);
    }
    installNet();
    for (const [name, descriptor] of kept) {
      if (descriptor === undefined) delete global[name];
      else defineProperty(global, name, descriptor);
    }
  }
  for (let i = 0; i < NAMES.length; i++) {
    const name = NAMES[i];
    getters[i] = getOwnPropertyDescriptor({
      get [name]() {
        materialize();
        // Still this accessor only if installNet failed part-way (the run is being stopped).
        const now = getOwnPropertyDescriptor(global, name);
        return now !== undefined && now.get === getters[i] ? undefined : global[name];
      },
    }, name).get;
    defineProperty(global, name, {
      get: getters[i],
      set(value) {
        defineProperty(global, name, { value, writable: true, enumerable: false, configurable: true });
      },
      enumerable: false,
      configurable: true,
    });
  }

  // Runs on first use. `fetch` reads the run's configuration from `natives.outbound`, which
  // prepareRun sets.
  function installNet() {

    function install(name, value) {
      defineProperty(global, name, { value, writable: true, enumerable: false, configurable: true });
    }
    function isArrayBuffer(value) {
      try {
        ReflectApply(bufferByteLength, value, []);
        return true;
      } catch {
        return false;
      }
    }

    // ---- URLSearchParams ---------------------------------------------------------------------
    class URLSearchParams {
      #list = [];
      #onChange = null;
      constructor(init = '') {
        if (init instanceof URLSearchParams) {
          this.#list = init.#list.map(([k, v]) => [k, v]);
        } else if (init !== null && typeof init === 'object') {
          if (typeof init[SymbolIterator] === 'function') {
            for (const pair of init) {
              const entry = [...pair];
              if (entry.length !== 2) throw new TypeErrorCtor('Each query pair must be an iterable [name, value] tuple');
              this.#list.push([StringCtor(entry[0]), StringCtor(entry[1])]);
            }
          } else {
            for (const key of Object.keys(init)) this.#list.push([key, StringCtor(init[key])]);
          }
        } else {
          let text = StringCtor(init);
          if (text.startsWith('?')) text = text.slice(1);
          this.#parse(text);
        }
      }
      #parse(text) {
        const flat = natives.formParse(text);
        this.#list = [];
        for (let i = 0; i + 1 < flat.length; i += 2) this.#list.push([flat[i], flat[i + 1]]);
      }
      #update() {
        if (this.#onChange) this.#onChange(this.toString());
      }
      // Links this object to a URL whose search is `search` ("?a=1" or ""): `onChange(serialized)`
      // runs after each mutation.
      static link(params, search, onChange) {
        params.#parse(search.slice(1));
        params.#onChange = onChange;
      }
      static relink(params, search) {
        params.#parse(search.slice(1));
      }
      get size() { return this.#list.length; }
      append(name, value) { this.#list.push([StringCtor(name), StringCtor(value)]); this.#update(); }
      delete(name, value) {
        const n = StringCtor(name);
        const v = value === undefined ? undefined : StringCtor(value);
        this.#list = this.#list.filter(([k, val]) => !(k === n && (v === undefined || val === v)));
        this.#update();
      }
      get(name) {
        const n = StringCtor(name);
        const found = this.#list.find(([k]) => k === n);
        return found ? found[1] : null;
      }
      getAll(name) {
        const n = StringCtor(name);
        return this.#list.filter(([k]) => k === n).map(([, v]) => v);
      }
      has(name, value) {
        const n = StringCtor(name);
        const v = value === undefined ? undefined : StringCtor(value);
        return this.#list.some(([k, val]) => k === n && (v === undefined || val === v));
      }
      set(name, value) {
        const n = StringCtor(name);
        const v = StringCtor(value);
        const index = this.#list.findIndex(([k]) => k === n);
        if (index === -1) {
          this.#list.push([n, v]);
        } else {
          this.#list[index][1] = v;
          this.#list = this.#list.filter(([k], i) => k !== n || i === index);
        }
        this.#update();
      }
      sort() {
        // Stable sort by UTF-16 code units of the name, as the standard says.
        this.#list = this.#list.map((e, i) => [e, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map(([e]) => e);
        this.#update();
      }
      forEach(callback, thisArg) {
        for (const [k, v] of this.#list) ReflectApply(callback, thisArg, [v, k, this]);
      }
      *entries() { for (const [k, v] of this.#list) yield [k, v]; }
      *keys() { for (const [k] of this.#list) yield k; }
      *values() { for (const [, v] of this.#list) yield v; }
      [SymbolIterator]() { return this.entries(); }
      toString() {
        const flat = [];
        for (const [k, v] of this.#list) flat.push(k, v);
        return natives.formSerialize(flat);
      }
      get [SymbolToStringTag]() { return 'URLSearchParams'; }
    }
    const linkParams = URLSearchParams.link;
    const relinkParams = URLSearchParams.relink;
    delete URLSearchParams.link;
    delete URLSearchParams.relink;
    install('URLSearchParams', URLSearchParams);

    // ---- URL ---------------------------------------------------------------------------------
    // The components array from the natives: href, origin, protocol, username, password, host,
    // hostname, port, pathname, search, hash.
    class URL {
      #parts;
      #params = null;
      constructor(url, base) {
        if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'URL': 1 argument required");
        const parts = natives.urlParse(StringCtor(url), base === undefined ? undefined : StringCtor(base));
        if (parts === null) throw new TypeErrorCtor(`Invalid URL: ${StringCtor(url)}`);
        this.#parts = parts;
      }
      static canParse(url, base) {
        return natives.urlParse(StringCtor(url), base === undefined ? undefined : StringCtor(base)) !== null;
      }
      static parse(url, base) {
        try { return new URL(url, base); } catch { return null; }
      }
      #set(part, value) {
        const parts = natives.urlSet(this.#parts[0], part, StringCtor(value));
        if (parts === null) {
          if (part === 'href') throw new TypeErrorCtor(`Invalid URL: ${StringCtor(value)}`);
          return;
        }
        this.#parts = parts;
        if (this.#params !== null && part !== 'searchParams') relinkParams(this.#params, this.#parts[9]);
      }
      get href() { return this.#parts[0]; }
      set href(v) { this.#set('href', v); }
      get origin() { return this.#parts[1]; }
      get protocol() { return this.#parts[2]; }
      set protocol(v) { this.#set('protocol', v); }
      get username() { return this.#parts[3]; }
      set username(v) { this.#set('username', v); }
      get password() { return this.#parts[4]; }
      set password(v) { this.#set('password', v); }
      get host() { return this.#parts[5]; }
      set host(v) { this.#set('host', v); }
      get hostname() { return this.#parts[6]; }
      set hostname(v) { this.#set('hostname', v); }
      get port() { return this.#parts[7]; }
      set port(v) { this.#set('port', v); }
      get pathname() { return this.#parts[8]; }
      set pathname(v) { this.#set('pathname', v); }
      get search() { return this.#parts[9]; }
      set search(v) { this.#set('search', v); }
      get hash() { return this.#parts[10]; }
      set hash(v) { this.#set('hash', v); }
      get searchParams() {
        if (this.#params === null) {
          this.#params = new URLSearchParams();
          linkParams(this.#params, this.#parts[9], (serialized) => {
            const parts = natives.urlSet(this.#parts[0], 'search', serialized);
            if (parts !== null) this.#parts = parts;
          });
        }
        return this.#params;
      }
      toString() { return this.#parts[0]; }
      toJSON() { return this.#parts[0]; }
      get [SymbolToStringTag]() { return 'URL'; }
    }
    install('URL', URL);

    // ---- Event / EventTarget -----------------------------------------------------------------
    const STOPPED = SymbolCtor('stopped');
    class Event {
      #type;
      constructor(type, init = {}) {
        if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'Event': 1 argument required");
        this.#type = StringCtor(type);
        this.bubbles = Boolean(init.bubbles);
        this.cancelable = Boolean(init.cancelable);
        this.defaultPrevented = false;
        this.timeStamp = natives.now();
        this.target = null;
        this.currentTarget = null;
      }
      get type() { return this.#type; }
      preventDefault() { if (this.cancelable) this.defaultPrevented = true; }
      stopPropagation() {}
      stopImmediatePropagation() { this[STOPPED] = true; }
    }
    install('Event', Event);

    class EventTarget {
      #listeners = new Map();
      addEventListener(type, listener, options) {
        if (listener === null || listener === undefined) return;
        const key = StringCtor(type);
        const list = this.#listeners.get(key) || [];
        if (list.some((l) => l.listener === listener)) return;
        const once = typeof options === 'object' && options !== null && Boolean(options.once);
        const signal = typeof options === 'object' && options !== null ? options.signal : undefined;
        list.push({ listener, once });
        this.#listeners.set(key, list);
        if (signal && typeof signal.addEventListener === 'function') {
          signal.addEventListener('abort', () => this.removeEventListener(key, listener), { once: true });
        }
      }
      removeEventListener(type, listener) {
        const key = StringCtor(type);
        const list = this.#listeners.get(key);
        if (list) this.#listeners.set(key, list.filter((l) => l.listener !== listener));
      }
      dispatchEvent(event) {
        if (!(event instanceof Event)) throw new TypeErrorCtor('dispatchEvent expects an Event');
        event.target = this;
        event.currentTarget = this;
        const list = (this.#listeners.get(event.type) || []).slice();
        for (const entry of list) {
          if (entry.once) this.removeEventListener(event.type, entry.listener);
          try {
            if (typeof entry.listener === 'function') ReflectApply(entry.listener, this, [event]);
            else if (entry.listener && typeof entry.listener.handleEvent === 'function') entry.listener.handleEvent(event);
          } catch (error) {
            natives.log(2, 'Uncaught ' + StringCtor(error));
          }
          if (event[STOPPED]) break;
        }
        const handler = this['on' + event.type];
        if (typeof handler === 'function') ReflectApply(handler, this, [event]);
        return !event.defaultPrevented;
      }
    }
    install('EventTarget', EventTarget);

    // ---- AbortController / AbortSignal -------------------------------------------------------
    const ABORT = SymbolCtor('abort');
    class AbortSignal extends EventTarget {
      #aborted = false;
      #reason = undefined;
      constructor(key) {
        super();
        if (key !== ABORT) throw new TypeErrorCtor('Illegal constructor');
        this.onabort = null;
      }
      get aborted() { return this.#aborted; }
      get reason() { return this.#reason; }
      throwIfAborted() { if (this.#aborted) throw this.#reason; }
      static abort(reason) {
        const signal = new AbortSignal(ABORT);
        signal[ABORT](reason);
        return signal;
      }
      static timeout(ms) {
        const signal = new AbortSignal(ABORT);
        setTimeoutFn(() => signal[ABORT](new DOMExceptionCtor('The operation was aborted due to timeout', 'TimeoutError')), ms);
        return signal;
      }
      static any(signals) {
        const signal = new AbortSignal(ABORT);
        for (const source of signals) {
          if (source.aborted) {
            signal[ABORT](source.reason);
            return signal;
          }
        }
        for (const source of signals) source.addEventListener('abort', () => signal[ABORT](source.reason), { once: true });
        return signal;
      }
      [ABORT](reason) {
        if (this.#aborted) return;
        this.#aborted = true;
        this.#reason = reason === undefined ? new DOMExceptionCtor('This operation was aborted', 'AbortError') : reason;
        this.dispatchEvent(new Event('abort'));
      }
    }
    install('AbortSignal', AbortSignal);
    class AbortController {
      #signal = new AbortSignal(ABORT);
      get signal() { return this.#signal; }
      abort(reason) { this.#signal[ABORT](reason); }
    }
    install('AbortController', AbortController);

    // ---- Headers -----------------------------------------------------------------------------
    const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
    function normalizeValue(value) {
      const text = StringCtor(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
      if (/[\0\r\n]/.test(text)) throw new TypeErrorCtor(`Invalid header value: ${JSON.stringify(text)}`);
      return text;
    }
    function checkName(name) {
      const text = StringCtor(name);
      if (!TOKEN.test(text)) throw new TypeErrorCtor(`Invalid header name: ${JSON.stringify(text)}`);
      return text.toLowerCase();
    }
    class Headers {
      #map = new Map();
      constructor(init) {
        if (init === undefined || init === null) return;
        if (init instanceof Headers) {
          for (const [k, v] of init.#map) this.#map.set(k, v.slice());
        } else if (typeof init[SymbolIterator] === 'function') {
          for (const pair of init) {
            const entry = [...pair];
            if (entry.length !== 2) throw new TypeErrorCtor('Each header pair must be a [name, value] tuple');
            this.append(entry[0], entry[1]);
          }
        } else if (typeof init === 'object') {
          for (const key of Object.keys(init)) this.append(key, init[key]);
        } else {
          throw new TypeErrorCtor('Headers init must be an object or an iterable of pairs');
        }
      }
      append(name, value) {
        const key = checkName(name);
        const list = this.#map.get(key) || [];
        list.push(normalizeValue(value));
        this.#map.set(key, list);
      }
      delete(name) { this.#map.delete(checkName(name)); }
      get(name) {
        const list = this.#map.get(checkName(name));
        return list === undefined ? null : list.join(', ');
      }
      getSetCookie() { return (this.#map.get('set-cookie') || []).slice(); }
      has(name) { return this.#map.has(checkName(name)); }
      set(name, value) { this.#map.set(checkName(name), [normalizeValue(value)]); }
      forEach(callback, thisArg) {
        for (const [k, v] of this.entries()) ReflectApply(callback, thisArg, [v, k, this]);
      }
      *entries() {
        const names = [...this.#map.keys()].sort();
        for (const name of names) {
          if (name === 'set-cookie') for (const v of this.#map.get(name)) yield [name, v];
          else yield [name, this.#map.get(name).join(', ')];
        }
      }
      *keys() { for (const [k] of this.entries()) yield k; }
      *values() { for (const [, v] of this.entries()) yield v; }
      [SymbolIterator]() { return this.entries(); }
      get [SymbolToStringTag]() { return 'Headers'; }
    }
    install('Headers', Headers);

    // ---- Bodies ------------------------------------------------------------------------------
    // Returns { bytes, type } for a body init, or null for no body.
    function extractBody(body) {
      if (body === undefined || body === null) return null;
      if (typeof body === 'string') return { bytes: encoder.encode(body), type: 'text/plain;charset=UTF-8' };
      if (body instanceof URLSearchParams) return { bytes: encoder.encode(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
      if (isArrayBuffer(body)) return { bytes: new Uint8ArrayCtor(body.slice(0)), type: null };
      if (isView(body)) return { bytes: new Uint8ArrayCtor(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), type: null };
      return { bytes: encoder.encode(StringCtor(body)), type: 'text/plain;charset=UTF-8' };
    }
    const BODY = SymbolCtor('body');
    const USED = SymbolCtor('used');
    const bodyMethods = {
      get bodyUsed() { return this[USED]; },
      get body() { return null; },
      async arrayBuffer() { return consume(this).buffer; },
      async bytes() { return consume(this); },
      async text() { return decoder.decode(consume(this)); },
      async json() { return jsonParse(decoder.decode(consume(this))); },
    };
    function consume(holder) {
      if (holder[USED]) throw new TypeErrorCtor('Body has already been used');
      holder[USED] = true;
      const bytes = holder[BODY];
      return bytes === null ? new Uint8ArrayCtor(0) : bytes.slice();
    }
    function mixBody(Ctor) {
      for (const key of getOwnPropertyNames(bodyMethods)) {
        defineProperty(Ctor.prototype, key, getOwnPropertyDescriptor(bodyMethods, key));
      }
    }

    // ---- Request -----------------------------------------------------------------------------
    const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH'];
    class Request {
      #url;
      #method;
      #headers;
      #signal;
      #redirect;
      constructor(input, init = {}) {
        const source = input instanceof Request ? input : null;
        this.#url = source ? source.url : new URL(StringCtor(input)).href;
        let method = init.method !== undefined ? StringCtor(init.method) : source ? source.method : 'GET';
        if (METHODS.includes(method.toUpperCase())) method = method.toUpperCase();
        if (!TOKEN.test(method)) throw new TypeErrorCtor(`Invalid method: ${method}`);
        this.#method = method;
        this.#headers = new Headers(init.headers !== undefined ? init.headers : source ? source.headers : undefined);
        this.#signal = init.signal !== undefined ? init.signal : source ? source.signal : new AbortController().signal;
        this.#redirect = init.redirect || (source ? source.redirect : 'follow');
        let body = null;
        if (init.body !== undefined && init.body !== null) {
          if (method === 'GET' || method === 'HEAD') throw new TypeErrorCtor('Request with GET/HEAD method cannot have body.');
          const extracted = extractBody(init.body);
          body = extracted.bytes;
          if (extracted.type && !this.#headers.has('content-type')) this.#headers.set('content-type', extracted.type);
        } else if (source) {
          body = source[BODY];
        }
        this[BODY] = body;
        this[USED] = false;
      }
      get url() { return this.#url; }
      get method() { return this.#method; }
      get headers() { return this.#headers; }
      get signal() { return this.#signal; }
      get redirect() { return this.#redirect; }
      clone() {
        if (this[USED]) throw new TypeErrorCtor('Body has already been used');
        return new Request(this);
      }
      get [SymbolToStringTag]() { return 'Request'; }
    }
    mixBody(Request);
    install('Request', Request);

    // ---- Response ----------------------------------------------------------------------------
    class Response {
      #status;
      #statusText;
      #headers;
      #url = '';
      #type = 'default';
      constructor(body = null, init = {}) {
        const status = init.status === undefined ? 200 : NumberCtor(init.status);
        if (!(status >= 200 && status <= 599) || status !== Math.floor(status)) {
          throw new RangeErrorCtor(`The status provided (${init.status}) is outside the range [200, 599].`);
        }
        this.#status = status;
        this.#statusText = init.statusText === undefined ? '' : StringCtor(init.statusText);
        this.#headers = new Headers(init.headers);
        const extracted = extractBody(body);
        if (extracted && extracted.type && !this.#headers.has('content-type')) this.#headers.set('content-type', extracted.type);
        this[BODY] = extracted ? extracted.bytes : null;
        this[USED] = false;
      }
      static json(data, init = {}) {
        const response = new Response(jsonStringify(data), init);
        response.headers.set('content-type', 'application/json');
        return response;
      }
      static error() {
        const response = new Response(null, { status: 200 });
        response.#status = 0;
        response.#type = 'error';
        return response;
      }
      static redirect(url, status = 302) {
        if (![301, 302, 303, 307, 308].includes(status)) throw new RangeErrorCtor(`Invalid status code ${status}`);
        return new Response(null, { status, headers: { location: new URL(StringCtor(url)).href } });
      }
      // Builds the Response of an outbound reply.
      static fromHost(reply) {
        const response = new Response(null, { status: 200, headers: reply.headers });
        response.#status = reply.status;
        response.#statusText = reply.statusText;
        response.#url = reply.url;
        response.#type = 'basic';
        response[BODY] = reply.body;
        return response;
      }
      get status() { return this.#status; }
      get statusText() { return this.#statusText; }
      get ok() { return this.#status >= 200 && this.#status <= 299; }
      get headers() { return this.#headers; }
      get url() { return this.#url; }
      get type() { return this.#type; }
      get redirected() { return false; }
      clone() {
        if (this[USED]) throw new TypeErrorCtor('Body has already been used');
        const copy = new Response(null, { status: 200, headers: this.#headers });
        copy.#status = this.#status;
        copy.#statusText = this.#statusText;
        copy.#url = this.#url;
        copy.#type = this.#type;
        copy[BODY] = this[BODY] === null ? null : this[BODY].slice();
        return copy;
      }
      get [SymbolToStringTag]() { return 'Response'; }
    }
    const responseFromHost = Response.fromHost;
    delete Response.fromHost;
    mixBody(Response);
    install('Response', Response);

    // ---- fetch -------------------------------------------------------------------------------
    const NOT_PERMITTED = 'This worker is not permitted to access the internet via global ' +
      "functions like fetch(). It must use capabilities (such as bindings in 'env') to talk to " +
      'the outside world.';
    const OUTBOUND = '#outbound';

    function abortError(signal) {
      return signal.reason !== undefined ? signal.reason : new DOMExceptionCtor('This operation was aborted', 'AbortError');
    }

    async function send(request) {
      const body = request[BODY];
      const message = {
        url: request.url,
        method: request.method,
        headers: [...request.headers],
        body: body === null ? null : codec.bytesToBase64(body),
      };
      const replyText = await natives.call(OUTBOUND, 'fetch', jsonStringify(message));
      const reply = jsonParse(replyText);
      if (reply.error !== undefined) throw new TypeErrorCtor(StringCtor(reply.error));
      return responseFromHost({
        status: reply.status,
        statusText: reply.statusText,
        headers: reply.headers,
        url: reply.url || request.url,
        body: reply.body === null ? null : codec.base64ToBytes(reply.body),
      });
    }

    install('fetch', async function fetch(input, init) {
      if (natives.outbound !== true) throw new ErrorCtor(NOT_PERMITTED);
      const request = new Request(input, init);
      const signal = request.signal;
      if (signal.aborted) throw abortError(signal);
      const pending = send(request);
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(abortError(signal));
        signal.addEventListener('abort', onAbort, { once: true });
        pending.then((response) => {
          signal.removeEventListener('abort', onAbort);
          resolve(response);
        }, (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        });
      });
    });
  }

  return {};
})
