use std::path::Path;

use kscope_index_views::definitions::{IndexField, IndexSource, default_index_definitions};
use kscope_informers::fifo::FifoKind;
use kscope_informers::reflector::InitialListMode;

use super::keys::{ACTIONS, Action, KeySpec, Keymap, Section};
use super::*;

fn user(text: &str) -> Result<Config, ConfigError> {
    Config::merged(Some(("my.yaml", text)))
}

#[test]
fn built_in_has_the_default_indexes() {
    let config = Config::built_in().unwrap();
    let names: Vec<&str> = config.indexes.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["namespace", "node", "phase", "status", "owner", "app"]
    );
    assert_eq!(config.indexes, default_index_definitions());
}

#[test]
fn logs_section_bounds_the_log_view() {
    let built_in = Config::built_in().unwrap().logs;
    assert_eq!(built_in, LogSettings::default());
    let mine = user("logs:\n  capacity: 500\n").unwrap().logs;
    assert_eq!(mine.capacity, 500);
    assert_eq!(mine.tail_lines, built_in.tail_lines);
    let err = user("logs:\n  capacity: 0\n").unwrap_err().to_string();
    assert!(err.contains("logs.capacity: must be between 1"), "{err}");
    assert!(user("logs:\n  size: 1\n").is_err());
}

#[test]
fn writes_are_off_unless_the_file_a_context_or_the_flag_turns_them_on() {
    let built_in = Config::built_in().unwrap().writes;
    assert_eq!(
        built_in.for_context("any", None),
        (false, WriteSource::Default)
    );
    let mine = user("readwrite: true\ncontexts:\n  prod:\n    readwrite: false\n")
        .unwrap()
        .writes;
    assert_eq!(mine.for_context("dev", None), (true, WriteSource::Default));
    assert_eq!(
        mine.for_context("prod", None),
        (false, WriteSource::Context)
    );
    assert_eq!(
        mine.for_context("prod", Some(true)),
        (true, WriteSource::Flag)
    );
    assert!(user("contexts:\n  prod:\n    readOnly: true\n").is_err());
}

#[test]
fn informers_section_chooses_the_fifo_and_the_initial_list() {
    let built_in = Config::built_in().unwrap().informers;
    assert_eq!(
        built_in,
        InformerSettings {
            fifo: FifoKind::Classic,
            initial_list: InitialListMode::WatchList
        }
    );
    assert_eq!(
        built_in,
        InformerSettings::default(),
        "config and code agree"
    );
    let mine = user("informers:\n  fifo: atomic\n  initialList: list\n")
        .unwrap()
        .informers;
    assert_eq!(mine.fifo, FifoKind::Atomic);
    assert_eq!(mine.initial_list, InitialListMode::List);
    let only_fifo = user("informers:\n  fifo: real\n").unwrap().informers;
    assert_eq!(only_fifo.initial_list, InitialListMode::WatchList);
    let err = user("informers:\n  fifo: fast\n").unwrap_err().to_string();
    assert!(
        err.starts_with("my.yaml:2:9: informers.fifo: unknown FIFO"),
        "{err}"
    );
    assert!(user("informers:\n  pipeline: real\n").is_err());
}

#[test]
fn user_file_adds_and_replaces_by_name() {
    let config = user(
            "# mine\nindexes:\n  team:\n    label: team\n  app:\n    label: app.kubernetes.io/name\n  images: {field: images}\n  commit: {annotation: example.com/commit}\n",
        )
        .unwrap();
    let names: Vec<&str> = config.indexes.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "namespace",
            "node",
            "phase",
            "status",
            "owner",
            "app",
            "team",
            "images",
            "commit"
        ]
    );
    assert_eq!(
        config.indexes[5].source,
        IndexSource::Label("app.kubernetes.io/name".into())
    );
    assert_eq!(
        config.indexes[7].source,
        IndexSource::Field(IndexField::Images)
    );
    assert_eq!(
        config.indexes[8].source,
        IndexSource::Annotation("example.com/commit".into())
    );
    assert_eq!(user("").unwrap(), Config::built_in().unwrap());
    assert_eq!(user("# nothing\n").unwrap(), Config::built_in().unwrap());
    assert_eq!(user("indexes: {}\n").unwrap(), Config::built_in().unwrap());
}

#[test]
fn errors_name_file_line_and_key() {
    let err = |text: &str| user(text).unwrap_err().to_string();
    let e = err("indexes:\n  team:\n    label: team\n    colour: blue\n");
    assert!(e.starts_with("my.yaml:4:"), "{e}");
    assert!(e.contains("colour"), "{e}");
    let e = err("indexs:\n  team: {label: team}\n");
    assert!(e.starts_with("my.yaml:1:"), "{e}");
    assert!(e.contains("indexs"), "{e}");
    assert_eq!(
        err("indexes:\n  node:\n    field: nodes\n"),
        "my.yaml:3:12: indexes.node.field: unknown field \"nodes\"; expected one of \
             namespace, node, phase, status, owner, images, or a JSONPath such as .spec.x"
    );
    assert_eq!(
        err("indexes:\n  team: {}\n"),
        "my.yaml:2:3: indexes.team: expected one of label, annotation or field"
    );
    assert_eq!(
        err("indexes:\n  team:\n    label: team\n    field: node\n"),
        "my.yaml:4:12: indexes.team.field: an index has one source; label is already set"
    );
    assert_eq!(
        err("indexes:\n  team:\n    label: \"\"\n"),
        "my.yaml:3:12: indexes.team.label: empty label"
    );
    let e = err("indexes:\n  team: [label]\n");
    assert!(e.starts_with("my.yaml:2:"), "{e}");
    let e = err("indexes: [\n");
    assert!(e.starts_with("my.yaml:"), "{e}");
}

#[test]
fn field_indexes_by_json_path_scoped_to_kinds() {
    let config = user(
            "indexes:\n  ready:\n    kinds: [widgets.example.com, svc]\n    field: '.status.conditions[?(@.type==\"Ready\")].status'\n  colour: {field: .spec.colour}\n",
        )
        .unwrap();
    let ready = config.indexes.iter().find(|d| d.name == "ready").unwrap();
    assert_eq!(
        ready.kinds.as_deref(),
        Some(&["widgets.example.com".to_string(), "svc".to_string()][..])
    );
    match &ready.source {
        IndexSource::Path(path) => {
            assert_eq!(
                path.as_str(),
                ".status.conditions[?(@.type==\"Ready\")].status"
            )
        }
        other => panic!("{other:?}"),
    }
    let colour = config.indexes.iter().find(|d| d.name == "colour").unwrap();
    assert_eq!(colour.kinds, None);
    assert!(matches!(colour.source, IndexSource::Path(_)));
}

#[test]
fn a_json_path_that_does_not_parse_is_placed_in_the_file() {
    let err = |text: &str| user(text).unwrap_err().to_string();
    // Plain: the column of the bad character itself.
    let e = err("indexes:\n  ready:\n    field: .status.conditions[?(@.type==)].status\n");
    assert!(
        e.starts_with("my.yaml:3:41: indexes.ready.field: invalid JSONPath at character 30"),
        "{e}"
    );
    // Quoted: past the quote.
    let e = err("indexes:\n  r: {field: '.spec['}\n");
    assert!(
        e.starts_with("my.yaml:2:21: indexes.r.field: invalid JSONPath at character 7"),
        "{e}"
    );
    let e = err("indexes:\n  r:\n    field: .data.token\n    kinds: [widgets, secrets]\n");
    assert!(
        e.starts_with("my.yaml:4:22: indexes.r.kinds: .data.token: a field index on secrets"),
        "{e}"
    );
    let e = err("indexes:\n  r: {field: .x, kinds: []}\n");
    assert!(e.starts_with("my.yaml:2:"), "{e}");
    assert!(e.contains("indexes.r.kinds: an empty list"), "{e}");
}

#[test]
fn null_removes_an_index() {
    let config = user("indexes:\n  app: null\n  phase: ~\n  team: {label: team}\n").unwrap();
    let names: Vec<&str> = config.indexes.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["namespace", "node", "status", "owner", "team"]);
    // Removing one that does not exist is not an error; re-adding it adds it at the end.
    let config = user("indexes:\n  nothing: null\n").unwrap();
    assert_eq!(config, Config::built_in().unwrap());
}

fn press(keys: &Keymap, section: Section, key: &str) -> Option<Action> {
    keys.action(section, None, key.parse::<KeySpec>().unwrap())
}

#[test]
fn built_in_keys_bind_every_action() {
    let keys = Config::built_in().unwrap().keys;
    for (name, action, _) in ACTIONS {
        let bound = [
            Section::Normal,
            Section::Deltas,
            Section::Filter,
            Section::Help,
            Section::Indexes,
            Section::Detail,
            Section::Command,
            Section::Logs,
            Section::Confirm,
            Section::Forwards,
        ]
        .into_iter()
        .any(|s| !keys.keys(s, action).is_empty());
        assert!(bound, "{name} has no default key");
    }
    // Everything that applies on the main screen has a key there.
    let elsewhere = [
        Action::FilterAccept,
        Action::FilterBackspace,
        Action::NextIndex,
        Action::PrevIndex,
        Action::ChooseValue,
        Action::MarkContext,
        Action::OpenDeltaFilter,
        Action::ClearDeltaFilter,
        Action::OpenDeltaDiff,
        Action::NextFifo,
        Action::ToggleSideBySide,
        Action::DetailTab,
        Action::ScrollLeft,
        Action::ScrollRight,
        Action::ToggleWrap,
        Action::ToggleManagedFields,
        Action::Refresh,
        Action::OpenDiff,
        Action::Back,
        Action::CommandBackspace,
        Action::CommandComplete,
        Action::CommandRun,
        Action::CommandCancel,
        Action::LineLeft,
        Action::LineRight,
        Action::LineStart,
        Action::LineEnd,
        Action::LineDelete,
        Action::LineDeleteWord,
        Action::LineDeleteToStart,
        Action::LineHistoryPrevious,
        Action::LineHistoryNext,
        Action::OpenLogSearch,
        Action::NextMatch,
        Action::PrevMatch,
        Action::ToggleLogFilter,
        Action::ToggleTimestamps,
        Action::TogglePrevious,
        Action::SaveLogs,
        Action::OpenTextSearch,
        Action::SaveText,
        Action::ConfirmYes,
        Action::ConfirmNo,
        Action::ConfirmSwitch,
        Action::ConfirmCascade,
        Action::ConfirmBackspace,
        Action::StopForward,
    ];
    let log_ranges = |a: &Action| matches!(a, Action::LogRange(_));
    for (name, action, _) in ACTIONS.iter().filter(|(_, a, _)| !log_ranges(a)) {
        if !elsewhere.contains(action) {
            assert!(
                !keys.keys(Section::Normal, action).is_empty(),
                "{name} has no key in normal"
            );
        }
    }
}

#[test]
fn every_action_but_typing_has_a_name() {
    // A new Action variant fails to compile here until it is named in ACTIONS.
    let named = |action: &Action| match action {
        Action::FilterChar(_) | Action::CommandChar(_) | Action::ConfirmChar(_) => false,
        Action::Quit
        | Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom
        | Action::SortNext
        | Action::SortReverse
        | Action::SortBy(_)
        | Action::OpenFilter
        | Action::FilterBackspace
        | Action::FilterAccept
        | Action::FilterClear
        | Action::TogglePanels
        | Action::FocusNext
        | Action::TogglePause
        | Action::ToggleHelp
        | Action::ToggleIndexes
        | Action::NextIndex
        | Action::PrevIndex
        | Action::ChooseValue
        | Action::OpenDeltaFilter
        | Action::ClearDeltaFilter
        | Action::OpenDeltaDiff
        | Action::NextFifo
        | Action::ToggleSideBySide
        | Action::OpenDetail
        | Action::Describe
        | Action::DetailTab
        | Action::ScrollLeft
        | Action::ScrollRight
        | Action::ToggleWrap
        | Action::ToggleManagedFields
        | Action::Refresh
        | Action::OpenDiff
        | Action::Back
        | Action::OpenCommand
        | Action::LineLeft
        | Action::LineRight
        | Action::LineStart
        | Action::LineEnd
        | Action::LineDelete
        | Action::LineDeleteWord
        | Action::LineDeleteToStart
        | Action::LineHistoryPrevious
        | Action::LineHistoryNext
        | Action::CommandBackspace
        | Action::CommandComplete
        | Action::CommandRun
        | Action::CommandCancel
        | Action::ToggleWide
        | Action::DrillDown
        | Action::JumpToOwner
        | Action::OpenTree
        | Action::OpenHot
        | Action::Mark
        | Action::MarkContext
        | Action::Delete
        | Action::Kill
        | Action::Restart
        | Action::Scale
        | Action::RolloutUndo
        | Action::SetImage
        | Action::Cordon
        | Action::Drain
        | Action::Suspend
        | Action::TriggerJob
        | Action::ConfirmYes
        | Action::ConfirmNo
        | Action::ConfirmSwitch
        | Action::ConfirmCascade
        | Action::ConfirmBackspace
        | Action::Copy
        | Action::Edit
        | Action::FavouriteNamespace(_)
        | Action::OpenLogs
        | Action::OpenPreviousLogs
        | Action::OpenShell
        | Action::Attach
        | Action::OpenLogSearch
        | Action::NextMatch
        | Action::PrevMatch
        | Action::ToggleLogFilter
        | Action::ToggleTimestamps
        | Action::TogglePrevious
        | Action::SaveLogs
        | Action::OpenTextSearch
        | Action::PortForward
        | Action::StopForward
        | Action::SaveText
        | Action::ReplayPlayPause
        | Action::ReplayFaster
        | Action::ReplaySlower
        | Action::ReplayStep
        | Action::ToggleRecord => true,
        // Each range the log view offers is named once.
        Action::LogRange(range) => ACTIONS
            .iter()
            .any(|(_, a, _)| *a == Action::LogRange(*range)),
    };
    assert_eq!(
        ACTIONS.iter().filter(|(_, a, _)| named(a)).count(),
        ACTIONS.len()
    );
    assert_eq!(ACTIONS.len(), 119);
}

#[test]
fn user_keys_replace_only_the_actions_they_list() {
    let keys = user("keys:\n  normal:\n    down: [n, ctrl-n]\n    quit: [x, f10]\n")
        .unwrap()
        .keys;
    assert_eq!(press(&keys, Section::Normal, "n"), Some(Action::Down));
    assert_eq!(press(&keys, Section::Normal, "j"), None);
    assert_eq!(press(&keys, Section::Normal, "down"), None);
    assert_eq!(press(&keys, Section::Normal, "f10"), Some(Action::Quit));
    assert_eq!(press(&keys, Section::Normal, "k"), Some(Action::Up));
    assert_eq!(press(&keys, Section::Normal, "ctrl-n"), Some(Action::Down));
    // The index browser's own `down` is untouched; q freed in normal types nothing there.
    assert_eq!(press(&keys, Section::Indexes, "j"), Some(Action::Down));
    assert_eq!(press(&keys, Section::Normal, "q"), None);
    assert_eq!(press(&keys, Section::Normal, "ctrl-c"), Some(Action::Quit));
    // A bound key is no longer typed in the filter bar; the others still are.
    let keys = user("keys:\n  filter:\n    filter-accept: [enter, tab]\n")
        .unwrap()
        .keys;
    assert_eq!(
        press(&keys, Section::Filter, "tab"),
        Some(Action::FilterAccept)
    );
    assert_eq!(
        press(&keys, Section::Filter, "x"),
        Some(Action::FilterChar('x'))
    );
    assert_eq!(
        keys.help(Section::Normal)[0],
        ("q".to_string(), "quit (Ctrl-C always quits)")
    );
}

#[test]
fn delta_focus_keys_come_before_normal_ones() {
    let keys = Config::built_in().unwrap().keys;
    let esc = "esc".parse::<KeySpec>().unwrap();
    assert_eq!(
        keys.action(Section::Normal, None, esc),
        Some(Action::FilterClear)
    );
    assert_eq!(
        keys.action(Section::Normal, Some(Section::Deltas), esc),
        Some(Action::ClearDeltaFilter)
    );
    let j = "j".parse::<KeySpec>().unwrap();
    assert_eq!(
        keys.action(Section::Normal, Some(Section::Deltas), j),
        Some(Action::Down)
    );
}

#[test]
fn key_errors_name_file_line_column_and_key() {
    let err = |text: &str| user(text).unwrap_err().to_string();
    assert_eq!(
        err("keys:\n  normal:\n    jump: [j]\n"),
        format!(
            "my.yaml:3:5: keys.normal.jump: unknown action; expected one of {}",
            ACTIONS
                .iter()
                .map(|(n, ..)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )
    );
    let e = err("keys:\n  normal:\n    down: [j, hyper-j]\n");
    assert!(
        e.starts_with("my.yaml:3:15: keys.normal.down: unknown key \"hyper-j\""),
        "{e}"
    );
    // The file's key wins over the built-in binding of it; twice in one file is an error.
    let keys = user("keys:\n  normal:\n    down: [s]\n").unwrap().keys;
    let s = "s".parse::<KeySpec>().unwrap();
    assert_eq!(keys.action(Section::Normal, None, s), Some(Action::Down));
    assert!(keys.keys(Section::Normal, &Action::SortNext).is_empty());
    assert_eq!(
        err("keys:\n  normal:\n    down: [s]\n    top: [s]\n"),
        "my.yaml:4:11: keys.normal.top: s is also bound to down in normal"
    );
    assert_eq!(
        err("keys:\n  deltas:\n    open-delta-diff: [enter]\n    open-delta-filter: [enter]\n"),
        "my.yaml:4:25: keys.deltas.open-delta-filter: enter is also bound to \
             open-delta-diff in deltas"
    );
    assert_eq!(
        err("keys:\n  normal:\n    down: [ctrl-c]\n"),
        "my.yaml:3:12: keys.normal.down: ctrl-c always quits and cannot be bound"
    );
    let e = err("keys:\n  nromal:\n    down: [j]\n");
    assert!(e.starts_with("my.yaml:2:"), "{e}");
    assert!(e.contains("nromal"), "{e}");
    let e = err("keys:\n  normal:\n    down: j\n");
    assert!(e.starts_with("my.yaml:3:"), "{e}");
    // Rebinding both sides of a would-be conflict is fine.
    let keys = user("keys:\n  normal:\n    down: [s]\n    sort-next: [v]\n")
        .unwrap()
        .keys;
    assert_eq!(press(&keys, Section::Normal, "s"), Some(Action::Down));
}

#[test]
fn unreadable_file_is_an_error() {
    let err = Config::load(Some(Path::new("/nonexistent/kscope.yaml"))).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/kscope.yaml: cannot read"),
        "{err}"
    );
}
