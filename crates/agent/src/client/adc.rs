//! Application Default Credentials for Vertex AI, as Google's tools find them: the key file
//! `GOOGLE_APPLICATION_CREDENTIALS` names (a service account), else the file
//! `gcloud auth application-default login` writes (`~/.config/gcloud/…`). The `gcp_auth` crate
//! signs and exchanges them for tokens and caches each token until it expires; this module
//! only chooses the source, says clearly what is missing, and makes the provider on the first
//! request (a gcloud user file is exchanged for a token as soon as its provider is made).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

/// The scope Vertex AI's API takes.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long a token is waited for: a token endpoint answers in a second or two.
const TOKEN_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `fetch` on a task of its own, waited for at most [`TOKEN_WAIT`]; the task stops when the
/// wait ends or is dropped (gcp_auth holds its token cache's lock while it fetches: a fetch
/// left running kept every later request of the session waiting).
async fn bounded<F>(fetch: F) -> Result<String, String>
where
    F: std::future::Future<Output = Result<String, String>> + Send,
{
    match tokio::time::timeout(TOKEN_WAIT, fetch).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the token endpoint did not answer within {} s; try again, or check the token_uri of the credentials",
            TOKEN_WAIT.as_secs()
        )),
    }
}

/// A task stopped when its handle is dropped.
struct StopOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for StopOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether `p` has a Google Cloud project id's shape (letters, digits, `-`, and `.`/`:` of a
/// domain-scoped id); it becomes part of the request's path.
pub fn is_project_id(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 100
        && p.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b':')
        })
}

/// Whether `l` has a Vertex AI location's shape (`global`, `us-central1`); it becomes part of
/// the host name.
pub fn is_location(l: &str) -> bool {
    !l.is_empty()
        && l.len() <= 40
        && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Where the credentials come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A service-account key file.
    ServiceAccount(PathBuf),
    /// The gcloud user file (a refresh token of the person's own account).
    GcloudUser(PathBuf),
}

/// A credentials file is a few kilobytes; past this it is not one.
const MAX_CREDENTIALS_BYTES: u64 = 64 * 1024;

/// Credentials found, and their token provider once made.
pub struct Adc {
    source: Source,
    /// The file's text, read once (gcp_auth is given it, not the path again).
    text: String,
    /// The project the credentials name (`project_id`, or the user file's quota project).
    project: Option<String>,
    provider: tokio::sync::OnceCell<Arc<dyn gcp_auth::TokenProvider>>,
}

/// The gcloud user file under `home`.
pub fn gcloud_user_file(home: &Path) -> PathBuf {
    home.join(".config/gcloud/application_default_credentials.json")
}

impl Adc {
    /// The credentials `GOOGLE_APPLICATION_CREDENTIALS` (`env_file`) or the gcloud user file
    /// under `home` give; `Err` says in one sentence what is missing and how to set it.
    pub fn find(env_file: Option<&str>, home: Option<&Path>) -> Result<Self, String> {
        let (path, named) = match env_file.filter(|f| !f.is_empty()) {
            Some(f) => (PathBuf::from(f), true),
            None => match home.map(gcloud_user_file).filter(|p| p.is_file()) {
                Some(p) => (p, false),
                None => {
                    return Err("Vertex AI needs Application Default Credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run `gcloud auth application-default login`".into());
                }
            },
        };
        // Read from one handle, without blocking (a FIFO), a regular file only, bounded.
        let cannot = |why: String| {
            format!(
                "cannot read the credentials file {} ({why}); set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file",
                path.display()
            )
        };
        let (bytes, size) = toolbelt_core::files::read_regular(&path, MAX_CREDENTIALS_BYTES, true)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidInput {
                    cannot("not a regular file".into())
                } else {
                    cannot(e.to_string())
                }
            })?;
        if size > MAX_CREDENTIALS_BYTES {
            return Err(cannot(format!("larger than {} KiB", MAX_CREDENTIALS_BYTES >> 10)));
        }
        // Its text is never quoted back: it holds a private key or a refresh token.
        let json: Value = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "the credentials file {} is not JSON (line {}, column {})",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        let field = |k: &str| json.get(k).and_then(Value::as_str).map(String::from);
        let source = match field("type").as_deref() {
            Some("service_account") => Source::ServiceAccount(path.clone()),
            // gcp_auth reads a user file from gcloud's own place only.
            Some("authorized_user")
                if !named || home.is_some_and(|h| gcloud_user_file(h) == path) =>
            {
                Source::GcloudUser(path.clone())
            }
            Some("authorized_user") => {
                return Err(format!(
                    "{} holds a user's credentials; toolbelt reads those only from gcloud's own file (run `gcloud auth application-default login`), or set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file",
                    path.display()
                ));
            }
            other => {
                // The type is named only when it looks like one (never a key pasted there).
                let named = other
                    .filter(|t| {
                        t.len() <= 40 && t.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    })
                    .map_or_else(String::new, |t| format!(" ({t})"));
                return Err(format!(
                    "the credentials in {} are not a service-account key or gcloud's user file{named}; toolbelt signs in to Vertex AI with one of those",
                    path.display()
                ));
            }
        };
        if let Source::ServiceAccount(_) = source {
            // gcp_auth panics on a token_uri that is not a URI (a trailing space).
            let uri = field("token_uri").unwrap_or_default();
            let uri_chars =
                |b: u8| b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b);
            let ok = (uri.starts_with("https://") || uri.starts_with("http://"))
                && uri.bytes().all(uri_chars)
                && uri.split_once("://").is_some_and(|(_, rest)| !rest.starts_with('/'))
                && reqwest::Url::parse(&uri)
                    .is_ok_and(|u| u.host_str().is_some_and(|h| !h.is_empty()));
            if !ok {
                return Err(format!(
                    "the token_uri in {} is not a URL; download the service account's key again",
                    path.display()
                ));
            }
        }
        let project = field("project_id").or_else(|| field("quota_project_id"));
        if project.as_deref().is_some_and(|p| !is_project_id(p)) {
            return Err(format!(
                "the project_id in {} is not a Google Cloud project id; set GOOGLE_CLOUD_PROJECT",
                path.display()
            ));
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(Self { source, text, project, provider: tokio::sync::OnceCell::new() })
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The credentials file.
    fn file(&self) -> &Path {
        match &self.source {
            Source::ServiceAccount(p) | Source::GcloudUser(p) => p,
        }
    }

    /// The project the credentials name, if any.
    pub fn project(&self) -> Option<&str> {
        self.project.as_deref()
    }

    /// A token for Vertex AI (cached by the provider until it expires), waited for at most
    /// 60 seconds; a wait that ends (or is dropped, on a cancel) stops the fetch.
    pub async fn token(&self) -> Result<String, String> {
        bounded(self.fetch()).await
    }

    /// The provider runs on a task of its own, so a panic inside it is an error here, not the
    /// end of toolbelt.
    async fn fetch(&self) -> Result<String, String> {
        let provider = self
            .provider
            .get_or_try_init(|| async {
                let made = match &self.source {
                    Source::ServiceAccount(_) => {
                        gcp_auth::CustomServiceAccount::from_json(&self.text)
                            .map(|s| Arc::new(s) as Arc<dyn gcp_auth::TokenProvider>)
                    }
                    Source::GcloudUser(_) => {
                        let mut task =
                            StopOnDrop(tokio::spawn(gcp_auth::ConfigDefaultCredentials::new()));
                        let made = (&mut task.0).await.map_err(|e| self.broke(&e))?;
                        made.map(|s| Arc::new(s) as Arc<dyn gcp_auth::TokenProvider>)
                    }
                };
                made.map_err(|e| self.failed(&e))
            })
            .await?
            .clone();
        let mut task = StopOnDrop(tokio::spawn(async move { provider.token(&[SCOPE]).await }));
        let token =
            (&mut task.0).await.map_err(|e| self.broke(&e))?.map_err(|e| self.failed(&e))?;
        Ok(token.as_str().to_string())
    }

    /// The token provider stopped on a panic (or was cancelled).
    fn broke(&self, e: &tokio::task::JoinError) -> String {
        let from = self.file().display();
        format!("no Vertex AI token from the credentials in {from}: the sign-in stopped ({e})")
    }

    /// Why no token came, with the innermost cause.
    fn failed(&self, e: &gcp_auth::Error) -> String {
        let mut cause = e.to_string();
        let mut next = std::error::Error::source(e);
        while let Some(inner) = next {
            cause = format!("{cause}: {inner}");
            next = inner.source();
        }
        let from = self.file().display();
        format!("no Vertex AI token from the credentials in {from}: {cause}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credentials_are_found_as_google_s_tools_find_them_and_gaps_are_said() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path();
        let e = Adc::find(None, Some(home)).err().unwrap();
        assert!(
            e.contains("GOOGLE_APPLICATION_CREDENTIALS")
                && e.contains("gcloud auth application-default login"),
            "{e}"
        );

        let user = gcloud_user_file(home);
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","quota_project_id":"q-1"}"#).unwrap();
        let adc = Adc::find(None, Some(home)).unwrap();
        assert_eq!(adc.source(), &Source::GcloudUser(user.clone()));
        assert_eq!(adc.project(), Some("q-1"));

        let key = home.join("sa.json");
        std::fs::write(&key, r#"{"type":"service_account","project_id":"p-9","token_uri":"https://t.example/token"}"#).unwrap();
        let adc = Adc::find(key.to_str(), Some(home)).unwrap();
        assert_eq!(adc.source(), &Source::ServiceAccount(key.clone()));
        assert_eq!(adc.project(), Some("p-9"));

        let elsewhere = home.join("user.json");
        std::fs::copy(&user, &elsewhere).unwrap();
        let e = Adc::find(elsewhere.to_str(), Some(home)).err().unwrap();
        assert!(e.contains("service-account key"), "{e}");
        std::fs::write(&key, r#"{"type":"external_account"}"#).unwrap();
        assert!(Adc::find(key.to_str(), Some(home)).err().unwrap().contains("(external_account)"));
        let e = Adc::find(Some("/nonexistent/key.json"), Some(home)).err().unwrap();
        assert!(e.contains("cannot read the credentials file /nonexistent/key.json"), "{e}");
    }

    /// Issue 50 review: a credentials file whose `type` was its private key had the key echoed
    /// in the error an editor shows; a `token_uri` with a space panicked gcp_auth; `/dev/zero`
    /// took 18 GB and a FIFO hung the agent.
    #[cfg(unix)]
    #[test]
    fn hostile_credentials_files_are_refused_without_echo_panic_or_hang() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("k.json");
        let secret = "-----BEGIN PRIVATE KEY-----\nMIIEvQsecret\n-----END PRIVATE KEY-----\n";
        std::fs::write(
            &key,
            serde_json::json!({"type": secret, "private_key": secret}).to_string(),
        )
        .unwrap();
        let e = Adc::find(key.to_str(), None).err().unwrap();
        assert!(!e.contains("PRIVATE KEY") && !e.contains("MIIEvQ"), "{e}");
        assert!(e.contains("not a service-account key"), "{e}");

        std::fs::write(
            &key,
            serde_json::json!({"type": "service_account", "private_key": secret, "client_email": "a@b",
                               "token_uri": "https://oauth2.googleapis.com/token "})
            .to_string(),
        )
        .unwrap();
        let e = Adc::find(key.to_str(), None).err().unwrap();
        assert!(e.contains("token_uri") && e.contains("not a URL"), "{e}");
        // Second review: these panicked inside gcp_auth too.
        for bad in [
            "http://[::1",
            "http://",
            "http:///token",
            "http://h\\t",
            "http://h/<",
            "http://h/`",
            "http://h:99999/",
        ] {
            std::fs::write(
                &key,
                serde_json::json!({"type": "service_account", "token_uri": bad}).to_string(),
            )
            .unwrap();
            let e = Adc::find(key.to_str(), None).err().unwrap();
            assert!(e.contains("not a URL"), "{bad}: {e}");
        }

        let e = Adc::find(Some("/dev/zero"), None).err().unwrap();
        assert!(e.contains("/dev/zero") && e.contains("not a regular file"), "{e}");
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let e = Adc::find(fifo.to_str(), None).err().unwrap();
        assert!(e.contains("not a regular file"), "{e}");
        let big = d.path().join("big.json");
        std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
        assert!(Adc::find(big.to_str(), None).err().unwrap().contains("larger than"));
    }

    /// Issue 50 second review: a key file's `project_id` holding the private key went into
    /// the request's path and every "cannot reach" error. Project ids and locations are checked
    /// for their shape; what is not one is refused without quoting it.
    #[test]
    fn a_project_or_location_that_is_not_one_is_refused_unquoted() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("k.json");
        let secret = "-----BEGIN PRIVATE KEY-----\nMIIEvQsecret\n-----END PRIVATE KEY-----\n";
        std::fs::write(
            &key,
            serde_json::json!({"type": "service_account", "project_id": secret,
                               "token_uri": "https://oauth2.googleapis.com/token"})
            .to_string(),
        )
        .unwrap();
        let e = Adc::find(key.to_str(), None).err().unwrap();
        assert!(e.contains("project_id") && !e.contains("PRIVATE") && !e.contains("MIIEvQ"), "{e}");
        for ok in ["my-project-1", "example.com:my-proj", "p123456"] {
            assert!(is_project_id(ok), "{ok}");
        }
        for bad in ["", "a/b", "../x", "p?x", "P Q", &"a".repeat(101)] {
            assert!(!is_project_id(bad), "{bad}");
        }
        for ok in ["global", "us-central1", "europe-west4"] {
            assert!(is_location(ok), "{ok}");
        }
        for bad in ["", "us central", "x.evil.com/", "US"] {
            assert!(!is_location(bad), "{bad}");
        }
    }

    /// Issue 50 second review: a token endpoint that never answered hung `toolbelt run` for
    /// good and, after a cancel, every later prompt of the session. The wait is bounded and a
    /// dropped wait stops the fetch.
    #[tokio::test(start_paused = true)]
    async fn a_token_wait_is_bounded_and_a_dropped_wait_stops_the_fetch() {
        let stopped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        struct Flag(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let flag = Flag(stopped.clone());
        let e = bounded(async move {
            let _flag = flag;
            std::future::pending::<Result<String, String>>().await
        })
        .await
        .unwrap_err();
        assert!(e.contains("did not answer within 60 s"), "{e}");
        tokio::task::yield_now().await;
        assert!(stopped.load(std::sync::atomic::Ordering::SeqCst), "the fetch was stopped");
    }
}
