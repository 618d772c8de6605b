//! The names of the gating API this policy reads and writes (the model's
//! [`guard_core::model::keys::gating`]): the Gate kind and the annotations
//! that open, close, bind and override gates.

pub use guard_core::model::keys::gating::*;
pub use guard_core::model::kinds::GATING as GATING_GROUP;
