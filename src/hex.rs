//! 32-byte hashes written as lower-case hex: file tags (`ETag`) and the
//! hashes of token secrets.

/// `hash` in lower-case hex, two digits a byte.
pub fn encode(hash: &[u8; 32]) -> String {
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The hash whose [`encode`] is `text` (either letter case): 64 hex digits.
pub fn decode(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut hash = [0; 32];
    for (i, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(hash)
}
