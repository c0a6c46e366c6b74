// The sandbox's network-shaped Web globals themselves: Event/EventTarget, CustomEvent,
// AbortController/AbortSignal, Headers, Request, Response, fetch, Blob, File, FormData and
// MessageChannel (URL and URLSearchParams are web_url_globals.js's). Not in the snapshot:
// web_net.js (which is) defines accessors for these names, and the first read of one has
// natives.loadScript compile this file (from a code cache after the process's first time) and
// call the function it evaluates to, once per isolate, with what web_net.js captured in the
// snapshot before any program could replace it. It installs the globals and
// returns the parts the streams need (`netParts`).
(function installNet(outer) {
  'use strict';
  const {
    global, natives, defineProperty, ReflectApply, StringCtor, NumberCtor, ErrorCtor, TypeErrorCtor,
    RangeErrorCtor, SymbolIterator, Uint8ArrayCtor, isView, jsonParse, jsonStringify,
    bufferByteLength, codec, encoder, decoder, DOMExceptionCtor, setTimeoutFn, structuredCloneFn,
    freeze, SymbolCtor, SymbolToStringTag, DateNow, getOwnPropertyNames, getOwnPropertyDescriptor,
    pairIterators, getStreams, loadedStreams, install, platformBrands, usv, urlClasses, loadedUrlClasses,
  } = outer;
  // URL and URLSearchParams (web_url_globals.js), loaded only when one is needed here: a run that
  // reads a Response body needs neither, and no URLSearchParams exists before they are loaded.
  const parseUrl = (text) => new (urlClasses().URL)(text);
  const isSearchParams = (value) => {
    const classes = loadedUrlClasses();
    return classes !== null && value instanceof classes.URLSearchParams;
  };

  function isArrayBuffer(value) {
    try {
      ReflectApply(bufferByteLength, value, []);
      return true;
    } catch {
      return false;
    }
  }

  // ---- Event / EventTarget -----------------------------------------------------------------
  // DOM's event dispatch for a target with no tree: listeners are matched on (type, callback,
  // capture), `once`, `passive` and `signal` follow the DOM standard, and a listener removed
  // during a dispatch (by another listener or by an aborted signal) no longer runs.
  const NONE = 0;
  const AT_TARGET = 2;
  // Set by the classes' static blocks: reach into their private state.
  let dispatchTo;
  let isEvent;
  let isDispatching;
  let trustedEvent;
  let isTrustedGetter;
  let removeEntry;
  let isSignal;
  let addAbortAlgorithm;
  class Event {
    static { platformBrands[platformBrands.length] = ['Event', (value) => #type in value]; }
    #type;
    #bubbles;
    #cancelable;
    #composed;
    #canceled = false;
    #inPassive = false;
    #stop = false;
    #stopImmediate = false;
    #dispatching = false;
    #phase = NONE;
    #target = null;
    #current = null;
    #timeStamp;
    #trusted = false;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'Event': 1 argument required, but only 0 present.");
      if (init !== undefined && init !== null && typeof init !== 'object' && typeof init !== 'function') {
        throw new TypeErrorCtor("Failed to construct 'Event': The provided value is not of type 'EventInit'.");
      }
      this.#type = StringCtor(type);
      this.#bubbles = Boolean(init && init.bubbles);
      this.#cancelable = Boolean(init && init.cancelable);
      this.#composed = Boolean(init && init.composed);
      this.#timeStamp = natives.now();
      // isTrusted is [LegacyUnforgeable]: an own accessor of every event, one getter for all.
      defineProperty(this, 'isTrusted', { get: isTrustedGetter, enumerable: true, configurable: false });
    }
    get type() { return this.#type; }
    get bubbles() { return this.#bubbles; }
    get cancelable() { return this.#cancelable; }
    get composed() { return this.#composed; }
    get defaultPrevented() { return this.#canceled; }
    get returnValue() { return !this.#canceled; }
    set returnValue(value) { if (!value) this.preventDefault(); }
    get cancelBubble() { return this.#stop; }
    set cancelBubble(value) { if (value) this.#stop = true; }
    get eventPhase() { return this.#phase; }
    get target() { return this.#target; }
    get srcElement() { return this.#target; }
    get currentTarget() { return this.#current; }
    get timeStamp() { return this.#timeStamp; }
    composedPath() { return this.#current === null ? [] : [this.#current]; }
    preventDefault() { if (this.#cancelable && !this.#inPassive) this.#canceled = true; }
    stopPropagation() { this.#stop = true; }
    stopImmediatePropagation() { this.#stop = true; this.#stopImmediate = true; }
    initEvent(type, bubbles = false, cancelable = false) {
      if (this.#dispatching) return;
      this.#type = StringCtor(type);
      this.#bubbles = Boolean(bubbles);
      this.#cancelable = Boolean(cancelable);
      this.#stop = false;
      this.#stopImmediate = false;
      this.#canceled = false;
      this.#target = null;
    }
    get [SymbolToStringTag]() { return 'Event'; }
    static {
      for (const [name, value] of [['NONE', 0], ['CAPTURING_PHASE', 1], ['AT_TARGET', 2], ['BUBBLING_PHASE', 3]]) {
        defineProperty(Event, name, { value, enumerable: true });
        defineProperty(Event.prototype, name, { value, enumerable: true });
      }
      // Runs `listeners` for `event` at `target`: DOM's dispatch with the target as the whole path.
      dispatchTo = (target, event, listeners) => {
        if (event.#dispatching) throw new DOMExceptionCtor('The event is already being dispatched.', 'InvalidStateError');
        event.#dispatching = true;
        event.#target = target;
        event.#current = target;
        event.#phase = AT_TARGET;
        try {
          for (const entry of listeners) {
            if (event.#stopImmediate) break;
            if (entry.removed) continue;
            if (entry.once) removeEntry(target, entry);
            if (entry.passive) event.#inPassive = true;
            try {
              const callback = entry.callback;
              if (typeof callback === 'function') ReflectApply(callback, target, [event]);
              else {
                const handleEvent = callback.handleEvent;
                if (typeof handleEvent !== 'function') throw new TypeErrorCtor("The listener's handleEvent is not a function");
                ReflectApply(handleEvent, callback, [event]);
              }
            } catch (error) {
              reportError(error);
            }
            event.#inPassive = false;
          }
          if (!event.#stopImmediate) {
            const handler = target['on' + event.#type];
            if (typeof handler === 'function') {
              try { ReflectApply(handler, target, [event]); } catch (error) { reportError(error); }
            }
          }
        } finally {
          event.#dispatching = false;
          event.#phase = NONE;
          event.#current = null;
          event.#stop = false;
          event.#stopImmediate = false;
        }
        return !event.#canceled;
      };
      isEvent = (value) => value !== null && typeof value === 'object' && #type in value;
      isDispatching = (event) => event.#dispatching;
      // An event the platform itself dispatches (AbortSignal's abort) is trusted.
      trustedEvent = (type) => { const event = new Event(type); event.#trusted = true; return event; };
      isTrustedGetter = getOwnPropertyDescriptor({
        get isTrusted() {
          if (!(this !== null && typeof this === 'object' && #trusted in this)) throw new TypeErrorCtor('Illegal invocation: isTrusted read on an object that is not an Event');
          return this.#trusted;
        },
      }, 'isTrusted').get;
    }
  }
  install('Event', Event);
  class CustomEvent extends Event {
    #detail;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'CustomEvent': 1 argument required, but only 0 present.");
      super(type, init);
      this.#detail = init == null || init.detail === undefined ? null : init.detail;
    }
    get detail() { return this.#detail; }
    initCustomEvent(type, bubbles = false, cancelable = false, detail = null) {
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to execute 'initCustomEvent' on 'CustomEvent': 1 argument required, but only 0 present.");
      if (isDispatching(this)) return;
      this.initEvent(type, bubbles, cancelable);
      this.#detail = detail;
    }
    get [SymbolToStringTag]() { return 'CustomEvent'; }
  }
  install('CustomEvent', CustomEvent);

  function reportError(error) {
    let text;
    try { text = StringCtor(error); } catch { text = 'an exception'; }
    natives.log(2, 'Uncaught ' + text);
  }
  // Options as DOM flattens them: a boolean is `capture`.
  function flatten(options) {
    if (typeof options === 'boolean') return { capture: options, once: false, passive: false, signal: undefined };
    if (options === undefined || options === null) return { capture: false, once: false, passive: false, signal: undefined };
    if (typeof options !== 'object' && typeof options !== 'function') {
      return { capture: Boolean(options), once: false, passive: false, signal: undefined };
    }
    const capture = Boolean(options.capture);
    const once = Boolean(options.once);
    const passive = Boolean(options.passive);
    const signal = options.signal;
    if (signal !== undefined && !isSignal(signal)) {
      throw new TypeErrorCtor("Failed to execute 'addEventListener' on 'EventTarget': member signal is not of type AbortSignal.");
    }
    return { capture, once, passive, signal };
  }
  class EventTarget {
    static { platformBrands[platformBrands.length] = ['EventTarget', (value) => #listeners in value]; }
    #listeners = new Map();
    addEventListener(type, callback, options) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to execute 'addEventListener' on 'EventTarget': 2 arguments required.");
      const { capture, once, passive, signal } = flatten(options);
      if (callback === null) return;
      if (typeof callback !== 'function' && typeof callback !== 'object') {
        throw new TypeErrorCtor("Failed to execute 'addEventListener' on 'EventTarget': parameter 2 is not of type 'Object'.");
      }
      if (signal !== undefined && signal.aborted) return;
      const key = StringCtor(type);
      let list = this.#listeners.get(key);
      if (list === undefined) {
        list = [];
        this.#listeners.set(key, list);
      }
      if (list.some((l) => l.callback === callback && l.capture === capture)) return;
      const entry = { type: key, callback, capture, once, passive, removed: false };
      list.push(entry);
      if (signal !== undefined) addAbortAlgorithm(signal, () => removeEntry(this, entry));
    }
    removeEventListener(type, callback, options) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to execute 'removeEventListener' on 'EventTarget': 2 arguments required.");
      const capture = typeof options === 'boolean' ? options
        : options !== null && typeof options === 'object' ? Boolean(options.capture) : Boolean(options);
      const list = this.#listeners.get(StringCtor(type));
      if (list === undefined) return;
      const entry = list.find((l) => l.callback === callback && l.capture === capture);
      if (entry !== undefined) removeEntry(this, entry);
    }
    dispatchEvent(event) {
      if (!isEvent(event)) throw new TypeErrorCtor("Failed to execute 'dispatchEvent' on 'EventTarget': parameter 1 is not of type 'Event'.");
      const list = this.#listeners.get(event.type);
      return dispatchTo(this, event, list === undefined ? [] : list.slice());
    }
    get [SymbolToStringTag]() { return 'EventTarget'; }
    static {
      removeEntry = (target, entry) => {
        entry.removed = true;
        const list = target.#listeners.get(entry.type);
        if (list === undefined) return;
        const index = list.indexOf(entry);
        if (index !== -1) list.splice(index, 1);
      };
    }
  }
  install('EventTarget', EventTarget);

  // ---- AbortController / AbortSignal -------------------------------------------------------
  // DOM's abort: a signal's abort algorithms (the listeners its `signal` option removes) run
  // before its `abort` event; AbortSignal.any's dependents are aborted after their source's
  // own event, each with the source's reason already set.
  const ABORT = SymbolCtor('abort');
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    #algorithms = [];
    #dependents = [];
    #sources = null;
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
      signal.#aborted = true;
      signal.#reason = reason === undefined ? new DOMExceptionCtor('This operation was aborted', 'AbortError') : reason;
      return signal;
    }
    static timeout(ms) {
      const delay = NumberCtor(ms);
      if (!NumberCtor.isFinite(delay) || delay < 0 || delay > NumberCtor.MAX_SAFE_INTEGER) {
        throw new TypeErrorCtor("Failed to execute 'timeout' on 'AbortSignal': Value is outside the 'unsigned long long' value range.");
      }
      const signal = new AbortSignal(ABORT);
      setTimeoutFn(() => signal[ABORT](new DOMExceptionCtor('The operation was aborted due to timeout', 'TimeoutError')), delay);
      return signal;
    }
    static any(signals) {
      const list = [...signals];
      for (const source of list) {
        if (!isSignal(source)) throw new TypeErrorCtor("Failed to execute 'any' on 'AbortSignal': Failed to convert value to 'AbortSignal'.");
      }
      const signal = new AbortSignal(ABORT);
      for (const source of list) {
        if (source.#aborted) {
          signal.#aborted = true;
          signal.#reason = source.#reason;
          return signal;
        }
      }
      signal.#sources = [];
      for (const source of list) {
        // A dependent signal's own sources stand in for it.
        const roots = source.#sources === null ? [source] : source.#sources;
        for (const root of roots) {
          if (root.#aborted || signal.#sources.includes(root)) continue;
          signal.#sources.push(root);
          root.#dependents.push(signal);
        }
      }
      return signal;
    }
    [ABORT](reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? new DOMExceptionCtor('This operation was aborted', 'AbortError') : reason;
      const dependents = [];
      for (const dependent of this.#dependents) {
        if (dependent.#aborted) continue;
        dependent.#aborted = true;
        dependent.#reason = this.#reason;
        dependents.push(dependent);
      }
      this.#dependents = [];
      this.#runAbortSteps();
      for (const dependent of dependents) dependent.#runAbortSteps();
    }
    #runAbortSteps() {
      const algorithms = this.#algorithms;
      this.#algorithms = [];
      for (const algorithm of algorithms) algorithm();
      this.dispatchEvent(trustedEvent('abort'));
    }
    get [SymbolToStringTag]() { return 'AbortSignal'; }
    static {
      isSignal = (value) => value !== null && typeof value === 'object' && #aborted in value;
      addAbortAlgorithm = (signal, algorithm) => { signal.#algorithms.push(algorithm); };
    }
  }
  install('AbortSignal', AbortSignal);
  class AbortController {
    static { platformBrands[platformBrands.length] = ['AbortController', (value) => #signal in value]; }
    #signal = new AbortSignal(ABORT);
    get signal() { return this.#signal; }
    abort(reason) { this.#signal[ABORT](reason); }
  }
  install('AbortController', AbortController);

  // ---- MessageChannel / MessagePort / MessageEvent ---------------------------------------
  // Two entangled ports inside the one isolate (as in a Worker, where both ends usually stay
  // in the same global). postMessage clones the message at once (structuredClone, transfers
  // included; a port cannot be transferred) and delivers it to the other port as a task
  // (a timer of 0 ms, so the run's timer bounds apply); a port delivers once started, by
  // start() or by setting onmessage. A closed port sends and receives nothing.
  class MessageEvent extends Event {
    #data;
    #origin;
    #lastEventId;
    #source;
    #ports;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'MessageEvent': 1 argument required, but only 0 present.");
      super(type, init);
      this.#data = init == null || init.data === undefined ? null : init.data;
      this.#origin = init == null || init.origin === undefined ? '' : usv(init.origin);
      this.#lastEventId = init == null || init.lastEventId === undefined ? '' : StringCtor(init.lastEventId);
      this.#source = init == null || init.source === undefined ? null : init.source;
      this.#ports = freeze(init == null || init.ports === undefined ? [] : [...init.ports]);
    }
    get data() { return this.#data; }
    get origin() { return this.#origin; }
    get lastEventId() { return this.#lastEventId; }
    get source() { return this.#source; }
    get ports() { return this.#ports; }
    get [SymbolToStringTag]() { return 'MessageEvent'; }
  }
  install('MessageEvent', MessageEvent);
  const PORT = SymbolCtor('port');
  // An event handler attribute keeps an object (a function or an EventListener) and drops
  // anything else to null.
  const eventHandler = (value) => (typeof value === 'function' || (value !== null && typeof value === 'object') ? value : null);
  let entangle;
  class MessagePort extends EventTarget {
    #other = null;
    // Messages not yet delivered: #queue[#head] onwards.
    #queue = [];
    #head = 0;
    #started = false;
    #closed = false;
    #onmessage = null;
    #onmessageerror = null;
    constructor(key) {
      super();
      if (key !== PORT) throw new TypeErrorCtor('Illegal constructor');
    }
    postMessage(message, transfer = undefined) {
      if (!(#queue in this)) throw new TypeErrorCtor("Failed to execute 'postMessage' on 'MessagePort': Illegal invocation");
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to execute 'postMessage' on 'MessagePort': 1 argument required, but only 0 present.");
      // postMessage(message, transferList) or postMessage(message, { transfer }).
      let list = [];
      if (transfer !== undefined && transfer !== null) {
        if (typeof transfer !== 'object') throw new TypeErrorCtor("Failed to execute 'postMessage' on 'MessagePort': The provided value is not of type 'StructuredSerializeOptions'.");
        list = typeof transfer[SymbolIterator] === 'function' ? [...transfer] : transfer.transfer === undefined ? [] : [...transfer.transfer];
      }
      for (let i = 0; i < list.length; i++) {
        if (list[i] === this) throw new DOMExceptionCtor('A port cannot post itself.', 'DataCloneError');
      }
      const data = structuredCloneFn(message, { transfer: list });
      const target = this.#other;
      if (this.#closed || target === null || target.#closed) return;
      target.#queue[target.#queue.length] = data;
      if (target.#started) target.#schedule();
    }
    start() {
      if (this.#started || this.#closed) return;
      this.#started = true;
      for (let i = this.#head; i < this.#queue.length; i++) this.#schedule();
    }
    close() {
      this.#closed = true;
      this.#queue = [];
      this.#head = 0;
      const other = this.#other;
      this.#other = null;
      if (other !== null) other.#other = null;
    }
    // One task per queued message, delivered in order.
    #schedule() {
      setTimeoutFn(() => {
        if (this.#closed || this.#head === this.#queue.length) return;
        const data = this.#queue[this.#head];
        this.#queue[this.#head] = undefined;
        this.#head += 1;
        if (this.#head === this.#queue.length) {
          this.#queue = [];
          this.#head = 0;
        }
        this.dispatchEvent(new MessageEvent('message', { data }));
      }, 0);
    }
    get onmessage() { return this.#onmessage; }
    set onmessage(handler) {
      this.#onmessage = eventHandler(handler);
      this.start();
    }
    get onmessageerror() { return this.#onmessageerror; }
    set onmessageerror(handler) { this.#onmessageerror = eventHandler(handler); }
    get [SymbolToStringTag]() { return 'MessagePort'; }
    static {
      entangle = (a, b) => { a.#other = b; b.#other = a; };
    }
  }
  install('MessagePort', MessagePort);
  class MessageChannel {
    static { platformBrands[platformBrands.length] = ['MessageChannel', (value) => #port1 in value]; }
    #port1 = new MessagePort(PORT);
    #port2 = new MessagePort(PORT);
    constructor() { entangle(this.#port1, this.#port2); }
    get port1() { return this.#port1; }
    get port2() { return this.#port2; }
    get [SymbolToStringTag]() { return 'MessageChannel'; }
  }
  install('MessageChannel', MessageChannel);

  const netParts = {
    AbortController,
    AbortSignal,
    isSignal: (value) => isSignal(value),
    concatChunks,
    zlib: {
      deflate: natives.deflate,
      deflateBound: natives.deflateBound,
      inflate: natives.inflate,
      // Read per call: the bound is the isolate's (set when it is restored).
      budget: () => natives.arrayBufferBudget,
    },
  };

  // ---- Headers -----------------------------------------------------------------------------
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  // Header names and values are ByteStrings (no code unit above U+00FF); a value loses its
  // leading and trailing HTTP whitespace and may not hold NUL, CR or LF.
  function normalizeValue(value) {
    const text = StringCtor(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    if (/[\u0100-\uffff]/.test(text)) throw new TypeErrorCtor(`Invalid header value (not a ByteString): ${JSON.stringify(text)}`);
    if (/[\0\r\n]/.test(text)) throw new TypeErrorCtor(`Invalid header value: ${JSON.stringify(text)}`);
    return text;
  }
  function checkName(name) {
    const text = StringCtor(name);
    if (!TOKEN.test(text)) throw new TypeErrorCtor(`Invalid header name: ${JSON.stringify(text)}`);
    return text.toLowerCase();
  }
  let freezeHeaders;
  let headersImmutable;
  const headersIterator = pairIterators('Headers');
  class Headers {
    static { platformBrands[platformBrands.length] = ['Headers', (value) => #map in value]; }
    #map = new Map();
    #immutable = false;
    // Changes so far, and the sorted-and-combined pairs of the last change iterated: an
    // iterator reads the pairs as they are at each step (the standard's "value pairs to
    // iterate over"), so a header appended while iterating is seen, without sorting again at
    // every step.
    #version = 0;
    #sorted = null;
    constructor(init) {
      if (init === undefined) return;
      if (init === null || (typeof init !== 'object' && typeof init !== 'function')) {
        throw new TypeErrorCtor("Failed to construct 'Headers': The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'.");
      }
      // A Headers init is a sequence too: its own (or a replaced) iterator gives the pairs.
      if (typeof init[SymbolIterator] === 'function') {
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
    #checkMutable() {
      if (this.#immutable) throw new TypeErrorCtor('Headers are immutable');
    }
    static {
      freezeHeaders = (headers) => { headers.#immutable = true; return headers; };
      headersImmutable = (headers) => headers.#immutable;
    }
    append(name, value) {
      const key = checkName(name);
      const text = normalizeValue(value);
      this.#checkMutable();
      const list = this.#map.get(key) || [];
      list.push(text);
      this.#map.set(key, list);
      this.#version++;
    }
    delete(name) {
      const key = checkName(name);
      this.#checkMutable();
      this.#map.delete(key);
      this.#version++;
    }
    get(name) {
      const list = this.#map.get(checkName(name));
      return list === undefined ? null : list.join(', ');
    }
    getSetCookie() { return (this.#map.get('set-cookie') || []).slice(); }
    has(name) { return this.#map.has(checkName(name)); }
    set(name, value) {
      const key = checkName(name);
      const text = normalizeValue(value);
      this.#checkMutable();
      this.#map.set(key, [text]);
      this.#version++;
    }
    forEach(callback, thisArg) {
      for (const [k, v] of this.entries()) ReflectApply(callback, thisArg, [v, k, this]);
    }
    #pairs() {
      if (this.#sorted === null || this.#sorted.version !== this.#version) {
        const pairs = [];
        for (const name of [...this.#map.keys()].sort()) {
          if (name === 'set-cookie') for (const v of this.#map.get(name)) pairs.push([name, v]);
          else pairs.push([name, this.#map.get(name).join(', ')]);
        }
        this.#sorted = { version: this.#version, pairs };
      }
      return this.#sorted.pairs;
    }
    entries() { return headersIterator('key+value', () => this.#pairs()); }
    keys() { return headersIterator('key', () => this.#pairs()); }
    values() { return headersIterator('value', () => this.#pairs()); }
    [SymbolIterator]() { return this.entries(); }
    get [SymbolToStringTag]() { return 'Headers'; }
  }
  install('Headers', Headers);

  // ---- Blob / File -------------------------------------------------------------------------
  // A Blob holds its bytes in one Uint8Array: its memory is the run's ArrayBuffer budget, so a
  // Blob built past it ends the run as memory exhausted. Parts are copied in when it is made.
  function bufferSourceBytes(value) {
    if (isArrayBuffer(value)) return new Uint8ArrayCtor(value.slice(0));
    if (isView(value)) return new Uint8ArrayCtor(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
    return null;
  }
  function concatChunks(chunks, total) {
    const out = new Uint8ArrayCtor(total);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
  // A Blob's type: lower-cased, or empty when it holds anything outside U+0020..U+007E.
  function blobType(type) {
    const text = StringCtor(type);
    return /^[\x20-\x7e]*$/.test(text) ? text.toLowerCase() : '';
  }
  let blobBytes;
  let blobBrand;
  let makeBlob;
  let fillBlob;
  class Blob {
    #bytes;
    #type;
    constructor(blobParts = undefined, options = undefined) {
      if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') {
        throw new TypeErrorCtor("Failed to construct 'Blob': The provided value is not of type 'BlobPropertyBag'.");
      }
      const endings = options == null || options.endings === undefined ? 'transparent' : StringCtor(options.endings);
      if (endings !== 'transparent' && endings !== 'native') {
        throw new TypeErrorCtor(`Failed to construct 'Blob': The provided value '${endings}' is not a valid enum value of type EndingType.`);
      }
      const type = options == null || options.type === undefined ? '' : blobType(options.type);
      const chunks = [];
      let total = 0;
      if (blobParts !== undefined) {
        if (blobParts === null || typeof blobParts !== 'object' || typeof blobParts[SymbolIterator] !== 'function') {
          throw new TypeErrorCtor("Failed to construct 'Blob': The provided value cannot be converted to a sequence.");
        }
        for (const part of blobParts) {
          let bytes;
          if (part instanceof Blob) bytes = part.#bytes;
          else {
            bytes = bufferSourceBytes(part);
            if (bytes === null) {
              let text = usv(part);
              if (endings === 'native') text = text.replace(/\r\n?/g, '\n');
              bytes = encoder.encode(text);
            }
          }
          chunks.push(bytes);
          total += bytes.length;
        }
      }
      this.#bytes = concatChunks(chunks, total);
      this.#type = type;
    }
    get size() { return this.#bytes.length; }
    get type() { return this.#type; }
    slice(start = undefined, end = undefined, contentType = undefined) {
      const size = this.#bytes.length;
      const clamp = (value, fallback) => {
        if (value === undefined) return fallback;
        let n = NumberCtor(value);
        n = NumberCtor.isNaN(n) ? 0 : Math.trunc(n);
        return n < 0 ? Math.max(size + n, 0) : Math.min(n, size);
      };
      const from = clamp(start, 0);
      const to = clamp(end, size);
      return makeBlob(this.#bytes.slice(from, Math.max(from, to)), contentType === undefined ? '' : blobType(contentType));
    }
    async text() { return decoder.decode(this.#bytes); }
    async arrayBuffer() { return this.#bytes.slice().buffer; }
    async bytes() { return this.#bytes.slice(); }
    stream() { return getStreams().bytesStream(this.#bytes); }
    get [SymbolToStringTag]() { return 'Blob'; }
    static {
      blobBytes = (blob) => blob.#bytes;
      blobBrand = (value) => #bytes in value;
      // Fills a Blob (or File) made empty with bytes the caller owns, without copying them.
      fillBlob = (blob, bytes, type) => {
        blob.#bytes = bytes;
        blob.#type = type;
        return blob;
      };
      makeBlob = (bytes, type) => fillBlob(new Blob(), bytes, type);
    }
  }
  install('Blob', Blob);

  const makeFile = (bytes, type, name, lastModified) => fillBlob(new File([], name, { lastModified }), bytes, type);
  class File extends Blob {
    #name;
    #lastModified;
    constructor(fileBits, fileName, options = undefined) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to construct 'File': 2 arguments required.");
      super(fileBits, options);
      this.#name = usv(fileName);
      this.#lastModified = options != null && options.lastModified !== undefined ? Math.trunc(NumberCtor(options.lastModified)) || 0 : DateNow();
    }
    get name() { return this.#name; }
    get lastModified() { return this.#lastModified; }
    get webkitRelativePath() { return ''; }
    get [SymbolToStringTag]() { return 'File'; }
    static {
      // structuredClone's serialization steps for Blob and File (web_clone.js reaches this
      // through natives): a copy of the bytes, the type, and a File's name and lastModified;
      // undefined for anything else.
      natives.cloneBlob = (value) => {
        if (value === null || typeof value !== 'object' || !blobBrand(value)) return undefined;
        const bytes = blobBytes(value).slice();
        if (#name in value) return makeFile(bytes, value.type, value.#name, value.#lastModified);
        return makeBlob(bytes, value.type);
      };
    }
  }
  install('File', File);

  // ---- FormData ----------------------------------------------------------------------------
  // Entries are [name, value] with value a string or a File; a Blob appended becomes a File.
  function formEntry(name, value, filename, argc) {
    const key = usv(name);
    if (value instanceof Blob) {
      const fileName = filename !== undefined ? usv(filename) : value instanceof File ? value.name : 'blob';
      if (value instanceof File && filename === undefined) return [key, value];
      return [key, makeFile(blobBytes(value), value.type, fileName, value instanceof File ? value.lastModified : DateNow())];
    }
    if (argc > 2) throw new TypeErrorCtor("Failed to execute on 'FormData': parameter 2 is not of type 'Blob'.");
    return [key, usv(value)];
  }
  let formList;
  const formIterator = pairIterators('FormData');
  class FormData {
    static { platformBrands[platformBrands.length] = ['FormData', (value) => #list in value]; }
    #list = [];
    constructor(form = undefined) {
      if (form !== undefined) throw new TypeErrorCtor("Failed to construct 'FormData': parameter 1 is not of type 'HTMLFormElement'.");
    }
    append(name, value, filename = undefined) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to execute 'append' on 'FormData': 2 arguments required.");
      this.#list.push(formEntry(name, value, filename, arguments.length));
    }
    set(name, value, filename = undefined) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to execute 'set' on 'FormData': 2 arguments required.");
      const entry = formEntry(name, value, filename, arguments.length);
      const index = this.#list.findIndex(([k]) => k === entry[0]);
      if (index === -1) this.#list.push(entry);
      else {
        this.#list[index] = entry;
        this.#list = this.#list.filter(([k], i) => k !== entry[0] || i === index);
      }
    }
    delete(name) {
      const key = usv(name);
      this.#list = this.#list.filter(([k]) => k !== key);
    }
    get(name) {
      const key = usv(name);
      const found = this.#list.find(([k]) => k === key);
      return found === undefined ? null : found[1];
    }
    getAll(name) {
      const key = usv(name);
      return this.#list.filter(([k]) => k === key).map(([, v]) => v);
    }
    has(name) {
      const key = usv(name);
      return this.#list.some(([k]) => k === key);
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== 'function') throw new TypeErrorCtor("Failed to execute 'forEach' on 'FormData': The callback provided as parameter 1 is not a function.");
      for (let i = 0; i < this.#list.length; i++) ReflectApply(callback, thisArg, [this.#list[i][1], this.#list[i][0], this]);
    }
    entries() { return formIterator('key+value', () => this.#list); }
    keys() { return formIterator('key', () => this.#list); }
    values() { return formIterator('value', () => this.#list); }
    [SymbolIterator]() { return this.entries(); }
    get [SymbolToStringTag]() { return 'FormData'; }
    static {
      formList = (form) => form.#list;
    }
  }
  install('FormData', FormData);

  // multipart/form-data (HTML's encoding algorithm): names and string values get CRLF line
  // breaks; names and filenames escape CR, LF and '"'. The boundary is chosen so it occurs in no entry (no randomness).
  let boundaryCount = 0;
  const toCRLF = (text) => text.replace(/\r\n|\r(?!\n)|\n/g, '\r\n');
  function escapeMultipartName(name) {
    return name.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
  }
  function containsBytes(haystack, needle) {
    outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
      for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  }
  function encodeMultipart(form) {
    const parts = formList(form).map(([name, value]) => {
      const escaped = escapeMultipartName(toCRLF(name));
      if (typeof value === 'string') {
        return [`Content-Disposition: form-data; name="${escaped}"\r\n\r\n`, encoder.encode(toCRLF(value))];
      }
      const type = value.type === '' ? 'application/octet-stream' : value.type;
      return [`Content-Disposition: form-data; name="${escaped}"; filename="${escapeMultipartName(value.name)}"\r\nContent-Type: ${type}\r\n\r\n`, blobBytes(value)];
    });
    let boundary;
    for (;;) {
      boundary = '----CodemodeFormBoundary' + (boundaryCount++).toString(36).padStart(8, '0');
      const marker = encoder.encode(boundary);
      if (!parts.some(([head, bytes]) => head.includes(boundary) || containsBytes(bytes, marker))) break;
    }
    const chunks = [];
    let total = 0;
    const add = (bytes) => { chunks.push(bytes); total += bytes.length; };
    for (const [head, bytes] of parts) {
      add(encoder.encode(`--${boundary}\r\n${head}`));
      add(bytes);
      add(encoder.encode('\r\n'));
    }
    add(encoder.encode(`--${boundary}--\r\n`));
    return { bytes: concatChunks(chunks, total), type: `multipart/form-data; boundary=${boundary}` };
  }

  // A MIME type as MIME Sniffing parses it: { essence, params } (lowercase essence, parameter
  // names lowercased, the first of a repeated name kept), or null where the text is not one.
  const HTTP_SPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
  const MIME_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
  function parseMime(input) {
    const text = StringCtor(input).replace(HTTP_SPACE, '');
    const slash = text.indexOf('/');
    if (slash === -1) return null;
    const type = text.slice(0, slash);
    let at = text.indexOf(';', slash + 1);
    if (at === -1) at = text.length;
    const subtype = text.slice(slash + 1, at).replace(/[\t\n\r ]+$/, '');
    if (!TOKEN.test(type) || !TOKEN.test(subtype)) return null;
    const params = new Map();
    while (at < text.length) {
      at += 1; // the ';'
      while (at < text.length && '\t\n\r '.includes(text[at])) at += 1;
      let end = at;
      while (end < text.length && text[end] !== ';' && text[end] !== '=') end += 1;
      const name = text.slice(at, end).toLowerCase();
      at = end;
      if (at < text.length && text[at] === ';') continue;
      at += 1; // the '='
      if (at >= text.length) break;
      let value = '';
      if (text[at] === '"') {
        // An HTTP quoted string: a backslash escapes the next code point; what follows the
        // closing quote up to the next ';' is ignored.
        at += 1;
        while (at < text.length && text[at] !== '"') {
          if (text[at] === '\\' && at + 1 < text.length) at += 1;
          value += text[at];
          at += 1;
        }
        while (at < text.length && text[at] !== ';') at += 1;
      } else {
        end = text.indexOf(';', at);
        if (end === -1) end = text.length;
        value = text.slice(at, end).replace(/[\t\n\r ]+$/, '');
        at = end;
        if (value === '') continue;
      }
      if (name !== '' && TOKEN.test(name) && MIME_VALUE.test(value) && !params.has(name)) params.set(name, value);
    }
    return { essence: `${type}/${subtype}`.toLowerCase(), params };
  }
  function serializeMime(mime) {
    let out = mime.essence;
    for (const [name, value] of mime.params) {
      out += `;${name}=${value !== '' && TOKEN.test(value) ? value : `"${value.replace(/(["\\])/g, '\\$1')}"`}`;
    }
    return out;
  }
  // Fetch's "extract a MIME type" from one header value: its comma-separated parts (commas in
  // quoted strings do not split), the last that parses wins, keeping an earlier charset of the
  // same essence. null where none parses.
  function extractMime(headerValue) {
    const values = [];
    let current = '';
    let quoted = false;
    for (let i = 0; i < headerValue.length; i++) {
      const c = headerValue[i];
      if (quoted && c === '\\' && i + 1 < headerValue.length) {
        current += c + headerValue[++i];
        continue;
      }
      if (c === '"') quoted = !quoted;
      if (c === ',' && !quoted) {
        values.push(current);
        current = '';
      } else {
        current += c;
      }
    }
    values.push(current);
    let mime = null;
    let charset = null;
    for (const value of values) {
      const next = parseMime(value);
      if (next === null || next.essence === '*/*') continue;
      if (mime === null || next.essence !== mime.essence) charset = null;
      if (next.params.has('charset')) charset = next.params.get('charset');
      else if (charset !== null) next.params.set('charset', charset);
      mime = next;
    }
    return mime;
  }
  function indexOfBytes(haystack, needle, from) {
    outer: for (let i = from; i + needle.length <= haystack.length; i++) {
      for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
      return i;
    }
    return -1;
  }
  function parseDispositionParam(header, name) {
    const re = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]*)`, 'i');
    const match = re.exec(header);
    if (match === null) return null;
    return match[1] !== undefined ? match[1] : match[2];
  }
  const badForm = () => new TypeErrorCtor('Failed to parse body as FormData.');
  const CR = 0x0d;
  const LF = 0x0a;
  const DASH = 0x2d;
  const CRLF = encoder.encode('\r\n');
  const isPadding = (byte) => byte === 0x20 || byte === 0x09;
  // multipart/form-data (RFC 7578 as the Fetch standard reads it): the body starts with the
  // first delimiter (no preamble); a delimiter is CRLF "--" boundary, then transport padding
  // (spaces, tabs) and CRLF, or "--" for the last one, then padding and CRLF or the end (what
  // follows is the epilogue). A part's header lines end in CRLF, name a token, hold no NUL, CR
  // or LF; its name and filename are taken as written (no percent-decoding). A file part's type
  // is its Content-Type as a MIME type ('' when that is not one, text/plain when there is none).
  function parseMultipart(bytes, boundary) {
    const form = new FormData();
    const delimiter = encoder.encode('--' + boundary);
    // Where the delimiter at `at` (at its "--") ends: past its CRLF, or -1 for the close
    // delimiter; null when the bytes there are no delimiter.
    const delimiterEnd = (at) => {
      let end = at + delimiter.length;
      if (bytes[end] === DASH && bytes[end + 1] === DASH) {
        end += 2;
        while (isPadding(bytes[end])) end += 1;
        return end === bytes.length || (bytes[end] === CR && bytes[end + 1] === LF) ? -1 : null;
      }
      while (isPadding(bytes[end])) end += 1;
      return bytes[end] === CR && bytes[end + 1] === LF ? end + 2 : null;
    };
    if (indexOfBytes(bytes.subarray(0, delimiter.length), delimiter, 0) !== 0) throw badForm();
    let at = delimiterEnd(0);
    if (at === null) throw badForm();
    const bodyDelimiter = encoder.encode('\r\n--' + boundary);
    while (at !== -1) {
      let name = null;
      let filename = null;
      let type = null;
      for (;;) {
        const lineEnd = indexOfBytes(bytes, CRLF, at);
        if (lineEnd === -1) throw badForm();
        const line = bytes.subarray(at, lineEnd);
        at = lineEnd + 2;
        if (line.length === 0) break;
        if (line.includes(0) || line.includes(CR) || line.includes(LF)) throw badForm();
        const text = decoder.decode(line);
        const colon = text.indexOf(':');
        // Spaces and tabs around the name are dropped; what is left must be a token.
        const key = colon === -1 ? '' : text.slice(0, colon).replace(/^[\t ]+|[\t ]+$/g, '').toLowerCase();
        if (!TOKEN.test(key)) throw badForm();
        const value = text.slice(colon + 1).replace(/^[\t ]+|[\t ]+$/g, '');
        if (key === 'content-disposition') {
          if (!/^form-data\b/i.test(value)) throw badForm();
          name = parseDispositionParam(value, 'name');
          filename = parseDispositionParam(value, 'filename');
        } else if (key === 'content-type') {
          const mime = extractMime(value);
          type = mime === null ? '' : serializeMime(mime);
        }
      }
      if (name === null) throw badForm();
      const bodyStart = at;
      let next = bodyStart;
      for (;;) {
        next = indexOfBytes(bytes, bodyDelimiter, next);
        if (next === -1) throw badForm();
        at = delimiterEnd(next + 2);
        if (at !== null) break;
        next += 1;
      }
      const body = bytes.slice(bodyStart, next);
      if (filename !== null) {
        form.append(name, makeFile(body, type === null ? 'text/plain' : type, filename, 0));
      } else {
        form.append(name, decoder.decode(body));
      }
    }
    return form;
  }
  function parseFormBody(bytes, contentType) {
    const mime = contentType === null ? null : parseMime(contentType);
    if (mime !== null && mime.essence === 'multipart/form-data') {
      const boundary = mime.params.get('boundary');
      if (boundary === undefined || boundary === '') throw badForm();
      return parseMultipart(bytes, boundary);
    }
    if (mime !== null && mime.essence === 'application/x-www-form-urlencoded') {
      const form = new FormData();
      for (const [k, v] of new (urlClasses().URLSearchParams)(decoder.decode(bytes))) form.append(k, v);
      return form;
    }
    throw new TypeErrorCtor(`Content-Type ${contentType === null ? '(none)' : JSON.stringify(contentType)} is not multipart/form-data or application/x-www-form-urlencoded`);
  }

  // ---- Bodies ------------------------------------------------------------------------------
  // Returns { bytes, type } (or { stream, type } for a ReadableStream) for a body init, or null
  // for no body.
  function extractBody(body) {
    if (body === undefined || body === null) return null;
    const loaded = loadedStreams();
    if (loaded !== null && body instanceof loaded.ReadableStream) {
      if (loaded.isDisturbed(body) || loaded.isLocked(body)) throw new TypeErrorCtor('The body stream is disturbed or locked');
      return { bytes: null, stream: body, type: null };
    }
    if (typeof body === 'string') return { bytes: encoder.encode(body), type: 'text/plain;charset=UTF-8' };
    if (isSearchParams(body)) return { bytes: encoder.encode(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
    if (body instanceof Blob) return { bytes: blobBytes(body), type: body.type === '' ? null : body.type };
    if (body instanceof FormData) return encodeMultipart(body);
    if (isArrayBuffer(body)) return { bytes: new Uint8ArrayCtor(body.slice(0)), type: null };
    if (isView(body)) return { bytes: new Uint8ArrayCtor(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), type: null };
    return { bytes: encoder.encode(StringCtor(body)), type: 'text/plain;charset=UTF-8' };
  }
  // A body is bytes (BODY) until its `body` stream is asked for; from then on, or when it was
  // made from a ReadableStream, the stream (STREAM) is the body and reading it disturbs it.
  const BODY = SymbolCtor('body');
  const STREAM = SymbolCtor('stream');
  const USED = SymbolCtor('used');
  function setBody(holder, extracted) {
    holder[BODY] = extracted === null ? null : extracted.bytes;
    holder[STREAM] = extracted === null || extracted.stream === undefined ? null : extracted.stream;
    holder[USED] = false;
  }
  function hasBody(holder) {
    return holder[BODY] !== null || holder[STREAM] !== null;
  }
  function bodyUsed(holder) {
    return holder[STREAM] !== null ? getStreams().isDisturbed(holder[STREAM]) : holder[USED];
  }
  function bodyUnusable(holder) {
    return hasBody(holder) && (bodyUsed(holder) || (holder[STREAM] !== null && getStreams().isLocked(holder[STREAM])));
  }
  // Gives `to` a body equal to `from`'s: a tee of a stream, or the same (immutable) bytes.
  function cloneBody(from, to) {
    to[BODY] = from[BODY];
    to[USED] = false;
    to[STREAM] = null;
    if (from[STREAM] !== null) {
      const [a, b] = from[STREAM].tee();
      from[STREAM] = a;
      to[STREAM] = b;
    }
  }
  const bodyMethods = {
    get bodyUsed() { return bodyUsed(this); },
    get body() {
      if (!hasBody(this)) return null;
      if (this[STREAM] === null) this[STREAM] = this[USED] ? getStreams().usedStream() : getStreams().bytesStream(this[BODY]);
      return this[STREAM];
    },
    async arrayBuffer() { return (await consume(this)).buffer; },
    async bytes() { return consume(this); },
    async text() { return decoder.decode(await consume(this)); },
    async json() { return jsonParse(decoder.decode(await consume(this))); },
    async blob() {
      const bytes = await consume(this);
      const type = this.headers.get('content-type');
      return makeBlob(bytes, type === null ? '' : blobType(type));
    },
    async formData() { return parseFormBody(await consume(this), this.headers.get('content-type')); },
  };
  // A null body reads as empty and is never used up (Fetch: bodyUsed needs a body). The checks
  // and the reader's lock happen before the first await, so a second read is refused.
  async function consume(holder) {
    const stream = holder[STREAM];
    if (stream !== null) {
      if (getStreams().isDisturbed(stream) || getStreams().isLocked(stream)) throw new TypeErrorCtor('Body has already been used');
      return getStreams().readAllBytes(stream);
    }
    const bytes = holder[BODY];
    if (bytes === null) return new Uint8ArrayCtor(0);
    if (holder[USED]) throw new TypeErrorCtor('Body has already been used');
    holder[USED] = true;
    return bytes.slice();
  }
  function mixBody(Ctor) {
    for (const key of getOwnPropertyNames(bodyMethods)) {
      defineProperty(Ctor.prototype, key, getOwnPropertyDescriptor(bodyMethods, key));
    }
  }

  // ---- Request -----------------------------------------------------------------------------
  // Fetch normalizes these methods' case (not PATCH's) and forbids CONNECT, TRACE and TRACK.
  const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
  const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];
  const REDIRECTS = ['follow', 'error', 'manual'];
  class Request {
    static { platformBrands[platformBrands.length] = ['Request', (value) => #url in value]; }
    #url;
    #method;
    #headers;
    #signal;
    #redirect;
    constructor(input, init = {}) {
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'Request': 1 argument required, but only 0 present.");
      if (init === null) init = {};
      if (typeof init !== 'object' && typeof init !== 'function') {
        throw new TypeErrorCtor("Failed to construct 'Request': The provided value is not of type 'RequestInit'.");
      }
      const source = input instanceof Request ? input : null;
      if (source) {
        this.#url = source.url;
      } else {
        let parsed;
        try { parsed = parseUrl(StringCtor(input)); } catch { throw new TypeErrorCtor(`Failed to parse URL from ${StringCtor(input)}`); }
        if (parsed.username !== '' || parsed.password !== '') {
          throw new TypeErrorCtor(`Request cannot be constructed from a URL that includes credentials: ${StringCtor(input)}`);
        }
        this.#url = parsed.href;
      }
      let method = init.method !== undefined ? StringCtor(init.method) : source ? source.method : 'GET';
      if (!TOKEN.test(method)) throw new TypeErrorCtor(`'${method}' is not a valid HTTP method.`);
      const upper = method.toUpperCase();
      if (FORBIDDEN_METHODS.includes(upper)) throw new TypeErrorCtor(`'${method}' HTTP method is unsupported.`);
      if (METHODS.includes(upper)) method = upper;
      this.#method = method;
      this.#headers = new Headers(init.headers !== undefined ? init.headers : source ? source.headers : undefined);
      if (init.signal !== undefined && init.signal !== null && !isSignal(init.signal)) {
        throw new TypeErrorCtor("Failed to construct 'Request': member signal is not of type AbortSignal.");
      }
      this.#signal = init.signal !== undefined && init.signal !== null ? init.signal : source ? source.signal : new AbortController().signal;
      const redirect = init.redirect !== undefined ? StringCtor(init.redirect) : source ? source.redirect : 'follow';
      if (!REDIRECTS.includes(redirect)) {
        throw new TypeErrorCtor(`Failed to construct 'Request': The provided value '${redirect}' is not a valid enum value of type RequestRedirect.`);
      }
      this.#redirect = redirect;
      if (init.body !== undefined && init.body !== null) {
        if (method === 'GET' || method === 'HEAD') throw new TypeErrorCtor('Request with GET/HEAD method cannot have body.');
        const extracted = extractBody(init.body);
        if (extracted.stream !== undefined && init.duplex !== 'half') {
          throw new TypeErrorCtor("Failed to construct 'Request': The duplex member must be 'half' when the body is a ReadableStream.");
        }
        if (extracted.type && !this.#headers.has('content-type')) this.#headers.set('content-type', extracted.type);
        setBody(this, extracted);
      } else if (source && hasBody(source)) {
        // The new request takes the source's body; the source is used up (Fetch's constructor).
        if (bodyUnusable(source)) throw new TypeErrorCtor('Cannot construct a Request from one whose body is used');
        cloneBody(source, this);
        if (source[STREAM] !== null) source[STREAM] = getStreams().usedStream();
        else source[USED] = true;
      } else {
        setBody(this, null);
      }
    }
    get url() { return this.#url; }
    get method() { return this.#method; }
    get headers() { return this.#headers; }
    get signal() { return this.#signal; }
    get redirect() { return this.#redirect; }
    clone() {
      if (bodyUnusable(this)) throw new TypeErrorCtor('Body has already been used');
      const copy = new Request(this.#url, { method: this.#method, headers: this.#headers, signal: this.#signal, redirect: this.#redirect });
      cloneBody(this, copy);
      return copy;
    }
    get [SymbolToStringTag]() { return 'Request'; }
  }
  mixBody(Request);
  install('Request', Request);

  // ---- Response ----------------------------------------------------------------------------
  const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
  // HTTP's reason-phrase: tab, space, visible ASCII and obs-text.
  const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;
  // Response.json hands its extracted body to the constructor under this key.
  const JSON_BODY = SymbolCtor('json body');
  class Response {
    static { platformBrands[platformBrands.length] = ['Response', (value) => #status in value]; }
    #status;
    #statusText;
    #headers;
    #url = '';
    #type = 'default';
    constructor(body = null, init = {}) {
      if (init === null) init = {};
      if (typeof init !== 'object' && typeof init !== 'function') {
        throw new TypeErrorCtor("Failed to construct 'Response': The provided value is not of type 'ResponseInit'.");
      }
      const extracted = body === JSON_BODY ? init[JSON_BODY] : extractBody(body);
      const status = init.status === undefined ? 200 : NumberCtor(init.status);
      if (!(status >= 200 && status <= 599) || status !== Math.floor(status)) {
        throw new RangeErrorCtor(`The status provided (${init.status}) is outside the range [200, 599].`);
      }
      const statusText = init.statusText === undefined ? '' : StringCtor(init.statusText);
      if (!REASON_PHRASE.test(statusText)) throw new TypeErrorCtor(`Invalid statusText: ${jsonStringify(statusText)}`);
      if (extracted !== null && NULL_BODY_STATUSES.includes(status)) {
        throw new TypeErrorCtor(`Response with null body status (${status}) cannot have body`);
      }
      this.#status = status;
      this.#statusText = statusText;
      this.#headers = new Headers(init.headers);
      if (extracted && extracted.type && !this.#headers.has('content-type')) this.#headers.set('content-type', extracted.type);
      setBody(this, extracted);
    }
    static json(data, init = {}) {
      const text = jsonStringify(data);
      if (text === undefined) throw new TypeErrorCtor('Value is not JSON serializable');
      if (init === null || init === undefined) init = {};
      if (typeof init !== 'object' && typeof init !== 'function') {
        throw new TypeErrorCtor("Failed to execute 'json' on 'Response': The provided value is not of type 'ResponseInit'.");
      }
      // The caller's content-type, if any, stands: the body's type only fills a gap.
      return new Response(JSON_BODY, {
        status: init.status, statusText: init.statusText, headers: init.headers,
        [JSON_BODY]: { bytes: encoder.encode(text), type: 'application/json' },
      });
    }
    static error() {
      const response = new Response(null, { status: 200 });
      response.#status = 0;
      response.#type = 'error';
      freezeHeaders(response.#headers);
      return response;
    }
    static redirect(url, status = 302) {
      const code = NumberCtor(status);
      const location = parseUrl(StringCtor(url)).href;
      if (![301, 302, 303, 307, 308].includes(code)) throw new RangeErrorCtor(`Invalid status code ${status}`);
      const response = new Response(null, { status: code, headers: { location } });
      freezeHeaders(response.#headers);
      return response;
    }
    // Builds the Response of an outbound reply.
    static fromHost(reply) {
      const response = new Response(null, { status: 200, headers: reply.headers });
      freezeHeaders(response.#headers);
      response.#status = reply.status;
      response.#statusText = reply.statusText;
      response.#url = reply.url;
      response.#type = 'basic';
      setBody(response, reply.body === null ? null : { bytes: reply.body });
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
      if (bodyUnusable(this)) throw new TypeErrorCtor('Body has already been used');
      const copy = new Response(null, { status: 200, headers: this.#headers });
      if (headersImmutable(this.#headers)) freezeHeaders(copy.#headers);
      copy.#status = this.#status;
      copy.#statusText = this.#statusText;
      copy.#url = this.#url;
      copy.#type = this.#type;
      cloneBody(this, copy);
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
    const body = request[STREAM] !== null ? await getStreams().readAllBytes(request[STREAM]) : request[BODY];
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

  return netParts;
})
