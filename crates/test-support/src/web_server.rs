//! A small web server on loopback for the web tools' tests, on its own thread and runtime:
//! `/page.html`, `/plain.txt`, `/data.json`, `/image.png`, `/missing` (404), `/to-private`
//! (302 to 10.0.0.1), `/to-page` (302 to /page.html), `/huge` (an endless body, no length),
//! `/slow` (answers after 30 s), `/customsearch` (Custom Search JSON API results), and
//! `/p/NAME`: the pages given to [`WebServer::with_pages`], as HTML.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

pub struct WebServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `127.0.0.1:PORT`, for the allow-list of private hosts.
    pub host_port: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub const PAGE: &str = "<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Hello</h1><p>Some <b>bold</b> text and <a href=\"/next\">a link</a>.</p><script>var x = 1;</script></body></html>";

async fn search(uri: axum::http::Uri) -> Response {
    let q: HashMap<String, String> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let json_reply = |status: StatusCode, v: serde_json::Value| {
        (status, [(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
    };
    let start: usize = q.get("start").and_then(|s| s.parse().ok()).unwrap_or(1);
    let num: usize = q.get("num").and_then(|s| s.parse().ok()).unwrap_or(10);
    if q.get("key").map(String::as_str) != Some("test-key") {
        return json_reply(
            StatusCode::FORBIDDEN,
            json!({"error": {"code": 403, "message": "API key not valid"}}),
        );
    }
    // 25 results in all.
    let items: Vec<_> = (start..start + num)
        .filter(|i| *i <= 25)
        .map(|i| json!({"title": format!("Result {i}"), "link": format!("https://example.com/{i}"), "snippet": format!("Snippet {i}\nmore")}))
        .collect();
    json_reply(StatusCode::OK, json!({"items": items}))
}

impl WebServer {
    pub fn start() -> Self {
        Self::with_pages(HashMap::new())
    }

    /// [`WebServer::start`], also serving each of `pages` at `/p/NAME` as `text/html`.
    pub fn with_pages(pages: HashMap<String, Vec<u8>>) -> Self {
        let pages = std::sync::Arc::new(pages);
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new()
                    .route(
                        "/page.html",
                        get(|| async {
                            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE)
                        }),
                    )
                    .route(
                        "/plain.txt",
                        get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "just <text>\n") }),
                    )
                    .route(
                        "/data.json",
                        get(|| async {
                            ([(header::CONTENT_TYPE, "application/json")], "{\"a\": 1}")
                        }),
                    )
                    .route(
                        "/image.png",
                        get(|| async {
                            ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', b'N', b'G'])
                        }),
                    )
                    .route("/missing", get(|| async { (StatusCode::NOT_FOUND, "no such page") }))
                    .route(
                        "/to-private",
                        get(|| async {
                            (StatusCode::FOUND, [(header::LOCATION, "http://10.0.0.1/secret")])
                        }),
                    )
                    .route(
                        "/to-page",
                        get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/page.html")]) }),
                    )
                    .route(
                        "/huge",
                        get(|| async {
                            // Endless (think 10 GB): 1 MiB chunks, no Content-Length.
                            let chunk = axum::body::Bytes::from(vec![b'x'; 1 << 20]);
                            let stream = futures::stream::repeat_with(move || {
                                Ok::<_, std::io::Error>(chunk.clone())
                            });
                            ([(header::CONTENT_TYPE, "text/plain")], Body::from_stream(stream))
                        }),
                    )
                    .route(
                        "/slow",
                        get(|| async {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                            "late"
                        }),
                    )
                    .route("/customsearch", get(search))
                    .route(
                        "/p/{name}",
                        get(move |axum::extract::Path(name): axum::extract::Path<String>| async move {
                            match pages.get(&name) {
                                Some(page) => (
                                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                                    page.clone(),
                                )
                                    .into_response(),
                                None => StatusCode::NOT_FOUND.into_response(),
                            }
                        }),
                    );
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let addr = rx.recv().unwrap();
        Self { url: format!("http://{addr}"), host_port: addr.to_string(), stop: Some(stop) }
    }
}
