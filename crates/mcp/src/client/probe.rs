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
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

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

/// How the probe signs in: explicit options first, then the `client_id` and `client_secret`
/// of the conformance suite's context (`MCP_CONFORMANCE_CONTEXT`, a JSON object).
pub fn options(
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    context: Option<&str>,
) -> super::oauth::OAuthOptions {
    let context: Value = context.and_then(|c| serde_json::from_str(c).ok()).unwrap_or_default();
    let from_context = |key: &str| context.get(key).and_then(Value::as_str).map(String::from);
    super::oauth::OAuthOptions {
        scopes: Vec::new(),
        client_id: client_id.or_else(|| from_context("client_id")),
        client_secret: client_secret.or_else(|| from_context("client_secret")),
        client_metadata_url,
    }
}

/// Sign-ins after refusals are limited, so that a server that never accepts the scopes it
/// asks for does not send the probe round in circles.
const MAX_SIGN_INS: u32 = 3;

/// Headless OAuth for the probe: the authorization URL is fetched as a browser would, which
/// suffices for servers that approve at once, such as the conformance suite's; tokens are
/// kept in a temporary folder that lives as long as the probe.
struct SignIn {
    url: String,
    options: super::oauth::OAuthOptions,
    store: super::oauth::FileCredentialStore,
    _dir: tempfile::TempDir,
    count: u32,
}

impl SignIn {
    fn new(url: &str, options: &super::oauth::OAuthOptions) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let store = super::oauth::FileCredentialStore::new(dir.path(), "probe", url);
        Ok(Self { url: url.to_string(), options: options.clone(), store, _dir: dir, count: 0 })
    }

    /// Signs in after `refusal` (a 401, or a 403 asking for more scopes).
    async fn after(&mut self, refusal: &super::oauth::Refusal) -> Result<(), String> {
        if self.count >= MAX_SIGN_INS {
            return Err(format!("the server still refuses after {MAX_SIGN_INS} sign-ins"));
        }
        self.count += 1;
        let open = |auth_url: &str| {
            let auth_url = auth_url.to_string();
            tokio::spawn(async move {
                if let Err(e) = reqwest::get(&auth_url).await {
                    tracing::warn!("opening {auth_url} failed: {e}");
                }
            });
        };
        super::oauth::login(&self.url, self.store.clone(), &self.options, Some(refusal), open)
            .await
            .map_err(|e| format!("OAuth sign-in failed: {e}"))
    }

    /// A transport that sends the saved token, if any, with every request.
    async fn transport(
        &self,
    ) -> Result<StreamableHttpClientTransport<AuthClient<reqwest::Client>>, String> {
        toolbelt_core::tls::ready();
        let manager = super::oauth::manager(&self.url, self.store.clone()).await?;
        let client = AuthClient::new(reqwest::Client::new(), manager);
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        Ok(StreamableHttpClientTransport::with_client(client, config))
    }
}

/// Connects, signing in whenever the server's answer asks for it.
async fn connect(sign_in: &mut SignIn) -> Result<RunningService<RoleClient, ProbeHandler>, String> {
    loop {
        let error = match ProbeHandler.serve(sign_in.transport().await?).await {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        let url = sign_in.url.clone();
        let Some(refusal) = super::oauth::Refusal::of_initialize(&error) else {
            return Err(format!("cannot connect to {url}: {error}"));
        };
        if let Err(e) = sign_in.after(&refusal).await {
            return Err(format!("cannot connect to {url}: {error}; {e}"));
        }
    }
}

/// `op` on the connection, signing in again (within the limit) whenever the server refuses it
/// for want of a token or of scopes; the retry goes out on the same session.
async fn signed<T, F, Fut>(sign_in: &mut SignIn, op: F) -> Result<T, rmcp::ServiceError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
{
    loop {
        let error = match op().await {
            Ok(x) => return Ok(x),
            Err(e) => e,
        };
        let Some(refusal) = super::oauth::Refusal::of_request(&error) else {
            return Err(error);
        };
        if let Err(e) = sign_in.after(&refusal).await {
            tracing::warn!("{e}");
            return Err(error);
        }
    }
}

pub async fn probe(url: &str, options: &super::oauth::OAuthOptions) -> Result<Vec<Probed>, String> {
    let mut sign_in = SignIn::new(url, options)?;
    let client = connect(&mut sign_in).await?;
    let tools = signed(&mut sign_in, || client.list_all_tools())
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    let mut out = Vec::new();
    for t in tools {
        let mut params = CallToolRequestParams::new(t.name.to_string());
        params.arguments = Some(sample_args(&t.input_schema));
        let (ok, summary) = match signed(&mut sign_in, || client.call_tool(params.clone())).await {
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
