// Web Crypto beyond digest and random values: CryptoKey and crypto.subtle's importKey, exportKey,
// generateKey, sign, verify, encrypt and decrypt for HMAC (SHA-1/256/384/512), AES-GCM (every tag
// length; IVs of 64 to 512 bits), AES-CBC, AES-CTR and AES-KW (128-, 192- and 256-bit keys),
// RSA-OAEP, wrapKey and unwrapKey, ECDSA (P-256, P-384 and P-521, with any of the four hashes),
// Ed25519 and RSA (RSASSA-PKCS1-v1_5, RSA-PSS) signing and verification (private keys as PKCS #8
// or JWK; RSA keys of 1024 to 8192 bits, any PSS salt), key pairs of each (RSA of 1024 to 4096
// bits); ECDH (P-256, P-384, P-521) and X25519 agreement with their key pairs (deriveBits,
// deriveKey); deriveBits and deriveKey with PBKDF2 (bounded: see
// MAX_PBKDF2_WORK in src/limits.rs) and HKDF. The cryptography is native (ring; AWS-LC for
// RSA (web_rsa.rs); RustCrypto's p256, p384, p521 for ECDSA and ECDH, and
// x25519-dalek; web_natives.rs); this file normalizes algorithms, checks usages and formats keys,
// with the Web Crypto standard's errors.
// Not in the snapshot: web.js has natives.loadScript compile it on first use and calls the
// function below with intrinsics it captured before any program ran.
(function webCrypto(intrinsics) {
  'use strict';
  const {
    DOMException, TypeError: TypeErrorCtor, String: StringCtor, Number: NumberCtor, Uint8Array: Uint8ArrayCtor,
    freeze, isArray, bytesOf, codec, randomBytes, ReflectApply, hmac, aesGcm, aesBlock, verify, sign, privateKey, agree, ecPoint, rsa, derive, Symbol: SymbolCtor, SymbolIterator,
    SymbolToStringTag, MathCeil, Set: SetCtor, JSONStringify, JSONParse, utf8Encode, utf8Decode,
  } = intrinsics;

  const notSupported = (what) => new DOMException(`${what} is not supported`, 'NotSupportedError');
  const syntaxError = (what) => new DOMException(what, 'SyntaxError');
  // A key's usages are checked where the standard generates the key, after the promise is
  // returned: generateKey rejects with this error a microtask later than with the others (which
  // normalizing the algorithm raises before it returns). The last one made is remembered.
  let lastUsageError = null;
  const usageError = (what) => (lastUsageError = syntaxError(what));
  const dataError = (what) => new DOMException(what, 'DataError');
  const invalidAccess = (what) => new DOMException(what, 'InvalidAccessError');

  // A BufferSource argument's bytes, as a view. The natives copy what they are given before any
  // program code can run again, so data is not copied here; key material is (copyBytes).
  function viewOf(value, what) {
    if (value === undefined || value === null || (typeof value !== 'object' && typeof value !== 'function')) {
      throw new TypeErrorCtor(`${what} is not an ArrayBuffer or ArrayBufferView`);
    }
    return bytesOf(value);
  }
  function copyBytes(value, what) {
    return viewOf(value, what).slice();
  }
  function base64url(bytes) {
    return codec.bytesToBase64(bytes.slice()).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function fromBase64url(text, what) {
    if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw dataError(`${what} is not base64url`);
    return codec.base64ToBytes(text.replace(/-/g, '+').replace(/_/g, '/'));
  }
  function equalBytes(a, b) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  // ---- Algorithm normalization ------------------------------------------------------------------
  const AES = ['AES-GCM', 'AES-CBC', 'AES-CTR'];
  const RSA = ['RSASSA-PKCS1-v1_5', 'RSA-PSS'];
  const AGREEMENTS = ['ECDH', 'X25519'];
  const NAMES = ['HMAC', ...AES, 'AES-KW', 'ECDSA', 'Ed25519', ...RSA, 'RSA-OAEP', 'PBKDF2', 'HKDF', ...AGREEMENTS];
  const HASHES = ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512'];
  const KNOWN = ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP', 'ECDH', 'X25519', 'AES-CTR', 'AES-CBC', 'AES-KW',
    'HKDF', 'PBKDF2', 'SHA-1', 'SHA-256', 'SHA-384', 'SHA-512', ...NAMES];
  // The algorithms each operation knows (Web Crypto's registry, restricted to those above): any
  // other name is a NotSupportedError for that operation.
  const OPERATIONS = {
    sign: ['HMAC', 'ECDSA', 'Ed25519', ...RSA], verify: ['HMAC', 'ECDSA', 'Ed25519', ...RSA], importKey: NAMES,
    generateKey: ['HMAC', ...AES, 'AES-KW', 'ECDSA', 'Ed25519', ...RSA, 'RSA-OAEP', ...AGREEMENTS],
    encrypt: [...AES, 'RSA-OAEP'], decrypt: [...AES, 'RSA-OAEP'],
    wrapKey: ['AES-KW'], unwrapKey: ['AES-KW'],
    deriveBits: ['PBKDF2', 'HKDF', ...AGREEMENTS], deriveKey: ['PBKDF2', 'HKDF', ...AGREEMENTS],
    // What deriveKey may make, and the length it derives for each (get key length).
    derivedKey: ['HMAC', ...AES, 'AES-KW'],
  };
  function normalize(algorithm, operation) {
    let dict = algorithm;
    if (typeof algorithm === 'string') dict = { name: algorithm };
    else if (algorithm === null || typeof algorithm !== 'object') throw new TypeErrorCtor('The algorithm is not an object or a string');
    // name is read once (a getter may have effects: Web IDL converts the member once).
    const rawName = dict.name;
    if (rawName === undefined) throw new TypeErrorCtor("The algorithm's name is required");
    const given = StringCtor(rawName);
    const upper = given.toUpperCase();
    const name = KNOWN.find((known) => known.toUpperCase() === upper);
    if (name === undefined || !(OPERATIONS[operation] || []).includes(name)) throw notSupported(`Algorithm ${given} for ${operation}`);
    return { dict, name };
  }
  function normalizeHash(hash) {
    if (hash === undefined) throw new TypeErrorCtor('The algorithm\'s hash is required');
    const name = typeof hash === 'string' ? hash : hash === null || typeof hash !== 'object' ? undefined : hash.name;
    if (name === undefined) throw new TypeErrorCtor('The hash is not an algorithm');
    const upper = StringCtor(name).toUpperCase();
    const found = HASHES.find((h) => h === upper);
    if (found === undefined) throw notSupported(`Hash ${StringCtor(name)}`);
    return found;
  }
  function checkUsages(usages, allowed) {
    if (!isArray(usages) && (usages === null || typeof usages !== 'object' || typeof usages[SymbolIterator] !== 'function')) {
      throw new TypeErrorCtor('keyUsages is not a sequence');
    }
    const list = [...usages].map((u) => StringCtor(u));
    for (const usage of list) {
      if (!['encrypt', 'decrypt', 'sign', 'verify', 'deriveKey', 'deriveBits', 'wrapKey', 'unwrapKey'].includes(usage)) {
        throw new TypeErrorCtor(`'${usage}' is not a valid KeyUsage`);
      }
      if (!allowed.includes(usage)) throw usageError(`Cannot create a key with usage '${usage}'`);
    }
    return [...new SetCtor(list)];
  }
  const BLOCK_BITS = { 'SHA-1': 512, 'SHA-256': 512, 'SHA-384': 1024, 'SHA-512': 1024 };
  // Each NIST curve: the size of its scalars and coordinates, its OID, and the DER of an SPKI
  // before the public point (uncompressed).
  const CURVES = {
    'P-256': { size: 32, oid: '06082a8648ce3d030107', spki: '3059301306072a8648ce3d020106082a8648ce3d030107034200' },
    'P-384': { size: 48, oid: '06052b81040022', spki: '3076301006072a8648ce3d020106052b81040022036200' },
    'P-521': { size: 66, oid: '06052b81040023', spki: '30819b301006072a8648ce3d020106052b8104002303818600' },
  };
  const ED25519_SPKI = '302a300506032b6570032100';
  function hexBytes(hex) {
    const out = new Uint8ArrayCtor(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = NumberCtor.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    return out;
  }
  function concat(a, b) {
    const out = new Uint8ArrayCtor(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  }

  // ---- CryptoKey ----------------------------------------------------------------------------------
  const INTERNAL = SymbolCtor('internal');
  let keyParts;
  class CryptoKey {
    #type;
    #extractable;
    #algorithm;
    #usages;
    #material;
    constructor(key, type, extractable, algorithm, usages, material) {
      if (key !== INTERNAL) throw new TypeErrorCtor('Illegal constructor');
      this.#type = type;
      this.#extractable = extractable;
      this.#algorithm = freeze(algorithm);
      this.#usages = usages;
      this.#material = material;
    }
    get type() { return this.#type; }
    get extractable() { return this.#extractable; }
    get algorithm() { return this.#algorithm; }
    get usages() { return [...this.#usages]; }
    get [SymbolToStringTag]() { return 'CryptoKey'; }
    static {
      keyParts = (key) => {
        if (key === null || typeof key !== 'object' || !(#type in key)) throw new TypeErrorCtor('The key is not a CryptoKey');
        return { type: key.#type, extractable: key.#extractable, algorithm: key.#algorithm, usages: key.#usages, material: key.#material };
      };
    }
  }
  const makeKey = (type, extractable, algorithm, usages, material) =>
    new CryptoKey(INTERNAL, type, Boolean(extractable), algorithm, usages, material);
  function keyFor(key, name, usage) {
    const parts = keyParts(key);
    if (parts.algorithm.name !== name) throw invalidAccess(`The key is not a ${name} key`);
    if (!parts.usages.includes(usage)) throw invalidAccess(`The key does not allow '${usage}'`);
    return parts;
  }

  // ---- importKey ------------------------------------------------------------------------------------
  function jwkObject(keyData) {
    if (keyData === null || typeof keyData !== 'object' || bytesOfOrNull(keyData) !== null) throw new TypeErrorCtor('A JWK must be an object');
    return keyData;
  }
  function bytesOfOrNull(value) {
    try { return bytesOf(value); } catch { return null; }
  }
  function checkJwkCommon(jwk, kty, usages, extractable) {
    if (jwk.kty !== kty) throw dataError(`The JWK's kty must be '${kty}'`);
    if (jwk.ext === false && extractable) throw dataError('The JWK is not extractable');
    if (jwk.key_ops !== undefined) {
      if (!isArray(jwk.key_ops)) throw dataError('The JWK key_ops is not an array');
      for (const usage of usages) if (!jwk.key_ops.includes(usage)) throw dataError(`The JWK key_ops lacks '${usage}'`);
    }
    if (jwk.use !== undefined && usages.length > 0 && jwk.use !== (usages.some((u) => u === 'encrypt' || u === 'decrypt' || u === 'wrapKey' || u === 'unwrapKey') ? 'enc' : 'sig')) {
      throw dataError(`The JWK use '${jwk.use}' does not fit the usages`);
    }
  }
  function importHmac(format, keyData, dict, extractable, usages) {
    const hash = normalizeHash(dict.hash);
    const allowed = checkUsages(usages, ['sign', 'verify']);
    let bytes;
    if (format === 'raw') bytes = copyBytes(keyData, 'keyData');
    else if (format === 'jwk') {
      const jwk = jwkObject(keyData);
      checkJwkCommon(jwk, 'oct', allowed, extractable);
      bytes = fromBase64url(jwk.k, 'The JWK k');
      if (jwk.alg !== undefined && jwk.alg !== 'HS' + (hash === 'SHA-1' ? '1' : hash.slice(4))) throw dataError(`The JWK alg '${jwk.alg}' does not match ${hash}`);
    } else throw notSupported(`Format '${format}' for HMAC keys`);
    if (bytes.length === 0) throw dataError('An HMAC key cannot be empty');
    let length = bytes.length * 8;
    if (dict.length !== undefined) {
      const given = NumberCtor(dict.length);
      if (given > length || given <= length - 8) throw dataError('The HMAC key length does not match the key data');
      length = given;
    }
    if (allowed.length === 0) throw usageError('An HMAC key needs a usage');
    return makeKey('secret', extractable, { name: 'HMAC', hash: freeze({ name: hash }), length }, allowed, bytes);
  }
  // The JWK `alg` of an AES key: A128GCM, A256CBC, A128CTR, ...
  const aesAlg = (name, bits) => `A${bits}${name.slice(4)}`;
  const aesUsages = (name) => (name === 'AES-KW' ? ['wrapKey', 'unwrapKey'] : ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']);
  function importAes(name, format, keyData, extractable, usages) {
    const allowed = checkUsages(usages, aesUsages(name));
    let bytes;
    if (format === 'raw') bytes = copyBytes(keyData, 'keyData');
    else if (format === 'jwk') {
      const jwk = jwkObject(keyData);
      checkJwkCommon(jwk, 'oct', allowed, extractable);
      bytes = fromBase64url(jwk.k, 'The JWK k');
      if (jwk.alg !== undefined && jwk.alg !== aesAlg(name, bytes.length * 8)) throw dataError(`The JWK alg '${jwk.alg}' does not match the key`);
    } else throw notSupported(`Format '${format}' for AES keys`);
    if (bytes.length !== 16 && bytes.length !== 24 && bytes.length !== 32) throw dataError('An AES key must be 128, 192 or 256 bits');
    if (allowed.length === 0) throw usageError('An AES key needs a usage');
    return makeKey('secret', extractable, { name, length: bytes.length * 8 }, allowed, bytes);
  }
  // An ECDSA or ECDH key (`name`) on the dictionary's curve, in any of the four formats. An ECDH
  // public key reads as an ECDSA one; only its algorithm and usages (none) differ.
  function importEc(name, format, keyData, dict, extractable, usages) {
    const curveName = StringCtor(dict.namedCurve);
    const curve = CURVES[curveName];
    if (curve === undefined) throw notSupported(`Curve ${curveName}`);
    if (format === 'pkcs8' || (format === 'jwk' && jwkObject(keyData).d !== undefined)) {
      return importEcPrivate(name, format, keyData, curveName, extractable, usages);
    }
    let point;
    if (format === 'raw') point = copyBytes(keyData, 'keyData');
    else if (format === 'spki') {
      // SubjectPublicKeyInfo: the EC algorithm with this curve, then the point as a BIT STRING.
      const der = copyBytes(keyData, 'keyData');
      const info = derRead(der, 0, 0x30, 'The SPKI');
      const id = derRead(info.value, 0, 0x30, 'The SPKI');
      const bits = derRead(info.value, id.end, 0x03, 'The SPKI');
      if (info.end !== der.length || bits.end !== info.value.length || bits.value[0] !== 0) throw dataError('The SPKI is not DER');
      if (!equalBytes(id.value, ecAlgorithm(curve))) throw dataError(`The SPKI is not a ${curveName} public key`);
      point = bits.value.slice(1);
    } else if (format === 'jwk') {
      const jwk = jwkObject(keyData);
      checkJwkCommon(jwk, 'EC', name === 'ECDH' ? [] : usages, extractable);
      if (jwk.crv !== curveName) throw dataError(`The JWK crv is not ${curveName}`);
      const x = fromBase64url(jwk.x, 'The JWK x');
      const y = fromBase64url(jwk.y, 'The JWK y');
      if (x.length !== curve.size || y.length !== curve.size) throw dataError('The JWK coordinates have the wrong length');
      point = concat(new Uint8ArrayCtor([4]), concat(x, y));
    } else throw notSupported(`Format '${format}' for ECDSA public keys`);
    // A point of the curve, compressed or not (checked natively), kept uncompressed.
    const valid = ecPoint(curveName, point);
    if (valid === null) throw dataError(`The key is not a ${curveName} point`);
    point = new Uint8ArrayCtor(valid);
    if (name === 'ECDH') return agreementPublic('ECDH', curveName, point, extractable, usages);
    const allowed = checkUsages(usages, ['verify']);
    return makeKey('public', extractable, { name: 'ECDSA', namedCurve: curveName }, allowed, point);
  }
  // The 32 bytes of an Ed25519 or X25519 (`curve`) public key given as raw, SPKI (`spki`: the
  // DER before the key) or a JWK without `d`.
  function okpPublicKey(curve, spki, format, keyData, extractable, usages) {
    let bytes;
    if (format === 'raw') bytes = copyBytes(keyData, 'keyData');
    else if (format === 'spki') {
      const der = copyBytes(keyData, 'keyData');
      const prefix = hexBytes(spki);
      if (der.length !== prefix.length + 32 || !equalBytes(der.subarray(0, prefix.length), prefix)) throw dataError(`The SPKI is not an ${curve} public key`);
      bytes = der.slice(prefix.length);
    } else if (format === 'jwk') {
      const jwk = jwkObject(keyData);
      checkJwkCommon(jwk, 'OKP', usages, extractable);
      if (jwk.crv !== curve) throw dataError(`The JWK crv is not ${curve}`);
      bytes = fromBase64url(jwk.x, 'The JWK x');
    } else throw notSupported(`Format '${format}' for ${curve} public keys`);
    if (bytes.length !== 32) throw dataError(`An ${curve} public key is 32 bytes`);
    return bytes;
  }
  function importEd25519(format, keyData, extractable, usages) {
    if (format === 'pkcs8') {
      const der = copyBytes(keyData, 'keyData');
      pkcs8Key(der, hexBytes(ED25519_ALGORITHM), 'an Ed25519 private key');
      return privateKeyOf('Ed25519', der, extractable, { name: 'Ed25519' }, usages);
    }
    if (format === 'jwk' && jwkObject(keyData).d !== undefined) {
      const jwk = keyData;
      checkJwkCommon(jwk, 'OKP', usages, extractable);
      if (jwk.crv !== 'Ed25519') throw dataError('The JWK crv is not Ed25519');
      const seed = fromBase64url(jwk.d, 'The JWK d');
      const x = fromBase64url(jwk.x, 'The JWK x');
      if (seed.length !== 32) throw dataError('An Ed25519 private key is 32 bytes');
      const key = privateKeyOf('Ed25519', ed25519Pkcs8(seed), extractable, { name: 'Ed25519' }, usages);
      if (!equalBytes(keyParts(key).material.publicKey, x)) throw dataError('The JWK x is not the public key of d');
      return key;
    }
    const bytes = okpPublicKey('Ed25519', ED25519_SPKI, format, keyData, extractable, usages);
    const allowed = checkUsages(usages, ['verify']);
    return makeKey('public', extractable, { name: 'Ed25519' }, allowed, bytes);
  }

  // ---- RSA public keys: as much DER as they need ------------------------------------------------
  // A key's material is its RSAPublicKey (PKCS #1: SEQUENCE { n INTEGER, e INTEGER }), what the
  // native verifier reads; SPKI wraps it with the rsaEncryption algorithm identifier.
  const RSA_SPKI_ALGORITHM = '300d06092a864886f70d0101010500';
  // One DER element with `tag` at `at`: its contents and where it ends.
  function derRead(bytes, at, tag, what) {
    if (at + 2 > bytes.length || bytes[at] !== tag) throw dataError(`${what} is not DER`);
    let length = bytes[at + 1];
    let start = at + 2;
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 3 || start + count > bytes.length) throw dataError(`${what} is not DER`);
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i];
      start += count;
    }
    if (start + length > bytes.length) throw dataError(`${what} is not DER`);
    return { value: bytes.subarray(start, start + length), end: start + length };
  }
  function derWrite(tag, content) {
    const n = content.length;
    const head = n < 0x80 ? [tag, n] : n < 0x100 ? [tag, 0x81, n] : n < 0x10000 ? [tag, 0x82, n >> 8, n & 0xff] : [tag, 0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
    return concat(new Uint8ArrayCtor(head), content);
  }
  // An unsigned big-endian integer without its leading zero bytes.
  function unsigned(bytes) {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    return bytes.slice(i);
  }
  function derInteger(value) {
    return derWrite(0x02, value[0] & 0x80 ? concat(new Uint8ArrayCtor([0]), value) : value);
  }
  function rsaPublicKey(der) {
    const key = derRead(der, 0, 0x30, 'The RSA public key');
    if (key.end !== der.length) throw dataError('The RSA public key is not DER');
    const n = derRead(key.value, 0, 0x02, 'The RSA modulus');
    const e = derRead(key.value, n.end, 0x02, 'The RSA exponent');
    if (e.end !== key.value.length || n.value[0] & 0x80 || e.value[0] & 0x80) throw dataError('The RSA public key is not DER');
    return { n: unsigned(n.value), e: unsigned(e.value) };
  }
  function bitLength(bytes) {
    let top = bytes[0];
    let bits = 0;
    while (top > 0) { bits++; top >>= 1; }
    return (bytes.length - 1) * 8 + bits;
  }
  // The JWK `alg` of an RSA key: RS256, PS384, RSA-OAEP (SHA-1), RSA-OAEP-512, ...
  function rsaAlg(name, hash) {
    if (name === 'RSA-OAEP') return hash === 'SHA-1' ? 'RSA-OAEP' : `RSA-OAEP-${hash.slice(4)}`;
    return (name === 'RSA-PSS' ? 'PS' : 'RS') + (hash === 'SHA-1' ? '1' : hash.slice(4));
  }
  // The usages an RSA key of `name` may have, public or private.
  const rsaUsages = (name, type) => (name === 'RSA-OAEP' ? (type === 'public' ? ['encrypt', 'wrapKey'] : ['decrypt', 'unwrapKey'])
    : [type === 'public' ? 'verify' : 'sign']);
  function importRsa(name, format, keyData, dict, extractable, usages) {
    const hash = normalizeHash(dict.hash);
    if (format === 'pkcs8') {
      const der = copyBytes(keyData, 'keyData');
      return rsaPrivateKey(name, hash, der, rsaPrivateParts(pkcs8Key(der, hexBytes(RSA_ALGORITHM), 'an RSA private key')), extractable, usages);
    }
    if (format === 'jwk' && jwkObject(keyData).d !== undefined) {
      const jwk = keyData;
      checkJwkCommon(jwk, 'RSA', usages, extractable);
      if (jwk.alg !== undefined && jwk.alg !== rsaAlg(name, hash)) throw dataError(`The JWK alg '${jwk.alg}' does not match ${name} with ${hash}`);
      if (jwk.oth !== undefined) throw notSupported('RSA keys of more than two primes');
      const parts = {};
      for (const k of RSA_PRIVATE_PARTS) {
        if (jwk[k] === undefined) throw dataError(`The JWK lacks ${k}`);
        parts[k] = unsigned(fromBase64url(jwk[k], `The JWK ${k}`));
      }
      // RSAPrivateKey (PKCS #1): version 0, then the parts in this order.
      const rsaPrivate = derWrite(0x30, RSA_PRIVATE_PARTS.reduce((out, k) => concat(out, derInteger(parts[k])), hexBytes('020100')));
      return rsaPrivateKey(name, hash, pkcs8Of(hexBytes(RSA_ALGORITHM), rsaPrivate), parts, extractable, usages);
    }
    let n;
    let e;
    if (format === 'spki') {
      const der = copyBytes(keyData, 'keyData');
      const spki = derRead(der, 0, 0x30, 'The SPKI');
      const prefix = hexBytes(RSA_SPKI_ALGORITHM);
      if (spki.end !== der.length || !equalBytes(spki.value.subarray(0, prefix.length), prefix)) throw dataError('The SPKI is not an RSA public key');
      const bits = derRead(spki.value, prefix.length, 0x03, 'The SPKI');
      if (bits.end !== spki.value.length || bits.value[0] !== 0) throw dataError('The SPKI is not DER');
      ({ n, e } = rsaPublicKey(bits.value.subarray(1)));
    } else if (format === 'jwk') {
      const jwk = jwkObject(keyData);
      checkJwkCommon(jwk, 'RSA', usages, extractable);
      if (jwk.alg !== undefined && jwk.alg !== rsaAlg(name, hash)) throw dataError(`The JWK alg '${jwk.alg}' does not match ${name} with ${hash}`);
      n = unsigned(fromBase64url(jwk.n, 'The JWK n'));
      e = unsigned(fromBase64url(jwk.e, 'The JWK e'));
      if (n.length === 0 || e.length === 0) throw dataError('The JWK n and e cannot be empty');
    } else throw notSupported(`Format '${format}' for ${name} public keys`);
    const modulusLength = bitLength(n);
    // The native side's range (web_rsa.rs RSA_BITS, a bound on the CPU one operation takes).
    if (modulusLength < 1024 || modulusLength > 8192) throw notSupported(`An RSA key of ${modulusLength} bits (1024 to 8192 are)`);
    const allowed = checkUsages(usages, rsaUsages(name, 'public'));
    const material = derWrite(0x30, concat(derInteger(n), derInteger(e)));
    return makeKey('public', extractable, { name, modulusLength, publicExponent: e, hash: freeze({ name: hash }) }, allowed, material);
  }
  function exportRsa(format, algorithm, material, jwkBase) {
    if (format === 'spki') return derWrite(0x30, concat(hexBytes(RSA_SPKI_ALGORITHM), derWrite(0x03, concat(new Uint8ArrayCtor([0]), material)))).buffer;
    if (format === 'jwk') {
      const { n, e } = rsaPublicKey(material);
      return jwkBase({ kty: 'RSA', n: base64url(n), e: base64url(e), alg: rsaAlg(algorithm.name, algorithm.hash.name) });
    }
    return undefined;
  }
  // The native side's padding for RSA with this key's hash and the call's parameters:
  // `PKCS1:<hash>` or `PSS:<hash>:<saltLength>` (web_natives.rs rsa_padding).
  function rsaPadding(name, hash, dict) {
    if (name === 'RSASSA-PKCS1-v1_5') return `PKCS1:${hash}`;
    if (dict.saltLength === undefined) throw new TypeErrorCtor("RSA-PSS's saltLength is required");
    // [EnforceRange] unsigned long.
    const saltLength = NumberCtor(dict.saltLength);
    if (!NumberCtor.isFinite(saltLength) || saltLength < 0 || saltLength > 4294967295) throw new TypeErrorCtor("RSA-PSS's saltLength is out of range");
    return `PSS:${hash}:${saltLength - (saltLength % 1)}`;
  }

  // ---- Private keys: PKCS #8 for ECDSA, Ed25519 and RSA -------------------------------------------
  // A private key's material is `{ pkcs8, publicKey }`: its PKCS #8 DER (what the native signer
  // reads, and what exportKey('pkcs8') gives back) and its public half as a public key of the
  // same algorithm holds it (32 bytes, an RSAPublicKey), which the native side derives from the
  // private key, so a key whose parts do not belong together is refused at import. An ECDSA key
  // also holds its scalar, which is what it signs with (see ecPrivateOf).
  const EC_ALGORITHM = '06072a8648ce3d0201';
  const ED25519_ALGORITHM = '06032b6570';
  // rsaEncryption with its NULL parameters: RSA_SPKI_ALGORITHM without its SEQUENCE header.
  const RSA_ALGORITHM = RSA_SPKI_ALGORITHM.slice(4);
  const RSA_PRIVATE_PARTS = ['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi'];
  const ecAlgorithm = (curve) => hexBytes(EC_ALGORITHM + curve.oid);
  // PrivateKeyInfo (RFC 5208): version 0, the algorithm, the private key as an octet string.
  function pkcs8Of(algorithm, privateKeyDer) {
    return derWrite(0x30, concat(hexBytes('020100'), concat(derWrite(0x30, algorithm), derWrite(0x04, privateKeyDer))));
  }
  // A PKCS #8's algorithm identifier (its contents) and private key (the octet string's contents).
  function pkcs8Parts(der) {
    const info = derRead(der, 0, 0x30, 'The PKCS #8');
    if (info.end !== der.length) throw dataError('The PKCS #8 is not DER');
    const version = derRead(info.value, 0, 0x02, 'The PKCS #8');
    if (version.value.length !== 1 || version.value[0] > 1) throw dataError('The PKCS #8 version is not 0 or 1');
    const id = derRead(info.value, version.end, 0x30, 'The PKCS #8');
    return { algorithm: id.value, privateKey: derRead(info.value, id.end, 0x04, 'The PKCS #8').value };
  }
  // The private key of a PKCS #8 whose algorithm is `algorithm` (RSA's NULL parameters may be
  // left out, as some writers do).
  function pkcs8Key(der, algorithm, what) {
    const parts = pkcs8Parts(der);
    const withoutNull = equalBytes(algorithm.subarray(algorithm.length - 2), hexBytes('0500')) ? algorithm.subarray(0, algorithm.length - 2) : algorithm;
    if (!equalBytes(parts.algorithm, algorithm) && !equalBytes(parts.algorithm, withoutNull)) throw dataError(`The PKCS #8 is not ${what}`);
    return parts.privateKey;
  }
  function ed25519Pkcs8(seed) {
    return pkcs8Of(hexBytes(ED25519_ALGORITHM), derWrite(0x04, seed));
  }
  // A private CryptoKey of `kind` (the native signer's: Ed25519; ECDSA keys are ecPrivateOf's, RSA
  // keys rsaPrivateKey's).
  function privateKeyOf(kind, pkcs8, extractable, algorithm, usages) {
    const publicKey = privateKey(kind, pkcs8);
    if (publicKey === null) throw dataError(`The key data is not a valid ${algorithm.name} private key`);
    const allowed = checkUsages(usages, ['sign']);
    if (allowed.length === 0) throw usageError('A private key needs a usage');
    return makeKey('private', extractable, algorithm, allowed, { pkcs8, publicKey: new Uint8ArrayCtor(publicKey) });
  }
  // The integers of an RSAPrivateKey (PKCS #1), unsigned, by their JWK names.
  function rsaPrivateParts(der) {
    const key = derRead(der, 0, 0x30, 'The RSA private key');
    let at = derRead(key.value, 0, 0x02, 'The RSA private key').end;
    const parts = {};
    for (const k of RSA_PRIVATE_PARTS) {
      const read = derRead(key.value, at, 0x02, 'The RSA private key');
      parts[k] = unsigned(read.value);
      at = read.end;
    }
    return parts;
  }
  // An RSA private key from its PKCS #8 and its parts (rsaPrivateParts): the native side checks
  // that the parts belong together and gives the public half.
  function rsaPrivateKey(name, hash, pkcs8, parts, extractable, usages) {
    const modulusLength = bitLength(parts.n);
    // web_rsa.rs RSA_BITS, checked before any native work.
    if (modulusLength < 1024 || modulusLength > 8192) throw notSupported(`An RSA private key of ${modulusLength} bits (1024 to 8192 are)`);
    const publicKey = rsa('public', rsaPkcs1(pkcs8));
    if (publicKey === null) throw dataError(`The key data is not a valid ${name} private key`);
    const allowed = checkUsages(usages, rsaUsages(name, 'private'));
    if (allowed.length === 0) throw usageError('A private key needs a usage');
    return makeKey('private', extractable, { name, modulusLength, publicExponent: parts.e, hash: freeze({ name: hash }) }, allowed,
      { pkcs8, publicKey: new Uint8ArrayCtor(publicKey) });
  }
  // The RSAPrivateKey (PKCS #1) inside an RSA key's PKCS #8, what the native side reads.
  const rsaPkcs1 = (pkcs8) => pkcs8Key(pkcs8, hexBytes(RSA_ALGORITHM), 'an RSA private key');
  // generateKey for RSASSA-PKCS1-v1_5, RSA-PSS and RSA-OAEP: a native key of 1024 to 4096 bits
  // (web_rsa.rs RSA_GENERATED_BITS: past that generating takes seconds of CPU) with the given
  // public exponent (odd, at least 3, at most 32 bits: what the generator takes).
  function generateRsa(name, dict, extractable, keyUsages) {
    const hash = normalizeHash(dict.hash);
    if (dict.modulusLength === undefined || dict.publicExponent === undefined) throw new TypeErrorCtor("RSA's modulusLength and publicExponent are required");
    const modulusLength = NumberCtor(dict.modulusLength);
    const exponent = unsigned(copyBytes(dict.publicExponent, 'publicExponent'));
    const e = exponent.reduce((value, byte) => value * 256 + byte, 0);
    // What the generator takes (web_rsa.rs rsa_generate_pkcs1), checked with the parameters.
    if (exponent.length > 4 || e < 3 || e % 2 === 0) throw new DOMException('The RSA public exponent must be odd, at least 3 and at most 32 bits', 'OperationError');
    const requested = checkUsages(keyUsages, [...rsaUsages(name, 'public'), ...rsaUsages(name, 'private')]);
    const privateUsages = requested.filter((u) => rsaUsages(name, 'private').includes(u));
    if (privateUsages.length === 0) throw usageError('A private key needs a usage');
    if (!(modulusLength >= 1024 && modulusLength <= 4096)) throw notSupported(`Generating an RSA key of ${modulusLength} bits (1024 to 4096 are)`);
    const pkcs1 = rsa('generate', modulusLength, e);
    if (pkcs1 === null) throw new DOMException('The RSA key could not be generated', 'OperationError');
    const der = pkcs8Of(hexBytes(RSA_ALGORITHM), new Uint8ArrayCtor(pkcs1));
    const parts = rsaPrivateParts(rsaPkcs1(der));
    const privateKey = rsaPrivateKey(name, hash, der, parts, extractable, privateUsages);
    const publicUsages = requested.filter((u) => rsaUsages(name, 'public').includes(u));
    const publicKey = makeKey('public', true, keyParts(privateKey).algorithm, publicUsages, keyParts(privateKey).material.publicKey.slice());
    return { publicKey, privateKey };
  }
  // exportKey of a private key: PKCS #8 as held, or a JWK with the private parts.
  function exportPrivate(format, algorithm, material, jwkBase) {
    if (format === 'pkcs8') return material.pkcs8.slice().buffer;
    if (format !== 'jwk') throw invalidAccess(`A private key cannot be exported as '${format}'`);
    const inner = pkcs8Parts(material.pkcs8).privateKey;
    if (algorithm.name === 'Ed25519') {
      return jwkBase({ kty: 'OKP', crv: 'Ed25519', x: base64url(material.publicKey), d: base64url(derRead(inner, 0, 0x04, 'The Ed25519 private key').value), alg: 'Ed25519' });
    }
    const parts = rsaPrivateParts(inner);
    const jwk = { kty: 'RSA', alg: rsaAlg(algorithm.name, algorithm.hash.name) };
    for (const k of RSA_PRIVATE_PARTS) jwk[k] = base64url(parts[k]);
    return jwkBase(jwk);
  }

  // A PBKDF2 or HKDF key: raw secret bytes, never extractable, for deriving only.
  function importKdf(name, format, keyData, extractable, usages) {
    if (format !== 'raw') throw notSupported(`Format '${format}' for ${name} keys`);
    if (extractable) throw syntaxError(`A ${name} key cannot be extractable`);
    const allowed = checkUsages(usages, ['deriveKey', 'deriveBits']);
    if (allowed.length === 0) throw usageError(`A ${name} key needs a usage`);
    return makeKey('secret', false, { name }, allowed, copyBytes(keyData, 'keyData'));
  }

  // ---- ECDH and X25519 keys ------------------------------------------------------------------------
  // A public key's material is its point (uncompressed, for ECDH) or its 32 bytes (X25519), as an
  // ECDSA or Ed25519 public key's; a private key's is `{ pkcs8, publicKey, scalar }`, the scalar
  // being what the native agreement takes. A public key has no usages (it is only ever the other
  // side of deriveBits); a private key derives.
  const X25519_ALGORITHM = '06032b656e';
  const X25519_SPKI = '302a300506032b656e032100';
  // A private key of ECDH, X25519 or ECDSA (whose material has the same shape: ECDSA signs with
  // the scalar the agreement multiplies by).
  function ecPrivateOf(name, curveName, scalar, pkcs8, extractable, usages, expectedPublic) {
    const publicKey = agree(curveName, scalar);
    if (publicKey === null) throw dataError(`The key data is not a valid ${name} private key`);
    const point = new Uint8ArrayCtor(publicKey);
    if (expectedPublic !== undefined && !equalBytes(point, expectedPublic)) throw dataError(`The public part of the ${name} key does not belong to its private key`);
    const allowed = checkUsages(usages, name === 'ECDSA' ? ['sign'] : ['deriveKey', 'deriveBits']);
    if (allowed.length === 0) throw usageError('A private key needs a usage');
    const algorithm = name === 'X25519' ? { name } : { name, namedCurve: curveName };
    return makeKey('private', extractable, algorithm, allowed, { pkcs8, publicKey: point, scalar });
  }
  function agreementPublic(name, curveName, bytes, extractable, usages) {
    checkUsages(usages, []);
    const algorithm = name === 'ECDH' ? { name, namedCurve: curveName } : { name };
    return makeKey('public', extractable, algorithm, [], bytes);
  }
  // The ECPrivateKey (RFC 5915) of `d` on `curve`, with its public point.
  function ecPrivateKey(d, point) {
    return derWrite(0x30, concat(hexBytes('020101'), concat(derWrite(0x04, d), derWrite(0xa1, derWrite(0x03, concat(new Uint8ArrayCtor([0]), point))))));
  }
  // An ECDSA or ECDH private key on `curveName` given as PKCS #8 or as a JWK with `d`.
  function importEcPrivate(name, format, keyData, curveName, extractable, usages) {
    const curve = CURVES[curveName];
    if (format === 'pkcs8') {
      const der = copyBytes(keyData, 'keyData');
      const ec = derRead(pkcs8Key(der, ecAlgorithm(curve), `an ${name} ${curveName} private key`), 0, 0x30, 'The EC private key');
      const version = derRead(ec.value, 0, 0x02, 'The EC private key');
      const d = derRead(ec.value, version.end, 0x04, 'The EC private key');
      // The optional [0] parameters and [1] public key: a public key given must be the scalar's.
      let at = d.end;
      let expected;
      while (at < ec.value.length) {
        const tag = ec.value[at];
        const field = derRead(ec.value, at, tag, 'The EC private key');
        if (tag === 0xa1) {
          const point = ecPoint(curveName, derRead(field.value, 0, 0x03, 'The EC public key').value.subarray(1));
          if (point === null) throw dataError(`The public part of the ${name} key is not a ${curveName} point`);
          expected = new Uint8ArrayCtor(point);
        }
        at = field.end;
      }
      if (d.value.length !== curve.size) throw dataError(`The ${curveName} private key has the wrong length`);
      return ecPrivateOf(name, curveName, d.value.slice(), der, extractable, usages, expected);
    }
    const jwk = keyData;
    checkJwkCommon(jwk, 'EC', usages, extractable);
    if (jwk.crv !== curveName) throw dataError(`The JWK crv is not ${curveName}`);
    const [d, x, y] = ['d', 'x', 'y'].map((k) => fromBase64url(jwk[k], `The JWK ${k}`));
    if (d.length !== curve.size || x.length !== curve.size || y.length !== curve.size) throw dataError('The JWK coordinates have the wrong length');
    const point = concat(new Uint8ArrayCtor([4]), concat(x, y));
    return ecPrivateOf(name, curveName, d, pkcs8Of(ecAlgorithm(curve), ecPrivateKey(d, point)), extractable, usages, point);
  }
  function x25519Pkcs8(secret) {
    return pkcs8Of(hexBytes(X25519_ALGORITHM), derWrite(0x04, secret));
  }
  function importX25519(format, keyData, extractable, usages) {
    if (format === 'pkcs8') {
      const der = copyBytes(keyData, 'keyData');
      const secret = derRead(pkcs8Key(der, hexBytes(X25519_ALGORITHM), 'an X25519 private key'), 0, 0x04, 'The X25519 private key').value;
      if (secret.length !== 32) throw dataError('An X25519 private key is 32 bytes');
      return ecPrivateOf('X25519', 'X25519', secret.slice(), der, extractable, usages);
    }
    if (format === 'jwk' && jwkObject(keyData).d !== undefined) {
      const jwk = keyData;
      checkJwkCommon(jwk, 'OKP', usages, extractable);
      if (jwk.crv !== 'X25519') throw dataError('The JWK crv is not X25519');
      const secret = fromBase64url(jwk.d, 'The JWK d');
      if (secret.length !== 32) throw dataError('An X25519 private key is 32 bytes');
      return ecPrivateOf('X25519', 'X25519', secret, x25519Pkcs8(secret), extractable, usages, fromBase64url(jwk.x, 'The JWK x'));
    }
    const bytes = okpPublicKey('X25519', X25519_SPKI, format, keyData, extractable, usages);
    return agreementPublic('X25519', 'X25519', bytes, extractable, usages);
  }
  function exportAgreement(format, type, algorithm, material, jwkBase) {
    if (type === 'private') {
      if (format === 'pkcs8') return material.pkcs8.slice().buffer;
      if (format !== 'jwk') throw invalidAccess(`A private key cannot be exported as '${format}'`);
      if (algorithm.name === 'X25519') return jwkBase({ kty: 'OKP', crv: 'X25519', x: base64url(material.publicKey), d: base64url(material.scalar) });
      const size = CURVES[algorithm.namedCurve].size;
      return jwkBase({ kty: 'EC', crv: algorithm.namedCurve, x: base64url(material.publicKey.subarray(1, 1 + size)), y: base64url(material.publicKey.subarray(1 + size)), d: base64url(material.scalar) });
    }
    if (format === 'raw') return material.slice().buffer;
    if (algorithm.name === 'X25519') {
      if (format === 'spki') return concat(hexBytes(X25519_SPKI), material).buffer;
      if (format === 'jwk') return jwkBase({ kty: 'OKP', crv: 'X25519', x: base64url(material) });
    } else {
      const curve = CURVES[algorithm.namedCurve];
      if (format === 'spki') return concat(hexBytes(curve.spki), material).buffer;
      if (format === 'jwk') return jwkBase({ kty: 'EC', crv: algorithm.namedCurve, x: base64url(material.subarray(1, 1 + curve.size)), y: base64url(material.subarray(1 + curve.size)) });
    }
    throw notSupported(`Exporting a ${algorithm.name} key as '${format}'`);
  }
  // A random private scalar of a NIST curve: below its order but for a chance under 2^-32 (P-521's
  // top byte keeps only the bit its 521 bits leave), drawn again then.
  function randomScalar(curveName) {
    let scalar;
    do {
      scalar = randomBytes(CURVES[curveName].size);
      if (curveName === 'P-521') scalar[0] &= 1;
    } while (agree(curveName, scalar) === null);
    return scalar;
  }
  function generateAgreement(name, dict, extractable, keyUsages) {
    let curveName = 'X25519';
    let scalar;
    let pkcs8;
    if (name === 'ECDH') {
      curveName = StringCtor(dict.namedCurve);
      const curve = CURVES[curveName];
      if (curve === undefined) throw notSupported(`Curve ${curveName}`);
      scalar = randomScalar(curveName);
      pkcs8 = pkcs8Of(ecAlgorithm(curve), ecPrivateKey(scalar, new Uint8ArrayCtor(agree(curveName, scalar))));
    } else {
      scalar = randomBytes(32);
      pkcs8 = x25519Pkcs8(scalar);
    }
    const requested = checkUsages(keyUsages, ['deriveKey', 'deriveBits']);
    const privateKey = ecPrivateOf(name, curveName, scalar, pkcs8, extractable, requested);
    const publicKey = agreementPublic(name, curveName, keyParts(privateKey).material.publicKey.slice(), true, []);
    return { publicKey, privateKey };
  }
  // The secret an ECDH or X25519 deriveBits gives, cut to `length` bits (all of it for null).
  function agreeWith(name, dict, baseKey, usage, length) {
    const other = dict.public;
    let otherParts;
    try { otherParts = keyParts(other); } catch { throw new TypeErrorCtor("The algorithm's public member is not a CryptoKey"); }
    const parts = keyFor(baseKey, name, usage);
    if (parts.type !== 'private') throw invalidAccess(`${name} derives from a private key`);
    if (otherParts.type !== 'public') throw invalidAccess(`The ${name} public member is not a public key`);
    if (otherParts.algorithm.name !== name) throw invalidAccess(`The ${name} public member is not an ${name} key`);
    if (name === 'ECDH' && otherParts.algorithm.namedCurve !== parts.algorithm.namedCurve) throw invalidAccess('The ECDH keys are on different curves');
    const curveName = name === 'ECDH' ? parts.algorithm.namedCurve : 'X25519';
    const secret = agree(curveName, parts.material.scalar, otherParts.material);
    if (secret === null) throw new DOMException(`The ${name} agreement failed`, 'OperationError');
    if (length === null || length === undefined) return secret;
    const bits = NumberCtor(length);
    if (!(bits >= 0) || bits > secret.byteLength * 8) throw new DOMException(`${name} gives ${secret.byteLength * 8} bits, not ${bits}`, 'OperationError');
    const out = new Uint8ArrayCtor(secret).slice(0, MathCeil(bits / 8));
    if (bits % 8 !== 0) out[out.length - 1] &= (0xff << (8 - (bits % 8))) & 0xff;
    return out.buffer;
  }

  // ---- deriveBits / deriveKey -------------------------------------------------------------------
  function optionalBytes(value, what) {
    if (value === undefined) throw new TypeErrorCtor(`The algorithm's ${what} is required`);
    return copyBytes(value, what);
  }
  // A PBKDF2 or HKDF algorithm's parameters, normalized (its required members missing: a
  // TypeError, before the key is looked at, as the standard orders it).
  function kdfParams(name, dict) {
    const hash = normalizeHash(dict.hash);
    const salt = optionalBytes(dict.salt, 'salt');
    if (name === 'HKDF') return { name, hash, salt, info: optionalBytes(dict.info, 'info') };
    if (dict.iterations === undefined) throw new TypeErrorCtor("The algorithm's iterations is required");
    return { name, hash, salt, iterations: NumberCtor(dict.iterations) };
  }
  // `length` bits derived with `params` (kdfParams) from `parts` (a PBKDF2 or HKDF key).
  function deriveWith(params, parts, length) {
    const { name, hash, salt } = params;
    if (length === null || length === undefined) throw new DOMException(`${name} needs a length`, 'OperationError');
    const bits = NumberCtor(length);
    if (!(bits >= 0) || bits % 8 !== 0 || bits > 0xffffffff) throw new DOMException('The length must be a multiple of 8 bits', 'OperationError');
    let out;
    if (name === 'PBKDF2') {
      const { iterations } = params;
      if (!(iterations >= 1) || iterations !== MathCeil(iterations)) throw new DOMException('PBKDF2 needs at least one iteration', 'OperationError');
      if (bits === 0) throw new DOMException('PBKDF2 cannot derive zero bits', 'OperationError');
      out = derive('PBKDF2', hash, parts.material, salt, iterations, bits / 8);
      if (typeof out === 'number') {
        throw new DOMException(`PBKDF2 is bounded in this sandbox at ${out} iterations times the output's ${hash} blocks`, 'OperationError');
      }
    } else {
      out = derive('HKDF', hash, parts.material, salt, params.info, bits / 8);
    }
    if (out === null) throw new DOMException(`${name} cannot derive ${bits} bits`, 'OperationError');
    return out;
  }
  // The bits deriveKey derives for `derivedKeyType` (an HMAC or AES-GCM algorithm).
  function derivedLength(derivedKeyType) {
    const { dict, name } = normalize(derivedKeyType, 'derivedKey');
    if (AES.includes(name) || name === 'AES-KW') {
      const length = NumberCtor(dict.length);
      if (length !== 128 && length !== 192 && length !== 256) throw new DOMException('An AES key must be 128, 192 or 256 bits', 'OperationError');
      return length;
    }
    const hash = normalizeHash(dict.hash);
    const length = dict.length === undefined ? BLOCK_BITS[hash] : NumberCtor(dict.length);
    if (!(length > 0)) throw new TypeErrorCtor('The HMAC key length must be positive');
    return length;
  }

  // ---- exportKey --------------------------------------------------------------------------------------
  function exportKey(format, key) {
    const parts = keyParts(key);
    // An algorithm without export comes first, whether or not the key is extractable.
    if (parts.algorithm.name === 'PBKDF2' || parts.algorithm.name === 'HKDF') throw notSupported(`Exporting a ${parts.algorithm.name} key`);
    if (!parts.extractable) throw invalidAccess('The key is not extractable');
    const { algorithm, material } = parts;
    const jwkBase = (extra) => ({ ...extra, key_ops: [...parts.usages], ext: true });
    // An ECDSA private key's material is an ECDH one's (see ecPrivateOf).
    if (AGREEMENTS.includes(algorithm.name) || (algorithm.name === 'ECDSA' && parts.type === 'private')) {
      return exportAgreement(format, parts.type, algorithm, material, jwkBase);
    }
    if (parts.type === 'private') return exportPrivate(format, algorithm, material, jwkBase);
    if (parts.type === 'public' && format === 'pkcs8') throw invalidAccess("A public key cannot be exported as 'pkcs8'");
    switch (algorithm.name) {
      case 'HMAC':
      case 'AES-GCM':
      case 'AES-CBC':
      case 'AES-CTR':
      case 'AES-KW':
        if (format === 'raw') return material.slice().buffer;
        if (format === 'jwk') {
          const alg = algorithm.name === 'HMAC' ? 'HS' + (algorithm.hash.name === 'SHA-1' ? '1' : algorithm.hash.name.slice(4)) : aesAlg(algorithm.name, algorithm.length);
          return jwkBase({ kty: 'oct', k: base64url(material), alg });
        }
        break;
      case 'ECDSA': {
        const curve = CURVES[algorithm.namedCurve];
        if (format === 'raw') return material.slice().buffer;
        if (format === 'spki') return concat(hexBytes(curve.spki), material).buffer;
        if (format === 'jwk') {
          return jwkBase({ kty: 'EC', crv: algorithm.namedCurve, x: base64url(material.subarray(1, 1 + curve.size)), y: base64url(material.subarray(1 + curve.size)) });
        }
        break;
      }
      case 'Ed25519':
        if (format === 'raw') return material.slice().buffer;
        if (format === 'spki') return concat(hexBytes(ED25519_SPKI), material).buffer;
        if (format === 'jwk') return jwkBase({ kty: 'OKP', crv: 'Ed25519', x: base64url(material), alg: 'Ed25519' });
        break;
      case 'RSASSA-PKCS1-v1_5':
      case 'RSA-PSS':
      case 'RSA-OAEP': {
        const exported = exportRsa(format, algorithm, material, jwkBase);
        if (exported !== undefined) return exported;
        break;
      }
      default:
        break;
    }
    throw notSupported(`Exporting a ${algorithm.name} key as '${format}'`);
  }

  const FORMATS = ['raw', 'spki', 'pkcs8', 'jwk'];
  function format(value) {
    const text = StringCtor(value);
    if (!FORMATS.includes(text)) throw new TypeErrorCtor(`'${text}' is not a valid KeyFormat`);
    return text;
  }

  const subtle = {
    importKey(keyFormat, keyData, algorithm, extractable, keyUsages) {
      if (arguments.length < 5) throw new TypeErrorCtor("Failed to execute 'importKey' on 'SubtleCrypto': 5 arguments required");
      const fmt = format(keyFormat);
      const { dict, name } = normalize(algorithm, 'importKey');
      switch (name) {
        case 'HMAC': return importHmac(fmt, keyData, dict, Boolean(extractable), keyUsages);
        case 'AES-GCM':
        case 'AES-CBC':
        case 'AES-CTR':
        case 'AES-KW': return importAes(name, fmt, keyData, Boolean(extractable), keyUsages);
        case 'ECDSA': return importEc('ECDSA', fmt, keyData, dict, Boolean(extractable), keyUsages);
        case 'RSASSA-PKCS1-v1_5':
        case 'RSA-PSS':
        case 'RSA-OAEP': return importRsa(name, fmt, keyData, dict, Boolean(extractable), keyUsages);
        case 'PBKDF2':
        case 'HKDF': return importKdf(name, fmt, keyData, Boolean(extractable), keyUsages);
        case 'ECDH': return importEc('ECDH', fmt, keyData, dict, Boolean(extractable), keyUsages);
        case 'X25519': return importX25519(fmt, keyData, Boolean(extractable), keyUsages);
        default: return importEd25519(fmt, keyData, Boolean(extractable), keyUsages);
      }
    },
    exportKey(keyFormat, key) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to execute 'exportKey' on 'SubtleCrypto': 2 arguments required");
      return exportKey(format(keyFormat), key);
    },
    generateKey(algorithm, extractable, keyUsages) {
      return generateKeyNow(arguments.length, algorithm, extractable, keyUsages);
    },
    sign(algorithm, key, data) {
      if (arguments.length < 3) throw new TypeErrorCtor("Failed to execute 'sign' on 'SubtleCrypto': 3 arguments required");
      const { dict, name } = normalize(algorithm, 'sign');
      const bytes = viewOf(data, 'data');
      const parts = keyFor(key, name, 'sign');
      if (name === 'HMAC') return hmac(parts.algorithm.hash.name, parts.material, bytes);
      let signature;
      if (name === 'ECDSA') {
        signature = sign(`ECDSA:${parts.algorithm.namedCurve}`, normalizeHash(dict.hash), parts.material.scalar, bytes);
      } else if (name === 'Ed25519') {
        signature = sign('Ed25519', '', parts.material.pkcs8, bytes);
      } else {
        signature = sign('RSA', rsaPadding(name, parts.algorithm.hash.name, dict), rsaPkcs1(parts.material.pkcs8), bytes);
      }
      if (signature === null) throw new DOMException('The signature could not be made', 'OperationError');
      return signature;
    },
    verify(algorithm, key, signature, data) {
      if (arguments.length < 4) throw new TypeErrorCtor("Failed to execute 'verify' on 'SubtleCrypto': 4 arguments required");
      const { dict, name } = normalize(algorithm, 'verify');
      const sig = viewOf(signature, 'signature');
      const bytes = viewOf(data, 'data');
      const parts = keyFor(key, name, 'verify');
      if (name === 'HMAC') return hmac(parts.algorithm.hash.name, parts.material, bytes, sig);
      if (name === 'ECDSA') return verify(`ECDSA:${parts.algorithm.namedCurve}:${normalizeHash(dict.hash)}`, parts.material, bytes, sig);
      if (name === 'Ed25519') return verify('Ed25519', parts.material, bytes, sig);
      if (RSA.includes(name)) return verify(`RSA:${rsaPadding(name, parts.algorithm.hash.name, dict)}`, parts.material, bytes, sig);
      throw notSupported(`Verifying with ${name}`);
    },
    encrypt(algorithm, key, data) {
      return aes(true, algorithm, key, data, arguments.length);
    },
    decrypt(algorithm, key, data) {
      return aes(false, algorithm, key, data, arguments.length);
    },
    deriveBits(algorithm, baseKey, length) {
      if (arguments.length < 2) throw new TypeErrorCtor("Failed to execute 'deriveBits' on 'SubtleCrypto': 2 arguments required");
      const { dict, name } = normalize(algorithm, 'deriveBits');
      if (AGREEMENTS.includes(name)) return agreeWith(name, dict, baseKey, 'deriveBits', length);
      const params = kdfParams(name, dict);
      return deriveWith(params, keyFor(baseKey, name, 'deriveBits'), length);
    },
    deriveKey(algorithm, baseKey, derivedKeyType, extractable, keyUsages) {
      if (arguments.length < 5) throw new TypeErrorCtor("Failed to execute 'deriveKey' on 'SubtleCrypto': 5 arguments required");
      const { dict, name } = normalize(algorithm, 'deriveKey');
      if (AGREEMENTS.includes(name)) {
        const length = derivedLength(derivedKeyType);
        const bits = agreeWith(name, dict, baseKey, 'deriveKey', MathCeil(length / 8) * 8);
        return subtle.importKey('raw', bits, derivedKeyType, extractable, keyUsages);
      }
      const params = kdfParams(name, dict);
      const length = derivedLength(derivedKeyType);
      const parts = keyFor(baseKey, name, 'deriveKey');
      const bits = deriveWith(params, parts, MathCeil(length / 8) * 8);
      return subtle.importKey('raw', bits, derivedKeyType, extractable, keyUsages);
    },
    wrapKey(keyFormat, key, wrappingKey, wrapAlgorithm) {
      if (arguments.length < 4) throw new TypeErrorCtor("Failed to execute 'wrapKey' on 'SubtleCrypto': 4 arguments required");
      const fmt = format(keyFormat);
      const { dict, name } = wrapping(wrapAlgorithm, 'wrapKey');
      const parts = keyFor(wrappingKey, name, 'wrapKey');
      const exported = exportKey(fmt, key);
      checkAesParams(name, dict);
      let bytes;
      if (fmt === 'jwk') {
        // AES-KW wraps a multiple of 8 bytes: the JWK's JSON text is padded with spaces (JSON
        // white space, as the standard's note allows and Node does) up to the next one.
        const text = JSONStringify(exported);
        bytes = utf8Encode(name === 'AES-KW' ? text + ' '.repeat((8 - (utf8Encode(text).length % 8)) % 8) : text);
      } else {
        bytes = new Uint8ArrayCtor(exported);
      }
      if (name === 'AES-KW') return kw(true, parts, bytes);
      return cipherWith(true, name, dict, parts, bytes);
    },
    unwrapKey(keyFormat, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, keyUsages) {
      if (arguments.length < 7) throw new TypeErrorCtor("Failed to execute 'unwrapKey' on 'SubtleCrypto': 7 arguments required");
      const fmt = format(keyFormat);
      const { dict, name } = wrapping(unwrapAlgorithm, 'unwrapKey');
      const wrapped = viewOf(wrappedKey, 'wrappedKey');
      const parts = keyFor(unwrappingKey, name, 'unwrapKey');
      checkAesParams(name, dict);
      let bytes;
      if (name === 'AES-KW') bytes = kw(false, parts, wrapped);
      else bytes = cipherWith(false, name, dict, parts, wrapped);
      let keyData = bytes;
      if (fmt === 'jwk') {
        try {
          keyData = JSONParse(utf8Decode(new Uint8ArrayCtor(bytes)));
        } catch {
          throw dataError('The unwrapped key is not a JWK');
        }
      }
      return subtle.importKey(fmt, keyData, unwrappedKeyAlgorithm, extractable, keyUsages);
    },
  };
  // The standard converts and normalizes a method's arguments before it returns the promise
  // (those errors reject it at once) and does the work in parallel, settling the promise from a
  // queued task: a result, and an operation's own errors such as a usage the key cannot have
  // (usageError), come a microtask after the call at the earliest. The methods above compute
  // synchronously; these wrappers give their promises that timing.
  async function resolveLater(value) {
    await undefined;
    return value;
  }
  async function rejectLater(error) {
    await undefined;
    throw error;
  }
  async function rejectNow(error) {
    throw error;
  }
  for (const name of ['importKey', 'exportKey', 'generateKey', 'sign', 'verify', 'encrypt', 'decrypt', 'deriveBits',
    'deriveKey', 'wrapKey', 'unwrapKey']) {
    const method = subtle[name];
    subtle[name] = {
      [name](...args) {
        let result;
        try {
          result = ReflectApply(method, this, args);
        } catch (error) {
          return error === lastUsageError ? rejectLater(error) : rejectNow(error);
        }
        return resolveLater(result);
      },
    }[name];
  }
  // generateKey's work, synchronous: a key or pair, or the error to reject with.
  function generateKeyNow(argc, algorithm, extractable, keyUsages) {
    if (argc < 3) throw new TypeErrorCtor("Failed to execute 'generateKey' on 'SubtleCrypto': 3 arguments required");
    const { dict, name } = normalize(algorithm, 'generateKey');
    if (name === 'HMAC') {
      const hash = normalizeHash(dict.hash);
      const length = dict.length === undefined ? BLOCK_BITS[hash] : NumberCtor(dict.length);
      if (!(length > 0) || length > 65536 * 8) throw new DOMException('The HMAC key length is not supported', 'OperationError');
      const bytes = randomBytes(MathCeil(length / 8));
      const allowed = checkUsages(keyUsages, ['sign', 'verify']);
      if (allowed.length === 0) throw usageError('An HMAC key needs a usage');
      return makeKey('secret', extractable, { name: 'HMAC', hash: freeze({ name: hash }), length }, allowed, bytes);
    }
    if (AES.includes(name) || name === 'AES-KW') {
      const length = NumberCtor(dict.length);
      if (length !== 128 && length !== 192 && length !== 256) throw new DOMException('An AES key must be 128, 192 or 256 bits', 'OperationError');
      const allowed = checkUsages(keyUsages, aesUsages(name));
      if (allowed.length === 0) throw usageError('An AES key needs a usage');
      return makeKey('secret', extractable, { name, length }, allowed, randomBytes(length / 8));
    }
    if (AGREEMENTS.includes(name)) return generateAgreement(name, dict, Boolean(extractable), keyUsages);
    if (RSA.includes(name) || name === 'RSA-OAEP') return generateRsa(name, dict, Boolean(extractable), keyUsages);
    if (name === 'ECDSA' || name === 'Ed25519') {
      const curveName = name === 'ECDSA' ? StringCtor(dict.namedCurve) : undefined;
      if (name === 'ECDSA' && CURVES[curveName] === undefined) throw notSupported(`Curve ${curveName}`);
      const algorithmOf = name === 'ECDSA' ? { name, namedCurve: curveName } : { name };
      const requested = checkUsages(keyUsages, ['sign', 'verify']);
      const privateUsages = requested.filter((u) => u === 'sign');
      if (privateUsages.length === 0) throw usageError('A private key needs a usage');
      let secret;
      if (name === 'ECDSA') {
        const scalar = randomScalar(curveName);
        const point = new Uint8ArrayCtor(agree(curveName, scalar));
        secret = ecPrivateOf(name, curveName, scalar, pkcs8Of(ecAlgorithm(CURVES[curveName]), ecPrivateKey(scalar, point)), extractable, privateUsages);
      } else {
        secret = privateKeyOf('Ed25519', ed25519Pkcs8(randomBytes(32)), extractable, algorithmOf, privateUsages);
      }
      const publicKey = makeKey('public', true, algorithmOf, requested.filter((u) => u === 'verify'), keyParts(secret).material.publicKey.slice());
      return { publicKey, privateKey: secret };
    }
    throw notSupported(`Generating ${name} keys`);
  }
  // wrapKey's algorithm (AES-KW), or else encrypt's (the AES modes, RSA-OAEP), as the standard tries them.
  function wrapping(algorithm, operation) {
    try {
      return normalize(algorithm, operation);
    } catch (error) {
      if (!(error instanceof DOMException) || error.name !== 'NotSupportedError') throw error;
      return normalize(algorithm, operation === 'wrapKey' ? 'encrypt' : 'decrypt');
    }
  }
  function kw(wrap, parts, bytes) {
    if (wrap && (bytes.length % 8 !== 0 || bytes.length < 16)) throw new DOMException('AES-KW wraps a multiple of 8 bytes, at least 16', 'OperationError');
    const out = aesBlock('AES-KW', wrap, parts.material, new Uint8ArrayCtor(0), bytes, 0);
    if (out === null) throw new DOMException('The operation failed for an operation-specific reason', 'OperationError');
    return out;
  }
  function aes(encrypt, algorithm, key, data, argc) {
    const operation = encrypt ? 'encrypt' : 'decrypt';
    if (argc < 3) throw new TypeErrorCtor(`Failed to execute '${operation}' on 'SubtleCrypto': 3 arguments required`);
    const { dict, name } = normalize(algorithm, operation);
    checkAesParams(name, dict);
    const bytes = viewOf(data, 'data');
    const parts = keyFor(key, name, operation);
    return cipherWith(encrypt, name, dict, parts, bytes);
  }
  // encrypt or decrypt (also for wrapKey and unwrapKey) with one of the ciphers encrypt knows.
  function cipherWith(encrypt, name, dict, parts, bytes) {
    if (name === 'RSA-OAEP') return oaepWith(encrypt, dict, parts, bytes);
    return name === 'AES-GCM' ? aesGcmWith(encrypt, dict, parts, bytes) : aesBlockWith(encrypt, name, dict, parts, bytes);
  }
  // RSA-OAEP with the key's hash and the call's optional label: encrypting with the public key's
  // RSAPublicKey, decrypting with the private key's RSAPrivateKey.
  function oaepWith(encrypt, dict, parts, bytes) {
    const label = dict.label === undefined ? new Uint8ArrayCtor(0) : copyBytes(dict.label, 'label');
    const key = encrypt ? parts.material : rsaPkcs1(parts.material.pkcs8);
    const out = rsa(encrypt ? 'encrypt' : 'decrypt', parts.algorithm.hash.name, key, bytes, label);
    if (out === null) throw new DOMException('The operation failed for an operation-specific reason', 'OperationError');
    return out;
  }
  // The required members of an AES mode's parameters (a TypeError when one is missing); the
  // callers check them once, before the work (aesGcmWith, aesBlockWith) reads them.
  function checkAesParams(name, dict) {
    if (name === 'AES-GCM' && dict.iv === undefined) throw new TypeErrorCtor("The algorithm's iv is required");
    if (name !== 'AES-CBC' && name !== 'AES-CTR') return;
    const vector = name === 'AES-CBC' ? dict.iv : dict.counter;
    if (vector === undefined) throw new TypeErrorCtor(`The algorithm's ${name === 'AES-CBC' ? 'iv' : 'counter'} is required`);
    if (name === 'AES-CTR' && dict.length === undefined) throw new TypeErrorCtor("The algorithm's length is required");
  }
  function aesGcmWith(encrypt, dict, parts, bytes) {
    const iv = copyBytes(dict.iv, 'iv');
    const aad = dict.additionalData === undefined ? new Uint8ArrayCtor(0) : copyBytes(dict.additionalData, 'additionalData');
    const tagLength = dict.tagLength === undefined ? 128 : NumberCtor(dict.tagLength);
    if (![32, 64, 96, 104, 112, 120, 128].includes(tagLength)) throw new DOMException('Invalid tagLength', 'OperationError');
    // The IV sizes the native AES-GCM takes (web_natives.rs aes_gcm_sized).
    if (![8, 12, 16, 24, 32, 64].includes(iv.length)) throw notSupported(`An AES-GCM IV of ${iv.length * 8} bits (64, 96, 128, 192, 256 and 512 are)`);
    if (!encrypt && bytes.length < tagLength / 8) throw new DOMException('The data is shorter than the tag', 'OperationError');
    const out = aesGcm(encrypt, parts.material, iv, bytes, aad, tagLength / 8);
    if (out === null) throw new DOMException('The operation failed for an operation-specific reason', 'OperationError');
    return out;
  }
  // AES-CBC (a 16-byte `iv`, PKCS #7 padding) and AES-CTR (a 16-byte `counter` whose rightmost
  // `length` bits count).
  function aesBlockWith(encrypt, name, dict, parts, bytes) {
    const iv = copyBytes(name === 'AES-CBC' ? dict.iv : dict.counter, name === 'AES-CBC' ? 'iv' : 'counter');
    const length = name === 'AES-CTR' ? NumberCtor(dict.length) : 0;
    if (iv.length !== 16) throw new DOMException(`The ${name === 'AES-CBC' ? 'IV' : 'counter'} must be 16 bytes`, 'OperationError');
    if (name === 'AES-CTR' && !(length >= 1 && length <= 128)) throw new DOMException('The counter length must be 1 to 128 bits', 'OperationError');
    const out = aesBlock(name, encrypt, parts.material, iv, bytes, length);
    if (out === null) throw new DOMException('The operation failed for an operation-specific reason', 'OperationError');
    return out;
  }
  return { subtle, CryptoKey };
})
