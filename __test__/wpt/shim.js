'use strict';
// A minimal stand-in for WPT's testharness.js, written for this project: test, async_test,
// promise_test, setup, done, step_timeout and the assert_* functions the vendored files use,
// including the legacy assert_throws / promise_rejects of older WPT files. As in a worker, the
// global object is also `self`, and GLOBAL says the scope is a worker (not a window).
// It is plain text (SHIM) so that the same source runs inside the sandbox and in plain Node:
// evaluated first, it defines those globals and `__wptResults(timeoutMs)`, which resolves, once
// every subtest has finished (or the time is up), to [{ name, status, message }] with status
// 'PASS', 'FAIL' or 'TIMEOUT'.
function shim() {
  const results = [];
  const pending = new Set();
  const promiseQueue = [];
  let promiseChain = Promise.resolve();

  class AssertionError extends Error {
    constructor(message) {
      super(message);
      this.name = 'AssertionError';
    }
  }
  const fmt = (v) => {
    if (typeof v === 'string') return JSON.stringify(v);
    if (Object.is(v, -0)) return '-0';
    try {
      return String(v);
    } catch {
      return Object.prototype.toString.call(v);
    }
  };
  const fail = (description, detail) => {
    throw new AssertionError(description ? `${description}: ${detail}` : detail);
  };
  const same = (a, b) => (a === b ? a !== 0 || 1 / a === 1 / b : a !== a && b !== b);
  const errorText = (error) => (error && error.message !== undefined ? `${error.name}: ${error.message}` : String(error));
  // A subtest without a name is called as testharness.js calls it: "Untitled", "Untitled 1", ...
  let untitled = 0;
  const nameOf = (name) => (name !== undefined ? name : untitled++ === 0 ? 'Untitled' : `Untitled ${untitled - 1}`);
  // legacy assert_throws(code, ...) and promise_rejects(t, code, ...): a string is a DOMException
  // name, an object matches the thrown value itself or an error of the same name.
  const legacyMatch = (code, error, description) => {
    if (typeof code === 'string') {
      if (!error || error.name !== code) fail(description, `expected DOMException ${code} but got ${error && error.name}`);
    } else if (error !== code && !(error && code && error.name === code.name)) {
      fail(description, `expected ${fmt(code && code.name)} but got ${fmt(error && error.name)}`);
    }
  };
  const objectEquals = (actual, expected, description, path, seen) => {
    if (same(actual, expected)) return;
    if (typeof actual !== 'object' || actual === null || typeof expected !== 'object' || expected === null) {
      fail(description, `property ${path}: expected ${fmt(expected)} got ${fmt(actual)}`);
    }
    if (seen.has(expected)) return;
    seen.add(expected);
    for (const key of Object.keys(actual)) {
      if (!Object.prototype.hasOwnProperty.call(expected, key)) fail(description, `unexpected property ${path}.${key}`);
    }
    for (const key of Object.keys(expected)) {
      if (!Object.prototype.hasOwnProperty.call(actual, key)) fail(description, `expected property ${path}.${key} missing`);
      objectEquals(actual[key], expected[key], description, `${path}.${key}`, seen);
    }
  };

  class Test {
    constructor(name) {
      this.name = nameOf(name);
      this.phase = 'running';
      this.cleanups = [];
      pending.add(this);
    }
    finish(status, message) {
      if (this.phase !== 'running') return;
      this.phase = 'done';
      pending.delete(this);
      for (const cleanup of this.cleanups) {
        try {
          cleanup();
        } catch {
          // a failing cleanup does not change the subtest's result
        }
      }
      results.push({ name: this.name, status, message });
    }
    step(fn, self, ...args) {
      if (this.phase !== 'running') return undefined;
      try {
        return fn.apply(self === undefined ? this : self, args);
      } catch (error) {
        this.finish('FAIL', errorText(error));
        return undefined;
      }
    }
    step_func(fn, self) {
      return (...args) => this.step(fn, self, ...args);
    }
    step_func_done(fn, self) {
      return (...args) => {
        const value = fn ? this.step(fn, self, ...args) : undefined;
        this.done();
        return value;
      };
    }
    unreached_func(description) {
      return this.step_func(() => fail(description, 'reached unreachable code'));
    }
    step_timeout(fn, ms, ...args) {
      return setTimeout(this.step_func(() => fn(...args)), ms);
    }
    add_cleanup(fn) {
      this.cleanups.push(fn);
    }
    done() {
      this.finish('PASS');
    }
  }

  const api = {
    test(fn, name) {
      const t = new Test(name);
      t.step(fn, t, t);
      t.done();
    },
    async_test(fn, name) {
      if (typeof fn !== 'function') [fn, name] = [undefined, fn];
      const t = new Test(name);
      if (fn) t.step(fn, t, t);
      return t;
    },
    promise_test(fn, name) {
      const t = new Test(name);
      promiseQueue.push(t);
      promiseChain = promiseChain.then(async () => {
        try {
          const value = t.step(fn, t, t);
          if (t.phase !== 'running') return;
          if (!value || typeof value.then !== 'function') {
            t.finish('FAIL', 'promise_test: test body must return a promise');
            return;
          }
          await value;
          t.done();
        } catch (error) {
          t.finish('FAIL', errorText(error));
        }
      });
    },
    setup(fnOrOptions) {
      if (typeof fnOrOptions === 'function') fnOrOptions();
    },
    done() {},
    step_timeout(fn, ms, ...args) {
      return setTimeout(() => fn(...args), ms);
    },
    format_value: fmt,
    assert_true(actual, description) {
      if (actual !== true) fail(description, `expected true got ${fmt(actual)}`);
    },
    assert_false(actual, description) {
      if (actual !== false) fail(description, `expected false got ${fmt(actual)}`);
    },
    assert_equals(actual, expected, description) {
      if (!same(actual, expected)) fail(description, `expected ${fmt(expected)} but got ${fmt(actual)}`);
    },
    assert_not_equals(actual, expected, description) {
      if (same(actual, expected)) fail(description, `got disallowed value ${fmt(actual)}`);
    },
    assert_less_than(actual, expected, description) {
      if (!(actual < expected)) fail(description, `expected a number less than ${fmt(expected)} but got ${fmt(actual)}`);
    },
    assert_greater_than(actual, expected, description) {
      if (!(actual > expected)) fail(description, `expected a number greater than ${fmt(expected)} but got ${fmt(actual)}`);
    },
    assert_less_than_equal(actual, expected, description) {
      if (!(actual <= expected)) fail(description, `expected a number less than or equal to ${fmt(expected)} but got ${fmt(actual)}`);
    },
    assert_greater_than_equal(actual, expected, description) {
      if (!(actual >= expected)) fail(description, `expected a number greater than or equal to ${fmt(expected)} but got ${fmt(actual)}`);
    },
    assert_approx_equals(actual, expected, epsilon, description) {
      if (!(Math.abs(actual - expected) <= epsilon)) fail(description, `expected ${fmt(expected)} +/- ${fmt(epsilon)} but got ${fmt(actual)}`);
    },
    assert_regexp_match(actual, expected, description) {
      if (!expected.test(actual)) fail(description, `expected ${fmt(actual)} to match ${expected}`);
    },
    assert_object_equals(actual, expected, description) {
      objectEquals(actual, expected, description, '', new Set());
    },
    assert_implements(condition, description) {
      if (!condition) fail(description, 'not implemented');
    },
    assert_implements_optional(condition, description) {
      if (!condition) fail(description, 'optional feature not implemented');
    },
    assert_in_array(actual, expected, description) {
      if (!expected.includes(actual)) fail(description, `value ${fmt(actual)} not in array`);
    },
    assert_array_equals(actual, expected, description) {
      if (typeof actual !== 'object' || actual === null || !('length' in actual)) fail(description, `value is ${fmt(actual)}, expected array`);
      if (actual.length !== expected.length) fail(description, `lengths differ, expected ${expected.length} got ${actual.length}`);
      for (let i = 0; i < actual.length; i++) {
        if (!same(actual[i], expected[i])) fail(description, `expected ${fmt(expected[i])} but got ${fmt(actual[i])} at index ${i}`);
      }
    },
    assert_class_string(object, className, description) {
      const actual = Object.prototype.toString.call(object);
      if (actual !== `[object ${className}]`) fail(description, `expected [object ${className}] got ${actual}`);
    },
    assert_own_property(object, name, description) {
      if (!Object.prototype.hasOwnProperty.call(object, name)) fail(description, `expected own property ${fmt(name)}`);
    },
    assert_not_own_property(object, name, description) {
      if (Object.prototype.hasOwnProperty.call(object, name)) fail(description, `unexpected own property ${fmt(name)}`);
    },
    assert_unreached(description) {
      fail(description, 'reached unreachable code');
    },
    assert_throws_js(constructor, fn, description) {
      try {
        fn();
      } catch (error) {
        if (!(error instanceof constructor) && !(error && error.name === constructor.name)) {
          fail(description, `expected ${constructor.name} but got ${error && error.name}`);
        }
        return;
      }
      fail(description, `expected ${constructor.name} to be thrown`);
    },
    assert_throws_dom(type, fn, description) {
      try {
        fn();
      } catch (error) {
        if (!error || error.name !== type) fail(description, `expected DOMException ${type} but got ${error && error.name}`);
        return;
      }
      fail(description, `expected DOMException ${type} to be thrown`);
    },
    assert_throws_exactly(exception, fn, description) {
      try {
        fn();
      } catch (error) {
        if (!same(error, exception)) fail(description, `expected ${fmt(exception)} but got ${fmt(error)}`);
        return;
      }
      fail(description, `expected ${fmt(exception)} to be thrown`);
    },
    assert_throws(code, fn, description) {
      try {
        fn();
      } catch (error) {
        legacyMatch(code, error, description);
        return;
      }
      fail(description, 'expected an exception to be thrown');
    },
    async promise_rejects(t, code, promise, description) {
      try {
        await promise;
      } catch (error) {
        legacyMatch(code, error, description);
        return;
      }
      fail(description, 'expected a rejection');
    },
    async promise_rejects_exactly(t, exception, promise, description) {
      try {
        await promise;
      } catch (error) {
        if (!same(error, exception)) fail(description, `expected ${fmt(exception)} but got ${fmt(error)}`);
        return;
      }
      fail(description, `expected a rejection with ${fmt(exception)}`);
    },
    async promise_rejects_js(t, constructor, promise, description) {
      try {
        await promise;
      } catch (error) {
        if (!(error instanceof constructor) && !(error && error.name === constructor.name)) {
          fail(description, `expected ${constructor.name} but got ${error && error.name}`);
        }
        return;
      }
      fail(description, `expected a rejection with ${constructor.name}`);
    },
    async promise_rejects_dom(t, type, promise, description) {
      try {
        await promise;
      } catch (error) {
        if (!error || error.name !== type) fail(description, `expected DOMException ${type} but got ${error && error.name}`);
        return;
      }
      fail(description, `expected a rejection with ${type}`);
    },
  };
  Object.assign(globalThis, api);
  // testharness.js's error class is a global too (generateKey/successes.js tests `instanceof`).
  globalThis.AssertionError = AssertionError;
  if (typeof globalThis.self === 'undefined') globalThis.self = globalThis;
  globalThis.GLOBAL = { isWindow: () => false, isWorker: () => true, isShadowRealm: () => false };
  // A worker's location (common/subset-tests.js reads its search); neither Node nor the sandbox has one.
  if (typeof globalThis.location === 'undefined') {
    globalThis.location = { href: 'https://web-platform.test/', origin: 'https://web-platform.test', protocol: 'https:',
      host: 'web-platform.test', hostname: 'web-platform.test', port: '', pathname: '/', search: '', hash: '' };
  }

  globalThis.__wptResults = async (timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (pending.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const t of pending) t.finish('TIMEOUT', 'the subtest did not finish in time');
    return results;
  };
}

const SHIM = `(${shim.toString()})();`;

module.exports = { SHIM };
