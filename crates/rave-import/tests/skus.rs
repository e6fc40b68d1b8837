//! Rows that name their product only by a SKU find it through the product
//! records' SKUs, in the runner, on the embedded engine: the same ids on
//! every import, and a SKU no record lists reported by line.

use std::collections::BTreeMap;

use rave_comments::{Comments, Config, CursorKey, Language, Moderation, ProductRecord};
use rave_engine::Engine;
use rave_import::{CsvImport, Options, Platform, ProductMap, Progress, run};

/// Okendo's template columns; each row names its product differently.
const EXPORT: &str = "name,body,handle,productId,rating,sku,dateCreated\n\
    Ann,Only a SKU names it.,,,5,MUG-BLUE,2024-03-05\n\
    Bo,A Shopify id rave cannot use and a SKU.,,gid://shopify/Product/7,4,PLATE 7/8,2024-03-06\n\
    Cy,A SKU no record lists.,,,2,NO-SUCH-SKU,2024-03-07\n\
    Di,A handle that is a product id wins over the SKU.,cup,,3,MUG-BLUE,2024-03-08\n\
    Ed,A mapped SKU wins over the records.,,,4,OLD-MUG,2024-03-09\n";

async fn shop() -> (Comments<Engine>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let comments = Comments::new(
        Engine::open(dir.path()).unwrap(),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([7; 32]),
            moderation: Moderation::Off,
        },
    );
    comments.ensure_table().await.unwrap();
    for (product, skus) in [
        ("blue-mug", &["MUG-BLUE", "OLD-MUG"][..]),
        ("plate", &["PLATE 7/8"][..]),
    ] {
        let record = ProductRecord {
            name: product.into(),
            skus: skus.iter().map(|s| (*s).to_owned()).collect(),
            ..ProductRecord::default()
        };
        comments.put_product(product, record).await.unwrap();
    }
    (comments, dir)
}

async fn import(comments: &Comments<Engine>) -> Progress {
    let options = Options {
        mapping: Platform::Okendo.mapping(),
        default_language: Some(Language::parse("en").unwrap()),
        products: ProductMap::read("OLD-MUG,legacy-mug\n".as_bytes()).unwrap(),
    };
    let rows = CsvImport::new(EXPORT.as_bytes(), options).unwrap();
    run(comments, rows, true, None, &mut |_| {}).await.unwrap()
}

/// Each stored comment's author → (product, id).
async fn stored(comments: &Comments<Engine>) -> BTreeMap<String, (String, String)> {
    let (page, _) = comments.export_page(0, 1, None).await.unwrap();
    page.into_iter()
        .map(|c| (c.author, (c.product_id.as_str().to_owned(), c.id)))
        .collect()
}

#[tokio::test]
async fn a_sku_finds_the_product_whose_record_lists_it() {
    let (comments, _dir) = shop().await;
    let first = import(&comments).await;
    assert_eq!((first.imported, first.skipped), (4, 1), "{first:?}");
    let error = &first.errors[0];
    assert_eq!((error.line, error.field), (4, Some("sku")));
    assert!(
        error.reason.contains("\"NO-SUCH-SKU\"") && error.reason.contains("no product record"),
        "{error}"
    );
    let after = stored(&comments).await;
    let products: Vec<(&str, &str)> = after
        .iter()
        .map(|(author, (product, _))| (author.as_str(), product.as_str()))
        .collect();
    assert_eq!(
        products,
        [
            ("Ann", "blue-mug"),
            ("Bo", "plate"),
            ("Di", "cup"),
            ("Ed", "legacy-mug")
        ]
    );

    // The same file again: the rows found by SKU get the same ids.
    let again = import(&comments).await;
    assert_eq!((again.imported, again.already_present), (0, 4), "{again:?}");
    assert_eq!(stored(&comments).await, after);
}

#[tokio::test]
async fn reading_alone_leaves_a_skus_product_to_the_runner() {
    let options = Options {
        mapping: Platform::Okendo.mapping(),
        default_language: Some(Language::parse("en").unwrap()),
        products: ProductMap::default(),
    };
    let rows: Vec<_> = CsvImport::new(EXPORT.as_bytes(), options)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let pending: Vec<Option<&str>> = rows.iter().map(|r| r.sku_to_resolve()).collect();
    assert_eq!(
        pending,
        [
            Some("MUG-BLUE"),
            Some("PLATE 7/8"),
            Some("NO-SUCH-SKU"),
            None,
            Some("OLD-MUG")
        ]
    );
    assert_eq!(rows[0].comment.id, None);
    assert_eq!(rows[3].comment.product, "cup");
}
