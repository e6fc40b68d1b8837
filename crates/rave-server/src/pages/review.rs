//! The pages a review request links to: the review form of an order
//! (`/review/{token}`: one form per product not reviewed yet, posted as a
//! plain HTML form, no script) and one-click unsubscribe
//! (`/unsubscribe/{token}`, RFC 8058: a POST unsubscribes, a GET shows the
//! button).
//!
//! The form takes photos too (`multipart/form-data`, `photo` file parts),
//! checked and stored as the API's posts are (`uploads`); an urlencoded
//! post without photos is still taken.
//!
//! The link is the proof of purchase: a comment posted through it is a
//! verified purchase of the order (the order verifies one comment per
//! product, as a shop's purchase proof does), and the product must be one
//! of the order's. A forged link answers 404, an expired one 410; nothing
//! is stored for either.

use std::fmt::Write as _;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_comments::{CommentsError, NewComment, OrderId};
use rave_requests::{Order, RequestsError};
use serde::Deserialize;
use utoipa::ToSchema;

use super::html::{STYLE, Text};
use crate::AppState;
use crate::api::PhotoFile;
use crate::error::{ApiError, ApiResult};
use crate::media::removal;
use crate::routes::Segment;
use crate::state::ReviewRequests;
use crate::uploads;

/// An HTML answer: the pages' style, a title and a body.
fn document(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{}</title><style>{STYLE}</style></head>\
         <body><main class=\"rave-reviews\"><h1>{}</h1>{body}</main></body></html>",
        Text(title),
        Text(title)
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response()
}

/// A page of a server that sends no review requests: its links lead
/// nowhere.
fn not_enabled() -> Response {
    document(
        StatusCode::NOT_FOUND,
        "Not found",
        "<p>This server sends no review requests.</p>",
    )
}

/// A link that does not hold: 410 once expired, 404 otherwise.
fn bad_link(error: RequestsError) -> ApiResult<Response> {
    match error {
        RequestsError::BadLink("it has expired") => Ok(document(
            StatusCode::GONE,
            "This link has expired",
            "<p>Review links work for 60 days.</p>",
        )),
        RequestsError::BadLink(_) => Ok(document(
            StatusCode::NOT_FOUND,
            "This link is not valid",
            "<p>Check that the whole link from the email was opened.</p>",
        )),
        other => Err(other.into()),
    }
}

/// The order a review link names with the products of it reviewed so far,
/// or the page that says why not.
async fn order_of(
    review_requests: &ReviewRequests,
    token: &str,
) -> ApiResult<Result<(Order, Vec<String>), Response>> {
    let now = review_requests.requests.now_ms();
    let order_id = match review_requests.links.open_review(token, now) {
        Ok(order_id) => order_id,
        Err(error) => return bad_link(error).map(Err),
    };
    Ok(
        match review_requests
            .requests
            .order_with_reviews(&order_id)
            .await?
        {
            Some(found) => Ok(found),
            None => Err(document(
                StatusCode::GONE,
                "This order is no longer here",
                "<p>It was cancelled or erased.</p>",
            )),
        },
    )
}

async fn forms(
    state: &AppState,
    order: &Order,
    reviewed: &[String],
    notice: &str,
) -> ApiResult<String> {
    let mut body = String::new();
    if !notice.is_empty() {
        let _ = write!(
            body,
            "<p role=\"status\"><strong>{}</strong></p>",
            Text(notice)
        );
    }
    let language = order.language();
    let mut open = 0;
    for product in &order.products {
        let overview = state.comments.product_overview(product).await?;
        if reviewed.contains(product) {
            let _ = write!(
                body,
                "<section><h2>{}</h2><p>Reviewed — thank you.</p></section>",
                Text(overview.name())
            );
            continue;
        }
        open += 1;
        let _ = write!(
            body,
            "<section><h2>{name}</h2><form method=\"post\" enctype=\"multipart/form-data\">\
             <input type=\"hidden\" name=\"product\" value=\"{product}\">\
             <input type=\"hidden\" name=\"language\" value=\"{language}\">\
             <p><label>Your rating <select name=\"rating\" required>\
             <option value=\"5\">★★★★★ 5</option><option value=\"4\">★★★★ 4</option>\
             <option value=\"3\">★★★ 3</option><option value=\"2\">★★ 2</option>\
             <option value=\"1\">★ 1</option></select></label></p>\
             <p><label>Title <input name=\"title\" maxlength=\"200\"></label></p>\
             <p><label>Your review <textarea name=\"body\" required maxlength=\"5000\" rows=\"5\"></textarea></label></p>\
             <p><label>Shown as <input name=\"author\" required maxlength=\"64\" value=\"{author}\"></label></p>\
             <p><label>Photos (up to {max_photos}, JPEG, PNG or WebP) \
             <input type=\"file\" name=\"photo\" accept=\"image/jpeg,image/png,image/webp\" multiple></label></p>\
             <p><button type=\"submit\">Post review</button></p></form></section>",
            name = Text(overview.name()),
            product = Text(product),
            author = Text(&order.name),
            max_photos = state.uploads.limits.max_photos(),
        );
    }
    if open == 0 {
        body.push_str("<p>Every product of this order is reviewed. Thank you!</p>");
    }
    Ok(body)
}

#[utoipa::path(
    get,
    path = "/review/{token}",
    tag = "pages",
    summary = "The review form a review request links to",
    description = "One form per product of the order not reviewed yet. A forged link answers 404, an expired one 410.",
    params(("token" = String, Path, description = "The signed token of the request's link")),
    responses(
        (status = 200, description = "The forms", body = String, content_type = "text/html"),
        (status = 404, description = "Not a valid link, or review requests are not enabled", body = String, content_type = "text/html"),
        (status = 410, description = "The link expired, or its order was cancelled", body = String, content_type = "text/html"),
    )
)]
pub(crate) async fn review_form(
    State(state): State<AppState>,
    Segment(token): Segment,
) -> ApiResult<Response> {
    let Some(review_requests) = state.review_requests.as_ref() else {
        return Ok(not_enabled());
    };
    let (order, reviewed) = match order_of(review_requests, &token).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let body = forms(&state, &order, &reviewed, "").await?;
    Ok(document(StatusCode::OK, "How was your order?", &body))
}

/// The review form's text fields.
const FORM_FIELDS: &[&str] = &["product", "language", "rating", "title", "body", "author"];

/// The review form posted with photos, as `multipart/form-data`.
#[derive(ToSchema)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct ReviewUploadForm {
    product: String,
    language: String,
    rating: i64,
    title: Option<String>,
    body: String,
    author: String,
    /// As the API's `photo` parts: the same limits and checks.
    #[schema(max_items = 10)]
    photo: Vec<PhotoFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewForm {
    product: String,
    language: String,
    rating: i64,
    #[serde(default)]
    title: String,
    body: String,
    author: String,
}

#[utoipa::path(
    post,
    path = "/review/{token}",
    tag = "pages",
    summary = "Post a review through a review request's link",
    description = "An HTML form post (multipart/form-data: product, language, rating, title, body, author, and `photo` files checked as the API's uploads are; or application/x-www-form-urlencoded without photos). The comment is a verified purchase of the link's order, collected after fulfilment; one per product of the order.",
    params(("token" = String, Path, description = "The signed token of the request's link")),
    request_body(
        content(
            (ReviewUploadForm = "multipart/form-data"),
            ("application/x-www-form-urlencoded"),
        ),
    ),
    responses(
        (status = 201, description = "Posted: the forms again, with thanks", body = String, content_type = "text/html"),
        (status = 400, description = "A field is missing or wrong, the product is not in the order, or a photo is refused (named: `photo[2]`)", body = String, content_type = "text/html"),
        (status = 404, description = "Not a valid link", body = String, content_type = "text/html"),
        (status = 409, description = "This product of the order is already reviewed", body = String, content_type = "text/html"),
        (status = 410, description = "The link expired, or its order was cancelled", body = String, content_type = "text/html"),
        (status = 413, description = "A photo or the whole post is too large", body = String, content_type = "text/html"),
    )
)]
pub(crate) async fn post_review(
    State(state): State<AppState>,
    Segment(token): Segment,
    request: Request,
) -> ApiResult<Response> {
    let Some(review_requests) = state.review_requests.as_ref() else {
        return Ok(not_enabled());
    };
    let (order, mut reviewed) = match order_of(review_requests, &token).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let refused = |status, message: String| {
        document(
            status,
            "Your review was not posted",
            &format!(
                "<p>{}</p><p><a href=\"\">Back to the form</a></p>",
                Text(&message)
            ),
        )
    };
    let refused_by = |error: ApiError| refused(error.status, error.detail);
    let (form, photos) = if uploads::is_multipart(request.headers()) {
        let posted =
            match uploads::read_form(&state.uploads, state.media.as_ref(), request, FORM_FIELDS)
                .await
            {
                Ok(posted) => posted,
                Err(error) => return Ok(refused_by(error)),
            };
        // The urlencoded form's decoder reads the text parts, so both
        // encodings take the same fields with the same types.
        let fields = serde_urlencoded::to_string(posted.fields()).unwrap_or_default();
        (
            serde_urlencoded::from_str::<ReviewForm>(&fields),
            posted.photos,
        )
    } else {
        let bytes = Bytes::from_request(request, &state)
            .await
            .map_err(|rejection| ApiError::new(rejection.status(), rejection.body_text()))?;
        (
            serde_urlencoded::from_bytes::<ReviewForm>(&bytes),
            Vec::new(),
        )
    };
    let form = match form {
        Ok(form) => form,
        Err(e) => return Ok(refused(StatusCode::BAD_REQUEST, format!("form: {e}"))),
    };
    if !order.products.contains(&form.product) {
        return Ok(refused(
            StatusCode::BAD_REQUEST,
            "product: is not in this order".into(),
        ));
    }
    let mut new = NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: form.author.clone(),
        language: form.language,
        rating: form.rating,
        title: Some(form.title).filter(|t| !t.trim().is_empty()),
        body: form.body,
        created_at: None,
    };
    let order_id = OrderId::parse(&order.id)?;
    let photos = if photos.is_empty() {
        Vec::new()
    } else {
        if let Err(CommentsError::Invalid { field, message }) = new.check() {
            return Ok(refused(
                StatusCode::BAD_REQUEST,
                format!("{field}: {message}"),
            ));
        }
        match uploads::process_photos(&state.uploads, photos).await {
            Ok(photos) => photos,
            Err(error) if error.status.is_client_error() => return Ok(refused_by(error)),
            Err(error) => return Err(error),
        }
    };
    let created = uploads::store_photos_then_create(
        state.media.as_ref(),
        &state.photo_locks,
        &photos,
        async |media| {
            new.media = media;
            state
                .comments
                .create_requested(&form.product, new, &order_id)
                .await
        },
    )
    .await?;
    if created.is_err() {
        removal::delete_refused_uploads(&state, &photos).await;
    }
    let created = match created {
        Ok(created) => created,
        Err(CommentsError::Conflict(_)) => {
            return Ok(refused(
                StatusCode::CONFLICT,
                "this product of your order is already reviewed".into(),
            ));
        }
        Err(CommentsError::Invalid { field, message }) => {
            return Ok(refused(
                StatusCode::BAD_REQUEST,
                format!("{field}: {message}"),
            ));
        }
        Err(other) => return Err(ApiError::from(other)),
    };
    review_requests
        .requests
        .record_review(&order.id, &form.product, &form.author, &created.comment.id)
        .await?;
    reviewed.push(form.product);
    let body = forms(
        &state,
        &order,
        &reviewed,
        "Thank you: your review is posted.",
    )
    .await?;
    Ok(document(StatusCode::CREATED, "How was your order?", &body))
}

#[utoipa::path(
    get,
    path = "/unsubscribe/{token}",
    tag = "pages",
    summary = "The unsubscribe page a review request links to",
    params(("token" = String, Path, description = "The signed token of the request's link")),
    responses(
        (status = 200, description = "A button that unsubscribes", body = String, content_type = "text/html"),
        (status = 404, description = "Not a valid link", body = String, content_type = "text/html"),
    )
)]
pub(crate) async fn unsubscribe_form(
    State(state): State<AppState>,
    Segment(token): Segment,
) -> ApiResult<Response> {
    let Some(review_requests) = state.review_requests.as_ref() else {
        return Ok(not_enabled());
    };
    if let Err(error) = review_requests.links.open_unsubscribe(&token) {
        return bad_link(error);
    }
    Ok(document(
        StatusCode::OK,
        "No more requests for reviews?",
        "<form method=\"post\"><input type=\"hidden\" name=\"List-Unsubscribe\" value=\"One-Click\">\
         <button type=\"submit\">Unsubscribe</button></form>",
    ))
}

#[utoipa::path(
    post,
    path = "/unsubscribe/{token}",
    tag = "pages",
    summary = "Unsubscribe from review requests (RFC 8058 one-click)",
    description = "Mail clients POST `List-Unsubscribe=One-Click` here; from then on the address gets no request from any order.",
    params(("token" = String, Path, description = "The signed token of the request's link")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Unsubscribed", body = String, content_type = "text/html"),
        (status = 404, description = "Not a valid link", body = String, content_type = "text/html"),
    )
)]
pub(crate) async fn unsubscribe(
    State(state): State<AppState>,
    Segment(token): Segment,
) -> ApiResult<Response> {
    let Some(review_requests) = state.review_requests.as_ref() else {
        return Ok(not_enabled());
    };
    let order_id = match review_requests.links.open_unsubscribe(&token) {
        Ok(order_id) => order_id,
        Err(error) => return bad_link(error),
    };
    review_requests.requests.unsubscribe(&order_id).await?;
    Ok(document(
        StatusCode::OK,
        "You are unsubscribed",
        "<p>You will get no more requests for reviews.</p>",
    ))
}
