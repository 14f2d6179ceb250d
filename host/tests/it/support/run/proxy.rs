//! A TCP proxy in front of vcdsim that a test can cut and restore, as a
//! node-local network fault cuts one replica off VCD while another still
//! reaches it. Cutting drops every open connection and refuses new ones.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct CutProxy {
    pub url: String,
    open: watch::Sender<bool>,
}

impl CutProxy {
    /// Forwards `http://127.0.0.1:<port>` to `target` (vcdsim's address).
    pub async fn start(target: SocketAddr) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let (open, watching) = watch::channel(true);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut open = watching.clone();
                if !*open.borrow() {
                    continue;
                }
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = open.wait_for(|open| !open) => {}
                    }
                });
            }
        });
        CutProxy { url, open }
    }

    pub fn cut(&self) {
        self.open.send_replace(false);
    }

    pub fn restore(&self) {
        self.open.send_replace(true);
    }
}
