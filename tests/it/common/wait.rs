//! Waiting on an event rather than a time: a test that sleeps a fixed time, or gives up
//! after a tight deadline, passes or fails with the machine's load.

use std::time::Duration;

/// The longest any wait on an event may take. Only a hang reaches it: on CI's loaded two
/// cores a sim's 5,000-pod sync and convergence took tens of seconds, never minutes.
pub const HANG_GUARD: Duration = Duration::from_secs(120);

/// How often a condition is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// Polls `check` until it says `Ok`, and returns what it gave. `Err` says how far things
/// got, for the panic when [`HANG_GUARD`] passes first.
pub async fn until<T>(what: &str, mut check: impl FnMut() -> Result<T, String>) -> T {
    let mut last = String::new();
    let waited = tokio::time::timeout(HANG_GUARD, async {
        loop {
            match check() {
                Ok(value) => return value,
                Err(state) => last = state,
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await;
    match waited {
        Ok(value) => value,
        Err(_) => panic!("{what}: not within {HANG_GUARD:?}; last seen: {last}"),
    }
}
