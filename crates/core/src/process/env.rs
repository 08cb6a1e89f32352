//! A child's environment: Gemini CLI's sanitisation (`services/environmentSanitization.js`),
//! with toolbelt's own credentials always held back. A variable is dropped when, in this order:
//! its value looks like a secret (private keys, certificates, credentials in URLs, GitHub,
//! Google, AWS, Stripe, Slack tokens, JWTs); unless its name starts with `GIT_CONFIG_` or is in
//! the `allowed` setting; when it is in the `blocked` setting; unless it is one of the
//! always-allowed names (`PATH`, `HOME`, `TERM`, ...); when it is one of the never-allowed names
//! (`DATABASE_URL`, `CLIENT_ID`, ...); in strict mode (GitHub Actions) always; when its name
//! contains `TOKEN`, `SECRET`, `PASSWORD`, `KEY`, `AUTH`, `CREDENTIAL`, `CERT`, ...
//!
//! Upstream applies this to MCP stdio servers always and to other children only when
//! `security.environmentVariableRedaction.enabled` is set; toolbelt applies it to every child
//! unless that setting is `false` (docs/compat.md S1), and even then never passes on the
//! credentials it holds itself (the model's API key, the MCP server token) unless `allowed`
//! names them.

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// The `security.environmentVariableRedaction` settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvRedaction {
    /// Whether the rules apply to every child (MCP stdio servers: always).
    pub enabled: bool,
    /// Names passed on whatever the rules say (value patterns still apply).
    pub allowed: Vec<String>,
    /// Names never passed on.
    pub blocked: Vec<String>,
}

impl Default for EnvRedaction {
    fn default() -> Self {
        Self { enabled: true, allowed: Vec::new(), blocked: Vec::new() }
    }
}

/// Who the environment is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildPurpose {
    /// Shell and background commands, hooks, discovered tools.
    Tool,
    /// An MCP stdio server: always cleaned, as upstream.
    McpServer,
}

/// Credentials toolbelt itself reads: never passed to a child unless `allowed` names them.
pub const OWN_CREDENTIALS: &[&str] =
    &["GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "TOOLBELT_MCP_TOKEN"];

const ALWAYS_ALLOWED: &[&str] = &[
    "PATH",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "SYSTEMDRIVE",
    "HOME",
    "LANG",
    "SHELL",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "TERM",
    "COLORTERM",
    "ADDITIONAL_CONTEXT",
    "AVAILABLE_LABELS",
    "BRANCH_NAME",
    "DESCRIPTION",
    "EVENT_NAME",
    "GITHUB_ENV",
    "IS_PULL_REQUEST",
    "ISSUES_TO_TRIAGE",
    "ISSUE_BODY",
    "ISSUE_NUMBER",
    "ISSUE_TITLE",
    "PULL_REQUEST_NUMBER",
    "REPOSITORY",
    "TITLE",
    "TRIGGERING_ACTOR",
];

const NEVER_ALLOWED: &[&str] = &[
    "CLIENT_ID",
    "DB_URI",
    "CONNECTION_STRING",
    "AWS_DEFAULT_REGION",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "SLACK_WEBHOOK_URL",
    "TWILIO_ACCOUNT_SID",
    "DATABASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_ACCOUNT",
    "FIREBASE_PROJECT_ID",
];

const NEVER_ALLOWED_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "AUTH",
    "CREDENTIAL",
    "CREDS",
    "PRIVATE",
    "CERT",
    // Beyond upstream: `DB_PASS`, `SESSION_COOKIE`.
    "PASS",
    "COOKIE",
];

/// Variables that change how a program loads code; an MCP server's `env` may not set them.
pub const DANGEROUS_EXECUTION_VARS: &[&str] = &[
    "NODE_OPTIONS",
    "NODE_CLI_FLAGS",
    "_FORCE_NODE_OPTIONS",
    "NODE_PATH",
    "ELECTRON_RUN_AS_NODE",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "RUBYOPT",
    "RUBYLIB",
    "PERL5OPT",
    "PERL5LIB",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_DEBUG",
    "LD_PROFILE",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_FORCE_FLAT_NAMESPACE",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "DYLD_FALLBACK_LIBRARY_PATH",
    "DYLD_FALLBACK_FRAMEWORK_PATH",
    "BASH_ENV",
    "ENV",
    "PERL5DB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "CLASSPATH",
    "DOTNET_STARTUP_HOOKS",
    "CORECLR_PROFILER_PATH",
    "CORECLR_ENABLE_PROFILING",
];

/// Whether `name` may not be set by configuration (it changes how programs load code).
pub fn is_dangerous_execution_var(name: &str) -> bool {
    DANGEROUS_EXECUTION_VARS.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// Values that hold credentials, whatever the variable is called: one row per shape, each with
/// a test (`every_shape_of_secret_is_held_back`).
/// Each with the words (in lower case) a value must hold for its pattern to be tried: most
/// values hold none, so most starts compile no pattern (compiling all sixteen took 3 ms of
/// every start; issue 37).
/// And a test the value must pass for the pattern to match at all (a character or a length
/// it needs): a `PATH` holding `pyenv-update` or `x86_64-unknown-linux-gnu` has `-u` in it, and
/// compiling the option's pattern for it took 0.3 ms of every start (issue 37). The test only
/// skips patterns that could not match (`each_shapes_test_is_implied_by_its_pattern`).
type Shape = (&'static str, &'static [&'static str], &'static str, fn(&str) -> bool);

fn any(_: &str) -> bool {
    true
}

/// `@` after `://`.
fn url_user(v: &str) -> bool {
    v.find("://").is_some_and(|at| v[at..].contains('@'))
}

fn has_equals(v: &str) -> bool {
    v.contains('=')
}

fn has_space(v: &str) -> bool {
    v.chars().any(char::is_whitespace)
}

fn colon_or_space(v: &str) -> bool {
    v.contains(':') || has_space(v)
}

/// A word that starts the value or follows white space begins with `-u` or `--user`, and a
/// `:` follows.
fn user_option(v: &str) -> bool {
    let mut after_space = true;
    v.char_indices().any(|(i, c)| {
        let starts = after_space && (v[i..].starts_with("-u") || v[i..].starts_with("--user"));
        after_space = c.is_whitespace();
        starts && v[i..].contains(':')
    })
}

fn two_dots(v: &str) -> bool {
    v.matches('.').nth(1).is_some()
}

fn has_dash(v: &str) -> bool {
    v.contains('-')
}
const VALUE_SHAPES: &[Shape] = &[
    ("private key block", &["-----begin"], r"(?i)-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----", any),
    ("certificate", &["-----begin"], r"(?i)-----BEGIN CERTIFICATE-----", any),
    // Upstream bounds the runs ({1,1024}, {0,10240}) and names four schemes; any scheme
    // (postgres://, mongodb+srv://, redis://) and an empty user name (`redis://:PASS@h`) too.
    ("URL with a password", &["://"], r"(?i)[a-z][a-z0-9+.-]*://[^:\s/@]*:[^@\s/]+@", url_user),
    // Sentry's DSN and its kind: a long key as the URL's user name.
    ("URL with a key as its user", &["://"], r"(?i)[a-z][a-z0-9+.-]*://[0-9a-z_-]{16,}@", url_user),
    (
        "password or key parameter",
        &["pass", "pwd", "secret", "key", "sig", "token"],
        r"(?i)(?:^|[?&;,.\s-])(?:password|passwd|pwd|pass|secret|client[_-]?secret|api[_-]?key|access[_-]?key|account[_-]?key|shared[_-]?access[_-]?key|sig|token)\s*=\s*[^&;,\s]+",
        has_equals,
    ),
    ("user and password option", &["-u"], r"(?:^|\s)(?:-u|--user)\s*[^\s:]+:\S+", user_option),
    (
        "authorization header",
        &["authorization", "bearer", "basic"],
        r"(?i)\b(?:authorization\s*:\s*\S+|bearer\s+[A-Za-z0-9._~+/=-]{8,}|basic\s+[A-Za-z0-9+/=]{8,})",
        colon_or_space,
    ),
    (
        "netrc entry",
        &["password"],
        r"(?i)\b(?:login|machine)\s+\S+\s+(?:\S+\s+)*password\s+\S+",
        has_space,
    ),
    (
        "GitHub token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        r"(?i)(ghp|gho|ghu|ghs|ghr|github_pat)_[a-zA-Z0-9_]{36,}",
        |v| v.len() >= 40,
    ),
    ("Google API key", &["aizasy"], r"(?i)AIzaSy[a-zA-Z0-9_\\-]{33}", |v| v.len() >= 39),
    ("AWS access key", &["akia"], r"(?i)AKIA[A-Z0-9]{16}", |v| v.len() >= 20),
    ("JWT", &["eyj"], r"(?i)eyJ[a-zA-Z0-9_-]*\.[a-zA-Z0-9_-]*\.", two_dots),
    ("Stripe key", &["k_live_", "k_test_"], r"(?i)(s|r)k_(live|test)_[0-9a-zA-Z]{24}", |v| {
        v.len() >= 32
    }),
    ("Slack token", &["xox"], r"(?i)xox[abpr]-[a-zA-Z0-9-]+", has_dash),
    // Beyond upstream: OpenAI, Anthropic and GitLab token shapes.
    ("OpenAI or Anthropic key", &["sk-"], r"sk-(proj|svcacct|admin|ant)-[A-Za-z0-9_-]{16,}", |v| {
        v.len() >= 23
    }),
    ("GitLab token", &["glpat-"], r"glpat-[A-Za-z0-9_-]{16,}", |v| v.len() >= 22),
];

/// `text.contains(part)` for the short names and values judged at every start: `str::contains`
/// prepares a searcher for each part, which cost more than the comparisons (45 parts for each
/// of ~35 variables; issue 37).
fn holds(text: &str, part: &str) -> bool {
    let (text, part) = (text.as_bytes(), part.as_bytes());
    let Some((&first, _)) = part.split_first() else { return true };
    text.len() >= part.len()
        && text[..=text.len() - part.len()]
            .iter()
            .enumerate()
            .any(|(i, &b)| b == first && text[i..].starts_with(part))
}

/// Whether `value` has the shape of a credential.
fn secret_shaped(value: &str) -> bool {
    static COMPILED: [OnceLock<Option<Regex>>; VALUE_SHAPES.len()] =
        [const { OnceLock::new() }; VALUE_SHAPES.len()];
    let lower = value.to_ascii_lowercase();
    VALUE_SHAPES.iter().zip(&COMPILED).any(|((_, words, pattern, could), compiled)| {
        words.iter().any(|w| holds(&lower, w))
            && could(value)
            && compiled
                .get_or_init(|| Regex::new(pattern).ok())
                .as_ref()
                .is_some_and(|r| r.is_match(value))
    })
}

/// Names of password variables that the name parts do not catch: `MYSQL_PWD`, `DB_PWD`,
/// `*_DSN`, `CI_JOB_JWT`, `NETRC_CONTENT`, connection strings. (`PWD` and `OLDPWD` are folders.)
fn password_name(key: &str) -> bool {
    key.ends_with("_PWD")
        || key.ends_with("_DSN")
        || key == "DSN"
        || ["JWT", "NETRC", "CONNECTION_STRING", "CONN_STR", "CONNSTR"]
            .iter()
            .any(|p| holds(key, p))
}

/// Upstream's strict mode: under GitHub Actions everything not allowed by name is dropped.
fn strict(vars: &[(OsString, OsString)]) -> bool {
    vars.iter().any(|(k, v)| k == "GITHUB_SHA" || (k == "SURFACE" && v == "Github"))
}

/// Upstream's `shouldRedactEnvironmentVariable`.
fn redact(key: &str, value: &str, cfg: &EnvRedaction, strict: bool) -> bool {
    let key = key.to_uppercase();
    if key.starts_with("GEMINI_CLI_") {
        return false;
    }
    // Named by the user: kept, whatever its value looks like (upstream checks the value first;
    // docs/compat.md S1).
    let named = |list: &[String]| list.iter().any(|n| n.eq_ignore_ascii_case(&key));
    if named(&cfg.allowed) {
        return false;
    }
    if !value.is_empty() && secret_shaped(value) {
        return true;
    }
    if key.starts_with("GIT_CONFIG_") {
        return false;
    }
    if named(&cfg.blocked) {
        return true;
    }
    if ALWAYS_ALLOWED.contains(&key.as_str()) {
        return false;
    }
    if NEVER_ALLOWED.contains(&key.as_str()) {
        return true;
    }
    if strict {
        return true;
    }
    NEVER_ALLOWED_NAME_PARTS.iter().any(|p| holds(&key, p)) || password_name(&key)
}

/// Whether a child would not be given `key=value` under the default rules (a secret by name
/// or by shape, or toolbelt's own credential): what [`super::harden_process`] keeps out of
/// `/proc`.
pub fn held_back(key: &str, value: &str) -> bool {
    OWN_CREDENTIALS.iter().any(|c| c.eq_ignore_ascii_case(key))
        || redact(key, value, &EnvRedaction::default(), false)
}

/// The environment a child gets, from `vars` (the process's own, usually).
pub fn sanitize(
    vars: Vec<(OsString, OsString)>,
    cfg: &EnvRedaction,
    purpose: ChildPurpose,
) -> Vec<(OsString, OsString)> {
    let strict = strict(&vars);
    let enabled = cfg.enabled || strict || purpose == ChildPurpose::McpServer;
    let allowed_by_name = |k: &OsStr| cfg.allowed.iter().any(|a| OsStr::new(a) == k);
    vars.into_iter()
        .filter(|(k, v)| {
            let (Some(key), value) = (k.to_str(), v.to_string_lossy()) else {
                // A name that is not UTF-8 cannot be judged: not passed on.
                return false;
            };
            if OWN_CREDENTIALS.iter().any(|c| c.eq_ignore_ascii_case(key)) && !allowed_by_name(k) {
                return false;
            }
            !enabled || !redact(key, &value, cfg, strict)
        })
        .collect()
}

/// The environment for a child of this process: [`sanitize`] applied to the process's own.
pub fn child_env(cfg: &EnvRedaction, purpose: ChildPurpose) -> Vec<(OsString, OsString)> {
    sanitize(std::env::vars_os().collect(), cfg, purpose)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(vars: &[(&str, &str)], cfg: &EnvRedaction, purpose: ChildPurpose) -> Vec<String> {
        let v = vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect();
        sanitize(v, cfg, purpose)
            .into_iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn secrets_are_held_back_and_the_rest_passes() {
        let vars = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("GEMINI_API_KEY", "x"),
            ("OPENAI_API_KEY", "x"),
            ("GITHUB_TOKEN", "x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("DATABASE_URL", "postgres://u:p@h/db"),
            ("EDITOR", "vim"),
            ("SOME_URL", "https://user:pw@example.com/"),
            ("NOTE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("PKCS8", "-----BEGIN PRIVATE KEY-----"),
            ("PGURL", "postgres://u:p@h/d"),
            ("OAI", "sk-proj-abcdefghijklmnopqrstuv"),
            ("DB_PASS", "hunter2"),
            ("GIT_CONFIG_COUNT", "1"),
            ("GEMINI_CLI_IDE", "1"),
        ];
        let d = EnvRedaction::default();
        assert_eq!(
            run(&vars, &d, ChildPurpose::Tool),
            ["PATH", "HOME", "EDITOR", "GIT_CONFIG_COUNT", "GEMINI_CLI_IDE"]
        );
        // Redaction off: everything but toolbelt's own credentials.
        let off = EnvRedaction { enabled: false, ..d.clone() };
        let got = run(&vars, &off, ChildPurpose::Tool);
        assert!(
            got.contains(&"GITHUB_TOKEN".to_string())
                && !got.contains(&"GEMINI_API_KEY".to_string())
        );
        // MCP servers are always cleaned.
        assert!(!run(&vars, &off, ChildPurpose::McpServer).contains(&"GITHUB_TOKEN".to_string()));
        // Named in `allowed`: passed on (toolbelt's own key too); `blocked` holds back.
        let named = EnvRedaction {
            allowed: vec!["github_token".into(), "GEMINI_API_KEY".into()],
            blocked: vec!["EDITOR".into()],
            ..d
        };
        let got = run(&vars, &named, ChildPurpose::Tool);
        assert!(
            got.contains(&"GITHUB_TOKEN".to_string())
                && got.contains(&"GEMINI_API_KEY".to_string())
        );
        assert!(!got.contains(&"EDITOR".to_string()));
    }

    #[test]
    fn every_value_pattern_compiles_and_its_words_are_lower_case() {
        for (name, words, pattern, _) in VALUE_SHAPES {
            assert!(Regex::new(pattern).is_ok(), "{name}");
            assert!(words.iter().all(|w| *w == w.to_ascii_lowercase()), "{name}");
        }
    }

    #[test]
    fn holds_is_contains() {
        for text in ["", "a", "ab", "abc", "xxabcxx", "aab", "ababc", "ä-b", "--user"] {
            for part in ["", "a", "b", "ab", "abc", "bc", "abcd", "-u", "--user", "ä"] {
                assert_eq!(holds(text, part), text.contains(part), "{text:?} {part:?}");
            }
        }
    }

    /// Issue 37: a shape's test may only skip values its pattern cannot match. Values built
    /// from the patterns' own pieces, joined by separators, are judged with and without it.
    #[test]
    fn each_shapes_test_is_implied_by_its_pattern() {
        let pieces = [
            "-u",
            "--user",
            "-U",
            "u:p",
            "://",
            "https://",
            "@",
            "a@b",
            "=",
            "key",
            "token=",
            "password",
            "pass",
            "login",
            "machine",
            "bearer",
            "Basic",
            "authorization:",
            ":",
            "ghp_",
            "github_pat_",
            "AIzaSy",
            "AKIA",
            "eyJ",
            "sk_live_",
            "xoxb-",
            "sk-ant-",
            "glpat-",
            "-----BEGIN CERTIFICATE-----",
            ".",
            "abcdefghijklmnopqrstuvwxyz0123456789",
            "ABCDEFGH",
            "x",
            "/usr/bin",
            "pyenv-update",
        ];
        let seps = ["", " ", "\t", "/", ":", "=", "&", "\u{a0}"];
        type Compiled = (&'static str, Regex, fn(&str) -> bool);
        let compiled: Vec<Compiled> = VALUE_SHAPES
            .iter()
            .filter_map(|(name, _, pattern, could)| {
                Some((*name, Regex::new(pattern).ok()?, *could))
            })
            .collect();
        assert_eq!(compiled.len(), VALUE_SHAPES.len());
        let mut checked = 0;
        for (i, a) in pieces.iter().enumerate() {
            for b in &pieces {
                for c in [pieces[(i * 7) % pieces.len()], pieces[(i * 11 + 3) % pieces.len()]] {
                    for s in &seps {
                        let value = format!("{a}{s}{b}{c}{s}{a}{b}");
                        for (name, pattern, could) in &compiled {
                            if pattern.is_match(&value) {
                                assert!(could(&value), "{name}: {value:?}");
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} matches checked");
    }

    /// Issue 33, finding 5: the filter removed keys by name, so credentials under ordinary
    /// names reached every child (9 of 10 such shapes passed). One row per shape.
    #[test]
    fn every_shape_of_secret_is_held_back() {
        let held: &[(&str, &str)] = &[
            ("REDIS_URL", "redis://:s3cretpass@cache.internal:6379/0"),
            ("AMQP_URL", "amqp://user:pw@rabbit/vhost"),
            ("JDBC_URL", "jdbc:mysql://db:3306/app?user=app&password=hunter2"),
            ("MYSQL_PWD", "hunter2"),
            ("DB_PWD", "hunter2"),
            ("SQLSERVER", "Server=tcp:db,1433;Database=app;User ID=sa;Password=hunter2;"),
            (
                "AZURE_STORAGE_CONNECTION_STRING",
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc123==;",
            ),
            (
                "SB",
                "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=abc=",
            ),
            ("SENTRY_DSN", "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1"),
            ("ERRORS", "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1"),
            ("CI_JOB_JWT", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"),
            ("NETRC_CONTENT", "machine github.com login me password t0ken"),
            ("MACHINES", "machine github.com login me password t0ken"),
            ("SIGNED", "https://bucket.s3.amazonaws.com/k?X-Amz-Credential=a&sig=abcdef"),
            ("KEYFILE", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl"),
            ("PGPASSWORD", "hunter2"),
            ("SOME_DSN", "postgres://app@db/app"),
            ("JAVA_OPTS", "-Xmx1g -Dspring.datasource.password=hunter2"),
            ("MYSQL_OPTS", "--host=db --password=hunter2"),
            ("CURL_OPTS", "-s -u admin:pw"),
            ("HDR", "Authorization: Bearer abcdefghijklmnop"),
            ("AUTHZ", "Basic dXNlcjpwYXNzd29yZA=="),
        ];
        for (k, v) in held {
            assert!(held_back(k, v), "{k}={v} reached the child");
        }
        let passed: &[(&str, &str)] = &[
            ("PWD", "/home/me/project"),
            ("OLDPWD", "/home/me"),
            ("PATH", "/usr/bin:/bin"),
            ("HOMEPAGE", "https://example.com/docs?page=2&lang=en"),
            ("GIT_URL", "ssh://git@github.com/me/repo.git"),
            ("PROXY_URL", "http://proxy.internal:3128"),
            ("NODE_ENV", "production"),
            ("EDITOR", "vim"),
        ];
        for (k, v) in passed {
            assert!(!held_back(k, v), "{k}={v} was held back");
        }
        // Named in `allowed`, a variable is kept whatever its value looks like.
        let keep = EnvRedaction { allowed: vec!["REDIS_URL".into()], ..EnvRedaction::default() };
        let got = run(&[("REDIS_URL", "redis://:s3cretpass@h/0")], &keep, ChildPurpose::Tool);
        assert_eq!(got, ["REDIS_URL"]);
    }

    #[test]
    fn github_actions_is_strict() {
        let vars = [("GITHUB_SHA", "abc"), ("PATH", "/bin"), ("EDITOR", "vim")];
        let off = EnvRedaction { enabled: false, ..EnvRedaction::default() };
        assert_eq!(run(&vars, &off, ChildPurpose::Tool), ["PATH"]);
    }
}
