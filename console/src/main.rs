//! memory-fabric-console: the operator's console, a server-rendered web page for the review
//! queue. It holds no power of its own: operators sign in with their PostgreSQL role, and every
//! query runs on a connection of that role (console/DESIGN.md).

mod admin;
mod app;
mod config;
mod db;
mod diff;
mod guard;
mod limits;
mod live;
mod memory;
mod metrics;
mod pages;
mod serve;
mod session;
mod views;

use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;

use crate::app::{App, Inner};
use crate::config::Parsed;

pub(crate) fn log(msg: &str) {
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

async fn serve(mut settings: config::Settings) -> Result<(), String> {
    let listen = settings.listen;
    let asked = settings.limits;
    settings.limits = serve::fit(asked, serve::open_files_limit());
    if settings.limits != asked {
        log(&format!(
            "the open-files limit (ulimit -n) leaves room for {} connections: serving at most {} ({} per address, {} live-queue streams)",
            settings.limits.connections, settings.limits.connections, settings.limits.connections_per_ip, settings.limits.streams
        ));
    }
    let pg = db::Pg::new(&settings)?;
    let app = App(Arc::new(Inner {
        store: session::Store::new(settings.idle, settings.session_max_age),
        streams: limits::Gate::new(settings.limits.streams),
        pg,
        cfg: settings,
    }));
    let sweeper = app.clone();
    tokio::spawn(async move {
        // every minute, or as often as the password is to be checked again when that is sooner
        let mut tick = tokio::time::interval(SWEEP_EVERY.min(sweeper.cfg.reauth));
        loop {
            tick.tick().await;
            let n = sweeper.store.sweep();
            let ended = sweep_roles(&sweeper).await;
            if n + ended > 0 {
                log(&format!("signed out {n} idle or old session(s), {ended} the database no longer lets in (password, LOGIN, VALID UNTIL) or may not use the console; {} open", sweeper.store.len()));
            }
        }
    });
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let l = &app.cfg.limits;
    log(&format!(
        "serving on http://{} for host names {}; at most {} connections ({} per address), {} database connections ({} per role)",
        listener.local_addr().map_err(|e| e.to_string())?,
        app.cfg.hosts.describe(),
        l.connections,
        l.connections_per_ip,
        l.db_connections,
        l.db_connections_per_role
    ));
    let routes = router(app.clone());
    serve::run(listener, app, routes, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}

/// How often idle sessions are swept and every session's role checked.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Checks every session that is not busy (App::check: its role, and its password when last
/// checked more than --reauth-seconds ago), so that NOLOGIN, VALID UNTIL, a dropped role
/// or a changed password end an idle session too and close its connections. Returns how many
/// ended.
async fn sweep_roles(app: &App) -> usize {
    let mut ended = 0;
    for s in app.store.all() {
        // a session in the middle of a request is checked by that request
        let Ok(mut g) = s.conn.try_lock() else { continue };
        if g.as_ref().is_none_or(|c| c.is_closed()) {
            continue;
        }
        let checked = tokio::time::timeout(Duration::from_secs(10), app.check(&s, &mut g, false)).await;
        if let Ok(Err(app::AppError::SignedOut(_))) = checked {
            ended += 1;
        }
    }
    ended
}
