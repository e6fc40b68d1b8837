//! A product page, fragment or embed showing its whole family's reviews
//! (`?scope=group`, `data-rave-group`): the listing of every variant's
//! comments, the group's statistics, and structured data describing a
//! schema.org `ProductGroup`.
//!
//! The structured data follows schema.org's `ProductGroup`
//! (<https://schema.org/ProductGroup>: `productGroupID`, `hasVariant`) and
//! Google's product variants guide
//! (<https://developers.google.com/search/docs/appearance/structured-data/product-variants>):
//! the group carries what its variants share (the reviews and their
//! `aggregateRating`, over every variant), `productGroupID` is the group's
//! id, and each variant under `hasVariant` is a `Product` with its own
//! identifiers (`sku`: its SKUs or its id, so each has a unique one).

use std::sync::Arc;

use futures::future::try_join_all;
use rave_comments::{ProductId, ProductOverview, ProductStats};
use serde::Serialize;

use super::jsonld::{self, AggregateRating};
use crate::AppState;
use crate::error::ApiResult;

/// The family a page shows: the group's own overview (its name, when a
/// record names it) and each variant's.
pub(super) struct Family {
    pub(super) group: Arc<ProductOverview>,
    pub(super) variants: Vec<Arc<ProductOverview>>,
}

impl Family {
    /// The family of `product` (the group its record names, or the product
    /// itself when it is a group with variants); none for a product in no
    /// family, whose page shows its own reviews.
    pub(super) async fn of(
        state: &AppState,
        product: &ProductOverview,
    ) -> ApiResult<Option<Family>> {
        let group_id = match product.record.as_ref().and_then(|r| r.group.clone()) {
            Some(group) => group,
            None => product.product_id.to_string(),
        };
        let variants = state.comments.group_variants(&group_id).await?;
        if variants.is_empty() {
            return Ok(None);
        }
        let overviews = variants
            .iter()
            .map(|variant| state.comments.product_overview(variant.as_str()));
        Ok(Some(Family {
            group: state.comments.product_overview(&group_id).await?,
            variants: try_join_all(overviews).await?,
        }))
    }

    /// The overview of the variant `product`, if it is one of the family's.
    pub(super) fn variant(&self, product: &ProductId) -> Option<&ProductOverview> {
        self.variants
            .iter()
            .find(|variant| &variant.product_id == product)
            .map(Arc::as_ref)
    }

    /// Changes whenever anything the family's page shows changes: the
    /// variants (who they are, and each one's revision) and the group's
    /// record.
    pub(super) fn revision(&self) -> String {
        let mut revision = self.group.revision.clone();
        for variant in &self.variants {
            revision.push(',');
            revision.push_str(variant.product_id.as_str());
            revision.push('=');
            revision.push_str(&variant.revision);
        }
        revision
    }
}

/// schema.org `ProductGroup`, with what a family's listing page shows.
#[derive(Debug, Serialize)]
pub(super) struct ProductGroup<'a> {
    #[serde(rename = "@context")]
    context: &'static str,
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
    #[serde(rename = "productGroupID")]
    product_group_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    #[serde(rename = "hasVariant")]
    has_variant: Vec<jsonld::Product<'a>>,
    #[serde(rename = "aggregateRating", skip_serializing_if = "Option::is_none")]
    aggregate_rating: Option<AggregateRating>,
}

/// The structured data of a family's listing page but its reviews: the
/// group, its variants (each without reviews: the group carries them) and
/// the group's statistics the page shows (`jsonld::write_script_safe` adds
/// the page's comments as the group's reviews).
pub(super) fn product_group<'a>(family: &'a Family, stats: &ProductStats) -> ProductGroup<'a> {
    let group = &family.group;
    ProductGroup {
        context: "https://schema.org",
        kind: "ProductGroup",
        name: group.name(),
        product_group_id: group.product_id.as_str(),
        url: group.record.as_ref().and_then(|r| r.url.as_deref()),
        has_variant: family
            .variants
            .iter()
            .map(|variant| jsonld::product(variant, &variant.overall))
            .collect(),
        aggregate_rating: jsonld::aggregate_rating(stats),
    }
}
