//! OAuth for Streamable HTTP servers, with the SDK's auth support (discovery from the 401's
//! `WWW-Authenticate` and protected-resource metadata, authorization-server metadata with OIDC
//! fallback, PKCE, dynamic or pre-registered clients, refresh).
//!
//! `toolbelt mcp auth NAME` signs in once: a callback listener on its own loopback port, the
//! authorization URL opened in a browser (and printed), the code exchanged for tokens, which
//! are saved under `~/.toolbelt/mcp-oauth/`. Later connections load them and the SDK refreshes
//! them when they expire or a 401 says so; refreshed tokens are saved back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, CredentialStore, OAuthState, StoredCredentials, WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long `login` waits for the browser to come back.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Tokens of one server in one JSON file (mode 0600), replaced atomically.
#[derive(Clone, Debug)]
pub struct FileCredentialStore {
    path: PathBuf,
}

impl FileCredentialStore {
    /// The store of server `name` at `url`, under `dir` (`~/.toolbelt/mcp-oauth`). The URL is
    /// part of the file name so that a renamed or moved server does not reuse tokens.
    pub fn new(dir: &Path, name: &str, url: &str) -> Self {
        let safe: String =
            name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let h = toolbelt_core::files::fnv1a(url.bytes());
        Self { path: dir.join(format!("{safe}-{h:016x}.json")) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether tokens were saved for this server.
    pub fn exists(&self) -> bool {
        self.path.is_file()
    }
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::InternalError(format!("credential store: {e}"))
}

#[async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        use toolbelt_core::json_in::{self, JsonBudget};
        use toolbelt_core::limits::SETTINGS_BYTES;
        match toolbelt_core::files::read_text_bounded(&self.path, SETTINGS_BYTES) {
            Ok(text) => json_in::parse_str(&text, JsonBudget::message(SETTINGS_BYTES))
                .map(Some)
                .map_err(store_error),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(store_error(format!("{}: {e}", self.path.display()))),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes = serde_json::to_vec_pretty(&credentials).map_err(store_error)?;
        // A new file gets the temporary file's 0600; a replaced one keeps its permissions.
        toolbelt_core::files::replace_file(&self.path, &bytes)
            .map_err(|e| store_error(format!("{}: {e}", self.path.display())))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_error(format!("{}: {e}", self.path.display()))),
        }
    }
}

/// A manager for the server at `url` that keeps its tokens in `store`.
pub async fn manager(
    url: &str,
    store: FileCredentialStore,
) -> Result<AuthorizationManager, String> {
    toolbelt_core::tls::ready();
    let mut manager =
        AuthorizationManager::new(url).await.map_err(|e| format!("OAuth set-up failed: {e}"))?;
    manager.set_credential_store(store);
    Ok(manager)
}

/// A manager with the saved tokens of a server, if there are any.
pub async fn saved_manager(
    url: &str,
    store: FileCredentialStore,
) -> Result<Option<AuthorizationManager>, String> {
    if !store.exists() {
        return Ok(None);
    }
    let mut manager = manager(url, store).await?;
    match manager.initialize_from_store().await {
        Ok(true) => Ok(Some(manager)),
        Ok(false) => Ok(None),
        Err(e) => Err(format!("saved OAuth tokens are unusable: {e}")),
    }
}

/// A server's refusal for want of authorization, with the `WWW-Authenticate` challenge of its
/// answer: a 401 (sign in) or a 403 `insufficient_scope` (sign in again with more scopes).
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub challenge: String,
    pub insufficient_scope: bool,
}

impl Refusal {
    /// The scopes the challenge asks for.
    pub fn scopes(&self) -> Vec<String> {
        // The base only resolves a relative `resource_metadata`, which is not used here.
        let base = url::Url::parse("http://localhost/").ok();
        let params = base.map(|b| WWWAuthenticateParams::parse(&self.challenge, &b));
        params.and_then(|p| p.scope).map(|s| split_scopes(&s)).unwrap_or_default()
    }

    /// What the user should do about it, for server `name`.
    pub fn advice(&self, name: &str) -> String {
        let scopes = self.scopes();
        if self.insufficient_scope && !scopes.is_empty() {
            let list = scopes.join(" ");
            format!(
                "the server needs more OAuth scopes ({list}): sign in again with `toolbelt mcp auth {name} --scope '{list}'`"
            )
        } else {
            format!("the server wants an OAuth sign-in: run `toolbelt mcp auth {name}`")
        }
    }

    /// ` — <advice>` for server `name` when there was a refusal, else nothing: the tail of an
    /// error message.
    pub fn hint(refusal: Option<Self>, name: &str) -> String {
        refusal.map(|r| format!(" — {}", r.advice(name))).unwrap_or_default()
    }

    /// The refusal behind an error of rmcp's HTTP transport, found among its sources.
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Option<Self> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(a) = e.downcast_ref::<AuthRequiredError>() {
                let challenge = a.www_authenticate_header.clone();
                return Some(Self { challenge, insufficient_scope: false });
            }
            if let Some(s) = e.downcast_ref::<InsufficientScopeError>() {
                let challenge = s.www_authenticate_header.clone();
                return Some(Self { challenge, insufficient_scope: true });
            }
            next = e.source();
        }
        None
    }

    /// The refusal behind a failed request.
    pub fn of_request(error: &ServiceError) -> Option<Self> {
        match error {
            ServiceError::TransportSend(e) => Self::of(e),
            _ => None,
        }
    }

    /// The refusal behind a failed initialization.
    pub fn of_initialize(error: &ClientInitializeError) -> Option<Self> {
        match error {
            ClientInitializeError::TransportError { error, .. } => Self::of(error),
            _ => None,
        }
    }
}

fn split_scopes(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// `a` followed by what `b` adds to it.
fn union(mut a: Vec<String>, b: impl IntoIterator<Item = String>) -> Vec<String> {
    for s in b {
        if !a.contains(&s) {
            a.push(s);
        }
    }
    a
}

/// Signs in to the server at `url`: `open` is given the authorization URL (to launch a browser
/// or print it); the flow completes when the browser is redirected to the local callback.
/// `refusal` is the server's answer that asked for it, if there was one (otherwise the server
/// is asked with an unauthenticated initialize). The scopes asked for are the configured ones,
/// those granted before and those the refusal names; none at all lets the SDK choose from the
/// server's metadata.
pub async fn login(
    url: &str,
    store: FileCredentialStore,
    options: &OAuthOptions,
    refusal: Option<&Refusal>,
    open: impl FnOnce(&str),
) -> Result<(), String> {
    // Each flow has its own port, so concurrent sign-ins never collide on a callback.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot open a local callback port: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}/oauth/callback");
    let granted = match store.load().await {
        Ok(Some(saved)) => saved.granted_scopes,
        _ => Vec::new(),
    };
    let challenged = refusal.map(Refusal::scopes).unwrap_or_default();
    let scopes = union(union(options.scopes.clone(), granted), challenged);
    let mut request = AuthorizationRequest::new(redirect.clone()).with_client_name("toolbelt");
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(id) = &options.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &options.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if let Some(doc) = &options.client_metadata_url {
        request = request.with_client_metadata_url(doc.clone());
    }
    // The server's own 401 names its metadata and the scopes it wants.
    let challenge = match refusal {
        Some(r) => Some(r.challenge.clone()),
        None => challenge(url).await,
    };
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    let mut state = OAuthState::Unauthorized(manager(url, store.clone()).await?);
    let started = match state.start_authorization(request.clone()).await {
        Err(AuthError::AuthorizationServerMismatch { expected_issuer, received_issuer }) => {
            let fresh = manager(url, store).await?;
            let session = legacy_session(url, fresh, request, &expected_issuer, &received_issuer)
                .await
                .ok_or_else(|| {
                    format!("the authorization server's metadata names issuer {received_issuer}, not {expected_issuer}")
                })?;
            state = OAuthState::Session(session?);
            Ok(())
        }
        other => other.map_err(|e| e.to_string()),
    };
    started.map_err(|e| {
        format!("cannot start OAuth with {url}: {e} (does the server support OAuth discovery?)")
    })?;
    let auth_url = state.get_authorization_url().await.map_err(|e| e.to_string())?;
    open(&auth_url);
    let callback =
        tokio::time::timeout(LOGIN_TIMEOUT, wait_for_callback(&listener, port)).await.map_err(
            |_| format!("no sign-in within {} s; run the command again", LOGIN_TIMEOUT.as_secs()),
        )??;
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| format!("the authorization server refused the sign-in: {e}"))?;
    Ok(())
}

/// A server of the 2025-03-26 revision publishes no protected-resource metadata, and serves its
/// authorization-server metadata at its origin's root, where some name an issuer on a path
/// of that same origin (`https://host/oauth`), which RFC 8414's check refuses. Such metadata is
/// accepted only when it was looked for at the root of the server's origin and the issuer it
/// names is on that origin too, so that no other party is named. `None`: not that case.
async fn legacy_session(
    url: &str,
    mut manager: AuthorizationManager,
    request: AuthorizationRequest,
    expected_issuer: &str,
    received_issuer: &str,
) -> Option<Result<AuthorizationSession, String>> {
    toolbelt_core::tls::ready();
    let server = url::Url::parse(url).ok()?;
    let origin = server.origin();
    let expected = url::Url::parse(expected_issuer).ok()?;
    let received = url::Url::parse(received_issuer).ok()?;
    let at_root = expected.path().trim_end_matches('/').is_empty();
    if !at_root || expected.origin() != origin || received.origin() != origin {
        return None;
    }
    let mut metadata_url = server.clone();
    metadata_url.set_path("/.well-known/oauth-authorization-server");
    metadata_url.set_query(None);
    let fetched = async {
        let r = reqwest::Client::new()
            .get(metadata_url.clone())
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| e.to_string())?;
        r.json::<AuthorizationMetadata>().await.map_err(|e| e.to_string())
    };
    let metadata = match fetched.await {
        Ok(m) if m.issuer.as_deref() == Some(received_issuer) => m,
        Ok(_) => return None,
        Err(e) => return Some(Err(format!("cannot read {metadata_url}: {e}"))),
    };
    manager.set_metadata(metadata);
    Some(AuthorizationSession::new(manager, request).await.map_err(|(_, e)| e.to_string()))
}

/// How to sign in, from the server's `oauth` settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OAuthOptions {
    /// Scopes to ask for; none: the SDK picks them from the challenge or metadata.
    pub scopes: Vec<String>,
    /// A client registered beforehand; none: dynamic registration.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// The HTTPS URL of this client's metadata document, used as its client ID by
    /// authorization servers that accept such documents instead of registration.
    pub client_metadata_url: Option<String>,
}

/// The `WWW-Authenticate` header of the server's answer to an unauthenticated initialize.
async fn challenge(url: &str) -> Option<String> {
    toolbelt_core::tls::ready();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": super::PROTOCOL_VERSION.to_string(), "capabilities": {},
        "clientInfo": {"name": "toolbelt", "version": env!("CARGO_PKG_VERSION")}}});
    let r = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    if r.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    r.headers().get("www-authenticate")?.to_str().ok().map(String::from)
}

/// Serves the callback until a request with `code` or `error` arrives; returns its full URL.
async fn wait_for_callback(
    listener: &tokio::net::TcpListener,
    port: u16,
) -> Result<String, String> {
    loop {
        let (mut sock, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 16 * 1024];
        let n = sock.read(&mut buf).await.unwrap_or(0);
        let head = String::from_utf8_lossy(&buf[..n]).to_string();
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let is_callback = target.starts_with("/oauth/callback?");
        let error = is_callback && target.contains("error=");
        let body = if !is_callback {
            "Waiting for the OAuth callback."
        } else if error {
            "Sign-in failed; see the terminal."
        } else {
            "Signed in. You can close this window and return to the terminal."
        };
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = sock.write_all(reply.as_bytes()).await;
        if !is_callback {
            continue;
        }
        let full = format!("http://127.0.0.1:{port}{target}");
        if error {
            return Err(format!("the authorization server returned an error: {full}"));
        }
        return Ok(full);
    }
}
