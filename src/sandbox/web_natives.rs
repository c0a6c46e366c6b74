//! Natives behind the sandbox's Web globals that need more than JavaScript: WHATWG URL parsing
//! and setters (the `url` crate's `quirks` module is the JS URL API), form encoding for
//! URLSearchParams, SHA digests for `crypto.subtle.digest`, and the Encoding Standard's labels
//! and decoders for `TextDecoder` (the `encoding_rs` crate).

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

use super::web_rsa;

fn throw_type_error(scope: &mut v8::PinScope, message: &str) {
    if let Some(text) = v8::String::new(scope, message) {
        let error = v8::Exception::type_error(scope, text);
        scope.throw_exception(error);
    }
}

fn string_arg(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> String {
    value.to_rust_string_lossy(scope)
}

fn string_array<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    items: &[String],
) -> v8::Local<'s, v8::Array> {
    let values: Vec<v8::Local<v8::Value>> = items
        .iter()
        .map(|item| {
            v8::String::new(scope, item)
                .map(Into::into)
                .unwrap_or_else(|| v8::undefined(scope).into())
        })
        .collect();
    v8::Array::new_with_elements(scope, &values)
}

/// The components of a URL, in the order the sandbox's URL class reads them.
fn components(url: &ada_url::Url) -> [String; 11] {
    [
        url.href().to_string(),
        url.origin(),
        url.protocol().to_string(),
        url.username().to_string(),
        url.password().to_string(),
        url.host().to_string(),
        url.hostname().to_string(),
        url.port().to_string(),
        url.pathname().to_string(),
        url.search().to_string(),
        url.hash().to_string(),
    ]
}

fn parse(input: &str, base: Option<&str>) -> Option<ada_url::Url> {
    ada_url::Url::parse(input, base).ok()
}

/// `urlParse(input, base?)` → the 11 components, or null when the input is not a valid URL.
pub(crate) fn url_parse(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let input = string_arg(scope, args.get(0));
    let base = if args.get(1).is_null_or_undefined() {
        None
    } else {
        Some(string_arg(scope, args.get(1)))
    };
    match parse(&input, base.as_deref()) {
        Some(url) => {
            let array = string_array(scope, &components(&url));
            rv.set(array.into());
        }
        None => rv.set_null(),
    }
}

/// `urlSet(href, component, value)` → the components after a WHATWG setter ran (setters that
/// fail leave the URL unchanged, as in browsers; `href` failing returns null).
pub(crate) fn url_set(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let href = string_arg(scope, args.get(0));
    let component = string_arg(scope, args.get(1));
    let value = string_arg(scope, args.get(2));
    let Some(mut url) = parse(&href, None) else {
        return rv.set_null();
    };
    // Only `href` reports failure (a TypeError in JS); the other setters ignore invalid values
    // (the URL stays as it was).
    let given = Some(value.as_str());
    let ignored = |_: Result<(), ()>| true;
    let applied = match component.as_str() {
        "href" => url.set_href(&value).is_ok(),
        "protocol" => ignored(url.set_protocol(&value)),
        "username" => ignored(url.set_username(given)),
        "password" => ignored(url.set_password(given)),
        "host" => ignored(url.set_host(given)),
        "hostname" => ignored(url.set_hostname(given)),
        "port" => ignored(url.set_port(given)),
        "pathname" => ignored(url.set_pathname(given)),
        "search" => {
            url.set_search(given);
            true
        }
        "hash" => {
            url.set_hash(given);
            true
        }
        _ => false,
    };
    if !applied {
        return rv.set_null();
    }
    let array = string_array(scope, &components(&url));
    rv.set(array.into());
}

/// `formParse(text)` → [name, value, name, value, ...] (application/x-www-form-urlencoded).
pub(crate) fn form_parse(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let text = string_arg(scope, args.get(0));
    let flat: Vec<String> = url::form_urlencoded::parse(text.as_bytes())
        .flat_map(|(name, value)| [name.into_owned(), value.into_owned()])
        .collect();
    let array = string_array(scope, &flat);
    rv.set(array.into());
}

/// `formSerialize([name, value, ...])` → the urlencoded text.
pub(crate) fn form_serialize(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let Ok(array) = v8::Local::<v8::Array>::try_from(args.get(0)) else {
        return throw_type_error(scope, "formSerialize expects an array");
    };
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    let length = array.length();
    let mut i = 0;
    while i + 1 < length {
        let name = array
            .get_index(scope, i)
            .map(|v| v.to_rust_string_lossy(scope))
            .unwrap_or_default();
        let value = array
            .get_index(scope, i + 1)
            .map(|v| v.to_rust_string_lossy(scope))
            .unwrap_or_default();
        serializer.append_pair(&name, &value);
        i += 2;
    }
    let text = serializer.finish();
    if let Some(text) = v8::String::new(scope, &text) {
        rv.set(text.into());
    }
}

/// The digest of `bytes` with a Web Crypto algorithm name, or None for an unknown algorithm.
pub(crate) fn digest_bytes(algorithm: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    Some(match algorithm.to_ascii_uppercase().as_str() {
        "SHA-1" => Sha1::digest(bytes).to_vec(),
        "SHA-256" => Sha256::digest(bytes).to_vec(),
        "SHA-384" => Sha384::digest(bytes).to_vec(),
        "SHA-512" => Sha512::digest(bytes).to_vec(),
        _ => return None,
    })
}

/// `digest(algorithm, view)` → an ArrayBuffer with the hash, or null for an unknown algorithm.
pub(crate) fn digest(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let algorithm = string_arg(scope, args.get(0));
    let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(args.get(1)) else {
        return throw_type_error(scope, "digest expects an ArrayBufferView");
    };
    let mut bytes = vec![0u8; view.byte_length()];
    view.copy_contents(&mut bytes);
    match digest_bytes(&algorithm, &bytes) {
        Some(hash) => rv.set(super::natives::array_buffer_from(scope, hash).into()),
        None => rv.set_null(),
    }
}

/// The Encoding Standard's name for `label` (lowercase, as `TextDecoder.encoding` gives it), or
/// None when the label names no encoding. The standard trims ASCII whitespace (not U+000B).
pub(crate) fn encoding_name(label: &str) -> Option<String> {
    encoding_rs::Encoding::for_label(label.as_bytes()).map(|e| e.name().to_ascii_lowercase())
}

/// Decodes `bytes` with the encoding named `name`, no BOM sniffing. With `last` false, a sequence
/// left unfinished at the end is neither decoded nor an error (the decoder, dropped here, would
/// have kept it; the caller keeps those bytes for the next chunk). None: unknown name, or
/// `fatal` and malformed.
pub(crate) fn decode_bytes(name: &str, bytes: &[u8], fatal: bool, last: bool) -> Option<Vec<u16>> {
    let encoding = encoding_rs::Encoding::for_label_no_replacement(name.as_bytes())?;
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let capacity = decoder.max_utf16_buffer_length(bytes.len())?;
    let mut out = vec![0u16; capacity];
    let written = if fatal {
        let (result, _, written) =
            decoder.decode_to_utf16_without_replacement(bytes, &mut out, last);
        match result {
            encoding_rs::DecoderResult::InputEmpty => written,
            _ => return None,
        }
    } else {
        let (_, _, written, _) = decoder.decode_to_utf16(bytes, &mut out, last);
        written
    };
    out.truncate(written);
    Some(out)
}

/// `encodingName(label)` → the encoding's lowercase name, `"replacement"` for the labels that
/// name the replacement encoding, or null for an unknown label.
pub(crate) fn encoding_label(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let label = string_arg(scope, args.get(0));
    match encoding_name(&label).and_then(|name| v8::String::new(scope, &name)) {
        Some(name) => rv.set(name.into()),
        None => rv.set_null(),
    }
}

/// `encodingDecode(name, view, fatal, stream)` → the decoded string, or null when `fatal` and the
/// bytes are malformed; with `stream` true, an unfinished sequence at the end is left undecoded. The input is bounded by the ArrayBuffer budget; the UTF-16 copy made here is at
/// most twice its size plus a few units, and a result longer than V8's largest string throws.
pub(crate) fn encoding_decode(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let name = string_arg(scope, args.get(0));
    let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(args.get(1)) else {
        return throw_type_error(scope, "encodingDecode expects an ArrayBufferView");
    };
    let fatal = args.get(2).is_true();
    let last = !args.get(3).is_true();
    let mut bytes = vec![0u8; view.byte_length()];
    view.copy_contents(&mut bytes);
    let Some(units) = decode_bytes(&name, &bytes, fatal, last) else {
        return rv.set_null();
    };
    drop(bytes);
    match v8::String::new_from_two_byte(scope, &units, v8::NewStringType::Normal) {
        Some(text) => rv.set(text.into()),
        None => {
            if let Some(message) = v8::String::new(scope, "Invalid string length") {
                let error = v8::Exception::range_error(scope, message);
                scope.throw_exception(error);
            }
        }
    }
}

/// Returns `bytes` as a new ArrayBuffer, or null for None (a refusal the JS side names).
fn return_bytes_or_null(
    scope: &mut v8::PinScope,
    rv: &mut v8::ReturnValue<v8::Value>,
    bytes: Option<Vec<u8>>,
) {
    match bytes {
        Some(bytes) => rv.set(super::natives::array_buffer_from(scope, bytes).into()),
        None => rv.set_null(),
    }
}

fn view_bytes(value: v8::Local<v8::Value>) -> Option<Vec<u8>> {
    let view = v8::Local::<v8::ArrayBufferView>::try_from(value).ok()?;
    let mut bytes = vec![0u8; view.byte_length()];
    view.copy_contents(&mut bytes);
    Some(bytes)
}

fn hmac_algorithm(hash: &str) -> Option<ring::hmac::Algorithm> {
    Some(match hash {
        "SHA-1" => ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
        "SHA-256" => ring::hmac::HMAC_SHA256,
        "SHA-384" => ring::hmac::HMAC_SHA384,
        "SHA-512" => ring::hmac::HMAC_SHA512,
        _ => return None,
    })
}

/// HMAC of `data` under `key` with the named SHA hash, or None for an unknown hash.
pub(crate) fn hmac_sign(hash: &str, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    let key = ring::hmac::Key::new(hmac_algorithm(hash)?, key);
    Some(ring::hmac::sign(&key, data).as_ref().to_vec())
}

/// Whether `signature` is the HMAC of `data` (compared in constant time).
pub(crate) fn hmac_verify(hash: &str, key: &[u8], data: &[u8], signature: &[u8]) -> bool {
    hmac_algorithm(hash).is_some_and(|algorithm| {
        ring::hmac::verify(&ring::hmac::Key::new(algorithm, key), data, signature).is_ok()
    })
}

/// AES-GCM with a tag of `tag_bytes` (4, 8 or 12 to 16) appended to the ciphertext, as Web
/// Crypto does. ring serves 128- and 256-bit keys with 96-bit IVs and full tags; RustCrypto's
/// aes-gcm the rest ([`aes_gcm_sized`]). None: a key that is not 16, 24 or 32 bytes, an IV of
/// another size than those, another tag size, or (decrypting) a failed tag.
pub(crate) fn aes_gcm(
    encrypt: bool,
    key: &[u8],
    iv: &[u8],
    data: &[u8],
    aad: &[u8],
    tag_bytes: usize,
) -> Option<Vec<u8>> {
    if !matches!(tag_bytes, 4 | 8 | 12..=16) {
        return None;
    }
    let algorithm = match (key.len(), tag_bytes, iv.len()) {
        (16, 16, 12) => &ring::aead::AES_128_GCM,
        (32, 16, 12) => &ring::aead::AES_256_GCM,
        (16 | 24 | 32, _, _) => {
            let input = GcmInput {
                encrypt,
                key,
                iv,
                data,
                aad,
                tag_bytes,
            };
            return match key.len() {
                16 => aes_gcm_sized::<aes::Aes128>(&input),
                24 => aes_gcm_sized::<aes::Aes192>(&input),
                _ => aes_gcm_sized::<aes::Aes256>(&input),
            };
        }
        _ => return None,
    };
    let key = ring::aead::LessSafeKey::new(ring::aead::UnboundKey::new(algorithm, key).ok()?);
    let nonce = ring::aead::Nonce::try_assume_unique_for_key(iv).ok()?;
    let aad = ring::aead::Aad::from(aad);
    let mut buffer = data.to_vec();
    if encrypt {
        key.seal_in_place_append_tag(nonce, aad, &mut buffer).ok()?;
        Some(buffer)
    } else {
        let plain = key.open_in_place(nonce, aad, &mut buffer).ok()?.len();
        buffer.truncate(plain);
        Some(buffer)
    }
}

/// The AES block ciphers (aes::Aes128, Aes192, Aes256) as aes-gcm takes them.
trait GcmBlockCipher:
    aes::cipher::BlockCipher
    + aes::cipher::BlockEncrypt
    + aes::cipher::KeyInit
    + aes::cipher::BlockSizeUser<BlockSize = aes::cipher::consts::U16>
{
}
impl<T> GcmBlockCipher for T where
    T: aes::cipher::BlockCipher
        + aes::cipher::BlockEncrypt
        + aes::cipher::KeyInit
        + aes::cipher::BlockSizeUser<BlockSize = aes::cipher::consts::U16>
{
}

/// One AES-GCM operation's inputs, as [`aes_gcm`] takes them.
struct GcmInput<'a> {
    encrypt: bool,
    key: &'a [u8],
    iv: &'a [u8],
    data: &'a [u8],
    aad: &'a [u8],
    tag_bytes: usize,
}

/// AES-GCM with an IV of 8, 12, 16, 24, 32 or 64 bytes: aes-gcm fixes the IV size at compile
/// time, Web Crypto allows any (its tests use 32 bytes); web_crypto.js names the same sizes.
fn aes_gcm_sized<C: GcmBlockCipher>(input: &GcmInput) -> Option<Vec<u8>> {
    use aes::cipher::consts::{U12, U16, U24, U32, U64, U8};
    match input.iv.len() {
        8 => aes_gcm_other::<C, U8>(input),
        12 => aes_gcm_other::<C, U12>(input),
        16 => aes_gcm_other::<C, U16>(input),
        24 => aes_gcm_other::<C, U24>(input),
        32 => aes_gcm_other::<C, U32>(input),
        64 => aes_gcm_other::<C, U64>(input),
        _ => None,
    }
}

/// AES-GCM through RustCrypto's aes-gcm, with the full 128-bit tag computed and its first
/// `tag_bytes` kept (GCM's tag of t bits is the first t bits of the full one). Decrypting with a
/// full tag is the crate's own checked decryption; with a shorter one, GCM's keystream is applied
/// to the ciphertext (the crate's encryption, whose tag is dropped) and the full tag is computed by
/// encrypting that plaintext again, then its first bytes compared in constant time; the plaintext
/// is returned only when they match.
fn aes_gcm_other<C: GcmBlockCipher, N: aes::cipher::ArrayLength<u8>>(
    input: &GcmInput,
) -> Option<Vec<u8>> {
    let GcmInput {
        encrypt,
        key,
        iv,
        data,
        aad,
        tag_bytes,
    } = *input;
    use aes_gcm::aead::{AeadInPlace, KeyInit};
    use subtle::ConstantTimeEq;
    let cipher = aes_gcm::AesGcm::<C, N>::new_from_slice(key).ok()?;
    let nonce = aes_gcm::aead::generic_array::GenericArray::<u8, N>::from_slice(iv);
    if encrypt {
        let mut out = data.to_vec();
        let tag = cipher
            .encrypt_in_place_detached(nonce, aad, &mut out)
            .ok()?;
        out.extend_from_slice(&tag[..tag_bytes]);
        return Some(out);
    }
    let split = data.len().checked_sub(tag_bytes)?;
    let (ciphertext, tag) = data.split_at(split);
    let mut plain = ciphertext.to_vec();
    if tag_bytes == 16 {
        cipher
            .decrypt_in_place_detached(nonce, aad, &mut plain, aes_gcm::Tag::from_slice(tag))
            .ok()?;
        return Some(plain);
    }
    cipher
        .encrypt_in_place_detached(nonce, aad, &mut plain)
        .ok()?;
    let mut again = plain.clone();
    let full = cipher
        .encrypt_in_place_detached(nonce, aad, &mut again)
        .ok()?;
    bool::from(full[..tag_bytes].ct_eq(tag)).then_some(plain)
}

/// Verifies a signature with a public key: `ECDSA:<curve>:<hash>` (see [`ecdsa_verify`]) takes a
/// SEC1 point and a fixed-size (r ‖ s) signature, `Ed25519` a 32-byte key, `RSA:<padding>` (see
/// [`rsa_padding`]) an RSAPublicKey in DER.
pub(crate) fn signature_verify(
    algorithm: &str,
    public_key: &[u8],
    data: &[u8],
    signature: &[u8],
) -> bool {
    use ring::signature;
    if let Some(curve_and_hash) = algorithm.strip_prefix("ECDSA:") {
        let Some((curve, hash)) = curve_and_hash.split_once(':') else {
            return false;
        };
        return ecdsa_verify(curve, hash, public_key, data, signature);
    }
    if let Some(padding) = algorithm.strip_prefix("RSA:") {
        let Some((hash, padding)) = rsa_padding(padding) else {
            return false;
        };
        return web_rsa::rsa_verify(public_key, hash, padding, data, signature);
    }
    let algorithm: &dyn signature::VerificationAlgorithm = match algorithm {
        "Ed25519" => &signature::ED25519,
        _ => return false,
    };
    signature::UnparsedPublicKey::new(algorithm, public_key)
        .verify(data, signature)
        .is_ok()
}

/// The kind of private key `crypto.subtle` signs with through ring, held as PKCS #8 DER:
/// `Ed25519` (version 1 or 2). ECDSA keys are scalars ([`ecdsa_sign`]), RSA keys RSAPrivateKeys
/// ([`web_rsa::rsa_sign`]).
enum PrivateKey {
    Ed25519(ring::signature::Ed25519KeyPair),
}

impl PrivateKey {
    /// The key of `kind` in `pkcs8`, or None when ring refuses it (malformed, another kind, a
    /// public point that does not belong to the private key, a size out of range).
    fn parse(kind: &str, pkcs8: &[u8]) -> Option<Self> {
        use ring::signature;
        Some(match kind {
            "Ed25519" => {
                Self::Ed25519(signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8).ok()?)
            }
            _ => return None,
        })
    }

    /// The public half: 32 bytes of Ed25519.
    fn public_key(&self) -> Vec<u8> {
        use ring::signature::KeyPair;
        match self {
            Self::Ed25519(key) => key.public_key().as_ref().to_vec(),
        }
    }

    /// The signature of `data`.
    fn sign(&self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Ed25519(key) => key.sign(data).as_ref().to_vec(),
        }
    }
}

/// `cryptoPrivateKey(kind, pkcs8)` → the key's public half (see [`PrivateKey::public_key`]), or
/// null when the PKCS #8 is not a key of that kind ring accepts. The input is bounded by the
/// ArrayBuffer budget.
pub(crate) fn crypto_private_key(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let kind = string_arg(scope, args.get(0));
    let Some(pkcs8) = view_bytes(args.get(1)) else {
        return throw_type_error(scope, "cryptoPrivateKey expects an ArrayBufferView");
    };
    let out = PrivateKey::parse(&kind, &pkcs8).map(|key| key.public_key());
    return_bytes_or_null(scope, &mut rv, out);
}

/// `cryptoSign(kind, padding, key, data)` → the signature as an ArrayBuffer, or null when the
/// key or the padding is refused: `kind` `ECDSA:<curve>` with the hash as `padding` and the
/// private scalar as `key` ([`ecdsa_sign`]), `RSA` with [`rsa_padding`]'s text and an
/// RSAPrivateKey ([`web_rsa::rsa_sign`]), or a [`PrivateKey`] kind with its PKCS #8. The signer's
/// time is this thread's CPU time, which the run's CPU budget counts; an RSA key is at most 8192
/// bits.
pub(crate) fn crypto_sign(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let kind = string_arg(scope, args.get(0));
    let padding = string_arg(scope, args.get(1));
    let (Some(pkcs8), Some(data)) = (view_bytes(args.get(2)), view_bytes(args.get(3))) else {
        return throw_type_error(scope, "cryptoSign expects ArrayBufferViews");
    };
    let signature = match (kind.strip_prefix("ECDSA:"), kind.as_str()) {
        (Some(curve), _) => ecdsa_sign(curve, &padding, &pkcs8, &data),
        (None, "RSA") => rsa_padding(&padding)
            .and_then(|(hash, padding)| web_rsa::rsa_sign(&pkcs8, hash, padding, &data)),
        (None, _) => PrivateKey::parse(&kind, &pkcs8).map(|key| key.sign(&data)),
    };
    return_bytes_or_null(scope, &mut rv, signature);
}

/// An RSA signature's padding and hash, written `PKCS1:<hash>` or `PSS:<hash>:<salt length>`.
fn rsa_padding(text: &str) -> Option<(&str, web_rsa::RsaPadding)> {
    let mut parts = text.split(':');
    let (kind, hash) = (parts.next()?, parts.next()?);
    let padding = match (kind, parts.next()) {
        ("PKCS1", None) => web_rsa::RsaPadding::Pkcs1,
        ("PSS", Some(salt)) => web_rsa::RsaPadding::Pss {
            salt_len: salt.parse().ok()?,
        },
        _ => return None,
    };
    parts.next().is_none().then_some((hash, padding))
}

/// The operating system's random source as the RNG RustCrypto's signers take. It cannot report
/// a failure through `fill_bytes`, so it panics there, and [`ecdsa_sign`] catches that.
struct OsRandom;

impl p256::elliptic_curve::rand_core::RngCore for OsRandom {
    fn next_u32(&mut self) -> u32 {
        p256::elliptic_curve::rand_core::impls::next_u32_via_fill(self)
    }
    fn next_u64(&mut self) -> u64 {
        p256::elliptic_curve::rand_core::impls::next_u64_via_fill(self)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        if crate::os::random_bytes(dest).is_err() {
            panic!("the operating system's random source failed");
        }
    }
    fn try_fill_bytes(
        &mut self,
        dest: &mut [u8],
    ) -> Result<(), p256::elliptic_curve::rand_core::Error> {
        use p256::elliptic_curve::rand_core::Error;
        crate::os::random_bytes(dest).map_err(|_| {
            let code =
                std::num::NonZeroU32::new(Error::CUSTOM_START).unwrap_or(std::num::NonZeroU32::MIN);
            Error::from(code)
        })
    }
}

impl p256::elliptic_curve::rand_core::CryptoRng for OsRandom {}

/// The size in bytes of a field element (and of the scalar, and of r and s) of `curve`.
fn curve_size(curve: &str) -> Option<usize> {
    match curve {
        "P-256" => Some(32),
        "P-384" => Some(48),
        "P-521" => Some(66),
        _ => None,
    }
}

/// ECDSA's message representative: the hash of `data` with `hash`, as `size` bytes: its leftmost
/// bytes when longer (bits2int for the byte-sized curves P-256 and P-384), left-padded with zeros
/// when shorter (the same integer; RustCrypto refuses a digest under half the field's size, which
/// Web Crypto allows, SHA-1 on P-384, say).
fn ecdsa_prehash(hash: &str, data: &[u8], size: usize) -> Option<Vec<u8>> {
    let digest = digest_bytes(hash, data)?;
    let mut out = vec![0u8; size];
    if digest.len() >= size {
        out.copy_from_slice(&digest[..size]);
    } else {
        out[size - digest.len()..].copy_from_slice(&digest);
    }
    Some(out)
}

/// An ECDSA signature (fixed-size r ‖ s, as Web Crypto gives it) of `data` hashed with `hash`
/// (`SHA-1`…`SHA-512`, any with any curve, as Web Crypto allows), by the private scalar `scalar`
/// of `curve` (`P-256`, `P-384`, `P-521`), through RustCrypto's curves. The nonce is RFC 6979's
/// with fresh randomness mixed in (P-256, P-384) or random (P-521), so signatures differ from
/// call to call. None for a scalar that is not a valid key, or if the random source fails.
fn ecdsa_sign(curve: &str, hash: &str, scalar: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    use p256::ecdsa::signature::hazmat::RandomizedPrehashSigner;
    let size = curve_size(curve)?;
    if scalar.len() != size {
        return None;
    }
    let z = ecdsa_prehash(hash, data, size)?;
    let signed = std::panic::catch_unwind(|| -> Option<Vec<u8>> {
        let mut rng = OsRandom;
        Some(match curve {
            "P-256" => {
                let key = p256::ecdsa::SigningKey::from_slice(scalar).ok()?;
                let signature: p256::ecdsa::Signature =
                    key.sign_prehash_with_rng(&mut rng, &z).ok()?;
                signature.to_bytes().to_vec()
            }
            "P-384" => {
                let key = p384::ecdsa::SigningKey::from_slice(scalar).ok()?;
                let signature: p384::ecdsa::Signature =
                    key.sign_prehash_with_rng(&mut rng, &z).ok()?;
                signature.to_bytes().to_vec()
            }
            "P-521" => {
                let key = p521::ecdsa::SigningKey::from_slice(scalar).ok()?;
                let signature: p521::ecdsa::Signature =
                    key.sign_prehash_with_rng(&mut rng, &z).ok()?;
                signature.to_bytes().to_vec()
            }
            _ => return None,
        })
    });
    signed.ok().flatten()
}

/// Whether `signature` (fixed-size r ‖ s) is `curve`'s ECDSA signature of `data` hashed with
/// `hash` by the SEC1 public point `point` (see [`ecdsa_sign`]). False for a point off the curve
/// or a signature of the wrong size or with r or s out of range.
fn ecdsa_verify(curve: &str, hash: &str, point: &[u8], data: &[u8], signature: &[u8]) -> bool {
    use p256::ecdsa::signature::hazmat::PrehashVerifier;
    let Some(size) = curve_size(curve) else {
        return false;
    };
    let Some(z) = ecdsa_prehash(hash, data, size) else {
        return false;
    };
    match curve {
        "P-256" => match (
            p256::ecdsa::VerifyingKey::from_sec1_bytes(point),
            p256::ecdsa::Signature::from_slice(signature),
        ) {
            (Ok(key), Ok(signature)) => key.verify_prehash(&z, &signature).is_ok(),
            _ => false,
        },
        "P-384" => match (
            p384::ecdsa::VerifyingKey::from_sec1_bytes(point),
            p384::ecdsa::Signature::from_slice(signature),
        ) {
            (Ok(key), Ok(signature)) => key.verify_prehash(&z, &signature).is_ok(),
            _ => false,
        },
        "P-521" => match (
            p521::ecdsa::VerifyingKey::from_sec1_bytes(point),
            p521::ecdsa::Signature::from_slice(signature),
        ) {
            (Ok(key), Ok(signature)) => key.verify_prehash(&z, &signature).is_ok(),
            _ => false,
        },
        _ => false,
    }
}

/// The public key of an agreement private key of `kind`: `P-256`, `P-384` and `P-521` take the
/// scalar (32, 48 or 66 bytes, big-endian) and give an uncompressed point, `X25519` takes 32 bytes and gives
/// 32. None for a scalar that is not a valid private key (zero, or not below the curve's order).
fn agreement_public(kind: &str, private_key: &[u8]) -> Option<Vec<u8>> {
    match kind {
        "P-256" if private_key.len() == 32 => Some(uncompressed_point(
            &p256::SecretKey::from_slice(private_key).ok()?.public_key(),
        )),
        "P-384" if private_key.len() == 48 => Some(uncompressed_point(
            &p384::SecretKey::from_slice(private_key).ok()?.public_key(),
        )),
        "P-521" if private_key.len() == 66 => Some(uncompressed_point(
            &p521::SecretKey::from_slice(private_key).ok()?.public_key(),
        )),
        "X25519" => {
            let bytes: [u8; 32] = private_key.try_into().ok()?;
            let secret = x25519_dalek::StaticSecret::from(bytes);
            Some(x25519_dalek::PublicKey::from(&secret).as_bytes().to_vec())
        }
        _ => None,
    }
}

/// The shared secret of an agreement (see [`agreement_public`] for the key forms): ECDH's is the
/// x-coordinate of the shared point, X25519's its 32 bytes. None for a key or point that is not
/// valid on the curve, or an X25519 result of all zeros (a small-order public key), which Web
/// Crypto refuses.
fn agreement_secret(kind: &str, private_key: &[u8], public_key: &[u8]) -> Option<Vec<u8>> {
    match kind {
        "P-256" if private_key.len() == 32 => {
            let secret = p256::SecretKey::from_slice(private_key).ok()?;
            let public = p256::PublicKey::from_sec1_bytes(public_key).ok()?;
            let shared = p256::ecdh::diffie_hellman(secret.to_nonzero_scalar(), public.as_affine());
            Some(shared.raw_secret_bytes().to_vec())
        }
        "P-384" if private_key.len() == 48 => {
            let secret = p384::SecretKey::from_slice(private_key).ok()?;
            let public = p384::PublicKey::from_sec1_bytes(public_key).ok()?;
            let shared = p384::ecdh::diffie_hellman(secret.to_nonzero_scalar(), public.as_affine());
            Some(shared.raw_secret_bytes().to_vec())
        }
        "P-521" if private_key.len() == 66 => {
            let secret = p521::SecretKey::from_slice(private_key).ok()?;
            let public = p521::PublicKey::from_sec1_bytes(public_key).ok()?;
            let shared = p521::ecdh::diffie_hellman(secret.to_nonzero_scalar(), public.as_affine());
            Some(shared.raw_secret_bytes().to_vec())
        }
        "X25519" => {
            let private: [u8; 32] = private_key.try_into().ok()?;
            let public: [u8; 32] = public_key.try_into().ok()?;
            let shared = x25519_dalek::StaticSecret::from(private)
                .diffie_hellman(&x25519_dalek::PublicKey::from(public));
            shared
                .was_contributory()
                .then(|| shared.as_bytes().to_vec())
        }
        _ => None,
    }
}

/// An EC public point of `curve` (`P-256`, `P-384`, `P-521`) in SEC1 form, compressed or not, checked to
/// be a point of the curve other than the identity, given back uncompressed; None otherwise.
pub(crate) fn ec_public_point(curve: &str, point: &[u8]) -> Option<Vec<u8>> {
    match curve {
        "P-256" => Some(uncompressed_point(
            &p256::PublicKey::from_sec1_bytes(point).ok()?,
        )),
        "P-384" => Some(uncompressed_point(
            &p384::PublicKey::from_sec1_bytes(point).ok()?,
        )),
        "P-521" => Some(uncompressed_point(
            &p521::PublicKey::from_sec1_bytes(point).ok()?,
        )),
        _ => None,
    }
}

/// A NIST curve's public key as an uncompressed SEC1 point (0x04 ‖ x ‖ y), the form the sandbox
/// keeps and exports.
fn uncompressed_point<C>(public: &p256::elliptic_curve::PublicKey<C>) -> Vec<u8>
where
    C: p256::elliptic_curve::CurveArithmetic,
    p256::elliptic_curve::AffinePoint<C>: p256::elliptic_curve::sec1::FromEncodedPoint<C>
        + p256::elliptic_curve::sec1::ToEncodedPoint<C>,
    p256::elliptic_curve::FieldBytesSize<C>: p256::elliptic_curve::sec1::ModulusSize,
{
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    public.to_encoded_point(false).as_bytes().to_vec()
}

/// `cryptoEcPoint(curve, point)` → the point uncompressed, or null (see [`ec_public_point`]).
pub(crate) fn crypto_ec_point(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let curve = string_arg(scope, args.get(0));
    let Some(point) = view_bytes(args.get(1)) else {
        return throw_type_error(scope, "cryptoEcPoint expects an ArrayBufferView");
    };
    return_bytes_or_null(scope, &mut rv, ec_public_point(&curve, &point));
}

/// `cryptoAgree(kind, privateKey)` → the key's public half, or null when it is not a valid
/// private key; `cryptoAgree(kind, privateKey, publicKey)` → the shared secret, or null (see
/// [`agreement_secret`]). `kind` is `P-256`, `P-384`, `P-521` or `X25519`; keys are a few dozen
/// bytes.
pub(crate) fn crypto_agree(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let kind = string_arg(scope, args.get(0));
    let Some(private_key) = view_bytes(args.get(1)) else {
        return throw_type_error(scope, "cryptoAgree expects ArrayBufferViews");
    };
    let out = if args.length() < 3 {
        agreement_public(&kind, &private_key)
    } else {
        let Some(public_key) = view_bytes(args.get(2)) else {
            return throw_type_error(scope, "cryptoAgree expects ArrayBufferViews");
        };
        agreement_secret(&kind, &private_key, &public_key)
    };
    return_bytes_or_null(scope, &mut rv, out);
}

/// `cryptoRsa('generate', bits, exponent)` → a new RSAPrivateKey, or null (see
/// [`web_rsa::rsa_generate_pkcs1`]; it gives up when the run is told to stop);
/// `cryptoRsa('public', rsaPrivateKey)` → its RSAPublicKey, or
/// null when the key is malformed, inconsistent or of a size refused (see [`web_rsa::RSA_BITS`]);
/// `cryptoRsa('encrypt' | 'decrypt', hash, key, data, label)` → RSA-OAEP's output, or null (see
/// [`web_rsa::rsa_oaep`]). Inputs are bounded by the ArrayBuffer budget; the work is this thread's CPU
/// time, which the run's CPU budget counts.
pub(crate) fn crypto_rsa(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let operation = string_arg(scope, args.get(0));
    let out = match operation.as_str() {
        "generate" => {
            let bits = args.get(1).uint32_value(scope).unwrap_or(0);
            let exponent = args.get(2).uint32_value(scope).unwrap_or(0);
            let go_on = super::natives::run_may_go_on(scope);
            web_rsa::rsa_generate_pkcs1(bits, exponent, &go_on)
        }
        "public" => {
            let Some(key) = view_bytes(args.get(1)) else {
                return throw_type_error(scope, "cryptoRsa expects an ArrayBufferView");
            };
            web_rsa::rsa_public_of(&key)
        }
        "encrypt" | "decrypt" => {
            let hash = string_arg(scope, args.get(1));
            let (Some(key), Some(data), Some(label)) = (
                view_bytes(args.get(2)),
                view_bytes(args.get(3)),
                view_bytes(args.get(4)),
            ) else {
                return throw_type_error(scope, "cryptoRsa expects ArrayBufferViews");
            };
            web_rsa::rsa_oaep(operation == "encrypt", &hash, &key, &data, &label)
        }
        _ => return throw_type_error(scope, "cryptoRsa: unknown operation"),
    };
    return_bytes_or_null(scope, &mut rv, out);
}

/// `cryptoHmac(hash, key, data)` → the MAC as an ArrayBuffer; `cryptoHmac(hash, key, data, mac)`
/// → whether `mac` matches. The views are bounded by the ArrayBuffer budget; ring's time is
/// this thread's CPU time, which the run's CPU budget counts.
pub(crate) fn crypto_hmac(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let hash = string_arg(scope, args.get(0));
    let (Some(key), Some(data)) = (view_bytes(args.get(1)), view_bytes(args.get(2))) else {
        return throw_type_error(scope, "cryptoHmac expects ArrayBufferViews");
    };
    if args.length() > 3 {
        let Some(signature) = view_bytes(args.get(3)) else {
            return throw_type_error(scope, "cryptoHmac expects ArrayBufferViews");
        };
        return rv.set_bool(hmac_verify(&hash, &key, &data, &signature));
    }
    match hmac_sign(&hash, &key, &data) {
        Some(mac) => rv.set(super::natives::array_buffer_from(scope, mac).into()),
        None => rv.set_null(),
    }
}

/// `cryptoAesGcm(encrypt, key, iv, data, aad, tagBytes)` → an ArrayBuffer, or null (see
/// [`aes_gcm`]).
pub(crate) fn crypto_aes_gcm(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let encrypt = args.get(0).is_true();
    let parts: Option<Vec<Vec<u8>>> = (1..5).map(|i| view_bytes(args.get(i))).collect();
    let Some(parts) = parts else {
        return throw_type_error(scope, "cryptoAesGcm expects ArrayBufferViews");
    };
    let tag_bytes = args
        .get(5)
        .number_value(scope)
        .filter(|n| n.fract() == 0.0 && (0.0..=16.0).contains(n))
        .map_or(0, |n| n as usize);
    match aes_gcm(
        encrypt, &parts[0], &parts[1], &parts[2], &parts[3], tag_bytes,
    ) {
        Some(out) => rv.set(super::natives::array_buffer_from(scope, out).into()),
        None => rv.set_null(),
    }
}

/// AES-CBC with Web Crypto's PKCS #7 padding, under a 128-, 192- or 256-bit key and a 16-byte IV;
/// None when the key or IV has the wrong size or, decrypting, the data or its padding is wrong.
pub(crate) fn aes_cbc(encrypt: bool, key: &[u8], iv: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    match key.len() {
        16 => cbc_with::<aes::Aes128>(encrypt, key, iv, data),
        24 => cbc_with::<aes::Aes192>(encrypt, key, iv, data),
        32 => cbc_with::<aes::Aes256>(encrypt, key, iv, data),
        _ => None,
    }
}

fn cbc_with<C>(encrypt: bool, key: &[u8], iv: &[u8], data: &[u8]) -> Option<Vec<u8>>
where
    C: aes::cipher::BlockCipher
        + aes::cipher::BlockEncryptMut
        + aes::cipher::BlockDecryptMut
        + aes::cipher::KeyInit
        + aes::cipher::BlockSizeUser<BlockSize = aes::cipher::consts::U16>,
{
    use aes::cipher::block_padding::Pkcs7;
    use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
    if encrypt {
        let cipher = cbc::Encryptor::<C>::new_from_slices(key, iv).ok()?;
        Some(cipher.encrypt_padded_vec_mut::<Pkcs7>(data))
    } else {
        let cipher = cbc::Decryptor::<C>::new_from_slices(key, iv).ok()?;
        cipher.decrypt_padded_vec_mut::<Pkcs7>(data).ok()
    }
}

/// AES-CTR (the same for both directions) under a 128-, 192- or 256-bit key, from the 16-byte
/// `counter` block whose rightmost `length` bits count (1 to 128): they wrap to zero without
/// carrying into the rest, as Web Crypto says. None for a wrong key, counter or length, or
/// data of more than 2^length blocks (a counter block would repeat).
pub(crate) fn aes_ctr(key: &[u8], counter: &[u8], length: u32, data: &[u8]) -> Option<Vec<u8>> {
    let start = u128::from_be_bytes(counter.try_into().ok()?);
    if length == 0 || length > 128 {
        return None;
    }
    let blocks = data.len().div_ceil(16) as u128;
    let mask = if length == 128 {
        u128::MAX
    } else {
        (1u128 << length) - 1
    };
    if length < 128 && blocks > mask + 1 {
        return None;
    }
    // The blocks before the counted bits wrap (all of them with 128 counted bits, which wrap as
    // a 128-bit counter does), then the rest from those bits at zero.
    let before_wrap = if length == 128 {
        blocks
    } else {
        blocks.min(mask - (start & mask) + 1)
    };
    let split = (before_wrap as usize * 16).min(data.len());
    let mut out = data.to_vec();
    let (first, rest) = out.split_at_mut(split);
    ctr_apply(key, start, first)?;
    if !rest.is_empty() {
        ctr_apply(key, start & !mask, rest)?;
    }
    Some(out)
}

fn ctr_apply(key: &[u8], counter: u128, data: &mut [u8]) -> Option<()> {
    use aes::cipher::{KeyIvInit, StreamCipher};
    let iv = counter.to_be_bytes();
    match key.len() {
        16 => ctr::Ctr128BE::<aes::Aes128>::new_from_slices(key, &iv)
            .ok()?
            .apply_keystream(data),
        24 => ctr::Ctr128BE::<aes::Aes192>::new_from_slices(key, &iv)
            .ok()?
            .apply_keystream(data),
        32 => ctr::Ctr128BE::<aes::Aes256>::new_from_slices(key, &iv)
            .ok()?
            .apply_keystream(data),
        _ => return None,
    }
    Some(())
}

/// AES-KW (RFC 3394) of `data` under a 128-, 192- or 256-bit key: wrapping needs a multiple of 8
/// bytes, at least 16; unwrapping checks the integrity value. None when either fails.
pub(crate) fn aes_kw(wrap: bool, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    macro_rules! run {
        ($kek:ty) => {{
            let kek = <$kek>::try_from(key).ok()?;
            if wrap {
                kek.wrap_vec(data).ok()
            } else {
                kek.unwrap_vec(data).ok()
            }
        }};
    }
    match key.len() {
        16 => run!(aes_kw::KekAes128),
        24 => run!(aes_kw::KekAes192),
        32 => run!(aes_kw::KekAes256),
        _ => None,
    }
}

/// `cryptoAesBlock(mode, encrypt, key, ivOrCounter, data, counterLength)` → an ArrayBuffer, or
/// null (see [`aes_cbc`], [`aes_ctr`] and [`aes_kw`]); `mode` is `AES-CBC`, `AES-CTR` or
/// `AES-KW` (whose `ivOrCounter` is ignored; encrypt means wrap).
pub(crate) fn crypto_aes_block(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let mode = string_arg(scope, args.get(0));
    let encrypt = args.get(1).is_true();
    let parts: Option<Vec<Vec<u8>>> = (2..5).map(|i| view_bytes(args.get(i))).collect();
    let Some(parts) = parts else {
        return throw_type_error(scope, "cryptoAesBlock expects ArrayBufferViews");
    };
    let out = if mode == "AES-CBC" {
        aes_cbc(encrypt, &parts[0], &parts[1], &parts[2])
    } else if mode == "AES-KW" {
        aes_kw(encrypt, &parts[0], &parts[2])
    } else {
        let length = args.get(5).number_value(scope).unwrap_or(0.0);
        if !(1.0..=128.0).contains(&length) || length.fract() != 0.0 {
            return rv.set_null();
        }
        aes_ctr(&parts[0], &parts[1], length as u32, &parts[2])
    };
    match out {
        Some(out) => rv.set(super::natives::array_buffer_from(scope, out).into()),
        None => rv.set_null(),
    }
}

/// The output length HKDF expands to, as ring asks for it.
struct HkdfLength(usize);

impl ring::hkdf::KeyType for HkdfLength {
    fn len(&self) -> usize {
        self.0
    }
}

/// What a key derivation gives back: the bytes, a refusal of its inputs (an unknown hash,
/// zero iterations, a length HKDF cannot give), or the work bound it would pass.
#[derive(Debug, PartialEq)]
pub(crate) enum Derived {
    Bytes(Vec<u8>),
    Refused,
    OverBound(u64),
}

/// PBKDF2-HMAC of `password` and `salt` to `length` bytes, refused past
/// [`crate::limits::MAX_PBKDF2_WORK`] (iterations × output blocks of the hash).
pub(crate) fn pbkdf2_bytes(
    hash: &str,
    password: &[u8],
    salt: &[u8],
    iterations: u64,
    length: usize,
) -> Derived {
    let (algorithm, block) = match hash {
        "SHA-1" => (ring::pbkdf2::PBKDF2_HMAC_SHA1, 20),
        "SHA-256" => (ring::pbkdf2::PBKDF2_HMAC_SHA256, 32),
        "SHA-384" => (ring::pbkdf2::PBKDF2_HMAC_SHA384, 48),
        "SHA-512" => (ring::pbkdf2::PBKDF2_HMAC_SHA512, 64),
        _ => return Derived::Refused,
    };
    let blocks = length.div_ceil(block).max(1) as u64;
    if iterations.saturating_mul(blocks) > crate::limits::MAX_PBKDF2_WORK {
        return Derived::OverBound(crate::limits::MAX_PBKDF2_WORK);
    }
    let Some(rounds) = u32::try_from(iterations)
        .ok()
        .and_then(std::num::NonZeroU32::new)
    else {
        return Derived::Refused;
    };
    let mut out = vec![0u8; length];
    ring::pbkdf2::derive(algorithm, rounds, salt, password, &mut out);
    Derived::Bytes(out)
}

/// HKDF (extract with `salt`, expand with `info`) of `secret` to `length` bytes; refused past
/// 255 blocks of the hash, as RFC 5869 says.
pub(crate) fn hkdf_bytes(
    hash: &str,
    secret: &[u8],
    salt: &[u8],
    info: &[u8],
    length: usize,
) -> Derived {
    let algorithm = match hash {
        "SHA-1" => ring::hkdf::HKDF_SHA1_FOR_LEGACY_USE_ONLY,
        "SHA-256" => ring::hkdf::HKDF_SHA256,
        "SHA-384" => ring::hkdf::HKDF_SHA384,
        "SHA-512" => ring::hkdf::HKDF_SHA512,
        _ => return Derived::Refused,
    };
    let prk = ring::hkdf::Salt::new(algorithm, salt).extract(secret);
    let info = [info];
    let Ok(okm) = prk.expand(&info, HkdfLength(length)) else {
        return Derived::Refused;
    };
    let mut out = vec![0u8; length];
    match okm.fill(&mut out) {
        Ok(()) => Derived::Bytes(out),
        Err(_) => Derived::Refused,
    }
}

/// `cryptoDerive(kind, hash, secret, salt, iterationsOrInfo, lengthBytes)` → an ArrayBuffer;
/// null when the inputs are refused; the bound (a number) when PBKDF2 would pass it. `kind` is
/// `PBKDF2` (a number of iterations) or `HKDF` (an info view). The views are bounded by the
/// ArrayBuffer budget; the output by the work bound (PBKDF2) or 255 hash blocks (HKDF).
pub(crate) fn crypto_derive(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let kind = string_arg(scope, args.get(0));
    let hash = string_arg(scope, args.get(1));
    let (Some(secret), Some(salt)) = (view_bytes(args.get(2)), view_bytes(args.get(3))) else {
        return throw_type_error(scope, "cryptoDerive expects ArrayBufferViews");
    };
    let length = args.get(5).number_value(scope).unwrap_or(-1.0);
    if !(0.0..=f64::from(u32::MAX)).contains(&length) || length.fract() != 0.0 {
        return rv.set_null();
    }
    let derived = if kind == "PBKDF2" {
        let iterations = args.get(4).number_value(scope).unwrap_or(0.0);
        if !(iterations >= 1.0 && iterations.fract() == 0.0) {
            return rv.set_null();
        }
        pbkdf2_bytes(
            &hash,
            &secret,
            &salt,
            iterations.min(u64::MAX as f64) as u64,
            length as usize,
        )
    } else {
        let Some(info) = view_bytes(args.get(4)) else {
            return throw_type_error(scope, "cryptoDerive expects ArrayBufferViews");
        };
        hkdf_bytes(&hash, &secret, &salt, &info, length as usize)
    };
    match derived {
        Derived::Bytes(out) => rv.set(super::natives::array_buffer_from(scope, out).into()),
        Derived::Refused => rv.set_null(),
        Derived::OverBound(bound) => rv.set_double(bound as f64),
    }
}

/// `cryptoVerify(algorithm, publicKey, data, signature)` → whether the signature is valid.
pub(crate) fn crypto_verify(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let algorithm = string_arg(scope, args.get(0));
    let parts: Option<Vec<Vec<u8>>> = (1..4).map(|i| view_bytes(args.get(i))).collect();
    let Some(parts) = parts else {
        return throw_type_error(scope, "cryptoVerify expects ArrayBufferViews");
    };
    rv.set_bool(signature_verify(
        &algorithm, &parts[0], &parts[1], &parts[2],
    ));
}

/// The largest output of a deflate of `input` bytes (stored blocks at worst: 5 bytes per 16 KiB
/// block), plus the gzip header and trailer: the size of the buffer the caller provides.
pub(crate) fn deflate_bound(input: usize) -> usize {
    input + input / 16_384 * 5 + 5 + 18 + 64
}

/// Compresses `input` in `format` (`gzip`, `deflate` = zlib, `deflate-raw`); None for an unknown
/// format.
pub(crate) fn deflate_bytes(format: &str, input: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let level = flate2::Compression::default();
    let out = Vec::with_capacity(deflate_bound(input.len()));
    let result = match format {
        "gzip" => {
            let mut encoder = flate2::write::GzEncoder::new(out, level);
            encoder.write_all(input).and_then(|()| encoder.finish())
        }
        "deflate" => {
            let mut encoder = flate2::write::ZlibEncoder::new(out, level);
            encoder.write_all(input).and_then(|()| encoder.finish())
        }
        "deflate-raw" => {
            let mut encoder = flate2::write::DeflateEncoder::new(out, level);
            encoder.write_all(input).and_then(|()| encoder.finish())
        }
        _ => return None,
    };
    result.ok()
}

/// Decompresses `input`, handing each piece of output to `sink`, which returns false to stop (an
/// output past the caller's bound). Err: corrupt or truncated input, data after the end of the
/// compressed stream, an unknown format, or a sink that stopped.
pub(crate) fn inflate_with(
    format: &str,
    input: &[u8],
    mut sink: impl FnMut(&[u8]) -> bool,
) -> Result<(), &'static str> {
    use std::io::Read;
    fn drain<R: Read>(
        reader: &mut R,
        sink: &mut impl FnMut(&[u8]) -> bool,
    ) -> Result<(), &'static str> {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = reader
                .read(&mut buffer)
                .map_err(|_| "The compressed data is corrupt or truncated")?;
            if n == 0 {
                return Ok(());
            }
            if !sink(&buffer[..n]) {
                return Err("The decompressed data is larger than the memory bound allows");
            }
        }
    }
    let rest = match format {
        "gzip" => {
            let mut decoder = flate2::bufread::GzDecoder::new(input);
            drain(&mut decoder, &mut sink)?;
            decoder.into_inner()
        }
        "deflate" => {
            let mut decoder = flate2::bufread::ZlibDecoder::new(input);
            drain(&mut decoder, &mut sink)?;
            decoder.into_inner()
        }
        "deflate-raw" => {
            let mut decoder = flate2::bufread::DeflateDecoder::new(input);
            drain(&mut decoder, &mut sink)?;
            decoder.into_inner()
        }
        _ => return Err("Unsupported compression format"),
    };
    if rest.is_empty() {
        Ok(())
    } else {
        Err("Junk found after the end of the compressed data")
    }
}

/// Copies `bytes` into the JS view `target` from its start; false if it does not fit.
fn write_view(
    scope: &mut v8::PinScope,
    target: v8::Local<v8::ArrayBufferView>,
    bytes: &[u8],
) -> bool {
    let Some(buffer) = target.buffer(scope) else {
        return false;
    };
    let store = buffer.get_backing_store();
    let start = target.byte_offset();
    let Some(cells) = store.get(start..start + target.byte_length()) else {
        return false;
    };
    if bytes.len() > cells.len() {
        return false;
    }
    for (cell, byte) in cells.iter().zip(bytes) {
        cell.set(*byte);
    }
    true
}

/// `deflate(format, input, output)` → the number of bytes written into `output` (which the
/// caller sized with the bound it computes from `deflateBound`), or -1. The compressed copy made
/// here is about the input's size, which the ArrayBuffer budget bounds.
pub(crate) fn zlib_deflate(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let format = string_arg(scope, args.get(0));
    let (Some(input), Ok(output)) = (
        view_bytes(args.get(1)),
        v8::Local::<v8::ArrayBufferView>::try_from(args.get(2)),
    ) else {
        return throw_type_error(scope, "deflate expects ArrayBufferViews");
    };
    match deflate_bytes(&format, &input) {
        Some(out) if write_view(scope, output, &out) => rv.set_double(out.len() as f64),
        _ => rv.set_int32(-1),
    }
}

/// `inflate(format, input, limit)` → the decompressed size, or an error message when the data
/// is bad or its size passes `limit`; `inflate(format, input, output)` → writes the output into
/// `output` (sized by the first call) and returns its size. Nothing is kept between the calls:
/// the first decompresses into a counter, so no output past the bound is ever held here.
pub(crate) fn zlib_inflate(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let format = string_arg(scope, args.get(0));
    let Some(input) = view_bytes(args.get(1)) else {
        return throw_type_error(scope, "inflate expects an ArrayBufferView");
    };
    let target = args.get(2);
    let result = if let Ok(output) = v8::Local::<v8::ArrayBufferView>::try_from(target) {
        let mut written = Vec::new();
        let limit = output.byte_length();
        let result = inflate_with(&format, &input, |piece| {
            written.extend_from_slice(piece);
            written.len() <= limit
        });
        result.and_then(|()| {
            if write_view(scope, output, &written) {
                Ok(written.len())
            } else {
                Err("The decompressed data does not fit")
            }
        })
    } else {
        let limit = target.number_value(scope).unwrap_or(0.0).max(0.0) as usize;
        let mut total = 0usize;
        inflate_with(&format, &input, |piece| {
            total += piece.len();
            total <= limit
        })
        .map(|()| total)
    };
    match result {
        Ok(n) => rv.set_double(n as f64),
        Err(message) => {
            if let Some(text) = v8::String::new(scope, message) {
                rv.set(text.into());
            }
        }
    }
}

/// The Streams standard (web_streams.js). Kept out of the snapshot, where it would add about
/// 0.15 ms to every fresh isolate's deserialization (measured with `measureFloors`), and compiled
/// in the few runs that use a stream.
const WEB_STREAMS: &str = include_str!("web_streams.js");

/// Web Crypto beyond digests and random values (web_crypto.js), kept out of the snapshot for the
/// same reason and compiled in a run's first call of such a `crypto.subtle` method.
const WEB_CRYPTO: &str = include_str!("web_crypto.js");

/// structuredClone's algorithm (web_clone.js): in web.js it was compiled eagerly into the snapshot,
/// where it added about 0.06 ms to every fresh isolate (measured with `measureFloors`).
const WEB_CLONE: &str = include_str!("web_clone.js");

/// URL, Headers, Request, Response, fetch, Blob, FormData and the other globals of web_net.js's
/// accessors. Out of the snapshot for the same reason as the streams: deserializing them was about
/// 2% of the instructions a fresh isolate costs (`bench/scenarios/instructions.js`), and their
/// first use is a third cheaper from the code cache than compiled lazily from the snapshot.
const WEB_NET_GLOBALS: &str = include_str!("web_net_globals.js");

/// URL and URLSearchParams, a group of their own: programs read URL far more than the rest of the
/// network globals, which load it only when they need a URL class. A run's first URL cost about
/// 3.6 million instructions more than a trivial run when it loaded all the network globals, 1.5
/// million alone (`bench/scenarios/instructions.js`, URL and W1); reading a Response body, which
/// does not load URL, is unchanged within the method's spread.
const WEB_URL_GLOBALS: &str = include_str!("web_url_globals.js");

/// `deflateBound(n)` → the size of the output buffer `deflate` needs for `n` input bytes.
pub(crate) fn zlib_deflate_bound(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let n = args.get(0).number_value(scope).unwrap_or(0.0).max(0.0) as usize;
    rv.set_double(deflate_bound(n) as f64);
}

/// When the code cache of a script `loadScript` compiles is made.
#[derive(Clone, Copy, PartialEq)]
enum CachePolicy {
    /// The first isolate compiles every function of the script and caches all of it: for scripts
    /// whose functions runs call after loading (compiling structuredClone's algorithm lazily in
    /// every isolate cost a run about 0.5 ms).
    Everything,
    /// The first isolate compiles lazily and caches what the script's function compiled once it
    /// has been called: for a script whose call does most of the work (installing globals) and
    /// whose other functions a run calls few of. Deserializing every function of
    /// web_net_globals.js cost a run's first URL about 1 ms, more than compiling the few it uses.
    AfterCall,
}

/// V8's code for each script `loadScript` compiles, made once per process by the first isolate
/// that loads it (see [`CachePolicy`]); later isolates deserialize it instead of compiling.
/// Five entries of our own code, never program text.
static SCRIPT_CODE: [std::sync::OnceLock<Vec<u8>>; 5] = [
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
];

/// `loadScript(name, ...args)` → what the function that `web_streams.js` (`"streams"`),
/// `web_crypto.js` (`"crypto"`), `web_clone.js` (`"clone"`), `web_net_globals.js` (`"net"`) or
/// `web_url_globals.js` (`"url"`) evaluates to returns for `args`; the caller loads each script once per isolate. A compile
/// or run failure leaves V8's exception pending for the caller.
pub(crate) fn load_script(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    use v8::script_compiler::{CachedData, CompileOptions, NoCacheReason, Source};
    let (text, slot, policy) = match string_arg(scope, args.get(0)).as_str() {
        "streams" => (WEB_STREAMS, &SCRIPT_CODE[0], CachePolicy::Everything),
        "crypto" => (WEB_CRYPTO, &SCRIPT_CODE[1], CachePolicy::Everything),
        "clone" => (WEB_CLONE, &SCRIPT_CODE[2], CachePolicy::Everything),
        "net" => (WEB_NET_GLOBALS, &SCRIPT_CODE[3], CachePolicy::AfterCall),
        "url" => (WEB_URL_GLOBALS, &SCRIPT_CODE[4], CachePolicy::Everything),
        _ => return throw_type_error(scope, "loadScript: unknown script"),
    };
    let Some(source) = v8::String::new(scope, text) else {
        return throw_type_error(scope, "loadScript: the script could not be loaded");
    };
    let cached = slot.get();
    let (mut source, options) = match (cached, policy) {
        (Some(bytes), _) => (
            Source::new_with_cached_data(source, None, CachedData::new(bytes)),
            CompileOptions::ConsumeCodeCache,
        ),
        (None, CachePolicy::Everything) => {
            (Source::new(source, None), CompileOptions::EagerCompile)
        }
        (None, CachePolicy::AfterCall) => {
            (Source::new(source, None), CompileOptions::NoCompileOptions)
        }
    };
    let Some(script) =
        v8::script_compiler::compile(scope, &mut source, options, NoCacheReason::NoReason)
    else {
        return;
    };
    let cache = |scope: &mut v8::PinScope| {
        if let Some(data) = script.get_unbound_script(scope).create_code_cache() {
            let _ = slot.set(data.to_vec());
        }
    };
    if cached.is_none() && policy == CachePolicy::Everything {
        cache(scope);
    }
    let Some(factory) = script.run(scope) else {
        return;
    };
    let Ok(factory) = v8::Local::<v8::Function>::try_from(factory) else {
        return throw_type_error(scope, "loadScript: the script is not a function");
    };
    let factory_args: Vec<v8::Local<v8::Value>> = (1..args.length()).map(|i| args.get(i)).collect();
    let undefined = v8::undefined(scope).into();
    let Some(loaded) = factory.call(scope, undefined, &factory_args) else {
        return;
    };
    if cached.is_none() && policy == CachePolicy::AfterCall {
        cache(scope);
    }
    rv.set(loaded);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn aes_cbc_and_ctr_match_the_nist_vectors_and_wrap_their_counted_bits() {
        // NIST SP 800-38A F.2.1 (CBC-AES128) and F.5.1 (CTR-AES128), first block; CBC adds a
        // block of padding.
        let key = unhex("2b7e151628aed2a6abf7158809cf4f3c");
        let plain = unhex("6bc1bee22e409f96e93d7e117393172a");
        let cbc = aes_cbc(
            true,
            &key,
            &unhex("000102030405060708090a0b0c0d0e0f"),
            &plain,
        )
        .unwrap();
        assert_eq!(hex(&cbc[..16]), "7649abac8119b246cee98e9b12e9197d");
        assert_eq!(cbc.len(), 32);
        assert_eq!(
            aes_cbc(
                false,
                &key,
                &unhex("000102030405060708090a0b0c0d0e0f"),
                &cbc
            )
            .unwrap(),
            plain
        );
        assert_eq!(aes_cbc(false, &key, &[0; 16], &cbc[..31]), None);
        let counter = unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
        assert_eq!(
            hex(&aes_ctr(&key, &counter, 128, &plain).unwrap()),
            "874d6191b620e3261bef6864990db6ce"
        );
        // With 8 counted bits from 0xff, the second block's counter is ...fe00, not ...ff00 + carry.
        let two = [0u8; 32];
        let wrapped = aes_ctr(&key, &counter, 8, &two).unwrap();
        let second = aes_ctr(
            &key,
            &unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfe00"),
            128,
            &[0u8; 16],
        )
        .unwrap();
        assert_eq!(wrapped[16..], second[..]);
        assert_ne!(
            wrapped[16..],
            aes_ctr(&key, &counter, 128, &two).unwrap()[16..]
        );
        // 2^length blocks at most; no length 0 or past 128.
        assert!(aes_ctr(&key, &counter, 1, &[0; 32]).is_some());
        assert_eq!(aes_ctr(&key, &counter, 1, &[0; 33]), None);
        assert_eq!(aes_ctr(&key, &counter, 0, &plain), None);
        assert_eq!(aes_ctr(&key, &counter, 129, &plain), None);
    }

    #[test]
    fn ecdsa_verifies_node_signatures_with_any_hash_and_round_trips() {
        // (curve, hash, private scalar, public point, a signature of "sample" that Node 20
        // (OpenSSL) made): a hash longer than the order (P-256 with SHA-512, truncated) and
        // shorter than half the field (SHA-1 on P-384 and P-521, which RustCrypto alone refuses).
        let vectors = [
            (
                "P-256",
                "SHA-512",
                "94e0be0508ecfa2d747ec58534ba35c2b2b731bc02022d11be993c3a674b2df5",
                "042ea11ad5b208d1fb591529f2b30de51068a3609072beb9eb1b3ba3cfb745a2a65fda399a91c1f0d609923af4b16ef63787d181025986f4b3c2082cef46940619",
                "9863f0a0052239160c4ab6b77bb8fda8f28fdfb80da68be59d583e88396a913c75e8748dd1d910a4beaa939a4767786d508df06a87131289c8eaa37e5f66ce7b",
            ),
            (
                "P-384",
                "SHA-1",
                "82aaed81dc24e455ad4d778c984b75b95b96a4b35370dd81a8b592be41bcf5c302d1d10c464acff1405c1258ba7319a5",
                "043c04477e089f61d07971ad1cd3c315f2fcaaf37d223810fed775f4dec6db79e9201c5f304f9858dfa743d95a7e9ae183f089a4ffbe1fac7af6b04d7bf06ed1e6263b54b40e5f57076df96e1c4853b048ddd76768aeeacf2e5f5556148cfc12a9",
                "bff284d874e18b75afa9cc8f6b7a4f26fad3515745076a6c67d5a1e9b7e95d8a22761469876c881d6ad6a592f3c63e978efbb6203e4ea8be7966fbbd10614a55b8e97b89fdf2fe8785f4cf42a50c5f573893d6ab262d1187d7bf3fe6d538ebfe",
            ),
            (
                "P-521",
                "SHA-1",
                "0018d37616d2e33c095da536f4bfe68082c75a6427d490ae73be04bf628b1ebe60cefd55788ec477fdcd2bf0ee9f37b6289ac6bd790ca3b0598b1701718f818dabff",
                "0400c3ae5e0b96cb9db16d7b0e5f7cbecd05b7a6f81d99aaf074c7e26852e4341b8237e59843bdc48cea168c81587412f2f2ff6a49220075756f39716e6400a62f1ac50037e3bba8b39a251f9d5fb63f6d3df3b09bb6c3048432c16e55feb8843aa3c1c4c950dfa05b91729dfed51ab3ed987b36aba444d17e092b09969da4823c83f321ec",
                "00896d17535fc4542e939adb8d582b992112ba53c07538e92ed11206d0996295577551ec49f1136e272aefacb00a4aaeebd1d5e1c3934a79699a0df9a8709138e0e400391f68964401a1aa0b00b70adfb1259f77b92a5aa10e176ab544488eda8dd80a6bcb9464e87966031a5f8d21d4ece4f59c024c173af2cba18cf190515d24202426",
            ),
            (
                "P-521",
                "SHA-512",
                "0019c920b48f52c86fd97982dc48a8677bd14071668c719a41f4b38d047b15e102020197ca85fa4192db4710717209ec64925ee8be6a45ce75d2ac9382db6bd6cb3a",
                "0400427bf7e6d962978ab4c57df968ba56e5f6735d8045107cfe9c84dc3a78030157504290d1f78432275e199bca686184d612d6be7b7ca23805e526bb4edab9e18e24002001bcdaae5a14dd92e3839004e2aa77b6fca8ddc18cbca9fa2d9e14de712aea2a6615992129f620912f737dbd4e6008576d4cca0f634b4229a2e61e308a9a6018",
                "0010d8e785afc987a3c64ff21143e5502b11b3edf8810b7be92a8743d33803afd1510456948ab847e7dd5f38bc70e2c872676e2f61a3d257dec70058fc80875c0c5101fa1d4cc97a59c70309f09df6d0d7e57ed81215fe3364cc75db7d2e7829e0b1dfd1e98d51c1e9eef397f11b8d6dd088631721ff0aec055170419368294b2e845e82",
            ),
        ];
        for (curve, hash, scalar, point, signature) in vectors {
            let (scalar, point, signature) = (unhex(scalar), unhex(point), unhex(signature));
            assert!(
                ecdsa_verify(curve, hash, &point, b"sample", &signature),
                "{curve} {hash}"
            );
            assert!(!ecdsa_verify(curve, hash, &point, b"samplf", &signature));
            assert!(
                !ecdsa_verify(curve, "SHA-256", &point, b"sample", &signature) || hash == "SHA-256"
            );
            let mut flipped = signature.clone();
            flipped[3] ^= 1;
            assert!(!ecdsa_verify(curve, hash, &point, b"sample", &flipped));
            assert!(!ecdsa_verify(
                curve,
                hash,
                &point,
                b"sample",
                &signature[1..]
            ));
            // The point the agreement derives from the scalar is the key's; the sandbox's own
            // signature verifies, and differs from call to call (fresh randomness in the nonce).
            assert_eq!(agreement_public(curve, &scalar), Some(point.clone()));
            let mine = ecdsa_sign(curve, hash, &scalar, b"sample").expect("signs");
            assert_eq!(mine.len(), signature.len());
            assert!(ecdsa_verify(curve, hash, &point, b"sample", &mine));
            assert_ne!(ecdsa_sign(curve, hash, &scalar, b"sample"), Some(mine));
        }
        // A scalar of the wrong size, zero, or not below the order signs nothing.
        assert_eq!(ecdsa_sign("P-521", "SHA-512", &[1u8; 65], b"x"), None);
        assert_eq!(ecdsa_sign("P-256", "SHA-256", &[0u8; 32], b"x"), None);
        assert_eq!(ecdsa_sign("P-256", "SHA-256", &[0xffu8; 32], b"x"), None);
        assert_eq!(ecdsa_sign("P-224", "SHA-256", &[1u8; 28], b"x"), None);
        assert_eq!(agreement_public("P-521", &[0xffu8; 66]), None);
    }

    #[test]
    fn ec_public_points_are_checked_and_decompressed() {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        for (curve, scalar) in [("P-256", vec![7u8; 32]), ("P-384", vec![7u8; 48])] {
            let uncompressed = agreement_public(curve, &scalar).unwrap();
            let compressed = if curve == "P-256" {
                p256::PublicKey::from_sec1_bytes(&uncompressed)
                    .unwrap()
                    .to_encoded_point(true)
                    .as_bytes()
                    .to_vec()
            } else {
                p384::PublicKey::from_sec1_bytes(&uncompressed)
                    .unwrap()
                    .to_encoded_point(true)
                    .as_bytes()
                    .to_vec()
            };
            assert_eq!(compressed.len(), 1 + scalar.len());
            assert_eq!(ec_public_point(curve, &compressed).unwrap(), uncompressed);
            assert_eq!(ec_public_point(curve, &uncompressed).unwrap(), uncompressed);
            // Off the curve, the identity, the other curve's size: refused.
            let mut off = uncompressed.clone();
            let last = off.len() - 1;
            off[last] ^= 1;
            assert!(ec_public_point(curve, &off).is_none());
            assert!(ec_public_point(curve, &[0]).is_none());
            assert!(ec_public_point(
                if curve == "P-256" { "P-384" } else { "P-256" },
                &uncompressed
            )
            .is_none());
        }
        assert!(ec_public_point("P-521", &[4]).is_none());
    }

    #[test]
    fn aes_192_cbc_ctr_and_kw_match_the_nist_and_rfc_3394_vectors() {
        // NIST SP 800-38A F.2.3 (CBC-AES192) and F.5.3 (CTR-AES192), first block; RFC 3394
        // section 4.2 (128-bit key data under a 192-bit KEK).
        let key = unhex("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b");
        let plain = unhex("6bc1bee22e409f96e93d7e117393172a");
        let iv = unhex("000102030405060708090a0b0c0d0e0f");
        let cbc = aes_cbc(true, &key, &iv, &plain).unwrap();
        assert_eq!(hex(&cbc[..16]), "4f021db243bc633d7178183a9fa071e8");
        assert_eq!(aes_cbc(false, &key, &iv, &cbc).unwrap(), plain);
        let counter = unhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
        assert_eq!(
            hex(&aes_ctr(&key, &counter, 128, &plain).unwrap()),
            "1abc932417521ca24f2b0459fe7e6e0b"
        );
        let kek = unhex("000102030405060708090a0b0c0d0e0f1011121314151617");
        let data = unhex("00112233445566778899aabbccddeeff");
        let wrapped = aes_kw(true, &kek, &data).unwrap();
        assert_eq!(
            hex(&wrapped),
            "96778b25ae6ca435f92b5b97c050aed2468ab8a17ad84e5d"
        );
        assert_eq!(aes_kw(false, &kek, &wrapped).unwrap(), data);
        // AES-GCM-192 (RustCrypto's aes-gcm): GCM's test cases 7 and 8 (zero key and IV).
        let zero = [0u8; 24];
        assert_eq!(
            hex(&aes_gcm(true, &zero, &[0u8; 12], b"", b"", 16).unwrap()),
            "cd33b28ac773f74ba00ed1f312572435"
        );
        let sealed = aes_gcm(true, &zero, &[0u8; 12], &[0u8; 16], b"", 16).unwrap();
        assert_eq!(
            hex(&sealed),
            "98e7247c07f0fe411c267e4384b0f6002ff58d80033927ab8ef4d4587514f0fb"
        );
        assert_eq!(
            aes_gcm(false, &zero, &[0u8; 12], &sealed, b"", 16).unwrap(),
            [0u8; 16]
        );
        assert_eq!(
            aes_gcm(false, &zero, &[0u8; 12], &sealed[..24], b"", 8).unwrap(),
            [0u8; 16]
        );
    }

    #[test]
    fn aes_kw_matches_rfc_3394_and_refuses_what_it_cannot_wrap() {
        // RFC 3394 section 4.1: 128-bit key data under a 128-bit KEK.
        let kek = unhex("000102030405060708090a0b0c0d0e0f");
        let data = unhex("00112233445566778899aabbccddeeff");
        let wrapped = aes_kw(true, &kek, &data).unwrap();
        assert_eq!(
            hex(&wrapped),
            "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5"
        );
        assert_eq!(aes_kw(false, &kek, &wrapped).unwrap(), data);
        let mut tampered = wrapped.clone();
        tampered[0] ^= 1;
        assert_eq!(aes_kw(false, &kek, &tampered), None);
        assert_eq!(aes_kw(true, &kek, &data[..12]), None);
        assert_eq!(aes_kw(true, &kek[..8], &data), None);
    }

    #[test]
    fn key_derivations_match_the_rfc_vectors_and_stop_at_their_bounds() {
        // RFC 7914 section 11 (PBKDF2-HMAC-SHA256, one iteration) and RFC 5869 test case 1.
        let Derived::Bytes(pbkdf2) = pbkdf2_bytes("SHA-256", b"passwd", b"salt", 1, 64) else {
            panic!("PBKDF2 refused");
        };
        assert_eq!(hex(&pbkdf2), "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783");
        let salt: Vec<u8> = (0u8..=12).collect();
        let info: Vec<u8> = (0xf0u8..=0xf9).collect();
        let Derived::Bytes(hkdf) = hkdf_bytes("SHA-256", &[0x0b; 22], &salt, &info, 42) else {
            panic!("HKDF refused");
        };
        assert_eq!(
            hex(&hkdf),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        );
        // The work bound counts output blocks: two SHA-256 blocks at half the bound pass, three do not.
        let half = crate::limits::MAX_PBKDF2_WORK / 2;
        assert!(matches!(
            pbkdf2_bytes("SHA-256", b"p", b"s", half, 64),
            Derived::Bytes(_)
        ));
        assert_eq!(
            pbkdf2_bytes("SHA-256", b"p", b"s", half, 65),
            Derived::OverBound(crate::limits::MAX_PBKDF2_WORK)
        );
        assert_eq!(
            pbkdf2_bytes("SHA-256", b"p", b"s", 1_000_000_000, 32),
            Derived::OverBound(crate::limits::MAX_PBKDF2_WORK)
        );
        assert_eq!(pbkdf2_bytes("SHA-256", b"p", b"s", 0, 32), Derived::Refused);
        assert_eq!(pbkdf2_bytes("MD5", b"p", b"s", 1, 32), Derived::Refused);
        // HKDF gives at most 255 blocks of its hash.
        assert!(matches!(
            hkdf_bytes("SHA-256", b"k", b"", b"", 255 * 32),
            Derived::Bytes(_)
        ));
        assert_eq!(
            hkdf_bytes("SHA-256", b"k", b"", b"", 255 * 32 + 1),
            Derived::Refused
        );
    }

    #[test]
    fn digests_match_the_known_vectors() {
        assert_eq!(
            hex(&digest_bytes("SHA-1", b"abc").unwrap()),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(&digest_bytes("sha-256", b"abc").unwrap()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(digest_bytes("SHA-384", b"").unwrap().len(), 48);
        assert_eq!(digest_bytes("SHA-512", b"").unwrap().len(), 64);
        assert!(digest_bytes("MD5", b"").is_none());
    }

    #[test]
    fn encodings_follow_the_encoding_standard() {
        assert_eq!(encoding_name(" latin1\n").as_deref(), Some("windows-1252"));
        assert_eq!(encoding_name("utf-16").as_deref(), Some("utf-16le"));
        assert_eq!(encoding_name("ISO-8859-2").as_deref(), Some("iso-8859-2"));
        assert_eq!(encoding_name("\u{b}utf-8"), None);
        assert_eq!(encoding_name("iso-2022-kr").as_deref(), Some("replacement"));
        let euro = decode_bytes("windows-1252", &[0x80, 0x41], false, true).unwrap();
        assert_eq!(String::from_utf16(&euro).unwrap(), "\u{20ac}A");
        let sjis = decode_bytes("shift_jis", &[0x82, 0xa0], false, true).unwrap();
        assert_eq!(String::from_utf16(&sjis).unwrap(), "\u{3042}");
        assert!(decode_bytes("shift_jis", &[0x82], true, true).is_none());
        // Streaming: an unfinished lead byte is left for the next chunk, not an error.
        assert_eq!(
            decode_bytes("shift_jis", &[0x41, 0x82], true, false).unwrap(),
            vec![0x41]
        );
        assert_eq!(
            decode_bytes("big5", &[0x81, 0x40], false, false).unwrap(),
            vec![0xfffd, 0x40]
        );
        assert!(decode_bytes("replacement", &[0x41], false, true).is_none());
    }

    #[test]
    fn crypto_matches_the_known_vectors() {
        // RFC 4231, test case 2.
        assert_eq!(
            hex(&hmac_sign("SHA-256", b"Jefe", b"what do ya want for nothing?").unwrap()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mac = hmac_sign("SHA-1", b"k", b"d").unwrap();
        assert!(hmac_verify("SHA-1", b"k", b"d", &mac));
        assert!(!hmac_verify("SHA-1", b"k", b"e", &mac));
        assert!(hmac_sign("MD5", b"k", b"d").is_none());
        let key = [7u8; 16];
        let iv = [1u8; 12];
        let sealed = aes_gcm(true, &key, &iv, b"secret", b"aad", 16).unwrap();
        assert_eq!(sealed.len(), 6 + 16);
        assert_eq!(
            aes_gcm(false, &key, &iv, &sealed, b"aad", 16).unwrap(),
            b"secret"
        );
        assert!(aes_gcm(false, &key, &iv, &sealed, b"other", 16).is_none());
        assert!(aes_gcm(true, &[0u8; 20], &iv, b"", b"", 16).is_none());
        assert!(aes_gcm(true, &key, &[0u8; 20], b"", b"", 16).is_none());
        assert!(aes_gcm(true, &key, &iv, b"", b"", 6).is_none());
        // A shorter tag is the first bytes of the full one (RustCrypto's, checked against ring's),
        // and decryption checks just those bytes.
        for tag_bytes in [4, 8, 12, 15] {
            let short = aes_gcm(true, &key, &iv, b"secret", b"aad", tag_bytes).unwrap();
            assert_eq!(short, sealed[..6 + tag_bytes]);
            assert_eq!(
                aes_gcm(false, &key, &iv, &short, b"aad", tag_bytes).unwrap(),
                b"secret"
            );
            let mut altered = short.clone();
            altered[6 + tag_bytes - 1] ^= 1;
            assert!(aes_gcm(false, &key, &iv, &altered, b"aad", tag_bytes).is_none());
            let mut flipped = short.clone();
            flipped[0] ^= 1;
            assert!(aes_gcm(false, &key, &iv, &flipped, b"aad", tag_bytes).is_none());
            assert!(aes_gcm(false, &key, &iv, &short, b"other", tag_bytes).is_none());
        }
        // RFC 8032, test 1 (the empty message).
        let unhex = |h: &str| -> Vec<u8> {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        };
        let public = unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        let mut signature = unhex(concat!(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155",
            "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ));
        assert!(signature_verify("Ed25519", &public, b"", &signature));
        assert!(!signature_verify("Ed25519", &public, b"x", &signature));
        signature[0] ^= 1;
        assert!(!signature_verify("Ed25519", &public, b"", &signature));
        assert!(!signature_verify("RSA", &[], b"", &[]));
    }

    #[test]
    fn compression_round_trips_and_refuses_bad_input() {
        let data = b"hello hello hello hello".repeat(100);
        for format in ["gzip", "deflate", "deflate-raw"] {
            let packed = deflate_bytes(format, &data).unwrap();
            assert!(packed.len() <= deflate_bound(data.len()));
            let mut out = Vec::new();
            inflate_with(format, &packed, |p| {
                out.extend_from_slice(p);
                true
            })
            .unwrap();
            assert_eq!(out, data);
            assert!(inflate_with(format, &packed[..packed.len() - 2], |_| true).is_err());
            let mut junk = packed.clone();
            junk.push(0);
            assert!(inflate_with(format, &junk, |_| true).is_err());
            assert!(inflate_with(format, &packed, |_| false).is_err());
        }
        assert!(deflate_bytes("br", b"").is_none());
        let random: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert!(deflate_bytes("gzip", &random).unwrap().len() <= deflate_bound(random.len()));
    }

    #[test]
    fn url_components_follow_whatwg() {
        let url = parse("../c?x=1#h", Some("https://user:pw@example.com:8080/a/b")).unwrap();
        let c = components(&url);
        assert_eq!(c[0], "https://user:pw@example.com:8080/c?x=1#h");
        assert_eq!(c[1], "https://example.com:8080");
        assert_eq!(
            &c[2..],
            [
                "https:",
                "user",
                "pw",
                "example.com:8080",
                "example.com",
                "8080",
                "/c",
                "?x=1",
                "#h"
            ]
        );
        assert!(parse("not a url", None).is_none());
    }

    #[test]
    fn urls_follow_the_standard_where_the_url_crate_did_not() {
        let href =
            |input: &str, base: Option<&str>| parse(input, base).map(|u| u.href().to_string());
        // Three or more slashes against a special base name a host.
        assert_eq!(
            href("///test", Some("http://example.org/")).as_deref(),
            Some("http://test/")
        );
        assert_eq!(
            href(" /\t//x/y ", Some("https://a/")).as_deref(),
            Some("https://x/y")
        );
        assert_eq!(href("///", Some("http://example.org/")), None);
        assert_eq!(href("///x", Some("foo://a/")).as_deref(), Some("foo:///x"));
        // file: URLs: a drive letter's `|`, and a host kept before a drive letter.
        assert_eq!(href("file:///C|/x", None).as_deref(), Some("file:///C:/x"));
        assert_eq!(
            href("file://example.net/C:/", None).as_deref(),
            Some("file://example.net/C:/")
        );
        assert_eq!(
            href("/C|\\foo", Some("file://host/dir/file")).as_deref(),
            Some("file://host/C:/foo")
        );
        // A blob: URL's origin is its inner URL's only for http(s).
        let origin = |input: &str| components(&parse(input, None).unwrap())[1].clone();
        assert_eq!(
            origin("blob:https://a.example:8080/x"),
            "https://a.example:8080"
        );
        assert_eq!(origin("blob:blob:https://a.example/x"), "null");
        assert_eq!(origin("blob:ftp://a/x"), "null");
        // A path that starts with `//` on a URL without a host stays a path.
        let mut url = parse("sc:/a", None).unwrap();
        let _ = url.set_pathname(Some("//b"));
        assert_eq!(url.href(), "sc:/.//b");
    }
}
