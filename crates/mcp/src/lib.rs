//! toolbelt-mcp: the Model Context Protocol, both ways, with the official SDK (`rmcp`).
//!
//! - [`client`]: tools of configured MCP servers join the registry
//! - [`server`]: `toolbelt mcp` — serves a registry over stdio or Streamable HTTP; every call goes
//!   through the scheduler (policy, hooks, timeouts, truncation); "ask" becomes an elicitation
//!   when the client supports it.

pub mod client;
pub mod server;
