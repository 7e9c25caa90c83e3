//! Where the keyboard's input goes: the mode and the focused panel. What a key asks for is an
//! [`Action`] of the configuration's vocabulary; [`super::keymap::map_key`] finds it.

pub use kscope_config::keys::Action;

/// What the keyboard is talking to right now: the same key means different things in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputMode {
    #[default]
    Normal,
    Filter,
    Help,
    Indexes,
    /// Typing the delta panel's filter.
    DeltaFilter,
    /// The detail of one object over the table: YAML, history, a diff.
    Detail,
    /// Typing a command (`:`).
    Command,
    /// A pod's or workload's logs over the table.
    Logs,
    /// Typing the log view's search.
    LogSearch,
    /// Picking a kube context to switch to (`:ctx`).
    Contexts,
    /// The confirm dialog of a write.
    Confirm,
    /// The ownership tree of a row (`x`).
    Tree,
    /// The field managers and objects by write rate (`H`).
    Hot,
    /// The port-forward dialog (`F`): which port, which local port.
    PortForward,
    /// Which container a shell or attach opens in (`o`, `a` on a pod with several).
    Containers,
    /// The port-forwards running (`:pf`).
    Forwards,
    /// A controller's own /metrics beside kscope's informer (`:metrics`).
    Metrics,
    /// One object's timeline (`:timeline`).
    Timeline,
}

/// Which panel the movement keys scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    Table,
    Deltas,
}
