//! `vcd_ccm_check_passing{probe,check}`: every `/readyz` and `/healthz`
//! check, run at scrape time, 1 when it passes and 0 when it fails, so an
//! alert can name the check that keeps a replica unready.

use std::fmt;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;

use super::Probes;

/// The metric's name.
pub const CHECK_METRIC: &str = "vcd_ccm_check_passing";

pub(super) struct CheckCollector(pub(super) Arc<Probes>);

impl fmt::Debug for CheckCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckCollector").finish_non_exhaustive()
    }
}

impl Collector for CheckCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let mut family = encoder.encode_descriptor(
            CHECK_METRIC,
            "Health and readiness checks by probe (readyz, healthz) and check name: 1 passing, 0 failing (the reason is on the probe's page)",
            None,
            MetricType::Gauge,
        )?;
        let probes = [("readyz", &self.0.ready), ("healthz", &self.0.health)];
        for (probe, checks) in probes {
            for check in checks {
                let passing = i64::from((check.run)().is_ok());
                let labels = [("probe", probe), ("check", check.name())];
                ConstGauge::new(passing).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}
