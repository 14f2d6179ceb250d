//! NSX-T application port profiles: finding SYSTEM ones by name, and the
//! TENANT ones the CCM creates for DNAT rules.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::encode;
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::create::create_checked;
use crate::vcd::delete::DeleteRight;
use crate::vcd::delete::delete_object;
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;
use crate::vcd::task::Task;
use crate::vcd::tasks::write;

const PROFILES: &str = "/cloudapi/1.0.0/applicationPortProfiles";

/// One protocol and its destination ports, in a port profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationPort {
    /// `TCP`, `UDP`, `ICMPv4` or `ICMPv6`.
    pub protocol: String,
    /// Ports or ranges such as `"80"` or `"1000-2000"`.
    #[serde(default)]
    pub destination_ports: Vec<String>,
}

/// An NSX-T application port profile (`/cloudapi/1.0.0/applicationPortProfiles`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PortProfile {
    /// The profile's id. `None` until VCD has created the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The profile's name.
    pub name: String,
    /// Free text, if set.
    pub description: Option<String>,
    /// `SYSTEM`, `PROVIDER` or `TENANT`.
    pub scope: String,
    /// The protocols and ports the profile matches; absent counts as none.
    #[serde(default)]
    pub application_ports: Vec<ApplicationPort>,
    /// The org of a TENANT profile; required on create.
    pub org_ref: Option<EntityRef>,
    /// The VDC or data-center group a TENANT profile is created in (that of
    /// the edge gateway using it); required on create, never read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_entity_id: Option<String>,
    /// Every other field, kept so a PUT sends back what VCD (or another tool) set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PortProfile {
    /// A TENANT profile of `org` in `context` (a VDC or data-center group)
    /// for the given ports.
    pub fn tenant(
        name: &str,
        org: &EntityRef,
        context: &EntityRef,
        ports: Vec<ApplicationPort>,
    ) -> Self {
        Self {
            id: None,
            name: name.to_string(),
            description: None,
            scope: "TENANT".to_string(),
            application_ports: ports,
            org_ref: Some(org.clone()),
            context_entity_id: Some(context.id.clone()),
            extra: Map::new(),
        }
    }
}

/// Application port profiles. Made by [`VcdClient::port_profiles`].
#[derive(Clone, Copy)]
pub struct PortProfiles<'c> {
    pub(super) client: &'c VcdClient,
}

impl PortProfiles<'_> {
    /// The profile of `scope` named exactly `name`, if any.
    #[tracing::instrument(name = "find_port_profile", skip(self))]
    pub async fn find(&self, scope: &str, name: &str) -> Result<Option<PortProfile>, VcdError> {
        let filter = Filter::eq("scope", scope).and(Filter::eq("name", name));
        let found = list_all(
            self.client,
            "find_port_profile",
            PROFILES,
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await?;
        let scope_text = format!("among {scope} port profiles");
        super::only_one(
            found,
            |p: &PortProfile| &p.name,
            "port profile",
            name,
            &scope_text,
        )
    }

    /// Every profile of `scope`.
    #[tracing::instrument(name = "list_port_profiles", skip(self))]
    pub async fn list(&self, scope: &str) -> Result<Vec<PortProfile>, VcdError> {
        let filter = Filter::eq("scope", scope);
        list_all(
            self.client,
            "list_port_profiles",
            PROFILES,
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The port profile with this id.
    #[tracing::instrument(name = "get_port_profile", skip(self))]
    pub async fn get(&self, profile_id: &str) -> Result<PortProfile, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_port_profile",
                format!("{PROFILES}/{profile_id}"),
            ))
            .await
    }

    /// Creates a TENANT profile (see [`PortProfile::tenant`]).
    #[tracing::instrument(name = "create_port_profile", skip(self, profile), fields(profile = %profile.name))]
    pub async fn create(&self, profile: &PortProfile) -> Result<PortProfile, VcdError> {
        let call = self.client.call_of("create_port_profile", PROFILES);
        let body = encode(&call, "port profile", &profile.name, profile)?;
        let (body, call) = (&body, &call);
        create_checked(
            self.client,
            "create_port_profile",
            || async move {
                let request = ApiRequest::new("create_port_profile", Method::POST, PROFILES)
                    .encoded(body.clone());
                let task = write(self.client, request).await?;
                self.get(&Task::created_id(task, call, "port profile")?)
                    .await
            },
            || self.find(&profile.scope, &profile.name),
        )
        .await
    }

    /// PUTs the whole profile (fields this client does not model included)
    /// and returns it as VCD stored it. Only PROVIDER and TENANT profiles can
    /// change.
    #[tracing::instrument(name = "update_port_profile", skip(self, profile), fields(profile = %profile.name))]
    pub async fn update(&self, profile: &PortProfile) -> Result<PortProfile, VcdError> {
        let id = profile.id.as_deref().ok_or_else(|| VcdError::Missing {
            what: "port profile id",
            name: profile.name.clone(),
            scope: "(update a profile read from VCD)".to_string(),
        })?;
        let path = format!("{PROFILES}/{id}");
        let call = self.client.call_of("update_port_profile", &path);
        let body = encode(&call, "port profile", &profile.name, profile)?;
        write(
            self.client,
            ApiRequest::new("update_port_profile", Method::PUT, &path).encoded(body),
        )
        .await?;
        self.get(id).await
    }

    /// Deletes the profile; one already gone counts as deleted, one the role
    /// may not delete is [`VcdError::DeleteForbidden`].
    #[tracing::instrument(name = "delete_port_profile", skip(self))]
    pub async fn delete(&self, profile_id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new(
            "delete_port_profile",
            Method::DELETE,
            format!("{PROFILES}/{profile_id}"),
        );
        delete_object(
            self.client,
            None,
            request,
            DeleteRight::PortProfiles,
            || self.get(profile_id),
        )
        .await
    }
}
