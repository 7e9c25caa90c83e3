//! What handling an action asks for beyond a component's own state: components return an
//! [`Effect`] to the app, the app returns [`Follow`]s to the event loop, instead of setting
//! flags that something must remember to read.

use super::action::InputMode;

/// A component's request to the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The component's mode ends: back to the main screen.
    Close,
    /// Open the full diff of tap entry `seq` (the delta panel's selection).
    OpenEntry(u64),
    /// Fetch the detail's object again and re-read its history.
    Refresh,
    /// The filter bar's text changed: apply it to the table.
    Refilter,
    /// Esc in the filter bar: drop the typed filter (never goes back a view).
    ClearFilter,
    /// Run the command line typed.
    Run(String),
    /// Show the values of index number `n` in the browser.
    Browse(usize),
    /// Filter the table by this query (`NAME=VALUE` from the index browser).
    Filter(String),
    /// Save to a file what the view keeps: the log view's lines, the detail's text.
    Save,
    /// Connect to this kube context and show it instead.
    SwitchContext(String),
    /// Another mode of the same component (the log view's search bar, and back).
    Mode(InputMode),
    /// Show this object's row, in its kind's table (Enter in the ownership tree).
    ShowObject(ObjectRef),
    /// The confirm dialog said yes: do its write.
    Write,
    /// The port-forward dialog said yes: start the forward chosen.
    StartForward,
    /// The container picker said yes: open the shell or attach on the container chosen.
    StartSession,
    /// `F` on the container picker's row: the port-forward dialog of that container alone.
    ForwardContainer,
    /// Stop port-forward number `n` (the `:pf` list's selection).
    StopForward(u64),
    /// The confirm dialog's change is typed: ask the server's dry run of it.
    Check,
    /// Not this component's action: the main screen's.
    Pass,
}

/// What the event loop must do after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    Quit,
    /// The table was replaced: follow the new one's status, tap and rows.
    Table,
    /// The view on screen was rebuilt: follow its rows.
    Rows,
    /// A shell or attach was asked for: the loop ends so that the terminal's owner can hand
    /// the terminal over ([`super::app::App::take_session`]), then runs the loop again.
    Handover,
}

/// An object a workbench view points at (the tree's nodes, the hot loops' objects): its
/// `kind` field, namespace and name. Here, beside the effect that shows it, so the views
/// and the effect do not import each other.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectRef {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}
