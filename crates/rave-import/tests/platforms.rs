//! Each platform's export, in its documented columns, read with every
//! field mapped; and CSV as spreadsheets and shops really write it.

use rave_comments::{Language, ProductId, Status, Timestamp};
use rave_import::{CsvImport, ImportError, ImportRow, Mapping, Options, Platform, ProductMap};

fn options(mapping: Mapping, default_language: Option<&str>, products: &str) -> Options {
    Options {
        mapping,
        default_language: default_language.map(|l| Language::parse(l).unwrap()),
        products: ProductMap::read(products.as_bytes()).unwrap(),
    }
}

fn read(input: &[u8], options: Options) -> Vec<ImportRow> {
    CsvImport::new(input, options)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn fixture(platform: Platform) -> Vec<ImportRow> {
    let path = format!(
        "{}/tests/fixtures/{}.csv",
        env!("CARGO_MANIFEST_DIR"),
        platform.name()
    );
    let products = "gid://shopify/Product/7,plate-7\nSKU-PLATE,plate\n";
    read(
        &std::fs::read(path).unwrap(),
        options(platform.mapping(), Some("en"), products),
    )
}

fn time(t: &str) -> Timestamp {
    Timestamp::parse(t).unwrap()
}

#[test]
fn okendo_template_rows_map_every_field() {
    let rows = fixture(Platform::Okendo);
    assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 3, 4]);
    let ann = &rows[0].comment;
    assert_eq!(ann.product, "blue-mug");
    assert_eq!(ann.comment.author, "Ann Lee");
    assert_eq!(ann.email.as_ref().unwrap().as_str(), "ann@example.com");
    assert_eq!(ann.comment.rating, 5);
    assert_eq!(ann.comment.body, "Sturdy mug, keeps coffee hot.");
    assert_eq!(
        ann.comment.created_at,
        Some(time("2024-03-05T14:30:00.000Z"))
    );
    assert_eq!(
        ann.image_urls,
        [
            "https://cdn.example.com/a.jpg",
            "https://cdn.example.com/b.jpg"
        ]
    );
    assert_eq!(ann.source.as_ref().unwrap().as_str(), "okendo");
    assert_eq!(ann.status, Some(Status::Published));
    // By product id through the map; the language detected from the text.
    let bo = &rows[1].comment;
    assert_eq!(bo.product, "plate-7");
    assert_eq!(bo.comment.language, "de");
    // By SKU through the map; too short to detect: the default language.
    let cy = &rows[2].comment;
    assert_eq!(cy.product, "plate");
    assert_eq!(cy.comment.language, "en");
    assert_eq!(cy.email, None);
}

#[test]
fn judgeme_rows_map_reply_verified_and_hidden() {
    let rows = fixture(Platform::JudgeMe);
    let ann = &rows[0].comment;
    assert_eq!(ann.comment.title.as_deref(), Some("Great mug"));
    assert_eq!(ann.comment.author, "Ann Lee");
    assert_eq!(ann.email.as_ref().unwrap().as_str(), "ann@example.com");
    let reply = ann.reply.as_ref().unwrap();
    assert_eq!(reply.body, "Thank you, Ann!");
    assert_eq!(reply.created_at, time("2024-03-06T08:00:00.000Z"));
    assert!(ann.verified_purchase);
    assert_eq!(ann.status, Some(Status::Published));
    let dan = &rows[1].comment;
    assert!(!dan.verified_purchase);
    assert_eq!(dan.status, Some(Status::Pending), "hidden");
    assert_eq!(dan.reply, None);
}

#[test]
fn yotpo_rows_map_published_and_the_stores_comment() {
    let rows = fixture(Platform::Yotpo);
    let ann = &rows[0].comment;
    assert_eq!(ann.product, "blue-mug");
    assert_eq!(ann.comment.rating, 5);
    assert_eq!(ann.comment.title.as_deref(), Some("Great mug"));
    assert_eq!(
        ann.reply.as_ref().unwrap().body,
        "Thanks for the kind words!"
    );
    assert_eq!(
        ann.comment.created_at,
        Some(time("2024-03-05T00:00:00.000Z"))
    );
    assert_eq!(rows[1].comment.status, Some(Status::Pending));
    assert_eq!(
        rows[1].comment.email.as_ref().unwrap().as_str(),
        "eve@example.com"
    );
}

#[test]
fn shopify_rows_map_state_offsets_and_reply_date() {
    let rows = fixture(Platform::Shopify);
    let ann = &rows[0].comment;
    assert_eq!(
        ann.comment.created_at,
        Some(time("2024-03-05T19:30:00.000Z"))
    );
    assert_eq!(
        ann.reply.as_ref().unwrap().created_at,
        time("2024-03-06T15:00:00.000Z")
    );
    assert_eq!(ann.comment.language, "en");
    assert_eq!(rows[1].comment.status, Some(Status::Pending), "unpublished");
    assert_eq!(rows[1].line, 3);
}

#[test]
fn the_same_file_gives_the_same_ids_and_different_rows_different_ones() {
    let first = fixture(Platform::Okendo);
    let again = fixture(Platform::Okendo);
    let ids = |rows: &[ImportRow]| -> Vec<String> {
        rows.iter().map(|r| r.comment.id.clone().unwrap()).collect()
    };
    assert_eq!(ids(&first), ids(&again));
    let mut distinct = ids(&first);
    distinct.dedup();
    assert_eq!(distinct.len(), 3);
    // The same review from another platform is another row.
    assert_ne!(ids(&first)[0], ids(&fixture(Platform::JudgeMe))[0]);
}

#[test]
fn hostile_csv_as_spreadsheets_write_it() {
    // A byte order mark, `;` separators, CRLF, quoted separators, quotes
    // and newlines, a header with spaces around a name.
    let input = "\u{feff}Name ; Stars;Text;Product;When\r\n\
                 \"O'Brien; \"\"Bob\"\"\";4;\"Line one;\r\nline \"\"two\"\", with, commas\";mug;2024-01-02\r\n\
                 Zoë;5;\"<script>alert(1)</script>\";mug;2024-01-03\r\n";
    let mut mapping = Mapping::generic();
    for map in [
        "Name=author",
        "Stars=rating",
        "Text=body",
        "Product=product_id",
        "When=date",
    ] {
        mapping.add(map).unwrap();
    }
    let rows = read(input.as_bytes(), options(mapping, Some("en"), ""));
    assert_eq!(rows.len(), 2);
    let bob = &rows[0].comment;
    assert_eq!(bob.comment.author, "O'Brien; \"Bob\"");
    assert_eq!(bob.comment.body, "Line one;\r\nline \"two\", with, commas");
    assert_eq!(bob.source.as_ref().unwrap().as_str(), "csv");
    assert_eq!(rows[1].line, 4, "the quoted newline counts as a line");
    assert_eq!(rows[1].comment.comment.body, "<script>alert(1)</script>");
    assert_eq!(
        ProductId::parse(&rows[1].comment.product).unwrap().as_str(),
        "mug"
    );
}

#[test]
fn bad_rows_are_named_by_line_and_field_and_reading_goes_on() {
    let input = "name,body,handle,rating,dateCreated,email\n\
                 Ann,Good,mug,5,2024-01-02,ann@example.com\n\
                 Bo,Bad rating,mug,7,2024-01-02,\n\
                 Cy,Bad date,mug,3,someday,\n\
                 Di,Bad product,a/b,3,2024-01-02,\n\
                 Ed,Bad email,mug,3,2024-01-02,not-an-address\n\
                 Fy,Fine again,mug,4,2024-01-05,\n";
    let rows: Vec<_> = CsvImport::new(
        input.as_bytes(),
        options(Platform::Okendo.mapping(), Some("en"), ""),
    )
    .unwrap()
    .collect();
    let errors: Vec<_> = rows
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|e| (e.line, e.field.unwrap()))
        .collect();
    assert_eq!(
        errors,
        [(3, "rating"), (4, "date"), (5, "product_id"), (6, "email")]
    );
    assert!(
        rows[2]
            .as_ref()
            .unwrap_err()
            .to_string()
            .starts_with("line 4: date: ")
    );
    assert_eq!(rows.iter().filter(|r| r.is_ok()).count(), 2);
    // Without a language of its own, a short text needs --language.
    let no_default: Vec<_> = CsvImport::new(
        input.as_bytes(),
        options(Platform::Okendo.mapping(), None, ""),
    )
    .unwrap()
    .collect();
    assert_eq!(no_default[0].as_ref().unwrap_err().field, Some("language"));
}

#[test]
fn a_header_without_a_needed_column_is_refused_before_any_row() {
    let error = CsvImport::new(
        "name,body,handle,rating\nAnn,Good,mug,5\n".as_bytes(),
        options(Platform::Okendo.mapping(), Some("en"), ""),
    )
    .unwrap_err();
    assert!(
        matches!(&error, ImportError::MissingColumn { column, field: "date", .. } if column == "dateCreated"),
        "{error}"
    );
    let error = CsvImport::new(
        "a,b\n1,2\n".as_bytes(),
        options(Mapping::generic(), Some("en"), ""),
    )
    .unwrap_err();
    assert!(error.to_string().contains("--map"), "{error}");
}

#[test]
fn a_review_id_column_keys_the_row_whatever_its_text() {
    let mut mapping = Mapping::generic();
    for map in [
        "Id=review_id",
        "Who=author",
        "Stars=rating",
        "Text=body",
        "Item=handle",
        "When=date",
    ] {
        mapping.add(map).unwrap();
    }
    let read_one = |text: &str, stars: u8| {
        let csv = format!("Id,Who,Stars,Text,Item,When\nr-1,Ann,{stars},{text},mug,2024-01-02\n");
        read(csv.as_bytes(), options(mapping.clone(), Some("en"), ""))[0]
            .comment
            .id
            .clone()
    };
    assert_eq!(read_one("Fine", 4), read_one("Edited later", 5));
    let mut by_content = Platform::Okendo.mapping();
    by_content
        .columns
        .retain(|(_, field)| *field != rave_import::Field::ReviewId);
    let content = |stars: u8| {
        let csv = format!("name,body,handle,rating,dateCreated\nAnn,Fine,mug,{stars},2024-01-02\n");
        read(csv.as_bytes(), options(by_content.clone(), Some("en"), ""))[0]
            .comment
            .id
            .clone()
    };
    assert_ne!(content(4), content(5));
}

#[test]
fn a_mapped_incentivized_column_marks_reviews_and_a_bad_value_names_the_field() {
    let mut mapping = Platform::Okendo.mapping();
    mapping.add("Reward=incentivized").unwrap();
    let csv = "name,body,handle,rating,dateCreated,Reward\n\
               Ann,Free sample,mug,5,2024-01-02,yes\n\
               Bob,Bought it,mug,4,2024-01-03,\n\
               Cy,Paid,mug,3,2024-01-04,no\n\
               Di,Odd,mug,3,2024-01-05,perhaps\n";
    let rows: Vec<_> = CsvImport::new(csv.as_bytes(), options(mapping, Some("en"), ""))
        .unwrap()
        .collect();
    let marked: Vec<bool> = rows[..3]
        .iter()
        .map(|row| row.as_ref().unwrap().comment.incentivized)
        .collect();
    assert_eq!(marked, [true, false, false]);
    let error = rows[3].as_ref().unwrap_err();
    assert_eq!((error.line, error.field), (5, Some("incentivized")));
    // No platform's own mapping reads such a column.
    for platform in Platform::ALL {
        assert!(
            platform
                .mapping()
                .columns
                .iter()
                .all(|(_, field)| *field != rave_import::Field::Incentivized)
        );
    }
}
