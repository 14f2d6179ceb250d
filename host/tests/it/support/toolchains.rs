//! Python and JavaScript policy components, built as an author builds them:
//! `vcd-ccm policy new NAME --lang …` then the project's one command
//! (`make`), which installs the pinned componentize-py or componentize-js
//! into the project. The project is kept under `target/policy-toolchains/`,
//! in a folder named after the digest of the templates and fixtures, so a
//! later run (or a change elsewhere) reuses it and a template change builds
//! afresh. The hostile fixtures (`policies/testdata/hostile-*`) are built
//! with the same project's toolchain.
//!
//! Needs python3 (with venv), Node.js with npm, make, and the package
//! registries; CI has them, and a test that cannot build fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use vcd_ccm::policy::loader::sha256_hex;

/// The languages whose toolchains are not cargo.
#[derive(Clone, Copy, Debug)]
pub enum Lang {
    Python,
    Javascript,
}

impl Lang {
    fn flag(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Javascript => "javascript",
        }
    }

    /// The hostile fixture's source and the file name it takes in the project.
    fn hostile_source(self) -> (&'static str, &'static str) {
        match self {
            Lang::Python => ("hostile-python/app.py", "hostile.py"),
            Lang::Javascript => ("hostile-javascript/policy.js", "hostile.js"),
        }
    }
}

/// A built template project: its directory, and how long `policy new` to a
/// built component took (zero when an earlier run's build was reused).
pub struct Project {
    pub dir: PathBuf,
    pub built_in: Duration,
}

impl Project {
    /// The template's component (`policy.wasm`).
    pub fn component(&self) -> PathBuf {
        self.dir.join("policy.wasm")
    }
}

/// The template project of `lang`, created and built once per test process.
pub fn project(lang: Lang) -> &'static Project {
    static PYTHON: OnceLock<Project> = OnceLock::new();
    static JAVASCRIPT: OnceLock<Project> = OnceLock::new();
    let cell = match lang {
        Lang::Python => &PYTHON,
        Lang::Javascript => &JAVASCRIPT,
    };
    cell.get_or_init(|| build_project(lang))
}

/// The hostile fixture of `lang`, built with the template project's toolchain.
pub fn hostile(lang: Lang) -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    static JAVASCRIPT: OnceLock<PathBuf> = OnceLock::new();
    let cell = match lang {
        Lang::Python => &PYTHON,
        Lang::Javascript => &JAVASCRIPT,
    };
    cell.get_or_init(|| build_hostile(lang)).clone()
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A digest of everything a project's build depends on in this checkout.
fn inputs_digest(lang: Lang) -> String {
    let mut inputs = Vec::new();
    for dir in [
        format!("host/templates/policy/{}", lang.flag()),
        "host/templates/policy/common".into(),
        "wit".into(),
    ] {
        let mut files: Vec<_> = std::fs::read_dir(repo().join(&dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file())
            .collect();
        files.sort();
        for file in files {
            inputs.extend(std::fs::read(&file).unwrap());
        }
    }
    inputs.extend(
        std::fs::read(
            repo()
                .join("policies/testdata")
                .join(lang.hostile_source().0),
        )
        .unwrap(),
    );
    sha256_hex(&inputs)[..16].to_string()
}

fn build_project(lang: Lang) -> Project {
    let parent = repo().join("target/policy-toolchains").join(format!(
        "{}-{}",
        lang.flag(),
        inputs_digest(lang)
    ));
    let dir = parent.join("edge-pools");
    if dir.join("policy.wasm").is_file() {
        return Project {
            dir,
            built_in: Duration::ZERO,
        };
    }
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    let started = Instant::now();
    run(Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(["policy", "new", "edge-pools", "--lang", lang.flag()])
        .current_dir(&parent));
    run(Command::new("make").current_dir(&dir));
    Project {
        dir,
        built_in: started.elapsed(),
    }
}

fn build_hostile(lang: Lang) -> PathBuf {
    let project = project(lang);
    let (source, file) = lang.hostile_source();
    std::fs::copy(
        repo().join("policies/testdata").join(source),
        project.dir.join(file),
    )
    .unwrap();
    let out = project.dir.join("hostile.wasm");
    if out.is_file() {
        return out;
    }
    let mut command = match lang {
        Lang::Python => {
            let mut command = Command::new(project.dir.join(".venv/bin/componentize-py"));
            command.args(["-d", "wit", "-w", "lb-policy", "componentize", "hostile"]);
            command
        }
        Lang::Javascript => {
            let mut command = Command::new("npx");
            command.args(["--no-install", "componentize-js", file]);
            command.args(["--wit", "wit", "--world-name", "lb-policy"]);
            command
        }
    };
    run(command
        .args(["-o", "hostile.wasm"])
        .current_dir(&project.dir));
    out
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
