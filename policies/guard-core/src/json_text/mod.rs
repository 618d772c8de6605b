//! JSON text, read without building `serde_json::Value`s: checked as
//! strictly as the host reads a reply, split into members, compared as
//! `Value`s are, and an object's text edited where an edit reaches.
//!
//! Objects of a request can be large (a `spec` map of 40,000 entries, 5 KB
//! of managed fields) and an update leaves most of them alone; each member
//! is kept as the text it came as, and parsed only when needed.

mod compare;
mod differ;
mod edit;
mod head;
mod object_text;
mod reader;
mod scan;
mod split;
mod strict;

#[cfg(test)]
mod samples;

pub use compare::{equal, spec_changed_besides};
pub use differ::texts_differ;
pub use edit::{EditError, RawObject};
pub use head::{
    metadata_keeping, read_head, read_head_keeping, read_head_strictly, Asked, Head, Keys,
};
pub use object_text::ObjectText;
pub use reader::{TextReader, PASSED_DEPTH};
pub use scan::BrokenText;
pub use split::{first_byte, members, Key, Members};
pub use strict::check_strictly;
pub(crate) use strict::MUTATED_OBJECT_DEPTH;
