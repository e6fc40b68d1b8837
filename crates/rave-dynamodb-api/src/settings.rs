//! Table settings DynamoDB keeps and describes: deletion protection,
//! enforced here (DeleteTable refuses a protected table), and three whose
//! effect lies beyond one node, kept and described only: the table class
//! (a storage price), on-demand maximums (throttling) and server-side
//! encryption (rave writes its files unencrypted; the README tells
//! operators to encrypt the disk).
//!
//! Also the `TableId`: random at creation, and derived from the name for a
//! table made elsewhere, so that it is stable.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::request::{Members, validation_errors};

const TABLE_CLASSES: [&str; 2] = ["STANDARD", "STANDARD_INFREQUENT_ACCESS"];
const SSE_TYPES: [&str; 2] = ["AES256", "KMS"];
/// Where the KMS keys rave names live (its tables are in region `local`
/// of account 0, as their ARNs say).
const KMS_ARN_PREFIX: &str = "arn:aws:kms:local:000000000000:";
/// DynamoDB's own KMS key, used when encryption is enabled without a key.
const MANAGED_KEY_ALIAS: &str = "alias/aws/dynamodb";
/// A maximum of -1 is no maximum.
const UNLIMITED: i64 = -1;

/// What CreateTable or UpdateTable set; every field defaults, so entries
/// written before settings existed still read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TableSettings {
    /// The class and when it was last set (seconds since the Unix epoch);
    /// unset, the table is STANDARD and DynamoDB shows no summary.
    #[serde(default)]
    pub(crate) table_class: Option<(String, f64)>,
    #[serde(default)]
    pub(crate) deletion_protection: bool,
    #[serde(default)]
    pub(crate) on_demand: Option<OnDemandMaximums>,
    /// The KMS key's ARN when encryption uses a KMS key; unset, the
    /// AWS-owned key, which DynamoDB does not describe.
    #[serde(default)]
    pub(crate) kms_key_arn: Option<String>,
}

/// On-demand maximum request units per second, -1 for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OnDemandMaximums {
    pub(crate) read: i64,
    pub(crate) write: i64,
}

/// The settings a request asks for, each `None` when not asked.
#[derive(Debug, Default)]
pub(crate) struct RequestedSettings {
    table_class: Option<String>,
    deletion_protection: Option<bool>,
    on_demand: Option<OnDemandMaximums>,
    /// `Some(None)`: back to the AWS-owned key.
    kms_key_arn: Option<Option<String>>,
}

impl RequestedSettings {
    /// Reads and checks the settings members of a CreateTable or
    /// UpdateTable request.
    pub(crate) fn read(body: Members<'_>) -> Result<RequestedSettings, ApiError> {
        body.check_enums(&[("TableClass", &TABLE_CLASSES)])?;
        Ok(RequestedSettings {
            table_class: body.string("TableClass")?.map(str::to_owned),
            deletion_protection: body.optional_bool("DeletionProtectionEnabled")?,
            on_demand: body
                .object("OnDemandThroughput")?
                .map(on_demand_maximums)
                .transpose()?,
            kms_key_arn: body
                .object("SSESpecification")?
                .map(kms_key_arn)
                .transpose()?,
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table_class.is_none()
            && self.deletion_protection.is_none()
            && self.on_demand.is_none()
            && self.kms_key_arn.is_none()
    }

    /// `settings` with what was asked applied, `now` being the time of
    /// the change.
    pub(crate) fn apply_to(self, settings: &mut TableSettings, now: f64) {
        if let Some(class) = self.table_class {
            settings.table_class = Some((class, now));
        }
        if let Some(protection) = self.deletion_protection {
            settings.deletion_protection = protection;
        }
        if let Some(maximums) = self.on_demand {
            settings.on_demand = Some(maximums);
        }
        if let Some(key) = self.kms_key_arn {
            settings.kms_key_arn = key;
        }
    }
}

fn on_demand_maximums(members: Members<'_>) -> Result<OnDemandMaximums, ApiError> {
    let read = members.integer("MaxReadRequestUnits")?;
    let write = members.integer("MaxWriteRequestUnits")?;
    let violations: Vec<String> = [
        ("maxReadRequestUnits", read),
        ("maxWriteRequestUnits", write),
    ]
    .into_iter()
    .filter_map(|(at, value)| {
        let value = value?;
        (value < 1 && value != UNLIMITED).then(|| {
            format!(
                "Value '{value}' at 'onDemandThroughput.{at}' failed to satisfy constraint: Member must have value greater than or equal to -1 and not 0"
            )
        })
    })
    .collect();
    if !violations.is_empty() {
        return Err(validation_errors(&violations));
    }
    Ok(OnDemandMaximums {
        read: read.unwrap_or(UNLIMITED),
        write: write.unwrap_or(UNLIMITED),
    })
}

/// The KMS key an `SSESpecification` asks for: `None` for the AWS-owned
/// key (encryption not enabled), else the key's ARN.
fn kms_key_arn(members: Members<'_>) -> Result<Option<String>, ApiError> {
    members.check_enums(&[("SSEType", &SSE_TYPES)])?;
    if !members.bool("Enabled")? {
        return Ok(None);
    }
    Ok(Some(match members.string("KMSMasterKeyId")? {
        Some(arn) if arn.starts_with("arn:") => arn.to_owned(),
        Some(alias) if alias.starts_with("alias/") => format!("{KMS_ARN_PREFIX}{alias}"),
        Some(key_id) => format!("{KMS_ARN_PREFIX}key/{key_id}"),
        None => format!(
            "{KMS_ARN_PREFIX}key/{}",
            uuid_from(MANAGED_KEY_ALIAS.as_bytes())
        ),
    }))
}

/// Adds the settings to a table description.
pub(crate) fn describe(settings: &TableSettings, description: &mut Value) {
    description["DeletionProtectionEnabled"] = json!(settings.deletion_protection);
    if let Some((class, updated)) = &settings.table_class {
        description["TableClassSummary"] =
            json!({"TableClass": class, "LastUpdateDateTime": updated});
    }
    if let Some(maximums) = settings.on_demand {
        description["OnDemandThroughput"] = json!({
            "MaxReadRequestUnits": maximums.read,
            "MaxWriteRequestUnits": maximums.write,
        });
    }
    if let Some(arn) = &settings.kms_key_arn {
        description["SSEDescription"] =
            json!({"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": arn});
    }
}

/// DeleteTable's refusal of a protected table.
pub(crate) fn check_deletable(settings: &TableSettings) -> Result<(), ApiError> {
    match settings.deletion_protection {
        true => Err(ApiError::validation(
            "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
        )),
        false => Ok(()),
    }
}

/// A new table's id: unique (a ULID's bits), shaped as a version-4 UUID.
pub(crate) fn new_table_id() -> String {
    let mut bytes = ulid::Ulid::generate().to_bytes();
    bytes[6] = (bytes[6] & 0x0F) | 0x40;
    bytes[8] = (bytes[8] & 0x3F) | 0x80;
    uuid_text(&bytes)
}

/// A UUID-shaped id derived from `seed`: the id of a table created some
/// other way (by `rave serve`), stable across descriptions.
pub(crate) fn uuid_from(seed: &[u8]) -> String {
    let digest = Sha256::digest(seed);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0F) | 0x50;
    bytes[8] = (bytes[8] & 0x3F) | 0x80;
    uuid_text(&bytes)
}

fn uuid_text(bytes: &[u8; 16]) -> String {
    let hex = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requested(body: Value) -> Result<RequestedSettings, ApiError> {
        RequestedSettings::read(Members::of(&body)?)
    }

    #[test]
    fn settings_apply_and_describe() {
        let mut settings = TableSettings::default();
        requested(json!({
            "TableClass": "STANDARD_INFREQUENT_ACCESS",
            "DeletionProtectionEnabled": true,
            "OnDemandThroughput": {"MaxReadRequestUnits": 10},
            "SSESpecification": {"Enabled": true, "SSEType": "KMS"},
        }))
        .unwrap()
        .apply_to(&mut settings, 12.5);
        let mut description = json!({});
        describe(&settings, &mut description);
        assert_eq!(description["DeletionProtectionEnabled"], true);
        assert_eq!(
            description["TableClassSummary"],
            json!({"TableClass": "STANDARD_INFREQUENT_ACCESS", "LastUpdateDateTime": 12.5})
        );
        assert_eq!(
            description["OnDemandThroughput"],
            json!({"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": -1})
        );
        assert_eq!(description["SSEDescription"]["Status"], "ENABLED");
        assert!(check_deletable(&settings).is_err());

        requested(json!({
            "DeletionProtectionEnabled": false,
            "SSESpecification": {"Enabled": false},
        }))
        .unwrap()
        .apply_to(&mut settings, 13.0);
        let mut description = json!({});
        describe(&settings, &mut description);
        assert_eq!(description["DeletionProtectionEnabled"], false);
        assert!(description.get("SSEDescription").is_none());
        assert!(check_deletable(&settings).is_ok());
    }

    #[test]
    fn bad_settings_are_refused_and_nothing_is_asked_by_an_empty_request() {
        assert!(requested(json!({})).unwrap().is_empty());
        for bad in [
            json!({"TableClass": "GLACIER"}),
            json!({"OnDemandThroughput": {"MaxReadRequestUnits": 0}}),
            json!({"SSESpecification": {"Enabled": true, "SSEType": "DES"}}),
            json!({"DeletionProtectionEnabled": "yes"}),
        ] {
            assert!(requested(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn table_ids_are_uuids_and_derived_ones_are_stable() {
        let shape = |id: &str| {
            id.len() == 36
                && id
                    .char_indices()
                    .all(|(i, c)| matches!(i, 8 | 13 | 18 | 23) == (c == '-'))
        };
        assert!(shape(&new_table_id()));
        assert_ne!(new_table_id(), new_table_id());
        assert_eq!(uuid_from(b"orders"), uuid_from(b"orders"));
        assert!(shape(&uuid_from(b"orders")));
    }
}
