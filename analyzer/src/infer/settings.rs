//! The timer settings a diagnosis names, with the knob that changes each: the Linux sysctl
//! (`net.sctp.*`, Documentation/networking/ip-sysctl.rst) next to the socket option (RFC 6458:
//! SCTP_RTOINFO, SCTP_PEER_ADDR_PARAMS, SCTP_DELAYED_SACK, SCTP_PEER_ADDR_THLDS), and the Linux
//! defaults (include/net/sctp/constants.h), so that a figure bounded by a default says so.

/// Linux defaults (SCTP_RTO_MIN, SCTP_DEFAULT_TIMEOUT_HEARTBEAT, SCTP_DEFAULT_TIMEOUT_SACK,
/// SCTP_DEFAULT_MAX_RETRANS... in constants.h; sctp_sysctl_net_init).
pub const LINUX_RTO_MIN_MS: f64 = 1000.0;
pub const LINUX_HB_INTERVAL_MS: f64 = 30_000.0;
pub const LINUX_SACK_DELAY_MS: f64 = 200.0;
pub const LINUX_PATH_MAX_RETRANS: u32 = 5;

/// A Linux default "is" a figure when they agree within `tol` (timers fire late, never early).
fn near(x: f64, default: f64, tol: f64) -> bool {
    x >= default * (1.0 - tol) && x <= default * (1.0 + tol)
}

/// RTO.min: the knob, and " (the Linux default 1 s)" when `value_ms` is that default.
pub fn rto_min(linux: bool) -> &'static str {
    if linux {
        "net.sctp.rto_min or SCTP_RTOINFO srto_min"
    } else {
        "SCTP_RTOINFO srto_min"
    }
}

pub fn path_max_retrans(linux: bool) -> &'static str {
    if linux {
        "net.sctp.path_max_retrans or SCTP_PEER_ADDR_PARAMS spp_pathmaxrxt"
    } else {
        "SCTP_PEER_ADDR_PARAMS spp_pathmaxrxt"
    }
}

pub fn sack_delay(linux: bool) -> &'static str {
    if linux {
        "net.sctp.sack_timeout or SCTP_DELAYED_SACK sack_delay"
    } else {
        "SCTP_DELAYED_SACK sack_delay"
    }
}

pub fn hb_interval(linux: bool) -> &'static str {
    if linux {
        "net.sctp.hb_interval or SCTP_PEER_ADDR_PARAMS spp_hbinterval"
    } else {
        "SCTP_PEER_ADDR_PARAMS spp_hbinterval"
    }
}

pub fn pf(linux: bool) -> &'static str {
    if linux {
        "net.sctp.pf_enable 1, net.sctp.pf_retrans 0 or SCTP_PEER_ADDR_THLDS"
    } else {
        "SCTP_PEER_ADDR_THLDS spt_pathpfthld"
    }
}

/// " the Linux default 1 s," when a Linux stack's RTO.min of `ms` is its default, else "".
pub fn rto_min_default(linux: bool, ms: f64) -> &'static str {
    if linux && near(ms, LINUX_RTO_MIN_MS, 0.15) {
        " (the Linux default 1 s)"
    } else {
        ""
    }
}

pub fn sack_delay_default(linux: bool, ms: f64) -> &'static str {
    if linux && near(ms, LINUX_SACK_DELAY_MS, 0.1) {
        " (the Linux default 200 ms)"
    } else {
        ""
    }
}

pub fn hb_interval_default(linux: bool, ms: f64) -> &'static str {
    if linux && near(ms, LINUX_HB_INTERVAL_MS, 0.1) {
        " (the Linux default 30 s)"
    } else {
        ""
    }
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
