//! RSA for `crypto.subtle`'s RSASSA-PKCS1-v1_5 and RSA-PSS: keys of 1024 to 8192 bits, any of
//! SHA-1/256/384/512, any PSS salt length, and key generation, through AWS-LC's RSA functions
//! (constant-time and blinded, the library aws-lc-rs wraps). aws-lc-rs itself stops at 2048-bit
//! keys and salts of the hash's length, and ring signs neither with SHA-1 nor with other salts;
//! Web Crypto (and Node, which programs are compared with) allows all of them. Keys cross this
//! module as PKCS #1 DER (RSAPrivateKey, RSAPublicKey); the digests come from `digest_bytes`.

use std::ffi::c_int;
use std::ptr::NonNull;

use aws_lc_sys as lc;

/// The moduli accepted: Web Crypto's tests and Node go down to 1024 bits; above 8192 one private
/// operation costs tens of milliseconds of CPU in a call the run's timeout cannot interrupt.
pub(crate) const RSA_BITS: std::ops::RangeInclusive<u32> = 1024..=8192;

/// The moduli `generateKey` makes: generating takes seconds of CPU past 4096 bits.
pub(crate) const RSA_GENERATED_BITS: std::ops::RangeInclusive<u32> = 1024..=4096;

/// Empties AWS-LC's per-thread error queue when dropped: a refused key or a failed verification
/// leaves an entry there that nothing reads, and a run's many calls would otherwise grow it.
struct ClearErrors;

impl Drop for ClearErrors {
    fn drop(&mut self) {
        // SAFETY: ERR_clear_error only touches this thread's error queue.
        unsafe { lc::ERR_clear_error() }
    }
}

/// An AWS-LC `RSA` object this module owns (freed on drop).
struct RsaKey(NonNull<lc::RSA>);

impl Drop for RsaKey {
    fn drop(&mut self) {
        // SAFETY: the pointer came from an AWS-LC constructor, is owned by this value alone and is
        // freed once, here.
        unsafe { lc::RSA_free(self.0.as_ptr()) }
    }
}

/// How a signature is padded: PKCS #1 v1.5 or PSS with MGF1 over the same hash and this salt.
#[derive(Clone, Copy)]
pub(crate) enum RsaPadding {
    Pkcs1,
    Pss { salt_len: usize },
}

/// The hash's AWS-LC digest and NID, for a Web Crypto hash name.
fn hash_of(hash: &str) -> Option<(*const lc::EVP_MD, c_int)> {
    // SAFETY: the EVP_sha* functions return pointers to static, immutable descriptors.
    Some(unsafe {
        match hash {
            "SHA-1" => (lc::EVP_sha1(), lc::NID_sha1),
            "SHA-256" => (lc::EVP_sha256(), lc::NID_sha256),
            "SHA-384" => (lc::EVP_sha384(), lc::NID_sha384),
            "SHA-512" => (lc::EVP_sha512(), lc::NID_sha512),
            _ => return None,
        }
    })
}

impl RsaKey {
    fn from_raw(raw: *mut lc::RSA) -> Option<Self> {
        let key = Self(NonNull::new(raw)?);
        RSA_BITS.contains(&key.bits()).then_some(key)
    }

    /// An RSAPrivateKey. Its parts are checked to belong together once, when a key is imported
    /// ([`rsa_public_of`]); signing and decrypting read the PKCS #1 the sandbox kept from then.
    fn private_from_pkcs1(der: &[u8]) -> Option<Self> {
        // SAFETY: `der` is a live slice of `der.len()` bytes that AWS-LC only reads.
        let raw = unsafe { lc::RSA_private_key_from_bytes(der.as_ptr(), der.len()) };
        Self::from_raw(raw)
    }

    /// Whether the key is consistent (n = p·q, d inverts e, the CRT values).
    fn is_consistent(&self) -> bool {
        // SAFETY: the key is a valid RSA object owned by `self`.
        unsafe { lc::RSA_check_key(self.0.as_ptr()) == 1 }
    }

    /// An RSAPublicKey.
    fn public_from_pkcs1(der: &[u8]) -> Option<Self> {
        // SAFETY: as in `private_from_pkcs1`.
        Self::from_raw(unsafe { lc::RSA_public_key_from_bytes(der.as_ptr(), der.len()) })
    }

    fn bits(&self) -> u32 {
        // SAFETY: the key is a valid RSA object owned by `self`.
        unsafe { lc::RSA_bits(self.0.as_ptr()) }
    }

    /// The modulus's length in bytes: a signature's, and the most an OAEP operation writes.
    fn size(&self) -> usize {
        // SAFETY: the key is a valid RSA object owned by `self`.
        unsafe { lc::RSA_size(self.0.as_ptr()) as usize }
    }

    /// The key as PKCS #1 DER: its RSAPrivateKey or, with `public`, its RSAPublicKey.
    fn to_pkcs1(&self, public: bool) -> Option<Vec<u8>> {
        let mut out: *mut u8 = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: AWS-LC allocates `out` (len bytes) on success; it is copied and then freed with
        // OPENSSL_free below, once.
        let ok = unsafe {
            if public {
                lc::RSA_public_key_to_bytes(&mut out, &mut len, self.0.as_ptr())
            } else {
                lc::RSA_private_key_to_bytes(&mut out, &mut len, self.0.as_ptr())
            }
        };
        if ok != 1 || out.is_null() {
            return None;
        }
        // SAFETY: on success `out` points to `len` initialized bytes that AWS-LC allocated.
        let bytes = unsafe { std::slice::from_raw_parts(out, len) }.to_vec();
        // SAFETY: `out` was allocated by AWS-LC and is not used after this.
        unsafe { lc::OPENSSL_free(out.cast()) };
        Some(bytes)
    }
}

/// The public half (RSAPublicKey DER) of an RSAPrivateKey of 1024 to 8192 bits that is
/// consistent; None otherwise.
pub(crate) fn rsa_public_of(private_pkcs1: &[u8]) -> Option<Vec<u8>> {
    let _errors = ClearErrors;
    let key = RsaKey::private_from_pkcs1(private_pkcs1)?;
    if !key.is_consistent() {
        return None;
    }
    key.to_pkcs1(true)
}

/// A new RSAPrivateKey of `bits` (see [`RSA_GENERATED_BITS`]) with the public exponent
/// `exponent`, which must be odd and at least 3 (with an even one no prime p has p − 1 prime to
/// it, and AWS-LC's search would never end); None for those, when AWS-LC refuses the size, or
/// when `go_on` says stop. The search for primes can take seconds of CPU (a 4096-bit key on a busy
/// core), far past a run's deadline, so AWS-LC asks `go_on` before each candidate and during each
/// primality test, and gives up at once when it answers false.
pub(crate) fn rsa_generate_pkcs1(
    bits: u32,
    exponent: u32,
    go_on: &dyn Fn() -> bool,
) -> Option<Vec<u8>> {
    if !RSA_GENERATED_BITS.contains(&bits) || exponent < 3 || exponent.is_multiple_of(2) {
        return None;
    }
    let _errors = ClearErrors;
    // AWS-LC's progress callback: its argument is `go_on`, which outlives the call below.
    unsafe extern "C" fn ask(_event: c_int, _n: c_int, callback: *mut lc::BN_GENCB) -> c_int {
        // SAFETY: the argument was set below to a pointer to `go_on`, a reference that lives
        // until RSA_generate_key_ex (the only caller of this function) returns.
        let go_on = unsafe { &*(lc::BN_GENCB_get_arg(callback) as *const &dyn Fn() -> bool) };
        c_int::from(go_on())
    }
    // SAFETY: BN_new, BN_GENCB_new and RSA_new return owned objects or null; each is freed once
    // below (the RSA through RsaKey's drop). RSA_generate_key_ex only reads `e` and calls `ask`
    // with the callback's argument, a pointer to `go_on`, which lives past the call.
    unsafe {
        let e = lc::BN_new();
        if e.is_null() {
            return None;
        }
        let progress = lc::BN_GENCB_new();
        if progress.is_null() {
            lc::BN_free(e);
            return None;
        }
        lc::BN_GENCB_set(
            progress,
            Some(ask),
            &go_on as *const &dyn Fn() -> bool as *mut std::ffi::c_void,
        );
        let raw = lc::RSA_new();
        let generated = !raw.is_null()
            && lc::BN_set_word(e, lc::BN_ULONG::from(exponent)) == 1
            && lc::RSA_generate_key_ex(raw, bits as c_int, e, progress) == 1;
        lc::BN_GENCB_free(progress);
        lc::BN_free(e);
        let key = RsaKey(NonNull::new(raw)?);
        if !generated {
            return None;
        }
        key.to_pkcs1(false)
    }
}

/// The signature of `data` hashed with `hash`, by an RSAPrivateKey (PKCS #1 DER), padded with
/// `padding`; None for a key, hash or salt AWS-LC refuses (a salt too long for the key, say).
pub(crate) fn rsa_sign(
    private_pkcs1: &[u8],
    hash: &str,
    padding: RsaPadding,
    data: &[u8],
) -> Option<Vec<u8>> {
    let _errors = ClearErrors;
    let key = RsaKey::private_from_pkcs1(private_pkcs1)?;
    let (md, nid) = hash_of(hash)?;
    let digest = super::web_natives::digest_bytes(hash, data)?;
    let size = key.size();
    let mut out = vec![0u8; size];
    // SAFETY: `out` has room for `size` bytes, the most either function writes; `digest` is a
    // live slice; the key and the static digest descriptor outlive the calls.
    let written = unsafe {
        match padding {
            RsaPadding::Pkcs1 => {
                let mut len: std::ffi::c_uint = 0;
                let ok = lc::RSA_sign(
                    nid,
                    digest.as_ptr(),
                    digest.len(),
                    out.as_mut_ptr(),
                    &mut len,
                    key.0.as_ptr(),
                );
                (ok == 1).then_some(len as usize)
            }
            RsaPadding::Pss { salt_len } => {
                let salt = c_int::try_from(salt_len).ok()?;
                let mut len = 0usize;
                let ok = lc::RSA_sign_pss_mgf1(
                    key.0.as_ptr(),
                    &mut len,
                    out.as_mut_ptr(),
                    size,
                    digest.as_ptr(),
                    digest.len(),
                    md,
                    md,
                    salt,
                );
                (ok == 1).then_some(len)
            }
        }
    }?;
    out.truncate(written);
    Some(out)
}

/// Whether `signature` is the signature of `data` hashed with `hash`, padded with `padding`, by
/// the RSAPublicKey (PKCS #1 DER) `public_pkcs1`.
pub(crate) fn rsa_verify(
    public_pkcs1: &[u8],
    hash: &str,
    padding: RsaPadding,
    data: &[u8],
    signature: &[u8],
) -> bool {
    let _errors = ClearErrors;
    let (Some(key), Some((md, nid)), Some(digest)) = (
        RsaKey::public_from_pkcs1(public_pkcs1),
        hash_of(hash),
        super::web_natives::digest_bytes(hash, data),
    ) else {
        return false;
    };
    // SAFETY: `digest` and `signature` are live slices AWS-LC only reads; the key and the static
    // digest descriptor outlive the calls.
    let ok = unsafe {
        match padding {
            RsaPadding::Pkcs1 => lc::RSA_verify(
                nid,
                digest.as_ptr(),
                digest.len(),
                signature.as_ptr(),
                signature.len(),
                key.0.as_ptr(),
            ),
            RsaPadding::Pss { salt_len } => {
                let Ok(salt) = c_int::try_from(salt_len) else {
                    return false;
                };
                lc::RSA_verify_pss_mgf1(
                    key.0.as_ptr(),
                    digest.as_ptr(),
                    digest.len(),
                    md,
                    md,
                    salt,
                    signature.as_ptr(),
                    signature.len(),
                )
            }
        }
    };
    ok == 1
}

/// An `EVP_PKEY` holding a reference to an RSA key and a context for one operation on it; both
/// freed on drop (the RSA key stays owned by its [`RsaKey`]).
struct PkeyContext {
    pkey: NonNull<lc::EVP_PKEY>,
    ctx: NonNull<lc::EVP_PKEY_CTX>,
}

impl PkeyContext {
    fn new(key: &RsaKey) -> Option<Self> {
        // SAFETY: EVP_PKEY_new returns an owned object or null; EVP_PKEY_set1_RSA takes its own
        // reference to the key (up-ref), so each object is freed once: the pkey and context here
        // or by Drop, the key by RsaKey.
        unsafe {
            let pkey = NonNull::new(lc::EVP_PKEY_new())?;
            if lc::EVP_PKEY_set1_RSA(pkey.as_ptr(), key.0.as_ptr()) != 1 {
                lc::EVP_PKEY_free(pkey.as_ptr());
                return None;
            }
            let Some(ctx) = NonNull::new(lc::EVP_PKEY_CTX_new(pkey.as_ptr(), std::ptr::null_mut()))
            else {
                lc::EVP_PKEY_free(pkey.as_ptr());
                return None;
            };
            Some(Self { pkey, ctx })
        }
    }
}

impl Drop for PkeyContext {
    fn drop(&mut self) {
        // SAFETY: both were made in `new`, are owned by this value alone and freed once, the
        // context (which references the pkey) first.
        unsafe {
            lc::EVP_PKEY_CTX_free(self.ctx.as_ptr());
            lc::EVP_PKEY_free(self.pkey.as_ptr());
        }
    }
}

/// RSA-OAEP with `hash` for the OAEP digest and MGF1 (Web Crypto uses one hash for both) and
/// `label`: encrypting with an RSAPublicKey, or decrypting with an RSAPrivateKey (PKCS #1 DER),
/// of 1024 to 8192 bits. None when the key is refused, the message is too long for the key, or
/// the ciphertext does not decrypt (one answer for every decryption failure, from AWS-LC's
/// constant-time unpadding).
pub(crate) fn rsa_oaep(
    encrypt: bool,
    hash: &str,
    key_pkcs1: &[u8],
    data: &[u8],
    label: &[u8],
) -> Option<Vec<u8>> {
    let _errors = ClearErrors;
    let key = if encrypt {
        RsaKey::public_from_pkcs1(key_pkcs1)?
    } else {
        RsaKey::private_from_pkcs1(key_pkcs1)?
    };
    let (md, _) = hash_of(hash)?;
    let context = PkeyContext::new(&key)?;
    let ctx = context.ctx.as_ptr();
    let size = key.size();
    // SAFETY: `ctx` is a live context over the key; the digest descriptor is static; the label's
    // copy is allocated with OPENSSL_malloc and handed to the context, which frees it (or freed
    // here when the context refuses it); `data` and `out` are live slices of the lengths given.
    unsafe {
        let init = if encrypt {
            lc::EVP_PKEY_encrypt_init(ctx)
        } else {
            lc::EVP_PKEY_decrypt_init(ctx)
        };
        if init != 1
            || lc::EVP_PKEY_CTX_set_rsa_padding(ctx, lc::RSA_PKCS1_OAEP_PADDING) != 1
            || lc::EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) != 1
            || lc::EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) != 1
        {
            return None;
        }
        if !label.is_empty() {
            let copy = lc::OPENSSL_malloc(label.len()).cast::<u8>();
            if copy.is_null() {
                return None;
            }
            std::ptr::copy_nonoverlapping(label.as_ptr(), copy, label.len());
            if lc::EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, copy, label.len()) != 1 {
                lc::OPENSSL_free(copy.cast());
                return None;
            }
        }
        let mut out = vec![0u8; size];
        let mut len = size;
        let ok = if encrypt {
            lc::EVP_PKEY_encrypt(ctx, out.as_mut_ptr(), &mut len, data.as_ptr(), data.len())
        } else {
            lc::EVP_PKEY_decrypt(ctx, out.as_mut_ptr(), &mut len, data.as_ptr(), data.len())
        };
        if ok != 1 {
            return None;
        }
        out.truncate(len);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsa_signs_and_verifies_every_padding_hash_and_size_it_accepts() {
        for bits in [1024, 2048] {
            let private = rsa_generate_pkcs1(bits, 65537, &|| true).expect("generates");
            let public = rsa_public_of(&private).expect("a consistent key");
            for hash in ["SHA-1", "SHA-256", "SHA-384", "SHA-512"] {
                for padding in [
                    RsaPadding::Pkcs1,
                    RsaPadding::Pss { salt_len: 0 },
                    RsaPadding::Pss { salt_len: 20 },
                    RsaPadding::Pss { salt_len: 32 },
                ] {
                    let signature = rsa_sign(&private, hash, padding, b"message").expect("signs");
                    assert_eq!(signature.len(), bits as usize / 8);
                    assert!(rsa_verify(&public, hash, padding, b"message", &signature));
                    assert!(!rsa_verify(&public, hash, padding, b"massage", &signature));
                    let mut flipped = signature.clone();
                    flipped[10] ^= 1;
                    assert!(!rsa_verify(&public, hash, padding, b"message", &flipped));
                }
                // PSS verifies with the salt length it was signed with only.
                let pss = rsa_sign(&private, hash, RsaPadding::Pss { salt_len: 20 }, b"m").unwrap();
                assert!(!rsa_verify(
                    &public,
                    hash,
                    RsaPadding::Pss { salt_len: 21 },
                    b"m",
                    &pss
                ));
                assert!(!rsa_verify(&public, hash, RsaPadding::Pkcs1, b"m", &pss));
            }
            // PKCS #1 v1.5 is deterministic; a salted PSS signature is not.
            let a = rsa_sign(&private, "SHA-256", RsaPadding::Pkcs1, b"m");
            assert_eq!(a, rsa_sign(&private, "SHA-256", RsaPadding::Pkcs1, b"m"));
            let salted = RsaPadding::Pss { salt_len: 32 };
            assert_ne!(
                rsa_sign(&private, "SHA-256", salted, b"m"),
                rsa_sign(&private, "SHA-256", salted, b"m")
            );
            // A salt longer than the key leaves room for is refused, not truncated.
            assert_eq!(
                rsa_sign(
                    &private,
                    "SHA-512",
                    RsaPadding::Pss { salt_len: 1000 },
                    b"m"
                ),
                None
            );
        }
        // Sizes and exponents the generator refuses; keys that are not keys.
        assert_eq!(rsa_generate_pkcs1(512, 65537, &|| true), None);
        assert_eq!(rsa_generate_pkcs1(8192, 65537, &|| true), None);
        assert_eq!(rsa_generate_pkcs1(2048, 1, &|| true), None);
        assert_eq!(rsa_generate_pkcs1(2048, 65536, &|| true), None);
        assert_eq!(rsa_public_of(b"not DER"), None);
        assert!(!rsa_verify(
            b"not DER",
            "SHA-256",
            RsaPadding::Pkcs1,
            b"m",
            &[0u8; 256]
        ));
        let private = rsa_generate_pkcs1(2048, 3, &|| true).expect("exponent 3");
        let public = rsa_public_of(&private).unwrap();
        assert_eq!(rsa_sign(&public, "SHA-256", RsaPadding::Pkcs1, b"m"), None);
        assert_eq!(rsa_sign(&private, "SHA-224", RsaPadding::Pkcs1, b"m"), None);
        // An RSAPrivateKey whose parts do not belong together is refused (d changed).
        let mut broken = private.clone();
        let at = broken.len() - 300;
        broken[at] ^= 1;
        assert_eq!(rsa_public_of(&broken), None);
    }

    #[test]
    fn key_generation_asks_whether_to_go_on_and_stops_when_told() {
        // Told to stop after a few questions: no key, and no more questions after the "no".
        let asked = std::cell::Cell::new(0u32);
        let stop_at_third = || {
            asked.set(asked.get() + 1);
            asked.get() < 3
        };
        assert_eq!(rsa_generate_pkcs1(4096, 65537, &stop_at_third), None);
        assert_eq!(asked.get(), 3);
        // Let go on, it asks many times on the way to a key (each candidate prime at least).
        asked.set(0);
        let always = || {
            asked.set(asked.get() + 1);
            true
        };
        assert!(rsa_generate_pkcs1(1024, 65537, &always).is_some());
        assert!(asked.get() > 2, "asked {} times", asked.get());
        // A stop leaves nothing behind on this thread: the next key is made as usual.
        assert!(rsa_generate_pkcs1(1024, 65537, &|| true).is_some());
    }

    #[test]
    fn rsa_oaep_round_trips_with_every_hash_and_refuses_what_it_should() {
        let private = rsa_generate_pkcs1(1024, 65537, &|| true).expect("a 1024-bit key");
        let public = rsa_public_of(&private).unwrap();
        for hash in ["SHA-1", "SHA-256", "SHA-384"] {
            let sealed = rsa_oaep(true, hash, &public, b"payload", b"label").expect("encrypts");
            assert_eq!(sealed.len(), 128);
            // Randomized padding: encrypting again gives another ciphertext.
            assert_ne!(
                rsa_oaep(true, hash, &public, b"payload", b"label"),
                Some(sealed.clone())
            );
            assert_eq!(
                rsa_oaep(false, hash, &private, &sealed, b"label"),
                Some(b"payload".to_vec())
            );
            assert_eq!(rsa_oaep(false, hash, &private, &sealed, b"other"), None);
            assert_eq!(rsa_oaep(false, hash, &private, &sealed, b""), None);
            assert_eq!(
                rsa_oaep(false, hash, &private, &sealed[1..], b"label"),
                None
            );
            let empty = rsa_oaep(true, hash, &public, b"", b"").expect("an empty message");
            assert_eq!(
                rsa_oaep(false, hash, &private, &empty, b""),
                Some(Vec::new())
            );
        }
        // SHA-512 OAEP needs 2 × 64 + 2 bytes of room: more than a 1024-bit key has for a byte.
        assert_eq!(rsa_oaep(true, "SHA-512", &public, b"x", b""), None);
        // The longest message is the key's size less twice the hash and two bytes.
        assert!(rsa_oaep(true, "SHA-256", &public, &[7u8; 62], b"").is_some());
        assert_eq!(rsa_oaep(true, "SHA-256", &public, &[7u8; 63], b""), None);
        assert_eq!(rsa_oaep(true, "SHA-224", &public, b"x", b""), None);
        assert_eq!(rsa_oaep(true, "SHA-256", b"not DER", b"x", b""), None);
        assert_eq!(rsa_oaep(false, "SHA-256", &public, &[0u8; 128], b""), None);
    }
}
