//! The Flux Operator Web UI's Suspend button: it suspends with no reason
//! (it has no field for one) and records the logged-in user in
//! `fluxcd.controlplane.io/suspendedBy`. Who it writes as comes from the
//! model ([`guard_core::model::clients`]): the logged-in user it
//! impersonates, under its own field manager, or, in its `FineGrained`
//! access mode, the operator's service account with no field manager.

use guard_core::model::clients::{self, SentAs, WEB_UI};
use guard_core::model::keys::SUSPENDED_BY;
use guard_core::UserInfo;

use crate::settings::Settings;
use crate::view::Object;

/// Is this write the Web UI's? Under its field manager; or, with none, as
/// the service account its fine-grained mode writes as (the model's, in the
/// namespace `operatorServiceAccount` names), recording a user in
/// `suspendedBy` (the operator's own writes name field manager
/// `flux-operator`).
pub(crate) fn wrote(
    settings: &Settings,
    field_manager: &str,
    user: &UserInfo,
    new: &Object,
) -> bool {
    clients::CLIENTS
        .iter()
        .filter(|c| c.program == WEB_UI)
        .any(|c| match (c.field_manager, c.sent_as) {
            (Some(manager), _) => manager == field_manager,
            (None, SentAs::ServiceAccount(_)) => {
                field_manager.is_empty()
                    && settings.is_operator(&user.username)
                    && new.metadata.annotation(SUSPENDED_BY).is_some()
            }
            (None, SentAs::Person | SentAs::Nobody) => false,
        })
}

/// In fine-grained mode the UI writes as the operator's service account: the
/// user it recorded in `suspendedBy` is the one who clicked, and must not
/// be overwritten by that service account (`recordSuspender`).
pub(crate) fn as_its_service_account(settings: &Settings, user: &UserInfo) -> bool {
    clients::CLIENTS.iter().any(|c| {
        c.program == WEB_UI
            && matches!(c.sent_as, SentAs::ServiceAccount(_))
            && settings.is_operator(&user.username)
    })
}
