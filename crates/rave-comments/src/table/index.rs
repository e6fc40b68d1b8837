//! The table's indexes as the codecs name them: which attributes hold each
//! index's keys.

use super::keys::{GSISK, HELPFUL_SORT};

/// The four listing indexes of part 2, their sparse verified copies, the
/// sparse moderation index and the author index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Index {
    /// `PRODUCT#<p>/<lang>/<rating>`; overloaded by the leaderboard.
    ByLangAndRating,
    /// `PRODUCT#<p>/<lang>`
    ByLang,
    /// `PRODUCT#<p>/<rating>`
    ByRating,
    /// `PRODUCT#<p>`
    All,
    /// `MODERATION#<status>`, sorted by `MODSK` = `<created_at>#<id>`
    Moderation,
    /// The verified copies of the four listing indexes: the same
    /// partitions, holding only visible comments a purchase verified (the
    /// sparse-index pattern), so a `verified=true` listing reads nothing it
    /// throws away.
    VerifiedByLangAndRating,
    VerifiedByLang,
    VerifiedByRating,
    VerifiedAll,
    /// `AUTHOR#<author>`: every comment of an author, any status.
    ByAuthor,
    /// The `helpful` sort's indexes: the partitions of `byLangAndRating`,
    /// `byRating`, `byLang` and `all` (and of the first two's verified
    /// copies), sorted by `HELPSK`. A listing with a rating filter merges
    /// rating partitions; one without reads a single partition, whatever
    /// the mix of ratings at its depth.
    HelpfulByLangAndRating,
    HelpfulByRating,
    HelpfulByLang,
    HelpfulAll,
    VerifiedHelpfulByLangAndRating,
    VerifiedHelpfulByRating,
}

impl Index {
    pub(crate) const LISTINGS: [Index; 4] = [
        Index::ByLangAndRating,
        Index::ByLang,
        Index::ByRating,
        Index::All,
    ];

    pub(crate) const VERIFIED_LISTINGS: [Index; 4] = [
        Index::VerifiedByLangAndRating,
        Index::VerifiedByLang,
        Index::VerifiedByRating,
        Index::VerifiedAll,
    ];

    pub(crate) const HELPFUL: [Index; 6] = [
        Index::HelpfulByLangAndRating,
        Index::HelpfulByRating,
        Index::HelpfulByLang,
        Index::HelpfulAll,
        Index::VerifiedHelpfulByLangAndRating,
        Index::VerifiedHelpfulByRating,
    ];

    /// The verified copy of a listing index (itself for the others).
    pub(crate) fn verified(self) -> Index {
        match self {
            Index::ByLangAndRating => Index::VerifiedByLangAndRating,
            Index::ByLang => Index::VerifiedByLang,
            Index::ByRating => Index::VerifiedByRating,
            Index::All => Index::VerifiedAll,
            Index::HelpfulByLangAndRating => Index::VerifiedHelpfulByLangAndRating,
            Index::HelpfulByRating => Index::VerifiedHelpfulByRating,
            other => other,
        }
    }

    /// The `helpful` index over the same partitions as a listing index or
    /// a per-rating verified copy (itself for the others).
    pub(crate) fn helpful(self) -> Index {
        match self {
            Index::ByLangAndRating => Index::HelpfulByLangAndRating,
            Index::ByRating => Index::HelpfulByRating,
            Index::ByLang => Index::HelpfulByLang,
            Index::All => Index::HelpfulAll,
            Index::VerifiedByLangAndRating => Index::VerifiedHelpfulByLangAndRating,
            Index::VerifiedByRating => Index::VerifiedHelpfulByRating,
            other => other,
        }
    }

    /// Whether the index is sorted by helpfulness (`HELPSK`).
    pub(crate) fn is_helpful(self) -> bool {
        Index::HELPFUL.contains(&self)
    }

    /// The listing index a verified copy or a `helpful` index shares its
    /// partitions with (itself for the others).
    pub(crate) fn unverified(self) -> Index {
        match self {
            Index::VerifiedByLangAndRating => Index::ByLangAndRating,
            Index::VerifiedByLang => Index::ByLang,
            Index::VerifiedByRating => Index::ByRating,
            Index::VerifiedAll => Index::All,
            Index::HelpfulByLangAndRating | Index::VerifiedHelpfulByLangAndRating => {
                Index::ByLangAndRating
            }
            Index::HelpfulByRating | Index::VerifiedHelpfulByRating => Index::ByRating,
            Index::HelpfulByLang => Index::ByLang,
            Index::HelpfulAll => Index::All,
            other => other,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Index::ByLangAndRating => "byLangAndRating",
            Index::ByLang => "byLang",
            Index::ByRating => "byRating",
            Index::All => "all",
            Index::Moderation => "moderation",
            Index::VerifiedByLangAndRating => "verifiedByLangAndRating",
            Index::VerifiedByLang => "verifiedByLang",
            Index::VerifiedByRating => "verifiedByRating",
            Index::VerifiedAll => "verifiedAll",
            Index::ByAuthor => "byAuthor",
            Index::HelpfulByLangAndRating => "helpfulByLangAndRating",
            Index::HelpfulByRating => "helpfulByRating",
            Index::HelpfulByLang => "helpfulByLang",
            Index::HelpfulAll => "helpfulAll",
            Index::VerifiedHelpfulByLangAndRating => "verifiedHelpfulByLangAndRating",
            Index::VerifiedHelpfulByRating => "verifiedHelpfulByRating",
        }
    }

    pub(crate) fn partition_attribute(self) -> &'static str {
        match self {
            Index::ByLangAndRating | Index::HelpfulByLangAndRating => "GSIPK",
            Index::ByLang | Index::HelpfulByLang => "GSI2PK",
            Index::ByRating | Index::HelpfulByRating => "GSI3PK",
            Index::All | Index::HelpfulAll => "GSI4PK",
            Index::Moderation => "MODPK",
            Index::VerifiedByLangAndRating | Index::VerifiedHelpfulByLangAndRating => "VGSIPK",
            Index::VerifiedByLang => "VGSI2PK",
            Index::VerifiedByRating | Index::VerifiedHelpfulByRating => "VGSI3PK",
            Index::VerifiedAll => "VGSI4PK",
            Index::ByAuthor => "AUTHORPK",
        }
    }

    pub(crate) fn sort_attribute(self) -> &'static str {
        match self {
            Index::Moderation => "MODSK",
            index if index.is_helpful() => HELPFUL_SORT,
            _ => GSISK,
        }
    }
}

impl Index {
    /// Whether the index's entries carry the listed attributes: all but
    /// the KEYS_ONLY author index do.
    pub(crate) fn holds_comments(self) -> bool {
        self != Index::ByAuthor
    }
}
