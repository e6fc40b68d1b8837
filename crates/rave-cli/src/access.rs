//! Scoped tokens and the audit trail in the binary: the access table that
//! `serve` checks tokens against and records staff actions in, and the
//! `rave tokens` command that creates, lists and revokes tokens on the
//! embedded store (with the server stopped, like every command that opens
//! it; while it serves, use `/v1/admin/tokens`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use rave_access::{Access, AccessConfig, Scope, Scopes, Target};
use rave_engine::Engine;
use rave_store::SharedStore;

/// The name the audit trail gives what the CLI does.
const CLI_ACTOR: &str = "cli";

#[derive(Debug, Clone, Args)]
pub struct AuditArgs {
    /// How long audit entries are kept, in days.
    #[arg(long, env = "RAVE_AUDIT_RETENTION_DAYS", default_value_t = 365,
          value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub audit_retention_days: u32,
}

impl AuditArgs {
    /// The access table of `table` on `store`, created if missing.
    pub async fn open(
        &self,
        store: SharedStore,
        table: &str,
    ) -> anyhow::Result<Arc<Access<SharedStore>>> {
        let access = Access::new(
            store,
            AccessConfig {
                comments_table: table.to_owned(),
                audit_retention: Duration::from_secs(
                    u64::from(self.audit_retention_days) * 24 * 60 * 60,
                ),
            },
        );
        access
            .ensure_table()
            .await
            .context("cannot create the access table")?;
        Ok(Arc::new(access))
    }
}

#[derive(Debug, Args)]
pub struct TokensArgs {
    /// Directory of the embedded store.
    #[arg(long, env = "RAVE_DATA", default_value = "./rave-data")]
    data: PathBuf,
    /// Table name.
    #[arg(long, env = "RAVE_TABLE", default_value = "rave")]
    table: String,
    #[command(flatten)]
    audit: AuditArgs,
    #[command(subcommand)]
    command: TokensCommand,
}

#[derive(Debug, Subcommand)]
enum TokensCommand {
    /// Create a token and print it (shown only now: rave keeps its digest).
    Create {
        /// Who or what holds it; the audit trail records this name.
        #[arg(long)]
        name: String,
        /// A scope it holds (repeat, or separate with commas): moderate,
        /// reply, erase, import, feed, webhooks, admin.
        #[arg(long = "scope", required = true, value_delimiter = ',')]
        scopes: Vec<Scope>,
    },
    /// List the tokens (without their secrets).
    List,
    /// Revoke a token by its id: it stops working at once.
    Revoke { id: String },
}

pub async fn run(args: TokensArgs) -> anyhow::Result<()> {
    let engine = Engine::open(&args.data).with_context(|| {
        format!(
            "cannot open the store in {} (is a rave server using it? then use /v1/admin/tokens)",
            args.data.display()
        )
    })?;
    let access = args
        .audit
        .open(SharedStore::new(engine), &args.table)
        .await?;
    let cli = rave_access::Actor {
        name: CLI_ACTOR.into(),
        token_id: None,
    };
    match args.command {
        TokensCommand::Create { name, scopes } => {
            let issued = access
                .create_token(&name, Scopes::new(scopes), CLI_ACTOR)
                .await?;
            let scopes = scope_list(&issued.record.scopes);
            access
                .record(rave_access::NewEntry {
                    actor: cli,
                    action: "token.create".into(),
                    target: Target::new("token", &issued.record.id),
                    client: None,
                    detail: Some(format!("name {:?}, scopes {scopes}", issued.record.name)),
                })
                .await?;
            eprintln!(
                "created token {} ({:?}, scopes {scopes}); it is shown only now:",
                issued.record.id, issued.record.name
            );
            println!("{}", issued.token.expose());
        }
        TokensCommand::List => {
            for token in access.tokens().await? {
                println!(
                    "{}\t{}\t{}\tcreated by {}",
                    token.id,
                    token.name,
                    scope_list(&token.scopes),
                    token.created_by
                );
            }
        }
        TokensCommand::Revoke { id } => {
            let revoked = access.revoke_token(&id).await?;
            access
                .record(rave_access::NewEntry {
                    actor: cli,
                    action: "token.revoke".into(),
                    target: Target::new("token", &revoked.id),
                    client: None,
                    detail: Some(format!("name {:?}", revoked.name)),
                })
                .await?;
            eprintln!("revoked token {} ({:?})", revoked.id, revoked.name);
        }
    }
    Ok(())
}

fn scope_list(scopes: &Scopes) -> String {
    scopes
        .iter()
        .map(Scope::as_str)
        .collect::<Vec<_>>()
        .join(",")
}
