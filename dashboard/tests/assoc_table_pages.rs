//! The association page's long tables paginated, sorted and searched on the server (issue 16
//! part 1): the T3-rtx timeouts of a zero-window run (42 of them) through the page's query
//! parameters (`timeouts0_offset`, `_limit`, `_sort`, `_order`, `_q`), links that keep the other
//! tables' state, 400 on bad parameters, and the API's table and association endpoints.

use crate::pages_common;

use pages_common::{analysed, element, get, get_json, many, open, unescape};

const MB: usize = 1 << 20;

/// The frame column of every row of the page's first timeouts table.
fn timeout_frames(html: &str) -> Vec<u64> {
    let table = element(html, "class=\"data timeouts\"", "</table>");
    table
        .split("<tr class=\"zoomable\"")
        .skip(1)
        .map(|r| {
            let cells: Vec<&str> = r.split("<td class=\"num\">").collect();
            // time, observed RTO, backoff, RTO estimate, chunks, TSN, frame
            let c = cells[7];
            c[..c.find('<').unwrap()].parse().unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_association_tables_page_sort_and_search_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let bytes = std::fs::read(many::sample_traces().join("zerowin_p10_sender.pcap")).unwrap();
    let (id, v) = analysed(&app, "zerowin.pcap", &bytes).await;
    let a = &v["result"]["associations"][0];
    let all: Vec<u64> = a["directions"][0]["timeouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["frame"].as_u64().unwrap())
        .collect();
    let n = all.len();
    assert!(n > 30, "{n} timeouts");
    let page = format!("/captures/{id}/associations/0");

    // Default: 50 rows a page, so all of them; the table collapsed behind its summary, with the
    // counts and the search form (no pager: one page).
    let (s, html) = get(&app, &page).await;
    assert!(s.is_success());
    let html = unescape(&html);
    assert_eq!(timeout_frames(&html), all);
    let section = element(&html, "id=\"timeouts0-table\"", "</table>");
    assert!(section.contains("<details class=\"collapsed-table\" id=\"timeouts-0\">"));
    assert!(section.contains(&format!("rows 1–{n} of {n}")), "{section}");
    assert!(section.contains("name=\"timeouts0_q\""));
    assert!(!section.contains("class=\"pager\""));

    // 10 a page: the first 10, "page 1 of 5", a next link that keeps the limit, the table open.
    let (_, html) = get(&app, &format!("{page}?timeouts0_limit=10")).await;
    let html = unescape(&html);
    assert_eq!(timeout_frames(&html), all[..10]);
    let section = element(&html, "id=\"timeouts0-table\"", "</table>");
    assert!(section.contains("id=\"timeouts-0\" open>"), "{section}");
    assert!(section.contains(&format!("rows 1–10 of {n}")));
    assert!(section.contains(&format!("page 1 of {}", n.div_ceil(10))));
    assert!(section.contains(&format!(
        "href=\"{page}?timeouts0_limit=10&timeouts0_offset=10#timeouts0-table\" class=\"pager-next\""
    )));
    assert!(section.contains("<span class=\"pager-off\" aria-disabled=\"true\">previous</span>"));

    // The last page, and an offset past the end.
    let last = (n - 1) / 10 * 10;
    let (_, html) = get(
        &app,
        &format!("{page}?timeouts0_limit=10&timeouts0_offset={last}"),
    )
    .await;
    let html = unescape(&html);
    assert_eq!(timeout_frames(&html), all[last..]);
    assert!(html.contains(&format!("rows {}–{n} of {n}", last + 1)));
    let (s, html) = get(
        &app,
        &format!("{page}?timeouts0_limit=10&timeouts0_offset=100000"),
    )
    .await;
    assert!(s.is_success());
    let html = unescape(&html);
    assert!(timeout_frames(&html).is_empty());
    assert!(html.contains(&format!("no row from {} on: {n} rows in all", n + 1)));
    assert!(html.contains(&format!(
        "href=\"{page}?timeouts0_limit=10&timeouts0_offset={last}#timeouts0-table\" class=\"pager-previous\""
    )));

    // Sorted on the server, frames last first; aria-sort on the column, its link reverses.
    let (_, html) = get(
        &app,
        &format!("{page}?timeouts0_sort=frame&timeouts0_order=desc&timeouts0_limit=10"),
    )
    .await;
    let html = unescape(&html);
    let mut desc = all.clone();
    desc.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(timeout_frames(&html), desc[..10]);
    let section = element(&html, "id=\"timeouts0-table\"", "</thead>");
    assert!(section.contains("aria-sort=\"descending\""), "{section}");
    assert!(section.contains(&format!(
        "href=\"{page}?timeouts0_sort=frame&timeouts0_order=asc&timeouts0_limit=10#timeouts0-table\""
    )));
    // The API sorts the same way.
    let api = get_json(
        &app,
        &format!(
            "/api/captures/{id}/associations/0/tables/timeouts0?sort=frame&order=desc&limit=10"
        ),
    )
    .await;
    let frames: Vec<u64> = api["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, desc[..10]);
    assert_eq!(api["total"], n);
    assert_eq!(api["next_offset"], 10);
    assert!(
        api["rows"][0]["observed_rto_ms"].is_number()
            || api["rows"][0]["observed_rto_ms"].is_null()
    );

    // Search: one frame number; the other tables' state stays in every link of this one.
    let f = all[5];
    let (_, html) = get(
        &app,
        &format!("{page}?timeouts0_q={f}&events_offset=0&paths_sort=packets&paths_order=desc"),
    )
    .await;
    let html = unescape(&html);
    assert_eq!(timeout_frames(&html), vec![f]);
    assert!(html.contains(&format!("rows 1–1 of 1 that match “{f}” (of {n})")));
    let section = element(&html, "id=\"timeouts0-table\"", "</thead>");
    assert!(
        section.contains("paths_sort=packets&paths_order=desc"),
        "{section}"
    );
    assert!(section.contains(&format!("timeouts0_q={f}")));
    // The search form keeps the other tables' parameters as hidden fields.
    assert!(section.contains("<input type=\"hidden\" name=\"paths_sort\" value=\"packets\">"));
    let (_, html) = get(&app, &format!("{page}?timeouts0_q=no-such-row")).await;
    assert!(unescape(&html).contains(&format!("no row matches “no-such-row” (of {n})")));
    // An empty parameter (an HTML form's) is none.
    let (_, html) = get(
        &app,
        &format!("{page}?timeouts0_q=&timeouts0_offset=&timeouts0_sort="),
    )
    .await;
    assert_eq!(timeout_frames(&unescape(&html)), all);

    // Bad parameters: 400 saying which and what it takes.
    for (q, want) in [
        (
            "timeouts0_sort=bogus",
            "bad timeouts0_sort: \"bogus\" (one of time, path, to,",
        ),
        (
            "timeouts0_offset=-1",
            "bad timeouts0_offset: \"-1\" (a row number from 0)",
        ),
        (
            "timeouts0_limit=lots",
            "bad timeouts0_limit: \"lots\" (a number of rows, or all)",
        ),
        (
            "timeouts0_order=up",
            "bad timeouts0_order: \"up\" (asc or desc)",
        ),
        ("events_sort=detail", "bad events_sort: \"detail\""),
    ] {
        let (s, body) = get(&app, &format!("{page}?{q}")).await;
        assert_eq!(s.as_u16(), 400, "{q}");
        assert!(unescape(&body).contains(want), "{q}: {body}");
    }
    let api = |q: &str| format!("/api/captures/{id}/associations/0/tables/{q}");
    let (s, body) = get(&app, &api("timeouts0?sort=nope")).await;
    assert_eq!(s.as_u16(), 400, "{body}");
    let (s, body) = get(&app, &api("nothing")).await;
    assert_eq!(s.as_u16(), 404);
    assert!(
        body.contains("timeouts0"),
        "the table names are listed: {body}"
    );

    // API pages: limit, offset past the end, all.
    let t = get_json(&app, &api("timeouts0?offset=40&limit=10")).await;
    assert_eq!(t["returned"], n - 40);
    assert!(t["next_offset"].is_null());
    let t = get_json(&app, &api("timeouts0?offset=1000")).await;
    assert_eq!(t["rows"], serde_json::json!([]));
    assert_eq!(t["offset"], n);
    let t = get_json(&app, &api("timeouts0?limit=all")).await;
    assert_eq!(t["returned"], n);
    let t = get_json(&app, &api("events")).await;
    assert_eq!(t["table"], "events");
    let t = get_json(&app, &api("paths?sort=packets&order=desc")).await;
    let p: Vec<u64> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["packets"].as_u64().unwrap())
        .collect();
    assert!(!p.is_empty() && p.windows(2).all(|w| w[0] >= w[1]), "{p:?}");

    // The association's JSON: each list cut to `limit`, with where the rest is.
    let j = get_json(&app, &format!("/api/captures/{id}/associations/0?limit=5")).await;
    assert_eq!(
        j["association"]["directions"][0]["timeouts"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(j["lists"]["timeouts0"]["total"], n);
    assert_eq!(j["lists"]["timeouts0"]["returned"], 5);
    assert_eq!(
        j["lists"]["timeouts0"]["more"],
        format!("/api/captures/{id}/associations/0/tables/timeouts0?offset=5")
    );
    let j = get_json(&app, &format!("/api/captures/{id}/associations/0")).await;
    assert_eq!(
        j["association"]["directions"][0]["timeouts"]
            .as_array()
            .unwrap()
            .len(),
        n.min(100)
    );
    let j = get_json(
        &app,
        &format!("/api/captures/{id}/associations/0?limit=all"),
    )
    .await;
    assert_eq!(j["association"], a.clone());
    let (s, _) = get(&app, &format!("/api/captures/{id}/associations/0?limit=x")).await;
    assert_eq!(s.as_u16(), 400);
    let (s, _) = get(&app, &format!("/api/captures/{id}/associations/7")).await;
    assert_eq!(s.as_u16(), 404);

    // Sizes: every answer bounded, the page's rows at most `limit` (500 at most: `all`).
    for p in [
        page.clone(),
        format!("{page}?timeouts0_limit=all&events_limit=all&paths_limit=all"),
        api("timeouts0?limit=all"),
        format!("/api/captures/{id}/associations/0"),
    ] {
        let (s, body) = get(&app, &p).await;
        assert!(s.is_success(), "{p}");
        assert!(body.len() < MB, "{p}: {} bytes", body.len());
    }
}
