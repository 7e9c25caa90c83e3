//! Waiting for an informer's first list, and whether its store is current when read.

use std::time::Duration;

use kscope_client::explain;
use kscope_informers::lister_watcher::ListWatchError;
use kscope_informers::object::Object;
use kscope_informers::reflector::{ReflectorError, ReflectorPhase, ReflectorStatus};
use kscope_informers::running::RunningInformer;

use super::error::CommandError;

/// Waits for the informer's first list, at most `timeout`. Each failed round is said on
/// stderr as it happens, so that a person knows what is being waited on; errors that
/// `gives_up` accepts end the wait at once.
pub async fn wait_for_sync_reporting<T: Object>(
    informer: &RunningInformer<T>,
    resource: &str,
    timeout: Duration,
) -> Result<(), CommandError> {
    let mut status = informer.status();
    let synced = informer.wait_for_sync(gives_up);
    tokio::pin!(synced);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut reported = 0;
    loop {
        tokio::select! {
            result = &mut synced => return result.map_err(CommandError::Sync),
            changed = status.changed() => {
                if changed.is_err() {
                    // The Reflector is gone: the sync future says how it ended.
                    return (&mut synced).await.map_err(CommandError::Sync);
                }
                let now = status.borrow_and_update().clone();
                // An error that ends the wait is said once, by the caller.
                if now.failed_rounds > reported
                    && let Some(err) = now.last_error.as_deref().filter(|e| !gives_up(e))
                {
                    reported = now.failed_rounds;
                    eprintln!(
                        "kscope: {resource} not synced yet (attempt {} failed: {}); retrying",
                        now.failed_rounds,
                        explain::reflector_error(err)
                    );
                }
            }
            () = &mut deadline => {
                return Err(CommandError::NotSynced {
                    resource: resource.to_string(),
                    waited: timeout,
                    last_error: status.borrow().last_error.clone(),
                });
            }
        }
    }
}

/// Whether the store is current: the Reflector is watching, and what it queued has been
/// applied (given up to `drain` to be). The error says what it is doing instead.
pub async fn check_current<T: Object>(
    informer: &RunningInformer<T>,
    resource: &str,
    drain: Duration,
) -> Result<(), CommandError> {
    let not_current = |state: String, status: &ReflectorStatus| CommandError::NotCurrent {
        resource: resource.to_string(),
        state,
        last_error: status.last_error.clone(),
        printed: false,
    };
    let status = informer.status().borrow().clone();
    if let Some(state) = not_watching(&status) {
        return Err(not_current(state, &status));
    }
    let queue = informer.informer().store();
    let drained = tokio::time::timeout(drain, async {
        while !queue.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if drained.is_err() {
        return Err(not_current(
            format!("{} changes received are not applied yet", queue.len()),
            &status,
        ));
    }
    Ok(())
}

/// What the Reflector is doing instead of watching, in the words `get` prints for a store
/// that is not current; `None` while it watches.
pub fn not_watching(status: &ReflectorStatus) -> Option<String> {
    match &status.phase {
        ReflectorPhase::Watching => None,
        ReflectorPhase::BackingOff => Some(format!(
            "its list and watch failed {} time(s) in a row and it is backing off",
            status.failed_rounds
        )),
        ReflectorPhase::Listing { pages, objects } => Some(format!(
            "it is relisting ({pages} pages, {objects} objects so far)"
        )),
        ReflectorPhase::Starting => Some("it has not started".into()),
    }
}

/// Errors that will not go away by retrying, so a command should stop at once: refused
/// credentials or permissions, an unreachable server, an answer that is not the API.
pub fn gives_up(err: &ReflectorError) -> bool {
    match err {
        ReflectorError::ListWatch(e) => match e {
            ListWatchError::Api { status, .. } => {
                matches!(status.code, 300..=399 | 400 | 401 | 403 | 404 | 406 | 422)
            }
            ListWatchError::Transport { .. }
            | ListWatchError::MalformedResponse { .. }
            | ListWatchError::InvalidRequest { .. } => true,
            ListWatchError::MalformedEvent(_) => false,
        },
        ReflectorError::VeryShortWatch { .. }
        | ReflectorError::ResourceVersionWentBack { .. }
        | ReflectorError::ServerChanged { .. } => false,
    }
}
