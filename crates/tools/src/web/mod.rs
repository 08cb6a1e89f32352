//! Tools that reach the web: web_fetch (pages, through the model or directly) and
//! google_web_search; with what they share: the SSRF-safe fetcher and citation formatting.

pub mod address;
pub mod cite;
pub mod fetch;
pub mod google_web_search;
pub mod html;
pub mod web_fetch;
