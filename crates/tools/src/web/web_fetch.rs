//! `web_fetch`: pages processed by the model (standard mode: the model's URL context, with a
//! direct fetch as fallback), or one page returned as it is (direct mode).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use toolbelt_core::sync::LockExt;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolbelt_core::Kind;
use toolbelt_core::model::{Grounding, ModelAccess};
use toolbelt_core::result::{Content, ErrorType, Part, ToolResult, untrusted};
use toolbelt_core::tool::{
    ConfirmationDetails, Declaration, ExecContext, Invocation, ModelFamily, Tool, ToolEnv,
};
use url::Url;

use super::cite::{Unit, insert_markers, sources, sources_block};
use super::fetch::{self, FetchError, FetchLimits};

pub const NAME: &str = "web_fetch";
const BUDGET_CHARS: usize = 250_000;
const TRUNCATED: &str = "\n\n... [Content truncated due to size limit] ...";
const DIRECT_ACCEPT: &str = "text/markdown, text/plain;q=0.9, application/json;q=0.9, text/html;q=0.8, application/pdf;q=0.7, video/*;q=0.7, */*;q=0.5";

pub struct WebFetch {
    model: Option<Arc<dyn ModelAccess>>,
    direct: bool,
}

impl WebFetch {
    pub fn new(model: Option<Arc<dyn ModelAccess>>, direct: bool) -> Self {
        Self { model, direct }
    }
}

/// The prompt's URLs (tokens with `://`), or the errors upstream reports.
pub fn parse_prompt(prompt: &str) -> (Vec<Url>, Vec<String>) {
    let mut urls = Vec::new();
    let mut errors = Vec::new();
    for token in prompt.split_whitespace().filter(|t| t.contains("://")) {
        match Url::parse(token) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
                urls.push(u)
            }
            // Any other scheme the WHATWG parser accepts (`ftp:`, `httpshttps:`) is
            // unsupported, as upstream says (issue 19: `httpshttps://x` was "malformed").
            Ok(u) if !matches!(u.scheme(), "http" | "https") => errors.push(format!(
                "Unsupported protocol in URL: \"{token}\". Only http and https are supported."
            )),
            _ => errors.push(format!("Malformed URL detected: \"{token}\".")),
        }
    }
    (urls, errors)
}

/// Upstream's normalisation: host lower-cased and default ports dropped (the URL parser does
/// both), a trailing `/` removed from non-root paths.
fn normalize(u: &Url) -> String {
    let mut s = u.to_string();
    if u.path() != "/" && u.path().ends_with('/') && u.query().is_none() && u.fragment().is_none() {
        s.pop();
    }
    s
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// At most 10 requests per host and port per minute in this process.
fn rate_limited(u: &Url) -> bool {
    static HITS: OnceLock<Mutex<HashMap<String, Vec<Instant>>>> = OnceLock::new();
    let key = format!("{}:{}", u.host_str().unwrap_or(""), u.port_or_known_default().unwrap_or(0));
    let mut hits = HITS.get_or_init(Mutex::default).locked();
    let list = hits.entry(key).or_default();
    list.retain(|t| t.elapsed() < Duration::from_secs(60));
    if list.len() >= 10 {
        return true;
    }
    list.push(Instant::now());
    false
}

/// `s` cut to `max` characters with `marker` after the cut, if it is longer.
fn capped(s: String, max: usize, marker: &str) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}{marker}", &s[..at]),
        None => s,
    }
}

/// Cuts each text to a share of the budget, smallest first (water-filling).
fn share_budget(texts: &mut [(String, String)]) {
    let mut order: Vec<(usize, usize)> =
        texts.iter().enumerate().map(|(i, t)| (t.1.chars().count(), i)).collect();
    order.sort_unstable();
    let mut left = BUDGET_CHARS;
    for (n, &(len, i)) in order.iter().enumerate() {
        let share = left / (order.len() - n);
        if len > share {
            texts[i].1 = capped(std::mem::take(&mut texts[i].1), share, TRUNCATED);
            left -= share;
        } else {
            left -= len;
        }
    }
}

fn limits(env: &ToolEnv) -> FetchLimits {
    FetchLimits {
        timeout: Duration::from_millis(env.config.web_fetch_timeout_ms),
        max_bytes: env.config.web_fetch_max_bytes,
        allowed_private: env.config.web_allowed_private_hosts.clone(),
    }
}

impl Tool for WebFetch {
    fn name(&self) -> &str {
        NAME
    }
    fn display_name(&self) -> &str {
        "WebFetch"
    }
    fn kind(&self) -> Kind {
        Kind::Fetch
    }

    fn declaration(&self, family: ModelFamily) -> Declaration {
        if self.direct {
            return Declaration {
                name: NAME.into(),
                description: include_str!("descriptions/web_fetch.direct.md").trim_end().into(),
                parameters: json!({"type": "object", "properties": {
                    "url": {"type": "string", "description": "The URL to fetch. Must be a valid http or https URL."}},
                    "required": ["url"]}),
            };
        }
        let (description, prompt) = match family {
            ModelFamily::Legacy => (
                include_str!("descriptions/web_fetch.legacy.md"),
                "The URL(s) to read (complete, starting with http:// or https://, at most 20) and what to do with them, e.g. \"Summarize https://example.com/article and extract key points from https://another.com/data\".",
            ),
            ModelFamily::Gemini3 => (
                include_str!("descriptions/web_fetch.gemini3.md"),
                "The URL(s) (at most 20) and your instructions for them. Say precisely what you want found or summarised.",
            ),
        };
        Declaration {
            name: NAME.into(),
            description: description.trim_end().into(),
            parameters: json!({"type": "object", "properties": {
                "prompt": {"type": "string", "description": prompt}}, "required": ["prompt"]}),
        }
    }

    /// The declared schema plus the older `url` and `html_to_markdown`, in either mode; in the
    /// default mode a call needs `prompt` or `url` (compat T5).
    fn accepted_parameters(&self) -> Option<Value> {
        let mut schema = toolbelt_core::schema::with_properties(
            self.declaration(ModelFamily::Legacy).parameters,
            &[
                ("url", json!({"type": "string"})),
                ("prompt", json!({"type": "string"})),
                ("html_to_markdown", json!({"type": "boolean"})),
            ],
        );
        if !self.direct {
            // `prompt` is required unless there is a `url` (the message stays upstream's).
            schema["required"] = json!([]);
            schema["if"] = json!({"required": ["url"]});
            schema["else"] = json!({"required": ["prompt"]});
        }
        Some(schema)
    }

    fn build(&self, params: Value, env: &ToolEnv) -> Result<Box<dyn Invocation>, String> {
        let older: OlderParams = toolbelt_core::schema::parse_params(params)?;
        // A `url` on its own (the older form) is fetched as it is, in either mode.
        if self.direct || older.prompt.is_none() {
            let raw = older.url.unwrap_or_default();
            let url = Url::parse(&raw)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| format!("Invalid URL: \"{raw}\""))?;
            let html_to_text = older.html_to_markdown.unwrap_or(true);
            return Ok(Box::new(DirectCall { url, limits: limits(env), html_to_text }));
        }
        let mut prompt = older.prompt.unwrap_or_default();
        // A `url` beside a prompt is one of the prompt's URLs.
        if let Some(u) = older.url.filter(|u| !prompt.contains(u.as_str())) {
            prompt = format!("{prompt} {u}");
        }
        if prompt.trim().is_empty() {
            return Err(
                "The 'prompt' parameter cannot be empty and must contain URL(s) and instructions."
                    .into(),
            );
        }
        let (urls, errors) = parse_prompt(&prompt);
        if !errors.is_empty() {
            return Err(format!("Error(s) in prompt URLs:\n- {}", errors.join("\n- ")));
        }
        if urls.is_empty() {
            return Err("The 'prompt' must contain at least one valid URL (starting with http:// or https://).".into());
        }
        Ok(Box::new(PromptCall {
            prompt: prompt.to_string(),
            urls,
            limits: limits(env),
            model: self.model.clone(),
        }))
    }
}

/// Every parameter either mode accepts (`url` and `html_to_markdown` are older in the default
/// mode).
#[derive(serde::Deserialize)]
struct OlderParams {
    url: Option<String>,
    prompt: Option<String>,
    html_to_markdown: Option<bool>,
}

struct PromptCall {
    prompt: String,
    urls: Vec<Url>,
    limits: FetchLimits,
    model: Option<Arc<dyn ModelAccess>>,
}

fn fail(kind: ErrorType, message: String) -> ToolResult {
    ToolResult::error(
        kind,
        message.clone(),
        format!("Error: {message}"),
        format!("Error: {message}"),
    )
}

#[async_trait]
impl Invocation for PromptCall {
    fn description(&self) -> String {
        let p: String = if self.prompt.chars().count() > 100 {
            format!("{}...", self.prompt.chars().take(97).collect::<String>())
        } else {
            self.prompt.clone()
        };
        format!("Processing URLs and instructions from prompt: \"{p}\"")
    }

    fn respects_auto_edit(&self) -> bool {
        true
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        Some(ConfirmationDetails::Info {
            title: "Confirm Web Fetch".into(),
            prompt: self.prompt.clone(),
            urls: self.urls.iter().map(|u| fetch::github_raw(u).to_string()).collect(),
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let mut kept: Vec<Url> = Vec::new();
        let mut skipped: Vec<String> = Vec::new();
        let mut seen = Vec::new();
        for u in &self.urls {
            let n = normalize(u);
            if seen.contains(&n) {
                continue;
            }
            seen.push(n.clone());
            if fetch::is_blocked_literal(u, &self.limits) {
                skipped.push(format!("[Blocked Host] {n}"));
            } else if rate_limited(u) {
                skipped.push(format!("[Rate limit exceeded] {n}"));
            } else {
                kept.push(Url::parse(&n).unwrap_or_else(|_| u.clone()));
            }
        }
        if kept.is_empty() {
            return fail(
                ErrorType::WebFetchProcessingError,
                format!("All requested URLs were skipped: {}", skipped.join(", ")),
            );
        }
        let warning = if skipped.is_empty() {
            String::new()
        } else {
            format!("[Warning] The following URLs were skipped:\n{}\n\n", skipped.join("\n"))
        };
        if let Some(model) = self.model.as_ref().filter(|m| m.supports_grounding()) {
            let list: Vec<String> = kept.iter().map(Url::to_string).collect();
            let ask = format!(
                "Follow the user's instructions to process the authorized URLs.\n\n<user_instructions>\n{}\n</user_instructions>\n\n<authorized_urls>\n{}\n</authorized_urls>\n",
                xml_escape(&self.prompt),
                list.join("\n")
            );
            match model.ask(&ask, Grounding::UrlContext, &ctx.cancel).await {
                Ok(a) if !a.text.trim().is_empty() || !sources(a.grounding.as_ref()).is_empty() => {
                    let text = insert_markers(&a.text, a.grounding.as_ref(), Unit::Utf16)
                        + &sources_block(a.grounding.as_ref(), "Unknown URI");
                    return ToolResult::text(
                        untrusted(&format!("{warning}{text}")),
                        "Content processed from prompt.",
                    );
                }
                Ok(_) => tracing::info!(
                    "web_fetch: the model's URL context gave nothing; fetching directly"
                ),
                Err(e) => tracing::info!(
                    "web_fetch: the model's URL context failed ({e}); fetching directly"
                ),
            }
        }
        self.fallback(&kept, &warning, &ctx).await
    }
}

impl PromptCall {
    async fn fallback(&self, urls: &[Url], warning: &str, ctx: &ExecContext) -> ToolResult {
        let mut ok: Vec<(String, String)> = Vec::new();
        let mut failed: Vec<(String, String)> = Vec::new();
        for u in urls {
            if ctx.cancel.is_cancelled() {
                return ToolResult::simple_error(ErrorType::Cancelled, "Operation cancelled.");
            }
            let target = fetch::github_raw(u);
            match fetch::get(&target, None, &self.limits, &ctx.cancel).await {
                Ok(f) if (200..300).contains(&f.status) => {
                    let mime = f.mime();
                    let text = if mime.is_empty() || mime == "text/html" {
                        super::html::to_text(f.body, None).await
                    } else {
                        f.text()
                    };
                    // No page gets more than the whole budget: cut now, not after every
                    // page is in (nine hostile pages held 1.18 GB; issue 37).
                    ok.push((u.to_string(), capped(text, BUDGET_CHARS, TRUNCATED)));
                }
                Ok(f) => failed.push((
                    u.to_string(),
                    format!("Request failed with status code {} {}", f.status, f.reason),
                )),
                Err(e) => failed.push((u.to_string(), e.to_string())),
            }
        }
        if ok.is_empty() {
            let all: Vec<String> = failed.iter().map(|(u, m)| format!("{u}: {m}")).collect();
            return fail(
                ErrorType::WebFetchFallbackFailed,
                format!("All fallback fetch attempts failed: {}", all.join(", ")),
            );
        }
        share_budget(&mut ok);
        let mut blocks: Vec<String> = ok
            .iter()
            .map(|(u, c)| {
                format!("<source url=\"{}\">\n{}\n</source>", xml_escape(u), xml_escape(c))
            })
            .collect();
        blocks.extend(failed.iter().map(|(u, m)| {
            format!("<source url=\"{}\">\nError: {}\n</source>", xml_escape(u), xml_escape(m))
        }));
        let sources = blocks.join("\n");
        let Some(model) = &self.model else {
            // No model to hand the pages to (`toolbelt call`): the pages themselves.
            return ToolResult::text(
                untrusted(&format!("{warning}{sources}")),
                format!("Content for {} URL(s) fetched (no model to process it).", ok.len()),
            );
        };
        let ask = format!(
            "Follow the user's instructions below using the provided webpage content.\n\n<user_instructions>\n{}\n</user_instructions>\n\nI was unable to access the URL(s) directly using the primary fetch tool. Instead, I have fetched the raw content of the page(s). Please use the following content to answer the request. Do not attempt to access the URL(s) again.\n\n<content>\n{sources}\n</content>\n",
            xml_escape(&self.prompt)
        );
        match model.ask(&ask, Grounding::None, &ctx.cancel).await {
            Ok(a) => ToolResult::text(
                untrusted(&format!("{warning}{}", a.text)),
                format!("Content for {} URL(s) processed using fallback fetch.", ok.len()),
            ),
            Err(e) => fail(
                ErrorType::WebFetchFallbackFailed,
                format!("Error during fallback processing: {e}"),
            ),
        }
    }
}

struct DirectCall {
    url: Url,
    limits: FetchLimits,
    /// HTML is turned into text (`html_to_markdown: false` keeps the HTML).
    html_to_text: bool,
}

#[async_trait]
impl Invocation for DirectCall {
    fn description(&self) -> String {
        format!("Fetching content from: {}", self.url)
    }

    fn respects_auto_edit(&self) -> bool {
        true
    }

    fn confirmation(&self) -> Option<ConfirmationDetails> {
        Some(ConfirmationDetails::Info {
            title: "Confirm Web Fetch".into(),
            prompt: format!("Fetch {}", self.url),
            urls: vec![fetch::github_raw(&self.url).to_string()],
        })
    }

    async fn execute(&self, ctx: ExecContext) -> ToolResult {
        let url = fetch::github_raw(&self.url);
        let f = match fetch::get(&url, Some(DIRECT_ACCEPT), &self.limits, &ctx.cancel).await {
            Ok(f) => f,
            Err(e @ FetchError::Blocked(_)) => {
                return fail(ErrorType::WebFetchProcessingError, e.to_string());
            }
            Err(e) => {
                return fail(
                    ErrorType::WebFetchFallbackFailed,
                    format!("Error during experimental fetch for {url}: {e}"),
                );
            }
        };
        if f.status >= 400 {
            let headers: serde_json::Map<String, Value> =
                f.headers.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            let body = capped(f.text(), 10_000, "\n\n... [Error response truncated] ...");
            return ToolResult::text(
                // The body and headers come from the server: wrapped, as any page is.
                format!(
                    "Request failed with status {}\n{}",
                    f.status,
                    untrusted(&format!(
                        "Headers: {}\nResponse: {body}",
                        serde_json::to_string_pretty(&headers).unwrap_or_default()
                    ))
                ),
                format!("Failed to fetch {url} (Status: {})", f.status),
            );
        }
        let mime = f.mime();
        let content_type = f.content_type.clone().unwrap_or_default();
        let cap = |s: String| capped(s, BUDGET_CHARS, TRUNCATED);
        if mime.starts_with("image/") || mime.starts_with("video/") || mime == "application/pdf" {
            use base64::Engine;
            let data = base64::engine::general_purpose::STANDARD.encode(&f.body);
            return ToolResult {
                llm_content: Content::Part(Part::inline(mime.clone(), data)),
                ..ToolResult::text("", format!("Fetched {mime} from {url}"))
            };
        }
        if mime == "text/html" && self.html_to_text {
            return ToolResult::text(
                untrusted(&cap(super::html::to_text(
                    f.body,
                    Some(url.origin().ascii_serialization()),
                )
                .await)),
                format!("Fetched and converted HTML content from {url}"),
            );
        }
        let display = if mime.is_empty() {
            format!("Fetched unknown content from {url}")
        } else {
            format!("Fetched {content_type} content from {url}")
        };
        ToolResult::text(untrusted(&cap(f.text())), display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_urls_as_upstream() {
        let (urls, errors) = parse_prompt(
            "see https://Example.com:443/a/ and http://x.org, then ftp://f.org/z (https://bad) httpshttps://example.com",
        );
        assert_eq!(
            urls.iter().map(normalize).collect::<Vec<_>>(),
            ["https://example.com/a", "http://x.org,/"]
        );
        assert_eq!(
            errors,
            [
                "Unsupported protocol in URL: \"ftp://f.org/z\". Only http and https are supported.",
                "Malformed URL detected: \"(https://bad)\".",
                "Unsupported protocol in URL: \"httpshttps://example.com\". Only http and https are supported."
            ]
        );
    }

    #[test]
    fn the_budget_is_shared_smallest_first() {
        let mut t = vec![("a".into(), "x".repeat(10)), ("b".into(), "y".repeat(400_000))];
        share_budget(&mut t);
        assert_eq!(t[0].1.len(), 10);
        assert_eq!(t[1].1.chars().count(), BUDGET_CHARS - 10 + TRUNCATED.chars().count());
    }
}
