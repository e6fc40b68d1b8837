//! Answers to sub-ratings and fit in a CSV import of a product family's
//! variants: a variant whose record declares nothing is checked against
//! its group's declaration, one declaring its own against that, and a bad
//! answer is reported by line and field with nothing of its row stored.

use rave_comments::{
    AttributeDeclaration, AttributeKind, AttributeName, Comments, Config, CursorKey,
    DeclaredAttributes, Language, Moderation, ProductRecord,
};
use rave_engine::Engine;
use rave_import::{CsvImport, Options, Platform, ProductMap, run};

/// Okendo's template columns and two answers; the handle is the product.
const EXPORT: &str = "name,body,handle,rating,dateCreated,Quality,Value\n\
    Ann,Red and good.,tee-red,5,2024-03-05,4,\n\
    Bo,Red asks no value.,tee-red,4,2024-03-06,,3\n\
    Cy,Blue asks value.,tee-blue,4,2024-03-07,,2\n\
    Di,Blue asks no quality.,tee-blue,3,2024-03-08,5,\n";

fn rating(name: &str) -> AttributeDeclaration {
    AttributeDeclaration {
        name: AttributeName::parse(name).unwrap(),
        kind: AttributeKind::Rating,
    }
}

/// `tee` declares `quality`; `tee-red` declares nothing, `tee-blue` its
/// own `value`.
async fn family() -> (Comments<Engine>, tempfile::TempDir) {
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
    for (product, group, declared) in [
        ("tee", None, vec![rating("quality")]),
        ("tee-red", Some("tee"), vec![]),
        ("tee-blue", Some("tee"), vec![rating("value")]),
    ] {
        let record = ProductRecord {
            name: product.into(),
            group: group.map(str::to_owned),
            attributes: DeclaredAttributes::new(declared).unwrap(),
            ..ProductRecord::default()
        };
        comments.put_product(product, record).await.unwrap();
    }
    (comments, dir)
}

#[tokio::test]
async fn a_grouped_variants_answers_are_checked_against_what_it_is_asked() {
    let (comments, _dir) = family().await;
    let mut mapping = Platform::Okendo.mapping();
    for assignment in ["Quality=attributes.quality", "Value=attributes.value"] {
        mapping.add(assignment).unwrap();
    }
    let options = Options {
        mapping,
        default_language: Some(Language::parse("en").unwrap()),
        products: ProductMap::default(),
    };
    let rows = CsvImport::new(EXPORT.as_bytes(), options).unwrap();
    let progress = run(&comments, rows, true, None, &mut |_| {}).await.unwrap();
    assert_eq!(
        (progress.imported, progress.skipped),
        (2, 2),
        "{progress:?}"
    );
    let refused: Vec<(u64, Option<&str>, &str)> = progress
        .errors
        .iter()
        .map(|e| (e.line, e.field, e.reason.split(':').next().unwrap()))
        .collect();
    assert_eq!(
        refused,
        [
            (3, Some("attributes"), "value"),
            (5, Some("attributes"), "quality")
        ],
        "{:?}",
        progress.errors
    );
    let (page, _) = comments.export_page(0, 1, None).await.unwrap();
    let mut stored: Vec<(String, String, Vec<String>)> = page
        .into_iter()
        .map(|c| {
            let answers = c
                .attributes
                .iter()
                .map(|(name, answer)| format!("{name}={}", answer.key()))
                .collect();
            (c.author, c.product_id.as_str().to_owned(), answers)
        })
        .collect();
    stored.sort();
    assert_eq!(
        stored,
        [
            ("Ann".into(), "tee-red".into(), vec!["quality=4".to_owned()]),
            ("Cy".into(), "tee-blue".into(), vec!["value=2".to_owned()]),
        ]
    );
}
