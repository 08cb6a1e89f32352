//! `google_web_search`: a search grounded by the model's Google Search tool, with upstream's
//! citations and sources; or, with `GOOGLE_API_KEY` and `GOOGLE_CSE_ID`, Google's Custom Search
//! JSON API, whose results come back as a Markdown list.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::model::{Grounding, ModelAccess};
use toolbelt_core::result::{ErrorType, ToolResult, untrusted};
use toolbelt_core::tool::{Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv};

use super::cite::{Unit, insert_markers, sources, sources_block};

pub const NAME: &str = "google_web_search";
pub const DEFAULT_RESULTS: u64 = 10;
pub const MAX_RESULTS: u64 = 20;

pub struct GoogleWebSearch {
    model: Option<Arc<dyn ModelAccess>>,
    /// Whether Custom Search credentials are configured (adds `num_results`).
    custom_search: bool,
}

impl GoogleWebSearch {
    pub fn new(model: Option<Arc<dyn ModelAccess>>, custom_search: bool) -> Self {
        Self { model, custom_search }
    }
}

impl Tool for GoogleWebSearch {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "GoogleSearch"
    }
    fn kind(&self) -> Kind {
        Kind::Search
    }

    /// A search of the web: it only looks, but it looks at the open world.
    fn effects(&self) -> toolbelt_core::kind::Effects {
        toolbelt_core::kind::Effects {
            writes: false,
            destroys: false,
            idempotent: true,
            open_world: true,
        }
    }

    fn declaration(&self, family: ModelFamily) -> Declaration {
        let (description, query) = match family {
            ModelFamily::Legacy => (
                include_str!("descriptions/google_web_search.legacy.md"),
                "What to search the web for.",
            ),
            ModelFamily::Gemini3 => (
                include_str!("descriptions/google_web_search.gemini3.md"),
                "The search: a question in plain words (e.g. 'What changed in React 19?') or precise technical terms.",
            ),
        };
        let mut properties = json!({"query": {"type": "string", "description": query}});
        if self.custom_search {
            properties["num_results"] = json!({"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                "description": format!("How many results to return (default {DEFAULT_RESULTS}, at most {MAX_RESULTS}).")});
        }
        Declaration {
            name: NAME.into(),
            description: description.trim_end().into(),
            parameters: json!({"type": "object", "properties": properties, "required": ["query"]}),
        }
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let Params { query, num_results } = toolbelt_core::schema::parse_params(params)?;
        if query.trim().is_empty() {
            return Err("The 'query' parameter cannot be empty.".into());
        }
        let c = &env.config;
        let custom = match (&c.google_api_key, &c.google_cse_id) {
            (Some(k), Some(cx)) if !k.is_empty() && !cx.is_empty() => Some(CustomSearch {
                url: c.google_search_url.clone(),
                key: k.clone(),
                cx: cx.clone(),
                num: num_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS),
            }),
            _ => None,
        };
        Ok(Box::new(SearchCall { query, custom, model: self.model.clone() }))
    }
}

#[derive(serde::Deserialize)]
struct Params {
    query: String,
    num_results: Option<u64>,
}

struct CustomSearch {
    url: String,
    key: String,
    cx: String,
    num: u64,
}

struct SearchCall {
    query: String,
    custom: Option<CustomSearch>,
    model: Option<Arc<dyn ModelAccess>>,
}

impl SearchCall {
    fn failed(&self, msg: &str) -> ToolResult {
        let m = format!("Error during web search for query \"{}\": {msg}", self.query);
        ToolResult::error(
            ErrorType::WebSearchFailed,
            m.clone(),
            format!("Error: {m}"),
            "Error performing web search.",
        )
    }

    fn cancelled() -> ToolResult {
        ToolResult::error(
            ErrorType::Cancelled,
            "Web search was cancelled.",
            "Web search was cancelled.",
            "Search cancelled.",
        )
    }

    /// The answer for the model, with the sources as data.
    fn results(&self, text: &str, sources: Vec<Value>) -> ToolResult {
        ToolResult {
            data: Some(json!({ "sources": sources })),
            ..ToolResult::text(
                format!("Web search results for \"{}\":\n\n{text}", self.query),
                format!("Search results for \"{}\" returned.", self.query),
            )
        }
    }

    fn nothing(&self) -> ToolResult {
        ToolResult::text(
            format!("No search results or information found for query: \"{}\"", self.query),
            "No information found.",
        )
    }

    async fn custom_search(&self, cs: &CustomSearch, ctx: &ExecContext) -> ToolResult {
        toolbelt_core::tls::ready();
        let http = match reqwest::Client::builder().timeout(Duration::from_secs(15)).build() {
            Ok(c) => c,
            Err(e) => return self.failed(&e.to_string()),
        };
        let base = match url::Url::parse(&cs.url) {
            Ok(u) => u,
            Err(e) => return self.failed(&format!("invalid Custom Search URL {}: {e}", cs.url)),
        };
        let mut items: Vec<Value> = Vec::new();
        let mut start = 1;
        while (items.len() as u64) < cs.num {
            let want = (cs.num - items.len() as u64).min(10);
            let mut url = base.clone();
            url.query_pairs_mut()
                .append_pair("key", &cs.key)
                .append_pair("cx", &cs.cx)
                .append_pair("q", &self.query)
                .append_pair("num", &want.to_string())
                .append_pair("start", &start.to_string());
            let req = http.get(url);
            let response = tokio::select! {
                r = req.send() => r,
                () = ctx.cancel.cancelled() => return Self::cancelled(),
            };
            let response = match response {
                Ok(r) => r,
                Err(e) => return self.failed(&e.to_string()),
            };
            let status = response.status();
            let body = json_body(response).await;
            if !status.is_success() {
                let why = body.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
                return self.failed(&format!(
                    "the Custom Search API answered HTTP {}{}{why}",
                    status.as_u16(),
                    if why.is_empty() { "" } else { ": " }
                ));
            }
            let page = body.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            let got = page.len();
            items.extend(page);
            if (got as u64) < want {
                break;
            }
            start += got;
        }
        if items.is_empty() {
            return self.nothing();
        }
        let lines: Vec<String> = items
            .iter()
            .take(cs.num as usize)
            .enumerate()
            .map(|(i, it)| {
                let s =
                    |k: &str| it.get(k).and_then(Value::as_str).unwrap_or("").replace('\n', " ");
                format!("{}. [{}]({})\n   {}", i + 1, s("title"), s("link"), s("snippet"))
            })
            .collect();
        let list: Vec<Value> = items
            .iter()
            .map(|it| json!({"title": it.get("title"), "uri": it.get("link")}))
            .collect();
        self.results(&untrusted(&lines.join("\n")), list)
    }
}

#[async_trait]
impl Invocation for SearchCall {
    fn description(&self) -> String {
        format!("Searching the web for: \"{}\"", self.query)
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        if let Some(cs) = &self.custom {
            return self.custom_search(cs, &ctx).await;
        }
        let Some(model) = self.model.as_ref().filter(|m| m.supports_grounding()) else {
            return self.failed("web search needs the Gemini API (GEMINI_API_KEY) for search grounding, or GOOGLE_API_KEY and GOOGLE_CSE_ID for Google's Custom Search API");
        };
        let answer = match model.ask(&self.query, Grounding::GoogleSearch, &ctx.cancel).await {
            Ok(a) => a,
            Err(_) if ctx.cancel.is_cancelled() => return Self::cancelled(),
            Err(e) => return self.failed(&e),
        };
        if answer.text.trim().is_empty() {
            return self.nothing();
        }
        let g = answer.grounding.as_ref();
        let found = sources(g);
        let text = if found.is_empty() {
            answer.text.clone()
        } else {
            insert_markers(&answer.text, g, Unit::Utf8) + &sources_block(g, "No URI")
        };
        let list = found.into_iter().map(|(t, u)| json!({"title": t, "uri": u})).collect();
        self.results(&text, list)
    }
}

/// An API answer's body as JSON, read to at most 8 MiB and measured before it is parsed
/// (issue 47); anything else is `null`.
async fn json_body(mut response: reqwest::Response) -> Value {
    const MOST: usize = 8 << 20;
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if bytes.len() + chunk.len() > MOST {
            return Value::Null;
        }
        bytes.extend_from_slice(&chunk);
    }
    toolbelt_core::json_in::parse(&bytes, toolbelt_core::json_in::JsonBudget::message(MOST))
        .unwrap_or(Value::Null)
}
