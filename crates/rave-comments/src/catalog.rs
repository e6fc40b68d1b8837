//! Products as a page shows them: the record an admin sets (display name,
//! page, image) and everything counted about the product, read together in
//! one query of the product's partition; and the revision caches compare.
//!
//! A page's ETag is built from the revision, so the overview read last is
//! kept per product (at most 4,096) and reused while the product's revision,
//! two point reads, is the one it was read at: the revision changes with
//! every write of the product's statistics or record and never returns to
//! an earlier value. The record's codec is `table::product`; `skus` writes
//! it with its SKUs' lookup items and finds products by SKU.
//!
//! **A variant asking its family's attributes.** A variant whose record
//! declares no attributes is asked what its group's record declares
//! (`DeclaredAttributes::effective`), so its form and bars change when the
//! group's record does: its overview carries the effective declaration
//! (`asked`), and its revision covers the group record's revision, read by
//! one more point read after the first two. Only such variants pay it; a
//! product in no family, a group, and a variant declaring its own keep the
//! two reads.

mod skus;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rave_store::Store;

use crate::access::TableAccess;
use crate::attributes::DeclaredAttributes;
use crate::error::Result;
use crate::model::{Language, ProductId, ProductRecord};
use crate::statistics::ProductStats;
use crate::table::product;
use crate::table::product_partition::{self, ProductItem};
use crate::table::stats::product::{self as product_stats, ProductCounts};

/// A product's record, statistics and revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductOverview {
    pub product_id: ProductId,
    pub record: Option<ProductRecord>,
    /// What its reviews are asked (`DeclaredAttributes::effective`: the
    /// record's own declaration, or its group's when it declares none).
    pub asked: DeclaredAttributes,
    /// All languages.
    pub overall: ProductStats,
    /// Each language with counted comments, by language code.
    pub languages: Vec<ProductStats>,
    /// Changes whenever anything a page of the product shows changes (up to
    /// the aggregator's lag) and never returns to an earlier value.
    pub revision: String,
}

impl ProductOverview {
    /// The display name: the record's, or the id until an admin sets one.
    pub fn name(&self) -> &str {
        self.record
            .as_ref()
            .map_or(self.product_id.as_str(), |r| r.name.as_str())
    }

    /// The statistics of one language (zero counts if it has none).
    pub fn in_language(&self, language: &Language) -> ProductStats {
        self.languages
            .iter()
            .find(|s| s.language.as_ref() == Some(language))
            .cloned()
            .unwrap_or_else(|| {
                ProductStats::of(
                    self.product_id.clone(),
                    Some(language.clone()),
                    &ProductCounts::default(),
                )
            })
    }
}

/// Items one query of a product's partition asks for. The partition holds
/// the record and one statistics item per language, so one short page
/// reads it whole: the engine answers short reads on the caller's thread
/// instead of handing them to its blocking pool, which costs a page more
/// than the read itself.
const OVERVIEW_PAGE: usize = 64;

/// Products whose overview [`Recent`] keeps; past it, an arbitrary one
/// makes room (about 2 KB each).
const RECENT_PRODUCTS: usize = 4096;

/// The overviews read last, by product. The revision says whether one
/// still holds: it changes with every write to the product's statistics
/// (all written in one transaction) and to its record, and never returns
/// to an earlier value. So an overview whose revision is the stored one is
/// what reading the partition again would give, and a page checks the
/// revision (two point reads) instead of decoding every statistics item of
/// the product.
#[derive(Debug, Default)]
struct Recent(Mutex<HashMap<ProductId, Arc<ProductOverview>>>);

impl Recent {
    fn at(&self, product: &ProductId, revision: &str) -> Option<Arc<ProductOverview>> {
        let recent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        recent
            .get(product)
            .filter(|o| o.revision == revision)
            .cloned()
    }

    fn keep(&self, overview: &Arc<ProductOverview>) {
        let mut recent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() >= RECENT_PRODUCTS && !recent.contains_key(&overview.product_id) {
            let evicted = recent.keys().next().cloned();
            if let Some(evicted) = evicted {
                recent.remove(&evicted);
            }
        }
        recent.insert(overview.product_id.clone(), Arc::clone(overview));
    }
}

#[derive(Debug)]
pub(crate) struct Catalog<S> {
    access: Arc<TableAccess<S>>,
    recent: Recent,
}

impl<S: Store> Catalog<S> {
    pub(crate) fn new(access: Arc<TableAccess<S>>) -> Catalog<S> {
        Catalog {
            access,
            recent: Recent::default(),
        }
    }

    /// Sets a product's record (with its SKUs' lookup items and its group
    /// membership); every page of the product changes revision.
    pub(crate) async fn put_record(&self, product: &str, record: ProductRecord) -> Result<()> {
        let product_id = ProductId::parse(product)?;
        let record = record.validate()?;
        self.write_record(&product_id, &record).await
    }

    /// Just the product's revision (as in its overview), from two point
    /// reads in one request: what a revalidation needs.
    pub(crate) async fn revision(&self, product: &str) -> Result<String> {
        self.revision_of(&ProductId::parse(product)?).await
    }

    async fn revision_of(&self, product_id: &ProductId) -> Result<String> {
        // Two point reads side by side; the statistics item (a few dozen
        // counts) is read in place for its revision alone, the record
        // (decoded whole) as an item.
        let stats_revision =
            self.access
                .get_reading(product_stats::key(product_id, None), true, |item| {
                    product_stats::decode_revision(item)
                });
        let record = self.access.get(product::key(product_id), true);
        let ((stats_revision, _), (record, _)) = futures::try_join!(stats_revision, record)?;
        let stats_revision = stats_revision.transpose()?.unwrap_or(0);
        let (record, record_revision) = match record.as_ref().map(product::decode).transpose()? {
            Some((record, revision)) => (Some(record), revision),
            None => (None, String::new()),
        };
        let family = self.family_declaration(record.as_ref()).await?;
        Ok(revision(stats_revision, &record_revision, family.as_ref()))
    }

    /// The declaration and revision of the group record a product's record
    /// falls back on (empty when the group has no record), read when the
    /// record declares no attributes and names a group; `None` otherwise.
    async fn family_declaration(
        &self,
        record: Option<&ProductRecord>,
    ) -> Result<Option<FamilyDeclaration>> {
        let Some(group) = record
            .map(ProductRecord::declaration_group)
            .transpose()?
            .flatten()
        else {
            return Ok(None);
        };
        let (item, _) = self.access.get(product::key(&group), true).await?;
        Ok(Some(match item {
            Some(item) => {
                let (group_record, revision) = product::decode(&item)?;
                FamilyDeclaration {
                    declared: group_record.attributes,
                    revision,
                }
            }
            None => FamilyDeclaration::default(),
        }))
    }

    /// The product's record and statistics (eventually consistent, as
    /// statistics are): the one read last while its revision holds, else
    /// read afresh.
    pub(crate) async fn overview(&self, product: &str) -> Result<Arc<ProductOverview>> {
        let product_id = ProductId::parse(product)?;
        let revision = self.revision_of(&product_id).await?;
        if let Some(known) = self.recent.at(&product_id, &revision) {
            return Ok(known);
        }
        let overview = Arc::new(self.read_overview(product_id).await?);
        self.recent.keep(&overview);
        Ok(overview)
    }

    /// The product's record and statistics, from one query of its partition.
    async fn read_overview(&self, product_id: ProductId) -> Result<ProductOverview> {
        let mut record = None;
        let mut record_revision = String::new();
        let mut overall = ProductCounts::default();
        let mut stats_revision = 0;
        let mut languages = Vec::new();
        let mut start = None;
        loop {
            let mut query = self
                .access
                .query_input(None, product_partition::partition(&product_id));
            query.exclusive_start_key = start.take();
            query.limit = Some(OVERVIEW_PAGE);
            let page = self.access.query(query).await?;
            for item in &page.items {
                match product_partition::classify(item)? {
                    ProductItem::Record => {
                        let (decoded, revision) = product::decode(item)?;
                        record = Some(decoded);
                        record_revision = revision;
                    }
                    ProductItem::Overall => {
                        overall = product_stats::decode(item)?;
                        stats_revision = product_stats::decode_revision(item)?;
                    }
                    ProductItem::Language(language) => {
                        languages.push(ProductStats::of(
                            product_id.clone(),
                            Some(language),
                            &product_stats::decode(item)?,
                        ));
                    }
                }
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => break,
            }
        }
        languages.retain(|s| s.total > 0);
        let family = self.family_declaration(record.as_ref()).await?;
        let asked = match &record {
            Some(record) => DeclaredAttributes::effective(
                &record.attributes,
                family.as_ref().map(|family| &family.declared),
            )
            .clone(),
            None => DeclaredAttributes::default(),
        };
        Ok(ProductOverview {
            overall: ProductStats::of(product_id.clone(), None, &overall),
            revision: revision(stats_revision, &record_revision, family.as_ref()),
            product_id,
            record,
            asked,
            languages,
        })
    }
}

/// What a variant declaring no attributes asks: its group record's
/// declaration, at the group record's revision (both empty when the group
/// has no record).
#[derive(Debug, Default)]
struct FamilyDeclaration {
    declared: DeclaredAttributes,
    revision: String,
}

/// The revision of a product: its statistics' and its record's, and the
/// group record's when the product asks its group's attributes.
fn revision(stats: u64, record: &str, family: Option<&FamilyDeclaration>) -> String {
    match family {
        Some(family) => format!("{stats}.{record}.{}", family.revision),
        None => format!("{stats}.{record}"),
    }
}
