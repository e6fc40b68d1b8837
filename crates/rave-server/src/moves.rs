//! Products moving between families: the worker that runs the moves' jobs
//! (each puts a moved product's comments in its new family's listing; see
//! rave-comments' `families::moves`), and `GET /v1/admin/moves`, their
//! progress.
//!
//! The worker runs beside the server: at start-up (so moves a crash
//! interrupted resume from their durable markers), after every product
//! record write, and every [`RESCAN`] (for moves another process left).

use std::sync::Arc;
use std::time::Duration;

use crate::json::Json;
use axum::extract::State;
use rave_comments::{Comments, MoveProgress};
use rave_store::SharedStore;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::callers::{Admin, Authorized};
use crate::error::ApiResult;
use crate::responses::{TokenRefused, Unavailable};

/// How often the worker looks for moves no write of this process told it of.
const RESCAN: Duration = Duration::from_secs(30);

/// Runs the moves' jobs until the task is dropped; a failed round is
/// logged and tried again at the next wake-up.
pub(crate) async fn run_worker(comments: Arc<Comments<SharedStore>>) {
    loop {
        match comments.run_pending_moves().await {
            Ok(0) => {}
            Ok(completed) => tracing::info!(completed, "product moves done"),
            Err(error) => {
                tracing::warn!(%error, "a product move's job stopped; it runs again later")
            }
        }
        let _ = tokio::time::timeout(RESCAN, comments.move_requested()).await;
    }
}

/// A product moving between families, and how far its job has gone.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MoveBody {
    #[schema(example = "tee-red")]
    product_id: String,
    /// Its group before the move; null: none.
    from: Option<String>,
    /// Its group after the move; null: none.
    to: Option<String>,
    /// When its record was written.
    #[schema(example = "2026-11-27T20:00:00.000Z")]
    since: String,
    /// The product's comments the job has been through.
    done: u64,
    /// The product's comments the job found; null until a job of this
    /// server has started on the move.
    total: Option<u64>,
}

/// The moves whose jobs are not done.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MovesBody {
    moves: Vec<MoveBody>,
}

impl From<MoveProgress> for MoveBody {
    fn from(progress: MoveProgress) -> MoveBody {
        MoveBody {
            product_id: progress.product_id.to_string(),
            from: progress.from.map(|group| group.to_string()),
            to: progress.to.map(|group| group.to_string()),
            since: progress.since.to_string(),
            done: progress.done,
            total: progress.total,
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/admin/moves",
    tag = "admin",
    summary = "Products moving between families, with their jobs' progress (scope admin)",
    description = "A product whose record names a new group moves its statistics at once and its comments in the group listings by a background job, which rewrites each comment of the product. Each move whose job has not ended is listed, oldest first, with how many of the product's comments the job has been through (`done`) of how many it found (`total`, null until a job of this server started on it). An empty list: every listing is exact.",
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "The pending moves", body = MovesBody),
        TokenRefused,
        Unavailable,
    )
)]
pub(crate) async fn list_moves(
    State(state): State<AppState>,
    _staff: Authorized<Admin>,
) -> ApiResult<Json<MovesBody>> {
    let moves = state.comments.pending_moves().await?;
    Ok(Json(MovesBody {
        moves: moves.into_iter().map(MoveBody::from).collect(),
    }))
}
