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
  const StringCtor = String;
  const NumberCtor = Number;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const MapCtor = Map;
  const DateCtor = Date;
  const Uint8ArrayCtor = Uint8Array;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const isView = ArrayBuffer.isView;
  const fromCharCode = String.fromCharCode;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const TypedArray = getPrototypeOf(Uint8Array);
  const typedArrayTag = Object.getOwnPropertyDescriptor(TypedArray.prototype, Symbol.toStringTag).get;
  const typedArraySet = TypedArray.prototype.set;
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
  const DOM_CODES = {
    IndexSizeError: 1, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18,
    NetworkError: 19, AbortError: 20, QuotaExceededError: 22, TimeoutError: 23,
    InvalidCharacterError: 5, DataCloneError: 25,
  };
  class DOMException extends ErrorCtor {
    constructor(message = '', name = 'Error') {
      super(StringCtor(message));
      defineProperty(this, 'name', { value: StringCtor(name), writable: true, configurable: true });
    }
    get code() { return DOM_CODES[this.name] || 0; }
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
  // The clone codec (lib/cloudflare/codec.js) already defines what survives a structured clone here (and
  // what throws a DataCloneError); a clone is its round trip.
  install('structuredClone', function structuredClone(value, options) {
    if (arguments.length === 0) throw new TypeErrorCtor('structuredClone requires 1 argument');
    if (options !== undefined && options !== null && options.transfer !== undefined &&
      options.transfer.length > 0) {
      throw new DOMException('Transferring objects is not supported in this sandbox.', 'DataCloneError');
    }
    try {
      return codec.cloneParse(codec.cloneStringify(value));
    } catch (error) {
      if (error && error.name === 'DataCloneError') throw new DOMException(error.message, 'DataCloneError');
      throw error;
    }
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

  const UTF8_LABELS = ['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8'];
  function bytesOf(input) {
    if (input === undefined) return new Uint8ArrayCtor(0);
    if (isView(input)) return new Uint8ArrayCtor(input.buffer, input.byteOffset, input.byteLength);
    if (branded(bufferByteLength, input)) return new Uint8ArrayCtor(input);
    throw new TypeErrorCtor('The "input" argument must be an ArrayBuffer or ArrayBufferView');
  }
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    #pending = new Uint8ArrayCtor(0);
    #seenBOM = false;
    constructor(label = 'utf-8', options = {}) {
      const name = StringCtor(label).trim().toLowerCase();
      if (!UTF8_LABELS.includes(name)) {
        throw new RangeErrorCtor(`The "${label}" encoding is not supported`);
      }
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return 'utf-8'; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input, options = {}) {
      const stream = Boolean(options && options.stream);
      const incoming = bytesOf(input);
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
      const name = typeof algorithm === 'string' ? algorithm : algorithm && algorithm.name;
      const bytes = bytesOf(data);
      const hash = natives.digest(StringCtor(name), bytes);
      if (hash === null) throw new DOMException(`Unrecognized algorithm name: ${StringCtor(name)}`, 'NotSupportedError');
      return hash;
    },
  };
  install('crypto', { getRandomValues, randomUUID, subtle });

  return { fireTimer };
})
