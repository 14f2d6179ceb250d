//! The cloud config file (`--cloud-config`): the upstream CCM's
//! `vcloud-ccm-config.yaml`, read as strictly as upstream does, plus a few
//! keys of ours; the credential Secret mounted as files; the zones file.
//! `README.md` beside this file is the operator's reference.
//!
//! ```no_run
//! # use std::path::Path;
//! # use vcd_ccm::config::{CloudConfig, DEFAULT_CLOUD_CONFIG, DEFAULT_SECRET_DIR};
//! let config = CloudConfig::from_file(Path::new(DEFAULT_CLOUD_CONFIG))?;
//! let client = config.client_config(Path::new(DEFAULT_SECRET_DIR))?;
//! let lb = config.lb_config();
//! let instances = config.instances_config()?;
//! # Ok::<(), vcd_ccm::config::ConfigError>(())
//! ```

mod cloud;
mod convert;
mod credentials;
mod errors;
mod model;
mod values;

pub use cloud::{CLUSTER_ID_ENV, CloudConfig};
pub use convert::DEFAULT_ZONES_FILE;
pub use errors::ConfigError;

/// Where upstream's Deployment mounts the cloud config.
pub const DEFAULT_CLOUD_CONFIG: &str = "/etc/kubernetes/vcloud/vcloud-ccm-config.yaml";

/// Where upstream's Deployment mounts the `vcloud-basic-auth` Secret.
pub const DEFAULT_SECRET_DIR: &str = "/etc/kubernetes/vcloud/basic-auth";
