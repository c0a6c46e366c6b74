// The WHATWG Streams standard inside the sandbox: ReadableStream (default readers, async
// iteration, tee, pipeTo/pipeThrough, ReadableStream.from; `type: 'bytes'` streams with default
// and BYOB readers), WritableStream, TransformStream, the two queuing strategies,
// TextEncoderStream/TextDecoderStream and CompressionStream/DecompressionStream. Written from the
// standard's abstract operations, whose names the functions below keep. Not in the snapshot: the first use of a stream (a stream global,
// a body's `body`, Blob.stream()) has natives.loadScript compile this file, and web_net.js calls
// the function it evaluates to with the intrinsics it captured in the snapshot (a program may have
// replaced the globals by then) and the AbortController/AbortSignal classes it built. Every queue
// lives on the isolate's heap, under the run's memory bound.
(function streams(intrinsics, net) {
  'use strict';
  const { AbortController, isSignal, concatChunks, zlib } = net;
  const notThis = (method) => new TypeErrorCtor(`Failed to execute '${method}' on 'ReadableStream': Illegal invocation`);
  const { defineProperty, getPrototypeOf, create: objectCreate } = intrinsics.Object;
  const ReflectApply = intrinsics.ReflectApply;
  const PromiseCtor = intrinsics.Promise;
  const promiseThen = intrinsics.promiseThen;
  const promiseResolve = intrinsics.promiseResolve;
  const promiseReject = intrinsics.promiseReject;
  const promiseAll = intrinsics.promiseAll;
  const PromiseResolve = (value) => ReflectApply(promiseResolve, PromiseCtor, [value]);
  const PromiseReject = (reason) => ReflectApply(promiseReject, PromiseCtor, [reason]);
  const PromiseAll = (values) => ReflectApply(promiseAll, PromiseCtor, [values]);
  const TypeErrorCtor = intrinsics.TypeError;
  const RangeErrorCtor = intrinsics.RangeError;
  const NumberCtor = intrinsics.Number;
  const StringCtor = intrinsics.String;
  const Uint8ArrayCtor = intrinsics.Uint8Array;
  const isView = intrinsics.isView;
  const SymbolAsyncIterator = intrinsics.SymbolAsyncIterator;
  const SymbolIterator = intrinsics.SymbolIterator;
  const SymbolToStringTag = intrinsics.SymbolToStringTag;
  const AsyncIteratorPrototype = intrinsics.AsyncIteratorPrototype;
  const bufferByteLength = intrinsics.bufferByteLength;
  const TextEncoderCtor = intrinsics.TextEncoder;
  const TextDecoderCtor = intrinsics.TextDecoder;
  const queueMicrotaskFn = intrinsics.queueMicrotask;
  const MathFloor = intrinsics.MathFloor;
  const WeakMapCtor = intrinsics.WeakMap;
  const SymbolCtor = intrinsics.Symbol;
  const ArrayBufferCtor = intrinsics.ArrayBuffer;
  const DataViewCtor = intrinsics.DataView;
  const TYPED_ARRAYS = intrinsics.TYPED_ARRAYS;
  const typedArrayTag = intrinsics.typedArrayTag;
  const bufferTransfer = intrinsics.bufferTransfer;
  const bufferDetached = intrinsics.bufferDetached;
  {
    function then(promise, onFulfilled, onRejected) {
      return ReflectApply(promiseThen, promise, [onFulfilled, onRejected]);
    }
    function markHandled(promise) {
      then(promise, undefined, () => {});
      return promise;
    }
    function noop() {}
    // A promise with its settling functions and a flag telling whether it is still pending.
    function deferred() {
      const d = { promise: null, resolve: null, reject: null, settled: false };
      d.promise = new PromiseCtor((resolve, reject) => {
        d.resolve = (value) => { d.settled = true; resolve(value); };
        d.reject = (reason) => { d.settled = true; reject(reason); };
      });
      return d;
    }
    function rejectedDeferred(reason) {
      const d = deferred();
      d.reject(reason);
      markHandled(d.promise);
      return d;
    }
    function resolvedDeferred(value) {
      const d = deferred();
      d.resolve(value);
      return d;
    }
    // Calls `method` of `object` (if any) and turns its result or exception into a promise.
    function promiseCall(method, object, args) {
      if (method === undefined) return PromiseResolve(undefined);
      try {
        return PromiseResolve(ReflectApply(method, object, args));
      } catch (error) {
        return PromiseReject(error);
      }
    }
    function getMethod(object, name, context) {
      const method = object[name];
      if (method === undefined || method === null) return undefined;
      if (typeof method !== 'function') throw new TypeErrorCtor(`${context}: '${name}' must be a function`);
      return method;
    }
    function isObject(value) {
      return value !== null && (typeof value === 'object' || typeof value === 'function');
    }
    function dictionary(value, context) {
      if (value === undefined || value === null) return {};
      if (!isObject(value)) throw new TypeErrorCtor(`${context}: the argument is not an object`);
      return value;
    }
    function isArrayBuffer(value) {
      try {
        ReflectApply(bufferByteLength, value, []);
        return true;
      } catch {
        return false;
      }
    }

    // ---- Queuing strategies -------------------------------------------------------------------
    // A QueuingStrategy dictionary's members, read once in name order (highWaterMark, converted
    // to a number, then size, which must be callable), as a plain object.
    function strategyMembers(strategy, context) {
      const dict = dictionary(strategy, context);
      const raw = dict.highWaterMark;
      const highWaterMark = raw === undefined ? undefined : NumberCtor(raw);
      const size = dict.size;
      if (size !== undefined && typeof size !== 'function') throw new TypeErrorCtor(`${context}: the strategy's size must be a function`);
      return { highWaterMark, size };
    }
    // UnderlyingSource's autoAllocateChunkSize ([EnforceRange] unsigned long long), checked where
    // Web IDL reads it; a byte stream's default reads then bring buffers of that size (bytePullSteps).
    function enforceChunkSize(value, context) {
      if (value === undefined) return undefined;
      const number = NumberCtor(value);
      if (number !== number || number < 0 || number > 9007199254740991) {
        throw new TypeErrorCtor(`${context}: autoAllocateChunkSize is outside the range of unsigned long long`);
      }
      return MathFloor(number);
    }
    function extractHighWaterMark(strategy, defaultHWM) {
      if (strategy.highWaterMark === undefined) return defaultHWM;
      const hwm = NumberCtor(strategy.highWaterMark);
      if (NumberCtor.isNaN(hwm) || hwm < 0) throw new RangeErrorCtor('Invalid highWaterMark');
      return hwm;
    }
    function extractSizeAlgorithm(strategy) {
      const size = strategy.size;
      if (size === undefined) return () => 1;
      if (typeof size !== 'function') throw new TypeErrorCtor('The strategy\'s size must be a function');
      return (chunk) => size(chunk);
    }
    function strategyInit(init, name) {
      if (!isObject(init) || init.highWaterMark === undefined) {
        throw new TypeErrorCtor(`Failed to construct '${name}': highWaterMark is required`);
      }
      return NumberCtor(init.highWaterMark);
    }
    const byteLengthSize = { size(chunk) { return chunk.byteLength; } }.size;
    const countSize = { size() { return 1; } }.size;
    class ByteLengthQueuingStrategy {
      #hwm;
      constructor(init) { this.#hwm = strategyInit(init, 'ByteLengthQueuingStrategy'); }
      get highWaterMark() { return this.#hwm; }
      get size() { return byteLengthSize; }
      get [SymbolToStringTag]() { return 'ByteLengthQueuingStrategy'; }
    }
    class CountQueuingStrategy {
      #hwm;
      constructor(init) { this.#hwm = strategyInit(init, 'CountQueuingStrategy'); }
      get highWaterMark() { return this.#hwm; }
      get size() { return countSize; }
      get [SymbolToStringTag]() { return 'CountQueuingStrategy'; }
    }

    // ---- Queue-with-sizes -----------------------------------------------------------------
    function resetQueue(container) {
      container.queue = [];
      container.queueHead = 0;
      container.queueTotalSize = 0;
    }
    function queueLength(container) {
      return container.queue.length - container.queueHead;
    }
    function enqueueValueWithSize(container, value, size) {
      const n = NumberCtor(size);
      if (NumberCtor.isNaN(n) || n < 0 || n === Infinity) throw new RangeErrorCtor('The chunk size must be a finite, non-negative number');
      container.queue.push({ value, size: n });
      container.queueTotalSize += n;
    }
    function dequeueValue(container) {
      const pair = container.queue[container.queueHead];
      container.queue[container.queueHead] = undefined;
      container.queueHead++;
      if (container.queueHead > 1024 && container.queueHead * 2 > container.queue.length) {
        container.queue = container.queue.slice(container.queueHead);
        container.queueHead = 0;
      }
      container.queueTotalSize -= pair.size;
      if (container.queueTotalSize < 0) container.queueTotalSize = 0;
      return pair.value;
    }
    function peekQueueValue(container) {
      return container.queue[container.queueHead].value;
    }

    // ---- ReadableStream: internal records ------------------------------------------------------
    // Records: stream { state, reader, storedError, disturbed, controller, object }, controller
    // { stream, queue…, started, closeRequested, pullAgain, pulling, strategyHWM, strategySize,
    // pullAlgorithm, cancelAlgorithm, object, bytes }, reader { stream, closed (deferred),
    // readRequests, byob, object }.
    let readableRecord;
    let makeReadable;
    // Set while makeReadable/makeWritable construct an object whose record they supply.
    let constructingBare = false;
    let readerRecord;
    let writableRecord;
    let makeWritable;

    function isReadableLocked(stream) {
      return stream.reader !== null;
    }
    function readableCanCloseOrEnqueue(controller) {
      return !controller.closeRequested && controller.stream.state === 'readable';
    }
    function readableGetDesiredSize(controller) {
      const state = controller.stream.state;
      if (state === 'errored') return null;
      if (state === 'closed') return 0;
      return controller.strategyHWM - controller.queueTotalSize;
    }
    function readableShouldCallPull(controller) {
      if (!readableCanCloseOrEnqueue(controller) || !controller.started) return false;
      const stream = controller.stream;
      if (stream.reader !== null && stream.reader.readRequests.length > 0) return true;
      return readableGetDesiredSize(controller) > 0;
    }
    function readableClearAlgorithms(controller) {
      controller.pullAlgorithm = undefined;
      controller.cancelAlgorithm = undefined;
      controller.strategySize = undefined;
    }
    function readableCallPullIfNeeded(controller) {
      if (!readableShouldCallPull(controller)) return;
      if (controller.pulling) {
        controller.pullAgain = true;
        return;
      }
      controller.pulling = true;
      then(controller.pullAlgorithm(), () => {
        controller.pulling = false;
        if (controller.pullAgain) {
          controller.pullAgain = false;
          readableCallPullIfNeeded(controller);
        }
      }, (error) => readableControllerError(controller, error));
    }
    function readableControllerClose(controller) {
      if (!readableCanCloseOrEnqueue(controller)) return;
      controller.closeRequested = true;
      if (queueLength(controller) === 0) {
        readableClearAlgorithms(controller);
        readableStreamClose(controller.stream);
      }
    }
    function readableControllerEnqueue(controller, chunk) {
      if (!readableCanCloseOrEnqueue(controller)) return;
      const stream = controller.stream;
      if (stream.reader !== null && stream.reader.readRequests.length > 0) {
        readableFulfillReadRequest(stream, chunk, false);
      } else {
        let size;
        try {
          size = controller.strategySize(chunk);
        } catch (error) {
          readableControllerError(controller, error);
          throw error;
        }
        try {
          enqueueValueWithSize(controller, chunk, size);
        } catch (error) {
          readableControllerError(controller, error);
          throw error;
        }
      }
      readableCallPullIfNeeded(controller);
    }
    function readableControllerError(controller, error) {
      const stream = controller.stream;
      if (stream.state !== 'readable') return;
      if (controller.bytes) byteClearPendingPullIntos(controller);
      resetQueue(controller);
      readableClearAlgorithms(controller);
      readableStreamError(stream, error);
    }
    function readablePullSteps(controller, readRequest) {
      const stream = controller.stream;
      if (queueLength(controller) > 0) {
        const chunk = dequeueValue(controller);
        if (controller.closeRequested && queueLength(controller) === 0) {
          readableClearAlgorithms(controller);
          readableStreamClose(stream);
        } else {
          readableCallPullIfNeeded(controller);
        }
        readRequest.chunk(chunk);
      } else {
        stream.reader.readRequests.push(readRequest);
        readableCallPullIfNeeded(controller);
      }
    }
    function readableCancelSteps(controller, reason) {
      resetQueue(controller);
      const result = controller.cancelAlgorithm(reason);
      readableClearAlgorithms(controller);
      return result;
    }
    // A BYOB reader's read-into requests stay pending: the byte controller answers them (with
    // what its pull-into descriptors hold) when the source responds, or cancel closes them.
    function readableStreamClose(stream) {
      stream.state = 'closed';
      const reader = stream.reader;
      if (reader === null) return;
      reader.closed.resolve(undefined);
      if (reader.byob) return;
      const requests = reader.readRequests;
      reader.readRequests = [];
      for (const request of requests) request.close();
    }
    function readableStreamError(stream, error) {
      stream.state = 'errored';
      stream.storedError = error;
      const reader = stream.reader;
      if (reader === null) return;
      reader.closed.reject(error);
      markHandled(reader.closed.promise);
      const requests = reader.readRequests;
      reader.readRequests = [];
      for (const request of requests) request.error(error);
    }
    function readableFulfillReadRequest(stream, chunk, done) {
      const request = stream.reader.readRequests.shift();
      if (done) request.close();
      else request.chunk(chunk);
    }
    function readableStreamCancel(stream, reason) {
      stream.disturbed = true;
      if (stream.state === 'closed') return PromiseResolve(undefined);
      if (stream.state === 'errored') return PromiseReject(stream.storedError);
      readableStreamClose(stream);
      const reader = stream.reader;
      if (reader !== null && reader.byob) {
        const requests = reader.readRequests;
        reader.readRequests = [];
        for (const request of requests) request.close(undefined);
      }
      const result = stream.controller.bytes ? byteCancelSteps(stream.controller, reason) : readableCancelSteps(stream.controller, reason);
      return then(result, () => undefined);
    }
    function readerGenericInitialize(reader, stream) {
      reader.stream = stream;
      stream.reader = reader;
      if (stream.state === 'readable') reader.closed = deferred();
      else if (stream.state === 'closed') reader.closed = resolvedDeferred(undefined);
      else reader.closed = rejectedDeferred(stream.storedError);
    }
    function readerGenericRelease(reader) {
      const stream = reader.stream;
      const error = new TypeErrorCtor('The reader was released');
      if (stream.state === 'readable') reader.closed.reject(error);
      else reader.closed = rejectedDeferred(error);
      markHandled(reader.closed.promise);
      if (stream.controller.bytes) byteReleaseSteps(stream.controller);
      stream.reader = null;
      reader.stream = null;
    }
    function readerRelease(reader) {
      readerGenericRelease(reader);
      const requests = reader.readRequests;
      reader.readRequests = [];
      const error = new TypeErrorCtor('The reader was released');
      for (const request of requests) request.error(error);
    }
    function readerRead(reader, readRequest) {
      const stream = reader.stream;
      stream.disturbed = true;
      if (stream.state === 'closed') readRequest.close();
      else if (stream.state === 'errored') readRequest.error(stream.storedError);
      else stream.controller.pullSteps(readRequest);
    }
    function byobReaderRead(reader, view, min, request) {
      const stream = reader.stream;
      stream.disturbed = true;
      if (stream.state === 'errored') request.error(stream.storedError);
      else bytePullInto(stream.controller, view, min, request);
    }
    function acquireByobReader(stream) {
      const reader = acquireReader(stream);
      reader.byob = true;
      return reader;
    }
    function acquireReader(stream) {
      if (isReadableLocked(stream)) throw new TypeErrorCtor('The stream is locked to a reader');
      const reader = { stream: null, closed: null, readRequests: [], byob: false, object: null };
      readerGenericInitialize(reader, stream);
      return reader;
    }
    // A read request whose result is a promise of { value, done }.
    function promiseReadRequest() {
      const d = deferred();
      return {
        promise: d.promise,
        chunk: (value) => d.resolve({ value, done: false }),
        close: () => d.resolve({ value: undefined, done: true }),
        error: (error) => d.reject(error),
      };
    }

    function newReadableRecord() {
      return { state: 'readable', reader: null, storedError: undefined, disturbed: false, controller: null, object: null };
    }
    function setUpReadableController(stream, controller, startAlgorithm, pullAlgorithm, cancelAlgorithm, hwm, sizeAlgorithm) {
      controller.stream = stream;
      resetQueue(controller);
      controller.started = false;
      controller.closeRequested = false;
      controller.pullAgain = false;
      controller.pulling = false;
      controller.strategySize = sizeAlgorithm;
      controller.strategyHWM = hwm;
      controller.pullAlgorithm = pullAlgorithm;
      controller.cancelAlgorithm = cancelAlgorithm;
      controller.pullSteps = (request) => (controller.bytes ? bytePullSteps : readablePullSteps)(controller, request);
      stream.controller = controller;
      const startResult = startAlgorithm();
      then(PromiseResolve(startResult), () => {
        controller.started = true;
        readableCallPullIfNeeded(controller);
      }, (error) => readableControllerError(controller, error));
    }
    // CreateReadableStream: a stream driven by algorithms (tee branches, transforms, bodies).
    function createReadableStream(startAlgorithm, pullAlgorithm, cancelAlgorithm, hwm = 1, sizeAlgorithm = () => 1) {
      const stream = newReadableRecord();
      makeReadable(stream);
      const controller = { bytes: false, object: null };
      controller.object = makeReadableController(controller);
      setUpReadableController(stream, controller, startAlgorithm, pullAlgorithm, cancelAlgorithm, hwm, sizeAlgorithm);
      return stream;
    }

    // CreateReadableByteStream: a byte stream driven by algorithms (the branches of a byte tee).
    function createReadableByteStream(startAlgorithm, pullAlgorithm, cancelAlgorithm) {
      const stream = newReadableRecord();
      makeReadable(stream);
      const controller = { bytes: true, object: null, autoAllocateChunkSize: undefined, byobRequest: null, pendingPullIntos: [] };
      controller.object = makeReadableController(controller);
      setUpReadableController(stream, controller, startAlgorithm, pullAlgorithm, cancelAlgorithm, 0, (chunk) => chunk.byteLength);
      return stream;
    }

    // ---- Byte streams ------------------------------------------------------------------------
    // The Streams standard's ReadableByteStreamController, operation by operation. The queue holds
    // { buffer, byteOffset, byteLength } entries whose buffers the stream owns: enqueue transfers
    // the source's buffer (detaching the source's view), as a BYOB read transfers the reader's.
    // A pending read that brought its own buffer (or, with autoAllocateChunkSize, a default read
    // given one) is a pull-into descriptor; the source sees the first as controller.byobRequest
    // and fills it in place (respond) or hands back a view over the same memory (respondWithNewView).
    function transferBuffer(buffer) {
      return ReflectApply(bufferTransfer, buffer, []);
    }
    function isDetached(buffer) {
      return ReflectApply(bufferDetached, buffer, []);
    }
    // A view's element size and the constructor of views like it (DataView for a DataView).
    function viewShape(view) {
      const tag = ReflectApply(typedArrayTag, view, []);
      if (tag === undefined) return { elementSize: 1, ctor: DataViewCtor };
      const ctor = TYPED_ARRAYS[tag];
      return { elementSize: ctor.BYTES_PER_ELEMENT, ctor };
    }
    function byteEnqueueChunk(controller, buffer, byteOffset, byteLength) {
      enqueueValueWithSize(controller, { buffer, byteOffset, byteLength }, byteLength);
    }
    function byteEnqueueClonedChunk(controller, buffer, byteOffset, byteLength) {
      let clone;
      try {
        clone = new Uint8ArrayCtor(new Uint8ArrayCtor(buffer, byteOffset, byteLength)).buffer;
      } catch (error) {
        readableControllerError(controller, error);
        throw error;
      }
      byteEnqueueChunk(controller, clone, 0, byteLength);
    }
    function byteEnqueueDetachedPullInto(controller, descriptor) {
      if (descriptor.bytesFilled > 0) byteEnqueueClonedChunk(controller, descriptor.buffer, descriptor.byteOffset, descriptor.bytesFilled);
      byteShiftPendingPullInto(controller);
    }
    function byteInvalidateRequest(controller) {
      if (controller.byobRequest === null) return;
      invalidateByobRequest(controller.byobRequest);
      controller.byobRequest = null;
    }
    function byteClearPendingPullIntos(controller) {
      byteInvalidateRequest(controller);
      controller.pendingPullIntos = [];
    }
    function byteShiftPendingPullInto(controller) {
      return controller.pendingPullIntos.shift();
    }
    function byteHandleQueueDrain(controller) {
      if (controller.queueTotalSize === 0 && controller.closeRequested) {
        readableClearAlgorithms(controller);
        readableStreamClose(controller.stream);
      } else {
        readableCallPullIfNeeded(controller);
      }
    }
    // The filled part of a descriptor as a view of the reader's kind, over its (transferred) buffer.
    function byteConvertPullInto(descriptor) {
      const buffer = transferBuffer(descriptor.buffer);
      return new descriptor.viewConstructor(buffer, descriptor.byteOffset, descriptor.bytesFilled / descriptor.elementSize);
    }
    function byteCommitPullInto(stream, descriptor) {
      const done = stream.state === 'closed';
      const filled = byteConvertPullInto(descriptor);
      const request = stream.reader.readRequests.shift();
      if (done) request.close(filled);
      else request.chunk(filled);
    }
    // Copies from the queue into the descriptor as much as fits (whole elements once its minimum is
    // reached); true when it now holds at least its minimum.
    function byteFillPullIntoFromQueue(controller, descriptor) {
      const room = descriptor.byteLength - descriptor.bytesFilled;
      const maxBytesToCopy = controller.queueTotalSize < room ? controller.queueTotalSize : room;
      const maxBytesFilled = descriptor.bytesFilled + maxBytesToCopy;
      let remaining = maxBytesToCopy;
      let ready = false;
      const maxAlignedBytes = maxBytesFilled - (maxBytesFilled % descriptor.elementSize);
      if (maxAlignedBytes >= descriptor.minimumFill) {
        remaining = maxAlignedBytes - descriptor.bytesFilled;
        ready = true;
      }
      while (remaining > 0) {
        const pair = controller.queue[controller.queueHead];
        const head = pair.value;
        const bytesToCopy = remaining < head.byteLength ? remaining : head.byteLength;
        new Uint8ArrayCtor(descriptor.buffer, descriptor.byteOffset + descriptor.bytesFilled, bytesToCopy)
          .set(new Uint8ArrayCtor(head.buffer, head.byteOffset, bytesToCopy));
        if (head.byteLength === bytesToCopy) {
          dequeueValue(controller);
        } else {
          head.byteOffset += bytesToCopy;
          head.byteLength -= bytesToCopy;
          pair.size -= bytesToCopy;
          controller.queueTotalSize -= bytesToCopy;
        }
        descriptor.bytesFilled += bytesToCopy;
        remaining -= bytesToCopy;
      }
      return ready;
    }
    function byteFillReadRequestFromQueue(controller, request) {
      const entry = dequeueValue(controller);
      byteHandleQueueDrain(controller);
      request.chunk(new Uint8ArrayCtor(entry.buffer, entry.byteOffset, entry.byteLength));
    }
    function byteProcessPullIntosUsingQueue(controller) {
      const filled = [];
      while (controller.pendingPullIntos.length > 0 && controller.queueTotalSize > 0) {
        const descriptor = controller.pendingPullIntos[0];
        if (byteFillPullIntoFromQueue(controller, descriptor)) {
          byteShiftPendingPullInto(controller);
          filled.push(descriptor);
        }
      }
      return filled;
    }
    function byteProcessReadRequestsUsingQueue(controller) {
      const reader = controller.stream.reader;
      while (reader.readRequests.length > 0 && controller.queueTotalSize > 0) {
        byteFillReadRequestFromQueue(controller, reader.readRequests.shift());
      }
    }
    function byteControllerEnqueue(controller, chunk) {
      const stream = controller.stream;
      if (controller.closeRequested || stream.state !== 'readable') return;
      const buffer = chunk.buffer;
      const byteOffset = chunk.byteOffset;
      const byteLength = chunk.byteLength;
      if (isDetached(buffer)) throw new TypeErrorCtor("The chunk's buffer is detached");
      const transferred = transferBuffer(buffer);
      if (controller.pendingPullIntos.length > 0) {
        const first = controller.pendingPullIntos[0];
        if (isDetached(first.buffer)) throw new TypeErrorCtor("The pending read's buffer is detached");
        byteInvalidateRequest(controller);
        first.buffer = transferBuffer(first.buffer);
        if (first.readerType === 'none') byteEnqueueDetachedPullInto(controller, first);
      }
      const reader = stream.reader;
      if (reader !== null && !reader.byob) {
        byteProcessReadRequestsUsingQueue(controller);
        if (reader.readRequests.length === 0) {
          byteEnqueueChunk(controller, transferred, byteOffset, byteLength);
        } else {
          if (controller.pendingPullIntos.length > 0) byteShiftPendingPullInto(controller);
          readableFulfillReadRequest(stream, new Uint8ArrayCtor(transferred, byteOffset, byteLength), false);
        }
      } else if (reader !== null) {
        byteEnqueueChunk(controller, transferred, byteOffset, byteLength);
        for (const descriptor of byteProcessPullIntosUsingQueue(controller)) byteCommitPullInto(stream, descriptor);
      } else {
        byteEnqueueChunk(controller, transferred, byteOffset, byteLength);
      }
      readableCallPullIfNeeded(controller);
    }
    function byteControllerClose(controller) {
      const stream = controller.stream;
      if (controller.closeRequested || stream.state !== 'readable') return;
      if (controller.queueTotalSize > 0) {
        controller.closeRequested = true;
        return;
      }
      if (controller.pendingPullIntos.length > 0) {
        const first = controller.pendingPullIntos[0];
        if (first.bytesFilled % first.elementSize !== 0) {
          const error = new TypeErrorCtor('The stream closed with a partial element in the pending read');
          readableControllerError(controller, error);
          throw error;
        }
      }
      readableClearAlgorithms(controller);
      readableStreamClose(stream);
    }
    // ReadableStreamBYOBReaderRead's controller half: the reader's view (its buffer transferred)
    // as a pull-into descriptor, answered at once from the queue when it holds `min` elements.
    function bytePullInto(controller, view, min, request) {
      const stream = controller.stream;
      const { elementSize, ctor } = viewShape(view);
      const byteOffset = view.byteOffset;
      const byteLength = view.byteLength;
      let buffer;
      try {
        buffer = transferBuffer(view.buffer);
      } catch (error) {
        request.error(error);
        return;
      }
      const descriptor = {
        buffer, bufferByteLength: ReflectApply(bufferByteLength, buffer, []), byteOffset, byteLength, bytesFilled: 0,
        minimumFill: min * elementSize, elementSize, viewConstructor: ctor, readerType: 'byob',
      };
      if (controller.pendingPullIntos.length > 0) {
        controller.pendingPullIntos.push(descriptor);
        stream.reader.readRequests.push(request);
        return;
      }
      if (stream.state === 'closed') {
        request.close(new ctor(descriptor.buffer, descriptor.byteOffset, 0));
        return;
      }
      if (controller.queueTotalSize > 0) {
        if (byteFillPullIntoFromQueue(controller, descriptor)) {
          const filled = byteConvertPullInto(descriptor);
          byteHandleQueueDrain(controller);
          request.chunk(filled);
          return;
        }
        if (controller.closeRequested) {
          const error = new TypeErrorCtor('The stream closed with fewer bytes than the read needs');
          readableControllerError(controller, error);
          request.error(error);
          return;
        }
      }
      controller.pendingPullIntos.push(descriptor);
      stream.reader.readRequests.push(request);
      readableCallPullIfNeeded(controller);
    }
    function byteRespondInClosedState(controller, first) {
      if (first.readerType === 'none') byteShiftPendingPullInto(controller);
      const stream = controller.stream;
      const reader = stream.reader;
      if (reader === null || !reader.byob) return;
      const filled = [];
      while (filled.length < reader.readRequests.length) filled.push(byteShiftPendingPullInto(controller));
      for (const descriptor of filled) byteCommitPullInto(stream, descriptor);
    }
    function byteRespondInReadableState(controller, bytesWritten, descriptor) {
      const stream = controller.stream;
      descriptor.bytesFilled += bytesWritten;
      if (descriptor.readerType === 'none') {
        byteEnqueueDetachedPullInto(controller, descriptor);
        for (const filled of byteProcessPullIntosUsingQueue(controller)) byteCommitPullInto(stream, filled);
        return;
      }
      if (descriptor.bytesFilled < descriptor.minimumFill) return;
      byteShiftPendingPullInto(controller);
      const remainder = descriptor.bytesFilled % descriptor.elementSize;
      if (remainder > 0) {
        const end = descriptor.byteOffset + descriptor.bytesFilled;
        byteEnqueueClonedChunk(controller, descriptor.buffer, end - remainder, remainder);
      }
      descriptor.bytesFilled -= remainder;
      const filled = byteProcessPullIntosUsingQueue(controller);
      byteCommitPullInto(stream, descriptor);
      for (const other of filled) byteCommitPullInto(stream, other);
    }
    function byteRespondInternal(controller, bytesWritten) {
      const first = controller.pendingPullIntos[0];
      byteInvalidateRequest(controller);
      if (controller.stream.state === 'closed') byteRespondInClosedState(controller, first);
      else byteRespondInReadableState(controller, bytesWritten, first);
      readableCallPullIfNeeded(controller);
    }
    function byteRespond(controller, bytesWritten) {
      const first = controller.pendingPullIntos[0];
      if (controller.stream.state === 'closed') {
        if (bytesWritten !== 0) throw new TypeErrorCtor('bytesWritten must be 0 once the stream is closed');
      } else {
        if (bytesWritten === 0) throw new TypeErrorCtor('bytesWritten must be greater than 0 while the stream is readable');
        if (first.bytesFilled + bytesWritten > first.byteLength) throw new RangeErrorCtor('bytesWritten is more than the view holds');
      }
      first.buffer = transferBuffer(first.buffer);
      byteRespondInternal(controller, bytesWritten);
    }
    function byteRespondWithNewView(controller, view) {
      const first = controller.pendingPullIntos[0];
      const viewByteLength = view.byteLength;
      if (controller.stream.state === 'closed') {
        if (viewByteLength !== 0) throw new TypeErrorCtor('The view must be empty once the stream is closed');
      } else if (viewByteLength === 0) {
        throw new TypeErrorCtor('The view must not be empty while the stream is readable');
      }
      if (first.byteOffset + first.bytesFilled !== view.byteOffset) throw new RangeErrorCtor('The view does not start where the request does');
      if (first.bufferByteLength !== ReflectApply(bufferByteLength, view.buffer, [])) throw new RangeErrorCtor("The view's buffer is not the request's size");
      if (first.bytesFilled + viewByteLength > first.byteLength) throw new RangeErrorCtor('The view is longer than the request');
      first.buffer = transferBuffer(view.buffer);
      byteRespondInternal(controller, viewByteLength);
    }
    function bytePullSteps(controller, request) {
      const stream = controller.stream;
      if (controller.queueTotalSize > 0) {
        byteFillReadRequestFromQueue(controller, request);
        return;
      }
      const size = controller.autoAllocateChunkSize;
      if (size !== undefined) {
        let buffer;
        try {
          buffer = new ArrayBufferCtor(size);
        } catch (error) {
          request.error(error);
          return;
        }
        controller.pendingPullIntos.push({
          buffer, bufferByteLength: size, byteOffset: 0, byteLength: size, bytesFilled: 0, minimumFill: 1,
          elementSize: 1, viewConstructor: Uint8ArrayCtor, readerType: 'default',
        });
      }
      stream.reader.readRequests.push(request);
      readableCallPullIfNeeded(controller);
    }
    function byteCancelSteps(controller, reason) {
      byteClearPendingPullIntos(controller);
      return readableCancelSteps(controller, reason);
    }
    // A released reader's first pending read stays, answered to nobody, so what the source
    // writes into it is not lost to the next reader.
    function byteReleaseSteps(controller) {
      if (controller.pendingPullIntos.length === 0) return;
      const first = controller.pendingPullIntos[0];
      first.readerType = 'none';
      controller.pendingPullIntos = [first];
    }
    function byteGetRequest(controller) {
      if (controller.byobRequest === null && controller.pendingPullIntos.length > 0) {
        const first = controller.pendingPullIntos[0];
        const view = new Uint8ArrayCtor(first.buffer, first.byteOffset + first.bytesFilled, first.byteLength - first.bytesFilled);
        controller.byobRequest = makeByobRequest(controller, view);
      }
      return controller.byobRequest;
    }
    // [EnforceRange] unsigned long long.
    function enforceRange(value, what) {
      const number = NumberCtor(value);
      if (number !== number || number === Infinity || number === -Infinity) throw new TypeErrorCtor(`${what} is not a finite number`);
      const integer = number < 0 ? -MathFloor(-number) : MathFloor(number);
      if (integer < 0 || integer > 9007199254740991) throw new TypeErrorCtor(`${what} is outside the range of unsigned long long`);
      return integer;
    }

    // ---- ReadableStream: classes -------------------------------------------------------------
    let makeReadableController;
    class ReadableStreamDefaultController {
      #c;
      constructor(key) {
        if (key !== INTERNAL) throw new TypeErrorCtor('Illegal constructor');
      }
      get desiredSize() { return readableGetDesiredSize(this.#c); }
      close() {
        const c = this.#c;
        if (!readableCanCloseOrEnqueue(c)) throw new TypeErrorCtor('The stream is not in a state that permits close');
        readableControllerClose(c);
      }
      enqueue(chunk = undefined) {
        const c = this.#c;
        if (!readableCanCloseOrEnqueue(c)) throw new TypeErrorCtor('The stream is not in a state that permits enqueue');
        readableControllerEnqueue(c, chunk);
      }
      error(e = undefined) { readableControllerError(this.#c, e); }
      get [SymbolToStringTag]() { return 'ReadableStreamDefaultController'; }
      static {
        makeReadableController = (record) => {
          const Ctor = record.bytes ? ReadableByteStreamController : ReadableStreamDefaultController;
          const object = new Ctor(INTERNAL);
          if (record.bytes) setByteController(object, record);
          else object.#c = record;
          return object;
        };
      }
    }
    let setByteController;
    class ReadableByteStreamController {
      #c;
      constructor(key) {
        if (key !== INTERNAL) throw new TypeErrorCtor('Illegal constructor');
      }
      get byobRequest() { return byteGetRequest(this.#c); }
      get desiredSize() { return readableGetDesiredSize(this.#c); }
      close() {
        const c = this.#c;
        if (c.closeRequested) throw new TypeErrorCtor('The stream is already closing');
        if (c.stream.state !== 'readable') throw new TypeErrorCtor('The stream is not readable');
        byteControllerClose(c);
      }
      enqueue(chunk) {
        const c = this.#c;
        if (!isView(chunk)) throw new TypeErrorCtor("Failed to execute 'enqueue' on 'ReadableByteStreamController': parameter 1 is not an ArrayBufferView.");
        if (!isArrayBuffer(chunk.buffer)) throw new TypeErrorCtor('The chunk must not be backed by a SharedArrayBuffer');
        if (chunk.byteLength === 0) throw new TypeErrorCtor('The chunk must not be empty');
        if (ReflectApply(bufferByteLength, chunk.buffer, []) === 0) throw new TypeErrorCtor("The chunk's buffer must not be empty or detached");
        if (c.closeRequested) throw new TypeErrorCtor('The stream is closing');
        if (c.stream.state !== 'readable') throw new TypeErrorCtor('The stream is not readable');
        byteControllerEnqueue(c, chunk);
      }
      error(e = undefined) { readableControllerError(this.#c, e); }
      get [SymbolToStringTag]() { return 'ReadableByteStreamController'; }
      static {
        setByteController = (object, record) => { object.#c = record; };
      }
    }
    const INTERNAL = SymbolCtor('internal');
    // ReadableStreamBYOBRequest: the first pending read's unfilled part, for the source to fill.
    let makeByobRequest;
    let invalidateByobRequest;
    class ReadableStreamBYOBRequest {
      #controller;
      #view;
      constructor(key) {
        if (key !== INTERNAL) throw new TypeErrorCtor('Illegal constructor');
      }
      get view() { return this.#view; }
      respond(bytesWritten) {
        const written = enforceRange(bytesWritten, 'bytesWritten');
        if (this.#controller === undefined) throw new TypeErrorCtor('This request has been answered');
        if (isDetached(this.#view.buffer)) throw new TypeErrorCtor("The request's buffer is detached");
        byteRespond(this.#controller, written);
      }
      respondWithNewView(view) {
        if (!isView(view)) throw new TypeErrorCtor("Failed to execute 'respondWithNewView' on 'ReadableStreamBYOBRequest': parameter 1 is not an ArrayBufferView.");
        if (!isArrayBuffer(view.buffer)) throw new TypeErrorCtor('The view must not be backed by a SharedArrayBuffer');
        if (this.#controller === undefined) throw new TypeErrorCtor('This request has been answered');
        if (isDetached(view.buffer)) throw new TypeErrorCtor("The view's buffer is detached");
        byteRespondWithNewView(this.#controller, view);
      }
      get [SymbolToStringTag]() { return 'ReadableStreamBYOBRequest'; }
      static {
        makeByobRequest = (controller, view) => {
          const request = new ReadableStreamBYOBRequest(INTERNAL);
          request.#controller = controller;
          request.#view = view;
          return request;
        };
        invalidateByobRequest = (request) => {
          request.#controller = undefined;
          request.#view = null;
        };
      }
    }

    class ReadableStreamDefaultReader {
      #r;
      constructor(stream) {
        const record = readableRecord(stream);
        if (record === undefined) throw new TypeErrorCtor("Failed to construct 'ReadableStreamDefaultReader': parameter 1 is not of type 'ReadableStream'.");
        this.#r = acquireReader(record);
        this.#r.object = this;
      }
      get closed() { return this.#r.closed.promise; }
      read() {
        const reader = this.#r;
        if (reader.stream === null) return PromiseReject(new TypeErrorCtor('The reader has been released'));
        const request = promiseReadRequest();
        readerRead(reader, request);
        return request.promise;
      }
      cancel(reason = undefined) {
        const reader = this.#r;
        if (reader.stream === null) return PromiseReject(new TypeErrorCtor('The reader has been released'));
        return readableStreamCancel(reader.stream, reason);
      }
      releaseLock() {
        if (this.#r.stream !== null) readerRelease(this.#r);
      }
      get [SymbolToStringTag]() { return 'ReadableStreamDefaultReader'; }
      static {
        readerRecord = (value) => (isObject(value) && #r in value ? value.#r : undefined);
      }
    }
    class ReadableStreamBYOBReader {
      #r;
      constructor(stream) {
        const record = readableRecord(stream);
        if (record === undefined) throw new TypeErrorCtor("Failed to construct 'ReadableStreamBYOBReader': parameter 1 is not of type 'ReadableStream'.");
        if (isReadableLocked(record)) throw new TypeErrorCtor('The stream is locked to a reader');
        if (!record.controller.bytes) throw new TypeErrorCtor('A BYOB reader needs a readable byte stream');
        this.#r = acquireByobReader(record);
        this.#r.object = this;
      }
      get closed() { return this.#r.closed.promise; }
      read(view, options = undefined) {
        const reader = this.#r;
        if (!isView(view)) return PromiseReject(new TypeErrorCtor("Failed to execute 'read' on 'ReadableStreamBYOBReader': parameter 1 is not an ArrayBufferView."));
        if (!isArrayBuffer(view.buffer)) return PromiseReject(new TypeErrorCtor('The view must not be backed by a SharedArrayBuffer'));
        let min;
        try {
          const raw = dictionary(options, "Failed to execute 'read' on 'ReadableStreamBYOBReader'").min;
          min = raw === undefined ? 1 : enforceRange(raw, 'min');
        } catch (error) {
          return PromiseReject(error);
        }
        if (view.byteLength === 0) return PromiseReject(new TypeErrorCtor('The view must not be empty'));
        if (ReflectApply(bufferByteLength, view.buffer, []) === 0) return PromiseReject(new TypeErrorCtor("The view's buffer must not be empty"));
        if (isDetached(view.buffer)) return PromiseReject(new TypeErrorCtor("The view's buffer is detached"));
        if (min === 0) return PromiseReject(new TypeErrorCtor('min must be greater than 0'));
        const elements = ReflectApply(typedArrayTag, view, []) === undefined ? view.byteLength : view.length;
        if (min > elements) return PromiseReject(new RangeErrorCtor('min is more than the view holds'));
        if (reader.stream === null) return PromiseReject(new TypeErrorCtor('The reader has been released'));
        const d = deferred();
        const request = {
          chunk: (value) => d.resolve({ value, done: false }),
          close: (value) => d.resolve({ value, done: true }),
          error: (error) => d.reject(error),
        };
        byobReaderRead(reader, view, min, request);
        return d.promise;
      }
      cancel(reason = undefined) {
        const reader = this.#r;
        if (reader.stream === null) return PromiseReject(new TypeErrorCtor('The reader has been released'));
        return readableStreamCancel(reader.stream, reason);
      }
      releaseLock() {
        if (this.#r.stream !== null) readerRelease(this.#r);
      }
      get [SymbolToStringTag]() { return 'ReadableStreamBYOBReader'; }
    }

    class ReadableStream {
      #s;
      constructor(underlyingSource = undefined, strategy = undefined) {
        if (constructingBare) {
          constructingBare = false;
          return;
        }
        const source = underlyingSource === undefined || underlyingSource === null ? null : underlyingSource;
        if (source !== null && !isObject(source)) throw new TypeErrorCtor("Failed to construct 'ReadableStream': The provided value is not an object.");
        const context = "Failed to construct 'ReadableStream'";
        // Web IDL converts the strategy argument before the body reads the source, each
        // dictionary's members in the order of their names, each read once.
        const strategyDict = strategyMembers(strategy, context);
        const chunkSize = source === null ? undefined : enforceChunkSize(source.autoAllocateChunkSize, context);
        const cancel = source === null ? undefined : getMethod(source, 'cancel', context);
        const pull = source === null ? undefined : getMethod(source, 'pull', context);
        const start = source === null ? undefined : getMethod(source, 'start', context);
        const rawType = source === null ? undefined : source.type;
        const type = rawType === undefined ? undefined : StringCtor(rawType);
        if (type !== undefined && type !== 'bytes') throw new TypeErrorCtor(`${context}: '${type}' is not a valid stream type`);
        if (type === 'bytes' && chunkSize === 0) throw new TypeErrorCtor(`${context}: autoAllocateChunkSize must be greater than 0`);
        this.#s = newReadableRecord();
        this.#s.object = this;
        const controller = { bytes: type === 'bytes', object: null };
        controller.object = makeReadableController(controller);
        let hwm;
        let size;
        if (type === 'bytes') {
          if (strategyDict.size !== undefined) throw new RangeErrorCtor('A byte stream cannot have a size function');
          hwm = extractHighWaterMark(strategyDict, 0);
          size = (chunk) => chunk.byteLength;
          controller.autoAllocateChunkSize = chunkSize;
          controller.byobRequest = null;
          controller.pendingPullIntos = [];
        } else {
          size = extractSizeAlgorithm(strategyDict);
          hwm = extractHighWaterMark(strategyDict, 1);
        }
        setUpReadableController(this.#s, controller,
          () => (start === undefined ? undefined : ReflectApply(start, source, [controller.object])),
          () => promiseCall(pull, source, [controller.object]),
          (reason) => promiseCall(cancel, source, [reason]), hwm, size);
      }
      get locked() { return isReadableLocked(this.#s); }
      // Promise-returning operations reject (they do not throw) when `this` is not a ReadableStream.
      cancel(reason = undefined) {
        const source = readableRecord(this);
        if (source === undefined) return PromiseReject(notThis('cancel'));
        if (isReadableLocked(source)) return PromiseReject(new TypeErrorCtor('Cannot cancel a locked stream'));
        return readableStreamCancel(source, reason);
      }
      getReader(options = undefined) {
        const mode = dictionary(options, "Failed to execute 'getReader' on 'ReadableStream'").mode;
        if (mode === undefined) return new ReadableStreamDefaultReader(this);
        if (StringCtor(mode) !== 'byob') throw new TypeErrorCtor(`Failed to execute 'getReader' on 'ReadableStream': '${StringCtor(mode)}' is not a valid reader mode`);
        return new ReadableStreamBYOBReader(this);
      }
      pipeThrough(transform, options = undefined) {
        if (!isObject(transform)) throw new TypeErrorCtor("Failed to execute 'pipeThrough' on 'ReadableStream': parameter 1 is not an object.");
        const readable = readableRecord(transform.readable);
        if (readable === undefined) throw new TypeErrorCtor("Failed to execute 'pipeThrough' on 'ReadableStream': transform.readable is not a ReadableStream.");
        const writable = writableRecord(transform.writable);
        if (writable === undefined) throw new TypeErrorCtor("Failed to execute 'pipeThrough' on 'ReadableStream': transform.writable is not a WritableStream.");
        const opts = pipeOptions(options);
        if (isReadableLocked(this.#s)) throw new TypeErrorCtor('Cannot pipe a locked stream');
        if (writable.writer !== null) throw new TypeErrorCtor('Cannot pipe to a locked stream');
        markHandled(readableStreamPipeTo(this.#s, writable, opts));
        return transform.readable;
      }
      pipeTo(destination, options = undefined) {
        const source = readableRecord(this);
        if (source === undefined) return PromiseReject(notThis('pipeTo'));
        const dest = writableRecord(destination);
        if (dest === undefined) return PromiseReject(new TypeErrorCtor("Failed to execute 'pipeTo' on 'ReadableStream': parameter 1 is not of type 'WritableStream'."));
        let opts;
        try { opts = pipeOptions(options); } catch (error) { return PromiseReject(error); }
        if (isReadableLocked(source)) return PromiseReject(new TypeErrorCtor('Cannot pipe a locked stream'));
        if (dest.writer !== null) return PromiseReject(new TypeErrorCtor('Cannot pipe to a locked stream'));
        return readableStreamPipeTo(source, dest, opts);
      }
      tee() {
        const [a, b] = readableStreamTee(this.#s);
        return [a.object, b.object];
      }
      values(options = undefined) {
        const preventCancel = Boolean(dictionary(options, "Failed to execute 'values' on 'ReadableStream'").preventCancel);
        return makeAsyncIterator(this.#s, preventCancel);
      }
      static from(asyncIterable) {
        return readableStreamFromIterable(asyncIterable).object;
      }
      get [SymbolToStringTag]() { return 'ReadableStream'; }
      static {
        readableRecord = (value) => (isObject(value) && #s in value ? value.#s : undefined);
        makeReadable = (record) => {
          constructingBare = true;
          const stream = new ReadableStream();
          stream.#s = record;
          record.object = stream;
          return stream;
        };
      }
    }
    defineProperty(ReadableStream.prototype, SymbolAsyncIterator, { value: ReadableStream.prototype.values, writable: true, configurable: true });

    // ---- Async iteration -----------------------------------------------------------------------
    const ReadableStreamAsyncIteratorPrototype = objectCreate(AsyncIteratorPrototype);
    const iteratorState = new WeakMapCtor();
    function makeAsyncIterator(stream, preventCancel) {
      const reader = acquireReader(stream);
      const iterator = objectCreate(ReadableStreamAsyncIteratorPrototype);
      iteratorState.set(iterator, { reader, preventCancel, ongoing: undefined, finished: false });
      return iterator;
    }
    function iteratorNextSteps(state) {
      if (state.finished) return PromiseResolve({ value: undefined, done: true });
      const reader = state.reader;
      if (reader.stream === null) return PromiseReject(new TypeErrorCtor('The iterator\'s reader was released'));
      const d = deferred();
      readerRead(reader, {
        chunk: (value) => d.resolve({ value, done: false }),
        close: () => {
          state.finished = true;
          readerRelease(reader);
          d.resolve({ value: undefined, done: true });
        },
        error: (error) => {
          state.finished = true;
          readerRelease(reader);
          d.reject(error);
        },
      });
      return d.promise;
    }
    function iteratorReturnSteps(state, value) {
      if (state.finished) return PromiseResolve(undefined);
      state.finished = true;
      const reader = state.reader;
      if (reader.stream === null) return PromiseReject(new TypeErrorCtor('The iterator\'s reader was released'));
      if (!state.preventCancel) {
        const result = readableStreamCancel(reader.stream, value);
        readerRelease(reader);
        return result;
      }
      readerRelease(reader);
      return PromiseResolve(undefined);
    }
    function iteratorState_(iterator) {
      const state = iteratorState.get(iterator);
      if (state === undefined) throw new TypeErrorCtor('Not a ReadableStream async iterator');
      return state;
    }
    // WebIDL's asynchronous iterator: calls are queued behind the ongoing one, and each result
    // comes through one more reaction than the read it waits on.
    defineProperty(ReadableStreamAsyncIteratorPrototype, 'next', {
      value: function next() {
        let state;
        try { state = iteratorState_(this); } catch (error) { return PromiseReject(error); }
        const nextSteps = () => {
          if (state.finished) return PromiseResolve({ value: undefined, done: true });
          return then(iteratorNextSteps(state), (result) => {
            state.ongoing = undefined;
            return result;
          }, (error) => {
            state.ongoing = undefined;
            throw error;
          });
        };
        state.ongoing = state.ongoing === undefined ? nextSteps() : then(state.ongoing, nextSteps, nextSteps);
        return state.ongoing;
      },
      writable: true, configurable: true,
    });
    defineProperty(ReadableStreamAsyncIteratorPrototype, 'return', {
      value: function return_(value = undefined) {
        let state;
        try { state = iteratorState_(this); } catch (error) { return PromiseReject(error); }
        const returnSteps = () => iteratorReturnSteps(state, value);
        const returned = state.ongoing === undefined ? returnSteps() : then(state.ongoing, returnSteps, returnSteps);
        return then(returned, () => ({ value, done: true }));
      },
      writable: true, configurable: true,
    });
    defineProperty(ReadableStreamAsyncIteratorPrototype, SymbolToStringTag, { value: 'ReadableStream AsyncIterator', configurable: true });

    // ReadableStream.from: an async (or sync) iterable's values, pulled one per read.
    function readableStreamFromIterable(asyncIterable) {
      if (!isObject(asyncIterable) && typeof asyncIterable !== 'string') {
        throw new TypeErrorCtor("Failed to execute 'from' on 'ReadableStream': the argument is not iterable.");
      }
      let method = asyncIterable[SymbolAsyncIterator];
      let sync = false;
      if (method === undefined || method === null) {
        method = asyncIterable[SymbolIterator];
        sync = true;
      }
      if (typeof method !== 'function') throw new TypeErrorCtor("Failed to execute 'from' on 'ReadableStream': the argument is not iterable.");
      const iterator = ReflectApply(method, asyncIterable, []);
      if (!isObject(iterator)) throw new TypeErrorCtor('The iterator is not an object');
      const nextMethod = iterator.next;
      let stream;
      const pull = () => {
        let result;
        try {
          result = PromiseResolve(ReflectApply(nextMethod, iterator, []));
        } catch (error) {
          return PromiseReject(error);
        }
        return then(result, (step) => {
          if (!isObject(step)) throw new TypeErrorCtor('The iterator result is not an object');
          if (step.done) {
            readableControllerClose(stream.controller);
            return undefined;
          }
          return then(sync ? PromiseResolve(step.value) : PromiseResolve(step.value), (value) => {
            readableControllerEnqueue(stream.controller, value);
          });
        });
      };
      const cancel = (reason) => {
        let returnMethod;
        try {
          returnMethod = iterator.return;
        } catch (error) {
          return PromiseReject(error);
        }
        if (returnMethod === undefined || returnMethod === null) return PromiseResolve(undefined);
        let result;
        try {
          result = ReflectApply(returnMethod, iterator, [reason]);
        } catch (error) {
          return PromiseReject(error);
        }
        return then(PromiseResolve(result), (value) => {
          if (!isObject(value)) throw new TypeErrorCtor('The iterator\'s return() result is not an object');
        });
      };
      stream = createReadableStream(noop, pull, cancel, 0);
      return stream;
    }

    // ---- tee -----------------------------------------------------------------------------------
    // A tee's two cancel algorithms: the source is cancelled, with both branches' reasons, once
    // both branches are; until then a branch's cancel waits on `cancelPromise`.
    function teeCancelAlgorithms(stream, canceled, cancelPromise) {
      const cancel = (branch) => (reason) => {
        canceled[branch] = true;
        canceled.reasons[branch - 1] = reason;
        if (canceled[1] && canceled[2]) cancelPromise.resolve(readableStreamCancel(stream, [canceled.reasons[0], canceled.reasons[1]]));
        return cancelPromise.promise;
      };
      return [cancel(1), cancel(2)];
    }
    function readableStreamTee(stream) {
      if (stream.controller.bytes) return readableByteStreamTee(stream);
      const reader = acquireReader(stream);
      let reading = false;
      let readAgain = false;
      // Which branches were cancelled, and why (teeCancelAlgorithms).
      const canceled = { 1: false, 2: false, reasons: [undefined, undefined] };
      let branch1;
      let branch2;
      const cancelPromise = deferred();
      const pullAlgorithm = () => {
        if (reading) {
          readAgain = true;
          return PromiseResolve(undefined);
        }
        reading = true;
        readerRead(reader, {
          chunk: (chunk) => {
            queueMicrotaskFn(() => {
              readAgain = false;
              if (!canceled[1]) readableControllerEnqueue(branch1.controller, chunk);
              if (!canceled[2]) readableControllerEnqueue(branch2.controller, chunk);
              reading = false;
              if (readAgain) pullAlgorithm();
            });
          },
          close: () => {
            reading = false;
            if (!canceled[1]) readableControllerClose(branch1.controller);
            if (!canceled[2]) readableControllerClose(branch2.controller);
            if (!canceled[1] || !canceled[2]) cancelPromise.resolve(undefined);
          },
          error: () => { reading = false; },
        });
        return PromiseResolve(undefined);
      };
      const [cancel1, cancel2] = teeCancelAlgorithms(stream, canceled, cancelPromise);
      branch1 = createReadableStream(noop, pullAlgorithm, cancel1);
      branch2 = createReadableStream(noop, pullAlgorithm, cancel2);
      then(reader.closed.promise, undefined, (error) => {
        readableControllerError(branch1.controller, error);
        readableControllerError(branch2.controller, error);
        if (!canceled[1] || !canceled[2]) cancelPromise.resolve(undefined);
      });
      return [branch1, branch2];
    }

    // ReadableByteStreamTee: two byte streams; each branch's BYOB reads go to the source as BYOB
    // reads into that branch's own buffer, and the other branch gets a copy of what was read.
    function readableByteStreamTee(stream) {
      let reader = acquireReader(stream);
      let reading = false;
      let readAgainForBranch1 = false;
      let readAgainForBranch2 = false;
      // Which branches were cancelled, and why (teeCancelAlgorithms).
      const canceled = { 1: false, 2: false, reasons: [undefined, undefined] };
      let branch1;
      let branch2;
      const cancelPromise = deferred();
      const cloneAsUint8Array = (chunk) => new Uint8ArrayCtor(new Uint8ArrayCtor(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      const failBoth = (error) => {
        readableControllerError(branch1.controller, error);
        readableControllerError(branch2.controller, error);
        cancelPromise.resolve(readableStreamCancel(stream, error));
      };
      const readAgain = () => {
        if (readAgainForBranch1) pull1Algorithm();
        else if (readAgainForBranch2) pull2Algorithm();
      };
      function forwardReaderError(thisReader) {
        then(thisReader.closed.promise, undefined, (error) => {
          if (thisReader !== reader) return;
          readableControllerError(branch1.controller, error);
          readableControllerError(branch2.controller, error);
          if (!canceled[1] || !canceled[2]) cancelPromise.resolve(undefined);
        });
      }
      function pullWithDefaultReader() {
        if (reader.byob) {
          readerRelease(reader);
          reader = acquireReader(stream);
          forwardReaderError(reader);
        }
        readerRead(reader, {
          chunk: (chunk) => queueMicrotaskFn(() => {
            readAgainForBranch1 = false;
            readAgainForBranch2 = false;
            let chunk2 = chunk;
            if (!canceled[1] && !canceled[2]) {
              try {
                chunk2 = cloneAsUint8Array(chunk);
              } catch (error) {
                failBoth(error);
                return;
              }
            }
            if (!canceled[1]) byteControllerEnqueue(branch1.controller, chunk);
            if (!canceled[2]) byteControllerEnqueue(branch2.controller, chunk2);
            reading = false;
            readAgain();
          }),
          close: () => {
            reading = false;
            if (!canceled[1]) byteControllerClose(branch1.controller);
            if (!canceled[2]) byteControllerClose(branch2.controller);
            if (branch1.controller.pendingPullIntos.length > 0) byteRespond(branch1.controller, 0);
            if (branch2.controller.pendingPullIntos.length > 0) byteRespond(branch2.controller, 0);
            if (!canceled[1] || !canceled[2]) cancelPromise.resolve(undefined);
          },
          error: () => { reading = false; },
        });
      }
      function pullWithByobReader(view, forBranch2) {
        if (!reader.byob) {
          readerRelease(reader);
          reader = acquireByobReader(stream);
          forwardReaderError(reader);
        }
        const byobBranch = forBranch2 ? branch2 : branch1;
        const otherBranch = forBranch2 ? branch1 : branch2;
        byobReaderRead(reader, view, 1, {
          chunk: (chunk) => queueMicrotaskFn(() => {
            readAgainForBranch1 = false;
            readAgainForBranch2 = false;
            const byobCanceled = forBranch2 ? canceled[2] : canceled[1];
            const otherCanceled = forBranch2 ? canceled[1] : canceled[2];
            if (!otherCanceled) {
              let cloned;
              try {
                cloned = cloneAsUint8Array(chunk);
              } catch (error) {
                failBoth(error);
                return;
              }
              if (!byobCanceled) byteRespondWithNewView(byobBranch.controller, chunk);
              byteControllerEnqueue(otherBranch.controller, cloned);
            } else if (!byobCanceled) {
              byteRespondWithNewView(byobBranch.controller, chunk);
            }
            reading = false;
            readAgain();
          }),
          close: (chunk) => {
            reading = false;
            const byobCanceled = forBranch2 ? canceled[2] : canceled[1];
            const otherCanceled = forBranch2 ? canceled[1] : canceled[2];
            if (!byobCanceled) byteControllerClose(byobBranch.controller);
            if (!otherCanceled) byteControllerClose(otherBranch.controller);
            if (chunk !== undefined) {
              if (!byobCanceled) byteRespondWithNewView(byobBranch.controller, chunk);
              if (!otherCanceled && otherBranch.controller.pendingPullIntos.length > 0) byteRespond(otherBranch.controller, 0);
            }
            if (!byobCanceled || !otherCanceled) cancelPromise.resolve(undefined);
          },
          error: () => { reading = false; },
        });
      }
      function pullFor(forBranch2) {
        if (reading) {
          if (forBranch2) readAgainForBranch2 = true;
          else readAgainForBranch1 = true;
          return PromiseResolve(undefined);
        }
        reading = true;
        const request = byteGetRequest((forBranch2 ? branch2 : branch1).controller);
        if (request === null) pullWithDefaultReader();
        else pullWithByobReader(request.view, forBranch2);
        return PromiseResolve(undefined);
      }
      function pull1Algorithm() { return pullFor(false); }
      function pull2Algorithm() { return pullFor(true); }
      const [cancel1, cancel2] = teeCancelAlgorithms(stream, canceled, cancelPromise);
      branch1 = createReadableByteStream(noop, pull1Algorithm, cancel1);
      branch2 = createReadableByteStream(noop, pull2Algorithm, cancel2);
      forwardReaderError(reader);
      return [branch1, branch2];
    }

    // ---- WritableStream: internal records ------------------------------------------------------
    const CLOSE_SENTINEL = SymbolCtor('close');
    function newWritableRecord() {
      return {
        state: 'writable', storedError: undefined, writer: null, controller: null,
        inFlightWriteRequest: undefined, closeRequest: undefined, inFlightCloseRequest: undefined,
        pendingAbortRequest: undefined, writeRequests: [], backpressure: false, object: null,
      };
    }
    function writableCloseQueuedOrInFlight(stream) {
      return stream.closeRequest !== undefined || stream.inFlightCloseRequest !== undefined;
    }
    function writableHasOperationMarkedInFlight(stream) {
      return stream.inFlightWriteRequest !== undefined || stream.inFlightCloseRequest !== undefined;
    }
    function writableStreamAbort(stream, reason) {
      if (stream.state === 'closed' || stream.state === 'errored') return PromiseResolve(undefined);
      stream.controller.abortController.abort(reason);
      const state = stream.state;
      if (state === 'closed' || state === 'errored') return PromiseResolve(undefined);
      if (stream.pendingAbortRequest !== undefined) return stream.pendingAbortRequest.promise.promise;
      const wasAlreadyErroring = state === 'erroring';
      const promise = deferred();
      stream.pendingAbortRequest = { promise, reason: wasAlreadyErroring ? undefined : reason, wasAlreadyErroring };
      if (!wasAlreadyErroring) writableStartErroring(stream, reason);
      return promise.promise;
    }
    function writableStreamClose(stream) {
      const state = stream.state;
      if (state === 'closed' || state === 'errored') return PromiseReject(new TypeErrorCtor('The stream is closed or errored'));
      const promise = deferred();
      stream.closeRequest = promise;
      const writer = stream.writer;
      if (writer !== null && stream.backpressure && state === 'writable') writer.ready.resolve(undefined);
      const controller = stream.controller;
      enqueueValueWithSize(controller, CLOSE_SENTINEL, 0);
      writableAdvanceQueueIfNeeded(controller);
      return promise.promise;
    }
    function writableDealWithRejection(stream, error) {
      if (stream.state === 'writable') writableStartErroring(stream, error);
      else writableFinishErroring(stream);
    }
    function writableStartErroring(stream, reason) {
      const controller = stream.controller;
      stream.state = 'erroring';
      stream.storedError = reason;
      if (stream.writer !== null) writerEnsureReadyPromiseRejected(stream.writer, reason);
      if (!writableHasOperationMarkedInFlight(stream) && controller.started) writableFinishErroring(stream);
    }
    function writableFinishErroring(stream) {
      stream.state = 'errored';
      resetQueue(stream.controller);
      const storedError = stream.storedError;
      const requests = stream.writeRequests;
      stream.writeRequests = [];
      for (const request of requests) request.reject(storedError);
      const abortRequest = stream.pendingAbortRequest;
      if (abortRequest === undefined) {
        writableRejectCloseAndClosedPromiseIfNeeded(stream);
        return;
      }
      stream.pendingAbortRequest = undefined;
      if (abortRequest.wasAlreadyErroring) {
        abortRequest.promise.reject(storedError);
        writableRejectCloseAndClosedPromiseIfNeeded(stream);
        return;
      }
      const controller = stream.controller;
      const result = controller.abortAlgorithm(abortRequest.reason);
      writableClearAlgorithms(controller);
      then(result, () => {
        abortRequest.promise.resolve(undefined);
        writableRejectCloseAndClosedPromiseIfNeeded(stream);
      }, (reason) => {
        abortRequest.promise.reject(reason);
        writableRejectCloseAndClosedPromiseIfNeeded(stream);
      });
    }
    function writableFinishInFlightWrite(stream) {
      stream.inFlightWriteRequest.resolve(undefined);
      stream.inFlightWriteRequest = undefined;
    }
    function writableFinishInFlightWriteWithError(stream, error) {
      stream.inFlightWriteRequest.reject(error);
      stream.inFlightWriteRequest = undefined;
      writableDealWithRejection(stream, error);
    }
    function writableFinishInFlightClose(stream) {
      stream.inFlightCloseRequest.resolve(undefined);
      stream.inFlightCloseRequest = undefined;
      if (stream.state === 'erroring') {
        stream.storedError = undefined;
        if (stream.pendingAbortRequest !== undefined) {
          stream.pendingAbortRequest.promise.resolve(undefined);
          stream.pendingAbortRequest = undefined;
        }
      }
      stream.state = 'closed';
      if (stream.writer !== null) stream.writer.closed.resolve(undefined);
    }
    function writableFinishInFlightCloseWithError(stream, error) {
      stream.inFlightCloseRequest.reject(error);
      stream.inFlightCloseRequest = undefined;
      if (stream.pendingAbortRequest !== undefined) {
        stream.pendingAbortRequest.promise.reject(error);
        stream.pendingAbortRequest = undefined;
      }
      writableDealWithRejection(stream, error);
    }
    function writableRejectCloseAndClosedPromiseIfNeeded(stream) {
      if (stream.closeRequest !== undefined) {
        stream.closeRequest.reject(stream.storedError);
        stream.closeRequest = undefined;
      }
      const writer = stream.writer;
      if (writer !== null) {
        writer.closed.reject(stream.storedError);
        markHandled(writer.closed.promise);
      }
    }
    function writableUpdateBackpressure(stream, backpressure) {
      const writer = stream.writer;
      if (writer !== null && backpressure !== stream.backpressure) {
        if (backpressure) writer.ready = deferred();
        else writer.ready.resolve(undefined);
      }
      stream.backpressure = backpressure;
    }
    function writerEnsureReadyPromiseRejected(writer, error) {
      if (writer.ready.settled) writer.ready = rejectedDeferred(error);
      else {
        writer.ready.reject(error);
        markHandled(writer.ready.promise);
      }
    }
    function writerEnsureClosedPromiseRejected(writer, error) {
      if (writer.closed.settled) writer.closed = rejectedDeferred(error);
      else {
        writer.closed.reject(error);
        markHandled(writer.closed.promise);
      }
    }
    function writerGetDesiredSize(writer) {
      const stream = writer.stream;
      if (stream.state === 'errored' || stream.state === 'erroring') return null;
      if (stream.state === 'closed') return 0;
      return writableGetDesiredSize(stream.controller);
    }
    function writerRelease(writer) {
      const stream = writer.stream;
      const error = new TypeErrorCtor('The writer was released');
      writerEnsureReadyPromiseRejected(writer, error);
      writerEnsureClosedPromiseRejected(writer, error);
      stream.writer = null;
      writer.stream = null;
    }
    function writerWrite(writer, chunk) {
      const stream = writer.stream;
      const controller = stream.controller;
      const chunkSize = writableGetChunkSize(controller, chunk);
      if (stream !== writer.stream) return PromiseReject(new TypeErrorCtor('The writer was released'));
      const state = stream.state;
      if (state === 'errored') return PromiseReject(stream.storedError);
      if (writableCloseQueuedOrInFlight(stream) || state === 'closed') return PromiseReject(new TypeErrorCtor('The stream is closing or closed'));
      if (state === 'erroring') return PromiseReject(stream.storedError);
      const promise = deferred();
      stream.writeRequests.push(promise);
      writableControllerWrite(controller, chunk, chunkSize);
      return promise.promise;
    }
    function writerCloseWithErrorPropagation(writer) {
      const stream = writer.stream;
      const state = stream.state;
      if (writableCloseQueuedOrInFlight(stream) || state === 'closed') return PromiseResolve(undefined);
      if (state === 'errored') return PromiseReject(stream.storedError);
      return writableStreamClose(stream);
    }
    function acquireWriter(stream) {
      if (stream.writer !== null) throw new TypeErrorCtor('The stream is locked to a writer');
      const writer = { stream, ready: null, closed: null, object: null };
      stream.writer = writer;
      const state = stream.state;
      if (state === 'writable') {
        writer.ready = !writableCloseQueuedOrInFlight(stream) && stream.backpressure ? deferred() : resolvedDeferred(undefined);
        writer.closed = deferred();
      } else if (state === 'erroring') {
        writer.ready = rejectedDeferred(stream.storedError);
        writer.closed = deferred();
      } else if (state === 'closed') {
        writer.ready = resolvedDeferred(undefined);
        writer.closed = resolvedDeferred(undefined);
      } else {
        writer.ready = rejectedDeferred(stream.storedError);
        writer.closed = rejectedDeferred(stream.storedError);
      }
      return writer;
    }

    function writableClearAlgorithms(controller) {
      controller.writeAlgorithm = undefined;
      controller.closeAlgorithm = undefined;
      controller.abortAlgorithm = undefined;
      controller.strategySize = undefined;
    }
    function writableGetDesiredSize(controller) {
      return controller.strategyHWM - controller.queueTotalSize;
    }
    function writableGetChunkSize(controller, chunk) {
      if (controller.strategySize === undefined) return 1;
      try {
        return controller.strategySize(chunk);
      } catch (error) {
        writableControllerErrorIfNeeded(controller, error);
        return 1;
      }
    }
    function writableControllerWrite(controller, chunk, chunkSize) {
      try {
        enqueueValueWithSize(controller, chunk, chunkSize);
      } catch (error) {
        writableControllerErrorIfNeeded(controller, error);
        return;
      }
      const stream = controller.stream;
      if (!writableCloseQueuedOrInFlight(stream) && stream.state === 'writable') {
        writableUpdateBackpressure(stream, writableGetDesiredSize(controller) <= 0);
      }
      writableAdvanceQueueIfNeeded(controller);
    }
    function writableAdvanceQueueIfNeeded(controller) {
      const stream = controller.stream;
      if (!controller.started || stream.inFlightWriteRequest !== undefined) return;
      if (stream.state === 'erroring') {
        writableFinishErroring(stream);
        return;
      }
      if (queueLength(controller) === 0) return;
      const value = peekQueueValue(controller);
      if (value === CLOSE_SENTINEL) writableProcessClose(controller);
      else writableProcessWrite(controller, value);
    }
    function writableProcessClose(controller) {
      const stream = controller.stream;
      stream.inFlightCloseRequest = stream.closeRequest;
      stream.closeRequest = undefined;
      dequeueValue(controller);
      const result = controller.closeAlgorithm();
      writableClearAlgorithms(controller);
      then(result, () => writableFinishInFlightClose(stream), (reason) => writableFinishInFlightCloseWithError(stream, reason));
    }
    function writableProcessWrite(controller, chunk) {
      const stream = controller.stream;
      stream.inFlightWriteRequest = stream.writeRequests.shift();
      then(controller.writeAlgorithm(chunk), () => {
        writableFinishInFlightWrite(stream);
        const state = stream.state;
        dequeueValue(controller);
        if (!writableCloseQueuedOrInFlight(stream) && state === 'writable') {
          writableUpdateBackpressure(stream, writableGetDesiredSize(controller) <= 0);
        }
        writableAdvanceQueueIfNeeded(controller);
      }, (reason) => {
        if (stream.state === 'writable') writableClearAlgorithms(controller);
        writableFinishInFlightWriteWithError(stream, reason);
      });
    }
    function writableControllerErrorIfNeeded(controller, error) {
      if (controller.stream.state === 'writable') writableControllerError(controller, error);
    }
    function writableControllerError(controller, error) {
      writableClearAlgorithms(controller);
      writableStartErroring(controller.stream, error);
    }
    let makeWritableController;
    function setUpWritableController(stream, controller, startAlgorithm, writeAlgorithm, closeAlgorithm, abortAlgorithm, hwm, sizeAlgorithm) {
      controller.stream = stream;
      stream.controller = controller;
      resetQueue(controller);
      controller.abortController = new AbortController();
      controller.started = false;
      controller.strategySize = sizeAlgorithm;
      controller.strategyHWM = hwm;
      controller.writeAlgorithm = writeAlgorithm;
      controller.closeAlgorithm = closeAlgorithm;
      controller.abortAlgorithm = abortAlgorithm;
      writableUpdateBackpressure(stream, writableGetDesiredSize(controller) <= 0);
      const startResult = startAlgorithm();
      then(PromiseResolve(startResult), () => {
        controller.started = true;
        writableAdvanceQueueIfNeeded(controller);
      }, (reason) => {
        controller.started = true;
        writableDealWithRejection(stream, reason);
      });
    }
    function createWritableStream(startAlgorithm, writeAlgorithm, closeAlgorithm, abortAlgorithm, hwm, sizeAlgorithm) {
      const stream = newWritableRecord();
      makeWritable(stream);
      const controller = { object: null };
      controller.object = makeWritableController(controller);
      setUpWritableController(stream, controller, startAlgorithm, writeAlgorithm, closeAlgorithm, abortAlgorithm, hwm, sizeAlgorithm);
      return stream;
    }

    // ---- WritableStream: classes ---------------------------------------------------------------
    class WritableStreamDefaultController {
      #c;
      constructor(key) {
        if (key !== INTERNAL) throw new TypeErrorCtor('Illegal constructor');
      }
      get signal() { return this.#c.abortController.signal; }
      error(e = undefined) {
        if (this.#c.stream.state !== 'writable') return;
        writableControllerError(this.#c, e);
      }
      get [SymbolToStringTag]() { return 'WritableStreamDefaultController'; }
      static {
        makeWritableController = (record) => {
          const object = new WritableStreamDefaultController(INTERNAL);
          object.#c = record;
          return object;
        };
      }
    }
    class WritableStreamDefaultWriter {
      #w;
      constructor(stream) {
        const record = writableRecord(stream);
        if (record === undefined) throw new TypeErrorCtor("Failed to construct 'WritableStreamDefaultWriter': parameter 1 is not of type 'WritableStream'.");
        this.#w = acquireWriter(record);
        this.#w.object = this;
      }
      get closed() { return this.#w.closed.promise; }
      get ready() { return this.#w.ready.promise; }
      get desiredSize() {
        if (this.#w.stream === null) throw new TypeErrorCtor('The writer has been released');
        return writerGetDesiredSize(this.#w);
      }
      abort(reason = undefined) {
        if (this.#w.stream === null) return PromiseReject(new TypeErrorCtor('The writer has been released'));
        return writableStreamAbort(this.#w.stream, reason);
      }
      close() {
        const stream = this.#w.stream;
        if (stream === null) return PromiseReject(new TypeErrorCtor('The writer has been released'));
        if (writableCloseQueuedOrInFlight(stream)) return PromiseReject(new TypeErrorCtor('The stream is already closing'));
        return writableStreamClose(stream);
      }
      releaseLock() {
        if (this.#w.stream !== null) writerRelease(this.#w);
      }
      write(chunk = undefined) {
        if (this.#w.stream === null) return PromiseReject(new TypeErrorCtor('The writer has been released'));
        return writerWrite(this.#w, chunk);
      }
      get [SymbolToStringTag]() { return 'WritableStreamDefaultWriter'; }
    }
    class WritableStream {
      #s;
      constructor(underlyingSink = undefined, strategy = undefined) {
        if (constructingBare) {
          constructingBare = false;
          return;
        }
        const sink = underlyingSink === undefined || underlyingSink === null ? null : underlyingSink;
        if (sink !== null && !isObject(sink)) throw new TypeErrorCtor("Failed to construct 'WritableStream': The provided value is not an object.");
        const context = "Failed to construct 'WritableStream'";
        const strategyDict = dictionary(strategy, context);
        const abort = sink === null ? undefined : getMethod(sink, 'abort', context);
        const close = sink === null ? undefined : getMethod(sink, 'close', context);
        const start = sink === null ? undefined : getMethod(sink, 'start', context);
        if (sink !== null && sink.type !== undefined) throw new RangeErrorCtor(`${context}: Invalid type is specified`);
        const write = sink === null ? undefined : getMethod(sink, 'write', context);
        const size = extractSizeAlgorithm(strategyDict);
        const hwm = extractHighWaterMark(strategyDict, 1);
        this.#s = newWritableRecord();
        this.#s.object = this;
        const controller = { object: null };
        controller.object = makeWritableController(controller);
        setUpWritableController(this.#s, controller,
          () => (start === undefined ? undefined : ReflectApply(start, sink, [controller.object])),
          (chunk) => promiseCall(write, sink, [chunk, controller.object]),
          () => promiseCall(close, sink, []),
          (reason) => promiseCall(abort, sink, [reason]), hwm, size);
      }
      get locked() { return this.#s.writer !== null; }
      abort(reason = undefined) {
        if (this.#s.writer !== null) return PromiseReject(new TypeErrorCtor('Cannot abort a locked stream'));
        return writableStreamAbort(this.#s, reason);
      }
      close() {
        const stream = this.#s;
        if (stream.writer !== null) return PromiseReject(new TypeErrorCtor('Cannot close a locked stream'));
        if (writableCloseQueuedOrInFlight(stream)) return PromiseReject(new TypeErrorCtor('The stream is already closing'));
        return writableStreamClose(stream);
      }
      getWriter() { return new WritableStreamDefaultWriter(this); }
      get [SymbolToStringTag]() { return 'WritableStream'; }
      static {
        writableRecord = (value) => (isObject(value) && #s in value ? value.#s : undefined);
        makeWritable = (record) => {
          constructingBare = true;
          const stream = new WritableStream();
          stream.#s = record;
          record.object = stream;
          return stream;
        };
      }
    }

    // ---- pipeTo --------------------------------------------------------------------------------
    function pipeOptions(options) {
      const dict = dictionary(options, "Failed to execute 'pipeTo' on 'ReadableStream'");
      const signal = dict.signal;
      if (signal !== undefined && !isSignal(signal)) {
        throw new TypeErrorCtor("Failed to execute 'pipeTo' on 'ReadableStream': member signal is not of type AbortSignal.");
      }
      return { preventAbort: Boolean(dict.preventAbort), preventCancel: Boolean(dict.preventCancel), preventClose: Boolean(dict.preventClose), signal };
    }
    function readableStreamPipeTo(source, dest, { preventClose, preventAbort, preventCancel, signal }) {
      const reader = acquireReader(source);
      const writer = acquireWriter(dest);
      source.disturbed = true;
      let shuttingDown = false;
      let currentWrite = PromiseResolve(undefined);
      const promise = deferred();
      let abortAlgorithm;
      if (signal !== undefined) {
        abortAlgorithm = () => {
          const error = signal.reason;
          const actions = [];
          if (!preventAbort) actions.push(() => (dest.state === 'writable' ? writableStreamAbort(dest, error) : PromiseResolve(undefined)));
          if (!preventCancel) actions.push(() => (source.state === 'readable' ? readableStreamCancel(source, error) : PromiseResolve(undefined)));
          shutdownWithAction(() => PromiseAll(actions.map((action) => action())), true, error);
        };
        if (signal.aborted) {
          abortAlgorithm();
          return promise.promise;
        }
        signal.addEventListener('abort', abortAlgorithm, { once: true });
      }
      function finalize(isError, error) {
        writerRelease(writer);
        readerRelease(reader);
        if (signal !== undefined) signal.removeEventListener('abort', abortAlgorithm);
        if (isError) promise.reject(error);
        else promise.resolve(undefined);
      }
      function waitForWritesToFinish() {
        const old = currentWrite;
        return then(old, () => (old !== currentWrite ? waitForWritesToFinish() : undefined));
      }
      function shutdownWithAction(action, originalIsError, originalError) {
        if (shuttingDown) return;
        shuttingDown = true;
        const doTheRest = () => {
          let result;
          try { result = PromiseResolve(action()); } catch (error) { result = PromiseReject(error); }
          then(result, () => finalize(originalIsError, originalError), (error) => finalize(true, error));
        };
        if (dest.state === 'writable' && !writableCloseQueuedOrInFlight(dest)) then(waitForWritesToFinish(), doTheRest);
        else doTheRest();
      }
      function shutdown(isError, error) {
        if (shuttingDown) return;
        shuttingDown = true;
        if (dest.state === 'writable' && !writableCloseQueuedOrInFlight(dest)) then(waitForWritesToFinish(), () => finalize(isError, error));
        else finalize(isError, error);
      }
      // Error and close propagation, checked now and whenever either side changes.
      function sourceErrored(error) {
        if (!preventAbort) shutdownWithAction(() => writableStreamAbort(dest, error), true, error);
        else shutdown(true, error);
      }
      function destErrored(error) {
        if (!preventCancel) shutdownWithAction(() => readableStreamCancel(source, error), true, error);
        else shutdown(true, error);
      }
      function sourceClosed() {
        if (!preventClose) shutdownWithAction(() => writerCloseWithErrorPropagation(writer));
        else shutdown();
      }
      function checkStates() {
        if (source.state === 'errored') sourceErrored(source.storedError);
        else if (dest.state === 'errored' || dest.state === 'erroring') destErrored(dest.storedError);
        else if (source.state === 'closed') sourceClosed();
        else if (writableCloseQueuedOrInFlight(dest) || dest.state === 'closed') {
          const error = new TypeErrorCtor('The destination stream is closed');
          if (!preventCancel) shutdownWithAction(() => readableStreamCancel(source, error), true, error);
          else shutdown(true, error);
        }
      }
      then(reader.closed.promise, () => { if (!shuttingDown) checkStates(); }, (error) => { if (!shuttingDown) sourceErrored(error); });
      then(writer.closed.promise, undefined, (error) => { if (!shuttingDown) destErrored(error); });
      checkStates();
      function pipeStep() {
        if (shuttingDown) return;
        then(writer.ready.promise, () => {
          if (shuttingDown) return;
          readerRead(reader, {
            chunk: (chunk) => {
              currentWrite = then(writerWrite(writer, chunk), undefined, noop);
              pipeStep();
            },
            close: () => { if (!shuttingDown) checkStates(); },
            error: (error) => { if (!shuttingDown) sourceErrored(error); },
          });
        }, (error) => { if (!shuttingDown) destErrored(dest.storedError !== undefined ? dest.storedError : error); });
      }
      pipeStep();
      return promise.promise;
    }

    // ---- TransformStream -----------------------------------------------------------------------
    let makeTransformController;
    function transformStreamError(stream, error) {
      readableControllerError(stream.readable.controller, error);
      transformErrorWritableAndUnblockWrite(stream, error);
    }
    function transformErrorWritableAndUnblockWrite(stream, error) {
      transformClearAlgorithms(stream.controller);
      writableControllerErrorIfNeeded(stream.writable.controller, error);
      transformUnblockWrite(stream);
    }
    function transformUnblockWrite(stream) {
      if (stream.backpressure) transformSetBackpressure(stream, false);
    }
    function transformSetBackpressure(stream, backpressure) {
      if (stream.backpressureChange !== undefined) stream.backpressureChange.resolve(undefined);
      stream.backpressureChange = deferred();
      stream.backpressure = backpressure;
    }
    function transformClearAlgorithms(controller) {
      controller.transformAlgorithm = undefined;
      controller.flushAlgorithm = undefined;
      controller.cancelAlgorithm = undefined;
    }
    function transformControllerEnqueue(controller, chunk) {
      const stream = controller.stream;
      const readableController = stream.readable.controller;
      if (!readableCanCloseOrEnqueue(readableController)) throw new TypeErrorCtor('The readable side is not in a state that permits enqueue');
      try {
        readableControllerEnqueue(readableController, chunk);
      } catch (error) {
        transformErrorWritableAndUnblockWrite(stream, error);
        throw stream.readable.storedError;
      }
      const backpressure = !readableShouldCallPull(readableController);
      if (backpressure !== stream.backpressure) transformSetBackpressure(stream, true);
    }
    function transformControllerTerminate(controller) {
      const stream = controller.stream;
      readableControllerClose(stream.readable.controller);
      transformErrorWritableAndUnblockWrite(stream, new TypeErrorCtor('The transform stream has been terminated'));
    }
    function transformPerform(controller, chunk) {
      return then(controller.transformAlgorithm(chunk), undefined, (reason) => {
        transformStreamError(controller.stream, reason);
        throw reason;
      });
    }
    function transformSinkWrite(stream, chunk) {
      const controller = stream.controller;
      if (stream.backpressure) {
        return then(stream.backpressureChange.promise, () => {
          if (stream.writable.state === 'erroring') throw stream.writable.storedError;
          return transformPerform(controller, chunk);
        });
      }
      return transformPerform(controller, chunk);
    }
    function transformSinkAbort(stream, reason) {
      const controller = stream.controller;
      if (controller.finish !== undefined) return controller.finish.promise;
      const readable = stream.readable;
      controller.finish = deferred();
      const cancelPromise = controller.cancelAlgorithm(reason);
      transformClearAlgorithms(controller);
      then(cancelPromise, () => {
        if (readable.state === 'errored') controller.finish.reject(readable.storedError);
        else {
          readableControllerError(readable.controller, reason);
          controller.finish.resolve(undefined);
        }
      }, (error) => {
        readableControllerError(readable.controller, error);
        controller.finish.reject(error);
      });
      return controller.finish.promise;
    }
    function transformSinkClose(stream) {
      const controller = stream.controller;
      if (controller.finish !== undefined) return controller.finish.promise;
      const readable = stream.readable;
      controller.finish = deferred();
      const flushPromise = controller.flushAlgorithm();
      transformClearAlgorithms(controller);
      then(flushPromise, () => {
        if (readable.state === 'errored') controller.finish.reject(readable.storedError);
        else {
          readableControllerClose(readable.controller);
          controller.finish.resolve(undefined);
        }
      }, (error) => {
        readableControllerError(readable.controller, error);
        controller.finish.reject(error);
      });
      return controller.finish.promise;
    }
    function transformSourcePull(stream) {
      transformSetBackpressure(stream, false);
      return stream.backpressureChange.promise;
    }
    function transformSourceCancel(stream, reason) {
      const controller = stream.controller;
      if (controller.finish !== undefined) return controller.finish.promise;
      const writable = stream.writable;
      controller.finish = deferred();
      const cancelPromise = controller.cancelAlgorithm(reason);
      transformClearAlgorithms(controller);
      then(cancelPromise, () => {
        if (writable.state === 'errored') controller.finish.reject(writable.storedError);
        else {
          writableControllerErrorIfNeeded(writable.controller, reason);
          transformUnblockWrite(stream);
          controller.finish.resolve(undefined);
        }
      }, (error) => {
        writableControllerErrorIfNeeded(writable.controller, error);
        transformUnblockWrite(stream);
        controller.finish.reject(error);
      });
      return controller.finish.promise;
    }

    class TransformStreamDefaultController {
      #c;
      constructor(key) {
        if (key !== INTERNAL) throw new TypeErrorCtor('Illegal constructor');
      }
      get desiredSize() { return readableGetDesiredSize(this.#c.stream.readable.controller); }
      enqueue(chunk = undefined) { transformControllerEnqueue(this.#c, chunk); }
      error(reason = undefined) { transformStreamError(this.#c.stream, reason); }
      terminate() { transformControllerTerminate(this.#c); }
      get [SymbolToStringTag]() { return 'TransformStreamDefaultController'; }
      static {
        makeTransformController = (record) => {
          const object = new TransformStreamDefaultController(INTERNAL);
          object.#c = record;
          return object;
        };
      }
    }
    class TransformStream {
      #s;
      constructor(transformer = undefined, writableStrategy = undefined, readableStrategy = undefined) {
        const source = transformer === undefined || transformer === null ? null : transformer;
        if (source !== null && !isObject(source)) throw new TypeErrorCtor("Failed to construct 'TransformStream': The provided value is not an object.");
        const context = "Failed to construct 'TransformStream'";
        const writableDict = dictionary(writableStrategy, context);
        const readableDict = dictionary(readableStrategy, context);
        const cancel = source === null ? undefined : getMethod(source, 'cancel', context);
        const flush = source === null ? undefined : getMethod(source, 'flush', context);
        if (source !== null && source.readableType !== undefined) throw new RangeErrorCtor(`${context}: Invalid readableType is specified`);
        const start = source === null ? undefined : getMethod(source, 'start', context);
        const transform = source === null ? undefined : getMethod(source, 'transform', context);
        if (source !== null && source.writableType !== undefined) throw new RangeErrorCtor(`${context}: Invalid writableType is specified`);
        const readableHWM = extractHighWaterMark(readableDict, 0);
        const readableSize = extractSizeAlgorithm(readableDict);
        const writableHWM = extractHighWaterMark(writableDict, 1);
        const writableSize = extractSizeAlgorithm(writableDict);
        const startPromise = deferred();
        const stream = { readable: null, writable: null, backpressure: undefined, backpressureChange: undefined, controller: null, object: this };
        this.#s = stream;
        const startAlgorithm = () => startPromise.promise;
        stream.writable = createWritableStream(startAlgorithm, (chunk) => transformSinkWrite(stream, chunk),
          () => transformSinkClose(stream), (reason) => transformSinkAbort(stream, reason), writableHWM, writableSize);
        stream.readable = createReadableStream(startAlgorithm, () => transformSourcePull(stream),
          (reason) => transformSourceCancel(stream, reason), readableHWM, readableSize);
        transformSetBackpressure(stream, true);
        const controller = { stream, finish: undefined, object: null };
        controller.object = makeTransformController(controller);
        stream.controller = controller;
        controller.transformAlgorithm = transform === undefined
          ? (chunk) => {
            try {
              transformControllerEnqueue(controller, chunk);
              return PromiseResolve(undefined);
            } catch (error) {
              return PromiseReject(error);
            }
          }
          : (chunk) => promiseCall(transform, source, [chunk, controller.object]);
        controller.flushAlgorithm = () => promiseCall(flush, source, [controller.object]);
        controller.cancelAlgorithm = (reason) => promiseCall(cancel, source, [reason]);
        if (start === undefined) startPromise.resolve(undefined);
        else startPromise.resolve(ReflectApply(start, source, [controller.object]));
      }
      get readable() { return this.#s.readable.object; }
      get writable() { return this.#s.writable.object; }
      get [SymbolToStringTag]() { return 'TransformStream'; }
    }

    // ---- TextEncoderStream / TextDecoderStream -------------------------------------------------
    class TextEncoderStream {
      #transform;
      constructor() {
        const encoder = new TextEncoderCtor();
        let pending = '';
        this.#transform = new TransformStream({
          transform(chunk, controller) {
            let text = pending + StringCtor(chunk);
            pending = '';
            const last = text.charCodeAt(text.length - 1);
            if (last >= 0xd800 && last <= 0xdbff) {
              pending = text.slice(-1);
              text = text.slice(0, -1);
            }
            if (text.length > 0) controller.enqueue(encoder.encode(text));
          },
          flush(controller) {
            if (pending !== '') controller.enqueue(new Uint8ArrayCtor([0xef, 0xbf, 0xbd]));
          },
        });
      }
      get encoding() { return 'utf-8'; }
      get readable() { return this.#transform.readable; }
      get writable() { return this.#transform.writable; }
      get [SymbolToStringTag]() { return 'TextEncoderStream'; }
    }
    class TextDecoderStream {
      #decoder;
      #transform;
      constructor(label = 'utf-8', options = undefined) {
        const decoder = new TextDecoderCtor(label, options);
        this.#decoder = decoder;
        this.#transform = new TransformStream({
          transform(chunk, controller) {
            if (!isView(chunk) && !isArrayBuffer(chunk)) throw new TypeErrorCtor('TextDecoderStream expects ArrayBuffer or ArrayBufferView chunks');
            const text = decoder.decode(chunk, { stream: true });
            if (text !== '') controller.enqueue(text);
          },
          flush(controller) {
            const text = decoder.decode();
            if (text !== '') controller.enqueue(text);
          },
        });
      }
      get encoding() { return this.#decoder.encoding; }
      get fatal() { return this.#decoder.fatal; }
      get ignoreBOM() { return this.#decoder.ignoreBOM; }
      get readable() { return this.#transform.readable; }
      get writable() { return this.#transform.writable; }
      get [SymbolToStringTag]() { return 'TextDecoderStream'; }
    }

    // ---- CompressionStream / DecompressionStream -------------------------------------------------
    // gzip, deflate (zlib) and deflate-raw through flate2 (web_natives.rs). The input is gathered
    // and (de)compressed when the writable side closes, so the output comes in one chunk at the
    // end. Decompressing first measures the output without keeping it, refuses one past the
    // ArrayBuffer budget, then fills a buffer allocated here (so the budget counts it).
    const FORMATS = ['deflate', 'deflate-raw', 'gzip'];
    function compressionFormat(format, name) {
      const text = StringCtor(format);
      if (!FORMATS.includes(text)) throw new TypeErrorCtor(`Failed to construct '${name}': Unsupported compression format: '${text}'`);
      return text;
    }
    function gatherer(name) {
      const chunks = [];
      let total = 0;
      return {
        add(chunk) {
          if (!isView(chunk) && !isArrayBuffer(chunk)) throw new TypeErrorCtor(`${name} expects ArrayBuffer or ArrayBufferView chunks`);
          const bytes = isView(chunk) ? new Uint8ArrayCtor(chunk.buffer, chunk.byteOffset, chunk.byteLength) : new Uint8ArrayCtor(chunk);
          chunks.push(bytes.slice());
          total += bytes.byteLength;
        },
        all() {
          const out = new Uint8ArrayCtor(total);
          let at = 0;
          for (const chunk of chunks) {
            out.set(chunk, at);
            at += chunk.byteLength;
          }
          chunks.length = 0;
          return out;
        },
      };
    }
    class CompressionStream {
      #transform;
      constructor(format) {
        if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'CompressionStream': 1 argument required");
        const kind = compressionFormat(format, 'CompressionStream');
        const input = gatherer('CompressionStream');
        this.#transform = new TransformStream({
          transform(chunk) { input.add(chunk); },
          flush(controller) {
            const bytes = input.all();
            const output = new Uint8ArrayCtor(zlib.deflateBound(bytes.byteLength));
            const written = zlib.deflate(kind, bytes, output);
            if (written < 0) throw new TypeErrorCtor('Compression failed');
            controller.enqueue(output.slice(0, written));
          },
        });
      }
      get readable() { return this.#transform.readable; }
      get writable() { return this.#transform.writable; }
      get [SymbolToStringTag]() { return 'CompressionStream'; }
    }
    class DecompressionStream {
      #transform;
      constructor(format) {
        if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'DecompressionStream': 1 argument required");
        const kind = compressionFormat(format, 'DecompressionStream');
        const input = gatherer('DecompressionStream');
        this.#transform = new TransformStream({
          transform(chunk) { input.add(chunk); },
          flush(controller) {
            const bytes = input.all();
            const size = zlib.inflate(kind, bytes, zlib.budget());
            if (typeof size === 'string') throw new TypeErrorCtor(size);
            if (size === 0) return;
            const output = new Uint8ArrayCtor(size);
            const written = zlib.inflate(kind, bytes, output);
            if (typeof written === 'string') throw new TypeErrorCtor(written);
            controller.enqueue(output);
          },
        });
      }
      get readable() { return this.#transform.readable; }
      get writable() { return this.#transform.writable; }
      get [SymbolToStringTag]() { return 'DecompressionStream'; }
    }

    // ---- Helpers for bodies (web_net.js) --------------------------------------------------------
    // A readable byte stream of one chunk. The bytes are copied (enqueue transfers what it is
    // given, and `bytes` stays its owner's) on the first read, not before.
    function bytesStream(bytes) {
      return new ReadableStream({
        type: 'bytes',
        pull(controller) {
          if (bytes.byteLength > 0) controller.enqueue(new Uint8ArrayCtor(bytes));
          controller.close();
        },
      });
    }
    function isDisturbed(stream) {
      return readableRecord(stream).disturbed;
    }
    function isLocked(stream) {
      return isReadableLocked(readableRecord(stream));
    }
    // Reads a stream of Uint8Array chunks to its end (the run's memory bounds the total).
    async function readAllBytes(stream) {
      const reader = new ReadableStreamDefaultReader(stream);
      const chunks = [];
      let total = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (!(value instanceof Uint8ArrayCtor)) {
          const error = new TypeErrorCtor('A body stream chunk must be a Uint8Array');
          readableStreamCancel(readableRecord(stream), error);
          throw error;
        }
        chunks.push(value);
        total += value.byteLength;
      }
      return concatChunks(chunks, total);
    }
    // A stream that is already disturbed, closed and locked (a body read before its stream was
    // asked for: the read that used it up kept its reader).
    function usedStream() {
      const stream = new ReadableStream({ start(controller) { controller.close(); } });
      acquireReader(readableRecord(stream));
      readableRecord(stream).disturbed = true;
      return stream;
    }

    const globals = [['ReadableStream', ReadableStream], ['ReadableStreamDefaultReader', ReadableStreamDefaultReader],
      ['ReadableStreamBYOBReader', ReadableStreamBYOBReader], ['ReadableStreamBYOBRequest', ReadableStreamBYOBRequest],
      ['ReadableStreamDefaultController', ReadableStreamDefaultController],
      ['ReadableByteStreamController', ReadableByteStreamController], ['WritableStream', WritableStream],
      ['WritableStreamDefaultWriter', WritableStreamDefaultWriter], ['WritableStreamDefaultController', WritableStreamDefaultController],
      ['TransformStream', TransformStream], ['TransformStreamDefaultController', TransformStreamDefaultController],
      ['ByteLengthQueuingStrategy', ByteLengthQueuingStrategy], ['CountQueuingStrategy', CountQueuingStrategy],
      ['TextEncoderStream', TextEncoderStream], ['TextDecoderStream', TextDecoderStream],
      ['CompressionStream', CompressionStream], ['DecompressionStream', DecompressionStream]];
    return { globals, ReadableStream, bytesStream, isDisturbed, isLocked, readAllBytes, usedStream };
  }
})
