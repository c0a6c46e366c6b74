//! Natives behind the sandbox's Web globals that need more than JavaScript: WHATWG URL parsing
//! and setters (the `url` crate's `quirks` module is the JS URL API), form encoding for
//! URLSearchParams, and SHA digests for `crypto.subtle.digest`.

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

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
fn components(url: &url::Url) -> [String; 11] {
    use url::quirks;
    [
        quirks::href(url).to_string(),
        quirks::origin(url),
        quirks::protocol(url).to_string(),
        quirks::username(url).to_string(),
        quirks::password(url).to_string(),
        quirks::host(url).to_string(),
        quirks::hostname(url).to_string(),
        quirks::port(url).to_string(),
        quirks::pathname(url).to_string(),
        quirks::search(url).to_string(),
        quirks::hash(url).to_string(),
    ]
}

fn parse(input: &str, base: Option<&str>) -> Option<url::Url> {
    match base {
        Some(base) => url::Url::parse(base).ok()?.join(input).ok(),
        None => url::Url::parse(input).ok(),
    }
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
    use url::quirks;
    let href = string_arg(scope, args.get(0));
    let component = string_arg(scope, args.get(1));
    let value = string_arg(scope, args.get(2));
    let Ok(mut url) = url::Url::parse(&href) else {
        return rv.set_null();
    };
    // Only `href` reports failure (a TypeError in JS); the other setters ignore invalid values.
    let applied = match component.as_str() {
        "href" => quirks::set_href(&mut url, &value).is_ok(),
        "protocol" => {
            let _ = quirks::set_protocol(&mut url, &value);
            true
        }
        "username" => {
            let _ = quirks::set_username(&mut url, &value);
            true
        }
        "password" => {
            let _ = quirks::set_password(&mut url, &value);
            true
        }
        "host" => {
            let _ = quirks::set_host(&mut url, &value);
            true
        }
        "hostname" => {
            let _ = quirks::set_hostname(&mut url, &value);
            true
        }
        "port" => {
            let _ = quirks::set_port(&mut url, &value);
            true
        }
        "pathname" => {
            quirks::set_pathname(&mut url, &value);
            true
        }
        "search" => {
            quirks::set_search(&mut url, &value);
            true
        }
        "hash" => {
            quirks::set_hash(&mut url, &value);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
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
}
