//! The timer settings a diagnosis names, with the knob that changes each: the Linux sysctl
//! (`net.sctp.*`, Documentation/networking/ip-sysctl.rst) next to the socket option (RFC 6458:
//! SCTP_RTOINFO, SCTP_PEER_ADDR_PARAMS, SCTP_DELAYED_SACK, SCTP_PEER_ADDR_THLDS), and the Linux
//! defaults (include/net/sctp/constants.h), so that a figure bounded by a default says so.

/// Linux defaults (SCTP_RTO_MIN, SCTP_DEFAULT_TIMEOUT_HEARTBEAT, SCTP_DEFAULT_TIMEOUT_SACK in
/// constants.h; sctp_sysctl_net_init).
pub const LINUX_RTO_MIN_MS: f64 = 1000.0;
pub const LINUX_HB_INTERVAL_MS: f64 = 30_000.0;
pub const LINUX_SACK_DELAY_MS: f64 = 200.0;

/// The knob of a setting: on Linux the sysctl or the socket option, elsewhere the socket option.
macro_rules! knobs {
    ($($(#[$doc:meta])* $name:ident: $sysctl:literal, $sockopt:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(linux: bool) -> &'static str {
            if linux {
                concat!($sysctl, " or ", $sockopt)
            } else {
                $sockopt
            }
        }
    )*};
}

knobs! {
    /// RTO.min (RFC 9260 15).
    rto_min: "net.sctp.rto_min", "SCTP_RTOINFO srto_min";
    /// Path.Max.Retrans (RFC 9260 15).
    path_max_retrans: "net.sctp.path_max_retrans", "SCTP_PEER_ADDR_PARAMS spp_pathmaxrxt";
    /// The delayed-SACK timeout (RFC 9260 6.2).
    sack_delay: "net.sctp.sack_timeout", "SCTP_DELAYED_SACK sack_delay";
    /// HB.interval (RFC 9260 8.3).
    hb_interval: "net.sctp.hb_interval", "SCTP_PEER_ADDR_PARAMS spp_hbinterval";
}

/// The potentially-failed state with pf_retrans 0 (RFC 7829): Linux needs it enabled too.
pub fn pf(linux: bool) -> &'static str {
    if linux {
        "net.sctp.pf_enable 1, net.sctp.pf_retrans 0 or SCTP_PEER_ADDR_THLDS"
    } else {
        "SCTP_PEER_ADDR_THLDS spt_pathpfthld"
    }
}

/// `note` when a Linux stack's figure `ms` is its default `default` (within `tol`: timers fire
/// late, never early), else "".
fn linux_default(linux: bool, ms: f64, default: f64, tol: f64, note: &'static str) -> &'static str {
    if linux && ms >= default * (1.0 - tol) && ms <= default * (1.0 + tol) {
        note
    } else {
        ""
    }
}

pub fn rto_min_default(linux: bool, ms: f64) -> &'static str {
    linux_default(
        linux,
        ms,
        LINUX_RTO_MIN_MS,
        0.15,
        " (the Linux default 1 s)",
    )
}

pub fn sack_delay_default(linux: bool, ms: f64) -> &'static str {
    linux_default(
        linux,
        ms,
        LINUX_SACK_DELAY_MS,
        0.1,
        " (the Linux default 200 ms)",
    )
}

pub fn hb_interval_default(linux: bool, ms: f64) -> &'static str {
    linux_default(
        linux,
        ms,
        LINUX_HB_INTERVAL_MS,
        0.1,
        " (the Linux default 30 s)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_defaults_are_named_only_for_linux_and_near_them() {
        assert_eq!(rto_min_default(true, 1040.0), " (the Linux default 1 s)");
        assert_eq!(rto_min_default(false, 1000.0), "");
        assert_eq!(rto_min_default(true, 100.0), "");
        assert_eq!(
            sack_delay_default(true, 208.0),
            " (the Linux default 200 ms)"
        );
        assert_eq!(sack_delay_default(true, 40.0), "");
        assert_eq!(
            hb_interval_default(true, 30_900.0),
            " (the Linux default 30 s)"
        );
        assert!(rto_min(true).contains("net.sctp.rto_min") && !rto_min(false).contains("net."));
        assert!(sack_delay(true).contains("SCTP_DELAYED_SACK"));
        assert!(hb_interval(true).contains("spp_hbinterval"));
        assert!(path_max_retrans(true).contains("net.sctp.path_max_retrans"));
        assert!(pf(true).contains("pf_retrans"));
    }
}
