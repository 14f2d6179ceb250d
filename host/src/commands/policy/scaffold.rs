//! `vcd-ccm policy new` and `policy wit`: a policy crate that builds and
//! passes its suite as created, wherever it is put (it needs nothing from
//! this repository), and the contract's WIT files on their own.
//!
//! The crate's files are the templates in `host/templates/policy/`, real
//! files with `{{name}}` (the policy's name) and `{{crate}}` (its name as
//! the built component's file stem) to fill in; the WIT files are the ones
//! this binary serves, so the crate is built against the contract the CCM
//! of the same version loads.

use std::io;
use std::path::{Path, PathBuf};

use crate::policy::builtin::DEFAULT_POLICY_NAME;

/// The current contract (`vcd:lb-policy@0.2.0`), file by file.
pub const WIT_FILES: [(&str, &str); 2] = [
    ("types.wit", include_str!("../../../../wit/types.wit")),
    ("world.wit", include_str!("../../../../wit/world.wit")),
];

/// The crate's files besides `wit/`, each a template.
const TEMPLATES: [(&str, &str); 5] = [
    (
        "Cargo.toml",
        include_str!("../../../templates/policy/Cargo.toml.tmpl"),
    ),
    (
        "src/lib.rs",
        include_str!("../../../templates/policy/lib.rs.tmpl"),
    ),
    (
        "tests/suite.yaml",
        include_str!("../../../templates/policy/suite.yaml.tmpl"),
    ),
    (
        "README.md",
        include_str!("../../../templates/policy/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../../../templates/policy/gitignore.tmpl"),
    ),
];

/// Why a policy crate or the WIT files could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name cannot name a policy or a crate.
    #[error("policy name {name:?} {problem}")]
    Name {
        /// The name given.
        name: String,
        /// What is wrong with it and what would work.
        problem: &'static str,
    },
    /// The crate's directory is there already; nothing is overwritten.
    #[error("{} already exists: choose another name or --dir, or remove it", path.display())]
    Exists {
        /// The directory.
        path: PathBuf,
    },
    /// A directory or file could not be created.
    #[error("cannot write {}: {error}", path.display())]
    Write {
        /// The directory or file.
        path: PathBuf,
        /// Why writing failed.
        #[source]
        error: io::Error,
    },
}

/// Checks that `name` can be a policy's name in `policies.yaml` (a
/// lowercase DNS label other than `default`) and a crate's name.
pub fn check_name(name: &str) -> Result<(), ScaffoldError> {
    let problem = if name.is_empty() || name.len() > 63 {
        Some("must be 1 to 63 characters long")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Some(
            "may hold only lowercase letters, digits and '-' (a DNS label, as policies.yaml names policies)",
        )
    } else if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        Some("must begin with a letter (it is the crate's name too)")
    } else if name.ends_with('-') {
        Some("must end with a letter or digit")
    } else if name == DEFAULT_POLICY_NAME {
        Some("is the built-in policy's name; choose another")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(ScaffoldError::Name {
            name: name.into(),
            problem,
        }),
        None => Ok(()),
    }
}

/// Creates the crate `parent/name` and returns its directory. Refuses an
/// existing directory rather than writing into it.
pub fn new_crate(parent: &Path, name: &str) -> Result<PathBuf, ScaffoldError> {
    check_name(name)?;
    let dir = parent.join(name);
    if dir.exists() {
        return Err(ScaffoldError::Exists { path: dir });
    }
    std::fs::create_dir_all(parent).map_err(write_error(parent))?;
    std::fs::create_dir(&dir).map_err(|error| match error.kind() {
        io::ErrorKind::AlreadyExists => ScaffoldError::Exists { path: dir.clone() },
        _ => ScaffoldError::Write {
            path: dir.clone(),
            error,
        },
    })?;
    for (file, template) in TEMPLATES {
        write(&dir.join(file), &render(template, name))?;
    }
    write_wit(&dir.join("wit"))?;
    Ok(dir)
}

/// Writes the contract's WIT files into `out`, replacing earlier copies.
pub fn write_wit(out: &Path) -> Result<(), ScaffoldError> {
    for (file, text) in WIT_FILES {
        write(&out.join(file), text)?;
    }
    Ok(())
}

/// `template` with the policy's name filled in.
fn render(template: &str, name: &str) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{crate}}", &name.replace('-', "_"))
}

fn write(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    }
    std::fs::write(path, text).map_err(write_error(path))
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> ScaffoldError + '_ {
    move |error| ScaffoldError::Write {
        path: path.to_path_buf(),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_suit_policies_yaml_and_cargo() {
        for good in ["edge-pools", "a", "tenant-2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for (bad, problem) in [
            ("default", "built-in"),
            ("Edge", "lowercase"),
            ("edge_pools", "lowercase letters, digits and '-'"),
            ("2fast", "begin with a letter"),
            ("-edge", "begin with a letter"),
            ("edge-", "end with a letter or digit"),
            ("", "1 to 63"),
        ] {
            let error = check_name(bad).unwrap_err().to_string();
            assert!(error.contains(problem), "{bad}: {error}");
        }
    }

    #[test]
    fn the_crate_is_written_with_its_name_and_refused_twice() {
        let parent = tempfile::tempdir().unwrap();
        let dir = new_crate(parent.path(), "edge-pools").unwrap();
        let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(cargo.contains("name = \"edge-pools\""), "{cargo}");
        let suite = std::fs::read_to_string(dir.join("tests/suite.yaml")).unwrap();
        assert!(
            suite.contains("policy: ../target/wasm32-wasip2/release/edge_pools.wasm"),
            "{suite}"
        );
        for file in ["src/lib.rs", "README.md", ".gitignore", "wit/types.wit"] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            assert!(
                !text.contains("{{name}}") && !text.contains("{{crate}}"),
                "{file}"
            );
        }
        let again = new_crate(parent.path(), "edge-pools").unwrap_err();
        assert!(matches!(again, ScaffoldError::Exists { .. }), "{again}");
    }

    /// The template pins what `policies/Cargo.lock` resolves, so a new
    /// policy is built with the versions the CCM's own policies are tested with.
    #[test]
    fn the_pinned_versions_are_the_policy_workspaces() {
        let lock = include_str!("../../../../policies/Cargo.lock");
        let cargo = TEMPLATES[0].1;
        for package in ["wit-bindgen", "serde", "serde_json"] {
            let entry = format!("name = \"{package}\"\nversion = \"");
            let start = lock.find(&entry).expect("the lock lists the package") + entry.len();
            let version = &lock[start..start + lock[start..].find('"').unwrap()];
            let pin = format!("{package} = {{ version = \"={version}\"");
            assert!(cargo.contains(&pin), "the template should pin {pin}");
        }
    }
}
