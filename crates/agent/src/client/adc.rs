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

/// Where the credentials come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A service-account key file.
    ServiceAccount(PathBuf),
    /// The gcloud user file (a refresh token of the person's own account).
    GcloudUser(PathBuf),
}

/// Credentials found, and their token provider once made.
pub struct Adc {
    source: Source,
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
        let text = std::fs::read(&path).map_err(|e| {
            format!(
                "cannot read the credentials file {} ({e}); set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file",
                path.display()
            )
        })?;
        let json: Value = serde_json::from_slice(&text)
            .map_err(|e| format!("the credentials file {} is not JSON ({e})", path.display()))?;
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
                return Err(format!(
                    "the credentials in {} are of type {}; toolbelt signs in to Vertex AI with a service-account key or gcloud's user file",
                    path.display(),
                    other.unwrap_or("(none)")
                ));
            }
        };
        let project = field("project_id").or_else(|| field("quota_project_id"));
        Ok(Self { source, project, provider: tokio::sync::OnceCell::new() })
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The project the credentials name, if any.
    pub fn project(&self) -> Option<&str> {
        self.project.as_deref()
    }

    /// A token for Vertex AI (cached by the provider until it expires).
    pub async fn token(&self) -> Result<String, String> {
        let provider = self
            .provider
            .get_or_try_init(|| async {
                let made: Result<Arc<dyn gcp_auth::TokenProvider>, gcp_auth::Error> =
                    match &self.source {
                        Source::ServiceAccount(p) => gcp_auth::CustomServiceAccount::from_file(p)
                            .map(|s| Arc::new(s) as Arc<dyn gcp_auth::TokenProvider>),
                        Source::GcloudUser(_) => gcp_auth::ConfigDefaultCredentials::new()
                            .await
                            .map(|s| Arc::new(s) as Arc<dyn gcp_auth::TokenProvider>),
                    };
                made.map_err(|e| self.failed(&e))
            })
            .await?;
        let token = provider.token(&[SCOPE]).await.map_err(|e| self.failed(&e))?;
        Ok(token.as_str().to_string())
    }

    /// Why no token came, with the innermost cause.
    fn failed(&self, e: &gcp_auth::Error) -> String {
        let mut cause = e.to_string();
        let mut next = std::error::Error::source(e);
        while let Some(inner) = next {
            cause = format!("{cause}: {inner}");
            next = inner.source();
        }
        let from = match &self.source {
            Source::ServiceAccount(p) | Source::GcloudUser(p) => p.display(),
        };
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
        std::fs::write(&key, r#"{"type":"service_account","project_id":"p-9"}"#).unwrap();
        let adc = Adc::find(key.to_str(), Some(home)).unwrap();
        assert_eq!(adc.source(), &Source::ServiceAccount(key.clone()));
        assert_eq!(adc.project(), Some("p-9"));

        let elsewhere = home.join("user.json");
        std::fs::copy(&user, &elsewhere).unwrap();
        let e = Adc::find(elsewhere.to_str(), Some(home)).err().unwrap();
        assert!(e.contains("service-account key"), "{e}");
        std::fs::write(&key, r#"{"type":"external_account"}"#).unwrap();
        assert!(Adc::find(key.to_str(), Some(home)).err().unwrap().contains("external_account"));
        let e = Adc::find(Some("/nonexistent/key.json"), Some(home)).err().unwrap();
        assert!(e.contains("cannot read the credentials file /nonexistent/key.json"), "{e}");
    }
}
