//! "Start here" on the home page: three stories told by sample traces (chosen by their truth
//! files in `sample-traces/`), each linking to the page that tells it once the sample is
//! imported (`--samples`, the default) or uploaded.

use crate::digest::Digest;

use crate::store::{Entry, Status};

pub struct Story {
    /// Anchor and test id: `story-<slug>`.
    pub slug: &'static str,
    pub title: &'static str,
    /// What the page shows, in two or three sentences.
    pub text: &'static str,
    /// The sample trace's file name (as imported or uploaded).
    pub sample: &'static str,
    /// Which page tells it.
    target: Target,
}

#[derive(Clone, Copy)]
enum Target {
    /// The association page of the first association with a failover of this kind.
    Failover { spurious: bool },
    /// The capture's SCTP vs TCP page.
    Compare,
}

/// The stories, by their truth files: `cut_p20_sack40_truth.json` (failure `path1_cut` at 4 s),
/// `spur_pmr1_rtomin30_truth.json` (failure `none`, RTO.min 30 ms, peer SACK delay 200 ms,
/// PMR 1), `mixed_p20_cut5_rec8_truth.json` (mode `mixed`: SCTP and TCP through one cut of path
/// 1, back after 8 s). `tests/stories.rs` checks the truth files say so.
pub const STORIES: [Story; 3] = [
    Story {
        slug: "failover",
        title: "A real failover",
        text: "The primary path is cut 4 s into a transfer paced every 20 ms (RTO.min 100 ms, \
               Path.Max.Retrans 2). After three T3-rtx expiries the sender moves new DATA to the \
               second path: the page shows when the outage started, how long the failover took \
               and the expiry chain behind it.",
        sample: "cut_p20_sack40_sender.pcap",
        target: Target::Failover { spurious: false },
    },
    Story {
        slug: "spurious",
        title: "A spurious failover and its fix",
        text: "No path fails here, yet the sender fails over again and again: its RTO.min \
               (30 ms) is below the peer's 200 ms SACK delay and Path.Max.Retrans is 1. The \
               diagnosis names the cause and the setting that fixes it.",
        sample: "spur_pmr1_rtomin30_sender.pcap",
        target: Target::Failover { spurious: true },
    },
    Story {
        slug: "sctp-vs-tcp",
        title: "SCTP against TCP under the same outage",
        text: "One SCTP association and one TCP connection go through the same cut of a path \
               from 5 s to 8 s: SCTP fails over to its second path in under a second, TCP \
               waits until the path comes back.",
        sample: "mixed_p20_cut5_rec8_sender.pcap",
        target: Target::Compare,
    },
];

/// A story on the home page: where it opens, or why it cannot yet.
pub struct StoryLink {
    pub slug: &'static str,
    pub title: &'static str,
    pub text: &'static str,
    pub sample: &'static str,
    /// The page that tells it; "" when the sample is not in the store.
    pub href: String,
    /// "analysis running" and the like, or how to get the sample.
    pub note: String,
}

fn target_href(id: &str, d: &Digest, t: Target) -> Option<String> {
    match t {
        Target::Compare => Some(format!("/captures/{id}/compare")),
        Target::Failover { spurious } => if spurious {
            d.first_spurious
        } else {
            d.first_failover
        }
        .map(|a| format!("/captures/{id}/associations/{a}#diagnosis")),
    }
}

/// The stories with links into `entries` (the store's captures).
pub fn story_links(entries: &[Entry]) -> Vec<StoryLink> {
    STORIES
        .iter()
        .map(|s| {
            let e = entries.iter().find(|e| e.meta.name == s.sample);
            let (href, note) = match e {
                None => (
                    String::new(),
                    format!("upload sample-traces/{} to open it", s.sample),
                ),
                Some(e) => match (e.meta.status, e.digest.as_deref()) {
                    (Status::Done, Some(r)) => match target_href(&e.meta.id, r, s.target) {
                        Some(h) => (h, String::new()),
                        None => (
                            format!("/captures/{}", e.meta.id),
                            "this analysis shows no such event".into(),
                        ),
                    },
                    (st, _) => (
                        format!("/captures/{}", e.meta.id),
                        format!("analysis {}", st.as_str()),
                    ),
                },
            };
            StoryLink {
                slug: s.slug,
                title: s.title,
                text: s.text,
                sample: s.sample,
                href,
                note,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth(sample: &str) -> serde_json::Value {
        let name = sample.replace("_sender.pcap", "_truth.json");
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sample-traces")
            .join(name);
        serde_json::from_slice(&std::fs::read(&p).expect("truth file")).expect("truth JSON")
    }

    /// Each story's sample is what the story says, by its truth file.
    #[test]
    fn the_truth_files_tell_the_stories() {
        let t = truth(STORIES[0].sample);
        assert_eq!(t["failure"], "path1_cut");
        assert_eq!(t["fail_after_client_start_s"], 4);
        assert_eq!(t["rto_min_ms"], 100);
        assert_eq!(t["path_max_retrans"], 2);
        assert_eq!(t["message_interval_ms"], 20);

        let t = truth(STORIES[1].sample);
        assert_eq!(t["failure"], "none");
        assert_eq!(t["rto_min_ms"], 30);
        assert_eq!(t["sack_delay_ms"], 200);
        assert_eq!(t["path_max_retrans"], 1);

        let t = truth(STORIES[2].sample);
        assert_eq!(t["mode"], "mixed");
        assert_eq!(t["failure"], "path1_cut");
        assert_eq!(t["fail_after_client_start_s"], 5);
        assert_eq!(t["recover_after_client_start_s"], 8);
        assert!(t["transport"].as_str().unwrap().contains("TCP"));
    }
}
