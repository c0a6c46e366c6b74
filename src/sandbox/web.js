// The Web platform globals model code expects from Workers (docs/cloudflare-compat.md §2.15), implemented inside the
// sandbox with nothing of the host behind them. Evaluated once per context right after
// bootstrap.js, as a function expression receiving the same natives; returns the helpers the
// worker calls (fireTimer). Timers live only as long as the run: the worker drops them with
// the isolate.
(function installWeb(natives) {
  'use strict';
  const global = globalThis;
  const { defineProperty, getPrototypeOf } = Object;
  const ReflectApply = Reflect.apply;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const StringCtor = String;
  const NumberCtor = Number;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const MapCtor = Map;
  const DateCtor = Date;
  const Uint8ArrayCtor = Uint8Array;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const PromiseReject = Promise.reject.bind(Promise);
  const isView = ArrayBuffer.isView;
  const fromCharCode = String.fromCharCode;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const TypedArray = getPrototypeOf(Uint8Array);
  const typedArrayTag = Object.getOwnPropertyDescriptor(TypedArray.prototype, Symbol.toStringTag).get;
  const typedArraySet = TypedArray.prototype.set;
  const typedArraySubarray = TypedArray.prototype.subarray;
  const arrayIncludes = Array.prototype.includes;
  const nativeLog = natives.log;
  const codec = natives.codec;
  const LOG_ERROR = 2;

  function install(name, value) {
    defineProperty(global, name, { value, writable: true, enumerable: false, configurable: true });
  }

  // Returns true when `fn.call(value)` does not throw: the language's own brand checks.
  function branded(fn, value) {
    try {
      ReflectApply(fn, value, []);
      return true;
    } catch {
      return false;
    }
  }

  // ---- DOMException ----------------------------------------------------------------------------
  // A Web IDL interface (name, message, code and cause are brand-checked getters on the prototype,
  // the constants are on both the interface and its prototype) whose instances are real Error
  // objects (Error.prototype below DOMException.prototype, Error.isError true, a stack), while the
  // interface itself inherits from Function.prototype, not from Error.
  // WebIDL's constants, in order, and the names that carry a legacy code.
  const DOM_CONSTANTS = [
    'INDEX_SIZE_ERR', 'DOMSTRING_SIZE_ERR', 'HIERARCHY_REQUEST_ERR', 'WRONG_DOCUMENT_ERR', 'INVALID_CHARACTER_ERR',
    'NO_DATA_ALLOWED_ERR', 'NO_MODIFICATION_ALLOWED_ERR', 'NOT_FOUND_ERR', 'NOT_SUPPORTED_ERR', 'INUSE_ATTRIBUTE_ERR',
    'INVALID_STATE_ERR', 'SYNTAX_ERR', 'INVALID_MODIFICATION_ERR', 'NAMESPACE_ERR', 'INVALID_ACCESS_ERR',
    'VALIDATION_ERR', 'TYPE_MISMATCH_ERR', 'SECURITY_ERR', 'NETWORK_ERR', 'ABORT_ERR', 'URL_MISMATCH_ERR',
    'QUOTA_EXCEEDED_ERR', 'TIMEOUT_ERR', 'INVALID_NODE_TYPE_ERR', 'DATA_CLONE_ERR',
  ];
  const DOM_CODES = new MapCtor([
    ['IndexSizeError', 1], ['HierarchyRequestError', 3], ['WrongDocumentError', 4], ['InvalidCharacterError', 5],
    ['NoModificationAllowedError', 7], ['NotFoundError', 8], ['NotSupportedError', 9], ['InUseAttributeError', 10],
    ['InvalidStateError', 11], ['SyntaxError', 12], ['InvalidModificationError', 13], ['NamespaceError', 14],
    ['InvalidAccessError', 15], ['TypeMismatchError', 17], ['SecurityError', 18], ['NetworkError', 19],
    ['AbortError', 20], ['URLMismatchError', 21], ['QuotaExceededError', 22], ['TimeoutError', 23],
    ['InvalidNodeTypeError', 24], ['DataCloneError', 25],
  ]);
  const ReflectConstruct = Reflect.construct;
  const domStates = new WeakMap();
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;
  function domState(self, member) {
    const state = ReflectApply(weakGet, domStates, [self]);
    if (state === undefined) throw new TypeErrorCtor(`Illegal invocation: DOMException.prototype.${member} read on an object that is not a DOMException`);
    return state;
  }
  class DOMException {
    // new DOMException(message, name) or new DOMException(message, { name, cause }).
    constructor(message = undefined, options = undefined) {
      const state = { message: message === undefined ? '' : StringCtor(message), name: 'Error', cause: undefined };
      if (options === null || typeof options === 'object' || typeof options === 'function') {
        // A dictionary: its members are read in the order of their names.
        const cause = options == null ? undefined : options.cause;
        const name = options == null ? undefined : options.name;
        state.cause = cause;
        if (name !== undefined) state.name = StringCtor(name);
      } else if (options !== undefined) {
        state.name = StringCtor(options);
      }
      const code = ReflectApply(mapGet, DOM_CODES, [state.name]);
      state.code = code === undefined ? 0 : code;
      // Made with the message so that its stack begins "<name>: <message>"; the own message
      // property Error adds is then removed (message is the prototype's getter).
      const self = ReflectConstruct(ErrorCtor, [state.message], new.target);
      delete self.message;
      ReflectApply(weakSet, domStates, [self, state]);
      return self;
    }
    get name() { return domState(this, 'name').name; }
    get message() { return domState(this, 'message').message; }
    get code() { return domState(this, 'code').code; }
    get cause() { return domState(this, 'cause').cause; }
  }
  defineProperty(DOMException.prototype, Symbol.toStringTag, { value: 'DOMException', configurable: true });
  Object.setPrototypeOf(DOMException.prototype, ErrorCtor.prototype);
  for (const member of ['name', 'message', 'code', 'cause']) {
    defineProperty(DOMException.prototype, member, { enumerable: true });
  }
  for (let i = 0; i < DOM_CONSTANTS.length; i++) {
    defineProperty(DOMException, DOM_CONSTANTS[i], { value: i + 1, enumerable: true });
    defineProperty(DOMException.prototype, DOM_CONSTANTS[i], { value: i + 1, enumerable: true });
  }
  install('DOMException', DOMException);

  // ---- Timers ------------------------------------------------------------------------------------
  const timers = new MapCtor();
  let nextTimerId = 1;
  function clampDelay(delay) {
    const ms = NumberCtor(delay);
    return ms > 0 && ms <= 2147483647 ? ms : 0;
  }
  function armTimer(callback, delay, args, repeat) {
    if (typeof callback !== 'function') {
      throw new TypeErrorCtor('The callback of a timer must be a function');
    }
    const id = nextTimerId++;
    const ms = clampDelay(delay);
    ReflectApply(mapSet, timers, [id, { callback, args, repeat, ms }]);
    natives.timerArm(id, ms);
    return id;
  }
  function clearTimer(id) {
    const key = NumberCtor(id);
    if (ReflectApply(mapDelete, timers, [key])) natives.timerCancel(key);
  }
  // Called by the worker when timer `id` is due.
  function fireTimer(id) {
    const timer = ReflectApply(mapGet, timers, [id]);
    if (timer === undefined) return;
    if (timer.repeat) natives.timerArm(id, timer.ms);
    else ReflectApply(mapDelete, timers, [id]);
    try {
      ReflectApply(timer.callback, global, timer.args);
    } catch (error) {
      let text;
      try { text = StringCtor(error); } catch { text = 'an exception'; }
      nativeLog(LOG_ERROR, 'Uncaught ' + text);
    }
  }
  install('setTimeout', function setTimeout(callback, delay, ...args) { return armTimer(callback, delay, args, false); });
  install('setInterval', function setInterval(callback, delay, ...args) { return armTimer(callback, delay, args, true); });
  install('clearTimeout', function clearTimeout(id) { clearTimer(id); });
  install('clearInterval', function clearInterval(id) { clearTimer(id); });
  install('queueMicrotask', function queueMicrotask(callback) {
    if (typeof callback !== 'function') throw new TypeErrorCtor('queueMicrotask expects a function');
    PromiseResolve().then(() => callback());
  });

  // ---- performance ---------------------------------------------------------------------------
  const performance = {
    now() { return natives.now(); },
    get timeOrigin() { return DateCtor.now() - natives.now(); },
    toJSON() { return { timeOrigin: this.timeOrigin }; },
  };
  install('performance', performance);

  // ---- structuredClone --------------------------------------------------------------------------
  // HTML's StructuredSerialize and StructuredDeserialize in one pass, inside the isolate (the
  // copy counts against the run's heap like any other object): primitives and their wrappers,
  // Date, RegExp, ArrayBuffer (resizable kept resizable), typed arrays and DataView (sharing
  // their cloned buffer), Map, Set, Error types, DOMException, Blob and File, arrays with every own enumerable
  // property, and plain objects; references and cycles are kept. Anything else that is not
  // ordinary data (functions, symbols, promises, weak collections) throws a DataCloneError, and
  // `transfer` moves ArrayBuffers (the originals are detached). The algorithm is web_clone.js, which
  // is not in the snapshot (its compiled code would add to every fresh isolate's cost): the first
  // call in a run has natives.loadScript compile it, with the builtins captured here.
  const ObjectPrototype = Object.prototype;
  const ObjectKeys = Object.keys;
  const isArray = Array.isArray;
  const ArrayCtor = Array;
  const ArrayBufferCtor = ArrayBuffer;
  const DataViewCtor = DataView;
  const SetCtor = Set;
  const RegExpCtor = RegExp;
  const BooleanCtor = Boolean;
  const ObjectCtor = Object;
  const WeakMapCtor = WeakMap;
  const WeakSetCtor = WeakSet;
  const WeakRefCtor = typeof WeakRef === 'function' ? WeakRef : null;
  const PromiseCtor = Promise;
  const numberValueOf = Number.prototype.valueOf;
  const stringValueOf = String.prototype.valueOf;
  const booleanValueOf = Boolean.prototype.valueOf;
  const bigintValueOf = BigInt.prototype.valueOf;
  const symbolValueOf = Symbol.prototype.valueOf;
  const dateGetTime = Date.prototype.getTime;
  const regexpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, 'source').get;
  const regexpFlags = Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get;
  const mapHas = Map.prototype.has;
  const mapForEach = Map.prototype.forEach;
  const setHas = Set.prototype.has;
  const setAdd = Set.prototype.add;
  const setForEach = Set.prototype.forEach;
  const bufferSlice = ArrayBuffer.prototype.slice;
  const bufferTransfer = ArrayBuffer.prototype.transfer;
  const bufferDetachedDescriptor = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached');
  const bufferDetached = bufferDetachedDescriptor === undefined ? undefined : bufferDetachedDescriptor.get;
  const bufferResizableDescriptor = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'resizable');
  const bufferResizable = bufferResizableDescriptor === undefined ? undefined : bufferResizableDescriptor.get;
  const bufferMaxByteLength = bufferResizable === undefined ? undefined
    : Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'maxByteLength').get;
  const typedArrayBuffer = Object.getOwnPropertyDescriptor(TypedArray.prototype, 'buffer').get;
  const typedArrayOffset = Object.getOwnPropertyDescriptor(TypedArray.prototype, 'byteOffset').get;
  const typedArrayLength = Object.getOwnPropertyDescriptor(TypedArray.prototype, 'length').get;
  const dataViewBuffer = Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get;
  const dataViewOffset = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset').get;
  const dataViewLength = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get;
  const hasOwn = Object.prototype.hasOwnProperty;
  const TYPED_ARRAYS = {};
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
    'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
    if (typeof global[name] === 'function') TYPED_ARRAYS[name] = global[name];
  }
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  let cloneImpl = null;
  install('structuredClone', function structuredClone(value, options) {
    if (arguments.length === 0) throw new TypeErrorCtor("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
    if (cloneImpl === null) {
      cloneImpl = natives.loadScript('clone', {
        TYPED_ARRAYS, DOMException, ErrorCtor, TypeErrorCtor, NumberCtor, StringCtor, DateCtor, MapCtor, Uint8ArrayCtor,
        ReflectApply, defineProperty, getPrototypeOf, isView, branded, mapGet, mapSet, bufferByteLength, typedArrayTag,
        typedArraySet, ObjectPrototype, ObjectKeys, isArray, ArrayCtor, ArrayBufferCtor, DataViewCtor, SetCtor, RegExpCtor,
        BooleanCtor, ObjectCtor, WeakMapCtor, WeakSetCtor, WeakRefCtor, PromiseCtor, numberValueOf, stringValueOf,
        booleanValueOf, bigintValueOf, symbolValueOf, dateGetTime, regexpSource, regexpFlags, mapHas, mapForEach, setHas,
        setAdd, setForEach, bufferSlice, bufferTransfer, bufferDetached, bufferResizable, bufferMaxByteLength,
        typedArrayBuffer, typedArrayOffset, typedArrayLength, dataViewBuffer, dataViewOffset, dataViewLength, hasOwn,
        getOwnPropertyDescriptor, EvalError, RangeError, ReferenceError, SyntaxError,
        TypeError, URIError, typedArraySubarray,
        // Blob and File (web_net.js, built on first use: until then no value can be one).
        cloneBlob: (v) => (typeof natives.cloneBlob === 'function' ? natives.cloneBlob(v) : undefined),
        platformObjectName: (v) => (typeof natives.platformObjectName === 'function' ? natives.platformObjectName(v) : undefined),
      });
    }
    return cloneImpl(value, options);
  });

  // ---- atob / btoa ------------------------------------------------------------------------------
  // Binary strings over the codec's base64 (lib/cloudflare/codec.js), with the Web's forgiving decoding and
  // its errors.
  install('btoa', function btoa(data) {
    if (arguments.length === 0) throw new TypeErrorCtor('btoa requires 1 argument');
    const text = StringCtor(data);
    const bytes = new Uint8ArrayCtor(text.length);
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code > 255) throw new DOMException('Invalid character', 'InvalidCharacterError');
      bytes[i] = code;
    }
    return codec.bytesToBase64(bytes);
  });
  install('atob', function atob(data) {
    if (arguments.length === 0) throw new TypeErrorCtor('atob requires 1 argument');
    let text = StringCtor(data).replace(/[\t\n\f\r ]/g, '');
    if (text.length % 4 === 0) text = text.replace(/==?$/, '');
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
      throw new DOMException('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    }
    const bytes = codec.base64ToBytes(text);
    let out = '';
    for (let i = 0; i < bytes.length; i += 8192) {
      out += ReflectApply(fromCharCode, null, bytes.subarray(i, i + 8192));
    }
    return out;
  });

  // ---- TextEncoder / TextDecoder (UTF-8) --------------------------------------------------------
  // Encodes a string as UTF-8 into `target` (a Uint8Array) up to its length; returns
  // { read, written } in UTF-16 units and bytes. Lone surrogates become U+FFFD.
  function utf8Encode(text, target) {
    let read = 0;
    let written = 0;
    const limit = target.length;
    while (read < text.length) {
      let code = text.charCodeAt(read);
      let units = 1;
      if (code >= 0xd800 && code <= 0xdbff && read + 1 < text.length) {
        const next = text.charCodeAt(read + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          units = 2;
        } else {
          code = 0xfffd;
        }
      } else if (code >= 0xd800 && code <= 0xdfff) {
        code = 0xfffd;
      }
      const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      if (written + size > limit) break;
      if (size === 1) {
        target[written++] = code;
      } else if (size === 2) {
        target[written++] = 0xc0 | (code >> 6);
        target[written++] = 0x80 | (code & 63);
      } else if (size === 3) {
        target[written++] = 0xe0 | (code >> 12);
        target[written++] = 0x80 | ((code >> 6) & 63);
        target[written++] = 0x80 | (code & 63);
      } else {
        target[written++] = 0xf0 | (code >> 18);
        target[written++] = 0x80 | ((code >> 12) & 63);
        target[written++] = 0x80 | ((code >> 6) & 63);
        target[written++] = 0x80 | (code & 63);
      }
      read += units;
    }
    return { read, written };
  }
  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input = '') {
      const text = StringCtor(input);
      const buffer = new Uint8ArrayCtor(text.length * 3);
      const { written } = utf8Encode(text, buffer);
      return buffer.slice(0, written);
    }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8ArrayCtor)) {
        throw new TypeErrorCtor('encodeInto expects a Uint8Array destination');
      }
      return utf8Encode(StringCtor(source), destination);
    }
  }
  install('TextEncoder', TextEncoder);

  // The Encoding Standard's label table and its non-UTF-8 decoders are native (encoding_rs);
  // UTF-8, the common case, is decoded here. Single-byte encodings decode each chunk on its own;
  // UTF-16 keeps an odd byte and a trailing lead surrogate for the next chunk; the multi-byte
  // encodings (Shift_JIS, EUC-JP, GBK, gb18030, Big5, EUC-KR) decode what they can and keep an
  // unfinished sequence; ISO-2022-JP, whose escape sequences switch modes, keeps a streamed
  // input until its last chunk and decodes it whole.
  const MULTI_BYTE = ['shift_jis', 'euc-jp', 'iso-2022-jp', 'gbk', 'gb18030', 'big5', 'euc-kr'];
  function concatBytes(a, b) {
    if (a.length === 0) return b;
    const out = new Uint8ArrayCtor(a.length + b.length);
    ReflectApply(typedArraySet, out, [a]);
    ReflectApply(typedArraySet, out, [b, a.length]);
    return out;
  }
  // A SharedArrayBuffer (an AllowSharedBufferSource). Its getter is looked up when used: V8
  // installs SharedArrayBuffer again on each context restored from the snapshot.
  function isSharedBuffer(input) {
    const Shared = global.SharedArrayBuffer;
    if (typeof Shared !== 'function' || Shared.prototype === null || typeof Shared.prototype !== 'object') return false;
    const descriptor = Object.getOwnPropertyDescriptor(Shared.prototype, 'byteLength');
    return descriptor !== undefined && typeof descriptor.get === 'function' && branded(descriptor.get, input);
  }
  function bytesOf(input, allowShared = false) {
    if (input === undefined) return new Uint8ArrayCtor(0);
    // A detached buffer (or a view of one) holds no bytes (WebIDL's "get a copy of the bytes").
    if (isView(input)) {
      const length = input.byteLength;
      return length === 0 ? new Uint8ArrayCtor(0) : new Uint8ArrayCtor(input.buffer, input.byteOffset, length);
    }
    if (branded(bufferByteLength, input)) {
      return ReflectApply(bufferByteLength, input, []) === 0 ? new Uint8ArrayCtor(0) : new Uint8ArrayCtor(input);
    }
    if (allowShared && isSharedBuffer(input)) return new Uint8ArrayCtor(input);
    throw new TypeErrorCtor('The "input" argument must be an ArrayBuffer or ArrayBufferView');
  }
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    #pending = new Uint8ArrayCtor(0);
    #seenBOM = false;
    #encoding;
    constructor(label = 'utf-8', options = {}) {
      const text = StringCtor(label);
      const name = natives.encodingName(text);
      if (name === null || name === 'replacement') {
        throw new RangeErrorCtor(`The "${text}" encoding is not supported`);
      }
      if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') {
        throw new TypeErrorCtor("The \"options\" argument must be of type object");
      }
      this.#encoding = name;
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return this.#encoding; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input, options = {}) {
      const stream = Boolean(options && options.stream);
      const incoming = bytesOf(input, true);
      if (this.#encoding !== 'utf-8') return this.#decodeOther(incoming, stream);
      let bytes = incoming;
      if (this.#pending.length > 0) {
        bytes = new Uint8ArrayCtor(this.#pending.length + incoming.length);
        ReflectApply(typedArraySet, bytes, [this.#pending]);
        ReflectApply(typedArraySet, bytes, [incoming, this.#pending.length]);
      }
      let out = '';
      let chunk = [];
      const flush = () => {
        out += ReflectApply(fromCharCode, null, chunk);
        chunk = [];
      };
      const bad = () => {
        if (this.#fatal) {
          this.#pending = new Uint8ArrayCtor(0);
          throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
        }
        chunk[chunk.length] = 0xfffd;
      };
      let i = 0;
      const n = bytes.length;
      while (i < n) {
        const b = bytes[i];
        let need = 0;
        let code = 0;
        let lower = 0x80;
        let upper = 0xbf;
        if (b < 0x80) {
          chunk[chunk.length] = b;
          i++;
        } else {
          if (b >= 0xc2 && b <= 0xdf) { need = 1; code = b & 0x1f; }
          else if (b >= 0xe0 && b <= 0xef) {
            need = 2; code = b & 0xf;
            if (b === 0xe0) lower = 0xa0;
            if (b === 0xed) upper = 0x9f;
          } else if (b >= 0xf0 && b <= 0xf4) {
            need = 3; code = b & 0x7;
            if (b === 0xf0) lower = 0x90;
            if (b === 0xf4) upper = 0x8f;
          } else {
            bad();
            i++;
            continue;
          }
          let j = 1;
          let ok = true;
          for (; j <= need; j++) {
            if (i + j >= n) break;
            const c = bytes[i + j];
            if (c < lower || c > upper) { ok = false; break; }
            lower = 0x80;
            upper = 0xbf;
            code = (code << 6) | (c & 0x3f);
          }
          if (ok && j <= need) {
            // Truncated sequence at the end of the input.
            if (stream) break;
            bad();
            i = n;
            continue;
          }
          if (!ok) {
            bad();
            i += j;
            continue;
          }
          if (code >= 0x10000) {
            code -= 0x10000;
            chunk[chunk.length] = 0xd800 + (code >> 10);
            chunk[chunk.length] = 0xdc00 + (code & 0x3ff);
          } else {
            chunk[chunk.length] = code;
          }
          i += need + 1;
        }
        if (chunk.length >= 8192) flush();
      }
      flush();
      this.#pending = stream ? bytes.slice(i) : new Uint8ArrayCtor(0);
      if (!this.#ignoreBOM && !this.#seenBOM && out.length > 0) {
        if (out.charCodeAt(0) === 0xfeff) out = out.slice(1);
        this.#seenBOM = true;
      }
      if (!stream) this.#seenBOM = false;
      return out;
    }
    // A streamed chunk of a multi-byte encoding without modes: what is decodable now, with the
    // unfinished sequence at its end (at most 3 bytes) kept for the next chunk. That tail is the
    // shortest one whose removal makes a final decode give the same text as the streaming one.
    #decodeMultiByteChunk(bytes) {
      const out = natives.encodingDecode(this.#encoding, bytes, this.#fatal, true);
      if (out === null) {
        this.#pending = new Uint8ArrayCtor(0);
        throw new TypeErrorCtor(`The encoded data was not valid for encoding ${this.#encoding}`);
      }
      const n = bytes.length;
      for (let keep = 0; keep <= 3 && keep <= n; keep++) {
        if (natives.encodingDecode(this.#encoding, bytes.subarray(0, n - keep), false) === out) {
          this.#pending = bytes.slice(n - keep);
          return out;
        }
      }
      this.#pending = bytes;
      return '';
    }
    #decodeOther(incoming, stream) {
      let bytes = concatBytes(this.#pending, incoming);
      let keep = 0;
      if (stream) {
        if (this.#encoding === 'iso-2022-jp') {
          this.#pending = bytes;
          return '';
        }
        if (ReflectApply(arrayIncludes, MULTI_BYTE, [this.#encoding])) return this.#decodeMultiByteChunk(bytes);
        if (this.#encoding === 'utf-16le' || this.#encoding === 'utf-16be') {
          keep = bytes.length % 2;
          const end = bytes.length - keep;
          if (end >= 2) {
            const unit = this.#encoding === 'utf-16le' ? bytes[end - 2] | (bytes[end - 1] << 8) : (bytes[end - 2] << 8) | bytes[end - 1];
            if (unit >= 0xd800 && unit <= 0xdbff) keep += 2;
          }
        }
      }
      this.#pending = keep > 0 ? bytes.slice(bytes.length - keep) : new Uint8ArrayCtor(0);
      if (keep > 0) bytes = bytes.subarray(0, bytes.length - keep);
      let out = natives.encodingDecode(this.#encoding, bytes, this.#fatal);
      if (out === null) {
        this.#pending = new Uint8ArrayCtor(0);
        this.#seenBOM = false;
        throw new TypeErrorCtor(`The encoded data was not valid for encoding ${this.#encoding}`);
      }
      if ((this.#encoding === 'utf-16le' || this.#encoding === 'utf-16be') && !this.#ignoreBOM && !this.#seenBOM && out.length > 0) {
        if (out.charCodeAt(0) === 0xfeff) out = out.slice(1);
        this.#seenBOM = true;
      }
      if (!stream) this.#seenBOM = false;
      return out;
    }
  }
  install('TextDecoder', TextDecoder);

  // ---- crypto (random values) -------------------------------------------------------------------
  const INTEGER_ARRAYS = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'];
  function getRandomValues(array) {
    const tag = isView(array) ? ReflectApply(typedArrayTag, array, []) : undefined;
    if (!INTEGER_ARRAYS.includes(tag)) {
      throw new DOMException('The data provided must be an integer-type TypedArray', 'TypeMismatchError');
    }
    if (array.byteLength > 65536) {
      throw new DOMException(`The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`, 'QuotaExceededError');
    }
    const target = new Uint8ArrayCtor(array.buffer, array.byteOffset, array.byteLength);
    ReflectApply(typedArraySet, target, [new Uint8ArrayCtor(natives.randomBytes(array.byteLength))]);
    return array;
  }
  const HEX = [];
  for (let i = 0; i < 256; i++) HEX[i] = (i + 256).toString(16).slice(1);
  function randomUUID() {
    const b = new Uint8ArrayCtor(natives.randomBytes(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    return HEX[b[0]] + HEX[b[1]] + HEX[b[2]] + HEX[b[3]] + '-' + HEX[b[4]] + HEX[b[5]] + '-' +
      HEX[b[6]] + HEX[b[7]] + '-' + HEX[b[8]] + HEX[b[9]] + '-' + HEX[b[10]] + HEX[b[11]] +
      HEX[b[12]] + HEX[b[13]] + HEX[b[14]] + HEX[b[15]];
  }
  // crypto.subtle: digests only (SHA-1/256/384/512), computed natively.
  const subtle = {
    async digest(algorithm, data) {
      // An AlgorithmIdentifier: an object's `name` is a required member (read once), anything
      // else is converted to a string.
      const isObject = algorithm !== null && (typeof algorithm === 'object' || typeof algorithm === 'function');
      const name = isObject ? algorithm.name : algorithm;
      if (isObject && name === undefined) throw new TypeErrorCtor('The algorithm\'s "name" member is required');
      const bytes = bytesOf(data);
      const hash = natives.digest(StringCtor(name), bytes);
      if (hash === null) throw new DOMException(`Unrecognized algorithm name: ${StringCtor(name)}`, 'NotSupportedError');
      // The digest is of the bytes at the call; the standard delivers it from a queued task, a
      // microtask later at the earliest (as web_crypto.js's methods do).
      await undefined;
      return hash;
    },
  };
  // The rest of crypto.subtle and CryptoKey live in web_crypto.js, which is not in the snapshot:
  // natives.loadScript compiles it on a run's first call of one of these methods (or first read of
  // CryptoKey), with the intrinsics captured here.
  let webCrypto = null;
  const ObjectFreeze = Object.freeze;
  const SymbolCtor = Symbol;
  const SymbolIteratorKey = Symbol.iterator;
  const SymbolTagKey = Symbol.toStringTag;
  const MathCeil = Math.ceil;
  function loadCrypto() {
    if (webCrypto === null) {
      webCrypto = natives.loadScript('crypto', {
        DOMException, TypeError: TypeErrorCtor, String: StringCtor, Number: NumberCtor, Uint8Array: Uint8ArrayCtor,
        freeze: ObjectFreeze, isArray, bytesOf, codec, ReflectApply, Symbol: SymbolCtor, SymbolIterator: SymbolIteratorKey,
        SymbolToStringTag: SymbolTagKey, MathCeil, Set: SetCtor,
        randomBytes: (n) => new Uint8ArrayCtor(natives.randomBytes(n)),
        JSONStringify, JSONParse,
        // UTF-8 both ways, for a JWK wrapped as text (wrapKey, unwrapKey).
        utf8Encode: (text) => {
          const buffer = new Uint8ArrayCtor(text.length * 3);
          return buffer.slice(0, utf8Encode(text, buffer).written);
        },
        utf8Decode: (bytes) => natives.encodingDecode('UTF-8', bytes, true, true),
        hmac: natives.cryptoHmac, aesGcm: natives.cryptoAesGcm, verify: natives.cryptoVerify, sign: natives.cryptoSign, privateKey: natives.cryptoPrivateKey, agree: natives.cryptoAgree, ecPoint: natives.cryptoEcPoint, rsa: natives.cryptoRsa, derive: natives.cryptoDerive, aesBlock: natives.cryptoAesBlock, digest: natives.digest,
      });
    }
    return webCrypto;
  }
  for (const name of ['encrypt', 'decrypt', 'sign', 'verify', 'importKey', 'exportKey', 'generateKey', 'deriveBits',
    'deriveKey', 'wrapKey', 'unwrapKey']) {
    // The method's own promise is returned as it is (an async wrapper would settle it two
    // microtasks later, and the standard says which errors reject before a microtask runs).
    defineProperty(subtle, name, {
      value: {
        [name](...args) {
          try {
            return ReflectApply(loadCrypto().subtle[name], subtle, args);
          } catch (error) {
            return PromiseReject(error);
          }
        },
      }[name],
      writable: true, enumerable: true, configurable: true,
    });
  }
  install('crypto', { getRandomValues, randomUUID, subtle });
  defineProperty(global, 'CryptoKey', {
    get() {
      const CryptoKey = loadCrypto().CryptoKey;
      install('CryptoKey', CryptoKey);
      return CryptoKey;
    },
    set(value) { install('CryptoKey', value); },
    enumerable: false,
    configurable: true,
  });

  return { fireTimer };
})
