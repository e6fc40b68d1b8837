//! B2 and B4 for a product family: a group of the data set's first 20
//! products (`p1`, the hot one, to `p20`: Zipf-skewed, as a shop's
//! variants are, one colour selling most), listed from the family's own
//! index entries (`rave_comments`' `listing::group`). The products join
//! the group after their comments were loaded, so the moves' jobs put the
//! comments in the family first: what that costs is a row too.

use std::time::Instant;

use rave_comments::{Comments, Filter, ListRequest, ProductRecord, Rating, RatingSet, Sort};
use rave_engine::Engine;
use tokio::runtime::Runtime;

use crate::measure::{deep_against_first, deep_cell, show};
use crate::plan::Plan;
use crate::report::Row;

const GROUP: &str = "family";
const VARIANTS: u64 = 20;
const PAGE: usize = 20;

fn page(
    rt: &Runtime,
    comments: &Comments<Engine>,
    filter: &Filter,
    sort: Sort,
    cursor: Option<&str>,
) -> rave_comments::Result<rave_comments::ListPage> {
    rt.block_on(comments.list_group(&ListRequest {
        sort,
        product: GROUP,
        filter: filter.clone(),
        limit: PAGE,
        cursor,
    }))
}

/// Makes `p1`…`p20` the variants of one group and runs the moves' jobs,
/// then measures its listing: page `deep` ÷ page 1 (B2) and items read ÷
/// returned over the first 50 pages and on the worst of them (B4), newest
/// first, highest first and most helpful first, without a filter and with
/// ratings 1 and 5.
pub fn groups(
    plan: &Plan,
    rt: &Runtime,
    comments: &Comments<Engine>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    for variant in 1..=VARIANTS {
        let record = ProductRecord {
            name: format!("Variant {variant}"),
            group: Some(GROUP.into()),
            ..ProductRecord::default()
        };
        rt.block_on(comments.put_product(&format!("p{variant}"), record))?;
    }
    let units = comments.usage().write_units();
    let started = Instant::now();
    let moved = rt.block_on(comments.run_pending_moves())?;
    let took = started.elapsed();
    let written = comments.usage().write_units() - units;
    println!("moves of {moved} products into the group: {took:?}, {written} write units");
    rows.push(Row::new(
        "B10",
        format!("{VARIANTS} products moved into a group: their move jobs"),
        format!("{}, {written:.0} write units", show(took)),
    ));
    let deep = plan.deep_page;
    let extremes = RatingSet::from_ratings([Rating::new(1)?, Rating::new(5)?]);
    for (name, ratings) in [
        ("all ratings", RatingSet::default()),
        ("ratings 1, 5", extremes),
    ] {
        let filter = Filter {
            ratings,
            ..Filter::default()
        };
        for sort in [Sort::Newest, Sort::Highest, Sort::Helpful] {
            let label = format!(
                "group of {VARIANTS} variants, sort={} {name}",
                sort.as_str()
            );
            println!("{label}: page 1 and page {deep}");
            let mut cursor = None;
            let (mut read, mut returned) = (0usize, 0usize);
            let mut worst = 0f64;
            let mut deep_cursor = None;
            for number in 1..deep.max(51) {
                let listed = page(rt, comments, &filter, sort, cursor.as_deref())?;
                if number <= 50 {
                    read += listed.plan.items_read;
                    returned += listed.items.len();
                    if !listed.items.is_empty() {
                        worst =
                            worst.max(listed.plan.items_read as f64 / listed.items.len() as f64);
                    }
                }
                cursor = listed.next_cursor;
                if number + 1 == deep {
                    deep_cursor = cursor.clone();
                }
                if cursor.is_none() {
                    break;
                }
            }
            anyhow::ensure!(
                deep_cursor.is_some(),
                "the group has fewer than {deep} pages"
            );
            let (first, deeper, ratios) = deep_against_first(plan.iterations, |deep| {
                page(
                    rt,
                    comments,
                    &filter,
                    sort,
                    deep_cursor.as_deref().filter(|_| deep),
                )
            })?;
            let deep_ratio = ratios.median();
            rows.push(
                Row::new(
                    "B2",
                    format!("{label}: page {deep} ÷ page 1"),
                    deep_cell(&first, &deeper, &ratios),
                )
                .target("≤ 1.2 in every round", ratios.highest() <= 1.2),
            );
            let amplification = read as f64 / returned.max(1) as f64;
            println!("  B2 {deep_ratio:.2}, B4 {amplification:.2} (worst page {worst:.2})");
            rows.push(
                Row::new(
                    "B4",
                    format!("{label}: items read ÷ returned, first 50 pages (worst page)"),
                    format!("{amplification:.2} ({worst:.2})"),
                )
                .target("≤ 1.3 every page", worst <= 1.3),
            );
        }
    }
    Ok(())
}
