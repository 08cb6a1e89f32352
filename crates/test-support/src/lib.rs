//! Dev-only helpers: a fake model server and a small web server for tests; the temporary
//! folder tree is core's ([`TempTree`], re-exported), the one way to build a test environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fake_model;
pub mod web_server;

pub use toolbelt_core::testing::TempTree;
