//! The `node.kubernetes.io/instance-type` label from the VM: its sizing
//! policy's name when it has one, else `vcd-vm.cpu-<N>.mem-<M>GiB` (or
//! `…MiB` when the memory is not a whole number of GiB).

use crate::vcd::resources::vm::Vm;

/// The longest value a Kubernetes label may have.
const LABEL_VALUE_MAX: usize = 63;

/// `None` when the VM has neither a sizing policy nor CPU and memory figures.
pub fn instance_type(vm: &Vm) -> Option<String> {
    vm.sizing_policy
        .as_deref()
        .and_then(label_value)
        .or_else(|| sized_by_hardware(vm))
}

fn sized_by_hardware(vm: &Vm) -> Option<String> {
    let (cpus, memory_mb) = (vm.cpus?, vm.memory_mb?);
    let memory = if memory_mb % 1024 == 0 {
        format!("{}GiB", memory_mb / 1024)
    } else {
        format!("{memory_mb}MiB")
    };
    Some(format!("vcd-vm.cpu-{cpus}.mem-{memory}"))
}

/// `name` as a valid label value: characters other than letters, digits,
/// `-`, `_` and `.` become `-`; at most 63 characters, alphanumeric at both
/// ends. `None` when nothing is left.
fn label_value(name: &str) -> Option<String> {
    let mapped: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(LABEL_VALUE_MAX)
        .collect();
    let trimmed = mapped.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_become_label_values() {
        assert_eq!(label_value("gpu.large").as_deref(), Some("gpu.large"));
        assert_eq!(
            label_value(" Large (4 vCPU) ").as_deref(),
            Some("Large--4-vCPU")
        );
        assert_eq!(label_value("ü"), None);
        assert_eq!(label_value(&"x".repeat(80)).map(|v| v.len()), Some(63));
    }
}
