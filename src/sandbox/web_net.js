// The snapshot's part of the sandbox's network-shaped Web globals (URL, URLSearchParams,
// Event/EventTarget, AbortController/AbortSignal, Headers, Request, Response, fetch, Blob, File,
// FormData, MessageChannel) and of the streams: an accessor per name, and the intrinsics those
// globals use, captured here before any program can replace them. The globals themselves are in
// web_url_globals.js, web_net_globals.js and web_streams.js, which natives.loadScript compiles
// when a run first reads one of their names. `fetch` rejects with workerd's not-permitted message unless the run has an
// outbound handler, in which case each request travels to the host as a tool call of the
// internal "#outbound" namespace.
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
  const structuredCloneFn = global.structuredClone;
  const freeze = Object.freeze;
  const SymbolCtor = Symbol;
  const SymbolToStringTag = Symbol.toStringTag;
  // The run's clock, read at call time (a File's default lastModified).
  const DateNow = () => global.Date.now();
  const { getOwnPropertyNames, getOwnPropertyDescriptor } = Object;
  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][SymbolIterator]()));
  const setPrototypeOf = Object.setPrototypeOf;
  const stringToWellFormed = String.prototype.toWellFormed;
  // Web IDL's USVString: a string with lone surrogates replaced by U+FFFD.
  function usv(value) {
    const text = StringCtor(value);
    return typeof stringToWellFormed === 'function' ? ReflectApply(stringToWellFormed, text, []) : text;
  }

  function install(name, value) {
    defineProperty(global, name, { value, writable: true, enumerable: false, configurable: true });
  }

  // [interface name, brand check] of the platform objects structuredClone refuses (HTML: they
  // are not serializable), filled by the scripts below as they load; Blob and File, which are
  // serializable, clone through natives.cloneBlob. A subclass (CustomEvent, AbortSignal,
  // MessagePort, ...) answers to its base class's check.
  const platformBrands = [];
  natives.platformObjectName = (value) => {
    if (value === null || typeof value !== 'object') return undefined;
    for (let i = 0; i < platformBrands.length; i++) if (platformBrands[i][1](value)) return platformBrands[i][0];
    return undefined;
  };

  // Web IDL's pair iterators (Headers, URLSearchParams, FormData): objects of a "<name>
  // Iterator" prototype that inherits %IteratorPrototype%, reading the object's pairs as they
  // are at each step (an entry appended while iterating is seen). `pairsOf()` returns the
  // current [name, value] pairs; kind is 'key', 'value' or 'key+value'.
  function pairIterators(name) {
    class PairIterator {
      #kind;
      #pairsOf;
      #index = 0;
      constructor(kind, pairsOf) {
        this.#kind = kind;
        this.#pairsOf = pairsOf;
      }
      next() {
        if (!(#kind in this)) throw new TypeErrorCtor(`next() called on an object that is not a ${name} Iterator`);
        const pairs = this.#pairsOf();
        if (this.#index >= pairs.length) return { value: undefined, done: true };
        const pair = pairs[this.#index++];
        const value = this.#kind === 'key' ? pair[0] : this.#kind === 'value' ? pair[1] : [pair[0], pair[1]];
        return { value, done: false };
      }
    }
    const proto = PairIterator.prototype;
    setPrototypeOf(proto, IteratorPrototype);
    delete proto.constructor;
    defineProperty(proto, 'next', { enumerable: true });
    defineProperty(proto, SymbolToStringTag, { value: `${name} Iterator`, configurable: true });
    return (kind, pairsOf) => new PairIterator(kind, pairsOf);
  }

  // These globals are built on first use, not in every isolate: they are a fifth of what a
  // fresh isolate costs to deserialize (measured), and most programs only call their tools.
  // Until then each name is an accessor; reading any of them runs its group's installer once,
  // which replaces all of the group's names with the usual writable data properties. A name the
  // program assigned or deleted before that keeps what the program did. The streams are a group
  // of their own, whose script is not even in the snapshot (natives.loadScript compiles
  // web_streams.js when first needed): it would cost every fresh isolate about 0.15 ms to
  // deserialize (measured), and URL or Headers do not need it. URL and URLSearchParams are a
  // group of their own too (web_url_globals.js), which the others load when they need it: a run's
  // first URL then loads a tenth of the code, and reading a Response body does not load URL.
  const URL_NAMES = ['URLSearchParams', 'URL'];
  const NAMES = ['Event', 'EventTarget', 'AbortSignal', 'AbortController',
    'Headers', 'Request', 'Response', 'fetch', 'Blob', 'File', 'FormData', 'CustomEvent', 'MessageChannel',
    'MessagePort', 'MessageEvent'];
  const STREAM_NAMES = ['ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest',
    'ReadableStreamDefaultController', 'ReadableByteStreamController', 'WritableStream',
    'WritableStreamDefaultWriter', 'WritableStreamDefaultController', 'TransformStream',
    'TransformStreamDefaultController', 'ByteLengthQueuingStrategy', 'CountQueuingStrategy',
    'TextEncoderStream', 'TextDecoderStream', 'CompressionStream', 'DecompressionStream'];
  // Defines the accessors of one group; returns the function that installs the group once.
  function lazyGroup(names, installer) {
    const getters = [];
    let installed = false;
    function materialize() {
      if (installed) return;
      installed = true;
      const kept = [];
      for (let i = 0; i < names.length; i++) {
        const descriptor = getOwnPropertyDescriptor(global, names[i]);
        if (descriptor === undefined || descriptor.get !== getters[i]) kept.push([names[i], descriptor]);
      }
      installer();
      for (const [name, descriptor] of kept) {
        if (descriptor === undefined) delete global[name];
        else defineProperty(global, name, descriptor);
      }
    }
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      getters[i] = getOwnPropertyDescriptor({
        get [name]() {
          materialize();
          // Still this accessor only if the installer failed part-way (the run is being stopped).
          const now = getOwnPropertyDescriptor(global, name);
          return now !== undefined && now.get === getters[i] ? undefined : global[name];
        },
      }, name).get;
      defineProperty(global, name, {
        get: getters[i],
        set(value) {
          install(name, value);
        },
        enumerable: false,
        configurable: true,
      });
    }
    return materialize;
  }
  // The URL classes (web_url_globals.js returns them), once loaded.
  let urlClassesLoaded = null;
  const materializeUrl = lazyGroup(URL_NAMES, () => {
    urlClassesLoaded = natives.loadScript('url', {
      natives, ReflectApply, StringCtor, TypeErrorCtor, SymbolIterator, SymbolToStringTag,
      pairIterators, install, platformBrands, usv,
    });
  });
  // The URL classes, loading them if needed.
  function urlClasses() {
    if (urlClassesLoaded === null) materializeUrl();
    return urlClassesLoaded;
  }
  const materialize = lazyGroup(NAMES, installNet);
  // Set by installNet: what the streams need from it.
  let netParts = null;
  // The streams' API for the bodies (web_streams.js returns it), once loaded.
  let streams = null;
  // The intrinsics web_streams.js uses, captured here, in the snapshot, before any program can
  // replace them: that script is compiled during a run.
  const streamIntrinsics = {
    Object: { defineProperty, getPrototypeOf: Object.getPrototypeOf, create: Object.create },
    ReflectApply,
    Promise,
    promiseThen: Promise.prototype.then,
    promiseResolve: Promise.resolve,
    promiseReject: Promise.reject,
    promiseAll: Promise.all,
    TypeError: TypeErrorCtor,
    RangeError: RangeErrorCtor,
    Number: NumberCtor,
    String: StringCtor,
    Uint8Array: Uint8ArrayCtor,
    isView,
    Symbol: SymbolCtor,
    SymbolAsyncIterator: Symbol.asyncIterator,
    SymbolIterator,
    SymbolToStringTag,
    AsyncIteratorPrototype: Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype),
    bufferByteLength,
    TextEncoder: global.TextEncoder,
    TextDecoder: global.TextDecoder,
    queueMicrotask: global.queueMicrotask,
    MathFloor: Math.floor,
    WeakMap,
    ArrayBuffer,
    DataView,
    // Byte streams transfer buffers and make views of a reader's own kind.
    bufferTransfer: ArrayBuffer.prototype.transfer,
    bufferDetached: Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached').get,
    typedArrayTag: Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), SymbolToStringTag).get,
    TYPED_ARRAYS: {
      Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
      Float32Array, Float64Array, BigInt64Array, BigUint64Array,
      ...(typeof Float16Array === 'function' ? { Float16Array } : {}),
    },
  };
  const materializeStreams = lazyGroup(STREAM_NAMES, () => {
    materialize();
    streams = natives.loadScript('streams', streamIntrinsics, netParts);
    for (const [name, value] of streams.globals) install(name, value);
  });
  // The streams' API, loading them if needed.
  function getStreams() {
    if (streams === null) materializeStreams();
    return streams;
  }

  // Runs on first use: web_net_globals.js installs the globals with what it is given here and
  // returns what the streams need from it. Its `fetch` reads the run's configuration from
  // `natives.outbound`, which prepareRun sets.
  function installNet() {
    netParts = natives.loadScript('net', {
      global, natives, defineProperty, ReflectApply, StringCtor, NumberCtor, ErrorCtor, TypeErrorCtor,
      RangeErrorCtor, SymbolIterator, Uint8ArrayCtor, isView, jsonParse, jsonStringify, bufferByteLength,
      codec, encoder, decoder, DOMExceptionCtor, setTimeoutFn, structuredCloneFn, freeze, SymbolCtor,
      SymbolToStringTag, DateNow, getOwnPropertyNames, getOwnPropertyDescriptor, pairIterators,
      getStreams, loadedStreams: () => streams, install, platformBrands, usv, urlClasses,
      loadedUrlClasses: () => urlClassesLoaded,
    });
  }

  return {};
})
