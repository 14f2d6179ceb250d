//! Who may read what: every request is put to an [`Authorize`]
//! implementation before it is served, as in the Kubernetes components'
//! secure serving (production delegates to the API server, see
//! [`crate::access`]). Plain HTTP for local runs has no guard.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;

/// An authorizer's answer for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Allow,
    /// A bearer token was given and is not valid.
    Unauthenticated,
    /// Known (or anonymous), but not allowed this verb on this path.
    Forbidden {
        /// The user the token belongs to (`system:anonymous` without one).
        user: String,
    },
    /// The decision could not be made (e.g. the API server is unreachable).
    Failed(String),
}

/// Decides whether a request on the HTTPS port is served.
pub trait Authorize: Send + Sync {
    /// `verb` is the lowercase HTTP method, as for Kubernetes non-resource
    /// requests; `token` the bearer token, if any.
    fn authorize<'a>(
        &'a self,
        token: Option<&'a str>,
        verb: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Verdict>;
}

pub(super) async fn guard(
    State(authorizer): State<Arc<dyn Authorize>>,
    request: Request,
    next: Next,
) -> Response {
    let token = bearer(request.headers());
    let verb = request.method().as_str().to_ascii_lowercase();
    let path = request.uri().path().to_string();
    match authorizer.authorize(token.as_deref(), &verb, &path).await {
        Verdict::Allow => next.run(request).await,
        Verdict::Unauthenticated => (StatusCode::UNAUTHORIZED, "Unauthorized\n").into_response(),
        Verdict::Forbidden { user } => (
            StatusCode::FORBIDDEN,
            format!("forbidden: User \"{user}\" cannot {verb} path \"{path}\"\n"),
        )
            .into_response(),
        Verdict::Failed(reason) => {
            tracing::warn!(%path, %reason, "cannot authorize a request");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Internal Server Error: \"{path}\": {reason}\n"),
            )
                .into_response()
        }
    }
}

/// The token of an `Authorization: Bearer …` header.
fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}
