//! Which rave product a row is about. A row names its product by the
//! shop's product id, its handle or a SKU; the product map
//! (`--product-map`, a two-column CSV `identifier,product_id`) turns any of
//! them into a rave product id, a product id or handle that is a valid
//! rave product id as it is needs no entry, and a SKU is otherwise looked
//! up in the product records' SKUs (by the runner, a batch at a time:
//! [`Resolution::BySku`]).

use std::collections::HashMap;
use std::io::Read;

use rave_comments::ProductId;

use crate::error::ImportError;

#[derive(Debug, Clone, Default)]
pub struct ProductMap {
    products: HashMap<String, ProductId>,
}

/// How a row names its product (each may be absent).
#[derive(Debug, Default)]
pub(crate) struct ProductRef<'a> {
    pub id: Option<&'a str>,
    pub handle: Option<&'a str>,
    pub sku: Option<&'a str>,
}

impl ProductMap {
    /// Reads `identifier,product_id` lines (no header; `#` starts a
    /// comment line). The identifier is a product id, handle or SKU as the
    /// export writes it.
    pub fn read(input: impl Read) -> Result<ProductMap, ImportError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .comment(Some(b'#'))
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(input);
        let mut products = HashMap::new();
        for record in reader.records() {
            let record = record.map_err(|e| ImportError::ProductMap {
                line: e.position().map_or(0, csv::Position::line),
                reason: e.to_string(),
            })?;
            let line = record.position().map_or(0, csv::Position::line);
            let (Some(identifier), Some(product), 2) = (record.get(0), record.get(1), record.len())
            else {
                return Err(ImportError::ProductMap {
                    line,
                    reason: "expected two columns: identifier,product_id".into(),
                });
            };
            let product = ProductId::parse(product).map_err(|e| ImportError::ProductMap {
                line,
                reason: e.to_string(),
            })?;
            products.insert(identifier.to_owned(), product);
        }
        Ok(ProductMap { products })
    }

    /// Adds one entry: `identifier` (a product id, handle or SKU of the
    /// export) is `product` here.
    pub fn insert(&mut self, identifier: &str, product: ProductId) {
        self.products.insert(identifier.to_owned(), product);
    }

    /// The rave product of a row: a mapped identifier (product id, then
    /// handle, then SKU), else the product id or handle itself when it is a
    /// valid rave product id, else the SKU, to be looked up in the product
    /// records.
    pub(crate) fn resolve(&self, named: &ProductRef<'_>) -> Result<Resolution, String> {
        let candidates = [named.id, named.handle, named.sku];
        if let Some(product) = candidates
            .iter()
            .flatten()
            .find_map(|identifier| self.products.get(*identifier))
        {
            return Ok(Resolution::Product(product.clone()));
        }
        if let Some(product) = [named.id, named.handle]
            .iter()
            .flatten()
            .find_map(|identifier| ProductId::parse(identifier).ok())
        {
            return Ok(Resolution::Product(product));
        }
        let given: Vec<String> = [
            ("product id", named.id),
            ("handle", named.handle),
            ("sku", named.sku),
        ]
        .into_iter()
        .filter_map(|(what, value)| value.map(|v| format!("{what} {v:?}")))
        .collect();
        if given.is_empty() {
            return Err("the row names no product (product id, handle or SKU)".to_owned());
        }
        let unknown = format!(
            "{} is not a rave product id (1-64 of A-Z a-z 0-9 _ -), not in --product-map",
            given.join(", ")
        );
        match named.sku {
            Some(sku) => Ok(Resolution::BySku {
                sku: sku.to_owned(),
                unknown: format!("{unknown}, and no product record lists the SKU"),
            }),
            None => Err(unknown),
        }
    }
}

/// Where a row's product comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    Product(ProductId),
    /// The product whose record lists `sku`; `unknown` is the row's error
    /// when none does.
    BySku {
        sku: String,
        unknown: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_resolve_through_the_map_or_as_they_are() {
        let map =
            ProductMap::read("# from,to\nSKU-1,mug\ngid://shopify/Product/7,plate\n".as_bytes())
                .unwrap();
        let resolve = |id, handle, sku| map.resolve(&ProductRef { id, handle, sku });
        let product = |id, handle, sku| match resolve(id, handle, sku) {
            Ok(Resolution::Product(product)) => product.as_str().to_owned(),
            other => panic!("{other:?}"),
        };
        assert_eq!(product(None, None, Some("SKU-1")), "mug");
        assert_eq!(
            product(Some("gid://shopify/Product/7"), Some("blue-plate"), None),
            "plate"
        );
        assert_eq!(
            product(None, Some("blue-plate"), Some("SKU-2")),
            "blue-plate"
        );
        // A SKU nothing else resolves is for the product records.
        match resolve(Some("gid://shopify/Product/9"), None, Some("SKU-2")).unwrap() {
            Resolution::BySku { sku, unknown } => {
                assert_eq!(sku, "SKU-2");
                assert!(unknown.contains("gid://shopify/Product/9"), "{unknown}");
                assert!(unknown.contains("no product record lists"), "{unknown}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            resolve(Some("a/b"), None, None)
                .unwrap_err()
                .contains("a/b")
        );
        assert!(resolve(None, None, None).is_err());
        let bad = ProductMap::read("a,b,c\n".as_bytes()).unwrap_err();
        assert!(
            matches!(bad, ImportError::ProductMap { line: 1, .. }),
            "{bad}"
        );
        assert!(ProductMap::read("a,b/c\n".as_bytes()).is_err());
    }
}
