//! The webhooks consumer of the change stream: turns each change into
//! deliveries, one per event and subscribed endpoint, written in the same
//! commit that moves the consumer's stream position.
//!
//! It never speaks HTTP: writing deliveries is as fast as the store, so a
//! slow or dead endpoint holds back only its own queue (see `sender`), never
//! the stream. A crash before the commit writes nothing and the batch is
//! read again; a batch read twice fails the position's compare-and-set and
//! writes nothing: every event becomes exactly one delivery per endpoint.
//!
//! With no endpoint registered nothing is delivered, so it passes over the
//! stream by the records' keys alone (`ChangeFeed::next_wanted` wanting
//! nothing: the engine decodes no image), 5,000 records a commit. It reads
//! the endpoints once per batch, after the batch, so one registered during
//! the read gets its events; a batch passed over by its keys when an
//! endpoint has appeared is read again with its images. The binary
//! registers the consumer at the stream's end while no endpoint exists
//! (nothing committed before an endpoint is delivered to it), so a first
//! start on a loaded store reads nothing.

use std::time::Duration;

use rave_comments::{Timestamp, comment_change};
use rave_store::{
    ChangeBatch, ChangeFeed, ChangeRecord, KeyFilter, StoreError, TransactWriteAction,
};
use serde::Serialize;

use crate::delivery::{Delivery, DeliveryStatus};
use crate::endpoint::Endpoint;
use crate::error::{Result, WebhookError};
use crate::events::{Event, events_of};
use crate::photos::{PhotoLinks, payload_media};
use crate::service::{Webhooks, now_ms};
use crate::table::deliveries;

/// The consumer's name on the change stream.
pub const CONSUMER: &str = "webhooks";

/// Most records one read asks for while endpoints are registered.
const MAX_RECORDS: usize = 500;
/// Most records one read passes over while no endpoint is registered: only
/// their keys are read (a first start on a store with a long stream passes
/// it quickly, without decoding an image).
const MAX_PASSED_RECORDS: usize = 5_000;

/// The body every receiver gets: the Standard Webhooks payload shape.
#[derive(Serialize)]
struct Payload<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    timestamp: Timestamp,
    /// The comment as its JSON shows it, with `media` always there and in
    /// the API's shape (URLs included when the binary gave photo links).
    data: serde_json::Value,
}

fn body(event: &Event, committed_ms: u64, photo_links: Option<&dyn PhotoLinks>) -> Result<String> {
    let unserializable =
        |e: serde_json::Error| WebhookError::Internal(format!("a payload does not serialize: {e}"));
    let millis = i64::try_from(committed_ms).unwrap_or(i64::MAX);
    let timestamp = Timestamp::from_millis(millis)
        .map_err(|e| WebhookError::Internal(format!("a change's commit time: {e}")))?;
    let mut data = serde_json::to_value(&event.comment).map_err(unserializable)?;
    if let Some(fields) = data.as_object_mut() {
        let media = payload_media(&event.comment.media, photo_links);
        fields.insert(
            "media".to_owned(),
            serde_json::to_value(media).map_err(unserializable)?,
        );
    }
    serde_json::to_string(&Payload {
        kind: event.kind.as_str(),
        timestamp,
        data,
    })
    .map_err(unserializable)
}

impl<S: rave_store::Store> Webhooks<S> {
    fn deliveries_of(
        &self,
        record: &ChangeRecord,
        endpoints: &[Endpoint],
    ) -> Result<Vec<Delivery>> {
        let Some(change) = comment_change(record)? else {
            return Ok(Vec::new());
        };
        let now = now_ms();
        let mut made = Vec::new();
        for event in events_of(change) {
            let body = body(
                &event,
                record.commit_time_ms,
                self.config().photo_links.as_deref(),
            )?;
            for endpoint in endpoints.iter().filter(|e| e.wants(event.kind)) {
                made.push(Delivery {
                    endpoint_id: endpoint.id.clone(),
                    id: self.next_id()?,
                    event: event.kind,
                    body: body.clone(),
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    last_error: None,
                    created_at_ms: now,
                    next_attempt_at_ms: now,
                    give_up_at_ms: now.saturating_add(self.config().retry.retry_for_ms()),
                    finished_at_ms: None,
                });
            }
        }
        Ok(made)
    }

    /// Reads one batch (waiting up to `wait`), writes its deliveries and
    /// moves past it. Returns how many deliveries it wrote.
    ///
    /// `known` is what the previous call found the endpoints to be (empty
    /// at first); the endpoints are read once per batch, after it is read,
    /// and `known` is updated.
    pub async fn fan_out_once<F: ChangeFeed>(
        &self,
        feed: &F,
        wait: Duration,
        known: &mut Vec<Endpoint>,
    ) -> Result<usize> {
        // With no endpoint nothing is delivered: the records are passed over
        // by their keys alone, many a commit.
        let idle = known.is_empty();
        let (max_records, wanted): (usize, KeyFilter) = match idle {
            true => (MAX_PASSED_RECORDS, |_| false),
            false => (MAX_RECORDS, |_| true),
        };
        let Some(mut batch) = feed.next_wanted(max_records, wait, wanted).await? else {
            return Ok(0);
        };
        // Read after the batch, so that an endpoint registered while it was
        // read (the read may wait) gets its events.
        *known = self.endpoints().await?;
        let endpoints = &*known;
        if idle && !endpoints.is_empty() {
            // The batch was read by its keys alone: read it again with its
            // images, so that the new endpoint gets its events.
            return Ok(0);
        }
        let mut effects = Vec::new();
        let mut kept = 0;
        for record in batch.records() {
            let made = self.deliveries_of(record, endpoints)?;
            // A commit carries whole changes only; the rest come next time.
            if kept > 0 && effects.len() + made.len() > feed.max_effects() {
                break;
            }
            effects.extend(made.iter().map(|d| TransactWriteAction::Put {
                table: self.table().to_owned(),
                item: deliveries::encode(d),
                condition: Some(deliveries::not_stored()),
            }));
            kept += 1;
        }
        batch.truncate(kept);
        let written = effects.len();
        match feed.commit(batch, effects).await {
            Ok(()) => Ok(written),
            // Another reader moved the position first: read again from there.
            Err(StoreError::ConditionalCheckFailed) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use rave_comments::{
        Comment, Language, Photo, PhotoId, PhotoStatus, ProductId, Rating, Status,
    };
    use serde_json::{Value, json};

    use super::*;
    use crate::events::EventType;
    use crate::photos::PhotoUrls;

    /// Photos under one fixed address, as the binary's links would name
    /// them.
    #[derive(Debug)]
    struct Cdn;

    impl PhotoLinks for Cdn {
        fn urls(&self, photo: &PhotoId) -> PhotoUrls {
            let at = |name: &str| format!("https://cdn.example/{photo}/{name}");
            PhotoUrls {
                url: at("display.webp"),
                thumbnail_url: at("thumb.webp"),
                fallback_url: at("display.jpg"),
                thumbnail_fallback_url: at("thumb.jpg"),
            }
        }
    }

    fn event(media: Vec<Photo>) -> Event {
        Event {
            kind: EventType::Created,
            comment: Comment {
                id: "c1".into(),
                product_id: ProductId::parse("p1").unwrap(),
                author: "ann".into(),
                language: Language::parse("en").unwrap(),
                rating: Rating::new(4).unwrap(),
                title: "t".into(),
                body: "b".into(),
                created_at: Timestamp::from_millis(1_700_000_000_000).unwrap(),
                status: Status::Pending,
                held_by: None,
                reply: None,
                verified_purchase: false,
                votes: Default::default(),
                source: None,
                image_urls: Vec::new(),
                media,
                incentivized: false,
                attributes: Default::default(),
                reports: Default::default(),
                queued_at: None,
                group: None,
            },
        }
    }

    fn media_of(body: &str) -> Value {
        serde_json::from_str::<Value>(body).unwrap()["data"]["media"].clone()
    }

    #[test]
    fn media_is_always_there_with_urls_only_when_links_are_given() {
        let id = PhotoId::parse(&"c".repeat(64)).unwrap();
        let photo = Photo {
            id: id.clone(),
            width: 1200,
            height: 900,
            status: PhotoStatus::Pending,
        };
        let with_photo = event(vec![photo]);
        assert_eq!(
            media_of(&body(&with_photo, 1, None).unwrap()),
            json!([{"id": id, "width": 1200, "height": 900, "status": "pending"}])
        );
        assert_eq!(
            media_of(&body(&with_photo, 1, Some(&Cdn)).unwrap()),
            json!([{
                "id": id,
                "url": format!("https://cdn.example/{id}/display.webp"),
                "thumbnail_url": format!("https://cdn.example/{id}/thumb.webp"),
                "fallback_url": format!("https://cdn.example/{id}/display.jpg"),
                "thumbnail_fallback_url": format!("https://cdn.example/{id}/thumb.jpg"),
                "width": 1200,
                "height": 900,
                "status": "pending",
            }])
        );
        assert_eq!(
            media_of(&body(&event(Vec::new()), 1, Some(&Cdn)).unwrap()),
            json!([])
        );
    }
}
