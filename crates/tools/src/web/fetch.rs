//! Fetching a URL safely: every hop of a redirect chain is checked against the addresses its
//! host resolves to (not only literal IPs), and the connection is pinned to the address that
//! was checked, so DNS cannot change the answer in between. Bodies are capped in size and
//! time; HTML becomes text as upstream makes it (`html`).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::Url;
use tokio_util::sync::CancellationToken;

pub const USER_AGENT: &str =
    "Mozilla/5.0 (compatible; Google-Gemini-CLI/1.0; +https://github.com/google-gemini/gemini-cli)";
const MAX_REDIRECTS: usize = 10;

/// Limits of one fetch.
#[derive(Clone, Debug)]
pub struct FetchLimits {
    pub timeout: Duration,
    pub max_bytes: u64,
    /// Hosts (`host` or `host:port`) that may be private or loopback anyway.
    pub allowed_private: Vec<String>,
}

/// A fetched response.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub reason: String,
    pub content_type: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Fetched {
    /// The MIME type without parameters, lower-cased.
    pub fn mime(&self) -> String {
        self.content_type
            .as_deref()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// The body as text (charset from the header, else UTF-8 with replacement).
    pub fn text(&self) -> String {
        let charset = self
            .content_type
            .as_deref()
            .and_then(|c| c.split(';').find_map(|p| p.trim().strip_prefix("charset=")))
            .map(|c| c.trim_matches('"').to_string());
        if let Some(enc) = charset.and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes())) {
            return enc.decode(&self.body).0.into_owned();
        }
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why a fetch failed, in words for the model.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("Access to blocked or private host {0} is not allowed.")]
    Blocked(String),
    #[error("Content exceeds size limit of {0} bytes")]
    TooLarge(u64),
    #[error("Request timed out after {0} ms")]
    Timeout(u128),
    #[error("Request cancelled")]
    Cancelled,
    #[error("{0}")]
    Other(String),
}

pub use super::address::is_public;

/// Upstream's literal check (no DNS): `localhost`, or an IP literal that is not public;
/// hosts on the allow-list pass.
pub fn is_blocked_literal(url: &Url, limits: &FetchLimits) -> bool {
    if allowed(url, limits) {
        return false;
    }
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => !is_public(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => !is_public(IpAddr::V6(ip)),
        None => true,
    }
}

/// The URL's host without the brackets of an IPv6 literal.
fn bare_host(url: &Url) -> &str {
    url.host_str().unwrap_or("").trim_matches(['[', ']'])
}

fn allowed(url: &Url, limits: &FetchLimits) -> bool {
    let host = bare_host(url);
    let port = url.port_or_known_default().unwrap_or(0);
    limits.allowed_private.iter().any(|a| a == host || *a == format!("{host}:{port}"))
}

/// The address to connect to, checked: every address the host resolves to must be public.
async fn checked_address(url: &Url, limits: &FetchLimits) -> Result<SocketAddr, FetchError> {
    let blocked = || FetchError::Blocked(url.to_string());
    let host = bare_host(url);
    if host.is_empty() {
        return Err(blocked());
    }
    let port = url.port_or_known_default().ok_or_else(blocked)?;
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| FetchError::Other(format!("cannot resolve {host}: {e}")))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(FetchError::Other(format!("cannot resolve {host}: no addresses")));
    }
    if !allowed(url, limits)
        && (host.eq_ignore_ascii_case("localhost") || addrs.iter().any(|a| !is_public(a.ip())))
    {
        return Err(blocked());
    }
    // Prefer IPv4 when both families are there (fewer broken IPv6 routes in practice).
    Ok(addrs.iter().find(|a| a.is_ipv4()).copied().unwrap_or(addrs[0]))
}

/// GET with redirects followed by hand (each hop checked), `accept` as the Accept header.
pub async fn get(
    url: &Url,
    accept: Option<&str>,
    limits: &FetchLimits,
    cancel: &CancellationToken,
) -> Result<Fetched, FetchError> {
    toolbelt_core::tls::ready();
    let started = Instant::now();
    let mut current = url.clone();
    for _ in 0..=MAX_REDIRECTS {
        if !matches!(current.scheme(), "http" | "https") {
            return Err(FetchError::Other(format!("unsupported protocol in {current}")));
        }
        let addr = checked_address(&current, limits).await?;
        let remaining = limits
            .timeout
            .checked_sub(started.elapsed())
            .ok_or(FetchError::Timeout(limits.timeout.as_millis()))?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .resolve(bare_host(&current), addr)
            .timeout(remaining)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| FetchError::Other(e.to_string()))?;
        let mut req = client.get(current.clone());
        if let Some(a) = accept {
            req = req.header(reqwest::header::ACCEPT, a);
        }
        let response = tokio::select! {
            r = req.send() => r.map_err(|e| if e.is_timeout() { FetchError::Timeout(limits.timeout.as_millis()) } else { FetchError::Other(toolbelt_core::result::error_chain(&e)) })?,
            () = cancel.cancelled() => return Err(FetchError::Cancelled),
        };
        let status = response.status();
        if status.is_redirection()
            && let Some(loc) =
                response.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok())
        {
            current = current
                .join(loc)
                .map_err(|e| FetchError::Other(format!("bad redirect to {loc}: {e}")))?;
            continue;
        }
        if response.content_length().is_some_and(|n| n > limits.max_bytes) {
            return Err(FetchError::TooLarge(limits.max_bytes));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        loop {
            let next = tokio::select! {
                n = stream.next() => n,
                () = cancel.cancelled() => return Err(FetchError::Cancelled),
            };
            match next {
                None => break,
                Some(Ok(chunk)) => {
                    if body.len() as u64 + chunk.len() as u64 > limits.max_bytes {
                        return Err(FetchError::TooLarge(limits.max_bytes));
                    }
                    body.extend_from_slice(&chunk);
                }
                Some(Err(e)) if e.is_timeout() => {
                    return Err(FetchError::Timeout(limits.timeout.as_millis()));
                }
                Some(Err(e)) => {
                    return Err(FetchError::Other(toolbelt_core::result::error_chain(&e)));
                }
            }
        }
        return Ok(Fetched {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or("").to_string(),
            content_type,
            headers,
            body,
        });
    }
    Err(FetchError::Other(format!("more than {MAX_REDIRECTS} redirects from {url}")))
}

/// `https://github.com/u/r/blob/b/p` → `https://raw.githubusercontent.com/u/r/b/p`.
pub fn github_raw(url: &Url) -> Url {
    if url.host_str() != Some("github.com") {
        return url.clone();
    }
    let segs: Vec<&str> = url.path().trim_start_matches('/').split('/').collect();
    if segs.len() > 3 && segs[2] == "blob" {
        let path = format!("{}/{}/{}", segs[0], segs[1], segs[3..].join("/"));
        if let Ok(u) = Url::parse(&format!("https://raw.githubusercontent.com/{path}")) {
            return u;
        }
    }
    url.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "198.18.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "240.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn github_blob_urls_become_raw() {
        let u = Url::parse("https://github.com/u/r/blob/main/src/a.rs").unwrap();
        assert_eq!(github_raw(&u).as_str(), "https://raw.githubusercontent.com/u/r/main/src/a.rs");
        let other = Url::parse("https://github.com/u/r/tree/main").unwrap();
        assert_eq!(github_raw(&other), other);
    }
}
