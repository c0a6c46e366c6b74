'use strict';
// Value codecs shared by the host and the sandbox. The same file is loaded by Node (CommonJS)
// and evaluated inside every isolate by the bootstrap (src/sandbox/snapshot.rs includes it), so both
// sides encode and decode with one implementation. Everything it uses from the language is
// captured when it loads, before any program runs.
//
// - The transport codec (docs/cloudflare-compat.md §4.1): JSON with binary values as
//   {"__codemode_binary_v1__": kind, "data": base64}. Used for provider tool arguments and
//   replies, exactly as Cloudflare's executor does.
// - The clone codec: JSON with tagged values, for what Workers RPC carries by structured clone
//   (results and connector calls): undefined, NaN/±Infinity/-0, BigInt, Date, RegExp, Map, Set,
//   ArrayBuffer and views, Errors, shared references and cycles.
(function (factory) {
  if (typeof module === 'object' && module && module.exports) module.exports = factory();
  else return factory();
})(function codemodeCodec() {
  const ReflectApply = Reflect.apply;
  const ObjectKeys = Object.keys;
  const { getPrototypeOf, hasOwn } = Object;
  const isArray = Array.isArray;
  const isView = ArrayBuffer.isView;
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
  const StringCtor = String;
  const NumberCtor = Number;
  const BigIntCtor = BigInt;
  const MapCtor = Map;
  const SetCtor = Set;
  const DateCtor = Date;
  const RegExpCtor = RegExp;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const Uint8ArrayCtor = Uint8Array;
  const DataViewCtor = DataView;
  const ObjectIs = Object.is;
  const fromCharCode = String.fromCharCode;
  const stringIncludes = String.prototype.includes;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapHas = Map.prototype.has;
  const mapForEach = Map.prototype.forEach;
  const setHas = Set.prototype.has;
  const setAdd = Set.prototype.add;
  const setForEach = Set.prototype.forEach;
  const dateGetTime = Date.prototype.getTime;
  const regexpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, 'source').get;
  const regexpFlags = Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get;
  const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const TypedArray = getPrototypeOf(Uint8Array);
  const typedArrayTag = Object.getOwnPropertyDescriptor(TypedArray.prototype, Symbol.toStringTag).get;
  const viewBuffer = (view) => view.buffer;
  const TYPED_ARRAYS = {
    Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
    Float32Array, Float64Array, BigInt64Array, BigUint64Array,
  };
  const ERROR_TYPES = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

  function branded(fn, value) {
    try {
      ReflectApply(fn, value, []);
      return true;
    } catch {
      return false;
    }
  }

  // ---- base64 (standard alphabet, padded) ------------------------------------------------------
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const INDEX = new Uint8ArrayCtor(128).fill(255);
  for (let i = 0; i < 64; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

  function bytesToBase64(bytes) {
    let out = '';
    let chunk = [];
    const n = bytes.length;
    for (let i = 0; i < n; i += 3) {
      const a = bytes[i];
      const b = i + 1 < n ? bytes[i + 1] : 0;
      const c = i + 2 < n ? bytes[i + 2] : 0;
      chunk[chunk.length] = ALPHABET.charCodeAt(a >> 2);
      chunk[chunk.length] = ALPHABET.charCodeAt(((a & 3) << 4) | (b >> 4));
      chunk[chunk.length] = i + 1 < n ? ALPHABET.charCodeAt(((b & 15) << 2) | (c >> 6)) : 61;
      chunk[chunk.length] = i + 2 < n ? ALPHABET.charCodeAt(c & 63) : 61;
      if (chunk.length >= 8192) {
        out += ReflectApply(fromCharCode, null, chunk);
        chunk = [];
      }
    }
    return out + ReflectApply(fromCharCode, null, chunk);
  }

  function base64ToBytes(text) {
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) === 61) end--;
    const out = new Uint8ArrayCtor(Math.floor((end * 6) / 8));
    let bits = 0;
    let count = 0;
    let w = 0;
    for (let i = 0; i < end; i++) {
      const code = text.charCodeAt(i);
      const value = code < 128 ? INDEX[code] : 255;
      if (value === 255) throw new TypeErrorCtor('Invalid base64 data');
      bits = ((bits << 6) | value) & 0xffffff;
      count += 6;
      if (count >= 8) {
        count -= 8;
        out[w++] = (bits >> count) & 255;
      }
    }
    return w === out.length ? out : out.slice(0, w);
  }

  function viewBytes(view) {
    return new Uint8ArrayCtor(viewBuffer(view), view.byteOffset, view.byteLength);
  }

  // ---- Transport codec (Cloudflare §4.1) ------------------------------------------------------
  const BINARY_TAG = '__codemode_binary_v1__';

  const ObjectPrototype = Object.prototype;

  // Plain data (arrays, and objects whose prototype is Object.prototype or null) is never
  // binary: skip the brand check, which costs a thrown exception per non-buffer object.
  function plainData(value) {
    if (isArray(value)) return true;
    const proto = getPrototypeOf(value);
    return proto === ObjectPrototype || proto === null;
  }

  function transportReplacer(key, value) {
    if (value !== null && typeof value === 'object' && !plainData(value)) {
      if (branded(bufferByteLength, value)) {
        return { [BINARY_TAG]: 'ArrayBuffer', data: bytesToBase64(new Uint8ArrayCtor(value)) };
      }
      if (isView(value)) {
        const kind = value instanceof Uint8ArrayCtor ? 'Uint8Array' : 'ArrayBufferView';
        return { [BINARY_TAG]: kind, data: bytesToBase64(viewBytes(value)) };
      }
    }
    return value;
  }

  function transportReviver(key, value) {
    if (value !== null && typeof value === 'object' && hasOwn(value, BINARY_TAG) &&
      typeof value.data === 'string') {
      const bytes = base64ToBytes(value.data);
      return value[BINARY_TAG] === 'ArrayBuffer' ? bytes.buffer : bytes;
    }
    return value;
  }

  function transportStringify(value) {
    return jsonStringify(value, transportReplacer);
  }

  // Whether JSON text may hold a key spelled `key`: literally, or through a \u escape (no other
  // escape yields a letter or an underscore). When it cannot, a reviver looking for that key is
  // skipped: V8 calls a reviver once per value, which costs tens of ms on a 1 MB reply.
  function mayHoldKey(text, key) {
    return ReflectApply(stringIncludes, text, [key]) || ReflectApply(stringIncludes, text, ['\\u']);
  }

  function transportParse(text) {
    if (text === undefined || text === null || text === '') return undefined;
    if (!mayHoldKey(text, BINARY_TAG)) return jsonParse(text);
    return jsonParse(text, transportReviver);
  }

  // ---- Clone codec --------------------------------------------------------------------------
  const TAG = '$codemode';

  function cloneError(what) {
    const error = new ErrorCtor(`${what} could not be cloned.`);
    error.name = 'DataCloneError';
    return error;
  }

  // Returns the JSON text of `value`'s tagged form. Throws for functions and symbols.
  function cloneStringify(value) {
    const seen = new MapCtor();
    let nextId = 0;
    function enter(object) {
      ReflectApply(mapSet, seen, [object, nextId++]);
    }
    function encode(value) {
      switch (typeof value) {
        case 'undefined': return { [TAG]: 'undefined' };
        case 'number':
          if (NumberCtor.isFinite(value)) return ObjectIs(value, -0) ? { [TAG]: 'number', value: '-0' } : value;
          return { [TAG]: 'number', value: StringCtor(value) };
        case 'bigint': return { [TAG]: 'bigint', value: StringCtor(value) };
        case 'string':
        case 'boolean': return value;
        case 'symbol': throw cloneError(StringCtor(value));
        case 'function': throw cloneError(value.name ? `function ${value.name}` : 'A function');
        default: break;
      }
      if (value === null) return null;
      if (ReflectApply(mapHas, seen, [value])) return { [TAG]: 'ref', id: ReflectApply(mapGet, seen, [value]) };
      // Brand checks throw for every object they reject: plain data skips them.
      if (!plainData(value)) {
        if (branded(dateGetTime, value)) {
          enter(value);
          const time = ReflectApply(dateGetTime, value, []);
          return { [TAG]: 'date', value: NumberCtor.isNaN(time) ? null : time };
        }
        if (branded(regexpSource, value)) {
          enter(value);
          return { [TAG]: 'regexp', source: ReflectApply(regexpSource, value, []), flags: ReflectApply(regexpFlags, value, []) };
        }
        if (branded(bufferByteLength, value)) {
          enter(value);
          return { [TAG]: 'arraybuffer', data: bytesToBase64(new Uint8ArrayCtor(value)) };
        }
        if (isView(value)) {
          enter(value);
          const kind = ReflectApply(typedArrayTag, value, []) || 'DataView';
          return { [TAG]: 'view', kind, data: bytesToBase64(viewBytes(value)) };
        }
        if (branded(mapHas, value)) {
          enter(value);
          const entries = [];
          ReflectApply(mapForEach, value, [(v, k) => { entries[entries.length] = [k, v]; }]);
          const out = [];
          for (let i = 0; i < entries.length; i++) out[i] = [encode(entries[i][0]), encode(entries[i][1])];
          return { [TAG]: 'map', entries: out };
        }
        if (branded(setHas, value)) {
          enter(value);
          const items = [];
          ReflectApply(setForEach, value, [(v) => { items[items.length] = v; }]);
          const out = [];
          for (let i = 0; i < items.length; i++) out[i] = encode(items[i]);
          return { [TAG]: 'set', items: out };
        }
        if (value instanceof ErrorCtor) {
          enter(value);
          const out = { [TAG]: 'error', name: StringCtor(value.name), message: StringCtor(value.message) };
          if (typeof value.stack === 'string') out.stack = value.stack;
          if (hasOwn(value, 'cause')) out.cause = encode(value.cause);
          return out;
        }
        if (value instanceof Promise || value instanceof WeakMap || value instanceof WeakSet ||
          (typeof WeakRef === 'function' && value instanceof WeakRef)) {
          throw cloneError(`#<${value.constructor.name}>`);
        }
      }
      enter(value);
      if (isArray(value)) {
        const out = [];
        for (let i = 0; i < value.length; i++) out[i] = encode(value[i]);
        return out;
      }
      const keys = ObjectKeys(value);
      const fields = {};
      for (let i = 0; i < keys.length; i++) fields[keys[i]] = encode(value[keys[i]]);
      // A plain object that itself uses the tag key is wrapped so it cannot pass for a tag.
      return hasOwn(fields, TAG) ? { [TAG]: 'object', fields } : fields;
    }
    return jsonStringify(encode(value));
  }

  // Rebuilds a value from cloneStringify's text. Containers get ids in the same order as the
  // encoder met them, so references resolve to the same objects.
  function cloneParse(text) {
    if (text === undefined || text === null || text === '') return undefined;
    // Untagged text is plain JSON data: nothing to decode (and no shared references).
    if (!mayHoldKey(text, TAG)) return jsonParse(text);
    const byId = [];
    function decode(node) {
      if (node === null || typeof node !== 'object') return node;
      if (isArray(node)) {
        const out = [];
        byId[byId.length] = out;
        for (let i = 0; i < node.length; i++) out[i] = decode(node[i]);
        return out;
      }
      const tag = hasOwn(node, TAG) ? node[TAG] : undefined;
      switch (tag) {
        case undefined: {
          const out = {};
          byId[byId.length] = out;
          for (const key of ObjectKeys(node)) out[key] = decode(node[key]);
          return out;
        }
        case 'object': {
          const out = {};
          byId[byId.length] = out;
          for (const key of ObjectKeys(node.fields)) out[key] = decode(node.fields[key]);
          return out;
        }
        case 'undefined': return undefined;
        case 'number': return node.value === '-0' ? -0 : NumberCtor(node.value);
        case 'bigint': return BigIntCtor(node.value);
        case 'ref': return byId[node.id];
        case 'date': {
          const out = new DateCtor(node.value === null ? NaN : node.value);
          byId[byId.length] = out;
          return out;
        }
        case 'regexp': {
          const out = new RegExpCtor(node.source, node.flags);
          byId[byId.length] = out;
          return out;
        }
        case 'arraybuffer': {
          const out = base64ToBytes(node.data).buffer;
          byId[byId.length] = out;
          return out;
        }
        case 'view': {
          const bytes = base64ToBytes(node.data);
          const Ctor = TYPED_ARRAYS[node.kind];
          let out;
          if (Ctor === undefined) out = new DataViewCtor(bytes.buffer);
          else out = new Ctor(bytes.buffer, 0, bytes.byteLength / Ctor.BYTES_PER_ELEMENT);
          byId[byId.length] = out;
          return out;
        }
        case 'map': {
          const out = new MapCtor();
          byId[byId.length] = out;
          for (const [k, v] of node.entries) ReflectApply(mapSet, out, [decode(k), decode(v)]);
          return out;
        }
        case 'set': {
          const out = new SetCtor();
          byId[byId.length] = out;
          for (const item of node.items) ReflectApply(setAdd, out, [decode(item)]);
          return out;
        }
        case 'error': {
          const Ctor = ERROR_TYPES[node.name] || ErrorCtor;
          const out = new Ctor(node.message);
          byId[byId.length] = out;
          if (!ERROR_TYPES[node.name]) out.name = node.name;
          if (node.stack !== undefined) out.stack = node.stack;
          if (hasOwn(node, 'cause')) out.cause = decode(node.cause);
          return out;
        }
        default:
          throw new TypeErrorCtor(`Unknown clone tag ${StringCtor(tag)}`);
      }
    }
    return decode(jsonParse(text));
  }

  return {
    // The key of the control markers a connector binding answers with instead of a value
    // ({ [CONTROL_KEY]: 'pause' | 'error', message? }), and the error text the sandbox throws
    // on a pause: defined here, the one file both sides load.
    CONTROL_KEY: '__codemode_control__',
    PAUSE_MARKER: '__CODEMODE_PAUSE__',
    BINARY_TAG,
    bytesToBase64,
    base64ToBytes,
    transportStringify,
    transportParse,
    transportReplacer,
    transportReviver,
    cloneStringify,
    cloneParse,
  };
});
