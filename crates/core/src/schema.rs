//! Argument validation: JSON Schema checks with the `jsonschema` crate, reported as Ajv does
//! (`params/start_line must be >= 1`), first error only, in Ajv's keyword order.

use jsonschema::Validator;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

mod quick;

/// A parameter schema, compiled on first need. A schema that does not compile is skipped
/// (upstream logs a warning and validates nothing).
pub struct ParamValidator {
    schema: Value,
    /// The schema as validated (`nullable` applied).
    checked: Value,
    /// Plain schemas answer "valid" without the compiled validator (see [`quick`]).
    quick: Option<quick::Quick>,
    validator: std::sync::OnceLock<Option<Validator>>,
}

impl std::fmt::Debug for ParamValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamValidator").field("quick", &self.quick.is_some()).finish()
    }
}

impl ParamValidator {
    /// A validator for a JSON schema (compiled on first use).
    pub fn new(schema: Value) -> Self {
        // `nullable: true` (OpenAPI's, what MCP schemas are repaired to) admits null.
        let checked = with_nullable(&schema);
        let quick = quick::Quick::new(&checked);
        Self { schema, checked, quick, validator: std::sync::OnceLock::new() }
    }

    fn compiled(&self) -> Option<&Validator> {
        self.validator
            .get_or_init(|| {
                // Ajv's default is draft-07; a schema that names its `$schema` gets that draft.
                let built = if self.schema.get("$schema").is_some() {
                    jsonschema::validator_for(&self.checked)
                } else {
                    jsonschema::options().with_draft(jsonschema::Draft::Draft7).build(&self.checked)
                };
                match built {
                    Ok(v) => Some(v),
                    Err(e) => {
                        tracing::warn!("tool schema does not compile, validation skipped: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Whether the schema compiled (compiling it now).
    pub fn is_compiled(&self) -> bool {
        self.compiled().is_some()
    }

    /// Whether the quick check (no compile) covers this schema.
    pub fn has_quick_check(&self) -> bool {
        self.quick.is_some()
    }

    /// The quick check alone: true only for arguments that certainly fit (for tests that
    /// compare it with the compiled validator).
    pub fn quickly_accepts(&self, params: &Value) -> bool {
        self.quick.as_ref().is_some_and(|q| q.accepts(params))
    }

    /// The compiled validator's verdict alone (a schema that does not compile accepts all).
    pub fn fully_accepts(&self, params: &Value) -> bool {
        self.compiled().is_none_or(|v| v.is_valid(params))
    }

    /// `Ok` or the first error in Ajv's wording.
    pub fn validate(&self, params: &Value) -> Result<(), String> {
        if !params.is_object() {
            return Err("Value of params must be an object".into());
        }
        if self.quickly_accepts(params) {
            return Ok(());
        }
        let Some(v) = self.compiled() else { return Ok(()) };
        let mut best: Option<(Vec<u32>, String)> = None;
        for err in v.iter_errors(params) {
            let schema_path = err.schema_path().as_str().to_string();
            let instance_path = err.instance_path().as_str().to_string();
            let key = order_key(&self.schema, &schema_path);
            let msg = ajv_message(err.kind(), &instance_path, &self.schema, &schema_path);
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, msg));
            }
        }
        match best {
            Some((_, msg)) => Err(msg),
            None => Ok(()),
        }
    }
}

/// The schema with every `{"type": T, "nullable": true}` also admitting `null` (as Ajv does with
/// its `nullable` keyword): an MCP parameter declared `["string", "null"]` and repaired to
/// `nullable` refused `null` (issue 19).
fn with_nullable(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: serde_json::Map<String, Value> =
                map.iter().map(|(k, v)| (k.clone(), with_nullable(v))).collect();
            if map.get("nullable") == Some(&Value::Bool(true)) {
                match out.get_mut("type") {
                    // Already `null`: `["null", "null"]` would not compile.
                    Some(Value::String(t)) if t != "null" => {
                        let t = t.clone();
                        out.insert("type".into(), serde_json::json!([t, "null"]));
                    }
                    Some(Value::Array(types)) if !types.contains(&Value::from("null")) => {
                        types.push("null".into());
                    }
                    _ => {}
                }
                if let Some(Value::Array(values)) = out.get_mut("enum")
                    && !values.contains(&Value::Null)
                {
                    values.push(Value::Null);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(with_nullable).collect()),
        other => other.clone(),
    }
}

/// `schema` (an object schema) with more `properties`: the parameters a tool accepts beyond
/// those it declares (see `Tool::accepted_parameters`).
pub fn with_properties(mut schema: Value, extra: &[(&str, Value)]) -> Value {
    if let Some(props) = schema["properties"].as_object_mut() {
        for (name, s) in extra {
            props.insert((*name).to_string(), s.clone());
        }
    }
    schema
}

/// Binds validated arguments to a tool's typed parameters; the error is what the model reads.
pub fn parse_params<P: serde::de::DeserializeOwned>(params: Value) -> Result<P, String> {
    serde_json::from_value(params).map_err(|e| format!("Invalid parameters: {e}"))
}

/// Renames older parameter names (`(old, new)`) when the new name is absent.
pub fn rename_params(params: &mut Value, renames: &[(&str, &str)]) {
    let Value::Object(map) = params else { return };
    for (old, new) in renames {
        if !map.contains_key(*new)
            && let Some(v) = map.remove(*old)
        {
            map.insert((*new).to_string(), v);
        }
    }
}

/// Ajv evaluates `type` first, then validation keywords (`required`, `minimum`, ...), then
/// applicators (`additionalProperties`, then `properties` in declaration order, `items`).
fn keyword_rank(k: &str) -> u32 {
    match k {
        "type" => 0,
        "additionalProperties" => 20,
        "properties" | "patternProperties" => 30,
        "items" | "prefixItems" | "contains" => 30,
        "anyOf" | "oneOf" | "allOf" | "not" | "if" | "then" | "else" => 10,
        "$ref" => 5,
        _ => 2,
    }
}

fn order_key(schema: &Value, schema_path: &str) -> Vec<u32> {
    let mut key = Vec::new();
    let mut node = schema;
    let mut segs = schema_path.split('/').filter(|s| !s.is_empty()).peekable();
    while let Some(seg) = segs.next() {
        let seg = unescape(seg);
        key.push(keyword_rank(&seg));
        if seg == "properties" {
            if let Some(name) = segs.next() {
                let name = unescape(name);
                let props = node.get("properties").and_then(Value::as_object);
                let idx = props.and_then(|p| p.keys().position(|k| *k == name)).unwrap_or(0);
                key.push(u32::try_from(idx).unwrap_or(u32::MAX));
                node = props.and_then(|p| p.get(&name)).unwrap_or(&Value::Null);
            }
        } else if let Some(next) = node.get(seg.as_str()) {
            node = next;
        } else if let Ok(i) = seg.parse::<usize>() {
            key.push(u32::try_from(i).unwrap_or(u32::MAX));
            node = node.get(i).unwrap_or(&Value::Null);
        }
    }
    key
}

fn unescape(seg: &str) -> String {
    seg.replace("~1", "/").replace("~0", "~")
}

fn data_path(instance_path: &str) -> String {
    format!("params{instance_path}")
}

fn ajv_message(
    kind: &ValidationErrorKind,
    instance_path: &str,
    schema: &Value,
    schema_path: &str,
) -> String {
    let at = data_path(instance_path);
    let num = |v: &Value| match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => v.to_string(),
    };
    match kind {
        ValidationErrorKind::Required { property } => {
            let p = property.as_str().map(String::from).unwrap_or_else(|| property.to_string());
            format!("{at} must have required property '{p}'")
        }
        ValidationErrorKind::Type { kind } => {
            let declared = schema.pointer(schema_path).map(|v| match v {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","),
                other => other.to_string(),
            });
            let name = declared.unwrap_or_else(|| match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(ts) => {
                    ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(",")
                }
            });
            format!("{at} must be {name}")
        }
        ValidationErrorKind::Minimum { limit } => format!("{at} must be >= {}", num(limit)),
        ValidationErrorKind::Maximum { limit } => format!("{at} must be <= {}", num(limit)),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("{at} must be > {}", num(limit)),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("{at} must be < {}", num(limit)),
        ValidationErrorKind::MinItems { limit } => {
            format!("{at} must NOT have fewer than {limit} items")
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("{at} must NOT have more than {limit} items")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!("{at} must NOT have fewer than {limit} characters")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("{at} must NOT have more than {limit} characters")
        }
        ValidationErrorKind::MinProperties { limit } => {
            format!("{at} must NOT have fewer than {limit} properties")
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!("{at} must NOT have more than {limit} properties")
        }
        ValidationErrorKind::Enum { .. } => {
            format!("{at} must be equal to one of the allowed values")
        }
        ValidationErrorKind::Constant { .. } => format!("{at} must be equal to constant"),
        ValidationErrorKind::AdditionalProperties { .. }
        | ValidationErrorKind::UnevaluatedProperties { .. } => {
            format!("{at} must NOT have additional properties")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{at} must match pattern \"{pattern}\"")
        }
        ValidationErrorKind::Format { format } => format!("{at} must match format \"{format}\""),
        ValidationErrorKind::AnyOf { .. } => format!("{at} must match a schema in anyOf"),
        ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => {
            format!("{at} must match exactly one schema in oneOf")
        }
        ValidationErrorKind::UniqueItems => format!("{at} must NOT have duplicate items"),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("{at} must be multiple of {multiple_of}")
        }
        ValidationErrorKind::Not { .. } => format!("{at} must NOT be valid"),
        ValidationErrorKind::FalseSchema => "boolean schema is false".to_string(),
        other => format!("{at} {}", describe_other(other)),
    }
}

fn describe_other(kind: &ValidationErrorKind) -> String {
    format!("is invalid ({})", kind.keyword())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_file_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1}
            },
            "required": ["file_path"]
        })
    }

    /// Found by the issue 37 attack: `{"type": "null", "nullable": true}` became
    /// `["null", "null"]`, which does not compile, so the whole tool was validated by nothing
    /// (`{"count": "lots"}` and `{}` ran).
    #[test]
    fn a_nullable_null_keeps_the_schema_compiling() {
        let v = ParamValidator::new(serde_json::json!({
            "type": "object",
            "properties": {
                "nothing": {"type": "null", "nullable": true},
                "count": {"type": "integer"}
            },
            "required": ["count"]
        }));
        assert!(v.is_compiled());
        assert!(v.validate(&serde_json::json!({"count": "lots"})).is_err());
        assert!(v.validate(&serde_json::json!({})).is_err());
        assert!(v.validate(&serde_json::json!({"count": 2, "nothing": null})).is_ok());
    }

    #[test]
    fn reports_the_first_error_in_ajv_words() {
        let v = ParamValidator::new(read_file_schema());
        assert!(v.is_compiled());
        assert_eq!(
            v.validate(&json!({})).unwrap_err(),
            "params must have required property 'file_path'"
        );
        assert_eq!(
            v.validate(&json!({"start_line": "x"})).unwrap_err(),
            "params must have required property 'file_path'"
        );
        assert_eq!(
            v.validate(&json!({"file_path": "a", "start_line": 0})).unwrap_err(),
            "params/start_line must be >= 1"
        );
        assert_eq!(
            v.validate(&json!({"file_path": "a", "start_line": 1.5})).unwrap_err(),
            "params/start_line must be integer"
        );
        assert_eq!(
            v.validate(&json!({"file_path": "a", "end_line": 0, "start_line": 0})).unwrap_err(),
            "params/start_line must be >= 1",
            "declaration order decides, not argument order"
        );
        assert_eq!(v.validate(&json!([1])).unwrap_err(), "Value of params must be an object");
        assert_eq!(v.validate(&json!("s")).unwrap_err(), "Value of params must be an object");
        assert!(v.validate(&json!({"file_path": "a", "extra": true})).is_ok());
    }

    #[test]
    fn arrays_enums_and_closed_objects() {
        let v = ParamValidator::new(json!({
            "type": "object",
            "properties": {
                "include": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
                "mode": {"type": "string", "enum": ["a", "b"]}
            },
            "required": ["include"],
            "additionalProperties": false
        }));
        assert_eq!(
            v.validate(&json!({"include": []})).unwrap_err(),
            "params/include must NOT have fewer than 1 items"
        );
        assert_eq!(
            v.validate(&json!({"include": ["x", 1]})).unwrap_err(),
            "params/include/1 must be string"
        );
        assert_eq!(
            v.validate(&json!({"include": ["x", ""]})).unwrap_err(),
            "params/include/1 must NOT have fewer than 1 characters"
        );
        assert_eq!(
            v.validate(&json!({"include": ["x"], "mode": "c"})).unwrap_err(),
            "params/mode must be equal to one of the allowed values"
        );
        assert_eq!(
            v.validate(&json!({"include": ["x"], "zzz": 1})).unwrap_err(),
            "params must NOT have additional properties"
        );
    }

    #[test]
    fn uncompilable_schema_skips_validation() {
        let v = ParamValidator::new(
            json!({"type": "object", "properties": {"a": {"type": "nonsense"}}}),
        );
        assert!(!v.is_compiled());
        assert!(v.validate(&json!({"a": 1})).is_ok());
    }

    #[test]
    fn aliases_rename_only_when_the_new_name_is_absent() {
        let renames = [("absolute_path", "file_path")];
        let mut p = json!({"absolute_path": "/x"});
        rename_params(&mut p, &renames);
        assert_eq!(p, json!({"file_path": "/x"}));
        let mut p = json!({"absolute_path": "/x", "file_path": "/y"});
        rename_params(&mut p, &renames);
        assert_eq!(p, json!({"absolute_path": "/x", "file_path": "/y"}));
    }
}
