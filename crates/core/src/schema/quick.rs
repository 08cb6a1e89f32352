//! A quick "valid" for arguments that plainly fit a plain schema, without compiling it: the
//! first compile of a tool's schema was the largest step left of a small call's start-up
//! (issue 37). A schema of other keywords (`$ref`, `anyOf`, `pattern`, `format`, ...) has no
//! quick path. The quick check only ever says "certainly valid"; anything else — a mismatch,
//! a float where an integer is asked, a number in an `enum` — goes to the compiled validator,
//! which also words every error, so what a model reads does not change. A test checks the
//! implication on every built-in tool's schema (`declarations::quick_checks_never_pass_what_the_schema_refuses`).

use serde_json::Value;

/// The keywords that only describe.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Schemas nested deeper than this have no quick path.
const MAX_DEPTH: usize = 16;

/// A plain schema, read once.
#[derive(Debug, Default)]
pub(super) struct Quick {
    types: Option<Vec<Kind>>,
    enumerated: Option<Vec<Value>>,
    properties: Vec<(String, Quick)>,
    required: Vec<String>,
    /// `additionalProperties: false`.
    closed: bool,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    items: Option<Box<Quick>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Object,
    String,
    Number,
    Integer,
    Boolean,
    Array,
    Null,
}

impl Kind {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "object" => Kind::Object,
            "string" => Kind::String,
            "number" => Kind::Number,
            "integer" => Kind::Integer,
            "boolean" => Kind::Boolean,
            "array" => Kind::Array,
            "null" => Kind::Null,
            _ => return None,
        })
    }

    /// Certainly of this type (a float with no fraction is left to the validator).
    fn fits(self, v: &Value) -> bool {
        match (self, v) {
            (Kind::Object, Value::Object(_))
            | (Kind::String, Value::String(_))
            | (Kind::Number, Value::Number(_))
            | (Kind::Boolean, Value::Bool(_))
            | (Kind::Array, Value::Array(_))
            | (Kind::Null, Value::Null) => true,
            (Kind::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        }
    }
}

impl Quick {
    /// The quick form of `schema` (draft-07 as the validator reads it, `nullable` already
    /// applied), or `None` when it uses any other keyword.
    pub(super) fn new(schema: &Value) -> Option<Self> {
        Self::read(schema, 0)
    }

    fn read(schema: &Value, depth: usize) -> Option<Self> {
        let Value::Object(map) = schema else { return None };
        if depth > MAX_DEPTH {
            return None;
        }
        let mut q = Quick::default();
        for (key, v) in map {
            match key.as_str() {
                "type" => {
                    q.types = Some(match v {
                        Value::String(t) => vec![Kind::parse(t)?],
                        // Repeated types make the schema invalid: the validator says so.
                        Value::Array(ts) if (1..ts.len()).all(|i| !ts[..i].contains(&ts[i])) => ts
                            .iter()
                            .map(|t| t.as_str().and_then(Kind::parse))
                            .collect::<Option<_>>()?,
                        _ => return None,
                    });
                }
                "enum" => q.enumerated = Some(v.as_array()?.clone()),
                "properties" => {
                    for (name, s) in v.as_object()? {
                        q.properties.push((name.clone(), Self::read(s, depth + 1)?));
                    }
                }
                "required" => {
                    q.required = v
                        .as_array()?
                        .iter()
                        .map(|r| r.as_str().map(str::to_string))
                        .collect::<Option<_>>()?;
                    // Repeated names make the schema invalid: the validator says so.
                    if (1..q.required.len()).any(|i| q.required[..i].contains(&q.required[i])) {
                        return None;
                    }
                }
                "additionalProperties" => q.closed = !v.as_bool()?,
                "minimum" => q.minimum = Some(v.as_f64()?),
                "maximum" => q.maximum = Some(v.as_f64()?),
                // Draft 7's numeric forms (draft 4's booleans have no quick path).
                "exclusiveMinimum" => q.exclusive_minimum = Some(v.as_f64()?),
                "exclusiveMaximum" => q.exclusive_maximum = Some(v.as_f64()?),
                "minLength" => q.min_length = Some(v.as_u64()?),
                "maxLength" => q.max_length = Some(v.as_u64()?),
                "minItems" => q.min_items = Some(v.as_u64()?),
                "maxItems" => q.max_items = Some(v.as_u64()?),
                "items" => q.items = Some(Box::new(Self::read(v, depth + 1)?)),
                // OpenAPI's, already turned into `null` in `type` and `enum`; the validator
                // ignores the keyword itself.
                "nullable" => {}
                k if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        Some(q)
    }

    /// True only when `v` certainly fits.
    pub(super) fn accepts(&self, v: &Value) -> bool {
        if self.types.as_ref().is_some_and(|ts| !ts.iter().any(|t| t.fits(v))) {
            return false;
        }
        // Strings, booleans and null compare exactly; numbers are left to the validator.
        if let Some(values) = &self.enumerated
            && (v.is_number() || v.is_object() || v.is_array() || !values.contains(v))
        {
            return false;
        }
        match v {
            Value::Number(n) => self.number_fits(n),
            Value::String(s) => {
                let len = s.chars().count() as u64;
                self.min_length.is_none_or(|m| len >= m) && self.max_length.is_none_or(|m| len <= m)
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                self.min_items.is_none_or(|m| len >= m)
                    && self.max_items.is_none_or(|m| len <= m)
                    && self.items.as_ref().is_none_or(|q| items.iter().all(|i| q.accepts(i)))
            }
            Value::Object(map) => {
                self.required.iter().all(|r| map.contains_key(r))
                    && self
                        .properties
                        .iter()
                        .all(|(name, q)| map.get(name).is_none_or(|v| q.accepts(v)))
                    && (!self.closed
                        || map.keys().all(|k| self.properties.iter().any(|(n, _)| n == k)))
            }
            Value::Bool(_) | Value::Null => true,
        }
    }

    fn number_fits(&self, n: &serde_json::Number) -> bool {
        // Beyond 2^53 a float comparison may round: the validator decides.
        let Some(x) = n.as_f64().filter(|x| x.abs() < 9_007_199_254_740_992.0) else {
            return self.minimum.is_none()
                && self.maximum.is_none()
                && self.exclusive_minimum.is_none()
                && self.exclusive_maximum.is_none();
        };
        self.minimum.is_none_or(|m| x >= m)
            && self.maximum.is_none_or(|m| x <= m)
            && self.exclusive_minimum.is_none_or(|m| x > m)
            && self.exclusive_maximum.is_none_or(|m| x < m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_schemas_only() {
        assert!(
            Quick::new(&json!({"type": "object", "properties": {"a": {"type": "string"}}}))
                .is_some()
        );
        for other in [
            json!({"anyOf": []}),
            json!({"$ref": "#/x"}),
            json!({"type": "string", "pattern": "a"}),
            json!({"type": "string", "format": "uri"}),
            json!({"properties": {"a": {"not": {}}}}),
            json!({"items": [{"type": "string"}]}),
            json!({"additionalProperties": {"type": "string"}}),
            json!({"exclusiveMinimum": true}),
            json!({"type": "decimal"}),
            json!({"type": ["null", "null"]}),
            json!({"required": ["a", "a"]}),
            json!(true),
        ] {
            assert!(Quick::new(&other).is_none(), "{other}");
        }
    }

    #[test]
    fn only_what_certainly_fits_is_accepted() {
        let q = Quick::new(&json!({
            "type": "object",
            "properties": {
                "s": {"type": "string", "minLength": 1, "maxLength": 3},
                "n": {"type": "integer", "minimum": 1},
                "f": {"type": "number", "exclusiveMaximum": 2},
                "e": {"type": "string", "enum": ["x", "y"]},
                "a": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "o": {"type": ["string", "null"]}
            },
            "required": ["s"],
            "additionalProperties": false
        }))
        .unwrap();
        assert!(q.accepts(&json!({"s": "ab", "n": 3, "f": 1.5, "e": "y", "a": ["q"], "o": null})));
        for refused in [
            json!({}),
            json!({"s": ""}),
            json!({"s": "abcd"}),
            json!({"s": "a", "n": 0}),
            json!({"s": "a", "n": 1.0}),
            json!({"s": "a", "f": 2}),
            json!({"s": "a", "e": "z"}),
            json!({"s": "a", "a": ["q", "r", "s"]}),
            json!({"s": "a", "a": [1]}),
            json!({"s": "a", "o": 1}),
            json!({"s": "a", "zz": 1}),
            json!({"s": 1}),
            json!({"s": "a", "n": 99_999_999_999_999_999u64}),
        ] {
            assert!(!q.accepts(&refused), "{refused}");
        }
    }

    /// A hostile MCP server picks the schema: over thousands of random plain schemas (types,
    /// enums of any values, bounds, lengths, items, required, closed objects, `nullable`) and
    /// random arguments, the quick check never passes what the compiled validator refuses.
    #[test]
    fn random_schemas_never_pass_what_the_validator_refuses() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let values = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.5),
            json!(2.0),
            json!(1e300),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(9_007_199_254_740_993u64),
            json!(""),
            json!("a"),
            json!("abc"),
            json!("é"),
            json!("null"),
            json!([]),
            json!([1, "a"]),
            json!(["a", "b", "c"]),
            json!({}),
            json!({"a": 1}),
            json!({"a": "x", "b": null}),
        ];
        let types = ["object", "string", "number", "integer", "boolean", "array", "null"];
        fn schema(
            next: &mut dyn FnMut(u64) -> u64,
            values: &[Value],
            types: &[&str],
            depth: u32,
        ) -> Value {
            let mut m = serde_json::Map::new();
            match next(3) {
                0 => {}
                1 => {
                    m.insert("type".into(), json!(types[next(7) as usize]));
                }
                _ => {
                    m.insert(
                        "type".into(),
                        json!([types[next(7) as usize], types[next(7) as usize]]),
                    );
                }
            }
            if next(4) == 0 {
                let e: Vec<Value> = (0..1 + next(3))
                    .map(|_| values[next(values.len() as u64) as usize].clone())
                    .collect();
                m.insert("enum".into(), Value::Array(e));
            }
            for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                if next(6) == 0 {
                    m.insert(key.into(), json!(next(5) as i64 - 2));
                }
            }
            for key in ["minLength", "maxLength", "minItems", "maxItems"] {
                if next(6) == 0 {
                    m.insert(key.into(), json!(next(4)));
                }
            }
            if next(5) == 0 {
                m.insert("nullable".into(), json!(true));
            }
            if depth < 2 && next(3) == 0 {
                m.insert("items".into(), schema(next, values, types, depth + 1));
            }
            if depth < 2 && next(2) == 0 {
                let mut props = serde_json::Map::new();
                for k in ["a", "b"] {
                    if next(2) == 0 {
                        props.insert(k.to_string(), schema(next, values, types, depth + 1));
                    }
                }
                m.insert("properties".into(), Value::Object(props));
                if next(2) == 0 {
                    m.insert("required".into(), json!(["a"]));
                }
                if next(3) == 0 {
                    m.insert("additionalProperties".into(), json!(false));
                }
            }
            Value::Object(m)
        }
        let (mut quick, mut passed) = (0, 0);
        for _ in 0..3_000 {
            let s = schema(&mut next, &values, &types, 0);
            let v = crate::schema::ParamValidator::new(s.clone());
            if !v.has_quick_check() {
                continue;
            }
            quick += 1;
            for value in &values {
                if v.quickly_accepts(value) {
                    passed += 1;
                    assert!(v.fully_accepts(value), "{s} passed {value} quickly");
                }
            }
        }
        assert!(quick > 2_000 && passed > 5_000, "{quick} schemas, {passed} quick passes");
    }
}
