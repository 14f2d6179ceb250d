//! vcd-ccm's integration tests, one binary: the library (and the
//! `vcd-ccm` binary) against vcdsim and kubesim. Each module is a topic;
//! `support` holds what they share.
//!
//! `cargo test -p vcd-ccm --test it <module>::` runs one topic; tests that
//! print figures say so in their module's header.

mod support;

mod check;
mod config;
mod demo;
mod doc_links;
mod e2e_address_errors;
mod e2e_client_ip;
mod e2e_conditions;
mod e2e_drain;
mod e2e_drift;
mod e2e_engine_groups;
mod e2e_firewall;
mod e2e_http_rules;
mod e2e_ip_families;
mod e2e_nodes;
mod e2e_persistence;
mod e2e_policy_reload;
mod e2e_policy_shadow;
mod e2e_run;
mod e2e_scale;
mod e2e_service_failures;
mod e2e_services;
mod e2e_sharing;
mod e2e_source_ranges;
mod e2e_tls_secrecy;
mod e2e_tls_secrets;
mod e2e_tls_upload_faults;
mod e2e_traffic_policy;
mod e2e_wire;
mod informer_trim;
mod instances_cache;
mod instances_deletion_guard;
mod instances_lifecycle;
mod instances_metadata;
mod instances_zones;
mod lb_behaviour;
mod lb_bench;
mod lb_crash;
mod lb_crash_matrix;
mod lb_drain_crash;
mod lb_dual_stack_crash;
mod lb_lifecycle;
mod lb_member_groups;
mod lb_mode_change;
mod lb_ownership;
mod lb_pool_choices;
mod lb_sharing_crash;
mod lb_upstream;
mod leader;
mod manifests;
mod monitoring;
mod policy_authoring;
mod policy_cli;
mod policy_contracts;
mod policy_directory;
mod policy_languages;
mod policy_oci;
mod policy_output_charge;
mod sandbox;
mod serve;
mod serve_access;
mod serve_flood;
mod structure;
mod upgrade;
mod vcd_auth;
mod vcd_bodies;
mod vcd_call_counts;
mod vcd_mechanics;
mod vcd_resources;
mod vcd_secrets;
mod vcd_tls;
