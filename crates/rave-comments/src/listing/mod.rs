//! Listings: a product's comments in one of five orders under a filter
//! (AP1–AP3; `has_media` reads the listing copies of the comments with
//! photos, see `table::comment`), the moderation queue, an author's comments, and the parallel
//! scan exports use.
//!
//! * `filter` — what a listing asks for (language, ratings, verified);
//! * `sort` — the orders, and which partitions each reads;
//! * `planner` — the one planner: the sub-queries of a page in any order
//!   under any filter, sized by the product's counts when it reads several
//!   rating partitions (the counts come from `statistics`, which knows
//!   nothing of listings);
//! * `executor` — runs the sub-queries and merges them in the order;
//! * `cursor` — where each sub-query resumes, signed and bound to the query
//!   it belongs to;
//! * `group` — a product family's listing: the same plan on the family's
//!   partitions, which hold its variants' comments' family copies.

pub(crate) mod cursor;
mod executor;
pub(crate) mod filter;
mod group;
pub(crate) mod planner;
pub(crate) mod sort;

use std::collections::BTreeMap;
use std::sync::Arc;

use rave_store::{Item, Segment, Store};

use self::cursor::{Cursor, CursorKey, Position, author_binding, listing_binding, queue_binding};
use self::executor::{Source, read_page};
use self::filter::Filter;
use self::planner::{Plan, Planner, Sizing, Trust};
use self::sort::Sort;
use crate::access::TableAccess;
use crate::error::{CommentsError, Result};
use crate::model::{Comment, ProductId, Status, check_page_size, validate_author};
use crate::reports::ReportReason;
#[cfg(any(test, feature = "testing"))]
use crate::statistics::{Counted, RatingCounts};
use crate::statistics::{ListingCounts, Statistics};
use crate::table::comment::Listed;
use crate::table::{ItemKind, comment, describe_key};

/// One page of a product's comments.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    pub items: Vec<Comment>,
    pub next_cursor: Option<String>,
    /// The plan used, with what executing it cost.
    pub plan: Plan,
}

/// One page of an author's comments.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthorPage {
    pub items: Vec<Comment>,
    pub next_cursor: Option<String>,
}

/// One page of the moderation queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuePage {
    pub items: Vec<Comment>,
    pub next_cursor: Option<String>,
    pub items_read: usize,
    pub read_units: f64,
}

/// A listing request as the API receives it.
#[derive(Debug, Clone, Default)]
pub struct ListRequest<'a> {
    pub product: &'a str,
    pub filter: Filter,
    /// The order (newest first by default); a cursor is bound to it.
    pub sort: Sort,
    pub limit: usize,
    pub cursor: Option<&'a str>,
}

/// Where a parallel export scan resumes.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPosition(Item);

/// Tells whether the statistics have applied every write so far.
pub(crate) type Freshness = Box<dyn Fn() -> bool + Send + Sync>;

/// Items an export page scans.
const EXPORT_PAGE: usize = 500;

pub(crate) struct Listings<S> {
    access: Arc<TableAccess<S>>,
    statistics: Statistics<S>,
    cursor_key: CursorKey,
    stats_fresh: Option<Freshness>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for Listings<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listings")
            .field("access", &self.access)
            .finish_non_exhaustive()
    }
}

impl<S: Store> Listings<S> {
    pub(crate) fn new(
        access: Arc<TableAccess<S>>,
        statistics: Statistics<S>,
        cursor_key: CursorKey,
    ) -> Listings<S> {
        Listings {
            access,
            statistics,
            cursor_key,
            stats_fresh: None,
        }
    }

    pub(crate) fn set_freshness(&mut self, fresh: Freshness) {
        self.stats_fresh = Some(fresh);
    }

    /// Where a listing of one partition resumes: its cursor's one
    /// position, checked against the query it was signed for, or the start.
    fn resume_single(&self, cursor: Option<&str>, binding: &[u8]) -> Result<Position> {
        match cursor {
            Some(text) => Cursor::decode(text, &self.cursor_key, binding)?
                .position(0)
                .ok_or(CommentsError::BadCursor("the cursor is malformed")),
            None => Ok(Position::Start),
        }
    }

    /// A page of a product's visible comments in the request's order. A
    /// plan over several rating partitions reads the product's statistics
    /// first, to size (and, when they are current, skip) its sub-queries.
    pub(crate) async fn list(&self, request: &ListRequest<'_>) -> Result<ListPage> {
        let product = ProductId::parse(request.product)?;
        let page_size = check_page_size(request.limit)?;
        let planner = Planner::new(&product, &request.filter, request.sort, page_size);
        let product_binding = listing_binding(&product, &request.filter, request.sort);
        if !planner.wants_counts() {
            return self
                .list_planned(request, &product_binding, page_size, planner.plan(None))
                .await;
        }
        let trust = match self.stats_fresh.as_ref().is_some_and(|fresh| fresh()) {
            true => Trust::Exact,
            false => Trust::MayLag,
        };
        let ListingCounts {
            counts,
            counted,
            read_units,
        } = self
            .statistics
            .listing_counts(
                &product,
                request.filter.language.as_ref(),
                request.filter.verified,
                request.filter.has_media,
            )
            .await?;
        let mut plan = planner.plan(Some(Sizing {
            counts: &counts,
            counted,
            trust,
        }));
        plan.read_units = read_units;
        self.list_planned(request, &product_binding, page_size, plan)
            .await
    }

    /// [`Listings::list`] with per-rating counts the caller vouches for, as
    /// exact (of verified comments for a verified listing, of comments with
    /// photos for a `has_media` one).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) async fn list_with_counts(
        &self,
        request: &ListRequest<'_>,
        counts: Option<&RatingCounts>,
    ) -> Result<ListPage> {
        let product = ProductId::parse(request.product)?;
        let page_size = check_page_size(request.limit)?;
        let counted = match (request.filter.has_media, request.filter.verified) {
            (true, _) => Counted::MediaComments,
            (false, false) => Counted::Comments,
            (false, true) => Counted::VerifiedComments,
        };
        let plan = Planner::new(&product, &request.filter, request.sort, page_size).plan(
            counts.map(|counts| Sizing {
                counts,
                counted,
                trust: Trust::Exact,
            }),
        );
        let binding = listing_binding(&product, &request.filter, request.sort);
        self.list_planned(request, &binding, page_size, plan).await
    }

    /// Reads the page of `page_size` items `plan` plans, adding what that
    /// costs to the plan's read units (so far, those of the counts that
    /// sized it); its cursors are bound to `binding`.
    async fn list_planned(
        &self,
        request: &ListRequest<'_>,
        binding: &[u8],
        page_size: usize,
        mut plan: Plan,
    ) -> Result<ListPage> {
        let cursor = request
            .cursor
            .map(|text| Cursor::decode(text, &self.cursor_key, binding))
            .transpose()?;
        let sources = plan
            .resume(cursor.as_ref())
            .into_iter()
            .map(|(query, start)| Source {
                tag: query.tag,
                index: query.index_kind,
                partition: query.partition_key,
                sort_prefix: None,
                filter: request.filter.incentivized.map(comment::incentivized_is),
                first_limit: query.limit,
                share: query.share,
                start,
                helpfulness: cursor.as_ref().and_then(|c| c.rank),
                next_at: cursor.as_ref().and_then(|c| c.next_rank(query.tag)),
                phase: query.phase,
            })
            .collect();
        let merged = read_page(&self.access, sources, page_size, request.sort.ascending()).await?;
        plan.read_units += merged.read_units;
        plan.items_read = merged.items_read;
        let next_cursor = merged.next.map(|positions| {
            Cursor {
                positions,
                rank: merged.next_helpfulness,
                next_ranks: merged.next_ranks,
            }
            .encode(&self.cursor_key, binding)
        });
        let items = comments(merged.items)?;
        Ok(ListPage {
            items,
            next_cursor,
            plan,
        })
    }

    /// The moderation queue: pending or flagged comments, oldest first,
    /// optionally only those whose creation time starts with `since`
    /// (`2026`, `2026-11`, `2026-11-21`, `2026-11-21T08`) and only those
    /// reported for `reason` (a filter on the queue's entries, which
    /// project the report counts).
    pub(crate) async fn moderation_queue(
        &self,
        state: Status,
        since: Option<&str>,
        reason: Option<ReportReason>,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<QueuePage> {
        if state == Status::Published {
            return Err(CommentsError::Invalid {
                field: "state",
                message: "must be pending or flagged".into(),
            });
        }
        if let Some(prefix) = since {
            check_time_prefix(prefix)?;
        }
        let limit = check_page_size(limit)?;
        let binding = queue_binding(state, since, reason);
        let start = self.resume_single(cursor, &binding)?;
        if start == Position::Exhausted {
            return Ok(QueuePage {
                items: Vec::new(),
                next_cursor: None,
                items_read: 0,
                read_units: 0.0,
            });
        }
        let source = Source {
            tag: 0,
            index: crate::table::Index::Moderation,
            partition: comment::moderation_partition(state),
            sort_prefix: since.map(str::to_owned),
            filter: reason.map(comment::reported_for),
            first_limit: limit + 1,
            share: 1.0,
            start,
            helpfulness: None,
            next_at: None,
            phase: 0,
        };
        let merged = read_page(&self.access, vec![source], limit, true).await?;
        Ok(QueuePage {
            items: comments(merged.items)?,
            next_cursor: merged.next.map(|positions| {
                Cursor {
                    positions,
                    rank: None,
                    next_ranks: Vec::new(),
                }
                .encode(&self.cursor_key, &binding)
            }),
            items_read: merged.items_read,
            read_units: merged.read_units,
        })
    }

    /// Every comment whose author is exactly `author`, any status, newest
    /// first: one query of the `byAuthor` index per page.
    pub(crate) async fn author_comments(
        &self,
        author: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<AuthorPage> {
        let author = validate_author(author)?;
        let limit = check_page_size(limit)?;
        let binding = author_binding(&author);
        let start = self.resume_single(cursor, &binding)?;
        if start == Position::Exhausted {
            return Ok(AuthorPage {
                items: Vec::new(),
                next_cursor: None,
            });
        }
        let source = Source {
            tag: 0,
            index: crate::table::Index::ByAuthor,
            partition: comment::author_partition(&author),
            sort_prefix: None,
            filter: None,
            first_limit: limit + 1,
            share: 1.0,
            phase: 0,
            start,
            helpfulness: None,
            next_at: None,
        };
        let merged = read_page(&self.access, vec![source], limit, false).await?;
        // The author index holds keys only: the comments are read by key,
        // in the index's order. One deleted since the index was read is
        // left out, so such a page can be short.
        let keys: Vec<Item> = merged
            .items
            .into_iter()
            .map(Listed::into_key)
            .collect::<Result<_, _>>()?;
        let mut found: BTreeMap<String, Item> = self
            .access
            .get_many(&keys)
            .await?
            .into_iter()
            .map(|item| (describe_key(&item), item))
            .collect();
        let items: Vec<Item> = keys
            .iter()
            .filter_map(|key| found.remove(&describe_key(key)))
            .collect();
        Ok(AuthorPage {
            items: items
                .iter()
                .map(comment::decode)
                .collect::<Result<_, _>>()?,
            next_cursor: merged.next.map(|positions| {
                Cursor {
                    positions,
                    rank: None,
                    next_ranks: Vec::new(),
                }
                .encode(&self.cursor_key, &binding)
            }),
        })
    }

    /// One page of segment `segment` of `total` of a parallel scan over all
    /// comments (any status), for exports and recounts.
    pub(crate) async fn export_page(
        &self,
        segment: u32,
        total: u32,
        start: Option<ExportPosition>,
    ) -> Result<(Vec<Comment>, Option<ExportPosition>)> {
        let page = self
            .access
            .scan(
                Segment {
                    segment,
                    total_segments: total,
                },
                EXPORT_PAGE,
                false,
                start.map(|p| p.0),
            )
            .await?;
        let comments = page
            .items
            .iter()
            .filter(|item| ItemKind::of(item) == ItemKind::Comment)
            .map(comment::decode)
            .collect::<Result<_, _>>()?;
        Ok((comments, page.last_evaluated_key.map(ExportPosition)))
    }
}

fn comments(entries: Vec<Listed>) -> Result<Vec<Comment>> {
    Ok(entries
        .into_iter()
        .map(Listed::into_comment)
        .collect::<Result<_, _>>()?)
}

/// Accepts `YYYY`, `YYYY-MM`, `YYYY-MM-DD` and `YYYY-MM-DDTHH`.
fn check_time_prefix(prefix: &str) -> Result<()> {
    let shape_ok = match prefix.len() {
        4 | 7 | 10 | 13 => prefix.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            _ => b.is_ascii_digit(),
        }),
        _ => false,
    };
    if shape_ok {
        Ok(())
    } else {
        Err(CommentsError::Invalid {
            field: "since",
            message: "must be a time prefix: 2026, 2026-11, 2026-11-21 or 2026-11-21T08".into(),
        })
    }
}
