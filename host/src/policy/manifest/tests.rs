use super::*;

fn parse(text: &str) -> Result<Manifest, String> {
    Manifest::parse(Path::new("/etc/vcd-ccm/policies/policies.yaml"), text)
        .map_err(|e| e.to_string())
}

const PIN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#[test]
fn a_full_entry_parses_with_defaults_filled_in() {
    let text = format!(
        "policies:\n- name: gold\n  sha256: {PIN}\n  config: {{a: 1}}\n  timeoutMs: 50\n  selector: {{allowAnnotation: true}}\n"
    );
    let manifest = parse(&text).unwrap();
    let entry = &manifest.policies[0];
    assert_eq!(
        entry.source(),
        Ok(ComponentSource::File {
            name: "gold.wasm".into(),
            sha256: PIN.into()
        })
    );
    assert_eq!(entry.config_json(), r#"{"a":1}"#);
    assert_eq!(
        entry.limits(),
        Limits {
            timeout: Duration::from_millis(50),
            memory_bytes: 32 << 20
        }
    );
}

#[test]
fn errors_name_the_file_field_and_problem() {
    let unknown = parse(&format!(
        "policies:\n- name: gold\n  sha256: {PIN}\n  timeout: 5\n"
    ))
    .unwrap_err();
    assert!(
        unknown.starts_with("/etc/vcd-ccm/policies/policies.yaml: policies[0]"),
        "{unknown}"
    );
    assert!(
        unknown.contains("unknown field `timeout`") && unknown.contains("line 4"),
        "{unknown}"
    );

    let pin =
        parse("policies:\n- name: gold\n  sha256: abc\n  selector: {allowAnnotation: true}\n")
            .unwrap_err();
    assert_eq!(
        pin,
        "/etc/vcd-ccm/policies/policies.yaml: policies[0].sha256: \"abc\" is not 64 hexadecimal digits"
    );
    let selects_nothing =
        parse(&format!("policies:\n- name: gold\n  sha256: {PIN}\n")).unwrap_err();
    assert!(
        selects_nothing.contains("policies[0].selector: selects no Service"),
        "{selects_nothing}"
    );
}

#[test]
fn names_are_checked() {
    let entry = |name: &str| {
        format!("- name: {name}\n  sha256: {PIN}\n  selector: {{allowAnnotation: true}}\n")
    };
    assert!(
        parse(&format!("policies:\n{}", entry("default")))
            .unwrap_err()
            .contains("built-in")
    );
    assert!(
        parse(&format!("policies:\n{}", entry("Gold")))
            .unwrap_err()
            .contains("DNS label")
    );
    let twice = parse(&format!("policies:\n{}{}", entry("gold"), entry("gold"))).unwrap_err();
    assert!(
        twice.contains("policies[1].name: \"gold\" is listed twice"),
        "{twice}"
    );
}

#[test]
fn shadows_name_an_active_policy_and_select_nothing() {
    let active = format!("- name: gold\n  sha256: {PIN}\n  selector: {{allowAnnotation: true}}\n");
    let shadow =
        |extra: &str| format!("- name: gold-next\n  sha256: {PIN}\n  mode: shadow\n{extra}");
    let ok = parse(&format!(
        "policies:\n{active}{}",
        shadow("  shadows: gold\n")
    ))
    .unwrap();
    assert_eq!(ok.policies[1].shadowed(), Some("gold"));
    assert_eq!(ok.policies[0].shadowed(), None);
    assert!(parse(&format!("policies:\n{}", shadow("  shadows: default\n"))).is_ok());
    let cases = [
        (shadow(""), "policies[0].shadows: a shadow policy must name"),
        (
            shadow("  shadows: silver\n"),
            "\"silver\" is not an active policy",
        ),
        (
            shadow("  shadows: default\n  selector: {allowAnnotation: true}\n"),
            "remove its selector",
        ),
        (
            active.replace("selector", "shadows: default\n  selector"),
            "mode is active",
        ),
    ];
    for (entries, expected) in cases {
        let error = parse(&format!("policies:\n{entries}")).unwrap_err();
        assert!(error.contains(expected), "{error}");
    }
}

#[test]
fn an_image_entry_is_pinned_by_its_reference() {
    let image = format!("oci://registry.example.com/policies/gold@sha256:{PIN}");
    let text = format!(
        "policies:\n- name: gold\n  image: {image}\n  pullSecret: pull\n  selector: {{allowAnnotation: true}}\n"
    );
    let manifest = parse(&text).unwrap();
    let Ok(ComponentSource::Image {
        reference,
        pull_secret,
    }) = manifest.policies[0].source()
    else {
        panic!("an image source");
    };
    assert_eq!(
        (reference.to_string(), pull_secret.as_deref()),
        (image, Some("pull"))
    );
    let tag_only = parse(&text.replace(&format!("@sha256:{PIN}"), ":v1")).unwrap_err();
    assert!(
        tag_only.starts_with(
            "/etc/vcd-ccm/policies/policies.yaml: policies[0].image: \"oci://registry.example.com/policies/gold:v1\" has no digest"
        ),
        "{tag_only}"
    );
    let both = parse(&text.replace("  pullSecret", &format!("  sha256: {PIN}\n  pullSecret")))
        .unwrap_err();
    assert!(
        both.contains("policies[0].sha256: is set with image"),
        "{both}"
    );
}

#[test]
fn limits_are_bounded() {
    let text = format!(
        "policies:\n- name: gold\n  sha256: {PIN}\n  memoryLimitMiB: 4096\n  selector: {{allowAnnotation: true}}\n"
    );
    assert!(
        parse(&text)
            .unwrap_err()
            .contains("policies[0].memoryLimitMiB: 4096 is outside 1–1024")
    );
}

#[test]
fn the_default_entry_goes_over_the_cloud_configs_settings() {
    let manifest = parse(
        "default:\n  config: {algorithm: least-connections, certAlias: other}\n  timeoutMs: 20\n",
    )
    .unwrap();
    let default = manifest.default.expect("a default entry");
    let merged: serde_json::Value =
        serde_json::from_str(&default.config_over(r#"{"certAlias":"c1-cert","x":1}"#)).unwrap();
    assert_eq!(
        merged,
        serde_json::json!({"algorithm": "least-connections", "certAlias": "other", "x": 1})
    );
    assert_eq!(default.limits().timeout, Duration::from_millis(20));
    let not_an_object = parse("default:\n  config: [a]\n").unwrap_err();
    assert!(not_an_object.contains("default.config"), "{not_an_object}");
    let unknown = parse("default:\n  settings: {}\n").unwrap_err();
    assert!(unknown.contains("unknown field `settings`"), "{unknown}");
    let bounded = parse("default:\n  memoryLimitMiB: 0\n").unwrap_err();
    assert!(bounded.contains("default.memoryLimitMiB"), "{bounded}");
}
