//! A server's tool list: read page by page within its bounds (issue 35), and turned into
//! toolbelt's tools, each left out with its reason when it cannot be used.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Connection, McpTool, ServerSpec, naming, schema};

pub(super) fn selected(spec: &ServerSpec, tool: &str) -> bool {
    let included = spec.include.is_empty()
        || spec.include.iter().any(|i| i == tool || i.starts_with(&format!("{tool}(")));
    included && !spec.exclude.iter().any(|e| e == tool)
}

/// What a server's tool list gave: the tools kept (descriptions already cut), those left out
/// with why, and why the list was cut short, if it was.
pub(super) struct Listed {
    pub tools: Vec<rmcp::model::Tool>,
    pub dropped: Vec<(String, String)>,
    pub cut: Option<String>,
}

/// The values in a JSON value (objects, arrays and leaves), counted without recursion.
fn nodes(v: &Value) -> usize {
    let mut stack = vec![v];
    let mut n = 0;
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    n
}

/// The server's tools that `spec` selects, page after page, within bounds: at most
/// [`MCP_TOOLS_PER_SERVER`](toolbelt_core::limits::MCP_TOOLS_PER_SERVER) tools and
/// [`MCP_TOOL_PAGES`](toolbelt_core::limits::MCP_TOOL_PAGES) pages, a cursor seen before ends
/// the list (rmcp's `list_all_tools` follows cursors for ever, keeping everything), and the
/// schemas' size in memory is bounded per tool and in all (2000 schemas of 60 KB, each small
/// objects, took 3.6 GB). Each page is judged as it comes; descriptions are cut at once.
pub(super) async fn list_tools(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    spec: &ServerSpec,
) -> Result<Listed, rmcp::ServiceError> {
    use std::hash::BuildHasher as _;
    use toolbelt_core::limits::{
        MCP_DESCRIPTION_CHARS, MCP_SCHEMA_NODES, MCP_SCHEMA_NODES_TOTAL, MCP_TOOL_PAGES,
        MCP_TOOLS_PER_SERVER,
    };
    let mut out = Listed { tools: Vec::new(), dropped: Vec::new(), cut: None };
    let mut cursors = std::collections::HashSet::new();
    let keys = std::hash::RandomState::new();
    let mut cursor = None;
    let mut held = 0usize;
    for _ in 0..MCP_TOOL_PAGES {
        let page = peer
            .list_tools(Some(rmcp::model::PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        for mut t in page.tools {
            if !selected(spec, &t.name) {
                continue;
            }
            if out.tools.len() == MCP_TOOLS_PER_SERVER {
                out.cut = Some(format!(
                    "the server offers more than {MCP_TOOLS_PER_SERVER} tools; the first {MCP_TOOLS_PER_SERVER} are used (name the ones you want with `includeTools`)"
                ));
                return Ok(out);
            }
            let n = t.input_schema.values().map(nodes).sum::<usize>() + 1;
            if n > MCP_SCHEMA_NODES {
                out.dropped.push((
                    t.name.to_string(),
                    format!(
                        "its input schema has {n} values, over the limit of {MCP_SCHEMA_NODES}"
                    ),
                ));
                continue;
            }
            held += n;
            if held > MCP_SCHEMA_NODES_TOTAL {
                out.cut = Some(format!(
                    "the server's input schemas hold more than {MCP_SCHEMA_NODES_TOTAL} values together; the tools before that are used (name the ones you want with `includeTools`)"
                ));
                return Ok(out);
            }
            if let Some(d) = &t.description {
                t.description = Some(bounded_description(d, MCP_DESCRIPTION_CHARS).into());
            }
            out.tools.push(t);
        }
        cursor = match page.next_cursor {
            None => return Ok(out),
            // Hashes, not the cursors: a cursor can be as long as a message.
            Some(c) if !cursors.insert(keys.hash_one(c.as_str())) => {
                out.cut = Some("the server's tool list goes round in a circle (a cursor came back); the tools before it are used".into());
                return Ok(out);
            }
            Some(c) => Some(c),
        };
    }
    out.cut = Some(format!(
        "the server's tool list did not end after {MCP_TOOL_PAGES} pages; the tools on them are used"
    ));
    Ok(out)
}

/// The tools of `listed` as toolbelt's tools, and those left out with the reason (`cut`: why
/// the list was cut short, if it was).
pub(super) fn tools(
    listed: Listed,
    spec: &ServerSpec,
    conn: &Arc<Connection>,
) -> (Vec<Arc<McpTool>>, Vec<(String, String)>) {
    let mut tools = Vec::new();
    let mut dropped = listed.dropped;
    use toolbelt_core::limits::MCP_SCHEMA_BYTES;
    if let Some(why) = listed.cut {
        dropped.push(("(the rest)".to_string(), why));
    }
    for t in listed.tools {
        let original = t.name.to_string();
        let raw_schema = Value::Object((*t.input_schema).clone());
        let schema_bytes = serde_json::to_vec(&raw_schema).map_or(usize::MAX, |v| v.len());
        if schema_bytes > MCP_SCHEMA_BYTES {
            dropped.push((
                original,
                format!(
                    "its input schema is {schema_bytes} bytes, over the limit of {MCP_SCHEMA_BYTES}"
                ),
            ));
            continue;
        }
        let schema = match schema::normalize(Some(&raw_schema)) {
            Ok(s) => s,
            Err(schema::BadSchema(why)) => {
                dropped.push((original, why));
                continue;
            }
        };
        let mut annotations = Map::new();
        if let Some(a) = &t.annotations
            && let Ok(Value::Object(m)) = serde_json::to_value(a)
        {
            annotations = m;
        }
        annotations.insert("_serverName".into(), json!(spec.name));
        tools.push(Arc::new(McpTool {
            fqn: naming::qualified_name(&spec.name, &original),
            canonical: naming::qualified_name(&spec.name, &original),
            server: spec.name.clone(),
            // Cut when it was listed.
            description: t.description.as_deref().unwrap_or("").to_string(),
            original,
            schema,
            annotations,
            conn: conn.clone(),
        }));
    }
    (tools, dropped)
}

/// A server's tool description as the model is shown it: cut at `max` characters with a notice.
fn bounded_description(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!(
            "{}\n[description cut at {max} characters; the server sent {} more]",
            &text[..at],
            text[at..].chars().count()
        ),
    }
}

#[cfg(test)]
mod bounded_tests {
    use proptest::prelude::*;

    #[test]
    fn long_descriptions_are_cut_and_say_so() {
        assert_eq!(super::bounded_description("short", 10), "short");
        let cut = super::bounded_description(&"é".repeat(20), 10);
        assert!(
            cut.starts_with(&"é".repeat(10)) && cut.contains("the server sent 10 more"),
            "{cut}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: toolbelt_core::testing::proptest_cases(),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Issue 35: whatever a server sends, the model is shown at most `max` characters of
        /// it and one notice line saying how many more there were.
        #[test]
        fn a_description_is_at_most_its_ceiling_and_a_notice(text in "(\\PC|\n){0,300}", max in 0usize..120) {
            let shown = super::bounded_description(&text, max);
            let len = text.chars().count();
            if len <= max {
                prop_assert_eq!(shown, text);
            } else {
                let head: String = text.chars().take(max).collect();
                let notice = format!("\n[description cut at {max} characters; the server sent {} more]", len - max);
                prop_assert_eq!(shown, format!("{head}{notice}"));
            }
        }
    }
}
