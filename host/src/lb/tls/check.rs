//! Checks a Secret before anything is written: a `kubernetes.io/tls`
//! Secret whose `tls.crt` is a PEM certificate chain and whose `tls.key` is
//! the PEM private key of its first certificate (what VCD would otherwise
//! refuse at upload, or worse, accept and fail to serve). Problems are
//! described in fixed words: parser messages may quote the data.

use sha2::{Digest, Sha256};
use tokio_rustls::rustls::crypto::ring::default_provider;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self};

use super::{SecretData, TLS_SECRET_TYPE, TlsSecretError};
use crate::vcd::Secret;

/// A Secret fit for upload.
#[derive(Debug, Clone)]
pub struct CheckedSecret {
    /// The Service's (and the Secret's) namespace.
    pub namespace: String,
    /// The Secret's name.
    pub name: String,
    /// `tls.crt` as the Secret holds it.
    pub certificate: String,
    /// `tls.key`; printed as `<redacted>`.
    pub key: Secret,
    /// The SHA-256 of `tls.crt`, hex: a new certificate is a new upload.
    pub digest: String,
}

impl CheckedSecret {
    /// Checks the Secret `namespace/name` holding `data`.
    pub fn check(namespace: &str, name: &str, data: SecretData) -> Result<Self, TlsSecretError> {
        let unusable = |field, problem| TlsSecretError::Unusable {
            namespace: namespace.to_string(),
            name: name.to_string(),
            field,
            problem,
        };
        if data.secret_type != TLS_SECRET_TYPE {
            return Err(TlsSecretError::WrongType {
                namespace: namespace.to_string(),
                name: name.to_string(),
                found: data.secret_type,
            });
        }
        let certificate = data
            .certificate
            .filter(|c| !c.is_empty())
            .ok_or_else(|| unusable("tls.crt", "is missing or empty"))?;
        let certificate =
            String::from_utf8(certificate).map_err(|_| unusable("tls.crt", "is not PEM text"))?;
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(certificate.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(|_| unusable("tls.crt", "is not a PEM certificate chain"))?;
        if chain.is_empty() {
            return Err(unusable("tls.crt", "holds no PEM certificate"));
        }
        let key = data
            .key
            .filter(|k| !k.expose().is_empty())
            .ok_or_else(|| unusable("tls.key", "is missing or empty"))?;
        let key_text = std::str::from_utf8(key.expose())
            .map_err(|_| unusable("tls.key", "is not PEM text"))?;
        let parsed = PrivateKeyDer::from_pem_slice(key_text.as_bytes()).map_err(|_| {
            unusable(
                "tls.key",
                "is not an unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1)",
            )
        })?;
        CertifiedKey::from_der(chain, parsed, &default_provider()).map_err(|error| match error {
            rustls::Error::InconsistentKeys(_) => {
                unusable("tls.key", "does not belong to the first certificate of tls.crt")
            }
            rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => {
                unusable("tls.crt", "starts with a certificate that cannot be parsed")
            }
            _ => unusable(
                "tls.key",
                "is a key of a kind that cannot be used (RSA, ECDSA P-256/P-384 or Ed25519 work)",
            ),
        })?;
        Ok(Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            digest: hex::encode(Sha256::digest(certificate.as_bytes())),
            key: Secret::new(key_text),
            certificate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::tls::KeyBytes;

    fn tls(certificate: &str, key: &str) -> SecretData {
        SecretData {
            secret_type: TLS_SECRET_TYPE.into(),
            certificate: Some(certificate.as_bytes().to_vec()),
            key: Some(KeyBytes::new(key.as_bytes().to_vec())),
        }
    }

    fn problem(data: SecretData) -> String {
        CheckedSecret::check("shop", "web-tls", data)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_certificate_and_its_key_pass_and_digest_the_certificate() {
        let pair = rcgen::generate_simple_self_signed(vec!["web.example".into()]).unwrap();
        let (cert, key) = (pair.cert.pem(), pair.signing_key.serialize_pem());
        let checked = CheckedSecret::check("shop", "web-tls", tls(&cert, &key)).unwrap();
        assert_eq!(checked.digest, hex::encode(Sha256::digest(cert.as_bytes())));
        assert!(!format!("{checked:?}").contains(&key));
    }

    #[test]
    fn each_problem_is_named_without_quoting_the_key() {
        let pair = rcgen::generate_simple_self_signed(vec!["web.example".into()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["other.example".into()]).unwrap();
        let (cert, key) = (pair.cert.pem(), pair.signing_key.serialize_pem());
        let opaque = SecretData {
            secret_type: "Opaque".into(),
            ..tls(&cert, &key)
        };
        assert!(problem(opaque).contains("is of type \"Opaque\", not kubernetes.io/tls"));
        assert!(problem(tls("", &key)).contains("tls.crt is missing or empty"));
        assert!(problem(tls("not pem", &key)).contains("tls.crt holds no PEM certificate"));
        let broken_key = key.replace("\n", "\n!");
        let refused = problem(tls(&cert, &broken_key));
        assert!(
            refused.contains("tls.key is not an unencrypted PEM private key"),
            "{refused}"
        );
        let mismatch = problem(tls(&cert, &other.signing_key.serialize_pem()));
        assert!(
            mismatch.contains("does not belong to the first certificate"),
            "{mismatch}"
        );
        for text in [refused, mismatch] {
            assert!(!text.contains("PRIVATE KEY") && !text.contains(&key[40..80]));
        }
    }
}
