'use strict';
// Blob, File, FormData and the Body mixin over them (Request/Response bodies of those kinds,
// multipart/form-data both ways), checked against Node's own implementations: Node parses what
// the sandbox serializes and the sandbox parses what Node serializes.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 1, timeout: 5000 });
test.after(() => ex.dispose());

async function both(code) {
  const out = await ex.execute({ code });
  assert.equal(out.error, undefined, out.error);
  const fn = new Function(`return (${code})`)();
  return [out.result, JSON.parse(JSON.stringify(await fn()))];
}
const ATTEMPT = 'const attempt = (f) => { try { const v = f(); return v === undefined ? "ok" : v; } catch (e) { return "throws " + e.name; } };';

test('Blob and File: parts, types, slicing, reading, as Node does', async () => {
  const [sandbox, node] = await both(`async () => {
    ${ATTEMPT}
    const inner = new Blob(['d\\u00e9']);
    const blob = new Blob(['ab', new Uint8Array([99]), new Uint16Array([0x6565]).buffer, inner, new DataView(new Uint8Array([1, 2, 3]).buffer, 1, 1)], { type: 'Text/Plain;Charset=UTF-8' });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    const file = new File(['x', 'yz'], 'a\\ud800.txt', { type: 'image/png', lastModified: 42 });
    return [
      blob.size, blob.type, Array.from(bytes), await blob.slice(1, -3).text(), await blob.slice(-2, 100).arrayBuffer().then((b) => b.byteLength),
      blob.slice(0, 1, 'A/B').type, blob.slice(3, 1).size, new Blob([], { type: 'a\\u0100' }).type, new Blob(['\\ud800']).size,
      await new Blob(['a\\r\\nb\\rc'], { endings: 'native' }).text(), attempt(() => new Blob('ab')), attempt(() => new Blob([], { endings: 'x' })),
      file.name, file.type, file.size, file.lastModified, file instanceof Blob, Object.prototype.toString.call(file),
      Object.prototype.toString.call(blob), attempt(() => new File(['x'])), Array.from(await new Blob(['hi']).bytes()),
    ];
  }`);
  // Node 20 keeps a lone CR with endings: 'native'; the File API standard turns it into LF too.
  assert.equal(sandbox[9], 'a\nb\nc');
  assert.deepEqual([...sandbox.slice(0, 9), ...sandbox.slice(10)], [...node.slice(0, 9), ...node.slice(10)]);
  assert.equal(sandbox[0], 9);
});

test('FormData keeps entries in order, turns Blobs into Files and validates its arguments', async () => {
  const [sandbox, node] = await both(`async () => {
    ${ATTEMPT}
    const form = new FormData();
    form.append('a', '1');
    form.append('b', new Blob(['hi'], { type: 'text/x' }));
    form.append('c', new File(['x'], 'orig.txt', { type: 'text/plain' }), 'renamed.txt');
    form.append('a', 2);
    form.set('d', 'only');
    const show = (f) => [...f].map(([k, v]) => [k, typeof v === 'string' ? v : [v.constructor.name, v.name, v.type, v.size]]);
    const before = show(form);
    form.set('a', 'one');
    form.delete('b');
    return [before, show(form), form.get('a'), form.getAll('a'), form.has('b'), form.get('zz'), [...form.keys()],
      attempt(() => form.append('x')), attempt(() => form.append('x', 'y', 'z')), attempt(() => new FormData({})),
      Object.prototype.toString.call(form)];
  }`);
  assert.deepEqual(sandbox, node);
});

test('multipart/form-data: the sandbox reads what Node writes and Node reads what the sandbox writes', async () => {
  const form = new FormData();
  form.append('name', 'va"lue\nwith lines');
  form.append('we"ird\nname', 'x');
  form.append('file', new File([new Uint8Array([0, 255, 13, 10, 45, 45])], 'bin.dat', { type: 'application/octet-stream' }));
  form.append('text', new Blob(['caf\u00e9'], { type: 'text/plain' }), 'note.txt');
  const request = new Request('https://example.com/', { method: 'POST', body: form });
  const body = Buffer.from(await request.arrayBuffer()).toString('base64');
  const contentType = request.headers.get('content-type');
  const out = await ex.execute({ code: `async () => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(body)}), (c) => c.charCodeAt(0));
    const parsed = await new Response(bytes, { headers: { 'content-type': ${JSON.stringify(contentType)} } }).formData();
    const read = [];
    for (const [k, v] of parsed) read.push([k, typeof v === 'string' ? v : [v.name, v.type, Array.from(new Uint8Array(await v.arrayBuffer()))]]);
    const mine = new FormData();
    mine.append('a', 'x\\ny');
    mine.append('b', new File(['--\\r\\n'], 'f.txt', { type: 'text/plain' }));
    mine.append('c', new Blob([new Uint8Array([1, 2])]));
    const response = new Response(mine);
    const text = new Uint8Array(await response.clone().arrayBuffer());
    let s = ''; for (const b of text) s += String.fromCharCode(b);
    const own = [...await response.formData()].map(([k, v]) => [k, typeof v === 'string' ? v : v.name]);
    return [read, btoa(s), response.headers.get('content-type'), own];
  }` });
  assert.equal(out.error, undefined, out.error);
  const [read, written, writtenType, own] = out.result;
  const expected = [];
  // A name keeps the escapes the serializer wrote (%22, %0D%0A): parsing does not decode them.
  const escaped = (name) => name.replace(/\n/g, '%0D%0A').replace(/"/g, '%22');
  for (const [k, v] of form) expected.push([escaped(k), typeof v === 'string' ? v.replace(/\n/g, '\r\n') : [v.name, v.type, Array.from(new Uint8Array(await v.arrayBuffer()))]]);
  assert.deepEqual(read, expected);
  assert.match(writtenType, /^multipart\/form-data; boundary=/);
  const parsedByNode = await new Response(Buffer.from(written, 'base64'), { headers: { 'content-type': writtenType } }).formData();
  const nodeRead = [];
  for (const [k, v] of parsedByNode) nodeRead.push([k, typeof v === 'string' ? v : [v.name, v.type, await v.text()]]);
  assert.deepEqual(nodeRead, [['a', 'x\r\ny'], ['b', ['f.txt', 'text/plain', '--\r\n']], ['c', ['blob', 'application/octet-stream', '\x01\x02']]]);
  assert.deepEqual(own, [['a', 'x\r\ny'], ['b', 'f.txt'], ['c', 'blob']]);
});

test('Request and Response bodies of Blob, FormData and URLSearchParams: content types, blob(), formData()', async () => {
  const [sandbox, node] = await both(`async () => {
    const blobResponse = new Response(new Blob(['z'], { type: 'a/b' }));
    const typed = await blobResponse.clone().blob();
    const untyped = new Request('https://x.example/', { method: 'PUT', body: new Blob(['q']) });
    const urlencoded = new Response('a=1&b=%20&a=3', { headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' } });
    const fromParams = new Response(new URLSearchParams({ k: 'v w' }));
    let refused; try { await new Response('x', { headers: { 'content-type': 'text/plain' } }).formData(); } catch (e) { refused = e.name; }
    let none; try { await new Response('a=1').formData(); } catch (e) { none = e.name; }
    const used = new Response(new Blob(['u'])); await used.blob();
    let twice; try { await used.formData(); } catch (e) { twice = e.name; }
    return [blobResponse.headers.get('content-type'), typed.type, await typed.text(), untyped.headers.get('content-type'),
      await untyped.text(), [...await urlencoded.formData()], [...await fromParams.formData()], refused, none, used.bodyUsed, twice,
      (await new Response('x').blob()).type];
  }`);
  assert.deepEqual(sandbox, node);
});

// The multipart/form-data grammar as the Fetch standard reads it: what is accepted (transport
// padding, an epilogue, spaces around a header name, the last valid Content-Type serialized again,
// text/plain for a file part without one, lastModified 0) and what is refused as a TypeError.
test('multipart/form-data parsing: delimiters, header lines, part types', async () => {
  const out = await ex.execute({ code: `async () => {
    const parse = (lines, type = 'multipart/form-data; boundary=b') =>
      new Response(lines.join('\\r\\n'), { headers: { 'content-type': type } }).formData().then(
        (form) => [...form].map(([k, v]) => typeof v === 'string' ? [k, v] : [k, v.name, v.type, v.lastModified]),
        (e) => e.name);
    const part = (headers, body = 'v') => ['--b', ...headers, '', body];
    const cd = 'Content-Disposition: form-data; name="a"';
    return {
      padding: await parse(['--b \\t', cd, '', 'v', '--b-- ', 'epilogue']),
      spaces: await parse([' Content-Disposition \\t: form-data; name="a"', '', 'v', '--b--'].map((l, i) => i === 0 ? '--b\\r\\n' + l : l)),
      percent: await parse([...part(['Content-Disposition: form-data; name="x%0Ay%22"; filename="f%25.txt"']), '--b--']),
      noType: await parse([...part([cd + '; filename="f"']), '--b--']),
      badType: await parse([...part([cd + '; filename="f"', 'Content-Type: text']), '--b--']),
      lastType: await parse([...part([cd + '; filename="f"', 'Content-Type: text/html;;x="y", TEXT/Plain']), '--b--']),
      quoted: await parse([...part([cd]).map((l) => l.replace('--b', '--a.b(c)')), '--a.b(c)--'], 'multipart/form-data; boundary="a.b(c)"'),
      preamble: await parse(['junk', ...part([cd]), '--b--']),
      junkAfterClose: await parse([...part([cd]), '--b--junk']),
      noHeaders: await parse(['--b', '', 'v', '--b--']),
      notToken: await parse([...part([cd, 'Cont ent-Type: text/plain']), '--b--']),
      fold: await parse([...part(['Content-Disposition: form-data;', ' name="a"']), '--b--']),
      nul: await parse([...part([cd, 'X: a\\u0000b']), '--b--']),
      bareLf: await parse([...part(['Content-Disposition: form-data; name="a\\nb"']), '--b--']),
      noClose: await parse(part([cd])),
      emptyBoundary: await parse(['--', cd, '', 'v', '----'], 'multipart/form-data; boundary=""'),
    };
  }` });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, {
    padding: [['a', 'v']],
    spaces: [['a', 'v']],
    percent: [['x%0Ay%22', 'f%25.txt', 'text/plain', 0]],
    noType: [['a', 'f', 'text/plain', 0]],
    badType: [['a', 'f', '', 0]],
    lastType: [['a', 'f', 'text/plain', 0]],
    quoted: [['a', 'v']],
    preamble: 'TypeError',
    junkAfterClose: 'TypeError',
    noHeaders: 'TypeError',
    notToken: 'TypeError',
    fold: 'TypeError',
    nul: 'TypeError',
    bareLf: 'TypeError',
    noClose: 'TypeError',
    emptyBoundary: 'TypeError',
  });
});

// Web IDL pair iterators: a "<name> Iterator" object inheriting %IteratorPrototype% (so the
// iterator helpers work), reading the entries live; a Headers init that is a Headers object is
// read through its iterator (a replaced one included).
test('Headers, URLSearchParams and FormData iterators are Web IDL pair iterators', async () => {
  const code = `() => {
    const iteratorProto = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
    const headers = new Headers({ b: '2', a: '1' });
    const params = new URLSearchParams('x=1&y=2');
    const form = new FormData(); form.append('k', 'v');
    const shape = (it) => [Object.getPrototypeOf(Object.getPrototypeOf(it)) === iteratorProto, Object.prototype.toString.call(it), typeof it.next];
    const live = []; for (const [k] of params) { live.push(k); if (k === 'x') params.append('z', '3'); }
    const custom = new Headers({ a: 'no' }); custom[Symbol.iterator] = function* () { yield ['from', 'iterator']; };
    let wrongThis; try { headers.keys().next.call({}); } catch (e) { wrongThis = e.name; }
    return [shape(headers.entries()), shape(params.keys()), shape(form.values()), [...headers.keys()], live,
      [...new Headers(custom)], wrongThis];
  }`;
  const out = await ex.execute({ code });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, [
    [true, '[object Headers Iterator]', 'function'],
    [true, '[object URLSearchParams Iterator]', 'function'],
    [true, '[object FormData Iterator]', 'function'],
    ['a', 'b'], ['x', 'y', 'z'], [['from', 'iterator']], 'TypeError',
  ]);
  // Node 20 gives the same (its iterators are Web IDL's too).
  assert.deepEqual(JSON.parse(JSON.stringify(new Function(`return (${code})`)()())), out.result);
});
