//! The MCP side: lists the tools the role may use, and runs each call on the agent's connection.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::Mutex;

use crate::config::Settings;
use crate::db::{OpenError, Session, Target};
use crate::tools::{ToolError, ToolKind};

#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings,
    target: Target,
    /// The connection, None once it was found lost (the next call opens a new one).
    session: Mutex<Option<Session>>,
    /// The tools of the last connection, listed while there is none.
    tools: std::sync::Mutex<Vec<ToolKind>>,
}

impl Server {
    pub fn new(settings: Settings, target: Target, session: Session) -> Server {
        let tools = session.tools.clone();
        Server {
            inner: Arc::new(Inner { settings, target, session: Mutex::new(Some(session)), tools: std::sync::Mutex::new(tools) }),
        }
    }

    fn tools(&self) -> Vec<ToolKind> {
        self.inner.tools.lock().map(|t| t.clone()).unwrap_or_default()
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let unknown = || McpError::invalid_params(format!("unknown tool: {}", request.name), None);
        let kind = ToolKind::from_name(&request.name).ok_or_else(unknown)?;
        if !self.tools().contains(&kind) {
            return Err(unknown());
        }
        let s = &self.inner.settings;
        let call = match kind.parse(s, request.arguments.clone()) {
            Ok(c) => c,
            Err(e) => return Ok(e.into_result().into()),
        };

        let mut slot = self.inner.session.lock().await;
        if slot.as_ref().is_none_or(Session::is_closed) {
            // lost before this call sent anything: connect again now
            *slot = None;
            match Session::open(&self.inner.target, s).await {
                Ok(new) => {
                    crate::log(&format!("connected again as role {}", new.role));
                    let changed = {
                        let mut tools = self.inner.tools.lock().unwrap_or_else(|p| p.into_inner());
                        let changed = *tools != new.tools;
                        *tools = new.tools.clone();
                        changed
                    };
                    if changed {
                        let _ = context.peer.notify_tool_list_changed().await;
                    }
                    *slot = Some(new);
                }
                Err(OpenError::Connect(e)) => {
                    let e = ToolError::lost(format!("cannot connect to PostgreSQL: {}", self.inner.target.describe(&e)));
                    return Ok(e.into_result().into());
                }
                // the database changed since start-up (the extension dropped, the grant revoked):
                // nothing runs, and the next call connects and checks again
                Err(OpenError::Refused { sqlstate, message }) => {
                    let hint = "Nothing was run. The next call connects again and checks again.".to_string();
                    return Ok(ToolError::Connection { sqlstate, message, hint }.into_result().into());
                }
            }
        }
        let session = slot.as_mut().expect("connected above");
        if !session.tools.contains(&kind) {
            return Err(unknown());
        }
        let actor = s.actor.clone().unwrap_or_else(|| session.role.clone());
        let result = session.run(s, &actor, call).await;
        // the server said it is ending the session (57P01 terminated, 57P02 crash, 57P03
        // shutting down, class 08), or the socket closed: this call fails and the next one
        // connects again (never retried here: a remember may have been committed)
        let ending = matches!(&result, Err(ToolError::Database { sqlstate, .. })
                              if sqlstate.starts_with("57P") || sqlstate.starts_with("08"));
        if ending || session.is_closed() {
            crate::log("the connection was lost during a call; the next call connects again");
            *slot = None;
        }
        Ok(match result {
            Ok(out) => out.into_result().into(),
            Err(e) if slot.is_none() => e.into_lost().into_result().into(),
            Err(e) => e.into_result().into(),
        })
    }
}

const INSTRUCTIONS: &str = "\
Governed long-term memory (memory_fabric). `recall` before answering what may depend on earlier \
conversations; `remember` facts worth keeping, one self-contained sentence each, with evidence \
refs. Remembered facts are reviewed before anyone can recall them: some are promoted at once, \
others wait for a human (check with `review_status`). The tenant is fixed by the server.";

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info(Implementation::new("memory-fabric-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(match &self.inner.settings.intent {
                Some(i) => format!("{INSTRUCTIONS} So is the intent: {i} (leave intent_id out)."),
                None => INSTRUCTIONS.to_string(),
            })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools().into_iter().map(ToolKind::describe).collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        ToolKind::from_name(name).filter(|k| self.tools().contains(k)).map(ToolKind::describe)
    }
}
