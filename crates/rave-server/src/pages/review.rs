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
//! **Sub-ratings and fit.** Each product's form asks what the product asks
//! (`ProductOverview::asked`: its own declaration, else its group's), one
//! optional select per attribute in a fieldset, named as the API's
//! problems name the answer: `attributes.quality`. Both encodings take
//! them by that name; an empty value answers nothing, a whole number is a
//! rating, other text a choice (`AttributeInput::from_text`, as a CSV
//! import reads a cell). The answers go to the comment's creation, which
//! checks them as it checks the API's: a bad one is the page's 400 naming
//! the field (`attributes.fit: must be one of ...`), and nothing is
//! stored. A multipart post takes the answer parts the order's products
//! ask for (any other part is refused before it is read, naming it).
//!
//! The link is the proof of purchase: a comment posted through it is a
//! verified purchase of the order (the order verifies one comment per
//! product, as a shop's purchase proof does), and the product must be one
//! of the order's. A forged link answers 404, an expired one 410; nothing
//! is stored for either.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_comments::{AttributeInput, CommentsError, NewComment, OrderId, Rating};
use rave_requests::{Order, RequestsError};
use serde::Deserialize;
use utoipa::ToSchema;

use super::attributes::{ANSWER_PREFIX, questions};
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
             <p><label>Your rating <select name=\"rating\" required>{ratings}</select></label></p>\
             {questions}<p><label>Title <input name=\"title\" maxlength=\"200\"></label></p>\
             <p><label>Your review <textarea name=\"body\" required maxlength=\"5000\" rows=\"5\"></textarea></label></p>\
             <p><label>Shown as <input name=\"author\" required maxlength=\"64\" value=\"{author}\"></label></p>\
             <p><label>Photos (up to {max_photos}, JPEG, PNG or WebP) \
             <input type=\"file\" name=\"photo\" accept=\"image/jpeg,image/png,image/webp\" multiple></label></p>\
             <p><button type=\"submit\">Post review</button></p></form></section>",
            name = Text(overview.name()),
            product = Text(product),
            author = Text(&order.name),
            max_photos = state.uploads.limits.max_photos(),
            ratings = {
                let mut options = String::new();
                rating_options(&mut options);
                options
            },
            questions = {
                let mut asked = String::new();
                questions(&overview.asked, rating_options, &mut asked);
                asked
            },
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

/// A rating's options, 5 first: the stars and the number.
fn rating_options(out: &mut String) {
    for rating in Rating::ALL.into_iter().rev() {
        let stars = "★".repeat(usize::from(rating.get()));
        let _ = write!(out, "<option value=\"{rating}\">{stars} {rating}</option>");
    }
}

/// The review form's text fields (besides the answers).
const FORM_FIELDS: &[&str] = &["product", "language", "rating", "title", "body", "author"];

/// The text fields a multipart post of `order`'s forms may carry: the
/// form's, and an answer field for each attribute one of its products asks.
async fn posted_fields(state: &AppState, order: &Order) -> ApiResult<Vec<String>> {
    let mut fields: Vec<String> = FORM_FIELDS.iter().map(|&f| f.to_owned()).collect();
    for product in &order.products {
        for declaration in state.comments.product_overview(product).await?.asked.iter() {
            let field = format!("{ANSWER_PREFIX}{}", declaration.name);
            if !fields.contains(&field) {
                fields.push(field);
            }
        }
    }
    Ok(fields)
}

/// A form's fields as posted: names and values, in the body's order.
type FormFields = Vec<(String, String)>;

/// The answers among a form's fields (`attributes.<name>`; an empty one
/// answers nothing), and its other fields; an answer given twice is
/// refused, naming it.
fn split_answers(
    fields: FormFields,
) -> Result<(BTreeMap<String, AttributeInput>, FormFields), String> {
    let mut answers = BTreeMap::new();
    let mut rest = Vec::new();
    for (name, value) in fields {
        let Some(attribute) = name.strip_prefix(ANSWER_PREFIX) else {
            rest.push((name, value));
            continue;
        };
        if value.trim().is_empty() {
            continue;
        }
        if answers
            .insert(attribute.to_owned(), AttributeInput::from_text(&value))
            .is_some()
        {
            return Err(format!("{name}: is given twice"));
        }
    }
    Ok((answers, rest))
}

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
    /// Answers to the attributes the product asks (its
    /// `effective_attributes`), each optional, as fields named
    /// `attributes.<name>`: `attributes.quality=4` (a rating, 1-5),
    /// `attributes.fit=runs_small` (one of a choice's choices); an empty
    /// value answers nothing. Checked as the API's answers are.
    #[serde(flatten)]
    answers: BTreeMap<String, String>,
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
    description = "An HTML form post (multipart/form-data: product, language, rating, title, body, author, an optional `attributes.<name>` answer for each attribute the product asks (its `effective_attributes`: `attributes.quality=4`, `attributes.fit=runs_small`; empty answers nothing), and `photo` files checked as the API's uploads are; or application/x-www-form-urlencoded with the same fields, without photos). The answers are checked as the API's are. The comment is a verified purchase of the link's order, collected after fulfilment; one per product of the order.",
    params(("token" = String, Path, description = "The signed token of the request's link")),
    request_body(
        content(
            (ReviewUploadForm = "multipart/form-data"),
            ("application/x-www-form-urlencoded"),
        ),
    ),
    responses(
        (status = 201, description = "Posted: the forms again, with thanks", body = String, content_type = "text/html"),
        (status = 400, description = "A field is missing or wrong (named: `attributes.fit: must be one of ...`), the product is not in the order, or a photo is refused (named: `photo[2]`); nothing is stored", body = String, content_type = "text/html"),
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
    let (fields, photos) = if uploads::is_multipart(request.headers()) {
        let allowed = posted_fields(&state, &order).await?;
        let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
        let posted =
            match uploads::read_form(&state.uploads, state.media.as_ref(), request, &allowed).await
            {
                Ok(posted) => posted,
                Err(error) => return Ok(refused_by(error)),
            };
        (posted.fields().to_vec(), posted.photos)
    } else {
        let bytes = Bytes::from_request(request, &state)
            .await
            .map_err(|rejection| ApiError::new(rejection.status(), rejection.body_text()))?;
        match serde_urlencoded::from_bytes::<FormFields>(&bytes) {
            Ok(fields) => (fields, Vec::new()),
            Err(e) => return Ok(refused(StatusCode::BAD_REQUEST, format!("form: {e}"))),
        }
    };
    let (answers, fields) = match split_answers(fields) {
        Ok(split) => split,
        Err(message) => return Ok(refused(StatusCode::BAD_REQUEST, message)),
    };
    // The urlencoded form's decoder reads the other fields of both
    // encodings, so both take the same fields with the same types.
    let form = serde_urlencoded::to_string(&fields)
        .map_err(|e| e.to_string())
        .and_then(|fields| {
            serde_urlencoded::from_str::<ReviewForm>(&fields).map_err(|e| e.to_string())
        });
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
        attributes: answers,
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
        // Both read "field: what is wrong".
        Err(error @ (CommentsError::Invalid { .. } | CommentsError::InvalidAttribute { .. })) => {
            return Ok(refused(StatusCode::BAD_REQUEST, error.to_string()));
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
