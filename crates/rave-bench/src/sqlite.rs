//! The relational peer: the same comments in SQLite (through rusqlite,
//! bundled), given its best shot. One row per comment; a composite index
//! for each access pattern, ending in the listing order (creation time,
//! then id) so a page is an index range read; keyset pagination with row
//! values; WAL; prepared statements cached on the connection; per-rating
//! counts both by `GROUP BY` and from a counter table kept in the same
//! transaction as each insert.

use std::path::Path;

use rave_comments::ImportComment;
use rusqlite::{Connection, params, params_from_iter};

/// A comment as a page returns it: owned, like rave's `Comment`.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub product: String,
    pub author: String,
    pub language: String,
    pub rating: i64,
    pub title: String,
    pub body: String,
    pub created_at: i64,
}

/// Where a keyset page starts: after this (created_at, id), newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After {
    pub created_at: i64,
    pub id: String,
}

impl After {
    /// Before every comment: the first page.
    pub fn start() -> After {
        After {
            created_at: i64::MAX,
            id: String::new(),
        }
    }

    fn of(row: &Row) -> After {
        After {
            created_at: row.created_at,
            id: row.id.clone(),
        }
    }
}

/// The listing filters: one language or all, any set of ratings.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub language: Option<String>,
    pub ratings: Vec<i64>,
}

/// How a multi-rating filter is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatingPlan {
    /// `rating IN (...)`, the query planner's choice of index.
    In,
    /// A UNION ALL of one keyset scan per rating, merged by SQLite.
    Union,
}

const COLUMNS: &str = "id, product, author, language, rating, title, body, created_at";
const INSERT: &str =
    "INSERT INTO comments (id, product, author, language, rating, title, body, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// Runs `INSERT` (prepared as `insert`) for `c`, stored under `id`.
fn insert_row(
    insert: &mut rusqlite::Statement<'_>,
    id: &str,
    c: &ImportComment,
) -> rusqlite::Result<usize> {
    insert.execute(params![
        id,
        c.product,
        c.comment.author,
        c.comment.language,
        c.comment.rating,
        c.comment.title.as_deref().unwrap_or_default(),
        c.comment.body,
        c.comment.created_at.map_or(0, |t| t.millis()),
    ])
}
const ORDER: &str = "ORDER BY created_at DESC, id DESC";

/// The SQLite peer.
#[derive(Debug)]
pub struct Sqlite {
    connection: Connection,
}

impl Sqlite {
    /// A new database in `path` (replacing any there).
    pub fn create(path: &Path) -> rusqlite::Result<Sqlite> {
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            // Absent files are the usual case.
            let _ = std::fs::remove_file(file);
        }
        let connection = Connection::open(path)?;
        connection.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA cache_size = -262144;
             CREATE TABLE comments (
                 id TEXT PRIMARY KEY,
                 product TEXT NOT NULL,
                 author TEXT NOT NULL,
                 language TEXT NOT NULL,
                 rating INTEGER NOT NULL,
                 title TEXT NOT NULL,
                 body TEXT NOT NULL,
                 created_at INTEGER NOT NULL
             ) WITHOUT ROWID;
             CREATE INDEX by_product ON comments (product, created_at, id);
             CREATE INDEX by_language ON comments (product, language, created_at, id);
             CREATE INDEX by_rating ON comments (product, rating, created_at, id);
             CREATE INDEX by_language_rating
                 ON comments (product, language, rating, created_at, id);
             CREATE TABLE rating_counts (
                 product TEXT NOT NULL,
                 language TEXT NOT NULL,
                 rating INTEGER NOT NULL,
                 n INTEGER NOT NULL,
                 PRIMARY KEY (product, language, rating)
             ) WITHOUT ROWID;",
        )?;
        connection.set_prepared_statement_cache_capacity(64);
        Ok(Sqlite { connection })
    }

    /// Inserts a batch in one transaction, counters included.
    pub fn insert(&mut self, batch: &[ImportComment]) -> rusqlite::Result<()> {
        let tx = self.connection.transaction()?;
        {
            let mut insert = tx.prepare_cached(INSERT)?;
            // The empty language counts every language.
            let mut count = tx.prepare_cached(
                "INSERT INTO rating_counts (product, language, rating, n) VALUES (?1, ?2, ?3, 1)
                 ON CONFLICT (product, language, rating) DO UPDATE SET n = n + 1",
            )?;
            for c in batch {
                insert_row(&mut insert, c.id.as_deref().unwrap_or_default(), c)?;
                count.execute(params![c.product, c.comment.language, c.comment.rating])?;
                count.execute(params![c.product, "", c.comment.rating])?;
            }
        }
        tx.commit()
    }

    /// Refreshes the planner's statistics, as one would after a bulk load.
    pub fn analyze(&self) -> rusqlite::Result<()> {
        self.connection.execute_batch("ANALYZE")
    }

    /// One page of `limit`, newest first, after `after`; also says whether
    /// more follow (one row more is read to know).
    pub fn page(
        &self,
        product: &str,
        filter: &Filter,
        plan: RatingPlan,
        after: &After,
        limit: usize,
    ) -> rusqlite::Result<(Vec<Row>, Option<After>)> {
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let keyset = |args: &mut Vec<rusqlite::types::Value>| {
            args.push(after.created_at.into());
            args.push(after.id.clone().into());
            format!("(created_at, id) < (?{}, ?{})", args.len() - 1, args.len())
        };
        let base = |args: &mut Vec<rusqlite::types::Value>| {
            args.push(product.to_owned().into());
            let mut clause = format!("product = ?{}", args.len());
            if let Some(language) = &filter.language {
                args.push(language.clone().into());
                clause.push_str(&format!(" AND language = ?{}", args.len()));
            }
            clause
        };
        let sql = match (filter.ratings.len(), plan) {
            (0, _) => {
                let base = base(&mut args);
                let keyset = keyset(&mut args);
                format!(
                    "SELECT {COLUMNS} FROM comments WHERE {base} AND {keyset} {ORDER} LIMIT {}",
                    limit + 1
                )
            }
            (1, _) | (_, RatingPlan::In) => {
                let base = base(&mut args);
                let mut marks = Vec::new();
                for r in &filter.ratings {
                    args.push((*r).into());
                    marks.push(format!("?{}", args.len()));
                }
                let keyset = keyset(&mut args);
                format!(
                    "SELECT {COLUMNS} FROM comments WHERE {base} AND rating IN ({}) AND {keyset} {ORDER} LIMIT {}",
                    marks.join(", "),
                    limit + 1
                )
            }
            (_, RatingPlan::Union) => {
                let parts: Vec<String> = filter
                    .ratings
                    .iter()
                    .map(|r| {
                        let base = base(&mut args);
                        args.push((*r).into());
                        let rating = args.len();
                        let keyset = keyset(&mut args);
                        format!(
                            "SELECT * FROM (SELECT {COLUMNS} FROM comments WHERE {base} AND rating = ?{rating} AND {keyset} {ORDER} LIMIT {})",
                            limit + 1
                        )
                    })
                    .collect();
                format!("{} {ORDER} LIMIT {}", parts.join(" UNION ALL "), limit + 1)
            }
        };
        let mut statement = self.connection.prepare_cached(&sql)?;
        let mut rows: Vec<Row> = statement
            .query_map(params_from_iter(args), read_row)?
            .collect::<rusqlite::Result<_>>()?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = if more {
            rows.last().map(After::of)
        } else {
            None
        };
        Ok((rows, next))
    }

    /// Page `page` (1-based) by OFFSET: what deep pagination costs without
    /// a keyset.
    pub fn page_by_offset(
        &self,
        product: &str,
        filter: &Filter,
        page: usize,
        limit: usize,
    ) -> rusqlite::Result<Vec<Row>> {
        let mut args: Vec<rusqlite::types::Value> = vec![product.to_owned().into()];
        let mut sql = format!("SELECT {COLUMNS} FROM comments WHERE product = ?1");
        if let Some(language) = &filter.language {
            args.push(language.clone().into());
            sql.push_str(&format!(" AND language = ?{}", args.len()));
        }
        if !filter.ratings.is_empty() {
            let marks: Vec<String> = filter
                .ratings
                .iter()
                .map(|r| {
                    args.push((*r).into());
                    format!("?{}", args.len())
                })
                .collect();
            sql.push_str(&format!(" AND rating IN ({})", marks.join(", ")));
        }
        args.push(((page.saturating_sub(1) * limit) as i64).into());
        sql.push_str(&format!(" {ORDER} LIMIT {limit} OFFSET ?{}", args.len()));
        let mut statement = self.connection.prepare_cached(&sql)?;
        statement
            .query_map(params_from_iter(args), read_row)?
            .collect()
    }

    /// Per-rating counts (index 0 = 1 star) by `GROUP BY` over the comments.
    pub fn counts_grouped(
        &self,
        product: &str,
        language: Option<&str>,
    ) -> rusqlite::Result<[u64; 5]> {
        let sql = match language {
            Some(_) => {
                "SELECT rating, count(*) FROM comments WHERE product = ?1 AND language = ?2 GROUP BY rating"
            }
            None => "SELECT rating, count(*) FROM comments WHERE product = ?1 GROUP BY rating",
        };
        let mut statement = self.connection.prepare_cached(sql)?;
        let rows = match language {
            Some(l) => statement
                .query_map(params![product, l], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?,
            None => statement
                .query_map(params![product], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?,
        };
        Ok(into_counts(rows))
    }

    /// Per-rating counts from the counter table.
    pub fn counts_maintained(
        &self,
        product: &str,
        language: Option<&str>,
    ) -> rusqlite::Result<[u64; 5]> {
        let mut statement = self.connection.prepare_cached(
            "SELECT rating, n FROM rating_counts WHERE product = ?1 AND language = ?2",
        )?;
        let rows = statement
            .query_map(params![product, language.unwrap_or_default()], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(into_counts(rows))
    }

    /// Bytes the database takes on disk (main file and write-ahead log).
    pub fn size_bytes(&self, path: &Path) -> u64 {
        files(path)
            .iter()
            .filter_map(|file| std::fs::metadata(file).ok().map(|m| m.len()))
            .sum()
    }
}

/// B6's peer: `threads` connections to the database at `path`, each
/// inserting one comment per transaction until `duration` has passed, in
/// WAL mode with `synchronous = FULL`, so an insert is durable when it
/// returns. `comment(thread, i)` gives the `i`-th comment of a thread.
/// Returns every insert's latency.
pub fn durable_inserts(
    path: &Path,
    threads: usize,
    duration: std::time::Duration,
    comment: impl Fn(usize, u64) -> ImportComment + Sync,
) -> anyhow::Result<crate::measure::Latencies> {
    use std::time::Instant;
    let deadline = Instant::now() + duration;
    let per_thread = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let comment = &comment;
                scope.spawn(move || -> anyhow::Result<Vec<std::time::Duration>> {
                    let connection = Connection::open(path)?;
                    connection.execute_batch(
                        "PRAGMA journal_mode = WAL;
                         PRAGMA synchronous = FULL;
                         PRAGMA busy_timeout = 60000;",
                    )?;
                    let mut insert = connection.prepare(INSERT)?;
                    let mut times = Vec::new();
                    for i in 0.. {
                        if Instant::now() >= deadline {
                            break;
                        }
                        let c = comment(thread, i);
                        let id = format!("durable-{thread}-{i}");
                        let started = Instant::now();
                        insert_row(&mut insert, &id, &c)?;
                        times.push(started.elapsed());
                    }
                    Ok(times)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .map_err(|_| anyhow::anyhow!("an insert thread panicked"))?
            })
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    Ok(crate::measure::Latencies::of(
        per_thread.into_iter().flatten().collect(),
    ))
}

/// The files of the database at `path` that exist: the main file, its
/// write-ahead log and the log's index.
pub fn files(path: &Path) -> Vec<std::path::PathBuf> {
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            std::path::PathBuf::from(file)
        })
        .filter(|file| file.exists())
        .collect()
}

impl Row {
    /// Whether this row is `comment`, field by field.
    pub fn is(&self, comment: &rave_comments::Comment) -> bool {
        self.id == comment.id
            && self.product == comment.product_id.as_str()
            && self.author == comment.author
            && self.language == comment.language.as_str()
            && self.rating == i64::from(comment.rating.get())
            && self.title == comment.title
            && self.body == comment.body
            && self.created_at == comment.created_at.millis()
    }
}

fn into_counts(rows: Vec<(i64, i64)>) -> [u64; 5] {
    let mut counts = [0u64; 5];
    for (rating, n) in rows {
        if (1..=5).contains(&rating) {
            counts[(rating - 1) as usize] = n.max(0) as u64;
        }
    }
    counts
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        id: r.get(0)?,
        product: r.get(1)?,
        author: r.get(2)?,
        language: r.get(3)?,
        rating: r.get(4)?,
        title: r.get(5)?,
        body: r.get(6)?,
        created_at: r.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rave_comments::dataset::Generator;

    fn loaded() -> (tempfile::TempDir, Sqlite, Vec<ImportComment>) {
        let dir = tempfile::tempdir().expect("dir");
        let mut db = Sqlite::create(&dir.path().join("c.db")).expect("db");
        let mut generator = Generator::new(3, 3_000, 9);
        let all: Vec<_> = (0..3_000).map(|_| generator.next_comment()).collect();
        for chunk in all.chunks(500) {
            db.insert(chunk).expect("insert");
        }
        db.analyze().expect("analyze");
        (dir, db, all)
    }

    /// Every walk, by either plan, returns exactly the brute-force answer
    /// in order; OFFSET pages agree with keyset pages; both counts agree
    /// with a recount.
    #[test]
    fn pages_and_counts_match_a_brute_force_answer() {
        let (_dir, db, all) = loaded();
        let filters = [
            Filter::default(),
            Filter {
                language: Some("en".into()),
                ratings: vec![],
            },
            Filter {
                language: None,
                ratings: vec![1, 5],
            },
            Filter {
                language: Some("de".into()),
                ratings: vec![2, 3, 4],
            },
        ];
        for filter in &filters {
            let mut expected: Vec<&ImportComment> = all
                .iter()
                .filter(|c| c.product == "p1")
                .filter(|c| {
                    filter
                        .language
                        .as_ref()
                        .is_none_or(|l| *l == c.comment.language)
                })
                .filter(|c| filter.ratings.is_empty() || filter.ratings.contains(&c.comment.rating))
                .collect();
            expected.sort_by(|a, b| {
                let key =
                    |c: &ImportComment| (c.comment.created_at.map(|t| t.millis()), c.id.clone());
                key(b).cmp(&key(a))
            });
            let expected: Vec<String> = expected.iter().filter_map(|c| c.id.clone()).collect();
            for plan in [RatingPlan::In, RatingPlan::Union] {
                let mut seen = Vec::new();
                let mut after = After::start();
                let mut page_no = 1;
                loop {
                    let (rows, next) = db.page("p1", filter, plan, &after, 20).expect("page");
                    let by_offset = db
                        .page_by_offset("p1", filter, page_no, 20)
                        .expect("offset");
                    assert_eq!(
                        rows.iter().map(|r| &r.id).collect::<Vec<_>>(),
                        by_offset.iter().map(|r| &r.id).collect::<Vec<_>>()
                    );
                    seen.extend(rows.into_iter().map(|r| r.id));
                    match next {
                        Some(next) => after = next,
                        None => break,
                    }
                    page_no += 1;
                }
                assert_eq!(seen, expected, "{filter:?} {plan:?}");
            }
            let language = filter.language.as_deref();
            let mut recount = [0u64; 5];
            for c in all
                .iter()
                .filter(|c| c.product == "p1" && language.is_none_or(|l| l == c.comment.language))
            {
                recount[(c.comment.rating - 1) as usize] += 1;
            }
            assert_eq!(db.counts_grouped("p1", language).expect("grouped"), recount);
            assert_eq!(
                db.counts_maintained("p1", language).expect("maintained"),
                recount
            );
        }
    }
}
