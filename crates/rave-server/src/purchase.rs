//! Purchase proofs: a JWT (RFC 7519) the shop's backend issues after an
//! order, signed HS256 with the secret it shares with rave, with the claims
//! `product_id`, `order_id` and `exp`, and optionally `incentivized`
//! (`true` when the shop gave the buyer a free product or a discount for
//! the review: the comment is then marked incentivized from its first
//! write, and every surface discloses it).
//!
//! The proof is checked here, at the edge, like the admin token: it is a
//! credential of the request, and the domain stays free of token formats
//! and their crypto. What passes on to the domain is the order id the
//! proof vouches for ([`Comments::create_verified`]), which keys the
//! order's one verification per product in the same transaction as the
//! comment.
//!
//! Only HS256 is accepted, `exp` is required and the product must be the
//! one posted to; the secret is `--purchase-secret`, and `jsonwebtoken`
//! runs on aws-lc-rs, already in the build for rustls. A refusal is a 400
//! naming `purchase_proof`, before anything is written.
//!
//! [`Comments::create_verified`]: rave_comments::Comments::create_verified

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use rave_comments::{CommentsError, OrderId, ProductId, Purchase};
use serde::Deserialize;

use crate::error::ApiError;

/// The field a refused proof is reported under.
const FIELD: &str = "purchase_proof";
const HS256_ONLY: &str = "must be a JWT signed with HS256 (its header's alg)";
const NOT_A_PROOF: &str = "is not a valid JWT with product_id, order_id and exp claims";

/// Checks purchase proofs against the shop's secret.
#[derive(Clone)]
pub struct PurchaseVerifier {
    key: DecodingKey,
    validation: Validation,
}

impl std::fmt::Debug for PurchaseVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PurchaseVerifier(..)")
    }
}

/// The claims rave reads; `exp` is checked by the validation.
#[derive(Debug, Deserialize)]
struct Claims {
    product_id: String,
    order_id: String,
    /// The shop's claim that the review is written for a reward; absent
    /// is false. Signed like the rest, so only the shop can make it.
    #[serde(default)]
    incentivized: bool,
}

fn refused(message: impl Into<String>) -> ApiError {
    CommentsError::Invalid {
        field: FIELD,
        message: message.into(),
    }
    .into()
}

impl PurchaseVerifier {
    pub fn new(secret: &[u8]) -> PurchaseVerifier {
        // HS256 only: a token naming any other algorithm (`none`, RS256,
        // HS512) is refused before its signature is looked at.
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp"]);
        // The shop chooses `exp`; past it, the proof is expired.
        validation.leeway = 0;
        PurchaseVerifier {
            key: DecodingKey::from_secret(secret),
            validation,
        }
    }

    /// The purchase `token` proves was made of `product`, or a 400 saying
    /// why the proof is refused.
    pub fn verify(&self, token: &str, product: &str) -> Result<Purchase, ApiError> {
        let product = ProductId::parse(product)?;
        // The header first, so that a token naming an algorithm the crate
        // does not even know (`none`) is told what to name.
        match jsonwebtoken::decode_header(token) {
            Err(e) if *e.kind() == ErrorKind::InvalidToken => {
                return Err(refused(NOT_A_PROOF));
            }
            Ok(header) if header.alg == Algorithm::HS256 => {}
            _ => return Err(refused(HS256_ONLY)),
        }
        let claims = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
            .map_err(|e| {
                refused(match e.kind() {
                    ErrorKind::ExpiredSignature => "has expired",
                    ErrorKind::InvalidSignature => "is not signed with this shop's secret",
                    ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => HS256_ONLY,
                    ErrorKind::MissingRequiredClaim(_) => "must carry an exp claim",
                    _ => NOT_A_PROOF,
                })
            })?
            .claims;
        if claims.product_id != product.as_str() {
            return Err(refused("is for another product"));
        }
        let order = OrderId::parse(&claims.order_id)
            .map_err(|_| refused("order_id must be 1-128 characters, no control characters"))?;
        Ok(Purchase {
            order,
            incentivized: claims.incentivized,
        })
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{EncodingKey, Header, encode};
    use serde_json::json;

    use super::*;

    const SECRET: &[u8] = b"shop-secret";

    fn sign(claims: serde_json::Value) -> String {
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET),
        )
        .unwrap()
    }

    fn in_an_hour() -> u64 {
        jsonwebtoken::get_current_timestamp() + 3600
    }

    #[test]
    fn a_valid_proof_names_its_order() {
        let token = sign(json!({"product_id": "p1", "order_id": "o-1", "exp": in_an_hour()}));
        let purchase = PurchaseVerifier::new(SECRET).verify(&token, "p1").unwrap();
        assert_eq!(purchase.order.as_str(), "o-1");
        assert!(!purchase.incentivized, "absent is false");
        let claimed = sign(json!({
            "product_id": "p1", "order_id": "o-2", "exp": in_an_hour(), "incentivized": true
        }));
        assert!(
            PurchaseVerifier::new(SECRET)
                .verify(&claimed, "p1")
                .unwrap()
                .incentivized
        );
    }

    #[test]
    fn refusals_say_why() {
        let verifier = PurchaseVerifier::new(SECRET);
        let why = |token: &str| verifier.verify(token, "p1").unwrap_err().detail;
        let other = sign(json!({"product_id": "p2", "order_id": "o", "exp": in_an_hour()}));
        assert!(why(&other).contains("another product"));
        let no_exp = sign(json!({"product_id": "p1", "order_id": "o"}));
        assert!(why(&no_exp).contains("exp"), "{}", why(&no_exp));
        let empty_order = sign(json!({"product_id": "p1", "order_id": "", "exp": in_an_hour()}));
        assert!(why(&empty_order).contains("order_id"));
        assert!(why("not a token").contains("not a valid JWT"));
    }
}
