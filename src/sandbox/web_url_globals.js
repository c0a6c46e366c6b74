// URL and URLSearchParams. Not in the snapshot: web_net.js (which is) defines accessors for these
// two names, and the first read of either (or of another network global, which uses them) has
// natives.loadScript compile this file (from a code cache after the process's first time) and
// call the function it evaluates to, once per isolate, with what web_net.js captured in the
// snapshot before any program could replace it. A group of its own because programs use URL far
// more than the rest of the network globals, and this is a tenth of their code. It installs the
// two globals and returns them, for web_net_globals.js.
(function installUrl(outer) {
  'use strict';
  const {
    natives, ReflectApply, StringCtor, TypeErrorCtor, SymbolIterator, SymbolToStringTag,
    pairIterators, install, platformBrands, usv,
  } = outer;

  // ---- URLSearchParams ---------------------------------------------------------------------
  const paramsIterator = pairIterators('URLSearchParams');
  class URLSearchParams {
    static { platformBrands[platformBrands.length] = ['URLSearchParams', (value) => #list in value]; }
    #list = [];
    #onChange = null;
    constructor(init = '') {
      // Web IDL's (sequence<sequence<USVString>> or record<USVString, USVString> or USVString):
      // an object (a function too) with an iterator is a sequence (a URLSearchParams is read
      // through its iterator, a replaced one included), another object a record; names and
      // values become well-formed strings.
      if (init !== null && (typeof init === 'object' || typeof init === 'function')) {
        if (typeof init[SymbolIterator] === 'function') {
          for (const pair of init) {
            const entry = [...pair];
            if (entry.length !== 2) throw new TypeErrorCtor('Each query pair must be an iterable [name, value] tuple');
            this.#list.push([usv(entry[0]), usv(entry[1])]);
          }
        } else {
          // A record: two keys that become the same string keep the first's place, the last value.
          const record = new Map();
          for (const key of Object.keys(init)) record.set(usv(key), usv(init[key]));
          for (const [key, value] of record) this.#list.push([key, value]);
        }
      } else {
        let text = StringCtor(init);
        if (text.startsWith('?')) text = text.slice(1);
        this.#parse(text);
      }
    }
    #parse(text) {
      const flat = natives.formParse(text);
      this.#list = [];
      for (let i = 0; i + 1 < flat.length; i += 2) this.#list.push([flat[i], flat[i + 1]]);
    }
    #update() {
      if (this.#onChange) this.#onChange(this.toString());
    }
    // Links this object to a URL whose search is `search` ("?a=1" or ""): `onChange(serialized)`
    // runs after each mutation.
    static link(params, search, onChange) {
      params.#parse(search.slice(1));
      params.#onChange = onChange;
    }
    static relink(params, search) {
      params.#parse(search.slice(1));
    }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([usv(name), usv(value)]); this.#update(); }
    delete(name, value) {
      const n = usv(name);
      const v = value === undefined ? undefined : usv(value);
      this.#list = this.#list.filter(([k, val]) => !(k === n && (v === undefined || val === v)));
      this.#update();
    }
    get(name) {
      const n = usv(name);
      const found = this.#list.find(([k]) => k === n);
      return found ? found[1] : null;
    }
    getAll(name) {
      const n = usv(name);
      return this.#list.filter(([k]) => k === n).map(([, v]) => v);
    }
    has(name, value) {
      const n = usv(name);
      const v = value === undefined ? undefined : usv(value);
      return this.#list.some(([k, val]) => k === n && (v === undefined || val === v));
    }
    set(name, value) {
      const n = usv(name);
      const v = usv(value);
      const index = this.#list.findIndex(([k]) => k === n);
      if (index === -1) {
        this.#list.push([n, v]);
      } else {
        this.#list[index][1] = v;
        this.#list = this.#list.filter(([k], i) => k !== n || i === index);
      }
      this.#update();
    }
    sort() {
      // Stable sort by UTF-16 code units of the name, as the standard says.
      this.#list = this.#list.map((e, i) => [e, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map(([e]) => e);
      this.#update();
    }
    forEach(callback, thisArg) {
      for (const [k, v] of this.#list) ReflectApply(callback, thisArg, [v, k, this]);
    }
    entries() { return paramsIterator('key+value', () => this.#list); }
    keys() { return paramsIterator('key', () => this.#list); }
    values() { return paramsIterator('value', () => this.#list); }
    [SymbolIterator]() { return this.entries(); }
    toString() {
      const flat = [];
      for (const [k, v] of this.#list) flat.push(k, v);
      return natives.formSerialize(flat);
    }
    get [SymbolToStringTag]() { return 'URLSearchParams'; }
  }
  const linkParams = URLSearchParams.link;
  const relinkParams = URLSearchParams.relink;
  delete URLSearchParams.link;
  delete URLSearchParams.relink;
  install('URLSearchParams', URLSearchParams);

  // ---- URL ---------------------------------------------------------------------------------
  // The components array from the natives: href, origin, protocol, username, password, host,
  // hostname, port, pathname, search, hash.
  class URL {
    static { platformBrands[platformBrands.length] = ['URL', (value) => #parts in value]; }
    #parts;
    #params = null;
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'URL': 1 argument required");
      const parts = natives.urlParse(StringCtor(url), base === undefined ? undefined : StringCtor(base));
      if (parts === null) throw new TypeErrorCtor(`Invalid URL: ${StringCtor(url)}`);
      this.#parts = parts;
    }
    static canParse(url, base) {
      return natives.urlParse(StringCtor(url), base === undefined ? undefined : StringCtor(base)) !== null;
    }
    static parse(url, base) {
      try { return new URL(url, base); } catch { return null; }
    }
    #set(part, value) {
      const parts = natives.urlSet(this.#parts[0], part, StringCtor(value));
      if (parts === null) {
        if (part === 'href') throw new TypeErrorCtor(`Invalid URL: ${StringCtor(value)}`);
        return;
      }
      this.#parts = parts;
      if (this.#params !== null && part !== 'searchParams') relinkParams(this.#params, this.#parts[9]);
    }
    get href() { return this.#parts[0]; }
    set href(v) { this.#set('href', v); }
    get origin() { return this.#parts[1]; }
    get protocol() { return this.#parts[2]; }
    set protocol(v) { this.#set('protocol', v); }
    get username() { return this.#parts[3]; }
    set username(v) { this.#set('username', v); }
    get password() { return this.#parts[4]; }
    set password(v) { this.#set('password', v); }
    get host() { return this.#parts[5]; }
    set host(v) { this.#set('host', v); }
    get hostname() { return this.#parts[6]; }
    set hostname(v) { this.#set('hostname', v); }
    get port() { return this.#parts[7]; }
    set port(v) { this.#set('port', v); }
    get pathname() { return this.#parts[8]; }
    set pathname(v) { this.#set('pathname', v); }
    get search() { return this.#parts[9]; }
    set search(v) { this.#set('search', v); }
    get hash() { return this.#parts[10]; }
    set hash(v) { this.#set('hash', v); }
    get searchParams() {
      if (this.#params === null) {
        this.#params = new URLSearchParams();
        linkParams(this.#params, this.#parts[9], (serialized) => {
          const parts = natives.urlSet(this.#parts[0], 'search', serialized);
          if (parts !== null) this.#parts = parts;
        });
      }
      return this.#params;
    }
    toString() { return this.#parts[0]; }
    toJSON() { return this.#parts[0]; }
    get [SymbolToStringTag]() { return 'URL'; }
  }
  install('URL', URL);

  return { URL, URLSearchParams };
})
