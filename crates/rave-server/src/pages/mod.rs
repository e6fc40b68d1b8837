//! Product pages for crawlers, readers without JavaScript and shops: the
//! server-rendered listing (`/products/{id}`), the same listing as a
//! fragment for server-side or edge includes, the embed script, and the
//! product record behind their names.
//!
//! * `html` — the listing as HTML, every piece of user text escaped and
//!   isolated;
//! * `jsonld` — the schema.org structured data, safe inside `<script>`;
//! * `shown` — what both show of a comment (its name, time and published
//!   photos), worked out once;
//! * `review` — the review form and unsubscribe pages review requests
//!   link to;
//! * `family` — a page of the whole product family's reviews
//!   (`scope=group`), with its `ProductGroup` structured data.
//!
//! The query of a page is read by the API's parser (`routes::query`), in
//! its page dialect.
//!
//! The embed script (`web/embed.js`) shows the listing, its filters and
//! orders, "Load more", the verified badge, the merchant's reply, helpful
//! votes, each comment's photos (thumbnails opening a modal viewer: a
//! `<dialog>` shown with `showModal`, so focus moves in and the page
//! behind is inert, arrow keys for the comment's other photos, Escape
//! closes it and focus returns to the thumbnail) and the post form (up to
//! five photos previewed from object URLs, posted as
//! `multipart/form-data`) in a shadow root (styles cross in neither
//! direction), themed by CSS custom properties, with user text only through
//! `textContent`. Its voter is the shop's `data-rave-voter`, else a random
//! id in the shop origin's local storage (in memory where storage is
//! refused).
//!
//! A page is answered from one read of the product's partition (record,
//! statistics, revision) and one listing query, and kept by its `ETag` as
//! the JSON answers are (`answers`): while the product's revision and the
//! server's generation hold, the same URL is answered from the kept page
//! after two point reads (the revision), which is also all a revalidation
//! whose `If-None-Match` still holds costs. A request carrying
//! `Cache-Control: no-cache` is read afresh.

mod attributes;
mod family;
mod html;

/// The product pages' and fragments' inline style, for their policy.
pub(crate) use html::STYLE;
mod jsonld;
pub(crate) mod review;
mod shown;

use std::sync::{Arc, LazyLock};

use crate::json::Json;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_comments::{DEFAULT_PAGE_SIZE, Filter, ListRequest, ProductOverview};

use crate::AppState;
use crate::answers::Answer;
use crate::api::{
    LanguageFilter, PageCursor, PageScope, ProductBody, ProductId, PutProductBody, StarRating,
};
use crate::caching;
use crate::callers::{Admin, Authorized};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::responses::{BadRequest, BodyRefused, Conflict, TokenRefused, Unavailable};
use crate::routes::Segment;
use crate::routes::query::{Dialect, ListingQuery, Params};

use self::family::Family;
use self::html::View;
use self::shown::Shown;

/// The embed for shops' pages (see `web/embed.js`).
static EMBED_JS: LazyLock<String> =
    LazyLock::new(|| crate::sort_labels::fill(include_str!("../../web/embed.js")));

/// The filters and start of a page, from its query: the listing's
/// parameters read as the API reads them, save that parameters a page does
/// not know are ignored (shops and crawlers add their own).
fn parse_view(raw: Option<&str>) -> ApiResult<View> {
    let params = Params::new(raw, &ListingQuery::PAGE, Dialect::Page)?;
    let query = ListingQuery::read(&params)?;
    let mut view = View::new(query.filter.language, query.filter.ratings, query.cursor);
    view.group = match Params::new(raw, &["scope"], Dialect::Page)?.value("scope")? {
        None | Some("product") => false,
        Some("group") => true,
        Some(_) => {
            return Err(ApiError::bad_request(
                "scope: must be product (the product's own reviews) or group (its family's)",
            ));
        }
    };
    Ok(view)
}

/// What a listing is rendered as: the one thing the page and the fragment
/// routes differ in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Page,
    Fragment,
}

impl Shape {
    /// Keeps the page's and the fragment's `ETag`s apart; the label of
    /// their kept answers' metric.
    fn kind(self) -> &'static str {
        match self {
            Shape::Page => "page",
            Shape::Fragment => "fragment",
        }
    }

    /// Where the listing's links point. A fragment's lead to the shop's
    /// page when the record names it: the shop passes `language`, `rating`
    /// and `cursor` on to its include.
    fn link_base(self, overview: &ProductOverview, page_path: &str) -> String {
        match self {
            Shape::Page => page_path.to_owned(),
            Shape::Fragment => overview
                .record
                .as_ref()
                .and_then(|r| r.url.clone())
                .unwrap_or_else(|| page_path.to_owned()),
        }
    }

    fn render(self, listing: &html::Listing<'_>, page_path: &str) -> String {
        match self {
            Shape::Page => listing.page(page_path),
            Shape::Fragment => listing.fragment(),
        }
    }
}

/// The product page and the fragment: one listing, two shapes.
async fn listing(
    shape: Shape,
    State(state): State<AppState>,
    Segment(product): Segment,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let view = parse_view(raw.as_deref())?;
    let tag_of = |revision: &str| {
        caching::entity_tag(&[
            shape.kind().as_bytes(),
            revision.as_bytes(),
            product.as_bytes(),
            raw.as_deref().unwrap_or("").as_bytes(),
        ])
    };
    let cache_control = state.cache_policy.cache_control(view.cursor.is_some());
    // Taken before anything the page shows is read (`answers`).
    let generation = state.answers.generation();
    // A product page's revalidation reads the revision alone; a family's
    // needs every variant's overview, which its page reads anyway, so it is
    // checked once those are read.
    if !view.group && headers.contains_key(header::IF_NONE_MATCH) {
        let tag = tag_of(&state.comments.product_revision(&product).await?);
        if caching::not_modified(&headers, &tag) {
            return Ok(caching::not_modified_response(tag, cache_control));
        }
    }
    // The overview read last is reused while the revision holds, so a page
    // kept under its tag costs the revision's two point reads, and a page
    // read afresh reads the revision once.
    let product_overview = state.comments.product_overview(&product).await?;
    let family = match view.group {
        true => Family::of(&state, &product_overview).await?,
        false => None,
    };
    let tag = tag_of(&match &family {
        Some(family) => family.revision(),
        None => product_overview.revision.clone(),
    });
    if view.group && caching::not_modified(&headers, &tag) {
        return Ok(caching::not_modified_response(tag, cache_control));
    }
    if !caching::wants_fresh(&headers)
        && let Some(kept) = state.answers.get(&tag, generation)
    {
        state.metrics.answer_reused(shape.kind());
        let mut response = Response::new(Body::from(kept.body));
        *response.headers_mut() = kept.headers;
        caching::stamp(&mut response, tag, cache_control);
        return Ok(response);
    }
    let filter = Filter {
        language: view.language.clone(),
        ratings: view.ratings,
        verified: false,
        incentivized: None,
        has_media: false,
    };
    let (overview, page, stats) = match &family {
        Some(family) => {
            let group = family.group.product_id.as_str();
            let request = ListRequest {
                sort: Default::default(),
                product: group,
                filter,
                limit: DEFAULT_PAGE_SIZE,
                cursor: view.cursor.as_deref(),
            };
            let page = state.comments.list_group(&request).await?;
            let language = view.language.as_ref().map(|l| l.as_str());
            let stats = state.comments.group_stats(group, language).await?.stats;
            (Arc::clone(&family.group), page, stats)
        }
        None => {
            let page = state
                .comments
                .list(&ListRequest {
                    sort: Default::default(),
                    product: &product,
                    filter,
                    limit: DEFAULT_PAGE_SIZE,
                    cursor: view.cursor.as_deref(),
                })
                .await?;
            let stats = match &view.language {
                Some(language) => product_overview.in_language(language),
                None => product_overview.overall.clone(),
            };
            (Arc::clone(&product_overview), page, stats)
        }
    };
    let view = View {
        group: family.is_some(),
        ..view
    };
    let page_path = format!("/products/{}", product_overview.product_id);
    let base = shape.link_base(&product_overview, &page_path);
    let comments: Vec<Shown> = page
        .items
        .iter()
        .map(|comment| Shown::new(comment, &state.media_links))
        .collect();
    let body = Bytes::from(shape.render(
        &html::Listing {
            overview: &overview,
            stats: &stats,
            view: &view,
            comments: &comments,
            next_cursor: page.next_cursor.as_deref(),
            base: &base,
            family: family.as_ref(),
        },
        &page_path,
    ));
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    state.answers.keep(
        tag.clone(),
        generation,
        Answer {
            headers: headers.clone(),
            body: body.clone(),
        },
    );
    let mut response = Response::new(Body::from(body));
    *response.headers_mut() = headers;
    caching::stamp(&mut response, tag, cache_control);
    Ok(response)
}

#[utoipa::path(
    get,
    path = "/products/{product_id}",
    tag = "pages",
    summary = "A product's comments as a page, for crawlers and readers without JavaScript",
    description = "Newest first, 20 a page, with the rating histogram, the average, the count, filters as a GET form and links, and \"Older comments\" as a link to a keyset URL that names the same comments for as long as they exist. Carries schema.org Product/AggregateRating/Review JSON-LD, a canonical link (filtered views point at the unfiltered listing and carry noindex), an ETag and Cache-Control.",
    params(
        ("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -"),
        ("language" = Option<LanguageFilter>, Query, description = "One language code; absent or empty = all languages"),
        ("rating" = Option<Vec<StarRating>>, Query, style = Form, explode, description = "Repeatable (rating=1&rating=5; rating=1,5 works too); absent = all ratings"),
        ("cursor" = Option<PageCursor>, Query, description = "From the page's \"Older comments\" link"),
        ("scope" = Option<PageScope>, Query, description = "group shows the reviews of every variant of the product's family (the group its record names, or the product itself when it is a group), with the group's statistics and schema.org ProductGroup structured data (productGroupID, hasVariant, the group's aggregateRating); product (the default) shows its own. A product in no family shows its own either way"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of this URL: 304 while it still holds"),
    ),
    responses(
        (status = 200, description = "The page", body = String, content_type = "text/html"),
        (status = 304, description = "Not modified since the ETag given"),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn product_page(
    state: State<AppState>,
    product: Segment,
    query: RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    listing(Shape::Page, state, product, query, headers).await
}

#[utoipa::path(
    get,
    path = "/fragments/products/{product_id}",
    tag = "pages",
    summary = "A product's listing as an HTML fragment, for server-side or edge includes",
    description = "The listing of /products/{product_id} (with its JSON-LD) without the page around it; no JavaScript needed. Its links lead to the product record's url when it has one (pass language, rating and cursor on to the include), else to /products/{product_id}.",
    params(
        ("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -"),
        ("language" = Option<LanguageFilter>, Query, description = "One language code; absent or empty = all languages"),
        ("rating" = Option<Vec<StarRating>>, Query, style = Form, explode, description = "Repeatable (rating=1&rating=5; rating=1,5 works too); absent = all ratings"),
        ("cursor" = Option<PageCursor>, Query, description = "From the listing's \"Older comments\" link"),
        ("scope" = Option<PageScope>, Query, description = "group: the reviews of every variant of the product's family, as on /products/{product_id}?scope=group; product (the default): its own"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of this URL: 304 while it still holds"),
    ),
    responses(
        (status = 200, description = "The fragment", body = String, content_type = "text/html"),
        (status = 304, description = "Not modified since the ETag given"),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn product_fragment(
    state: State<AppState>,
    product: Segment,
    query: RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    listing(Shape::Fragment, state, product, query, headers).await
}

#[utoipa::path(
    get,
    path = "/v1/products/{product_id}",
    tag = "statistics",
    summary = "A product: its name, page, image and statistics, overall and per language",
    params(("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -")),
    responses(
        (status = 200, description = "The product (the id as its name until an admin sets one)", body = ProductBody),
        BadRequest,
        Unavailable,
    )
)]
pub(crate) async fn get_product(
    State(state): State<AppState>,
    Segment(product_id): Segment,
) -> ApiResult<Json<ProductBody>> {
    Ok(Json(
        state
            .comments
            .product_overview(&product_id)
            .await?
            .as_ref()
            .into(),
    ))
}

#[utoipa::path(
    put,
    path = "/v1/products/{product_id}",
    tag = "admin",
    summary = "Set a product's display name, page and image (scope admin)",
    description = "What the product pages and their structured data name the product by.",
    params(("product_id" = ProductId, Path, description = "1-64 characters of A-Z a-z 0-9 _ -")),
    request_body = PutProductBody,
    security(("access_token" = ["admin"])),
    responses(
        (status = 200, description = "The product", body = ProductBody),
        BadRequest,
        TokenRefused,
        BodyRefused,
        Conflict,
        Unavailable,
    )
)]
pub(crate) async fn put_product(
    State(state): State<AppState>,
    Authorized(staff, ..): Authorized<Admin>,
    Segment(product_id): Segment,
    JsonBody(body): JsonBody<PutProductBody>,
) -> ApiResult<Json<ProductBody>> {
    state
        .comments
        .put_product(&product_id, body.try_into()?)
        .await?;
    staff
        .record(
            &state,
            "product.put",
            rave_access::Target::new("product", &product_id),
            None,
        )
        .await;
    Ok(Json(
        state
            .comments
            .product_overview(&product_id)
            .await?
            .as_ref()
            .into(),
    ))
}

#[utoipa::path(
    get,
    path = "/embed.js",
    tag = "pages",
    summary = "The embed for shops' product pages",
    description = "Add `<div data-rave-product=\"42\"></div><script src=\"https://comments.example/embed.js\" async></script>`: it renders the listing (filters, the order, verified purchases only, load more, histogram, verified badges, replies, helpful votes, the post form) in a shadow root, themable with CSS custom properties. Votes are cast as `data-rave-voter` when the element has one, else as a random voter id kept in the browser. With `data-rave-group=\"tee\"` it lists and counts the comments of every variant of that product family (new comments still go to `data-rave-product`). The page's origin must be allowed (--allowed-origin).",
    responses((status = 200, description = "The script", body = String, content_type = "text/javascript"))
)]
pub(crate) async fn embed_js(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let tag = caching::entity_tag(&[b"embed.js", EMBED_JS.as_bytes()]);
    let cache_control = state.cache_policy.cache_control(false);
    if caching::not_modified(&headers, &tag) {
        return caching::not_modified_response(tag, cache_control);
    }
    let mut response = (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/javascript; charset=utf-8"),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        EMBED_JS.as_str(),
    )
        .into_response();
    caching::stamp(&mut response, tag, cache_control);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embed_stays_small() {
        // 15 KB gzipped is the budget; held uncompressed, it cannot be
        // broken by a change in compression. 17 KB since the sub-ratings'
        // bars and fit scale (about 5.3 KB gzipped); 22 KB since photos:
        // thumbnails, the keyboard viewer and the form's previews and
        // multipart post (about 7 KB gzipped); 23 KB since the form asks
        // for the declared sub-ratings and fit.
        assert!(EMBED_JS.len() <= 23 * 1024, "{} bytes", EMBED_JS.len());
    }

    #[test]
    fn views_normalise_their_filters_and_ignore_foreign_parameters() {
        let view = parse_view(Some("rating=5,1&rating=5&utm_source=x&language=&cursor=")).unwrap();
        let ratings: Vec<u8> = view.ratings.ratings().iter().map(|r| r.get()).collect();
        assert_eq!(ratings, [1, 5]);
        assert_eq!(view.language, None);
        assert_eq!(view.cursor, None);
        assert!(view.filtered());
        let all = parse_view(Some("rating=1,2,3,4,5")).unwrap();
        assert!(!all.filtered());
        assert!(parse_view(Some("rating=6")).is_err());
        assert!(parse_view(Some("language=EN1")).is_err());
    }
}
