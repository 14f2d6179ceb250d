//! The zones file (upstream's zones ConfigMap format): what parses and the
//! precise errors for what does not.

use vcd_ccm::instances::{ZoneMap, ZonesError};

fn parse(text: &str) -> Result<ZoneMap, ZonesError> {
    ZoneMap::parse(text, "vcloud-cse-zones.yaml")
}

#[test]
fn the_upstream_format_maps_vdcs_to_zones() {
    let map = parse(
        "zoneType: dcgroup\nzones:\n  - name: zone-a\n    ovdcName: vdc-a\n  - name: zone-b\n    ovdcName: vdc-b\n  - name: zone-b\n    ovdcName: vdc-b2\n",
    )
    .unwrap();
    assert_eq!(map.zone_of("vdc-a"), Some("zone-a"));
    assert_eq!(map.zone_of("vdc-b2"), Some("zone-b"));
    assert_eq!(map.zone_of("vdc-c"), None);
    // The empty-zones ConfigMap variant, and no zoneType.
    assert!(parse("zoneType: dcgroup\nzones: []\n").unwrap().is_empty());
    assert!(parse("zones: [{name: z, ovdcName: v}]").is_ok());
}

#[test]
fn unknown_keys_and_wrong_shapes_name_the_place() {
    let typo = parse("zoneType: dcgroup\nzones:\n  - name: zone-a\n    vdcName: vdc-a\n")
        .unwrap_err()
        .to_string();
    assert!(
        typo.starts_with("the zones file vcloud-cse-zones.yaml is not valid"),
        "{typo}"
    );
    assert!(
        typo.contains("unknown field `vdcName`") && typo.contains("line 4"),
        "{typo}"
    );

    let top = parse("zoneType: dcgroup\nzone: []\n")
        .unwrap_err()
        .to_string();
    assert!(top.contains("unknown field `zone`"), "{top}");
    let missing = parse("zoneType: dcgroup\n").unwrap_err().to_string();
    assert!(missing.contains("missing field `zones`"), "{missing}");
    let shape = parse("zones: {name: a}\n").unwrap_err().to_string();
    assert!(shape.contains("invalid type"), "{shape}");
    assert!(parse("").is_err());
}

#[test]
fn empty_fields_and_a_vdc_in_two_zones_are_refused() {
    let empty =
        parse("zones:\n  - {name: a, ovdcName: v1}\n  - {name: ' ', ovdcName: v2}\n").unwrap_err();
    assert_eq!(
        empty.to_string(),
        "the zones file vcloud-cse-zones.yaml: zones[1] has an empty name"
    );
    let empty = parse("zones:\n  - {name: a, ovdcName: ''}\n").unwrap_err();
    assert!(
        empty
            .to_string()
            .ends_with("zones[0] has an empty ovdcName"),
        "{empty}"
    );

    let twice =
        parse("zones:\n  - {name: a, ovdcName: v1}\n  - {name: b, ovdcName: v1}\n").unwrap_err();
    assert_eq!(
        twice.to_string(),
        "the zones file vcloud-cse-zones.yaml: VDC 'v1' is listed twice, in zone 'a' (zones[0]) and zone 'b' (zones[1]); a VDC belongs to one zone"
    );
}

#[test]
fn files_are_read_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vcloud-cse-zones.yaml");
    let missing = ZoneMap::load(&path).unwrap_err();
    assert!(matches!(missing, ZonesError::Read { .. }));
    assert!(
        missing.to_string().contains("vcloud-cse-zones.yaml"),
        "{missing}"
    );
    std::fs::write(
        &path,
        "zoneType: dcgroup\nzones:\n  - {name: z1, ovdcName: vdc1}\n",
    )
    .unwrap();
    assert_eq!(ZoneMap::load(&path).unwrap().zone_of("vdc1"), Some("z1"));
}
