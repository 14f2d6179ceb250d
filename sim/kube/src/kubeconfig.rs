//! A kubeconfig for clients of a running kubesim (plain HTTP, no credentials).

/// The kubeconfig YAML pointing `kubectl` (or any client) at `server_url`.
pub fn render(server_url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kubesim
  cluster:
    server: {server_url}
contexts:
- name: kubesim
  context:
    cluster: kubesim
    user: kubesim
    namespace: default
current-context: kubesim
users:
- name: kubesim
  user: {{}}
preferences: {{}}
"
    )
}
