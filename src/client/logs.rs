//! A container's log: `GET /api/v1/namespaces/NS/pods/NAME/log` with the kubelet's options,
//! read as it arrives. The body is cut into lines here, each longer than a bound cut with a
//! mark, so a container writing one endless line cannot take all memory.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use kscope_informers::lister_watcher::{BoxError, innermost_cause};

use super::lister_watcher::{ServerSeen, body_frames};

/// A person is waiting for the first lines: past this without an answer, say so.
const OPEN_TIMEOUT: Duration = Duration::from_secs(15);

/// What a log request asks the kubelet for (`kubectl logs`' flags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// Needed when the pod has several containers.
    pub container: Option<String>,
    /// Keep the response open and send new lines as they are written.
    pub follow: bool,
    /// The last terminated instance of the container instead of the current one.
    pub previous: bool,
    pub tail_lines: Option<u64>,
    pub since_seconds: Option<u64>,
    /// RFC 3339; the API server refuses it together with `since_seconds`.
    pub since_time: Option<String>,
    /// Each line starts with when it was written (RFC 3339 with nanoseconds).
    pub timestamps: bool,
    pub limit_bytes: Option<u64>,
}

impl LogOptions {
    /// The query string, without `?`; empty options give an empty string.
    pub fn query(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if let Some(container) = &self.container {
            query.append_pair("container", container);
        }
        for (name, on) in [
            ("follow", self.follow),
            ("previous", self.previous),
            ("timestamps", self.timestamps),
        ] {
            if on {
                query.append_pair(name, "true");
            }
        }
        for (name, value) in [
            ("tailLines", self.tail_lines),
            ("sinceSeconds", self.since_seconds),
            ("limitBytes", self.limit_bytes),
        ] {
            if let Some(value) = value {
                query.append_pair(name, &value.to_string());
            }
        }
        if let Some(time) = &self.since_time {
            query.append_pair("sinceTime", time);
        }
        query.finish()
    }
}

/// The path of a pod's log with `options`.
pub fn log_path(namespace: &str, pod: &str, options: &LogOptions) -> String {
    let query = options.query();
    let path = format!("/api/v1/namespaces/{namespace}/pods/{pod}/log");
    if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    }
}

/// Why a log could not be read, in words a person understands. Messages name the pod,
/// never credentials.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The kubelet refused (400): no such container, waiting to start, never scheduled, no
    /// previous instance. Its own message says which.
    #[error("{message}")]
    Refused { pod: String, message: String },
    #[error("pod {pod} not found (404): it may have just been deleted")]
    NotFound { pod: String },
    #[error("pod {pod}: reading logs is forbidden (403): {message}")]
    Forbidden { pod: String, message: String },
    #[error("pod {pod}: the API server answered {code} {reason}: {message}")]
    Api {
        pod: String,
        code: u16,
        reason: String,
        message: String,
    },
    #[error("pod {pod}: cannot reach the API server: {}", innermost_cause(.source.as_ref()))]
    Unreachable {
        pod: String,
        #[source]
        source: BoxError,
    },
    #[error("pod {pod}: no answer from the API server within {}s", .waited.as_secs())]
    Silent { pod: String, waited: Duration },
}

impl LogError {
    /// Whether trying again may help: the connection, not the kubelet's answer, failed.
    pub fn transient(&self) -> bool {
        matches!(self, Self::Unreachable { .. } | Self::Silent { .. })
    }

    fn from_kube(pod: &str, err: kube::Error) -> Self {
        let pod = pod.to_string();
        match err {
            kube::Error::Api(status) => match status.code {
                400 => Self::Refused {
                    pod,
                    message: status.message,
                },
                404 => Self::NotFound { pod },
                403 => Self::Forbidden {
                    pod,
                    message: status.message,
                },
                code => Self::Api {
                    pod,
                    code,
                    reason: status.reason,
                    message: status.message,
                },
            },
            other => Self::Unreachable {
                pod,
                source: other.into(),
            },
        }
    }
}

/// One line of a log, without its newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When it was written, in Unix nanoseconds, when the request asked for timestamps and
    /// the line has one.
    pub time: Option<i64>,
    /// The text, invalid UTF-8 replaced.
    pub text: String,
    /// The line was longer than the bound and is cut there.
    pub cut: bool,
}

/// Opens a pod's log. Must run inside a Tokio runtime. Lines longer than `max_line` bytes
/// are cut there.
pub async fn open_log(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
    options: &LogOptions,
    max_line: usize,
) -> Result<LogStream, LogError> {
    let path = log_path(namespace, pod, options);
    let request = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| LogError::Unreachable {
            pod: pod.to_string(),
            source: e.into(),
        })?;
    let server = ServerSeen::default();
    let frames =
        match tokio::time::timeout(OPEN_TIMEOUT, body_frames(client, request, &server)).await {
            Err(_) => {
                return Err(LogError::Silent {
                    pod: pod.to_string(),
                    waited: OPEN_TIMEOUT,
                });
            }
            Ok(answer) => answer.map_err(|e| LogError::from_kube(pod, e))?,
        };
    Ok(LogStream {
        pod: pod.to_string(),
        frames: Box::pin(frames),
        splitter: LineSplitter::new(max_line, options.timestamps),
    })
}

/// A log being read: batches of whole lines as the body delivers them.
pub struct LogStream {
    pod: String,
    frames: std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, kube::Error>> + Send>>,
    splitter: LineSplitter,
}

impl LogStream {
    /// The lines of the next piece of the body (possibly none, when it held no newline);
    /// `None` once the log ended, after its last unterminated line. Cancel-safe.
    pub async fn next_batch(&mut self) -> Option<Result<Vec<LogLine>, LogError>> {
        match self.frames.next().await {
            Some(Ok(frame)) => Some(Ok(self.splitter.push(&frame))),
            Some(Err(err)) => Some(Err(LogError::from_kube(&self.pod, err))),
            None => self.splitter.finish().map(|line| Ok(vec![line])),
        }
    }
}

/// Cuts a byte stream into lines of at most `max_line` bytes (the rest of a longer line is
/// dropped and the line marked cut), parsing the leading timestamp when asked to.
#[derive(Debug)]
pub struct LineSplitter {
    partial: Vec<u8>,
    /// The line being put together is already longer than the bound.
    cut: bool,
    max_line: usize,
    timestamps: bool,
}

impl LineSplitter {
    pub fn new(max_line: usize, timestamps: bool) -> Self {
        Self {
            partial: Vec::new(),
            cut: false,
            max_line: max_line.max(1),
            timestamps,
        }
    }

    /// The lines `bytes` completes.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<LogLine> {
        let mut lines = Vec::new();
        while let Some(at) = memchr::memchr(b'\n', bytes) {
            self.take(&bytes[..at]);
            lines.push(self.line());
            bytes = &bytes[at + 1..];
        }
        self.take(bytes);
        lines
    }

    /// The last line, if the stream ended without a newline after it.
    pub fn finish(&mut self) -> Option<LogLine> {
        (!self.partial.is_empty() || self.cut).then(|| self.line())
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = self.max_line.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.cut = true;
        }
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn line(&mut self) -> LogLine {
        let mut bytes = std::mem::take(&mut self.partial);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let cut = std::mem::take(&mut self.cut);
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            // A cut may split a character: the replacement marks it.
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        };
        let (time, text) = if self.timestamps {
            split_timestamp(text)
        } else {
            (None, text)
        };
        LogLine { time, text, cut }
    }
}

/// `2026-01-01T00:00:00.123456789Z text` into its time (Unix nanoseconds) and text; a line
/// without a timestamp is kept whole.
fn split_timestamp(text: String) -> (Option<i64>, String) {
    let Some((stamp, rest)) = text.split_once(' ') else {
        return (None, text);
    };
    match stamp.parse::<jiff::Timestamp>() {
        Ok(t) => {
            let nanos = i64::try_from(t.as_nanosecond()).unwrap_or(i64::MAX);
            (Some(nanos), rest.to_string())
        }
        Err(_) => (None, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_the_kubelets_query() {
        assert_eq!(LogOptions::default().query(), "");
        let options = LogOptions {
            container: Some("app".into()),
            follow: true,
            previous: true,
            tail_lines: Some(10),
            since_seconds: Some(60),
            timestamps: true,
            limit_bytes: Some(4096),
            since_time: None,
        };
        assert_eq!(
            log_path("web", "p-1", &options),
            "/api/v1/namespaces/web/pods/p-1/log?container=app&follow=true&previous=true\
             &timestamps=true&tailLines=10&sinceSeconds=60&limitBytes=4096"
        );
        assert_eq!(
            log_path("a", "b", &LogOptions::default()),
            "/api/v1/namespaces/a/pods/b/log"
        );
    }

    #[test]
    fn lines_split_across_frames_and_long_ones_are_cut() {
        let mut splitter = LineSplitter::new(8, false);
        assert_eq!(splitter.push(b"one\ntw"), vec![line("one", false)]);
        assert_eq!(
            splitter.push(b"o\r\n0123456789abcdef\nx"),
            vec![line("two", false), line("01234567", true)]
        );
        assert_eq!(splitter.push(b"yz"), vec![]);
        assert_eq!(splitter.finish(), Some(line("xyz", false)));
        assert_eq!(splitter.finish(), None);
    }

    #[test]
    fn timestamps_are_parsed_off_the_line() {
        let mut splitter = LineSplitter::new(1024, true);
        let lines = splitter.push(b"2026-01-01T00:00:00.000000001Z hello world\nno stamp\n");
        assert_eq!(lines[0].time, Some(1_767_225_600_000_000_001));
        assert_eq!(lines[0].text, "hello world");
        assert_eq!(lines[1].time, None);
        assert_eq!(lines[1].text, "no stamp");
    }

    fn line(text: &str, cut: bool) -> LogLine {
        LogLine {
            time: None,
            text: text.into(),
            cut,
        }
    }
}
