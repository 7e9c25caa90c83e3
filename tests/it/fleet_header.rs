//! The header across three clusters at 80 and 160 columns: every cluster's state where the
//! list fits, else the clusters counted with each one not watching still named; a cluster
//! killed is named stale either way.

use crate::common::cli::temp_dir;
use crate::common::tui::wait_rows;
use crate::fleet_picker::screen;
use crate::fleet_tui::{CONTEXTS, nodes_across, three_sims};

/// The header's status line: the one that counts the rows.
fn status_line(screen: &str) -> &str {
    screen
        .lines()
        .find(|l| l.contains(" rows · "))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_counts_the_clusters_when_their_list_does_not_fit() {
    let dir = temp_dir("fleet-header");
    let (mut sims, _) = three_sims(&dir).await;
    let (mut app, _) = nodes_across(&sims).await;
    let wide = screen(&mut app, 160, 45);
    assert!(
        status_line(&wide).contains(&CONTEXTS.map(|c| format!("{c} watching")).join(" · ")),
        "the whole list fits in 160 columns: {wide}"
    );
    insta::assert_snapshot!("fleet_header_watching_160x45", wide);
    let narrow = screen(&mut app, 80, 24);
    assert!(
        status_line(&narrow).contains("3 clusters · 3 watching · # ev/s"),
        "{narrow}"
    );
    insta::assert_snapshot!("fleet_header_watching_80x24", narrow);

    // Cluster 3 killed: named stale in both, with why in the error.
    let third = sims.pop().expect("three sims");
    third.shutdown().await;
    wait_rows(&mut app, "cluster 3 stale and unreachable", |app, _| {
        app.header()
            .sync
            .contains(&format!("{} stale", CONTEXTS[2]))
            && app
                .header()
                .error
                .as_deref()
                .is_some_and(|e| e.contains("(unreachable)"))
    })
    .await;
    let narrow = screen(&mut app, 80, 24);
    let status = status_line(&narrow);
    assert!(
        status.contains("3 clusters · 2 watching · kscope-sim-3 stale"),
        "{narrow}"
    );
    insta::assert_snapshot!("fleet_header_stale_80x24", narrow);
    insta::assert_snapshot!("fleet_header_stale_160x45", screen(&mut app, 160, 45));

    for sim in sims {
        sim.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
