//! `vcd.vdc` and the zones file's `ovdcName` on a DC-group cluster: a member
//! VDC by name or by URN works (`vcd-ccm check` passes every check); the
//! group's name or URN is refused with the member VDCs to write instead.

use vcdsim::Scenario;

use crate::support::check::Setup;

async fn dc_group_setup() -> Setup {
    Setup::start(Scenario::dc_group(), "  certAlias: my-cert\n").await
}

#[tokio::test]
async fn a_member_vdc_by_name_or_urn_passes_every_check() {
    let setup = dc_group_setup().await;
    setup.zones(Some(
        "zones:\n  - {name: zone-a, ovdcName: vdc1}\n  - {name: zone-b, ovdcName: vdc2}\n",
    ));
    let checked = setup.check(&[]).await;
    assert!(
        checked.status.success(),
        "{}\n{}",
        checked.stdout,
        checked.stderr
    );

    let vdc2 = setup
        .vcd
        .with_world(|w| w.vdcs.iter().find(|v| v.name == "vdc2").unwrap().id.clone());
    setup.edit_config(|text| text.replace("  vdc: vdc1\n", &format!("  vdc: {vdc2}\n")));
    let checked = setup.check(&[]).await;
    assert!(
        checked.status.success(),
        "{}\n{}",
        checked.stdout,
        checked.stderr
    );
}

#[tokio::test]
async fn a_group_in_the_zones_file_is_refused_with_what_to_write() {
    let setup = dc_group_setup().await;
    setup.zones(Some("zones:\n  - {name: zone-a, ovdcName: group1}\n"));
    setup.check(&[]).await.failed(
        "zones",
        "zone zone-a: 'group1' is a data-center group, not a VDC: write one of its member VDCs instead (vdc1, vdc2)",
        "Correct ovdcName of zone zone-a",
    );
}

#[tokio::test]
async fn the_groups_name_or_urn_is_refused_with_what_to_write() {
    let setup = dc_group_setup().await;
    let group = setup.vcd.with_world(|w| w.vdc_groups[0].id.clone());
    for value in ["group1".to_string(), group] {
        setup.edit_config(|text| {
            let (head, rest) = text.split_once("  vdc: ").unwrap();
            let (_, tail) = rest.split_once('\n').unwrap();
            format!("{head}  vdc: {value}\n{tail}")
        });
        setup.check(&[]).await.failed(
            "vdc",
            &format!(
                "'{value}' is a data-center group, not a VDC: write one of its member VDCs instead (vdc1, vdc2)"
            ),
            "Set vcd.vdc to a VDC of org",
        );
    }
}
