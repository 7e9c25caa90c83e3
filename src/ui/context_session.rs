//! The `:ctx` session: asking to switch cluster, and moving the session's tables to the new
//! one once it answers. Apart from [`crate::contexts`] (the switcher and picker, which the
//! UI state holds) because it moves [`Tables`], which hold that state.

use super::contexts::{Connected, ContextSwitcher, Switched};
use super::effect::Follow;
use super::namespace_sets::group_of;
use super::tables::{Surface, Tables};

/// The context session: asking for a switch, and moving the session to the new cluster.
impl ContextSwitcher {
    /// `:ctx NAME`: connects to `context` in the background, saying so; the session moves
    /// once it answers ([`ContextSwitcher::switch`]), and until then the old cluster stays
    /// on screen.
    pub(crate) fn request(&mut self, ui: &mut Surface, context: String) {
        if context == ui.header.context {
            ui.state.command.error = Some(format!("already on context {context}"));
            return;
        }
        ui.state.command.error = Some(format!("connecting to context {context}…"));
        self.connect(context);
    }

    /// A connection finished: on success every table of the old cluster stops (in the
    /// background) and the same kind, or the same category (`:all`) as the new cluster
    /// serves it, shows from the new one: in the scope the new cluster group was last shown
    /// in, else in all namespaces or the same set if that was the scope, else in the new
    /// context's namespace. Returns the new cluster's client (for the app's other
    /// readers) and what the loop must follow; on failure, or for an attempt superseded,
    /// nothing changes but the message saying why.
    pub(crate) fn switch(
        &mut self,
        connected: Connected,
        tables: &mut Tables,
        ui: &mut Surface,
    ) -> Option<(kube::Client, Vec<Follow>)> {
        let (context, result) = self.finish(connected)?;
        let Switched {
            cluster,
            catalog,
            catalog_watch,
            discovery_error,
            fleet,
        } = match result {
            Ok(switched) => switched,
            Err(err) => {
                ui.state.command.error = Some(format!("context {context}: {err}"));
                return None;
            }
        };
        let starter = tables
            .starter
            .for_cluster(cluster.clone(), catalog, catalog_watch);
        let starter = match fleet.is_empty() {
            true => starter,
            false => starter.for_fleet(fleet),
        };
        let detail = ui.detail.for_client(cluster.client.clone());
        // The header names the new cluster group before its tables start, so the scope they
        // show is remembered as that group's; it opens in the scope it was last shown in.
        let label = starter
            .fleet_label()
            .unwrap_or_else(|| (cluster.context.clone(), cluster.server.clone()));
        let last = ui.namespace_sets.last(&group_of(&label.0));
        let previous = (
            std::mem::replace(&mut ui.header.context, label.0),
            std::mem::replace(&mut ui.header.server, label.1),
        );
        let moved = tables.move_to_cluster(ui, starter, &cluster.default_namespace, last, detail);
        let follow = match moved {
            Ok(follow) => follow,
            Err(err) => {
                (ui.header.context, ui.header.server) = previous;
                ui.state.command.error = Some(format!("context {context}: {err}"));
                return None;
            }
        };
        ui.state.command.error = Some(match discovery_error {
            None => format!("switched to context {context}"),
            Some(err) => format!("switched to context {context}; only the built-in kinds: {err}"),
        });
        Some((cluster.client, follow))
    }
}
