// structuredClone's algorithm (HTML's StructuredSerialize and StructuredDeserialize in one pass),
// for web.js. Not in the snapshot: web.js has natives.loadScript compile this on a run's first
// structuredClone call and calls the function below with builtins it captured before any program
// ran; the function returns the clone operation (argument count checked by web.js).
(function clone(captured) {
  'use strict';
  const {
    TYPED_ARRAYS, DOMException, ErrorCtor, TypeErrorCtor, NumberCtor, StringCtor, DateCtor, MapCtor, Uint8ArrayCtor,
    ReflectApply, defineProperty, getPrototypeOf, isView, branded, mapGet, mapSet, bufferByteLength, typedArrayTag,
    typedArraySet, ObjectPrototype, ObjectKeys, isArray, ArrayCtor, ArrayBufferCtor, DataViewCtor, SetCtor, RegExpCtor,
    BooleanCtor, ObjectCtor, WeakMapCtor, WeakSetCtor, WeakRefCtor, PromiseCtor, numberValueOf, stringValueOf,
    booleanValueOf, bigintValueOf, symbolValueOf, dateGetTime, regexpSource, regexpFlags, mapHas, mapForEach, setHas,
    setAdd, setForEach, bufferSlice, bufferTransfer, bufferDetached, bufferResizable, bufferMaxByteLength,
    typedArrayBuffer, typedArrayOffset, typedArrayLength, dataViewBuffer, dataViewOffset, dataViewLength, hasOwn,
    getOwnPropertyDescriptor, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, cloneBlob,
    platformObjectName, typedArraySubarray,
  } = captured;
  const ERROR_TYPES = {
    Error: ErrorCtor, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError,
  };
  function cloneError(what) {
    return new DOMException(`${what} could not be cloned.`, 'DataCloneError');
  }
  function isDetached(buffer) {
    return bufferDetached !== undefined && ReflectApply(bufferDetached, buffer, []);
  }
  function copyBuffer(buffer) {
    if (isDetached(buffer)) throw cloneError('A detached ArrayBuffer');
    const length = ReflectApply(bufferByteLength, buffer, []);
    if (bufferResizable !== undefined && ReflectApply(bufferResizable, buffer, [])) {
      const out = new ArrayBufferCtor(length, { maxByteLength: ReflectApply(bufferMaxByteLength, buffer, []) });
      ReflectApply(typedArraySet, new Uint8ArrayCtor(out), [new Uint8ArrayCtor(buffer)]);
      return out;
    }
    return ReflectApply(bufferSlice, buffer, [0, length]);
  }
  function structuredCloneValue(root, transferred) {
    // Original -> copy; a transferred buffer maps to a function that moves it on first use.
    const memory = new MapCtor();
    for (const [buffer, move] of transferred) ReflectApply(mapSet, memory, [buffer, move]);
    const remember = (from, to) => { ReflectApply(mapSet, memory, [from, to]); return to; };
    function bufferOf(buffer) {
      const known = ReflectApply(mapGet, memory, [buffer]);
      if (known !== undefined) return typeof known === 'function' ? known() : known;
      return remember(buffer, copyBuffer(buffer));
    }
    function copyProperties(from, to) {
      const keys = ObjectKeys(from);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        // A getter may have deleted a later key: the standard skips keys no longer present.
        if (!ReflectApply(hasOwn, from, [key])) continue;
        to[key] = clone(from[key]);
      }
      return to;
    }
    function clone(value) {
      const kind = typeof value;
      if (kind === 'symbol') throw cloneError(StringCtor(value));
      if (kind === 'function') throw cloneError(value.name ? `function ${value.name}` : 'A function');
      if (value === null || kind !== 'object') return value;
      const known = ReflectApply(mapGet, memory, [value]);
      if (known !== undefined) return typeof known === 'function' ? known() : known;
      if (isArray(value)) {
        const out = remember(value, new ArrayCtor(value.length));
        return copyProperties(value, out);
      }
      const proto = getPrototypeOf(value);
      if (proto !== ObjectPrototype && proto !== null) {
        if (branded(numberValueOf, value)) return remember(value, new NumberCtor(ReflectApply(numberValueOf, value, [])));
        if (branded(stringValueOf, value)) return remember(value, new StringCtor(ReflectApply(stringValueOf, value, [])));
        if (branded(booleanValueOf, value)) return remember(value, new BooleanCtor(ReflectApply(booleanValueOf, value, [])));
        if (branded(bigintValueOf, value)) return remember(value, ObjectCtor(ReflectApply(bigintValueOf, value, [])));
        if (branded(symbolValueOf, value)) throw cloneError('A Symbol object');
        if (branded(dateGetTime, value)) return remember(value, new DateCtor(ReflectApply(dateGetTime, value, [])));
        if (branded(regexpSource, value)) {
          return remember(value, new RegExpCtor(ReflectApply(regexpSource, value, []), ReflectApply(regexpFlags, value, [])));
        }
        if (branded(bufferByteLength, value)) return bufferOf(value);
        if (isView(value)) {
          const tag = ReflectApply(typedArrayTag, value, []);
          // Offset and length are read before a transferred buffer moves (and detaches the view).
          // A view past the end of its shrunk resizable buffer is refused: a DataView's getters
          // throw then, a typed array's say 0 and 0 (subarray, which reads the real offset, throws).
          if (tag === undefined) {
            let offset;
            let length;
            try {
              offset = ReflectApply(dataViewOffset, value, []);
              length = ReflectApply(dataViewLength, value, []);
            } catch {
              if (isDetached(ReflectApply(dataViewBuffer, value, []))) throw cloneError('A DataView on a detached ArrayBuffer');
              throw cloneError('An out-of-bounds DataView');
            }
            return remember(value, new DataViewCtor(bufferOf(ReflectApply(dataViewBuffer, value, [])), offset, length));
          }
          const offset = ReflectApply(typedArrayOffset, value, []);
          const length = ReflectApply(typedArrayLength, value, []);
          const viewed = ReflectApply(typedArrayBuffer, value, []);
          if (offset === 0 && length === 0 && bufferResizable !== undefined && ReflectApply(bufferResizable, viewed, [])) {
            try { ReflectApply(typedArraySubarray, value, [0]); } catch { throw cloneError('An out-of-bounds TypedArray'); }
          }
          const Ctor = TYPED_ARRAYS[tag];
          return remember(value, new Ctor(bufferOf(viewed), offset, length));
        }
        if (branded(mapHas, value)) {
          const out = remember(value, new MapCtor());
          const entries = [];
          ReflectApply(mapForEach, value, [(v, k) => { entries[entries.length] = k; entries[entries.length] = v; }]);
          for (let i = 0; i < entries.length; i += 2) ReflectApply(mapSet, out, [clone(entries[i]), clone(entries[i + 1])]);
          return out;
        }
        if (branded(setHas, value)) {
          const out = remember(value, new SetCtor());
          const items = [];
          ReflectApply(setForEach, value, [(v) => { items[items.length] = v; }]);
          for (let i = 0; i < items.length; i++) ReflectApply(setAdd, out, [clone(items[i])]);
          return out;
        }
        if (value instanceof DOMException) {
          return remember(value, new DOMException(StringCtor(value.message), StringCtor(value.name)));
        }
        if (value instanceof ErrorCtor) {
          const name = value.name;
          const Ctor = typeof name === 'string' && ReflectApply(hasOwn, ERROR_TYPES, [name]) ? ERROR_TYPES[name] : ErrorCtor;
          const out = remember(value, new Ctor());
          const message = getOwnPropertyDescriptor(value, 'message');
          if (message !== undefined && 'value' in message) {
            defineProperty(out, 'message', { value: StringCtor(message.value), writable: true, configurable: true });
          }
          if (typeof value.stack === 'string') {
            defineProperty(out, 'stack', { value: value.stack, writable: true, configurable: true });
          }
          if (ReflectApply(hasOwn, value, ['cause'])) {
            defineProperty(out, 'cause', { value: clone(value.cause), writable: true, configurable: true });
          }
          return out;
        }
        const blob = cloneBlob(value);
        if (blob !== undefined) return remember(value, blob);
        const platform = platformObjectName(value);
        if (platform !== undefined) throw cloneError(`${platform} object`);
        if (value instanceof PromiseCtor || value instanceof WeakMapCtor || value instanceof WeakSetCtor ||
          (WeakRefCtor !== null && value instanceof WeakRefCtor)) {
          throw cloneError(`#<${proto && proto.constructor ? proto.constructor.name : 'Object'}>`);
        }
      }
      return copyProperties(value, remember(value, {}));
    }
    return clone(root);
  }
  return function structuredClone(value, options) {
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw new TypeErrorCtor("Failed to execute 'structuredClone': The provided value is not of type 'StructuredSerializeOptions'.");
    }
    const list = options === undefined || options === null || options.transfer === undefined ? [] : [...options.transfer];
    // Each transferable once, an ArrayBuffer, not detached; moved only once the clone needs it.
    const transferred = new MapCtor();
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (item === null || (typeof item !== 'object' && typeof item !== 'function')) {
        throw new TypeErrorCtor("Failed to execute 'structuredClone': Value at index " + i + ' does not have a transferable type.');
      }
      if (!branded(bufferByteLength, item) || bufferTransfer === undefined) {
        throw new DOMException('Value at index ' + i + ' does not have a transferable type.', 'DataCloneError');
      }
      if (ReflectApply(mapHas, transferred, [item])) {
        throw new DOMException('ArrayBuffer at index ' + i + ' is a duplicate of an earlier ArrayBuffer.', 'DataCloneError');
      }
      if (isDetached(item)) throw new DOMException('ArrayBuffer at index ' + i + ' is already detached.', 'DataCloneError');
      let moved;
      ReflectApply(mapSet, transferred, [item, () => {
        if (moved === undefined) moved = ReflectApply(bufferTransfer, item, []);
        return moved;
      }]);
    }
    const out = structuredCloneValue(value, transferred);
    // The standard detaches every listed buffer, referenced by the value or not.
    ReflectApply(mapForEach, transferred, [(move) => move()]);
    return out;
  };
})
