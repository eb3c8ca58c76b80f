//! The check every block-model decoder makes first: that the file's `layout` property names
//! the one layout this build reads. Each format writes a single current layout, so any other
//! (an older one, another format's, or none) is refused before a block is read.

use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

use crate::format::FormatError;

/// `Ok` when `header`'s layout is `expected`, else an error naming `file`, the layout found
/// (or that there is none) and the one `what` (e.g. "JVM records", may be empty) needs.
pub fn require(
    header: &ContainerHeader,
    file: &str,
    expected: &str,
    what: &str,
) -> Result<(), FormatError> {
    let found = header.property(PROPERTY_LAYOUT);
    if found == Some(expected) {
        return Ok(());
    }
    Err(FormatError {
        file: file.to_string(),
        position: String::new(),
        message: message(found, expected, what),
    })
}

/// The text of [`require`]'s error; the layouts are quoted plainly so that an empty or odd
/// property still reads as a value.
fn message(found: Option<&str>, expected: &str, what: &str) -> String {
    let reads = if what.is_empty() {
        format!("this hatf decodes layout `{expected}`")
    } else {
        format!("this hatf decodes {what} of layout `{expected}`")
    };
    match found {
        Some(found) => format!("the file's layout is `{found}`, but {reads}"),
        None => format!("the file names no layout, but {reads}"),
    }
}

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn names_the_layout_found_and_the_one_read() {
        assert_eq!(
            message(Some("wee-alloc-cm-3"), "wee-alloc-cm-4", ""),
            "the file's layout is `wee-alloc-cm-3`, but this hatf decodes layout `wee-alloc-cm-4`"
        );
        assert_eq!(
            message(None, "jvm-model-2", "JVM records"),
            "the file names no layout, but this hatf decodes JVM records of layout `jvm-model-2`"
        );
    }
}
