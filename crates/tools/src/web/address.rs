//! Which addresses the web tools may connect to: one function, [`classify`], used for every
//! literal, every resolved address and every redirect hop. Only public unicast passes. IPv6
//! forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that address; forms
//! that reach an unknown IPv4 host through a tunnel or a local translator (IPv4-compatible,
//! Teredo, local-use NAT64) are refused outright.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918, CGNAT (`100.64.0.0/10`), IPv6 unique-local (`fc00::/7`) or site-local.
    Private,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `224.0.0.0/4`, `ff00::/8`, broadcast.
    Multicast,
    /// Documentation and benchmarking ranges.
    Documentation,
    /// Reserved or special-purpose ranges (`240.0.0.0/4`, `192.0.0.0/24`, anything outside
    /// IPv6 global unicast `2000::/3`, `2001::/23`, discard-only, SRv6 SIDs).
    Reserved,
    /// IPv4 through a tunnel or translator whose far end cannot be checked: IPv4-compatible
    /// (`::a.b.c.d`), Teredo (`2001::/32`), local-use NAT64 (`64:ff9b:1::/48`).
    Tunnel,
}

/// `None` for a public unicast address, else why it is refused.
pub fn classify(ip: IpAddr) -> Option<Refused> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Whether the web tools may connect to `ip`.
pub fn is_public(ip: IpAddr) -> bool {
    classify(ip).is_none()
}

/// IPv4 special-purpose ranges (IANA registry).
pub fn classify_v4(ip: Ipv4Addr) -> Option<Refused> {
    let o = ip.octets();
    let r = match o {
        [0, ..] => Refused::Unspecified,
        [127, ..] => Refused::Loopback,
        [10, ..] => Refused::Private,
        [172, b, ..] if (16..=31).contains(&b) => Refused::Private,
        [192, 168, ..] => Refused::Private,
        [100, b, ..] if (64..=127).contains(&b) => Refused::Private,
        [169, 254, ..] => Refused::LinkLocal,
        [192, 0, 0, _] => Refused::Reserved,
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => Refused::Documentation,
        [198, 18 | 19, ..] => Refused::Documentation,
        [192, 88, 99, _] => Refused::Reserved,
        [255, 255, 255, 255] => Refused::Multicast,
        [a, ..] if (224..=239).contains(&a) => Refused::Multicast,
        [a, ..] if a >= 240 => Refused::Reserved,
        _ => return None,
    };
    Some(r)
}

/// IPv6: embedded IPv4 first, then the special ranges, then global unicast only.
pub fn classify_v6(ip: Ipv6Addr) -> Option<Refused> {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip.is_unspecified() {
        return Some(Refused::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Refused::Loopback);
    }
    // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated, RFC 2765).
    if s[..5] == [0; 5] && s[5] == 0xffff {
        return classify_v4(embedded(s[6], s[7]));
    }
    if s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0 {
        return classify_v4(embedded(s[6], s[7]));
    }
    // ::a.b.c.d, IPv4-compatible (deprecated): a tunnel to any IPv4 host.
    if s[..6] == [0; 6] {
        return Some(Refused::Tunnel);
    }
    // 64:ff9b::/96, well-known NAT64 prefix: the IPv4 host it translates to.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded(s[6], s[7]));
    }
    // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): any prefix length, any host.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return Some(Refused::Tunnel);
    }
    // 2002::/16, 6to4: judged by the IPv4 address in bits 16..48.
    if s[0] == 0x2002 {
        return classify_v4(embedded(s[1], s[2]));
    }
    // 2001::/32, Teredo: the client's IPv4 address is obfuscated in it.
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(Refused::Tunnel);
    }
    let r = match s[0] {
        0xff00..=0xffff => Refused::Multicast,
        0xfe80..=0xfebf => Refused::LinkLocal,
        0xfc00..=0xfdff | 0xfec0..=0xfeff => Refused::Private,
        // 2001:db8::/32 and 3fff::/20: documentation.
        0x2001 if s[1] == 0x0db8 => Refused::Documentation,
        0x3fff if s[1] < 0x1000 => Refused::Documentation,
        // 2001::/23: IETF protocol assignments (benchmarking, ORCHID, AMT, ...).
        0x2001 if s[1] < 0x0200 => Refused::Reserved,
        // 5f00::/16: SRv6 SIDs.
        0x5f00 => Refused::Reserved,
        // Global unicast is 2000::/3; everything else (100::/64 discard-only included) is not.
        a if !(0x2000..=0x3fff).contains(&a) => Refused::Reserved,
        _ => return None,
    };
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<Refused> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn ipv4_special_ranges() {
        use Refused::*;
        for (ip, why) in [
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("100.127.255.255", Private),
            ("169.254.169.254", LinkLocal),
            ("192.0.0.170", Reserved),
            ("192.0.2.1", Documentation),
            ("198.51.100.1", Documentation),
            ("203.0.113.9", Documentation),
            ("198.18.0.1", Documentation),
            ("198.19.255.255", Documentation),
            ("192.88.99.1", Reserved),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("240.0.0.1", Reserved),
            ("255.255.255.255", Multicast),
        ] {
            assert_eq!(class(ip), Some(why), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "172.15.0.1", "172.32.0.1", "100.63.0.1", "100.128.0.1"] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }

    /// Issue 20: `[::127.0.0.1]`, `[64:ff9b::7f00:1]` and `[2002:7f00:1::]` passed the old
    /// check and a connection was attempted.
    #[test]
    fn ipv6_forms_that_carry_ipv4() {
        use Refused::*;
        for (ip, why) in [
            ("::1", Loopback),
            ("::", Unspecified),
            ("::127.0.0.1", Tunnel),
            ("::8.8.8.8", Tunnel),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:10.0.0.1", Private),
            ("::ffff:0:127.0.0.1", Loopback),
            ("64:ff9b::7f00:1", Loopback),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::10.0.0.1", Private),
            ("64:ff9b:1::8.8.8.8", Tunnel),
            ("64:ff9b:1:ffff::1", Tunnel),
            ("2002:7f00:1::", Loopback),
            ("2002:a00:1::1", Private),
            ("2002:c0a8:101::1", Private),
            ("2002:a9fe:a9fe::1", LinkLocal),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Tunnel),
            ("2001::1", Tunnel),
        ] {
            assert_eq!(class(ip), Some(why), "{ip}");
        }
        // Public IPv4 behind NAT64 or 6to4 is public.
        for ip in ["::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }

    #[test]
    fn ipv6_special_ranges_and_global_unicast() {
        use Refused::*;
        for (ip, why) in [
            ("fc00::1", Private),
            ("fd12:3456::1", Private),
            ("fec0::1", Private),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("ff02::1", Multicast),
            ("ff05::2", Multicast),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("3fff:fff::1", Documentation),
            ("2001:2::1", Reserved),
            ("2001:10::1", Reserved),
            ("2001:20::1", Reserved),
            ("5f00::1", Reserved),
            ("100::1", Reserved),
            ("4000::1", Reserved),
            ("1::1", Reserved),
            ("e000::1", Reserved),
        ] {
            assert_eq!(class(ip), Some(why), "{ip}");
        }
        for ip in ["2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:4860:4860::8888"] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }
}
