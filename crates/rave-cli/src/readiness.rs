//! What `rave serve` adds to the server's readiness for the embedded store.

use std::future::Future;
use std::pin::Pin;

use rave_engine::Engine;
use rave_server::ReadinessCheck;

/// Ready while the embedded engine commits writes (not after a full disk
/// until space comes back).
pub struct EngineAcceptsWrites(pub Engine);

impl ReadinessCheck for EngineAcceptsWrites {
    fn name(&self) -> &'static str {
        "writes"
    }

    fn check(&self) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        Box::pin(self.0.accepts_writes())
    }
}
