//! What the web page and the embed call the listing orders. Both scripts
//! hold a `RAVE_SORTS` placeholder that the server replaces, once, with
//! these labels, so the two cannot drift apart; the labels come from the
//! domain's `Sort`, so a new order cannot be left out of either.

use rave_comments::Sort;

/// The placeholder in the scripts.
const PLACEHOLDER: &str = "RAVE_SORTS";

fn label(sort: Sort) -> &'static str {
    match sort {
        Sort::Newest => "Newest first",
        Sort::Oldest => "Oldest first",
        Sort::Highest => "Highest rating first",
        Sort::Lowest => "Lowest rating first",
        Sort::Helpful => "Most helpful first",
    }
}

/// `script` with its placeholder replaced by `[["newest", "Newest first"],
/// …]`: the API's value and the label of every order, in the order they
/// are offered.
pub(crate) fn fill(script: &str) -> String {
    let labels: Vec<[&str; 2]> = Sort::ALL
        .into_iter()
        .map(|sort| [sort.as_str(), label(sort)])
        .collect();
    script.replacen(PLACEHOLDER, &serde_json::json!(labels).to_string(), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_scripts_get_every_order_once() {
        for script in [
            include_str!("../web/index.html"),
            include_str!("../web/embed.js"),
        ] {
            assert_eq!(script.matches(PLACEHOLDER).count(), 1);
            let filled = fill(script);
            assert!(!filled.contains(PLACEHOLDER));
            for sort in Sort::ALL {
                let entry = format!("[\"{}\",\"{}\"]", sort.as_str(), label(sort));
                assert_eq!(filled.matches(&entry).count(), 1, "{entry}");
            }
        }
    }
}
