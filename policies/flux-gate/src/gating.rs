//! The names of the gating API this policy reads and writes: the Gate kind
//! (the Flux gating RFC's `gating.toolkit.fluxcd.io`) and the annotations
//! that open, close, bind and override gates.

pub const GATING_GROUP: &str = "gating.toolkit.fluxcd.io";
pub const GATE_KIND: &str = "Gate";
pub const GATE_API_VERSION: &str = "gating.toolkit.fluxcd.io/v1alpha1";
pub const OPEN_ANNOTATION: &str = "open.gate.fluxcd.io/requestedAt";
pub const CLOSE_ANNOTATION: &str = "close.gate.fluxcd.io/requestedAt";
/// Gates an object names itself: `name` or `namespace/name`, comma-separated.
pub const GATES_ANNOTATION: &str = "gating.toolkit.fluxcd.io/gates";
/// Emergency override; its value is the reason.
pub const OVERRIDE_ANNOTATION: &str = "gating.toolkit.fluxcd.io/emergency-override";
