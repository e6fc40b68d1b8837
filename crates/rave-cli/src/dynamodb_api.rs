//! `rave dynamodb-api`: DynamoDB's JSON protocol over the embedded engine's
//! data directory, for the AWS CLI and the AWS SDKs; and the same API
//! beside `rave serve` (`--dynamodb-api`), over the engine it serves.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use rave_dynamodb_api::{Credentials, DynamoApi};
use rave_engine::Engine;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::shutdown::{self, Shutdown};

#[derive(Debug, Args)]
pub struct DynamodbApiArgs {
    /// Address to listen on (8000, as DynamoDB Local).
    #[arg(long, env = "RAVE_ADDR", default_value = "127.0.0.1:8000")]
    addr: SocketAddr,
    /// Directory of the embedded store.
    #[arg(long, env = "RAVE_DATA", default_value = "./rave-data")]
    data: PathBuf,
    /// Verify every request's Signature V4 against the access keys in this
    /// file: one `ACCESS_KEY_ID:SECRET` per line, `#` starts a comment.
    /// Without it, signatures are not verified.
    #[arg(long, env = "RAVE_DYNAMODB_CREDENTIALS", value_name = "FILE")]
    dynamodb_credentials: Option<PathBuf>,
    /// Serve on an address other machines can reach without
    /// --dynamodb-credentials: anyone who reaches it may read and write the
    /// whole store. Refused without this flag; warned about at every start.
    #[arg(long, env = "RAVE_DYNAMODB_API_INSECURE")]
    dynamodb_api_insecure: bool,
}

/// Refuses to serve the whole store, unauthenticated, beyond this machine.
///
/// The API bypasses every rule of the comments API (moderation, the admin
/// token): it reads and writes the table itself, as DynamoDB's own API
/// does. DynamoDB never answers an unsigned request, so on an address
/// another machine can reach, rave verifies signatures unless the operator
/// says, with `--dynamodb-api-insecure`, that this is what they mean.
/// `option` names the address's own option in the refusal.
pub fn check_exposure(
    addr: SocketAddr,
    credentials: Option<&Path>,
    insecure: bool,
    option: &str,
) -> anyhow::Result<()> {
    if addr.ip().is_loopback() || credentials.is_some() {
        return Ok(());
    }
    if !insecure {
        anyhow::bail!(
            "{option} {addr} would serve the whole store, read and write, to anyone who can reach it: \
             give --dynamodb-credentials FILE (the access keys whose Signature V4 every request must carry), \
             listen on a loopback address (127.0.0.1), or pass --dynamodb-api-insecure if that is what you mean"
        );
    }
    tracing::warn!(
        %addr,
        "--dynamodb-api-insecure: the DynamoDB API serves the whole store, read and write, \
         without verifying signatures, to anyone who can reach this address"
    );
    Ok(())
}

/// The API over `engine`, verifying signatures against the keys in
/// `credentials` when given.
pub fn api(engine: Engine, credentials: Option<&Path>) -> anyhow::Result<DynamoApi> {
    let api = DynamoApi::new(engine).context("cannot read the table metadata")?;
    let Some(path) = credentials else {
        return Ok(api);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {} (--dynamodb-credentials)", path.display()))?;
    let credentials = Credentials::parse(&text)
        .with_context(|| format!("{} (--dynamodb-credentials)", path.display()))?;
    Ok(api.with_credentials(credentials))
}

/// Serves until SIGTERM or Ctrl-C, then finishes the requests in flight.
pub async fn run(args: DynamodbApiArgs) -> anyhow::Result<()> {
    check_exposure(
        args.addr,
        args.dynamodb_credentials.as_deref(),
        args.dynamodb_api_insecure,
        "--addr",
    )?;
    let engine = Engine::open(&args.data).with_context(|| {
        format!(
            "cannot open the store in {} (is another rave using it?)",
            args.data.display()
        )
    })?;
    let api = Arc::new(api(engine, args.dynamodb_credentials.as_deref())?);
    let shutdown = Arc::new(Shutdown::new(shutdown::DEFAULT_TIMEOUT));
    let listener = TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, data = %args.data.display(), "rave's DynamoDB API is listening");
    // A plain line on stdout too, for scripts that start rave on port 0.
    println!("rave dynamodb-api listening on http://{addr}");
    let signalled = {
        let shutdown = Arc::clone(&shutdown);
        async move { shutdown.signalled().await }
    };
    rave_dynamodb_api::serve(listener, api, signalled).await?;
    tracing::info!("stopped");
    Ok(())
}

/// The DynamoDB API running beside `rave serve` until it is stopped.
pub struct Beside {
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Beside {
    /// Serves the API on `addr` over `engine`, the engine `rave serve`
    /// serves, so what one writes the other reads at once.
    pub async fn start(
        engine: Engine,
        addr: SocketAddr,
        credentials: Option<&Path>,
    ) -> anyhow::Result<Beside> {
        let api = Arc::new(api(engine, credentials)?);
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr} (--dynamodb-api)"))?;
        let addr = listener.local_addr()?;
        tracing::info!(%addr, "rave's DynamoDB API is listening beside the comments API");
        println!("rave dynamodb-api listening on http://{addr}");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(rave_dynamodb_api::serve(listener, api, async {
            let _ = stopped.await;
        }));
        Ok(Beside { stop, task })
    }

    /// Stops taking requests and finishes those in flight.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task
            .await
            .context("the DynamoDB API task failed")?
            .context("the DynamoDB API stopped with an error")
    }
}
