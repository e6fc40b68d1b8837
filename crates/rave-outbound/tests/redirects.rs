//! Redirects re-checked at every hop: a guarded client following
//! `rechecked_redirects` reaches a public host's redirect to itself, and
//! refuses one to a loopback literal, to a name resolving to loopback or to
//! the metadata address, without connecting there; one to another scheme
//! is not followed.
//!
//! The image server listens on loopback; the client reaches it as
//! `images.test`, which `reqwest`'s resolve override maps to it without
//! the guarded resolver, so the first hop plays a public host and only the
//! redirects meet the rules.

#[path = "../../rave-import/tests/support/image_server.rs"]
mod image_server;

use image_server::ImageServer;
use rave_outbound::{TargetPolicy, Timeouts};
use reqwest::StatusCode;

fn client(policy: TargetPolicy, server: &ImageServer) -> reqwest::Client {
    rave_outbound::guarded(policy, Timeouts::default())
        .redirect(rave_outbound::rechecked_redirects(policy, 5))
        .resolve("images.test", server.addr)
        .build()
        .unwrap()
}

async fn get(
    client: &reqwest::Client,
    server: &ImageServer,
    path: &str,
) -> Result<StatusCode, String> {
    let url = format!("http://images.test:{}{path}", server.addr.port());
    match client.get(url).send().await {
        Ok(response) => Ok(response.status()),
        Err(error) => Err(rave_outbound::describe(&error)),
    }
}

#[tokio::test]
async fn each_redirect_is_held_to_the_rules_of_the_first_url() {
    let server = ImageServer::start().await;
    let strict = client(TargetPolicy::default(), &server);
    assert_eq!(
        get(&strict, &server, "/to-good.jpg").await,
        Ok(StatusCode::OK)
    );
    assert_eq!(server.requests("/good.jpg"), 1);
    for (path, refusal) in [
        (
            "/to-loopback.jpg",
            "127.0.0.1 resolves to 127.0.0.1, a loopback",
        ),
        ("/to-localhost.jpg", "localhost resolves to"),
        (
            "/to-metadata.jpg",
            "169.254.169.254 resolves to 169.254.169.254",
        ),
    ] {
        let error = get(&strict, &server, path).await.unwrap_err();
        assert!(error.contains(refusal), "{path}: {error}");
    }
    // Another scheme is not followed at all: the 302 is the answer.
    assert_eq!(
        get(&strict, &server, "/to-file.jpg").await,
        Ok(StatusCode::FOUND)
    );
    // None of the refused hops was taken.
    assert_eq!(server.requests("/good.jpg"), 1);

    let lenient = client(
        TargetPolicy {
            allow_private: true,
        },
        &server,
    );
    assert_eq!(
        get(&lenient, &server, "/to-loopback.jpg").await,
        Ok(StatusCode::OK)
    );
    assert_eq!(server.requests("/good.jpg"), 2);
}
