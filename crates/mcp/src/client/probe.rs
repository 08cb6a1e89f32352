//! `toolbelt mcp probe URL`: connect to a Streamable HTTP server, list its tools and call each
//! one with sample arguments made from its schema; elicitations are accepted with the
//! schema's defaults. A quick health check of a server, and the client the MCP conformance
//! suite drives (it passes the URL last).

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};

#[derive(Clone, Default)]
struct ProbeHandler;

impl ClientHandler for ProbeHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("toolbelt-mcp-probe", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(super::PROTOCOL_VERSION)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _c: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let schema = serde_json::to_value(&request)
            .ok()
            .and_then(|v| v.get("requestedSchema").cloned())
            .unwrap_or(Value::Null);
        let mut content = Map::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                if let Some(d) = p.get("default") {
                    content.insert(k.clone(), d.clone());
                }
            }
        }
        let mut r = ElicitResult::new(ElicitationAction::Accept);
        r.content = Some(Value::Object(content));
        Ok(r)
    }
}

/// Sample arguments for a schema: required properties get a value of their type.
pub fn sample_args(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for name in required {
        let ty = props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let v = match ty {
            "number" | "integer" => json!(1),
            "boolean" => json!(true),
            "array" => json!([]),
            "object" => json!({}),
            _ => json!("test"),
        };
        out.insert(name.to_string(), v);
    }
    out
}

/// One tool's outcome.
#[derive(Debug)]
pub struct Probed {
    pub tool: String,
    pub ok: bool,
    pub summary: String,
}

/// Connects; a server that answers 401 gets a headless OAuth sign-in (the authorization URL is
/// fetched as a browser would, which suffices for servers that approve at once, such as the
/// conformance suite's) with tokens kept in a temporary folder.
/// The folder holding the tokens lives as long as the connection.
async fn connect(
    url: &str,
) -> Result<(RunningService<RoleClient, ProbeHandler>, Option<tempfile::TempDir>), String> {
    let first = ProbeHandler.serve(StreamableHttpClientTransport::from_uri(url.to_string())).await;
    let error = match first {
        Ok(c) => return Ok((c, None)),
        Err(e) => e.to_string(),
    };
    if !(error.contains("Auth required") || error.contains("401")) {
        return Err(format!("cannot connect to {url}: {error}"));
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let store = super::oauth::FileCredentialStore::new(dir.path(), "probe", url);
    super::oauth::login(url, store.clone(), &Default::default(), |auth_url| {
        let auth_url = auth_url.to_string();
        tokio::spawn(async move {
            if let Err(e) = reqwest::get(&auth_url).await {
                tracing::warn!("opening {auth_url} failed: {e}");
            }
        });
    })
    .await
    .map_err(|e| format!("cannot connect to {url}: {error}; OAuth sign-in failed: {e}"))?;
    let Some(manager) = super::oauth::saved_manager(url, store).await? else {
        return Err(format!("cannot connect to {url}: signed in, but no token was saved"));
    };
    let client = rmcp::transport::auth::AuthClient::new(reqwest::Client::new(), manager);
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_string(),
        );
    let service = ProbeHandler
        .serve(StreamableHttpClientTransport::with_client(client, config))
        .await
        .map_err(|e| format!("cannot connect to {url} after signing in: {e}"))?;
    Ok((service, Some(dir)))
}

pub async fn probe(url: &str) -> Result<Vec<Probed>, String> {
    let (client, _tokens) = connect(url).await?;
    let tools = client.list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
    let mut out = Vec::new();
    for t in tools {
        let mut params = CallToolRequestParams::new(t.name.to_string());
        params.arguments = Some(sample_args(&t.input_schema));
        let (ok, summary) = match client.call_tool(params).await {
            Ok(r) => {
                (r.is_error != Some(true), serde_json::to_string(&r.content).unwrap_or_default())
            }
            Err(e) => (false, e.to_string()),
        };
        out.push(Probed { tool: t.name.to_string(), ok, summary });
    }
    let _ = client.cancel().await;
    Ok(out)
}
