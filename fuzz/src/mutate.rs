//! The structure-aware mutator: an input is a corpus case with 1..k
//! mutations at random places of its request, objects, settings, recorded
//! context and clock, and for a fraction of inputs a raw-level mutation of
//! the final payload bytes.

use conformance::cluster::Recorded;
use guard_core::Timestamp;
use serde_json::{json, Map, Value};

use crate::raw::RawOp;
use crate::seeds::{Corpus, Field, Seed, Shape};
use crate::tree::{self, Seg};
use crate::values::{self, CRONS, DURATIONS, OPERATIONS, SUB_RESOURCES, TIME_ZONES};
use guard_core::testing::Rng;

/// The classes of mutation, for reports and for the tests that check each
/// one is produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutation {
    TypeSwap,
    Null,
    RemoveKey,
    HugeString,
    LongArray,
    ManyKeys,
    DeepNest,
    OddUnicode,
    ExtremeNumber,
    ExtremeNow,
    InstantText,
    Splice,
    Dictionary,
    Annotation,
    RequestMeta,
    UserInfo,
    SchemaSettings,
    SettingsField,
    Context,
}

impl Mutation {
    pub const ALL: [Mutation; 19] = [
        Mutation::TypeSwap,
        Mutation::Null,
        Mutation::RemoveKey,
        Mutation::HugeString,
        Mutation::LongArray,
        Mutation::ManyKeys,
        Mutation::DeepNest,
        Mutation::OddUnicode,
        Mutation::ExtremeNumber,
        Mutation::ExtremeNow,
        Mutation::InstantText,
        Mutation::Splice,
        Mutation::Dictionary,
        Mutation::Annotation,
        Mutation::RequestMeta,
        Mutation::UserInfo,
        Mutation::SchemaSettings,
        Mutation::SettingsField,
        Mutation::Context,
    ];

    /// Relative frequency.
    fn weight(self) -> u32 {
        match self {
            Mutation::TypeSwap => 80,
            Mutation::Null => 45,
            Mutation::RemoveKey => 70,
            Mutation::HugeString => 25,
            Mutation::LongArray => 12,
            Mutation::ManyKeys => 18,
            Mutation::DeepNest => 12,
            Mutation::OddUnicode => 70,
            Mutation::ExtremeNumber => 45,
            Mutation::ExtremeNow => 50,
            Mutation::InstantText => 60,
            Mutation::Splice => 90,
            Mutation::Dictionary => 100,
            Mutation::Annotation => 120,
            Mutation::RequestMeta => 60,
            Mutation::UserInfo => 30,
            Mutation::SchemaSettings => 40,
            Mutation::SettingsField => 90,
            Mutation::Context => 50,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mutation::TypeSwap => "type-swap",
            Mutation::Null => "null",
            Mutation::RemoveKey => "remove-key",
            Mutation::HugeString => "huge-string",
            Mutation::LongArray => "long-array",
            Mutation::ManyKeys => "many-keys",
            Mutation::DeepNest => "deep-nest",
            Mutation::OddUnicode => "odd-unicode",
            Mutation::ExtremeNumber => "extreme-number",
            Mutation::ExtremeNow => "extreme-now",
            Mutation::InstantText => "instant-text",
            Mutation::Splice => "splice",
            Mutation::Dictionary => "dictionary",
            Mutation::Annotation => "annotation",
            Mutation::RequestMeta => "request-meta",
            Mutation::UserInfo => "user-info",
            Mutation::SchemaSettings => "schema-settings",
            Mutation::SettingsField => "settings-field",
            Mutation::Context => "context",
        }
    }
}

/// One generated input.
#[derive(Debug, Clone)]
pub struct Input {
    /// Its index in the run: with the seed, all that is needed to make it again.
    pub index: u64,
    /// The corpus case it was made from.
    pub seed_id: String,
    pub now: Timestamp,
    pub settings: Value,
    /// The AdmissionRequest.
    pub request: Value,
    pub context: Vec<Recorded>,
    pub raw: Option<RawOp>,
    /// Whether the settings differ from the corpus case's (then
    /// `validate_settings` is called too).
    pub settings_changed: bool,
    pub applied: Vec<Mutation>,
}

impl Input {
    /// `type-swap+annotation+raw:escape`, for reports.
    pub fn mutations(&self) -> String {
        let mut names: Vec<String> = self.applied.iter().map(|m| m.name().to_string()).collect();
        if let Some(op) = &self.raw {
            names.push(format!("raw:{}", op.name()));
        }
        names.join("+")
    }
}

/// The largest input made: policy-server reads no AdmissionReview over
/// 2 MiB (`conformance::worst_case::REVIEW_LIMIT`).
pub const MAX_INPUT_BYTES: usize = conformance::worst_case::REVIEW_LIMIT;

/// About how many bytes an input's payload has.
pub fn input_size(input: &Input) -> usize {
    tree::size(&input.request)
        + tree::size(&input.settings)
        + input
            .context
            .iter()
            .map(|r| {
                r.object.as_ref().map_or(0, tree::size) + r.error.as_ref().map_or(0, String::len)
            })
            .sum::<usize>()
}

/// Makes inputs for one policy.
pub struct Mutator<'c> {
    pub corpus: &'c Corpus,
    /// Whether raw-level inputs are made (`--raw`).
    pub raw: bool,
    /// The share of inputs that get a raw-level mutation when `raw` is on.
    pub raw_share: f64,
    weights: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Object,
    OldObject,
    Request,
    Settings,
    Context(usize),
}

impl<'c> Mutator<'c> {
    pub fn new(corpus: &'c Corpus, raw: bool) -> Self {
        let any_context = corpus.seeds.iter().any(|s| !s.context.is_empty());
        let weights = Mutation::ALL
            .iter()
            .map(|m| match m {
                Mutation::Context if !any_context => 0,
                Mutation::SchemaSettings | Mutation::SettingsField if corpus.schema.is_empty() => 0,
                m => m.weight(),
            })
            .collect();
        Self {
            corpus,
            raw,
            raw_share: 0.12,
            weights,
        }
    }

    /// Input `index` of a run with `seed`.
    pub fn input(&self, seed: u64, index: u64) -> Input {
        let mut rng = Rng::for_input(seed, &self.corpus.policy, index);
        self.generate(&mut rng, index)
    }

    pub fn generate(&self, rng: &mut Rng, index: u64) -> Input {
        // policy-server refuses reviews over 2 MiB, so larger inputs would
        // only test the harness' memory cap: make another one.
        for _ in 0..4 {
            let input = self.generate_once(rng, index);
            if input_size(&input) <= MAX_INPUT_BYTES {
                return input;
            }
        }
        let mut input = self.generate_once(rng, index);
        if input_size(&input) > MAX_INPUT_BYTES {
            if let Some(seed) = self.corpus.seeds.iter().find(|s| s.id == input.seed_id) {
                input.request = seed.request.clone();
                input.settings = seed.settings.clone();
                input.context = seed.context.clone();
                input.settings_changed = false;
                input.applied.clear();
            }
        }
        input
    }

    fn generate_once(&self, rng: &mut Rng, index: u64) -> Input {
        let seeds = &self.corpus.seeds;
        let seed_index = rng.below(seeds.len());
        let Some(seed) = seeds.get(seed_index) else {
            return Input {
                index,
                seed_id: String::new(),
                now: Timestamp::UNIX_EPOCH,
                settings: json!({}),
                request: json!({}),
                context: Vec::new(),
                raw: None,
                settings_changed: false,
                applied: Vec::new(),
            };
        };
        let mut input = Input {
            index,
            seed_id: seed.id.clone(),
            now: seed.now,
            settings: seed.settings.clone(),
            request: seed.request.clone(),
            context: seed.context.clone(),
            raw: None,
            settings_changed: false,
            applied: Vec::new(),
        };
        let k = match rng.below(20) {
            0..=11 => 1,
            12..=16 => 2,
            _ => rng.range(3, 6),
        };
        for _ in 0..k {
            let m = Mutation::ALL
                .get(rng.weighted(&self.weights))
                .copied()
                .unwrap_or(Mutation::Dictionary);
            self.apply(rng, m, &mut input, seed);
            input.applied.push(m);
        }
        if self.raw && rng.chance(self.raw_share) {
            input.raw = Some(RawOp::random(rng));
        }
        input.settings_changed = input.settings != seed.settings;
        input
    }

    fn apply(&self, rng: &mut Rng, m: Mutation, input: &mut Input, seed: &Seed) {
        match m {
            Mutation::ExtremeNow => {
                input.now = values::extreme_clock(rng, &self.corpus.dict.instants, seed.now);
            }
            Mutation::ManyKeys => self.many_keys(rng, input),
            Mutation::Annotation => self.annotation(rng, input),
            Mutation::RequestMeta => self.request_meta(rng, input),
            Mutation::UserInfo => self.user_info(rng, input),
            Mutation::SchemaSettings => {
                let mut settings = if rng.chance(0.5) {
                    self.random_seed(rng).settings.clone()
                } else {
                    json!({})
                };
                for _ in 0..rng.range(1, 6) {
                    self.set_settings_field(rng, &mut settings);
                }
                input.settings = settings;
            }
            Mutation::SettingsField => self.set_settings_field(rng, &mut input.settings),
            Mutation::Context => self.context(rng, input),
            generic => {
                let region = self.region(rng, input);
                let now = input.now;
                if let Some(root) = region_root(input, region) {
                    self.generic(rng, generic, root, region, now);
                }
            }
        }
    }

    fn random_seed(&self, rng: &mut Rng) -> &'c Seed {
        let seeds = &self.corpus.seeds;
        let i = rng.below(seeds.len());
        // `generate` returns before mutating when there are no seeds.
        match seeds.get(i).or_else(|| seeds.first()) {
            Some(s) => s,
            None => unreachable_seed(),
        }
    }

    fn region(&self, rng: &mut Rng, input: &Input) -> Region {
        let has = |k: &str| input.request.get(k).is_some_and(|v| !v.is_null());
        let weights = [
            if has("object") { 40 } else { 0 },
            if has("oldObject") { 15 } else { 0 },
            8,
            8,
            if input.context.is_empty() { 0 } else { 15 },
        ];
        match rng.weighted(&weights) {
            0 => Region::Object,
            1 => Region::OldObject,
            2 => Region::Request,
            3 => Region::Settings,
            _ => Region::Context(rng.below(input.context.len())),
        }
    }

    /// A mutation at a random node of `root`.
    #[expect(clippy::too_many_lines, reason = "one arm per mutation of a node")]
    fn generic(
        &self,
        rng: &mut Rng,
        m: Mutation,
        root: &mut Value,
        region: Region,
        now: Timestamp,
    ) {
        let dict = &self.corpus.dict;
        let path = tree::random_path(root, rng);
        if m == Mutation::RemoveKey {
            if !tree::remove(root, &path) {
                if let Value::Object(map) = root {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    if let Some(k) = rng.pick(&keys) {
                        map.remove(k);
                    }
                }
            }
            return;
        }
        if m == Mutation::OddUnicode && rng.chance(0.3) {
            // Rename a member instead of changing a value.
            if let (Some((Seg::Key(k), parent)), true) = (path.split_last(), true) {
                if let Some(Value::Object(map)) = tree::get_mut(root, parent) {
                    if let Some(v) = map.remove(k) {
                        map.insert(values::odd_string(rng, Some(k)), v);
                        return;
                    }
                }
            }
        }
        let key = tree::last_key(&path).map(str::to_string);
        let Some(node) = tree::get_mut(root, &path) else {
            return;
        };
        let new = match m {
            Mutation::TypeSwap => swap_type(rng, node),
            Mutation::Null => Value::Null,
            Mutation::HugeString => Value::String(self.huge_string(rng, node.as_str())),
            Mutation::LongArray => {
                let n = rng.log_size(100, 50_000);
                let element = if tree::size(node) <= 256 {
                    node.clone()
                } else {
                    Value::String(rng.pick(&dict.strings).cloned().unwrap_or_default())
                };
                Value::Array(vec![element; n])
            }
            Mutation::DeepNest => {
                // Mostly as deep as policy-server's parser still reads
                // (reachable inputs), sometimes deeper (raw-level inputs).
                let enclosing = path.len()
                    + match region {
                        Region::Object | Region::OldObject | Region::Context(_) => 2,
                        Region::Request | Region::Settings => 1,
                    };
                let depth = if rng.chance(0.7) {
                    rng.range(100, tree::PARSER_DEPTH_LIMIT)
                        .saturating_sub(enclosing + tree::depth(node))
                        .max(1)
                } else if rng.chance(0.85) {
                    rng.range(100, 400)
                } else {
                    rng.range(400, 3000)
                };
                let objects = rng.chance(0.4);
                let mut v = std::mem::take(node);
                for _ in 0..depth {
                    v = if objects {
                        let mut m = Map::new();
                        m.insert("a".into(), v);
                        Value::Object(m)
                    } else {
                        Value::Array(vec![v])
                    };
                }
                v
            }
            Mutation::OddUnicode => Value::String(values::odd_string(rng, node.as_str())),
            Mutation::ExtremeNumber => values::extreme_number(rng),
            Mutation::InstantText => {
                let text = values::instant_text(rng, &dict.instants, now);
                match node.as_str() {
                    Some(s) => {
                        let spans = crate::seeds::instant_spans(s);
                        match rng.pick(&spans) {
                            Some(&(a, b)) => Value::String(format!(
                                "{}{text}{}",
                                s.get(..a).unwrap_or(""),
                                s.get(b..).unwrap_or("")
                            )),
                            None if rng.chance(0.3) => Value::String(format!("{s} until={text}")),
                            None => Value::String(text),
                        }
                    }
                    None => Value::String(text),
                }
            }
            Mutation::Splice => self.splice(rng, key.as_deref(), region),
            Mutation::Dictionary => Value::String(self.dictionary_string(rng, key.as_deref())),
            _ => return,
        };
        *node = new;
    }

    /// A value seen under the same member name elsewhere in the corpus, or
    /// the same region of another case.
    fn splice(&self, rng: &mut Rng, key: Option<&str>, region: Region) -> Value {
        let dict = &self.corpus.dict;
        if let Some(found) = key.and_then(|k| dict.by_key.get(k)) {
            if rng.chance(0.8) {
                if let Some(v) = rng.pick(found) {
                    return v.clone();
                }
            }
        }
        let other = self.random_seed(rng);
        let source = match region {
            Region::Settings => &other.settings,
            Region::Context(_) => other
                .context
                .iter()
                .find_map(|r| r.object.as_ref())
                .unwrap_or(&other.request),
            _ => &other.request,
        };
        let path = tree::random_path(source, rng);
        tree::get(source, &path).cloned().unwrap_or(Value::Null)
    }

    fn dictionary_string(&self, rng: &mut Rng, key: Option<&str>) -> String {
        let dict = &self.corpus.dict;
        let key = key.unwrap_or("").to_ascii_lowercase();
        let pool: &[&str] = if key.contains("cron") {
            CRONS
        } else if key.contains("zone") {
            TIME_ZONES
        } else if ["duration", "window", "tolerance", "interval", "timeout"]
            .iter()
            .any(|k| key.contains(k))
        {
            DURATIONS
        } else {
            &[]
        };
        match rng.below(10) {
            0..=2 if !pool.is_empty() => rng.pick(pool).copied().unwrap_or("").to_string(),
            3 => rng.pick(DURATIONS).copied().unwrap_or("").to_string(),
            4 => rng.pick(CRONS).copied().unwrap_or("").to_string(),
            5 => rng.pick(TIME_ZONES).copied().unwrap_or("").to_string(),
            6 => rng.pick(&dict.keys).cloned().unwrap_or_default(),
            _ => rng.pick(&dict.strings).cloned().unwrap_or_default(),
        }
    }

    fn huge_string(&self, rng: &mut Rng, current: Option<&str>) -> String {
        let dict = &self.corpus.dict;
        let size = rng.log_size(1024, 1 << 20);
        let piece: String = match rng.below(6) {
            0 => "a".into(),
            1 => current.filter(|s| !s.is_empty()).unwrap_or("x").to_string(),
            2 => rng
                .pick(&dict.strings)
                .cloned()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "y".into()),
            3 => rng
                .pick(values::ODD_PIECES)
                .copied()
                .unwrap_or("z")
                .to_string(),
            4 => "a ".into(),
            _ => "until=".into(),
        };
        let piece = if piece.is_empty() {
            "a".to_string()
        } else {
            piece
        };
        let mut s = String::with_capacity(size + piece.len());
        if rng.chance(0.3) {
            s.push_str(current.unwrap_or(""));
        }
        while s.len() < size {
            s.push_str(&piece);
        }
        s
    }

    /// Thousands of annotations or labels (or members of any object).
    fn many_keys(&self, rng: &mut Rng, input: &mut Input) {
        let dict = &self.corpus.dict;
        let n = rng.log_size(100, 20_000);
        let prefix = match rng.below(5) {
            0 => "k".to_string(),
            1 => format!(
                "{}-",
                rng.pick(&dict.annotation_keys).cloned().unwrap_or_default()
            ),
            2 => "example.com/k".to_string(),
            3 => format!("{}/k", "a".repeat(rng.range(50, 300))),
            _ => rng.pick(&dict.keys).cloned().unwrap_or_default(),
        };
        let value = match rng.below(4) {
            0 => Value::String("v".into()),
            1 => Value::String(String::new()),
            _ => Value::String(
                rng.pick(&dict.strings)
                    .filter(|s| s.len() <= 256)
                    .cloned()
                    .unwrap_or_default(),
            ),
        };
        let map = if rng.chance(0.75) {
            let which = if rng.chance(0.7) {
                "object"
            } else {
                "oldObject"
            };
            let field = if rng.chance(0.7) {
                "annotations"
            } else {
                "labels"
            };
            object_at(&mut input.request, &[which, "metadata", field])
        } else {
            let region = self.region(rng, input);
            region_root(input, region).and_then(|root| {
                let path = tree::random_path(root, rng);
                match tree::get_mut(root, &path) {
                    Some(Value::Object(m)) => Some(m),
                    _ => None,
                }
            })
        };
        if let Some(map) = map {
            for i in 0..n {
                map.insert(format!("{prefix}{i}"), value.clone());
            }
        }
    }

    /// An annotation or label that the policies read, set, changed or removed.
    fn annotation(&self, rng: &mut Rng, input: &mut Input) {
        let dict = &self.corpus.dict;
        let which = if rng.chance(0.7) {
            "object"
        } else {
            "oldObject"
        };
        let labels = rng.chance(0.15);
        let field = if labels { "labels" } else { "annotations" };
        if rng.chance(0.1) {
            // Copy the other object's map over.
            let other = if which == "object" {
                "oldObject"
            } else {
                "object"
            };
            let copy = input
                .request
                .get(other)
                .and_then(|o| o.get("metadata"))
                .and_then(|m| m.get(field))
                .cloned();
            if let (Some(Value::Object(copy)), Some(map)) = (
                copy,
                object_at(&mut input.request, &[which, "metadata", field]),
            ) {
                *map = copy;
            }
            return;
        }
        let keys = if labels {
            &dict.label_keys
        } else {
            &dict.annotation_keys
        };
        let now = input.now;
        let Some(map) = object_at(&mut input.request, &[which, "metadata", field]) else {
            return;
        };
        if rng.chance(0.15) && !map.is_empty() {
            let present: Vec<String> = map.keys().cloned().collect();
            if let Some(k) = rng.pick(&present) {
                map.remove(k);
            }
            return;
        }
        let key = match rng.below(10) {
            0..=6 => rng.pick(keys).cloned().unwrap_or_default(),
            7 => rng.pick(&dict.keys).cloned().unwrap_or_default(),
            _ => {
                let base = rng.pick(keys).cloned();
                values::odd_string(rng, base.as_deref())
            }
        };
        let current = map.get(&key).and_then(Value::as_str).map(str::to_string);
        let value = match rng.below(20) {
            0..=6 => Value::String(rng.pick(&dict.strings).cloned().unwrap_or_default()),
            7..=8 => Value::String(values::odd_string(
                rng,
                current
                    .as_deref()
                    .or(dict.strings.first().map(String::as_str)),
            )),
            9..=10 => {
                let text = values::instant_text(rng, &dict.instants, now);
                Value::String(match current.as_deref() {
                    Some(c) => format!("{c} until={text}"),
                    None => format!("until={text}"),
                })
            }
            11 => Value::String(self.huge_string(rng, current.as_deref())),
            12..=13 => values::random_value(rng, &dict.strings),
            14..=15 => Value::String(String::new()),
            16 => Value::String(format!(" {} ", current.unwrap_or_default())),
            _ => Value::String(self.dictionary_string(rng, Some(&key))),
        };
        map.insert(key, value);
    }

    #[expect(clippy::too_many_lines, reason = "one arm per envelope field mutated")]
    fn request_meta(&self, rng: &mut Rng, input: &mut Input) {
        let dict = &self.corpus.dict;
        let Value::Object(req) = &mut input.request else {
            return;
        };
        match rng.below(12) {
            0 | 1 => {
                let op = rng.pick(OPERATIONS).copied().unwrap_or("UPDATE");
                req.insert("operation".into(), json!(op));
            }
            2 | 3 => {
                let kind = rng.pick(&dict.kinds).cloned().unwrap_or_default();
                let api_version = rng.pick(&dict.api_versions).cloned().unwrap_or_default();
                let (group, version) = match api_version.split_once('/') {
                    Some((g, v)) => (g.to_string(), v.to_string()),
                    None => (String::new(), api_version.clone()),
                };
                let gvk = json!({"group": group, "version": version, "kind": kind});
                req.insert("kind".into(), gvk.clone());
                if rng.chance(0.5) {
                    req.insert("requestKind".into(), gvk);
                }
                if rng.chance(0.5) {
                    for which in ["object", "oldObject"] {
                        if let Some(Value::Object(o)) = req.get_mut(which) {
                            o.insert("kind".into(), json!(kind));
                            o.insert("apiVersion".into(), json!(api_version));
                        }
                    }
                }
            }
            4 => {
                let resource = rng.pick(&dict.resources).cloned().unwrap_or_default();
                let group = rng.pick(&dict.groups).cloned().unwrap_or_default();
                req.insert(
                    "resource".into(),
                    json!({"group": group, "version": "v1", "resource": resource}),
                );
            }
            5 => {
                if rng.chance(0.3) {
                    req.remove("subResource");
                } else {
                    let sub = rng.pick(SUB_RESOURCES).copied().unwrap_or("status");
                    req.insert("subResource".into(), json!(sub));
                    if rng.chance(0.5) {
                        req.insert("requestSubResource".into(), json!(sub));
                    }
                }
            }
            6 => match rng.below(3) {
                0 => {
                    req.remove("dryRun");
                }
                n => {
                    req.insert("dryRun".into(), json!(n == 1));
                }
            },
            7 => {
                let field = if rng.chance(0.5) { "name" } else { "namespace" };
                match rng.below(4) {
                    0 => {
                        req.remove(field);
                    }
                    1 => {
                        req.insert(field.into(), json!(""));
                    }
                    2 => {
                        let base = req.get(field).and_then(Value::as_str).map(str::to_string);
                        req.insert(
                            field.into(),
                            json!(values::odd_string(rng, base.as_deref())),
                        );
                    }
                    _ => {
                        let s = rng.pick(&dict.strings).cloned().unwrap_or_default();
                        req.insert(field.into(), json!(s));
                    }
                }
            }
            8 => {
                let (object, old) = (req.remove("object"), req.remove("oldObject"));
                match rng.below(5) {
                    0 => {
                        // Swap.
                        if let Some(o) = object {
                            req.insert("oldObject".into(), o);
                        }
                        if let Some(o) = old {
                            req.insert("object".into(), o);
                        }
                    }
                    1 => {
                        if let Some(o) = old {
                            req.insert("oldObject".into(), o);
                        }
                    }
                    2 => {
                        if let Some(o) = object {
                            req.insert("object".into(), o);
                        }
                    }
                    3 => {
                        if let Some(o) = object {
                            req.insert("object".into(), o.clone());
                            req.insert("oldObject".into(), o);
                        }
                    }
                    _ => {
                        if let Some(o) = old {
                            req.insert("object".into(), o.clone());
                            req.insert("oldObject".into(), o);
                        }
                    }
                }
            }
            9 => {
                // Another case's object, as object or old object.
                let other = self.random_seed(rng);
                let which = if rng.chance(0.5) {
                    "object"
                } else {
                    "oldObject"
                };
                if let Some(o) = other.request.get(which).or(other.request.get("object")) {
                    req.insert(which.into(), o.clone());
                }
            }
            10 => {
                let options = match rng.below(3) {
                    0 => Value::Null,
                    1 => json!({}),
                    _ => {
                        json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Orphan"})
                    }
                };
                req.insert("options".into(), options);
            }
            _ => {
                let uid = match rng.below(3) {
                    0 => values::odd_string(rng, None),
                    1 => String::new(),
                    _ => "u".repeat(rng.log_size(100, 100_000)),
                };
                req.insert("uid".into(), json!(uid));
            }
        }
    }

    fn user_info(&self, rng: &mut Rng, input: &mut Input) {
        let dict = &self.corpus.dict;
        let Some(user) = object_at(&mut input.request, &["userInfo"]) else {
            return;
        };
        match rng.below(6) {
            0 | 1 => {
                let name = match rng.below(6) {
                    0..=2 => rng.pick(&dict.usernames).cloned().unwrap_or_default(),
                    3 => {
                        let ns = rng.pick(&dict.strings).cloned().unwrap_or_default();
                        let sa = rng.pick(&dict.strings).cloned().unwrap_or_default();
                        format!("system:serviceaccount:{ns}:{sa}")
                    }
                    4 => [
                        "system:serviceaccount:",
                        "system:serviceaccount:::",
                        "system:serviceaccount:a",
                        ":",
                        "",
                    ]
                    .get(rng.below(5))
                    .copied()
                    .unwrap_or("")
                    .to_string(),
                    _ => values::odd_string(rng, dict.usernames.first().map(String::as_str)),
                };
                user.insert("username".into(), json!(name));
            }
            2 | 3 => {
                let n = if rng.chance(0.9) {
                    rng.range(0, 5)
                } else {
                    rng.log_size(10, 5000)
                };
                let groups: Vec<Value> = (0..n)
                    .map(|_| {
                        json!(rng
                            .pick(&dict.user_groups)
                            .cloned()
                            .unwrap_or_else(|| "system:authenticated".into()))
                    })
                    .collect();
                user.insert("groups".into(), Value::Array(groups));
            }
            4 => {
                user.remove(
                    ["username", "groups", "uid", "extra"]
                        .get(rng.below(4))
                        .copied()
                        .unwrap_or("groups"),
                );
            }
            _ => {
                user.insert(
                    "extra".into(),
                    json!({"authentication.kubernetes.io/pod-name": [values::odd_string(rng, None)]}),
                );
            }
        }
    }

    fn context(&self, rng: &mut Rng, input: &mut Input) {
        let donors: Vec<&Recorded> = self
            .corpus
            .seeds
            .iter()
            .flat_map(|s| s.context.iter())
            .collect();
        let namespace = input
            .request
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if input.context.is_empty() || rng.chance(0.1) {
            if let Some(&r) = rng.pick(&donors) {
                let mut r = r.clone();
                if rng.chance(0.5) && !r.namespace.is_empty() {
                    r.namespace = namespace;
                }
                input.context.push(r);
            }
            return;
        }
        let i = rng.below(input.context.len());
        match rng.below(10) {
            0 => {
                input.context.remove(i);
            }
            1 => {
                if let Some(r) = input.context.get(i).cloned() {
                    input.context.push(r);
                }
            }
            2 => {
                if let Some(r) = input.context.get_mut(i) {
                    r.object = None;
                    r.error = Some(match rng.below(3) {
                        0 => format!(
                            "{} \"{}\" is forbidden: User cannot get resource",
                            r.kind.to_lowercase(),
                            r.name
                        ),
                        1 => values::odd_string(rng, Some("connection refused")),
                        _ => "x".repeat(rng.log_size(10, 100_000)),
                    });
                }
            }
            3 => {
                let dict = &self.corpus.dict;
                if let Some(r) = input.context.get_mut(i) {
                    let s = rng.pick(&dict.strings).cloned().unwrap_or_default();
                    match rng.below(3) {
                        0 => r.name = s,
                        1 => r.namespace = s,
                        _ => r.namespace = namespace,
                    }
                }
            }
            _ => {
                let m = [
                    Mutation::TypeSwap,
                    Mutation::Null,
                    Mutation::RemoveKey,
                    Mutation::OddUnicode,
                    Mutation::ExtremeNumber,
                    Mutation::InstantText,
                    Mutation::Splice,
                    Mutation::Dictionary,
                    Mutation::HugeString,
                    Mutation::DeepNest,
                ];
                let m = rng.pick(&m).copied().unwrap_or(Mutation::Null);
                let now = input.now;
                if let Some(root) = region_root(input, Region::Context(i)) {
                    self.generic(rng, m, root, Region::Context(i), now);
                }
            }
        }
    }

    /// Sets one settings field (or a field of one element of a sequence
    /// field) to a value of the right shape, or now and then of a wrong one.
    fn set_settings_field(&self, rng: &mut Rng, settings: &mut Value) {
        let Some(field) = rng.pick(&self.corpus.schema) else {
            return;
        };
        if let Shape::Sequence(children) = &field.shape {
            if rng.chance(0.5) {
                if let Some(Value::Array(items)) = get_path_mut(settings, &field.path) {
                    let i = rng.below(items.len());
                    if let (Some(item), Some(child)) = (items.get_mut(i), rng.pick(children)) {
                        let right = rng.chance(0.8);
                        let v = self.shaped(rng, child, right, 0);
                        set_path(item, &child.path, v);
                        return;
                    }
                }
            }
        }
        let right = rng.chance(0.88);
        let v = self.shaped(rng, field, right, 0);
        set_path(settings, &field.path, v);
    }

    /// A value for a settings field: of its shape when `right`, of another otherwise.
    #[expect(clippy::too_many_lines, reason = "one arm per shape of settings field")]
    fn shaped(&self, rng: &mut Rng, field: &Field, right: bool, depth: usize) -> Value {
        let dict = &self.corpus.dict;
        if !right {
            return match field.shape {
                Shape::String | Shape::Enum(_) => match rng.below(4) {
                    0 => json!(rng.below(10)),
                    1 => json!(true),
                    2 => json!([]),
                    _ => json!({}),
                },
                Shape::Int => match rng.below(4) {
                    0 => json!("5"),
                    1 => json!(1.5),
                    2 => values::extreme_number(rng),
                    _ => json!(null),
                },
                Shape::Bool => json!(["true", "yes", "1", ""]
                    .get(rng.below(4))
                    .copied()
                    .unwrap_or("")),
                Shape::List | Shape::Sequence(_) => match rng.below(3) {
                    0 => json!("a"),
                    1 => json!({}),
                    _ => json!([1, null, {}]),
                },
                Shape::Map => json!(["a", "b"]),
                Shape::Any => values::random_value(rng, &dict.strings),
            };
        }
        if let Some(samples) = dict.settings_values.get(&field.sample_key) {
            if rng.chance(0.4) {
                if let Some(v) = rng.pick(samples) {
                    return v.clone();
                }
            }
        }
        let name = field.sample_key.to_ascii_lowercase();
        let list_item = |rng: &mut Rng| -> Value {
            let pool = if name.contains("serviceaccount") {
                let ns = rng.pick(&dict.strings).cloned().unwrap_or_default();
                return json!(format!(
                    "{ns}:{}",
                    rng.pick(&dict.strings).cloned().unwrap_or_default()
                ));
            } else if name.contains("group") {
                &dict.user_groups
            } else if name.contains("user") {
                &dict.usernames
            } else if name.contains("key") || name.contains("annotation") {
                &dict.annotation_keys
            } else {
                &dict.strings
            };
            match rng.below(10) {
                0 => json!(values::odd_string(rng, None)),
                1 => json!("*"),
                _ => json!(rng.pick(pool).cloned().unwrap_or_default()),
            }
        };
        match &field.shape {
            Shape::String => {
                let s = if name.contains("pattern") || name.contains("regex") {
                    rng.pick(REGEXES).copied().unwrap_or("").to_string()
                } else if ["start", "end", "until", "time"]
                    .iter()
                    .any(|k| name.ends_with(k))
                    && !name.contains("zone")
                {
                    values::instant_text(rng, &dict.instants, Timestamp::UNIX_EPOCH)
                } else if rng.chance(0.15) {
                    values::odd_string(rng, field.default.as_ref().and_then(Value::as_str))
                } else {
                    self.dictionary_string(rng, Some(&name))
                };
                json!(s)
            }
            Shape::Int => match rng.below(4) {
                0 => values::extreme_number(rng),
                _ => json!(rng.log_size(1, 1 << 20) as i64 - 1),
            },
            Shape::Bool => json!(rng.chance(0.5)),
            Shape::Enum(options) => {
                let o = rng.pick(options).cloned().unwrap_or_default();
                match rng.below(10) {
                    0 => json!(o.to_uppercase()),
                    1 => json!(format!("{o} ")),
                    _ => json!(o),
                }
            }
            Shape::List => {
                let n = if rng.chance(0.95) {
                    rng.range(0, 4)
                } else {
                    rng.log_size(10, 5000)
                };
                Value::Array((0..n).map(|_| list_item(rng)).collect())
            }
            Shape::Map => {
                let mut m = Map::new();
                for _ in 0..rng.range(0, 4) {
                    let k = rng
                        .pick(&dict.annotation_keys)
                        .cloned()
                        .unwrap_or_else(|| "k".into());
                    let v = if name.contains("pattern") {
                        rng.pick(REGEXES).copied().unwrap_or("").to_string()
                    } else {
                        rng.pick(&dict.strings).cloned().unwrap_or_default()
                    };
                    m.insert(k, json!(v));
                }
                Value::Object(m)
            }
            Shape::Sequence(children) if depth < 3 => {
                let n = rng.range(0, 3);
                let items = (0..n)
                    .map(|_| {
                        let mut item = json!({});
                        for child in children {
                            if rng.chance(0.8) {
                                let right = rng.chance(0.9);
                                let v = self.shaped(rng, child, right, depth + 1);
                                set_path(&mut item, &child.path, v);
                            }
                        }
                        item
                    })
                    .collect();
                Value::Array(items)
            }
            Shape::Sequence(_) => json!([]),
            Shape::Any => values::random_value(rng, &dict.strings),
        }
    }
}

/// Regular expressions for pattern settings: ordinary, invalid, and costly.
const REGEXES: &[&str] = &[
    "^[A-Z]+-[0-9]+",
    "^[a-z0-9-]+$",
    ".*",
    "",
    "(",
    "[",
    "\\",
    "(a+)+$",
    "(a|aa)*b",
    "(x+x+)+y",
    "a{1000000}",
    "a{1000}{1000}",
    "\\d{1,65535}",
    ".{0,100000}",
    "(?i)\\p{L}+",
    "\\p{Greek}",
    "x{2,1}",
    "[z-a]",
    "(?P<n>a)(?P<n>b)",
    "^$",
    "\\b\\w+\\b",
    "(?s).",
    "\u{0}",
];

fn unreachable_seed() -> &'static Seed {
    // Only reachable with an empty corpus, which `seeds::load` refuses.
    static EMPTY: std::sync::OnceLock<Seed> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Seed {
        id: String::new(),
        now: Timestamp::UNIX_EPOCH,
        settings: json!({}),
        request: json!({}),
        context: Vec::new(),
    })
}

fn region_root(input: &mut Input, region: Region) -> Option<&mut Value> {
    match region {
        Region::Object => input.request.get_mut("object"),
        Region::OldObject => input.request.get_mut("oldObject"),
        Region::Request => Some(&mut input.request),
        Region::Settings => Some(&mut input.settings),
        Region::Context(i) => {
            let r = input.context.get_mut(i)?;
            Some(r.object.get_or_insert_with(|| json!({})))
        }
    }
}

/// The object at `path` under `root`, made (replacing whatever is in the
/// way) when it is not there.
fn object_at<'a>(root: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut node = root;
    for key in path {
        if !node.is_object() {
            *node = json!({});
        }
        let Value::Object(map) = node else {
            return None;
        };
        node = map.entry(key.to_string()).or_insert_with(|| json!({}));
    }
    if !node.is_object() {
        *node = json!({});
    }
    match node {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn get_path_mut<'a>(root: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut node = root;
    for key in path {
        node = node.as_object_mut()?.get_mut(key)?;
    }
    Some(node)
}

/// Sets `path` (member names) under `root` to `value`, making objects on the way.
pub fn set_path(root: &mut Value, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        *root = value;
        return;
    };
    let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
    if let Some(map) = object_at(root, &parents) {
        map.insert(last.clone(), value);
    }
}

/// The value as another JSON type.
fn swap_type(rng: &mut Rng, v: &Value) -> Value {
    let target = rng.below(5);
    match (v, target) {
        (Value::String(s), 0) => s
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| json!(s.len())),
        (Value::String(s), 1) => json!(!s.is_empty()),
        (Value::String(s), 2) => json!([s]),
        (Value::String(s), _) => json!({ s.clone(): s }),
        (Value::Number(n), 0) => json!(n.to_string()),
        (Value::Number(n), 1) => json!(n.as_f64().is_some_and(|f| f != 0.0)),
        (Value::Number(n), 2) => json!([n]),
        (Value::Number(_), _) => json!({}),
        (Value::Bool(b), 0) => json!(b.to_string()),
        (Value::Bool(b), 1) => json!(u8::from(*b)),
        (Value::Bool(b), 2) => json!([b]),
        (Value::Bool(_), _) => json!({}),
        (Value::Array(a), 0) => a.first().cloned().unwrap_or(json!("")),
        (Value::Array(a), 1) => Value::Object(
            a.iter()
                .enumerate()
                .map(|(i, x)| (i.to_string(), x.clone()))
                .collect(),
        ),
        (Value::Array(a), 2) => json!(a.len()),
        (Value::Array(_), _) => json!(serde_json::to_string(v).unwrap_or_default()),
        (Value::Object(m), 0) => Value::Array(m.values().cloned().collect()),
        (Value::Object(m), 1) => Value::Array(m.keys().map(|k| json!(k)).collect()),
        (Value::Object(m), 2) => json!(m.len()),
        (Value::Object(_), _) => json!(serde_json::to_string(v).unwrap_or_default()),
        (Value::Null, 0) => json!(""),
        (Value::Null, 1) => json!(0),
        (Value::Null, 2) => json!([]),
        (Value::Null, _) => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeds;
    use std::collections::BTreeSet;

    pub(crate) fn corpus() -> Corpus {
        let request = json!({
            "uid": "1",
            "kind": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "kind": "Kustomization"},
            "resource": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "resource": "kustomizations"},
            "name": "apps",
            "namespace": "flux-system",
            "operation": "UPDATE",
            "userInfo": {"username": "alice", "groups": ["sre"]},
            "object": {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": "apps", "annotations": {"reconcile.fluxcd.io/suspended": "maintenance until=2026-11-22T18:00:00Z"}},
                "spec": {"suspend": true, "interval": "10m"}},
            "oldObject": {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": "apps"}, "spec": {"suspend": false, "interval": "10m"}}
        });
        let context: Vec<Recorded> = serde_json::from_value(json!([
            {"apiVersion": "v1", "kind": "Namespace", "name": "flux-system",
             "object": {"metadata": {"name": "flux-system", "annotations": {"a": "b"}}}}
        ]))
        .unwrap();
        let seed = Seed {
            id: "p/one".into(),
            now: "2026-11-20T09:00:00Z".parse().unwrap(),
            settings: json!({"mode": "mirror", "suspenders": {"groups": ["sre"]}}),
            request,
            context,
        };
        let questions: Value = serde_norway::from_str(
            "questions:\n\
             - variable: mode\n  type: enum\n  options: [mirror, annotation-only]\n\
             - variable: maxDuration\n  type: string\n\
             - variable: minReasonLength\n  type: int\n\
             - variable: suspenders.groups\n  type: array[\n",
        )
        .unwrap();
        // A second case, different everywhere, so that splices have material.
        let mut other = seed.clone();
        other.id = "p/two".into();
        other.settings = json!({"mode": "annotation-only", "maxDuration": "72h"});
        other.request["operation"] = json!("DELETE");
        other.request["userInfo"] = json!({"username": "bob", "groups": ["dev", "ops"]});
        other.request["object"] = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": "repo", "labels": {"team": "x"}, "annotations": {"note": "hello"}},
            "spec": {"url": "https://example.com/r.git", "ref": {"branch": "main"}, "interval": "1h"}});
        other.request["oldObject"] = other.request["object"].clone();
        other.context[0].object =
            Some(json!({"metadata": {"name": "flux-system", "labels": {"x": "y"}}, "spec": {}}));
        seeds::build("p", vec![seed, other], Some(&questions), None)
    }

    #[test]
    fn the_same_seed_and_index_make_the_same_input() {
        let corpus = corpus();
        let m = Mutator::new(&corpus, true);
        for index in 0..200 {
            let (a, b) = (m.input(42, index), m.input(42, index));
            assert_eq!(a.request, b.request);
            assert_eq!(a.settings, b.settings);
            assert_eq!(a.now, b.now);
            assert_eq!(a.context, b.context);
            assert_eq!(a.raw, b.raw);
            assert_eq!(a.applied, b.applied);
        }
        let differ = (0..50)
            .filter(|i| m.input(42, *i).request != m.input(43, *i).request)
            .count();
        assert!(
            differ > 25,
            "another seed makes other inputs ({differ} of 50 differ)"
        );
    }

    #[test]
    fn every_mutation_class_is_produced_and_changes_the_input() {
        let corpus = corpus();
        let m = Mutator::new(&corpus, true);
        let seed = corpus.seeds[0].clone();
        let mut produced = BTreeSet::new();
        let mut raw_ops = BTreeSet::new();
        for index in 0..5_000 {
            let input = m.input(7, index);
            produced.extend(input.applied.iter().copied());
            if let Some(op) = &input.raw {
                raw_ops.insert(op.name());
            }
        }
        assert_eq!(produced, Mutation::ALL.into_iter().collect());
        assert_eq!(raw_ops.len(), 7, "{raw_ops:?}");
        // Each class, applied alone, changes something (most of the time:
        // a splice may put back the value that was there).
        for class in Mutation::ALL {
            let mut rng = Rng::new(99);
            let changed = (0..50)
                .filter(|_| {
                    let mut input = m.input(1, 0);
                    input.now = seed.now;
                    input.settings = seed.settings.clone();
                    input.request = seed.request.clone();
                    input.context = seed.context.clone();
                    m.apply(&mut rng, class, &mut input, &seed);
                    input.now != seed.now
                        || input.settings != seed.settings
                        || input.request != seed.request
                        || input.context != seed.context
                })
                .count();
            assert!(
                changed >= 25,
                "{class:?} changed the input only {changed} times in 50"
            );
        }
    }

    #[test]
    fn huge_and_deep_values_are_made() {
        let corpus = corpus();
        let m = Mutator::new(&corpus, false);
        let seed = corpus.seeds[0].clone();
        let mut rng = Rng::new(1);
        let mut biggest = 0;
        let mut deepest = 0;
        let mut most_keys = 0;
        for _ in 0..300 {
            let mut input = m.input(1, 0);
            input.request = seed.request.clone();
            m.apply(&mut rng, Mutation::HugeString, &mut input, &seed);
            m.apply(&mut rng, Mutation::DeepNest, &mut input, &seed);
            m.apply(&mut rng, Mutation::ManyKeys, &mut input, &seed);
            biggest = biggest.max(serde_json::to_vec(&input.request).unwrap().len());
            deepest = deepest.max(depth(&input.request).max(depth(&input.settings)));
            let annotations = input.request["object"]["metadata"]["annotations"]
                .as_object()
                .map_or(0, |m| m.len());
            most_keys = most_keys.max(annotations);
        }
        assert!(biggest > 256 << 10, "largest request {biggest} bytes");
        assert!(deepest > 128, "deepest {deepest}");
        assert!(most_keys > 1000, "most annotations {most_keys}");
        assert!(!m.input(1, 0).applied.is_empty());
        assert!(
            (0..2000).all(|i| m.input(3, i).raw.is_none()),
            "--raw false makes no raw input"
        );
    }

    #[test]
    fn inputs_stay_within_what_kubernetes_and_the_clock_allow() {
        let corpus = corpus();
        let m = Mutator::new(&corpus, true);
        let latest = values::latest_clock();
        let mut extreme = 0;
        for index in 0..3000 {
            let input = m.input(11, index);
            assert!(input_size(&input) <= MAX_INPUT_BYTES, "input {index}");
            assert!(
                input.now >= Timestamp::UNIX_EPOCH && input.now <= latest,
                "input {index}: {}",
                input.now
            );
            extreme += usize::from(input.now == Timestamp::UNIX_EPOCH || input.now == latest);
        }
        assert!(extreme > 0, "the clock's edges are tried");
    }

    fn depth(v: &Value) -> usize {
        match v {
            Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
            Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}
