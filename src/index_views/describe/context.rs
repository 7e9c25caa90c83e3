//! What every describer reads besides its object: the time, the related lists and the
//! object's Events, which it prints as kubectl's Events section.

use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use serde::de::DeserializeOwned;

use kscope_resources::Timestamp;

use super::sources::DescribeSources;
use super::writer::Out;

/// What every describer reads besides its object.
pub(super) struct Ctx<'a> {
    pub(super) now: Timestamp,
    pub(super) sources: &'a DescribeSources,
}

impl Ctx<'_> {
    /// The related list `what` decoded as `T` (items that do not decode left out), or why
    /// it could not be read.
    pub(super) fn related<T: DeserializeOwned>(&self, what: &str) -> Result<Vec<T>, String> {
        match self.sources.related.iter().find(|(w, _)| *w == what) {
            None => Err(format!("{what} not read")),
            Some((_, Err(err))) => Err(err.clone()),
            Some((_, Ok(items))) => Ok(items
                .iter()
                .filter_map(|item| serde_json::from_value(item.clone()).ok())
                .collect()),
        }
    }

    pub(super) fn since(&self, t: Option<&Time>) -> String {
        match t {
            Some(t) => Timestamp::from_seconds(t.0.as_second()).human_since(self.now),
            None => "<unknown>".to_owned(),
        }
    }

    pub(super) fn since_micro(&self, t: Option<&MicroTime>) -> String {
        match t {
            Some(t) => Timestamp::from_seconds(t.0.as_second()).human_since(self.now),
            None => "<unknown>".to_owned(),
        }
    }

    /// kubectl's Events section: oldest first, with "(xN over AGE)" for repeated ones.
    pub(super) fn events(&self, out: &mut Out) {
        let events = match &self.sources.events {
            None => return,
            Some(Err(err)) => {
                out.w(0, &format!("Events:\t<error: {err}>\n"));
                return;
            }
            Some(Ok(events)) => events,
        };
        let mut events: Vec<Event> = events
            .iter()
            .filter_map(|e| serde_json::from_value(e.clone()).ok())
            .collect();
        if events.is_empty() {
            out.w(0, "Events:\t<none>\n");
            return;
        }
        out.flush();
        events.sort_by_key(|e| {
            e.last_timestamp
                .as_ref()
                .map(|t| t.0)
                .or_else(|| e.event_time.as_ref().map(|t| t.0))
        });
        out.w(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
        out.w(1, "----\t------\t----\t----\t-------\n");
        for e in &events {
            let first = match &e.event_time {
                Some(t) => self.since_micro(Some(t)),
                None => self.since(e.first_timestamp.as_ref()),
            };
            let count = e.count.unwrap_or(0);
            let interval = match (&e.series, count) {
                (Some(series), _) => format!(
                    "{} (x{} over {first})",
                    self.since_micro(series.last_observed_time.as_ref()),
                    series.count.unwrap_or(0)
                ),
                (None, count) if count > 1 => format!(
                    "{} (x{count} over {first})",
                    self.since(e.last_timestamp.as_ref())
                ),
                _ => first,
            };
            let source = e
                .source
                .as_ref()
                .and_then(|s| s.component.clone())
                .filter(|c| !c.is_empty())
                .or_else(|| e.reporting_component.clone())
                .unwrap_or_default();
            out.w(
                1,
                &format!(
                    "{}\t{}\t{interval}\t{source}\t{}\n",
                    e.type_.as_deref().unwrap_or(""),
                    e.reason.as_deref().unwrap_or(""),
                    e.message.as_deref().unwrap_or("").trim()
                ),
            );
        }
    }
}
