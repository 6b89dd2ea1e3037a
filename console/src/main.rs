//! memory-fabric-console: the operator's console, a server-rendered web page for the review
//! queue. It holds no power of its own: operators sign in with their PostgreSQL role, and every
//! query runs on a connection of that role (console/DESIGN.md).

mod admin;
mod app;
mod config;
mod db;
mod diff;
mod live;
mod memory;
mod metrics;
mod pages;
mod session;
mod views;

use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;

use crate::app::{App, Inner};
use crate::config::Parsed;

fn log(msg: &str) {
    eprintln!("memory-fabric-console: {msg}");
}

pub fn router(app: App) -> Router {
    Router::new()
        .route("/", get(pages::root))
        .route("/signin", get(pages::signin_page).post(pages::signin))
        .route("/signout", post(pages::signout))
        .route("/tenant", get(pages::tenant_page).post(pages::choose_tenant))
        .route("/queue", get(pages::queue))
        .route("/queue/rows", get(live::rows))
        .route("/queue/events", get(live::events))
        .route("/candidates/{id}", get(pages::candidate))
        .route("/candidates/{id}/{action}", post(pages::decide))
        .route("/memories/{id}", get(memory::memory))
        .route("/metrics", get(metrics::metrics))
        .route("/admin", get(admin::index))
        .route("/admin/consents", get(admin::consents))
        .route("/admin/consents/record", post(admin::record_consent))
        .route("/admin/consents/revoke", post(admin::revoke_consent))
        .route("/admin/erasure", get(admin::erasure).post(admin::erase))
        .route("/admin/policy", get(admin::policy))
        .route("/static/console.css", get(pages::css))
        .route("/static/console.js", get(pages::js))
        .route("/healthz", get(pages::healthz))
        .layer(axum::middleware::map_response(app::security_headers))
        .with_state(app)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let settings = match config::parse_args(&args, &|k| std::env::var(k).ok()) {
        Ok(Parsed::Run(s)) => *s,
        Ok(Parsed::Help) => {
            print!("{}", config::USAGE);
            return;
        }
        Ok(Parsed::Version) => {
            println!("memory-fabric-console {}", env!("CARGO_PKG_VERSION"));
            return;
        }
        Err(e) => {
            log(&e);
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the tokio runtime");
    if let Err(e) = rt.block_on(serve(settings)) {
        log(&e);
        std::process::exit(1);
    }
}

async fn serve(settings: config::Settings) -> Result<(), String> {
    let listen = settings.listen;
    let pg = db::Pg::new(&settings)?;
    let app = App(Arc::new(Inner { store: session::Store::new(settings.idle), pg, cfg: settings }));
    let sweeper = app.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            let n = sweeper.store.sweep();
            if n > 0 {
                log(&format!("signed out {n} idle session(s); {} open", sweeper.store.len()));
            }
        }
    });
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    log(&format!("serving on http://{}", listener.local_addr().map_err(|e| e.to_string())?));
    axum::serve(listener, router(app))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| format!("the server stopped: {e}"))
}
