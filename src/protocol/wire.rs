//! Field encoding inside one frame: little-endian integers and floats, strings as a `u32` byte
//! length followed by UTF-8, optional strings behind a one-byte presence flag, lists behind a
//! `u32` count. Decoding never trusts a length: every read is checked against what is left.

/// Appends fields to a frame body.
#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn with_capacity(n: usize) -> Self {
        Writer {
            bytes: Vec::with_capacity(n),
        }
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn str(&mut self, v: &str) -> &mut Self {
        self.u32(v.len() as u32);
        self.bytes.extend_from_slice(v.as_bytes());
        self
    }
    pub fn opt_str(&mut self, v: Option<&str>) -> &mut Self {
        match v {
            None => self.u8(0),
            Some(s) => self.u8(1).str(s),
        }
    }
    pub fn str_list(&mut self, v: &[String]) -> &mut Self {
        self.u32(v.len() as u32);
        for s in v {
            self.str(s);
        }
        self
    }
}

/// Reads fields from a frame body.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub type Decoded<T> = Result<T, DecodeError>;

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| DecodeError(format!("frame truncated at byte {}", self.at)))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn array<const N: usize>(&mut self) -> Decoded<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    pub fn u8(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Decoded<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    pub fn str(&mut self) -> Decoded<String> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| DecodeError(format!("string before byte {} is not UTF-8", self.at)))
    }
    pub fn opt_str(&mut self) -> Decoded<Option<String>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.str()?)),
            flag => Err(DecodeError(format!("bad presence flag {flag}"))),
        }
    }
    pub fn str_list(&mut self) -> Decoded<Vec<String>> {
        let count = self.u32()? as usize;
        // Each string takes at least its 4-byte length, so a count larger than that is a lie.
        if count > (self.bytes.len() - self.at) / 4 {
            return Err(DecodeError(format!("list of {count} strings cannot fit")));
        }
        (0..count).map(|_| self.str()).collect()
    }
    /// Fails unless every byte was consumed (trailing bytes mean a malformed frame).
    pub fn finish(&self) -> Decoded<()> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(DecodeError(format!(
                "{} trailing bytes",
                self.bytes.len() - self.at
            )))
        }
    }
}
