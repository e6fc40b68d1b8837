//! [`DynamoStore`]: the two SDK clients (DynamoDB's and DynamoDB
//! Streams') one store talks through, and where they connect.

use aws_sdk_dynamodb::Client;

/// Where to find DynamoDB.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// An endpoint other than AWS's (DynamoDB Local, say).
    pub endpoint: Option<String>,
    /// The AWS region; by default from the environment or profile.
    pub region: Option<String>,
}

/// A DynamoDB account (or endpoint) as a [`rave_store::Store`].
#[derive(Debug, Clone)]
pub struct DynamoStore {
    pub(crate) client: Client,
    pub(crate) streams: aws_sdk_dynamodbstreams::Client,
}

impl DynamoStore {
    /// Connects with credentials and region from the usual AWS sources
    /// (environment, profile, instance role), overridden by `connection`.
    pub async fn connect(connection: &Connection) -> DynamoStore {
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
        if let Some(region) = &connection.region {
            loader = loader.region(aws_config::Region::new(region.clone()));
        }
        if let Some(endpoint) = &connection.endpoint {
            loader = loader.endpoint_url(endpoint);
        }
        let config = loader.load().await;
        DynamoStore {
            client: Client::new(&config),
            streams: aws_sdk_dynamodbstreams::Client::new(&config),
        }
    }

    /// A store on a local endpoint that ignores credentials (DynamoDB
    /// Local): fixed dummy credentials, region us-east-1, no lookups of the
    /// environment or instance metadata.
    pub fn local(endpoint: &str) -> DynamoStore {
        let config = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new("us-east-1"))
            .endpoint_url(endpoint)
            .credentials_provider(aws_sdk_dynamodb::config::SharedCredentialsProvider::new(
                aws_sdk_dynamodb::config::Credentials::new("local", "local", None, None, "rave"),
            ))
            .build();
        DynamoStore {
            client: Client::new(&config),
            streams: aws_sdk_dynamodbstreams::Client::new(&config),
        }
    }
}
