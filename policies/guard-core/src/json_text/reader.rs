//! JSON text read in place, as strictly as serde_json reads it, by a view
//! that borrows plain strings and passes over the rest: a List of thousands
//! of objects read without a call through serde for every token of it.
//!
//! Each reading answers `None` wherever serde_json, reading the same text
//! from a `&str` into borrowed `&str` fields and passing over the rest as
//! `IgnoredAny`, would fail: a syntax error anywhere, a control character
//! in a string, an escape it does not know, a field of another type. It
//! also answers `None` where it does not answer for the text though serde
//! would read it: a string with an escape where a string is read (serde
//! refuses to borrow it too), an object's name with an escape, a value
//! passed over that nests more than [`PASSED_DEPTH`] deep. The caller then
//! reads the text through serde, whose answer stands; after a `None` the
//! reader is left anywhere.

use super::scan::string_stop;

/// The most containers a passed-over value may nest for this reader to
/// answer (serde_json passes over any nesting, without a limit).
pub const PASSED_DEPTH: u32 = 64;

/// A position in a JSON text, read forwards.
pub struct TextReader<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> TextReader<'t> {
    pub fn new(text: &'t str) -> Self {
        Self { text, at: 0 }
    }

    /// The next byte that is not whitespace (as serde_json's: space, tab,
    /// line feed, carriage return), left unread.
    #[inline(always)]
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        // Most often the very next byte (a List as the API server writes it
        // has no whitespace).
        match bytes.get(self.at) {
            Some(&byte) if byte > b' ' => return Some(byte),
            None => return None,
            Some(_) => {}
        }
        while let Some(&byte) = bytes.get(self.at) {
            if !matches!(byte, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(byte);
            }
            self.at = self.at.saturating_add(1);
        }
        None
    }

    /// Reads `byte`, after whitespace.
    #[inline(always)]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at = self.at.saturating_add(1))
    }

    /// Only whitespace is left, as `serde_json::Deserializer::end` requires.
    pub fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// A string with no escape, as serde_json borrows it into a `&str`.
    #[inline(always)]
    pub fn plain_string(&mut self) -> Option<&'t str> {
        self.eat(b'"')?;
        let start = self.at;
        let stop = string_stop(self.text.as_bytes(), start)?;
        if self.text.as_bytes().get(stop) != Some(&b'"') {
            return None;
        }
        self.at = stop.saturating_add(1);
        self.text.get(start..stop)
    }

    /// `true` or `false`.
    pub fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => None,
        }
    }

    /// Reads a `null` if one comes next.
    pub fn null(&mut self) -> bool {
        self.peek() == Some(b'n') && self.literal(b"null").is_some()
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.text.as_bytes().get(self.at..end)? == word).then(|| self.at = end)
    }

    /// An object: `member` is handed each name (a string with no escape),
    /// and reads its value.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'t str) -> Option<()>,
    ) -> Option<()> {
        self.sequence(b'{', b'}', |r| {
            let name = r.plain_string()?;
            r.eat(b':')?;
            member(r, name)
        })
    }

    /// A list: `element` reads each of its values.
    pub fn list(&mut self, element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.sequence(b'[', b']', element)
    }

    /// Between `open` and `close`, what `each` reads, separated by commas.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        mut each: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        if self.peek()? == close {
            self.at = self.at.saturating_add(1);
            return Some(());
        }
        loop {
            each(self)?;
            match self.peek()? {
                b',' => self.at = self.at.saturating_add(1),
                byte if byte == close => {
                    self.at = self.at.saturating_add(1);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Passes over any value, as serde_json's `IgnoredAny` does: its syntax
    /// checked, escapes and numbers too, nothing decoded. One loop, no
    /// recursion: `open` holds, a bit a level, which containers are objects.
    pub fn skip(&mut self) -> Option<()> {
        let mut open: u64 = 0;
        let mut depth: u32 = 0;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at = self.at.saturating_add(1);
                    self.pass_string()?;
                }
                byte @ (b'{' | b'[') => {
                    self.at = self.at.saturating_add(1);
                    let close = if byte == b'{' { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.at = self.at.saturating_add(1);
                    } else {
                        if depth >= PASSED_DEPTH {
                            return None;
                        }
                        depth = depth.saturating_add(1);
                        open = open << 1 | u64::from(byte == b'{');
                        if byte == b'{' {
                            self.name()?;
                        }
                        continue;
                    }
                }
                b'-' | b'0'..=b'9' => self.at = number_end(self.text.as_bytes(), self.at)?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return None,
            }
            // A value was read: close what it ends, or go on past a comma.
            loop {
                if depth == 0 {
                    return Some(());
                }
                let in_object = open & 1 == 1;
                match self.peek()? {
                    b',' => {
                        self.at = self.at.saturating_add(1);
                        if in_object {
                            self.name()?;
                        }
                        break;
                    }
                    b'}' if in_object => {}
                    b']' if !in_object => {}
                    _ => return None,
                }
                self.at = self.at.saturating_add(1);
                depth = depth.saturating_sub(1);
                open >>= 1;
            }
        }
    }

    /// A member's name passed over (escapes allowed, as serde passes them),
    /// and its colon.
    fn name(&mut self) -> Option<()> {
        self.eat(b'"')?;
        self.pass_string()?;
        self.eat(b':')
    }

    /// Past the string whose opening quote was read.
    fn pass_string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        let mut at = self.at;
        loop {
            let stop = string_stop(bytes, at)?;
            match bytes.get(stop)? {
                b'"' => {
                    self.at = stop.saturating_add(1);
                    return Some(());
                }
                b'\\' => at = escape_end(bytes, stop.saturating_add(1))?,
                // A control character, which JSON strings may not hold.
                _ => return None,
            }
        }
    }
}

/// Past an escape whose backslash ends before `at`: the escapes serde_json
/// passes over (any four hex digits after `u`, a lone surrogate too).
fn escape_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at.saturating_add(1)),
        b'u' => {
            let end = at.checked_add(5)?;
            let digits = bytes.get(at.saturating_add(1)..end)?;
            digits.iter().all(u8::is_ascii_hexdigit).then_some(end)
        }
        _ => None,
    }
}

/// Past the number at `at`, as serde_json reads its syntax:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`. What follows is left
/// to the caller (a digit after a leading `0` then fails there, as in serde).
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |from: usize| {
        let rest = bytes.get(from..).unwrap_or_default();
        let count = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        (count > 0).then(|| from.saturating_add(count))
    };
    if bytes.get(at) == Some(&b'-') {
        at = at.saturating_add(1);
    }
    at = match bytes.get(at)? {
        b'0' => at.saturating_add(1),
        b'1'..=b'9' => digits(at)?,
        _ => return None,
    };
    if bytes.get(at) == Some(&b'.') {
        at = digits(at.saturating_add(1))?;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at = at.saturating_add(1);
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at = at.saturating_add(1);
        }
        at = digits(at)?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IgnoredAny;

    fn skipped(text: &str) -> Option<usize> {
        let mut reader = TextReader::new(text);
        reader.skip()?;
        reader.end()?;
        Some(reader.at)
    }

    fn by_serde(text: &str) -> bool {
        serde_json::from_str::<IgnoredAny>(text).is_ok()
    }

    /// Passing over a value refuses what serde_json's `IgnoredAny` refuses,
    /// and reads what it reads (but for nesting past `PASSED_DEPTH`).
    #[test]
    fn passes_over_what_serde_passes_over() {
        let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let mut texts: Vec<String> = [
            r#"{"a\"b":"x\\","c\\":[{"d":"]}"},"\"{"],"e":-1.5e-3,"f":true,"g":null}"#,
            " {\n\t\"a\" :\r{ \"b\" : [ ] } ,\"c\":{}\n} ",
            r#"{"k\u00e9y":"v\"al\\ue","\ud83d\ude00":"😀","":"","\ud800":"\udc00"}"#,
            r#"[0,-0,0.5,1e5,1E+5,1e-5,-12.25e10,123456789012345678901234567890,1e400]"#,
            r#"[true,false,null,"",{},[],[{}],{"a":[]}]"#,
            "[01]",
            "[-]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[1e+]",
            "[+1]",
            "[--1]",
            "[1.e5]",
            "[0x10]",
            "[1,]",
            "{\"a\":1,}",
            "[,1]",
            "{,}",
            "{\"a\"}",
            "{\"a\":}",
            "{1:2}",
            "[tru]",
            "[nul]",
            "[nulll]",
            "[True]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[\"\\u12g4\"]",
            "[\"\\uABCD\"]",
            "[\"a\tb\"]",
            "[\"a\nb\"]",
            "[\"a\u{1f}b\"]",
            "[\"a\u{7f}b\"]",
            "[\"\\",
            "[\"",
            "[",
            "{",
            "",
            " ",
            "[]]",
            "[}",
            "{]",
            "{\"a\":1]",
            "[1 2]",
            "{\"a\":1 \"b\":2}",
            "[\"é\"]",
            "\"x\"",
            "1",
            "null",
            "[\"\\/\\b\\f\\n\\r\\t\"]",
        ]
        .map(String::from)
        .to_vec();
        texts.extend([nested(10), nested(64), nested(65), nested(200)]);
        texts.push(format!(
            "[{}]",
            "\"abcdefghij\\\"klmnop\",".repeat(20) + "1"
        ));
        let too_deep =
            |t: &str| t.bytes().take_while(|&b| b == b'[').count() > PASSED_DEPTH as usize;
        let mut read = 0;
        for text in &texts {
            let serde = by_serde(text);
            match skipped(text) {
                Some(end) => {
                    assert!(serde, "{text}");
                    assert_eq!(end, text.len());
                    read += 1;
                }
                None => assert!(!serde || too_deep(text), "{text}"),
            }
        }
        assert!(read > 10, "{read}");
    }

    /// Every prefix and every one-byte change of valid texts: the reader
    /// never answers where serde refuses.
    #[test]
    fn a_broken_text_is_never_passed() {
        let texts = [
            r#"{"a":[1,-2.5e+3,"x\"y\u00e9",{"b":null,"c":true}],"d":false}"#,
            r#"[{"k":"v"},{"k2":[[],{}]},"\\",0]"#,
        ];
        let bytes = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'-', b'e', b'.', b' ', b'\n',
            0x01, b'a', b'u', b'n',
        ];
        for text in texts {
            for cut in 0..=text.len() {
                let Some(prefix) = text.get(..cut) else {
                    continue;
                };
                if skipped(prefix).is_some() {
                    assert!(by_serde(prefix), "{prefix}");
                }
            }
            for place in 0..text.len() {
                for byte in bytes {
                    let mut changed = text.as_bytes().to_vec();
                    changed[place] = byte;
                    let Ok(changed) = String::from_utf8(changed) else {
                        continue;
                    };
                    assert_eq!(skipped(&changed).is_some(), by_serde(&changed), "{changed}");
                }
            }
        }
    }

    #[test]
    fn reads_fields_as_serde_borrows_them() {
        let mut reader = TextReader::new(r#" { "a" : "x" , "b":true,"c":[null,"y"],"d":{}} "#);
        let mut seen = Vec::new();
        reader
            .object(|r, name| {
                match name {
                    "a" => seen.push(r.plain_string()?.to_string()),
                    "b" => seen.push(r.boolean()?.to_string()),
                    "c" => r.list(|r| {
                        if !r.null() {
                            seen.push(r.plain_string()?.to_string());
                        }
                        Some(())
                    })?,
                    _ => r.skip()?,
                }
                Some(())
            })
            .unwrap();
        assert!(reader.end().is_some());
        assert_eq!(seen, ["x", "true", "y"]);
        for (text, plain) in [
            (r#""a\"b""#, None),
            ("\"a\u{1}\"", None),
            (r#""é""#, Some("é")),
        ] {
            assert_eq!(TextReader::new(text).plain_string(), plain, "{text}");
        }
        assert!(!TextReader::new("nul").null());
        assert_eq!(TextReader::new("tru").boolean(), None);
        assert_eq!(TextReader::new("[1 2]").list(|r| r.skip()), None);
        assert_eq!(TextReader::new(r#"{"a":1,}"#).object(|r, _| r.skip()), None);
        assert_eq!(
            TextReader::new(r#"{"a\u0062":1}"#).object(|r, _| r.skip()),
            None
        );
    }
}
