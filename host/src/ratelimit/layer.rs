//! The rate limiter as a tower layer, for the Kubernetes client: a request
//! is dispatched once its reserved slot has come, and the time it waited is
//! observed as client-go's `rest_client_rate_limiter_duration_seconds`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::time::{Instant, Sleep};

use super::RateLimiter;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerbLabels {
    verb: String,
}

/// The wait histogram, shared by every throttled client of a process.
#[derive(Clone)]
pub struct ThrottleMetrics(Family<VerbLabels, Histogram, fn() -> Histogram>);

impl ThrottleMetrics {
    /// Registers `rest_client_rate_limiter_duration_seconds` in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let waits = Family::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.001, 2.0, 15))) as fn() -> Histogram,
        );
        registry.register(
            "rest_client_rate_limiter_duration_seconds",
            "Time Kubernetes API requests waited for the client-side rate limit (--kube-api-qps, --kube-api-burst), by verb",
            waits.clone(),
        );
        Self(waits)
    }
}

/// Limits the client built with it to the limiter's rate.
#[derive(Clone)]
pub struct ThrottleLayer {
    limiter: Arc<RateLimiter>,
    metrics: ThrottleMetrics,
}

impl ThrottleLayer {
    /// A layer that waits on `limiter` before each request and records the wait.
    pub fn new(limiter: RateLimiter, metrics: &ThrottleMetrics) -> Self {
        Self {
            limiter: Arc::new(limiter),
            metrics: metrics.clone(),
        }
    }
}

impl<S> tower::Layer<S> for ThrottleLayer {
    type Service = Throttled<S>;

    fn layer(&self, inner: S) -> Throttled<S> {
        Throttled {
            inner,
            layer: self.clone(),
            slot: None,
        }
    }
}

/// The service a [`ThrottleLayer`] wraps around a client's stack.
pub struct Throttled<S> {
    inner: S,
    layer: ThrottleLayer,
    /// The reserved slot and how long it was ahead of the reservation.
    slot: Option<(Pin<Box<Sleep>>, Duration)>,
}

impl<S, B> tower::Service<http::Request<B>> for Throttled<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        let limiter = &self.layer.limiter;
        let (slot, _) = self.slot.get_or_insert_with(|| {
            let at = limiter.reserve();
            let ahead = at.saturating_duration_since(Instant::now());
            (Box::pin(tokio::time::sleep_until(at)), ahead)
        });
        ready!(slot.as_mut().poll(cx));
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> S::Future {
        let waited = self.slot.take().map(|(_, ahead)| ahead).unwrap_or_default();
        self.layer
            .metrics
            .0
            .get_or_create(&VerbLabels {
                verb: request.method().as_str().to_string(),
            })
            .observe(waited.as_secs_f64());
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use tower::{Layer, Service, ServiceExt};

    use super::*;
    use crate::ratelimit::Rate;

    #[tokio::test(start_paused = true)]
    async fn requests_are_dispatched_at_their_slots_and_their_waits_observed() {
        let mut registry = Registry::default();
        let metrics = ThrottleMetrics::register(&mut registry);
        let limiter = RateLimiter::new(Rate {
            per_second: 10.0,
            burst: 2,
        })
        .unwrap();
        let start = Instant::now();
        let inner = tower::service_fn(|_: http::Request<()>| async move {
            Ok::<_, Infallible>(start.elapsed().as_millis())
        });
        let mut service = ThrottleLayer::new(limiter, &metrics).layer(inner);
        let mut dispatched = Vec::new();
        for method in ["GET", "GET", "PATCH", "GET"] {
            let request = http::Request::builder().method(method).body(()).unwrap();
            dispatched.push(service.ready().await.unwrap().call(request).await.unwrap());
        }
        assert_eq!(dispatched, [0, 0, 100, 200]);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            r#"rest_client_rate_limiter_duration_seconds_count{verb="GET"} 3"#,
            r#"rest_client_rate_limiter_duration_seconds_sum{verb="GET"} 0.1"#,
            r#"rest_client_rate_limiter_duration_seconds_sum{verb="PATCH"} 0.1"#,
        ] {
            assert!(text.contains(line), "{line} not in:\n{text}");
        }
    }
}
