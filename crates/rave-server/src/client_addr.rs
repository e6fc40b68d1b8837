//! Who the client is. Without proxies it is the TCP peer. Behind a load
//! balancer or CDN every request comes from the proxy, which records the
//! address it served in `X-Forwarded-For` or RFC 7239 `Forwarded`; those
//! headers are believed only from peers the operator declared trusted, since
//! anyone else can write them.
//!
//! Each proxy appends the address it received the request from, so the list
//! reads left to right from the client towards the server. Walking it from
//! the right, entries written by trusted proxies can be believed; the first
//! address that is not itself a trusted proxy is the client. Anything further
//! left was written by that client and proves nothing.
//!
//! Trusted proxies are CIDR blocks (`--trusted-proxy`). A middleware
//! resolves the client once per request; the log span and the rate limit
//! read it from the request's extensions.

use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, header};
use ipnet::IpNet;

/// A proxy, or a block of them, whose forwarding headers are believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedProxy(IpNet);

/// A `--trusted-proxy` value that is neither an address nor a CIDR block.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is neither an IP address nor a CIDR block (like 10.0.0.0/8 or 2001:db8::/32)")]
pub struct InvalidTrustedProxy(String);

impl FromStr for TrustedProxy {
    type Err = InvalidTrustedProxy;

    /// A CIDR block, or a plain address meaning that one host (/32, /128).
    fn from_str(text: &str) -> Result<TrustedProxy, InvalidTrustedProxy> {
        let text = text.trim();
        let block = match text.parse::<IpNet>() {
            Ok(block) => block.trunc(),
            Err(_) => text
                .parse::<IpAddr>()
                .map(IpNet::from)
                .map_err(|_| InvalidTrustedProxy(text.to_owned()))?,
        };
        Ok(TrustedProxy(block))
    }
}

impl fmt::Display for TrustedProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The proxies whose forwarding headers are believed; none by default.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<[IpNet]>);

impl FromIterator<TrustedProxy> for TrustedProxies {
    fn from_iter<I: IntoIterator<Item = TrustedProxy>>(proxies: I) -> TrustedProxies {
        TrustedProxies(proxies.into_iter().map(|proxy| proxy.0).collect())
    }
}

/// One entry of a forwarding header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Address(IpAddr),
    /// `unknown`, an obfuscated identifier (`_hidden`), an element without
    /// `for=`, or text that is no address.
    Unknown,
}

impl TrustedProxies {
    fn trusts(&self, address: IpAddr) -> bool {
        self.0.iter().any(|block| block.contains(&address))
    }

    /// The client of a request that arrived from `peer` with `headers`.
    pub(crate) fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        // Proxies in common use (cloud load balancers, CDNs, nginx) append
        // to X-Forwarded-For and pass a client's `Forwarded` through, so
        // X-Forwarded-For wins when both are present.
        let hops = if headers.contains_key(X_FORWARDED_FOR) {
            hops_in(headers, &X_FORWARDED_FOR, x_forwarded_for_hops)
        } else {
            hops_in(headers, &header::FORWARDED, forwarded_hops)
        };
        self.rightmost_untrusted(peer, &hops)
    }

    /// The rightmost address that is not a trusted proxy; the leftmost when
    /// all are trusted. An unknown hop written by a trusted proxy ends the
    /// walk at that proxy: nothing left of it can be believed.
    fn rightmost_untrusted(&self, peer: IpAddr, hops: &[Hop]) -> IpAddr {
        let mut nearest_known = peer;
        for hop in hops.iter().rev() {
            match *hop {
                Hop::Address(address) if self.trusts(address) => nearest_known = address,
                Hop::Address(address) => return address,
                Hop::Unknown => return nearest_known,
            }
        }
        nearest_known
    }
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// The hops of every `name` header line, in order, each line read by
/// `parse`; empty when there is none.
fn hops_in(headers: &HeaderMap, name: &HeaderName, parse: fn(&str) -> Vec<Hop>) -> Vec<Hop> {
    let mut hops = Vec::new();
    for line in headers.get_all(name) {
        match line.to_str() {
            Ok(line) => hops.extend(parse(line)),
            Err(_) => hops.push(Hop::Unknown),
        }
    }
    hops
}

/// The entries of an `X-Forwarded-For` value.
fn x_forwarded_for_hops(value: &str) -> Vec<Hop> {
    value
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(node_hop)
        .collect()
}

/// The `for=` node of each element of an RFC 7239 `Forwarded` value.
fn forwarded_hops(value: &str) -> Vec<Hop> {
    split_outside_quotes(value, ',')
        .into_iter()
        .filter(|element| !element.trim().is_empty())
        .map(|element| {
            split_outside_quotes(element, ';')
                .into_iter()
                .filter_map(|pair| pair.split_once('='))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))
                .map_or(Hop::Unknown, |(_, node)| node_hop(&unquote(node.trim())))
        })
        .collect()
}

/// `text` split at each `separator` that is not inside a quoted string.
fn split_outside_quotes(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => {
                parts.push(&text[start..at]);
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A token as it is, a quoted string without its quotes and escapes.
fn unquote(value: &str) -> Cow<'_, str> {
    let Some(inner) = value
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    else {
        return Cow::Borrowed(value);
    };
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    let mut plain = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        plain.extend(if c == '\\' { chars.next() } else { Some(c) });
    }
    Cow::Owned(plain)
}

/// A node: an address, with or without a port; IPv6 bare or in brackets.
fn node_hop(node: &str) -> Hop {
    parse_node(node).map_or(Hop::Unknown, |address| Hop::Address(address.to_canonical()))
}

fn parse_node(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        let (address, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.starts_with(':')) {
            return None;
        }
        return address.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    if let Ok(address) = node.parse::<IpAddr>() {
        return Some(address);
    }
    let (host, _port) = node.split_once(':')?;
    host.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// The client's address, set on each request by `middleware::resolve_client`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientAddr(pub IpAddr);

impl fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use proptest::prelude::*;

    fn trusted(blocks: &[&str]) -> TrustedProxies {
        blocks.iter().map(|block| block.parse().unwrap()).collect()
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn headers(lines: &[(&HeaderName, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in lines {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn trusted_proxies_are_addresses_or_blocks() {
        let proxy: TrustedProxy = "10.1.2.3".parse().unwrap();
        assert_eq!(proxy.to_string(), "10.1.2.3/32");
        let proxy: TrustedProxy = "2001:db8::1".parse().unwrap();
        assert_eq!(proxy.to_string(), "2001:db8::1/128");
        let proxy: TrustedProxy = " 10.1.2.3/8 ".parse().unwrap();
        assert_eq!(proxy.to_string(), "10.0.0.0/8");
        for bad in [
            "",
            "10.0.0.0/33",
            "proxy.internal",
            "10.0.0",
            "::1/129",
            "10.0.0.1:80",
        ] {
            let error = bad.parse::<TrustedProxy>().unwrap_err();
            assert!(error.to_string().contains("CIDR"), "{bad}: {error}");
        }
    }

    #[test]
    fn forwarded_nodes_in_their_odd_forms() {
        let cases: &[(&str, Vec<Hop>)] = &[
            ("for=192.0.2.60", vec![Hop::Address(ip("192.0.2.60"))]),
            (
                "For=\"192.0.2.60:8080\"",
                vec![Hop::Address(ip("192.0.2.60"))],
            ),
            (
                "for=\"[2001:db8:cafe::17]:4711\"",
                vec![Hop::Address(ip("2001:db8:cafe::17"))],
            ),
            (
                "for=\"[2001:db8:cafe::17]\"",
                vec![Hop::Address(ip("2001:db8:cafe::17"))],
            ),
            (
                "for=\"[2001:db8::1]:_port\"",
                vec![Hop::Address(ip("2001:db8::1"))],
            ),
            ("for=unknown", vec![Hop::Unknown]),
            (
                "for=_hidden, for=_SEVKISEK",
                vec![Hop::Unknown, Hop::Unknown],
            ),
            (
                "for=192.0.2.43, for=198.51.100.17",
                vec![
                    Hop::Address(ip("192.0.2.43")),
                    Hop::Address(ip("198.51.100.17")),
                ],
            ),
            (
                "proto=https;for=192.0.2.43;by=203.0.113.60;host=\"a;b,c\"",
                vec![Hop::Address(ip("192.0.2.43"))],
            ),
            (
                "by=\"x,y\";for=\"192.0.2.1\", proto=http",
                vec![Hop::Address(ip("192.0.2.1")), Hop::Unknown],
            ),
            (
                "for=\"\\[2001:db8::9\\]\"",
                vec![Hop::Address(ip("2001:db8::9"))],
            ),
            ("for=\"[2001:db8::1]x\"", vec![Hop::Unknown]),
            (
                "for=\"[::ffff:192.0.2.7]\"",
                vec![Hop::Address(ip("192.0.2.7"))],
            ),
            ("for=", vec![Hop::Unknown]),
            (" , for=192.0.2.5 ,", vec![Hop::Address(ip("192.0.2.5"))]),
            ("for=\"unterminated", vec![Hop::Unknown]),
        ];
        for (value, expected) in cases {
            assert_eq!(&forwarded_hops(value), expected, "{value}");
        }
    }

    #[test]
    fn x_forwarded_for_entries_with_and_without_ports() {
        let headers = headers(&[
            (
                &X_FORWARDED_FOR,
                "203.0.113.9, 2001:db8::5 ,, 192.0.2.1:4711",
            ),
            (&X_FORWARDED_FOR, "[2001:db8::6]:443, garbage"),
        ]);
        assert_eq!(
            hops_in(&headers, &X_FORWARDED_FOR, x_forwarded_for_hops),
            vec![
                Hop::Address(ip("203.0.113.9")),
                Hop::Address(ip("2001:db8::5")),
                Hop::Address(ip("192.0.2.1")),
                Hop::Address(ip("2001:db8::6")),
                Hop::Unknown,
            ]
        );
    }

    #[test]
    fn the_client_is_the_rightmost_untrusted_address() {
        let proxies = trusted(&["10.0.0.0/8", "2001:db8:ffff::/48"]);
        let peer = ip("10.0.0.1");
        let client = |line: &str| proxies.client(peer, &headers(&[(&X_FORWARDED_FOR, line)]));
        // The client wrote the first entry itself: it proves nothing.
        assert_eq!(client("1.1.1.1, 203.0.113.7"), ip("203.0.113.7"));
        assert_eq!(client("1.1.1.1, 203.0.113.7, 10.9.9.9"), ip("203.0.113.7"));
        assert_eq!(
            client("203.0.113.7, 2001:db8:ffff::1, 10.2.2.2"),
            ip("203.0.113.7")
        );
        // All trusted: the leftmost.
        assert_eq!(client("10.3.3.3, 10.2.2.2"), ip("10.3.3.3"));
        // A trusted proxy did not know its client: that proxy is the client.
        assert_eq!(client("203.0.113.7, unknown, 10.2.2.2"), ip("10.2.2.2"));
        assert_eq!(client("203.0.113.7, unknown"), peer);
        // No header: the peer.
        assert_eq!(proxies.client(peer, &HeaderMap::new()), peer);
    }

    #[test]
    fn headers_from_an_untrusted_peer_are_ignored() {
        let proxies = trusted(&["10.0.0.0/8"]);
        let spoofed = headers(&[
            (&X_FORWARDED_FOR, "198.51.100.1"),
            (&header::FORWARDED, "for=198.51.100.2"),
        ]);
        assert_eq!(proxies.client(ip("192.0.2.77"), &spoofed), ip("192.0.2.77"));
        assert_eq!(
            TrustedProxies::default().client(ip("10.0.0.1"), &spoofed),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn x_forwarded_for_wins_over_forwarded_which_is_used_alone() {
        let proxies = trusted(&["127.0.0.1"]);
        let peer = ip("127.0.0.1");
        let both = headers(&[
            (&header::FORWARDED, "for=198.51.100.2"),
            (&X_FORWARDED_FOR, "198.51.100.1"),
        ]);
        assert_eq!(proxies.client(peer, &both), ip("198.51.100.1"));
        let forwarded = headers(&[(&header::FORWARDED, "for=\"[2001:db8::7]:80\"")]);
        assert_eq!(proxies.client(peer, &forwarded), ip("2001:db8::7"));
    }

    #[test]
    fn ipv4_mapped_peers_match_ipv4_blocks() {
        let proxies = trusted(&["10.0.0.0/8"]);
        let peer = ip("::ffff:10.0.0.1");
        let forwarded = headers(&[(&X_FORWARDED_FOR, "203.0.113.7")]);
        assert_eq!(proxies.client(peer, &forwarded), ip("203.0.113.7"));
        assert_eq!(
            proxies.client(ip("::ffff:192.0.2.1"), &forwarded),
            ip("192.0.2.1")
        );
    }

    fn any_address() -> impl Strategy<Value = IpAddr> {
        prop_oneof![
            any::<u32>().prop_map(|bits| IpAddr::from(Ipv4Addr::from(bits))),
            any::<u128>()
                .prop_map(|bits| IpAddr::from(Ipv6Addr::from(bits)))
                .prop_filter("not IPv4-mapped", |address| address.to_canonical()
                    == *address),
        ]
    }

    /// One element of a `Forwarded` value, written one of the ways RFC 7239
    /// allows, with parameters around `for` that contain separators.
    fn forwarded_element(address: IpAddr, form: u8, port: u16) -> String {
        let node = match (address, form % 2) {
            (IpAddr::V4(v4), 0) => v4.to_string(),
            (IpAddr::V6(v6), 0) => format!("\"[{v6}]\""),
            (address, _) => format!("\"{}\"", std::net::SocketAddr::new(address, port)),
        };
        match form / 2 % 2 {
            0 => format!("for={node}"),
            _ => format!("proto=https;host=\"a,b;c\";FOR={node};by=_proxy"),
        }
    }

    proptest! {
        #[test]
        fn forwarded_round_trips_any_addresses(
            hops in prop::collection::vec((any_address(), any::<u8>(), any::<u16>()), 1..6)
        ) {
            let value = hops
                .iter()
                .map(|(address, form, port)| forwarded_element(*address, *form, *port))
                .collect::<Vec<_>>()
                .join(", ");
            let expected: Vec<Hop> = hops.iter().map(|(address, _, _)| Hop::Address(*address)).collect();
            prop_assert_eq!(forwarded_hops(&value), expected);
        }

        #[test]
        fn the_rule_matches_its_definition(
            chain in prop::collection::vec(any::<u8>(), 0..8),
        ) {
            // Addresses 10.0.0.x; those below 128 trusted; 0 stands for `unknown`.
            let proxies = trusted(&["10.0.0.0/25"]);
            let peer = ip("10.0.0.1");
            let hops: Vec<Hop> = chain
                .iter()
                .map(|&x| match x {
                    0 => Hop::Unknown,
                    x => Hop::Address(IpAddr::from([10, 0, 0, x])),
                })
                .collect();
            // The definition: the first hop from the right that is unknown
            // or untrusted decides; an unknown one means the trusted hop
            // after it (or the peer); none at all means the leftmost, or the
            // peer for an empty list.
            let deciding = hops
                .iter()
                .rposition(|hop| !matches!(hop, Hop::Address(a) if proxies.trusts(*a)));
            let expected = match deciding {
                Some(at) => match hops[at] {
                    Hop::Address(address) => address,
                    Hop::Unknown => match hops.get(at + 1) {
                        Some(Hop::Address(address)) => *address,
                        _ => peer,
                    },
                },
                None => match hops.first() {
                    Some(Hop::Address(address)) => *address,
                    _ => peer,
                },
            };
            prop_assert_eq!(proxies.rightmost_untrusted(peer, &hops), expected);
        }
    }
}
