//! memory-fabric-mcp: an MCP server over stdio whose tools call memory_fabric's public functions
//! as the agent's own PostgreSQL role. See `--help` and README.md, "MCP server".

mod config;
mod db;
mod server;
mod tools;

use std::process::ExitCode;

use rmcp::ServiceExt;

use config::Parsed;

/// Logs go to stderr: stdout is the protocol stream.
pub fn log(message: &str) {
    eprintln!("memory-fabric-mcp: {message}");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = |k: &str| std::env::var(k).ok();
    let settings = match config::parse_args(&args, &env) {
        Ok(Parsed::Help) => {
            print!("{}", config::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => {
            println!("memory-fabric-mcp {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Run(s)) => s,
        Err(m) => {
            log(&m);
            return ExitCode::from(2);
        }
    };
    let pg = match config::connection_config(settings.dsn.as_deref(), &env) {
        Ok(c) => c,
        Err(m) => {
            log(&m);
            return ExitCode::from(2);
        }
    };
    // the certificates and keys: read now, and a failure is a start-up error (status 1)
    let target = match db::Target::new(&pg) {
        Ok(t) => t,
        Err(m) => {
            log(&m);
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            log(&format!("cannot start the runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(settings, target)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            log(&m);
            ExitCode::FAILURE
        }
    }
}

async fn serve(settings: config::Settings, target: db::Target) -> Result<(), String> {
    let session = db::Session::open(&target, &settings).await.map_err(|e| e.describe(&target))?;
    let names: Vec<&str> = session.tools.iter().map(|k| k.name()).collect();
    let mut scope = format!("tenant {}", settings.tenant);
    if let Some(u) = &settings.user {
        scope.push_str(&format!("; user {u}"));
    }
    if let Some(i) = &settings.intent {
        let by = if session.intent_setting { ", also in memory_fabric.intent_id" } else { "" };
        scope.push_str(&format!("; intent {i} (pinned{by})"));
    }
    log(&format!(
        "connected to database {} as role {}; {scope}; tools: {}",
        session.database,
        session.role,
        if names.is_empty() { "none (the role may execute none of their functions)".to_string() } else { names.join(", ") }
    ));
    let service = server::Server::new(settings, target, session)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    let reason = service.waiting().await.map_err(|e| format!("the MCP session failed: {e}"))?;
    log(&format!("session ended ({reason:?})"));
    Ok(())
}
