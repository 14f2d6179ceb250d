//! Planning the deletes of uploads nothing uses any more: after a Service's virtual
//! services were written (the older uploads of a rotated Secret, the upload
//! a Service stopped using) and at the start-up sweep (every upload of this
//! cluster no virtual service on the gateway uses). Only items tagged by
//! this cluster are candidates; items of other clusters, other tools and
//! humans are never touched. VCD refuses to delete an item a virtual
//! service still uses (HTTP 400): that is "still used", tried again later.

use std::collections::BTreeSet;

use crate::lb::context::Context;
use crate::lb::observe::objects::GatewayView;
use crate::lb::plan::op::Op;
use crate::lb::tls::tag::SecretTag;
use crate::vcd::VcdError;
use crate::vcd::resources::certificate::CertificateItem;

/// What one Service's pass leaves to clean up: uploads its virtual services
/// used before, and the Secrets whose older uploads may now be unused.
#[derive(Debug, Default)]
pub struct Leftovers {
    /// Library item ids the Service's virtual services referenced before.
    pub referenced: BTreeSet<String>,
    /// `namespace/name` of the Secrets the Service names now.
    pub secrets: BTreeSet<String>,
}

fn used_ids(view: &GatewayView) -> BTreeSet<&str> {
    view.virtual_services
        .iter()
        .filter_map(|v| v.certificate_ref.as_ref().map(|r| r.id.as_str()))
        .collect()
}

/// This cluster's upload, parsed from the item's description.
fn our_upload(ctx: &Context, item: &CertificateItem) -> Option<SecretTag> {
    item.description
        .as_deref()
        .and_then(SecretTag::parse)
        .filter(|tag| tag.is_ours(&ctx.config.cluster_id, &ctx.identity))
}

/// The deletes of the uploads among `leftovers` that are ours and
/// unused on the gateway (the applier skips those a reconcile in
/// progress holds). A failed read plans none: the next pass over the
/// Secret, or the next start-up sweep, tries again.
pub(in crate::lb) async fn plan_prunes(
    ctx: &Context,
    service: &str,
    leftovers: &Leftovers,
) -> Vec<Op> {
    if leftovers.referenced.is_empty() && leftovers.secrets.is_empty() {
        return Vec::new();
    }
    let read = async {
        let library = ctx.catalog.certificates(&ctx.client, false).await?;
        let view = ctx.snapshot.view(&ctx.client, &ctx.gateway.id).await?;
        Ok::<_, VcdError>((library, view))
    };
    let (library, view) = match read.await {
        Ok(both) => both,
        Err(error) => {
            tracing::warn!(%service, %error, "unused certificate uploads are deleted later");
            return Vec::new();
        }
    };
    let used = used_ids(&view);
    library
        .iter()
        .filter(|item| {
            our_upload(ctx, item).is_some_and(|tag| {
                leftovers.referenced.contains(&item.id)
                    || leftovers
                        .secrets
                        .contains(&format!("{}/{}", tag.namespace, tag.name))
            })
        })
        .filter(|item| !used.contains(item.id.as_str()))
        .map(delete_upload)
        .collect()
}

/// The start-up sweep's part: the deletes of every upload of this
/// cluster that no virtual service on the gateway uses (the library as
/// the sweep's cache warm-up just read it).
pub(in crate::lb) async fn plan_sweep_uploads(
    ctx: &Context,
    view: &GatewayView,
) -> Result<Vec<Op>, VcdError> {
    let library = ctx.catalog.certificates(&ctx.client, false).await?;
    let used = used_ids(view);
    Ok(library
        .iter()
        .filter(|item| our_upload(ctx, item).is_some() && !used.contains(item.id.as_str()))
        .map(delete_upload)
        .collect())
}

fn delete_upload(item: &CertificateItem) -> Op {
    Op::DeleteUpload {
        id: item.id.clone(),
        alias: item.alias.clone(),
    }
}
