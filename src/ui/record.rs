//! The record toggle (`ctrl-r`, `:record [FILE]`, `:record stop`): the kind on screen
//! written to a recording while the person looks at it, for `kscope replay` later. The tables
//! read server-side Tables, not whole objects, so the recording runs its own list and watch
//! per kind ([`RecordingSession`], as `kscope record` does) with the TUI's client and scope.

use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::FutureExt;
use kscope_client::cluster::Cluster;
use kscope_client::record::{RecordingSession, RecordingStats};
use kscope_informers::record::format::RecordError;
use kscope_resources::Kind;
use kscope_units::bytes;
use tokio::task::JoinHandle;

/// A recording under way, and its event rate over the last sample.
struct Live {
    session: RecordingSession,
    sampled_at: Instant,
    sampled_events: u64,
    events_per_second: f64,
}

/// What a stop's task hands back: the file and how it ended.
type Stopped = (PathBuf, Result<RecordingStats, RecordError>);

/// The recording started from the TUI, if any, and the one being finished.
#[derive(Default)]
pub struct RecordToggle {
    live: Option<Live>,
    stopping: Option<JoinHandle<Stopped>>,
}

/// What a tick found: the header's text while recording, and what to tell the person.
#[derive(Debug, Default, PartialEq)]
pub struct RecordNews {
    pub header: Option<String>,
    pub notice: Option<String>,
    pub error: Option<String>,
}

impl RecordToggle {
    pub fn recording(&self) -> bool {
        self.live.is_some()
    }

    /// Starts recording `kinds` of `cluster` (namespaced ones in `namespace`, all when
    /// `None`) to `output`, or to a new file under the state directory; says where.
    pub fn start(
        &mut self,
        cluster: &Cluster,
        kinds: &[Kind],
        namespace: Option<&str>,
        output: Option<PathBuf>,
    ) -> Result<String, String> {
        if let Some(live) = &self.live {
            return Err(format!(
                "already recording to {} (:record stop, or ctrl-r)",
                live.session.output().display()
            ));
        }
        let output = match output {
            Some(path) => path,
            None => default_output()?,
        };
        let session = RecordingSession::start(cluster, kinds, namespace, &output)
            .map_err(|e| format!("recording to {}: {e}", output.display()))?;
        let said = format!(
            "recording {} to {}",
            session.kinds().join(", "),
            output.display()
        );
        self.live = Some(Live {
            session,
            sampled_at: Instant::now(),
            sampled_events: 0,
            events_per_second: 0.0,
        });
        Ok(said)
    }

    /// Stops the recording, finishing its file in the background (the next tick says how
    /// it ended); `false` when nothing was recording.
    pub fn stop(&mut self) -> bool {
        let Some(live) = self.live.take() else {
            return false;
        };
        let output = live.session.output().to_path_buf();
        self.stopping = Some(tokio::spawn(
            async move { (output, live.session.stop().await) },
        ));
        true
    }

    /// Samples the rate and looks for a failed write (which stops the recording) or a
    /// finished stop, as each tick does.
    pub fn tick(&mut self, now: Instant) -> RecordNews {
        let mut news = RecordNews::default();
        if self.stopping.as_ref().is_some_and(JoinHandle::is_finished)
            && let Some(stopping) = self.stopping.take()
        {
            match stopping.now_or_never() {
                Some(Ok((path, Ok(stats)))) => {
                    news.notice = Some(format!(
                        "recorded {} events to {} ({})",
                        stats.events,
                        path.display(),
                        bytes::binary(stats.bytes)
                    ));
                }
                // Said as the failure found while recording says it, which this repeats then.
                Some(Ok((path, Err(e)))) => news.error = Some(stopped_by(&path, &e)),
                Some(Err(e)) => news.error = Some(format!("finishing the recording: {e}")),
                None => {}
            }
        }
        if let Some(live) = &mut self.live {
            if let Some(failure) = live.session.failure() {
                news.error = Some(stopped_by(live.session.output(), &failure));
                self.stop();
                return news;
            }
            let stats = live.session.stats();
            let secs = now.duration_since(live.sampled_at).as_secs_f64();
            if secs > 0.0 {
                live.events_per_second =
                    stats.events.saturating_sub(live.sampled_events) as f64 / secs;
                live.sampled_at = now;
                live.sampled_events = stats.events;
            }
            news.header = Some(format!(
                "● REC {} {:.0} ev/s",
                bytes::binary(stats.bytes),
                live.events_per_second
            ));
        }
        news
    }

    /// Stops a recording still running and waits for its file to be finished, as quitting
    /// does: a recording is never left without its last events.
    pub async fn shutdown(mut self) -> Option<String> {
        self.stop();
        let (path, result) = self.stopping?.await.ok()?;
        result
            .err()
            .map(|e| format!("recording to {}: {e}", path.display()))
    }
}

/// A recording ended by a failed write, in the words the status line shows.
fn stopped_by(path: &Path, failure: &dyn std::fmt::Display) -> String {
    format!(
        "recording to {} stopped: {failure}; what was written before it is readable",
        path.display()
    )
}

/// `$XDG_STATE_HOME/kscope/recordings/kscope-20261206T130102Z.kscope`, its directory made.
fn default_output() -> Result<PathBuf, String> {
    let dir = kscope_config::state_dir()
        .ok_or("neither XDG_STATE_HOME nor HOME is set: :record FILE names the file")?
        .join("recordings");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    Ok(dir.join(format!("kscope-{stamp}.kscope")))
}
