//! The subset of Go's `text/template` that Flux Operator's ResourceSet
//! templates use, with its delimiters `<<` `>>` and its `missingkey=error`
//! (controlplaneio-fluxcd/flux-operator 17c6aead, `internal/builder/
//! resourceset.go`, `newTemplate`). What the subset does not hold is refused
//! by name ([`Error::Unsupported`]), never rendered approximately.
//!
//! Held: text, actions with pipelines, comments, the trim markers `<<- ` and
//! ` ->>`, `if`/`else if`/`else`, `range` (over a list or a map, keys in
//! sorted order, with `$v :=` or `$k, $v :=`), `with`, variables, field
//! chains on `.`, on a variable and on `inputs`, string, number and boolean
//! literals, parenthesized pipelines, and the functions in [`call`] (Go's
//! builtins and the slim-sprig, `slugify` and `toYaml` functions Flux
//! Operator registers that templates commonly use). Semantics follow Go's
//! `text/template` (`exec.go`: `isTrue`, `printValue`; `funcs.go`: `eq`,
//! `and`, `or`, `not`, `len`, `index`, `print`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A construct outside the subset: what check cannot render.
    Unsupported(String),
    /// What Go's template engine refuses too: Flux Operator's build fails.
    Failed(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unsupported(what) => {
                write!(f, "template uses {what}, which check does not render")
            }
            Error::Failed(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for Error {}

type Result<T> = std::result::Result<T, Error>;

fn unsupported<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::Unsupported(what.into()))
}

fn failed<T>(why: impl Into<String>) -> Result<T> {
    Err(Error::Failed(why.into()))
}

/// Renders `text` with `inputs` as the value of the `inputs` function and
/// no data (Flux Operator executes with `nil`).
pub fn render(text: &str, inputs: &Value) -> Result<String> {
    let tokens = lex(text)?;
    let mut parser = Parser { tokens, at: 0 };
    let nodes = parser.list(&[])?;
    if parser.at < parser.tokens.len() {
        return failed("unexpected {{end}} or {{else}}");
    }
    let mut out = String::new();
    let mut scope = vec![("$".to_string(), Value::Null)];
    exec(&nodes, &Value::Null, inputs, &mut scope, &mut out)?;
    Ok(out)
}

// ---- lexing: text and actions

#[derive(Debug, Clone)]
enum Token {
    Text(String),
    Action(String),
}

/// Go's space characters: trim markers trim only these (golang/go
/// 34aeeefd, `src/text/template/parse/lex.go`, `spaceChars`, `isSpace`).
const SPACE: [char; 4] = [' ', '\t', '\r', '\n'];

fn lex(text: &str) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut rest = text;
    let mut trim_next = false;
    while let Some(start) = rest.find("<<") {
        let mut before = &rest[..start];
        if trim_next {
            before = before.trim_start_matches(SPACE);
        }
        let inner_start = start + 2;
        let after = &rest[inner_start..];
        // `<<-3>>` is the number -3: the marker needs a space after it.
        let left_trim = after.starts_with('-') && after[1..].starts_with(SPACE);
        if left_trim {
            before = before.trim_end_matches(SPACE);
        }
        if !before.is_empty() {
            tokens.push(Token::Text(before.to_string()));
        }
        let body_start = inner_start + if left_trim { 2 } else { 0 };
        // A comment starts right at the delimiter (and marker) and ends
        // right before it (`lexLeftDelim`, `lexComment`).
        let (end, right_trim) = if let Some(comment) = rest[body_start..].strip_prefix("/*") {
            let Some(close) = comment.find("*/") else {
                return failed("unclosed comment");
            };
            let after = &comment[close + 2..];
            let right_trim = after.starts_with(SPACE) && after[1..].starts_with("->>");
            if !right_trim && !after.starts_with(">>") {
                return failed("comment ends before closing delimiter");
            }
            (close + 4, right_trim)
        } else {
            let (end, right_trim) = close(&rest[body_start..])?;
            let body = &rest[body_start..body_start + end];
            if body.trim_start_matches(SPACE).starts_with("/*") {
                return failed("a comment must start right after the action's delimiter");
            }
            tokens.push(Token::Action(body.trim_matches(SPACE).to_string()));
            (end, right_trim)
        };
        trim_next = right_trim;
        let marker = if right_trim { 2 } else { 0 };
        rest = &rest[body_start + end + marker + 2..];
    }
    let last = if trim_next {
        rest.trim_start_matches(SPACE)
    } else {
        rest
    };
    if !last.is_empty() {
        tokens.push(Token::Text(last.to_string()));
    }
    Ok(tokens)
}

/// Where the action in `body` ends: the offset of its ` ->>` or `>>`, and
/// whether it is the trimming one. Quoted strings and character constants
/// are read whole, so a `>>` in them closes nothing (`lexInsideAction`,
/// `lexQuote`, `lexRawQuote`, `lexChar`).
fn close(body: &str) -> Result<(usize, bool)> {
    let bytes = body.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let mut i = 0;
    while let Some(b) = at(i) {
        match b {
            b'"' | b'\'' | b'`' => {
                i += 1;
                while let Some(q) = at(i).filter(|&q| q != b) {
                    if b != b'`' && q == b'\n' {
                        return failed("unterminated quoted string");
                    }
                    i += if q == b'\\' && b != b'`' { 2 } else { 1 };
                }
                if at(i).is_none() {
                    return failed("unterminated quoted string");
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' if body[i + 1..].starts_with("->>") => {
                return Ok((i, true));
            }
            b'>' if at(i + 1) == Some(b'>') => return Ok((i, false)),
            _ => {}
        }
        i += 1;
    }
    failed("unclosed action")
}

// ---- parsing: nodes and pipelines

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Action(Pipeline),
    If(Pipeline, Vec<Node>, Vec<Node>),
    Range(Pipeline, Vec<Node>, Vec<Node>),
    With(Pipeline, Vec<Node>, Vec<Node>),
}

#[derive(Debug, Clone, Default)]
struct Pipeline {
    decl: Vec<String>,
    commands: Vec<Vec<Operand>>,
}

#[derive(Debug, Clone)]
enum Operand {
    /// `.a.b` (empty: `.` itself).
    Dot(Vec<String>),
    Var(String, Vec<String>),
    /// A function name, with the fields after a call without arguments
    /// (`inputs.tenant`).
    Func(String, Vec<String>),
    Literal(Value),
    Nested(Box<Pipeline>, Vec<String>),
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    /// Nodes up to one of `stops` (`end`, `else`), which is left unread.
    fn list(&mut self, stops: &[&str]) -> Result<Vec<Node>> {
        let mut nodes = Vec::new();
        while let Some(token) = self.tokens.get(self.at).cloned() {
            match token {
                Token::Text(t) => {
                    self.at += 1;
                    nodes.push(Node::Text(t));
                }
                Token::Action(a) => {
                    let word = a.split_whitespace().next().unwrap_or("");
                    if stops.contains(&word) {
                        return Ok(nodes);
                    }
                    self.at += 1;
                    nodes.push(self.action(&a, word)?);
                }
            }
        }
        if stops.is_empty() {
            Ok(nodes)
        } else {
            failed("unexpected EOF: an if, range or with has no end")
        }
    }

    fn action(&mut self, action: &str, word: &str) -> Result<Node> {
        let rest = action[word.len()..].trim();
        match word {
            "if" | "range" | "with" => {
                let pipe = pipeline(rest)?;
                let body = self.list(&["end", "else"])?;
                let otherwise = self.otherwise(word)?;
                Ok(match word {
                    "if" => Node::If(pipe, body, otherwise),
                    "range" => Node::Range(pipe, body, otherwise),
                    _ => Node::With(pipe, body, otherwise),
                })
            }
            "end" | "else" => failed(format!("unexpected {{{{{word}}}}}")),
            "define" | "template" | "block" | "break" | "continue" => {
                unsupported(format!("the {word} action"))
            }
            _ => Ok(Node::Action(pipeline(action)?)),
        }
    }

    /// After a body: `end`, or `else` (and `else if …`) with its own body.
    fn otherwise(&mut self, word: &str) -> Result<Vec<Node>> {
        let Some(Token::Action(a)) = self.tokens.get(self.at).cloned() else {
            return failed("unexpected EOF");
        };
        self.at += 1;
        if a == "end" {
            return Ok(Vec::new());
        }
        let rest = a.strip_prefix("else").map(str::trim).unwrap_or("");
        if rest.is_empty() {
            let body = self.list(&["end"])?;
            self.at += 1;
            return Ok(body);
        }
        // `else if` / `else with`: a nested block sharing the one `end`.
        let inner = rest.split_whitespace().next().unwrap_or("");
        if inner != word {
            return unsupported(format!("{{{{else {inner}}}}} in a {word}"));
        }
        let node = self.action(rest, inner)?;
        Ok(vec![node])
    }
}

fn pipeline(text: &str) -> Result<Pipeline> {
    let words = split_words(text)?;
    let mut pipe = Pipeline::default();
    let mut words = words.as_slice();
    if let Some(at) = words.iter().position(|w| w == ":=") {
        let (declared, rest) = words.split_at(at);
        for v in declared {
            let v = v.trim_end_matches(',');
            if !v.starts_with('$') {
                return failed(format!("bad variable declaration {text}"));
            }
            pipe.decl.push(v.to_string());
        }
        words = rest.get(1..).unwrap_or_default();
    } else if words.iter().any(|w| w == "=") {
        return unsupported("variable assignment (=)");
    }
    for command in words.split(|w| w == "|") {
        if command.is_empty() {
            return failed(format!("missing command in {text}"));
        }
        pipe.commands
            .push(command.iter().map(|w| operand(w)).collect::<Result<_>>()?);
    }
    if pipe.commands.is_empty() {
        return failed("missing value for command");
    }
    Ok(pipe)
}

/// Splits an action into words, keeping strings and parentheses whole.
fn split_words(text: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let mut i = 0;
    while let Some(c) = at(i) {
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c == '|' {
            words.push("|".into());
            i += 1;
            continue;
        }
        let mut depth = 0usize;
        while let Some(c) = at(i) {
            match c {
                '"' => {
                    i += 1;
                    while let Some(q) = at(i).filter(|&q| q != '"') {
                        i += if q == '\\' { 2 } else { 1 };
                    }
                }
                '`' => {
                    i += 1;
                    while at(i).is_some_and(|q| q != '`') {
                        i += 1;
                    }
                }
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                c if depth == 0 && (c.is_whitespace() || c == '|') => break,
                _ => {}
            }
            i += 1;
        }
        if i > chars.len() {
            return failed(format!("unterminated quoted string in {text}"));
        }
        words.push(chars.get(start..i).unwrap_or_default().iter().collect());
    }
    Ok(words)
}

fn fields(text: &str) -> Vec<String> {
    text.split('.')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn operand(word: &str) -> Result<Operand> {
    let first = word.chars().next().unwrap_or(' ');
    if word.starts_with('(') {
        let close = word.rfind(')').unwrap_or(0);
        let inner = pipeline(&word[1..close])?;
        return Ok(Operand::Nested(Box::new(inner), fields(&word[close + 1..])));
    }
    if first == '.' {
        return Ok(Operand::Dot(fields(word)));
    }
    if first == '$' {
        let (name, rest) = word.split_once('.').unwrap_or((word, ""));
        return Ok(Operand::Var(name.to_string(), fields(rest)));
    }
    if first == '"' {
        return serde_json::from_str::<String>(word)
            .map(|s| Operand::Literal(Value::String(s)))
            .or_else(|_| failed(format!("bad string {word}")));
    }
    if first == '`' {
        return Ok(Operand::Literal(Value::String(
            word.trim_matches('`').to_string(),
        )));
    }
    if first == '\'' {
        return unsupported(format!("the character constant {word}"));
    }
    if first.is_ascii_digit() || first == '-' || first == '+' {
        if let Ok(n) = word.parse::<i64>() {
            return Ok(Operand::Literal(Value::from(n)));
        }
        if let Some(n) = word
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return Ok(Operand::Literal(Value::Number(n)));
        }
        return unsupported(format!("the number {word}"));
    }
    match word {
        "true" => return Ok(Operand::Literal(Value::Bool(true))),
        "false" => return Ok(Operand::Literal(Value::Bool(false))),
        "nil" => return Ok(Operand::Literal(Value::Null)),
        _ => {}
    }
    if first.is_alphabetic() || first == '_' {
        let (name, rest) = word.split_once('.').unwrap_or((word, ""));
        return Ok(Operand::Func(name.to_string(), fields(rest)));
    }
    failed(format!("unexpected {word} in operand"))
}

// ---- execution

type Scope = Vec<(String, Value)>;

fn exec(
    nodes: &[Node],
    dot: &Value,
    inputs: &Value,
    scope: &mut Scope,
    out: &mut String,
) -> Result<()> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Action(pipe) => {
                let value = eval_pipeline(pipe, dot, inputs, scope)?;
                if pipe.decl.is_empty() {
                    out.push_str(&print(&value)?);
                }
            }
            Node::If(pipe, body, otherwise) => {
                let depth = scope.len();
                let value = eval_pipeline(pipe, dot, inputs, scope)?;
                let branch = if truth(&value) { body } else { otherwise };
                exec(branch, dot, inputs, scope, out)?;
                scope.truncate(depth);
            }
            Node::With(pipe, body, otherwise) => {
                let depth = scope.len();
                let value = eval_pipeline(pipe, dot, inputs, scope)?;
                if truth(&value) {
                    exec(body, &value, inputs, scope, out)?;
                } else {
                    exec(otherwise, dot, inputs, scope, out)?;
                }
                scope.truncate(depth);
            }
            Node::Range(pipe, body, otherwise) => {
                range(pipe, body, otherwise, dot, inputs, scope, out)?;
            }
        }
    }
    Ok(())
}

fn range(
    pipe: &Pipeline,
    body: &[Node],
    otherwise: &[Node],
    dot: &Value,
    inputs: &Value,
    scope: &mut Scope,
    out: &mut String,
) -> Result<()> {
    let depth = scope.len();
    let plain = Pipeline {
        decl: Vec::new(),
        commands: pipe.commands.clone(),
    };
    let value = eval_pipeline(&plain, dot, inputs, scope)?;
    // A map ranges in sorted key order (text/template `exec.go`, `walkRange`).
    let items: Vec<(Value, Value)> = match &value {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::from(i), v.clone()))
            .collect(),
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            sorted
                .into_iter()
                .map(|(k, v)| (Value::String(k.clone()), v.clone()))
                .collect()
        }
        Value::Null => Vec::new(),
        Value::Number(_) => return unsupported("range over an integer"),
        other => return failed(format!("range can't iterate over {}", print(other)?)),
    };
    if items.is_empty() {
        exec(otherwise, dot, inputs, scope, out)?;
        return Ok(());
    }
    for (key, item) in items {
        match pipe.decl.as_slice() {
            [] => {}
            [v] => scope.push((v.clone(), item.clone())),
            [k, v] => {
                scope.push((k.clone(), key));
                scope.push((v.clone(), item.clone()));
            }
            _ => return failed("too many declarations in range"),
        }
        exec(body, &item, inputs, scope, out)?;
        scope.truncate(depth);
    }
    Ok(())
}

fn eval_pipeline(pipe: &Pipeline, dot: &Value, inputs: &Value, scope: &mut Scope) -> Result<Value> {
    let mut value: Option<Value> = None;
    for command in &pipe.commands {
        value = Some(eval_command(command, value, dot, inputs, scope)?);
    }
    let value = value.unwrap_or(Value::Null);
    if let Some(name) = pipe.decl.first() {
        scope.push((name.clone(), value.clone()));
    }
    Ok(value)
}

fn eval_command(
    command: &[Operand],
    piped: Option<Value>,
    dot: &Value,
    inputs: &Value,
    scope: &mut Scope,
) -> Result<Value> {
    let Some((head, args)) = command.split_first() else {
        return failed("empty command");
    };
    if let Operand::Func(name, chain) = head {
        if chain.is_empty() || name == "inputs" {
            let mut values = args
                .iter()
                .map(|a| eval_operand(a, dot, inputs, scope))
                .collect::<Result<Vec<_>>>()?;
            values.extend(piped);
            let result = call(name, &values, inputs)?;
            return walk(&result, chain);
        }
    }
    if !args.is_empty() || piped.is_some() {
        return failed("can't give argument to non-function");
    }
    eval_operand(head, dot, inputs, scope)
}

fn eval_operand(
    operand: &Operand,
    dot: &Value,
    inputs: &Value,
    scope: &mut Scope,
) -> Result<Value> {
    match operand {
        Operand::Dot(chain) => walk(dot, chain),
        Operand::Var(name, chain) => match scope.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => walk(&v.clone(), chain),
            None => failed(format!("undefined variable: {name}")),
        },
        Operand::Literal(v) => Ok(v.clone()),
        Operand::Func(name, chain) => walk(&call(name, &[], inputs)?, chain),
        Operand::Nested(pipe, chain) => {
            let depth = scope.len();
            let value = eval_pipeline(pipe, dot, inputs, scope)?;
            scope.truncate(depth);
            walk(&value, chain)
        }
    }
}

/// Field access on maps, with `missingkey=error`.
fn walk(value: &Value, chain: &[String]) -> Result<Value> {
    let mut current = value.clone();
    for field in chain {
        current = match &current {
            Value::Object(map) => match map.get(field) {
                Some(v) => v.clone(),
                None => return failed(format!("map has no entry for key \"{field}\"")),
            },
            Value::Null => return failed(format!("nil pointer evaluating interface {{}}.{field}")),
            other => {
                return failed(format!(
                    "can't evaluate field {field} in type {}",
                    go_type(other)
                ))
            }
        };
    }
    Ok(current)
}

fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "interface {}",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `isTrue`: false, zero, nil and empty are false.
fn truth(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// How an action prints its value (`fmt.Fprint`). Maps and lists print
/// in Go's `map[k:v]` / `[a b]` form, which a YAML template never means to
/// write: refused.
fn print(value: &Value) -> Result<String> {
    Ok(match value {
        Value::Null => "<no value>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => {
            return unsupported("printing a list or map as Go prints it (use toYaml)")
        }
    })
}

/// A number as Go prints it: an integer written in the template as an
/// integer; a number from the inputs is a float64 (`json.Unmarshal` into
/// `any`, `api/v1/resourceset_types.go` `GetInputs`), printed by `%v`:
/// shortest digits, in `%e` form when the exponent is below -4 or from 6 on
/// (Go `strconv/ftoa.go`, `%g` with the shortest precision: "if precision
/// was the shortest possible, use precision 6 for this decision").
fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        return "0".into();
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        f.to_string()
    }
}

/// The inputs as Go holds them: every number a float64.
pub fn as_go(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.iter().map(as_go).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), as_go(v))).collect()),
        other => other.clone(),
    }
}

// ---- functions

/// The functions Flux Operator registers (Go's builtins, slim-sprig's
/// `HermeticTxtFuncMap`, `slugify`, `inputs`, `toYaml`) that check renders.
/// Each follows its Go source: slim-sprig `strings.go`, `defaults.go`,
/// `functions.go`; gosimple/slug `Make`.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per function Flux Operator registers, each beside its Go source"
)]
fn call(name: &str, args: &[Value], inputs: &Value) -> Result<Value> {
    let text = |i: usize| -> Result<String> {
        match args.get(i) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Null) | None => Ok(String::new()),
            Some(other) => print(other),
        }
    };
    let arity = |n: usize| -> Result<()> {
        if args.len() == n {
            Ok(())
        } else {
            failed(format!(
                "wrong number of args for {name}: want {n} got {}",
                args.len()
            ))
        }
    };
    Ok(match name {
        "inputs" => {
            arity(0)?;
            inputs.clone()
        }
        "quote" => Value::String(
            args.iter()
                .filter(|a| !a.is_null())
                .map(|a| go_quote(&print(a)?))
                .collect::<Result<Vec<_>>>()?
                .join(" "),
        ),
        "squote" => Value::String(
            args.iter()
                .filter(|a| !a.is_null())
                .map(|a| Ok(format!("'{}'", print(a)?)))
                .collect::<Result<Vec<_>>>()?
                .join(" "),
        ),
        "default" => {
            // sprig `dfault`: the piped value unless it is empty.
            match args {
                [d] => d.clone(),
                [d, v] => {
                    if truth(v) {
                        v.clone()
                    } else {
                        d.clone()
                    }
                }
                _ => return failed("wrong number of args for default"),
            }
        }
        "empty" => {
            arity(1)?;
            Value::Bool(!args.first().is_some_and(truth))
        }
        "upper" => {
            arity(1)?;
            Value::String(text(0)?.to_uppercase())
        }
        "lower" => {
            arity(1)?;
            Value::String(text(0)?.to_lowercase())
        }
        "trim" => {
            arity(1)?;
            Value::String(text(0)?.trim().to_string())
        }
        "trimPrefix" => {
            arity(2)?;
            let s = text(1)?;
            Value::String(s.strip_prefix(text(0)?.as_str()).unwrap_or(&s).to_string())
        }
        "trimSuffix" => {
            arity(2)?;
            let s = text(1)?;
            Value::String(s.strip_suffix(text(0)?.as_str()).unwrap_or(&s).to_string())
        }
        "replace" => {
            arity(3)?;
            Value::String(text(2)?.replace(&text(0)?, &text(1)?))
        }
        "contains" => {
            arity(2)?;
            Value::Bool(text(1)?.contains(&text(0)?))
        }
        "hasPrefix" => {
            arity(2)?;
            Value::Bool(text(1)?.starts_with(&text(0)?))
        }
        "hasSuffix" => {
            arity(2)?;
            Value::Bool(text(1)?.ends_with(&text(0)?))
        }
        "toString" => {
            arity(1)?;
            Value::String(text(0)?)
        }
        "indent" | "nindent" => {
            arity(2)?;
            let width = args.first().and_then(Value::as_u64).map_or_else(
                || failed(format!("{name}: the width is not a whole number")),
                Ok,
            )?;
            let pad = " ".repeat(usize::try_from(width).unwrap_or(0));
            let body = format!("{pad}{}", text(1)?.replace('\n', &format!("\n{pad}")));
            Value::String(if name == "nindent" {
                format!("\n{body}")
            } else {
                body
            })
        }
        "toYaml" => {
            arity(1)?;
            Value::String(to_yaml(args.first().unwrap_or(&Value::Null))?)
        }
        "slugify" => {
            arity(1)?;
            Value::String(slugify(&text(0)?)?)
        }
        "eq" | "ne" => {
            let [first, rest @ ..] = args else {
                return failed("missing argument for comparison");
            };
            if rest.is_empty() {
                return failed("missing argument for comparison");
            }
            let mut equal = false;
            for r in rest {
                equal |= same(first, r)?;
            }
            Value::Bool(if name == "eq" { equal } else { !equal })
        }
        "not" => {
            arity(1)?;
            Value::Bool(!args.first().is_some_and(truth))
        }
        "and" => args
            .iter()
            .find(|a| !truth(a))
            .or(args.last())
            .cloned()
            .unwrap_or(Value::Null),
        "or" => args
            .iter()
            .find(|a| truth(a))
            .or(args.last())
            .cloned()
            .unwrap_or(Value::Null),
        "len" => {
            arity(1)?;
            Value::from(match args.first() {
                Some(Value::String(s)) => s.len(),
                Some(Value::Array(a)) => a.len(),
                Some(Value::Object(m)) => m.len(),
                _ => return failed("len of a value that has no length"),
            })
        }
        "hasKey" => {
            arity(2)?;
            let key = text(1)?;
            Value::Bool(
                args.first()
                    .and_then(Value::as_object)
                    .is_some_and(|m| m.contains_key(&key)),
            )
        }
        "join" => {
            arity(2)?;
            let items = match args.get(1) {
                Some(Value::Array(a)) => a.iter().map(print).collect::<Result<Vec<_>>>()?,
                Some(other) => vec![print(other)?],
                None => Vec::new(),
            };
            Value::String(items.join(&text(0)?))
        }
        "print" => {
            // fmt.Sprint: a space between operands when neither is a string.
            let mut s = String::new();
            for (i, a) in args.iter().enumerate() {
                let prev_string = i > 0 && args.get(i - 1).is_some_and(Value::is_string);
                if i > 0 && !a.is_string() && !prev_string {
                    s.push(' ');
                }
                s.push_str(&print(a)?);
            }
            Value::String(s)
        }
        other => return unsupported(format!("the function {other}")),
    })
}

/// Go's `%q` of a string (sprig `quote` is `fmt.Sprintf("%q", …)`): JSON's
/// escaping agrees with it on printable ASCII, `\"`, `\\`, `\n`, `\t`;
/// other characters are refused.
fn go_quote(s: &str) -> Result<String> {
    if s.chars()
        .any(|c| !(c.is_ascii_graphic() || c == ' ' || c == '\n' || c == '\t'))
    {
        return unsupported("quote of text with control or non-ASCII characters");
    }
    serde_json::to_string(s).or_else(|e| failed(format!("quote: {e}")))
}

/// Go's `eq` on two values: an integer (a literal) and a float64 (an
/// input) are of different kinds, which Go refuses (`funcs.go`, `eq`:
/// `errBadComparison`).
fn same(a: &Value, b: &Value) -> Result<bool> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() != y.is_f64() {
                return failed("error calling eq: incompatible types for comparison");
            }
            Ok(x.as_f64() == y.as_f64())
        }
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
            failed("error calling eq: non-comparable type")
        }
        _ => Ok(a == b),
    }
}

/// sigs.k8s.io/yaml `Marshal` of a value: YAML with keys sorted. The text
/// differs from go-yaml's in quoting, which the decode that follows reads
/// to the same values.
fn to_yaml(value: &Value) -> Result<String> {
    if value.is_null() {
        return Ok("null\n".into());
    }
    let sorted = sort_keys(value);
    serde_norway::to_string(&sorted).or_else(|e| failed(format!("toYaml: {e}")))
}

fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> =
                m.iter().map(|(k, v)| (k, sort_keys(v))).collect();
            Value::Object(
                sorted
                    .into_iter()
                    .map(|(k, v)| (k.clone(), v))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// gosimple/slug `Make` as Flux Operator configures it (`MaxLength` 63,
/// `EnableSmartTruncate`) for ASCII text: lower case, every run of other
/// characters a `-`, no leading or trailing `-`. Other text (slug
/// transliterates it) is refused.
fn slugify(s: &str) -> Result<String> {
    if !s.is_ascii() {
        return unsupported("slugify of non-ASCII text");
    }
    let mut out = String::new();
    for c in s.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.len() > 63 {
        return unsupported("slugify of text longer than 63 characters (smart truncation)");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;
    use serde_json::json;

    fn go(text: &str, inputs: Value) -> Result<String> {
        render(text, &as_go(&inputs))
    }

    #[test]
    fn fields_of_inputs_and_numbers_as_go_prints_them() {
        let inputs = json!({"tenant": "frontend", "replicas": 3, "big": 1_000_000, "ratio": 0.5});
        assert_eq!(
            go("name: << inputs.tenant >>, << inputs.replicas >>, << inputs.big >>, << inputs.ratio >>, << 7 >>", inputs).unwrap(),
            "name: frontend, 3, 1e+06, 0.5, 7"
        );
    }

    #[test]
    fn missing_keys_fail_as_missingkey_error() {
        assert_eq!(
            go("<< inputs.nope >>", json!({})),
            Err(Error::Failed("map has no entry for key \"nope\"".into()))
        );
    }

    #[test]
    fn range_if_with_trim_and_variables() {
        let inputs = json!({"apps": {"b": 2, "a": 1}, "list": ["x", "y"], "on": true, "owner": {"team": "t"}});
        let text = "<<- range $k, $v := inputs.apps >>\n<< $k >>=<< $v >>\n<<- end >>\n<< range inputs.list >>[<< . >>]<< end >>\n<<- if not inputs.on >>off<< else if inputs.on >>on<< else >>never<< end >>\n<< with inputs.owner >><< .team >><< end >>";
        assert_eq!(go(text, inputs).unwrap(), "\na=1\nb=2\n[x][y]on\nt");
    }

    #[test]
    fn functions_and_pipelines() {
        let inputs = json!({"name": "My App", "labels": {"a": "b"}, "empty": ""});
        assert_eq!(
            go("<< inputs.name | slugify | quote >> << inputs.empty | default \"none\" >> << eq inputs.name \"My App\" >> <<- inputs.labels | toYaml | nindent 2 >>", inputs).unwrap(),
            "\"my-app\" none true\n  a: b\n  "
        );
    }

    #[test]
    fn comparing_an_input_number_with_an_integer_fails_as_in_go() {
        assert!(matches!(
            go("<< eq inputs.n 3 >>", json!({"n": 3})),
            Err(Error::Failed(_))
        ));
    }

    #[test]
    fn lexing_follows_go() {
        let inputs = json!({"x": "a"});
        // A `>>` in a string closes nothing.
        assert_eq!(
            go("<< \"echo x >> log\" >>", inputs.clone()).unwrap(),
            "echo x >> log"
        );
        assert_eq!(go("<< `a>>b` >>", inputs.clone()).unwrap(), "a>>b");
        // Only Go's four spaces are trimmed: a no-break space stays.
        assert_eq!(
            go("a\u{a0}\r\n<<- inputs.x ->>\t\r\nb", inputs.clone()).unwrap(),
            "a\u{a0}ab"
        );
        assert_eq!(
            go("a \r\n<<-\rinputs.x\r->> b", inputs.clone()).unwrap(),
            "aab"
        );
        assert_eq!(go("a <<-3>>", inputs.clone()).unwrap(), "a -3");
        // A comment starts at the delimiter and ends at it.
        assert_eq!(go("a <<- /* c */ ->> b", inputs.clone()).unwrap(), "ab");
        assert_eq!(
            go("a << /* c */ >> b", inputs.clone()),
            Err(Error::Failed(
                "a comment must start right after the action's delimiter".into()
            ))
        );
        assert_eq!(
            go("a <</* c */ x>> b", inputs.clone()),
            Err(Error::Failed(
                "comment ends before closing delimiter".into()
            ))
        );
        assert_eq!(go("<</* \" >> */>>a", inputs).unwrap(), "a");
    }

    #[test]
    fn what_is_outside_the_subset_is_refused_by_name() {
        for (text, what) in [
            ("<< inputs.x | b64enc >>", "the function b64enc"),
            ("<< template \"x\" >>", "the template action"),
            ("<< $x = 1 >>", "variable assignment (=)"),
            (
                "<< inputs.m >>",
                "printing a list or map as Go prints it (use toYaml)",
            ),
        ] {
            assert_eq!(
                go(text, json!({"x": "a", "m": {"k": "v"}})),
                Err(Error::Unsupported(what.into())),
                "{text}"
            );
        }
    }
}
