//! Input schemas from MCP servers made acceptable to model APIs (user need 8): local `$ref`s
//! inlined, `["T", "null"]` types turned into `T` + `nullable` (upstream's only fix-up),
//! `anyOf`/`oneOf` with a null branch collapsed, missing types inferred, non-string enums
//! turned into strings, and a missing or non-object root replaced. A schema that still cannot
//! be used is reported, and only that tool is dropped.

use serde_json::{Map, Value, json};

const MAX_DEPTH: usize = 32;

/// Why a schema was refused.
#[derive(Debug, PartialEq, Eq)]
pub struct BadSchema(pub String);

pub fn normalize(schema: Option<&Value>) -> Result<Value, BadSchema> {
    let Some(schema) = schema else { return Ok(json!({"type": "object", "properties": {}})) };
    let Value::Object(root) = schema else {
        return Err(BadSchema(format!("the input schema is not an object: {schema}")));
    };
    if root.get("type").is_some_and(|t| t != "object") {
        return Err(BadSchema(format!(
            "the input schema's type is {} (it must be \"object\")",
            root["type"]
        )));
    }
    let defs =
        root.get("$defs").or_else(|| root.get("definitions")).cloned().unwrap_or(Value::Null);
    let mut out = fix(&Value::Object(root.clone()), &defs, 0)?;
    if let Some(o) = out.as_object_mut() {
        o.remove("$defs");
        o.remove("definitions");
        o.remove("$schema");
        o.insert("type".into(), json!("object"));
        o.entry("properties").or_insert_with(|| json!({}));
    }
    Ok(out)
}

fn resolve<'a>(r: &str, defs: &'a Value) -> Option<&'a Value> {
    let name = r.strip_prefix("#/$defs/").or_else(|| r.strip_prefix("#/definitions/"))?;
    defs.get(name)
}

fn fix(v: &Value, defs: &Value, depth: usize) -> Result<Value, BadSchema> {
    if depth > MAX_DEPTH {
        return Err(BadSchema("the schema nests too deeply (or its $refs form a cycle)".into()));
    }
    let Value::Object(o) = v else { return Ok(v.clone()) };
    if let Some(Value::String(r)) = o.get("$ref") {
        let target = resolve(r, defs).ok_or_else(|| BadSchema(format!("unresolvable $ref {r}")))?;
        let mut merged = target.as_object().cloned().unwrap_or_default();
        for (k, x) in o {
            if k != "$ref" {
                merged.insert(k.clone(), x.clone());
            }
        }
        return fix(&Value::Object(merged), defs, depth + 1);
    }
    let mut out = Map::new();
    for (k, x) in o {
        let fixed = match k.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => match x {
                Value::Object(props) => {
                    let mut m = Map::new();
                    for (pk, pv) in props {
                        m.insert(pk.clone(), fix(pv, defs, depth + 1)?);
                    }
                    Value::Object(m)
                }
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => fix(x, defs, depth + 1)?,
            "anyOf" | "oneOf" | "allOf" => match x {
                Value::Array(a) => Value::Array(
                    a.iter().map(|s| fix(s, defs, depth + 1)).collect::<Result<_, _>>()?,
                ),
                other => other.clone(),
            },
            _ => x.clone(),
        };
        out.insert(k.clone(), fixed);
    }
    // ["T", "null"] -> T + nullable (upstream).
    if let Some(Value::Array(types)) = out.get("type").cloned() {
        let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if types.len() == 2 && non_null.len() == 1 {
            out.insert("type".into(), non_null[0].clone());
            out.insert("nullable".into(), json!(true));
        }
    }
    // anyOf/oneOf with one real branch and a null branch -> that branch, nullable.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = out.get(key).cloned() {
            let real: Vec<&Value> =
                branches.iter().filter(|b| b.get("type") != Some(&json!("null"))).collect();
            if real.len() == 1 && branches.len() == 2 {
                out.remove(key);
                if let Value::Object(b) = real[0] {
                    for (k, x) in b {
                        out.entry(k.clone()).or_insert_with(|| x.clone());
                    }
                }
                out.insert("nullable".into(), json!(true));
            }
        }
    }
    // Enums of numbers or booleans become strings (model APIs take string enums).
    if let Some(Value::Array(values)) = out.get("enum").cloned()
        && values.iter().any(|x| !x.is_string())
    {
        let strings: Vec<Value> = values
            .iter()
            .map(|x| json!(x.as_str().map(String::from).unwrap_or_else(|| x.to_string())))
            .collect();
        out.insert("enum".into(), Value::Array(strings));
        out.insert("type".into(), json!("string"));
    }
    if !out.contains_key("type")
        && !out.contains_key("anyOf")
        && !out.contains_key("oneOf")
        && !out.contains_key("allOf")
        && !out.contains_key("enum")
    {
        let inferred = if out.contains_key("properties") {
            Some("object")
        } else if out.contains_key("items") {
            Some("array")
        } else {
            None
        };
        if let Some(t) = inferred {
            out.insert("type".into(), json!(t));
        }
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_what_model_apis_reject() {
        let s = json!({
            "$defs": {"Pt": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "properties": {
                "p": {"$ref": "#/$defs/Pt", "description": "a point"},
                "n": {"type": ["string", "null"]},
                "k": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "level": {"enum": [1, 2, 3]},
                "list": {"items": {"type": "string"}}
            }
        });
        let out = normalize(Some(&s)).unwrap();
        assert_eq!(out["type"], "object");
        assert!(out.get("$defs").is_none());
        assert_eq!(out["properties"]["p"]["properties"]["x"]["type"], "integer");
        assert_eq!(out["properties"]["p"]["description"], "a point");
        assert_eq!(out["properties"]["n"], json!({"type": "string", "nullable": true}));
        assert_eq!(out["properties"]["k"], json!({"type": "integer", "nullable": true}));
        assert_eq!(out["properties"]["level"], json!({"enum": ["1", "2", "3"], "type": "string"}));
        assert_eq!(out["properties"]["list"]["type"], "array");
        assert_eq!(normalize(None).unwrap(), json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn hopeless_schemas_are_refused() {
        assert!(normalize(Some(&json!("string"))).is_err());
        assert!(normalize(Some(&json!({"type": "array"}))).is_err());
        assert!(
            normalize(Some(&json!({"properties": {"a": {"$ref": "#/$defs/Missing"}}}))).is_err()
        );
        let cyclic = json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "properties": {"a": {"$ref": "#/$defs/A"}}});
        assert!(normalize(Some(&cyclic)).is_err());
    }
}
