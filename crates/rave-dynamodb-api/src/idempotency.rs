//! TransactWriteItems' `ClientRequestToken`: a transaction repeated with
//! the same token within ten minutes of its success changes nothing and
//! succeeds again; the same token with other actions is refused, and so is
//! a token whose transaction still runs. The SDKs always send one.
//!
//! The ledger lives in memory: a restart forgets the tokens, so a retry
//! that straddles a restart is applied again.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{ApiError, ErrorKind};

/// How long a completed token is remembered (DynamoDB's window).
const WINDOW: Duration = Duration::from_secs(10 * 60);

#[derive(Debug, Default)]
pub(crate) struct TokenLedger {
    tokens: Mutex<HashMap<String, Token>>,
}

#[derive(Debug)]
struct Token {
    fingerprint: u64,
    /// When the transaction succeeded; `None` while it runs.
    completed: Option<Instant>,
}

/// What to do with a transaction that carries a token.
#[derive(Debug)]
pub(crate) enum Claim<'a> {
    /// Run it; `Running::succeeded` records the token.
    Run(Running<'a>),
    /// It succeeded already: answer success without running it.
    Replay,
}

/// A transaction running under a token; dropped without success, it frees
/// the token for a retry.
#[derive(Debug)]
pub(crate) struct Running<'a> {
    ledger: &'a TokenLedger,
    token: String,
    done: bool,
}

impl Running<'_> {
    pub(crate) fn succeeded(mut self) {
        if let Ok(mut tokens) = self.ledger.lock()
            && let Some(entry) = tokens.get_mut(&self.token)
        {
            entry.completed = Some(Instant::now());
        }
        self.done = true;
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Ok(mut tokens) = self.ledger.lock()
        {
            tokens.remove(&self.token);
        }
    }
}

/// A digest of the request's actions, to tell a retry from a new request.
pub(crate) fn fingerprint(actions: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    actions.hash(&mut hasher);
    hasher.finish()
}

impl TokenLedger {
    fn lock(&self) -> Result<MutexGuard<'_, HashMap<String, Token>>, ApiError> {
        self.tokens.lock().map_err(|_| {
            ApiError::from(rave_store::StoreError::Internal(
                "the client token ledger lock is poisoned".into(),
            ))
        })
    }

    pub(crate) fn claim(&self, token: &str, fingerprint: u64) -> Result<Claim<'_>, ApiError> {
        let mut tokens = self.lock()?;
        tokens.retain(|_, t| t.completed.is_none_or(|at| at.elapsed() < WINDOW));
        match tokens.get(token) {
            Some(known) if known.fingerprint != fingerprint => Err(ApiError::new(
                ErrorKind::IdempotentParameterMismatch,
                "The request uses the same client token as a previous, but not identical request.",
            )),
            Some(Token {
                completed: None, ..
            }) => Err(ApiError::new(
                ErrorKind::TransactionInProgress,
                "The transaction with the given request token is already in progress.",
            )),
            Some(_) => Ok(Claim::Replay),
            None => {
                tokens.insert(
                    token.to_owned(),
                    Token {
                        fingerprint,
                        completed: None,
                    },
                );
                Ok(Claim::Run(Running {
                    ledger: self,
                    token: token.to_owned(),
                    done: false,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_replays_after_success_and_frees_after_failure() {
        let ledger = TokenLedger::default();
        let Ok(Claim::Run(running)) = ledger.claim("a", 1) else {
            panic!("a new token runs");
        };
        assert_eq!(
            ledger.claim("a", 1).map(|_| ()).map_err(|e| e.kind),
            Err(ErrorKind::TransactionInProgress)
        );
        running.succeeded();
        assert!(matches!(ledger.claim("a", 1), Ok(Claim::Replay)));
        assert_eq!(
            ledger.claim("a", 2).map(|_| ()).map_err(|e| e.kind),
            Err(ErrorKind::IdempotentParameterMismatch)
        );

        let Ok(Claim::Run(failed)) = ledger.claim("b", 1) else {
            panic!("a new token runs");
        };
        drop(failed);
        assert!(
            matches!(ledger.claim("b", 1), Ok(Claim::Run(_))),
            "a failure frees the token"
        );
    }
}
