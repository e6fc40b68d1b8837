//! A product family's listing: every variant's comments in one of the five
//! orders under any filter, merged by the executor from the variants' own
//! listings (no index of the group's own: see `families`).
//!
//! Each variant is planned as its own listing would be (`planner`), and
//! every sub-query of every variant becomes one source of one k-way merge:
//! a phase of an in-turn order (`highest`, `lowest`) holds one rating's
//! partition of every variant, merged by time, so the ratings still come
//! one after another across the whole family. Each source first reads its
//! share of the page by the counts (its partition's comments ÷ those of its
//! phase), and the executor refills the ones that run dry.
//!
//! **Cursor.** The cursor names no variant: it holds the phase (the rating
//! an in-turn order is in) and the last comment shown (with its
//! helpfulness rank for `helpful`), signed as a product's cursors are and
//! bound to the group, filter and order. Every variant's sub-queries
//! resume right after that comment (the sort keys are one total order
//! across products: time, then id; or rank, time, id), earlier phases are
//! done and later ones start at the beginning. So a walk shows each
//! comment once however the family changes under it: a product moved in
//! mid-walk shows its comments from where the walk is, one moved out
//! stops showing, and none shows twice.
//!
//! **Measured** (`rave-bench`'s `groups`: the small data set, about
//! 9,400 comments, with `p1`…`p20`, Zipf-skewed as the data set's
//! products are, as one group; 50 pages of 20; a debug build on the
//! shared 2-core machine; BENCHMARKS.md has the rows). B4, items read ÷
//! returned: 2.05 newest first, 2.08 highest first, 2.05 most helpful
//! first; 3.07 with ratings 1 and 5 (40 sources). B2, page 40 ÷ page 1:
//! 1.10, 1.20, 1.16, and 1.15 / 0.95 with ratings 1 and 5, but 2.91 for
//! most helpful with ratings 1 and 5 (one run on a loaded machine; not
//! repeated). So B2 mostly holds (each page is the same seeks at any
//! depth) and B4 does not: a k-way merge holds a head of each
//! of its k sources to choose the next comment, and the heads a page does
//! not show are read again by the next (the cursor keeps no position per
//! variant), so a page of p items from k sources reads about p + k. Meeting
//! B4 needs either per-variant positions in the cursor (bound to the
//! membership, falling back to this resume when it changes) or index
//! entries of the group's own.

use std::collections::BTreeMap;

use rave_store::Store;
use ulid::Ulid;

use super::Listings;
use super::cursor::{Cursor, Position, listing_binding};
use super::executor::{Source, read_page};
use super::planner::{Planner, Sizing, Strategy, Trust};
use super::sort::Reading;
use super::{ListPage, ListRequest, comments};
use crate::error::{CommentsError, Result};
use crate::families::{VariantCounts, parse_group};
use crate::model::{ProductId, check_page_size};
use crate::statistics::listing_sizing;
use crate::table::comment;

/// What a group's cursor is bound to: the group, and the product listing's
/// binding of its filter and order.
fn group_binding(group: &ProductId, request: &ListRequest<'_>) -> Vec<u8> {
    let mut binding = b"group\0".to_vec();
    binding.extend(listing_binding(group, &request.filter, request.sort));
    binding
}

impl<S: Store> Listings<S> {
    /// A page of the group's visible comments (`request.product` is the
    /// group's id) from its `variants`' listings, merged in the order.
    pub(crate) async fn list_group(
        &self,
        request: &ListRequest<'_>,
        variants: &[VariantCounts],
    ) -> Result<ListPage> {
        let group = parse_group(request.product)?;
        let page_size = check_page_size(request.limit)?;
        let binding = group_binding(&group, request);
        let resume = match request.cursor {
            Some(text) => {
                let cursor = Cursor::decode(text, &self.cursor_key, &binding)?;
                match cursor.positions.as_slice() {
                    [(phase, Position::After(id))] => Some((*phase, *id, cursor.rank)),
                    _ => return Err(CommentsError::BadCursor("the cursor is malformed")),
                }
            }
            None => None,
        };
        let mut sources = Vec::new();
        // What each source's partition holds, by the counts.
        let mut weights: Vec<u64> = Vec::new();
        let mut plan = None;
        for (variant, counts) in variants {
            let (rating_counts, counted) =
                listing_sizing(counts, request.filter.verified, request.filter.has_media);
            let by_rating = rating_counts.0;
            let variant_plan = Planner::new(variant, &request.filter, request.sort, page_size)
                .plan(Some(Sizing {
                    counts: &rating_counts,
                    counted,
                    // Never skips a rating: every variant's phases stay the
                    // same ratings, and a comment not yet counted shows.
                    trust: Trust::MayLag,
                }));
            for query in &variant_plan.queries {
                let start = match resume {
                    None => Position::Start,
                    Some((phase, _, _)) if query.phase < phase => continue,
                    Some((phase, _, _)) if query.phase > phase => Position::Start,
                    Some((_, id, _)) => Position::After(id),
                };
                weights.push(match query.tag {
                    0 => by_rating.iter().sum(),
                    rating => by_rating[usize::from(rating - 1)],
                });
                sources.push(Source {
                    tag: u8::try_from(sources.len()).map_err(|_| {
                        CommentsError::Internal("a group listing of over 255 sources".into())
                    })?,
                    index: query.index_kind,
                    partition: query.partition_key.clone(),
                    sort_prefix: None,
                    filter: request.filter.incentivized.map(comment::incentivized_is),
                    first_limit: 1,
                    share: 1.0,
                    start,
                    helpfulness: resume.and_then(|(_, _, rank)| rank),
                    next_at: None,
                    phase: query.phase,
                });
            }
            match &mut plan {
                None => plan = Some(variant_plan),
                Some(plan) => plan.queries.extend(variant_plan.queries),
            }
        }
        // Each source's share of its phase (evenly while the phase counts
        // nothing), and a first read of that share of the page.
        let mut phase_totals: BTreeMap<u8, (u64, usize)> = BTreeMap::new();
        for (source, weight) in sources.iter().zip(&weights) {
            let total = phase_totals.entry(source.phase).or_default();
            total.0 += weight;
            total.1 += 1;
        }
        for (source, weight) in sources.iter_mut().zip(&weights) {
            let (total, count) = phase_totals[&source.phase];
            source.share = match total {
                0 => 1.0 / count as f64,
                total => *weight as f64 / total as f64,
            };
            source.first_limit = ((source.share * (page_size + 1) as f64).ceil() as usize).max(1);
        }
        let merged = read_page(&self.access, sources, page_size, request.sort.ascending()).await?;
        // A group without variants reads nothing.
        let mut plan = plan.unwrap_or_else(|| {
            let mut plan =
                Planner::new(&group, &request.filter, request.sort, page_size).plan(None);
            plan.queries.clear();
            plan.strategy = Strategy::Empty;
            plan
        });
        plan.read_units += merged.read_units;
        plan.items_read = merged.items_read;
        let has_more = merged.next.is_some();
        let next_helpfulness = merged.next_helpfulness;
        let items = comments(merged.items)?;
        let next_cursor = match items.last() {
            Some(last) if has_more => {
                let id = Ulid::from_string(&last.id)
                    .map_err(|_| CommentsError::Internal("a listed id is not a ULID".into()))?;
                // The phase of an in-turn order is the rating's place in it.
                let phase = match request.sort.reading(&request.filter) {
                    Reading::InTurn(ratings) => ratings
                        .iter()
                        .position(|rating| *rating == last.rating)
                        .and_then(|at| u8::try_from(at).ok())
                        .unwrap_or(0),
                    Reading::OnePartition | Reading::Merged(_) => 0,
                };
                Some(
                    Cursor {
                        positions: vec![(phase, Position::After(id))],
                        rank: next_helpfulness,
                        next_ranks: Vec::new(),
                    }
                    .encode(&self.cursor_key, &binding),
                )
            }
            _ => None,
        };
        Ok(ListPage {
            items,
            next_cursor,
            plan,
        })
    }
}
