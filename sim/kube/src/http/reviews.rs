//! TokenReview and SubjectAccessReview: create-only and never stored; the
//! answer comes back in the object's `status` with 201, as from the real
//! server.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewStatus};
use k8s_openapi::api::authorization::v1::{SubjectAccessReview, SubjectAccessReviewStatus};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use serde::de::DeserializeOwned;

use super::AppState;
use crate::access;
use crate::error::ApiError;
use crate::resources;
use crate::store::ListOptions;

pub async fn token_review(State(app): State<AppState>, body: Bytes) -> Response {
    let mut review: TokenReview = match parse(&body, "TokenReview") {
        Ok(review) => review,
        Err(error) => return error.into_response(),
    };
    let token = review.spec.token.as_str();
    review.status = Some(match app.tokens.user(token) {
        Some(user) => TokenReviewStatus {
            authenticated: Some(true),
            user: Some(user),
            audiences: review.spec.audiences.clone(),
            error: None,
        },
        None => TokenReviewStatus {
            error: Some("invalid bearer token".into()),
            ..TokenReviewStatus::default()
        },
    });
    (StatusCode::CREATED, axum::Json(review)).into_response()
}

pub async fn subject_access_review(State(app): State<AppState>, body: Bytes) -> Response {
    let mut review: SubjectAccessReview = match parse(&body, "SubjectAccessReview") {
        Ok(review) => review,
        Err(error) => return error.into_response(),
    };
    let spec = &review.spec;
    if spec.user.is_none() && spec.groups.is_none() {
        let message = "at least one of user or group must be specified".to_string();
        return ApiError::BadRequest(message).into_response();
    }
    let answer = match (
        stored::<ClusterRole>(&app),
        stored::<ClusterRoleBinding>(&app),
    ) {
        (Ok(roles), Ok(bindings)) => access::authorize(spec, &roles, &bindings),
        (Err(error), _) | (_, Err(error)) => return error.into_response(),
    };
    review.status = Some(SubjectAccessReviewStatus {
        allowed: answer.is_some(),
        reason: answer,
        ..SubjectAccessReviewStatus::default()
    });
    (StatusCode::CREATED, axum::Json(review)).into_response()
}

fn parse<K: DeserializeOwned>(body: &[u8], kind: &str) -> Result<K, ApiError> {
    serde_json::from_slice(body)
        .map_err(|error| ApiError::BadRequest(format!("the body is not a {kind}: {error}")))
}

fn stored<K>(app: &AppState) -> Result<Vec<K>, ApiError>
where
    K: kube::Resource<DynamicType = ()> + DeserializeOwned,
{
    let resource =
        resources::by_kind(&K::api_version(&()), &K::kind(&())).ok_or(ApiError::UnknownResource)?;
    let list = app.store.list(resource, &ListOptions::default())?;
    let items = list.get("items").cloned().unwrap_or_default();
    serde_json::from_value(items)
        .map_err(|error| ApiError::BadRequest(format!("stored {}: {error}", K::kind(&()))))
}
