//! What the person typed, read as YAML or JSON, with errors located at the
//! line and column where they are.

use serde::Serialize;
use serde_json::Value;

/// A problem with one of the page's inputs, located when the parser knows where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputError {
    /// Which input: `request`, `object`, `oldObject`, `settings`, `now`, `context`, ...
    pub input: String,
    /// 1-based line and column in that input's text.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl InputError {
    pub fn new(input: &str, message: impl Into<String>) -> Self {
        Self {
            input: input.to_string(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    pub fn at(input: &str, line: usize, column: usize, message: impl Into<String>) -> Self {
        Self {
            input: input.to_string(),
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => {
                write!(f, "{}: line {l}, column {c}: {}", self.input, self.message)
            }
            _ => write!(f, "{}: {}", self.input, self.message),
        }
    }
}

/// Whether a text holds nothing but blanks and comments.
pub fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

/// Reads one document, JSON or YAML. JSON is tried first when the text looks
/// like JSON (serde_json's reading is the exact one the API server's is); a
/// text that is not JSON is read as YAML, whose errors are reported unless
/// the text clearly meant to be JSON. A blank text is `null`.
pub fn parse_document(input: &str, text: &str) -> Result<Value, InputError> {
    if is_blank(text) {
        return Ok(Value::Null);
    }
    let looks_json = matches!(text.trim_start().chars().next(), Some('{' | '['));
    let json_error = if looks_json {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => return Ok(v),
            Err(e) => Some(InputError::at(
                input,
                e.line(),
                e.column(),
                json_message(&e),
            )),
        }
    } else {
        None
    };
    match serde_norway::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) => {
            if let Some(json_error) = json_error {
                return Err(json_error);
            }
            let message = yaml_message(&e);
            Err(match e.location() {
                Some(l) => InputError::at(input, l.line(), l.column(), message),
                None => InputError::new(input, message),
            })
        }
    }
}

/// serde_json's message without its trailing " at line L column C".
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text.get(..i).unwrap_or(&text).to_string(),
        None => text,
    }
}

/// serde_norway's message without its trailing " at line L column C".
fn yaml_message(e: &serde_norway::Error) -> String {
    let text = e.to_string();
    match text.find(" at line ") {
        Some(i) => text.get(..i).unwrap_or(&text).to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_and_json_and_blank() {
        assert_eq!(
            parse_document("x", "a: 1\nb: [x]\n").unwrap(),
            json!({"a": 1, "b": ["x"]})
        );
        assert_eq!(parse_document("x", "{\"a\": 1}").unwrap(), json!({"a": 1}));
        assert_eq!(parse_document("x", "{a: 1}").unwrap(), json!({"a": 1}));
        assert_eq!(parse_document("x", "# nothing\n\n").unwrap(), Value::Null);
    }

    #[test]
    fn yaml_errors_are_located() {
        let e = parse_document("request", "a: 1\nb:\n  c: [1, 2\n  d: 3\n").unwrap_err();
        assert_eq!(e.input, "request");
        assert!(e.line.is_some(), "{e:?}");
        let e = parse_document("request", "a: 1\n b: 2\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e:?}");
        assert!(!e.message.contains(" at line "), "{e:?}");
    }

    #[test]
    fn json_errors_are_located() {
        let e = parse_document("settings", "{\n  \"a\": 1,\n  \"b\" 2\n}").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(7)), "{e:?}");
    }
}
