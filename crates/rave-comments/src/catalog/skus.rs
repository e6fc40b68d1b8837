//! A product record with its SKUs' lookup items (`table::sku`) and its
//! group membership (`families`), and products found by SKU.
//!
//! A record is written in one transaction with its membership change and
//! the lookup items of the
//! SKUs it gains (each on the condition that no product holds it) and the
//! deletion of those it drops (each on the condition that it is still
//! this product's), on the condition that the record is the one read: so
//! the lookup items always match the stored records, and two writes of
//! one product cannot leave a SKU pointing at a record that no longer
//! lists it. A SKU another product holds is refused (`Conflict`, naming
//! the product); a write that lost a race reads again and tries again. A
//! record stored before SKUs had lookup items gets them at its next write.

use std::collections::{BTreeSet, HashMap};
use std::time::SystemTime;

use rave_store::{CancellationReason, Store, StoreError};
use ulid::Ulid;

use super::Catalog;
use crate::error::{CommentsError, Result};
use crate::families;
use crate::model::{ProductId, ProductRecord, Sku};
use crate::table::{product, sku};

/// Reads and writes of one record before a write that keeps losing races
/// to other writes of the same product gives up (503, to be retried).
const ATTEMPTS: usize = 4;

impl<S: Store> Catalog<S> {
    /// Writes `record` (validated) as `product_id`'s, with its SKUs'
    /// lookup items.
    pub(super) async fn write_record(
        &self,
        product_id: &ProductId,
        record: &ProductRecord,
    ) -> Result<()> {
        let wanted: BTreeSet<Sku> = record.skus.iter().filter_map(|s| Sku::parse(s)).collect();
        for _ in 0..ATTEMPTS {
            let (stored, _) = self.access.get(product::key(product_id), true).await?;
            let previous = stored.as_ref().map(product::decode).transpose()?;
            let mut membership = families::membership(
                &self.access,
                product_id,
                record,
                previous.as_ref().map(|(old, _)| old),
            )
            .await?;
            let dropped: BTreeSet<Sku> = previous
                .iter()
                .flat_map(|(old, _)| old.skus.iter().filter_map(|s| Sku::parse(s)))
                .filter(|s| !wanted.contains(s))
                .collect();
            let holders = self
                .holders(wanted.iter().chain(&dropped).cloned().collect())
                .await?;
            let mut actions = vec![self.access.put_action(
                product::encode(
                    product_id,
                    record,
                    &Ulid::from_datetime(SystemTime::now()).to_string(),
                ),
                Some(product::unchanged(
                    previous.as_ref().map(|(_, revision)| revision.as_str()),
                )),
            )];
            let membership_at = actions.len();
            actions.append(&mut membership.actions);
            for claimed in &wanted {
                match holders.get(claimed) {
                    Some(holder) if holder == product_id => {}
                    Some(holder) => return Err(taken(record, claimed, holder)),
                    None => actions.push(
                        self.access
                            .put_action(sku::encode(claimed, product_id), Some(sku::unclaimed())),
                    ),
                }
            }
            for released in &dropped {
                if holders.get(released) == Some(product_id) {
                    actions.push(
                        self.access
                            .delete_action(sku::key(released), Some(sku::held_by(product_id))),
                    );
                }
            }
            match self.access.transact(actions).await {
                Ok(()) => return Ok(()),
                Err(StoreError::TransactionCanceled(reasons))
                    if reasons.contains(&CancellationReason::ConditionalCheckFailed) =>
                {
                    if let Some(refusal) = membership.refusal(product_id, &reasons, membership_at) {
                        return Err(refusal);
                    }
                    // The record, a SKU or a group changed since it was
                    // read: read again.
                }
                Err(error) => return Err(error.into()),
            }
        }
        Err(StoreError::TransactionConflict(format!(
            "product {product_id}'s record kept changing while it was written"
        ))
        .into())
    }

    /// The product holding each of `skus` that one does (a value no record
    /// can hold as a SKU holds none).
    pub(crate) async fn products_by_sku(
        &self,
        skus: &[&str],
    ) -> Result<HashMap<String, ProductId>> {
        let skus: BTreeSet<Sku> = skus.iter().filter_map(|s| Sku::parse(s)).collect();
        Ok(self
            .holders(skus)
            .await?
            .into_iter()
            .map(|(sku, product)| (sku.as_str().to_owned(), product))
            .collect())
    }

    async fn holders(&self, skus: BTreeSet<Sku>) -> Result<HashMap<Sku, ProductId>> {
        let keys: Vec<_> = skus.iter().map(sku::key).collect();
        self.access
            .get_many(&keys)
            .await?
            .iter()
            .map(|item| sku::decode(item).map_err(CommentsError::from))
            .collect()
    }
}

/// The refusal of a SKU that another product's record lists.
fn taken(record: &ProductRecord, sku: &Sku, holder: &ProductId) -> CommentsError {
    let at = record
        .skus
        .iter()
        .position(|s| s == sku.as_str())
        .unwrap_or_default();
    CommentsError::Conflict(format!(
        "skus: [{at}]: {:?} is a SKU of product {holder}; remove it from that product's record first",
        sku.as_str()
    ))
}
