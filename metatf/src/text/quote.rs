//! The quoted byte strings of the text form: printable ASCII as itself except `"` and `\`,
//! which are `\"` and `\\`; every other byte is `\xHH` (two lower-case hex digits).

/// Appends `bytes` as a quoted string.
pub(crate) fn quote(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
}

/// Parses a quoted string at the start of `s`, returning the bytes and the characters used,
/// or an error message and the offset of the problem.
pub(crate) fn unquote(s: &str) -> Result<(Vec<u8>, usize), (String, usize)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return Err(("expected `\"`".into(), 0));
    }
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        match b.get(i) {
            None => return Err(("unterminated string".into(), i)),
            Some(b'"') => return Ok((out, i + 1)),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'"') => {
                    out.push(b'"');
                    i += 2;
                }
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                Some(b'x') => {
                    let hex = s.get(i + 2..i + 4).filter(|h| {
                        h.bytes()
                            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
                    });
                    match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        Some(v) => out.push(v),
                        None => return Err(("`\\x` needs two lower-case hex digits".into(), i)),
                    }
                    i += 4;
                }
                _ => return Err(("unknown escape (use \\\", \\\\ or \\xHH)".into(), i)),
            },
            Some(&c) if (0x20..=0x7e).contains(&c) => {
                out.push(c);
                i += 1;
            }
            Some(_) => {
                return Err((
                    "bytes outside printable ASCII must be written \\xHH".into(),
                    i,
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips_and_the_form_is_canonical() {
        let all: Vec<u8> = (0..=255).collect();
        let mut s = String::new();
        quote(&mut s, &all);
        let (back, used) = unquote(&s).unwrap();
        assert_eq!((back, used), (all, s.len()));
        let mut t = String::new();
        quote(&mut t, b"a\"b\\c\n");
        assert_eq!(t, r#""a\"b\\c\x0a""#);
        assert!(unquote(r#""\x0A""#).is_err());
        assert!(unquote("\"é\"").is_err());
        assert!(unquote("\"abc").is_err());
    }
}
