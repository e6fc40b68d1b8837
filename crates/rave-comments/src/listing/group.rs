//! A product family's listing: every variant's comments in one of the five
//! orders under any filter, read from the family's own index entries.
//!
//! Every visible comment of a grouped product has a family copy
//! (`table::comment`: `COMMENT#<id>` / `FAMILY`, and `FAMILYMEDIA` with a
//! published photo) keyed into the `FAMILY#<g>…` partitions of the same
//! listing indexes a product's listing reads, so the group's listing is a
//! product's: the one planner (`Planner::in_family`) and executor, sized
//! by the variants' statistics summed (the counts `families` reads for the
//! group's statistics). The cursor is a product listing's, bound to the
//! group, filter and order; a comment has at most one family copy, so a
//! walk never shows one twice, however products move under it (a comment
//! of a product moved in mid-walk shows once its move job has rewritten
//! it, one moved out stops showing then: `families`).
//!
//! **Measured** (`rave-bench all --size small`'s `groups` scenario: the
//! small data set, about 10,000 comments on Zipf-skewed products, with
//! `p1`…`p20` made one group after loading, so the moves' jobs run first;
//! 50 pages of 20; a debug build on the shared 2-core machine, another
//! build and test run beside it; BENCHMARKS.md has the rows). B4, items
//! read ÷ returned over the first 50 pages (worst page): 1.05 (1.05)
//! newest, highest and most helpful first; with ratings 1 and 5, 1.12
//! (1.25) newest, 1.05 (1.05) highest, 1.11 (1.25) most helpful first. A
//! one-partition page reads its 20 and one more; a merge of two rating
//! partitions reads each one's share by the summed counts, and a refill
//! when a share runs short. B2, page 40 ÷ page 1: 1.10, 1.03, 1.13, and
//! 1.06, 1.06, 1.09 with ratings 1 and 5. The merge over the 20 variants
//! this replaced read 2.05–3.07 items per item shown (a head of every
//! source per page, read again by the next). The 20 moves' jobs took
//! 57 s and 149,660 write units (each comment rewritten with its family
//! copy: `families` has the cost per comment).

use rave_store::Store;

use super::Listings;
use super::cursor::listing_binding;
use super::planner::{Planner, Sizing, Trust};
use super::{ListPage, ListRequest};
use crate::error::Result;
use crate::families::{parse_group, variant_counts};
use crate::model::{ProductId, check_page_size};
use crate::statistics::listing_sizing;
use crate::table::stats::product::ProductCounts;

/// What a group's cursor is bound to: the group, and the product listing's
/// binding of its filter and order (so no product's cursor resumes it).
fn group_binding(group: &ProductId, request: &ListRequest<'_>) -> Vec<u8> {
    let mut binding = b"group\0".to_vec();
    binding.extend(listing_binding(group, &request.filter, request.sort));
    binding
}

impl<S: Store> Listings<S> {
    /// A page of the group's visible comments (`request.product` is the
    /// group's id) from its family partitions, in the request's order.
    pub(crate) async fn list_group(&self, request: &ListRequest<'_>) -> Result<ListPage> {
        let group = parse_group(request.product)?;
        let page_size = check_page_size(request.limit)?;
        let planner = Planner::new(&group, &request.filter, request.sort, page_size).in_family();
        let binding = group_binding(&group, request);
        if !planner.wants_counts() {
            let plan = planner.plan(None);
            return self.list_planned(request, &binding, page_size, plan).await;
        }
        let variants =
            variant_counts(&self.access, &group, request.filter.language.as_ref()).await?;
        let mut total = ProductCounts::default();
        for (_, counts) in &variants {
            total.add(counts);
        }
        let (counts, counted) =
            listing_sizing(&total, request.filter.verified, request.filter.has_media);
        let plan = planner.plan(Some(Sizing {
            counts: &counts,
            counted,
            // The counts move with a product at once, its comments' copies
            // within its move job: they size the reads but skip no rating.
            trust: Trust::MayLag,
        }));
        self.list_planned(request, &binding, page_size, plan).await
    }
}
