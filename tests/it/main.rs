//! The integration tests, one binary: each module runs the real HTTP path against the
//! simulated API server, the CLI as a subprocess, or the TUI through its real draw path.
//! One binary links once, where twenty took most of CI's time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark that cannot set up fails, with its line"
)]

mod act_cascade;
mod act_edit;
mod act_exec;
mod act_kill_cronjob;
mod act_pick;
mod act_portforward;
mod act_portforward_container;
mod act_rbac;
mod act_rollout;
mod act_shell_tui;
mod act_writes;
mod cli_errors;
mod common;
mod describe;
mod edges_cli;
mod edges_columns;
mod edges_tui_keys;
mod edges_watch_list;
mod fifo;
mod fleet;
mod fleet_all;
mod fleet_header;
mod fleet_identity;
mod fleet_nsset;
mod fleet_picker;
mod fleet_tui;
mod kinds;
mod kinds_crd_columns;
mod kinds_index;
mod kinds_output;
mod layers;
mod mcp;
mod mcp_edges;
mod mcp_fleet;
mod metrics_page_fuzz;
mod record_disk;
mod record_tui;
mod reflector_convergence;
mod reflector_scale;
mod replay;
mod replay_fifo;
mod replay_reader;
mod replay_seek;
mod replay_tui;
mod resources_kinds;
mod resources_pod;
mod secrets;
mod sim_clusters;
mod sim_controllers;
mod sim_crds;
mod sim_errors;
mod sim_fidelity;
mod sim_kinds;
mod sim_kubectl;
mod sim_node_client;
mod sim_portforward_kubectl;
mod sim_protocol;
mod sim_rollouts;
mod sim_truth_cluster;
mod sim_truth_delete;
mod sim_truth_duplicates;
mod sim_truth_field_validation;
mod sim_truth_gaps;
mod sim_truth_openapi;
mod sim_truth_terminate;
mod sim_truth_writes;
mod sim_widgets;
mod sim_workloads;
mod sim_writes;
mod stale;
mod tui_all;
mod tui_detail;
mod tui_edges;
mod tui_fifo;
mod tui_frame_cost;
mod tui_keys;
mod tui_logs;
mod tui_panels;
mod tui_snapshots;
mod tui_tmux;
mod tui_waiting;
mod views_config;
mod views_sim;
mod wb_fifo_sizes;
mod wb_hot_tui;
mod wb_metrics_tui;
mod wb_timeline_detail;
mod wb_timeline_tui;
mod wb_tree_churn;
mod wb_tree_tui;
mod workbench_bugs;
mod workbench_hotloops;
mod workbench_metrics;
mod workbench_views;
