//! `toolbelt mcp --fixture conformance`: the tools, resources and prompts that the official MCP
//! conformance suite (`@modelcontextprotocol/conformance`) calls, so that the suite can test
//! this server's protocol handling. It serves no workspace tools. Results are written as the
//! JSON the suite expects and parsed into rmcp's types.

// The conformance suite tests the logging and sampling features rmcp marks deprecated.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolbelt_core::sync::LockExt;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
const LEVELS: &[&str] =
    &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, McpError> {
    serde_json::from_value(v).map_err(|e| McpError::internal_error(format!("fixture: {e}"), None))
}

/// The conformance fixture's handler.
#[derive(Clone, Default)]
pub struct ConformanceServer {
    level: Arc<Mutex<Option<usize>>>,
    subscriptions: Arc<Mutex<Vec<String>>>,
}

impl ConformanceServer {
    async fn log(&self, peer: &Peer<RoleServer>, level: &str, message: &str) {
        let min = self.level.locked().unwrap_or(0);
        let rank = LEVELS.iter().position(|l| *l == level).unwrap_or(0);
        if rank < min {
            return;
        }
        if let Ok(p) = parse(json!({"level": level, "logger": "conformance", "data": message})) {
            let _ = peer.notify_logging_message(p).await;
        }
    }

    fn tools() -> Value {
        let none = json!({"type": "object", "properties": {}});
        let t = |name: &str, desc: &str, schema: &Value| json!({"name": name, "description": desc, "inputSchema": schema});
        json!({"tools": [
            t("test_simple_text", "Returns simple text", &none),
            t("test_image_content", "Returns an image", &none),
            t("test_audio_content", "Returns audio", &none),
            t("test_embedded_resource", "Returns an embedded resource", &none),
            t("test_multiple_content_types", "Returns several content types", &none),
            t("test_tool_with_logging", "Sends log messages while it runs", &none),
            t("test_error_handling", "Always fails", &none),
            t("test_tool_with_progress", "Reports progress", &none),
            t("test_sampling", "Asks the client's model", &json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})),
            t("test_elicitation", "Asks the user", &json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})),
            t("test_elicitation_sep1034_defaults", "Asks with default values", &none),
            t("test_elicitation_sep1330_enums", "Asks with enum schemas", &none),
            {
                "name": "json_schema_2020_12_tool",
                "description": "Tool with JSON Schema 2020-12 features",
                "inputSchema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                    "additionalProperties": false
                }
            }
        ]})
    }

    async fn call(
        &self,
        name: &str,
        args: &Value,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
        let peer = &ctx.peer;
        Ok(match name {
            "test_simple_text" => text("This is a simple text response for testing."),
            "test_image_content" => {
                json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
            }
            "test_audio_content" => {
                json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]})
            }
            "test_embedded_resource" => {
                json!({"content": [{"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}]})
            }
            "test_multiple_content_types" => json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
            ]}),
            "test_tool_with_logging" => {
                self.log(peer, "info", "Tool execution started").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(peer, "info", "Tool processing data").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(peer, "info", "Tool execution completed").await;
                text("Tool with logging executed successfully")
            }
            "test_error_handling" => {
                json!({"isError": true, "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}]})
            }
            "test_tool_with_progress" => {
                let token = ctx.meta.get_progress_token();
                for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if let Some(t) = &token {
                        let param = rmcp::model::ProgressNotificationParam::new(t.clone(), p)
                            .with_total(100.0);
                        let _ = peer.notify_progress(param).await;
                    }
                }
                text("Tool with progress executed successfully")
            }
            "test_sampling" => {
                let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or("");
                let params = parse(
                    json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100}),
                )?;
                #[allow(deprecated)]
                let r = peer
                    .create_message(params)
                    .await
                    .map_err(|e| McpError::internal_error(format!("sampling failed: {e}"), None))?;
                let v = serde_json::to_value(&r).unwrap_or(Value::Null);
                let answer =
                    v.pointer("/content/text").and_then(Value::as_str).unwrap_or("").to_string();
                text(&format!("LLM response: {answer}"))
            }
            "test_elicitation" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or("");
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}}, "required": ["username", "email"]});
                let r = self.elicit(peer, message, schema).await?;
                text(&format!("User response: <action: {}, content: {}>", r.0, r.1))
            }
            "test_elicitation_sep1034_defaults" => {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": true}}});
                let r = self
                    .elicit(peer, "Please review and update the form fields with defaults", schema)
                    .await?;
                text(&format!("Elicitation completed: action={}, content={}", r.0, r.1))
            }
            "test_elicitation_sep1330_enums" => {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}}});
                let r =
                    self.elicit(peer, "Please select options from the enum fields", schema).await?;
                text(&format!("Elicitation completed: action={}, content={}", r.0, r.1))
            }
            "json_schema_2020_12_tool" => text(&format!("Received: {args}")),
            other => return Err(McpError::invalid_params(format!("Unknown tool: {other}"), None)),
        })
    }

    /// Sends a form elicitation; returns the action and the content.
    async fn elicit(
        &self,
        peer: &Peer<RoleServer>,
        message: &str,
        schema: Value,
    ) -> Result<(String, Value), McpError> {
        let params = parse(json!({"mode": "form", "message": message, "requestedSchema": schema}))?;
        let r = peer
            .create_elicitation(params)
            .await
            .map_err(|e| McpError::internal_error(format!("elicitation failed: {e}"), None))?;
        let v = serde_json::to_value(&r).unwrap_or(Value::Null);
        let action = v.get("action").and_then(Value::as_str).unwrap_or("").to_string();
        Ok((action, v.get("content").cloned().unwrap_or(json!({}))))
    }
}

impl ServerHandler for ConformanceServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = rmcp::model::Implementation::from_build_env();
        info.name = "toolbelt-conformance-fixture".into();
        info.version = env!("CARGO_PKG_VERSION").into();
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_logging()
            .enable_completions()
            .build();
        ServerConfig::new(caps).with_server_info(info)
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        parse(Self::tools())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().map(Value::Object).unwrap_or(json!({}));
        let v = self.call(&request.name, &args, &context).await?;
        let r: CallToolResult = parse(v)?;
        Ok(r.into())
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        parse(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource that can be subscribed to", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        parse(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template-data", "description": "Data for an id", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.to_string();
        let contents = match uri.as_str() {
            "test://static-text" => {
                json!([{"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."}])
            }
            "test://static-binary" => json!([{"uri": uri, "mimeType": "image/png", "blob": PNG}]),
            "test://watched-resource" => {
                json!([{"uri": uri, "mimeType": "text/plain", "text": "Watched resource content."}])
            }
            u => match u.strip_prefix("test://template/").and_then(|r| r.strip_suffix("/data")) {
                Some(id) => {
                    let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
                    json!([{"uri": uri, "mimeType": "application/json", "text": text}])
                }
                None => {
                    return Err(McpError::resource_not_found(
                        format!("Resource not found: {uri}"),
                        None,
                    ));
                }
            },
        };
        let r: ReadResourceResult = parse(json!({ "contents": contents }))?;
        Ok(r.into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.locked().push(request.uri.to_string());
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.locked().retain(|u| u.as_str() != request.uri.as_ref() as &str);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        parse(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arg = |k: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(k))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        let user_text = |t: &str| json!({"role": "user", "content": {"type": "text", "text": t}});
        let messages = match request.name.as_ref() {
            "test_simple_prompt" => json!([user_text("This is a simple prompt for testing.")]),
            "test_prompt_with_arguments" => json!([user_text(&format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1"),
                arg("arg2")
            ))]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {"uri": arg("resourceUri"), "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                user_text("Please process the embedded resource above.")
            ]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                user_text("Please analyze the image above.")
            ]),
            other => {
                return Err(McpError::invalid_params(format!("Unknown prompt: {other}"), None));
            }
        };
        let r: GetPromptResult = parse(json!({ "messages": messages }))?;
        Ok(r.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let typed = serde_json::to_value(&request)
            .ok()
            .and_then(|v| v.pointer("/argument/value").and_then(Value::as_str).map(String::from))
            .unwrap_or_default();
        let values: Vec<&str> =
            ["paris", "park", "party"].into_iter().filter(|v| v.starts_with(&typed)).collect();
        parse(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let level = serde_json::to_value(&request)
            .ok()
            .and_then(|v| v.get("level").and_then(Value::as_str).map(String::from))
            .unwrap_or_default();
        *self.level.locked() = LEVELS.iter().position(|l| *l == level);
        Ok(())
    }
}
