//! Query strings, read once for every route: the JSON API's and the
//! product pages'. A listing's parameters (`language`, `rating`, `cursor`,
//! and for the API `verified`, `sort`, `limit`, `explain`) are read by one
//! parser into the domain's types, so a page and the API accept the same
//! values and refuse the rest with the same words.
//!
//! The two kinds of route differ only in what they make of the query
//! around those values ([`Dialect`]): the API refuses what it does not
//! know, a page's URL carries what shops and crawlers add.

use rave_comments::{
    DEFAULT_PAGE_SIZE, Filter, Language, ListRequest, Rating, RatingSet, Sort, check_page_size,
};

use crate::error::{ApiError, ApiResult};

/// How a route reads the parameters of its query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// The JSON API: a parameter it does not know is refused, each may be
    /// given once, and an empty value is a value (and may be refused).
    Api,
    /// A page's URL, which shops and crawlers add their own parameters to:
    /// those are ignored, an empty value means the parameter is absent,
    /// and of a repeated one the last counts.
    Page,
}

/// The parameters of one query string that a route knows.
#[derive(Debug)]
pub(crate) struct Params {
    pairs: Vec<(String, String)>,
    dialect: Dialect,
}

impl Params {
    /// The parameters of `raw` named in `known`, read as `dialect` says.
    pub(crate) fn new(raw: Option<&str>, known: &[&str], dialect: Dialect) -> ApiResult<Params> {
        let mut pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("query: {e}")))?;
        match dialect {
            Dialect::Api => {
                if let Some((name, _)) = pairs
                    .iter()
                    .find(|(name, _)| !known.contains(&name.as_str()))
                {
                    return Err(ApiError::bad_request(format!(
                        "{name}: unknown query parameter (expected one of {})",
                        known.join(", ")
                    )));
                }
            }
            Dialect::Page => {
                pairs.retain(|(name, value)| known.contains(&name.as_str()) && !value.is_empty());
            }
        }
        Ok(Params { pairs, dialect })
    }

    /// Every value of the parameter `name`, in the query's order (a
    /// repeatable parameter's).
    pub(crate) fn all<'a>(&'a self, name: &str) -> Vec<&'a str> {
        self.pairs
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The value of a parameter that takes one.
    pub(crate) fn value<'a>(&'a self, name: &str) -> ApiResult<Option<&'a str>> {
        let mut values = self.all(name).into_iter();
        match self.dialect {
            Dialect::Api => {
                let first = values.next();
                if values.next().is_some() {
                    return Err(ApiError::bad_request(format!(
                        "{name}: may be given only once"
                    )));
                }
                Ok(first)
            }
            Dialect::Page => Ok(values.last()),
        }
    }

    /// A `true` / `false` parameter; absent is false.
    pub(crate) fn flag(&self, name: &str) -> ApiResult<bool> {
        match self.value(name)? {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(_) => Err(ApiError::bad_request(format!(
                "{name}: must be true or false"
            ))),
        }
    }

    /// A `true` / `false` parameter that filters only when given.
    pub(crate) fn optional_flag(&self, name: &str) -> ApiResult<Option<bool>> {
        match self.value(name)? {
            None => Ok(None),
            Some(_) => self.flag(name).map(Some),
        }
    }

    /// The page size asked for (`default` when the query does not say); the
    /// domain checks its range.
    pub(crate) fn limit(&self, default: usize) -> ApiResult<usize> {
        match self.value("limit")? {
            None => Ok(default),
            Some(text) => Ok(check_page_size(text.parse::<usize>().unwrap_or(0))?),
        }
    }

    /// The ratings of every `rating` parameter: repeatable, and each a list
    /// separated by commas (`rating=1&rating=5`, `rating=1,5`).
    fn ratings(&self) -> ApiResult<RatingSet> {
        let mut ratings = Vec::new();
        for value in self.all("rating") {
            for part in value.split(',') {
                if self.dialect == Dialect::Page && part.trim().is_empty() {
                    continue;
                }
                let rating = part
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .and_then(|r| Rating::new(r).ok())
                    .ok_or_else(|| {
                        ApiError::bad_request("rating: each value must be an integer from 1 to 5")
                    })?;
                ratings.push(rating);
            }
        }
        Ok(RatingSet::from_ratings(ratings))
    }
}

/// What a listing's query asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListingQuery {
    pub(crate) filter: Filter,
    pub(crate) sort: Sort,
    pub(crate) limit: usize,
    pub(crate) cursor: Option<String>,
    /// Whether the answer shows the plan used.
    pub(crate) explain: bool,
}

impl ListingQuery {
    /// The parameters the JSON listing takes.
    pub(crate) const API: [&str; 9] = [
        "language",
        "rating",
        "verified",
        "incentivized",
        "has_media",
        "sort",
        "limit",
        "cursor",
        "explain",
    ];

    /// The parameters a product page takes: the filters and where it starts.
    pub(crate) const PAGE: [&str; 3] = ["language", "rating", "cursor"];

    /// Reads a listing's parameters (the ones `params` knows; the others
    /// take their defaults).
    pub(crate) fn read(params: &Params) -> ApiResult<ListingQuery> {
        let language = params.value("language")?.map(Language::parse).transpose()?;
        let ratings = params.ratings()?;
        let explain = params.flag("explain")?;
        let sort = params
            .value("sort")?
            .map(Sort::parse)
            .transpose()?
            .unwrap_or_default();
        Ok(ListingQuery {
            filter: Filter {
                language,
                ratings,
                verified: params.flag("verified")?,
                incentivized: params.optional_flag("incentivized")?,
                has_media: params.flag("has_media")?,
            },
            sort,
            limit: params.limit(DEFAULT_PAGE_SIZE)?,
            cursor: params.value("cursor")?.map(str::to_owned),
            explain,
        })
    }

    /// The domain's request for this query of `product`'s listing.
    pub(crate) fn request<'a>(&'a self, product: &'a str) -> ListRequest<'a> {
        ListRequest {
            product,
            filter: self.filter.clone(),
            sort: self.sort,
            limit: self.limit,
            cursor: self.cursor.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(raw: &str) -> ApiResult<ListingQuery> {
        ListingQuery::read(&Params::new(Some(raw), &ListingQuery::API, Dialect::Api)?)
    }

    fn page(raw: &str) -> ApiResult<ListingQuery> {
        ListingQuery::read(&Params::new(Some(raw), &ListingQuery::PAGE, Dialect::Page)?)
    }

    fn ratings(list: &[i64]) -> RatingSet {
        RatingSet::from_ratings(list.iter().map(|r| Rating::new(*r).unwrap()))
    }

    #[test]
    fn the_api_refuses_what_a_page_ignores() {
        for raw in [
            "utm_source=x",
            "language=en&language=de",
            "rating=",
            "cursor=a&cursor=b",
        ] {
            assert!(api(raw).is_err(), "{raw}");
            assert!(page(raw).is_ok(), "{raw}");
        }
        let query = page("language=en&language=de&rating=1,,5&sort=helpful&verified=true").unwrap();
        assert_eq!(query.filter.language, Some(Language::parse("de").unwrap()));
        assert_eq!(query.filter.ratings, ratings(&[1, 5]));
        assert_eq!((query.sort, query.filter.verified), (Sort::Newest, false));
    }

    #[test]
    fn both_read_the_same_values_the_same_way() {
        for raw in ["rating=5,1&rating=5&language=en", "rating=+2", "cursor=abc"] {
            assert_eq!(api(raw).unwrap(), page(raw).unwrap(), "{raw}");
        }
        for raw in [
            "rating=0",
            "rating=6",
            "rating=4.5",
            "rating=x",
            "language=EN1",
        ] {
            let (api, page) = (api(raw).unwrap_err(), page(raw).unwrap_err());
            assert_eq!(
                (api.status, api.detail),
                (page.status, page.detail),
                "{raw}"
            );
        }
    }

    #[test]
    fn the_api_reads_its_order_page_size_and_flags() {
        let query = api("sort=helpful&limit=5&verified=true&explain=true").unwrap();
        assert_eq!(query.sort, Sort::Helpful);
        assert_eq!(query.limit, 5);
        assert!(query.filter.verified && query.explain);
        assert_eq!(api("").unwrap().limit, DEFAULT_PAGE_SIZE);
        assert!(api("explain=yes").is_err());
        assert!(api("limit=0").is_err());
    }

    #[test]
    fn has_media_is_a_flag_named_when_refused() {
        assert!(api("has_media=true").unwrap().filter.has_media);
        assert!(!api("has_media=false").unwrap().filter.has_media);
        assert!(!api("").unwrap().filter.has_media);
        for bad in [
            "has_media=yes",
            "has_media=1",
            "has_media=",
            "has_media=true&has_media=true",
        ] {
            let error = api(bad).unwrap_err();
            assert_eq!(error.status, axum::http::StatusCode::BAD_REQUEST, "{bad}");
            assert!(
                error.detail.starts_with("has_media:"),
                "{bad}: {}",
                error.detail
            );
        }
    }
}
