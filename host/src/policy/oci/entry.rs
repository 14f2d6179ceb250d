//! Where a `policies.yaml` entry's component comes from: a file in the
//! policy directory pinned by `sha256`, or an image pinned by the digest in
//! its `image` reference, read with the credentials of `pullSecret`.

use super::reference::Reference;

/// The component of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComponentSource {
    /// A file in the policy directory.
    File {
        /// The file's name.
        name: String,
        /// The sha256 its bytes must have.
        sha256: String,
    },
    /// An image in a registry.
    Image {
        /// The reference, with its digest.
        reference: Reference,
        /// The `kubernetes.io/dockerconfigjson` Secret holding the
        /// registry's credentials, in the CCM's namespace.
        pull_secret: Option<String>,
    },
}

/// The entry's fields that say where its component is.
pub struct SourceFields<'a> {
    /// `name`, for the default file name.
    pub name: &'a str,
    /// `file`.
    pub file: Option<&'a str>,
    /// `sha256`.
    pub sha256: Option<&'a str>,
    /// `image`.
    pub image: Option<&'a str>,
    /// `pullSecret`.
    pub pull_secret: Option<&'a str>,
}

impl SourceFields<'_> {
    /// The source the fields name; the error is `(field, problem)`.
    pub fn source(&self) -> Result<ComponentSource, (&'static str, String)> {
        let Some(image) = self.image else {
            return self.file_source();
        };
        if let Some(file) = self.file {
            return Err((
                "image",
                format!(
                    "is set with file {file:?}: a policy comes from a file in the policy directory or from an image, not both; remove one"
                ),
            ));
        }
        if self.sha256.is_some() {
            return Err((
                "sha256",
                "is set with image: an image is pinned by the digest in its reference (@sha256:…), which covers the component's bytes; remove sha256".into(),
            ));
        }
        let reference = Reference::pinned(image).map_err(|e| ("image", e.to_string()))?;
        if let Some(secret) = self.pull_secret
            && !crate::names::is_dns_subdomain(secret)
        {
            return Err((
                "pullSecret",
                format!(
                    "{secret:?} is not a Secret name (a lowercase DNS subdomain: a-z, 0-9, '-', '.', at most 253)"
                ),
            ));
        }
        Ok(ComponentSource::Image {
            reference,
            pull_secret: self.pull_secret.map(str::to_string),
        })
    }

    fn file_source(&self) -> Result<ComponentSource, (&'static str, String)> {
        if let Some(secret) = self.pull_secret {
            return Err((
                "pullSecret",
                format!(
                    "{secret:?} is set, but the policy comes from a file: set image to pull it from a registry, or remove pullSecret"
                ),
            ));
        }
        let name = self
            .file
            .map_or_else(|| format!("{}.wasm", self.name), str::to_string);
        if name.contains('/') || name.starts_with('.') || !name.ends_with(".wasm") {
            return Err((
                "file",
                format!("{name:?} must be a .wasm file name in the policy directory"),
            ));
        }
        let Some(sha256) = self.sha256 else {
            return Err((
                "sha256",
                format!(
                    "is required: the sha256 of {name} (vcd-ccm policy inspect prints it); or set image to pull the policy from a registry"
                ),
            ));
        };
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(("sha256", format!("{sha256:?} is not 64 hexadecimal digits")));
        }
        Ok(ComponentSource::File {
            name,
            sha256: sha256.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn fields<'a>(
        file: Option<&'a str>,
        sha256: Option<&'a str>,
        image: Option<&'a str>,
        pull_secret: Option<&'a str>,
    ) -> SourceFields<'a> {
        SourceFields {
            name: "gold",
            file,
            sha256,
            image,
            pull_secret,
        }
    }

    #[test]
    fn a_file_or_an_image_is_the_source() {
        assert_eq!(
            fields(None, Some(HEX), None, None).source(),
            Ok(ComponentSource::File {
                name: "gold.wasm".into(),
                sha256: HEX.into()
            })
        );
        let image = format!("oci://registry.example.com/policies/gold@sha256:{HEX}");
        let Ok(ComponentSource::Image {
            reference,
            pull_secret,
        }) = fields(None, None, Some(&image), Some("pull")).source()
        else {
            panic!("an image source");
        };
        assert_eq!(reference.to_string(), image);
        assert_eq!(pull_secret.as_deref(), Some("pull"));
    }

    #[test]
    fn conflicting_or_missing_fields_are_named() {
        let image = format!("oci://r/p@sha256:{HEX}");
        let cases = [
            (
                fields(Some("g.wasm"), None, Some(&image), None),
                "image",
                "not both",
            ),
            (
                fields(None, Some(HEX), Some(&image), None),
                "sha256",
                "remove sha256",
            ),
            (
                fields(None, None, Some("oci://r/p:v1"), None),
                "image",
                "has no digest",
            ),
            (
                fields(None, None, Some(&image), Some("Pull")),
                "pullSecret",
                "not a Secret name",
            ),
            (
                fields(None, Some(HEX), None, Some("pull")),
                "pullSecret",
                "set image",
            ),
            (
                fields(None, None, None, None),
                "sha256",
                "is required: the sha256 of gold.wasm",
            ),
            (
                fields(Some("../g.wasm"), Some(HEX), None, None),
                "file",
                ".wasm file name",
            ),
        ];
        for (given, field, expected) in cases {
            let (actual, problem) = given.source().unwrap_err();
            assert_eq!(actual, field, "{problem}");
            assert!(problem.contains(expected), "{problem}");
        }
    }
}
