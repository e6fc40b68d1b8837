//! The `blocked_words` list: a file re-read when its modification time or
//! size changes, checked on each comment.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

#[derive(Debug)]
pub struct WordList {
    path: PathBuf,
    state: Mutex<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    stamp: Option<(SystemTime, u64)>,
    words: HashSet<String>,
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

fn parse(text: &str) -> HashSet<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim().to_lowercase())
        .filter(|word| !word.is_empty())
        .collect()
}

fn words_of(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl WordList {
    /// Reads the list; a file that cannot be read now is an error.
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<WordList> {
        let path = path.into();
        let words = parse(&std::fs::read_to_string(&path)?);
        Ok(WordList {
            state: Mutex::new(Loaded {
                stamp: stamp(&path),
                words,
            }),
            path,
        })
    }

    /// Whether `text` holds a listed word. A file changed since the last
    /// check is read again first; one that cannot be read keeps the list
    /// as it was, so a botched edit does not turn the rule off.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = stamp(&self.path);
        if now.is_some()
            && now != state.stamp
            && let Ok(text) = std::fs::read_to_string(&self.path)
        {
            state.words = parse(&text);
            state.stamp = now;
        }
        words_of(text).any(|w| state.words.contains(&w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_words_match_whole_and_case_insensitively_and_the_file_is_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("words.txt");
        std::fs::write(&path, "# spam words\nCasino\nviagra # pills\n").unwrap();
        let list = WordList::open(&path).unwrap();
        assert!(list.matches("Best CASINO in town"));
        assert!(list.matches("cheap viagra!"));
        assert!(!list.matches("casinos are words too"), "whole words only");
        assert!(!list.matches("a fine product"));
        std::fs::write(&path, "lottery\nprize\n").unwrap();
        assert!(
            list.matches("win the lottery"),
            "the changed file is read again"
        );
        assert!(!list.matches("best casino"), "a word taken off the list");
    }
}
