//! Requests to addresses users give: a webhook's endpoint, the moderation
//! hook, an imported review's photo. They reach only public `http`/`https`
//! addresses unless the operator allows private ones
//! (`--webhook-allow-private`, `--import-allow-private`).
//!
//! The check runs on addresses, after DNS resolution: a URL is checked
//! when it is given (a webhook's when it is registered), and again by the
//! client's own resolver on every connection, so a name that later
//! resolves to an internal address (DNS rebinding) is refused at the moment
//! it would be used. An IP literal never reaches a resolver, so
//! [`check_literal`] checks it before the request. Refused are loopback,
//! private, link-local (the cloud metadata services), carrier-grade NAT and
//! unique-local addresses.
//!
//! Redirects: [`client`] follows none (a webhook's 3xx is an unsuccessful
//! attempt); [`rechecked_redirects`] follows a few, each hop held to the
//! same rules as the first URL (its scheme and an IP literal here, a name
//! by the resolver when the client connects). Clients from [`guarded`] have
//! connect and whole-request timeouts and use no proxy.
//!
//! The rules live in a crate of their own, below rave-webhooks and
//! rave-import, because both reach outside with them and neither should
//! depend on the other; rave-store does no I/O and the domain knows
//! nothing of HTTP.

use std::error::Error as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use url::Url;

/// Whether private addresses may be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TargetPolicy {
    pub allow_private: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("{0}")]
    Invalid(String),
    #[error("only http and https targets are allowed, not {0}")]
    Scheme(String),
    #[error("{host} resolves to {address}, a loopback, private, link-local or metadata address")]
    Forbidden { host: String, address: IpAddr },
    #[error("{host} does not resolve: {detail}")]
    Unresolvable { host: String, detail: String },
}

/// Ranges no request reaches without `allow_private`: this host, private
/// networks, link-local (which holds the cloud metadata services at
/// 169.254.169.254), carrier-grade NAT (Alibaba's metadata at
/// 100.100.100.200), unique-local IPv6 (AWS's IPv6 metadata at
/// fd00:ec2::254), and addresses that are not unicast.
const FORBIDDEN_V4: [(Ipv4Addr, u8); 12] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(127, 0, 0, 0), 8),
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 0, 0, 0), 24),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(198, 18, 0, 0), 15),
    (Ipv4Addr::new(224, 0, 0, 0), 4),
    (Ipv4Addr::new(240, 0, 0, 0), 4),
    (Ipv4Addr::new(255, 255, 255, 255), 32),
];

const FORBIDDEN_V6: [(Ipv6Addr, u8); 5] = [
    (Ipv6Addr::UNSPECIFIED, 128),
    (Ipv6Addr::LOCALHOST, 128),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8),
];

/// NAT64's well-known prefix: the last 32 bits are an IPv4 address.
const NAT64: (Ipv6Addr, u8) = (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96);

fn within(ip: IpAddr, ranges: impl IntoIterator<Item = IpNet>) -> bool {
    ranges.into_iter().any(|net| net.contains(&ip))
}

fn v4_ranges() -> impl Iterator<Item = IpNet> {
    FORBIDDEN_V4
        .iter()
        .filter_map(|(a, len)| Ipv4Net::new(*a, *len).ok().map(IpNet::V4))
}

/// Whether `ip` may not be reached unless private targets are allowed.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => within(IpAddr::V4(v4), v4_ranges()),
        IpAddr::V6(v6) => {
            // An IPv4 address dressed as IPv6 is judged as the IPv4 address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden(IpAddr::V4(v4));
            }
            let nat64 = Ipv6Net::new(NAT64.0, NAT64.1).map(|n| n.contains(&v6));
            if nat64.unwrap_or(false) {
                let [.., a, b, c, d] = v6.octets();
                return is_forbidden(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
            }
            within(
                ip,
                FORBIDDEN_V6
                    .iter()
                    .filter_map(|(a, len)| Ipv6Net::new(*a, *len).ok().map(IpNet::V6)),
            )
        }
    }
}

impl TargetPolicy {
    /// Refuses `addresses` if any of them is forbidden: a name that
    /// resolves to a public and a private address could be made to use
    /// either.
    pub fn check_addresses(&self, host: &str, addresses: &[SocketAddr]) -> Result<(), TargetError> {
        if self.allow_private {
            return Ok(());
        }
        match addresses.iter().find(|a| is_forbidden(a.ip())) {
            Some(address) => Err(TargetError::Forbidden {
                host: host.to_owned(),
                address: address.ip(),
            }),
            None => Ok(()),
        }
    }

    /// Parses a URL, resolves its host and checks every address.
    pub async fn check_url(&self, text: &str) -> Result<Url, TargetError> {
        let url = Url::parse(text).map_err(|e| TargetError::Invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(TargetError::Scheme(url.scheme().to_owned()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(TargetError::Invalid(
                "credentials in a URL are not allowed".into(),
            ));
        }
        let host = url
            .host_str()
            .ok_or_else(|| TargetError::Invalid("the URL names no host".into()))?
            .to_owned();
        let port = url
            .port_or_known_default()
            .ok_or_else(|| TargetError::Invalid("the URL names no port".into()))?;
        let addresses = resolve(&host, port).await?;
        self.check_addresses(&host, &addresses)?;
        Ok(url)
    }
}

async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, TargetError> {
    // `host_str` keeps IPv6 literals in brackets; lookup_host wants them bare.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let unresolvable = |detail: String| TargetError::Unresolvable {
        host: host.to_owned(),
        detail,
    };
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|e| unresolvable(e.to_string()))?
        .collect();
    if addresses.is_empty() {
        return Err(unresolvable("no addresses".into()));
    }
    Ok(addresses)
}

/// A guarded client's resolver: every connection's addresses pass the
/// policy, so the check holds at the moment of use.
#[derive(Debug)]
struct GuardedResolver(TargetPolicy);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.0;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // The port is the connector's to set; resolution is per host.
            let addresses = resolve(&host, 0).await?;
            policy.check_addresses(&host, &addresses)?;
            let addresses: reqwest::dns::Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}

/// How long a request may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    /// The whole attempt: connecting, sending and the response.
    pub response: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(5),
            response: Duration::from_secs(15),
        }
    }
}

/// A client builder with the guarded resolver, no proxies and the
/// timeouts; the caller adds its redirect policy and user agent.
pub fn guarded(policy: TargetPolicy, timeouts: Timeouts) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(GuardedResolver(policy)))
        .no_proxy()
        .connect_timeout(timeouts.connect)
        .timeout(timeouts.response)
}

/// The client webhook deliveries and the moderation hook use: guarded, no
/// redirects.
pub fn client(policy: TargetPolicy, timeouts: Timeouts) -> Result<reqwest::Client, TargetError> {
    guarded(policy, timeouts)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("rave-webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| TargetError::Invalid(format!("the HTTP client does not build: {e}")))
}

/// Follows at most `max` redirects, each to an `http`/`https` URL without
/// credentials whose IP literal, if it names one, the policy allows (a
/// name is checked by the guarded resolver when the client connects).
pub fn rechecked_redirects(policy: TargetPolicy, max: usize) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > max {
            return attempt.error(format!("more than {max} redirects"));
        }
        let url = attempt.url();
        if !matches!(url.scheme(), "http" | "https") {
            let scheme = url.scheme().to_owned();
            return attempt.error(TargetError::Scheme(scheme));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return attempt.error(TargetError::Invalid(
                "credentials in a URL are not allowed".into(),
            ));
        }
        match check_literal(policy, url) {
            Ok(()) => attempt.follow(),
            Err(refused) => attempt.error(refused),
        }
    })
}

/// An IP literal in a URL never reaches the resolver, so the client checks
/// it before connecting.
pub fn check_literal(policy: TargetPolicy, url: &Url) -> Result<(), TargetError> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        _ => return Ok(()),
    };
    policy.check_addresses(&ip.to_string(), &[SocketAddr::new(ip, 0)])
}

/// An error with its causes, which is where reqwest keeps the reason
/// (refused address, connection refused, timeout).
pub fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "timed out".to_owned()
    } else {
        error.to_string()
    };
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn internal_addresses_are_forbidden() {
        for text in [
            "127.0.0.1",
            "127.255.0.1",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            assert!(is_forbidden(ip(text)), "{text} must be forbidden");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for text in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(!is_forbidden(ip(text)), "{text} must be allowed");
        }
    }

    #[tokio::test]
    async fn urls_naming_or_resolving_to_internal_addresses_are_refused() {
        let policy = TargetPolicy::default();
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://[::1]/hook",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.5/",
            "http://localhost:9000/hook",
        ] {
            let refused = policy.check_url(url).await;
            assert!(
                matches!(refused, Err(TargetError::Forbidden { .. })),
                "{url}: {refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn only_http_and_https_are_targets() {
        let policy = TargetPolicy {
            allow_private: true,
        };
        for url in ["ftp://example.com/", "file:///etc/passwd", "gopher://x/"] {
            assert!(
                matches!(policy.check_url(url).await, Err(TargetError::Scheme(_))),
                "{url}"
            );
        }
        assert!(matches!(
            policy.check_url("http://user:pw@localhost/").await,
            Err(TargetError::Invalid(_))
        ));
    }

    #[tokio::test]
    async fn allowing_private_targets_lets_loopback_through() {
        let policy = TargetPolicy {
            allow_private: true,
        };
        assert!(policy.check_url("http://127.0.0.1:8080/hook").await.is_ok());
        assert!(policy.check_url("http://localhost:8080/hook").await.is_ok());
    }

    #[test]
    fn literal_addresses_are_checked_before_connecting() {
        let url = Url::parse("http://127.0.0.1:1/").unwrap();
        assert!(check_literal(TargetPolicy::default(), &url).is_err());
        assert!(
            check_literal(
                TargetPolicy {
                    allow_private: true
                },
                &url
            )
            .is_ok()
        );
        let named = Url::parse("http://example.com/").unwrap();
        assert!(check_literal(TargetPolicy::default(), &named).is_ok());
    }
}
