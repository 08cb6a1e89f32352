//! toolbelt-mcp integration tests: real rmcp clients against the server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bounds;
mod client;
mod requests;
mod server;
