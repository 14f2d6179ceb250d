//! `vcd-ccm policy new` and `policy wit`: a policy project in Rust, Python
//! or JavaScript that builds and passes its suite as created, wherever it is
//! put (it needs nothing from this repository), and the contract's WIT files
//! on their own.
//!
//! The project's files are the templates in `host/templates/policy/`: real
//! files with `{{name}}` (the policy's name), `{{crate}}` (its name as a
//! Rust crate's file stem) and the language's own placeholders to fill in.
//! `common/` holds what every language shares (the suite, the README), each
//! language's folder its sources, build files and README sections. The WIT
//! files are the ones this binary serves, so a project is built against the
//! contract the CCM of the same version loads.

use std::io;
use std::path::{Path, PathBuf};

use crate::cli::Language;
use crate::policy::builtin::DEFAULT_POLICY_NAME;

/// The current contract (`wit/`), file by file.
pub const WIT_FILES: [(&str, &str); 2] = [
    ("types.wit", include_str!("../../../../wit/types.wit")),
    ("world.wit", include_str!("../../../../wit/world.wit")),
];

macro_rules! template {
    ($path:literal) => {
        include_str!(concat!("../../../templates/policy/", $path))
    };
}

/// What a language's project is made of.
struct Toolchain {
    /// `--lang`'s value, for the README.
    lang: &'static str,
    /// The project's files besides `wit/`, `tests/suite.yaml` and
    /// `README.md`, each a template.
    files: &'static [(&'static str, &'static str)],
    /// Where the build puts the component, relative to the project.
    component: &'static str,
    /// The one command that builds it.
    build: &'static str,
    /// The README's rows for `files` and its build section.
    readme_files: &'static str,
    readme_build: &'static str,
}

const RUST: Toolchain = Toolchain {
    lang: "rust",
    files: &[
        ("Cargo.toml", template!("rust/Cargo.toml.tmpl")),
        ("src/lib.rs", template!("rust/lib.rs.tmpl")),
        (".gitignore", template!("rust/gitignore.tmpl")),
    ],
    component: "target/wasm32-wasip2/release/{{crate}}.wasm",
    build: "cargo build --release --target wasm32-wasip2",
    readme_files: template!("rust/files.md.tmpl"),
    readme_build: template!("rust/build.md.tmpl"),
};

const PYTHON: Toolchain = Toolchain {
    lang: "python",
    files: &[
        ("app.py", template!("python/app.py.tmpl")),
        (
            "requirements.txt",
            template!("python/requirements.txt.tmpl"),
        ),
        ("Makefile", template!("python/Makefile.tmpl")),
        (".gitignore", template!("python/gitignore.tmpl")),
    ],
    component: "policy.wasm",
    build: "make",
    readme_files: template!("python/files.md.tmpl"),
    readme_build: template!("python/build.md.tmpl"),
};

const JAVASCRIPT: Toolchain = Toolchain {
    lang: "javascript",
    files: &[
        ("policy.js", template!("javascript/policy.js.tmpl")),
        ("package.json", template!("javascript/package.json.tmpl")),
        ("jsconfig.json", template!("javascript/jsconfig.json.tmpl")),
        ("Makefile", template!("javascript/Makefile.tmpl")),
        (".gitignore", template!("javascript/gitignore.tmpl")),
    ],
    component: "policy.wasm",
    build: "make",
    readme_files: template!("javascript/files.md.tmpl"),
    readme_build: template!("javascript/build.md.tmpl"),
};

fn toolchain(lang: Language) -> &'static Toolchain {
    match lang {
        Language::Rust => &RUST,
        Language::Python => &PYTHON,
        Language::Javascript => &JAVASCRIPT,
    }
}

/// Where a project of `lang` built with its one command puts the component,
/// relative to the project, and that command.
pub fn component_and_build(lang: Language, name: &str) -> (String, &'static str) {
    let toolchain = toolchain(lang);
    (render(toolchain.component, name), toolchain.build)
}

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

/// Creates the project `parent/name` in `lang` and returns its directory.
/// Refuses an existing directory rather than writing into it.
pub fn new_project(parent: &Path, name: &str, lang: Language) -> Result<PathBuf, ScaffoldError> {
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
    let toolchain = toolchain(lang);
    let fill = |template: &str| {
        let filled = template
            .replace("{{files}}", toolchain.readme_files)
            .replace("{{build-section}}", toolchain.readme_build)
            .replace("{{build}}", toolchain.build)
            .replace("{{lang}}", toolchain.lang)
            .replace("{{component}}", toolchain.component);
        render(&filled, name)
    };
    for (file, template) in toolchain.files {
        write(&dir.join(file), &fill(template))?;
    }
    write(
        &dir.join("tests/suite.yaml"),
        &fill(template!("common/suite.yaml.tmpl")),
    )?;
    write(
        &dir.join("README.md"),
        &fill(template!("common/README.md.tmpl")),
    )?;
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
        let dir = new_project(parent.path(), "edge-pools", Language::Rust).unwrap();
        let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(cargo.contains("name = \"edge-pools\""), "{cargo}");
        let suite = std::fs::read_to_string(dir.join("tests/suite.yaml")).unwrap();
        assert!(
            suite.contains("policy: ../target/wasm32-wasip2/release/edge_pools.wasm"),
            "{suite}"
        );
        let again = new_project(parent.path(), "edge-pools", Language::Rust).unwrap_err();
        assert!(matches!(again, ScaffoldError::Exists { .. }), "{again}");
    }

    #[test]
    fn every_placeholder_of_every_language_is_filled() {
        let parent = tempfile::tempdir().unwrap();
        for (lang, toolchain) in [
            (Language::Rust, &RUST),
            (Language::Python, &PYTHON),
            (Language::Javascript, &JAVASCRIPT),
        ] {
            let dir = new_project(&parent.path().join(toolchain.lang), "edge-pools", lang).unwrap();
            let files = toolchain.files.iter().map(|(file, _)| *file);
            for file in files.chain(["tests/suite.yaml", "README.md", "wit/types.wit"]) {
                let text = std::fs::read_to_string(dir.join(file)).unwrap();
                // `{{` alone is Rust's escaped brace; a placeholder is a name.
                let placeholder = text.split("{{").skip(1).find(|rest| {
                    rest.split_once("}}").is_some_and(|(name, _)| {
                        !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    })
                });
                assert!(
                    placeholder.is_none(),
                    "{}: {file}: {{{{{placeholder:?}",
                    toolchain.lang
                );
            }
            let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
            assert!(
                readme.contains(&format!("--lang {}", toolchain.lang)),
                "{readme}"
            );
        }
    }

    /// The template pins what `policies/Cargo.lock` resolves, so a new
    /// policy is built with the versions the CCM's own policies are tested with.
    #[test]
    fn the_pinned_versions_are_the_policy_workspaces() {
        let lock = include_str!("../../../../policies/Cargo.lock");
        let cargo = RUST.files[0].1;
        for package in ["wit-bindgen", "serde", "serde_json"] {
            let entry = format!("name = \"{package}\"\nversion = \"");
            let start = lock.find(&entry).expect("the lock lists the package") + entry.len();
            let version = &lock[start..start + lock[start..].find('"').unwrap()];
            let pin = format!("{package} = {{ version = \"={version}\"");
            assert!(cargo.contains(&pin), "the template should pin {pin}");
        }
    }
}
