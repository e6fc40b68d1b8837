//! What a due request becomes, and the ways it leaves rave: an email
//! (`mail`), or a signed `review.requested` webhook for shops that send
//! their own mail (implemented where the webhooks are).

use std::future::Future;
use std::pin::Pin;

use crate::model::{Order, RequestKind};

/// A product as a request shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductLine {
    pub id: String,
    pub name: String,
    pub image_url: Option<String>,
}

/// Everything a channel needs to send one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestMessage {
    pub order: Order,
    pub kind: RequestKind,
    /// The products still to review, with their names.
    pub products: Vec<ProductLine>,
    pub review_url: String,
    pub unsubscribe_url: String,
}

/// Why a send failed: kept as the request's `last_error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SendError(pub String);

pub type SendFuture<'a> = Pin<Box<dyn Future<Output = Result<(), SendError>> + Send + 'a>>;

/// A way to send requests.
pub trait Channel: Send + Sync + std::fmt::Debug {
    /// Sends `message`; an error is retried later, with backoff.
    fn send<'a>(&'a self, message: &'a RequestMessage) -> SendFuture<'a>;
}

pub type LookupFuture<'a> = Pin<Box<dyn Future<Output = Option<ProductLine>> + Send + 'a>>;

/// Where product names and images come from (the comments domain's
/// product records); a product without a record shows its id.
pub trait Catalog: Send + Sync + std::fmt::Debug {
    fn product<'a>(&'a self, id: &'a str) -> LookupFuture<'a>;
}
