//! HTTPS: rustls with ring as its crypto provider, installed once for the process. Every
//! place that builds an HTTP client calls [`ready`] first (reqwest and rmcp are built without
//! a provider of their own, which keeps aws-lc out of the binary: issue 37).

/// Makes ring the process's crypto provider unless one is already installed. Cheap after the
/// first call.
pub fn ready() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err only when another thread installed one first: that one serves.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}
