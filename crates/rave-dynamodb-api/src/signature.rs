//! Signature Version 4, verified when the API is given access keys
//! (`--dynamodb-credentials`): the canonical request, the string to sign,
//! the key derived from the secret and the credential's date, region and
//! service (HMAC-SHA256 of the `hmac` and `sha2` crates), a constant-time
//! comparison, and the clock skew DynamoDB allows (15 minutes either way);
//! a refusal is one of DynamoDB's exceptions (MissingAuthenticationToken,
//! IncompleteSignature, UnrecognizedClient, InvalidSignature). The keys are
//! `ACCESS_KEY_ID:SECRET` lines of a file, and secrets never reach `Debug`.
//! Without keys, a request must still carry a complete `Authorization`
//! header (`require_signature`), as DynamoDB Local requires, but its
//! signature is not verified.
//!
//! The request's date is its `X-Amz-Date` (every SDK and the AWS CLI send
//! one). The canonical query string takes the parameters as the client
//! encoded them, sorted: DynamoDB's requests carry none.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use axum::http::header::{AUTHORIZATION, DATE};
use axum::http::{HeaderMap, HeaderName, Method, Uri};
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use crate::error::{ApiError, ErrorKind};

const ALGORITHM: &str = "AWS4-HMAC-SHA256";
const SCOPE_TERMINATOR: &str = "aws4_request";
const X_AMZ_DATE: HeaderName = HeaderName::from_static("x-amz-date");
/// How far a request's date may be from the server's clock, either way.
const MAX_CLOCK_SKEW: Duration = Duration::from_secs(15 * 60);

/// The access keys requests may be signed with, and their secrets.
#[derive(Clone)]
pub struct Credentials {
    secrets: HashMap<String, String>,
    /// Signing keys already derived, by access key and scope: a client
    /// signs a whole day's requests in one region with the same key, so
    /// the four HMACs deriving it run once a day, not once a request.
    signing_keys: Arc<Mutex<HashMap<String, Vec<u8>>>>,
}

/// Most signing keys kept (keys × days × regions); past it, all are
/// derived afresh.
const MAX_SIGNING_KEYS: usize = 1_024;

/// The key ids only: a secret never reaches a log.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ids: Vec<&String> = self.secrets.keys().collect();
        ids.sort();
        f.debug_struct("Credentials")
            .field("key_ids", &ids)
            .finish()
    }
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CredentialsError {
    #[error("line {line}: expected ACCESS_KEY_ID:SECRET")]
    Malformed { line: usize },
    #[error("line {line}: access key {key_id} is listed twice")]
    Repeated { line: usize, key_id: String },
    #[error("no access keys")]
    Empty,
}

impl Credentials {
    /// Reads `ACCESS_KEY_ID:SECRET` lines (split at the first colon);
    /// blank lines and lines starting with `#` are skipped.
    pub fn parse(text: &str) -> Result<Credentials, CredentialsError> {
        let mut secrets = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let number = index + 1;
            let (key_id, secret) = line
                .split_once(':')
                .filter(|(key_id, secret)| !key_id.is_empty() && !secret.is_empty())
                .ok_or(CredentialsError::Malformed { line: number })?;
            if secrets
                .insert(key_id.to_owned(), secret.to_owned())
                .is_some()
            {
                return Err(CredentialsError::Repeated {
                    line: number,
                    key_id: key_id.to_owned(),
                });
            }
        }
        if secrets.is_empty() {
            return Err(CredentialsError::Empty);
        }
        Ok(Credentials {
            secrets,
            signing_keys: Arc::default(),
        })
    }

    /// The key Signature V4 derives from `secret` and the request's scope
    /// (date, region, service), kept once derived.
    fn signing_key(&self, authorization: &Authorization<'_>, secret: &str) -> Vec<u8> {
        let scope = format!("{}/{}", authorization.key_id, authorization.scope());
        let mut kept = self
            .signing_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = kept.get(&scope) {
            return key.clone();
        }
        let mut key = hmac(
            format!("AWS4{secret}").as_bytes(),
            authorization.date.as_bytes(),
        );
        for part in [
            authorization.region,
            authorization.service,
            SCOPE_TERMINATOR,
        ] {
            key = hmac(&key, part.as_bytes());
        }
        if kept.len() >= MAX_SIGNING_KEYS {
            kept.clear();
        }
        kept.insert(scope, key.clone());
        key
    }

    /// Checks the request's Signature V4 `Authorization` header against
    /// these keys at time `now`, answering as DynamoDB does when it fails.
    pub(crate) fn verify(
        &self,
        request: &SignedRequest<'_>,
        now: SystemTime,
    ) -> Result<(), ApiError> {
        let authorization = Authorization::read(request.headers)?;
        let secret = self.secrets.get(authorization.key_id).ok_or_else(|| {
            ApiError::new(
                ErrorKind::UnrecognizedClient,
                "The security token included in the request is invalid.",
            )
        })?;
        let stamp = request
            .headers
            .get(X_AMZ_DATE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let signed_at = parse_stamp(stamp).ok_or_else(|| {
            invalid_signature(format!(
                "Date must be in ISO-8601 'basic format'. Got '{stamp}'. See http://en.wikipedia.org/wiki/ISO_8601"
            ))
        })?;
        check_skew(stamp, signed_at, now)?;
        if !stamp.starts_with(authorization.date) {
            return Err(invalid_signature(format!(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}', from '{stamp}'.",
                authorization.date,
                &stamp[..8]
            )));
        }
        let canonical = canonical_request(request, authorization.signed_headers);
        let string_to_sign = format!(
            "{ALGORITHM}\n{stamp}\n{}\n{}",
            authorization.scope(),
            hex::encode(Sha256::digest(canonical.as_bytes()))
        );
        let key = self.signing_key(&authorization, secret);
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key)
            .map_err(|e| ApiError::from(rave_store::StoreError::Internal(e.to_string())))?;
        mac.update(string_to_sign.as_bytes());
        let provided = hex::decode(authorization.signature).unwrap_or_default();
        // Constant time: the comparison tells an attacker nothing.
        mac.verify_slice(&provided).map_err(|_| {
            invalid_signature(
                "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
            )
        })
    }
}

/// Checks that a request carries a complete Signature V4 `Authorization`
/// header, without verifying it: DynamoDB refuses a request with none
/// (MissingAuthenticationTokenException) or with a part missing
/// (IncompleteSignatureException) before it looks at the keys.
pub(crate) fn require_signature(headers: &HeaderMap) -> Result<(), ApiError> {
    Authorization::read(headers).map(|_| ())
}

/// What of a request its signature covers.
#[derive(Debug)]
pub(crate) struct SignedRequest<'a> {
    pub(crate) method: &'a Method,
    pub(crate) uri: &'a Uri,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) body: &'a [u8],
}

/// The parts of an `Authorization: AWS4-HMAC-SHA256 Credential=…,
/// SignedHeaders=…, Signature=…` header.
#[derive(Debug)]
struct Authorization<'a> {
    key_id: &'a str,
    date: &'a str,
    region: &'a str,
    service: &'a str,
    /// `;`-separated, as the client listed them.
    signed_headers: &'a str,
    signature: &'a str,
}

impl<'a> Authorization<'a> {
    fn read(headers: &'a HeaderMap) -> Result<Authorization<'a>, ApiError> {
        let missing_token = || {
            ApiError::new(
                ErrorKind::MissingAuthenticationToken,
                "Request is missing Authentication Token",
            )
        };
        let header = headers
            .get(AUTHORIZATION)
            .ok_or_else(missing_token)?
            .to_str()
            .map_err(|_| missing_token())?;
        let Some(rest) = header.strip_prefix("AWS4-") else {
            return Err(missing_token());
        };
        let (algorithm, parameters) = split_at_byte(rest, b' ').unwrap_or((rest, ""));
        if Some(algorithm) != ALGORITHM.strip_prefix("AWS4-") {
            return Err(ApiError::new(
                ErrorKind::IncompleteSignature,
                format!("Unsupported AWS 'algorithm': 'AWS4-{algorithm}'"),
            ));
        }
        // The first of each parameter counts. Parameters are separated by
        // commas or spaces: one pass over the bytes finds either, where a
        // `str` split by a set of characters decodes every character.
        let (mut credential, mut signed_headers, mut signature) = (None, None, None);
        let mut rest = parameters;
        while !rest.is_empty() {
            let end = rest
                .bytes()
                .position(|b| b == b',' || b == b' ')
                .unwrap_or(rest.len());
            // Both ends are at an ASCII byte or the text's end.
            let (part, after) = rest.split_at(end);
            rest = after.get(1..).unwrap_or_default();
            let Some((key, value)) = split_at_byte(part.trim(), b'=') else {
                continue;
            };
            let slot = match key {
                "Credential" => &mut credential,
                "SignedHeaders" => &mut signed_headers,
                "Signature" => &mut signature,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        let has_date = headers.contains_key(X_AMZ_DATE) || headers.contains_key(DATE);
        let (Some(credential), Some(signed_headers), Some(signature), true) =
            (credential, signed_headers, signature, has_date)
        else {
            let mut missing: Vec<String> = [
                ("Credential", credential.is_none()),
                ("Signature", signature.is_none()),
                ("SignedHeaders", signed_headers.is_none()),
            ]
            .into_iter()
            .filter(|(_, absent)| *absent)
            .map(|(name, _)| format!("Authorization header requires '{name}' parameter."))
            .collect();
            if !has_date {
                missing.push(
                    "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
                        .into(),
                );
            }
            missing.push(format!("Authorization={header}"));
            return Err(ApiError::new(
                ErrorKind::IncompleteSignature,
                missing.join(" "),
            ));
        };
        // The credential's five `/`-separated steps, and whatever follows.
        let mut rest = Some(credential);
        let scope: [Option<&str>; 5] = std::array::from_fn(|_| {
            let text = rest?;
            let (step, after) = split_at_byte(text, b'/').unzip();
            rest = after;
            step.or(Some(text))
        });
        let (
            [
                Some(key_id),
                Some(date),
                Some(region),
                Some(service),
                Some(terminator),
            ],
            None,
        ) = (scope, rest)
        else {
            return Err(ApiError::new(
                ErrorKind::IncompleteSignature,
                format!(
                    "Credential should be scoped to a valid region, not '{}'. ",
                    scope[2].unwrap_or_default()
                ),
            ));
        };
        if terminator != SCOPE_TERMINATOR {
            return Err(ApiError::new(
                ErrorKind::IncompleteSignature,
                format!(
                    "Credential should be scoped with a valid terminator: '{SCOPE_TERMINATOR}', not '{terminator}'. "
                ),
            ));
        }
        Ok(Authorization {
            key_id,
            date,
            region,
            service,
            signed_headers,
            signature,
        })
    }

    fn scope(&self) -> String {
        format!(
            "{}/{}/{}/{SCOPE_TERMINATOR}",
            self.date, self.region, self.service
        )
    }
}

/// `text` split around its first `byte` (an ASCII one), found by a plain
/// scan: the parts of an `Authorization` header are a few dozen bytes, which
/// take less to scan than a `str` pattern's searcher takes to set up.
fn split_at_byte(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == byte)?;
    Some((&text[..at], &text[at + 1..]))
}

/// The canonical request of Signature V4: method, path, query, the signed
/// headers (names lower case, values trimmed with inner runs of spaces
/// collapsed, repeated headers joined by commas), their names, and the
/// SHA-256 of the body.
fn canonical_request(request: &SignedRequest<'_>, signed_headers: &str) -> String {
    let path = match request.uri.path() {
        "" => "/".to_owned(),
        path => uri_encode(path, false),
    };
    let mut query: Vec<String> = request
        .uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some(_) => pair.to_owned(),
            None => format!("{pair}="),
        })
        .collect();
    query.sort();
    let headers: String = signed_headers
        .split(';')
        .map(|name| {
            let values: Vec<String> = request
                .headers
                .get_all(name)
                .iter()
                .map(|value| {
                    String::from_utf8_lossy(value.as_bytes())
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            format!("{}:{}\n", name.to_ascii_lowercase(), values.join(","))
        })
        .collect();
    format!(
        "{}\n{path}\n{}\n{headers}\n{}\n{}",
        request.method.as_str(),
        query.join("&"),
        signed_headers,
        hex::encode(Sha256::digest(request.body))
    )
}

/// Signature V4's URI encoding: every byte but the unreserved characters
/// (and `/`, unless `slash`) as `%XX`.
fn uri_encode(text: &str, slash: bool) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                encoded.push(char::from(byte));
            }
            b'/' if !slash => encoded.push('/'),
            _ => encoded.push_str(&format!("%{byte:02X}")),
        }
    }
    encoded
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn invalid_signature(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorKind::InvalidSignature, message)
}

/// `YYYYMMDD'T'HHMMSS'Z'`, the form of `X-Amz-Date`.
fn parse_stamp(stamp: &str) -> Option<SystemTime> {
    let bytes = stamp.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = bytes.get(range)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| std::str::from_utf8(part).ok()?.parse().ok())?
    };
    if bytes.len() != 16 || bytes[8] != b'T' || bytes[15] != b'Z' {
        return None;
    }
    let month = time::Month::try_from(u8::try_from(digits(4..6)?).ok()?).ok()?;
    let date = time::Date::from_calendar_date(
        i32::try_from(digits(0..4)?).ok()?,
        month,
        u8::try_from(digits(6..8)?).ok()?,
    )
    .ok()?;
    let time = time::Time::from_hms(
        u8::try_from(digits(9..11)?).ok()?,
        u8::try_from(digits(11..13)?).ok()?,
        u8::try_from(digits(13..15)?).ok()?,
    )
    .ok()?;
    Some(time::PrimitiveDateTime::new(date, time).assume_utc().into())
}

fn stamp(at: SystemTime) -> String {
    let at = OffsetDateTime::from(at);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// DynamoDB refuses a request signed more than 15 minutes from its clock.
fn check_skew(given: &str, signed_at: SystemTime, now: SystemTime) -> Result<(), ApiError> {
    if signed_at + MAX_CLOCK_SKEW < now {
        return Err(invalid_signature(format!(
            "Signature expired: {given} is now earlier than {} ({} - 15 min.)",
            stamp(now - MAX_CLOCK_SKEW),
            stamp(now)
        )));
    }
    if signed_at > now + MAX_CLOCK_SKEW {
        return Err(invalid_signature(format!(
            "Signature not yet current: {given} is still later than {} ({} + 15 min.)",
            stamp(now + MAX_CLOCK_SKEW),
            stamp(now)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    /// The example of the Signature V4 documentation: IAM's ListUsers,
    /// signed at 2015-08-30T12:36:00Z.
    fn documented(authorization: &str) -> (Method, Uri, HeaderMap) {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            (
                "content-type",
                "application/x-www-form-urlencoded; charset=utf-8",
            ),
            ("host", "iam.amazonaws.com"),
            ("x-amz-date", "20150830T123600Z"),
            ("authorization", authorization),
        ] {
            headers.insert(name, HeaderValue::from_str(value).expect("a header value"));
        }
        let uri: Uri = "/?Action=ListUsers&Version=2010-05-08"
            .parse()
            .expect("a URI");
        (Method::GET, uri, headers)
    }

    fn signed_with(signature: &str) -> String {
        format!(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature={signature}"
        )
    }

    const DOCUMENTED_SIGNATURE: &str =
        "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";

    fn signed_at() -> SystemTime {
        parse_stamp("20150830T123600Z").expect("a stamp")
    }

    fn verify(credentials: &str, authorization: &str, now: SystemTime) -> Result<(), ApiError> {
        let (method, uri, headers) = documented(authorization);
        Credentials::parse(credentials)
            .expect("credentials")
            .verify(
                &SignedRequest {
                    method: &method,
                    uri: &uri,
                    headers: &headers,
                    body: b"",
                },
                now,
            )
    }

    fn refused(result: Result<(), ApiError>) -> (ErrorKind, String) {
        let error = result.expect_err("refused");
        (error.kind, error.message.unwrap_or_default())
    }

    #[test]
    fn the_documented_example_verifies() {
        let keys = format!("AKIDEXAMPLE:{SECRET}");
        assert_eq!(
            verify(&keys, &signed_with(DOCUMENTED_SIGNATURE), signed_at()),
            Ok(())
        );
        let (kind, message) = refused(verify(
            "AKIDEXAMPLE:another-secret",
            &signed_with(DOCUMENTED_SIGNATURE),
            signed_at(),
        ));
        assert_eq!(kind, ErrorKind::InvalidSignature);
        assert!(message.starts_with("The request signature we calculated does not match"));
        let tampered = DOCUMENTED_SIGNATURE.replace('5', "6");
        let (kind, _) = refused(verify(&keys, &signed_with(&tampered), signed_at()));
        assert_eq!(kind, ErrorKind::InvalidSignature);
    }

    #[test]
    fn unknown_keys_missing_headers_and_skewed_clocks_are_refused_as_dynamodb_does() {
        let (kind, message) = refused(verify(
            "someone-else:secret",
            &signed_with(DOCUMENTED_SIGNATURE),
            signed_at(),
        ));
        assert_eq!(kind, ErrorKind::UnrecognizedClient);
        assert_eq!(
            message,
            "The security token included in the request is invalid."
        );
        let keys = format!("AKIDEXAMPLE:{SECRET}");
        let (kind, message) = refused(verify(&keys, "Basic abc", signed_at()));
        assert_eq!(kind, ErrorKind::MissingAuthenticationToken);
        assert_eq!(message, "Request is missing Authentication Token");
        let partial = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request";
        let (kind, message) = refused(verify(&keys, partial, signed_at()));
        assert_eq!(kind, ErrorKind::IncompleteSignature);
        assert_eq!(
            message,
            format!(
                "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. Authorization={partial}"
            )
        );
        let late = signed_at() + Duration::from_secs(15 * 60 + 1);
        let (kind, message) = refused(verify(&keys, &signed_with(DOCUMENTED_SIGNATURE), late));
        assert_eq!(kind, ErrorKind::InvalidSignature);
        assert_eq!(
            message,
            "Signature expired: 20150830T123600Z is now earlier than 20150830T123601Z (20150830T125101Z - 15 min.)"
        );
        let early = signed_at() - Duration::from_secs(15 * 60 + 1);
        let (_, message) = refused(verify(&keys, &signed_with(DOCUMENTED_SIGNATURE), early));
        assert!(message.starts_with("Signature not yet current: 20150830T123600Z"));
        let within = signed_at() + Duration::from_secs(15 * 60);
        assert_eq!(
            verify(&keys, &signed_with(DOCUMENTED_SIGNATURE), within),
            Ok(())
        );
    }

    #[test]
    fn credential_files_hold_one_key_per_line() {
        let credentials = Credentials::parse("# local keys\n\nalice:secret:with:colons\nbob:s2\n")
            .expect("parses");
        assert_eq!(credentials.secrets["alice"], "secret:with:colons");
        assert!(
            !format!("{credentials:?}").contains("s2"),
            "no secret in Debug"
        );
        assert_eq!(
            Credentials::parse("alice\n").map(|_| ()),
            Err(CredentialsError::Malformed { line: 1 })
        );
        assert_eq!(
            Credentials::parse("a:1\na:2").map(|_| ()),
            Err(CredentialsError::Repeated {
                line: 2,
                key_id: "a".into()
            })
        );
        assert_eq!(
            Credentials::parse("# none\n").map(|_| ()),
            Err(CredentialsError::Empty)
        );
    }
}
