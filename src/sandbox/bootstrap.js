// The sandbox bootstrap. Evaluated once in every fresh context, before any program code, as a
// function expression that receives the natives of `natives.rs`. It returns the helpers the
// worker calls later; none of them, and none of the natives, are reachable from the global
// object. Everything it needs from the language is captured here first, so a program that
// overwrites builtins only breaks itself, never a bound (the bounds are enforced natively).
// The Web platform globals are installed by web.js, evaluated right after this file.
(function bootstrap(natives) {
  'use strict';
  const nativeCall = natives.call;
  const nativeLog = natives.log;
  const nativeArrayLength = natives.arrayLength;
  // The per-isolate bounds (natives.maxArrayLike, natives.maxErrorChars,
  // natives.arrayBufferBudget) are read when used: this file runs once, into the startup
  // snapshot, and each isolate sets them on the natives object afterwards.
  const stringSlice = String.prototype.slice;
  const global = globalThis;
  const ObjectCtor = Object;
  const { defineProperty, hasOwn } = Object;
  const objectToString = Object.prototype.toString;
  const StringCtor = String;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const ProxyCtor = Proxy;
  const SetCtor = Set;
  const setHas = Set.prototype.has;
  const ArrayCtor = Array;
  const ReflectApply = Reflect.apply;
  const ReflectConstruct = Reflect.construct;
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
  const MathMin = Math.min;
  const MathTrunc = Math.trunc;
  const NumberCtor = Number;

  // ---- No WebAssembly -----------------------------------------------------------------------
  // Its memories are allocated outside both the heap limit and the ArrayBuffer budget, and
  // Workers do not allow compiling WebAssembly from bytes either.
  delete global.WebAssembly;

  // ---- Resizable and growable buffers ---------------------------------------------------------
  // V8 reserves the memory of `new ArrayBuffer(n, { maxByteLength })` (and growable
  // SharedArrayBuffers) itself, outside the budgeted allocator. The constructors are wrapped so
  // the maximum lengths a run asks for, added up, stay within the ArrayBuffer budget.
  let reservedBytes = 0;
  const wrappedConstructors = new WeakSet();
  function wrapBufferConstructor(name) {
    const Original = global[name];
    if (typeof Original !== 'function' || wrappedConstructors.has(Original)) return;
    const Wrapped = {
      [name]: function (length, options) {
        if (new.target === undefined) {
          throw new TypeErrorCtor(`Constructor ${name} requires 'new'`);
        }
        // `maxByteLength` is read and converted exactly once, and V8 is handed that number in
        // a fresh options object: a getter or valueOf that answers differently on a second
        // read must not reach V8 with a bigger value than the one checked here. Options may
        // be any object, functions included, as in the spec.
        const isObject = options !== null && (typeof options === 'object' || typeof options === 'function');
        const raw = isObject ? options.maxByteLength : undefined;
        if (raw === undefined) return ReflectConstruct(Original, [length], new.target);
        const max = NumberCtor(raw); // NaN becomes 0 in V8's ToIndex, as it does here
        if (max > natives.arrayBufferBudget - reservedBytes) {
          throw new RangeErrorCtor(`${name} maxByteLength ${max} exceeds the sandbox's memory budget of ${natives.arrayBufferBudget} bytes`);
        }
        const buffer = ReflectConstruct(Original, [length, { maxByteLength: max }], new.target);
        reservedBytes += max > 0 ? max : 0;
        return buffer;
      },
    }[name];
    defineProperty(Wrapped, 'prototype', { value: Original.prototype, writable: false, enumerable: false, configurable: false });
    defineProperty(Wrapped, 'length', { value: Original.length, writable: false, enumerable: false, configurable: true });
    defineProperty(Original.prototype, 'constructor', { value: Wrapped, writable: true, enumerable: false, configurable: true });
    for (const key of Reflect.ownKeys(Original)) {
      if (key === 'prototype' || key === 'length' || key === 'name') continue;
      defineProperty(Wrapped, key, Object.getOwnPropertyDescriptor(Original, key));
    }
    defineProperty(global, name, { value: Wrapped, writable: true, enumerable: false, configurable: true });
    wrappedConstructors.add(Wrapped);
  }
  wrapBufferConstructor('ArrayBuffer');
  wrapBufferConstructor('SharedArrayBuffer');

  // V8 installs some globals again on every context it deserializes from the startup snapshot
  // (WebAssembly, SharedArrayBuffer). The worker calls this on each restored context.
  function refreshContext() {
    delete global.WebAssembly;
    wrapBufferConstructor('SharedArrayBuffer');
  }

  // ---- Guarded array builtins -------------------------------------------------------------
  // Some Array.prototype builtins loop in C++ without checking for termination, or allocate a
  // copy as long as the receiver claims to be, when called on huge array-likes (measured on the
  // V8 we link: `includes` on { length: 2 ** 40 } ignores TerminateExecution; `sort`, `fill`,
  // `toReversed`, `with`, `toSpliced` on long array-likes abort the whole process). The
  // wrappers below let a builtin see only genuine arrays of bounded length: a genuine array (not
  // a proxy) longer than the cap is refused; any other receiver is copied into a genuine array
  // by a JavaScript loop (which termination can stop), the builtin runs on the copy, and for
  // the mutating methods the copy is written back.
  function toLength(value) {
    const n = MathTrunc(NumberCtor(value));
    if (!(n > 0)) return 0;
    return MathMin(n, 2 ** 53 - 1);
  }
  function refuse(name, length) {
    throw new RangeErrorCtor(
      `Array${name === 'from' ? '' : '.prototype'}.${name}: length ${length} exceeds the sandbox limit of ${natives.maxArrayLike} elements`);
  }
  function snapshot(object, length) {
    const copy = new ArrayCtor(length);
    for (let i = 0; i < length; i++) {
      if (i in object) copy[i] = object[i];
    }
    return copy;
  }
  function writeBack(object, copy, oldLength) {
    const newLength = copy.length;
    for (let i = 0; i < newLength; i++) {
      if (i in copy) object[i] = copy[i];
      else delete object[i];
    }
    for (let i = newLength; i < oldLength; i++) delete object[i];
    object.length = newLength;
  }
  function guard(name, mutating) {
    const original = ArrayCtor.prototype[name];
    if (typeof original !== 'function') return;
    const wrapper = {
      [name](...args) {
        const length = nativeArrayLength(this);
        if (length >= 0) {
          if (length > natives.maxArrayLike) refuse(name, length);
          return ReflectApply(original, this, args);
        }
        if (this === null || this === undefined) {
          throw new TypeErrorCtor(`Array.prototype.${name} called on null or undefined`);
        }
        const object = ObjectCtor(this);
        const claimed = toLength(object.length);
        if (claimed > natives.maxArrayLike) refuse(name, claimed);
        const copy = snapshot(object, claimed);
        const result = ReflectApply(original, copy, args);
        if (mutating) {
          writeBack(object, copy, claimed);
          if (result === copy) return object;
        }
        return result;
      },
    }[name];
    defineProperty(ArrayCtor.prototype, name, {
      value: wrapper, writable: true, enumerable: false, configurable: true,
    });
  }
  // The callback methods skip holes without calling back, so a sparse receiver with a huge
  // length loops in the builtin without ever returning to JavaScript (measured: `map`, `filter`,
  // `some`, `reduce` on { length: 2 ** 32 - 1 } ignore termination).
  for (const name of ['includes', 'indexOf', 'lastIndexOf', 'join', 'toLocaleString', 'slice',
    'toReversed', 'toSorted', 'toSpliced', 'with', 'flat', 'flatMap', 'forEach', 'map', 'filter',
    'some', 'every', 'reduce', 'reduceRight']) {
    guard(name, false);
  }
  // concat spreads objects marked Symbol.isConcatSpreadable by walking their claimed length in
  // the builtin (measured: { length: 2 ** 30 } ignores termination). Such objects are replaced
  // by bounded genuine copies; genuine arrays pass as they are.
  const originalConcat = ArrayCtor.prototype.concat;
  const spreadableKey = Symbol.isConcatSpreadable;
  function concatOperand(value) {
    if (value === null || typeof value !== 'object' || nativeArrayLength(value) >= 0 ||
      !value[spreadableKey]) {
      return value;
    }
    const claimed = toLength(value.length);
    if (claimed > natives.maxArrayLike) refuse('concat', claimed);
    return snapshot(value, claimed);
  }
  defineProperty(ArrayCtor.prototype, 'concat', {
    value: {
      concat(...items) {
        const receiver = (this === null || this === undefined) ? this : concatOperand(ObjectCtor(this));
        const operands = [];
        for (let i = 0; i < items.length; i++) operands[i] = concatOperand(items[i]);
        return ReflectApply(originalConcat, receiver, operands);
      },
    }.concat,
    writable: true, enumerable: false, configurable: true,
  });

  // Array.from on a non-iterable array-like walks its claimed length in the builtin.
  const originalFrom = ArrayCtor.from;
  const iteratorKey = Symbol.iterator;
  defineProperty(ArrayCtor, 'from', {
    value: {
      from(items, ...rest) {
        if (items !== null && items !== undefined && typeof items[iteratorKey] !== 'function') {
          const object = ObjectCtor(items);
          const claimed = toLength(object.length);
          if (claimed > natives.maxArrayLike) refuse('from', claimed);
          return ReflectApply(originalFrom, this, [snapshot(object, claimed), ...rest]);
        }
        return ReflectApply(originalFrom, this, [items, ...rest]);
      },
    }.from,
    writable: true, enumerable: false, configurable: true,
  });
  for (const name of ['reverse', 'copyWithin', 'fill', 'sort', 'shift', 'unshift', 'splice']) {
    guard(name, true);
  }

  // ---- console -----------------------------------------------------------------------------
  function show(value) {
    try {
      return StringCtor(value);
    } catch {
      try {
        return ReflectApply(objectToString, value, []);
      } catch {
        return '[object]';
      }
    }
  }
  function line(args) {
    let text = '';
    for (let i = 0; i < args.length; i++) {
      if (i > 0) text += ' ';
      text += show(args[i]);
    }
    return text;
  }
  const LOG = 0, WARN = 1, ERROR = 2;
  const noop = () => {};
  const counts = new Map();
  const timers = new Map();
  const consoleObject = {
    log(...args) { nativeLog(LOG, line(args)); },
    info(...args) { nativeLog(LOG, line(args)); },
    debug(...args) { nativeLog(LOG, line(args)); },
    trace(...args) { nativeLog(LOG, line(args)); },
    dir(value) { nativeLog(LOG, show(value)); },
    dirxml(...args) { nativeLog(LOG, line(args)); },
    table(value) { nativeLog(LOG, show(value)); },
    warn(...args) { nativeLog(WARN, line(args)); },
    error(...args) { nativeLog(ERROR, line(args)); },
    assert(condition, ...args) {
      if (!condition) {
        nativeLog(ERROR, args.length ? 'Assertion failed: ' + line(args) : 'Assertion failed');
      }
    },
    count(label = 'default') {
      const key = show(label);
      const n = (counts.get(key) || 0) + 1;
      counts.set(key, n);
      nativeLog(LOG, `${key}: ${n}`);
    },
    countReset(label = 'default') { counts.delete(show(label)); },
    time(label = 'default') { timers.set(show(label), Date.now()); },
    timeLog(label = 'default', ...args) {
      const key = show(label);
      if (timers.has(key)) {
        const rest = args.length ? ' ' + line(args) : '';
        nativeLog(LOG, `${key}: ${Date.now() - timers.get(key)}ms${rest}`);
      }
    },
    timeEnd(label = 'default') {
      const key = show(label);
      if (timers.has(key)) {
        nativeLog(LOG, `${key}: ${Date.now() - timers.get(key)}ms`);
        timers.delete(key);
      }
    },
    group(...args) { if (args.length) nativeLog(LOG, line(args)); },
    groupCollapsed(...args) { if (args.length) nativeLog(LOG, line(args)); },
    groupEnd: noop,
    clear: noop,
    profile: noop,
    profileEnd: noop,
    timeStamp: noop,
  };
  defineProperty(global, 'console', {
    value: consoleObject, writable: true, enumerable: false, configurable: true,
  });

  // ---- Namespaces ---------------------------------------------------------------------------
  const codec = natives.codec;
  const indirectEval = eval;
  const PAUSE = codec.PAUSE_MARKER;
  const CONTROL = codec.CONTROL_KEY;

  // The JSON text of an argument list, always an array at the top: each argument is encoded on
  // its own, so a program's Array.prototype.toJSON cannot turn the list into something else.
  function argumentsJson(args) {
    let text = '[';
    for (let i = 0; i < args.length; i++) {
      const part = codec.transportStringify(args[i]);
      text += (i > 0 ? ',' : '') + (part === undefined ? 'null' : part);
    }
    return text + ']';
  }

  // A provider tool: arguments and reply travel with the transport codec (JSON, binary
  // envelopes); an error reply throws an Error carrying only the message.
  function providerTool(provider, tool, known) {
    return async (...args) => {
      if (!ReflectApply(setHas, known, [tool])) {
        throw new ErrorCtor(`Tool "${tool}" not found`);
      }
      const reply = await nativeCall(provider, tool, argumentsJson(args));
      let parsed;
      try {
        parsed = codec.transportParse(reply);
      } catch {
        throw new ErrorCtor(`The host's reply to ${provider}.${tool} is not valid JSON`);
      }
      if (parsed === null || typeof parsed !== 'object') {
        throw new ErrorCtor(`The host's reply to ${provider}.${tool} is not an object`);
      }
      if (parsed.error) throw new ErrorCtor(show(parsed.error));
      return parsed.result;
    };
  }

  // A connector method: only the first argument is forwarded, values travel with the clone
  // codec, and the binding answers with a value or a control marker (pause / error).
  function connectorMethod(connector, method) {
    return async (...args) => {
      const reply = await nativeCall(connector, method, codec.cloneStringify(args.length > 0 ? [args[0]] : []));
      const value = codec.cloneParse(reply);
      if (value !== null && typeof value === 'object' && hasOwn(value, CONTROL)) {
        if (value[CONTROL] === 'pause') throw new ErrorCtor(PAUSE);
        if (value[CONTROL] === 'error') throw new ErrorCtor(StringCtor(value.message));
        // A recorded result, with when it was recorded: the program's clock moves to it.
        if (value[CONTROL] === 'value') {
          if (advanceClock !== undefined) advanceClock(value.at);
          return value.value;
        }
      }
      return value;
    };
  }

  // ---- Replay: time and randomness that repeat on every pass of a durable run ----------------
  // Asked for by the host (the durable runtime) with `replay: { seed, start }` in the run's
  // configuration. The clock starts at `start` and moves only when a reply carrying the time it
  // was recorded reaches the program (`{ [CONTROL]: 'value', value, at }`): the model Workers
  // use, where time is that of the last event. Randomness (Math.random, crypto.getRandomValues,
  // crypto.randomUUID) is one ChaCha20 keystream keyed by the run's seed. A pass that receives
  // the same replies in the same order therefore sees the same times and the same random
  // values; timers do not move the clock.
  let advanceClock;
  const Uint32ArrayCtor = Uint32Array;
  const Uint8ArrayCtor = Uint8Array;
  const DateCtor = Date;
  const dateToString = Date.prototype.toString;

  // 64 bytes of ChaCha20 keystream at a time (RFC 8439's block function; key from the seed,
  // nonce zero, a block counter), handed out byte by byte.
  function keystream(seedHex) {
    const key = new Uint32ArrayCtor(8);
    for (let i = 0; i < 8; i++) {
      const digits = ReflectApply(stringSlice, seedHex, [(i * 8) % seedHex.length, (i * 8) % seedHex.length + 8]);
      key[i] = NumberCtor.parseInt(digits, 16) ^ (i * 0x9e3779b9);
    }
    const input = new Uint32ArrayCtor(16);
    const block = new Uint32ArrayCtor(16);
    const bytes = new Uint8ArrayCtor(block.buffer);
    let counter = 0;
    let used = 64;
    const rotl = (x, n) => (x << n) | (x >>> (32 - n));
    function quarter(a, b, c, d) {
      block[a] += block[b]; block[d] = rotl(block[d] ^ block[a], 16);
      block[c] += block[d]; block[b] = rotl(block[b] ^ block[c], 12);
      block[a] += block[b]; block[d] = rotl(block[d] ^ block[a], 8);
      block[c] += block[d]; block[b] = rotl(block[b] ^ block[c], 7);
    }
    function refill() {
      input[0] = 0x61707865; input[1] = 0x3320646e; input[2] = 0x79622d32; input[3] = 0x6b206574;
      for (let i = 0; i < 8; i++) input[4 + i] = key[i];
      input[12] = counter++;
      input[13] = 0; input[14] = 0; input[15] = 0;
      for (let i = 0; i < 16; i++) block[i] = input[i];
      for (let round = 0; round < 10; round++) {
        quarter(0, 4, 8, 12); quarter(1, 5, 9, 13); quarter(2, 6, 10, 14); quarter(3, 7, 11, 15);
        quarter(0, 5, 10, 15); quarter(1, 6, 11, 12); quarter(2, 7, 8, 13); quarter(3, 4, 9, 14);
      }
      for (let i = 0; i < 16; i++) block[i] += input[i];
      used = 0;
    }
    return {
      // A fresh ArrayBuffer of `n` bytes.
      bytes(n) {
        const out = new Uint8ArrayCtor(n);
        for (let i = 0; i < n; i++) {
          if (used === 64) refill();
          out[i] = bytes[used++];
        }
        return out.buffer;
      },
      // A double in [0, 1) from 53 bits.
      float() {
        const words = new Uint32ArrayCtor(this.bytes(8));
        return ((words[0] >>> 5) * 67108864 + (words[1] >>> 6)) / 9007199254740992;
      },
    };
  }

  function installReplay(replay) {
    const start = NumberCtor(replay.start);
    let clock = start;
    const now = () => clock;
    advanceClock = (at) => {
      if (typeof at === 'number' && at > clock) clock = at;
    };
    const stream = keystream(StringCtor(replay.seed));
    natives.randomBytes = (n) => stream.bytes(n);
    natives.now = () => clock - start;
    defineProperty(Math, 'random', {
      value: function random() { return stream.float(); }, writable: true, enumerable: false, configurable: true,
    });
    // Date as a program sees it: the same constructor and prototype, reading the run's clock
    // where the platform's would read the system's.
    const ReplayDate = function Date(...args) {
      if (new.target === undefined) return ReflectApply(dateToString, new DateCtor(now()), []);
      return ReflectConstruct(DateCtor, args.length === 0 ? [now()] : args, new.target);
    };
    defineProperty(ReplayDate, 'length', { value: 7, configurable: true });
    ReplayDate.prototype = DateCtor.prototype;
    defineProperty(ReplayDate, 'now', { value: function now() { return clock; }, writable: true, configurable: true });
    defineProperty(ReplayDate, 'parse', { value: DateCtor.parse, writable: true, configurable: true });
    defineProperty(ReplayDate, 'UTC', { value: DateCtor.UTC, writable: true, configurable: true });
    defineProperty(DateCtor.prototype, 'constructor', { value: ReplayDate, writable: true, configurable: true });
    defineProperty(global, 'Date', { value: ReplayDate, writable: true, enumerable: false, configurable: true });
  }

  function defineNamespace(name, handler) {
    const namespace = new ProxyCtor({}, handler);
    defineProperty(global, name, {
      value: namespace, writable: false, enumerable: false, configurable: false,
    });
  }

  let resultMode = 'json';

  // Called once per run, before the program: installs the namespaces, runs the preludes, and
  // sets how the result is encoded ('json' strict JSON, or 'clone' the clone codec).
  function prepareRun(configJson) {
    const config = jsonParse(configJson);
    resultMode = config.resultMode === 'clone' ? 'clone' : 'json';
    if (config.replay !== undefined && config.replay !== null) installReplay(config.replay);
    for (const space of config.namespaces) {
      const name = space.name;
      if (space.kind === 'connector') {
        defineNamespace(name, {
          get(target, key) {
            if (typeof key !== 'string') return undefined;
            if (key === 'then') return undefined;
            return connectorMethod(name, key);
          },
        });
        continue;
      }
      const known = new SetCtor(space.tools);
      defineNamespace(name, {
        get(target, key) {
          // Own properties win: this is how a prelude installs real functions.
          if (hasOwn(target, key)) return target[key];
          if (typeof key !== 'string') return undefined;
          // Not thenable by accident: `await namespace` must not call a tool named "then".
          if (key === 'then' && !ReflectApply(setHas, known, ['then'])) return undefined;
          return providerTool(name, key, known);
        },
      });
    }
    if (config.modules !== undefined) natives.registerModules(jsonStringify(config.modules));
    // web_net.js's fetch reads this when it is called.
    natives.outbound = config.outbound === true;
    for (const space of config.namespaces) {
      if (typeof space.prelude === 'string') indirectEval(space.prelude);
    }
  }

  // ---- Results and errors --------------------------------------------------------------------
  function strictReplacer(key, value) {
    const type = typeof value;
    if (type === 'function' || type === 'symbol' || type === 'bigint') {
      throw new TypeErrorCtor(`a ${type} value cannot be transferred`);
    }
    return value;
  }
  // Returns the text of the result, or undefined for undefined. In 'json' mode it is strict
  // JSON and throws for functions, symbols, bigints and cycles; in 'clone' mode it is the clone
  // codec, which keeps those but functions and symbols.
  function encodeResult(value) {
    if (value === undefined) return undefined;
    if (resultMode === 'clone') return codec.cloneStringify(value);
    return jsonStringify(value, strictReplacer);
  }
  // The text the host reports for a thrown value: the message of an Error, String(value) for
  // anything else.
  function describeError(error) {
    const text = describeUnbounded(error);
    if (text.length <= natives.maxErrorChars) return text;
    return ReflectApply(stringSlice, text, [0, natives.maxErrorChars]) +
      ` ... [error message truncated: ${text.length} characters in all, maxErrorChars]`;
  }
  function describeUnbounded(error) {
    try {
      if (error instanceof ErrorCtor || (error !== null && typeof error === 'object' &&
        typeof error.message === 'string' && typeof error.name === 'string')) {
        const message = show(error.message);
        return message === '' ? show(error) : message;
      }
      return show(error);
    } catch {
      return 'The program threw a value whose message could not be read';
    }
  }

  // `import(specifier)` from the program: the module registered under that specifier, once
  // its evaluation (top-level await included) has finished. The load starts a microtask later,
  // never inside the caller: an import() made while a module's top level is still evaluating
  // (through an overridden builtin, or a module importing itself) would otherwise ask V8 to
  // evaluate a module that is mid-evaluation, which aborts the process.
  async function importModule(specifier) {
    await undefined;
    const [namespace, evaluation] = natives.loadModule(StringCtor(specifier));
    await evaluation;
    return namespace;
  }

  return { prepareRun, encodeResult, describeError, importModule, refreshContext };
})
