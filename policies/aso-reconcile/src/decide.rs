//! The flow: which rules a request meets, in order, and the [`Decision`]
//! they make. ASO resources and Namespaces are two families, each with its
//! own flow for a change (CREATE, UPDATE) and for a DELETE.

mod namespace;
mod resource;

use guard_core::{AdmissionRequest, Context, Metadata, Operation, Which};

use crate::decision::{Decision, Refusal, Subject};
use crate::settings::Settings;
use crate::values::is_aso_group;

pub(crate) fn decide(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision {
    // Subresources (ASO writes `status`) carry no annotation changes.
    if !request.sub_resource.is_empty() {
        return Decision::pass(Subject::default());
    }
    let kind = &request.kind;
    let namespace = kind.group.is_empty() && kind.kind == "Namespace";
    match request.operation {
        Operation::Create | Operation::Update if is_aso_group(&kind.group) => {
            resource::change(request, settings, ctx)
        }
        Operation::Delete if is_aso_group(&kind.group) => {
            resource::deletion(request, settings, ctx)
        }
        Operation::Create | Operation::Update if namespace => {
            namespace::change(request, settings, ctx)
        }
        Operation::Delete if namespace => namespace::deletion(request, settings, ctx),
        _ => Decision::pass(Subject::default()),
    }
}

/// The object of a CREATE or UPDATE and, on UPDATE, the stored one. `Err`
/// refuses a request that lacks or garbles them, about the object as `name`
/// calls it (from its metadata, once read).
fn objects(
    request: &AdmissionRequest,
    name: &dyn Fn(Option<&Metadata>) -> Subject,
) -> Result<(Metadata, Option<Metadata>), Box<Decision>> {
    let refuse = |meta, refusal| Box::new(Decision::refuse(name(meta), refusal));
    let new = match request.metadata(Which::Object) {
        Ok(Some(meta)) => meta,
        Ok(None) => return Err(refuse(None, Refusal::NoObject(Which::Object))),
        Err(e) => return Err(refuse(None, Refusal::Malformed(e))),
    };
    let old = match request.operation {
        Operation::Update => match request.metadata(Which::OldObject) {
            Ok(old) => old,
            Err(e) => return Err(refuse(Some(&new), Refusal::Malformed(e))),
        },
        _ => None,
    };
    Ok((new, old))
}
