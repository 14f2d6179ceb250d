//! Reading a Service's TLS Secrets, offering them to the policy, and
//! finding the uploads of the ones its decision uses (or naming the uploads
//! to make first), under an alias that names the cluster, the Secret and
//! its certificate:
//! `<cluster hash>-<namespace>-<secret>-<first 12 hex digits of the digest>`.
//! The same certificate is uploaded once, whatever the number of Services
//! that use it; a new certificate gets a new alias, so rotation never edits
//! an item a virtual service is serving with.

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::naming::short_hash;
use crate::lb::service::ServiceSpec;
use crate::lb::tls::tag::SecretTag;
use crate::lb::tls::{ALIAS_PREFIX, CheckedSecret, Pinned, TlsSecretError, Upload, secret_names};
use crate::policy::model::Decision;
use crate::vcd::resources::certificate::{CertificateItem, NewCertificate};

/// The longest alias VCD accepts.
const MAX_ALIAS: usize = 128;
/// Digest digits in an alias: enough to tell a Secret's certificates apart.
const DIGEST_DIGITS: usize = 12;

/// The alias of `secret`'s upload by the cluster `cluster_id`/`identity`:
/// unique per org (two clusters, even with one `clusterid`, differ in the
/// hash), at most [`MAX_ALIAS`] characters; Secret names are ASCII.
pub fn alias(cluster_id: &str, identity: &str, secret: &CheckedSecret) -> String {
    let cluster = short_hash(&format!("{cluster_id}/{identity}"));
    let digest = &secret.digest[..DIGEST_DIGITS];
    let room = MAX_ALIAS - cluster.len() - DIGEST_DIGITS - 2;
    let mut readable = format!("{}-{}", secret.namespace, secret.name);
    if readable.len() > room {
        let unique = short_hash(&format!("{}/{}", secret.namespace, secret.name));
        readable = format!("{}-{unique}", &readable[..room - unique.len() - 1]);
    }
    format!("{cluster}-{readable}-{digest}")
}

/// The certificates the policy is offered: the library's, and each Secret
/// as `secret/<name>` (its id is filled in once uploaded). A library item
/// with such an alias is hidden behind the Secret.
pub fn offered(library: &[CertificateItem], secrets: &[CheckedSecret]) -> Vec<CertificateItem> {
    let logical: Vec<CertificateItem> = secrets
        .iter()
        .map(|s| CertificateItem {
            id: String::new(),
            alias: format!("{ALIAS_PREFIX}{}", s.name),
            description: None,
        })
        .collect();
    let mut offered: Vec<CertificateItem> = library
        .iter()
        .filter(|c| !logical.iter().any(|l| l.alias == c.alias))
        .cloned()
        .collect();
    offered.extend(logical);
    offered
}

fn tls_error(service: &ServiceSpec, source: TlsSecretError) -> LbError {
    LbError::TlsSecret {
        service: service.key(),
        source,
    }
}

/// Reads and checks every Secret the Service names (one GET each);
/// nothing is written.
pub(in crate::lb) async fn read_tls_secrets(
    ctx: &Context,
    service: &ServiceSpec,
) -> Result<Vec<CheckedSecret>, LbError> {
    let names = secret_names(service).map_err(|e| tls_error(service, e))?;
    let namespace = &service.namespace;
    let mut checked = Vec::with_capacity(names.len());
    for name in names {
        let data = ctx
            .tls_secrets
            .get(namespace, &name)
            .await
            .map_err(|error| TlsSecretError::Unreadable {
                namespace: namespace.clone(),
                name: name.clone(),
                message: error.to_string(),
            })
            .and_then(|found| {
                found.ok_or_else(|| TlsSecretError::Missing {
                    namespace: namespace.clone(),
                    name: name.clone(),
                })
            })
            .and_then(|data| CheckedSecret::check(namespace, &name, data))
            .map_err(|e| tls_error(service, e))?;
        checked.push(data);
    }
    Ok(checked)
}

/// The certificate library as a decision needs it. Nothing is uploaded
/// here: uploads are planned writes like any other, made before the rest
/// (the virtual services name the id VCD gives them).
pub(in crate::lb) enum Uploads {
    /// Every Secret the decision uses is uploaded; the pins keep those
    /// uploads from being pruned while the pass runs.
    Ready(Vec<Pinned>),
    /// These are uploaded first, then the Service is decided again; the
    /// pins (by alias) hold them until then.
    First {
        uploads: Vec<Upload>,
        pins: Vec<Pinned>,
    },
}

/// Finds the upload of each Secret the decision uses (one lookup by alias
/// for a Secret the cached library lacks), gives its `secret/<name>` entry
/// in `offered` the upload's id and adds the upload itself, so references
/// name it by its own alias. An item with the alias that is not this
/// cluster's upload of the Secret is refused, naming it.
pub(in crate::lb) async fn uploads_used(
    ctx: &Context,
    service: &ServiceSpec,
    decision: &Decision,
    secrets: &[CheckedSecret],
    library: &[CertificateItem],
    offered: &mut Vec<CertificateItem>,
) -> Result<Uploads, LbError> {
    let mut pins = Vec::new();
    let mut uploads = Vec::new();
    for secret in secrets {
        let logical = format!("{ALIAS_PREFIX}{}", secret.name);
        let used = decision
            .ports
            .iter()
            .any(|p| p.certificate.as_deref() == Some(logical.as_str()));
        if !used {
            continue;
        }
        let alias = alias(&ctx.config.cluster_id, ctx.identity.as_str(), secret);
        let tag = secret_tag(ctx, secret);
        let Some(item) = existing_upload(ctx, service, secret, &alias, &tag, library).await? else {
            pins.push(Pinned::new(&ctx.upload_pins, &alias));
            uploads.push(Upload {
                secret: format!("{}/{}", secret.namespace, secret.name),
                item: NewCertificate {
                    alias,
                    description: tag.format(),
                    certificate: secret.certificate.clone(),
                    private_key: secret.key.clone(),
                },
            });
            continue;
        };
        pins.push(Pinned::new(&ctx.upload_pins, &item.id));
        if let Some(entry) = offered.iter_mut().find(|c| c.alias == logical) {
            entry.id = item.id.clone();
        }
        if !offered.iter().any(|c| c.alias == item.alias) {
            offered.push(item);
        }
    }
    Ok(match uploads.is_empty() {
        true => Uploads::Ready(pins),
        false => Uploads::First { uploads, pins },
    })
}

fn secret_tag(ctx: &Context, secret: &CheckedSecret) -> SecretTag {
    SecretTag {
        cluster_id: ctx.config.cluster_id.clone(),
        identity: ctx.identity.as_str().to_string(),
        namespace: secret.namespace.clone(),
        name: secret.name.clone(),
        digest: secret.digest.clone(),
    }
}

/// Whether an item is the upload `tag` describes.
pub(in crate::lb) fn is_upload_of(item: &CertificateItem, tag: &SecretTag) -> bool {
    item.description
        .as_deref()
        .and_then(SecretTag::parse)
        .as_ref()
        == Some(tag)
}

/// The library item named `alias`, if it is this cluster's upload of the
/// Secret; none if there is no such item; an error if another owns it.
async fn existing_upload(
    ctx: &Context,
    service: &ServiceSpec,
    secret: &CheckedSecret,
    alias: &str,
    tag: &SecretTag,
    library: &[CertificateItem],
) -> Result<Option<CertificateItem>, LbError> {
    let existing = match library.iter().find(|c| c.alias == alias) {
        Some(item) => Some(item.clone()),
        None => ctx
            .client
            .certificates()
            .find(alias)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                format!("looking up certificate {alias}"),
            ))?,
    };
    match existing {
        Some(item) if !is_upload_of(&item, tag) => Err(LbError::InvalidService {
            service: service.key(),
            problem: format!(
                "the org's certificate library holds an item with alias {alias} that is not this cluster's upload of Secret {}/{}; rename or delete that item",
                secret.namespace, secret.name
            ),
        }),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcd::Secret;

    fn secret(namespace: &str, name: &str) -> CheckedSecret {
        CheckedSecret {
            namespace: namespace.into(),
            name: name.into(),
            certificate: String::new(),
            key: Secret::default(),
            digest: "0123456789abcdef".repeat(4),
        }
    }

    #[test]
    fn aliases_name_the_secret_and_digest_and_stay_within_vcds_limit() {
        let short = alias("c1", "kube", &secret("shop", "web-tls"));
        assert_eq!(
            short,
            format!("{}-shop-web-tls-0123456789ab", short_hash("c1/kube"))
        );
        assert_ne!(short, alias("c1", "other-kube", &secret("shop", "web-tls")));
        let long = secret(&"n".repeat(63), &"s".repeat(253));
        let cut = alias("c1", "kube", &long);
        assert_eq!(cut.len(), MAX_ALIAS);
        assert!(cut.ends_with("-0123456789ab"));
        let other = alias(
            "c1",
            "kube",
            &secret(&"n".repeat(63), &format!("{}t", "s".repeat(252))),
        );
        assert_ne!(cut, other, "a cut alias keeps a hash of the full name");
    }

    #[test]
    fn secrets_are_offered_as_logical_aliases_over_library_items() {
        let item = |alias: &str| CertificateItem {
            id: format!("id-{alias}"),
            alias: alias.into(),
            description: None,
        };
        let library = [item("web-cert"), item("secret/web-tls")];
        let offered = offered(&library, &[secret("shop", "web-tls")]);
        let aliases: Vec<(&str, &str)> = offered
            .iter()
            .map(|c| (c.alias.as_str(), c.id.as_str()))
            .collect();
        assert_eq!(
            aliases,
            [("web-cert", "id-web-cert"), ("secret/web-tls", "")]
        );
    }
}
