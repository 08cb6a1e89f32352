//! Grounded answers: citation markers inserted where the model's grounding supports end, and
//! the list of sources, as upstream formats them.

use serde_json::Value;

/// How `segment.endIndex` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// UTF-16 code units (web_fetch).
    Utf16,
    /// UTF-8 bytes (google_web_search).
    Utf8,
}

/// The grounding chunks' `(title, uri)`.
pub fn sources(grounding: Option<&Value>) -> Vec<(Option<String>, Option<String>)> {
    grounding
        .and_then(|g| g.get("groundingChunks"))
        .and_then(Value::as_array)
        .map(|chunks| {
            chunks
                .iter()
                .map(|c| {
                    let web = c.get("web");
                    let s = |k: &str| {
                        web.and_then(|w| w.get(k))
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                    };
                    (s("title"), s("uri"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `text` with `[n]` markers at each support's end (highest position first).
pub fn insert_markers(text: &str, grounding: Option<&Value>, unit: Unit) -> String {
    let mut inserts: Vec<(usize, String)> = grounding
        .and_then(|g| g.get("groundingSupports"))
        .and_then(Value::as_array)
        .map(|supports| {
            supports
                .iter()
                .filter_map(|s| {
                    let end = s.pointer("/segment/endIndex")?.as_u64()? as usize;
                    let idx = s.get("groundingChunkIndices")?.as_array()?;
                    let marker: String = idx
                        .iter()
                        .filter_map(Value::as_u64)
                        .map(|i| format!("[{}]", i + 1))
                        .collect();
                    (!marker.is_empty()).then_some((end, marker))
                })
                .collect()
        })
        .unwrap_or_default();
    inserts.sort_by_key(|x| std::cmp::Reverse(x.0));
    match unit {
        Unit::Utf16 => {
            let mut units: Vec<u16> = text.encode_utf16().collect();
            for (pos, marker) in inserts {
                let at = pos.min(units.len());
                units.splice(at..at, marker.encode_utf16());
            }
            String::from_utf16_lossy(&units)
        }
        Unit::Utf8 => {
            let mut out = text.to_string();
            for (pos, marker) in inserts {
                let mut at = pos.min(out.len());
                while !out.is_char_boundary(at) {
                    at -= 1;
                }
                out.insert_str(at, &marker);
            }
            out
        }
    }
}

/// `\n\nSources:\n[1] title (uri)...`, or nothing without chunks.
pub fn sources_block(grounding: Option<&Value>, missing_uri: &str) -> String {
    let list = sources(grounding);
    if list.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = list
        .iter()
        .enumerate()
        .map(|(i, (t, u))| {
            format!(
                "[{}] {} ({})",
                i + 1,
                t.as_deref().unwrap_or("Untitled"),
                u.as_deref().unwrap_or(missing_uri)
            )
        })
        .collect();
    format!("\n\nSources:\n{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn markers_as_the_spec_example() {
        let g = json!({"groundingChunks": [{"web": {"title": "A", "uri": "https://a"}}, {"web": {}}],
            "groundingSupports": [{"segment": {"endIndex": 14}, "groundingChunkIndices": [0]},
                                  {"segment": {"endIndex": 24}, "groundingChunkIndices": [0, 1]}]});
        assert_eq!(
            insert_markers("This is a test response.", Some(&g), Unit::Utf8),
            "This is a test[1] response.[1][2]"
        );
        assert_eq!(
            sources_block(Some(&g), "No URI"),
            "\n\nSources:\n[1] A (https://a)\n[2] Untitled (No URI)"
        );
    }

    #[test]
    fn utf16_and_utf8_positions_differ_after_non_ascii() {
        // "é" is 1 UTF-16 unit and 2 UTF-8 bytes.
        let g = json!({"groundingSupports": [{"segment": {"endIndex": 2}, "groundingChunkIndices": [0]}]});
        assert_eq!(insert_markers("éa b", Some(&g), Unit::Utf16), "éa[1] b");
        assert_eq!(insert_markers("éa b", Some(&g), Unit::Utf8), "é[1]a b");
    }
}
