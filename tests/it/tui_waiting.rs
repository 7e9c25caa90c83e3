//! A table whose first list never arrives says so in the header, through the App's real
//! status-to-header path and its real draw: how long it has waited, for what, marked
//! degraded, rather than looking like an empty namespace.

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use kscope_client::cluster::Cluster;

use crate::common::fake_api;
use crate::common::tui::AppStart;

/// A server that accepts the list and the watch-list and delivers neither: the list trickles
/// a space every 200 ms (within every bound for minutes), the watch stays silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_list_that_shows_nothing_is_said_in_the_header() {
    let addr = fake_api::serve(fake_api::pods_route(
        || fake_api::trickle(Duration::from_millis(200)),
        || fake_api::open_body(String::new()),
    ))
    .await;
    let config = kube::Config::new(format!("http://{addr}").parse().expect("url"));
    let cluster = Cluster::from_config(config, "fake".into()).expect("cluster");
    let mut app = AppStart::pods(cluster).start();
    let mut terminal = Terminal::new(TestBackend::new(160, 10)).expect("terminal");
    // A hang guard, not the bound under test: the header says it after ten seconds.
    let deadline = Instant::now() + Duration::from_secs(60);
    let header = loop {
        let status = app.table().status().borrow().clone();
        app.update_sync(&status);
        app.draw(&mut terminal).expect("draws");
        let screen = terminal.backend().to_string();
        if let Some(line) = screen.lines().find(|l| l.contains("DEGRADED")) {
            break line.to_string();
        }
        assert!(Instant::now() < deadline, "never said: {screen}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        header.contains("without rows, waiting for the initial list"),
        "{header}"
    );
    assert!(!header.contains("STALE"), "nothing was listed: {header}");
    let seconds: u64 = header
        .split("DEGRADED ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("an elapsed time in seconds: {header}"));
    assert!(seconds >= 10, "{header}");
    assert!(header.contains("listing"), "what it is doing: {header}");
}
